"""Unit tests for the Python-source rules (GP2xx) beyond the annotated fixtures."""

from __future__ import annotations

import ast
import re
import textwrap

import pytest

from gpuport.knowledge import load_packages, resolve_target
from gpuport.models import Severity
from gpuport.scan.engine import check_text
from gpuport.scan.finding import Finding
from gpuport.scan.rules import RULES
from gpuport.scan.rules.base import Family, FileKind
from gpuport.scan.rules.python import checker as python_rules
from gpuport.scan.rules.python.guards import (
    ARCH,
    IMPORT,
    PLATFORM,
    guard_flags,
    ident_flags,
    word_parts,
)
from gpuport.scan.rules.python.scope import vendor_skeleton
from gpuport.scan.rules.python.source import (
    REDUCE_ABOVE,
    flow_names,
    reduced_source,
    trie_regex,
)
from tests.scan.fixture_harness import FIXTURES

SMI = 'subprocess.run(["nvidia-smi", "-L"])'
# Enough unrelated top-level statements to make a file large enough for partial parsing.
FILLER = "\n".join(f"def unrelated_{i}():\n    return {i}\n" for i in range(700))


def scan(code: str, target: str = "gfx942") -> tuple[list[Finding], str | None]:
    text = textwrap.dedent(code)
    return check_text("t.py", text, FileKind.PYTHON, resolve_target(target), load_packages())


def only(findings: list[Finding], rule_id: str) -> list[Finding]:
    return [f for f in findings if f.rule_id == rule_id]


# ---- robustness --------------------------------------------------------------


def test_syntax_error_is_a_skip_reason_not_an_exception() -> None:
    findings, skip = scan("import pynvml\ndef broken(:\n    pass\n")
    assert findings == []
    assert skip is not None
    assert skip.startswith("Python syntax error at line 2:")


def test_syntax_error_in_a_parsed_statement_of_a_big_file_is_reported() -> None:
    body = FILLER + "\nx = torch.float8_e4m3fn +\n"
    assert len(body) > REDUCE_ABOVE  # the partial-parse path
    findings, skip = scan(body)
    assert findings == []
    assert skip is not None and f"line {body.count(chr(10))}:" in skip


def test_parse_warnings_of_the_project_are_silenced(recwarn: pytest.WarningsRecorder) -> None:
    scan('import pynvml\nPATTERN = "\\d+"\n')
    assert [str(w.message) for w in recwarn] == []


def test_null_byte_is_a_skip_reason() -> None:
    findings, skip = scan("import pynvml\nx = 1\x00\n")
    assert findings == []
    assert skip is not None


def test_file_without_trigger_words_is_never_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_parse = ast.parse

    def spy(source: str, *args: object, **kwargs: object) -> ast.Module:
        calls.append(source)
        return real_parse(source)

    monkeypatch.setattr(ast, "parse", spy)
    findings, skip = scan("import os\n\ndef add(a, b):\n    return a + b  # cuda is fine here\n")
    assert (findings, skip, calls) == ([], None, [])
    scan("import pynvml\n")
    assert len(calls) == 1


def test_deeply_nested_expression_does_not_recurse_out() -> None:
    long_sum = " + ".join(["1"] * 3000)
    findings, skip = scan(f"import torch\nx = torch.float8_e5m2fnuz\ny = {long_sum}\n")
    assert skip is None or "could not be parsed" in skip  # the parser may refuse; never a crash
    if skip is None:
        assert findings == []


def test_crlf_line_endings() -> None:
    findings, _ = scan("import torch\r\nx = torch.device('hip')\r\n")
    assert [(f.rule_id, f.location.line) for f in findings] == [("GP207", 2)]


def test_columns_are_one_based() -> None:
    findings, _ = scan("import torch\ndev = torch.device('hip')\n")
    assert [(f.location.line, f.location.column) for f in findings] == [(2, 20)]


def test_columns_count_characters_not_utf8_bytes() -> None:
    findings, _ = scan('s = "ééééé"; import pynvml\n')
    assert [(f.rule_id, f.location.line, f.location.column) for f in findings] == [("GP203", 1, 21)]
    line = 't = "😀😀"; import subprocess; subprocess.run(["nvidia-smi"])'
    findings, _ = scan(line + "\n")
    assert [(f.rule_id, f.location.column) for f in findings] == [
        ("GP204", line.index('"nvidia-smi"') + 1)
    ]
    text = (
        "import os\n"
        "os.environ['ROCR_VISIBLE_DEVICES'] = '1'\n"
        "x = 'ü'; env = {'HIP_VISIBLE_DEVICES': '1'}\n"
    )
    findings, _ = scan(text)
    third = text.split("\n")[2]
    assert [(f.rule_id, f.location.line, f.location.column) for f in findings] == [
        ("GP219", 3, third.index("'HIP_") + 1)
    ]


def test_form_feed_and_line_separator_do_not_shift_lines() -> None:
    findings, _ = scan('import os\n\f\n# \u2028 x\ns = "\u2028"; import pynvml\n')
    assert [(f.rule_id, f.location.line, f.location.column) for f in findings] == [("GP203", 4, 17)]
    assert findings[0].location.snippet == 's = "\u2028"; import pynvml'


# ---- guards ------------------------------------------------------------------

GUARDED = {
    "if-hip": f"if torch.version.hip:\n    {SMI}\n",
    "else-of-hip": f"if torch.version.hip:\n    pass\nelse:\n    {SMI}\n",
    "elif-chain": f"if torch.version.hip:\n    pass\nelif x:\n    pass\nelse:\n    {SMI}\n",
    "version-cuda": f"if torch.version.cuda is not None:\n    {SMI}\n",
    "is_hip-call": f"if is_hip():\n    {SMI}\n",
    "IS_ROCM": f"if not IS_ROCM:\n    {SMI}\n",
    "HAS_HIP": f"if HAS_HIP:\n    {SMI}\n",
    "available-and-hip": f"if torch.cuda.is_available() and torch.version.hip:\n    {SMI}\n",
    "rocm-in-version": f"if 'rocm' in torch.__version__:\n    {SMI}\n",
    "platform-is-cuda": f"if current_platform.is_cuda():\n    {SMI}\n",
    "platform-is-rocm": f"if current_platform.is_rocm():\n    {SMI}\n",
    "ternary": 'x = subprocess.run(["nvidia-smi"]) if not torch.version.hip else None\n',
    "and-operand": 'x = torch.version.cuda and subprocess.run(["nvidia-smi"])\n',
    "optional-import": f"try:\n    import pynvml\n    {SMI}\nexcept ImportError:\n    pass\n",
    "try-else": f"try:\n    import x\nexcept ModuleNotFoundError:\n    pass\nelse:\n    {SMI}\n",
    "func-named-rocm": f"def _query_rocm():\n    {SMI}\n",
    "skipIfRocm": f"@skipIfRocm\ndef test_x():\n    {SMI}\n",
    "skipIf-hip": f"@unittest.skipIf(torch.version.hip, 'nv')\ndef test_x():\n    {SMI}\n",
    "class-named-hip": f"class HIPBackend:\n    def run(self):\n        {SMI}\n",
    "match-version-hip": f"match torch.version.hip:\n    case None:\n        {SMI}\n",
    "match-rocm-name": f"match IS_ROCM:\n    case False:\n        {SMI}\n",
    "match-rocm-pattern": (
        f"match backend:\n    case 'rocm':\n        pass\n    case _:\n        {SMI}\n"
    ),
    "match-case-guard": f"match x:\n    case _ if is_hip():\n        {SMI}\n",
    "oserror-handler": f"try:\n    {SMI}\nexcept (OSError, CalledProcessError):\n    pass\n",
    "early-return": f"def f():\n    if torch.version.hip:\n        return None\n    {SMI}\n",
    "early-raise": f"def f():\n    if not torch.version.cuda:\n        raise E()\n    {SMI}\n",
    "early-continue": f"for d in ds:\n    if is_hip():\n        continue\n    {SMI}\n",
    "assert-platform": f"def f():\n    assert torch.version.hip is None\n    {SMI}\n",
    "flag-variable": f"NV = torch.version.cuda is not None\nif NV:\n    {SMI}\n",
    "flag-in-function": f"def f():\n    nv = not torch.version.hip\n    if nv:\n        {SMI}\n",
    "vendor-sibling": f"def _info_amdsmi():\n    pass\ndef _info_nvml():\n    {SMI}\n",
    "class-sibling": f"class ROCmTuner:\n    pass\nclass CUDATuner:\n    x = {SMI}\n",
    "register-keyword": f"@register(register=torch.version.hip is None)\nclass H:\n    x = {SMI}\n",
    "or-one-vendor": f"if torch.version.cuda or torch.version.hip is None:\n    {SMI}\n",
    # a swallowed failure: on an AMD host the probe reports nothing and the program goes on
    # (facefusion, FlagGems; issue 24, nineteenth and twenty-second samples)
    "except-exception": f"try:\n    {SMI}\nexcept Exception:\n    pass\n",
    "bare-except": f"try:\n    {SMI}\nexcept:\n    pass\n",
    "caller-swallows": (
        f"def run_smi():\n    return {SMI}\ndef detect():\n    try:\n        out = run_smi()\n"
        "    except Exception:\n        out = None\n    return out\n"
    ),
    "method-caller-swallows": (
        f"class M:\n    def _smi(self):\n        {SMI}\n    def devices(self):\n"
        "        try:\n            return self._smi()\n"
        "        except OSError:\n            return []\n"
    ),
}

UNGUARDED = {
    "plain": f"{SMI}\n",
    "is_available": f"if torch.cuda.is_available():\n    {SMI}\n",
    "tensor-is-cuda": f"if tensor.is_cuda:\n    {SMI}\n",
    "ship-chip": f"if ship or chip:\n    {SMI}\n",
    "except-value-error": f"try:\n    {SMI}\nexcept ValueError:\n    pass\n",
    "import-error-handler-body": f"try:\n    import x\nexcept ImportError:\n    {SMI}\n",
    "after-the-if": f"if torch.version.hip:\n    pass\n{SMI}\n",
    "string-not-compared": f"if check(reason='needs rocm'):\n    {SMI}\n",
    "match-plain": f"match mode:\n    case 'fast':\n        {SMI}\n",
    "after-the-match": f"match torch.version.hip:\n    case None:\n        pass\n{SMI}\n",
    "exit-on-other-test": f"def f():\n    if x is None:\n        return None\n    {SMI}\n",
    "before-the-exit": f"def f():\n    {SMI}\n    if torch.version.hip:\n        return None\n",
    "exit-in-inner-block": (
        f"def f():\n    if x:\n        if is_hip():\n            return 1\n    {SMI}\n"
    ),
    "flag-from-other-test": f"NV = x is not None\nif NV:\n    {SMI}\n",
    "nvml-without-amd-twin": f"def _info_nvml():\n    {SMI}\n",
    "import-probe": f"if has_tools():\n    {SMI}\n",
    "func-named-nvidia": f"def nvidia_info():\n    {SMI}\n",
    "class-named-nvidia": f"class NvidiaMonitor:\n    def run(self):\n        {SMI}\n",
    "user-option-nvidia": f"if args.use_nvidia_dali:\n    {SMI}\n",
    "except-exception-exits": f"try:\n    {SMI}\nexcept Exception:\n    sys.exit(1)\n",
    "bare-except-reraises": f"try:\n    {SMI}\nexcept:\n    log()\n    raise\n",
    "called-outside-try-too": (
        f"def probe():\n    {SMI}\ntry:\n    probe()\nexcept Exception:\n    pass\nprobe()\n"
    ),
    "import-error-reraised": (
        f"try:\n    import x\n    {SMI}\nexcept ImportError as e:\n    raise E() from e\n"
    ),
    "flag-reassigned": f"ok = torch.version.hip is None\nok = p.endswith('x')\nif ok:\n    {SMI}\n",
    "flag-from-is-available": f"is_nvidia = torch.cuda.is_available()\nif is_nvidia:\n    {SMI}\n",
    "flag-loop-target": f"NV = not torch.version.hip\nfor NV in xs:\n    f()\nif NV:\n    {SMI}\n",
    "fp8-dtype-exit": (
        f"def f(x):\n    if x.dtype == torch.float8_e4m3fnuz:\n        raise E()\n    {SMI}\n"
    ),
    "or-both-vendors": f"if torch.version.cuda or torch.version.hip:\n    {SMI}\n",
    "or-with-other-test": f"if torch.version.hip or x:\n    {SMI}\n",
    "sibling-in-docstring": (
        f'def _info_nvml():\n    """\ndef _info_amdsmi(): ...\n"""\n    {SMI}\n'
    ),
}


@pytest.mark.parametrize("code", GUARDED.values(), ids=list(GUARDED))
def test_guarded(code: str) -> None:
    found = only(scan("import subprocess, torch\n" + code)[0], "GP204")
    assert len(found) == 1
    assert found[0].guarded
    assert found[0].severity is Severity.INFO
    assert found[0].default_severity is Severity.MAJOR


@pytest.mark.parametrize("code", UNGUARDED.values(), ids=list(UNGUARDED))
def test_not_guarded(code: str) -> None:
    found = only(scan("import subprocess, torch\n" + code)[0], "GP204")
    assert len(found) == 1
    assert not found[0].guarded
    assert found[0].severity is Severity.MAJOR


def test_rocm_side_spellings_are_not_lowered_by_a_rocm_branch() -> None:
    code = """\
        import os, torch
        if torch.version.hip:
            d = torch.device("hip")
            p = ["ROCMExecutionProvider"]
            os.environ["HIP_VISIBLE_DEVICES"] = "0"
            os.environ["ROCR_VISIBLE_DEVICES"] = "0"
        """
    findings, _ = scan(code)
    assert sorted((f.rule_id, f.guarded) for f in findings) == [
        ("GP207", False),
        ("GP214", False),
        ("GP219", False),
    ]


@pytest.mark.parametrize(
    ("ident", "parts"),
    [
        ("skipIfRocm", ["skip", "if", "rocm"]),
        ("HAS_HIP", ["has", "hip"]),
        ("HIPBackend", ["hip", "backend"]),
        ("gcnArchName", ["gcn", "arch", "name"]),
        ("relationship", ["relationship"]),
    ],
)
def test_word_parts(ident: str, parts: list[str]) -> None:
    assert word_parts(ident) == parts


@pytest.mark.parametrize(
    ("ident", "flags"),
    [
        ("IS_ROCM", PLATFORM),
        ("is_hip", PLATFORM),
        ("use_amdsmi", PLATFORM),
        ("is_fp8_fnuz", PLATFORM | ARCH),
        ("gcnArchName", PLATFORM | ARCH),
        ("ship", 0),
        ("is_cuda", 0),
        ("use_cuda", 0),
        ("query_nvidia_gpus", 0),
        ("NvidiaMonitor", 0),
    ],
)
def test_ident_flags(ident: str, flags: int) -> None:
    assert ident_flags(ident) == flags


def test_guard_flags_of_tests() -> None:
    def flags(expr: str, **kw: bool) -> int:
        return guard_flags(ast.parse(expr, mode="eval").body, **kw)

    assert flags("torch.version.hip") == PLATFORM
    assert flags("torch.version.cuda is None") == PLATFORM
    assert flags("torch.version.cuda is None", cuda_version=False) == 0
    assert flags("'gfx94' in props.gcnArchName") == PLATFORM | ARCH
    assert flags("torch.cuda.is_available()") == 0
    assert flags("arch.startswith('gfx95')") == PLATFORM | ARCH
    assert flags("try_import_cutlass()") == IMPORT
    assert flags("not try_import_triton() or x") == IMPORT
    assert flags("not has_triton() or x") == 0  # a has_X() probe guards only X's imports
    assert flags("x.dtype == torch.float8_e4m3fnuz") == 0
    assert flags("torch.version.cuda or torch.version.hip") == 0
    assert flags("torch.version.hip or is_rocm()") == PLATFORM
    assert flags("args.use_nvidia_dali") == 0
    assert flags("HAS_X and y", names={"HAS_X": (PLATFORM, 0)}) == PLATFORM
    assert flags("HAS_X", names={"HAS_X": (PLATFORM, 0)}, cuda_version=False) == 0


@pytest.mark.parametrize(
    ("name", "amd", "skeleton"),
    [
        ("_raw_device_count_nvml", False, ("raw", "device", "count", "*")),
        ("_raw_device_count_amdsmi", True, ("raw", "device", "count", "*")),
        ("_get_pynvml_handler", False, ("get", "*", "handler")),
        ("CUDAConfigHeuristic", False, ("*", "config", "heuristic")),
        ("ROCmConfigHeuristic", True, ("*", "config", "heuristic")),
        ("shipment", True, None),
        ("get_count", False, None),
    ],
)
def test_vendor_skeleton(name: str, amd: bool, skeleton: tuple[str, ...] | None) -> None:
    assert vendor_skeleton(name, amd=amd) == skeleton


def test_early_exit_and_flag_survive_partial_parsing() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    code = (
        "import subprocess, torch\n"
        + FILLER
        + "\nIS_NV = torch.version.hip is None\n"
        + FILLER.replace("unrelated_", "more_")
        + "\ndef probe():\n    if torch.version.hip:\n        return None\n"
        + body
        + f"    {SMI}\n"
        + "\nclass K:\n    def m(self):\n"
        + "".join(f"        y{i} = {i}\n" for i in range(60))
        + f"        if IS_NV:\n            {SMI}\n"
    )
    assert len(code) > REDUCE_ABOVE
    found = only(scan(code)[0], "GP204")
    assert [f.guarded for f in found] == [True, True]


# ---- individual rule behaviour ---------------------------------------------------


def test_knowledge_driven_import_messages_name_the_package_and_route() -> None:
    findings, _ = scan("import tensorrt\nfrom flash_attn import flash_attn_func\n")
    by_rule = {f.rule_id: f for f in findings}
    pkgs = load_packages()
    trt, fa = pkgs.by_import("tensorrt"), pkgs.by_import("flash_attn")
    assert trt is not None and fa is not None
    assert "tensorrt" in by_rule["GP201"].message
    assert by_rule["GP201"].fix == trt.route.how
    assert by_rule["GP202"].fix == fa.route.how
    assert by_rule["GP202"].severity is Severity.MINOR


def test_nvml_and_nvtx_modules_are_reported_by_their_own_rules_only() -> None:
    findings, _ = scan("import pynvml\nimport gpustat\nimport nvtx\n")
    assert sorted(f.rule_id for f in findings) == ["GP203", "GP203", "GP217"]


def test_framework_imports_are_not_findings() -> None:
    findings, _ = scan("import torch\nimport triton\nimport jax\nfrom torch import cuda\n")
    assert findings == []


def test_capability_flow_reaches_uses_in_other_top_level_statements() -> None:
    code = (
        "import torch\ncap = torch.cuda.get_device_capability()\n"
        + FILLER
        + "\ndef pick():\n    major, minor = cap\n    sm = major * 10 + minor\n"
        + "    return sm >= 90\n"
    )
    findings, _ = scan(code)
    assert [(f.rule_id, f.location.line) for f in findings] == [("GP205", code.count("\n"))]


@pytest.mark.parametrize(
    "imports",
    [
        "from torch.utils.cpp_extension import load as build\n",
        "from torch.utils.cpp_extension import (\n    include_paths,\n    load as build,\n)\n",
    ],
)
def test_alias_of_cpp_extension_load_is_followed(imports: str) -> None:
    code = imports + FILLER + "\nmod = build(name='k', sources=['k.cu'])\n"
    findings, _ = scan(code)
    assert [(f.rule_id, f.location.line) for f in findings] == [("GP211", code.count("\n"))]


def test_unmarked_import_inside_a_big_function_still_binds_its_alias() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(60))
    code = "def setup():\n    import torch.backends.cudnn as cd\n" + body
    code += "    cd.benchmark = True\n" + FILLER
    findings, _ = scan(code)
    assert [(f.rule_id, f.location.line) for f in findings] == [("GP216", 63)]


def test_fp8_severity_depends_on_target() -> None:
    code = (
        "import torch\na = torch.float8_e4m3fn\nb = torch.float8_e5m2fnuz\n"
        "y = torch._scaled_mm(p, q, scale_a=s, scale_b=s)\n"  # this module runs an FP8 GEMM
    )
    got = {
        t: [(f.location.line, f.severity) for f in scan(code, t)[0]]
        for t in ("gfx942", "gfx950", "gfx90a")
    }
    assert got["gfx942"] == [(2, Severity.BLOCKER)]
    assert got["gfx950"] == [(3, Severity.BLOCKER)]
    assert got["gfx90a"] == [(2, Severity.MAJOR), (3, Severity.MAJOR)]


@pytest.mark.parametrize(
    ("code", "guarded"),
    [
        ("if has_cuda():\n    import pycuda.autoinit\n", False),
        ("if has_pycuda():\n    import pycuda.autoinit\n", True),
        ("def f():\n    if not has_pycuda():\n        return\n    import pycuda.autoinit\n", True),
        ("try:\n    import pycuda.autoinit\nexcept Exception:\n    pass\n", True),
        ("try:\n    import pycuda.autoinit\nexcept:\n    raise\n", False),
        (
            "try:\n    import pycuda.autoinit\nexcept ImportError as e:\n    raise X() from e\n",
            False,
        ),
    ],
)
def test_optional_import_guards(code: str, guarded: bool) -> None:
    found = only(scan(code)[0], "GP201")
    assert [f.guarded for f in found] == [guarded]


def test_lazy_nvidia_only_import_is_major_and_module_level_still_blocker() -> None:
    code = "def f():\n    import tensorrt\n\nimport tensorrt as trt\n"
    found = [(f.location.line, f.severity) for f in only(scan(code)[0], "GP201")]
    assert found == [(2, Severity.MAJOR), (4, Severity.BLOCKER)]
    code = "import tensorrt\ndef f():\n    import tensorrt.plugin\n"
    found = [(f.location.line, f.severity) for f in only(scan(code)[0], "GP201")]
    assert found == [(1, Severity.BLOCKER)]


def test_fp8_named_but_not_computed_with_is_info_and_one_per_line() -> None:
    code = """\
        import torch
        def f(make, x):
            a = make((2, 2), torch.float8_e4m3fn)
            b = x.view(torch.float8_e5m2)
            c = x.to(torch.float8_e4m3fn).to(torch.float8_e5m2)
            return torch.float8_e5m2 if x else torch.float8_e4m3fn
        """
    found = [(f.location.line, f.severity, f.guarded) for f in scan(code)[0]]
    assert found == [
        (3, Severity.INFO, False),
        (4, Severity.INFO, False),
        (5, Severity.MINOR, False),  # casts and a dtype returned: no FP8 GEMM in f
        (6, Severity.MINOR, False),
    ]


def test_fp8_storage_and_casts_are_minor_gemm_is_a_blocker() -> None:
    storage = "import torch\ndef store(x):\n    return x.to(torch.float8_e4m3fn)\n"
    gemm = (
        "import torch\n"
        "def to_fp8(a):\n    return a.to(torch.float8_e4m3fn)\n"  # a GEMM's operand
        "def mm(a, b, s):\n    return torch._scaled_mm(a, b, scale_a=s, scale_b=s)\n"
    )
    triton = "import torch\nx8 = x.to(torch.float8_e5m2)\nacc = tl.dot(a, b, acc)\n"
    mx = "import torch\nq = x.to(torch.float8_e4m3fn)\ns = e.view(torch.float8_e8m0fnu)\n"
    stored = only(scan(storage)[0], "GP208")
    assert [(f.location.line, f.severity) for f in stored] == [(3, Severity.MINOR)]
    assert "stored or cast here" in stored[0].message
    for code in (gemm, triton, mx):
        assert [f.severity for f in only(scan(code)[0], "GP208")] == [Severity.BLOCKER], code
    # gfx950 computes with the OCP types: none of this is a finding there
    assert only(scan(gemm, "gfx950")[0], "GP208") == []


def test_unsigned_dtype_severity_follows_use() -> None:
    code = """\
        import torch
        a = torch.randint(0, 9, (4,), dtype=torch.uint32)
        b = torch.full((2,), 1, dtype=torch.uint64)
        c = x.to(torch.uint16)
        d = torch.tensor([1, 0], dtype=torch.uint64)
        e = torch.empty(2, dtype=torch.uint64).view(torch.uint32)
        f = {torch.uint32: "u32"}
        """
    found = [(f.location.line, f.severity) for f in only(scan(code)[0], "GP210")]
    assert found == [
        (2, Severity.MINOR),
        (3, Severity.MINOR),
        (4, Severity.MINOR),
        (5, Severity.INFO),
    ]


@pytest.mark.parametrize(
    ("call", "severity"),
    [
        ("load(name='a', sources=[os.path.join(d, 'a.cpp'), d + '/b.cpp'])", None),
        ("load(name='a', sources=[f'{d}/a.cpp', Path(d) / 'k.cu'])", Severity.MINOR),
        ("load(name='a', sources=glob.glob('*.cu'))", Severity.MINOR),
        ("load(name='a', sources=SRCS)", None),
        ("load(name='a', sources=['a.cpp'], with_cuda=True)", Severity.MINOR),
        ("load(name='a', sources=['a.cpp'], extra_cuda_cflags=['-O3'])", Severity.MINOR),
        ("load(name='a', sources=[p for p in ps])", Severity.MINOR),
        ("load(name='a', sources=unknown)", Severity.MINOR),
        ("load('a', ['x.cpp', *more])", Severity.MINOR),
        ("load_inline(name='a', cpp_sources=[''], extra_cuda_cflags=['-O3'])", Severity.MAJOR),
    ],
)
def test_runtime_extension_sources_are_resolved(call: str, severity: Severity | None) -> None:
    code = (
        "import os, glob\nfrom torch.utils.cpp_extension import load, load_inline\n"
        f"SRCS = ['x.cpp']\ndef build(d):\n    mod = {call}\n"
    )
    found = [f.severity for f in only(scan(code)[0], "GP211")]
    assert found == ([] if severity is None else [severity])


@pytest.mark.parametrize(
    ("code", "severity"),
    [
        ("import triton.language as tl\ntl.inline_asm_elementwise(asm_str=ASM)", Severity.BLOCKER),
        ("import triton\ntriton.language.inline_asm_elementwise(ASM)", Severity.BLOCKER),
        ("from triton.language import inline_asm_elementwise as ia\nia(ASM)", Severity.BLOCKER),
        ("tl.inline_asm_elementwise(asm)", Severity.MINOR),  # `tl` by convention
        ("import triton.language as tl\ntl.inline_asm_elementwise('v_mov_b32 $0, $1')", None),
        ("ops.inline_asm_elementwise(asm=ASM)", None),
        ("def inline_asm_elementwise(asm): ...\ninline_asm_elementwise(ASM)", None),
    ],
)
def test_inline_asm_only_from_triton(code: str, severity: Severity | None) -> None:
    text = 'ASM = "mov.u32 $0, %laneid;"\n' + code.replace("ASM", '"mov.u32 $0, %laneid;"') + "\n"
    found = [f.severity for f in only(scan(text)[0], "GP212")]
    assert found == ([] if severity is None else [severity])


def test_hip_and_rocr_only_reported_when_both_are_set() -> None:
    one, _ = scan("import os\nos.environ['HIP_VISIBLE_DEVICES'] = '1'\n")
    both, _ = scan(
        "import os\nos.environ['ROCR_VISIBLE_DEVICES'] = '1'\nenv = {'HIP_VISIBLE_DEVICES': '1'}\n"
    )
    assert one == []
    assert [(f.rule_id, f.location.line) for f in both] == [("GP219", 3)]


# ---- the cheap text passes ------------------------------------------------------


def test_trie_regex_matches_exactly_the_words() -> None:
    words = ["nvml", "nvidia", "nvtx", "import cupy", "import cupyx", "import cuda"]
    pattern = re.compile(trie_regex(words))
    for word in words:
        assert pattern.search(f"x {word} y")
    assert not pattern.search("nvid cupy import cud")


def test_trigger_words_cover_knowledge_imports() -> None:
    words = python_rules.trigger_words(load_packages())
    assert "import tensorrt" in words and "from tensorrt" in words
    assert "import torch" not in words  # a framework: every file imports it


def test_flow_names_follow_assignments() -> None:
    code = "cap = torch.cuda.get_device_capability()\nmajor, minor = cap\nsm = major * 10 + minor\n"
    assert flow_names(code) == {"cap", "major", "minor", "sm"}
    assert flow_names("x = 1\n") == set()


def test_reduced_source_keeps_line_numbers_and_marked_statements() -> None:
    lines = ["import os", '"""doc', "not code", '"""']
    lines += [f"def f{i}():\n    return {i}" for i in range(40)]
    lines += ["class K:"] + [f"    def m{i}(self):\n        return {i}" for i in range(40)]
    lines += ["    def hit(self):\n        return torch.float8_e5m2"]
    text = "\n".join(lines) + "\n"
    mask = bytearray(text.count("\n") + 2)
    target = text.splitlines().index("        return torch.float8_e5m2") + 1
    mask[target] = 1
    reduced = reduced_source(text, mask, min_size=0)
    assert reduced is not None
    assert reduced.count("\n") == text.count("\n")
    assert reduced.splitlines()[target - 1] == text.splitlines()[target - 1]
    assert "def f3" not in reduced and "def m3" not in reduced and "import os" in reduced
    ast.parse(reduced)


def test_reduction_never_changes_findings_on_the_fixtures(monkeypatch: pytest.MonkeyPatch) -> None:
    paths = sorted((FIXTURES / "python").glob("*.py"))
    assert paths
    for path in paths:
        text = path.read_text(encoding="utf-8")
        target = re.search(r"target=(\w+)", text)
        name = target.group(1) if target else "gfx942"
        with_reduction, _ = scan(text, name)
        monkeypatch.setattr(python_rules, "reduced_source", lambda *_: None)
        without, _ = scan(text, name)
        monkeypatch.undo()
        assert with_reduction == without, path.name


# ---- the rule table ---------------------------------------------------------------


def test_python_rule_metadata() -> None:
    rules = [r for r in RULES.values() if r.family is Family.PYTHON]
    assert len(rules) >= 18
    for rule in rules:
        assert re.fullmatch(r"GP2\d\d", rule.id)
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", rule.name), rule.id
        assert rule.references and all(u.startswith("https://") for u in rule.references)
        assert 2 <= rule.rationale.count(". ") + 1 <= 5, rule.id
        assert rule.fix and rule.effort_hours > 0
