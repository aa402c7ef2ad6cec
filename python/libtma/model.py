"""libtma's CPU model of the copy engine on NumPy arrays: what a TMA load writes into shared memory and what a store
or reduce-store writes into global memory, byte for byte (include/tma/tma.h, "CPU model"), and the permute kernel's
tile pipeline run on the model (tma_permute_model).

Global memory is a NumPy array (the map's address is the array's); shared memory is a uint8 array standing for
shared memory that starts at a 1024-byte aligned address, so an offset into it has the swizzle phase of the same
offset on the device. box() reads a box back out of that image through the swizzle, store_image() lays a box in.
"""

import ctypes

from . import _c, _permute
from ._c import lib
from .descriptors import Im2colDesc, Reduce, _as_member
from .errors import TmaError, new_diag, raise_for
from .swizzle import swizzle_elem


def _numpy():
    try:
        import numpy
    except ImportError as error:
        raise ImportError("libtma.model needs NumPy (Debian: apt-get install python3-numpy)") from error
    return numpy


def _bytes_after(array, address):
    """Bytes of the array's memory from `address` to its end (numpy.byte_bounds)."""
    low, high = _numpy().byte_bounds(array)
    return high - address


def _bound_desc(desc, array):
    """The descriptor with the array's address (the model reads and writes the array's memory)."""
    if not hasattr(array, "__array_interface__"):
        raise TypeError(f"the model works on NumPy arrays, not {type(array).__name__}")
    c_desc = desc.to_c()
    c_desc.global_address = array.__array_interface__["data"][0]
    return c_desc


def _require_reach(array, c_desc, writes):
    """The map must not reach past the array: a load reads up to the last element, a store writes whole 16-byte
    chunks, so up to 15 bytes past each row's last element (tma_global_extent_bytes)."""
    extent = lib.tma_global_extent_bytes(c_desc)
    if writes:
        needed, what = extent, "a store writes whole 16-byte chunks of each row (tma_global_extent_bytes)"
    else:
        elem = lib.tma_dtype_size(c_desc.dtype)
        needed = elem * c_desc.global_dim[0] + sum(
            (c_desc.global_dim[i] - 1) * c_desc.global_stride[i - 1] for i in range(1, c_desc.rank))
        what = "its elements"
    available = _bytes_after(array, c_desc.global_address)
    if extent and needed > available:
        raise ValueError(f"the map reaches {needed} bytes from the array's start and the array has {available}: "
                         f"{what}; give a larger array (or a view into one)")


def _coords(coord, rank):
    coord = tuple(coord)
    if len(coord) != rank:
        raise ValueError(f"coord has {len(coord)} values; the map has {rank} dimensions (dimension 0 first)")
    return (ctypes.c_int32 * 5)(*coord)


def _smem_for(smem, offset, smem_bytes):
    np = _numpy()
    if smem is None:
        return np.zeros(offset + smem_bytes, dtype=np.uint8)
    if smem.dtype != np.uint8 or not smem.flags.c_contiguous or not smem.flags.writeable:
        raise ValueError("smem must be a writable, contiguous uint8 array")
    return smem


def _pointer(array):
    return array.__array_interface__["data"][0]


def load_tiled(array, desc, coord, smem=None, offset=0):
    """The shared-memory image of a tiled load of the box at `coord` (dimension 0 first) from `array` through `desc`
    (a TiledDesc; its address is replaced by the array's), written at `offset` (a multiple of 128) of `smem` (a uint8
    array, allocated when None) and returned. Raises TmaError where the load breaks a rule."""
    c_desc = _bound_desc(desc, array)
    _require_reach(array, c_desc, writes=False)
    smem = _smem_for(smem, offset, lib.tma_box_smem_bytes(c_desc))
    status = lib.tma_model_load_tiled(c_desc, _coords(coord, c_desc.rank), _pointer(smem), smem.nbytes, offset)
    _raise_copy(status, c_desc, coord, "load")
    return smem


def store_tiled(array, desc, coord, smem, offset=0):
    """Write into `array` what a tiled store of the box in smem[offset ...] at `coord` writes."""
    c_desc = _bound_desc(desc, array)
    _require_reach(array, c_desc, writes=True)
    status = lib.tma_model_store_tiled(c_desc, _coords(coord, c_desc.rank), _pointer(smem), smem.nbytes, offset)
    _raise_copy(status, c_desc, coord, "store")


def reduce_tiled(array, desc, coord, smem, op, offset=0):
    """Write into `array` what a reduce-store (op: a Reduce, or "add", "min", ...) of the box in smem writes."""
    c_desc = _bound_desc(desc, array)
    _require_reach(array, c_desc, writes=True)
    op = _as_member(Reduce, op, "REDUCE_")
    status = lib.tma_model_reduce_tiled(c_desc, _coords(coord, c_desc.rank), _pointer(smem), smem.nbytes, offset, op)
    _raise_copy(status, c_desc, coord, "reduce-store")


def load_im2col(array, desc, coord, offsets=(), smem=None, offset=0):
    """The shared-memory image of an im2col load (desc: an Im2colDesc) at `coord` (channels first) with im2col
    `offsets` (one per spatial dimension, W first), as load_tiled."""
    if not isinstance(desc, Im2colDesc):
        raise TypeError("load_im2col takes an Im2colDesc")
    c_desc = _bound_desc(desc, array)
    smem = _smem_for(smem, offset, lib.tma_im2col_smem_bytes(c_desc))
    c_offsets = (ctypes.c_uint16 * 3)(*offsets)
    diag = new_diag()
    c_coord = _coords(coord, c_desc.rank)
    raise_for(lib.tma_check_im2col_coords_diag(c_desc, c_coord, c_offsets, diag), diag)
    _require_im2col_reach(array, c_desc)
    status = lib.tma_model_load_im2col(c_desc, c_coord, c_offsets, _pointer(smem), smem.nbytes, offset)
    if status != 0:
        raise TmaError(status, _status_text(status, "the im2col load"))
    return smem


def _require_im2col_reach(array, c_desc):
    elem = lib.tma_dtype_size(c_desc.dtype)
    needed = elem * c_desc.global_dim[0] + sum(
        (c_desc.global_dim[i] - 1) * c_desc.global_stride[i - 1] for i in range(1, c_desc.rank))
    available = _bytes_after(array, c_desc.global_address)
    if needed > available:
        raise ValueError(f"the map reaches {needed} bytes from the array's start and the array has {available}")


def _status_text(status, what):
    return f"{what}: {lib.tma_strerror(status).decode()}"


def _raise_copy(status, c_desc, coord, what):
    """A model refusal with the rule's message: the per-copy checks say which rule (the model returns the status)."""
    if status == 0:
        return
    diag = new_diag()
    check = lib.tma_check_store_coords if what != "load" else lib.tma_check_coords
    if check(c_desc, _coords(coord, c_desc.rank), diag) != 0:
        raise TmaError(diag.status, f"the {what}: {diag.message.decode(errors='replace')}")
    raise TmaError(status, _status_text(status, f"the {what}"))


def _box_geometry(desc):
    c_desc = desc.to_c()
    if c_desc.interleave != 0:
        raise ValueError("box() and store_image() read and write non-interleaved boxes only")
    info = lib.tma_box_info_of(c_desc)
    if info.rank == 0:
        diag = new_diag()
        raise_for(lib.tma_check_tiled(c_desc, diag), diag)
    strides = [c_desc.element_stride[i] or 1 for i in range(info.rank)]
    outer = [-(-info.box_dim[i] // strides[i]) for i in range(1, info.rank)]
    return info, tuple(reversed(outer)) + (info.box_dim[0],)


def _element_addresses(desc, offset):
    np = _numpy()
    info, shape = _box_geometry(desc)
    rows = np.arange(info.rows, dtype=np.int64)[:, None]
    cols = np.arange(info.box_dim[0], dtype=np.int64)[None, :]
    addresses = swizzle_elem(info.swizzle, offset, info.row_pitch, info.elem_bytes, rows, cols)
    return info, shape, addresses


def _element_type(elem_bytes):
    np = _numpy()
    return {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[elem_bytes]


def box(desc, smem, offset=0, dtype=None):
    """The box a tiled load wrote at smem[offset ...], read back through the swizzle: an array of the box's shape
    in NumPy order (outermost first; dimensions with an element stride hold the elements the load took), of `dtype`
    (default: unsigned integers of the element's size: the bits)."""
    np = _numpy()
    info, shape, addresses = _element_addresses(desc, offset)
    byte_index = addresses[..., None] + np.arange(info.elem_bytes)
    if byte_index.max(initial=0) >= smem.nbytes:
        raise ValueError(f"the box ends past smem's {smem.nbytes} bytes")
    elements = smem[byte_index].reshape(-1).view(dtype or _element_type(info.elem_bytes))
    return elements.reshape(shape)


def store_image(desc, values, smem=None, offset=0):
    """The shared-memory image a kernel writes for a store of the box `values` (the box's shape, outermost first) at
    smem[offset ...]: each element at its swizzled address. Returns smem (allocated when None)."""
    np = _numpy()
    info, shape, addresses = _element_addresses(desc, offset)
    values = np.ascontiguousarray(values)
    if values.shape != shape or values.itemsize != info.elem_bytes:
        raise ValueError(f"values must have the box's shape {shape} and {info.elem_bytes}-byte elements; got "
                         f"{values.shape} of {values.itemsize}")
    smem = _smem_for(smem, offset, info.smem_bytes)
    byte_index = addresses[..., None] + np.arange(info.elem_bytes)
    smem[byte_index.reshape(-1)] = values.reshape(-1).view(np.uint8)
    return smem


def permute(array, dims):
    """numpy.transpose(array, dims).copy() computed by the permute kernel's tile pipeline on libtma's CPU model (the
    same plan, descriptors and tile coordinates as on the GPU; tma_permute_model). 1-, 2-, 4- and 8-byte elements,
    any strides. Slow: for small arrays. Returns (result, facts) with facts what the pipeline did."""
    np = _numpy()
    if array.itemsize not in (1, 2, 4, 8):
        raise ValueError(f"{array.itemsize}-byte elements: tma_permute copies 1-, 2-, 4- and 8-byte ones")
    dims = _permute.normalize_dims(list(dims), array.ndim)
    out = np.empty(_permute.permuted_shape(array.shape, dims), dtype=array.dtype)
    src_strides = [s // array.itemsize for s in array.strides]
    if any(s % array.itemsize for s in array.strides):
        raise ValueError("the array's strides must be multiples of its element size")
    desc = _permute.permute_desc(array.shape, src_strides, array.itemsize, dims, _permute.dense_strides(out.shape),
                                 _pointer(array), _pointer(out))
    facts = _c.PermuteModelFactsC()
    diag = new_diag()
    raise_for(lib.tma_permute_model(desc, ctypes.byref(facts), diag), diag)
    return out, {"transpose": bool(facts.transpose), "threads": bool(facts.threads), "tiles": facts.tiles,
                 "stores": facts.stores, "load_tx_bytes": facts.load_tx_bytes}
