"""Write immutable states (frozen dataclasses of plain values: docs/core.md) to JSON-able data and
read them back, guided by type hints."""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any

from .errors import SerializationError


def to_jsonable(obj: Any) -> Any:
    """Convert a state (or any part of it) to JSON-able data."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, enum.Enum):
        return to_jsonable(obj.value)
    if isinstance(obj, (int, float)):
        return obj
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {"__type__": type(obj).__name__}
        for f in dataclasses.fields(obj):
            out[f.name] = to_jsonable(getattr(obj, f.name))
        return out
    if isinstance(obj, (tuple, list)):
        return [to_jsonable(x) for x in obj]
    if isinstance(obj, frozenset):
        return sorted((to_jsonable(x) for x in obj), key=repr)
    if isinstance(obj, dict):
        return [[to_jsonable(k), to_jsonable(v)] for k, v in obj.items()]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return obj.item()
    raise SerializationError(
        f"cannot serialise {type(obj).__name__}: use plain values, tuples and frozen dataclasses in states"
    )


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_jsonable(tp: Any, data: Any) -> Any:
    """Rebuild a value of type ``tp`` from the output of :func:`to_jsonable`."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return data
    if origin in (typing.Union, types.UnionType):
        arms = typing.get_args(tp)
        if data is None and type(None) in arms:
            return None
        arms = tuple(a for a in arms if a is not type(None))
        if isinstance(data, dict) and "__type__" in data:
            for arm in arms:
                if isinstance(arm, type) and arm.__name__ == data["__type__"]:
                    return from_jsonable(arm, data)
        errors = []
        for arm in arms:
            try:
                return from_jsonable(arm, data)
            except (SerializationError, TypeError, ValueError) as exc:
                errors.append(str(exc))
        raise SerializationError(f"no arm of {tp} fits {data!r}: {errors}")
    if origin is typing.Literal:
        return data
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_jsonable(args[0], x) for x in data)
        if not args:
            return tuple(data)
        if len(args) != len(data):
            raise SerializationError(f"expected {len(args)} items for {tp}, got {len(data)}")
        return tuple(from_jsonable(a, x) for a, x in zip(args, data))
    if origin in (frozenset, set):
        (arg,) = typing.get_args(tp) or (Any,)
        return origin(from_jsonable(arg, x) for x in data)
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        return [from_jsonable(arg, x) for x in data]
    if origin in (dict, typing.Mapping, Mapping):
        k_t, v_t = typing.get_args(tp) or (Any, Any)
        return {from_jsonable(k_t, k): from_jsonable(v_t, v) for k, v in data}
    if isinstance(tp, type):
        if dataclasses.is_dataclass(tp):
            if not isinstance(data, dict):
                raise SerializationError(f"expected an object for {tp.__name__}, got {data!r}")
            hints = _hints(tp)
            kwargs = {f.name: from_jsonable(hints[f.name], data[f.name]) for f in dataclasses.fields(tp) if f.init}
            return tp(**kwargs)
        if issubclass(tp, enum.Enum):
            return tp(data)
        if tp is float:
            return float(data)
        if tp in (int, str, bool):
            if not isinstance(data, tp):
                raise SerializationError(f"expected {tp.__name__}, got {data!r}")
            return data
        if tp is type(None):
            if data is not None:
                raise SerializationError(f"expected null, got {data!r}")
            return None
    raise SerializationError(f"unsupported type in state: {tp!r}")
