"""Residual policy gradient: a student that starts at an expert's decisions and learns deviations
from them (issue 30; the shipped MegaGem student, ``models/megagem-student``, is one).

The game supplies the residual menu as its ``"residual"`` view (``Game.views()``; MegaGem's is
``arena_games.megagem.residual.ResidualView``), a :class:`ResidualView`: at each of the student's
decisions, features of the expert's own inputs and the action each menu entry plays (the entry
``expert_entry`` plays the expert's own); where it supplies none (a reveal), the expert decides.
The student is a linear softmax over the menu whose logit of the expert's entry starts at
``init_bias`` and every weight at 0, so the greedy student at initialisation *is* the expert and
every deviation has to earn its place.

One step plays ``deals_per_step`` fresh deals with the student (sampled) in every seat and the
expert in the others, and ascends REINFORCE with Adam: each episode's margin (its score minus the
others' mean) minus a reference's in the same seat on the same deal, replayed exactly (``control``:
the current greedy student's, or the all-expert game's), centred and divided by ``reward_scale``,
plus an optional entropy bonus. Every ``eval_every`` steps the greedy student plays the evaluation
deals in every seat: its margin over the expert's per deal, with a t interval. Checkpoints hold the
student (a directory the ``checkpoint`` player loads, through the kind its view names), the Adam
moments and the counters, so a run resumes exactly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt
from pydantic import Field

from arena_core.errors import ConfigError
from arena_core.game import Game
from arena_core.players import Decision, Player
from arena_core.registry import make_game
from arena_core.seeding import make_rng
from arena_core.stats import paired_t
from arena_core.views import get_view

from .config import RunConfig
from .pg import Adam
from .run import RunDir, read_state
from .trainer import Parts, RunSummary, TrainerPlugin

Array = npt.NDArray[np.float64]


class ResidualView(Protocol):
    """A game's residual menu around its expert (the game's ``"residual"`` view)."""

    kind: str  # the checkpoint kind an installed loader plays (the arena.checkpoints group)
    labels: Sequence[str]  # the menu entries
    features: Sequence[str]  # the feature names
    expert_entry: int  # the entry that plays the expert's own action

    def expert(self) -> Player:
        """The expert: the other seats, the student's other decisions, the reference."""
        ...

    def read(self, decision: Decision) -> tuple[Array, Sequence[Any]] | None:
        """The features and the action of every menu entry at a student decision (None: the expert's)."""
        ...

    def checkpoint_config(self) -> dict[str, Any]:
        """What a saved student's ``config.json`` says of the menu (its kind, game, entries, features)."""
        ...


class ResidualConfig(RunConfig):
    trainer: Literal["residual_pg"] = "residual_pg"
    name: str = "residual_pg"
    game: str = Field(description="a registered game with a 'residual' view (e.g. megagem)")
    game_params: dict[str, Any] = Field(default_factory=dict)
    seed: int = Field(default=0, ge=0)
    steps: int = Field(ge=1)
    deals_per_step: int = Field(default=16, ge=1, description="fresh deals per step, each played in every seat")
    init_bias: float = Field(default=3.0, description="the starting logit of the expert's entry (the others 0)")
    learning_rate: float = Field(default=0.02, gt=0)
    deal_base: int = Field(
        default=30_000_000, ge=0, description="training deals: deal_base + seed x 1,000,000 + step x deals_per_step + i"
    )
    reward_scale: float = Field(default=10.0, gt=0, description="advantages are divided by this")
    control: Literal["greedy", "expert"] = Field(
        default="greedy", description="the reward's reference: the current greedy student's margin, or the expert's"
    )
    entropy: float = Field(default=0.0, ge=0, description="entropy bonus per decision (in reward_scale units)")
    eval_every: int = Field(default=25, ge=1, description="evaluate the greedy student every N steps (and the last)")
    eval_first: int = Field(
        default=33_000_000, ge=0, description="evaluation deals: eval_first + seed x 1,000 + i, i < eval_deals"
    )
    eval_deals: int = Field(default=16, ge=2)
    checkpoint_every: int = Field(default=1, ge=1)
    resume_from: str | None = Field(default=None, description="a checkpoint (or run directory) of this run to continue")
    parent_run: str | None = None

    def resume_checkpoint(self) -> str | None:
        return self.resume_from


# ---------------------------------------------------------------------- the student
@dataclass
class LinearStudent:
    """Linear softmax over the menu: logits ``x @ W + b``."""

    W: Array
    b: Array
    expert_entry: int

    @classmethod
    def init(cls, features: int, entries: int, expert_entry: int, init_bias: float) -> LinearStudent:
        b = np.zeros(entries)
        b[expert_entry] = init_bias
        return cls(np.zeros((features, entries)), b, expert_entry)

    @classmethod
    def constant(
        cls, features: int, entries: int, expert_entry: int, entry: int, strength: float = 20.0
    ) -> LinearStudent:
        """The student that always picks ``entry`` (a constant deviation)."""
        b = np.zeros(entries)
        b[entry] = strength
        return cls(np.zeros((features, entries)), b, expert_entry)

    @classmethod
    def load(cls, directory: Path, expert_entry: int) -> LinearStudent:
        with np.load(directory / "policy.npz") as z:
            return cls(z["W"].copy(), z["b"].copy(), expert_entry)

    def probabilities(self, x: Array) -> Array:
        """(B, entries) menu probabilities of feature rows ``x``."""
        z = x @ self.W + self.b
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z)
        out: Array = p / p.sum(axis=1, keepdims=True)
        return out

    def greedy(self, x: Array) -> int:
        """The most likely entry; ties go to the expert's, then to the lowest index."""
        z = x @ self.W + self.b
        return self.expert_entry if z[self.expert_entry] >= float(z.max()) else int(np.argmax(z))

    def episode_gradient(self, x: Array, actions: npt.NDArray[np.int_]) -> Array:
        """d/d(W, b) of sum_t log p(a_t | x_t), flattened (W then b)."""
        d = -self.probabilities(x)
        d[np.arange(len(actions)), actions] += 1.0
        return np.concatenate([(x.T @ d).ravel(), d.sum(axis=0)])

    def save(self, directory: Path, config: dict[str, Any]) -> None:
        """``policy.npz`` (W, b) and ``config.json`` (the view's checkpoint config and ``config``)."""
        directory.mkdir(parents=True, exist_ok=True)
        np.savez(directory / "policy.npz", W=self.W, b=self.b)
        (directory / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def margins(returns: Sequence[float]) -> list[float]:
    """Each seat's score minus the mean of the others'."""
    k, total = len(returns), sum(returns)
    return [r - (total - r) / (k - 1) for r in returns]


Chooser = Callable[[Decision], Any]


def play_deal(game: Game[Any, Any], deal: int, players: Sequence[Chooser]) -> tuple[float, ...]:
    """Play deal ``deal`` with one chooser per seat; the final returns."""
    pos = game.start(deal)
    while not game.is_over(pos):
        p = game.current_player(pos)
        if p is None:
            raise ConfigError(f"{game.spec.id}: the game is not over but no player is to act")
        pos = game.act(pos, p, players[p](Decision.at(game, pos, p, deal)))
    return game.final_returns(pos)


@dataclass
class ResidualSession:
    """The built parts of a residual run and what changes as it trains."""

    config: ResidualConfig
    game: Game[Any, Any]
    view: ResidualView
    expert: Player
    student: LinearStudent
    adam: Adam
    step: int = 0
    episodes: int = 0
    expert_margins: dict[int, list[float]] = field(default_factory=dict)  # the all-expert games, per deal

    def reference(self, deal: int) -> list[float]:
        """The all-expert game's margins on ``deal`` (the luck control), played once per deal."""
        if deal not in self.expert_margins:
            self.expert_margins[deal] = margins(play_deal(self.game, deal, [self.expert.act] * self.game.num_players))
        return self.expert_margins[deal]

    def episode(self, deal: int, seat: int, rng: np.random.Generator | None) -> tuple[float, list[Array], list[int]]:
        """The student in ``seat`` (sampled from ``rng``, greedy if None) against the expert: its
        margin and its residual decisions (features, entries)."""
        xs: list[Array] = []
        entries: list[int] = []

        def mine(decision: Decision) -> Any:
            read = self.view.read(decision)
            if read is None:
                return self.expert.act(decision)
            x, actions = read
            if rng is None:
                a = self.student.greedy(x)
            else:
                p = self.student.probabilities(x[None, :])[0]
                a = int(rng.choice(len(actions), p=p))
            xs.append(x)
            entries.append(a)
            return actions[a]

        players: list[Chooser] = [self.expert.act] * self.game.num_players
        players[seat] = mine
        return margins(play_deal(self.game, deal, players))[seat], xs, entries


def session_for(
    game: Game[Any, Any], student: LinearStudent | None = None, config: ResidualConfig | None = None
) -> ResidualSession:
    """A session on ``game``'s residual view (a run's, or a bench's evaluations outside a run), its
    student at the expert unless given."""
    cfg = config or ResidualConfig(game=game.spec.id, steps=1)
    view: ResidualView = get_view(game, "residual")
    student = student or LinearStudent.init(len(view.features), len(view.labels), view.expert_entry, cfg.init_bias)
    return ResidualSession(cfg, game, view, view.expert(), student, Adam(cfg.learning_rate))


def start(cfg: ResidualConfig, run: RunDir, parts: Parts[LinearStudent]) -> ResidualSession:
    """The game, its residual view, the student (``parts.model``, else at the expert) and Adam; the
    checkpoint it resumes; the manifest."""
    session = session_for(make_game(cfg.game, cfg.game_params or None), parts.model, cfg)
    if run.resume is not None:
        restore(run, session)
    seeds = {"seed": cfg.seed, "deal_base": cfg.deal_base + cfg.seed * 1_000_000}
    parent = cfg.parent_run or (str(run.resume.parent.parent) if run.resume is not None else None)
    run.start(cfg.model_dump(mode="json"), trainer="residual_pg", seeds=seeds, parent=parent)
    return session


# ---------------------------------------------------------------------- one step
def gradient_noise(g: Array) -> float:
    """Variance of the batch-mean gradient estimate: trace of the per-episode covariance / N."""
    n = len(g)
    return float(g.var(axis=0, ddof=1).sum() / n) if n > 1 else float("nan")


@dataclass(frozen=True)
class Played:
    """A step's episodes: margins, references, and each episode's decisions."""

    raw: Array  # the student's margins
    expert: Array  # the all-expert game's margins, same seat and deal
    greedy: Array  # the control's margins (the greedy student's, or the expert's)
    xs: list[Array]
    actions: list[npt.NDArray[np.int_]]


def play_step(session: ResidualSession) -> Played:
    """The step's episodes: every deal of the step in every seat, sampled, with their references."""
    cfg, game = session.config, session.game
    raw, expert, greedy, xs, actions = [], [], [], [], []
    first = cfg.deal_base + cfg.seed * 1_000_000 + session.step * cfg.deals_per_step
    for i in range(cfg.deals_per_step):
        d = first + i
        ctl = session.reference(d)
        for s in range(game.num_players):
            m, x, acts = session.episode(d, s, make_rng(cfg.seed, "residual", session.step, d, s))
            raw.append(m)
            expert.append(ctl[s])
            xs.append(np.stack(x) if x else np.zeros((0, len(session.view.features))))
            actions.append(np.array(acts, dtype=np.int_))
            greedy.append(session.episode(d, s, None)[0] if cfg.control == "greedy" else ctl[s])
    return Played(np.array(raw), np.array(expert), np.array(greedy), xs, actions)


def train_step(session: ResidualSession, keep: dict[str, Array] | None = None) -> dict[str, Any]:
    """One REINFORCE step on fresh deals, every seat; the step's metrics row (``keep``, when given,
    receives the per-episode gradients under each reference: raw, expert, greedy)."""
    cfg, student = session.config, session.student
    played = play_step(session)
    over_expert, over_greedy = played.raw - played.expert, played.raw - played.greedy
    scores = np.stack([student.episode_gradient(x, a) for x, a in zip(played.xs, played.actions)])
    g = {
        name: scores * ((r - r.mean()) / cfg.reward_scale)[:, None]
        for name, r in (("raw", played.raw), ("expert", over_expert), ("greedy", over_greedy))
    }
    if keep is not None:
        keep.update(g)
    mean_g = g[cfg.control].mean(axis=0)
    xs_all = np.concatenate([x for x in played.xs if len(x)])
    p = student.probabilities(xs_all)
    logp = np.log(np.maximum(p, 1e-300))
    ent = -(p * logp).sum(axis=1)
    if cfg.entropy:
        dz = -p * (logp + ent[:, None]) * cfg.entropy / len(played.xs)  # d(sum of H) / d logits, per episode
        mean_g = mean_g + np.concatenate([(xs_all.T @ dz).ravel(), dz.sum(axis=0)])
    params = {"W": student.W, "b": student.b}
    n = student.W.size
    session.adam.ascend(params, {"W": mean_g[:n].reshape(student.W.shape), "b": mean_g[n:]})
    student.W, student.b = params["W"], params["b"]
    session.step += 1
    session.episodes += len(played.xs)
    chosen = np.concatenate(played.actions)
    return {
        "step": session.step,
        "episodes": session.episodes,
        "margin_over_expert": float(over_expert.mean()),
        "margin_over_expert_sd": float(over_expert.std(ddof=1)),
        "margin_over_greedy": float(over_greedy.mean()),
        "raw_margin_sd": float(played.raw.std(ddof=1)),
        "noise_raw": gradient_noise(g["raw"]),
        "noise_expert_control": gradient_noise(g["expert"]),
        "noise_greedy_control": gradient_noise(g["greedy"]) if cfg.control == "greedy" else float("nan"),
        "signal": float(mean_g @ mean_g),
        "entropy": float(ent.mean()),
        "menu_share": [float(np.mean(chosen == a)) for a in range(len(session.view.labels))],
    }


def greedy_margins(session: ResidualSession, deals: Sequence[int]) -> list[float]:
    """Per deal: the greedy student's margin minus the expert's, averaged over the seats."""
    out = []
    for d in deals:
        ctl = session.reference(d)
        diffs = [session.episode(d, s, None)[0] - ctl[s] for s in range(session.game.num_players)]
        out.append(float(np.mean(diffs)))
    return out


def evaluate(session: ResidualSession) -> dict[str, Any]:
    """The greedy student on the evaluation deals: per-deal margins over the expert, a t interval."""
    cfg = session.config
    first = cfg.eval_first + cfg.seed * 1000
    values = greedy_margins(session, range(first, first + cfg.eval_deals))
    mean, low, high, p = paired_t(np.asarray(values), 0.95)
    return {
        "eval_mean": mean,
        "eval_mean_low": low,
        "eval_mean_high": high,
        "eval_p": p,
        "eval_deals": len(values),
        "eval_margins": values,
    }


# ---------------------------------------------------------------------- checkpoints
def save_checkpoint(run: RunDir, session: ResidualSession) -> Path:
    """``checkpoints/step_NNNNNN/``: the student (``config.json`` of the view's kind and
    ``policy.npz``: ``checkpoint:run=`` that directory plays it), the Adam moments and the state."""
    ckpt = run.checkpoint(session.step)
    counters = {"seed": session.config.seed, "step": session.step, "episodes": session.episodes}
    session.student.save(ckpt, {**session.view.checkpoint_config(), **counters})
    adam = session.adam
    moments: dict[str, Any] = {
        f"{k}_{p}": v for k, d in (("m", adam.m), ("v", adam.v)) if d is not None for p, v in d.items()
    }
    np.savez(ckpt / "adam.npz", **moments)  # numpy's stub would read a key as savez's allow_pickle
    return run.save_state(session.step, {"trainer": "residual_pg", **counters, "adam_t": adam.t})


def restore(run: RunDir, session: ResidualSession) -> None:
    """The student, the Adam moments and the counters of the checkpoint ``run`` resumes."""
    ckpt = run.resume
    if ckpt is None:
        raise ConfigError("restore needs a run that resumes from a checkpoint")
    state = read_state(ckpt)
    if state.get("trainer") != "residual_pg" or state["seed"] != session.config.seed:
        raise ConfigError(f"checkpoint {ckpt} is not a residual_pg run with seed {session.config.seed}")
    with np.load(ckpt / "policy.npz") as z:
        session.student.W, session.student.b = z["W"].copy(), z["b"].copy()
    with np.load(ckpt / "adam.npz") as z:
        if z.files:
            session.adam.m = {k: z[f"m_{k}"].copy() for k in ("W", "b")}
            session.adam.v = {k: z[f"v_{k}"].copy() for k in ("W", "b")}
    session.adam.t, session.step, session.episodes = int(state["adam_t"]), int(state["step"]), int(state["episodes"])
    run.metrics.write(run.resumed_metrics(session.step))


def run_steps(run: RunDir, session: ResidualSession, parts: Parts[LinearStudent]) -> RunSummary:
    """From the session's step to the config's last: train, evaluate every ``eval_every`` steps and
    at the last, checkpoint; then the student in ``student/`` (``checkpoint:run=RUN_DIR/student``)."""
    cfg = session.config
    started = time.perf_counter()
    if session.step == 0:
        run.metrics.write([])
        run.metrics.append({"step": 0, "episodes": 0, **evaluate(session)})
    while session.step < cfg.steps:
        t = time.perf_counter()
        row = train_step(session)
        row["wall_s"] = round(time.perf_counter() - t, 2)
        if session.step % cfg.eval_every == 0 or session.step == cfg.steps:
            row.update(evaluate(session))
        run.metrics.append(row)
        if session.step % cfg.checkpoint_every == 0 or session.step == cfg.steps:
            save_checkpoint(run, session)
        parts.report(session.step, row)
    counters = {"seed": cfg.seed, "step": session.step, "episodes": session.episodes}
    session.student.save(run.path / "student", {**session.view.checkpoint_config(), **counters})
    rows = run.metrics.rows()
    final = {k: v for k, v in rows[-1].items() if k.startswith("eval_") and k != "eval_margins"}
    run.plot(rows, ("margin_over_expert", "entropy", "eval_mean"))
    run.finish(status="ok", final_eval=final, wall_s=round(time.perf_counter() - started, 2))
    files = {"student": str(run.path / "student")}
    return RunSummary(run.path, run.run_id, session.step, rows, final_eval=final, files=files)


def train(config: ResidualConfig, run: RunDir, parts: Parts[LinearStudent]) -> RunSummary:
    """A numpy student that starts at the game's expert and learns deviations from it.

    A whole run into ``run`` (``parts.model``: a :class:`LinearStudent` to start from)."""
    return run_steps(run, start(config, run, parts), parts)


#: the ``residual_pg`` entry point of ``arena.trainers``
TRAINER = TrainerPlugin("residual_pg", ResidualConfig, train)
