"""Libraries projects copy whole into their tree (``vendored_projects.toml``).

:mod:`gpuport.scan.project.vendored_copies` recognises such a copy by the name its own build
files declare. Every entry carries its sources and the date they were checked.
"""

from __future__ import annotations

from functools import cache

from pydantic import Field

from gpuport.knowledge import KNOWLEDGE_DIR, _entries, _validated
from gpuport.knowledge.schema import Sourced

__all__ = ["VendoredProject", "declared_names"]

VENDORED_TOML = KNOWLEDGE_DIR / "vendored_projects.toml"


class VendoredProject(Sourced):
    """One library and the names its own CMakeLists.txt / pyproject.toml declare."""

    name: str
    declares: list[str] = Field(min_length=1)


@cache
def declared_names() -> dict[str, str]:
    """Declared name (lower case) -> the library's name, from the bundled file."""
    items = _validated(VendoredProject, VENDORED_TOML, _entries(VENDORED_TOML, "project"))
    return {d.lower(): item.name for item in items for d in item.declares}
