"""Containers: Dockerfile.rocm and the compose override."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpuport.port.fix_compose import compose_name
from gpuport.port.fix_containers import dockerfile_name
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
    files = {"docker-compose.yml": COMPOSE, "Dockerfile": CUDA_DOCKERFILE}
    report = run(project(tmp_path, files))
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
        "app.py": "import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n",
    }
    report = run(project(tmp_path, files))
    docker = created(report, "Dockerfile.rocm")
    # (session 13) AMD's PyTorch image, whose torch pip keeps; the ROCm wheels on the same
    # image where it does not fit: tests/port/test_python_image.py
    assert "FROM rocm/pytorch:" in docker and "PIP_CONSTRAINT" in docker
    assert "RUN pip install -r requirements.txt" in docker
    compose = yaml.safe_load(created(report, "docker-compose.rocm.yml"))
    app = compose["services"]["app"]
    assert app["build"] == {"dockerfile": "Dockerfile.rocm"}
    assert app["devices"] == ["/dev/kfd", "/dev/dri"] and app["group_add"] == ["video", "render"]
    assert "cache" not in compose["services"]


#: the NVIDIA reservation of COMPOSE's api service, for a service named ollama
NV_OVERLAY = "services:\n" + COMPOSE.split("  db:")[0].split("services:\n", 1)[1].replace(
    "  api:\n    build: .\n", "  ollama:\n"
)


def test_vendor_overlay_gets_an_amd_sibling(tmp_path: Path) -> None:
    """compose.nvidia.yaml is loaded in place of the AMD one: its AMD sibling replaces it
    (no !reset needed), never an override of the NVIDIA file."""
    base = "services:\n  ollama:\n    image: ollama/ollama:0.5.7\n"
    files = {"svc/compose.yaml": base, "svc/compose.nvidia.yaml": NV_OVERLAY}
    report = run(project(tmp_path, files))
    assert [f.path for f in report.files] == ["svc/compose.amd.yaml"]
    text = created(report, "svc/compose.amd.yaml")
    assert "!reset" not in text
    ollama = yaml.safe_load(text)["services"]["ollama"]
    assert ollama["devices"] == ["/dev/kfd", "/dev/dri"]
    assert ollama["group_add"] == ["video", "render"]
    assert ollama["image"] == "ollama/ollama:rocm"  # knowledge/port_routes.toml
    assert "in place of compose.nvidia.yaml" in report.files[0].hunks[0].lines[0]


def test_vendor_overlay_with_an_amd_sibling_is_left(tmp_path: Path) -> None:
    amd = (
        "services:\n  ollama:\n    devices: [/dev/kfd, /dev/dri]\n    group_add: [video, render]\n"
    )
    for name in ("compose.amd.yaml", "compose.rocm.yaml"):
        root = tmp_path / name
        files = {"compose.nvidia.yaml": NV_OVERLAY, name: amd}
        assert run(project(root, files)).files == []


def test_a_guessed_rocm_image_tag_is_unsafe(tmp_path: Path) -> None:
    base = (
        "services:\n  webui:\n"
        "    image: atinoda/text-generation-webui:default-nvidia-v4.0@sha256:c1fa\n"
    )
    overlay = NV_OVERLAY.replace("ollama", "webui")
    root = project(tmp_path, {"compose.yaml": base, "compose.nvidia.yaml": overlay})
    # a safe overlay would leave the CUDA-tagged image in place: no safe form
    safe_run = run(root)
    assert safe_run.files == []
    assert [f.id for f in safe_run.fixes] == ["compose-rocm:compose.amd.yaml+image-tag"]
    report = run(root, unsafe_fixes=True)
    unsafe = yaml.safe_load(created(report, "compose.amd.yaml"))["services"]["webui"]
    assert unsafe["image"] == "atinoda/text-generation-webui:default-rocm-v4.0"
    (fix,) = [f for f in report.fixes if f.applied]
    assert not fix.safe and "guessed" in fix.why


def test_a_safe_overlay_keeps_the_services_whose_image_is_not_cuda_tagged(
    tmp_path: Path,
) -> None:
    base = (
        "services:\n  webui:\n    image: example/webui:default-nvidia-v4\n"
        "  ollama:\n    image: ollama/ollama:0.5.7\n"
    )
    overlay = NV_OVERLAY + NV_OVERLAY.split("\n", 1)[1].replace("ollama", "webui")
    root = project(tmp_path, {"compose.yaml": base, "compose.nvidia.yaml": overlay})
    safe = yaml.safe_load(created(run(root), "compose.amd.yaml"))["services"]
    assert list(safe) == ["ollama"]
    unsafe = yaml.safe_load(created(run(root, unsafe_fixes=True), "compose.amd.yaml"))
    assert unsafe["services"]["webui"]["image"] == "example/webui:default-rocm-v4"


def test_new_files_take_the_group_ids_the_project_uses(tmp_path: Path) -> None:
    amd = (
        "services:\n  llm:\n    image: rocm/pytorch:latest\n"
        "    devices: [/dev/kfd, /dev/dri]\n"
        '    group_add:\n      - "${VIDEO_GID:-44}"\n      - "${RENDER_GID:-992}"\n'
    )
    files = {"core/compose.amd.yaml": amd, "svc/compose.nvidia.yaml": NV_OVERLAY}
    text = created(run(project(tmp_path, files)), "svc/compose.amd.yaml")
    groups = yaml.safe_load(text)["services"]["ollama"]["group_add"]
    assert groups == ["${VIDEO_GID:-44}", "${RENDER_GID:-992}"]


def test_an_amd_compose_file_gets_its_groups_in_place(tmp_path: Path) -> None:
    amd = (
        "services:\n  llm:\n    image: rocm/pytorch:latest\n"
        "    devices:\n      - /dev/kfd\n      - /dev/dri\n    ports: ['8000:8000']\n"
    )
    root = project(tmp_path, {"docker-compose.amd.yml": amd})
    report = run(root, apply=True)
    assert [f.path for f in report.files] == ["docker-compose.amd.yml"]  # no override of it
    data = yaml.safe_load((root / "docker-compose.amd.yml").read_text())
    assert data["services"]["llm"]["group_add"] == ["video", "render"]
    assert data["services"]["llm"]["devices"] == ["/dev/kfd", "/dev/dri"]
    assert report.verification is not None and not report.verification.new_findings
    assert not report.verification.still_reported
    assert run(root).files == []  # idempotent


def test_legacy_and_template_folders_are_left(tmp_path: Path) -> None:
    files = {"legacy/docker-compose.yml": COMPOSE, "extensions/templates/compose.yaml": COMPOSE}
    assert run(project(tmp_path, files)).files == []


def test_a_dockerfile_that_builds_cuda_code_gets_no_rocm_copy(tmp_path: Path) -> None:
    for i, run_line in enumerate(
        (
            "RUN cmake -B build -DGGML_CUDA=ON && cmake --build build",
            'RUN pip3 install --no-cache-dir "comfy-kitchen[cublas]"',
            "RUN nvcc -o k k.cu",
        )
    ):
        df = f"FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n{run_line}\n"
        report = run(project(tmp_path / str(i), {"Dockerfile": df}))
        assert report.files == [], run_line
        reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP501"]
        assert reasons and "builds or installs CUDA code" in reasons[0], reasons


def test_a_service_building_cuda_code_gets_no_amd_devices(tmp_path: Path) -> None:
    df = "FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\nRUN cmake -B b -DGGML_CUDA=ON\n"
    report = run(project(tmp_path, {"Dockerfile": df, "docker-compose.yml": COMPOSE}))
    assert report.files == []
    reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP502"]
    assert reasons and "compiles CUDA code" in reasons[0], reasons


def test_nvidia_apt_libraries_are_dropped(tmp_path: Path) -> None:
    df = (
        "FROM nvidia/cuda:12.1.0-runtime-ubuntu22.04\n"
        "RUN apt-get update && apt-get install -y curl libnvonnxparsers8 libnvinfer-plugin8\n"
    )
    text = created(run(project(tmp_path, {"Dockerfile": df})), "Dockerfile.rocm")
    assert "libnv" not in text and "curl" in text


def test_an_amd_overlay_builds_the_ported_dockerfile_its_base_service_builds(
    tmp_path: Path,
) -> None:
    files = {
        "svc/Dockerfile": "FROM pytorch/pytorch:2.2.1-cuda12.1-cudnn8-runtime\nRUN pip install x\n",
        "svc/compose.yaml": "services:\n  ollama:\n    build:\n      context: .\n",
        "svc/compose.nvidia.yaml": NV_OVERLAY,
    }
    report = run(project(tmp_path, files))
    data = yaml.safe_load(created(report, "svc/compose.amd.yaml"))
    assert data["services"]["ollama"]["build"] == {"dockerfile": "Dockerfile.rocm"}


def test_cuda_builds_out_of_the_dockerfiles_own_words_get_no_rocm_copy(tmp_path: Path) -> None:
    """CUDA compiled by a cargo feature, CUDA's binary tools, a project script the image
    runs, or NVIDIA's driver manifests: no Dockerfile.rocm, the reason in ``unfixed``."""
    cases = {
        "cargo": {"Dockerfile": "RUN cargo build --release -F candle-cuda -F http\n"},
        "features": {"Dockerfile": "RUN cargo chef cook --features candle-cuda-turing,mkl\n"},
        "nvprune": {"Dockerfile": "RUN nvprune --generate-code code=sm_80 lib.a -o lib.a\n"},
        "script": {
            "docker/Dockerfile": "COPY build_r.sh /w/build_r.sh\nRUN ./build_r.sh 3.11\n",
            "docker/build_r.sh": "cmake -S . -B b \\\n  -D RENDER_ENABLE_CUDA=ON\n",
        },
        "manifest": {"Dockerfile": "COPY 10_nvidia.json /usr/share/glvnd/egl_vendor.d/\n"},
        "conda": {
            "Dockerfile": "RUN conda install pytorch==1.10.1 \\\n  cudatoolkit=11.3 -c pytorch\n"
        },
        "apex": {
            "Dockerfile": 'RUN pip3 install --config-settings "--build-option=--cuda_ext" \\\n'
            "    git+https://github.com/NVIDIA/apex\n"
        },
        "te": {"Dockerfile": "RUN pip3 install git+https://github.com/x/TransformerEngine.git\n"},
    }
    for name, files in cases.items():
        files = {
            k: (f"FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n{v}" if "Dockerfile" in k else v)
            for k, v in files.items()
        }
        report = run(project(tmp_path / name, files))
        assert report.files == [], name
        reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP501"]
        assert reasons and "a ROCm image needs the project's HIP build" in reasons[0], name
    assert "build_r.sh runs -D RENDER_ENABLE_CUDA=ON" in " ".join(
        u.reason for u in run(tmp_path / "script").unfixed
    )


def test_builds_that_do_not_compile_cuda_keep_their_rocm_copy(tmp_path: Path) -> None:
    """Negative: a cargo build without a CUDA feature, a script without CUDA, the tools'
    names only in a comment, an AMD/Mesa manifest: the Dockerfile.rocm is written."""
    cases = {
        "cargo": {"Dockerfile": "RUN cargo build --release --features mkl,http\n"},
        "script": {
            "Dockerfile": "COPY setup.sh /s.sh\nRUN bash /s.sh\n",
            "setup.sh": "# no nvprune or nvcc here\npip install numpy\n",
        },
        "comment": {"Dockerfile": "# nvprune would shrink cuBLAS\nRUN pip install numpy\n"},
        "manifest": {"Dockerfile": "COPY radeon_icd.json /usr/share/vulkan/icd.d/\n"},
        # uninstalling NVIDIA's builds is no CUDA build
        "uninstall": {"Dockerfile": "RUN pip3 uninstall -y apex transformer_engine\n"},
        "conda": {"Dockerfile": "RUN conda install -y numpy scipy && pip install einops\n"},
    }
    for name, files in cases.items():
        files = {
            k: (f"FROM nvidia/cuda:12.1.0-devel-ubuntu22.04\n{v}" if k == "Dockerfile" else v)
            for k, v in files.items()
        }
        text = created(run(project(tmp_path / name, files)), "Dockerfile.rocm")
        assert "FROM rocm/dev-ubuntu-22.04:6.4-complete" in text, name


def test_an_image_gpuport_does_not_know_gets_the_devices_only_as_an_unsafe_fix(
    tmp_path: Path,
) -> None:
    """Whether a third-party image holds ROCm code is not in the project: the AMD devices
    for it are a guess (unsafe); a known image (ollama) or a ROCm-named one stays safe."""
    base = (
        "services:\n  forge:\n    image: ghcr.io/example/forge:1.0\n"
        "  ollama:\n    image: ollama/ollama:0.5.7\n"
    )
    overlay = NV_OVERLAY + NV_OVERLAY.split("\n", 1)[1].replace("ollama", "forge")
    root = project(tmp_path, {"compose.yaml": base, "compose.nvidia.yaml": overlay})
    safe = yaml.safe_load(created(run(root), "compose.amd.yaml"))["services"]
    assert list(safe) == ["ollama"]
    unsafe = yaml.safe_load(created(run(root, unsafe_fixes=True), "compose.amd.yaml"))
    assert unsafe["services"]["forge"]["devices"] == ["/dev/kfd", "/dev/dri"]
    assert "image" not in unsafe["services"]["forge"]  # nothing guessed for it
    rocm = base.replace("example/forge:1.0", "example/forge:1.0-rocm")
    root2 = project(tmp_path / "r", {"compose.yaml": rocm, "compose.nvidia.yaml": overlay})
    services = yaml.safe_load(created(run(root2), "compose.amd.yaml"))["services"]
    assert sorted(services) == ["forge", "ollama"]


def test_a_service_built_for_cuda_without_a_rocm_copy_gets_no_devices(tmp_path: Path) -> None:
    """A service whose Dockerfile gets no ROCm copy (PyPI's CUDA torch in a python image)
    gains nothing from AMD devices: no overlay, the reason in unfixed."""
    dockerfile = "FROM python:3.10-slim\nRUN pip install torch==2.3.0 audiocraft==1.3.0\n"
    base = "services:\n  audio:\n    build:\n      context: .\n      dockerfile: Dockerfile\n"
    overlay = NV_OVERLAY.replace("ollama", "audio")
    files = {"Dockerfile": dockerfile, "compose.yaml": base, "compose.nvidia.yaml": overlay}
    report = run(project(tmp_path, files), unsafe_fixes=True)
    assert "compose.amd.yaml" not in [f.path for f in report.files]
    assert any("gets no ROCm copy" in u.reason for u in report.unfixed)


def test_a_framework_image_drops_a_torch_only_install_whole(tmp_path: Path) -> None:
    """rocm/pytorch ships torch: a RUN that installed only torch is commented out, never
    left as a pip install with options and no package (pip stops there)."""
    files = {
        "Dockerfile": "FROM pytorch/pytorch:2.4.0-cuda12.4-cudnn9-devel\n"
        "RUN pip3 install torch==2.4.0 torchvision==0.19.0 "
        "--index-url https://download.pytorch.org/whl/cu124\n"
        "RUN pip3 install numpy\n",
        "app.py": "import torch\nx = torch.zeros(1).cuda()\n",
    }
    text = created(run(project(tmp_path, files)), "Dockerfile.rocm")
    assert "FROM rocm/pytorch" in text
    assert "\n# RUN pip3 install" in text and "RUN pip3 install numpy" in text
    assert not any(
        ln.startswith("RUN pip3 install") and "numpy" not in ln for ln in text.splitlines()
    )


def test_an_ubuntu_release_rocm_ships_no_image_for_gets_no_rocm_copy(tmp_path: Path) -> None:
    """A CUDA image of an Ubuntu release the ROCm release has no packages or image for
    (ROCm 6.4: 22.04 and 24.04 only) would name an image that does not exist: no
    Dockerfile.rocm, the reason in ``unfixed``. The same Dockerfile on a shipped release gets
    its copy of that release."""
    body = "RUN apt-get update && apt-get install -y git\n"
    for old in ("18.04", "20.04"):
        df = f"FROM nvidia/cuda:10.0-cudnn7-devel-ubuntu{old}\n{body}"
        report = run(project(tmp_path / old, {"Dockerfile": df}))
        assert report.files == [], old
        reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP501"]
        assert reasons and f"Ubuntu {old} image" in reasons[0], old
        assert "ships no image for it (22.04, 24.04)" in reasons[0]
    for new in ("22.04", "24.04"):
        df = f"FROM nvidia/cuda:12.4.1-devel-ubuntu{new}\n{body}"
        text = created(run(project(tmp_path / new, {"Dockerfile": df})), "Dockerfile.rocm")
        assert f"FROM rocm/dev-ubuntu-{new}:6.4-complete" in text
    # a tag naming no release takes the default, which is shipped
    df = f"FROM nvidia/cuda:12.4.1-devel\n{body}"
    text = created(run(project(tmp_path / "none", {"Dockerfile": df})), "Dockerfile.rocm")
    assert "FROM rocm/dev-ubuntu-22.04:6.4-complete" in text


def test_torch_from_pypi_gets_its_rocm_build_first(tmp_path: Path) -> None:
    """On a ROCm base image a RUN that installs PyPI's torch (a CUDA build on Linux) is
    preceded by the ROCm builds from the index of the pinned release (the newest known one
    when unpinned), with the same pip; the RUN then finds them satisfied. Not for a RUN
    that names its own index, a framework image that ships torch, or a release whose ROCm
    index gpuport does not know (no copy, the reason listed)."""
    head = "FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
    df = head + "RUN python3 -m pip install --no-cache-dir torch==2.4.0 torchvision einops\n"
    lines = created(run(project(tmp_path / "a", {"Dockerfile": df})), "Dockerfile.rocm")
    lines = lines.splitlines()
    first = next(i for i, ln in enumerate(lines) if "--index-url" in ln)
    assert lines[first].startswith(
        "RUN python3 -m pip install --index-url https://download.pytorch.org/whl/rocm6.1 "
        "torch==2.4.0 torchvision  # gpuport:"
    )
    assert lines[first + 1] == df.splitlines()[1]  # the project's RUN follows, unchanged
    unpinned = created(
        run(project(tmp_path / "b", {"Dockerfile": head + "RUN pip3 install torch numpy\n"})),
        "Dockerfile.rocm",
    )
    assert "RUN pip3 install --index-url https://download.pytorch.org/whl/rocm" in unpinned
    own = head + "RUN pip install -i https://mirror.example/simple torch==2.4.0\n"
    text = created(run(project(tmp_path / "c", {"Dockerfile": own})), "Dockerfile.rocm")
    assert "download.pytorch.org" not in text
    fw = "FROM pytorch/pytorch:2.2.1-cuda12.1-cudnn8-runtime\nRUN pip install torch einops\n"
    text = created(run(project(tmp_path / "d", {"Dockerfile": fw})), "Dockerfile.rocm")
    assert "--index-url" not in text
    old = head + "RUN pip install torch==1.4.0\n"
    report = run(project(tmp_path / "e", {"Dockerfile": old}))
    assert report.files == []
    assert any("whose ROCm index gpuport does not know" in u.reason for u in report.unfixed)


def test_a_run_installing_a_cuda_only_package_gets_no_rocm_copy(tmp_path: Path) -> None:
    """A RUN that installs, the default way, a package scan found has no ROCm build there
    (onnxruntime-gpu, PyPI's vllm, flash-attn) would put a CUDA build into the ROCm image: no
    Dockerfile.rocm, the package named in the reason. torch beside packages without findings
    is routed, so the copy is written."""
    head = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nRUN apt-get install -y python3-pip\n"
    for i, pkgs in enumerate(("onnxruntime-gpu", "vllm==0.6.3", "torch==2.4.0 vllm==0.6.3")):
        df = f"{head}RUN pip install {pkgs} einops\n"
        report = run(project(tmp_path / str(i), {"Dockerfile": df}))
        assert report.files == [], pkgs
        reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP501"]
        assert reasons and "the default way: a CUDA build" in reasons[0], pkgs
        assert ("vllm" if "vllm" in pkgs else "onnxruntime-gpu") in reasons[0]
    df = f"{head}RUN pip install torch==2.4.0 torchvision==0.19.0 einops\n"
    text = created(run(project(tmp_path / "ok", {"Dockerfile": df})), "Dockerfile.rocm")
    assert "whl/rocm6.1 torch==2.4.0 torchvision==0.19.0  # gpuport:" in text


def test_ngc_cuda_images_get_their_rocm_copy(tmp_path: Path) -> None:
    """NGC (nvcr.io/nvidia/cuda) publishes the same CUDA toolkit images, with the same tags,
    as Docker Hub's nvidia/cuda: the same ROCm SDK image of the same Ubuntu release."""
    body = "RUN apt-get update && apt-get install -y git\n"
    df = f"FROM nvcr.io/nvidia/cuda:12.4.1-cudnn-devel-ubuntu24.04 AS build\n{body}"
    text = created(run(project(tmp_path / "ngc", {"Dockerfile": df})), "Dockerfile.rocm")
    assert "FROM rocm/dev-ubuntu-24.04:6.4-complete AS build" in text and "nvcr.io" not in text
    # idempotent: with the copy in place, a second run adds nothing
    again = run(project(tmp_path / "ngc", {"Dockerfile.rocm": text}))
    assert not any(f.path == "Dockerfile.rocm" for f in again.files)


def test_a_cuda_image_of_another_distribution_gets_no_ubuntu_copy(tmp_path: Path) -> None:
    """A CUDA image of UBI, Rocky Linux or CentOS has steps written for yum/dnf: an Ubuntu
    ROCm image would break them, so no copy, and the reason in ``unfixed``."""
    for tag in ("12.4.1-devel-ubi9", "12.4.1-runtime-rockylinux8", "11.8.0-devel-centos7"):
        df = f"FROM nvcr.io/nvidia/cuda:{tag}\nRUN dnf install -y git\n"
        report = run(project(tmp_path / tag, {"Dockerfile": df}))
        assert report.files == [], tag
        reasons = [u.reason for u in report.unfixed if u.finding.rule_id == "GP501"]
        assert reasons and "not Ubuntu" in reasons[0], tag


def test_a_dockerfile_installing_cuda_from_nvidias_repository_gets_no_copy(
    tmp_path: Path,
) -> None:
    """A Dockerfile that installs the CUDA toolkit itself from NVIDIA's package repository
    (on a base image gpuport has no route for) has no GPU stack once the CUDA packages are
    dropped: no copy, the reason in ``unfixed``. The same image with only the NVIDIA
    environment and a pip CUDA index keeps its copy."""
    df = (
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nENV NVIDIA_VISIBLE_DEVICES all\n"
        "RUN curl -fsSL https://developer.download.nvidia.com/compute/cuda/repos/rhel9/"
        "x86_64/D42D0685.pub > /etc/pki/rpm-gpg/RPM-GPG-KEY-NVIDIA\n"
        "RUN yum install -y cuda-cudart-12-1 && yum clean all\n"
    )
    report = run(project(tmp_path / "repo", {"Dockerfile": df}))
    assert not any(f.path == "Dockerfile.rocm" for f in report.files)
    reasons = [u.reason for u in report.unfixed if u.finding.rule_id.startswith("GP50")]
    assert reasons and "developer.download.nvidia.com/compute/cuda/repos" in reasons[0]
    keyring = (
        "FROM ubuntu:22.04\nENV NVIDIA_VISIBLE_DEVICES all\nRUN apt-get install -y cuda-keyring\n"
    )
    report = run(project(tmp_path / "keyring", {"Dockerfile": keyring}))
    assert not any(f.path == "Dockerfile.rocm" for f in report.files)
    pip_only = (
        "FROM python:3.11\nENV NVIDIA_VISIBLE_DEVICES all\n"
        "RUN pip install torch==2.2.1 --index-url https://download.pytorch.org/whl/cu121\n"
    )
    text = created(run(project(tmp_path / "pip", {"Dockerfile": pip_only})), "Dockerfile.rocm")
    assert "whl/rocm5.7" in text
