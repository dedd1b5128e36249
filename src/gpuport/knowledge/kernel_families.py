"""Kernel families and their AMD library equivalents (``kernel_families.toml``).

The effort model (:mod:`gpuport.scan.effort`) names each kernel family it finds (attention,
decode attention, GEMM, expert-parallel communication ...) from the words in its folder and
file names, or from the library its files use, and costs it as *integration* when an AMD
library covers it, else as a *re-implementation*. Every entry carries its sources and the
date they were checked; ``--knowledge DIR`` may extend or override entries by name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import Self

from pydantic import Field, model_validator

from gpuport import textre
from gpuport.knowledge import KNOWLEDGE_DIR, _entries, _merge, _user_file, _validated
from gpuport.knowledge.schema import Sourced

__all__ = ["KernelFamilyInfo", "classify", "load_families", "words"]

FAMILIES_TOML = KNOWLEDGE_DIR / "kernel_families.toml"
#: the catch-all entry: a family no other entry matches
OTHER = "other kernels"


class KernelFamilyInfo(Sourced):
    """One kind of kernel: how to recognise it and what porting it takes."""

    name: str
    match: list[str] = Field(description="words of folder and file names that name it")
    libraries: list[str] = Field(default_factory=list, description="GP315 libraries it uses")
    reimplement_days: tuple[float, float]
    integration_days: tuple[float, float]
    equivalents: list[str] = Field(description="AMD libraries that cover it; empty: none")
    since: str = Field(default="", description="year-month the first equivalent was usable")

    @model_validator(mode="after")
    def _ranges(self) -> Self:
        for what, (lo, hi) in (
            ("reimplement_days", self.reimplement_days),
            ("integration_days", self.integration_days),
        ):
            if not 0 < lo <= hi:
                raise ValueError(f"{what} must be 0 < low <= high, got ({lo}, {hi})")
        if any(w != w.lower() for w in self.match):
            raise ValueError("match words must be lower case")
        return self

    @property
    def has_equivalent(self) -> bool:
        return bool(self.equivalents)


@cache
def load_families(user_dir: Path | None = None) -> tuple[KernelFamilyInfo, ...]:
    """The bundled families in file order (first match wins), ``user_dir``'s merged by name;
    the catch-all ``other kernels`` entry always last."""
    items = _validated(KernelFamilyInfo, FAMILIES_TOML, _entries(FAMILIES_TOML, "family"))
    extra_path = _user_file(user_dir, "kernel_families.toml")
    if extra_path is not None:
        extra = _validated(KernelFamilyInfo, extra_path, _entries(extra_path, "family"))
        items = _merge(items, extra, "name")
    rest = [f for f in items if f.name != OTHER]
    other = [f for f in items if f.name == OTHER]
    return (*rest, *other)


_SPLIT = textre.compile(r"[^a-z]+")


def words(paths: Iterable[str]) -> set[str]:
    """The lower-case words of ``paths``: split at anything not a letter, plus each path
    segment whole (``fused_moe``, ``sparse24`` as written), file extensions dropped."""
    out: set[str] = set()
    for path in paths:
        for segment in path.lower().split("/"):
            stem = segment.rsplit(".", 1)[0] if "." in segment else segment
            out.add(stem)
            out.update(w for w in _SPLIT.split(stem) if w)
    return out


def classify(
    paths: Sequence[str], libraries: Iterable[str], families: Sequence[KernelFamilyInfo]
) -> KernelFamilyInfo:
    """The first family whose library or match word the paths show; the catch-all else."""
    libs = {lib.lower() for lib in libraries}
    found = words(paths)
    for fam in families:
        if fam.name == OTHER:
            continue
        if libs & {lib.lower() for lib in fam.libraries} or found & set(fam.match):
            return fam
    return next(f for f in families if f.name == OTHER)
