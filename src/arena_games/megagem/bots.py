"""MegaGem bots. Each reads only its Decision (its own observation), is seeded, and is
deterministic for a seed.

One file (over 500 lines) because the bots share one valuation (lot values, covering prices, price beliefs) and differ only in how they bid from it.

- :class:`HeuristicBidder`: MegagemBench's Phase-3 opponent, a fixed fraction of the bid limit on Treasure.
- :class:`FairValueBidder`: current chart value of the lot, shaded by 0.8.
- :class:`MarketAnchoredBidder`: median recent winning price of same-size lots.
- :class:`ExpertBidder`: the analytic expert (expected final values, exact mission bonus, a fitted
  opponent price law, exact tiebreak win probabilities, surplus with a liquidity premium).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import median
from typing import Any, Literal, NamedTuple, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena_core.errors import PlayerOptionsError
from arena_core.players import BasePlayer, Decision

from . import market
from .cards import ALPHABETICAL, COLOURS, GEMS_PER_COLOUR, NUM_COLOURS, build_missions
from .rules import Action, Bid, Reveal

_COLOUR_INDEX = {name: i for i, name in enumerate(COLOURS)}
_MISSIONS = {m.id: m for m in build_missions(5)}


# ---------------------------------------------------------------------- shared helpers
def _counts(d: dict[str, int]) -> list[int]:
    return [d[c] for c in COLOURS]


def lot_colours(obs: dict[str, Any]) -> list[int]:
    """Colours of the gems on sale in this Treasure round (empty for Loans and Investments)."""
    card = obs["current_card"]
    if card is None or card["type"] != "treasure":
        return []
    return [_COLOUR_INDEX[g] for g in obs["pool"][: card["gems"]]]


def chart_value(chart: list[int], count: int) -> int:
    return chart[min(count, 5)]


def default_reveal(decision: Decision) -> Reveal:
    """The alphabetically first colour in hand (the benchmark's default)."""
    legal: dict[int, Reveal] = {a.colour: a for a in decision.legal_actions}
    return legal[next(c for c in ALPHABETICAL if c in legal)]


def bid(decision: Decision, amount: float) -> Bid:
    """The legal bid nearest to ``amount`` (rounded, clamped to 0..limit)."""
    legal = _legal_bids(decision)
    return legal[max(0, min(int(round(amount)), len(legal) - 1))]


def _legal_bids(decision: Decision) -> tuple[Bid, ...]:
    """The legal bids 0..limit of a bid decision."""
    legal: tuple[Bid, ...] = decision.legal_actions
    return legal


class _MegaGemBot(BasePlayer):
    """Dispatch: ``bid_amount(decision)`` in bid phases, ``reveal(decision)`` at reveals."""

    def act(self, decision: Decision) -> Action:
        if decision.observation["phase"] == "reveal":
            return self.reveal(decision)
        return self.choose_bid(decision)

    def choose_bid(self, decision: Decision) -> Bid:  # pragma: no cover - abstract
        raise NotImplementedError

    def reveal(self, decision: Decision) -> Reveal:
        return default_reveal(decision)


# ---------------------------------------------------------------------- simple bidders
class HeuristicBidder(_MegaGemBot):
    """MegaGem's simple baseline: a fixed fraction of the bid limit on treasures, nothing on the rest.

    Treasure: floor(fraction x bid limit) plus a seeded offset in [-noise, noise]; Loans and
    Investments: 0; reveal: alphabetically first colour (MegagemBench's heuristic-v1)."""

    name = "megagem_heuristic"

    def __init__(self, seed: int = 0, fraction: float = 0.5, noise: int = 0):
        super().__init__(seed)
        if not 0.0 <= fraction <= 1.0:
            raise ValueError(f"fraction must lie in [0, 1], got {fraction}")
        if noise < 0:
            raise ValueError(f"noise must be >= 0, got {noise}")
        self.fraction, self.noise = float(fraction), int(noise)

    def choose_bid(self, decision: Decision) -> Bid:
        obs = decision.observation
        if obs["current_card"]["type"] != "treasure":
            return _legal_bids(decision)[0]
        amount = math.floor(self.fraction * obs["bid_limit"])
        if self.noise:
            amount += int(decision.rng("heuristic", self.seed).integers(-self.noise, self.noise + 1))
        return bid(decision, amount)


class FairValueBidder(_MegaGemBot):
    """Bids a shaded share of a treasure lot's value on the chart today; nothing on the rest.

    Treasure: sum over the lot of chart(display count [+ own hand count]) x shade, rounded and
    clamped; otherwise 0; reveal: alphabetical default."""

    name = "megagem_fair_value"

    def __init__(self, seed: int = 0, shade: float = 0.8, count_own_hand: bool = False):
        super().__init__(seed)
        self.shade, self.count_own_hand = float(shade), bool(count_own_hand)

    def choose_bid(self, decision: Decision) -> Bid:
        obs = decision.observation
        lot = lot_colours(obs)
        if not lot:
            return _legal_bids(decision)[0]
        chart = obs["value_chart"]["values"]
        dc = _counts(obs["display_counts"])
        hand = _counts(obs["hand"]) if self.count_own_hand else [0] * NUM_COLOURS
        value = sum(chart_value(chart, dc[g] + hand[g]) for g in lot)
        return bid(decision, value * self.shade)


class MarketAnchoredBidder(_MegaGemBot):
    """Bids what similar treasure lots recently sold for; nothing on the rest.

    Treasure: the median winning bid of same-size Treasure lots among the last five auctions
    (x anchor), else a quarter of its coins; +1 when last in the tiebreak order; otherwise 0."""

    name = "megagem_market"

    def __init__(self, seed: int = 0, anchor: float = 1.0, fallback_fraction: float = 0.25):
        super().__init__(seed)
        self.anchor, self.fallback_fraction = float(anchor), float(fallback_fraction)

    def choose_bid(self, decision: Decision) -> Bid:
        obs = decision.observation
        card = obs["current_card"]
        if card["type"] != "treasure":
            return _legal_bids(decision)[0]
        me = obs["player"]
        prices = [h["price"] for h in obs["history"][-5:] if h["card"] == card["id"]]
        amount = median(prices) * self.anchor if prices else self.fallback_fraction * obs["players"][me]["coins"]
        if obs["tiebreak"][-1] == me:
            amount += 1
        return bid(decision, amount)


# ---------------------------------------------------------------------- the analytic expert
@lru_cache(maxsize=4096)
def _hypergeom(total: int, good: int, draws: int) -> tuple[float, ...]:
    """P(X = x) for x = 0..draws: ``good`` marked among ``total``, ``draws`` drawn without replacement."""
    if total <= 0 or draws <= 0:
        return (1.0,)
    denom = math.comb(total, draws)
    return tuple(math.comb(good, x) * math.comb(total - good, draws - x) / denom for x in range(draws + 1))


def expected_final_values(obs: dict[str, Any]) -> list[float]:
    """Expected final per-gem value of each colour, given what this seat sees.

    Every hand gem ends in the display, so the final count of colour c is the display count plus
    this seat's hand count plus the opponents' hand count, which is hypergeometric over the gems
    this seat has not seen (opponents' hands and the undealt deck).
    """
    me = obs["player"]
    chart = obs["value_chart"]["values"]
    dc = _counts(obs["display_counts"])
    hand = _counts(obs["hand"])
    unknown = [GEMS_PER_COLOUR - dc[c] - hand[c] for c in range(NUM_COLOURS)]
    for pl in obs["players"]:
        coll = pl["collection"]
        for c, name in enumerate(COLOURS):
            unknown[c] -= coll[name]
    for g in obs["pool"]:
        unknown[_COLOUR_INDEX[g]] -= 1
    opp_hand = sum(pl["hand_size"] for p, pl in enumerate(obs["players"]) if p != me)
    total = sum(unknown)
    out = []
    for c in range(NUM_COLOURS):
        base = dc[c] + hand[c]
        probs = _hypergeom(total, max(0, unknown[c]), min(opp_hand, total))
        out.append(sum(p * chart[min(base + x, 5)] for x, p in enumerate(probs)))
    return out


def mission_bonus(obs: dict[str, Any], collection: list[int], lot: list[int]) -> int:
    """Rewards of the available missions the collection would complete with the lot (exact)."""
    after = list(collection)
    for g in lot:
        after[g] += 1
    total = 0
    for m in obs["missions"]:
        mission = _MISSIONS[m["id"]]
        if mission.satisfied_by(after) and not mission.satisfied_by(collection):
            total += m["reward"]
    return total


def _coins_before_each_auction(obs: dict[str, Any]) -> list[list[int]]:
    """Every player's coins before each settled auction, rebuilt backwards from the current coins."""
    coins = [pl["coins"] for pl in obs["players"]]
    out: list[list[int]] = []
    for h in reversed(obs["history"]):
        w, price, card = h["winner"], h["price"], h["card"]
        if card.startswith("loan"):
            coins[w] -= int(card.split("_")[1]) - price
        else:
            coins[w] += price
        out.append(list(coins))
    out.reverse()
    return out


def _display_before_each_auction(obs: dict[str, Any]) -> list[list[int]]:
    dc = _counts(obs["display_counts"])
    out: list[list[int]] = []
    for h in reversed(obs["history"]):
        if h["revealed"] is not None:
            dc[_COLOUR_INDEX[h["revealed"]]] -= 1
        out.append(list(dc))
    out.reverse()
    return out


class PriceLaw:
    """An opponent's bid distribution on the current card, fitted from its past bids.

    Three hypotheses explain each past bid: a price per gem (``raw``), a fraction of the bidder's
    coins (``budget``), and a multiple of the lot's current public chart value (``value``). Each is
    scored by how well it would have predicted the opponent's later bids (online absolute error)
    and the predictions for the current card are mixed with weights exp(-error / 3), plus a small
    prior mass on 0, the shaded public value and half the opponent's limit.
    """

    PRIOR_WEIGHT = 0.1
    RECENT = 8

    def __init__(self, support: dict[int, float]):
        self.support = support  # bid -> probability

    @classmethod
    def fit(
        cls,
        observations: list[tuple[float, float, float, float]],
        now: tuple[float, float, float],
        limit: int,
        prior: list[float],
    ) -> PriceLaw:
        """``observations``: (bid, units, coins, public value) of past same-kind auctions, oldest first;
        ``now``: (units, coins, public value) for the current card; bids are capped at ``limit``."""
        weights: dict[int, float] = {}

        def add(value: float, w: float) -> None:
            b = max(0, min(limit, int(round(value))))
            weights[b] = weights.get(b, 0.0) + w

        obs = observations[-cls.RECENT :]
        if obs:
            units, coins, value = now
            ratios = {
                "raw": [b / max(u, 1e-9) for b, u, _, _ in obs],
                "budget": [b / max(c, 1.0) for b, _, c, _ in obs],
                "value": [b / max(v, 1.0) for b, _, _, v in obs],
            }
            scale = {"raw": units, "budget": coins, "value": max(value, 1.0)}
            errors = {}
            for h, rs in ratios.items():
                err, n = 0.0, 0
                for k in range(1, len(obs)):
                    b, u, c, v = obs[k]
                    pred = median(rs[:k]) * (u if h == "raw" else c if h == "budget" else max(v, 1.0))
                    err += abs(pred - b)
                    n += 1
                errors[h] = err / n if n else 0.0
            raw_w = {h: math.exp(-e / 3.0) for h, e in errors.items()}
            z = sum(raw_w.values())
            for h, rs in ratios.items():
                wh = (1.0 - cls.PRIOR_WEIGHT) * raw_w[h] / z / len(rs)
                for r in rs:
                    add(r * scale[h], wh)
            prior_w = cls.PRIOR_WEIGHT
        else:
            prior_w = 1.0
        for p in prior:
            add(p, prior_w / len(prior))
        return cls(weights)

    def below_and_at(self, b: int) -> tuple[float, float]:
        lo = sum(w for x, w in self.support.items() if x < b)
        return lo, self.support.get(b, 0.0)


Schedule = Literal["fading", "constant"]
LoanRule = Literal["shortfall", "liquidity"]
Prior = Literal["simple", "learned", "cold"]


class ExpertSettings(BaseModel):
    """The expert's knobs (``megagem_expert{liquidity = 0.5, schedule = "constant", ...}``). The
    defaults (delta 0, gate 1, loan rule liquidity) beat the earlier expert (delta 2, gate 0, loan
    rule shortfall: ``LEGACY``) on fresh deals; docs/benchmarks.md has the tuning and confirmation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    liquidity: float = Field(0.5, ge=0.0, description="lambda: the liquidity premium on every coin paid")
    schedule: Schedule = Field(
        "fading",
        description="fading: lambda x (gems left after this lot / gems at the start); constant: lambda throughout",
    )
    offset: float = Field(0.0, description="delta: subtracted from the lot's expected value (calibration)")
    gate: float = Field(
        1.0,
        ge=0.0,
        description="move off the fair-value base bid only when the expected gain "
        "is at least this many coins more (0: always the best bid)",
    )
    loan_rule: LoanRule = Field(
        "liquidity",
        description="shortfall: a loan is worth lambda_t x the part covering this seat's budget shortfall; "
        "liquidity: lambda_t x its whole amount",
    )
    prior: Prior = Field(
        "simple",
        description="the opponent model before any bid history and mixed into the fitted law: simple "
        "(a third each on 0, 0.8 x public value, half the limit), learned (the market model, "
        "arena_games.megagem.market), or cold (the learned model only while an opponent has no bid "
        "history on this kind of card, simple after)",
    )


class ExpertOptions(TypedDict):
    """:class:`ExpertBidder`'s keyword options (the fields of :class:`ExpertSettings`)."""

    liquidity: float
    schedule: Schedule
    offset: float
    gate: float
    loan_rule: LoanRule
    prior: Prior


#: the expert as shipped before its knobs were tuned (golden transcripts and old results use it)
LEGACY: ExpertOptions = {
    "liquidity": 0.5,
    "schedule": "fading",
    "offset": 2.0,
    "gate": 0.0,
    "loan_rule": "shortfall",
    "prior": "simple",
}


class BidAnalysis(NamedTuple):
    """What :meth:`ExpertBidder.analyse_bid` weighs: its bid, the best bid before the gate, the
    lot's value, the liquidity premium, the win probability and expected gain of every bid."""

    bid: int
    best: int
    limit: int
    value: float
    liquidity: float
    win_probability: list[float]
    gain: list[float]


class ExpertBidder(_MegaGemBot):
    """The analytic expert: the profit-maximising bid against a fitted model of the others' bids.

    Bid b* maximising (V - (1 + lambda_t) b) P(win | b), where V is the lot's expected final value
    given what this seat can see plus the exact mission bonus, minus the calibration offset delta;
    P(win | b) multiplies, over opponents, the fitted price law's probability of bidding below b
    (or equal to b when this seat is ahead in the tiebreak queue) with bids capped by budgets; and
    lambda_t = lambda x (auctionable gems left after this lot / auctionable gems at the start)
    is the liquidity premium on every coin paid, fading as the auction runs out (or constant:
    ``schedule``). Loans are worth lambda_t x their amount (``loan_rule = "shortfall"``: only the
    part covering this seat's budget shortfall); investments their bonus minus lambda_t per coin
    locked. With ``gate`` > 0 the bid stays at the fair-value base bid unless b* gains at least
    ``gate`` coins more. Reveals: the colour whose reveal raises the public price of gems this
    seat may still want to buy the least. Knobs and defaults: :class:`ExpertSettings`.
    """

    name = "megagem_expert"

    def __init__(
        self,
        seed: int = 0,
        liquidity: float = 0.5,
        offset: float = 0.0,
        schedule: Schedule = "fading",
        gate: float = 1.0,
        loan_rule: LoanRule = "liquidity",
        prior: Prior = "simple",
    ):
        super().__init__(seed)
        try:
            self.settings = ExpertSettings(
                liquidity=liquidity, offset=offset, schedule=schedule, gate=gate, loan_rule=loan_rule, prior=prior
            )
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: {e['msg']}" for e in exc.errors())
            raise PlayerOptionsError(
                f"invalid megagem_expert options: {problems}; known options: {', '.join(ExpertSettings.model_fields)}"
            ) from None
        self.liquidity, self.offset = self.settings.liquidity, self.settings.offset

    # -- values
    def _liquidity_now(self, obs: dict[str, Any]) -> float:
        if self.settings.schedule == "constant":
            return self.liquidity
        left: int = obs["gem_deck_size"] + len(obs["pool"]) - len(lot_colours(obs))
        start: int = GEMS_PER_COLOUR * NUM_COLOURS - obs["num_players"] * _hand_size(obs)
        return self.liquidity * max(0.0, left) / max(1, start)

    def _budget_need(self, obs: dict[str, Any], values: list[float]) -> float:
        """Coins this seat would like for the rest of the game: half its share of the value on sale."""
        remaining: int = obs["gem_deck_size"] + len(obs["pool"])
        players: int = obs["num_players"]
        mean_value = sum(values) / NUM_COLOURS
        return 0.5 * remaining * mean_value / players

    # -- the opponent model
    def _price_laws(self, obs: dict[str, Any], values: list[float]) -> dict[int, PriceLaw]:
        me = obs["player"]
        card = obs["current_card"]
        kind = card["type"]
        chart = obs["value_chart"]["values"]
        coins_then = _coins_before_each_auction(obs)
        display_then = _display_before_each_auction(obs)
        lot = lot_colours(obs)
        dc_now = _counts(obs["display_counts"])
        public_now = sum(chart_value(chart, dc_now[g]) for g in lot)
        units_now = float(card.get("gems", card.get("amount", card.get("bonus", 1))))
        laws = {}
        for j, pl in enumerate(obs["players"]):
            if j == me:
                continue
            limit = pl["coins"] + (card["amount"] if kind == "loan" else 0)
            past = []
            for k, h in enumerate(obs["history"]):
                if not h["card"].startswith(kind):
                    continue
                if kind == "treasure":
                    gems = [_COLOUR_INDEX[g] for g in h["gems_won"]]
                    units = float(len(gems) or 1)
                    value = float(sum(chart_value(chart, display_then[k][g]) for g in gems))
                else:
                    units = float(h["card"].split("_")[1])
                    value = units
                past.append((float(h["bids"][j]), units, float(coins_then[k][j]), value))
            if self.settings.prior == "learned" or (self.settings.prior == "cold" and not past):
                prior = market.load().bids(
                    kind, market.features(obs, j, public_now if kind == "treasure" else 0.0), limit
                )
            elif kind == "treasure":
                prior = [0.0, 0.8 * public_now, 0.5 * limit]
            else:
                prior = [0.0, 1.0, 2.0]
            laws[j] = PriceLaw.fit(
                past, (units_now, float(pl["coins"]), public_now if kind == "treasure" else units_now), limit, prior
            )
        return laws

    def win_probabilities(self, obs: dict[str, Any], laws: dict[int, PriceLaw], limit: int) -> list[float]:
        """P(win | b) for b = 0..limit, with exact tiebreak handling."""
        me = obs["player"]
        order = obs["tiebreak"]
        ahead_of = {j: order.index(me) < order.index(j) for j in laws}
        cdfs = {}
        for j, law in laws.items():
            pts = sorted(law.support.items())
            cdfs[j] = pts
        out = []
        for b in range(limit + 1):
            p = 1.0
            for j, pts in cdfs.items():
                lo = eq = 0.0
                for x, w in pts:
                    if x < b:
                        lo += w
                    elif x == b:
                        eq = w
                        break
                    else:
                        break
                p *= lo + (eq if ahead_of[j] else 0.0)
            out.append(p)
        return out

    def lot_value(self, obs: dict[str, Any], values: list[float] | None = None) -> float:
        """Expected final value of the lot plus the exact mission bonus, minus the offset."""
        values = expected_final_values(obs) if values is None else values
        lot = lot_colours(obs)
        me = obs["player"]
        coll = _counts(obs["players"][me]["collection"])
        return sum(values[g] for g in lot) + mission_bonus(obs, coll, lot) - self.offset

    def analyse_bid(self, obs: dict[str, Any]) -> BidAnalysis:
        """The expert's bid and the inputs it weighs, from the seat's observation alone."""
        limit = obs["bid_limit"]
        card = obs["current_card"]
        me = obs["player"]
        values = expected_final_values(obs)
        lam = self._liquidity_now(obs)
        coins = obs["players"][me]["coins"]
        laws = self._price_laws(obs, values)
        pwin = self.win_probabilities(obs, laws, limit)
        if card["type"] == "treasure":
            v = self.lot_value(obs, values)
            gain = [(v - (1.0 + lam) * b) * pwin[b] for b in range(limit + 1)]
        elif card["type"] == "loan":
            if self.settings.loan_rule == "liquidity":
                v = lam * card["amount"]
            else:
                shortfall = max(0.0, self._budget_need(obs, values) - coins)
                v = lam * min(card["amount"], shortfall)
            gain = [(v - b) * pwin[b] for b in range(limit + 1)]
        else:
            v = float(card["bonus"])
            gain = [(v - lam * b) * pwin[b] for b in range(limit + 1)]
        best = max(range(limit + 1), key=lambda b: (gain[b], -b))
        chosen = best
        if self.settings.gate > 0:
            base = self._base_bid(obs, limit)
            if gain[best] - gain[base] < self.settings.gate:
                chosen = base
        return BidAnalysis(chosen, best, limit, v, lam, list(pwin), gain)

    def choose_bid(self, decision: Decision) -> Bid:
        return _legal_bids(decision)[self.analyse_bid(decision.observation).bid]

    @staticmethod
    def _base_bid(obs: dict[str, Any], limit: int) -> int:
        """The gate's base policy: the fair-value bid (0.8 x the lot's public chart value; 0 off Treasure)."""
        lot = lot_colours(obs)
        if not lot:
            return 0
        chart = obs["value_chart"]["values"]
        dc = _counts(obs["display_counts"])
        return max(0, min(limit, int(round(0.8 * sum(chart_value(chart, dc[g]) for g in lot)))))

    def reveal(self, decision: Decision) -> Reveal:
        obs = decision.observation
        chart = obs["value_chart"]["values"]
        dc = _counts(obs["display_counts"])
        me = obs["player"]
        coll = _counts(obs["players"][me]["collection"])
        hand = _counts(obs["hand"])
        # gems of each colour still to be auctioned: the face-up pool (less the lot I am taking)
        # plus the undealt deck's expected share of the gems I have not seen
        unseen = [
            GEMS_PER_COLOUR - dc[c] - hand[c] - sum(pl["collection"][COLOURS[c]] for pl in obs["players"])
            for c in range(NUM_COLOURS)
        ]
        supply = [0.0] * NUM_COLOURS
        for g in obs["pool"]:
            unseen[_COLOUR_INDEX[g]] -= 1
            supply[_COLOUR_INDEX[g]] += 1
        for g in obs["pending_win"]["gems"]:
            supply[_COLOUR_INDEX[g]] -= 1
            coll[_COLOUR_INDEX[g]] += 1
        deck = obs["gem_deck_size"]
        opp_hands = sum(pl["hand_size"] for p, pl in enumerate(obs["players"]) if p != me)
        share = deck / max(1, deck + opp_hands)
        for c in range(NUM_COLOURS):
            supply[c] += max(0, unseen[c]) * share
        options: dict[int, Reveal] = {a.colour: a for a in decision.legal_actions}

        def cost(c: int) -> tuple[float, int, int]:
            signal = chart_value(chart, dc[c] + 1) - chart_value(chart, dc[c])  # the public price change
            return (signal * supply[c] * (1.0 + coll[c]), -hand[c], ALPHABETICAL.index(c))

        return options[min(options, key=cost)]


def _hand_size(obs: dict[str, Any]) -> int:
    return {3: 5, 4: 4, 5: 3}[obs["num_players"]]


BOTS: dict[str, type[BasePlayer]] = {
    cls.name: cls for cls in (HeuristicBidder, FairValueBidder, MarketAnchoredBidder, ExpertBidder)
}
__all__ = [
    "BOTS",
    "LEGACY",
    "ExpertBidder",
    "ExpertOptions",
    "ExpertSettings",
    "FairValueBidder",
    "HeuristicBidder",
    "MarketAnchoredBidder",
    "PriceLaw",
    "expected_final_values",
    "mission_bonus",
]
