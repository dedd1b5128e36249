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
above (``--min-hand 1``), or the names given, or ``--sample FILE`` (the ``sample`` list of a
JSON file such as ``benchmarks/hipify_wave64_sample.json``). Prints a Markdown table (per
benchmark, per kind) and, with ``--json``, the sites.

Issue 25: each benchmark's CUDA folder is translated as one run (the lane-meaning analysis
judges a kernel with the helpers, constants and host code of its other files), in the default
mode or with ``--unsafe-fixes`` (``--mode unsafe``). ``--judged FILE`` reads per-site judgments
(``benchmark``, ``file``, ``line``, ``kind`` of the rewrite, ``run``: before or after (``--run``),
``verdict``: harmful, needed, ok or neutral, and ``why``, made by reading the code against the
hand port and HIP 5.2's own ``__shfl`` definitions) and counts the rewritten lines per verdict;
a rewritten line with no judgment is listed as *unjudged*. On a gpuport without the analysis
(before issue 25) the translation is per file, as it was.

    python benchmarks/hipify_wave64_eval.py HECBENCH/src [NAME ...] [--json out.json]
    python benchmarks/hipify_wave64_eval.py HECBENCH/src \
        --sample benchmarks/hipify_wave64_sample.json --mode unsafe \
        --judged benchmarks/hipify_wave64_judgments.json
    python benchmarks/hipify_wave64_eval.py HECBENCH/src --robustness

``--robustness`` instead translates every ``.cu/.cuh/.h`` of every ``*-cuda`` folder (up to
400 KB) with ``--wave64 fix`` twice and counts crashes, outputs that change on the second pass,
and the sites ported and left per kind.
"""

from __future__ import annotations

import argparse
import difflib
import inspect
import json
import re
import sys
from collections import Counter
from pathlib import Path

from gpuport.hipify.buildfiles import rewrite_build_file
from gpuport.hipify.translate import Translation, translate
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


Fixed = dict[int, tuple[str, bool]]  # line -> (kind of the first rewrite on it, unsafe)


def _translate(text: str, rel: str, mode: str, meaning: object) -> Translation:
    params = inspect.signature(translate).parameters
    kw: dict[str, object] = {}
    if "unsafe" in params:
        kw = {"unsafe": mode == "unsafe", "meaning": meaning}
    return translate(text, hip_version="5.2", wave64="fix", path=rel, **kw)  # type: ignore[arg-type]


def folder_sites(cuda_dir: Path, mode: str) -> dict[str, tuple[Fixed, set[int]]]:
    """Per source file of one benchmark: (line -> (kind, unsafe) of gpuport's rewrites, lines
    left as ambiguous), the folder translated as one run."""
    texts = {
        p.relative_to(cuda_dir).as_posix(): _read(p)
        for p in sorted(cuda_dir.rglob("*"))
        if p.is_file() and p.suffix in SOURCES and p.stat().st_size <= 400_000
    }
    meanings: dict[str, object] = {}
    try:
        from gpuport.hipify.wave64 import meaning_of  # issue 25
        from gpuport.scan.cxx import lex

        meanings = dict(meaning_of({rel: lex(t) for rel, t in texts.items()}))
    except ImportError:  # before issue 25: each file alone
        pass
    out: dict[str, tuple[Fixed, set[int]]] = {}
    for rel, text in texts.items():
        done = _translate(text, rel, mode, meanings.get(rel))
        fixed: Fixed = {}
        for c in done.wave64:
            if c.kind == "mask":
                continue  # HIP 5.2 drops the masks: a literal widened says nothing here
            fixed.setdefault(c.line, (c.kind, bool(getattr(c, "unsafe", False))))
        out[rel] = (fixed, {w.line for w in done.wave64_left})
    return out


def build_sites(cuda: str, kind: FileKind, mode: str) -> Fixed:
    """gpuport's -DWARP_SIZE=32 -> 64 flags in a build file (only with --unsafe-fixes since
    issue 25)."""
    if mode != "unsafe" and "unsafe" in inspect.signature(translate).parameters:
        return {}
    new, _ = rewrite_build_file(cuda, kind, "gfx90a", wave64=True)
    return {
        n: ("flag", True)
        for n, (o, w) in enumerate(zip(cuda.splitlines(), new.splitlines(), strict=False), 1)
        if o != w and "=64" in w and "=32" in o
    }


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


def evaluate(src: Path, name: str, mode: str = "fix") -> list[dict[str, object]]:
    cuda_dir, hip_dir = src / f"{name}-cuda", src / f"{name}-hip"
    sites: list[dict[str, object]] = []
    hip_texts = [
        _read(p) for p in sorted(hip_dir.rglob("*")) if p.is_file() and p.suffix in SOURCES
    ]
    ours = folder_sites(cuda_dir, mode)
    for path in sorted(cuda_dir.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(cuda_dir)
        kind = BUILDS.get(path.name)
        if kind is None and path.suffix not in SOURCES:
            continue
        cuda = _read(path)
        if kind is not None:
            fixed, left = build_sites(cuda, kind, mode), set()
        elif rel.as_posix() in ours:
            fixed, left = ours[rel.as_posix()]
        else:
            continue
        hip_path = hip_dir / rel if kind is not None else _hip_counterpart(hip_dir, rel)
        hip = _read(hip_path) if hip_path is not None and hip_path.is_file() else ""
        hand = hand_changed(cuda, hip) if hip else set()
        if kind is not None:  # build flags: does the hand build file pass the flag as 64?
            hand = {
                n
                for n, text in enumerate(cuda.splitlines(), 1)
                for m in re.finditer(r"-D\s*(\w+)=32\b", text)
                if re.search(rf"-D\s*{m.group(1)}=64\b", hip)
            }
        lines = cuda.splitlines()
        if kind is None:  # a warp-size constant: what the hand port did with its name
            for n, text in enumerate(lines, 1):
                c = _CONST_NAME.search(text.split("//")[0])
                name_c = c and (c.group("d") or c.group("c"))
                if name_c and (fixed.get(n, ("",))[0] == "constant" or n in left or n in hand):
                    hand.discard(n)
                    if hand_widened_constant(name_c, hip_texts):
                        hand.add(n)
        for line in sorted(hand | set(fixed) | left):
            text = lines[line - 1].strip() if line <= len(lines) else ""
            ours_kind, unsafe = fixed.get(line, ("", False))
            site_kind = ours_kind or ("flag" if kind is not None else _kind_of_line(text))
            sites.append(
                {
                    "benchmark": name,
                    "file": rel.as_posix(),
                    "line": line,
                    "kind": site_kind,
                    "hand": line in hand,
                    "gpuport": line in fixed,
                    "unsafe": unsafe,
                    "left": line in left,
                    "agree": (line in hand) == (line in fixed),
                    "text": text[:160],
                }
            )
    return sites


def judge(sites: list[dict[str, object]], judged: Path, run: str) -> Counter[str]:
    """Counts of gpuport's rewritten lines per verdict (``unjudged`` when none is recorded)
    among the judgments of ``run`` (``before``: gpuport before issue 25; ``after``); each
    site gets its ``verdict``. A line is judged per run: whether a rewrite is harmful depends
    on what else the same run rewrites."""
    table = {
        (j["benchmark"], j["file"], j["line"], j["kind"]): j["verdict"]
        for j in json.loads(judged.read_text(encoding="utf-8"))
        if j.get("run", "before") == run
    }
    counts: Counter[str] = Counter()
    for s in sites:
        if not s["gpuport"]:
            continue
        verdict = table.get((s["benchmark"], s["file"], s["line"], s["kind"]), "unjudged")
        s["verdict"] = verdict
        counts[str(verdict)] += 1
    return counts


def print_verdicts(counts: Counter[str]) -> None:
    """The Markdown table of rewritten lines per verdict."""
    print("| verdict | rewritten lines |")
    print("|---|---:|")
    for verdict in ("harmful", "needed", "ok", "neutral", "unjudged"):
        print(f"| {verdict} | {counts.get(verdict, 0)} |")


def pairs(src: Path) -> list[str]:
    return sorted(
        p.name[: -len("-cuda")]
        for p in src.glob("*-cuda")
        if p.is_dir() and (src / (p.name[: -len("-cuda")] + "-hip")).is_dir()
    )


def robustness(src: Path) -> None:
    """Every ``.cu/.cuh/.h`` of every ``*-cuda`` folder, each folder translated as one run,
    twice, in the default mode and with --unsafe-fixes: crashes, outputs the second pass
    changes, and what was ported and left, per kind."""
    report: dict[str, object] = {}
    for mode in ("fix", "unsafe"):
        ported: Counter[str] = Counter()
        left: Counter[str] = Counter()
        problems: list[str] = []
        files = 0
        for cuda_dir in sorted(p for p in src.glob("*-cuda") if p.is_dir()):
            texts = {
                p.relative_to(cuda_dir).as_posix(): _read(p)
                for p in sorted(cuda_dir.rglob("*"))
                if p.suffix in (".cu", ".cuh", ".h") and p.is_file() and p.stat().st_size <= 400_000
            }
            try:
                from gpuport.hipify.wave64 import meaning_of
                from gpuport.scan.cxx import lex

                once_m = meaning_of({r: lex(t) for r, t in texts.items()})
                once = {r: _translate(t, r, mode, once_m[r]) for r, t in texts.items()}
                twice_m = meaning_of({r: lex(o.text) for r, o in once.items()})
                twice = {r: _translate(o.text, r, mode, twice_m[r]) for r, o in once.items()}
            except Exception as exc:  # a crash is what this counts
                problems.append(f"{cuda_dir.name}: {exc!r}")
                continue
            files += len(texts)
            for r, o in once.items():
                if twice[r].text != o.text:
                    problems.append(f"{cuda_dir.name}/{r}: not idempotent")
                ported.update(c.kind for c in o.wave64)
                left.update(w.kind for w in o.wave64_left)
        report[mode] = {"files": files, "problems": problems, "ported": ported, "left": left}
    print(json.dumps(report))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="HeCBench's src folder")
    ap.add_argument("names", nargs="*", help="benchmarks (default: all with a wave64 hand change)")
    ap.add_argument("--min-hand", type=int, default=1)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--robustness", action="store_true")
    ap.add_argument("--sample", type=Path, help="a JSON file whose `sample` lists the names")
    ap.add_argument("--mode", choices=("fix", "unsafe"), default="fix")
    ap.add_argument("--judged", type=Path, help="per-site judgments (JSON)")
    ap.add_argument("--run", choices=("before", "after"), default="after")
    args = ap.parse_args()
    if not args.src.is_dir():
        sys.exit(f"not a folder: {args.src}")
    if args.robustness:
        robustness(args.src)
        return
    chosen = list(args.names)
    if args.sample is not None:
        chosen += json.loads(args.sample.read_text(encoding="utf-8"))["sample"]
    names = chosen or pairs(args.src)
    rows: list[tuple[str, list[dict[str, object]]]] = []
    for name in names:
        sites = evaluate(args.src, name, args.mode)
        if chosen or sum(1 for s in sites if s["hand"]) >= args.min_hand:
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
    rewritten = [s for s in every if s["gpuport"]]
    print()
    print(
        f"gpuport rewrote {len(rewritten)} line(s) ({args.mode} mode), "
        f"{sum(1 for s in rewritten if s['unsafe'])} of them marked unsafe"
    )
    if args.judged is not None:
        print_verdicts(judge(every, args.judged, args.run))
        for s in every:
            if s.get("verdict") in ("unjudged", "harmful"):
                where = f"{s['benchmark']}/{s['file']}:{s['line']}"
                print(f"  {s['verdict']}: {where} {s['kind']}: {s['text']}")
    if args.json:
        args.json.write_text(json.dumps(every, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
