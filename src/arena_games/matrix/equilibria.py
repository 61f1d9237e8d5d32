"""Equilibria and reference points of the archetype games, computed once and cached.

One file (over 500 lines) because the exact solvers and their checks share one representation of a payoff table.

- Extreme Nash equilibria from pygambit's ``enummixed_solve`` (every profile verified by
  regret <= 1e-9, then deduplicated at 1e-7), shipped for every (archetype, k) as package data
  (``data/equilibria.json``) with a checksum manifest (``data/equilibria.sha256.json``: the
  file's SHA-256 and each cell's count and SHA-256). A shipped cell is used only when its
  checksum and count match and every profile passes the regret check; a damaged or missing
  cell is recomputed where pygambit (the ``solver`` extra) is installed, otherwise refused with
  one line naming the extra. Recomputed cells are cached in memory and on disk (the disk entry
  is checked against the manifest's count too, so a truncated file is never used).
- Symmetric equilibria (the column player mirrors the row player, see ``payoffs``) by support
  enumeration over symmetric profiles, merged with the symmetric profiles gambit returns.
- Reference points: worst/best joint cell, best/worst/mean over extreme equilibria, the
  symmetric equilibria, uniform play, the symmetric-play ceiling, and the pre-registered Nash
  baseline with the alternatives as a sensitivity check.

The metric is welfare (sum of payoffs) except for zero-sum hide-and-seek, whose welfare is
always 0: there the metric is the matcher's (row player's) payoff.

(One file: the equilibria, where they come from and the reference points built on them.)
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from arena_core.errors import ConfigError

from .payoffs import ARCHETYPE_NAMES, ARCHETYPES, K_VALUES, PayoffMatrices, check_archetype, payoff_matrices

REGRET_TOL = 1e-9
DEDUPE_TOL = 1e-7
#: bump when the archetype definitions or the cache format change
CACHE_VERSION = 1
CACHE_ENV = "ARENA_MATRIX_CACHE"


SOLVER_EXTRA = "turn-arena-games[solver]"
DATA_DIR = Path(__file__).parent / "data"
TABLE_PATH = DATA_DIR / "equilibria.json"
MANIFEST_PATH = DATA_DIR / "equilibria.sha256.json"
TABLE_FORMAT = "arena.matrix-equilibria/1"


class SolverUnavailableError(ConfigError, ImportError):
    """pygambit is not installed (and the shipped table cannot stand in)."""


# ---------------------------------------------------------------------------- profiles
def regret(pm: PayoffMatrices, x: np.ndarray, y: np.ndarray) -> float:
    """The larger of the two players' gains from a best deviation against profile (x, y)."""
    row = float(np.max(pm.A @ y) - x @ pm.A @ y)
    col = float(np.max(x @ pm.B) - x @ pm.B @ y)
    return max(row, col)


def _dedupe(profiles: list[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Keep the first of every group of profiles equal within DEDUPE_TOL (max-abs distance)."""
    if not profiles:
        return []
    stacked = np.array([np.concatenate([x, y]) for x, y in profiles])
    kept = np.empty_like(stacked)
    kept_rows: list[int] = []
    for n, row in enumerate(stacked):
        m = len(kept_rows)
        if m and np.abs(kept[:m] - row).max(axis=1).min() <= DEDUPE_TOL:
            continue
        kept[m] = row
        kept_rows.append(n)
    return [profiles[n] for n in kept_rows]


def _clean(p: np.ndarray) -> np.ndarray:
    """Clip solver noise below the dedupe tolerance to zero and renormalise."""
    p = np.where(np.abs(p) < 1e-12, 0.0, p)
    p = np.clip(p, 0.0, None)
    total: np.ndarray = p / p.sum()
    return total


@dataclass(frozen=True)
class EquilibriumSet:
    """The verified, deduplicated extreme equilibria of one (archetype, k)."""

    archetype: str
    k: int
    row: np.ndarray  # (n, k) row strategies
    col: np.ndarray  # (n, k) column strategies
    rejected: int = 0  # solver profiles dropped for regret > REGRET_TOL
    solver: str = "pygambit.enummixed_solve(rational=False)"

    def __len__(self) -> int:
        return int(self.row.shape[0])

    def profiles(self) -> list[tuple[np.ndarray, np.ndarray]]:
        return list(zip(self.row, self.col))

    def payoffs(self) -> np.ndarray:
        """(n, 2) expected payoffs of row and column player."""
        pm = payoff_matrices(self.archetype, self.k)
        return np.array([[x @ pm.A @ y, x @ pm.B @ y] for x, y in self.profiles()]).reshape(-1, 2)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": CACHE_VERSION,
            "archetype": self.archetype,
            "k": self.k,
            "solver": self.solver,
            "rejected": self.rejected,
            "row": self.row.tolist(),
            "col": self.col.tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EquilibriumSet:
        k = int(data["k"])
        return cls(
            data["archetype"],
            k,
            np.asarray(data["row"], float).reshape(-1, k),
            np.asarray(data["col"], float).reshape(-1, k),
            int(data["rejected"]),
            data["solver"],
        )


def solve_extreme_equilibria(archetype: str, k: int) -> EquilibriumSet:
    """Run pygambit's ``enummixed_solve`` (no cache), verify by regret and deduplicate."""
    check_archetype(archetype, k)
    try:
        import pygambit as gbt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise SolverUnavailableError(f"computing equilibria needs pygambit; fix: pip install '{SOLVER_EXTRA}'") from exc
    pm = payoff_matrices(archetype, k)
    scale = pm.integer_scale()  # equilibria are invariant to scaling; integers keep gambit exact-ish
    game = gbt.Game.from_arrays((pm.A * scale).astype(int), (pm.B * scale).astype(int))
    result = gbt.nash.enummixed_solve(game, rational=False)
    players = list(game.players)
    raw = []
    for eq in result.equilibria:
        x = _clean(np.array([float(eq[s]) for s in players[0].strategies]))
        y = _clean(np.array([float(eq[s]) for s in players[1].strategies]))
        raw.append((x, y))
    verified = [(x, y) for x, y in raw if regret(pm, x, y) <= REGRET_TOL]
    kept = _dedupe(verified)
    row = np.array([x for x, _ in kept]).reshape(-1, k)
    col = np.array([y for _, y in kept]).reshape(-1, k)
    return EquilibriumSet(archetype, k, row, col, rejected=len(raw) - len(verified))


def default_cache_dir() -> Path:
    """``$ARENA_MATRIX_CACHE``, else ``$XDG_CACHE_HOME/arena/matrix`` (``~/.cache/arena/matrix``)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "arena" / "matrix"


def _cache_path(cache_dir: Path, archetype: str, k: int) -> Path:
    return cache_dir / f"equilibria-v{CACHE_VERSION}-{archetype}-k{k}.json"


_MEMORY: dict[tuple[str, int], EquilibriumSet] = {}


def extreme_equilibria(
    archetype: str, k: int, *, cache_dir: str | os.PathLike[str] | None | bool = True, shipped: bool = True
) -> EquilibriumSet:
    """The extreme equilibria of (archetype, k): from memory, the shipped table, the disk
    cache, then the solver.

    ``cache_dir``: ``True`` for :func:`default_cache_dir`, a path, or ``False``/``None`` for
    memory only. Shipped and cached entries are used only when they pass their checks (see the
    module docstring); without pygambit a cell that fails them raises
    :class:`SolverUnavailableError` naming the ``solver`` extra.
    """
    check_archetype(archetype, k)
    key = (archetype, int(k))
    if key in _MEMORY:
        return _MEMORY[key]
    found, problem = shipped_cell(archetype, k) if shipped else (None, "")
    directory = default_cache_dir() if cache_dir is True else (Path(cache_dir) if cache_dir else None)
    if found is None and directory:
        found = _read_cache(directory, archetype, k)
    if found is None:
        try:
            found = solve_extreme_equilibria(archetype, k)
        except SolverUnavailableError:
            if not problem:
                raise
            raise SolverUnavailableError(
                f"the shipped equilibrium table is damaged for {archetype} k={k} ({problem}) and pygambit is not installed "
                f"to recompute it; reinstall turn-arena or run: pip install '{SOLVER_EXTRA}'"
            ) from None
        if directory:
            _write_cache(directory, found)
    _MEMORY[key] = found
    return found


def _cell_digest(cell: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(cell, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


@lru_cache(maxsize=1)
def _manifest() -> dict[str, Any]:
    """The shipped checksums ({} when missing or unreadable: then nothing shipped is trusted)."""
    try:
        data = json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) and isinstance(data.get("cells"), dict) else {}
    except (OSError, ValueError):
        return {}


@lru_cache(maxsize=1)
def _shipped_table() -> tuple[dict[str, Any], str]:
    """(cells, problem): the shipped table's cells, or {} and why it cannot be used."""
    manifest = _manifest()
    if not manifest:
        return {}, f"its checksum manifest {MANIFEST_PATH.name} is missing or unreadable"
    try:
        raw = TABLE_PATH.read_bytes()
    except OSError:
        return {}, f"{TABLE_PATH.name} is missing"
    if hashlib.sha256(raw).hexdigest() != manifest.get("file_sha256"):
        problem = f"{TABLE_PATH.name} does not match its checksum"
    else:
        problem = ""
    try:
        data = json.loads(raw)
        cells = (
            data["cells"] if data.get("format") == TABLE_FORMAT and data.get("cache_version") == CACHE_VERSION else {}
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return {}, problem or f"{TABLE_PATH.name} is not valid JSON"
    return (cells if isinstance(cells, dict) else {}), problem


def expected_count(archetype: str, k: int) -> int | None:
    """How many extreme equilibria the manifest records for (archetype, k), if it does."""
    entry = _manifest().get("cells", {}).get(f"{archetype}-{k}")
    return int(entry["count"]) if isinstance(entry, dict) and "count" in entry else None


def shipped_cell(archetype: str, k: int) -> tuple[EquilibriumSet | None, str]:
    """(the shipped equilibria of one cell, "") when complete and verified, else (None, why)."""
    cells, file_problem = _shipped_table()
    name = f"{archetype}-{k}"
    entry = _manifest().get("cells", {}).get(name)
    cell = cells.get(name)
    if cell is None or entry is None:
        return None, file_problem or f"{name} is not in the table"
    if _cell_digest(cell) != entry.get("sha256"):
        return None, f"{name} does not match its checksum"
    try:
        eqs = EquilibriumSet.from_json(cell)
    except (KeyError, ValueError, TypeError):
        return None, f"{name} is malformed"
    if eqs.archetype != archetype or eqs.k != k or len(eqs) != int(entry.get("count", -1)) or len(eqs) == 0:
        return None, f"{name} is incomplete ({len(eqs)} equilibria, expected {entry.get('count')})"
    pm = payoff_matrices(archetype, k)
    if any(regret(pm, x, y) > REGRET_TOL for x, y in eqs.profiles()):
        return None, f"{name} holds a profile that is not an equilibrium"
    return eqs, ""


def write_table(path: Path = TABLE_PATH, manifest_path: Path = MANIFEST_PATH) -> tuple[Path, Path]:
    """Solve every (archetype, k) with pygambit and write the shipped table and its manifest."""
    cells = {f"{a}-{k}": solve_extreme_equilibria(a, k).to_json() for a in ARCHETYPE_NAMES for k in K_VALUES}
    raw = json.dumps(
        {"format": TABLE_FORMAT, "cache_version": CACHE_VERSION, "cells": cells}, separators=(",", ":")
    ).encode()
    manifest = {
        "format": TABLE_FORMAT,
        "file": path.name,
        "file_sha256": hashlib.sha256(raw).hexdigest(),
        "cells": {name: {"count": len(c["row"]), "sha256": _cell_digest(c)} for name, c in cells.items()},
    }
    path.write_bytes(raw)
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    _manifest.cache_clear()
    _shipped_table.cache_clear()
    return path, manifest_path


def clear_memory_cache() -> None:
    _MEMORY.clear()
    reference_points.cache_clear()
    _manifest.cache_clear()
    _shipped_table.cache_clear()


def _read_cache(directory: Path, archetype: str, k: int) -> EquilibriumSet | None:
    path = _cache_path(directory, archetype, k)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        eqs = EquilibriumSet.from_json(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if data.get("version") != CACHE_VERSION or eqs.archetype != archetype or eqs.k != k or len(eqs) == 0:
        return None
    expected = expected_count(archetype, k)
    if expected is not None and len(eqs) != expected:  # a truncated or stale entry
        return None
    pm = payoff_matrices(archetype, k)
    if any(regret(pm, x, y) > REGRET_TOL for x, y in eqs.profiles()):
        return None
    return eqs


def _write_cache(directory: Path, eqs: EquilibriumSet) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(eqs.to_json(), fh, separators=(",", ":"))
        os.replace(tmp, _cache_path(directory, eqs.archetype, eqs.k))
    except OSError:  # a read-only cache is only slower, never wrong
        pass


# ---------------------------------------------------------------------------- symmetric play
def mirrored(archetype: str, k: int, p: np.ndarray) -> np.ndarray:
    """The column player's strategy when it plays ``p`` from its own point of view."""
    out: np.ndarray = np.asarray(p)[ARCHETYPES[archetype].mirror(k)]
    return out


def _symmetric_payoff_matrix(pm: PayoffMatrices) -> np.ndarray:
    """M with (A @ mirrored(p)) == M @ p: the row payoffs against a mirrored copy."""
    m = ARCHETYPES[pm.archetype].mirror(pm.k)
    inverse = np.argsort(m)
    return pm.A[:, inverse]


def symmetric_equilibria(archetype: str, k: int, *, extreme: EquilibriumSet | None = None) -> list[np.ndarray]:
    """Row strategies p with (p, mirrored(p)) a Nash equilibrium, deduplicated.

    Support enumeration over symmetric profiles (each nonsingular indifference system), merged
    with the symmetric profiles among ``extreme`` (gambit's), so degenerate games are covered.
    """
    pm = payoff_matrices(archetype, k)
    M = _symmetric_payoff_matrix(pm)
    found: list[np.ndarray] = []
    for s, weights in _support_solutions(M):
        if np.min(weights) < -1e-12 or not np.all(np.isfinite(weights)):
            continue
        p = np.zeros(k)
        p[s] = weights
        p = _clean(p)
        if regret(pm, p, mirrored(archetype, k, p)) <= REGRET_TOL:
            found.append(p)
    if extreme is not None:
        for x, y in extreme.profiles():
            if np.max(np.abs(mirrored(archetype, k, x) - y)) <= DEDUPE_TOL:
                found.append(x)
    kept = _dedupe([(p, p) for p in found])
    return [p for p, _ in kept]


def _support_solutions(M: np.ndarray) -> Iterator[tuple[list[int], np.ndarray]]:
    """For every support S with a nonsingular system M_SS p = lambda 1, sum p = 1: (S, p_S)."""
    k = M.shape[0]
    for size in range(1, k + 1):
        for support in itertools.combinations(range(k), size):
            s = list(support)
            system = np.zeros((size + 1, size + 1))
            system[:size, :size] = M[np.ix_(s, s)]
            system[:size, size] = -1.0
            system[size, :size] = 1.0
            rhs = np.zeros(size + 1)
            rhs[size] = 1.0
            try:
                sol = np.linalg.solve(system, rhs)
            except np.linalg.LinAlgError:
                continue
            yield s, sol[:size]


def symmetric_play_value(pm: PayoffMatrices, p: np.ndarray, metric: np.ndarray) -> float:
    return float(p @ metric @ mirrored(pm.archetype, pm.k, p))


def symmetric_ceiling(archetype: str, k: int) -> tuple[float, np.ndarray]:
    """max over p of welfare when both copies independently draw from p (role-relative).

    The maximum of the quadratic p' Q p over the simplex is attained at a point whose minimal
    support S has a nonsingular KKT system (Q_SS p = lambda 1, sum p = 1): enumerate supports.
    """
    pm = payoff_matrices(archetype, k)
    m = ARCHETYPES[archetype].mirror(k)
    Q = pm.welfare[:, np.argsort(m)]
    Q = (Q + Q.T) / 2
    best_value, best_p = -np.inf, np.zeros(k)
    for s, weights in _support_solutions(Q):
        if np.min(weights) < -1e-12:
            continue
        p = np.zeros(k)
        p[s] = np.clip(weights, 0, None)
        p /= p.sum()
        value = float(p @ Q @ p)
        if value > best_value + 1e-12:
            best_value, best_p = value, p
    return best_value, best_p


# ---------------------------------------------------------------------------- reference points
BASELINE_RULE = "welfare of the largest-support symmetric NE; ties broken by the smallest welfare"


@dataclass(frozen=True)
class ReferencePoints:
    """Everything a cell's measured metric is compared with (all in the metric's units)."""

    archetype: str
    k: int
    metric: str  # "welfare" or "row_payoff" (hide-and-seek)
    worst_cell: float
    best_cell: float
    worst_cells: tuple[tuple[int, int], ...]
    best_cells: tuple[tuple[int, int], ...]
    num_extreme_equilibria: int
    num_pure_equilibria: int
    ne_best: float
    ne_worst: float
    ne_mean: float
    symmetric_ne: tuple[tuple[tuple[float, ...], float], ...]  # (row strategy, value), by support size
    uniform: float
    symmetric_ceiling: float | None
    ceiling_strategy: tuple[float, ...] | None
    baseline: float
    baseline_rule: str
    baseline_strategy: tuple[float, ...]  # the row strategy of the baseline's symmetric NE
    sensitivity: dict[str, float] = field(default_factory=dict)

    def normalise(self, value: float) -> float:
        """s = (value - worst cell) / (best cell - worst cell)."""
        return (value - self.worst_cell) / (self.best_cell - self.worst_cell)

    def to_json(self, *, max_listed: int | None = 16) -> dict[str, Any]:
        """JSON-able; at most ``max_listed`` symmetric NE are listed (largest support first)."""
        out = asdict(self)
        out["worst_cells"] = [list(c) for c in self.worst_cells]
        out["best_cells"] = [list(c) for c in self.best_cells]
        listed = self.symmetric_ne if max_listed is None else self.symmetric_ne[:max_listed]
        out["symmetric_ne"] = [{"strategy": list(p), "value": v} for p, v in listed]
        out["symmetric_ne_count"] = len(self.symmetric_ne)
        return out


def metric_matrix(archetype: str, k: int) -> tuple[str, np.ndarray]:
    """The scored quantity per cell: welfare, or the matcher's payoff for zero-sum games."""
    pm = payoff_matrices(archetype, k)
    if ARCHETYPES[archetype].zero_sum:
        return "row_payoff", pm.A
    return "welfare", pm.welfare


def pure_equilibria(archetype: str, k: int) -> list[tuple[int, int]]:
    """Cells where each action is a best reply to the other (no solver needed)."""
    pm = payoff_matrices(archetype, k)
    row_best = pm.A >= pm.A.max(axis=0, keepdims=True) - REGRET_TOL
    col_best = pm.B >= pm.B.max(axis=1, keepdims=True) - REGRET_TOL
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(row_best & col_best))]


@cache
def reference_points(archetype: str, k: int) -> ReferencePoints:
    """The reference points of (archetype, k); equilibria come from the cache."""
    check_archetype(archetype, k)
    name, W = metric_matrix(archetype, k)
    eqs = extreme_equilibria(archetype, k)
    values = np.array([x @ W @ y for x, y in eqs.profiles()])
    sym = symmetric_equilibria(archetype, k, extreme=eqs)
    sym_values = [(p, float(p @ W @ mirrored(archetype, k, p))) for p in sym]
    sym_values.sort(key=lambda pv: (-int(np.count_nonzero(pv[0] > DEDUPE_TOL)), pv[1]))
    largest = max(int(np.count_nonzero(p > DEDUPE_TOL)) for p, _ in sym_values)
    baseline_p, baseline = min(
        ((p, v) for p, v in sym_values if int(np.count_nonzero(p > DEDUPE_TOL)) == largest), key=lambda pv: pv[1]
    )
    if ARCHETYPES[archetype].role_symmetric:
        ceiling, ceiling_p = symmetric_ceiling(archetype, k)
        ceiling_tuple: tuple[float, ...] | None = tuple(float(v) for v in ceiling_p)
    else:
        ceiling, ceiling_tuple = None, None
    lo, hi = float(W.min()), float(W.max())
    return ReferencePoints(
        archetype=archetype,
        k=k,
        metric=name,
        worst_cell=lo,
        best_cell=hi,
        worst_cells=tuple((int(i), int(j)) for i, j in zip(*np.nonzero(W == lo))),
        best_cells=tuple((int(i), int(j)) for i, j in zip(*np.nonzero(W == hi))),
        num_extreme_equilibria=len(eqs),
        num_pure_equilibria=len(pure_equilibria(archetype, k)),
        ne_best=float(values.max()),
        ne_worst=float(values.min()),
        ne_mean=float(values.mean()),
        symmetric_ne=tuple((tuple(float(v) for v in p), v) for p, v in sym_values),
        uniform=float(W.mean()),
        symmetric_ceiling=None if ceiling is None else float(ceiling),
        ceiling_strategy=ceiling_tuple,
        baseline=float(baseline),
        baseline_rule=BASELINE_RULE,
        baseline_strategy=tuple(float(v) for v in baseline_p),
        sensitivity={
            "ne_mean": float(values.mean()),
            "ne_best": float(values.max()),
            "ne_worst": float(values.min()),
            "best_symmetric_ne": float(max(v for _, v in sym_values)),
            "worst_symmetric_ne": float(min(v for _, v in sym_values)),
        },
    )


def reference_table(archetypes: Sequence[str] = ARCHETYPE_NAMES, ks: Sequence[int] = K_VALUES) -> list[ReferencePoints]:
    """Reference points for every (archetype, k), archetype-major."""
    return [reference_points(a, k) for a in archetypes for k in ks]


if __name__ == "__main__":  # pragma: no cover - maintenance: python -m arena_games.matrix.equilibria --write-table
    import sys

    if sys.argv[1:] != ["--write-table"]:
        sys.exit("usage: python -m arena_games.matrix.equilibria --write-table  (needs pygambit: the solver extra)")
    try:
        for written in write_table():
            print(f"wrote {written}")
    except SolverUnavailableError as exc:  # one line naming the extra, not a traceback
        sys.exit(f"error: {exc}")
