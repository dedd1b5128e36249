"""Names, patterns and small pure helpers shared by the GP2xx walk.

Kept apart from the walk so that the tables a reviewer may want to extend (which
modules are NVML, which env vars have ROCm twins, what PTX looks like) are in
one short place.
"""

from __future__ import annotations

import ast
import re

from gpuport import textre
from gpuport.knowledge import PackageInfo
from gpuport.scan.rules.python.source import trie_regex

# Literal trigger words, grouped by the rules that need them. A rule can only
# fire on a line holding one of these (or on a line naming something bound on
# such a line). Matching is case-sensitive and substring-based: it is a filter,
# the AST decides.
STATIC_TRIGGERS: tuple[str, ...] = (
    *("nvml", "nvidia", "gpustat", "GPUtil", "nvitop"),  # GP203 NVML/monitors, GP204 nvidia-smi
    *("get_device_capability", "get_device_properties", "get_arch_list"),  # GP205
    "version.cuda",  # GP206
    *('"hip', "'hip", '"HIP', "'HIP", '"rocm', "'rocm", '"ROCm', "'ROCm"),  # GP207
    "float8",  # GP208
    *("reduced_precision_reduction", "bfx9"),  # GP209
    *("torch.uint16", "torch.uint32", "torch.uint64"),  # GP210
    *("cpp_extension", "CUDAExtension"),  # GP211
    "inline_asm_elementwise",  # GP212
    "ExecutionProvider",  # GP213, GP214
    *("CUDAGraph", "cuda.graph", "make_graphed_callables"),  # GP215 (graph capture)
    *("reduce-overhead", "max-autotune"),  # GP215 (torch.compile modes that capture)
    *("cudnn.benchmark", "cudnn as"),  # GP216 (and `import torch.backends.cudnn as cd`)
    "nvtx",  # GP217
    "VISIBLE_DEVICES",  # GP218, GP219
    *("CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_MAX_CONNECTIONS", "TORCH_CUDA_ARCH_LIST"),  # GP220
    "import_module(",  # GP201-GP203, GP217 through importlib
)
STATIC_PATTERN = textre.compile(trie_regex(STATIC_TRIGGERS))


def alias_worthy(dotted: str, local: str) -> bool:
    """Must lines using ``local`` (bound to ``dotted`` by an import) be looked at?

    Yes when the imported name is a trigger API but the local name does not say so
    itself: ``load`` from ``cpp_extension``, ``cd`` for ``torch.backends.cudnn``.
    """
    if STATIC_PATTERN.search(local):
        return False
    return STATIC_PATTERN.search(dotted) is not None or dotted.endswith(".cudnn")


NVML_MODULES = frozenset({"pynvml", "py3nvml", "nvidia_smi", "gpustat", "GPUtil", "nvitop"})
NVTX_MODULES = frozenset({"nvtx"})
# GP202 leaves these out: every file of a torch project imports torch, and the
# framework's own install route is reported once, by the dependency rules.
INSTALL_ONLY_CATEGORIES = frozenset({"framework", "compiler"})
OCP_FP8 = frozenset({"float8_e4m3fn", "float8_e5m2"})
FNUZ_FP8 = frozenset({"float8_e4m3fnuz", "float8_e5m2fnuz"})
FP8 = OCP_FP8 | FNUZ_FP8
UNSIGNED = frozenset({"uint16", "uint32", "uint64"})
GRAPH_REFS = frozenset(
    {
        "torch.cuda.CUDAGraph",
        "torch.cuda.graph",
        "torch.cuda.graphs.CUDAGraph",
        "torch.cuda.graphs.graph",
        "torch.cuda.make_graphed_callables",
    }
)
GRAPH_COMPILE_MODES = frozenset({"reduce-overhead", "max-autotune"})
REDUCED_PRECISION = frozenset(
    {"allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"}
)
CUDA_ENV = {
    "CUDA_LAUNCH_BLOCKING": "AMD_SERIALIZE_KERNEL=3 (or HIP_LAUNCH_BLOCKING=1)",
    "CUDA_DEVICE_MAX_CONNECTIONS": "GPU_MAX_HW_QUEUES",
    "TORCH_CUDA_ARCH_LIST": "PYTORCH_ROCM_ARCH",
}
ENV_KEYS = frozenset(
    {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", *CUDA_ENV}
)
DEVICE_FUNCS = frozenset(
    {"torch.device", "torch.autocast", "torch.amp.autocast", "torch.amp.GradScaler"}
)
DEVICE_METHODS = frozenset({"to", "autocast"})
DEVICE_KEYWORDS = frozenset({"device", "device_type", "map_location"})
SKIP_FUNCS = frozenset({"skipIf", "skipUnless", "skipif"})
PRESENCE_PARTS = frozenset({"gpu", "gpus", "available", "accelerator", "accel"})
EXTENSION_FUNCS = frozenset(
    {
        "torch.utils.cpp_extension.load",
        "torch.utils.cpp_extension.load_inline",
        "torch.utils.cpp_extension.CUDAExtension",
    }
)

BAD_DEVICE = textre.compile(r"(?i)(?:hip|rocm)(?::\d+)?")
NVIDIA_SMI_CMD = textre.compile(
    r"\s*(?:\S*/)?nvidia-smi(?:\s+(?:-|\||topo\b|nvlink\b|mig\b|dmon\b|pmon\b|clocks\b).*)?\s*",
    re.S,
)
PTX = textre.compile(
    r"[a-z][a-z0-9]*(?:\.[a-z0-9]+)+\s+[%$\[{]|%(?:laneid|tid|ntid|ctaid|smid|warpid|clock)"
    r"|\.reg\s+\."
)
SM_STRING = textre.compile(r"(?:sm|compute)_\d*[a-z]?")
ORT_CUDA = frozenset({"CUDAExecutionProvider", "TensorrtExecutionProvider"})
ORT_ROCM = "ROCMExecutionProvider"


def last_name(node: ast.AST) -> str:
    """``nvmlInit`` for ``pynvml.nvmlInit`` or ``nvmlInit()``; ``""`` if not a name."""
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def str_value(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def call_arg(call: ast.Call, index: int | None, keyword: str) -> ast.expr | None:
    """The argument passed as ``keyword=`` or at position ``index`` (None: keyword only)."""
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if index is not None and len(call.args) > index:
        arg = call.args[index]
        if not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
            return arg
    return None


def is_intlike(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(is_intlike(e) for e in node.elts)
    return False


def fp8_leaf(node: ast.AST) -> str:
    """``float8_e4m3fn`` for ``torch.float8_e4m3fn`` (or a bare imported name), else ``""``."""
    name = last_name(node) if isinstance(node, (ast.Attribute, ast.Name)) else ""
    return name if name in FP8 else ""


def is_boolish(node: ast.AST) -> bool:
    """An expression that yields a truth value (what a "has a GPU" flag is assigned)."""
    if isinstance(node, (ast.Compare, ast.BoolOp)):
        return True
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.Not)
    return isinstance(node, ast.Call) and last_name(node.func) == "bool"


def is_sm_string(node: ast.AST) -> bool:
    value = str_value(node)
    if value is not None:
        return SM_STRING.fullmatch(value) is not None or value.startswith("sm_")
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(is_sm_string(e) for e in node.elts)
    return False


def reported_package(pkg: PackageInfo) -> bool:
    """Does importing this package give GP201 (status "no") or GP202?"""
    if pkg.status == "no":
        return True
    return pkg.status != "works" and pkg.category not in INSTALL_ONLY_CATEGORIES


def falls_back(node: ast.AST) -> bool:
    """Does this code pick the CPU or skip (what a "no GPU" branch does)?"""
    for sub in ast.walk(node):
        text = str_value(sub)
        if text is not None and text.lower().split(":", 1)[0] == "cpu":
            return True
        if isinstance(sub, ast.Call) and last_name(sub.func) in ("skip", "skipTest", "SkipTest"):
            return True
    return False
