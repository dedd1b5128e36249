"""``gpuport cost`` end to end: formats, the chart, and one-line errors for bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpuport.cost import CostReport
from gpuport.models import load_result
from tests.cost.helpers import run_cost

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_json_has_one_record_per_gpu_with_every_field(tmp_path: Path) -> None:
    out = tmp_path / "cost.json"
    res = run_cost("-m", "qwen3-30b-a3b", "-g", "h100,mi300x,h200", "-f", "json", "-o", str(out))
    assert res.code == 0, res.err
    assert res.out == "" and "lowest $/Mtok output" in res.err
    report = load_result(out, CostReport)  # validated on the way back in
    assert report.kind == "gpuport.cost" and report.mode == "inference"
    assert [r.gpu for r in report.records] == ["h100-sxm", "mi300x", "h200"]
    assert report.env is not None and report.model.experts == 128
    raw = json.loads(out.read_text())["records"][0]
    for field in ("gpu", "fits", "gpus_needed", "tp_degree", "max_concurrency", "weights_gb",
                  "kv_bytes_per_token", "decode_tokens_per_s_per_user",
                  "decode_tokens_per_s_per_gpu", "prefill_tokens_per_s_per_gpu", "ttft_ms",
                  "usd_per_hour", "usd_per_mtok_output", "usd_per_mtok_input", "usd_per_gb",
                  "joules_per_token", "breakeven_hours", "efficiency", "notes"):  # fmt: skip
        assert field in raw, field
    names = {a.name for a in report.assumptions}
    assert {"context", "concurrency", "usable", "overhead_gb", "moe_routing"} <= names
    assert set(report.curves) == {"h100-sxm", "mi300x", "h200"}


def test_terminal_and_markdown() -> None:
    res = run_cost("-m", "llama-3-70b", "--dtype", "fp8", "-g", "h100,mi300x")
    assert res.code == 0, res.err
    assert "h100-sxm" in res.out and "mi300x" in res.out and "$/Mtok out" in res.out
    assert "published" in res.out and "https://" in res.out
    md = run_cost("-m", "llama-3-70b", "-g", "mi300x", "--concurrency", "8", "-f", "markdown")
    assert md.code == 0 and md.out.startswith("# gpuport cost: Llama 3.1 70B")
    assert "| mi300x | yes | 1 |" in md.out and "## Assumptions" in md.out
    assert "| concurrency | 8 | sequences | flag |" in md.out


def test_training_mode() -> None:
    res = run_cost("-m", "llama-3-8b", "--train", "--zero", "2", "-g", "h100,mi300x", "-f", "json")
    assert res.code == 0, res.err
    report = json.loads(res.out)
    assert report["mode"] == "training" and report["curves"] == {}
    h100 = report["records"][0]
    assert h100["train_tokens_per_s_per_gpu"] > 0 and h100["usd_per_mtok_train"] > 0
    assert run_cost("-m", "llama-3-8b", "--train", "-g", "h100").code == 0


@pytest.mark.parametrize("suffix", ["png", "svg"])
def test_chart_file_is_written(tmp_path: Path, suffix: str) -> None:
    chart = tmp_path / f"cost.{suffix}"
    res = run_cost("-m", "llama-3-70b", "-g", "h100,mi300x", "--chart", str(chart), "-f", "json")
    assert res.code == 0, res.err
    data = chart.read_bytes()
    if suffix == "png":
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    else:
        text = data.decode()
        assert text.lstrip().startswith("<?xml") and "<svg" in text
        assert "million output tokens" in text and "MI300X" in text
    assert f"chart {chart}" in res.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "llama-3-70b", "-g", "h1000"], "unknown GPU 'h1000' (did you mean h100"),
        (["-m", "llama-3-7b"], "unknown model 'llama-3-7b' (did you mean"),
        (["-g", "h100"], "give --model NAME"),
        (["-m", "llama-3-8b", "--context", "0"], "--context must be a positive integer, not 0"),
        (["-m", "llama-3-8b", "--concurrency", "-4"], "--concurrency must be a positive integer"),
        (["-m", "llama-3-8b", "--input-tokens", "0"], "--input-tokens must be a positive"),
        (["-m", "llama-3-8b", "--usable", "0"], "--usable must be a fraction in (0, 1]"),
        (["-m", "llama-3-8b", "--utilization", "1.5"], "--utilization must be a fraction"),
        (["-m", "llama-3-8b", "--power-cost", "-1"], "--power-cost cannot be negative"),
        (["-m", "llama-3-8b", "--price", "h100=0"], "the value must be a positive number"),
        (["-m", "llama-3-8b", "--price", "h100=-2.5"], "the value must be a positive number"),
        (["-m", "llama-3-8b", "--price", "h100"], "expected GPU=NUMBER"),
        (["-m", "llama-3-8b", "--throughput", "h100=fast"], "'fast' is not a number"),
        (["-m", "llama-3-8b", "-g", "h100", "--price", "mi300x=2"], "not among --gpus"),
        (["-m", "llama-3-8b", "--dtype", "int3"], "unknown --dtype 'int3'"),
        (["-m", "llama-3-8b", "--zero", "2"], "--zero applies to training"),
        (["-m", "llama-3-8b", "--train", "--zero", "4"], "--zero must be 0, 1, 2 or 3"),
        (["-m", "llama-3-8b", "--train", "--throughput", "h100=9"], "does not apply with --train"),
        (["-m", "llama-3-8b", "--context", "1024"], "exceed --context 1024"),
        (["-m", "llama-3-8b", "--chart", "cost.pdf"], "must end in .png or .svg"),
        (["-m", "llama-3-8b", "--train", "--chart", "c.png"], "drop --train"),
        (["-m", "llama-3-8b", "--model-config", "c.json"], "not both"),
        (["-m", "llama-3-8b", "--knowledge", "/nonexistent"], "not a directory"),
        # NaN passes a plain `< 0` check; inf would reach the sums.
        (["-m", "llama-3-8b", "--overhead-gb", "nan"], "--overhead-gb cannot be negative"),
        (["-m", "llama-3-8b", "--overhead-gb", "inf"], "--overhead-gb cannot be negative"),
        (["-m", "llama-3-8b", "--power-cost", "nan"], "--power-cost cannot be negative"),
        (["-m", "llama-3-8b", "--power-cost", "inf"], "--power-cost cannot be negative"),
        (["-m", "llama-3-8b", "--usable", "nan"], "--usable must be a fraction"),
        (["-m", "llama-3-8b", "--utilization", "inf"], "--utilization must be a fraction"),
        (["-m", "llama-3-8b", "--context", str(2**41)], "--context must be a positive integer"),
        # The same GPU twice, directly or through an alias: one value would be dropped.
        (["-m", "llama-3-8b", "--price", "h100=1,h100=2"], "h100-sxm already has a value (1)"),
        (["-m", "llama-3-8b", "--price", "h100=1", "--price", "h100-sxm=2"], "already has"),
        (["-m", "llama-3-8b", "--purchase", "mi300x=9,mi300x=9"], "already has a value"),
        (["-m", "llama-3-8b", "-g", "h100", "--purchase", "mi300x=9000"], "not among --gpus"),
        (["-m", "llama-3-8b", "-g", ""], "names no GPU"),
        (["-m", "llama-3-8b", "-g", " , "], "names no GPU"),
        # Serving-only flags that --train would ignore.
        (["-m", "llama-3-8b", "--train", "--kv-dtype", "fp8"], "--kv-dtype does not apply"),
        (["-m", "llama-3-8b", "--train", "--input-tokens", "512"], "--input-tokens does not"),
        (["-m", "llama-3-8b", "--train", "--output-tokens", "512"], "--output-tokens does not"),
        (["-m", "llama-3-8b", "--train", "--max-batch", "8"], "--max-batch does not apply"),
        (["-m", "llama-3-8b", "--train", "--max-batch", "8", "--kv-dtype", "bf16"],
         "--kv-dtype, --max-batch do not apply with --train"),
        (["-m", "llama-3-8b", "--train", "--dtype", "int4"], "--dtype int4 does not apply"),
        (["-m", "llama-3-8b", "--train", "--dtype", "fp8"], "--dtype fp8 does not apply"),
        (["-m", "llama-3-8b", "--train", "--dtype", "fp4"], "--dtype fp4 does not apply"),
        (["-m", "llama-3-8b", "--train", "--tp", "2"], "--tp does not apply with --train"),
        # Issue 26: deployment, engine and latency flags.
        (["-m", "llama-3-8b", "--engine", "tgi"], "unknown --engine 'tgi'"),
        (["-m", "llama-3-70b", "--tp", "3"], "--tp 3: Llama 3.1 70B's 64 attention heads"),
        (["-m", "llama-3-8b", "--tp", "0"], "--tp must be a positive integer"),
        (["-m", "llama-3-8b", "--dp", "0"], "--dp must be a positive integer"),
        (["-m", "llama-3-8b", "--pp", "99"], "--pp 99: Llama 3.1 8B has only 32 layers"),
        (["-m", "llama-3-8b", "--ep", "2"], "--ep applies to mixture-of-experts models"),
        (["-m", "mixtral-8x7b", "--ep", "3"], "8 experts do not split 3 ways"),
        (["-m", "llama-3-8b", "--dp-attention"], "--dp-attention applies to mixture-of-experts"),
        (["-m", "llama-3-8b", "--max-tpot", "-5"], "--max-tpot cannot be negative"),
        (["-m", "llama-3-8b", "--max-ttft", "nan"], "--max-ttft cannot be negative"),
        (["-m", "llama-3-8b", "--min-user-tok-s", "0"], "--min-user-tok-s must be a positive"),
    ],
)  # fmt: skip
def test_bad_input_is_one_clear_line(args: list[str], message: str) -> None:
    res = run_cost(*args)
    assert res.code == 2, res.out
    assert message in res.err and "\n" not in res.err.strip() and "Traceback" not in res.err


def test_an_implausible_throughput_is_flagged() -> None:
    """Seed 002's 18,000 tok/s (an MI355X estimate it reuses for the MI300X) is implausible."""
    res = run_cost("-m", "llama-3-70b", "-g", "mi300x", "--concurrency", "32",
                   "--throughput", "mi300x=18000", "-f", "json")  # fmt: skip
    (rec,) = json.loads(res.out)["records"]
    assert rec["decode_tokens_per_s_per_gpu"] == 18000
    assert any("the model at this concurrency" in n for n in rec["notes"])


def test_context_beyond_the_model_window_is_noted() -> None:
    res = run_cost("-m", "phi-3-mini", "-g", "h100", "--context", "8192", "-f", "json")
    assert any("context window" in n for n in json.loads(res.out)["notes"])


def test_chart_without_matplotlib_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    res = run_cost("-m", "llama-3-8b", "--chart", str(tmp_path / "c.png"))
    assert res.code == 3 and "pip install 'gpuport[report]'" in res.err
    assert not (tmp_path / "c.png").exists()


def test_chart_survives_a_hostile_model_name(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "_name_or_path": "acme/$x^{2}$ \x1b[31mmodel", "hidden_size": 2048,
        "num_hidden_layers": 16, "num_attention_heads": 16, "intermediate_size": 5632,
        "vocab_size": 32000,
    }))  # fmt: skip
    chart = tmp_path / "c.svg"
    res = run_cost("--model-config", str(config), "-g", "h100", "--chart", str(chart))
    assert res.code == 0, res.err
    assert "\x1b" not in res.out and "$x^{2}$" in chart.read_text()


def test_training_takes_a_16_bit_dtype_and_echoes_it() -> None:
    res = run_cost("-m", "llama-3-8b", "--train", "--dtype", "fp16", "-g", "h100", "-f", "json")
    assert res.code == 0, res.err
    report = json.loads(res.out)
    values = {a["name"]: a["value"] for a in report["assumptions"]}
    assert values["dtype"] == "fp16"  # not silently "bf16"
    assert not {"kv_dtype", "input_tokens", "output_tokens", "max_batch"} & set(values)
    assert report["records"][0]["efficiency"]["compute"]["peak"] > 0


def test_a_model_name_with_rich_markup_is_printed_as_is(tmp_path: Path) -> None:
    """The summary line on stderr must not parse a config.json name as Rich markup."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "_name_or_path": "a[/b] [bold]x\x1b[2J", "hidden_size": 2048, "num_hidden_layers": 16,
        "num_attention_heads": 16, "intermediate_size": 5632, "vocab_size": 32000,
    }))  # fmt: skip
    for fmt in ("terminal", "json", "markdown"):
        res = run_cost("--model-config", str(config), "-g", "h100", "-f", fmt)
        assert res.code == 0, res.err
        assert "gpuport cost: a[/b] [bold]x" in res.err and "\x1b" not in res.err


def test_limits_section_quotes_what_the_tool_prints() -> None:
    """docs/cost.md: seed 002's 18,000 tok/s is an MI355X figure; the multiples match."""
    doc = (Path(__file__).parents[2] / "docs" / "cost.md").read_text()
    limits = doc[doc.index("## Limits") :]
    for gpu, multiple in (("mi355x", 22), ("mi300x", 43)):
        res = run_cost("-m", "llama-3-70b", "--dtype", "fp16", "-g", gpu, "--concurrency", "32",
                       "--throughput", f"{gpu}=18000", "-f", "json")  # fmt: skip
        (rec,) = json.loads(res.out)["records"]
        assert any(f"is {multiple}× the model" in n for n in rec["notes"]), rec["notes"]
        assert f"{multiple}×" in limits
    assert "MI355X" in limits and "20×" not in limits
