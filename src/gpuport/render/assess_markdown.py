"""The assessment as Markdown: the same sections as the HTML page, for wikis and pull requests.

Every text that can come from the project or a result file goes through
:func:`gpuport.render.text.md`, so a file name or a code line cannot become a link, an HTML
tag or a new table row in a rendered pull-request comment.
"""

from __future__ import annotations

from gpuport.assess.model import Assessment, CostSection, HipifySection
from gpuport.cost.model import GpuCost
from gpuport.models import Severity
from gpuport.render import effort_view
from gpuport.render.cost_render import speed_basis
from gpuport.render.text import md

TOP_FINDINGS = 50
#: Section headings, in order; a test checks that each is present.
HEADINGS = (
    "Verdict",
    "Conclusions",
    "Assumptions",
    "Effort",
    "Findings",
    "hipify",
    "Cost",
    "Bench",
    "Validate",
    "Doctor",
    "Settings and environment",
)


def _num(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.3g}" if abs(value) < 1000 else f"{value:,.0f}"


def _usd(value: float | None) -> str:
    return "–" if value is None else f"${_num(value)}"


def render(a: Assessment) -> str:
    out: list[str] = [f"# gpuport assess: {md(a.project)}", ""]
    t = a.scan.target
    judged = a.scan.judged_counts or a.scan.counts
    out += [
        "## Verdict",
        "",
        f"**{a.verdict.label.upper()}** (`{a.verdict.value}`): {md(a.verdict_reason)}",
        "",
        f"**Decision.** {md(a.decision)}",
        "",
        f"* Target: {t.name} ({t.generation}, wave{t.wave_size}, FP8 {t.fp8})",
        f"* Effort: **{md(a.effort.days())}**"
        + (f" ({a.effort.hours:g} h of listed changes)" if a.effort.hours else ""),
        "* Findings in core code (judged): "
        + ", ".join(f"{judged.get(s, 0)} {s.value}" for s in Severity)
        + (f"; not judged: {md(a.scan.not_judged())}" if a.scan.not_judged() else ""),
        "",
        "## Conclusions",
        "",
    ]
    for c in a.conclusions:
        lean = {"rocm": " (favours ROCm)", "cuda": " (favours CUDA)"}.get(c.leans, "")
        out += [
            f"### [{c.severity.value}] {md(c.title)}{lean}",
            "",
            md(c.statement),
            "",
            f"→ {md(c.recommendation)}",
            "",
        ]
        if c.evidence:
            more = f"; and {len(c.evidence) - 12} more" if len(c.evidence) > 12 else ""
            out += ["Evidence: " + "; ".join(md(e.label) for e in c.evidence[:12]) + more, ""]
    if not a.conclusions:
        out += ["No criterion applies.", ""]
    out += _assumptions(a)
    out += ["## Effort", ""]
    if a.effort.components:
        out += [*effort_view.markdown(a.effort.components, a.effort.days(), a.effort.calendar), ""]
    out += [
        "Listed changes by area:",
        "",
        "| area | items | hours | basis |",
        "|---|---:|---:|---|",
    ]
    out += [
        f"| {md(c.title)} | {c.count} | {c.hours:g} | {md('; '.join(c.basis))} |"
        for c in a.effort.classes
    ]
    out += ["", f"_{md(a.effort.note)}_", "", "## Findings", ""]
    shown = a.scan.findings[:TOP_FINDINGS]
    if shown:
        out += ["| severity | rule | where | code | what | fix |", "|---|---|---|---|---|---|"]
        out += [
            f"| {f.severity.value} | {f.rule_id} | {md(f.location.display())} | "
            f"{md(f.location.snippet or '')} | {md(f.message)} | {md(f.fix)} |"
            for f in shown
        ]
        hidden = a.scan.findings_above_info - len(shown)
        if hidden > 0:
            out += ["", _more_findings(a, hidden)]
    else:
        out.append("Nothing above info.")
    if a.scan.skipped:
        out += ["", "Skipped: " + "; ".join(md(x) for x in a.scan.skipped)]
    out += ["", *_hipify(a.hipify), *_cost(a.cost), "## Bench", ""]
    b = a.bench
    out.append(md(b.note))
    if b.runs:
        out += ["", "| run | device | backend | suite | cases ok |", "|---|---|---|---|---:|"]
        out += [
            f"| {md(r.label or r.id[:8])} | {md(r.device)} | {r.backend} | {r.suite} | "
            f"{r.cases_ok}/{r.cases} |"
            for r in b.runs
        ]
    if b.comparison is not None:
        comp = b.comparison
        names = " | ".join(md(n) for n in comp.runs[1:])
        out += ["", f"| workload | case | {names} |", "|---|---|" + "---:|" * (len(comp.runs) - 1)]
        for row in comp.rows:
            ratios = " | ".join(
                "–" if r is None else f"{r:.2f}x ({v})"
                for r, v in zip(row.ratios[1:], row.verdicts[1:], strict=False)
            )
            out.append(f"| {md(row.workload)} | {md(row.case)} | {ratios} |")
    out += ["", "## Validate", ""]
    for v in a.validate_.reports:
        out += [
            f"* {md(v.file)}: **{v.verdict}**: {md(v.verdict_reason)} ({md(v.machines)})"
            + (f"; wrong: {md(', '.join(v.wrong))}" if v.wrong else "")
        ]
    if not a.validate_.reports:
        out.append("No validate report attached.")
    out += ["", "## Doctor", "", md(a.doctor.message)]
    out += [f"* {md(line)}" for line in a.doctor.summary]
    out += [f"* {p.rule_id} [{p.status}] {md(p.title)}: {md(p.fix)}" for p in a.doctor.problems]
    out += [
        "",
        "## Settings and environment",
        "",
        "| setting | value | origin | note |",
        "|---|---|---|---|",
    ]
    out += [f"| {s.name} | {md(str(s.value))} | {s.origin} | {md(s.detail)} |" for s in a.settings]
    out += [f"* {md(n)}" for n in a.notes]
    e = a.env
    timings = ", ".join(f"{k} {v:g} s" for k, v in a.timings.items())
    out += [
        "",
        f"gpuport {e.gpuport_version}, Python {e.python}, {md(e.platform)}, {e.created}; "
        f"timings: {timings}",
    ]
    return "\n".join(out) + "\n"


def _assumptions(a: Assessment) -> list[str]:
    """The assumptions table: what the report assumed, and where each came from."""
    if not a.assumptions:
        return []
    out = [
        "## Assumptions",
        "",
        "| assumption | value | origin | where | why, and how to change it |",
        "|---|---|---|---|---|",
    ]
    for x in a.assumptions:
        offered = f"offered, not used: {', '.join(x.offered)}" if x.offered else ""
        why = md("; ".join(p for p in (x.detail, offered) if p))
        if x.change:  # gpuport's own flag names, not text from the project
            why += ("; " if why else "") + f"change: `{x.change}`"
        out.append(f"| {md(x.label)} | {md(x.value)} | {x.origin} | {md(x.where)} | {why} |")
    return [*out, ""]


def _more_findings(a: Assessment, more: int) -> str:
    """``1,200 more above info (the JSON report carries the first 1,000).``"""
    kept = len(a.scan.findings)
    if kept < a.scan.findings_above_info:
        return f"{more:,} more above info (the JSON report carries the first {kept:,})."
    return f"{more:,} more above info in the JSON report."


def _hipify(h: HipifySection) -> list[str]:
    out = ["## hipify", ""]
    if not h.ran:
        return [*out, f"Not run: {md(h.reason)}.", ""]
    out += [
        f"{md(h.reason)}; HIP {h.hip_version}: {h.replacements} API uses rewritten, "
        f"{len(h.unsupported)} with no HIP equivalent, {h.hazards} hazards (the scan's GP3xx).",
        "",
    ]
    if h.unsupported:
        out += ["| API | where | why |", "|---|---|---|"]
        out += [f"| {md(u.name)} | {md(u.path)}:{u.line} | {md(u.reason)} |" for u in h.unsupported]
        out.append("")
    out += [f"Compile check: {md(h.check_note)}", ""]
    out += [
        f"* {md(c.path)}: {c.status}" + (f": {md(c.error)}" if c.error else "") for c in h.compile
    ]
    return [*out, ""] if h.compile else out


def _seqs(g: GpuCost) -> str:
    """Sequences in flight, and this GPU's own maximum (on its own GPU count) beside them."""
    if g.own_max_concurrency is None:
        return str(g.concurrency)
    return f"{g.concurrency} ({g.own_max_concurrency} on {g.own_max_gpus})"


def _cost(cost: CostSection) -> list[str]:
    out = ["## Cost", ""]
    if cost.status != "ok":
        out += [md(cost.message), ""]
    for r in cost.reports:
        train = r.mode == "training"
        out += [
            f"### {md(r.model.name)} ({r.mode})",
            "",
            "| GPU | fits on one | GPUs (TP) | "
            + ("micro-batch" if train else "sequences (own max)")
            + " | tok/s per GPU | $/GPU-h | $/Mtok | basis |",
            "|---|---|---:|---:|---:|---:|---:|---|",
        ]
        if r.concurrency_basis:
            out[-2:-2] = [f"Concurrency: {md(r.concurrency_basis)}.", ""]
        for g in r.records:
            tps = g.train_tokens_per_s_per_gpu if train else g.decode_tokens_per_s_per_gpu
            usd = g.usd_per_mtok_train if train else g.usd_per_mtok_output
            gpus = "never" if g.gpus_needed is None else f"{g.gpus_needed} (TP {g.tp_degree})"
            kind = f" ({g.price.kind})" if g.price is not None and usd is not None else ""
            out.append(
                f"| {md(g.name)} | {'yes' if g.fits else 'no'} | {gpus} | {_seqs(g)} | "
                f"{_num(tps)} | {_usd(g.usd_per_hour)} | {_usd(usd)}{kind} | "
                f"{md(speed_basis(g))} |"
            )
        out += [f"* {md(n)}" for n in r.notes]
        out.append("")
    return out
