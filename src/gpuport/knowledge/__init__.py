"""Typed loaders for the versioned data files beside this module.

Knowledge is data, not code: every entry carries ``sources`` (URLs) and a
``checked`` date. A user can extend or override any file with their own copy
in a directory given by ``--knowledge DIR``; entries with the same key replace
the bundled ones, new keys are added.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from gpuport import textre
from gpuport.knowledge.plain import FORBID_EXTRA, check_sources, plain_record
from gpuport.models import GpuportError
from gpuport.safeparse import ParseError, toml_table

if TYPE_CHECKING:  # pydantic models, imported on first use (see __getattr__ below)
    from gpuport.knowledge.schema import PackageInfo as PackageInfo
    from gpuport.knowledge.schema import Route as Route
    from gpuport.knowledge.schema import Sourced as Sourced

KNOWLEDGE_DIR = Path(__file__).parent
PackageStatus = Literal["works", "works-with-route", "partial", "no"]
M = TypeVar("M")  # a pydantic model or a dataclass that pydantic validates
RouteKind = Literal["index", "replacement", "build", "image", "none"]
# What a re-check of an entry looked at; an entry whose ``verified`` is empty carries the
# date of an earlier bulk review and was not re-checked since (docs/knowledge.md).
VerifiedFact = Literal[
    "status",
    "summary",
    "route",
    "min_version",
    "wheels",
    "caveats",
    "imports",
    "specs",
    "memory",
    "prices",
    "config",
    "products",
]


def normalize_name(name: str) -> str:
    """PEP 503 normalisation: ``Flash_Attn`` and ``flash-attn`` are the same project."""
    return textre.sub(r"[-_.]+", "-", name).lower()


Family = Literal["CDNA", "RDNA", "GCN"]
Fp8Flavour = Literal["fnuz", "ocp", "none"]


@dataclass(frozen=True, kw_only=True)
class TargetInfo:
    """One AMD GPU architecture (gfx target) and the facts rules depend on.

    A frozen dataclass, not a pydantic model: ``gpuport hipify`` resolves its target without
    importing pydantic (start-up, issue 18). Files are validated by pydantic all the same
    (``TypeAdapter(TargetInfo)``, extra keys refused); the bundled targets.toml, which the
    test suite validates whole, is read by :func:`_plain_target` when it plainly fits.
    """

    __pydantic_config__ = FORBID_EXTRA

    # as every knowledge entry (Sourced): where the facts come from, when they were checked
    sources: list[str]
    checked: dt.date
    verified: list[VerifiedFact] = field(default_factory=list)
    name: str
    family: Family
    generation: str
    wave_size: Literal[32, 64]  # the default wavefront size HIP compiles for
    fp8: Fp8Flavour
    lds_kib: int  # LDS one workgroup can allocate (LLVM addressable local memory), 1..1024
    products: list[str]  # at least one
    aliases: list[str] = field(default_factory=list)
    kind: Literal["dgpu", "apu"] = "dgpu"
    # what ROCm torch's get_device_capability() reports (derived from the gfx number when
    # left out: gfx942 -> (9, 4))
    capability: tuple[int, int] | None = None
    # the NVIDIA compute capability with the nearest feature set; a capability gate is wrong
    # on this target where the two give different answers (left out: gates are not judged)
    nvidia_class: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        check_sources(self.sources)
        if not 0 < self.lds_kib <= 1024:
            raise ValueError(f"lds_kib: {self.lds_kib} is not in 1..1024")
        if not self.products:
            raise ValueError("products: at least one is needed")

    def reported_capability(self) -> tuple[int, int] | None:
        """(major, minor) as torch on ROCm reports it: HIP takes them from the gfx number."""
        if self.capability is not None:
            return self.capability
        digits = self.name.removeprefix("gfx")
        if len(digits) < 3:
            return None
        try:
            return int(digits[:-2], 16 if len(digits) == 3 else 10), int(digits[-2], 16)
        except ValueError:
            return None


def _plain_target(raw: dict[str, Any]) -> TargetInfo | None:
    """A bundled targets.toml entry as a TargetInfo when it plainly is one, else None:
    pydantic then decides, and words the error (:func:`gpuport.knowledge.plain.plain_record`)."""
    target: TargetInfo | None = plain_record(TargetInfo, raw)
    return target


class PackageDB:
    """Lookup of packages by distribution name and by import name."""

    def __init__(self, packages: list[PackageInfo]) -> None:
        self.packages = packages
        self._exact = {normalize_name(p.name): p for p in packages}
        self._misses: set[str] = set()
        self._glob_hits: dict[str, PackageInfo] = {}  # a name a glob matched, remembered
        # aliases (globs allowed), normalised once; one regex says whether any can match
        self._globs = [(normalize_name(a), p) for p in packages for a in p.aliases]
        any_glob = "|".join(f"(?:{textre.glob(g).pattern})" for g, _ in self._globs)
        self._any_glob = textre.compile(any_glob) if any_glob else None
        self._imports: dict[str, PackageInfo] = {}
        for pkg in packages:
            for mod in pkg.imports:
                self._imports.setdefault(mod, pkg)

    def by_dist(self, name: str) -> PackageInfo | None:
        norm = normalize_name(name)
        hit = self._exact.get(norm) or self._glob_hits.get(norm)
        if hit is not None or norm in self._misses:
            return hit
        if self._any_glob is not None and self._any_glob.match(norm):
            for glob, pkg in self._globs:  # in catalog order, as PackageInfo.matches would
                if textre.glob(glob).match(norm):
                    if len(self._glob_hits) < 100_000:  # 5,000 cupy pins: 4 s of globs
                        self._glob_hits[norm] = pkg
                    return pkg
        if len(self._misses) < 100_000:  # a miss is remembered, not re-matched
            self._misses.add(norm)
        return None

    def by_import(self, dotted: str) -> PackageInfo | None:
        """Longest matching import prefix: ``numba.cuda.jit`` finds ``numba.cuda``."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            hit = self._imports.get(".".join(parts[:i]))
            if hit is not None:
                return hit
        return None

    def import_names(self) -> set[str]:
        return set(self._imports)


def _read_toml(path: Path) -> dict[str, Any]:
    from gpuport import fileio

    try:  # --knowledge files are user-named: regular files only, bounded
        return toml_table(
            fileio.read_bytes(path, limit=fileio.LIMIT_SETTINGS, what="knowledge file")
        )
    except ParseError as exc:
        raise GpuportError(f"knowledge file {path} is not valid TOML: {exc}") from None


def _entries(path: Path, table: str) -> list[dict[str, Any]]:
    data = _read_toml(path)
    entries = data.get(table, [])
    if not isinstance(entries, list):
        raise GpuportError(f"knowledge file {path}: [[{table}]] must be an array of tables")
    return entries


def _validated(model: type[M], path: Path, raw: list[dict[str, Any]]) -> list[M]:
    """Each entry validated by pydantic as ``model`` (imported here, on first use)."""
    from pydantic import TypeAdapter, ValidationError

    adapter = TypeAdapter(model)
    out: list[M] = []
    for i, entry in enumerate(raw):
        try:
            out.append(adapter.validate_python(entry))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(entry)"
            name = entry.get("name", f"#{i + 1}")
            raise GpuportError(
                f"knowledge file {path}: entry {name!r}: {where}: {first['msg']}"
            ) from None
    return out


def _merge(bundled: list[M], extra: list[M], key: str) -> list[M]:
    by_key = {getattr(item, key): item for item in bundled}
    for item in extra:
        by_key[getattr(item, key)] = item
    return list(by_key.values())


USER_FILES = (
    "packages.toml",
    "targets.toml",
    "gpus.toml",
    "models.toml",
    "kernel_families.toml",
)


def _user_file(user_dir: Path | None, name: str) -> Path | None:
    """``user_dir/name`` if present; a folder holding none of the knowledge files is refused.

    Refusing an empty folder catches a mistyped ``--knowledge`` path that happens to
    exist, instead of silently running on the bundled data alone.
    """
    if user_dir is None:
        return None
    if not user_dir.is_dir():
        raise GpuportError(f"--knowledge {user_dir}: not a directory")
    if not any((user_dir / f).is_file() for f in USER_FILES):
        raise GpuportError(
            f"--knowledge {user_dir}: holds none of the knowledge files ({', '.join(USER_FILES)})"
        )
    candidate = user_dir / name
    return candidate if candidate.is_file() else None


@cache
def load_packages(user_dir: Path | None = None) -> PackageDB:
    """The bundled packages.toml, extended or overridden by ``user_dir/packages.toml``."""
    from gpuport.knowledge.schema import PackageInfo

    path = KNOWLEDGE_DIR / "packages.toml"
    items = _validated(PackageInfo, path, _entries(path, "package"))
    extra_path = _user_file(user_dir, "packages.toml")
    if extra_path is not None:
        extra = _validated(PackageInfo, extra_path, _entries(extra_path, "package"))
        items = _merge(items, extra, "name")
    return PackageDB(items)


class _PackagesOnDemand(PackageDB):
    """:func:`load_packages`, read when a rule first looks a package up."""

    def __init__(self, user_dir: Path | None) -> None:  # nothing read yet
        self._user_dir = user_dir

    def __getattr__(self, name: str) -> Any:  # the first use: take the real catalog's state
        if name.startswith("__") or name == "_user_dir":
            raise AttributeError(name)
        db = load_packages(self._user_dir)
        self.__dict__.update(db.__dict__)
        return getattr(db, name)


def packages_on_demand(user_dir: Path | None = None) -> PackageDB:
    """The package catalog, read (~0.06 s: TOML and validation) only when a rule uses it:
    ``gpuport hipify`` runs the native rules, which never do (start-up, issue 18)."""
    return _PackagesOnDemand(user_dir)


@cache
def load_targets(user_dir: Path | None = None) -> dict[str, TargetInfo]:
    """gfx targets by name, bundled plus ``user_dir/targets.toml``."""
    path = KNOWLEDGE_DIR / "targets.toml"
    raw = _entries(path, "target")
    # the bundled file, validated whole by the test suite: read plainly when every entry
    # plainly fits (no pydantic, start-up of gpuport hipify), else validated
    plain = [_plain_target(entry) if isinstance(entry, dict) else None for entry in raw]
    items = [t for t in plain if t is not None]
    if len(items) != len(raw):
        items = _validated(TargetInfo, path, raw)
    extra_path = _user_file(user_dir, "targets.toml")
    if extra_path is not None:
        items = _merge(
            items, _validated(TargetInfo, extra_path, _entries(extra_path, "target")), "name"
        )
    return {t.name: t for t in items}


def resolve_target(name: str, user_dir: Path | None = None) -> TargetInfo:
    """Find a target by gfx name, alias (``mi300x``) or family (``cdna3``)."""
    targets = load_targets(user_dir)
    key = name.strip().lower()
    if key in targets:
        return targets[key]
    for target in targets.values():
        if key in (a.lower() for a in target.aliases):
            return target
    import difflib

    names = [n for t in targets.values() for n in (t.name, *(a.lower() for a in t.aliases))]
    close = difflib.get_close_matches(key, names, n=3, cutoff=0.6)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    # One line a terminal can show: each gfx name with its first two product names, not every
    # alias (18 targets and their ~120 aliases made a 1,900-character line; issue 29's trial).
    known = "; ".join(
        f"{t.name} ({', '.join(t.aliases[:2])}{', …' if len(t.aliases) > 2 else ''})"
        if t.aliases
        else t.name
        for t in targets.values()
    )
    raise GpuportError(f"unknown target {name!r}{hint}; known targets: {known}")


_SCHEMA_NAMES = ("PackageInfo", "Route", "Sourced")


def __getattr__(name: str) -> Any:
    """The pydantic models of the package catalog (:mod:`gpuport.knowledge.schema`), imported
    when first asked for: a command that reads no catalog does not import pydantic."""
    if name in _SCHEMA_NAMES:
        from gpuport.knowledge import schema

        return getattr(schema, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
