"""Model shapes (models.toml) and Hugging Face ``config.json`` files read from disk.

``gpuport cost`` needs a model's shape to size it: layers, heads, KV heads, MLP width,
vocabulary, and for newer architectures the mixture-of-experts layout, DeepSeek's
multi-head latent attention (MLA) and sliding-window layers. A shape is enough, so no
weights are ever downloaded and nothing here reaches the network: bundled entries come
from the model's published ``config.json`` (cited per entry), and a user's own model is
read from a local ``config.json`` with :func:`shape_from_hf_config`.
"""

from __future__ import annotations

import difflib
import json
import math
from functools import cache
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuport import fileio, textre
from gpuport.knowledge import KNOWLEDGE_DIR, Sourced, _entries, _merge, _user_file, _validated
from gpuport.models import GpuportError
from gpuport.safeparse import ParseError, json_value

MODELS_TOML = KNOWLEDGE_DIR / "models.toml"


class ModelShape(BaseModel):
    """What sizing needs to know about a decoder-only transformer, and nothing more.

    Field names follow the common ``config.json`` meaning. ``intermediate_size`` is the
    dense MLP width (for DeepSeek, of its leading dense layers); routed experts use
    ``moe_intermediate_size`` (Mixtral's experts are as wide as its ``intermediate_size``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str = Field(description="stable id, e.g. 'llama-3-70b'")
    name: str
    family: str = ""
    aliases: list[str] = Field(default_factory=list)
    hidden_size: int = Field(gt=0)
    num_layers: int = Field(gt=0)
    num_heads: int = Field(gt=0)
    num_kv_heads: int = Field(gt=0)
    head_dim: int | None = Field(default=None, gt=0, description="default hidden/heads")
    intermediate_size: int = Field(gt=0)
    vocab_size: int = Field(gt=0)
    tie_embeddings: bool = False
    qkv_bias: bool = False
    max_context: int = Field(gt=0)
    # Mixture of experts: 0 experts means a dense model.
    num_experts: int = Field(default=0, ge=0)
    experts_per_token: int = Field(default=0, ge=0)
    moe_intermediate_size: int | None = Field(default=None, gt=0)
    shared_experts: int = Field(default=0, ge=0, description="always-on experts per MoE layer")
    dense_layers: int = Field(default=0, ge=0, description="leading layers with a dense MLP")
    # Multi-head latent attention (DeepSeek V2/V3): the KV cache holds one latent per token.
    kv_lora_rank: int | None = Field(default=None, gt=0)
    q_lora_rank: int | None = Field(default=None, gt=0)
    qk_rope_head_dim: int | None = Field(default=None, gt=0)
    qk_nope_head_dim: int | None = Field(default=None, gt=0)
    v_head_dim: int | None = Field(default=None, gt=0)
    # Sliding-window attention: these layers keep at most `sliding_window` tokens of KV.
    sliding_window: int | None = Field(default=None, gt=0)
    sliding_layers: int = Field(default=0, ge=0)
    assumed: tuple[str, ...] = Field(
        default=(), description="what reading a config.json had to assume, said in the report"
    )

    @model_validator(mode="after")
    def _consistent(self) -> Self:
        if not self.is_mla and self.head_dim is None and self.hidden_size % self.num_heads:
            # hidden // heads would silently round (to 0 when hidden < heads): a KV cache
            # of nothing and absurd throughput.
            raise ValueError(
                f"hidden_size {self.hidden_size} is not a multiple of num_heads "
                f"{self.num_heads}: set head_dim"
            )
        if self.is_mla:
            missing = [
                f
                for f in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim")
                if getattr(self, f) is None
            ]
            if missing:
                raise ValueError(f"MLA needs {', '.join(missing)}")
        elif self.num_heads % self.num_kv_heads:
            raise ValueError(
                f"num_heads {self.num_heads} is not a multiple of num_kv_heads {self.num_kv_heads}"
            )
        if self.num_experts:
            if not 0 < self.experts_per_token <= self.num_experts:
                raise ValueError("experts_per_token must be between 1 and num_experts")
        elif self.experts_per_token or self.shared_experts:
            raise ValueError("experts_per_token/shared_experts without num_experts")
        if self.dense_layers > self.num_layers or self.sliding_layers > self.num_layers:
            raise ValueError("dense_layers and sliding_layers cannot exceed num_layers")
        if self.sliding_layers and self.sliding_window is None:
            raise ValueError("sliding_layers needs sliding_window")
        return self

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None

    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def head_size(self) -> int:
        """Per-head dimension: ``head_dim`` where the config sets it (Gemma, Qwen 3)."""
        return self.head_dim if self.head_dim is not None else self.hidden_size // self.num_heads

    @property
    def expert_width(self) -> int:
        """Width of one routed expert's MLP."""
        return self.moe_intermediate_size or self.intermediate_size


class ModelSpec(ModelShape, Sourced):
    """A bundled or user catalog entry: a shape plus where it comes from.

    ``params_b``/``active_params_b`` are the publishers' own counts in billions; they are
    not used in the arithmetic, but a test checks the shape reproduces them, which catches
    a mistyped width or layer count.
    """

    params_b: float | None = Field(default=None, gt=0)
    active_params_b: float | None = Field(default=None, gt=0)
    note: str = ""


@cache
def load_models(user_dir: Path | None = None) -> dict[str, ModelSpec]:
    """The bundled models by key, extended or overridden by ``user_dir/models.toml``."""
    items = _validated(ModelSpec, MODELS_TOML, _entries(MODELS_TOML, "model"))
    extra_path = _user_file(user_dir, "models.toml")
    if extra_path is not None:
        extra = _validated(ModelSpec, extra_path, _entries(extra_path, "model"))
        items = _merge(items, extra, "key")
    return {m.key: m for m in items}


def _squash(text: str) -> str:
    """``Llama 3 70B``, ``llama_3-70b`` and ``meta-llama/Llama-3-70B`` all agree."""
    text = text.strip().lower().rsplit("/", 1)[-1]
    return textre.sub(r"[\s_.-]+", "-", text)


def resolve_model(name: str, user_dir: Path | None = None) -> ModelSpec:
    """Find a model by key, alias or name, ignoring case, punctuation and an org prefix.

    A miss names the closest spellings: model names are long and easy to mistype.
    """
    models = load_models(user_dir)
    want = _squash(name)
    for model in models.values():
        if want in {_squash(s) for s in (model.key, model.name, *model.aliases)}:
            return model
    spellings = {_squash(s): m.key for m in models.values() for s in (m.key, *m.aliases)}
    close = difflib.get_close_matches(want, sorted(spellings), n=6, cutoff=0.6)
    keys = list(dict.fromkeys(spellings[c] for c in close))[:3]
    hint = f" (did you mean {', '.join(keys)}?)" if keys else ""
    raise GpuportError(
        f"unknown model {name!r}{hint}; known models: {', '.join(sorted(models))}; "
        "or describe your own with --model-config config.json"
    )


# ----------------------------------------------------------------------- config.json

# First spelling found wins: Mixtral says num_local_experts, Qwen num_experts, DeepSeek
# n_routed_experts.
_EXPERTS = ("num_local_experts", "num_experts", "n_routed_experts")
# The largest integer a config.json field may hold. Far above any real model (one 2**40-wide
# layer would hold a trillion parameters), and small enough that no figure made from it
# overflows a float: NaN, Infinity and 1e300 are refused rather than carried into the sums.
MAX_CONFIG_INT = 2**40

# What transformers assumes for a field a config.json leaves out: the default of the
# model_type's config class (configuration_<type>.py). save_pretrained writes a nested
# text_config as a diff against those defaults, so real multimodal configs omit whatever
# sits at its default: gemma-3-12b-it's text_config has no head_dim (256), vocab_size
# (262208), sliding_window_pattern (6) or tie_word_embeddings (true). At the top level
# the model's own fields are always written, but tie_word_embeddings (a base-class field
# whose base default is true) is dropped when true, as in Gemma 2's config.json.
_HF_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32,
              "max_position_embeddings": 2048, "tie_word_embeddings": False},
    "mistral": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "max_position_embeddings": 131072, "tie_word_embeddings": False,
                "sliding_window": 4096},
    "mixtral": {"vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "max_position_embeddings": 131072, "tie_word_embeddings": False,
                "num_local_experts": 8, "num_experts_per_tok": 2},
    "qwen2": {"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
              "max_position_embeddings": 32768, "tie_word_embeddings": False,
              "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28},
    "qwen3": {"vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
              "head_dim": 128, "max_position_embeddings": 32768, "tie_word_embeddings": False,
              "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28},
    "qwen3_moe": {"vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
                  "num_hidden_layers": 24, "num_attention_heads": 32, "num_key_value_heads": 4,
                  "max_position_embeddings": 32768, "tie_word_embeddings": False,
                  "use_sliding_window": False, "sliding_window": 4096,
                  "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8},
    "deepseek_v3": {"vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432,
                    "moe_intermediate_size": 2048, "num_hidden_layers": 61,
                    "num_attention_heads": 128, "num_key_value_heads": 128,
                    "n_shared_experts": 1, "n_routed_experts": 256, "num_experts_per_tok": 8,
                    "first_k_dense_replace": 3, "kv_lora_rank": 512, "q_lora_rank": 1536,
                    "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
                    "max_position_embeddings": 4096, "tie_word_embeddings": False},
    "gemma2": {"vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216,
               "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
               "head_dim": 256, "max_position_embeddings": 8192, "tie_word_embeddings": True,
               "sliding_window": 4096},
    "gemma3_text": {"vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
                    "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4,
                    "head_dim": 256, "max_position_embeddings": 131072,
                    "tie_word_embeddings": True, "sliding_window": 4096,
                    "sliding_window_pattern": 6},
    "phi3": {"vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192,
             "num_hidden_layers": 32, "num_attention_heads": 32,
             "max_position_embeddings": 4096, "tie_word_embeddings": False},
}  # fmt: skip
# A multimodal config whose text_config does not name its own model_type.
_TEXT_MODEL_TYPES = {"gemma3": "gemma3_text"}
# Fields a top-level config is filled in with: those whose class default differs from the
# generic fallback (head_dim hidden/heads, KV heads = heads, untied, 4096 tokens, every
# layer global). The shape's own sizes stay required there, to catch a cut-down file.
_TOP_LEVEL_DEFAULTS = frozenset({
    "head_dim", "num_key_value_heads", "tie_word_embeddings", "max_position_embeddings",
    "sliding_window_pattern", "use_sliding_window", "max_window_layers",
})  # fmt: skip
# How the layers of a known model_type use a sliding window, where the config does not say
# (no layer_types, no sliding_window_pattern): every n-th layer global, or all sliding.
_SLIDING_PATTERN = {"gemma2": 2, "gemma3_text": 6}  # Gemma 2 alternates local and global
_ALL_LAYERS_SLIDE = frozenset({"mistral", "mixtral", "phi3"})  # e.g. Mistral 7B v0.1


def _unknown_type_note(
    model_type: str, cfg: dict[str, Any], hidden: int, heads: int
) -> tuple[str, ...]:
    """A note when the model_type is not one gpuport has defaults for: say what was filled.

    Such a config is read as a dense decoder; every field it leaves out takes a generic
    value, which may not be the architecture's (a silent default would hide that).
    """
    if model_type in _HF_DEFAULTS:
        return ()
    filled = []
    if cfg.get("max_position_embeddings") is None:
        filled.append("max_position_embeddings 4096")
    if cfg.get("num_key_value_heads") is None:
        filled.append(f"num_key_value_heads {heads} (= heads)")
    if cfg.get("head_dim") is None:
        filled.append(f"head_dim {hidden // heads} (hidden / heads)")
    if "tie_word_embeddings" not in cfg:
        filled.append("tie_word_embeddings false")
    what = repr(model_type) if model_type else "no model_type"
    gaps = "; left out, so filled with generic values: " + ", ".join(filled) if filled else ""
    return (
        f"{what} is not a model_type gpuport knows: read as a dense decoder with every "
        f"layer global{gaps}",
    )


def shape_from_hf_config(path: Path) -> ModelShape:
    """Read a Hugging Face ``config.json`` from disk into a :class:`ModelShape`.

    Multimodal configs keep the language model under ``text_config`` (Gemma 3, Llama 4);
    that part is used. A field left out takes the default transformers would give it for
    the model_type (see ``_HF_DEFAULTS``), and the report says which. A missing required
    field is named in the error, because a config.json cut down by hand or written for
    another architecture is the usual cause.
    """
    try:
        raw = json_value(fileio.read_bytes(path, limit=fileio.LIMIT_RESULT, what="--model-config"))
    except ParseError as exc:
        raise GpuportError(f"--model-config {path} is not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise GpuportError(f"--model-config {path}: expected a JSON object")
    cfg: dict[str, Any] = raw
    model_type = str(raw.get("model_type") or "")
    text = raw.get("text_config")
    if isinstance(text, dict):
        model_type = str(text.get("model_type") or _TEXT_MODEL_TYPES.get(model_type, model_type))
        cfg = {**raw, **text, "model_type": model_type}
    defaults = {
        k: v
        for k, v in _HF_DEFAULTS.get(model_type, {}).items()
        if k not in cfg and (isinstance(text, dict) or k in _TOP_LEVEL_DEFAULTS)
    }
    cfg = {**defaults, **cfg}
    where = f"--model-config {path}"
    assumed: list[str] = []
    telling = {k: v for k, v in defaults.items() if (k, v) != ("tie_word_embeddings", False)}
    if telling:  # untied is what a missing field would be read as anyway: not worth a note
        given = ", ".join(f"{k} {json.dumps(v)}" for k, v in sorted(telling.items()))
        assumed.append(
            f"config.json leaves out fields that transformers fills with its {model_type} "
            f"defaults; read as such: {given}"
        )

    def need(field: str) -> int:
        if field not in cfg or cfg[field] is None:
            raise GpuportError(f"{where}: missing field {field!r}")
        return _positive_int(cfg[field], field, where)

    def maybe(*fields: str) -> int | None:
        for field in fields:
            if cfg.get(field) is not None:
                return _positive_int(cfg[field], field, where)
        return None

    hidden = need("hidden_size")
    layers = need("num_hidden_layers")
    heads = need("num_attention_heads")
    experts = maybe(*_EXPERTS) or 0
    moe_width = maybe("moe_intermediate_size")
    if experts and "intermediate_size" not in cfg and moe_width is not None:
        inter = moe_width
    else:
        inter = need("intermediate_size")
    name = str(raw.get("_name_or_path") or path.parent.name or path.stem)
    fields: dict[str, Any] = {
        "key": _squash(name) or "user-model",
        "name": name,
        "family": model_type,
        "hidden_size": hidden,
        "num_layers": layers,
        "num_heads": heads,
        "num_kv_heads": maybe("num_key_value_heads") or heads,
        "head_dim": maybe("head_dim"),
        "intermediate_size": inter,
        "vocab_size": need("vocab_size"),
        "tie_embeddings": bool(cfg.get("tie_word_embeddings", False)),
        "qkv_bias": bool(cfg.get("attention_bias", False)) or model_type == "qwen2",
        "max_context": maybe("max_position_embeddings") or 4096,
        "kv_lora_rank": maybe("kv_lora_rank"),
        "q_lora_rank": maybe("q_lora_rank"),
        "qk_rope_head_dim": maybe("qk_rope_head_dim"),
        "qk_nope_head_dim": maybe("qk_nope_head_dim"),
        "v_head_dim": maybe("v_head_dim"),
    }
    if experts:
        fields |= {
            "num_experts": experts,
            "experts_per_token": need("num_experts_per_tok"),
            "moe_intermediate_size": moe_width,
            "shared_experts": maybe("n_shared_experts") or 0,
            "dense_layers": min(maybe("first_k_dense_replace") or 0, layers),
        }
    sliding, notes = _sliding(cfg, layers, model_type, where)
    fields |= sliding
    unknown = _unknown_type_note(model_type, cfg, hidden, heads)
    fields["assumed"] = (*assumed, *unknown, *notes)
    try:
        return ModelShape.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "shape"
        raise GpuportError(f"{where}: {loc}: {first['msg']}") from None


def _sliding(
    cfg: dict[str, Any], layers: int, model_type: str, where: str
) -> tuple[dict[str, Any], list[str]]:
    """How many layers use a sliding window, in each of the ways configs say it (+ notes)."""
    window = cfg.get("sliding_window")
    if window is None or cfg.get("use_sliding_window") is False:
        return {}, []
    size = _positive_int(window, "sliding_window", where)
    types = cfg.get("layer_types")
    notes: list[str] = []
    pattern = cfg.get("sliding_window_pattern") or _SLIDING_PATTERN.get(model_type)
    if isinstance(types, list):
        count = sum(1 for t in types if t == "sliding_attention")
    elif pattern:
        every = _positive_int(pattern, "sliding_window_pattern", where)
        count = layers - layers // every  # Gemma 3: every pattern-th layer is global
    elif cfg.get("use_sliding_window") is True and cfg.get("max_window_layers") is not None:
        # Qwen 2/3: the first max_window_layers layers attend in full, the rest slide.
        full = _positive_int(cfg["max_window_layers"], "max_window_layers", where, minimum=0)
        count = max(0, layers - full)
    elif model_type in _ALL_LAYERS_SLIDE:
        count = layers  # Mistral 7B v0.1: every layer slides
    else:
        count = 0
        notes.append(
            f"config.json sets sliding_window {size} but not which layers use it (no "
            f"layer_types or sliding_window_pattern), and model_type {model_type!r} is not "
            "one gpuport knows: every layer is counted as global, so the KV cache is an "
            "upper bound"
        )
    return ({"sliding_window": size, "sliding_layers": count} if count else {}), notes


def _positive_int(value: object, field: str, where: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise GpuportError(f"{where}: field {field!r} must be an integer, not {value!r}")
    if isinstance(value, float) and not math.isfinite(value):
        raise GpuportError(f"{where}: field {field!r} must be a finite integer, not {value!r}")
    if value != int(value):
        raise GpuportError(f"{where}: field {field!r} must be an integer, not {value!r}")
    if value < minimum:
        what = "positive" if minimum == 1 else f"at least {minimum}"
        raise GpuportError(f"{where}: field {field!r} must be {what}, not {value!r}")
    if value > MAX_CONFIG_INT:
        raise GpuportError(f"{where}: field {field!r} is above 2**40, beyond any real model")
    return int(value)
