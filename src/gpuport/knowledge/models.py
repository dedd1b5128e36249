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
import re
from functools import cache
from pathlib import Path
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuport.knowledge import KNOWLEDGE_DIR, Sourced, _entries, _merge, _user_file, _validated
from gpuport.models import GpuportError

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

    @model_validator(mode="after")
    def _consistent(self) -> Self:
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
    return re.sub(r"[\s_.-]+", "-", text)


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


def shape_from_hf_config(path: Path) -> ModelShape:
    """Read a Hugging Face ``config.json`` from disk into a :class:`ModelShape`.

    Multimodal configs keep the language model under ``text_config`` (Gemma 3, Llama 4);
    that part is used. A missing required field is named in the error, because a
    config.json cut down by hand or written for another architecture is the usual cause.
    """
    try:
        raw = json.loads(path.read_bytes())
    except OSError as exc:
        raise GpuportError(f"cannot read --model-config {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GpuportError(f"--model-config {path} is not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise GpuportError(f"--model-config {path}: expected a JSON object")
    cfg: dict[str, Any] = raw
    if isinstance(raw.get("text_config"), dict):
        cfg = {**raw, **raw["text_config"]}
    where = f"--model-config {path}"

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
    model_type = str(cfg.get("model_type", ""))
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
    fields |= _sliding(cfg, layers, model_type, where)
    try:
        return ModelShape.model_validate(fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "shape"
        raise GpuportError(f"{where}: {loc}: {first['msg']}") from None


def _sliding(cfg: dict[str, Any], layers: int, model_type: str, where: str) -> dict[str, Any]:
    """How many layers use a sliding window, in each of the ways configs say it."""
    window = cfg.get("sliding_window")
    if window is None or cfg.get("use_sliding_window") is False:
        return {}
    size = _positive_int(window, "sliding_window", where)
    types = cfg.get("layer_types")
    if isinstance(types, list):
        count = sum(1 for t in types if t == "sliding_attention")
    elif cfg.get("sliding_window_pattern"):
        pattern = _positive_int(cfg["sliding_window_pattern"], "sliding_window_pattern", where)
        count = layers - layers // pattern  # Gemma 3: every pattern-th layer is global
    elif model_type == "gemma2":
        count = layers // 2  # Gemma 2 alternates local and global layers
    else:
        count = layers  # Mistral 7B v0.1: every layer slides
    return {"sliding_window": size, "sliding_layers": count} if count else {}


def _positive_int(value: object, field: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise GpuportError(f"{where}: field {field!r} must be an integer, not {value!r}")
    if value <= 0:
        raise GpuportError(f"{where}: field {field!r} must be positive, not {value!r}")
    return int(value)
