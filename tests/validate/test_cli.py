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
    assert summary["calls"] == 30 and out.is_file()
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


# --- regressions from the review -------------------------------------------------------------


def test_nothing_compared_exits_1(vcli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "skip.gpv"
    # 64 bytes: the model input and the one module's output; the model's output is left out
    r = vcli("capture", "--model", ref("build_skip"), "--out", str(out), "--max-bytes", "64")
    assert r.code == 0, r.err
    r = vcli("check", str(out), "--model", ref("build_skip_bypass"), "-f", "json")
    assert json.loads(r.out)["verdict"] == "nothing-compared"
    assert r.code == 1  # a check that verified nothing must not pass


def test_escape_sequences_from_a_capture_never_reach_stderr(vcli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "evil.gpv"
    assert vcli("capture", "--model", ref("build_evil"), "--out", str(out)).code == 0
    r = vcli("check", str(out), "--model", ref("build_evil_broken"), "-f", "json")
    assert "first divergence" in r.err and "red" in r.err  # the summary line names it...
    assert "\x1b" not in r.err and "\x07" not in r.err and "\\x1b" in r.err  # ...cleaned
    r = vcli("check", str(out), "--model", ref("build_skip"))  # another model: quotes A's paths
    assert r.code == 2 and "different model" in r.err
    assert "\x1b" not in r.err and "\\x1b" in r.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("check", "{gpv}", "--model", "{helper}", "--top", "-1"), "--top"),
        (("diff", "{missing}", "{gpv}", "--top", "-1"), "--top"),  # before opening files
        (("check", "{gpv}", "--model", "{helper}", "--device", "tpu"), "--device"),
        (("capture", "--model", "{helper}", "--out", "{out}", "--device", "cuda:x"), "--device"),
    ],
)
def test_options_are_checked_before_anything_runs(
    vcli, a_gpv: Path, tmp_path: Path, args, message
) -> None:  # type: ignore[no-untyped-def]
    ran = tmp_path / "ran"
    helper = tmp_path / "marker.py"
    helper.write_text(
        "import pathlib, torch\n"
        "def build():\n"
        f"    pathlib.Path({str(ran)!r}).write_text('ran')\n"
        "    return torch.nn.Linear(2, 2), torch.ones(1, 2)\n"
    )
    fill = {"gpv": str(a_gpv), "helper": f"{helper}:build", "out": str(tmp_path / "o.gpv")}
    fill["missing"] = str(tmp_path / "missing.gpv")
    r = vcli(*(a.format(**fill) for a in args))
    assert r.code == 2 and message in r.err, r.err
    assert not ran.exists()  # the model was never built


def test_float_to_int_output_in_diff_is_wrong(vcli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a, b = tmp_path / "a.gpv", tmp_path / "b.gpv"
    assert vcli("capture", "--model", ref("build_quant"), "--out", str(a)).code == 0
    assert vcli("capture", "--model", ref("build_quant_int"), "--out", str(b)).code == 0
    r = vcli("diff", str(a), str(b), "-f", "json")
    report = json.loads(r.out)
    assert r.code == 1 and report["verdict"] == "wrong"
    assert any("dtype differs in kind" in row["reason"] for row in report["rows"])
