"""How Docker reads a Dockerfile, where the ROCm copy (``fix_containers``, ``python_image``)
edits it: instructions, ENV words, ``apt-get install`` arguments (thirty-ninth re-run).

The copy reads a Dockerfile with a plain grammar: instructions continued by a ``\\`` at the
very end of a line, ENV words ``KEY=value`` whose quotes are whole values, package words of
plain characters. Docker reads more (an ``# escape=`` directive, comment and empty lines
inside a continuation, a ``\\`` followed by blanks, heredocs, quotes inside a word), and a
copy edited by the plain reading there turned data into live instructions (F3, F4, F15).
Where the text does not fit the plain grammar the copy is not written, and the reason says
which line; nothing here runs anything.

The fortieth re-run read further as BuildKit's parser does: a line ends an instruction at an
escaped backslash (``\\\\``, where older builders continue it: declined, F2); blanks before
a comment, a directive or a keyword are Go's ``unicode.IsSpace`` (a line led by one other
than a space or a tab is declined, F15), lines break at ``\\n`` only; a heredoc opener is
any word ``^(\\d*)<<(-?)([^<]*)$`` of a RUN, COPY, ADD or ONBUILD with its continuations
joined (F1). Reading is linear in the text (F10).
"""

from __future__ import annotations

import string

from gpuport import textre

__all__ = [
    "CUDA_PACKAGE",
    "continues",
    "directive_lines",
    "drop_packages",
    "env_without_cuda",
    "env_words",
    "instructions",
    "remove_words",
    "shell_words",
    "unreadable",
]

#: the blanks Go's ``unicode.IsSpace`` knows: BuildKit trims them from a line's head before
#: it reads a comment, a parser directive or an instruction (40th re-run F15)
GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    + "".join(map(chr, range(0x2000, 0x200B)))
    + ("\u2028\u2029\u202f\u205f\u3000")
)
_SPACE_CLASS = r"[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
_DIRECTIVE = textre.compile(
    rf"(?i)^\ufeff?{_SPACE_CLASS}*#{_SPACE_CLASS}*escape{_SPACE_CLASS}*={_SPACE_CLASS}*(\S*)"
)
#: BuildKit's parser directives (``reDirectives``, keys it knows): they stay first in a copy
_PARSER_DIRECTIVE = textre.compile(
    r"(?i)^#[\t\n\f\r ]*(syntax|escape|check)[\t\n\f\r ]*=[\t\n\f\r ]*[^\t\n\f\r ]"
)
#: a line break Python's ``splitlines`` sees and Docker does not (it splits at ``\n`` only)
_ODD_BREAK = textre.compile(r"[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
#: a heredoc opener as BuildKit finds one (40th re-run F1): a word ``^(\d*)<<(-?)([^<]*)$``
#: of the instruction with its continuations joined (``<<EOF``, ``<<\EOF``, ``<<1``,
#: ``<<"9 x"``, ``2<<-$X``); and the shell's own ``cat<<EOF``, ``<< EOF``, read as one before
_HEREDOC = textre.compile(
    rf"(?:^|{_SPACE_CLASS})\d*<<-?[^<\t\n\v\f\r ]|(?<!<)<<-?[ \t]*[\"']?[A-Za-z_]"
)
#: the instructions whose heredocs BuildKit reads (heredocDirectives, and ONBUILD's
#: heredocCompoundDirectives)
_HEREDOC_KEYWORDS = ("RUN", "COPY", "ADD", "ONBUILD")
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
    bare = line.lstrip(GO_SPACE)
    return not bare or bare.startswith("#")


def _body(line: str) -> str:
    """A line as BuildKit's continuation test sees it: no line end, no trailing blanks."""
    return line.rstrip("\r\n").rstrip(" \t")


def continues(line: str) -> bool:
    """Whether BuildKit continues ``line`` onto the next one: it ends in ``\\`` (blanks
    after it allowed) not led by another ``\\`` (``([^\\])\\[ \t]*$|^\\[ \t]*$``: a
    final ``\\\\`` is an escaped backslash, the instruction ends there; 40th re-run F2)."""
    body = _body(line)
    return body.endswith("\\") and not body.endswith("\\\\")


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
        while continues(lines[i]) and i + 1 < len(lines):
            i += 1
        out.append((first, i))
        i += 1
    return out


def directive_lines(lines: list[str]) -> int:
    """How many lines at the head of a Dockerfile are parser directives Docker honours
    (``# syntax=``, ``# escape=``, ``# check=``, blanks before the ``#`` trimmed as BuildKit
    trims them): a header written into a copy goes after them (40th re-run F15)."""
    n = 0
    for i, line in enumerate(lines):
        bare = (line.removeprefix("\ufeff") if i == 0 else line).lstrip(GO_SPACE)
        if _PARSER_DIRECTIVE.match(bare) is None:
            break
        n += 1
    return n


def _joined(lines: list[str], first: int, last: int) -> str:
    """An instruction as BuildKit joins it: each continuation's ``\\`` (and the blanks
    after it) and line end taken out."""
    parts = []
    for line in lines[first : last + 1]:
        body = line.rstrip("\r\n")
        if continues(line):
            body = _body(line)[:-1]
        parts.append(body)
    return "".join(parts)


def _keyword(chunk: str) -> str:
    """An instruction's keyword, upper case (its leading ASCII letters)."""
    bare = chunk.lstrip(" \t")
    n = 0
    while n < len(bare) and n < 12 and bare[n].isascii() and bare[n].isalpha():
        n += 1
    return bare[:n].upper()


def _blank_name(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def unreadable(path: str, text: str) -> str | None:
    """Why the copy cannot be sure it reads ``text`` (Dockerfile ``path``) as Docker does,
    or None."""
    if any(ch < " " or ch == "\x7f" for ch in path):
        return "its name holds a control character, which a note naming it would carry"
    odd = _ODD_BREAK.search(text)
    if odd is not None or text.count("\r") != text.count("\r\n"):
        what = _blank_name(odd.group(0)) if odd is not None else "a carriage return"
        return (
            f"it holds {what}, which Python splits lines at and Docker does not (it splits "
            "at line feeds only)"
        )
    lines = text.splitlines(keepends=True)
    for n, line in enumerate(lines, 1):  # plain string tests: a line costs no pattern
        d = _DIRECTIVE.match(line) if "escape" in line.lower() else None
        if d is not None and d.group(1) != "\\":
            return (
                f"line {n} is an `# escape=` parser directive: Docker continues its lines "
                "with another character than `\\`, which gpuport does not read"
            )
        bare = line.removeprefix("\ufeff") if n == 1 else line
        lead = bare[: len(bare) - len(bare.lstrip(GO_SPACE))]
        odd_blank = next((ch for ch in lead if ch not in " \t\r\n"), None)
        if odd_blank is not None and bare.strip(GO_SPACE):
            return (
                f"line {n} begins with a blank other than a space or a tab "
                f"({_blank_name(odd_blank)}), which Docker trims where gpuport does not"
            )
        body = _body(line)
        if body.endswith("\\") and len(body) < len(line.rstrip("\r\n")):
            return (
                f"line {n} ends in a `\\` followed by blanks, which Docker reads as a continuation"
            )
        if body.endswith("\\\\") and not _blank_or_comment(line):
            return (
                f"line {n} ends in `\\\\`: BuildKit reads an escaped backslash and ends the "
                "instruction there, older builders continue it onto the next line"
            )
    for first, last in instructions(lines):
        if last > first and _blank_or_comment(lines[last]):
            return (
                f"line {last + 1} is a comment or an empty line inside the instruction of line "
                f"{first + 1} (continued by `\\`): Docker skips it and reads the next line as "
                "part of that instruction"
            )
        chunk = "".join(lines[first : last + 1])
        word = _keyword(chunk)
        if (
            word in _HEREDOC_KEYWORDS
            and "<" in chunk
            and _HEREDOC.search(_joined(lines, first, last))
        ):
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
    r"|libnv[\w.+=-]*|tensorrt[\w.+=-]*"
    # NVIDIA's Data Center GPU Manager, from NVIDIA's CUDA apt repository (J57)
    r"|datacenter-gpu-manager[\w.+=-]*|libdcgm[\w.+=-]*)"
)
#: an apt/yum package of NVIDIA's CUDA stack (the words :func:`drop_packages` leaves out)
CUDA_PACKAGE = _CUDA_PKG.pattern
#: one package manager's install command and its arguments, up to the end of the command
#: (``&&``, ``;``, ``|``, a line end that is not a continuation)
_INSTALL = textre.compile(
    r"\b(?:apt-get|apt|yum|dnf)(?:[ \t]+-[^\s&;|]+)*[ \t]+install\b"
    r"((?:\\\r?\n|[^\n\r&;|\\]|\\.)*)"
)
_CUDA_WORD = textre.compile(rf"(?:{_CUDA_PKG.pattern})(?![\w.+-])")
_PLAIN_ARGS = textre.compile(r"(?:[\w.,=+:/@%~ \t-]|\\\r?\n)*")


#: a text each ``_CUDA_PKG`` alternative holds: a word without one is not looked at
_CUDA_NEEDLES = (
    "cuda",
    "cudnn",
    "nccl",
    "nvidia-",
    "cublas",
    "cusparse",
    "cufft",
    "curand",
    "libnv",
    "tensorrt",
    "datacenter-gpu-manager",
    "libdcgm",
)


def _maybe_cuda(word: str) -> bool:
    return any(n in word for n in _CUDA_NEEDLES)


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
        named = [x for x in words if _maybe_cuda(x[0]) and _CUDA_WORD.search(x[0])]
        if not named:
            continue
        if _PLAIN_ARGS.fullmatch(args) is None:
            return None
        drop = [(s, e) for w, _, s, e in named if _CUDA_PKG.fullmatch(w.split("=", 1)[0])]
        out.append(chunk[pos : m.start(1)])
        out.append(remove_words(args, drop))
        pos = m.end(1)
    out.append(chunk[pos:])
    return "".join(out)


_TOKEN = textre.compile(r"(?:[^\s'\"\\]+|'[^']*'|\"[^\"\\]*\")+")
_SINGLE = textre.compile(r"'([^']*)'")
_DOUBLE = textre.compile(r"\"([^\"\\$`]*)\"")
#: a continuation with no blank on either side: Docker joins the two lines into one word
_JOINED = textre.compile(r"(?:^|[^ \t])\\\r?\n(?:[^ \t]|$)")


def shell_words(args: str) -> list[tuple[str, str | None, int, int]] | None:
    """The shell words of a command's arguments (``\\``-newline continuations between
    them): (text, its literal value or None when it is not plain, start, end). None when
    the words are not read exactly: an unpaired quote, a backslash that is not a
    continuation, a continuation with no blank on either side (Docker joins the two lines
    into one word), a ``#`` comment. Linear in ``args`` (40th re-run F10: the text was
    rebuilt once per continuation)."""
    if _JOINED.search(args) is not None:
        return None
    # each continuation becomes as many blanks: offsets stay those of ``args``
    flat = args.replace("\\\r\n", "   ").replace("\\\n", "  ")
    if not any(q in flat for q in "'\"\\"):
        return _plain_words(flat)
    out: list[tuple[str, str | None, int, int]] = []
    pos = 0
    for m in _TOKEN.finditer(flat):
        if flat[pos : m.start()].strip(" \t") or m.group(0).startswith("#"):
            return None
        text = m.group(0)
        out.append((text, _literal(text), m.start(), m.end()))
        pos = m.end()
    if flat[pos:].strip(" \t"):
        return None
    return out


def _plain_words(flat: str) -> list[tuple[str, str | None, int, int]] | None:
    """:func:`shell_words` of a text with no quote and no backslash: its words are the runs
    of characters between blanks (what ``_TOKEN`` finds there, without a match per word)."""
    if any(c in flat for c in "\n\r\f\v"):
        return None  # (a gap of other blanks than spaces and tabs)
    out: list[tuple[str, str | None, int, int]] = []
    pos = 0
    for word in flat.replace("\t", " ").split(" "):
        if word:
            if word.startswith("#"):
                return None
            out.append((word, _literal(word), pos, pos + len(word)))
        pos += len(word) + 1
    return out


#: the characters of a bare word (``_BARE``), deleted by ``str.translate``
_BARE_CHARS = str.maketrans("", "", "_.,=~!+@%:/-" + string.ascii_letters + string.digits)


def _literal(text: str) -> str | None:
    """The value of a shell word when it is plain (quoted whole, or bare characters)."""
    if text.isascii() and text.isalnum():
        return text
    lit = None
    if text[:1] == "'":
        lit = _SINGLE.fullmatch(text)
    elif text[:1] == '"':
        lit = _DOUBLE.fullmatch(text)
    if lit is not None:
        return lit.group(1)
    return text if text and not text.translate(_BARE_CHARS) else None


def remove_words(args: str, spans: list[tuple[int, int]]) -> str:
    """``args`` without the words at ``spans`` (each with the blanks before it); a line
    left with no word goes, with the continuation that led to it (a continuation into an
    empty line would run into the next instruction). Linear in ``args`` (40th re-run F10)."""
    pieces: list[str] = []
    pos = 0
    for s, e in sorted(spans):
        while s > pos and args[s - 1] in " \t":
            s -= 1
        pieces.append(args[pos:s])
        pos = max(pos, e)
    pieces.append(args[pos:])
    out = "".join(pieces)
    parts = _continued(out)
    kept = [parts[0] if parts[0].strip() else " "]
    for i in range(1, len(parts), 2):
        if parts[i + 1].strip():
            kept += [parts[i], parts[i + 1]]
    return "".join(kept)


def _continued(text: str) -> list[str]:
    """``text`` as segment, continuation (``\\`` and a line end), segment, ... (what
    ``textre.split(r"(\\\r?\n)", text)`` gives, with no match object per line)."""
    parts: list[str] = []
    cur: list[str] = []
    rows = text.split("\n")
    for k, row in enumerate(rows):
        if k == len(rows) - 1:
            cur.append(row)
        elif row.endswith("\\\r"):
            parts += ["".join([*cur, row[:-2]]), "\\\r\n"]
            cur = []
        elif row.endswith("\\"):
            parts += ["".join([*cur, row[:-1]]), "\\\n"]
            cur = []
        else:
            cur.append(row + "\n")
    parts.append("".join(cur))
    return parts
