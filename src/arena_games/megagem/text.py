"""MegaGem for language models: the rules text, prompts as compact JSON lines, and the answer parser.

One file (over 500 lines) because the prompts and the parser follow one rule-book section each and must be read side by side.

The prompt follows MegagemBench's (rule book section 7.2): a static system text with the rules,
then one compact JSON object per line for each part of the state, then the answer format. The
parser follows section 7.4: strict JSON, the first fenced block, the first balanced object,
then (bids only, and only when no JSON object was found) a prose fallback; an unparseable or
illegal bid becomes 0 (or is clamped, with ``illegal_bid="clamp"``), an unparseable or illegal
reveal becomes the alphabetically first colour in hand.

On top of that precedence the core's strict rules apply (``MegaGemTextView()``): think blocks
are removed before anything is read (a bid inside ``<think>`` is never read), and an answer whose
JSON objects (or, without JSON, whose bid phrases) name different values is unparseable rather
than read by position. ``MegaGemTextView(benchmark=True)`` is the opt-in benchmark-compatible
reading: no exact-string match, tags dropped but their content searched, the first object by
precedence wins, every brace start tried, and the benchmark's looser bid phrases (``I'll bid12``,
``bid=5``, ``bid 5coins``; the rightmost wins). docs/megagem.md tables where the two differ.

(One file: the prompt and its parser are one text view, rule book sections 7.2-7.4.)
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from arena_core.text import MAX_ANSWER_CHARS, ParseResult, Prompt, read_answer, strip_think, unwrap_answer

from .cards import (
    ALPHABETICAL,
    AUCTION_CARDS,
    CHART_DESCRIPTIONS,
    COLOURS,
    DEAL,
    MISSION_IDS,
    NUM_COLOURS,
    VALUE_CHARTS,
    CardKind,
    build_missions,
)
from .rules import Phase, Reveal

if TYPE_CHECKING:  # pragma: no cover
    from arena_core.game import Position

    from .rules import AuctionRecord, MegaGem, MegaGemParams, MegaGemState

HISTORY_SHOWN = 5
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def rules_text(game: MegaGem) -> str:
    """The system text: the rules as this game's options set them."""
    return _rules_text(game.params, game.num_players)


@lru_cache(maxsize=32)
def _rules_text(p: MegaGemParams, n: int) -> str:
    coins, hand = DEAL[n]
    chart = VALUE_CHARTS[p.value_chart]
    reveal_rule = (
        "The winner of a Treasure auction must then move one gem of their choice from their private hand to the "
        "Value Display (if their hand is empty, nothing is revealed)."
        if p.reveal_by == "treasure_winner"
        else "The winner of any auction must then move one gem of their choice from their private hand to the "
        "Value Display (if their hand is empty, nothing is revealed)."
    )
    illegal = "is replaced by 0" if p.illegal_bid == "zero" else "is clamped to your limit"
    return "\n".join(
        [
            f"You are playing MegaGem, a sealed-bid auction game for {n} players.",
            "Answer format: think briefly, then end with exactly one JSON object on its own line, "
            'either {"bid": <integer>} or {"reveal": "<Colour>"} as the request asks. Write no other JSON.',
            "Objective: finish with the highest score.",
            f"Game length: the game ends when all auctionable gems are won (usually 15-20 rounds, {p.round_cap or 25} at most).",
            "Gems: 30 gems, 6 of each colour: Red, Blue, Green, Purple, Yellow.",
            f"Setup: each player starts with {coins} coins and {hand} private hand gems; two gems lie face up for sale.",
            "Values: one value chart applies to every colour; a gem's value is the chart entry for the number of gems of "
            f"its colour in the Value Display (5 or more use the last row). Chart {p.value_chart} "
            f"({CHART_DESCRIPTIONS[p.value_chart]}): " + ", ".join(f"{k}->{v}" for k, v in enumerate(chart)) + ".",
            "Hand vs collection: only gems in your collection (won at auction) score. Hand gems never score; they are "
            "revealed to the Value Display during play, and every remaining hand gem joins the display at the end, "
            "so final prices depend on all hands.",
            "Auction deck (25 cards, one per round): 12 Treasure 1 gem, 5 Treasure 2 gems (take the face-up gems; "
            "a 2-gem card with one gem left gives one), 2 Loan 10, 2 Loan 20 (receive the amount now, repay it at the "
            "end), 2 Investment +5, 2 Investment +10 (your bid is locked now and returned with the bonus at the end).",
            "Bidding: every player bids at once in secret; the highest bid wins and pays its bid to the bank; losers pay "
            "nothing. Someone always wins, even at 0. Limits: Treasure and Investment bids at most your coins; Loan bids "
            f"at most your coins plus the loan amount. A bid outside the limits or unreadable {illegal}.",
            "Ties: the tied player earliest in the tiebreak order wins; every auction winner moves to the end of the order.",
            reveal_rule,
            "Missions: 4 public missions; after each Treasure auction every mission the winner's collection meets is "
            "completed for its reward (first come, exclusive, never replaced); gems are not used up.",
            "Final score = coins + sum of collection gems x their final value + mission rewards - loans + "
            "(locked investment bids + bonuses). Ties go to the player earliest in the final tiebreak order.",
        ]
    )


@lru_cache(maxsize=16)
def _static_lines(chart_id: str, chart: tuple[int, ...], max_bid: int) -> tuple[str, str, str, tuple[str, ...]]:
    chart_line = _dumps(
        {
            "value_chart": {
                "id": chart_id,
                "description": CHART_DESCRIPTIONS[chart_id],
                "values": [{"gems_in_display": k, "value_per_gem": v} for k, v in enumerate(chart)],
                "note": "5 means 5 or more",
            }
        }
    )
    bid_request = _dumps(
        {
            "action_request": {
                "action": "bid",
                "instructions": "Give brief reasoning, then exactly one final JSON object on its own line. No other JSON.",
                "final_json_schema": {"bid": "integer"},
                "example_final_json": {"bid": 7},
            }
        }
    )
    reveal_request = _dumps(
        {
            "action_request": {
                "action": "reveal",
                "valid_colors": list(COLOURS),
                "instructions": "Give brief reasoning, then exactly one final JSON object on its own line. No other JSON.",
                "final_json_schema": {"reveal": "color string"},
                "example_final_json": {"reveal": "Blue"},
            }
        }
    )
    bid_strings = tuple(f"bid {i}" for i in range(max_bid + 1))
    return chart_line, bid_request, reveal_request, bid_strings


_REVEAL_STRINGS = tuple(f"reveal {c}" for c in COLOURS)
BID_ADVICE = "Decide your bid. Loans help when your coins are low and hurt when they are high: you repay the full amount at the end."
REVEAL_ADVICE = (
    "Choose which hand gem to reveal. Revealing changes current prices and tells the others what you held; "
    "every hand gem joins the display at the end anyway."
)


def _hand_cards(counts: Sequence[int]) -> list[str]:
    return [COLOURS[c] for c in range(NUM_COLOURS) for _ in range(counts[c])]


# The pieces below are cached on immutable inputs: a prompt is mostly unchanged from the last one.
@lru_cache(maxsize=4096)
def _display_line(display: tuple[int, ...], chart: tuple[int, ...]) -> str:
    dc = [0] * NUM_COLOURS
    for g in display:
        dc[g] += 1
    return _dumps(
        {
            "value_display": {
                "revealed_gems": [COLOURS[g] for g in display],
                "by_color": [
                    {"color": COLOURS[c], "count": dc[c], "current_value_per_gem": chart[min(dc[c], 5)]}
                    for c in range(NUM_COLOURS)
                ],
            }
        }
    )


@lru_cache(maxsize=8192)
def _player_item(
    p: int,
    is_you: bool,
    coins: int,
    collection: tuple[int, ...],
    hand_size: int,
    loans: int,
    investments: int,
    missions: tuple[str, ...],
) -> str:
    return _dumps(
        {
            "player_id": p,
            "is_you": is_you,
            "coins": coins,
            "collection": _hand_cards(collection),
            "collection_counts": {COLOURS[c]: collection[c] for c in range(NUM_COLOURS) if collection[c]},
            "num_private_hand_cards": hand_size,
            "total_loans": loans,
            "num_investments": investments,
            "completed_missions": list(missions),
        }
    )


def _players_line(game: MegaGem, state: MegaGemState, player: int) -> str:
    table = game.mission_table
    items = [
        _player_item(
            p,
            p == player,
            state.coins[p],
            state.collections[p],
            sum(state.hands[p]),
            sum(state.loans[p]),
            len(state.investments[p]),
            tuple(table[m].id for m in state.claimed[p]),
        )
        for p in game.all_players
    ]
    return '{"players":[' + ",".join(items) + "]}"


@lru_cache(maxsize=256)
def _hand_line(hand: tuple[int, ...]) -> str:
    total = sum(hand)
    return _dumps(
        {
            "your_private_hand": {
                "cards": _hand_cards(hand),
                "counts": {COLOURS[c]: hand[c] for c in range(NUM_COLOURS) if hand[c]},
                "total_cards": total,
                "empty": total == 0,
            }
        }
    )


def _card_json(card_index: int) -> dict[str, str | int]:
    card = AUCTION_CARDS[card_index]
    if card.kind is CardKind.TREASURE:
        return {"id": card.id, "type": "treasure", "gems": card.value}
    if card.kind is CardKind.LOAN:
        return {"id": card.id, "type": "loan", "amount": card.value}
    return {"id": card.id, "type": "investment", "bonus": card.value}


_mission_table = lru_cache(maxsize=4)(build_missions)


@lru_cache(maxsize=4096)
def _missions_line(missions: tuple[int, ...], flex_3_diff_reward: int) -> str:
    table = _mission_table(flex_3_diff_reward)
    return _dumps(
        {
            "available_missions": [
                {
                    "id": table[m].id,
                    "type": table[m].type,
                    "description": table[m].description,
                    "requirement": table[m].requirement_dict(),
                    "reward": table[m].reward,
                }
                for m in missions
            ]
        }
    )


@lru_cache(maxsize=8192)
def _history_item(record: AuctionRecord) -> str:
    return _dumps(
        {
            "round_number": record.round,
            "auction": _card_json(record.card),
            "winner_id": record.winner,
            "winning_bid": record.price,
            "all_bids_by_player_id": {str(p): b for p, b in enumerate(record.bids)},
            "gems_won": [COLOURS[g] for g in record.gems_won],
            "gem_revealed_to_display": None if record.revealed is None else COLOURS[record.revealed],
            "missions_completed": [MISSION_IDS[m] for m in record.missions],
        }
    )


@lru_cache(maxsize=1024)
def _tiebreak_line(tiebreak: tuple[int, ...], player: int) -> str:
    return _dumps(
        {
            "tiebreak_order": {
                "first_has_highest_priority": True,
                "order": [{"player_id": p, "is_you": p == player} for p in tiebreak],
            }
        }
    )


def bid_user_text(game: MegaGem, state: MegaGemState, player: int) -> str:
    """The bid prompt's user text: one compact JSON object per line, then the answer format."""
    chart_line, bid_request, _, _ = _static_lines(game.params.value_chart, game.chart, game.max_bid)
    card = AUCTION_CARDS[state.card]
    limit = game.bid_limit(state, player)
    lines = [
        f'{{"turn_context":{{"round_number":{state.round},"phase":"bidding","your_player_id":{player}}}}}',
        chart_line,
        _display_line(state.display, game.chart),
    ]
    won = sum(sum(c) for c in state.collections)
    if card.kind is CardKind.TREASURE:
        on_sale = [COLOURS[g] for g in state.pool[: card.value]]
        lines.append(_dumps({"revealed_gems_available_for_auction": {"gems": on_sale, "count": len(on_sale)}}))
    lines.append(
        f'{{"game_progress":{{"round_number":{state.round},"typical_total_rounds":"15-20",'
        f'"remaining_auction_cards":{len(state.auction_deck)},"gems_won_in_treasure_auctions_so_far":{won},'
        f'"auctionable_gems_remaining":{len(state.gem_deck) + len(state.pool)},'
        f'"gems_remaining_in_deck_unrevealed":{len(state.gem_deck)},'
        f'"revealed_gems_waiting_for_treasure_auction":{len(state.pool)}}}}}'
    )
    auction: dict[str, Any] = {"id": card.id, "type": card.kind.name.lower(), "max_bid_for_you": limit}
    if card.kind is CardKind.TREASURE:
        auction["bid_limit_reason"] = "your coins"
        auction["gems_count"] = card.value
        auction["gems_available"] = min(card.value, len(state.pool))
    elif card.kind is CardKind.LOAN:
        auction["bid_limit_reason"] = (
            f"your coins plus the {card.value} coins of the loan card {card.id} (repaid in full at the end)"
        )
        auction["loan_amount"] = card.value
    else:
        auction["bid_limit_reason"] = (
            f"your coins only: the investment card {card.id} adds none now (the winning bid is locked "
            f"until the end, then returned with the {card.value}-coin bonus)"
        )
        auction["investment_bonus"] = card.value
    lines.append(_dumps({"current_auction": auction}))
    lines.append(_players_line(game, state, player))
    lines.append(_missions_line(state.missions, game.params.flex_3_diff_reward))
    lines.append(_tiebreak_line(state.tiebreak, player))
    shown = state.history[-HISTORY_SHOWN:]
    lines.append(
        f'{{"auction_history":{{"total_auctions_so_far":{len(state.history)},"showing_last":{HISTORY_SHOWN},'
        f'"num_auctions_shown":{len(shown)},"auctions":[{",".join(_history_item(r) for r in shown)}]}}}}'
    )
    lines.append(_hand_line(state.hands[player]))
    lines.append(BID_ADVICE)
    lines.append(bid_request)
    return "\n\n".join(lines)


def reveal_user_text(game: MegaGem, state: MegaGemState, player: int) -> str:
    """The reveal prompt's user text (the auction winner, before its gems join its collection)."""
    chart_line, _, reveal_request, _ = _static_lines(game.params.value_chart, game.chart, game.max_bid)
    card = AUCTION_CARDS[state.card]
    take = min(card.value, len(state.pool)) if card.kind is CardKind.TREASURE else 0
    lines = [
        f'{{"turn_context":{{"round_number":{state.round},"phase":"gem_reveal","your_player_id":{player}}}}}',
        f"You won the {card.id} auction with a bid of {state.bids[player]}. You must now reveal one gem from your private "
        "hand to the Value Display.",
        _dumps(
            {
                "pending_treasure_win": {
                    "auction": _card_json(state.card),
                    "gems_won": [COLOURS[g] for g in state.pool[:take]],
                    "winning_bid": state.bids[player],
                    "note": "these gems join your collection after your reveal",
                    "public_collections_include_these_gems": False,
                }
            }
        ),
        _players_line(game, state, player),
        chart_line,
        _display_line(state.display, game.chart),
        _hand_line(state.hands[player]),
        REVEAL_ADVICE,
        reveal_request,
    ]
    return "\n\n".join(lines)


# ---------------------------------------------------------------------- answer parsing
_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_PROSE = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bI(?:'ll| will| should| shall|'m going to| am going to)\s+bid\s+\**(\d+)\**",
        r"\bbid(?:ding)?\s+\**(\d+)\**\s+coins?\b",
        r"\bmy\s+bid(?:\s+is)?\s*:?\s*\**(\d+)\**",
        r"\bbid\s+(?:of|=)\s*\**(\d+)\**",
    )
)
PROSE_MAX = 200

# The benchmark's bid phrases (rule book 7.4), as it reads them: no word boundaries, exactly one
# space inside "I'll bid" / "my bid", any spacing (none too) before the amount, at most two
# asterisks around it, "coin(s)" right after the amount with or without a space.
_BENCH_PROSE = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"I(?:'ll| will| should| shall|'m going to) bid\s*\*?\*?(\d+)",
        r"bid(?:ding)?\s*\*?\*?(\d+)\*?\*?\s*coins?",
        r"my bid(?:\s+is)?:?\s*\*?\*?(\d+)",
        r"bid\s*(?:of|=)\s*\*?\*?(\d+)",
    )
)


BRACE_ATTEMPTS = 64  # balanced-object starts tried (bounded work on hostile answers)
BENCH_BRACE_ATTEMPTS = 10_000  # the benchmark tries every start; benchmark mode tries this many


def visible_answer(text: str) -> str:
    """The part of an answer the parser reads: think blocks removed (the core's
    :func:`~arena_core.text.strip_think`; bids are never read from reasoning), then at most
    the last :data:`~arena_core.text.MAX_ANSWER_CHARS` characters."""
    return strip_think(text)[-MAX_ANSWER_CHARS:]


def _benchmark_text(text: str) -> str:
    """What MegagemBench reads: the think tags dropped, their content kept."""
    return text.replace("<think>", "").replace("</think>", "")


def extract_json_object(text: str, *, benchmark: bool = False) -> tuple[dict[str, Any] | None, str]:
    """The answer's JSON object and the method that found it (rule book 7.4 precedence),
    outside think blocks (``benchmark=True``: inside them too, as the benchmark reads)."""
    text = _benchmark_text(text) if benchmark else visible_answer(text)
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
            if isinstance(obj, dict):
                return obj, "strict_json"
        except ValueError:
            pass
    m = _FENCED.search(text)
    if m:
        try:
            obj = json.loads(m.group(1))
            if isinstance(obj, dict):
                return obj, "code_block"
        except ValueError:
            pass
    ends = _matching_braces(text)
    cap = BENCH_BRACE_ATTEMPTS if benchmark else BRACE_ATTEMPTS
    for attempts, start in enumerate(sorted(ends)):
        if attempts >= cap:
            break
        try:
            obj = json.loads(text[start : ends[start] + 1])
            if isinstance(obj, dict):
                return obj, "brace_match"
        except ValueError:
            pass
    return None, "none"


def _matching_braces(text: str) -> dict[int, int]:
    """Every ``{`` that closes, mapped to its matching ``}`` (one linear pass; the same pairs
    as counting depth from each start)."""
    stack: list[int] = []
    ends: dict[int, int] = {}
    for m in re.finditer(r"[{}]", text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            ends[stack.pop()] = m.start()
    return ends


def prose_bids(text: str) -> list[int]:
    """Every bid phrase's amount ("I'll bid 12", "my bid is 9", "bid of 4", ...) in 0..200, in order."""
    found = []
    for pattern in _PROSE:
        for m in pattern.finditer(text):
            value = int(m.group(1))
            if 0 <= value <= PROSE_MAX:
                found.append((m.start(), value))
    return [v for _, v in sorted(found)]


def benchmark_prose_bids(text: str) -> list[int]:
    """Every bid phrase's amount as the benchmark's prose fallback finds them (its looser
    phrases: ``I'll bid12``, ``bid=5``, ``bid 5coins``), in 0..200, in order of position (ties:
    in phrase order)."""
    found = []
    for pattern in _BENCH_PROSE:
        for m in pattern.finditer(text):
            value = int(m.group(1))
            if 0 <= value <= PROSE_MAX:
                found.append((m.start(), value))
    found.sort(key=lambda x: x[0])
    return [v for _, v in found]


def prose_bid(text: str) -> int | None:
    """The rightmost bid phrase's amount (the benchmark's prose fallback)."""
    found = prose_bids(text)
    return found[-1] if found else None


def conflicting_values(text: str, key: str) -> list[Any]:
    """The distinct values of ``key`` over every JSON object in the visible answer (fenced or
    inline, nested ones included): more than one means the answer contradicts itself."""
    visible = visible_answer(text)
    ends = _matching_braces(visible)
    seen: dict[str, Any] = {}
    for attempts, start in enumerate(sorted(ends)):
        if attempts >= 4 * BRACE_ATTEMPTS:
            break
        try:
            obj = json.loads(visible[start : ends[start] + 1])
        except ValueError:
            continue
        if isinstance(obj, dict) and key in obj:
            seen.setdefault(json.dumps(obj[key], sort_keys=True), obj[key])
    return list(seen.values())


_BID_VALUE = re.compile(r"(?:bid\s*)?(-?\d+)", re.IGNORECASE)


def bid_key(raw: str) -> int | None:
    """The amount an answer value names (``5``, ``bid 5``, ``[bid 5]``, ``**5**``), or None."""
    m = _BID_VALUE.fullmatch(unwrap_answer(raw))
    return int(m.group(1)) if m else None


def _prose_carriers(visible: str) -> list[tuple[str, str]]:
    return [("prose_fallback", str(v)) for v in prose_bids(visible)]


def parse_bid(game: MegaGem, state: MegaGemState, player: int, text: str, *, benchmark: bool = False) -> ParseResult:
    """A bid by the answer contract (docs/answers.md; ``benchmark=True``: rule book 7.4 as the
    benchmark reads it). JSON ``{"bid": <integer>}``, ``Answer: 5``, a last line ``bid 5`` or
    ``5``, ``[bid 5]`` and the bid phrases ("I'll bid 5", "my bid is 5") are read; a boolean,
    decimal or string bid, or two different bids anywhere in the answer, are refused."""
    default = game.bid_actions[0]
    if not isinstance(text, str):
        return ParseResult(default, "none", False, False, True, f"not text: {type(text).__name__}")
    if benchmark:
        return _parse_bid_benchmark(game, state, player, text)
    reading = read_answer(text, bid_key, json_keys=("bid",), json_kind="integer", extra=(_prose_carriers,))
    if reading.key is None:
        return ParseResult(default, "unparseable", False, False, True, f"{reading.detail}; bid 0 applied")
    method = extract_json_object(text)[1] if reading.method == "json" else reading.method
    return _apply_bid(game, state, player, int(reading.key), method)


def _parse_bid_benchmark(game: MegaGem, state: MegaGemState, player: int, text: str) -> ParseResult:
    default = game.bid_actions[0]
    obj, method = extract_json_object(text, benchmark=True)
    if obj is None:
        bids = benchmark_prose_bids(text)
        if not bids:
            return ParseResult(default, "none", False, False, True, "no JSON object and no bid phrase; bid 0 applied")
        return _apply_bid(game, state, player, bids[-1], "prose_fallback")
    if "bid" not in obj:
        return ParseResult(default, method, False, False, True, f"no 'bid' key in {sorted(obj)}; bid 0 applied")
    value = obj["bid"]
    if not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
        return ParseResult(default, method, False, False, True, f"bid {value!r} is not a number; bid 0 applied")
    return _apply_bid(game, state, player, int(value), method)  # the benchmark truncates; JSON true is 1


def _apply_bid(game: MegaGem, state: MegaGemState, player: int, amount: int, method: str) -> ParseResult:
    bid, legal = game.coerce_bid(state, player, amount)
    if legal:
        return ParseResult(bid, method, True, True, False)
    limit = game.bid_limit(state, player)
    if game.params.illegal_bid == "clamp":
        return ParseResult(
            bid, method, True, False, False, f"bid {amount} is outside 0..{limit}; clamped to {bid.amount}"
        )
    return ParseResult(bid, method, True, False, True, f"bid {amount} is outside 0..{limit}; bid 0 applied")


def parse_reveal(game: MegaGem, state: MegaGemState, player: int, text: str, *, benchmark: bool = False) -> ParseResult:
    hand = state.hands[player]
    default = game.reveal_actions[next(c for c in ALPHABETICAL if hand[c])]
    if not isinstance(text, str):
        return ParseResult(default, "none", False, False, True, f"not text: {type(text).__name__}")
    if not benchmark:
        values = conflicting_values(text, "reveal")
        if len({str(v).strip().title() for v in values}) > 1:
            return ParseResult(
                default,
                "unparseable",
                False,
                False,
                True,
                f"the answer names different colours ({', '.join(map(str, values))}); revealed {COLOURS[default.colour]}",
            )
    obj, method = extract_json_object(text, benchmark=benchmark)
    if obj is None:
        return ParseResult(default, "none", False, False, True, f"no JSON object; revealed {COLOURS[default.colour]}")
    value = obj.get("reveal")
    if not isinstance(value, str):
        return ParseResult(
            default,
            method,
            False,
            False,
            True,
            f"'reveal' must be a colour string, got {value!r}; revealed {COLOURS[default.colour]}",
        )
    name = value.strip().title()
    if name not in COLOURS:
        return ParseResult(
            default, method, False, False, True, f"{value!r} is not a colour; revealed {COLOURS[default.colour]}"
        )
    colour = COLOURS.index(name)
    if not hand[colour]:
        return ParseResult(
            default, method, True, False, True, f"no {name} in your hand; revealed {COLOURS[default.colour]}"
        )
    return ParseResult(game.reveal_actions[colour], method, True, True, False)


@dataclass(frozen=True)
class MegaGemTextView:
    """The MegagemBench-style prompt and parser (see the module docstring); ``benchmark=True``
    is the opt-in benchmark-compatible reading."""

    benchmark: bool = False

    def prompt(self, game: MegaGem, pos: Position[MegaGemState], player: int) -> Prompt:
        state = pos.state
        system = rules_text(game)
        if state.phase is Phase.REVEAL:
            legal = tuple(_REVEAL_STRINGS[a.colour] for a in game.legal_actions(state, player) if isinstance(a, Reveal))
            return Prompt(system, reveal_user_text(game, state, player), legal)
        if state.phase is Phase.BID:
            bid_strings = _static_lines(game.params.value_chart, game.chart, game.max_bid)[3]
            return Prompt(system, bid_user_text(game, state, player), bid_strings[: game.bid_limit(state, player) + 1])
        return Prompt(system, "The game is over.", ())

    def parse(self, game: MegaGem, pos: Position[MegaGemState], player: int, text: str) -> ParseResult:
        state = pos.state
        if isinstance(text, str) and not self.benchmark:  # exactly one of the listed legal strings
            key = " ".join(text.split()).lower()
            for action in game.legal_actions(state, player):
                if key == game.action_to_str(action).lower():
                    return ParseResult(action, "exact", True, True, False)
        if state.phase is Phase.REVEAL and player == state.winner:
            return parse_reveal(game, state, player, text, benchmark=self.benchmark)
        if state.phase is Phase.BID:
            return parse_bid(game, state, player, text, benchmark=self.benchmark)
        return ParseResult(None, "none", False, False, True, f"player {player} has no decision now")


__all__ = [
    "MegaGemTextView",
    "bid_user_text",
    "conflicting_values",
    "extract_json_object",
    "parse_bid",
    "parse_reveal",
    "prose_bid",
    "prose_bids",
    "reveal_user_text",
    "rules_text",
]
