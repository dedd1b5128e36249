"""Libraries projects copy whole into their tree (``vendored_projects.toml``).

:mod:`gpuport.scan.project.vendored_copies` recognises such a copy by the name its own build
files declare. Every entry carries its sources and the date they were checked. A stdlib
dataclass read plainly (the file layer walk behind ``gpuport hipify`` consults it, and hipify
starts without pydantic: issue 18); pydantic validates the file when it does not plainly fit,
and the test suite validates it whole.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache
from typing import Any

from gpuport.knowledge import KNOWLEDGE_DIR, _entries, _validated
from gpuport.knowledge.plain import FORBID_EXTRA, check_sources, plain_record

__all__ = ["VendoredProject", "declared_names", "load_vendored_projects"]

VENDORED_TOML = KNOWLEDGE_DIR / "vendored_projects.toml"


@dataclass(frozen=True)
class VendoredProject:
    """One library and the names its own CMakeLists.txt / pyproject.toml declare."""

    __pydantic_config__ = FORBID_EXTRA

    sources: list[str]
    checked: dt.date
    name: str
    declares: list[str]
    layout: list[str]
    licence: list[str]

    def __post_init__(self) -> None:
        check_sources(self.sources)
        if not self.declares:
            raise ValueError("declares: at least one name is needed")
        if not self.layout or any(p.startswith("/") or ".." in p for p in self.layout):
            raise ValueError("layout: at least one relative path inside the copy is needed")
        if not self.licence or not all(w.strip() for w in self.licence):
            raise ValueError("licence: at least one word its licence file holds is needed")


def load_vendored_projects() -> list[VendoredProject]:
    """The bundled entries, read plainly when every one fits, else validated by pydantic."""
    raw: list[Any] = _entries(VENDORED_TOML, "project")
    plain = [plain_record(VendoredProject, e) if isinstance(e, dict) else None for e in raw]
    items = [p for p in plain if p is not None]
    if len(items) != len(raw):
        items = _validated(VendoredProject, VENDORED_TOML, raw)
    return items


@cache
def declared_names() -> dict[str, VendoredProject]:
    """Declared name (lower case) -> the library."""
    return {d.lower(): p for p in load_vendored_projects() for d in p.declares}
