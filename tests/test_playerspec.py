"""Player specs on the command line: several options per seat, against a local OpenAI-compatible
server (a scripted one, and the real ``mlx_lm.server`` of examples/llm_players.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.cli import main
from arena_core.errors import ConfigError
from arena_core.playerspec import (
    PlayerSpec,
    parse_player_list,
    parse_player_spec,
    parse_player_words,
    parse_value,
)
from arena_core.registry import make_player

URL = "http://127.0.0.1:8080/v1"


# ---------------------------------------------------------------- the grammar
def test_the_three_spellings_of_one_seat_agree():
    want = PlayerSpec("openai", {"base_url": URL, "model": "tiny", "temperature": 0.5, "max_tokens": 6})
    assert parse_player_spec(f'openai{{base_url="{URL}", model="tiny", temperature=0.5, max_tokens=6}}') == want
    assert parse_player_words(["openai", f"base_url={URL}", "model=tiny", "temperature=0.5", "max_tokens=6"]) == want
    assert parse_player_spec(f"openai:base_url={URL},model=tiny,temperature=0.5,max_tokens=6") == want
    assert parse_player_spec(" random ") == PlayerSpec("random", {})


def test_values_are_toml_scalars_else_plain_strings():
    assert parse_value("3") == 3 and parse_value("0.25") == 0.25 and parse_value("true") is True
    assert parse_value('"007"') == "007" and parse_value("007") == "007"  # TOML has no leading zeros
    assert parse_value('["a", "b"]') == ["a", "b"]
    assert parse_value(URL) == URL and parse_value("") == "" and parse_value("tiny model") == "tiny model"
    assert parse_value("2024-01-01") == "2024-01-01"  # a date stays the text, options stay JSON-like


def test_players_list_splits_only_between_seats():
    seats = parse_player_list(f'openai{{base_url="{URL}", model="a,b"}}, random,first_legal')
    assert seats == [
        PlayerSpec("openai", {"base_url": URL, "model": "a,b"}),
        PlayerSpec("random"),
        PlayerSpec("first_legal"),
    ]
    assert parse_player_list("random,first_legal") == [PlayerSpec("random"), PlayerSpec("first_legal")]


@pytest.mark.parametrize(
    "text, message",
    [
        ("openai{model=}", "not a TOML inline table"),
        ('openai{model="x"', "unclosed brace"),
        ("openai{model=x}", "not a TOML inline table"),  # strings are quoted inside braces
        ("random:x=1,y=2", "needs braces"),  # the old comma form cannot carry two options in --players
        ("ran dom", "not a player name"),
        ('openai{"bad key"=1}', "must be a Python identifier"),
        ("openai{when=2024-01-01}", "dates and times"),
        ("random}", "unbalanced"),
    ],
)
def test_malformed_specs_say_what_to_write(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_player_list(text)


def test_player_words_need_key_value_pairs():
    with pytest.raises(ConfigError, match="must look like key=value"):
        parse_player_words(["openai", "model"])
    with pytest.raises(ConfigError, match="needs a player name"):
        parse_player_words([])
    # later words override the first word's own options
    assert parse_player_words(['openai{model="a"}', "model=b"]).options == {"model": "b"}


keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
scalars = st.one_of(
    st.integers(-(10**9), 10**9),
    st.booleans(),
    st.text(max_size=12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
options = st.dictionaries(keys, st.one_of(scalars, st.lists(st.integers(0, 9), max_size=3)), max_size=4)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["random", "openai", "megagem_expert", "checkpoint"]), options)
def test_the_inline_spelling_round_trips(name, opts):
    spec = PlayerSpec(name, opts)
    assert parse_player_spec(str(spec)) == spec
    assert parse_player_list(f"{spec}, random") == [spec, PlayerSpec("random")]


def test_registry_and_tournaments_read_the_same_grammar():
    player = make_player(f'openai{{base_url="{URL}", model="m", api_key_env=""}}')
    assert player.settings.base_url == URL and player.settings.model == "m" and player.settings.api_key_env == ""
    again = make_player(PlayerSpec("openai", {"base_url": URL, "model": "m", "api_key_env": ""}), seed=3)
    assert again.settings == player.settings


def test_arena_compare_entrants_read_the_same_grammar():
    from arena_tournament.compare import _entrant

    e = _entrant("A", f'openai{{base_url="{URL}", model="m", max_tokens=4}}', 7)
    assert (e.player, e.options, e.seed) == ("openai", {"base_url": URL, "model": "m", "max_tokens": 4}, 7)
    assert _entrant("B", "megagem_expert:offset=0.5", 1).options == {"offset": 0.5}
    with pytest.raises(ConfigError, match="not a TOML inline table"):
        _entrant("C", "openai{model=m}", 0)


# ---------------------------------------------------------------- arena play against a local server
class Recorder(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        reply = json.dumps(
            {
                "choices": [{"message": {"role": "assistant", "content": "pass"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


@pytest.fixture
def server():
    Recorder.requests = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()


def test_arena_play_repeated_player_options_reach_the_server(server, capsys):
    rc = main(
        [
            "play",
            "kuhn_poker",
            "--seed",
            "3",
            "--player",
            "openai",
            f"base_url={server}",
            "model=local-model",
            "api_key_env=",
            "max_tokens=7",
            "temperature=0",
            "--player",
            "first_legal",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0, out
    assert Recorder.requests, "the OpenAI player never called the local server"
    assert {r["model"] for r in Recorder.requests} == {"local-model"}
    assert {r["max_tokens"] for r in Recorder.requests} == {7} and {r["temperature"] for r in Recorder.requests} == {0}
    assert "players: 0=openai, 1=first_legal" in out and "result (natural)" in out


def test_arena_play_inline_table_in_players(server, capsys):
    spec = f'openai{{base_url="{server}", model="inline", api_key_env="", max_tokens=5}},random'
    assert main(["play", "kuhn_poker", "--players", spec, "--quiet"]) == 0
    assert {r["model"] for r in Recorder.requests} == {"inline"} and {r["max_tokens"] for r in Recorder.requests} == {5}
    assert "result (" in capsys.readouterr().out


def test_arena_play_bad_spec_is_one_line_and_exit_2(capsys):
    assert main(["play", "kuhn_poker", "--players", "random:x=1,y=2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs braces" in err[0] and "Traceback" not in err[0]
    assert main(["play", "kuhn_poker"]) == 2
    assert "no players given" in capsys.readouterr().err


# ---------------------------------------------------------------- the real local server of the example
def test_arena_play_against_the_examples_mlx_server(tmp_path):
    """`mlx_lm.server` with the tiny model, as examples/llm_players.py starts it, driven by
    `arena play` with a base URL and a model in one --player."""
    pytest.importorskip("mlx_lm")
    from arena_players.mlx_server import mlx_server
    from arena_players.tiny_model import ensure_tiny_model

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    with mlx_server(ensure_tiny_model()) as (base_url, model):
        log = tmp_path / "ep.jsonl"
        cmd = [
            sys.executable,
            "-m",
            "arena_core.cli",
            "play",
            "kuhn_poker",
            "--seed",
            "5",
            "--policy",
            "default",
            "--log",
            str(log),
            "--player",
            "openai",
            f"base_url={base_url}",
            f"model={model}",
            "api_key_env=",
            "max_tokens=6",
            "temperature=1.0",
            "timeout_s=60",
            "--player",
            "first_legal",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        assert "players: 0=openai, 1=first_legal" in done.stdout and "result (" in done.stdout
        steps = [json.loads(line) for line in log.read_text().splitlines()]
        telemetry = [s.get("telemetry") or {} for s in steps]
        assert any(t.get("tokens_in", 0) > 0 for t in telemetry), "no request reached the server"
