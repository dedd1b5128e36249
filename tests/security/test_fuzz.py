"""A short fuzz of every reader of project or result files, inside the test suite (issues 14
and 23).

hypothesis drives the targets of :mod:`tests.security.fuzz_targets` with random bytes and
with seed inputs that have a pathological token spliced in, a few dozen inputs per target
(seconds in all, derandomized so CI is reproducible); the result-file targets read the bytes
as mutation programs for valid documents (:mod:`tests.security.fuzz_structured`). ``make
fuzz`` runs the same targets coverage-guided for over a million inputs (``tools/fuzz.py``);
see docs/security.md. Inputs that once crashed a reader are replayed from
``tests/security/crashes/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.security.fuzz_targets import TARGETS, seeds

TOKENS = [
    b"<<<", b">>>", b"asm(", b"__shfl_sync(", b'R"x(', b"/*", b"#if 0\n", b"\\\n", b"'", b'"',
    b"-r ", b"\x00", b"\xff", b"import pynvml as p\n", b" \\\n", b"9" * 5000, b"NaN",
    b"[" * 3000, b'{"a":' * 300, b"__global__ ", b"-5", b"1e999", b"*a", b"!", b"**/",
    b"$(", b"set(", b"\x00\x00", b"\x01", b"\x02\x03\x04",
]  # fmt: skip


@st.composite
def inputs(draw: st.DrawFn, name: str) -> bytes:
    if draw(st.booleans()):
        return draw(st.binary(max_size=600))
    corpus = seeds(name)
    data = bytearray(draw(st.sampled_from(corpus)))
    for _ in range(draw(st.integers(1, 4))):
        pos = draw(st.integers(0, len(data)))
        tok = draw(st.sampled_from(TOKENS)) * draw(st.integers(1, 40))
        if draw(st.booleans()):
            data[pos:pos] = tok
        else:
            del data[pos : pos + draw(st.integers(1, 200))]
    return bytes(data)


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_parser_survives_fuzzed_input(name: str) -> None:
    target = TARGETS[name]
    assert seeds(name), f"{name}: no seed inputs"

    @settings(
        max_examples=12 if name in SLOW else 25,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(inputs(name))
    def run(data: bytes) -> None:
        target(data)  # any exception is a crash: each target lets none through

    run()


SLOW = {"knowledge", "cxx", "python", "project", "port"}


def test_every_reader_has_a_target() -> None:
    """Every kind of file the scan reads, and every reader of the benchmark of linear time."""
    assert set(TARGETS) >= {
        "requirements", "pyproject", "setup-py", "setup-cfg", "conda", "dockerfile", "compose",
        "python", "cxx", "cmake", "makefile", "readme", "ci-workflow", "gitignore", "git-index",
        "gitmodules", "compile-db", "settings", "knowledge", "bench-json", "validate-json",
        "gpv-header", "doctor-snapshot", "model-config", "project", "port",
    }  # fmt: skip


def test_structured_inputs_reach_past_the_parser_and_the_digest() -> None:
    """Most mutation programs give a file the loader accepts or refuses for its content, not
    for its JSON or its digest: the checks behind them run."""
    import random

    from gpuport.models import GpuportError
    from tests.security import fuzz_targets as ft

    rng = random.Random(5)  # noqa: S311 - test inputs
    reasons: list[str] = []
    for _ in range(60):
        data = bytes([0]) + rng.randbytes(rng.randint(0, 40))  # even first byte: a program
        path = ft._scratch() / "r.json"
        path.write_bytes(ft._file(data, ft._bench_seed, ft.with_digest))
        try:
            from gpuport.bench.model import BenchRun
            from gpuport.models import load_result

            load_result(path, BenchRun)
            reasons.append("loaded")
        except GpuportError as exc:
            reasons.append(
                "digest" if "edited" in str(exc) else "json" if "JSON" in str(exc) else "content"
            )
    assert reasons.count("digest") + reasons.count("json") < len(reasons) // 3, reasons


CRASHES = sorted((Path(__file__).parent / "crashes").glob("*--*.bin"))


def test_inputs_that_once_crashed_a_reader() -> None:
    """``crashes/WHAT--TARGET.bin``: an input that crashed TARGET in ``make fuzz``, replayed
    (one test, not one per file: with no such file a parametrized test would skip itself)."""
    for path in CRASHES:
        target = path.name.split("--", 1)[1].removesuffix(".bin")
        assert target in TARGETS, path.name
        TARGETS[target](path.read_bytes())


def test_the_targets_debug_only_while_they_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing the targets once set ``GPUPORT_DEBUG`` for the whole test session, so a later
    test of the scan's "internal error" listing saw a raise instead."""
    monkeypatch.delenv("GPUPORT_DEBUG", raising=False)
    seen: list[str | None] = []
    from tests.security import fuzz_targets as ft

    wrapped = ft._debugging(lambda data: seen.append(os.environ.get("GPUPORT_DEBUG")))
    wrapped(b"x")
    assert seen == ["1"] and "GPUPORT_DEBUG" not in os.environ
