"""YAML read as a node tree first, built into Python values only when that is linear.

PyYAML's constructor copies every merged mapping (``<<: *a``, or the same key spelled
``!!merge m: *a``) into each mapping that merges it, so a chain of merges costs quadratic
time and memory (twentieth re-run: a 776 KB environment.yml over 2 min and 4 GB). Composing
(the node tree, where an alias is the same node) is linear; callers that need values build
them only when :func:`has_merge` says no mapping merges another, and otherwise walk the nodes
(compose) or say the file was not read (conda).
"""

from __future__ import annotations

from collections.abc import Iterator

import yaml

__all__ = ["MERGE_TAG", "has_merge", "nodes"]

MERGE_TAG = "tag:yaml.org,2002:merge"


def nodes(root: yaml.Node) -> Iterator[yaml.Node]:
    """Every node under ``root`` (mapping keys and values, sequence items), each once: an
    alias is the same node, so a tree of aliases is walked in linear time."""
    seen: set[int] = set()
    todo: list[yaml.Node] = [root]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                todo += (key, value)
        elif isinstance(node, yaml.SequenceNode):
            todo += node.value


def has_merge(root: yaml.Node) -> bool:
    """Whether any mapping under ``root`` has a merge key (each node looked at once)."""
    return any(
        isinstance(node, yaml.MappingNode) and any(k.tag == MERGE_TAG for k, _ in node.value)
        for node in nodes(root)
    )
