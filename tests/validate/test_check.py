"""capture on "machine A", check on "machine B": the Done-when bullets of the issue, on CPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.models import EnvironmentProblem, GpuportError
from gpuport.validate import gpv
from gpuport.validate.capture import CaptureOptions, capture
from gpuport.validate.check import CheckOptions, check
from gpuport.validate.model import Status, Verdict

from .conftest import ref


def _check(path: Path, name: str, **kw: object):  # type: ignore[no-untyped-def]
    return check(CheckOptions(path=path, model_ref=ref(name), **kw))  # type: ignore[arg-type]


def _bad(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {r.path: r.status.value for r in report.rows if r.status.value != "same"}


def test_model_against_itself_is_same(a_gpv: Path) -> None:
    for grafted in (False, True):
        report = _check(a_gpv, "build", grafted=grafted)
        assert report.verdict is Verdict.SAME, report.verdict_reason
        assert report.first_divergence is None
        assert (
            report.counts[Status.SAME] == len(report.rows) == 30
        )  # 23 leaves, 6 computing containers, the model
        assert report.rows[-1].path == "(model)"
        assert all(r.metrics is not None and r.metrics.exact for r in report.rows)
        assert report.warnings == [] and report.settings_warnings == []
        assert report.kind == "gpuport.validate" and report.mode == "check"


def test_changed_norm_epsilon_is_named_first(a_gpv: Path) -> None:
    report = _check(a_gpv, "build_eps")
    assert report.first_divergence == "layers.1.ffn_norm"
    row = next(r for r in report.rows if r.path == "layers.1.ffn_norm")
    assert row.status is Status.DIFFERENT
    # fp64 of B's module agrees with B, so A is the outlier: "different", never "equivalent"
    assert row.arbitration is not None and row.arbitration.err_a > row.arbitration.err_b
    assert any("eps=1e-06" in w and "eps=0.1" in w for w in report.warnings)
    upstream = [r for r in report.rows if r.order < row.order]
    assert all(r.status is Status.SAME for r in upstream)


def test_matmul_in_lower_precision_is_wrong_and_named_first(a_gpv: Path) -> None:
    report = _check(a_gpv, "build_bf16")
    assert report.verdict is Verdict.WRONG
    assert report.first_divergence == "layers.1.mlp.down"
    assert _bad(report) == {
        "layers.1.mlp.down": "wrong",
        "layers.1.mlp": "equivalent",  # contains layers.1.mlp.down, the origin
        "layers.1": "equivalent",
        "norm": "equivalent",  # propagated only: fine on A's inputs
        "head": "equivalent",
        "(model)": "equivalent",  # the model's output: propagated from layers.1.mlp.down
    }
    down = next(r for r in report.rows if r.path == "layers.1.mlp.down")
    arb = down.arbitration
    assert arb is not None and arb.ratio is not None and arb.ratio > 100
    # op-level replay: the casts to bf16 are not blamed, the GEMM computed on them is
    assert down.first_op is not None and down.first_op.op == "linear"
    assert down.first_op.dtypes == ["bfloat16", "bfloat16"]
    assert "models.py" in down.first_op.call_site and "_bf16_linear" in down.first_op.call_site
    assert arb.multiplier == 2.0 and "Dynamo" in arb.provenance and arb.b_source == "local"


def test_reordered_fp32_sums_are_not_wrong(a_gpv: Path) -> None:
    report = _check(a_gpv, "build_reordered")
    assert report.verdict in (Verdict.SAME, Verdict.EQUIVALENT)
    assert report.counts[Status.WRONG] == report.counts[Status.DIFFERENT] == 0


def test_reordered_sum_beyond_tolerance_is_equivalent_by_fp64(tmp_path: Path) -> None:
    out = tmp_path / "mixer.gpv"
    capture(CaptureOptions(model_ref=ref("build_mixer"), out=out))
    report = _check(out, "build_mixer_reordered")
    mixer = report.rows[0]
    assert mixer.metrics is not None and not mixer.metrics.within  # elementwise tol fails...
    assert mixer.status is Status.EQUIVALENT  # ...but both are as close to fp64
    assert mixer.arbitration is not None and 0.5 < (mixer.arbitration.ratio or 0) < 2
    assert report.verdict is Verdict.EQUIVALENT and report.first_divergence is None
    plain = _check(out, "build_mixer_reordered", reference="none")
    assert plain.verdict is Verdict.DIFFERENT  # without a reference it cannot say more


def test_grafting_isolates_a_bug_downstream_of_a_noisy_layer(a_gpv: Path) -> None:
    propagated = _check(a_gpv, "build_noisy_then_bug", reference="none")
    order = {r.path: r.order for r in propagated.rows}
    assert propagated.first_divergence != "layers.1.mlp.down"
    assert order[propagated.first_divergence or ""] < order["layers.1.mlp.down"]
    grafted = _check(a_gpv, "build_noisy_then_bug", reference="none", grafted=True)
    assert grafted.first_divergence == "layers.1.mlp.down"
    noisy = next(r for r in grafted.rows if r.path == "layers.0.attn.o")
    assert noisy.status is Status.SAME and noisy.local is not None
    assert noisy.local.max_abs > 0  # it is noisy, within its own tolerance
    assert all(r.local is not None for r in grafted.rows)


def test_different_model_is_refused(a_gpv: Path) -> None:
    with pytest.raises(GpuportError, match=r"captured from a different model: \d+ module"):
        _check(a_gpv, "build_other")


def test_different_weights_warn(a_gpv: Path) -> None:
    report = _check(a_gpv, "build_reseeded", reference="none")
    assert any("weights differ" in w for w in report.warnings)
    assert report.first_divergence == "embed"


def test_backward_gradients(tmp_path: Path) -> None:
    out = tmp_path / "bw.gpv"
    capture(CaptureOptions(model_ref=ref(), out=out, backward=True))
    with gpv.GpvFile(out) as f:
        assert f.manifest.backward and f.manifest.loss_weights == ["loss/0"]
        assert sum(len(r.grads) for r in f.manifest.modules) == 30
    report = _check(out, "build")
    grads = [r for r in report.rows if r.kind == "grad"]
    assert len(grads) == 30 and all(r.status is Status.SAME for r in grads)


def test_module_filter(tmp_path: Path) -> None:
    out = tmp_path / "mlp.gpv"
    summary = capture(CaptureOptions(model_ref=ref(), out=out, modules=("layers.*.mlp",)))
    with gpv.GpvFile(out) as f:
        paths = [r.path for r in f.manifest.modules]
    assert paths == [
        "layers.0.mlp.gate",
        "layers.0.mlp.act",
        "layers.0.mlp.up",
        "layers.0.mlp.down",
        "layers.0.mlp",  # the matched container, after its children
        "layers.1.mlp.gate",
        "layers.1.mlp.act",
        "layers.1.mlp.up",
        "layers.1.mlp.down",
        "layers.1.mlp",
        "(model)",  # always traced: the model's output
    ]
    assert summary.calls == 11
    # what was not traced is said: the 20 modules outside the filter (of 31 with the root)
    assert summary.left_out == ["20 module(s) outside --modules layers.*.mlp: not traced"]
    report = _check(out, "build_bf16", grafted=True)
    assert any("outside --modules" in w for w in report.warnings)
    assert report.first_divergence == "layers.1.mlp.down"
    with pytest.raises(GpuportError, match="matched no module"):
        capture(CaptureOptions(model_ref=ref(), out=tmp_path / "x.gpv", modules=("nope.*",)))


def test_non_tensor_arguments_are_not_replayed_but_reported(tmp_path: Path) -> None:
    helper = tmp_path / "kw.py"
    helper.write_text(
        "import torch\n"
        "class Scale(torch.nn.Module):\n"
        "    def forward(self, x, cfg):\n"
        "        return x * cfg.factor\n"
        "class Cfg:\n"
        "    factor = 2.0\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.lin = torch.nn.Linear(4, 4)\n"
        "        self.scale = Scale()\n"
        "    def forward(self, x):\n"
        "        return self.scale(self.lin(x), cfg=Cfg())\n"
        "def build():\n"
        "    return M(), torch.ones(2, 4)\n"
    )
    out = tmp_path / "kw.gpv"
    capture(CaptureOptions(model_ref=f"{helper}:build", out=out))
    report = check(CheckOptions(path=out, model_ref=f"{helper}:build", grafted=True))
    scale = next(r for r in report.rows if r.path == "scale")
    assert scale.status is Status.SAME  # compared in B's own run
    assert scale.local is None and "not grafted: cannot replay" in scale.reason
    with gpv.GpvFile(out) as f:
        rec = next(r for r in f.manifest.modules if r.path == "scale")
        assert rec.inputs is None and rec.replay_note and "Cfg" in rec.replay_note


def test_cuda_device_without_gpu_is_an_environment_problem(a_gpv: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(EnvironmentProblem, match="no CUDA/ROCm GPU"):
        _check(a_gpv, "build", device="cuda")


def test_in_place_modules_record_their_inputs_before_they_run(tmp_path: Path) -> None:
    helper = tmp_path / "cnn.py"
    helper.write_text(
        "import torch\n"
        "from torch import nn\n"
        "def build():\n"
        "    model = nn.Sequential(\n"
        "        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),\n"
        "        nn.Conv2d(8, 4, 3), nn.ReLU(inplace=True), nn.Flatten(),\n"
        "        nn.Linear(4 * 6 * 6, 5),\n"
        "    )\n"
        "    return model, torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(0))\n"
    )
    out = tmp_path / "cnn.gpv"
    capture(CaptureOptions(model_ref=f"{helper}:build", out=out))
    with gpv.GpvFile(out) as f:
        relu = next(r for r in f.manifest.modules if r.path == "2")
        conv = next(r for r in f.manifest.modules if r.path == "0")
        assert conv.op_class == "conv" and conv.k == 3 * 3 * 3
        (name,) = gpv.tensor_names(relu.inputs)
        assert float(f.tensor(name).min()) < 0  # BatchNorm's output, before ReLU clipped it
        assert float(f.tensor(relu.outputs[0].stored).min()) == 0
    report = check(CheckOptions(path=out, model_ref=f"{helper}:build", grafted=True))
    assert report.verdict is Verdict.SAME, report.verdict_reason
    assert all(r.local is not None and r.local.exact for r in report.rows)


# --- regressions from the review -------------------------------------------------------------


def _capture(tmp_path: Path, name: str, **kw: object) -> Path:
    out = tmp_path / f"{name}.gpv"
    capture(CaptureOptions(model_ref=ref(name), out=out, **kw))  # type: ignore[arg-type]
    return out


def _row(report, path: str):  # type: ignore[no-untyped-def]
    return next(r for r in report.rows if r.path == path and r.kind == "output")


def test_in_place_ops_on_first_seen_tensors_do_not_corrupt_the_capture(tmp_path: Path) -> None:
    import torch

    out = _capture(tmp_path, "build_inplace")
    with gpv.GpvFile(out) as f:
        recs = {r.path: r for r in f.manifest.modules}
        (relu_in,) = gpv.tensor_names(recs["relu"].inputs)
        assert float(f.tensor(relu_in).min()) < 0  # recorded before ReLU clipped it
        assert recs["relu"].outputs[0].ref is None  # not the stale pre-ReLU copy
        assert float(f.tensor(recs["relu"].outputs[0].stored).min()) == 0
        (bump_in,) = gpv.tensor_names(recs["bump"].inputs)
        (after_in,) = gpv.tensor_names(recs["after"].inputs)
        assert after_in != bump_in  # Tanh got the doubled tensor, not Bump's copy of it
        assert torch.equal(f.tensor(after_in), 2 * f.tensor(bump_in))
    for grafted in (False, True):
        report = _check(out, "build_inplace", grafted=grafted)
        assert report.verdict is Verdict.SAME, report.verdict_reason
        assert all(r.metrics is not None and r.metrics.exact for r in report.rows)


@pytest.fixture(scope="module")
def func_gpv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("func") / "func.gpv"
    capture(CaptureOptions(model_ref=ref("build_func"), out=out))
    return out


def test_divergence_in_functional_code_between_modules_is_the_parents(func_gpv: Path) -> None:
    for grafted in (False, True):
        report = _check(func_gpv, "build_func_shift", grafted=grafted)
        b = _row(report, "b")
        assert b.local is not None and b.local.within  # b itself is fine on A's inputs...
        assert b.status is Status.EQUIVALENT  # ...its inputs came from its parent's own code
        assert "own forward code of (model) (between a and b)" in b.reason
        model = _row(report, "(model)")
        assert model.status is Status.DIFFERENT and "between a and b" in model.reason
        assert report.first_divergence == "(model)" and report.verdict is Verdict.DIFFERENT


def test_nan_made_in_functional_code_is_wrong(func_gpv: Path) -> None:
    report = _check(func_gpv, "build_func_nan")
    b = _row(report, "b")
    assert b.status is Status.WRONG and "untraced code between a and b" in b.reason
    assert report.verdict is Verdict.WRONG and report.first_divergence == "b"
    model = _row(report, "(model)")
    assert model.status is Status.EQUIVALENT and "after b" in model.reason  # b had NaN first


def test_divergence_after_the_last_module_shows_at_the_model_output(func_gpv: Path) -> None:
    report = _check(func_gpv, "build_func_tail")
    assert _bad(report) == {"(model)": "different"}
    assert report.first_divergence == "(model)"
    assert "untraced code between b and (model)" in _row(report, "(model)").reason


def test_bf16_reduction_returning_zeros_is_not_same(tmp_path: Path) -> None:
    out = _capture(tmp_path, "build_bf16_proj")
    report = _check(out, "build_bf16_proj_zeros")
    proj = _row(report, "0")
    assert proj.metrics is not None and proj.metrics.mismatched and proj.metrics.cosine_failed
    assert proj.tolerance is not None and proj.tolerance.rtol == 1.6e-2  # not × sqrt(4096)
    assert proj.status is Status.WRONG and report.verdict is Verdict.WRONG
    plain = _check(out, "build_bf16_proj_zeros", reference="none")
    assert plain.verdict is Verdict.DIFFERENT
    assert _check(out, "build_bf16_proj").verdict is Verdict.SAME


def test_float_output_that_became_integer_is_wrong(tmp_path: Path) -> None:
    out = _capture(tmp_path, "build_quant")
    report = _check(out, "build_quant_int")
    quant = _row(report, "1")
    assert quant.status is Status.WRONG and "dtype differs in kind" in quant.reason
    assert report.verdict is Verdict.WRONG


def test_fp64_recomputation_runs_on_copies_of_the_capture(tmp_path: Path) -> None:
    import torch

    from gpuport.validate.fp64ref import fp64_outputs

    from .models import build_f64_inplace

    out = _capture(tmp_path, "build_f64_inplace")
    with gpv.GpvFile(out) as cap:
        rec = next(r for r in cap.manifest.modules if r.path == "1")
        (name,) = gpv.tensor_names(rec.inputs)
        before = cap.tensor(name).clone()
        model, _ = build_f64_inplace()
        fp64_outputs(torch, model[1], rec, cap)  # works in place on a float64 input
        assert torch.equal(cap.tensor(name), before)  # the file's tensor is untouched
    assert _check(out, "build_f64_inplace", grafted=True).verdict is Verdict.SAME


def test_max_bytes_counts_the_model_inputs(tmp_path: Path) -> None:
    with pytest.raises(GpuportError, match="smaller than the model's inputs alone"):
        _capture(tmp_path, "build_skip", max_bytes=1)
    with pytest.raises(GpuportError, match=r"the first module call \(a\) already needs more"):
        _capture(tmp_path, "build_skip", max_bytes=40)
