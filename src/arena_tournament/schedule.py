"""Tournament schedules as validated data: who sits where, on which deal.

A schedule is a list of *tables* (sets of entrants, by index), a list of *deals* (game seeds
shared by every table, so comparisons are paired) and a seat-rotation rule. Every table plays
every deal in every rotation. Designs:

- two players: round robin (every pair is a table; both seat orders are the two rotations);
- three players: a Steiner triple system when ``v % 6 in (1, 3)`` (each pair meets exactly
  once), otherwise every triple (small ``v``) or a greedy pair covering with the least pair
  imbalance;
- more players: tables sampled greedily so that pair counts stay balanced.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from arena_core.errors import ConfigError
from arena_core.playerspec import PlayerSpec, as_player_spec
from arena_core.seeding import make_rng

Design = Literal["auto", "round_robin", "steiner", "all", "covering", "sampled"]
Rotations = Literal["cyclic", "all"]

#: Cyclic difference families: base blocks translated mod v. 13 is MegagemBench's STS(13).
CYCLIC_BASE_BLOCKS: dict[int, tuple[tuple[int, int, int], ...]] = {
    7: ((0, 1, 3),),
    13: ((0, 1, 4), (0, 2, 7)),
}


@dataclass(frozen=True)
class ScheduledGame:
    """One game of a schedule: which entrant sits in which seat, on which deal."""

    key: str  # unique and stable: "<seed>/<seat0>|<seat1>|..."
    cluster: str  # one table on one deal, every rotation together: "<seed>/<sorted names>"
    table: int
    deal: int  # index into Schedule.deals
    seed: int
    rotation: int
    seats: tuple[str, ...]  # entrant names in seat order


class Entrant(BaseModel):
    """A named participant: a registered player (its spec in any spelling of
    :mod:`arena_core.playerspec`, parsed once here into ``player`` and ``options``) or an import path."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[^|/\s][^|/]*$", description="unique label (no '|' or '/')")
    player: str | None = Field(
        default=None, description="registered player: 'random', 'random{x = 1}' or 'random:x=1' (stored as the name)"
    )
    factory: str | None = Field(default=None, description="'package.module:Class' for an unregistered player")
    options: dict[str, Any] = Field(default_factory=dict, description="keyword options passed to the player")
    seed: int = Field(default=0, ge=0, description="the player's own seed")
    on_outage: Literal["replay", "default"] = Field(
        default="replay",
        description="a decision its provider could not answer (unavailable): replay the game on resume, "
        "or let the illegal-action policy play it (today's default move) and count the game",
    )

    @model_validator(mode="before")
    @classmethod
    def _parse_player_spec(cls, data: Any) -> Any:
        """The one place an entrant's spec is read: ``player`` keeps the registered name, the
        spec's options join ``options`` (an option given in both is refused)."""
        if not isinstance(data, dict) or data.get("player") is None:
            return data
        try:
            spec = as_player_spec(data["player"])
        except ConfigError as exc:  # pydantic reports ValueErrors with the entrant's place
            raise ValueError(str(exc)) from None
        extra = data.get("options") or {}
        if not isinstance(extra, dict):
            return data  # pydantic names the bad field
        both = sorted(set(spec.options) & set(extra))
        if both:
            raise ValueError(f"option {both[0]!r} is given both in the player spec and in 'options'; give it once")
        return {**data, "player": spec.name, "options": {**spec.options, **extra}}

    @property
    def spec(self) -> PlayerSpec | None:
        """The registered player and its options (None for a ``factory`` entrant)."""
        return None if self.player is None else PlayerSpec(self.player, dict(self.options))

    @model_validator(mode="after")
    def _one_source(self) -> Entrant:
        if (self.player is None) == (self.factory is None):
            raise ValueError(
                f"entrant {self.name!r} needs exactly one of 'player' (a registered name) or 'factory' ('module:Class')"
            )
        if self.factory is not None and ":" not in self.factory:
            raise ValueError(f"entrant {self.name!r}: factory {self.factory!r} must look like 'package.module:Class'")
        return self


class Schedule(BaseModel):
    """Every game of a tournament, as data; saved as the first line of the results file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    game: str
    game_factory: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    num_players: int = Field(ge=1)
    entrants: tuple[Entrant, ...]
    tables: tuple[tuple[int, ...], ...]
    deals: tuple[int, ...]
    rotations: Rotations = "cyclic"
    design: str = "custom"

    @model_validator(mode="after")
    def _consistent(self) -> Schedule:
        names = [e.name for e in self.entrants]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"entrant names must be unique; repeated: {dup} (give each entrant its own 'name')")
        if not self.tables:
            raise ValueError("a schedule needs at least one table")
        if not self.deals:
            raise ValueError("a schedule needs at least one deal (seed)")
        if any(s < 0 for s in self.deals) or len(set(self.deals)) != len(self.deals):
            raise ValueError("deal seeds must be distinct non-negative integers")
        for t, table in enumerate(self.tables):
            if len(table) != self.num_players:
                raise ValueError(f"table {t} {table} seats {len(table)} entrants, the game needs {self.num_players}")
            if len(set(table)) != len(table):
                raise ValueError(f"table {t} {table} seats an entrant twice")
            if any(not 0 <= i < len(self.entrants) for i in table):
                raise ValueError(f"table {t} {table} names an entrant index outside 0..{len(self.entrants) - 1}")
        return self

    def seatings(self, table: tuple[int, ...]) -> list[tuple[int, ...]]:
        """The seat orders a table plays on each deal (cyclic: k rotations; all: k! orders)."""
        if self.rotations == "all":
            return [tuple(p) for p in itertools.permutations(table)]
        k = len(table)
        return [tuple(table[(s - r) % k] for s in range(k)) for r in range(k)]

    def games(self) -> list[ScheduledGame]:
        """Every game, deal-major (a run stopped early has played whole deals evenly)."""
        names = [e.name for e in self.entrants]
        out = []
        for d, seed in enumerate(self.deals):
            for t, table in enumerate(self.tables):
                cluster = f"{seed}/" + "|".join(sorted(names[i] for i in table))
                for r, order in enumerate(self.seatings(table)):
                    seats = tuple(names[i] for i in order)
                    out.append(ScheduledGame(f"{seed}/" + "|".join(seats), cluster, t, d, seed, r, seats))
        return out

    def pair_counts(self) -> dict[tuple[int, int], int]:
        """How many tables each pair of entrants shares."""
        counts = {p: 0 for p in itertools.combinations(range(len(self.entrants)), 2)}
        for table in self.tables:
            for a, b in itertools.combinations(sorted(table), 2):
                counts[(a, b)] += 1
        return counts


# ---------------------------------------------------------------------- designs
def is_steiner_order(v: int) -> bool:
    """Whether a Steiner triple system on ``v`` points exists (v = 1 or 3 mod 6)."""
    return v >= 3 and v % 6 in (1, 3)


def _triple(a: int, b: int, c: int) -> tuple[int, int, int]:
    x, y, z = sorted((a, b, c))
    return x, y, z


def steiner_triple_system(v: int) -> list[tuple[int, int, int]]:
    """A Steiner triple system on ``range(v)``: every pair in exactly one triple.

    Cyclic for 7 and 13 (13 matches MegagemBench's schedule), otherwise Bose's construction
    (v = 3 mod 6) or Skolem's (v = 1 mod 6).
    """
    if not is_steiner_order(v):
        raise ValueError(f"no Steiner triple system has {v} points; it needs v = 1 or 3 (mod 6), v >= 3")
    if v in CYCLIC_BASE_BLOCKS:
        triples = {_triple(*((x + k) % v for x in block)) for block in CYCLIC_BASE_BLOCKS[v] for k in range(v)}
        return sorted(triples)
    if v % 6 == 3:
        return sorted(_bose(v))
    return sorted(_skolem(v))


def _bose(v: int) -> list[tuple[int, int, int]]:
    m = v // 3  # 2n + 1, odd
    half = (m + 1) // 2  # inverse of 2 mod m

    def point(x: int, i: int) -> int:
        return x + m * (i % 3)

    def op(x: int, y: int) -> int:  # idempotent commutative quasigroup: (x + y) / 2 mod m
        return (x + y) * half % m

    out = [_triple(point(x, 0), point(x, 1), point(x, 2)) for x in range(m)]
    for i in range(3):
        for x, y in itertools.combinations(range(m), 2):
            out.append(_triple(point(x, i), point(y, i), point(op(x, y), i + 1)))
    return out


def _skolem(v: int) -> list[tuple[int, int, int]]:
    n = (v - 1) // 6
    m = 2 * n
    inf = v - 1

    def point(x: int, i: int) -> int:
        return x + m * (i % 3)

    def op(x: int, y: int) -> int:  # half-idempotent commutative quasigroup of order 2n
        s = (x + y) % m
        return s // 2 if s % 2 == 0 else n + (s - 1) // 2

    out = [_triple(point(x, 0), point(x, 1), point(x, 2)) for x in range(n)]
    for x in range(n):
        for i in range(3):
            out.append(_triple(inf, point(x + n, i), point(x, i + 1)))
    for i in range(3):
        for x, y in itertools.combinations(range(m), 2):
            out.append(_triple(point(x, i), point(y, i), point(op(x, y), i + 1)))
    return out


def greedy_covering(v: int, k: int) -> list[tuple[int, ...]]:
    """Tables of size ``k`` covering every pair at least once, chosen greedily (most new pairs,
    then the least-used entrants, then lexicographic), so pair counts stay as even as it allows."""
    uncovered = set(itertools.combinations(range(v), 2))
    pair_count: dict[tuple[int, int], int] = {p: 0 for p in uncovered}
    used = [0] * v
    tables: list[tuple[int, ...]] = []
    candidates = list(itertools.combinations(range(v), k))
    while uncovered:

        def score(t: tuple[int, ...]) -> tuple[int, int, int, tuple[int, ...]]:
            pairs = list(itertools.combinations(t, 2))
            new = sum(p in uncovered for p in pairs)
            return (-new, sum(pair_count[p] for p in pairs), sum(used[i] for i in t), t)

        best = min(candidates, key=score)
        tables.append(best)
        for p in itertools.combinations(best, 2):
            uncovered.discard(p)
            pair_count[p] += 1
        for i in best:
            used[i] += 1
    return tables


def sampled_tables(v: int, k: int, count: int, seed: int, *, candidates: int = 16) -> list[tuple[int, ...]]:
    """``count`` tables of size ``k``: each table seats the least-used entrants (so table counts
    per entrant differ by at most one) and, among ``candidates`` seeded draws of such tables,
    the one whose pairs have met least (sum, then sum of squares of earlier meetings); then
    seeded swaps between tables that lower the sum of squared pair counts."""
    rng = make_rng(seed, "tables")
    used = np.zeros(v, dtype=int)
    meet = np.zeros((v, v), dtype=int)
    tables = []
    for _ in range(count):
        low = int(used.min())
        level0 = np.flatnonzero(used == low)
        level1 = np.flatnonzero(used == low + 1)
        if len(level0) >= k:
            fixed, pool, need = np.array([], dtype=int), level0, k
        else:
            fixed, pool, need = level0, level1, k - len(level0)
        best, best_score = None, None
        for _ in range(candidates):
            table = np.concatenate([fixed, rng.choice(pool, size=need, replace=False)])
            sub = meet[np.ix_(table, table)][np.triu_indices(k, 1)]
            score = (int(sub.sum()), int((sub * sub).sum()))
            if best_score is None or score < best_score:
                best, best_score = table, score
        assert best is not None  # candidates >= 1
        for i in best:
            used[i] += 1
        meet[np.ix_(best, best)] += 1
        tables.append([int(i) for i in best])
    _balance_pairs(tables, meet, rng, rounds=200 * count)
    return [tuple(sorted(t)) for t in tables]


def _balance_pairs(tables: list[list[int]], meet: np.ndarray, rng: np.random.Generator, rounds: int) -> None:
    """Hill-climb on the sum of squared pair counts by swapping an entrant of one table with an
    entrant of another (table counts per entrant do not change)."""
    if len(tables) < 2:
        return
    counts = meet.tolist()  # plain lists: scalar access is much faster than numpy's
    picks_a = rng.integers(len(tables), size=rounds)
    picks_b = rng.integers(len(tables), size=rounds)
    seats = rng.random((rounds, 2))
    for r in range(rounds):
        a, b = int(picks_a[r]), int(picks_b[r])
        if a == b:
            continue
        ta, tb = tables[a], tables[b]
        ia, ib = int(seats[r, 0] * len(ta)), int(seats[r, 1] * len(tb))
        x, y = ta[ia], tb[ib]
        if x == y or y in ta or x in tb:
            continue
        rest_a = [e for e in ta if e != x]
        rest_b = [e for e in tb if e != y]
        # pairs lost: (x, rest_a), (y, rest_b); pairs gained: (y, rest_a), (x, rest_b)
        delta = 0
        changes: dict[tuple[int, int], int] = {}
        for u, rest, d in ((x, rest_a, -1), (y, rest_b, -1), (y, rest_a, 1), (x, rest_b, 1)):
            for e in rest:
                key = (min(u, e), max(u, e))
                changes[key] = changes.get(key, 0) + d
        for (u, e), d in changes.items():
            if d:
                old = counts[u][e]
                delta += (old + d) ** 2 - old * old
        if delta < 0:
            for (u, e), d in changes.items():
                counts[u][e] += d
                counts[e][u] += d
            ta[ia], tb[ib] = y, x


def design_tables(
    v: int, k: int, design: Design = "auto", *, num_tables: int | None = None, seed: int = 0
) -> tuple[list[tuple[int, ...]], str]:
    """The tables for ``v`` entrants at ``k``-player tables, and the design actually used."""
    if v < k:
        raise ValueError(f"{v} entrants cannot fill a {k}-player table; add entrants")
    if design == "auto":
        if k == 2:
            design = "round_robin"
        elif k == 3:
            design = "steiner" if is_steiner_order(v) else ("all" if v <= 8 else "covering")
        else:
            design = "all" if v == k or _n_choose_k(v, k) <= 20 else "sampled"
    if design == "round_robin":
        if k != 2:
            raise ValueError(
                "design 'round_robin' is for two-player games; use 'steiner', 'all', 'covering' or 'sampled'"
            )
        return list(itertools.combinations(range(v), 2)), design
    if design == "steiner":
        if k != 3:
            raise ValueError("design 'steiner' (Steiner triple system) is for three-player games")
        triples: list[tuple[int, ...]] = list(steiner_triple_system(v))
        return triples, design
    if design == "all":
        return list(itertools.combinations(range(v), k)), design
    if design == "covering":
        return greedy_covering(v, k), design
    if design == "sampled":
        if num_tables is None:
            pairs = v * (v - 1) // 2
            num_tables = -(-pairs // (k * (k - 1) // 2))
        return sampled_tables(v, k, num_tables, seed), design
    raise ValueError(f"unknown design {design!r}; use auto, round_robin, steiner, all, covering or sampled")


def table_groups(num_entrants: int, tables: Iterable[Sequence[int]]) -> list[list[int]]:
    """Entrant indices split into the components of the comparison graph (entrants linked when
    they share a table), largest first. More than one group: some entrants can never be compared."""
    parent = list(range(num_entrants))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for table in tables:
        for other in table[1:]:
            ra, rb = find(table[0]), find(other)
            if ra != rb:
                parent[ra] = rb
    groups: dict[int, list[int]] = {}
    for i in range(num_entrants):
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))


def _n_choose_k(n: int, k: int) -> int:
    from math import comb

    return comb(n, k)


def make_schedule(
    game: str,
    entrants: list[Entrant],
    num_players: int,
    deals: list[int],
    *,
    params: dict[str, Any] | None = None,
    game_factory: str | None = None,
    design: Design = "auto",
    rotations: Rotations = "cyclic",
    num_tables: int | None = None,
    seed: int = 0,
) -> Schedule:
    """Build and validate a schedule for ``entrants`` at ``num_players``-player tables."""
    tables, used = design_tables(len(entrants), num_players, design, num_tables=num_tables, seed=seed)
    groups = table_groups(len(entrants), tables)
    if len(groups) > 1:
        named = " | ".join("{" + ", ".join(entrants[i].name for i in g) + "}" for g in groups)
        raise ConfigError(
            f"design {used!r} with {len(tables)} tables splits the entrants into {len(groups)} groups that never meet: {named}; "
            "add tables ('tables = ...') or use design 'covering' or 'all'"
        )
    return Schedule(
        game=game,
        game_factory=game_factory,
        params=dict(params or {}),
        num_players=num_players,
        entrants=tuple(entrants),
        tables=tuple(tables),
        deals=tuple(deals),
        rotations=rotations,
        design=used,
    )
