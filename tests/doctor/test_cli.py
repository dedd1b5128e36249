"""``gpuport doctor`` end to end: the real run on this machine, save and replay, exit codes,
formats, and the read-only promise."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.doctor.conftest import only_files
from tests.doctor.test_snapshots import SNAPSHOTS


def test_real_run_is_quick_read_only_and_replays(  # type: ignore[no-untyped-def]
    doctor_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    started = time.monotonic()
    res = doctor_cli("--format", "json", "--output", "report.json", "--save-snapshot", "snap.json")
    took = time.monotonic() - started
    assert took < 30, f"doctor took {took:.1f} s"  # generous hang guard; ~2-4 s measured
    assert res.code in (0, 1), res.err
    assert "Traceback" not in res.err
    # Read-only: nothing but the two files asked for, nothing in HOME.
    assert only_files(work) == {"report.json", "snap.json"}
    assert only_files(home) == set()
    report = json.loads((work / "report.json").read_text())
    assert report["kind"] == "gpuport.doctor"
    snapshot = json.loads((work / "snap.json").read_text())
    if not snapshot["pci"] and not snapshot["nodes"]:  # this dev machine: no GPU, CPU torch
        assert report["summary"][0].startswith("No GPU is present on this machine")
        torch = snapshot["python"]["distributions"].get("torch", "")
        if torch.endswith("+cpu"):
            assert report["summary"][1] == f"PyTorch {torch}: CPU-only build."
        # GP630 (`import torch` ran out of time: not judged broken) on a loaded machine only
        ids = [d["rule_id"] for d in report["diagnoses"]]
        assert [i for i in ids if i != "GP630"] == ["GP601"]
        assert res.code == 0
    replay = doctor_cli("--from-snapshot", "snap.json", "--format", "json")
    assert replay.code == res.code
    again = json.loads(replay.out)
    assert again["replayed"] is True and again["snapshot_id"] == report["snapshot_id"]
    assert again["diagnoses"] == report["diagnoses"]
    assert again["layers"] == report["layers"]


def test_failure_exits_1_with_the_fix_command(doctor_cli) -> None:  # type: ignore[no-untyped-def]
    res = doctor_cli("--from-snapshot", str(SNAPSHOTS / "radeon_user_not_in_render_group.json"))
    assert res.code == 1
    assert "GP608" in res.out and "sudo usermod -aG render,video $USER" in res.out
    assert "device nodes" in res.out and "fail" in res.out


def test_warnings_only_exit_0(doctor_cli) -> None:  # type: ignore[no-untyped-def]
    res = doctor_cli("--from-snapshot", str(SNAPSHOTS / "mi300x_numa_balancing_on.json"))
    assert res.code == 0
    assert "GP617" in res.out and "sudo sysctl kernel.numa_balancing=0" in res.out


def test_markdown_to_a_file(doctor_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "doctor.md"
    res = doctor_cli(
        "--from-snapshot",
        str(SNAPSHOTS / "mi210_stale_hsa_override.json"),
        "--format",
        "markdown",
        "--output",
        str(out),
        "--verbose",
    )
    assert res.code == 1 and res.out == ""
    text = out.read_text()
    assert "### FAIL GP627" in text and "```console\n$ unset HSA_OVERRIDE_GFX_VERSION" in text
    assert "| runtime |" in text and "## Probes" in text


@pytest.mark.parametrize(
    "args",
    [
        ("--format", "sarif"),
        ("--timeout", "0"),
        ("--from-snapshot", "does-not-exist.json"),
    ],
)
def test_bad_input_exits_2(doctor_cli, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    res = doctor_cli(*args)
    assert res.code == 2, res.err
    assert "Traceback" not in res.err and "error" in res.err


def test_tampered_and_invalid_snapshots_exit_2(doctor_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((SNAPSHOTS / "h100_healthy.json").read_text())
    data["torch"]["cuda"] = "13.0"  # valid JSON, valid schema, but not what was recorded
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data))
    res = doctor_cli("--from-snapshot", str(tampered))
    assert res.code == 2 and "does not match its id" in res.err
    broken = tmp_path / "broken.json"
    broken.write_text('{"kind": "gpuport.doctor.snapshot", "schema_version": "1.0", "pci": 3}')
    res = doctor_cli("--from-snapshot", str(broken))
    assert res.code == 2 and "pci" in res.err
    garbage = tmp_path / "garbage.json"
    garbage.write_bytes(b"\x00\xff not json")
    assert doctor_cli("--from-snapshot", str(garbage)).code == 2


def test_untrusted_text_is_neutralised(doctor_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = json.loads((SNAPSHOTS / "radeon_7900xtx_healthy.json").read_text())
    data["id"] = ""
    data["env"] = {"HSA_OVERRIDE_GFX_VERSION": "\x1b]8;;http://evil\x07<b>x</b>`rm`"}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(data))
    term = doctor_cli("--from-snapshot", str(path))
    assert "\x1b]8" not in term.out and "\\x1b]8" in term.out
    md = doctor_cli("--from-snapshot", str(path), "--format", "markdown")
    assert "<b>" not in md.out and "&lt;b&gt;" in md.out
