"""The arena loop's ratings, resume and frontier seat (issue 32), tiny: Kuhn-v0, 4 deals x 2
seatings (the fewest that give rating intervals), two GRPO steps. A finished seed is skipped, a
cut one continues (its tournaments through the runner's resume, its training from the latest
checkpoint, exactly); a directory of another config is refused; the tournaments rate every
entrant with intervals; a frontier seat behind a local fake OpenAI server plays the
tournaments within its call cap and is skipped, in one line, without its key."""

from __future__ import annotations

import json
import math
import re
import shutil

import pytest

pytest.importorskip("textarena")
pytest.importorskip("mlx_lm")

from arena_core.errors import ConfigError
from arena_games.matrix.fakellm import FakeChatServer
from arena_train.loop import frontier_options, load_config, main, parse_loop_config, run_loop

EQ = "textarena_kuhn_equilibrium"
TINY = {
    "name": "tiny-resume",
    "game": "textarena/KuhnPoker-v0",
    "seeds": [5],
    "analysis": "arena_games.textarena.kuhn_v0:exact_values",
    "tournament": {"deals": 4, "seed": 7, "bootstrap": 200, "opponents": [EQ, "random"]},
    "server": {"enabled": False},
    "train": {
        "steps": 2,
        "deals_per_step": 1,
        "group_size": 2,
        "kl_beta": 0.0,
        "plot": False,
        "checkpoint_every": 1,
        "pool": {"snapshot_every": 1, "max_snapshots": 2, "snapshot_temperature": 1.0},
        "eval": {"anchor": "random", "deals": 2},
    },
}
OPPS = {"opp1-" + EQ, "opp2-random"}


def _quiet(lines):
    return lambda s: lines.append(s)


def _strip(result):
    return {k: v for k, v in result.items() if k not in ("train_s", "resumed_from_step", "run_id")}


def test_ratings_resume_and_a_foreign_config(tmp_path):
    cfg, out, lines, steps = parse_loop_config(TINY), tmp_path / "out", [], []
    first = run_loop(cfg, out, log=_quiet(lines), progress=lambda step, row: steps.append((step, row["step"])))
    (seed5,) = first["seeds"]
    assert steps == [(s, s) for s in range(1, TINY["train"]["steps"] + 1)]  # the hook sees every training step
    # every entrant rated, with a finite interval of non-zero width; the re-tournament seats both models
    for phase, names in (("before", {"stock"} | OPPS), ("after", {"stock", "rl"} | OPPS)):
        board = seed5["ratings"][phase]["leaderboard"]
        assert {r["name"] for r in board} == names
        for r in board:
            assert math.isfinite(r["rating_low"]) and math.isfinite(r["rating_high"])
            assert r["rating_low"] < r["rating"] < r["rating_high"], r
            assert r["rank_low"] <= r["rank"] <= r["rank_high"]
        assert (out / "seed5" / phase / "summary.json").exists()  # the tournament's own summary
    assert seed5["rl_vs_stock"]["games"] == 8
    md = (out / "report.md").read_text()
    assert "| 5 | after | rl |" in md and "| 5 | before | stock |" in md

    # the same command with one more seed: seed 5 is skipped (not replayed), seed 6 runs
    lines.clear()
    both = run_loop(cfg, out, seeds=[5, 6], log=_quiet(lines))
    assert "seed 5: finished already, skipped" in lines and any(x.startswith("continuing") for x in lines)
    assert [r["seed"] for r in both["seeds"]] == [5, 6]
    assert both["seeds"][0] == json.loads(json.dumps(seed5))
    seed6 = both["seeds"][1]

    # cut seed 6 in its re-tournament: the runner's resume plays only the missing games
    s6 = out / "seed6"
    (s6 / "result.json").unlink()
    results = (s6 / "after" / "results.jsonl").read_text().splitlines(keepends=True)
    (s6 / "after" / "results.jsonl").write_text("".join(results[:-3]))
    lines.clear()
    again = run_loop(cfg, out, seeds=[5, 6], log=_quiet(lines))
    assert "tiny-resume-after: 3 games played, 45 already recorded" in lines
    assert again["seeds"][1] == json.loads(json.dumps(seed6))

    # cut seed 6 in its training: it resumes from the latest checkpoint, exactly (the same weights,
    # so the restarted re-tournament gives the uncut run's numbers)
    final = (s6 / "train" / "checkpoints" / "step_000002" / "trainable.safetensors").read_bytes()
    (s6 / "result.json").unlink()
    (s6 / "train.json").unlink()
    shutil.rmtree(s6 / "train" / "checkpoints" / "step_000002")
    lines.clear()
    again = run_loop(cfg, out, seeds=[5, 6], log=_quiet(lines))
    assert "seed 6: resuming the training from step_000001" in lines
    assert "tiny-resume-before: 0 games played, 24 already recorded" in lines
    assert (s6 / "train" / "checkpoints" / "step_000002" / "trainable.safetensors").read_bytes() == final
    resumed = again["seeds"][1]
    assert resumed["resumed_from_step"] == 1
    assert _strip(resumed) == _strip(json.loads(json.dumps(seed6)))
    assert [c["step"] for c in resumed["exact"]["curve"]] == [0, 1, 2]

    # another config on this directory: one line naming what differs, and the fix
    other = parse_loop_config({**TINY, "train": {**TINY["train"], "steps": 3}})
    with pytest.raises(ConfigError, match=r"differs in train\.steps.*--out"):
        run_loop(other, out, log=_quiet(lines))


def test_a_foreign_directory_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    cfg = tmp_path / "loop.json"
    cfg.write_text(json.dumps(TINY))
    assert main([str(cfg), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "holds no loop.json" in err and "--out" in err


class LegalFake(FakeChatServer):
    """Answers the last legal action of TextArena's prompt; every third request, words that are no move."""

    def answer(self, body):
        prompt = body["messages"][-1]["content"]
        legal = re.findall(r"\[\w+\]", prompt.rsplit("Legal actions:", 1)[-1])
        with self._lock:
            n = len(self.log)
            self.log.append({"legal": legal})
        return "I am not sure." if n % 3 == 2 else legal[-1]


def test_the_frontier_seat_plays_capped_and_is_skipped_without_its_key(tmp_path, monkeypatch):
    frontier = {"model": "fake", "base_url_env": "ARENA_TEST_FRONTIER_URL", "api_key_env": "", "max_calls": 12}
    cfg = parse_loop_config(
        {**TINY, "tournament": {**TINY["tournament"], "frontier": {**frontier, "cache_dir": str(tmp_path / "cache")}}}
    )
    lines = []
    monkeypatch.delenv("ARENA_TEST_FRONTIER_URL", raising=False)
    assert frontier_options(cfg, log=_quiet(lines)) is None
    assert lines == [
        "frontier seat 'fake' skipped: ARENA_TEST_FRONTIER_URL not set "
        "(set it to seat the model, or remove [tournament.frontier])"
    ]
    with LegalFake() as server:
        monkeypatch.setenv("ARENA_TEST_FRONTIER_URL", server.url)
        report = run_loop(cfg, tmp_path / "out", log=_quiet(lines))
        (seed,) = report["seeds"]
        # evaluation only: 12 calls at most per tournament (the after one reuses the cache)
        assert 0 < server.requests <= 2 * 12
    f = seed["frontier"]
    for phase, opponents in (("before", 3), ("after", 4)):
        assert f[phase]["games"] == opponents * 8  # every scheduled game is counted, played or cut
        assert 0 < f[phase]["unplayed"] < f[phase]["games"]  # the cap cut the rest
        assert f[phase]["faults"] > 0 and f[phase]["decisions"] > 0  # its bad answers counted as faults
    assert seed["opponents"]["frontier:fake"]["before"]["games"] > 0
    assert "frontier" in {r["name"] for r in seed["ratings"]["after"]["leaderboard"]}
    assert "Frontier seat" in (tmp_path / "out" / "report.md").read_text()


def test_the_liars_config_seats_a_frontier_model_only_when_its_key_is_set(monkeypatch):
    cfg = load_config("examples/textarena_loop_liars.toml")
    f = cfg.tournament.frontier
    assert f is not None and f.max_calls > 0 and f.api_key_env
    monkeypatch.delenv(f.api_key_env, raising=False)
    lines = []
    assert frontier_options(cfg, log=_quiet(lines)) is None and len(lines) == 1 and f.api_key_env in lines[0]
    monkeypatch.setenv(f.api_key_env, "set")
    opts = frontier_options(cfg, log=_quiet(lines))
    if f.base_url_env is None:
        assert opts is not None and opts["max_calls"] == f.max_calls and "~" not in opts["cache_dir"]
