"""The command line and the three formats."""

from __future__ import annotations

import json
from pathlib import Path

from gpuport.port.model import PortReport
from gpuport.render.port_render import render_markdown
from tests.port.helpers import project, run

KERNEL = "__device__ int f(int v) { return __shfl_xor_sync(0xffffffff, v, 1); }\n"


def test_cli_diff_json_markdown_and_apply(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = project(tmp_path, {"k.cu": KERNEL})
    res = cli("port", str(root))
    assert res.code == 0 and "GPUPORT_FULL_MASK" in res.out and "gpuport: GP302" in res.out
    res = cli("port", str(root), "--format", "json")
    report = PortReport.model_validate_json(res.out)
    assert report.kind == "gpuport.port" and report.files[0].path == "k.cu"
    res = cli("port", str(root), "--format", "markdown")
    assert "```diff" in res.out and "## Fixes" in res.out
    assert (root / "k.cu").read_text() == KERNEL  # nothing written so far
    res = cli("port", str(root), "--apply", "--format", "json")
    assert res.code == 0 and json.loads(res.out)["written"] == ["k.cu"]
    assert "GPUPORT_FULL_MASK" in (root / "k.cu").read_text()
    assert "1 fix(es) written" in res.err


def test_cli_usage_errors(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = project(tmp_path, {"k.cu": KERNEL})
    res = cli("port", str(root), "--apply", "--diff")
    assert res.code == 2 and "exclude each other" in res.err
    res = cli("port", str(root / "missing"))
    assert res.code == 2 and "Traceback" not in res.err
    res = cli("port", str(root), "--check", "--offload-arch", "gfx90a;rm -rf /")
    assert res.code == 2


def test_markdown_fence_and_control_characters(tmp_path: Path) -> None:
    src = "// ```\x1b[2J\n" + KERNEL
    report = run(project(tmp_path, {"k.cu": src}))
    md = render_markdown(report)
    assert "````diff" in md  # a fence longer than the backticks inside
    from rich.console import Console

    from gpuport.render.port_render import render_terminal

    console = Console(record=True, width=120, force_terminal=False)
    render_terminal(report, console)
    shown = console.export_text()
    assert "\x1b" not in shown and "\\x1b" in shown
