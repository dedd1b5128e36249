"""The rule families, one subpackage each, loaded on demand.

Each family sits in its own folder, found from a rule's ID (``GP3xx`` is ``native/``): the
detector modules, the rule metadata and the annotated fixtures (``<family>/fixtures/``)
together. Importing a family's ``checker`` module (``rules`` for the environment family, whose
checks live in :mod:`gpuport.doctor`) registers its rules and checkers in :mod:`base`; its
other modules can be imported alone (hipify reuses the native and build helpers).

Importing this package loads no family. The scanner asks :func:`checkers_for` for the
checkers of one file kind, which loads only the families that read that kind (``gpuport
hipify``'s hazard pass loads the native family alone); ``RULES``, ``CHECKERS`` and
:func:`rules_sorted` taken from this package load every family first, so a caller that
lists or looks up rules always sees the whole registry.
"""

from __future__ import annotations

import importlib
from typing import Any

from gpuport.scan.rules import base
from gpuport.scan.rules.base import Checker, FileContext, FileKind, Rule

#: The families, in the order their checkers run on a file several families read.
FAMILIES = ("build", "containers", "deps", "environment", "native", "python")

#: The families that read each file kind (``tests/scan/test_registry.py`` checks it
#: against the checkers the families register).
KIND_FAMILIES: dict[FileKind, tuple[str, ...]] = {
    FileKind.REQUIREMENTS: ("deps",),
    FileKind.PYPROJECT: ("deps",),
    FileKind.SETUP_PY: ("build", "deps"),
    FileKind.SETUP_CFG: ("deps",),
    FileKind.CONDA_ENV: ("deps",),
    FileKind.DOCKERFILE: ("containers",),
    FileKind.COMPOSE: ("containers",),
    FileKind.PYTHON: ("python",),
    FileKind.NATIVE: ("native",),
    FileKind.CMAKE: ("build",),
    FileKind.MAKEFILE: ("build", "containers"),
    FileKind.GPU_BINARY: ("native",),
}


#: A rule ID's hundreds digit names its family's folder: GP302 -> ``native/``.
_BY_DIGIT = dict(
    zip("123456", ("deps", "python", "native", "build", "containers", "environment"), strict=True)
)


def family_for_id(rule_id: str) -> str:
    """The family folder a rule ID lives in (``GP302`` -> ``native``); ValueError if none."""
    digit = rule_id[2:3] if rule_id[:2].upper() == "GP" else ""
    if digit not in _BY_DIGIT:
        raise ValueError(f"not a gpuport rule ID: {rule_id!r}")
    return _BY_DIGIT[digit]


def load(*families: str) -> None:
    """Import these families (once; Python caches the import), registering their rules."""
    for family in families:
        if family not in FAMILIES:
            raise ValueError(f"unknown rule family {family!r}")
        entry = "rules" if family == "environment" else "checker"  # doctor's GP6xx: metadata only
        importlib.import_module(f"gpuport.scan.rules.{family}.{entry}")


def load_all() -> dict[str, Rule]:
    """Every family loaded; the whole registry."""
    load(*FAMILIES)
    return base.RULES


def family_of(module: str) -> str:
    """The family a module of this package belongs to (``...rules.native.warp`` -> native)."""
    parts = module.split(".")
    return parts[3] if len(parts) > 3 and parts[:3] == ["gpuport", "scan", "rules"] else ""


def checkers_for(kind: FileKind) -> list[Checker]:
    """The checkers that read files of this kind, their families loaded first, in
    :data:`FAMILIES` order (the same whichever family happened to load first)."""
    load(*KIND_FAMILIES.get(kind, ()))
    order = {family: i for i, family in enumerate(FAMILIES)}
    found = base.CHECKERS.get(kind, [])
    return sorted(found, key=lambda fn: order.get(family_of(fn.__module__), len(order)))


def rules_sorted() -> list[Rule]:
    load_all()
    return base.rules_sorted()


def __getattr__(name: str) -> Any:
    """``RULES`` and ``CHECKERS``: the whole registry, every family loaded."""
    if name in ("RULES", "CHECKERS"):
        load_all()
        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CHECKERS",
    "FAMILIES",
    "KIND_FAMILIES",
    "RULES",
    "FileContext",
    "FileKind",
    "Rule",
    "checkers_for",
    "family_for_id",
    "load",
    "load_all",
    "rules_sorted",
]
