"""Long fuzz runs over every reader of project or result files (issues 14 and 23; ``make fuzz``).

Each target of ``tests/security/fuzz_targets.py`` is fuzzed in its own process, coverage-
guided by atheris (libFuzzer): gpuport's modules are instrumented, inputs that reach new code
join the target's corpus (``OUT/corpus/TARGET``) and are mutated further. Each target starts
from its committed seeds (fixtures, tests/security/seeds) and, with ``--seeds DIR``, from
``DIR/TARGET/*`` (small files taken from real repositories, kept outside the repository:
``tools/fuzz_seeds.py`` collects them). A target runs for ``--time-s`` seconds or ``--inputs``
inputs, whichever comes first; ``--jobs`` targets run at once.

Any exception a target lets through is a crash, an input slower than ``--hang-s`` a hang,
more than ``--rss-mb`` of memory a leak: libFuzzer stops the target and leaves the input in
``OUT/artifacts/TARGET``. After fuzzing, each target's corpus is replayed under coverage.py:
the report gives, per target, the inputs run, crashes, hangs, libFuzzer's edge coverage and
the lines of gpuport it reached (of the statements in the modules it touched), in a table and
in ``OUT/fuzz-results.json``. Exit 1 on any crash or hang.

    python tools/fuzz.py [--time-s 300] [--inputs 0] [--targets cxx,bench-json] [--jobs 2]
        [--seeds /work/trees/fuzz-seeds] [--out build/fuzz] [--engine atheris|mutate]

``--engine mutate`` is the earlier seeded mutation fuzzer (no coverage guidance, no atheris).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "src"))

from tests.security.fuzz_targets import TARGETS, seeds  # noqa: E402

_DONE = re.compile(r"#(\d+)\s+DONE\s+cov: (\d+) ft: (\d+) corp: (\d+)")
_STAT = re.compile(r"stat::number_of_executed_units:\s*(\d+)")
_COV = re.compile(r"#\d+\s+\w+\s+cov: (\d+) ft: (\d+)")


def _prepare_seeds(out: Path, name: str, extra: Path | None) -> Path:
    folder = out / "seeds" / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for i, data in enumerate(seeds(name)):
        (folder / f"committed-{i:04d}").write_bytes(data)
    if extra is not None and (extra / name).is_dir():
        for i, path in enumerate(sorted((extra / name).iterdir())):
            if path.is_file() and path.stat().st_size <= 65536:
                (folder / f"real-{i:05d}").write_bytes(path.read_bytes())
    return folder


def _atheris(name: str, args: argparse.Namespace) -> dict[str, Any]:
    out: Path = args.out
    corpus = out / "corpus" / name
    artifacts = out / "artifacts" / name
    logs = out / "logs"
    for d in (corpus, artifacts, logs):
        d.mkdir(parents=True, exist_ok=True)
    seed_dir = _prepare_seeds(out, name, args.seeds)
    argv = [
        sys.executable, str(REPO / "tools" / "fuzz_atheris.py"), name,
        f"-timeout={args.hang_s}", f"-rss_limit_mb={args.rss_mb}", "-max_len=65536",
        "-print_final_stats=1", f"-artifact_prefix={artifacts}/", f"-seed={args.seed}",
        str(corpus), str(seed_dir),
    ]  # fmt: skip
    if args.time_s:
        argv.insert(3, f"-max_total_time={int(args.time_s)}")
    if args.inputs:
        argv.insert(3, f"-runs={args.inputs}")
    started = time.time()
    with (logs / f"{name}.log").open("w") as log:
        done = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=False)
    text = (logs / f"{name}.log").read_text(errors="replace")
    runs = [int(m.group(1)) for m in _STAT.finditer(text)]
    last = list(_COV.finditer(text))
    arts = sorted(p.name for p in artifacts.iterdir())
    return {
        "target": name,
        "inputs": runs[-1] if runs else 0,
        "crashes": sum(a.startswith("crash-") for a in arts),
        "hangs": sum(a.startswith(("timeout-", "slow-unit-")) for a in arts),
        "ooms": sum(a.startswith(("oom-", "leak-")) for a in arts),
        "edges": int(last[-1].group(1)) if last else 0,
        "features": int(last[-1].group(2)) if last else 0,
        "corpus": len(list(corpus.iterdir())),
        "seconds": round(time.time() - started),
        "returncode": done.returncode,
        "artifacts": arts,
    }


def _replay_coverage(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """The target's corpus and seeds run once under coverage.py: lines of gpuport reached."""
    data = args.out / "coverage" / f"{name}.cov"
    data.parent.mkdir(parents=True, exist_ok=True)
    argv = [
        sys.executable, "-m", "coverage", "run", f"--data-file={data}",
        f"--source={REPO / 'src' / 'gpuport'}", str(Path(__file__).resolve()), "--replay", name,
        "--out", str(args.out),
    ]  # fmt: skip
    subprocess.run(argv, check=False, capture_output=True)
    report = data.with_suffix(".json")
    subprocess.run(
        [sys.executable, "-m", "coverage", "json", f"--data-file={data}", "-o", str(report)],
        check=False,
        capture_output=True,
    )
    if not report.exists():
        return {"lines_covered": 0, "lines_in_touched_modules": 0, "line_pct": 0.0}
    files = json.loads(report.read_text())["files"]
    covered = sum(f["summary"]["covered_lines"] for f in files.values())
    touched = sum(f["summary"]["num_statements"] for f in files.values() if f["executed_lines"])
    return {
        "lines_covered": covered,
        "lines_in_touched_modules": touched,
        "line_pct": round(100 * covered / touched, 1) if touched else 0.0,
    }


def _replay(name: str, out: Path) -> None:
    target = TARGETS[name]
    warnings.simplefilter("ignore")
    for folder in (out / "corpus" / name, out / "seeds" / name):
        for path in sorted(folder.iterdir()) if folder.is_dir() else []:
            try:
                target(path.read_bytes())
            except Exception:  # counted by the fuzzing itself; the replay measures lines
                traceback.print_exc()


def _table(rows: list[dict[str, Any]]) -> None:
    head = f"{'target':<16} {'inputs':>9} {'crash':>5} {'hang':>4} {'oom':>3} {'edges':>6}"
    print(head + f" {'lines':>6} {'of':>6} {'%':>5} {'corpus':>6} {'s':>6}")
    for r in rows:
        lines = f"{r.get('lines_covered', 0):>6} {r.get('lines_in_touched_modules', 0):>6}"
        print(
            f"{r['target']:<16} {r['inputs']:>9} {r['crashes']:>5} {r['hangs']:>4} {r['ooms']:>3}"
            f" {r['edges']:>6} {lines} {r.get('line_pct', 0):>5} {r['corpus']:>6} {r['seconds']:>6}"
        )
    total = sum(r["inputs"] for r in rows)
    bad = sum(r["crashes"] + r["hangs"] + r["ooms"] for r in rows)
    print(f"total: {total} inputs over {len(rows)} targets, {bad} crashes/hangs/ooms")


def run_atheris(names: list[str], args: argparse.Namespace) -> int:
    args.out.mkdir(parents=True, exist_ok=True)

    def one(name: str) -> dict[str, Any]:
        row = _atheris(name, args)
        row.update(_replay_coverage(name, args))
        print(f"# {name}: {row['inputs']} inputs, {row['crashes']} crashes, {row['hangs']} hangs,"
              f" {row['line_pct']}% of the lines it touched", flush=True)  # fmt: skip
        return row

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(one, names))
    meta = {"date": time.strftime("%Y-%m-%d %H:%M %Z"), "argv": sys.argv[1:], "rows": rows}
    (args.out / "fuzz-results.json").write_text(json.dumps(meta, indent=1) + "\n")
    _table(rows)
    return 1 if any(r["crashes"] or r["hangs"] or r["ooms"] for r in rows) else 0


# --- the seeded mutation fuzzer (no coverage guidance) -----------------------------------

TOKENS: tuple[bytes, ...] = (
    b"<<<", b">>>", b"<", b"asm(", b"__shfl_sync(", b'R"x(', b')x"', b"/*", b"*/", b"//",
    b"#if 0\n", b"#endif\n", b"#include <cuda.h>\n", b"\\\n", b"'", b'"', b"(", b")", b"{", b"}",
    b"[", b"]", b"-r ", b"-c ", b"--index-url ", b"torch==", b"\x00", b"\xff", b"\n", b"\t",
    b"import ", b"from ", b" as ", b"torch.cuda.", b"RUN ", b"FROM ", b" \\\n", b"[tool.gpuport]\n",
    b"=", b"9" * 5000, b"1e999", b"NaN", b"-5", b"[" * 2000, b"{\"a\":" * 500, b"\"\"\"",
    b"__global__ ", b"hipLaunchKernelGGL(", b"cudaMalloc(", b"\u202e".decode().encode(),
    b"*a", b"!", b"**/", b"$(", b"${", b"set(", b"if(", b"\x00\x00",
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


def run_mutate(
    names: list[str], inputs: int, seed: int, hang_s: int, out: Path, time_s: float
) -> int:
    signal.signal(signal.SIGALRM, _alarm)
    warnings.simplefilter("ignore")
    per_target = max(1, inputs // len(names)) if inputs else 10**12
    total_crashes = total_hangs = total = 0
    print(f"{'target':<16} {'inputs':>9} {'crashes':>8} {'hangs':>6} {'slowest s':>10} {'s':>8}")
    for name in names:
        target = TARGETS[name]
        corpus = seeds(name)
        rng = random.Random(f"{seed}:{name}")  # noqa: S311 - reproducible inputs, not secrets
        crashes = hangs = done = 0
        slowest = 0.0
        t0 = time.perf_counter()
        deadline = t0 + time_s / len(names) if time_s else float("inf")
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
        total += done
        total_crashes += crashes
        total_hangs += hangs
        elapsed = time.perf_counter() - t0
        print(f"{name:<16} {done:>9} {crashes:>8} {hangs:>6} {slowest:>10.3f} {elapsed:>8.0f}")
        sys.stdout.flush()
    print(f"total: {total} inputs, {total_crashes} crashes, {total_hangs} hangs")
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
    ap.add_argument("--engine", choices=("atheris", "mutate"), default="atheris")
    ap.add_argument("--time-s", type=float, default=300, help="per target (atheris); 0: none")
    ap.add_argument("--inputs", type=int, default=0, help="per target (atheris) or in all")
    ap.add_argument("--targets", default="", help="comma-separated (default: all)")
    ap.add_argument("--jobs", type=int, default=1, help="targets fuzzed at once")
    ap.add_argument("--seeds", type=Path, default=None, help="DIR/TARGET/* seed files")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hang-s", type=int, default=10, help="an input slower than this hangs")
    ap.add_argument("--rss-mb", type=int, default=4096, help="memory a target may use")
    ap.add_argument("--out", type=Path, default=Path("build/fuzz"))
    ap.add_argument("--replay", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.replay:
        _replay(args.replay, args.out)
        return 0
    names = [n for n in args.targets.split(",") if n] or list(TARGETS)
    unknown = [n for n in names if n not in TARGETS]
    if unknown:
        ap.error(f"unknown target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
    if args.engine == "mutate":
        total = args.inputs or 1_000_000
        return run_mutate(names, total, args.seed, args.hang_s, args.out, args.time_s)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    return run_atheris(names, args)


if __name__ == "__main__":
    sys.exit(main())
