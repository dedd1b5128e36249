"""Issue 30, fourteenth held-out set (J46-J50): the precision class taken up in session 17."""

from __future__ import annotations

from pathlib import Path

from tests.port.helpers import fix_ids, project, run

_RUNNER = """\
cmake_minimum_required(VERSION 3.24)
project(runner LANGUAGES CXX)
find_package(CUDA)
find_package(Torch 2.4.0)
add_executable(aoti_run runner/run.cpp)
if(DEFINED TORCH_CUDA_LIBRARIES)
    target_compile_options(aoti_run PUBLIC -DUSE_CUDA)
endif()
target_link_libraries(aoti_run "${TORCH_LIBRARIES}")
"""
_RUN = "#include <torch/script.h>\nint main() { return 0; }\n"


def test_a_cuda_lookup_nothing_uses_gets_no_hip_branch(tmp_path: Path) -> None:
    """torchchat's runner (J50): find_package(CUDA) in a libtorch project that compiles no
    CUDA source and reads no result of the lookup; the HIP branch was judged unacceptable."""
    root = project(tmp_path / "a", {"CMakeLists.txt": _RUNNER, "runner/run.cpp": _RUN})
    report = run(root, unsafe_fixes=True)
    assert not [i for i in fix_ids(report) if i.startswith("cmake-hip")]
    reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP401"]
    assert reasons and "compiles no CUDA source" in reasons[0]


def test_a_lookup_whose_result_or_sources_the_project_uses_still_gets_one(tmp_path: Path) -> None:
    uses = {
        "libraries": _RUNNER + "target_link_libraries(aoti_run ${CUDA_LIBRARIES})\n",
        "found": _RUNNER + "if(CUDA_FOUND)\n  add_definitions(-DGPU)\nendif()\n",
        "toolkit target": _RUNNER.replace("find_package(CUDA)", "find_package(CUDAToolkit)")
        + "target_link_libraries(aoti_run CUDA::cudart)\n",
    }
    for name, cmake in uses.items():
        root = project(tmp_path / name.replace(" ", "_"), {"CMakeLists.txt": cmake,
                                                          "runner/run.cpp": _RUN})  # fmt: skip
        assert [i for i in fix_ids(run(root)) if i.startswith("cmake-hip")], name
    # a CUDA source under the folder, or a host file including a CUDA header
    host = "#include <cuda_runtime.h>\n" + _RUN
    for name, extra in (
        ("cu", {"runner/k.cu": "__global__ void k() {}\n"}),
        ("host", {"runner/run.cpp": host}),
    ):
        files = {"CMakeLists.txt": _RUNNER, "runner/run.cpp": _RUN, **extra}
        root = project(tmp_path / f"src_{name}", files)
        assert [i for i in fix_ids(run(root)) if i.startswith("cmake-hip")], name
