"""Findings scan lowered to info only because the project documents a ROCm route in prose
(``gpuport.port.routes``): safe fixes again, each saying why; never unsafe ones; and nothing
where the route is a file the project already wrote."""

from __future__ import annotations

from pathlib import Path

from gpuport.port.routes import route_lowered
from gpuport.scan.engine import ScanOptions, scan_path

from .helpers import created, project, run

DOCKERFILE = """\
FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
ENV NVIDIA_VISIBLE_DEVICES=all
RUN apt-get update && apt-get install -y python3-pip
RUN pip install torch==2.2.1+cu121 --extra-index-url https://download.pytorch.org/whl/cu121
COPY . /app
"""
README = """\
# app

## Running on AMD GPUs (ROCm)

Build the image with ROCm torch and run it with the AMD devices:

    docker run --device=/dev/kfd --device=/dev/dri -p 8000:8000 app
"""
FILES = {
    "Dockerfile": DOCKERFILE,
    "app.py": "import torch\nx = torch.zeros(1).cuda()\n",
    "README.md": README,
}


def test_a_route_documented_in_prose_still_gets_its_safe_files(tmp_path: Path) -> None:
    root = project(tmp_path, FILES)
    scan = scan_path(root, ScanOptions(jobs=1))
    assert all(f.severity.value == "info" for f in scan.findings if f.rule_id == "GP501")
    assert {f.rule_id for f in route_lowered(scan)} >= {"GP501", "GP104"}
    report = run(root)
    text = created(report, "Dockerfile.rocm")
    assert text.startswith("# gpuport: ROCm variant") and "rocm/dev-ubuntu-22.04" in text
    fix = next(f for f in report.fixes if f.id == "dockerfile-rocm:Dockerfile.rocm")
    assert fix.safe and fix.applied
    assert "README.md documents a ROCm route" in fix.note
    assert not report.unfixed  # scan reported nothing above info: nothing listed as left


def test_a_route_that_is_a_file_keeps_its_findings_lowered(tmp_path: Path) -> None:
    """A ROCm requirements file is the route written down: the CUDA Dockerfile beside it is
    a variant scan lowered on purpose, and port adds nothing."""
    files = dict(FILES)
    files["requirements-rocm.txt"] = (
        "--extra-index-url https://download.pytorch.org/whl/rocm6.2\ntorch==2.5.1+rocm6.2\n"
    )
    root = project(tmp_path, files)
    assert route_lowered(scan_path(root, ScanOptions(jobs=1))) == []
    assert run(root).files == []


def test_no_route_lowered_finding_gets_an_unsafe_fix(tmp_path: Path) -> None:
    """A third-party image's AMD devices are an unsafe guess; under a documented route scan
    asked for nothing there, so not even --unsafe-fixes makes it."""
    compose = (
        "services:\n  forge:\n    image: ghcr.io/example/forge:1.0\n    deploy:\n"
        "      resources:\n        reservations:\n          devices:\n"
        "            - driver: nvidia\n              count: all\n"
        "              capabilities: [gpu]\n"
    )
    root = project(tmp_path, {**FILES, "docker-compose.yml": compose})
    report = run(root, unsafe_fixes=True)
    assert "docker-compose.rocm.yml" not in [f.path for f in report.files]
    assert not any(f.id.startswith("compose-rocm") for f in report.fixes)
    assert "Dockerfile.rocm" in [f.path for f in report.files]  # the safe fix still made


def test_an_extension_a_fix_makes_build_on_rocm_gets_its_kernel_findings_back() -> None:
    """pytorch/ao: scan lowers the fp6_llm kernels' findings as not built by the project's
    ROCm route; the unsafe GP409 fix makes setup.py build them on ROCm torch, so a second
    run saw them and fixed them. ``built_by_fix`` gives them back for the first run: only
    under the setup.py's folder, only lowered for that reason, never a guarded one."""
    from types import SimpleNamespace

    from gpuport.models import Location, Severity
    from gpuport.port.routes import built_by_fix
    from gpuport.scan.finding import Finding
    from gpuport.scan.project.on_route import OFF_ROUTE

    def finding(path: str, message: str, guarded: bool = False) -> Finding:
        return Finding(
            rule_id="GP302",
            title="mask",
            severity=Severity.INFO,
            location=Location(path=path, line=3),
            message=message,
            fix="",
            guarded=guarded,
            default_severity=Severity.BLOCKER,
        )

    off = f"a 32-bit mask ({OFF_ROUTE} (route: .github/workflows/wheels.yml:31))"
    report = SimpleNamespace(
        findings=[
            finding("ext/csrc/k.cuh", off),
            finding("ext/csrc/g.cuh", off, guarded=True),
            finding("ext/csrc/r.cuh", "a 32-bit mask (beside the project's ROCm route)"),
            finding("other/k.cuh", off),
        ]
    )
    got = built_by_fix(report, ["ext/setup.py"])  # type: ignore[arg-type]
    assert [(f.location.path, f.severity) for f in got] == [("ext/csrc/k.cuh", Severity.BLOCKER)]
    assert got[0].not_built is None
    assert [f.location.path for f in built_by_fix(report, ["setup.py"])] == [  # type: ignore[arg-type]
        "ext/csrc/k.cuh",
        "other/k.cuh",
    ]
    assert built_by_fix(report, []) == []  # type: ignore[arg-type]
