"""pip in a Dockerfile's RUN, read for its ROCm copy (``fix_containers``): which install has
no package left, which installs PyPI's torch (a CUDA build), which installs a package the
scan found has no ROCm route there. Text only: nothing is run."""

from __future__ import annotations

from gpuport import textre
from gpuport.knowledge.port_routes import load_port_routes
from gpuport.scan.finding import Finding

__all__ = ["SCRIPT", "empty_install", "no_comments", "pypi_torch", "unrouted_package"]

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


def pypi_torch(chunk: str, eol: str) -> str | None:
    """A RUN installing PyPI's torch on a ROCm base image (PyPI's Linux wheels are CUDA
    builds): the ROCm builds installed first, from the ROCm index of the pinned release (the
    latest known one when unpinned), so the RUN finds them satisfied. None when the RUN
    installs no torch from PyPI (an index of its own: the project chose it); ``""`` when a
    pinned release has no ROCm index gpuport knows."""
    for m in _PIP_CMD.finditer(no_comments(chunk)):
        words = [w.strip("\"'") for w in m.group(2).replace("\\\n", " ").split()]
        if any(w in _INDEX_OPTS or w.split("=", 1)[0] in _INDEX_OPTS for w in words):
            continue
        pkgs: list[str] = []
        release: str | None = None
        skip = False
        for w in words:
            if skip:
                skip = False
                continue
            if w.startswith("-"):
                skip = w in _PIP_VALUED
                continue
            t = _TORCH_WORD.match(w)
            if t is None:
                continue
            pkgs.append(w)
            if t.group(1) == "torch" and t.group(2) == "==":
                release = t.group(3)
        if not pkgs:
            continue
        routes = load_port_routes()
        hit = routes.torch_index(release) if release else routes.torch[-1]
        if hit is None:
            return ""
        return (
            f"RUN {m.group(1)} --index-url {hit.index} {' '.join(pkgs)}  {_MARK} ROCm builds "
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
