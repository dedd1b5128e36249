"""Fit, GPU count, tensor-parallel degree, max concurrency and training memory, by hand."""

from __future__ import annotations

import math

import pytest

from gpuport.cost import CostOptions, estimate
from gpuport.cost.memory import (
    GIB,
    activation_workspace,
    capacity_bytes,
    kv_copies,
    model_state_bytes,
    plan_training,
    tp_degrees,
    training_activations,
    valid_tp,
    vllm_defaults,
)
from gpuport.cost.shapes import count_params, kv_bytes_per_sequence, weight_bytes
from gpuport.knowledge.gpus import resolve_gpu
from gpuport.knowledge.models import load_models, resolve_model
from tests.cost.helpers import exact


def test_capacity_is_exact_bytes_else_the_datasheet_in_10e9_bytes() -> None:
    mi300x = exact("mi300x")
    assert capacity_bytes(mi300x)[0] == 205_822_885_888  # less than 192 GiB (206.16e9)
    bare = mi300x.model_copy(update={"memory_bytes": None})
    value, basis = capacity_bytes(bare)
    assert value == 192e9 and "10^9" in basis  # the safe side of a fit


def test_vllm_defaults_follow_the_engine() -> None:
    """arg_utils.py: >= 70 GiB and not an A100 -> 1024 seqs / 8192 tokens, else 256 / 2048."""
    assert vllm_defaults(exact("h100-sxm")) == (1024, 8192)
    assert vllm_defaults(exact("mi300x")) == (1024, 8192)
    assert vllm_defaults(resolve_gpu("rtx-4090")) == (256, 2048)
    a100 = exact("h100-sxm").model_copy(update={"key": "a100-80gb", "name": "NVIDIA A100 80GB"})
    assert vllm_defaults(a100) == (256, 2048)


@pytest.mark.parametrize("key", sorted(load_models()))
def test_every_tp_degree_divides_the_heads(key: str) -> None:
    shape = load_models()[key]
    degrees = tp_degrees(shape)
    assert degrees[0] == 1
    for n in degrees:
        assert shape.num_heads % n == 0
        if not shape.is_mla:
            kv = shape.num_kv_heads
            assert (kv % n == 0) if n <= kv else (n % kv == 0)


def test_tp_degrees_of_known_models() -> None:
    assert tp_degrees(resolve_model("llama-3-70b")) == [1, 2, 4, 8, 16, 32, 64]
    # Phi-4: 40 heads, 10 KV heads: 5 and 10 are valid, 4 and 8 are not.
    phi = resolve_model("phi-4")
    assert tp_degrees(phi) == [1, 2, 5, 10, 20, 40]
    assert not valid_tp(phi, 4) and not valid_tp(phi, 8)
    # Qwen2.5 7B: 28 heads over 4 KV heads.
    assert tp_degrees(resolve_model("qwen2.5-7b")) == [1, 2, 4, 28]


def test_kv_copies_grow_past_the_kv_heads_and_mla_replicates() -> None:
    llama = resolve_model("llama-3-70b")  # 8 KV heads
    assert kv_copies(llama, 4) == 1 and kv_copies(llama, 8) == 1 and kv_copies(llama, 16) == 2
    assert kv_copies(resolve_model("deepseek-v3"), 8) == 8


def test_max_concurrency_by_hand() -> None:
    """Llama 3 70B bf16 on one MI300X: (usable − weights − reserve) / KV held per sequence.

    The reserve is vLLM's: 1 GB outside torch, 1 GB of graphs, the activations of one
    8192-token prefill chunk and 1024 rows of fp32 logits for the sampler. Engines allocate
    KV pages as tokens arrive: a sequence of 1024 + 1024 tokens holds 1024 + 512 on average.
    """
    shape = resolve_model("llama-3-70b")
    counts = count_params(shape)
    kv_seq = kv_bytes_per_sequence(shape, 1024 + 512, "bf16")
    capacity = 205_822_885_888
    fixed = 2e9 + 1024 * shape.vocab_size * 4
    reserve = fixed + activation_workspace(shape, 8192)
    by_hand = math.floor((0.9 * capacity - weight_bytes(counts, "bf16") - reserve) / kv_seq)
    assert by_hand == 79
    report = estimate(shape, [exact("mi300x")], CostOptions(max_tpot_ms=0, tp=1))
    (rec,) = report.records
    assert rec.max_concurrency == by_hand and rec.concurrency == by_hand  # no target: fill it
    assert rec.reserve_gb_per_gpu == pytest.approx(reserve / 1e9)
    assert 0 <= rec.margin_gb_per_gpu < kv_seq / 1e9  # less than one more sequence left
    # Left to plan it, gpuport splits the model: the weights leave more KV room per GPU.
    (free,) = estimate(shape, [exact("mi300x")], CostOptions(max_tpot_ms=0)).records
    assert free.tp_degree is not None and free.tp_degree > 1
    assert free.concurrency > 2 * by_hand
    # 141 GB read per token on one MI300X cannot make 50 ms per token: said, not hidden.
    (one,) = estimate(shape, [exact("mi300x")], CostOptions(tp=1)).records
    assert one.target_met is False and any("no deployment meets" in n for n in one.notes)
    # Planned, the default target (50 ms per token) is met on a wider replica.
    (default,) = estimate(shape, [exact("mi300x")], CostOptions()).records
    assert default.tpot_ms is not None and default.tpot_ms <= 50.0 + 1e-6
    assert default.target_met is True and default.tp_degree is not None
    assert default.tp_degree > 1


def test_gpus_grow_with_the_concurrency_and_a_replica_holds_the_full_context() -> None:
    """Llama 3 70B bf16 on H100s, 8k-token sequences (6144 in, 4096 out: 8192 held)."""
    shape = resolve_model("llama-3-70b")
    h100 = exact("h100-sxm")
    sizes = {}
    for conc in (1, 2, 3, 200):
        opts = CostOptions(concurrency=conc, input_tokens=6144, output_tokens=4096,
                           context=10240)  # fmt: skip
        (rec,) = estimate(shape, [h100], opts).records
        assert rec.max_concurrency >= conc and rec.concurrency == conc
        assert rec.gpus_needed == (rec.tp_degree or 0) * (rec.replicas or 0)
        sizes[conc] = rec.gpus_needed
    # 141 GB of weights need two H100s, which hold two such sequences, not three.
    assert sizes[1] == 2 and sizes[2] == 2 and sizes[3] == 4
    assert sizes[200] >= 16
    # vLLM refuses to start unless one sequence of the full context fits: a 128k context
    # rules out the pair that holds 1k-token requests.
    (rec,) = estimate(shape, [h100], CostOptions(concurrency=1, context=131072)).records
    assert rec.gpus_needed is not None and rec.gpus_needed >= 4


def test_model_that_never_fits() -> None:
    tiny = resolve_gpu("rtx-4090").model_copy(
        update={"key": "tiny", "memory_gb": 1, "memory_bytes": None}
    )
    (rec,) = estimate(resolve_model("mistral-7b"), [tiny], CostOptions()).records
    assert rec.fits is False and rec.gpus_needed is None
    assert rec.decode_tokens_per_s_per_gpu is None and rec.usd_per_mtok_output is None
    assert any("does not fit even split 32 ways" in n for n in rec.notes)
    # 405B over 64 RTX 4090s does fit on paper, and says the group spans nodes.
    (big,) = estimate(
        resolve_model("llama-3-405b"), [resolve_gpu("rtx-4090")], CostOptions()
    ).records
    assert big.gpus_needed == 64 and any("wider than one 8-GPU node" in n for n in big.notes)


def test_training_memory_by_hand() -> None:
    """Mixed-precision Adam: 16 bytes/param; ZeRO-1/2/3 shard 12, 14 and 16 of them."""
    p = 8_030_000_000
    assert model_state_bytes(p, 0, 8) == 16 * p
    assert model_state_bytes(p, 1, 8) == pytest.approx(4 * p + 12 * p / 8)
    assert model_state_bytes(p, 2, 8) == pytest.approx(2 * p + 14 * p / 8)
    assert model_state_bytes(p, 3, 8) == pytest.approx(2 * p)
    shape = resolve_model("llama-3-8b")
    act = training_activations(shape, 1, 8192)
    assert act == 8192 * 4096 * 2 * 32 + 8192 * 4096 * 34
    room = 0.9 * 80 * GIB - act - 1e9
    plan = plan_training(p, 3, act, 80 * GIB, 0.9, 1e9)
    assert plan is not None and plan[0] == math.ceil(16 * p / room) == 2
    assert plan_training(p, 0, act, 80 * GIB, 0.9, 1e9) is None  # 128 GB of state on one GPU


def test_training_report() -> None:
    shape = resolve_model("llama-3-8b")
    opts = CostOptions(train=True, zero=3, given=frozenset({"zero"}))
    h100, mi300x = estimate(shape, [resolve_gpu("h100"), resolve_gpu("mi300x")], opts).records
    assert (h100.fits, h100.gpus_needed) == (False, 2)
    assert (mi300x.fits, mi300x.gpus_needed) == (True, 1)
    assert h100.train_tokens_per_s_per_gpu and h100.usd_per_mtok_train
    assert h100.decode_tokens_per_s_per_gpu is None
    never = estimate(
        resolve_model("llama-3-70b"), [resolve_gpu("h100")], CostOptions(train=True, zero=0)
    )
    assert never.records[0].gpus_needed is None


def test_never_fits_names_the_term_that_overflows() -> None:
    """Not "the weights alone" when the weights are small: the reserve, or one sequence's KV."""
    mistral, h100 = resolve_model("mistral-7b"), resolve_gpu("h100")
    (rec,) = estimate(mistral, [h100], CostOptions(overhead_gb=100)).records
    (note,) = [n for n in rec.notes if "does not fit" in n]
    assert "runtime reserve and prefill workspace alone" in note and "--overhead-gb" in note
    assert "weights" not in note
    # 2M tokens of KV: more than any split of a 24 GiB card holds next to the weights.
    opts = CostOptions(context=2**21)
    (rec,) = estimate(mistral, [resolve_gpu("rtx-4090")], opts).records
    (note,) = [n for n in rec.notes if "does not fit" in n]
    assert "sequence's KV cache needs" in note and "--kv-dtype fp8" in note
    fp8 = opts.model_copy(update={"kv_dtype": "fp8", "context": 2**22})
    (rec,) = estimate(mistral, [resolve_gpu("rtx-4090")], fp8).records
    assert not any("--kv-dtype fp8" in n for n in rec.notes)  # already fp8
    tiny = resolve_gpu("rtx-4090").model_copy(
        update={"key": "tiny", "memory_gb": 4, "memory_bytes": None}
    )
    (rec,) = estimate(resolve_model("llama-3-405b"), [tiny], CostOptions()).records
    (note,) = [n for n in rec.notes if "does not fit" in n]
    assert "weights" in note and "exceed" in note


def test_training_never_fits_names_the_term_and_no_higher_stage_at_3() -> None:
    llama8, h100 = resolve_model("llama-3-8b"), resolve_gpu("h100")
    long = CostOptions(train=True, zero=3, context=2**20)
    (rec,) = estimate(llama8, [h100], long).records
    (note,) = rec.notes
    assert rec.gpus_needed is None and "activations of 1 × 1048576 tokens" in note
    assert "higher --zero" not in note and "--context" in note
    (rec,) = estimate(llama8, [h100], CostOptions(train=True, overhead_gb=200)).records
    assert "--overhead-gb 200 alone" in rec.notes[0] and "higher --zero" not in rec.notes[0]
    (rec,) = estimate(resolve_model("llama-3-70b"), [h100], CostOptions(train=True, zero=0)).records
    assert "keeps whole on every GPU" in rec.notes[0] and "higher --zero stage" in rec.notes[0]
