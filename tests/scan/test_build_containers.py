"""Unit tests of the build (GP4xx) and container (GP5xx) rules beyond the annotated fixtures."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuport.knowledge import load_packages, resolve_target
from gpuport.models import Severity
from gpuport.scan import scan_path
from gpuport.scan.engine import ScanOptions, check_text
from gpuport.scan.finding import Finding
from gpuport.scan.rules import RULES
from gpuport.scan.rules.base import Family, FileKind
from gpuport.scan.rules.build.checker import is_cuda_find_module


def _check(text: str, kind: FileKind, name: str = "f") -> tuple[list[Finding], str | None]:
    return check_text(name, text, kind, resolve_target("gfx942"), load_packages())


def _at(findings: list[Finding], rule: str) -> list[tuple[int | None, int | None]]:
    return [(f.location.line, f.location.column) for f in findings if f.rule_id == rule]


# --- safety --------------------------------------------------------------------------------


def test_setup_py_is_never_executed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    marker = project / "PWNED"
    (project / "setup.py").write_text(
        "import os\n"
        f"open({str(marker)!r}, 'w').write('x')\n"
        "open('PWNED', 'w').write('x')\n"
        "os.system('touch PWNED2')\n"
        "from torch.utils.cpp_extension import CUDAExtension\n"
        "ext = CUDAExtension('m', ['k.cu'], extra_compile_args={'nvcc': ['--use_fast_math']})\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    report = scan_path(project, ScanOptions(jobs=1))
    assert not marker.exists()
    assert not (project / "PWNED2").exists()
    assert not (tmp_path / "PWNED").exists()
    rules = {f.rule_id for f in report.findings}
    assert {"GP402", "GP404"} <= rules  # it was read, just not run


def test_setup_py_syntax_error_is_a_skip_not_a_crash() -> None:
    findings, reason = _check("def broken(:\n", FileKind.SETUP_PY, "setup.py")
    assert not [f for f in findings if f.rule_id.startswith("GP4")]
    assert reason is not None  # reported as skipped (by whichever reader parsed it first)


# --- compose -------------------------------------------------------------------------------


def test_compose_yaml_error_gives_skip_reason(tmp_path: Path) -> None:
    (tmp_path / "docker-compose.yml").write_text(
        "services:\n  app:\n    image: [unclosed\n", encoding="utf-8"
    )
    report = scan_path(tmp_path, ScanOptions(jobs=1))
    skipped = {s.path: s.reason for s in report.skipped}
    assert skipped["docker-compose.yml"].startswith("invalid YAML: ")
    assert report.findings == []


def test_compose_refuses_python_tags() -> None:
    text = "services:\n  app: !!python/object/apply:os.system ['touch PWNED']\n"
    findings, reason = _check(text, FileKind.COMPOSE, "compose.yml")
    assert findings == []
    assert reason is not None and reason.startswith("invalid YAML")


def test_compose_positions_follow_anchors() -> None:
    text = (
        "x-gpu: &gpu\n"
        "  runtime: nvidia\n"
        "services:\n"
        "  a:\n"
        "    <<: *gpu\n"
        "    image: nvcr.io/nvidia/tritonserver:24.05-py3\n"
        "  b:\n"
        "    <<: *gpu\n"
    )
    findings, _ = _check(text, FileKind.COMPOSE, "compose.yml")
    assert _at(findings, "GP502") == [(2, 12)]  # once, where the token is
    assert _at(findings, "GP501") == [(6, 12)]
    gp501 = next(f for f in findings if f.rule_id == "GP501")
    assert "rocm/vllm" in gp501.fix


def test_compose_group_add_missing_is_minor() -> None:
    text = "services:\n  app:\n    image: rocm/pytorch:latest\n    devices: [/dev/kfd, /dev/dri]\n"
    findings, _ = _check(text, FileKind.COMPOSE, "compose.yml")
    assert [(f.rule_id, f.severity) for f in findings] == [("GP505", Severity.MINOR)]


# --- Dockerfile ----------------------------------------------------------------------------


def test_dockerfile_continuation_lines_map_to_physical_lines() -> None:
    text = (
        "FROM rocm/dev-ubuntu-24.04\n"  # 1
        "RUN apt-get update \\\n"  # 2
        "    && apt-get install -y \\\n"  # 3
        "# a comment inside the continuation\n"  # 4
        "\n"  # 5
        "       git libcudnn8 \\\n"  # 6
        "       cuda-toolkit-12-4 && \\\n"  # 7
        "    pip install \\\n"  # 8
        "      'torch==2.3.1+cu121'\n"  # 9
        "ENV A=1 \\\n"  # 10
        "    CUDA_HOME=/usr/local/cuda\n"  # 11
    )
    findings, _ = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert _at(findings, "GP503") == [(6, 12), (7, 8)]
    assert _at(findings, "GP105") == [(9, 8)]
    assert _at(findings, "GP504") == [(11, 5)]


def test_dockerfile_escape_directive_and_heredoc() -> None:
    text = (
        "# escape=`\n"
        "FROM ubuntu:24.04\n"
        "RUN apt-get install -y `\n"
        "    libnccl2\n"
        "RUN <<EOF bash\n"
        "pip install \\\n"
        "   tensorrt\n"
        "EOF\n"
        "COPY <<EOF /etc/x.conf\n"
        "pip install tensorrt\n"
        "EOF\n"
        "RUN <<'UNTERMINATED'\n"
        "apt-get install -y cuda\n"
    )
    findings, _ = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert _at(findings, "GP503") == [(4, 5), (13, 20)]
    assert _at(findings, "GP101") == [(7, 4)]  # COPY heredoc bodies are files, not commands


def test_dockerfile_pip_options_and_urls() -> None:
    text = (
        "FROM python:3.11\n"
        "RUN pip install --index-url=https://download.pytorch.org/whl/cu118 -c c.txt "
        "--target /opt x==1 -r req.txt --no-deps tensorrt ./wheel.whl $PKG\n"
        "RUN uv pip install --index cuda=https://download.pytorch.org/whl/cu124 numpy\n"
    )
    findings, _ = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert _at(findings, "GP104") == [(2, 29), (3, 33)]  # the URL, after "name="
    assert _at(findings, "GP101") == [(2, 117)]
    assert not [f for f in findings if f.rule_id == "GP110"]


def test_dockerfile_from_arg_default_reported_on_arg_line() -> None:
    text = "ARG BASE=nvidia/cuda:12.4.1-devel-ubuntu22.04\nFROM $BASE\n"
    findings, _ = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert _at(findings, "GP501") == [(1, 10)]


def test_dockerfile_malformed_input_does_not_crash() -> None:
    text = 'RUN pip install "unterminated\nRUN ["pip", "install"\nFROM\nENV\nRUN \\\n'
    findings, reason = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert reason is None
    assert isinstance(findings, list)


def test_dockerfile_form_feed_and_line_separator_do_not_shift_lines() -> None:
    text = "FROM ubuntu\f\n# \u2028\nRUN pip install flash-attn\n"
    findings, _ = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert findings
    assert {f.location.line for f in findings} == {3}
    assert all(f.location.column == 17 for f in findings)
    assert all(f.location.snippet == "RUN pip install flash-attn" for f in findings)


def test_dockerfile_sh_c_script_is_checked() -> None:
    text = (
        "FROM ubuntu\n"  # 1
        'RUN sh -c "pip install tensorrt"\n'  # 2
        "RUN bash -c 'apt-get install -y libnccl2'\n"  # 3
        'RUN /bin/sh -lc "pip install --no-cache-dir \\"torch==2.3.1+cu121\\""\n'  # 4
        'RUN sudo /bin/bash -o pipefail -ec "true && \\\n'  # 5
        "    bash -c 'pip install tensorrt'\"\n"  # 6
        'RUN ["/bin/sh", "-c", "pip install tensorrt"]\n'  # 7
        "RUN bash install.sh tensorrt && sh -c 'echo pip install tensorrt'\n"  # 8
        "RUN sh -c\n"  # 9
    )
    findings, reason = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert reason is None
    lines = text.split("\n")

    def col(line: int, word: str) -> tuple[int, int]:
        return line, lines[line - 1].index(word) + 1

    assert _at(findings, "GP101") == [col(2, "tensorrt"), col(6, "tensorrt"), col(7, "tensorrt")]
    assert _at(findings, "GP503") == [col(3, "libnccl2")]
    assert _at(findings, "GP105") == [col(4, "torch")]


# --- CMake and Makefiles -------------------------------------------------------------------


def test_cmake_bracket_comment_and_strings() -> None:
    text = (
        "#[==[\n"
        "enable_language(CUDA)\n"
        "]==]\n"
        'set(X "# not a comment --use_fast_math")\n'
        'message(STATUS "--use_fast_math")\n'
    )
    findings, _ = _check(text, FileKind.CMAKE, "CMakeLists.txt")
    assert [(f.rule_id, f.location.line) for f in findings] == [("GP402", 4)]


def test_makefile_comment_continues_after_backslash() -> None:
    text = "# a comment \\\nNVCCFLAGS = --use_fast_math\nX = -lineinfo\n"
    findings, _ = _check(text, FileKind.MAKEFILE, "Makefile")
    assert [(f.rule_id, f.location.line) for f in findings] == [("GP402", 3)]


def test_arch_fix_names_the_selected_target() -> None:
    findings, _ = check_text(
        "CMakeLists.txt",
        "set(CMAKE_CUDA_ARCHITECTURES 80)\n",
        FileKind.CMAKE,
        resolve_target("gfx1100"),
        load_packages(),
    )
    (gp403,) = [f for f in findings if f.rule_id == "GP403"]
    assert "gfx1100" in gp403.fix


def _lines(findings: list[Finding], rule: str) -> list[tuple[int | None, bool]]:
    return [(f.location.line, f.guarded) for f in findings if f.rule_id == rule]


@pytest.mark.parametrize(
    ("kind", "name", "text"),
    [
        (
            FileKind.CMAKE,
            "CMakeLists.txt",
            "target_link_libraries(f PRIVATE CUDA::cublas CUDA::cublasLt)\n",
        ),
        (
            FileKind.CMAKE,
            "CMakeLists.txt",
            'set_property(TARGET f PROPERTY INTERFACE_LINK_LIBRARIES "cublas;-lcublasLt")\n',
        ),
        (FileKind.MAKEFILE, "Makefile", "LDLIBS := -lcublas -lcublasLt -lm\n"),
        (FileKind.SETUP_PY, "setup.py", 'LINK = ["-lcublas", "-lcublasLt"]\n'),
    ],
)
def test_one_library_finding_a_line(kind: FileKind, name: str, text: str) -> None:
    findings, _ = _check(text, kind, name)
    (gp407,) = [f for f in findings if f.rule_id == "GP407"]
    if kind is not FileKind.SETUP_PY:
        assert "cublasLt" in gp407.message
        assert "roc::hipblas " in gp407.fix and "roc::hipblaslt" in gp407.fix


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("share/cmake/Caffe2/FindCUDAToolkit.cmake", True),
        ("cmake/Modules/FindCUDNN.cmake", True),
        ("FindNCCL.cmake", True),
        ("cmake/FindCUB.cmake", True),
        ("cmake/Modules/FindNVTX.cmake", True),
        ("cmake/FindTorchCUDA.cmake", False),
        ("cmake/FindMyCUDAKernels.cmake", False),
        ("Caffe2/Modules_CUDA_fix/upstream/FindPackageMessage.cmake", True),
        ("Caffe2/Modules_CUDA_fix/upstream/FindCUDA/select_compute_arch.cmake", True),
        ("tools/FindCUDA/helpers.cmake", True),
        ("run_nvcc.cmake", True),
        ("cmake\\FindCUDA\\parse_cubin.cmake", True),
        ("CMakeLists.txt", False),
        ("cmake/public/cuda.cmake", False),
        ("cmake/FindBarracuda.cmake", False),
        ("cmake/FindCURL.cmake", False),
        ("cmake/FindCUDA_helpers/CMakeLists.txt", False),
    ],
)
def test_cuda_find_module_names(rel: str, expected: bool) -> None:
    assert is_cuda_find_module(rel) is expected


def test_cuda_find_module_findings_are_info() -> None:
    text = (
        "find_package(CUDA)\n"
        "list(APPEND CUDA_NVCC_FLAGS -gencode arch=compute_80,code=sm_80)\n"
        "target_link_libraries(${target} ${CUDA_LIBRARIES})\n"
        "find_program(CUDA_NVCC_EXECUTABLE nvcc)\n"
    )
    for rel in ("cmake/Modules_CUDA_fix/FindCUDA.cmake", "cmake/FindCUDA/run_nvcc.cmake"):
        findings, _ = _check(text, FileKind.CMAKE, rel)
        gp4 = [f for f in findings if f.rule_id.startswith("GP4")]
        assert {f.rule_id for f in gp4} == {"GP401", "GP402", "GP403", "GP407", "GP408"}
        assert all(f.guarded and f.severity is Severity.INFO for f in gp4)
        assert all("CUDA find-module" in f.message for f in gp4)
    findings, _ = _check(text, FileKind.CMAKE, "cmake/cuda.cmake")
    # outside a find-module only the flags guarded: CUDA_NVCC_FLAGS is read by nvcc alone
    assert {f.rule_id for f in findings if f.guarded} == {"GP402"}
    assert not any(f.guarded for f in findings if f.rule_id in ("GP401", "GP403", "GP407"))


@pytest.mark.parametrize(
    "hip",
    [
        "include(${CMAKE_CURRENT_LIST_DIR}/public/LoadHIP.cmake)",
        "include(cmake/hip.cmake)",
        "find_package(HIP)",
        "find_package(hip CONFIG)",
        "find_package(rocm_smi)",
        "enable_language(HIP)",
    ],
)
def test_hip_path_anywhere_guards_gp401(hip: str) -> None:
    text = f"if(WITH_AMD_GPU)\n  {hip}\nendif()\nenable_language(CUDA)\n"
    findings, _ = _check(text, FileKind.CMAKE, "CMakeLists.txt")
    assert _lines(findings, "GP401") == [(4, True)]


def test_hip_path_in_a_dead_block_does_not_count() -> None:
    text = "if(0)\n  enable_language(HIP)\nendif()\nenable_language(CUDA)\n"
    findings, _ = _check(text, FileKind.CMAKE, "CMakeLists.txt")
    assert _lines(findings, "GP401") == [(4, False)]


def test_cmake_dead_blocks() -> None:
    text = (
        "if(NO)\n"  # 1
        "  find_package(CUDA)\n"
        "elseif(1)\n"  # 3
        "  find_package(CUDA)\n"  # live: the first taken branch
        "elseif(USE_CUDA)\n"  # 5
        "  find_package(CUDA)\n"  # dead: a branch was taken
        "else()\n"
        "  find_package(CUDA)\n"  # dead
        "endif()\n"
        "if(USE_CUDA)\n"  # 10
        "  find_package(CUDA)\n"  # live
        "elseif(foo-NOTFOUND)\n"
        "  find_package(CUDA)\n"  # dead
        "else()\n"
        "  find_package(CUDA)\n"  # 15: live
        "endif()\n"
        "if(IGNORE)\n"  # an unclosed dead block runs to the end
        "  find_package(CUDA)\n"
    )
    findings, _ = _check(text, FileKind.CMAKE, "CMakeLists.txt")
    assert _lines(findings, "GP401") == [(4, False), (11, False), (15, False)]


def test_cmake_unclosed_generator_expressions_are_linear() -> None:
    text = "target_compile_options(f PRIVATE " + "$<" * 20000 + " --use_fast_math)\n"
    findings, _ = _check(text, FileKind.CMAKE, "CMakeLists.txt")
    assert _lines(findings, "GP402") == [(1, False)]


def test_cmake_arch_reported_once_at_the_first_token() -> None:
    text = "set(CMAKE_CUDA_ARCHITECTURES 80)  # sm_80\nset(FLAGS -arch=sm_80 -code=sm_80)\n"
    findings, _ = _check(text, FileKind.CMAKE, "CMakeLists.txt")
    assert _at(findings, "GP403") == [(1, 5), (2, 17)]


# --- registry ------------------------------------------------------------------------------


@pytest.mark.parametrize("family", [Family.BUILD, Family.CONTAINERS])
def test_rule_metadata_is_complete(family: Family) -> None:
    rules = [r for r in RULES.values() if r.family is family]
    assert len(rules) >= 5
    for rule in rules:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", rule.name), rule.id
        assert rule.title and rule.fix and rule.applies_note
        assert 2 <= rule.rationale.count(". ") + 1 <= 5, rule.id
        assert rule.references and all(u.startswith("https://") for u in rule.references)
        assert rule.effort_hours > 0


# --- hostile input stays cheap -------------------------------------------------------------


def test_compose_alias_bomb_is_walked_once() -> None:
    lines = ['a0: &a0 ["nvidia.com/gpu=all"]']
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    lines += ["services:", "  app:", "    image: python:3.11", "    x-all: *a9"]
    findings, reason = _check("\n".join(lines) + "\n", FileKind.COMPOSE, "compose.yml")
    assert reason is None
    assert _at(findings, "GP502") == [(1, 10)]


def test_setup_py_alias_chain_is_linear() -> None:
    lines = ['a0 = ["--use_fast_math"]']
    lines += [f"a{i} = [a{i - 1}, a{i - 1}, *a{i - 1}]" for i in range(1, 40)]
    lines += ["CUDAExtension('m', ['k.cu'], extra_compile_args={'nvcc': a39})"]
    findings, _ = _check("\n".join(lines) + "\n", FileKind.SETUP_PY, "setup.py")
    assert _at(findings, "GP402") == [(1, 8)]


def test_dockerfile_long_heredoc_is_linear() -> None:
    body = "\n".join(f"echo {i}" for i in range(50_000))
    text = f"FROM ubuntu\nRUN <<EOF\n{body}\napt-get install -y cuda-toolkit\nEOF\n"
    findings, _ = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert _at(findings, "GP503") == [(50_003, 20)]


def test_dockerfile_run_flags_are_not_the_command() -> None:
    text = (
        "FROM ubuntu\n"
        "RUN --mount=type=cache,target=/root/.cache --network=host pip install tensorrt\n"
    )
    findings, _ = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert _at(findings, "GP101") == [(2, 71)]


def test_dockerfile_quoted_arg_column_is_the_image() -> None:
    text = 'ARG BASE="nvcr.io/nvidia/pytorch:24.05-py3"\nFROM ${BASE:-python:3.11}\n'
    findings, _ = _check(text, FileKind.DOCKERFILE, "Dockerfile")
    assert _at(findings, "GP501") == [(1, 11)]
