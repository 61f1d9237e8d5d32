"""Episode records as JSON lines: written as they happen, replayed and verified step by step."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core import IllegalActionPolicy, ReplayDivergenceError, play_episode, read_episodes
from arena_core.episode import EndReason
from arena_core.replay import replay, replay_file
from arena_games.kuhn import KuhnPoker
from arena_players.random_player import RandomPlayer
from test_match_policy import Babbler
from toy_games import CountToTwenty


def _record(tmp_path, game, seed, **kw):
    path = tmp_path / "ep.jsonl"
    players = [RandomPlayer(seed=i) for i in range(game.num_players)]
    record = play_episode(game, players, seed, log_path=str(path), **kw)
    return path, record


def test_record_round_trips_through_the_file(tmp_path):
    path, record = _record(tmp_path, CountToTwenty(), 3)
    (read,) = read_episodes(path)
    assert read == record
    assert read.header.game == "test_count20" and read.header.seed == 3 and read.header.players == ["random"] * 3
    assert read.end.reason is EndReason.NATURAL and sum(read.end.returns) == 0


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["raise", "default", "retry:1:default"]), st.integers(1, 12))
def test_replay_reproduces_every_line(seed, policy, cap):
    game = CountToTwenty()
    players = (
        [RandomPlayer(1), Babbler(), RandomPlayer(2)] if policy != "raise" else [RandomPlayer(i) for i in range(3)]
    )
    record = play_episode(game, players, seed, policy=IllegalActionPolicy.parse(policy), turn_cap=cap)
    again = replay(record, game)
    assert [e.model_dump(exclude={"telemetry"}) for e in again.events] == [
        e.model_dump(exclude={"telemetry"}) for e in record.events
    ]
    assert again.end == record.end


def test_replay_detects_a_tampered_action(tmp_path):
    path, _ = _record(tmp_path, CountToTwenty(), 1)
    lines = path.read_text().splitlines()
    step = json.loads(lines[2])
    step["action_id"] = (step["action_id"] + 1) % 3
    lines[2] = json.dumps(step)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplayDivergenceError, match="event 1"):
        replay_file(path, CountToTwenty())


def test_replay_detects_a_different_deal(tmp_path):
    path, _ = _record(tmp_path, KuhnPoker(), 1)
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["seed"] = 2  # deal of seed 2 gives player 0 another card
    lines[0] = json.dumps(header)
    path.write_text("\n".join(lines) + "\n")
    for s in range(2, 40):  # find a seed whose deal differs for the first observation
        if KuhnPoker().start(s).state.cards[0] != KuhnPoker().start(1).state.cards[0]:
            header["seed"] = s
            break
    lines[0] = json.dumps(header)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplayDivergenceError, match="obs_digest"):
        replay_file(path)


def test_replay_detects_a_wrong_result(tmp_path):
    path, _ = _record(tmp_path, KuhnPoker(), 1)
    lines = path.read_text().splitlines()
    end = json.loads(lines[-1])
    end["returns"] = [0.0, 0.0]
    lines[-1] = json.dumps(end)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ReplayDivergenceError, match="returns"):
        replay_file(path)


SLOW_GAME = """
import sys, time
from arena_core import play_episode, BasePlayer
sys.path.insert(0, {tests!r})
from toy_games import CountToTwenty

class Slow(BasePlayer):
    name = "slow"
    def act(self, decision):
        time.sleep(0.05)
        return decision.legal_actions[0]

for seed in range(100):
    play_episode(CountToTwenty(), [Slow(), Slow(), Slow()], seed, log_path={path!r})
"""


def test_a_killed_run_loses_nothing_written(tmp_path):
    path = tmp_path / "killed.jsonl"
    code = SLOW_GAME.format(tests=os.path.dirname(__file__), path=str(path))
    proc = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.time() + 60
    while time.time() < deadline and (not path.exists() or path.read_text().count('"type":"end"') < 1):
        time.sleep(0.1)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    text = path.read_text()
    assert text.endswith("\n"), "a line was torn"
    for line in text.splitlines():
        json.loads(line)
    episodes = read_episodes(path)
    assert episodes[0].end is not None
    assert episodes[-1].end is None  # the game in progress: every decision so far is kept
    replay(episodes[0], CountToTwenty())


def test_play_match_plays_a_match_set_up_by_the_caller_into_its_sink():
    """``play_match`` drives a caller's ``Match`` (here with an in-memory sink) exactly as
    ``play_episode`` does, begin_episode hooks included."""
    from arena_core.match import Match
    from arena_core.runner import play_match

    class Counting(RandomPlayer):
        begun: list = []

        def begin_episode(self, game, seat, episode_seed):
            Counting.begun.append((seat, episode_seed))

    game = KuhnPoker()
    lines: list = []
    record = play_match(Match(game, 11, sink=lines.append), [Counting(1), Counting(2)])
    assert Counting.begun == [(0, 11), (1, 11)]
    same = play_episode(game, [RandomPlayer(1), RandomPlayer(2)], 11)
    assert [s.action for s in record.steps] == [s.action for s in same.steps] and record.end.returns == same.end.returns
    assert [type(x).__name__ for x in lines][0] == "Header" and len(lines) == len(list(record.lines()))
