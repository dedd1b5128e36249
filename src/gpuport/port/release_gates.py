"""Gates of a CUDA release job that the ROCm release workflow (:mod:`gpuport.port.fix_release`)
would not keep: a step that may fail the job from what triggered it, which the ROCm job,
whose steps are its own, does not run: a text of the job (or the workflow's ``env:``)
reading the GitHub context (``github.ref``, ``$GITHUB_REF_TYPE``, ``inputs.``), a shell
line asking git which branch or tag HEAD is (``git describe``, ``--points-at``...), a
script action (``actions/github-script``). Each declines the ROCm workflow with the reason
(forty-second re-run F7). The project files the job runs are read the same way (forty-third
re-run F1): a script a step names and those it names, a local action (its ``action.yml``),
and now a make target's recipe (and its prerequisites' and the variables they read), a
``python -m`` module, a bare-named script (``sh check_release``) and a local action nested
in another (forty-fourth re-run F1, F2); one gpuport cannot read exactly declines. Each
step is resolved from its own working directory and the root only, each folder listed once:
linear time (forty-fourth re-run F3: every token against every ``working-directory:``).
Each file is read once per run, a Makefile's self-include cut (forty-fifth re-run F14); a
bare-named file is followed at any depth with its interpreter's options read (``bash -e``,
``.``, ``pwsh -File``: F5, F6, F17); a task runner (``npm run``, ``tox -e``) declines (F8);
any git command printing HEAD's refs (``git log --format=%D``) is a gate (F7). A program
run by a bare name that is a project file in a folder the job puts on PATH (``$GITHUB_PATH``,
``PATH=...``) or in the working folder is followed too (forty-sixth re-run F12).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

import yaml

from gpuport import textre
from gpuport.port.release_runs import (
    AT,
    Makefile,
    bare_runs,
    git_refs,
    make_words,
    parse_makefile,
    recipes,
    runners,
)
from gpuport.yamlnodes import MERGE_TAG, nodes

__all__ = [
    "CONTEXT",
    "QUOTED_EXPR",
    "Lister",
    "Reader",
    "plain_keys",
    "step_gates",
    "workflow_workdirs",
]

#: the text of a project file by its relative path, or None (missing, not a file, too large)
Reader = Callable[[str], "str | None"]
#: the names in a project folder by its relative path (none: not a folder of the project)
Lister = Callable[[str], "list[str]"]

QUOTED_EXPR = textre.compile(r"'(?:[^']|'')*'")
CONTEXT = textre.compile(r"(?:^|[^\w.-])([A-Za-z_][\w-]*)\s*[.\[]")


def plain_keys(node: yaml.MappingNode) -> dict[str, yaml.Node] | None:
    """A mapping's plain keys and values, or None when a key is repeated, merged or not a
    scalar (which of two GitHub reads is not certain)."""
    out: dict[str, yaml.Node] = {}
    for k, v in node.value:
        if not isinstance(k, yaml.ScalarNode) or k.tag == MERGE_TAG or str(k.value) in out:
            return None
        out[str(k.value)] = v
    return out


#: text reading the trigger (ref, event, dispatch input, variable; a script action's
#: ``context.ref`` / ``context.eventName`` / ``context.payload``) or whether HEAD is tagged
_TRIGGER = textre.compile(
    r"\bgithub\s*(?:\.\s*(?:ref|event|head_ref|base_ref)|\[)|\btojson\s*\(\s*github\b"
    r"|github_(?:ref|event|head_ref|base_ref)|\b(?:inputs|vars)\s*\.|--points-at"
    r"|\bdescribe\b.*--exact|\bcontext\s*(?:\.\s*(?:ref|eventName|payload|sha)\b|\[)",
    re.I,
)


def _gate(text: str) -> tuple[int, str] | None:
    """Where a text reads the trigger or asks git which branch or tag HEAD is on."""
    m = _TRIGGER.search(text)
    return (m.start(), m.group(0)) if m is not None else git_refs(text)


#: actions that run a script given in the workflow, which can read the trigger and fail
_SCRIPT_ACTIONS = ("actions/github-script",)


def _release_step(uses: yaml.Node | None) -> bool:
    return isinstance(uses, yaml.ScalarNode) and str(uses.value).startswith(
        "softprops/action-gh-release"
    )


def step_gates(
    job: yaml.MappingNode,
    steps: list[yaml.Node],
    env: yaml.Node | None,
    what: str,
    read: Reader | None = None,
    keep: str = "",
    listdir: Lister | None = None,
    workdirs: tuple[str, ...] = (),
) -> str | None:
    """Why a step of a job that builds or releases may gate the release where the ROCm job,
    whose steps are its own, would not (forty-first re-run F1: ``run: test
    "$GITHUB_REF_TYPE" = tag`` failed the CUDA job off tags): a step ``if:`` reading more
    than the runner, a script action, or a text of the job or of the workflow's ``env:``
    reading the trigger or asking git for HEAD's branch or tag (forty-second re-run F7; the
    release step's ``if:`` and inputs, copied or not gates, and names are not read), also in
    the project scripts and local actions the job runs, read through ``read`` (forty-third
    re-run F1; a file named in ``keep``, the build command the ROCm job copies, is not).
    A step's texts are resolved from its own ``working-directory:`` (or the job's and
    workflow's default, ``workdirs``) and the root only (forty-fourth re-run F3)."""
    copied: set[int] = set()
    actions: set[int] = set()  # ``uses:`` values: read as actions, not as paths
    follow = _Follow(read or (lambda _rel: None), keep, listdir)
    for node in nodes(job):
        if isinstance(node, yaml.ScalarNode):
            follow.add_path(str(node.value), list(workdirs))
    for step in steps:
        keys = plain_keys(step) if isinstance(step, yaml.MappingNode) else None
        if keys is None:
            return f"a step of {what} has repeated or merged keys"
        uses = keys.get("uses")
        if _release_step(uses):
            copied |= {id(n) for k in ("if", "with") if k in keys for n in nodes(keys[k])}
            continue
        if isinstance(uses, yaml.ScalarNode):
            actions.add(id(uses))
            if str(uses.value).startswith(_SCRIPT_ACTIONS):
                line = uses.start_mark.line + 1
                return (
                    f"a step of {what} runs a script (`{str(uses.value).split('@')[0]}`, line "
                    f"{line}) that may read the trigger and fail the job; the ROCm job does "
                    "not copy it"
                )
            if str(uses.value).startswith("./"):
                why = follow.action(str(uses.value))
                if why is not None:
                    return f"a step of {what} (line {uses.start_mark.line + 1}) {why}"
        if "if" in keys:
            cond = keys["if"]
            text = str(cond.value) if isinstance(cond, yaml.ScalarNode) else ""
            contexts = {m.group(1) for m in CONTEXT.finditer(QUOTED_EXPR.sub("''", text))}
            if not text or contexts - {"runner"}:
                line = cond.start_mark.line + 1
                return f"a step of {what} has an `if:` gate (line {line}), not copied"
    defaults = [*_workdir((plain_keys(job) or {}).get("defaults")), *workdirs, ""]
    bases = _step_bases(steps, defaults)
    for node in [*nodes(job), *(nodes(env) if env is not None else [])]:
        if isinstance(node, yaml.MappingNode):
            copied |= {id(v) for k, v in node.value if getattr(k, "value", None) == "name"}
        elif isinstance(node, yaml.ScalarNode) and id(node) not in copied:
            text = str(node.value)
            g = _gate(text)
            if g is not None:
                return (
                    f"{what} reads `{g[1]}` (line {node.start_mark.line + 1}), which may "
                    "gate its release; the ROCm job does not copy it"
                )
            where = bases.get(id(node), defaults)
            why = None if id(node) in actions else follow.text(text, where)
            if why is not None:
                return f"{what} (line {node.start_mark.line + 1}) {why}"
    return None


def _workdir(defaults: yaml.Node | None) -> list[str]:
    """A ``defaults: run: working-directory:`` value (of a job or a workflow), or none."""
    run = (
        (plain_keys(defaults) or {}).get("run") if isinstance(defaults, yaml.MappingNode) else None
    )
    wd = (
        (plain_keys(run) or {}).get("working-directory")
        if isinstance(run, yaml.MappingNode)
        else None
    )
    return [str(wd.value)] if isinstance(wd, yaml.ScalarNode) else []


def workflow_workdirs(root: yaml.MappingNode) -> tuple[str, ...]:
    """The workflow's default ``working-directory:`` (``defaults: run:``), if any."""
    return tuple(_workdir((plain_keys(root) or {}).get("defaults")))


def _step_bases(steps: list[yaml.Node], defaults: list[str]) -> dict[int, list[str]]:
    """The folders each step's texts are resolved from: the root, the defaults and the
    step's own ``working-directory:``; each node once (an alias keeps its first step's),
    so the work is linear in the job, not steps x working-directories (forty-fourth re-run
    F3: a 158 KB workflow of 160 steps took 42 s)."""
    out: dict[int, list[str]] = {}
    for step in steps:
        keys = plain_keys(step) if isinstance(step, yaml.MappingNode) else None
        wd = (keys or {}).get("working-directory")
        own = [str(wd.value), *defaults] if isinstance(wd, yaml.ScalarNode) else defaults
        todo: list[yaml.Node] = [step]
        while todo:
            node = todo.pop()
            if id(node) in out:
                continue
            out[id(node)] = own
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    todo += (k, v)
            elif isinstance(node, yaml.SequenceNode):
                todo += node.value
    return out


#: a path a text names: a run line's script, an action's ``main:``, a script's own call
_PATH = textre.compile(r"[\w./-]*/[\w./-]*[\w-]|[\w.-]+\.\w+")
#: suffixes of files that are run: one of these gpuport cannot read may gate unseen
_RUN_SUFFIXES = (".sh", ".bash", ".zsh", ".ps1", ".py", ".pl", ".rb", ".js", ".mjs", ".cjs")
#: at most this many project files are read behind one job, and paths read in one text
_FILES = 64
_TOKENS = 2000
_AT = AT
#: a make run (``make check``, ``$(MAKE) -C sub all``): the words up to the command's end
_MAKE = textre.compile(
    r"(?m)" + _AT + r"(?:g?make|\$[({]MAKE[)}])"
    r"((?:[ \t]+(?:\$\([^)\n]*\)|[^\s;&|)`#'\"])+)*)[ \t]*(?:$|[;&|)`#'\"])"
)
#: make run from a list of arguments (a Python or JS script), which gpuport does not read
_MAKE_LIST = textre.compile(r"['\"]g?make['\"]\s*,")
#: a Python module run (``python -m pkg.mod``, ``[sys.executable, "-m", "pkg.mod"]``)
_MODULE = textre.compile(
    r"\bpy(?:thon[\d.]*)?(?:[ \t]+-[A-Za-z]\w*)*[ \t]+-m[ \t]*([A-Za-z_][\w.]*)"
    r"|['\"]-m['\"]\s*,\s*['\"]([A-Za-z_][\w.]*)['\"]"
)
#: a local action a text runs (a composite action's step)
_LOCAL_USES = textre.compile(r"(?m)\buses\s*:\s*['\"]?(\./[^\s'\"#]*)")
_SCRIPT_USES = textre.compile(r"\buses\s*:\s*['\"]?actions/github-script\b")
_DOCKER = textre.compile(r"\busing\s*:\s*['\"]?docker", re.I)
#: a command word (a program run by name: through PATH or from the working folder)
_COMMAND = textre.compile(r"(?m)" + _AT + r"([A-Za-z_][\w.+-]*)")
#: a line that puts folders on PATH (``echo "$PWD/scripts" >> "$GITHUB_PATH"``,
#: ``PATH="$PWD/scripts:$PATH"``) and the project root's spellings in it
_PATH_LINE = textre.compile(r"(?m)^[^\n]*(?:GITHUB_PATH|\bPATH[ \t]*\+?=)[^\n]*")
_ROOT = textre.compile(
    r"\$\{\{\s*github\.workspace\s*\}\}|\$\{?(?:PWD|GITHUB_WORKSPACE)\}?|\$\(pwd\)|`pwd`"
    r"|\$\{?\{?\s*env\.GITHUB_WORKSPACE\s*\}?\}"
)
_SPLIT = textre.compile(r"[\s:;=\"'>|()]+")


def _paths(text: str) -> list[str]:
    """The project-relative paths a text names, each once as written (``./scripts/x.sh``,
    ``${{ github.action_path }}/x.sh``), absolute ones and URLs left out."""
    out: dict[str, None] = {}
    for m in _PATH.finditer(text):
        t = m.group(0)
        if t.startswith("/"):
            before = text[max(0, m.start() - 2) : m.start()]
            if not before.endswith(("}", ")")) or t.startswith("//"):
                continue  # an absolute path or a URL, not the project's
            t = t[1:]
        out[t] = None
    return list(out)


def _modules(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1) or m.group(2) for m in _MODULE.finditer(text)))


def _make_runs(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1).strip() for m in _MAKE.finditer(text)))


class _Follow:
    """The project files a job runs, read once each: whether any may gate the release."""

    def __init__(self, read: Reader, keep: str, listdir: Lister | None = None) -> None:
        self.read = read
        self.listdir = listdir
        self.keep = {*_paths(keep), *(f"-m {m}" for m in _modules(keep))}
        self.keep |= {f"make {w}" for w in _make_runs(keep)}
        self.keep |= {f"runner {w}" for w in runners(keep)}
        self.seen: set[str] = set()
        self._names: dict[str, frozenset[str]] = {}
        self._texts: dict[str, str | None] = {}
        self._mk: dict[str, Makefile | None] = {}
        self.path_dirs: dict[str, None] = {}  # project folders the job puts on PATH

    def add_path(self, text: str, bases: list[str]) -> None:
        """Record the project folders a text puts on PATH (forty-sixth re-run F12)."""
        for m in _PATH_LINE.finditer(text):
            line = _ROOT.sub("@", m.group(0))
            for w in _SPLIT.split(line):
                rel = w[1:].lstrip("/") if w.startswith("@") else w
                if not rel or "$" in rel or "@" in rel or rel.startswith(("/", "-", "~")):
                    if w == "@":
                        self.path_dirs[""] = None
                    continue
                for base in [*bases, ""][:4]:
                    d = posixpath.normpath(posixpath.join(base, rel))
                    if d.startswith(".."):
                        continue
                    d = "" if d == "." else d
                    if self.listdir is not None and self._listed(d):
                        self.path_dirs[d] = None

    def _listed(self, folder: str) -> bool:
        """Whether ``folder`` is a project folder with names in it (listed once)."""
        if folder not in self._names:
            if len(self._names) > 4096 or self.listdir is None:
                return False
            self._names[folder] = frozenset(self.listdir(folder))
        return bool(self._names[folder])

    def _has(self, rel: str) -> bool:
        """Whether the project has a file or folder ``rel``: each folder listed once, so a
        missing name costs no read (forty-fourth re-run F3)."""
        if self.listdir is None:
            return True
        parent, name = posixpath.split(rel)
        names = self._names.get(parent)
        if names is None and len(self._names) > 4096:
            return True  # past the bound on listings: the file is read (one syscall)
        if names is None:
            names = self._names[parent] = frozenset(self.listdir(parent))
        return name in names

    def _file(self, rel: str) -> str | None:
        """A project file's text, read once per run (forty-fifth re-run F14)."""
        if rel not in self._texts:
            self._texts[rel] = self.read(rel) if self._has(rel) else None
        return self._texts[rel]

    def _resolve(self, token: str, bases: list[str]) -> tuple[str, str] | None:
        for base in dict.fromkeys(bases):
            rel = posixpath.normpath(posixpath.join(base, token))
            if rel.startswith(("..", "/")) or rel in (".", ""):
                continue
            text = self._file(rel)
            if text is not None:
                return rel, text
        return None

    def _body(
        self, rel: str, body: str, bases: list[str], depth: int, how: str, key: str = ""
    ) -> str | None:
        """Why a project file (read as ``rel``; ``body`` what of it is run) may gate."""
        if (key or rel) in self.seen:
            return None
        self.seen.add(key or rel)
        if len(self.seen) > _FILES or depth > 8:
            return "runs more project files than gpuport follows; the ROCm job copies none"
        g = _gate(body)
        if g is not None:
            line = "" if key else f" (line {textre.line_finder(body)(g[0])})"
            return (
                f"runs {how}, which reads `{g[1]}`{line} and may gate its "
                "release; the ROCm job does not copy it"
            )
        return self.text(body, [posixpath.dirname(rel), *bases], depth + 2)

    def text(self, text: str, bases: list[str], depth: int = 0) -> str | None:
        """Why a file the text runs may gate the release (it reads the trigger or asks git
        for HEAD's branch or tag; a script the workflow or an action names that gpuport
        cannot read may too), or None. Also followed: a make target's recipe, a ``python
        -m`` module, an interpreter's bare-named file, a nested local action (forty-fourth
        re-run F1, F2); one gpuport cannot read exactly declines."""
        tokens = _paths(text)
        if len(tokens) > _TOKENS:
            return "names more paths than gpuport follows; the ROCm job does not copy them"
        for token in tokens:
            if token in self.keep:
                continue
            found = self._resolve(token, bases)
            if found is None:
                if depth <= 1 and token.lower().endswith(_RUN_SUFFIXES):
                    return (
                        f"runs `{token}`, which gpuport cannot read in the project and which may "
                        "gate its release; the ROCm job does not copy it"
                    )
                continue
            rel, body = found
            why = self._body(rel, body, bases, depth, f"`{rel}`")
            if why is not None:
                return why
        for m in _LOCAL_USES.finditer(text):
            why = self.action(m.group(1))
            if why is not None:
                return why
        if _SCRIPT_USES.search(text):  # a script action in a composite action
            return "runs a script action (`actions/github-script`), which may fail the job"
        return self._programs(text, bases, depth)

    def _programs(self, text: str, bases: list[str], depth: int) -> str | None:
        """Make targets, ``python -m`` modules and bare-named scripts the text runs."""
        if "\\\n" in text:
            text = text.replace("\\\r\n", " ").replace("\\\n", " ")
        m = _MAKE_LIST.search(text)
        if m is not None:
            return f"runs make (`{m.group(0)}`) in a form gpuport does not read; not copied"
        for words in _make_runs(text):
            if f"make {words}" not in self.keep:
                why = self._make(words, bases, depth)
                if why is not None:
                    return why
        for mod in _modules(text):
            if f"-m {mod}" not in self.keep:
                why = self._module(mod, bases, depth)
                if why is not None:
                    return why
        for cmd in runners(text):
            if f"runner {cmd}" not in self.keep:
                return (
                    f"runs `{cmd}`, a task runner whose task gpuport does not read and which "
                    "may gate its release; the ROCm job does not copy it"
                )
        why = self._commands(text, bases, depth)
        if why is not None:
            return why
        for cmd, kind, name in bare_runs(text):  # at any depth (forty-fifth re-run F6)
            found = None if name is None else self._resolve(name, bases)
            if found is None and name is not None and kind == "source":
                continue  # ``source activate``: a name sourced from PATH
            if found is None:
                return f"runs `{cmd}`, a file{_CANT}"
            why = self._body(found[0], found[1], bases, depth, f"`{found[0]}`")
            if why is not None:
                return why
        return None

    def _commands(self, text: str, bases: list[str], depth: int) -> str | None:
        """Programs run by a bare name that is a project file in a folder the job puts on
        PATH or in the working folder (``check_tag`` after ``echo "$PWD/scripts" >>
        "$GITHUB_PATH"``): followed (forty-sixth re-run F12)."""
        self.add_path(text, bases)
        dirs = [*self.path_dirs, *bases[:1]]
        for m in _COMMAND.finditer(text):
            name = m.group(1)
            found = self._resolve(name, dirs)
            if found is not None:
                why = self._body(found[0], found[1], bases, depth, f"`{found[0]}` (`{name}`)")
                if why is not None:
                    return why
        return None

    def _module(self, mod: str, bases: list[str], depth: int) -> str | None:
        """A ``python -m`` module: its file followed when the project has it; a module of a
        package the project holds that gpuport cannot read declines."""
        path = mod.replace(".", "/")
        roots = [*bases, *(posixpath.join(b, "src") for b in bases)]
        for rel in (f"{path}.py", f"{path}/__main__.py"):
            found = self._resolve(rel, roots)
            if found is not None:
                return self._body(
                    found[0], found[1], bases, depth, f"`python -m {mod}` (`{found[0]}`)"
                )
        top = path.split("/")[0]
        if self._resolve(f"{top}/__init__.py", roots) is not None:
            return (
                f"runs `python -m {mod}`, a module of the project gpuport cannot read "
                "and which may gate its release; the ROCm job does not copy it"
            )
        return None

    def _make(self, words: str, bases: list[str], depth: int) -> str | None:
        """A make run: the recipes of its targets (and of their prerequisites) in the
        Makefile, followed; a run or a Makefile gpuport cannot read exactly declines."""
        cant = f"runs `{f'make {words}'.strip()}`{_CANT}"
        run = make_words(words)
        if run is None:
            return cant
        folder, files, targets = run
        for base in dict.fromkeys(bases):
            here = posixpath.normpath(posixpath.join(base, folder))
            for name in files or ["GNUmakefile", "makefile", "Makefile"]:
                rel = posixpath.normpath(posixpath.join(here, name))
                text = None if rel.startswith(("..", "/")) else self._file(rel)
                if text is None:
                    continue
                if f"{rel}:{words}" in self.seen:
                    return None  # the key is counted in ``seen``: at most _FILES walks
                if rel not in self._mk:
                    where = "" if here == "." else here
                    self._mk[rel] = parse_makefile(rel, text, where, self._file)
                body = recipes(self._mk[rel], targets)
                if body is None:
                    return cant
                how = f"`{f'make {words}'.strip()}` (`{rel}`)"
                return self._body(rel, body, [here], depth, how, f"{rel}:{words}")
        return cant if depth <= 1 or files else None

    def action(self, uses: str) -> str | None:
        """Why a local action (``uses: ./.github/actions/x``) may gate the release; one
        inside it (a composite step) is followed too (forty-fourth re-run F2)."""
        folder = posixpath.normpath(uses.split("@")[0])
        if folder.startswith(("..", "/")) or folder == ".":
            return f"runs the local action `{uses}`, which gpuport cannot read"
        for name in ("action.yml", "action.yaml"):
            rel = posixpath.join(folder, name)
            text = self._file(rel)
            if text is None:
                continue
            if rel in self.seen:
                return None
            if _DOCKER.search(text):
                return f"runs the local Docker action `{folder}`, which gpuport does not follow"
            self.seen.add(rel)
            if len(self.seen) > _FILES:
                return "runs more project files than gpuport follows; the ROCm job copies none"
            g = _gate(text)
            if g is not None:
                return (
                    f"runs the local action `{folder}`, which reads `{g[1]}` and may gate "
                    "its release; the ROCm job does not copy it"
                )
            why = self.text(text, [folder, ""], 1)  # each action.yml once: bounded
            return None if why is None else f"runs the local action `{folder}`, which {why}"
        return f"runs the local action `{folder}`, which gpuport cannot read"


_CANT = ", which gpuport cannot read exactly and which may gate its release; not copied"
