"""What every probe is given: where the machine's files are, the environment, time limits.

The file-system root is a parameter so that tests (and the docs' examples) can point the
probes at a fake machine: a folder holding ``sys/bus/pci/devices/...``, ``dev/kfd``,
``etc/group`` and ``opt/rocm/.info/version``. Tools are found through ``PATH`` (then
``<root>/opt/rocm/bin``), so a test puts fake ``rocminfo``/``nvidia-smi`` scripts first.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gpuport import textre
from gpuport.doctor.snapshot import Layer, ProbeStatus

DEFAULT_TIMEOUT_S = 3.0
ROOT_ENV = "GPUPORT_DOCTOR_ROOT"


@dataclass(frozen=True)
class DoctorOptions:
    """How to probe. ``only`` limits the probes by name (tests, and --verbose debugging)."""

    root: Path = Path("/")
    timeout_s: float = DEFAULT_TIMEOUT_S
    smoke_test: bool = True
    env: Mapping[str, str] | None = None
    python: str = sys.executable
    only: frozenset[str] | None = None
    #: folders no program is run from (``assess --doctor PROJECT``: the project, whatever
    #: PATH or ROCM_PATH say; twentieth re-run F7)
    avoid: tuple[Path, ...] = ()

    @property
    def torch_timeout_s(self) -> float:
        """Importing torch takes seconds on its own; a tool's limit would be too short."""
        return max(20.0, 5 * self.timeout_s)

    @property
    def smoke_timeout_s(self) -> float:
        """First GPU use initialises every visible device; eight of them take a while."""
        return max(45.0, 10 * self.timeout_s)


# Login names that say nothing about a person (and that group names in a snapshot use).
_PUBLIC_NAMES = frozenset({"root", "nobody", "user", "ubuntu", "admin", "render", "video"})


def login_names(env: Mapping[str, str]) -> frozenset[str]:
    """The names this user is known by: $USER, $LOGNAME and the password database's."""
    names = {env.get("USER") or "", env.get("LOGNAME") or ""}
    with contextlib.suppress(KeyError, ImportError):
        import pwd

        names.add(pwd.getpwuid(os.getuid()).pw_name)
    return frozenset(n for n in names if len(n) >= 2 and n not in _PUBLIC_NAMES)


@dataclass(frozen=True)
class ProbeContext:
    options: DoctorOptions
    env: Mapping[str, str]
    logins: frozenset[str] = frozenset()

    @classmethod
    def create(cls, options: DoctorOptions) -> ProbeContext:
        env = dict(os.environ if options.env is None else options.env)
        return cls(options=options, env=env, logins=login_names(env))

    @property
    def root(self) -> Path:
        return self.options.root

    @property
    def rooted(self) -> bool:
        """True when probing a fake machine: never mix in the live one's databases then."""
        return self.root.resolve() != Path("/")

    def path(self, absolute: str) -> Path:
        """``/sys/bus/pci`` under the probed root."""
        return self.root / absolute.lstrip("/")

    def read(self, absolute: str, limit: int = 1 << 20) -> str | None:
        """A small text file's content, or None when it is missing or unreadable (see
        :func:`read_small`)."""
        return read_small(self.path(absolute), self.root, limit)

    def which(self, name: str) -> str | None:
        """An absolute path; relative PATH entries (".", empty) are skipped: doctor never
        runs a program from the folder it was started in."""
        from gpuport import subproc

        avoid = self.options.avoid
        found = subproc.which(name, path=self.env.get("PATH", os.defpath), avoid=avoid)
        if found:
            return found
        for candidate in self._install_candidates(name):
            if subproc.which(name, path=str(candidate.parent), avoid=avoid) is None:
                continue  # inside a folder no program is run from
            if subproc.project_around(candidate.parent):
                # an install root inside a project (GPUPORT_DOCTOR_ROOT or ROCM_PATH set by
                # its .envrc: twenty-fourth re-run) holds the project's programs, not ROCm's
                continue
            return str(candidate)
        return None

    def _install_candidates(self, name: str) -> list[Path]:
        found = []
        for base in (self.env.get("ROCM_PATH"), "/opt/rocm"):
            if base:
                candidate = self.path(base) / "bin" / name
                if candidate.is_file() and os.access(candidate, os.X_OK):
                    found.append(candidate)
        return found

    def passed_over(self, name: str) -> str | None:
        """Where ``name`` was found but not run (inside the project at hand, or an install
        root inside a project), for the probe's message; None when it is nowhere."""
        from gpuport import subproc

        found = subproc.which(name, path=self.env.get("PATH", os.defpath))
        if found is None:
            found = next((str(c) for c in self._install_candidates(name)), None)
        return None if found is None else self.redact(found)

    def home(self) -> str | None:
        return self.env.get("HOME") or None

    def redact(self, text: str) -> str:
        """The home folder as ``~`` and the login name as ``<user>``: a shared snapshot
        should not name the user (``/scratch/alice/venv`` -> ``/scratch/<user>/venv``)."""
        home = (self.home() or "").rstrip("/")
        if len(home) > 1 and home in text:
            text = textre.sub(re.escape(home) + r"(?![\w.-])", "~", text)
        for name in self.logins:
            if name in text:
                text = textre.sub(
                    rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", "<user>", text
                )
        return text


@dataclass
class ProbeResult:
    """A probe's data (snapshot field -> value) and how the probe went."""

    data: dict[str, object] = field(default_factory=dict)
    status: ProbeStatus = ProbeStatus.OK
    message: str | None = None


ProbeFn = Callable[[ProbeContext], ProbeResult]


@dataclass(frozen=True)
class Probe:
    name: str
    layer: Layer
    fn: ProbeFn
    slow: bool = False  # runs torch in a subprocess: gets the torch time limit


def read_small(path: Path, root: Path, limit: int = 1 << 16) -> str | None:
    """At most ``limit`` bytes of a regular file, or None: a pipe, device or socket is not
    read (a link to ``/dev/zero`` read 3 GB), and under a fake machine's root (the
    ``GPUPORT_DOCTOR_ROOT`` a project's environment may set) a file whose real path leaves
    the root is not read either (``proc/sys/kernel/osrelease -> /proc/self/environ`` put the
    environment in the snapshot; twenty-eighth re-run F7, F13). Opened without blocking."""
    import stat

    try:
        if root.resolve() != Path("/"):
            real = os.path.realpath(path)
            top = os.path.realpath(root).rstrip(os.sep) + os.sep
            if not real.startswith(top):
                return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")
