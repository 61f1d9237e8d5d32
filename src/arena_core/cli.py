"""The `arena` command: list plugins, play a game, replay an episode file."""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .clierrors import EXIT_USER_ERROR as EXIT_USER_ERROR  # re-exported
from .clierrors import OneLineArgumentParser, guarded, non_negative_int, one_line, policy_text, positive_int
from .errors import ArenaError, ConfigError, IllegalActionError, ReplayDivergenceError

if TYPE_CHECKING:
    import importlib.metadata as md

    from .episode import Header
    from .game import Game, Position

EXIT_DIVERGENCE = 1


def summary(obj: Any, width: int = 100) -> str:
    """The first sentence of ``obj``'s own docstring on one line (what `arena --help` says of a plugin
    command and `arena list` of a player or trainer: taken from the plugin, never from a table here)."""
    import re

    text = " ".join(inspect.cleandoc(obj.__doc__ or "").split("\n\n")[0].split())
    text = re.split(r"(?<=\.)\s", re.sub(r":\w+:`~?([^`]*)`", r"\1", text).replace("``", "`"), maxsplit=1)[0]
    return text if len(text) <= width else text[: width - 1] + "…"


def _parse_params(items: Sequence[str]) -> dict[str, Any]:
    params = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise ArenaError(f"--param {item!r} must look like key=value (for example --param chart=B)")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            params[key] = value
    return params


def cmd_list(args: argparse.Namespace) -> int:
    """One line a plugin: name, distribution, and whether it loads here, else why; a player's or
    trainer's line ends with the first sentence of its docstring."""
    from .registry import GROUPS, availability, list_plugins, load

    for kind in [args.kind] if args.kind else list(GROUPS):
        plugins = list_plugins(kind)
        print(f"{kind} ({len(plugins)}):")
        width = max((len(info.name) for info in plugins), default=0)
        for info in plugins:
            ok, reason = info.available, info.reason
            if ok and not args.no_check:
                ok, reason = availability(kind, info.name)
            about = f"  {summary(load(kind, info.name))}" if ok and kind != "games" and not args.no_check else ""
            status = f"available{about}" if ok else f"unavailable: {one_line(reason)}"
            print(f"  {info.name:<{width}}  {info.distribution:<18} {status}")
        if kind == "games" and not plugins:
            print(
                "  no games installed; get some with: pip install turn-arena-games  (TextArena titles: 'turn-arena-games[textarena]')"
            )
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from .playerspec import players_from_args
    from .policy import IllegalActionPolicy
    from .registry import make_game, make_player
    from .replay import replay
    from .runner import play_episode
    from .seeding import derive_seed

    specs = players_from_args(args)
    names = [s.name for s in specs]  # names only: options may hold secrets
    game = make_game(args.game, _parse_params(args.param), num_players=len(specs))
    if args.show:
        _human_view(game)  # no human view: said before the game is played
    players = [make_player(s, seed=derive_seed(args.seed, "player", i)) for i, s in enumerate(specs)]
    policy = IllegalActionPolicy.parse(args.policy)
    try:
        record = play_episode(game, players, args.seed, policy=policy, turn_cap=args.turn_cap, log_path=args.log)
    except IllegalActionError as exc:  # --policy raise: say which policies play on
        who = "a player" if exc.player is None else f"player {exc.player} ({names[exc.player]})"
        raise ArenaError(
            f"{who}: {exc}; --policy raise (the default) stops at the first "
            "unreadable or illegal answer: --policy retry:3 asks again, default plays the game's default action, "
            "penalize ends the game against the player"
        ) from None
    if not args.quiet:
        try:  # replayed from its record: positions for --show, actions by the game's names for them
            replay(record, game, on_event=transcript(args.show, names))
        except ReplayDivergenceError as exc:
            print(f"(the transcript stops here: {game.spec.id} does not replay its own episode: {exc})")
    end = record.end
    assert end is not None  # play_episode plays to the end
    if end.returns is None:
        print(f"result: no result: cut off by the harness ({end.reason.value}) after {end.ply} decisions")
    else:
        scores = ", ".join(f"player {i} ({names[i]}): {r:g}" for i, r in enumerate(end.returns))
        extra = f", offender player {end.offender}" if end.offender is not None else ""
        print(f"result ({end.reason.value}{extra}): {scores}")
    if args.log:
        print(f"episode written to {args.log}")
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from .replay import replay_file

    try:
        records = replay_file(args.file, game_key=args.game, on_event=transcript(True) if args.show else None)
    except ReplayDivergenceError as exc:
        print(f"arena: replay diverged: {exc}", file=sys.stderr)
        return EXIT_DIVERGENCE
    for r in records:
        ending = f"{r.end.reason.value}, returns {r.end.returns}" if r.end is not None else "no end recorded"
        print(f"ok: {r.header.game} seed {r.header.seed}: {len(r.steps)} steps, {ending}")
    print(f"{len(records)} episode(s) replayed exactly")
    return 0


def _human_view(game: Game[Any, Any]) -> Any:
    if "human" not in game.views():
        raise ConfigError(f"{game.spec.id} has no human view to show; fix: pip install turn-arena-players")
    return game.views()["human"]()


def transcript(show: bool, names: Sequence[str] = ()) -> Callable[[Game[Any, Any], Header, Position[Any], Any], None]:
    """An ``on_event`` for :func:`~arena_core.replay.replay` that prints the header, then one line a
    decision with the action by the game's name for it (``Game.action_label``); with ``show``, the
    acting seat's human view before each decision and the final position (every seat's when
    information is hidden)."""

    printed: list[Header] = []

    def on_event(game: Game[Any, Any], header: Header, pos: Position[Any], event: Any) -> None:
        from .spec import Information

        who = list(names or header.players) or ["?"] * game.num_players

        def sees(seat: int, lead: str = "") -> None:
            if show:
                lines = _human_view(game).render(game, pos, seat).splitlines()
                print(f"  {lead}player {seat} ({who[seat]}) sees:", *("      " + line for line in lines), sep="\n")

        if not printed or printed[-1] is not header:
            printed.append(header)
            seats = ", ".join(f"{i}={n}" for i, n in enumerate(who))
            print(f"{header.game} v{header.game_version}  seed {header.seed}  players: {seats}")
        if event.type == "end":
            for seat in range(1 if game.spec.information is Information.PERFECT else game.num_players):
                sees(seat, "at the end, ")
            return
        sees(event.player)
        if event.type == "step":
            action = event.action if event.action_id < 0 else game.action_from_id(event.action_id)
            what = game.action_label(pos.state, event.player, action)
            what += " (substituted by the policy)" if event.substituted else ""
        else:
            what = f"policy {event.verdict}: {event.detail}"
        print(f"  ply {event.ply:>3}  player {event.player} ({who[event.player]}): {what}")

    return on_event


def build_parser(*, describe: bool = False) -> argparse.ArgumentParser:
    """The `arena` parser; ``describe`` (for --help) imports each plugin command for its description."""
    parser = OneLineArgumentParser(prog="arena", description="Turn-based multi-agent games, players and trainers.")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list registered games, players and trainers")
    p.add_argument("kind", nargs="?", choices=["games", "players", "trainers"])
    p.add_argument("--check", action="store_true", help="(the default) import each plugin to confirm it works here")
    p.add_argument("--no-check", action="store_true", help="read package metadata only; import nothing")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("play", help="play one seeded game and print the transcript")
    p.add_argument("game")
    from .playerspec import add_player_arguments

    add_player_arguments(p)  # --players a,b and repeatable --player NAME key=value ... (see playerspec)
    p.add_argument("--seed", type=non_negative_int, default=0)
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="game parameter (repeatable)")
    p.add_argument(
        "--policy",
        type=policy_text,
        default="raise",
        help="illegal-action policy: raise, penalize, default, retry:K[:default]",
    )
    p.add_argument("--turn-cap", type=positive_int, default=None, help="truncate after this many decisions")
    p.add_argument("--log", default=None, help="append the episode as JSON lines to this file")
    p.add_argument("--quiet", action="store_true", help="print only the result")
    p.add_argument("--show", action="store_true", help="show each position through the game's human view")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("replay", help="re-run an episode file and verify it step by step")
    p.add_argument("file", help="an episode file, or a tournament's output directory / records.jsonl.gz")
    p.add_argument("--game", default=None, metavar="KEY", help="only this game of a tournament's records")
    p.add_argument("--show", action="store_true", help="print every decision and position (the game's human view)")
    p.set_defaults(func=cmd_replay)
    sub.add_parser("check", help="run the conformance kit on a game: one line per check", add_help=False)
    for name, ep in sorted(_plugin_commands().items()):
        sub.add_parser(name, help=_command_help(ep) if describe else None, add_help=False)
    return parser


def _command_help(ep: md.EntryPoint) -> str:
    try:
        text = summary(ep.load()).rstrip(".") or f"from {ep.module}"
    except Exception:  # a command whose extra is missing: --help still lists it
        return f"from {ep.module} (cannot be imported here)"
    return text[:1].lower() + text[1:]  # as argparse writes its own


def _plugin_commands() -> dict[str, md.EntryPoint]:
    """Sub-commands registered by plugins in the ``arena.commands`` entry-point group."""
    import importlib.metadata as md

    return {ep.name: ep for ep in md.entry_points(group="arena.commands")}


def _delegate(argv: list[str]) -> tuple[str, Callable[..., int | None], list[str]] | None:
    """The command ``argv`` names when another module runs it (``check``, a plugin command, or one
    whose distribution is missing), as (its name for messages, its body, its arguments)."""
    if not argv:
        return None
    name, rest = argv[0], argv[1:]
    if name == "check":
        from .check_cli import main as check_main

        return "arena check", check_main, rest
    commands = _plugin_commands()
    if name in commands:

        def run_plugin(args: list[str]) -> int | None:
            try:
                fn = commands[name].load()
            except ImportError as exc:
                raise ArenaError(
                    f"the `{name}` command needs an extra that is not installed ({exc}); see `arena list --check`"
                ) from None
            code: int | None = fn(args)
            return code

        return f"arena {name}", run_plugin, rest
    from .registry import provider  # where a command of Arena's own comes from (generated data)

    dist = provider("commands", name)
    if dist is not None:

        def missing(args: list[str]) -> int:
            fix = f"'{dist}'" if "[" in dist else dist
            raise ConfigError(f"`arena {name}` comes with another distribution; fix: pip install {fix}")

        return "arena", missing, rest
    return None


def _main(argv: list[str]) -> int:
    args = build_parser(describe=argv[:1] in (["-h"], ["--help"])).parse_args(argv)
    code: int = args.func(args)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """The `arena` command; each command runs inside one error funnel (:func:`~arena_core.clierrors.guarded`),
    named after it (``arena tournament: error: ...``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    delegated = _delegate(args)
    if delegated is None:
        return guarded("arena", _main, args)
    prog, body, rest = delegated
    return guarded(prog, body, rest)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
