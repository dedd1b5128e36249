"""Shell commands in Dockerfile RUN lines: words, package installs and pip installs.

RUN text is split into simple commands of unquoted words the way a POSIX shell
would (quotes, backslashes, ``&&``/``||``/``;``/``|``), each word keeping the
offset it starts at. A ``sh -c "..."`` / ``bash -lc '...'`` command is
unwrapped: the commands inside its script string are checked instead, each
word still pointing at its own offset inside the string. Package-manager
installs of CUDA packages are GP503; ``pip install`` requirements and index
URLs go to the dependency rules (GP1xx).
"""

from __future__ import annotations

from collections.abc import Callable

from gpuport import textre
from gpuport.scan.rules.base import FileContext

_CUDA_PKG = textre.compile(
    r"(?i)^(?:cuda|cuda-[\w.+-]*|nvidia-cuda-[\w.+-]*|libcudnn[\w.+-]*|cudnn[\w.+-]*"
    r"|libnccl[\w.+-]*|nccl|tensorrt[\w.+-]*|libnvinfer[\w.+-]*"
    r"|libcu(?:blas|fft|rand|sparse|solver)[\w.+-]*|cudatoolkit[\w.+-]*|pytorch-cuda)$"
)
_PKG_MANAGERS = {
    "apt-get",
    "apt",
    "aptitude",
    "yum",
    "dnf",
    "microdnf",
    "zypper",
    "apk",
    "conda",
    "mamba",
    "micromamba",
}
_PKG_VALUE_OPTS = {
    "-o",
    "-t",
    "-c",
    "-n",
    "-p",
    "--option",
    "--target-release",
    "--channel",
    "--name",
    "--prefix",
    "--repo",
    "--enablerepo",
    "--disablerepo",
    "--setopt",
}
_PIP = textre.compile(r"pip(?:\d+(?:\.\d+)?)?")
_PYTHON = textre.compile(r"python(?:\d+(?:\.\d+)?)?|py")
_PIP_INDEX = {
    "-i",
    "--index-url",
    "--extra-index-url",
    "--index",
    "--default-index",
    "-f",
    "--find-links",
}
_PIP_VALUE_OPTS = {
    "-r",
    "--requirement",
    "-c",
    "--constraint",
    "-e",
    "--editable",
    "-t",
    "--target",
    "--prefix",
    "--root",
    "--src",
    "--upgrade-strategy",
    "--platform",
    "--python-version",
    "--implementation",
    "--abi",
    "--only-binary",
    "--no-binary",
    "--progress-bar",
    "--cache-dir",
    "--log",
    "--proxy",
    "--retries",
    "--timeout",
    "--trusted-host",
    "--exists-action",
    "--cert",
    "--client-cert",
    "--global-option",
    "--config-settings",
    "-C",
    "--report",
    "--python",
    "-p",
    "--index-strategy",
    "--torch-backend",
    "--extra",
    "--group",
    "--override",
    "--build-constraint",
    "--keyring-provider",
    "--resolution",
    "--prerelease",
    "--exclude-newer",
    "--link-mode",
    "--hash",
    "--install-option",
}
_SHELL_PREFIX = {
    "sudo",
    "env",
    "time",
    "nice",
    "exec",
    "command",
    "then",
    "do",
    "else",
    "elif",
    "if",
    "!",
    "{",
    "xargs",
}
_ASSIGN = textre.compile(r"^[A-Za-z_]\w*=")
_REDIRECT = textre.compile(r"^\d*[<>]")

Token = tuple[str, int]  # (unquoted text, offset of its first character in the logical text)
Position = Callable[[int], tuple[int, int]]  # offset in the logical text -> (line, column)


def check_run_command(ctx: FileContext, pos: Position, words: list[Token]) -> None:
    """GP503 and the GP1xx dependency rules on one simple command of a RUN line."""
    cmd = _program(words)
    if not cmd:
        return
    if cmd[0][0].rsplit("/", 1)[-1] in _PKG_MANAGERS:
        _check_packages(ctx, pos, cmd)
    elif (pip := _pip_args(cmd)) is not None:
        _check_pip(ctx, pos, pip)


def shell_commands(text: str, start: int) -> list[list[Token]]:
    """Split shell text into simple commands (at && || ; | & newlines) of unquoted words;
    the script of a ``sh -c`` command is split in its place."""
    return expand_shell_c(_split(text, start, len(text)), text)


def expand_shell_c(cmds: list[list[Token]], text: str | None, depth: int = 0) -> list[list[Token]]:
    """Replace each ``sh|bash [-opts] -c <script>`` command by the commands of its script.

    ``text`` is what the token offsets point into, used to find how the script was
    quoted (None for the exec form, whose words are already unquoted).
    """
    out: list[list[Token]] = []
    for cmd in cmds:
        script = _shell_script(cmd) if depth < _MAX_SHELL_DEPTH else None
        if script is None:
            out.append(cmd)
            continue
        body, where = _script_body(text, *script)
        for inner in expand_shell_c(_split(body, 0, len(body)), body, depth + 1):
            out.append([(word, where[min(off, len(body))]) for word, off in inner])
    return out


_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
_SHELL_OPTS = textre.compile(r"[-+][A-Za-z]+")
_MAX_SHELL_DEPTH = 4
_DQ_ESCAPES = frozenset('"\\$`')


def _shell_script(cmd: list[Token]) -> Token | None:
    """The script word of ``sh -c <script>`` (``-lc``, ``-ec``, ``-o pipefail -c`` ...)."""
    prog = _program(cmd)
    if not prog or prog[0][0].rsplit("/", 1)[-1] not in _SHELLS:
        return None
    k = 1
    while k < len(prog):
        word = prog[k][0]
        if word in ("-o", "+o", "-O", "+O"):
            k += 2
        elif word.startswith("--") and word != "--":
            k += 1  # --login, --noprofile, --norc
        elif _SHELL_OPTS.fullmatch(word):
            k += 1
            if word[0] == "-" and "c" in word:
                return prog[k] if k < len(prog) else None
        else:
            return None  # a script file (bash build.sh), or no -c at all
    return None


def _script_body(text: str | None, word: str, off: int) -> tuple[str, list[int]]:
    """The script as the inner shell reads it, and for each of its characters (plus one
    past the end) the offset in ``text``. A double-quoted script loses one level of
    backslashes (``\\"`` is ``"``); a script written as one quoted word maps exactly,
    anything else maps character by character from ``off``."""
    if text is not None and 0 < off <= len(text) and text[off - 1] == '"':
        chars: list[str] = []
        where: list[int] = []
        i, n = off, len(text)
        while i < n and text[i] != '"':
            if text[i] == "\\" and i + 1 < n:
                if text[i + 1] == "\n":  # a line continuation inside the quotes
                    i += 2
                    continue
                if text[i + 1] in _DQ_ESCAPES:
                    i += 1
            chars.append(text[i])
            where.append(i)
            i += 1
        if i < n and text[off:i] == word:  # one quoted word (its escapes still in place)
            return "".join(chars), [*where, i]
    return word, list(range(off, off + len(word) + 1))


def _split(text: str, start: int, end: int) -> list[list[Token]]:
    """Simple commands of unquoted words in ``text[start:end]``."""
    cmds: list[list[Token]] = [[]]
    i, n = start, end
    while i < n:
        c = text[i]
        if c in " \t\r":
            i += 1
        elif c in "\n;|&()":
            if cmds[-1]:
                cmds.append([])
            i += 1
        elif c == "#":
            eol = text.find("\n", i, n)
            i = n if eol < 0 else eol
        else:
            word: list[str] = []
            first: int | None = None
            j = i
            while j < n and text[j] not in " \t\r\n;|&()":
                ch = text[j]
                if ch == "\\":
                    if j + 1 < n and text[j + 1] != "\n":
                        first = j + 1 if first is None else first
                        word.append(text[j + 1])
                    j += 2
                elif ch in "'\"":
                    k = j + 1
                    while k < n and text[k] != ch:
                        k += 2 if ch == '"' and text[k] == "\\" else 1
                    first = j + 1 if first is None else first
                    word.append(text[j + 1 : k])
                    j = k + 1
                else:
                    first = j if first is None else first
                    word.append(ch)
                    j += 1
            cmds[-1].append(("".join(word), i if first is None else first))
            i = j
    return [c for c in cmds if c]


def _program(cmd: list[Token]) -> list[Token]:
    """Drop leading VAR=value assignments, sudo/env and shell keywords."""
    k = 0
    while k < len(cmd):
        word = cmd[k][0]
        prev = cmd[k - 1][0] if k else ""
        if (
            _ASSIGN.match(word)
            or word in _SHELL_PREFIX
            or (word.startswith("-") and prev in ("sudo", "env"))
        ):
            k += 1
            continue
        break
    return cmd[k:]


def _pip_args(cmd: list[Token]) -> list[Token] | None:
    """The arguments after ``install`` if the command is a pip install, else None."""
    prog = cmd[0][0].rsplit("/", 1)[-1]
    rest: list[Token] | None = None
    if _PIP.fullmatch(prog):
        rest = cmd[1:]
    elif _PYTHON.fullmatch(prog):
        for idx in range(1, len(cmd)):
            word = cmd[idx][0]
            if word == "-m" and idx + 1 < len(cmd) and _PIP.fullmatch(cmd[idx + 1][0]):
                rest = cmd[idx + 2 :]
                break
            if word.startswith("-m") and _PIP.fullmatch(word[2:]):
                rest = cmd[idx + 1 :]
                break
    elif prog == "uv" and len(cmd) > 1 and cmd[1][0] == "pip":
        rest = cmd[2:]
    if rest is None:
        return None
    idx = 0
    while idx < len(rest) and rest[idx][0].startswith("-"):
        idx += 2 if rest[idx][0] in _PIP_VALUE_OPTS else 1
    if idx < len(rest) and rest[idx][0] == "install":
        return rest[idx + 1 :]
    return None


def _check_pip(ctx: FileContext, pos: Position, args: list[Token]) -> None:
    from gpuport.scan.rules.deps.checker import check_index_url, check_requirement_spec

    idx = 0
    while idx < len(args):
        word, off = args[idx]
        idx += 1
        if _REDIRECT.match(word):
            idx += 1 if textre.fullmatch(r"\d*[<>]+&?", word) else 0
            continue
        if word.startswith("-"):
            name, eq, value = word.partition("=")
            voff = off + len(name) + 1
            if not eq and name in (_PIP_INDEX | _PIP_VALUE_OPTS) and idx < len(args):
                value, voff = args[idx]
                idx += 1
            if name in _PIP_INDEX and value and "$" not in value:
                url = value.split("=", 1)[1] if textre.match(r"^\w+=\w+://", value) else value
                line, col = pos(voff + len(value) - len(url))
                check_index_url(ctx, url, line, col)
            continue
        if not word or "$" in word or "*" in word or word.startswith((".", "/", "~")):
            continue
        line, col = pos(off)
        check_requirement_spec(ctx, word, line, col)


def _check_packages(ctx: FileContext, pos: Position, cmd: list[Token]) -> None:
    args = cmd[1:]
    idx = 0
    while idx < len(args) and args[idx][0].startswith("-"):
        idx += 2 if args[idx][0] in _PKG_VALUE_OPTS else 1
    if idx >= len(args) or args[idx][0] not in ("install", "in", "add", "create"):
        return
    idx += 1
    while idx < len(args):
        word, off = args[idx]
        idx += 1
        if word.startswith("-"):
            idx += 1 if word in _PKG_VALUE_OPTS else 0
            continue
        name = textre.split(r"[=<>~!]", word.rsplit("::", 1)[-1], maxsplit=1)[0]
        if _CUDA_PKG.match(name):
            line, col = pos(off)
            ctx.report("GP503", line, col, message=f"installs the CUDA package {word}")
