"""`assess` says what it assumed (issue 29): the model, the workload, the GPUs and their prices
and the HIP version, each with its origin, in the terminal, JSON, Markdown and HTML."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpuport.assess import assess, load_settings
from gpuport.assess.detect import detect
from gpuport.hipify import run as hipify_run
from tests.conftest import EXAMPLE

TRAINER = '''"""The library's trainer."""

from transformers import Trainer


class FineTuner(Trainer):
    """Fine-tunes a model, e.g. ``FineTuner(model="mistralai/Mistral-7B-v0.1")``."""

    def step(self, model, batch, optimizer):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        return loss
'''
SNIPPET = 'EXAMPLE = """\\nmodel = load("meta-llama/Llama-3.1-70B")\\n"""\n'


def _library(root: Path) -> Path:
    """A fine-tuning library: a Trainer in its package, models named only in examples and
    tests (and in a docstring and a code snippet held as a string)."""
    (root / "finetune").mkdir(parents=True)
    (root / "examples").mkdir()
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "finetune"\nversion = "1.0"\ndependencies = ["torch>=2.4"]\n'
    )
    (root / "finetune" / "__init__.py").write_text(TRAINER)
    (root / "finetune" / "docs.py").write_text(SNIPPET)
    (root / "examples" / "serve_mixtral.py").write_text(
        'MODEL = "mistralai/Mixtral-8x7B-Instruct-v0.1"\n'
    )
    (root / "tests" / "test_small.py").write_text('NAME = "Qwen/Qwen3-0.6B"\n')
    return root


def _by_name(data: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [x for x in data["assumptions"] if x["name"] == name]
    return dict(found)


@pytest.fixture
def installed_hip(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same answer on every machine: a HIP 6.2 'installed here'."""
    monkeypatch.setattr(hipify_run, "detect_hip_version", lambda avoid=(), run=True: "6.2")


def test_a_fine_tuning_library_is_training_and_its_example_model_is_only_offered(
    cli: Any, tmp_path: Path, installed_hip: None
) -> None:
    root = _library(tmp_path / "lib")
    res = cli("assess", str(root), "--format", "json", "--no-progress")
    assert res.code == 0, res.err
    data = json.loads(res.out)
    workload = _by_name(data, "workload")
    assert workload["value"] == "training" and workload["origin"] == "detected"
    assert workload["where"].startswith("class FineTuner(Trainer) at finetune/__init__.py:6")
    model = _by_name(data, "model")
    assert model["value"] == "none" and model["origin"] == "default"
    offered = " ".join(model["offered"])
    assert "mixtral-8x7b (examples/serve_mixtral.py:1)" in offered
    assert "qwen3-0.6b (tests/test_small.py:1)" in offered
    assert "mistral-7b" not in offered and "llama-3.1-70b" not in offered  # docstring, snippet
    assert data["cost"]["status"] == "no-model"  # nothing priced from an example
    assert not any("cheaper" in c["title"] for c in data["conclusions"])
    hip = _by_name(data, "hip_version")
    assert (hip["value"], hip["origin"], hip["where"]) == (
        "6.2",
        "detected",
        "the HIP installed here",
    )
    assert data["hipify"]["hip_version"] == "6.2" or not data["hipify"]["ran"]


def test_a_service_names_its_model_and_its_prices_say_where_they_come_from(
    cli: Any, installed_hip: None
) -> None:
    res = cli("assess", str(EXAMPLE), "--format", "json", "--no-progress")
    data = json.loads(res.out)
    model = _by_name(data, "model")
    assert (model["value"], model["origin"], model["where"]) == (
        "llama-3-8b",
        "detected",
        "service/app.py:8",
    )
    workload = _by_name(data, "workload")
    assert workload["value"].startswith("serving") and workload["origin"] == "default"
    assert "no training code in core code" in workload["detail"]
    prices = [x for x in data["assumptions"] if x["name"] == "price"]
    assert len(prices) == 2 and all(p["origin"] == "catalog" and p["where"] for p in prices)
    assert all(re.match(r"\$\d+\.\d\d/GPU-h ", p["value"]) for p in prices)
    assert _by_name(data, "gpus")["origin"] == "default"


def test_flags_and_settings_files_are_named_as_origins(
    cli: Any, tmp_path: Path, installed_hip: None
) -> None:
    root = _library(tmp_path / "lib")
    (root / "gpuport.toml").write_text('gpus = ["h100-sxm", "mi300x"]\ntrain = false\n')
    res = cli(
        "assess", str(root), "--model", "llama-3-8b", "--price", "mi300x=1.5",
        "--hip-version", "6.4", "--format", "json", "--no-progress",
    )  # fmt: skip
    data = json.loads(res.out)
    assert _by_name(data, "model")["origin"] == "flag"
    gpus = _by_name(data, "gpus")
    assert gpus["origin"] == "gpuport.toml" and gpus["where"].endswith("gpuport.toml")
    workload = _by_name(data, "workload")
    assert workload["value"].startswith("serving") and workload["origin"] == "gpuport.toml"
    prices = {p["label"]: p for p in data["assumptions"] if p["name"] == "price"}
    mi300x = next(p for label, p in prices.items() if "MI300X" in label)
    assert mi300x["origin"] == "flag" and mi300x["value"] == "$1.50/GPU-h"
    h100 = next(p for label, p in prices.items() if "H100" in label)
    assert h100["origin"] == "catalog"
    assert _by_name(data, "hip_version")["origin"] == "flag"


def test_every_format_shows_each_assumption_with_its_origin(
    cli: Any, tmp_path: Path, installed_hip: None
) -> None:
    root = _library(tmp_path / "lib")
    a = assess(load_settings(root))
    from gpuport.render import assess_html, assess_markdown

    page = html.unescape(assess_html.render(a))
    markdown = assess_markdown.render(a)
    terminal = " ".join(cli("assess", str(root), "--no-progress").out.split())
    for x in a.assumptions:
        row = f"| {x.label} | " if x.label != "model" else "| model | none | default |"
        assert row in markdown.replace("\\_", "_"), x.label
        assert f"<td>{x.label}</td><td>{x.value}</td><td>{x.origin}</td>" in page, x.label
        shown = f"{x.label}: {x.value} [{x.origin}"
        assert shown in terminal, shown
    assert "workload: training [detected: class FineTuner(Trainer) at finetune/__init__.py:6" in (
        terminal
    )
    # each offered model once per format (the model's detail listed them again)
    assert terminal.count("mixtral-8x7b (examples/serve_mixtral.py:1)") == 1
    assert "model: none [default]" in terminal and "offered, not used: mixtral-8x7b" in terminal
    assert markdown.count("mixtral-8x7b (examples/serve\\_mixtral.py:1)") == 1
    assert page.count("mixtral-8x7b (examples/serve_mixtral.py:1)") == 1


def test_without_a_hip_installed_the_default_is_said(
    cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(hipify_run, "detect_hip_version", lambda avoid=(), run=True: None)
    data = json.loads(cli("assess", str(EXAMPLE), "--format", "json", "--no-progress").out)
    hip = _by_name(data, "hip_version")
    assert (hip["value"], hip["origin"]) == (hipify_run.DEFAULT_HIP_VERSION, "default")
    assert "gpuport's default: no HIP installed here" in hip["detail"]


def test_hipify_and_assess_make_the_same_hip_assumption_and_counts(
    cli: Any, tmp_path: Path, installed_hip: None
) -> None:
    """Issue 29: hipify assumed HIP 5.2 (installed) where assess assumed 6.4, and the two
    counted rewritten and untranslatable APIs differently."""
    out = tmp_path / "out"
    hip = json.loads(cli("hipify", str(EXAMPLE / "csrc"), "-o", str(out), "--format", "json").out)
    data = json.loads(cli("assess", str(EXAMPLE), "--format", "json", "--no-progress").out)
    assert hip["hip_version"] == data["hipify"]["hip_version"] == "6.2"
    assert hip["totals"]["replacements"] == data["hipify"]["replacements"]
    assert hip["totals"]["unsupported"] == len(data["hipify"]["unsupported"])


def test_detection_reads_code_not_docstrings(tmp_path: Path) -> None:
    root = _library(tmp_path / "lib")
    facts = detect(root)
    assert facts.core_model() is None
    assert [k for k, _ in facts.offered_models()] == ["mixtral-8x7b", "qwen3-0.6b"]
    places = [str(p) for p in facts.core_training()]
    assert places[0] == "class FineTuner(Trainer) at finetune/__init__.py:6"
    assert places[1:] == [
        "loss.backward() at finetune/__init__.py:11",
        "optimizer.step() at finetune/__init__.py:12",
    ]


def test_a_model_in_a_core_modules_main_block_is_only_offered(tmp_path: Path) -> None:
    """A client module of the library whose ``if __name__ == "__main__":`` block loads a model
    as a usage example (trl's vLLM client does) names no model the library runs."""
    root = _library(tmp_path / "lib")
    (root / "finetune" / "client.py").write_text(
        "def connect():\n    return 1\n\n\n"
        'if __name__ == "__main__":\n'
        '    model = load("Qwen/Qwen2.5-7B")\n'
        "    model.loss.backward()\n"
    )
    facts = detect(root)
    assert facts.core_model() is None
    offered = dict(facts.offered_models())
    assert str(offered["qwen2.5-7b"]) == (
        "'Qwen/Qwen2.5-7B' at finetune/client.py:6 (in its __main__ block)"
    )
    assert all(p.path != "finetune/client.py" for p in facts.core_training())
    (root / "finetune" / "client.py").write_text('MODEL = "Qwen/Qwen2.5-7B"\n')
    assert detect(root).core_model() is not None  # outside the block it is the library's
