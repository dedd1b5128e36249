"""A setup.py's test read with the values of a ROCm build (true, false or unknown).

``if IS_ROCM:``, ``if not SKIP_CUDA_BUILD and not IS_ROCM:``, ``torch.version.hip``,
``BUILD_TARGET == "rocm"``, a return-only helper, a documented target switch
(:mod:`build_settings`): :func:`rocm_value` gives each its value on a ROCm build;
:mod:`build_setup_ast` uses it to follow the branches of the file (never run).
"""

from __future__ import annotations

import ast
import re

from gpuport import textre
from gpuport.scan.project.build_settings import Known, dotted_name, env_name

__all__ = [
    "NONE_KEY",
    "ROCM_NAME",
    "later_rocm_branch",
    "mentions_rocm",
    "plain_dotted",
    "rocm_value",
]

#: A name or dotted name that is true on a ROCm build.
ROCM_NAME = textre.compile(
    r"(?:^|\.)(?!(?:skip|no|disable|without)_)(?:[A-Za-z0-9]+_)*?(?:rocm|hip)(?:_(?:build|extension|"
    r"pytorch|available|enabled|home|path))?$|torch\.version\.hip$",
    re.I,
)
#: A name or dotted name that is false (None, unset) on a ROCm build.
_CUDA_NAME = textre.compile(
    r"(?:^|\.)(?:is_|use_|build_|with_|enable_|for_)?cuda(?:_(?:only|home))?$"
    r"|torch\.version\.cuda$",
    re.I,
)
_ROCM_WORD = textre.compile(r"^(?:rocm|hip|amd|hipcc)$", re.I)
_SWITCH_NAME = textre.compile(
    r"(?:[A-Z0-9]+_)*(?:USE|ENABLE|WITH|BUILD|BACKEND)_(?:ROCM|HIP)(?:_[A-Z0-9]+)*"
)
_OTHER_WORD = textre.compile(r"^(?:cuda|nvcc|nvidia|xpu|mps|cpu|npu|hpu|sycl|cu\d+)$", re.I)


def plain_dotted(node: ast.expr) -> str | None:
    """A name or attribute chain (a call is not one here)."""
    return None if isinstance(node, ast.Call) else dotted_name(node)


#: ``flags[NONE_KEY + name]`` is True when ``name`` is still None on a ROCm build
#: (``cutlass_sources = None``, set to a list only in a CUDA-only branch)
NONE_KEY = "<None>:"


def rocm_value(
    node: ast.expr,
    flags: dict[str, bool | None] | None = None,
    known: Known | None = None,
    depth: int = 0,
) -> bool | None:
    """The truth of a test on a ROCm build: True, False, or None when it does not say.

    ``known`` carries the file's target settings with their documented ROCm values and its
    return-only helpers (:mod:`build_settings`): ``get_target_device() == "cuda"`` is False
    when the docs install with ``X_TARGET_DEVICE=rocm``."""
    flags = flags or {}
    if depth > 12:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        v = rocm_value(node.operand, flags, known, depth + 1)
        return None if v is None else not v
    if isinstance(node, ast.BoolOp):
        values = [rocm_value(v, flags, known, depth + 1) for v in node.values]
        if isinstance(node.op, ast.And):
            if False in values:
                return False
            return True if all(v is True for v in values) else None
        if True in values:
            return True
        return False if all(v is False for v in values) else None
    if isinstance(node, ast.Call):
        name = plain_dotted(node.func) or ""
        if name in ("bool", "str", "len") and node.args:
            return rocm_value(node.args[0], flags, known, depth + 1)
        returned = known.returned(node) if known is not None else None
        if returned is not None and known is not None:
            # each helper's value once per flags: helpers returning `f() and f() and ...` K
            # times over six levels made 1.3 KB of setup.py take K^6 steps (sixth review)
            key = (id(returned), tuple(sorted(flags.items())))
            if key not in known.values:
                known.values[key] = rocm_value(returned, flags, known, depth + 1)
            got = known.values[key]
            if got is not None:
                return got
        last = name.rsplit(".", 1)[-1]
        if ROCM_NAME.search(last) or last in ("is_rocm_pytorch", "is_hip"):
            return True
        if known is not None and _reads_cuda_switch(node, known):
            return False
        return _toolkit_env(node)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        documented = _documented(left, op, right, known)
        if documented is not None:
            return documented
        if (
            isinstance(op, ast.In | ast.NotIn)
            and isinstance(left, ast.Constant)
            and isinstance(left.value, str)
            and (plain_dotted(right) or "").endswith("environ")
            and (home := _TOOLKIT_HOME.get(left.value)) is not None
        ):
            return home if isinstance(op, ast.In) else not home  # "CUDA_HOME" in os.environ
        if isinstance(right, ast.Constant) and right.value is None:
            if isinstance(left, ast.Name) and flags.get(NONE_KEY + left.id):
                return isinstance(op, ast.Is | ast.Eq)  # still None on ROCm
            v = rocm_value(left, flags, known, depth + 1)
            if v is None:
                return None
            return v if isinstance(op, ast.IsNot | ast.NotEq) else not v
        for a, b in ((left, right), (right, left)):
            if isinstance(b, ast.Constant) and isinstance(b.value, str):
                word = b.value.strip()
                if _ROCM_WORD.match(word):
                    v = True
                elif _OTHER_WORD.match(word) and _platformish(a, known):
                    v = False
                else:
                    continue
                if isinstance(op, ast.Eq):
                    return v
                if isinstance(op, ast.NotEq):
                    return not v if v else None
        return None
    dotted = plain_dotted(node)
    if dotted is None:
        return None
    if dotted in flags:
        return flags[dotted]
    if known is not None and known.cuda_switches and env_name(node) in known.cuda_switches:
        return False  # envs.X_USE_CUDA beside X_USE_ROCM
    if ROCM_NAME.search(dotted):
        return True
    if _CUDA_NAME.search(dotted):
        return False
    return None


#: The toolkit folders' environment variables: a ROCm machine sets ROCm's (or none), never
#: CUDA's, so ``"CUDA_HOME" in os.environ`` is false there (issue 24, seventeenth sample:
#: fairseq builds its CUDA CppExtensions only then and falls back without them).
_TOOLKIT_HOME = {
    "CUDA_HOME": False, "CUDA_PATH": False, "CUDA_ROOT": False, "CUDA_TOOLKIT_ROOT_DIR": False,
    "ROCM_HOME": True, "ROCM_PATH": True, "HIP_PATH": True,
}  # fmt: skip


def _toolkit_env(call: ast.Call) -> bool | None:
    """``os.getenv("CUDA_HOME")`` / ``os.environ.get("CUDA_HOME")`` with no default: its truth
    on a ROCm machine (:data:`_TOOLKIT_HOME`); a default (``"/usr/local/cuda"``) says nothing."""
    var = env_name(call)
    if var is None or len(call.args) > 1 or call.keywords:
        return None
    return _TOOLKIT_HOME.get(var)


_TRUTHY = frozenset({True, "1", "ON", "on", "On", "TRUE", "true", "True", "yes", "YES", "y"})


def _reads_cuda_switch(call: ast.Call, known: Known) -> bool:
    """``os.getenv("X_USE_CUDA")``, ``env_bool("X_USE_CUDA", False)``: a read of a CUDA
    switch the file names beside its ROCm twin, with no default that turns it on (the ROCm
    route sets the twin, not this)."""
    if not known.cuda_switches:
        return False
    var = env_name(call)
    args = list(call.args)
    if var is None and args and isinstance(args[0], ast.Constant):
        var = args[0].value if isinstance(args[0].value, str) else None
    if var not in known.cuda_switches:
        return False
    defaults = args[1:2] + [k.value for k in call.keywords if k.arg == "default"]
    return not any(isinstance(d, ast.Constant) and d.value in _TRUTHY for d in defaults)


_PLATFORM_WORDS = ("target", "backend", "platform", "device", "gpu", "vendor")


def _platformish(node: ast.expr, known: Known | None = None) -> bool:
    """A setting that names the platform (by convention a ROCm build does not set it to
    "cuda"): a name, an environment variable, or a helper that returns one."""
    name = (plain_dotted(node) or env_name(node) or "").lower()
    if not name and known is not None:
        name = (known.setting_of(node) or "").lower()
        if not name and isinstance(node, ast.Call):
            name = (plain_dotted(node.func) or "").lower()
    return any(w in name for w in _PLATFORM_WORDS)


def _documented(left: ast.expr, op: ast.cmpop, right: ast.expr, known: Known | None) -> bool | None:
    """A comparison of a setting whose ROCm value the project documents, with a string or a
    tuple of strings: evaluated exactly (``TARGET == "cuda"`` is False when the docs say
    ``X_TARGET_DEVICE=rocm``)."""
    if known is None or not known.settings:
        return None
    for a, b in ((left, right), (right, left)):
        value = known.string_value(a)
        if value is None:
            continue
        if isinstance(b, ast.Constant) and isinstance(b.value, str):
            same = value == b.value.strip().lower()
            if isinstance(op, ast.Eq | ast.Is):
                return same
            if isinstance(op, ast.NotEq | ast.IsNot):
                return not same
        if isinstance(b, ast.Tuple | ast.List | ast.Set) and a is left:
            words = [
                e.value.lower()
                for e in b.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            if len(words) == len(b.elts):
                if isinstance(op, ast.In):
                    return value in words
                if isinstance(op, ast.NotIn):
                    return value not in words
    return None


def mentions_rocm(node: ast.expr) -> bool:
    for sub in ast.walk(node):
        name = plain_dotted(sub) if isinstance(sub, ast.Name | ast.Attribute) else None
        if name and ROCM_NAME.search(name):
            return True
        if (
            isinstance(sub, ast.Constant)
            and isinstance(sub.value, str)
            and (
                _ROCM_WORD.match(sub.value.strip())
                # an environment switch of the ROCm build: env_bool("X_USE_ROCM")
                or (len(sub.value) < 64 and _SWITCH_NAME.fullmatch(sub.value) is not None)
            )
        ):
            return True
    return False


def later_rocm_branch(
    orelse: list[ast.stmt], flags: dict[str, bool | None], known: Known | None = None
) -> bool:
    """Whether an ``elif`` later in this chain tests for a ROCm build (true or unknown, but
    naming ROCm/HIP): the branches before it are the CUDA side."""
    while len(orelse) == 1 and isinstance(orelse[0], ast.If):
        test = orelse[0].test
        if mentions_rocm(test) and rocm_value(test, flags, known) is not False:
            return True
        orelse = orelse[0].orelse
    return False
