"""``diff A.gpv B.gpv``: two captures, no model."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import GpuportError
from gpuport.validate.capture import CaptureOptions, capture
from gpuport.validate.diff import diff_files
from gpuport.validate.model import Status, Verdict

from .conftest import ref


@pytest.fixture(scope="module")
def b_bf16(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("b") / "b.gpv"
    capture(CaptureOptions(model_ref=ref("build_bf16"), out=out))
    return out


def test_capture_against_itself(a_gpv: Path) -> None:
    report = diff_files(a_gpv, a_gpv)
    assert report.verdict is Verdict.SAME and report.mode == "diff"
    assert report.bytes_compared > 0 and len(report.rows) == 30


def test_diff_names_the_first_divergence(a_gpv: Path, b_bf16: Path) -> None:
    report = diff_files(a_gpv, b_bf16)
    assert report.first_divergence == "layers.1.mlp.down"
    assert report.verdict is Verdict.DIFFERENT  # no model: no fp64, so never "wrong" by ratio
    assert report.reference == "none" and not report.grafted
    serial = diff_files(a_gpv, b_bf16, workers=1)
    for one, many in zip(serial.rows, report.rows, strict=True):
        assert one.metrics is not None and many.metrics is not None
        assert (one.metrics.max_abs, one.metrics.max_ulp, one.metrics.mismatched) == (
            many.metrics.max_abs,
            many.metrics.max_ulp,
            many.metrics.mismatched,
        )
        assert one.metrics.cosine == pytest.approx(many.metrics.cosine, abs=1e-9)


def test_diff_of_different_models_is_refused(a_gpv: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.gpv"
    capture(CaptureOptions(model_ref=ref("build_other"), out=other))
    with pytest.raises(GpuportError, match="different model"):
        diff_files(a_gpv, other)


def test_diff_with_fewer_modules_in_b(a_gpv: Path, tmp_path: Path) -> None:
    part = tmp_path / "part.gpv"
    capture(CaptureOptions(model_ref=ref(), out=part, modules=("layers.0.*",)))
    report = diff_files(a_gpv, part)
    missing = [r for r in report.rows if r.status is Status.NOT_CHECKED]
    assert missing and all("no such tensor" in r.reason for r in missing)
    assert report.verdict is Verdict.SAME
