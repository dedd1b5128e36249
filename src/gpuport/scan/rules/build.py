"""GP4xx: build files (CMake, Makefiles, setup.py).

CMake and Makefiles are read as text with their comments blanked out (so
columns stay right) and a map of the conditional blocks that branch on
ROCm/HIP, which lowers findings inside them to guarded. ``setup.py`` is read
with :mod:`ast` only, never executed or imported; simple assignments
(``NVCC_FLAGS = [...]``, ``.append``, ``+=``) are followed so that flags kept
in a variable are found where they are written.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from gpuport.models import Severity
from gpuport.scan.rules.base import Family, FileContext, FileKind, Rule, checker, register

_TORCHMCUBES = "https://github.com/tatsy/torchmcubes/issues/31"
_GGUF_PR = "https://github.com/vllm-project/vllm-gguf-plugin/pull/85"
_FUSED_SSIM = "https://github.com/rahul-goel/fused-ssim/pull/29"
_TEXT_KINDS = "CMakeLists.txt/*.cmake, Makefile/*.mk, setup.py"


def _rule(
    rid: str, name: str, title: str, severity: Severity, effort: float, note: str,
    rationale: str, fix: str, *refs: str,
) -> Rule:
    return Rule(
        id=rid, name=name, title=title, severity=severity, family=Family.BUILD,
        rationale=rationale, fix=fix, references=refs, effort_hours=effort, applies_note=note,
    )


register(
    _rule(
        "GP401", "cmake-cuda-only", "CMake enables CUDA without a HIP path",
        Severity.MAJOR, 4.0, "all targets; CMake files",
        "enable_language(CUDA), project(... CUDA), find_package(CUDA/CUDAToolkit) and "
        "check_language(CUDA) look for nvcc and the CUDA toolkit. On a ROCm machine they "
        "fail, or the project quietly configures a CPU-only build (torchmcubes #31: "
        "'NO CUDA INSTALLATION FOUND, TRYING TO INSTALL CPU VERSION ONLY!').",
        "Add a HIP path: enable_language(HIP) and find_package(hip) (plus hipblas etc.) "
        "under if(USE_ROCM), and compile the .cu sources as LANGUAGE HIP.",
        _TORCHMCUBES,
    ),
    _rule(
        "GP402", "nvcc-only-flag", "nvcc-only compiler flag",
        Severity.MAJOR, 0.5, f"all targets; {_TEXT_KINDS}",
        "Flags such as --use_fast_math, --expt-relaxed-constexpr, -gencode, -Xptxas or "
        "-lineinfo exist only in nvcc. hipcc and clang++ stop with 'unknown argument' "
        "(vllm-gguf-plugin PR #85 on ROCm 7.2), so the build fails before compiling a kernel.",
        "Drop the flag or use its clang/hipcc equivalent under a ROCm branch (see message).",
        _GGUF_PR,
    ),
    _rule(
        "GP403", "cuda-arch-list-only", "GPU architectures listed for NVIDIA only",
        Severity.MAJOR, 0.5, f"all targets (the fix names the selected gfx); {_TEXT_KINDS}",
        "CMAKE_CUDA_ARCHITECTURES, TORCH_CUDA_ARCH_LIST, -gencode/sm_XX name NVIDIA "
        "architectures; the file names no AMD target. Code built without the device's gfx "
        "fails at run time with 'HIP error: invalid device function' or "
        "hipErrorNoBinaryForGpu.",
        "Name the AMD target as well: GPU_TARGETS / CMAKE_HIP_ARCHITECTURES, "
        "PYTORCH_ROCM_ARCH for torch extensions, --offload-arch for hipcc.",
        "https://github.com/pytorch/pytorch/pull/61706",
        "https://github.com/pytorch/pytorch/pull/80498",
        "https://github.com/ggml-org/llama.cpp/pull/15994",
        "https://github.com/microsoft/onnxruntime/issues/16566",
    ),
    _rule(
        "GP404", "torch-cuda-extension", "PyTorch CUDAExtension: kernels are hipified on ROCm",
        Severity.MAJOR, 2.0, "all targets; setup.py",
        "On a ROCm build of PyTorch, CUDAExtension runs hipify over the sources and builds "
        "them with hipcc. That works only if the kernels are portable: inline PTX, 32-lane "
        "warp assumptions and CUDA-only libraries break it (mmcv #1898).",
        "Keep CUDAExtension (it is the right class on ROCm too) and check the kernel sources "
        "with the GP3xx rules; run `gpuport hipify` on them to see what does not translate.",
        "https://github.com/open-mmlab/mmcv/issues/1898", _FUSED_SSIM,
    ),
    _rule(
        "GP405", "cpp-extension-cuda-sources", "CUDA sources built as a CppExtension/Extension",
        Severity.BLOCKER, 1.0, "all targets; setup.py",
        "CppExtension (or a plain Extension built by BuildExtension) with .cu sources is "
        "not hipified on ROCm and gets no HIP include paths or libraries. The build fails "
        "(fused-ssim PR #29: cooperative_groups.h not found).",
        "Build the .cu sources with torch.utils.cpp_extension.CUDAExtension.",
        _FUSED_SSIM,
    ),
    _rule(
        "GP406", "cuda-half-operator-macros", "CUDA half/bfloat16 operator macros",
        Severity.MINOR, 0.25, f"all targets; {_TEXT_KINDS}",
        "-U__CUDA_NO_HALF_OPERATORS__ and friends are rewritten on ROCm into "
        "-D/-U__HIP_NO_HALF_* macros, which can switch the half operators off instead of on "
        "(ROCm/hip #3764). Kernels then fail to compile or pick other overloads.",
        "Under a ROCm branch pass -U__HIP_NO_HALF_OPERATORS__ -U__HIP_NO_HALF_CONVERSIONS__ "
        "explicitly, or drop the macros there.",
        "https://github.com/ROCm/hip/issues/3764",
    ),
    _rule(
        "GP407", "cuda-library-link", "Links CUDA libraries by name",
        Severity.MAJOR, 1.0, f"all targets; {_TEXT_KINDS}",
        "-lcudart, -lcublas, CUDA::cublas or ${CUDA_LIBRARIES} name NVIDIA libraries that "
        "do not exist on a ROCm system; the link step fails. Each has a ROCm counterpart "
        "with a different name (and, for cuDNN, a different API).",
        "Link the ROCm libraries under a ROCm branch: hip::host, roc::hipblas, "
        "roc::hipblaslt, hip::hipfft, hip::hiprand, roc::hipsparse, roc::hipsolver, RCCL, "
        "MIOpen.",
        "https://github.com/ROCm/HIPIFY", "https://github.com/Arist12/AMD-Skills",
    ),
    _rule(
        "GP408", "nvcc-invoked", "Build invokes nvcc directly",
        Severity.MAJOR, 1.0, f"all targets; {_TEXT_KINDS}",
        "A build that calls nvcc (NVCC ?= nvcc, $(NVCC), CMAKE_CUDA_COMPILER, a path to "
        "bin/nvcc) cannot run where only ROCm is installed. Builds that probe for nvcc fall "
        "back to CPU-only without saying so (torchmcubes #31).",
        "Use hipcc (or CMAKE_HIP_COMPILER / amdclang++) when building for ROCm.",
        _TORCHMCUBES,
    ),
    _rule(
        "GP409", "cuda-home-gate", "GPU build gated on CUDA_HOME",
        Severity.MAJOR, 0.5, "all targets; setup.py",
        "torch.utils.cpp_extension.CUDA_HOME is None on a ROCm machine without nvcc. A "
        "setup.py that builds its GPU extension only when CUDA_HOME is set installs a "
        "CPU-only package on ROCm without an error (torchmcubes #31).",
        "Also accept ROCm: `if CUDA_HOME is not None or ROCM_HOME is not None` (both from "
        "torch.utils.cpp_extension), or test IS_HIP_EXTENSION.",
        _TORCHMCUBES,
    ),
)

# --- patterns shared by all build files ------------------------------------------------------

_NVCC_ONLY = re.compile(
    r"(?<![\w-])(--?use_fast_math|--expt-relaxed-constexpr|--expt-extended-lambda|--extended-lambda"
    r"|-gencode|--generate-code|-Xptxas|--ptxas-options|-lineinfo|--generate-line-info"
    r"|-rdc|--relocatable-device-code|--default-stream|-Xcompiler|--compiler-options"
    r"|--?maxrregcount|--gpu-architecture|-arch(?=[= ]+(?:sm|compute)_))(?![\w-])"
)
_FLAG_FIX = {
    "use_fast_math": "use -ffast-math (clang) instead",
    "expt-relaxed-constexpr": "drop it: clang allows constexpr host functions in device code",
    "expt-extended-lambda": "drop it: clang accepts __device__ lambdas without a flag",
    "extended-lambda": "drop it: clang accepts __device__ lambdas without a flag",
    "Xptxas": "drop it: there is no ptxas on ROCm (limit registers with __launch_bounds__)",
    "ptxas-options": "drop it: there is no ptxas on ROCm (limit registers with __launch_bounds__)",
    "maxrregcount": "drop it: limit registers with __launch_bounds__",
    "lineinfo": "use -gline-tables-only (or -g)",
    "generate-line-info": "use -gline-tables-only (or -g)",
    "rdc": "use -fgpu-rdc",
    "relocatable-device-code": "use -fgpu-rdc",
    "default-stream": "use -fgpu-default-stream=per-thread",
    "Xcompiler": "pass host flags directly: hipcc/clang compiles host and device code",
    "compiler-options": "pass host flags directly: hipcc/clang compiles host and device code",
}
_ARCH_FLAGS = {"gencode", "generate-code", "gpu-architecture", "arch"}
_CUDA_ARCH = re.compile(
    r"\b(CMAKE_CUDA_ARCHITECTURES|CUDA_ARCHITECTURES|TORCH_CUDA_ARCH_LIST|CUDA_ARCH_LIST)\b"
    r"|(?<![\w])(?:sm|compute)_\d{2,3}[a-z]?\b"
)
_ROCM_ARCH = re.compile(
    r"PYTORCH_ROCM_ARCH|(?<![\w])GPU_TARGETS|AMDGPU_TARGET|--offload-arch|HIP_ARCHITECTURES"
)
_HALF_MACRO = re.compile(r"(?<![\w-])-[UD]\s*__CUDA_NO_\w+__")
_CUDA_LIB_NAMES = {
    "cudart": "hip::host (libamdhip64)", "cudart_static": "hip::host (libamdhip64)",
    "cuda": "hip::host (libamdhip64; driver API)", "cublas": "roc::hipblas",
    "cublasLt": "roc::hipblaslt", "cudnn": "MIOpen (the API differs)", "curand": "hip::hiprand",
    "cufft": "hip::hipfft", "cusparse": "roc::hipsparse", "cusolver": "roc::hipsolver",
    "nccl": "RCCL (rccl)", "nvrtc": "hipRTC (hiprtc)", "nvToolsExt": "rocTX (roctx64)",
    "nvidia-ml": "amd_smi",
}
_LIB_ALT = "|".join(sorted(_CUDA_LIB_NAMES, key=len, reverse=True))
_LINK = re.compile(
    rf"(?<![\w-])-l({_LIB_ALT})(?![\w-])|\bCUDA::(\w+)|\$\{{(CUDA_\w*LIBRAR\w*)\}}"
)
_NVCC_WORD = re.compile(r"(?<![\w-])nvcc(?![\w-])")
# ROCm/HIP words in a condition (USE_ROCM, HIP_FOUND, GGML_HIP, torch.version.hip, "HIP");
# a bare "AMD" is left out on purpose: it also names AMD CPU options, and a false guard would
# hide a real blocker.
_ROCM_COND = re.compile(r"(?i)(?<![a-z0-9])(?:rocm|hip|amdgpu)")


def _flag_fix(flag: str, target: str) -> str:
    key = flag.lstrip("-")
    hint = f"use --offload-arch={target}" if key in _ARCH_FLAGS else _FLAG_FIX.get(key, "drop it")
    return f"{flag} is nvcc-only (clang/hipcc reject it): for ROCm builds {hint}."


def _lib_fix(name: str) -> str:
    base = name.removeprefix("lib")
    hip = _CUDA_LIB_NAMES.get(base) or _CUDA_LIB_NAMES.get(base.removesuffix("_static"))
    if hip:
        return f"On ROCm link {hip} instead of {name}."
    return f"On ROCm link the ROCm counterparts of {name} (hip::host, roc::hipblas, ...)."


@dataclass
class _Guards:
    """Line ranges inside conditionals that branch on ROCm/HIP."""

    ranges: list[tuple[int, int]] = field(default_factory=list)

    def __contains__(self, line: int) -> bool:
        return any(a <= line <= b for a, b in self.ranges)


class _Text:
    """Comment-free text of a build file with offset→(line, column) mapping."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.starts = [0] + [i + 1 for i, c in enumerate(code) if c == "\n"]

    def pos(self, offset: int) -> tuple[int, int]:
        idx = bisect.bisect_right(self.starts, offset) - 1
        return idx + 1, offset - self.starts[idx] + 1


def _report_text_tokens(
    ctx: FileContext,
    text: _Text,
    guards: _Guards,
    skip: list[tuple[int, int]],
) -> None:
    """GP402/403/406/407 on comment-free CMake or Makefile text."""
    target = ctx.target.name
    rocm_arch = bool(_ROCM_ARCH.search(text.code))
    code = text.code

    def live(off: int) -> tuple[int, int] | None:
        if any(a <= off < b for a, b in skip):
            return None
        return text.pos(off)

    for m in _NVCC_ONLY.finditer(code):
        if (at := live(m.start())) is not None:
            flag = m.group(1)
            ctx.report("GP402", at[0], at[1], message=f"nvcc-only flag {flag}",
                       fix=_flag_fix(flag, target), guarded=at[0] in guards)
    arch_lines: set[int] = set()
    for m in _CUDA_ARCH.finditer(code):
        at = live(m.start())
        if rocm_arch or at is None or at[0] in arch_lines:
            continue
        arch_lines.add(at[0])
        ctx.report("GP403", at[0], at[1],
                   message=f"{m.group(0)}: NVIDIA architectures only, no AMD target in this file",
                   fix=f"Add the AMD target {target}: set(GPU_TARGETS {target}) or "
                   f"CMAKE_HIP_ARCHITECTURES {target}; PYTORCH_ROCM_ARCH={target}; "
                   f"--offload-arch={target}.",
                   guarded=at[0] in guards)
    for m in _HALF_MACRO.finditer(code):
        if (at := live(m.start())) is not None:
            ctx.report("GP406", at[0], at[1], message=f"{m.group(0)} is remapped on ROCm",
                       guarded=at[0] in guards)
    for m in _LINK.finditer(code):
        if (at := live(m.start())) is not None:
            name = m.group(1) or m.group(2) or m.group(3)
            ctx.report("GP407", at[0], at[1], message=f"links NVIDIA library {m.group(0)}",
                       fix=_lib_fix(name), guarded=at[0] in guards)


# --- CMake ---------------------------------------------------------------------------------

_BRACKET = re.compile(r"\[(=*)\[")
_COMMAND = re.compile(r"([A-Za-z_]\w*)[ \t]*\(")
_HIP_PATH = re.compile(
    r"(?i)\benable_language\s*\([^)]*\bHIP\b|\bfind_package\s*\(\s*(?:hip|rocm)"
    r"|\bproject\s*\([^)]*\bHIP\b|\bLANGUAGE\s+HIP\b"
)
_CUDA_FIND = re.compile(r"(?i)^\s*(CUDA|CUDAToolkit)\b")
_CMAKE_NVCC = re.compile(r"\bCMAKE_CUDA_COMPILER\b|\bCUDA_NVCC_EXECUTABLE\b|" + _NVCC_WORD.pattern)
_LINK_CMDS = {"target_link_libraries", "link_libraries"}
_BARE_LIB = re.compile(rf"(?<![\w:${{/.-])({_LIB_ALT})(?![\w:}}/.-])")


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = " "


def strip_cmake_comments(text: str) -> str:
    """Blank out ``#`` and ``#[[...]]`` comments, keeping strings and bracket arguments."""
    chars = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == "[" and (m := _BRACKET.match(text, i)):
            end = text.find("]" + m.group(1) + "]", m.end())
            i = n if end < 0 else end + len(m.group(1)) + 2
        elif c == "#":
            m = _BRACKET.match(text, i + 1)
            if m:
                end = text.find("]" + m.group(1) + "]", m.end())
                end = n if end < 0 else end + len(m.group(1)) + 2
            else:
                end = text.find("\n", i)
                end = n if end < 0 else end
            _blank(chars, i, end)
            i = end
        else:
            i += 1
    return "".join(chars)


@dataclass(frozen=True)
class _Command:
    name: str
    args: str
    start: int  # offset of the command name
    args_start: int
    end: int  # offset just past ')'


def _commands(code: str) -> Iterator[_Command]:
    pos = 0
    while (m := _COMMAND.search(code, pos)) is not None:
        depth, j, n = 1, m.end(), len(code)
        while j < n and depth:
            ch = code[j]
            if ch == '"':
                j += 1
                while j < n and code[j] != '"':
                    j += 2 if code[j] == "\\" else 1
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            j += 1
        yield _Command(m.group(1).lower(), code[m.end() : j - 1], m.start(), m.end(), j)
        pos = j


def _cmake_guards(cmds: list[_Command], text: _Text) -> _Guards:
    guards = _Guards()
    stack: list[tuple[int, bool]] = []
    last = len(text.starts)
    for cmd in cmds:
        line = text.pos(cmd.start)[0]
        if cmd.name == "if":
            stack.append((line, bool(_ROCM_COND.search(cmd.args))))
        elif cmd.name == "elseif" and stack:
            start, rocm = stack[-1]
            stack[-1] = (start, rocm or bool(_ROCM_COND.search(cmd.args)))
        elif cmd.name == "endif" and stack:
            start, rocm = stack.pop()
            if rocm:
                guards.ranges.append((start, line))
    guards.ranges.extend((start, last) for start, rocm in stack if rocm)
    return guards


@checker(FileKind.CMAKE)
def check_cmake(ctx: FileContext) -> None:
    text = _Text(strip_cmake_comments(ctx.text))
    cmds = list(_commands(text.code))
    guards = _cmake_guards(cmds, text)
    has_hip = bool(_HIP_PATH.search(text.code))
    skip = [(c.start, c.end) for c in cmds if c.name == "message"]
    for cmd in cmds:
        hit: int | None = None
        if cmd.name in ("enable_language", "check_language", "project"):
            words = list(re.finditer(r"\S+", cmd.args))
            first = 1 if cmd.name == "project" else 0
            hit = next((w.start() for w in words[first:] if w.group(0) == "CUDA"), None)
        elif cmd.name == "find_package" and (m := _CUDA_FIND.match(cmd.args)):
            hit = m.start(1)
        elif cmd.name in ("cuda_add_library", "cuda_add_executable"):
            hit = -1
        if hit is not None:
            line, col = text.pos(cmd.start if hit < 0 else cmd.args_start + hit)
            msg = f"{cmd.name}(...) requires nvcc and the CUDA toolkit"
            if has_hip:
                msg += "; this file also has a HIP path"
            ctx.report("GP401", line, col, message=msg, guarded=has_hip or line in guards)
        if cmd.name in _LINK_CMDS:
            for m in _BARE_LIB.finditer(cmd.args):
                line, col = text.pos(cmd.args_start + m.start())
                ctx.report("GP407", line, col, message=f"links NVIDIA library {m.group(1)}",
                           fix=_lib_fix(m.group(1)), guarded=line in guards)
    _report_text_tokens(ctx, text, guards, skip)
    seen: set[int] = set()
    for m in _CMAKE_NVCC.finditer(text.code):
        if any(a <= m.start() < b for a, b in skip):
            continue
        line, col = text.pos(m.start())
        if line not in seen:
            seen.add(line)
            ctx.report("GP408", line, col, message=f"{m.group(0)}: nvcc is the CUDA compiler",
                       guarded=line in guards)


# --- Makefiles -----------------------------------------------------------------------------

_MAKE_COND = re.compile(r"^\s*(ifeq|ifneq|ifdef|ifndef|else|endif)\b(.*)$")
_MAKE_ECHO = re.compile(r"^\s*@?-?\s*(echo|printf)\b|\$\((info|warning|error)\s")
_NVCC_VAR = re.compile(r"\$[({]NVCC[)}]")


def strip_make_comments(text: str) -> str:
    """Blank ``#`` comments (not ``\\#``, not inside quotes); a comment ending in ``\\`` goes on."""
    out: list[str] = []
    in_comment = False
    for line in text.split("\n"):
        if in_comment:
            in_comment = line.rstrip().endswith("\\")
            out.append(" " * len(line))
            continue
        quote = ""
        cut = -1
        for i, ch in enumerate(line):
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"" and line.startswith("\t"):
                quote = ch
            elif ch == "#" and (i == 0 or line[i - 1] != "\\"):
                cut = i
                break
        if cut >= 0:
            in_comment = line.rstrip().endswith("\\")
            line = line[:cut] + " " * (len(line) - cut)
        out.append(line)
    return "\n".join(out)


def make_guards(lines: list[str]) -> list[tuple[int, int]]:
    """Line ranges of Makefile ``ifeq/ifdef ... endif`` blocks that test ROCm/HIP."""
    ranges: list[tuple[int, int]] = []
    stack: list[tuple[int, bool]] = []
    for idx, line in enumerate(lines, 1):
        m = _MAKE_COND.match(line)
        if m is None:
            continue
        word, rest = m.group(1), m.group(2)
        if word.startswith("if"):
            stack.append((idx, bool(_ROCM_COND.search(rest))))
        elif word == "else" and stack:
            start, rocm = stack[-1]
            stack[-1] = (start, rocm or bool(_ROCM_COND.search(rest)))
        elif word == "endif" and stack:
            start, rocm = stack.pop()
            if rocm:
                ranges.append((start, idx))
    return ranges + [(start, len(lines)) for start, rocm in stack if rocm]


@checker(FileKind.MAKEFILE)
def check_makefile(ctx: FileContext) -> None:
    text = _Text(strip_make_comments(ctx.text))
    lines = text.code.split("\n")
    guards = _Guards(make_guards(lines))
    skip = [
        (text.starts[idx], text.starts[idx] + len(line))
        for idx, line in enumerate(lines)
        if _MAKE_ECHO.search(line)
    ]
    _report_text_tokens(ctx, text, guards, skip)
    found_literal = False
    for idx, line in enumerate(lines, 1):
        if (m := _NVCC_WORD.search(line)) and not _MAKE_ECHO.search(line):
            found_literal = True
            ctx.report("GP408", idx, m.start() + 1, message="nvcc is the CUDA compiler",
                       guarded=idx in guards)
    if not found_literal:
        for idx, line in enumerate(lines, 1):
            if m := _NVCC_VAR.search(line):
                ctx.report("GP408", idx, m.start() + 1,
                           message=f"{m.group(0)} runs nvcc (NVCC is defined outside this file)",
                           guarded=idx in guards)
                break


# --- setup.py (ast only) -------------------------------------------------------------------

_ARG_KWS = {
    "extra_compile_args", "extra_cuda_cflags", "extra_cflags", "extra_link_args",
    "extra_ldflags", "libraries", "define_macros", "undef_macros",
}
_CU_SOURCE = re.compile(r"\.(cu|cuh)$")


class _SetupPy:
    """What setup.py says about its extensions, read from the syntax tree only."""

    def __init__(self, ctx: FileContext, tree: ast.Module) -> None:
        self.ctx = ctx
        self.values: dict[str, list[ast.expr]] = {}
        self.parents: dict[ast.AST, ast.AST] = {}
        self.guards = _Guards()
        self.seen: set[tuple[str, int, int]] = set()
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
            self._collect(node)

    def _collect(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for tgt in node.targets:
                if isinstance(tgt, ast.Name):
                    self.values.setdefault(tgt.id, []).append(node.value)
                elif isinstance(tgt, ast.Subscript) and isinstance(tgt.value, ast.Name):
                    self.values.setdefault(tgt.value.id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            if node.value is not None:
                self.values.setdefault(node.target.id, []).append(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.attr in ("append", "extend", "insert", "update")
        ):
            self.values.setdefault(node.func.value.id, []).extend(node.args)
        elif isinstance(node, ast.If | ast.IfExp) and _mentions_rocm(node.test):
            end = node.end_lineno or node.lineno
            self.guards.ranges.append((node.lineno, end))

    def strings(self, expr: ast.AST) -> list[ast.Constant]:
        """String constants an expression can evaluate to, following simple names.

        Each node is visited once per call, so alias cycles and chains stay linear.
        """
        out: list[ast.Constant] = []
        stack, seen = [expr], set()
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append(node)
            elif isinstance(node, ast.List | ast.Tuple | ast.Set):
                stack.extend(node.elts)
            elif isinstance(node, ast.Dict):
                stack.extend(node.values)
            elif isinstance(node, ast.BinOp):
                stack.extend([node.left, node.right])
            elif isinstance(node, ast.IfExp):
                stack.extend([node.body, node.orelse])
            elif isinstance(node, ast.Starred):
                stack.append(node.value)
            elif isinstance(node, ast.Name):
                stack.extend(self.values.get(node.id, []))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                stack.extend([node.func.value] if node.func.attr == "split" else [])
            elif isinstance(node, ast.Call) and _call_name(node) in ("dict", "list", "tuple"):
                stack.extend([*node.args, *(k.value for k in node.keywords)])
        return sorted(out, key=lambda c: (c.lineno, c.col_offset))

    def report(
        self, rule: str, node: ast.Constant, token: str, message: str, fix: str | None = None
    ) -> None:
        line, col = _token_pos(self.ctx, node, token)
        if (rule, line, col) in self.seen:
            return
        self.seen.add((rule, line, col))
        self.ctx.report(rule, line, col, message=message, fix=fix, guarded=line in self.guards)


def _mentions_rocm(test: ast.expr) -> bool:
    words: list[str] = []
    for node in ast.walk(test):
        if isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words.append(node.value)
    return bool(_ROCM_COND.search(" ".join(words)))


def _token_pos(ctx: FileContext, node: ast.Constant, token: str) -> tuple[int, int]:
    """The physical line and 1-based column of ``token`` inside a string literal."""
    first = node.lineno
    last = node.end_lineno or first
    raw = ctx.line_text(first).encode("utf-8")[: node.col_offset]
    start_col = len(raw.decode("utf-8", errors="replace"))
    for line in range(first, last + 1):
        text = ctx.line_text(line)
        idx = text.find(token, start_col if line == first else 0)
        if idx >= 0:
            return line, idx + 1
    return first, start_col + 1


def _names(node: ast.AST) -> set[str]:
    return {n.id if isinstance(n, ast.Name) else n.attr
            for n in ast.walk(node) if isinstance(n, ast.Name | ast.Attribute)}


def _call_name(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _check_tokens(sp: _SetupPy, const: ast.Constant, rocm_arch: bool, in_args: bool) -> None:
    value = str(const.value)
    if not in_args and (not value.strip() or any(c.isspace() for c in value.strip())):
        return  # outside compile args, only single-token strings are read as flags
    target = sp.ctx.target.name
    for m in _NVCC_ONLY.finditer(value):
        sp.report("GP402", const, m.group(1), message=f"nvcc-only flag {m.group(1)}",
                  fix=_flag_fix(m.group(1), target))
    if not rocm_arch and (arch := _CUDA_ARCH.search(value)):
        sp.report("GP403", const, arch.group(0),
                  message=f"{arch.group(0)}: NVIDIA architectures only, no PYTORCH_ROCM_ARCH here",
                  fix=f"Set PYTORCH_ROCM_ARCH={target} for the ROCm build.")
    for m in _HALF_MACRO.finditer(value):
        sp.report("GP406", const, m.group(0), message=f"{m.group(0)} is remapped on ROCm")
    for m in _LINK.finditer(value):
        name = m.group(1) or m.group(2) or m.group(3)
        sp.report("GP407", const, m.group(0), message=f"links NVIDIA library {m.group(0)}",
                  fix=_lib_fix(name))
    if in_args and value in _CUDA_LIB_NAMES:
        sp.report("GP407", const, value, message=f"links NVIDIA library {value}",
                  fix=_lib_fix(value))


def _is_nvcc_use(sp: _SetupPy, const: ast.Constant) -> bool:
    value = str(const.value)
    if value != "nvcc" and not value.endswith("/nvcc"):
        return False
    parent = sp.parents.get(const)
    if isinstance(parent, ast.Dict) and any(k is const for k in parent.keys):
        return False
    if isinstance(parent, ast.Subscript | ast.Compare):
        return False
    return not (isinstance(parent, ast.Call) and _call_name(parent) in ("get", "setdefault", "pop"))


@checker(FileKind.SETUP_PY)
def check_setup_py(ctx: FileContext) -> None:
    try:
        tree = ast.parse(ctx.text, filename=ctx.rel)
    except (SyntaxError, ValueError, RecursionError) as exc:
        if ctx.skip_reason is None:
            ctx.skip_reason = f"invalid Python: {getattr(exc, 'msg', None) or exc}"
        return
    sp = _SetupPy(ctx, tree)
    names = _names(tree)
    rocm_arch = bool(_ROCM_ARCH.search(" ".join(_consts(tree) | names)))
    uses_build_ext = "BuildExtension" in names
    in_args: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in _ARG_KWS:
                    for const in sp.strings(kw.value):
                        in_args.add(id(const))
                        _check_tokens(sp, const, rocm_arch, in_args=True)
            _check_extension_call(sp, node, uses_build_ext)
        elif _is_name(node, "CUDAExtension") and not _is_callee(sp, node):
            _report_node(sp, "GP404", node, "CUDAExtension is hipified and built with hipcc")
        elif isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
            test = node.test
            if "CUDA_HOME" in _names(test) | _consts(test) and not _mentions_rocm(test):
                _report_node(sp, "GP409", test, "the GPU build depends on CUDA_HOME only")
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
            id(node) not in in_args
        ):
            _check_tokens(sp, node, rocm_arch, in_args=False)
            if _is_nvcc_use(sp, node):
                sp.report("GP408", node, str(node.value), message="setup.py looks for or runs nvcc")


def _is_name(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == name) or (
        isinstance(node, ast.Attribute) and node.attr == name
    )


def _is_callee(sp: _SetupPy, node: ast.AST) -> bool:
    parent = sp.parents.get(node)
    return isinstance(parent, ast.Call) and parent.func is node


def _consts(node: ast.AST) -> set[str]:
    return {
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def _report_node(sp: _SetupPy, rule: str, node: ast.AST, message: str) -> None:
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0)
    raw = sp.ctx.line_text(line).encode("utf-8")[:col]
    column = len(raw.decode("utf-8", errors="replace")) + 1
    if (rule, line, column) not in sp.seen:
        sp.seen.add((rule, line, column))
        sp.ctx.report(rule, line, column, message=message, guarded=line in sp.guards)


def _check_extension_call(sp: _SetupPy, call: ast.Call, uses_build_ext: bool) -> None:
    name = _call_name(call)
    if name not in ("CUDAExtension", "CppExtension", "Extension"):
        return
    src_expr: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for kw in call.keywords:
        if kw.arg == "sources":
            src_expr = kw.value
    sources = [str(c.value) for c in sp.strings(src_expr)] if src_expr is not None else []
    cu = [s for s in sources if _CU_SOURCE.search(s)]
    if name == "CUDAExtension":
        shown = f" ({', '.join(cu[:3])}{'...' if len(cu) > 3 else ''})" if cu else ""
        _report_node(sp, "GP404", call.func,
                     f"CUDAExtension{shown}: hipified and built with hipcc on ROCm torch; "
                     "check the kernels with the GP3xx rules")
    elif cu and (name == "CppExtension" or uses_build_ext):
        _report_node(sp, "GP405", call.func,
                     f"{name} with CUDA sources ({', '.join(cu[:3])}) is not hipified on ROCm")
