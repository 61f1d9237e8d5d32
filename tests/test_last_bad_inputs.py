"""The last bad inputs of issue 29: each answers in one line with exit 2, nothing is dropped or
accepted silently (a JSON list or number line in an episode file, a player option of the wrong
type, an empty seat in ``--players``)."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from arena_core.cli import main
from arena_core.errors import ConfigError
from arena_core.playerspec import parse_player_list, split_seats


def run_arena(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def one_line_exit_2(argv: list[str], needle: str) -> None:
    code, out, err = run_arena(argv)
    shown = f"arena {' '.join(argv)} -> exit {code}\nstdout: {out[-800:]}\nstderr: {err[-800:]}"
    assert code == 2, shown
    assert "Traceback" not in out + err and "internal error" not in err, shown
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, shown
    assert re.match(r"arena( \w+)?: error: ", err), shown
    assert needle in err, shown


@pytest.mark.parametrize("line", ["[1, 2]", "5", '"header"', "null", "true"])
def test_an_episode_line_that_is_json_but_not_an_object(tmp_path, line):
    path = tmp_path / "ep.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    one_line_exit_2(["replay", str(path)], "not a JSON object")


def test_a_json_list_after_a_good_header_names_its_line(tmp_path):
    from arena_core.episode import EpisodeError, read_episodes

    path = tmp_path / "ep.jsonl"
    path.write_text('{"type": "header"}\n[1]\n', encoding="utf-8")
    with pytest.raises(EpisodeError, match=r":1: |:2: "):
        read_episodes(path)


def test_a_player_option_of_the_wrong_type_is_the_users_error():
    one_line_exit_2(
        ["play", "megagem", "--players", 'megagem_fair_value{shade="abc"},random,random'],
        "shade",
    )


def test_a_player_option_of_the_right_type_still_plays():
    code, out, err = run_arena(["play", "megagem", "--players", "megagem_fair_value{shade=0.5},random,random"])
    assert code == 0, err


@pytest.mark.parametrize("text", ["random,,random", "random,random,", ",random", "random, ,random"])
def test_an_empty_seat_is_refused_not_dropped(text):
    with pytest.raises(ConfigError, match="empty"):
        split_seats(text)
    with pytest.raises(ConfigError, match="empty"):
        parse_player_list(text)


def test_an_empty_seat_on_the_command_line():
    one_line_exit_2(["play", "kuhn_poker", "--players", "random,,random"], "empty")
