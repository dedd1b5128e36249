"""GP410: native code the build writes at build time, which a scan cannot read.

A project whose CUDA is generated while it builds (spconv through ``cumm``/``pccm``, kernel
template generators run from setup.py or CMake) shows little or no CUDA in its tree; read as
it is, it looks ready. Issue 24: ``ready`` needs positive evidence that nothing native is
built unseen, so the build step that generates code is a finding of its own:

* setup.py importing a build-time code generator the knowledge base knows (category
  ``codegen``): its ROCm status decides the severity (no ROCm backend: blocker);
* setup.py running a generator of the project's own (a call, an import or a script whose name
  says ``generate``/``codegen``/``gen_*``) or a CMake ``add_custom_command`` whose ``OUTPUT``
  is CUDA/C++ source: an unknown generator, major (gpuport cannot see what it writes); minor
  when the outputs are C++ with no CUDA source among them (``rgbspectrum_srgb.cpp`` tables).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gpuport import fileio, pyparse, textre
from gpuport.models import Severity
from gpuport.safeparse import toml_table
from gpuport.scan.project.build_settings import dotted_name
from gpuport.scan.rules.base import FileContext

__all__ = ["check_cmake_generated", "check_setup_generators"]

#: What a generator that writes no native code is named for (type stubs, docs, versions).
_NOT_NATIVE = textre.compile(r"pyi|stub|doc|version|proto|readme|config|manifest", re.I)
#: A name (module, function, script) that says it generates code.
_GEN_NAME = textre.compile(r"(?:^|[._/-])(?:generate|generator|codegen|gen)(?:[._-]|$)|^gen_", re.I)
_SCRIPT = textre.compile(r"[\w/.-]*(?:generate|codegen|gen_)[\w.-]*\.py$", re.I)
_RUNNERS = frozenset({"run", "call", "check_call", "check_output", "Popen", "system", "exec"})
_STATUS_SEVERITY = {"no": Severity.BLOCKER, "partial": Severity.MAJOR}
_CUSTOM = textre.compile(r"\badd_custom_command\s*\((?P<body>[^()]*(?:\([^()]*\)[^()]*)*)\)", re.I)
_CUSTOM_KEYWORDS = frozenset(
    {"COMMAND", "DEPENDS", "MAIN_DEPENDENCY", "WORKING_DIRECTORY", "COMMENT", "BYPRODUCTS",
     "VERBATIM", "IMPLICIT_DEPENDS", "DEPFILE", "JOB_POOL", "USES_TERMINAL", "APPEND"}
)  # fmt: skip
_NATIVE_OUT = textre.compile(r"\.(?:cu|cuh|cpp|cc|cxx|h|hpp)\b", re.I)
#: CUDA source among the outputs: the generated code is GPU code (major); C++ alone is minor
#: (pbrt-v4 writes its RGB spectrum tables as .cpp: issue 24, eleventh sample)
_CUDA_OUT = textre.compile(r"\.(?:cu|cuh)\b", re.I)
#: a generated header or source named for a version string or a message format
#: (``version.hpp``, ``git_version.h``, ``msg.pb.cc``): no GPU code (issue 24, ninth round)
_NOT_NATIVE_OUT = textre.compile(r"(?:^|[._-])(?:version|versions|pb|proto|stub)(?:[._-]|$)", re.I)


#: The generators GP410 knows, with their sources (beside this module: the rule's data).
GENERATORS_FILE = Path(__file__).with_name("generators.toml")


@dataclass(frozen=True)
class Generator:
    name: str
    imports: tuple[str, ...]
    status: str
    summary: str
    sources: tuple[str, ...]


@cache
def generators() -> dict[str, Generator]:
    """Import name -> generator, from ``generators.toml``."""
    data = toml_table(fileio.read_bytes(GENERATORS_FILE, limit=fileio.LIMIT_SETTINGS))
    out: dict[str, Generator] = {}
    for entry in data.get("generator", []):
        gen = Generator(
            name=str(entry["name"]),
            imports=tuple(entry["imports"]),
            status=str(entry["status"]),
            summary=str(entry["summary"]),
            sources=tuple(entry["sources"]),
        )
        for name in gen.imports:
            out[name] = gen
    return out


def _known(module: str) -> Generator | None:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        gen = generators().get(".".join(parts[:i]))
        if gen is not None:
            return gen
    return None


def check_setup_generators(ctx: FileContext, tree: ast.Module) -> None:
    """GP410 in a setup.py: a known code generator imported, or a generator of its own run."""
    seen: set[str] = set()
    for node in pyparse.walk(tree):
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
        for module in modules:
            gen = _known(module)
            if gen is not None and gen.name not in seen:
                seen.add(gen.name)
                ctx.report(
                    "GP410",
                    getattr(node, "lineno", None),
                    getattr(node, "col_offset", 0) + 1,
                    message=f"`{module}` ({gen.name}) generates native code at build time: "
                    f"{gen.summary}",
                    severity=_STATUS_SEVERITY.get(gen.status, Severity.MAJOR),
                )
            elif (
                gen is None
                and ctx.packages.by_import(module) is None
                and _GEN_NAME.search(module)
                and not _NOT_NATIVE.search(module)
                and module not in seen
            ):
                seen.add(module)
                _unknown(ctx, node, f"setup.py imports `{module}`, a code generator")
        if isinstance(node, ast.Call):
            name = dotted_name(node.func) or ""
            last = name.rsplit(".", 1)[-1]
            scripts = [
                a.value
                for a in pyparse.walk(node)
                if isinstance(a, ast.Constant)
                and isinstance(a.value, str)
                and _SCRIPT.search(a.value)
            ]
            scripts = [s for s in scripts if not _NOT_NATIVE.search(s.rsplit("/", 1)[-1])]
            if last in _RUNNERS and scripts and scripts[0] not in seen:
                seen.add(scripts[0])
                _unknown(ctx, node, f"the build runs `{scripts[0]}`, a code generator")
            elif (
                isinstance(node.func, ast.Name)
                and _GEN_NAME.search(last)
                and "kernel" in last.lower()
                and last not in seen
            ):
                seen.add(last)
                _unknown(ctx, node, f"the build calls `{last}()`, a kernel generator")


def _unknown(ctx: FileContext, node: ast.AST, what: str) -> None:
    ctx.report(
        "GP410",
        getattr(node, "lineno", None),
        getattr(node, "col_offset", 0) + 1,
        message=f"{what}: an unknown generator, so gpuport cannot see the native code it writes; "
        "judge the generated sources by hand (`gpuport scan` the build folder after a build)",
    )


def check_cmake_generated(ctx: FileContext, code: str) -> None:
    """GP410 in CMake: ``add_custom_command(OUTPUT <CUDA/C++ sources> ...)``."""
    for m in _CUSTOM.finditer(code):
        words = m.group("body").split()
        if "OUTPUT" not in words:
            continue
        outs = []
        for word in words[words.index("OUTPUT") + 1 :]:
            if word in _CUSTOM_KEYWORDS:
                break
            outs.append(word)
        native = [
            w
            for w in outs
            if _NATIVE_OUT.search(w) and not _NOT_NATIVE_OUT.search(w.rsplit("/", 1)[-1])
        ]
        if not native:
            continue
        line = textre.line_finder(code)(m.start())
        cuda = [w for w in native if _CUDA_OUT.search(w)]
        what = f"add_custom_command writes `{(cuda or native)[0]}` at build time"
        if cuda:
            _report_line(ctx, line, what)
        else:  # C++ the build writes (pbrt-v4's spectrum tables): said, not a port's work
            _report_line(ctx, line, f"{what} (C++, no CUDA source among its outputs)", True)


def _report_line(ctx: FileContext, line: int, what: str, cxx: bool = False) -> None:
    ctx.report(
        "GP410",
        line,
        1,
        message=f"{what}: gpuport cannot see the native code it generates; judge the generated "
        "sources by hand (`gpuport scan` the build folder after a build)",
        severity=Severity.MINOR if cxx else None,
    )
