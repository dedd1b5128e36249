"""The assessment as one self-contained HTML file: inline CSS, inline SVG, no script, no network.

Why these constraints: the report is forwarded (mail, chat, a ticket) and opened by people
who will not install anything, possibly offline; and it shows text from the scanned project
(file names, code lines, requirement lines), which may be hostile. So:

* Jinja2 escapes every value (autoescape on for every template, also strings); charts are the
  only markup inserted as is, and :mod:`gpuport.render.svg` escapes their labels itself.
* Control and bidi-override characters are made visible (:func:`gpuport.render.text.clean`)
  before escaping, so a snippet cannot reorder what the reader sees.
* A Content-Security-Policy meta tag forbids scripts and every network fetch: even if some
  markup slipped through, nothing would run or load.
"""

from __future__ import annotations

from typing import Any

from gpuport.assess.facts import anchor
from gpuport.assess.model import Assessment
from gpuport.models import Severity
from gpuport.optional import require
from gpuport.render.svg import Bar, bar_chart
from gpuport.render.text import clean

TEMPLATE = "assess.html.j2"
FINDINGS_SHOWN = 200
EVIDENCE_SHOWN = 40  # links per conclusion; the rest are counted
SECTIONS = (
    ("summary", "Verdict"),
    ("conclusions", "Conclusions"),
    ("assumptions", "Assumptions"),
    ("effort", "Effort"),
    ("findings", "Findings"),
    ("hipify", "hipify"),
    ("cost", "Cost"),
    ("bench", "Bench"),
    ("validate", "Validate"),
    ("doctor", "Doctor"),
    ("environment", "Settings & environment"),
)


def _environment() -> Any:
    jinja2 = require("jinja2", "report", "the HTML report")
    from markupsafe import Markup

    def finalize(value: object) -> object:
        if isinstance(value, Markup) or not isinstance(value, str):
            return value
        return clean(value)

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("gpuport.render", "templates"),
        autoescape=jinja2.select_autoescape(
            enabled_extensions=("html", "j2"), default_for_string=True, default=True
        ),
        undefined=jinja2.StrictUndefined,
        finalize=finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["usd"] = _usd
    env.filters["g"] = lambda value: f"{value:g}"  # hours as the other formats print them
    env.globals["anchor"] = anchor
    return env


def _num(value: float | int | None, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


def _usd(value: float | None) -> str:
    return "–" if value is None else f"${value:,.3g}" if value < 1000 else f"${value:,.0f}"


def charts(a: Assessment) -> dict[str, str]:
    """The SVG charts of the report, by name (markup, labels escaped by :mod:`svg`)."""
    out: dict[str, str] = {}
    counts = a.scan.judged_counts or a.scan.counts
    severity = [Bar(s.value, counts.get(s, 0), tone=s.value, href="#findings") for s in Severity]
    out["severity"] = bar_chart(
        severity if any(b.value for b in severity) else [],
        title="Findings in core code by severity",
        chart_id="chart-severity",
        unit="findings",
        unit_one="finding",
        empty="no findings",
    )
    out["effort"] = bar_chart(
        [Bar(c.title, c.hours, href=f"#{anchor('effort', c.area)}") for c in a.effort.classes],
        title="Effort by area (hours)",
        chart_id="chart-effort",
        unit="h",
    )
    from gpuport.knowledge.gpus import load_gpus

    catalog = load_gpus()
    for report in a.cost.reports:
        train = report.mode == "training"
        bars = []
        for rec in report.records:
            usd = rec.usd_per_mtok_train if train else rec.usd_per_mtok_output
            if usd is None:
                continue
            spec = catalog.get(rec.gpu)
            bars.append(
                Bar(
                    rec.name,
                    usd,
                    tone=spec.vendor if spec is not None else "neutral",
                    text=f"${usd:.3g}",
                    href=f"#{anchor('cost', report.model.key, rec.gpu)}",
                )
            )
        what = "trained" if train else "output"
        out[f"cost-{report.model.key}"] = bar_chart(
            bars,
            title=f"$ per million {what} tokens, {report.model.name}",
            chart_id=anchor("chart-cost", report.model.key),
            unit="$/Mtok",
        )
    comp = a.bench.comparison
    if comp is not None:
        for i in range(1, len(comp.runs)):
            ratio_bars = []
            for row in comp.rows:
                r = row.ratios[i]
                if r is None:
                    continue
                tone = {"faster": "faster", "slower": "slower"}.get(row.verdicts[i], "same")
                ratio_bars.append(
                    Bar(
                        f"{row.workload} {row.case}",
                        r,
                        tone=tone,
                        text=f"{r:.2f}x",
                        low=row.ci_low[i],
                        high=row.ci_high[i],
                    )
                )
            out[f"bench-{i}"] = bar_chart(
                ratio_bars,
                title=f"{comp.runs[i]} vs {comp.runs[0]} (ratio, > 1 is faster)",
                chart_id=f"chart-bench-{i}",
                unit="x",
                reference=1.0,
                reference_label="1.0 = same",
            )
    return out


def render(a: Assessment) -> str:
    """The whole HTML document."""
    env = _environment()  # first: a missing jinja2 (and its markupsafe) is a one-line message
    from markupsafe import Markup

    svg: dict[str, Markup] = {k: Markup(v) for k, v in charts(a).items()}  # noqa: S704
    shown = a.scan.findings[:FINDINGS_SHOWN]

    def href(anchor_id: str) -> str:
        """A link to a finding row the page does not show goes to the findings section."""
        if anchor_id.startswith("finding-"):
            number = anchor_id.removeprefix("finding-")
            if not number.isdigit() or int(number) > len(shown):
                return "#findings"
        return f"#{anchor_id}"

    context: dict[str, Any] = {
        "a": a,
        "charts": svg,
        "sections": SECTIONS,
        "findings": shown,
        "findings_hidden": max(0, a.scan.findings_above_info - len(shown)),
        "findings_in_json": len(a.scan.findings),
        "severities": list(Severity),
        "leans_text": {"rocm": "favours ROCm", "cuda": "favours CUDA", "neutral": ""},
        "href": href,
        "evidence_shown": EVIDENCE_SHOWN,
        "days": a.effort.days(),
        "judged": a.scan.judged_counts or a.scan.counts,
        "not_judged": a.scan.not_judged(),
    }
    html: str = env.get_template(TEMPLATE).render(**context)
    return html
