"""Containers: a ROCm copy of a Dockerfile built on a plain Python image (session 13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.port.helpers import created, fix_ids, project, run

DOCKERFILE = """\
FROM python:3.11-slim
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends ffmpeg curl \\
    && rm -rf /var/lib/apt/lists/*
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY app/ /app/app/
CMD ["python", "-m", "app.main"]
"""

COMPOSE = """\
services:
  api:
    build:
      context: .
      dockerfile: api/Dockerfile
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
"""

GPU_PY = 'import torch\ndevice = "cuda" if torch.cuda.is_available() else "cpu"\n'


def _project(tmp_path: Path, dockerfile: str = DOCKERFILE, **more: str) -> Path:
    files = {
        "api/Dockerfile": dockerfile,
        "requirements.txt": "fastapi>=0.100\ntorch>=2.0.0\ntorchvision>=0.15\n",
        "app/main.py": GPU_PY,
        "compose.yaml": COMPOSE,
    }
    files.update(more)
    return project(tmp_path, files)


def _reason(report: object, rule: str = "GP502") -> str:
    return " ".join(u.reason for u in report.unfixed if u.finding.rule_id == rule)  # type: ignore[attr-defined]


def test_a_python_image_gets_the_rocm_pytorch_image(tmp_path: Path) -> None:
    report = run(_project(tmp_path))
    text = created(report, "api/Dockerfile.rocm")
    assert "FROM rocm/pytorch:rocm6.4_ubuntu24.04_py3.12_pytorch_release_2.6.0\n" in text
    assert "ENV PIP_CONSTRAINT=/etc/gpuport-rocm-torch.txt" in text
    assert "grep -iE '^(torch|torchvision)=='" in text
    # every other step is kept as it was
    for line in DOCKERFILE.splitlines()[1:]:
        assert line in text
    fix = next(f for f in report.fixes if f.id == "dockerfile-rocm:api/Dockerfile.rocm")
    assert fix.safe and fix.applied
    assert "Python 3.12 where python:3.11-slim has 3.11" in fix.note
    # the compose override now builds the copy and passes the AMD devices
    compose = created(report, "compose.rocm.yaml")
    assert "dockerfile: api/Dockerfile.rocm" in compose and "/dev/kfd" in compose
    # a second run changes nothing
    run(tmp_path, apply=True)
    assert run(tmp_path).files == []


def test_torch_leaves_a_direct_pip_install(tmp_path: Path) -> None:
    dockerfile = (
        "FROM python:3.10\nRUN pip install torch torchvision fastapi\nRUN pip install torch\n"
    )
    text = created(run(_project(tmp_path, dockerfile)), "api/Dockerfile.rocm")
    assert "FROM rocm/pytorch:rocm6.4_ubuntu22.04_py3.10_pytorch_release_2.6.0\n" in text
    assert "RUN pip install fastapi\n" in text
    assert "# RUN pip install torch\n" in text  # nothing left to install: commented out


def test_the_nearest_python_is_taken_and_none_newer_is_refused(tmp_path: Path) -> None:
    report = run(_project(tmp_path / "a", DOCKERFILE.replace("3.11-slim", "3.13-slim")))
    assert "rocm/pytorch:rocm7.1_ubuntu24.04_py3.13_pytorch_release_2.9.1" in created(
        report, "api/Dockerfile.rocm"
    )
    direct = DOCKERFILE.replace("-r requirements.txt", "torch fastapi")
    report = run(_project(tmp_path / "b", direct.replace("3.11-slim", "3.14-slim")))
    assert "dockerfile-rocm:api/Dockerfile.rocm" not in fix_ids(report)
    assert "has Python 3.14 or newer" in _reason(report)


def test_a_cpu_project_gets_no_copy(tmp_path: Path) -> None:
    report = run(_project(tmp_path, **{"app/main.py": "import torch\ntorch.save({}, 'x')\n"}))
    assert not any(i.startswith("dockerfile-rocm") for i in fix_ids(report))
    report = run(_project(tmp_path / "gpu"))
    assert "dockerfile-rocm:api/Dockerfile.rocm" in fix_ids(report)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (("3.11-slim", "3.11-alpine"), "is an Alpine image"),
        (("apt-get update &&", "dnf makecache &&"), "runs dnf"),
        (("RUN pip install --no-cache-dir", "RUN python -m venv /v && pip install"), "venv"),
        (("COPY app/", "RUN pip install torch==2.1.0\nCOPY app/"), "asks for torch==2.1.0"),
        (("ffmpeg curl", "ffmpeg libgl1-mesa-glx"), "Debian package libgl1-mesa-glx"),
        (("COPY app/", "RUN useradd -m -u 1000 app\nCOPY app/"), "ID 1000"),
        (("COPY app/", "RUN nvcc -o k k.cu\nCOPY app/"), "compiles CUDA code"),
        (("COPY app/", "RUN pip install torchaudio\nCOPY app/"), "torchaudio"),
        (
            ("FROM python:3.11-slim", "FROM debian:12\nRUN apt-get install -y python3-pip"),
            "install the distribution's Python",
        ),
    ],
)
def test_refusals(tmp_path: Path, change: tuple[str, str], why: str) -> None:
    direct = DOCKERFILE.replace("-r requirements.txt", "torch fastapi")
    report = run(_project(tmp_path, direct.replace(*change)))
    assert "dockerfile-rocm:api/Dockerfile.rocm" not in fix_ids(report)
    assert "compose-rocm:compose.rocm.yaml" not in fix_ids(report)
    assert why in _reason(report)


def test_rocm_wheels_where_amd_image_does_not_fit(tmp_path: Path) -> None:
    """A requirements file with a ROCm wheel route and a reason AMD's image does not fit
    (a pin of another torch, the Dockerfile's own venv): the wheels on the same image."""
    report = run(_project(tmp_path, **{"requirements.txt": "torch==2.1.0\nfastapi\n"}))
    fix = next(f for f in report.fixes if f.id == "dockerfile-rocm:api/Dockerfile.rocm")
    assert "not on AMD's PyTorch image, since requirements.txt asks for torch==2.1.0" in fix.note
    text = created(report, "api/Dockerfile.rocm")
    assert "FROM python:3.11-slim\n" in text and "-r requirements-rocm.txt" in text
    assert "--group-add $(getent group render | cut -d: -f3)" in text
    # the image has no render group: Docker would stop at its name
    compose = created(report, "compose.rocm.yaml")
    assert "- video\n" in compose and "- render" not in compose
    assert '- "${RENDER_GID:?set RENDER_GID to the host render group ID' in compose
    # what scan asks of a ROCm service (GP505) holds: nothing new after --apply
    done = run(tmp_path, apply=True)
    assert done.verification is not None and done.verification.new_findings == []


def test_amd_image_keeps_the_render_group(tmp_path: Path) -> None:
    report = run(_project(tmp_path))
    assert "      - render" in created(report, "compose.rocm.yaml")
    assert "--group-add render" in created(report, "api/Dockerfile.rocm")


def test_a_python_environment_copied_between_stages_is_refused(tmp_path: Path) -> None:
    dockerfile = (
        "FROM python:3.11-slim AS build\nCOPY requirements.txt .\n"
        "RUN pip install --prefix=/install -r requirements.txt\n"
        "FROM python:3.11-slim\nCOPY --from=build /install /usr/local\n"
    )
    report = run(_project(tmp_path, dockerfile.replace("-r requirements.txt", "torch")))
    assert "copies a stage's files into another (--from=build)" in _reason(report)


def test_a_base_image_the_project_passes_is_refused(tmp_path: Path) -> None:
    dockerfile = "ARG BASE=python:3.11-slim\nFROM ${BASE}\n" + DOCKERFILE.split("\n", 1)[1]
    compose = COMPOSE.replace(
        "dockerfile: api/Dockerfile\n",
        "dockerfile: api/Dockerfile\n      args:\n        - BASE=${BASE}\n",
    )
    report = run(_project(tmp_path, dockerfile, **{"compose.yaml": compose}))
    assert "comes from the build argument BASE, which compose.yaml" in _reason(report)


def test_a_cuda_branch_no_build_takes_is_kept(tmp_path: Path) -> None:
    dockerfile = DOCKERFILE.replace(
        "COPY app/",
        'ARG USE_CUDA=false\nRUN if [ "$USE_CUDA" = "true" ]; then nvcc -o k k.cu; fi\nCOPY app/',
    )
    report = run(_project(tmp_path, dockerfile))
    assert "dockerfile-rocm:api/Dockerfile.rocm" in fix_ids(report)
    unknown = dockerfile.replace("ARG USE_CUDA=false", "ARG USE_CUDA")
    report = run(_project(tmp_path / "b", unknown))
    assert "dockerfile-rocm:api/Dockerfile.rocm" not in fix_ids(report)
