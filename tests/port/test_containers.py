"""Containers: Dockerfile.rocm and the compose override."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuport.port.fix_containers import compose_name, dockerfile_name
from tests.port.helpers import created, project, run

CUDA_DOCKERFILE = """\
# syntax=docker/dockerfile:1
FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
ENV NVIDIA_VISIBLE_DEVICES=all CUDA_HOME=/usr/local/cuda LANG=C.UTF-8
ENV TORCH_CUDA_ARCH_LIST="8.0 9.0"
RUN apt-get update && apt-get install -y python3-pip cuda-toolkit-12-1 git
RUN pip install torch==2.2.1+cu121 --extra-index-url https://download.pytorch.org/whl/cu121
COPY . /app
"""

COMPOSE = """\
services:
  api:
    build: .
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
  db:
    image: postgres:16
"""


def test_names() -> None:
    assert dockerfile_name("Dockerfile") == "Dockerfile.rocm"
    assert dockerfile_name("docker/Dockerfile.cuda") == "docker/Dockerfile.rocm"
    assert dockerfile_name("app.dockerfile") == "app.rocm.dockerfile"
    assert compose_name("docker-compose.yml") == "docker-compose.rocm.yml"


def test_dockerfile_rocm(tmp_path: Path) -> None:
    report = run(project(tmp_path, {"Dockerfile": CUDA_DOCKERFILE}))
    text = created(report, "Dockerfile.rocm")
    lines = text.splitlines()
    assert lines[0] == "# syntax=docker/dockerfile:1"  # the parser directive stays first
    assert "FROM rocm/dev-ubuntu-22.04:6.4-complete" in lines
    assert "NVIDIA_VISIBLE_DEVICES" not in text and "CUDA_HOME" not in text
    assert "LANG=C.UTF-8" in text
    assert "PYTORCH_ROCM_ARCH=gfx942" in text
    assert "cuda-toolkit" not in text and "python3-pip" in text and " git" in text
    assert "torch==2.2.1+rocm5.7" in text  # the ROCm index that served torch 2.2
    assert "download.pytorch.org/whl/rocm5.7" in text and "whl/cu121" not in text
    assert "ENV LANG=C.UTF-8" in lines
    found = report.files[0].hunks[0].findings
    assert any(f.startswith("GP501 Dockerfile:2") for f in found)
    assert [f.path for f in report.files] == ["Dockerfile.rocm"]


def test_framework_image_keeps_its_own_torch(tmp_path: Path) -> None:
    df = "FROM pytorch/pytorch:2.2.1-cuda12.1-cudnn8-runtime\nRUN pip install torch einops\n"
    text = created(run(project(tmp_path, {"Dockerfile": df})), "Dockerfile.rocm")
    assert "FROM rocm/pytorch:latest" in text
    assert "einops" in text and "install torch" not in text


def test_no_dockerfile_copy_without_cuda(tmp_path: Path) -> None:
    report = run(project(tmp_path, {"Dockerfile": "FROM python:3.11\nRUN pip install numpy\n"}))
    assert report.files == []


def test_unknown_nvidia_image_is_left(tmp_path: Path) -> None:
    df = "FROM nvcr.io/nvidia/tritonserver:24.01-py3\n"
    report = run(project(tmp_path, {"Dockerfile": df}))
    assert not any(f.path.startswith("Dockerfile.rocm") for f in report.files)
    assert any(u.finding.rule_id == "GP501" for u in report.unfixed)


def test_compose_override(tmp_path: Path) -> None:
    report = run(project(tmp_path, {"docker-compose.yml": COMPOSE}))
    text = created(report, "docker-compose.rocm.yml")

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_constructor("!reset", lambda loader, node: None)
    data = yaml.load(text, Loader=_Loader)  # noqa: S506 - SafeLoader subclass
    api = data["services"]["api"]
    assert api["devices"] == ["/dev/kfd", "/dev/dri"]
    assert "video" in api["group_add"]
    assert api["deploy"]["resources"]["reservations"]["devices"] is None  # !reset
    assert "db" not in data["services"]


def test_compose_without_gpu_is_left(tmp_path: Path) -> None:
    plain = "services:\n  db:\n    image: postgres:16\n"
    assert run(project(tmp_path, {"docker-compose.yml": plain})).files == []


def test_compose_service_building_a_ported_dockerfile_gets_the_devices(tmp_path: Path) -> None:
    files = {
        "Dockerfile": (
            "FROM python:3.11\nCOPY requirements.txt .\nRUN pip install -r requirements.txt\n"
        ),
        "requirements.txt": "torch>=2.2\nfastapi\n",
        "docker-compose.yml": "services:\n  app:\n    build: .\n  cache:\n    image: redis:7\n",
    }
    report = run(project(tmp_path, files))
    docker = created(report, "Dockerfile.rocm")
    assert "COPY requirements.txt requirements-rocm.txt ." in docker
    pre = docker.index("-r requirements-rocm.txt")
    assert pre < docker.index("RUN pip install -r requirements.txt")
    compose = yaml.safe_load(created(report, "docker-compose.rocm.yml"))
    app = compose["services"]["app"]
    assert app["build"] == {"dockerfile": "Dockerfile.rocm"}
    assert app["devices"] == ["/dev/kfd", "/dev/dri"] and app["group_add"] == ["video", "render"]
    assert "cache" not in compose["services"]
