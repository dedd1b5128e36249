"""Generate gpuport's CUDA->HIP API map from the HIPIFY docs tables plus hand-written extras.

Usage: ``python tools/gen_api_map.py [--tables DIR] [--extra FILE] [--output FILE]``
(``make api-map``). The output is deterministic: same inputs, same bytes.

Input tables: ``tools/hipify-tables/*.md`` (MIT, see SOURCE.md and LICENSE.txt there), GitHub pipe
tables ``|CUDA|A|D|C|R|HIP|A|D|C|R|E|`` with, in ``*_and_ROC.md`` / ``*_and_MIOPEN.md``, a second
target column. An empty HIP cell means "no HIP equivalent" (``hip: null``).
``tools/api_map_extra.toml`` adds what the tables lack (NCCL, NVTX, cuBLASLt, headers, namespaces,
HIP 6.2 warp intrinsics, bf16 intrinsics); an extra entry replaces a table entry of the same name
and carries its own ``sources``; an empty HIP name in an extra group overrides a table mapping
that would change behaviour (NVIDIA's OCP fp8 types are not HIP's FNUZ ones)."""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TABLES = REPO_ROOT / "tools" / "hipify-tables"
DEFAULT_EXTRA = REPO_ROOT / "tools" / "api_map_extra.toml"
DEFAULT_OUTPUT = REPO_ROOT / "src" / "gpuport" / "knowledge" / "api_map.json"

HIPIFY_COMMIT = "014177bc2e434ce3e834aa4f3d0e2abb1efa9796"
HIPIFY_TABLES_URL = f"https://github.com/ROCm/HIPIFY/tree/{HIPIFY_COMMIT}/docs/tables"
# Tables taken from a later HIPIFY commit than the rest (SOURCE.md says how and why).
TABLE_COMMITS = {
    "CUDA_Device_API_supported_by_HIP.md": "0244dd397c19aa722fcd540db9d77f3953844f99",
}
CHECKED = "2026-11-27"
SCHEMA_VERSION = 1

# File-name prefix -> family, in precedence order: a name listed in several tables (cuSOLVER
# repeats some cuBLAS names) takes the family of the first table here that lists it.
FAMILIES: list[tuple[str, str]] = [
    ("CUDA_Runtime_API", "runtime"),
    ("CUDA_Driver_API", "driver"),
    ("CUDA_Device_API", "device"),
    ("cuComplex_API", "complex"),
    ("CUDA_RTC_API", "nvrtc"),
    ("CUBLAS_API", "cublas"),
    ("CURAND_API", "curand"),
    ("CUDNN_API", "cudnn"),
    ("CUFFT_API", "cufft"),
    ("CUSPARSE_API", "cusparse"),
    ("CUSOLVER_API", "cusolver"),
    ("CUB_API", "cub"),
]
TARGETS = {"HIP": "hip", "ROC": "roc", "MIOPEN": "roc"}
_VERSION_FIELDS = ("added", "deprecated", "changed", "removed")


def _cell(text: str) -> str:
    """Strip markdown from one table cell: bold, backticks, backslash escapes."""
    text = text.strip().replace("**", "")
    text = text.strip("`")
    return re.sub(r"\\(.)", r"\1", text).strip()


def _family(path: Path) -> tuple[int, str]:
    for rank, (prefix, family) in enumerate(FAMILIES):
        if path.name.startswith(prefix):
            return rank, family
    raise ValueError(f"{path}: unknown table family (file name not recognised)")


def parse_table(path: Path) -> list[dict[str, Any]]:
    """Rows of one table file: {cuda, cuda_*, <target>, <target>_*} per CUDA name."""
    rows: list[dict[str, Any]] = []
    header: list[str] | None = None
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.startswith("|"):
            header = None if not line.strip() else header
            continue
        cells = [_cell(c) for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == "CUDA":
            header = cells
            continue
        if header is None or set(line) <= set("|:- "):
            continue
        if len(cells) != len(header):
            raise ValueError(f"{path}:{lineno}: {len(cells)} cells, header has {len(header)}")
        row: dict[str, Any] = {"cuda": cells[0]}
        for i, name in enumerate(header[1:5], 1):
            row[f"cuda_{_VERSION_FIELDS['ADCR'.index(name)]}"] = cells[i] or None
        col = 5
        while col < len(header):
            target = TARGETS.get(header[col])
            if target is None or header[col + 1 : col + 6] != ["A", "D", "C", "R", "E"]:
                raise ValueError(f"{path}:{lineno}: unexpected header {header!r}")
            row[target] = cells[col] or None
            for j, field in enumerate(_VERSION_FIELDS):
                row[f"{target}_{field}"] = cells[col + 1 + j] or None
            row[f"{target}_experimental"] = bool(cells[col + 5])
            col += 6
        if not row["cuda"]:
            raise ValueError(f"{path}:{lineno}: empty CUDA cell")
        rows.append(row)
    return rows


def _from_tables(tables: Path) -> dict[str, dict[str, Any]]:
    tables_md = [p for p in tables.glob("*.md") if p.name != "SOURCE.md"]
    files = sorted(tables_md, key=lambda p: (_family(p)[0], p.name))
    if not files:
        raise SystemExit(f"no tables (*.md) in {tables}")
    entries: dict[str, dict[str, Any]] = {}
    for path in files:
        _, family = _family(path)
        for row in parse_table(path):
            entry = entries.setdefault(row["cuda"], {"family": family, "hip": None})
            for field in _VERSION_FIELDS:
                key = f"cuda_{field}"
                if row.get(key) and not entry.get(key):
                    entry[key] = row[key]
            # HIP facts come from the first table with a HIP column, unless a later one maps
            # the name where the first did not.
            first_hip = "hip_seen" not in entry
            if "hip" in row and (first_hip or (entry["hip"] is None and row["hip"] is not None)):
                entry["hip_seen"] = True
                entry["hip"] = row["hip"]
                for field in ("added", "deprecated", "removed"):
                    entry[f"hip_{field}"] = row.get(f"hip_{field}")
                entry["hip_experimental"] = row["hip_experimental"]
            if row.get("roc") and not entry.get("roc"):
                entry["roc"] = row["roc"]
    for entry in entries.values():
        entry.pop("hip_seen", None)
    return entries


def _compact(entry: dict[str, Any]) -> dict[str, Any]:
    """Drop empty optional fields (the loader defaults them); keep ``hip`` even when null."""
    keep = {"hip", "family"}
    return {
        k: v for k, v in sorted(entry.items()) if k in keep or (v is not None and v is not False)
    }


def _sources_of(item: dict[str, Any], where: str) -> list[str]:
    sources = item.get("sources")
    if not isinstance(sources, list) or not sources:
        raise SystemExit(f"api_map_extra: {where} has no sources")
    return [str(s) for s in sources]


def build(tables: Path = DEFAULT_TABLES, extra: Path = DEFAULT_EXTRA) -> dict[str, Any]:
    """The API map document as a dict."""
    entries = _from_tables(tables)
    with extra.open("rb") as fh:
        ext = tomllib.load(fh)
    sources = [HIPIFY_TABLES_URL] + [
        f"https://github.com/ROCm/HIPIFY/blob/{commit}/docs/tables/{name}"
        for name, commit in sorted(TABLE_COMMITS.items())
    ]
    headers: dict[str, dict[str, Any]] = {}
    for name, item in ext.get("headers", {}).items():
        srcs = _sources_of(item, f"header {name!r}")
        sources.extend(srcs)
        headers[name] = {**item, "sources": srcs}
    namespaces: dict[str, dict[str, Any]] = {}
    for name, item in ext.get("namespaces", {}).items():
        srcs = _sources_of(item, f"namespace {name!r}")
        sources.extend(srcs)
        namespaces[name] = {**item, "sources": srcs}
    for group in ext.get("group", []):
        family = group["family"]
        srcs = _sources_of(group, f"group {family!r}")
        sources.extend(srcs)
        common = {k: v for k, v in group.items() if k not in ("map", "sources")}
        for cuda_name, hip_name in group["map"].items():
            base = entries.get(cuda_name, {})
            cuda_fields = {k: v for k, v in base.items() if k.startswith("cuda_")}
            # "" says: no HIP equivalent, whatever the tables map it to (the group's note: why)
            hip = hip_name or None
            entries[cuda_name] = {**cuda_fields, **common, "hip": hip, "sources": srcs}
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "gpuport.api_map",
        "checked": str(ext.get("checked", CHECKED)),
        "sources": sorted(set(sources)),
        "generated_from": (
            f"HIPIFY docs/tables @ {HIPIFY_COMMIT}"
            + "".join(f", {name} @ {commit[:8]}" for name, commit in sorted(TABLE_COMMITS.items()))
            + " (tools/hipify-tables) + tools/api_map_extra.toml, by tools/gen_api_map.py"
        ),
        "headers": dict(sorted(headers.items())),
        "namespaces": dict(sorted(namespaces.items())),
        "entries": {k: _compact(entries[k]) for k in sorted(entries)},
    }


def render(tables: Path = DEFAULT_TABLES, extra: Path = DEFAULT_EXTRA) -> str:
    """The API map document as JSON text, byte-for-byte deterministic."""
    doc = build(tables, extra)
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--tables", type=Path, default=DEFAULT_TABLES)
    parser.add_argument("--extra", type=Path, default=DEFAULT_EXTRA)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    if not args.tables.is_dir():
        print(f"error: tables directory not found: {args.tables}", file=sys.stderr)
        return 2
    text = render(args.tables, args.extra)
    args.output.write_text(text, encoding="utf-8")
    count = text.count('"family"')
    print(f"wrote {args.output} ({len(text.encode())} bytes, ~{count} entries)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
