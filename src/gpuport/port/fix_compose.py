"""Compose files: the AMD devices for the services that reserve NVIDIA GPUs (GP502) or build a
Dockerfile ``port`` gave a ROCm variant, and the devices or groups a ROCm service lacks (GP505).

* A vendor overlay (``compose.nvidia.yaml``, loaded in place of another vendor's) gets its AMD
  sibling (``compose.amd.yaml``); another compose file an override loaded after it
  (``docker-compose.rocm.yml``: the NVIDIA reservation and runtime reset, Compose 2.24+
  ``!reset``). Both: ``/dev/kfd`` and ``/dev/dri``, ``group_add`` as the project's own AMD
  compose files write it (else ``video`` and ``render``), the ROCm image from
  ``knowledge/port_routes.toml`` or ``build: dockerfile: Dockerfile.rocm``. Safe: a new file.
  A CUDA-tagged image with no known ROCm image gets its tag guessed (``default-nvidia-v4.0``
  -> ``default-rocm-v4.0``, digest dropped) in an unsafe form only.
* Never for a file named for AMD, a vendor overlay with an AMD sibling, or a service that
  builds a Dockerfile compiling CUDA code.
* GP505: a ROCm service gets ``devices`` or ``group_add`` in its own file (safe: only ROCm
  services change).
"""

from __future__ import annotations

import bisect
from pathlib import PurePosixPath

import yaml

from gpuport import textre
from gpuport.knowledge.port_routes import load_port_routes
from gpuport.port.by_line import ByLine
from gpuport.port.context import PortContext, Proposal, unique, unrun
from gpuport.port.image_builds import built_images, image_repository
from gpuport.port.python_image import refusal
from gpuport.scan.finding import Finding

__all__ = ["amd_named", "compose_name", "overlay", "propose"]

_MARK = "# gpuport:"


_NV_WORD = textre.compile(r"(?i)(?<=[-_.])(?:nvidia|cuda|nv)(?=[-_.])")
_AMD_WORD = textre.compile(r"(?i)(?:^|[-_.])(?:amd|rocm|hip)(?:[-_.]|$)")


def compose_name(path: str) -> str:
    """The ROCm file for a compose file: for a vendor overlay (``compose.nvidia.yaml``) its
    AMD sibling (``compose.amd.yaml``), loaded in its place; else an override loaded after it
    (``docker-compose.rocm.yml``)."""
    p = PurePosixPath(path)
    if overlay(path):
        return str(p.with_name(_NV_WORD.sub("amd", p.name, count=1)))
    return str(p.with_name(f"{p.stem}.rocm{p.suffix}"))


def overlay(path: str) -> bool:
    """A compose file named for NVIDIA (``compose.nvidia.yaml``, ``docker-compose-cuda.yml``):
    a vendor overlay the project loads instead of another vendor's."""
    return bool(_NV_WORD.search(PurePosixPath(path).name))


def amd_named(path: str) -> bool:
    return bool(_AMD_WORD.search(PurePosixPath(path).stem))


#: a value written back into the override as a plain YAML scalar: an image reference or a
#: path (interpolation `${X}` allowed), nothing YAML would read as structure
_PLAIN = textre.compile(r"[A-Za-z0-9._/@+$-][A-Za-z0-9._/:@+${}-]*")
#: the Compose specification's service name (a key of ``services``)
_SERVICE_NAME = textre.compile(r"[a-zA-Z0-9._-]+")


def _services(text: str) -> dict[str, tuple[int, int, yaml.MappingNode]]:
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    if not isinstance(root, yaml.MappingNode):
        return {}
    for k, v in root.value:
        if (
            isinstance(k, yaml.ScalarNode)
            and k.value == "services"
            and isinstance(v, yaml.MappingNode)
        ):
            return {  # only names Compose accepts: a quoted key may hold newlines, which
                # the override would write as live YAML (thirty-sixth re-run F4)
                sk.value: (sv.start_mark.line + 1, sv.end_mark.line + 1, sv)
                for sk, sv in v.value
                if isinstance(sk, yaml.ScalarNode)
                and isinstance(sv, yaml.MappingNode)
                and _SERVICE_NAME.fullmatch(sk.value) is not None
            }
    return {}


def _key(node: yaml.MappingNode, key: str) -> yaml.Node | None:
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key and isinstance(v, yaml.Node):
            return v
    return None


def _line(f: Finding) -> int:
    return f.location.line or 0


def _built_dockerfile(node: yaml.MappingNode, folder: PurePosixPath) -> str | None:
    """The project path of the Dockerfile a service builds, or None."""
    build = _key(node, "build")
    if build is None:
        return None
    context, dockerfile = ".", "Dockerfile"
    if isinstance(build, yaml.ScalarNode):
        context = str(build.value)
    elif isinstance(build, yaml.MappingNode):
        ctx_node, df_node = _key(build, "context"), _key(build, "dockerfile")
        context = str(ctx_node.value) if isinstance(ctx_node, yaml.ScalarNode) else "."
        dockerfile = str(df_node.value) if isinstance(df_node, yaml.ScalarNode) else dockerfile
    import posixpath

    return posixpath.normpath(str(folder / context / dockerfile))


def _given_dockerfile(node: yaml.MappingNode) -> str | None:
    """The ``build.dockerfile`` value a service writes (relative to its context), or None."""
    build = _key(node, "build")
    if not isinstance(build, yaml.MappingNode):
        return None
    df = _key(build, "dockerfile")
    return str(df.value) if isinstance(df, yaml.ScalarNode) else None


_VENDOR_TAG = textre.compile(
    r"(?i)(?P<head>[-_:.])(?:nvidia|cuda\d*(?:\.\d+)*|cu\d{3})(?P<end>[-_.]|$)"
)


def _rocm_image(image: str) -> tuple[str, bool] | None:
    """The ROCm image for a service's image, and whether that is safe: a route from
    knowledge/port_routes.toml (safe), or the tag with its vendor word swapped
    (``default-nvidia-v4.0`` -> ``default-rocm-v4.0``, the digest dropped: unsafe, gpuport
    cannot see that the tag exists)."""
    hit = load_port_routes().image_for(image)
    if hit is not None:
        return hit[1], True
    name, _, tag = image.split("@", 1)[0].rpartition(":")
    if name and "/" not in tag and _VENDOR_TAG.search(":" + tag):
        swapped = _VENDOR_TAG.sub(r"\g<head>rocm\g<end>", ":" + tag, count=1)[1:]
        return f"{name}:{swapped}", False
    return None


def _own_image(
    ctx: PortContext, node: yaml.MappingNode, base: tuple[int, int, yaml.MappingNode] | None
) -> tuple[str, str] | None:
    """(image, the project Dockerfile that builds it) for a service that runs, by name, an
    image the project's own build commands make (``image_builds``), else None."""
    image = _key(node, "image")
    if image is None and base is not None:
        image = _key(base[2], "image")
    if not isinstance(image, yaml.ScalarNode):
        return None
    source = built_images(ctx).get(image_repository(str(image.value)))
    return (str(image.value), source) if source is not None else None


def _rocm_based(ctx: PortContext, dockerfile: str) -> bool:
    """Whether the project's ``dockerfile`` starts from a ROCm image already."""
    text = ctx.read(dockerfile) or ""
    lines = (raw.strip() for raw in text.splitlines())
    return any(t[:5].upper() == "FROM " and "rocm" in t.lower() for t in lines)


def _groups(ctx: PortContext) -> list[str]:
    """group_add entries as the project's own AMD compose files write them (the host's GIDs
    through variables), else the group names."""
    if "amd-groups" not in ctx.cache:
        found: list[str] = []
        for path in _amd_compose_files(ctx):
            for _name, (_lo, _hi, node) in _services(ctx.read(path) or "").items():
                groups = _key(node, "group_add")
                if isinstance(groups, yaml.SequenceNode) and len(groups.value) >= 2:
                    vals = [str(g.value) for g in groups.value if isinstance(g, yaml.ScalarNode)]
                    if len(vals) == len(groups.value) and all(_safe_scalar(v) for v in vals):
                        found = vals
                        break
            if found:
                break
        ctx.cache["amd-groups"] = found
    got = ctx.cache["amd-groups"]
    return list(got) if isinstance(got, list) and got else ["video", "render"]


def _safe_scalar(value: str) -> bool:
    return bool(textre.fullmatch(r"[\w${}:\-.]+", value))


def _amd_compose_files(ctx: PortContext) -> list[str]:
    return [p for p in ctx.files_of("compose") if amd_named(p) and not unrun(p)]


def _yaml_item(value: str) -> str:
    return f'"{value}"' if "$" in value or value.isdigit() else value


def _compose(
    ctx: PortContext,
    path: str,
    text: str,
    found: list[Finding],
    dockerfiles: dict[str, str],
    routed: dict[str, list[Finding]],
) -> list[Proposal]:
    """The ROCm compose file for the services that reserve NVIDIA GPUs (``found``) and for
    those that build a Dockerfile given a ROCm variant (``dockerfiles``): a ROCm image needs
    the AMD devices to see a GPU. A vendor overlay gets its AMD sibling (loaded in its place:
    nothing to reset), another file an override (loaded after it: the NVIDIA reservation and
    runtime reset). Two alternatives when an image's ROCm tag is guessed: without it (safe)
    and with it (unsafe)."""
    services = _services(text)
    sibling = overlay(path)
    base = _services(_base_compose(ctx, path) or "") if sibling else {}
    groups = _groups(ctx)
    # (safe lines or None when a safe form would leave a CUDA image, unsafe lines, findings)
    blocks: list[tuple[list[str] | None, list[str], list[Finding]]] = []
    folder = PurePosixPath(path).parent
    lined = sorted((f for f in found if f.location.line is not None), key=_line)
    at = [_line(f) for f in lined]
    for name, (lo, hi, node) in services.items():
        # each service's findings by bisection (a filter per service was services x findings)
        hits = lined[bisect.bisect_left(at, lo) : bisect.bisect_right(at, hi)]
        built = _built_dockerfile(node, folder)
        if built is None and name in base:  # the overlay completes the base file's service
            built = _built_dockerfile(base[name][2], folder)
        ported = dockerfiles.get(built or "")
        if not hits and ported is None:
            continue
        if built is None and (own := _own_image(ctx, node, base.get(name))) is not None:
            # the project builds the image this service runs (a Makefile, a script): it
            # runs on an AMD GPU only when that Dockerfile starts from a ROCm image
            image_name, source = own
            if not _rocm_based(ctx, source):
                ctx.decline(
                    hits,
                    f"service {name} runs {image_name}, which the project builds from "
                    f"{source}, not from a ROCm image: AMD devices give an image built for "
                    "CUDA nothing to run on; build a ROCm variant of it and point the "
                    "service at that; left to a person",
                )
                continue
            built = source
        cuda_built = ctx.cache.get("cuda-built")
        if built is not None and isinstance(cuda_built, set) and built in cuda_built:
            ctx.decline(
                hits,
                f"service {name} builds {built}, which compiles CUDA code: AMD devices give "
                "that image nothing to run on; left to a person",
            )
            continue
        if built is not None and ported is None and not _rocm_based(ctx, built):
            why = refusal(ctx, built)
            ctx.decline(
                hits,
                f"service {name} builds {built}, which gets no ROCm copy"
                + (f" ({why})" if why else "")
                + ": AMD devices give an image built for CUDA nothing to run on; left to a "
                "person",
            )
            continue
        mine = hits or routed.get(built or "", [])
        given = _given_dockerfile(node) or (
            _given_dockerfile(base[name][2]) if name in base else None
        )
        image = _key(node, "image")
        if image is None and name in base:
            image = _key(base[name][2], "image")
        odd = next((str(v.value) for v in (image,) if isinstance(v, yaml.ScalarNode)
                    and _PLAIN.fullmatch(str(v.value)) is None), None)  # fmt: skip
        if odd is not None or (given is not None and _PLAIN.fullmatch(given) is None):
            ctx.decline(  # a quoted value may hold newlines: never written into the override
                mine,  # (thirty-seventh re-run F6, F7: live `privileged: true` keys)
                f"service {name}'s image or build.dockerfile is not a plain name or path "
                "gpuport writes back; left to a person",
            )
            continue
        head = [f"  {name}:"]
        guess: list[str] = []
        cuda_image = False
        if isinstance(image, yaml.ScalarNode) and (hit := _rocm_image(str(image.value))):
            (head if hit[1] else guess).append(f"    image: {hit[0]}")
            cuda_image = not hit[1]  # a vendor-tagged CUDA image with only a guessed twin
        elif built is None and isinstance(image, yaml.ScalarNode):
            # a third-party image gpuport knows nothing of: whether it holds ROCm code is
            # not in the project, so the devices are an unsafe guess
            cuda_image = "rocm" not in str(image.value).lower()
        tail: list[str] = []
        if ported is not None:
            # relative to the build context, as the service names its Dockerfile
            rel = PurePosixPath(given or "Dockerfile").with_name(PurePosixPath(ported).name)
            tail += ["    build:", f"      dockerfile: {rel}"]
        tail += ["    devices:", "      - /dev/kfd", "      - /dev/dri", "    group_add:"]
        plain = ctx.cache.get("copy-not-rocm")
        if groups == ["video", "render"] and isinstance(plain, set) and built in plain:
            # the copy keeps a plain (Debian) image, which has no render group: Docker stops
            # at a group_add name the image lacks (J26, eleventh pass); the host's ID, given
            # (a default would be a guess: it differs between hosts), as D4's real port did
            tail += [
                "      - video",
                '      - "${RENDER_GID:?set RENDER_GID to the host render group ID from getent '
                'group render}"  # the image has no render group: its ID, not its name',
            ]
        else:
            tail += [f"      - {_yaml_item(g)}" for g in groups]
            if groups == ["video", "render"]:
                tail[-1] += "  # an image without this group: the host's GID, getent group render"
        if not sibling:
            deploy = _key(node, "deploy")
            res = _key(deploy, "resources") if isinstance(deploy, yaml.MappingNode) else None
            resv = _key(res, "reservations") if isinstance(res, yaml.MappingNode) else None
            if isinstance(resv, yaml.MappingNode) and _key(resv, "devices") is not None:
                tail += [
                    "    deploy:",
                    "      resources:",
                    "        reservations:",
                    "          devices: !reset []",
                ]
            runtime = _key(node, "runtime")
            if isinstance(runtime, yaml.ScalarNode) and "nvidia" in str(runtime.value):
                tail.append("    runtime: !reset null")
        blocks.append((None if cuda_image else head + tail, head + guess + tail, mine))
    if not blocks:
        return []
    target = compose_name(path)
    name = PurePosixPath(path).name
    tname = PurePosixPath(target).name
    if sibling:
        intro = (
            f"{_MARK} AMD overlay in place of {name}, written by `gpuport port`: AMD GPUs are\n"
            "# the /dev/kfd and /dev/dri devices (no NVIDIA runtime).\n"
            f"#   load {tname} where the project loads {name}\n"
        )
        why = "a new overlay file beside the NVIDIA one: nothing that loads that one changes"
    else:
        intro = (
            f"{_MARK} ROCm override for {name}, written by `gpuport port`: AMD GPUs are the\n"
            "# /dev/kfd and /dev/dri devices (no NVIDIA runtime); needs Compose 2.24+ (!reset).\n"
            f"#   docker compose -f {name} -f {tname} up\n"
        )
        why = "a new override file: `docker compose up` without it is unchanged"
    out: list[Proposal] = []
    guessed = any(s != u for s, u, _ in blocks)
    for safe in (True, False) if guessed else (True,):
        chosen = [(s if safe else u, f) for s, u, f in blocks]
        if not any(lines for lines, _ in chosen):
            continue  # every service keeps a CUDA image unless its ROCm tag is guessed
        body = "\n".join("\n".join(lines) for lines, _ in chosen if lines)
        both = guessed and any(s is not None for s, _, _ in blocks)  # a safe form exists
        prop = Proposal(
            id=f"compose-rocm:{target}" + ("" if safe else "+image-tag"),
            family="compose",
            title=f"{target}: AMD GPU devices for the services of {path}"
            + ("" if safe else ", and the images' ROCm tags"),
            safe=safe,
            why=why
            if safe
            else "an image's ROCm tag is guessed from the CUDA one (the vendor word swapped, "
            "the digest dropped), or an image gpuport does not know gets the AMD devices: "
            "gpuport cannot see that the tag exists or that the image runs on ROCm",
            findings=unique(f for lines, fs in chosen if lines for f in fs),
            group=f"compose:{target}" if both else "",
            note="" if safe or not guessed else "check that the tag exists and pin its digest",
        )
        prop.creates[target] = intro + "services:\n" + body + "\n"
        out.append(prop)
    return out


def _base_compose(ctx: PortContext, path: str) -> str | None:
    """The file a vendor overlay completes: its name without the vendor word (``compose.yaml``
    beside ``compose.nvidia.yaml``), or without a GPU qualifier too, or the folder's main
    compose file (``docker-compose.yml`` beside ``docker-compose.gpu-nvidia.yml``, which its
    own header loads on top of it: J26, eleventh pass)."""
    p = PurePosixPath(path)
    stem = textre.sub(r"(?i)[-_.](?:nvidia|cuda|nv)(?P<end>[-_.]|$)", r"\g<end>", p.stem)
    plain = textre.sub(r"(?i)[-_.]gpus?$", "", stem)
    names = [f"{s}{x}" for s in dict.fromkeys((stem, plain)) for x in (p.suffix, ".yaml", ".yml")]
    names += ["docker-compose.yml", "docker-compose.yaml", "compose.yaml", "compose.yml"]
    for cand in dict.fromkeys(names):
        if cand == p.name:
            continue
        text = ctx.read(str(p.with_name(cand)))
        if text is not None:
            return text
    return None


def _devices_in_place(
    ctx: PortContext, path: str, text: str, found: list[Finding]
) -> Proposal | None:
    """GP505: a service that runs ROCm without the AMD devices or the video and render
    groups gets them in its own file (it is ROCm's already; nothing else reads it)."""
    services = _services(text)
    prop = Proposal(
        id=f"compose-devices:{path}",
        family="compose",
        title=f"{path}: /dev/kfd, /dev/dri and the video and render groups for its ROCm services",
        safe=True,
        why="only services that run ROCm images change",
        findings=[],
    )
    offsets = _line_offsets(text)
    eol = ctx.eol(text)
    groups = _groups(ctx)
    by_line = ByLine(found)  # a filter of every finding per service was quadratic
    for _name, (lo, hi, node) in services.items():
        hits = by_line.within(lo, hi)
        if not hits or not node.value:
            continue
        devices = _key(node, "devices")
        first_key = node.value[0][0]
        anchor = first_key
        if devices is not None:
            anchor = next(k for k, v in node.value if v is devices)
        if node.flow_style:
            continue  # {image: x, devices: [...]}: left to a person
        col = anchor.start_mark.column
        pad = " " * col
        lines: list[str] = []
        if devices is None:
            lines += [f"{pad}devices:", f"{pad}  - /dev/kfd", f"{pad}  - /dev/dri"]
        if _key(node, "group_add") is None:
            lines += [f"{pad}group_add:"] + [f"{pad}  - {_yaml_item(g)}" for g in groups]
        elif devices is not None:
            continue  # group_add is there, with other groups: a person decides
        if not lines:
            continue
        at = offsets[anchor.start_mark.line]
        prop.edit(path, at, at, eol.join(lines) + eol, hits)
        prop.findings += hits
    return prop if prop.edits else None


def _line_offsets(text: str) -> list[int]:
    out, pos = [0], 0
    for line in text.splitlines(keepends=True):
        pos += len(line)
        out.append(pos)
    return out


def _has_amd_sibling(ctx: PortContext, path: str) -> bool:
    """A vendor overlay whose AMD counterpart exists under another AMD word
    (``compose.rocm.yaml`` beside ``compose.nvidia.yaml``)."""
    if not overlay(path):
        return False
    p = PurePosixPath(path)
    return any(
        ctx.exists(str(p.with_name(_NV_WORD.sub(word, p.name, count=1))))
        for word in ("amd", "rocm", "hip", "AMD", "ROCm")
    )


def _compose_files(ctx: PortContext) -> list[str]:
    return [
        n
        for n in ctx.listdir("")
        if textre.match(r"(?:docker-)?compose[\w.-]*\.ya?ml$", n) and not amd_named(n)
    ]


def _is_dockerfile(path: str) -> bool:
    name = PurePosixPath(path).name.lower()
    return name.startswith(("dockerfile", "containerfile")) or name.endswith(".dockerfile")


def propose(
    ctx: PortContext,
    candidates: list[str],
    dockerfiles: dict[str, str],
    routed: dict[str, list[Finding]],
) -> list[Proposal]:
    """``candidates``: compose files with findings; ``dockerfiles``: the Dockerfiles given a
    ROCm variant (path -> variant); ``routed``: the findings each of those addresses."""
    out: list[Proposal] = []
    for path in sorted(ctx.files_with("GP505")):
        text = ctx.read(path)
        if text is not None and not unrun(path) and not _is_dockerfile(path):
            fixed = _devices_in_place(ctx, path, text, ctx.of("GP505", path=path))
            if fixed is not None:
                out.append(fixed)
    for path in sorted({*candidates, *(_compose_files(ctx) if dockerfiles else [])}):
        if _is_dockerfile(path) or amd_named(path) or unrun(path):
            continue
        if not ctx.of("GP502", path=path) and not dockerfiles:
            continue
        text = ctx.read(path)
        target = compose_name(path)
        if text is None or ctx.exists(target) or _has_amd_sibling(ctx, path):
            continue
        out += _compose(ctx, path, text, ctx.of("GP502", path=path), dockerfiles, routed)
    return out
