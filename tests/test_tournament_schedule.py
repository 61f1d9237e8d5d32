"""Schedules: Steiner triple systems, seat balance, rotations, shared deals, validation."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from arena_tournament.schedule import (
    Entrant,
    Schedule,
    design_tables,
    greedy_covering,
    is_steiner_order,
    make_schedule,
    sampled_tables,
    steiner_triple_system,
)

STEINER_ORDERS = [v for v in range(3, 46) if is_steiner_order(v)]


def entrants(n: int) -> list[Entrant]:
    return [Entrant(name=f"e{i}", player="random", seed=i) for i in range(n)]


@given(st.sampled_from(STEINER_ORDERS))
@settings(max_examples=len(STEINER_ORDERS), deadline=None)
def test_steiner_triple_system_has_each_pair_exactly_once(v):
    triples = steiner_triple_system(v)
    assert len(triples) == v * (v - 1) // 6
    pairs = Counter(p for t in triples for p in itertools.combinations(sorted(t), 2))
    assert set(pairs) == set(itertools.combinations(range(v), 2))
    assert set(pairs.values()) == {1}
    appearances = Counter(x for t in triples for x in t)
    assert set(appearances.values()) == {(v - 1) // 2}  # every entrant at the same number of tables


def test_sts13_is_megagembench_schedule():
    # MegagemBench's BIBD_MODELS and its 26 triples (model numbers), from generate_bibd_schedule.py
    models = [24, 6, 7, 3, 5, 4, 27, 20, 26, 25, 11, 12, 13]
    published = (
        "(5,6,24) (4,6,7) (3,7,27) (3,5,20) (4,5,26) (4,25,27) (11,20,27) (12,20,26) (13,25,26) (11,24,25) "
        "(6,11,12) (7,12,13) (3,13,24) (7,20,24) (3,6,26) (5,7,25) (3,4,11) (5,12,27) (4,13,20) (24,26,27) "
        "(6,20,25) (7,11,26) (3,12,25) (5,11,13) (4,12,24) (6,13,27)"
    )
    expected = {tuple(sorted(int(x) for x in t.strip("()").split(","))) for t in published.split()}
    assert {tuple(sorted(models[i] for i in t)) for t in steiner_triple_system(13)} == expected


@pytest.mark.parametrize("v", [2, 4, 5, 6, 8, 10, 11, 12, 14])
def test_no_steiner_system_where_none_exists(v):
    with pytest.raises(ValueError, match="1 or 3"):
        steiner_triple_system(v)


@given(st.sampled_from([7, 9, 13]), st.integers(1, 4))
@settings(max_examples=12, deadline=None)
def test_three_player_schedule_rotations_seats_and_deals(v, num_deals):
    sched = make_schedule("megagem", entrants(v), 3, list(range(100, 100 + num_deals)))
    assert sched.design == "steiner"
    games = sched.games()
    assert len(games) == len(sched.tables) * num_deals * 3
    assert len({g.key for g in games}) == len(games)
    names = [e.name for e in sched.entrants]
    for table in sched.tables:
        members = sorted(names[i] for i in table)
        for seed in sched.deals:  # deals shared: every table plays every seed
            at = [g for g in games if g.seed == seed and sorted(g.seats) == members]
            assert len(at) == 3
            # every cyclic rotation present, so each member sits in each seat exactly once
            assert {tuple(g.seats) for g in at} == {
                tuple(members_in_order[(s - r) % 3] for s in range(3))
                for r in range(3)
                for members_in_order in [at[0].seats]
            }
            for seat in range(3):
                assert sorted(g.seats[seat] for g in at) == members
            assert len({g.cluster for g in at}) == 1
    seat_counts = Counter((g.seats[s], s) for g in games for s in range(3))
    assert len(set(seat_counts.values())) == 1  # seats balanced over the whole tournament
    assert {g.seed for g in games} == set(sched.deals)


def test_two_player_round_robin_both_seat_orders_on_every_deal():
    sched = make_schedule("kuhn_poker", entrants(5), 2, [7, 8, 9])
    assert sched.design == "round_robin"
    games = sched.games()
    ordered = Counter((g.seats, g.seed) for g in games)
    for a, b in itertools.permutations([e.name for e in sched.entrants], 2):
        for seed in (7, 8, 9):
            assert ordered[((a, b), seed)] == 1


@pytest.mark.parametrize("v", [10, 11, 12, 14])
def test_covering_meets_every_pair_with_small_imbalance(v):
    tables = greedy_covering(v, 3)
    pairs = Counter(p for t in tables for p in itertools.combinations(sorted(t), 2))
    assert set(pairs) == set(itertools.combinations(range(v), 2))
    # v = 5 (mod 6) forces a pair met three times (even point degrees), so allow 3
    assert max(pairs.values()) <= 3
    excess = sum(pairs.values()) - v * (v - 1) // 2
    assert excess <= v  # few repeated meetings: close to the minimum covering


def test_auto_design_small_nonsteiner_uses_all_triples():
    tables, used = design_tables(5, 3)
    assert used == "all" and len(tables) == 10


@given(st.integers(5, 10), st.integers(4, 5), st.integers(0, 50))
@settings(max_examples=10, deadline=None)
def test_sampled_tables_keep_pair_counts_balanced(v, k, seed):
    if v < k:
        return
    count = 3 * v
    tables = sampled_tables(v, k, count, seed)
    assert all(len(set(t)) == k for t in tables)
    used = Counter(x for t in tables for x in t)
    assert max(used.values()) - min(used.values()) <= 1
    pairs = Counter(p for t in tables for p in itertools.combinations(sorted(t), 2))
    full = [pairs.get(p, 0) for p in itertools.combinations(range(v), 2)]
    assert max(full) - min(full) <= 3
    assert sampled_tables(v, k, count, seed) == tables  # seeded, deterministic


def test_schedule_is_data_and_round_trips():
    sched = make_schedule("megagem", entrants(7), 3, [1, 2])
    again = Schedule.model_validate_json(sched.model_dump_json())
    assert again == sched and again.games() == sched.games()


def test_schedule_rejects_bad_tables_and_names():
    ents = entrants(4)
    with pytest.raises(ValidationError, match="seats an entrant twice"):
        Schedule(game="g", num_players=3, entrants=tuple(ents), tables=((0, 0, 1),), deals=(1,))
    with pytest.raises(ValidationError, match="needs 3"):
        Schedule(game="g", num_players=3, entrants=tuple(ents), tables=((0, 1),), deals=(1,))
    with pytest.raises(ValidationError, match="unique"):
        Schedule(game="g", num_players=2, entrants=(ents[0], ents[0]), tables=((0, 1),), deals=(1,))
    with pytest.raises(ValidationError, match="distinct"):
        Schedule(game="g", num_players=2, entrants=tuple(ents), tables=((0, 1),), deals=(1, 1))
    with pytest.raises(ValidationError, match="exactly one"):
        Entrant(name="x")
    with pytest.raises(ValueError, match="cannot fill"):
        design_tables(2, 3)


def test_disconnected_design_is_refused_with_one_line():
    from arena_core.errors import ConfigError

    with pytest.raises(ConfigError, match="2 groups that never meet") as info:
        make_schedule("megagem", entrants(6), 3, [1], design="sampled", num_tables=2, seed=0)
    assert "\n" not in str(info.value) and "{e0, e2, e4} | {e1, e3, e5}" in str(info.value)


def test_disconnected_config_exits_2_with_one_line(tmp_path, capsys):
    from arena_tournament.cli import main_tournament

    cfg = tmp_path / "split.toml"
    cfg.write_text(
        'game = "draw_or_stand"\ngame_factory = "tournament_toys:DrawOrStand"\nnum_players = 3\ndesign = "sampled"\ntables = 2\n'
        f'output = "{(tmp_path / "out").as_posix()}"\n'
        + "".join(f'[[entrants]]\nname = "e{i}"\nplayer = "random"\n' for i in range(6))
    )
    assert main_tournament([str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "never meet" in err


@given(st.integers(4, 12), st.integers(3, 4), st.integers(0, 30))
@settings(max_examples=15, deadline=None)
def test_automatic_designs_are_connected(v, k, seed):
    from arena_tournament.schedule import table_groups

    if v < k:
        return
    tables, _ = design_tables(v, k, seed=seed)
    assert len(table_groups(v, tables)) == 1
