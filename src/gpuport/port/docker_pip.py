"""pip in a Dockerfile's RUN, read for its ROCm copy (``fix_containers``): which install has
no package left, which installs PyPI's torch (a CUDA build), which installs a package the
scan found has no ROCm route there. Text only: nothing is run."""

from __future__ import annotations

import shlex

from gpuport import textre
from gpuport.knowledge.port_routes import load_port_routes
from gpuport.port import docker_text
from gpuport.scan.finding import Finding

__all__ = [
    "SCRIPT",
    "drop_torch",
    "empty_install",
    "no_comments",
    "pypi_torch",
    "torch_unread",
    "unrouted_package",
]

_MARK = "# gpuport:"
#: a script a RUN runs (``./build.sh``, ``bash scripts/setup.sh 3.11``)
SCRIPT = textre.compile(r"(?<![\w.$/-])((?:\.{1,2}/|/)?[\w./-]*[\w-]\.(?:sh|bash))(?![\w.-])")
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")


def no_comments(chunk: str) -> str:
    return "".join(ln for ln in chunk.splitlines(keepends=True) if not ln.lstrip().startswith("#"))


_INSTALL_ARGS = textre.compile(r"\bpip3?\s+install\b((?:[^\n&;|]|\\\n)*)")
#: pip options that take a value (the next word unless written with ``=``)
_PIP_VALUED = frozenset(
    {
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "-c",
        "--constraint",
        "--target",
        "-t",
        "--prefix",
        "--root",
        "--trusted-host",
        "--cache-dir",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--progress-bar",
        "--src",
    }
)


#: one pip install command: the program (``pip``, ``pip3``, ``python3 -m pip``, ``uv pip``,
#: a path to one) and its arguments up to the end of the command
_PIP_CMD = textre.compile(
    r"((?:[\w./-]*/)?(?:uv[ \t]+|python3?(?:\.\d+)?[ \t]+-m[ \t]+)?pip3?[ \t]+install)"
    r"((?:[^\n&;|]|\\\n)*)"
)
_TORCH_WORD = textre.compile(r"^(torch|torchvision|torchaudio)(?:([=<>~!]=?)([^\s,;]*))?$")
_INDEX_OPTS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links")
#: a pip install and its arguments up to the end of the command, over continuation lines
_PIP_ARGS = textre.compile(
    r"((?:[\w./-]*/)?(?:uv[ \t]+|python3?(?:\.\d+)?[ \t]+-m[ \t]+)?pip3?[ \t]+install)"
    r"((?:\\\r?\n|[^\n\r&;|\\]|\\.)*)"
)
#: a torch requirement written back (39th re-run F11): the name, an operator, a version
_TORCH_PLAIN = textre.compile(
    r"(torch|torchvision|torchaudio)(?:(===?|>=|<=|~=|!=|<|>)([0-9][0-9A-Za-z.+*!]*))?"
)
_TORCH_NAMED = textre.compile(r"(?:torch|torchvision|torchaudio)(?:[^\w.-]|$)")


def _torch_words(args: str) -> list[tuple[str, str, int, int]] | None:
    """The torch words of one pip install's arguments: (text, requirement, start, end),
    options and their values skipped; None when a word that may name torch is not read
    exactly (quotes around only part of it, ``$``, a redirection, a comment...)."""
    words = docker_text.shell_words(args)
    if words is None:
        return None if "torch" in args.lower() else []
    out: list[tuple[str, str, int, int]] = []
    skip = False
    for text, value, s, e in words:
        if skip:
            skip = False
            continue
        if text.startswith("-"):
            skip = text in _PIP_VALUED
            continue
        if value is None:
            if "torch" in text.lower():
                return None
            continue
        if "torch" not in value:  # (both patterns below name torch: 40th re-run F10)
            continue
        if _TORCH_PLAIN.fullmatch(value) is not None:
            out.append((text, value, s, e))
        elif _TORCH_NAMED.match(value) is not None:
            return None  # torch[extra], torch>=2,<3: not a word written back
    return out


def torch_unread(chunk: str) -> str | None:
    """The first pip install of ``chunk`` whose torch words are not read exactly (written
    back, they could change how the shell reads the RUN), or None."""
    for m in _PIP_ARGS.finditer(no_comments(chunk)):
        if _torch_words(m.group(2)) is None:
            return " ".join(m.group(0).split())[:120]
    return None


def drop_torch(run: str) -> str | None:
    """``run`` without the torch words of its pip installs (whole words only: 39th re-run
    F16, ``import torch`` elsewhere in the RUN is not a package); None when one is not
    read exactly."""
    out: list[str] = []
    pos = 0
    for m in _PIP_ARGS.finditer(run):
        words = _torch_words(m.group(2))
        if words is None:
            return None
        if not words:
            continue
        out.append(run[pos : m.start(2)])
        out.append(docker_text.remove_words(m.group(2), [(s, e) for _, _, s, e in words]))
        pos = m.end(2)
    out.append(run[pos:])
    return "".join(out)


def pypi_torch(chunk: str, eol: str) -> str | None:
    """A RUN installing PyPI's torch on a ROCm base image (PyPI's Linux wheels are CUDA
    builds): the ROCm builds installed first, from the ROCm index of the pinned release (the
    latest known one when unpinned), so the RUN finds them satisfied. None when the RUN
    installs no torch from PyPI (an index of its own: the project chose it); ``""`` when a
    pinned release has no ROCm index gpuport knows, or a torch word is not read exactly
    (:func:`torch_unread`). The words are written quoted (39th re-run F11)."""
    for m in _PIP_ARGS.finditer(no_comments(chunk)):
        words = _torch_words(m.group(2))
        if words is None:
            return ""
        given = [w.split("=", 1)[0].strip("\"'") for w in m.group(2).split()]
        if any(w in _INDEX_OPTS for w in given):
            continue
        if not words:
            continue
        release: str | None = None
        for _, value, _, _ in words:
            t = _TORCH_PLAIN.fullmatch(value)
            if t is not None and t.group(1) == "torch" and t.group(2) == "==":
                release = t.group(3)
        routes = load_port_routes()
        hit = routes.torch_index(release) if release else routes.torch[-1]
        if hit is None:
            return ""
        pkgs = " ".join(shlex.quote(value) for _, value, _, _ in words)
        return (
            f"RUN {m.group(1)} --index-url {hit.index} {pkgs}  {_MARK} ROCm builds "
            f"of torch first: PyPI's are CUDA builds{eol}"
        )
    return None


def empty_install(run: str) -> bool:
    """Whether a ``pip install`` in ``run`` has options left and no package (``-r`` files
    and ``-e`` paths are packages)."""
    for m in _INSTALL_ARGS.finditer(run):
        words = m.group(1).replace("\\\n", " ").split()
        skip = False
        named = False
        for w in words:
            if skip:
                skip = False
                continue
            if w in ("-r", "--requirement", "-e", "--editable") or not w.startswith("-"):
                named = True
                break
            skip = w in _PIP_VALUED
        if not named:
            return True
    return False


def _packages(args: str) -> list[str]:
    """The package words of one pip install's arguments (options and their values
    skipped)."""
    out: list[str] = []
    skip = False
    for w in (x.strip("\"'") for x in args.replace("\\\n", " ").split()):
        if skip:
            skip = False
        elif w.startswith("-"):
            skip = w in _PIP_VALUED
        elif w:
            out.append(w)
    return out


#: dependency findings whose package, installed the default way, is a CUDA build (or a
#: version unusable on ROCm): GP104/GP105 (a CUDA index, a ``+cu`` pin) are routed by the copy
_UNROUTED = ("GP101", "GP102", "GP106", "GP107", "GP108", "GP109")


_MORE = textre.compile(r"\(and (\d+) more on this line\)")


def unrouted_package(hits: list[Finding], chunk: str, torch_routed: bool) -> str | None:
    """The package a RUN installs that the ROCm copy would still install as a CUDA build
    (a dependency finding on the RUN's lines), or None. torch and its companions are routed
    where ``torch_routed`` (a ROCm SDK or framework image, or a CUDA index the copy swaps);
    a finding that covers more packages on its line than the torch family's counts them."""
    words = [w for m in _PIP_CMD.finditer(no_comments(chunk)) for w in _packages(m.group(2))]
    torch_words = sum(1 for w in words if _TORCH_WORD.match(w) is not None)
    others = [w for w in words if _TORCH_WORD.match(w) is None]
    for f in hits:
        if f.rule_id not in _UNROUTED:
            continue
        name = f.message.split(":", 1)[0].strip()
        if textre.sub(r"[-_.]+", "-", name).lower() not in TORCH_FAMILY or not torch_routed:
            return name
        more = _MORE.search(f.message)
        if more is not None and int(more.group(1)) > max(torch_words - 1, 0):
            return others[0] if others else name
    return None
