"""What the project view reads after the rules, only where a finding makes it matter.

* Kernels refused on ROCm at run time (issue 24): :func:`read_refusals`.
* A GPU-monitoring dependency nothing imports (issue 24, twenty-third sample: FoundationPose's
  ``GPUtil==1.4.0`` in a kitchen-sink requirements.txt): a monitoring library (NVML readers,
  nvidia-smi wrappers: the knowledge base's category ``monitoring``) installs on an AMD host,
  and only its calls fail. When no Python file of the project names any of its import names,
  nothing calls it there, so its GP101/GP103 finding is lowered to info with that reason.
  That finding only: never another package's on its line, nor one other findings were folded
  into (forty-second re-run F1). Its command run by a script or CI step, or an import in
  Python not named ``*.py`` (Cython, notebooks, ``#!python`` tools), names it too
  (forty-second re-run F17); so does a command in the build and container files the
  scan reads itself (a Makefile recipe, a Dockerfile's ``RUN``/``CMD``, a compose
  ``command:``, a ``pyproject.toml`` task table) or a local GitHub action (forty-third re-run
  F13: all were "run by no script"); when such a file cannot be read, nothing is lowered.
  Forty-fourth re-run F13: so does a command in a deployment or package config (a Kubernetes
  manifest's ``command:``/``args:``, ``supervisord.conf``'s ``command=``, ``package.json``'s
  ``scripts``, ``pixi.toml``'s ``[tasks]``: :func:`_config_commands`); a dependency list there
  still only lists it.
  Read only when such a finding exists; when the project has no Python file, a Python file
  could not be read, or Python files were not part of the scan (``--kind``), nothing is
  lowered.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from gpuport import textre
from gpuport.knowledge import PackageDB, PackageInfo
from gpuport.models import Severity
from gpuport.scan.finding import Finding
from gpuport.scan.project.files import Candidate, read_text
from gpuport.scan.project.refusals import may_refuse, refusals
from gpuport.scan.project.script_texts import project_scripts, without_install_lines
from gpuport.scan.project.view import ProjectView, monitor_key
from gpuport.scan.rules.base import FileKind

__all__ = ["read_after_rules", "read_refusals", "unimported_monitors"]

_REFUSAL_BYTES = 64_000
_DIST = textre.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?[ \t]*:")


def read_after_rules(
    view: ProjectView,
    findings: Sequence[Finding],
    max_bytes: int,
    candidates: Sequence[Candidate],
    packages: PackageDB,
    kinds: Collection[FileKind] | None,
) -> None:
    """Both reads; ``kinds``: the file kinds the scan was limited to (None: all)."""
    read_refusals(view, findings, max_bytes)
    if kinds is None or FileKind.PYTHON in kinds:
        view.unimported = unimported_monitors(findings, candidates, packages, max_bytes)


def read_refusals(view: ProjectView, findings: Sequence[Finding], max_bytes: int) -> None:
    """Kernels refused on ROCm at run time (issue 24), read after the rules and only where it
    can matter: Python files that build a JIT extension (GP211 marks every
    ``cpp_extension.load``) or hold a finding above info. Their refused sources join the
    files the ROCm build does not compile."""
    loads = {f.location.path for f in findings if f.rule_id == "GP211"}
    files = sorted(
        loads
        | {
            f.location.path
            for f in findings
            if f.location.path.endswith(".py") and f.severity is not Severity.INFO
        }
    )
    texts: dict[str, str] = {}
    for rel in files:
        got = read_text(view.root / rel, max_bytes, view.root)
        # a kernel wrapper is a small module; a very large one (a framework's utilities) is
        # read only when it builds a JIT extension itself: parsing it costs more than it says
        small = isinstance(got, str) and (rel in loads or len(got) <= _REFUSAL_BYTES)
        if small and isinstance(got, str) and may_refuse(got):
            texts[rel] = got
    if not texts:
        return
    view.refused = refusals(texts, set(view.native))
    if view.refused.not_built:
        view.build.refused(view.refused.not_built, view.native, view.resolved)


def unimported_monitors(
    findings: Sequence[Finding],
    candidates: Sequence[Candidate],
    packages: PackageDB,
    max_bytes: int,
) -> dict[tuple[str, int, str, str], str]:
    """Each GP101/GP103 finding above info on a monitoring package (:func:`monitor_key`) that
    no file of the project names -> the reason to lower it. Named: an import name in the
    project's Python (``*.py``, Cython, notebooks, ``#!python`` tools) or scripts, or its
    command (the distribution's name) in its scripts and CI, install lines left out."""
    wanted: dict[tuple[str, int, str, str], PackageInfo] = {}
    for f in findings:
        if f.rule_id not in ("GP101", "GP103") or f.severity is Severity.INFO:
            continue
        if f.message.endswith(" more on this line)"):
            continue  # other packages' findings folded into it: the reason is not theirs
        m = _DIST.match(f.message)
        pkg = packages.by_dist(m.group(1)) if m else None
        if pkg is None or pkg.category != "monitoring" or not pkg.imports:
            continue
        wanted[monitor_key(f)] = pkg
    if not wanted:
        return {}
    python = [c for c in candidates if c.kind is FileKind.PYTHON]
    if not python:
        return {}  # no code of the project's own to judge by (a manifest-only scan)
    scripts = project_scripts(python[0].root, candidates)
    if not scripts.complete:
        return {}  # a file gpuport could not read may call it
    names = {n.split(".", 1)[0] for p in wanted.values() for n in p.imports}
    commands = {c for p in wanted.values() for c in _commands(p)}
    word = textre.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
    # a command as a shell runs it: a word of its own (``--trace=cuda,nvtx`` runs no nvtx)
    command = textre.compile(
        r"(?m)(?:^|[\s;&|(`'\"])(" + "|".join(re.escape(n) for n in sorted(commands))
        + r")(?:$|[\s;&|)`'\"])"
    )  # fmt: skip
    named: set[str] = set()
    for c in python:
        text = read_text(c.path, max_bytes)
        if not isinstance(text, str):
            return {}  # a Python file gpuport could not read may import it
        named.update(word.findall(text))
    for text in scripts.python.values():
        named.update(word.findall(text))
    runs = [t for rel, t in scripts.config.items() if rel.startswith(_CI)]
    for rel, t in scripts.config.items():  # a config that names it: its commands (F13)
        if not rel.startswith(_CI) and (word.search(t) or command.search(t)):
            runs.append(_config_commands(rel, t))
    for c in candidates:  # the build and container files the scan reads: their commands
        if c.kind in _RUNS or c.kind is FileKind.PYPROJECT:
            text = read_text(c.path, max_bytes)
            if not isinstance(text, str):
                return {}  # a recipe gpuport could not read may run it
            runs.append(text if c.kind in _RUNS else _task_tables(text))
    for text in [*scripts.run.values(), *runs]:  # a CI step runs it; a config only lists it
        text = without_install_lines(text)
        named.update(word.findall(text))
        named.update(command.findall(text))
    out: dict[tuple[str, int, str, str], str] = {}
    for key, pkg in wanted.items():
        tops = {n.split(".", 1)[0] for n in pkg.imports}
        if not (tops | set(_commands(pkg))) & named:
            out[key] = (
                f"no Python file of the project names {' or '.join(sorted(tops))}, no script "
                "runs it: a "
                "monitoring library that installs on an AMD host and is never called there"
            )
    return out


#: files whose every line is a command or runs one (their install lines left out)
_RUNS = (FileKind.MAKEFILE, FileKind.DOCKERFILE, FileKind.COMPOSE)
#: a TOML table header; a task runner's tables (``[tool.poe.tasks]``, ``[tool.pdm.scripts]``,
#: ``[tool.hatch.envs.test.scripts]``, ``[tool.taskipy.tasks]``) hold commands, the others
#: list packages (a dependency list names the monitor without running it)
_TABLE = textre.compile(
    r"^[ \t]*\[\[?[ \t]*([A-Za-z0-9_-][\w.\-\" \t]*?)[ \t]*\]\]?[ \t]*(?:#[^\n]*)?$"
)
_TASK_TABLE = textre.compile(
    r"^tool\.(?:poe|taskipy)\b|\.(?:scripts|tasks)\b|^(?:tasks|scripts)\b"
)  # `[tasks]`, `[feature.gpu.tasks]`: pixi.toml
#: a config line's key (YAML ``command:``, ``- args:``, JSON ``"scripts":``, INI ``command=``)
_KEY = textre.compile(r"^([ \t]*)(?:-[ \t]+)?[\"']?([A-Za-z_][\w.-]*)[\"']?[ \t]*[:=]")
#: the ends of keys whose values are commands (``command``, ``postCreateCommand``, ``args``,
#: ``ExecStart``, ``before_script``, ``scripts``, ``entrypoint``, ``tasks``)
_COMMAND_KEYS = (
    "command", "commands", "cmd", "args", "arguments", "entrypoint", "exec", "execstart",
    "execstartpre", "script", "scripts", "run", "tasks", "shell",
)  # fmt: skip


def _config_commands(rel: str, text: str) -> str:
    """The commands a (non-CI) config file holds: the values of its command keys (with the
    lines nested under them: a YAML list, a JSON object, an INI continuation), or a TOML
    file's task tables. Its other lines (a dependency list) only name a package."""
    if rel.endswith(".toml"):
        return _task_tables(text)
    keep: list[str] = []
    under = -1  # the indent of the command key whose nested lines are kept; -1: none
    for line in text.splitlines():
        body = line.lstrip()
        indent = len(line) - len(body)
        if under >= 0 and not body:
            continue  # a blank line inside a YAML block
        if under >= 0 and (indent > under or (indent == under and body[0] in "-]}")):
            keep.append(line)
            continue
        under = -1
        key = _KEY.match(line)
        if key is not None and key.group(2).lower().endswith(_COMMAND_KEYS):
            keep.append(line)
            under = len(key.group(1))
    return "\n".join(keep)


def _task_tables(text: str) -> str:
    """The lines of a ``pyproject.toml``'s task-runner tables."""
    keep: list[str] = []
    on = False
    for line in text.splitlines():
        head = _TABLE.match(line)
        if head is not None:
            on = _TASK_TABLE.search(head.group(1)) is not None
        elif on:
            keep.append(line)
    return "\n".join(keep)


_CI = (".github/", ".gitlab-ci", ".circleci/", ".buildkite/", ".travis", ".devcontainer/",
       "azure-pipelines")  # fmt: skip


def _commands(pkg: PackageInfo) -> list[str]:
    """The command a monitoring distribution installs, as scripts run it: its name, lower
    case (``gpustat``, ``nvitop``)."""
    return sorted({pkg.name.lower(), pkg.name})
