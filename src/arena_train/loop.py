"""The local-model arena loop: a baseline tournament, self-play GRPO with a snapshot pool, the
re-tournament, and a before/after report, from one config::

One file (over 500 lines) because the loop's stages (tournament, training, re-tournament, report) share one config and one output directory.

    python -m arena_train.loop examples/textarena_loop.toml [--out DIR] [--seeds 0,1,2]

For every seed: a GRPO trainer is built (the untrained model is saved as its step-0
checkpoint), the model -- a ``checkpoint`` entrant at the training temperature, i.e. the
sampling policy GRPO optimises -- plays a round-robin tournament against the fixed opponents,
GRPO trains it against a pool of frozen snapshots of itself (no fixed opponent is in the
pool), and the trained checkpoint plays the same tournament again (same deals, same seats).
The report gives, per fixed opponent, the model's win rate before and after with a Wilson
interval (games taken as independent) and a deal-clustered interval (:func:`arena_core.stats.cluster_mean`),
and the difference after - before paired by deal (:func:`arena_core.stats.paired_bootstrap`).

Once per run, a plumbing check: the stock tiny model, served by a local ``mlx_lm.server`` and
played through the OpenAI-compatible player (free text through the game's text view), plays a
small tournament against the same opponents; its faults are counted apart (it is a
random-weight model: its games say little).

``analysis`` (optional) names a game's exact analysis, ``"package.module:function"`` taking the
policy's ``distributions(menus)`` and returning named values; it is called before training, at
every step (the training curve) and after. For ``textarena/KuhnPoker-v0`` it is
``arena_games.textarena.kuhn_v0:exact_values``: the model's exact win probability against the
equilibrium bot and the random player, and its exploitability. (The trainer package imports no
game package: the game supplies the analysis, named in the config.)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena_core.errors import ArenaError, ConfigError
from arena_core.seeding import derive_seed
from arena_core.stats import cluster_mean, paired_bootstrap, wilson_interval

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from arena_core.views import Menu
    from arena_tournament.results import GameResult
    from arena_tournament.schedule import Entrant

    from .config import GRPOConfig
    from .views import Tokenizer

KUHN_V0 = "textarena/KuhnPoker-v0"

#: a game's exact analysis: named values of a policy given its ``distributions(menus)``
Analysis = Callable[[Callable[[Sequence["Menu"]], Sequence[Any]]], Mapping[str, float]]
#: where progress lines go (``print`` by default)
Log = Callable[[str], None]
#: per deal seed: (wins, games) of one entrant against another
HeadToHead = dict[int, tuple[float, int]]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LoopTournament(_Strict):
    deals: int = Field(default=200, ge=2, description="shared deals; each pair plays every deal in both seatings")
    seed: int = Field(default=18002, ge=0, description="tournament seed; a loop seed's deals derive from it")
    opponents: list[str] = Field(
        default_factory=lambda: ["textarena_kuhn_equilibrium", "random"],
        min_length=1,
        description="fixed opponents: registered player specs",
    )
    model_temperature: float | str = Field(
        default="train",
        description="the checkpoint entrant's temperature: 'train' (the sampling policy) or a number (0: greedy)",
    )
    bootstrap: int = Field(default=2000, ge=100)


class LoopServer(_Strict):
    enabled: bool = True
    deals: int = Field(default=8, ge=1, description="deals of the plumbing tournament (each opponent, both seatings)")
    max_tokens: int = Field(default=8, ge=1)
    temperature: float = Field(default=1.0, ge=0)
    startup_s: float = Field(default=120.0, gt=0)


class LoopConfig(_Strict):
    name: str = "arena-loop"
    game: str = KUHN_V0
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1)
    output: str = "runs/arena-loop"
    tournament: LoopTournament = LoopTournament()
    server: LoopServer = LoopServer()
    analysis: str | None = Field(
        default=None, description="'package.module:function': exact values of a policy from its distributions(menus)"
    )
    train: dict[str, Any] = Field(..., description="a GRPO config (without trainer, game and seed)")


def load_config(path: str | Path) -> LoopConfig:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"loop config {str(path)!r} does not exist (see examples/textarena_loop.toml)")
    try:
        data = tomllib.loads(path.read_text()) if path.suffix == ".toml" else json.loads(path.read_text())
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML/JSON ({exc})") from None
    return parse_loop_config(data)


def parse_loop_config(data: Mapping[str, Any]) -> LoopConfig:
    try:
        cfg = LoopConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(x) for x in e['loc']) or 'config'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"invalid loop config: {problems}") from None
    for key in ("trainer", "game", "seed"):
        if key in cfg.train:
            raise ConfigError(f"loop config: [train] must not set {key!r} (the loop sets it)")
    grpo_config(cfg, cfg.seeds[0])  # validate the trainer part now, naming the field
    if cfg.analysis:
        resolve_analysis(cfg.analysis)
    return cfg


def resolve_analysis(ref: str) -> Analysis:
    """The function a ``"package.module:function"`` reference names; one clear line otherwise."""
    import importlib

    module, _, name = ref.partition(":")
    try:
        fn = getattr(importlib.import_module(module), name, None) if name else None
    except ImportError as exc:
        raise ConfigError(f"loop config: analysis {ref!r} cannot be imported ({exc})") from None
    if not callable(fn):
        raise ConfigError(f"loop config: analysis {ref!r} must name a function as 'package.module:function'")
    analysis: Analysis = fn  # imported by name: the documented signature is the contract
    return analysis


def grpo_config(cfg: LoopConfig, seed: int) -> GRPOConfig:
    from .config import GRPOConfig, parse_config

    out = parse_config(
        {"trainer": "grpo", "name": f"{cfg.name}-seed{seed}", **cfg.train, "game": cfg.game, "seed": seed}
    )
    assert isinstance(out, GRPOConfig)
    if out.self_play:
        raise ConfigError(
            "loop config: train.self_play = true leaves the snapshot pool unused; use pool.snapshot_every"
        )
    if not out.pool.snapshot_every:
        raise ConfigError("loop config: train.pool.snapshot_every must be > 0 (self-play against a snapshot pool)")
    return out


# ---------------------------------------------------------------------- tournaments
def _entrant(name: str, spec: str | Mapping[str, Any], seed: int) -> Entrant:
    from arena_core.playerspec import parse_player_spec
    from arena_tournament.schedule import Entrant

    if isinstance(spec, Mapping):
        return Entrant(name=name, player=spec["player"], options=dict(spec.get("options", {})), seed=seed)
    parsed = parse_player_spec(spec)
    return Entrant(name=name, player=parsed.name, options=dict(parsed.options), seed=seed)


def opponent_names(opponents: Sequence[str]) -> list[str]:
    from arena_core.playerspec import parse_player_spec

    return [f"opp{i + 1}-{parse_player_spec(o).name}" for i, o in enumerate(opponents)]


def run_tournament_games(
    name: str, game: str, entrants: list[Entrant], deals: int, seed: int, out: Path, policy: str = "default"
) -> list[GameResult]:
    """A round robin of ``entrants`` on ``deals`` shared deals (both seatings); its games."""
    from arena_tournament.config import RatingOptions, RunOptions, TournamentConfig
    from arena_tournament.results import load_results
    from arena_tournament.runner import run_tournament

    config = TournamentConfig(
        name=name,
        game=game,
        entrants=entrants,
        deals=deals,
        seed=seed,
        output=str(out),
        run=RunOptions(backend="sequential", fresh_players=False, policy=policy),
        ratings=RatingOptions(bootstrap=0),
    )
    run_tournament(config, quiet=True)
    return load_results(out)[1]


def head_to_head(games: Sequence[GameResult], name: str, opponent: str) -> HeadToHead:
    """Deal seed -> (wins of ``name`` against ``opponent``, games); a tie counts one half."""
    per: dict[int, list[float]] = {}
    for g in games:
        if g.returns is None or set(g.seats) != {name, opponent}:
            continue
        me, them = g.returns[g.seats.index(name)], g.returns[g.seats.index(opponent)]
        per.setdefault(int(g.seed), []).append(1.0 if me > them else (0.5 if me == them else 0.0))
    return {d: (sum(v), len(v)) for d, v in per.items()}


def faults_of(games: Sequence[GameResult], name: str) -> dict[str, int]:
    decisions = sum((g.decisions[g.seats.index(name)] if g.decisions else 0) for g in games if name in g.seats)
    faults = sum(1 for g in games for f in g.faults if f.player == name)
    return {"decisions": int(decisions), "faults": int(faults), "games": sum(1 for g in games if name in g.seats)}


def win_rate(h2h: HeadToHead) -> dict[str, Any]:
    wins = sum(w for w, _ in h2h.values())
    n = sum(c for _, c in h2h.values())
    lo, hi = wilson_interval(wins, n)
    clustered = None
    if len(h2h) >= 2:  # a deal-clustered interval needs 2 deals or more
        cm = cluster_mean([w for w, _ in h2h.values()], [c for _, c in h2h.values()], bounds=(0.0, 1.0), null=0.5)
        clustered = [cm.low, cm.high]
    return {
        "win_rate": wins / n if n else math.nan,
        "games": n,
        "deals": len(h2h),
        "wilson": [lo, hi],
        "deal_clustered": clustered,
    }


def difference(after: HeadToHead, before: HeadToHead, seed: int, resamples: int) -> dict[str, Any]:
    common = sorted(set(after) & set(before))
    a = [after[d][0] / after[d][1] for d in common]
    b = [before[d][0] / before[d][1] for d in common]
    iv = paired_bootstrap(a, b, seed=seed, resamples=resamples, bounds=(-1.0, 1.0))  # win-rate differences
    return {"diff": iv.mean, "interval": [iv.low, iv.high], "deals": iv.n, "resolved": iv.low > 0 or iv.high < 0}


def tokenizer_coverage(game_id: str, tokenizer: Tokenizer) -> dict[str, Any]:
    """How the model's tokenizer encodes the title's action strings and the compact view's labels."""
    from arena_core.registry import make_game
    from arena_core.views import get_view

    from .rollout import seat_to_act
    from .views import ActionTokens

    game = make_game(game_id)
    tokens = ActionTokens(tokenizer)
    vocab = {a: len(tokens.encode_text(a)) for a in game.title.vocabulary} if game.title is not None else {}
    roundtrip = all(tokenizer.decode(tokens.encode_text(a)) == a for a in vocab)
    out: dict[str, Any] = {"action_tokens": vocab, "roundtrip": roundtrip}
    try:
        view = get_view(game, "compact")
        pos = game.start(0)
        menu = view.menu(game, pos, seat_to_act(game, pos))
        out["compact_labels_single_token"] = all(len(tokens.encode_text(lb)) == 1 for lb in menu.labels)
        out["compact_prompt_tokens"] = len(tokens.encode_text(menu.text))
    except ConfigError:
        pass
    return out


# ---------------------------------------------------------------------- one seed
def run_seed(cfg: LoopConfig, seed: int, out: Path, *, log: Log = print) -> dict[str, Any]:
    from .grpo import GRPOTrainer

    out.mkdir(parents=True, exist_ok=True)
    gcfg = grpo_config(cfg, seed)
    run_dir = out / "train"
    curve: list[dict[str, Any]] = []
    analysis = resolve_analysis(cfg.analysis) if cfg.analysis else None
    trainer = GRPOTrainer(gcfg, run_dir, progress=None)

    def exact_row(step: int) -> None:
        if analysis is not None:
            curve.append({"step": step, **analysis(trainer.policy().distributions)})

    def progress(step: int, row: dict[str, Any]) -> None:
        exact_row(step)
        if step % 10 == 0 or step == gcfg.steps:
            log(
                f"seed {seed} step {step}/{gcfg.steps} reward {row['reward_mean']:+.3f}"
                + (f" exact {curve[-1]}" if curve else "")
            )

    trainer.progress = progress
    trainer.save_checkpoint()  # step 0: the untrained model, the baseline entrant
    exact_row(0)
    t_seed = derive_seed(cfg.tournament.seed, "loop", seed)
    opp_names = opponent_names(cfg.tournament.opponents)
    opponents = [
        _entrant(n, o, derive_seed(t_seed, "opponent", i))
        for i, (n, o) in enumerate(zip(opp_names, cfg.tournament.opponents))
    ]

    def model_entrant(step: int | None) -> Entrant:
        options: dict[str, Any] = {"run": str(run_dir), "temperature": cfg.tournament.model_temperature}
        if step is not None:
            options["step"] = step
        return _entrant("model", {"player": "checkpoint", "options": options}, derive_seed(t_seed, "model"))

    t0 = time.perf_counter()
    before = run_tournament_games(
        f"{cfg.name}-before", cfg.game, [model_entrant(0), *opponents], cfg.tournament.deals, t_seed, out / "before"
    )
    log(f"seed {seed}: baseline tournament {len(before)} games in {time.perf_counter() - t0:.0f} s")
    t0 = time.perf_counter()
    summary = trainer.run()
    train_s = time.perf_counter() - t0
    log(f"seed {seed}: {gcfg.steps} GRPO steps in {train_s:.0f} s")
    t0 = time.perf_counter()
    after = run_tournament_games(
        f"{cfg.name}-after", cfg.game, [model_entrant(None), *opponents], cfg.tournament.deals, t_seed, out / "after"
    )
    log(f"seed {seed}: re-tournament {len(after)} games in {time.perf_counter() - t0:.0f} s")
    result: dict[str, Any] = {
        "seed": seed,
        "run_dir": str(run_dir),
        "run_id": summary.run_id,
        "train_status": summary.status,
        "train_s": round(train_s, 1),
        "steps": gcfg.steps,
        "tournament_seed": t_seed,
        "opponents": {},
        "faults": {"before": faults_of(before, "model"), "after": faults_of(after, "model")},
    }
    for i, (name, spec) in enumerate(zip(opp_names, cfg.tournament.opponents)):
        hb, ha = head_to_head(before, "model", name), head_to_head(after, "model", name)
        result["opponents"][spec] = {
            "before": win_rate(hb),
            "after": win_rate(ha),
            "after_minus_before": difference(ha, hb, derive_seed(t_seed, "bootstrap", i), cfg.tournament.bootstrap),
        }
    if curve:
        result["exact"] = {"before": curve[0], "after": curve[-1], "curve": curve}
    (out / "result.json").write_text(json.dumps(result, indent=2))
    return result


def run_server_check(cfg: LoopConfig, out: Path, *, log: Log = print) -> dict[str, Any]:
    """The stock tiny model behind a local ``mlx_lm.server``, through the OpenAI player."""
    from arena_players.mlx_server import mlx_server

    t_seed = derive_seed(cfg.tournament.seed, "server")
    names = opponent_names(cfg.tournament.opponents)
    opponents = [_entrant(n, o, i) for i, (n, o) in enumerate(zip(names, cfg.tournament.opponents))]
    t0 = time.perf_counter()
    path = grpo_config(cfg, cfg.seeds[0]).model.path
    with mlx_server(None if path == "tiny" else path, startup_s=cfg.server.startup_s) as (url, model):
        stock = _entrant(
            "stock-server",
            {
                "player": "openai",
                "options": {
                    "base_url": url,
                    "model": model,
                    "api_key_env": "",
                    "temperature": cfg.server.temperature,
                    "max_tokens": cfg.server.max_tokens,
                    "max_retries": 1,
                },
            },
            0,
        )
        # the schedule is a round robin: keep only the stock model's games in the analysis
        games = run_tournament_games(f"{cfg.name}-server", cfg.game, [stock, *opponents], cfg.server.deals, t_seed, out)
    result: dict[str, Any] = {
        "wall_s": round(time.perf_counter() - t0, 1),
        "faults": faults_of(games, "stock-server"),
        "opponents": {
            spec: win_rate(head_to_head(games, "stock-server", n)) for n, spec in zip(names, cfg.tournament.opponents)
        },
    }
    (out / "result.json").write_text(json.dumps(result, indent=2))
    log(f"server check: {result['faults']} in {result['wall_s']} s")
    return result


# ---------------------------------------------------------------------- report
def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _iv(iv: Sequence[float] | None, scale: float = 100.0) -> str:
    if iv is None:
        return "n/a"
    return f"[{scale * iv[0]:.1f}, {scale * iv[1]:.1f}]"


def report_markdown(
    cfg: LoopConfig,
    seeds: list[dict[str, Any]],
    server: dict[str, Any] | None,
    coverage: dict[str, Any] | None,
) -> str:
    lines = [
        f"Loop `{cfg.name}` on `{cfg.game}`: {len(seeds)} seed(s); tournaments of {cfg.tournament.deals} deals x 2 seatings "
        f"per pair; the model plays at temperature {cfg.tournament.model_temperature!r}. Win rates in %, 95% intervals: "
        "Wilson (games independent) and deal-clustered; the difference after - before is paired by deal (bootstrap).",
        "",
        "| seed | opponent | before | Wilson | clustered | after | Wilson | clustered | after - before | resolved |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in seeds:
        for spec, o in r["opponents"].items():
            b, a, d = o["before"], o["after"], o["after_minus_before"]
            lines.append(
                f"| {r['seed']} | {spec} | {_pct(b['win_rate'])} | {_iv(b['wilson'])} | {_iv(b['deal_clustered'])} "
                f"| {_pct(a['win_rate'])} | {_iv(a['wilson'])} | {_iv(a['deal_clustered'])} "
                f"| {100 * d['diff']:+.1f} {_iv(d['interval'])} | {'yes' if d['resolved'] else 'no'} |"
            )
    exact = [r for r in seeds if r.get("exact")]
    if exact:
        keys = [k for k in exact[0]["exact"]["before"] if k != "step"]
        lines += [
            "",
            f"Exact values of the model's sampling policy (`{cfg.analysis}`; no games), before -> after:",
            "",
            "| seed | " + " | ".join(keys) + " |",
            "|---|" + "---|" * len(keys),
        ]
        for r in exact:
            b, a = r["exact"]["before"], r["exact"]["after"]
            lines.append(f"| {r['seed']} | " + " | ".join(f"{b[k]:.4f} -> {a[k]:.4f}" for k in keys) + " |")
    lines += [
        "",
        "Faults of the model (decisions / faults): "
        + "; ".join(
            f"seed {r['seed']}: before {r['faults']['before']['decisions']}/{r['faults']['before']['faults']}, "
            f"after {r['faults']['after']['decisions']}/{r['faults']['after']['faults']}"
            for r in seeds
        ),
    ]
    if server is not None:
        f = server["faults"]
        rates = ", ".join(f"{spec} {_pct(o['win_rate'])}% of {o['games']}" for spec, o in server["opponents"].items())
        lines += [
            "",
            f"Plumbing check (stock tiny model via mlx_lm.server + openai player, counted apart): {f['games']} games, "
            f"{f['decisions']} decisions, {f['faults']} faults; win rates {rates}; {server['wall_s']} s.",
        ]
    if coverage is not None:
        lines += ["", f"Tokenizer coverage: {json.dumps(coverage)}"]
    return "\n".join(lines) + "\n"


def plot_curves(seeds: list[dict[str, Any]], path: Path, title: str) -> Path | None:
    curves = [(r["seed"], r["exact"]["curve"]) for r in seeds if r.get("exact")]
    if not curves:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [k for k in curves[0][1][0] if k != "step"]
    fig, axes = plt.subplots(1, len(keys), figsize=(4.3 * len(keys), 3.6), squeeze=False)
    for seed, curve in curves:
        steps = [c["step"] for c in curve]
        for ax, key in zip(axes[0], keys):
            ax.plot(steps, [c[key] for c in curve], label=f"seed {seed}")
    for ax, key in zip(axes[0], keys):
        ax.set_title(key, fontsize=9)
        ax.set_xlabel("GRPO step")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def pin_model(cfg: LoopConfig) -> LoopConfig:
    """``model.path = "tiny"`` resolved once to its built directory, used by every seed and the
    server: the tiny model is rebuilt whenever its tokenizer corpus (game text) changes, and one
    loop must not mix two of them."""
    from .lm import TINY_GAMES

    model = dict(cfg.train.get("model", {}))
    if model.get("path", "tiny") != "tiny":
        return cfg
    from arena_players.tiny_model import ensure_tiny_model

    model["path"] = str(ensure_tiny_model(game_ids=TINY_GAMES))
    return cfg.model_copy(update={"train": {**cfg.train, "model": model}})


def run_loop(
    cfg: LoopConfig, out: Path, *, seeds: Sequence[int] | None = None, plot: Path | None = None, log: Log = print
) -> dict[str, Any]:
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise ConfigError(f"loop output {str(out)!r} is not empty; pass a new --out (runs never mix)")
    out.mkdir(parents=True, exist_ok=True)
    seeds = list(seeds if seeds is not None else cfg.seeds)
    cfg = pin_model(cfg)
    log(f"model: {grpo_config(cfg, seeds[0]).model.path}")
    server = run_server_check(cfg, out / "server", log=log) if cfg.server.enabled else None
    coverage = None
    results = []
    for seed in seeds:
        results.append(run_seed(cfg, seed, out / f"seed{seed}", log=log))
        if coverage is None:
            from .lm import load_lm

            path = grpo_config(cfg, seed).model.path
            coverage = {"model": Path(path).name, **tokenizer_coverage(cfg.game, load_lm(path)[1])}
        report = {"config": cfg.model_dump(mode="json"), "seeds": results, "server": server, "coverage": coverage}
        (out / "report.json").write_text(json.dumps(report, indent=2))
        (out / "report.md").write_text(report_markdown(cfg, results, server, coverage))
    if plot is not None:
        plot_curves(results, plot, f"{cfg.name}: exact values of the sampling policy during GRPO")
    return {"config": cfg.model_dump(mode="json"), "seeds": results, "server": server, "coverage": coverage}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m arena_train.loop", description=__doc__.split("\n\n")[0])
    parser.add_argument("config", help="a loop config (.toml), e.g. examples/textarena_loop.toml")
    parser.add_argument("--out", default=None, help="output directory (default: the config's output)")
    parser.add_argument("--seeds", default=None, help="comma-separated seeds (default: the config's)")
    parser.add_argument("--plot", default=None, help="write the training curves here (png)")
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config)
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
        report = run_loop(cfg, Path(args.out or cfg.output), seeds=seeds, plot=Path(args.plot) if args.plot else None)
    except (ArenaError, ValueError) as exc:
        print(f"arena loop: {exc}", file=sys.stderr)
        return 2
    print(report_markdown(cfg, report["seeds"], report["server"], report["coverage"]))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
