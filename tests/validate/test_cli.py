"""The validate CLI: exit codes 0/1/2/3, formats, progress on stderr, result on stdout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuport.cli.validate_cmd import parse_size
from gpuport.models import GpuportError

from .conftest import ref


def test_capture_then_check_ok(vcli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "a.gpv"
    r = vcli("capture", "--model", ref(), "--out", str(out), "--format", "json")
    assert r.code == 0, r.err
    summary = json.loads(r.out)
    assert summary["calls"] == 23 and out.is_file()
    r = vcli("check", str(out), "--model", ref(), "--format", "json")
    assert r.code == 0, r.err
    report = json.loads(r.out)
    assert report["kind"] == "gpuport.validate" and report["verdict"] == "same"
    assert report["first_divergence"] is None
    assert "same" in r.err  # the one-line summary goes to stderr


def test_wrong_module_exits_1(vcli, a_gpv: Path) -> None:  # type: ignore[no-untyped-def]
    r = vcli("check", str(a_gpv), "--model", ref("build_bf16"), "--format", "json")
    assert r.code == 1
    assert json.loads(r.out)["first_divergence"] == "layers.1.mlp.down"


def test_fail_on_different(vcli, a_gpv: Path) -> None:  # type: ignore[no-untyped-def]
    r = vcli("check", str(a_gpv), "--model", ref("build_eps"), "--format", "json")
    assert r.code == 0  # different, not wrong
    r = vcli(
        "check", str(a_gpv), "--model", ref("build_eps"), "--fail-on", "different", "-f", "json"
    )
    assert r.code == 1


def test_terminal_and_markdown(vcli, a_gpv: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = vcli("check", str(a_gpv), "--model", ref("build_bf16"), "--grafted")
    assert r.code == 1
    assert "layers.1.mlp.down" in r.out and "WRONG" in r.out
    md = tmp_path / "r.md"
    r = vcli("check", str(a_gpv), "--model", ref("build_bf16"), "-f", "markdown", "-o", str(md))
    assert r.code == 1 and r.out == ""
    text = md.read_text()
    assert text.startswith("# gpuport validate check: **wrong**")
    assert "| layers.1.mlp.down |" in text and "## Tolerances used" in text


def test_diff_command(vcli, a_gpv: Path) -> None:  # type: ignore[no-untyped-def]
    r = vcli("diff", str(a_gpv), str(a_gpv), "--format", "json")
    assert r.code == 0 and json.loads(r.out)["verdict"] == "same"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("check", "{gpv}", "--model", "no_colon"), "must look like"),
        (("check", "{gpv}", "--model", "nosuchmodule_xyz:build"), "no module named"),
        (("check", "{gpv}", "--model", "{models}:nothing"), "has no attribute"),
        (("check", "{gpv}", "--model", "{models}:DIM"), "not callable"),
        (("check", "{missing}", "--model", "{models}:build"), "cannot read"),
        (("check", "{gpv}", "--model", "{models}:build", "--reference", "fp32"), "--reference"),
        (("check", "{gpv}", "--model", "{models}:build", "-f", "sarif"), "--format"),
        (("check", "{gpv}", "--model", "{models}:build", "--fail-on", "x"), "--fail-on"),
        (("capture", "--model", "{models}:build", "--out", "{gpv2}", "--max-bytes", "x"), "size"),
        (("check", "{gpv}", "--model", "{models}:build_other"), "different model"),
    ],
)
def test_bad_input_exits_2(vcli, a_gpv: Path, tmp_path: Path, args, message) -> None:  # type: ignore[no-untyped-def]
    models = ref().rsplit(":", 1)[0]
    fill = {
        "gpv": str(a_gpv),
        "gpv2": str(tmp_path / "x.gpv"),
        "missing": str(tmp_path / "missing.gpv"),
        "models": models,
    }
    r = vcli(*(a.format(**fill) for a in args))
    assert r.code == 2, (r.out, r.err)
    assert message in r.err and "Traceback" not in r.err


def test_no_gpu_exits_3(vcli, a_gpv: Path) -> None:  # type: ignore[no-untyped-def]
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    r = vcli("check", str(a_gpv), "--model", ref(), "--device", "cuda")
    assert r.code == 3 and "GPU" in r.err


def test_missing_extra_exits_3(vcli, a_gpv: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import sys

    monkeypatch.setitem(sys.modules, "safetensors", None)  # "not installed"
    r = vcli("diff", str(a_gpv), str(a_gpv))
    assert r.code == 3 and "'safetensors'" in r.err and "Traceback" not in r.err


def test_parse_size() -> None:
    assert parse_size("2GiB") == 2 * 1024**3
    assert parse_size("500MB") == 500_000_000
    assert parse_size("1000") == 1000
    with pytest.raises(GpuportError):
        parse_size("-1")
    with pytest.raises(GpuportError):
        parse_size("0")


def test_capture_options(vcli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "f.gpv"
    r = vcli(
        "capture",
        "--model",
        ref(),
        "--out",
        str(out),
        "--modules",
        "layers.0.*",
        "--max-bytes",
        "40KB",
        "--seed",
        "3",
        "--backward",
    )
    assert r.code == 0, r.err
    assert "left out by --max-bytes" in r.out and "captured" in r.out
    r = vcli("check", str(out), "--model", ref(), "-f", "json")
    report = json.loads(r.out)
    assert r.code == 0 and report["verdict"] == "same" and report["left_out"]
    assert not any("did not record" in w for w in report["warnings"])
