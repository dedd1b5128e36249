"""models.toml: sourced, dated, unique; user overrides; config.json read from disk."""

from __future__ import annotations

import datetime as dt
import json
import tomllib
from pathlib import Path

import pytest

from gpuport.cost.shapes import count_params
from gpuport.knowledge.gpus import load_gpus
from gpuport.knowledge.models import (
    MODELS_TOML,
    load_models,
    resolve_model,
    shape_from_hf_config,
)
from gpuport.models import GpuportError
from tests.cost.helpers import run_cost

CHECKED = dt.date(2026, 11, 22)
FAMILIES = {"llama-3-8b", "llama-3-70b", "llama-3-405b", "mistral-7b", "mixtral-8x7b",
            "qwen2.5-7b", "qwen2.5-32b", "qwen2.5-72b", "qwen3-8b", "qwen3-30b-a3b",
            "deepseek-v3", "gemma-2-9b", "gemma-3-27b", "phi-4"}  # fmt: skip


def _is_url(text: str) -> bool:
    return text.startswith(("https://", "http://")) and " " not in text


def test_catalog_covers_the_models_people_deploy() -> None:
    with MODELS_TOML.open("rb") as fh:
        raw = [str(e["key"]) for e in tomllib.load(fh)["model"]]
    assert len(raw) == len(set(raw)), "duplicate key: a later entry hides an earlier one"
    assert set(load_models()) >= FAMILIES
    for alias in ("deepseek-r1", "llama-3.3-70b", "Meta-Llama-3.1-8B-Instruct", "Qwen/Qwen3-8B"):
        assert resolve_model(alias)


@pytest.mark.parametrize("key", sorted(load_models()))
def test_every_entry_is_sourced_and_dated(key: str) -> None:
    model = load_models()[key]
    assert model.sources and all(_is_url(u) for u in model.sources)
    assert CHECKED <= model.checked <= dt.date(2026, 11, 27)  # bulk review, or re-checked
    assert model.params_b is not None, "publish the count so the shape can be checked"


def test_aliases_are_unique() -> None:
    seen: dict[str, str] = {}
    for model in load_models().values():
        for alias in (model.key, *model.aliases):
            low = alias.lower()
            assert seen.get(low, model.key) == model.key, f"{alias} on {seen[low]} and {model.key}"
            seen[low] = model.key


def test_gpu_catalog_has_the_prices_cost_needs() -> None:
    """On-demand rent and a purchase price, sourced and dated, for the seeds' two GPUs."""
    gpus = load_gpus()
    for key in ("h100-sxm", "mi300x"):
        kinds = {p.kind for p in gpus[key].prices}
        assert {"on-demand", "spot", "purchase"} <= kinds, key
        assert all(_is_url(p.source) and p.date <= CHECKED for p in gpus[key].prices)
    assert any(p.kind == "purchase" for p in gpus["rx-7900-xtx"].prices)


def test_unknown_model_names_close_matches() -> None:
    with pytest.raises(GpuportError, match=r"did you mean llama-3-70b"):
        resolve_model("lama-3-70b")
    res = run_cost("--model", "mixtral-8x7")
    assert res.code == 2 and "mixtral-8x7b" in res.err and "\n" not in res.err.strip()


def test_user_override_of_a_model_through_knowledge(tmp_path: Path) -> None:
    (tmp_path / "models.toml").write_text(
        """
[[model]]
key = "llama-3-8b"
name = "Llama 3 8B, our 16-layer cut"
hidden_size = 4096
num_layers = 16
num_heads = 32
num_kv_heads = 8
intermediate_size = 14336
vocab_size = 128256
max_context = 8192
sources = ["https://example.com/our-model-card"]
checked = 2026-11-01

[[model]]
key = "acme-13b"
name = "Acme 13B"
hidden_size = 5120
num_layers = 40
num_heads = 40
num_kv_heads = 40
intermediate_size = 13824
vocab_size = 32000
max_context = 4096
sources = ["https://example.com/acme"]
checked = 2026-11-01
"""
    )
    ours = load_models(tmp_path)
    assert ours["llama-3-8b"].num_layers == 16 and "acme-13b" in ours
    assert load_models()["llama-3-8b"].num_layers == 32  # the bundled entry is untouched
    res = run_cost("-m", "llama-3-8b", "-g", "h100", "--knowledge", str(tmp_path), "-f", "json")
    assert res.code == 0, res.err
    (rec,) = json.loads(res.out)["records"]
    assert rec["kv_bytes_per_token"] == 2 * 16 * 8 * 128 * 2
    res = run_cost("-m", "acme-13b", "-g", "h100", "--knowledge", str(tmp_path), "-f", "json")
    assert res.code == 0 and json.loads(res.out)["model"]["attention"] == "mha"
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "models.toml").write_text('[[model]]\nkey = "x"\nname = "x"\n')
    with pytest.raises(GpuportError, match=r"entry 'x': .*Field required"):
        load_models(broken)


def _config(tmp_path: Path, **fields: object) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(fields))
    return path


LLAMA_8B = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
            "vocab_size": 128256, "max_position_embeddings": 131072,
            "_name_or_path": "meta-llama/Llama-3.1-8B"}  # fmt: skip


def test_config_json_gives_the_same_answer_as_the_catalog(tmp_path: Path) -> None:
    shape = shape_from_hf_config(_config(tmp_path, **LLAMA_8B))
    assert shape.key == "llama-3-1-8b" and shape.num_kv_heads == 8 and not shape.tie_embeddings
    mine = run_cost("--model-config", str(tmp_path / "config.json"), "-g", "h100", "-f", "json")
    ours = run_cost("--model", "llama-3-8b", "-g", "h100", "-f", "json")
    assert mine.code == ours.code == 0, mine.err
    a, b = json.loads(mine.out), json.loads(ours.out)
    assert a["model"]["origin"] == "config.json" and b["model"]["origin"] == "catalog"
    assert a["records"][0]["weights_gb"] == b["records"][0]["weights_gb"]
    assert a["records"][0]["max_concurrency"] == b["records"][0]["max_concurrency"]


def test_config_json_moe_mla_sliding_and_nesting(tmp_path: Path) -> None:
    v3 = shape_from_hf_config(_config(
        tmp_path, model_type="deepseek_v3", hidden_size=7168, num_hidden_layers=61,
        num_attention_heads=128, num_key_value_heads=128, intermediate_size=18432,
        moe_intermediate_size=2048, n_routed_experts=256, n_shared_experts=1,
        num_experts_per_tok=8, first_k_dense_replace=3, kv_lora_rank=512, q_lora_rank=1536,
        qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, vocab_size=129280,
    ))  # fmt: skip
    assert v3 == v3.model_copy(update={})
    catalog = resolve_model("deepseek-v3")
    for field in ("num_experts", "experts_per_token", "shared_experts", "dense_layers",
                  "kv_lora_rank", "qk_rope_head_dim", "moe_intermediate_size"):  # fmt: skip
        assert getattr(v3, field) == getattr(catalog, field), field
    gemma3 = shape_from_hf_config(_config(
        tmp_path, model_type="gemma3", text_config={
            "hidden_size": 5376, "num_hidden_layers": 62, "num_attention_heads": 32,
            "num_key_value_heads": 16, "head_dim": 128, "intermediate_size": 21504,
            "vocab_size": 262208, "sliding_window": 1024, "sliding_window_pattern": 6,
            "tie_word_embeddings": True,
        },
    ))  # fmt: skip
    assert (gemma3.sliding_window, gemma3.sliding_layers) == (1024, 52)
    qwen = shape_from_hf_config(_config(
        tmp_path, model_type="qwen2", hidden_size=3584, num_hidden_layers=28,
        num_attention_heads=28, num_key_value_heads=4, intermediate_size=18944,
        vocab_size=152064, sliding_window=131072, use_sliding_window=False,
    ))  # fmt: skip
    assert qwen.sliding_layers == 0 and qwen.qkv_bias


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        ("num_hidden_layers", "missing field 'num_hidden_layers'"),
        ("hidden_size", "missing field 'hidden_size'"),
        ("vocab_size", "missing field 'vocab_size'"),
        ("intermediate_size", "missing field 'intermediate_size'"),
    ],
)
def test_config_json_missing_field_is_named(tmp_path: Path, drop: str, message: str) -> None:
    fields = {k: v for k, v in LLAMA_8B.items() if k != drop}
    path = _config(tmp_path, **fields)
    res = run_cost("--model-config", str(path))
    assert res.code == 2 and message in res.err and str(path) in res.err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({**LLAMA_8B, "num_hidden_layers": 0}), "must be positive"),
        (json.dumps({**LLAMA_8B, "hidden_size": "4096"}), "must be an integer"),
        (json.dumps({**LLAMA_8B, "num_key_value_heads": 5}), "not a multiple"),
    ],
)
def test_config_json_bad_values(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(GpuportError, match=message):
        shape_from_hf_config(path)
    with pytest.raises(GpuportError, match="cannot read"):
        shape_from_hf_config(tmp_path / "absent.json")


# gemma-3-12b-it's config.json as published: transformers writes text_config as a diff
# against Gemma3TextConfig's defaults, so head_dim (256), vocab_size (262208),
# sliding_window_pattern (6) and tie_word_embeddings (true) are all left out.
GEMMA3_12B_TEXT = {"hidden_size": 3840, "intermediate_size": 15360, "model_type": "gemma3_text",
                   "num_attention_heads": 16, "num_hidden_layers": 48, "num_key_value_heads": 8,
                   "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
                   "sliding_window": 1024}  # fmt: skip


@pytest.mark.parametrize("text_type", ["gemma3_text", None])
def test_a_real_gemma3_config_reads_like_the_catalog(tmp_path: Path, text_type: str | None) -> None:
    text = {k: v for k, v in GEMMA3_12B_TEXT.items() if k != "model_type"}
    if text_type:
        text["model_type"] = text_type
    vision = {"model_type": "siglip_vision_model"}
    path = _config(tmp_path, model_type="gemma3", text_config=text, vision_config=vision)
    shape = shape_from_hf_config(path)
    catalog = resolve_model("gemma-3-12b")
    for field in ("head_dim", "vocab_size", "tie_embeddings", "sliding_window", "sliding_layers",
                  "num_kv_heads", "max_context"):  # fmt: skip
        assert getattr(shape, field) == getattr(catalog, field), field
    assert shape.family == "gemma3_text"
    assert count_params(shape).total == count_params(catalog).total
    res = run_cost("--model-config", str(path), "-g", "h100", "-f", "json")
    assert res.code == 0, res.err
    (note,) = [n for n in json.loads(res.out)["notes"] if "gemma3_text defaults" in n]
    assert (
        "head_dim 256" in note
        and "vocab_size 262208" in note
        and "tie_word_embeddings true" in note
    )


def test_a_gemma2_config_without_tie_word_embeddings_is_tied(tmp_path: Path) -> None:
    """gemma-2-9b's config.json has no tie_word_embeddings: true is the class default."""
    shape = shape_from_hf_config(_config(
        tmp_path, model_type="gemma2", hidden_size=3584, num_hidden_layers=42,
        num_attention_heads=16, num_key_value_heads=8, head_dim=256, intermediate_size=14336,
        vocab_size=256000, max_position_embeddings=8192, sliding_window=4096,
    ))  # fmt: skip
    catalog = resolve_model("gemma-2-9b")
    assert shape.tie_embeddings and (shape.sliding_window, shape.sliding_layers) == (4096, 21)
    assert count_params(shape).total == count_params(catalog).total


def test_an_unknown_model_type_with_a_window_counts_every_layer_global(tmp_path: Path) -> None:
    """Without layer_types or a pattern, which layers slide is unknown: no KV is dropped."""
    path = _config(tmp_path, **{**LLAMA_8B, "model_type": "acme", "sliding_window": 4096})
    shape = shape_from_hf_config(path)
    assert shape.sliding_layers == 0 and shape.sliding_window is None
    assert any("counted as global" in n for n in shape.assumed)
    res = run_cost("--model-config", str(path), "-g", "h100", "-f", "json")
    assert any("counted as global" in n for n in json.loads(res.out)["notes"])
    # A known all-sliding family (Mistral 7B v0.1) still slides on every layer.
    mistral = shape_from_hf_config(_config(tmp_path, **{**LLAMA_8B, "model_type": "mistral",
                                                        "sliding_window": 4096}))  # fmt: skip
    assert mistral.sliding_layers == 32 and not mistral.assumed


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('"hidden_size": NaN', "must be a finite integer"),
        ('"hidden_size": Infinity', "must be a finite integer"),
        ('"vocab_size": -Infinity', "must be a finite integer"),
        ('"hidden_size": 1e300', "above 2**40"),
        ('"num_hidden_layers": 100000000000000000000000000000000000000000', "above 2**40"),
        ('"num_attention_heads": 1099511627777', "above 2**40"),
    ],
)
def test_config_json_non_finite_or_huge_numbers_are_one_line(
    tmp_path: Path, raw: str, message: str
) -> None:
    field = raw.split(":")[0].strip('"')
    body = json.dumps({k: v for k, v in LLAMA_8B.items() if k != field})
    path = tmp_path / "config.json"
    path.write_text(body[:-1] + ", " + raw + "}")
    res = run_cost("--model-config", str(path), "-g", "h100")
    assert res.code == 2, res.err
    assert message in res.err and field in res.err and "\n" not in res.err.strip()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"hidden_size": 8, "num_attention_heads": 16, "num_key_value_heads": 16},
         "hidden_size 8 is not a multiple of num_heads 16"),
        ({"hidden_size": 4100}, "hidden_size 4100 is not a multiple of num_heads 32"),
    ],
)  # fmt: skip
def test_head_size_must_be_a_whole_positive_number(
    tmp_path: Path, fields: dict[str, int], message: str
) -> None:
    """hidden // heads would round: to 0 (a KV cache of nothing) when hidden < heads."""
    path = _config(tmp_path, **{**LLAMA_8B, **fields})
    res = run_cost("--model-config", str(path), "-g", "h100")
    assert res.code == 2 and message in res.err and "\n" not in res.err.strip()
    # An explicit head_dim says what the heads are: then any hidden size goes.
    explicit = shape_from_hf_config(_config(tmp_path, **{**LLAMA_8B, **fields, "head_dim": 64}))
    assert explicit.head_size == 64
