"""Shared helpers for the cost tests: the command through a local Typer app, and bench runs.

``gpuport.cli.app`` registers the commands; until it registers ``cost`` these tests mount
it on their own app and turn a GpuportError into exit code 2 the way ``main`` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from typer.testing import CliRunner

from gpuport.bench.model import BenchResult, BenchRun, CaseStatus, DeviceInfo
from gpuport.cli import cost_cmd
from gpuport.models import EnvFingerprint, GpuportError


@dataclass
class Result:
    code: int
    out: str
    err: str


def _app() -> typer.Typer:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

    @app.callback()
    def _root() -> None:
        """gpuport (test mount)."""

    cost_cmd.register(app)
    return app


def run_cost(*args: str) -> Result:
    """``gpuport cost ARGS``: exit code, stdout, stderr (a GpuportError is one line, code 2)."""
    result = CliRunner().invoke(_app(), ["cost", *args], env={"COLUMNS": "200"})
    exc = result.exception
    if isinstance(exc, GpuportError):
        return Result(exc.exit_code, result.stdout, str(exc))
    if exc is not None and not isinstance(exc, SystemExit):
        raise exc
    return Result(result.exit_code, result.stdout, result.stderr)


def bench_run(
    *,
    name: str = "AMD Instinct MI300X",
    arch: str = "gfx942",
    spec_key: str | None = "mi300x",
    backend: str = "rocm",
    membw: dict[str, float] | None = None,
    gemm: dict[str, float] | None = None,
    label: str = "mine",
) -> BenchRun:
    """A hand-made bench run with the given membw (kernel: GB/s) and gemm (dtype: TFLOPS)."""
    results = [
        BenchResult(workload="membw", case=kernel, unit="GB/s", value=value,
                    params={"kernel": kernel, "dtype": "fp32"})
        for kernel, value in (membw or {}).items()
    ]  # fmt: skip
    for dtype, value in (gemm or {}).items():
        results.append(
            BenchResult(workload="gemm", case=f"{dtype} 8192x8192x8192", unit="TFLOPS",
                        value=value, params={"dtype": dtype})
        )  # fmt: skip
        results.append(
            BenchResult(workload="gemm", case=f"{dtype} 4096x4096x4096", unit="TFLOPS",
                        value=value / 2, params={"dtype": dtype})
        )  # fmt: skip
    results.append(
        BenchResult(workload="gemm", case="fp32 1x1x1", status=CaseStatus.SKIPPED, reason="test")
    )
    return BenchRun(
        id=f"run-{label}-0123456789",
        label=label,
        suite="quick",
        env=EnvFingerprint.collect(),
        device=DeviceInfo(backend=backend, name=name, arch=arch, spec_key=spec_key),  # type: ignore[arg-type]
        started="2026-11-22T08:00:00+00:00",
        duration_s=12.0,
        results=results,
    )


# Exact capacities the drivers report (what the catalog's memory_bytes holds): nvidia-smi's
# 81,559 MiB for an H100 SXM, rocm-smi's / torch's total for an MI300X. Tests build specs
# with them so that their figures do not rest on the catalog's rounding.
EXACT_BYTES = {"h100-sxm": 85_520_809_984, "mi300x": 205_822_885_888}


def exact(key: str) -> Any:
    """The catalog spec for ``key`` with its exact device memory."""
    from gpuport.knowledge.gpus import resolve_gpu

    return resolve_gpu(key).model_copy(update={"memory_bytes": EXACT_BYTES[key]})


def exact_knowledge(folder: Path) -> Path:
    """A --knowledge folder whose gpus.toml gives h100-sxm and mi300x their exact bytes.

    A user entry replaces the bundled one whole, so each entry is the bundled block with a
    ``memory_bytes`` line: the CLI then reads exactly what :func:`exact` builds.
    """
    from gpuport.knowledge.gpus import GPUS_TOML

    text = GPUS_TOML.read_text(encoding="utf-8")
    blocks = text.split("\n[[gpu]]\n")[1:]
    out = []
    for block in blocks:
        key = next(
            line.split("=", 1)[1].strip().strip('"')
            for line in block.splitlines()
            if line.startswith("key =")
        )
        if key in EXACT_BYTES:
            lines = [line for line in block.splitlines() if not line.startswith("memory_bytes")]
            at = next(i for i, line in enumerate(lines) if line.startswith("memory_gb"))
            lines.insert(at + 1, f"memory_bytes = {EXACT_BYTES[key]}")
            out.append("[[gpu]]\n" + "\n".join(lines) + "\n")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gpus.toml").write_text("".join(out), encoding="utf-8")
    return folder
