"""`arena check GAME`: one line per check, the minimal failing episode saved and replayable,
exit 1 on a failed check, one line and exit 2 on bad input."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

from arena_core.check_cli import check_game, minimal_failing_playthrough
from arena_core.cli import main as arena_main
from arena_core.replay import replay_file
from arena_core.spec import CONFORMANCE_CHECKS
from arena_games.kuhn import KuhnPoker
from broken_games import CrashesOnLegalMove, NotZeroSum, TooLong


def run_arena(*args, env=None, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "arena_core.cli", *args], capture_output=True, text=True, timeout=300, env=env, cwd=cwd
    )


def test_a_conforming_game_passes_with_one_line_per_check(capsys):
    assert arena_main(["check", "kuhn_poker", "--max-examples", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "arena check kuhn_poker (2 players), 5 examples"
    assert [line.split()[1] for line in out[1:-1]] == list(CONFORMANCE_CHECKS)
    assert all(line.startswith("  passed  ") for line in out[1:-1])
    assert out[-1] == f"{len(CONFORMANCE_CHECKS)} checks: {len(CONFORMANCE_CHECKS)} passed, 0 failed, 0 exempt"


@pytest.mark.parametrize(
    "args,message",
    [
        (["kuhn_pokr"], "no game named 'kuhn_pokr'; did you mean kuhn_poker"),
        (["kuhn_poker", "--players", "3"], "kuhn_poker is played by 2 players, not 3"),
        (["megagem", "--param", "value_chart=Z"], "invalid parameters for megagem"),
        (["kuhn_poker", "--checks", "determinism,speed"], "unknown check(s) speed"),
        (["kuhn_poker", "--max-examples", "0"], "--max-examples must be at least 1"),
        ([], "the following arguments are required: game"),
        (["kuhn_poker", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, message):
    out = run_arena("check", *args)
    assert out.returncode == 2, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr and "Traceback" not in out.stderr


def test_a_failed_check_is_named_and_its_minimal_episode_saved_and_replayable(tmp_path, capsys):
    game = NotZeroSum()
    assert check_game(game, max_examples=10, checks=["returns_sum", "determinism"], out=tmp_path) == 1
    out = capsys.readouterr().out
    assert re.search(
        r"  FAILED  returns_sum\s+returns_sum: seed \d+: returns .* sum to 0.5, declared zero_sum 0.0", out
    )
    assert "  passed  determinism" in out and out.strip().endswith("2 checks: 1 passed, 1 failed, 0 exempt")
    saved = re.search(r"minimal failing episode \((\d) decisions\): (\S+);", out)
    assert saved and int(saved.group(1)) == 2  # pass-pass: the shortest game there is
    (record,) = replay_file(saved.group(2), game)
    assert record.end.reason.value == "natural" and sum(record.end.returns) == 0.5


def test_exempt_checks_show_their_reason_and_aggregate_claims_save_nothing(tmp_path, capsys):
    class Exempted(KuhnPoker):
        spec = KuhnPoker.spec.model_copy(
            update={"exempt_checks": {"pettingzoo_api": "no AEC env for this variant yet"}}
        )

    assert check_game(Exempted(), max_examples=5, checks=["pettingzoo_api", "replay"], out=tmp_path) == 0
    out = capsys.readouterr().out
    assert re.search(r"  exempt  pettingzoo_api\s+no AEC env for this variant yet", out)
    assert minimal_failing_playthrough(KuhnPoker(), "cross_process_determinism") is None


def test_a_game_that_crashes_under_legal_play_saves_the_moves_before_the_crash(tmp_path, capsys):
    assert check_game(CrashesOnLegalMove(), max_examples=10, checks=["legal_play", "determinism"], out=tmp_path) == 1
    out = capsys.readouterr().out
    assert "FAILED  legal_play" in out and "rules bug" in out
    path = re.search(r"minimal failing episode \(1 decisions\): (\S+);", out).group(1)
    (record,) = replay_file(path, CrashesOnLegalMove())
    assert len(record.steps) == 1


def test_a_too_long_game_saves_a_complete_failing_game(tmp_path, capsys):
    assert check_game(TooLong(), max_examples=10, checks=["length_bound"], out=tmp_path) == 1
    assert "minimal failing episode (3 decisions)" in capsys.readouterr().out


def test_a_third_party_game_fails_from_the_command_line_and_arena_replay_steps_through_the_episode(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "unfair.py").write_text(
        textwrap.dedent("""
        from arena_games.kuhn import KuhnPoker

        class UnfairKuhn(KuhnPoker):
            spec = KuhnPoker.spec.model_copy(update={"id": "unfair_kuhn"})

            def returns(self, state):
                a, b = super().returns(state)
                return (a, b + 4.5)  # every episode breaks the zero sum and the (-2, 2) bounds
    """)
    )
    info = site / "unfair-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: unfair\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[arena.games]\nunfair_kuhn = unfair:UnfairKuhn\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    out = run_arena("check", "unfair_kuhn", "--max-examples", "5", env=env, cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "FAILED  returns_sum" in out.stdout and "FAILED  returns_bounds" in out.stdout
    paths = re.findall(r"step through it: arena replay (\S+)", out.stdout)
    assert paths and all(p.startswith("arena-check/unfair_kuhn-") for p in paths)
    replayed = run_arena("replay", paths[0], env=env, cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr
    assert "1 episode(s) replayed exactly" in replayed.stdout


def test_without_hypothesis_it_says_what_to_install():
    code = "import sys; sys.modules['hypothesis'] = None\nfrom arena_core.cli import main\nsys.exit(main(['check', 'kuhn_poker']))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (
        out.returncode == 2
        and out.stderr.strip() == "arena check: error: the conformance kit needs hypothesis: pip install hypothesis"
    )
