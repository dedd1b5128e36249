"""Terminal, Markdown and chart views of a :class:`CostReport` (JSON is the model itself).

The table answers the four questions side by side, one row per GPU: does it fit, on how
many, how fast, at what price. Under it, what every number rests on: the efficiency
factors (published or measured), the prices (with date and source) and the notes.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gpuport.cost.model import CostReport, CurvePoint, GpuCost
from gpuport.fileio import write_atomic_bytes
from gpuport.models import GpuportError
from gpuport.optional import require
from gpuport.render.text import clean, clean_line, fmt_number, md

CHART_FORMATS = ("png", "svg")
# Per GB as printed on the datasheet (the H100's 80, the MI300X's 192: GiB-class figures),
# not per 10^9 bytes like the sizes elsewhere in the report.
USD_PER_GB_COLUMN = "$/GB-h (datasheet GB)"


# ----------------------------------------------------------------------- formatting


def usd(value: float | None) -> str:
    """Dollars with three significant figures below $1 ($0.0413), cents above."""
    if value is None:
        return "-"
    if value >= 1000:
        return f"${value:,.0f}"
    if value >= 1:
        return f"${value:,.2f}"
    return f"${value:#.3g}"


num = fmt_number


def _kib(n: int) -> str:
    return f"{n / 1024:,.1f} KiB" if n >= 1024 else f"{n} B"


def _gpus(rec: GpuCost, training: bool) -> str:
    if rec.gpus_needed is None:
        return "never"
    if training or not rec.replicas or rec.replicas == 1:
        return str(rec.gpus_needed)
    return f"{rec.gpus_needed} ({rec.tp_degree}×{rec.replicas})"


def header_lines(report: CostReport) -> list[str]:
    m = report.model
    values = {a.name: a.value for a in report.assumptions}
    active = f", {m.active_params_b:.1f}B active" if m.experts else ""
    moe = f" · MoE {m.experts_per_token} of {m.experts} experts" if m.experts else ""
    first = report.records[0] if report.records else None
    lines = [
        f"{m.name} · {m.params_b:.1f}B params{active} · {m.layers} layers · "
        f"{_attention(report)}{moe}",
    ]
    if first is not None:
        lines.append(
            f"{values.get('dtype')} weights {first.weights_gb:.1f} GB · KV "
            f"{_kib(first.kv_bytes_per_token)}/token, {first.kv_gb_per_sequence:.2f} GB per "
            f"{values.get('context')}-token sequence"
        )
    if report.mode == "training":
        lines.append(
            f"training: ZeRO-{values.get('zero')} · sequence {values.get('context')} tokens · "
            f"micro-batch {values.get('concurrency')} · mixed-precision Adam (16 bytes/param)"
        )
    else:
        lines.append(
            f"serving: context {values.get('context')} · {values.get('input_tokens')} tokens in "
            f"/ {values.get('output_tokens')} out · usable {values.get('usable')} · reserve: "
            f"runtime {values.get('overhead_gb')} GB + graphs {values.get('graphs_gb')} GB + "
            "prefill chunk + sampler per GPU"
        )
        if report.concurrency_basis:
            lines.append(f"concurrency: {report.concurrency_basis}")
        if report.price_kind:
            lines.append(
                f"prices: {report.price_kind}, the median of each GPU's recent quotes; a GPU "
                "without one is labelled with its kind and not compared"
            )
    return lines


def _attention(report: CostReport) -> str:
    m = report.model
    if m.attention == "mla":
        return f"MLA {m.heads} heads, KV latent {m.kv_latent} per token per layer"
    return f"{m.attention.upper()} {m.heads}/{m.kv_heads} heads × {m.head_dim}"


def _columns(training: bool) -> list[str]:
    if training:
        return ["GPU", "fits on 1", "GPUs", "max micro-batch", "tok/s/GPU", "$/GPU-h",
                "$/Mtok train", "J/tok"]  # fmt: skip
    return ["GPU", "fits on 1", "GPUs (TP×DP)", "seq", "tok/s/user", "TPOT ms", "tok/s/GPU",
            "TTFT ms", "speed", "$/GPU-h", "$/Mtok out", "$/Mtok in", "margin GB/GPU",
            "own max seq (GPUs)", "$/Mtok out at own max", USD_PER_GB_COLUMN, "J/tok",
            "break-even h"]  # fmt: skip


def _hourly(rec: GpuCost, kind: str) -> str:
    """$/GPU-hour, labelled with its price kind where it is not the report's one kind."""
    text = usd(rec.usd_per_hour)
    if rec.price is not None and kind and rec.price.kind not in (kind, "flag"):
        text += f" ({rec.price.kind})"
    return text


def _kind(rec: GpuCost) -> str:
    """The price kind a $/Mtok figure is at: printed beside every one."""
    if rec.price is None:
        return ""
    return " (your price)" if rec.price.kind == "flag" else f" ({rec.price.kind})"


def _per_mtok(value: float | None, rec: GpuCost) -> str:
    return usd(value) + (_kind(rec) if value is not None else "")


def speed_basis(rec: GpuCost) -> str:
    """ "modelled (sm_90/vllm)", "modelled (sm_90/vllm, borrowed)", or "given"."""
    if rec.throughput_source == "flag":
        return "given (--throughput)"
    if rec.serving is None:
        return "modelled"
    measured = any(e.basis == "measured" for e in rec.efficiency.values())
    parts = [rec.serving.profile]
    if rec.serving.borrowed:
        parts.append("borrowed")
    if measured:
        parts.append("your bench")
    return f"modelled ({', '.join(parts)})"


def _own(rec: GpuCost) -> str:
    if rec.own_max_concurrency is None:
        return "-"
    return f"{rec.own_max_concurrency} ({rec.own_max_gpus})"


def _cells(rec: GpuCost, training: bool, kind: str = "") -> list[str]:
    fits = "yes" if rec.fits else "no"
    if training:
        return [rec.gpu, fits, _gpus(rec, True), str(rec.max_concurrency),
                num(rec.train_tokens_per_s_per_gpu), usd(rec.usd_per_hour),
                usd(rec.usd_per_mtok_train), num(rec.joules_per_token)]  # fmt: skip
    flag = "*" if rec.throughput_source == "flag" else ""
    margin = "-" if rec.margin_gb_per_gpu is None else f"{rec.margin_gb_per_gpu:.2f}"
    return [
        rec.gpu, fits, _gpus(rec, False), str(rec.concurrency),
        num(rec.decode_tokens_per_s_per_user), num(rec.tpot_ms),
        num(rec.decode_tokens_per_s_per_gpu) + flag, num(rec.ttft_ms), speed_basis(rec),
        _hourly(rec, kind), _per_mtok(rec.usd_per_mtok_output, rec),
        _per_mtok(rec.usd_per_mtok_input, rec), margin, _own(rec),
        _per_mtok(rec.usd_per_mtok_output_at_own_max, rec), usd(rec.usd_per_gb),
        num(rec.joules_per_token), num(rec.breakeven_hours),
    ]  # fmt: skip


def cheapest_phrase(report: CostReport) -> str:
    """ "; lowest $/Mtok output: X $y at N sequences (kind)", comparing like with like only.

    A GPU priced by another kind than the report's (a fallback) is named as left out, and
    a report with fewer than two comparable GPUs declares no winner.
    """
    keep, left_out = report.comparable()
    training = report.mode == "training"

    def rate(r: GpuCost) -> float:
        value = r.usd_per_mtok_train if training else r.usd_per_mtok_output
        return value if value is not None else float("inf")

    keep = [r for r in keep if rate(r) != float("inf")]
    if not keep:
        return ""
    best = min(keep, key=rate)
    what = "train" if training else "output"
    unpriced = [r.gpu for r in report.records if r not in keep and r not in left_out]
    if len(keep) == 1 and len(report.records) > 1:
        text = f"; only {best.gpu} is priced: {usd(rate(best))}/Mtok {what}"
    else:
        text = f"; lowest $/Mtok {what}: {best.gpu} {usd(rate(best))}"
    if not training:
        text += f" at {best.concurrency} sequences"
    kind = best.price.kind if best.price is not None else ""
    if kind:
        text += " (your --price figures)" if kind == "flag" else f" ({kind} prices)"
    if left_out:
        text += "; not compared (other price kind): " + ", ".join(
            f"{r.gpu} ({r.price.kind if r.price else '?'})" for r in left_out
        )
    if unpriced:
        text += "; no $/Mtok for " + ", ".join(unpriced)
    return text


def _deployment(rec: GpuCost) -> str:
    parts = [f"TP{rec.tp_degree}"]
    if rec.pp_degree and rec.pp_degree > 1:
        parts.append(f"PP{rec.pp_degree}")
    if rec.ep_degree and rec.ep_degree > 1:
        parts.append(f"EP{rec.ep_degree}")
    if rec.dp_attention:
        parts.append("DP-attention")
    replicas = f" × {rec.replicas} replicas" if rec.replicas and rec.replicas > 1 else ""
    return " ".join(parts) + replicas


def detail_lines(report: CostReport) -> list[str]:
    """Efficiencies, prices and notes per GPU, then the report's own notes."""
    out: list[str] = []
    for rec in report.records:
        parts = [
            f"{what} {e.value * 100:.1f}% of peak ({e.basis})"
            for what, e in sorted(rec.efficiency.items())
        ]
        out.append(f"{rec.gpu}: " + " · ".join(parts))
        speed = rec.provenance.get("decode_tokens_per_s_per_gpu")
        if speed:
            out.append(f"  speed: {speed}")
        if rec.serving is not None and rec.throughput_source != "flag":
            sb = rec.serving
            out.append(
                f"  deployment: {_deployment(rec)} on {rec.engine}; per step {sb.layer_us:.1f} µs "
                f"per layer, {sb.collective_us:.1f} µs per all-reduce"
            )
        if rec.price is not None:
            p = rec.price
            if p.origin == "catalog":
                where = f"{p.kind}, {p.provider}, newest {p.date}, {p.source}"
            else:
                where = "from --price"
            out.append(f"  price ${p.usd_per_hour:.2f}/GPU-hour {where}")
            if len(p.quotes) > 1:
                out += [f"    quote: {q}" for q in p.quotes]
        if rec.purchase_usd is not None and rec.breakeven_hours is not None:
            days = (
                f" ({rec.breakeven_days:,.0f} days at the utilisation)"
                if rec.breakeven_days
                else ""
            )
            out.append(
                f"  buy at {usd(rec.purchase_usd)}: cheaper than renting after "
                f"{rec.breakeven_hours:,.0f} hours of use{days}"
            )
        out += [f"  note: {n}" for n in rec.notes]
    out += [f"note: {n}" for n in report.notes]
    if any(r.throughput_source == "flag" for r in report.records):
        out.append("* tokens/s given with --throughput, not modelled")
    return out


# ----------------------------------------------------------------------- views


def render_terminal(report: CostReport, console: Console) -> None:
    for line in header_lines(report):  # one line each: a run label's newline forges none
        console.print(escape(clean_line(line)), highlight=False)
    training = report.mode == "training"
    # Transposed (one column per GPU): a dozen figures per GPU do not fit side by side in
    # a terminal, while two to four GPUs do.
    table = Table(show_edge=False)
    columns = _columns(training)
    rows = [_cells(rec, training, report.price_kind) for rec in report.records]
    table.add_column("", style="bold", no_wrap=True)
    for cells in rows:
        table.add_column(escape(clean(cells[0])), justify="right")
    for i, name in enumerate(columns[1:], start=1):
        table.add_row(escape(name), *(escape(clean(cells[i])) for cells in rows))
    console.print(table)
    for line in detail_lines(report):
        console.print(escape(clean_line(line)), highlight=False, soft_wrap=True)


def render_markdown(report: CostReport) -> str:
    training = report.mode == "training"
    out = [f"# gpuport cost: {md(report.model.name)}", ""]
    out += [f"* {md(line)}" for line in header_lines(report)]
    cols = _columns(training)
    out += ["", "| " + " | ".join(cols) + " |", "|---" + "|---:" * (len(cols) - 1) + "|"]
    for rec in report.records:
        out.append(
            "| " + " | ".join(md(c) for c in _cells(rec, training, report.price_kind)) + " |"
        )
    out += ["", "## What the numbers rest on", ""]
    out += [f"* {md(line.strip())}" for line in detail_lines(report)]
    out += [
        "",
        "## Assumptions",
        "",
        "| Input | Value | Unit | From | Why |",
        "|---|---|---|---|---|",
    ]
    for a in report.assumptions:
        out.append(
            f"| {md(a.name)} | {md(str(a.value))} | {md(a.unit)} | {a.origin} | {md(a.detail)} |"
        )
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------- chart


def write_chart(report: CostReport, path: Path) -> None:
    """Plot $ per million output tokens against concurrency, one line per priced GPU.

    Each point sits on the fewest GPUs that hold that many sequences, so a step in a
    line is where the deployment grows; the labels say how many GPUs each point uses.
    """
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in CHART_FORMATS:
        raise GpuportError(f"--chart {path}: the file name must end in .png or .svg")
    if report.mode == "training":
        raise GpuportError("--chart plots serving cost against concurrency; drop --train")
    series = [
        (rec, report.curves.get(rec.gpu, []))
        for rec in report.records
        if any(p.usd_per_mtok_output for p in report.curves.get(rec.gpu, []))
    ]
    if not series:
        raise GpuportError("--chart needs a price for at least one GPU: give --price GPU=USD")
    with _neutral_matplotlib() as figure:
        data = _draw(figure, report, series, fmt)
    write_atomic_bytes(path, data)


#: what matplotlib reads its configuration, caches and fonts from, and runs programs through
_MPL_ENV = (
    "MPLCONFIGDIR", "MATPLOTLIBRC", "MPLBACKEND", "MPL_IGNORE_SYSTEM_FONTS", "HOME",
    "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "PATH",
)  # fmt: skip


@contextlib.contextmanager
def _neutral_matplotlib() -> Iterator[ModuleType]:
    """``matplotlib.figure``, imported and used with none of the project's or the environment's
    configuration: a fresh private folder (removed afterwards) as the current folder (matplotlib
    reads ``./matplotlibrc`` first), config and cache folder, HOME and PATH; gpuport's own empty
    rc file; then matplotlib's defaults, TeX off, Agg. A project's ``matplotlibrc`` with
    ``text.usetex`` ran its ``latex`` from PATH, and a HOME it chose had the font cache written
    through its ``.cache`` link (twenty-eighth re-run F3, F9). The current folder and the
    environment are restored afterwards."""
    from gpuport import subproc

    subproc.neutral_tempdir(subproc.project_around(os.curdir))
    saved = {name: os.environ.get(name) for name in _MPL_ENV}
    try:
        here = Path.cwd()
    except OSError as exc:
        raise GpuportError(f"--chart: the current folder cannot be found: {exc}") from None
    with tempfile.TemporaryDirectory(prefix="gpuport-chart-") as tmp:
        rc = Path(tmp, "matplotlibrc")
        write_atomic_bytes(rc, b"", mode=0o600)
        (config := Path(tmp, "config")).mkdir()
        try:
            os.environ.pop("MPLBACKEND", None)
            os.environ.update(
                MPLCONFIGDIR=str(config), MATPLOTLIBRC=str(rc), MPL_IGNORE_SYSTEM_FONTS="1",
                HOME=tmp, XDG_CONFIG_HOME=tmp, XDG_CACHE_HOME=tmp, XDG_DATA_HOME=tmp,
                PATH=str(Path(tmp, "none")),  # no folder: no program (fc-list, latex) found
            )  # fmt: skip
            os.chdir(tmp)
            mpl = require("matplotlib", "report", "--chart")
            mpl.rcdefaults()  # whatever was read before this import, if anything
            mpl.rcParams["text.usetex"] = False
            mpl.use("Agg")
            yield require("matplotlib.figure", "report", "--chart")
        finally:
            os.chdir(here)
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _draw(
    figure: ModuleType,
    report: CostReport,
    series: list[tuple[GpuCost, list[CurvePoint]]],
    fmt: str,
) -> bytes:
    """The chart's bytes, in ``fmt`` (png or svg)."""
    fig = figure.Figure(figsize=(8, 5), dpi=120)
    ax = fig.add_subplot()
    for rec, points in series:
        xs = [p.concurrency for p in points if p.usd_per_mtok_output]
        ys = [p.usd_per_mtok_output for p in points if p.usd_per_mtok_output]
        label = _plain(f"{rec.name} ({usd(rec.usd_per_hour)}/GPU-h)")
        (line,) = ax.plot(xs, ys, marker="o", label=label)
        for p, x, y in _gpu_steps(points):
            ax.annotate(f"{p} GPU" + ("s" if p > 1 else ""), (x, y), textcoords="offset points",
                        xytext=(4, 6), fontsize=7, color=line.get_color())  # fmt: skip
    ax.set_xscale("log", base=2)
    ticks = sorted({p.concurrency for _rec, points in series for p in points})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_xlabel("concurrent sequences")
    ax.set_ylabel("$ per million output tokens")
    values = {a.name: a.value for a in report.assumptions}
    ax.set_title(
        _plain(
            f"{report.model.name}, {values.get('dtype')}, {values.get('context')}-token context"
        ),
        fontsize=10,
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, bbox_inches="tight")
    return buf.getvalue()


def _plain(text: str) -> str:
    """Text matplotlib shows as is: ``$...$`` would otherwise be parsed as math."""
    return clean(text).replace("$", r"\$")


def _gpu_steps(points: Iterable[CurvePoint]) -> list[tuple[int, float, float]]:
    """(GPU count, x, y) where the count changes, including the first point."""
    out: list[tuple[int, float, float]] = []
    last = None
    for p in points:
        if p.usd_per_mtok_output and p.gpus != last:
            out.append((p.gpus, float(p.concurrency), p.usd_per_mtok_output))
            last = p.gpus
    return out
