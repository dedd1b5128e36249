"""Issue 23, sixth review: the compile checks' time is bounded by what the project gives.

* a unit's time limit holds for the unit in all (its compile and the preprocessor passes
  after a fatal error, which had a fresh full limit each);
* a unit that takes ``SLOW_UNIT_S`` or more counts as one that ran into a limit, and after
  two such units the rest are not compiled (units that stayed just under the limits were all
  compiled: 4.5 KB of units took 6.5 min);
* the run's budget grows with the size of the files checked (at least 300 s, at most 1800 s);
* ``assess --hipify-check`` has the same rules (it had neither).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuport import sandbox
from gpuport.assess import sources_hipify
from gpuport.hipify import check as hipify_check
from gpuport.hipify import compiler
from gpuport.hipify.run import CompileResult


def test_the_budget_grows_with_the_files_checked() -> None:
    assert hipify_check.check_budget(0) == hipify_check.BUDGET_FLOOR_S
    assert hipify_check.check_budget(4_500) == hipify_check.BUDGET_FLOOR_S  # the review's 4.5 KB
    assert hipify_check.check_budget(30 * 1024) == 600
    assert hipify_check.check_budget(30 * 1024, compilers=2) == 1200
    assert hipify_check.check_budget(10 << 20) == compiler.CHECK_BUDGET_S


def test_a_slow_unit_counts_as_one_at_a_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]

    def slow(*_a: Any, deadline: float, **_k: Any) -> compiler.Compiled:
        assert deadline == 100.0 + compiler.COMPILE_TIMEOUT_S  # one limit for the whole unit
        clock[0] += compiler.SLOW_UNIT_S
        return compiler.Compiled(False, "inconclusive: needs x.h", [])

    monkeypatch.setattr(compiler.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(compiler, "_compile_unit", slow)
    chain = compiler.Toolchain("/x/hipcc", "/x/clang", (), ())
    done = compiler.compile_unit(chain, Path("/p/a.cu"), ["gfx90a"], [], roots=[Path("/p")])
    assert done.limited and done.error == "inconclusive: needs x.h"


def test_preprocessor_passes_share_the_units_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the unit's deadline no pass runs, and the lists it would have written are missing
    (read as "may have read outside": the same words whatever the unit holds)."""
    runs: list[float] = []
    monkeypatch.setattr(compiler, "confined_run", lambda *a, timeout_s, **k: runs.append(timeout_s))
    chain = compiler.Toolchain("/x/hipcc", "/x/clang", (), ())
    cage = sandbox.compile_confinement(read=[], run=[], work=tmp_path)
    at = compiler.time.monotonic()
    lists = compiler._preprocessor_list(
        chain, tmp_path / "a.cu", ["gfx90a"], [], tmp_path, {}, at - 1, cage
    )
    assert not runs and len(lists) == 2 and not any(p.exists() for p in lists)
    assert compiler.read_outside(lists[0], [tmp_path]) == "?"
    compiler._preprocessor_list(
        chain, tmp_path / "a.cu", ["gfx90a"], [], tmp_path, {}, at + 50, cage
    )
    assert len(runs) == 2 and all(t <= 50 for t in runs)


def test_assess_hipify_check_stops_after_two_units_at_a_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []

    def stalls(text: str, name: str, **_k: Any) -> CompileResult:
        calls.append(name)
        return CompileResult(ok=False, offload_archs=["gfx90a"], error="timed out", limited=True)

    monkeypatch.setattr("gpuport.hipify.run.compile_check", stalls)
    monkeypatch.setattr(sandbox, "abi", lambda: 7)
    files = [
        sources_hipify._Translated(f"u{i}.cu", "int x;\n", "int x;\n", {}, {}, (), ())
        for i in range(5)
    ]
    got = sources_hipify._compile_all(files, "/x/hipcc", "gfx90a", "5.2", "5.2")
    assert len(calls) == compiler.LIMITED_UNITS_MAX
    assert [o.status for o in got[2:]] == ["not compiled"] * 3
    assert all("limits" in (o.error or "") for o in got[2:])
