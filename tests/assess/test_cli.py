"""``gpuport assess`` end to end: formats, exit codes, attachments, speed, no torch, no writes."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuport.models import EnvFingerprint
from gpuport.validate.model import (
    Metrics,
    NumericSettings,
    ParityReport,
    Row,
    Side,
    Status,
    Tolerance,
    Verdict,
)
from tests.assess.conftest import BLOCKED, MINOR, PORTABLE, RUNNER, run_gpuport
from tests.conftest import EXAMPLE, REPO

BUDGET_S = 10.0  # the limit for the example without benchmarks
HANG_GUARD_S = 60.0


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
    }


def test_example_end_to_end_under_ten_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    res, elapsed = run_gpuport(
        "assess",
        "examples/llm-service",
        "--format",
        "json",
        "--no-progress",
        timeout=HANG_GUARD_S,
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["verdict"] == "blocked" and data["kind"] == "gpuport.assess"
    assert "gpuport assess: blocked" in res.err
    with capsys.disabled():
        print(f"\n[assess] examples/llm-service in {elapsed:.2f} s (fresh interpreter)")
    assert elapsed < BUDGET_S, f"took {elapsed:.1f} s"


def test_assess_never_imports_torch() -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from gpuport.assess import assess, load_settings\n"
        "from gpuport.render import assess_html, assess_markdown, assess_terminal\n"
        "a = assess(load_settings(Path('examples/llm-service')))\n"
        "assess_html.render(a); assess_markdown.render(a)\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_make_demo_command_writes_the_html_report(tmp_path: Path) -> None:
    """The exact command of ``make demo`` (from ``make -n``), with the report sent to tmp."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    dry = subprocess.run(
        ["make", "-n", "--no-print-directory", "demo"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = [
        ln
        for ln in dry.stdout.splitlines()
        if ln.strip() and shlex.split(ln)[0].endswith("/gpuport") and " assess " in ln
    ]
    assert len(lines) == 1, dry.stdout
    args = shlex.split(lines[0])
    assert args[0].endswith("gpuport") and args[1:3] == ["assess", "examples/llm-service"]
    i = args.index("--output")
    assert args[i + 1] == "build/assessment.html"
    assert args[args.index("--format") + 1] == "html"
    out = tmp_path / "assessment.html"
    args[i + 1] = str(out)
    res, _ = run_gpuport(*args[1:], timeout=HANG_GUARD_S)
    assert res.code == 0, res.err
    assert f"report written to {out}" in res.err
    assert '<section id="summary">' in out.read_text()
    assert "build/assessment.html" in dry.stdout.split(lines[0], 1)[1]  # then says where


def test_no_path_is_the_current_folder_never_the_example(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 29: `gpuport assess` inside a user's repository assessed the bundled example
    (and `--fail-on blocked` then failed their CI on it)."""
    project = tmp_path / "mine"
    shutil.copytree(PORTABLE, project)
    monkeypatch.chdir(project)
    res = cli("assess", "--format", "json", "--no-progress", "--fail-on", "blocked")
    assert res.code == 0, res.err
    report = json.loads(res.out)
    assert report["project"] == "."
    (where,) = [x for x in report["assumptions"] if x["name"] == "project"]
    assert where["origin"] == "default" and where["value"] == str(project)
    assert "no PATH given: the current folder" in where["detail"]
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    res = cli("assess", "--no-progress")
    assert res.code == 2 and "nothing to assess" in res.err


@pytest.mark.parametrize(
    ("project", "fail_on", "code"),
    [
        (BLOCKED, "blocked", 1),
        (BLOCKED, "never", 0),
        (MINOR, "minor", 1),
        (MINOR, "major", 0),
        (PORTABLE, "minor", 0),
    ],
)
def test_fail_on(cli: Any, project: Path, fail_on: str, code: int) -> None:
    res = cli("assess", str(project), "--fail-on", fail_on, "--format", "json", "--no-progress")
    assert res.code == code, res.err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--format", "pdf"], "--format must be one of"),
        (["--run-bench", "huge"], "--run-bench takes quick or full"),
        (["--fail-on", "sometimes"], "--fail-on must be one of"),
        (["--context", "0"], "--context must be a positive integer"),
        (["--gpus", "nonexistent"], "unknown GPU"),
    ],
)
def test_usage_errors_exit_2(cli: Any, args: list[str], needle: str) -> None:
    res = cli("assess", str(PORTABLE), *args)
    assert res.code == 2
    assert needle in res.err and "Traceback" not in res.err


def test_bad_settings_file_exits_2_with_one_line(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "gpuport.toml").write_text("colour = 'blue'\n")
    res = cli("assess", str(tmp_path))
    assert res.code == 2
    assert "unknown setting 'colour'; valid settings: targets, gpus, model" in res.err
    res = cli("assess", str(tmp_path / "missing"))
    assert res.code == 2 and "does not exist" in res.err


def test_a_report_to_a_file_prints_one_line(cli: Any, tmp_path: Path) -> None:
    """Issue 29: `assess -o FILE` printed the whole terminal report to stderr."""
    out = tmp_path / "report.md"
    res = cli("assess", str(BLOCKED), "--format", "md", "--output", str(out), "--no-progress")
    assert res.code == 0, res.err
    assert out.read_text().startswith("# gpuport assess:")
    assert res.err.startswith("gpuport assess: blocked (") and res.err.count("\n") == 1
    assert f"report written to {out}" in res.err
    assert res.out == ""


def test_terminal_view(cli: Any) -> None:
    res = cli("assess", str(BLOCKED), "--no-progress")
    assert res.code == 0, res.err
    for text in (
        "BLOCKED",
        "Conclusions",
        "tensorrt-llm has no ROCm build",
        "scan:",
        "hipify:",
        "cost: no model declared; pass --model",
        "doctor: not run",
    ):
        assert text in res.out, text


def test_flags_override_and_report_their_origin(cli: Any) -> None:
    res = cli(
        "assess",
        str(PORTABLE),
        "--model",
        "llama-3-8b",
        "--gpus",
        "mi300x,h100-sxm",
        "--context",
        "4096",
        "--format",
        "json",
        "--no-progress",
    )
    assert res.code == 0, res.err
    settings = {s["name"]: s for s in json.loads(res.out)["settings"]}
    assert settings["model"]["value"] == ["llama-3-8b"] and settings["model"]["origin"] == "flag"
    assert settings["concurrency"]["origin"] == "pyproject.toml"


def _parity(tmp_path: Path, wrong: bool) -> Path:
    env = EnvFingerprint.collect()
    settings = NumericSettings(device="cuda:0", backend="rocm", torch="2.4", dtype_default="f32")
    status = Status.WRONG if wrong else Status.SAME
    report = ParityReport(
        mode="check",
        model_ref="models.py:build",
        a=Side(name="A", env=dataclasses.replace(env, gpu_name="H100"), settings=settings),
        b=Side(name="B", env=dataclasses.replace(env, gpu_name="MI300X"), settings=settings),
        rows=[
            Row(
                order=0,
                path="layers.3.mlp",
                op="Linear",
                dtype="bfloat16",
                shape=[2, 4],
                numel=8,
                status=status,
                # a row judged same has its metrics (a report with a bare `same` is refused)
                metrics=None if wrong else Metrics(numel=8, max_abs=0.0, mean_abs=0.0, max_rel=0.0),
                tolerance=None
                if wrong
                else Tolerance(atol=1e-5, rtol=1e-3, op_class="matmul", provenance="test"),
            ),
        ],
        first_divergence="layers.3.mlp" if wrong else None,
        counts={status: 1},
        verdict=Verdict.WRONG if wrong else Verdict.SAME,
        verdict_reason="layers.3.mlp is further from float64 than A" if wrong else "all same",
    )
    path = tmp_path / ("wrong.json" if wrong else "same.json")
    path.write_text(report.model_dump_json())
    return path


def test_validate_report_that_says_wrong_holds_traffic(cli: Any, tmp_path: Path) -> None:
    wrong = _parity(tmp_path, wrong=True)
    res = cli(
        "assess", str(PORTABLE), "--validate", str(wrong), "--format", "json", "--no-progress"
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["verdict"] == "major-work"
    assert data["validate"]["reports"][0]["wrong"] == ["layers.3.mlp"]
    titles = [c["title"] for c in data["conclusions"]]
    assert "Do not move traffic yet: module layers.3.mlp is wrong" in titles
    same = _parity(tmp_path, wrong=False)
    res = cli("assess", str(PORTABLE), "--validate", str(same), "--format", "json", "--no-progress")
    assert json.loads(res.out)["verdict"] == "ready"


def test_validate_file_that_is_not_a_report_exits_2(cli: Any, tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"kind": "gpuport.scan"}')
    res = cli("assess", str(PORTABLE), "--validate", str(bad))
    assert res.code == 2 and "is not a gpuport.validate file" in res.err


def test_bench_runs_are_attached_and_compared(cli: Any) -> None:
    runs = REPO / "examples" / "bench"
    res = cli(
        "assess",
        str(PORTABLE),
        "--bench",
        str(runs / "cpu-1-thread.json"),
        "--bench",
        str(runs / "cpu-2-threads.json"),
        "--format",
        "json",
        "--no-progress",
    )
    assert res.code == 0, res.err
    bench = json.loads(res.out)["bench"]
    assert len(bench["runs"]) == 2 and bench["comparison"]["rows"]
    assert any(c["id"] == "bench-ratio-1" for c in json.loads(res.out)["conclusions"])


def test_doctor_is_off_by_default_and_replays_a_snapshot(cli: Any) -> None:
    res = cli("assess", str(PORTABLE), "--format", "json", "--no-progress")
    assert json.loads(res.out)["doctor"]["status"] == "not-run"
    snapshots = sorted((REPO / "tests" / "doctor" / "snapshots").glob("*.json"))
    if not snapshots:
        pytest.skip("no doctor snapshots to replay")
    seen = set()
    for snap in snapshots:
        res = cli(
            "assess",
            str(PORTABLE),
            "--doctor-snapshot",
            str(snap),
            "--format",
            "json",
            "--no-progress",
        )
        assert res.code == 0, (snap.name, res.err)
        doctor = json.loads(res.out)["doctor"]
        assert doctor["replayed"] is True and doctor["summary"]
        seen.add(doctor["status"])
        if doctor["status"] == "problems":
            ids = [c["id"] for c in json.loads(res.out)["conclusions"]]
            assert "machine-health" in ids or all(p["status"] == "warn" for p in doctor["problems"])
    assert "problems" in seen or "ok" in seen


def _need_hipcc() -> None:
    if shutil.which("hipcc") is None:
        if os.environ.get("GPUPORT_REQUIRE_HIPCC") == "1":
            pytest.fail("GPUPORT_REQUIRE_HIPCC=1 but hipcc is not on PATH")
        pytest.skip("hipcc not on PATH (install Debian's hipcc; CI sets GPUPORT_REQUIRE_HIPCC=1)")


@pytest.mark.hipcc
def test_hipify_check_compiles_without_writing_into_the_project(cli: Any) -> None:
    _need_hipcc()
    before = _tree(BLOCKED)
    res = cli("assess", str(BLOCKED), "--hipify-check", "--format", "json", "--no-progress")
    assert res.code == 0, res.err
    assert _tree(BLOCKED) == before
    hip = json.loads(res.out)["hipify"]
    assert hip["checked"] is True and "hipcc" in hip["check_note"]
    (outcome,) = hip["compile"]
    assert outcome["path"] == "csrc/rsqrt.cu" and outcome["status"] == "failed"
    ids = [c["id"] for c in json.loads(res.out)["conclusions"]]
    assert "hipify-compile" in ids


def test_hipify_check_without_hipcc_is_an_environment_problem(
    cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    res = cli("assess", str(BLOCKED), "--hipify-check", "--no-progress")
    assert res.code == 3 and "needs hipcc" in res.err


def test_a_dry_run_never_writes_inside_the_project(cli: Any) -> None:
    before = _tree(EXAMPLE)
    res = cli("assess", str(EXAMPLE), "--format", "json", "--no-progress")
    assert res.code == 0
    assert _tree(EXAMPLE) == before


def test_runner_matches_the_real_entry_point() -> None:
    assert re.search(r"main\(sys\.argv\[1:\]\)", RUNNER)


def test_model_config_on_disk_is_priced(cli: Any, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "_name_or_path": "acme/house-model-8b",
                "model_type": "llama",
                "hidden_size": 4096,
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "intermediate_size": 14336,
                "vocab_size": 128256,
                "max_position_embeddings": 131072,
            }
        )
    )
    res = cli(
        "assess", str(BLOCKED), "--model-config", str(config), "--format", "json", "--no-progress"
    )
    assert res.code == 0, res.err
    data = json.loads(res.out)
    assert data["cost"]["status"] == "ok"
    assert data["cost"]["reports"][0]["model"]["name"] == "acme/house-model-8b"
    assert any(c["id"] == "price-house-model-8b" for c in data["conclusions"])


@pytest.mark.slow
@pytest.mark.torch
def test_run_bench_quick_attaches_and_keeps_the_run(cli: Any) -> None:
    from gpuport.bench.history import History

    res = cli("assess", str(PORTABLE), "--run-bench", "quick", "--format", "json", "--no-progress")
    assert res.code == 0, res.err
    (run,) = json.loads(res.out)["bench"]["runs"]
    assert run["suite"] == "quick" and run["cases_ok"] > 0
    assert run["source"].startswith("run now (history id ")
    assert History().get(run["id"]).id == run["id"]


def test_an_unwritable_output_is_refused_before_any_work(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import gpuport.assess

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("the assessment ran although its report could not be written")

    monkeypatch.setattr(gpuport.assess, "assess", must_not_run)
    from gpuport.cli.app import main

    with pytest.raises(SystemExit) as info:
        main(["assess", str(EXAMPLE), "--output", str(tmp_path / "no" / "report.html")])
    assert info.value.code == 2
