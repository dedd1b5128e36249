"""Issue 25, second independent sample: judge ``gpuport hipify``'s wave64 rewrites on code from
ROCm forks (apex, gsplat, bitsandbytes, CTranslate2) against their hand ports.

The sample (``benchmarks/hipify_wave64_sample2.json``) names *runs* (a CUDA folder at the
upstream/fork merge-base, translated as one ``gpuport hipify`` call, as a user would) and
*units* (a file of a run whose hand port changes warp-size handling). This script

1. runs ``python -m gpuport hipify CUDA_DIR -o OUT --hip-version 5.2 -f json --output R``
   (``--unsafe-fixes`` with ``--mode unsafe``) for every run, the trees extracted under ROOT
   (``git archive`` of the commits the sample names);
2. lists every rewritten line (the report's ``wave64`` entries, one per line: a line with two
   rewrites counts once) and every site left, per file, saying whether the file is a unit;
3. with ``--judged FILE``, counts the rewritten lines per verdict (``harmful``, ``needed``,
   ``ok``, ``neutral``; ``unjudged`` when the file has none for that line) for ``--run``
   (``first``: the held-out run; ``second``: after a general fix), and whether every line
   that only ``--unsafe-fixes`` makes is marked ``// gpuport: wave64 unsafe`` in the output.

Judgments are made by reading the kernel, its launches and the hand port against HIP 5.2's own
definitions (``/usr/include/hip/amd_detail/amd_warp_functions.h``: ``__shfl(v, src, width =
warpSize)`` reads ``src + (self & ~(width-1))``; ``amd_hip_cooperative_groups.h``: a
``thread_block_tile<N>`` shuffles with width ``N``, ``N`` a power of two up to the wavefront).
Each judgment: ``run``, ``mode``, ``file`` (run/path), ``line``, ``kind``, ``verdict``, ``why``.

    python benchmarks/hipify_wave64_eval2.py /work/trees/wave64-2 --mode fix \
        --judged benchmarks/hipify_wave64_judgments2.json --run first
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from hipify_wave64_eval import print_verdicts  # this folder is on sys.path when run

HERE = Path(__file__).resolve().parent
SAMPLE = HERE / "hipify_wave64_sample2.json"


def translate_run(root: Path, name: str, cuda_dir: str, mode: str, out: Path) -> dict[str, Any]:
    """One ``gpuport hipify`` call over a run's CUDA folder; its JSON report."""
    dest = out / f"{name}-{mode}"
    report = out / f"{name}-{mode}.json"
    argv = [sys.executable, "-m", "gpuport", "hipify", str(root / cuda_dir), "-o", str(dest)]
    argv += ["--hip-version", "5.2", "-f", "json", "--output", str(report)]
    if mode == "unsafe":
        argv.append("--unsafe-fixes")
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, capture_output=True)
    data: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    data["_out"] = str(dest)
    return data


def sites(sample: dict[str, Any], root: Path, mode: str, out: Path) -> list[dict[str, object]]:
    units = {(u["run"], u["cuda"]): u["unit"] for u in sample["sample"]}
    rows: list[dict[str, object]] = []
    for name, run in sample["runs"].items():
        report = translate_run(root, name, run["cuda_dir"], mode, out)
        for f in report["files"]:
            text = Path(f["output"]).read_text(encoding="utf-8", errors="replace").splitlines()
            seen: set[int] = set()
            for w in f["wave64"]:
                if w["line"] in seen:
                    continue
                seen.add(w["line"])
                # the output line: the input line, shifted by the lines hipify inserted above
                marked = [t for t in text if "gpuport: wave64" in t]
                rows.append(
                    {
                        "file": f"{name}/{f['path']}",
                        "unit": units.get((name, f["path"]), ""),
                        "line": w["line"],
                        "kind": w["kind"],
                        "unsafe": bool(w.get("unsafe")),
                        "rewritten": True,
                        "detail": w["detail"],
                        "marked_unsafe": sum("wave64 unsafe" in t for t in marked),
                    }
                )
            for w in f["wave64_left"]:
                rows.append(
                    {
                        "file": f"{name}/{f['path']}",
                        "unit": units.get((name, f["path"]), ""),
                        "line": w["line"],
                        "kind": w["kind"],
                        "rewritten": False,
                        "detail": w["detail"],
                    }
                )
    return rows


def judge(rows: list[dict[str, object]], judged: Path, run: str, mode: str) -> Counter[str]:
    table = {
        (j["file"], j["line"]): j
        for j in json.loads(judged.read_text(encoding="utf-8"))
        if j["run"] == run and j["mode"] == mode
    }
    counts: Counter[str] = Counter()
    for r in rows:
        if not r["rewritten"]:
            continue
        j = table.get((str(r["file"]), int(str(r["line"]))))
        r["verdict"] = j["verdict"] if j else "unjudged"
        counts[str(r["verdict"])] += 1
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root", type=Path, help="folder holding the extracted trees")
    ap.add_argument("--sample", type=Path, default=SAMPLE)
    ap.add_argument("--mode", choices=("fix", "unsafe"), default="fix")
    ap.add_argument("--out", type=Path, help="where the translations go (default ROOT/out)")
    ap.add_argument("--judged", type=Path)
    ap.add_argument("--run", choices=("first", "second"), default="first")
    ap.add_argument("--json", type=Path, help="write the sites here")
    args = ap.parse_args()
    if not args.root.is_dir():
        sys.exit(f"not a folder: {args.root}")
    sample = json.loads(args.sample.read_text(encoding="utf-8"))
    out = args.out or args.root / "out"
    out.mkdir(parents=True, exist_ok=True)
    rows = sites(sample, args.root, args.mode, out)
    done = [r for r in rows if r["rewritten"]]
    left = [r for r in rows if not r["rewritten"]]
    in_units = sum(1 for r in done if r["unit"])
    print(f"mode {args.mode}: {len(done)} rewritten line(s) ({in_units} in sample units), ")
    print(f"  {sum(1 for r in done if r['unsafe'])} of them unsafe; {len(left)} site(s) left")
    unsafe_files = {str(r["file"]) for r in done if r["unsafe"]}
    for f in sorted(unsafe_files):
        n = sum(1 for r in done if r["file"] == f and r["unsafe"])
        marked = max(int(str(r["marked_unsafe"])) for r in done if r["file"] == f)
        print(f"  {f}: {n} unsafe line(s), {marked} marked '// gpuport: wave64 unsafe'")
    for r in done:
        print(f"  rewrite {r['file']}:{r['line']} {r['kind']} unsafe={r['unsafe']}: {r['detail']}")
    per_unit = Counter(str(r["unit"]) for r in left if r["unit"])
    print("left per unit:", dict(sorted(per_unit.items())))
    if args.judged is not None:
        print_verdicts(judge(rows, args.judged, args.run, args.mode))
        for r in done:
            if r.get("verdict") in ("unjudged", "harmful"):
                print(f"  {r['verdict']}: {r['file']}:{r['line']} {r['kind']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
