"""`--launch-syntax ggl`: <<<...>>> launches -> hipLaunchKernelGGL (issue 3, item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuport.hipify import translate
from gpuport.models import GpuportError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hipify"
LAUNCH = FIXTURES / "launch_templates.cu"


def _ggl(text: str) -> str:
    return translate(text, launch_syntax="ggl").text


def test_fixture_matches_expected() -> None:
    result = translate(LAUNCH.read_text(encoding="utf-8"), launch_syntax="ggl")
    expected = (FIXTURES / "launch_templates.ggl.hip").read_text(encoding="utf-8")
    assert result.text == expected
    assert result.unsupported == []
    assert "<<<" not in result.text


def test_default_keeps_launches() -> None:
    text = LAUNCH.read_text(encoding="utf-8")
    assert translate(text).text.count("<<<") == text.count("<<<")
    assert translate(text, launch_syntax="keep").text == translate(text).text


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "kernel<T, 4><<<grid, block, shmem, stream>>>(args);",
            "hipLaunchKernelGGL(HIP_KERNEL_NAME(kernel<T, 4>), grid, block, shmem, stream, args);",
        ),
        ("k<<<g, b>>>(x, y);", "hipLaunchKernelGGL(k, g, b, 0, 0, x, y);"),
        ("k<<<g, b, 16>>>();", "hipLaunchKernelGGL(k, g, b, 16, 0);"),
        ("k<<< g , b >>>(x);", "hipLaunchKernelGGL(k, g , b, 0, 0, x);"),
        (
            "k<A<B<int>>><<<1, 2>>>(x);",
            "hipLaunchKernelGGL(HIP_KERNEL_NAME(k<A<B<int>>>), 1, 2, 0, 0, x);",
        ),
        (
            "k<(N > 2), A<int>><<<dim3(1, 2), 3>>>(x);",
            "hipLaunchKernelGGL(HIP_KERNEL_NAME(k<(N > 2), A<int>>), dim3(1, 2), 3, 0, 0, x);",
        ),
        ("ns::k<<<1, 2>>>(x);", "hipLaunchKernelGGL(ns::k, 1, 2, 0, 0, x);"),
        (
            "k<<<1, 2, 0, s>>>(cudaMemcpyHostToDevice);",
            "hipLaunchKernelGGL(k, 1, 2, 0, s, hipMemcpyHostToDevice);",
        ),
    ],
)
def test_rewrites(source: str, expected: str) -> None:
    out = _ggl(source)
    assert out.endswith(expected)
    assert _ggl(out) == out  # idempotent


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("k<T<<<1, 1>>>(x);", "kernel name not found"),
        ("k>T><<<1, 1>>>(x);", "unbalanced template arguments"),
        ("k<<<1, 1>>>(x", "unbalanced argument list"),
        ("k<<<1, 1", "no closing >>>"),
        ("k<<<1>>>(x);", "expected 2 to 4 launch arguments, got 1"),
        ("k<<<1, 2, 3, 4, 5>>>(x);", "expected 2 to 4 launch arguments, got 5"),
        ("k<<<1, /* c */ 2>>>(x);", "comment or string inside the launch configuration"),
        ("k<<<1, 2>>> x;", "no argument list after >>>"),
        ("<<<", "kernel name not found"),
    ],
)
def test_unparseable_launches_are_kept_and_reported(source: str, why: str) -> None:
    result = translate(source, launch_syntax="ggl")
    assert source in result.text
    reasons = [u.reason for u in result.unsupported if u.name == "<<<"]
    assert reasons == [f"launch not rewritten: {why}"]
    assert translate(result.text, launch_syntax="ggl").text == result.text


def test_failure_position() -> None:
    result = translate("void f() {\n  k<<<1>>>(x);\n}\n", launch_syntax="ggl")
    (u,) = result.unsupported
    assert (u.line, u.col) == (2, 4)


def test_bad_launch_syntax() -> None:
    with pytest.raises(GpuportError):
        translate("", launch_syntax="xyz")  # type: ignore[arg-type]


def test_cli_launch_syntax(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("hipify", str(LAUNCH), "--hip-version", "6.4", "--launch-syntax", "ggl")
    assert res.code == 0
    expected = (FIXTURES / "launch_templates.ggl.hip").read_text(encoding="utf-8")
    assert res.out == expected
    bad = cli("hipify", str(LAUNCH), "--launch-syntax", "chevrons")
    assert bad.code == 2
    assert "--launch-syntax" in bad.err
