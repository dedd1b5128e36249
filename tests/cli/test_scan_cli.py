"""`gpuport scan` from the command line: formats, exit codes, and bad input."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from gpuport.scan.model import ScanReport
from tests.conftest import EXAMPLE, run_subprocess


def test_terminal_report_shows_verdict_effort_and_blockers(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("scan", str(EXAMPLE), "--no-progress")
    assert res.code == 0
    assert "BLOCKED" in res.out
    assert "Core code (judged): blocker " in res.out
    verdict = res.out[res.out.index("BLOCKED") : res.out.index("Core code (judged)")]
    # one line: the verdict, the effort's total and the reason cut to fit (issue 29)
    assert "engineer-days · " in verdict and verdict.count("\n") == 1
    assert "Python layer and dependencies" not in verdict  # components: --verbose
    assert "effort basis" in res.out.splitlines()[-1]  # the footer names what -v adds
    assert "csrc/fused_rmsnorm.cu" in res.out
    # the hours per rule, each component's basis and the route evidence's details: --verbose
    # (issue 29: few lines)
    assert "Listed changes" not in res.out and "of listed changes (GP" not in res.out
    verbose = cli("scan", str(EXAMPLE), "--no-progress", "--verbose")
    assert "Listed changes (hours per rule)" in verbose.out
    assert "of listed changes (GP" in verbose.out and "reviews, CI, hardware access" in verbose.out
    assert "Effort by component" in verbose.out and "calendar time is" in verbose.out
    assert "Python layer and dependencies" in verbose.out


def test_json_output_validates_as_a_scan_report(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "scan.json"
    res = cli("scan", str(EXAMPLE), "--format", "json", "--output", str(out))
    assert res.code == 0
    assert res.out == ""
    assert "written to" in res.err
    report = ScanReport.model_validate_json(out.read_text())
    assert report.schema_version == "1.0"
    assert report.verdict.value == "blocked"
    assert report.counts["blocker"] > 0


def test_fail_on_gates_ci(cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("scan", str(EXAMPLE), "--format", "json", "--fail-on", "blocker").code == 1
    assert cli("scan", str(EXAMPLE), "--format", "json", "--fail-on", "never").code == 0


def test_fail_on_passes_on_a_clean_project(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "requirements.txt").write_text("numpy>=1.26\n")
    (tmp_path / "main.py").write_text("import numpy as np\nprint(np.zeros(3))\n")
    res = cli("scan", str(tmp_path), "--format", "json", "--fail-on", "minor")
    assert res.code == 0
    assert json.loads(res.out)["verdict"] == "ready"


def test_markdown_output(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("scan", str(EXAMPLE), "--format", "markdown", "--target", "mi300x")
    assert res.code == 0
    assert res.out.startswith("# gpuport scan: blocked")
    assert "| severity | scope | rule | where | what | fix |" in res.out
    assert "**gfx942**" in res.out
    # the effort by component: regime, range, basis and AMD equivalent, then the total
    assert "## Effort\n" in res.out
    assert "| component | regime | days | basis | AMD equivalent |" in res.out
    assert "| bring-up and validation | bring-up |" in res.out
    assert "Total: **" in res.out and "engineer time" in res.out


def test_select_and_ignore(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("scan", str(EXAMPLE), "--format", "json", "--select", "GP1")
    ids = {f["rule_id"] for f in json.loads(res.out)["findings"]}
    assert ids and all(i.startswith("GP1") for i in ids)
    res = cli("scan", str(EXAMPLE), "--format", "json", "--ignore", "GP1,GP2")
    ids = {f["rule_id"] for f in json.loads(res.out)["findings"]}
    assert ids and not any(i.startswith(("GP1", "GP2")) for i in ids)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["scan", "no/such/dir"], "path does not exist"),
        (["scan", str(EXAMPLE), "--target", "gfx9999"], "unknown target"),
        (["scan", str(EXAMPLE), "--fail-on", "sometimes"], "--fail-on must be one of"),
        (["scan", str(EXAMPLE), "--select", "GP999"], "no rule matches"),
        (["scan", str(EXAMPLE), "--kind", "fortran"], "unknown --kind"),
        (["scan", str(EXAMPLE), "--knowledge", "no/such/dir"], "not a directory"),
        (["explain", "GP999"], "no rule"),
    ],
)
def test_bad_input_is_one_line_exit_2(cli, args: list[str], message: str) -> None:  # type: ignore[no-untyped-def]
    res = cli(*args)
    assert res.code == 2
    assert message in res.err
    assert "Traceback" not in res.err
    assert res.err.strip().count("\n") == 0


def test_output_into_missing_folder_writes_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "missing" / "out.json"
    res = cli("scan", str(EXAMPLE), "--format", "json", "--output", str(target))
    assert res.code == 2
    assert "does not exist" in res.err
    assert not target.parent.exists()


def test_existing_output_is_replaced_whole(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "scan.sarif"
    out.write_text("old")
    assert cli("scan", str(EXAMPLE), "--format", "sarif", "--output", str(out)).code == 0
    assert json.loads(out.read_text())["version"] == "2.1.0"
    assert [p.name for p in tmp_path.iterdir()] == ["scan.sarif"]


def test_invalid_user_knowledge_is_refused(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "packages.toml").write_text("[[package]]\nname = 'x'\nstatus = 'maybe'\n")
    res = cli("scan", str(EXAMPLE), "--knowledge", str(tmp_path))
    assert res.code == 2
    assert "packages.toml" in res.err


def test_user_knowledge_overrides_a_package(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "packages.toml").write_text(
        "[[package]]\nname = 'fastapi'\nstatus = 'no'\nsummary = 'banned here'\n"
        "route = { kind = 'none', how = 'use our internal server' }\n"
        "sources = ['https://example.org/policy']\nchecked = 2026-11-01\n"
    )
    res = cli("scan", str(EXAMPLE), "--format", "json", "--knowledge", str(tmp_path))
    found = [f for f in json.loads(res.out)["findings"] if "fastapi" in f["message"]]
    assert found and found[0]["rule_id"] == "GP101"


def _bad_tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "ok.py").write_text("import pynvml\n")
    (root / "binary.py").write_bytes(b"import torch\x00\x01\x02")
    with (root / "huge.py").open("wb") as fh:
        fh.truncate(50 * 1024 * 1024)
    (root / "latin1.cu").write_bytes("// caf\xe9\n__global__ void k() {}\n".encode("latin-1"))
    (root / "broken.py").write_text("import pynvml\ndef f(:\n    pynvml.nvmlInit()\n")
    (root / "loop_a.py").symlink_to(root / "loop_b.py")
    (root / "loop_b.py").symlink_to(root / "loop_a.py")
    (root / "sub").mkdir()
    (root / "sub" / "back").symlink_to(root)
    (root / "secret.py").write_text("import pynvml\n")
    os.chmod(root / "secret.py", 0)
    os.mkfifo(root / "pipe.py")
    with open(os.path.join(os.fsencode(root), b"name\xff.py"), "wb") as fh:
        fh.write(b"import pynvml\n")
    return root


def test_bad_files_are_skipped_with_reasons(cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    root = _bad_tree(tmp_path)
    if os.geteuid() == 0:  # root reads anything: make the unreadable file unreadable for real
        real_open = os.open

        def guarded_open(path, *a, **k):  # type: ignore[no-untyped-def]
            if os.fspath(path).endswith("secret.py"):
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real_open(path, *a, **k)

        monkeypatch.setattr(os, "open", guarded_open)  # gpuport.fileio opens with os.open
    res = cli("scan", str(root), "--format", "json", "--jobs", "1")
    assert res.code == 0, res.err
    report = json.loads(res.out)
    reasons = {s["path"]: s["reason"] for s in report["skipped"]}
    assert "binary" in reasons["binary.py"]
    assert "too large" in reasons["huge.py"]
    assert "not valid UTF-8" in reasons["latin1.cu"]
    assert "syntax error" in reasons["broken.py"].lower()
    assert reasons["loop_a.py"] == "symbolic link loop"
    assert reasons["loop_b.py"] == "symbolic link loop"
    assert reasons["secret.py"] == "permission denied"
    assert reasons["pipe.py"] == "not a regular file (pipe, socket or device)"
    assert reasons["name\\xff.py"] == "file name is not valid UTF-8"
    assert "sub/back" in reasons  # a symlinked folder is reported, not followed
    assert any(f["location"]["path"] == "ok.py" for f in report["findings"])


@pytest.mark.parametrize("fmt", ["terminal", "json", "sarif", "markdown"])
def test_bad_files_never_cause_a_traceback_in_a_real_process(tmp_path: Path, fmt: str) -> None:
    root = _bad_tree(tmp_path)
    res = run_subprocess("scan", str(root), "--no-progress", "--format", fmt)
    assert res.code == 0, res.err
    assert "Traceback" not in res.err
    assert "xff.py" in res.out  # the undecodable name is listed, escaped per format


def test_setup_py_is_never_executed(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "proj"
    root.mkdir()
    marker = tmp_path / "EXECUTED"
    (root / "setup.py").write_text(
        f"open({str(marker)!r}, 'w').write('ran')\n"
        "import os\nos.system('touch " + str(marker) + "')\n"
        "from setuptools import setup\nsetup(name='x', install_requires=['pycuda>=2022.1'])\n"
    )
    res = cli("scan", str(root), "--format", "json")
    assert res.code == 0
    assert not marker.exists()
    assert any("pycuda" in f["message"] for f in json.loads(res.out)["findings"])


def test_progress_is_silent_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    res = run_subprocess("scan", str(EXAMPLE), "--format", "json")
    assert res.code == 0
    assert res.err.strip().count("\n") == 0  # only the one-line summary
    assert res.err.startswith("gpuport scan: blocked")


def test_version_and_module_entry_point() -> None:
    res = run_subprocess("--version")
    assert res.code == 0
    assert res.out.startswith("gpuport ")


def test_a_mistyped_target_suggests_and_fits_a_terminal_line(cli) -> None:  # type: ignore[no-untyped-def]
    """The trial's `--target mi30` printed every alias of every target: 1,900 characters on one
    line. The suggestion, the gfx names and their first two product names stay."""
    res = cli("scan", str(EXAMPLE), "--target", "mi30")
    assert res.code == 2
    assert "did you mean mi350, mi300" in res.err
    assert "gfx942 (mi300x, mi300a, …)" in res.err and "gfx90a (mi250x" in res.err
    assert "cdna3" not in res.err  # the fifth alias of gfx942
    assert res.err.strip().count("\n") == 0
    assert len(res.err.strip()) < 700
