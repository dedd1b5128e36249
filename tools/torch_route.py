"""Before ``make test`` installs torch: refuse a resolution that would download the CUDA build.

On Linux x86-64, PyPI's torch wheel is the CUDA build: it pulls several GB of nvidia-* wheels
that gpuport's tests never use (they run on the CPU). This asks pip what it would install
(``pip install --dry-run --report``, which reads wheel metadata, not the wheels) and stops with
the routes that avoid it:

* ``make test TORCH_INDEX=https://download.pytorch.org/whl/cpu``: the CPU build (192 MB);
* ``make test TORCH_SPEC=/path/to/torch-…+cpu-….whl``: a wheel on disk;
* ``make test-lite``: no torch at all (the bench and validate tests are left out, and said).

``GPUPORT_ALLOW_CUDA_TORCH=1`` accepts the CUDA build knowingly.

Usage: ``python tools/torch_route.py TORCH_SPEC [TORCH_INDEX]``; exit 0 when the route is fine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ADVICE = """\
make: torch {spec} would come from PyPI as the CUDA build, with {n} nvidia-* wheels ({names}):
several GB that gpuport's tests never use (they run on the CPU). Choose one:
  make test TORCH_INDEX=https://download.pytorch.org/whl/cpu    # the CPU build, 192 MB
  make test TORCH_SPEC=/path/to/torch-2.13.0+cpu-cp311-...whl    # a wheel on disk
  make test-lite                                    # no torch: its tests are left out, and counted
  GPUPORT_ALLOW_CUDA_TORCH=1 make test                           # accept the CUDA build
"""


def planned(spec: str, index: str) -> list[tuple[str, str]] | None:
    """(name, version) of what ``pip install spec`` would install; None when pip cannot say."""
    with tempfile.TemporaryDirectory(prefix="gpuport-torch-route-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [
            sys.executable, "-m", "pip", "install", "--dry-run", "--quiet",
            "--disable-pip-version-check", "--report", str(report), spec,
        ]  # fmt: skip
        if index:
            cmd += ["--extra-index-url", index]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900)
        if done.returncode != 0 or not report.is_file():
            return None
        data = json.loads(report.read_text(encoding="utf-8"))
    return [
        (str(item["metadata"]["name"]).lower(), str(item["metadata"]["version"]))
        for item in data.get("install", [])
    ]


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: torch_route.py TORCH_SPEC [TORCH_INDEX]", file=sys.stderr)
        return 2
    spec, index = argv[0], (argv[1] if len(argv) > 1 else "")
    if os.environ.get("GPUPORT_ALLOW_CUDA_TORCH") == "1":
        return 0
    plan = planned(spec, index)
    if plan is None:
        return 0  # pip cannot resolve it: the install itself says why
    nvidia = sorted(name for name, _ in plan if name.startswith("nvidia-"))
    if not nvidia:
        return 0
    shown = ", ".join(nvidia[:3]) + (", ..." if len(nvidia) > 3 else "")
    print(ADVICE.format(spec=spec, n=len(nvidia), names=shown), file=sys.stderr, end="")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
