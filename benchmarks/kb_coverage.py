"""Coverage of the bundled knowledge base (issue 15): the counts docs/knowledge.md quotes.

Counts entries per file, how many were re-checked (a `verified` list, dated on their
check) versus carried over from the bulk review, the package statuses, the gfx targets
against PyTorch's ROCm wheel architecture list, and the GPUs whose memory_bytes is a
driver-reported total rather than a nominal size. Prints a Markdown table.

    python benchmarks/kb_coverage.py
"""

from __future__ import annotations

import collections
import datetime as dt
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from gpuport.knowledge import load_packages, load_targets
from gpuport.knowledge.gpus import load_gpus
from gpuport.knowledge.models import load_models

# torch.cuda.get_arch_list() of the rocm7.2 wheels (pytorch PR #167299, uv PR #18730).
PYTORCH_ROCM72_ARCHS = [
    "gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx950", "gfx1030",
    "gfx1100", "gfx1101", "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201",
]  # fmt: skip


def main() -> int:
    packages = load_packages().packages
    targets = load_targets()
    gpus = load_gpus()
    models = load_models()
    rows = [
        ("packages.toml", len(packages), sum(1 for p in packages if p.verified)),
        ("targets.toml", len(targets), sum(1 for t in targets.values() if t.verified)),
        ("gpus.toml", len(gpus), sum(1 for g in gpus.values() if g.verified)),
        ("models.toml", len(models), sum(1 for m in models.values() if m.verified)),
    ]
    print(f"kb_coverage, {dt.date.today()}, Python {platform.python_version()}\n")
    print("| file | entries | re-checked (with `verified`) | carried over |")
    print("|---|---:|---:|---:|")
    for name, total, verified in rows:
        print(f"| {name} | {total} | {verified} | {total - verified} |")
    statuses = collections.Counter(p.status for p in packages)
    print("\npackage statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())))
    missing = [a for a in PYTORCH_ROCM72_ARCHS if a not in targets]
    print(
        f"PyTorch rocm7.2 wheel archs covered by targets.toml: "
        f"{len(PYTORCH_ROCM72_ARCHS) - len(missing)}/{len(PYTORCH_ROCM72_ARCHS)}"
        + (f" (missing {', '.join(missing)})" if missing else "")
    )
    aliases = sum(len(t.aliases) for t in targets.values())
    print(f"--target spellings: {len(targets)} gfx names + {aliases} aliases")
    reported = sorted(g.key for g in gpus.values() if g.memory_basis == "reported")
    print(f"GPUs with a driver-reported memory_bytes: {len(reported)} ({', '.join(reported)})")
    with_fp4 = sorted(g.key for g in gpus.values() if "fp4" in g.peak_tflops)
    print(f"GPUs with an fp4 peak: {', '.join(with_fp4)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
