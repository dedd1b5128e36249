"""Issue 23: the thirty-ninth re-run (a red team on e3b526f), the Dockerfile findings: the
ROCm copy read a Dockerfile with a plainer grammar than Docker's (an ``# escape=`` directive,
comment or empty lines inside a continuation, ``\\`` and blanks, quotes inside an ENV word),
quoted RUN text over several lines into a one-line note, wrote quoted torch words back
unquoted and took package names out of a whole RUN; each turned data (or a never-taken
branch) of the CUDA Dockerfile into live instructions of ``Dockerfile.rocm``. The copy now
edits only what fits the plain grammar and otherwise is not written, with the reason
(``gpuport.port.docker_text``). Each test fails on the code before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuport.port.model import PortReport
from tests.port.helpers import project, run

_CUDA = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n"
_TORCH = "RUN pip install torch --index-url https://download.pytorch.org/whl/cu121\n"


def _docker(text: str) -> list[str]:
    """The instructions of a Dockerfile as buildkit reads them: the escape directive, comment
    and empty lines skipped inside a continuation, the escape character and blanks at a
    line's end continue it."""
    lines = text.splitlines()
    esc = "\\"
    for ln in lines:
        m = re.match(r"#\s*(\w+)\s*=\s*(\S+)\s*$", ln.strip())
        if m is None:
            break
        if m.group(1).lower() == "escape":
            esc = m.group(2)
    cont = re.compile(re.escape(esc) + r"[ \t]*$")
    out: list[str] = []
    cur: str | None = None
    for ln in lines:
        bare = ln.strip()
        if not bare or bare.startswith("#"):
            continue  # between instructions, and inside a continuation alike
        m = cont.search(ln)
        if m is not None:
            cur = (cur or "") + ln[: m.start()]
            continue
        out.append(((cur or "") + ln).strip())
        cur = None
    if cur is not None:
        out.append(cur.strip())
    return out


def _copy(root: Path) -> str | None:
    rocm = root / "Dockerfile.rocm"
    return rocm.read_text(encoding="utf-8") if rocm.exists() else None


def _reasons(report: PortReport) -> str:
    return "\n".join(u.reason for u in report.unfixed)


def _live_runs(text: str, needle: str) -> list[str]:
    return [i for i in _docker(text) if i.upper().startswith("RUN") and needle in i]


def test_docker_reader_of_these_tests() -> None:
    df = "ENV A=1 \\\n# c\n\nRUN x\nRUN y \\ \n  z\n"
    assert _docker(df) == ["ENV A=1 RUN x", "RUN y   z"]
    assert _docker("# escape=`\nENV A `\nRUN x\n") == ["ENV A RUN x"]


def test_f3_an_escape_directive_gets_no_copy(tmp_path: Path) -> None:
    df = "# escape=`\n" + _CUDA + "ENV NVIDIA_VISIBLE_DEVICES all `\nRUN touch /MARKER\n" + _TORCH
    assert _live_runs(df, "touch") == []  # data of the ENV in the CUDA file
    report = run(project(tmp_path, {"Dockerfile": df}), apply=True)
    text = _copy(tmp_path)
    assert text is None or _live_runs(text, "touch") == [], text
    assert text is None and "escape" in _reasons(report)


@pytest.mark.parametrize("middle", ["# note\n", "\n", None])
def test_f4_a_continuation_docker_reads_on_gets_no_copy(tmp_path: Path, middle: str | None) -> None:
    env = "ENV NVIDIA_VISIBLE_DEVICES all \\ \n" if middle is None else (
        "ENV NVIDIA_VISIBLE_DEVICES all \\\n" + middle
    )  # fmt: skip
    df = _CUDA + env + "RUN touch /MARKER\n" + _TORCH
    assert _live_runs(df, "touch") == []
    report = run(project(tmp_path, {"Dockerfile": df}), apply=True)
    text = _copy(tmp_path)
    assert text is None or _live_runs(text, "touch") == [], text
    why = _reasons(report)
    assert text is None and ("continuation" in why or "inside the instruction" in why), why


def test_f10_run_text_over_lines_is_not_put_in_a_note(tmp_path: Path) -> None:
    df = (
        _CUDA + "ARG GPU=cpu\n"
        'RUN if [ "$GPU" = "cuda" ]; then conda install -y "\\\n'
        "    RUN touch MARKER # \\\n"
        '    cudatoolkit"; fi\n' + _TORCH
    )
    assert not [i for i in _docker(df) if i.startswith("RUN touch")]
    run(project(tmp_path, {"Dockerfile": df}), apply=True)
    text = _copy(tmp_path)
    assert text is not None  # the CUDA build is in a branch a build never takes
    assert not [i for i in _docker(text) if i.startswith("RUN touch")], text
    notes = [ln for ln in text.splitlines() if ln.startswith("# gpuport:") and "branch" in ln]
    assert notes and all("touch" not in ln for ln in notes), notes


def test_f11_an_odd_torch_word_is_never_written_back(tmp_path: Path) -> None:
    df = _CUDA + "RUN pip install 'torch>=2.0$(touch${IFS}MARKER)' || true\n"
    report = run(project(tmp_path, {"Dockerfile": df}), apply=True)
    text = _copy(tmp_path)
    original = _docker(df)[1]
    assert text is None or _live_runs(text, "touch") == [original], text
    assert text is None and "not plain" in _reasons(report)


def test_f11_a_quoted_torch_requirement_stays_quoted(tmp_path: Path) -> None:
    df = _CUDA + 'RUN pip install "torch>=2.0" numpy\n'
    run(project(tmp_path, {"Dockerfile": df}), apply=True)
    text = _copy(tmp_path)
    assert text is not None
    first = [ln for ln in text.splitlines() if "ROCm builds of torch first" in ln]
    assert first and "'torch>=2.0'" in first[0] and " torch>=" not in first[0], first


def test_f15_a_quote_inside_an_env_word_gets_no_copy(tmp_path: Path) -> None:
    env = 'ENV NVIDIA_VISIBLE_DEVICES=c" LD_PRELOAD=/app/hook.so NVIDIA_VISIBLE_DEVICES=c"\n'
    report = run(project(tmp_path, {"Dockerfile": _CUDA + env + _TORCH}), apply=True)
    text = _copy(tmp_path)
    envs = [i for i in _docker(text or "") if i.startswith("ENV")]
    assert all(i == env.strip() for i in envs if "LD_PRELOAD" in i), envs
    assert text is None and "ENV" in _reasons(report)


def test_f15_plain_env_words_are_still_edited(tmp_path: Path) -> None:
    env = 'ENV NVIDIA_VISIBLE_DEVICES=all \\\n    A="x  y" \\\n    CUDA_HOME=/usr/local/cuda\n'
    run(project(tmp_path, {"Dockerfile": _CUDA + env + _TORCH}), apply=True)
    text = _copy(tmp_path)
    assert text is not None
    assert [i for i in _docker(text) if i.startswith("ENV")] == ['ENV A="x  y"'], text


def test_f16_only_the_install_words_lose_cuda_packages(tmp_path: Path) -> None:
    df = (
        _CUDA + "RUN apt-get update && apt-get install -y --no-install-recommends git "
        "cuda-nsight-systems-12-1 && \\\n"
        "    if command -v nvidia-smi >/dev/null; then touch MARKER; fi\n"
        "RUN apt-get install -y cuda-nsight-systems-12-1 && rm -rf /usr/local/cuda/samples\n"
        "RUN apt-get install -y \\\n    git \\\n    cuda-nsight-systems-12-1\n"
        "RUN echo next\n" + _TORCH
    )
    run(project(tmp_path, {"Dockerfile": df}), apply=True)
    text = _copy(tmp_path)
    assert text is not None
    assert "cuda-nsight" not in text
    assert "command -v nvidia-smi >/dev/null" in text
    assert "rm -rf /usr/local/cuda/samples" in text
    assert "RUN echo next" in _docker(text), _docker(text)  # not run into the install


def test_f16_torch_words_leave_only_the_pip_install(tmp_path: Path) -> None:
    df = (
        "FROM pytorch/pytorch:2.2.1-cuda12.1-cudnn8-runtime\n"
        'RUN pip install torch numpy && if ! python -c "import torch"; then touch MARKER; fi\n'
    )
    run(project(tmp_path, {"Dockerfile": df}), apply=True)
    text = _copy(tmp_path)
    assert text is not None
    assert 'python -c "import torch"' in text, text
    assert "pip install numpy" in text, text


def test_a_heredoc_gets_no_copy(tmp_path: Path) -> None:
    """Not a finding: a heredoc's lines are data to Docker and instructions to the copy's
    reading, so a Dockerfile with one is not copied either."""
    df = _CUDA + "RUN <<EOF\nENV NVIDIA_VISIBLE_DEVICES=all\nEOF\n" + _TORCH
    report = run(project(tmp_path, {"Dockerfile": df}), apply=True)
    assert _copy(tmp_path) is None and "heredoc" in _reasons(report)
