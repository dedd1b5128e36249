"""The .gitignore matcher on RE2 (gpuport.scan.project.ignore_spec) answers as pathspec's own
GitIgnoreSpec does, on random .gitignores and paths (issue 23, item 4)."""

from __future__ import annotations

import random

import pathspec

from gpuport.scan.project import ignore_spec
from gpuport.scan.project.ignore_spec import IgnoreSpec

PARTS = ["a", "b", "*", "**", "?", "[ab]", "[!a]", "/", "!", "\\", ".o", "build", "x", "dir/",
         "*.cu", "!*.cu", "#c", " ", "\\ ", "é"]  # fmt: skip
NAMES = ["a", "b", "x", "build", "k.cu", "k.o", "dir", "ab", "ba", "xx.o", "é", " "]


def test_matches_pathspec_on_random_gitignores() -> None:
    rng = random.Random(23)  # noqa: S311 - test inputs
    compared = 0
    for block in (ignore_spec.BLOCK, 2):  # also with blocks smaller than the file
        ignore_spec.BLOCK = block
        try:
            for _ in range(400):
                lines = [
                    "".join(rng.choice(PARTS) for _ in range(rng.randint(1, 5)))
                    for _ in range(rng.randint(1, 7))
                ]
                try:
                    ref = pathspec.GitIgnoreSpec.from_lines(lines, backend="simple")
                except ValueError:  # a line that is not a pattern: gitignore_spec leaves it out
                    continue
                mine = IgnoreSpec(lines)
                for _ in range(15):
                    depth = rng.randint(1, 4)
                    path = "/".join(rng.choice(NAMES) for _ in range(depth))
                    path += rng.choice(["", "/"])
                    assert mine.match_file(path) == ref.match_file(path), (lines, path)
                    compared += 1
        finally:
            ignore_spec.BLOCK = 64
    assert compared > 5_000
