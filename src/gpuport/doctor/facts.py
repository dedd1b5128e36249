"""Parsed facts derived from a snapshot: which GPUs, which torch build, what the tools said.

Checks share these instead of each re-parsing rocminfo or nvidia-smi. Everything here is
a pure function of the :class:`Snapshot` (plus gpuport's bundled knowledge), so a saved
snapshot gives the same facts on any machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from gpuport import textre
from gpuport.doctor.errors import Failure, classify
from gpuport.doctor.gfx import DEVICE_GFX, ROCM_APUS, apu_name, base_gfx, is_apu
from gpuport.doctor.snapshot import DeviceNode, PciDevice, Snapshot, ToolRun

OVERRIDE_VAR = "HSA_OVERRIDE_GFX_VERSION"

_ANSI = textre.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass(frozen=True)
class Agent:
    """One GPU agent from rocminfo (the gfx it reports may be an override)."""

    gfx: str
    marketing: str | None = None
    uuid: str | None = None
    chip_id: str | None = None
    compute_units: int | None = None


@dataclass(frozen=True)
class NvGpu:
    index: int
    name: str
    driver: str | None
    compute_cap: tuple[int, int] | None
    bus_id: str | None


@dataclass(frozen=True)
class Gpu:
    """A GPU as doctor understands it: vendor, name, true architecture, how it is driven."""

    vendor: str  # "amd" or "nvidia"
    name: str
    arch: str | None
    address: str | None = None
    driver: str | None = None
    uuid: str | None = None
    arch_known: bool = True  # False: ``arch`` is what an override made rocminfo say

    @property
    def integrated(self) -> bool:
        """An APU's graphics: by architecture, or by name when the chip is not in the table."""
        if self.vendor != "amd":
            return False
        if self.arch_known and self.arch is not None:
            return is_apu(self.arch)
        return apu_name(self.name)

    @property
    def rocm_compute(self) -> bool:
        """A GPU that ROCm supports for compute: discrete, or an APU such as Strix Halo."""
        return not self.integrated or (self.arch_known and self.arch in ROCM_APUS)

    def label(self) -> str:
        arch = f" ({self.arch})" if self.arch else ""
        return f"{self.name}{arch}"


def clean_output(run: ToolRun | None) -> str:
    return _ANSI.sub("", run.text) if run is not None else ""


def parse_version(text: str | None, parts: int = 2) -> tuple[int, ...] | None:
    """The first ``parts`` numeric components: "12.4.1" -> (12, 4); "6.2.41133-xyz" -> (6, 2)."""
    if not text:
        return None
    match = textre.search(r"(\d+)((?:\.\d+)*)", text)
    if match is None:
        return None
    nums = [int(match.group(1)), *(int(n) for n in match.group(2).split(".")[1:] if n)]
    nums += [0] * (parts - len(nums))
    return tuple(nums[:parts])


def parse_rocminfo(text: str) -> list[Agent]:
    """GPU agents, taking each agent's first Name/Uuid/... (later ones belong to its ISA)."""
    agents: list[dict[str, str]] = []
    current: dict[str, str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if textre.fullmatch(r"Agent \d+", line):
            current = {}
            agents.append(current)
            continue
        if current is None or ":" not in line:
            continue
        key, _, value = line.partition(":")
        current.setdefault(key.strip(), value.strip())
    out = []
    for agent in agents:
        if agent.get("Device Type", "").upper() != "GPU":
            continue
        gfx = base_gfx(agent.get("Name")) or agent.get("Name", "unknown")
        chip = agent.get("Chip ID", "")
        chip_hex = None
        match = textre.search(r"\(0x([0-9a-fA-F]+)\)", chip)
        if match:
            chip_hex = match.group(1).lower().zfill(4)
        elif chip.isdigit():
            chip_hex = f"{int(chip):04x}"
        cus = textre.match(r"\d+", agent.get("Compute Unit", ""))
        out.append(
            Agent(
                gfx=gfx,
                marketing=agent.get("Marketing Name") or None,
                uuid=agent.get("Uuid") or None,
                chip_id=chip_hex,
                compute_units=int(cus.group()) if cus else None,
            )
        )
    return out


@lru_cache(maxsize=1)
def _product_gfx() -> tuple[tuple[str, str], ...]:
    from gpuport.knowledge import load_targets

    try:
        targets = load_targets()
    except Exception:
        return ()
    pairs = [(p.lower(), t.name) for t in targets.values() for p in t.products]
    return tuple(sorted(pairs, key=lambda pair: -len(pair[0])))


def gfx_from_identity(device_id: str | None, name: str | None) -> str | None:
    """The chip's own gfx from its PCI ID or marketing name: immune to overrides."""
    if device_id and device_id.lower() in DEVICE_GFX:
        return DEVICE_GFX[device_id.lower()]
    lowered = (name or "").lower()
    for product, gfx in _product_gfx():
        if product in lowered:
            return gfx
    return None


class Facts:
    """Lazily parsed views of one snapshot."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.s = snapshot

    # ------------------------------------------------------------------ hardware
    @cached_property
    def amd_pci(self) -> list[PciDevice]:
        return [d for d in self.s.pci if d.vendor == "1002"]

    @cached_property
    def nvidia_pci(self) -> list[PciDevice]:
        return [d for d in self.s.pci if d.vendor == "10de"]

    @cached_property
    def rocminfo_text(self) -> str:
        return clean_output(self.s.tool("rocminfo"))

    @cached_property
    def agents(self) -> list[Agent]:
        return parse_rocminfo(self.rocminfo_text)

    @cached_property
    def rock_loaded(self) -> bool | None:
        if "ROCk module is NOT loaded" in self.rocminfo_text:
            return False
        return True if "ROCk module is loaded" in self.rocminfo_text else None

    @cached_property
    def nv_gpus(self) -> list[NvGpu]:
        run = self.s.tool("nvidia-smi-query")
        if run is None or run.returncode != 0:
            return []
        out = []
        for line in run.stdout.splitlines():
            cells = [c.strip() for c in line.split(",")]
            if len(cells) < 6 or not cells[0].isdigit():
                continue
            cc = parse_version(cells[4])
            out.append(
                NvGpu(
                    index=int(cells[0]),
                    name=cells[1],
                    driver=cells[2] or None,
                    compute_cap=(cc[0], cc[1]) if cc else None,
                    bus_id=cells[5] or None,
                )
            )
        return out

    @cached_property
    def nvidia_smi_text(self) -> str:
        return clean_output(self.s.tool("nvidia-smi"))

    @cached_property
    def nv_driver(self) -> str | None:
        if self.nv_gpus and self.nv_gpus[0].driver:
            return self.nv_gpus[0].driver
        match = textre.search(r"Driver Version:\s*([\d.]+)", self.nvidia_smi_text)
        return match.group(1) if match else None

    @cached_property
    def nv_cuda(self) -> tuple[int, ...] | None:
        """The newest CUDA the driver supports: nvidia-smi's header "CUDA Version"."""
        match = textre.search(r"CUDA Version:\s*([\d.]+)", self.nvidia_smi_text)
        return parse_version(match.group(1)) if match else None

    def _unset_for(self, tool: str, var: str) -> bool:
        """The tool ran without ``var`` in its environment (snapshots since the field)."""
        run = self.s.tool(tool)
        return run is not None and var in run.unset

    @property
    def rocminfo_overridden(self) -> bool:
        """rocminfo's gfx names are the override's, not the chips' own."""
        return bool(self.s.env.get(OVERRIDE_VAR)) and not self._unset_for("rocminfo", OVERRIDE_VAR)

    @cached_property
    def amd_gpus(self) -> list[Gpu]:
        pci_by_id = {d.device: d for d in self.amd_pci}
        if self.agents:
            gpus = []
            overridden = self.rocminfo_overridden
            for agent in self.agents:
                # rocminfo's gfx is the truth unless an override rewrote it; then the chip's
                # own gfx comes from its ID or name, and is unknown where neither is known.
                real = gfx_from_identity(agent.chip_id, agent.marketing) if overridden else None
                pci = pci_by_id.get(agent.chip_id or "")
                gpus.append(
                    Gpu(
                        vendor="amd",
                        name=agent.marketing or agent.gfx,
                        arch=real or agent.gfx,
                        address=pci.address if pci else None,
                        driver=pci.driver if pci else None,
                        uuid=agent.uuid,
                        arch_known=real is not None or not overridden,
                    )
                )
            return gpus
        from_pci = [
            Gpu(
                vendor="amd",
                name=d.name or f"AMD GPU 1002:{d.device}",
                arch=gfx_from_identity(d.device, d.name),
                address=d.address,
                driver=d.driver,
            )
            for d in self.amd_pci
        ]
        if from_pci:
            return from_pci
        if self.torch_build == "rocm" and self.s.smoke is not None:
            return [
                Gpu(vendor="amd", name=d.name, arch=base_gfx(d.arch))
                for d in self.s.smoke.devices
                if base_gfx(d.arch)
            ]
        return []

    @cached_property
    def nvidia_gpus(self) -> list[Gpu]:
        if self.nv_gpus:
            return [
                Gpu(
                    vendor="nvidia",
                    name=g.name,
                    arch=f"sm_{g.compute_cap[0]}{g.compute_cap[1]}" if g.compute_cap else None,
                    address=g.bus_id,
                )
                for g in self.nv_gpus
            ]
        from_pci = [
            Gpu(
                vendor="nvidia",
                name=d.name or f"NVIDIA GPU 10de:{d.device}",
                arch=None,
                address=d.address,
                driver=d.driver,
            )
            for d in self.nvidia_pci
        ]
        if from_pci:
            return from_pci
        if self.torch_build == "cuda" and self.s.smoke is not None:
            return [
                Gpu(vendor="nvidia", name=d.name, arch=d.arch)
                for d in self.s.smoke.devices
                if (d.arch or "").startswith("sm_")
            ]
        return []

    @property
    def has_amd(self) -> bool:
        return bool(self.amd_gpus)

    @property
    def has_nvidia(self) -> bool:
        return bool(self.nvidia_gpus)

    @property
    def gpus(self) -> list[Gpu]:
        return self.amd_gpus + self.nvidia_gpus

    @property
    def discrete_amd(self) -> list[Gpu]:
        return [g for g in self.amd_gpus if not g.integrated]

    @property
    def compute_amd(self) -> list[Gpu]:
        """AMD GPUs a ROCm user means: discrete ones and ROCm-supported APUs (not a laptop's
        or desktop's iGPU)."""
        return [g for g in self.amd_gpus if g.rocm_compute]

    def pci_integrated(self, dev: PciDevice) -> bool:
        gfx = gfx_from_identity(dev.device, dev.name)
        return is_apu(gfx) if gfx else apu_name(dev.name)

    def pci_rocm_compute(self, dev: PciDevice) -> bool:
        gfx = gfx_from_identity(dev.device, dev.name)
        return not self.pci_integrated(dev) or gfx in ROCM_APUS

    @property
    def amd_total(self) -> int:
        """AMD GPUs the runtime numbers, unfiltered by ROCR_VISIBLE_DEVICES: 0 if unknown.

        rocminfo honours the filter; doctor runs it without (``ToolRun.unset``), but an
        older snapshot's rocminfo may list only the selected GPUs, so the amdgpu-bound PCI
        functions count too.
        """
        bound = sum(d.driver == "amdgpu" for d in self.amd_pci)
        if self._unset_for("rocminfo", "ROCR_VISIBLE_DEVICES"):
            return len(self.agents) or bound
        return max(len(self.agents), bound)

    @property
    def nvidia_total(self) -> int:
        """NVIDIA GPUs from nvidia-smi (which ignores CUDA_VISIBLE_DEVICES) or the PCI bus,
        never from the smoke test, which sees only the visible ones: 0 if unknown."""
        bound = sum(d.driver == "nvidia" for d in self.nvidia_pci)
        return max(len(self.nv_gpus), bound)

    @property
    def rocm_in_use(self) -> bool:
        """ROCm is what this machine runs: /dev/kfd, rocminfo agents, or a ROCm torch."""
        return self.node("/dev/kfd") is not None or bool(self.agents) or self.torch_build == "rocm"

    @property
    def amd_render_nodes(self) -> list[DeviceNode]:
        """/dev/dri/renderD* of AMD GPUs, where ROCm is in use (they matter to nobody else).

        A node's vendor comes from sysfs; where no node has one (older snapshots), the nodes
        count only on a machine whose GPUs are all AMD.
        """
        if not self.has_amd or not self.rocm_in_use:
            return []
        nodes = self.render_nodes
        if any(n.vendor for n in nodes):
            return [n for n in nodes if n.vendor == "1002"]
        others = [d for d in self.s.pci if d.vendor != "1002"]
        return [] if others or self.s.system.wsl else nodes

    @property
    def nvidia_smi_ok(self) -> bool:
        return any(
            run is not None and run.returncode == 0
            for run in (self.s.tool("nvidia-smi"), self.s.tool("nvidia-smi-query"))
        )

    @property
    def smoke_saw_gpu(self) -> bool:
        smoke = self.s.smoke
        return smoke is not None and (bool(smoke.devices) or bool(smoke.device_count))

    # ------------------------------------------------------------------ driver and nodes
    def loaded(self, module: str) -> bool:
        return module in self.s.modules.loaded

    def node(self, path: str) -> DeviceNode | None:
        return next((n for n in self.s.nodes if n.path == path), None)

    @property
    def render_nodes(self) -> list[DeviceNode]:
        return [n for n in self.s.nodes if n.path.startswith("/dev/dri/renderD")]

    @property
    def nvidia_nodes(self) -> list[DeviceNode]:
        return [n for n in self.s.nodes if textre.fullmatch(r"/dev/nvidia(\d+|ctl)", n.path)]

    @cached_property
    def amd_driver_version(self) -> str | None:
        if self.s.modules.amdgpu_version:
            return self.s.modules.amdgpu_version
        amd_smi = clean_output(self.s.tool("amd-smi"))
        match = textre.search(r"amdgpu version:\s*([\w.\-]+)", amd_smi, re.IGNORECASE)
        if match and match.group(1).upper() != "N/A":
            return match.group(1)
        match = textre.search(
            r"Driver version:\s*([\w.\-]+)", clean_output(self.s.tool("rocm-smi"))
        )
        return match.group(1) if match else None

    @cached_property
    def rocm_user_versions(self) -> dict[str, str]:
        """ROCm user space as each source reports it: the install, amd-smi, the torch wheel."""
        out: dict[str, str] = {}
        if self.s.installs.rocm_version:
            out[self.s.installs.rocm_path or "/opt/rocm"] = self.s.installs.rocm_version
        match = textre.search(r"ROCm version:\s*([\d.]+)", clean_output(self.s.tool("amd-smi")))
        if match:
            out["amd-smi"] = match.group(1)
        if self.torch_build == "rocm" and self.torch_hip:
            out["torch wheel"] = self.torch_hip
        return out

    @cached_property
    def toolkits(self) -> list[str]:
        """The compilers and toolkits installed here, with their versions, as the report
        states them: ``HIP 5.2.21153 (hipconfig)``, ``CUDA 13.0 (nvcc, V13.0.88)``; the
        install folders' versions when no tool answered."""
        out: list[str] = []
        hip = clean_output(self.s.tool("hipconfig")).strip()
        match = textre.match(r"(\d+\.\d+(?:\.\d+)?)", hip)
        if match:
            out.append(f"HIP {match.group(1)} (hipconfig)")
        elif self.s.installs.rocm_version:
            out.append(f"ROCm {self.s.installs.rocm_version} ({self.s.installs.rocm_path})")
        nvcc = clean_output(self.s.tool("nvcc"))
        match = textre.search(r"release (\d+\.\d+), (V[\d.]+)", nvcc)
        if match:
            out.append(f"CUDA {match.group(1)} (nvcc, {match.group(2)})")
        elif self.s.installs.cuda_version:
            out.append(f"CUDA {self.s.installs.cuda_version} (/usr/local/cuda)")
        return out

    # ------------------------------------------------------------------ python stack
    @property
    def dists(self) -> dict[str, str]:
        return self.s.python.distributions

    @property
    def torch_version(self) -> str | None:
        if self.s.torch is not None and self.s.torch.version:
            return self.s.torch.version
        return self.dists.get("torch")

    @property
    def torch_hip(self) -> str | None:
        return self.s.torch.hip if self.s.torch else None

    @property
    def torch_cuda(self) -> str | None:
        return self.s.torch.cuda if self.s.torch else None

    @cached_property
    def torch_build(self) -> str | None:
        """rocm, cuda or cpu; "unknown" when torch is there but could not say; None: absent."""
        version = self.torch_version
        if version is None:
            return None
        if self.torch_hip:
            return "rocm"
        if self.torch_cuda:
            return "cuda"
        if self.s.torch is not None and self.s.torch.version and not self.s.torch.import_error:
            return "cpu"
        local = version.partition("+")[2].lower()
        if local.startswith("rocm"):
            return "rocm"
        if local.startswith("cu"):
            return "cuda"
        if local == "cpu":
            return "cpu"
        # PyPI's plain "2.x.y" on Linux x86-64 is the CUDA build, which pulls nvidia-* wheels.
        if any(name.startswith("nvidia-") and name != "nvidia-ml-py" for name in self.dists):
            return "cuda"
        return "unknown"

    def torch_label(self) -> str:
        build = {
            "rocm": f"ROCm {self.torch_hip} build" if self.torch_hip else "ROCm build",
            "cuda": f"CUDA {self.torch_cuda} build" if self.torch_cuda else "CUDA build",
            "cpu": "CPU-only build",
            "unknown": "build could not be determined",
        }.get(self.torch_build or "", "")
        return f"PyTorch {self.torch_version}: {build}"

    @cached_property
    def arch_list(self) -> list[str]:
        if self.s.torch is None:
            return []
        return [a.strip().lower() for a in self.s.torch.arch_list if a.strip()]

    @property
    def env(self) -> dict[str, str]:
        return self.s.env

    @property
    def smoke_failed(self) -> bool:
        smoke = self.s.smoke
        if smoke is None:
            return False
        crashed = smoke.returncode not in (0, None)
        return bool(smoke.error) or smoke.ok is False or (crashed and smoke.ok is not True)

    @cached_property
    def smoke_failure(self) -> Failure | None:
        smoke = self.s.smoke
        if smoke is None or not self.smoke_failed:
            return None
        return classify(smoke.text, smoke.returncode) or Failure.OTHER

    @property
    def smoke_no_device(self) -> bool:
        """torch ran but saw no GPU (no error raised): the commonest silent failure."""
        smoke = self.s.smoke
        return smoke is not None and smoke.available is False and not smoke.error
