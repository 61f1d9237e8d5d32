"""Every random draw flows from an explicit seed through numpy's SeedSequence."""
from __future__ import annotations

import zlib

import numpy as np


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
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(_key(seed), spawn_key=tuple(_key(k) for k in keys))))
