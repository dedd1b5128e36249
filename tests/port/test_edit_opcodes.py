"""port's diff from its own edits (red-team re-run 12): the line opcodes come from the edit
spans, each run of touched lines compared on its own, instead of difflib over the whole file
(400 KB of scattered mask fixes: 61 s). On random texts and edits they must describe the
change exactly, without falling back to difflib, and the hunks must rebuild the new text."""

from __future__ import annotations

import random

from gpuport.port import edits as ed
from gpuport.port.edits import Edit, FileEdits, hunks, split_lines


def _random_case(rng: random.Random) -> tuple[str, list[Edit]]:
    words = ["a", "bb", "\n", "x\n", "\n\n", "k<<<1,1>>>();\n", "  mask\n", ""]
    text = "".join(rng.choice(words) for _ in range(rng.randint(0, 40)))
    cuts = sorted(rng.sample(range(len(text) + 1), k=min(len(text) + 1, 2 * rng.randint(0, 5))))
    out = []
    for i in range(0, len(cuts) - 1, 2):
        start, end = cuts[i], cuts[i + 1] if rng.random() < 0.7 else cuts[i]
        new = rng.choice(["", "Y", "Z\n", "\n", "#if H\nq\n#endif\n", "w"])
        out.append(Edit(start, end, new, f"fix{i % 3}"))
    return text, out


def _rebuilt(old: str, hs: list) -> str:  # type: ignore[type-arg]
    a = split_lines(old)
    out: list[str] = []
    pos = 0
    for h in hs:
        start = h.old_start - 1 if h.old_lines else h.old_start
        out += a[pos:start]
        pos = start
        tag = " "
        for line in h.lines:
            if line == "\\ No newline at end of file":
                if tag in " +":  # the new side's line has no newline
                    out[-1] = out[-1].removesuffix("\n")
                continue
            tag, body = line[0], line[1:]
            if tag in " +":
                out.append(body + "\n")
            if tag in " -":
                pos += 1
    out += a[pos:]
    return "".join(out)


def test_edit_opcodes_describe_the_change_exactly() -> None:
    rng = random.Random(12)  # noqa: S311 - test data
    for _ in range(3000):
        text, edits = _random_case(rng)
        fe = FileEdits("f.cu", text)
        for e in edits:
            fe.add_all([e])
        new = fe.apply()
        ops = ed._edit_opcodes(text, fe.edits)
        assert ops is not None
        assert ed._consistent(ops, split_lines(text), split_lines(new)), (text, fe.edits)
        spans = [(*fe.lines_of(e), e.fix, e.labels) for e in fe.edits]
        hs = hunks(text, new, spans, {}, fe.opcodes(new))
        if text != new:
            assert _rebuilt(text, hs) == new, (text, fe.edits)


def test_scattered_fixes_make_the_diff_in_linear_time() -> None:
    import time

    text = "".join(
        f"__device__ int f{i}() {{ return 0xffffffff; }}\n" + "\n" * 7 for i in range(8000)
    )
    fe = FileEdits("k.cu", text)
    at = 0
    while (at := text.find("0xffffffff", at)) != -1:
        fe.add_all([Edit(at, at + 10, "GPUPORT_FULL_MASK", "mask")])
        at += 10
    new = fe.apply()
    spans = [(*fe.lines_of(e), e.fix, e.labels) for e in fe.edits]
    started = time.process_time()
    hs = hunks(text, new, spans, {"mask": ["GP302"]}, fe.opcodes(new))
    took = time.process_time() - started
    assert len(hs) == 8000 and all(h.fixes == ["mask"] for h in hs)
    assert took < 10, f"{took:.1f} s"  # ~1 s; difflib over the file took minutes
