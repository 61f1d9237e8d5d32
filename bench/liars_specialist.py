"""Issue 42, phase 1: TextArena LiarsDice-v0 at two seats. A generalist worth beating (the generic
``search`` player with information-set MCTS), fixed on named tuning deals before any training; the
two fixed Liar's dice bots (``liars_call_everything``, ``liars_binomial``: evaluation only); a small
numeric policy trained by self-play on the native engine (``arena_train.numeric_selfplay``); and the
skill gate, played on the real TextArena title. One file over 500 lines: every phase (generalist,
specialist, distillation, gate) shares its cells, its named seeds and the one report it writes.

    python bench/liars_specialist.py speed                 # games/s: TextArena against the native engine
    python bench/liars_specialist.py generalist-tune       # search variants, native engine, tuning deals
    python bench/liars_specialist.py generalist-eval       # the chosen generalist on the title, held-out deals
    python bench/liars_specialist.py train --seed S [--config NAME]   # one self-play run (resumable)
    python bench/liars_specialist.py specialist-tune       # the configs' tuning seeds against the bots (native)
    python bench/liars_specialist.py gate --seed S         # G1 and G2 for verdict seed S on the title
    python bench/liars_specialist.py distil-tune           # distillation settings, on tuning seed 0's teacher only
    python bench/liars_specialist.py distill --seed S [--config NAME]  # seed S's policy into the tiny LM (point 5b)
    python bench/liars_specialist.py polish-tune           # a GRPO polish of tuning seed 0's student, measured (5c)
    python bench/liars_specialist.py gate-lm --seed S      # the LM student of verdict seed S on the title
    python bench/liars_specialist.py ship-lm [--seed 100]  # that student -> models/textarena-loop (point 7)
    python bench/liars_specialist.py report [--write]      # the tables (and docs/benchmarks.md's section)

Every cell is written to its own JSON file under ``bench/results/liars-specialist/`` as soon as it is
played (a finished cell is skipped on a rerun); training runs live under ``runs/liars-specialist/``
and resume from their last checkpoint. Win rates come with a Wilson interval (games as independent)
and a deal-clustered one (:func:`arena_core.stats.cluster_mean`: a deal's two seatings share dice).

Seeds, named and kept apart: generalist tuning deals 940000.. (native engine); held-out title deals
950000..; specialist configs chosen on training seeds 0 and 1 (native tuning deals 960000..); the
verdict on training seeds 100-104, gate deals 970000 + 1000 * seed.., never used for a choice.
Distillation (``distill``): settings chosen on tuning seed 0's teacher only (``DISTIL_CONFIGS``,
``DISTIL_CHOSEN``); students live under ``runs/liars-distil/`` and play the same gate deals as
their teachers (``gate-lm``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices: threads only contend on 2 shared cores

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from textarena_loop_liars import summary  # noqa: E402  (one cell summary: Wilson and deal-clustered intervals)

TITLE = "textarena/LiarsDice-v0"
NATIVE = "liars_dice"
OUT = ROOT / "bench" / "results" / "liars-specialist"
RUNS = ROOT / "runs" / "liars-specialist"
RANDOM, EVERYTHING, BINOMIAL = "random", "liars_call_everything", "liars_binomial"
OPPONENTS = (RANDOM, EVERYTHING, BINOMIAL)

GENERALIST_TUNE_SEED = 940_000
GENERALIST_TUNE_DEALS = 12
EVAL_SEED = 950_000
EVAL_DEALS = 40
SPECIALIST_TUNE_SEED = 960_000
SPECIALIST_TUNE_DEALS = 100
TUNING_SEEDS = (0, 1)
VERDICT_SEEDS = (100, 101, 102, 103, 104)
GATE_DEALS = 40

#: search variants tried on the tuning deals (the old generalist first)
GENERALISTS = {
    "flat100": 'search{simulations = 100, rollout = "random"}',
    "ismcts300_w025": 'search{tree = "ismcts", simulations = 300, widening = 0.25}',
    "ismcts300_w05": 'search{tree = "ismcts", simulations = 300, widening = 0.5}',
    "ismcts300_w1": 'search{tree = "ismcts", simulations = 300}',
    "ismcts1000_w025": 'search{tree = "ismcts", simulations = 1000, widening = 0.25}',
}
#: the generalist fixed by ``generalist-tune`` (docs/benchmarks.md): the variant with the most wins
#: against call-everything and the binomial bidder together on the tuning deals, at the budget the
#: title allows (300 simulations: about half a second a decision through TextArena on this machine);
#: nothing about Liar's dice is in it
GENERALIST = GENERALISTS["ismcts300_w05"]

#: self-play configs (arena_train.numeric_selfplay.SelfPlayConfig fields); tried on TUNING_SEEDS
CONFIGS: dict[str, dict[str, Any]] = {
    "base": {"games": 100_000, "hidden": 128, "learning_rate": 3e-4, "entropy": 0.01, "baseline": "linear"},
    "gae": {
        "games": 100_000,
        "hidden": 128,
        "learning_rate": 3e-4,
        "entropy": 0.02,
        "baseline": "linear",
        "gae_lambda": 0.8,
    },
    "magnet": {
        "games": 100_000,
        "hidden": 128,
        "learning_rate": 3e-4,
        "entropy": 0.02,
        "baseline": "linear",
        "gae_lambda": 0.8,
        "magnet": 0.1,
        "magnet_every": 100,
    },
    "magnet03": {
        "games": 100_000,
        "hidden": 128,
        "learning_rate": 3e-4,
        "entropy": 0.02,
        "baseline": "linear",
        "gae_lambda": 0.8,
        "magnet": 0.3,
        "magnet_every": 100,
    },
    "magnet_long": {
        "games": 300_000,
        "hidden": 128,
        "learning_rate": 3e-4,
        "entropy": 0.02,
        "entropy_final": 0.005,
        "baseline": "linear",
        "gae_lambda": 0.8,
        "magnet": 0.1,
        "magnet_every": 100,
    },
}
#: the config the verdict seeds run, and which policy it plays, chosen on the tuning seeds (native
#: engine, 50 deals x 2 seatings each against call-everything and the binomial bidder, seed 0 of every
#: config and seed 1 of ``magnet``): against the binomial bidder base 2/3%, gae 4/3%, magnet03 2/0%,
#: magnet 17/11% and 15/10%, magnet_long 28/19% (last iterate / average), each >= 82% against
#: call-everything but magnet03's average (70%): the longest magnet run, its last iterate
CHOSEN = "magnet_long"
PLAYS = "last"  # "average" (average.npz, a member drawn per game) or "last" (policy.npz)

#: distillation into the tiny language model (arena_train.expert_iteration, steps mode), tried on
#: tuning seed 0's teacher only: the teacher's greedy choice is the label (greedy 99.5% / 27.5% /
#: 82.5% against call-everything / binomial / the generalist on the native tuning deals, sampled
#: 98.0% / 22.5% / 77.5%: 100, 100 and 20 deals x 2 seatings); the teacher also sits in the other
#: seat (sampled), never the binomial bidder; the student reads the title's compact view (own dice
#: per face, every seat's dice, the standing bid and its own dice of that face)
DISTIL_RUNS = ROOT / "runs" / "liars-distil"
DISTIL_COMMON: dict[str, Any] = {
    "rounds": 3,  # the last round's decisions are held out (the agreement's sample)
    "batch_size": 64,
    "behaviour": "expert",
    "eval_deals": 16,
    "model": {"path": "tiny", "tiny_games": [TITLE]},
}
DISTIL_CONFIGS: dict[str, dict[str, Any]] = {
    "small": {**DISTIL_COMMON, "deals_per_round": 40, "steps": 300, "optim": {"learning_rate": 3e-3}},
    "wide": {**DISTIL_COMMON, "deals_per_round": 150, "steps": 800, "optim": {"learning_rate": 3e-3}},
}
#: chosen on tuning seed 0 by held-out agreement (distil-tune): small 82.0% [76.8, 87.1], wide 88.6% [86.8, 90.3]
DISTIL_CHOSEN = "wide"


# ---------------------------------------------------------------------- playing cells
def head_to_head(game_id: str, a: str, b: str, deals: int, first_seed: int, log: Any = print) -> dict[str, Any]:
    """``a`` against ``b`` on deals ``first_seed ..``, both seatings; per-deal wins of ``a``."""
    from arena_core import play_episode
    from arena_core.registry import make_game, make_player
    from arena_core.seeding import derive_seed

    game = make_game(game_id)
    pa = make_player(a, seed=derive_seed(first_seed, "a"))
    pb = make_player(b, seed=derive_seed(first_seed, "b"))
    per_deal: dict[str, list[float]] = {}
    faults = 0
    started = time.perf_counter()
    for k in range(deals):
        seed = first_seed + k
        for seat_a in (0, 1):
            rec = play_episode(game, [pa, pb] if seat_a == 0 else [pb, pa], seed=seed)
            returns = rec.end.returns if rec.end else None
            faults += sum(1 for e in rec.events if getattr(e, "type", "") == "policy")
            win = 0.5 if returns is None or returns[0] == returns[1] else float(returns[seat_a] > returns[1 - seat_a])
            per_deal.setdefault(str(seed), []).append(win)
        if (k + 1) % 10 == 0:
            log(f"  {k + 1}/{deals} deals, {time.perf_counter() - started:.0f} s")
    stats_a = {k: v for k, v in (getattr(pa, "stats", {}) or {}).items() if isinstance(v, (int, float))}
    return {
        "game": game_id,
        "a": a,
        "b": b,
        "deals": deals,
        "first_seed": first_seed,
        "per_deal": per_deal,
        "policy_events": faults,
        "wall_s": round(time.perf_counter() - started, 1),
        "a_stats": stats_a,
    }


def cell(path: Path, game_id: str, a: str, b: str, deals: int, first_seed: int) -> dict[str, Any]:
    """Play (or read back) one cell."""
    if path.exists():
        return json.loads(path.read_text())
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"{path.relative_to(ROOT)}: {a} vs {b}, {deals} deals x 2 seatings from {first_seed} ({game_id})", flush=True)
    result = head_to_head(game_id, a, b, deals, first_seed, log=lambda s: print(s, flush=True))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1))
    tmp.replace(path)
    s = summary(result)
    print(
        f"  A wins {100 * s['win_rate']:.1f}% of {s['games']}, clustered {_iv(s['clustered'])} in {result['wall_s']} s"
    )
    return result


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _iv(pair: list[float]) -> str:
    return f"[{_pct(pair[0])}, {_pct(pair[1])}]"


# ---------------------------------------------------------------------- commands
def speed(args: argparse.Namespace) -> int:
    """Random legal games through TextArena (the adapter) and natively; the ratio."""
    from arena_core.registry import make_game
    from arena_core.seeding import make_rng

    out = {}
    for game_id, games in ((TITLE, 60), (NATIVE, 3000)):
        game = make_game(game_id)
        rng = make_rng(0, "speed")
        decisions = 0
        started = time.perf_counter()
        for g in range(games):
            pos = game.start(g)
            while not game.is_over(pos):
                p = game.current_player(pos)
                legal = game.legal(pos, p)
                game.encode_observation(pos.state, p)
                pos = game.act(pos, p, legal[int(rng.integers(len(legal)))])
                decisions += 1
        wall = time.perf_counter() - started
        out[game_id] = {"games": games, "decisions": decisions, "wall_s": round(wall, 2), "games_per_s": games / wall}
        print(f"{game_id}: {games / wall:.1f} games/s, {1e6 * wall / decisions:.0f} us a decision")
    out["ratio"] = out[NATIVE]["games_per_s"] / out[TITLE]["games_per_s"]
    print(f"native / TextArena: {out['ratio']:.0f}x")
    (OUT / "speed.json").parent.mkdir(parents=True, exist_ok=True)
    (OUT / "speed.json").write_text(json.dumps(out, indent=1))
    return 0


def generalist_tune(args: argparse.Namespace) -> int:
    for name, spec in GENERALISTS.items():
        if args.only and name != args.only:
            continue
        for opp in OPPONENTS:
            cell(
                OUT / "generalist-tune" / f"{name}_vs_{opp}.json",
                NATIVE,
                spec,
                opp,
                GENERALIST_TUNE_DEALS,
                GENERALIST_TUNE_SEED,
            )
    return 0


def generalist_eval(args: argparse.Namespace) -> int:
    for opp in OPPONENTS:
        cell(OUT / "generalist-eval" / f"generalist_vs_{opp}.json", TITLE, GENERALIST, opp, EVAL_DEALS, EVAL_SEED)
    return 0


def run_dir(config: str, seed: int, kind: str = "selfplay") -> Path:
    return RUNS / f"{kind}-{config}-seed{seed}"


def policy_spec(config: str, seed: int, plays: str = PLAYS) -> str:
    weights = run_dir(config, seed) / ("average.npz" if plays == "average" else "policy.npz")
    return f'numeric_mixture{{weights = "{weights.relative_to(ROOT)}"}}'


def train_one(config: str, seed: int, respond_to: str | None = None) -> dict[str, Any]:
    from arena_train.numeric_selfplay import TRAINER
    from arena_train.trainer import Parts

    cfg = {**CONFIGS[config], "game": NATIVE, "seed": seed, "eval_opponents": [RANDOM, EVERYTHING], "eval_every": 200}
    kind = "selfplay"
    if respond_to is not None:
        # the learner starts at the policy it answers (from scratch it loses every game: no signal)
        cfg.update({"respond_to": respond_to, "start_from": respond_to, "self_share": 0.0})
        kind = "response"
    run = run_dir(config, seed, kind)
    if (run / "policy.npz").exists():
        return {"run": str(run.relative_to(ROOT)), "done": True}
    if (run / "checkpoints").exists():
        cfg["resume_from"] = str(run)

    def progress(step: int, row: dict[str, Any]) -> None:
        if step % 100 == 0 or any(k.startswith("return_vs_") for k in row):
            shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}
            print(f"  {run.name}: {shown}", flush=True)

    summary = TRAINER(cfg, run, Parts(progress=progress)).to_json()
    return {"run": str(run.relative_to(ROOT)), **summary}


def train_cmd(args: argparse.Namespace) -> int:
    print(json.dumps(train_one(args.config, args.seed), indent=1))
    return 0


def specialist_tune(args: argparse.Namespace) -> int:
    for config in CONFIGS:
        for seed in TUNING_SEEDS:
            if not (run_dir(config, seed) / "summary.json").exists():
                print(f"{config} seed {seed}: not trained (train --seed {seed} --config {config})")
                continue
            for plays in ("last", "average"):
                for opp in (EVERYTHING, BINOMIAL):
                    cell(
                        OUT / "specialist-tune" / f"{config}_seed{seed}_{plays}_vs_{opp}.json",
                        NATIVE,
                        policy_spec(config, seed, plays),
                        opp,
                        SPECIALIST_TUNE_DEALS,
                        SPECIALIST_TUNE_SEED,
                    )
    return 0


def gate(args: argparse.Namespace) -> int:
    seed = args.seed
    if seed not in VERDICT_SEEDS:
        print(f"gate: seed {seed} is not a verdict seed {VERDICT_SEEDS} (tuning seeds {TUNING_SEEDS} chose the config)")
        return 2
    train_one(CHOSEN, seed)
    me = policy_spec(CHOSEN, seed)
    first = 970_000 + 1000 * seed
    for name, opp in (("generalist", GENERALIST), ("everything", EVERYTHING), ("binomial", BINOMIAL)):
        cell(OUT / "gate" / f"seed{seed}_vs_{name}.json", TITLE, me, opp, GATE_DEALS, first)
    frozen = run_dir(CHOSEN, seed) / ("average.npz" if PLAYS == "average" else "policy.npz")
    train_one(CHOSEN, seed, respond_to=str(frozen))
    response = run_dir(CHOSEN, seed, "response") / "policy.npz"
    best = f'numeric_mixture{{weights = "{response.relative_to(ROOT)}"}}'
    cell(OUT / "gate" / f"seed{seed}_response_vs_policy.json", TITLE, best, me, GATE_DEALS, first + 500)
    return 0


# ---------------------------------------------------------------------- distillation (points 5b, 6)
def teacher_specs(seed: int) -> tuple[str, str]:
    """The seed's numeric policy as the teacher (greedy: the label) and as the opponent (sampled)."""
    weights = (run_dir(CHOSEN, seed) / "policy.npz").relative_to(ROOT)
    return (f'numeric_mixture{{weights = "{weights}", greedy = true}}', f'numeric_mixture{{weights = "{weights}"}}')


def distil_dir(config: str, seed: int) -> Path:
    return DISTIL_RUNS / f"distil-{config}-seed{seed}"


def distil_config(config: str, seed: int) -> dict[str, Any]:
    """The expert-iteration config distilling seed ``seed``'s teacher (the recipe's distil stage)."""
    expert, opponent = teacher_specs(seed)
    return {**DISTIL_CONFIGS[config], "game": TITLE, "seed": seed, "expert": expert, "opponents": [opponent]}


def distill_one(config: str, seed: int) -> dict[str, Any]:
    """Distil (or read back) seed ``seed``'s student; its report in ``distil/<config>_seed<seed>.json``."""
    from arena_train.expert_iteration import TRAINER
    from arena_train.trainer import Parts

    path = OUT / "distil" / f"{config}_seed{seed}.json"
    if path.exists():
        result: dict[str, Any] = json.loads(path.read_text())
        return result
    if not (run_dir(CHOSEN, seed) / "policy.npz").exists():
        raise SystemExit(f"distill: seed {seed}'s teacher is not trained yet ({run_dir(CHOSEN, seed).name}/policy.npz)")
    run = distil_dir(config, seed)
    if run.exists():
        import shutil

        shutil.rmtree(run)  # expert iteration does not resume: an unfinished run starts again

    def progress(step: int, row: dict[str, Any]) -> None:
        if "heldout_agreement" in row or "collect_round" in row:
            shown = {k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}
            print(f"  {run.name} {step}: {shown}", flush=True)

    started = time.perf_counter()
    summary = TRAINER(distil_config(config, seed), run, Parts(progress=progress)).to_json()
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines() if x.strip()]
    result = {
        "seed": seed,
        "config": config,
        "tuning": seed in TUNING_SEEDS,
        "teacher": teacher_specs(seed)[0],
        "run": str(run.relative_to(ROOT)),
        "report": summary.get("report"),
        "curve": [
            {
                k: r[k]
                for k in ("step", "heldout_agreement", "heldout_agreement_low", "heldout_agreement_high")
                if k in r
            }
            for r in rows
            if "heldout_agreement" in r
        ],
        "wall_s": round(time.perf_counter() - started, 1),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, default=str))
    rep = result["report"] or {}
    iv = rep.get("agreement_student_interval", [float("nan")] * 2)
    print(f"{path.relative_to(ROOT)}: agreement {_pct(rep.get('agreement_student', float('nan')))}% {_iv(iv)}")
    return result


def distill(args: argparse.Namespace) -> int:
    distill_one(args.config, args.seed)
    return 0


def distil_tune(args: argparse.Namespace) -> int:
    """On tuning seed 0's teacher only: its greedy choice against its sampled policy as the label
    (native engine, tuning deals), then every distillation config."""
    seed = TUNING_SEEDS[0]
    greedy, sampled = teacher_specs(seed)
    for name, spec in (("greedy", greedy), ("sampled", sampled)):
        for opp_name, opp, deals in (
            ("everything", EVERYTHING, SPECIALIST_TUNE_DEALS),
            ("binomial", BINOMIAL, SPECIALIST_TUNE_DEALS),
            ("generalist", GENERALIST, 20),
        ):
            cell(
                OUT / "distil-tune" / f"seed{seed}_{name}_vs_{opp_name}.json",
                NATIVE,
                spec,
                opp,
                deals,
                SPECIALIST_TUNE_SEED,
            )
    for config in DISTIL_CONFIGS:
        distill_one(config, seed)
    return 0


#: the GRPO polish tried after distillation (point 5c), on tuning seed 0's student only: point 1's
#: distinct groups, self-play against the student's frozen snapshots, a small rate, a KL anchor
POLISH: dict[str, Any] = {
    "steps": 24,
    "deals_per_step": 2,
    "group_size": 8,
    "temperature": 1.0,
    "kl_beta": 0.05,
    "optim": {"learning_rate": 1e-4},
    "pool": {"snapshot_every": 4, "max_snapshots": 4},
    "eval": {"anchor": "random", "every": 0, "deals": 16},
    "checkpoint_every": 0,
    "plot": False,
}
POLISH_DEALS = 40


def polish_tune(args: argparse.Namespace) -> int:
    """GRPO from tuning seed 0's student (``POLISH``), then the student and the polished student,
    greedy, on the title against the generalist and the two bots (tuning deals 960000.., 40 x 2)."""
    from arena_train.grpo import TRAINER as GRPO

    seed = TUNING_SEEDS[0]
    student = distil_dir(DISTIL_CHOSEN, seed)
    polished = DISTIL_RUNS / f"polish-seed{seed}"
    if not (polished / "manifest.json").exists() or "report" not in (polished / "manifest.json").read_text():
        import shutil

        shutil.rmtree(polished, ignore_errors=True)
        config = {**POLISH, "game": TITLE, "seed": seed, "init_from": str(student)}
        config["model"] = DISTIL_COMMON["model"]
        GRPO(config, polished)
    for name, run in (("student", student), ("polished", polished)):
        me = f"checkpoint:run={run.relative_to(ROOT)}"
        for opp_name, opp in (("everything", EVERYTHING), ("binomial", BINOMIAL), ("generalist", GENERALIST)):
            cell(
                OUT / "polish-tune" / f"seed{seed}_{name}_vs_{opp_name}.json",
                TITLE,
                me,
                opp,
                POLISH_DEALS,
                SPECIALIST_TUNE_SEED,
            )
    return 0


def student_spec(config: str, seed: int) -> str:
    """The LM student as a player: its latest checkpoint, greedy (the teacher's greedy choice it learnt)."""
    return f"checkpoint:run={distil_dir(config, seed).relative_to(ROOT)}"


def gate_lm(args: argparse.Namespace) -> int:
    """The LM student of verdict seed S on the title, on its teacher's gate deals: against the
    generalist, call-everything and the binomial bidder; and the teacher's best response (trained
    against the teacher, not the student: a transferred exploiter, a lower bound) against it."""
    seed, config = args.seed, args.config
    if seed not in VERDICT_SEEDS:
        print(
            f"gate-lm: seed {seed} is not a verdict seed {VERDICT_SEEDS} (tuning seeds {TUNING_SEEDS} chose the config)"
        )
        return 2
    distill_one(config, seed)
    me = student_spec(config, seed)
    first = 970_000 + 1000 * seed
    for name, opp in (("everything", EVERYTHING), ("binomial", BINOMIAL), ("generalist", GENERALIST)):
        cell(OUT / "gate-lm" / f"seed{seed}_vs_{name}.json", TITLE, me, opp, GATE_DEALS, first)
    response = run_dir(CHOSEN, seed, "response") / "policy.npz"
    if response.exists():
        best = f'numeric_mixture{{weights = "{response.relative_to(ROOT)}"}}'
        cell(OUT / "gate-lm" / f"seed{seed}_teacher_response_vs_student.json", TITLE, best, me, GATE_DEALS, first + 500)
    return 0


def ship_lm(args: argparse.Namespace) -> int:
    """Copy seed S's LM student to ``models/textarena-loop``: the tiny base model it was trained
    from, its last checkpoint (model path made relative to the repository root), the recipe
    (``loop.toml``), how it was made (``made.json``) and ``arena.json`` (the generalist: the fixed
    ismcts one)."""
    from arena_players.tiny_model import ensure_tiny_model
    from arena_train.checkpoint_player import find_checkpoint
    from textarena_loop_liars import write_model_dir

    last = find_checkpoint(distil_dir(args.config, args.seed))
    state = json.loads((last / "state.json").read_text())
    model = dict(state["config"]["model"])
    base = ensure_tiny_model(game_ids=model.pop("tiny_games", None))
    state["config"]["model"] = model
    for key in ("expert", "opponents", "data_cache"):  # the teacher's run directory is not shipped
        state["config"].pop(key, None)
    dest = write_model_dir(last, state, base, {"game": TITLE, "generalist": GENERALIST})
    made = {
        "teacher": f"python bench/liars_specialist.py train --seed {args.seed} --config {CHOSEN}",
        "teacher_config": CONFIGS[CHOSEN],
        "student": f"python bench/liars_specialist.py distill --seed {args.seed} --config {args.config}",
        "student_config": {k: v for k, v in distil_config(args.config, args.seed).items()},
        "recipe": "loop.toml: the same two stages as one arena loop (arena loop models/textarena-loop/loop.toml)",
        "results": "docs/benchmarks.md, the Liar's dice section (issue 42)",
    }
    (dest / "made.json").write_text(json.dumps(made, indent=2) + "\n")
    return 0


# ---------------------------------------------------------------------- report
def _cells(folder: str) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((OUT / folder).glob("*.json"))}


def _line(name: str, r: dict[str, Any]) -> str:
    s = summary(r)
    return (
        f"| {name} | `{r['a']}` | `{r['b']}` | {r['deals']} x 2 (from {r['first_seed']}) | {_pct(s['win_rate'])} | "
        f"{_iv(s['wilson'])} | {_iv(s['clustered'])} | {r['wall_s']:.0f} |"
    )


HEAD = "| cell | A | B | deals x seatings | A's win rate % | Wilson 95% | deal-clustered 95% | wall s |\n|---|---|---|---|---|---|---|---|"


def _table(folder: str) -> str:
    cells = _cells(folder)
    return HEAD + "\n" + "\n".join(_line(k, v) for k, v in cells.items()) if cells else "(not run)"


def _gate_rows() -> tuple[list[str], dict[str, int], int]:
    rows, met, seen = [], {"G1": 0, "G2_everything": 0, "G2_binomial": 0, "G2_response": 0}, 0
    for seed in VERDICT_SEEDS:
        found = {
            k: OUT / "gate" / f"seed{seed}_{k}.json"
            for k in ("vs_generalist", "vs_everything", "vs_binomial", "response_vs_policy")
        }
        if not all(p.exists() for p in found.values()):
            rows.append(f"| {seed} | " + " | ".join("not run" if not p.exists() else "" for p in found.values()) + " |")
            continue
        seen += 1
        s = {k: summary(json.loads(p.read_text())) for k, p in found.items()}
        g1 = s["vs_generalist"]["clustered"][0] > 0.5
        e = s["vs_everything"]["win_rate"] >= 0.70
        b = s["vs_binomial"]["win_rate"] >= 0.50
        r = s["response_vs_policy"]["win_rate"] <= 0.65
        met["G1"] += g1
        met["G2_everything"] += e
        met["G2_binomial"] += b
        met["G2_response"] += e and b and r
        cells = [f"{_pct(v['win_rate'])} {_iv(v['clustered'])}" for v in s.values()]
        rows.append(
            f"| {seed} | " + " | ".join(cells) + f" | {'yes' if g1 else 'no'} | {'yes' if e and b and r else 'no'} |"
        )
    return rows, met, seen


def _distil_lines() -> list[str]:
    """One line per distillation run: its seed (tuning or verdict), held-out agreement with its interval."""
    out = []
    for path in sorted((OUT / "distil").glob("*.json")):
        d = json.loads(path.read_text())
        rep = d.get("report") or {}
        data = rep.get("data", {})
        iv = rep.get("agreement_student_interval") or [float("nan")] * 2
        curve = "; ".join(f"{c['step']}: {_pct(c['heldout_agreement'])}" for c in d.get("curve", []))
        out.append(
            f"| {d['seed']}{' (tuning)' if d.get('tuning') else ''} | {d['config']} | {data.get('train_rows', '?')} / "
            f"{rep.get('agreement_heldout_decisions', '?')} | {_pct(rep.get('agreement_initial', float('nan')))} | "
            f"{_pct(rep.get('agreement_student', float('nan')))} {_iv(iv)} | {curve} | {d['wall_s']:.0f} |"
        )
    return out


LM_CELLS = ("vs_generalist", "vs_everything", "vs_binomial", "teacher_response_vs_student")


def _lm_gate_rows() -> tuple[list[str], dict[str, int], int]:
    """The LM students' gate cells per verdict seed, G1 and G2's bot criteria (the exploiter: see the text)."""
    rows, met, seen = [], {"G1": 0, "G2_bots": 0}, 0
    for seed in VERDICT_SEEDS:
        found = {k: OUT / "gate-lm" / f"seed{seed}_{k}.json" for k in LM_CELLS}
        s = {k: summary(json.loads(p.read_text())) for k, p in found.items() if p.exists()}
        teacher = {k: OUT / "gate" / f"seed{seed}_{k}.json" for k in LM_CELLS[:3]}
        teacher[LM_CELLS[3]] = OUT / "gate" / f"seed{seed}_response_vs_policy.json"  # against the teacher itself
        t = {k: summary(json.loads(p.read_text()))["win_rate"] for k, p in teacher.items() if p.exists()}
        cells = [
            f"{_pct(s[k]['win_rate'])} {_iv(s[k]['clustered'])}" + (f" (teacher {_pct(t[k])})" if k in t else "")
            if k in s
            else "not run"
            for k in LM_CELLS
        ]
        if not all(k in s for k in LM_CELLS[:3]):
            rows.append(f"| {seed} | " + " | ".join(cells) + " | | |")
            continue
        seen += 1
        g1 = s["vs_generalist"]["clustered"][0] > 0.5
        bots = s["vs_everything"]["win_rate"] >= 0.70 and s["vs_binomial"]["win_rate"] >= 0.50
        met["G1"] += g1
        met["G2_bots"] += bots
        rows.append(f"| {seed} | " + " | ".join(cells) + f" | {'yes' if g1 else 'no'} | {'yes' if bots else 'no'} |")
    return rows, met, seen


def _training_lines() -> list[str]:
    out = []
    for kind in ("selfplay", "response"):
        for seed in (*TUNING_SEEDS, *VERDICT_SEEDS):
            path = run_dir(CHOSEN, seed, kind) / "metrics.jsonl"
            if not path.exists():
                continue
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            if not rows:
                continue
            last = rows[-1]
            last.setdefault("step", last.get("update", 0))  # runs before the rename logged "update"
            evals = [r for r in rows if "return_vs_random" in r]
            curve = "; ".join(
                f"{r['games']}: {_pct((1 + r['return_vs_random']) / 2)} / {_pct((1 + r.get('return_vs_liars_call_everything', -1)) / 2)}"
                for r in evals[:: max(1, len(evals) // 5)]
            )
            zero = sum(1 for r in rows if r.get("grad_norm", 1) == 0)
            out.append(
                f"- {kind} seed {seed}: {last['games']} games, {last['step']} updates, {last['wall_s']:.0f} s; last update: "
                f"entropy {last.get('entropy', 0):.2f} nats, gradient norm {last.get('grad_norm', 0):.3f}, zero-advantage "
                f"share {last.get('zero_advantage_share', 0):.3f}; updates with a zero gradient: {zero}; win % against "
                f"random / call-everything (native, sampled) by games: {curve or 'none'}"
            )
    return out


def _more_games_lines() -> list[str]:
    """After the verdict: the chosen settings at more games on tuning seed 0 (native engine, the
    specialist-tune deals), and the 2,000,000-game run on a verdict seed (the gate's deals; no verdict)."""
    rows = []
    for config, games in (("magnet_long", "300,000"), ("magnet_1m", "1,000,000"), ("magnet_2m", "2,000,000")):
        cells = {}
        for plays in ("last", "greedy"):
            path = OUT / "specialist-tune" / f"{config}_seed0_{plays}_vs_{BINOMIAL}.json"
            if path.exists():
                s = summary(json.loads(path.read_text()))
                cells[plays] = f"{_pct(s['win_rate'])} {_iv(s['clustered'])}"
        if cells:
            rows.append(f"| {games} | {cells.get('last', 'not run')} | {cells.get('greedy', 'not run')} |")
    if not rows:
        return []
    out = [
        "**After the verdict: more games** (the chosen settings, `magnet_long`, with `games` raised; tuning seed 0, "
        f"native engine, deals {SPECIALIST_TUNE_SEED}.., {SPECIALIST_TUNE_DEALS} x 2 seatings; chosen after the gate "
        "was read, so no verdict): the specialist against the binomial bidder, sampled and greedy.",
        "",
        "| games | sampled | greedy |",
        "|---|---|---|",
        *rows,
    ]
    by_seed: dict[str, list[str]] = {}
    for path in sorted((OUT / "gate-2m").glob("seed*_vs_*.json")):
        s = summary(json.loads(path.read_text()))
        seed, opponent = path.stem[4:].split("_vs_")
        by_seed.setdefault(seed, []).append(f"{opponent} {_pct(s['win_rate'])} {_iv(s['clustered'])}")
    out += [
        "",
        *(
            f"- 2,000,000 games on verdict seed {seed}, on the title (the gate's deals, 80 games a cell; one seed: a "
            f"check, not a verdict; no best response trained): {', '.join(cells)}."
            for seed, cells in by_seed.items()
        ),
    ]
    return ["", *out]


def report(args: argparse.Namespace) -> int:
    from _report import machine

    speed_file = OUT / "speed.json"
    speed_line = "(speed not measured: run `speed`)"
    if speed_file.exists():
        sp = json.loads(speed_file.read_text())
        speed_line = (
            f"Random legal games (encoding every decision): TextArena through the adapter {sp[TITLE]['games_per_s']:.1f} "
            f"games/s, the native engine {sp[NATIVE]['games_per_s']:.0f} games/s ({sp['ratio']:.0f}x). 10^5 games x "
            f"5 seeds x 2 (the specialist and its best response) through TextArena would take "
            f"{1e6 / sp[TITLE]['games_per_s'] / 3600:.0f} hours of one core before any policy computes: the native engine "
            "(a differential test holds it to the title's rules) trains, the title judges."
        )
    rows, met, seen = _gate_rows()
    lines = [
        "## Liar's dice: a generalist worth beating and a numeric specialist (issue 42, phase 1)",
        "",
        f"`python bench/liars_specialist.py speed | generalist-tune | generalist-eval | train | specialist-tune | gate | "
        f"report --write`; {machine()}; 2 cores shared with other jobs (every run niced, one at a time).",
        "",
        f"**Engines.** {speed_line}",
        "",
        "**The generalist** (point 4), fixed before any training: the generic `search` player, information-set MCTS "
        '(`tree = "ismcts"`: every seat chooses at its own nodes, a consistent opponent model over the worlds the '
        "deciding seat thinks possible; progressive widening in the game's order spends the budget on few moves). "
        f"Tuning deals {GENERALIST_TUNE_SEED}.. on the native engine (named, used for no verdict):",
        "",
        _table("generalist-tune"),
        "",
        f"Chosen: `{GENERALIST}`. On the TextArena title, held-out deals {EVAL_SEED}..:",
        "",
        _table("generalist-eval"),
        "",
        f"**The specialist** (point 5a): `arena_train.numeric_selfplay`, config `{CHOSEN}` "
        f"({json.dumps(CONFIGS[CHOSEN])}), playing its `{PLAYS}` policy, sampled. Tuning seeds {TUNING_SEEDS} "
        f"(native engine, deals {SPECIALIST_TUNE_SEED}..):",
        "",
        _table("specialist-tune"),
        "",
        "Training (metrics.jsonl of each run):",
        "",
        *(_training_lines() or ["(no run yet)"]),
        "",
        f"**The gate** (point 6), verdict seeds {VERDICT_SEEDS} on the TextArena title, {GATE_DEALS} deals x 2 seatings a "
        "cell (deals 970000 + 1000 x seed..; the best response on the next 500): the specialist's win rate and deal-clustered "
        "95% interval against the generalist (G1: interval above 50%), call-everything (G2: >= 70%), the binomial bidder "
        "(G2: >= 50%), and the best response trained against the frozen specialist with the same budget (G2: <= 65%):",
        "",
        "| seed | vs generalist | vs call-everything | vs binomial | best response vs it | G1 | G2 |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"Over the {seen} verdict seeds played: G1 met in {met['G1']} (needs 4 of 5); G2 met in {met['G2_response']} "
        f"(needs 3 of 5; call-everything >= 70% in {met['G2_everything']}, binomial >= 50% in {met['G2_binomial']}).",
    ]
    lm_rows, lm_met, lm_seen = _lm_gate_rows()
    lines += [
        "",
        "**Distilled into the tiny language model** (point 5b): `distill --seed S` runs the recipe's second stage "
        "(`examples/textarena_loop_liars.toml`: `arena_train.expert_iteration`, steps mode) with seed S's policy as "
        "the teacher: its greedy choice labels every decision of games it plays itself on the title (`behaviour = "
        '"expert"`), against itself sampled (never the binomial bidder); the model reads the compact view '
        "(`tld 021011 | 5 5 | 3 2 2`: own dice per face, every seat's dice, the bid and its own dice of that face). "
        f"Settings chosen on tuning seed {TUNING_SEEDS[0]}'s teacher only (`distil-tune`): "
        + "; ".join(
            f"`{k}` {json.dumps({x: v for x, v in c.items() if x not in DISTIL_COMMON})}"
            for k, c in DISTIL_CONFIGS.items()
        )
        + f", common {json.dumps(DISTIL_COMMON)}; chosen `{DISTIL_CHOSEN}`. Agreement: the share of the held-out "
        "round's decisions (the third of three) where the student's most likely answer is the teacher's greedy "
        "choice, deal-clustered 95% interval:",
        "",
        "| seed | config | train / held-out decisions | agreement before % | agreement after % [95%] | by step | wall s |",
        "|---|---|---|---|---|---|---|",
        *(_distil_lines() or ["| (not run) | | | | | | |"]),
        "",
        "The teacher's greedy choice against its sampled policy as the label, tuning seed 0 on the native engine "
        f"(deals {SPECIALIST_TUNE_SEED}..):",
        "",
        _table("distil-tune"),
        "",
        f"The GRPO polish tried on tuning seed {TUNING_SEEDS[0]}'s student (`polish-tune`: {json.dumps(POLISH)}, "
        f"from the student's weights, point 1's distinct groups), both greedy on the title, tuning deals "
        f"{SPECIALIST_TUNE_SEED}..:",
        "",
        _table("polish-tune"),
        "",
        f"**The LM students at the gate** (`gate-lm --seed S`, greedy, on their teacher's gate deals, {GATE_DEALS} x 2 "
        "seatings a cell, deal-clustered 95% intervals). The last column is the teacher's best response (trained "
        "against the teacher, not against the student) playing the student: a transferred exploiter, a lower bound "
        "on what a best response to the student would win. G2's exploiter criterion asks for a best response trained "
        "against the student itself with the budget of (a), 3x10^5 games through the language model on the title: "
        "not run (the games alone take about 32 hours of one core at the title's 2.6 games/s, before the model's "
        "forward passes), so G2 is stated for its bot criteria only. In brackets, the teacher's own win rate in "
        "the same cell (the gate above: same deals, same seatings):",
        "",
        "| seed | vs generalist | vs call-everything | vs binomial | teacher's best response vs it | G1 | G2 bots |",
        "|---|---|---|---|---|---|---|",
        *lm_rows,
        "",
        f"Over the {lm_seen} verdict seeds played by the LM students: G1 met in {lm_met['G1']} (needs 4 of 5); G2's "
        f"bot criteria (>= 70% against call-everything and >= 50% against the binomial bidder) met in "
        f"{lm_met['G2_bots']} (needs 3 of 5).",
        *_more_games_lines(),
    ]
    for notes in (OUT / "distil-reading.md", OUT / "reading.md"):
        if notes.exists():
            lines += ["", notes.read_text().strip()]
    body = "\n".join(lines)
    print(body)
    if args.write:
        from _report import write_section

        write_section("liars-specialist", body)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("speed").set_defaults(func=speed)
    p = sub.add_parser("generalist-tune")
    p.add_argument("--only")
    p.set_defaults(func=generalist_tune)
    sub.add_parser("generalist-eval").set_defaults(func=generalist_eval)
    p = sub.add_parser("train")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--config", default=CHOSEN, choices=sorted(CONFIGS))
    p.set_defaults(func=train_cmd)
    sub.add_parser("specialist-tune").set_defaults(func=specialist_tune)
    p = sub.add_parser("gate")
    p.add_argument("--seed", type=int, required=True)
    p.set_defaults(func=gate)
    p = sub.add_parser("distill")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--config", default=DISTIL_CHOSEN, choices=sorted(DISTIL_CONFIGS))
    p.set_defaults(func=distill)
    sub.add_parser("distil-tune").set_defaults(func=distil_tune)
    sub.add_parser("polish-tune").set_defaults(func=polish_tune)
    p = sub.add_parser("gate-lm")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--config", default=DISTIL_CHOSEN, choices=sorted(DISTIL_CONFIGS))
    p.set_defaults(func=gate_lm)
    p = sub.add_parser("ship-lm")
    p.add_argument("--seed", type=int, default=VERDICT_SEEDS[0])
    p.add_argument("--config", default=DISTIL_CHOSEN, choices=sorted(DISTIL_CONFIGS))
    p.set_defaults(func=ship_lm)
    p = sub.add_parser("report")
    p.add_argument("--write", action="store_true")
    p.set_defaults(func=report)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
