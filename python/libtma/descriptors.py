"""Describe, check, explain and encode tiled and im2col tensor maps (include/tma/tma.h).

A TiledDesc or Im2colDesc holds the fields of tma_tiled_desc / tma_im2col_desc with dimension 0 innermost, as in C
(TiledDesc.for_array and Im2colDesc.for_array read them off an array, whose shape lists the innermost dimension
last). check() returns every broken rule with libtma's message, validate() raises them, explain() adds what a
kernel must keep in step with a valid map, and encode() calls the driver.
"""

import ctypes
import enum
from dataclasses import dataclass, field
from typing import Optional, Tuple

from . import _c
from ._c import BoxInfoC, Im2colDescC, TiledDescC, lib
from .errors import TmaError, Violation, new_diag, raise_for, status_of

# A 256-byte aligned stand-in for a device address, for descriptors that are only checked or explained (tma-explain's
# default too): nothing is read through it.
STAND_IN_ADDRESS = 0x7F0000000000
_MAX_VIOLATIONS = 64


def _enum_from_c(class_name, prefix, name_of, count, doc):
    members = {}
    for value in range(count):
        name = name_of(value).decode()
        if name == "?":
            break
        members[prefix + name.upper().removeprefix("TMA_" + prefix)] = value
    result = enum.IntEnum(class_name, members, module=__name__)
    result.__doc__ = doc
    return result


# Named from the library's own tables (tma_dtype_name, tma_swizzle_name): Dtype.DTYPE_BF16, Swizzle.SWIZZLE_128B.
Dtype = _enum_from_c("Dtype", "DTYPE_", lib.tma_dtype_name, 64, "Element types (tma_dtype): DTYPE_BF16, ...")
Swizzle = _enum_from_c("Swizzle", "SWIZZLE_", lib.tma_swizzle_name, 16,
                       "Shared-memory swizzles (tma_swizzle): SWIZZLE_NONE, SWIZZLE_32B, SWIZZLE_64B, SWIZZLE_128B.")


class Interleave(enum.IntEnum):
    """Interleaved global layouts (tma_interleave)."""
    INTERLEAVE_NONE = 0
    INTERLEAVE_16B = 1
    INTERLEAVE_32B = 2


class L2Promotion(enum.IntEnum):
    """L2 fetch granularity (tma_l2_promotion)."""
    L2_NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3


class OobFill(enum.IntEnum):
    """What loads write outside the tensor (tma_oob_fill)."""
    OOB_ZERO = 0
    OOB_NAN = 1


class Reduce(enum.IntEnum):
    """Reductions of a reduce-store (tma_reduce)."""
    REDUCE_ADD = 0
    REDUCE_MIN = 1
    REDUCE_MAX = 2
    REDUCE_INC = 3
    REDUCE_DEC = 4
    REDUCE_AND = 5
    REDUCE_OR = 6
    REDUCE_XOR = 7


# tma_tiled_desc.flags (include/tma/types.h)
_DESC_TEMPLATE = 2
_DESC_STORE = 4

# NumPy / DLPack element type names to libtma's types (TMA has no signed 8- or 16-bit type).
_DTYPE_OF_NAME = {"uint8": "DTYPE_U8", "uint16": "DTYPE_U16", "uint32": "DTYPE_U32", "int32": "DTYPE_I32",
                  "uint64": "DTYPE_U64", "int64": "DTYPE_I64", "float16": "DTYPE_F16", "float32": "DTYPE_F32",
                  "float64": "DTYPE_F64", "bfloat16": "DTYPE_BF16"}


def _as_member(enum_class, value, prefix):
    """An enum member from a member, a number, its C name or its short name ("128B", "bf16", "nan")."""
    if isinstance(value, enum_class):
        return value
    if isinstance(value, int):
        return enum_class(value)
    if isinstance(value, str):
        key = value.upper().removeprefix("TMA_").removeprefix(prefix)
        if prefix + key in enum_class.__members__:
            return enum_class[prefix + key]
        names = ", ".join(name.removeprefix(prefix).lower() for name in enum_class.__members__)
        raise ValueError(f"{value!r} is not a {enum_class.__name__}: use one of {names}")
    raise TypeError(f"a {enum_class.__name__} is a member, a number or a name, not {type(value).__name__}")


def as_dtype(value):
    """A Dtype from a Dtype or its number, libtma's name ("bf16", "TMA_DTYPE_BF16"), or a NumPy / PyTorch dtype or
    its name ("float32", numpy.float32, torch.bfloat16) whose TMA type is plain."""
    if isinstance(value, int):
        return Dtype(value)
    name = value if isinstance(value, str) else str(getattr(value, "name", value)).removeprefix("torch.")
    if name in _DTYPE_OF_NAME:
        return Dtype[_DTYPE_OF_NAME[name]]
    key = "DTYPE_" + name.upper().removeprefix("TMA_").removeprefix("DTYPE_")
    if key in Dtype.__members__:
        return Dtype[key]
    libtma_names = " ".join(member.removeprefix("DTYPE_").lower() for member in Dtype.__members__)
    raise ValueError(f"no TMA element type for {value!r}: TMA has {libtma_names} (or the NumPy names "
                     f"{' '.join(_DTYPE_OF_NAME)}); give dtype= explicitly to copy other bits as one of them")


def _fill(array, values, what, limit):
    values = tuple(values)
    if len(values) > limit:
        raise ValueError(f"{what} has {len(values)} values; at most {limit}")
    for i, value in enumerate(values):
        array[i] = value


def _dense_strides(dims, elem_bytes):
    strides, stride = [], elem_bytes
    for dim in dims[:-1]:
        stride *= dim
        strides.append(stride)
    return tuple(strides)


def _array_layout(array):
    """(address, dims innermost first, byte strides of dims 1.., element type name, element bytes) of a NumPy array
    or of a device tensor (DLPack or __cuda_array_interface__)."""
    if hasattr(array, "__array_interface__") and not hasattr(array, "__cuda_array_interface__"):
        address = array.__array_interface__["data"][0]
        shape, strides, itemsize, type_name = array.shape, array.strides, array.itemsize, array.dtype.name
    else:
        from ._tensors import describe_tensor
        view = describe_tensor(array)
        address, shape, itemsize, type_name = view.address, view.shape, view.itemsize, view.dtype_name
        strides = tuple(s * itemsize for s in view.strides)
    if len(shape) == 0 or len(shape) > _c.MAX_RANK:
        raise ValueError(f"a TMA map has 1 to {_c.MAX_RANK} dimensions; the array has {len(shape)}")
    if shape[-1] > 1 and strides[-1] != itemsize:
        raise ValueError(f"the array's last dimension has a stride of {strides[-1]} bytes: TMA's dimension 0 is "
                         f"contiguous ({itemsize} bytes); make the array contiguous in its last dimension")
    dims = tuple(reversed(shape))
    byte_strides = tuple(reversed(strides[:-1]))
    return address, dims, byte_strides, type_name, itemsize


@dataclass
class TiledDesc:
    """A tiled tensor map (tma_tiled_desc). Dimension 0 is the innermost one in every tuple.

    dims: elements per dimension; box: elements per copy; strides: bytes between consecutive indices of dimensions
    1..rank-1 (None: dense); address: the tensor's address (None: a stand-in, for checks and explanations only);
    store: the map will be stored through (the store-side rules apply); template: a template map
    (TMA_DESC_TEMPLATE). Enum fields take members, numbers or names ("128B", "bf16").
    """

    dtype: object
    dims: Tuple[int, ...]
    box: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]] = None
    address: Optional[int] = None
    element_strides: Optional[Tuple[int, ...]] = None
    swizzle: object = "none"
    interleave: object = "none"
    l2_promotion: object = "none"
    oob_fill: object = "zero"
    store: bool = False
    template: bool = False

    @classmethod
    def for_array(cls, array, box, **fields):
        """The map of an array (NumPy, or a DLPack / __cuda_array_interface__ tensor): address, dims, strides and
        element type read off it (dtype= overrides the type, for bits TMA copies as another type)."""
        address, dims, strides, type_name, _ = _array_layout(array)
        dtype = fields.pop("dtype", type_name)
        return cls(dtype=dtype, dims=dims, box=tuple(box), strides=strides, address=address, **fields)

    def to_c(self):
        """The tma_tiled_desc."""
        d = _fill_shared_fields(TiledDescC(), self)
        _fill(d.box_dim, self.box, "box", 5)
        d.flags = (_DESC_STORE if self.store else 0) | (_DESC_TEMPLATE if self.template else 0)
        return d

    def footprint(self):
        """What a kernel keeps in step with the map (tma.h): bytes each copy delivers (the mbarrier's expect-tx),
        bytes the box occupies in shared memory, the row pitch and rows there, and the global extent. Zeros for
        a descriptor whose fields these read are out of range (check it first)."""
        d = self.to_c()
        return {"tx_bytes": lib.tma_box_tx_bytes(d), "smem_bytes": lib.tma_box_smem_bytes(d),
                "row_pitch": lib.tma_box_row_pitch(d), "rows": lib.tma_box_rows(d),
                "extent_bytes": lib.tma_global_extent_bytes(d)}


@dataclass
class Im2colDesc:
    """An im2col tensor map (tma_im2col_desc): an image with channels innermost, dims (C, W, N), (C, W, H, N) or
    (C, W, H, D, N); lower / upper: the bounding box's corners per spatial dimension, W first (the driver's
    pixelBoxLowerCorner / pixelBoxUpperCorner); channels and pixels: what one copy brings."""

    dtype: object
    dims: Tuple[int, ...]
    channels: int
    pixels: int
    lower: Tuple[int, ...] = ()
    upper: Tuple[int, ...] = ()
    strides: Optional[Tuple[int, ...]] = None
    address: Optional[int] = None
    element_strides: Optional[Tuple[int, ...]] = None
    swizzle: object = "none"
    interleave: object = "none"
    l2_promotion: object = "none"
    oob_fill: object = "zero"

    @classmethod
    def for_array(cls, array, channels, pixels, **fields):
        """The map of an NHWC (or NWC, NDHWC) array: address, dims, strides and element type read off it."""
        address, dims, strides, type_name, _ = _array_layout(array)
        dtype = fields.pop("dtype", type_name)
        return cls(dtype=dtype, dims=dims, channels=channels, pixels=pixels, strides=strides, address=address,
                   **fields)

    def to_c(self):
        """The tma_im2col_desc."""
        d = _fill_shared_fields(Im2colDescC(), self)
        _fill(d.pixel_box_lower, self.lower, "lower", 3)
        _fill(d.pixel_box_upper, self.upper, "upper", 3)
        d.channels_per_pixel = self.channels
        d.pixels_per_column = self.pixels
        return d

    def footprint(self):
        """Bytes one copy delivers (the mbarrier's expect-tx) and occupies in shared memory; zeros as for tiled."""
        d = self.to_c()
        return {"tx_bytes": lib.tma_im2col_tx_bytes(d), "smem_bytes": lib.tma_im2col_smem_bytes(d)}


def _fill_shared_fields(d, desc):
    """The fields tma_tiled_desc and tma_im2col_desc share, from a TiledDesc or Im2colDesc: type, rank, address,
    dimensions, strides (dense where none are given), element strides and the four modes."""
    d.dtype = as_dtype(desc.dtype)
    d.rank = len(desc.dims)
    d.global_address = STAND_IN_ADDRESS if desc.address is None else desc.address
    _fill(d.global_dim, desc.dims, "dims", 5)
    strides = desc.strides if desc.strides is not None else _dense_strides(desc.dims, _elem_bytes(d.dtype))
    _fill(d.global_stride, strides, "strides", 4)
    _fill(d.element_stride, desc.element_strides or (), "element_strides", 5)
    d.swizzle = _as_member(Swizzle, desc.swizzle, "SWIZZLE_")
    d.interleave = _as_member(Interleave, desc.interleave, "INTERLEAVE_")
    d.l2_promotion = _as_member(L2Promotion, desc.l2_promotion, "L2_")
    d.oob_fill = _as_member(OobFill, desc.oob_fill, "OOB_")
    return d


def _elem_bytes(dtype):
    return lib.tma_dtype_size(int(dtype)) or 1


def _check_all_function(desc):
    if isinstance(desc, TiledDesc):
        return lib.tma_check_tiled_all
    if isinstance(desc, Im2colDesc):
        return lib.tma_check_im2col_all
    raise TypeError(f"a TiledDesc or an Im2colDesc, not {type(desc).__name__}")


def check(desc):
    """Every rule the descriptor breaks, in libtma's order, each a Violation (status, message naming the field, its
    value, the limit and a fix); [] for a valid one. Needs no GPU."""
    check_all = _check_all_function(desc)
    c_desc = desc.to_c()
    diags = (_c.DiagC * _MAX_VIOLATIONS)()
    count = ctypes.c_size_t()
    check_all(c_desc, diags, _MAX_VIOLATIONS, ctypes.byref(count))
    shown = min(count.value, _MAX_VIOLATIONS)
    return [Violation(status_of(d.status), d.message.decode(errors="replace")) for d in diags[:shown]]


def validate(desc):
    """Raise TmaError, carrying every broken rule, unless the descriptor is valid."""
    violations = check(desc)
    if violations:
        first = violations[0]
        raise TmaError(first.status, first.message, violations)


@dataclass
class Explanation:
    """What libtma says of a descriptor: valid or not, every broken rule, whether loads and stores may go through
    it (with the reason where not), and the facts a kernel keeps in step with it."""

    valid: bool
    violations: list
    loads: Optional[Violation] = None   # None: loads may go through the map
    stores: Optional[Violation] = None  # None: stores may go through it (tiled maps; im2col maps take none)
    facts: dict = field(default_factory=dict)

    def __str__(self):
        if not self.valid:
            return "invalid: " + str(len(self.violations)) + " broken rule(s)\n" + "\n".join(
                f"  {violation}" for violation in self.violations)
        lines = ["valid"]
        lines.append("  loads: yes" if self.loads is None else f"  loads: no ({self.loads})")
        lines.append("  stores: yes" if self.stores is None else f"  stores: no ({self.stores})")
        lines += [f"  {name}: {value}" for name, value in self.facts.items()]
        return "\n".join(lines)


def _copy_refusal(check_copy, c_desc):
    origin = (ctypes.c_int32 * 5)()
    diag = new_diag()
    status = check_copy(c_desc, origin, diag)
    return None if status == 0 else Violation(status_of(status), diag.message.decode(errors="replace"))


def _box_facts(info):
    return {"tx_bytes": info.tx_bytes, "smem_bytes": info.smem_bytes, "row_pitch": info.row_pitch,
            "rows": info.rows, "box_dim": tuple(info.box_dim[:info.rank]) if info.rank else (),
            "swizzle_span": lib.tma_python_swizzle_span(info.swizzle),
            "swizzle_period": lib.tma_python_swizzle_period(info.swizzle)}


def explain(desc):
    """An Explanation of a TiledDesc or Im2colDesc (what tma-explain prints). A copy at the origin is checked for
    loads and stores, so a refusal there is the map's own (a view whose coordinates share bytes takes no store; a
    template takes no copy)."""
    violations = check(desc)
    if violations:
        return Explanation(valid=False, violations=violations)
    c_desc = desc.to_c()
    if isinstance(desc, Im2colDesc):
        facts = _box_facts(lib.tma_im2col_box_info_of(c_desc))
        return Explanation(True, [], None, Violation(status_of(0), "TMA has no im2col store"), facts)
    facts = _box_facts(lib.tma_box_info_of(c_desc))
    facts["extent_bytes"] = lib.tma_global_extent_bytes(c_desc)
    return Explanation(True, [], _copy_refusal(lib.tma_check_coords, c_desc),
                       _copy_refusal(lib.tma_check_store_coords, c_desc), facts)


@dataclass
class TensorMap:
    """An encoded map: tensor, the 256 bytes of a tma_tensor (the 128-byte CUtensorMap, then its box facts), to pass
    to a kernel by value; map: the CUtensorMap's 128 bytes alone; box: the box facts."""

    tensor: bytes
    map: bytes
    box: dict


def encode(desc):
    """Check the descriptor, then encode it with the driver (cuTensorMapEncodeTiled / Im2col, found at run time).
    Needs a real address and a CUDA driver; the current context is used, or device 0's primary context.
    Raises TmaError: a check's status, TMA_ERR_NO_DRIVER, TMA_ERR_DRIVER (the driver's CUresult in the message)."""
    if desc.address is None:
        raise ValueError("encode needs the tensor's device address: set address= (or build the descriptor with "
                         "for_array)")
    tensor = _c.Opaque("tma_tensor")
    diag = new_diag()
    make = lib.tma_tensor_make_im2col if isinstance(desc, Im2colDesc) else lib.tma_tensor_make
    status = make(tensor.address, desc.to_c(), diag)
    raise_for(status, diag)
    info = BoxInfoC.from_buffer_copy(tensor.read_bytes("box"))
    return TensorMap(tensor=ctypes.string_at(tensor.address, tensor.size), map=tensor.read_bytes("map"),
                     box=_box_facts(info))
