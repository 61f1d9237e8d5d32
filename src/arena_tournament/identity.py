"""Who an entrant really is: its resolved identity, and the refusal of literal secrets.

An entrant's *resolved identity* is what decides how it plays beyond its name: the player class,
every parameter after defaults (a player's pydantic ``settings``, or its public plain
attributes), the versions of the distributions providing it, a checkpoint's hash, and its mode
(``free`` text or ``constrained`` actions). A player may say it itself with ``identity() -> dict``
(merged over what is found). It is saved in the results header, and a resumed run whose
identities changed is refused: an upgrade must not mix two different experts under one name.

Secrets never enter a config: keys come from the environment (options such as ``api_key_env``
name the variable). A literal key in an entrant's options or spec is refused with one line.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from arena_core.errors import ConfigError
from arena_core.outputs import scrub_secrets

from .schedule import Entrant

_SECRET_WORDS = frozenset(
    {"secret", "password", "passwd", "passphrase", "credential", "credentials", "authorization", "bearer", "apikey"}
)
_SECRET_PAIRS = frozenset({("api", "key"), ("private", "key"), ("access", "key"), ("secret", "key")})
_NOT_SECRET_SUFFIXES = ("env", "var", "file", "path")


def is_secret_name(key: str) -> bool:
    """Whether an option named ``key`` holds a credential: judged by the words of its name
    (split at ``_``, ``-``, ``.``, spaces and camelCase), never by substrings, so ``api_key``,
    ``hf_token``, ``client_secret`` and ``apiKey`` are secret and ``max_tokens`` or
    ``tokenizer`` are not; a name ending in ``_env``, ``_var``, ``_file`` or ``_path`` names
    where the secret lives and is kept."""
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", key)]
    if not words or words[-1] in _NOT_SECRET_SUFFIXES:
        return False
    if any(w in _SECRET_WORDS or w == "token" for w in words):
        return True
    return any(pair in _SECRET_PAIRS for pair in zip(words, words[1:]))


_SECRET_VALUE = re.compile(r"^(sk-|Bearer\s)")


def _secret_paths(value: Any, path: str = "") -> list[str]:
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            sub = f"{path}.{k}" if path else str(k)
            if isinstance(v, str) and v and is_secret_name(str(k)):
                found.append(sub)
            else:
                found.extend(_secret_paths(v, sub))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            found.extend(_secret_paths(v, f"{path}[{i}]"))
    elif isinstance(value, str) and (_SECRET_VALUE.match(value.strip()) or scrub_secrets(value) != value):
        found.append(path or "(value)")
    return found


def check_no_literal_secrets(entrant: Entrant) -> None:
    """Refuse an entrant whose config holds a literal credential (it would be written to the
    results, records and reports): one line naming it and the fix."""
    bad = _secret_paths(entrant.options)  # every spelling of the spec lands in options (Entrant)
    if bad:
        raise ConfigError(
            f"entrant {entrant.name!r}: option {bad[0]!r} holds a literal secret, which would be written to the results; "
            'put the key in an environment variable and name it (e.g. api_key_env = "OPENAI_API_KEY")'
        )


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` if it is JSON-able plain data (small), else a marker that says it is not."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if depth < 3 and isinstance(value, (list, tuple)) and len(value) <= 64:
        return [_plain(v, depth + 1) for v in value]
    if depth < 3 and isinstance(value, dict) and len(value) <= 64:
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    return _SKIP


_SKIP = object()


def _parameters(player: Any) -> dict[str, Any]:
    settings = getattr(player, "settings", None)
    if settings is not None and hasattr(settings, "model_dump"):
        dumped: dict[str, Any] = settings.model_dump(mode="json")
        return dumped
    out: dict[str, Any] = {}
    for k, v in sorted(vars(player).items()) if hasattr(player, "__dict__") else ():
        if k.startswith("_"):
            continue
        p = _plain(v)
        if p is not _SKIP and "<object" not in json.dumps(p, default=lambda x: "<object>"):
            out[k] = p
    return out


@functools.lru_cache(maxsize=1)
def _package_distributions() -> dict[str, list[str]]:
    from importlib import metadata

    try:
        return dict(metadata.packages_distributions())
    except Exception:  # pragma: no cover - broken metadata
        return {}


def _versions(player: Any) -> dict[str, str]:
    from importlib import metadata

    top = type(player).__module__.split(".")[0]
    out: dict[str, str] = {}
    dists = _package_distributions().get(top, [])
    for d in sorted(set(dists)):
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:  # pragma: no cover
            pass
    return out


def _redact(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, key) for v in value]
    if isinstance(value, str):
        if key and is_secret_name(key) and value:
            return "***"
        return scrub_secrets(value)
    return value


_HASH_LIMIT = 4 << 30  # bytes: a checkpoint larger than this is identified by names and sizes only


def checkpoint_sha256(player: Any) -> str | None:
    """The player's ``checkpoint_sha256`` attribute, else the SHA-256 of the file or directory
    its ``checkpoint`` or ``path`` attribute names (every file's relative name and content;
    over 4 GiB, names and sizes only), else None."""
    value = getattr(player, "checkpoint_sha256", None)
    if isinstance(value, str):
        return value
    for attr in ("checkpoint", "path"):
        target = getattr(player, attr, None)
        if not isinstance(target, (str, os.PathLike)) or not str(target):
            continue
        root = Path(target)
        if not root.exists():
            continue
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        big = sum(p.stat().st_size for p in files) > _HASH_LIMIT
        h = hashlib.sha256()
        for f in files:
            h.update(str(f.relative_to(root) if f != root else f.name).encode() + b"\0")
            if big:
                h.update(str(f.stat().st_size).encode())
                continue
            with open(f, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        return h.hexdigest()
    return None


def entrant_identity(entrant: Entrant, player: Any) -> dict[str, Any]:
    """The resolved identity of ``entrant`` as built (``player``); never holds a secret."""
    ident: dict[str, Any] = {
        "player": entrant.player or entrant.factory,
        "class": f"{type(player).__module__}.{type(player).__qualname__}",
        "seed": entrant.seed,
        "params": _parameters(player),
        "versions": _versions(player),
    }
    mode = getattr(player, "mode", None) or getattr(getattr(player, "settings", None), "mode", None)
    if mode in ("free", "constrained"):
        ident["mode"] = mode
    digest = checkpoint_sha256(player)
    if digest:
        ident["checkpoint_sha256"] = digest
    own = getattr(player, "identity", None)
    if callable(own):
        extra = own()
        if isinstance(extra, dict):
            ident.update({str(k): _plain(v) for k, v in extra.items() if _plain(v) is not _SKIP})
    ident = _redact(ident)
    ident["digest"] = hashlib.sha256(json.dumps(ident, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return ident


def identity_change(saved: dict[str, dict[str, Any]], now: dict[str, dict[str, Any]]) -> str | None:
    """One line saying how the resolved identities changed, or None (an empty ``saved``: a
    file without identities, nothing to compare)."""
    if not saved:
        return None
    for name in sorted(set(saved) | set(now)):
        a, b = saved.get(name), now.get(name)
        if a is None or b is None:
            return f"entrant {name!r} {'is new' if a is None else 'is gone'}"
        if a.get("digest") == b.get("digest"):
            continue
        for key in sorted(set(a) | set(b)):
            if key == "digest" or a.get(key) == b.get(key):
                continue
            va, vb = a.get(key), b.get(key)
            if isinstance(va, dict) and isinstance(vb, dict):
                sub = next((k for k in sorted(set(va) | set(vb)) if va.get(k) != vb.get(k)), None)
                return f"entrant {name!r} changed: {key}.{sub} was {va.get(sub)!r}, now {vb.get(sub)!r}"
            return f"entrant {name!r} changed: {key} was {va!r}, now {vb!r}"
    return None
