"""One fault classifier: every consumer reports the same kind for the same failure (issue 26).

The kind is decided where the failure happens and carried on the event
(:attr:`arena_core.episode.PolicyEvent.fault`); :func:`arena_core.faults.fault_of` is the one
reader. Two tables: eleven ways a live player fails, played through each consumer's own path
(the core game loop, a tournament and `arena compare`'s fault counts, the matrix study, training
rollouts); and twelve events as older records hold them (no ``fault`` field), read by each consumer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena_core.episode import End, EndReason, EpisodeRecord, Header, PolicyEvent
from arena_core.faults import FaultKind, fault_of
from arena_core.policy import IllegalActionPolicy
from arena_core.runner import play_episode

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # the toys, as the tournament tests import them

from fault_toys import Fails  # noqa: E402
from tournament_toys import DrawOrStand, Skilled  # noqa: E402

F = FaultKind
LIVE = [  # (how the player fails, the kind every consumer must report)
    ("value_error", F.ERROR),
    ("runtime_error", F.ERROR),
    ("player_error", F.ERROR),
    ("timeout_error", F.TIMEOUT),
    ("read_timeout", F.TIMEOUT),
    ("provider_timeout", F.TIMEOUT),
    ("cap", F.CAP_EXHAUSTED),
    ("garbage", F.UNPARSEABLE),
    ("none", F.UNPARSEABLE),
    ("move_none", F.UNPARSEABLE),
    ("illegal", F.ILLEGAL),
    ("illegal_telemetry", F.ILLEGAL),  # issue 45.3: once `unparseable`, read from the telemetry
    ("unavailable", F.UNAVAILABLE),  # issue 43: an outage is nobody's move
]
DEFAULT = IllegalActionPolicy.parse("default")


def core_loop(how: str) -> FaultKind:
    record = play_episode(DrawOrStand(), [Fails(how=how), Skilled(), Skilled()], 0, policy=DEFAULT)
    event = next(e for e in record.events if isinstance(e, PolicyEvent))
    assert event.fault is not None  # carried on the event, decided where it happened
    return fault_of(event)


def tournament_and_compare(how: str, tmp_path: Path) -> tuple[FaultKind, FaultKind]:
    from arena_tournament.compare import fault_counts
    from arena_tournament.config import config_from_dict
    from arena_tournament.runner import load_results, run_tournament

    config = config_from_dict(
        {
            "name": "kinds",
            "game": "draw_or_stand",
            "game_factory": "tournament_toys:DrawOrStand",
            "entrants": [
                {"name": "f", "factory": "fault_toys:Fails", "options": {"how": how}, "on_outage": "default"},
                {"name": "s", "factory": "tournament_toys:Skilled"},
                {"name": "t", "factory": "tournament_toys:Skilled"},
            ],
            "deals": 1,
            "output": str(tmp_path / "out"),
            "run": {"policy": "default", "backend": "sequential", "preflight": False},
        }
    )
    report = run_tournament(config, results_path=tmp_path / "out" / "results.jsonl", quiet=True)
    games = load_results(report.path)[1]
    kinds = [f.kind for g in games for f in g.faults if f.player == "f"]
    assert kinds and len(set(kinds)) == 1, kinds
    counted = fault_counts(games, ["f"])["f"]
    assert len(counted) == 1, counted
    return kinds[0], FaultKind(next(iter(counted)))


def study(how: str, tmp_path: Path) -> FaultKind:
    from arena_games.matrix.study import StudyConfig, run_study

    config = StudyConfig(
        player="fails",
        archetypes=("coordination",),
        ks=(2,),
        trials=2,
        listings=("shared",),
        policy="penalize",
        max_error_share=1.0,
    )
    run_study(config, tmp_path / "study", player_factory=lambda spec, seed: Fails(seed, how=how), plot=False)
    rows = [json.loads(line) for line in (tmp_path / "study" / "trials.jsonl").read_text().splitlines() if line]
    kinds = {r["fault_kind"] for r in rows if r.get("fault_kind")}
    assert len(kinds) == 1, kinds
    return FaultKind(kinds.pop())


def rollout(how: str) -> FaultKind:
    from arena_train.rollout import _opponent_action

    game = DrawOrStand()
    pos = game.start(0)
    seat = game.current_player(pos)
    _, kind = _opponent_action(game, pos, seat, Fails(how=how), 0)
    assert kind is not None
    return kind


@pytest.mark.parametrize(("how", "kind"), LIVE, ids=[h for h, _ in LIVE])
def test_every_consumer_reports_the_same_kind_for_a_live_failure(how, kind, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))  # tournament factories import the toys by module name
    seen = {"core loop": core_loop(how), "rollouts": rollout(how), "study": study(how, tmp_path)}
    seen["tournament"], seen["compare"] = tournament_and_compare(how, tmp_path)
    assert seen == dict.fromkeys(seen, kind)


# ---------------------------------------------------------------------- records written before the field
def _event(telemetry=None, *, illegal=False, detail="player failed") -> PolicyEvent:
    return PolicyEvent(
        ply=0, player=0, attempted=None, verdict="forfeit", illegal=illegal, detail=detail, telemetry=telemetry or {}
    )


LEGACY = [  # events as older records hold them (no `fault` field), and their kind
    (_event({"fault": "crash"}), F.CRASH),
    (_event({"fault": "cap_exhausted", "error_type": "BudgetExceededError"}), F.CAP_EXHAUSTED),
    (_event({"error_type": "timeout"}), F.TIMEOUT),
    (_event({"error_type": "hung"}), F.TIMEOUT),
    (_event({"error_type": "ReadTimeout"}), F.TIMEOUT),
    (_event({"error_type": "ProviderError"}, detail="player raised ProviderError: timed out after 60 s"), F.TIMEOUT),
    (_event({"error_type": "BudgetExceededError"}, detail="spending cap reached"), F.CAP_EXHAUSTED),
    (_event({"error_type": "ValueError"}), F.ERROR),
    (_event({"parse_detail": "no label found"}, illegal=True), F.UNPARSEABLE),
    (_event({"parse_method": "unparseable"}, illegal=True), F.UNPARSEABLE),
    (_event({"valid": False}, illegal=True), F.UNPARSEABLE),
    (_event({}, illegal=True), F.ILLEGAL),
]


def _study_reading(event: PolicyEvent) -> FaultKind:
    from arena_games.matrix.study import StudyConfig, _game
    from arena_games.matrix.trials import sampling_info, trial_row

    game = _game(StudyConfig(player="x"), "shared", "coordination", 2, 0)
    header = Header(
        game="matrix", game_version=game.spec.version, seed=0, num_players=2, params={}, policy=DEFAULT.model_dump()
    )
    end = End(reason=EndReason.FORFEIT, terminated=True, truncated=False, returns=[-1.0, 0.0], ply=0, offender=0)
    record = EpisodeRecord(header=header, events=[event], end=end)
    info = sampling_info(object(), 0)
    return FaultKind(trial_row(game, record, "shared", "coordination", 2, 0, 0, False, [info, info])["fault_kind"])


@pytest.mark.parametrize(("event", "kind"), LEGACY, ids=[str(i) for i in range(len(LEGACY))])
def test_every_consumer_reads_an_older_record_alike(event, kind):
    from arena_tournament.play import fault_kind as tournament_reading

    assert event.fault is None
    assert fault_of(event) is kind
    assert tournament_reading(event) is kind
    assert _study_reading(event) is kind


def test_the_tables_are_big_enough():
    assert (
        len(LIVE) >= 10
        and len(LEGACY) >= 10
        and {k for _, k in LIVE}
        >= set(F)
        - {
            F.CRASH,
            F.DEFAULT_APPLIED,
            F.FORFEIT,
        }
    )


# ---------------------------------------------------------------------- issue 45.3: decided, never inferred, live
TELEMETRY_KEYS = ("parse_detail", "parse_method", "valid", "error_type", "fault_kind")


@pytest.mark.parametrize("how", [h for h, _ in LIVE])
def test_a_live_game_never_infers_a_kind(how, monkeypatch):
    """The inference (reading a telemetry tag, a parse verdict, an error type) is for older
    records only: a live game, through every consumer's core path, decides each kind where it happens."""
    import arena_core.faults as faults

    def refuse(*args, **kwargs):
        raise AssertionError("a live failure's kind was inferred from its telemetry")

    monkeypatch.setattr(faults, "_read", refuse)
    assert core_loop(how) is dict(LIVE)[how]
    assert rollout(how) is dict(LIVE)[how]


@settings(max_examples=40, deadline=None)
@given(
    telemetry=st.dictionaries(
        st.sampled_from(TELEMETRY_KEYS),
        st.sampled_from(["unparseable", "timeout", "crash", "", False, True]),
        max_size=5,
    ),
    illegal=st.booleans(),
)
def test_an_illegal_move_is_illegal_whatever_its_telemetry(telemetry, illegal):
    from arena_core.match import Match

    game = DrawOrStand()
    match = Match(game, 0, policy=DEFAULT)
    seat = match.to_act()
    assert seat is not None
    match.submit(seat, 99, telemetry=telemetry)  # 99 is never legal in DrawOrStand
    seat = match.to_act()
    assert seat is not None
    match.fail(seat, "garbage or a crash", telemetry=telemetry, illegal=illegal)  # no kind given: the default
    first, second = [e for e in match.record.events if isinstance(e, PolicyEvent)]
    assert first.fault is F.ILLEGAL
    assert second.fault is (F.ILLEGAL if illegal else F.ERROR)
