"""A second run of a computation from this process's current state, in a forked copy of it.

:func:`dplib.testing.check_is_random` asks whether a mechanism draws *new* randomness. Calls
in one process cannot tell a fresh ``numpy.random.default_rng()`` from a generator seeded
once (``_RNG = np.random.default_rng(0)`` in a cell, ``np.random.seed(0)``): each call of
either draws different values. A forked child starts from the very same memory, so it
replays a seeded generator draw for draw, while a fresh ``default_rng()`` draws from the
randomness the check gives it (:mod:`dplib.testing.entropy`). :func:`start` forks such a child,
which waits for its input (:meth:`Replay.send`: the keys of the randomness, decided after the
fork so that the child never holds the parent's), runs a computation and sends back the bytes
it returns; :meth:`Replay.collect` reads them.

The process-wide generators are the exception: an honest answer that ignores ``rng`` and
draws from ``np.random.laplace`` or the ``random`` module was never seeded, and a fresh run
of the notebook would draw anew. In every forked child numpy's global generator is therefore
reseeded (as Python reseeds the ``random`` module's), and the replay gives both back the
parent's state only if code seeded them after this module was imported, which shows in their
state (:class:`_Lineage`): it no longer descends, by draws, from the state the generator had
then.

Fork is safe here although the kernel runs threads (ipykernel's): the child touches no lock
another thread may hold. It silences its stdout and stderr at the file-descriptor level, runs
the computation, writes one message to a pipe and leaves with ``os._exit``; the parent kills
it after a timeout. Forking is Linux only (:data:`CAN_REPLAY`): elsewhere (macOS forbids
most libraries after a fork in a threaded process, Windows has none) there is no replay.
"""

from __future__ import annotations

import hashlib
import os
import random
import select
import signal
import sys
import time
import warnings
from collections.abc import Callable

import numpy as np

#: Whether this platform can replay: Linux, with ``os.fork``.
CAN_REPLAY = sys.platform.startswith("linux") and hasattr(os, "fork")

# References taken at import time, out of reach of later monkeypatching by student code.
_fork, _waitpid, _WNOHANG = getattr(os, "fork", None), getattr(os, "waitpid", None), getattr(os, "WNOHANG", None)
_pipe, _read, _write, _close, _exit = os.pipe, os.read, os.write, os.close, os._exit
_kill, _dup2, _open = os.kill, os.dup2, os.open
_devnull, _O_WRONLY, _SIGKILL = os.devnull, os.O_WRONLY, getattr(signal, "SIGKILL", None)
_poll, _POLLIN = getattr(select, "poll", None), getattr(select, "POLLIN", None)
_monotonic, _sha256, _sys = time.monotonic, hashlib.sha256, sys
_array, _uint32, _array_equal, _flatnonzero = np.array, np.uint32, np.array_equal, np.flatnonzero
_MT19937, _numpy_global = np.random.MT19937, np.random.mtrand._rand  # the generator behind np.random.laplace & co.
_numpy_get_state, _numpy_set_state, _numpy_reseed = _numpy_global.get_state, _numpy_global.set_state, _numpy_global.seed
_random_getstate, _random_setstate = random.getstate, random.setstate
_catch_warnings, _simplefilter = warnings.catch_warnings, warnings.simplefilter
_type, _min, _max, _bytes, _str, _open_file, _memoryview = type, min, max, bytes, str, open, memoryview

_KEY_WORDS = 624  # MT19937: the key holds 624 32-bit words, regenerated all at once (a "twist") every 624 outputs
#: How many twists (of 624 outputs) :class:`_Lineage` follows between two looks: 2^16, about 40 million 32-bit
#: outputs, 20 million doubles, about 1.3 s of numpy's time when the state was reset (each reset is followed once).
MAX_TWISTS = 2**16
_TWISTS_PER_STEP = 1024


class ReplayError(Exception):
    """The replay could not run, or the computation raised in it."""


def _mt_state(key, position: int) -> dict:
    return {"bit_generator": "MT19937", "state": {"key": _array(key, dtype=_uint32), "pos": position}}


def descends(start_key, key, max_twists: int = MAX_TWISTS) -> bool:
    """Whether the MT19937 key ``key`` follows ``start_key`` after at most ``max_twists`` twists.

    A generator that only drew since it held ``start_key`` holds one of these keys; one that
    was seeded (or given a saved state) in between holds none of them, but for a chance of
    2^-19937 per twist. Both generators compared are MT19937: numpy's legacy global one and
    the ``random`` module's.

    Examples
    --------
    >>> import numpy as np
    >>> generator = np.random.RandomState(1)
    >>> start = generator.get_state()[1]
    >>> _ = generator.random(5_000)
    >>> descends(start, generator.get_state()[1])
    True
    >>> generator.seed(2)
    >>> descends(start, generator.get_state()[1], max_twists=100)
    False
    """
    start_key, key = _array(start_key, dtype=_uint32), _array(key, dtype=_uint32)
    if _array_equal(start_key, key):
        return True
    # A key's 624 outputs are a bijection of it (MT19937's tempering): compare outputs.
    target, twister = _MT19937(), _MT19937()
    target.state = _mt_state(key, 0)
    wanted = target.random_raw(_KEY_WORDS)
    twister.state = _mt_state(start_key, _KEY_WORDS)
    left = max_twists
    while left > 0:
        step = _min(left, _TWISTS_PER_STEP)
        outputs = twister.random_raw(_KEY_WORDS * step).reshape(step, _KEY_WORDS)
        for row in _flatnonzero(outputs[:, 0] == wanted[0]):
            if _array_equal(outputs[row], wanted):
                return True
        left -= step
    return False


class _Lineage:
    """Whether a process-wide MT19937 generator was seeded since a start: its key no longer descends from the start's.

    :meth:`seeded` follows the key from one look to the next, so each look costs the draws made
    since the previous one. Once seeded the verdict stays: what follows a seed is a replay too
    (``np.random.seed()`` without a value, which takes fresh entropy, counts as a seed).
    """

    def __init__(self, current_key: Callable):
        self._current_key = current_key
        self.restart()

    def restart(self) -> None:
        """Start again from the current state, e.g. in a process forked from this one (where ``random`` is reseeded)."""
        self._key, self._seeded = _array(self._current_key(), dtype=_uint32), False

    def seeded(self) -> bool:
        key = _array(self._current_key(), dtype=_uint32)
        if not self._seeded and not descends(self._key, key):
            self._seeded = True
        self._key = key
        return self._seeded


_NUMPY_GLOBAL = _Lineage(lambda: _numpy_get_state()[1])
_RANDOM_MODULE = _Lineage(lambda: _random_getstate()[1][:_KEY_WORDS])


def _as_a_fresh_process() -> None:
    """In a forked child: numpy's global generator reseeded, as Python reseeds ``random``, and both followed from here.

    A kernel forked from a pre-importing zygote thus draws as a freshly started one would, not
    the zygote's stream that every other kernel draws too. (Registered after ``random`` is
    imported, so this runs after its reseed.)
    """
    _numpy_reseed()
    _NUMPY_GLOBAL.restart()
    _RANDOM_MODULE.restart()


if CAN_REPLAY:
    os.register_at_fork(after_in_child=_as_a_fresh_process)


class Replay:
    """A computation running in a forked child; :meth:`collect` waits for the bytes it returns."""

    def __init__(self, pid: int, read_end: int, input_end: int):
        self._pid, self._read_end, self._input_end, self._done = pid, read_end, input_end, False

    def send(self, given: bytes) -> None:
        """Give the child its input (once): it starts computing when this returns."""
        view = _memoryview(_bytes(given))
        try:
            while view:
                view = view[_write(self._input_end, view):]
        except OSError as error:  # the child died: collect says so
            raise ReplayError(f"could not give the replay its input ({error})") from None
        finally:
            _close(self._input_end)
            self._input_end = None

    def collect(self, timeout: float) -> bytes:
        """The child's bytes; :class:`ReplayError` if it raised, died, or did not answer within ``timeout`` seconds."""
        try:
            waiting = _poll()  # not select: a kernel may hold more than FD_SETSIZE (1024) descriptors
            waiting.register(self._read_end, _POLLIN)
            message, deadline = b"", _monotonic() + timeout
            while True:
                if not waiting.poll(_max(0.0, deadline - _monotonic()) * 1000):
                    raise ReplayError(f"the replay did not finish within {timeout:.0f} s")
                chunk = _read(self._read_end, 65536)
                if not chunk:
                    break
                message += chunk
        finally:
            self.close()
        status, _, payload = message.partition(b"\n")
        if status == b"ok":
            return payload
        if status == b"raised":
            raise ReplayError(payload.decode(errors="replace"))
        raise ReplayError("the replay ended without an answer")

    def close(self) -> None:
        """Close the pipe, kill the child if it still runs and reap it (once)."""
        if self._done:
            return
        self._done = True
        _close(self._read_end)
        if self._input_end is not None:
            _close(self._input_end)
        try:
            if _waitpid(self._pid, _WNOHANG)[0] == 0:
                _kill(self._pid, _SIGKILL)
                _waitpid(self._pid, 0)
        except ChildProcessError:  # reaped already: the kernel ignores SIGCHLD
            pass


def _silence_child() -> None:
    """Send the child's stdout and stderr, and Python's, to /dev/null: none of its output reaches the kernel's."""
    devnull = _open(_devnull, _O_WRONLY)
    _dup2(devnull, 1)
    _dup2(devnull, 2)
    _sys.stdout = _sys.stderr = _open_file(devnull, "w", closefd=False)  # noqa: SIM115 - the child leaves by os._exit


def _read_all(descriptor: int) -> bytes:
    data = b""
    while True:
        chunk = _read(descriptor, 65536)
        if not chunk:
            return data
        data += chunk


def _run_child(compute: Callable[[bytes], bytes], write_end: int, input_end: int, numpy_state, random_state) -> None:
    """The child's whole life: replay the seeded global generators (the fork reseeded both), wait for its input,
    compute, answer, exit."""
    try:
        _silence_child()
        if numpy_state is not None:
            _numpy_set_state(numpy_state)
        if random_state is not None:
            _random_setstate(random_state)
        try:
            given = _read_all(input_end)
            message = b"ok\n" + _bytes(compute(given))
        except BaseException as error:  # noqa: BLE001 - reported to the parent, which decides
            message = b"raised\n" + f"{_type(error).__name__}: {error}"[:1000].encode(errors="replace")
        view = _memoryview(message)
        while view:
            view = view[_write(write_end, view):]
    finally:
        _exit(0)


def seeded_generators() -> tuple[bool, bool]:
    """Whether numpy's global generator and the ``random`` module were seeded since this module was imported."""
    return _NUMPY_GLOBAL.seeded(), _RANDOM_MODULE.seeded()


def start(compute: Callable[[bytes], bytes]) -> Replay:
    """Fork a child that, from this process's current state, waits for its input and sends back ``compute(input)``.

    The input is given after the fork with :meth:`Replay.send`, so nothing the parent decides
    later (the keys of :func:`dplib.testing.check_is_random`) is in the child's memory before
    then. Raises :class:`ReplayError` where the platform cannot fork (:data:`CAN_REPLAY`) or the
    fork fails (a limit on processes).
    """
    if not CAN_REPLAY:
        raise ReplayError(f"no fork on {_sys.platform}")
    numpy_seeded, random_seeded = seeded_generators()
    numpy_state = _numpy_get_state() if numpy_seeded else None
    random_state = _random_getstate() if random_seeded else None
    read_end, write_end = _pipe()
    input_end, input_write_end = _pipe()
    try:
        with _catch_warnings():
            _simplefilter("ignore", DeprecationWarning)  # Python >= 3.12 warns of a fork in a threaded process
            pid = _fork()
    except OSError as error:
        for descriptor in (read_end, write_end, input_end, input_write_end):
            _close(descriptor)
        raise ReplayError(f"could not fork ({error})") from None
    if pid == 0:
        _close(read_end)
        _close(input_write_end)
        _run_child(compute, write_end, input_end, numpy_state, random_state)
    _close(write_end)
    _close(input_end)
    return Replay(pid, read_end, input_write_end)


def digest(arrays) -> bytes:
    """SHA-256 of numpy arrays' kinds, shapes and bytes: equal for arrays equal bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> digest([np.zeros(3)]) == digest([np.zeros(3)]), digest([np.zeros(3)]) == digest([np.zeros((3, 1))])
    (True, False)
    """
    hashed = _sha256()
    for array in arrays:
        contiguous = _array(array, copy=True, order="C")
        hashed.update(f"{contiguous.dtype.str}{contiguous.shape};".encode())
        hashed.update(contiguous.tobytes() if contiguous.dtype.kind != "O" else _str(contiguous.tolist()).encode())
    return hashed.digest()
