"""Long fuzz runs over every parser gpuport runs on untrusted files (issue 14; `make fuzz`).

A seeded mutation fuzzer over the targets of ``tests/security/fuzz_targets.py``: each
input is a seed from the target's corpus (real fixtures), random bytes, or a mix, with
kind-specific tokens inserted (``<<<``, ``R"(``, ``-r``, deep brackets, 5,000-digit
numbers, NUL bytes ...), chunks deleted, duplicated, flipped or truncated. Any exception
that escapes a target is a crash; an input that runs over ``--hang-s`` seconds is a hang.
Crashing and hanging inputs are saved under ``--out`` to reproduce. The run is
deterministic for a given ``--seed``.

    python tools/fuzz.py [--inputs 1000000] [--targets cxx,bench-json] [--seed 1] [--out DIR]

Prints inputs tried, crashes and hangs per target, and exits 1 if there were any.
"""

from __future__ import annotations

import argparse
import random
import signal
import sys
import time
import traceback
import warnings
from pathlib import Path
from types import FrameType

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from tests.security.fuzz_targets import TARGETS, seeds  # noqa: E402

TOKENS: tuple[bytes, ...] = (
    b"<<<", b">>>", b"<", b"asm(", b"__shfl_sync(", b'R"x(', b')x"', b"/*", b"*/", b"//",
    b"#if 0\n", b"#endif\n", b"#include <cuda.h>\n", b"\\\n", b"'", b'"', b"(", b")", b"{", b"}",
    b"[", b"]", b"-r ", b"-c ", b"--index-url ", b"torch==", b"\x00", b"\xff", b"\n", b"\t",
    b"import ", b"from ", b" as ", b"torch.cuda.", b"RUN ", b"FROM ", b" \\\n", b"[tool.gpuport]\n",
    b"=", b"9" * 5000, b"1e999", b"NaN", b"-5", b"[" * 2000, b"{\"a\":" * 500, b"\"\"\"",
    b"__global__ ", b"hipLaunchKernelGGL(", b"cudaMalloc(", b"\u202e".decode().encode(),
)  # fmt: skip


class Hang(Exception):
    pass


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def mutate(rng: random.Random, corpus: tuple[bytes, ...]) -> bytes:
    roll = rng.random()
    if roll < 0.08 or not corpus:
        return rng.randbytes(rng.randint(0, 512))
    data = bytearray(rng.choice(corpus))
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(7)
        pos = rng.randint(0, len(data))
        if op == 0:
            tok = rng.choice(TOKENS)
            data[pos:pos] = tok * (rng.randint(1, 300) if rng.random() < 0.1 else 1)
        elif op == 1 and data:
            end = min(len(data), pos + rng.randint(1, 64))
            del data[pos:end]
        elif op == 2 and data:
            end = min(len(data), pos + rng.randint(1, 256))
            data[pos:pos] = data[pos:end] * rng.randint(1, 4)
        elif op == 3 and data:
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif op == 4:
            del data[pos:]
        elif op == 5 and len(corpus) > 1:
            other = rng.choice(corpus)
            cut = rng.randint(0, len(other))
            data[pos:] = other[cut:]
        else:
            data[pos:pos] = rng.randbytes(rng.randint(1, 16))
    return bytes(data[:200_000])


def run(names: list[str], inputs: int, seed: int, hang_s: int, out: Path, time_s: float = 0) -> int:
    signal.signal(signal.SIGALRM, _alarm)
    warnings.simplefilter("ignore")
    per_target = max(1, inputs // len(names))
    total_crashes = total_hangs = total = 0
    started = time.perf_counter()
    print(f"{'target':<15} {'inputs':>9} {'crashes':>8} {'hangs':>6} {'slowest s':>10} {'s':>8}")
    for name in names:
        target = TARGETS[name]
        corpus = seeds(name)
        rng = random.Random(f"{seed}:{name}")  # noqa: S311 - reproducible inputs, not secrets
        crashes = hangs = 0
        slowest = 0.0
        t0 = time.perf_counter()
        # with a time budget, each target gets its share of it (so every parser is fuzzed)
        deadline = t0 + time_s / len(names) if time_s else float("inf")
        done = 0
        for i in range(per_target):
            if time.perf_counter() > deadline:
                break
            done += 1
            data = mutate(rng, corpus)
            begin = time.perf_counter()
            signal.alarm(hang_s)
            try:
                target(data)
            except Hang:
                hangs += 1
                _save(out, name, "hang", i, data, "")
            except Exception:
                crashes += 1
                _save(out, name, "crash", i, data, traceback.format_exc())
            finally:
                signal.alarm(0)
            slowest = max(slowest, time.perf_counter() - begin)
            if (i + 1) % 5_000 == 0:
                print(f"# {name}: {i + 1} inputs, {crashes} crashes, {hangs} hangs", flush=True)
        total += done
        total_crashes += crashes
        total_hangs += hangs
        elapsed = time.perf_counter() - t0
        print(f"{name:<15} {done:>9} {crashes:>8} {hangs:>6} {slowest:>10.3f} {elapsed:>8.0f}")
        sys.stdout.flush()
    wall = time.perf_counter() - started
    print(f"total: {total} inputs, {total_crashes} crashes, {total_hangs} hangs in {wall:.0f} s")
    return 1 if total_crashes or total_hangs else 0


def _save(out: Path, name: str, what: str, i: int, data: bytes, trace: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"{name}-{what}-{i}"
    stem.with_suffix(".bin").write_bytes(data)
    if trace:
        stem.with_suffix(".txt").write_text(trace)
        print(f"{name}: crash on input {i}: {trace.strip().splitlines()[-1]}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=1_000_000, help="in total, split evenly")
    ap.add_argument("--targets", default="", help="comma-separated (default: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hang-s", type=int, default=10, help="an input slower than this hangs")
    ap.add_argument("--out", type=Path, default=Path("build/fuzz"), help="crashing inputs")
    ap.add_argument("--time-s", type=float, default=0, help="stop after this long (0: never)")
    args = ap.parse_args(argv)
    names = [n for n in args.targets.split(",") if n] or list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        ap.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    return run(names, args.inputs, args.seed, args.hang_s, args.out, args.time_s)


if __name__ == "__main__":
    sys.exit(main())
