"""Gates of a CUDA release job that the ROCm release workflow (:mod:`gpuport.port.fix_release`)
would not keep: the job's own ``if:`` / ``environment:`` / ``needs:``, a step ``if:``, and a
step that may fail the job from what triggered it, which the ROCm job, whose steps are its
own, does not run.

A step reads the trigger when any text of the job (or of the workflow's ``env:``) reads the
GitHub context (``github.ref``, ``$GITHUB_REF_TYPE``, ``inputs.``, ``vars.``), when a shell
line asks git which branch or tag HEAD is (``git branch --show-current``, ``git describe``,
``git rev-parse --abbrev-ref``, ``--points-at``...), or when a step runs a script action
(``actions/github-script``: its ``context`` is the trigger, its ``core.setFailed`` fails the
job). Each declines the ROCm workflow with the reason (forty-second re-run F7: a
``git branch --show-current`` or ``context.ref`` gate was dropped, so the copy published on
every tag push where the CUDA job never did). The project files the job runs are read the
same way: a script a step names (``./scripts/check_release.sh``, ``python tools/x.py``, and
the scripts those name), a local action (``uses: ./.github/actions/x``: its ``action.yml``
and the files it runs); one gpuport cannot read declines too (forty-third re-run F1: a
``git describe --exact-match`` in such a script was dropped, so the copy published from any
dispatched branch).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

import yaml

from gpuport import textre
from gpuport.yamlnodes import MERGE_TAG, nodes

__all__ = [
    "CONTEXT",
    "QUOTED_EXPR",
    "SAME_CONTEXTS",
    "Reader",
    "job_gate",
    "plain_keys",
    "step_gates",
]

#: the text of a project file by its relative path, or None (missing, not a file, too large)
Reader = Callable[[str], "str | None"]

#: a context an ``if:`` expression reads that the ROCm workflow has as the CUDA one does:
#: the event, the ``on:`` block's inputs (copied), the repository's variables and secrets
SAME_CONTEXTS = frozenset({"github", "inputs", "vars", "secrets"})
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


def job_gate(job: yaml.MappingNode, what: str) -> str | None:
    """Why a job's gates are not carried into the ROCm job: its ``if:`` or its deployment
    ``environment:`` (reviewers, secrets), which the ROCm job does not have."""
    keys = plain_keys(job)
    if keys is None:
        return f"{what}'s keys are repeated or merged"
    if "if" in keys:
        return f"{what} has an `if:` gate, which the ROCm job does not copy"
    if "environment" in keys:
        return f"{what} runs in a deployment environment, which the ROCm job does not copy"
    if "needs" in keys:  # a skipped or failed need skips the job (forty-first re-run F1)
        return f"{what} `needs:` another job, whose gates the ROCm job does not copy"
    return None


#: text reading the trigger (ref, event, dispatch input, variable; a script action's
#: ``context.ref`` / ``context.eventName`` / ``context.payload``) or whether HEAD is tagged
_TRIGGER = textre.compile(
    r"\bgithub\s*(?:\.\s*(?:ref|event|head_ref|base_ref)|\[)|\btojson\s*\(\s*github\b"
    r"|github_(?:ref|event|head_ref|base_ref)|\b(?:inputs|vars)\s*\.|--points-at"
    r"|\bdescribe\b.*--exact|\bcontext\s*(?:\.\s*(?:ref|eventName|payload|sha)\b|\[)",
    re.I,
)
#: a git command that names or tests the branch or tag HEAD is on (what a tag push, a branch
#: push and a dispatch differ in): the branch, tag, describe and ref-listing commands, and
#: rev-parse's symbolic names; git's global options (``-C dir``, ``--no-pager``) may come first
_GIT_REFS = textre.compile(
    r"\bgit(?:\s+(?:-[Cc]\s+\S+|--[\w-]+(?:=\S+)?))*\s+"
    r"(?:branch|tag|describe|symbolic-ref|name-rev|show-ref|for-each-ref|merge-base|ls-remote)\b"
    r"|\bgit\b[^\n;|&]*\brev-parse\b[^\n;|&]*--(?:abbrev-ref|symbolic)"
    r"|\bgit['\"]\s*,\s*['\"](?:branch|tag|describe|symbolic-ref|name-rev|show-ref)['\"]"
)
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
) -> str | None:
    """Why a step of a job that builds or releases may gate the release where the ROCm job,
    whose steps are its own, would not (forty-first re-run F1: ``run: test
    "$GITHUB_REF_TYPE" = tag`` failed the CUDA job off tags): a step ``if:`` reading more
    than the runner, a script action, or a text of the job or of the workflow's ``env:``
    reading the trigger or asking git for HEAD's branch or tag (forty-second re-run F7; the
    release step's ``if:`` and inputs, copied or not gates, and names are not read), also in
    the project scripts and local actions the job runs, read through ``read`` (forty-third
    re-run F1; a file named in ``keep``, the build command the ROCm job copies, is not)."""
    copied: set[int] = set()
    actions: set[int] = set()  # ``uses:`` values: read as actions, not as paths
    follow = _Follow(read or (lambda _rel: None), set(_paths(keep)))
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
    where = [""]
    for node in nodes(job):
        if isinstance(node, yaml.MappingNode):
            where += [
                str(v.value)
                for k, v in node.value
                if getattr(k, "value", None) == "working-directory"
                and isinstance(v, yaml.ScalarNode)
            ]
    for node in [*nodes(job), *(nodes(env) if env is not None else [])]:
        if isinstance(node, yaml.MappingNode):
            copied |= {id(v) for k, v in node.value if getattr(k, "value", None) == "name"}
        elif isinstance(node, yaml.ScalarNode) and id(node) not in copied:
            text = str(node.value)
            m = _TRIGGER.search(text) or _GIT_REFS.search(text)
            if m is not None:
                return (
                    f"{what} reads `{m.group(0)}` (line {node.start_mark.line + 1}), which may "
                    "gate its release; the ROCm job does not copy it"
                )
            why = None if id(node) in actions else follow.text(text, where)
            if why is not None:
                return f"{what} (line {node.start_mark.line + 1}) {why}"
    return None


#: a path a text names: a run line's script, an action's ``main:``, a script's own call
_PATH = textre.compile(r"[\w./-]*/[\w./-]*[\w-]|[\w.-]+\.\w+")
#: suffixes of files that are run: one of these gpuport cannot read may gate unseen
_RUN_SUFFIXES = (".sh", ".bash", ".zsh", ".ps1", ".py", ".pl", ".rb", ".js", ".mjs", ".cjs")
#: at most this many project files are read behind one job, and paths read in one text
_FILES = 64
_TOKENS = 2000


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


class _Follow:
    """The project files a job runs, read once each: whether any may gate the release."""

    def __init__(self, read: Reader, keep: set[str]) -> None:
        self.read = read
        self.keep = keep
        self.seen: set[str] = set()

    def _resolve(self, token: str, bases: list[str]) -> tuple[str, str] | None:
        for base in bases:
            rel = posixpath.normpath(posixpath.join(base, token))
            if rel.startswith(("..", "/")) or rel in (".", ""):
                continue
            text = self.read(rel)
            if text is not None:
                return rel, text
        return None

    def text(self, text: str, bases: list[str], depth: int = 0) -> str | None:
        """Why a file the text runs may gate the release (it reads the trigger or asks git
        for HEAD's branch or tag; a script the workflow or an action names that gpuport
        cannot read may too), or None."""
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
            if rel in self.seen:
                continue
            self.seen.add(rel)
            if len(self.seen) > _FILES or depth > 8:
                return "runs more project files than gpuport follows; the ROCm job copies none"
            m = _TRIGGER.search(body) or _GIT_REFS.search(body)
            if m is not None:
                line = textre.line_finder(body)(m.start())
                return (
                    f"runs `{rel}`, which reads `{m.group(0)}` (line {line}) and may gate its "
                    "release; the ROCm job does not copy it"
                )
            why = self.text(body, [posixpath.dirname(rel), *bases], depth + 2)
            if why is not None:
                return why
        return None

    def action(self, uses: str) -> str | None:
        """Why a local action (``uses: ./.github/actions/x``) may gate the release."""
        folder = posixpath.normpath(uses.split("@")[0])
        for name in ("action.yml", "action.yaml"):
            rel = posixpath.join(folder, name)
            text = self.read(rel)
            if text is None:
                continue
            if _DOCKER.search(text):
                return f"runs the local Docker action `{folder}`, which gpuport does not follow"
            self.seen.add(rel)
            m = _TRIGGER.search(text) or _GIT_REFS.search(text)
            if m is not None:
                return (
                    f"runs the local action `{folder}`, which reads `{m.group(0)}` and may gate "
                    "its release; the ROCm job does not copy it"
                )
            why = self.text(text, [folder, ""], 1)
            return None if why is None else f"runs the local action `{folder}`, which {why}"
        return f"runs the local action `{folder}`, which gpuport cannot read"


_DOCKER = textre.compile(r"\busing\s*:\s*['\"]?docker", re.I)
