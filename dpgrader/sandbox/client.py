"""The grader's client of a sandboxed kernel: jupyter_client's, ready as soon as the kernel answers.

jupyter_client's ``wait_for_ready`` ends by reading IOPub until it has been silent for 0.2 s: every graded notebook
waited 0.2 s there, to drop messages nobody would read anyway (nbclient takes, of IOPub, only the messages of its
own requests, and the grader waits for the guard's install on shell).
"""

from __future__ import annotations

import time
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient

REPLY_SECONDS = 1.0  # jupyter_client's: how long one kernel_info request waits for its reply
IOPUB_SECONDS = 0.2  # jupyter_client's: how long IOPub may stay silent after the reply before the kernel is asked again


class PromptKernelClient(AsyncKernelClient):
    """A kernel client whose ``wait_for_ready`` ends as soon as the kernel has answered on shell and on IOPub."""

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        """Ask ``kernel_info`` until the kernel answers it on shell and IOPub carries a message after the reply.

        That is jupyter_client's test, less its final wait: a message on IOPub shows the subscription is live
        (a SUB socket misses what was published before it connected). What IOPub still holds stays there.

        Raises
        ------
        RuntimeError
            If the kernel dies, or does not answer within ``timeout`` seconds (as jupyter_client's).
        """
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            reply = await self._reply_to(self.kernel_info())
            if reply is not None and await self._iopub_speaks():
                self._handle_kernel_info_reply(reply)
                return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")

    wait_for_ready = _async_wait_for_ready  # the base class binds the name to its own function: bind it again

    async def _reply_to(self, request: str) -> dict | None:
        """The ``kernel_info_reply`` to ``request``, or None if none comes within :data:`REPLY_SECONDS`."""
        give_up = time.monotonic() + REPLY_SECONDS
        while (left := give_up - time.monotonic()) > 0:
            try:
                message = await self.shell_channel.get_msg(timeout=left)
            except Empty:
                return None
            if message["msg_type"] == "kernel_info_reply" and message["parent_header"].get("msg_id") == request:
                return message
        return None

    async def _iopub_speaks(self) -> bool:
        """Whether a message comes on IOPub within :data:`IOPUB_SECONDS` (the kernel's status around the request)."""
        try:
            await self.iopub_channel.get_msg(timeout=IOPUB_SECONDS)
        except Empty:
            return False
        return True
