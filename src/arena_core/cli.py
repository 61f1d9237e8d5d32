"""The `arena` command: list plugins, play a game, replay an episode file."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from .clierrors import EXIT_USER_ERROR, OneLineArgumentParser, guarded, non_negative_int, policy_text, positive_int  # noqa: F401 (EXIT_USER_ERROR: re-exported)
from .errors import ArenaError, ConfigError, ReplayDivergenceError

if TYPE_CHECKING:
    import importlib.metadata as md

EXIT_DIVERGENCE = 1


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
    from .registry import GROUPS, availability, list_plugins

    kinds = [args.kind] if args.kind else list(GROUPS)
    for kind in kinds:
        plugins = list_plugins(kind)
        print(f"{kind} ({len(plugins)}):")
        for info in plugins:
            ok, reason = info.available, info.reason
            if ok and not args.no_check:
                ok, reason = availability(kind, info.name)
            status = "available" if ok else f"unavailable: {reason}"
            print(f"  {info.name:<36} {info.distribution:<20} {status}")
        if kind == "games" and not plugins:
            print(
                "  no games installed; get some with: pip install turn-arena-games  (TextArena titles: 'turn-arena-games[textarena]')"
            )
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    from .playerspec import players_from_args
    from .policy import IllegalActionPolicy
    from .registry import make_game, make_player
    from .runner import play_episode
    from .seeding import derive_seed

    params = _parse_params(args.param)
    specs = players_from_args(args)
    names = [s.name for s in specs]  # names only: options may hold secrets
    game = make_game(args.game, params, num_players=len(specs))
    players = [make_player(s, seed=derive_seed(args.seed, "player", i)) for i, s in enumerate(specs)]
    policy = IllegalActionPolicy.parse(args.policy)
    record = play_episode(game, players, args.seed, policy=policy, turn_cap=args.turn_cap, log_path=args.log)
    if not args.quiet:
        print(
            f"{game.spec.id} v{game.spec.version}  seed {args.seed}  players: "
            + ", ".join(f"{i}={n}" for i, n in enumerate(names))
        )
        for event in record.events:
            if event.type == "step":
                what = event.action + (" (substituted by the policy)" if event.substituted else "")
            else:
                what = f"policy {event.verdict}: {event.detail}"
            print(f"  ply {event.ply:>3}  player {event.player} ({names[event.player]}): {what}")
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
        records = replay_file(args.file, game_key=getattr(args, "game", None))
    except ReplayDivergenceError as exc:
        print(f"arena: replay diverged: {exc}", file=sys.stderr)
        return EXIT_DIVERGENCE
    for r in records:
        ending = f"{r.end.reason.value}, returns {r.end.returns}" if r.end is not None else "no end recorded"
        print(f"ok: {r.header.game} seed {r.header.seed}: {len(r.steps)} steps, {ending}")
    print(f"{len(records)} episode(s) replayed exactly")
    return 0


def build_parser() -> argparse.ArgumentParser:
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
    p.set_defaults(func=cmd_play)

    p = sub.add_parser("replay", help="re-run an episode file and verify it step by step")
    p.add_argument("file", help="an episode file, or a tournament's output directory / records.jsonl.gz")
    p.add_argument("--game", default=None, metavar="KEY", help="only this game of a tournament's records")
    p.set_defaults(func=cmd_replay)
    sub.add_parser("check", help="run the conformance kit on a game: one line per check", add_help=False)
    for name, ep in sorted(_plugin_commands().items()):
        sub.add_parser(name, help=f"from {ep.value.split(':')[0]} (plugin command)", add_help=False)
    return parser


#: commands that Arena's other distributions register through ``arena.commands``: only the
#: install hint for a user who types one without the distribution lives here
_COMMANDS_ELSEWHERE = {
    **dict.fromkeys(("tournament", "ratings", "report", "compare", "export"), "turn-arena-tournament"),
    "study": "'turn-arena-games[study]'",
    "train": "turn-arena-train",
}


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
    if name in _COMMANDS_ELSEWHERE:

        def missing(args: list[str]) -> int:
            raise ConfigError(
                f"`arena {name}` comes with another distribution; fix: pip install {_COMMANDS_ELSEWHERE[name]}"
            )

        return "arena", missing, rest
    return None


def _main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
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
