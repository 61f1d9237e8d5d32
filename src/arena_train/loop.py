"""The local-model arena loop: a baseline tournament, self-play GRPO with a snapshot pool, the
re-tournament, and a before/after report, from one config::

One file (over 500 lines) because the loop's stages (tournaments, training, re-tournament, resume) share one config and one output directory; the report is rendered in loop_report.py.

    python -m arena_train.loop examples/textarena_loop.toml [--out DIR] [--seeds 0,1,2]

For every seed: a GRPO trainer is built (the untrained model is saved as its step-0
checkpoint), the model -- a ``checkpoint`` entrant at the training temperature, i.e. the
sampling policy GRPO optimises -- plays a round-robin tournament against the fixed opponents,
GRPO trains it against a pool of frozen snapshots of itself (no fixed opponent is in the
pool), and the trained checkpoint plays the same tournament again (same deals, same seats).
The report gives, per fixed opponent, the model's win rate before and after with a Wilson
interval (games taken as independent) and a deal-clustered interval (:func:`arena_core.stats.cluster_mean`),
and the difference after - before paired by deal (:func:`arena_core.stats.paired_bootstrap`).
Both tournaments are also rated among all their entrants by the tournament's own machinery
(:func:`arena_tournament.ratings.summarize`: Plackett-Luce ratings with deal-clustered bootstrap
intervals); the re-tournament seats the stock model (``stock``, step 0) beside the trained one
(``rl``), so its ratings put stock, RL'd, the generalist and the scripted players on one scale.

An optional frontier seat (``[tournament.frontier]``): an OpenAI-compatible player for a real
model, cached and capped, in both tournaments and never in training; without its key or
endpoint in the environment it is skipped with one line.

Resume: rerunning the same command on a partly written ``--out`` continues it. A seed with a
``result.json`` is skipped; a tournament continues through the tournament runner's own resume
(games already recorded are kept); an unfinished training resumes from its latest checkpoint
(the trainer resumes exactly; steps after that checkpoint are replayed). ``loop.json`` holds the
digest of the config (seeds and output left out, so more seeds may be added later); a directory
written by another config, or by something else, is refused with one line.

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
import hashlib
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena_core.errors import ArenaError, ConfigError
from arena_core.playerspec import PlayerSpec, PlayerSpecField
from arena_core.seeding import derive_seed
from arena_core.stats import cluster_mean, paired_bootstrap, wilson_interval

from .loop_report import plot_curves, report_markdown

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:
    from arena_core.views import Menu
    from arena_tournament.config import RatingOptions
    from arena_tournament.results import GameResult
    from arena_tournament.schedule import Entrant

    from .config import GRPOConfig
    from .views import Tokenizer

#: a game's exact analysis: named values of a policy given its ``distributions(menus)``
Analysis = Callable[[Callable[[Sequence["Menu"]], Sequence[Any]]], Mapping[str, float]]
#: where progress lines go (``print`` by default)
Log = Callable[[str], None]
#: per deal seed: (wins, games) of one entrant against another
HeadToHead = dict[int, tuple[float, int]]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LoopFrontier(_Strict):
    """A real frontier model through the OpenAI-compatible player: evaluation only (it plays the
    tournaments, never the training), every answer cached on disk, calls capped."""

    model: str = Field(description="the model name the endpoint serves, e.g. 'gpt-4o-mini'")
    base_url: str = Field(default="https://api.openai.com/v1", description="the endpoint (when base_url_env is unset)")
    base_url_env: str | None = Field(
        default=None,
        description="an environment variable holding the endpoint; when named and unset, the seat is skipped",
    )
    api_key_env: str = Field(
        default="OPENAI_API_KEY", description="environment variable holding the key ('' sends none); unset: skipped"
    )
    max_calls: int = Field(ge=1, description="spending cap: HTTP calls per tournament (cache hits are free)")
    max_total_tokens: int | None = Field(default=None, ge=1, description="spending cap: tokens per tournament")
    cache_dir: str = Field(default="~/.cache/arena/frontier", description="on-disk response cache")
    temperature: float = Field(default=0.0, ge=0)
    max_tokens: int = Field(default=256, ge=1)
    options: dict[str, Any] = Field(default_factory=dict, description="more options of the openai player")


class LoopTournament(_Strict):
    deals: int = Field(default=200, ge=2, description="shared deals; each pair plays every deal in both seatings")
    seed: int = Field(default=18002, ge=0, description="tournament seed; a loop seed's deals derive from it")
    opponents: list[PlayerSpecField] = Field(
        min_length=1,
        description="fixed opponents: registered player specs",
    )
    model_temperature: float | str = Field(
        default="train",
        description="the checkpoint entrant's temperature: 'train' (the sampling policy) or a number (0: greedy)",
    )
    bootstrap: int = Field(default=2000, ge=100)
    frontier: LoopFrontier | None = Field(default=None, description="an OpenAI-compatible frontier seat (optional)")


class LoopServer(_Strict):
    enabled: bool = True
    deals: int = Field(default=8, ge=1, description="deals of the plumbing tournament (each opponent, both seatings)")
    max_tokens: int = Field(default=8, ge=1)
    temperature: float = Field(default=1.0, ge=0)
    startup_s: float = Field(default=120.0, gt=0)


class LoopConfig(_Strict):
    name: str = "arena-loop"
    game: str = Field(description="a registered game, e.g. 'textarena/KuhnPoker-v0'")
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1)
    output: str = "runs/arena-loop"
    tournament: LoopTournament
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
def _entrant(name: str, spec: PlayerSpec, seed: int) -> Entrant:
    from arena_tournament.schedule import Entrant

    return Entrant(name=name, player=spec.name, options=dict(spec.options), seed=seed)


def opponent_names(opponents: Sequence[PlayerSpec]) -> list[str]:
    return [f"opp{i + 1}-{o.name}" for i, o in enumerate(opponents)]


def run_tournament_games(
    name: str,
    game: str,
    entrants: list[Entrant],
    deals: int,
    seed: int,
    out: Path,
    policy: str = "default",
    ratings: RatingOptions | None = None,
    log: Log | None = None,
) -> list[GameResult]:
    """A round robin of ``entrants`` on ``deals`` shared deals (both seatings); its games. A
    results file already in ``out`` is continued (the runner's resume; a changed schedule or
    entrant is refused there)."""
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
        ratings=ratings or RatingOptions(bootstrap=0),
    )
    report = run_tournament(config, quiet=True)
    if log is not None:
        log(f"{name}: {report.played} games played, {report.already_recorded} already recorded")
    return load_results(out)[1]


#: a leaderboard row's fields kept in result.json (the full summary is the tournament's summary.json)
RATING_FIELDS = ("name", "rating", "rating_low", "rating_high", "rank", "rank_low", "rank_high", "games", "faults")


def rate_tournament(out: Path, options: RatingOptions) -> dict[str, Any]:
    """The tournament's own ratings of every entrant (:func:`arena_tournament.ratings.summarize`,
    as ``arena ratings`` computes them), written to ``out/summary.json``; the leaderboard and the
    rating differences of every pair, with their intervals."""
    from arena_tournament.ratings import summarize
    from arena_tournament.report import write_json
    from arena_tournament.results import load_results

    header, games = load_results(out)
    summary = summarize(
        header,
        games,
        resamples=options.bootstrap,
        regularization=options.regularization,
        base=options.base,
        seed=options.seed,
        min_pair_games=options.min_pair_games,
    )
    write_json(summary, out / "summary.json")
    return {
        "method": summary.method.intervals,
        "note": summary.note,
        "leaderboard": [r.model_dump(mode="json", include=set(RATING_FIELDS)) for r in summary.leaderboard],
        "pairs": [p.model_dump(mode="json") for p in summary.rating_pairs],
    }


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
    """``name``'s decisions, faults and games (``unplayed``: games its spending cap cut)."""
    decisions = sum((g.decisions[g.seats.index(name)] if g.decisions else 0) for g in games if name in g.seats)
    faults = sum(1 for g in games for f in g.faults if f.player == name)
    mine = [g for g in games if name in g.seats]
    return {
        "decisions": int(decisions),
        "faults": int(faults),
        "games": len(mine),
        "unplayed": sum(1 for g in mine if g.unplayed),
    }


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
    if len(common) < 2:  # e.g. a capped frontier seat that played too few deals in one of them
        return {"diff": math.nan, "interval": None, "deals": len(common), "resolved": False}
    a = [after[d][0] / after[d][1] for d in common]
    b = [before[d][0] / before[d][1] for d in common]
    iv = paired_bootstrap(a, b, seed=seed, resamples=resamples, bounds=(-1.0, 1.0))  # win-rate differences
    return {"diff": iv.mean, "interval": [iv.low, iv.high], "deals": iv.n, "resolved": iv.low > 0 or iv.high < 0}


def tokenizer_coverage(game_id: str, tokenizer: Tokenizer) -> dict[str, Any]:
    """How the model's tokenizer encodes the game's action strings (its action-index space, read
    through the protocol: ``action_to_str(action_from_id(i))``) and the compact view's labels."""
    from arena_core.registry import make_game
    from arena_core.views import get_view

    from .rollout import seat_to_act
    from .views import ActionTokens

    game = make_game(game_id)
    tokens = ActionTokens(tokenizer)
    strings = [game.action_to_str(game.action_from_id(i)) for i in range(game.num_actions)]
    vocab = {a: len(tokens.encode_text(a)) for a in strings}
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
#: entrant names: the model at step 0 (both tournaments) and the trained model (the re-tournament)
STOCK, RL, FRONTIER = "stock", "rl", "frontier"


def _latest_checkpoint(run_dir: Path) -> Path | None:
    from .run import checkpoint_dir

    try:
        return checkpoint_dir(run_dir)
    except ConfigError:
        return None


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()] if path.exists() else []


def run_seed(
    cfg: LoopConfig, seed: int, out: Path, *, frontier: Mapping[str, Any] | None = None, log: Log = print
) -> dict[str, Any]:
    """One seed: before tournament, training, re-tournament, ``out/result.json``. A partly
    written ``out`` is continued: each tournament through the runner's resume, the training from
    its latest checkpoint (a training that never saved one starts again, cleanly)."""
    from arena_tournament.config import RatingOptions

    from . import grpo
    from .run import RunDir
    from .trainer import Parts

    out.mkdir(parents=True, exist_ok=True)
    gcfg = grpo_config(cfg, seed)
    run_dir = out / "train"
    analysis = resolve_analysis(cfg.analysis) if cfg.analysis else None
    exact_path, train_path = out / "exact.jsonl", out / "train.json"
    trainer: grpo.GRPOSession | None = None
    latest = _latest_checkpoint(run_dir)
    if latest is None:  # a fresh seed (or a training killed before its step-0 checkpoint)
        if run_dir.exists():
            shutil.rmtree(run_dir)
        exact_path.unlink(missing_ok=True)
        run = RunDir.claim(run_dir)
        trainer = grpo.start(gcfg, run, Parts())
        grpo.save_checkpoint(run, trainer)  # step 0: the untrained model, the baseline entrant
    elif not train_path.exists():
        log(f"seed {seed}: resuming the training from {latest.name}")
        run = RunDir.claim(run_dir, resume=latest)
        trainer = grpo.start(gcfg.model_copy(update={"resume_from": str(latest)}), run, Parts())
    curve = [r for r in _read_jsonl(exact_path) if trainer is None or r["step"] <= trainer.state.step]
    if trainer is not None:  # rows past a resumed checkpoint are replayed: drop them once, then append
        exact_path.write_text("".join(json.dumps(r) + "\n" for r in curve))

    def exact_row(step: int) -> None:
        if analysis is not None and trainer is not None:
            curve.append({"step": step, **analysis(trainer.policy().distributions)})
            with exact_path.open("a") as fh:
                fh.write(json.dumps(curve[-1]) + "\n")

    if trainer is not None and (not curve or curve[-1]["step"] != trainer.state.step):
        exact_row(trainer.state.step)

    def progress(step: int, row: Mapping[str, Any]) -> None:
        exact_row(step)
        if step % 10 == 0 or step == gcfg.steps:
            log(
                f"seed {seed} step {step}/{gcfg.steps} reward {row['reward_mean']:+.3f}"
                + (f" exact {curve[-1]}" if curve else "")
            )

    t_seed = derive_seed(cfg.tournament.seed, "loop", seed)
    ratings = RatingOptions(bootstrap=cfg.tournament.bootstrap, seed=derive_seed(t_seed, "ratings") % 2**31)
    opp_names = opponent_names(cfg.tournament.opponents)
    opponents = [
        _entrant(n, o, derive_seed(t_seed, "opponent", i))
        for i, (n, o) in enumerate(zip(opp_names, cfg.tournament.opponents))
    ]
    opp_specs = [str(o) for o in cfg.tournament.opponents]
    if frontier is not None and cfg.tournament.frontier is not None:
        opponents.append(_entrant(FRONTIER, PlayerSpec("openai", dict(frontier)), derive_seed(t_seed, "frontier")))
        opp_names.append(FRONTIER)
        opp_specs.append(frontier_spec(cfg.tournament.frontier))

    def model_entrant(name: str, step: int) -> Entrant:
        options: dict[str, Any] = {"run": str(run_dir), "temperature": cfg.tournament.model_temperature, "step": step}
        return _entrant(name, PlayerSpec("checkpoint", options), derive_seed(t_seed, "model"))

    def tournament(phase: str, entrants: list[Entrant]) -> list[GameResult]:
        t0 = time.perf_counter()
        games = run_tournament_games(
            f"{cfg.name}-{phase}",
            cfg.game,
            entrants,
            cfg.tournament.deals,
            t_seed,
            out / phase,
            ratings=ratings,
            log=log,
        )
        log(f"seed {seed}: {phase} tournament, {len(games)} games, {time.perf_counter() - t0:.0f} s")
        return games

    before = tournament("before", [model_entrant(STOCK, 0), *opponents])
    if trainer is not None:
        if (out / "after").exists():  # games of a model that is trained again: they restart with it
            log(f"seed {seed}: the re-tournament restarts after the training")
            shutil.rmtree(out / "after")
        t0 = time.perf_counter()
        summary = grpo.run_steps(run, trainer, Parts(progress=progress))
        trained = {
            "run_id": summary.run_id,
            "train_status": summary.status,
            "train_s": round(time.perf_counter() - t0, 1),
            "resumed_from_step": int(latest.name.split("_")[-1]) if latest is not None else None,
        }
        train_path.write_text(json.dumps(trained, indent=2))
        log(f"seed {seed}: {gcfg.steps} GRPO steps in {trained['train_s']:.0f} s")
    trained = json.loads(train_path.read_text())
    # the re-tournament seats both models: one rating scale for stock, RL'd and every opponent
    after = tournament("after", [model_entrant(RL, gcfg.steps), model_entrant(STOCK, 0), *opponents])
    result: dict[str, Any] = {
        "seed": seed,
        "run_dir": str(run_dir),
        **trained,
        "steps": gcfg.steps,
        "tournament_seed": t_seed,
        "entrants": {
            STOCK: "the model at step 0",
            RL: f"the model at step {gcfg.steps}",
            **{n: f"`{spec}`" for n, spec in zip(opp_names, opp_specs)},
        },
        "opponents": {},
        "faults": {"before": faults_of(before, STOCK), "after": faults_of(after, RL)},
        "rl_vs_stock": win_rate(head_to_head(after, RL, STOCK)),
        "ratings": {
            "before": rate_tournament(out / "before", ratings),
            "after": rate_tournament(out / "after", ratings),
        },
    }
    if frontier is not None:
        result["frontier"] = {"before": faults_of(before, FRONTIER), "after": faults_of(after, FRONTIER)}
    for i, (name, spec) in enumerate(zip(opp_names, opp_specs)):
        hb, ha = head_to_head(before, STOCK, name), head_to_head(after, RL, name)
        result["opponents"][spec] = {
            "before": win_rate(hb),
            "after": win_rate(ha),
            "after_minus_before": difference(ha, hb, derive_seed(t_seed, "bootstrap", i), cfg.tournament.bootstrap),
        }
    if curve:
        result["exact"] = {"before": curve[0], "after": curve[-1], "curve": curve}
    (out / "result.json").write_text(json.dumps(result, indent=2))
    return result


def frontier_spec(frontier: LoopFrontier) -> str:
    """The frontier seat's label in the report (its opponent key)."""
    return f"frontier:{frontier.model}"


def frontier_options(cfg: LoopConfig, *, log: Log = print) -> dict[str, Any] | None:
    """The frontier seat's ``openai`` player options, or None: not configured, or its endpoint
    variable or key is not set here (then one line says which, and the loop goes on without it)."""
    f = cfg.tournament.frontier
    if f is None:
        return None
    missing = [v for v in (f.base_url_env, f.api_key_env) if v and not os.environ.get(v)]
    if missing:
        log(
            f"frontier seat {f.model!r} skipped: {' and '.join(missing)} not set "
            "(set it to seat the model, or remove [tournament.frontier])"
        )
        return None
    options = {
        **f.options,
        "base_url": os.environ[f.base_url_env] if f.base_url_env else f.base_url,
        "model": f.model,
        "api_key_env": f.api_key_env,
        "temperature": f.temperature,
        "max_tokens": f.max_tokens,
        "max_calls": f.max_calls,
        "max_total_tokens": f.max_total_tokens,
        "cache_dir": str(Path(f.cache_dir).expanduser()),
    }
    return {k: v for k, v in options.items() if v is not None}


LOOP_FILE = "loop.json"


def loop_identity(cfg: LoopConfig, frontier: Mapping[str, Any] | None) -> dict[str, Any]:
    """What a loop directory's results depend on: the config without its seeds and output (more
    seeds may join later), the pinned model by name, and the frontier seat as seated."""
    data = cfg.model_dump(mode="json", exclude={"seeds", "output"})
    model = dict(data["train"].get("model", {}))
    if "path" in model:
        model["path"] = Path(model["path"]).name
    data["train"] = {**data["train"], "model": model}
    data["tournament"]["frontier"] = None if frontier is None else {k: frontier[k] for k in ("base_url", "model")}
    return data


def _digest(data: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _changed(old: Any, new: Any, prefix: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        return [c for k in sorted(set(old) | set(new)) for c in _changed(old.get(k), new.get(k), f"{prefix}{k}.")]
    return [] if old == new else [prefix.rstrip(".")]


def claim_loop_dir(out: Path, identity: Mapping[str, Any]) -> bool:
    """Start ``out`` (empty or new) or continue it (its ``loop.json`` has this config's digest);
    True when continuing. Anything else is refused with one line naming the fix."""
    marker = out / LOOP_FILE
    if out.exists() and any(out.iterdir()):
        if not marker.exists():
            raise ConfigError(f"loop output {str(out)!r} is not empty and holds no {LOOP_FILE}; pass a new --out")
        stored = json.loads(marker.read_text())
        if stored.get("digest") != _digest(identity):
            changed = _changed(stored.get("identity", {}), dict(identity)) or ["(unknown)"]
            raise ConfigError(
                f"loop output {str(out)!r} was started by another config (it differs in {', '.join(changed[:5])}); "
                "rerun with the config that started it, or pass a new --out"
            )
        return True
    out.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"digest": _digest(identity), "identity": identity}, indent=2))
    return False


def run_server_check(cfg: LoopConfig, out: Path, *, log: Log = print) -> dict[str, Any]:
    """The stock tiny model behind a local ``mlx_lm.server``, through the OpenAI player."""
    from arena_players.mlx_server import mlx_server

    if (out / "result.json").exists():
        log(f"server check: done already ({out / 'result.json'})")
        done: dict[str, Any] = json.loads((out / "result.json").read_text())
        return done
    if out.exists():  # a cut check restarts: the server's port (part of the entrant) changes every start
        shutil.rmtree(out)
    t_seed = derive_seed(cfg.tournament.seed, "server")
    names = opponent_names(cfg.tournament.opponents)
    opponents = [_entrant(n, o, i) for i, (n, o) in enumerate(zip(names, cfg.tournament.opponents))]
    t0 = time.perf_counter()
    path = grpo_config(cfg, cfg.seeds[0]).model.path
    with mlx_server(None if path == "tiny" else path, startup_s=cfg.server.startup_s) as (url, model):
        options = {"base_url": url, "model": model, "api_key_env": "", "max_retries": 1}
        options.update(temperature=cfg.server.temperature, max_tokens=cfg.server.max_tokens)
        stock = _entrant("stock-server", PlayerSpec("openai", options), 0)
        # the schedule is a round robin: keep only the stock model's games in the analysis
        games = run_tournament_games(f"{cfg.name}-server", cfg.game, [stock, *opponents], cfg.server.deals, t_seed, out)
    result: dict[str, Any] = {
        "wall_s": round(time.perf_counter() - t0, 1),
        "faults": faults_of(games, "stock-server"),
        "opponents": {
            str(spec): win_rate(head_to_head(games, "stock-server", n))
            for n, spec in zip(names, cfg.tournament.opponents)
        },
    }
    (out / "result.json").write_text(json.dumps(result, indent=2))
    log(f"server check: {result['faults']} in {result['wall_s']} s")
    return result


def pin_model(cfg: LoopConfig) -> LoopConfig:
    """``model.path = "tiny"`` resolved once to its built directory, used by every seed and the
    server: the tiny model is rebuilt whenever its tokenizer corpus (game text) changes, and one
    loop must not mix two of them."""
    model = dict(cfg.train.get("model", {}))
    if model.get("path", "tiny") != "tiny":
        return cfg
    from arena_players.tiny_model import ensure_tiny_model

    model["path"] = str(ensure_tiny_model(game_ids=model.pop("tiny_games", None)))
    return cfg.model_copy(update={"train": {**cfg.train, "model": model}})


def _finished_seeds(out: Path) -> dict[int, dict[str, Any]]:
    found = {}
    for path in out.glob("seed*/result.json"):
        r = json.loads(path.read_text())
        found[int(r["seed"])] = r
    return found


def run_loop(
    cfg: LoopConfig, out: Path, *, seeds: Sequence[int] | None = None, plot: Path | None = None, log: Log = print
) -> dict[str, Any]:
    """Every seed of ``cfg`` (or ``seeds``) into ``out``; a partly written ``out`` of the same
    config is continued (finished seeds are skipped). The report covers every finished seed in
    ``out``."""
    out = Path(out)
    seeds = list(seeds if seeds is not None else cfg.seeds)
    cfg = pin_model(cfg)
    frontier = frontier_options(cfg, log=log)
    if claim_loop_dir(out, loop_identity(cfg, frontier)):
        log(f"continuing {out}")
    log(f"model: {grpo_config(cfg, seeds[0]).model.path}")
    server = run_server_check(cfg, out / "server", log=log) if cfg.server.enabled else None
    coverage = None
    for seed in seeds:
        if (out / f"seed{seed}" / "result.json").exists():
            log(f"seed {seed}: finished already, skipped")
        else:
            run_seed(cfg, seed, out / f"seed{seed}", frontier=frontier, log=log)
        if coverage is None:
            from .lm import load_lm

            path = grpo_config(cfg, seed).model.path
            coverage = {"model": Path(path).name, **tokenizer_coverage(cfg.game, load_lm(path)[1])}
        results = [r for _, r in sorted(_finished_seeds(out).items())]
        report = {"config": cfg.model_dump(mode="json"), "seeds": results, "server": server, "coverage": coverage}
        (out / "report.json").write_text(json.dumps(report, indent=2))
        (out / "report.md").write_text(report_markdown(cfg, results, server, coverage))
    if plot is not None:
        plot_curves(results, plot, f"{cfg.name}: exact values of the sampling policy during GRPO")
    return report


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
