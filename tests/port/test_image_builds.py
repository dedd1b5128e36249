"""Compose services that run, by name, an image the project builds itself (a Makefile or a
script's ``docker build -f X -t NAME``): AMD devices only when that Dockerfile starts from a
ROCm image (J18, vs-playground, as development data)."""

from __future__ import annotations

from pathlib import Path

from gpuport.port.context import PortContext
from gpuport.port.image_builds import _parse, built_images, image_repository
from tests.port.helpers import created, fix_ids, project, run

RESERVED = """\
services:
  playground:
    image: lychee0/vs-playground:dev
    ports:
      - "8888:8888"
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              device_ids: ["0"]
              capabilities: [gpu]
"""

MAKEFILE = """\
.PHONY: pt
pt:
\tdocker buildx build -f vs-pytorch.dockerfile -t lychee0/vs-pytorch .

.PHONY: pg
pg:
\tdocker buildx build -f vs-playground.dockerfile \\
\t\t-t lychee0/vs-playground .
\tdocker tag lychee0/vs-playground lychee0/vs-playground:dev
"""

CUDA_BASE = """\
FROM continuumio/miniconda3:24.1.2-0
RUN pip install torch torchvision --index-url https://download.pytorch.org/whl/cu121
"""


def _ctx(root: Path) -> PortContext:
    from gpuport.knowledge import load_packages
    from gpuport.scan.engine import scan_path

    report = scan_path(root)
    return PortContext(
        root=root,
        report=report,
        packages=load_packages(None),
        target=report.target,
        findings=list(report.findings),
    )


def test_image_repository_drops_tag_and_digest() -> None:
    assert image_repository("lychee0/vs-playground:dev") == "lychee0/vs-playground"
    assert image_repository("ghcr.io/a/b:1.2@sha256:ab") == "ghcr.io/a/b"
    assert image_repository("localhost:5000/app") == "localhost:5000/app"


def test_build_commands_are_read_not_run() -> None:
    assert _parse(" -f a.dockerfile -t x/y:1 --platform linux/amd64 .") == (
        "a.dockerfile",
        ".",
        ["x/y:1"],
    )
    assert _parse(" --file=d/Dockerfile --tag=img ctx && docker push img") == (
        "d/Dockerfile",
        "ctx",
        ["img"],
    )


def test_the_makefile_names_the_dockerfile_of_each_image(tmp_path: Path) -> None:
    root = project(
        tmp_path,
        {
            "Makefile": MAKEFILE + "\tdocker build -t $(IMAGE) -f other.dockerfile .\n",
            "vs-pytorch.dockerfile": CUDA_BASE,
            "vs-playground.dockerfile": "FROM lychee0/vs-pytorch:dev\nRUN pip install jupyter\n",
            "other.dockerfile": "FROM python:3.11\n",
        },
    )
    assert built_images(_ctx(root)) == {
        "lychee0/vs-pytorch": "vs-pytorch.dockerfile",
        "lychee0/vs-playground": "vs-playground.dockerfile",
    }  # a tag held in a variable is not guessed


def test_a_service_running_the_projects_cuda_built_image_gets_no_amd_devices(
    tmp_path: Path,
) -> None:
    """The playground image is built FROM the project's CUDA torch image: AMD devices give it
    nothing. Before, it got them in the unsafe form (an image gpuport did not know)."""
    root = project(
        tmp_path,
        {
            "docker-compose-dev.yml": RESERVED,
            "Makefile": MAKEFILE,
            "vs-pytorch.dockerfile": CUDA_BASE,
            "vs-playground.dockerfile": "FROM lychee0/vs-pytorch:dev\nRUN pip install jupyter\n",
        },
    )
    report = run(root, unsafe_fixes=True)
    assert not any(f.path.startswith("docker-compose-dev.rocm") for f in report.files)
    assert "dockerfile-rocm:vs-pytorch.rocm.dockerfile" in fix_ids(report, applied=True)
    why = [u.reason for u in report.unfixed if u.finding.rule_id == "GP502"]
    assert why and "which the project builds from vs-playground.dockerfile" in why[0]


def test_a_service_running_the_image_of_a_ported_dockerfile_is_left_too(tmp_path: Path) -> None:
    """The service runs the CUDA torch image itself, whose Dockerfile gets a ROCm copy: the
    copy has no tag the service could run, and the image it names stays the CUDA one, so
    the devices are still declined (the copy is written, the compose file is not)."""
    root = project(
        tmp_path,
        {
            "docker-compose-dev.yml": RESERVED.replace("vs-playground:dev", "vs-pytorch:dev"),
            "Makefile": MAKEFILE,
            "vs-pytorch.dockerfile": CUDA_BASE,
        },
    )
    report = run(root, unsafe_fixes=True)
    assert [f.path for f in report.files] == ["vs-pytorch.rocm.dockerfile"]
    why = [u.reason for u in report.unfixed if u.finding.rule_id == "GP502"]
    assert why and "builds from vs-pytorch.dockerfile, not from a ROCm image" in why[0]


def test_an_image_the_project_does_not_build_keeps_the_unsafe_devices(tmp_path: Path) -> None:
    """No build command names the image: as before, the devices are an unsafe guess."""
    root = project(
        tmp_path,
        {
            "docker-compose-dev.yml": RESERVED,
            "Makefile": "pt:\n\tdocker build -f vs-pytorch.dockerfile -t someone/else .\n",
            "vs-pytorch.dockerfile": CUDA_BASE,
        },
    )
    assert "compose-rocm:docker-compose-dev.rocm.yml" not in fix_ids(run(root), applied=True)
    unsafe = run(root, unsafe_fixes=True)
    assert "compose-rocm:docker-compose-dev.rocm.yml+image-tag" in fix_ids(unsafe, applied=True)


_GPU_OVERLAY = (
    "services:\n  api:\n    deploy:\n      resources:\n        reservations:\n"
    "          devices:\n            - driver: nvidia\n              count: all\n"
    "              capabilities: [gpu]\n"
)
_MAIN = (
    "services:\n  api:\n    build:\n      context: ..\n      dockerfile: api/Dockerfile\n"
    "    image: kg-api:latest\n"
)


def test_an_overlay_on_top_of_the_main_compose_file_reads_its_services(tmp_path: Path) -> None:
    """J26 (eleventh pass): ``docker-compose.gpu-nvidia.yml``, loaded on top of
    ``docker-compose.yml``, reserves the GPU for a service the main file builds from a plain
    Python image that installs PyPI's (CUDA) torch. The base file was not found (only
    ``docker-compose.gpu.yml`` was looked for), so the AMD overlay was made, giving devices to
    an image with no ROCm torch. Now the main file is read and the overlay declined."""
    files = {
        "docker/docker-compose.yml": _MAIN,
        "docker/docker-compose.gpu-nvidia.yml": _GPU_OVERLAY,
        "api/Dockerfile": "FROM python:3.11-slim\nRUN pip install torch\n",
    }
    report = run(project(tmp_path / "a", files), unsafe_fixes=True)
    assert not any("gpu-amd" in f.path for f in report.files), [f.path for f in report.files]
    why = [u.reason for u in report.unfixed if u.finding.rule_id == "GP502"]
    assert why and "builds api/Dockerfile, which gets no ROCm copy" in why[0]
    # a CUDA PyTorch base gets a ROCm copy, and the overlay builds that copy
    cuda = "FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime\nRUN pip install fastapi\n"
    report = run(project(tmp_path / "b", {**files, "api/Dockerfile": cuda}), unsafe_fixes=True)
    paths = sorted(f.path for f in report.files)
    assert paths == ["api/Dockerfile.rocm", "docker/docker-compose.gpu-amd.yml"]
    assert "dockerfile: api/Dockerfile.rocm" in created(report, "docker/docker-compose.gpu-amd.yml")
