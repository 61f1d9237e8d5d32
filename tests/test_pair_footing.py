"""Issue 46.5: the intervals printed beside a verdict stand on the verdict's footing.

A verdict ("resolved") is Holm-controlled over all pairs; the interval beside it is simultaneous
over the same pairs (Bonferroni, level 1 - 0.05/K), so an interval that excludes chance always
belongs to a resolved pair, and all of them cover at once with at least 95% on tiny, separated
and clustered data. The hostile case: the plain 95% intervals, all pairs at once, cover far less,
and a model that lost 34 of 36 games had plain intervals that excluded chance beside "Resolved
orderings: none".
"""

from __future__ import annotations

import html
import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core import stats
from arena_tournament import synthetic
from arena_tournament.ratings import Outcome, head_to_head, plackett_luce_ratings, summarize
from arena_tournament.schedule import steiner_triple_system

ROUND_ROBIN_4 = list(itertools.combinations(range(4), 2))


@pytest.mark.parametrize(
    "theta, tables, deals, deal_sd",
    [
        (np.linspace(-1, 1, 4), ROUND_ROBIN_4, 4, 0.5),  # tiny: 4 deals, 8 games a pair
        (np.array([-3.5, 0.0, 0.2, 0.4]), ROUND_ROBIN_4, 6, 0.3),  # separated: one entrant loses ~95%
        (np.linspace(-1, 1, 7), steiner_triple_system(7), 4, 1.0),  # clustered: a strong deal effect
    ],
    ids=["tiny", "separated", "clustered"],
)
def test_simultaneous_intervals_cover_every_pair_at_once(theta, tables, deals, deal_sd):
    cov = synthetic.coverage(theta, tables, deals, deal_sd=deal_sd, trials=30, resamples=150, seed=46)
    # all pairs of a tournament covered at once, in >= 95% of tournaments (30 trials: >= 27 allows MC error)
    assert cov["all_difference_simultaneous"] >= 0.9 and cov["all_head_to_head_simultaneous"] >= 0.9, cov
    assert cov["zero_width"] == 0
    if len(theta) == 7:  # the hostile case: the plain intervals, read all at once, miss far more often
        assert cov["all_difference"] < 0.85, cov


def _results(weak_wins: int, deals: int = 6):
    """4 entrants, two-player round robin, both seat orders on every deal: ``weak`` plays 36
    games over 6 deals and wins ``weak_wins`` of them; the others split their games."""
    from arena_tournament.results import GameResult, ScheduleLine, Settings
    from arena_tournament.schedule import Entrant, Schedule

    names = ["weak", "b", "c", "d"]
    games = []
    rng = np.random.default_rng(46)
    won = 0
    for d in range(deals):
        for t, (i, j) in enumerate(ROUND_ROBIN_4):
            for r in range(2):
                seats = [names[i], names[j]] if r == 0 else [names[j], names[i]]
                if "weak" in seats:
                    weak_won = won < weak_wins and r == 0 and j == 1 and d % 3 == 1
                    won += weak_won
                    winner = "weak" if weak_won else next(s for s in seats if s != "weak")
                else:
                    winner = seats[int(rng.integers(2))]
                games.append(
                    GameResult(
                        key=f"{d}/{t}/{r}",
                        cluster=f"deal {d}",
                        table=t,
                        deal=d,
                        seed=d,
                        rotation=r,
                        seats=seats,
                        reason="natural",
                        returns=[1.0 if s == winner else 0.0 for s in seats],
                        plies=1,
                    )
                )
    schedule = Schedule(
        game="toy",
        num_players=2,
        entrants=tuple(Entrant(name=n, player="random") for n in names),
        tables=tuple(ROUND_ROBIN_4),
        deals=tuple(range(deals)),
    )
    return ScheduleLine(name="lost 34 of 36", schedule=schedule, settings=Settings(policy="penalize")), games


def test_a_model_that_lost_34_of_36_games_gets_intervals_on_its_verdicts_footing():
    from arena_tournament.report import FOOTING, html_report, leaderboard_notes

    header, games = _results(weak_wins=2)
    weak = [g for g in games if "weak" in g.seats]
    assert len(weak) == 36 and sum(g.returns[g.seats.index("weak")] == 1.0 for g in weak) == 2
    summary = summarize(header, games, resamples=300)
    assert "Resolved orderings (95%, Holm over 6 pairs): none" in leaderboard_notes(summary)
    weak_pairs = [h for h in summary.head_to_head if "weak" in (h.a, h.b)]
    # what the page used to print beside "none": plain intervals that exclude chance ...
    assert any(h.high < 0.5 or h.low > 0.5 for h in weak_pairs)
    for h in summary.head_to_head:  # ... now the simultaneous ones, which agree with the verdicts
        assert not h.resolved and h.sim_low <= 0.5 <= h.sim_high and h.p_holm > 0.05
        assert h.sim_low <= h.low and h.high <= h.sim_high
    for p in summary.rating_pairs:
        assert not p.resolved and p.sim_low <= 0.0 <= p.sim_high and p.p_holm > 0.05
    page = html_report(summary)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())
    assert " ".join(FOOTING.split()) in text
    table = page[page.index('id="pairs"') :]
    for h in weak_pairs:  # the pair table prints the simultaneous interval, not the plain one
        assert f"[{h.sim_low:.3f}, {h.sim_high:.3f}]" in table and f"[{h.low:.3f}, {h.high:.3f}]" not in table


def test_a_pair_resolved_at_a_later_holm_step_is_marked_and_explained():
    """Holm may resolve a pair whose simultaneous interval still touches chance (it tests later
    pairs at 0.05/(K-r+1)); the page marks it and says why, and the reverse never happens."""
    from arena_tournament.report import footing_notes, html_report

    header, games = _results(weak_wins=0, deals=12)
    summary = summarize(header, games, resamples=300)
    later = [h for h in summary.head_to_head if h.resolved and h.sim_low <= 0.5 <= h.sim_high]
    cells = summary.head_to_head
    if not later:  # make one: a resolved cell whose simultaneous interval reaches 0.5 (as Holm's step 2 gives)
        first = next(h for h in cells if h.resolved)
        cells = [h.model_copy(update={"sim_high": 0.5}) if h is first else h for h in cells]
    shown = summary.model_copy(update={"head_to_head": cells})
    (line,) = footing_notes(shown)
    assert "head to head, marked †" in line and "0.05/(K-r+1)" in line
    assert "yes †" in html_report(shown)
    assert footing_notes(summary.model_copy(update={"head_to_head": [h for h in cells if not h.resolved]})) == []


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)), min_size=12, max_size=40),
    st.integers(4, 6),
)
@settings(max_examples=25, deadline=None)
def test_an_interval_excludes_chance_only_where_the_verdict_resolves(scores, deals):
    names = ["x", "y", "z"]
    games = [
        Outcome(str(i), f"deal {i % deals}", tuple(names[(j + i) % 3] for j in range(3)), tuple(float(s) for s in sc))
        for i, sc in enumerate(scores)
    ]
    for p in head_to_head(games, names):
        if p.interval is None:
            assert p.simultaneous is None and not p.resolved
            continue
        lo, hi = p.simultaneous
        assert lo <= p.interval[0] and p.interval[1] <= hi and hi > lo  # wider than the pair's own, never a point
        assert p.resolved == (p.p_holm <= 0.05)
        if not lo <= 0.5 <= hi:
            assert p.resolved
    fit = plackett_luce_ratings(games, names, resamples=40)
    for i, j in itertools.combinations(range(3), 2):
        lo, hi = fit.pair_sim_low[i, j], fit.pair_sim_high[i, j]
        assert lo <= fit.pair_low[i, j] and fit.pair_high[i, j] <= hi and hi > lo
        assert bool(fit.pair_resolved[i, j]) == (fit.pair_p_holm[i, j] <= 0.05)
        if not lo <= 0.0 <= hi:
            assert fit.pair_resolved[i, j]


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30), st.floats(0.001, 0.2))
@settings(max_examples=200, deadline=None)
def test_holm_adjusted_p_values_agree_with_holm(p, alpha):
    adjusted = stats.holm_adjusted(p)
    for verdict, a, x in zip(stats.holm(p, alpha), adjusted, p):
        assert x <= a <= 1.0
        if abs(a - alpha) > 1e-12 * max(1.0, alpha):  # off the rounding boundary: the same verdict
            assert verdict == (a <= alpha)
    assert stats.holm_adjusted([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_a_summary_from_before_the_simultaneous_intervals_says_its_intervals_are_each_pairs_own():
    from arena_tournament.report import FOOTING, OLD_FOOTING, html_report
    from arena_tournament.summary import RatingsSummary

    header, games = _results(weak_wins=2)
    data = summarize(header, games, resamples=100).to_json()
    for row in data["rating_pairs"] + data["head_to_head"]:  # summary.json as an older arena wrote it
        for key in ("sim_low", "sim_high", "diff_sim_low", "diff_sim_high", "p_holm"):
            row.pop(key, None)
    old = RatingsSummary.model_validate(data)
    page = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", html_report(old))).split())
    assert " ".join(OLD_FOOTING.split()) in page and " ".join(FOOTING.split()) not in page
    h = old.head_to_head[0]
    assert f"[{h.low:.3f}, {h.high:.3f}] (this pair alone)" in page
