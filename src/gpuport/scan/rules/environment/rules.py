"""The GP6xx rule table: what each ``gpuport doctor`` diagnosis means, why, and the fix.

Detection lives in :mod:`gpuport.doctor` (checks are pure functions of a machine
snapshot); this module is only the registry metadata, so ``gpuport rules``, ``gpuport
explain GP612`` and docs/rules.md cover the doctor's diagnoses like the scanner's rules.
The evidence links are the issue threads where each failure was reported and fixed
(research notes, scanning.md section 4).
"""

from __future__ import annotations

from functools import partial

from gpuport.models import Severity
from gpuport.scan.rules.base import Family, Rule, register, table_rule

_ROCM = "https://github.com/ROCm/ROCm/issues/"
_TORCH = "https://github.com/pytorch/pytorch/issues/"
_TORCH_PR = "https://github.com/pytorch/pytorch/pull/"
_MATRIX = "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html"
_KERNEL_MATRIX = (
    "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.3.0/reference/"
    "user-kernel-space-compat-matrix.html"
)
_HIP_NOTES = "https://github.com/pytorch/pytorch/blob/main/docs/source/notes/hip.rst"
_ROCMINFO_34 = "https://github.com/ROCm/rocminfo/issues/34"
_DOCKER_116 = "https://github.com/ROCm/ROCm-docker/issues/116"
_DOCKER_93 = "https://github.com/ROCm/ROCm-docker/pull/93"
_AMD = "AMD (ROCm)"
_NV = "NVIDIA (CUDA)"
_BOTH = "AMD and NVIDIA"

_rule = partial(table_rule, Family.ENVIRONMENT)


ENVIRONMENT_RULES: tuple[Rule, ...] = (
    _rule(
        "GP601",
        "no-gpu",
        "No GPU found on this machine",
        Severity.INFO,
        0.0,
        f"{_BOTH}; doctor",
        "Neither the PCI bus nor the vendors' tools show an AMD or NVIDIA GPU, so every GPU "
        "layer is skipped. This is a statement, not a fault: scans, translation and CPU "
        "benchmarks still work; GPU benchmarks and validation need a GPU machine.",
        "Nothing to fix on a CPU-only machine. On a GPU machine that shows this, check that "
        "the card is seated and visible to the OS (`lspci -nn | grep -Ei 'vga|3d|display'`) "
        "and, in a VM or container, that the GPU is passed through.",
        _MATRIX,
        _ROCM + "1850",
    ),
    _rule(
        "GP602",
        "pcie-atomics-rejected",
        "Kernel driver skipped the GPU: PCIe atomics not supported",
        Severity.BLOCKER,
        4.0,
        f"{_AMD}; doctor (needs a readable kernel log)",
        "ROCm's kernel driver needs PCIe atomic operations between the CPU and the GPU. In a "
        "slot behind a bridge or chipset that does not forward them (old boards, some risers "
        "and laptops) the kernel log says 'kfd: skipped device ..., PCI rejects atomics' and "
        "the GPU never appears to ROCm, while graphics keep working.",
        "Move the card to a CPU-attached x16 slot, or use a platform on AMD's supported list; "
        "newer firmware relaxes this for some RDNA cards.",
        _ROCM + "1214",
        _ROCM + "910",
        _ROCM + "722",
    ),
    _rule(
        "GP603",
        "gpu-without-driver",
        "GPU has no working kernel driver",
        Severity.BLOCKER,
        2.0,
        f"{_BOTH}; doctor",
        "The GPU is on the PCI bus but no compute driver is bound to it: the amdgpu or nvidia "
        "module is not loaded (DKMS failed to build for the running kernel, a too-new kernel, "
        "a blacklist), or another driver holds it (nouveau, radeon, vfio-pci). rocminfo then "
        "says 'ROCk module is NOT loaded' and nvidia-smi cannot reach the driver.",
        "Load or install the driver for the running kernel: AMD `sudo modprobe amdgpu` (or "
        "reinstall amdgpu-dkms for `uname -r`, on a kernel from the compatibility matrix); "
        "NVIDIA: install the NVIDIA driver (its package blacklists nouveau) and reboot. Check "
        "`dkms status` and `dmesg`.",
        _ROCM + "1850",
        _ROCM + "1748",
        _ROCM + "5624",
        "https://github.com/mattshma/bigdata/issues/133",
    ),
    _rule(
        "GP604",
        "secure-boot-blocks-driver",
        "Secure Boot is on and the GPU driver module is not loaded",
        Severity.MAJOR,
        1.0,
        f"{_BOTH}; doctor",
        "With UEFI Secure Boot on, the kernel refuses modules that are not signed by an "
        "enrolled key: out-of-tree builds such as amdgpu-dkms or the NVIDIA driver fail to "
        "load ('Key was rejected by service') until their signing key is enrolled as a MOK.",
        "Enroll the DKMS signing key (`sudo mokutil --import /var/lib/dkms/mok.pub`, then "
        "reboot and confirm in the MOK manager), use the distribution's signed driver, or turn "
        "Secure Boot off in the firmware.",
        _ROCM + "4328",
        "https://github.com/acidanthera/bugtracker/issues/2237",
        "https://github.com/NVIDIA/gpu-driver-container/issues/44",
    ),
    _rule(
        "GP605",
        "nvidia-smi-failed",
        "nvidia-smi cannot talk to the NVIDIA driver",
        Severity.BLOCKER,
        1.0,
        f"{_NV}; doctor",
        "nvidia-smi failing with 'couldn't communicate with the NVIDIA driver' means the kernel "
        "module is not running (kernel updated without rebuilding it, Secure Boot, nouveau); "
        "'Driver/library version mismatch' means the user-space driver was upgraded while the "
        "old kernel module is still loaded. CUDA programs fail the same way.",
        "Mismatch: reboot (or unload and reload the nvidia modules). Not communicating: "
        "rebuild/install the module for the running kernel (`sudo dkms autoinstall`), load it "
        "(`sudo modprobe nvidia`) and read `dmesg | grep -i nvrm`.",
        "https://github.com/junxnone/tio/issues/206",
        "https://github.com/oddmario/NVIDIA-Ubuntu-Driver-Guide/issues/4",
        "https://github.com/illinois-scicomp/machine-shop-maintenance/issues/60",
    ),
    _rule(
        "GP606",
        "rocm-driver-skew",
        "amdgpu driver and ROCm user space are outside their support window",
        Severity.MAJOR,
        2.0,
        f"{_AMD}; doctor",
        "The kernel driver (amdgpu/KFD) and the ROCm user space (the /opt/rocm install, a "
        "container image, or the libraries inside a torch wheel) are released together and "
        "supported only within a window: up to a year apart since ROCm 6.4, +/-2 releases "
        "before. Outside it, initialisation fails or features misbehave.",
        "Bring them together: update the amdgpu driver (amdgpu-install) to one that supports "
        "the ROCm you use, or use a ROCm user space (container tag, torch wheel) the driver "
        "supports; see the user/kernel-space compatibility matrix.",
        _MATRIX,
        _KERNEL_MATRIX,
        "https://github.com/ROCm/amdgpu-docs/pull/97",
    ),
    _rule(
        "GP607",
        "device-nodes-missing",
        "GPU device nodes are missing although the driver is loaded",
        Severity.BLOCKER,
        1.0,
        f"{_BOTH}; doctor",
        "Programs reach the GPU through device files: /dev/kfd and /dev/dri/renderD* for ROCm, "
        "/dev/nvidiactl and /dev/nvidia<N> for CUDA. With the module loaded but the files "
        "absent, the kernel driver did not initialise the GPU for compute (for example 'not "
        "supported in kfd') or udev did not create the nodes.",
        "Read the kernel log (`sudo dmesg | grep -Ei 'kfd|amdgpu|nvrm'`) for why the device was "
        "skipped; make sure the GPU is on the supported list; on NVIDIA run `sudo "
        "nvidia-modprobe -u -c=0` or reinstall the driver so its udev rules create the nodes.",
        _ROCM + "2232",
        _ROCM + "1088",
        _ROCMINFO_34,
    ),
    _rule(
        "GP608",
        "device-node-permission",
        "GPU device nodes not accessible: user not in the render/video groups",
        Severity.BLOCKER,
        0.1,
        f"{_BOTH}; doctor",
        "The GPU device files belong to the render (and video) group. A user outside it gets "
        "'Unable to open /dev/kfd read-write: Permission denied' from rocminfo, "
        "hipErrorNoDevice or HSA_STATUS_ERROR_OUT_OF_RESOURCES from torch, and everything "
        "works with sudo. A new group membership only counts after logging in again.",
        "Add the user to the groups and log in again: `sudo usermod -aG render,video $USER`. "
        "In a container: `--group-add video --group-add render`. Never add a user to root: "
        "device files that only root's group may open are given to render by AMD's udev rule "
        "(/etc/udev/rules.d/70-amdgpu.rules), or to video by the nvidia module's "
        "NVreg_DeviceFileGID option.",
        _ROCMINFO_34,
        _ROCM + "1211",
        _ROCM + "2232",
        _ROCM + "3072",
        _DOCKER_116,
    ),
    _rule(
        "GP609",
        "container-without-gpu-devices",
        "Container started without the GPU devices",
        Severity.BLOCKER,
        0.25,
        f"{_BOTH}; doctor",
        "The host's driver is loaded (its modules are visible from inside) but the container "
        "has no /dev/kfd or /dev/nvidia* devices: it was started without passing them in. "
        "rocminfo says 'Unable to open /dev/kfd read-write: No such file or directory'.",
        "AMD: `docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add "
        "render --security-opt seccomp=unconfined ...` (Apptainer: `--rocm`). NVIDIA: install "
        "the NVIDIA container toolkit and run with `--gpus all`.",
        _ROCM + "1798",
        _DOCKER_116,
        _DOCKER_93,
        _ROCM + "4208",
    ),
    _rule(
        "GP610",
        "wsl-rocm-no-device",
        "WSL: ROCm sees no GPU through /dev/dxg",
        Severity.MAJOR,
        1.0,
        f"{_AMD}; doctor (WSL2)",
        "Under WSL2 the GPU is reached through /dev/dxg and AMD's WSL runtime, not /dev/kfd. "
        "The Linux torch wheels from download.pytorch.org do not use it: rocminfo can work "
        "while torch reports no device (hipErrorNoDevice). ROCm releases before 7.13 with "
        "librocdxg also need HSA_ENABLE_DXG_DETECTION=1.",
        "Follow AMD's Radeon-on-WSL guide (its torch wheels, matching Adrenalin driver); set "
        "`export HSA_ENABLE_DXG_DETECTION=1` where that guide says so; pass `--device "
        "/dev/dxg` to containers.",
        _ROCM + "3470",
        _ROCM + "5461",
        "https://github.com/ROCm/hip/issues/3710",
        "https://github.com/ROCm/librocdxg/issues/34",
    ),
    _rule(
        "GP611",
        "hsa-init-failed",
        "ROCm runtime could not initialise the GPU (HSA_STATUS_ERROR_OUT_OF_RESOURCES)",
        Severity.BLOCKER,
        2.0,
        f"{_AMD}; doctor",
        "rocminfo or torch stopped at hsa_init with HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008). "
        "Despite the name this is rarely memory: the device files could not be opened, or the "
        "kernel driver did not set the GPU up for compute (unsupported chip, skipped device).",
        "Check access to /dev/kfd (groups), then the kernel log (`sudo dmesg | grep -i kfd`) "
        "for a skipped or unsupported device, and the GPU against the supported list.",
        _ROCM + "1088",
        _ROCM + "1064",
        _ROCM + "1070",
        _ROCMINFO_34,
    ),
    _rule(
        "GP612",
        "rocm-arch-not-in-build",
        "PyTorch (or a ROCm library) has no code for this GPU's architecture",
        Severity.BLOCKER,
        2.0,
        f"{_AMD}; doctor",
        "ROCm binaries carry code objects per gfx target. When the GPU's gfx is not among "
        "those torch (or rocBLAS/hipBLASLt) was built for, the first kernel fails with "
        "hipErrorNoBinaryForGpu, 'invalid device function' or a missing TensileLibrary file: "
        "common for consumer and brand-new chips on older wheels.",
        "Install a build that includes the gfx (a newer ROCm wheel, or a per-architecture "
        "TheRock wheel); build extensions with PYTORCH_ROCM_ARCH=<gfx>. As an unsupported "
        "stop-gap, HSA_OVERRIDE_GFX_VERSION may map a chip to a binary-compatible target of "
        "its own family.",
        _TORCH + "73534",
        _TORCH + "132570",
        _TORCH + "164346",
        "https://github.com/ROCm/TheRock/issues/5543",
        _ROCM + "2719",
        _TORCH_PR + "80498",
    ),
    _rule(
        "GP613",
        "cuda-arch-not-in-build",
        "PyTorch has no kernels for this NVIDIA GPU's compute capability",
        Severity.BLOCKER,
        0.5,
        f"{_NV}; doctor",
        "A CUDA build of torch ships kernels for a list of compute capabilities (sm_XY) and "
        "PTX for JIT. A GPU newer or older than that list (an RTX 50-series sm_120 on a cu124 "
        "wheel, a Pascal card on cu130) fails with 'no kernel image is available for execution "
        "on the device'.",
        "Install the wheel for a CUDA version that covers the GPU (e.g. cu128 or later for "
        "sm_120; an older cuXY index for pre-Turing cards), from download.pytorch.org.",
        _TORCH + "167244",
        _TORCH + "31285",
        "https://github.com/Comfy-Org/ComfyUI/pull/16438",
    ),
    _rule(
        "GP614",
        "cuda-driver-too-old",
        "NVIDIA driver is older than the CUDA runtime PyTorch was built with",
        Severity.BLOCKER,
        0.5,
        f"{_NV}; doctor",
        "Each driver supports CUDA up to a version (nvidia-smi's 'CUDA Version'). A torch "
        "built for a newer CUDA major version fails with 'The NVIDIA driver on your system is "
        "too old'; within one major version minor-version compatibility lets most work run, "
        "but PTX JIT and newer features need the newer driver.",
        "Update the NVIDIA driver, or install the torch wheel for a CUDA version the driver "
        "supports (a cuXY index not newer than nvidia-smi's CUDA Version).",
        "https://github.com/zai-org/ChatGLM3/issues/100",
        _TORCH + "31285",
    ),
    _rule(
        "GP615",
        "integrated-gpu-visible",
        "Integrated GPU visible to ROCm next to a discrete GPU",
        Severity.MAJOR,
        0.25,
        f"{_AMD}; doctor",
        "On a Ryzen desktop or laptop with an AMD dGPU, the processor's integrated GPU "
        "(gfx1036, gfx1103, gfx1150...) is enumerated too, often as device 0. torch then "
        "counts one GPU more, puts work on the iGPU, and crashes with hipErrorInvalidImage or "
        "a segfault because the wheel has no code for it.",
        "Hide the iGPU before the program starts: `export ROCR_VISIBLE_DEVICES=<dGPU UUIDs or "
        "indices>` (indices where rocminfo shows only the placeholder UUID GPU-XX), or "
        "disable the iGPU in the firmware.",
        "https://github.com/ROCm/TheRock/issues/3392",
        "https://github.com/ROCm/TheRock/issues/5543",
        "https://github.com/unslothai/unsloth/issues/7307",
        _ROCM + "5871",
    ),
    _rule(
        "GP616",
        "gpu-smoke-test-failed",
        "A tiny GPU job (allocate, matmul, synchronize) failed",
        Severity.BLOCKER,
        1.0,
        f"{_BOTH}; doctor",
        "doctor runs a 256x256 matmul on the GPU in a separate process and compares it with "
        "the CPU. When that fails for a reason no more specific diagnosis explains (out of "
        "memory, a memory access fault, a wrong result, torch seeing no GPU), real work fails "
        "the same way.",
        "Read the error shown as evidence: free GPU memory held by other processes, unset "
        "overrides and visibility variables, then rerun with AMD_LOG_LEVEL=3 (ROCm) or "
        "CUDA_LAUNCH_BLOCKING=1 (CUDA) for details.",
        _ROCM + "5238",
        _TORCH + "131901",
        _TORCH_PR + "80498",
    ),
    _rule(
        "GP617",
        "numa-balancing-on",
        "NUMA auto-balancing is on (MI300-class performance)",
        Severity.MINOR,
        0.1,
        f"{_AMD}; doctor (MI300X/MI325X/MI350 hosts)",
        "Automatic NUMA balancing periodically unmaps pages to migrate them between nodes. On "
        "MI300-class hosts, benchmark guides turn it off before measuring, because the page "
        "faults it causes slow GPU work that touches host memory and add noise.",
        "`sudo sysctl kernel.numa_balancing=0` (persist it in /etc/sysctl.d/).",
        "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/benchmarks/"
        "README.md",
    ),
    _rule(
        "GP618",
        "torch-not-importable",
        "PyTorch is installed but cannot be imported",
        Severity.BLOCKER,
        1.0,
        f"{_BOTH}; doctor",
        "Importing torch failed in a fresh interpreter, usually a missing or mismatched shared "
        "library: a ROCm wheel looking for libamdhip64.so of another ROCm version, a CUDA wheel "
        "without its nvidia-* library wheels, or LD_LIBRARY_PATH pointing at other versions.",
        "Reinstall torch (and torchvision/torchaudio) together from one index; remove "
        "LD_LIBRARY_PATH entries that point at another ROCm/CUDA; read the import error shown.",
        "https://github.com/ROCm/pytorch/issues/1340",
        _TORCH + "118457",
    ),
    _rule(
        "GP619",
        "cuda-torch-on-amd",
        "CUDA build of PyTorch on an AMD GPU machine",
        Severity.BLOCKER,
        0.5,
        f"{_AMD}; doctor",
        "torch.version.cuda is set and torch.version.hip is not: the CUDA wheel (PyPI's "
        "default, often pulled in by another package's torch requirement or an image rebuild) "
        "cannot drive an AMD GPU. It fails with 'Found no NVIDIA driver on your system'.",
        "Reinstall torch, torchvision and torchaudio from the ROCm index "
        "(download.pytorch.org/whl/rocmX.Y for your ROCm), pin that index, and uninstall the "
        "nvidia-* wheels it brought.",
        "https://github.com/YanWenKun/ComfyUI-Docker/issues/187",
        "https://github.com/Comfy-Org/ComfyUI/issues/653",
        "https://github.com/Comfy-Org/ComfyUI/issues/5122",
        "https://github.com/Comfy-Org/comfy-cli/issues/289",
    ),
    _rule(
        "GP620",
        "rocm-torch-on-nvidia",
        "ROCm build of PyTorch on an NVIDIA GPU machine",
        Severity.BLOCKER,
        0.5,
        f"{_NV}; doctor",
        "torch.version.hip is set: this wheel talks to AMD's HIP runtime and cannot use an "
        "NVIDIA GPU, so torch.cuda.is_available() is False (ROCm builds reuse the torch.cuda "
        "API, which makes the mix-up easy to miss).",
        "Reinstall torch, torchvision and torchaudio from the CUDA index "
        "(download.pytorch.org/whl/cuXY, not newer than the driver's CUDA Version).",
        _HIP_NOTES,
        _TORCH + "99983",
    ),
    _rule(
        "GP621",
        "cpu-torch-with-gpu",
        "CPU-only PyTorch build although a GPU is present",
        Severity.MAJOR,
        0.5,
        f"{_BOTH}; doctor",
        "The installed torch was built without GPU support (+cpu, or a wheel resolved from "
        "the wrong index for this Python), so torch.cuda.is_available() is False and "
        "'Torch not compiled with CUDA enabled' is raised, while the GPU sits idle.",
        "Reinstall torch from the index for the GPU: download.pytorch.org/whl/rocmX.Y (AMD) or "
        "download.pytorch.org/whl/cuXY (NVIDIA).",
        _ROCM + "2354",
        "https://github.com/XPixelGroup/HAT/issues/85",
        "https://github.com/X-PLUG/MobileAgent/issues/60",
    ),
    _rule(
        "GP622",
        "nvidia-wheels-beside-rocm-torch",
        "NVIDIA CUDA library wheels installed next to a ROCm PyTorch",
        Severity.MINOR,
        0.25,
        f"{_AMD}; doctor",
        "nvidia-cublas-cu12, nvidia-cudnn-cu12 and the like are the CUDA runtime that PyPI's "
        "torch depends on. Next to a ROCm torch they are the leftovers of a CUDA install: dead "
        "weight, and a sign that something re-resolves torch from PyPI.",
        "Uninstall them (`pip uninstall` the nvidia-* names listed) and find the package whose "
        "requirement pulls CUDA torch in; pin torch to the ROCm index.",
        "https://github.com/YanWenKun/ComfyUI-Docker/issues/187",
        "https://github.com/Comfy-Org/comfy-cli/issues/289",
        "https://github.com/Core-Creates/hipbridge",
    ),
    _rule(
        "GP623",
        "extension-backend-mismatch",
        "Compiled GPU extension built for a different backend than PyTorch",
        Severity.MAJOR,
        1.0,
        f"{_BOTH}; doctor",
        "flash-attn, xformers, bitsandbytes and similar wheels contain GPU binaries for one "
        "backend. A CUDA-built one next to a ROCm torch (or the reverse) fails at import "
        "('xFormers can't load C++/CUDA extensions ... built for X+cu121, you have "
        "X+rocm6.0', ImportError flash_attn_2_cuda) or silently falls back.",
        "Reinstall the same version of the extension for the torch backend, with --no-deps so "
        "that torch is left alone: the ROCm index build (xformers), the CK or Triton backend "
        "build of flash-attn, bitsandbytes' ROCm binary.",
        "https://github.com/facebookresearch/xformers/issues/1070",
        "https://github.com/Dao-AILab/flash-attention",
        "https://github.com/ROCm/bitsandbytes/issues/82",
    ),
    _rule(
        "GP624",
        "pynvml-breaks-rocm-torch",
        "pynvml next to ROCm PyTorch 2.4 breaks torch.cuda.device_count()",
        Severity.MAJOR,
        0.25,
        f"{_AMD}; doctor",
        "ROCm torch 2.4 takes its NVML-style device query path when pynvml is importable and "
        "then calls amdsmi, which it did not import: 'NameError: name amdsmi is not defined' "
        "from torch.cuda.device_count(). DeepSpeed and others install pynvml.",
        "Uninstall pynvml/nvidia-ml-py, or install the amdsmi Python package from "
        "/opt/rocm/share/amd_smi, or upgrade torch (fixed in 2.5).",
        _TORCH + "133259",
        _TORCH_PR + "132990",
        "https://github.com/mila-iqia/milabench/issues/256",
    ),
    _rule(
        "GP625",
        "onnxruntime-without-amd-provider",
        "ONNX Runtime build has no AMD GPU execution provider",
        Severity.MINOR,
        0.5,
        f"{_AMD}; doctor",
        "The onnxruntime and onnxruntime-gpu wheels carry the CPU or CUDA execution providers "
        "only, and the ROCm provider was removed in ONNX Runtime 1.23. On an AMD machine "
        "inference silently falls back to the CPU.",
        "Install onnxruntime-migraphx and use MIGraphXExecutionProvider (set "
        "ORT_MIGRAPHX_MODEL_CACHE_PATH to keep compiled models).",
        "https://github.com/microsoft/onnxruntime/pull/25181",
    ),
    _rule(
        "GP626",
        "system-gpu-libs-shadow-wheel",
        "System ROCm/CUDA libraries on LD_LIBRARY_PATH differ from the wheel's own",
        Severity.MAJOR,
        0.5,
        f"{_BOTH}; doctor",
        "GPU wheels bring their own runtime libraries (torch/lib for ROCm, nvidia-* wheels for "
        "CUDA). LD_LIBRARY_PATH entries for /opt/rocm-X or /usr/local/cuda-X of the same "
        "major version but another minor one provide libraries of the same name, are searched "
        "first, and mix two releases: 'Cannot read TensileLibrary', cuDNN or cuBLAS version "
        "errors. Another major version has other library names and does not clash.",
        "Drop just those entries from LD_LIBRARY_PATH for Python work (let the wheel use its "
        "own libraries), or install the wheel built for exactly that system version.",
        "https://github.com/ROCm/pytorch/issues/1340",
        _TORCH + "118457",
        "https://github.com/ROCm/rocBLAS/issues/1386",
    ),
    _rule(
        "GP627",
        "hsa-override-mismatch",
        "HSA_OVERRIDE_GFX_VERSION does not fit this GPU",
        Severity.MAJOR,
        0.1,
        f"{_AMD}; doctor",
        "The override makes ROCm treat the GPU as another ISA. AMD calls it an internal "
        "debugging aid. Left over from another card, or mapping across families (10.3.0 on an "
        "MI210), it runs the wrong code: 'Memory access fault by GPU node-N'; where the GPU "
        "is already supported it only hides the real chip.",
        "Unset it (`unset HSA_OVERRIDE_GFX_VERSION`; remove it from shell rc files and "
        "container env); where a consumer chip truly needs it, use the value of its own family "
        "(gfx1031/1032 -> 10.3.0, gfx1101/1102/1103 -> 11.0.0).",
        _ROCM + "5238",
        "https://github.com/ChharithOeun/torch-amd-setup",
        _TORCH + "164346",
    ),
    _rule(
        "GP628",
        "visible-devices-conflict",
        "GPU visibility variables hide or renumber GPUs",
        Severity.MAJOR,
        0.25,
        f"{_BOTH}; doctor",
        "ROCR_VISIBLE_DEVICES filters first and renumbers; HIP_VISIBLE_DEVICES (and "
        "CUDA_VISIBLE_DEVICES, which ROCm honours too) then index into what is left. Set "
        "together, or to values that do not exist, they silently select the wrong GPU or "
        "none; rocm-smi's numbering differs from torch's.",
        "Set one variable only (ROCR_VISIBLE_DEVICES with UUIDs on AMD, CUDA_VISIBLE_DEVICES "
        "on NVIDIA), to indices or UUIDs that exist; identify GPUs by PCI bus id.",
        _TORCH + "131901",
        _TORCH_PR + "142292",
        "https://github.com/ROCm/ROCR-Runtime/issues/155",
        "https://github.com/ollama/ollama/issues/15752",
    ),
    _rule(
        "GP629",
        "miopen-cache-not-writable",
        "MIOpen cache folders are not writable",
        Severity.MINOR,
        0.1,
        f"{_AMD}; doctor",
        "MIOpen (cuDNN's ROCm counterpart) keeps tuned kernels in ~/.config/miopen and "
        "~/.cache/miopen. If they cannot be written (created by root in a container, a "
        "read-only home) every run searches again: first convolutions take minutes and "
        "look like a hang.",
        "Take back your own folders (`sudo chown -R $USER ~/.config/miopen ~/.cache/miopen`); "
        "a shared folder set through MIOPEN_USER_DB_PATH / MIOPEN_CUSTOM_CACHE_DIR keeps its "
        "owner: point those variables at folders of your own instead. "
        "MIOPEN_FIND_MODE=FAST shortens the search.",
        _TORCH_PR + "179795",
        "https://github.com/ROCm/pytorch/issues/433",
        "https://github.com/remsky/Kokoro-FastAPI/pull/518",
    ),
    _rule(
        "GP630",
        "probe-failed",
        "A diagnostic probe hung or crashed",
        Severity.MINOR,
        0.1,
        f"{_BOTH}; doctor",
        "A tool doctor asks (rocminfo, amd-smi, nvidia-smi...) did not answer within its time "
        "limit or crashed. That is itself a symptom (a wedged driver makes these tools hang), "
        "and the checks that needed its output could not run.",
        "Run the tool by hand to see what it does; a hang in rocminfo or nvidia-smi usually "
        "means the driver is stuck (`dmesg`, then a reboot); rerun doctor with a larger "
        "--timeout if the machine is just slow.",
        _ROCMINFO_34,
        "https://rocm.docs.amd.com/projects/amdsmi/en/latest/how-to/amdsmi-cli-tool.html",
    ),
)

register(*ENVIRONMENT_RULES)
