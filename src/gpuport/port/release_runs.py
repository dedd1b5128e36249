"""What a release job's texts run, read for :mod:`gpuport.port.release_gates`: a Makefile's
rules (each included file once: a self-include or an include cycle is cut, linear time,
forty-fifth re-run F14), an interpreter given a bare-named file with its options read per
interpreter (``bash -e`` is errexit, not eval; an option gpuport does not know declines;
``.`` and ``pwsh -File`` are interpreters too: forty-fifth re-run F5, F17), task runners,
which gpuport does not read and which decline (``npm run``, ``tox -e``: F8), and the git
commands that print HEAD's refs or tags (``git log --format=%D``, ``--decorate``: F7).
Forty-sixth re-run: a command starts after any shell keyword or word that runs its arguments
(``if !``, ``timeout 60``, ``env -i``, a ``bash -c`` string: F1), a script fed on stdin is
followed (``sh < x``, ``cat x | sh``: F2), as are ``fish``/``csh`` (F13); git's global options
are skipped (``git -P``, ``--git-dir x``: F3) and ``repo.git.describe(...)`` is git (F14).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from gpuport import textre

__all__ = [
    "AT",
    "Makefile",
    "bare_runs",
    "git_refs",
    "make_words",
    "parse_makefile",
    "recipes",
    "runners",
]

#: a word that runs the next words as a command (``sudo``, ``timeout 60``, ``env -i``,
#: ``uv run``), with its options and their values (forty-sixth re-run F1)
_WRAP = (
    r"\b(?:exec|sudo|doas|time|env|run|xargs|timeout|nohup|nice|ionice|stdbuf|setsid|command"
    r"|builtin|eval|busybox|unbuffer|chronic|caffeinate)\b:?"
    r"(?:[ \t]+(?:-[\w-]+(?:=[^\s;&|]*)?(?:[ \t]+[^\s;&|-][^\s;&|]*)?|\d[\w.]*))*"
)
#: where a shell command starts: a line, after a separator, a shell keyword (``if``,
#: ``!``, ``then``) or in a ``-c`` string (``bash -c "sh check_tag"``), after any words
#: that run the next one (:data:`_WRAP`), with ``NAME=value`` assignments before it
AT = (
    r"(?:^|[;&|(`{]|\b(?:then|do|else|elif|if|while|until)\b|" + _WRAP + r"|[ \t]-[A-Za-z]*c"
    r"[A-Za-z]*[ \t]+['\"])(?:[ \t]*(?:!|\b(?:then|do|else|elif|if|while|until)\b|" + _WRAP + r"))*"
    r"[ \t]*['\"]?[@+-]*(?:[A-Za-z_]\w*=[^\s;&|]*[ \t]+)*"
)

# --- interpreters given a file ------------------------------------------------------------

#: an interpreter and the words of its command (up to the command's end)
_INTERP = textre.compile(
    r"(?m)"
    + AT
    + r"(sh|bash|dash|zsh|ksh|mksh|ash|fish|csh|tcsh|source|\.|python[\d.]*|perl|ruby|node|pwsh"
    r"|powershell(?:\.exe)?)((?:[ \t]+[^\s;&|)`]+)*)[ \t]*(?:$|[;&|)`])"
)
_NAME = textre.compile(r"^[A-Za-z_][\w-]*$")
#: per interpreter kind: letters of single-dash options without a value, options that take
#: the next word, options whose value is the code to run (eval: no file is run)
_SHELL = ("aefhklmnpuvxBCEHPT", {"-o", "+o", "-O", "+O"}, "c")
_OPTS: dict[str, tuple[str, set[str], str]] = {
    "sh": _SHELL,
    "fish": ("ilnNP", {"-d", "--debug", "-C", "--init-command", "-o", "--debug-output"}, "c"),
    "csh": ("bdefimnqtvVxX", set(), "c"),
    "python": ("bBdEiIOqsSuvx", {"-W", "-X"}, "cm"),
    "perl": ("acnpstTwWXU", {"-I", "-M", "-m"}, "eE"),
    "ruby": ("acdlnpsvwWy", {"-I", "-r", "-C"}, "e"),
    "node": ("", {"-r", "--require", "--import", "--loader"}, "ep"),
}
_LONG_EVAL = ("--eval", "--command", "--print")
_SHELL_LONG = ("--login", "--noprofile", "--norc", "--posix", "--noediting", "--restricted")


def _kind(word: str) -> str:
    if word in ("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"):
        return "sh"
    if word in ("csh", "tcsh"):
        return "csh"
    if word in ("source", "."):
        return "source"
    if word.startswith(("pwsh", "powershell")):
        return "pwsh"
    return "python" if word.startswith("python") else word


_REDIRECT = textre.compile(r"^\d*(?:<<?<?|>>?|&>>?|>&|<&|<>)-?")


def _plain(words: list[str]) -> tuple[list[str], str | None, bool]:
    """An interpreter's words without their redirections (quotes taken off), the file it
    reads on stdin (``sh < check_tag``: forty-sixth re-run F2) and whether a here-document
    gives it inline code (``bash <<EOF``, read with the text itself)."""
    out: list[str] = []
    stdin, here = None, False
    it = iter(words)
    for w in it:
        r = _REDIRECT.match(w)
        if r is None:
            out.append(w.strip("'\""))
            continue
        op = r.group(0)
        target = w[len(op) :] or next(it, "")
        if op.lstrip("0123456789") in ("<<", "<<-", "<<<"):
            here = True
        elif op.lstrip("0") == "<":
            stdin = target.strip("'\"")
    return out, stdin, here


#: the operand of an interpreter that reads its script on stdin (``sh -s``, ``python -``)
STDIN = "-"


def _operand(kind: str, words: list[str]) -> str | None:
    """The file an interpreter runs: its first operand after the options it knows; ``""``
    when it runs no file (code given inline, a module), :data:`STDIN` when it reads its
    script on stdin, None when an option is not known (what it runs is not read exactly)."""
    it = iter(words)
    for w in it:
        if kind == "pwsh":
            low = w.lower()
            if low in ("-file", "-f"):
                return next(it, None)
            if low in ("-command", "-c", "-encodedcommand", "-e", "-ec"):
                return ""
            if low in ("-noprofile", "-nologo", "-noninteractive", "-nop", "-noni"):
                continue
            if low in ("-executionpolicy", "-ep", "-ex"):
                next(it, None)
                continue
            return None if w.startswith("-") else w
        if not w.startswith(("-", "+")) or w in ("-", "--"):
            return next(it, STDIN) if w == "--" else (STDIN if w == "-" else w)
        if kind == "source":
            return ""  # ``source`` takes no option: not a shell line (``source -= 1``)
        letters, takes, evals = _OPTS[kind]
        name = w.split("=")[0]
        if name in _LONG_EVAL:
            return ""
        if name in takes or w[:2] in takes:
            if w in takes:
                next(it, None)
            continue
        if w.startswith("--"):
            if (kind == "sh" and w in _SHELL_LONG) or (kind == "node" and "=" in w):
                continue
            return None
        flags = w[1:]
        if any(c in evals for c in flags):
            return ""
        if kind in ("sh", "csh", "fish") and "s" in flags:
            return STDIN  # ``sh -s``: the script on stdin, its words the arguments
        if kind == "sh" and flags[-1:] in ("o", "O"):  # ``-eo pipefail``
            flags = flags[:-1]
            next(it, None)
        if not w[1:] or any(c not in letters for c in flags):
            return None
    return "" if kind in ("source", "pwsh") else STDIN


def _producer(text: str, at: int) -> list[str] | None:
    """What a pipe ending at ``at`` feeds an interpreter: the files ``cat`` gives it, none
    for inline code (``echo``, ``printf``) or a download (``curl``, a URL: not the project's), None
    for a producer gpuport does not read (forty-sixth re-run F2: ``cat check_tag | sh``)."""
    seg = text[max(0, at - 400) : at]
    for sep in ";&|(\n`":
        seg = seg[seg.rfind(sep) + 1 :]
    words = [w.strip("'\"") for w in seg.split()]
    while words and "=" in words[0] and not words[0].startswith("="):
        words = words[1:]
    if not words or "://" in seg or words[0] in ("echo", "printf", "curl", "wget"):
        return []
    if words[0] == "cat" and all(not w.startswith("-") and "$" not in w for w in words[1:]):
        return words[1:]
    return None


def bare_runs(text: str, depth: int = 0) -> Iterator[tuple[str, str, str | None]]:
    """Each interpreter run of a bare-named file (``sh check_release``, ``. check_release``,
    ``pwsh -File check_release``, ``fish check_release``, ``sh < check_release``, ``cat
    check_release | sh``: forty-sixth re-run F2, F13): (the command, its interpreter kind,
    the name), the name None when gpuport cannot tell what runs (an option it does not know,
    a pipe from a command it does not read)."""
    for m in _INTERP.finditer(text):
        kind = _kind(m.group(1))
        words, stdin, here = _plain(m.group(2).split())
        name = _operand(kind, words)
        cmd = m.group(0).strip()
        if name == "" and kind in ("sh", "csh", "fish") and depth < 4:
            yield from bare_runs(m.group(2), depth + 1)  # ``bash -c "sh check_tag"``
        elif name == STDIN and not here:
            lead = m.group(0).lstrip(" \t'\"")
            piped = lead[:1] == "|" and text[m.start() - 1 : m.start()] != "|"
            names = [stdin] if stdin else (_producer(text, m.start()) if piped else [])
            if names is None:
                yield cmd, kind, None
            for n in names or []:
                if _NAME.match(n):
                    yield cmd, kind, n
        elif name is None:
            yield cmd, kind, None
        elif _NAME.match(name):
            yield cmd, kind, name


#: a task runner: a program that runs a task the project names in its own file (npm / yarn
#: / pnpm / bun scripts, tox and nox envs, invoke, just, Taskfile, poe, rake, hatch / pdm /
#: poetry scripts, cargo make, gradle, maven, scons, doit): gpuport reads none
_RUNNERS = textre.compile(
    r"(?m)" + AT + r"((?:npm|pnpm|yarn|bun)[ \t]+(?:run[ \t]+|run-script[ \t]+)?[\w:.-]+"
    r"|(?:tox|nox|invoke|inv|just|task|poe|rake|scons|doit|mvn|gradle|\./gradlew)"
    r"(?:[ \t]*$|[ \t]+[-\w][^\n;&|)`]*)"
    r"|(?:hatch|pdm|poetry)[ \t]+run[ \t]+[\w:.-]+|cargo[ \t]+make\b[^\n;&|)`]*)"
)
#: npm-like words that run no project script
_NPM_SAFE = ("install", "i", "ci", "add", "view", "info", "--version", "-v", "config")


def runners(text: str) -> Iterator[str]:
    """Each task-runner command the text runs (an install that runs no named script left
    out: ``npm install`` is still a lifecycle run, so only ``ci``/``view``-like words)."""
    for m in _RUNNERS.finditer(text):
        words = m.group(1).split()
        if words[1:2] in (["-="], ["+="]):
            continue  # a program's variable (``task -= 1``), not a command
        if words[0] in ("npm", "pnpm", "yarn", "bun") and words[1] in _NPM_SAFE:
            continue
        if words[0] in ("hatch", "pdm", "poetry") and not _NAME.match(words[2]):
            continue
        if words[0] in ("hatch", "pdm", "poetry") and words[2] in _PY_TOOLS:
            continue  # ``poetry run python -m build``: a command, not a named script
        yield m.group(1).strip()


_PY_TOOLS = ("python", "python3", "pip", "pytest", "cibuildwheel", "twine", "maturin")

# --- git commands that print HEAD's refs -----------------------------------------------

_ARG = r"(?:'[^'\n]*'|\"[^\"\n]*\"|[^\s;&|)`'\"]+)"
#: a git command and its words, its global options skipped with their values (``-C dir``,
#: ``-P``, ``--git-dir "x"``, ``--work-tree dir``: forty-sixth re-run F3)
_GIT = textre.compile(
    r"\bgit((?:[ \t]+(?:-[Cc][ \t]*" + _ARG + r"|--(?:git-dir|work-tree|namespace|exec-path"
    r"|super-prefix|config-env|list-cmds|attr-source)(?:=" + _ARG + r"|[ \t]+" + _ARG + r")"
    r"|--[\w-]+(?:=" + _ARG + r")?|-[A-Za-z]+))*)[ \t]+([a-z][\w-]*)"
    r"((?:[ \t]+" + _ARG + r")*)"
)
#: GitPython's command wrapper: ``repo.git.describe(tags=True, exact_match=True)`` is
#: ``git describe --tags --exact-match`` (forty-sixth re-run F14)
_GITPY = textre.compile(
    r"\b(?:git|Git\s*\([^()\n]*\))\s*\.\s*([a-z][a-z_]*)\s*\(([^()\n]*(?:\([^()\n]*\)[^()\n]*)*)"
)
_KWARG = textre.compile(r"\b([A-Za-z_]\w*)\s*=\s*([^,]*)")
#: subcommands that name or test the branch or tag HEAD is on, whatever their options
_REF_COMMANDS = frozenset(
    ("branch", "tag", "describe", "symbolic-ref", "name-rev", "show-ref", "for-each-ref",
     "merge-base", "ls-remote", "reflog", "show-branch")
)  # fmt: skip
#: options of log / show / rev-list / rev-parse that print refs (HEAD's among them)
_REF_OPTS = frozenset(
    ("--decorate", "--tags", "--branches", "--all", "--remotes", "--glob", "--source",
     "--simplify-by-decoration", "--abbrev-ref", "--symbolic", "--symbolic-full-name")
)  # fmt: skip
#: the same in a list of arguments (``["git", "describe"]``) and GitPython's repository refs
_GIT_LIST = textre.compile(
    r"\bgit['\"]\s*,\s*['\"](?:branch|tag|describe|symbolic-ref|name-rev|show-ref|reflog"
    r"|(?:log|show|rev-list|rev-parse|status)['\"][^\]\)\n]*(?:%[dD]|--decorate|--tags"
    r"|--branches|--all|--abbrev-ref|--symbolic|--branch))['\"]?"
    r"|\b(?:[Rr]epo\b[^\n.]*|repository)\.\s*(?:tags|active_branch|branches|heads|refs"
    r"|references|head\s*\.\s*(?:ref|reference|shorthand|name))\b"
    r"|\.\s*head_is_detached\b|\bhead\s*\.\s*is_detached\b",
)


def _prints_refs(sub: str, words: list[str]) -> bool:
    """Whether git ``sub`` with ``words`` prints or tests HEAD's branch or tag."""
    if sub == "status":  # ``git status -b``: the branch line (``## HEAD (no branch)``)
        return any(w in ("--branch", "-b", "-sb", "-bs") for w in words)
    printed = [w for w in words if not w.startswith("--date")]
    return sub in _REF_COMMANDS or (
        sub in ("log", "show", "rev-list", "rev-parse", "whatchanged")
        and any(w.split("=")[0] in _REF_OPTS or "%d" in w or "%D" in w for w in printed)
    )


def _gitpy_words(args: str) -> list[str]:
    """GitPython's call arguments as git's words (``exact_match=True`` is
    ``--exact-match``, a string argument is itself)."""
    words = []
    for a in args.split(","):
        k = _KWARG.match(a.strip())
        if k is None:
            words.append(a.strip().strip("'\""))
            continue
        name = k.group(1).replace("_", "-")
        opt = f"-{name}" if len(name) == 1 else f"--{name}"
        value = k.group(2).strip().strip("'\"")
        words.append(opt if value == "True" else f"{opt}={value}")
    return words


def git_refs(text: str) -> tuple[int, str] | None:
    """Where the text asks git which branch or tag HEAD is on (forty-fifth re-run F7: any
    command that prints HEAD's refs, ``git log -1 --format=%D`` as ``git describe``; its
    global options skipped, GitPython's ``repo.git.describe(...)`` read as git: forty-sixth
    re-run F3, F14), and the words, or None."""
    for m in _GIT.finditer(text):
        if _prints_refs(m.group(2), [w.strip("'\"") for w in m.group(3).split()]):
            return m.start(), m.group(0).strip()
    for m in _GITPY.finditer(text):
        if _prints_refs(m.group(1).replace("_", "-"), _gitpy_words(m.group(2))):
            return m.start(), m.group(0).strip()
    g = _GIT_LIST.search(text)
    return None if g is None else (g.start(), g.group(0))


# --- Makefiles ------------------------------------------------------------------------

_MK_INCLUDE = textre.compile(r"^[ \t]*-?s?include[ \t]+(.*)$")
_MK_RULE = textre.compile(r"^([^\t#:=][^:=#]*?)[ \t]*::?(.*)$")
_MK_ASSIGN = textre.compile(
    r"^[ \t]*(?:(?:export|override|private)[ \t]+)*([\w.-]+)[ \t]*(?:::|[:+?!])?="
)
_MK_REF = textre.compile(r"\$[({]([\w.-]+)|\$(\w)")
#: make's options that take the next word (``-C dir``): C a folder, f a Makefile
_MAKE_ARG = dict.fromkeys(
    ("-I", "--include-dir", "-o", "--old-file", "--assume-old", "-W", "--what-if", "--new-file"),
    "",
) | {"-C": "C", "--directory": "C", "-f": "f", "--file": "f", "--makefile": "f"}


@dataclass
class Makefile:
    rules: dict[str, list[tuple[list[str], list[str]]]] = field(default_factory=dict)
    other: list[str] = field(default_factory=list)  # directives, exported assignments
    assigns: dict[str, list[str]] = field(default_factory=dict)
    first: str = ""
    patterns: bool = False


def _lines(text: str) -> list[str]:
    return text.replace("\\\r\n", " ").replace("\\\n", " ").splitlines()


def parse_makefile(
    rel: str, text: str, here: str, read: Callable[[str], str | None]
) -> Makefile | None:
    """A Makefile's rules, other lines and assignments by name, its includes read in place
    (relative to ``here``, where make runs), each included file once: an include of one
    already read (itself, a cycle, a repeat) adds nothing new and is cut, so the work is
    linear in the distinct files (forty-fifth re-run F14: 200 ``include Makefile`` lines
    took 43 s); None for one not read exactly."""
    lines: list[str] = []
    included = {rel}
    todo = _lines(text)[::-1]
    while todo:
        line = todo.pop()
        inc = _MK_INCLUDE.match(line)
        if inc is None:
            lines.append(line)
            continue
        for name in inc.group(1).split():
            path = posixpath.normpath(posixpath.join(here, name))
            if path in included:
                continue
            body = None if "$" in path or path.startswith(("..", "/")) else read(path)
            if body is None and not line.lstrip().startswith(("-", "s")):
                return None
            if body is not None:
                included.add(path)
                if len(lines) + len(todo) >= 100_000:
                    return None
                todo += _lines(body)[::-1]
    mk = Makefile()
    current: list[str] | None = None
    for line in lines:
        if line.startswith("\t") and current is not None:
            current.append(line)
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        a = _MK_ASSIGN.match(line)
        r = None if a is not None else _MK_RULE.match(line)
        if ".DEFAULT_GOAL" in line or ".RECIPEPREFIX" in line:
            return None
        if r is None:
            current = None
            if a is not None and not line.lstrip().startswith("export"):
                mk.assigns.setdefault(a.group(1), []).append(line)
            else:
                mk.other.append(line)
            continue
        deps, _, inline = r.group(2).partition(";")
        current = [inline] if inline.strip() else []
        for t in r.group(1).split():
            mk.rules.setdefault(t, []).append((deps.split(), current))
            mk.patterns |= "%" in t
            if not mk.first and not t.startswith(".") and "%" not in t:
                mk.first = t
    return mk


def make_words(words: str) -> tuple[str, list[str], list[str]] | None:
    """A make run's folder (``-C``), Makefiles (``-f``) and targets; None when a word is
    not plain (a variable, a quote, a glob: what make is given is not known)."""
    folder, files, targets = "", [], []
    it = iter(words.split())
    for w in it:
        opt, eq, arg = w.partition("=")
        if w in ("-j", "--jobs", "-l", "--load-average"):
            w = next(it, "")  # the number it may read (``-j $(nproc)``), or a target
            if w.isdigit() or w.startswith("$("):
                continue
        elif w.startswith("-") and opt not in _MAKE_ARG and w[:2] not in ("-C", "-f"):
            continue  # an option without a word (``-j$(nproc)``, ``-k``)
        if any(c in w for c in "$'\"*?[`\\"):
            return None
        opt, eq, arg = w.partition("=")
        if w in _MAKE_ARG:
            kind, arg = _MAKE_ARG[w], next(it, "")
            if not arg:
                return None
        elif eq and opt in _MAKE_ARG and opt.startswith("--"):
            kind = _MAKE_ARG[opt]
        elif w[:2] in ("-C", "-f"):
            kind, arg = _MAKE_ARG[w[:2]], w[2:]
        elif eq or not w:
            continue  # a variable given on the command line
        else:
            targets.append(w)
            continue
        if kind == "C":
            folder = posixpath.join(folder, arg)
        elif kind == "f":
            files.append(arg)
    return folder, files, targets


def recipes(mk: Makefile | None, targets: list[str]) -> str | None:
    """What make runs for ``targets`` (the default goal when none): their recipes and their
    prerequisites', with the Makefile's lines those may read (the assignments they name,
    exported ones, conditionals); None when not read exactly (a target no explicit rule
    makes, a prerequisite through a variable)."""
    if mk is None:
        return None
    want = list(targets or ([mk.first] if mk.first else []))
    if not want:
        return None
    out: list[str] = []
    done: set[str] = set()
    while want:
        t = want.pop()
        if t in done:
            continue
        done.add(t)
        if t not in mk.rules:
            if t in targets or mk.patterns:
                return None
            continue  # a file prerequisite
        for deps, recipe in mk.rules[t]:
            if any("$" in d for d in deps):
                return None
            want += [d for d in deps if d != "|"]
            out += recipe
    names = [n for line in [*out, *mk.other] for n in _refs(line)]
    used: set[str] = set()
    while names:
        n = names.pop()
        if n not in used:
            used.add(n)
            out += mk.assigns.get(n, [])
            names += [r for line in mk.assigns.get(n, []) for r in _refs(line)]
    return "\n".join([*mk.other, *out])


def _refs(line: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _MK_REF.finditer(line)]
