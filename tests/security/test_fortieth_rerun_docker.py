"""The fortieth re-run (a red team on the thirty-ninth's Dockerfile reader), the Dockerfile
findings: heredoc openers BuildKit reads and the copy did not (``<<\\NAME``, ``<<1``,
``<<"9 x"``, ``ONBUILD RUN <<EOF``), a line ending in an escaped backslash (``\\\\``), which
BuildKit does not continue, an ``# escape=`` directive led by a Unicode blank, a quadratic
reading of a long continued ``apt-get install`` and (F19) a version of 5,000 digits, past
``int()``'s limit. The copy now reads as BuildKit does (``gpuport.port.docker_text``) and,
where Docker's builders differ or the text is not read with certainty, is not written, with
the reason. Each test fails on the code before."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuport.port import docker_text
from gpuport.port.model import PortReport
from tests.port.helpers import project, run

_TORCH_IMAGE = "FROM pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime\n"
_CUDA = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"
_TORCH = "RUN pip install torch --index-url https://download.pytorch.org/whl/cu121\n"


def _copy(root: Path) -> str | None:
    rocm = root / "Dockerfile.rocm"
    return rocm.read_text(encoding="utf-8") if rocm.exists() else None


def _reasons(report: PortReport) -> str:
    return "\n".join(u.reason for u in report.unfixed)


# --- F1: heredoc openers BuildKit reads (`^(\d*)<<(-?)([^<]*)$`), ONBUILD's too ------------


@pytest.mark.parametrize(
    "opener",
    [
        "RUN cat <<\\ENV\\ X=1 >/tmp/notes.txt; pip install --no-cache-dir torch==2.1.0\n",
        "RUN cat <<1 >/tmp/notes.txt; pip install --no-cache-dir torch==2.1.0\n",
        'RUN cat <<"9 x" >/tmp/notes.txt; pip install --no-cache-dir torch==2.1.0\n',
        "RUN cat 0<<-$X >/tmp/notes.txt; pip install --no-cache-dir torch==2.1.0\n",
        # the opener written over a continuation: BuildKit joins `<` and `<EOF`
        "RUN pip install --no-cache-dir torch==2.1.0 && cat <\\\n<EOF >/tmp/notes.txt\n",
    ],
)
def test_f1_a_heredoc_opener_buildkit_reads_gets_no_copy(tmp_path: Path, opener: str) -> None:
    df = _TORCH_IMAGE + opener + "RUN touch /heredoc-data-now-live\nENV X=1\n1\n9 x\nEOF\n"
    report = run(project(tmp_path, {"Dockerfile": df}), apply=True)
    assert _copy(tmp_path) is None, _copy(tmp_path)
    assert "heredoc" in _reasons(report), _reasons(report)


def test_f1_an_onbuild_heredoc_gets_no_copy(tmp_path: Path) -> None:
    df = _TORCH_IMAGE + "ONBUILD RUN cat <<EOF\nRUN pip install torch==2.1.0\nEOF\n" + _TORCH
    report = run(project(tmp_path, {"Dockerfile": df}), apply=True)
    assert _copy(tmp_path) is None, _copy(tmp_path)
    assert "heredoc" in _reasons(report), _reasons(report)


# --- F2: `\\` at a line's end is an escaped backslash to BuildKit, a continuation to older
# builders ----------------------------------------------------------------------------------


def test_f2_buildkit_ends_an_instruction_at_an_escaped_backslash() -> None:
    lines = ["RUN echo \\\\\n", "RUN useradd -m app\n", "RUN a \\\n", "  b \\\n", "\\\n", "c\n"]
    assert docker_text.instructions(lines) == [(0, 0), (1, 1), (2, 5)]


def test_f2_a_line_ending_in_an_escaped_backslash_gets_no_copy(tmp_path: Path) -> None:
    df = (
        _TORCH_IMAGE + "RUN pip install --no-cache-dir torch==2.1.0 && echo \\\\\n"
        "RUN useradd -m app\nUSER app\n"
    )
    report = run(project(tmp_path, {"Dockerfile": df}), apply=True)
    text = _copy(tmp_path)
    assert text is None or "\nRUN useradd -m app\n" in text, text
    assert text is None and "escaped backslash" in _reasons(report), _reasons(report)


# --- F10: a long continued install is read in linear time --------------------------------


def test_f10_a_long_continued_install_is_read_in_linear_time() -> None:
    run_text = (
        "RUN apt-get update && apt-get install -y cuda-nvtx-12-1 \\\n"
        + " a \\\n cuda-libraries-12-1 \\\n" * 75_000
        + " b\n"
    )
    start = time.perf_counter()
    dropped = docker_text.drop_packages(run_text)
    lines = (_CUDA + run_text).splitlines(keepends=True)
    assert docker_text.unreadable("Dockerfile", _CUDA + run_text) is None
    assert docker_text.instructions(lines) == [(0, 0), (1, len(lines) - 1)]
    took = time.perf_counter() - start
    assert dropped is not None and "cuda" not in dropped
    assert dropped.count(" a \\\n") == 75_000 and dropped.endswith(" b\n")
    assert took < 8, f"{took:.1f} s for {len(run_text)} bytes"  # it took minutes


# --- F15: a directive led by a Unicode blank, and other text Docker reads otherwise ------


def test_f15_an_escape_directive_after_a_unicode_blank_gets_no_copy(tmp_path: Path) -> None:
    df = (
        "\u00a0# escape=`\n" + _TORCH_IMAGE + "RUN pip install --no-cache-dir torch==2.1.0 && "
        "echo `\nRUN touch /was-echo-data-now-live\nRUN echo done\n"
    )
    report = run(project(tmp_path, {"Dockerfile": df}), apply=True)
    text = _copy(tmp_path)
    assert text is None or "\nRUN touch /was-echo-data-now-live" not in text, text
    assert text is None and "escape" in _reasons(report), _reasons(report)


@pytest.mark.parametrize("blank", ["\u00a0", "\u3000", "\u2003", "\u1680"])
def test_f15_an_instruction_led_by_another_blank_gets_no_copy(tmp_path: Path, blank: str) -> None:
    """BuildKit trims Go's unicode.IsSpace before the keyword: `\u00a0RUN cat <<EOF` opens a
    heredoc whose body (a torch RUN here) the copy would have edited."""
    df = _TORCH_IMAGE + blank + "RUN cat <<EOF\nRUN pip install torch==2.1.0\nEOF\n" + _TORCH
    report = run(project(tmp_path, {"Dockerfile": df}), apply=True)
    assert _copy(tmp_path) is None, _copy(tmp_path)
    assert _reasons(report), report


def test_f15_the_header_goes_after_the_parser_directives() -> None:
    lines = ["# syntax=docker/dockerfile:1.4\n", "  #ESCAPE = \\\n", "# note\n", "# check=x\n"]
    assert docker_text.directive_lines(lines) == 2
    assert docker_text.directive_lines(["# unknown=1\n", "# syntax=x\n"]) == 0
    assert docker_text.directive_lines(["\u00a0# syntax=docker/dockerfile:1\n"]) == 1


@pytest.mark.parametrize("brk", ["\u2028", "\x0c", "\x85", "\r"])
def test_a_line_break_docker_does_not_see_gets_no_copy(tmp_path: Path, brk: str) -> None:
    """Not a finding of the report (found beside F15): Python's splitlines breaks lines at
    U+2028, a form feed, NEL or a lone carriage return, Docker only at a line feed; here the
    torch RUN the copy would comment out is echo's argument to Docker."""
    df = _TORCH_IMAGE + f"RUN echo hi {brk}RUN pip install torch==2.1.0\nRUN echo done\n"
    (tmp_path / "Dockerfile").write_bytes(df.encode("utf-8"))
    report = run(tmp_path, apply=True)
    assert _copy(tmp_path) is None, _copy(tmp_path)
    assert "line feeds only" in _reasons(report), _reasons(report)


# --- F19 (its Dockerfile part): a version of 5,000 digits is not read, not a crash -------


@pytest.mark.parametrize(
    "df",
    [
        _CUDA + "RUN pip install torchvision==0." + "1" * 5000 + " --index-url "
        "https://download.pytorch.org/whl/cu121\n",
        "FROM python:3." + "1" * 5000 + "-slim\nRUN pip install torch numpy\n",
    ],
)
def test_f19_a_version_past_the_digit_limit_is_not_read(tmp_path: Path, df: str) -> None:
    run(project(tmp_path, {"Dockerfile": df}), apply=True)  # ValueError before
    text = _copy(tmp_path)
    assert text is None or "1" * 5000 not in text.replace("0." + "1" * 5000, ""), text
