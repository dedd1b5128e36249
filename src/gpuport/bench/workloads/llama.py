"""A compact Llama-style decoder shared by the ``transformer`` and ``decode`` workloads.

Why our own and not ``transformers``: the benchmark must run the *same* code on CUDA and
ROCm with nothing but torch installed, and a model whose every op is visible here is one
whose numbers can be explained. Throughput depends on shapes and dtypes, not on trained
values, so weights are random normal (research notes §4).

The model is functional on purpose: weights live in a plain dict of tensors and
``forward`` calls ``torch.nn.functional`` directly (the same kernels ``nn.Linear`` would
launch), so nothing here subclasses a torch class and torch is imported only through the
module handed in (``ctx.torch``), never when ``gpuport scan`` imports the workloads.

Architecture (Llama 2/3): RMSNorm → attention with RoPE and grouped-query attention
(SDPA with ``enable_gqa`` where flash attention can take it, otherwise K/V repeated per
query group) →
residual → RMSNorm → SwiGLU MLP → residual; final RMSNorm and an LM head (tied to the
embedding table or not). The KV cache is preallocated per layer as
``[batch, kv_heads, max_seq, head_dim]`` and ``forward(tokens, start_pos, use_cache=True)``
writes the new keys/values at ``start_pos`` before attending over ``[0, start_pos + len)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

# dtype names the model steps accept, and what they map to in torch.
MODEL_DTYPES = ("bf16", "fp16", "fp32")
_TORCH_DTYPES = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
INIT_STD = 0.02


@dataclass(frozen=True)
class LlamaConfig:
    """Shape of a Llama-style decoder; ``head_dim`` is ``hidden // heads``."""

    vocab: int
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    max_seq: int
    rope_theta: float = 500_000.0
    tie_embeddings: bool = False
    norm_eps: float = 1e-5

    def __post_init__(self) -> None:
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} is not a multiple of heads {self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}")
        if self.head_dim % 2:
            raise ValueError("RoPE needs an even head_dim")

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    def describe(self) -> dict[str, Any]:
        """The shape as plain data, for a case's ``params``."""
        return dataclasses.asdict(self)


# Llama-3-8B (h 4096, L 32, 32 heads, 8 KV heads, ffn 14336, vocab 128256): 8.03 B parameters.
LLAMA3_8B = LlamaConfig(
    vocab=128_256, hidden=4096, layers=32, heads=32, kv_heads=8, ffn=14_336, max_seq=8192
)


def layer_param_count(cfg: LlamaConfig) -> int:
    """Weights of one decoder layer: two norms, Q/K/V/O projections, the SwiGLU MLP."""
    q_out = cfg.heads * cfg.head_dim
    kv_out = cfg.kv_heads * cfg.head_dim
    attention = cfg.hidden * q_out + 2 * cfg.hidden * kv_out + q_out * cfg.hidden
    mlp = 3 * cfg.hidden * cfg.ffn
    return 2 * cfg.hidden + attention + mlp


def param_count(cfg: LlamaConfig) -> int:
    """All parameters, computed from the shape (a test checks it against the real tensors)."""
    head = 0 if cfg.tie_embeddings else cfg.vocab * cfg.hidden
    return cfg.vocab * cfg.hidden + cfg.layers * layer_param_count(cfg) + cfg.hidden + head


def nonembedding_param_count(cfg: LlamaConfig) -> int:
    """Parameters that do per-token matmul work: everything but the input embedding lookup.

    The LM head is counted, tied or not: it is a ``vocab x hidden`` matmul every token
    pays (nanoGPT's ``estimate_mfu`` and Megatron's FLOP formula count it too); the input
    embedding is a table lookup with no FLOPs, so it is left out.
    """
    return cfg.layers * layer_param_count(cfg) + cfg.hidden + cfg.vocab * cfg.hidden


def train_flops_per_token(cfg: LlamaConfig, seq: int) -> float:
    """Model FLOPs of one training token (forward + backward): ``6·N + 12·L·hidden·seq``.

    PaLM appendix B convention (Chowdhery et al. 2022, https://arxiv.org/abs/2204.02311):
    6 FLOPs per matmul weight per token (2 forward, 4 backward) plus the attention
    score and value matmuls, ``12·L·H·Q·T`` with ``H·Q = hidden`` and ``T = seq``. It
    counts model FLOPs, not hardware FLOPs: recomputation and causal masking savings
    are ignored, which is what makes MFU comparable across implementations.
    """
    return 6.0 * nonembedding_param_count(cfg) + 12.0 * cfg.layers * cfg.hidden * seq


def model_dtypes(ctx: Any, default: str) -> list[str]:
    """The dtypes to run model steps in: ``ctx.options["dtypes"]`` where it names any of
    :data:`MODEL_DTYPES`, else ``default`` (``--dtype fp8`` alone is a GEMM request; model
    steps have no fp8 path, so they keep their default rather than vanishing)."""
    requested = ctx.options.get("dtypes") or []
    chosen = [d for d in requested if d in MODEL_DTYPES]
    return chosen or [default]


def torch_dtype(torch: Any, name: str) -> Any:
    return getattr(torch, _TORCH_DTYPES[name])


def check_dtype(ctx: Any, name: str) -> None:
    """Raise Skip when this device cannot run model steps in ``name``."""
    from gpuport.bench.registry import Skip

    if name not in MODEL_DTYPES:
        raise Skip(f"model steps support {', '.join(MODEL_DTYPES)}, not {name}")
    if not ctx.on_gpu:
        if name == "fp16":
            raise Skip("fp16 model steps are not benchmarked on CPU (no fast fp16 CPU kernels)")
        return
    if name == "bf16" and not ctx.torch.cuda.is_bf16_supported():
        raise Skip("bf16 is not supported on this GPU")


def make_generator(torch: Any, device: Any, seed: int) -> Any:
    """A generator on ``device`` seeded from the run's seed, so weights and inputs repeat."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


def has_enable_gqa(torch: Any) -> bool:
    """Whether SDPA takes ``enable_gqa`` (torch 2.5+), which avoids copying K/V per group."""
    try:
        major, minor = (int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (2, 5)


class KVCache:
    """Preallocated keys and values: one ``[batch, kv_heads, max_seq, head_dim]`` pair per layer."""

    def __init__(self, torch: Any, cfg: LlamaConfig, batch: int, *, device: Any, dtype: Any):
        shape = (batch, cfg.kv_heads, cfg.max_seq, cfg.head_dim)
        self.batch = batch
        self.k = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.layers)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.layers)]

    @property
    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (*self.k, *self.v))


class Llama:
    """Random-weight Llama-style decoder: ``weights`` (name → tensor) and a functional forward."""

    def __init__(
        self,
        torch: Any,
        cfg: LlamaConfig,
        *,
        device: Any,
        dtype: Any,
        seed: int = 0,
        enable_gqa: bool | None = None,
    ) -> None:
        self.torch = torch
        self.cfg = cfg
        # None: decide per call (see _gqa_kernel); True/False force one path (tests).
        self.enable_gqa = enable_gqa
        self._gqa_ok: dict[tuple[Any, ...], bool] = {}
        self.attention_paths: set[str] = set()  # which SDPA call forms actually ran
        self.cache: KVCache | None = None
        gen = make_generator(torch, device, seed)
        h, kv_out = cfg.hidden, cfg.kv_heads * cfg.head_dim

        def normal(*shape: int) -> Any:
            w = torch.randn(shape, generator=gen, device=device, dtype=dtype)
            return w.mul_(INIT_STD)

        def ones(n: int) -> Any:
            return torch.ones(n, device=device, dtype=dtype)

        w: dict[str, Any] = {"embed": normal(cfg.vocab, h)}
        for i in range(cfg.layers):
            w[f"{i}.attn_norm"] = ones(h)
            w[f"{i}.wq"] = normal(h, h)
            w[f"{i}.wk"] = normal(kv_out, h)
            w[f"{i}.wv"] = normal(kv_out, h)
            w[f"{i}.wo"] = normal(h, h)
            w[f"{i}.mlp_norm"] = ones(h)
            w[f"{i}.w_gate"] = normal(cfg.ffn, h)
            w[f"{i}.w_up"] = normal(cfg.ffn, h)
            w[f"{i}.w_down"] = normal(h, cfg.ffn)
        w["norm"] = ones(h)
        if not cfg.tie_embeddings:
            w["head"] = normal(cfg.vocab, h)
        self.weights = w
        self.cos, self.sin = self._rope_tables(device)

    def _rope_tables(self, device: Any) -> tuple[Any, Any]:
        """cos/sin for every position up to ``max_seq``, computed in fp32 (rotate-half layout)."""
        torch, cfg = self.torch, self.cfg
        exponents = torch.arange(0, cfg.head_dim, 2, device=device, dtype=torch.float32)
        inv_freq = 1.0 / (cfg.rope_theta ** (exponents / cfg.head_dim))
        positions = torch.arange(cfg.max_seq, device=device, dtype=torch.float32)
        angles = torch.outer(positions, inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        return angles.cos(), angles.sin()

    def parameters(self) -> list[Any]:
        return list(self.weights.values())

    def requires_grad_(self, flag: bool = True) -> Llama:
        for t in self.weights.values():
            t.requires_grad_(flag)
        return self

    def allocate_cache(self, batch: int) -> KVCache:
        """Preallocate (or replace) the KV cache for ``batch`` sequences of up to ``max_seq``."""
        embed = self.weights["embed"]
        self.cache = None  # free the old one first
        self.cache = KVCache(self.torch, self.cfg, batch, device=embed.device, dtype=embed.dtype)
        return self.cache

    def _rope(self, x: Any, cos: Any, sin: Any) -> Any:
        half = x.shape[-1] // 2
        rotated = self.torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return x * cos + rotated * sin

    def _attend(self, q: Any, k: Any, v: Any, start_pos: int) -> Any:
        """SDPA over the keys so far; causal within the new tokens, all of the cached past."""
        torch, cfg = self.torch, self.cfg
        F = torch.nn.functional
        s, total = q.shape[-2], k.shape[-2]
        mask, causal = None, False
        if s > 1 and start_pos == 0:
            causal = True
        elif s > 1:  # a chunk after cached tokens: SDPA's is_causal would align top-left
            mask = torch.ones(s, total, dtype=torch.bool, device=q.device).tril(start_pos)
        groups = cfg.heads // cfg.kv_heads
        if groups > 1 and self._gqa_kernel(q, k, v, mask, causal):
            self.attention_paths.add("sdpa enable_gqa")
            return F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=causal, enable_gqa=True
            )
        if groups > 1:
            self.attention_paths.add("sdpa repeat_kv")
            k = k.repeat_interleave(groups, dim=1)
            v = v.repeat_interleave(groups, dim=1)
        else:
            self.attention_paths.add("sdpa")
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)

    def _gqa_kernel(self, q: Any, k: Any, v: Any, mask: Any, causal: bool) -> bool:
        """Whether to pass ``enable_gqa`` rather than repeat K/V for each query group.

        Only flash attention honours ``enable_gqa``; any other backend (fp32 inputs, an
        explicit mask, a GPU or ROCm build without a GQA flash kernel) silently falls
        back to the unfused math kernel, which is slower than repeating K/V
        (pytorch/pytorch#181528, huggingface/transformers#45776). So on GPUs we ask
        torch's own eligibility check once per (dtype, mask, causal) and cache the answer.
        """
        if self.enable_gqa is not None:
            return self.enable_gqa
        if not has_enable_gqa(self.torch):
            return False
        key = (q.dtype, q.device.type, mask is None, causal)
        if key not in self._gqa_ok:
            self._gqa_ok[key] = self._flash_takes_gqa(q, k, v, mask, causal)
        return self._gqa_ok[key]

    def _flash_takes_gqa(self, q: Any, k: Any, v: Any, mask: Any, causal: bool) -> bool:
        torch = self.torch
        if q.device.type != "cuda":  # CPU: tiny sizes, either path is fine
            return mask is None
        try:
            from torch.backends.cuda import SDPAParams, can_use_flash_attention

            params = SDPAParams(q, k, v, mask, 0.0, causal, True)
            return bool(can_use_flash_attention(params, False))
        except (ImportError, TypeError, RuntimeError):  # older torch: the HF heuristic
            return mask is None and q.dtype in (torch.float16, torch.bfloat16)

    def forward(
        self,
        tokens: Any,
        start_pos: int = 0,
        *,
        use_cache: bool = False,
        last_only: bool = False,
    ) -> Any:
        """Logits for ``tokens`` ([batch, seq] ids) placed at positions ``start_pos…``.

        ``use_cache`` writes this chunk's keys/values into the cache and attends over all
        cached positions before it (prefill: ``start_pos=0``; decode: one token).
        ``last_only`` computes logits for the last position only, as serving engines do
        for prefill: the full ``[batch, seq, vocab]`` logits are never needed there.
        """
        torch, cfg, w = self.torch, self.cfg, self.weights
        F = torch.nn.functional
        b, s = tokens.shape
        end = start_pos + s
        if end > cfg.max_seq:
            raise ValueError(f"positions up to {end} exceed max_seq {cfg.max_seq}")
        cache = self.cache
        if use_cache and (cache is None or cache.batch != b):
            raise ValueError("allocate_cache(batch) first")
        hd, eps, norm_shape = cfg.head_dim, cfg.norm_eps, (cfg.hidden,)
        x = F.embedding(tokens, w["embed"])
        cos = sin = None
        for i in range(cfg.layers):
            hn = F.rms_norm(x, norm_shape, w[f"{i}.attn_norm"], eps)
            q = F.linear(hn, w[f"{i}.wq"]).view(b, s, cfg.heads, hd).transpose(1, 2)
            k = F.linear(hn, w[f"{i}.wk"]).view(b, s, cfg.kv_heads, hd).transpose(1, 2)
            v = F.linear(hn, w[f"{i}.wv"]).view(b, s, cfg.kv_heads, hd).transpose(1, 2)
            if cos is None:  # same dtype as the projections (bf16 under autocast)
                cos = self.cos[start_pos:end].to(q.dtype)
                sin = self.sin[start_pos:end].to(q.dtype)
            q, k = self._rope(q, cos, sin), self._rope(k, cos, sin)
            if use_cache and cache is not None:
                cache.k[i][:, :, start_pos:end] = k
                cache.v[i][:, :, start_pos:end] = v
                k, v = cache.k[i][:, :, :end], cache.v[i][:, :, :end]
            attn = self._attend(q, k, v, start_pos)
            x = x + F.linear(attn.transpose(1, 2).reshape(b, s, cfg.hidden), w[f"{i}.wo"])
            hn = F.rms_norm(x, norm_shape, w[f"{i}.mlp_norm"], eps)
            gated = F.silu(F.linear(hn, w[f"{i}.w_gate"])) * F.linear(hn, w[f"{i}.w_up"])
            x = x + F.linear(gated, w[f"{i}.w_down"])
        if last_only:
            x = x[:, -1:]
        x = F.rms_norm(x, norm_shape, w["norm"], eps)
        return F.linear(x, w["embed"] if cfg.tie_embeddings else w["head"])

    __call__ = forward
