"""``gpuport validate capture|check|diff``: parse options, call the validate core, render.

Progress goes to stderr (a spinner when stderr is a terminal); the result goes to stdout or
``--output``. Exit codes: 0 everything same/equivalent, 1 a tensor is wrong (or, with
``--fail-on different``, different), B's weights differ from A's (unless
``--allow-weight-diff``), or nothing could be compared at all (a check that verified nothing
must not pass a CI gate), 2 bad input, 3 torch/safetensors missing or no GPU.

Text that comes from a ``.gpv`` or the user's model (module paths in errors, progress and the
one-line summary) passes through :func:`gpuport.render.text.clean` before it reaches stderr,
so a crafted capture cannot send terminal escape sequences.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from gpuport import textre
from gpuport.cli.common import EXIT_FINDINGS, emit, err_console
from gpuport.models import GpuportError
from gpuport.render.interface import OutputFormat
from gpuport.render.text import clean

validate_app = typer.Typer(
    name="validate",
    help="Does the model compute the same numbers on both platforms? Capture on machine A, "
    "check on machine B: the first diverging module, and whether it is different or wrong.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_DEVICE = textre.compile(r"^(cpu|cuda(:\d{1,4})?)$")
_SIZE = textre.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)?\s*$", re.IGNORECASE)
_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "kib": 1024,
    "m": 1000**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1000**3,
    "gb": 1000**3,
    "gib": 1024**3,
    "t": 1000**4,
    "tb": 1000**4,
    "tib": 1024**4,
}
FAIL_ON = ("wrong", "different")
FormatOpt = Annotated[
    OutputFormat, typer.Option("--format", "-f", help="terminal, json or markdown.")
]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write the result to this file.")
]
TopOpt = Annotated[int, typer.Option("--top", help="Rows in the table of worst tensors.")]
FailOpt = Annotated[
    str,
    typer.Option(
        "--fail-on",
        help="Exit 1 on: wrong (default) or different (or worse); always when nothing could "
        "be compared.",
    ),
]


def parse_size(text: str) -> int:
    """``2GiB``, ``500MB``, ``1e9``-free plain integers → bytes."""
    m = _SIZE.match(text)
    unit = (m.group(2) or "").lower() if m else ""
    if not m or unit not in _UNITS:
        raise GpuportError(f"--max-bytes must be a size like 2GiB, 500MB or 1000000, not {text!r}")
    value = float(m.group(1)) * _UNITS[unit]
    if not math.isfinite(value):
        raise GpuportError(f"--max-bytes is too large: {text.strip()[:40]!r}")
    size = int(value)
    if size <= 0:
        raise GpuportError("--max-bytes must be positive")
    return size


@contextmanager
def progress() -> Iterator[Callable[[str], None]]:
    """A spinner on stderr when it is a terminal; otherwise progress is silent. Messages name
    modules from the user's model or the capture: cleaned of control characters."""
    if not sys.stderr.isatty():
        yield lambda _msg: None
        return
    with err_console.status("starting") as status:
        yield lambda msg: status.update(Text(clean(msg)))


@contextmanager
def clean_errors() -> Iterator[None]:
    """Errors may quote module paths or tensor names from a .gpv file: clean them (the same
    exception, so its exit code stays) before ``main`` prints them to stderr."""
    try:
        yield
    except GpuportError as exc:
        text = clean(str(exc))
        if text != str(exc):
            exc.args = (text,)
        raise


def _check_top(top: int) -> None:
    if top < 0:
        raise GpuportError(f"--top must be 0 or more, not {top}")


def _check_device(device: str) -> str:
    spec = device.strip().lower()
    if not _DEVICE.match(spec):
        raise GpuportError(f"--device must be cpu, cuda or cuda:N, not {device!r}")
    return spec


def _check_format(fmt: OutputFormat) -> None:
    if fmt is OutputFormat.SARIF:
        raise GpuportError("--format must be terminal, json or markdown for validate")


def _fail_on(value: str) -> str:
    value = value.strip().lower()
    if value not in FAIL_ON:
        raise GpuportError(f"--fail-on must be wrong or different, not {value!r}")
    return value


def _emit_report(report: object, fmt: OutputFormat, output: Path | None, top: int) -> None:
    from gpuport.render import validate_render
    from gpuport.validate.model import ParityReport

    if not isinstance(report, ParityReport):
        raise TypeError(type(report).__name__)

    def text() -> str:
        if fmt is OutputFormat.JSON:
            return report.model_dump_json(indent=2) + "\n"
        return validate_render.markdown(report, top=top)

    def terminal(console: Console) -> None:
        validate_render.terminal(report, console, top=top)

    emit(fmt, output, text=text, terminal=terminal)
    if output is not None or fmt is not OutputFormat.TERMINAL:
        err_console.print(
            clean(
                f"gpuport validate {report.mode}: {report.verdict.value} "
                f"({report.verdict_reason})" + (f"; written to {output}" if output else "")
            ),
            highlight=False,
            soft_wrap=True,
            markup=False,
        )


def _exit(report: object, fail_on: str, allow_weight_diff: bool = False) -> None:
    """Exit 1 on findings, when nothing could be compared (that verified nothing), and when
    B's weights differ from A's unless --allow-weight-diff (then every module differs)."""
    from gpuport.validate.model import ParityReport, Status, Verdict

    if not isinstance(report, ParityReport):
        raise TypeError(type(report).__name__)
    bad = {Status.WRONG} if fail_on == "wrong" else {Status.WRONG, Status.DIFFERENT}
    if report.weights_differ and not allow_weight_diff:
        err_console.print(
            "gpuport validate: B's weights differ from A's: exit 1 (--allow-weight-diff to "
            "compare them anyway)",
            highlight=False,
            markup=False,
        )
        raise typer.Exit(EXIT_FINDINGS)
    if report.verdict is Verdict.NOTHING or any(r.status in bad for r in report.rows):
        raise typer.Exit(EXIT_FINDINGS)


@validate_app.command("capture")
def capture_cmd(
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            help="pkg.module:build or path/to/file.py:build; build() returns "
            "(model, example_inputs). This runs your code.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="The .gpv file to write.")],
    modules: Annotated[
        list[str] | None,
        typer.Option(
            "--modules", help="Only modules whose path matches this glob (and those below)."
        ),
    ] = None,
    max_bytes: Annotated[
        str, typer.Option("--max-bytes", help="Stop recording beyond this size, e.g. 2GiB.")
    ] = "2GiB",
    backward: Annotated[
        bool, typer.Option("--backward", help="Also record gradients of a backward pass.")
    ] = False,
    device: Annotated[str, typer.Option("--device", help="cpu, cuda or cuda:N.")] = "cpu",
    seed: Annotated[int, typer.Option("--seed", help="Seed set before build() and forward.")] = 0,
    fmt: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="terminal or json (the summary).")
    ] = OutputFormat.TERMINAL,
) -> None:
    """Machine A: run the model once and record every computing module's inputs and outputs.

    Runs your --model function (your code, on purpose) on the CPU unless --device; turns a
    Hugging Face model's KV cache off (one forward computes the same outputs; said in
    left_out) so that attention calls can be replayed.
    """
    from gpuport.render import validate_render
    from gpuport.validate.capture import CaptureOptions, capture

    if fmt not in (OutputFormat.TERMINAL, OutputFormat.JSON):
        raise GpuportError("--format must be terminal or json for capture")
    opts = CaptureOptions(
        model_ref=model,
        out=out,
        modules=tuple(modules or ()),
        max_bytes=parse_size(max_bytes),
        backward=backward,
        device=_check_device(device),
        seed=seed,
    )
    with clean_errors(), progress() as say:
        summary = capture(opts, say)
    if fmt is OutputFormat.JSON:
        sys.stdout.write(summary.model_dump_json(indent=2) + "\n")
    else:
        validate_render.capture_terminal(summary, Console())


@validate_app.command("check")
def check_cmd(
    capture_file: Annotated[Path, typer.Argument(help="The .gpv file from machine A.")],
    model: Annotated[
        str,
        typer.Option("--model", "-m", help="The same build() as on A. This runs your code."),
    ],
    grafted: Annotated[
        bool,
        typer.Option("--grafted", help="Run every module on A's recorded inputs: local error."),
    ] = False,
    reference: Annotated[
        str,
        typer.Option(
            "--reference", help="fp64 (default): arbitrate suspects against float64; or none."
        ),
    ] = "fp64",
    device: Annotated[str, typer.Option("--device", help="cpu, cuda or cuda:N.")] = "cpu",
    fmt: FormatOpt = OutputFormat.TERMINAL,
    output: OutputOpt = None,
    top: TopOpt = 15,
    fail_on: FailOpt = "wrong",
    precision: Annotated[
        str | None,
        typer.Option(
            "--precision",
            help="bf16 or fp16: run B in this format against A's fp32 capture and judge each "
            "module by what the format explains.",
        ),
    ] = None,
    allow_weight_diff: Annotated[
        bool,
        typer.Option(
            "--allow-weight-diff", help="Do not fail (exit 1) when B's weights differ from A's."
        ),
    ] = False,
) -> None:
    """Machine B: replay A's inputs, compare module by module, name the first divergence.

    Assumes A's numeric settings and model inputs (from the .gpv file); per-dtype tolerances
    that grow with the reduction length; fp64 arbitration unless --reference none; the CPU
    unless --device.
    """
    from gpuport.validate import precision as formats
    from gpuport.validate.check import CheckOptions, check

    _check_format(fmt)
    _check_top(top)
    fail = _fail_on(fail_on)
    fmt_name = formats.parse(precision)
    ref = reference.strip().lower()
    if ref not in ("fp64", "none"):
        raise GpuportError(f"--reference must be fp64 or none, not {reference!r}")
    opts = CheckOptions(
        path=capture_file,
        model_ref=model,
        grafted=grafted,
        reference=ref,
        device=_check_device(device),
        precision=fmt_name,
    )
    with clean_errors():
        with progress() as say:
            report = check(opts, say)
        _emit_report(report, fmt, output, top)
    _exit(report, fail, allow_weight_diff)


@validate_app.command("diff")
def diff_cmd(
    a: Annotated[Path, typer.Argument(help="Capture from machine A (the reference).")],
    b: Annotated[Path, typer.Argument(help="Capture from machine B.")],
    fmt: FormatOpt = OutputFormat.TERMINAL,
    output: OutputOpt = None,
    top: TopOpt = 15,
    fail_on: FailOpt = "wrong",
) -> None:
    """Compare two captures tensor by tensor, without any model (no user code runs)."""
    from gpuport.validate.diff import diff_files

    _check_format(fmt)
    _check_top(top)
    fail = _fail_on(fail_on)
    with clean_errors():
        with progress() as say:
            report = diff_files(a, b, observer=say)
        _emit_report(report, fmt, output, top)
    _exit(report, fail)


def register(app: typer.Typer) -> None:
    app.add_typer(validate_app, name="validate")
