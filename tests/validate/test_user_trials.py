"""Regressions from trying ``gpuport validate`` from the CLI on a user's own models (2026-11-25):
``tests/validate/user_models.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

USER = Path(__file__).resolve().parent / "user_models.py"


def uref(name: str) -> str:
    return f"{USER}:{name}"


@pytest.fixture(scope="module")
def gpt_gpv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gpuport.validate.capture import CaptureOptions, capture

    out = tmp_path_factory.mktemp("user") / "gpt.gpv"
    capture(CaptureOptions(model_ref=uref("gpt"), out=out))
    return out


def test_defect_active_only_inside_the_callers_forward_is_named_at_the_module(  # type: ignore[no-untyped-def]
    vcli, gpt_gpv: Path
) -> None:
    """SDPA in bf16 only while the model's forward runs: each layer's attention got A's exact
    inputs, so the divergence is that attention's, not "the model's own forward code between
    emb and layers.0.self_attn", and B's own output is arbitrated against float64."""
    r = vcli("check", str(gpt_gpv), "--model", uref("gpt_sdpa_bf16_in_forward"), "-f", "json")
    assert r.code == 1, r.err
    report = json.loads(r.out)
    assert report["verdict"] == "wrong"
    assert report["first_divergence"] == "layers.0.self_attn"
    rows = {x["path"]: x for x in report["rows"]}
    attn = rows["layers.0.self_attn"]
    assert attn["status"] == "wrong"
    assert "inputs in B's run were exactly A's" in attn["reason"]
    assert attn["arbitration"]["err_b"] > 100 * attn["arbitration"]["err_a"]
    assert rows["layers.0"]["status"] == "equivalent"  # contains the origin
    assert rows["(model)"]["status"] == "equivalent"
    assert "untraced" not in r.out and "own forward code" not in r.out


def test_same_model_stays_same(vcli, gpt_gpv: Path) -> None:  # type: ignore[no-untyped-def]
    r = vcli("check", str(gpt_gpv), "--model", uref("gpt"), "-f", "json")
    assert r.code == 0, r.err
    assert json.loads(r.out)["verdict"] == "same"


def test_code_that_casts_itself_is_not_arbitrated_by_a_bf16_reference(  # type: ignore[no-untyped-def]
    vcli, tmp_path: Path
) -> None:
    """A Conv whose code casts to bf16 whatever the dtype computes in bf16 in its float64 copy
    too: that "reference" agreed with B and made A "the outlier". Now fp64 says it cannot judge,
    the row stays different (not an A-platform error) and the op-level replay names conv2d."""
    out = tmp_path / "cnn.gpv"
    assert vcli("capture", "--model", uref("cnn"), "--out", str(out)).code == 0
    r = vcli("check", str(out), "--model", uref("cnn_conv_in_bf16"), "-f", "json")
    assert r.code == 0, r.err  # different, not wrong: A's code is unknown to B
    report = json.loads(r.out)
    assert report["first_divergence"] == "c2"
    row = next(x for x in report["rows"] if x["path"] == "c2")
    assert row["status"] == "different"
    assert row["arbitration"] is None
    assert "no float64 reference" in row["reason"] and "bfloat16" in row["reason"]
    assert "A's platform is wrong" not in row["reason"]
    assert row["first_op"]["op"] == "conv2d"
    r = vcli("check", str(out), "--model", uref("cnn_conv_in_bf16"), "--fail-on", "different")
    assert r.code == 1
