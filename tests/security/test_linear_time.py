"""Issue 14 item 4: scanning and translating pathological files takes linear time.

The inputs are the generated forms of ``benchmarks/pathological_inputs.py`` (100 KB of
``<`` took 32 s before the fix). Each form is timed at n and 2n bytes, best of three: the
time may at most about double (a quadratic pass would quadruple it), and stay under the
issue's bound of 1 s per 100 KB, scaled by a calibration loop so a slow or loaded machine
does not fail the test while a quadratic pass still does.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
N = 30_000  # bytes; 2n is timed too


def _bench() -> ModuleType:
    path = REPO / "benchmarks" / "pathological_inputs.py"
    spec = importlib.util.spec_from_file_location("pathological_inputs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
#: The calibration loop takes about this long on the dev VM the 1 s / 100 KB bound is for.
REFERENCE_CALIBRATION_S = BENCH.REFERENCE_CALIBRATION_S
# The forms of the report, and one per other reader that had a quadratic pass.
FORMS = [
    "lt",
    "asm",
    "shfl",
    "launch",
    "launch_no_end",
    "raw_string",
    "dquote",
    "global_head",
    "py_import_alias",
    "py_import_use",
    "docker_cont",
    "conda",
    "pyproject",
    "poetry",
    "setup_py",
]


@pytest.mark.parametrize("name", FORMS)
def test_pathological_input_scales_linearly(name: str) -> None:
    form = next(f for f in BENCH.FORMS if f.name == name)
    run = BENCH.runner(form)
    run(1000)  # warm: knowledge, API map, compiled regexes
    # Up to three attempts, each best of three with n and 2n interleaved: another process
    # hogging the CPU for a moment fails one attempt, a quadratic pass fails them all.
    for _attempt in range(3):
        scale = max(1.0, min(BENCH.calibrate() for _ in range(3)) / REFERENCE_CALIBRATION_S)
        t1 = t2 = float("inf")
        for _ in range(3):
            t1 = min(t1, run(N))
            t2 = min(t2, run(2 * N))
        budget = 2 * N / 100_000 * scale  # 1 s per 100 KB on the reference machine
        # Doubling the input at most doubles the time: 3x allows for noise, a quadratic
        # pass gives 4x; the additive slack keeps millisecond timings from flaking.
        if t2 <= 3.0 * t1 + 0.03 * scale and t2 <= budget:
            break
    assert t2 <= 3.0 * t1 + 0.03 * scale, f"{name}: {t1:.3f} s at {N} B, {t2:.3f} s at {2 * N} B"
    assert t2 <= budget, f"{name}: {t2:.3f} s for {2 * N} B, over {budget:.2f} s"


def test_the_benchmark_covers_every_form_it_lists() -> None:
    names = [f.name for f in BENCH.FORMS]
    assert len(names) == len(set(names))
    assert set(FORMS) <= set(names)
    for form in BENCH.FORMS:  # every generated input has about the size asked for
        text = BENCH._text(form, 10_000)
        assert 9_000 <= len(text) <= 10_100, form.name


def test_no_line_number_is_counted_from_the_top_per_match() -> None:
    """`text.count("\\n", 0, m.start()) + 1` inside a loop over matches is quadratic in the
    matches: the eighth and eleventh re-runs found it three times (CMake `if()` lines, `-D`
    definitions: 800 KB, 28 s). Line numbers come from `textre.line_finder` (one index per
    text); the idiom is not written again anywhere in the package."""
    import re

    idiom = re.compile(r"\.count\(\s*(?:\"\\n\"|'\\n'|chr\(10\))\s*,\s*0\s*,")
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / "src" / "gpuport").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if idiom.search(line) and "line_finder" not in line and '"""' not in line
    ]
    assert found == [], f"count newlines from the top per match: {found}"
