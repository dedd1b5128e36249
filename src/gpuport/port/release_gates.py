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
every tag push where the CUDA job never did).
"""

from __future__ import annotations

import re

import yaml

from gpuport import textre
from gpuport.yamlnodes import MERGE_TAG, nodes

__all__ = ["CONTEXT", "QUOTED_EXPR", "SAME_CONTEXTS", "job_gate", "plain_keys", "step_gates"]

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
)
#: actions that run a script given in the workflow, which can read the trigger and fail
_SCRIPT_ACTIONS = ("actions/github-script",)


def _release_step(uses: yaml.Node | None) -> bool:
    return isinstance(uses, yaml.ScalarNode) and str(uses.value).startswith(
        "softprops/action-gh-release"
    )


def step_gates(
    job: yaml.MappingNode, steps: list[yaml.Node], env: yaml.Node | None, what: str
) -> str | None:
    """Why a step of a job that builds or releases may gate the release where the ROCm job,
    whose steps are its own, would not (forty-first re-run F1: ``run: test
    "$GITHUB_REF_TYPE" = tag`` failed the CUDA job off tags): a step ``if:`` reading more
    than the runner, a script action, or a text of the job or of the workflow's ``env:``
    reading the trigger or asking git for HEAD's branch or tag (forty-second re-run F7; the
    release step's ``if:`` and inputs, copied or not gates, and names are not read)."""
    copied: set[int] = set()
    for step in steps:
        keys = plain_keys(step) if isinstance(step, yaml.MappingNode) else None
        if keys is None:
            return f"a step of {what} has repeated or merged keys"
        uses = keys.get("uses")
        if _release_step(uses):
            copied |= {id(n) for k in ("if", "with") if k in keys for n in nodes(keys[k])}
            continue
        if isinstance(uses, yaml.ScalarNode) and str(uses.value).startswith(_SCRIPT_ACTIONS):
            line = uses.start_mark.line + 1
            return (
                f"a step of {what} runs a script (`{str(uses.value).split('@')[0]}`, line "
                f"{line}) that may read the trigger and fail the job; the ROCm job does not "
                "copy it"
            )
        if "if" in keys:
            cond = keys["if"]
            text = str(cond.value) if isinstance(cond, yaml.ScalarNode) else ""
            contexts = {m.group(1) for m in CONTEXT.finditer(QUOTED_EXPR.sub("''", text))}
            if not text or contexts - {"runner"}:
                line = cond.start_mark.line + 1
                return f"a step of {what} has an `if:` gate (line {line}), not copied"
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
    return None
