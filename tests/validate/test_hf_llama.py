"""`validate` on a real Hugging Face Llama (issue 29): with its default KV cache the attention
is replayed (the capture turns the cache off and says so), and the attention module and the op
inside it are named, also when the op's inputs agree and only its output is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.validate import gpv
from gpuport.validate.capture import CACHE_OFF, CaptureOptions, capture
from gpuport.validate.check import CheckOptions, check
from gpuport.validate.model import ParityReport, Row, Status, Verdict

# transformers comes with the dev extra (`make test`); the test does not skip without it

MODEL = Path(__file__).resolve().parent / "hf_llama.py"


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("hf-llama") / "a.gpv"
    summary = capture(CaptureOptions(model_ref=f"{MODEL}:build", out=out))
    assert CACHE_OFF in summary.left_out  # said, not silent
    return out


def _check(path: Path, name: str) -> ParityReport:
    return check(CheckOptions(path=path, model_ref=f"{MODEL}:{name}"))


def _row(report: ParityReport, path: str) -> Row:
    return next(r for r in report.rows if r.path == path and r.kind == "output" and not r.index)


def test_the_default_cache_is_turned_off_and_every_attention_call_is_recorded(
    captured: Path,
) -> None:
    with gpv.GpvFile(captured) as f:
        man = f.manifest
    attn = [r for r in man.modules if r.path == "model.layers.0.self_attn"]
    assert attn and attn[0].inputs is not None, "the attention call can be replayed"
    assert not any(r.replay_note for r in man.modules)
    assert CACHE_OFF in man.left_out
    assert _check(captured, "build").verdict is Verdict.SAME


def test_bf16_attention_names_the_attention_module_and_sdpa(captured: Path) -> None:
    report = _check(captured, "build_bf16_attention")
    assert report.first_divergence == "model.layers.0.self_attn"
    attn = _row(report, "model.layers.0.self_attn")
    assert attn.status in (Status.WRONG, Status.DIFFERENT)
    assert attn.first_op is not None and attn.first_op.op == "scaled_dot_product_attention"
    assert attn.first_op.dtypes[:3] == ["bfloat16"] * 3
    o_proj = _row(report, "model.layers.0.self_attn.o_proj")
    assert o_proj.status not in (Status.WRONG, Status.DIFFERENT)  # not blamed any more
    assert not any("untraced code" in r.reason for r in report.rows)


def test_a_wrong_op_is_named_although_its_inputs_agree(captured: Path) -> None:
    """The SDPA's fp32 output carries noise; its inputs are exactly right and in the
    module's own precision on the CPU (such ops were not recomputed before)."""
    report = _check(captured, "build_noisy_sdpa")
    assert report.verdict is Verdict.WRONG
    assert report.first_divergence == "model.layers.0.self_attn"
    op = _row(report, "model.layers.0.self_attn").first_op
    assert op is not None and op.op == "scaled_dot_product_attention"
    assert op.dtypes[:3] == ["float32"] * 3 and op.nominal_dtype == "float32"
    assert op.err_b > 10 * op.err_ref
