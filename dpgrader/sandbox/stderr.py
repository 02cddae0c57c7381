"""The stderr of a sandboxed process: a pipe of its own whose last bytes the grader keeps.

A kernel (or the zygote) must not inherit any file of the grader's: with the worker's log file
as its stderr, a kernel could reopen it through ``/proc/self/fd/2``, truncate it and forge it.
Instead its stderr is the write end of a pipe; a thread of the grader reads the other end as
fast as it is written (the kernel never blocks on a full pipe) and keeps only the last
:data:`KEPT_BYTES`: enough to say why a kernel died before it answered, never more.
"""

from __future__ import annotations

import os
import threading

KEPT_BYTES = 8192


class StderrTail:
    """A pipe for a process's stderr; :meth:`text` is the last :data:`KEPT_BYTES` written to it.

    Give :attr:`write_fd` to the process (``stderr=`` of ``Popen``, or sent to the zygote), then
    call :meth:`close_writer`: the reading thread ends when every writer has closed its end.
    """

    def __init__(self, kept_bytes: int = KEPT_BYTES):
        self._read_fd, self.write_fd = os.pipe()  # neither is inherited across exec unless passed on
        self._kept_bytes = kept_bytes
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._drain, name="stderr-tail", daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._read_fd, 1 << 16):
                with self._lock:
                    self._tail += chunk
                    del self._tail[:-self._kept_bytes]
        except OSError:
            pass
        finally:
            os.close(self._read_fd)

    def close_writer(self) -> None:
        """Close the grader's copy of the write end (once the process holds its own)."""
        if self.write_fd is not None:
            os.close(self.write_fd)
            self.write_fd = None

    def text(self, wait: float = 0.0) -> str:
        """What was kept, decoded; ``wait`` seconds at most for the writers to close first."""
        if wait:
            self._reader.join(wait)
        with self._lock:
            return self._tail.decode(errors="replace")

    def last_error(self, wait: float = 0.0) -> str:
        """The last line that names an error (``ImportError: ...``), else the last line; ``""`` if nothing was written."""
        return last_error_line(self.text(wait))


def last_error_line(text: str) -> str:
    """The last line of ``text`` that names an error or exception, else its last line (at most 300 characters)."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in reversed(lines):
        head = line.split(":", 1)[0]
        if ("Error" in head or "Exception" in head) and " " not in head:
            return line[:300]
    return lines[-1][:300] if lines else ""
