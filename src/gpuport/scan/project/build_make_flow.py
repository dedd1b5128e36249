"""Where a Makefile's variables are used: a line is on the ROCm route only if its value is
(issue 24, ninth round).

A default outside any conditional (``NVCC ?= nvcc``, ``NVCCFLAGS ?= -Xcompiler -fPIC``,
``CUDA_ARCH ?= sm_70``) or a source list named at the top level
(``cuda.cpp := $(wildcard backends/cuda/*.cpp)``) is read by every build, but it only matters
where its value is consumed: in a rule, a recipe, or another variable that is itself consumed.
A variable is *on the route* when one of its uses is on a line a ROCm build is shown to take
(``shown``) and that use is a rule, a recipe line, or the value of a variable on the route.
A recipe of a rule for CUDA sources (``%.o: %.cu``) counts only where the ROCm build compiles
``.cu`` files through the same Makefile (a source list on the route names one: a HIP makefile
that gives ``.cu`` files to hipcc).

Uses are ``$(V)``, ``${V}``, ``$(V:a=b)`` and a name passed to ``$(call f,V)``; a variable
named only as a bare word (a list of names printed into a configuration string) is not used.
A variable that is exported, used by a Makefile this one includes, or not used in this file at
all (a ``defaults.mk`` another Makefile includes) counts as on the route -- except in a
Makefile no other build file includes, that exports nothing as a whole (no bare ``export``, no
``.EXPORT_ALL_VARIABLES``) and names no variable by a computed name (``$($(X)_FLAGS)``,
``$(eval``, ``$(value``): there a variable nothing reads is read by no build (Librett's
``GENCODE_FLAGS`` in its ``Makefile.hip``, whose HIP compile lines pass ``--amdgpu-target``;
issue 24, twenty-fifth sample), and :attr:`MakeFlow.unused` lists it. A Makefile is
combined with others by ``make -f config.mk -f kernels/Makefile`` and ``MAKEFILES=`` too, and
a Makefile with no rule of its own is a fragment only such a combination reads (perhaps from
a script the scan does not read): neither is closed (forty-third re-run F12). Nor is a
variable another Makefile uses but never assigns (forty-fourth re-run F12: ``kernels/Makefile``
reads ``$(GENCODE)`` from ``config.mk`` through ``make -f config.mk -f kernels/Makefile`` in a
script), unless a build file runs this Makefile alone.
``$(info ...)``/``$(warning ...)``/``$(error ...)`` only print. Text only: nothing is run;
one pass over the lines and one over the uses.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field

from gpuport import textre

__all__ = ["MakeFlow", "MakeIncludes", "make_flow"]

_ASSIGN = textre.compile(
    r"^[ \t]*((?:(?:export|override|private)[ \t]+)*)([A-Za-z_][\w.-]*)[ \t]*(?:\?|:{1,3}|\+|!)?="
)
_DIRECTIVE = textre.compile(
    r"^[ \t]*(?:ifeq|ifneq|ifdef|ifndef|else|endif|define|endef|undefine|vpath)\b"
)
_INCLUDE = textre.compile(r"^[ \t]*-?(?:include|sinclude)[ \t]+([^\n#]+)")
_INCLUDES = textre.compile(r"^[ \t]*-?(?:include|sinclude)[ \t]+([^\n#]+)", re.M)
_MAX_INCLUDES = 64
_EXPORT = textre.compile(r"^[ \t]*export[ \t]+([A-Za-z_][\w.\- \t]*)$")
_PRINT = textre.compile(r"^[ \t]*\$[({](?:info|warning|error)[ \t]")
_REF = textre.compile(r"\$[({]([A-Za-z_][\w.-]*)[:)}]")
_CALL = textre.compile(r"\$[({]call[ \t]+[\w.-]+[ \t]*,([^)}]*)[)}]")
_NAME = textre.compile(r"[A-Za-z_][\w.-]*")
_VAR_NAME = textre.compile(r"\$[({][\w.-]+")
#: a ``.cu`` file or glob named in a value (``src/*.cu``, ``kernels/a.cu``), not ``%.cu``
_CU_NAME = textre.compile(r"[\w/*-]\.cu\b")
#: a rule whose prerequisites are CUDA sources (``%.o: %.cu``, ``.cu.o:``)
_CU_RULE = textre.compile(r"%\.cu\b|^[ \t]*\.cu\.\w+[ \t]*:")


#: a rule for HIP sources (``%.o: %.hip``, ``%.hip.cpp``) or a recipe that runs hipcc
_HIP_RULE = textre.compile(r"%\.hip\b")
_HIP_RECIPE = textre.compile(r"\$[({]HIPCC\b|\bhipcc\b", re.I)


@dataclass
class MakeFlow:
    #: variable -> the lines that assign it
    assigns: dict[str, list[int]] = field(default_factory=dict)
    #: variables used somewhere, none of whose uses reach a line the ROCm build is shown to
    #: take -> the line of their first use (the evidence)
    unshown: dict[str, int] = field(default_factory=dict)
    #: physical line -> the variable its logical line assigns
    assigned_at: dict[int, str] = field(default_factory=dict)
    #: physical lines of recipes of CUDA-source rules the ROCm build is not shown to run
    cuda_recipes: set[int] = field(default_factory=set)
    #: variables nothing reads, in a Makefile whose variables no other file or program can
    #: read either (see the module docstring) -> their first assignment's line
    unused: dict[str, int] = field(default_factory=dict)


def _logical(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, text) of each logical line: backslash continuations joined."""
    out: list[tuple[int, int, str]] = []
    parts: list[str] = []
    first = 0
    for n, raw in enumerate(text.split("\n"), 1):
        if not parts:
            first = n
        if raw.endswith("\\"):
            parts.append(raw[:-1])
            continue
        parts.append(raw)
        out.append((first, n, " ".join(parts)))
        parts = []
    if parts:
        out.append((first, first + len(parts) - 1, " ".join(parts)))
    return out


def _uses(line: str) -> set[str]:
    found = set(_REF.findall(line))
    if "call" in line:
        for args in _CALL.findall(line):
            found.update(a.strip() for a in args.split(",") if _NAME.fullmatch(a.strip()))
    return found


#: an include of the compiler's dependency files: ``$(OBJS:.o=.d)``, ``$(DEPS)`` of ``*.d``
_DEPS = textre.compile(r"=\.d\)$|\.d\)?$|\$[({]DEPS?[)}]$", re.I)
#: what lets a variable be read by a name this file does not spell, or by every sub-make
_OPEN_NAMES = textre.compile(
    r"\$[({]\$|\$[({](?:eval|value|origin|flavor)[ \t]|^[ \t]*export[ \t]*$|\.EXPORT_ALL_VARIABLES",
    re.M,
)


def make_flow(
    text: str,
    shown: Callable[[int], bool],
    included: Container[str] = frozenset(),
    top: bool = False,
    needed: Container[str] = frozenset(),
) -> MakeFlow:
    """The variables of a Makefile and which of them reach the ROCm route (see the module
    docstring). ``shown(line)``: whether a ROCm build is shown to take every conditional
    around ``line``; ``included``: the names the Makefiles this one includes use; ``top``: no
    other build file of the project includes this one; ``needed``: names another Makefile
    uses but never assigns (this one may provide them: never "read by nothing")."""
    flow = MakeFlow()
    # per use: (variable used, line, the variable whose value it is or "" for a rule/recipe,
    # the line of the rule a recipe belongs to or 0, a recipe of a CUDA-source rule)
    uses: list[tuple[str, int, str, int, bool]] = []
    on: set[str] = set()
    rule = 0
    cu_rule = False
    cu_named: list[tuple[int, str]] = []  # (line, variable or "") of values naming .cu files
    cu_lines: set[int] = set()  # recipe lines of CUDA-source rules
    hip_rule = False  # a rule of its own compiles HIP sources (with hipcc)
    cu_by_hip = False  # a CUDA-source rule runs hipcc
    has_rule = False
    for first, last, line in _logical(text):
        code = line if line.startswith("\t") else line.split("#", 1)[0]
        if not code.strip():
            continue
        if code.startswith("\t") and rule:
            if _PRINT.match(code):
                continue
            if cu_rule:
                cu_lines.update(range(first, last + 1))
                cu_by_hip = cu_by_hip or bool(_HIP_RECIPE.search(code))
            elif _HIP_RECIPE.search(code):
                hip_rule = True
            for v in _uses(code):
                uses.append((v, first, "", rule, cu_rule))
            continue
        if _DIRECTIVE.match(code) or _PRINT.match(code):
            continue
        exported = _EXPORT.match(code)
        if exported:
            on.update(exported.group(1).split())
            continue
        m = _ASSIGN.match(code)
        if m:
            rule = 0
            name = m.group(2)
            if "export" in m.group(1):
                on.add(name)
            flow.assigns.setdefault(name, []).append(first)
            for n in range(first, last + 1):
                flow.assigned_at[n] = name
            value = code[m.end() :]
            if _CU_NAME.search(_VAR_NAME.sub(" ", value)):
                cu_named.append((first, name))
            for v in _uses(value):
                if v != name:
                    uses.append((v, first, name, 0, False))
            continue
        if _INCLUDE.match(code):
            rule = 0
            for v in _uses(code):
                uses.append((v, first, "", 0, False))
            continue
        if ":" in code:  # a rule (or a target-specific assignment)
            rule, cu_rule, has_rule = first, bool(_CU_RULE.search(code)), True
            hip_rule = hip_rule or bool(_HIP_RULE.search(code))
            if _CU_NAME.search(_VAR_NAME.sub(" ", code.split(":", 1)[1])):
                cu_named.append((first, ""))
        for v in _uses(code):
            uses.append((v, first, "", 0, False))
    on.update(name for name in flow.assigns if name in included)
    # a variable this file never uses is for a file that includes it, a sub-make or the
    # environment: on the route, as is what its value uses
    used = {u[0] for u in uses}
    # a Makefile without a rule of its own is a fragment another Makefile is combined with
    closed = top and has_rule and _OPEN_NAMES.search(text) is None
    for name, lines in flow.assigns.items():
        if name in used:
            continue
        if closed and name not in on and name not in needed:
            flow.unused[name] = lines[0]
        else:
            on.add(name)
    # who is fed by whom: a use inside the value of ``into`` reaches the route when ``into``
    # does and its line is shown
    feeds: dict[str, list[tuple[str, int]]] = {}
    cu_recipes: list[tuple[str, int, int]] = []
    for v, n, into, rule_at, is_cu in uses:
        if into:
            feeds.setdefault(into, []).append((v, n))
        elif is_cu:
            cu_recipes.append((v, n, rule_at))
        elif shown(n) and (not rule_at or shown(rule_at)):
            on.add(v)
    _spread(on, feeds, shown)
    if cu_by_hip or (
        not hip_rule and any(shown(n) and (not into or into in on) for n, into in cu_named)
    ):
        for v, n, rule_at in cu_recipes:
            if shown(n) and shown(rule_at):
                on.add(v)
        _spread(on, feeds, shown)
    else:
        flow.cuda_recipes = cu_lines
    for v, n, _, _, _ in uses:
        if v not in on and v in flow.assigns:
            flow.unshown.setdefault(v, n)
    return flow


def _spread(
    on: set[str], feeds: dict[str, list[tuple[str, int]]], shown: Callable[[int], bool]
) -> None:
    """Mark every variable whose value reaches one already on the route (a worklist: each
    edge is looked at once per round)."""
    todo = list(on)
    while todo:
        w = todo.pop()
        for v, n in feeds.get(w, ()):
            if v not in on and shown(n):
                on.add(v)
                todo.append(v)


#: pattern x build file checks one scan may spend on Makefile includes; past it, a Makefile
#: whose includes were not resolved keeps every variable on the route (its findings stay)
_MATCH_BUDGET = 400_000


class MakeIncludes:
    """What the Makefiles a Makefile includes use, for every Makefile of one scan.

    ``include builds/make.host.$(MACHINE)``: a ``$(...)`` part matches any name within one
    folder, relative to the including file's folder. Each pattern is matched once per scan,
    only against the build files under its literal folder, and the uses of each build file
    are read once (red-team 18: N Makefiles that each ``include *.mk`` read every other one's
    text per Makefile, 200 KB of small files 38 s)."""

    def __init__(self, build_texts: Mapping[str, str]) -> None:
        self.texts = build_texts
        self.rels = sorted(build_texts)
        self.budget = _MATCH_BUDGET
        self._uses: dict[str, frozenset[str]] = {}
        self._matched: dict[str, tuple[frozenset[str], Counter[str]] | None] = {}
        self._included: frozenset[str] | None = None
        self._needed: Counter[str] | None = None
        self._alone: set[str] = set()  # Makefiles a build file runs alone (make -f X)

    def needed(self, path: str, text: str) -> Container[str]:
        """The names another Makefile of the project uses but never assigns: it reads them
        from a Makefile it is combined with (``make -f config.mk -f kernels/Makefile`` in a
        script the scan does not read, ``include`` from elsewhere) or from the environment, so
        a Makefile that assigns one may be what provides it (forty-fourth re-run F12). Each
        Makefile's uses and assignments are read once per scan. A Makefile a build file runs
        alone (``$(MAKE) -f config.mk``) is shown to be read alone: nothing."""
        self.included(path)  # reads which Makefiles are run alone
        if path.rsplit("/", 1)[-1] in self._alone:
            return frozenset()
        if self._needed is None:
            self._needed = Counter()
            for rel, body in self.texts.items():
                if _MAKE_FILE.search(rel.rsplit("/", 1)[-1]) and "$" in body:
                    self._needed.update(self.uses(rel) - _assigned(body))
        own = self.uses(path) - _assigned(text) if path in self.texts else frozenset()
        return _Needed(self._needed, own)

    def uses(self, rel: str) -> frozenset[str]:
        got = self._uses.get(rel)
        if got is None:
            got = self._uses[rel] = frozenset(_uses(self.texts[rel]))
        return got

    def _match(self, pattern: str) -> tuple[frozenset[str], Counter[str]] | None:
        if pattern in self._matched:
            return self._matched[pattern]
        star = pattern.find("*")
        prefix = pattern if star < 0 else pattern[: pattern.rfind("/", 0, star) + 1]
        lo = bisect_left(self.rels, prefix)
        hi = bisect_left(self.rels, prefix + "\U0010ffff")
        got: tuple[frozenset[str], Counter[str]] | None = None
        if hi - lo <= self.budget:
            self.budget -= hi - lo
            glob = textre.compile(
                "".join("[^/]*" if ch == "*" else re.escape(ch) for ch in pattern)
            )
            matched = frozenset(r for r in self.rels[lo:hi] if glob.fullmatch(r))
            counts: Counter[str] = Counter()
            for rel in matched:
                counts.update(self.uses(rel))
            got = (matched, counts)
        self._matched[pattern] = got
        return got

    def included(self, path: str) -> bool:
        """Whether some build file may include ``path``: an ``include`` naming its file name,
        or one whose name is computed or a glob (any file, then); a make command that
        combines it with another (``make -f config.mk -f kernels/Makefile``) or ``MAKEFILES``
        naming it (forty-third re-run F12)."""
        if self._included is None:
            names: set[str] = set()
            for text in self.texts.values():
                if "-f" in text or "--file" in text or "--makefile" in text or "MAKEFILES" in text:
                    combined, alone = _make_files(text)
                    names.update(combined)
                    self._alone.update(alone)
                if "include" not in text:
                    continue
                for m in _INCLUDES.finditer(text):
                    for word in m.group(1).split():
                        if _DEPS.search(word):
                            continue  # the compiler's dependency files (-include $(OBJS:.o=.d))
                        if "$" in word or "*" in word or "?" in word or "[" in word:
                            names.add("*")
                        names.add(word.rsplit("/", 1)[-1])
            self._included = frozenset(names)
        return "*" in self._included or path.rsplit("/", 1)[-1] in self._included

    def used_by_included(self, path: str, text: str) -> Container[str]:
        """The names the Makefiles that ``path`` includes use (all names, when its includes
        could not be resolved within the scan's budget)."""
        if "include" not in text:
            return frozenset()
        folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        pats: set[str] = set()
        for m in _INCLUDES.finditer(text):
            for word in m.group(1).split():
                word = _VAR_NAME.sub("*", word).replace(")", "")
                while "**" in word:  # each pass halves a run of stars
                    word = word.replace("**", "*")
                pats.add(folder + word.replace("}", ""))
            if len(pats) >= _MAX_INCLUDES:
                break
        parts: list[tuple[frozenset[str], Counter[str]]] = []
        for pattern in sorted(pats):
            got = self._match(pattern)
            if got is None:
                return _EVERY_NAME
            if got[0] - {path}:
                parts.append(got)
        return _UsedBy(path, self.uses(path) if path in self.texts else frozenset(), parts)


#: a make command line (to the end of its shell command) and ``MAKEFILES=`` (its value)
_MAKE_RUN = textre.compile(r"(?:\$[({]MAKE[)}]|(?<![\w.-])g?make(?![\w.-]))[^\n;&|]*")
_MAKEFILE_OPT = textre.compile(r"(?:^|[ \t])(?:-f[ \t]*|--file[= ]|--makefile[= ])([^\s\"']+)")
_MAKEFILES_VAR = textre.compile(r"(?<![\w])MAKEFILES[ \t]*[:+?]?=[ \t]*[\"']?([^\n;&|\"']*)")


def combined_makefiles(text: str) -> set[str]:
    """The file names ``text`` has make read together with another Makefile: each of two or
    more ``-f`` files of one make command, a ``MAKEFILES=`` value (read before every
    Makefile); ``*`` for a computed name."""
    return _make_files(text)[0]


def _make_files(text: str) -> tuple[set[str], set[str]]:
    """:func:`combined_makefiles`, and the file names of make commands that read one Makefile
    alone (``$(MAKE) -f config.mk``)."""
    out: set[str] = set()
    alone: set[str] = set()
    runs = [m.group(1) for m in _MAKEFILES_VAR.finditer(text)]
    for m in _MAKE_RUN.finditer(text):
        named = [f.group(1) for f in _MAKEFILE_OPT.finditer(m.group(0))]
        if len(named) >= 2:
            runs.append(" ".join(named))
        elif named:
            alone.add(named[0].rsplit("/", 1)[-1])
    for words in runs:
        for word in words.split():
            name = word.rsplit("/", 1)[-1]
            out.add("*" if "$" in name or "*" in name else name)
    return out, alone


#: a Makefile by name (``Makefile``, ``GNUmakefile``, ``Makefile.hip``, ``*.mk``)
_MAKE_FILE = textre.compile(r"(?i)^(?:gnu)?makefile(?:[._-]\w+)?$|\.mk$")
_ASSIGNS = textre.compile(
    r"(?m)^[ \t]*(?:(?:export|override|private|define)[ \t]+)*([A-Za-z_][\w.-]*)[ \t]*"
    r"(?:\?|:{1,3}|\+|!)?=|^[ \t]*define[ \t]+([A-Za-z_][\w.-]*)"
)


def _assigned(text: str) -> frozenset[str]:
    return frozenset(m.group(1) or m.group(2) for m in _ASSIGNS.finditer(text))


class _Needed:
    """Whether a Makefile other than one (whose own needs are ``own``) needs a name."""

    def __init__(self, counts: Counter[str], own: frozenset[str]) -> None:
        self.counts, self.own = counts, own

    def __contains__(self, name: object) -> bool:
        return self.counts[name] - (name in self.own) > 0  # type: ignore[index]


class _Every:
    def __contains__(self, name: object) -> bool:
        return True


_EVERY_NAME = _Every()


class _UsedBy:
    """Whether an included Makefile other than the file itself uses a name."""

    def __init__(
        self, path: str, own: frozenset[str], parts: list[tuple[frozenset[str], Counter[str]]]
    ) -> None:
        self.path, self.own, self.parts = path, own, parts

    def __contains__(self, name: object) -> bool:
        return any(
            counts[name] - (self.path in matched and name in self.own) > 0  # type: ignore[index]
            for matched, counts in self.parts
        )


#: a Makefile variable set to flags that compile or link HIP for AMD GPUs (``CPPFLAGS = -x hip
#: --offload-arch=gfx90a``, ``LDFLAGS = --hip-link``; Quicksilver's active configuration:
#: issue 24, nineteenth sample)
_HIP_FLAGS = textre.compile(
    r"^[ \t]*[A-Za-z_]\w*[ \t]*[:+?]?=[^\n#]*?(?:-x[ \t]+hip\b|--offload-arch=gfx|--hip-link\b"
    r"|-lamdhip64\b)",
    re.M,
)
_COND = textre.compile(r"^[ \t]*(ifeq|ifneq|ifdef|ifndef|endif)\b", re.M)


def hip_flags_always(text: str) -> bool:
    """Whether a Makefile sets HIP compile or link flags outside any conditional: every build
    of it is a HIP build (a configuration block left active, the others commented out). One
    pass over the conditionals and the flag lines together, in order."""
    if "hip" not in text and "gfx" not in text:
        return False
    events = sorted(
        [(m.start(), 0 if m.group(1) == "endif" else 1) for m in _COND.finditer(text)]
        + [(m.start(), 2) for m in _HIP_FLAGS.finditer(text)]
    )
    depth = 0
    for _at, kind in events:
        if kind == 2 and depth == 0:
            return True
        if kind == 1:
            depth += 1
        elif kind == 0:
            depth = max(0, depth - 1)
    return False
