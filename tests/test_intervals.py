"""gpuport.intervals: the same answers as a scan of every range, on random ranges."""

from __future__ import annotations

import random
from itertools import pairwise

from gpuport.intervals import Growing, Intervals, in_any


def test_in_any_answers_as_a_scan_of_every_range_does() -> None:
    rng = random.Random(23)  # noqa: S311  (test data, not secrets)
    for _ in range(200):
        spans = [(a, a + rng.randrange(0, 12)) for a in (rng.randrange(0, 300) for _ in range(40))]
        for x in range(-2, 320):
            assert in_any(spans, x) == any(a <= x < b for a, b in spans)
            assert in_any(spans, x, closed=True) == any(a <= x <= b for a, b in spans)


def test_a_list_that_grows_is_merged_again() -> None:
    spans = [(i * 10, i * 10 + 2) for i in range(20)]
    assert not in_any(spans, 500)
    spans.append((499, 501))
    assert in_any(spans, 500)
    assert 5 not in Intervals([(0, 5), (6, 8)]) and 4 in Intervals([(0, 5), (3, 4)])


def test_growing_answers_between_additions_as_a_scan_does() -> None:
    rng = random.Random(24)  # noqa: S311  (test data, not secrets)
    for _ in range(300):
        grown, spans = Growing(), []
        for _ in range(rng.randrange(0, 30)):
            a = rng.randrange(0, 60)
            b = a + rng.randrange(0, 10)
            grown.add(a, b)
            spans.append((a, b))
            for x in range(-1, 75):
                assert (x in grown) == any(s <= x < e for s, e in spans)
        pairs = list(zip(grown.starts, grown.ends, strict=True))
        assert all(s < e for s, e in pairs)
        assert all(e < s for (_, e), (s, _) in pairwise(pairs))
