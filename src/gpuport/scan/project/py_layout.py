"""Where a line of a Python module sits, read as text (never imported or run).

* :func:`module_level_line`: a statement at module level (a module-level import runs on import).
* :func:`self_tests`: the ``if __name__ == "__main__":`` block of a module inside a package,
  which importing the package never runs (issue 24, tenth sample: lightllm's Triton kernel
  modules end in FP8 self-tests that made a serving engine ``blocked``). Such a block is the
  module's own test or demo unless the project runs the module as a program: a
  ``python -m pkg.mod`` (or ``runpy.run_module("pkg.mod")``) or the file's name as a command
  argument anywhere in its docs, scripts, recipes or code (lightllm's
  ``python -m lightllm.server.api_server``). Findings there are counted in the ``test`` scope.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from gpuport import textre
from gpuport.scan.project.files import iter_entries, read_text

__all__ = ["module_level_line", "self_tests"]

_MAIN = textre.compile(
    r"^if[ \t(]+(?:__name__[ \t]*==[ \t]*['\"]__main__['\"]|['\"]__main__['\"][ \t]*==[ \t]*"
    r"__name__)[ \t)]*:",
    re.M,
)
#: files read for a run of the module: text a person or a program reads as commands
_TEXT_SUFFIXES = frozenset(
    {".md", ".rst", ".txt", ".sh", ".bash", ".zsh", ".py", ".yml", ".yaml", ".toml", ".cfg",
     ".ini", ".json", ".ipynb", ".mk", ".cmake", ".ps1", ".bat"}
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
            return above.rstrip().endswith("try:") and above.startswith("try")
    return False


def main_block(text: str) -> tuple[int, int] | None:
    """First and last line of the module's top-level ``if __name__ == "__main__":`` block:
    up to the next statement at column 0 (an ``else:`` runs on import and is not in it)."""
    m = _MAIN.search(text)
    if m is None:
        return None
    first = text.count("\n", 0, m.start()) + 1
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


def self_tests(root: Path, paths: Iterable[str], max_bytes: int) -> dict[str, tuple[int, int, str]]:
    """For each of ``paths`` (Python files holding findings) that is a package module with an
    ``if __name__ == "__main__":`` block the project never runs: (first line, last line, why)."""
    blocks: dict[str, tuple[int, int, str]] = {}
    for rel in sorted(set(paths)):
        if not rel.endswith(".py") or not root.is_dir():
            continue
        module = _module(root, rel)
        if module is None:
            continue
        text = read_text(root / rel, max_bytes, root)
        span = main_block(text) if isinstance(text, str) else None
        if span is not None and span[1] > span[0]:
            blocks[rel] = (*span, module)
    if not blocks:
        return {}
    runs = {rel: _run_patterns(module, rel) for rel, (_a, _b, module) in blocks.items()}
    files = spent = 0
    for item in iter_entries(root):
        if not runs or files >= MOST_FILES or spent >= MOST_BYTES:
            break
        if not isinstance(item, tuple):
            continue
        rel, entry = item
        name = entry.name
        if Path(name).suffix.lower() not in _TEXT_SUFFIXES and not _TEXT_NAMES.match(name):
            continue
        got = read_text(Path(entry.path), _FILE_BYTES, root)
        if not isinstance(got, str):
            continue
        files += 1
        spent += len(got)
        for mod_rel in [r for r, pat in runs.items() if pat.search(got)]:
            del runs[mod_rel]  # the project runs it: its block is a program, not a test
    if files >= MOST_FILES or spent >= MOST_BYTES:
        return {}  # not every file was read: a run may be in one of the others
    return {
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
