/* The libtma transpose's tile pipeline on the CPU model of the copy engine: the same descriptors, the same
 * lane map and the same helper-addressed reads and writes as kernels/transpose.cu, one tile at a time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transpose.h"

#include "tma/swizzle.h"

void tr_reference(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols, size_t in_pitch,
                  size_t out_pitch) {
    const uint8_t *src = (const uint8_t *)in;
    uint8_t *dst = (uint8_t *)out;
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++)
            memcpy(dst + (size_t)c * out_pitch + (size_t)r * elem_bytes, src + (size_t)r * in_pitch + (size_t)c * elem_bytes,
                   elem_bytes);
}

size_t tr_compare(uint32_t elem_bytes, const void *got, const void *want, uint32_t out_rows, uint32_t out_cols,
                  size_t out_pitch, char *where, size_t wherelen) {
    const uint8_t *g = (const uint8_t *)got, *w = (const uint8_t *)want;
    size_t bad = 0;
    for (uint32_t r = 0; r < out_rows; r++) {
        const uint8_t *gr = g + (size_t)r * out_pitch, *wr = w + (size_t)r * out_pitch;
        if (memcmp(gr, wr, (size_t)out_cols * elem_bytes) == 0)
            continue;
        for (uint32_t c = 0; c < out_cols; c++) {
            if (memcmp(gr + (size_t)c * elem_bytes, wr + (size_t)c * elem_bytes, elem_bytes) == 0)
                continue;
            if (bad == 0 && where) {
                uint32_t gv = 0, wv = 0;
                memcpy(&gv, gr + (size_t)c * elem_bytes, elem_bytes);
                memcpy(&wv, wr + (size_t)c * elem_bytes, elem_bytes);
                snprintf(where, wherelen, "output (%u, %u): got 0x%0*x, want 0x%0*x", r, c, (int)elem_bytes * 2, gv,
                         (int)elem_bytes * 2, wv);
            }
            bad++;
        }
    }
    return bad;
}

static tma_status fail(tma_status s, const tma_diag *diag, const char *what, char *err, size_t errlen) {
    if (err)
        snprintf(err, errlen, "%s: %s%s%s", what, tma_status_name(s), diag ? ": " : "", diag ? diag->message : "");
    return s;
}

tma_status tr_model_transpose(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols,
                              size_t in_pitch, size_t out_pitch, uint32_t box_rows, tr_tile_facts *facts, char *err,
                              size_t errlen) {
    const tma_swizzle sw = TMA_SWIZZLE_128B;
    const tma_dtype dt = elem_bytes == 4 ? TMA_DTYPE_F32 : TMA_DTYPE_BF16;
    const uint32_t w = tr_box_cols(elem_bytes); /* sub-tile side in elements: 8 chunks of V */
    const uint32_t v = 16u / elem_bytes;
    if ((elem_bytes != 4 && elem_bytes != 2) || box_rows == 0 || box_rows % w != 0 || box_rows > 256)
        return fail(TMA_ERR_UNSUPPORTED, NULL, "tr_model_transpose: elem_bytes 4 or 2, box_rows a multiple of 128/elem",
                    err, errlen);
    tma_tiled_desc din = tma_desc_2d(dt, (void *)(uintptr_t)in, rows, cols, in_pitch, box_rows, w, sw);
    tma_tiled_desc dout = tma_desc_2d(dt, out, cols, rows, out_pitch, w, w, sw);
    tma_diag diag;
    tma_status s;
    if ((s = tma_check_tiled(&din, &diag)) != TMA_OK)
        return fail(s, &diag, "input descriptor", err, errlen);
    if ((s = tma_check_tiled(&dout, &diag)) != TMA_OK)
        return fail(s, &diag, "output descriptor", err, errlen);

    const size_t in_bytes = tma_box_smem_bytes(&din), out_bytes = (size_t)box_rows * 128u;
    uint8_t *tin = aligned_alloc(1024, in_bytes), *tout = aligned_alloc(1024, out_bytes);
    if (!tin || !tout) {
        free(tin), free(tout);
        return fail(TMA_ERR_UNSUPPORTED, NULL, "out of host memory", err, errlen);
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
        return fail(s, NULL, "model copy", err, errlen);
    if (facts) {
        facts->din = din, facts->dout = dout;
        facts->in_tx_bytes = tma_box_tx_bytes(&din), facts->in_smem_bytes = tma_box_smem_bytes(&din);
        facts->out_tx_bytes = tma_box_tx_bytes(&dout), facts->out_smem_bytes = tma_box_smem_bytes(&dout);
        facts->tiles = tiles_x * tiles_y, facts->stores = stores;
    }
    return TMA_OK;
}
