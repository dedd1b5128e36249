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
    # the Markdown diff is printed in terminals too (`port -f markdown | less -R`, CI logs)
    assert "\x1b" not in md and "\\x1b[2J" in md


def test_hostile_file_names_cannot_forge_diff_lines(tmp_path: Path) -> None:
    """A folder named ``n\\n+++ b`` made the diff read ``+++ b/forged.cu`` on a line of its
    own, and an escape in a name reached the terminal (red-team re-run 11). Names are quoted
    as git quotes them, in every format."""
    names = ["n\n+++ b/forged.cu", "c\x1b]52;c;cHduZWQ=\x07.cu", 'q"t\\u.cu', "r\u202egpj.cu"]
    root = project(tmp_path, dict.fromkeys(names, KERNEL))
    report = run(root)
    assert len(report.files) == len(names)
    diff = report.diff()
    headers = [line for line in diff.splitlines() if line.startswith(("--- ", "+++ "))]
    assert len(headers) == 2 * len(names)  # no extra header line
    assert '--- "a/n\\n+++ b/forged.cu"' in headers
    assert '+++ "b/q\\"t\\\\u.cu"' in headers
    assert not any(c in diff for c in ("\x1b", "\x07", "\u202e"))  # only the hunks' own text
    md = render_markdown(report)
    assert not any(c in md for c in ("\x1b", "\x07", "\u202e"))
    assert not any(line.startswith("+++ b/forged") for line in md.splitlines())


def test_a_quoted_name_applies_with_git(tmp_path: Path) -> None:
    """The quoted header is git's own: ``git apply`` reads the name back."""
    import shutil
    import subprocess

    git = shutil.which("git")
    assert git, "git is needed (make test installs it with the system packages)"
    name = 'tab\tand "quote".cu'
    root = project(tmp_path / "p", {name: KERNEL})
    patch = tmp_path / "fix.patch"
    patch.write_text(run(root).diff(), encoding="utf-8")
    subprocess.run([git, "apply", str(patch)], cwd=root, check=True, stdin=subprocess.DEVNULL)
    assert "GPUPORT_FULL_MASK" in (root / name).read_text()
