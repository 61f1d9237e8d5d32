"""The public hypothesis strategies: they play legally, shrink to short episodes and small
seeds, carry the episode in the failure report, and write it as a replayable episode file."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from arena_core.cli import main as arena_main
from arena_core.errors import GameOverError, IllegalActionError, NotYourTurnError
from arena_core.game import Position
from arena_core.replay import replay_file
from arena_core.testing.strategies import (
    FAILING_EPISODES_ENV,
    Playthrough,
    PlaythroughError,
    apply_joint,
    illegal_actions,
    joint_actions,
    legal_actions,
    playthroughs,
    positions,
    seeds,
)
from arena_games.kuhn import KuhnPoker
from arena_games.megagem import Bid, MegaGem
from broken_games import CrashesOnLegalMove
from toy_games import CountToTwenty, RepeatedPennies

QUIET = settings(
    max_examples=300, database=None, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
KUHN, MEGAGEM, PENNIES, COUNT = KuhnPoker(), MegaGem(num_players=3), RepeatedPennies(), CountToTwenty()


def coins_conserved(pt: Playthrough) -> bool:
    """The bank's books close at every position (as in test_megagem_properties)."""
    game = pt.game
    for s in pt.states:
        paid = sum(r.price for r in s.history)
        if sum(s.coins) != game.num_players * game.start_coins + sum(map(sum, s.loans)) - paid:
            return False
    return True


class CoinLeakAt(MegaGem):
    """Planted bug: the bank hands seat 0 a coin when a non-zero bid is made at decision k."""

    k = 0

    def act(self, pos, player, action):
        after = super().act(pos, player, action)
        if pos.ply == self.k and isinstance(action, Bid) and action.amount > 0:
            s = after.state
            leaked = type(s)(**{f: getattr(s, f) for f in s.__slots__} | {"coins": (s.coins[0] + 1,) + s.coins[1:]})
            return Position(leaked, after.pending, after.ply)
        return after


@pytest.mark.parametrize("k", [0, 4, 13, 37])
def test_a_bug_planted_at_decision_k_shrinks_to_at_most_k_plus_2_decisions(k):
    game = type(f"CoinLeakAt{k}", (CoinLeakAt,), {"k": k})(num_players=3)
    found = find(playthroughs(game), lambda pt: not coins_conserved(pt), settings=QUIET)
    assert not coins_conserved(found)
    assert len(found.moves) <= k + 2, found
    assert found.seed <= 2  # the deal hardly matters to this bug: the seed shrinks (almost) all the way
    assert isinstance(found.moves[k][1], Bid) and found.moves[k][1].amount == 1  # the smallest triggering bid
    assert all(a in (Bid(0),) or not isinstance(a, Bid) for _, a in found.moves[:k])  # earlier bids shrink to 0


def test_the_seed_shrinks_toward_small_values():
    found = find(playthroughs(KUHN), lambda pt: pt.final.state.cards == (2, 0), settings=QUIET)
    assert found.final.state.cards == (2, 0) and found.seed < 256 and len(found.moves) == 0


def test_a_failure_report_carries_the_episode_and_writes_a_replayable_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(FAILING_EPISODES_ENV, str(tmp_path))

    @QUIET
    @given(playthroughs(MEGAGEM))
    def no_big_bid_after_the_first_round(pt):
        assert not any(isinstance(a, Bid) and a.amount >= 5 for _, a in pt.moves[3:])

    with pytest.raises(AssertionError) as info:
        no_big_bid_after_the_first_round()
    report = "\n".join(getattr(info.value, "__notes__", [])) + capsys.readouterr().out
    assert re.search("Falsifying example|Failing test case", report)
    # the first round's bids shrink to 0; cut right after the offending bid, itself shrunk to 5
    assert re.search(
        r"<Playthrough megagem seed \d+: p0 bid 0, p1 bid 0, p2 bid 0, .*bid 5 -> stopped after [45] decision", report
    )
    (path,) = tmp_path.glob("megagem-seed*-*decisions.jsonl")
    assert f"episode written to {path}" in report
    (record,) = replay_file(path)
    assert record.end.reason.value == "turn_cap" and record.end.returns is None  # a cut-off prefix, never a result
    assert record.steps[-1].action == "bid 5"
    assert arena_main(["replay", str(path)]) == 0
    assert "1 episode(s) replayed exactly" in capsys.readouterr().out


def test_the_episode_file_of_a_complete_game_and_of_an_empty_prefix(tmp_path):
    done = find(playthroughs(KUHN, complete=True), lambda pt: True, settings=QUIET)
    (record,) = replay_file(done.write(tmp_path / "done.jsonl"))
    assert record.end.reason.value == "natural" and tuple(record.end.returns) == done.returns
    empty = Playthrough(KUHN, 5, (), (KUHN.start(5),))
    (record,) = replay_file(empty.write(tmp_path / "empty.jsonl"))
    assert len(record.steps) == 1 and record.end.reason.value == "turn_cap"  # an episode needs one decision


@QUIET
@given(playthroughs(COUNT, complete=True))
def test_complete_playthroughs_end_and_every_move_was_legal(pt):
    assert pt.complete and pt.returns == COUNT.final_returns(pt.final) and pt.final.state.total >= 20
    for before, seat, action, after in pt.transitions():
        assert seat == COUNT.current_player(before) and action in COUNT.legal(before, seat)
        assert COUNT.act(before, seat, action).state == after.state
    assert f"{len(pt.moves)} decision" not in pt.describe() and "returns" in pt.describe()


@settings(max_examples=40, database=None, deadline=None)
@given(playthroughs(KUHN, policies={1: lambda decision: decision.legal_actions[-1]}))
def test_a_seat_policy_plays_its_seat(pt):
    assert all(str(a) == "bet" for seat, a in pt.moves if seat == 1)


def test_a_policy_answer_that_is_illegal_is_reported_with_the_episode():
    game = MegaGem(num_players=3)
    with pytest.raises(PlaythroughError, match=r"IllegalActionError.*episode so far: megagem seed 0"):
        find(playthroughs(game, policies={2: lambda d: Bid(999)}, complete=True), lambda pt: True, settings=QUIET)


def test_a_crashing_game_shrinks_to_the_moves_before_the_crash():
    game = CrashesOnLegalMove()
    with pytest.raises(PlaythroughError) as info:
        find(playthroughs(game, complete=True), lambda pt: True, settings=QUIET)
    assert "RuntimeError: rules bug at decision 1" in str(info.value)
    assert len(info.value.playthrough.moves) == 1 and info.value.playthrough.seed == 0


@settings(max_examples=60, database=None, deadline=None)
@given(st.data())
def test_legal_actions_are_accepted_and_illegal_ones_rejected(data):
    game = data.draw(st.sampled_from([KUHN, COUNT, PENNIES, MEGAGEM]))
    pos = data.draw(positions(game))
    seat = data.draw(st.integers(0, game.num_players - 1))
    if seat in game.players_to_act(pos):
        action = data.draw(legal_actions(game, pos, seat))
        assert game.act(pos, seat, action).ply == pos.ply + 1
    bad = illegal_actions(game, pos, seat)
    if not bad.is_empty:
        with pytest.raises((IllegalActionError, NotYourTurnError, GameOverError)):
            game.act(pos, seat, data.draw(bad))


@settings(max_examples=40, database=None, deadline=None)
@given(st.data())
def test_joint_actions_at_a_simultaneous_move_commit_then_reveal_together(data):
    pos = data.draw(positions(PENNIES, where=lambda g, p: not g.is_over(p) and not p.pending))
    joint = data.draw(joint_actions(PENNIES, pos))
    assert sorted(joint) == [0, 1]
    after = apply_joint(PENNIES, pos, joint)
    assert after.state == PENNIES.next_state(pos.state, joint) and not after.pending
    assert after.state.last == (joint[0], joint[1])


def test_positions_reach_terminal_ones_and_where_filters():
    assert KUHN.is_over(find(positions(KUHN), lambda pos: KUHN.is_over(pos), settings=QUIET))
    simultaneous = find(
        positions(MEGAGEM, where=lambda g, p: len(g.players_to_act(p)) > 1), lambda p: True, settings=QUIET
    )
    assert len(MEGAGEM.players_to_act(simultaneous)) == 3 and simultaneous.ply == 0  # the earliest such position


def test_nothing_to_draw_at_the_end_and_bad_arguments_are_refused():
    end = find(positions(KUHN), lambda pos: KUHN.is_over(pos), settings=QUIET)
    assert legal_actions(KUHN, end).is_empty and joint_actions(KUHN, end).is_empty
    assert not illegal_actions(KUHN, end, 0).is_empty
    with pytest.raises(ValueError, match="seats"):
        playthroughs(KUHN, policies={2: None})
    with pytest.raises(TypeError, match="Game instance"):
        playthroughs(KuhnPoker)
    assert find(seeds(), lambda seed: True, settings=QUIET) == 0


def test_playthrough_repr_is_the_episode():
    pt = Playthrough(
        KUHN,
        3,
        ((0, KUHN.legal(KUHN.start(3), 0)[1]),),
        (KUHN.start(3), KUHN.act(KUHN.start(3), 0, KUHN.legal(KUHN.start(3), 0)[1])),
    )
    assert repr(pt) == "<Playthrough kuhn_poker seed 3: p0 bet -> stopped after 1 decision(s)>"
    assert json.loads(next(iter(pt.record().lines())))["game"] == "kuhn_poker"


def test_without_hypothesis_the_import_says_what_to_install():
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "for name in ('strategies', 'machine'):\n"
        "    try:\n"
        "        __import__('arena_core.testing.' + name)\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.splitlines() == [
        f"arena_core.testing.{n} needs hypothesis: pip install hypothesis" for n in ("strategies", "machine")
    ]
