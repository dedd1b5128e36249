"""Property tests of the translator (issue 3): on token soups it never crashes, never changes a
comment, string literal or non-CUDA identifier, and is idempotent."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuport.hipify import translate
from gpuport.hipify.translate import MASK_DROPPED
from gpuport.knowledge.api_map import load_api_map
from gpuport.scan.cxx import lex

_API = [*sorted(load_api_map().entries)[:400:7], "cudaMalloc", "cudaStream_t", "__shfl_sync"]
_TOKENS = st.one_of(
    st.sampled_from(_API),
    st.sampled_from(["my_cuda_buf", "cudaX_user", "launch_cuda", "kernel", "T", "x1"]),
    st.sampled_from(["/* cudaMalloc */", "// cudaFree x\n", '"cudaMemcpy"', "'c'", '"a\\"b"']),
    st.sampled_from(["<<<", ">>>", "<", ">", "(", ")", ",", ";", "{", "}", "::", ".", "->"]),
    st.sampled_from([" ", "\n", "0xffffffff", "1", "#include <cuda_runtime.h>\n"]),
)
_SOUP = st.lists(_TOKENS, max_size=30).map(" ".join)
_IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*")


def _hidden(text: str) -> str:
    code = lex(text).code
    hidden = "".join(t for t, c in zip(text, code, strict=True) if t != c)
    return hidden.replace(MASK_DROPPED.replace(" ", ""), "")


_MAP = load_api_map()
_KNOWN = set(_MAP.entries) | {e.hip for e in _MAP.entries.values() if e.hip}
_KNOWN |= set(_MAP.namespaces) | {n.hip for n in _MAP.namespaces.values()}
_KNOWN |= {"hipLaunchKernelGGL", "HIP_KERNEL_NAME", "include", "__shfl", "__shfl_sync"}


def _user_identifiers(text: str) -> list[str]:
    """Identifiers of code that are neither CUDA API names nor HIP names the map emits."""
    code = re.sub(r"(?m)^[ \t]*#[ \t]*include.*$", "", lex(text).code)
    return [w for w in _IDENT.findall(code) if w not in _KNOWN]


@settings(max_examples=200, deadline=None)
@given(_SOUP, st.sampled_from(["6.1", "6.4"]), st.sampled_from(["keep", "ggl"]))
def test_translation_properties(soup: str, version: str, syntax: str) -> None:
    result = translate(soup, hip_version=version, launch_syntax=syntax)  # type: ignore[arg-type]
    out = result.text
    assert _hidden(out) == _hidden(soup)
    assert _user_identifiers(out) == _user_identifiers(soup)
    again = translate(out, hip_version=version, launch_syntax=syntax)  # type: ignore[arg-type]
    assert again.text == out
