"""The pydantic models of the package catalog: every entry's sources and date (``Sourced``,
also the base of the GPU and model catalogs), and a package's ROCm status and route.

Apart from :mod:`gpuport.knowledge` so that importing that package does not import pydantic
(``gpuport hipify``, start-up, issue 18); ``gpuport.knowledge.PackageInfo`` and the others are
still there, imported from here on first use.
"""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuport import textre
from gpuport.knowledge import PackageStatus, RouteKind, VerifiedFact, normalize_name
from gpuport.knowledge.plain import check_sources

__all__ = ["PackageInfo", "Route", "Sourced"]


class Sourced(BaseModel):
    """Every knowledge entry says where its facts come from and when they were checked."""

    # schemas built on first use, not at import: a command that reads no package catalog
    # does not pay for its models (start-up, issue 18)
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    sources: list[str] = Field(min_length=1)
    checked: dt.date
    verified: list[VerifiedFact] = Field(
        default_factory=list,
        description="what was checked against the sources on the `checked` date",
    )

    @field_validator("sources")
    @classmethod
    def _urls(cls, value: list[str]) -> list[str]:
        return check_sources(value)


class Route(BaseModel):
    """How to get the package working on ROCm."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    kind: RouteKind
    how: str = Field(description="one sentence a user can act on")
    index_url: str | None = None
    replacement: str | None = None
    command: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    build_flags: str | None = None
    rocm: list[str] = Field(
        default_factory=list,
        description=(
            "the ROCm releases the wheels, images or builds this route names are published "
            "for (e.g. 7.1, 7.14, 10.1); empty where the route does not depend on one"
        ),
    )

    @field_validator("rocm")
    @classmethod
    def _rocm_versions(cls, value: list[str]) -> list[str]:
        bad = [v for v in value if not textre.fullmatch(r"\d+\.\d+(\.\d+)?", v)]
        if bad:
            raise ValueError(f"ROCm releases are MAJOR.MINOR[.PATCH]: {bad}")
        return value


class PackageInfo(Sourced):
    """ROCm status of one Python distribution (and the modules it provides)."""

    name: str
    aliases: list[str] = Field(default_factory=list, description="other names; globs allowed")
    imports: list[str] = Field(default_factory=list, description="import names, dotted allowed")
    status: PackageStatus
    summary: str
    route: Route = Field(default_factory=lambda: Route(kind="none", how="no special route"))
    min_version: str | None = Field(default=None, description="first version usable on ROCm")
    caveats: dict[str, str] = Field(default_factory=dict, description="by family: cdna, rdna, all")
    category: str = "library"
    cuda_at_build_time: bool = Field(
        default=False,
        description=(
            "a code generator (cumm, pccm): the CUDA a project builds with it is written at "
            "build or JIT time, so a scan of the project's tree does not see it"
        ),
    )

    def matches(self, dist_name: str) -> bool:
        norm = normalize_name(dist_name)
        if norm == normalize_name(self.name):
            return True
        return any(textre.glob(normalize_name(a)).match(norm) for a in self.aliases)
