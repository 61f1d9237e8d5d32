"""The terminal player, driven through real text streams: a human-friendly view (not the LLM
prompt), numbered legal moves, invalid input asked again, end of input a clear fault."""

from __future__ import annotations

import io

import pytest

from arena_core.errors import ConfigError
from arena_core.policy import IllegalActionPolicy
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_players.human import HumanPlayer, HumanView, numbered, render_value
from arena_players.scripted import FirstLegalPlayer


def _human(text: str, **kw) -> tuple[HumanPlayer, io.StringIO]:
    out = io.StringIO()
    return HumanPlayer(input=io.StringIO(text), output=out, **kw), out


def test_number_or_move_text_and_asked_again_after_nonsense():
    game = make_game("kuhn_poker")
    human, out = _human("7\nfold\nbet\n2\n")
    record = play_episode(game, [human, FirstLegalPlayer()], 0)
    steps = [s for s in record.steps if s.player == 0]
    assert steps[0].action == "bet" and steps[0].telemetry["tries"] == 3  # '7' and 'fold' asked again
    shown = out.getvalue()
    assert "Kuhn poker" in shown  # the rules, once
    assert "1. pass" in shown and "2. bet" in shown
    assert (
        shown.count("is not one of your legal moves") == 2 and "(9 tries left)" in shown and "(8 tries left)" in shown
    )


def test_the_view_is_a_summary_of_the_observation_not_the_llm_prompt():
    game = make_game("kuhn_poker")
    pos = game.start(0)
    prompt = game.text_view().prompt(game, pos, 0)
    human, out = _human("1\n", show_rules=False)
    play_episode(game, [human, FirstLegalPlayer()], 0, turn_cap=1)
    shown = out.getvalue()
    assert prompt.user not in shown and prompt.system not in shown
    card = game.observe(pos, 0)["card"]
    assert f"card: {card}" in shown and "pot: 2" in shown and "history: (none)" in shown
    assert "you are player 0" in shown


def test_a_payoff_matrix_is_shown_as_a_grid_and_a_transcript_by_its_latest_messages():
    game = make_game("matrix")
    lines = HumanView().render(game, game.start(0), 0).splitlines()
    at = lines.index("own payoffs:")
    assert lines[at + 1].split() == ["1", "0", "0"] and lines[at + 3].split() == ["0", "0", "1"]

    class Msg:
        def __init__(self, i):
            self.text, self.sender = f"message number {i}", i % 2

    text = "\n".join(render_value("messages", [Msg(i) for i in range(10)]))
    assert "latest 6 of 10" in text and "message number 9" in text and "message number 3" not in text
    assert "(from player 1)" in text


def test_megagem_bid_by_number_and_many_moves_in_columns():
    game = make_game("megagem")
    human, out = _human("6\n", show_rules=False)
    record = play_episode(game, [human, FirstLegalPlayer(), FirstLegalPlayer()], 1, turn_cap=1)
    assert record.steps[0].action == "bid 5"  # the sixth legal move, "bid 0" first
    shown = out.getvalue()
    assert "[0] (you):" in shown and "coins: 35" in shown
    table = numbered([f"bid {i}" for i in range(36)])
    assert len(table.splitlines()) < 36 and "36. bid 35" in table


def test_help_and_prompt_commands_do_not_use_up_the_move():
    game = make_game("kuhn_poker")
    human, out = _human("?\nprompt\npass\n", show_rules=False)
    record = play_episode(game, [human, FirstLegalPlayer()], 0, turn_cap=1)
    assert record.steps[0].action == "pass" and record.steps[0].telemetry["tries"] == 3
    shown = out.getvalue()
    assert "Kuhn poker" in shown  # the rules on '?'
    assert game.text_view().prompt(game, game.start(0), 0).user in shown  # the LLM prompt on request


def test_free_text_the_game_can_read_is_accepted():
    game = make_game("megagem")
    human, _ = _human('{"bid": 3}\n', show_rules=False)
    record = play_episode(game, [human, FirstLegalPlayer(), FirstLegalPlayer()], 1, turn_cap=1)
    assert record.steps[0].action == "bid 3"


def test_end_of_input_and_quit_are_recorded_as_player_errors():
    game = make_game("kuhn_poker")
    for text in ("", "q\n", "nonsense\n"):  # the last: asked again, then the input ends
        human, _ = _human(text)
        record = play_episode(game, [human, FirstLegalPlayer()], 0, policy=IllegalActionPolicy(mode="penalize"))
        assert record.end.reason.value == "player_error" and record.end.offender == 0
        assert record.events[0].telemetry["error_type"] == "PlayerError"


def test_unreadable_lines_go_to_the_policy_after_max_tries():
    game = make_game("kuhn_poker")
    human, out = _human("fold\nraise\n", max_tries=2)
    record = play_episode(game, [human, FirstLegalPlayer()], 0, policy=IllegalActionPolicy(mode="default"))
    assert record.events[0].type == "policy" and record.events[0].attempted == "'raise'"
    assert record.steps[0].substituted
    assert out.getvalue().count("is not one of your legal moves") == 2


def test_a_games_own_human_view_is_used():
    game = make_game("kuhn_poker")

    class Board:
        def render(self, game, pos, player):
            return f"BOARD for player {player}"

    game.views = lambda: {"human": Board}  # what a game does by overriding views()
    human, out = _human("1\n", show_rules=False)
    play_episode(game, [human, FirstLegalPlayer()], 0, turn_cap=1)
    assert "BOARD for player 0" in out.getvalue() and "pot:" not in out.getvalue()


def test_registered_and_options_checked():
    assert isinstance(make_player("human"), HumanPlayer)
    assert make_player("human:max_tries=3").max_tries == 3
    with pytest.raises(ConfigError):
        make_player("human:max_tries=0")
