"""Benchmark for issue 25: HeCBench seeded 40 — does gpuport's output compile for gfx90a where
the hand ports do, and does ``hipify --check`` say what a real build says?

* Sample: ``random.Random(SEED).sample(sorted(pairs), 40)`` over the HeCBench benchmarks that
  have both a ``NAME-cuda`` and a hand-written ``NAME-hip`` folder (``SEED`` = 40).
* Sides: the hand port (``NAME-hip`` as it is), gpuport (``gpuport hipify NAME-cuda -o OUT
  --hip-version 5.2``: the default wave64 mode for the default CDNA target, HIP 5.2 = Debian's
  hipcc) and, with ``--hipify-perl PATH``, hipify-perl (run on every CUDA file of the folder).
* Units: the Makefile's ``source = ...`` list (HeCBench's convention; ``$(VAR)`` expanded from
  the Makefile), else every ``.cu``/``.cpp``/``.hip`` file. A benchmark compiles when all its
  units compile: ``hipcc --offload-arch=gfx90a -x hip -c UNIT -o TMP/x.o`` run in the unit's
  folder, with ``-I`` of that folder (mode A), or with the Makefile's ``-I``/``-D``/``-U``/
  ``-std=`` flags too (mode B; ``$(VAR)``/``${VAR}`` expanded from the Makefile's own
  definitions, references to anything else dropped).
* ``--check``: ``gpuport hipify NAME-cuda -o OUT --check --offload-arch gfx90a`` and, per file,
  its status against the build's: a unit of the Makefile compiled as mode B does (``ok`` or
  ``failed``), any other file ``not compiled``. A *false failure* is ``failed`` where the build
  compiles (or does not compile the file at all); a *false inconclusive* is ``inconclusive``
  where the build compiles.

Compile results are cached (``--cache FILE``, keyed by the digests of the folder's files, the
unit and the flags), so gpuport before and after a change, and the hand ports, are compiled
once each. Prints Markdown tables and, with ``--json``, every result.

    python benchmarks/hipify_hecbench40.py HECBENCH/src [NAME ...] [--hipify-perl PATH] [--check]
        [--cache /tmp/hecbench40.json] [--json out.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SEED = 40
SIZE = 40
ARCH = "gfx90a"
UNITS = (".cu", ".cpp", ".hip", ".cc")
GPUPORT = (sys.executable, "-m", "gpuport", "hipify")
_DEF = re.compile(
    r"^[ \t]*(?:override[ \t]+|export[ \t]+)?([A-Za-z_][\w.]*)[ \t]*(\+=|::=|:=|\?=|=)[ \t]*(.*)$",
    re.M,
)
_REF = re.compile(r"\$(?:\(([^()$]*)\)|\{([^{}$]*)\})")
_FLAG = re.compile(r"(?<![\w$(-])(-I|-D|-U|-std=)(\S+)")


def pairs(src: Path) -> list[str]:
    return sorted(
        p.name[: -len("-cuda")]
        for p in src.glob("*-cuda")
        if p.is_dir() and (src / (p.name[: -len("-cuda")] + "-hip")).is_dir()
    )


def sample(src: Path) -> list[str]:
    return sorted(random.Random(SEED).sample(pairs(src), SIZE))  # noqa: S311 (a sample, not a key)


def _makefile(folder: Path) -> str:
    make = folder / "Makefile"
    if not make.is_file():
        return ""
    text = make.read_text(encoding="utf-8", errors="replace")
    text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    return text.replace("\\\n", " ")


def _vars(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for m in _DEF.finditer(text):
        name, op, value = m.group(1), m.group(2), m.group(3).strip()
        if op == "+=":
            found[name] = f"{found.get(name, '')} {value}".strip()
        elif op == "?=":
            found.setdefault(name, value)
        else:
            found[name] = value
    return found


def _expand(value: str, defs: dict[str, str], depth: int = 0) -> str | None:
    if depth > 8:
        return None
    bad = False

    def sub(m: re.Match[str]) -> str:
        nonlocal bad
        name = (m.group(1) or m.group(2) or "").strip()
        if name not in defs:
            bad = True
            return ""
        inner = _expand(defs[name], defs, depth + 1)
        if inner is None:
            bad = True
            return ""
        return inner

    out = _REF.sub(sub, value)
    return None if bad or "$" in out else out


def units(folder: Path) -> list[str]:
    """The build's translation units, relative to ``folder``."""
    text = _makefile(folder)
    defs = _vars(text)
    for key in ("source", "SRC", "SRCS", "SOURCES", "sources"):
        if key in defs:
            value = _expand(defs[key], defs)
            if value:
                names = [w for w in value.split() if Path(w).suffix in UNITS]
                if names and all((folder / n).is_file() for n in names):
                    return names
    return sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.suffix in UNITS and p.is_file()
    )


def make_flags(folder: Path) -> list[str]:
    text = _makefile(folder)
    defs = _vars(text)
    flags: list[str] = []
    for m in _FLAG.finditer(text):
        flag, value = m.group(1), m.group(2)
        if "$" in value:
            expanded = _expand(value, defs)
            if not expanded or " " in expanded:
                continue
            value = expanded
        flags.append(f"{flag}{value}")
    return flags


def _digest(folder: Path, unit: str, flags: list[str]) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and not p.is_symlink():
            h.update(p.relative_to(folder).as_posix().encode())
            h.update(p.read_bytes())
    h.update(unit.encode())
    h.update("\0".join(flags).encode())
    return h.hexdigest()


class Compiler:
    def __init__(self, hipcc: str, cache: Path | None) -> None:
        self.hipcc = hipcc
        self.cache_path = cache
        self.cache: dict[str, list[object]] = {}
        if cache is not None and cache.is_file():
            self.cache = json.loads(cache.read_text(encoding="utf-8"))

    def save(self) -> None:
        if self.cache_path is not None:
            self.cache_path.write_text(json.dumps(self.cache), encoding="utf-8")

    def compile(self, folder: Path, unit: str, flags: list[str]) -> tuple[bool, str]:
        key = _digest(folder, unit, flags)
        if key in self.cache:
            ok, err = self.cache[key]
            return bool(ok), str(err)
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [self.hipcc, f"--offload-arch={ARCH}", "-x", "hip", "-c", unit]
            cmd += [f"-I{folder}", *flags, "-o", str(Path(tmp) / "x.o")]
            try:
                done = subprocess.run(
                    cmd,
                    cwd=folder,
                    capture_output=True,
                    text=True,
                    errors="replace",
                    env={**os.environ, "HIP_PLATFORM": "amd", "TMPDIR": tmp},
                    stdin=subprocess.DEVNULL,
                    timeout=600,
                    check=False,
                )
                ok = done.returncode == 0
                err = next(
                    (ln for ln in (done.stderr + done.stdout).splitlines() if "error" in ln), ""
                )
            except subprocess.TimeoutExpired:
                ok, err = False, "timeout"
        self.cache[key] = [ok, err[:300]]
        self.save()
        return ok, err[:300]

    def benchmark(self, folder: Path, mode: str) -> tuple[bool, dict[str, list[object]]]:
        flags = make_flags(folder) if mode == "B" else []
        results = {u: list(self.compile(folder, u, flags)) for u in units(folder)}
        return bool(results) and all(r[0] for r in results.values()), results


def _hipify(src: Path, name: str, out: Path, extra: tuple[str, ...] = ()) -> dict[str, object]:
    done = subprocess.run(
        [*GPUPORT, str(src / f"{name}-cuda"), "-o", str(out), "--hip-version", "5.2",
         "--format", "json", "--output", str(out.parent / f"{name}.json"), *extra],
        capture_output=True,
        text=True,
        check=False,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise RuntimeError(f"gpuport hipify {name}: {done.stderr[-500:]}")
    return json.loads((out.parent / f"{name}.json").read_text(encoding="utf-8"))


def _hipify_perl(perl: str, src: Path, name: str, out: Path) -> None:
    shutil.copytree(src / f"{name}-cuda", out, symlinks=True)
    for p in out.rglob("*"):
        if p.is_file() and p.suffix in (".cu", ".cuh", ".h", ".hpp", ".cpp"):
            done = subprocess.run([perl, str(p)], capture_output=True, check=False, timeout=300)
            if done.returncode == 0 and done.stdout:
                p.write_bytes(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="HeCBench's src folder")
    ap.add_argument("--hipify-perl", help="path of hipify-perl (a third column)")
    ap.add_argument("--check", action="store_true", help="compare hipify --check with mode B")
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--json", type=Path)
    ap.add_argument(
        "--reuse",
        type=Path,
        help="a --json file of an earlier run: its hand-port and hipify-perl results are kept "
        "(only gpuport is translated and compiled again)",
    )
    ap.add_argument(
        "--gpuport-only",
        action="store_true",
        help="translate and compile gpuport's side only (merge with --reuse later)",
    )
    ap.add_argument("names", nargs="*", help="override the seeded sample")
    args = ap.parse_intermixed_args()  # names may follow the options
    hipcc = shutil.which("hipcc")
    if hipcc is None:
        sys.exit("hipcc is not on PATH (apt-get install hipcc)")
    names = args.names or sample(args.src)
    comp = Compiler(hipcc, args.cache)
    earlier: dict[str, dict[str, object]] = {}
    if args.reuse is not None:
        earlier = {r["name"]: r for r in json.loads(args.reuse.read_text(encoding="utf-8"))}
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="hecbench40-") as tmp:
        root = Path(tmp) / "src"  # siblings linked, so ../other-folder includes resolve
        root.mkdir()
        for p in args.src.iterdir():
            (root / p.name).symlink_to(p.resolve())
        for name in names:
            row: dict[str, object] = {"name": name}
            old = earlier.get(name)
            hand = args.src / f"{name}-hip"
            for mode in ("A", "B"):
                if args.gpuport_only:
                    row[f"hand_{mode}"], row[f"hand_{mode}_units"] = False, {}
                elif old is not None:
                    row[f"hand_{mode}"] = old[f"hand_{mode}"]
                    row[f"hand_{mode}_units"] = old[f"hand_{mode}_units"]
                else:
                    row[f"hand_{mode}"], row[f"hand_{mode}_units"] = comp.benchmark(hand, mode)
            out = Path(tmp) / "gp" / f"{name}-cuda"
            _hipify(args.src, name, out)
            (root / f"{name}-cuda").unlink()
            shutil.copytree(out, root / f"{name}-cuda", symlinks=True)
            for mode in ("A", "B"):
                ok, res = comp.benchmark(root / f"{name}-cuda", mode)
                row[f"gpuport_{mode}"], row[f"gpuport_{mode}_units"] = ok, res
            if args.check:
                row["check"] = check_row(args.src, name, Path(tmp), comp)
            shutil.rmtree(root / f"{name}-cuda")
            (root / f"{name}-cuda").symlink_to((args.src / f"{name}-cuda").resolve())
            if old is not None and "perl_A" in old:
                for key in ("perl_A", "perl_A_units", "perl_B", "perl_B_units"):
                    row[key] = old[key]
            elif args.hipify_perl and not args.gpuport_only:
                pout = Path(tmp) / "perl" / f"{name}-cuda"
                _hipify_perl(args.hipify_perl, args.src, name, pout)
                for mode in ("A", "B"):
                    row[f"perl_{mode}"], row[f"perl_{mode}_units"] = comp.benchmark(pout, mode)
            rows.append(row)
            shown = {k: v for k, v in row.items() if not k.endswith("_units")}
            print(json.dumps(shown), flush=True)
            if args.json:  # written as it goes: a long run that stops keeps what it measured
                args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    report(rows, any("perl_A" in r for r in rows), args.check)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


def check_row(src: Path, name: str, tmp: Path, comp: Compiler) -> dict[str, object]:
    """``gpuport hipify --check`` on one benchmark, each file's status against the build's."""
    out = tmp / "check" / f"{name}-cuda"
    rep = _hipify(src, name, out, ("--check", "--offload-arch", ARCH))
    build_units = set(units(out))
    flags = make_flags(out)
    files: dict[str, dict[str, object]] = {}
    false_failure = false_inconclusive = 0
    for f in rep["files"]:  # type: ignore[union-attr]
        c = f.get("compile") or {}
        status = c.get("status")
        if status is None:
            continue
        if f["path"] in build_units:
            ok, _ = comp.compile(out, f["path"], flags)
            truth = "ok" if ok else "failed"
        else:
            truth = "not compiled"
        if status == "failed" and truth != "failed":
            false_failure += 1
        if status == "inconclusive" and truth == "ok":
            false_inconclusive += 1
        files[f["path"]] = {"check": status, "build": truth, "error": c.get("error")}
    return {
        "files": files,
        "false_failure": false_failure,
        "false_inconclusive": false_inconclusive,
    }


def report(rows: list[dict[str, object]], perl: bool, check: bool) -> None:
    sides = ["hand", "gpuport"] + (["perl"] if perl else [])
    print()
    print("| benchmark | " + " | ".join(f"{s} A | {s} B" for s in sides) + " |")
    print("|---|" + "---:|" * (2 * len(sides)))
    for r in rows:
        cells = " | ".join(
            f"{'yes' if r[f'{s}_A'] else 'no'} | {'yes' if r[f'{s}_B'] else 'no'}" for s in sides
        )
        print(f"| {r['name']} | {cells} |")
    totals = " | ".join(
        f"{sum(1 for r in rows if r[f'{s}_A'])} | {sum(1 for r in rows if r[f'{s}_B'])}"
        for s in sides
    )
    print(f"| **{len(rows)}** | {totals} |")
    if check:
        ff = sum(int(r["check"]["false_failure"]) for r in rows)  # type: ignore[index]
        fi = sum(int(r["check"]["false_inconclusive"]) for r in rows)  # type: ignore[index]
        n = sum(len(r["check"]["files"]) for r in rows)  # type: ignore[index,arg-type]
        print(f"\n--check: {n} file(s) checked, {ff} false failure(s), {fi} false inconclusive")
        for r in rows:
            for path, f in r["check"]["files"].items():  # type: ignore[index,union-attr]
                if f["check"] != f["build"] and f["check"] != "not compiled":
                    print(f"  {r['name']}/{path}: check {f['check']}, build {f['build']}: ", end="")
                    print(f["error"])


if __name__ == "__main__":
    main()
