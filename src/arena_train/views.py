"""Compact text views for small trainable models: a short prompt and one single-token label
per action, so a decision is one forward pass and its log-probability is exact.

A view returns a :class:`Menu`: the prompt text, the actions on offer (the legal set, or a
larger fixed set when the trainer lets the policy choose illegal actions), their labels and
which of them are legal. Labels must each encode to exactly one token of the model's
tokenizer; :class:`ActionTokens` checks that and names the fix when they do not.

- :class:`KuhnCompactView`: ``"kuhn 1 p K:"`` -- seat, history, then the private card last.
- :class:`MegaGemCompactView`: about 64 tokens, key numbers last, bids on a coarse grid with
  one character each.
- :class:`MenuView`: any game; the game's own prompt plus a lettered menu of its legal actions.
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Sequence

from arena_core.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from arena_core.game import Game, Position


@dataclass(frozen=True)
class Menu:
    """One decision as the learner sees it."""

    text: str
    actions: tuple[Any, ...]
    labels: tuple[str, ...]
    legal: tuple[bool, ...]

    def __post_init__(self) -> None:
        if not (len(self.actions) == len(self.labels) == len(self.legal)):
            raise ConfigError("a Menu needs one label and one legality flag per action")
        if len(set(self.labels)) != len(self.labels):
            raise ConfigError(f"menu labels must be distinct, got {self.labels}")
        if not any(self.legal):
            raise ConfigError("a Menu must offer at least one legal action")


class CompactView(Protocol):
    def menu(self, game: "Game", pos: "Position", player: int, *, include_illegal: bool = False) -> Menu: ...


class ActionTokens:
    """Maps menu labels to single token ids of a tokenizer (cached)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self._cache: dict[str, int] = {}
        self._special = _takes_special(tokenizer)

    def encode_text(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False)) if self._special else list(self.tokenizer.encode(text))

    def token(self, label: str) -> int:
        tok = self._cache.get(label)
        if tok is None:
            ids = self.encode_text(label)
            if len(ids) != 1:
                raise ConfigError(
                    f"action label {label!r} encodes to {len(ids)} tokens {ids}; every label must be one token "
                    "(use single characters as labels, or a view whose labels are in the vocabulary)"
                )
            tok = self._cache[label] = int(ids[0])
        return tok

    def tokens(self, labels: Sequence[str]) -> list[int]:
        ids = [self.token(lb) for lb in labels]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"labels {list(labels)} map to repeated tokens {ids}")
        return ids


def _takes_special(tokenizer) -> bool:
    import inspect

    try:
        return "add_special_tokens" in inspect.signature(tokenizer.encode).parameters
    except (TypeError, ValueError):
        return False


# ---------------------------------------------------------------------- Kuhn poker
KUHN_LABELS = ("p", "b")  # pass, bet: single bytes are always single tokens of a byte-level BPE
KUHN_HISTORY = ("c", "r")  # past actions (check/raise) in other tokens than the answers


@dataclass(frozen=True)
class KuhnCompactView:
    """``"kuhn <seat> <history or -> <card>:"``; the answer is ``p`` (pass) or ``b`` (bet)."""

    def menu(self, game, pos, player, *, include_illegal: bool = False) -> Menu:
        obs = game.observe(pos, player)
        history = "".join(KUHN_HISTORY[0] if h == "pass" else KUHN_HISTORY[1] for h in obs["history"]) or "-"
        actions = tuple(game.legal(pos, player))
        labels = tuple(KUHN_LABELS[game.action_id(a)] for a in actions)
        return Menu(f"kuhn {player} {history} {obs['card']}", actions, labels, (True,) * len(actions))


# ---------------------------------------------------------------------- MegaGem
#: the bids a small model may choose from, one character each (the grid is an action abstraction)
MEGAGEM_BID_GRID = (0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 18, 20, 24, 28, 32, 40)
MEGAGEM_BID_LABELS = tuple(string.digits + "abcdefghi")[: len(MEGAGEM_BID_GRID)]
_COLOUR_LETTERS = ("R", "B", "G", "P", "Y")
_CARD_LETTERS = {"treasure": "T", "loan": "L", "investment": "I"}


@dataclass(frozen=True)
class MegaGemCompactView:
    """About 64 tokens: display counts, own collection and hand, the card on offer, then the
    key numbers last (own coins, the bid limit, the rival coins). Bids come from
    :data:`MEGAGEM_BID_GRID`, labelled ``0``-``9`` then ``a``-``i``; a reveal is a colour letter."""

    grid: tuple[int, ...] = MEGAGEM_BID_GRID

    def menu(self, game, pos, player, *, include_illegal: bool = False) -> Menu:
        obs = game.observe(pos, player)
        legal = game.legal(pos, player)
        if obs["phase"] == "reveal":
            actions = tuple(legal)
            labels = tuple(_COLOUR_LETTERS[a.colour] for a in actions)
            text = "mg rv " + _counts(obs["hand"]) + " d" + _counts(obs["display_counts"]) + ":"
            return Menu(text, actions, labels, (True,) * len(actions))
        limit = int(obs["bid_limit"])
        bids = [b for b in self.grid if include_illegal or b <= limit]
        from arena_games.megagem.rules import Bid  # the game's action type

        actions = tuple(Bid(b) for b in bids)
        labels = tuple(MEGAGEM_BID_LABELS[self.grid.index(b)] for b in bids)
        flags = tuple(b <= limit for b in bids)
        card = obs["current_card"] or {}
        kind = _CARD_LETTERS.get(card.get("type", ""), "?")
        amount = card.get("bonus", card.get("amount", "")) if kind != "T" else ""
        lot = "".join(_COLOUR_LETTERS[_colour_index(c)] for c in obs["pool"][: int(card.get("gems", 0))]) if kind == "T" else ""
        me = obs["players"][player]
        rivals = " ".join(str(p["coins"]) for i, p in enumerate(obs["players"]) if i != player)
        text = (
            f"mg r{obs['round']} d{_counts(obs['display_counts'])} c{_counts(me['collection'])} h{_counts(obs['hand'])}"
            f" {kind}{lot}{amount} o{rivals} m{limit} {me['coins']}:"
        )
        return Menu(text, actions, labels, flags)


def _counts(d: dict) -> str:
    return "".join(str(min(int(v), 9)) for v in d.values())


def _colour_index(name: str) -> int | None:
    for i, letter in enumerate(_COLOUR_LETTERS):
        if str(name)[:1].upper() == letter:
            return i
    return None


# ---------------------------------------------------------------------- any game
@dataclass(frozen=True)
class MenuView:
    """Any game: its own text prompt, then ``A) <action>`` lines; the answer is the letter.
    Holds up to 52 legal actions (A-Z, a-z)."""

    letters: str = string.ascii_uppercase + string.ascii_lowercase

    def menu(self, game, pos, player, *, include_illegal: bool = False) -> Menu:
        prompt = game.text_view().prompt(game, pos, player)
        actions = tuple(game.legal(pos, player))
        if len(actions) > len(self.letters):
            raise ConfigError(
                f"{game.spec.id}: {len(actions)} legal actions exceed the {len(self.letters)} menu letters; "
                "write a compact view for this game (see arena_train.views)"
            )
        labels = tuple(self.letters[: len(actions)])
        lines = "\n".join(f"{lb}) {game.action_to_str(a)}" for lb, a in zip(labels, actions))
        text = f"{prompt.system}\n{prompt.user}\nChoose by letter:\n{lines}\nAnswer:"
        return Menu(text, actions, labels, (True,) * len(actions))


def default_view(game_id: str) -> CompactView:
    """The compact view registered for ``game_id`` here, else the generic menu view."""
    return {"kuhn_poker": KuhnCompactView(), "megagem": MegaGemCompactView()}.get(game_id, MenuView())
