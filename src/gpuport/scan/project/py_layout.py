"""Where a line of a Python module sits, read as text (never imported or run).

* :func:`module_level_line`: a statement at module level (a module-level import runs on import),
  or in a top-level function the module's own statements call, a class body's included
  (forty-second re-run F19).
* :func:`read_layout`: the ``if __name__ == "__main__":`` block of a module inside a package,
  which importing the package never runs (issue 24, tenth sample: lightllm's Triton kernel
  modules end in FP8 self-tests that made a serving engine ``blocked``). Such a block is the
  module's own test or demo unless the project runs the module as a program: a
  ``python -m pkg.mod`` (or ``runpy.run_module("pkg.mod")``) or the file's name as a command
  argument anywhere in its docs, scripts, recipes or code (lightllm's
  ``python -m lightllm.server.api_server``). Findings there are counted in the ``test`` scope.
  It also finds the private functions the project never calls, whose findings are lowered
  to minor (:func:`lowered`).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from pathlib import Path

from gpuport import pyparse, textre
from gpuport.intervals import first_holding
from gpuport.models import Severity
from gpuport.scan.finding import Finding
from gpuport.scan.project.files import iter_entries, read_text

__all__ = ["Layout", "lowered", "main_block", "module_level_line", "read_layout"]

_MAIN = textre.compile(
    r"^if[ \t(]+(?:__name__[ \t]*==[ \t]*['\"]__main__['\"]|['\"]__main__['\"][ \t]*==[ \t]*"
    r"__name__)[ \t)]*:",
    re.M,
)
#: files read for a run of the module: text a person or a program reads as commands
_TEXT_SUFFIXES = frozenset(
    {".md", ".rst", ".txt", ".sh", ".bash", ".zsh", ".py", ".yml", ".yaml", ".toml", ".cfg",
     ".ini", ".mk", ".cmake", ".ps1", ".bat"}
)  # fmt: skip
_TEXT_NAMES = textre.compile(r"^(?:Dockerfile.*|.*\.Dockerfile|Makefile.*|Procfile|Justfile)$")
#: how much of the project is read for runs of the modules; past it a module is taken to be run
MOST_FILES = 20_000
MOST_BYTES = 64 * 1024 * 1024
_FILE_BYTES = 1024 * 1024


def module_level_line(path: Path, line: int) -> bool:
    """Whether ``line`` of a Python file starts at column 0 (a module-level import)."""
    text = read_text(path, 4 * 1024 * 1024)
    if not isinstance(text, str):
        return False
    lines = text.splitlines()
    if not 0 < line <= len(lines) or not lines[line - 1].strip():
        return False
    if lines[line - 1][:1] not in (" ", "\t"):
        return True
    # inside a module-level `try:` (one that re-raises, or it would be a guarded import)
    for back in range(line - 2, -1, -1):
        above = lines[back]
        if above.strip() and above[:1] not in (" ", "\t", "#"):
            if above.rstrip().endswith("try:") and above.startswith("try"):
                return True
            break
    return line in _run_on_import(text)


def _run_on_import(text: str) -> frozenset[int]:
    """The lines of the top-level functions the module calls at import (forty-first re-run
    F18): ``def _build(): return load(...)`` and ``_ext = _build()`` compile on every import,
    as a ``load()`` at column 0 does. Read from the ``ast``: a call by the function's name in
    the module's own statements, a class body's included (``class Device: ctx = _context()``
    runs on import: forty-second re-run F19), not inside a function or a lambda or the
    ``if __name__ == "__main__":`` block, one level deep."""
    try:
        tree = pyparse.parse(text)
    except pyparse.PARSE_ERRORS:
        return frozenset()
    defs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    if not defs:
        return frozenset()
    called: set[str] = set()
    pending: list[ast.AST] = [
        n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Lambda) or _is_main_test(node):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            pending.extend(node.decorator_list)  # a nested def's decorators run, its body not
            pending.extend(node.args.defaults)
            pending.extend(d for d in node.args.kw_defaults if d is not None)
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(node.func.id)
        pending.extend(ast.iter_child_nodes(node))
    lines: set[int] = set()
    for name in called & defs.keys():
        fn = defs[name]
        for stmt in fn.body:
            lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return frozenset(lines)


def _is_main_test(node: ast.AST) -> bool:
    """``if __name__ == "__main__":`` (run as a program, not on import)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    return any(isinstance(s, ast.Name) and s.id == "__name__" for s in sides) and any(
        isinstance(s, ast.Constant) and s.value == "__main__" for s in sides
    )


def main_block(text: str) -> tuple[int, int] | None:
    """First and last line of the module's top-level ``if __name__ == "__main__":`` block:
    up to the next statement at column 0 (an ``else:`` runs on import and is not in it)."""
    m = _MAIN.search(text)
    if m is None:
        return None
    first = textre.line_finder(text)(m.start())
    last = first
    lines = text[m.start() :].split("\n")
    for i, line in enumerate(lines[1:], 1):
        if not line.strip() or line[:1] in (" ", "\t", "#"):
            if line.strip() and not line.lstrip().startswith("#"):
                last = first + i
            continue
        break
    return first, last


def _module(root: Path, rel: str) -> str | None:
    """The dotted name of ``rel`` in its package, or None outside one (a script)."""
    parts = rel[: -len(".py")].split("/")
    if len(parts) < 2 or parts[-1] == "__main__" or parts[-1] == "__init__":
        return None
    depth = 0
    for k in range(len(parts) - 1, 0, -1):
        if not (root.joinpath(*parts[:k]) / "__init__.py").is_file():
            break
        depth += 1
    return ".".join(parts[-1 - depth :]) if depth else None


def _run_patterns(module: str, rel: str) -> re.Pattern[str]:
    """A run of the module: ``-m`` (or ``run_module``) with its dotted name or a tail of it
    of two parts or more, or its file name as a word of a command line."""
    parts = module.split(".")
    tails = [".".join(parts[k:]) for k in range(len(parts) - 1)]
    names = "|".join(re.escape(t) for t in tails)
    file = re.escape(rel.rsplit("/", 1)[-1])
    return textre.compile(
        rf"(?:-m[ \t]+|run_module\([ \t]*['\"])(?:{names})(?:[^\w.]|$)"
        rf"|(?:^|[\s'\"/=(`])(?:{file})(?:[^\w.]|$)",
        re.M,
    )


_WORDS: dict[str, re.Pattern[str]] = {}


def _word(name: str) -> re.Pattern[str]:
    """``name`` as a whole word (compiled once per name; the cache is kept small)."""
    pat = _WORDS.get(name)
    if pat is None:
        if len(_WORDS) >= 1024:
            _WORDS.clear()
        pat = _WORDS[name] = textre.compile(rf"(?<!\w){name}(?!\w)")
    return pat


#: Python files larger than this are not parsed for their functions
_PARSE_BYTES = 1024 * 1024
_DUNDER = textre.compile(r"^__\w+__$")
_DEF = textre.compile(r"(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(")
#: functions of one file looked at; past them the rest are taken to be called
MOST_FUNCTIONS = 2000


def _functions(text: str) -> list[tuple[str, int, int]]:
    """Top-level functions with no decorator (a decorator may register the function with a
    framework that calls it by no name the text shows): (name, first line, last line), read
    from the text (a parse of every file with a finding was a fifth of a scan's time). A
    function ends before the next line at column 0 that is code (a closing bracket of its
    signature is not); a docstring line at column 0 ends it early, which only keeps code
    from being lowered."""
    if len(text) > _PARSE_BYTES or "def" not in text:
        return []
    lines = text.split("\n")
    out: list[tuple[str, int, int]] = []
    current: tuple[str, int] | None = None
    last = 0
    previous = ""  # the last line at column 0 that is code
    for i, line in enumerate(lines, 1):
        if not line.strip() or line[0] in " \t#)]}":
            if line.strip() and line[0] not in "#":
                last = i
            continue
        if current is not None:
            out.append((current[0], current[1], last))
            current = None
        m = _DEF.match(line)
        if m is not None and not previous.startswith("@"):
            current = (m.group(1), i)
            last = i
        previous = line
    if current is not None:
        out.append((current[0], current[1], last))
    return [f for f in out if not _DUNDER.match(f[0])]


def _dead_in_file(
    text: str,
    funcs: list[tuple[str, int, int]],
    elsewhere: set[str],
    block: tuple[int, int, str] | None,
) -> set[str]:
    """The file's functions, none named in another file, whose every mention in the file
    (past its own ``def`` line) is inside a dead function or the self-test block: what stays
    after liveness spreads from the other mentions along "mentioned inside". Linear: one
    look per mention."""
    starts = [0]
    at = text.find("\n")
    while at >= 0:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    order = sorted(funcs, key=lambda f: f[1])
    firsts = [f[1] for f in order]
    own = {name for name, _a, _b in funcs}

    def enclosing(line: int) -> str | None:
        k = bisect_right(firsts, line) - 1
        return order[k][0] if k >= 0 and order[k][1] <= line <= order[k][2] else None

    live = set(elsewhere & own)
    inside: dict[str, list[str]] = {}  # function -> the functions mentioned inside it
    firsts_of: dict[str, int] = {}
    for name, a, _b in funcs:
        firsts_of.setdefault(name, a)
    for name in own - live:
        first = firsts_of[name]
        for m in _word(name).finditer(text):
            line = bisect_right(starts, m.start())
            if line == first:
                continue  # its own `def`
            host = enclosing(line)
            if host is not None and host != name:
                inside.setdefault(host, []).append(name)
            elif host is None and not (block and block[0] <= line <= block[1]):
                live.add(name)  # module-level code (or a run block) names it
                break
    todo = list(live)
    while todo:
        for name in inside.get(todo.pop(), ()):
            if name not in live:
                live.add(name)
                todo.append(name)
    return own - live


def _holds(lines: list[int], first: int, last: int) -> bool:
    """Whether one of the sorted ``lines`` is within ``first..last``."""
    i = bisect_left(lines, first)
    return i < len(lines) and lines[i] <= last


def lowered(findings: list[Finding], dead: dict[str, list[tuple[int, int, str]]]) -> list[Finding]:
    """``findings`` with those above minor inside a dead function lowered to minor, with why."""
    if not dead:
        return findings
    out: list[Finding] = []
    for f in findings:
        spans = dead.get(f.location.path, [])
        line = f.location.line or 0
        why = first_holding(spans, line) if spans else None
        if why is not None and f.scope == "core" and f.severity.rank > Severity.MINOR.rank:
            f = dataclasses.replace(
                f,
                severity=Severity.MINOR,
                default_severity=f.default_severity or f.severity,
                message=f"{f.message} ({why})",
            )
        out.append(f)
    return out


@dataclasses.dataclass
class Layout:
    """What a scan's Python findings sit in: self-test blocks (file -> (first line, last line,
    why)) and functions the project never calls (file -> [(first, last line, why)])."""

    blocks: dict[str, tuple[int, int, str]] = dataclasses.field(default_factory=dict)
    dead: dict[str, list[tuple[int, int, str]]] = dataclasses.field(default_factory=dict)


#: every ASCII byte that cannot be in an identifier, mapped to a space (words by bytes.split:
#: a str.translate of every text file was a third of a scan's time, unsloth)
_NOT_NAME = bytes(
    c if c >= 128 or chr(c).isalnum() or chr(c) == "_" else ord(" ") for c in range(256)
)


def read_layout(root: Path, findings: Iterable[Finding], max_bytes: int) -> Layout:
    """Where the Python findings above info sit (issue 24, tenth sample, lightllm):

    * **self-test blocks**: the ``if __name__ == "__main__":`` block of a package module
      (:func:`main_block`) that the project never runs as a program: no ``python -m`` of it
      (or of a tail of its dotted name), no ``run_module``, no command with its file name, in
      any text file of the project;
    * **private functions never called**: a top-level, undecorated function whose name starts
      with ``_`` (a public one may be called by the users of a library alone:
      TransformerEngine's ``current_scaling_ref_factory``, documented only in its own
      docstring), in a package module, whose name no other text file of the project writes
      (code, docs, scripts, configuration: an ``__all__`` entry or a ``getattr`` string is a
      mention), and whose every other mention in its own file sits in such a function or in
      a self-test block.

    The project's text files are read once, within bounds (:data:`MOST_FILES`,
    :data:`MOST_BYTES`; a file over 1 MB is not read); past the bounds nothing is lowered."""
    lines: dict[str, set[int]] = {}
    for f in findings:
        if f.location.path.endswith(".py") and f.severity is not Severity.INFO:
            lines.setdefault(f.location.path, set()).add(f.location.line or 0)
    if not lines or not root.is_dir():
        return Layout()
    blocks: dict[str, tuple[int, int, str]] = {}
    own: dict[str, tuple[str, list[tuple[str, int, int]]]] = {}
    for rel, at in sorted(lines.items()):
        module = _module(root, rel)
        text = read_text(root / rel, max_bytes, root) if module is not None else None
        if module is None or not isinstance(text, str):
            continue
        span = main_block(text)
        if span is not None and span[1] > span[0]:
            blocks[rel] = (*span, module)
        funcs = _functions(text)
        held = sorted(at)
        if any(name[0] == "_" and _holds(held, a, b) for name, a, b in funcs):
            own[rel] = (text, funcs[:MOST_FUNCTIONS])
    if not blocks and not own:
        return Layout()
    runs = {rel: (module.rsplit(".", 1)[-1].encode(), _run_patterns(module, rel))
            for rel, (_a, _b, module) in blocks.items()}  # fmt: skip
    names = {n.encode() for _text, funcs in own.values() for n, _a, _b in funcs if n[0] == "_"}
    named: dict[str, set[str]] = {}  # name -> the files that write it
    files = spent = 0
    for item in iter_entries(root):
        if not isinstance(item, tuple):
            continue
        rel, entry = item
        name = entry.name
        if Path(name).suffix.lower() not in _TEXT_SUFFIXES and not _TEXT_NAMES.match(name):
            continue
        if files >= MOST_FILES or spent >= MOST_BYTES:
            return Layout()  # a run or a call may be in a file not read
        got = read_text(Path(entry.path), _FILE_BYTES, root)
        if not isinstance(got, str):
            continue
        files += 1
        spent += len(got)
        words = set(got.encode("utf-8", "surrogateescape").translate(_NOT_NAME).split())
        for mod_rel in [r for r, (key, pat) in runs.items() if key in words and pat.search(got)]:
            del runs[mod_rel]  # the project runs it: its block is a program, not a test
        for word in names & words:
            named.setdefault(word.decode(), set()).add(rel)
    tests = {
        rel: (
            first,
            last,
            f'in the `if __name__ == "__main__":` block of the package module {module}, '
            f"which the project never runs as a program (no `-m {module}` or `{rel}` command "
            "in its files): a self-test, counted apart",
        )
        for rel, (first, last, module) in blocks.items()
        if rel in runs
    }
    dead: dict[str, list[tuple[int, int, str]]] = {}
    for rel, (text, funcs) in own.items():
        # a public function counts as called: by the project's users, if by no one else
        elsewhere = {n for n, _a, _b in funcs if n[0] != "_" or named.get(n, set()) - {rel}}
        gone = _dead_in_file(text, funcs, elsewhere, tests.get(rel))
        held = sorted(lines[rel])
        hold = [(a, b, name) for name, a, b in funcs if name in gone and _holds(held, a, b)]
        if hold:
            dead[rel] = [
                (
                    a,
                    b,
                    f"in `{name}()`, which the project never calls: no file names it "
                    "outside code that is never run",
                )
                for a, b, name in hold
            ]
    return Layout(tests, dead)
