"""The ``end_episode`` hook: every game loop tells each seat how its episode ended (its final
observation, never another seat's, and the returns); a hook that raises never undoes a result."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.env.gym import ArenaGymEnv
from arena_core.players import BasePlayer, EpisodeEnd, PlayerHookWarning
from arena_core.runner import play_episode
from arena_games.kuhn import KuhnPoker
from arena_players.random_player import RandomPlayer


class Recorder(RandomPlayer):
    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.ends: list[EpisodeEnd] = []

    def end_episode(self, end: EpisodeEnd) -> None:
        self.ends.append(end)


class Raises(RandomPlayer):
    name = "raises"

    def end_episode(self, end: EpisodeEnd) -> None:
        raise RuntimeError("hook broke")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_each_seat_gets_its_own_final_observation_and_the_returns(seed):
    game = KuhnPoker()
    players = [Recorder(1), Recorder(2)]
    record = play_episode(game, players, seed)
    for seat, player in enumerate(players):
        (end,) = player.ends
        assert (end.seat, end.episode_seed, end.game) == (seat, seed, game)
        assert end.returns == tuple(record.end.returns)
        assert end.reason == record.end.reason.value
        # only this seat's view: its own card, the other card only where a showdown reveals it
        assert end.observation["card"] == game.observe(game.start(seed), seat)["card"]
    # the two seats' final observations differ in the private card whenever the deal does
    assert players[0].ends[0].observation["card"] != players[1].ends[0].observation["card"]


def test_a_truncated_episode_ends_with_no_returns():
    players = [Recorder(1), Recorder(2)]
    record = play_episode(KuhnPoker(), players, 3, turn_cap=1)
    assert record.end.truncated
    assert [p.ends[0].returns for p in players] == [None, None]
    assert players[0].ends[0].reason == "turn_cap"


def test_a_raising_hook_is_a_warning_and_the_result_stands():
    other = Recorder(2)
    with pytest.warns(PlayerHookWarning, match=r"player raises \(seat 0\) end_episode raised RuntimeError: hook broke"):
        record = play_episode(KuhnPoker(), [Raises(1), other], 5)
    assert record.end.terminated and record.end.returns is not None
    assert other.ends[0].returns == tuple(record.end.returns)  # the other seat still hears of it


def test_base_player_hook_is_a_no_op_and_players_without_it_are_fine():
    class Plain:  # a player written as an outsider would: no base class, no hooks
        name = "plain"

        def act(self, decision):
            return decision.legal_actions[0]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        play_episode(KuhnPoker(), [Plain(), BasePlayerFirst()], 0)


class BasePlayerFirst(BasePlayer):
    def act(self, decision):
        return decision.legal_actions[0]


def test_the_gym_env_tells_its_opponents():
    opponent = Recorder(7)
    env = ArenaGymEnv(KuhnPoker(), [opponent], seat=0)
    env.reset(seed=11)
    done = False
    while not done:
        mask = env.action_masks()
        _, _, terminated, truncated, _ = env.step(int(mask.nonzero()[0][0]))
        done = terminated or truncated
    (end,) = opponent.ends
    assert end.seat == 1 and end.episode_seed == 11 and end.returns is not None


ENDS_SEEN: list[tuple[str, int, int, tuple[float, ...] | None]] = []


class Counting(RandomPlayer):
    """A tournament entrant (``factory = "test_end_episode:Counting"``) noting each episode end."""

    def end_episode(self, end: EpisodeEnd) -> None:
        ENDS_SEEN.append((self.name, end.seat, end.episode_seed, end.returns))


class CountingRaises(Counting):
    def end_episode(self, end: EpisodeEnd) -> None:
        raise RuntimeError("hook broke in a tournament")


def test_tournament_games_tell_every_seat_and_a_raising_hook_changes_no_result(tmp_path):
    from arena_tournament.config import config_from_dict
    from arena_tournament.runner import load_results, run_tournament

    ENDS_SEEN.clear()
    cfg = config_from_dict(
        {
            "name": "ends",
            "game": "kuhn_poker",
            "entrants": [
                {"name": "a", "factory": "test_end_episode:Counting"},
                {"name": "b", "factory": "test_end_episode:CountingRaises"},
            ],
            "deals": 2,
            "output": str(tmp_path / "out"),
        }
    )
    with pytest.warns(PlayerHookWarning, match="hook broke in a tournament"):
        report = run_tournament(cfg, quiet=True)
    games = load_results(report.path)[1]
    assert games and all(g.returns is not None and not g.faults for g in games)
    # entrant a heard the end of every game it sat in, with that game's returns for its seat's table
    heard = sorted((seed, tuple(returns)) for _, _, seed, returns in ENDS_SEEN)
    assert heard == sorted((g.seed, tuple(g.returns)) for g in games)
