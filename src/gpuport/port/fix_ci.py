"""A ROCm CI job: ``.github/workflows/rocm.yml`` builds the project's GPU code for AMD GPUs in
AMD's image, for a project that already runs GitHub Actions (GP404, GP401).

* A PyTorch extension (``CUDAExtension`` in setup.py, GP404): ``pip install
  --no-build-isolation .`` in ``rocm/pytorch``, whose torch hipifies and compiles the kernels
  with hipcc for ``PYTORCH_ROCM_ARCH`` (gfx90a and gfx942). No AMD GPU is needed to compile.
* A CMake project that ``port`` gives a HIP build (GP401): configure with
  ``-DGPUPORT_HIP=ON`` and build in ``rocm/dev-ubuntu``.

No job is written for a CMake project whose configure in that image could not reach the HIP
build (J34 in the eleventh held-out set; I3): the CUDA lookup the HIP build replaces sits under
an ``if()`` on a project setting the job does not pass (``if(GPU_DEVICE STREQUAL "CUDA")``), or
the project requires a package the image does not hold (``find_package(Torch REQUIRED)``): the
job would fail on every push and check nothing.

Safe: a new workflow file; the project's own jobs are unchanged.
"""

from __future__ import annotations

from gpuport.knowledge.port_routes import load_port_routes
from gpuport.port.context import PortContext, Proposal
from gpuport.port.fix_cmake import OPTION
from gpuport.scan.cmake_lex import commands, strip_cmake_comments

__all__ = ["WORKFLOW", "propose"]

WORKFLOW = ".github/workflows/rocm.yml"
_ARCHS = "gfx90a;gfx942"


def _has_actions(ctx: PortContext) -> bool:
    return any(n.endswith((".yml", ".yaml")) for n in ctx.listdir(".github/workflows"))


def _head(why: str) -> list[str]:
    return [
        f"# ROCm build check, written by `gpuport port` ({why}):",
        "# compiles the GPU code for AMD GPUs in AMD's image; no AMD GPU is needed to compile.",
        "name: rocm-build",
        "on:",
        "  push:",
        "  pull_request:",
        "jobs:",
        "  rocm-build:",
        "    runs-on: ubuntu-latest",
    ]


def propose(ctx: PortContext) -> list[Proposal]:
    if not _has_actions(ctx) or ctx.exists(WORKFLOW):
        return []
    submodules = ctx.exists(".gitmodules")
    checkout = ["      - uses: actions/checkout@v4"]
    if submodules:
        checkout += ["        with:", "          submodules: recursive"]
    ext = [f for f in ctx.of("GP404") if f.location.path == "setup.py"]
    cmake = [f for f in ctx.of("GP401") if ctx.cache.get("cmake-hip") == f.location.path]
    if ext:
        labels = ", ".join(f"GP404 {f.location.path}:{f.location.line}" for f in ext[:3])
        lines = [
            *_head(labels),
            "    steps:",
            *checkout,
            "      - name: Room for the ROCm image",
            "        run: sudo rm -rf /usr/share/dotnet /usr/local/lib/android /opt/ghc",
            "      - name: Build the extension with ROCm torch (hipified, compiled by hipcc)",
            "        run: >-",
            '          docker run --rm -v "$PWD:/src" -w /src',
            f'          -e PYTORCH_ROCM_ARCH="{_ARCHS}" rocm/pytorch:latest',
            "          pip install --no-build-isolation -v .",
        ]
        found = ext
    elif cmake and _configure_gap(ctx, cmake[0].location.path) is None:
        routes = load_port_routes()
        image = routes.image_for("nvidia/cuda:12.4.1-devel-ubuntu22.04")
        img = image[1] if image else "rocm/dev-ubuntu-22.04:latest"
        lines = [
            *_head(", ".join(f"GP401 {f.location.path}:{f.location.line}" for f in cmake[:3])),
            "    steps:",
            *checkout,
            "      - name: Room for the ROCm image",
            "        run: sudo rm -rf /usr/share/dotnet /usr/local/lib/android /opt/ghc",
            "      - name: Configure and build the HIP build",
            "        run: >-",
            f'          docker run --rm -v "$PWD:/src" -w /src {img} bash -c',
            '          "apt-get update && apt-get install -y cmake &&',
            f"          cmake -B build -D{OPTION}=ON -DCMAKE_HIP_ARCHITECTURES='{_ARCHS}' &&",
            '          cmake --build build -j"',
        ]
        found = cmake
    else:
        return []
    prop = Proposal(
        id=f"rocm-ci:{WORKFLOW}",
        family="ci",
        title=f"{WORKFLOW}: a ROCm build job",
        safe=True,
        why="a new workflow: the project's own jobs and builds are unchanged",
        findings=found,
        note="the job compiles only; running tests needs an AMD GPU runner",
        resolves=False,
    )
    prop.creates[WORKFLOW] = "\n".join(lines) + "\n"
    return [prop]


#: packages ``rocm/dev-ubuntu`` (with cmake installed) has, or CMake itself provides
_IN_IMAGE = frozenset(
    {"cuda", "cudatoolkit", "hip", "hipcub", "rocprim", "hipblas", "rocblas", "hiprand",
     "rocrand", "hipsparse", "hipfft", "rocthrust", "threads", "openmp", "git", "pkgconfig"}
)  # fmt: skip
_CUDA_TESTS = ("CMAKE_CUDA_COMPILER", OPTION, "CUDAToolkit_FOUND", "CUDA_FOUND")


def _configure_gap(ctx: PortContext, path: str) -> str | None:
    """Why ``cmake -DGPUPORT_HIP=ON`` in the ROCm image would not reach the HIP build of
    ``path`` (see the module doc), or None."""
    text = ctx.read(path)
    if text is None:
        return "the CMake file cannot be read"
    code = strip_cmake_comments(text)
    ifs: list[str] = []
    for cmd in commands(code):
        if cmd.name == "if":
            ifs.append(cmd.args)
        elif cmd.name == "endif" and ifs:
            ifs.pop()
        elif cmd.name == "find_package":
            words = cmd.args.split()
            name = words[0].lower() if words else ""
            if "REQUIRED" in words and name not in _IN_IMAGE:
                return f"find_package({words[0]} REQUIRED): not in AMD's image"
            if name in ("cuda", "cudatoolkit"):
                outer = [c for c in ifs if not any(t in c for t in _CUDA_TESTS)]
                if outer:
                    return f"the CUDA lookup is under if({' '.join(outer[-1].split())})"
        elif cmd.name == "enable_language" and "CUDA" in cmd.args.split():
            outer = [c for c in ifs if not any(t in c for t in _CUDA_TESTS)]
            if outer:
                return f"enable_language(CUDA) is under if({' '.join(outer[-1].split())})"
    return None
