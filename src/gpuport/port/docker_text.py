"""How Docker reads a Dockerfile, where the ROCm copy (``fix_containers``, ``python_image``)
edits it: instructions, ENV words, ``apt-get install`` arguments (thirty-ninth re-run).

The copy reads a Dockerfile with a plain grammar: instructions continued by a ``\\`` at the
very end of a line, ENV words ``KEY=value`` whose quotes are whole values, package words of
plain characters. Docker reads more (an ``# escape=`` directive, comment and empty lines
inside a continuation, a ``\\`` followed by blanks, heredocs, quotes inside a word), and a
copy edited by the plain reading there turned data into live instructions (F3, F4, F15).
Where the text does not fit the plain grammar the copy is not written, and the reason says
which line; nothing here runs anything.
"""

from __future__ import annotations

from gpuport import textre

__all__ = [
    "drop_packages",
    "env_without_cuda",
    "env_words",
    "instructions",
    "remove_words",
    "shell_words",
    "unreadable",
]

_DIRECTIVE = textre.compile(r"(?i)^\ufeff?[ \t]*#[ \t]*escape[ \t]*=[ \t]*(\S*)")
_TRAILING_BLANKS = textre.compile(r"\\[ \t]+\r?\n?$")
_HEREDOC = textre.compile(r"(?<!<)<<-?[ \t]*[\"']?[A-Za-z_]")
_KEYWORD = textre.compile(r"(?i)^\s*(\w+)")
#: ENV variables the copy drops or rewrites (fix_containers); an ENV naming one is edited
ENV_KEYS = (
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_REQUIRE_CUDA",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_ROOT",
    "CUDA_TOOLKIT_ROOT_DIR",
    "CUDACXX",
    "TORCH_CUDA_ARCH_LIST",
    "/usr/local/cuda",
)


def _blank_or_comment(line: str) -> bool:
    return not line.strip() or line.lstrip().startswith("#")


def instructions(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) 0-based physical lines of each instruction (continuations joined).
    Where Docker would read them otherwise, :func:`unreadable` says so first."""
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if _blank_or_comment(lines[i]):
            i += 1
            continue
        first = i
        while lines[i].rstrip("\r\n").endswith("\\") and i + 1 < len(lines):
            i += 1
        out.append((first, i))
        i += 1
    return out


def unreadable(path: str, text: str) -> str | None:
    """Why the copy cannot be sure it reads ``text`` (Dockerfile ``path``) as Docker does,
    or None."""
    if any(ch < " " or ch == "\x7f" for ch in path):
        return "its name holds a control character, which a note naming it would carry"
    lines = text.splitlines(keepends=True)
    for n, line in enumerate(lines, 1):
        d = _DIRECTIVE.match(line)
        if d is not None and d.group(1) != "\\":
            return (
                f"line {n} is an `# escape=` parser directive: Docker continues its lines "
                "with another character than `\\`, which gpuport does not read"
            )
        if _TRAILING_BLANKS.search(line):
            return (
                f"line {n} ends in a `\\` followed by blanks, which Docker reads as a continuation"
            )
    for first, last in instructions(lines):
        if last > first and _blank_or_comment(lines[last]):
            return (
                f"line {last + 1} is a comment or an empty line inside the instruction of line "
                f"{first + 1} (continued by `\\`): Docker skips it and reads the next line as "
                "part of that instruction"
            )
        chunk = "".join(lines[first : last + 1])
        kw = _KEYWORD.match(chunk)
        word = kw.group(1).upper() if kw else ""
        if word in ("RUN", "COPY", "ADD") and _HEREDOC.search(chunk):
            return f"line {first + 1} opens a heredoc, whose lines Docker reads as data"
        if word == "ENV" and any(k in chunk for k in ENV_KEYS) and env_words(chunk) is None:
            return (
                f"the ENV of line {first + 1} is not plain `KEY=value` words (a quote inside "
                "a word, a backslash, a comment line): which variables Docker sets is not read"
            )
    return None


_ENV_HEAD = textre.compile(r"(?i)^\s*ENV[ \t]+")
_SEP = r"(?:[ \t]|\\\r?\n)+"
_VALUE = r"(?:\"[^\"\\\r\n]*\"|'[^'\\\r\n]*'|[^\s\"'\\]*)"
_PAIR = textre.compile(rf"([A-Za-z_]\w*)=({_VALUE})")
_GAP = textre.compile(_SEP)
_END = textre.compile(r"[ \t]*\r?\n?$")
_LEGACY = textre.compile(r"([A-Za-z_]\w*)[ \t]")


def env_words(chunk: str) -> tuple[int, list[tuple[str, str | None, int, int]]] | None:
    """An ENV instruction read as Docker reads it, when it is plain: (where its arguments
    start, [(key, value, start, end)] of each ``KEY=value`` word, or one ``(key, None, ...)``
    for the legacy ``ENV KEY value`` form); None when it is not plain (a quote inside a
    word, a backslash that is not a line's continuation, words run together across a
    continuation, a comment line)."""
    head = _ENV_HEAD.match(chunk)
    if head is None or any(ln.lstrip().startswith("#") for ln in chunk.splitlines()[1:]):
        return None
    pos = head.end()
    lead = _GAP.match(chunk, pos)
    if lead is not None:
        pos = lead.end()
    legacy = _LEGACY.match(chunk, pos)
    if legacy is not None:
        return head.end(), [(legacy.group(1), None, pos, legacy.end(1))]
    words: list[tuple[str, str | None, int, int]] = []
    while True:
        m = _PAIR.match(chunk, pos)
        if m is None:
            return None
        words.append((m.group(1), m.group(2), m.start(), m.end()))
        if _END.fullmatch(chunk, m.end()) is not None:
            return head.end(), words
        gap = _GAP.match(chunk, m.end())
        if gap is None or not textre.search(r"[ \t]", gap.group(0)):
            return None  # `A=1\` + `B=2`: Docker joins them into one word
        pos = gap.end()


_NV_ENV = ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA")
_CUDA_ENV = ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR", "CUDACXX")


def env_without_cuda(text: str, target: str) -> str | None:
    """An ENV instruction without the NVIDIA/CUDA pairs; None when nothing is left. Only a
    plain ENV (``docker_text.env_words``) is edited, whole words at a time (39th re-run F15:
    a quote inside a word hid a pair in another's value); another is left as it is."""
    read = env_words(text)
    if read is None:
        return text  # (fix_containers declines the copy of a Dockerfile with such an ENV first)
    start, words = read
    if words[0][1] is None:  # legacy form: ENV KEY value
        key = words[0][0]
        if key in _NV_ENV or key in _CUDA_ENV:
            return None
        if key == "TORCH_CUDA_ARCH_LIST":
            return f"{text[:start]}PYTORCH_ROCM_ARCH {target}\n"
        return text
    kept: list[tuple[str, str]] = []  # (the word, what follows it)
    for i, (key, value, s, e) in enumerate(words):
        after = text[e : words[i + 1][2]] if i + 1 < len(words) else text[e:]
        word = text[s:e]
        if key in _NV_ENV or key in _CUDA_ENV:
            continue
        if key == "TORCH_CUDA_ARCH_LIST":
            word = f"PYTORCH_ROCM_ARCH={target}"
        elif key in ("PATH", "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH") and "/usr/local/cuda" in (
            value or ""
        ):
            value = value or ""
            quote = value[0] if value[:1] in ("'", '"') else ""  # kept: an unquoted value
            parts = [p for p in value.strip("\"'").split(":") if "/usr/local/cuda" not in p]
            if key == "PATH":  # with a blank would split into a new ENV pair (37th re-run F13)
                parts.insert(0, "/opt/rocm/bin")
            word = f"{key}={quote}{':'.join(parts)}{quote}"
        kept.append((word, after))
    if not kept:
        return None
    body = "".join(w + after for w, after in kept[:-1]) + kept[-1][0] + text[words[-1][3] :]
    return text[: words[0][2]] + body


_CUDA_PKG = textre.compile(
    r"(?:cuda(?:-[\w.+-]+)?|libcudnn[\w.+=-]*|libnccl[\w.+=-]*|nvidia-[\w.+=-]+"
    r"|libcublas[\w.+=-]*|libcusparse[\w.+=-]*|libcufft[\w.+=-]*|libcurand[\w.+=-]*"
    r"|libnv[\w.+=-]*|tensorrt[\w.+=-]*)"
)
#: one package manager's install command and its arguments, up to the end of the command
#: (``&&``, ``;``, ``|``, a line end that is not a continuation)
_INSTALL = textre.compile(
    r"\b(?:apt-get|apt|yum|dnf)(?:[ \t]+-[^\s&;|]+)*[ \t]+install\b"
    r"((?:\\\r?\n|[^\n\r&;|\\]|\\.)*)"
)
_CUDA_WORD = textre.compile(rf"(?:{_CUDA_PKG.pattern})(?![\w.+-])")
_PLAIN_ARGS = textre.compile(r"(?:[\w.,=+:/@%~ \t-]|\\\r?\n)*")


def drop_packages(chunk: str) -> str | None:
    """A RUN without the CUDA/NVIDIA packages of its package manager's install commands:
    whole argument words only (``command -v nvidia-smi``, ``/usr/local/cuda/...`` elsewhere
    in the RUN are not packages: 39th re-run F16). None when an install that names such a
    package has arguments that are not plain words (quotes, ``$``, globs...)."""
    out: list[str] = []
    pos = 0
    for m in _INSTALL.finditer(chunk):
        args = m.group(1)
        words = shell_words(args)
        if words is None:
            if _CUDA_WORD.search(args):
                return None
            continue
        if not any(_CUDA_WORD.search(w) for w, _, _, _ in words):
            continue
        if _PLAIN_ARGS.fullmatch(args) is None:
            return None
        drop = [(s, e) for w, _, s, e in words if _CUDA_PKG.fullmatch(w.split("=", 1)[0])]
        out.append(chunk[pos : m.start(1)])
        out.append(remove_words(args, drop))
        pos = m.end(1)
    out.append(chunk[pos:])
    return "".join(out)


_TOKEN = textre.compile(r"(?:[^\s'\"\\]+|'[^']*'|\"[^\"\\]*\")+")
_BARE = textre.compile(r"[\w.,=~!+@%:/-]+")
_SINGLE = textre.compile(r"'([^']*)'")
_DOUBLE = textre.compile(r"\"([^\"\\$`]*)\"")
_CONT = textre.compile(r"\\\r?\n")


def shell_words(args: str) -> list[tuple[str, str | None, int, int]] | None:
    """The shell words of a command's arguments (``\\``-newline continuations between
    them): (text, its literal value or None when it is not plain, start, end). None when
    the words are not read exactly: an unpaired quote, a backslash that is not a
    continuation, a continuation with no blank on either side (Docker joins the two lines
    into one word), a ``#`` comment."""
    flat = args
    for c in _CONT.finditer(args):
        before = args[c.start() - 1 : c.start()]
        after = args[c.end() : c.end() + 1]
        if before not in (" ", "\t") and after not in (" ", "\t"):
            return None
        flat = flat[: c.start()] + " " * (c.end() - c.start()) + flat[c.end() :]
    out: list[tuple[str, str | None, int, int]] = []
    pos = 0
    for m in _TOKEN.finditer(flat):
        if flat[pos : m.start()].strip(" \t") or m.group(0).startswith("#"):
            return None
        text = m.group(0)
        lit = _SINGLE.fullmatch(text) or _DOUBLE.fullmatch(text)
        value = lit.group(1) if lit else (text if _BARE.fullmatch(text) else None)
        out.append((text, value, m.start(), m.end()))
        pos = m.end()
    if flat[pos:].strip(" \t"):
        return None
    return out


def remove_words(args: str, spans: list[tuple[int, int]]) -> str:
    """``args`` without the words at ``spans`` (each with the blanks before it); a line
    left with no word goes, with the continuation that led to it (a continuation into an
    empty line would run into the next instruction)."""
    out = args
    for s, e in sorted(spans, reverse=True):
        while s > 0 and out[s - 1] in " \t":
            s -= 1
        out = out[:s] + out[e:]
    parts = textre.split(r"(\\\r?\n)", out)  # segment, continuation, segment, ...
    kept = [parts[0] if parts[0].strip() else " "]
    for i in range(1, len(parts), 2):
        if parts[i + 1].strip():
            kept += [parts[i], parts[i + 1]]
    return "".join(kept)
