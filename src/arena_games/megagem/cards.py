"""MegaGem card data: colours, the auction deck, the five value charts and the 30 missions.

Everything here is plain data (tuples), following rule book sections 1-3; the rules module
builds its lookup tables from it once per game.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

#: Gem colours in the engine's enum order (r < b < g < p < y).
COLOURS: tuple[str, ...] = ("Red", "Blue", "Green", "Purple", "Yellow")
NUM_COLOURS = 5
GEMS_PER_COLOUR = 6
#: Colour indices sorted by name: the order of the default reveal (Blue < Green < Purple < Red < Yellow).
ALPHABETICAL: tuple[int, ...] = tuple(sorted(range(NUM_COLOURS), key=lambda c: COLOURS[c]))
LETTERS = "rbgpy"


class CardKind(IntEnum):
    TREASURE = 0
    LOAN = 1
    INVESTMENT = 2


@dataclass(frozen=True, slots=True)
class AuctionCard:
    """One auction card type: its kind and its number (gems, loan amount or investment bonus)."""

    id: str
    kind: CardKind
    value: int
    count: int  # copies in the 25-card deck


#: The six card types, indexed by the card number stored in states.
AUCTION_CARDS: tuple[AuctionCard, ...] = (
    AuctionCard("treasure_1", CardKind.TREASURE, 1, 12),
    AuctionCard("treasure_2", CardKind.TREASURE, 2, 5),
    AuctionCard("loan_10", CardKind.LOAN, 10, 2),
    AuctionCard("loan_20", CardKind.LOAN, 20, 2),
    AuctionCard("investment_5", CardKind.INVESTMENT, 5, 2),
    AuctionCard("investment_10", CardKind.INVESTMENT, 10, 2),
)
#: The deck in canonical (pre-shuffle) order: 12 x T1, 5 x T2, 2 x L10, 2 x L20, 2 x I5, 2 x I10.
AUCTION_DECK: tuple[int, ...] = tuple(i for i, card in enumerate(AUCTION_CARDS) for _ in range(card.count))
TOTAL_LOANS = sum(c.value * c.count for c in AUCTION_CARDS if c.kind is CardKind.LOAN)  # 60

#: Per-gem value by number of that colour in the display (rows 0..5; counts above 5 use row 5).
VALUE_CHARTS: dict[str, tuple[int, ...]] = {
    "A": (0, 4, 8, 12, 16, 20),
    "B": (20, 16, 12, 8, 4, 0),
    "C": (0, 2, 5, 9, 14, 20),
    "D": (20, 18, 15, 11, 6, 0),
    "E": (0, 4, 10, 18, 6, 0),
}
CHART_DESCRIPTIONS: dict[str, str] = {
    "A": "linear rising",
    "B": "inverse linear",
    "C": "convex",
    "D": "inverse, decaying faster",
    "E": "threshold peaking at 3",
}

#: Starting coins and hand size by player count (rule book section 1).
DEAL: dict[int, tuple[int, int]] = {3: (35, 5), 4: (25, 4), 5: (20, 3)}


class Requirement(IntEnum):
    ANY_DIFFERENT = 0  # at least `count` distinct colours
    ANY_SAME = 1  # some colour with at least `count`
    PAIRS = 2  # at least `count` distinct colours with two or more each
    SPECIFIC = 3  # at least one of each of `colours`
    SAME_COLOUR = 4  # at least `count` of `colours[0]`


@dataclass(frozen=True, slots=True)
class Mission:
    id: str
    type: str
    description: str
    requirement: Requirement
    count: int
    colours: tuple[int, ...]
    reward: int

    def satisfied_by(self, counts: tuple[int, ...] | list[int]) -> bool:
        """Whether a collection (counts per colour) meets the requirement."""
        req = self.requirement
        if req is Requirement.SPECIFIC:
            return all(counts[c] >= 1 for c in self.colours)
        if req is Requirement.SAME_COLOUR:
            return counts[self.colours[0]] >= self.count
        if req is Requirement.ANY_DIFFERENT:
            return sum(1 for n in counts if n >= 1) >= self.count
        if req is Requirement.ANY_SAME:
            return max(counts) >= self.count
        return sum(1 for n in counts if n >= 2) >= self.count  # PAIRS

    def requirement_dict(self) -> dict[str, str | int | list[str]]:
        """The requirement in the benchmark's JSON shape."""
        name = ("any_different", "any_same", "pairs", "specific", "same_color")[self.requirement]
        out: dict[str, str | int | list[str]] = {"type": name}
        if self.requirement is Requirement.SPECIFIC:
            out["colors"] = [COLOURS[c] for c in self.colours]
        elif self.requirement is Requirement.SAME_COLOUR:
            out["color"] = COLOURS[self.colours[0]]
            out["count"] = self.count
        else:
            out["count"] = self.count
        return out


def _specific(letters: str, reward: int) -> Mission:
    cols = tuple(LETTERS.index(ch) for ch in letters)
    return Mission(
        f"specific_{len(letters)}_{letters}",
        f"specific_{len(letters)}",
        "Collect " + " + ".join(COLOURS[c] for c in cols),
        Requirement.SPECIFIC,
        len(cols),
        cols,
        reward,
    )


def build_missions(flex_3_diff_reward: int = 5) -> tuple[Mission, ...]:
    """The 30 missions in canonical (pre-shuffle) order; ``flex_3_diff``'s reward is a game option."""
    flex = (
        Mission(
            "flex_3_diff",
            "flexible",
            "Collect 3 different colours",
            Requirement.ANY_DIFFERENT,
            3,
            (),
            flex_3_diff_reward,
        ),
        Mission("flex_2_same", "flexible", "Collect 2 gems of the same colour", Requirement.ANY_SAME, 2, (), 5),
        Mission("flex_3_same", "flexible", "Collect 3 gems of the same colour", Requirement.ANY_SAME, 3, (), 10),
        Mission("flex_4_diff", "flexible", "Collect 4 different colours", Requirement.ANY_DIFFERENT, 4, (), 10),
        Mission("flex_2_pairs", "flexible", "Collect 2 pairs of gems", Requirement.PAIRS, 2, (), 15),
    )
    specific_3 = tuple(_specific(s, 10) for s in ("rbg", "rbp", "rby", "rgp", "rgy", "rpy", "bgp", "bgy", "bpy", "gpy"))
    specific_2 = tuple(_specific(s, 5) for s in ("rb", "rg", "rp", "ry", "bg", "bp", "by", "gp", "gy", "py"))
    same_2 = tuple(
        Mission(
            f"same_2_{COLOURS[c].lower()}", "same_2", f"Collect 2 {COLOURS[c]}", Requirement.SAME_COLOUR, 2, (c,), 5
        )
        for c in range(NUM_COLOURS)
    )
    return flex + specific_3 + specific_2 + same_2


MISSION_IDS: tuple[str, ...] = tuple(m.id for m in build_missions())
NUM_MISSIONS = len(MISSION_IDS)  # 30
MISSIONS_IN_PLAY = 4
