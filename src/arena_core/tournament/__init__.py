"""Deprecated import path: tournaments moved to :mod:`arena_tournament` (``turn-arena-tournament``).
For one release ``arena_core.tournament[.<module>]`` warns and gives the very module objects of
``arena_tournament``, named only as a string (the core imports no plugin package).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Any

_OLD = __name__
_NEW = "arena_tournament"

warnings.warn(
    f"{_OLD} moved to {_NEW} (pip install turn-arena-tournament); the old path goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)


def _target(old_name: str) -> ModuleType:
    new_name = _NEW + old_name[len(_OLD) :]
    try:
        return importlib.import_module(new_name)
    except ModuleNotFoundError as exc:
        if exc.name == _NEW:
            raise ModuleNotFoundError(
                f"{old_name} moved to {new_name}, which is not installed; fix: pip install turn-arena-tournament",
                name=old_name,
            ) from None
        raise


_REAL_SPECS: dict[str, importlib.machinery.ModuleSpec | None] = {}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``arena_core.tournament.X`` and hands out the module ``arena_tournament.X``."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(_OLD + "."):
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = _target(spec.name)
        _REAL_SPECS[spec.name] = module.__spec__  # the import system overwrites __spec__; put back below
        return module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = _REAL_SPECS.pop(module.__spec__.name if module.__spec__ else "", module.__spec__)


if not any(isinstance(f, _Alias) for f in sys.meta_path):
    sys.meta_path.insert(0, _Alias())


def __getattr__(name: str) -> Any:
    return getattr(_target(_OLD), name)
