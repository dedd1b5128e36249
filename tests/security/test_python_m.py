"""``python -m gpuport`` run inside the project (red-team re-run 14, F1): ``python -m`` puts
the current folder first on ``sys.path``, so a project's ``typer.py`` or ``tomllib.py`` was
imported, and ran, in place of the library gpuport asks for. Every top-level module gpuport
imports for scan, hipify and assess is planted in the folder; none may run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llm-service"

_LIST = """
import json, sys
pre = {m.split('.')[0] for m in sys.modules}
from gpuport.cli.entry import main
for argv in (['scan', sys.argv[1], '--no-progress'], ['hipify', sys.argv[2]]):
    sys.argv = ['gpuport', *argv]
    try:
        main()
    except SystemExit:
        pass
print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} - pre)))
"""


def _before_gpuport() -> set[str]:
    """What ``python -m`` itself imports (runpy and its modules) before any of gpuport's code
    runs: out of gpuport's reach (docs/security.md: use ``gpuport`` or ``python -P -m``)."""
    code = (
        "import json, sys; pre = {m.split('.')[0] for m in sys.modules}; import runpy; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} - pre)))"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=True,
    )
    return set(json.loads(out.stdout))


def _imported(tmp: Path) -> list[str]:
    kernel = tmp / "k.cu"
    kernel.write_text("__global__ void k(float *x) { x[threadIdx.x] = 0; }\n")
    out = subprocess.run(
        [sys.executable, "-P", "-c", _LIST, str(EXAMPLE), str(kernel)],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=True,
    )
    return [n for n in json.loads(out.stdout.strip().splitlines()[-1]) if n.isidentifier()]


def test_python_dash_m_inside_a_project_never_imports_the_projects_modules(
    tmp_path: Path,
) -> None:
    python_own = _before_gpuport()
    assert "runpy" in python_own and "typer" not in python_own
    names = [n for n in _imported(tmp_path) if n not in python_own and n != "gpuport"]
    assert {"typer", "tomllib", "rich", "yaml", "packaging"} <= set(names)  # the list is real
    project = tmp_path / "project"
    project.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    for name in [*names, "gpuport_plugin", "sitecustomize", "usercustomize"]:
        (project / f"{name}.py").write_text(
            f"open({str(marks / name)!r}, 'w').write('ran')\nraise SystemExit(97)\n"
        )
    (project / "app.py").write_text("import torch\n")
    (project / "k.cu").write_text("__global__ void k() {}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    for argv in (["scan", ".", "--no-progress"], ["hipify", "k.cu"], ["assess", "--no-progress"]):
        res = subprocess.run(
            [sys.executable, "-m", "gpuport", *argv],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        assert not list(marks.iterdir()), (argv, sorted(p.name for p in marks.iterdir()))
        assert res.returncode in (0, 1), (argv, res.returncode, res.stderr[-2000:])
        assert "Traceback" not in res.stderr
