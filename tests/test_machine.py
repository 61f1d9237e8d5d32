"""GameStateMachine: the protocol's invariants as a hypothesis state machine, extended by a game
author's own invariants; planted bugs are caught and reported with the episode."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant, run_state_machine_as_test

from arena_core.replay import replay_file
from arena_core.testing.machine import GameStateMachine
from arena_games.kuhn import KuhnAction, KuhnPoker, KuhnState
from arena_games.matrix import MatrixGame
from arena_games.megagem import MegaGem
from broken_games import IllegalIndexAccepted, LosesHistoryWhenSerialised, NotZeroSum
from toy_games import CountToTwenty, RepeatedPennies

FAST = settings(
    max_examples=25,
    database=None,
    deadline=None,
    stateful_step_count=20,
    report_multiple_bugs=False,
    suppress_health_check=list(HealthCheck),
)


def machine_for(game, **attrs):
    return type(f"{type(game).__name__}Machine", (GameStateMachine,), {"game": game, **attrs})


@pytest.mark.parametrize(
    "game",
    [KuhnPoker(), RepeatedPennies(), CountToTwenty(), MatrixGame({"independent_order": True}), MegaGem(num_players=3)],
    ids=lambda g: g.spec.id,
)
def test_conforming_games_pass_the_machine(game):
    run_state_machine_as_test(machine_for(game), settings=FAST)


@pytest.mark.parametrize(
    "broken,message",
    [
        (NotZeroSum, "do not sum to the declared 0.0"),
        (IllegalIndexAccepted, "illegal action .* was accepted"),
        (LosesHistoryWhenSerialised, "looks different after a JSON round trip"),
    ],
)
def test_planted_protocol_bugs_are_caught(broken, message):
    with pytest.raises(AssertionError, match=message):
        run_state_machine_as_test(machine_for(broken()), settings=FAST)


class MutatesOnReject(KuhnPoker):
    """Planted bug: checking an illegal action (index 2, outside the legal set) writes it into
    the state anyway: a rejected action changes the position."""

    num_actions = 3

    def is_legal(self, state, player, action):
        ok = super().is_legal(state, player, action)
        if not ok:
            object.__setattr__(state, "history", state.history + (KuhnAction.PASS,))
        return ok

    def action_from_id(self, index):
        return 2 if index == 2 else KuhnAction(index)


def test_a_rejected_action_that_changes_the_position_is_caught():
    with pytest.raises(AssertionError, match="changed the position|act must not mutate"):
        run_state_machine_as_test(machine_for(MutatesOnReject()), settings=FAST)


class KuhnMachine(GameStateMachine):
    """What a game author writes: the game, and an invariant of its own."""

    game = KuhnPoker()

    @invariant()
    def the_pot_is_two_plus_the_bets(self):
        if self.position is not None:
            assert self.game.observe(self.position, 0)["pot"] == 2 + sum(int(a) for a in self.position.state.history)


def test_an_authors_invariant_runs_with_the_protocol_ones():
    run_state_machine_as_test(KuhnMachine, settings=FAST)


class MiscountedPot(KuhnPoker):
    """Planted bug: a second bet is not added to the pot the players see."""

    def observation(self, state, player):
        obs = super().observation(state, player)
        if sum(int(a) for a in state.history) >= 2:
            obs["pot"] -= 1
        return obs


def test_an_authors_invariant_catches_a_planted_bug_with_a_short_replayable_episode(tmp_path, capsys):
    machine = type("Buggy", (KuhnMachine,), {"game": MiscountedPot(), "save_failing_to": tmp_path})
    with pytest.raises(AssertionError) as info:  # the bug needs two bets: 25 random runs missed it once in CI
        run_state_machine_as_test(machine, settings=settings(FAST, max_examples=300))
    report = "\n".join(getattr(info.value, "__notes__", [])) + capsys.readouterr().out
    assert "state.deal(seed=0)" in report  # the steps, shrunk: the smallest seed
    episode = re.search(r"episode: (kuhn_poker seed 0: .*)", report).group(1)
    assert episode.count("bet") == 2 and episode.count(",") <= 2  # the two bets that show it, nothing more
    (path,) = tmp_path.glob("kuhn_poker-seed0-*.jsonl")
    (record,) = replay_file(path, MiscountedPot())
    assert [s.action for s in record.steps].count("bet") == 2


def test_the_machine_needs_a_game():
    class NoGame(GameStateMachine):
        pass

    with pytest.raises(TypeError, match="`game`"):
        NoGame()


def test_a_state_is_what_invariants_read():
    m = KuhnMachine()
    m.deal(seed=4)
    assert isinstance(m.position.state, KuhnState) and m.playthrough.moves == () and not m.over
