"""The seeds' criteria that rest on figures rather than code: memory, price, speed, numerics.

"Models that push past 80 GB fit on one MI300X and avoid tensor parallelism", "per gigabyte
the MI300X is roughly half the price", "10-25 % slower", "run your experiments on ROCm to
validate": each is checked here against this project's own cost estimate, bench runs and
validate reports, and each conclusion links to the figure it used.
"""

from __future__ import annotations

from gpuport.assess.criteria import PRICE_NOISE, RATIO_NOISE
from gpuport.assess.facts import Facts, anchor, plural
from gpuport.assess.model import Conclusion, Evidence, Leans
from gpuport.bench.model import FamilySummary
from gpuport.cost.model import CostReport, GpuCost
from gpuport.knowledge.gpus import load_gpus
from gpuport.models import Severity


def _vendor(gpu: str) -> str:
    spec = load_gpus().get(gpu)
    return spec.vendor if spec is not None else "unknown"


def _cost_evidence(report: CostReport, rec: GpuCost, value: str) -> Evidence:
    return Evidence(
        kind="cost",
        ref=rec.gpu,
        label=f"{rec.name}: {value}",
        anchor=anchor("cost", report.model.key, rec.gpu),
        value=value,
    )


def _short(name: str) -> str:
    """``MI325X`` for "AMD Instinct MI325X", ``H100 SXM5 80GB`` for "NVIDIA H100 SXM5 80GB"."""
    return name.replace("AMD Instinct ", "").replace("NVIDIA ", "")


def _names(recs: list[GpuCost]) -> str:
    return ", ".join(r.name for r in recs)


def _need_gb(rec: GpuCost, concurrency: int | None) -> float:
    """Weights plus the KV cache of the declared concurrency (one sequence when automatic):
    what one replica must hold, whichever GPU it runs on (the runtime's reserve aside)."""
    return rec.weights_gb + rec.kv_gb_per_sequence * (concurrency or 1)


def memory_per_replica(facts: Facts) -> list[Conclusion]:
    """Seed: "needs more than 80 GB per replica → MI300X/MI325X hold it on one GPU, no TP".

    The need is compared with the memory a GPU can use (the cost model's ``usable``), and
    the threshold in the title is that of the largest candidate that does not hold a replica
    whole, so the title and the statement cannot disagree.
    """
    out: list[Conclusion] = []
    for report in facts.cost.reports:
        if report.mode != "inference" or not report.records:
            continue
        recs = [r for r in report.records if r.tp_degree is not None]
        never = [r for r in report.records if r.gpus_needed is None]
        need = _need_gb(report.records[0], facts.settings.concurrency)
        single = [r for r in recs if r.fits]
        multi = [r for r in recs if not r.fits]
        model = report.model.name
        seqs = facts.settings.concurrency or 1
        load = (
            f"{model} ({report.model.key}) needs about {need:.0f} GB per replica (weights "
            f"{report.records[0].weights_gb:.0f} GB + KV cache for {plural(seqs, 'sequence')} "
            f"of {facts.settings.context} tokens, plus the runtime's reserve)"
        )
        usable = "; ".join(f"{_short(r.name)} {r.usable_gb_per_gpu:.0f} GB" for r in report.records)
        evidence = [
            _cost_evidence(report, r, f"TP {_holds_on(r)}, {r.memory_gb_per_gpu or 0:.0f} GB/GPU")
            for r in recs
        ] + [_cost_evidence(report, r, "never fits") for r in never]
        leans: Leans = "neutral"
        recommendation = (
            "Prefer a GPU that holds a replica whole: tensor parallelism adds all-reduce "
            "traffic on every layer and needs NVLink/xGMI to scale."
        )
        apart = multi + never  # candidates that do not hold a replica on one GPU
        if not recs:
            title = f"{model} fits on no candidate GPU"
            statement = (
                f"{load}: no candidate holds it, not even split over its widest "
                f"tensor-parallel group. Usable per GPU: {usable}."
            )
            recommendation = (
                "Lower the context or the concurrency, quantise the weights (dtype fp8 or "
                "int8), or add a larger GPU to `gpus`."
            )
        elif not apart:
            title = f"{model} fits on one GPU of every candidate"
            statement = f"{load}: every candidate holds a replica on one GPU."
            recommendation = "Memory does not decide here; compare price and speed."
        else:
            largest = max(apart, key=lambda r: r.usable_gb_per_gpu)
            threshold = largest.usable_gb_per_gpu
            head = f"Needs > {threshold:.0f} GB per replica"
            if need <= threshold:
                head += " with the runtime's reserve"
            amd_single = [r for r in single if _vendor(r.gpu) == "amd"]
            nv_single = [r for r in single if _vendor(r.gpu) == "nvidia"]
            if amd_single and not nv_single:
                leans = "rocm"
                names = "/".join(_short(r.name) for r in amd_single)
                verb = "avoids" if len(amd_single) == 1 else "avoid"
                title = f"{head}: {names} {verb} tensor parallelism"
            elif nv_single and not amd_single:
                leans = "cuda"
                title = f"{head}: only NVIDIA candidates fit on one GPU"
            elif single:
                title = f"{model} needs tensor parallelism on some candidates"
            else:
                title = f"{head}: no candidate holds a replica on one GPU"
                leans = _fewer_gpus(multi)
            fits = _names(single) or "no candidate"
            statement = (
                f"{load}; usable per GPU: {usable} ({largest.name} is the largest that does "
                f"not hold it whole). One GPU holds it on: {fits}."
            )
            if multi:
                split = ", ".join(f"{r.name} (TP {_holds_on(r)})" for r in multi)
                statement += f" Split over several: {split}."
        if never and recs:
            statement += " Never fits: " + _names(never) + "."
        out.append(
            Conclusion(
                id=f"memory-{anchor(report.model.key)}",
                title=title,
                statement=statement,
                recommendation=recommendation,
                severity=Severity.INFO,
                leans=leans,
                evidence=evidence,
            )
        )
    return out


def _holds_on(rec: GpuCost) -> int | None:
    """The narrowest tensor-parallel group that holds a replica (not the throughput plan)."""
    return rec.fits_on_tp if rec.fits_on_tp is not None else rec.tp_degree


def _fewer_gpus(recs: list[GpuCost]) -> Leans:
    by_vendor: dict[str, int] = {}
    for r in recs:
        v = _vendor(r.gpu)
        by_vendor[v] = min(by_vendor.get(v, 10**6), _holds_on(r) or 10**6)
    amd, nv = by_vendor.get("amd"), by_vendor.get("nvidia")
    if amd is None or nv is None or amd == nv:
        return "neutral"
    return "rocm" if amd < nv else "cuda"


def _usd(rec: GpuCost, train: bool) -> float | None:
    return rec.usd_per_mtok_train if train else rec.usd_per_mtok_output


def price_per_mtok(facts: Facts) -> list[Conclusion]:
    """Seed: "the cost difference is real": $ per million tokens, cheapest AMD vs NVIDIA."""
    out: list[Conclusion] = []
    for report in facts.cost.reports:
        train = report.mode == "training"
        what = "trained" if train else "output"
        comparable, other_kind = report.comparable()
        priced = [r for r in comparable if _usd(r, train) is not None]
        if not priced:
            continue
        no_price = [r for r in report.records if r.usd_per_hour is None]
        unpriced = (
            f" Not priced: {', '.join(r.name for r in no_price)} (no catalog price; give one "
            "with --price GPU=USD or `prices` in the settings)."
            if no_price
            else ""
        )
        amd = [r for r in priced if _vendor(r.gpu) == "amd"]
        nv = [r for r in priced if _vendor(r.gpu) == "nvidia"]
        evidence = [
            _cost_evidence(report, r, f"${_usd(r, train) or 0:.3g}/Mtok {what}, {_deploy(r)}")
            for r in priced
        ]
        basis = _basis(priced)
        if other_kind:
            unpriced += (
                " Left out of the comparison (priced by another kind than "
                f"{report.price_kind}): {', '.join(r.name for r in other_kind)}."
            )
        key = report.model.key
        if not amd or not nv:
            best = min(priced, key=lambda r: _usd(r, train) or 0)
            vendor = "AMD" if not amd else "NVIDIA"
            listed = [r for r in report.records if _vendor(r.gpu) == vendor.lower()]
            if listed and all(r.usd_per_hour is None for r in listed):
                why = f"no {vendor} candidate has a price, so no platform comparison."
                todo = (
                    f"Give a price for {', '.join(r.gpu for r in listed)} "
                    "(--price GPU=USD or `prices` in the settings) to compare."
                )
                unpriced = ""
            elif listed:
                why = f"no {vendor} candidate can serve it, so no platform comparison."
                todo = "Add a larger GPU of that vendor to `gpus` to compare."
            else:
                why = "only one vendor among the candidate GPUs, so no platform comparison."
                todo = "Add a GPU of the other vendor to `gpus` to compare."
            out.append(
                Conclusion(
                    id=f"price-{anchor(key)}",
                    title=f"Cheapest per million tokens: {best.name}",
                    statement=f"${_usd(best, train) or 0:.3g}/Mtok {what}, {_deploy(best)} "
                    f"({basis}); {why}" + unpriced,
                    recommendation=todo,
                    severity=Severity.INFO,
                    leans="neutral",
                    evidence=evidence,
                )
            )
            continue
        a = min(amd, key=lambda r: _usd(r, train) or 0)
        n = min(nv, key=lambda r: _usd(r, train) or 0)
        ua, un = _usd(a, train) or 0.0, _usd(n, train) or 0.0
        cheaper, dearer, lo, hi = (a, n, ua, un) if ua <= un else (n, a, un, ua)
        pct = (hi - lo) / hi * 100 if hi else 0.0
        sure, within_error = _how_sure(cheaper, dearer, lo, hi, train)
        target = _target(report)
        leans: Leans = "neutral"
        if pct / 100 >= PRICE_NOISE and not within_error:
            leans = "rocm" if cheaper is a else "cuda"
        if pct / 100 >= PRICE_NOISE:
            title = (
                f"{cheaper.name} is {pct:.0f}% cheaper per million tokens than {dearer.name} "
                f"{_at(cheaper, dearer, train, target)}"
            )
            if within_error:
                title += ", within the model's error"
        else:
            title = (
                f"{a.name} and {n.name} cost about the same per million tokens "
                f"{_at(a, n, train, target)}"
            )
        out.append(
            Conclusion(
                id=f"price-{anchor(key)}",
                title=title,
                statement=(
                    f"{report.model.name}: ${lo:.3g} ({_deploy(cheaper)}) vs ${hi:.3g} "
                    f"({_deploy(dearer)}) per million {what} tokens ({basis})."
                    + _own_max(cheaper, dearer, train)
                    + sure
                    + unpriced
                ),
                recommendation=(
                    "Confirm with measured throughput: attach bench runs from both machines "
                    "(--bench) so cost uses measured hardware figures, or price your own "
                    "measured tokens/s (gpuport cost --throughput GPU=TOK_S)."
                    if "published" in basis
                    else "The figures use measured hardware; re-run when prices change."
                ),
                severity=Severity.INFO,
                leans=leans,
                evidence=evidence,
            )
        )
    return out


def _target(report: CostReport) -> str:
    """ "mean TPOT <= 50 ms" when every GPU was planned to a latency target, else ""."""
    if report.mode != "inference":
        return ""
    values = {a.name: a for a in report.assumptions}
    conc, target = values.get("concurrency"), values.get("latency_target")
    if conc is None or target is None or conc.value != "target" or target.value == "none":
        return ""
    return f"mean {target.value}".replace("<=", "≤")


def _how_sure(
    cheaper: GpuCost, dearer: GpuCost, lo: float, hi: float, train: bool
) -> tuple[str, bool]:
    """How sure the price order is: the serving model's error on published measurements it
    was not fitted on, against this gap. (sentence, the gap is within the model's error)"""
    if train or lo <= 0:
        return "", False
    modelled = [r for r in (cheaper, dearer) if r.throughput_source == "model"]
    sb = next((r.serving for r in modelled if r.serving is not None), None)
    if sb is None:
        return " How sure: both speeds were given (--throughput), not modelled.", False
    gap = hi / lo
    within = gap < sb.held_out_p90_factor and len(modelled) == 2
    verdict = (
        "this gap is within that error, so the order could reverse: measure both"
        if within
        else "this gap is larger than that error"
    )
    return (
        f" How sure: on the {sb.held_out_n} published measurements held out of its fit, the "
        f"modelled throughput was within 1.5× for {sb.held_out_within_1_5x:.0%}, within "
        f"×{sb.held_out_p90_factor:.2f} for 90 % (median ×{sb.held_out_median_ratio:.2f}); "
        f"{verdict} ({gap:.2f}×).",
        within,
    )


def _deploy(rec: GpuCost) -> str:
    """ "49 sequences on 1 GPU": what a cost figure was computed at."""
    gpus = rec.gpus_needed or 0
    return f"{rec.concurrency} sequences on {gpus} GPU{'s' if gpus != 1 else ''}"


def _at(a: GpuCost, b: GpuCost, train: bool, target: str = "") -> str:
    """The shared footing of a price comparison: the same latency target or concurrency,
    and what each GPU runs there."""
    what = "micro-batch" if train else "sequences"
    if target and not train:
        return (
            f"at the same {target} ({_short(a.name)}: {_deploy(a)}; {_short(b.name)}: {_deploy(b)})"
        )
    if a.concurrency == b.concurrency:
        return (
            f"at {a.concurrency} {what} each ({_short(a.name)} on {a.gpus_needed}, "
            f"{_short(b.name)} on {b.gpus_needed} GPU{'s' if (b.gpus_needed or 0) != 1 else ''})"
        )
    return f"({_deploy(a)}; {_deploy(b)})"


def _own_max(a: GpuCost, b: GpuCost, train: bool) -> str:
    """Each GPU's own maximum, where it holds more than the shared concurrency."""
    if train:
        return ""
    parts = [
        f"{_short(r.name)} holds {r.own_max_concurrency} on {r.own_max_gpus} GPU(s)"
        + (
            f" (${r.usd_per_mtok_output_at_own_max:.3g}/Mtok there)"
            if r.usd_per_mtok_output_at_own_max is not None
            else ""
        )
        for r in (a, b)
        if r.own_max_concurrency is not None and r.own_max_concurrency > r.concurrency
    ]
    return (" Filled to its own maximum, " + "; ".join(parts) + ".") if parts else ""


def _basis(recs: list[GpuCost]) -> str:
    """Where the prices and the efficiency came from, per GPU when they differ."""
    mine = [_short(r.name) for r in recs if r.price is not None and r.price.origin == "flag"]
    listed = [_short(r.name) for r in recs if r.price is not None and r.price.origin == "catalog"]
    if mine and listed:
        price_text = f"your prices for {', '.join(mine)}, catalog for {', '.join(listed)}"
    else:
        price_text = "your prices" if mine else "catalog prices"
    measured = [_short(r.name) for r in recs if _measured(r)]
    if not measured:
        eff_text = "published hardware figures"
    elif len(measured) == len(recs):
        eff_text = "measured hardware figures"
    else:
        eff_text = f"measured hardware for {', '.join(measured)}, published for the rest"
    kinds = sorted({r.price.kind for r in recs if r.price is not None and r.price.kind != "flag"})
    kind_text = f" ({', '.join(kinds)})" if kinds else ""
    engines = sorted({r.engine for r in recs if r.engine})
    engine_text = f" on {', '.join(engines)}" if engines else ""
    return (
        f"{price_text}{kind_text}; throughput modelled{engine_text} by the step model with "
        f"serving factors fitted on published measurements, at {eff_text}"
    )


def _measured(rec: GpuCost) -> bool:
    """The GPU's hardware figures (bandwidth, GEMM) come from the user's bench run."""
    hardware = [rec.efficiency[k] for k in ("bandwidth", "compute") if k in rec.efficiency]
    return bool(hardware) and all(e.basis == "measured" for e in hardware)


def bench_ratio(facts: Facts) -> list[Conclusion]:
    """Seed: "10-25 % slower": the measured ratio of the attached runs, when there are two."""
    bench = facts.bench
    if bench.comparison is None:
        if len(bench.runs) == 1:
            run = bench.runs[0]
            return [
                Conclusion(
                    id="bench-ratio",
                    title=f"One bench run attached ({run.device})",
                    statement="A single run gives % of peak, not a platform ratio.",
                    recommendation="Attach a run from the other platform (--bench RUN).",
                    severity=Severity.INFO,
                    leans="neutral",
                    evidence=[Evidence(kind="bench", ref=run.id, label=run.device, anchor="bench")],
                )
            ]
        return []
    comp = bench.comparison
    out: list[Conclusion] = []
    base_backend = bench.runs[0].backend if bench.runs else "?"
    for i in range(1, len(comp.runs)):
        g = comp.geomean[i] if i < len(comp.geomean) else None
        if g is None:
            continue
        slower = sum(1 for row in comp.rows if row.verdicts[i] == "slower")
        faster = sum(1 for row in comp.rows if row.verdicts[i] == "faster")
        backend = bench.runs[i].backend if i < len(bench.runs) else "?"
        leans: Leans = "neutral"
        if {backend, base_backend} == {"rocm", "cuda"} and abs(g - 1) > RATIO_NOISE:
            rocm_better = (g > 1) == (backend == "rocm")
            leans = "rocm" if rocm_better else "cuda"
        out.append(
            Conclusion(
                id=f"bench-ratio-{i}",
                title=f"{comp.runs[i]} runs at {g:.2f}x of {comp.runs[0]}",
                statement=(
                    f"Geometric mean over {plural(len(comp.rows), 'case')}: {g:.2f}x "
                    f"({slower} slower, {faster} faster beyond noise)."
                    + _by_family(comp.families, i)
                ),
                recommendation="Weigh the ratio against the price difference per token.",
                severity=Severity.INFO,
                leans=leans,
                evidence=[
                    Evidence(
                        kind="bench",
                        ref=f"{row.workload}/{row.case}",
                        label=f"{row.workload} {row.case}: {row.ratios[i] or 0:.2f}x",
                        anchor="bench",
                    )
                    for row in comp.rows
                    if row.ratios[i] is not None
                ][:12],
            )
        )
    return out


def _by_family(families: list[FamilySummary], i: int) -> str:
    """ " By workload family: compute 1.80x (3 of 3 significant), ...": the all-case geomean
    mixes unlike workloads, so each family's is given too (when there is more than one)."""
    parts = [
        f"{f.family} {f.geomean[i]:.2f}x ({f.significant[i]} of {f.cases} significant)"
        for f in families
        if i < len(f.geomean) and f.geomean[i] is not None and i < len(f.significant)
    ]
    return " By workload family: " + "; ".join(parts) + "." if len(parts) > 1 else ""


def numerics(facts: Facts) -> list[Conclusion]:
    """Seed: "validate before you move": what ``gpuport validate`` said, or that it was not run."""
    reports = facts.validate.reports
    if not reports:
        return [
            Conclusion(
                id="numerics-unchecked",
                title="Numerics not validated yet",
                statement="No `gpuport validate` report is attached.",
                recommendation=(
                    "Before moving traffic, capture on CUDA (`gpuport validate capture`) and "
                    "check on ROCm (`gpuport validate check --format json`), then pass the "
                    "report with --validate."
                ),
                severity=Severity.INFO,
                leans="neutral",
            )
        ]
    out: list[Conclusion] = []
    for i, r in enumerate(reports, 1):
        ev = [Evidence(kind="validate", ref=r.file, label=r.file, anchor=f"validate-{i}")]
        if r.wrong:
            mod = r.first_divergence if r.first_divergence in r.wrong else r.wrong[0]
            out.append(
                Conclusion(
                    id=f"numerics-{i}",
                    title=f"Do not move traffic yet: module {mod} is wrong",
                    statement=f"{r.machines}: {r.verdict_reason}. Wrong: {', '.join(r.wrong)}.",
                    recommendation=(
                        f"Do not move traffic yet: fix or work around {mod} (the first wrong "
                        "module), then re-run `gpuport validate check`."
                    ),
                    severity=Severity.MAJOR,
                    leans="cuda",
                    evidence=ev,
                )
            )
        elif r.different:
            out.append(
                Conclusion(
                    id=f"numerics-{i}",
                    title=f"Numbers differ, first at module {r.different[0]}",
                    statement=f"{r.machines}: {r.verdict_reason}.",
                    recommendation="Investigate with `gpuport validate check --grafted`.",
                    severity=Severity.MINOR,
                    leans="neutral",
                    evidence=ev,
                )
            )
        else:
            out.append(
                Conclusion(
                    id=f"numerics-{i}",
                    title=f"Numbers match ({r.verdict})",
                    statement=f"{r.machines}: {r.verdict_reason}.",
                    recommendation="Numerics are not a reason to stay.",
                    severity=Severity.INFO,
                    leans="neutral",
                    evidence=ev,
                )
            )
    return out


def machine_health(facts: Facts) -> list[Conclusion]:
    """Doctor failures on this machine (or the target machine, from a snapshot): a note, never
    part of the project's readiness."""
    d = facts.doctor
    if d.status != "problems":
        return []
    failed = [p for p in d.problems if p.status == "fail"]
    shown = failed or d.problems
    machine = "The target machine's" if d.replayed else "This machine's"
    where = "that machine (from its doctor snapshot)" if d.replayed else "this machine"
    return [
        Conclusion(
            id="machine-health",
            title=f"{machine} GPU stack: {plural(len(shown), 'problem')}",
            statement="; ".join(f"{p.rule_id} {p.title}" for p in shown[:5]) + ".",
            recommendation=(
                f"Fix these before benchmarking or validating on {where}: " + shown[0].fix
            ),
            severity=Severity.MINOR if failed else Severity.INFO,
            leans="neutral",
            evidence=[
                Evidence(kind="doctor", ref=p.rule_id, label=p.title, anchor="doctor")
                for p in shown
            ],
        )
    ]
