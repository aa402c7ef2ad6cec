/* tma_transpose_model (tma/kernels.h): the transpose's tile pipeline on the CPU model of the copy engine: the
 * same descriptors, the same lane map and the same helper-addressed reads and writes as transpose.cu, one tile
 * at a time. Plain C: built into libtma_kernels and, without nvcc, into the cpu tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_diag.h"
#include "transpose_tiles.h"

#include "tma/kernels.h"

tma_status tma_transpose_model(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols,
                               size_t in_pitch, size_t out_pitch, uint32_t box_rows,
                               tma_transpose_model_facts *facts, tma_diag *diag) {
    const tma_swizzle sw = TMA_SWIZZLE_128B;
    if (elem_bytes != 4 && elem_bytes != 2)
        return kd_fail(diag, TMA_ERR_ARG, "elem_bytes = %u: the transpose moves 2- or 4-byte elements", elem_bytes);
    if (in == NULL || out == NULL)
        return kd_fail(diag, TMA_ERR_NULL_ARG, "%s = NULL: pass host buffers", in == NULL ? "in" : "out");
    const tma_dtype dt = elem_bytes == 4 ? TMA_DTYPE_F32 : TMA_DTYPE_BF16;
    const uint32_t w = tr_box_cols(elem_bytes); /* sub-tile side in elements: 8 chunks of V */
    const uint32_t v = 16u / elem_bytes;
    if (box_rows == 0 || box_rows % w != 0 || box_rows > TMA_MAX_BOX_DIM)
        return kd_fail(diag, TMA_ERR_ARG, "box_rows = %u: use a multiple of %u (128 / elem_bytes) of at most %u",
                    box_rows, w, TMA_MAX_BOX_DIM);
    tma_tiled_desc din = tma_desc_2d(dt, (void *)(uintptr_t)in, rows, cols, in_pitch, box_rows, w, sw);
    tma_tiled_desc dout = tma_desc_2d(dt, out, cols, rows, out_pitch, w, w, sw);
    tma_diag d;
    tma_status s;
    if ((s = tma_check_tiled(&din, &d)) != TMA_OK)
        return kd_fail(diag, s, "input map: %s", d.message);
    if ((s = tma_check_tiled(&dout, &d)) != TMA_OK)
        return kd_fail(diag, s, "output map: %s", d.message);

    const size_t in_bytes = tma_box_smem_bytes(&din), out_bytes = (size_t)box_rows * 128u;
    uint8_t *tin = aligned_alloc(1024, in_bytes), *tout = aligned_alloc(1024, out_bytes);
    if (!tin || !tout) {
        free(tin), free(tout);
        return kd_fail(diag, TMA_ERR_UNSUPPORTED, "tma_transpose_model: out of host memory (%zu bytes)",
                    in_bytes + out_bytes);
    }
    const uint32_t tiles_x = (cols + w - 1) / w, tiles_y = (rows + box_rows - 1) / box_rows, sub = box_rows / w;
    uint32_t stores = 0;
    s = TMA_OK;
    for (uint32_t ty = 0; ty < tiles_y && s == TMA_OK; ty++)
        for (uint32_t tx = 0; tx < tiles_x && s == TMA_OK; tx++) {
            int32_t lc[5] = {(int32_t)(tx * w), (int32_t)(ty * box_rows), 0, 0, 0};
            memset(tin, 0xA5, in_bytes); /* poison: every byte read must come from the copy */
            memset(tout, 0x5A, out_bytes);
            if ((s = tma_model_load_tiled(&din, lc, tin, in_bytes, 0)) != TMA_OK)
                break;
            /* What each of the kernel's threads does, thread b of the tile taking block lb of sub-tile q. */
            for (uint32_t b = 0; b < sub * 64u; b++) {
                uint32_t q = b / 64u, k, c;
                tr_lane_block(b % 64u, &k, &c);
                uint8_t blk[8][16];
                for (uint32_t i = 0; i < v; i++) /* 16-byte read of line q*w + k*v + i, chunk c */
                    memcpy(blk[i], tin + tma_swizzle_elem(sw, 0, 128, elem_bytes, q * w + k * v + i, c * v), 16);
                for (uint32_t j = 0; j < v; j++) { /* column j of the block becomes line c*v + j, chunk k */
                    uint8_t row[16];
                    for (uint32_t i = 0; i < v; i++)
                        memcpy(row + i * elem_bytes, blk[i] + j * elem_bytes, elem_bytes);
                    memcpy(tout + q * w * 128u + tma_swizzle_elem(sw, 0, 128, elem_bytes, c * v + j, k * v), row, 16);
                }
            }
            for (uint32_t q = 0; q < sub && s == TMA_OK; q++) {
                int32_t sc[5] = {(int32_t)(ty * box_rows + q * w), (int32_t)(tx * w), 0, 0, 0};
                if ((uint32_t)sc[0] >= rows) /* the whole box lies past the output's columns */
                    continue;
                s = tma_model_store_tiled(&dout, sc, tout, out_bytes, q * w * 128u);
                stores++;
            }
        }
    free(tin), free(tout);
    if (s != TMA_OK)
        return kd_fail(diag, s, "a model copy of the pipeline failed: %s", tma_strerror(s));
    if (facts) {
        facts->in_desc = din, facts->out_desc = dout;
        facts->in_tx_bytes = tma_box_tx_bytes(&din), facts->in_smem_bytes = tma_box_smem_bytes(&din);
        facts->out_tx_bytes = tma_box_tx_bytes(&dout), facts->out_smem_bytes = tma_box_smem_bytes(&dout);
        facts->tiles = tiles_x * tiles_y, facts->stores = stores;
    }
    return kd_ok(diag);
}
