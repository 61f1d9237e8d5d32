"""Kuhn poker to Nash by self-play, measured exactly (issue 17). One file, past 500 lines, because
the variant tables (every round's configs and tuning seeds), their runs, the CFR reference and
the report that reads them back change together.

The tiny random-weight language model plays both seats at once (GRPO self-play, a running
baseline per seat), and at every evaluation the exact exploitability (NashConv / 2) of its
sampling policy over Kuhn's 12 information states is computed, for the last iterate and for
the average policy (the uniform mixture over the evaluation snapshots, one drawn per game,
made exact as its realisation-equivalent behaviour policy). Beside it: vanilla CFR's
average policy at the same number of game traversals (x axis: episodes for the learner;
for CFR, one traversal = one deal walked to all its terminals, 12 per iteration).

    python bench/train_kuhn_nash.py run --seed 0 [--episodes 300000]   # one seed -> runs/kuhn_nash/seed_0
    python bench/train_kuhn_nash.py report                            # docs/benchmarks.md section + plot

``run`` records episodes per second; ``report`` reads whatever the seeds reached.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _report import machine, write_section  # noqa: E402

RUNS = ROOT / "runs" / "kuhn_nash"
DOCS = ROOT / "docs"
GOAL = 0.02

CONFIG = dict(
    name="kuhn-nash",
    game="kuhn_poker",
    self_play=True,
    baseline="role",
    baseline_decay=0.95,
    deals_per_step=16,
    group_size=8,  # 128 episodes per step
    group_draws="shared",  # the plays of a group share the deal (and opponents' draws): the scheme these figures were made with
    engine="reference",  # the engine they were made with (the fast engine is another random stream)
    temperature=3.0,
    kl_beta=0.0,
    entropy_beta=0.1,
    optim=dict(learning_rate=3e-5, schedule="constant"),
    eval=dict(anchor="kuhn_king_only", every=25, exploitability=True),
    checkpoint_every=0,
    plot=True,
)


#: variants beside the main config: name -> (changes, run directory)
VARIANTS = {
    "entropy_0.2": {"entropy_beta": 0.2},
    "deals_32x4": {"deals_per_step": 32, "group_size": 4},
    "lr6e-5_linear": {"deals_per_step": 32, "group_size": 4, "optim": dict(learning_rate=6e-5, schedule="linear")},
}
_32x4 = {"deals_per_step": 32, "group_size": 4}
#: single-seed (seed 0) trials, run with ``run --variant NAME``; not in the report's tables (their
#: seed-0 numbers are quoted in docs/benchmarks.md as "also tried")
PROBES = {
    "lr1e-4_linear": {**_32x4, "optim": dict(learning_rate=1e-4, schedule="linear")},
    "lr2e-4_linear": {**_32x4, "optim": dict(learning_rate=2e-4, schedule="linear")},
    "entropy_0": {**_32x4, "entropy_beta": 0.0},
    "entropy_0.03": {**_32x4, "entropy_beta": 0.03},
    "entropy_0.05": {**_32x4, "entropy_beta": 0.05},
    "entropy_0.07": {**_32x4, "entropy_beta": 0.07},
    "entropy_0.2_to_0.03": {**_32x4, "entropy_beta": 0.2, "entropy_final": 0.03},
    "entropy_0.1_to_0.03": {**_32x4, "entropy_beta": 0.1, "entropy_final": 0.03},
    "entropy_0.2_to_0.1": {**_32x4, "entropy_beta": 0.2, "entropy_final": 0.1},
    "entropy_0.2_to_0.1_lr6e-5_linear": {
        **_32x4,
        "entropy_beta": 0.2,
        "entropy_final": 0.1,
        "optim": dict(learning_rate=6e-5, schedule="linear"),
    },
    "entropy_0.2_to_0.05_lr6e-5_linear": {
        **_32x4,
        "entropy_beta": 0.2,
        "entropy_final": 0.05,
        "optim": dict(learning_rate=6e-5, schedule="linear"),
    },
}
_lin6 = {**_32x4, "optim": dict(learning_rate=6e-5, schedule="linear")}
#: issue 17 round 3 (helper E): magnetic mirror descent with a moving magnet (kl_beta, magnet_every),
#: per-information-state baselines (baseline = "infostate")
PROBES.update(
    {
        "mmd_e0.1to0.02_kl0.1_m25": {**_lin6, "entropy_final": 0.02, "kl_beta": 0.1, "magnet_every": 25},
        "infostate": {**_lin6, "baseline": "infostate"},
    }
)
#: round-3 trials on the Kuhn-only tiny model (KUHN_ONLY_MODEL); r3_base is the previous best config there
ROUND3: dict[str, dict] = {
    "r3_base": dict(_lin6),
    "r3_b1_0_e0.05_lr1.2e-4": {
        **_32x4,
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0),
    },
    "r3_b1_0_e0.05_lr3.6e-4": {
        **_32x4,
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=3.6e-4, schedule="linear", beta1=0.0),
    },
    "r3_b1_0_e0.15to0.03_lr1.2e-4": {
        **_32x4,
        "entropy_beta": 0.15,
        "entropy_final": 0.03,
        "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0),
    },
    "r3_b1_0_e0.05_lr2e-4": {
        **_32x4,
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=2e-4, schedule="linear", beta1=0.0),
    },
    "r3_info_b1_0_e0.05_lr1.2e-4": {
        **_32x4,
        "baseline": "infostate",
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0),
    },
    "r3_t5_b1_0_e0.05_lr2e-4": {
        **_32x4,
        "temperature": 5.0,
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=2e-4, schedule="linear", beta1=0.0),
    },
    "r3_t5_b1_0_e0.05_lr1.2e-4": {
        **_32x4,
        "temperature": 5.0,
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0),
    },
    "r3_16x4_b1_0_e0.05_lr1.2e-4": {
        "deals_per_step": 16,
        "group_size": 4,  # 64 episodes per step, twice the updates for the same episodes
        "eval": dict(anchor="kuhn_king_only", every=50, exploitability=True),  # a snapshot every 3,200 episodes
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0),
    },
    "r3_b1_0_e0.15to0.05in300_lr1.2e-4": {
        **_32x4,
        "entropy_beta": 0.15,
        "entropy_final": 0.05,
        "entropy_decay_steps": 300,  # a strong bonus only while the policy leaves the random init
        "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0),
    },
    "r3_16x4_b1_0_e0.05_lr1.2e-4_warm200": {
        "deals_per_step": 16,
        "group_size": 4,
        "eval": dict(anchor="kuhn_king_only", every=50, exploitability=True),
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0, warmup_steps=200),
    },
    "r3_8x4_b1_0_e0.05_lr1.2e-4_warm400": {
        "deals_per_step": 8,
        "group_size": 4,  # 32 episodes per step: four times the updates of 32 x 4
        "eval": dict(anchor="kuhn_king_only", every=100, exploitability=True),
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0, warmup_steps=400),
    },
    "r3_info_none_b1_0_e0.05_lr1.2e-4": {
        **_32x4,
        "baseline": "infostate",
        "advantage_scale": "none",
        "entropy_beta": 0.05,
        "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0),
    },
}
#: issue 31 point 5: the numpy PG's moving magnet (bench section "Kuhn without the floor") carried to
#: the LM: the round-3 five-seed config, its entropy bonus annealed to 0 and a KL toward a magnet
#: reset every 400 updates (25,600 episodes, as in the numpy runs); a single probe on seed 0
ROUND3["r3_warm200_magnet0.25_m400_e0.05to0"] = {
    "deals_per_step": 16,
    "group_size": 4,
    "eval": dict(anchor="kuhn_king_only", every=50, exploitability=True),
    "entropy_beta": 0.05,
    "entropy_final": 0.0,
    "kl_beta": 0.25,
    "magnet_every": 400,
    "optim": dict(learning_rate=1.2e-4, schedule="linear", beta1=0.0, warmup_steps=200),
}
#: issue 31 point 5 on the LM (tuning seeds 0 and 1): the five-seed config with the average weighted by
#: the snapshot's step (the random start weighs nothing), its entropy bonus annealed to 0.02 (a lower
#: logit-equilibrium floor for the last iterate), and with a proximal KL toward a magnet reset every 50
#: updates (damping the rotation of simultaneous gradient play without moving its fixed point)
_P5 = {
    **ROUND3["r3_16x4_b1_0_e0.05_lr1.2e-4_warm200"],
    "eval": dict(anchor="kuhn_king_only", every=50, exploitability=True, average="linear"),
}
ROUND3["p5_lin_e0.05to0.02"] = {**_P5, "entropy_final": 0.02}
ROUND3["p5_lin_e0.05to0.02_prox0.2_m50"] = {**_P5, "entropy_final": 0.02, "kl_beta": 0.2, "magnet_every": 50}
ROUND3["p5_lin_e0.05to0.02_prox0.4_m50"] = {**_P5, "entropy_final": 0.02, "kl_beta": 0.4, "magnet_every": 50}
#: the magnet as in the numpy runs (reset every 25,600 episodes, so the policy nears the regularised
#: equilibrium around each magnet before it moves), with the annealed entropy and step-weighted average
ROUND3["p5_lin_e0.05to0.02_mag0.25_m400"] = {**_P5, "entropy_final": 0.02, "kl_beta": 0.25, "magnet_every": 400}
#: the same magnet reset twice as often (its last iterate converged, but the start was slow)
ROUND3["p5_lin_e0.05to0.02_mag0.25_m200"] = {**_P5, "entropy_final": 0.02, "kl_beta": 0.25, "magnet_every": 200}
#: the 400-update magnet (the best last iterates) with a 1.5x learning rate, for a faster start
ROUND3["p5_lin_e0.05to0.02_mag0.25_m400_lr1.8e-4"] = {
    **_P5,
    "entropy_final": 0.02,
    "kl_beta": 0.25,
    "magnet_every": 400,
    "optim": {**_P5["optim"], "learning_rate": 1.8e-4},
}
#: a strong magnet (R-NaD's regime: each window near the regularised equilibrium around its magnet,
#: whose strength no longer biases the fixed point once the magnet moves), reset every 6,400 episodes
ROUND3["p5_lin_e0.05to0.02_mag1.0_m100"] = {**_P5, "entropy_final": 0.02, "kl_beta": 1.0, "magnet_every": 100}
#: the same with fewer, less noisy updates: 128 or 256 episodes per step (the magnet still reset every
#: 3,200 episodes, the warmup over the same share of the run, a snapshot every 3,200 episodes)
ROUND3["p5_lin_e0.05to0.02_prox0.2_32x4"] = {
    **_P5,
    "deals_per_step": 32,
    "entropy_final": 0.02,
    "kl_beta": 0.2,
    "magnet_every": 25,
    "eval": {**_P5["eval"], "every": 25},
    "optim": {**_P5["optim"], "warmup_steps": 100},
}
ROUND3["p5_lin_e0.05to0.02_prox0.2_64x4"] = {
    **_P5,
    "deals_per_step": 64,
    "entropy_final": 0.02,
    "kl_beta": 0.2,
    "magnet_every": 13,
    "eval": {**_P5["eval"], "every": 13},
    "optim": {**_P5["optim"], "warmup_steps": 50},
}
PROBES.update(ROUND3)
for _name in ("r3_16x4_b1_0_e0.05_lr1.2e-4", "r3_16x4_b1_0_e0.05_lr1.2e-4_warm200"):
    VARIANTS[_name] = ROUND3[_name]
#: the config of the issue's five-seed curve (plotted first)
FINAL = "r3_16x4_b1_0_e0.05_lr1.2e-4_warm200"
#: why a variant has fewer than 5 seeds (default: stopped to give the CPU to other runs)
SHORT_REASON = {
    "r3_16x4_b1_0_e0.05_lr1.2e-4": "seed 1 sat in the pure-profile trap at 0.167 from its first evaluation and was "
    "stopped at 153,600 episodes; the same config with a learning-rate warmup (next) replaced it",
}
#: what a probe's line in "also tried" needs said beside its numbers
PROBE_NOTES = {
    "mmd_e0.1to0.02_kl0.1_m25": "default tiny model as it was then; stopped: its last iterate cycled (0.15-0.26)",
    "infostate": "default tiny model as rebuilt after another piece's text change (a different random model); "
    "stopped: behind the 6e-5 linear seed 0 at the same point",
    "r3_b1_0_e0.05_lr3.6e-4": "stopped: collapsed early (average 0.24 at 80,000)",
    "r3_b1_0_e0.05_lr2e-4": "stopped: stuck near the pure profile at 0.167 early (average 0.093 at 86,000)",
    "r3_info_b1_0_e0.05_lr1.2e-4": "stopped: trapped at 0.166 for the first 13,000 episodes, then oscillating "
    "0.2-0.47 (average 0.134 at 64,000)",
    "r3_8x4_b1_0_e0.05_lr1.2e-4_warm400": "tried after the five seeds, on seed 1 (one of the two that missed): stopped, trapped at "
    "0.416 from 48,000 to 112,000 episodes (average 0.224 at 112,000)",
    "r3_t5_b1_0_e0.05_lr1.2e-4": "stopped to make room for the 64-episode-step trial; level with the temperature-3 "
    "run at the same point (average 0.066 at 64,000 for both)",
    "r3_b1_0_e0.15to0.05in300_lr1.2e-4": "stopped at 32,000 when the 64-episode-step trial reached 0.018 and its "
    "five seeds took the CPU",
    "r3_warm200_magnet0.25_m400_e0.05to0": "issue 31 point 5, the numpy PG's moving magnet carried to the LM, run "
    "to the end (575 s): behind the five-seed config's seed 0 (0.0162); the first magnet is the sharp random initial "
    "model and the average carries the slow start",
    "r3_info_none_b1_0_e0.05_lr1.2e-4": "stopped: collapsed to a pure strategy within 40 steps (exploitability 0.167, "
    "entropy 0.001)",
}
VARIANT_NOTES = {
    "r3_16x4_b1_0_e0.05_lr1.2e-4": "round 3, on the Kuhn-only tiny model; chosen from the single-seed round-3 trials "
    "on seed 0 (under also tried), the only one at or below 0.02 there: AdamW without momentum (beta1 = 0), a smaller "
    "entropy bonus (0.05, so a smaller bias toward uniform), the learning rate 1.2e-4 decaying linearly, and 64 episodes "
    "per step, so the same 300,000 episodes make twice the updates (4,687) and the early phase, where the policy is "
    "trapped near a pure profile at exploitability 0.167, costs fewer episodes; a snapshot every 50 steps (3,200 "
    "episodes, as in the other rows)",
    "r3_16x4_b1_0_e0.05_lr1.2e-4_warm200": "the previous config with optim.warmup_steps = 200 (the learning rate climbs "
    "linearly over the first 200 of 4,687 updates): AdamW's first full-size steps threw seed 1 into the pure profile "
    "at 0.167 within 50 updates, where the gradients vanish; with the warmup seed 1 tracked seed 0's curve of the "
    "previous config (average 0.043 at 124,000 against 0.046 at 128,000), so the five seeds were run with it "
    "(seed 1's run is that trial, run to the end and kept; seeds 0, 2, 3 and 4 were started after the choice)",
    "entropy_0.2": "a stronger pull toward uniform, to keep the rare mixed decisions alive",
    "deals_32x4": "chosen after the main config missed the goal, from one 100,000-episode probe on seed 0 (average-policy "
    "exploitability 0.071 against the main config's 0.103 at the same point): with a running baseline per seat a group of "
    "repeated deals adds nothing, so the same episodes spread over twice as many distinct deals",
    "lr6e-5_linear": "chosen from single-seed 300,000-episode trials on seed 0 of the learning rate and schedule and of the entropy "
    "bonus (constant or decayed linearly, the entropy_final option); it had the lowest seed-0 average-policy exploitability of those trials",
}


def variant_root(variant: str | None) -> Path:
    return RUNS if not variant else RUNS / variant


#: the runs from round 3 on (the variants in ROUND3) use the tiny model with its tokenizer trained on
#: Kuhn poker's text alone: the default 'tiny' model's tokenizer also reads MegaGem's text, so any edit
#: to MegaGem's views gives Kuhn runs another random model (and seeds of one config could differ)
KUHN_ONLY_MODEL = ("kuhn_poker",)


def kuhn_model_path() -> str:
    from arena_players.tiny_model import ensure_tiny_model

    return str(ensure_tiny_model(game_ids=KUHN_ONLY_MODEL))


def run(seed: int, episodes: int, *, extend: bool = False, variant: str | None = None) -> Path:
    """One seed for ``episodes`` episodes; ``extend``: continue the finished 300,000-episode run
    of that seed exactly (resume_from) to ``episodes`` in runs/kuhn_nash/extended/ (beyond the
    issue's budget: where the curve goes next)."""
    from arena_train import grpo
    from arena_train.trainer import Parts

    root = variant_root(variant)
    config = {**CONFIG, **({**VARIANTS, **PROBES}[variant] if variant else {})}
    per_step = config["deals_per_step"] * config["group_size"]
    steps = max(1, episodes // per_step)
    if variant in ROUND3:
        config["model"] = {"path": kuhn_model_path()}
    out = (root / "extended" if extend else root) / f"seed_{seed}"
    if out.exists():
        shutil.rmtree(out)
    timing = out.parent / f"seed_{seed}.timing.jsonl"
    timing.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with timing.open("w") as fh:

        def progress(step: int, row: dict) -> None:
            if "eval_exploitability" in row:
                fh.write(
                    json.dumps(
                        {
                            "step": step,
                            "episodes": row["episodes_total"],
                            "wall_s": round(time.perf_counter() - started, 2),
                        }
                    )
                    + "\n"
                )
                fh.flush()

        extra = {"resume_from": str(root / f"seed_{seed}")} if extend else {}
        grpo.TRAINER({**config, "seed": seed, "steps": steps, **extra}, out, Parts(progress=progress))
    return out


def cfr_curve(max_traversals: int, points: int = 60) -> list[tuple[int, float]]:
    import numpy as np

    from arena_core.registry import make_game
    from arena_train.exact import CFR, exploitability

    game = make_game("kuhn_poker")
    cfr = CFR(game)
    marks = sorted(
        {max(1, int(x)) for x in np.geomspace(1, max(1, max_traversals // cfr.traversals_per_iteration), points)}
    )
    out = []
    for m in marks:
        cfr.iterate(m - cfr.iterations)
        out.append((cfr.iterations * cfr.traversals_per_iteration, exploitability(game, cfr.average()).exploitability))
    return out


def load_runs(root: Path = RUNS) -> dict[int, dict]:
    runs = {}
    for d in sorted(root.glob("seed_*")):
        if not d.is_dir():
            continue
        rows = (
            [json.loads(line) for line in (d / "metrics.jsonl").read_text().splitlines() if line.strip()]
            if (d / "metrics.jsonl").exists()
            else []
        )
        evals = [r for r in rows if "eval_exploitability" in r]
        timing = d.parent / f"{d.name}.timing.jsonl"
        times = (
            [json.loads(line) for line in timing.read_text().splitlines() if line.strip()] if timing.exists() else []
        )
        manifest = json.loads((d / "manifest.json").read_text()) if (d / "manifest.json").exists() else {}
        if evals:
            runs[int(d.name.split("_")[1])] = {
                "evals": evals,
                "times": times,
                "planned_steps": manifest.get("config", {}).get("steps"),
                "status": manifest.get("status", "running or stopped"),
                "tail": tail_average(d) if manifest.get("status") else None,
            }
    return runs


def logit_equilibrium(tau: float, *, start=None, iters: int = 6000, step: float = 0.02):
    """The entropy-regularised (logit agent-quantal-response) equilibrium of Kuhn poker at
    temperature ``tau`` chips: at every information state the policy is the softmax of its own
    conditional action values divided by ``tau``, the point an entropy bonus pulls self-play
    toward (with ``advantage_scale = "batch_std"``, ``tau`` is the bonus times the step's std of
    centred returns). Damped fixed-point iteration on the game's own tree (enumerated once);
    ``start``: logits to continue from (small taus need a start near their solution).
    Returns (exploitability, logits)."""
    import numpy as np

    from arena_core.registry import make_game
    from arena_train.exact import deals_of, exploitability, information_states, infostate_key

    game = make_game("kuhn_poker")
    infos = information_states(game)
    index = {i.key: n for n, i in enumerate(infos)}

    def build(pos):
        if game.is_over(pos):
            return np.asarray(game.final_returns(pos), dtype=np.float64)
        seat = game.current_player(pos)
        kids = [build(game.act(pos, seat, a)) for a in game.legal(pos, seat)]
        return (index[infostate_key(game, pos, seat)], seat, kids)

    roots = [(p, build(game.start(seed))) for seed, p in deals_of(game)]
    logits = np.zeros((len(infos), 2)) if start is None else start.copy()

    def walk(node, pi, reach, q, w):
        """Values of ``node`` for every seat; adds reach-weighted action values at each state."""
        if isinstance(node, np.ndarray):
            return node
        s, seat, kids = node
        others = reach[2] * reach[1 - seat]  # chance x the other seat's reach
        vals = []
        for a, kid in enumerate(kids):
            r = reach.copy()
            r[seat] *= pi[s, a]
            vals.append(walk(kid, pi, r, q, w))
        w[s] += others
        for a, v in enumerate(vals):
            q[s, a] += others * v[seat]
        return sum(pi[s, a] * v for a, v in enumerate(vals))

    for _ in range(iters):
        pi = np.exp(logits - logits.max(axis=1, keepdims=True))
        pi /= pi.sum(axis=1, keepdims=True)
        q, w = np.zeros_like(logits), np.zeros(len(infos))
        for p, root in roots:
            walk(root, pi, np.array([1.0, 1.0, p]), q, w)
        target = q / np.maximum(w, 1e-300)[:, None] / tau
        logits = (1 - step) * logits + step * (target - target.max(axis=1, keepdims=True))
    pi = np.exp(logits - logits.max(axis=1, keepdims=True))
    pi /= pi.sum(axis=1, keepdims=True)
    table = {i.key: {game.action_id(a): float(pi[n, k]) for k, a in enumerate(i.actions)} for n, i in enumerate(infos)}
    return exploitability(game, table).exploitability, logits


def logit_equilibria(taus=(0.2, 0.13, 0.1, 0.065, 0.05)) -> dict[float, float]:
    """Exploitability of the logit equilibrium at each tau (descending), each continued from the last."""
    out, logits = {}, None
    for tau in taus:
        small = tau < 0.065  # the damped iteration needs smaller steps there
        out[tau], logits = logit_equilibrium(tau, start=logits, iters=3000, step=0.005 if small else 0.02)
    return out


def tail_average(run_dir: Path) -> float | None:
    """Exploitability of the uniform mixture over the second half of a finished run's evaluation
    snapshots (an extra, clearly labelled number: the issue's metric is the mixture over all of them)."""
    from arena_core.registry import make_game
    from arena_train.exact import average_policy, exploitability

    states = sorted((run_dir / "checkpoints").glob("step_*/state.json"))
    if not states:
        return None
    tables = [
        {k: {int(a): p for a, p in d.items()} for k, d in t.items()}
        for t in json.loads(states[-1].read_text()).get("policy_tables", [])
    ]
    if len(tables) < 2:
        return None
    game = make_game("kuhn_poker")
    return exploitability(game, average_policy(game, tables[len(tables) // 2 :])).exploitability


def first_at_or_below(evals: list[dict], key: str, level: float) -> int | None:
    for e in evals:
        if e[key] <= level:
            return e["episodes_total"]
    return None


def _seed_stats(runs: dict) -> str:
    """Across the seeds that finished: the mean average-policy and last-iterate exploitability with a
    t interval over seeds, and the share of seeds at or below the goal with a Wilson interval."""
    from arena_core.stats import paired_t, wilson_interval

    done = [r["evals"][-1] for r in runs.values() if r["evals"][-1]["step"] >= (r["planned_steps"] or 0)]
    if len(done) < 2:
        return ""
    out = []
    for key, name in (("eval_avg_exploitability", "average policy"), ("eval_exploitability", "last iterate")):
        vals = [e[key] for e in done]
        mean, low, high, _ = paired_t(vals)
        k = sum(v <= GOAL for v in vals)
        wl, wh = wilson_interval(k, len(vals))
        out.append(
            f"{name}: mean {mean:.4f} over {len(vals)} seeds (t 95% [{low:.4f}, {high:.4f}]), "
            f"{k} of {len(vals)} at or below {GOAL} (Wilson 95% [{wl:.2f}, {wh:.2f}] for a seed's chance)"
        )
    return "; " + "; ".join(out)


def _table(runs: dict, extended: dict, cfr_at) -> tuple[list[str], int, int, list[float]]:
    lines, met, rates = [], 0, []
    for seed, r in sorted(runs.items()):
        last = r["evals"][-1]
        best_last = min(e["eval_exploitability"] for e in r["evals"])
        done = last["step"] >= (r["planned_steps"] or 0)
        met += int(done and last["eval_avg_exploitability"] <= GOAL)
        if r["times"] and r["times"][-1]["wall_s"] > 0:
            rates.append(r["times"][-1]["episodes"] / r["times"][-1]["wall_s"])
        ext = extended.get(seed)
        if ext:
            xl = ext["evals"][-1]
            reach = first_at_or_below(ext["evals"], "eval_avg_exploitability", GOAL)
            beyond = f"{xl['eval_avg_exploitability']:.4f} at {xl['episodes_total']:,}; <= {GOAL} " + (
                f"at {reach:,}" if reach else "not reached"
            )
        else:
            beyond = "not run"
        tail = f"{r['tail']:.4f}" if r.get("tail") is not None else "n/a"
        lines.append(
            f"| {seed} | {last['episodes_total']:,}{'' if done else ' (unfinished)'} | **{last['eval_avg_exploitability']:.4f}** | "
            f"{last['eval_exploitability']:.4f} | {best_last:.4f} | {tail} | {cfr_at(last['episodes_total']):.4f} | {last['eval_mean']:+.3f} | {beyond} |"
        )
    complete = sum(1 for r in runs.values() if r["evals"][-1]["step"] >= (r["planned_steps"] or 0))
    return lines, met, complete, rates


def report() -> None:
    configs = []  # (label, changes, runs, extended)
    for variant in [None, *VARIANTS]:
        root = variant_root(variant)
        runs = load_runs(root)
        if runs:
            configs.append((variant or "main", VARIANTS.get(variant, {}), runs, load_runs(root / "extended")))
    if not configs:
        raise SystemExit("no runs under runs/kuhn_nash; run `python bench/train_kuhn_nash.py run --seed N` first")
    max_eps = max(
        r["evals"][-1]["episodes_total"]
        for _, _, runs, ext in configs
        for r in list(runs.values()) + list(ext.values())
    )
    cfr = cfr_curve(max(max_eps, 12_000))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(configs), 2, figsize=(12, 4.5 * len(configs)), sharey=True, squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # the round-3 five-seed config first (the curve), then the others as measured before
    plotted = sorted(configs, key=lambda c: c[0] != FINAL)
    for row, (label, _changes, runs, extended) in enumerate(plotted):
        for ax, key, title in (
            (axes[row, 0], "eval_avg_exploitability", "average policy"),
            (axes[row, 1], "eval_exploitability", "last iterate"),
        ):
            for n, (seed, r) in enumerate(sorted(runs.items())):
                c = colours[n % len(colours)]
                ax.plot(
                    [max(e["episodes_total"], 1) for e in r["evals"]],
                    [e[key] for e in r["evals"]],
                    color=c,
                    label=f"GRPO self-play seed {seed}",
                    lw=1,
                )
                if seed in extended:
                    tail = [
                        e for e in extended[seed]["evals"] if e["episodes_total"] >= r["evals"][-1]["episodes_total"]
                    ]
                    ax.plot([e["episodes_total"] for e in tail], [e[key] for e in tail], color=c, lw=1, ls=":")
            ax.plot([c[0] for c in cfr], [c[1] for c in cfr], "k--", label="CFR (average policy)", lw=1.5)
            ax.axhline(GOAL, color="red", lw=0.8, ls=":", label=f"goal {GOAL}")
            ax.axvline(300_000, color="grey", lw=0.8, ls="-.", label="budget 300,000")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("episodes (learner) / deal traversals (CFR)")
            ax.set_title(
                f"{title}: {label}" + ("" if label == "main" else " (config in docs/benchmarks.md)"), fontsize=8
            )
            ax.grid(alpha=0.3, which="both")
        axes[row, 0].set_ylabel("exploitability (NashConv / 2)")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle("Kuhn poker: exact exploitability of the self-play learner beside CFR")
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    fig.savefig(DOCS / "train_kuhn_nash.png", dpi=80)
    plt.close(fig)

    def cfr_at(n: int) -> float:
        best = [c for c in cfr if c[0] <= n]
        return best[-1][1] if best else float("nan")

    cfg = {k: v for k, v in CONFIG.items() if k not in ("name", "plot", "checkpoint_every")}
    sections, all_rates, verdicts = [], [], []
    for label, changes, runs, extended in configs:
        lines, met, complete, rates = _table(runs, extended, cfr_at)
        all_rates += rates
        ok = met >= 3 and complete >= 5
        verdicts.append((label, ok, met, len(runs)))
        head = "Main config" if label == "main" else f"Variant `{label}` = `{json.dumps(changes)}`"
        if label in VARIANT_NOTES:
            head += f" ({VARIANT_NOTES[label]})"
        if label != "main" and len(runs) < 5:
            why = SHORT_REASON.get(label, "stopped to give the CPU to other runs")
            head += f" (run for {len(runs)} seeds only; {why})"
        stats = _seed_stats(runs)
        sections.append(
            f"""**{head}**: goal {"met" if ok else "not met"} ({met} of {len(runs)} seeds at or below {GOAL} at the end of the
budget; {complete} of {len(runs)} seeds ran the full 300,000 episodes){stats}.

| seed | episodes | avg-policy expl. | last-iterate expl. | best last iterate | tail avg (2nd half; not the goal's metric) | CFR at same traversals | greedy value vs `kuhn_king_only` | continued past the budget (avg expl.) |
|---|---|---|---|---|---|---|---|---|
{chr(10).join(lines)}
"""
        )
    tried = []
    for name, changes in PROBES.items():
        if name in VARIANTS:
            continue
        note = f" [{PROBE_NOTES[name]}]" if name in PROBE_NOTES else ""
        for seed, r in sorted(load_runs(variant_root(name)).items()):
            last = r["evals"][-1]
            tried.append(
                f"`{json.dumps(changes)}`{note} seed {seed}: {last['eval_avg_exploitability']:.4f} "
                f"(last iterate {last['eval_exploitability']:.4f}) at {last['episodes_total']:,}"
                + ("" if r["status"] != "running or stopped" else " (stopped there)")
            )
    if tried:
        sections.append(
            "**Also tried** (single seed each, `run --variant NAME` with the PROBES of the bench; average-policy exploitability "
            "at the end, changes relative to the main config): "
            + "; ".join(tried)
            + ". A smaller constant entropy bonus "
            "(0.07 or less) stalls near a pure strategy (exploitability about 0.2 for 100,000 episodes or more); decaying the bonus "
            "(`entropy_final`) at a constant learning rate lets the last iterate cycle (0.09-0.11 at the end) and its average does not beat the constant 0.1; larger learning rates "
            "start worse and their early snapshots weigh on the uniform mixture.\n"
        )
    rate = f"{min(all_rates):.0f}-{max(all_rates):.0f}" if all_rates else "n/a"
    minutes = f"{300_000 / max(all_rates) / 60:.1f}-{300_000 / min(all_rates) / 60:.1f}" if all_rates else "n/a"
    verdict = (
        f"**Goal (average-policy exploitability <= {GOAL} in >= 3 of 5 seeds within 300,000 episodes from random weights): "
        + ("met" if any(v[1] for v in verdicts) else "not met")
        + "**"
        + "".join(
            f" by `{label}` ({met} of {n} seeds at or below {GOAL}{', the fewest a pass allows' if met == 3 else ''}; "
            "the seeds' mean and its interval are in its section, and the last iterate (the stretch) is noisier)"
            for label, ok, met, n in verdicts
            if ok
        )
        + ". The configs were picked from single-seed trials (every one reported below) and every config run is"
        " reported with all its seeds."
    )
    qre = logit_equilibria()
    qre_text = ", ".join(f"tau {t:g}: {e:.4f}" for t, e in qre.items())
    round3 = f"""**Round 3: why the earlier configs levelled off near 0.03, and what changed.** An entropy
bonus pulls self-play toward the entropy-regularised (logit) equilibrium, not toward Nash: at every
information state the softmax of its conditional action values divided by tau, where tau is the
bonus times the step's std of centred returns (about 1.30 chips in these runs, `reward_std` in the
metrics). Its exact exploitability (`logit_equilibrium` in the bench, damped iteration on the game's
own tree): {qre_text}. The earlier configs' bonus 0.1 (tau about 0.13) sits at the 0.026 line,
which is where their last iterates and tail averages stayed; the bonus 0.05 (tau about 0.065) moves
it to about 0.010, but 0.05 had stalled near a pure strategy before. Three changes made it work, each
kept after a single-seed trial (see "Also tried" for every trial): AdamW without momentum
(`optim.beta1 = 0`; momentum feeds the rotation of simultaneous gradient play in a zero-sum game),
64 episodes per step instead of 128 (twice the updates for the same episodes, so the slow start costs
fewer episodes), and a learning-rate warmup over the first 200 updates (without it AdamW's first
full-size steps threw seed 1 into a pure profile at exploitability 0.167 within 50 updates, where the
gradients vanish, and it stayed there for 150,000 episodes). Per-prompt baselines
(`baseline = "infostate"`), a moving magnet (`magnet_every`), a higher sampling temperature, larger
learning rates and an entropy bonus decayed over the run were tried and dropped (numbers above).
The choices were guided by a numpy simulation of the same update on a tabular policy (not in the
repository); apart from the exact logit-equilibrium values, every number here is from the
language-model runs."""
    body = f"""## Training: Kuhn poker to Nash by self-play, exact exploitability (bench/train_kuhn_nash.py)

The tiny random-weight model in both seats at once (GRPO self-play, role-conditioned running
baseline per seat), evaluated exactly every 3,200 episodes: exploitability
(NashConv / 2) of its sampling policy (temperature {CONFIG["temperature"]} unless a variant says
otherwise) over Kuhn's 12 information states, for the last iterate and for the average policy
(uniform mixture over the evaluation snapshots, one drawn per game, computed exactly as its
realisation-equivalent behaviour policy). The snapshots are the policy at step 0 (the random
initial weights) and at every evaluation after it, every 3,200 episodes (25 steps of 128 episodes,
50 of 64 in the 16 x 4 configs, 100 of 32 in the 8 x 4 probe) and at the last step: 95 snapshots for 300,000 episodes, all
weighted equally. The tail-average column is an extra number, not the goal's metric: the
same mixture over the second half of the snapshots only. Round 3 (the variants and probes named
`r3_...`: AdamW without momentum, per-prompt baselines, a moving magnet, temperature) runs on the
tiny model whose tokenizer is trained on Kuhn poker's text alone (the default tiny model's
tokenizer also reads MegaGem's text, so edits to MegaGem's views rebuild it as another random
model): a different random model from the earlier rows' (exploitability of the initial weights at
temperature 3: 0.870 against 0.632). CFR: vanilla tabular CFR's average policy at the same number of deal
traversals (12 per iteration; a learner episode is one sampled play of one deal). Main config:
`{json.dumps(cfg)}`. Machine: {machine()}; self-play episodes per second per run (training
plus evaluations, one to three runs at a time at low priority on 2 cores shared with other
jobs, so the rate follows the machine's load): {rate}, i.e. {minutes} minutes per 300,000 episodes.

{verdict}

{chr(10).join(sections)}
{round3}

CFR, walking every deal exactly, is far ahead at equal traversals. The first player's Nash
value is -1/18; the uniform random policy's exploitability is 0.458, always-bet 1/3 (known
answers checked in `tests/test_train_exact.py`). Plot (log-log; dotted: runs continued exactly
past the budget): [train_kuhn_nash.png](train_kuhn_nash.png).
"""
    write_section("train_kuhn_nash", body)
    print(body)


# ---------------------------------------------------------------------- issue 31, point 5: the numpy self-play PG
PG_RESULTS = ROOT / "bench" / "results" / "kuhn_pg"  # committed as the files land (runs/ is ignored)
#: seeds that chose the config (every probe in PG_PROBES was run on them); never in a verdict
PG_TUNING_SEEDS = tuple(range(10))
#: the verdict's seeds, first run after the config was fixed
PG_FRESH_SEEDS = (100, 101, 102, 103, 104)
#: the chosen config (arena_train.selfplay_pg.SelfPlayConfig): tabular softmax (one-hot information
#: state), 256 episodes per step, SGD at 2.0 decaying linearly to 0.1, KL penalty 0.3 toward a
#: magnet that is reset to the current policy every 100 steps, realisation-weighted average with
#: weights growing linearly in the step
PG_CONFIG = dict(
    episodes_per_step=256,
    learning_rate=2.0,
    lr_final=0.1,
    magnet=0.3,
    magnet_every=100,
    average="linear",
    eval_every=10,
)
#: controls run on the same fresh seeds: what each piece does (only ``magnet`` was tuned)
PG_VARIANTS = {
    "magnet": {},
    "fixed_magnet": {"magnet_every": 0},  # KL to the uniform policy, never reset = an entropy bonus
    "annealed_entropy": {"magnet": 0.0, "entropy": 0.3, "entropy_final": 0.0},
    "plain": {"magnet": 0.0},
    "magnet_uniform_average": {"average": "uniform"},
    # tuned separately on the same tuning seeds (PG_NETWORK_PROBES): the policy as a network over
    # Kuhn's 9-number observation encoding (one tanh layer of 32) instead of a table
    "network": {
        "features": "encoding",
        "hidden": 32,
        "optimizer": "rmsprop",
        "learning_rate": 0.03,
        "lr_final": 0.0015,
    },
}
#: the network's trials (seeds 0-9 unless said; changes to PG_CONFIG + features = "encoding") ->
#: (average max, seeds with average <= 0.02, last-iterate median, seeds with last <= 0.02)
PG_NETWORK_PROBES = {
    "linear (no hidden layer), SGD 2.0->0.1, seeds 0-2": (0.1888, 0, 0.1688, 0),
    "hidden 16, SGD 0.5->0.025, seeds 0-2": (0.1140, 0, 0.0561, 0),
    "hidden 16, SGD 2.0->0.1, seeds 0-2": (0.0387, 1, 0.0389, 1),
    "hidden 32, SGD 0.5->0.025, seeds 0-2": (0.1205, 0, 0.0957, 0),
    "hidden 32, SGD 2.0->0.1, seeds 0-2": (0.0378, 0, 0.0312, 1),
    "hidden 32, SGD 5.0->0.25, seeds 0-2": (0.9950, 0, 0.7675, 0),
    "hidden 32, RMSprop 0.003->0.00015, seeds 0-2": (0.2030, 0, 0.2170, 0),
    "hidden 32, RMSprop 0.01->0.0005, seeds 0-2": (0.0881, 0, 0.0844, 0),
    "hidden 32, RMSprop 0.03->0.0015 (chosen)": (0.0207, 9, 0.0178, 6),
    "hidden 32, RMSprop 0.05->0.0025": (0.0442, 7, 0.0147, 7),
    "hidden 32, RMSprop 0.04->0.002": (0.0236, 6, 0.0150, 7),
    "hidden 32, RMSprop 0.03->0.0015, magnet 0.5": (0.0322, 7, 0.0226, 4),
    "hidden 32, RMSprop 0.03->0.0015, reset every 200": (0.0312, 7, 0.0148, 7),
    "hidden 32, RMSprop 0.03->0.0015, magnet 0.5, reset every 200": (0.0574, 1, 0.0349, 0),
}
PG_NOTES = {
    "magnet": "the chosen config",
    "fixed_magnet": "the same KL penalty toward the uniform policy, never reset: an entropy bonus of 0.3",
    "annealed_entropy": "no magnet; an entropy bonus 0.3 annealed linearly to 0 over the run",
    "plain": "no regulariser (REINFORCE with the per-state baseline and the same step sizes)",
    "magnet_uniform_average": "the chosen config with every iterate weighted equally in the average",
    "network": "the policy as a network over the observation encoding, not a table (tuned on the same seeds 0-9)",
}
#: the tuning trials on PG_TUNING_SEEDS (seeds 0-9, 300,000 episodes): changes to PG_CONFIG ->
#: (average max, seeds with average <= 0.02, last-iterate median, seeds with last <= 0.02), as measured
PG_PROBES = {
    "64/step, lr 0.5->0.025, magnet 0.2 every 200": (0.0112, 10, 0.0330, 3),
    "64/step, lr 0.5->0.025, magnet 0.3 every 200": (0.0124, 10, 0.0209, 4),
    "64/step, lr 0.5->0.05, magnet 0.2 every 200": (0.0177, 10, 0.0289, 4),
    "64/step, lr 0.5->0.05, magnet 0.3 every 200": (0.0093, 10, 0.0162, 6),
    "64/step, lr 0.5->0.05, magnet 0.5 every 200": (0.0126, 10, 0.0186, 7),
    "64/step, lr 0.5->0.025, magnet 0.5 every 200": (0.0125, 10, 0.0189, 6),
    "lr 2.0->0.1, magnet 0.2 every 50": (0.0182, 10, 0.0285, 3),
    "lr 2.0->0.1, magnet 0.3 every 50": (0.0105, 10, 0.0160, 8),
    "lr 2.0->0.2, magnet 0.2 every 50": (0.0133, 10, 0.0205, 4),
    "lr 2.0->0.2, magnet 0.3 every 50": (0.0134, 10, 0.0178, 6),
    "lr 2.0->0.2, magnet 0.5 every 50": (0.0178, 10, 0.0181, 6),
    "lr 2.0->0.1, magnet 0.5 every 25": (0.0185, 10, 0.0204, 5),
    "lr 2.0->0.1, magnet 0.5 every 50": (0.0117, 10, 0.0167, 8),
    "lr 2.0->0.1, magnet 0.3 every 25": (0.0194, 10, 0.0454, 1),
    "lr 2.0->0.1, magnet 0.3 every 100 (chosen)": (0.0123, 10, 0.0121, 9),
    "lr 2.0->0.1, magnet 0.5 every 100": (0.0185, 10, 0.0198, 5),
    "lr 2.0->0.05, magnet 0.4 every 50": (0.0155, 10, 0.0136, 7),
    "512/step, lr 4.0->0.1, magnet 0.3 every 25": (0.0194, 10, 0.0242, 3),
    "512/step, lr 4.0->0.1, magnet 0.5 every 25": (0.0192, 10, 0.0193, 5),
    "512/step, lr 4.0->0.2, magnet 0.3 every 25": (0.0175, 10, 0.0214, 4),
    "512/step, lr 4.0->0.2, magnet 0.5 every 25": (0.0184, 10, 0.0199, 5),
}


def pg_path(variant: str, seed: int, out: Path = PG_RESULTS) -> Path:
    return out / variant / f"seed_{seed}.jsonl"


def _finished(path: Path) -> bool:
    if not path.exists():
        return False
    lines = path.read_text().splitlines()
    return bool(lines) and json.loads(lines[-1]).get("done") is True


def pg_run(seed: int, variant: str = "magnet", *, episodes: int = 300_000, out: Path = PG_RESULTS) -> Path:
    """One seed of a variant, one JSONL file written as it goes (a row per evaluation, then a
    ``done`` row with the rate); a finished file is skipped, an unfinished one started again."""
    from arena_core.registry import make_game
    from arena_train.selfplay_pg import SelfPlayConfig, SelfPlayPG

    path = pg_path(variant, seed, out)
    if _finished(path):
        print(f"{path}: finished already, skipped")
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    config = SelfPlayConfig(**{**PG_CONFIG, **PG_VARIANTS[variant], "episodes": episodes, "seed": seed})
    trainer = SelfPlayPG(make_game("kuhn_poker"), config)
    started = time.perf_counter()
    with path.open("w") as fh:

        def emit(row: dict) -> None:
            fh.write(json.dumps({**row, "wall_s": round(time.perf_counter() - started, 3)}) + "\n")
            fh.flush()

        trainer.run(emit=emit)
        wall = time.perf_counter() - started
        done = {"done": True, "variant": variant, "seed": seed, "config": json.loads(trainer.config_json())}
        fh.write(
            json.dumps(
                {
                    **done,
                    "wall_s": round(wall, 3),
                    "episodes_per_s": round(trainer.state.step * config.episodes_per_step / wall),
                }
            )
            + "\n"
        )
    last = trainer.state.log[-1]
    print(f"{variant} seed {seed}: average {last['avg_exploitability']:.4f}, last iterate {last['exploitability']:.4f}")
    return path


def pg_load(variant: str, out: Path = PG_RESULTS) -> dict[int, dict]:
    runs = {}
    for path in sorted((out / variant).glob("seed_*.jsonl")):
        if not _finished(path):
            continue
        rows = [json.loads(x) for x in path.read_text().splitlines()]
        runs[int(path.stem.split("_")[1])] = {"evals": [r for r in rows if "exploitability" in r], "done": rows[-1]}
    return runs


def _pg_plot(out: Path, plot: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for n, variant in enumerate(PG_NOTES):
        runs = {s: r for s, r in pg_load(variant, out).items() if s in PG_FRESH_SEEDS}
        for k, (_seed, r) in enumerate(sorted(runs.items())):
            evals = [e for e in r["evals"] if e["episodes"] > 0]
            x = [e["episodes"] for e in evals]
            ax.plot(
                x,
                [e["avg_exploitability"] for e in evals],
                color=colours[n],
                lw=1,
                label=variant if k == 0 else None,
            )
            ax.plot(x, [e["exploitability"] for e in evals], color=colours[n], lw=0.5, ls=":")
    ax.axhline(GOAL, color="red", lw=0.8, ls="--", label=f"goal {GOAL}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("episodes")
    ax.set_ylabel("exploitability (NashConv / 2)")
    ax.set_title(
        "Kuhn poker, numpy self-play PG, fresh seeds 100-104 (solid: average, dotted: last iterate)", fontsize=8
    )
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(plot, dpi=80)
    plt.close(fig)


def pg_report(out: Path = PG_RESULTS, plot: Path = DOCS / "train_kuhn_nash_pg.png") -> str:
    from arena_core.stats import paired_t, wilson_interval

    def interval_text(vals: list[float]) -> str:
        mean, low, high, _ = paired_t(vals)
        k = sum(v <= GOAL for v in vals)
        wl, wh = wilson_interval(k, len(vals))
        return f"mean {mean:.4f} (t 95% [{low:.4f}, {high:.4f}]); {k} of {len(vals)} <= {GOAL} (Wilson 95% [{wl:.2f}, {wh:.2f}])"

    blocks, rates, verdict = [], [], ""
    for variant, note in PG_NOTES.items():
        runs = {s: r for s, r in pg_load(variant, out).items() if s in PG_FRESH_SEEDS}
        if not runs:
            continue
        lines = []
        for seed, r in sorted(runs.items()):
            e = r["evals"][-1]
            rates.append(r["done"]["episodes_per_s"])
            lines.append(
                f"| {seed} | {e['episodes']:,} | **{e['avg_exploitability']:.4f}** | {e['exploitability']:.4f} |"
                f" {min(x['exploitability'] for x in r['evals']):.4f} |"
            )
        avg = [r["evals"][-1]["avg_exploitability"] for r in runs.values()]
        last = [r["evals"][-1]["exploitability"] for r in runs.values()]
        k_avg, k_last = sum(v <= GOAL for v in avg), sum(v <= GOAL for v in last)
        if variant == "network":
            ok = len(runs) == 5 and k_avg == 5 and k_last >= 3
            verdict += (
                f" With the network policy (`network`): {'met' if ok else 'not met'} (average <= {GOAL} in {k_avg} "
                f"of {len(runs)}, last iterate in {k_last} of {len(runs)})."
            )
        if variant == "magnet":
            ok = len(runs) == 5 and k_avg == 5 and k_last >= 3
            verdict = (
                f"**Verdict on the fresh seeds {', '.join(map(str, PG_FRESH_SEEDS))}: "
                f"{'met' if ok else 'not met'}** (average policy <= {GOAL} in {k_avg} of {len(runs)}, goal 5 of 5; "
                f"last iterate <= {GOAL} in {k_last} of {len(runs)}, goal 3 of 5"
                + (", the fewest a pass allows; 9 of 10 on the tuning seeds" if k_last == 3 else "")
                + ")."
            )
        changes = json.dumps(PG_VARIANTS[variant]) if PG_VARIANTS[variant] else "PG_CONFIG"
        blocks.append(
            f"""**`{variant}`** (`{changes}`: {note}): average policy {interval_text(avg)}; last iterate {interval_text(last)}.

| seed | episodes | avg-policy expl. | last-iterate expl. | best last iterate seen |
|---|---|---|---|---|
{chr(10).join(lines)}
"""
        )
    probes = "; ".join(
        f"{name}: average max {a:.4f} ({ka} of 10 <= {GOAL}), last-iterate median {lm:.4f} ({kl} of 10 <= {GOAL})"
        for name, (a, ka, lm, kl) in PG_PROBES.items()
    )
    network_probes = "; ".join(
        f"{name}: average max {a:.4f} ({ka} <= {GOAL}), last-iterate median {lm:.4f} ({kl} <= {GOAL})"
        for name, (a, ka, lm, kl) in PG_NETWORK_PROBES.items()
    )
    rate = f"{min(rates):,}-{max(rates):,}" if rates else "n/a"
    qre = logit_equilibrium(0.3)[0]
    _pg_plot(out, plot)
    body = f"""### Kuhn without the floor: numpy self-play policy gradient with a magnet (issue 31, point 5)

`bench/train_kuhn_nash.py pg-run --seed N [--variant V]` writes `bench/results/kuhn_pg/V/seed_N.jsonl`;
`pg-report` writes this section. The learner is not the language model of the section above
but the project's numpy policy (`arena_train.pg.NumericPolicy`, here a tabular softmax: one-hot
information state) trained by self-play REINFORCE (`arena_train.selfplay_pg`): both seats play
the current policy, every step samples 256 episodes (a deal drawn, an action drawn from the
policy at every decision, on the game tree compiled once into arrays so the sampling is
vectorised), the return minus a running per-state baseline weights log pi, and a penalty
alpha KL(pi || magnet) with alpha = 0.3 pulls toward a *magnet* that is reset to the current
policy every 100 steps (magnetic mirror descent with a moving magnet, as in R-NaD). With a
fixed magnet the penalty is an entropy bonus and self-play settles at the logit equilibrium
(the kind of floor the LM runs above hit); resetting the magnet moves that equilibrium toward Nash.
The average policy is realisation-weighted (each iterate's probabilities weighted by its own
reach of the state, as `arena_train.exact.average_policy`, kept incrementally; iterate weights
grow linearly in the step). Exploitability is exact (NashConv / 2 on the compiled tree, equal
to `arena_train.exact.exploitability`, tested), every 10 steps (2,560 episodes). Config:
`{json.dumps(PG_CONFIG)}`; 1,171 steps = 299,776 episodes. Machine: {machine()};
{rate} episodes per second per run (training plus the evaluations).

{verdict} The config was chosen on the tuning seeds {PG_TUNING_SEEDS[0]}-{PG_TUNING_SEEDS[-1]}
(every trial below), which are in no row here. The controls (`fixed_magnet`, `annealed_entropy`,
`plain`, `magnet_uniform_average`) change one piece of the chosen config, run on the same fresh
seeds to show what each piece does; they were not tuned (one annealing schedule only, so they do
not show that annealed entropy cannot work). `network` was tuned on the tuning seeds too.

{chr(10).join(blocks)}
The fixed magnet's runs sit on the logit equilibrium at tau = alpha = 0.3 (the advantages here
are raw returns, not divided by their std): its exact exploitability is {qre:.4f}
(`logit_equilibrium(0.3)`), the floor the moving magnet removes. Plot (average policy solid,
last iterate dotted): [train_kuhn_nash_pg.png](train_kuhn_nash_pg.png).

**Carried to the language model** (one probe, tuning seed 0, `run --variant
r3_warm200_magnet0.25_m400_e0.05to0`: the round-3 five-seed GRPO config with its entropy bonus
annealed 0.05 to 0, KL 0.25 toward a magnet reset every 400 updates): average 0.0445, last
iterate 0.0305 (best last iterate seen 0.0134) at 299,968 episodes, worse in the average than
that config's 0.0162 on the same seed (the equal-weights average carries the slow start). The
language model's own runs with these pieces, tuned on seeds 0-1 and judged on fresh seeds, are
the next section.

**Tuning trials** (seeds {PG_TUNING_SEEDS[0]}-{PG_TUNING_SEEDS[-1]}, 300,000 episodes, changes to the chosen config): {probes}.
**The network's trials** (the magnet config, changes listed): {network_probes}. A linear
policy over the encoding cannot represent Kuhn's equilibrium (the logit is a card term plus a
history term, so the jack cannot bluff more than the queen after a check while the queen calls
more than the jack after a bet).
Before those, about 30 configs were tried on seeds 0-2 only (a shell sweep, not kept in the
repository): without a magnet SGD at a constant 0.05-0.5 levelled off at average 0.030-0.073
(last iterate 0.076-0.16) and a constant entropy bonus of 0.05 or 0.1 at 0.021-0.031; with a
magnet (alpha 0.05-1.0, resets every 50-1,000 steps, 64-512 episodes per step, SGD, Adam or
RMSprop, per-visit scaling, uniform or linear averaging) the averages ranged 0.002-0.037 and the
last iterates 0.005-0.16; a decaying step size and a reset every 100-200 steps were what brought
the last iterate down.
"""
    return body


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--seed", type=int, required=True)
    r.add_argument("--episodes", type=int, default=300_000)
    r.add_argument("--variant", choices=sorted({**VARIANTS, **PROBES}), default=None)
    e = sub.add_parser("extend", help="continue a finished seed exactly, past the budget")
    e.add_argument("--seed", type=int, required=True)
    e.add_argument("--episodes", type=int, default=600_000)
    sub.add_parser("report")
    pr = sub.add_parser("pg-run", help="issue 31 point 5: the numpy self-play PG with a magnet, one seed")
    pr.add_argument("--seed", type=int, nargs="+", required=True)
    pr.add_argument("--variant", choices=sorted(PG_VARIANTS), default="magnet")
    pr.add_argument("--episodes", type=int, default=300_000)
    pr.add_argument("--out", type=Path, default=PG_RESULTS)
    pp = sub.add_parser("pg-report", help="write the numpy PG section of docs/benchmarks.md")
    pp.add_argument("--out", type=Path, default=PG_RESULTS)
    args = parser.parse_args(argv)
    if args.cmd == "pg-run":
        for seed in args.seed:
            pg_run(seed, args.variant, episodes=args.episodes, out=args.out)
        return 0
    if args.cmd == "pg-report":
        body = pg_report(args.out)
        write_section("train_kuhn_nash_pg", body)
        print(body)
        return 0
    if args.cmd in ("run", "extend"):
        print(run(args.seed, args.episodes, extend=args.cmd == "extend", variant=getattr(args, "variant", None)))
    else:
        report()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
