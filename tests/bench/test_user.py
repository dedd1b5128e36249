"""The user workload: resolving --step, the calling convention, items/s, and clear errors."""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuport.bench.registry import BenchContext
from gpuport.bench.run import to_result
from gpuport.bench.workloads import user
from gpuport.models import GpuportError

STEPS = """
calls = []
devices = []

def plain():
    calls.append("plain")

def with_device(device):
    devices.append(device)
    calls.append("with_device")

def kw_device(*, device):
    devices.append(device)

def factory(device):
    devices.append(device)
    calls.append("factory")
    def step():
        calls.append("step")
    return step

def failing():
    raise ValueError("the user's step broke")

class Trainer:
    @staticmethod
    def step():
        calls.append("Trainer.step")

NOT_CALLABLE = 42
"""


def _write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def steps_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"gp_steps_{abs(hash(tmp_path)) % 10**8}"
    _write(tmp_path, f"{name}.py", STEPS)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def _ctx(cpu_ctx: BenchContext, **options: object) -> BenchContext:
    return dataclasses.replace(cpu_ctx, options=dict(options))


def test_no_step_means_no_cases(cpu_ctx: BenchContext) -> None:
    assert user.WORKLOAD.cases(cpu_ctx) == []
    assert user.WORKLOAD.cases(_ctx(cpu_ctx, step="")) == []


def test_module_form_times_the_function_itself(cpu_ctx: BenchContext, steps_module: str) -> None:
    ctx = _ctx(cpu_ctx, step=f"{steps_module}:plain")
    (case,) = user.WORKLOAD.cases(ctx)
    assert case.name == f"{steps_module}:plain" and case.unit == "steps/s" and case.scale == 1
    m = case.run(ctx)
    mod = sys.modules[steps_module]
    # One untimed first call, then the policy's warm-up and samples.
    policy = ctx.model_policy
    assert len(mod.calls) >= 1 + policy.warmup_iters + m.stats.n
    assert set(mod.calls) == {"plain"}
    assert m.params["factory"] is False and m.work_per_iter == 1.0
    result = to_result(user.WORKLOAD, case, m, None)
    assert result.value == pytest.approx(1.0 / m.stats.median)
    assert m.metrics["step_ms"] == pytest.approx(m.stats.median * 1e3)


def test_device_parameter_is_passed(cpu_ctx: BenchContext, steps_module: str) -> None:
    for func in ("with_device", "kw_device"):
        ctx = _ctx(cpu_ctx, step=f"{steps_module}:{func}")
        user.WORKLOAD.cases(ctx)[0].run(ctx)
    devices = sys.modules[steps_module].devices
    assert devices and all(d == cpu_ctx.device for d in devices)


def test_positional_only_device() -> None:
    seen: list[object] = []

    def f(device: object, /) -> None:
        seen.append(device)

    user.bind_device(f, "cpu:7")()
    assert seen == ["cpu:7"]
    assert user.bind_device(len, "x") is len  # no signature / no device: unchanged


def test_factory_returning_a_callable_times_the_callable(
    cpu_ctx: BenchContext, steps_module: str
) -> None:
    ctx = _ctx(cpu_ctx, step=f"{steps_module}:factory")
    m = user.WORKLOAD.cases(ctx)[0].run(ctx)
    calls = sys.modules[steps_module].calls
    assert calls.count("factory") == 1, "the factory runs once, untimed"
    assert calls.count("step") >= m.stats.n
    assert m.params["factory"] is True


def test_dotted_function_name(cpu_ctx: BenchContext, steps_module: str) -> None:
    ctx = _ctx(cpu_ctx, step=f"{steps_module}:Trainer.step")
    user.WORKLOAD.cases(ctx)[0].run(ctx)
    assert "Trainer.step" in sys.modules[steps_module].calls


def test_file_form_with_items_per_step(cpu_ctx: BenchContext, tmp_path: Path) -> None:
    _write(tmp_path, "gp_helper_for_step.py", "SEEN = []\n")
    path = _write(
        tmp_path,
        "train.py",
        """
        import gp_helper_for_step  # a sibling module, imported as a script would

        def make(device):
            def step():
                gp_helper_for_step.SEEN.append(device)
            return step
        """,
    )
    spec = f"{path}:make"
    ctx = _ctx(cpu_ctx, step=spec, step_items=128)
    try:
        (case,) = user.WORKLOAD.cases(ctx)
        assert case.name == spec
        assert case.unit == "items/s" and case.params["step_items"] == 128
        m = case.run(ctx)
        assert len(sys.modules["gp_helper_for_step"].SEEN) >= m.stats.n
    finally:
        sys.modules.pop("gp_helper_for_step", None)
        if str(tmp_path) in sys.path:  # the file's folder stays importable, as for a script
            sys.path.remove(str(tmp_path))
    assert m.work_per_iter == 128
    result = to_result(user.WORKLOAD, case, m, None)
    assert result.value == pytest.approx(128 / m.stats.median)


def test_step_exceptions_propagate(cpu_ctx: BenchContext, steps_module: str) -> None:
    ctx = _ctx(cpu_ctx, step=f"{steps_module}:failing")
    (case,) = user.WORKLOAD.cases(ctx)
    with pytest.raises(ValueError, match="the user's step broke"):
        case.run(ctx)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("train_step", "must look like 'pkg.module:function'"),
        ("mod:", "must look like"),
        (":step", "must look like"),
        ("mod:1step", "must look like"),
        ("my-mod:step", "no module named 'my-mod'"),
        ("gp_no_such_module_xyz:step", "no module named 'gp_no_such_module_xyz'"),
        ("/nonexistent/dir/train.py:step", "no such file '/nonexistent/dir/train.py'"),
    ],
)
def test_bad_specs_are_one_line_usage_errors(
    cpu_ctx: BenchContext, spec: str, message: str
) -> None:
    with pytest.raises(GpuportError, match=message) as info:
        user.WORKLOAD.cases(_ctx(cpu_ctx, step=spec))
    assert "\n" not in str(info.value)
    assert info.value.exit_code == 2


def test_missing_and_non_callable_attributes(cpu_ctx: BenchContext, steps_module: str) -> None:
    with pytest.raises(GpuportError, match="has no attribute 'nope'"):
        user.WORKLOAD.cases(_ctx(cpu_ctx, step=f"{steps_module}:nope"))
    with pytest.raises(GpuportError, match="NOT_CALLABLE is a int, not callable"):
        user.WORKLOAD.cases(_ctx(cpu_ctx, step=f"{steps_module}:NOT_CALLABLE"))


def test_import_errors_inside_user_code(
    cpu_ctx: BenchContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, "gp_broken_dep.py", "import gp_dependency_that_is_missing\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(GpuportError, match="failed: ModuleNotFoundError: No module named"):
        user.WORKLOAD.cases(_ctx(cpu_ctx, step="gp_broken_dep:step"))
    bad = _write(tmp_path, "bad.py", "1 / 0\n")
    with pytest.raises(GpuportError, match="failed: ZeroDivisionError"):
        user.WORKLOAD.cases(_ctx(cpu_ctx, step=f"{bad}:step"))


@pytest.mark.parametrize("items", ["many", 0, -5, True, 2.5])
def test_bad_step_items(cpu_ctx: BenchContext, steps_module: str, items: object) -> None:
    with pytest.raises(GpuportError, match="positive integer"):
        user.WORKLOAD.cases(_ctx(cpu_ctx, step=f"{steps_module}:plain", step_items=items))


def test_module_form_finds_modules_in_the_cwd(
    cpu_ctx: BenchContext, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path, "gp_cwd_step.py", "def step():\n    pass\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    try:
        (case,) = user.WORKLOAD.cases(_ctx(cpu_ctx, step="gp_cwd_step:step"))
        assert case.name == "gp_cwd_step:step"  # found through the cwd, as `python -m` would
    finally:
        sys.modules.pop("gp_cwd_step", None)
