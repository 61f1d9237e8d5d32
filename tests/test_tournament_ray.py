"""The Ray backend, on a Ray instance started on this machine, gives the sequential results."""

from __future__ import annotations

import pytest

from arena_tournament.config import config_from_dict
from arena_tournament.runner import load_results, run_tournament

ray = pytest.importorskip("ray")


def config(out, backend: str):
    entrants = [{"name": f"s{i}", "factory": "tournament_toys:Skilled", "options": {"skill": i / 6}} for i in range(7)]
    entrants[3] = {"name": "crash", "factory": "tournament_toys:Crashing"}  # failures travel through Ray as data too
    entrants[5] = {"name": "hang", "factory": "tournament_toys:Hanging"}  # and so do time-outs
    return config_from_dict(
        {
            "game": "draw_or_stand",
            "game_factory": "tournament_toys:DrawOrStand",
            "entrants": entrants,
            "deals": 2,
            "output": str(out),
            "run": {"backend": backend, "workers": 2, "decision_time_limit_s": 0.2},
        }
    )


@pytest.mark.slow  # Ray start-up alone takes 10-20 s here
def test_ray_backend_gives_the_sequential_results(tmp_path):
    seq = run_tournament(config(tmp_path / "seq", "sequential"), quiet=True)
    on_ray = run_tournament(config(tmp_path / "ray", "ray"), quiet=True)
    assert on_ray.played == seq.played == 42
    assert not ray.is_initialized()  # the runner shuts down the Ray it started

    def by_key(path):
        return sorted((g.outcome() for g in load_results(path)[1]), key=lambda o: o["key"])

    assert by_key(on_ray.path) == by_key(seq.path)
