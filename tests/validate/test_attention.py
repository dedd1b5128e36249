"""Issue 16: validate finds the divergence wherever it is (attention, functional code,
autocast, deployment precision), on the two examples in ``examples/validate/``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuport.models import GpuportError
from gpuport.validate import gpv
from gpuport.validate.capture import CaptureOptions, capture
from gpuport.validate.check import CheckOptions, check
from gpuport.validate.model import Status, Verdict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "validate"
HF = EXAMPLES / "hf_style.py"
MHA = EXAMPLES / "mha.py"


def _check(path: Path, model: Path, name: str, **kw: object):  # type: ignore[no-untyped-def]
    return check(CheckOptions(path=path, model_ref=f"{model}:{name}", **kw))  # type: ignore[arg-type]


def _row(report, path: str):  # type: ignore[no-untyped-def]
    return next(r for r in report.rows if r.path == path and r.kind == "output" and not r.index)


@pytest.fixture(scope="module")
def hf_gpv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hf") / "hf.gpv"
    capture(CaptureOptions(model_ref=f"{HF}:build", out=out))
    return out


@pytest.fixture(scope="module")
def mha_gpv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mha") / "mha.gpv"
    capture(CaptureOptions(model_ref=f"{MHA}:build", out=out))
    return out


def test_multihead_attention_is_traced_and_its_unused_out_proj_is_listed(mha_gpv: Path) -> None:
    with gpv.GpvFile(mha_gpv) as f:
        man = f.manifest
    attn = [r for r in man.modules if r.path == "blocks.0.attn"]
    assert attn and attn[0].op == "MultiheadAttention" and attn[0].own_ops
    assert attn[0].sdpa, "the SDPA inside MultiheadAttention was seen and its backend recorded"
    assert not any(r.path == "blocks.0.mlp" for r in man.modules)  # a pure Sequential: dropped
    assert any(r.path == "blocks.0" for r in man.modules)  # the block adds residuals: kept
    assert any(e.startswith("blocks.0.attn.out_proj: not traced") for e in man.left_out)
    assert any(e.startswith("blocks.1.attn.out_proj: not traced") for e in man.left_out)


def test_bf16_attention_in_multihead_attention_is_named_with_its_op(mha_gpv: Path) -> None:
    report = _check(mha_gpv, MHA, "build_bf16_attention")
    assert report.verdict is Verdict.WRONG
    assert report.first_divergence == "blocks.0.attn"
    attn = _row(report, "blocks.0.attn")
    assert attn.status is Status.WRONG
    op = attn.first_op
    assert op is not None and op.op == "scaled_dot_product_attention"
    assert op.call_site.startswith("examples/validate/mha.py:") or "mha.py:" in op.call_site
    assert op.dtypes[:3] == ["bfloat16"] * 3 and op.nominal_dtype == "float32"
    assert op.shapes[0] == [2, 4, 20, 16]  # batch, heads, seq, head_dim
    assert op.backend_a and op.backend_b  # the SDPA backend of each side
    assert op.err_b > 100 * op.err_ref
    # everything downstream is propagated, the blocks defer to the attention inside them
    assert _row(report, "blocks.0").status is Status.EQUIVALENT
    assert _row(report, "blocks.0.ln2").status is Status.EQUIVALENT
    assert not any("untraced code" in r.reason for r in report.rows)


def test_bf16_sdpa_in_a_hf_style_attention_is_named_not_the_next_leaf(hf_gpv: Path) -> None:
    report = _check(hf_gpv, HF, "build_bf16_attention")
    assert report.first_divergence == "model.layers.0.self_attn"
    attn = _row(report, "model.layers.0.self_attn")
    assert attn.status is Status.WRONG and "first diverging op" in attn.reason
    assert attn.first_op is not None and attn.first_op.op == "scaled_dot_product_attention"
    assert "hf_style.py" in attn.first_op.call_site
    o_proj = _row(report, "model.layers.0.self_attn.o_proj")
    assert o_proj.status is Status.EQUIVALENT  # its inputs came from its parent's own code
    assert "own forward code of model.layers.0.self_attn" in o_proj.reason
    assert _row(report, "model.layers.0").status is Status.EQUIVALENT
    bad = {r.path for r in report.rows if r.status in (Status.WRONG, Status.DIFFERENT)}
    assert bad == {"model.layers.0.self_attn", "model.layers.1.self_attn"}


def test_same_model_is_same_with_everything_traced(hf_gpv: Path) -> None:
    report = _check(hf_gpv, HF, "build")
    assert report.verdict is Verdict.SAME and report.left_out == []
    assert any(r.path == "model.layers.0.self_attn" for r in report.rows)
    assert all(r.first_op is None for r in report.rows)


def test_autocast_on_b_is_the_cause_not_untraced_code(hf_gpv: Path) -> None:
    report = _check(hf_gpv, HF, "build_autocast")
    assert report.verdict is Verdict.DIFFERENT  # a setting, not a kernel: never "wrong"
    first = _row(report, report.first_divergence or "")
    assert first.path == "model.layers.0.self_attn.q_proj"  # the first matmul autocast changes
    assert first.status is Status.DIFFERENT
    assert first.reason.startswith("autocast differs for this call: A off, B bfloat16")
    # the replay ran under B's autocast, and the op-level replay names the GEMM it changed
    assert first.first_op is not None and first.first_op.op == "linear"
    assert first.first_op.out_dtype == "bfloat16" and first.first_op.dtypes[0] == "float32"
    assert first.first_op.call_site.startswith("torch/nn/modules/linear.py:")
    assert not any("untraced code" in r.reason for r in report.rows)
    assert any(w.startswith("autocast: A off, B bfloat16") for w in report.settings_warnings)
    norm = _row(report, "model.layers.0.input_layernorm")
    assert norm.status is Status.SAME  # autocast keeps norms in fp32


def test_deployment_precision_bf16_passes_and_finds_an_fp8_kernel(hf_gpv: Path) -> None:
    clean = _check(hf_gpv, HF, "build", precision="bf16")
    assert clean.precision == "bf16" and clean.verdict is Verdict.SAME
    assert not clean.weights_differ
    tol = _row(clean, "model.layers.0.mlp.down_proj").tolerance
    assert tol is not None and tol.max_rel_rms == pytest.approx(4 * 2.0**-8)
    bug = _check(hf_gpv, HF, "build_fp8_down_proj", precision="bf16")
    assert bug.verdict is Verdict.WRONG
    assert bug.first_divergence == "model.layers.1.mlp.down_proj"
    row = _row(bug, "model.layers.1.mlp.down_proj")
    assert "exceeds what bf16 explains" in row.reason
    assert row.first_op is not None and row.first_op.nominal_dtype == "bfloat16"
    assert _row(bug, "model.layers.1.mlp").status is Status.EQUIVALENT


def test_bf16_weights_are_not_a_different_model_in_precision_mode(
    hf_gpv: Path, tmp_path: Path
) -> None:
    cast = tmp_path / "cast.py"
    cast.write_text(
        "import importlib.util, sys, torch\n"
        f"spec = importlib.util.spec_from_file_location('hf_style_cast', {str(HF)!r})\n"
        "hf = sys.modules['hf_style_cast'] = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(hf)\n"
        "def build():\n"
        "    model, inputs = hf.build()\n"
        "    return model.to(torch.bfloat16), inputs\n"
    )
    with pytest.raises(GpuportError, match=r"different model.*--precision"):
        check(CheckOptions(path=hf_gpv, model_ref=f"{cast}:build"))
    report = check(CheckOptions(path=hf_gpv, model_ref=f"{cast}:build", precision="bf16"))
    assert report.verdict is Verdict.SAME
    assert any("could not be compared with A's" in w for w in report.warnings)


def test_fp8_and_unknown_formats_are_refused(hf_gpv: Path) -> None:
    with pytest.raises(GpuportError, match="fp8 is not supported"):
        _check(hf_gpv, HF, "build", precision="fp8")
    with pytest.raises(GpuportError, match="must be bf16 or fp16"):
        _check(hf_gpv, HF, "build", precision="int4")


def test_weights_that_differ_fail_the_gate(vcli, hf_gpv: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    ref = f"{HF}:build_perturbed"
    out = tmp_path / "r.json"
    res = vcli("check", str(hf_gpv), "--model", ref, "-f", "json", "-o", str(out))
    assert res.code == 1 and "weights differ" in res.err
    report = json.loads(out.read_text())
    assert report["weights_differ"] is True
    assert report["rows"] and report["verdict"] != "wrong"  # exit 1 comes from the weights
    allowed = vcli("check", str(hf_gpv), "--model", ref, "-f", "json", "--allow-weight-diff")
    assert allowed.code == 0
    same = vcli("check", str(hf_gpv), "--model", f"{HF}:build", "-f", "json")
    assert same.code == 0


def test_cli_names_the_op_in_markdown(vcli, mha_gpv: Path) -> None:  # type: ignore[no-untyped-def]
    res = vcli("check", str(mha_gpv), "--model", f"{MHA}:build_bf16_attention", "-f", "markdown")
    assert res.code == 1
    assert "## First diverging op inside a module" in res.out
    assert "product" in res.out and "attention at" in res.out and "SDPA backend A" in res.out
    bad = vcli("check", str(mha_gpv), "--model", f"{MHA}:build", "--precision", "fp4")
    assert bad.code == 2 and "--precision" in bad.err


def test_diff_names_an_autocast_difference_between_two_captures(
    hf_gpv: Path, tmp_path: Path
) -> None:
    from gpuport.validate.diff import diff_files

    b = tmp_path / "b.gpv"
    capture(CaptureOptions(model_ref=f"{HF}:build_autocast", out=b))
    with gpv.GpvFile(b) as f:
        state = {r.path: r.autocast for r in f.manifest.modules}
    # the model's own call starts before its forward enters autocast; everything inside is bf16
    assert state.pop("(model)") is None and set(state.values()) == {"bfloat16"}
    report = diff_files(hf_gpv, b)
    assert any(w.startswith("autocast: A off, B bfloat16") for w in report.warnings)
