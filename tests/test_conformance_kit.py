"""The conformance kit passes correct games and flags each deliberately broken one."""

import pytest

from arena_core.spec import CONFORMANCE_CHECKS
from arena_core.testing import ConformanceError, assert_conformance, run_conformance
from arena_games.kuhn import KuhnPoker
from broken_games import BROKEN, MORE_BROKEN, NAMED, DealsFromGlobalRandom, NoSampler, StatefulObservation
from toy_games import CountToTwenty, RepeatedPennies


@pytest.mark.parametrize(
    "game", [KuhnPoker(), RepeatedPennies(), CountToTwenty(), CountToTwenty(num_players=2)], ids=repr
)
def test_correct_games_pass_every_check(game):
    results = assert_conformance(game, max_examples=15)
    assert {r.name for r in results} == set(CONFORMANCE_CHECKS)
    assert all(r.status == "passed" for r in results)


def test_every_check_has_a_broken_game():
    assert set(BROKEN) == set(CONFORMANCE_CHECKS)


@pytest.mark.parametrize("check", sorted(BROKEN))
def test_the_kit_flags_the_broken_game(check):
    game = BROKEN[check]()
    results = {r.name: r for r in run_conformance(game, max_examples=15)}
    assert results[check].status == "failed", f"{check} was not flagged: {results[check]}"
    assert results[check].detail.startswith(f"{check}:"), results[check].detail
    assert NAMED[check] in results[check].detail, results[check].detail


@pytest.mark.parametrize("check,game_cls,named", MORE_BROKEN, ids=[f"{c}-{g.__name__}" for c, g, _ in MORE_BROKEN])
def test_the_kit_names_the_defect(check, game_cls, named):
    (result,) = run_conformance(game_cls(), max_examples=15, checks=[check])
    assert result.status == "failed", f"{game_cls.__name__} passed {check}"
    assert result.detail.startswith(f"{check}:") and named in result.detail, result.detail


def test_missing_sampler_fails_the_leak_check_unless_declared():
    results = {r.name: r for r in run_conformance(NoSampler(), max_examples=5, checks=["no_private_leak"])}
    assert results["no_private_leak"].status == "failed"
    assert "sample_hidden_state" in results["no_private_leak"].detail


def test_exempt_checks_are_reported_as_exempt_not_passed():
    class Declared(NoSampler):
        spec = NoSampler.spec.model_copy(
            update={"exempt_checks": {"no_private_leak": "hidden state cannot be enumerated"}}
        )

    results = {
        r.name: r for r in run_conformance(Declared(), max_examples=5, checks=["no_private_leak", "determinism"])
    }
    assert results["no_private_leak"].status == "exempt"
    assert results["no_private_leak"].detail == "hidden state cannot be enumerated"
    assert results["determinism"].status == "passed"


def test_conformance_error_lists_the_failures():
    with pytest.raises(ConformanceError, match="returns_bounds"):
        assert_conformance(BROKEN["returns_bounds"](), max_examples=5)


def test_every_failure_of_a_game_dealing_from_the_global_random_names_the_global_rng():
    with pytest.raises(ConformanceError) as err:
        assert_conformance(DealsFromGlobalRandom(), max_examples=10)
    failed = [r for r in err.value.results if r.status == "failed"]
    assert "no_global_rng" in {r.name for r in failed}
    for r in failed:
        assert "global RNG" in r.detail and "PYTHONHASHSEED" not in r.detail, r.detail
        assert r.detail.startswith(f"{r.name}:")
    assert f"  - {failed[0].name}: {failed[0].name}:" not in str(err.value)  # the name once per line


def test_a_nondeterministic_game_that_never_touches_the_global_rng_is_not_blamed_on_it():
    results = {
        r.name: r
        for r in run_conformance(StatefulObservation(), max_examples=10, checks=["no_global_rng", "determinism"])
    }
    assert results["determinism"].status == "failed" and "global RNG" not in results["determinism"].detail
    assert results["no_global_rng"].status == "passed"


def test_legal_play_alone_still_explores():
    """Selecting only legal_play must run the playthroughs (it has no per-playthrough function)."""
    from broken_games import CrashesOnLegalMove

    results = {r.name: r for r in run_conformance(CrashesOnLegalMove(), checks=["legal_play"], max_examples=10)}
    assert results["legal_play"].status == "failed", results["legal_play"]
