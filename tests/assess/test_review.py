"""Regression tests for the review of ``gpuport assess``: each test fails without its fix.

Grouped as the review listed them: wrong verdicts or decisions (P1), settings and the command
line (P2), numbers and rendering (P3), then the smaller points.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from gpuport.assess import (
    Readiness,
    assess,
    load_settings,
    sources,
    sources_evidence,
    sources_hipify,
    verdict,
)
from gpuport.assess.config import Settings
from gpuport.assess.model import (
    CompileOutcome,
    Conclusion,
    DoctorProblem,
    DoctorSection,
    HipifySection,
    ValidateSection,
    ValidateSummary,
)
from gpuport.models import GpuportError, Severity
from gpuport.render import assess_html, assess_markdown, assess_terminal
from gpuport.render.svg import Bar, bar_chart
from tests.assess.conftest import BLOCKED, MINOR, PORTABLE, run_gpuport
from tests.assess.test_cli import _parity
from tests.assess.test_criteria import facts
from tests.conftest import EXAMPLE, REPO

WARP_KERNEL = """#include <cuda_runtime.h>

__global__ void warp_sum(float* out, const float* in) {
    float v = in[threadIdx.x];
    for (int offset = warpSize / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffffffffffull, v, offset);
    }
    if (threadIdx.x == 0) out[0] = v;
}
"""
PTX_KERNEL = """#include <cuda_runtime.h>

__global__ void k(float* y, const float* x) {
    asm("rsqrt.approx.f32 %0, %1;" : "=f"(y[0]) : "f"(x[0]));
}
"""
#: A 32-lane ballot mask: a wave-32 hazard (GP3xx) the scan reports as major or worse.
WAVE_KERNEL = """__global__ void k(unsigned* out, int x) {
    unsigned mask = __ballot_sync(0xffffffff, x > 0);
    out[threadIdx.x & 31] = mask;
}
"""


def _project(root: Path, files: dict[str, str | bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes):
            path.write_bytes(body)
        else:
            path.write_text(body, encoding="utf-8")
    return root


def _json(res: Any) -> dict[str, Any]:
    assert res.code == 0, res.err
    data: dict[str, Any] = json.loads(res.out)
    return data


# ===================================================================================== P1


def test_conclusions_rest_on_every_finding_not_only_the_kept_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """P1.1: the report keeps the first findings; the criteria must still see all of them."""
    full = assess(load_settings(EXAMPLE))
    monkeypatch.setattr(sources, "FINDINGS_KEPT", 2)
    cut = assess(load_settings(EXAMPLE))
    assert len(cut.scan.findings) == 2
    assert cut.scan.findings_above_info == full.scan.findings_above_info > 2
    assert cut.scan.counts == full.scan.counts
    assert [c.id for c in cut.conclusions] == [c.id for c in full.conclusions]
    assert [c.title for c in cut.conclusions] == [c.title for c in full.conclusions]
    assert cut.verdict_reason == full.verdict_reason and cut.decision == full.decision
    for c_cut, c_full in zip(cut.conclusions, full.conclusions, strict=True):
        assert len(c_cut.evidence) == len(c_full.evidence)
        for e in c_cut.evidence:  # past the kept rows a link goes to the section
            if e.kind == "finding" and e.anchor.startswith("finding-"):
                assert int(e.anchor.removeprefix("finding-")) <= 2


def test_validate_lift_gets_its_own_decision_without_zero_days(cli: Any, tmp_path: Path) -> None:
    """P1.2: `assess portable --validate wrong.json` said "Portable with real work: 0-0"."""
    data = _json(
        cli(
            "assess",
            str(PORTABLE),
            "--validate",
            str(_parity(tmp_path, wrong=True)),
            "--format",
            "json",
            "--no-progress",
        )
    )
    assert data["verdict"] == "major-work"
    decision = data["decision"]
    assert decision.startswith("Do not move traffic: module layers.3.mlp computes wrong numbers")
    assert "0-0" not in decision and "0–0" not in decision and "Portable" not in decision
    # the reason names the lift once, not again as a cause
    assert data["verdict_reason"] == (
        "validate: layers.3.mlp computes wrong numbers (scan alone: ready)"
    )


def test_compile_failure_lift_says_the_translation_does_not_compile() -> None:
    """P1.2: a lift by hipcc refusing the translation, with nothing else listed."""
    failed = HipifySection(
        ran=True, compile=[CompileOutcome(path="k.cu", status="failed", error="error: x")]
    )
    f = facts(hipify=failed)
    level, reasons = verdict.readiness(f)
    found = verdict.conclusions(f)
    work = verdict.effort(f)
    text = verdict.decision(level, work, found, f)
    assert level is Readiness.MAJOR_WORK
    assert text.startswith("The translation does not compile: hipcc refuses 1 translated file")
    assert "k.cu" in text and "engineer-days" not in text
    assert text.endswith("Validate numerics before moving traffic.")  # the reminder stays
    reason = verdict.verdict_reason(level, reasons, found, lifted=True)
    assert reason == "1 translated file hipcc refuses"


def _fake_hipcc(monkeypatch: pytest.MonkeyPatch, local: str, refuses: tuple[str, ...]) -> None:
    """hipcc on PATH at HIP ``local``, refusing any text that contains one of ``refuses``."""
    import gpuport.hipify.run as hiprun
    from gpuport.hipify.run import CompileResult

    def compile_check(text: str, name: str, **kw: Any) -> CompileResult:
        bad = next((r for r in refuses if r in text), None)
        error = f"{name}:1: error: {bad}" if bad else None
        return CompileResult(ok=bad is None, offload_archs=list(kw["offload_archs"]), error=error)

    real_which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda n, **k: "/fake/hipcc" if n == "hipcc" else real_which(n, **k)
    )
    monkeypatch.setattr(hiprun, "compile_check", compile_check)
    monkeypatch.setattr(hiprun, "detect_hip_version", lambda **k: local)
    monkeypatch.setattr(sources_hipify, "_compile_arch", lambda hipcc, target: target)


def test_translation_is_for_the_target_hip_whether_or_not_it_is_compiled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """P1.3: with --hipify-check the dry run used to translate for the local (older) HIP."""
    root = _project(tmp_path / "p", {"csrc/reduce.cu": WARP_KERNEL})
    plain, _ = sources_hipify.run_hipify(load_settings(root), set(), False)
    _fake_hipcc(monkeypatch, "5.2", refuses=("__shfl_down_sync",))
    checked, _ = sources_hipify.run_hipify(load_settings(root), set(), True)
    assert plain.hip_version == checked.hip_version == "6.4"
    assert plain.replacements == checked.replacements
    assert checked.local_hip_version == "5.2"
    (outcome,) = checked.compile
    # the 6.4 translation keeps the mask; HIP 5.2 has no __shfl_down_sync: not the port's fault
    assert outcome.status == "inconclusive" and "HIP 5.2" in (outcome.error or "")
    assert "older than the HIP 6.4" in checked.check_note


def test_a_failure_that_does_not_depend_on_the_hip_version_stays_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path / "p", {"csrc/k.cu": PTX_KERNEL})
    _fake_hipcc(monkeypatch, "5.2", refuses=("asm(",))
    section, _ = sources_hipify.run_hipify(load_settings(root), set(), True)
    (outcome,) = section.compile
    assert outcome.status == "failed" and "asm(" in (outcome.error or "")


def test_a_set_hip_version_is_the_one_translated_for(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", {"csrc/reduce.cu": WARP_KERNEL})
    section, _ = sources_hipify.run_hipify(
        load_settings(root, {"hip_version": "6.1"}), set(), False
    )
    assert section.hip_version == "6.1"
    with pytest.raises(GpuportError, match="HIP version"):
        load_settings(root, {"hip_version": "six"})


@pytest.mark.hipcc
def test_real_hipcc_older_than_the_target_makes_version_failures_inconclusive(
    cli: Any, tmp_path: Path
) -> None:
    """With Debian's hipcc (HIP 5.2): the mask kernel is inconclusive, inline PTX fails."""
    if shutil.which("hipcc") is None:
        pytest.skip("hipcc not on PATH")
    from gpuport.hipify.run import detect_hip_version

    local = detect_hip_version()
    if local is None or not sources_hipify._older(local, "6.4"):
        pytest.skip(f"needs a hipcc older than HIP 6.4, not {local}")
    root = _project(tmp_path / "p", {"csrc/reduce.cu": WARP_KERNEL, "csrc/k.cu": PTX_KERNEL})
    data = _json(
        cli(
            "assess", str(root), "--hipify-check", "--hip-version", "6.4", "--format", "json",
            "--no-progress",
        )
    )  # fmt: skip
    status = {c["path"]: c["status"] for c in data["hipify"]["compile"]}
    assert status == {"csrc/reduce.cu": "inconclusive", "csrc/k.cu": "failed"}
    assert data["hipify"]["hip_version"] == "6.4"


def test_hipify_honours_exclude(tmp_path: Path) -> None:
    """P1.4: excluded CUDA files were translated and their unsupported APIs counted."""
    root = _project(
        tmp_path / "p",
        {"csrc/reduce.cu": WARP_KERNEL, "third_party_x/k.cu": PTX_KERNEL + "cudaFooBar();\n"},
    )
    section, _ = sources_hipify.run_hipify(
        load_settings(root, {"exclude": ["third_party_x/"]}), set(), False
    )
    assert section.files == 1
    a = assess(load_settings(root, {"exclude": ["third_party_x/"]}))
    assert a.hipify.files == 1
    assert all(not u.path.startswith("third_party_x") for u in a.hipify.unsupported)
    assert all(not f.location.path.startswith("third_party_x") for f in a.scan.findings)


def test_cuda_file_the_scan_cannot_read_still_counts(tmp_path: Path) -> None:
    """P1.5: a CUDA file that is not UTF-8 was translated by hipify and ignored by the verdict."""
    latin1 = ("// caf\xe9\n" + WAVE_KERNEL).encode("latin-1")
    root = _project(tmp_path / "p", {"k.cu": latin1, "requirements.txt": "numpy\n"})
    a = assess(load_settings(root))
    assert a.scan.unread and a.scan.unread[0].startswith("k.cu: not valid UTF-8")
    assert a.scan.from_hipify > 0 and a.hipify.unread_hazards == a.scan.from_hipify
    assert any(f.location.path == "k.cu" for f in a.scan.findings)
    assert a.verdict is not Readiness.READY
    assert a.effort.hours > 0
    ids = [c.id for c in a.conclusions]
    assert "unread-sources" in ids and "portable-stack" not in ids
    assert any("counted" in n for n in a.notes)


def test_python_file_the_scan_cannot_read_blocks_ready(tmp_path: Path) -> None:
    """P1.5: an unreadable source file makes the verdict minor work at least, with its name."""
    root = _project(
        tmp_path / "p", {"ok.py": "import torch\n", "bad.py": b"x = '\xff\xfe'\nimport pynvml\n"}
    )
    a = assess(load_settings(root))
    assert a.verdict is Readiness.MINOR_WORK
    assert a.verdict_reason.startswith("1 source file could not be read: bad.py")
    unread = next(c for c in a.conclusions if c.id == "unread-sources")
    assert unread.title == "1 source file could not be read"
    assert unread.severity is Severity.MINOR and unread.evidence[0].anchor == "skipped-files"
    assert "portable-stack" not in [c.id for c in a.conclusions]
    assert 'id="skipped-files"' in assess_html.render(a)


@pytest.mark.parametrize("files", [{}, {"README.md": "# notes\n", "data.bin": "x"}])
def test_nothing_to_assess_is_an_input_error(
    cli: Any, tmp_path: Path, files: dict[str, str]
) -> None:
    """P1.6: an empty folder was READY and "favours ROCm"."""
    root = _project(tmp_path / "empty", dict(files))
    with pytest.raises(GpuportError, match="nothing to assess"):
        assess(load_settings(root))
    res = cli("assess", str(root), "--no-progress")
    assert res.code == 2
    assert f"nothing to assess in {root}: no source, dependency, build or container files" in (
        res.err
    )
    assert res.out == "" and "Traceback" not in res.err


# ===================================================================================== P2


def test_gpus_flag_drops_file_prices_of_gpus_no_longer_listed(cli: Any) -> None:
    """P2.7: `--gpus mi325x` on a project pricing h100-sxm and mi300x exited 2."""
    s = load_settings(PORTABLE, {"gpus": ["mi325x"]})
    assert s.gpus == ("mi325x",) and s.prices == ()
    assert any("h100-sxm, mi300x dropped" in n for n in s.notes)
    s = load_settings(PORTABLE, {"gpus": ["mi300x,mi325x"]})
    assert dict(s.prices) == {"mi300x": 1.85} and s.origin("prices") == "pyproject.toml"
    data = _json(cli("assess", str(PORTABLE), "--gpus", "mi325x", "--format", "json"))
    assert [r["gpu"] for r in data["cost"]["reports"][0]["records"]] == ["mi325x"]
    with pytest.raises(GpuportError, match="not among gpus"):  # a price flag still must match
        load_settings(PORTABLE, {"gpus": ["mi325x"], "prices": ["h100-sxm=2"]})


def test_model_config_flag_replaces_the_files_model(cli: Any, tmp_path: Path) -> None:
    """P2.7: `--model-config X` with `model` in the settings exited 2."""
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "_name_or_path": "acme/house-8b",
                "model_type": "llama",
                "hidden_size": 4096,
                "num_hidden_layers": 32,
                "num_attention_heads": 32,
                "num_key_value_heads": 8,
                "intermediate_size": 14336,
                "vocab_size": 128256,
            }
        )
    )
    s = load_settings(PORTABLE, {"model_config": str(config)})
    assert s.models == () and s.model_config == config
    assert any("--model-config replaces `model`" in n for n in s.notes)
    data = _json(cli("assess", str(PORTABLE), "--model-config", str(config), "--format", "json"))
    assert [r["model"]["name"] for r in data["cost"]["reports"]] == ["acme/house-8b"]
    back = load_settings(PORTABLE, {"model": ["llama-3-8b"]})
    assert back.models == ("llama-3-8b",)


def test_model_and_model_config_in_one_file_is_still_an_error(tmp_path: Path) -> None:
    root = _project(
        tmp_path / "p", {"gpuport.toml": 'model = "llama-3-8b"\nmodel_config = "c.json"\n'}
    )
    with pytest.raises(GpuportError, match="not both"):
        load_settings(root)


def test_unparseable_pyproject_is_a_note_not_a_failure(tmp_path: Path) -> None:
    """P2.8: a broken pyproject.toml aborted the assessment even when gpuport.toml was used."""
    broken = "[project\nname = \n"
    with_own = _project(
        tmp_path / "a",
        {
            "pyproject.toml": broken,
            "gpuport.toml": 'model = "llama-3-8b"\n',
            "m.py": "import torch\n",
        },
    )
    s = load_settings(with_own)
    assert s.models == ("llama-3-8b",) and s.notes == ()
    alone = _project(tmp_path / "b", {"pyproject.toml": broken, "m.py": "import torch\n"})
    s = load_settings(alone)
    assert s.config_file is None
    (note,) = s.notes
    assert "pyproject.toml is not valid TOML" in note and "not used" in note
    a = assess(s)
    assert note in a.notes
    both = _project(
        tmp_path / "c",
        {"pyproject.toml": "[tool.gpuport]\ncontext = 4096\n", "gpuport.toml": "dtype = 'fp8'\n"},
    )
    assert any("ignored" in n for n in load_settings(both).notes)


def test_short_context_scales_the_default_request(cli: Any, tmp_path: Path) -> None:
    """P2.9: --context below 2048 could not be used at all."""
    root = _project(tmp_path / "p", {"m.py": "import torch\n"})
    s = load_settings(root, {"context": 1024, "model": ["llama-3-8b"]})
    assert (s.input_tokens, s.output_tokens) == (512, 512)
    assert any("shorter than the default request" in n for n in s.notes)
    assert s.origin("input_tokens") == "default"
    data = _json(
        cli("assess", str(root), "--context", "512", "--model", "llama-3-8b", "--format", "json")
    )
    assert data["cost"]["status"] == "ok"
    rows = {row["name"]: row for row in data["settings"]}
    assert rows["input_tokens"]["value"] == 256 and "scaled" in rows["input_tokens"]["detail"]
    given = load_settings(root, {"context": 1500})
    assert given.input_tokens + given.output_tokens == 1500
    with pytest.raises(GpuportError, match="leaves no room"):
        load_settings(root, {"context": 1})
    odd = _project(tmp_path / "q", {"gpuport.toml": "input_tokens = 1000\n", "m.py": "x\n"})
    s = load_settings(odd, {"context": 1200})
    assert (s.input_tokens, s.output_tokens) == (1000, 200)  # only the default one shrinks


def test_no_path_inside_a_project_assesses_it(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """P2.10: `gpuport assess` inside a project reported on the bundled example."""
    root = _project(tmp_path / "p", {"gpuport.toml": 'dtype = "bf16"\n', "m.py": "import torch\n"})
    monkeypatch.chdir(root)
    data = _json(cli("assess", "--format", "json", "--no-progress"))
    assert data["project"] == "." and "bundled example" not in json.dumps(data)
    pyproject = _project(
        tmp_path / "q", {"pyproject.toml": "[tool.gpuport]\ncontext = 4096\n", "m.py": "x = 1\n"}
    )
    monkeypatch.chdir(pyproject)
    assert _json(cli("assess", "--format", "json", "--no-progress"))["project"] == "."


def test_no_path_outside_a_project_is_that_folder_not_the_example(tmp_path: Path) -> None:
    """Issue 29 replaced the fallback to the bundled example: no PATH is the current folder
    (the example is assessed only by name), and an empty folder is nothing to assess."""
    res, _ = run_gpuport("assess", "--format", "json", "--no-progress", cwd=tmp_path)
    assert res.code == 2
    assert "nothing to assess in ." in res.err and "llm-service" not in res.err


# ===================================================================================== P3


def test_counts_and_links_past_the_shown_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """P3.11: the reports counted the kept rows as "findings above info"; links to rows not
    rendered pointed nowhere."""
    monkeypatch.setattr(sources, "FINDINGS_KEPT", 3)
    monkeypatch.setattr(assess_html, "FINDINGS_SHOWN", 2)
    monkeypatch.setattr(assess_markdown, "TOP_FINDINGS", 2)
    a = assess(load_settings(EXAMPLE))
    n = a.scan.findings_above_info
    assert n > 3 and len(a.scan.findings) == 3
    html = assess_html.render(a)
    assert f"Findings ({n} above info," in html
    assert f"{n - 2} more above info (the JSON report carries the first 3)" in html
    rows = set(re.findall(r'<tr id="(finding-\d+)"', html))
    assert rows == {"finding-1", "finding-2"}
    for target in re.findall(r'href="#(finding-\d+)"', html):
        assert target in rows, target
    assert 'href="#findings"' in html
    text = assess_markdown.render(a)
    assert f"{n - 2} more above info (the JSON report carries the first 3)." in text
    assert f"{n} findings above info" in "\n".join(assess_terminal.section_lines(a))


def _numbers(c: Conclusion) -> tuple[float, float]:
    m = re.search(r"Needs > (\d+) GB", c.title)
    need = re.search(r"needs about (\d+) GB", c.statement)
    assert m and need, (c.title, c.statement)
    return float(m.group(1)), float(need.group(1))


def test_memory_title_agrees_with_its_statement(tmp_path: Path) -> None:
    """P3.12: "Needs > 80 GB per replica" over a statement that said "needs about 78 GB"."""
    from gpuport.assess import criteria_figures

    flags = {"model": "llama-3-70b", "dtype": "fp8", "gpus": "h100-sxm,mi300x", "concurrency": 2}
    settings = load_settings(tmp_path, flags)
    f = facts(settings=settings, cost=sources_evidence.run_cost(settings, []))
    (c,) = criteria_figures.memory_per_replica(f)
    threshold, need = _numbers(c)
    assert need > threshold, (c.title, c.statement)
    assert c.title.endswith("MI300X avoids tensor parallelism") and c.leans == "rocm"
    assert "usable per GPU" in c.statement


def test_a_model_that_fits_on_no_gpu_says_so(tmp_path: Path) -> None:
    from gpuport.assess import criteria_figures

    settings = load_settings(
        tmp_path, {"model": "llama-3-70b", "gpus": "h100-sxm", "context": 2**30}
    )
    f = facts(settings=settings, cost=sources_evidence.run_cost(settings, []))
    (c,) = criteria_figures.memory_per_replica(f)
    assert c.title == "Llama 3.1 70B fits on no candidate GPU"
    assert "no candidate holds it" in c.statement and c.leans == "neutral"
    assert [e.value for e in c.evidence] == ["never fits"]


def test_doctor_and_differing_numbers_are_not_causes_of_minor_work() -> None:
    """P3.13: machine health and "numbers differ" were listed as why the code is minor work."""
    differ = ValidateSection(
        reports=[
            ValidateSummary(
                file="p.json",
                model_ref=None,
                verdict="different",
                verdict_reason="r",
                first_divergence="head",
                counts={},
                different=["head"],
            )
        ]
    )
    doctor = DoctorSection(
        status="problems",
        problems=[DoctorProblem(rule_id="GP612", title="t", status="fail", fix="f")],
    )
    from tests.assess.test_criteria import finding

    f = facts(finding("GP216", "minor", "m.py"), validate=differ, doctor=doctor)
    f = type(f)(**{**f.__dict__, "scan": f.scan.model_copy(update={"verdict": "minor work"})})
    found = verdict.conclusions(f)
    assert {"machine-health", "numerics-1"} <= {c.id for c in found}
    level, reasons = verdict.readiness(f)
    reason = verdict.verdict_reason(level, reasons, found)
    assert "Python source" in reason
    assert "GPU stack" not in reason and "Numbers differ" not in reason


def test_svg_labels_show_control_and_bidi_characters() -> None:
    """P3.14: bidi and control characters went into the SVG charts raw."""
    svg = bar_chart(
        [Bar("evil\u202ename\x1b[31m\u200b.py", 2.0)], title="t\u2066", chart_id="c", unit="h"
    )
    for raw in ("\u202e", "\x1b", "\u200b", "\u2066"):
        assert raw not in svg
    assert "\\u202e" in svg and "\\x1b" in svg and "\\u200b" in svg and "\\u2066" in svg


# ============================================================================ lesser points


def test_grammar_of_counts_and_lists() -> None:
    from gpuport.assess import criteria

    one = HipifySection(ran=True, compile=[CompileOutcome(path="a.cu", status="failed")])
    (c,) = criteria.hipify_gaps(facts(hipify=one))
    assert c.title == "1 translated file does not compile for AMD"
    two = ValidateSection(
        reports=[
            ValidateSummary(
                file="p.json",
                model_ref=None,
                verdict="wrong",
                verdict_reason="r",
                first_divergence="a",
                counts={},
                wrong=["a", "b"],
            )
        ]
    )
    assert verdict.lifts(facts(validate=two)) == ["validate: a, b compute wrong numbers"]


def test_unsupported_api_lift_is_not_repeated_as_its_own_cause() -> None:
    from gpuport.assess.model import UnsupportedUse

    hip = HipifySection(
        ran=True,
        hip_version="6.4",
        unsupported=[UnsupportedUse(name="cudaFoo", path="a.cu", line=1, reason="r")],
        unsupported_counts={"cudaFoo": 1},
    )
    f = facts(hipify=hip)
    level, reasons = verdict.readiness(f)
    reason = verdict.verdict_reason(level, reasons, verdict.conclusions(f), lifted=True)
    assert reason == "1 use of CUDA APIs HIP 6.4 lacks"  # the HIP assumed, said (issue 29)


def test_a_lift_names_what_else_weighs_as_also_not_as_its_cause() -> None:
    """Issue 29 (Liger-Kernel): "127 uses of CUDA APIs HIP lacks: nvidia-cutlass has no ROCm
    build" read as if the package caused the missing APIs."""
    from gpuport.assess.model import UnsupportedUse
    from tests.assess.test_criteria import finding

    hip = HipifySection(
        ran=True,
        hip_version="5.2",
        unsupported=[UnsupportedUse(name="__syncwarp", path="a.cu", line=1, reason="r")],
        unsupported_counts={"__syncwarp": 1},
    )
    msg = "`cutlass` comes from nvidia-cutlass, which has no ROCm build: CUTLASS targets NVIDIA."
    f = facts(finding("GP201", "major", "pkg/ops.py", 3, msg), hipify=hip)
    level, reasons = verdict.readiness(f)
    reason = verdict.verdict_reason(level, reasons, verdict.conclusions(f), lifted=True)
    assert reason == "1 use of CUDA APIs HIP 5.2 lacks; also: nvidia-cutlass has no ROCm build"


def test_price_wording_when_an_amd_gpu_has_no_price(tmp_path: Path) -> None:
    from gpuport.assess import criteria_figures

    def price(gpus: str) -> Conclusion:
        settings = load_settings(tmp_path, {"model": "llama-3-8b", "gpus": gpus})
        f = facts(settings=settings, cost=sources_evidence.run_cost(settings, []))
        (c,) = criteria_figures.price_per_mtok(f)
        return c

    alone = price("h100-sxm,mi350x")  # MI350X has no catalog price
    assert "no AMD candidate has a price" in alone.statement
    assert "only one vendor" not in alone.statement
    assert "mi350x" in alone.recommendation and "--price" in alone.recommendation
    mixed = price("h100-sxm,mi300x,mi350x")
    assert "cheaper per million tokens" in mixed.title
    assert "Not priced: AMD Instinct MI350X" in mixed.statement


def test_price_basis_names_whose_prices(cli: Any) -> None:
    a = assess(load_settings(PORTABLE))
    c = next(c for c in a.conclusions if c.id.startswith("price-"))
    assert "your prices for H100 SXM5 80GB, MI300X, catalog for MI325X" in c.statement
    assert "your and catalog" not in c.statement


def test_html_days_match_the_other_formats(tmp_path: Path) -> None:
    a = assess(load_settings(BLOCKED))
    days = a.effort.days()
    assert re.fullmatch(r"[\d.]+–[\d.]+ engineer-days", days)
    html = assess_html.render(a)
    assert f"<h2>Effort: {days}</h2>" in html and f"<b>{days}</b>" in html
    assert not re.search(r"\d\.0–|–\d+\.0\b", html)  # "5.0–11.5" was the HTML's own format
    assert days in assess_markdown.render(a)
    ready = assess(load_settings(PORTABLE))
    assert ready.effort.days() == "no listed work"
    assert "0–0" not in assess_html.render(ready) and "0–0" not in assess_markdown.render(ready)


def test_severity_chart_units_and_the_zero_case() -> None:
    one = bar_chart(
        [Bar("major", 1.0)], title="t", chart_id="c", unit="findings", unit_one="finding"
    )
    assert "1 finding<" in one and "1 findings" not in one
    ready = assess(load_settings(PORTABLE))
    assert ready.scan.findings_above_info == 0
    html = assess_html.render(ready)
    chart = html[html.index('id="chart-severity"') :]
    chart = chart[: chart.index("</svg>")]
    assert "no findings" in chart and "1 findings" not in chart


def test_evidence_links_wrap() -> None:
    html = assess_html.render(assess(load_settings(MINOR)))
    assert re.search(r"\.evidence a \{[^}]*overflow-wrap:anywhere", html)


def test_settings_table_is_consistent(cli: Any) -> None:
    data = _json(cli("assess", str(MINOR), "--format", "json", "--no-progress"))
    rows = {r["name"]: r for r in data["settings"]}
    assert rows["prices"]["value"] == {}
    assert "model" in rows and "models" not in rows  # the settings-file key names
    assert set(rows) >= {"targets", "gpus", "hip_version", "doctor_snapshot"}
    assert rows["doctor_snapshot"] == {
        "name": "doctor_snapshot",
        "value": None,
        "origin": "default",
        "detail": "",
    }


def test_replayed_doctor_snapshot_speaks_of_the_target_machine(cli: Any) -> None:
    snapshots = sorted((REPO / "tests" / "doctor" / "snapshots").glob("*.json"))
    if not snapshots:
        pytest.skip("no doctor snapshots")
    for snap in snapshots:
        res = cli("assess", str(PORTABLE), "--doctor-snapshot", str(snap), "--format", "json")
        if res.code != 0:
            continue
        data = json.loads(res.out)
        assert data["doctor"]["message"].startswith("the target machine (snapshot ")
        row = next(r for r in data["settings"] if r["name"] == "doctor_snapshot")
        assert row["origin"] == "flag" and row["value"] == str(snap)
        for c in data["conclusions"]:
            if c["id"] == "machine-health":
                assert c["title"].startswith("The target machine's GPU stack")
                assert "this machine" not in c["recommendation"]
        return
    pytest.skip("no snapshot replayed")


def test_settings_errors_name_the_file_and_key(tmp_path: Path) -> None:
    root = _project(
        tmp_path / "p", {"pyproject.toml": "[tool.gpuport]\ncontext = 100000000000000000\n"}
    )
    with pytest.raises(GpuportError) as err:
        load_settings(root)
    text = str(err.value)
    assert f"{root / 'pyproject.toml'} [tool.gpuport]: `context` must be a positive integer" in text
    assert "--context" not in text
    both = _project(tmp_path / "q", {"gpuport.toml": 'target = "mi300x"\ntargets = ["gfx90a"]\n'})
    with pytest.raises(GpuportError, match="'target' and 'targets' set the same thing"):
        load_settings(both)


def test_hipify_check_flag_without_hipcc_and_without_cuda_sources(
    cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """As documented: exit 3 only when there is CUDA/C++ to compile."""
    monkeypatch.setenv("PATH", str(tmp_path))
    res = cli("assess", str(PORTABLE), "--hipify-check", "--format", "json", "--no-progress")
    assert res.code == 0, res.err
    root = _project(tmp_path / "p", {"gpuport.toml": "hipify_check = true\n", "k.cu": PTX_KERNEL})
    data = _json(cli("assess", str(root), "--format", "json", "--no-progress"))
    # the project's own setting cannot turn the compile check on (issue 23)
    assert data["hipify"]["check_note"] == "compile check not run (pass --hipify-check)"
    res = cli("assess", str(root), "--hipify-check", "--format", "json", "--no-progress")
    assert res.code == 3 and "needs hipcc" in res.err


def test_bench_notes_do_not_point_at_flags_assess_lacks() -> None:
    from gpuport.bench.model import BenchRun
    from gpuport.models import load_result

    run = load_result(REPO / "examples" / "bench" / "cpu-1-thread.json", BenchRun)
    device = run.device.model_copy(
        update={"backend": "cuda", "name": "Mystery GPU 9000", "spec_key": None, "arch": None}
    )
    odd = run.model_copy(update={"device": device})
    _, notes = sources_evidence._runs_by_gpu([odd], ["h100-sxm"])
    (note,) = notes
    assert "Mystery GPU 9000" in note and "not in the GPU catalog" in note
    assert "--knowledge" not in note


def test_the_same_bench_run_twice_is_attached_once() -> None:
    path = str(REPO / "examples" / "bench" / "cpu-1-thread.json")
    runs, section = sources_evidence.load_bench([path, path], None)
    assert len(runs) == 1 and section.comparison is None
    assert "the same run as" in section.note and "attached once" in section.note


def test_markdown_shows_the_verdict_value() -> None:
    text = assess_markdown.render(assess(load_settings(BLOCKED)))
    assert "**BLOCKED** (`blocked`):" in text


def test_settings_default_hip_version() -> None:
    assert Settings(root=Path()).hip_version == "6.4"
