"""Name resolution and ROCm-guard detection for the Python rules (GP2xx).

Everything here reads an ``ast`` tree; nothing from the scanned project is
imported or run.

A *guard* is code that already tells the platforms apart, so a finding inside
it is reported with ``guarded=True`` (lowered to info). The test of an
``if``/``elif``, a ternary, a ``while`` or an ``and``/``or`` operand
*discriminates the platform* when it contains any of:

* ``<x>.version.hip`` or ``<x>.version.cuda`` (``torch.version.*``);
* an identifier (name, attribute or called function) that names a vendor or
  runtime: ``rocm`` anywhere in it (``IS_ROCM``, ``skipIfRocm``), or one of the
  word parts ``hip``, ``amd``, ``amdgpu``, ``amdsmi``, ``rocr``, ``roctx``,
  ``miopen``, ``hipify`` (``is_hip()``, ``HAS_HIP``; ``ship`` and ``chip`` are
  single word parts and do not count). ``nvidia`` is not one: a name like
  ``query_nvidia_gpus`` or ``args.use_nvidia_dali`` says nothing about the GPU;
  an ``float8_*`` dtype name (``torch.float8_e4m3fnuz``) is not one either;
* ``<platform>.is_cuda()`` where the receiver's name has the word part
  ``platform`` (vLLM's ``current_platform``; ``tensor.is_cuda`` does not count,
  it is true on ROCm);
* a string compared with ``==``/``in``/``startswith`` that names ROCm, HIP,
  AMD, a ``gfx`` architecture or FNUZ (``"rocm" in torch.__version__``).

``torch.cuda.is_available()`` alone is not a guard: it is true on ROCm. An
``or`` is one only if every operand is, and not when one operand is true on
NVIDIA and another on AMD (``torch.version.cuda or torch.version.hip``).

Both branches of such a test count (on ROCm one of them is dead, the other is
the ROCm-aware path), and so do ``elif`` chains below it. A ``match`` statement
counts like an ``if`` chain: every ``case`` body is guarded when the subject
discriminates the platform (``match torch.version.hip:``, ``match
get_rocm_version():``, ``match backend_is_hip:``) or when a case pattern is a
string that names ROCm/HIP/AMD (``case "rocm":``); a ``case ... if <test>:``
whose test discriminates guards that case's body. So does the body of a
function or class whose name names a vendor (``def _init_rocm()``) or whose
decorators discriminate the platform (``@skipIfRocm``,
``@unittest.skipIf(torch.version.hip, ...)``), and the body and ``else`` of a
``try`` whose handler catches ``ImportError``/``ModuleNotFoundError`` (an
optional import of an NVIDIA-only module). A handler for
``Exception``/``BaseException`` or anything (a bare ``except``) sets the
:data:`IMPORT` bit (it makes the imports in the body optional) and the :data:`SUBPROC`
bit (a missing ``nvidia-smi`` raises an ``Exception`` too). A handler that re-raises (has a
``raise``) guards nothing; one that ends the program (``sys.exit``) no probe. A handler for
``OSError``/``FileNotFoundError``/``subprocess.CalledProcessError`` (what a missing
``nvidia-smi`` raises) sets
the :data:`SUBPROC` bit, which only the nvidia-smi rule honours. A ``try`` in a function whose
result stops the program (:func:`gating_calls`: an ``if``/``assert`` that exits, or ``detect()
or sys.exit(...)``, forty-second re-run F11; a ``parser.error(...)``, or a ``return 1`` in a
``main()`` or a function ``sys.exit()`` takes the result of: forty-third re-run F4) swallows
no probe. Forty-fourth re-run F5: so is a console-script entry point's (``status=``); a
returned ``os.EX_*`` or any value not plainly a success is a failure, and ``ap.error()`` exits.

A call that probes for an optional module (``try_import_cutlass()``,
``importlib.util.find_spec(...)``) in a test sets the :data:`IMPORT` bit, which
only the import rules honour: ``assert try_import_x()`` before a lazy import. A
``has_X()`` probe (:func:`probed_modules`) guards only imports of the module X
names (``if has_triton(): import triton``; not ``if has_cuda(): import
pycuda.autoinit``).

:class:`~gpuport.scan.rules.python.scope.GuardScope` applies these rules during
the walk, and adds the ones that need more than one node: early exits, flag
variables and vendor-dispatch siblings.

A test that also names an architecture (``gfx942``, ``gcnArchName``, ``fnuz``,
``cdna``/``rdna``) is *arch-aware*: it carries the :data:`ARCH` bit, which the
FP8 rule needs to accept a FNUZ dtype chosen for the right AMD GPU.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Mapping

from gpuport import textre
from gpuport.scan.rules.python.patterns import last_name

PLATFORM = 1
ARCH = 2
IMPORT = 4  # an optional module is probed first: guards imports only
SUBPROC = 8  # a try whose handler catches what a missing executable raises: guards GP204 only
LAZY = 16  # not a guard: the code runs inside a function (an import there is lazy)

_CAMEL = textre.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_PLATFORM_PARTS = frozenset({"hip", "amd", "amdgpu", "amdsmi", "rocr", "roctx", "miopen", "hipify"})
_ARCH_PARTS = frozenset({"cdna", "rdna", "fnuz", "gcn"})
_PLATFORM_STRING = textre.compile(r"(?i)\b(?:rocm|hip|amd)\b|\+rocm|rocm\d")
_ARCH_STRING = textre.compile(r"(?i)gfx\d|fnuz")
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError"})
_BROAD_ERRORS = frozenset({"Exception", "BaseException"})
_OS_ERRORS = frozenset(
    {
        "OSError",
        "IOError",
        "EnvironmentError",
        "FileNotFoundError",
        "PermissionError",
        "CalledProcessError",
        "SubprocessError",
        "TimeoutExpired",
    }
)
_PROBE_PREFIXES = ("try_import",)
_HAS_PREFIXES = ("has_", "_has_")
# Words a ``has_X()`` probe may add after the module name (``has_triton_package``).
_PROBE_FILLER = frozenset({"package", "module", "lib", "available", "installed", "support"})
_AVAILABLE_SUFFIXES = ("_available", "_installed")
_PROBE_NAMES = frozenset({"find_spec", "_check_module_exists", "check_module_exists"})


def word_parts(ident: str) -> list[str]:
    """``skipIfRocm`` -> ``['skip', 'if', 'rocm']``; ``HAS_HIP`` -> ``['has', 'hip']``."""
    out: list[str] = []
    for chunk in ident.split("_"):
        out.extend(part.lower() for part in _CAMEL.findall(chunk))
    return out


_IDENT_CACHE: dict[str, int] = {}


def ident_flags(ident: str) -> int:
    """Guard bits an identifier carries by its name alone (cached: names repeat a lot)."""
    flags = _IDENT_CACHE.get(ident)
    if flags is None:
        flags = _ident_flags(ident)
        if len(_IDENT_CACHE) < 100_000:
            _IDENT_CACHE[ident] = flags
    return flags


def _ident_flags(ident: str) -> int:
    lower = ident.lower()
    parts = word_parts(ident)
    flags = 0
    if "rocm" in lower or any(p in _PLATFORM_PARTS for p in parts):
        flags = PLATFORM
    if "fnuz" in lower or any(p in _ARCH_PARTS or p.startswith("gfx") for p in parts):
        flags = PLATFORM | ARCH
    return flags


def string_flags(value: str) -> int:
    if _ARCH_STRING.search(value):
        return PLATFORM | ARCH
    if _PLATFORM_STRING.search(value):
        return PLATFORM
    return 0


def is_cuda_version(node: ast.AST) -> bool:
    """``<x>.version.cuda`` (``torch.version.cuda``)."""
    if not isinstance(node, ast.Attribute) or node.attr != "cuda":
        return False
    base = node.value
    return (isinstance(base, ast.Attribute) and base.attr == "version") or (
        isinstance(base, ast.Name) and base.id == "version"
    )


def _attr_flags(node: ast.Attribute) -> int:
    base = node.value
    if node.attr in ("hip", "cuda"):
        base_name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
        if base_name == "version":
            return PLATFORM
    if node.attr == "is_cuda" and "platform" in word_parts(last_name(base)):
        return PLATFORM
    return ident_flags(node.attr)


def _compared_strings(node: ast.AST) -> int:
    flags = 0
    if isinstance(node, ast.Compare):
        for operand in (node.left, *node.comparators):
            for const in _str_consts(operand):
                flags |= string_flags(const)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("startswith", "endswith")
    ):
        for arg in node.args:
            for const in _str_consts(arg):
                flags |= string_flags(const)
    return flags


def _str_consts(node: ast.expr) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


FlagNames = Mapping[str, tuple[int, int]]
"""Flag variables: name -> (guard bits, guard bits without ``torch.version.cuda``)."""


def guard_flags(test: ast.AST, *, cuda_version: bool = True, names: FlagNames | None = None) -> int:
    """Guard bits of an ``if``/ternary test or a decorator expression (0: not a guard).

    ``cuda_version=False`` ignores ``torch.version.cuda`` (GP206 asks whether a
    test looks at anything *besides* it, so an ``or`` is not judged as a whole).
    ``names`` are flag variables
    (``HAS_CUDA_BINDINGS = torch.version.cuda is not None``) that count like
    the test they were assigned from.
    """
    flags = 0
    pending: list[ast.AST] = [test]
    while pending:
        node = pending.pop()
        if cuda_version and isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            flags |= _or_flags(node, names)
            continue  # its operands are judged together
        pending.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Name):
            if node.id.startswith("float8_"):
                continue
            flags |= ident_flags(node.id)
            if names:
                entry = names.get(node.id)
                if entry is not None:
                    flags |= entry[0] if cuda_version else entry[1]
        elif isinstance(node, ast.Attribute):
            if node.attr.startswith("float8_"):
                continue  # `x.dtype == torch.float8_e4m3fnuz` asks about a dtype, not a GPU
            if cuda_version or not is_cuda_version(node):
                flags |= _attr_flags(node)
        elif isinstance(node, ast.Compare):
            flags |= _compared_strings(node)
        elif isinstance(node, ast.Call):
            flags |= _compared_strings(node) | _probe_flags(node)
    return flags


def _or_flags(node: ast.BoolOp, names: FlagNames | None) -> int:
    """An ``or`` tells the platforms apart only if every operand does, and not both ways.

    ``torch.version.cuda or torch.version.hip`` is true on either vendor: no guard.
    """
    each = [guard_flags(v, names=names) for v in node.values]
    flags = 0
    for f in each:
        flags |= f
    sides = {_vendor_side(v) for v in node.values}
    if any(not f & PLATFORM for f in each) or {"nvidia", "amd"} <= sides:
        flags &= ~(PLATFORM | ARCH)
    return flags


def _vendor_side(node: ast.expr) -> str | None:
    """Which vendor a ``torch.version.cuda``/``.hip`` presence test is true on."""
    negate = False
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        negate = not negate
        node = node.operand
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    ):
        if isinstance(node.ops[0], (ast.Is, ast.Eq)):
            negate = not negate
        elif not isinstance(node.ops[0], (ast.IsNot, ast.NotEq)):
            return None
        node = node.left
    if not isinstance(node, ast.Attribute) or node.attr not in ("cuda", "hip"):
        return None
    base = node.value
    base_name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    if base_name != "version":
        return None
    nvidia = (node.attr == "cuda") != negate
    return "nvidia" if nvidia else "amd"


def _probe_flags(node: ast.Call) -> int:
    """``try_import_cutlass()``, ``has_triton()``, ``find_spec("x")``: an optional-module probe."""
    name = last_name(node.func)
    if name.startswith(_PROBE_PREFIXES) or name in _PROBE_NAMES:
        return IMPORT
    return 0


def probed_modules(test: ast.AST) -> list[list[str]]:
    """The module word parts an optional-module probe in ``test`` names: ``has_triton()``,
    ``is_torch_xla_available()``/``is_eetq_installed()`` (the convention of the Hugging Face
    libraries and many others), ``_is_package_available("eetq")``."""
    out: list[list[str]] = []
    for node in ast.walk(test):
        if not isinstance(node, ast.Call):
            continue
        name = last_name(node.func).lstrip("_").lower()
        words: list[str] = []
        if name.startswith("has_"):
            words = name[4:].split("_")
        elif name.startswith("is_") and name.endswith(_AVAILABLE_SUFFIXES):
            words = name[3:].split("_")
            if words[:1] == ["package"] and node.args:
                arg = node.args[0]  # _is_package_available("eetq")
                value = arg.value if isinstance(arg, ast.Constant) else None
                words = textre.split(r"[-_.]", value.lower()) if isinstance(value, str) else []
        parts = [p for p in words if p]
        while parts and (parts[-1] in _PROBE_FILLER or parts[-1].isdigit()):
            parts.pop()  # has_triton_package(), is_flash_attn_2_available()
        if parts:
            out.append(parts)
    return out


def names_module(probe: list[str], dotted: str) -> bool:
    """Does a ``has_X()`` probe (X's parts) name the module ``dotted`` (``triton.language``)?"""
    parts = [p for p in textre.split(r"[._]", dotted.lower()) if p]
    n = len(probe)
    return any(parts[i : i + n] == probe for i in range(len(parts) - n + 1))


def match_flags(node: ast.Match, names: FlagNames | None = None) -> int:
    """Guard bits of a ``match`` statement: from its subject and its string patterns."""
    flags = guard_flags(node.subject, names=names)
    for case in node.cases:
        for pat in ast.walk(case.pattern):
            value = pat.value if isinstance(pat, ast.MatchValue) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                flags |= string_flags(value.value)
    return flags


def handler_flags(node: ast.Try | ast.TryStar) -> int:
    """Guard bits a ``try`` body (and ``else``) runs under, from what its handlers catch.

    ``ImportError``/``ModuleNotFoundError`` (an optional import), ``Exception``,
    ``BaseException`` or a bare ``except``: :data:`PLATFORM`. ``OSError`` and
    the other errors of a missing executable: :data:`SUBPROC`.
    """
    flags = 0
    for handler in node.handlers:
        if any(isinstance(n, ast.Raise) for n in ast.walk(handler)):
            continue  # the handler re-raises: what the body does is required, not optional
        # a handler that ends the program swallows no failed probe (an import it skips on,
        # `print("skipping"); sys.exit(0)`, is still optional: triton-server's QA scripts)
        probe = 0 if any(_exits(n) for n in ast.walk(handler)) else SUBPROC
        kinds = handler.type
        if kinds is None:
            flags |= IMPORT | probe
            continue
        elts = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
        for elt in elts:
            name = last_name(elt)
            if name in _IMPORT_ERRORS:
                flags |= PLATFORM
            elif name in _BROAD_ERRORS:
                # a missing executable's FileNotFoundError is an Exception too: a probe whose
                # failure is swallowed reports nothing on an AMD host and the program goes on
                # (facefusion, FlagGems; issue 24, nineteenth and twenty-second samples)
                flags |= IMPORT | probe
            elif name in _OS_ERRORS:
                flags |= probe
    return flags


_EXIT_CALLS = frozenset({"exit", "_exit", "quit", "abort"})
#: a function whose result is the exit status by convention (a console-script entry point)
_STATUS_NAMES = frozenset({"main", "_main"})
#: word parts of a name that holds a failure status (``EXIT_FAILURE``, ``ERROR_NO_GPU``)
_FAILURE_PARTS = frozenset({"fail", "failure", "failed", "error", "err"})
_SUCCESS_PARTS = frozenset({"success", "succeeded", "ok", "okay", "passed", "none", "false"})


def gating_calls(tree: ast.AST, status: frozenset[str] = frozenset()) -> set[str]:
    """Names of the functions whose result decides whether the program stops: called in the
    test of an ``if`` with a ``raise``/``sys.exit()``/``parser.error()`` in a branch, or with a
    ``return 1`` in a function whose result is the exit status (``sys.exit(main())``, a
    ``main()``: forty-third re-run F4), or of an ``assert``, or
    assigned to a name such a test reads (``ok = gpu_available()`` / ``if not ok:
    sys.exit(...)``), or in an operand of ``and``/``or`` before one that exits, or in the
    test of a conditional expression with an exit in a branch (``GPUS = detect() or
    sys.exit(...)``: forty-second re-run F11). A probe such a function swallows (``except
    Exception: return False``) stops the program on an AMD host: it is no handled failure
    (forty-first re-run F11). ``status``: more functions whose result is the exit status (the
    project's console-script entry points in this module: forty-fourth re-run F5)."""
    tests: list[ast.expr] = []
    assigned: dict[str, set[str]] = {}
    failing = _failing_returns(tree, status)
    parsers = _parser_names(tree)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.If)
            and any(
                isinstance(n, ast.Raise) or _exits(n, parsers) or id(n) in failing
                for stmt in (*node.body, *node.orelse)
                for n in ast.walk(stmt)
            )
        ) or isinstance(node, ast.Assert):
            tests.append(node.test)
        elif isinstance(node, ast.BoolOp):  # `detect() or sys.exit(...)`: F11
            for k, value in enumerate(node.values):
                if k and any(_exits(n, parsers) for n in ast.walk(value)):
                    tests.extend(node.values[:k])
        elif isinstance(node, ast.IfExp) and any(
            _exits(n, parsers) for part in (node.body, node.orelse) for n in ast.walk(part)
        ):
            tests.append(node.test)  # `sys.exit(...) if not detect() else None`
        elif isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Call):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            callee = last_name(node.value.func)
            for t in targets:
                if isinstance(t, ast.Name) and callee:
                    assigned.setdefault(t.id, set()).add(callee)
    out: set[str] = set()
    for test in tests:
        for n in ast.walk(test):
            if isinstance(n, ast.Call):
                out.add(last_name(n.func))
            elif isinstance(n, ast.Name):
                out.update(assigned.get(n.id, ()))
    out.discard("")
    return out


def _failing_returns(tree: ast.AST, entry: frozenset[str] = frozenset()) -> set[int]:
    """Ids of the ``return <failure status>`` statements (``return 1``, ``return -1``,
    ``return "no GPU"``, ``return EXIT_FAILURE``) of the functions whose result is the
    program's exit status: a ``main``, a function whose result ``sys.exit()``/``exit()``/
    ``raise SystemExit`` takes (directly or through a name assigned from it), and one such a
    function returns the result of (``def main(): return run()``): forty-third re-run F4."""
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    status: set[str] = set(entry)
    assigned: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            defs.setdefault(node.name, []).append(node)
            if node.name in _STATUS_NAMES:
                status.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    assigned.setdefault(t.id, set()).add(last_name(node.value.func))
    for node in ast.walk(tree):
        taken: list[ast.expr] = []
        if isinstance(node, ast.Call) and last_name(node.func) in _EXIT_CALLS:
            taken = list(node.args)
        elif isinstance(node, ast.Raise) and last_name(node.exc or node) == "SystemExit":
            taken = list(node.exc.args) if isinstance(node.exc, ast.Call) else []
        for arg in taken:
            if isinstance(arg, ast.Call):
                status.add(last_name(arg.func))
            elif isinstance(arg, ast.Name):
                status.update(assigned.get(arg.id, ()))
    out: set[int] = set()
    pending = [n for n in status if n in defs]
    done: set[str] = set()
    while pending:
        name = pending.pop()
        if name in done:
            continue
        done.add(name)
        for fn in defs[name]:
            for ret in _own_returns(fn):
                if isinstance(ret.value, ast.Call):
                    callee = last_name(ret.value.func)
                    if callee in defs and callee not in done:
                        pending.append(callee)
                elif _failure_status(ret.value):
                    out.add(id(ret))
    return out


def _own_returns(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Return]:
    """The ``return`` statements of ``fn`` itself (not of a function or class inside it)."""
    out: list[ast.Return] = []
    pending: list[ast.AST] = list(fn.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Return):
            out.append(node)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            pending.extend(ast.iter_child_nodes(node))
    return out


def _failure_status(value: ast.expr | None) -> bool:
    """An exit status that may say the program failed: anything but ``None``, a false
    constant or a name that says success (``EXIT_SUCCESS``, ``os.EX_OK``): a non-zero int, a
    string (``sys.exit("no GPU")`` exits 1), ``os.EX_UNAVAILABLE``, ``errno.ENODEV``, a code
    held in a name (forty-fourth re-run F5: when unsure, the failure is not handled)."""
    if value is None:
        return False
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        value = value.operand
    if isinstance(value, ast.Constant):
        return bool(value.value)
    if isinstance(value, ast.Name | ast.Attribute):
        parts = word_parts(value.id if isinstance(value, ast.Name) else value.attr)
        return not (_SUCCESS_PARTS & set(parts)) or bool(_FAILURE_PARTS & set(parts))
    return not isinstance(value, ast.Call | ast.Await)  # a call: its own returns are read


def gated_tries(tree: ast.AST, gates: set[str]) -> set[int]:
    """Ids of the ``try`` statements inside the functions named in ``gates``
    (:func:`gating_calls`): their swallowed failures stop the program."""
    out: set[int] = set()
    if not gates:
        return out
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in gates:
            out.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Try | ast.TryStar))
    return out


def _exits(node: ast.AST, parsers: frozenset[str] = frozenset()) -> bool:
    """``sys.exit(...)``/``os._exit(...)``/``exit()``/``parser.error(...)`` (argparse prints
    and exits 2: forty-third re-run F4; any name in ``parsers`` too, ``ap.error()``, and
    click's ``ctx.fail()``: forty-fourth F5): a call that ends the program."""
    func = node.func if isinstance(node, ast.Call) else None
    name = last_name(func) if func is not None else ""
    if name in _EXIT_CALLS:
        return True
    if name not in ("error", "fail") or not isinstance(func, ast.Attribute):
        return False
    held = last_name(func.value)
    receiver = word_parts(held)
    if name == "fail":
        return receiver[-1:] in (["ctx"], ["context"])
    return held in parsers or (bool(receiver) and receiver[-1].endswith("parser"))


def _parser_names(tree: ast.AST) -> frozenset[str]:
    """Names bound to an argument parser (``ap = argparse.ArgumentParser()``,
    ``sub.add_parser(...)``): their ``.error()`` exits (forty-fourth re-run F5)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        call = node.value if isinstance(node, ast.Assign) else None
        if isinstance(call, ast.Call) and last_name(call.func).lower().endswith("parser"):
            out.update(last_name(t) for t in targets)
    out.discard("")
    return frozenset(out)


class Aliases:
    """Maps local names to the dotted names they were imported as."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def add_import(self, node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
        """Record the names an import binds; returns (local, dotted) pairs."""
        bound: list[tuple[str, str]] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound.append((alias.asname, alias.name))
                else:
                    top = alias.name.split(".", 1)[0]
                    bound.append((top, top))
        elif node.level == 0 and node.module:
            for alias in node.names:
                if alias.name != "*":
                    bound.append((alias.asname or alias.name, f"{node.module}.{alias.name}"))
        for local, dotted in bound:
            self.names[local] = dotted
        return bound

    def dotted(self, node: ast.AST) -> str | None:
        """``T.cuda.nvtx`` -> ``torch.cuda.nvtx`` after ``import torch as T``; None if no chain."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.names.get(node.id, node.id))
        return ".".join(reversed(parts))


def top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports at module level, including inside top-level ``if``/``try``/``with`` blocks."""
    out: list[ast.Import | ast.ImportFrom] = []
    pending: deque[ast.stmt] = deque(tree.body)
    while pending:
        stmt = pending.popleft()
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out.append(stmt)
        elif isinstance(stmt, ast.If):
            pending.extend(stmt.body + stmt.orelse)
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            pending.extend(stmt.body + stmt.orelse + stmt.finalbody)
            for handler in stmt.handlers:
                pending.extend(handler.body)
        elif isinstance(stmt, ast.With):
            pending.extend(stmt.body)
    return out
