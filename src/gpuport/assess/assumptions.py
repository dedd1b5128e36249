"""What an assessment assumed, each with its origin: the list every format shows.

Why one list: an answer such as "ROCm wins on cost" rests on a model, a workload, GPUs and
their prices that someone chose, or that gpuport chose for them. A reader must see which it
was (a flag, the project's settings, found in the code at file:line, the catalog, a default)
before trusting the answer; the terminal, JSON, Markdown and HTML all render this list.
"""

from __future__ import annotations

from pathlib import Path

from gpuport.assess.config import Settings
from gpuport.assess.detect import CodeFacts
from gpuport.assess.model import Assumed, AssumedOrigin, CostSection, HipifySection


def _origin(settings: Settings, attr: str) -> AssumedOrigin:
    return settings.origin(attr)


def _where(settings: Settings, attr: str) -> str:
    """Where a value came from when that is a file: the settings file, or a place in code."""
    origin = settings.origin(attr)
    if origin in ("gpuport.toml", "pyproject.toml") and settings.config_file:
        return settings.config_file
    if origin == "detected":
        return (settings.details or {}).get(attr, "")
    return ""


def _detail(settings: Settings, attr: str) -> str:
    return "" if settings.origin(attr) == "detected" else (settings.details or {}).get(attr, "")


def collect(
    settings: Settings,
    code: CodeFacts,
    hipify: HipifySection,
    cost: CostSection,
    *,
    project_given: bool = True,
) -> list[Assumed]:
    """Every assumption of the report, in reading order (see the module docstring)."""
    out = [
        Assumed(
            name="project",
            label="project",
            value=str(settings.root) if project_given else str(settings.root.resolve()),
            origin="argument" if project_given else "default",
            detail="" if project_given else "no PATH given: the current folder",
            change="gpuport assess PATH",
        ),
        Assumed(
            name="target",
            label="AMD target",
            value=", ".join(settings.targets),
            origin=_origin(settings, "targets"),
            where=_where(settings, "targets"),
            change="--target",
        ),
        _workload(settings, code),
        _model(settings, code),
        Assumed(
            name="gpus",
            label="GPUs compared",
            value=", ".join(settings.gpus),
            origin=_origin(settings, "gpus"),
            where=_where(settings, "gpus"),
            change="--gpus",
        ),
        *_prices(settings, cost),
        _hip(settings, hipify),
    ]
    if cost.status == "ok":
        out += _request(settings, cost)
    return out


def _workload(settings: Settings, code: CodeFacts) -> Assumed:
    value = "training" if settings.train else "serving (inference)"
    detail = _detail(settings, "train")
    if settings.origin("train") == "default":
        elsewhere = [p for p in code.training if p.scope != "core"]
        detail = "no training code in core code (no Trainer, optimizer step or .backward())"
        if elsewhere:
            detail += f"; training code only in {elsewhere[0].scope} code ({elsewhere[0]})"
    return Assumed(
        name="workload",
        label="workload",
        value=value,
        origin=_origin(settings, "train"),
        where=_where(settings, "train"),
        detail=detail,
        change="--train / --serve",
    )


def _model(settings: Settings, code: CodeFacts) -> Assumed:
    offered = [
        f"{key} ({place.path}:{place.line}" + (f", {place.note})" if place.note else ")")
        for key, place in code.offered_models()
    ]
    if settings.model_config is not None:
        return Assumed(
            name="model",
            label="model",
            value=f"config {settings.model_config}",
            origin=_origin(settings, "model_config"),
            where=_where(settings, "model_config"),
            change="--model-config FILE",
        )
    if settings.models:
        return Assumed(
            name="model",
            label="model",
            value=", ".join(settings.models),
            origin=_origin(settings, "models"),
            where=_where(settings, "models"),
            detail=(
                "named in core code; declare it to be sure"
                if settings.origin("models") == "detected"
                else ""
            ),
            offered=offered,
            change="--model NAME",
        )
    detail = "no model named in core code and none declared: cost is not estimated"
    if offered:  # listed by every format from `offered`
        detail += "; models are named only outside core code"
    return Assumed(
        name="model",
        label="model",
        value="none",
        origin="default",
        detail=detail,
        offered=offered,
        change="--model NAME",
    )


def _prices(settings: Settings, cost: CostSection) -> list[Assumed]:
    if cost.status != "ok" or not cost.reports:
        return [
            Assumed(
                name="price",
                label="GPU prices",
                value="not used",
                origin=_origin(settings, "prices"),
                detail="no model priced",
                change="--price GPU=USD",
            )
        ]
    out = []
    for rec in cost.reports[0].records:
        price = rec.price
        if price is None:
            out.append(
                Assumed(
                    name="price",
                    label=f"price of {rec.name}",
                    value="none",
                    origin="catalog",
                    detail="the catalog has no price for it: no $/Mtok",
                    change="--price GPU=USD",
                )
            )
            continue
        given = price.origin == "flag"
        source = ", ".join(x for x in (price.provider, str(price.date or ""), price.source) if x)
        out.append(
            Assumed(
                name="price",
                label=f"price of {rec.name}",
                value=f"${price.usd_per_hour:.2f}/GPU-h" + ("" if given else f" {price.kind}"),
                origin=_origin(settings, "prices") if given else "catalog",
                where=_where(settings, "prices") if given else source,
                change="--price GPU=USD",
            )
        )
    return out


def _hip(settings: Settings, hipify: HipifySection) -> Assumed:
    return Assumed(
        name="hip_version",
        label="HIP version",
        value=settings.hip_version,
        origin=_origin(settings, "hip_version"),
        where=_where(settings, "hip_version"),
        detail="; ".join(
            x
            for x in (
                _detail(settings, "hip_version"),
                "" if hipify.ran else "no CUDA/C++ source to translate",
            )
            if x
        ),
        change="--hip-version",
    )


def _request(settings: Settings, cost: CostSection) -> list[Assumed]:
    given = settings.concurrency is not None
    return [
        Assumed(
            name="dtype",
            label="weights",
            value=settings.dtype,
            origin=_origin(settings, "dtype"),
            where=_where(settings, "dtype"),
            change="--dtype",
        ),
        Assumed(
            name="context",
            label="context",
            value=f"{settings.context} tokens",
            origin=_origin(settings, "context"),
            where=_where(settings, "context"),
            change="--context",
        ),
        Assumed(
            name="concurrency",
            label="concurrency",
            value=str(settings.concurrency) if given else "chosen by the cost model",
            origin=_origin(settings, "concurrency"),
            where=_where(settings, "concurrency"),
            detail="" if given else cost.reports[0].concurrency_basis,
            change="--concurrency",
        ),
    ]


def project_root(path: Path | None) -> tuple[Path, bool]:
    """The project to assess: ``path``, or the current folder when none is given (never
    the bundled example: that is assessed only when named)."""
    return (path, True) if path is not None else (Path(), False)


__all__ = ["collect", "project_root"]
