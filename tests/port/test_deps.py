"""Dependency routes: requirements-rocm.txt beside the CUDA requirements."""

from __future__ import annotations

from pathlib import Path

from packaging.requirements import Requirement

from gpuport.port.fix_deps import rocm_name
from tests.port.helpers import created, fix_ids, project, run

CUDA_REQS = """\
numpy==1.26.2
--extra-index-url https://download.pytorch.org/whl/cu118
torch==2.1.2+cu118
torchvision==0.16.2+cu118
xformers==0.0.23.post1+cu118
bitsandbytes==0.41.1
transformers==4.36.2
"""


GPU_APP = 'import torch\n\nmodel = torch.nn.Linear(2, 2).to("cuda")\n'


def test_rocm_name() -> None:
    assert rocm_name("requirements.txt") == "requirements-rocm.txt"
    assert rocm_name("requirements_cuda.txt") == "requirements_rocm.txt"
    assert rocm_name("requirements-cu118.txt") == "requirements-rocm.txt"
    assert rocm_name("reqs/base.in") == "reqs/base-rocm.in"


def test_copy_route_pins_the_same_torch_release_from_its_rocm_index(tmp_path: Path) -> None:
    report = run(project(tmp_path, {"requirements.txt": CUDA_REQS}))
    text = created(report, "requirements-rocm.txt")
    lines = text.splitlines()
    # the index that served torch 2.1 for ROCm (knowledge/port_routes.toml), same releases
    assert "--extra-index-url https://download.pytorch.org/whl/rocm5.6" in lines
    assert "torch==2.1.2+rocm5.6" in lines
    assert "torchvision==0.16.2+rocm5.6" in lines
    # a CUDA-only build with no known ROCm wheel is commented out, with the reason
    assert "# xformers==0.0.23.post1+cu118" in lines
    assert "numpy==1.26.2" in lines and "transformers==4.36.2" in lines
    # the version floor is unsafe: carried as it is, with a note
    assert "bitsandbytes==0.41.1" in lines
    assert any("GP107" in ln and "--unsafe-fixes" in ln for ln in lines)
    # every requirement line parses
    for ln in lines:
        if ln and not ln.startswith(("#", "-")):
            Requirement(ln)
    # the CUDA file is untouched
    assert [f.path for f in report.files] == ["requirements-rocm.txt"]
    hunk = report.files[0].hunks[0]
    assert "GP105 requirements.txt:3" in hunk.findings
    assert "GP104 requirements.txt:2" in hunk.findings
    assert not any("xformers" in f or ":5" in f for f in hunk.findings if f.startswith("GP105"))


def test_unsafe_fixes_raise_the_floor(tmp_path: Path) -> None:
    report = run(project(tmp_path, {"requirements.txt": CUDA_REQS}), unsafe_fixes=True)
    text = created(report, "requirements-rocm.txt")
    assert "bitsandbytes>=0.50.0" in text
    taken = fix_ids(report, applied=True)
    assert taken == ["deps-route:requirements-rocm.txt:unsafe"]
    assert "deps-route:requirements-rocm.txt" in fix_ids(report, applied=False)


def test_preinstall_route_for_plain_torch(tmp_path: Path) -> None:
    files = {"requirements.txt": "torch>=2.2\ntorchaudio\nfastapi\n", "app.py": GPU_APP}
    report = run(project(tmp_path, files))
    text = created(report, "requirements-rocm.txt")
    assert "--index-url https://download.pytorch.org/whl/rocm" in text
    assert "torch>=2.2" in text.splitlines() and "torchaudio" in text.splitlines()
    assert "fastapi" not in text  # the rest installs from the project's own file, unchanged


def test_setup_py_torch_gets_a_preinstall_route(tmp_path: Path) -> None:
    setup = 'from setuptools import setup\nsetup(name="x", install_requires=["torch>=2.0"])\n'
    report = run(project(tmp_path, {"setup.py": setup}))
    text = created(report, "requirements-rocm.txt")
    assert "torch>=2.0" in text and "pip install ." in text


def test_no_route_without_findings_or_with_a_route(tmp_path: Path) -> None:
    report = run(project(tmp_path / "a", {"requirements.txt": "numpy\nrequests\n"}))
    assert report.files == []
    has = {"requirements.txt": CUDA_REQS, "requirements-rocm.txt": "# ours\n"}
    report = run(project(tmp_path / "b", has))
    assert not any(f.path == "requirements-rocm.txt" for f in report.files)


def test_unknown_torch_release_is_left_to_a_person(tmp_path: Path) -> None:
    reqs = "--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==1.7.1+cu110\n"
    report = run(project(tmp_path, {"requirements.txt": reqs}))
    assert report.files == []
    assert any(u.finding.rule_id == "GP105" for u in report.unfixed)


def test_a_requirements_file_for_another_platform_gets_no_route(tmp_path: Path) -> None:
    """requirements-coreml.txt converts models on a Mac: a ROCm torch route there is noise."""
    files = {"models/requirements-coreml.txt": "torch>=2.0\ncoremltools\n"}
    report = run(project(tmp_path, files))
    assert report.files == []
    reasons = [u.reason for u in report.unfixed if u.finding.path.endswith("coreml.txt")]
    assert reasons and all("another platform" in r for r in reasons), report.unfixed
    # the same file without the platform in its name gets its route
    files = {"models/requirements.txt": "torch>=2.0\n", "a.py": GPU_APP}
    plain = run(project(tmp_path / "b", files))
    assert [f.path for f in plain.files] == ["models/requirements-rocm.txt"]


def test_no_preinstall_route_where_torch_only_runs_on_the_cpu(tmp_path: Path) -> None:
    """ggml's requirements.txt serves model-conversion scripts (torch.load on the CPU): no
    Python file names a GPU, so a ROCm torch route adds nothing; the reason is listed."""
    convert = 'import torch\n\nsd = torch.load("model.pt", map_location="cpu")\n'
    files = {"requirements.txt": "torch==2.0.1\nnumpy\n", "convert.py": convert}
    report = run(project(tmp_path, files))
    assert report.files == []
    reasons = [u.reason for u in report.unfixed if u.finding.path == "requirements.txt"]
    assert reasons and all("runs on the CPU" in r for r in reasons), report.unfixed
    # the same project with one script that puts the model on a GPU gets its route
    gpu = run(project(tmp_path / "b", {**files, "infer.py": GPU_APP}))
    assert [f.path for f in gpu.files] == ["requirements-rocm.txt"]
    # a package's own manifest keeps its route: its users choose the device
    setup = 'from setuptools import setup\nsetup(name="x", install_requires=["torch>=2.0"])\n'
    pkg = run(project(tmp_path / "c", {"setup.py": setup, "convert.py": convert}))
    assert [f.path for f in pkg.files] == ["requirements-rocm.txt"]


def test_nvidia_cuda_runtime_wheels_stay_off_the_rocm_route(tmp_path: Path) -> None:
    """A lock export lists the CUDA torch wheel's own CUDA runtime (``nvidia-*-cu12``): the
    ROCm route comments them out with the reason; other NVIDIA-named packages
    (``nvidia-ml-py``, a ``-cu12`` name not from NVIDIA) are kept."""
    reqs = (
        "torch==2.1.2+cu118 ; platform_system == 'Linux'\n"
        "--extra-index-url https://download.pytorch.org/whl/cu118\n"
        'nvidia-cublas-cu12==12.4.5.8 ; platform_system == "Linux"\n'
        "nvidia-nccl-cu11==2.19.3\n"
        "nvidia-ml-py==12.535.133\n"
        "safetensors==0.4.1\n"
    )
    files = {"requirements.txt": reqs, "app.py": GPU_APP}
    lines = created(run(project(tmp_path, files)), "requirements-rocm.txt").splitlines()
    assert '# nvidia-cublas-cu12==12.4.5.8 ; platform_system == "Linux"' in lines
    assert "# nvidia-nccl-cu11==2.19.3" in lines
    assert sum("NVIDIA's CUDA runtime wheel" in ln for ln in lines) == 2
    assert "nvidia-ml-py==12.535.133" in lines and "safetensors==0.4.1" in lines
    assert any(ln.startswith("torch==2.1.2+rocm5.6") for ln in lines)


def test_nvidia_runtime_wheels_alone_make_no_route(tmp_path: Path) -> None:
    """Negative: a file with nothing to route but NVIDIA's wheels gets no ROCm file."""
    files = {"requirements.txt": "nvidia-cublas-cu12==12.4.5.8\nnumpy\n", "app.py": GPU_APP}
    assert run(project(tmp_path, files)).files == []


def test_a_folders_own_torch_scripts_decide_its_route(tmp_path: Path) -> None:
    """An application folder's requirements serve the scripts beside it: when those import
    torch only to save a configuration, its torch runs on the CPU (no route, the reason
    listed), even though the project's other Python (and a comment there) names a GPU. A
    folder whose scripts put torch on a GPU gets its route; a folder with no torch script of
    its own (its requirements serve the root's GPU script) falls back to the project."""
    save_only = 'import torch\n# the GPU trainer reads this\ntorch.save({"lr": 1e-3}, "cfg.pt")\n'
    files = {
        "apps/chem/requirements.txt": "torch\nnumpy\n",
        "apps/chem/train.py": save_only,
        "tools/launch.py": 'import subprocess\nsubprocess.run(["srun", "--gpus", "4"])\n',
    }
    report = run(project(tmp_path / "a", files))
    assert report.files == []
    reasons = [u.reason for u in report.unfixed if u.finding.path == "apps/chem/requirements.txt"]
    assert reasons and all("runs on the CPU" in r for r in reasons), report.unfixed
    gpu_script = 'import torch\nmodel = torch.nn.Linear(2, 2).to("cuda")\n'
    b = run(project(tmp_path / "b", {**files, "apps/chem/infer.py": gpu_script}))
    assert [f.path for f in b.files] == ["apps/chem/requirements-rocm.txt"]
    served = {
        "models/requirements.txt": "torch\n",
        "run.py": gpu_script,
        "models/cfg.py": "X = 1\n",
    }
    c = run(project(tmp_path / "c", served))
    assert [f.path for f in c.files] == ["models/requirements-rocm.txt"]


def test_a_bounded_torch_takes_the_index_of_the_newest_release_it_allows(tmp_path: Path) -> None:
    """J45 (KernelBench): `torch==2.9.*` beside `triton==3.5.*`; the default index serves only
    the newest torch, so pip took PyPI's CUDA wheel. The index of the newest release the
    specifier allows is the one (knowledge/port_routes.toml: 2.9 -> rocm6.4)."""
    for spec, index in (
        ("torch==2.9.*", "rocm6.4"),
        ("torch~=2.6.0", "rocm6.2.4"),
        ("torch>=2.5,<2.8", "rocm6.3"),
    ):
        reqs = f"{spec}\ntriton==3.5.*\nnumpy\n"
        files = {"requirements.txt": reqs, "app.py": GPU_APP}
        root = project(tmp_path / index / spec.replace("*", "x"), files)
        text = created(run(root), "requirements-rocm.txt")
        assert f"https://download.pytorch.org/whl/{index}\n" in text, (spec, text)
        assert str(Requirement(spec)) in text.splitlines()
    # an open upper end: the default index (the newest torch satisfies it)
    files = {"requirements.txt": "torch>=2.5\ntriton==3.5.*\n", "app.py": GPU_APP}
    root = project(tmp_path / "open", files)
    text = created(run(root), "requirements-rocm.txt")
    assert "whl/rocm7.2" in text, text
