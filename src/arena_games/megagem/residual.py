"""A MegaGem student that starts at the expert and learns deviations from its bid (issue 30).

The action space is a residual menu over ``megagem_expert``'s own bid (:data:`MENU`: x0.8, x0.9,
x1.0, x1.1, x1.25, +1 coin, +2 coins, each rounded and clipped to the legal range). The policy is a linear
softmax (numpy) over features of the expert's own inputs, all computed from the seat's
observation (the view the student is given): the expert's bid, its ungated best bid, the lot's
value, the liquidity premium, the win probability of the bid, coins, tiebreak position. The
logit of x1.0 starts at ``init_bias`` and every weight at 0, so the greedy policy at
initialisation *is* the expert, bid for bid (margin 0 by construction; a test checks it), and
every learned deviation has to earn its place. Reveals are the expert's.

Training is ``arena_train``'s residual trainer (``arena train`` with ``trainer = "residual_pg"``,
:mod:`arena_train.residual`), which reaches the menu and the features through the game's
``"residual"`` view, :class:`ResidualView`; ``bench/train_megagem_residual.py`` drives its runs.

A trained student is a directory with ``config.json`` (``"kind": "megagem_residual"``) and
``policy.npz``; :func:`load_checkpoint`, registered in the ``arena.checkpoints`` entry-point group,
lets it play as ``checkpoint:run=DIR``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from arena_core.errors import ConfigError
from arena_core.players import Decision

from .bots import (
    ExpertBidder,
    _counts,
    lot_colours,
    mission_bonus,
)
from .rules import Action, Bid

Array = npt.NDArray[np.float64]
KIND = "megagem_residual"

#: the residual menu: (label, multiplier of the expert's bid, coins added)
MENU: tuple[tuple[str, float, int], ...] = (
    ("x0.8", 0.8, 0),
    ("x0.9", 0.9, 0),
    ("x1.0", 1.0, 0),
    ("x1.1", 1.1, 0),
    ("x1.25", 1.25, 0),
    ("+1", 1.0, 1),
    ("+2", 1.0, 2),
)
EXPERT_ACTION = 2  # x1.0
FEATURES = (
    "bias",
    "treasure_1",
    "treasure_2",
    "loan",
    "investment",
    "expert_bid/20",
    "expert_bid/limit",
    "best_bid/20",
    "gated",
    "value/20",
    "liquidity",
    "p_win(bid)",
    "p_win(bid+1)-p_win(bid)",
    "gain(bid)/10",
    "coins/50",
    "max_opponent_coins/50",
    "gems_left",
    "last_in_tiebreak",
    "first_in_tiebreak",
    "bid_is_0",
    "mission_bonus/10",
)
NUM_FEATURES = len(FEATURES)


# ---------------------------------------------------------------------- the expert's inputs
@dataclass(frozen=True)
class ExpertRead:
    """The expert's decision at a bid, read from the observation alone."""

    bid: int  # the expert's bid
    limit: int
    features: Array


def expert_read(expert: ExpertBidder, obs: dict[str, Any]) -> ExpertRead:
    """The expert's bid and its inputs as features, from ``obs`` only (the seat's view).

    :meth:`ExpertBidder.analyse_bid` on the observation alone (a test checks, on a JSON copy of it,
    that this reproduces the expert at every bid of many games): the view oracle."""
    a = expert.analyse_bid(obs)
    limit, chosen, best, v, lam, pwin, gain = a.limit, a.bid, a.best, a.value, a.liquidity, a.win_probability, a.gain
    card = obs["current_card"]
    me = obs["player"]
    coins: int = obs["players"][me]["coins"]
    kind = card["type"]
    bonus = 0
    if kind == "treasure":
        bonus = mission_bonus(obs, _counts(obs["players"][me]["collection"]), lot_colours(obs))
    order = obs["tiebreak"]
    opp_coins = max(pl["coins"] for j, pl in enumerate(obs["players"]) if j != me)
    gems_left = (obs["gem_deck_size"] + len(obs["pool"])) / 30.0
    x = np.array(
        [
            1.0,
            float(kind == "treasure" and card["gems"] == 1),
            float(kind == "treasure" and card["gems"] == 2),
            float(kind == "loan"),
            float(kind == "investment"),
            chosen / 20.0,
            chosen / max(limit, 1),
            best / 20.0,
            float(chosen != best),
            v / 20.0,
            lam,
            pwin[chosen],
            (pwin[chosen + 1] - pwin[chosen]) if chosen < limit else 0.0,
            gain[chosen] / 10.0,
            coins / 50.0,
            opp_coins / 50.0,
            gems_left,
            float(order[-1] == me),
            float(order[0] == me),
            float(chosen == 0),
            bonus / 10.0,
        ],
        dtype=np.float64,
    )
    return ExpertRead(chosen, limit, x)


def menu_bids(bid: int, limit: int) -> list[int]:
    """The bid each menu entry makes from the expert's ``bid`` (rounded, clipped to 0..limit)."""
    return [max(0, min(limit, int(round(bid * m)) + add)) for _, m, add in MENU]


# ---------------------------------------------------------------------- the policy
@dataclass
class ResidualPolicy:
    """Linear softmax over :data:`MENU`: logits ``x @ W + b``."""

    W: Array
    b: Array

    @classmethod
    def init(cls, init_bias: float) -> ResidualPolicy:
        b = np.zeros(len(MENU))
        b[EXPERT_ACTION] = init_bias
        return cls(np.zeros((NUM_FEATURES, len(MENU))), b)

    @classmethod
    def constant(cls, action: int, strength: float = 20.0) -> ResidualPolicy:
        """The policy that always picks menu entry ``action`` (a constant deviation)."""
        b = np.zeros(len(MENU))
        b[action] = strength
        return cls(np.zeros((NUM_FEATURES, len(MENU))), b)

    @property
    def params(self) -> dict[str, Array]:
        return {"W": self.W, "b": self.b}

    def probabilities(self, x: Array) -> Array:
        """(B, len(MENU)) menu probabilities of feature rows ``x`` (B, NUM_FEATURES)."""
        z = x @ self.W + self.b
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z)
        out: Array = p / p.sum(axis=1, keepdims=True)
        return out

    def greedy(self, x: Array) -> int:
        """The most likely entry; ties go to x1.0 (the expert), then to the lowest index."""
        z = x @ self.W + self.b
        top = float(z.max())
        return EXPERT_ACTION if z[EXPERT_ACTION] >= top else int(np.argmax(z))

    def episode_gradient(self, x: Array, actions: npt.NDArray[np.int_]) -> Array:
        """d/d(W, b) of sum_t log p(a_t | x_t), flattened (W then b)."""
        p = self.probabilities(x)
        d = -p
        d[np.arange(len(actions)), actions] += 1.0
        return np.concatenate([(x.T @ d).ravel(), d.sum(axis=0)])

    def unflatten(self, g: Array) -> dict[str, Array]:
        n = self.W.size
        return {"W": g[:n].reshape(self.W.shape), "b": g[n:]}

    def save(self, directory: str | Path, extra: dict[str, Any] | None = None) -> None:
        """``directory/policy.npz`` and ``directory/config.json`` (kind, menu, features)."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        np.savez(out / "policy.npz", W=self.W, b=self.b)
        cfg = {
            "kind": KIND,
            "game": "megagem",
            "menu": [list(m) for m in MENU],
            "features": list(FEATURES),
            "expert": "megagem_expert (shipped defaults)",
            **(extra or {}),
        }
        (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, directory: str | Path) -> ResidualPolicy:
        d = Path(directory)
        cfg = json.loads((d / "config.json").read_text(encoding="utf-8"))
        if cfg.get("kind") != KIND:
            raise ConfigError(f"{d}: config.json kind is {cfg.get('kind')!r}, not {KIND!r}")
        if [list(m) for m in MENU] != cfg.get("menu") or list(FEATURES) != cfg.get("features"):
            raise ConfigError(f"{d}: the checkpoint's menu or features differ from this code's (retrain it)")
        with np.load(d / "policy.npz") as data:
            return cls(data["W"].copy(), data["b"].copy())


def is_residual_checkpoint(directory: str | Path) -> bool:
    path = Path(directory) / "config.json"
    if not path.is_file():
        return False
    try:
        return bool(json.loads(path.read_text(encoding="utf-8")).get("kind") == KIND)
    except (OSError, ValueError):
        return False


def load_checkpoint(directory: str | Path) -> Callable[[Decision, np.random.Generator | None], Action]:
    """The ``arena.checkpoints`` loader of kind ``megagem_residual``: the saved student's chooser
    (greedy when given no generator, else sampling its menu)."""
    student = ResidualStudent(ResidualPolicy.load(directory))
    return student.act


class ResidualStudent:
    """Plays a :class:`ResidualPolicy` (greedy, or sampled from ``rng``) through :class:`ResidualView`."""

    def __init__(self, policy: ResidualPolicy, view: ResidualView | None = None):
        self.policy = policy
        self.view = view or ResidualView()

    def act(self, decision: Decision, rng: np.random.Generator | None = None) -> Action:
        read = self.view.read(decision)
        if read is None:  # a reveal: the expert's
            return self.view.expert().act(decision)
        x, actions = read
        if rng is None:
            return actions[self.policy.greedy(x)]
        p = self.policy.probabilities(x[None, :])[0]
        return actions[int(rng.choice(len(MENU), p=p))]


class ResidualView:
    """MegaGem's ``"residual"`` view, what ``arena_train.residual`` trains through: the menu around
    ``megagem_expert``'s bid, the features of its inputs at each bid (:func:`expert_read`), the bid
    each entry makes (:func:`menu_bids`); reveals are the expert's. A saved student is of kind
    :data:`KIND` (:class:`ResidualPolicy` loads it)."""

    kind = KIND
    labels = tuple(label for label, _, _ in MENU)
    features = FEATURES
    expert_entry = EXPERT_ACTION

    def __init__(self) -> None:
        self._expert = ExpertBidder()

    def expert(self) -> ExpertBidder:
        return self._expert

    def read(self, decision: Decision) -> tuple[Array, tuple[Bid, ...]] | None:
        if decision.observation["phase"] == "reveal":
            return None
        r = expert_read(self._expert, decision.observation)
        legal: tuple[Bid, ...] = decision.legal_actions
        return r.features, tuple(legal[amount] for amount in menu_bids(r.bid, r.limit))

    def checkpoint_config(self) -> dict[str, Any]:
        return {
            "kind": KIND,
            "game": "megagem",
            "menu": [list(m) for m in MENU],
            "features": list(FEATURES),
            "expert": "megagem_expert (shipped defaults)",
        }
