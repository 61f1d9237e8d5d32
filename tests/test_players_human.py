"""The terminal player, driven through real text streams."""
from __future__ import annotations

import io

from arena_core.policy import IllegalActionPolicy
from arena_core.registry import make_game, make_player
from arena_core.runner import play_episode
from arena_players.human import HumanPlayer
from arena_players.scripted import FirstLegalPlayer


def test_number_or_action_text_and_a_retry_after_nonsense():
    game = make_game("kuhn_poker")
    out = io.StringIO()
    human = HumanPlayer(input=io.StringIO("7\nbet\n2\n"), output=out)
    record = play_episode(game, [human, FirstLegalPlayer()], 0)
    steps = [s for s in record.steps if s.player == 0]
    assert steps[0].action == "bet" and steps[0].telemetry["tries"] == 2
    shown = out.getvalue()
    assert "Kuhn poker" in shown and "1. pass" in shown and "2. bet" in shown and "not a legal action" in shown


def test_megagem_bid_by_number():
    game = make_game("megagem")
    human = HumanPlayer(input=io.StringIO("6\n"), output=io.StringIO(), show_rules=False)
    record = play_episode(game, [human, FirstLegalPlayer(), FirstLegalPlayer()], 1, turn_cap=1)
    assert record.steps[0].action == "bid 5"  # the sixth legal string, "bid 0" first


def test_end_of_input_and_quit_are_recorded_as_player_errors():
    game = make_game("kuhn_poker")
    for text in ("", "q\n"):
        human = HumanPlayer(input=io.StringIO(text), output=io.StringIO())
        record = play_episode(game, [human, FirstLegalPlayer()], 0, policy=IllegalActionPolicy(mode="penalize"))
        assert record.end.reason.value == "player_error" and record.end.offender == 0
        assert record.events[0].telemetry["error_type"] == "PlayerError"


def test_unreadable_lines_go_to_the_policy_after_max_tries():
    game = make_game("kuhn_poker")
    human = HumanPlayer(input=io.StringIO("fold\nraise\n"), output=io.StringIO(), max_tries=2)
    record = play_episode(game, [human, FirstLegalPlayer()], 0, policy=IllegalActionPolicy(mode="default"))
    assert record.events[0].type == "policy" and record.events[0].attempted == "'raise'"
    assert record.steps[0].substituted


def test_registered():
    assert isinstance(make_player("human"), HumanPlayer)
