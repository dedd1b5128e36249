"""`gpuport hipify`: translate CUDA sources to HIP (issue 3). The core is :func:`translate`."""

from gpuport.hipify.translate import Translation, Unsupported, translate

__all__ = ["Translation", "Unsupported", "translate"]
