"""The HIP build switch of each CUDA build switch a release workflow hands to a vendored
build (``release_switches.toml``, each entry with its sources and date), and the AMD GPU
targets a ROCm wheel is built for. ``gpuport port``'s ROCm release workflow reads it."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuport import textre
from gpuport.knowledge.plain import sourced
from gpuport.models import GpuportError

__all__ = ["ReleaseSwitches", "Switch", "load_release_switches", "parse"]

_FILE = Path(__file__).with_name("release_switches.toml")
_TARGETS = r"gfx[0-9a-f]+(;gfx[0-9a-f]+)*"


@dataclass(frozen=True)
class Switch:
    cuda: str
    hip: tuple[str, ...]
    summary: str
    sources: tuple[str, ...]
    checked: dt.date


@dataclass(frozen=True)
class ReleaseSwitches:
    switches: tuple[Switch, ...]
    amdgpu_targets: str
    sources: tuple[str, ...]
    checked: dt.date

    def hip_for(self, cuda: str) -> Switch | None:
        """The entry for CUDA option ``cuda`` (case as CMake reads it: exact), or None."""
        return next((s for s in self.switches if s.cuda == cuda), None)


def _sourced(raw: dict[str, Any], where: str) -> tuple[tuple[str, ...], dt.date]:
    try:
        return sourced(raw, where)
    except ValueError as exc:
        raise GpuportError(f"{_FILE.name}: {exc}") from None


def _option(value: Any, where: str) -> str:
    if not isinstance(value, str) or not textre.fullmatch(r"[A-Z][A-Z0-9_]*", value):
        raise GpuportError(f"{_FILE.name}: {where}: {value!r} is not a CMake option name")
    return value


def parse(data: dict[str, Any]) -> ReleaseSwitches:
    """Validate the loaded TOML: every entry sourced and dated, option names plain."""
    switches: list[Switch] = []
    for i, raw in enumerate(data.get("switch", [])):
        where = f"switch #{i + 1}"
        extra = set(raw) - {"cuda", "hip", "summary", "sources", "checked"}
        if extra:
            raise GpuportError(f"{_FILE.name}: {where}: unknown keys {sorted(extra)}")
        sources, checked = _sourced(raw, where)
        hip = raw.get("hip")
        if not isinstance(hip, list) or not hip:
            raise GpuportError(f"{_FILE.name}: {where}: hip must be a non-empty list")
        summary = raw.get("summary")
        if not isinstance(summary, str) or not summary:
            raise GpuportError(f"{_FILE.name}: {where}: summary must be a non-empty string")
        switches.append(
            Switch(
                cuda=_option(raw.get("cuda"), where),
                hip=tuple(_option(h, where) for h in hip),
                summary=summary,
                sources=sources,
                checked=checked,
            )
        )
    release = data.get("release")
    if not isinstance(release, dict):
        raise GpuportError(f"{_FILE.name}: [release] is missing")
    sources, checked = _sourced(release, "release")
    targets = release.get("amdgpu_targets")
    if not isinstance(targets, str) or not textre.fullmatch(_TARGETS, targets):
        raise GpuportError(f"{_FILE.name}: release: amdgpu_targets must be gfxN;gfxM...")
    return ReleaseSwitches(
        switches=tuple(switches), amdgpu_targets=targets, sources=sources, checked=checked
    )


@functools.cache
def load_release_switches() -> ReleaseSwitches:
    """The bundled table (read once, through the file layer as every knowledge file)."""
    from gpuport.knowledge import _read_toml

    return parse(_read_toml(_FILE))
