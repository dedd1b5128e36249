"""Project settings for ``gpuport assess``: ``[tool.gpuport]``, ``gpuport.toml``, flags.

Why settings live in the project: the questions an assessment answers (which AMD chip, which
GPUs to price, which model is served at what context) belong to the project, not to whoever
runs the command, so a team writes them once and every run (CI, a colleague's laptop) answers
the same question. Flags override them for a what-if.

A project's settings may narrow what gpuport does, never make it run a program: ``hipify_check
= true`` (the HIP compiler) and ``doctor = true`` (doctor's probes) in a project's file are not
applied, with a note; only ``--hipify-check`` and ``--doctor`` on the command line run them
(issue 23). A setting that only picks what is read or reported is taken from the file.

Precedence, per key: a flag, else ``gpuport.toml`` in the project folder, else
``[tool.gpuport]`` of its ``pyproject.toml``, else the default. When both files exist,
``gpuport.toml`` is used and the pyproject table is ignored with a note (as ruff does with
``ruff.toml``): two half-configurations are harder to reason about than one. The pyproject is
then not even parsed, and a pyproject that is not valid TOML only costs its settings (a note
says so; the scan reports the file): it is the project's file, not gpuport's. Keys may be
written ``snake_case`` or ``kebab-case``. An unknown key or a value of the wrong type is an
input error (exit 2) with one line that names the file, the key and what it should be.

A flag replaces the settings it conflicts with, not only its own key: ``--model-config``
drops the file's ``model`` (and ``--model`` its ``model_config``), and ``--gpus`` drops the
file's prices of GPUs no longer listed, each with a note, so a what-if never fails on the
project's own settings.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from gpuport import fileio, textre
from gpuport.assess.model import Origin, Setting
from gpuport.knowledge import resolve_target
from gpuport.knowledge.gpus import resolve_gpu
from gpuport.models import GpuportError
from gpuport.safeparse import ParseError, toml_table

DTYPES = ("bf16", "fp16", "fp8", "int8", "int4", "fp4", "mxfp4", "nvfp4")
KV_DTYPES = ("auto", "bf16", "fp16", "fp8")
FAIL_ON = ("blocked", "major", "minor", "never")
DEFAULT_GPUS = ("h100-sxm", "mi300x")
DEFAULT_HIP_VERSION = "6.4"  # the HIP the translation targets (gpuport.hipify's default)
DEFAULT_TOKENS = 1024  # input_tokens and output_tokens of the priced request
#: Far beyond any real workload, and small enough that no figure made from it overflows
#: (the cost model's own bound, so its flag-worded errors never reach an assessment).
MAX_INT = 2**40
_HIP_VERSION = textre.compile(r"\d+\.\d+(\.\d+)?")
_TOOL_TABLE = textre.compile(r"^\s*\[\s*tool\s*\.\s*gpuport\s*[\].]", re.MULTILINE)


@dataclass(frozen=True)
class Settings:
    """The settings an assessment runs with; ``origins`` says where each value came from."""

    root: Path
    targets: tuple[str, ...] = ("gfx942",)
    gpus: tuple[str, ...] = DEFAULT_GPUS
    models: tuple[str, ...] = ()
    model_config: Path | None = None
    dtype: str = "bf16"
    kv_dtype: str = "auto"
    context: int = 8192
    concurrency: int | None = None
    input_tokens: int = DEFAULT_TOKENS
    output_tokens: int = DEFAULT_TOKENS
    prices: tuple[tuple[str, float], ...] = ()
    train: bool = False
    exclude: tuple[str, ...] = ()
    bench: tuple[str, ...] = ()
    validate: tuple[str, ...] = ()
    doctor: bool = False
    hipify_check: bool = False
    hip_version: str = DEFAULT_HIP_VERSION
    fail_on: str = "never"
    origins: Mapping[str, Origin] | None = None
    config_file: str | None = None
    notes: tuple[str, ...] = ()
    details: Mapping[str, str] | None = None

    @property
    def target(self) -> str:
        """The target the scan and the verdict are for (the first of ``targets``)."""
        return self.targets[0]

    def origin(self, name: str) -> Origin:
        return (self.origins or {}).get(name, "default")

    def given(self, name: str) -> bool:
        """Set by someone (a flag or a settings file), not a default."""
        return self.origin(name) != "default"

    def echo(self) -> list[Setting]:
        """Every setting with its value and origin, for the report's settings table."""
        out: list[Setting] = []
        for key, attr in zip(VALID_KEYS, KEYS, strict=True):
            value = getattr(self, attr)
            detail = (self.details or {}).get(attr, "")
            jsonable = {} if attr == "prices" and not value else _jsonable(value)
            out.append(Setting(name=key, value=jsonable, origin=self.origin(attr), detail=detail))
        return out


# ----------------------------------------------------------------------- value checks

Check = Callable[[Any, str, Path], Any]


_FLAG_NAMES = {"targets": "--target", "prices": "--price"}


def _where(source: str, key: str) -> str:
    """How an error names a setting: ``FILE: `key``` or the flag that set it."""
    if source == "flag":
        return _FLAG_NAMES.get(key, f"--{key.replace('_', '-')}")
    return f"{source}: `{key}`"


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise GpuportError(f"{where} must be a non-empty string, not {value!r}")
    return value.strip()


#: Distinct names a list setting may hold: a project names a handful of models, GPUs or
#: targets; 60,000 of them in a gpuport.toml took 34 s to resolve (twentieth re-run F6)
MOST_NAMES = 256
#: Exclude patterns a settings file may hold (each is compiled and tried on every path)
MOST_PATTERNS = 1_000


def _str_list(
    value: Any, where: str, most: int = MOST_NAMES, *, fold: bool = True
) -> tuple[str, ...]:
    """A list of strings, repeats folded (``fold``: names, whose order does not matter); a
    single string or a comma-separated one is accepted too. More than ``most`` entries
    (distinct ones, when folded) is an error."""
    items = value if isinstance(value, list | tuple) else [value]
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, str):
            raise GpuportError(f"{where} must be a list of strings, not {value!r}")
        for part in item.split(","):
            entry = part.strip()
            if not entry or (fold and entry in seen):
                continue
            seen.add(entry)
            out.append(entry)
            if len(out) > most:
                raise GpuportError(f"{where} lists more than {most} entries")
    return tuple(out)


def _positive_int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_INT:
        raise GpuportError(f"{where} must be a positive integer (at most 2^40), not {value!r}")
    return value


def _hip_version(value: Any, where: str) -> str:
    text = _str(value, where)
    # a version is short: 5,000 digits passed the pattern and ended the run in int()'s
    # digit limit (twenty-ninth re-run F1)
    if len(text) > 32 or not _HIP_VERSION.fullmatch(text):
        raise GpuportError(f"{where} must be a HIP version such as 6.4 or 6.2.4, not {value!r}")
    return text


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise GpuportError(f"{where} must be true or false, not {value!r}")
    return value


def _choice(value: Any, where: str, allowed: tuple[str, ...]) -> str:
    text = _str(value, where).lower()
    if text not in allowed:
        raise GpuportError(f"{where} must be one of {', '.join(allowed)}, not {value!r}")
    return text


def _path(value: Any, where: str, base: Path) -> Path:
    """A path from a settings file is relative to that file's folder; from a flag, to cwd."""
    text = _str(value, where)
    if "\0" in text:  # no file has such a name (os calls raise on it: thirty-third re-run F9)
        raise GpuportError(f"{where}: {text!r} is not a file name (it holds a NUL byte)")
    try:
        path = Path(text).expanduser()
    except RuntimeError as exc:  # `~nosuchuser/...`: no such home folder
        raise GpuportError(f"{where}: {text!r}: {exc}") from None
    return path if path.is_absolute() else base / path


def _paths(value: Any, where: str, base: Path) -> tuple[str, ...]:
    """Bench/validate references: a file path (made relative to ``base``) or a history id."""
    out: list[str] = []
    for item in _str_list(value, where):
        candidate = base / item
        looks_like_file = "/" in item or item.lower().endswith(".json") or _exists(candidate)
        out.append(str(candidate) if looks_like_file and not Path(item).is_absolute() else item)
    return tuple(out)


def _project_refs(value: Any, where: str, root: Path) -> tuple[str, ...]:
    """Bench/validate references in a project's own settings: files of the project, always.

    A bare name is a file name in the project, never a bench history id (ids are of this
    machine, and a project could name the user's runs) nor a file of the current folder (which
    opened the user's own files by name: the ninth independent review)."""
    items = _str_list(value, where)
    for item in items:
        if "\0" in item:
            raise GpuportError(f"{where}: {item!r} is not a file name (it holds a NUL byte)")
    return tuple(str(root / item) for item in items)


def _exists(path: Path) -> bool:
    """``path.exists()``, False for a name no file can have (too long, a NUL byte: the fuzzer
    found both raising out of a settings file)."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def _targets(value: Any, where: str, _: Path) -> tuple[str, ...]:
    names = _str_list(value, where)
    if not names:
        raise GpuportError(f"{where} needs at least one AMD target, e.g. gfx942")
    return tuple(dict.fromkeys(resolve_target(n).name for n in names))


def _gpus(value: Any, where: str, _: Path) -> tuple[str, ...]:
    names = _str_list(value, where)
    if not names:
        raise GpuportError(f"{where} needs at least one GPU, e.g. h100-sxm,mi300x")
    return tuple(dict.fromkeys(resolve_gpu(n).key for n in names))


def _models(value: Any, where: str, _: Path) -> tuple[str, ...]:
    from gpuport.knowledge.models import resolve_model

    return tuple(dict.fromkeys(resolve_model(n).key for n in _str_list(value, where)))


def _prices(value: Any, where: str, _: Path) -> tuple[tuple[str, float], ...]:
    """A table ``{h100-sxm = 2.90}`` (settings file) or ``GPU=USD`` items (flags)."""
    if isinstance(value, list | tuple):
        pairs: dict[str, Any] = {}
        for item in _str_list(value, where):
            name, sep, number = item.partition("=")
            if not sep:
                raise GpuportError(f"{where} {item!r}: expected GPU=USD, e.g. h100-sxm=2.90")
            try:
                pairs[name.strip()] = float(number.strip().lstrip("$"))
            except ValueError:
                raise GpuportError(f"{where} {item!r}: {number!r} is not a number") from None
        value = pairs
    if not isinstance(value, dict):
        raise GpuportError(f"{where} must be a table of GPU = USD per hour, e.g. {{mi300x = 1.85}}")
    out: dict[str, float] = {}
    for name, usd in value.items():
        ok = isinstance(usd, int | float) and not isinstance(usd, bool)
        if not ok or not math.isfinite(usd) or usd <= 0:
            raise GpuportError(f"{where}: the price of {name} must be a positive number of USD")
        out[resolve_gpu(str(name)).key] = float(usd)
    return tuple(sorted(out.items()))


_FIELDS: dict[str, Check] = {
    "targets": _targets,
    "gpus": _gpus,
    "model": _models,
    "model_config": lambda v, w, b: _path(v, w, b),
    "dtype": lambda v, w, _: _choice(v, w, DTYPES),
    "kv_dtype": lambda v, w, _: _choice(v, w, KV_DTYPES),
    "context": lambda v, w, _: _positive_int(v, w),
    "concurrency": lambda v, w, _: _positive_int(v, w),
    "input_tokens": lambda v, w, _: _positive_int(v, w),
    "output_tokens": lambda v, w, _: _positive_int(v, w),
    "prices": _prices,
    "train": lambda v, w, _: _bool(v, w),
    "exclude": lambda v, w, _: _str_list(v, w, MOST_PATTERNS, fold=False),  # order matters
    "bench": _paths,
    "validate": _paths,
    "doctor": lambda v, w, _: _bool(v, w),
    "hipify_check": lambda v, w, _: _bool(v, w),
    "hip_version": lambda v, w, _: _hip_version(v, w),
    "fail_on": lambda v, w, _: _choice(v, w, FAIL_ON),
}
#: Settings-file key -> Settings attribute (``model`` holds one name or a list: ``models``).
_ATTR = {"model": "models"}
VALID_KEYS = tuple(_FIELDS)
KEYS = tuple(_ATTR.get(k, k) for k in _FIELDS)


def _normalise(raw: Mapping[str, Any], source: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, value in raw.items():
        norm = str(key).replace("-", "_")
        if norm == "target":  # a single target is a common spelling; same meaning
            norm = "targets"
        if norm not in _FIELDS:
            raise GpuportError(
                f"{source}: unknown setting {key!r}; valid settings: {', '.join(VALID_KEYS)}"
            )
        if norm in out:
            raise GpuportError(
                f"{source}: {spelled[norm]!r} and {key!r} set the same thing; keep one"
            )
        out[norm] = value
        spelled[norm] = str(key)
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    try:  # bounded, regular file, not a link out of the project (gpuport.fileio)
        return toml_table(fileio.read_bytes(path, limit=fileio.LIMIT_SETTINGS, root=path.parent))
    except ParseError as exc:
        raise GpuportError(f"{path} is not valid TOML: {exc}") from None


def _pyproject_table(pyproject: Path, notes: list[str]) -> dict[str, Any] | None:
    """``[tool.gpuport]`` of the project's pyproject.toml; None when there is none.

    The pyproject belongs to the project and serves other tools: when it is not valid TOML
    the assessment goes on without its settings (a note says so) instead of failing.
    """
    try:
        data = toml_table(
            fileio.read_bytes(pyproject, limit=fileio.LIMIT_SETTINGS, root=pyproject.parent)
        )
    except fileio.ReadRefused as exc:
        notes.append(f"{pyproject} cannot be read ({exc.reason}); its settings are not used")
        return None
    except ParseError as exc:
        notes.append(
            f"{pyproject} is not valid TOML ({exc}); its [tool.gpuport] settings, if any, "
            "are not used"
        )
        return None
    tool = data.get("tool", {})
    section = tool.get("gpuport") if isinstance(tool, dict) else None
    if section is not None and not isinstance(section, dict):
        raise GpuportError(f"{pyproject}: [tool.gpuport] must be a table")
    return section or None


def _mentions_tool_table(pyproject: Path) -> bool:
    """Whether the pyproject has a ``[tool.gpuport]`` table, without parsing it."""
    try:
        text = fileio.read_text(
            pyproject, limit=fileio.LIMIT_SETTINGS, root=pyproject.parent, errors="replace"
        )
    except fileio.ReadRefused:
        return False
    return bool(_TOOL_TABLE.search(text))


_FILE_KEYS = ("model_config", "bench", "validate")
#: Settings that start programs (the HIP compiler; doctor's probes). A project's own files may
#: turn them off, never on: only the command line may (issue 23).
RUNS_PROGRAMS = {"hipify_check": "--hipify-check", "doctor": "--doctor"}


def _inside_project(value: Any, root: Path, where: str) -> None:
    """A file a project's own settings name must be inside the project: a scanned repository
    cannot make the report read other files of the machine (links are resolved first)."""
    items = [value] if isinstance(value, Path) else [Path(v) for v in value]
    for item in items:
        if fileio.outside_root(item, root) is not None:
            raise GpuportError(
                f"{where}: {item} is outside the project {root}; a project's settings may only "
                "name files inside it (give it as a flag to use it anyway)"
            )


def project_settings(root: Path) -> tuple[dict[str, Any], Origin | None, list[str]]:
    """The raw settings table of the project, which file it came from, and notes.

    The pyproject is parsed only when there is no ``gpuport.toml``; otherwise it is only
    searched for a ``[tool.gpuport]`` header, for the note that it is ignored.
    """
    notes: list[str] = []
    own = root / "gpuport.toml"
    pyproject = root / "pyproject.toml"
    if own.is_file() or own.is_symlink() or own.exists():  # a FIFO or a link: said, not skipped
        data = _read_toml(own)
        nested = data.get("tool", {}).get("gpuport") if isinstance(data.get("tool"), dict) else None
        if isinstance(nested, dict) and set(data) == {"tool"}:
            data = nested  # a [tool.gpuport] table copied over from pyproject.toml also works
        if pyproject.is_file() and _mentions_tool_table(pyproject):
            notes.append("gpuport.toml is used; [tool.gpuport] in pyproject.toml is ignored")
        return data, "gpuport.toml", notes
    if pyproject.is_file() or pyproject.is_symlink() or pyproject.exists():
        section = _pyproject_table(pyproject, notes)
        if section:
            return section, "pyproject.toml", notes
    return {}, None, notes


def load_settings(root: Path, flags: Mapping[str, Any] | None = None) -> Settings:
    """Resolve the settings for the project at ``root``: flags > settings file > defaults.

    ``flags`` holds only what the user gave on the command line (settings-file spelling:
    ``model``, ``gpus``, ``prices`` ...); paths in it are relative to the current folder.
    """
    if not root.is_dir():
        what = "does not exist" if not root.exists() else "is not a folder"
        raise GpuportError(f"{root} {what}; gpuport assess takes a project folder")
    raw, file_origin, notes = project_settings(root)
    source = str(root / (file_origin or "gpuport.toml"))
    from_file = _normalise(raw, source)
    from_flags = _normalise(dict(flags or {}), "flags")
    label = f"{source} [tool.gpuport]" if file_origin == "pyproject.toml" else source
    values: dict[str, Any] = {}
    origins: dict[str, Origin] = {}
    for key, value in from_file.items():
        parse = _project_refs if key in ("bench", "validate") else _FIELDS[key]
        values[_ATTR.get(key, key)] = parse(value, _where(label, key), root)
        if key in RUNS_PROGRAMS and values[key]:
            del values[key]
            notes.append(
                f"{key} = true in {label} is not applied: a project's own settings cannot make "
                f"gpuport run programs; pass {RUNS_PROGRAMS[key]} to run it"
            )
            continue
        if key in _FILE_KEYS:
            _inside_project(values[_ATTR.get(key, key)], root, _where(label, key))
        if key == "exclude" and values[key]:  # it hides files from the scan: say so (F24)
            shown = ", ".join(values[key][:5]) + (" ..." if len(values[key]) > 5 else "")
            notes.append(
                f"exclude = [{shown}] in {label}: the project's own settings leave these paths "
                "out of the scan and the verdict; pass --exclude to choose them yourself"
            )
        origins[_ATTR.get(key, key)] = file_origin or "gpuport.toml"
    given = {
        _ATTR.get(key, key): _FIELDS[key](value, _where("flag", key), Path.cwd())
        for key, value in from_flags.items()
    }
    _drop_conflicts(values, origins, given, file_origin or "gpuport.toml", notes)
    values.update(given)
    for attr in given:
        origins[attr] = "flag"
    details: dict[str, str] = {}
    _fit_request(values, origins, details, notes)
    settings = Settings(
        root=root,
        origins=origins,
        config_file=str(root / file_origin) if file_origin else None,
        notes=tuple(notes),
        details=details,
        **values,
    )
    _cross_check(settings)
    return settings


def _drop_conflicts(
    values: dict[str, Any],
    origins: dict[str, Origin],
    flags: Mapping[str, Any],
    file_name: str,
    notes: list[str],
) -> None:
    """Settings-file values a flag contradicts, removed with a note (the flag wins).

    ``--model`` and ``--model-config`` each replace both model settings of the file, and
    ``--gpus`` (without ``--price``) drops the file's prices of GPUs it no longer lists.
    """
    for flag, other, key in (
        ("models", "model_config", "model_config"),
        ("model_config", "models", "model"),
    ):
        if flag in flags and other not in flags and other in values:
            del values[other]
            del origins[other]
            given = "--model" if flag == "models" else "--model-config"
            notes.append(f"{given} replaces `{key}` from {file_name}")
    if "gpus" in flags and "prices" not in flags and "prices" in values:
        listed = set(flags["gpus"])
        kept = tuple((g, usd) for g, usd in values["prices"] if g in listed)
        dropped = [g for g, _ in values["prices"] if g not in listed]
        if dropped:
            notes.append(
                f"prices from {file_name} for {', '.join(dropped)} dropped: not among --gpus"
            )
        if kept:
            values["prices"] = kept
        else:
            del values["prices"]
            del origins["prices"]


def _fit_request(
    values: dict[str, Any], origins: dict[str, Origin], details: dict[str, str], notes: list[str]
) -> None:
    """Scale the default request shape (1024 + 1024 tokens) into a shorter ``context``.

    A context below 2048 tokens is a legitimate what-if; the request the cost is modelled on
    then shrinks to fit, with a note. Token counts someone set are never changed: when they
    do not fit, :func:`_cross_check` refuses them by name.
    """
    if values.get("train", False):
        return
    context = values.get("context", Settings.context)
    given_in = "input_tokens" in origins
    given_out = "output_tokens" in origins
    n_in = values.get("input_tokens", DEFAULT_TOKENS)
    n_out = values.get("output_tokens", DEFAULT_TOKENS)
    if n_in + n_out <= context or (given_in and given_out):
        return
    if context < 2:
        raise GpuportError(
            f"context {context} leaves no room for a request (one input and one output token "
            "at least); raise context"
        )
    if given_in:
        n_out = context - n_in
    elif given_out:
        n_in = context - n_out
    else:
        n_in = context // 2
        n_out = context - n_in
    if n_in < 1 or n_out < 1:
        return  # the given one alone does not fit: _cross_check names it
    scaled = []
    for key, n in (("input_tokens", n_in), ("output_tokens", n_out)):
        if key not in origins and values.get(key, DEFAULT_TOKENS) != n:
            values[key] = n
            details[key] = f"scaled from {DEFAULT_TOKENS} to fit context {context}"
            scaled.append(f"{key} {n}")
    notes.append(
        f"context {context} is shorter than the default request of {DEFAULT_TOKENS} + "
        f"{DEFAULT_TOKENS} tokens: cost is modelled with {' and '.join(scaled)}"
    )


def _cross_check(s: Settings) -> None:
    """Combinations that cannot work, refused before any step runs."""
    if s.models and s.model_config is not None:
        where = {s.origin("models"), s.origin("model_config")}
        raise GpuportError(
            f"give `model` or `model_config`, not both (set in {' and '.join(sorted(where))})"
        )
    known = set(s.gpus)
    for gpu, _ in s.prices:
        if gpu not in known:
            raise GpuportError(
                f"a price is set for {gpu} ({s.origin('prices')}), which is not among gpus "
                f"({', '.join(s.gpus)})"
            )
    if not s.train and s.input_tokens + s.output_tokens > s.context:
        raise GpuportError(
            f"input_tokens {s.input_tokens} + output_tokens {s.output_tokens} exceed "
            f"context {s.context}: raise context"
        )


def _jsonable(value: Any) -> JsonValue:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple):
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return {str(k): _jsonable(v) for k, v in value}
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def with_detected(s: Settings, name: str, value: Any, detail: str) -> Settings:
    """``s`` with ``name`` (a Settings attribute: ``models``, ``train``, ``hip_version``)
    set from what was found in the project or on this machine, marked as detected, and
    ``detail`` saying where (``loss.backward() at train.py:88``)."""
    return replace(
        s,
        **{name: value},
        origins={**(s.origins or {}), name: "detected"},
        details={**(s.details or {}), name: detail},
    )


def with_default_detail(s: Settings, name: str, detail: str) -> Settings:
    """``s`` with a default's ``detail``: why the default holds (nothing was found)."""
    return replace(s, details={**(s.details or {}), name: detail})
