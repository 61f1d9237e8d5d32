"""TextArena ``KuhnPoker-v0`` as our adapter plays it: its compact view, an exact equilibrium
bot, and an exact model of the game for values and exploitability.

The game actually played (TextArena 0.7.4, ``max_rounds = 3``; upstream PR #189): each round
both players ante 1 and get one card of J < Q < K; the pot is 2 and bets and calls never reach
it. Whoever wins the round (the other folds, or the higher card at showdown) gains 1 chip and
the other loses 1, so every round is won or lost, nothing more, and after 3 rounds the chip
totals differ: the result is +1 for the player who won 2 or 3 rounds, -1 for the other (no
draws). Round ``r`` is opened by seat 1 in rounds 1 and 3, seat 0 in round 2; cards are
shuffled afresh each round.

Equilibrium. Never folding guarantees each round at least the card lottery (the higher card
wins every showdown; a fold by the other side only adds wins), so each seat can guarantee
winning a round with probability >= 1/2 whatever the other does, hence the match with
probability >= 1/2: the game's value is 0 for both seats and any never-fold strategy is an
equilibrium strategy. Betting costs nothing, so :class:`EquilibriumBot` bets whenever it may
and calls every bet: an equilibrium strategy (exploitability exactly 0, computed by
:func:`best_response_value`) that also takes every fold a weak opponent offers. The standard
Kuhn-poker equilibrium is *not* one here: it folds the queen to a bet, which this game
punishes (see ``tests/test_textarena_loop_kuhn.py``).

The exact model (:func:`match_value`, :func:`best_response_value`) is small: per round, 6
ordered deals and 5 betting lines; per match, the round-win recursion over 3 rounds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from arena_core.errors import PlayerError
from arena_core.game import Game, Position
from arena_core.players import BasePlayer, Decision
from arena_core.views import Menu

TITLE = "textarena/KuhnPoker-v0"
CARDS = ("J", "Q", "K")
ROUNDS = 3
#: canonical action strings of the title
CHECK, BET, CALL, FOLD = "[check]", "[bet]", "[call]", "[fold]"
#: the compact view's answer labels (single characters: one token of any byte-level BPE)
LABELS = {CHECK: "p", BET: "b", CALL: "c", FOLD: "f"}
#: past actions of the round in the compact view (other letters than the answers)
HISTORY_LETTERS = {CHECK: "x", BET: "r"}
#: the betting lines of a round, as history strings of HISTORY_LETTERS ("" = nothing yet)
HISTORIES = ("", "x", "r", "xr")
_LEGAL = {"": (CHECK, BET), "x": (CHECK, BET), "r": (CALL, FOLD), "xr": (CALL, FOLD)}

_ROUND = re.compile(r"### Starting round (\d+) out of \d+ rounds\. Your card is: '([JQK])'")
_SCORES = re.compile(r"Current scores: Player 0: '(-?\d+)'; Player 1: '(-?\d+)'")


def starter(round_no: int) -> int:
    """The seat that opens round ``round_no`` (1-based): 1, 0, 1, ..."""
    return 1 if round_no % 2 == 1 else 0


@dataclass(frozen=True)
class RoundView:
    """What a player knows that matters: the round, its own card, the round's betting so far
    (a :data:`HISTORIES` string) and its chip lead over the other player."""

    round_no: int
    card: str
    history: str
    lead: int


def read_observation(observation: Mapping[str, Any], player: int) -> RoundView:
    """Parse the player's own messages (its TextArena inbox, as ``Game.observe`` gives it)."""
    round_no, card, history, lead = 0, "", "", 0
    for msg in observation.get("messages", ()):
        sender, kind, text = msg[0], msg[1], msg[2]
        m = _ROUND.search(text)
        if m:  # the opening message (duplicated for the second player in round 1: idempotent)
            if int(m.group(1)) != round_no:
                round_no, card, history = int(m.group(1)), m.group(2), ""
            continue
        s = _SCORES.search(text)
        if s:
            chips = (int(s.group(1)), int(s.group(2)))
            lead = chips[player] - chips[1 - player]
            continue
        if kind == "PLAYER_ACTION" and sender in (0, 1):
            word = text.strip().lower()
            history += HISTORY_LETTERS.get(word, "?")
    if not round_no or history not in _LEGAL:
        raise PlayerError(f"{TITLE}: cannot read the round from the observation (round {round_no}, {history!r})")
    return RoundView(round_no, card, history, lead)


def compact_text(card: str, history: str) -> str:
    """The compact prompt: ``"tkuhn <history or -> <card>"`` (the card last, as in Kuhn poker's
    compact view: a tiny model's last position then depends on it)."""
    return f"tkuhn {history or '-'} {card}"


@dataclass(frozen=True)
class KuhnV0CompactView:
    """The ``"compact"`` view of ``textarena/KuhnPoker-v0``: the round's betting and the card;
    answers ``p`` (check), ``b`` (bet), ``c`` (call), ``f`` (fold). The round and the chip lead
    are left out: in this game each round is best played on its own (winning a round never hurts)."""

    def menu(self, game: Game[Any, Any], pos: Position[Any], player: int, *, include_illegal: bool = False) -> Menu:
        info = read_observation(game.observe(pos, player), player)
        actions = tuple(game.legal(pos, player))
        return Menu(
            compact_text(info.card, info.history),
            actions,
            tuple(LABELS[a] for a in actions),
            (True,) * len(actions),
        )


class EquilibriumBot(BasePlayer):
    """Bets whenever it may, calls every bet, never folds: an exact equilibrium strategy of
    ``KuhnPoker-v0`` as played (see the module docstring), deterministic."""

    name = "textarena_kuhn_equilibrium"

    def act(self, decision: Decision) -> str:
        legal = tuple(decision.legal_actions)
        for want in (BET, CALL):
            if want in legal:
                return want
        raise PlayerError(f"{self.name} plays {TITLE} only; legal actions here: {list(legal)}")


# ---------------------------------------------------------------------- the exact model
#: a policy: (card, history, round, lead) -> {action: probability} over _LEGAL[history]
Policy = Callable[[str, str, int, int], Mapping[str, float]]


def legal_at(history: str) -> tuple[str, ...]:
    return _LEGAL[history]


def equilibrium_policy(card: str, history: str, round_no: int, lead: int) -> dict[str, float]:
    """:class:`EquilibriumBot` as a policy table."""
    return {BET: 1.0} if BET in _LEGAL[history] else {CALL: 1.0}


def uniform_policy(card: str, history: str, round_no: int, lead: int) -> dict[str, float]:
    """The ``random`` player: uniform over the legal actions."""
    legal = _LEGAL[history]
    return {a: 1.0 / len(legal) for a in legal}


def table_policy(table: Mapping[tuple[str, str], Mapping[str, float]]) -> Policy:
    """A stationary policy from ``(card, history) -> {action: probability}``."""

    def policy(card: str, history: str, round_no: int, lead: int) -> Mapping[str, float]:
        return table[card, history]

    return policy


def _after(history: str, action: str) -> str | None:
    """The next history, or None when ``action`` ends the round."""
    nxt = history + HISTORY_LETTERS.get(action, "")
    return nxt if action in (CHECK, BET) and nxt in _LEGAL else None


def _round_winner_is_starter(history: str, action: str, starter_card: int, other_card: int) -> bool:
    """Whether the round's opener wins when ``action`` ends the round after ``history``."""
    mover_is_starter = len(history) % 2 == 0
    if action == FOLD:
        return not mover_is_starter
    return starter_card > other_card  # a showdown (check-check or a call)


def _round_win_probability(pol_starter: Policy, pol_other: Policy, round_no: int, lead_starter: int) -> float:
    """P(the opener wins the round) with both policies fixed, over the 6 deals."""
    total = 0.0
    for a in range(3):
        for b in range(3):
            if a == b:
                continue
            cards = (CARDS[a], CARDS[b])
            leads = (lead_starter, -lead_starter)

            def walk(
                history: str,
                reach: float,
                a: int = a,
                b: int = b,
                cards: tuple[str, str] = cards,
                leads: tuple[int, int] = leads,
            ) -> float:
                mover = len(history) % 2  # 0: the opener
                pol = pol_starter if mover == 0 else pol_other
                probs = pol(cards[mover], history, round_no, leads[mover])
                out = 0.0
                for action in _LEGAL[history]:
                    p = float(probs.get(action, 0.0))
                    if p == 0.0:
                        continue
                    nxt = _after(history, action)
                    if nxt is None:
                        out += reach * p * float(_round_winner_is_starter(history, action, a, b))
                    else:
                        out += walk(nxt, reach * p)
                return out

            total += walk("", 1.0 / 6.0)
    return total


def match_value(policy0: Policy, policy1: Policy) -> float:
    """Seat 0's exact probability of winning the match (the expected return is ``2 p - 1``)."""

    @cache
    def value(round_no: int, wins0: int) -> float:  # P(seat 0 wins the match) from here
        losses0 = round_no - 1 - wins0
        if wins0 >= 2:
            return 1.0
        if losses0 >= 2:
            return 0.0
        s = starter(round_no)
        pols = (policy0, policy1)
        lead_starter = 2 * ((wins0 - losses0) if s == 0 else (losses0 - wins0))
        p_start = _round_win_probability(pols[s], pols[1 - s], round_no, lead_starter)
        p0 = p_start if s == 0 else 1.0 - p_start
        return p0 * value(round_no + 1, wins0 + 1) + (1 - p0) * value(round_no + 1, wins0)

    return value(1, 0)


def best_response_value(policy: Policy, br_seat: int) -> float:
    """The exact win probability of a best response in seat ``br_seat`` against ``policy`` in
    the other seat. The responder may use everything it sees; ``policy`` depends only on its own
    card, the round's betting, the round and the lead, so the responder's card, the round's
    betting and the match score are all it needs (cards are dealt afresh each round)."""

    @cache
    def value(round_no: int, wins: int) -> float:  # P(the responder wins the match) from here
        losses = round_no - 1 - wins
        if wins >= 2:
            return 1.0
        if losses >= 2:
            return 0.0
        win_v, lose_v = value(round_no + 1, wins + 1), value(round_no + 1, wins)
        br_starts = starter(round_no) == br_seat
        lead_bot = 2 * (losses - wins)
        total = 0.0
        for c in range(3):
            others = [o for o in range(3) if o != c]

            def walk(history: str, weights: tuple[float, ...], c: int = c, others: list[int] = others) -> float:
                mover_is_starter = len(history) % 2 == 0
                br_moves = mover_is_starter == br_starts
                options = []
                for action in _LEGAL[history]:
                    if br_moves:
                        w = weights
                    else:
                        w = tuple(
                            wt * float(policy(CARDS[o], history, round_no, lead_bot).get(action, 0.0))
                            for o, wt in zip(others, weights)
                        )
                    nxt = _after(history, action)
                    if nxt is None:
                        v = 0.0
                        for o, wt in zip(others, w):
                            sc, oc = (c, o) if br_starts else (o, c)
                            starter_wins = _round_winner_is_starter(history, action, sc, oc)
                            v += wt * (win_v if starter_wins == br_starts else lose_v)
                    else:
                        v = walk(nxt, w)
                    options.append(v)
                return max(options) if br_moves else sum(options)

            total += walk("", (0.5, 0.5)) / 3.0
        return total

    return value(1, 0)


@dataclass(frozen=True)
class Exploitability:
    """Best-response win probabilities against a policy in each seat, and the policy's
    exploitability: the responders' mean expected return (0 for an equilibrium strategy, as
    the game's value is 0 for both seats)."""

    br_win_vs_seat0: float  # the responder sits in seat 1
    br_win_vs_seat1: float
    exploitability: float


def exploitability(policy: Policy) -> Exploitability:
    w1 = best_response_value(policy, 1)
    w0 = best_response_value(policy, 0)
    return Exploitability(w1, w0, ((2 * w1 - 1) + (2 * w0 - 1)) / 2)


def seat_mean_win(policy: Policy, opponent: Policy) -> float:
    """``policy``'s exact match-win probability averaged over the two seats."""
    return 0.5 * (match_value(policy, opponent) + (1.0 - match_value(opponent, policy)))


def lm_policy_table(
    distributions: Callable[[Sequence[Menu]], Sequence[Any]],
) -> dict[tuple[str, str], dict[str, float]]:
    """A menu policy's exact table over the compact view's 12 information states, from its
    ``distributions(menus) -> log-probabilities`` (e.g. :meth:`arena_train.lm.LMPolicy.distributions`)."""
    import numpy as np

    keys = [(card, h) for card in CARDS for h in HISTORIES]
    menus = [
        Menu(compact_text(card, h), _LEGAL[h], tuple(LABELS[a] for a in _LEGAL[h]), (True,) * len(_LEGAL[h]))
        for card, h in keys
    ]
    table: dict[tuple[str, str], dict[str, float]] = {}
    for key, menu, lp in zip(keys, menus, distributions(menus)):
        p = np.exp(np.asarray(lp, dtype=np.float64) - np.max(lp))
        p = p / p.sum()
        table[key] = {a: float(q) for a, q in zip(menu.actions, p)}
    return table


def exact_values(distributions: Callable[[Sequence[Menu]], Sequence[Any]]) -> dict[str, float]:
    """The loop's analysis hook (``arena_train.loop``, ``analysis = "arena_games.textarena.kuhn_v0:exact_values"``):
    a menu policy's exact match-win probability against :class:`EquilibriumBot` (at most 1/2)
    and against the uniform random player (at most 197/256 = 0.7695, reached by the bot), seats
    averaged, and its exploitability."""
    table = table_policy(lm_policy_table(distributions))
    return {
        "win_vs_equilibrium": seat_mean_win(table, equilibrium_policy),
        "win_vs_random": seat_mean_win(table, uniform_policy),
        "exploitability": exploitability(table).exploitability,
    }
