"""How a language-model policy runs and draws (:class:`Engine`): the reference engine of the first
waves, or the fast one of issue 42; and the inverse-CDF draws over a menu both use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from arena_core.seeding import derive_seed, make_rng

#: how a policy's forward passes and draws are computed (:class:`Engine`'s ``name``)
EngineName = Literal["fast", "reference"]


@dataclass(frozen=True)
class Engine:
    """How the language model is run over a batch of menus; both give the same distributions.

    ``reference`` (the engine before issue 42): prompts right-padded to a multiple of 16, every
    layer at every position, and each decision's draw from ``make_rng(key, "lm_policy")``.
    ``fast``: prompts padded only to the batch's longest, the last layer computed at the answer
    position alone (:func:`arena_train.lm.last_logits`), the sampling passes of a small plain
    decoder in numpy on the calling thread (:mod:`arena_train.lm_numpy`), each decision's key a
    splitmix64 hash of its episode's key seed and ply and its draw one of the key
    (:func:`key_uniform`). The same distributions to float32 rounding; another random stream
    (a fast run reproduces itself, not a reference run). docs/benchmarks.md ("Leduc poker")
    measures the speed."""

    name: EngineName = "reference"

    @property
    def bucket(self) -> int:
        return 16 if self.name == "reference" else 1

    @property
    def answer_only(self) -> bool:
        return self.name == "fast"

    @property
    def numpy_forward(self) -> bool:
        """Sampling forward passes in numpy on the calling thread where the model allows
        (:mod:`arena_train.lm_numpy`); the gradient's forward stays MLX."""
        return self.name == "fast"

    def uniform(self, key: int) -> float:
        """The decision's uniform draw in [0, 1) (inverse-CDF sampling over the menu)."""
        if self.name == "reference":
            return float(make_rng(key, "lm_policy").random())
        return key_uniform(key)

    def decision_key(self, key_seed: int, ply: int) -> int:
        """The key of the learner's decision at ``ply`` of the episode whose key seed is ``key_seed``
        (what :class:`~arena_train.rollout.Request` carries)."""
        if self.name == "reference":
            return derive_seed(key_seed, "ply", ply)
        return _mix64(int(key_seed) ^ _mix64(ply + 0x5851F42D4C957F2D)) >> 1


REFERENCE = Engine("reference")
_MASK64 = (1 << 64) - 1


def _mix64(x: int) -> int:
    """splitmix64: a step of its counter and its finaliser (a bijection of 64-bit words whose
    outputs pass BigCrush)."""
    z = (x + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def key_uniform(key: int) -> float:
    """A uniform in [0, 1) from a key: the top 53 bits of :func:`_mix64` of it, as a double."""
    return (_mix64(int(key)) >> 11) * (1.0 / 9007199254740992.0)


def sample_rows(logprobs: Sequence[np.ndarray[Any, Any]], uniforms: Sequence[float]) -> list[int]:
    """Inverse-CDF samples of many menus at once (the fast engine's draws): for each row, the
    first entry whose cumulative (unnormalised) probability exceeds ``u`` times the row's total."""
    if not logprobs:
        return []
    width = max(len(lp) for lp in logprobs)
    table = np.full((len(logprobs), width), -np.inf)
    for i, lp in enumerate(logprobs):
        table[i, : len(lp)] = lp
    cdf = np.cumsum(np.exp(table - table.max(axis=1, keepdims=True)), axis=1)
    target = np.asarray(uniforms) * cdf[:, -1]
    picks = (cdf <= target[:, None]).sum(axis=1)
    return [min(int(k), len(lp) - 1) for k, lp in zip(picks, logprobs)]


def sample_index(logprobs: np.ndarray[Any, Any], u: float) -> int:
    """The menu entry whose cumulative probability first exceeds ``u`` (what
    ``Generator.choice(n, p=p)`` returns for its uniform draw ``u``)."""
    p = np.exp(logprobs - logprobs.max())
    cdf = np.cumsum(p / p.sum())
    cdf /= cdf[-1]
    return int(np.searchsorted(cdf, u, side="right"))
