"""Draw the seeded random sample of knowledge entries for an independent spot check (issue 15).

Pools every entry of packages.toml, gpus.toml, models.toml and targets.toml (file order,
then each file's own order), draws ``--n`` of them (30) with ``random.Random(--seed)``
(20261125) and prints each with the claims a reviewer checks against its sources. The
judgments themselves are human work; they are recorded per entry in docs/knowledge.md
("Spot check 2026-11-25", "Spot check 2026-11-27"). Same seed and same pool give the same
sample.

A sample is drawn BEFORE the entries are fixed, and fixing adds entries, which changes the
pool. ``--pool FILE`` draws from a pool written earlier with ``--write-pool FILE`` (one
``file:key`` a line) and prints each drawn entry's claims as the files have them now:
``benchmarks/kb_spotcheck_pool_20261127.txt`` is the 241-entry pool both recorded checks
drew from (unchanged from 2026-11-25 to the 2026-11-27 draw, commit 1bff2c7).

    python benchmarks/kb_spotcheck.py [--seed 20261125] [--n 30] [--pool FILE] [--write-pool FILE]
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from gpuport.knowledge import load_packages, load_targets
from gpuport.knowledge.gpus import load_gpus
from gpuport.knowledge.models import load_models

SEED = 20261125


def _pool() -> list[tuple[str, str, str]]:
    """(file, key, one-line claims) for every entry, in a fixed order."""
    rows: list[tuple[str, str, str]] = []
    for p in load_packages().packages:
        claims = f"status={p.status} route={p.route.kind} min={p.min_version or '-'} | {p.summary}"
        rows.append(("packages.toml", p.name, claims))
    for g in load_gpus().values():
        peaks = " ".join(f"{k}={v:g}" for k, v in sorted(g.peak_tflops.items()))
        claims = (
            f"{g.name} arch={g.arch} mem={g.memory_bytes} ({g.memory_basis}) "
            f"bw={g.bandwidth_gbs:g}GB/s tdp={g.tdp_w}W {peaks}"
        )
        rows.append(("gpus.toml", g.key, claims))
    for m in load_models().values():
        claims = (
            f"layers={m.num_layers} hidden={m.hidden_size} heads={m.num_heads}/{m.num_kv_heads} "
            f"head_dim={m.head_dim or '-'} ffn={m.intermediate_size} vocab={m.vocab_size} "
            f"ctx={m.max_context} experts={m.num_experts}/{m.experts_per_token} "
            f"params={m.params_b}B"
        )
        rows.append(("models.toml", m.key, claims))
    for t in load_targets().values():
        claims = (
            f"{t.family}/{t.generation} wave{t.wave_size} fp8={t.fp8} lds={t.lds_kib}KiB "
            f"products={', '.join(t.products)}"
        )
        rows.append(("targets.toml", t.name, claims))
    return rows


def _frozen(path: Path, current: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """The pool listed in ``path``, each entry with its claims as the files have them now."""
    claims = {(f, k): c for f, k, c in current}
    rows: list[tuple[str, str, str]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        file, _, key = line.partition(":")
        rows.append((file, key, claims.get((file, key), "(no longer in the files)")))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--pool", type=Path, default=None, help="draw from this frozen pool")
    parser.add_argument("--write-pool", type=Path, default=None, help="save the current pool")
    args = parser.parse_args(argv)
    pool = _pool()
    if args.write_pool is not None:
        args.write_pool.write_text("".join(f"{f}:{k}\n" for f, k, _ in pool), encoding="utf-8")
    if args.pool is not None:
        try:
            pool = _frozen(args.pool, pool)
        except OSError as exc:
            print(f"kb_spotcheck: cannot read {args.pool}: {exc.strerror}", file=sys.stderr)
            return 2
    # A reproducible sample, not a secret: the seed is published with the results.
    rng = random.Random(args.seed)  # noqa: S311
    picks = sorted(rng.sample(range(len(pool)), args.n))
    print(f"kb_spotcheck: seed {args.seed}, {args.n} of {len(pool)} entries\n")
    for i, idx in enumerate(picks, 1):
        file, key, claims = pool[idx]
        print(f"{i:2d}. {file}:{key}\n    {claims}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
