"""The harness: commit-then-reveal, truncation, the illegal-action policy, player failures."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena_core import (
    EndReason,
    GameOverError,
    IllegalActionError,
    IllegalActionPolicy,
    Match,
    Move,
    NotYourTurnError,
    play_episode,
)
from arena_core.episode import PolicyEvent
from arena_core.players import BasePlayer
from arena_core.policy import Verdict
from arena_games.kuhn import KuhnAction, KuhnPoker
from arena_players.random_player import RandomPlayer
from toy_games import CountToTwenty, RepeatedPennies


# ---------------------------------------------------------------- commit-then-reveal
def test_simultaneous_move_is_committed_then_revealed_atomically():
    game = RepeatedPennies()
    pos = game.start(0)
    assert game.players_to_act(pos) == (0, 1)
    before = [game.observe(pos, p) for p in (0, 1)]
    pos = game.act(pos, 0, 1)
    assert pos.pending == ((0, 1),) and pos.state.round == 0
    assert game.current_player(pos) == 1
    assert [game.observe(pos, p) for p in (0, 1)] == before  # nobody sees the commitment
    with pytest.raises(NotYourTurnError):
        game.act(pos, 0, 0)  # no second commitment
    pos = game.act(pos, 1, 1)
    assert pos.pending == () and pos.state.round == 1 and pos.state.score == (1, 0)
    assert game.observe(pos, 1)["last"] == [1, 1]


def test_turn_order_and_game_over_are_enforced():
    game = KuhnPoker()
    pos = game.start(1)
    with pytest.raises(NotYourTurnError):
        game.act(pos, 1, KuhnAction.BET)
    pos = game.act(game.act(pos, 0, KuhnAction.BET), 1, KuhnAction.BET)
    assert game.is_over(pos)
    with pytest.raises(GameOverError):
        game.act(pos, 0, KuhnAction.PASS)
    assert game.legal(pos, 0) == () and not game.mask(pos, 0).any()


# ---------------------------------------------------------------- truncation is never a draw
def test_turn_cap_truncates_without_returns():
    game = CountToTwenty()
    match = Match(game, 0, turn_cap=4)
    while not match.done:
        match.submit(match.to_act(), 1)
    assert match.end.reason is EndReason.TURN_CAP
    assert match.end.truncated and not match.end.terminated
    assert match.returns() is None and match.end.returns is None
    assert match.ply == 4
    with pytest.raises(GameOverError):
        match.submit(0, 1)


def test_time_cap_truncates_with_its_own_reason():
    now = [0.0]
    match = Match(CountToTwenty(), 0, time_cap_s=5.0, clock=lambda: now[0])
    match.submit(0, 1)
    assert not match.done
    now[0] = 6.0
    match.submit(1, 1)
    assert match.end.reason is EndReason.TIME_CAP and match.end.returns is None


def test_natural_end_is_termination_with_returns():
    match = Match(KuhnPoker(), 0)
    match.submit(0, KuhnAction.BET)
    match.submit(1, KuhnAction.PASS)
    assert match.end.reason is EndReason.NATURAL and match.end.terminated and not match.end.truncated
    assert match.returns() == (1.0, -1.0)


# ---------------------------------------------------------------- the illegal-action policy
def test_raise_is_the_default_and_records_nothing():
    match = Match(CountToTwenty(), 0)
    with pytest.raises(IllegalActionError):
        match.submit(0, 7)
    assert match.record.events == [] and not match.done


def test_penalize_ends_with_a_forfeit_and_records_it():
    game = KuhnPoker()
    match = Match(game, 0, policy=IllegalActionPolicy(mode="penalize", penalty=-2))
    sub = match.submit(0, "nonsense")
    assert sub.verdict is Verdict.FORFEIT and not sub.accepted
    assert match.end.reason is EndReason.FORFEIT and match.end.offender == 0
    assert match.returns() == (-2.0, 2.0)  # zero-sum is kept
    (event,) = match.record.events
    assert isinstance(event, PolicyEvent) and event.verdict == "forfeit" and event.attempted == "'nonsense'"


def test_default_substitutes_and_marks_the_step():
    match = Match(CountToTwenty(), 0, policy=IllegalActionPolicy(mode="default"))
    sub = match.submit(0, 9)
    assert sub.accepted and sub.verdict is Verdict.DEFAULT and sub.action == 1
    policy_event, step = match.record.events
    assert policy_event.verdict == "default" and step.substituted and step.action == "add 1"
    assert match.to_act() == 1


def test_retry_then_forfeit():
    policy = IllegalActionPolicy(mode="retry", max_retries=2)
    match = Match(CountToTwenty(), 0, policy=policy)
    assert match.submit(0, 9).verdict is Verdict.RETRY
    assert match.submit(0, 9).verdict is Verdict.RETRY
    assert match.to_act() == 0 and not match.done
    assert match.submit(0, 9).verdict is Verdict.FORFEIT
    assert match.end.reason is EndReason.FORFEIT
    assert [e.verdict for e in match.record.events] == ["retry", "retry", "forfeit"]
    # general-sum: the offender gets the lowest reward, the others 0
    assert match.returns() == (-1.0, 0.0, 0.0)


def test_retry_budget_resets_after_a_legal_move():
    match = Match(CountToTwenty(), 0, policy=IllegalActionPolicy(mode="retry", max_retries=1, after_retries="default"))
    assert match.submit(0, 9).verdict is Verdict.RETRY
    assert match.submit(0, 2).accepted
    assert match.submit(1, 9).verdict is Verdict.RETRY
    assert match.submit(1, 9).verdict is Verdict.DEFAULT
    assert match.to_act() == 2


@given(st.integers(0, 5), st.integers(1, 20))
def test_retry_policy_verdicts(max_retries, attempts):
    if max_retries == 0:
        with pytest.raises(ValueError):
            IllegalActionPolicy(mode="retry", max_retries=0)
        return
    policy = IllegalActionPolicy(mode="retry", max_retries=max_retries)
    expected = Verdict.RETRY if attempts <= max_retries else Verdict.FORFEIT
    assert policy.verdict(attempts) is expected


def test_policy_parse_from_cli_text():
    assert IllegalActionPolicy.parse("retry:3:default") == IllegalActionPolicy(
        mode="retry", max_retries=3, after_retries="default"
    )
    assert IllegalActionPolicy.parse("penalize").mode == "penalize"
    with pytest.raises(ValueError):
        IllegalActionPolicy.parse("explode")


# ---------------------------------------------------------------- misbehaving players are data
class Crasher(BasePlayer):
    name = "crasher"

    def act(self, decision):
        raise RuntimeError("boom")


class Babbler(BasePlayer):
    name = "babbler"

    def act(self, decision):
        return "I would like a sandwich"


class Talker(BasePlayer):
    """Answers in prose with telemetry; the text view parses it."""

    name = "talker"

    def act(self, decision):
        return Move("Let me think... I will bet.\nAnswer: bet", {"tokens_out": 7})


def test_a_crashing_player_forfeits_and_the_crash_is_recorded():
    record = play_episode(KuhnPoker(), [Crasher(), RandomPlayer(1)], 0)
    assert record.end.reason is EndReason.PLAYER_ERROR and record.end.offender == 0
    (event,) = record.events
    assert (
        "RuntimeError: boom" in event.detail and event.telemetry["error_type"] == "RuntimeError" and not event.illegal
    )


def test_garbage_goes_through_the_policy():
    record = play_episode(KuhnPoker(), [Babbler(), RandomPlayer(1)], 0, policy=IllegalActionPolicy(mode="default"))
    assert record.end.reason is EndReason.NATURAL
    first = record.events[0]
    assert first.type == "policy" and first.verdict == "default" and first.telemetry["parse_method"] == "unparseable"
    assert record.events[1].substituted


def test_prose_answers_are_parsed_and_telemetry_is_kept():
    record = play_episode(KuhnPoker(), [Talker(), Talker()], 0)
    assert [s.action for s in record.steps] == ["bet", "bet"]
    assert record.steps[0].telemetry["tokens_out"] == 7
    assert record.steps[0].telemetry["parse_method"] == "answer_line"


def test_wrong_number_of_players_is_a_clear_error():
    from arena_core import ConfigError

    with pytest.raises(ConfigError, match="needs 2 players"):
        play_episode(KuhnPoker(), [RandomPlayer()], 0)


def test_player_raising_system_exit_is_a_fault_not_an_exit():
    """`arena play` and every other loop through step_player record SystemExit as the player's fault."""
    from arena_core import IllegalActionPolicy, play_episode
    from arena_core.registry import make_game, make_player

    class Quitter:
        name = "quitter"

        def act(self, decision):
            raise SystemExit(0)

    record = play_episode(
        make_game("kuhn_poker"),
        [Quitter(), make_player("first_legal")],
        seed=3,
        policy=IllegalActionPolicy(mode="penalize"),
    )
    assert record.end.reason.value == "player_error" and record.end.offender == 0
