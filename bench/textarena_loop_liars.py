"""TextArena LiarsDice-v0, the arena loop on a strategy title (issue 32): the rules as played, the
zero-shot generalist (the generic ``search`` player over worlds drawn by
``LiarsDiceV0Game.sample_hidden_state``) with settings chosen on named tuning deals and measured on
held-out deals, the shipped checkpoint of the loop, and the report. One file, past 500 lines,
because its stages share the named deal ranges, the generalist's settings and the result files the
report reads.

    python bench/textarena_loop_liars.py rules   # the rules as played (a minute)
    python bench/textarena_loop_liars.py tune    [--out bench/results/textarena-liars] [--only PAIRING]
    python bench/textarena_loop_liars.py eval    [--out ...] [--only PAIRING]
    python -m arena_train.loop examples/textarena_loop_liars.toml --out runs/textarena-loop-liars
    python bench/textarena_loop_liars.py ship    # the loop's final checkpoint -> models/textarena-loop
    python bench/textarena_loop_liars.py policy  # what the shipped checkpoint does
    python bench/textarena_loop_liars.py curve   [--only seed2_step8]  # each seed's checkpoints against the generalist
    python bench/textarena_loop_liars.py report  [--write --notes bench/results/textarena-liars/reading.md]

    python bench/textarena_loop_liars.py collect --run runs/textarena-loop-liars-seed2  # a loop run -> loop-seed2/

(``eval``'s ``trained_*`` pairings need ``ship`` first, ``seedN_*`` the loop run of seed N under
``runs/textarena-loop-liars-seedN``; ``collect`` copies a loop run's report and metrics to
``bench/results/textarena-liars/loop-seedN/``; seeds 0 and 1 were copied by hand to ``loop`` and
``loop-seed1``.) The loop's tables are rendered by the loop's own report (:mod:`arena_train.loop_report`).

Each pairing is played head to head on shared deals, both seatings of every deal, and written to
its own JSON file as soon as it is done (a finished pairing is skipped on a rerun, so a run cut
by the team's 20-minute CPU slot resumes). Win rates come with a Wilson interval (games taken as
independent) and a deal-clustered one (:func:`arena_core.stats.cluster_mean`; a deal's two
seatings share its dice).

Seeds: tuning deals ``TUNE_SEED + k`` (910000...), held-out deals ``EVAL_SEED + k`` (920000...);
the two ranges do not overlap, and the settings are fixed before ``eval`` runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

GAME = "textarena/LiarsDice-v0"
OUT = ROOT / "bench" / "results" / "textarena-liars"
TUNE_SEED = 910_000
EVAL_SEED = 920_000
#: the generalist fixed by ``tune`` (docs/benchmarks.md, issue 32): the budget that beat a
#: quarter of it on the tuning deals; nothing about Liar's dice is in it
GENERALIST = 'search{simulations = 100, rollout = "random"}'
#: the stock tiny model as anyone seats it: random weights, the full transcript, constrained decoding
STOCK = 'mlx{model = "tiny"}'
#: the RL'd tiny model shipped by ``ship`` (what models/textarena-loop/arena.json seats)
TRAINED = 'checkpoint{run = "models/textarena-loop"}'

TUNING = {  # name: (player A, player B, deals)
    "s25_vs_random": ('search{simulations = 25, rollout = "random"}', "random", 12),
    "s100_vs_s25": (
        'search{simulations = 100, rollout = "random"}',
        'search{simulations = 25, rollout = "random"}',
        12,
    ),
    "s100_x05_vs_s100": (
        'search{simulations = 100, rollout = "random", exploration = 0.5}',
        'search{simulations = 100, rollout = "random"}',
        12,
    ),
}
EVALS = {
    "generalist_vs_random": (GENERALIST, "random", 40),
    "generalist_vs_stock": (GENERALIST, STOCK, 12),
    # the shipped checkpoint (models/textarena-loop, greedy as arena.json seats it), after training
    "trained_vs_generalist": (TRAINED, GENERALIST, 40),
    "trained_vs_random": (TRAINED, "random", 40),
    # the repeat (loop seed 1, not shipped; its run directory under runs/)
    "seed1_vs_generalist": ('checkpoint{run = "runs/textarena-loop-liars-seed1/seed1/train"}', GENERALIST, 40),
    "seed2_vs_generalist": ('checkpoint{run = "runs/textarena-loop-liars-seed2/seed2/train"}', GENERALIST, 40),
    "seed3_vs_generalist": ('checkpoint{run = "runs/textarena-loop-liars-seed3/seed3/train"}', GENERALIST, 40),
    "seed4_vs_generalist": ('checkpoint{run = "runs/textarena-loop-liars-seed4/seed4/train"}', GENERALIST, 40),
}

#: the training curve against the generalist (issue 32, point 3): every loop seed's saved
#: checkpoints (steps 0, 8, 16, 24; greedy, as the held-out rows) on their own deals 930000..
CURVE_SEED = 930_000
CURVE_DEALS = 10
CURVE_STEPS = (0, 8, 16, 24)


def loop_run_dir(seed: int) -> str:
    """Where loop seed ``seed``'s training run lives (seed 0: the shipped run)."""
    return (
        "runs/textarena-loop-liars/seed0/train"
        if seed == 0
        else f"runs/textarena-loop-liars-seed{seed}/seed{seed}/train"
    )


CURVE = {  # step 0 is the stock model, the same weights in every seed: played once
    f"seed{seed}_step{step}": (f'checkpoint{{run = "{loop_run_dir(seed)}", step = {step}}}', GENERALIST, CURVE_DEALS)
    for seed in range(5)
    for step in CURVE_STEPS
    if step > 0 or seed == 0
}


def head_to_head(a: str, b: str, deals: int, first_seed: int, log: Any = print) -> dict[str, Any]:
    """``a`` against ``b`` on deals ``first_seed ..``, both seatings; per-deal wins of ``a``."""
    from arena_core import play_episode
    from arena_core.registry import make_game, make_player
    from arena_core.seeding import derive_seed

    game = make_game(GAME)
    pa = make_player(a, seed=derive_seed(first_seed, "a"))
    pb = make_player(b, seed=derive_seed(first_seed, "b"))
    per_deal: dict[str, list[float]] = {}
    faults = {"a": 0, "b": 0}
    started = time.perf_counter()
    for k in range(deals):
        seed = first_seed + k
        for seat_a in (0, 1):
            seats = [pa, pb] if seat_a == 0 else [pb, pa]
            rec = play_episode(game, seats, seed=seed)
            returns = rec.end.returns
            win = 0.5 if returns is None or returns[0] == returns[1] else float(returns[seat_a] > returns[1 - seat_a])
            per_deal.setdefault(str(seed), []).append(win)
        if (k + 1) % 5 == 0:
            log(f"  {k + 1}/{deals} deals, {time.perf_counter() - started:.0f} s")
    stats_a = dict(getattr(pa, "stats", {}) or {})
    return {
        "a": a,
        "b": b,
        "deals": deals,
        "first_seed": first_seed,
        "per_deal": per_deal,
        "faults": faults,
        "wall_s": round(time.perf_counter() - started, 1),
        "a_stats": {k: v for k, v in stats_a.items() if isinstance(v, (int, float))},
    }


def summary(result: dict[str, Any]) -> dict[str, Any]:
    from arena_core.stats import cluster_mean, wilson_interval

    sums = [sum(v) for v in result["per_deal"].values()]
    counts = [len(v) for v in result["per_deal"].values()]
    wins, n = sum(sums), sum(counts)
    lo, hi = wilson_interval(wins, n)
    cm = cluster_mean(sums, counts, bounds=(0.0, 1.0), null=0.5)
    return {"win_rate": wins / n, "games": n, "wilson": [lo, hi], "clustered": [cm.low, cm.high], "p": cm.pvalue}


def _run(table: dict[str, tuple[str, str, int]], first_seed: int, out: Path, only: str | None = None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    for name, (a, b, deals) in table.items():
        if only and name != only:
            continue
        path = out / f"{name}.json"
        if path.exists():
            print(f"{name}: done already ({path})")
            continue
        print(f"{name}: {a} vs {b}, {deals} deals x 2 seatings from seed {first_seed}", flush=True)
        result = head_to_head(a, b, deals, first_seed, log=lambda s: print(s, flush=True))
        path.write_text(json.dumps(result, indent=1))
        s = summary(result)
        print(f"{name}: A wins {100 * s['win_rate']:.1f}% of {s['games']} {s['clustered']} in {result['wall_s']} s")
    return 0


def tune(args: argparse.Namespace) -> int:
    return _run(TUNING, TUNE_SEED, Path(args.out) / "tune", args.only)


def evaluate(args: argparse.Namespace) -> int:
    return _run(EVALS, EVAL_SEED, Path(args.out) / "eval", args.only)


def curve(args: argparse.Namespace) -> int:
    return _run(CURVE, CURVE_SEED, Path(args.out) / "curve", args.only)


def _generalist_curve(out: Path) -> str:
    """Each loop seed's win rate against the generalist at its saved checkpoints (Wilson and
    deal-clustered 95%)."""
    rows = []
    for seed in range(5):
        cells = []
        for step in CURVE_STEPS:
            path = out / "curve" / f"seed{seed if step else 0}_step{step}.json"
            if not path.exists():
                cells.append("not run")
                continue
            s = summary(json.loads(path.read_text()))
            cells.append(f"{_pct(s['win_rate'])} [{_pct(s['clustered'][0])}, {_pct(s['clustered'][1])}]")
        rows.append(f"| {seed} | " + " | ".join(cells) + " |")
    if all("not run" in r for r in rows):
        return ""
    head = "| loop seed | " + " | ".join(f"step {k}" for k in CURVE_STEPS) + " |"
    return (
        "Training curves against the generalist (`curve`: every loop seed's saved checkpoints, greedy, against "
        f"`{GENERALIST}` on their own deals {CURVE_SEED}..{CURVE_SEED + CURVE_DEALS - 1}, both seatings, "
        "20 games a cell; win rate %, deal-clustered 95%; step 0 is the stock model, the same weights in every seed, "
        "played once):\n\n" + head + "\n|---|" + "---|" * len(CURVE_STEPS) + "\n" + "\n".join(rows) + "\n"
    )


def rules(args: argparse.Namespace) -> int:
    """The rules as played (docs/benchmarks.md, issue 32): calls against the dice, who opens the
    next round, and three upstream quirks stepped on raw TextArena envs."""
    import re

    from arena_core.players import Decision
    from arena_core.registry import make_game, make_player

    game = make_game(GAME)
    calls = wrong = bidder_opens = loser_opens = rounds = 0
    lengths = []
    for seed in range(100):
        pos = game.start(seed)
        players = [make_player("random", seed=2 * seed + p) for p in range(2)]
        while not game.is_over(pos):
            p = game.current_player(pos)
            move = players[p].act(Decision.at(game, pos, p, seed))
            action = getattr(move, "action", move)
            gs = game._live_at(pos.state, take=False).env.state.game_state  # noqa: SLF001 - a rules check reads the engine
            dice = {q: list(d) for q, d in gs["dice_rolls"].items()}
            bid, bidder = dict(gs["current_bid"]), gs["last_bidder_id"]
            pos = game.act(pos, p, action)
            if action != "[Call]":
                continue
            calls += 1
            count = sum(d.count(bid["face_value"]) for d in dice.values())
            said = [m.text for m in game.observe(pos, 0)["messages"] if "actual count" in m.text][-1]
            found = re.search(r"actual count of face (\d) is (\d+)", said)
            loser = p if count >= bid["quantity"] else bidder
            wrong += not found or int(found.group(2)) != count or f"Player {loser} " not in said.split("\n")[-1]
            if not game.is_over(pos):
                rounds += 1
                opener = game.current_player(pos)
                bidder_opens += opener == bidder
                loser_opens += opener == loser
        lengths.append(len(pos.state.actions))
    print(
        f"100 random games (seeds 0..99): {sum(lengths) / len(lengths):.1f} decisions a game (at most {max(lengths)})"
    )
    print(f"100 random games (seeds 0..99): {calls} calls, {wrong} announced a count or loser other than the dice give")
    print(f"{rounds} rounds after a call: the last bidder opened {bidder_opens}, the loser {loser_opens}")
    ta = __import__("arena_games.textarena.bridge", fromlist=["_ta"])._ta()
    for label, moves in (
        ("quantity-0 opening bid, then a call", ["[Bid: 0, 3]", "[Call]"]),
        ("3 of 2 after 2 of 6 (the prompt: 'higher quantity or higher face')", ["[Bid: 2, 6]", "[Bid: 3, 2]"]),
        ("50 of 6 with 10 dice in play", ["[Bid: 50, 6]"]),
    ):
        env = ta.make("LiarsDice-v0-raw")
        env.reset(num_players=2, seed=1)
        notes = []
        for m in moves:
            who = env.state.current_player_id
            env.step(m)
            last = env.state.observations[who][-1][1]
            notes.append(
                f"{m}: "
                + ("refused (" + str(last).split("Reason: ")[-1][:60] + ")" if "invalid" in str(last) else "accepted")
            )
        print(f"raw TextArena, {label}: " + "; ".join(notes))
    return 0


def ship(args: argparse.Namespace) -> int:
    """Copy a finished loop run's final checkpoint to ``models/textarena-loop``: the base tiny
    model (weights, tokenizer, config) it was trained from, the checkpoint's trainable weights and
    state (its model path made relative to the repository root), the loop config and arena.json."""
    if not args.force:
        print(
            "ship: models/textarena-loop holds issue 42's Liar's dice student now (bench/liars_specialist.py ship-lm); "
            "add --force to overwrite it with this issue-32 loop's checkpoint",
            file=sys.stderr,
        )
        return 2
    run = Path(args.run)
    ckpts = sorted((run / "seed0" / "train" / "checkpoints").glob("step_*"))
    if not ckpts:
        print(f"no checkpoints under {run}", file=sys.stderr)
        return 2
    state = json.loads((ckpts[-1] / "state.json").read_text())
    base = Path(state["config"]["model"]["path"])
    write_model_dir(ckpts[-1], state, base, {"game": GAME, "generalist": GENERALIST})
    return 0


def write_model_dir(last: Path, state: dict[str, Any], base: Path, arena: dict[str, str]) -> Path:
    """``models/textarena-loop`` anew: the base tiny model, checkpoint ``last``'s trainable weights
    and ``state`` (its model path made relative to the repository root), the loop config and
    ``arena.json`` (``arena`` plus the player); prints the size."""
    import shutil

    dest = ROOT / "models" / "textarena-loop"
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "checkpoints" / last.name).mkdir(parents=True)
    shutil.copytree(base, dest / "base")
    shutil.copy2(last / "trainable.safetensors", dest / "checkpoints" / last.name / "trainable.safetensors")
    state["config"]["model"] = {**state["config"]["model"], "path": "models/textarena-loop/base"}
    (dest / "checkpoints" / last.name / "state.json").write_text(json.dumps(state, indent=2))
    shutil.copy2(ROOT / "examples" / "textarena_loop_liars.toml", dest / "loop.toml")
    arena = {"game": arena["game"], "player": "checkpoint:run=models/textarena-loop", "generalist": arena["generalist"]}
    (dest / "arena.json").write_text(json.dumps(arena, indent=2) + "\n")
    size = sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())
    print(f"models/textarena-loop: {size / 1e6:.2f} MB from {last.name} (base {base.name})")
    return dest


def policy(args: argparse.Namespace) -> int:
    """What the shipped checkpoint (or ``--player``) does (greedy, as arena.json seats it): 30 games against random on
    deals 700000..700029, its openings and its answers to a standing bid; 10 games against the
    generalist (deals 700100..700109): how each round ended."""
    import re
    from collections import Counter

    from arena_core.players import Decision
    from arena_core.registry import make_game, make_player
    from arena_games.textarena.liars_dice import read_observation

    game = make_game(GAME)
    model = make_player(args.player, seed=0)
    print(f"player: {args.player}")
    facing: Counter[str] = Counter()
    raises: Counter[str] = Counter()
    openings: Counter[int] = Counter()
    held_none = 0
    for k in range(30):
        pos, rnd, seat = game.start(700_000 + k), make_player("random", seed=k), k % 2
        while not game.is_over(pos):
            p = game.current_player(pos)
            move = (model if p == seat else rnd).act(Decision.at(game, pos, p, k))
            action = getattr(move, "action", move)
            if p == seat:
                view = read_observation(game.observe(pos, p), 2)
                bid = re.fullmatch(r"\[Bid: (\d+), (\d)\]", action)
                if view.quantity == 0 and bid:
                    openings[int(bid.group(1))] += 1
                    held_none += view.dice.count(int(bid.group(2))) == 0
                elif view.quantity:
                    facing["call" if action == "[Call]" else "raise"] += 1
                    if action != "[Call]":
                        raises[action] += 1
            pos = game.act(pos, p, action)
    print(f"openings by quantity {dict(openings)}; naming a face it did not hold: {held_none}")
    print(f"facing a bid: {dict(facing)}; raises: {raises.most_common(5)}")
    # against the generalist: how each round ends (who called whose bid, and was the bid true)
    search = make_player(GENERALIST, seed=0)
    ends: Counter[str] = Counter()
    quantities: Counter[int] = Counter()
    for k in range(10):
        pos, seat = game.start(700_100 + k), k % 2
        while not game.is_over(pos):
            p = game.current_player(pos)
            move = (model if p == seat else search).act(Decision.at(game, pos, p, k))
            action = getattr(move, "action", move)
            if action == "[Call]":
                gs = game._live_at(pos.state, take=False).env.state.game_state  # noqa: SLF001 - reads the engine
                bid = gs["current_bid"]
                true = sum(d.count(bid["face_value"]) for d in gs["dice_rolls"].values()) >= bid["quantity"]
                caller = "model" if p == seat else "search"
                ends[f"{caller} called a {'true' if true else 'false'} bid"] += 1
                if caller == "model":
                    quantities[int(bid["quantity"])] += 1
            pos = game.act(pos, p, action)
    print(f"10 games against {GENERALIST} (deals 700100..700109), rounds by how they ended: {dict(ends)}")
    print(f"quantity of the generalist's bids the model called: {dict(sorted(quantities.items()))}")
    return 0


def collect(args: argparse.Namespace) -> int:
    """Copy a finished loop run's report and each seed's training metrics into the bench results
    (``loop-seedN/``), where ``report`` reads them."""
    import shutil

    run = Path(args.run)
    data = json.loads((run / "report.json").read_text())
    for r in data["seeds"]:
        dest = Path(args.out) / f"loop-seed{r['seed']}"
        dest.mkdir(parents=True, exist_ok=True)
        one = {**data, "seeds": [r]}
        # the tiny model's cache path written as ~/.cache: no machine path in the results
        (dest / "report.json").write_text(json.dumps(one, indent=2).replace(str(Path.home()), "~"))
        shutil.copy2(run / f"seed{r['seed']}" / "train" / "metrics.jsonl", dest / "metrics.jsonl")
        print(f"{dest}: seed {r['seed']}")
    return 0


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def table(out: Path, names: dict[str, tuple[str, str, int]], sub: str) -> str:
    lines = [
        "| pairing | A | B | deals x seatings | A's win rate | Wilson 95% | deal-clustered 95% | wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        path = out / sub / f"{name}.json"
        if not path.exists():
            lines.append(f"| {name} | not run | | | | | | |")
            continue
        r = json.loads(path.read_text())
        s = summary(r)
        lines.append(
            f"| {name} | `{r['a']}` | `{r['b']}` | {r['deals']} x 2 (seeds {r['first_seed']}..{r['first_seed'] + r['deals'] - 1}) "
            f"| {_pct(s['win_rate'])} | [{_pct(s['wilson'][0])}, {_pct(s['wilson'][1])}] "
            f"| [{_pct(s['clustered'][0])}, {_pct(s['clustered'][1])}] | {r['wall_s']} |"
        )
    return "\n".join(lines) + "\n"


NOTES_CHOICE = """**Choice: `textarena/LiarsDice-v0` at two players (5 dice each).** A clean win condition (the
last player with dice wins: +1, the other -1), short games (random legal play: 28.9 decisions a game on
average, at most 39, in 100 games, seeds 0..99), hidden information with chance (each player sees only its own dice), and room for learned
heuristics that no single rule captures: how likely a bid is given one's own dice, how high to
open, when to call and when to bluff. Not chosen: the perfect-information titles (tic-tac-toe,
Connect Four, Nim, ...: search solves them or the issue rules them out), KuhnPoker-v0 (degenerate:
bets never reach the pot), IndianPoker-v0 (an upstream dead end: a broke player has no legal
move), Poker-v0 (10 hands, about 40 decisions a game, seven bet sizes), the free-text negotiation
titles (no exact legal set for constrained decoding).

**Rules as played** (`python bench/textarena_loop_liars.py rules`; TextArena 0.7.4 through the adapter,
the three quirks on raw `LiarsDice-v0-raw` envs):

- Calls are decided right: in 100 random games (seeds 0..99), 780 calls, every announced count equal to
  the count of that face over all dice in play (no wild ones) and the loser as the stated rule says.
- After a call the last bidder opens the next round, whoever lost (680 of 680 rounds; in 668 of them the
  bidder had also lost). Not the usual rule (the loser opens) but consistent and harmless.
- Upstream bug: a quantity-0 bid (`[Bid: 0, 3]`) is accepted, after which `[Call]` is refused ("Call made
  with no prior bid"): an opening nobody can challenge. The adapter's legal set starts at quantity 1, so
  it cannot happen through the adapter.
- Upstream mismatch: the prompt says a new bid needs "a higher quantity or higher face (or both)", the
  code refuses lowering either number (`[Bid: 3, 2]` after `[Bid: 2, 6]`: "New face value 2 is lower than
  current 6"). The game as played is the monotone variant; the adapter's legal set follows the code, so a
  constrained player never tries such a bid, but an LLM reading only the prompt would.
- Bids above the dice in play are accepted upstream (`[Bid: 50, 6]` with 10 dice); the adapter offers
  quantities up to the dice in play (a higher bid loses to any call).

**The sampler** (`arena_games.textarena.liars_dice`, new; wired through `titles.BASES`, and
`adapter.make_title_class` now exempts the two hidden-information checks only for titles without a
sampler): a world keeps every public fact and the seat's own dice, redraws the other seats' current
dice uniformly (their number is public; nothing a seat sees depends on them until a call) and reseeds
TextArena's generator, so that later rounds are fresh draws and a playout never reads the real
future. A world is data (the adapter's state plus patches: after how many moves, every seat's dice,
the new seed), replayed after the live-env cache drops it, pickled and serialised with its patches.
`arena check textarena/LiarsDice-v0`: 21 of 21 checks pass at 2 and at 3 players (20 examples each),
`no_private_leak` and `hidden_state_sampling` included (they ran; no longer exempt).
"""


def _loop_seeds(out: Path) -> list[dict[str, Any]]:
    """Every loop seed's result, from the loop reports copied by ``collect`` (``loop*/report.json``)."""
    seeds = {
        r["seed"]: r for path in sorted(out.glob("loop*/report.json")) for r in json.loads(path.read_text())["seeds"]
    }
    return [seeds[k] for k in sorted(seeds)]


def _loop_table(out: Path) -> str:
    """The loop's before/after and ratings tables, rendered by the loop's own report
    (:mod:`arena_train.loop_report`), over every seed."""
    from arena_train.loop_report import before_after_table, ratings_table

    seeds = _loop_seeds(out)
    if not seeds:
        return "Loop: not run.\n"
    lines = [*before_after_table(seeds), ""]
    for r in seeds:
        f = r["faults"]
        lines.append(
            f"Seed {r['seed']}: {r['steps']} GRPO steps in {r['train_s']:.0f} s; model decisions/faults before "
            f"{f['before']['decisions']}/{f['before']['faults']}, after {f['after']['decisions']}/{f['after']['faults']}."
        )
    ratings = ratings_table(seeds)
    if ratings:
        rated = [r for r in seeds if r.get("ratings")]
        legend = "; ".join(f"`{n}`: {who}" for n, who in rated[0]["entrants"].items())
        lines += [
            "",
            f"Ratings among all entrants (seeds {', '.join(str(r['seed']) for r in rated)}; seeds run before the loop "
            "rated its tournaments have none): the tournament's own Plackett-Luce fit, Elo scale, "
            f"{rated[0]['ratings']['after']['method']}. The re-tournament seats the stock and the trained model together, "
            f"so its ratings put every entrant on one scale. Entrants: {legend}.",
            "",
            *ratings,
            "",
            "The trained model against the stock one in the re-tournament: "
            + "; ".join(
                f"seed {r['seed']} {_pct(r['rl_vs_stock']['win_rate'])}% of {r['rl_vs_stock']['games']} "
                f"(deal-clustered [{_pct(r['rl_vs_stock']['deal_clustered'][0])}, {_pct(r['rl_vs_stock']['deal_clustered'][1])}])"
                for r in rated
            )
            + ".",
        ]
    return "\n".join(lines) + "\n"


def _curve(out: Path) -> str:
    """Each seed's training curve: the trainer's own evaluation against ``random`` (Wilson 95%)
    and the policy's entropy over the menu."""
    from arena_core.stats import wilson_interval

    lines = []
    for path in sorted(out.glob("loop*/metrics.jsonl")):
        seed = json.loads((path.parent / "report.json").read_text())["seeds"][0]["seed"]
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        parts = []
        for r in rows:
            if "eval_win_rate" in r and r["step"] > 0:
                n = 2 * int(r["eval_deals"])
                lo, hi = wilson_interval(r["eval_win_rate"] * n, n)
                parts.append(f"step {r['step']}: {_pct(r['eval_win_rate'])}% [{_pct(lo)}, {_pct(hi)}]")
        ent = [f"{r['step']}: {r['entropy']:.2f}" for r in rows if "entropy" in r and r["step"] in (1, 4, 8, 16, 24)]
        lines.append(f"- seed {seed}: " + "; ".join(parts) + "; entropy at steps " + ", ".join(ent) + ".")
    if not lines:
        return ""
    return (
        "Training curves (the trainer's own evaluation against `random`, 16 deals x 2 seats, Wilson 95%; "
        "policy entropy over the menu in nats):\n\n" + "\n".join(lines) + "\n"
    )


#: held-out pairings of each loop seed's final checkpoint against the generalist (seed 0: the shipped one)
HELD_OUT = {
    0: "trained_vs_generalist",
    1: "seed1_vs_generalist",
    2: "seed2_vs_generalist",
    3: "seed3_vs_generalist",
    4: "seed4_vs_generalist",
}


def headline(out: Path) -> tuple[str, dict[str, Any] | None]:
    """Every loop seed's held-out win rate against the generalist, and their mean over seeds with an
    interval across seeds (the seed is the unit: does the recipe, not one run, reach 50%)."""
    from arena_core.stats import cluster_mean, paired_t

    lines = [
        "| loop seed | final checkpoint vs the generalist, held out | games | Wilson 95% | deal-clustered 95% |",
        "|---|---|---|---|---|",
    ]
    rates = []
    for seed, name in HELD_OUT.items():
        path = out / "eval" / f"{name}.json"
        if not path.exists():
            continue
        s = summary(json.loads(path.read_text()))
        rates.append(s["win_rate"])
        lines.append(
            f"| {seed}{' (shipped)' if seed == 0 else ''} | {_pct(s['win_rate'])} | {s['games']} "
            f"| [{_pct(s['wilson'][0])}, {_pct(s['wilson'][1])}] | [{_pct(s['clustered'][0])}, {_pct(s['clustered'][1])}] |"
        )
    if len(rates) < 2:
        return "\n".join(lines) + "\n", None
    # the seed is the unit: a one-sample t interval across seeds, and the bounded small-sample
    # interval of arena_core.stats.cluster_mean with the seed as the cluster (it also holds the
    # Wilson interval of the seeds' rates taken as independent observations in [0, 1])
    mean, t_low, t_high, t_p = paired_t([r - 0.5 for r in rates])
    cm = cluster_mean(rates, [1.0] * len(rates), bounds=(0.0, 1.0), null=0.5)
    over = {
        "seeds": len(rates),
        "mean": 0.5 + mean,
        "t": [0.5 + t_low, 0.5 + t_high],
        "p_t_vs_half": t_p,
        "bounded": [cm.low, cm.high],
        "above_half": sum(r > 0.5 for r in rates),
    }
    lines += [
        "",
        f"Over the {len(rates)} seeds (each seed's held-out rate one observation): mean **{_pct(0.5 + mean)}%**, "
        f"95% t interval across seeds [{_pct(0.5 + t_low)}, {_pct(0.5 + t_high)}] (p against 50%: {t_p:.2f}); "
        f"the bounded small-sample interval (`cluster_mean`, the seed as the cluster) [{_pct(cm.low)}, {_pct(cm.high)}]; "
        f"{over['above_half']} of {len(rates)} seeds above 50%.",
    ]
    return "\n".join(lines) + "\n", over


def section(out: Path) -> str:
    from _report import machine

    return (
        "## TextArena loop on a strategy title (issue 32)\n\n"
        "*Superseded by issue 42: `models/textarena-loop` now holds the distilled Liar's dice student and `examples/textarena_loop_liars.toml` is its recipe (section \"Liar's dice: a generalist worth beating and a numeric specialist\"). This section records the issue-32 GRPO checkpoint and its loop config, kept at `bench/results/textarena-liars/loop/config.toml`.*\n\n"
        f"`python bench/textarena_loop_liars.py rules | tune | eval | policy | report`, the loop "
        "`python -m arena_train.loop examples/textarena_loop_liars.toml`, `ship`; "
        f"{machine()}, 2 cores shared with three other jobs (one long run at a time).\n\n"
        + NOTES_CHOICE
        + "\n**The zero-shot generalist**, fixed before any training: the generic `search` player (no Liar's dice "
        "knowledge: determinized Monte Carlo over worlds from the sampler, random rollouts). Tuning deals 910000..910011 "
        "(named, left out of every verdict):\n\n"
        + table(out, TUNING, "tune")
        + f"\nNo budget or exploration setting resolved a difference on the tuning deals; kept `{GENERALIST}` "
        "(the larger budget, default exploration). Held-out deals 920000.. (both seatings of every deal):\n\n"
        + table(out, EVALS, "eval")
        + "\nThe `trained_*` rows are the shipped checkpoint (loop seed 0) after training (`ship`, then `eval`), "
        "`seedN_*` loop seed N's final checkpoint (greedy, as `checkpoint` seats it by default), on the same held-out "
        "deals. The stock model in `generalist_vs_stock` is the random-weight tiny model as anyone seats it "
        "(`mlx`, full transcript, constrained to the legal moves). In the loop below the stock model is the same "
        "weights on the compact view (own dice, dice in play, standing bid; one character per move), the GRPO "
        "step-0 checkpoint.\n\n"
        "**Held out, every loop seed** (the headline; the same config for every seed, fixed before seed 0 ran; no "
        "loop seed chose a setting, the generalist's settings were chosen on the tuning deals above):\n\n"
        + headline(out)[0]
        + "\n**The loop** (`examples/textarena_loop_liars.toml`, sized to one 20-minute CPU slot; seed 0 shipped, "
        "seeds 1-4 repeats with `--seeds N --out runs/textarena-loop-liars-seedN`): no warm "
        "start; GRPO self-play against a pool of frozen snapshots of itself (never the fixed opponents), reward = "
        "the outcome (+1/-1), 24 steps x 2 deals x 2 seats x a group of 8, learning rate 1e-3, no KL; "
        "constrained decoding (no illegal move is possible). Round-robin tournaments before and after on the "
        "loop's own deals (10 x 2 seatings; the model samples at its training temperature):\n\n"
        + _loop_table(out)
        + "\n"
        + _curve(out)
        + "\n"
        + _generalist_curve(out)
    )


def report(args: argparse.Namespace) -> int:
    out = Path(args.out)
    body = section(out) + (Path(args.notes).read_text() if args.notes else "")
    if args.write:
        from _report import write_section

        write_section("textarena-loop-strategy", body)
    print(body)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    commands = (
        ("rules", rules),
        ("tune", tune),
        ("eval", evaluate),
        ("curve", curve),
        ("report", report),
        ("policy", policy),
    )
    for name, fn in commands:
        p = sub.add_parser(name)
        p.add_argument("--out", default=str(OUT))
        p.add_argument("--only", default=None, help="run only this pairing (one per CPU slot)")
        p.set_defaults(fn=fn)
    sub.choices["policy"].add_argument("--player", default=TRAINED, help="a checkpoint spec (default: the shipped one)")
    sub.choices["report"].add_argument("--write", action="store_true", help="write the section into docs/benchmarks.md")
    sub.choices["report"].add_argument("--notes", default=None, help="a file of reading notes appended to the section")
    p = sub.add_parser("collect")
    p.add_argument("--run", required=True, help="a loop output directory (holding report.json)")
    p.add_argument("--out", default=str(OUT))
    p.set_defaults(fn=collect)
    p = sub.add_parser("ship")
    p.add_argument("--run", default=str(ROOT / "runs" / "textarena-loop-liars"))
    p.add_argument("--force", action="store_true", help="overwrite models/textarena-loop (issue 42's student)")
    p.set_defaults(fn=ship)
    args = parser.parse_args(argv)
    code: int = args.fn(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
