"""Shared base types used by every capability's result model.

Kept deliberately small: a location in a project, a severity scale, the
schema version every JSON output carries, and the error type that the CLI
turns into a one-line message with exit code 2.
"""

from __future__ import annotations

import enum
import hashlib
import json
import platform
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpuport import __version__
from gpuport.errors import EnvironmentProblem, GpuportError
from gpuport.safeparse import ParseError, json_value

SCHEMA_VERSION = "1.0"

__all__ = [
    "SCHEMA_VERSION",
    "EnvFingerprint",
    "EnvironmentProblem",
    "GpuportError",
    "Location",
    "Severity",
    "load_result",
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


class Location(BaseModel):
    """Where in the scanned project something was found (1-based line and column)."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(description="path relative to the scanned root, with forward slashes")
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    snippet: str | None = Field(default=None, description="the source line, trimmed")

    def display(self) -> str:
        out = self.path
        if self.line is not None:
            out += f":{self.line}"
            if self.column is not None:
                out += f":{self.column}"
        return out


class EnvFingerprint(BaseModel):
    """Enough about the machine and tool to tell two result files apart later."""

    model_config = ConfigDict(frozen=True)

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
    libraries: dict[str, str] = Field(default_factory=dict)

    @classmethod
    def collect(cls) -> EnvFingerprint:
        """The fields that need no GPU; GPU-aware callers fill in the rest."""
        host = socket.gethostname()
        digest = hashlib.sha256(host.encode()).hexdigest()[:12]
        return cls(
            gpuport_version=__version__,
            python=platform.python_version(),
            platform=platform.platform(terse=True),
            hostname_hash=digest,
            created=datetime.now(UTC).isoformat(timespec="seconds"),
        )


ResultT = TypeVar("ResultT", bound=BaseModel)


def sealed_digest(model: BaseModel) -> str:
    """The content digest of a result model as its JSON file will hold it (the
    ``digest`` computed field of bench runs and validate reports)."""
    from gpuport.integrity import digest_of

    return digest_of(json.loads(model.model_dump_json(exclude={"digest"})))


def load_result(path: Path, model: type[ResultT]) -> ResultT:
    """Read a gpuport JSON result file, validated whole, or refuse it with one clear line.

    Files from a newer major schema version are refused rather than half-read.
    """
    from gpuport import fileio  # local: fileio imports this module

    raw = fileio.read_bytes(path, limit=fileio.LIMIT_RESULT)  # regular file only, bounded
    try:
        data = json_value(raw)
    except ParseError as exc:
        raise GpuportError(f"{path} is not JSON: {exc}") from None
    kind = model.model_fields.get("kind")
    expected = kind.default if kind is not None else None
    if not isinstance(data, dict) or (expected and data.get("kind") != expected):
        what = data.get("kind") if isinstance(data, dict) else type(data).__name__
        raise GpuportError(f"{path} is not a {expected or model.__name__} file (found {what!r})")
    version = str(data.get("schema_version", ""))
    if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
        raise GpuportError(
            f"{path} has schema version {version or 'none'}; this gpuport reads {SCHEMA_VERSION}"
        )
    if "digest" in model.model_computed_fields:  # a result file that checks itself
        from gpuport.integrity import check_digest

        check_digest(data, str(path))
    try:
        result = model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise GpuportError(f"{path} is not a valid {expected}: {where}: {first['msg']}") from None
    check = getattr(result, "consistency_problem", None)
    problem = check() if callable(check) else None
    if problem:
        raise GpuportError(f"{path} is not a consistent {expected} file: {problem}")
    return result
