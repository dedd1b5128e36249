"""Knowledge entries read without pydantic, and the checks every entry shares.

``gpuport hipify`` reads the bundled targets and API map without importing pydantic (start-up,
issue 18). Those files are validated whole by the test suite; at run time
:func:`plain_record` builds an entry directly when its raw value plainly fits the dataclass's
declared types, and returns None otherwise, so that pydantic (``TypeAdapter``) validates it
and words the error. It only ever accepts less than pydantic: no coercion (``True`` is not an
int, ``"9"`` not a number, a datetime not a date), and a type it does not know is not plain.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import types
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

__all__ = ["FORBID_EXTRA", "check_sources", "plain_record", "sourced"]

# pydantic's config for a stdlib dataclass (``__pydantic_config__``): no unknown keys, as every
# knowledge entry
FORBID_EXTRA = {"extra": "forbid"}


def check_sources(value: list[str], *, at_least_one: bool = True) -> list[str]:
    """A knowledge entry's sources: each a URL; at least one unless ``at_least_one`` is off."""
    if at_least_one and not value:
        raise ValueError("sources: at least one is needed")
    for url in value:
        if not url.startswith(("https://", "http://")):
            raise ValueError(f"source is not a URL: {url!r}")
    return value


def sourced(raw: dict[str, Any], where: str) -> tuple[tuple[str, ...], dt.date]:
    """A hand-read entry's ``sources`` and ``checked`` date, or ValueError naming ``where``
    (the knowledge files read without pydantic: port routes, release switches)."""
    try:
        sources = tuple(check_sources(list(raw.get("sources", []))))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    checked = raw.get("checked")
    if not isinstance(checked, dt.date) or isinstance(checked, dt.datetime):
        raise ValueError(f"{where}: checked must be a date")
    return sources, checked


class _NotPlain(Exception):
    pass


def _plain(tp: Any, value: Any) -> Any:
    """``value`` as type ``tp`` holds it (a list read as a tuple where ``tp`` is one), or
    :class:`_NotPlain`."""
    origin = get_origin(tp)
    if origin is Literal:
        if any(value == a and type(value) is type(a) for a in get_args(tp)):
            return value
    elif origin in (Union, types.UnionType):
        for arg in get_args(tp):
            try:
                return _plain(arg, value)
            except _NotPlain:
                continue
    elif origin is list:
        if isinstance(value, list):
            (item,) = get_args(tp)
            return [_plain(item, v) for v in value]
    elif origin is tuple:
        args = get_args(tp)
        if isinstance(value, list | tuple) and len(value) == len(args):
            return tuple(_plain(a, v) for a, v in zip(args, value, strict=True))
    elif tp is type(None):
        if value is None:
            return value
    elif tp in (str, int, bool, dt.date) and type(value) is tp:
        return value
    raise _NotPlain


_FIELDS: dict[type[Any], dict[str, tuple[Any, bool]]] = {}


def _fields(cls: type[Any]) -> dict[str, tuple[Any, bool]]:
    """Each field's type and whether it is required (worked out once per class)."""
    known = _FIELDS.get(cls)
    if known is not None:
        return known
    hints = get_type_hints(cls)
    _FIELDS[cls] = {
        f.name: (
            hints[f.name],
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    }
    return _FIELDS[cls]


def plain_record(cls: type[Any], raw: Any) -> Any:
    """``cls(**raw)`` when ``raw`` plainly is one (known keys, the required ones present,
    values of the declared types, the class's own checks passed), else None."""
    if not isinstance(raw, dict):
        return None
    fields = _fields(cls)
    if set(raw) - set(fields) or any(req and n not in raw for n, (_, req) in fields.items()):
        return None
    try:
        return cls(**{key: _plain(fields[key][0], value) for key, value in raw.items()})
    except (_NotPlain, ValueError):
        return None
