"""A short fuzz of every untrusted-input parser, inside the normal test suite (issue 14).

hypothesis drives the targets of :mod:`tests.security.fuzz_targets` with random bytes and
with real seed inputs that have a pathological token spliced in, a few dozen inputs per
target (a few seconds in all, derandomized so CI is reproducible). ``make fuzz`` runs the
same targets for about a million inputs (``tools/fuzz.py``); see docs/PERFORMANCE.md.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.security.fuzz_targets import TARGETS, seeds

TOKENS = [
    b"<<<", b">>>", b"asm(", b"__shfl_sync(", b'R"x(', b"/*", b"#if 0\n", b"\\\n", b"'", b'"',
    b"-r ", b"\x00", b"\xff", b"import pynvml as p\n", b" \\\n", b"9" * 5000, b"NaN",
    b"[" * 3000, b'{"a":' * 300, b"__global__ ", b"-5", b"1e999",
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
        max_examples=25,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(inputs(name))
    def run(data: bytes) -> None:
        target(data)  # any exception is a crash: each target lets none through

    run()


def test_every_parser_has_a_target() -> None:
    assert set(TARGETS) >= {
        "requirements", "dockerfile", "cxx", "python", "bench-json", "validate-json",
        "toml-config", "gpv-header",
    }  # fmt: skip
