"""Benchmark: what op-level localisation costs against one forward of the module it replays.

Budget (issue 16): the op-level replay of a module takes at most 5x that module's forward.

Method: one decoder block of the ``validate_capture`` model (d=768, 12 heads, MLP 2048, fp32,
256 tokens), CPU, torch's default threads, median of N runs each after one warm-up,
interleaved:

* ``forward``: ``block(x)`` under ``torch.no_grad()`` (the baseline);
* ``replay_clean``: ``gpuport.validate.ops.replay_ops`` on the same block, judged in float32:
  every op passes through the torch-function mode, none needs recomputing (fp32 on the CPU is
  the reference computation itself);
* ``replay_bf16_sdpa``: the block with attention computed in bf16 (the defect of
  ``examples/validate``): the replay recomputes the SDPA in float64 and float32 and names it;
* ``replay_same_precision``: the second pass (issue 29), which runs only when the first names
  no op: every fp32 op of the clean block recomputed in float64 and judged against it (its
  worst case: nothing is found, so every op is recomputed).

Also times the plain forward under the op-counting mode that every capture and check trace
runs under (``counted``), since ``nn.MultiheadAttention`` and hooks see it too.
Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from validate_capture import Block

from gpuport.validate.ops import make_counter, replay_ops

_SDPA = F.scaled_dot_product_attention


def _bf16_sdpa(q: Any, k: Any, v: Any, *a: Any, **kw: Any) -> Any:
    return _SDPA(q.bfloat16(), k.bfloat16(), v.bfloat16(), *a, **kw).float()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--seq", type=int, default=256)
    args = parser.parse_args()
    torch.manual_seed(0)
    block = Block(768, 12, 2048).eval()
    x = torch.randn(1, args.seq, 768, generator=torch.Generator().manual_seed(1))
    found: dict[str, Any] = {}

    def forward() -> None:
        with torch.no_grad():
            block(x)

    def counted() -> None:
        with torch.no_grad(), make_counter(torch):
            block(x)

    def replay_clean() -> None:
        found["clean"] = replay_ops(torch, block, (x,), {}, torch.float32, [])

    def replay_same_precision() -> None:
        # the second pass (issue 29), run only when the first names no op: every fp32 op on
        # the CPU recomputed in float64 and judged against it; its worst case is a clean block
        found["same"] = replay_ops(torch, block, (x,), {}, torch.float32, [], True)

    def replay_bf16() -> None:
        F.scaled_dot_product_attention = _bf16_sdpa
        try:
            found["bf16"] = replay_ops(torch, block, (x,), {}, torch.float32, [])
        finally:
            F.scaled_dot_product_attention = _SDPA

    fns: dict[str, Callable[[], None]] = {
        "forward": forward,
        "counted": counted,
        "replay_clean": replay_clean,
        "replay_bf16_sdpa": replay_bf16,
        "replay_same_precision": replay_same_precision,
    }
    timings: dict[str, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        fn()
    for _ in range(args.runs):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            timings[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in timings.items()}
    bug = found["bf16"].found or {}
    print(
        json.dumps(
            {
                "benchmark": "validate_opreplay",
                "machine": f"{platform.machine()}, {torch.get_num_threads()} torch threads",
                "torch": torch.__version__,
                "tokens": args.seq,
                "ops_in_block": found["clean"].index,
                "named_op": bug.get("op"),
                "forward_s_median": round(med["forward"], 4),
                "counted_s_median": round(med["counted"], 4),
                "replay_clean_s_median": round(med["replay_clean"], 4),
                "replay_bf16_sdpa_s_median": round(med["replay_bf16_sdpa"], 4),
                "ratio_counted": round(med["counted"] / med["forward"], 2),
                "ratio_replay_clean": round(med["replay_clean"] / med["forward"], 2),
                "ratio_replay_bf16_sdpa": round(med["replay_bf16_sdpa"] / med["forward"], 2),
                "replay_same_precision_s_median": round(med["replay_same_precision"], 4),
                "ratio_replay_same_precision": round(
                    med["replay_same_precision"] / med["forward"], 2
                ),
                "same_precision_ops_checked": found["same"].checked,
                "same_precision_named": (found["same"].found or {}).get("op"),
                "budget_ratio": 5.0,
                "timings_s": {k: [round(t, 4) for t in v] for k, v in timings.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
