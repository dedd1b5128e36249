"""Forty-fifth re-run (red team 45), findings F16, F18, F9, F10 and F15: a monitoring tool a
cron table runs is run (F16); a pip freeze an install loop installs through a glob
(``for f in requirements/*.txt``) stays core (F18); and a README claim of ROCm support counts
as this project's route only when it states present support here: not in a fork or another
repository (F9), not withdrawn ("not anymore", "broken since 2.0": F10), not "with ZLUDA", a
translation layer (F15).
"""

from __future__ import annotations

from pathlib import Path

from gpuport.scan import ScanOptions, scan_path
from gpuport.scan.model import ScanReport
from tests.scan.project_files import write

_VOTE = (
    "__global__ void vote(int *o, int n){ unsigned b = __ballot_sync(0xffffffff, "
    "o[threadIdx.x] > n); o[0] = __popc(b); }\n"
)
_CUDA_ONLY = {
    "k.cu": _VOTE,
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.18)\nproject(x LANGUAGES CXX CUDA)\n"
    "add_library(x k.cu)\n",
}


def _scan(root: Path, files: dict[str, str]) -> ScanReport:
    return scan_path(write(root, files), ScanOptions(jobs=1))


def _readme_verdict(root: Path, sentence: str) -> tuple[str, bool]:
    report = _scan(root, {**_CUDA_ONLY, "README.md": f"# x\n\n{sentence}\n"})
    return report.verdict.value, any(r.counts for r in report.routes)


def test_f16_a_monitor_run_by_a_cron_table_is_run_not_lowered(tmp_path: Path) -> None:
    """gpustat, run only by a `crontab`, a `*.cron` file, a `cron.d/` entry or a `.fish`
    script, is called on the AMD host: its finding stays above info and the scan is not
    READY; with no runner at all it is still lowered (ready)."""
    base = {"requirements.txt": "gpustat==1.1\nnumpy\n", "app.py": "import numpy\n"}
    line = "*/5 * * * * gpustat --json > /var/log/gpu.json\n"
    runners = {
        "crontab": {"crontab": line},
        "dot_cron": {"deploy/gpu.cron": line},
        "cron_d": {"cron.d/gpu-monitor": line},
        "fish": {"tools/watch.fish": "gpustat --watch\n"},
        "sh_shebang": {"bin/watch": "#!/bin/sh\ngpustat --watch\n"},
    }
    for name, extra in runners.items():
        report = _scan(tmp_path / name, {**base, **extra})
        assert report.verdict.value != "ready", name
    assert _scan(tmp_path / "none", base).verdict.value == "ready"


def test_f18_a_freeze_installed_through_a_glob_stays_core(tmp_path: Path) -> None:
    """requirements/cuda.txt (a freeze with nvidia-*-cu12 and cupy pins) installed by
    `for f in requirements/*.txt; do pip install -r "$f"; done` (or a `**` glob, or Python's
    glob) is named: its blockers count. A glob that cannot match it still moves it apart."""
    freeze = (
        "nvidia-cublas-cu12==12.1.3.1\nnvidia-cudnn-cu12==8.9.2.26\nnvidia-nccl-cu12==2.18.1\n"
        "cupy-cuda12x==12.2.0\npynvml==11.5.0\n"
    ) + "".join(f"pkg{i}==1.{i}\n" for i in range(20))
    base = {
        "pyproject.toml": '[project]\nname="x"\nversion="0.1"\n',
        "x/__init__.py": "import numpy\n",
        "requirements/cuda.txt": freeze,
    }
    installers = {
        "loop": '#!/bin/sh\nfor f in requirements/*.txt; do pip install -r "$f"; done\n',
        "deep": '#!/bin/sh\nfor f in requirements/**/*.txt; do pip install -r "$f"; done\n',
        "prefix": "#!/bin/sh\npip install -r requirements/cu*.txt\n",
    }
    for name, script in installers.items():
        report = _scan(tmp_path / name, {**base, "install.sh": script})
        assert report.verdict.value == "blocked", name
    python = {
        "tools/install.py": "import glob, subprocess\n"
        'for f in glob.glob("requirements/*.txt"):\n'
        '    subprocess.run(["pip", "install", "-r", f])\n'
    }
    assert _scan(tmp_path / "python", {**base, **python}).verdict.value == "blocked"
    other = {"install.sh": "#!/bin/sh\nfor f in docs/*.txt; do cat $f; done\npip install -e .\n"}
    assert _scan(tmp_path / "other", {**base, **other}).verdict.value == "ready"


def test_f9_rocm_support_placed_in_a_fork_or_another_repository_is_no_route(
    tmp_path: Path,
) -> None:
    """A README that places ROCm support in a fork or another repository names no route of
    this code: the ballot blocker stays and the scan is blocked. A fork whose own README says
    it runs on ROCm still has a route."""
    elsewhere = [
        "x runs on AMD GPUs through ROCm in our fork, x-rocm, not in this repository.",
        "x supports AMD GPUs through ROCm in a separate repository.",
        "AMD GPUs are supported through ROCm by a third-party plugin, x-amd.",
    ]
    for i, sentence in enumerate(elsewhere):
        verdict, route = _readme_verdict(tmp_path / f"e{i}", sentence)
        assert (verdict, route) == ("blocked", False), sentence
    verdict, route = _readme_verdict(
        tmp_path / "this_fork", "This fork runs on AMD GPUs through ROCm."
    )
    assert route and verdict != "blocked"


def test_f10_withdrawn_rocm_support_is_no_route(tmp_path: Path) -> None:
    """ "...through ROCm, but not anymore", "(broken since 2.0)", "-- broken since 2.0",
    "as of the 2.3 release, not anymore", "used to run ... through ROCm" deny present support:
    no route, blocked. The plain claim still counts."""
    withdrawn = [
        "x runs on AMD GPUs through ROCm, as of the 2.3 release, not anymore.",
        "x runs on AMD GPUs through ROCm, but not anymore.",
        "x runs on AMD GPUs through ROCm (broken since 2.0).",
        "x runs on AMD GPUs through ROCm -- broken since 2.0.",
        "It used to run on AMD GPUs through ROCm.",
    ]
    for i, sentence in enumerate(withdrawn):
        verdict, route = _readme_verdict(tmp_path / f"w{i}", sentence)
        assert (verdict, route) == ("blocked", False), sentence
    verdict, route = _readme_verdict(tmp_path / "now", "x runs on AMD GPUs through ROCm.")
    assert route and verdict != "blocked"


def test_f15_amd_support_with_a_translation_layer_is_no_rocm_route(tmp_path: Path) -> None:
    """ "runs on AMD Radeon GPUs with ZLUDA" (or "with SCALE") is another stack's route, not a
    ROCm build of this code: blocked. "with ROCm 6" or "with 16GB of VRAM" still count."""
    for i, sentence in enumerate(
        ["x runs on AMD Radeon GPUs with ZLUDA.", "x runs on AMD GPUs with SCALE."]
    ):
        verdict, route = _readme_verdict(tmp_path / f"z{i}", sentence)
        assert (verdict, route) == ("blocked", False), sentence
    for i, sentence in enumerate(
        ["x supports AMD GPUs with ROCm 6.", "x runs on AMD GPUs with 16GB of VRAM."]
    ):
        verdict, route = _readme_verdict(tmp_path / f"ok{i}", sentence)
        assert route and verdict != "blocked", sentence
