"""GP5xx on docker-compose files and Kubernetes manifests.

Files are parsed with the safe YAML loader; positions come from the node tree
of the same safe loader, so every finding points at the key or value it is
about. ``<<`` merges are followed and YAML aliases are walked once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

import yaml

from gpuport.models import Severity
from gpuport.scan.rules.base import FileContext, FileKind, checker
from gpuport.scan.rules.containers.common import env_var, image_fix, nvidia_image
from gpuport.yamlnodes import MERGE_TAG, has_merge

_T = TypeVar("_T")

_ROCM_ENV = {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HSA_OVERRIDE_GFX_VERSION"}


class _Reporter(Protocol):
    def __call__(
        self, rule: str, node: yaml.Node, message: str, fix: str | None = None, minor: bool = False
    ) -> None: ...


def _get(node: yaml.Node | None, key: str, depth: int = 0) -> tuple[yaml.Node, yaml.Node] | None:
    """(key node, value node) of ``key`` in a mapping node, following ``<<`` merges.

    Each mapping's own keys are indexed once, and each (mapping, key) answer is kept on the
    node: anchors that merge the one before ten times over made 547 bytes of compose take
    19 s (sixth review), and 2,000 services each ``<<: *big`` re-walked the 2,000 keys of
    ``big`` for every key looked up (quadratic: 0.5 MB over 2 min; twentieth re-run). A
    mapping that merges itself (through aliases) answers None for the cycle."""
    if not isinstance(node, yaml.MappingNode) or depth > 10:
        return None
    memo: dict[str, tuple[yaml.Node, yaml.Node] | None] | None = node.__dict__.get("_gp_get")
    if memo is None:
        memo = {}
        node.__dict__["_gp_get"] = memo
        own: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        merges: list[yaml.Node] = []
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                if k.tag == MERGE_TAG:  # `<<`, or the same key spelled `!!merge m`
                    merges += v.value if isinstance(v, yaml.SequenceNode) else [v]
                else:
                    own.setdefault(k.value, (k, v))
        node.__dict__["_gp_own"] = own
        node.__dict__["_gp_merges"] = merges
    if key in memo:
        return memo[key]
    own_keys: dict[str, tuple[yaml.Node, yaml.Node]] = node.__dict__["_gp_own"]
    got = own_keys.get(key)
    if got is None:
        memo[key] = None  # while the merges are read: a cycle back here finds nothing
        for src in node.__dict__["_gp_merges"]:
            if (got := _get(src, key, depth + 1)) is not None:
                break
    memo[key] = got
    return got


def _at(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _scalars(node: yaml.Node | None) -> list[yaml.ScalarNode]:
    if isinstance(node, yaml.ScalarNode):
        return [node]
    if isinstance(node, yaml.SequenceNode):
        return [n for n in node.value if isinstance(n, yaml.ScalarNode)]
    return []


def _path(node: yaml.Node | None, *keys: str) -> yaml.Node | None:
    for key in keys:
        got = _get(node, key)
        if got is None:
            return None
        node = got[1]
    return node


def _environment(node: yaml.Node | None) -> Iterator[tuple[str, str, yaml.Node]]:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                yield k.value, str(v.value) if isinstance(v, yaml.ScalarNode) else "", k
    for item in _scalars(node) if isinstance(node, yaml.SequenceNode) else []:
        key, _, value = str(item.value).partition("=")
        yield key, value, item


@dataclass
class _Service:
    name: str
    node: yaml.MappingNode
    rocm: bool = False
    has_devices: bool = False
    has_groups: bool = False


def _services(root: yaml.Node) -> list[_Service]:
    services = _path(root, "services")
    if services is None and isinstance(root, yaml.MappingNode):
        services = root  # compose file format 1: services at the top level
    if not isinstance(services, yaml.MappingNode):
        return []
    out: list[_Service] = []
    # what a list says, read once per list node: services that all alias one big
    # `environment:` or `devices:` list re-read it each (twentieth re-run F5)
    memo: dict[tuple[str, int], object] = {}

    def once(what: str, node: yaml.Node | None, read: Callable[[yaml.Node | None], _T]) -> _T:
        key = (what, id(node))
        if key not in memo:
            memo[key] = read(node)
        return memo[key]  # type: ignore[return-value]

    for k, v in services.value:
        if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.MappingNode):
            svc = _Service(str(k.value), v)
            image = _path(v, "image")
            img = str(image.value).lower() if isinstance(image, yaml.ScalarNode) else ""
            envs = once("env", _path(v, "environment"), _env_keys)
            kfd, devs_ok = once("dev", _path(v, "devices"), _devices)
            privileged = _path(v, "privileged")
            svc.has_devices = devs_ok or (
                isinstance(privileged, yaml.ScalarNode) and str(privileged.value) == "true"
            )
            svc.has_groups = once("groups", _path(v, "group_add"), _groups)
            svc.rocm = "rocm" in img or bool(envs & _ROCM_ENV) or kfd
            out.append(svc)
    return out


def _env_keys(node: yaml.Node | None) -> frozenset[str]:
    return frozenset(key for key, _, _ in _environment(node))


def _devices(node: yaml.Node | None) -> tuple[bool, bool]:
    """(a /dev/kfd is passed, the AMD GPU devices are passed)."""
    devices = [str(d.value) for d in _scalars(node)]
    kfd = any("/dev/kfd" in d for d in devices)
    return kfd, (kfd and any("/dev/dri" in d for d in devices)) or any(
        d.startswith("amd.com/gpu") for d in devices
    )


def _groups(node: yaml.Node | None) -> bool:
    """video and render by name, by a variable named for them (${RENDER_GID:-992}), or two
    numeric GIDs (the host's video and render group IDs, which differ between distributions)."""
    groups = [str(g.value).lower() for g in _scalars(node)]
    numeric = [g for g in groups if g.strip("\"'").isdigit()]
    return (any("video" in g for g in groups) and any("render" in g for g in groups)) or len(
        numeric
    ) >= 2


#: libyaml's safe loader where PyYAML was built with it (10x faster, same safe subset).
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@checker(FileKind.COMPOSE)
def check_compose(ctx: FileContext) -> None:
    try:
        loader = _SAFE_LOADER(ctx.text)
        try:
            root = loader.get_single_node()
            if root is not None and not has_merge(root):
                # the whole document built once, for the constructor's own errors; with merge
                # keys (`<<` or `!!merge`) PyYAML copies each merged mapping into every mapping
                # that merges it, so a chain of merges is quadratic (thirteenth and twentieth
                # re-runs): the node walk below follows merges itself, once per node
                loader.construct_document(root)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        problem = (
            getattr(exc, "problem", None) or (str(exc).splitlines() or [type(exc).__name__])[0]
        )
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        ctx.skip_reason = f"invalid YAML: {problem}{where}"
        return
    except RecursionError:
        ctx.skip_reason = "invalid YAML: nested too deeply to read"
        return
    except ValueError:
        # a value PyYAML's constructor cannot build: an integer of more than 4,300 digits is
        # refused by int() (twenty-eighth re-run F11: an internal error, exit 4); the message
        # may quote the project's text, so it is not repeated
        ctx.skip_reason = "invalid YAML: a value that cannot be read (such as a huge number)"
        return
    if root is None:
        return
    services = _services(root)
    guarded = any(s.rocm and s.has_devices for s in services)
    seen: set[tuple[str, int, int]] = set()
    rocm_arch = "PYTORCH_ROCM_ARCH" in ctx.text

    def report(
        rule: str, node: yaml.Node, message: str, fix: str | None = None, minor: bool = False
    ) -> None:
        line, col = _at(node)
        if (rule, line, col) not in seen:
            seen.add((rule, line, col))
            ctx.report(
                rule,
                line,
                col,
                message=message,
                fix=fix,
                guarded=guarded and rule != "GP505",
                severity=Severity.MINOR if minor else None,
            )

    walked: set[int] = set()  # a list node many services alias is checked once
    for svc in services:
        _check_service(svc, report, ctx, rocm_arch, guarded, walked)
    _find_k8s_gpu(root, report)


def _check_service(
    svc: _Service,
    report: _Reporter,
    ctx: FileContext,
    rocm_arch: bool,
    guarded: bool,
    walked: set[int],
) -> None:
    node = svc.node
    image = _path(node, "image")
    if isinstance(image, yaml.ScalarNode) and nvidia_image(str(image.value)):
        report(
            "GP501",
            image,
            f"service {svc.name}: image {image.value} is a CUDA image",
            fix=image_fix(str(image.value), ctx),
        )
    runtime = _path(node, "runtime")
    if isinstance(runtime, yaml.ScalarNode) and "nvidia" in str(runtime.value).lower():
        report("GP502", runtime, f"service {svc.name}: runtime {runtime.value}")
    gpus = _get(node, "gpus")
    if gpus is not None:
        report("GP502", gpus[0], f"service {svc.name}: gpus: requests NVIDIA GPUs")
    reserved = _path(node, "deploy", "resources", "reservations", "devices")
    # findings are kept once per place: a list another service aliased was checked there
    for dev in _sequence(reserved) if _first_walk(reserved, walked) else ():
        driver = _path(dev, "driver")
        caps = _get(dev, "capabilities")
        is_nvidia = isinstance(driver, yaml.ScalarNode) and str(driver.value).lower() == "nvidia"
        if is_nvidia and driver is not None:
            report("GP502", driver, f"service {svc.name}: reserves devices of driver nvidia")
        elif caps is not None and "gpu" in {str(c.value) for c in _scalars(caps[1])}:
            report("GP502", caps[0], f"service {svc.name}: capabilities [gpu] select NVIDIA GPUs")
    env = _path(node, "environment")
    for key, value, where in _environment(env) if _first_walk(env, walked) else ():
        line, col = _at(where)
        env_var(ctx, key, value, line, col, rocm_arch, guarded)
    if svc.rocm and not svc.has_devices:
        anchor = image if image is not None else node
        report("GP505", anchor, f"service {svc.name} runs ROCm without /dev/kfd and /dev/dri")
    elif svc.rocm and not svc.has_groups and (devs := _get(node, "devices")) is not None:
        report(
            "GP505",
            devs[0],
            f"service {svc.name}: add group_add: [video, render]",
            fix="Add `group_add: [video, render]` so a non-root user can open the GPU.",
            minor=True,
        )


def _first_walk(node: yaml.Node | None, walked: set[int]) -> bool:
    if node is None or id(node) in walked:
        return node is None
    walked.add(id(node))
    return True


def _sequence(node: yaml.Node | None) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def _find_k8s_gpu(root: yaml.Node, report: _Reporter) -> None:
    """nvidia.com/gpu anywhere (Kubernetes resources, CDI device names).

    Every node is visited once, so aliases (``*ref``) cannot blow the walk up.
    """
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode) and "nvidia.com/gpu" in str(node.value):
            report(
                "GP502",
                node,
                f"{node.value}: NVIDIA device plugin / CDI resource",
                fix="Request amd.com/gpu (AMD GPU device plugin / CDI) instead.",
            )
        elif isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in node.value for n in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
