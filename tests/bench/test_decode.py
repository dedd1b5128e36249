"""The ``decode`` workload: the KV cache is numerically right, and the cases time what they say."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from gpuport.bench.registry import BenchContext, Skip
from gpuport.bench.workloads import decode, llama
from gpuport.bench.workloads.llama import Llama, LlamaConfig

CFG = LlamaConfig(vocab=64, hidden=32, layers=2, heads=4, kv_heads=2, ffn=48, max_seq=20)


def _tokens(batch: int, length: int, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, CFG.vocab, (batch, length), generator=gen)


@pytest.mark.parametrize("enable_gqa", [True, False])
def test_prefill_then_cached_decode_equals_one_full_forward(enable_gqa: bool) -> None:
    model = Llama(torch, CFG, device="cpu", dtype=torch.float32, seed=1, enable_gqa=enable_gqa)
    seq = _tokens(3, 14)
    full = model.forward(seq)  # no cache: causal attention over the whole sequence
    model.allocate_cache(3)
    prompt = 9
    got = [model.forward(seq[:, :prompt], 0, use_cache=True)]
    for pos in range(prompt, seq.shape[1]):
        got.append(model.forward(seq[:, pos : pos + 1], pos, use_cache=True))
    torch.testing.assert_close(torch.cat(got, dim=1), full, atol=1e-5, rtol=1e-5)


def test_chunked_prefill_after_cached_tokens_uses_the_right_causal_mask() -> None:
    """A multi-token chunk at start_pos > 0 sees all cached tokens and is causal within itself."""
    model = Llama(torch, CFG, device="cpu", dtype=torch.float32, seed=2)
    seq = _tokens(2, 16, seed=4)
    full = model.forward(seq)
    model.allocate_cache(2)
    first = model.forward(seq[:, :5], 0, use_cache=True)
    second = model.forward(seq[:, 5:12], 5, use_cache=True, last_only=False)
    last = model.forward(seq[:, 12:], 12, use_cache=True, last_only=True)
    torch.testing.assert_close(torch.cat([first, second], dim=1), full[:, :12], atol=1e-5, rtol=0)
    assert last.shape == (2, 1, CFG.vocab)
    torch.testing.assert_close(last, full[:, -1:], atol=1e-5, rtol=0)


def test_rewriting_one_slot_is_repeatable() -> None:
    """The timed decode step overwrites the same cache slot: every call gives the same answer."""
    model = Llama(torch, CFG, device="cpu", dtype=torch.float32, seed=3)
    model.allocate_cache(2)
    model.forward(_tokens(2, 10), 0, use_cache=True)
    token = _tokens(2, 1, seed=9)
    a = model.forward(token, 10, use_cache=True)
    b = model.forward(token, 10, use_cache=True)
    assert torch.equal(a, b)


def test_cache_layout_and_bounds() -> None:
    model = Llama(torch, CFG, device="cpu", dtype=torch.float32)
    cache = model.allocate_cache(4)
    assert len(cache.k) == len(cache.v) == CFG.layers
    assert cache.k[0].shape == (4, CFG.kv_heads, CFG.max_seq, CFG.head_dim)
    assert cache.nbytes == 2 * CFG.layers * 4 * CFG.kv_heads * CFG.max_seq * CFG.head_dim * 4
    with pytest.raises(ValueError, match="exceed max_seq"):
        model.forward(_tokens(4, 1), CFG.max_seq, use_cache=True)
    with pytest.raises(ValueError, match="allocate_cache"):
        model.forward(_tokens(2, 1), 0, use_cache=True)  # cache is for batch 4


def test_step_bytes_by_hand() -> None:
    # One layer: norms 2*32 = 64; Q and O 32*32 = 1,024 each, K and V 16*32 = 512 each;
    # MLP 3*32*48 = 4,608 -> 7,744. Weights read: 2 layers + final norm 32 + LM head
    # 64*32 = 2,048 -> 17,568 values.
    # KV: 2 (K,V) x 2 layers x 2 kv heads x head_dim 8 x context 10 x batch 3 = 1,920.
    assert llama.layer_param_count(CFG) == 7744
    assert decode.step_bytes(CFG, batch=3, context=10, elem_bytes=2) == (17_568 + 1_920) * 2


def test_cpu_quick_cases(cpu_ctx: BenchContext) -> None:
    names = [c.name for c in decode.WORKLOAD.cases(cpu_ctx)]
    assert names == [
        "fp32 tiny prefill batch1 prompt16",
        "fp32 tiny decode batch1 ctx21",
        "fp32 tiny prefill batch4 prompt16",
        "fp32 tiny decode batch4 ctx21",
    ]
    assert all(c.unit == "tokens/s" and c.scale == 1.0 for c in decode.WORKLOAD.cases(cpu_ctx))


def test_decode_case_times_one_token_per_sequence(cpu_ctx: BenchContext) -> None:
    case = decode.WORKLOAD.cases(cpu_ctx)[3]  # decode, batch 4
    assert case.params["position"] == 16 + 8 // 2
    m = case.run(cpu_ctx)
    assert m.work_per_iter == 4  # headline = batch / median step time
    assert m.metrics["per_token_latency_ms"] == pytest.approx(m.stats.median * 1e3, rel=1e-3)
    assert m.metrics["context"] == 21
    cfg = decode.TINY
    assert m.metrics["kv_cache_bytes"] == 2 * cfg.layers * 4 * cfg.kv_heads * 24 * cfg.head_dim * 4
    assert m.metrics["bytes_per_step"] == decode.step_bytes(cfg, 4, 21, 4)
    assert "mbu" not in m.metrics  # no spec on a CPU


def test_prefill_case_reports_prompt_tokens_and_ttft(cpu_ctx: BenchContext) -> None:
    case = decode.WORKLOAD.cases(cpu_ctx)[2]  # prefill, batch 4
    m = case.run(cpu_ctx)
    assert m.work_per_iter == 4 * 16
    assert m.metrics["ttft_ms"] == pytest.approx(m.stats.median * 1e3, rel=1e-3)


def test_fp16_skips_on_cpu(cpu_ctx: BenchContext) -> None:
    ctx = dataclasses.replace(cpu_ctx, options={"dtypes": ["fp16"]})
    case = decode.WORKLOAD.cases(ctx)[0]
    assert case.name.startswith("fp16 ")
    with pytest.raises(Skip, match="fp16"):
        case.run(ctx)


def test_gpu_plans(cpu_ctx: BenchContext) -> None:
    gpu = dataclasses.replace(cpu_ctx, info=cpu_ctx.info.model_copy(update={"backend": "rocm"}))
    quick = decode.WORKLOAD.cases(gpu)
    assert [c.params["batch"] for c in quick] == [1, 1, 8, 8, 32, 32]
    assert quick[1].name == "bf16 llama3-8b-8L decode batch1 ctx545"
    assert 2.7e9 < quick[0].params["params"] < 2.9e9  # 8 of Llama-3-8B's 32 layers
    full = decode.WORKLOAD.cases(dataclasses.replace(gpu, suite="full"))
    assert len(full) == 2 * (5 + 3)
    assert full[0].params["params"] == 8_030_261_248
