"""The C library as ctypes sees it: struct mirrors, their layout check, and every function's prototype.

Each mirror names its C struct (_c_name_). When the package loads, every mirror is compared with the layout table of
python/abi.c (offset and size of each field, size and alignment of each struct), both ways: a field missing on
either side, moved or resized is an ImportError naming it, never a silent misread. The plans of kernels.h are not
mirrored (they hold 128-byte aligned maps, which ctypes cannot lay out): they live in Opaque buffers of the size and
alignment the table gives, and the few fields the package reports are read at the table's offsets.
"""

import ctypes
from ctypes import POINTER, c_char, c_char_p, c_int, c_int32, c_int64, c_size_t, c_uint, c_uint16, c_uint32
from ctypes import c_uint64, c_void_p

from . import _library

MAX_RANK = 5
DIAG_MESSAGE_BYTES = 512


class LayoutMismatch(ImportError):
    """A struct mirror of the package differs from the C struct of the library it loaded."""


# ---------------------------------------------------------------------------------------------------------------------
# Struct mirrors (include/tma/types.h, tensor.h, kernels.h)
# ---------------------------------------------------------------------------------------------------------------------

class TiledDescC(ctypes.Structure):
    _c_name_ = "tma_tiled_desc"
    _fields_ = [("dtype", c_int), ("rank", c_uint32), ("global_address", c_void_p),
                ("global_dim", c_uint64 * 5), ("global_stride", c_uint64 * 4), ("box_dim", c_uint32 * 5),
                ("element_stride", c_uint32 * 5), ("interleave", c_int), ("swizzle", c_int),
                ("l2_promotion", c_int), ("oob_fill", c_int), ("flags", c_uint32)]


class Im2colDescC(ctypes.Structure):
    _c_name_ = "tma_im2col_desc"
    _fields_ = [("dtype", c_int), ("rank", c_uint32), ("global_address", c_void_p),
                ("global_dim", c_uint64 * 5), ("global_stride", c_uint64 * 4), ("pixel_box_lower", c_int32 * 3),
                ("pixel_box_upper", c_int32 * 3), ("channels_per_pixel", c_uint32), ("pixels_per_column", c_uint32),
                ("element_stride", c_uint32 * 5), ("interleave", c_int), ("swizzle", c_int),
                ("l2_promotion", c_int), ("oob_fill", c_int)]


class DiagC(ctypes.Structure):
    _c_name_ = "tma_diag"
    _fields_ = [("status", c_int), ("message", c_char * DIAG_MESSAGE_BYTES)]


class BoxInfoC(ctypes.Structure):
    _c_name_ = "tma_box_info"
    _fields_ = [("rank", c_uint32), ("elem_bytes", c_uint32), ("swizzle", c_uint32), ("tx_bytes", c_uint32),
                ("smem_bytes", c_uint32), ("row_pitch", c_uint32), ("rows", c_uint32), ("box_dim", c_uint32 * 5),
                ("flags", c_uint32), ("dtype", c_uint32), ("im2col_lo", c_int64 * 3), ("im2col_hi", c_int64 * 3)]


class PermuteDescC(ctypes.Structure):
    _c_name_ = "tma_permute_desc"
    _fields_ = [("elem_bytes", c_uint32), ("rank", c_uint32), ("src", c_void_p), ("dst", c_void_p),
                ("src_dims", c_uint64 * 5), ("src_strides", c_uint64 * 4), ("perm", c_uint32 * 5),
                ("dst_strides", c_uint64 * 4)]


class PermuteModelFactsC(ctypes.Structure):
    _c_name_ = "tma_permute_model_facts"
    _fields_ = [("load_desc", TiledDescC), ("store_desc", TiledDescC), ("transpose", c_uint32),
                ("threads", c_uint32), ("load_tx_bytes", c_size_t), ("load_smem_bytes", c_size_t),
                ("store_smem_bytes", c_size_t), ("tiles", c_uint64), ("stores", c_uint64)]


class Conv2dShapeC(ctypes.Structure):
    _c_name_ = "tma_conv2d_shape"
    _fields_ = [(name, c_int) for name in ("n", "h", "w", "c", "k", "r", "s", "stride_h", "stride_w", "pad_h",
                                           "pad_w", "dilation_h", "dilation_w")]


MIRRORS = (TiledDescC, Im2colDescC, DiagC, BoxInfoC, PermuteDescC, PermuteModelFactsC, Conv2dShapeC)

# ---------------------------------------------------------------------------------------------------------------------
# Prototypes
# ---------------------------------------------------------------------------------------------------------------------

_coords = POINTER(c_int32)
_offsets = POINTER(c_uint16)
_diag = POINTER(DiagC)
_tiled = POINTER(TiledDescC)
_im2col = POINTER(Im2colDescC)
_shape = POINTER(Conv2dShapeC)
_ptr = c_void_p  # device or host addresses, plans, maps, streams

HOST_PROTOTYPES = {
    "tma_version": (c_uint, []),
    "tma_version_string": (c_char_p, []),
    "tma_status_name": (c_char_p, [c_int]),
    "tma_strerror": (c_char_p, [c_int]),
    "tma_dtype_size": (c_size_t, [c_int]),
    "tma_dtype_name": (c_char_p, [c_int]),
    "tma_swizzle_name": (c_char_p, [c_int]),
    "tma_check_tiled": (c_int, [_tiled, _diag]),
    "tma_check_tiled_all": (c_int, [_tiled, _diag, c_size_t, POINTER(c_size_t)]),
    "tma_check_coords": (c_int, [_tiled, _coords, _diag]),
    "tma_check_store_coords": (c_int, [_tiled, _coords, _diag]),
    "tma_box_tx_bytes": (c_size_t, [_tiled]),
    "tma_box_row_pitch": (c_size_t, [_tiled]),
    "tma_box_rows": (c_size_t, [_tiled]),
    "tma_box_smem_bytes": (c_size_t, [_tiled]),
    "tma_global_extent_bytes": (c_size_t, [_tiled]),
    "tma_box_info_of": (BoxInfoC, [_tiled]),
    "tma_tensor_make": (c_int, [_ptr, _tiled, _diag]),
    "tma_model_load_tiled": (c_int, [_tiled, _coords, _ptr, c_size_t, c_uint32]),
    "tma_model_store_tiled": (c_int, [_tiled, _coords, _ptr, c_size_t, c_uint32]),
    "tma_model_reduce_tiled": (c_int, [_tiled, _coords, _ptr, c_size_t, c_uint32, c_int]),
    "tma_check_im2col": (c_int, [_im2col, _diag]),
    "tma_check_im2col_all": (c_int, [_im2col, _diag, c_size_t, POINTER(c_size_t)]),
    "tma_check_im2col_coords_diag": (c_int, [_im2col, _coords, _offsets, _diag]),
    "tma_im2col_tx_bytes": (c_size_t, [_im2col]),
    "tma_im2col_smem_bytes": (c_size_t, [_im2col]),
    "tma_im2col_box_info_of": (BoxInfoC, [_im2col]),
    "tma_tensor_make_im2col": (c_int, [_ptr, _im2col, _diag]),
    "tma_model_load_im2col": (c_int, [_im2col, _coords, _offsets, _ptr, c_size_t, c_uint32]),
    # the kernels' CPU halves (built with or without nvcc)
    "tma_permute_model": (c_int, [POINTER(PermuteDescC), POINTER(PermuteModelFactsC), _diag]),
    "tma_conv2d_check": (c_int, [_shape, _ptr, _ptr, _ptr, _diag]),
    "tma_conv2d_out_size": (None, [_shape, POINTER(c_int), POINTER(c_int)]),
    "tma_conv2d_model": (c_int, [_shape, _ptr, _ptr, _ptr, _diag]),
    # python/abi.c
    "tma_python_layout_count": (c_size_t, []),
    "tma_python_layout_row": (c_int, [c_size_t, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_size_t),
                                      POINTER(c_size_t)]),
    "tma_python_has_kernels": (c_int, []),
    "tma_python_swizzle_addr": (c_uint32, [c_uint32, c_uint32]),
    "tma_python_cute_swizzle": (c_uint32, [c_uint32, c_uint32, c_uint32, c_uint32]),
    "tma_python_swizzle_chunk": (c_uint32, [c_uint32, c_uint32]),
    "tma_python_swizzle_span": (c_uint32, [c_uint32]),
    "tma_python_swizzle_period": (c_uint32, [c_uint32]),
}

# The CUDA kernels (kernels.h): in the library where libtma was built with nvcc.
KERNEL_PROTOTYPES = {
    "tma_gemm_plan_make": (c_int, [_ptr, _ptr, _ptr, _ptr, c_int, c_int, c_int, c_int, _diag]),
    "tma_gemm_plan_tune": (c_int, [_ptr, c_int, c_int, c_int, c_int, _diag]),
    "tma_gemm_grid": (c_int, [_ptr]),
    "tma_gemm_run": (c_int, [_ptr, _ptr, _diag]),
    "tma_gemm_plan_free": (c_int, [_ptr, _diag]),
    "tma_grouped_gemm_plan_make": (c_int, [_ptr, c_int, c_int, c_int, _ptr, _ptr, _ptr, _ptr, _diag]),
    "tma_grouped_gemm_plan_tune": (c_int, [_ptr, c_int, c_int, _diag]),
    "tma_grouped_gemm_run": (c_int, [_ptr, _ptr, _diag]),
    "tma_grouped_gemm_check": (c_int, [_ptr, _ptr, _diag]),
    "tma_grouped_gemm_plan_free": (c_int, [_ptr, _diag]),
    "tma_conv2d_plan_make": (c_int, [_ptr, _shape, _ptr, _ptr, _ptr, _diag]),
    "tma_conv2d_plan_tiles": (c_int, [_ptr, c_int, c_int, c_int, _diag]),
    "tma_conv2d_plan_tune": (c_int, [_ptr, c_int, c_int, c_int, c_int, _diag]),
    "tma_conv2d_run": (c_int, [_ptr, _ptr, _diag]),
    "tma_conv2d_plan_free": (c_int, [_ptr, _diag]),
    "tma_permute_plan_make": (c_int, [_ptr, POINTER(PermuteDescC), _diag]),
    "tma_permute_plan_tune": (c_int, [_ptr, c_uint32, c_int, _diag]),
    "tma_permute_run": (c_int, [_ptr, _ptr, _diag]),
    # the one-call forms (plan and launch; nothing left to release)
    "tma_gemm": (c_int, [_ptr, _ptr, _ptr, c_int, c_int, c_int, c_int, _ptr, _diag]),
    "tma_conv2d": (c_int, [_shape, _ptr, _ptr, _ptr, _ptr, _diag]),
    "tma_permute": (c_int, [POINTER(PermuteDescC), _ptr, _diag]),
}


def _declare(library, prototypes):
    for name, (restype, argtypes) in prototypes.items():
        function = getattr(library, name)  # AttributeError names the missing symbol
        function.restype = restype
        function.argtypes = argtypes


lib, library_path = _library.load()
_declare(lib, HOST_PROTOTYPES)
has_kernels = bool(lib.tma_python_has_kernels())
if has_kernels:
    _declare(lib, KERNEL_PROTOTYPES)

# ---------------------------------------------------------------------------------------------------------------------
# The layout check
# ---------------------------------------------------------------------------------------------------------------------


def _read_layout_table():
    """{struct: {"": (alignment, size), field: (offset, size), ...}} from python/abi.c."""
    table = {}
    type_name, field_name = c_char_p(), c_char_p()
    offset, size = c_size_t(), c_size_t()
    for row in range(lib.tma_python_layout_count()):
        lib.tma_python_layout_row(row, ctypes.byref(type_name), ctypes.byref(field_name), ctypes.byref(offset),
                                  ctypes.byref(size))
        field = field_name.value.decode() if field_name.value is not None else ""
        table.setdefault(type_name.value.decode(), {})[field] = (offset.value, size.value)
    return table


def _mirror_differences(mirror, c_rows):
    name = mirror._c_name_
    if name not in c_rows:
        return [f"{name}: not in the library's layout table"]
    rows = dict(c_rows[name])
    differences = []
    alignment, size = rows.pop("")
    if (ctypes.alignment(mirror), ctypes.sizeof(mirror)) != (alignment, size):
        differences.append(f"{name}: the mirror has size {ctypes.sizeof(mirror)} and alignment "
                           f"{ctypes.alignment(mirror)}, the C struct {size} and {alignment}")
    for field, _ in mirror._fields_:
        described = getattr(mirror, field)
        if field not in rows:
            differences.append(f"{name}.{field}: in the mirror, not in the C struct")
        elif (described.offset, described.size) != rows[field]:
            differences.append(f"{name}.{field}: offset {described.offset} size {described.size} in the mirror, "
                               f"offset {rows[field][0]} size {rows[field][1]} in C")
    mirrored = {field for field, _ in mirror._fields_}
    differences += [f"{name}.{field}: in the C struct, not in the mirror" for field in rows if field not in mirrored]
    return differences


def _check_layouts():
    c_rows = _read_layout_table()
    differences = [line for mirror in MIRRORS for line in _mirror_differences(mirror, c_rows)]
    if differences:
        raise LayoutMismatch(f"libtma: the package's struct mirrors (libtma/_c.py) do not match {library_path}; "
                             "the package and the library come from different versions:\n  "
                             + "\n  ".join(differences))
    return c_rows


LAYOUTS = _check_layouts()


class Opaque:
    """A C struct the package does not mirror (a plan, a tma_tensor): zeroed bytes of its size at its alignment."""

    def __init__(self, c_name):
        if c_name not in LAYOUTS:
            raise LayoutMismatch(f"libtma: {library_path} has no layout for {c_name} (built without the kernels?)")
        self.c_name = c_name
        alignment, self.size = LAYOUTS[c_name][""]
        self._storage = (c_char * (self.size + alignment))()
        start = ctypes.addressof(self._storage)
        self.address = (start + alignment - 1) // alignment * alignment

    def read_int(self, field):
        """A signed integer field (int, enum, pointer as a number) at the C offset."""
        offset, size = LAYOUTS[self.c_name][field]
        return int.from_bytes(ctypes.string_at(self.address + offset, size), "little", signed=True)

    def read_bytes(self, field):
        offset, size = LAYOUTS[self.c_name][field]
        return ctypes.string_at(self.address + offset, size)
