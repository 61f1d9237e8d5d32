"""Arena games for tool-using agents over MCP (the ``mcp`` extra: ``pip install "turn-arena-players[mcp]"``).

``arena mcp`` serves every registered game as tools (stdio by default, ``--http PORT`` for
Streamable HTTP on 127.0.0.1):

- ``list_games()``: the games installed here, with their player counts and information;
- ``new_game(game, seed, num_players, params, opponents)``: a seeded deal; the seats named in
  ``opponents`` (``{"1": "random"}``: seat -> player spec) are played by Arena players, every other
  seat gets a **token**, the only key to that seat's view (hand each agent its own);
- ``observe(token, wait_s)``: that seat's observation and text view, whether it is to act, its legal
  actions, the end and returns once over (``wait_s``: wait up to that long for the seat's turn);
- ``legal_actions(token)``, ``act(token, action)`` (an action's canonical string, as listed);
- ``replay(game_id)``: the episode record (game, parameters, seed, every action, returns), given
  only once the game is over (during the game it would reveal hidden information).

Hidden information is kept per seat: every answer is built from one seat's view
(``game.observe``, the text view), never from the state. A bad call (an unknown game or token,
not this seat's turn, an illegal action, a game that is over) is answered with one clear error
line (an MCP tool error) naming the fix; the game is unchanged.

:class:`GameHost` is the same service without MCP (what the tools call); a :class:`Desk` is one
seat of a game run elsewhere (a tournament), answered through the same ``observe``/``act`` tools:
the ``mcp`` player (:mod:`.mcp_player`) seats an agent in a tournament that way.
"""

from __future__ import annotations

import argparse
import functools
import secrets
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arena_core.errors import ArenaError
from arena_core.game import Game, Position
from arena_core.match import Match
from arena_core.players import Decision, Player, begin_episodes, end_episodes
from arena_core.runner import step_player

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


class HostError(ArenaError):
    """A bad call to the game host: one line that names the fix."""


def seat_view(game: Game[Any, Any], pos: Position[Any], seat: int) -> dict[str, Any]:
    """What ``seat`` may know at ``pos``: its observation and text view, whether it acts, its legal
    actions, and the outcome once the game is over (never the hidden state)."""
    waiting = list(game.players_to_act(pos))
    view: dict[str, Any] = {
        "seat": seat,
        "ply": pos.ply,
        "to_act": seat in waiting,
        "waiting_for": waiting,
        "observation": game.observe(pos, seat),
        "text": game.text_view().prompt(game, pos, seat).user,
        "legal_actions": [game.action_to_str(a) for a in game.legal(pos, seat)],
        "done": game.is_over(pos),
    }
    if view["done"]:
        view["returns"] = list(game.final_returns(pos))
    return view


def _action(game: Game[Any, Any], pos: Position[Any], seat: int, action: str, where: str) -> Any:
    legal = game.legal(pos, seat)
    if not legal:
        raise HostError(
            f"{where}: seat {seat} is not to act (waiting for {list(game.players_to_act(pos))}); observe first"
        )
    want = " ".join(str(action).split()).lower()
    for a in legal:
        if " ".join(game.action_to_str(a).split()).lower() == want:
            return a
    names = ", ".join(game.action_to_str(a) for a in legal)
    raise HostError(f"{where}: {str(action)[:200]!r} is not a legal action of seat {seat}; legal: {names}")


@dataclass
class Hosted:
    """A game the host runs: its match and who plays each seat (None: an agent with a token)."""

    game_id: str
    match: Match
    players: dict[int, Player | None]
    params: dict[str, Any]
    ended: bool = False

    def advance(self) -> None:
        """Let the Arena players move until an agent's seat is to act or the game ends."""
        match = self.match
        while (seat := match.to_act()) is not None and self.players.get(seat) is not None:
            player = self.players[seat]
            assert player is not None  # the loop condition says so
            step_player(match, seat, player)
        if match.done and not self.ended:
            self.ended = True
            end_episodes({s: p for s, p in self.players.items() if p is not None}, match)


@dataclass
class Desk:
    """One seat of a game run elsewhere: the runner posts a decision and waits for the answer."""

    label: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    decision: Decision | None = None
    answer: Any = None
    answered: threading.Event = field(default_factory=threading.Event)
    closed: bool = False

    def post(self, decision: Decision, timeout_s: float, gone: Callable[[], str | None] = lambda: None) -> Any:
        """Show ``decision`` to the agent and wait up to ``timeout_s`` for its legal answer;
        ``gone()`` (checked while waiting) says why no answer can come (the agent exited)."""
        with self.lock:
            self.decision, self.answer = decision, None
            self.answered.clear()
        deadline = time.monotonic() + timeout_s
        while not self.answered.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
            why = gone() or (None if time.monotonic() < deadline else f"did not act within {timeout_s:g} s")
            if why:
                with self.lock:
                    self.decision = None
                raise TimeoutError(f"the MCP agent of {self.label}: {why}")
        return self.answer

    def view(self) -> dict[str, Any]:
        with self.lock:
            decision = self.decision
        if decision is None:
            return {"to_act": False, "closed": self.closed, "legal_actions": []}
        return {**decision.view_with(seat_view), "closed": self.closed}

    def act(self, action: str) -> dict[str, Any]:
        with self.lock:
            decision = self.decision
            if decision is None:
                raise HostError(f"{self.label}: no decision is waiting for this seat; observe(wait_s=...) first")
            chosen = decision.view_with(lambda g, p, s: _action(g, p, s, action, self.label))
            self.answer, self.decision = chosen, None
            self.answered.set()
        return {"accepted": game_action_text(decision.game, chosen), "to_act": False}


def game_action_text(game: Game[Any, Any], action: Any) -> str:
    return str(game.action_to_str(action))


class GameHost:
    """Any registered game served to agents by seat tokens (the tools of the module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._games: dict[str, Hosted] = {}
        self._seats: dict[str, tuple[str, int] | Desk] = {}

    # ------------------------------------------------------------------ the tools
    def list_games(self) -> list[dict[str, Any]]:
        from arena_core.registry import availability, game_class, list_plugins

        games = []
        for info in list_plugins("games"):
            if not availability("games", info.name)[0]:
                continue  # an extra missing, or a title its engine cannot run here
            spec = game_class(info.name).spec
            games.append(
                {
                    "game": info.name,
                    "players": [spec.min_players, spec.max_players],
                    "information": spec.information.value,
                    "turns": spec.turn_structure.value,
                    "description": spec.description.split("\n")[0][:200],
                }
            )
        return games

    def new_game(
        self,
        game: str,
        seed: int,
        num_players: int | None = None,
        params: Mapping[str, Any] | None = None,
        opponents: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        from arena_core.registry import make_game, make_player

        if not isinstance(seed, int) or seed < 0:
            raise HostError(f"seed must be a non-negative integer, got {seed!r}")
        made = make_game(game, dict(params or {}), num_players=num_players)
        players: dict[int, Player | None] = dict.fromkeys(range(made.num_players))
        for key, spec in (opponents or {}).items():
            seat = int(key) if str(key).isdigit() else -1
            if seat not in players:
                raise HostError(f"opponents: {key!r} is not a seat of {game} (seats 0..{made.num_players - 1})")
            players[seat] = make_player(spec, seed=seed + seat)
        with self._lock:
            game_id = f"g{len(self._games) + 1}"
            hosted = Hosted(game_id, Match(made, seed), players, made.params.model_dump(mode="json"))
            self._games[game_id] = hosted
            tokens = {}
            for seat, player in players.items():
                if player is None:
                    token = secrets.token_urlsafe(12)
                    self._seats[token] = (game_id, seat)
                    tokens[str(seat)] = token
            begin_episodes({s: p for s, p in players.items() if p is not None}, made, seed)
            hosted.advance()
        return {"game_id": game_id, "game": game, "seed": seed, "num_players": made.num_players, "tokens": tokens}

    def observe(self, token: str, wait_s: float = 0.0) -> dict[str, Any]:
        deadline = time.monotonic() + max(0.0, min(float(wait_s), 300.0))
        while True:
            view = self._view(token)
            if view["to_act"] or view.get("done") or view.get("closed") or time.monotonic() >= deadline:
                return view
            time.sleep(0.02)

    def legal_actions(self, token: str) -> list[str]:
        actions: list[str] = self._view(token)["legal_actions"]
        return actions

    def act(self, token: str, action: str) -> dict[str, Any]:
        seat_of = self._seat(token)
        if isinstance(seat_of, Desk):
            return seat_of.act(action)
        game_id, seat = seat_of
        with self._lock:
            hosted = self._games[game_id]
            match = hosted.match
            if match.done:
                raise HostError(f"{game_id} is over; replay({game_id!r}) gives its record")
            chosen = _action(match.game, match.position, seat, action, game_id)
            match.submit(seat, chosen)
            hosted.advance()
            return seat_view(match.game, match.position, seat)

    def replay(self, game_id: str) -> dict[str, Any]:
        with self._lock:
            hosted = self._games.get(game_id)
            if hosted is None:
                raise HostError(
                    f"unknown game {game_id!r}; new_game returns the ids ({sorted(self._games) or 'none yet'})"
                )
            match = hosted.match
            if not match.done:
                raise HostError(f"{game_id} is not over: its record would reveal hidden information; play it out first")
            record = match.record
            return {
                "game_id": game_id,
                "game": match.game.spec.id,
                "params": hosted.params,
                "num_players": match.game.num_players,
                "seed": match.seed,
                "actions": [[step.player, step.action] for step in record.steps],
                "returns": None if match.end is None or match.end.returns is None else list(match.end.returns),
                "end_reason": None if match.end is None else match.end.reason.value,
                "record": record.model_dump(mode="json"),
            }

    # ------------------------------------------------------------------ desks (seats of games run elsewhere)
    def open_desk(self, label: str) -> tuple[str, Desk]:
        """A new seat token answered by a :class:`Desk` (the ``mcp`` player's seat)."""
        desk = Desk(label)
        token = secrets.token_urlsafe(12)
        with self._lock:
            self._seats[token] = desk
        return token, desk

    # ------------------------------------------------------------------ helpers
    def _seat(self, token: str) -> tuple[str, int] | Desk:
        with self._lock:
            found = self._seats.get(token)
        if found is None:
            raise HostError("unknown seat token; new_game returns one per open seat (pass it exactly)")
        return found

    def _view(self, token: str) -> dict[str, Any]:
        seat_of = self._seat(token)
        if isinstance(seat_of, Desk):
            return seat_of.view()
        game_id, seat = seat_of
        with self._lock:
            match = self._games[game_id].match
            view = seat_view(match.game, match.position, seat)
            if match.end is not None:
                view["end_reason"] = match.end.reason.value
                view["returns"] = None if match.end.returns is None else list(match.end.returns)
            return {"game_id": game_id, **view}


def build_server(host: GameHost | None = None, *, name: str = "arena") -> MCPServer:
    """An MCP server whose tools are ``host``'s (a new :class:`GameHost` by default)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    host = host or GameHost()
    server: MCPServer = MCPServer(name, instructions=__doc__.split("\n\n")[1] if __doc__ else None, log_level="WARNING")

    def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)  # the SDK reads the tool's parameters from the wrapped signature
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except ArenaError as exc:  # HostError and the registry's errors: one line, the fix named
                raise ToolError(str(exc).splitlines()[0]) from None
            except (ValueError, KeyError, TypeError) as exc:
                raise ToolError(f"{fn.__name__}: {exc}") from None

        return call

    @server.tool()
    @tool
    def list_games() -> dict[str, Any]:
        """The games installed here (``games``): id, player counts, information, turn structure, description."""
        return {"games": host.list_games()}

    @server.tool()
    @tool
    def new_game(
        game: str,
        seed: int,
        num_players: int | None = None,
        params: dict[str, Any] | None = None,
        opponents: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Deal a new game of ``game`` from ``seed``; ``opponents`` maps a seat ("1") to an Arena
        player spec ("random"); every other seat gets a token (its only key: give each agent its own)."""
        return host.new_game(game, seed, num_players, params, opponents)

    @server.tool()
    async def observe(token: str, wait_s: float = 0.0) -> dict[str, Any]:
        """Your seat's view: observation, text, whether you act, your legal actions, the outcome when
        over; ``wait_s`` waits up to that many seconds for your turn."""
        import anyio

        try:
            return await anyio.to_thread.run_sync(host.observe, token, wait_s)
        except ArenaError as exc:
            raise ToolError(str(exc).splitlines()[0]) from None

    @server.tool()
    @tool
    def legal_actions(token: str) -> dict[str, Any]:
        """Your legal actions now (``legal_actions``: canonical strings; empty when it is not your turn)."""
        return {"legal_actions": host.legal_actions(token)}

    @server.tool()
    @tool
    def act(token: str, action: str) -> dict[str, Any]:
        """Play ``action`` (one of legal_actions) for your seat; returns your view after it."""
        return host.act(token, action)

    @server.tool()
    @tool
    def replay(game_id: str) -> dict[str, Any]:
        """The finished game's record: game, parameters, seed, every action, returns."""
        return host.replay(game_id)

    return server


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the games to tool-using agents over MCP.

    ``arena mcp`` speaks stdio; ``arena mcp --http PORT`` Streamable HTTP on 127.0.0.1."""
    parser = argparse.ArgumentParser(prog="arena mcp", description="Serve Arena games to tool-using agents over MCP.")
    parser.add_argument("--http", type=int, metavar="PORT", help="Streamable HTTP on 127.0.0.1:PORT (default: stdio)")
    args = parser.parse_args(argv)
    try:
        server = build_server()
    except ImportError as exc:
        print(f"arena mcp needs the MCP SDK: pip install 'turn-arena-players[mcp]' ({exc})", file=sys.stderr)
        return 2
    if args.http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    return 0
