"""The words and sentences of a documented ROCm route claim (read by
:mod:`gpuport.scan.project.routes_docs`).

* :data:`PROMISE`: a sentence that puts ROCm/AMD support in the future ("coming soon", "we
  plan to", "in a future release") states no present support; so do "is on our roadmap",
  "will be added later this year", "next release", "we are working on" (forty-fourth re-run
  F15);
* :func:`sentence` reads a claim to the end of its sentence where a paragraph wraps it, and
  :func:`wrapped_against` reads a denial or hedge there; a parenthetical insertion (",
  as of the 2.3 release ..., ", "(...)", "-- ... --") between the ROCm/AMD word and the
  denial is skipped, so it is neither counted in the distance nor read as another subject
  (forty-fourth re-run F14);
* :func:`other_api`: a claim of AMD support whose sentence names no ROCm/HIP (nor a ROCm
  install) but gives its means, "through/via/using X" or an "X backend" with X neither a way
  of building or packaging this code nor the hardware, is another API's route (DirectX 12,
  OpenGL, wgpu, Kompute... as OpenCL or Vulkan): no ROCm build of this code (forty-fourth
  re-run F16); so is "with X" where X is a name (forty-fifth re-run F15: "runs on AMD Radeon
  GPUs with ZLUDA", a CUDA translation layer, as SCALE) and not the hardware, an OS or a
  way of building this code;
* :data:`ELSEWHERE`: a sentence that places the support outside this repository ("in our
  fork, x-rocm, not in this repository", "a separate repository", "a third-party plugin")
  states no route of this code (forty-fifth re-run F9); so does a repository or plugin named
  by a name of its own, a port or project called downstream, or "its own repository" ("see
  the x-rocm repository", "x-rocm, our downstream port": forty-sixth re-run F7);
* :func:`other_api` also reads "using/via/through/with" a CUDA translation layer (ZLUDA,
  SCALE, chipStar) or a compiler or toolchain that is not ROCm/HIP's (nor clang/LLVM, which
  build HIP) as no ROCm route, even where "(ROCm)" labels the hardware (forty-sixth re-run
  F6: "runs on AMD GPUs (ROCm) using the SCALE compiler");
* :data:`WITHDRAWN`: support stated in the past ("not anymore", "used to", "was supported
  until 1.4", "broken since 2.0", "deprecated") is no present support (forty-fifth re-run
  F10); :mod:`routes_docs` reads it as a denial.
"""

from __future__ import annotations

import itertools
import re

from gpuport import textre

__all__ = [
    "ELSEWHERE",
    "HEADING",
    "PROMISE",
    "WITHDRAWN",
    "WORD",
    "elsewhere",
    "other_api",
    "sentence",
    "wrapped_against",
]

WORD = textre.compile(r"\b(?:ROCm|AMD|HIP|Instinct|Radeon|MI[123]\d\dX?|gfx\d{3,4}\w*)\b", re.I)
HEADING = textre.compile(r"^[ \t]*#{1,6}[ \t]+(.*)$|^[ \t]*<h[1-6][^>]*>(.*?)</h[1-6]>", re.I)

#: A promise, not a route: "NVIDIA GPUs, soon AMD & Intel setups", "AMD support is upcoming",
#: "ROCm support is still under development".
_LATER = (
    r"\b(?:soon|upcoming|in\s+the\s+future|work\s+in\s+progress"
    # "is on our roadmap", "on the 2025 roadmap" (forty-fourth re-run F15)
    r"|on\s+(?:the|our|its|their|my)\s+(?:[\w-]+\s+)?road-?map|road-?map\s+item"
    # "support for AMD GPUs via ROCm is still under development" (mcx, J46)
    r"|(?:under|in)\s+(?:active\s+)?development|being\s+(?:developed|worked\s+on)|planned"
    r"|being\s+(?:added|ported|implemented)|in\s+the\s+works|eventually|some\s?day"
    # a stated plan: "we plan to support AMD GPUs through ROCm in a future release" (forty-
    # third re-run F15)
    r"|plan(?:s|ning)?\s+to|intend(?:s|ing)?\s+to"
    r"|(?:a|an|the)\s+(?:future|later)\s+(?:release|version)|future\s+(?:releases|versions)"
    # future tense and dates: "will be added later this year", "in the next release",
    # "we are working on it" (forty-fourth re-run F15)
    r"|will\s+(?:soon\s+|eventually\s+|also\s+|then\s+)?(?:be\s+)?(?:added|implemented"
    r"|introduced|released|ported|landing|arriving|coming)"
    r"|(?:yet\s+)?to\s+be\s+(?:added|implemented|ported|released|done)"
    r"|(?:later|earlier)\s+this\s+(?:year|month|quarter|spring|summer|fall|autumn|winter)"
    r"|(?:by|before|at)\s+the\s+end\s+of\s+(?:the|this|next)\s+(?:year|month|quarter)"
    r"|(?:the|our|a)\s+(?:next|coming|upcoming)\s+(?:major\s+|minor\s+)?(?:release|version)"
    r"|(?:we\s+are|we['’]re|I\s+am|I['’]m)\s+(?:currently\s+|actively\s+|still\s+)?"
    r"working\s+on)\b"
)
PROMISE = textre.compile(
    rf"{_LATER}[^.\n]{{0,30}}\b(?:ROCm|AMD|HIP)\b|\b(?:ROCm|AMD|HIP)\b[^.\n]{{0,40}}{_LATER}"
    # a wish: "we would love support for AMD GPUs (PRs welcome)", "AMD support is wanted"
    r"|\bwould\s+(?:love|like|welcome)\b|\b(?:is|are)\s+wanted\b|\bhelp\s+wanted\b"
    r"|\b(?:PRs?|pull\s+requests?|contributions?)\s+(?:are\s+)?welcome\b|\bfeature\s+request\b",
    re.I,
)

#: support in the past: withdrawn, broken, deprecated (a text of a denial, for the
#: negation pattern of :mod:`routes_docs`)
WITHDRAWN = (
    r"\bany\s?more\b|\b(?:it|we|they|this|that|which|I|one|also|once|support|ROCm|HIP|AMD"
    r"|GPUs?)\s+used\s+to\b|\b(?:formerly|previously|originally)"
    r"\s+(?:supported|available|worked|ran|ported|supporting|had)\b"
    r"|\b(?:was|were)\s+(?:once\s+|previously\s+|formerly\s+|originally\s+)?(?:supported"
    r"|available|working|usable)\s+(?:until|up\s+to|before|through|in\s+(?:v|version|release"
    r"|the\s+past|older|earlier|old))\b|\b(?:supported|available|working)\s+until\b"
    r"|\b(?:is|are|was|were|been|now|currently|still|remains?|got|became|become)\s+broken\b"
    r"|\bbroken\s+(?:since|as\s+of|after|from|starting|with\s+(?:v|version|release|the\s+latest"
    r"|recent|newer))\b|\(\s*(?:currently\s+)?broken\b|[–—-]\s*(?:currently\s+)?broken\b"
    r"|\b(?:support|backend|build|port)\s+(?:is|are|was|has\s+been)\s+deprecated\b"
    r"|\(\s*deprecated\b|\bdeprecated\s+(?:since|as\s+of)\b"
    r"|\bstopped\s+(?:supporting|working|running|building)\b"
    r"|\b(?:retired|unmaintained|defunct|bit-?rotted)\b"
)
#: a claim that places the support outside this repository: "in our fork, x-rocm, not in this
#: repository", "lives in a separate repository", "through a third-party plugin" (forty-fifth
#: re-run F9); "this fork adds ROCm support" is this repository's (see :func:`elsewhere`)
ELSEWHERE = textre.compile(
    r"\b(?:in|at|from|via|through|using|use|see|with|on|by|into)\s+(?:(?:our|a|an|the|my|their"
    r"|its|his|her|this|separate|community|unofficial|official|downstream|experimental)\s+)*"
    r"(?:[\w.@/-]+\s+){0,2}?forks?\b"
    r"|\b(?:another|other|separate|different|sister|companion|downstream|dedicated|external"
    r"|third[- ]party|community|unofficial|independent)\s+(?:[\w.@/-]+\s+){0,2}?(?:repo(?:s"
    r"|sitory|sitories)?|projects?|packages?|plugins?|forks?|branch(?:es)?|code-?bases?|add-?ons?"
    # "x-rocm, our downstream port" (forty-sixth re-run F7)
    r"|extensions?|ports?|mirrors?|derivatives?|spin-?offs?)\b"
    r"|\b(?:its|their|a|an)\s+own\s+(?:repo(?:sitory)?|project|code-?base)\b"
    r"|\b(?:maintained|developed|lives?|kept|hosted)\s+downstream\b"
    r"|\bnot\s+(?:here|(?:in|on|part\s+of|from)\s+(?:this|the\s+(?:main|upstream|present))"
    r"\s+(?:repo(?:sitory)?|project|package|code-?base|branch|tree))\b"
    r"|\boutside\s+(?:of\s+)?(?:this|the\s+main)\s+(?:repo(?:sitory)?|project|code-?base)\b"
    r"|\b(?:maintained|hosted|developed|lives?|kept|provided)\s+(?:separately|elsewhere"
    r"|externally|out\s+of\s+tree)\b|\belsewhere\b",
    re.I,
)
_THIS = textre.compile(r"\b(?:this|the\s+present|here)\b", re.I)
#: a repository or plugin named by its own name: "see the x-rocm repository", "in the
#: foo-hip repo", "the bar plugin" (forty-sixth re-run F7); not a port ("our OpenCL port"
#: may be this code's); the name is checked by :func:`elsewhere` (not this one, nor ROCm's
#: own or a package index's)
_NAMED_REPO = textre.compile(
    r"\b([\w.@/-]+)\s+(?:GitHub\s+|GitLab\s+|git\s+)?(?:repo(?:s|sitory|sitories)?|plugins?)"
    r"\b",
    re.I,
)
#: names that leave a repository this one, ROCm's own, or a package source
_OWN_NAME = textre.compile(
    r"^(?:this|these|that|the|a|an|our|my|its|their|same|main|present|current|upstream"
    r"|official|source|code|project|git|github|gitlab|package|packages|apt|yum|dnf|zypper|pip"
    r"|pypi|conda|conda-forge|docker|rocm[\d.-]*|amd|hip[\d.]*|radeon|amdgpu|gpu|gpus|cuda|nvidia|ubuntu"
    r"|debian|software|repo|repository|in|on|at|to|from|of|for|and|or|with|by|via|the|full"
    r"|native|initial|partial|experimental|working|new|first|complete)$",
    re.I,
)


def elsewhere(said: str) -> bool:
    """Whether a sentence places the ROCm support it claims outside this repository
    (:data:`ELSEWHERE`, or a repository or plugin named by a name of its own: "see the
    x-rocm repository"); a fork that is this repository ("this fork adds ROCm"), "this
    repository", "the ROCm apt repository" are not."""
    for m in ELSEWHERE.finditer(said):
        text = m.group()
        if text.lower().endswith(("fork", "forks")) and _THIS.search(text):
            continue  # this repository is the fork
        return True
    for m in _NAMED_REPO.finditer(said):
        names = [n for n in m.group(1).split("/") if n.strip(".-")]
        if names and not all(_OWN_NAME.match(n.strip(".-")) for n in names):
            return True
    return False


#: where a wrapped sentence ends: a full stop, "!" or "?" before a space or the line's end
_STOP = textre.compile(r"[.!?](?:\s|$)")
_ABBREV = ("i.e", "e.g", "etc", " vs", "cf")
_OTHER_API = textre.compile(
    r"\b(?:OpenCL|Vulkan|SYCL|DirectML|Metal|oneAPI|WebGPU|ZLUDA|chipStar)\b", re.I
)
#: "with X" as the means, X a name (case-sensitive: "with ZLUDA", "with SCALE"; not "with
#: 16GB of memory", "with the same code"): forty-fifth re-run F15
_WITH = textre.compile(
    r"\bwith\s+(?:the\s+help\s+of\s+|the\s+|a\s+)?([A-Z][\w.+-]*(?:\s+[A-Z][\w.+-]*){0,2})"
)
#: names "with X" gives that are no means: an OS, a language, a vendor's product line
_NOT_MEANS = textre.compile(
    r"\b(?:Linux|Windows|WSL2?|mac\s?OS|Ubuntu|Debian|Fedora|RHEL|CentOS|Arch|Python|C\+\+"
    r"|RDNA\w*|CDNA\w*|Vega|Navi|Ryzen|EPYC|VRAM|GB|MB|TB|The|A|An|This|Our|Its|Both|All"
    r"|Any|No|At|Support|Full|Native|Official|Some|Many|Most|Multi-?GPU|Multiple|FP\d*|BF16"
    r"|INT\d+|TF32|Flash\w*|Docker|Conda)\b"
)
#: ROCm, HIP or a ROCm install named, also inside a word (``whl/rocm6.2``, ``hipcc``,
#: ``rocBLAS``, ``AMDGPU.jl``, ``repo.radeon.com``)
_ROCM_API = textre.compile(
    r"(?:^|[^a-z])(?:rocm|hip(?:cc|ify|blas\w*|fft|rand|sparse|solver|cub|_\w+)?(?:[^a-z]|$)"
    r"|roc(?:blas|fft|rand|sparse|solver|prim|thrust|wmma)|miopen|rccl|migraphx|amdgpu"
    r"|repo\.radeon)",
    re.I,
)
#: the means a sentence gives AMD support by: "through the DirectX 12 backend", "via Kompute",
#: "using wgpu", "on top of OpenGL"; cut at a conjunction or another preposition
_MEANS = textre.compile(
    r"\b(?:through|via|using|atop|on\s+top\s+of|by\s+(?:means|way)\s+of|thanks\s+to"
    r"|(?:backed|powered|driven)\s+by|built\s+on)\s+([^.,;:!?()\[\]\n]{1,60})"
    r"|\b((?:[\w.+-]+\s+){0,2}?[\w.+-]+)\s+back-?end\b",
    re.I,
)
_MEANS_CUT = textre.compile(
    r"\s(?:and|or|on|for|with|in|to|when|if|as|but|where|which|that|while|from)\s", re.I
)
#: a means that is the hardware itself ("using AMD or NVIDIA GPUs") or a way of building or
#: packaging this code ("through JIT fused-kernel compilation", "via the Docker image"), or a
#: framework whose AMD build is the ROCm one: not another GPU API
_HARDWARE = textre.compile(
    r"\b(?:[GCNT]PUs?|cards?|devices?|hardware|accelerators?|AMD|NVIDIA|CUDA|Intel|Apple)\b",
    re.I,
)
_GENERIC = textre.compile(
    r"\b(?:compil\w*|JIT|kernels?|build\w*|wheels?|pip|conda|docker\w*|containers?|images?"
    r"|packages?|install\w*|scripts?|flags?|options?|binar\w*|releases?|sources?|code|cmake"
    r"|make\w*|setup\.py|environment|variables?|settings?|config\w*|patch\w*|PyTorch|torch"
    r"|JAX|TensorFlow|Triton|Kokkos|RAJA|same|default|generic|portable|common|this|it|own)\b",
    re.I,
)


def _stops(text: str) -> list[int]:
    """Where sentences end in ``text`` (the offset after each stop), not after "i.e."."""
    return [
        m.end()
        for m in _STOP.finditer(text)
        if not text[max(0, m.start() - 3) : m.start()].lower().endswith(_ABBREV)
    ]


def _wraps(line: str) -> bool:
    """Whether a paragraph line is one a wrapped sentence may go on from or into."""
    return bool(line.strip()) and not HEADING.match(line) and line.lstrip()[:1] not in "-*|#>`"


def sentence(line: str, lines: list[str], number: int) -> str:
    """``line`` and, where its sentence is wrapped onto the next lines of a paragraph, the
    rest of that sentence (two lines at most): "support via ROCm is still / under
    development" is a promise (mcx, J46)."""
    if line.rstrip().endswith((".", "!", "?")):
        return line
    out = [line]
    for nxt in lines[number : number + 2]:
        if not _wraps(nxt):
            break
        ends = _stops(nxt)
        out.append(nxt[: ends[0]] if ends else nxt)
        if ends:
            break
    return " ".join(out)


#: a subject other than the ROCm/AMD support a wrapped sentence went on about: a negation
#: after it is about that subject ("ROCm is supported, while Windows is / not supported")
_OTHER_SUBJECT = textre.compile(
    r"\b(?:NVIDIA|CUDA|Intel|Apple|Metal|Windows|mac\s?OS|OS\s?X|CPUs?|Vulkan|OpenCL|SYCL"
    r"|oneAPI|DirectML|while|whereas|however|although|except)\b",
    re.I,
)
#: a parenthetical insertion: a phrase set off by commas that opens with a preposition or an
#: adverb (", as of the 2.3 release of this library and its CUDA 12 builds, "), brackets or
#: dashes; the clause goes on after it (forty-fourth re-run F14)
_INSERTION = textre.compile(
    r",\s*(?:as\s+of|as\s+yet|at|in|for|from|since|to\s+date|with|on|until|by|under|after"
    r"|before|currently|unfortunately|sadly|regrettably|still|yet|so\s+far|today|now"
    r"|right\s+now|for\s+now|at\s+present|presently|alas)\b(?:[^,;.!?]|\.\w){0,200},"
    r"|\([^()]{0,200}\)|\s[–—]\s?[^–—]{0,200}?\s?[–—]\s|\s--\s[^\n]{0,200}?\s--\s",
    re.I,
)
_NEAR = 60  # characters from the ROCm/AMD word to a wrapped negation or hedge
_FAR = 600  # the same with the insertions left in


def wrapped_against(line: str, said: str, pattern: re.Pattern[str]) -> bool:
    """Whether ``pattern`` (a denial or a hedge) reads on the part of ``line``'s last
    sentence that a paragraph wraps onto the next lines ("Support for AMD GPUs through ROCm
    is / not available yet.": forty-third re-run F8). Only that sentence is read, only when
    it names ROCm/AMD, and only a match that reaches past the wrap, starts after the last
    ROCm/AMD word, within :data:`_NEAR` characters of it and with no other subject between
    (NVIDIA, Windows, CPU, "while"...), both read with parenthetical insertions left out
    (forty-fourth re-run F14): a true claim is not denied by a negation about something
    else in the next sentence or the next clause. ``said``: :func:`sentence`."""
    if len(said) <= len(line):
        return False  # the sentence ends on the line: read there
    ends = _stops(line)
    start = ends[-1] if ends else 0
    mentions = [m.end() for m in WORD.finditer(line, start)]
    if not mentions:
        return False
    at = mentions[-1]
    for m in pattern.finditer(said, at):
        if m.start() - at > _FAR:
            break  # past any insertions: each read below stays short
        if m.end() <= len(line):
            continue
        between = _INSERTION.sub(" ", said[at : m.start()])
        if len(between) <= _NEAR and _OTHER_SUBJECT.search(between) is None:
            return True
    return False


def _names_other_api(part: str) -> bool:
    """Whether a sentence that names AMD but no ROCm/HIP gives its support through another
    API: a listed one (OpenCL, Vulkan...), or a means that is no way of building or packaging
    this code, nor the hardware."""
    if _OTHER_API.search(part):
        return True
    for m in _MEANS.finditer(part):
        phrase = m.group(1) if m.group(1) is not None else m.group(2) + " backend"
        phrase = phrase[: c.start()] if (c := _MEANS_CUT.search(phrase)) else phrase
        if not phrase.strip():
            continue
        if WORD.search(phrase) or _HARDWARE.search(phrase):
            continue  # the hardware, not a means
        if _GENERIC.search(phrase) is None:
            return True
    for m in _WITH.finditer(part):
        phrase = m.group(1)
        if WORD.search(phrase) or _HARDWARE.search(phrase) or _NOT_MEANS.match(phrase):
            continue
        if _GENERIC.search(phrase) is None:
            return True
    return False


def other_api(line: str, lines: list[str], number: int) -> bool:
    """Whether the sentence of a claim of AMD support gives it through another GPU API and
    names neither ROCm nor HIP, read back to where the sentence starts (two lines at most):
    "A more portable OpenCL implementation of MCX ... supports almost all NVIDIA/AMD/Intel
    CPU and GPU models" is another program's route (mcx, J46); "AMD GPUs are supported
    through the DirectX 12 backend" is no ROCm build (forty-fourth re-run F16)."""
    before: list[str] = []
    for prev in reversed(lines[max(0, number - 3) : number - 1]):
        if not _wraps(prev):
            break
        ends = _stops(prev)
        before.insert(0, prev[ends[-1] :] if ends else prev)
        if ends:
            break
    said = " ".join([*before, sentence(line, lines, number)])
    cuts = [0, *_stops(said), len(said)]
    for a, b in itertools.pairwise(cuts):  # the sentences that name AMD
        part = said[a:b]
        if not WORD.search(part):
            continue
        if _through_layer(part) or (not _ROCM_API.search(part) and _names_other_api(part)):
            return True
    return False


#: the means of a claim, "with" too: "using the SCALE compiler", "with ZLUDA", "via chipStar"
_LAYER_MEANS = textre.compile(
    r"\b(?:through|via|using|with|atop|on\s+top\s+of|by\s+(?:means|way)\s+of|thanks\s+to"
    r"|(?:backed|powered|driven)\s+by|built\s+on|compiled\s+by)\s+([^.,;:!?()\[\]\n]{1,60})",
    re.I,
)
#: a CUDA translation or compatibility layer, or a compiler or toolchain named, as a means
_LAYER = textre.compile(
    r"\b(?:translation|compatibility|compat|emulation)\s+layers?\b|\bdrop-in\s+replacement\b"
    r"|\bZLUDA\b|\bchipStar\b|\bSCALE\b",
)
_TOOLCHAIN = textre.compile(r"\b(?:compilers?|tool-?chains?|toolkits?|SDKs?)\b", re.I)
#: a compiler that builds HIP itself: a ROCm route
_HIP_COMPILER = textre.compile(r"\b(?:clang\w*|LLVM|AOMP|amdclang\w*|amdllvm|Cray|CCE)\b", re.I)
_NAME = textre.compile(r"[A-Za-z][\w.+-]*")


def _through_layer(part: str) -> bool:
    """Whether a sentence gives AMD support through a means named after "using/via/through/
    with" that is a CUDA translation or compatibility layer (ZLUDA, SCALE, chipStar), or a
    compiler or toolchain of a name that is neither ROCm/HIP's nor one that builds HIP
    (clang, LLVM): no ROCm route of this code even when "(ROCm)" labels the hardware
    (forty-sixth re-run F6: "runs on AMD GPUs (ROCm) using the SCALE compiler")."""
    for m in _LAYER_MEANS.finditer(part):
        phrase = m.group(1)
        phrase = phrase[: c.start()] if (c := _MEANS_CUT.search(phrase)) else phrase
        if _ROCM_API.search(phrase) or _HIP_COMPILER.search(phrase):
            continue
        if _LAYER.search(phrase):
            return True
        if _TOOLCHAIN.search(phrase) and any(
            (not w.islower() or "-" in w)
            and not (WORD.match(w) or _HARDWARE.match(w) or _NOT_MEANS.match(w))
            and not (_GENERIC.match(w) or _TOOLCHAIN.match(w))
            for w in _NAME.findall(phrase)
        ):
            return True  # "the SCALE compiler", "the foo-cc toolchain"
    return False
