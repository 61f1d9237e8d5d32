"""The arena command: listing, playing, replaying, and one clear line for user errors."""

import importlib.util
import json
import re
import subprocess
import sys

import pytest

ARENA = [sys.executable, "-m", "arena_core.cli"]


def first_sentence(doc):
    """The first sentence of a docstring's first paragraph, on one line."""
    return re.split(r"(?<=\.)\s", " ".join(doc.split("\n\n")[0].split()), maxsplit=1)[0]


def run(*args):
    return subprocess.run(ARENA + list(args), capture_output=True, text=True, timeout=120)


def test_list_shows_games_and_players():
    out = run("list")
    assert out.returncode == 0
    assert "kuhn_poker" in out.stdout and "random" in out.stdout and "trainers" in out.stdout
    lines = out.stdout.splitlines()
    # a player's or trainer's line ends with its own docstring's first sentence (taken from the plugin)
    from arena_players.random_player import RandomPlayer

    first = first_sentence(RandomPlayer.__doc__)
    assert any(line.split()[0] == "random" and line.endswith(first) for line in lines), out.stdout
    players = lines[lines.index(next(x for x in lines if x.startswith("players ("))) + 1 :]
    players = players[: players.index(next(x for x in players if x.startswith("trainers (")))]
    assert all(len(line.split("available", 1)[1].strip()) > 10 for line in players), players
    # an unavailable title: one line, its reason once, no exception text before it
    unavailable = [line for line in lines if " unavailable: " in line]
    assert not [x for x in unavailable if re.match(r"\w+(Error|Exception): ", x.split(" unavailable: ")[1])]
    assert not any("cannot be imported" in line or "is unavailable here" in line for line in unavailable)
    pytest.importorskip("textarena")
    from arena_games.textarena.titles import UNAVAILABLE

    for env_id, reason in UNAVAILABLE.items():
        (line,) = [x for x in lines if x.split()[:1] == [f"textarena/{env_id}"]]
        assert line.split()[1:3] == ["turn-arena", "unavailable:"] and line.endswith(f"unavailable: {reason}"), line


def test_play_prints_transcript_and_result_and_replays(tmp_path):
    log = tmp_path / "game.jsonl"
    out = run("play", "kuhn_poker", "--players", "random,first_legal", "--seed", "7", "--log", str(log))
    assert out.returncode == 0, out.stderr
    assert "ply   0  player 0 (random)" in out.stdout and "result (natural)" in out.stdout
    again = run("play", "kuhn_poker", "--players", "random,first_legal", "--seed", "7")
    assert again.stdout.splitlines()[:-1] == out.stdout.splitlines()[:-2]  # same seed, same game
    rep = run("replay", str(log))
    assert rep.returncode == 0 and "replayed exactly" in rep.stdout


def test_replay_divergence_exits_nonzero(tmp_path):
    log = tmp_path / "game.jsonl"
    run("play", "kuhn_poker", "--players", "random,random", "--seed", "1", "--log", str(log))
    lines = log.read_text().splitlines()
    end = json.loads(lines[-1])
    end["returns"] = [r + 1 for r in end["returns"]]
    log.write_text("\n".join(lines[:-1] + [json.dumps(end)]) + "\n")
    rep = run("replay", str(log))
    assert rep.returncode == 1
    assert "replay diverged" in rep.stderr and "returns" in rep.stderr and "Traceback" not in rep.stderr


@pytest.mark.parametrize(
    "args,message",
    [
        (("play", "kuhn_pokr", "--players", "random,random"), "did you mean kuhn_poker"),
        (("play", "kuhn_poker", "--players", "random"), "played by 2 players, not 1"),
        (
            ("play", "kuhn_poker", "--players", "random,random", "--param", "depth=3"),
            "invalid parameters for kuhn_poker",
        ),
        (("play", "kuhn_poker", "--players", "random,rnadom"), "did you mean random"),
        (("play", "kuhn_poker", "--players", "random,random", "--param", "oops"), "key=value"),
        (("play", "kuhn_poker", "--players", "random,random", "--policy", "explode"), "is not a policy; use raise"),
        (("replay", "/nonexistent/file.jsonl"), "No such file"),
    ],
)
def test_user_errors_are_one_clear_line(args, message):
    out = run(*args)
    assert out.returncode == 2
    assert message in out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("arena: error:")


def test_turn_cap_reports_no_result():
    out = run("play", "kuhn_poker", "--players", "random,random", "--turn-cap", "1", "--seed", "0")
    assert out.returncode == 0
    assert "no result: cut off by the harness (turn_cap)" in out.stdout


@pytest.mark.parametrize(
    "command,expected", [("tournament", "config"), ("ratings", "results"), ("study", "--player"), ("train", "config")]
)
def test_delegated_sub_commands_are_reachable(command, expected):
    out = run(command, "--help")
    assert out.returncode == 0, out.stderr
    assert expected in out.stdout


def _undocumented_command(argv):
    return 0


def test_help_describes_each_plugin_command_from_its_own_docstring(capsys, monkeypatch):
    import importlib.metadata as md

    from arena_core import cli

    assert cli.main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps the help column
    assert "(plugin command)" not in text
    for ep in md.entry_points(group="arena.commands"):
        first = first_sentence(ep.load().__doc__).rstrip(".")
        assert f"{ep.name} {first[0].lower()}{first[1:]}" in text, (ep.name, first)
    # a command without a docstring, and one that cannot be imported, still show, named by their module
    ghosts = {
        "bare": md.EntryPoint("bare", "test_cli:_undocumented_command", "arena.commands"),
        "ghost": md.EntryPoint("ghost", "no_such_module_here:main", "arena.commands"),
    }
    monkeypatch.setattr(cli, "_plugin_commands", lambda: ghosts)
    assert cli.main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "bare from test_cli" in text and "ghost from no_such_module_here (cannot be imported here)" in text


@pytest.mark.parametrize(
    "command,fix",
    [("tournament", "pip install turn-arena-tournament"), ("study", "pip install 'turn-arena-games[study]'")],
)
def test_a_command_of_a_missing_distribution_names_it(command, fix, capsys, monkeypatch):
    from arena_core import cli

    monkeypatch.setattr(cli, "_plugin_commands", dict)  # as if its distribution were not installed
    assert cli.main([command, "x"]) == 2
    assert (
        capsys.readouterr().err.strip()
        == f"arena: error: `arena {command}` comes with another distribution; fix: {fix}"
    )


def test_play_and_replay_show_positions_through_the_games_human_view(tmp_path, capsys):
    from arena_core import cli

    log = str(tmp_path / "k.jsonl")
    assert cli.main(["play", "kuhn_poker", "--players", "random,random", "--seed", "3", "--show", "--log", log]) == 0
    played = capsys.readouterr().out.splitlines()
    assert played[0] == "kuhn_poker v1  seed 3  players: 0=random, 1=random"
    assert played[1:6] == [
        "  player 0 (random) sees:",
        "      player: 0",
        "      card: Q",
        "      history: (none)",
        "      pot: 2",
    ]
    assert played[6].startswith("  ply   0  player 0 (random): ")
    assert sum(line.startswith("  at the end, player ") for line in played) == 2  # hidden cards: each seat's end
    assert cli.main(["replay", log, "--show"]) == 0
    replayed = capsys.readouterr().out.splitlines()
    assert replayed[:-2] == played[:-2]  # the same transcript; then "ok: ..." instead of the result
    assert replayed[-1] == "1 episode(s) replayed exactly"
    assert cli.main(["replay", log]) == 0 and "sees:" not in capsys.readouterr().out  # positions on request


def test_show_without_a_human_view_is_one_line(monkeypatch, capsys):
    from arena_core import cli, views

    monkeypatch.setattr(views, "_plugin_views", dict)  # no plugin offers a human view for every game
    assert cli.main(["play", "kuhn_poker", "--players", "random,random", "--show"]) == 2
    err = capsys.readouterr().err
    assert err == "arena: error: kuhn_poker has no human view to show; fix: pip install turn-arena-players\n"


def test_openspiel_titles_print_action_names_and_their_board(capsys):
    pytest.importorskip("pyspiel")
    from arena_core import cli

    assert cli.main(["play", "openspiel/tic_tac_toe", "--players", "random,random", "--show"]) == 0
    out = capsys.readouterr().out.splitlines()
    moves = [line.split(": ", 1)[1] for line in out if line.startswith("  ply ")]
    assert moves and all(re.fullmatch(r"[xo]\([0-2],[0-2]\)", m) for m in moves), moves
    assert out[1:5] == ["  player 0 (random) sees:", "      ...", "      ...", "      ..."]  # OpenSpiel's own board
    assert out[-5] == "  at the end, player 0 (random) sees:"  # perfect information: one view of the end


class _Unreadable:
    """An OpenAI-compatible endpoint whose model never names a move."""

    def __init__(self):
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                text = "I would rather think about it some more."
                reply = {"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
                payload = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        import threading

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"


@pytest.fixture
def unreadable():
    server = _Unreadable()
    yield server.url
    server.server.shutdown()
    server.server.server_close()


def test_an_unreadable_llm_answer_names_the_policy_that_plays_on(unreadable, capsys):
    from arena_core import cli

    llm = ["--player", "openai", f"base_url={unreadable}", "model=m", "api_key_env=", "--player", "random"]
    assert cli.main(["play", "kuhn_poker", *llm]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("arena: error: player 0 (openai): answer is not an action: ")
    assert "--policy retry:3 asks again" in err and "Traceback" not in err
    assert cli.main(["play", "kuhn_poker", *llm, "--policy", "default"]) == 0  # the hint works
    assert "(substituted by the policy)" in capsys.readouterr().out


def test_every_game_gets_the_registered_human_view_unless_it_brings_its_own(monkeypatch):
    import importlib.metadata as md

    from arena_core import views
    from arena_core.errors import PluginError
    from arena_core.registry import make_game
    from arena_players.human import HumanView

    assert type(views.get_view(make_game("kuhn_poker"), "human")) is HumanView  # from arena.views
    if importlib.util.find_spec("pyspiel") is not None:
        from arena_games.openspiel.text import OpenSpielHumanView

        assert type(views.get_view(make_game("openspiel/tic_tac_toe"), "human")) is OpenSpielHumanView
    # two distributions registering one view name: refused, naming both
    twice = md.EntryPoints(
        [md.EntryPoint("human", f"{m}:HumanView", "arena.views") for m in ("arena_players.human", "other.pkg")]
    )
    monkeypatch.setattr(md, "entry_points", lambda group=None: twice)
    with pytest.raises(
        PluginError, match=r"registered twice in arena.views: \['arena_players.human:HumanView', 'other"
    ):
        views._plugin_views.__wrapped__()


def test_a_reader_that_leaves_early_gets_no_error_message(monkeypatch, capsys):
    """`arena list | head`: the pipe closes under the command; it stops without an error line."""
    from arena_core import cli

    def closed(args):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(cli, "cmd_list", closed)
    monkeypatch.setattr(cli, "build_parser", _parser_with_list(cli.build_parser, closed))
    assert cli.main(["list"]) == 1 and capsys.readouterr().err == ""


def _parser_with_list(real, fn):
    def build(**kwargs):
        parser = real(**kwargs)
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        sub.choices["list"].set_defaults(func=fn)
        return parser

    return build
