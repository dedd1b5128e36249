"""Shared base types used by every capability's result model.

Kept deliberately small: a location in a project, a severity scale, the
schema version every JSON output carries, and the error type that the CLI
turns into a one-line message with exit code 2.

No pydantic at import: ``Location`` and ``EnvFingerprint`` are plain frozen dataclasses,
which the pydantic result models that hold them validate and serialize like their own
fields. ``gpuport hipify`` imports this module and never pydantic (~0.2 s of every call,
start-up, issue 18); reading a result file (:func:`load_result`) imports it.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from gpuport import __version__
from gpuport.errors import EnvironmentProblem, GpuportError
from gpuport.safeparse import ParseError, json_value

if TYPE_CHECKING:
    from collections.abc import Callable

    from pydantic import BaseModel

SCHEMA_VERSION = "1.0"

#: The characters that can hide or reorder what a reader sees, as a regular-expression class
#: body: C0/C1 controls (tab and newline kept), zero-width and direction marks (U+200B-U+200F,
#: U+061C), line/paragraph separators, bidi embeddings, overrides and isolates, and the
#: zero-width no-break space (U+FEFF). Renderers make them visible; the port diff quotes a
#: file name holding one, as git does.
HIDDEN_CHARS = (
    r"\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e"
    r"\u2066-\u2069\ufeff"
)

__all__ = [
    "HIDDEN_CHARS",
    "SCHEMA_VERSION",
    "EnvFingerprint",
    "EnvironmentProblem",
    "GpuportError",
    "Location",
    "Severity",
    "load_result",
    "register_consistency_check",
    "sealed_digest",
]


class Severity(enum.StrEnum):
    """How much a finding stands in the way of running on ROCm."""

    BLOCKER = "blocker"
    MAJOR = "major"
    MINOR = "minor"
    INFO = "info"

    @property
    def rank(self) -> int:
        """Larger is worse; lets callers compare severities."""
        return _RANK[self]

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(s.value for s in cls)
            raise GpuportError(f"unknown severity {text!r}; choose one of: {names}") from None


_RANK = {Severity.INFO: 0, Severity.MINOR: 1, Severity.MAJOR: 2, Severity.BLOCKER: 3}


@dataclass(frozen=True, kw_only=True)
class Location:
    """Where in the scanned project something was found (1-based line and column)."""

    path: str  # relative to the scanned root, with forward slashes
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    snippet: str | None = None  # the source line, trimmed

    def display(self) -> str:
        out = self.path
        if self.line is not None:
            out += f":{self.line}"
            if self.column is not None:
                out += f":{self.column}"
        return out


@dataclass(frozen=True, kw_only=True)
class EnvFingerprint:
    """Enough about the machine and tool to tell two result files apart later."""

    gpuport_version: str
    python: str
    platform: str
    hostname_hash: str
    created: str
    gpu_name: str | None = None
    gpu_arch: str | None = None
    driver: str | None = None
    runtime: str | None = None
    torch: str | None = None
    libraries: dict[str, str] = field(default_factory=dict)

    @classmethod
    def collect(cls) -> EnvFingerprint:
        """The fields that need no GPU; GPU-aware callers fill in the rest."""
        import hashlib
        import platform
        import socket
        from datetime import UTC, datetime

        host = socket.gethostname()
        digest = hashlib.sha256(host.encode()).hexdigest()[:12]
        return cls(
            gpuport_version=__version__,
            python=platform.python_version(),
            platform=os_platform(),
            hostname_hash=digest,
            created=datetime.now(UTC).isoformat(timespec="seconds"),
        )


def os_platform() -> str:
    """``Linux-6.1.0-x86_64`` from ``os.uname()``: a system call. Python's
    ``platform.platform()`` and ``platform.processor()`` run ``uname -p`` through the caller's
    PATH, where a scanned repository's ``bin/uname`` could be found (issue 23)."""
    import os

    u = os.uname()
    return f"{u.sysname}-{u.release}-{u.machine}"


ResultT = TypeVar("ResultT")  # a pydantic result model, or a dataclass report (hipify)

#: Result model -> the function that names the first derived figure of a loaded result that
#: does not follow from its raw data (None when all do). Each core registers its own in its
#: package ``__init__`` (which runs before its model can be imported), so a result model
#: never imports the module that checks it (no import cycle inside a package).
_CONSISTENCY: dict[type, Callable[[Any], str | None]] = {}


def register_consistency_check(model: type, check: Callable[[Any], str | None]) -> None:
    """Make :func:`load_result` run ``check`` on every ``model`` it loads."""
    _CONSISTENCY[model] = check


def consistency_problem(result: object) -> str | None:
    """The registered check of ``result``'s model run on it (None when it has none)."""
    check = _CONSISTENCY.get(type(result))
    return check(result) if check is not None else None


def sealed_digest(model: BaseModel) -> str:
    """The content digest of a result model as its JSON file will hold it (the
    ``digest`` computed field of bench runs and validate reports)."""
    from gpuport.integrity import digest_of

    return digest_of(json.loads(model.model_dump_json(exclude={"digest"})))


def load_result(path: Path, model: type[ResultT]) -> ResultT:
    """Read a gpuport JSON result file, validated whole, or refuse it with one clear line.

    ``model`` is a pydantic result model, or a dataclass report (``gpuport hipify``'s),
    which pydantic validates the same way. Files from a newer major schema version are
    refused rather than half-read.
    """
    import dataclasses

    from pydantic import BaseModel, TypeAdapter, ValidationError

    from gpuport import fileio  # local: fileio imports this module

    raw = fileio.read_bytes(path, limit=fileio.LIMIT_RESULT)  # regular file only, bounded
    try:
        data = json_value(raw)
    except ParseError as exc:
        raise GpuportError(f"{path} is not JSON: {exc}") from None
    pydantic_model = isinstance(model, type) and issubclass(model, BaseModel)
    if pydantic_model:
        kind = model.model_fields.get("kind")  # type: ignore[attr-defined]
        expected = kind.default if kind is not None else None
    else:
        fields = {f.name: f.default for f in dataclasses.fields(model)}  # type: ignore[arg-type]
        expected = fields.get("kind") if isinstance(fields.get("kind"), str) else None
    if not isinstance(data, dict) or (expected and data.get("kind") != expected):
        what = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise GpuportError(f"{path} is not a {expected or model.__name__} file (found {what!r})")
    version = str(data.get("schema_version", ""))
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise GpuportError(
            f"{path} has schema version {version or 'none'}; this gpuport reads {SCHEMA_VERSION}"
        )
    if pydantic_model and "digest" in model.model_computed_fields:  # type: ignore[attr-defined]
        # a result file that checks itself
        from gpuport.integrity import check_digest

        check_digest(data, str(path))
    try:
        result = TypeAdapter(model).validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise GpuportError(f"{path} is not a valid {expected}: {where}: {first['msg']}") from None
    problem = consistency_problem(result)
    if problem:
        raise GpuportError(f"{path} is not a consistent {expected} file: {problem}")
    return result
