"""Benchmark: does `validate check` name the right module and op, and what does it cost?

Runs the scenarios of issue 16 end to end through the library (capture on "A", check on "B",
both on this CPU) on ``examples/validate/hf_style.py`` and ``examples/validate/mha.py`` and,
when ``transformers`` is importable, on a real ``transformers.LlamaForCausalLM`` (tiny random
config, sdpa attention) and on torch's own ``nn.TransformerEncoder``. For each: the verdict,
the first divergence, the op named inside it, the weights flag, and the wall time of capture and
check. Prints JSON.
"""

from __future__ import annotations

import json
import platform
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

import torch

from gpuport.validate.capture import CaptureOptions, capture
from gpuport.validate.check import CheckOptions, check

ROOT = Path(__file__).resolve().parents[1]
EX = ROOT / "examples" / "validate"
sys.path.insert(0, str(EX))

import mha  # noqa: E402  (the example, imported as a module for its defect)


def encoder() -> tuple[Any, Any]:
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True, dropout=0.0)
    model = torch.nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
    return model, torch.randn(2, 20, 64, generator=torch.Generator().manual_seed(3))


def encoder_bf16_attention() -> tuple[Any, Any]:
    model, x = encoder()
    for mod in model.modules():
        if isinstance(mod, torch.nn.MultiheadAttention):
            mod.forward = types.MethodType(mha._patched, mod)  # type: ignore[method-assign]
    return model, x


def llama() -> tuple[Any, Any]:
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=176,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
    )
    cfg._attn_implementation = "sdpa"
    ids = torch.randint(0, 128, (2, 24), generator=torch.Generator().manual_seed(5))
    return LlamaForCausalLM(cfg), {"input_ids": ids, "use_cache": False}


def llama_bf16_attention() -> tuple[Any, Any]:
    model, inputs = llama()
    for mod in model.modules():
        if type(mod).__name__ == "LlamaAttention":
            mod.forward = types.MethodType(mha._patched, mod)  # type: ignore[method-assign]
    return model, inputs


def run(a_ref: str, b_ref: str, tmp: Path, **kw: Any) -> dict[str, Any]:
    out = tmp / "a.gpv"
    t0 = time.perf_counter()
    capture(CaptureOptions(model_ref=a_ref, out=out))
    t1 = time.perf_counter()
    report = check(CheckOptions(path=out, model_ref=b_ref, **kw))
    t2 = time.perf_counter()
    first = next(
        (r for r in report.rows if r.path == report.first_divergence and r.kind == "output"),
        None,
    )
    return {
        "b": b_ref.rsplit(":", 1)[-1] + (f" {kw}" if kw else ""),
        "verdict": report.verdict.value,
        "first_divergence": report.first_divergence,
        "status": first.status.value if first else None,
        "op": first.first_op.op if first and first.first_op else None,
        "reason": (first.reason[:120] if first else None),
        "weights_differ": report.weights_differ,
        "left_out": len(report.left_out),
        "capture_s": round(t1 - t0, 2),
        "check_s": round(t2 - t1, 2),
    }


def main() -> None:
    me = Path(__file__).resolve()
    hf, mh = EX / "hf_style.py", EX / "mha.py"
    cases: list[tuple[str, str, dict[str, Any]]] = [
        (f"{hf}:build", f"{hf}:build", {}),
        (f"{hf}:build", f"{hf}:build_bf16_attention", {}),
        (f"{hf}:build", f"{hf}:build_autocast", {}),
        (f"{hf}:build", f"{hf}:build_perturbed", {}),
        (f"{hf}:build", f"{hf}:build", {"precision": "bf16"}),
        (f"{hf}:build", f"{hf}:build_fp8_down_proj", {"precision": "bf16"}),
        (f"{mh}:build", f"{mh}:build_bf16_attention", {}),
        (f"{me}:encoder", f"{me}:encoder_bf16_attention", {}),
    ]
    try:
        import transformers  # noqa: F401

        cases.append((f"{me}:llama", f"{me}:llama_bf16_attention", {}))
    except ImportError:
        pass
    results = []
    for a_ref, b_ref, kw in cases:
        with tempfile.TemporaryDirectory() as tmp:
            results.append(run(a_ref, b_ref, Path(tmp), **kw))
    print(
        json.dumps(
            {
                "benchmark": "validate_attention",
                "machine": f"{platform.machine()}, {torch.get_num_threads()} torch threads",
                "torch": torch.__version__,
                "results": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
