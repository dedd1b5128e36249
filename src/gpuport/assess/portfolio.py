"""Many projects at once: one portfolio row per project (verdict, effort, top blockers, the cost
decision), assessed in parallel on every core.

Why: a platform team decides for an organisation, not for one repository. The same flags apply
to every project (each project's own ``[tool.gpuport]`` or ``gpuport.toml`` still applies to
it), each project is assessed exactly as ``gpuport assess PATH`` would, and the rows keep what
the decision needs, with each project's assumed model and workload so the rows can be compared.
A project that cannot be assessed (nothing to assess, a bad settings file) is a row with its
error; the others are still reported.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpuport import fileio
from gpuport.assess.model import Assessment, Readiness
from gpuport.models import SCHEMA_VERSION, EnvFingerprint, GpuportError, Severity

MAX_PROJECTS = 10_000
TOP_BLOCKERS = 3


class PortfolioRow(BaseModel):
    """One project of the portfolio: what ``gpuport assess PATH`` concluded, in one row."""

    model_config = ConfigDict(frozen=True)

    project: str
    verdict: Readiness | None = Field(default=None, description="None when it failed")
    verdict_reason: str = ""
    effort: str = Field(default="", description="'5–11.5 engineer-days' or 'no listed work'")
    effort_hours: float = 0.0
    blockers: list[str] = Field(
        default_factory=list, description="the first blocking conclusions' titles"
    )
    blocker_count: int = 0
    cost: str = Field(default="", description="the cost decision, or why there is none")
    model: str = Field(default="", description="the model priced, and where it came from")
    workload: str = Field(default="", description="serving or training, and where from")
    decision: str = ""
    error: str | None = Field(default=None, description="why the project was not assessed")


class Portfolio(BaseModel):
    """``gpuport assess A B C …``: one row per project, and the counts over all of them."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["gpuport.assess.portfolio"] = "gpuport.assess.portfolio"
    schema_version: str = SCHEMA_VERSION
    projects: list[PortfolioRow]
    counts: dict[str, int] = Field(description="projects per verdict, and 'error'")
    hours: float = Field(description="listed work over every assessed project")
    workers: int = Field(description="processes the projects were assessed in")
    seconds: float
    env: EnvFingerprint

    @property
    def worst(self) -> Readiness | None:
        verdicts = [r.verdict for r in self.projects if r.verdict is not None]
        return max(verdicts, key=lambda v: v.rank, default=None)


def row_of(a: Assessment) -> PortfolioRow:
    """The portfolio row of one assessment."""
    blocking = [c.title for c in a.conclusions if c.severity is Severity.BLOCKER]
    price = next((c for c in a.conclusions if c.id.startswith("price-")), None)
    if price is not None:
        cost = price.title
    elif a.cost.status != "ok":
        cost = a.cost.message or "not estimated"
    else:
        cost = "no price comparison (see the report)"
    assumed = {x.name: x for x in a.assumptions}

    def said(name: str) -> str:
        x = assumed.get(name)
        if x is None:
            return ""
        where = f": {x.where}" if x.where else ""
        return f"{x.value} ({x.origin}{where})"

    return PortfolioRow(
        project=a.project,
        verdict=a.verdict,
        verdict_reason=a.verdict_reason,
        effort=a.effort.days(),
        effort_hours=a.effort.hours,
        blockers=blocking[:TOP_BLOCKERS],
        blocker_count=len(blocking),
        cost=cost,
        model=said("model"),
        workload=said("workload"),
        decision=a.decision,
    )


def read_list(path: Path) -> list[Path]:
    """Project folders from a list file: one per line, ``#`` comments and blank lines skipped;
    relative paths are relative to the list file's folder."""
    text = fileio.read_text(path, limit=fileio.LIMIT_SETTINGS, errors="replace")
    out = []
    for line in text.splitlines():
        item = line.split("#", 1)[0].strip()
        if "\0" in item:
            raise GpuportError(f"{path}: a line holds a NUL byte, which no path can")
        if item:
            try:
                p = Path(item).expanduser()
            except RuntimeError as exc:  # `~nosuchuser/...`
                raise GpuportError(f"{path}: {item!r}: {exc}") from None
            out.append(p if p.is_absolute() else path.parent / p)
    if not out:
        raise GpuportError(f"{path} lists no project folder (one per line)")
    return out


def _one(job: tuple[Path, Mapping[str, Any]]) -> tuple[str, str | None, str | None]:
    """Assess one project in a worker: (project, the assessment as JSON or None, error)."""
    from gpuport.assess import AssessOptions, assess, load_settings

    path, flags = job
    try:
        settings = load_settings(path, flags)
        result = assess(settings, AssessOptions(scan_jobs=1))
    except GpuportError as exc:
        return str(path), None, str(exc)
    except Exception as exc:  # a bug on one project must not lose the others' rows
        return str(path), None, f"internal error: {type(exc).__name__}: {exc}"
    return str(path), result.model_dump_json(by_alias=True), None


def assess_many(
    paths: Sequence[Path],
    flags: Mapping[str, Any],
    *,
    workers: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Portfolio:
    """Assess every project in ``paths`` with the same ``flags``, one process per core; the
    rows keep the order of ``paths``. Folders that do not exist are refused before any work."""
    if not paths:
        raise GpuportError("no project to assess")
    if len(paths) > MAX_PROJECTS:
        raise GpuportError(f"{len(paths)} projects: at most {MAX_PROJECTS:,} in one portfolio")
    seen: set[str] = set()
    unique = []
    for p in paths:
        if not p.is_dir():
            what = "does not exist" if not p.exists() else "is not a folder"
            raise GpuportError(f"{p} {what}; a portfolio takes project folders")
        key = str(p.resolve())
        if key not in seen:
            seen.add(key)
            unique.append(p)
    t0 = time.perf_counter()
    n = max(1, min(workers or os.cpu_count() or 1, len(unique)))
    jobs = [(p, dict(flags)) for p in unique]
    done: dict[str, tuple[str | None, str | None]] = {}
    if n == 1:
        results = map(_one, jobs)
        for i, (name, data, error) in enumerate(results, 1):
            done[name] = (data, error)
            if progress:
                progress(i, len(jobs))
    else:
        ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx) as pool:
            for i, (name, data, error) in enumerate(pool.map(_one, jobs), 1):
                done[name] = (data, error)
                if progress:
                    progress(i, len(jobs))
    rows = []
    for p in unique:
        data, error = done[str(p)]
        if data is None:
            rows.append(PortfolioRow(project=str(p), error=error))
        else:
            rows.append(row_of(Assessment.model_validate_json(data)))
    counts = Counter(r.verdict.value if r.verdict is not None else "error" for r in rows)
    return Portfolio(
        projects=rows,
        counts=dict(sorted(counts.items())),
        hours=round(sum(r.effort_hours for r in rows), 2),
        workers=n,
        seconds=round(time.perf_counter() - t0, 3),
        env=EnvFingerprint.collect(),
    )


__all__ = ["Portfolio", "PortfolioRow", "assess_many", "read_list", "row_of"]
