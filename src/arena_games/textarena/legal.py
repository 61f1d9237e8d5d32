"""Per-title legal sets of the exact titles (free-text titles probe their vocabulary instead).

Each extractor reads the raw TextArena env after a step -- ``env.state.game_state``, the
state the title itself uses to validate moves -- and returns canonical action strings for
``player``, the player to move. Extractors never write to the env. Printed legal lists are
read from the same state the title prints them from, so the set is the one the player sees.

A *check* ``(env, player, action) -> bool`` answers "is this vocabulary string in the legal
set?" without building the set; a title that has one gets its legal set only when it is asked
for (the adapter checks a submitted move with the check). Checks are given only to titles whose
legal set is never empty while the game runs.

Every extractor is checked against TextArena itself in tests/test_textarena_adapter.py: each
listed action is accepted by the title (stepped on a copy), and random-legal play never
triggers TextArena's invalid-move handling; every check agrees with its extractor on the whole
vocabulary (tests/test_textarena_titles.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FACES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def _gs(env: Any) -> Any:
    """TextArena's ``game_state`` dict (untyped upstream)."""
    return env.state.game_state


# ------------------------------------------------------------------ vocabularies
#: "[k]" for k in 0..100, and the reverse map (the cell and number tokens of several titles)
_CELLS = tuple(f"[{i}]" for i in range(101))
_CELL_INDEX = {c: i for i, c in enumerate(_CELLS)}


def cells(n: int) -> tuple[str, ...]:
    return _CELLS[:n]


def wild_cells() -> tuple[str, ...]:
    return tuple(f"[{m} {i}]" for i in range(9) for m in ("X", "O"))


def othello_cells(n: int = 8) -> tuple[str, ...]:
    return tuple(f"[{r}, {c}]" for r in range(n) for c in range(n)) + ("[pass]",)


def crusade_moves() -> tuple[str, ...]:
    files = "abcdefgh"
    out = []
    for r in range(8):
        for c in range(8):
            for dr, dc in ((-2, -1), (-2, 1), (-1, -2), (-1, 2), (1, -2), (1, 2), (2, -1), (2, 1)):
                nr, nc = r + dr, c + dc
                if 0 <= nr < 8 and 0 <= nc < 8:
                    out.append(f"[{files[c]}{8 - r} {files[nc]}{8 - nr}]")
    return tuple(out)


def connect_four_columns(cols: int = 7) -> tuple[str, ...]:
    return tuple(f"[col {c}]" for c in range(cols))


def faces() -> tuple[str, ...]:
    return tuple(f"[{f}]" for f in FACES)


def liars_dice_bids(max_dice: int) -> tuple[str, ...]:
    return ("[Call]",) + tuple(f"[Bid: {q}, {f}]" for q in range(1, max_dice + 1) for f in range(1, 7))


def chip_moves(max_amount: int) -> tuple[str, ...]:
    return (
        ("[check]", "[call]", "[fold]")
        + tuple(f"[bet {x}]" for x in range(1, max_amount + 1))
        + tuple(f"[raise {x}]" for x in range(1, max_amount + 1))
    )


#: bet and raise sizes offered in Poker (TextArena accepts any positive amount; over-bets go all-in)
POKER_SIZES = (10, 20, 50, 100, 200, 500, 1000)


def poker_moves() -> tuple[str, ...]:
    return (
        ("[check]", "[call]", "[fold]")
        + tuple(f"[bet {x}]" for x in POKER_SIZES)
        + tuple(f"[raise {x}]" for x in POKER_SIZES)
    )


def nim_moves(piles: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(f"[{i} {q}]" for i, size in enumerate(piles) for q in range(1, size + 1))


DIRECTIONS = ("[up]", "[down]", "[left]", "[right]")


def battleship_cells(n: int = 5) -> tuple[str, ...]:
    return tuple(f"[{chr(65 + r)}{c}]" for r in range(n) for c in range(n))


def ultimate_cells() -> tuple[str, ...]:
    return tuple(f"[{m} {k}]" for m in range(9) for k in range(9))


# ------------------------------------------------------------------ printed lists
def empty_cells(env: Any, player: int) -> tuple[str, ...]:
    """TicTacToe, ThreePlayerTicTacToe, SimpleTak: the 'Available Moves' list (empty cells)."""
    board = _gs(env)["board"]
    n = len(board[0])
    return tuple([_CELLS[r * n + c] for r, row in enumerate(board) for c, v in enumerate(row) if v == ""])


def empty_cell_check(env: Any, player: int, action: str) -> bool:
    i = _CELL_INDEX.get(action)
    if i is None:
        return False
    board = _gs(env)["board"]
    n = len(board[0])
    return i < n * len(board) and board[i // n][i % n] == ""


def wild_empty_cells(env: Any, player: int) -> tuple[str, ...]:
    board = _gs(env)["board"]
    return tuple(f"[{m} {r * 3 + c}]" for r in range(3) for c in range(3) if board[r][c] == "" for m in ("X", "O"))


def kuhn_actions(env: Any, player: int) -> tuple[str, ...]:
    """'Your available actions are: ...' -- the keys of the title's legal-action tree."""
    tree = _gs(env)["current_legal_action_tree"]
    return tuple(f"[{k}]" for k in tree)


def kuhn_check(env: Any, player: int, action: str) -> bool:
    return action[:1] == "[" and action[-1:] == "]" and action[1:-1] in _gs(env)["current_legal_action_tree"]


_OTHELLO = {f"[{r}, {c}]": [r, c] for r in range(8) for c in range(8)}
_OTHELLO_STR = {(r, c): s for s, (r, c) in _OTHELLO.items()}


def othello_moves(env: Any, player: int) -> tuple[str, ...]:
    """'Valid moves: ...' (the list the title keeps in ``game_state['valid_moves']`` for the
    player to move and prints); with none, any text passes the turn (canonically '[pass]')."""
    valid = _gs(env)["valid_moves"]
    return tuple([_OTHELLO_STR[r, c] for r, c in valid]) or ("[pass]",)


def othello_check(env: Any, player: int, action: str) -> bool:
    valid = _gs(env)["valid_moves"]
    if action == "[pass]":
        return not valid
    cell = _OTHELLO.get(action)
    return cell is not None and cell in valid


def crusade_legal(env: Any, player: int) -> tuple[str, ...]:
    """'Available Moves: ...' as the title computes it."""
    return tuple(env._legal_moves_for_player(player))


def pig_actions(env: Any, player: int) -> tuple[str, ...]:
    """'Available actions: [roll] or [hold]'."""
    return ("[roll]", "[hold]")


# ------------------------------------------------------------------ derived from the rules
_COLUMNS = tuple(f"[col {c}]" for c in range(20))
_COLUMN_INDEX = {s: c for c, s in enumerate(_COLUMNS)}


def connect_four_legal(env: Any, player: int) -> tuple[str, ...]:
    """Columns whose top cell is empty."""
    top = _gs(env)["board"][0]
    return tuple([_COLUMNS[c] for c, v in enumerate(top) if v == "."])


def connect_four_check(env: Any, player: int, action: str) -> bool:
    c = _COLUMN_INDEX.get(action)
    top = _gs(env)["board"][0]
    return c is not None and c < len(top) and top[c] == "."


_FACE_TOKENS = tuple(f"[{f}]" for f in FACES)
_FACE_VALUE = {t: v for v, t in enumerate(_FACE_TOKENS, 1)}


def gops_hand(env: Any, player: int) -> tuple[str, ...]:
    """GameOfPureStrategy and ThreePlayerGOPS: the cards left in the player's hand."""
    return tuple([_FACE_TOKENS[v - 1] for v in sorted(_gs(env)["player_hands"][player])])


def gops_check(env: Any, player: int, action: str) -> bool:
    v = _FACE_VALUE.get(action)
    return v is not None and v in _gs(env)["player_hands"][player]


def high_society_hand(env: Any, player: int) -> tuple[str, ...]:
    """The money cards left in the player's hand."""
    return tuple(f"[{v}]" for v in sorted(_gs(env)["player_money"][player]))


_LIARS_LEGAL: dict[tuple[int, int, int, bool], tuple[tuple[str, ...], frozenset[str]]] = {}


def _liars_dice(env: Any) -> tuple[tuple[str, ...], frozenset[str]]:
    gs = _gs(env)
    bid = gs["current_bid"]
    key = (bid["quantity"], bid["face_value"], sum(gs["remaining_dice"].values()), gs["last_bidder_id"] is not None)
    known = _LIARS_LEGAL.get(key)
    if known is None:
        q0, f0, total, standing = key
        out = ["[Call]"] if standing and q0 > 0 else []
        out += [
            f"[Bid: {q}, {f}]" for q in range(max(1, q0), total + 1) for f in range(max(1, f0), 7) if q != q0 or f != f0
        ]
        known = _LIARS_LEGAL[key] = (tuple(out), frozenset(out))
    return known


def liars_dice_legal(env: Any, player: int) -> tuple[str, ...]:
    """'[Call]' once a bid stands; bids that beat the current one (neither number lower, not
    identical), with quantity up to the dice still in play."""
    return _liars_dice(env)[0]


def liars_dice_check(env: Any, player: int, action: str) -> bool:
    return action in _liars_dice(env)[1]


def indian_poker_legal(env: Any, player: int) -> tuple[str, ...]:
    """Check or bet when nothing is due; call, raise or fold when facing a bet; every
    amount the player's chips cover."""
    gs = _gs(env)
    chips = gs["player_chips"][player]
    if chips < 0:  # upstream bug: the ante drives a broke player below zero; every move is then refused
        return ()
    due = gs["highest_bet"] - gs["current_bets"][player]
    if due == 0:
        return ("[check]",) + tuple(f"[bet {x}]" for x in range(1, chips + 1))
    out = ["[fold]"]
    if due <= chips:
        out.insert(0, "[call]")
    out += [f"[raise {x}]" for x in range(1, chips - due + 1)]
    return tuple(out)


_POKER_LEGAL: dict[tuple[bool, Any], tuple[tuple[str, ...], frozenset[str]]] = {}


def _poker(env: Any, player: int) -> tuple[tuple[str, ...], frozenset[str]]:
    gs = _gs(env)
    mine = gs["player_bets"][player]
    key = (gs["current_bet"] - mine <= 0, mine)
    known = _POKER_LEGAL.get(key)
    if known is None:
        if key[0]:
            out = ("[check]", "[fold]") + tuple(f"[bet {x}]" for x in POKER_SIZES if x > mine)
        else:
            out = ("[call]", "[fold]") + tuple(f"[raise {x}]" for x in POKER_SIZES)
        if len(_POKER_LEGAL) > 4096:  # bets are chip amounts: keep the table small
            _POKER_LEGAL.clear()
        known = _POKER_LEGAL[key] = (out, frozenset(out))
    return known


def poker_legal(env: Any, player: int) -> tuple[str, ...]:
    """Hold'em: check when nothing is due, call when something is, fold always; bets when
    nothing is due and raises when something is, at the sizes in :data:`POKER_SIZES`."""
    return _poker(env, player)[0]


def poker_check(env: Any, player: int, action: str) -> bool:
    return action in _poker(env, player)[1]


def nim_legal(env: Any, player: int) -> tuple[str, ...]:
    piles = _gs(env)["piles"]
    return tuple(f"[{i} {q}]" for i, size in enumerate(piles) for q in range(1, size + 1))


#: the largest total of a player's two hands whose splits are in the typed action space
CHOPSTICKS_MAX_SPLIT = 8


def chopsticks_moves() -> tuple[str, ...]:
    return tuple(f"[attack {m} {o}]" for m in (0, 1) for o in (0, 1)) + tuple(
        f"[split {a} {b}]"
        for a in range(CHOPSTICKS_MAX_SPLIT + 1)
        for b in range(CHOPSTICKS_MAX_SPLIT + 1)
        if a + b <= CHOPSTICKS_MAX_SPLIT
    )


def chopsticks_legal(env: Any, player: int) -> tuple[str, ...]:
    """Attacks from a live hand on a live hand; splits that keep the total and change the hands,
    while the total is at most CHOPSTICKS_MAX_SPLIT. TextArena lets a split hand exceed 4 and
    an attack then raise the total past 8 (to 11, 14, ...); splits of such totals are outside the
    typed action space, as large bets are in Poker. An attack is always available then: the
    player to move has a live hand, and so does the opponent while the game goes on."""
    hands = _gs(env)["hands"]
    mine, theirs = hands[player], hands[1 - player]
    out = [f"[attack {m} {o}]" for m in (0, 1) for o in (0, 1) if mine[m] > 0 and theirs[o] > 0]
    total = mine[0] + mine[1]
    if total <= CHOPSTICKS_MAX_SPLIT:
        out += [f"[split {a} {total - a}]" for a in range(total + 1) if [a, total - a] != list(mine)]
    return tuple(out)


def battleship_legal(env: Any, player: int) -> tuple[str, ...]:
    """Cells of the player's tracking board not fired upon yet."""
    board = _gs(env)["tracking_board"][player]
    return tuple(f"[{chr(65 + r)}{c}]" for r in range(len(board)) for c in range(len(board[r])) if board[r][c] == "~")


def ultimate_legal(env: Any, player: int) -> tuple[str, ...]:
    """Empty cells of the micro board the player is sent to (any micro board when free), never
    in a micro board that is already won."""
    gs = _gs(env)
    nxt = gs["next_micro_board"]
    boards = range(9) if nxt is None else (nxt,)
    macro = gs["macro_board"]
    return tuple(
        f"[{m} {r * 3 + c}]"
        for m in boards
        if macro[m // 3][m % 3] == " "
        for r in range(3)
        for c in range(3)
        if gs["board"][m][r][c] == " "
    )


def card_positions(n: int = 13) -> tuple[str, ...]:
    return tuple(f"[play {i}]" for i in range(1, n + 1))


def briscola_legal(env: Any, player: int) -> tuple[str, ...]:
    """Any card of the hand, by 1-based position."""
    return tuple(f"[play {i}]" for i in range(1, len(_gs(env)["players"][player]["hand"]) + 1))


def german_whist_legal(env: Any, player: int) -> tuple[str, ...]:
    """Cards of the hand that follow suit (any card when void in the lead suit or leading),
    decided by the title's own suit rule."""
    hand = _gs(env)["players"][player]["hand"]
    return tuple(f"[play {i}]" for i, card in enumerate(hand, 1) if env._is_valid_play(player, card))


def fixed(*actions: str) -> Callable[[Any, int], tuple[str, ...]]:
    """A title whose every move is always legal (rock-paper-scissors, directions, ...)."""

    def legal(env: Any, player: int) -> tuple[str, ...]:
        return actions

    legal.__doc__ = f"Always {', '.join(actions)}."
    return legal


def fixed_check(*actions: str) -> Callable[[Any, int, str], bool]:
    """The check of :func:`fixed`."""
    allowed = frozenset(actions)

    def check(env: Any, player: int, action: str) -> bool:
        return action in allowed

    return check
