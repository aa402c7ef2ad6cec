"""The shared-memory swizzle of include/tma/swizzle.h, on integers and on NumPy arrays of them.

The rule (measured on an H200; swizzle.h has the bit diagram): for the 32B, 64B and 128B modes, B = 1, 2, 3 bits,
address bits [4, 4+B) are XORed with bits [7, 7+B), i.e. CuTe's Swizzle<B, 4, 3> on byte addresses. The copy engine
swizzles the shared-memory address, so these take addresses (or offsets from a 1024-byte aligned base).

This is a second spelling of the C helpers (which are static inline, so Python cannot call them as they are): it
works on whole NumPy arrays at once. tests/python/test_swizzle.py proves it equal to the C one (exported by
python/abi.c) over 64 KiB of addresses per mode; span and period come from C.
"""

from ._c import lib
from .descriptors import Swizzle, _as_member


def _mode(mode):
    return _as_member(Swizzle, mode, "SWIZZLE_")


def swizzle_bits(mode):
    """XORed bits B: 32B -> 1, 64B -> 2, 128B -> 3; 0 for NONE and the modes Hopper lacks."""
    mode = _mode(mode)
    return int(mode) if mode in (Swizzle.SWIZZLE_32B, Swizzle.SWIZZLE_64B, Swizzle.SWIZZLE_128B) else 0


def swizzle_span(mode):
    """The widest box row the mode takes, in bytes (32, 64, 128); 0 for NONE."""
    return lib.tma_python_swizzle_span(_mode(mode))


def swizzle_period(mode):
    """Bytes after which the pattern repeats (256, 512, 1024); 16 for NONE."""
    return lib.tma_python_swizzle_period(_mode(mode))


def cute_swizzle(b, m, s, offset):
    """CuTe's Swizzle<B, M, S>: bits [M, M+B) ^= bits [M+S, M+S+B) of an integer or of each element of an integer
    array; the identity for b = 0 or b + m + s > 32."""
    if b == 0 or b > 32 or m > 32 or s > 32 or b + m + s > 32:
        return offset
    source_bits = ((1 << b) - 1) << (m + s)
    return offset ^ ((offset & source_bits) >> s)


def swizzle_addr(mode, address):
    """The copy engine's swizzle of shared-memory byte addresses (its own inverse)."""
    return cute_swizzle(swizzle_bits(mode), 4, 3, address)


def swizzle_elem(mode, tile_base, row_pitch, elem_bytes, row, col):
    """Physical address of element (row, col) of a box TMA wrote at tile_base (row: box rows, dimensions 1.. flattened;
    col: elements of dimension 0; row_pitch: the box's, from TiledDesc.footprint()). Arrays broadcast."""
    return swizzle_addr(mode, tile_base + row * row_pitch + col * elem_bytes)
