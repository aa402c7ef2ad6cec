"""The CPU model on NumPy arrays: loads against the byte layout the swizzle rule gives, stores and reduce-stores
against NumPy, random descriptors through the C model read back with the package's swizzle, and the permute
pipeline against numpy.transpose."""

import numpy as np
import pytest

import libtma
from libtma import Status, TiledDesc, TmaError
from libtma import model

from conftest import assert_same

TYPES = {"u8": np.uint8, "u16": np.uint16, "bf16": np.uint16, "f32": np.float32, "u32": np.uint32,
         "f64": np.float64, "i64": np.int64}


def random_array(rng, shape, dtype):
    bits = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(dtype).itemsize, dtype=np.uint8)
    return bits.view(dtype).reshape(shape)


def expected_image(array, box_origin, box_shape, elem, pitch, swizzle, offset, size):
    """The shared-memory image of a 2-D box by the rule alone: element (r, c) of the box at
    swizzle(offset + r * pitch + c * elem); zeros outside the array."""
    image = np.zeros(size, dtype=np.uint8)
    rows, cols = box_shape
    r0, c0 = box_origin
    for r in range(rows):
        for c in range(cols):
            inside = 0 <= r0 + r < array.shape[0] and 0 <= c0 + c < array.shape[1]
            value = array[r0 + r, c0 + c] if inside else np.zeros((), array.dtype)
            address = libtma.swizzle_addr(swizzle, offset + r * pitch + c * elem)
            image[address:address + elem] = np.frombuffer(value.tobytes(), dtype=np.uint8)
    return image


@pytest.mark.parametrize("swizzle", ["none", "32B", "64B", "128B"])
@pytest.mark.parametrize("offset", [0, 128, 384, 1024])
def test_load_writes_the_swizzled_layout(rng, swizzle, offset):
    array = random_array(rng, (40, 24), np.float32)
    span = libtma.swizzle_span(swizzle) or 64
    box = (span // 4, 8)  # (dimension 0, dimension 1)
    d = TiledDesc.for_array(array, box=box, swizzle=swizzle)
    for coord in [(0, 0), (16, 8), (16, 36), (-8, -4)]:
        smem = np.full(offset + 2048, 0xA5, dtype=np.uint8)  # poisoned: the load writes its box and nothing else
        model.load_tiled(array, d, coord, smem, offset)
        pitch = d.footprint()["row_pitch"]
        want = expected_image(array, (coord[1], coord[0]), (box[1], box[0]), 4, pitch, swizzle, offset, smem.size)
        touched = np.zeros(smem.size, dtype=bool)
        for r in range(box[1]):
            addresses = libtma.swizzle_addr(swizzle, offset + r * pitch + np.arange(box[0] * 4))
            touched[addresses] = True
        want[~touched] = 0xA5
        assert_same(smem, want, f"load at {coord}, swizzle {swizzle}, offset {offset}")


def test_nan_fill_is_the_measured_pattern():
    array = np.arange(64, dtype=np.float32).reshape(8, 8)
    d = TiledDesc.for_array(array, box=(8, 8), oob_fill="nan")
    smem = model.load_tiled(array, d, (4, 4))
    got = model.box(d, smem)
    assert_same(got[:4, :4], array[4:, 4:].view(np.uint32), "inside")
    for outside in (got[4:, :], got[:, 4:]):
        assert_same(outside, np.full(outside.shape, 0x7FF77FF7, dtype=np.uint32), "fill")


@pytest.mark.parametrize("trial", range(40))
def test_random_loads_read_back_through_the_package_swizzle(rng, trial):
    """The C model's image, read back with the package's spelling of the swizzle, is the array's box."""
    name = rng.choice(list(TYPES))
    dtype = TYPES[name]
    elem = np.dtype(dtype).itemsize
    rank = int(rng.integers(1, 5))
    shape = tuple(int(x) for x in rng.integers(1, 12, size=rank))
    swizzle = rng.choice(["none", "32B", "64B", "128B"])
    span = libtma.swizzle_span(swizzle) or 256
    inner = int(rng.integers(1, span // 16 + 1)) * 16 // elem  # a box row of whole 16-byte chunks
    box = [inner] + [int(rng.integers(1, 6)) for _ in range(rank - 1)]
    row = -(-shape[-1] * elem // 16) * 16 // elem + int(rng.integers(0, 3)) * 16 // elem  # strides: 16-byte multiples
    backing = random_array(rng, shape[:-1] + (row,), dtype)
    array = backing[..., :shape[-1]]
    d = TiledDesc.for_array(array, box=box, swizzle=swizzle, dtype=name)
    assert libtma.check(d) == [], libtma.check(d)
    coord = [int(rng.integers(-1, 3)) * 16 // elem] + [int(rng.integers(-2, s + 1)) for s in reversed(shape[:-1])]
    offset = int(rng.integers(0, 8)) * 128
    smem = model.load_tiled(array, d, coord, offset=offset)
    got = model.box(d, smem, offset)
    # the box from NumPy: coordinates outside the array read zero
    want = np.zeros(got.shape, dtype=got.dtype)
    numpy_origin = list(reversed(coord))
    for index in np.ndindex(*got.shape):
        source = tuple(o + i for o, i in zip(numpy_origin, index))
        if all(0 <= s < n for s, n in zip(source, shape)):
            want[index] = array[source].view(got.dtype)
    assert_same(got, want, f"{name} shape {shape} box {box} swizzle {swizzle} coord {coord} offset {offset}")


def test_store_writes_the_box_and_nothing_else(rng):
    array = random_array(rng, (30, 40), np.uint16)
    original = array.copy()
    d = TiledDesc.for_array(array, box=(64, 8), swizzle="128B", dtype="u16")
    values = random_array(rng, (8, 64), np.uint16)
    smem = model.store_image(d, values, offset=256)
    model.store_tiled(array, d, (0, 24), smem, offset=256)
    want = original.copy()
    want[24:30, 0:40] = values[:6, :40]  # clipped to the array (rows 24..29; columns 0..39)
    assert_same(array, want, "store")
    assert_same(model.box(d, smem, 256), values, "store_image then box")


def test_reduce_add_wraps_like_the_hardware(rng):
    array = random_array(rng, (16, 16), np.uint32)
    original = array.copy()
    d = TiledDesc.for_array(array, box=(8, 4))
    values = random_array(rng, (4, 8), np.uint32)
    model.reduce_tiled(array, d, (8, 4), model.store_image(d, values), "add")
    want = original.copy()
    want[4:8, 8:16] = (original[4:8, 8:16].astype(np.uint64) + values) % (1 << 32)
    assert_same(array, want, "reduce add")


def test_refusals_carry_the_rule():
    array = np.zeros((16, 16), dtype=np.float32)
    d = TiledDesc.for_array(array, box=(8, 8))
    with pytest.raises(TmaError) as caught:
        model.load_tiled(array, d, (2, 0))  # 8 bytes: not a 16-byte multiple
    assert caught.value.status == Status.ERR_COORD_ALIGN
    with pytest.raises(TmaError) as caught:
        model.store_tiled(array, d, (0, -1), np.zeros(4096, dtype=np.uint8))
    assert caught.value.status == Status.ERR_COORD_NEGATIVE_STORE
    with pytest.raises(ValueError, match="reaches"):
        model.load_tiled(array[:4], TiledDesc(dtype="f32", dims=(16, 16), box=(8, 8)), (0, 0))


def test_im2col_load_walks_the_pixels():
    """No padding, offsets 0: the rows are the pixels from the start, W fastest, then H, then N."""
    n, h, w, c = 2, 3, 5, 8
    x = np.arange(n * h * w * c, dtype=np.float32).reshape(n, h, w, c)
    d = libtma.Im2colDesc.for_array(x, channels=8, pixels=12)
    smem = model.load_im2col(x, d, coord=(0, 2, 1, 0), offsets=(0, 0))
    rows = smem[: 12 * 8 * 4].view(np.float32).reshape(12, 8)
    pixels = x.reshape(n * h * w, c)
    start = 0 * h * w + 1 * w + 2
    assert_same(rows, pixels[start:start + 12], "im2col rows")


@pytest.mark.parametrize("trial", range(60))
def test_permute_model_equals_numpy(rng, trial):
    """Random ranks, shapes, permutations, element sizes and strided views (the mapping the GPU kernel uses)."""
    dtype = [np.uint8, np.uint16, np.float32, np.float64][int(rng.integers(0, 4))]
    rank = int(rng.integers(1, 6))
    shape = tuple(int(s) for s in rng.integers(1, 9, size=rank))
    steps = tuple(int(s) for s in rng.integers(1, 3, size=rank)) if rng.random() < 0.5 else (1,) * rank
    if rank == 5:  # a strided innermost dimension takes a sixth, of one element (libtma/_permute.py)
        steps = steps[:-1] + (1,)
    backing = random_array(rng, tuple(s * k for s, k in zip(shape, steps)), dtype)
    array = backing[tuple(slice(None, None, k) for k in steps)]
    dims = tuple(int(d) for d in rng.permutation(rank))
    got, facts = model.permute(array, dims)
    assert_same(got, np.transpose(array, dims).copy(), f"permute {shape} by {dims}, steps {steps}, {dtype.__name__}")
    assert facts["tiles"] >= 1


def test_permute_model_refuses_what_the_descriptor_cannot_say():
    with pytest.raises(ValueError, match="permutation"):
        model.permute(np.zeros((2, 3)), (0, 0))
    with pytest.raises(ValueError, match="stride of 0"):
        model.permute(np.broadcast_to(np.arange(4.0), (3, 4)), (1, 0))
