"""Error metrics between two tensors, vectorised and streamed in chunks.

A is the reference (its magnitudes divide relative errors), B the candidate. Everything a row
of the report shows comes out of one pass over the two tensors, chunk by chunk, with the
buffers reused, because ``diff`` has to get through gigabytes of activations on two CPU cores:
no float64 copies of whole tensors, no temporaries the size of the tensor.

The ULP distance is counted in the tensors' *own* dtype by viewing the bits as integers
(the sign-magnitude pattern is monotonic within one sign), as hipbridge does: upcasting bf16 to
fp32 first would turn one bf16 ULP into 65536. It is counted only where A and B are both
normal numbers of the same sign and ``|a|`` is at least the tolerance's atol: across zero or
among subnormals one ULP is tiny and the count explodes (hipbridge's layer_norm read 1.75e9 ULP
at a max abs error of 1.6e-2; a field trial saw ~2e9 on nearly every row, all sign flips near
zero). Those elements are judged by atol alone; a tensor with no element left has no ULP
figure (blank).

No finite element is ever skipped: a chunk whose differences or sums of squares overflow the
compute dtype (1e20 vs 2e20 squares past fp32's 3.4e38; 3e38 vs -3e38 differ by more than fp32
holds) is measured again in float64, scaled by a power of two when even float64 would overflow.
The sums are kept with a common power-of-two exponent, which cancels in cosine and SQNR.

A cosine floor (``min_cosine``, from the tolerance) is a gate besides the elementwise rule: when
the error is above the noise floor (RMS(b - a) > atol) and the cosine is below it, the tensor is
not within tolerance even if every element is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from gpuport.validate.model import Metrics

CHUNK = 1 << 18  # elements per step: 1 MiB of fp32, stays in cache across the ~20 passes

_INT_OF_SIZE = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}


@dataclass
class _Acc:
    """Running sums over the chunks (Python floats are doubles: no precision lost there)."""

    n: int = 0
    max_abs: float = 0.0
    sum_abs: float = 0.0
    sum_a2: float = 0.0
    sum_b2: float = 0.0
    sum_d2: float = 0.0
    max_rel: float = 0.0
    max_ulp: int = 0
    ulp_counted: int = 0  # elements the ULP figure covers (both normal, same sign)
    mismatched: int = 0
    nonfinite_a: int = 0
    nonfinite_b: int = 0
    min_atol: float = 0.0
    min_rtol: float = 0.0
    no_rtol: bool = False  # an element with a == 0 fails: no rtol can pass it
    exp: int = 0  # the sums hold values scaled by 2**-exp (1x, 2x for the squares)

    def add_sums(self, s_abs: float, a2: float, b2: float, d2: float, exp: int) -> None:
        """Fold sums computed on values scaled by 2**-exp, rescaling to the larger exponent."""
        if exp > self.exp:
            shift = self.exp - exp
            self.sum_abs = math.ldexp(self.sum_abs, shift)
            self.sum_a2 = math.ldexp(self.sum_a2, 2 * shift)
            self.sum_b2 = math.ldexp(self.sum_b2, 2 * shift)
            self.sum_d2 = math.ldexp(self.sum_d2, 2 * shift)
            self.exp = exp
        elif exp < self.exp:
            shift = exp - self.exp
            s_abs, a2 = math.ldexp(s_abs, shift), math.ldexp(a2, 2 * shift)
            b2, d2 = math.ldexp(b2, 2 * shift), math.ldexp(d2, 2 * shift)
        self.sum_abs += s_abs
        self.sum_a2 += a2
        self.sum_b2 += b2
        self.sum_d2 += d2


def _ldexp(x: float, exp: int) -> float:
    """``x · 2**exp`` that saturates to inf instead of raising OverflowError."""
    try:
        return math.ldexp(x, exp)
    except OverflowError:
        return math.copysign(math.inf, x)


# values above this are scaled down before squaring in float64 (2**400 squared, times a
# chunk of 2**18 elements, stays far below float64's 1.8e308)
_WIDE_SCALE_FROM = 2.0**400
# a minimal rtol above this can only come from |a| near zero: check for a == 0 (no rtol at all)
_ABSURD_RTOL = 1e20


def compute_dtype(torch: Any, dtype: Any) -> Any:
    """float64 stays float64; every other floating type is compared in float32."""
    return torch.float64 if dtype == torch.float64 else torch.float32


class _Work:
    """Buffers for one chunk, allocated once per tensor pair (fresh allocations page-fault)."""

    def __init__(self, torch: Any, size: int, cdt: Any, int_dt: Any) -> None:
        self.d = torch.empty(size, dtype=cdt)
        self.absa = torch.empty(size, dtype=cdt)
        self.t = torch.empty(size, dtype=cdt)
        self.t2 = torch.empty(size, dtype=cdt)
        self.mask = torch.empty(size, dtype=torch.bool)
        wide = None if int_dt is None else (int_dt if int_dt.itemsize >= 4 else torch.int32)
        self.i1 = None if wide is None else torch.empty(size, dtype=wide)
        self.i2 = None if wide is None else torch.empty(size, dtype=wide)
        narrow = wide is not None and wide is not int_dt  # 8/16-bit floats: widen to int32
        self.wa = torch.empty(size, dtype=wide) if narrow else None
        self.wb = torch.empty(size, dtype=wide) if narrow else None
        self.ca = torch.empty(size, dtype=cdt)
        self.cb = torch.empty(size, dtype=cdt)


def kind(dtype: Any) -> str:
    """'complex', 'float' or 'exact' (integers and booleans): what can be compared with what."""
    if dtype.is_complex:
        return "complex"
    return "float" if dtype.is_floating_point else "exact"


def kind_mismatch(a: Any, b: Any) -> str | None:
    """Why A's and B's tensors cannot be compared numerically (None when they can).

    A float output that became an integer one (or the reverse) is a hard failure: comparing
    after a cast would truncate (0.7 vs 0 "equal") or hide the change of meaning.
    """
    ka, kb = kind(a.dtype), kind(b.dtype)
    if ka == kb:
        return None
    da, db = (str(t.dtype).removeprefix("torch.") for t in (a, b))
    return f"dtype differs in kind: A {da} ({ka}), B {db} ({kb})"


def compare_tensors(
    torch: Any, a: Any, b: Any, atol: float, rtol: float, min_cosine: float | None = None
) -> Metrics:
    """All metrics of B against A in one chunked pass (both on the CPU, same shape).

    A and B must be of the same kind (see :func:`kind_mismatch`; callers report a mismatch as a
    hard failure): ValueError otherwise.
    """
    why = kind_mismatch(a, b)
    if why is not None:
        raise ValueError(why)
    if a.is_complex():
        a, b = torch.view_as_real(a), torch.view_as_real(b)
    if not a.is_floating_point():
        return _compare_exact(torch, a, b)
    fa = a.reshape(-1)
    fb = b.reshape(-1)
    cdt = compute_dtype(torch, a.dtype if a.dtype == torch.float64 else b.dtype)
    int_dt = getattr(torch, _INT_OF_SIZE[a.element_size()]) if a.dtype == b.dtype else None
    tiny = float(torch.finfo(a.dtype).tiny)
    acc = _Acc()
    n = fa.numel()
    w = _Work(torch, min(CHUNK, max(n, 1)), cdt, int_dt)
    for start in range(0, n, CHUNK):
        ra = fa[start : start + CHUNK]
        rb = fb[start : start + CHUNK]
        m = ra.numel()
        ca = ra if ra.dtype == cdt else w.ca[:m].copy_(ra)
        cb = rb if rb.dtype == cdt else w.cb[:m].copy_(rb)
        absa = w.absa[:m]
        if not _chunk(torch, ca, cb, w.d[:m], absa, w.t[:m], w.t2[:m], atol, rtol, tiny, acc):
            if bool(torch.isfinite(ca).all()) and bool(torch.isfinite(cb).all()):
                _chunk_wide(torch, ca, cb, atol, rtol, tiny, acc)  # overflow, not NaN/Inf
            else:
                _chunk_nonfinite(torch, ca, cb, atol, rtol, tiny, acc)
            torch.abs(torch.where(torch.isfinite(ca), ca, 0.0), out=absa)
        if int_dt is not None:
            ulp, counted = _chunk_ulp(torch, ra, rb, absa, cb, atol, tiny, int_dt, w, m)
            acc.max_ulp = max(acc.max_ulp, ulp)
            acc.ulp_counted += counted
    return _finish(acc, n, int_dt is not None, atol, min_cosine)


def _chunk(
    torch: Any,
    a: Any,
    b: Any,
    d: Any,
    absa: Any,
    t: Any,
    t2: Any,
    atol: float,
    rtol: float,
    tiny: float,
    acc: _Acc,
    exp: int = 0,
) -> bool:
    """Fold one chunk into ``acc``; False (and nothing folded) if a difference or a sum is not
    finite, i.e. the chunk holds NaN/Inf or overflows the compute dtype.

    With ``exp`` the values (and ``atol``, ``tiny``) are scaled by 2**-exp: absolute figures
    are scaled back, ratios need nothing.
    """
    torch.sub(b, a, out=d)
    sum_d2 = float(torch.dot(d, d))
    d.abs_()
    max_abs = float(d.max())
    if not (math.isfinite(max_abs) and math.isfinite(sum_d2)):
        return False
    sum_a2 = float(torch.dot(a, a))
    sum_b2 = float(torch.dot(b, b))
    if not (math.isfinite(sum_a2) and math.isfinite(sum_b2)):
        return False
    torch.abs(a, out=absa)
    torch.sub(d, absa, alpha=rtol, out=t)  # |d| - rtol·|a|: the atol each element needs
    need = float(t.max())
    acc.min_atol = max(acc.min_atol, _ldexp(need, exp))
    if need > atol:  # some element fails: count them, and find the rtol that would pass
        acc.mismatched += int(torch.gt(t, atol).sum())
        torch.clamp_min(absa, tiny, out=t2)
        torch.sub(d, atol, out=t).div_(t2)
        worst = float(t.max())
        if worst > _ABSURD_RTOL:  # |a| floored at tiny: is it an element with a == 0?
            zero_fail = torch.eq(absa, 0) & torch.gt(d, atol)
            if bool(zero_fail.any()):  # |b - a| > atol where a == 0: no rtol passes it
                acc.no_rtol = True
                worst = float(t.masked_fill_(zero_fail, 0.0).max())
        acc.min_rtol = max(acc.min_rtol, worst)
    # relative error with |a| floored at atol: below it, "relative" means nothing (a value
    # that should be 0 has an infinite relative error) and atol is what judges it
    torch.clamp_min(absa, max(atol, tiny), out=t2)
    torch.div(d, t2, out=t)
    acc.max_rel = max(acc.max_rel, float(t.max()))
    acc.n += d.numel()
    acc.max_abs = max(acc.max_abs, _ldexp(max_abs, exp))
    acc.add_sums(float(d.sum()), sum_a2, sum_b2, sum_d2, exp)
    return True


def _chunk_wide(
    torch: Any, a: Any, b: Any, atol: float, rtol: float, tiny: float, acc: _Acc
) -> None:
    """A finite chunk that overflowed its compute dtype: measure it again in float64.

    fp32/bf16 values (at most 3.4e38) square without overflow in float64; float64 values
    beyond 2**400 are first scaled by a power of two (exact), and the scale is carried in
    ``acc`` so no element is ever dropped.
    """
    a64 = a.to(torch.float64)
    b64 = b.to(torch.float64)
    big = max(float(a64.abs().max()), float(b64.abs().max())) if a64.numel() else 0.0
    exp = 0
    if big > _WIDE_SCALE_FROM:
        exp = math.frexp(big)[1]
        scale = math.ldexp(1.0, -exp)
        a64 = a64 * scale
        b64 = b64 * scale
    d, absa, t, t2 = (torch.empty_like(a64) for _ in range(4))
    atol_s, tiny_s = math.ldexp(atol, -exp), max(math.ldexp(tiny, -exp), 5e-324)
    if not _chunk(torch, a64, b64, d, absa, t, t2, atol_s, rtol, tiny_s, acc, exp):
        raise ArithmeticError("float64 measurement of a finite chunk overflowed")  # unreachable


def _chunk_nonfinite(
    torch: Any, a: Any, b: Any, atol: float, rtol: float, tiny: float, acc: _Acc
) -> None:
    """A chunk with NaN/Inf: count disagreements, then measure the finite elements."""
    fin_a = torch.isfinite(a)
    fin_b = torch.isfinite(b)
    agree = torch.eq(a, b) | (torch.isnan(a) & torch.isnan(b))
    acc.nonfinite_b += int((fin_a & ~fin_b).sum())
    acc.nonfinite_a += int((~fin_a & ~agree).sum())
    both = fin_a & fin_b
    fa, fb = a[both], b[both]
    if fa.numel():
        d, absa, t, t2 = (torch.empty_like(fa) for _ in range(4))
        if not _chunk(torch, fa, fb, d, absa, t, t2, atol, rtol, tiny, acc):
            _chunk_wide(torch, fa, fb, atol, rtol, tiny, acc)  # finite, so it overflowed


def _chunk_ulp(
    torch: Any,
    ra: Any,
    rb: Any,
    absa: Any,
    cb: Any,
    floor: float,
    tiny: float,
    int_dt: Any,
    w: _Work,
    m: int,
) -> tuple[int, int]:
    """(max ULP distance, elements counted), counted in the raw dtype's bits, over elements
    where A and B are both finite and normal, of the same sign, and ``|a| >= floor``.

    Within one sign the integer view of an IEEE float is monotonic, so the distance is the
    difference of the integers. Across zero, or next to subnormals, a ULP count measures the
    spacing of tiny numbers, not the error (2e9 "ULP" for a sign flip of 1e-7): those elements
    are left to max abs, and a tensor with none left gets no ULP figure at all.
    """
    if w.i1 is None or w.i2 is None:
        raise ValueError("no integer buffers for a ULP count")
    ia = ra.view(int_dt)
    ib = rb.view(int_dt)
    dist, sx = w.i1[:m], w.i2[:m]
    if w.wa is not None and w.wb is not None:  # sign-extends, so the sign test below holds
        ia = w.wa[:m].copy_(ia)
        ib = w.wb[:m].copy_(ib)
    skip = torch.lt(absa, max(floor, tiny), out=w.mask[:m])
    torch.bitwise_xor(ia, ib, out=sx)
    skip |= sx < 0  # the sign bits differ
    absb = torch.abs(cb, out=w.t2[:m])
    skip |= ~(absb >= tiny)  # zero or subnormal (and NaN)
    skip |= ~torch.isfinite(absb) | ~torch.isfinite(absa)
    counted = m - int(skip.sum())
    if not counted:
        return 0, 0
    torch.sub(ia, ib, out=dist).abs_()
    dist.masked_fill_(skip, 0)
    return int(dist.max()), counted


def _compare_exact(torch: Any, a: Any, b: Any) -> Metrics:
    """Integers and booleans: equal or not (assert_close gives them zero tolerance)."""
    fa = a.reshape(-1).to(torch.int64)
    fb = b.reshape(-1).to(torch.int64)
    diff = (fb - fa).abs()
    mismatched = int(torch.count_nonzero(diff))
    n = fa.numel()
    max_abs = float(diff.max()) if n else 0.0
    mean_abs = float(diff.double().mean()) if n else 0.0
    return Metrics(
        numel=n,
        max_abs=max_abs,
        mean_abs=mean_abs,
        max_rel=0.0 if not mismatched else math.inf,
        max_ulp=None,
        cosine=None,
        sqnr_db=None,
        mismatched=mismatched,
        min_atol=max_abs,
        min_rtol=None if mismatched else 0.0,
    )


def _finish(acc: _Acc, n: int, ulp: bool, atol: float, min_cosine: float | None) -> Metrics:
    # a·b = (|a|² + |b|² - |a-b|²) / 2: rounding errors in |a|² and |b|² then only enter the
    # cosine to second order, so identical tensors give exactly 1 and near-identical ones a
    # 1 - cos as accurate as |a-b|² (a direct fp32 a·b is off by ~1e-7)
    norm = math.sqrt(acc.sum_a2 * acc.sum_b2)
    if norm > 0:
        dot = (acc.sum_a2 + acc.sum_b2 - acc.sum_d2) / 2
        cosine: float | None = max(-1.0, min(1.0, dot / norm))
    else:
        cosine = 1.0 if acc.sum_d2 == 0 else 0.0
    if acc.sum_d2 == 0:
        sqnr: float | None = None
    elif acc.sum_a2 == 0:
        sqnr = -300.0
    else:
        sqnr = 10.0 * math.log10(acc.sum_a2 / acc.sum_d2)
    min_rtol: float | None = acc.min_rtol
    if acc.mismatched and (acc.no_rtol or not math.isfinite(acc.min_rtol)):
        min_rtol = None
    # the cosine gate only applies above the noise floor: RMS(b - a) > atol (near-zero
    # tensors have meaningless directions, and atol already judges them)
    rms_d = _ldexp(math.sqrt(acc.sum_d2 / acc.n), acc.exp) if acc.n else 0.0
    cosine_failed = (
        min_cosine is not None and cosine is not None and cosine < min_cosine and rms_d > atol
    )
    return Metrics(
        numel=n,
        max_abs=acc.max_abs,
        mean_abs=_ldexp(acc.sum_abs / acc.n, acc.exp) if acc.n else 0.0,
        max_rel=acc.max_rel,
        max_ulp=acc.max_ulp if ulp and acc.ulp_counted else None,
        cosine=cosine,
        sqnr_db=sqnr,
        mismatched=acc.mismatched,
        nonfinite_a=acc.nonfinite_a,
        nonfinite_b=acc.nonfinite_b,
        min_atol=max(0.0, acc.min_atol),
        min_rtol=min_rtol,
        min_cosine=min_cosine,
        cosine_failed=cosine_failed,
    )
