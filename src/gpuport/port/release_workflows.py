"""Reading a project's GitHub release workflows for ``port``'s ROCm release family
(:mod:`gpuport.port.fix_release`): which workflow builds CUDA artefacts, with which CUDA
switch, and where its wheel index (PEP 503) lists them.

The workflows are YAML with PowerShell or bash inside, and what is read is what a person
would copy (the ``-DGGML_CUDA=on`` options, the Python versions of the matrix, the ``on:``
block, the release step's tag). The YAML is composed first (a workflow PyYAML does not read
is not a model) and every copied text is one both readings agree on (thirty-ninth re-run
F2, F18): the build command and the ``-D`` options come only from the lines of a ``run:``
step's shell text (never from a heredoc, a comment or the data of a quoted string: a run
text whose quoting gpuport cannot follow is declined with the reason), the ``on:`` and
``permissions:`` blocks only from the top-level mapping's own key, re-read alone to the same
nodes. A line whose first non-blank character is ``#`` is a comment and never evidence.
The gates of the jobs that build and release are read by :mod:`gpuport.port.release_gates`
(a step asking git for HEAD's branch or tag, or a script action reading ``context.ref``,
declines the ROCm workflow: forty-second re-run F7), also inside the project scripts and
local actions those jobs run (forty-third re-run F1), the make targets, ``python -m``
modules and nested local actions they run, each step from its own working directory
(forty-fourth re-run F1, F2, F3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from gpuport import textre
from gpuport.knowledge.release_switches import ReleaseSwitches
from gpuport.linebreaks import odd_line_break
from gpuport.port.release_gates import (
    CONTEXT,
    QUOTED_EXPR,
    Lister,
    Reader,
    plain_keys,
    step_gates,
    workflow_workdirs,
)
from gpuport.yamlnodes import nodes

__all__ = [
    "CU_SUFFIX",
    "CudaWorkflow",
    "compose_workflow",
    "cuda_evidence",
    "cuda_name",
    "index_lines",
    "link_lines",
    "linux_build",
    "read_workflow",
    "rocm_present",
    "run_texts",
    "shell_code",
]

#: a step that builds a wheel (what the ROCm workflow builds the same way)
_BUILDS = textre.compile(
    r"python3? -m build\b|\bpip3? wheel\b|\bcibuildwheel\b|setup\.py bdist_wheel|\buv build\b"
)
#: a ``-DNAME=value`` option (CMake's spelling: no space after -D)
_OPTION = textre.compile(r"-D([A-Za-z_][A-Za-z0-9_]*)=([^\s'\"`]*)")
_ON = frozenset({"on", "1", "true", "yes"})
#: option names with no meaning on a HIP build: the CUDA toolkit's
_CUDA_NAME = textre.compile(r"CUDA|CUBLAS|NVCC|CUDNN|NVIDIA", re.I)
#: CUDA evidence that is not a -D switch (for the report line of an unknown build)
_OTHER_CUDA = (
    ("a CUDA toolkit setup action", textre.compile(r"uses:\s*Jimver/cuda-toolkit")),
    ("an nvidia/cuda container", textre.compile(r"\bnvidia/cuda:")),
    ("a CUDA torch index", textre.compile(r"download\.pytorch\.org/whl/cu\d+")),
)
#: a ROCm build already there: a ROCm image, a HIP switch, ROCm's compiler
_ROCM = textre.compile(
    r"rocm/dev-ubuntu|rocm/pytorch|-D[A-Z_]*HIP(?:BLAS)?=(?:on|1|true|yes)\b|\bhipcc\b"
    r"|whl/rocm\d",
    re.I,
)
_VERSIONS = textre.compile(r"['\"](3\.\d{1,2})['\"]")
_PY_KEY = textre.compile(r"pyver|python-version|python_version|\bpython\b", re.I)
CU_SUFFIX = textre.compile(r"-cu(?:da)?(?:\$\{\{[^}]*\}\}|\d+(?:\.\d+)*)")


def _code(line: str) -> bool:
    s = line.strip()
    return bool(s) and not s.startswith("#")


@dataclass
class CudaWorkflow:
    """A workflow that builds CUDA wheels with a CMake switch (the ROCm workflow's model)."""

    path: str
    name: str
    #: (option, value, 1-based line) of each -D option on a line that sets CMAKE_ARGS
    options: list[tuple[str, str, int]] = field(default_factory=list)
    #: the CUDA switches turned on that the knowledge table knows (option, line)
    switches: list[tuple[str, int]] = field(default_factory=list)
    #: options turned on whose name says CUDA and that the table does not know
    unknown: list[tuple[str, int]] = field(default_factory=list)
    pythons: list[str] = field(default_factory=list)
    on_block: list[str] = field(default_factory=list)
    permissions: list[str] = field(default_factory=list)
    build: str = "python -m build --wheel"
    #: the release step: its ``if:`` line (or "") and its tag with the CUDA suffix, or None
    release_if: str = ""
    release_tag: str | None = None
    #: 1-based line of the first wheel build
    build_line: int = 0
    #: why no ROCm workflow is modelled on this one (a text gpuport cannot read as the shell
    #: or YAML does), or "" (thirty-ninth re-run F2)
    refused: str = ""


def rocm_present(text: str) -> bool:
    """Whether a workflow already builds for ROCm (a ROCm image, a HIP switch, hipcc)."""
    return any(_code(line) and _ROCM.search(line) for line in text.splitlines())


#: text of the CUDA workflow written back into the ROCm one: plain words only, nothing YAML
#: or a shell would read as structure (thirty-seventh re-run F2, F4)
_PLAIN_NAME = textre.compile(r"[\w .()+/-]+")
_PLAIN_COMMAND = textre.compile(r"[\w ./=:@+,-]+")
_PLAIN_EXPR = textre.compile(r"[\w .${}()'=!<>,/&|*\[\]-]+")
#: shell text gpuport does not follow the same way bash and PowerShell do: a heredoc or
#: here-string, a PowerShell block comment, a backtick
_UNSURE_SHELL = (("<<", "a heredoc"), ("<#", "a block comment"), ("`", "a backtick"))


def compose_workflow(text: str) -> yaml.MappingNode | None:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None
    return root if isinstance(root, yaml.MappingNode) else None


def _same(a: yaml.Node, b: yaml.Node) -> bool:
    """Whether two composed nodes read the same (type, tag, value; order kept) and share
    their aliases alike: each node of ``a`` is paired with one node of ``b`` and back, so the
    walk visits each node once (fortieth re-run F11: following every alias path of nested
    anchors was exponential, and deep nesting overflowed the recursion). A tree read twice
    from the same lines pairs that way; one that does not is not the same block."""
    pair: dict[int, int] = {}
    back: dict[int, int] = {}
    todo: list[tuple[yaml.Node, yaml.Node]] = [(a, b)]
    while todo:
        x, y = todo.pop()
        if pair.get(id(x), id(y)) != id(y) or back.get(id(y), id(x)) != id(x):
            return False
        if id(x) in pair:
            continue
        pair[id(x)], back[id(y)] = id(y), id(x)
        if type(x) is not type(y) or x.tag != y.tag:
            return False
        if isinstance(x, yaml.ScalarNode):
            if x.value != y.value:
                return False
            continue
        if len(x.value) != len(y.value):
            return False
        if isinstance(x, yaml.SequenceNode):
            todo += zip(x.value, y.value, strict=True)
        else:
            for (k1, v1), (k2, v2) in zip(x.value, y.value, strict=True):
                todo += ((k1, k2), (v1, v2))
    return True


def _block(root: yaml.MappingNode, lines: list[str], key: str) -> list[str]:
    """The top-level ``key:`` block of a workflow, verbatim, or [] when the YAML and the
    lines do not agree on it: the key once in the top-level mapping, at column 0, and its
    lines (up to the next top-level key) read alone to the same nodes (thirty-ninth re-run
    F18: a decoy ``on:`` line inside a flow mapping, the real key spelled ``on :``)."""
    keys = root.value
    hits = [i for i, (k, _) in enumerate(keys) if isinstance(k, yaml.ScalarNode) and k.value == key]
    if len(hits) != 1:
        return []
    k, v = keys[hits[0]]
    if k.start_mark.column != 0:
        return []
    first = k.start_mark.line
    last = keys[hits[0] + 1][0].start_mark.line if hits[0] + 1 < len(keys) else len(lines)
    out = lines[first:last]
    while out and (not out[-1].strip() or out[-1].startswith("#")):
        out.pop()
    alone = compose_workflow("\n".join(out) + "\n")
    if (
        alone is None
        or len(alone.value) != 1
        or alone.value[0][0].value != key
        or not _same(alone.value[0][1], v)
    ):
        return []
    return out


def _top_name(root: yaml.MappingNode) -> str:
    for k, v in root.value:
        if isinstance(k, yaml.ScalarNode) and k.value == "name" and isinstance(v, yaml.ScalarNode):
            name = str(v.value)
            return name if _PLAIN_NAME.fullmatch(name) else ""
    return ""


def _walk(root: yaml.Node) -> list[tuple[yaml.ScalarNode, yaml.Node, yaml.MappingNode]]:
    """(key, value, mapping) of every mapping entry with a plain key, each node once."""
    out: list[tuple[yaml.ScalarNode, yaml.Node, yaml.MappingNode]] = [
        (k, v, node)
        for node in nodes(root)
        if isinstance(node, yaml.MappingNode)
        for k, v in node.value
        if isinstance(k, yaml.ScalarNode)
    ]
    out.sort(key=lambda e: (e[0].start_mark.line, e[0].start_mark.column))
    return out


def run_texts(root: yaml.Node, lines: list[str]) -> list[tuple[int, list[str]]] | str:
    """The shell text of each ``run:`` step as (0-based file line of its first line, its
    lines), or why the workflow is not read: a run text written over lines other than as a
    literal block (``|``), whose lines gpuport cannot place in the file."""
    out: list[tuple[int, list[str]]] = []
    for k, v, _ in _walk(root):
        if k.value != "run" or not isinstance(v, yaml.ScalarNode):
            continue
        text = str(v.value)
        if v.style == "|":
            body = text.removesuffix("\n").split("\n")
            first = v.start_mark.line + 1
            where = lines[first : first + len(body)]
            if len(where) != len(body) or any(
                a.strip() != b.strip() for a, b in zip(where, body, strict=True)
            ):
                return f"the run step at line {v.start_mark.line + 1} is not read line by line"
            out.append((first, body))
        elif v.start_mark.line == v.end_mark.line and "\n" not in text:
            out.append((v.start_mark.line, [text]))
        else:
            return f"the run step at line {v.start_mark.line + 1} is folded over lines"
    return out


def shell_code(body: list[str], bash: bool = False) -> list[str] | str:
    """The code of each line of a shell text (comments cut), or why gpuport cannot follow
    it as the shell does: a heredoc, a quoted string or a ``$(...)`` over lines, an escape
    inside quotes (bash and PowerShell read ``\\`` and a backtick differently, so a
    workflow's run text, ``bash=False``, has none), a trailing comment holding an option or
    a build (thirty-ninth re-run F1, F2)."""
    out: list[str] = []
    for n, line in enumerate(body, 1):
        stack: list[str] = []  # open quotes and parentheses, innermost last
        code = line
        i = 0
        while i < len(line):
            c = line[i]
            top = stack[-1] if stack else ""
            if top == "'":
                if c == "'":
                    stack.pop()
            elif c == "\\":
                if i == len(line) - 1 and not stack:
                    break  # a continuation
                if not bash:
                    return f"line {n} has a backslash, which bash and PowerShell read otherwise"
                i += 1
            elif line.startswith("$(", i):
                stack.append("(")
                i += 1
            elif top == '"':
                if c == "`":
                    return f"line {n} holds a backtick"
                if c == '"':
                    stack.pop()
            elif c in "'\"(":
                stack.append(c)
            elif c == ")":
                if top != "(":
                    return f"line {n} closes a parenthesis it did not open"
                stack.pop()
            elif c == "#" and (i == 0 or line[i - 1] in " \t;&|()"):
                if stack:
                    return f"line {n} has a comment inside parentheses"
                code = line[:i]
                if code.strip() and ("-D" in line[i:] or _BUILDS.search(line[i:])):
                    return f"line {n} has a comment holding a build option"
                break
            else:
                for mark, what in _UNSURE_SHELL:
                    if line.startswith(mark, i):
                        return f"line {n} holds {what}"
            i += 1
        if stack:
            return f"line {n} opens a quoted string or a parenthesis it does not close"
        out.append(code)
    return out


def read_workflow(
    path: str,
    text: str,
    table: ReleaseSwitches,
    read: Reader | None = None,
    listdir: Lister | None = None,
) -> CudaWorkflow | None:
    """The workflow as a model for a ROCm one, when it builds wheels with a CMake option
    turned on whose name says CUDA (known to ``table`` or not); else None. A workflow that
    builds with such an option but whose text gpuport cannot read as GitHub and the shell do
    comes back with :attr:`CudaWorkflow.refused` set. ``read`` gives the project files the
    jobs run (scripts, local actions), read for gates too (forty-third re-run F1); ``listdir``
    the names in a project folder (a missing file costs no read: forty-fourth re-run F3)."""
    if odd_line_break(text) is not None:
        return None  # blocks are copied line by line: a break YAML reads otherwise is not
    lines = text.splitlines()  # copied (thirty-eighth re-run F1: a form feed in a comment)
    root = compose_workflow(text)
    if root is None:
        return _refused(path, lines, table, "the workflow is not YAML gpuport reads")
    wf = CudaWorkflow(path=path, name=_top_name(root))
    runs = run_texts(root, lines)
    if isinstance(runs, str):
        return _refused(path, lines, table, runs)
    for first, body in runs:
        code = shell_code(body)
        if isinstance(code, str):
            return _refused(path, lines, table, f"the run step at line {first + 1}: {code}")
        for n, line in enumerate(code):
            i = first + n + 1
            if not _code(line):
                continue
            if not wf.build_line and _BUILDS.search(line):
                wf.build_line = i
                cmd = line.strip().removeprefix("run:").strip()
                if _PLAIN_COMMAND.fullmatch(cmd) and _BUILDS.match(cmd):
                    wf.build = cmd
            if "CMAKE_ARGS" in line:
                _options(wf, table, line, i)
    for k, v, _ in _walk(root):
        if (
            k.value == "CMAKE_ARGS"
            and isinstance(v, yaml.ScalarNode)
            and v.start_mark.line == v.end_mark.line
            and "\n" not in str(v.value)
        ):
            _options(wf, table, str(v.value), v.start_mark.line + 1)
    for line in lines:
        if _code(line) and not wf.pythons and _PY_KEY.search(line):
            wf.pythons = list(dict.fromkeys(_VERSIONS.findall(line)))
    if not wf.build_line or not (wf.switches or wf.unknown):
        return None
    wf.on_block = _block(root, lines, "on")
    wf.permissions = _block(root, lines, "permissions")
    why = _release(wf, root, read, listdir)
    if why is not None:
        wf.refused = why  # a gate of the CUDA release not copied: no ROCm workflow (F4)
    return wf


def _options(wf: CudaWorkflow, table: ReleaseSwitches, line: str, i: int) -> None:
    for m in _OPTION.finditer(line):
        wf.options.append((m.group(1), m.group(2), i))
        if m.group(2).lower() not in _ON:
            continue
        if table.hip_for(m.group(1)) is not None:
            wf.switches.append((m.group(1), i))
        elif _CUDA_NAME.search(m.group(1)):
            wf.unknown.append((m.group(1), i))


def _refused(path: str, lines: list[str], table: ReleaseSwitches, why: str) -> CudaWorkflow | None:
    """A workflow that seems to build wheels with a CUDA switch but is not read: the
    switch's first line, and why (None when it does not seem to)."""
    if not any(_code(x) and _BUILDS.search(x) for x in lines):
        return None
    for i, line in enumerate(lines, 1):
        if not _code(line) or "CMAKE_ARGS" not in line:
            continue
        for m in _OPTION.finditer(line):
            name = m.group(1)
            if m.group(2).lower() in _ON and (table.hip_for(name) or _CUDA_NAME.search(name)):
                return CudaWorkflow(path=path, name="", build_line=i, refused=why)
    return None


def _plain_scalar(v: yaml.Node) -> str | None:
    """A one-line plain scalar's text when writing it back after ``key: `` reads the same."""
    if not isinstance(v, yaml.ScalarNode) or v.style is not None:
        return None
    value = str(v.value)
    if v.start_mark.line != v.end_mark.line or not _PLAIN_EXPR.fullmatch(value):
        return None
    try:
        again = yaml.safe_load(f"k: {value}\n")
    except yaml.YAMLError:
        return None
    return value if again == {"k": value} else None


#: ``with:`` inputs of the release step whose loss does not change what is published
_RELEASE_INPUTS = frozenset({"files", "tag_name", "name", "body", "fail_on_unmatched_files"})


def _gate(v: yaml.Node, what: str) -> tuple[str, str | None]:
    """An ``if:`` value written back as it is (its text, None), or why it is not: not a
    plain one-line expression, or one reading a context the ROCm job sets otherwise (a
    matrix, env, step outputs: its result there is not the CUDA job's)."""
    expr = _plain_scalar(v)
    if expr is None:
        return "", f"{what}'s `if:` gate is not a plain one-line expression gpuport copies"
    for m in CONTEXT.finditer(QUOTED_EXPR.sub("''", expr)):
        if m.group(1) not in SAME_CONTEXTS:
            return (
                "",
                f"{what}'s `if:` gate reads `{m.group(1)}`, which the ROCm job sets otherwise",
            )
    return expr, None


def _jobs(root: yaml.MappingNode) -> list[tuple[yaml.MappingNode, list[yaml.Node]]]:
    """(job, its steps) of each job of the workflow."""
    top = plain_keys(root) or {}
    jobs = top.get("jobs")
    out: list[tuple[yaml.MappingNode, list[yaml.Node]]] = []
    for _, job in jobs.value if isinstance(jobs, yaml.MappingNode) else []:
        if isinstance(job, yaml.MappingNode):
            steps = (plain_keys(job) or {}).get("steps")
            out.append((job, list(steps.value) if isinstance(steps, yaml.SequenceNode) else []))
    return out


#: a context an ``if:`` expression reads that the ROCm workflow has as the CUDA one does:
#: the event, the ``on:`` block's inputs (copied), the repository's variables and secrets
SAME_CONTEXTS = frozenset({"github", "inputs", "vars", "secrets"})


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


def _release(
    wf: CudaWorkflow, root: yaml.MappingNode, read: Reader | None, listdir: Lister | None = None
) -> str | None:
    """The release step (``softprops/action-gh-release``): its ``if:`` and its tag, when the
    tag names the CUDA build (``${{ github.ref_name }}-cu${{ env.CUDA_VERSION }}``); read
    from the step's own mapping (a line of another text that looks like one is not). Returns
    why the ROCm workflow would not keep the CUDA one's release policy (fortieth re-run F4: a
    quoted ``if:`` was dropped, so it published on every trigger): a gate or an input of the
    release step, or a gate of the jobs that build and release, that is not copied."""
    steps = [
        step
        for k, v, step in _walk(root)
        if k.value == "uses"
        and isinstance(v, yaml.ScalarNode)
        and str(v.value).startswith("softprops/action-gh-release")
    ]
    line = wf.build_line - 1
    released = {id(step) for step in steps}
    for job, job_steps in _jobs(root):
        inside = job.start_mark.line <= line < job.end_mark.line
        if inside or any(id(s) in released for s in job_steps):
            what = "the job that builds or releases"
            env = (plain_keys(root) or {}).get("env")
            why = job_gate(job, what) or step_gates(
                job, job_steps, env, what, read, wf.build, listdir, workflow_workdirs(root)
            )
            if why is not None:
                return why
        for step in job_steps if inside else []:
            builds = step.start_mark.line <= line < step.end_mark.line
            keys = plain_keys(step) if isinstance(step, yaml.MappingNode) else None
            if builds and (keys is None or "if" in keys):
                return "the build step has an `if:` gate (or merged keys), not copied"
    if not steps:
        return None
    if len(steps) > 1:
        return "it has more than one release step"
    keys = plain_keys(steps[0])
    if keys is None:
        return "the release step's keys are repeated or merged"
    with_ = keys.get("with")
    inputs = plain_keys(with_) if isinstance(with_, yaml.MappingNode) else None
    if inputs is None:
        return "the release step's `with:` is not a plain mapping"
    tag = _plain_scalar(inputs["tag_name"]) if "tag_name" in inputs else None
    if tag is None or not CU_SUFFIX.search(tag):
        return None  # not released as the CUDA build: the ROCm wheels stay artifacts
    extra = sorted(set(inputs) - _RELEASE_INPUTS)
    if extra:
        return f"the release step's `with: {extra[0]}` is not carried into the ROCm release"
    if "if" in keys:
        expr, why = _gate(keys["if"], "the release step")
        if why is not None:
            return why
        wf.release_if = expr
    wf.release_tag = tag
    return None


def cuda_evidence(text: str) -> tuple[str, int] | None:
    """What shows a workflow that builds artefacts builds CUDA ones without a CMake switch
    (a toolkit setup action, an ``nvidia/cuda`` container, a CUDA torch index) and its
    1-based line, or None."""
    lines = text.splitlines()
    if not any(_code(x) and (_BUILDS.search(x) or "build-push-action" in x) for x in lines):
        return None
    for what, pattern in _OTHER_CUDA:
        for i, line in enumerate(lines, 1):
            if _code(line) and pattern.search(line):
                return what, i
    return None


def cuda_name(name: str) -> bool:
    return bool(_CUDA_NAME.search(name))


def index_lines(text: str) -> list[tuple[int, str]]:
    """(0-based line, text) of the lines that generate a CUDA wheel index page
    (``releases-to-pep-503.sh index/whl/cu124 '...-cu124$'``), comments left out."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(text.splitlines()):
        if _code(line) and textre.search(r"whl/cu\d+\b", line) and "-cu" in line:
            out.append((i, line))
    return out


def link_lines(text: str) -> list[tuple[int, str]]:
    """(0-based line, text) of a wheel index script's links to its CUDA pages
    (``echo "<a href=\\"cu124/\\">CUDA 12.4</a><br>"``), comments left out."""
    out: list[tuple[int, str]] = []
    for i, line in enumerate(text.splitlines()):
        if _code(line) and textre.search(r"href=\\?\"cu\d+/\\?\">CUDA [\d.]+<", line):
            out.append((i, line))
    return out


_JOB = textre.compile(r"^  ([A-Za-z0-9_-]+):\s*$")
_OS_KEY = textre.compile(r"\bos\b['\"]?\s*[:=]")


def linux_build(text: str, build_line: int) -> bool:
    """Whether the job holding 1-based line ``build_line`` runs on Linux: its ``runs-on``
    names Ubuntu, or names the matrix's ``os`` and that lists an Ubuntu runner."""
    lines = text.splitlines()
    start = next((i for i in range(build_line - 1, -1, -1) if _JOB.match(lines[i])), None)
    if start is None:
        return False
    end = next((i for i in range(start + 1, len(lines)) if _JOB.match(lines[i])), len(lines))
    for line in lines[start:end]:
        m = textre.match(r"^\s*runs-on:\s*(.*?)\s*$", line)
        if m is None or not _code(line):
            continue
        value = m.group(1).lower()
        if "ubuntu" in value:
            return True
        if "matrix.os" in value:
            return any(_code(x) and _OS_KEY.search(x) and "ubuntu" in x.lower() for x in lines)
        return False
    return False
