"""CMake lines no ROCm build runs: functions nothing calls, Windows-only branches and builds.

taichi's ``runtime_module/CMakeLists.txt`` defines ``function(COMPILE_CUSTOM_CUDA_LIBRARY)``
with an nvcc-style ``--cuda-gpu-arch=sm_60`` compile, and its only call is commented out
(issue 24, fifteenth sample): no build of the project, CUDA or ROCm, runs those lines, so what
they name is no finding of the project's.

A ``function(NAME ...)`` or ``macro(NAME ...)`` counts when no CMake file the scan read calls
``NAME(...)`` outside comments (CMake command names are case-insensitive). Nothing is decided
when a file calls commands by a computed name (``cmake_language(CALL ${f})``,
``cmake_language(EVAL ...)``, ``variable_watch``), or when the body has no end.

ROCm builds on Linux, so a branch only a Windows build takes (``if(WIN32)``, ``if(MSVC)``,
``if(CMAKE_CXX_COMPILER_ID STREQUAL "MSVC")``, ``CMAKE_SYSTEM_NAME STREQUAL "Windows"``, alone
or with ``AND``; the ``else()`` of ``if(NOT WIN32)``) is not its (FLAMEGPU2's MSVC warning
suppressions passing ``-Xcompiler /wd4100``, sixteenth sample; gunrock's, the tenth). A
whole Windows port folder is :mod:`backend_folders`'.

An option ``OFF`` by default counts as never turned on only where no text that may configure
the build turns it on: build files, scripts, config files, and (forty-fourth re-run F11) the
project's Dockerfiles (``RUN cmake -DX=ON``) and Python helpers that call cmake (any mention of
the name there: a computed ``-D`` cannot be ruled out), read by :class:`ConfigureTexts`.

Text only: nothing is run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from gpuport import fileio, textre
from gpuport.scan.cmake_lex import commands, strip_cmake_comments
from gpuport.scan.project.script_texts import LazyTexts

__all__ = [
    "ConfigureTexts",
    "commented_out_folders",
    "never_run",
    "opt_in_tails",
    "opt_in_tunings",
    "uncalled_bodies",
    "windows_only",
]

_ENDS = {"function": "endfunction", "macro": "endmacro"}
_DYNAMIC = textre.compile(
    r"(?i)\bcmake_language\s*\(\s*(?:CALL|EVAL|DEFER)\b|\bvariable_watch\s*\("
)


def _is_cmake(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1].lower()
    return name == "cmakelists.txt" or name.endswith(".cmake")


def uncalled_bodies(files: Mapping[str, str]) -> dict[str, list[tuple[int, int, str]]]:
    """CMake file -> [(first line, last line, evidence)] of function/macro bodies that no
    CMake file of ``files`` (relative path -> text) calls."""
    defined: list[tuple[str, str, int, int]] = []  # (name, file, first line, last line)
    called: set[str] = set()
    for rel, text in files.items():
        if not _is_cmake(rel) or "(" not in text:
            continue
        code = strip_cmake_comments(text)
        if _DYNAMIC.search(code):
            return {}
        line_of = textre.line_finder(code)
        open_: list[tuple[str, str, int]] = []  # (kind, name, line) of an unclosed definition
        for cmd in commands(code):
            if cmd.name in _ENDS:
                words = cmd.words()
                open_.append((cmd.name, words[0].text.lower() if words else "", line_of(cmd.start)))
            elif open_ and cmd.name == _ENDS[open_[-1][0]]:
                _, name, first = open_.pop()
                if name:
                    defined.append((name, rel, first, line_of(cmd.start)))
            else:
                called.add(cmd.name)
    out: dict[str, list[tuple[int, int, str]]] = {}
    for name, rel, first, last in defined:
        if name not in called:
            why = f"{rel}:{first}: {name}() is defined but never called"
            out.setdefault(rel, []).append((first, last, why))
    return out


#: a condition only a Windows build meets: the whole test, or one ``AND`` operand of it
_WINDOWS_TERM = textre.compile(
    r"(?i)^(?:WIN32|MSVC|CMAKE_HOST_WIN32|MSVC_VERSION\b.*"
    r"|\$?\{?CMAKE_(?:CXX|C|CUDA)_COMPILER_ID\}?\s+(?:STREQUAL|MATCHES)\s+\"?MSVC\"?"
    r"|\$?\{?CMAKE_(?:HOST_)?SYSTEM_NAME\}?\s+(?:STREQUAL|MATCHES)\s+\"?Windows\"?)$"
)
_WINDOWS_WORD = textre.compile(r"(?i)WIN|MSVC")
_AND = textre.compile(r"(?i)\s+AND\s+")


def _windows_cond(args: str) -> int:
    """1 when only a Windows build takes ``if(args)``, -1 when only a non-Windows one does
    (``NOT WIN32``), else 0. ``OR`` and parentheses are not read (0)."""
    text = " ".join(args.split())
    if not text or "(" in text or textre.search(r"(?i)\bOR\b", text):
        return 0
    if textre.fullmatch(r"(?i)NOT\s+\S+", text):
        return -1 if _WINDOWS_TERM.match(text.split(None, 1)[1]) else 0
    return 1 if any(_WINDOWS_TERM.match(t) for t in _AND.split(text)) else 0


def _windows_branches(rel: str, code: str) -> list[tuple[int, int, str]]:
    line_of = textre.line_finder(code)
    out: list[tuple[int, int, str]] = []
    # per open if(): [body start line, Windows-only branch?, sign of the if(), an elseif
    # seen?, line of the test that opened the branch]
    stack: list[list[int]] = []
    for cmd in commands(code):
        if cmd.name == "if":
            sign = _windows_cond(cmd.args)
            at = line_of(cmd.start)
            stack.append([line_of(cmd.end), int(sign == 1), sign, 0, at])
        elif cmd.name in ("elseif", "else", "endif") and stack:
            frame = stack[-1]
            if frame[1]:
                why = f"{rel}:{frame[4]}: a Windows-only branch (ROCm builds on Linux)"
                out.append((frame[0], line_of(cmd.start), why))
            if cmd.name == "endif":
                stack.pop()
                continue
            frame[0], frame[4] = line_of(cmd.end), line_of(cmd.start)
            if cmd.name == "elseif":
                frame[1], frame[3] = int(_windows_cond(cmd.args) == 1), 1
            else:
                frame[1] = int(frame[2] == -1 and not frame[3])
    return out


def windows_only(files: Mapping[str, str]) -> dict[str, list[tuple[int, int, str]]]:
    """Build file -> line ranges only a Windows build reads (see the module doc)."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    for rel, text in files.items():
        if not _is_cmake(rel) or not _WINDOWS_WORD.search(text):
            continue
        spans = _windows_branches(rel, strip_cmake_comments(text))
        if spans:
            out[rel] = spans
    return out


def never_run(
    files: Mapping[str, str], configure: Mapping[str, str] | None = None
) -> dict[str, list[tuple[int, int, str]]]:
    """Build file -> line ranges no ROCm build runs: uncalled functions, Windows-only code,
    the rest of a file an option that is off by default returns from. ``configure``: the
    project's other texts that may configure it (scripts, CI, ``CMakePresets.json``)."""
    out = uncalled_bodies(files)
    for rel, spans in windows_only(files).items():
        out.setdefault(rel, []).extend(spans)
    for rel, spans in opt_in_tails(files, configure).items():
        out.setdefault(rel, []).extend(spans)
    for rel, spans in opt_in_tunings(files, configure).items():
        out.setdefault(rel, []).extend(spans)
    return out


_OPTION_OFF = textre.compile(r'(?i)\boption\s*\(\s*(\w+)\s+(?:"[^"\n]*"|\S+)\s+OFF\s*\)')
#: an option that switches the GPU build itself on (``WITH_GPU``, ``USE_CUDA``,
#: ``ENABLE_ACCELERATOR``): a ROCm build turns it on too, so what it guards is the component a
#: port builds (TurboTransformers' ``if(NOT WITH_GPU) return()``), not an opt-in extra
_GPU_SWITCH = textre.compile(r"(?i)GPU|CUDA|NVIDIA|\bNV_|DEVICE|ACCEL|HIP|ROCM|AMD")
_NOT_NAME = textre.compile(r"(?i)^\s*NOT\s+(\w+)\s*$")


def _off_options(
    files: Mapping[str, str], configure: Mapping[str, str] | None, switch: re.Pattern[str]
) -> tuple[dict[str, str], set[str]]:
    """The CMake files' texts (comments out), and the ``option()``s that are ``OFF`` by
    default, whose name ``switch`` does not match, that no file ``set()``s and that neither a
    build file nor ``configure`` turns on (:func:`_turned_on`); the configure texts are read
    only when such an option exists."""
    texts = {rel: strip_cmake_comments(t) for rel, t in files.items() if _is_cmake(rel)}
    off = {
        m.group(1)
        for t in texts.values()
        for m in _OPTION_OFF.finditer(t)
        if not switch.search(m.group(1))
    }
    if not off:
        return texts, off
    for code in texts.values():  # set(X ...) anywhere: not a plain default
        off -= {
            c.args.split(None, 1)[0] for c in commands(code) if c.name == "set" and c.args.strip()
        }
    if off:
        off -= _turned_on(files, off)
    if off and configure:
        off -= _turned_on(configure, off)
    return texts, off


def opt_in_tails(
    files: Mapping[str, str], configure: Mapping[str, str] | None = None
) -> dict[str, list[tuple[int, int, str]]]:
    """Build file -> the lines after a top-level ``if(NOT X) return() endif()`` where ``X`` is
    an ``option()`` that is ``OFF`` by default: a build that does not ask for ``-DX=ON``
    configures none of them (FlagGems' ``FLAGGEMS_BUILD_C_EXTENSIONS``, an opt-in C extension
    whose CUDA toolkit lookup follows; issue 24, nineteenth sample). An option some file sets
    another way (``set(X ON)``) is not off by default, and one that switches the GPU build
    itself on (:data:`_GPU_SWITCH`) guards what a ROCm build turns on too; nor is one the
    project's configure turns on (:func:`_turned_on`, forty-third re-run F11)."""
    texts, off = _off_options(files, configure, _GPU_SWITCH)
    if not off:
        return {}
    out: dict[str, list[tuple[int, int, str]]] = {}
    for rel, code in texts.items():
        if "return" not in code:
            continue
        spans = _tail_after_return(rel, code, off)
        if spans:
            out[rel] = spans
    return out


def _tail_after_return(rel: str, code: str, off: set[str]) -> list[tuple[int, int, str]]:
    line_of = textre.line_finder(code)
    depth = 0
    option: str | None = None  # the X of an open top-level if(NOT X)
    opened = 0
    returned = False
    for cmd in commands(code):
        if cmd.name == "if":
            m = _NOT_NAME.match(cmd.args) if depth == 0 else None
            option = m.group(1) if m and m.group(1) in off else (option if depth else None)
            opened, returned = (line_of(cmd.start), False) if depth == 0 else (opened, returned)
            depth += 1
        elif cmd.name == "endif":
            depth = max(0, depth - 1)
            if depth == 0 and option is not None and returned:
                why = f"{rel}:{opened}: configured only with -D{option}=ON (OFF by default)"
                return [(line_of(cmd.end), code.count("\n") + 1, why)]
            if depth == 0:
                option = None
        elif depth == 1 and option is not None:
            if cmd.name == "return" and not returned:
                returned = True
            else:
                option = None  # the branch does more than return, or has an else
    return []


_ADD_SUBDIR = textre.compile(r"(?i)\badd_subdirectory\s*\(\s*\"?([\w./-]+)\"?")


def _folder_of(rel: str) -> str:
    return rel.rsplit("/", 1)[0] if "/" in rel else ""


def _joined(base: str, sub: str) -> str:
    parts = [p for p in f"{base}/{sub}".split("/") if p not in ("", ".")]
    out: list[str] = []
    for p in parts:
        if p == "..":
            if not out:
                return ""
            out.pop()
        else:
            out.append(p)
    return "/".join(out)


def commented_out_folders(files: Mapping[str, str]) -> dict[str, str]:
    """Folders whose only ``add_subdirectory`` is commented out (cudpp's
    ``#add_subdirectory(apps/satGL)``, a step the project turned off; issue 24, seventeenth
    sample) -> the evidence: no build of the project configures them. A folder some CMake
    file adds outside a comment, one added by a computed name, or one another build file
    (a setup.py, a Makefile) names, is not one."""
    out: dict[str, str] = {}
    live: set[str] = set()
    for rel, text in files.items():
        if not _is_cmake(rel) or "add_subdirectory" not in text.lower():
            continue
        code = strip_cmake_comments(text)
        if textre.search(r"(?i)add_subdirectory\s*\(\s*\"?[^)\s\"]*\$", code):
            return {}  # a folder added by a variable could be any of them
        line_of = textre.line_finder(text)
        for m in _ADD_SUBDIR.finditer(text):
            folder = _joined(_folder_of(rel), m.group(1))
            if not folder:
                continue
            if code[m.start() : m.end()] == m.group(0):
                live.add(folder)
            else:
                out.setdefault(
                    folder,
                    f"{rel}:{line_of(m.start())}: add_subdirectory({m.group(1)}) is commented out",
                )
    # another build names the folder (QuaRot's setup.py compiles quarot/kernels/*.cu, whose
    # CMake add_subdirectory is commented out): built there
    # (each text's words once: a search of every text per folder was folders x texts, 60,000
    # commented-out folders beside a 1.5 MB Makefile > 100 s; thirty-third re-run F5)
    named: set[str] = set()
    for r, t in files.items():
        if out and not _is_cmake(r):
            named.update(_named_folders(t))
    return {f: why for f, why in out.items() if f not in live and f not in named}


_PATH_WORD = textre.compile(r"[\w.+/-]{1,300}")


def _named_folders(text: str) -> set[str]:
    """Every path-like word of ``text`` and each of its leading folders (``a/b/c.cu`` gives
    ``a/b/c.cu``, ``a`` and ``a/b``)."""
    out: set[str] = set()
    for word in set(_PATH_WORD.findall(text)):
        out.add(word.rstrip("/"))
        at = word.find("/")
        while at > 0:
            out.add(word[:at])
            at = word.find("/", at + 1)
    return out


#: what a block that only tunes flags does: sets variables and prints
_TUNING_CMDS = frozenset({"set", "list", "string", "message"})
#: the words an option that switches a GPU build itself on ends with (``USE_CUDA``,
#: ``MYLIB_ENABLE_GPU``, ``WITH_CUDA_BACKEND``): a ROCm build may turn such a switch on
_SWITCH_TAIL = textre.compile(
    r"(?i)(?:^|_)(?:GPU|CUDA|HIP|ROCM|NVIDIA|DEVICE|ACCEL\w*)(?:_(?:BACKEND|SUPPORT|ENABLED|BUILD))?$"
)


def opt_in_tunings(
    files: Mapping[str, str], configure: Mapping[str, str] | None = None
) -> dict[str, list[tuple[int, int, str]]]:
    """Build file -> the lines of an ``if(X)`` block that only sets variables (flags) where
    ``X`` is an ``option()`` that is ``OFF`` by default, set nowhere else and not a switch of
    the GPU build itself (:data:`_SWITCH_TAIL`): gadgetron's
    ``if (GADGETRON_CUDA_ALL_COMPUTE_MODEL)`` adding ``-gencode`` flags for older GPUs is
    configured only with ``-DGADGETRON_CUDA_ALL_COMPUTE_MODEL=ON`` (issue 24, twenty-fourth
    sample). A block that does more (adds targets, looks packages up, includes files) is left:
    it may be a component a build wants. An option the project's own configure turns on is
    not off by default: ``-DX=ON`` in any build file or ``configure`` text (a setup.py's or a
    script's cmake call), ``"X": "ON"`` in a preset or a pyproject's ``cmake.define``
    (forty-third re-run F11)."""
    texts, off = _off_options(files, configure, _SWITCH_TAIL)
    if not off:
        return {}
    out: dict[str, list[tuple[int, int, str]]] = {}
    for rel, code in texts.items():
        if not off.intersection(_WORDS.findall(code)):
            continue
        spans = _tuning_blocks(rel, code, off)
        if spans:
            out[rel] = spans
    return out


#: ``-DX=value`` on a configure line (a script's or setup.py's cmake call, CMAKE_ARGS)
_DEFINE = textre.compile(r"-D[ \t]*([A-Za-z_]\w*)(?::\w+)?=[\"']?([^\s\"';)\]},]*)")
_FALSE = frozenset({"OFF", "FALSE", "NO", "N", "0", "IGNORE", "NOTFOUND", ""})
#: a cache value given in a config file: a preset's ``"X": "ON"`` or ``"X": {"type": "BOOL",
#: "value": "ON"}``, a pyproject's ``cmake.define`` ``X = "ON"``, a YAML ``X: ON``
_CACHE_ON = textre.compile(
    r"(?i)[\"']?([A-Za-z_]\w*)[\"']?[ \t]*[:=][ \t]*(?:\{[^{}]*?[\"']value[\"'][ \t]*:[ \t]*)?"
    r"[\"']?(?:ON|TRUE|YES|Y|1)[\"']?(?![\w.])"
)
_CONFIG_NAME = (".json", ".toml", ".yml", ".yaml", ".cfg", ".ini")


def _turned_on(texts: Mapping[str, str], off: set[str]) -> set[str]:
    """The names of ``off`` that some text turns on: ``-DX=<not false>`` in any text, a true
    cache value in a config file, and any mention of the name in a Python helper other than
    setup.py (``f"-D{opt}=ON"``, ``"-DX=" + value``: a computed define cannot be ruled
    out); all of ``off`` when ``texts`` could not all be read (one pass per text, names
    looked up in a set; forty-fourth re-run F11)."""
    out: set[str] = set()
    for rel, text in texts.items():
        if "-D" in text:
            out.update(
                m.group(1)
                for m in _DEFINE.finditer(text)
                if m.group(1) in off and m.group(2).upper() not in _FALSE
            )
        lower = rel.lower()
        if lower.endswith(_CONFIG_NAME):
            out.update(m.group(1) for m in _CACHE_ON.finditer(text) if m.group(1) in off)
        elif lower.endswith(_PY_HELPER) and lower.rsplit("/", 1)[-1] != "setup.py":
            out.update(off.intersection(_WORDS.findall(text)))
        if out >= off:
            return out
    if not getattr(texts, "complete", True):
        return set(off)
    return out


_PY_HELPER = (".py", ".pyw", ".pyx")
#: bounds on the Python helpers :class:`ConfigureTexts` reads; past them, nothing is lowered
_MOST_HELPERS = 20_000
_MOST_HELPER_BYTES = 64 << 20
_HELPER_LIMIT = 1 << 20


class ConfigureTexts(LazyTexts):
    """The texts that may configure a project's CMake build, read on first use: ``scripts``
    (its scripts and config files), ``recipes`` (its Dockerfiles: ``RUN cmake -DX=ON``) and
    every Python file of ``candidates`` (a ``tools/build.py`` calling cmake; forty-fourth
    re-run F11). :attr:`complete` is False when a bound was met or a Python file could not be
    read: then no option counts as never turned on."""

    def __init__(
        self,
        scripts: Mapping[str, str],
        recipes: Mapping[str, str],
        python: Sequence[tuple[str, Path, Path]],
    ) -> None:
        self._scripts, self._recipes, self._python = scripts, recipes, python
        self._texts: dict[str, str] | None = None
        self.complete = True

    def _got(self) -> dict[str, str]:
        if self._texts is None:
            texts = {**self._scripts, **self._recipes}
            kept = 0
            if len(self._python) > _MOST_HELPERS:
                self.complete = False
            for rel, path, root in self._python if self.complete else ():
                text = fileio.read_text_or_none(path, limit=_HELPER_LIMIT, root=root)
                if text is None:
                    self.complete = False
                    break
                kept += len(text)
                if kept > _MOST_HELPER_BYTES:
                    self.complete = False
                    break
                if "cmake" in text.lower():  # a helper that may configure the build
                    texts[rel] = text
            self.complete = self.complete and getattr(self._scripts, "complete", True)
            self._texts = texts
        return self._texts


_WORDS = textre.compile(r"\w+")
_PLAIN_NAME = textre.compile(r"^\s*\$?\{?(\w+)\}?\s*$")


def _tuning_blocks(rel: str, code: str, off: set[str]) -> list[tuple[int, int, str]]:
    """The ``if(X) <set/list/string/message only> endif()`` blocks of one CMake file."""
    line_of = textre.line_finder(code)
    out: list[tuple[int, int, str]] = []
    opened: list[tuple[str, int]] = []  # per open if(): (option it tests or "", its line)
    tuning: list[bool] = []  # per open if(): only tuning commands so far, one branch
    # the open if()s below this depth met a command that is no tuning: a mark, not a rewrite
    # of every open frame per command (O(depth x commands); forty-third re-run, stalls)
    spoilt = 0
    for cmd in commands(code):
        if cmd.name == "if":
            m = _PLAIN_NAME.match(cmd.args)
            opened.append((m.group(1) if m and m.group(1) in off else "", line_of(cmd.start)))
            tuning.append(True)
        elif not opened:
            continue
        elif cmd.name in ("elseif", "else"):
            tuning[-1] = False  # another branch: the block is not one opt-in
        elif cmd.name == "endif":
            only = tuning.pop() and len(tuning) >= spoilt
            name, at = opened.pop()
            spoilt = min(spoilt, len(tuning))
            if name and only:
                why = f"{rel}:{at}: configured only with -D{name}=ON (OFF by default)"
                out.append((at, line_of(cmd.end), why))
            if tuning and not only:
                tuning[-1] = False
        elif cmd.name not in _TUNING_CMDS:
            spoilt = len(tuning)
    return out
