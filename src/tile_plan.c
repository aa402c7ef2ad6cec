/* Tile plans on the host: the planner's refusals as tma_diag messages, and the CPU model of a planned tile,
 * composed of the one-box model (tma_model_load_tiled) per sub-box. The plan itself is computed by the TMA_HD
 * code of tma/tile_plan.h, the same on the host and the device. */
#include <string.h>

#include "internal.h"
#include "tma/detail/tile_plan.h"
#include "tma/tile_plan.h"

tma_status tma_tile_plan_make(const tma_tiled_desc *tile, const uint32_t max_box[5], tma_tile_plan *plan,
                              tma_diag *diag) {
    tma_tile_refusal why;
    const tma_status st = tma_tile_plan_compute(tile, max_box, plan, &why);
    if (diag != NULL) {
        memset(diag, 0, sizeof *diag); /* no stale bytes after the text, as check.c's diagnostics */
        diag->status = st;
        if (st != TMA_OK)
            tma_tile_refusal_format(&why, diag->message, sizeof diag->message);
    }
    return st;
}

tma_status tma_model_load_tile_range(const tma_tile_plan *p, const int32_t origin[5], uint32_t first, uint32_t n,
                                     void *smem, size_t smem_bytes, uint32_t dst_offset) {
    if (p == NULL || origin == NULL || smem == NULL)
        return TMA_ERR_NULL_ARG;
    if (!tma_tile_range_valid_(p, first, n))
        return tma_rule_status(TMA_RULE_TILE_RANGE);

    /* Every copy's rules before any byte is written: a refused range leaves smem as it was. Sub-box first + j is one
     * copy of the one-box model, whose rules it meets here: its descriptor and coordinates, its shared address (the
     * offset has the real address's low bits), its place in the buffer. */
    for (uint32_t j = 0; j < n; j++) {
        int32_t off[5], c[5];
        tma_tile_plan_box(p, first + j, off);
        for (int d = 0; d < 5; d++) {
            const int64_t x = (int64_t)origin[d] + off[d];
            if (x < INT32_MIN || x > INT32_MAX)
                return TMA_ERR_ARG; /* the instruction's coordinates are 32-bit */
            c[d] = (int32_t)x;
        }
        const uint64_t dst = (uint64_t)dst_offset + (uint64_t)j * p->box_stride;
        tma_rule_sink s = tma_rule_sink_make(NULL, 0);
        if (tma_rules_tiled_copy_(&p->box_desc, c, (uint32_t)dst, 0, &s) != TMA_OK) /* the low bits decide */
            return s.first;
        if (!tma_model_fits_(dst, p->box_smem_bytes, smem_bytes))
            return tma_rule_status(TMA_RULE_MODEL_SMEM_BOUNDS);
    }
    for (uint32_t j = 0; j < n; j++) {
        int32_t c[5];
        tma_tile_plan_coords(p, first + j, origin, c);
        const tma_status st = tma_model_load_tiled(&p->box_desc, c, smem, smem_bytes, dst_offset + j * p->box_stride);
        if (st != TMA_OK)
            return st; /* not reached: the same rules passed above */
    }
    return TMA_OK;
}

tma_status tma_model_load_tile(const tma_tile_plan *p, const int32_t origin[5], void *smem, size_t smem_bytes,
                               uint32_t dst_offset) {
    if (p == NULL)
        return TMA_ERR_NULL_ARG;
    return tma_model_load_tile_range(p, origin, 0, p->count, smem, smem_bytes, dst_offset);
}
