/* libtma: the wgmma shared-memory matrix descriptor, derived from the TMA box that fills the tile.
 *
 * Header-only, for host C and CUDA device code (TMA_HD, tma/hd.h). A wgmma.mma_async operand in
 * shared memory is named by a 64-bit descriptor (PTX ISA, "Matrix Descriptor Format"):
 *
 *     bits  0-13  start address >> 4          bits 32-45  stride byte offset (SBO) >> 4
 *     bits 16-29  leading byte offset (LBO) >> 4   bits 49-51  base offset (0 here, see below)
 *     bits 62-63  layout: 0 none (interleave), 1 = 128B swizzle, 2 = 64B, 3 = 32B
 *
 * The layout field is NEVER typed by a caller: tma_wgmma_desc_kmajor() derives it, and SBO/LBO, from the
 * same tma_swizzle and box geometry (row pitch, rows) that the TMA descriptor used to write the tile, so
 * the copy engine and the tensor core cannot disagree about the swizzle.
 *
 * K-MAJOR CANONICAL LAYOUTS (the operand's K index is contiguous in a row, as a TMA box of a row-major
 * M x K matrix lands with box_dim[0] along K):
 *   - 32B / 64B / 128B swizzle: rows of `span` bytes (the TMA row pitch: 32, 64, 128), 8-row groups of
 *     core matrices SBO = 8 * span bytes apart; element (m, k) sits at
 *         swizzle(start + (m / 8) * SBO + (m % 8) * span + k * elem_bytes)
 *     with the address swizzle of swizzle.h (the hardware XOR on absolute address bits). One wgmma reads
 *     32 bytes of K (k16 for 16-bit types, k8 for tf32, k32 for 8-bit), which always fits inside one span,
 *     so LBO is unused (set to 16 bytes, i.e. 1, as CUTLASS does). Successive K steps inside the span
 *     advance the start address by 32 bytes, as kernels do. The swizzle is of absolute addresses on both
 *     sides, so with base offset 0 a descriptor may start at any row of a tile the copy engine wrote, on the
 *     swizzle period or not (rows r .. r + m of the tile: the start + r x span); a nonzero base offset then
 *     reads other bytes. Measured on an H100, every swizzle, rows 0-15 (docs/HARDWARE.md "wgmma operands that
 *     start off the swizzle period").
 *   - NONE (interleave): core matrices of 8 rows x 16 bytes, stored contiguously (128 bytes). TMA writes
 *     that when each box is 16 bytes wide: a K-chunk of 16 bytes for all `rows` rows, row pitch 16. The
 *     tile is then a sequence of such boxes, K-chunk j at tile + j * rows * 16. So SBO = 128 (next 8 rows)
 *     and LBO = rows * 16 (next 16 bytes of K); element (m, k) sits at
 *         start + (m / 8) * SBO + (m % 8) * 16 + (kb / 16) * LBO + kb % 16,   kb = k * elem_bytes.
 *
 * tma_wgmma_kmajor_addr() interprets a descriptor with exactly these rules; tests/test_wgmma.c proves,
 * through the CPU model of the copy engine, that the element it designates is the element TMA wrote. */
#ifndef TMA_WGMMA_H
#define TMA_WGMMA_H

#include <stdint.h>

#include "tma/swizzle.h"
#include "tma/tensor.h"
#include "tma/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Bytes of K one wgmma instruction reads from a K-major operand (k16 bf16/f16, k8 tf32, k32 8-bit). */
#define TMA_WGMMA_K_BYTES 32u

/** The descriptor's 2-bit layout field for a swizzle mode: NONE -> 0, 128B -> 1, 64B -> 2, 32B -> 3.
 *  Modes wgmma cannot read (the 128B_ATOM ones) give 0xFF. */
TMA_HD uint32_t tma_wgmma_layout_of(tma_swizzle mode) {
    switch (mode) {
    case TMA_SWIZZLE_NONE: return 0u;
    case TMA_SWIZZLE_128B: return 1u;
    case TMA_SWIZZLE_64B: return 2u;
    case TMA_SWIZZLE_32B: return 3u;
    default: return 0xFFu;
    }
}

/** The swizzle mode a descriptor's layout field stands for (the inverse of tma_wgmma_layout_of). */
TMA_HD tma_swizzle tma_wgmma_swizzle_of_layout(uint32_t layout) {
    return layout == 1u ? TMA_SWIZZLE_128B : layout == 2u ? TMA_SWIZZLE_64B : layout == 3u ? TMA_SWIZZLE_32B
                                                                                       : TMA_SWIZZLE_NONE;
}

/** Pack the fields (byte values; the 4 low bits are dropped, as the hardware does). */
TMA_HD uint64_t tma_wgmma_desc_pack(uint32_t start_addr, uint32_t lbo_bytes, uint32_t sbo_bytes, uint32_t base_offset,
                                    uint32_t layout) {
    return (uint64_t)((start_addr >> 4) & 0x3FFFu) | ((uint64_t)((lbo_bytes >> 4) & 0x3FFFu) << 16) |
           ((uint64_t)((sbo_bytes >> 4) & 0x3FFFu) << 32) | ((uint64_t)(base_offset & 7u) << 49) |
           ((uint64_t)(layout & 3u) << 62);
}

TMA_HD uint32_t tma_wgmma_desc_start(uint64_t d) { return (uint32_t)(d & 0x3FFFu) << 4; }
TMA_HD uint32_t tma_wgmma_desc_lbo(uint64_t d) { return (uint32_t)((d >> 16) & 0x3FFFu) << 4; }
TMA_HD uint32_t tma_wgmma_desc_sbo(uint64_t d) { return (uint32_t)((d >> 32) & 0x3FFFu) << 4; }
TMA_HD uint32_t tma_wgmma_desc_base_offset(uint64_t d) { return (uint32_t)((d >> 49) & 7u); }
TMA_HD uint32_t tma_wgmma_desc_layout(uint64_t d) { return (uint32_t)(d >> 62); }

/** Descriptor of a K-major operand tile that TMA wrote at shared address `tile_addr` with swizzle `mode`,
 *  row pitch `row_pitch` (tma_box_row_pitch: the span for a swizzled box, 16 for a NONE box) and `rows`
 *  rows per box (box_dim[1]; used for NONE only), for the wgmma K step that starts `k_bytes` bytes into K
 *  (k * elem_bytes; a multiple of 32 for one instruction per step). See the layouts above; check the
 *  arguments with tma_wgmma_kmajor_ok(). */
TMA_HD uint64_t tma_wgmma_desc_kmajor(tma_swizzle mode, uint32_t tile_addr, uint32_t row_pitch, uint32_t rows,
                                      uint32_t k_bytes) {
    uint32_t layout = tma_wgmma_layout_of(mode);
    if (mode == TMA_SWIZZLE_NONE) {
        uint32_t lbo = rows * 16u; /* next 16-byte K-chunk: the next box */
        return tma_wgmma_desc_pack(tile_addr + (k_bytes / 16u) * lbo + k_bytes % 16u, lbo, 128u, 0u, layout);
    }
    return tma_wgmma_desc_pack(tile_addr + k_bytes, 16u, 8u * row_pitch, 0u, layout);
}

/** The same, from the box facts of the tma_tensor whose copy wrote the tile (swizzle, row pitch, rows and
 *  element size all come from the one descriptor), for the K step at element k. */
TMA_HD uint64_t tma_wgmma_desc_box(const tma_box_info *box, uint32_t tile_addr, uint32_t k) {
    return tma_wgmma_desc_kmajor((tma_swizzle)box->swizzle, tile_addr, box->row_pitch, box->box_dim[1],
                                 k * box->elem_bytes);
}

/** A descriptor moved `bytes` further in shared memory: the start-address field (address >> 4) plus
 *  bytes >> 4. For a swizzled tile this equals building the descriptor afresh at tile_addr + bytes when
 *  bytes is a multiple of the swizzle period (so the pattern phase is unchanged) and the address stays under
 *  256 KiB (no carry out of the 14-bit field): a pipeline derives stage 0's descriptors once and advances
 *  them by whole boxes (measured on an H200: re-deriving them every stage cost the GEMM 20% of its speed). */
TMA_HD uint64_t tma_wgmma_desc_advance(uint64_t desc, uint32_t bytes) { return desc + (uint64_t)(bytes >> 4); }

/** 1 when tma_wgmma_desc_kmajor's arguments describe a tile wgmma can read as documented above: a
 *  wgmma-readable mode; the tile on a row of its swizzle (a multiple of the span; 16 for NONE); the row pitch of a
 *  TMA box of that mode (span, or 16 for NONE); rows a multiple of 8; the K step 32-byte aligned and,
 *  swizzled, inside the span; every address under 256 KiB (14-bit field). 0 otherwise. */
TMA_HD int tma_wgmma_kmajor_ok(tma_swizzle mode, uint32_t tile_addr, uint32_t row_pitch, uint32_t rows,
                               uint32_t k_bytes) {
    if (tma_wgmma_layout_of(mode) == 0xFFu || rows == 0u || rows % 8u != 0u || k_bytes % TMA_WGMMA_K_BYTES != 0u)
        return 0;
    if (tile_addr % (mode == TMA_SWIZZLE_NONE ? 16u : tma_swizzle_span(mode)) != 0u)
        return 0;
    if (mode == TMA_SWIZZLE_NONE)
        return row_pitch == 16u && tile_addr + (k_bytes / 16u + 2u) * rows * 16u <= (1u << 18);
    return row_pitch == tma_swizzle_span(mode) && k_bytes + TMA_WGMMA_K_BYTES <= row_pitch &&
           tile_addr + rows * row_pitch <= (1u << 18);
}

/** Interpret a descriptor the way the tensor core does for a K-major operand: the shared-memory byte
 *  address of element (m, k) of the instruction's tile, m the row (M or N index), k the element along K
 *  (k * elem_bytes < 32 for one instruction). Base offset other than 0 is not modelled: 0xFFFFFFFF. */
TMA_HD uint32_t tma_wgmma_kmajor_addr(uint64_t desc, uint32_t elem_bytes, uint32_t m, uint32_t k) {
    if (tma_wgmma_desc_base_offset(desc) != 0u)
        return 0xFFFFFFFFu;
    uint32_t start = tma_wgmma_desc_start(desc), lbo = tma_wgmma_desc_lbo(desc), sbo = tma_wgmma_desc_sbo(desc);
    uint32_t layout = tma_wgmma_desc_layout(desc), kb = k * elem_bytes;
    if (layout == 0u)
        return start + (m / 8u) * sbo + (m % 8u) * 16u + (kb / 16u) * lbo + kb % 16u;
    tma_swizzle mode = tma_wgmma_swizzle_of_layout(layout);
    uint32_t span = tma_swizzle_span(mode);
    return tma_swizzle_addr(mode, start + (m / 8u) * sbo + (m % 8u) * span + (kb / span) * lbo + kb % span);
}

#ifdef __cplusplus
}
#endif

#endif /* TMA_WGMMA_H */
