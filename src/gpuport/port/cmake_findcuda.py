"""FindCUDA's commands on the opt-in HIP build (``fix_cmake``): their HIP form in the shim.

The HIP shim stands in for ``find_package(CUDA)``, so a project that builds its targets with
FindCUDA's commands (``cuda_add_library``, ``cuda_add_executable``...) stopped at the first one
on ``-DGPUPORT_HIP=ON`` ("Unknown CMake command"); since session 15 such a project got no HIP
branch (amgcl J39, mcx J46, QuEST, qmcpack). The commands whose meaning is a plain CMake
target are now defined by the shim, on the HIP build only, as FindCUDA defines them:

* ``cuda_add_library(t src... [STATIC|SHARED|MODULE] [EXCLUDE_FROM_ALL] [OPTIONS ...])`` and
  ``cuda_add_executable(t src... [WIN32] [MACOSX_BUNDLE] [EXCLUDE_FROM_ALL] [OPTIONS ...])``:
  the arguments split as FindCUDA's ``CUDA_GET_SOURCES_AND_OPTIONS`` splits them, the target
  made with ``add_library``/``add_executable``, each ``.cu`` source compiled as HIP and linked
  with ``hip::host`` (FindCUDA links ``CUDA_LIBRARIES``, with ``CUDA_LINK_LIBRARIES_KEYWORD``).
  The ``-D``/``-U``/``-I`` items of ``CUDA_NVCC_FLAGS`` and of ``OPTIONS`` reach the ``.cu``
  sources as they reach nvcc (a macro the CUDA build's kernels are compiled with stays
  defined), ``-use_fast_math`` as clang's ``-ffast-math``; nvcc's other options (``-arch``,
  ``-Xcompiler``, ``-lineinfo``) are not given to the HIP compiler.
  ``CUDA_SEPARABLE_COMPILATION`` gives ``-fgpu-rdc`` (HIP's relocatable device code) to the
  sources and the link.
* ``cuda_include_directories`` -> ``include_directories``; ``cuda_select_nvcc_arch_flags``
  and ``cuda_detect_installed_gpus`` set their result to empty (no nvcc flags: the GPU
  targets come from ``CMAKE_HIP_ARCHITECTURES``).

The others (``cuda_compile*``, ``cuda_wrap_srcs``, ``cuda_add_cu*_to_target``, separable
compilation helpers) produce nvcc's objects by hand: a project calling one still gets no HIP
branch, the reason naming the call. A CUDA configure never includes the shim, so FindCUDA's
own commands run there unchanged.
"""

from __future__ import annotations

import re

from gpuport import textre

__all__ = ["findcuda_calls", "findcuda_shim"]

_CALL = textre.compile(
    r"^[ \t]*(cuda_(?:add_library|add_executable|compile\w*|wrap_srcs|add_cu\w+_to_target|"
    r"include_directories|build_clean_target|link_separable_compilation_objs|"
    r"compute_separable_compilation_object_file_name|select_nvcc_arch_flags|"
    r"detect_installed_gpus))[ \t]*\(",
    re.M | re.I,
)
#: the commands the shim defines
SHIMMED = frozenset(
    {
        "cuda_add_library",
        "cuda_add_executable",
        "cuda_include_directories",
        "cuda_select_nvcc_arch_flags",
        "cuda_detect_installed_gpus",
    }
)


def findcuda_calls(handled: dict[str, str]) -> tuple[set[str], tuple[str, str] | None]:
    """(the shimmed commands the handled CMake files call, (file, command) of the first call
    of one the shim cannot stand in for, or None)."""
    used: set[str] = set()
    for rel, text in handled.items():
        if "cuda_" not in text.lower():
            continue
        for m in _CALL.finditer(text):
            name = m.group(1).lower()
            if name not in SHIMMED:
                return used, (rel, m.group(1))
            used.add(name)
    return used, None


_SPLIT = """\
function(_gpuport_cuda_split sources kinds options)  # FindCUDA's CUDA_GET_SOURCES_AND_OPTIONS
  set(_s)
  set(_k)
  set(_o)
  set(_in_options FALSE)
  foreach(_a IN LISTS ARGN)
    if("x${_a}" STREQUAL "xOPTIONS")
      set(_in_options TRUE)
    elseif("x${_a}" MATCHES "^x(WIN32|MACOSX_BUNDLE|EXCLUDE_FROM_ALL|STATIC|SHARED|MODULE)$")
      list(APPEND _k "${_a}")
    elseif(_in_options)
      list(APPEND _o "${_a}")
    else()
      list(APPEND _s "${_a}")
    endif()
  endforeach()
  set(${sources} "${_s}" PARENT_SCOPE)
  set(${kinds} "${_k}" PARENT_SCOPE)
  set(${options} "${_o}" PARENT_SCOPE)
endfunction()
function(_gpuport_cuda_target name sources options)
  # the -D/-U/-I items of CUDA_NVCC_FLAGS and OPTIONS, as nvcc gets them; not nvcc's others
  set(_keep)
  set(_next FALSE)
  set(_items)
  foreach(_a IN LISTS CUDA_NVCC_FLAGS options)
    if("x${_a}" MATCHES "[ \\t]" AND NOT "x${_a}" MATCHES "\\"")
      separate_arguments(_parts UNIX_COMMAND "${_a}")  # set(CUDA_NVCC_FLAGS "${..} -DX")
      list(APPEND _items ${_parts})
    else()
      list(APPEND _items "${_a}")
    endif()
  endforeach()
  foreach(_a IN LISTS _items)
    if(_next)
      list(APPEND _keep "${_a}")
      set(_next FALSE)
    elseif("x${_a}" MATCHES "^x-[DUI]$")
      list(APPEND _keep "${_a}")
      set(_next TRUE)
    elseif("x${_a}" MATCHES "^x-[DUI].")
      list(APPEND _keep "${_a}")
    elseif("x${_a}" MATCHES "^x--?use_fast_math$")
      list(APPEND _keep -ffast-math)  # clang's spelling of nvcc's fast math
    endif()
  endforeach()
  if(CUDA_SEPARABLE_COMPILATION)
    list(APPEND _keep -fgpu-rdc)
    target_link_options(${name} PRIVATE -fgpu-rdc)
  endif()
  foreach(_s IN LISTS sources)
    if("x${_s}" MATCHES "\\\\.cu$")
      set_source_files_properties("${_s}" PROPERTIES LANGUAGE HIP)
      if(_keep)
        set_property(SOURCE "${_s}" APPEND PROPERTY COMPILE_OPTIONS ${_keep})
      endif()
    endif()
  endforeach()
  target_link_libraries(${name} ${CUDA_LINK_LIBRARIES_KEYWORD} hip::host)
endfunction()
"""

_COMMANDS = {
    "cuda_add_library": """\
function(cuda_add_library name)
  _gpuport_cuda_split(_sources _kinds _options ${ARGN})
  set(_head)
  foreach(_w STATIC SHARED MODULE EXCLUDE_FROM_ALL)
    list(FIND _kinds ${_w} _at)  # not IN_LIST: the project's policies may predate it
    if(NOT _at EQUAL -1)
      list(APPEND _head ${_w})
    endif()
  endforeach()
  add_library(${name} ${_head} ${_sources})
  _gpuport_cuda_target(${name} "${_sources}" "${_options}")
endfunction()
""",
    "cuda_add_executable": """\
function(cuda_add_executable name)
  _gpuport_cuda_split(_sources _kinds _options ${ARGN})
  set(_head)
  foreach(_w WIN32 MACOSX_BUNDLE EXCLUDE_FROM_ALL)
    list(FIND _kinds ${_w} _at)  # not IN_LIST: the project's policies may predate it
    if(NOT _at EQUAL -1)
      list(APPEND _head ${_w})
    endif()
  endforeach()
  add_executable(${name} ${_head} ${_sources})
  _gpuport_cuda_target(${name} "${_sources}" "${_options}")
endfunction()
""",
    "cuda_include_directories": """\
function(cuda_include_directories)
  include_directories(${ARGN})
endfunction()
""",
    "cuda_select_nvcc_arch_flags": """\
function(cuda_select_nvcc_arch_flags out)
  set(${out} "" PARENT_SCOPE)  # no nvcc flags: CMAKE_HIP_ARCHITECTURES chooses the targets
  set(${out}_readable "" PARENT_SCOPE)
endfunction()
""",
    "cuda_detect_installed_gpus": """\
function(cuda_detect_installed_gpus out)
  set(${out} "" PARENT_SCOPE)  # CMAKE_HIP_ARCHITECTURES chooses the targets
endfunction()
""",
}


def findcuda_shim(used: set[str]) -> str:
    """The shim's block defining the FindCUDA commands in ``used`` ("" when none)."""
    if not used:
        return ""
    head = [
        "# FindCUDA's commands this project calls, in their HIP form (gpuport port): the .cu",
        "# sources are compiled as HIP with the -D/-U/-I items of CUDA_NVCC_FLAGS and OPTIONS;",
        "# nvcc's other options are not given to the HIP compiler.",
        "if(NOT DEFINED CUDA_LIBRARIES)",
        "  set(CUDA_LIBRARIES hip::host)",
        "endif()",
    ]
    body = [_COMMANDS[n] for n in sorted(used)]
    split = _SPLIT if used & {"cuda_add_library", "cuda_add_executable"} else ""
    return "\n".join(head) + "\n" + split + "".join(body)
