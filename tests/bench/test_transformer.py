"""The Llama-style model and the ``transformer`` training-step workload."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
import torch

from gpuport.bench.registry import BenchContext, Measurement, Skip
from gpuport.bench.timing import summarize
from gpuport.bench.workloads import llama, transformer
from gpuport.bench.workloads.llama import LLAMA3_8B, Llama, LlamaConfig

# head_dim 4, two query heads per KV head, vocab 10.
HAND = LlamaConfig(vocab=10, hidden=8, layers=2, heads=2, kv_heads=1, ffn=16, max_seq=8)
SMALL = LlamaConfig(vocab=50, hidden=32, layers=2, heads=4, kv_heads=2, ffn=48, max_seq=16)


@pytest.mark.parametrize("tie", [False, True])
@pytest.mark.parametrize("cfg", [HAND, SMALL, transformer.TINY])
def test_param_count_matches_the_real_tensors(cfg: LlamaConfig, tie: bool) -> None:
    cfg = dataclasses.replace(cfg, tie_embeddings=tie)
    model = Llama(torch, cfg, device="cpu", dtype=torch.float32)
    assert llama.param_count(cfg) == sum(p.numel() for p in model.parameters())


def test_llama3_8b_shape_has_its_published_parameter_count() -> None:
    # 8,030,261,248 is the parameter count of Meta-Llama-3-8B.
    assert llama.param_count(LLAMA3_8B) == 8_030_261_248


def test_train_flops_per_token_by_hand() -> None:
    # One layer: norms 2*8 = 16; Q 8*8 = 64, K and V 8*4 = 32 each, O 8*8 = 64 -> 192;
    # MLP 3*8*16 = 384. Layer total 592. Non-embedding N = 2*592 + final norm 8
    # + LM head 10*8 = 1272. At seq 4: 6*1272 + 12*L(2)*h(8)*T(4) = 7632 + 768 = 8400.
    assert llama.layer_param_count(HAND) == 592
    assert llama.nonembedding_param_count(HAND) == 1272
    assert llama.train_flops_per_token(HAND, 4) == 8400
    # Tying the head changes the parameter count, not the matmul work per token.
    tied = dataclasses.replace(HAND, tie_embeddings=True)
    assert llama.param_count(tied) == llama.param_count(HAND) - 80
    assert llama.train_flops_per_token(tied, 4) == 8400


def test_quick_gpu_model_is_in_the_half_to_one_billion_range() -> None:
    assert 0.5e9 <= llama.param_count(transformer.ONE_B) <= 1.0e9
    assert 3.1e9 <= llama.param_count(transformer.THREE_B) <= 3.3e9  # Llama-3.2-3B: 3.21 B


def test_forward_is_causal() -> None:
    model = Llama(torch, SMALL, device="cpu", dtype=torch.float32, seed=3)
    tokens = torch.randint(0, SMALL.vocab, (2, 10), generator=torch.Generator().manual_seed(1))
    changed = tokens.clone()
    changed[:, 6] = (changed[:, 6] + 1) % SMALL.vocab
    a, b = model.forward(tokens), model.forward(changed)
    assert a.shape == (2, 10, SMALL.vocab)
    torch.testing.assert_close(a[:, :6], b[:, :6])
    assert not torch.allclose(a[:, 6:], b[:, 6:])


def test_enable_gqa_and_repeated_kv_compute_the_same_attention() -> None:
    tokens = torch.randint(0, SMALL.vocab, (2, 12), generator=torch.Generator().manual_seed(2))
    gqa = Llama(torch, SMALL, device="cpu", dtype=torch.float32, seed=5, enable_gqa=True)
    rep = Llama(torch, SMALL, device="cpu", dtype=torch.float32, seed=5, enable_gqa=False)
    torch.testing.assert_close(gqa.forward(tokens), rep.forward(tokens), atol=1e-5, rtol=1e-5)


def test_same_seed_same_weights_other_seed_other_weights() -> None:
    a = Llama(torch, SMALL, device="cpu", dtype=torch.float32, seed=7)
    b = Llama(torch, SMALL, device="cpu", dtype=torch.float32, seed=7)
    c = Llama(torch, SMALL, device="cpu", dtype=torch.float32, seed=8)
    assert torch.equal(a.weights["0.wq"], b.weights["0.wq"])
    assert not torch.equal(a.weights["0.wq"], c.weights["0.wq"])
    std = float(a.weights["0.w_up"].std())
    assert 0.015 < std < 0.025  # random normal init, std 0.02, not zeros or ones


def test_adamw_steps_on_one_batch_reduce_the_loss() -> None:
    """The functional weights take gradients: the step really trains."""
    model = Llama(torch, SMALL, device="cpu", dtype=torch.float32, seed=0).requires_grad_()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    tokens = torch.randint(0, SMALL.vocab, (2, 9), generator=torch.Generator().manual_seed(0))
    losses = []
    for _ in range(5):
        opt.zero_grad()
        logits = model.forward(tokens[:, :-1])
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, SMALL.vocab), tokens[:, 1:].reshape(-1)
        )
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.grad is not None for p in model.parameters())
    assert losses[-1] < losses[0] - 0.1


def test_cpu_quick_case_names_and_headline(cpu_ctx: BenchContext) -> None:
    cases = transformer.WORKLOAD.cases(cpu_ctx)
    assert [c.name for c in cases] == ["fp32 tiny seq32 batch2"]
    case = cases[0]
    assert (case.unit, case.scale, case.peak) == ("tokens/s", 1.0, None)
    assert case.params["params"] == llama.param_count(transformer.TINY)
    m = case.run(cpu_ctx)
    assert m.work_per_iter == 2 * 32
    assert m.stats.n >= cpu_ctx.model_policy.min_samples
    flops = llama.train_flops_per_token(transformer.TINY, 32)
    tokens_per_s = 64 / m.stats.median
    assert m.metrics["tflops"] == pytest.approx(flops * tokens_per_s / 1e12, rel=1e-3, abs=1e-4)
    assert m.metrics["flops_per_token"] == flops
    assert "mfu" not in m.metrics  # no spec on a CPU
    assert m.metrics["attention"] in ("sdpa enable_gqa", "sdpa repeat_kv")


def test_mfu_is_tflops_over_the_dtype_peak() -> None:
    m = Measurement(samples=[0.5, 0.5], stats=summarize([0.5, 0.5]), work_per_iter=1024)
    shape = transformer.TrainShape("hand", HAND, seq=4, batch=256)
    ctx = SimpleNamespace(torch=torch, spec=SimpleNamespace(peak_tflops={"bf16": 2e-6}))
    out = transformer._with_metrics(ctx, m, shape, "bf16", {"optimizer": "AdamW"})
    # 1024 tokens / 0.5 s = 2048 tokens/s x 8400 FLOPs = 17.2 MFLOP/s = 1.72e-5 TFLOPS.
    assert out.metrics["tflops"] == pytest.approx(1.72e-5, abs=1e-4)
    assert out.metrics["mfu"] == pytest.approx(2048 * 8400 / 1e12 / 2e-6, rel=1e-3)


def test_dtype_option_selects_model_dtypes_and_fp16_skips_on_cpu(cpu_ctx: BenchContext) -> None:
    ctx = dataclasses.replace(cpu_ctx, options={"dtypes": ["fp8", "fp16"]})
    cases = transformer.WORKLOAD.cases(ctx)
    assert [c.name for c in cases] == ["fp16 tiny seq32 batch2"]
    with pytest.raises(Skip, match="fp16 model steps are not benchmarked on CPU"):
        cases[0].run(ctx)
    # fp8 alone is a GEMM request: model steps keep their default dtype.
    ctx = dataclasses.replace(cpu_ctx, options={"dtypes": ["fp8"]})
    assert [c.name for c in transformer.WORKLOAD.cases(ctx)] == ["fp32 tiny seq32 batch2"]


def test_gpu_suites_plan_real_sizes_without_allocating(cpu_ctx: BenchContext) -> None:
    info = cpu_ctx.info.model_copy(update={"backend": "cuda"})
    quick = dataclasses.replace(cpu_ctx, info=info)
    full = dataclasses.replace(quick, suite="full")
    assert [c.name for c in transformer.WORKLOAD.cases(quick)] == ["bf16 0.9B seq2048 batch8"]
    assert [c.name for c in transformer.WORKLOAD.cases(full)] == [
        "bf16 0.9B seq2048 batch8",
        "bf16 0.9B seq4096 batch4",
        "bf16 3.2B seq2048 batch1",
    ]
