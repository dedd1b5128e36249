"""The snapshot: every probe's raw result, in one versioned, replayable file.

Checks never look at the live machine; they read a :class:`Snapshot`. That is what makes
each diagnosis testable on machines we do not have (an MI300X node, a Radeon desktop with
an APU, an H100 box with a stale driver): a snapshot saved there with
``gpuport doctor --save-snapshot`` or written by hand replays here with ``--from-snapshot``.

The fields hold raw facts (file contents, tool output, version strings), not conclusions,
so a better parser in a later gpuport re-reads an old snapshot correctly. What a snapshot
leaves out on purpose is documented in docs/doctor.md (privacy): the host name is hashed,
only GPU-relevant environment variables are kept, the home folder is written as ``~`` and
the login name as ``<user>`` everywhere, and nvidia-smi's process table is cut off.
"""

from __future__ import annotations

import enum
import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpuport import textre
from gpuport.models import SCHEMA_VERSION

#: a package name as pip takes it (PEP 508), as the probe writes it: lower case, ``-``-joined
_NAME = textre.compile(r"[a-z0-9](?:[a-z0-9._-]{0,200}[a-z0-9])?")


def content_hash(data: dict[str, Any]) -> str:
    """Hash of a snapshot's JSON data without its id, independent of key order.

    Computed on the data as stored, so a snapshot saved by an older gpuport (without
    fields added since) still matches its id when read back.
    """
    body = json.dumps(
        {k: v for k, v in data.items() if k != "id"}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(body.encode()).hexdigest()[:16]


class Layer(enum.StrEnum):
    """The checklist rows, bottom of the stack first: a fault low down explains those above."""

    HARDWARE = "hardware"
    DRIVER = "driver"
    DEVICE_NODES = "device nodes"
    RUNTIME = "runtime"
    PYTHON = "python stack"
    ENVIRONMENT = "environment"


class ProbeStatus(enum.StrEnum):
    OK = "ok"
    MISSING = "missing"  # the tool or file is not there (or may not be read): no data, no fault
    TIMEOUT = "timeout"
    ERROR = "error"  # crashed, exited non-zero, or the probe itself raised
    SKIPPED = "skipped"  # not run on purpose (--no-smoke-test, CPU-only torch)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ProbeRecord(_Frozen):
    """How one probe went: what a hung or crashed tool looks like in the report."""

    name: str
    layer: Layer
    status: ProbeStatus
    message: str | None = None
    duration_s: float = 0.0


class ToolRun(_Frozen):
    """One external command: argv, exit status (negative: killed by that signal), output."""

    argv: list[str]
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    unset: list[str] = Field(
        default_factory=list,
        description="variables removed from the tool's environment (visibility filters, "
        "HSA_OVERRIDE_GFX_VERSION), so that it reports every GPU as it really is",
    )

    @property
    def text(self) -> str:
        return f"{self.stdout}\n{self.stderr}"


class SystemInfo(_Frozen):
    os_name: str | None = None
    kernel: str | None = None
    machine: str | None = None
    cpu: str | None = None
    cmdline: str | None = None
    wsl: bool = False
    container: str | None = Field(default=None, description="docker, podman, apptainer, k8s")
    secure_boot: bool | None = None
    numa_balancing: int | None = None
    numa_nodes: int | None = None


class PciDevice(_Frozen):
    """A display or accelerator function from /sys/bus/pci/devices (ids without 0x)."""

    address: str
    vendor: str
    device: str
    class_code: str
    driver: str | None = None
    name: str | None = None
    numa_node: int | None = None
    boot_vga: bool | None = None


class KernelModules(_Frozen):
    """GPU modules present under /sys/module (loadable or built in) and their versions."""

    loaded: list[str] = Field(default_factory=list)
    amdgpu_version: str | None = None
    nvidia_version: str | None = None
    nvidia_proc_version: str | None = Field(
        default=None, description="first line of /proc/driver/nvidia/version"
    )


class DeviceNode(_Frozen):
    path: str
    mode: str | None = Field(default=None, description="ls -l style, e.g. crw-rw----")
    group: str | None = None
    accessible: bool = Field(description="this process may open it for read and write")
    vendor: str | None = Field(
        default=None,
        description="PCI vendor of the GPU behind a /dev/dri node (1002 AMD, 10de NVIDIA, "
        "8086 Intel), from /sys/class/drm/<node>/device/vendor",
    )


class UserInfo(_Frozen):
    """Group membership, not the user's name: the fix commands say $USER.

    The user's own per-user group (named like the login) is left out of both lists.
    """

    uid: int | None = None
    is_root: bool = False
    process_groups: list[str] = Field(
        default_factory=list, description="groups this login session has now"
    )
    configured_groups: list[str] = Field(
        default_factory=list, description="groups /etc/group lists the user in (after re-login)"
    )


class Installs(_Frozen):
    rocm_version: str | None = Field(default=None, description="/opt/rocm/.info/version")
    rocm_path: str | None = None
    rocm_dirs: list[str] = Field(default_factory=list)
    cuda_version: str | None = None
    cuda_dirs: list[str] = Field(default_factory=list)


class DirState(_Frozen):
    path: str
    exists: bool
    writable: bool
    parent_writable: bool = True


class PythonStack(_Frozen):
    """What is installed next to torch, read with importlib.metadata (nothing imported)."""

    executable: str | None = None
    version: str | None = None
    distributions: dict[str, str] = Field(
        default_factory=dict, description="GPU-relevant distributions: name -> version"
    )
    extension_backends: dict[str, list[str]] = Field(
        default_factory=dict,
        description="compiled GPU extension -> backends its binaries were built for (cuda, rocm)",
    )

    @field_validator("distributions")
    @classmethod
    def _package_names(cls, value: dict[str, str]) -> dict[str, str]:
        """A distribution name goes into the fix commands doctor prints (``pip uninstall -y
        NAME``): a snapshot from another machine whose names are not package names
        (``x;touch${IFS}f;#``) is refused, not quoted into a command a user may paste."""
        for name in value:
            if not _NAME.fullmatch(name):
                raise ValueError(f"distribution {name[:60]!r} is not a package name")
        return value

    extension_evidence: dict[str, list[str]] = Field(default_factory=dict)
    torch_bundles: list[str] = Field(
        default_factory=list, description="GPU runtimes shipped inside torch/lib: rocm, cuda"
    )


class TorchInfo(_Frozen):
    """torch as a separate interpreter sees it (a broken torch cannot take doctor down)."""

    version: str | None = None
    cuda: str | None = None
    hip: str | None = None
    arch_list: list[str] = Field(default_factory=list)
    import_error: str | None = None


class TorchDevice(_Frozen):
    index: int
    name: str
    arch: str | None = None
    memory_bytes: int | None = None


class SmokeResult(_Frozen):
    """The tiny GPU job: allocate, matmul, synchronize, compare with the CPU."""

    stage: str | None = Field(default=None, description="import, detect or compute")
    available: bool | None = None
    device_count: int | None = None
    devices: list[TorchDevice] = Field(default_factory=list)
    ok: bool | None = None
    error: str | None = None
    returncode: int | None = None
    stderr_tail: str = ""

    @property
    def text(self) -> str:
        return f"{self.error or ''}\n{self.stderr_tail}"


class Snapshot(_Frozen):
    """Everything the checks read. ``id`` is a content hash; an empty id is filled on load."""

    kind: Literal["gpuport.doctor.snapshot"] = "gpuport.doctor.snapshot"
    schema_version: str = SCHEMA_VERSION
    id: str = ""
    created: str = ""
    gpuport_version: str = ""
    hostname_hash: str = ""
    timeout_s: float = 3.0
    probes: list[ProbeRecord] = Field(default_factory=list)
    system: SystemInfo = Field(default_factory=SystemInfo)
    pci: list[PciDevice] = Field(default_factory=list)
    modules: KernelModules = Field(default_factory=KernelModules)
    nodes: list[DeviceNode] = Field(default_factory=list)
    user: UserInfo = Field(default_factory=UserInfo)
    tools: dict[str, ToolRun] = Field(default_factory=dict)
    dmesg: list[str] = Field(default_factory=list, description="GPU-related kernel log lines")
    installs: Installs = Field(default_factory=Installs)
    env: dict[str, str] = Field(default_factory=dict)
    miopen_dirs: list[DirState] = Field(default_factory=list)
    python: PythonStack = Field(default_factory=PythonStack)
    torch: TorchInfo | None = None
    smoke: SmokeResult | None = None

    def content_id(self) -> str:
        """A hash of everything but the id itself: equal content, equal id."""
        return content_hash(self.model_dump(mode="json"))

    def with_id(self) -> Snapshot:
        return self.model_copy(update={"id": self.content_id()})

    def probe(self, name: str) -> ProbeRecord | None:
        return next((p for p in self.probes if p.name == name), None)

    def tool(self, name: str) -> ToolRun | None:
        return self.tools.get(name)
