"""The report of bench/train_megagem_residual.py: the docs section, the PNG, and the shipped
checkpoint (models/megagem-student: the seed whose last curve-deal margin over the best constant
deviation is best; the held-out deals play no part in the choice)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from arena_core.stats import paired_t
from arena_games.megagem.residual import MENU

SECTION = "megagem-residual"
ROOT = Path(__file__).resolve().parents[1]
SEEDS = (0, 1, 2)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _iv(mean: float, lo: float, hi: float) -> str:
    return f"{mean:+.1f} [{lo:+.1f}, {hi:+.1f}]"


def _per_deal(where: Path) -> dict[int, float]:
    """Deal -> A's mean margin in a compare run's results (A = the student)."""
    from arena_tournament.compare import per_deal_margins
    from arena_tournament.results import load_results

    header, games = load_results(where / "results.jsonl")
    return per_deal_margins(games, header.schedule.entrants[0].name)


def plot(out: Path, png: Path, constant_tuning: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for seed in SEEDS:
        run = out / f"seed_{seed}"
        curve, log = _rows(run / "curve.jsonl"), _rows(run / "log.jsonl")
        if curve:
            x = [r["episodes"] for r in curve]
            axes[0].plot(x, [r["mean"] for r in curve], marker="o", label=f"seed {seed}")
            lo = [r["low"] if np.isfinite(r["low"]) else r["mean"] for r in curve]
            hi = [r["high"] if np.isfinite(r["high"]) else r["mean"] for r in curve]
            axes[0].fill_between(x, lo, hi, alpha=0.15)
            const = run / "constant_curve.json"
            if const.exists():
                axes[0].axhline(float(np.mean(json.loads(const.read_text()))), ls=":", lw=1, color=f"C{seed}")
        if log:
            steps = [r["step"] for r in log]
            for key, ls in (("noise_raw", "-"), ("noise_expert_control", "--"), ("noise_greedy_control", ":")):
                axes[1].plot(steps, [r[key] for r in log], ls=ls, color=f"C{seed}", lw=1)
    axes[0].axhline(0.0, color="k", lw=0.8)
    axes[0].set_xlabel("training episodes")
    axes[0].set_ylabel("greedy student - expert\n(own 16 curve deals x 3 seats)")
    axes[0].set_title(f"dotted: constant deviation on the same deals (tuning: {constant_tuning:+.1f})", fontsize=9)
    axes[0].legend(fontsize=8)
    axes[1].set_yscale("log")
    axes[1].set_xlabel("step")
    axes[1].set_ylabel("variance of the batch-mean gradient")
    axes[1].set_title("solid: no control; dashed: expert's margin; dotted: greedy student's", fontsize=9)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png, dpi=80)
    plt.close(fig)


def _noise(log: list[dict], lo: int, hi: int) -> str:
    rows = [r for r in log if lo <= r["step"] <= hi]
    if not rows:
        return "-"
    return " / ".join(
        f"{np.mean([r[k] for r in rows]):.2f}" for k in ("noise_raw", "noise_expert_control", "noise_greedy_control")
    )


def continuation(more: Path, best: str) -> tuple[list[str], int, int]:
    """The seeds trained on to 200 steps (decided after the 80-step held-out results, so judged on
    fresh deals 37,000,000..37,000,099 instead)."""
    lines = [
        "",
        "Continuation to 200 steps (the same runs resumed; decided after seeing the 80-step held-out results, "
        "so judged on fresh deals 37,000,000..37,000,099 x 3 seats, used nowhere else):",
        "",
        "| student | steps | curve: last (own curve deals) | A - B (student - expert), paired t 95% | minus the "
        f"constant {best}, same deals |",
        "|---|---:|---|---|---|",
    ]
    const = _per_deal(more / "heldout_constant")
    above, beyond = 0, 0
    c = json.loads((more / "heldout_constant" / "compare.json").read_text())["difference"]
    lines.append(f"| constant {best} | - | - | {_iv(c['mean'], c['t_low'], c['t_high'])} | |")
    for seed in SEEDS:
        where = more / f"heldout_{seed}"
        if not (where / "compare.json").exists():
            lines.append(f"| seed {seed} | not run | | | |")
            continue
        d = json.loads((where / "compare.json").read_text())["difference"]
        curve = _rows(more / f"seed_{seed}" / "curve.jsonl")
        mine = _per_deal(where)
        diff = np.array([mine[k] - const[k] for k in sorted(set(mine) & set(const))])
        if np.any(diff != 0):
            m, lo, hi, p = paired_t(diff, 0.95)
            vs = f"{_iv(m, lo, hi)}, p {p:.2g}"
            beyond += lo > 0
        else:
            vs = "+0.0 (identical on every deal)"
        above += d["t_low"] > 0
        lines.append(
            f"| seed {seed} | {curve[-1]['step']} | {_iv(curve[-1]['mean'], curve[-1]['low'], curve[-1]['high'])} | "
            f"**{_iv(d['mean'], d['t_low'], d['t_high'])}** | {vs} |"
        )
    cli = more / "cli_32000000"
    first_const = more.parent / more.name.removesuffix("-200") / "heldout_constant"
    if (cli / "results.jsonl").exists() and (first_const / "results.jsonl").exists():
        d = json.loads((cli / "compare.json").read_text())["difference"]
        mine, base = _per_deal(cli), _per_deal(first_const)
        m, lo, hi, p = paired_t(np.array([mine[k] - base[k] for k in sorted(set(mine) & set(base))]), 0.95)
        lines += [
            "",
            "The shipped student (seed 2, 200 steps) through the issue's own command, `arena compare "
            "checkpoint:run=models/megagem-student megagem_expert --game megagem --opponents megagem_expert "
            "megagem_expert --deals 100 --seed 32000000 --json`, on the first held-out deals (not used to train "
            f"or choose it): student - expert **{_iv(d['mean'], d['t_low'], d['t_high'])}**, p {d['t_p']:.2g}; "
            f"minus the constant {best} on the same deals {_iv(m, lo, hi)}, p {p:.2g}.",
        ]
    return lines, above, beyond


def report(out: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from _report import DOC, machine, write_section

    const = json.loads((out / "constant.json").read_text())
    best = const["best"]
    cbest = const["rows"][best]
    lines = [
        "## MegaGem: a student that starts at the expert (issue 30)",
        "",
        f"Machine: {machine()}; numpy only, 2 cores shared with other jobs. Written by "
        "`python bench/train_megagem_residual.py report` from the stages it lists "
        "(`constant`, `train --seed S`, `evaluate --seed S|constant`, `transfer`). Policy kind: the numpy "
        "policy-gradient form the issue allows (not the tiny LM).",
        "",
        "**Student** (`arena_games.megagem.residual`, trained by `arena_train.residual` as `bench/train_megagem_residual.py` drives it): at every bid, a linear softmax over a residual menu on "
        "`megagem_expert`'s own bid (x0.8, x0.9, x1.0, x1.1, x1.25, +1 coin, +2 coins; rounded, clipped to the "
        "legal range), features = the expert's own inputs read from the seat's observation (its bid, ungated "
        "best bid, lot value, liquidity premium, win probability of the bid and of one coin more, coins, "
        "tiebreak position, ...; 21 numbers); reveals are the expert's. All weights start at 0 and the x1.0 "
        "logit at 3, so the greedy student at initialisation is the expert bid for bid: margin 0 exactly "
        "(tests/test_megagem_residual.py checks it on whole games, and that a deviation is not 0).",
        "",
        "**View oracle**: the expert's bid computed from a JSON copy of the seat's observation alone "
        "(`expert_read`) equals the bid the expert plays at every bid decision of whole games, every seat, "
        "treasures, loans and investments (the test). The structured view therefore holds all the expert "
        "uses. The flat `encode_observation` does not: it keeps only the last auction's bids, while the "
        "expert's price law is fitted on each opponent's past bids on the same kind of card (with their coins "
        "and the display at the time); missions, collections, loans, hand sizes and the tiebreak order are in "
        "it. That is why the student's features are the expert's inputs, not the flat encoding.",
        "",
        "### The best constant deviation (the bar to beat)",
        "",
        f"One menu entry at every decision, against two experts, on the tuning deals {const['first']:,}.."
        f"{const['first'] + const['deals'] - 1:,} ({const['deals']} deals x 3 seats; these deals appear in no "
        "verdict). Greedy margin minus the expert's in the same seat, per deal, paired t 95%:",
        "",
        "| constant deviation | student - expert | p |",
        "|---|---|---:|",
    ]
    for label, r in const["rows"].items():
        lines.append(f"| {label} | {_iv(r['mean'], r['low'], r['high'])} | {r['p']:.2g} |")
    lines += [
        "",
        f"Best: **{best}** ({cbest['mean']:+.1f} on the tuning deals); +2 and the multipliers give more away.",
        "",
    ]
    tie_path = out / "ties.json"
    if tie_path.exists():
        t = json.loads(tie_path.read_text())
        lines += [
            f"Where the edge comes from (`ties` stage; deals {t['deals'][0]:,}..{t['deals'][1]:,} x 3 seats, two "
            f"experts opposite): share of the seat's auctions it wins, where its bid equals the highest other bid, "
            f"and where it wins by exactly one coin, as the expert and as the constant {best}:",
            "",
            "| card | auctions | won: expert / constant | bid ties the top other bid: expert / constant | won by one coin: "
            "expert / constant |",
            "|---|---:|---|---|---|",
        ]
        for kind in ("treasure", "loan", "investment"):
            e, c = t["rows"][f"{kind} expert"], t["rows"][f"{kind} constant"]
            lines.append(
                f"| {kind} | {e['auctions']} | {e['won']:.0%} / {c['won']:.0%} | {e['tied_top']:.0%} / "
                f"{c['tied_top']:.0%} | {e['won_by_1']:.0%} / {c['won_by_1']:.0%} |"
            )
        lines += [
            "",
            "The three experts value lots alike and bid alike: the seat's bid ties the top other bid in "
            f"{t['rows']['treasure expert']['tied_top']:.0%} of treasure auctions, "
            f"{t['rows']['loan expert']['tied_top']:.0%} of loans and "
            f"{t['rows']['investment expert']['tied_top']:.0%} of investments, and the tiebreak queue settles "
            "them. One coin more turns most of those ties into wins, mostly by exactly that coin.",
            "",
        ]
    # training
    cfg_path = out / "seed_0" / "train_config.json"
    cfg = json.loads(cfg_path.read_text()) if cfg_path.exists() else {}
    lines += [
        "### Training",
        "",
        f"REINFORCE + Adam (lr {cfg.get('lr')}), entropy bonus {cfg.get('entropy')}, "
        f"{cfg.get('deals_per_step')} fresh deals x 3 seats = {3 * int(cfg.get('deals_per_step', 0))} episodes a "
        "step against two experts. Reward = the student's margin minus a reference's margin in the same seat on "
        f"the same deal, replayed exactly; reference (`control`) = **{cfg.get('control')}**: the current greedy "
        "student (the expert itself at step 0). Training deals 30,000,000 + seed x 1,000,000 + ...; curve deals "
        "33,000,000 + seed x 1,000 (16 deals x 3 seats, greedy). Gradient noise = trace of the per-episode "
        "gradient covariance / episodes (the variance of the step's gradient estimate), each with the "
        "batch-mean baseline; columns: no control / the expert's margin / the greedy student's margin.",
        "",
        "| seed | steps | episodes | wall s | curve: step 0 -> last (paired t 95%) | last minus the constant, same deals "
        "| noise steps 1-5 | noise last 20 steps |",
        "|---|---:|---:|---:|---|---|---|---|",
    ]
    for seed in SEEDS:
        run = out / f"seed_{seed}"
        log, curve = _rows(run / "log.jsonl"), _rows(run / "curve.jsonl")
        if not log:
            lines.append(f"| {seed} | not run | | | | | | |")
            continue
        last = curve[-1]
        oc = last["over_constant"]
        n = log[-1]["step"]
        over = _iv(oc["mean"], oc["low"], oc["high"]) if np.isfinite(oc["low"]) else f"{oc['mean']:+.1f} (identical)"
        lines.append(
            f"| {seed} | {n} | {log[-1]['episodes']} | {sum(r['wall_s'] for r in log):.0f} | "
            f"{curve[0]['mean']:+.1f} -> {_iv(last['mean'], last['low'], last['high'])} | "
            f"{over} | "
            f"{_noise(log, 1, 5)} | {_noise(log, n - 19, n)} |"
        )
    fixed = [json.loads(f.read_text()) for f in sorted(out.glob("noise_*.json"))]
    if fixed:
        lines += [
            "",
            "Gradient noise at a fixed policy (one step's estimate, no update kept; fresh deals 36,000,000.., "
            "x 3 seats; the student's policy sampled): the variance of the batch-mean gradient (95% bootstrap "
            "interval over episodes, 2000 resamples), its ratio to no control, and the per-episode sd of the reward.",
            "",
            "| policy | episodes | no control | expert's margin | greedy student's margin | ratio to no control: "
            "expert / greedy | reward sd: raw / minus expert |",
            "|---|---:|---|---|---|---|---|",
        ]
        for r in fixed:
            name = "initial (greedy = the expert)" if r["policy"] == "init" else f"seed {r['policy']}, trained"

            def cell(k: str, r: dict = r) -> str:
                lo, hi = r.get(k + "_interval", [float("nan")] * 2)
                return f"{r[k]:.3f} [{lo:.3f}, {hi:.3f}]"

            ratios = (
                f"{r['noise_expert_control'] / r['noise_raw']:.2f} [{r['expert_over_raw_interval'][0]:.2f}, "
                f"{r['expert_over_raw_interval'][1]:.2f}] / {r['noise_greedy_control'] / r['noise_raw']:.2f} "
                f"[{r['greedy_over_raw_interval'][0]:.2f}, {r['greedy_over_raw_interval'][1]:.2f}]"
                if "expert_over_raw_interval" in r
                else "-"
            )
            lines.append(
                f"| {name} | {r['episodes']} | {cell('noise_raw')} | {cell('noise_expert_control')} | "
                f"{cell('noise_greedy_control')} | {ratios} | {r['raw_margin_sd']:.1f} / {r['margin_over_expert_sd']:.1f} |"
            )
    png = DOC.parent / "train_megagem_residual.png"
    longest = out.parent / (out.name + "-200")
    plot(longest if (longest / "seed_0" / "curve.jsonl").exists() else out, png, cbest["mean"])
    lines += [
        "",
        f"Curves (margin vs episodes; gradient noise per step; the runs continued to 200 steps): [{png.name}]({png.name}).",
        "",
    ]
    # evaluation
    lines += [
        "### Evaluation: `arena compare` on held-out deals",
        "",
        "`arena compare checkpoint:run=DIR megagem_expert --game megagem --opponents megagem_expert "
        "megagem_expert --deals 100 --seed 32000000` (the Python API of it): deals 32,000,000..32,000,099, "
        "used nowhere else, x 3 seat rotations; unit = deal; the expert's margin at a table of three experts is "
        "0 by symmetry, so A - B is the student's margin over the expert. Last column: the student minus the "
        f"constant {best} on the same deals and seats (per-deal paired t).",
        "",
        "| student | A - B (student - expert), paired t 95% | p | deal bootstrap 95% | deals won | minus the constant |",
        "|---|---|---:|---|---:|---|",
    ]
    const_deals = _per_deal(out / "heldout_constant") if (out / "heldout_constant" / "results.jsonl").exists() else None
    verdict_above, verdict_const = 0, 0
    for which in ["init", "constant", *[str(s) for s in SEEDS]]:
        c = out / f"heldout_{which}" / "compare.json"
        if not c.exists():
            lines.append(f"| {which} | not run | | | | |")
            continue
        d = json.loads(c.read_text())["difference"]
        vs = ""
        if which not in ("constant", "init") and const_deals is not None:
            mine = _per_deal(out / f"heldout_{which}")
            ds = sorted(set(mine) & set(const_deals))
            diff = np.array([mine[k] - const_deals[k] for k in ds])
            if np.any(diff != 0):
                m, lo, hi, p = paired_t(diff, 0.95)
                vs = f"{_iv(m, lo, hi)}, p {p:.2g}"
                verdict_const += lo > 0
            else:
                vs = "+0.0 (identical on every deal)"
        if which not in ("constant", "init"):
            verdict_above += d["t_low"] > 0
        name = {"constant": f"constant {best}", "init": "untrained (step 0)"}.get(which, f"seed {which}")
        if not np.isfinite(d["t_low"]):
            lines.append(
                f"| {name} | **{d['mean']:+.1f} exactly** (the expert's games on every deal and seat) | | | | |"
            )
            continue
        lines.append(
            f"| {name} | **{_iv(d['mean'], d['t_low'], d['t_high'])}** | {d['t_p']:.2g} | "
            f"[{d['bootstrap_low']:+.1f}, {d['bootstrap_high']:+.1f}] | {d['win_share']:.0%} | {vs} |"
        )
    more = out.parent / (out.name + "-200")
    transfer = sorted(out.glob("transfer_*/compare.json")) + sorted(more.glob("transfer_*/compare.json"))
    if transfer:
        lines += [
            "",
            "Transfer: the same players against another field (`--opponents megagem_heuristic megagem_market`, "
            "deals 34,000,000..34,000,099); A - B = the player's margin minus the expert's at the same tables:",
            "",
            "| player | A - B vs `megagem_expert`, paired t 95% | p |",
            "|---|---|---:|",
        ]
        for t in transfer:
            d = json.loads(t.read_text())["difference"]
            who = t.parent.name[9:]
            name = f"constant {best}" if who == "constant" else f"seed {who}"
            if t.parent.parent == more:
                name += ", 200 steps (shipped)"
            elif who != "constant":
                name += ", 80 steps"
            lines.append(f"| {name} | {_iv(d['mean'], d['t_low'], d['t_high'])} | {d['t_p']:.2g} |")
    cont: tuple[int, int] | None = None
    if (more / "heldout_constant" / "compare.json").exists():
        extra, above200, beyond200 = continuation(more, best)
        lines += extra
        cont = (above200, beyond200)
    for dev in sorted(out.glob("deviations_*.json")):
        r = json.loads(dev.read_text())
        cells = r["cells"]
        lines += [
            "",
            f"One-step deviations from the {'constant' if r['student'] == 'constant' else 'seed ' + r['student']} "
            f"student (its games equal the constant {best}'s on every held-out deal; deals {r['deals'][0]:,}..{r['deals'][1]:,} x 3 seats, {r['points_per_game']} random bid "
            "decisions a game; at one decision only, another menu entry, the student's own choice everywhere "
            "else): the change in its margin, paired t 95% over those decisions. A cell above 0 is a "
            "state-dependent gain still open to a student; none above 0 means the student is a local optimum "
            "decision by decision against this field.",
            "",
            "| card | " + " | ".join(m[0] for m in MENU) + " |",
            "|---|" + "---|" * len(MENU),
        ]
        for kind in ("treasure_1", "treasure_2", "loan", "investment"):
            row = []
            for m in MENU:
                c = cells.get(f"{kind} {m[0]}")
                if c is None:
                    row.append("-")
                elif np.isfinite(c["low"]):
                    row.append(f"{c['mean']:+.1f} [{c['low']:+.1f}, {c['high']:+.1f}] (n {c['n']})")
                else:
                    row.append(f"{c['mean']:+.1f} (n {c['n']})")
            lines.append(f"| {kind} | " + " | ".join(row) + " |")
    # ship the checkpoint chosen on curve deals
    src = more if cont is not None else out  # ship from the longest runs
    finals = {
        s: _rows(src / f"seed_{s}" / "curve.jsonl")[-1]["over_constant"]["mean"]
        for s in SEEDS
        if (src / f"seed_{s}" / "curve.jsonl").exists()
    }
    if finals:
        pick = max(finals, key=lambda s: finals[s])
        dest = ROOT / "models" / "megagem-student"
        dest.mkdir(parents=True, exist_ok=True)
        for f in ("policy.npz", "config.json"):
            shutil.copy(src / f"seed_{pick}" / "policy" / f, dest / f)
        lines += [
            "",
            f"Shipped: `models/megagem-student` = seed {pick} after "
            f"{_rows(src / f'seed_{pick}' / 'curve.jsonl')[-1]['step']} steps (the best last curve-deal margin over "
            "the constant; "
            "chosen without the "
            "held-out deals), `config.json` + `policy.npz` (a few kB), playable as "
            "`checkpoint:run=models/megagem-student`.",
        ]
    lines += [
        "",
        f"**Verdict** (measured): student - expert interval above 0 in **{verdict_above} of 3** seeds; above the "
        f"best constant deviation ({best}) in **{verdict_const} of 3** (80 steps, deals 32,000,000..)"
        + (
            f"; after 200 steps, on the fresh deals 37,000,000..: above the expert in **{cont[0]} of 3**, above "
            f"the constant in **{cont[1]} of 3**."
            if cont is not None
            else "."
        ),
    ]
    lines += [
        "",
        "Configuration choice (named, outside every verdict): two pilots on seed 99's training deals "
        "(129,000,000..) and curve deals (33,099,000..), 40 steps each: lr 0.05, the expert's margin as the "
        "control, no entropy bonus, 16 deals a step and the menu without +2; then lr 0.05, the greedy control, "
        "entropy 0.05, 12 deals a step, the full menu. Both reached the constant +1 within 20-30 steps and then "
        "played it at every decision of their curve deals. The three seeds use the second setting, 80 "
        "steps. The best absolute-bid student measured before (docs: 'a CPU-trained student against the "
        "expert') sits at -9.6 [-13.5, -5.7] (seed 1, search distillation) on other held-out deals: starting "
        "at the expert and learning a residual moves the student from below the expert to far above it.",
        "",
        "**Diagnosis.** (1) Against a field of experts the expert leaves a large, simple edge: one coin over "
        "its own bid (+62 on the tuning deals, +61 on the held-out ones). The policy gradient finds it in "
        "20-30 steps from the expert, on every seed, and the student's greedy policy ends as that constant "
        "deviation on seeds 0 and 1 at 80 steps: there, a retuned expert, not a state-dependent student. (2) "
        "Beyond it the one-step probe finds small state-dependent gains: one cell of 28 resolves above 0 (+2 "
        "coins on a loan, n 16; one in 28 is also what chance alone gives at 95%), against a reward sd of about "
        "30-47 points an episode. Seed 2 learned rules of that kind (+2 on many 2-gem lots, x1.25 on "
        "investments the expert bids on, +1 elsewhere): level with the constant after 80 steps, above it on "
        "fresh deals after 200 (continuation table); seeds 0 and 1 stay within noise of the constant. With "
        "that reward spread, a few points of state-dependent edge takes thousands of episodes to show, and "
        "one seed in three found it in 7,200. "
        "(3) The control variate the issue "
        "names (the expert's margin on the same deal and seat) is exact only while the student plays like "
        "the expert: at initialisation its reduction of the gradient noise is not resolved "
        "(ratio 0.87 [0.62, 1.19]: the sampled deviations, about one decision in five, move each game far more "
        "than the deal's luck does), and once the student plays +1 it raises the noise (2.09 [1.37, 3.13]); the "
        "greedy student's own replay is the control that keeps working (0.25 [0.12, 0.46] of no control on the "
        "trained policy; fixed-policy table). "
        "(4) The +1 edge does not transfer: against the heuristic "
        "and market bots the constant and the students are level with the expert or slightly below it (every "
        "interval holds 0; transfer table), so the "
        "gain is the experts' tie structure, not a better valuation.",
    ]
    body = "\n".join(lines)
    write_section(SECTION, body)
    (out / "report.md").write_text(body + "\n")
