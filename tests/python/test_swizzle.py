"""The package's vectorized swizzle against the C helpers of tma/swizzle.h (exported by python/abi.c)."""

import numpy as np
import pytest

import libtma
from libtma import _c

HOPPER_MODES = ["none", "32B", "64B", "128B"]


@pytest.mark.parametrize("mode", HOPPER_MODES + ["128B_ATOM_64B"])
def test_swizzle_addr_equals_the_c_helper_over_64_kib(mode):
    addresses = np.arange(64 * 1024, dtype=np.int64)
    number = libtma.descriptors._as_member(libtma.Swizzle, mode, "SWIZZLE_")
    want = np.array([_c.lib.tma_python_swizzle_addr(number, int(a)) for a in addresses], dtype=np.int64)
    got = libtma.swizzle_addr(mode, addresses)
    differ = np.flatnonzero(got != want)
    assert differ.size == 0, f"{mode}: {differ.size} addresses differ, first {differ[:1]}"
    assert all(libtma.swizzle_addr(mode, int(a)) == int(w) for a, w in zip(addresses[:4096:37], want[:4096:37]))


def test_cute_swizzle_equals_the_c_helper(rng):
    offsets = rng.integers(0, 1 << 32, size=20000, dtype=np.int64)
    for b, m, s in [(1, 4, 3), (2, 4, 3), (3, 4, 3), (3, 3, 3), (2, 1, 5), (0, 4, 3), (5, 20, 8), (10, 15, 10)]:
        want = np.array([_c.lib.tma_python_cute_swizzle(b, m, s, int(o)) for o in offsets], dtype=np.int64)
        got = libtma.cute_swizzle(b, m, s, offsets)
        assert np.array_equal(got, want), f"Swizzle<{b},{m},{s}>"


def test_known_addresses_and_geometry():
    # the 16-byte chunk at byte 16 of line 1 moves to chunk 0 (1 ^ 1) under 128B; a chunk never leaves its line
    assert libtma.swizzle_addr("128B", 128 + 16) == 128
    assert libtma.swizzle_addr("128B", 7 * 128 + 5) == 7 * 128 + 7 * 16 + 5
    assert libtma.swizzle_addr("32B", 128 + 16) == 128 and libtma.swizzle_addr("32B", 256 + 16) == 256 + 16
    assert [libtma.swizzle_span(m) for m in HOPPER_MODES] == [0, 32, 64, 128]
    assert [libtma.swizzle_period(m) for m in HOPPER_MODES] == [16, 256, 512, 1024]
    assert [libtma.swizzle_bits(m) for m in HOPPER_MODES] == [0, 1, 2, 3]


@pytest.mark.parametrize("mode", HOPPER_MODES)
def test_swizzle_is_its_own_inverse_and_a_permutation_of_each_period(mode):
    addresses = np.arange(4096, dtype=np.int64)
    swizzled = libtma.swizzle_addr(mode, addresses)
    assert np.array_equal(libtma.swizzle_addr(mode, swizzled), addresses)
    assert np.array_equal(np.sort(swizzled), addresses)
    assert np.array_equal(swizzled // 128, addresses // 128), "a chunk never leaves its 128-byte line"
