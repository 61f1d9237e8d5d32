"""Rollouts shared by every trainer: play many episodes in lockstep so the learner decides for
all of them in one batched call, while opponents are ordinary arena players.

The learner is anything with ``decide(requests) -> choices`` (:class:`Learner`); the rollout
knows nothing about language models. Opponents are called through the player protocol
(``act(Decision)``); an answer they get wrong is replaced by the game's default action and
counted, never raised -- a misbehaving player is data.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from arena_core.errors import RulesError
from arena_core.faults import FaultKind, fault_of_exception
from arena_core.game import Game, Position
from arena_core.players import Decision, Player, begin_episodes

#: a learner's action distribution at a position: ``(game, pos, seat) -> [(action, probability)]``
Distribution = Callable[[Game[Any, Any], Position[Any], int], Iterable[tuple[Any, float]]]


@dataclass(frozen=True)
class Request:
    """A learner decision to make: the game position, the seat and the draw's seed."""

    game: Game[Any, Any]
    pos: Position[Any]
    seat: int
    episode: int  # index into the batch of episodes
    key: int  # seed for this decision's draw


@dataclass(frozen=True)
class Choice:
    """What the learner answered, with anything the trainer needs later in ``record``.

    ``action`` None means the answer named no legal action (unparseable or illegal); the
    rollout then plays the game's default action and records the penalty."""

    action: Any
    illegal: bool = False
    unparseable: bool = False
    record: Any = None


@dataclass
class StepRecord:
    seat: int
    ply: int
    choice: Choice
    penalty: float = 0.0


@dataclass
class EpisodeResult:
    deal_seed: int
    learner_seat: int
    returns: tuple[float, ...]
    steps: list[StepRecord]
    opponent_errors: int = 0  # opponent decisions substituted by the default, of every kind
    truncated: bool = False
    opponent_faults: dict[str, int] = field(default_factory=dict)  # FaultKind value -> count
    #: rounds the game settled, when asked (``play_episodes(rounds=True)``): (ply of the settling
    #: move, every seat's reward from ``Game.round_rewards``)
    rounds: list[tuple[int, tuple[float, ...]]] = field(default_factory=list)


class Learner(Protocol):
    def decide(self, requests: Sequence[Request]) -> list[Choice]: ...


@dataclass(frozen=True)
class EpisodeSpec:
    """One episode to play. Every seat without an opponent is the learner's: an empty
    ``opponents`` is self-play with the learner in every seat at once (``learner_seat`` is
    then only the seat that :func:`per_deal_means` and the rewards read first)."""

    deal_seed: int
    learner_seat: int
    opponents: Mapping[int, Player]  # seat -> player; missing seats are the learner's
    key_seed: int  # seeds the learner's draws in this episode
    #: the episode seed the opponents draw from (their :class:`~arena_core.players.Decision`'s and
    #: ``begin_episodes``'); None: the deal seed, so two plays of one deal meet the same opponent draws
    draw_seed: int | None = None

    @property
    def opponent_seed(self) -> int:
        return self.deal_seed if self.draw_seed is None else self.draw_seed


def seat_to_act(game: Game[Any, Any], pos: Position[Any]) -> int:
    """The seat to act at ``pos`` (a position of a game that is not over)."""
    seat = game.current_player(pos)
    if seat is None:
        raise RulesError(f"{game.spec.id}: the game is not over but no player is to act")
    return seat


def _opponent_action(
    game: Game[Any, Any], pos: Position[Any], seat: int, player: Player, deal_seed: int
) -> tuple[Any, FaultKind | None]:
    """The opponent's action and, when it had to be substituted (a raise, unreadable text or an
    illegal action: the game's default is played instead), the kind of its fault, decided by
    the game loop's own rule (:func:`arena_core.runner.answer_fault`)."""
    from arena_core.runner import answer_fault

    decision = Decision.at(game, pos, seat, deal_seed)
    try:
        answer: Any = player.act(decision)
    except Exception as exc:  # a crashing opponent is data: play the default and count it
        answer = exc
    try:
        action, fault = answer_fault(decision, answer)
    except Exception as exc:  # a parser that raises on the answer: the answer is not an action
        action, fault = None, fault_of_exception(exc)
    return (action, None) if fault is None else (game.default_action(pos.state, seat), fault)


def play_episodes(
    game: Game[Any, Any],
    specs: Sequence[EpisodeSpec],
    learner: Learner,
    *,
    illegal_penalty: float = 0.0,
    ply_cap: int | None = None,
    decision_key: Callable[[int, int], int] | None = None,
    rounds: bool = False,
) -> list[EpisodeResult]:
    """Play every episode of ``specs`` to the end (or ``ply_cap``), batching learner decisions.
    ``decision_key(key_seed, ply)``: the key of each learner decision (default
    ``derive_seed(key_seed, "ply", ply)``); ``rounds``: record the rounds the game settles
    (``EpisodeResult.rounds``, from ``Game.round_rewards``)."""
    keyed = decision_key or _decision_key
    settle = rounds and game.has_rounds

    def advance(i: int, pos: Position[Any], seat: int, action: Any) -> Position[Any]:
        new = game.act(pos, seat, action)
        if settle:
            rewards = game.round_rewards(pos.state, new.state)
            if rewards is not None:
                results[i].rounds.append((pos.ply, tuple(float(r) for r in rewards)))
        return new

    cap = ply_cap or (game.spec.max_length or 10_000)
    positions: list[Position[Any]] = []
    results: list[EpisodeResult] = []
    for spec in specs:
        begin_episodes(spec.opponents, game, spec.opponent_seed)
        positions.append(game.start(spec.deal_seed))
        results.append(EpisodeResult(spec.deal_seed, spec.learner_seat, (), []))
    active = list(range(len(specs)))
    while active:
        requests: list[Request] = []
        for i in list(active):
            pos, spec = positions[i], specs[i]
            while True:  # advance opponents until the learner must act or the game ends
                if game.is_over(pos) or pos.ply >= cap:
                    break
                seat = seat_to_act(game, pos)
                if seat not in spec.opponents:
                    break
                action, fault = _opponent_action(game, pos, seat, spec.opponents[seat], spec.opponent_seed)
                if fault is not None:
                    results[i].opponent_errors += 1
                    results[i].opponent_faults[fault.value] = results[i].opponent_faults.get(fault.value, 0) + 1
                pos = advance(i, pos, seat, action)
            positions[i] = pos
            if game.is_over(pos) or pos.ply >= cap:
                active.remove(i)
                res = results[i]
                if game.is_over(pos):
                    res.returns = game.final_returns(pos)
                else:
                    res.truncated = True
                    res.returns = tuple(0.0 for _ in range(game.num_players))
                continue
            key = keyed(spec.key_seed, pos.ply)
            requests.append(Request(game, pos, seat_to_act(game, pos), i, key))
        if not requests:
            break
        choices = learner.decide(requests)
        for req, choice in zip(requests, choices):
            pos = positions[req.episode]
            bad = choice.action is None or choice.illegal or choice.unparseable
            action = game.default_action(pos.state, req.seat) if bad else choice.action
            results[req.episode].steps.append(StepRecord(req.seat, pos.ply, choice, -illegal_penalty if bad else 0.0))
            positions[req.episode] = advance(req.episode, pos, req.seat, action)
    return results


def _decision_key(key_seed: int, ply: int) -> int:
    from arena_core.seeding import derive_seed

    return derive_seed(key_seed, "ply", ply)


# ---------------------------------------------------------------------- rewards
@dataclass(frozen=True)
class RewardSpec:
    """How a finished episode becomes the learner's reward.

    - ``outcome``: the learner's own return (Kuhn: chips won);
    - ``win``: +1 strictly first, -1 otherwise, 0 when tied for first;
    - ``margin``: ``tanh(margin / scale)`` plus ``first_bonus`` when first, margin = own return
      minus the mean of the others;
    - ``round``: the rewards of the rounds the game settled (``Game.round_rewards``; Liar's dice:
      -1 a die lost, +1 a die won at a call), summed; per decision (:func:`decision_returns`)
      the reward of the decision's own round.
    A truncated episode scores 0 (``round``: the rounds it settled); each illegal or unparseable
    learner action adds its penalty.
    """

    kind: Literal["outcome", "win", "margin", "round"] = "outcome"
    margin_scale: float = 10.0
    first_bonus: float = 0.1
    illegal_penalty: float = 1.0


def outcome_reward(result: EpisodeResult, spec: RewardSpec) -> float:
    if spec.kind == "round":
        return float(sum(r[result.learner_seat] for _, r in result.rounds))
    if result.truncated:
        return 0.0
    own = result.returns[result.learner_seat]
    others = [r for i, r in enumerate(result.returns) if i != result.learner_seat]
    best_other = max(others) if others else own
    if spec.kind == "outcome":
        return float(own)
    if spec.kind == "win":
        return 1.0 if own > best_other else (0.0 if own == best_other else -1.0)
    margin = own - (float(np.mean(others)) if others else 0.0)
    return float(np.tanh(margin / spec.margin_scale) + (spec.first_bonus if own > best_other else 0.0))


def episode_return(result: EpisodeResult, spec: RewardSpec) -> float:
    return outcome_reward(result, spec) + sum(s.penalty for s in result.steps)


def decision_returns(result: EpisodeResult, spec: RewardSpec) -> list[float]:
    """Per-decision returns: the outcome plus the penalties at or after each decision; with
    ``kind = "round"``, the reward of the decision's own round (the first the game settled at or
    after its ply; 0 if none did) plus the penalties at or after it in that round."""
    if spec.kind == "round":
        return _round_decision_returns(result)
    base = outcome_reward(result, spec)
    penalties = [s.penalty for s in result.steps]
    tails = np.cumsum(penalties[::-1])[::-1]  # empty when there are no decisions
    return [base + float(t) for t in tails]


def _round_decision_returns(result: EpisodeResult) -> list[float]:
    settled = [ply for ply, _ in result.rounds]
    seat = result.learner_seat

    def round_of(ply: int) -> int:
        return next((k for k, p in enumerate(settled) if p >= ply), len(settled))

    rounds = [round_of(s.ply) for s in result.steps]
    out = []
    for i, k in enumerate(rounds):
        reward = result.rounds[k][1][seat] if k < len(settled) else 0.0
        penalty = sum(s.penalty for s, kk in zip(result.steps[i:], rounds[i:]) if kk == k)
        out.append(float(reward) + penalty)
    return out


def seat_return(result: EpisodeResult, seat: int, spec: RewardSpec) -> float:
    """The reward of ``seat`` (a learner seat; several in self-play): the outcome from that
    seat's point of view plus the penalties of that seat's own decisions."""
    from dataclasses import replace

    return outcome_reward(replace(result, learner_seat=seat), spec) + sum(
        s.penalty for s in result.steps if s.seat == seat
    )


def seat_decision_returns(result: EpisodeResult, seat: int, spec: RewardSpec) -> list[float]:
    """:func:`decision_returns` for the decisions of ``seat`` only (per-turn credit: each
    decision is charged the outcome plus the penalties at or after it)."""
    from dataclasses import replace

    own = replace(result, learner_seat=seat, steps=[s for s in result.steps if s.seat == seat])
    return decision_returns(own, spec)


def group_advantages(returns: Sequence[float] | npt.NDArray[np.float64], eps: float = 1e-6) -> npt.NDArray[np.float64]:
    """Group-normalised advantages ``(r - mean) / (std + eps)``; all zero for a constant group."""
    r = np.asarray(returns, dtype=np.float64)
    std = r.std()
    if std < 1e-9:
        return np.zeros_like(r)
    out: npt.NDArray[np.float64] = (r - r.mean()) / (std + eps)
    return out


def centred_advantages(
    returns: Sequence[float], groups: Sequence[int], scale: str = "batch_std", eps: float = 1e-6
) -> npt.NDArray[np.float64]:
    """Returns minus their group's mean, divided by each group's std (``group_std``, classic
    GRPO), by the std of all centred returns (``batch_std``) or by nothing (``none``).

    In a game of chance the group shares the deal, so its std reflects the stakes of that
    deal; dividing by it makes a deal where a choice swings 1 chip weigh as much as one where
    it swings 3, which biases the objective (Kuhn poker: it stalls at the card-blind value).
    ``batch_std`` keeps the stakes comparable across deals."""
    r = np.asarray(returns, dtype=np.float64)
    g = np.asarray(groups)
    if scale == "group_std":
        out = np.zeros_like(r)
        for key in np.unique(g):
            idx = np.flatnonzero(g == key)
            out[idx] = group_advantages(r[idx], eps)
        return out
    centred = r.copy()
    for key in np.unique(g):
        idx = np.flatnonzero(g == key)
        centred[idx] -= r[idx].mean()
    if scale == "none":
        return centred
    std = centred.std()
    return centred / (std + eps) if std > 1e-9 else np.zeros_like(centred)


# ---------------------------------------------------------------------- paired evaluation
# re-exported for the trainers: the one statistics module's paired interval
from arena_core.stats import PairedInterval as PairedInterval  # noqa: E402
from arena_core.stats import paired_bootstrap as paired_bootstrap  # noqa: E402


def rotated_specs(
    game: Game[Any, Any],
    deal_seeds: Sequence[int],
    make_opponents: Callable[[int], Mapping[int, Player]],
    key_seed: int,
) -> list[EpisodeSpec]:
    """Every deal once per learner seat (seat rotation), opponents from ``make_opponents(seat)``."""
    from arena_core.seeding import derive_seed

    specs: list[EpisodeSpec] = []
    for d in deal_seeds:
        for seat in range(game.num_players):
            specs.append(EpisodeSpec(int(d), seat, make_opponents(seat), derive_seed(key_seed, int(d), seat)))
    return specs


def per_deal_means(results: Sequence[EpisodeResult], spec: RewardSpec | None = None) -> list[float]:
    """Mean learner return per deal over its seats (results from :func:`rotated_specs`, in order)."""
    by_deal: dict[int, list[float]] = {}
    order: list[int] = []
    for r in results:
        value = r.returns[r.learner_seat] if spec is None else episode_return(r, spec)
        if r.deal_seed not in by_deal:
            order.append(r.deal_seed)
        by_deal.setdefault(r.deal_seed, []).append(float(value))
    return [float(np.mean(by_deal[d])) for d in order]


@dataclass(frozen=True)
class PlayerLearner:
    """An ordinary arena player as a :class:`Learner` (to evaluate bots and anchors on the same
    deals). Episodes run in lockstep, so the player must not keep per-episode state."""

    player: Player

    def decide(self, requests: Sequence[Request]) -> list[Choice]:
        out: list[Choice] = []
        for req in requests:
            action, fault = _opponent_action(req.game, req.pos, req.seat, self.player, req.key)
            out.append(Choice(action, illegal=fault is not None))
        return out


def expected_return(
    game: Game[Any, Any],
    deal_seed: int,
    learner_seat: int,
    distribution: Distribution,
    opponents: Mapping[int, Player],
) -> float:
    """The learner's exact expected return on one deal: the game tree is enumerated over the
    learner's action distribution (``distribution(game, pos, seat) -> [(action, prob)]``);
    opponents must be deterministic players. For small games (Kuhn poker), where sampled
    evaluation would need thousands of deals to resolve 0.01."""

    def value(pos: Position[Any]) -> float:
        if game.is_over(pos):
            return game.final_returns(pos)[learner_seat]
        seat = seat_to_act(game, pos)
        if seat == learner_seat:
            return sum(p * value(game.act(pos, seat, a)) for a, p in distribution(game, pos, seat) if p > 0)
        action, _ = _opponent_action(game, pos, seat, opponents[seat], deal_seed)
        return value(game.act(pos, seat, action))

    return float(value(game.start(deal_seed)))


def distinct_deals(game: Game[Any, Any], count: int, *, seed: int = 0, limit: int = 10_000) -> list[int]:
    """Seeds of the first ``count`` distinct deals (by initial state) from a seeded stream."""
    from arena_core.seeding import derive_seed

    seen: dict[str, int] = {}
    for i in range(limit):
        s = derive_seed(seed, "distinct_deal", i)
        key = json.dumps(game.state_to_json(game.start(s).state), sort_keys=True)
        if key not in seen:
            seen[key] = s
            if len(seen) == count:
                break
    return list(seen.values())
