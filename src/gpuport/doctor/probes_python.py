"""Probes of the Python stack: installed distributions, torch's build, the GPU smoke test.

Distributions are read with importlib.metadata in this process (nothing is imported).
torch itself is only ever imported in a child interpreter: a CUDA wheel with missing
libraries, or a ROCm build that aborts on a wrong ``HSA_OVERRIDE_GFX_VERSION``, takes the
child down, and doctor reports it.
"""

from __future__ import annotations

import json
import platform
from importlib import metadata
from pathlib import Path

from gpuport import textre
from gpuport.doctor.context import ProbeContext, ProbeResult
from gpuport.doctor.elf import needed_libraries
from gpuport.doctor.snapshot import ProbeStatus, PythonStack, SmokeResult, TorchInfo
from gpuport.doctor.tools import run_tool

# Distributions worth recording: GPU frameworks, their runtimes and compiled extensions.
_KEEP = textre.compile(
    r"^(torch|torchvision|torchaudio|triton|pytorch-triton(-rocm)?|triton-rocm|nvidia-.*|"
    r"pynvml|amdsmi|rocm.*|xformers|flash[-_]attn|bitsandbytes|vllm|deepspeed|apex|"
    r"onnxruntime.*|tensorflow.*|jax|jaxlib|jax-.*-plugin|jax-.*-pjrt|cupy.*|auto-gptq|"
    r"causal-conv1d|mamba-ssm|torch-scatter|torch-sparse|torch-cluster|exllamav2|spconv.*|"
    r"sageattention|liger-kernel|transformer-engine.*)$"
)
# Compiled extensions whose binaries are checked for the backend they were built for.
EXTENSIONS = (
    "xformers",
    "flash-attn",
    "flash_attn",
    "bitsandbytes",
    "vllm",
    "apex",
    "causal-conv1d",
    "mamba-ssm",
    "auto-gptq",
    "exllamav2",
    "torch-scatter",
    "torch-sparse",
    "torch-cluster",
    "sageattention",
)
_CUDA_LIBS = ("libcudart", "libc10_cuda", "libtorch_cuda", "libcublas", "libnvrtc", "libcuda.so")
_ROCM_LIBS = ("libamdhip64", "libc10_hip", "libtorch_hip", "librocblas", "libhipblas")
_MAX_SO_PER_DIST = 24
JSON_MARK = "GPUPORT-JSON:"


def _canon(name: str) -> str:
    return textre.sub(r"[-_.]+", "-", name).lower()


def probe_python(ctx: ProbeContext) -> ProbeResult:
    dists: dict[str, str] = {}
    by_name: dict[str, metadata.Distribution] = {}
    for dist in metadata.distributions():
        name = _canon(getattr(dist, "name", None) or "")
        if name and _KEEP.match(name) and name not in dists:
            dists[name] = dist.version
            by_name[name] = dist
    backends: dict[str, list[str]] = {}
    evidence: dict[str, list[str]] = {}
    for name in {_canon(e) for e in EXTENSIONS} & set(by_name):
        found, seen = extension_backends(by_name[name])
        if found:
            backends[name] = sorted(found)
            evidence[name] = seen
    bundles = _torch_bundles(by_name.get("torch"))
    stack = PythonStack(
        executable=ctx.redact(ctx.options.python),
        version=platform.python_version(),
        distributions=dict(sorted(dists.items())),
        extension_backends=dict(sorted(backends.items())),
        extension_evidence=dict(sorted(evidence.items())),
        torch_bundles=bundles,
    )
    return ProbeResult({"python": stack})


def extension_backends(dist: metadata.Distribution) -> tuple[set[str], list[str]]:
    """Backends a compiled extension can run on, from its version tag and its binaries."""
    found: set[str] = set()
    seen: list[str] = []
    local = dist.version.partition("+")[2].lower()
    if local.startswith("cu"):
        found.add("cuda")
        seen.append(f"version {dist.version}")
    elif local.startswith("rocm"):
        found.add("rocm")
        seen.append(f"version {dist.version}")
    sos = [f for f in dist.files or [] if f.name.endswith(".so") or ".so." in f.name]
    for rel in sos[:_MAX_SO_PER_DIST]:
        lower = rel.name.lower()
        # bitsandbytes ships one library per backend: the file names say which exist.
        if "_rocm" in lower or "_hip" in lower:
            found.add("rocm")
            seen.append(rel.name)
            continue
        if textre.search(r"_cuda\d", lower):
            found.add("cuda")
            seen.append(rel.name)
            continue
        libs = needed_libraries(Path(str(dist.locate_file(rel))))
        for lib in libs:
            if lib.startswith(_CUDA_LIBS):
                found.add("cuda")
                seen.append(f"{rel.name} needs {lib}")
                break
            if lib.startswith(_ROCM_LIBS):
                found.add("rocm")
                seen.append(f"{rel.name} needs {lib}")
                break
    return found, seen[:6]


def _torch_bundles(dist: metadata.Distribution | None) -> list[str]:
    """GPU runtimes inside torch/lib (ROCm wheels carry libamdhip64; old CUDA ones cudart)."""
    if dist is None:
        return []
    names = {Path(str(f)).name for f in dist.files or [] if str(f).startswith("torch/lib/")}
    out = []
    if any(n.startswith("libamdhip64") for n in names):
        out.append("rocm")
    if any(n.startswith("libcudart") for n in names):
        out.append("cuda")
    return out


_TORCH_SCRIPT = """
import json, sys
out = {}
try:
    import torch
except BaseException as exc:
    out["import_error"] = f"{type(exc).__name__}: {exc}"
else:
    out["version"] = str(torch.__version__)
    out["cuda"] = getattr(torch.version, "cuda", None)
    out["hip"] = getattr(torch.version, "hip", None)
    flags = ""
    try:
        flags = torch._C._cuda_getArchFlags() or ""
    except Exception:
        pass
    out["arch_list"] = [a for a in flags.replace(";", " ").split() if a]
print("@MARK@" + json.dumps(out), flush=True)
""".replace("@MARK@", JSON_MARK)

_SMOKE_SCRIPT = """
import json, sys
out = {"stage": "import"}
def emit():
    print("@MARK@" + json.dumps(out), flush=True)
try:
    import torch
    out["stage"] = "detect"
    out["available"] = bool(torch.cuda.is_available())
    out["device_count"] = int(torch.cuda.device_count())
    if out["available"]:
        devices = []
        for i in range(out["device_count"]):
            p = torch.cuda.get_device_properties(i)
            arch = getattr(p, "gcnArchName", None) or "sm_%d%d" % (p.major, p.minor)
            devices.append({"index": i, "name": p.name, "arch": arch,
                            "memory_bytes": int(p.total_memory)})
        out["devices"] = devices
        emit()
        out["stage"] = "compute"
        a = torch.randn(256, 256, device="cuda")
        b = a @ a
        torch.cuda.synchronize()
        ref = a.cpu() @ a.cpu()
        err = float((b.cpu() - ref).abs().max())
        out["ok"] = err <= 1e-2 * float(ref.abs().max()) + 1e-3
        if not out["ok"]:
            out["error"] = "matmul on the GPU differs from the CPU by %g" % err
except BaseException as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
    out["ok"] = False
emit()
""".replace("@MARK@", JSON_MARK)


def _last_json(text: str) -> dict[str, object] | None:
    found = None
    for line in text.splitlines():
        if line.startswith(JSON_MARK):
            try:
                value = json.loads(line[len(JSON_MARK) :])
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                found = value
    return found


def _torch_installed() -> str | None:
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def probe_torch(ctx: ProbeContext) -> ProbeResult:
    if _torch_installed() is None:
        return ProbeResult(status=ProbeStatus.SKIPPED, message="torch is not installed")
    argv = [ctx.options.python, "-P", "-c", _TORCH_SCRIPT]
    outcome = run_tool(ctx, argv, ctx.options.torch_timeout_s, extra_env=_PY_ENV, english=False)
    run = outcome.run
    data = _last_json(run.stdout) if run else None
    if data is None:
        tail = ctx.redact(run.stderr[-2000:]) if run else ""
        message = outcome.message or "torch probe printed no result"
        info = TorchInfo(import_error=f"{message}\n{tail}".strip())
        status = outcome.status if outcome.status is not ProbeStatus.OK else ProbeStatus.ERROR
        return ProbeResult({"torch": info}, status, message)
    if isinstance(data.get("import_error"), str):
        data["import_error"] = ctx.redact(str(data["import_error"]))
    return ProbeResult({"torch": TorchInfo.model_validate(data)})


# The child interpreters run with -P (the script's folder is not put on sys.path; user
# site-packages and PYTHONPATH stay, as for the user's own programs) from a neutral folder
# (see tools.run_tool), so a torch.py in the folder doctor was started from is never
# imported. Keep bytecode out of site-packages: doctor promises not to write anything.
_PY_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
# ...and no CUDA JIT cache in ~/.nv for the smoke test.
_SMOKE_ENV = {**_PY_ENV, "CUDA_CACHE_DISABLE": "1"}


def probe_smoke(ctx: ProbeContext) -> ProbeResult:
    version = _torch_installed()
    if not ctx.options.smoke_test:
        return ProbeResult(status=ProbeStatus.SKIPPED, message="--no-smoke-test")
    if version is None:
        return ProbeResult(status=ProbeStatus.SKIPPED, message="torch is not installed")
    if version.partition("+")[2].lower() == "cpu":
        return ProbeResult(status=ProbeStatus.SKIPPED, message=f"torch {version} is a CPU build")
    argv = [ctx.options.python, "-P", "-c", _SMOKE_SCRIPT]
    outcome = run_tool(ctx, argv, ctx.options.smoke_timeout_s, extra_env=_SMOKE_ENV, english=False)
    run = outcome.run
    data = (_last_json(run.stdout) if run else None) or {}
    tail = ctx.redact(run.stderr[-4000:]) if run else ""
    if isinstance(data.get("error"), str):
        data["error"] = ctx.redact(str(data["error"])[:4000])
    smoke = SmokeResult.model_validate(
        {**data, "returncode": run.returncode if run else None, "stderr_tail": tail}
    )
    if outcome.status is ProbeStatus.TIMEOUT:
        return ProbeResult({"smoke": smoke}, ProbeStatus.TIMEOUT, outcome.message)
    # A failing GPU job is a finding about the machine, not a broken probe.
    return ProbeResult({"smoke": smoke})
