"""Seed inputs for ``make fuzz`` from real repositories, kept outside this repository.

Walks folders of checked-out projects (e.g. ``/work/trees``), sorts their small files by the
fuzz target that reads them (the scan's file kinds, README and CI workflows, .gitignore,
.gitmodules, compile_commands.json, gpuport.toml) and copies up to ``--per-target`` of each,
spread over the projects, into ``OUT/TARGET/``. Nothing is copied into the repository: the
files belong to their projects. ``tools/fuzz.py --seeds OUT`` starts from them.

    python tools/fuzz_seeds.py /work/trees [--out /work/trees/fuzz-seeds] [--per-target 200]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from gpuport.scan.project.files import classify  # noqa: E402

_BY_KIND = {
    "requirements": "requirements", "pyproject": "pyproject", "setup.py": "setup-py",
    "setup.cfg": "setup-cfg", "conda-env": "conda", "dockerfile": "dockerfile",
    "compose": "compose", "python": "python", "cuda/c++": "cxx", "cmake": "cmake",
    "makefile": "makefile",
}  # fmt: skip


def target_of(rel: str) -> str | None:
    name = rel.rsplit("/", 1)[-1]
    lower = name.lower()
    if lower == ".gitignore":
        return "gitignore"
    if lower == ".gitmodules":
        return "gitmodules"
    if lower == "compile_commands.json":
        return "compile-db"
    if lower == "gpuport.toml":
        return "settings"
    if lower.startswith("readme"):
        return "readme"
    if "/.github/workflows/" in f"/{rel}" and lower.endswith((".yml", ".yaml")):
        return "ci-workflow"
    kind = classify(rel)
    return _BY_KIND.get(kind.value) if kind is not None else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, default=Path("/work/trees/fuzz-seeds"))
    ap.add_argument("--per-target", type=int, default=200)
    ap.add_argument("--max-bytes", type=int, default=16_384)
    args = ap.parse_args(argv)
    found: dict[str, dict[str, list[Path]]] = defaultdict(lambda: defaultdict(list))
    for root in args.roots:
        for project in sorted(p for p in root.iterdir() if p.is_dir()):
            if project.resolve() == args.out.resolve():
                continue
            for folder, dirs, files in os.walk(project):
                dirs[:] = dirs[:200]
                for name in files:
                    path = Path(folder) / name
                    rel = path.relative_to(project).as_posix()
                    target = target_of(rel)
                    if (
                        target
                        and not path.is_symlink()
                        and 0 < path.stat().st_size <= args.max_bytes
                    ):
                        found[target][project.name].append(path)
    for target, projects in sorted(found.items()):
        out = args.out / target
        out.mkdir(parents=True, exist_ok=True)
        chosen: list[Path] = []
        lists = [sorted(paths) for _, paths in sorted(projects.items())]
        while len(chosen) < args.per_target and any(lists):  # round robin over the projects
            for paths in lists:
                if paths and len(chosen) < args.per_target:
                    chosen.append(paths.pop(0))
        seen: set[str] = set()
        for path in chosen:
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()[:16]
            if digest not in seen:
                seen.add(digest)
                (out / digest).write_bytes(data)
        print(f"{target:<16} {len(seen):>4} files from {len(projects)} projects")
    return 0


if __name__ == "__main__":
    sys.exit(main())
