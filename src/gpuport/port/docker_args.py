"""A Dockerfile's build arguments, read for its ROCm copy (``fix_containers``): the value each
``ARG`` has by default, where the project passes its own value, and which branches of a RUN's
shell ``if`` a build with those values takes. Text only: nothing is run.

A CUDA-only install inside ``if [ "$INSTALL_FLASHATTN" = "true" ]; then ... fi`` with ``ARG
INSTALL_FLASHATTN=false`` is not what the image installs (J11, LlamaFactory; J23, podly): the
refusal of "installs a CUDA build" reads only the branches a build takes. A value is known
only when every way the project builds the image agrees on it: the ``ARG`` default (through
earlier ``ARG``\\ s, ``${V:-default}`` forms, the global ``ARG``\\ s before the first ``FROM``),
and each compose service that builds the Dockerfile and each ``docker build --build-arg`` line
of the project's scripts passing a literal value. An ``ARG`` without a default, one that an
``ENV`` sets, or one the project passes from the environment (``USE_GPU=${USE_GPU:-false}``,
``--build-arg USE_GPU``) is unknown: the branch may run, and the refusal stands, naming it.
"""

from __future__ import annotations

import functools
import itertools
import posixpath
from collections import ChainMap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import yaml

from gpuport import textre
from gpuport.intervals import first_holding
from gpuport.port.context import PortContext
from gpuport.port.image_builds import build_args
from gpuport.scan.finding import Finding
from gpuport.yamlnodes import has_merge

__all__ = ["ArgScope", "Branches", "BuildArgs", "overrides", "ref_names", "shell_branches"]

MARK = "# gpuport:"

_ARG = textre.compile(r"(?i)^\s*ARG\s+(.*)$")
_FROM = textre.compile(r"(?i)^\s*FROM\s")
_ENV = textre.compile(r"(?i)^\s*ENV\s+(.*)$")
_REF = textre.compile(r"\$\{(\w+)(?::?([-+])([^}]*))?\}|\$(\w+)")
#: one ``NAME`` or ``NAME=value`` word of an ARG instruction
_DECL = textre.compile(r"(\w+)(?:=(\"[^\"]*\"|'[^']*'|\S*))?")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


#: The longest expanded ARG value kept; a longer one is unknown (twenty-first re-run: a chain
#: `ARG A{k}=${A{k-1}}${A{k-1}}` of 718 bytes grew to 2 GB)
MOST_VALUE = 4096
#: Value combinations one test operand is expanded for; more is unknown (N references to
#: two-valued arguments gave 2^N expansions: 20 of them, 68 s)
MOST_COMBOS = 64


def expand(value: str, known: Mapping[str, str | None]) -> str | None:
    """``value`` with ``$X``, ``${X}``, ``${X:-d}``, ``${X:+d}`` replaced from ``known``;
    None when a name it needs has no known value."""
    out: list[str] = []
    pos = 0
    for m in _REF.finditer(value):
        out.append(value[pos : m.start()])
        pos = m.end()
        name = m.group(1) or m.group(4)
        have = known.get(name)
        op, word = m.group(2), m.group(3) or ""
        if op == "-":
            if name in known and have is None:
                return None  # declared without a value: the default applies only if unset
            out.append(have if have else word)
        elif op == "+":
            if name in known and have is None:
                return None
            out.append(word if have else "")
        else:
            if have is None:
                return None
            out.append(have)
    out.append(value[pos:])
    if sum(map(len, out)) > MOST_VALUE:
        return None  # `ARG A1=${A0}${A0}` ... doubles per line: no value an image tests
    return "".join(out)


@dataclass
class ArgScope:
    """The ARG values a Dockerfile's instructions see, fed in order: global ARGs (before the
    first FROM) are seen by FROM lines and by a stage that declares the name again."""

    globals_: dict[str, str | None] = field(default_factory=dict)
    stage: dict[str, str | None] = field(default_factory=dict)
    in_stage: bool = False

    def feed(self, chunk: str) -> None:
        text = chunk.replace("\\\n", " ")
        if _FROM.match(text):
            self.in_stage, self.stage = True, {}
            return
        env = _ENV.match(text)
        if env is not None and self.in_stage:
            for m in textre.finditer(r"(\w+)(?:=|\s)", env.group(1)):
                self.stage[m.group(1)] = None  # an ENV value is the shell's: not an ARG's
            return
        arg = _ARG.match(text)
        if arg is None:
            return
        scope = self.stage if self.in_stage else self.globals_
        # a view, not a copy per ARG line (a copy of every name per line was quadratic)
        seen = ChainMap(self.stage, self.globals_) if self.in_stage else ChainMap(self.globals_)
        for m in _DECL.finditer(arg.group(1)):
            name, raw = m.group(1), m.group(2)
            if raw is None:
                scope[name] = self.globals_.get(name) if self.in_stage else None
            else:
                scope[name] = expand(_unquote(raw), seen)

    def value(self, name: str) -> str | None:
        """The default value of ``name`` where the scope is; None when unknown."""
        if self.in_stage:
            return self.stage.get(name)
        return self.globals_.get(name)

    def names(self) -> set[str]:
        return set(self.stage) if self.in_stage else set(self.globals_)


@dataclass(frozen=True)
class Override:
    """A value the project passes for a build argument: ``value`` None when it comes from
    the environment (unknown); ``where`` says which file."""

    value: str | None
    where: str


def overrides(ctx: PortContext, dockerfile: str) -> dict[str, list[Override]]:
    """Build argument -> the values the project's compose services (``build.args``) and
    ``docker build --build-arg`` lines pass when they build ``dockerfile``."""
    out: dict[str, list[Override]] = {}
    for compose in _compose_files(ctx):
        text = ctx.read(compose)
        if not text or "args" not in text:
            continue
        for name, value in _compose_args(text, PurePosixPath(compose).parent, dockerfile):
            lit = None if value is None or "$" in value else value
            out.setdefault(name, []).append(Override(lit, compose))
    for name, value, where in build_args(ctx).get(dockerfile, []):
        lit = None if value is None or "$" in value or "`" in value else value
        out.setdefault(name, []).append(Override(lit, where))
    return out


def _compose_files(ctx: PortContext) -> list[str]:
    out: list[str] = []
    for folder in ("", "docker", "deploy"):
        for n in ctx.listdir(folder):
            if textre.match(r"(?i)(?:docker-)?compose[\w.-]*\.ya?ml$", n):
                out.append(f"{folder}/{n}" if folder else n)
    seen = {f.location.path for f in ctx.findings if f.rule_id.startswith("GP5")}
    out += [p for p in seen if textre.search(r"(?i)compose[\w.-]*\.ya?ml$", p)]
    return sorted(set(out))


#: an override name meaning "any argument": a compose file whose YAML merges mappings
#: (``<<: *common``), which is read as nodes and not expanded (``gpuport.yamlnodes``)
ANY = "*"


def _compose_args(
    text: str, folder: PurePosixPath, dockerfile: str
) -> list[tuple[str, str | None]]:
    """(name, value or None) of the build args each service building ``dockerfile`` passes,
    read from the node tree (linear: no merge is expanded); a file with a merge key passes
    ``ANY`` (unknown)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if not isinstance(root, yaml.MappingNode):
        return []
    if has_merge(root):
        return [(ANY, None)]
    services = _get(root, "services")
    if not isinstance(services, yaml.MappingNode):
        return []
    out: list[tuple[str, str | None]] = []
    for _, node in services.value:
        build = _get(node, "build") if isinstance(node, yaml.MappingNode) else None
        if not isinstance(build, yaml.MappingNode):
            continue
        args = _get(build, "args")
        if args is None:
            continue
        context, df = _get(build, "context"), _get(build, "dockerfile")
        ctx_s = str(context.value) if isinstance(context, yaml.ScalarNode) else "."
        df_s = str(df.value) if isinstance(df, yaml.ScalarNode) else "Dockerfile"
        if posixpath.normpath(str(folder / ctx_s / df_s)) != dockerfile:
            continue
        if isinstance(args, yaml.MappingNode):
            for k, v in args.value:
                if not isinstance(k, yaml.ScalarNode):
                    continue
                value = v.value if isinstance(v, yaml.ScalarNode) else None
                out.append((str(k.value), None if value in (None, "", "~", "null") else value))
        elif isinstance(args, yaml.SequenceNode):
            for item in args.value:
                if isinstance(item, yaml.ScalarNode):
                    key, eq, v = str(item.value).partition("=")
                    out.append((key.strip(), v.strip() if eq else None))
        else:
            out.append((ANY, None))
    return out


def _get(node: yaml.Node, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            return v  # type: ignore[no-any-return]
    return None


# --- a RUN's shell branches --------------------------------------------------------------

_WORD = textre.compile(r"\w+")
_KEYWORDS = frozenset({"if", "then", "elif", "else", "fi"})


def _keywords(flat: str) -> list[tuple[str, int, int]]:
    """(keyword, start, end) of the shell's if-words where a command starts (after white
    space, ``;``, ``&``, ``|`` or ``(``) and that end at white space or ``;``."""
    out: list[tuple[str, int, int]] = []
    for m in _WORD.finditer(flat):
        word, lo, hi = m.group(0), m.start(), m.end()
        if word not in _KEYWORDS:
            continue
        if lo > 0 and flat[lo - 1] not in " \t\n\r;&|(":
            continue
        if hi < len(flat) and flat[hi] not in " \t\n\r;":
            continue
        out.append((word, lo, hi))
    return out


_TEST = textre.compile(
    r"^\s*(?:\[\[?|test)\s+(?P<a>\S+)\s+(?P<op>==?|!=)\s+(?P<b>\S+)\s*(?:\]\]?)?\s*$"
)
_UNARY = textre.compile(r"^\s*(?:\[\[?|test)\s+(?P<op>-[nz])\s+(?P<a>\S+)\s*(?:\]\]?)?\s*$")


@dataclass(frozen=True)
class Branches:
    """Character ranges of a RUN's text by whether a build takes them: ``dead`` never runs
    with the values the project builds with; ``unknown`` runs depending on arguments whose
    value is not known (``names``)."""

    dead: list[tuple[int, int, str]]
    unknown: list[tuple[int, int, str]]

    def live(self, text: str) -> str:
        """``text`` with the dead ranges blanked (lines kept). The ranges are merged first:
        N nested false tests are N ranges over nearly the whole RUN, and blanking each one
        was N x its length (twenty-first re-run: 460 KB, 109 s)."""
        out: list[str] = []
        pos = 0
        for lo, hi in _merged((lo, hi) for lo, hi, _ in self.dead):
            lo, hi = max(lo, pos), min(hi, len(text))
            if lo >= hi:
                continue
            out.append(text[pos:lo])
            out.append("".join(c if c == "\n" else " " for c in text[lo:hi]))
            pos = hi
        out.append(text[pos:])
        return "".join(out)

    @functools.cached_property
    def _dead_closed(self) -> list[tuple[int, int, str]]:
        return [(lo, hi - 1, why) for lo, hi, why in self.dead]

    @functools.cached_property
    def _unknown_closed(self) -> list[tuple[int, int, str]]:
        return [(lo, hi - 1, why) for lo, hi, why in self.unknown]

    def why_dead(self, pos: int) -> str | None:
        """The reason of the first dead range holding ``pos`` (an index, not a scan of every
        range per position)."""
        return first_holding(self._dead_closed, pos)

    def why_unknown(self, pos: int) -> str | None:
        return first_holding(self._unknown_closed, pos)


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Half-open spans, sorted and joined where they overlap or touch."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


@functools.lru_cache(maxsize=8)
def _rows(chunk: str) -> tuple[list[str], list[int]]:
    """A RUN's lines (ends kept) and where each starts."""
    rows = chunk.splitlines(keepends=True)
    return rows, list(itertools.accumulate((len(r) for r in rows), initial=0))


def _operand(word: str, values: dict[str, list[str] | None]) -> list[str] | None:
    word = _unquote(word.strip())
    names = [m.group(1) or m.group(4) for m in _REF.finditer(word)]
    if not names:
        return [word]
    names = list(dict.fromkeys(names))  # a name has one value per combination
    choices = []
    combos = 1
    for n in names:
        v = values.get(n)
        if v is None:
            return None
        choices.append(v)
        combos *= max(1, len(v))
        if combos > MOST_COMBOS:
            return None
    out: list[str] = []
    for combo in itertools.product(*choices):
        known: dict[str, str | None] = dict(zip(names, combo, strict=True))
        e = expand(word, known)
        if e is None:
            return None
        out.append(e)
    return out


def _test(cond: str, values: dict[str, list[str] | None]) -> bool | None:
    """One ``[ A = B ]`` / ``[ -n A ]`` test, true or false for every value the project
    builds with; None when it depends on an unknown value or is not such a test."""
    m = _TEST.match(cond)
    if m is not None:
        a, b = _operand(m.group("a"), values), _operand(m.group("b"), values)
        if a is None or b is None:
            return None
        res = {(x == y) == (m.group("op") != "!=") for x in a for y in b}
        return res.pop() if len(res) == 1 else None
    u = _UNARY.match(cond)
    if u is not None:
        a = _operand(u.group("a"), values)
        if a is None:
            return None
        res = {bool(x) == (u.group("op") == "-n") for x in a}
        return res.pop() if len(res) == 1 else None
    return None


def _condition(cond: str, values: dict[str, list[str] | None]) -> bool | None:
    """A list of tests joined by ``&&`` / ``||`` (left to right, as the shell reads it)."""
    text = cond.strip().rstrip(";").strip()
    parts = textre.split(r"(&&|\|\|)", text)
    result = _test(parts[0], values)
    for i in range(1, len(parts) - 1, 2):
        nxt = _test(parts[i + 1], values)
        if parts[i] == "&&":
            result = (
                False
                if result is False or nxt is False
                else (None if None in (result, nxt) else True)
            )
        else:
            result = (
                True
                if result is True or nxt is True
                else (None if None in (result, nxt) else False)
            )
    return result


def ref_names(cond: str) -> list[str]:
    """The variable names ``cond`` refers to."""
    return sorted({m.group(1) or m.group(4) for m in _REF.finditer(cond)})


@dataclass
class _Frame:
    """One ``if`` being read: whether an earlier test held (True), none did (False) or it
    is not known (None); where the current test and branch start; the current test."""

    prior: bool | None = False
    cstart: int = 0
    bstart: int | None = None
    value: bool | None = None
    ctext: str = ""


def shell_branches(text: str, values: dict[str, list[str] | None]) -> Branches:
    """The ``if``/``elif``/``else`` branches of a RUN's text a build never takes (``dead``)
    or takes depending on an unknown value (``unknown``). ``values``: each build argument's
    possible values, None when unknown. A construct not read is neither."""
    flat = text.replace("\\\n", "  ")
    dead: list[tuple[int, int, str]] = []
    unknown: list[tuple[int, int, str]] = []
    stack: list[_Frame] = []
    for word, start, end in _keywords(flat):
        if word == "if":
            stack.append(_Frame(cstart=end))
            continue
        if not stack:
            continue
        top = stack[-1]
        if word == "then":
            if top.bstart is None:
                ctext = flat[top.cstart : start]
                top.value = _condition(ctext, values)
                top.ctext = ctext.strip().rstrip(";").strip()
                top.bstart = end
            continue
        if top.bstart is None:  # elif/else/fi before then: not a construct read here
            stack.pop()
            continue
        label = (
            f"runs only when `{top.ctext}`" if top.ctext else "runs only when no earlier test holds"
        )
        if top.prior is True or top.value is False:
            dead.append((top.bstart, start, label))
        elif top.prior is None or top.value is None:
            unknown.append((top.bstart, start, label))
        if top.value is True or top.prior is True:
            top.prior = True
        elif top.value is None or top.prior is None:
            top.prior = None
        if word == "fi":
            stack.pop()
        elif word == "elif":
            top.cstart, top.bstart = end, None
        else:
            top.bstart, top.value, top.ctext = end, True, ""
    return Branches(dead, unknown)


class BuildArgs:
    """The build arguments of one Dockerfile as its RUNs' branches and FROM lines need them:
    their defaults where the instruction is (``scope``) and the values the project passes
    (read on first need)."""

    def __init__(self, ctx: PortContext, path: str, scope: ArgScope) -> None:
        self.ctx, self.path, self.scope = ctx, path, scope
        self._over: dict[str, list[Override]] | None = None

    def over(self) -> dict[str, list[Override]]:
        if self._over is None:
            self._over = overrides(self.ctx, self.path)
        return self._over

    def values(self, names: list[str]) -> dict[str, list[str] | None]:
        out: dict[str, list[str] | None] = {}
        anyone = self.over().get(ANY, [])
        for name in names:
            default = self.scope.value(name) if name in self.scope.names() else None
            seen = [default, *(o.value for o in [*self.over().get(name, []), *anyone])]
            out[name] = None if any(v is None for v in seen) else sorted(set(seen))  # type: ignore[arg-type]
        return out

    def branches(self, chunk: str) -> Branches:
        if not textre.search(r"\bif\b", chunk):
            return Branches([], [])
        return shell_branches(chunk, self.values(ref_names(chunk)))

    def passed_for(self, chunk: str) -> str | None:
        """For an ``ARG NAME=image`` line or a ``FROM ${NAME:-image}``: how the project
        passes its own NAME, or None."""
        m = textre.match(r"(?i)^\s*ARG\s+(\w+)=", chunk) or textre.match(
            r"(?i)^\s*FROM\s+(?:--platform=\S+\s+)?\$\{(\w+):?-", chunk
        )
        if m is None:
            return None
        given = self.over().get(m.group(1), []) + self.over().get(ANY, [])
        if not given:
            return None
        o = given[0]
        if o.value is None and not self.over().get(m.group(1)):
            return f"{o.where} may pass (its YAML merges are not expanded)"
        value = "from the environment" if o.value is None else f"as {o.value}"
        return f"{o.where} passes {m.group(1)} {value}"

    def from_default(self, image: str) -> tuple[str, str] | None:
        """``${NAME:-image}`` in a FROM line whose NAME has no default here: (NAME, image),
        the image a build that passes no NAME starts from; None otherwise."""
        m = textre.match(r"^\$\{(\w+):?-([^}$]+)\}$", image)
        if m is None or self.scope.globals_.get(m.group(1)) is not None:
            return None
        return m.group(1), m.group(2)

    def describe(self, why: str) -> str:
        """A branch's condition with what is known of its arguments."""
        parts = []
        for name in ref_names(why):
            default = self.scope.value(name) if name in self.scope.names() else None
            d = f"ARG {name}={default}" if default is not None else f"{name} has no default"
            given = self.over().get(name, [])
            env = [o.where for o in given if o.value is None]
            lit = [f"{o.where}: {o.value}" for o in given if o.value is not None]
            if env:
                d += f"; {', '.join(sorted(set(env)))} passes it from the environment"
            if lit:
                d += f"; {', '.join(sorted(set(lit)))}"
            if merged := sorted({o.where for o in self.over().get(ANY, [])}):
                d += f"; {', '.join(merged)} may pass it (its YAML merges are not expanded)"
            parts.append(d)
        return f"{why} ({'; '.join(parts)})" if parts else why

    def unknown_note(self, branches: Branches, live: str, what: str) -> str:
        pos = live.find(what.split(" runs ", 1)[0].split()[0]) if what else -1
        why = branches.why_unknown(pos) if pos >= 0 else None
        if why is None:
            return ""
        return f", in a branch that {self.describe(why)}, whose value is not known"

    def dead_note(self, branches: Branches, chunk: str, what: str, eol: str) -> str:
        pos = chunk.find(what.split(" runs ", 1)[0].split()[0])
        why = branches.why_dead(pos) if pos >= 0 else None
        if why is None and branches.dead:
            why = branches.dead[0][2]
        if textre.search(r"[\\\r\n]", what) or len(what) > 120:
            what = "a step over several lines"  # never quoted in a note (39th re-run F10)
        note = (
            f"{what}, a CUDA build, is in a branch that {self.describe(why or '')}: "
            "a build with these values does not take it; keep them for ROCm"
        )
        return f"{MARK} {' '.join(note.split())}{eol}"  # one line, whatever a value holds

    def live_finding(self, branches: Branches, chunk: str, first: int, f: Finding) -> bool:
        """Whether a finding on the RUN's lines is in code a build takes."""
        if not branches.dead or f.location.line is None:
            return True
        rows, starts = _rows(chunk)  # once per RUN, not per finding
        at = f.location.line - 1 - first
        if not 0 <= at < len(rows):
            return True
        start = starts[at]
        name = f.message.split(":", 1)[0].strip()
        col = rows[at].find(name) if name else -1
        if col < 0:
            col = len(rows[at]) - len(rows[at].lstrip())
        return branches.why_dead(start + col) is None
