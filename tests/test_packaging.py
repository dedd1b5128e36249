"""gpuport as users get it: a wheel in a clean venv, the pre-commit hook, the GitHub Action.

These install packages from PyPI into throw-away virtual environments (as a user's machine
or a CI runner would), so each takes 15-40 s; they run in `make test` like every other test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path
from typing import Any

import yaml

import gpuport
from tests.render import library_shape

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "llm-service"
PIP = ("-m", "pip", "install", "--quiet", "--disable-pip-version-check")


def _run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` as a user's shell would: without this checkout on PYTHONPATH (where pip
    would find ``src/gpuport.egg-info`` and call gpuport installed already)."""
    kw.setdefault("timeout", 600)
    env = dict(kw.pop("env", None) or os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run(cmd, capture_output=True, text=True, check=False, env=env, **kw)


def _clean_venv(where: Path) -> Path:
    """A virtualenv that sees nothing of this one (no system or dev site-packages)."""
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    return where / "bin"


def _source_repo(dest: Path) -> Path:
    """A git repository of the files a user's clone has (what pre-commit and actions fetch)."""
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO)
    if listed.returncode == 0:
        names = [n for n in listed.stdout.split("\0") if n]
    else:  # an isolated copy without .git (.ci/run): every file but the ignored build outputs
        names = []
        for p in REPO.rglob("*"):
            parts = p.relative_to(REPO).parts
            if not p.is_file() or parts[0] in ("build", "dist", "out"):  # root folders only
                continue
            if {".venv", ".git", "__pycache__"} & set(parts) or any(
                part.endswith(("_cache", ".egg-info")) for part in parts
            ):
                continue
            names.append("/".join(parts))
    for name in names:
        src = REPO / name
        if name.startswith(("tests/", "benchmarks/", "examples/")) or not src.is_file():
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name)
    _git_commit(dest)
    return dest


def _git_commit(where: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "x"]):
        done = _run(cmd, cwd=where, env=env)
        assert done.returncode == 0, done.stderr


def test_wheel_and_sdist_install_into_a_clean_venv_and_run(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = _run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(REPO)],
        cwd=tmp_path,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    wheels = list(dist.glob("gpuport-*.whl"))
    sdists = list(dist.glob("gpuport-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    assert wheels[0].name.startswith(f"gpuport-{gpuport.__version__}-")

    # Every data file the code loads is in the wheel.
    shipped = set(zipfile.ZipFile(wheels[0]).namelist())
    src = REPO / "src"
    for pattern in ("gpuport/knowledge/*.toml", "gpuport/knowledge/*.json", "gpuport/**/*.j2"):
        for path in src.glob(pattern):
            assert str(path.relative_to(src)) in shipped, f"{path.name} missing from the wheel"
    assert any(n.endswith("licenses/LICENSE") for n in shipped)
    assert any(n.endswith("hipify-tables/LICENSE.txt") for n in shipped)
    # Every rule family ships; the rule fixtures beside them (sample project code) do not.
    for family in ("deps", "python", "native", "build", "containers", "environment"):
        assert f"gpuport/scan/rules/{family}/checker.py" in shipped or family == "environment"
        assert f"gpuport/scan/rules/{family}/__init__.py" in shipped
    assert not [n for n in shipped if "/fixtures/" in n]

    bin_dir = _clean_venv(tmp_path / "venv")
    installed = _run([str(bin_dir / "python"), *PIP, str(wheels[0]), "jinja2>=3.1"])
    assert installed.returncode == 0, installed.stderr[-2000:]
    gp = str(bin_dir / "gpuport")
    elsewhere = tmp_path / "cwd"  # not the checkout: only the installed package is importable
    elsewhere.mkdir()

    version = _run([gp, "--version"], cwd=elsewhere)
    assert version.returncode == 0 and version.stdout.strip() == f"gpuport {gpuport.__version__}"

    scan = _run([gp, "scan", str(EXAMPLE), "--format", "json", "--no-progress"], cwd=elsewhere)
    assert scan.returncode == 0, scan.stderr
    report = json.loads(scan.stdout)
    assert report["findings"], "the example's hazards were not found from the wheel"

    html = tmp_path / "assessment.html"
    assess = _run(
        [gp, "assess", str(EXAMPLE), "--format", "html", "--output", str(html), "--no-progress"],
        cwd=elsewhere,
    )
    assert assess.returncode == 0, assess.stderr
    assert "<html" in html.read_text(encoding="utf-8").lower()
    # torch is not needed for the main job: the wheel's base install did not bring it.
    assert not list((tmp_path / "venv").glob("lib/python*/site-packages/torch"))


def test_pre_commit_hook_through_try_repo(tmp_path: Path) -> None:
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    (hook,) = [h for h in hooks if h["id"] == "gpuport-scan"]
    assert "--fail-on" in hook["entry"] and hook["pass_filenames"] is False

    repo = _source_repo(tmp_path / "gpuport-repo")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    env.pop("PYTHONPATH", None)

    blocked = tmp_path / "cuda-project"
    shutil.copytree(EXAMPLE, blocked)
    _git_commit(blocked)
    run = [sys.executable, "-m", "pre_commit", "try-repo", str(repo), "gpuport-scan", "-a"]
    failed = _run(run, cwd=blocked, env=env)
    assert failed.returncode == 1, failed.stdout[-3000:] + failed.stderr[-3000:]
    assert "gpuport scan" in failed.stdout and "Failed" in failed.stdout
    # the findings are shown to the committer in the compact form: one line each
    assert re.search(r"^csrc/\S+\.cu:\d+:\d+: GP3\d\d blocker ", failed.stdout, re.MULTILINE)
    assert "gpuport scan: blocked" in failed.stdout

    clean = tmp_path / "clean-project"
    (clean / "pkg").mkdir(parents=True)
    (clean / "pkg" / "__init__.py").write_text("import torch\n\nx = torch.ones(2)\n")
    _git_commit(clean)
    passed = _run(run, cwd=clean, env=env)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    assert "Passed" in passed.stdout

    # a library whose core is clean passes, though docker/ and examples/ are CUDA-only
    # (issue 29: the gate means what the verdict means)
    library = library_shape.build(tmp_path / "library", clean_core=True, files=40)
    _git_commit(library)
    assert library_shape.scope_blockers(library) >= 3  # what the old hook failed on
    passed = _run(run, cwd=library, env=env)
    assert passed.returncode == 0, passed.stdout[-3000:] + passed.stderr[-3000:]
    assert "Passed" in passed.stdout


_EXPR = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


def _expand(text: str, ctx: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        key = m.group(1)
        assert key in ctx, f"action.yml uses an expression this test does not model: {key}"
        return ctx[key]

    return _EXPR.sub(one, text)


def _run_step(step: dict[str, Any], ctx: dict[str, str], env: dict[str, str], cwd: Path) -> int:
    assert step.get("shell") == "bash"
    step_env = {k: _expand(str(v), ctx) for k, v in (step.get("env") or {}).items()}
    done = _run(["bash", "-e", "-c", _expand(step["run"], ctx)], cwd=cwd, env={**env, **step_env})
    ctx["_log"] = ctx.get("_log", "") + done.stdout + done.stderr
    return done.returncode


def test_github_action_steps_run_as_a_script(tmp_path: Path) -> None:
    action = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    uses = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
    assert set(uses) == {"actions/setup-python", "github/codeql-action/upload-sarif"}
    assert uses["github/codeql-action/upload-sarif"]["with"]["sarif_file"] == (
        "${{ inputs.sarif-file }}"
    )

    action_path = _source_repo(tmp_path / "action")
    workspace = tmp_path / "workspace"
    shutil.copytree(EXAMPLE, workspace)
    bin_dir = _clean_venv(tmp_path / "runner-python")  # what setup-python puts on PATH
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"

    logs: dict[str, str] = {}

    def run_all(fail_on: str) -> tuple[int, dict[str, str]]:
        out_file = tmp_path / f"github_output_{fail_on}"
        out_file.write_text("")
        ctx = {f"inputs.{k}": str(v.get("default", "")) for k, v in action["inputs"].items()}
        ctx["inputs.fail-on"] = fail_on
        ctx["github.action_path"] = str(action_path)
        outputs: dict[str, str] = {}
        for step in steps:
            if "uses" in step:
                continue
            ctx.update({f"steps.scan.outputs.{k}": v for k, v in outputs.items()})
            code = _run_step(step, ctx, {**env, "GITHUB_OUTPUT": str(out_file)}, workspace)
            for line in out_file.read_text().splitlines():
                key, _, value = line.partition("=")
                outputs[key] = value
            logs[fail_on] = ctx.get("_log", "")
            if code:
                return code, outputs
        return 0, outputs

    code, outputs = run_all("never")
    assert code == 0
    sarif = json.loads((workspace / outputs["sarif-file"]).read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"]
    assert outputs["exit-code"] == "0"

    # the log holds the compact form: one line per finding, the verdict last
    assert re.search(r"^csrc/\S+\.cu:\d+:\d+: GP3\d\d blocker ", logs["never"], re.MULTILINE)
    assert "gpuport scan: blocked" in logs["never"]

    code, outputs = run_all("blocker")
    assert outputs["exit-code"] == "1"  # the scan step itself passed, so the upload still runs
    assert code == 1  # and the last step fails the job
    assert (workspace / outputs["sarif-file"]).is_file()  # written before the job fails
