"""Benchmark for issue 18: do ``hipify --wave64 fix``'s decisions match a careful human's?

HeCBench (github.com/zjin-lcf/HeCBench) has, for each benchmark, a CUDA version ``src/NAME-cuda``
and a hand-written HIP port ``src/NAME-hip``. This script compares, line by line, where
gpuport's wave64 pass rewrote a 32-lane site and where the hand port did.

* Files: every ``.cu/.cuh/.h/.hpp/.cpp`` of ``NAME-cuda`` with a counterpart of the same
  relative path in ``NAME-hip`` (``.cu`` may be ``.cpp``/``.hip`` there), plus ``Makefile`` and
  ``CMakeLists.txt`` (the ``-DWARP_SIZE=32`` flags).
* The hand port's decision at a CUDA line: the line falls in a changed block of a ``difflib``
  alignment of the two files, the line holds a 32-lane token (``32``, ``31``, ``16``, ``>> 5``,
  ``0xffffffff``, ``__popc``, ``1 <<``, ``__ballot``) and the hand's replacement block holds a
  64-lane token that the CUDA block lacks (``64``, ``63``, ``WarpSize``/``warpSize``, ``GFX9``,
  ``__popcll``, ``long long``, ``uint64_t``, ``1ULL``...). A change made only for the maskless
  HIP API (``__shfl_sync(0xffffffff, v, 1)`` -> ``__shfl(v, 1)``) is not a wave64 decision.
* gpuport's decision at a CUDA line: ``translate(..., hip_version="5.2", wave64="fix")`` (HIP
  5.2: the hand ports target the maskless API too) lists a rewrite on that line
  (:class:`~gpuport.hipify.wave64.WaveChange`); for build files, ``rewrite_build_file(...,
  wave64=True)`` changed a warp-size flag there.
* Sites: the union of lines either side changed, plus lines gpuport left as ambiguous. A site
  agrees when both sides made the same decision (both changed, or both left it).

Benchmarks: by default every pair whose hand port has at least one wave64 change by the rule
above (``--min-hand 1``), or the names given. Prints a Markdown table (per benchmark, per kind)
and, with ``--json``, the sites.

    python benchmarks/hipify_wave64_eval.py HECBENCH/src [NAME ...] [--json out.json]
    python benchmarks/hipify_wave64_eval.py HECBENCH/src --robustness

``--robustness`` instead translates every ``.cu/.cuh/.h`` of every ``*-cuda`` folder (up to
400 KB) with ``--wave64 fix`` twice and counts crashes, outputs that change on the second pass,
and the sites ported and left per kind.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from collections import Counter
from pathlib import Path

from gpuport.hipify.buildfiles import rewrite_build_file
from gpuport.hipify.translate import translate
from gpuport.scan.rules import FileKind

SOURCES = (".cu", ".cuh", ".h", ".hpp", ".cpp")
BUILDS = {"Makefile": FileKind.MAKEFILE, "CMakeLists.txt": FileKind.CMAKE}
W32 = re.compile(
    r"\b32\b|\b31\b|\b16\b|0x1[fF]\b|>>\s*5\b|0x[fF]{8}[uU]?\b|__popc\s*\(|__ffs\s*\("
    r"|__clz\s*\(|\b1[uU]?\s*<<|-1\s*<<|__ballot"
)
W64 = re.compile(
    r"\b64\b|\b63\b|0x3[fF]\b|>>\s*6\b|(?i:warp_?size|wave_?size|wavefront|\bwave64)|GFX9"
    r"|__popcll|__ffsll|__clzll|long\s+long|unsigned\s+long|uint64_t|\b1[uU]?[lL]{2}\b"
    r"|0x[fF]{16}|GPUPORT"
)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def _code(line: str) -> str:
    return _STRING.sub('""', line).split("//")[0]


def _hip_counterpart(hip_dir: Path, rel: Path) -> Path | None:
    for cand in (rel, rel.with_suffix(".cpp"), rel.with_suffix(".hip"), rel.with_suffix(".cu")):
        if (hip_dir / cand).is_file():
            return hip_dir / cand
    return None


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def hand_changed(cuda: str, hip: str) -> set[int]:
    """1-based CUDA lines that the hand port changed in a wave64 way (see the docstring)."""
    a = cuda.splitlines()
    b = hip.splitlines()
    sm = difflib.SequenceMatcher(None, [x.strip() for x in a], [x.strip() for x in b], False)
    # neighbouring changed blocks (a delete next to an insert) form one region
    regions: list[list[int]] = []
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            regions.append([])
            continue
        if regions and regions[-1]:
            regions[-1][1], regions[-1][3] = i2, j2
        else:
            regions.append([i1, i2, j1, j2])
    out: set[int] = set()
    for region in regions:
        if not region:
            continue
        i1, i2, j1, j2 = region
        block_a = "\n".join(a[i1:i2])
        block_b = "\n".join(b[j1:j2])
        new64 = {m.group().lower() for m in W64.finditer(block_b)} - {
            m.group().lower() for m in W64.finditer(block_a)
        }
        if not new64:
            continue
        for i in range(i1, i2):
            if W32.search(_code(a[i])):
                out.add(i + 1)
    return out


_CONST_NAME = re.compile(
    r"(?:define\s+(?P<d>\w+)\s+\(?32\b|\b(?P<c>\w+)\s*(?:=|\{)\s*32[uU]?\s*[;},])"
)


def hand_widened_constant(name: str, hip_texts: list[str]) -> bool:
    """Whether the hand port ties the warp-size constant ``name`` to 64 anywhere: ``#define
    NAME 64`` (a per-architecture block), ``NAME = 64``, a template parameter ``NAME``, or
    ``NAME`` read from the device (``hipDeviceAttributeWarpSize``, ``warpSize``)."""
    n = re.escape(name)
    pattern = re.compile(
        rf"define\s+{n}\s+\(?64\b|\b{n}\s*(?:=|\{{)\s*(?:64|warpSize|__AMDGCN)"
        rf"|template\s*<[^>]*\b{n}\b|&{n}\s*,\s*hipDeviceAttributeWarpSize"
    )
    return any(pattern.search(t) for t in hip_texts)


def gpuport_sites(cuda: str, rel: str, kind: FileKind | None) -> tuple[dict[int, str], set[int]]:
    """(line -> kind of the rewrite, lines left as ambiguous) for one CUDA file."""
    if kind is not None:
        new, _ = rewrite_build_file(cuda, kind, "gfx90a", wave64=True)
        old_lines = cuda.splitlines()
        new_lines = new.splitlines()
        fixed = {
            n: "flag"
            for n, (o, w) in enumerate(zip(old_lines, new_lines, strict=False), 1)
            if o != w and "=64" in w and "=32" in o
        }
        return fixed, set()
    done = translate(cuda, hip_version="5.2", wave64="fix", path=rel)
    fixed: dict[int, str] = {}
    for c in done.wave64:
        fixed.setdefault(c.line, c.kind)
    return fixed, {w.line for w in done.wave64_left}


def _kind_of_line(text: str) -> str:
    if "__ballot" in text or "__popc" in text or "__ffs" in text or "<<" in text:
        return "ballot"
    if "for" in text and "16" in text:
        return "shuffle"
    if "__shared__" in text:
        return "array"
    if re.search(r"define|const|=\s*32", text) and re.search(r"(?i)warp|ws\b|lane", text):
        return "constant"
    if re.search(r"threadIdx|lane|warp|tid", text):
        return "lane"
    return "other"


def evaluate(src: Path, name: str) -> list[dict[str, object]]:
    cuda_dir, hip_dir = src / f"{name}-cuda", src / f"{name}-hip"
    sites: list[dict[str, object]] = []
    hip_texts = [
        _read(p) for p in sorted(hip_dir.rglob("*")) if p.is_file() and p.suffix in SOURCES
    ]
    for path in sorted(cuda_dir.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(cuda_dir)
        kind = BUILDS.get(path.name)
        if kind is None and path.suffix not in SOURCES:
            continue
        hip_path = hip_dir / rel if kind is not None else _hip_counterpart(hip_dir, rel)
        if hip_path is None or not hip_path.is_file():
            continue
        cuda = _read(path)
        hip = _read(hip_path)
        hand = hand_changed(cuda, hip)
        if kind is not None:  # build flags: does the hand build file pass the flag as 64?
            hand = {
                n
                for n, text in enumerate(cuda.splitlines(), 1)
                for m in re.finditer(r"-D\s*(\w+)=32\b", text)
                if re.search(rf"-D\s*{m.group(1)}=64\b", hip)
            }
        fixed, left = gpuport_sites(cuda, rel.as_posix(), kind)
        lines = cuda.splitlines()
        if kind is None:  # a warp-size constant: what the hand port did with its name
            for n, text in enumerate(lines, 1):
                c = _CONST_NAME.search(text.split("//")[0])
                name_c = c and (c.group("d") or c.group("c"))
                if name_c and (fixed.get(n) == "constant" or n in left or n in hand):
                    hand.discard(n)
                    if hand_widened_constant(name_c, hip_texts):
                        hand.add(n)
        for line in sorted(hand | set(fixed) | left):
            text = lines[line - 1].strip() if line <= len(lines) else ""
            site_kind = fixed.get(line) or ("flag" if kind is not None else _kind_of_line(text))
            sites.append(
                {
                    "benchmark": name,
                    "file": rel.as_posix(),
                    "line": line,
                    "kind": site_kind,
                    "hand": line in hand,
                    "gpuport": line in fixed,
                    "left": line in left,
                    "agree": (line in hand) == (line in fixed),
                    "text": text[:160],
                }
            )
    return sites


def pairs(src: Path) -> list[str]:
    return sorted(
        p.name[: -len("-cuda")]
        for p in src.glob("*-cuda")
        if p.is_dir() and (src / (p.name[: -len("-cuda")] + "-hip")).is_dir()
    )


def robustness(src: Path) -> None:
    files = sorted(
        p
        for p in src.glob("*-cuda/**/*")
        if p.suffix in (".cu", ".cuh", ".h") and p.is_file() and p.stat().st_size <= 400_000
    )
    ported: Counter[str] = Counter()
    left: Counter[str] = Counter()
    problems: list[str] = []
    for f in files:
        text = _read(f)
        try:
            once = translate(text, hip_version="5.2", wave64="fix", path=f.name)
            twice = translate(once.text, hip_version="5.2", wave64="fix", path=f.name)
        except Exception as exc:  # a crash is what this counts
            problems.append(f"{f}: {exc!r}")
            continue
        if twice.text != once.text:
            problems.append(f"{f}: not idempotent")
        ported.update(c.kind for c in once.wave64)
        left.update(w.kind for w in once.wave64_left)
    print(json.dumps({"files": len(files), "problems": problems, "ported": ported, "left": left}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="HeCBench's src folder")
    ap.add_argument("names", nargs="*", help="benchmarks (default: all with a wave64 hand change)")
    ap.add_argument("--min-hand", type=int, default=1)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--robustness", action="store_true")
    args = ap.parse_args()
    if not args.src.is_dir():
        sys.exit(f"not a folder: {args.src}")
    if args.robustness:
        robustness(args.src)
        return
    names = args.names or pairs(args.src)
    rows: list[tuple[str, list[dict[str, object]]]] = []
    for name in names:
        sites = evaluate(args.src, name)
        if args.names or sum(1 for s in sites if s["hand"]) >= args.min_hand:
            rows.append((name, sites))
    every = [s for _, sites in rows for s in sites]
    print("| benchmark | sites | agree | both ported | gpuport only | hand only | both left |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, sites in rows:
        c = Counter((bool(s["hand"]), bool(s["gpuport"])) for s in sites)
        agree = c[(True, True)] + c[(False, False)]
        print(
            f"| {name} | {len(sites)} | {agree} | {c[(True, True)]} | {c[(False, True)]} "
            f"| {c[(True, False)]} | {c[(False, False)]} |"
        )
    total = len(every)
    agree = sum(1 for s in every if s["agree"])
    print(
        f"| **all {len(rows)}** | {total} | {agree} ({100 * agree / max(total, 1):.1f} %) | "
        f"{sum(1 for s in every if s['hand'] and s['gpuport'])} | "
        f"{sum(1 for s in every if s['gpuport'] and not s['hand'])} | "
        f"{sum(1 for s in every if s['hand'] and not s['gpuport'])} | "
        f"{sum(1 for s in every if not s['hand'] and not s['gpuport'])} |"
    )
    print()
    print("| kind | sites | agree |")
    print("|---|---:|---:|")
    kinds = Counter(str(s["kind"]) for s in every)
    for kind, n in kinds.most_common():
        ok = sum(1 for s in every if s["kind"] == kind and s["agree"])
        print(f"| {kind} | {n} | {ok} ({100 * ok / n:.0f} %) |")
    if args.json:
        args.json.write_text(json.dumps(every, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
