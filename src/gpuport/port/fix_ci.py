"""A ROCm CI job: ``.github/workflows/rocm.yml`` builds the project's GPU code for AMD GPUs in
AMD's image, for a project that already runs GitHub Actions (GP404, GP401).

* A PyTorch extension (``CUDAExtension`` in setup.py, GP404): ``pip install
  --no-build-isolation .`` in ``rocm/pytorch``, whose torch hipifies and compiles the kernels
  with hipcc for ``PYTORCH_ROCM_ARCH`` (gfx90a and gfx942). No AMD GPU is needed to compile.
* A CMake project that ``port`` gives a HIP build (GP401): configure with
  ``-DGPUPORT_HIP=ON`` and build in ``rocm/dev-ubuntu``.

Safe: a new workflow file; the project's own jobs are unchanged.
"""

from __future__ import annotations

from gpuport.knowledge.port_routes import load_port_routes
from gpuport.port.context import PortContext, Proposal
from gpuport.port.fix_cmake import OPTION

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
    elif cmake:
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
