"""Every bad input: one line, exit 2, no traceback.

The property tests draw commands and options from the CLI's own argparse parsers (walked at run
time, so a command added later is covered without editing this file), put at least one input in
each command line that is wrong by construction, run ``arena`` in-process and hold the invariant:
non-zero exit, at most a few lines on stderr, no traceback, and never an "internal error" (a bug
found by the search). Configs, results files and episode files are damaged the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena_core import clierrors
from arena_core.cli import build_parser, main
from arena_tournament.cli import non_negative_float

MAX_STDERR_LINES = 3


# ---------------------------------------------------------------------- running arena in-process
def run_arena(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        os.chdir(old)
    return code, out.getvalue(), err.getvalue()


def assert_one_clear_line(argv, code, out, err, *, allowed_codes=(2,)):
    shown = f"arena {' '.join(map(str, argv))}\nexit {code}\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}"
    assert code != 0, "bad input accepted:\n" + shown
    assert "Traceback" not in out + err, shown
    assert "internal error" not in err, "a bug, found by the search:\n" + shown
    assert code in allowed_codes, shown
    lines = [line for line in err.splitlines() if line.strip()]
    assert 1 <= len(lines) <= MAX_STDERR_LINES, shown


# ---------------------------------------------------------------------- the parsers, walked
class _Captured(BaseException):
    def __init__(self, parser):
        super().__init__()
        self.parser = parser


def _capture_parser(name: str, cwd: Path) -> argparse.ArgumentParser | None:
    """The parser a delegated command builds inside its own main (caught at parse time)."""
    real = argparse.ArgumentParser.parse_known_args

    def grab(self, args=None, namespace=None):
        raise _Captured(self)

    argparse.ArgumentParser.parse_known_args = grab
    try:
        run_arena([name], cwd)
    except _Captured as got:
        return got.parser
    finally:
        argparse.ArgumentParser.parse_known_args = real
    return None  # the command could not be loaded here (an extra missing): nothing to walk


def _subparsers(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def discover_commands(cwd: Path) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every command path (('play',), ('tournament',), ...) with the parser that reads it."""
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}

    def walk(path: tuple[str, ...], parser: argparse.ArgumentParser) -> None:
        subs = list(_subparsers(parser))
        if not subs:
            found[path] = parser
        for name, sub in subs:
            if not [a for a in sub._actions if not isinstance(a, argparse._HelpAction)] and not path:
                sub = _capture_parser(name, cwd)  # a placeholder: the real parser lives in the command
                if sub is None:
                    continue
            walk(path + (name,), sub)

    walk((), build_parser())
    return found


# ---------------------------------------------------------------------- input files, good and bad
@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad_inputs")
    episode = root / "game.jsonl"
    assert (
        run_arena(
            ["play", "kuhn_poker", "--players", "random,first_legal", "--seed", "3", "--log", str(episode), "--quiet"],
            root,
        )[0]
        == 0
    )
    config = root / "tiny.toml"
    config.write_text(
        'name = "tiny"\ngame = "kuhn_poker"\nentrants = ["random", "first_legal"]\ndeals = 1\noutput = "tiny-out"\n'
    )
    code, _, err = run_arena(["tournament", str(config), "--quiet", "--no-report"], root)
    assert code == 0, err
    results = root / "tiny-out" / "results.jsonl"
    assert results.exists()
    files = {"episode": episode, "config": config, "results": results}
    bad = damaged_files(root, files)
    commands = discover_commands(root)
    return World(root=root, good=files, bad=bad, commands=commands)


class World(dict):
    """The fixture's files and parsers (a short repr in hypothesis's reports)."""

    def __init__(self, **kw):
        super().__init__(**kw)

    def __repr__(self) -> str:
        return "world"


def damaged_files(root: Path, good: dict[str, Path]) -> dict[str, list[Path]]:
    """Files that no command may accept: damaged copies of good ones, and the generic kinds."""
    d = root / "damaged"
    d.mkdir()

    def put(name: str, data: str | bytes) -> Path:
        p = d / name
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        return p

    ep = good["episode"].read_text().splitlines()
    res = good["results"].read_text().splitlines()
    game = json.loads(res[1])
    step = json.loads(ep[1])
    generic = [
        put("empty.txt", ""),
        put("binary.bin", b"\x00\xff\xfe garbage \x80"),
        put("prose.txt", "hello\nworld\n"),
        root / "no-such-file.jsonl",
        d,
    ]  # a directory where a file belongs
    episodes = [
        put("cut-mid-game.jsonl", "\n".join(ep[:2]) + "\n"),  # what a kill leaves
        put("no-end-line.jsonl", "\n".join(ep[:-1]) + "\n"),  # complete steps, end line removed
        put("torn-line.jsonl", "\n".join(ep[:1]) + "\n" + ep[1][: len(ep[1]) // 2]),
        put(
            "step-missing-field.jsonl",
            "\n".join([ep[0], json.dumps({k: v for k, v in step.items() if k != "action_id"})] + ep[2:]) + "\n",
        ),
        put("telemetry-not-json.jsonl", "\n".join([ep[0], json.dumps({**step, "telemetry": "[1, 2"})] + ep[2:]) + "\n"),
        put("no-header.jsonl", "\n".join(ep[1:]) + "\n"),
    ]
    results = [
        put(
            "game-missing-field.jsonl",
            "\n".join([res[0], json.dumps({k: v for k, v in game.items() if k != "seats"})] + res[2:]) + "\n",
        ),
        put("game-wrong-type.jsonl", "\n".join([res[0], json.dumps({**game, "returns": "lots"})] + res[2:]) + "\n"),
        put("schedule-only-broken.jsonl", res[0][: len(res[0]) // 2] + "\n" + "\n".join(res[1:]) + "\n"),
        put("no-schedule.jsonl", "\n".join(res[1:]) + "\n"),
        put("unknown-line.jsonl", "\n".join(res + [json.dumps({"type": "mystery"})]) + "\n"),
    ]
    configs = [put(f"config-{i}.toml", text) for i, text in enumerate(BAD_CONFIG_SNIPPETS)] + [
        put("config.yaml", "game: [unclosed\n"),
        put("config.ini", "[x]\n"),
        put("config.toml", "game = \n"),
    ]
    return {"generic": generic, "episode": episodes, "results": results, "config": configs}


_BASE = 'name = "t"\ngame = "kuhn_poker"\nentrants = ["random", "first_legal"]\noutput = "cfg-out"\n'
BAD_CONFIG_SNIPPETS = [
    _BASE + "deals = true\n",
    _BASE + "deals = 1000000000000\n",
    _BASE + 'design = "no-such-design"\n',
    _BASE + "num_players = 3\n",
    _BASE + "[run]\nworkers = -3\n",
    _BASE + '[run]\npolicy = "explode"\n',
    _BASE.replace('"first_legal"', '"random:foo=1"'),
    _BASE.replace('"first_legal"', '"no_such_player"'),
    _BASE.replace("kuhn_poker", "no_such_game"),
    _BASE + "deals = [1, 1]\n",
    _BASE.replace('output = "cfg-out"', 'output = "${ARENA_TEST_UNSET_VARIABLE}"'),
]


# ---------------------------------------------------------------------- drawing command lines
_OUR_TYPES = {clierrors.non_negative_int: "-3", clierrors.positive_int: "0", non_negative_float: "-5"}
_FILE_DESTS = {"file": "episode", "config": "config", "results": "results"}


def _positionals(parser):
    return [a for a in parser._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]


def _optionals(parser):
    return [
        a
        for a in parser._actions
        if a.option_strings and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))
    ]


@st.composite
def good_value(draw, action, world):
    """A plausible value for ``action`` (maybe valid, maybe not: only the poison must be bad)."""
    if action.choices:
        return draw(st.sampled_from(sorted(map(str, action.choices))))
    kind = _FILE_DESTS.get(action.dest)
    if kind is not None:
        return str(world["good"][kind])
    if action.dest == "game":
        return draw(st.sampled_from(["kuhn_poker", "matrix", "textarena/Nim-v0"]))
    if action.dest in ("players", "player"):
        return draw(st.sampled_from(["random,random", "random,first_legal", "random"]))
    if action.dest in ("out", "run_dir", "log"):
        return str(world["root"] / "outs" / draw(st.sampled_from(["a", "b", "c.jsonl"])))
    if action.type in (int, clierrors.non_negative_int, clierrors.positive_int):
        return str(draw(st.integers(1, 3)))
    if action.type in (float, non_negative_float):
        return draw(st.sampled_from(["0.5", "1"]))
    return draw(st.sampled_from(["x", "1", "a=b", "random"]))


@st.composite
def poison(draw, parser, world):
    """One input this command must refuse, and where it goes: ('option', [...]) adds words,
    ('positional', dest, value) replaces a positional, ('drop', dest) leaves a required option out."""
    options = _optionals(parser)
    choices = []
    choices.append(("option", ["--no-such-option-" + draw(st.sampled_from(["x", "zz"]))]))
    for a in options:
        flag = a.option_strings[-1]
        if a.nargs == 0:
            continue
        if a.choices:
            choices.append(("option", [flag, "not-a-choice"]))
        if a.type in _OUR_TYPES:
            choices.append(("option", [flag, _OUR_TYPES[a.type]]))
        if a.type in (int, float) or a.type in _OUR_TYPES:
            choices.append(
                ("option", [flag, draw(st.sampled_from(["abc", "1.5.2", "", "nan" if a.type is int else "ten"]))])
            )
        if a.dest == "policy":
            choices.append(
                ("option", [flag, draw(st.sampled_from(["explode", "retry:x", "retry:0", "retry:1:nope", ":"]))])
            )
        if a.dest == "players":
            choices.append(
                (
                    "option",
                    [flag, draw(st.sampled_from(["random:foo=1,random", "no_such_player,random", ",", "random{"]))],
                )
            )
        if a.dest == "param":
            choices.append(("option", [flag, draw(st.sampled_from(["oops", "=1", "depth=3"]))]))
        if a.dest == "out" and parser.prog in ("arena tournament", "arena report") or a.dest == "log":
            # commands that always write there (others write their --out only sometimes)
            choices.append(("option", [flag, str(world["bad"]["generic"][1]) + "/under-a-file"]))
        if a.required:
            choices.append(("drop", a.dest))
    for a in _positionals(parser):
        kind = _FILE_DESTS.get(a.dest)
        if kind is not None:
            pool = world["bad"][kind] + world["bad"]["generic"]
            choices.append(("positional", a.dest, str(draw(st.sampled_from(pool)))))
        elif a.dest == "game":
            choices.append(
                ("positional", a.dest, draw(st.sampled_from(["no_such_game", "kuhn_pokr", "textarena/Nope-v0", ""])))
            )
        elif a.choices:
            choices.append(("positional", a.dest, "not-a-choice"))
    return draw(st.sampled_from(choices))


@st.composite
def bad_command_lines(draw, world):
    commands = world["commands"]
    path = draw(st.sampled_from(sorted(commands)))
    parser = commands[path]
    bad = draw(poison(parser, world))
    argv = list(path)
    for a in _positionals(parser):
        if bad[0] == "positional" and bad[1] == a.dest:
            argv.append(bad[2])
        elif a.nargs not in ("?", "*") or draw(st.booleans()):
            argv.append(draw(good_value(a, world)))
    for a in _optionals(parser):
        if bad[0] == "drop" and bad[1] == a.dest:
            continue
        if bad[0] == "option" and bad[1][0] in a.option_strings:
            continue  # given once, as the poison (a later good value would override it)
        if not (a.required or draw(st.integers(0, 3)) == 0):
            continue
        argv.append(a.option_strings[-1])
        if a.nargs != 0:
            argv.append(draw(good_value(a, world)))
    if bad[0] == "option":
        at = draw(st.integers(len(path), len(argv)))
        argv[at:at] = bad[1]
    return argv


def test_the_walk_finds_every_command(world):
    """Commands delegated to their own parsers (tournament, ratings, report, check, plugins) are
    walked like the built-in ones; so is a command added later."""
    found = {p[0] for p in world["commands"]}
    assert {"list", "play", "replay", "tournament", "ratings", "report"} <= found
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    loadable = {
        n
        for n, p in sub.choices.items()
        if _optionals(p) or _positionals(p) or _capture_parser(n, world["root"]) is not None
    }
    assert found == loadable
    assert any(a.dest == "workers" for a in _optionals(world["commands"][("tournament",)]))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(data=st.data())
def test_bad_command_lines_exit_2_with_one_line(world, data):
    argv = data.draw(bad_command_lines(world), label="argv")
    code, out, err = run_arena(argv, world["root"])
    divergence_ok = (2, 1) if argv[:1] == ["replay"] and "replay diverged" in err else (2,)
    assert_one_clear_line(argv, code, out, err, allowed_codes=divergence_ok)


# ---------------------------------------------------------------------- configs, drawn
BAD_FIELD_VALUES = {
    "deals": [True, False, 0, -1, 10**12, "many", [], [1, 1], [-1], [True], {"x": 1}],
    "seed": [-1, "x", True, 1.5, None],
    "design": ["nope", 3, None],
    "num_players": [0, -1, 3, 99, True, "two"],
    "entrants": [
        [],
        ["random"],
        "random",
        [{"name": "a"}],
        ["no_such_player", "random"],
        ["random:foo=1", "random"],
        ["random", "random"],
        [{"name": "a/b", "player": "random"}, "random"],
        [3, 4],
    ],
    "game": ["no_such_game", 3, "", None],
    "tables": [0, -2, 10**12, "x"],
    "params": ["x", [1], {"depth": 3}],
    "run": [
        {"workers": -3},
        {"workers": 0},
        {"policy": "explode"},
        {"policy": "raise"},
        {"turn_cap": 0},
        {"backend": "gpu"},
        {"game_time_limit_s": -1},
        {"no_such": 1},
        "fast",
    ],
    "ratings": [{"bootstrap": -5}, {"seed": -1}, {"regularization": -1}, {"min_pair_games": 0}, 7],
    "no_such_key": [1],
}


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    raise ValueError(value)


try:
    import yaml  # noqa: F401

    _HAVE_YAML = True
except ImportError:
    _HAVE_YAML = False


@st.composite
def bad_configs(draw):
    base = {"name": "t", "game": "kuhn_poker", "entrants": ["random", "first_legal"], "deals": 1, "output": "cfg-out"}
    bad_keys = draw(st.lists(st.sampled_from(sorted(BAD_FIELD_VALUES)), min_size=1, max_size=3, unique=True))
    for key in bad_keys:
        value = draw(st.sampled_from(BAD_FIELD_VALUES[key]))
        if value is None:
            base.pop(key, None)
            if key in ("game",):
                continue
            base[key] = "${ARENA_TEST_UNSET_VARIABLE}"  # an unset environment variable
        else:
            base[key] = value
    fmt = draw(st.sampled_from(["toml", "yaml"] if _HAVE_YAML else ["toml"]))
    if fmt == "toml":
        return "toml", "\n".join(f"{k} = {_toml(v)}" for k, v in base.items()) + "\n"
    return "yaml", json.dumps(base)  # JSON is YAML


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    config=bad_configs(),
    command=st.sampled_from(
        [["tournament"], ["tournament", "--quiet"], ["tournament", "--no-report", "--max-games", "1"]]
    ),
)
def test_bad_configs_exit_2_with_one_line(world, config, command):
    path = world["root"] / f"drawn.{config[0]}"
    path.write_text(config[1])
    argv = [command[0], str(path), *command[1:]]
    code, out, err = run_arena(argv, world["root"])
    assert_one_clear_line(argv, code, out, err)


# ---------------------------------------------------------------------- the cases of the issue, by name
CASES = [
    (["replay", "{bad}/cut-mid-game.jsonl"], "incomplete"),
    (["replay", "{bad}/no-end-line.jsonl"], "no end line"),
    (["replay", "{bad}/telemetry-not-json.jsonl"], "telemetry"),
    (["ratings", "{bad}/game-missing-field.jsonl"], "seats: Field required"),
    (["report", "{bad}/game-missing-field.jsonl"], "seats: Field required"),
    (["tournament", "{good}/tiny.toml", "--workers", "-3"], "--workers: -3 is not >= 1"),
    (["tournament", "{good}/tiny.toml", "--max-games", "-1"], "--max-games: -1 is not >= 0"),
    (["ratings", "{good}/tiny-out", "--bootstrap", "-5"], "--bootstrap: -5 is not >= 0"),
    (["tournament", "{bad}/config-0.toml"], "not true/false"),
    (["tournament", "{bad}/config-1.toml"], "more than 1000000 deals"),
    (["tournament", "{bad}/config-2.toml"], "design"),
    (["tournament", "{bad}/config-3.toml"], "cannot fill a 3-player table"),
    (["tournament", "{good}/tiny.toml", "--out", "{bad}/empty.txt/out"], "empty.txt"),
    (["play", "kuhn_poker", "--players", "random:foo=1,random"], "takes no options; remove foo"),
    (["play", "kuhn_poker", "--players", "random,random", "--policy", "retry:x"], "is not a policy"),
    (["play", "kuhn_poker", "--players", "random,random", "--policy", "explode"], "is not a policy"),
]


@pytest.mark.parametrize("argv,message", CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_the_issues_cases(world, argv, message):
    root = world["root"]
    argv = [a.format(bad=root / "damaged", good=root) for a in argv]
    code, out, err = run_arena(argv, root)
    assert_one_clear_line(argv, code, out, err)
    assert message in err, err
    assert re.match(r"arena( \w+)?: error: ", err), err


def test_a_bug_is_not_dressed_as_a_user_error(monkeypatch, capsys):
    """An exception that is not about the input is an internal error: exit 1, one line that says
    so; ARENA_DEBUG=1 shows the traceback."""
    import arena_core.cli as cli

    def broken(args):
        raise KeyError("oops")

    monkeypatch.setattr(cli, "cmd_list", broken)
    monkeypatch.setattr(cli, "build_parser", _parser_with(cli, broken))
    assert main(["list"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: KeyError" in err and "ARENA_DEBUG=1" in err
    monkeypatch.setenv("ARENA_DEBUG", "1")
    with pytest.raises(KeyError):
        main(["list"])


def _parser_with(cli, fn):
    real = cli.build_parser

    def build(**kwargs):
        parser = real(**kwargs)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices["list"].set_defaults(func=fn)
        return parser

    return build


def test_telemetry_that_is_not_json_is_kept_as_text_and_named(tmp_path):
    """A player whose telemetry holds objects JSON cannot write: the record keeps their repr and
    names them under ``not_json`` (visible data), instead of crashing when the line is written."""
    from arena_core.players import Move
    from arena_core.registry import make_game
    from arena_core.replay import replay_file
    from arena_core.runner import play_episode
    from arena_players.scripted import FirstLegalPlayer

    class Odd(FirstLegalPlayer):
        def act(self, decision):
            return Move(
                decision.legal_actions[0], {"obj": object(), "ok": 1, "nested": {"s": {1, 2}, "fine": [1, "x"]}}
            )

    log = tmp_path / "odd.jsonl"
    record = play_episode(make_game("kuhn_poker"), [Odd(), Odd()], 0, log_path=log)
    tel = record.steps[0].telemetry
    assert set(tel["not_json"]) == {"obj", "nested.s"} and tel["ok"] == 1 and tel["nested"]["fine"] == [1, "x"]
    assert tel["obj"].startswith("<object object")
    written = json.loads(log.read_text().splitlines()[1])["telemetry"]
    assert written["nested"]["s"] == "{1, 2}"
    assert len(replay_file(log)) == 1
