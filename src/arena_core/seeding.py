"""Every random draw flows from an explicit seed: ``make_rng(seed, *keys)`` gives an independent
numpy Generator through a SeedSequence. ``deal_rng(seed)``, the deal's fast path at every
``Game.start`` (a PCG64 set from a splitmix64 hash of the seed, about 10x cheaper), returns the same
object at every call in a thread, valid until the next call there: games draw the whole deal inside
``initial_state`` and never keep the generator (the kit's determinism check catches one that does).
"""

from __future__ import annotations

import threading
import zlib

import numpy as np

_MASK64 = (1 << 64) - 1


def _key(part: int | str) -> int:
    if isinstance(part, str):
        return zlib.crc32(part.encode("utf-8"))
    if isinstance(part, (int, np.integer)) and part >= 0:
        return int(part)
    raise ValueError(f"seed keys must be non-negative ints or strings, got {part!r}")


def derive_seed(seed: int, *keys: int | str) -> int:
    """A 63-bit seed derived from ``seed`` and ``keys`` (stable across processes and platforms)."""
    ss = np.random.SeedSequence(_key(seed), spawn_key=tuple(_key(k) for k in keys))
    return int(ss.generate_state(2, np.uint64)[0] >> np.uint64(1))


def make_rng(seed: int, *keys: int | str) -> np.random.Generator:
    """A fresh generator for ``seed`` and ``keys``; the same arguments always give the same stream."""
    return np.random.Generator(
        np.random.PCG64(np.random.SeedSequence(_key(seed), spawn_key=tuple(_key(k) for k in keys)))
    )


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


_local = threading.local()


def deal_rng(seed: int) -> np.random.Generator:
    """The generator for the deal of ``seed`` (see the module docstring for its lifetime)."""
    gen = getattr(_local, "gen", None)
    if gen is None:
        gen = _local.gen = np.random.Generator(np.random.PCG64(0))
    a = _splitmix64(int(seed) ^ 0xD1B54A32D192ED03)
    b = _splitmix64(a)
    c = _splitmix64(b)
    d = _splitmix64(c)
    gen.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (a << 64) | b, "inc": ((c << 64) | d) | 1},
        "has_uint32": 0,
        "uinteger": 0,
    }
    return gen
