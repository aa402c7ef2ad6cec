"""libtma from Python: checked TMA descriptors, the swizzle, the CPU model of the copy engine, and the kernels.

    import libtma
    d = libtma.TiledDesc(dtype="bf16", dims=(4096, 4096), box=(128, 64), swizzle="128B")
    for violation in libtma.check(d):       # every broken rule, with libtma's message
        print(violation)

Pure Python (ctypes) over libtma_python.so, which the package loads from its own directory (or from the file named
by LIBTMA_LIBRARY). NumPy is needed by libtma.model only, PyTorch by libtma.torch only. docs/guide/python.md.
"""

from ._c import has_kernels, lib, library_path
from ._library import LibraryNotFound
from ._c import LayoutMismatch
from .descriptors import (STAND_IN_ADDRESS, Dtype, Explanation, Im2colDesc, Interleave, L2Promotion, OobFill,
                          Reduce, Swizzle, TensorMap, TiledDesc, check, encode, explain, validate)
from .errors import Status, TmaError, Violation
from .swizzle import cute_swizzle, swizzle_addr, swizzle_bits, swizzle_elem, swizzle_period, swizzle_span
from . import model
from .kernels import (CONV2D_HALO, Conv2dPlan, GemmPlan, GroupedGemmPlan, PermutePlan, conv2d, conv2d_check,
                      conv2d_output_size, gemm, grouped_gemm, permute, transpose)

__version__ = lib.tma_version_string().decode()

__all__ = ["CONV2D_HALO", "Conv2dPlan", "Dtype", "Explanation", "GemmPlan", "GroupedGemmPlan", "Im2colDesc",
           "Interleave", "L2Promotion", "LayoutMismatch", "LibraryNotFound", "OobFill", "PermutePlan", "Reduce",
           "STAND_IN_ADDRESS", "Status", "Swizzle", "TensorMap", "TiledDesc", "TmaError", "Violation", "check",
           "conv2d", "conv2d_check", "conv2d_output_size", "cute_swizzle", "encode", "explain", "gemm", "grouped_gemm",
           "has_kernels", "library_path", "model", "permute", "swizzle_addr", "swizzle_bits", "swizzle_elem",
           "swizzle_period", "swizzle_span", "transpose", "validate"]
