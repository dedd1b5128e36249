"""GP2xx: hazards in a project's own Python code (P1–P18 of the research notes).

How a file is checked, cheapest first:

1. One compiled regex of trigger words
   (:data:`~gpuport.scan.rules.python.patterns.STATIC_TRIGGERS`, plus ``import X``
   / ``from X`` for every module the knowledge base says needs work) runs over
   the text. No match: the file is done, ``ast.parse`` is never called. Every
   rule can only fire on a line holding a trigger word, or on a line that uses a
   name bound on such a line (``major, minor = get_device_capability()`` makes
   later lines mentioning ``major``/``minor`` interesting).
2. ``ast.parse`` (never import or exec) of the statements that hold such lines
   (:func:`~gpuport.scan.rules.python.source.reduced_source`; files under 16 KB
   whole). A syntax error skips the file with a reason, it does not abort the
   scan.
3. One iterative walk (:class:`~gpuport.scan.rules.python.visitor.PythonScan`)
   that only enters nodes spanning a marked line and dispatches each node to
   every rule that cares about its type. The dtype rules (GP208, GP210) live in
   :mod:`~gpuport.scan.rules.python.dtypes`, the native-code rules (GP211,
   GP212) in :mod:`~gpuport.scan.rules.python.native`.

Guards (code that already tells NVIDIA from AMD) are described in
:mod:`gpuport.scan.rules.python.guards` (one test) and
:mod:`gpuport.scan.rules.python.scope` (early exits, flag variables,
vendor-dispatch siblings). Findings inside a guard come out with
``guarded=True`` and info severity — except for rules whose hazard is a
ROCm-side spelling that is wrong on ROCm itself (``torch.device("hip")``,
``ROCMExecutionProvider``, both ``HIP_``/``ROCR_VISIBLE_DEVICES``, a FNUZ FP8
type on an OCP target): a guard that selects ROCm does not make those right.

Who reports what: NVML and GPU-monitor modules (``pynvml``, ``nvidia_smi``,
``gpustat``, ``GPUtil``, ``nvitop``) are GP203 only, and the ``nvtx`` package is
GP217 only, even though the knowledge base also marks them "no"; every other
import with status "no" is GP201, and "works-with-route"/"partial" is GP202
(minor: the dependency rules GP1xx report the install side). GP202 leaves out
packages of category "framework"/"compiler" (torch, jax, tensorflow, triton):
every file of such a project imports them, and their route is an install matter.
"""

from __future__ import annotations

import ast
import re
import warnings
import weakref

from gpuport import textre
from gpuport.knowledge import PackageDB
from gpuport.scan.rules.base import FileContext, FileKind, checker, register
from gpuport.scan.rules.python.patterns import (
    NVML_MODULES,
    NVTX_MODULES,
    STATIC_TRIGGERS,
    alias_worthy,
    reported_package,
)
from gpuport.scan.rules.python.rules import PYTHON_RULES
from gpuport.scan.rules.python.scope import GUARD_WORDS, guard_names
from gpuport.scan.rules.python.source import (
    REDUCE_ABOVE,
    flow_names,
    mark_lines,
    mark_words,
    reduced_source,
    trie_regex,
)
from gpuport.scan.rules.python.visitor import PythonScan

register(*PYTHON_RULES)

_TRIGGERS: weakref.WeakKeyDictionary[PackageDB, re.Pattern[str]] = weakref.WeakKeyDictionary()
_MARKERS: weakref.WeakKeyDictionary[PackageDB, re.Pattern[str]] = weakref.WeakKeyDictionary()


def import_tops(packages: PackageDB) -> list[str]:
    """Top-level module names whose import can produce GP201/GP202/GP203/GP217."""
    tops = set(NVML_MODULES | NVTX_MODULES)
    for pkg in packages.packages:
        if reported_package(pkg):
            tops.update(name.split(".", 1)[0] for name in pkg.imports)
    return sorted(t for t in tops if t.isidentifier())


def trigger_words(packages: PackageDB) -> list[str]:
    """Every trigger word: the static ones plus ``import X`` / ``from X`` per module."""
    tops = import_tops(packages)
    return [*STATIC_TRIGGERS, *(f"import {t}" for t in tops), *(f"from {t}" for t in tops)]


def trigger_pattern(packages: PackageDB) -> re.Pattern[str]:
    """The compiled trigger regex for this knowledge base (cached per PackageDB)."""
    cached = _TRIGGERS.get(packages)
    if cached is None:
        cached = textre.compile(trie_regex(trigger_words(packages)))
        _TRIGGERS[packages] = cached
    return cached


def marking_pattern(packages: PackageDB) -> re.Pattern[str]:
    """The trigger words plus the guard words, for one marking pass over a parsed file."""
    cached = _MARKERS.get(packages)
    if cached is None:
        cached = textre.compile(trie_regex([*trigger_words(packages), *sorted(GUARD_WORDS)]))
        _MARKERS[packages] = cached
    return cached


@checker(FileKind.PYTHON)
def check_python(ctx: FileContext) -> None:
    """Run every GP2xx rule over one Python file."""
    text = ctx.text
    pattern = trigger_pattern(ctx.packages)
    if pattern.search(text) is None:
        return  # no trigger word: never parsed
    mask = bytearray(text.count("\n") + 2)
    lines, guards = mark_lines(text, marking_pattern(ctx.packages), mask, GUARD_WORDS)
    mark_words(text, flow_names(text) | _import_aliases(text, lines), mask)
    # Lines that may hold an early exit or a flag assignment must survive the reduction.
    candidates = guard_names(text, lines, guards, mask if len(text) >= REDUCE_ABOVE else None)
    tree = _parse(ctx, reduced_source(text, mask))
    if tree is not None:
        PythonScan(ctx, mask, candidates).run(tree)


def _parse(ctx: FileContext, reduced: str | None) -> ast.Module | None:
    """Parse the reduced text, else the whole file; a failure becomes ``ctx.skip_reason``."""
    with warnings.catch_warnings():
        # The project's invalid escape sequences and the like are not our output.
        warnings.simplefilter("ignore")
        return _parse_quietly(ctx, reduced)


def _parse_quietly(ctx: FileContext, reduced: str | None) -> ast.Module | None:
    if reduced is not None:
        try:
            return ast.parse(reduced, filename=ctx.rel)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            pass  # the statement split guessed wrong, or the file is broken: parse it all
    try:
        return ast.parse(ctx.text, filename=ctx.rel)
    except SyntaxError as exc:
        ctx.skip_reason = f"Python syntax error at line {exc.lineno}: {exc.msg}"
    except (ValueError, MemoryError, RecursionError) as exc:
        ctx.skip_reason = f"Python source could not be parsed: {exc}"
    return None


def _import_aliases(text: str, line_starts: list[int]) -> set[str]:
    """Local names that imports on trigger lines bind to trigger-word APIs.

    ``from torch.utils.cpp_extension import load as build``: lines using
    ``build`` must survive :func:`reduced_source`; the walk then resolves them.
    """
    names: set[str] = set()
    for first in line_starts:
        end = text.find("\n", first)
        match = _IMPORT_LINE.match(text, first, end if end >= 0 else len(text))
        if match is None:
            continue
        module, imported = match.group(1) or "", match.group(2)
        if imported.lstrip().startswith("("):  # from x import (\n a,\n b as c,\n)
            close = text.find(")", match.start(2))
            imported = text[match.start(2) : close if close >= 0 else None]
        for part in imported.replace("\n", " ").strip("()\\ \t").split(","):
            words = part.split()
            if not words:
                continue
            dotted = f"{module}.{words[0]}" if module else words[0]
            local = words[-1] if len(words) == 3 and words[1] == "as" else words[0]
            if alias_worthy(dotted, local):
                names.add(local.split(".", 1)[0])
    return names


_IMPORT_LINE = textre.compile(r"[ \t]*(?:from[ \t]+([\w.]+)[ \t]+)?import[ \t]+([^\n#;]+)")
