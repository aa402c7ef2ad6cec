/* libtma: shared-memory swizzle, one rule in three spellings, for host C and CUDA device code.
 *
 * THE RULE (measured on an H200, see docs/HARDWARE.md). The copy engine swizzles the shared-memory
 * *address*, not an offset inside the tile. For the Hopper modes 32B, 64B and 128B, with
 * B = 1, 2, 3 bits, address bits [4, 4+B) are XORed with address bits [7, 7+B):
 *
 *     address  ... 9 8 7 6 5 4 3 2 1 0
 *                  Y Y Y Z Z Z . . . .      128B: ZZZ ^= YYY  (16-byte chunk ^= 128-byte line % 8)
 *                    Y Y . Z Z . . . .      64B:   ZZ ^= YY
 *                      Y . . Z . . . .      32B:    Z ^= Y
 *
 * So a 16-byte chunk never leaves its 128-byte line, the pattern repeats every 256, 512 or 1024 bytes,
 * and a tile that starts at a 128-byte aligned address that is not a multiple of 256/512/1024 starts
 * the pattern mid-phase. Helpers here take shared-memory addresses (or offsets from a 1024-byte
 * aligned base, which have the same low 10 bits) for exactly that reason.
 *
 * The same rule, spelled three ways (tests/test_swizzle.c proves they agree over 64 KiB per mode):
 *   - address XOR:   tma_swizzle_addr(mode, addr)
 *   - CuTe:          Swizzle<B, 4, 3> on byte addresses, i.e. tma_cute_swizzle(B, 4, 3, addr)
 *                    (on 2-byte element offsets the same map is Swizzle<B, 3, 3>)
 *   - chunk index:   16-byte chunk i = addr / 16, line = i / 8, column = i % 8:
 *                    physical column = column ^ (line % (span / 16)); see tma_swizzle_chunk().
 *                    For 128B (span 128 = one line) this is the literature's "column ^ row" with
 *                    row = i / 8. For 32B and 64B the XOR source is still the 128-byte line, not the
 *                    32- or 64-byte row: "row = i / (span/16)" does not describe the hardware there.
 */
#ifndef TMA_SWIZZLE_H
#define TMA_SWIZZLE_H

#include <stdint.h>

#include "tma/hd.h"
#include "tma/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * The geometry, named once (measured on an H200: docs/HARDWARE.md "Shared-memory image of a tiled load", rule 3;
 * tests/test_swizzle.c proves every spelling below against it). Kernels size and align shared memory with these,
 * never with a bare 16, 128 or 1024; the constants serve where a value must be a compile-time constant (array
 * sizes, templates, static_assert), the functions for a mode known at run time.
 * ------------------------------------------------------------------------------------------- */
/** The unit the swizzle moves: a 16-byte chunk (address bits [4, 7)). A box's dimension 0 and a copy's
 *  coordinate start are whole chunks too (TMA_BOX_INNER_ALIGN, TMA_COORD0_ALIGN_BYTES in rules.h). */
#define TMA_SWIZZLE_CHUNK_BYTES 16u
/** The XOR's source: the 128-byte line of the address (bits [7, 7+B)). A chunk never leaves its line, whatever the
 *  mode; a box row of the 128B mode is one whole line. */
#define TMA_SWIZZLE_LINE_BYTES 128u
/** The 128B mode's span (tma_swizzle_span): the widest box row, box_dim[0] * elem, it takes (64 bf16, 32 f32). */
#define TMA_SWIZZLE_SPAN_128B 128u
/** The 128B mode's period (tma_swizzle_period), the longest of the four: 8 lines. A shared address that is a
 *  multiple of it is at phase 0 in every mode (256 and 512 divide it), so a kernel aligns its dynamic shared memory
 *  to it (tma_swizzle_phase0_pad) and reserves that many bytes more for the alignment. */
#define TMA_SWIZZLE_PERIOD_128B 1024u

/** Number of XORed bits B for a Hopper swizzle mode: 32B -> 1, 64B -> 2, 128B -> 3; 0 for NONE and
 *  for modes Hopper does not implement (which tma_check_tiled rejects before they get here). */
TMA_HD uint32_t tma_swizzle_bits(tma_swizzle mode) {
    return (mode == TMA_SWIZZLE_32B || mode == TMA_SWIZZLE_64B || mode == TMA_SWIZZLE_128B) ? (uint32_t)mode : 0u;
}

/** Swizzle span in bytes: the widest box row the mode accepts, 2^B chunks (32, 64, 128); 0 for NONE. */
TMA_HD uint32_t tma_swizzle_span(tma_swizzle mode) {
    uint32_t b = tma_swizzle_bits(mode);
    return b ? (TMA_SWIZZLE_CHUNK_BYTES << b) : 0u;
}

/** Bytes after which the pattern repeats, 2^B lines (256, 512, 1024); 16 (one chunk) for NONE. A tile whose base
 *  is a multiple of this sees the pattern from phase 0. */
TMA_HD uint32_t tma_swizzle_period(tma_swizzle mode) {
    uint32_t b = tma_swizzle_bits(mode);
    return b ? (TMA_SWIZZLE_LINE_BYTES << b) : TMA_SWIZZLE_CHUNK_BYTES;
}

/** Where shared address `addr` falls in the mode's pattern: addr % period, 0 at its start. A box written at phase p
 *  meets the pattern at line p / TMA_SWIZZLE_LINE_BYTES, not at line 0 (the copy engine swizzles the address, not an
 *  offset into the box), so code that addresses a box by its offsets alone needs phase 0. */
TMA_HD uint32_t tma_swizzle_phase(tma_swizzle mode, uint32_t addr) { return addr % tma_swizzle_period(mode); }

/** Bytes from shared address `addr` up to the next address at phase 0 of the mode (0 if addr is one): a kernel's
 *  dynamic shared memory `dyn` rounded up to the pattern is dyn + tma_swizzle_phase0_pad(TMA_SWIZZLE_128B,
 *  tma_smem_addr(dyn)), and at most TMA_SWIZZLE_PERIOD_128B - 16 bytes are skipped (dynamic shared memory is 16-byte
 *  aligned). */
TMA_HD uint32_t tma_swizzle_phase0_pad(tma_swizzle mode, uint32_t addr) {
    const uint32_t period = tma_swizzle_period(mode); /* branch-free: the kernels' prologues compute it */
    return (period - addr % period) % period;
}

/** bytes (below 2^63) rounded up to whole periods of the mode: the stride of tiles stacked in shared memory that
 *  each start at phase 0 when the first does. */
TMA_HD uint64_t tma_swizzle_round_up(tma_swizzle mode, uint64_t bytes) {
    const uint64_t period = tma_swizzle_period(mode);
    return (bytes + period - 1u) / period * period;
}

/** CuTe's Swizzle<B, M, S> on an integer offset: bits [M, M+B) ^= bits [M+S, M+S+B).
 *  Defined for b + m + s <= 32 (the source bits exist in 32 bits; every TMA mode has b + m + s <= 10);
 *  outside that range, and for b = 0, it is the identity. */
TMA_HD uint32_t tma_cute_swizzle(uint32_t b, uint32_t m, uint32_t s, uint32_t offset) {
    if (b == 0u || b > 32u || m > 32u || s > 32u || b + m + s > 32u)
        return offset;
    uint32_t yyy_mask = (0xFFFFFFFFu >> (32u - b)) << (m + s); /* b >= 1: no shift by 32 */
    return offset ^ ((offset & yyy_mask) >> s);
}

/** The hardware's swizzle of a shared-memory byte address (the copy engine's view). It is its own
 *  inverse: applying it to a physical address gives back the logical one. */
TMA_HD uint32_t tma_swizzle_addr(tma_swizzle mode, uint32_t smem_byte_address) {
    return tma_cute_swizzle(tma_swizzle_bits(mode), 4u, 3u, smem_byte_address);
}

/** Chunk-index form: logical 16-byte chunk index i (counted from a 1024-byte aligned base) to the
 *  physical chunk index, for a swizzle span of 32, 64 or 128 bytes (any other span: identity). */
TMA_HD uint32_t tma_swizzle_chunk(uint32_t span_bytes, uint32_t i) {
    const uint32_t per_line = TMA_SWIZZLE_LINE_BYTES / TMA_SWIZZLE_CHUNK_BYTES; /* 8 */
    const int known = span_bytes == 32u || span_bytes == 64u || span_bytes == 128u;
    uint32_t cols = known ? span_bytes / TMA_SWIZZLE_CHUNK_BYTES : 1u;
    uint32_t line = i / per_line, column = i % per_line;
    return line * per_line + (column ^ (line % cols));
}

/** Physical shared-memory address of element (row, col) of a box that TMA wrote at tile_base.
 *  row counts box rows (dimensions 1..rank-1 flattened, dimension 1 fastest), col counts elements of
 *  dimension 0; row_pitch is tma_box_row_pitch() of the descriptor (box_dim[0] * elem_bytes, or the
 *  whole swizzle span when a swizzle is set). */
TMA_HD uint32_t tma_swizzle_elem(tma_swizzle mode, uint32_t tile_base, uint32_t row_pitch, uint32_t elem_bytes,
                                 uint32_t row, uint32_t col) {
    return tma_swizzle_addr(mode, tile_base + row * row_pitch + col * elem_bytes);
}

#ifdef __cplusplus
}
#endif

#endif /* TMA_SWIZZLE_H */
