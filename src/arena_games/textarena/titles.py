"""The registered TextArena titles: one table row per title, one Game subclass per row.

One file (over 500 lines) because it is a table: one entry per title, each next to its legal-set function's name.

Entry points in pyproject.toml name the classes generated here (``TicTacToe_v0`` for
``textarena/TicTacToe-v0``). Titles that cannot run on this interpreter or offline are
registered too: importing their class raises ImportError with the reason, which the
registry reports as "unavailable" without breaking the listing.
"""

from __future__ import annotations

import difflib
import random as _random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from arena_core.errors import ConfigError, PluginUnavailableError, UnknownGameError
from arena_core.spec import Information, TurnStructure, Utility

from . import legal as L
from .adapter import MAX_ACTION_CHARS, LegalMethod, TextArenaGame, TitleSpec, make_title_class
from .bridge import _ta
from .kuhn_v0 import KuhnV0CompactView
from .liars_dice import LiarsDiceV0Game

P, D, F = LegalMethod.PRINTED, LegalMethod.DERIVED, LegalMethod.FREE_TEXT
GEN = Utility.GENERAL_SUM
PERFECT = Information.PERFECT

_CHAT = "I am happy to cooperate if you are."

TITLES: dict[str, TitleSpec] = {
    # ---------------------------------------------------------------- printed legal lists
    "TicTacToe-v0": TitleSpec(
        "TicTacToe-v0",
        (2, 2),
        P,
        L.cells(9),
        L.empty_cells,
        9,
        chance=False,
        information=PERFECT,
        check=L.empty_cell_check,
        description="3x3 tic-tac-toe; moves '[k]' for cell k.",
    ),
    "ThreePlayerTicTacToe-v0": TitleSpec(
        "ThreePlayerTicTacToe-v0",
        (3, 3),
        P,
        L.cells(25),
        L.empty_cells,
        25,
        chance=False,
        information=PERFECT,
        check=L.empty_cell_check,
        utility=GEN,
        description="Three players on a 5x5 board.",
    ),
    "WildTicTacToe-v0": TitleSpec(
        "WildTicTacToe-v0",
        (2, 2),
        P,
        L.wild_cells(),
        L.wild_empty_cells,
        9,
        chance=False,
        information=PERFECT,
        description="Either mark may be placed: '[X k]' or '[O k]'.",
    ),
    "KuhnPoker-v0": TitleSpec(
        "KuhnPoker-v0",
        (2, 2),
        P,
        ("[check]", "[bet]", "[call]", "[fold]"),
        L.kuhn_actions,
        12,
        check=L.kuhn_check,
        env_kwargs={"max_rounds": 3},
        description="Three rounds of Kuhn poker; the result is +-1 by chip total.",
        known_bugs=(
            "Bets and calls never reach the pot (upstream PR #189), so folding and losing "
            "a called showdown cost the same; the round-1 card message is duplicated for "
            "the second player.",
        ),
    ),
    "Othello-v0": TitleSpec(
        "Othello-v0",
        (2, 2),
        P,
        L.othello_cells(8),
        L.othello_moves,
        130,
        chance=False,
        information=PERFECT,
        check=L.othello_check,
        description="8x8 Othello; moves '[r, c]'; '[pass]' when the title makes the player skip.",
    ),
    "Crusade-v0": TitleSpec(
        "Crusade-v0",
        (2, 2),
        P,
        L.crusade_moves(),
        L.crusade_legal,
        45,
        chance=False,
        information=PERFECT,
        description="Knight-move captures on 8x8, 40 moves, most captures wins.",
    ),
    "SimpleTak-v0": TitleSpec(
        "SimpleTak-v0",
        (2, 2),
        P,
        L.cells(16),
        L.empty_cells,
        16,
        chance=False,
        information=PERFECT,
        check=L.empty_cell_check,
        description="Connect opposite edges of a 4x4 board.",
    ),
    "PigDice-v0": TitleSpec(
        "PigDice-v0",
        (2, 2),
        P,
        ("[roll]", "[hold]"),
        L.pig_actions,
        102,
        env_kwargs={"max_turns": 100},
        information=PERFECT,
        description="Pig to 100 points, 100 turns.",
    ),
    # ---------------------------------------------------------------- derived from the rules
    "ConnectFour-v0": TitleSpec(
        "ConnectFour-v0",
        (2, 2),
        D,
        L.connect_four_columns(7),
        L.connect_four_legal,
        42,
        chance=False,
        check=L.connect_four_check,
        information=PERFECT,
        description="6x7 Connect Four; moves '[col c]'.",
    ),
    "GameOfPureStrategy-v0": TitleSpec(
        "GameOfPureStrategy-v0",
        (2, 2),
        D,
        L.faces(),
        L.gops_hand,
        26,
        check=L.gops_check,
        turn_structure=TurnStructure.SEQUENTIAL,
        description="GOPS: bid a card from your hand for each prize card (bids collected one after the other, hidden).",
    ),
    "ThreePlayerGOPS-v0": TitleSpec(
        "ThreePlayerGOPS-v0",
        (3, 3),
        D,
        L.faces(),
        L.gops_hand,
        39,
        utility=GEN,
        check=L.gops_check,
        description="Three-player GOPS.",
    ),
    "HighSociety-v0": TitleSpec(
        "HighSociety-v0",
        (2, 2),
        D,
        tuple(f"[{v}]" for v in range(1, 12)),
        L.high_society_hand,
        400,
        description="Bid money cards 1-11 for prestige cards.",
    ),
    "LiarsDice-v0": TitleSpec(
        "LiarsDice-v0",
        (2, 6),
        D,
        L.liars_dice_bids(30),
        L.liars_dice_legal,
        3000,
        env_kwargs={"num_dice": 5},
        check=L.liars_dice_check,
        description="Liar's dice, 5 dice each; '[Bid: q, f]' must beat the current bid, '[Call]' challenges it; "
        "bid quantities are offered up to the dice in play. Rank-based returns.",
    ),
    "IndianPoker-v0": TitleSpec(
        "IndianPoker-v0",
        (2, 2),
        D,
        L.chip_moves(200),
        L.indian_poker_legal,
        1100,
        env_kwargs={"max_rounds": 5},
        description="You see only the opponent's card; 5 rounds; every bet/raise amount your chips cover.",
        known_bugs=(
            "The ante is taken even from a player with no chips, who then has negative chips and "
            "no move TextArena accepts; the adapter ends that game as env_error (a truncation).",
        ),
    ),
    "Poker-v0": TitleSpec(
        "Poker-v0",
        (2, 6),
        D,
        L.poker_moves(),
        L.poker_legal,
        3000,
        check=L.poker_check,
        env_kwargs={"num_rounds": 10, "starting_chips": 1000, "small_blind": 10, "big_blind": 20},
        utility=GEN,
        description="No-limit hold'em, 10 hands. The typed action space offers bet/raise sizes "
        f"{', '.join(map(str, L.POKER_SIZES))} (TextArena accepts any positive amount; "
        "over-bets go all-in); within that space the legal set is exact.",
    ),
    "Nim-v0": TitleSpec(
        "Nim-v0",
        (2, 2),
        D,
        L.nim_moves((3, 4, 5)),
        L.nim_legal,
        12,
        chance=False,
        information=PERFECT,
        env_kwargs={"piles": [3, 4, 5]},
        description="Nim with piles 3, 4, 5; '[pile quantity]'.",
    ),
    "Chopsticks-v0": TitleSpec(
        "Chopsticks-v0",
        (2, 2),
        D,
        L.chopsticks_moves(),
        L.chopsticks_legal,
        42,
        chance=False,
        information=PERFECT,
        env_kwargs={"max_turns": 40},
        description="Chopsticks, 40 turns; a draw at the turn limit is reported as truncation. Splits are offered "
        "while a player's total is at most 8 (TextArena accepts larger ones after a split hand "
        "grew past 4; they are outside the typed action space).",
    ),
    "Snake-v0": TitleSpec(
        "Snake-v0",
        (2, 6),
        D,
        L.DIRECTIONS,
        L.fixed(*L.DIRECTIONS),
        500,
        utility=GEN,
        check=L.fixed_check(*L.DIRECTIONS),
        description="Multi-snake on 5x5; moves collected one player at a time, resolved together.",
    ),
    "Surround-v0": TitleSpec(
        "Surround-v0",
        (2, 6),
        D,
        L.DIRECTIONS,
        L.fixed(*L.DIRECTIONS),
        500,
        utility=GEN,
        check=L.fixed_check(*L.DIRECTIONS),
        description="Tron-like survival on 5x5; moves collected one player at a time.",
    ),
    "Battleship-v0": TitleSpec(
        "Battleship-v0",
        (2, 2),
        D,
        L.battleship_cells(5),
        L.battleship_legal,
        50,
        env_kwargs={"grid_size": 5},
        description="Battleship on a 5x5 grid; fire with '[B3]'.",
    ),
    "UltimateTicTacToe-v0": TitleSpec(
        "UltimateTicTacToe-v0",
        (2, 2),
        D,
        L.ultimate_cells(),
        L.ultimate_legal,
        81,
        chance=False,
        information=PERFECT,
        description="Ultimate tic-tac-toe; '[macro micro]', sent to the micro board of the last move.",
    ),
    "Briscola-v0": TitleSpec(
        "Briscola-v0",
        (2, 4),
        D,
        L.card_positions(13),
        L.briscola_legal,
        60,
        utility=GEN,
        description="Briscola with 2-4 players; play a card by position, '[play 2]'.",
        known_bugs=(
            "With 3 players the 40-card deck does not divide (no card is removed): after 13 "
            "tricks TextArena asks a player with an empty hand to play, and no move is "
            "accepted; the adapter ends that game as env_error (a truncation).",
        ),
    ),
    "GermanWhist-v0": TitleSpec(
        "GermanWhist-v0",
        (2, 2),
        D,
        L.card_positions(13),
        L.german_whist_legal,
        60,
        description="German Whist; '[play X]' by position, following suit when able.",
    ),
    "IteratedRockPaperScissors-v0": TitleSpec(
        "IteratedRockPaperScissors-v0",
        (2, 2),
        D,
        ("[rock]", "[paper]", "[scissors]"),
        L.fixed("[rock]", "[paper]", "[scissors]"),
        18,
        chance=False,
        check=L.fixed_check("[rock]", "[paper]", "[scissors]"),
        description="9 rounds of rock-paper-scissors (moves collected one after the other).",
    ),
    "IteratedMatchingPennies-v0": TitleSpec(
        "IteratedMatchingPennies-v0",
        (2, 2),
        D,
        ("[heads]", "[tails]"),
        L.fixed("[heads]", "[tails]"),
        20,
        chance=False,
        check=L.fixed_check("[heads]", "[tails]"),
        description="10 rounds of matching pennies.",
    ),
    "IteratedTwoThirdsAverage-v0": TitleSpec(
        "IteratedTwoThirdsAverage-v0",
        (2, 2),
        D,
        L.cells(101),
        L.fixed(*L.cells(101)),
        20,
        chance=False,
        check=L.fixed_check(*L.cells(101)),
        description="10 rounds of guess-2/3-of-the-average; whole-number guesses 0-100.",
    ),
    # ---------------------------------------------------------------- free text
    "SimpleNegotiation-v0": TitleSpec(
        "SimpleNegotiation-v0",
        (2, 2),
        F,
        ("[Accept]", "[Deny]", "Let us find a trade that helps us both.")
        + tuple(
            f"[Offer: 1 {a} -> 1 {b}]"
            for a in ("Wheat", "Wood", "Sheep", "Brick", "Ore")
            for b in ("Wheat", "Wood", "Sheep", "Brick", "Ore")
            if a != b
        ),
        None,
        12,
        utility=GEN,
        env_kwargs={"max_turns": 10},
        description="Trade resources over 10 turns; chat freely, '[Offer: ... -> ...]', '[Accept]', '[Deny]'. "
        "Unlike TextArena's default wrapper, the adapter shows each player the opponent's messages.",
    ),
    "SimpleBlindAuction-v0": TitleSpec(
        "SimpleBlindAuction-v0",
        (2, 2),
        F,
        ("I will bid carefully.", "No bids from me.")
        + tuple(f"[Bid on Item {i}: {a}]" for i in range(5) for a in (50, 100, 200, 400)),
        None,
        10,
        utility=GEN,
        env_kwargs={"starting_capital": 1000, "num_items": 5, "conversation_rounds": 3},
        description="3 chat rounds then sealed bids on 5 items ('[Bid on Item X: amount]', several per turn, total within "
        "capital); text without a bid means no bids.",
    ),
    "TruthAndDeception-v0": TitleSpec(
        "TruthAndDeception-v0",
        (2, 2),
        F,
        ("Tell me more about both facts.", "I believe one of them is a trick.", "[Fact 1]", "[Fact 2]"),
        None,
        8,
        env_kwargs={"max_turns": 6},
        description="A deceiver and a guesser talk, then the guesser names the true fact.",
    ),
    "IteratedPrisonersDilemma-v0": TitleSpec(
        "IteratedPrisonersDilemma-v0",
        (2, 2),
        F,
        (_CHAT, "[Cooperate]", "[Defect]"),
        None,
        60,
        utility=GEN,
        chance=False,
        env_kwargs={
            "num_rounds": 10,
            "communication_turns": 1,
            "cooperate_reward": 3,
            "defect_reward": 5,
            "sucker_reward": 0,
            "mutual_defect_reward": 1,
        },
        description="10 rounds: one chat turn each, then '[Cooperate]' or '[Defect]'.",
    ),
    "ThreePlayerIPD-v0": TitleSpec(
        "ThreePlayerIPD-v0",
        (3, 3),
        F,
        (_CHAT,)
        + tuple(f"[{o} {m}]" for o in range(3) for m in ("cooperate", "defect"))
        + tuple(
            f"[{o} {m1}] [{p} {m2}]"
            for o in range(3)
            for p in range(o + 1, 3)
            for m1 in ("cooperate", "defect")
            for m2 in ("cooperate", "defect")
        ),
        None,
        60,
        utility=GEN,
        chance=False,
        env_kwargs={
            "num_rounds": 5,
            "communication_turns": 1,
            "cooperate_reward": 3,
            "defect_reward": 5,
            "sucker_reward": 0,
            "mutual_defect_reward": 1,
        },
        description="Three-player iterated prisoner's dilemma: chat, then one decision per opponent ('[k cooperate]').",
    ),
    "PublicGoodsGame-v0": TitleSpec(
        "PublicGoodsGame-v0",
        (3, 3),
        F,
        ("{I will contribute fairly}",) + tuple(f"[{x}]" for x in range(0, 21, 5)),
        None,
        60,
        utility=GEN,
        chance=False,
        reward_bounds=(-1.0, 1.0),
        env_kwargs={
            "num_rounds": 3,
            "communication_turns": 3,
            "endowment": 20,
            "multiplication_factor": 1.5,
            "num_players": 3,
        },
        description="Chat '{...}' then contribute '[x]' of 20 tokens, 3 rounds.",
        known_bugs=(
            "An eliminated player is asked again forever (livelock); the adapter ends that as a player error.",
        ),
    ),
    "MarketEntryGame-v0": TitleSpec(
        "MarketEntryGame-v0",
        (3, 3),
        F,
        ("{I plan to stay out}", "[E]", "[S]"),
        None,
        80,
        utility=GEN,
        chance=False,
        env_kwargs={
            "num_rounds": 5,
            "communication_turns": 3,
            "market_capacity": 2,
            "entry_profit": 15,
            "overcrowding_penalty": -5,
            "safe_payoff": 5,
        },
        description="Chat '{...}' then enter '[E]' or stay out '[S]', 5 rounds.",
    ),
    "IteratedUltimatumGame-v0": TitleSpec(
        "IteratedUltimatumGame-v0",
        (2, 2),
        F,
        ("[Accept]", "[Reject]") + tuple(f"[Offer: ${x}]" for x in range(0, 51, 5)),
        None,
        12,
        chance=False,
        env_kwargs={"pool": 50, "max_turns": 10, "alternate_roles": False},
        description="Split a pool of 50: '[Offer: $x]', '[Accept]', '[Reject]'.",
    ),
    "TwoDollar-v0": TitleSpec(
        "TwoDollar-v0",
        (2, 2),
        F,
        ("[Accept]", "[Reject]") + tuple(f"[Propose] ${x / 100:.2f}" for x in range(0, 201, 25)),
        None,
        40,
        utility=GEN,
        description="Split two dollars under secret role instructions: '[Propose] $x.xx', '[Accept]', '[Reject]'.",
        known_bugs=(
            "Its own get_observation appends a round header and the current proposal, which the adapter does not "
            "show (it reads the message queues; the proposals also appear there as messages).",
        ),
    ),
}

#: titles registered but not runnable here, with the reason
UNAVAILABLE: dict[str, str] = {
    "Chess-v0": "textarena 0.7.4 envs/Chess does not compile on Python 3.11 (3.12-only f-string syntax)",
    "Checkers-v0": "textarena 0.7.4 envs/Checkers does not compile on Python 3.11 (3.12-only f-string syntax)",
    "ReverseTicTacToe-v0": "textarena 0.7.4 envs/ReverseTicTacToe does not compile on Python 3.11 (3.12-only f-string syntax)",
    "IteratedStagHunt-v0": "textarena 0.7.4 envs/IteratedStagHunt does not compile on Python 3.11 (3.12-only f-string syntax)",
    "Coup-v0": "textarena 0.7.4 envs/Coup does not compile on Python 3.11 (3.12-only f-string syntax)",
    "DontSayIt-v0": "downloads the NLTK 'words' corpus at import time (no network here)",
    "WordChains-v0": "downloads the NLTK 'words' corpus at import time (no network here)",
    "SpellingBee-v0": "downloads the NLTK 'words' corpus at import time (no network here)",
    "LetterAuction-v0": "downloads the NLTK 'words' corpus at import time (no network here)",
    "Debate-v0": "needs OPENROUTER_API_KEY for its LLM jury",
    "ScenarioPlanning-v0": "needs OPENROUTER_API_KEY for its LLM jury",
    "UsedCarNegotiation-v0": "package data missing from textarena 0.7.4 (instructions/blue_book.txt)",
    "CharacterConclave-v0": "TypeError in textarena 0.7.4 (State.add_observation() API drift)",
}


def class_name(env_id: str) -> str:
    return env_id.replace("-", "_")


class KuhnPokerV0Game(TextArenaGame):
    """The base of ``KuhnPoker-v0``'s class: the adapter's views plus ``"compact"``
    (:class:`~.kuhn_v0.KuhnV0CompactView`)."""

    def views(self) -> Mapping[str, Callable[[], Any]]:
        return {**super().views(), "compact": KuhnV0CompactView}


#: titles whose class has a base of its own (views they add), by env id; the others' base is TextArenaGame
BASES: dict[str, type[TextArenaGame]] = {"KuhnPoker-v0": KuhnPokerV0Game, "LiarsDice-v0": LiarsDiceV0Game}


def _build() -> dict[str, type[TextArenaGame]]:
    state = _random.getstate()  # building classes draws nothing, but keep the promise cheaply
    try:
        return {
            class_name(t): make_title_class(class_name(t), spec, BASES.get(t, TextArenaGame))
            for t, spec in TITLES.items()
        }
    finally:
        _random.setstate(state)


CLASSES = _build()
globals().update(CLASSES)
_UNAVAILABLE_BY_CLASS = {class_name(t): reason for t, reason in UNAVAILABLE.items()}


def __getattr__(name: str) -> type[TextArenaGame]:
    reason = _UNAVAILABLE_BY_CLASS.get(name)
    if reason is not None:
        raise ImportError(reason)  # the loader names the title: `arena list` shows one reason a title
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = sorted(CLASSES) + ["title_game"]


def title_game(
    env_id: str,
    *,
    players: tuple[int, int] = (2, 2),
    vocabulary: Sequence[str] = (),
    decision_cap: int = 200,
    env_kwargs: Mapping[str, Any] | None = None,
    utility: Utility = Utility.GENERAL_SUM,
    reward_bounds: tuple[float, float] = (-1.0, 1.0),
    description: str = "",
    chance: bool = True,
) -> type[TextArenaGame]:
    """Any TextArena env id as an arena game class.

    A registered title (``"TicTacToe-v0"``) gives its class, with its exact legal set; the
    options are then not allowed. Any other id (a variant such as ``"KuhnPoker-v0-long"``, a
    title not in the table) becomes a *free-text* title: TextArena judges every move, with all
    of the adapter's guarantees (private ``random``, episode-scoped observations, typed ends,
    the decision cap as truncation). ``vocabulary`` is its action-index space: candidate moves,
    of which those TextArena accepts at a position are listed as legal (each probed on a copy of
    the env), so masks and random-legal play work; with no vocabulary only text players
    (LLMs, scripts) can play it. ``chance=False`` declares an env that never draws from its
    random generator (the conformance kit's ``chance`` check asks for it when no seed changes
    anything).
    """
    options: dict[str, Any] = dict(
        players=tuple(players),
        vocabulary=tuple(vocabulary),
        decision_cap=decision_cap,
        env_kwargs=dict(env_kwargs or {}),
        utility=utility,
        reward_bounds=tuple(reward_bounds),
        description=description,
        chance=chance,
    )
    if env_id in TITLES:
        if options != _FREE_TEXT_DEFAULTS:
            raise ConfigError(
                f"{env_id} is a registered title with an exact legal set; use it as it is "
                f"(make_game('textarena/{env_id}')) or pick another env id for a free-text variant"
            )
        return CLASSES[class_name(env_id)]
    if env_id in UNAVAILABLE:
        raise PluginUnavailableError(f"TextArena title {env_id} is unavailable here: {UNAVAILABLE[env_id]}")
    known = [k[: -len("-raw")] for k in _ta().envs.registration.ENV_REGISTRY if k.endswith("-raw")]
    if env_id not in known:
        close = difflib.get_close_matches(env_id, known, n=3)
        raise UnknownGameError(
            f"TextArena has no env {env_id!r}"
            + (f"; did you mean {', '.join(close)}?" if close else "")
            + " (the ids are textarena.envs.registration.ENV_REGISTRY's keys without '-raw')"
        )
    lo, hi = options["players"]
    if not 1 <= lo <= hi:
        raise ConfigError(f"players must be (min, max) with 1 <= min <= max, got {players!r}")
    if decision_cap < 1:
        raise ConfigError(f"decision_cap must be at least 1, got {decision_cap!r}")
    words = options["vocabulary"]
    bad = [w for w in words if not isinstance(w, str) or not w.strip() or len(w) > MAX_ACTION_CHARS]
    if bad:
        raise ConfigError(
            f"vocabulary entries must be non-blank strings of at most {MAX_ACTION_CHARS} characters; bad: {bad[:3]!r}"
        )
    if len(set(words)) != len(words):
        raise ConfigError("vocabulary has duplicate strings; list each candidate move once")
    key = repr((env_id, sorted(options.items())))
    made = _MADE.get(key)
    if made is None:
        spec = TitleSpec(
            env_id,
            (lo, hi),
            LegalMethod.FREE_TEXT,
            words,
            None,
            decision_cap,
            utility=utility,
            reward_bounds=options["reward_bounds"],
            env_kwargs=options["env_kwargs"],
            chance=chance,
            description=description or "Made by title_game: free text, judged by TextArena.",
        )
        made = make_title_class(class_name(env_id).replace(".", "_").replace("/", "_"), spec, MadeTitle)
        made._title_game_args = (env_id, options)
        _MADE[key] = made
    return made


#: title_game's options when none is given (a registered title takes none)
_FREE_TEXT_DEFAULTS: dict[str, Any] = dict(
    players=(2, 2),
    vocabulary=(),
    decision_cap=200,
    env_kwargs={},
    utility=Utility.GENERAL_SUM,
    reward_bounds=(-1.0, 1.0),
    description="",
    chance=True,
)


class MadeTitle(TextArenaGame):
    """The base of a class made by :func:`title_game`: pickled as title_game's arguments plus
    the game's state (unpickling makes the class again)."""

    #: title_game's arguments: (env id, options)
    _title_game_args: ClassVar[tuple[str, dict[str, Any]]]

    def __reduce__(self) -> tuple[Callable[[str, dict[str, Any], dict[str, Any]], TextArenaGame], tuple[Any, ...]]:
        env_id, options = self._title_game_args
        return _unpickle_made, (env_id, options, self.__getstate__())


#: classes made by title_game, by their arguments (the same arguments give the same class)
_MADE: dict[str, type[MadeTitle]] = {}


def _unpickle_made(env_id: str, options: dict[str, Any], state: dict[str, Any]) -> TextArenaGame:
    cls = title_game(env_id, **options)
    game = cls.__new__(cls)
    game.__dict__.update(state)
    return game
