"""Fresh randomness given by the check, not taken from the operating system: :func:`pinned_entropy`.

:func:`dplib.testing.check_is_random` runs a mechanism twice from the same state, once here and
once in a forked copy of the process (:mod:`dplib.testing.replay`). If the copy simply drew
new entropy from the operating system, a function that can tell it runs in the copy (a CPU clock
that starts again at zero, a new process id, ``/proc``) could draw fresh noise there and replay
its seeded generator here. So the check *gives* each call its entropy: inside
:func:`pinned_entropy(key) <pinned_entropy>` every source a fresh generator draws from (``os.urandom``,
``os.getrandom``, the ``random`` module's ``SystemRandom``, the entropy of numpy's ``SeedSequence``
behind ``np.random.default_rng()``, a new ``random.Random()``) returns bytes of a stream derived
from ``key``, and numpy's global generator and the ``random`` module are reseeded from it (unless
code seeded them itself, which the check then replays as they are).

Given the same key, a function whose only randomness is a fresh generator returns the same values,
whatever else it reads; given another key, other values. A generator seeded once ignores the key.
Only the thread that entered the context is served the stream: the kernel's own threads (message
ids, heartbeats) keep drawing from the operating system.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import threading

import numpy as np
import numpy.random.bit_generator as _bit_generator

__all__ = ["KEY_BYTES", "KeyStream", "new_key", "pinned_entropy"]

#: The length of a key: 256 bits from the operating system.
KEY_BYTES = 32

# References taken at import time, out of reach of later monkeypatching by student code.
_urandom, _getrandom = os.urandom, getattr(os, "getrandom", None)
_random_urandom, _numpy_randbits = random._urandom, _bit_generator.randbits
_random_seed = random.Random.seed
_get_ident, _blake2b = threading.get_ident, hashlib.blake2b
_numpy_global = np.random.mtrand._rand
_numpy_get_state, _numpy_set_state, _numpy_seed = _numpy_global.get_state, _numpy_global.set_state, _numpy_global.seed
_random_getstate, _random_setstate, _random_module_seed = random.getstate, random.setstate, random.seed
_frombuffer, _uint32 = np.frombuffer, np.uint32
_int_from_bytes, _bytes, _len, _memoryview = int.from_bytes, bytes, len, memoryview


def new_key() -> bytes:
    """A key of :data:`KEY_BYTES` bytes from the operating system (never from a pinned stream)."""
    return _urandom(KEY_BYTES)


class KeyStream:
    """An endless stream of bytes determined by ``key``: BLAKE2b of (key, block number), 64 bytes a block.

    Examples
    --------
    >>> a, b = KeyStream(b"k" * 32), KeyStream(b"k" * 32)
    >>> a.read(3) + a.read(100) == b.read(103)
    True
    >>> KeyStream(b"k" * 32).read(8) == KeyStream(b"j" * 32).read(8)
    False
    """

    def __init__(self, key: bytes):
        self._key, self._block, self._buffer = _bytes(key), 0, b""

    def read(self, size: int) -> bytes:
        while _len(self._buffer) < size:
            self._buffer += _blake2b(self._block.to_bytes(8, "little"), key=self._key[:64]).digest()
            self._block += 1
        taken, self._buffer = self._buffer[:size], self._buffer[size:]
        return taken

    def bits(self, count: int) -> int:
        """A non-negative integer of ``count`` bits, as ``secrets.randbits`` returns."""
        return _int_from_bytes(self.read((count + 7) // 8), "little") >> (-count % 8)


@contextlib.contextmanager
def pinned_entropy(key: bytes, *, reseed_numpy: bool = True, reseed_random: bool = True):
    """Serve this thread's fresh randomness from ``KeyStream(key)`` while the block runs.

    Parameters
    ----------
    key : bytes
        What the block's randomness is derived from: the same key gives the same bytes.
    reseed_numpy, reseed_random : bool
        Reseed numpy's global generator (``np.random.laplace``) and the ``random`` module from the
        stream too, as a fresh run of the notebook would; their states are given back afterwards.
        False when code seeded them itself: then they are left as they are, so a replay repeats them.
    """
    stream, owner = KeyStream(key), _get_ident()

    def serving(real):
        def draw(size, *args, **kwargs):
            return stream.read(size) if _get_ident() == owner else real(size, *args, **kwargs)
        return draw

    def randbits(count):
        return stream.bits(count) if _get_ident() == owner else _numpy_randbits(count)

    def seed(self, a=None, version=2):
        if a is None and _get_ident() == owner:
            a = stream.bits(256)
        return _random_seed(self, a, version)

    saved_numpy = _numpy_get_state() if reseed_numpy else None
    saved_random = _random_getstate() if reseed_random else None
    os.urandom, random._urandom, _bit_generator.randbits, random.Random.seed = (
        serving(_urandom), serving(_random_urandom), randbits, seed)
    if _getrandom is not None:
        os.getrandom = serving(_getrandom)
    try:
        if reseed_numpy:
            _numpy_seed(_frombuffer(stream.read(4 * 8), dtype=_uint32))
        if reseed_random:
            _random_module_seed(stream.bits(256))
        yield stream
    finally:
        os.urandom, random._urandom, _bit_generator.randbits, random.Random.seed = (
            _urandom, _random_urandom, _numpy_randbits, _random_seed)
        if _getrandom is not None:
            os.getrandom = _getrandom
        if saved_numpy is not None:
            _numpy_set_state(saved_numpy)
        if saved_random is not None:
            _random_setstate(saved_random)
