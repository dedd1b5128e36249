"""What an assessment can learn from the project's own Python code, with the place it saw it:
the model it serves or trains, and whether it trains (a workload is priced differently).

Why: ``assess`` prices a model for a workload. A model named only in an example or a test is
not the project's (a fine-tuning library's example script that serves Mixtral says nothing
about what the library's users run), so it is *offered*, never used; training code (a
``Trainer``, an optimizer step, ``loss.backward()``) is priced as training. Every value says
where it came from (file:line), so the report can show it and a reader can overrule it.

Static only: files are read through the scan's file layer, parsed with :mod:`ast`, never
imported or run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from gpuport import textre
from gpuport.intervals import in_any
from gpuport.models import GpuportError

# patterns on project text: RE2, linear time (gpuport.textre)
_HF_ID = textre.compile(r"""["']([A-Za-z0-9][\w.-]{0,63}/[\w.-]{1,96})["']""")
_HF_VALUE = textre.compile(r"[A-Za-z0-9][\w.-]{0,63}/[\w.-]{1,96}")
#: Cheap text test before a file is parsed for training code.
_TRAINING_WORDS = textre.compile(r"\bbackward\b|Trainer\b|\.step\s*\(")
#: A receiver whose ``.step()`` is an optimizer step (not a scheduler's or an env's).
_OPTIMIZER = textre.compile(r"optim|^opt$|^opt_|adam|sgd", re.I)
MAX_PLACES = 3  # places kept per kind of evidence


@dataclass(frozen=True)
class Place:
    """One piece of evidence: what was seen, in which file, on which line, in which scope."""

    what: str
    path: str
    line: int
    scope: str
    note: str = ""  # e.g. "in its __main__ block": why a core file's place is not core

    def __str__(self) -> str:
        return f"{self.what} at {self.path}:{self.line}" + (f" ({self.note})" if self.note else "")


@dataclass
class CodeFacts:
    """Models named in the code and training code, split by scope (core vs the rest)."""

    models: list[tuple[str, Place]] = field(default_factory=list)  # (catalog key, place)
    training: list[Place] = field(default_factory=list)

    def core_model(self) -> tuple[str, Place] | None:
        return next(((k, p) for k, p in self.models if p.scope == "core"), None)

    def offered_models(self) -> list[tuple[str, Place]]:
        """Models named only outside core (examples, tests, ...): each key once."""
        core = {k for k, p in self.models if p.scope == "core"}
        seen: dict[str, Place] = {}
        for key, place in self.models:
            if key not in core and key not in seen:
                seen[key] = place
        return list(seen.items())

    def core_training(self) -> list[Place]:
        return [p for p in self.training if p.scope == "core"]


def _parse(text: str) -> ast.AST | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _model_literals(tree: ast.AST) -> list[tuple[str, int]]:
    """``(id, line)`` of each string constant that is a Hugging Face id on its own
    (``"meta-llama/Llama-3.1-8B"``) and not a docstring or a bare string statement: an id
    inside an example in a docstring, or in a code snippet held as a string, is not what the
    project runs."""
    bare = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    out = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in bare
            and _HF_VALUE.fullmatch(node.value)
        ):
            out.append((node.value, node.lineno))
    return sorted(out, key=lambda item: item[1])


def _main_blocks(tree: ast.AST) -> list[tuple[int, int]]:
    """First and last line of each module-level ``if __name__ == "__main__":`` block: code
    there runs only when the file is run as a script (a usage example), not when the library
    is used, so what it names is treated as an example's."""
    out = []
    for node in getattr(tree, "body", []):
        test = node.test if isinstance(node, ast.If) else None
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and test.left.id == "__name__"
            and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__"
        ):
            out.append((node.lineno, node.end_lineno or node.lineno))
    return out


def _place(what: str, rel: str, no: int, scope: str, mains: list[tuple[int, int]]) -> Place:
    """The place of ``what``; a core file's ``__main__`` block counts as an example."""
    if scope == "core" and in_any(mains, no, closed=True):
        return Place(what, rel, no, "example", "in its __main__ block")
    return Place(what, rel, no, scope)


def _training_calls(tree: ast.AST) -> list[tuple[str, int]]:
    """``(what, line)`` for each sign of training: a call to ``*.backward()``, an optimizer's
    ``.step()``, a ``*Trainer(...)`` or a class deriving from one."""
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                if func.attr == "backward":
                    out.append((f"{_name(func.value)}.backward()", node.lineno))
                elif func.attr == "step" and _OPTIMIZER.search(_name(func.value)):
                    out.append((f"{_name(func.value)}.step()", node.lineno))
            name = _name(func)
            if name.rsplit(".", 1)[-1].endswith("Trainer"):
                out.append((f"{name}(...)", node.lineno))
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                if _name(base).rsplit(".", 1)[-1].endswith("Trainer"):
                    out.append((f"class {node.name}({_name(base)})", node.lineno))
    return sorted(out, key=lambda item: item[1])


def _name(node: ast.AST) -> str:
    """``loss``, ``self.optimizer``, ``transformers.Trainer``; ``...`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{_name(node.func)}()"
    return "..."


def detect(root: Path, exclude: tuple[str, ...] = ()) -> CodeFacts:
    """Read the project's Python files once for models and training code (see the module
    docstring); at most :data:`MAX_PLACES` training places per scope are kept."""
    from gpuport.knowledge.models import resolve_model
    from gpuport.scan.project.files import Candidate, read_text, walk
    from gpuport.scan.project.scopes import scope_of
    from gpuport.scan.rules import FileKind

    facts = CodeFacts()
    seen_ids: dict[str, str | None] = {}
    kept: dict[str, int] = {}
    for item in walk(root, exclude=exclude):
        if not isinstance(item, Candidate) or item.kind is not FileKind.PYTHON:
            continue
        text = read_text(item.path)
        if not isinstance(text, str):
            continue
        scope = scope_of(item.rel).value
        tree: ast.AST | None = None

        def key_of(literal: str) -> str | None:
            if literal not in seen_ids:
                try:
                    seen_ids[literal] = resolve_model(literal).key
                except GpuportError:
                    seen_ids[literal] = None
            return seen_ids[literal]

        mains: list[tuple[int, int]] = []
        if any(key_of(m.group(1)) for m in _HF_ID.finditer(text)):  # parse only then
            tree = _parse(text)
            mains = _main_blocks(tree) if tree is not None else []
            for literal, no in _model_literals(tree) if tree is not None else []:
                key = key_of(literal)
                if key is not None:
                    facts.models.append((key, _place(repr(literal), item.rel, no, scope, mains)))
        if kept.get(scope, 0) >= MAX_PLACES or not _TRAINING_WORDS.search(text):
            continue
        if tree is None:
            tree = _parse(text)
            mains = _main_blocks(tree) if tree is not None else []
        if tree is None:
            continue  # the scan reports a file Python cannot parse
        for what, no in _training_calls(tree):
            found = _place(what, item.rel, no, scope, mains)
            if kept.get(found.scope, 0) < MAX_PLACES:
                facts.training.append(found)
                kept[found.scope] = kept.get(found.scope, 0) + 1
    return facts


__all__ = ["CodeFacts", "Place", "detect"]
