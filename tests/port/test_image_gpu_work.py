"""Session 15: a ROCm copy of an image only where the image's GPU work runs on ROCm.

A copy whose RUN configures or builds the project's own CUDA build (which finds no CUDA on
the ROCm image: J39's ``cmake -Bbuild -DCUDA_TARGET_ARCH=Pascal``) is refused with the
reason; CUDA-version variants of one image get one copy, not one each (J39's
``Dockerfile-cuda11.8`` and ``-cuda12.0``)."""

from __future__ import annotations

from pathlib import Path

from tests.port.helpers import created, fix_ids, project, run

CMAKE_CUDA = """\
cmake_minimum_required(VERSION 3.18)
project(solver CXX)
find_package(CUDA QUIET)
if(CUDA_FOUND)
    add_definitions(-DSOLVER_CUDA)
endif()
add_executable(solver main.cpp)
"""
CMAKE_CPU = "cmake_minimum_required(VERSION 3.18)\nproject(solver CXX)\nadd_executable(s m.cpp)\n"
HEAD = """\
FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
RUN apt-get update && apt-get install -y cmake git g++
COPY . /src
WORKDIR /src
"""


def _reasons(report: object) -> list[str]:
    return [u.reason for u in report.unfixed if u.finding.rule_id == "GP501"]  # type: ignore[attr-defined]


def test_an_image_building_the_projects_cuda_build_gets_no_rocm_copy(tmp_path: Path) -> None:
    """The image's GPU step configures the project's CMake build, whose CUDA lookup finds no
    CUDA on the ROCm image (the CPU build would be configured): no copy, in either mode, and
    the reason names the command and the lookup. The same through a project script the RUN
    runs, and ``make`` of a Makefile that compiles with nvcc."""
    cases = {
        "cmake": {
            "Dockerfile": HEAD + "RUN cmake -Bbuild -DCUDA_TARGET_ARCH=Pascal && make -C build\n",
            "CMakeLists.txt": CMAKE_CUDA,
        },
        "script": {
            "Dockerfile": HEAD + "RUN ./ci/build.sh Release\n",
            "ci/build.sh": "#!/bin/sh\nset -e\nmkdir -p build && cd build\ncmake .. && make\n",
            "CMakeLists.txt": CMAKE_CUDA.replace(
                "find_package(CUDA QUIET)", "check_language(CUDA)"
            ),
        },
        "make": {
            "Dockerfile": HEAD + "RUN make -j4 all\n",
            "Makefile": "NVCC ?= nvcc\nall: k.o\nk.o: k.cu\n\t$(NVCC) -c k.cu -o k.o\n",
        },
    }
    for name, files in cases.items():
        for unsafe in (False, True):
            report = run(project(tmp_path / name, files), unsafe_fixes=unsafe)
            assert not any(f.startswith("dockerfile-rocm:") for f in fix_ids(report)), name
            assert not any(f.path == "Dockerfile.rocm" for f in report.files), name
            reasons = _reasons(report)
            assert reasons and "builds the project's own CUDA code" in reasons[0], name
    cmake = _reasons(run(tmp_path / "cmake"))[0]
    assert "cmake -Bbuild -DCUDA_TARGET_ARCH=Pascal" in cmake
    assert "CMakeLists.txt looks up CUDA (find_package(CUDA" in cmake
    assert "ci/build.sh" in _reasons(run(tmp_path / "script"))[0]
    assert "compiles with nvcc" in _reasons(run(tmp_path / "make"))[0]


def test_images_whose_build_is_not_the_projects_cuda_build_keep_their_copy(
    tmp_path: Path,
) -> None:
    """Negative: a dependency the same RUN fetches and builds (J6's MicroTeX), a development
    image that builds nothing of the project (J6), a project whose CMake build has no CUDA
    lookup, cmake only installed by apt, a Makefile without nvcc: the copy is written."""
    fetched = (
        "RUN git clone --depth=1 https://github.com/x/dep.git /opt/dep"
        " && cmake -S /opt/dep -B /opt/dep/build && cmake --build /opt/dep/build\n"
    )
    cases = {
        "fetched": {"Dockerfile": HEAD + fetched, "CMakeLists.txt": CMAKE_CUDA},
        "devimage": {"Dockerfile": HEAD + 'CMD ["/bin/bash"]\n', "CMakeLists.txt": CMAKE_CUDA},
        "cpu-cmake": {"Dockerfile": HEAD + "RUN cmake -Bbuild\n", "CMakeLists.txt": CMAKE_CPU},
        "apt-only": {"Dockerfile": HEAD, "CMakeLists.txt": CMAKE_CUDA},
        "make-cpu": {"Dockerfile": HEAD + "RUN make\n", "Makefile": "all:\n\tg++ m.cpp\n"},
        "commented": {
            "Dockerfile": HEAD + "# RUN cmake -Bbuild && cmake --build build\n",
            "CMakeLists.txt": CMAKE_CUDA,
        },
    }
    for name, files in cases.items():
        text = created(run(project(tmp_path / name, files)), "Dockerfile.rocm")
        assert "FROM rocm/dev-ubuntu-22.04:6.4-complete" in text, name


VARIANT = """\
FROM nvidia/cuda:{tag}-devel-ubuntu22.04
RUN apt-get update && apt-get install -y git python3-pip
RUN pip3 install numpy{extra}
"""


def test_cuda_version_variants_of_one_image_get_one_copy(tmp_path: Path) -> None:
    """Two Dockerfiles that differ only in the CUDA tag become the same ROCm image: one copy
    (the newest CUDA version's, saying it stands for the other), the other's findings
    declined with the reason; written once in either mode."""
    files = {
        "docker/Dockerfile-cuda11.8": VARIANT.format(tag="11.8.0", extra=""),
        "docker/Dockerfile-cuda12.0": VARIANT.format(tag="12.0.0", extra=""),
    }
    root = project(tmp_path / "same", files)
    for unsafe in (False, True):
        report = run(root, unsafe_fixes=unsafe)
        copies = [f.path for f in report.files if f.path.endswith(".rocm")]
        assert copies == ["docker/Dockerfile-cuda12.0.rocm"], copies
    text = created(report, "docker/Dockerfile-cuda12.0.rocm")
    assert "also the ROCm variant of Dockerfile-cuda11.8" in text
    reasons = [
        u.reason
        for u in report.unfixed
        if u.finding.rule_id == "GP501" and u.finding.path == "docker/Dockerfile-cuda11.8"
    ]
    assert reasons and "byte for byte" in reasons[0]
    assert "docker/Dockerfile-cuda12.0.rocm" in reasons[0]
    # idempotent: with the copy written, a second run adds nothing
    (root / "docker/Dockerfile-cuda12.0.rocm").write_text(text, encoding="utf-8")
    assert not [f.path for f in run(root).files if f.path.endswith(".rocm")]


def test_variants_whose_copies_differ_each_get_one(tmp_path: Path) -> None:
    """Negative: variants whose ROCm copies differ (another package installed), or identical
    Dockerfiles in different folders (different build contexts), each keep their copy."""
    files = {
        "docker/Dockerfile-cuda11.8": VARIANT.format(tag="11.8.0", extra=" scipy"),
        "docker/Dockerfile-cuda12.0": VARIANT.format(tag="12.0.0", extra=""),
        "a/Dockerfile": VARIANT.format(tag="12.0.0", extra=""),
        "b/Dockerfile": VARIANT.format(tag="12.0.0", extra=""),
    }
    report = run(project(tmp_path, files))
    copies = sorted(f.path for f in report.files if f.path.endswith(".rocm"))
    assert copies == [
        "a/Dockerfile.rocm",
        "b/Dockerfile.rocm",
        "docker/Dockerfile-cuda11.8.rocm",
        "docker/Dockerfile-cuda12.0.rocm",
    ]
