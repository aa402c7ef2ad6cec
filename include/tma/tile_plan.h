/* libtma: tile plans - a logical tile larger than one TMA box, loaded as a regular grid of sub-boxes.
 *
 * WHY. A box holds at most TMA_MAX_BOX_DIM elements per dimension and, with a swizzle, at most the swizzle span
 * in dimension 0 (rules.h). So a 512 x 512 bf16 tile with TMA_SWIZZLE_128B takes 16 copies of 64 x 256, and each
 * needs its coordinates, its shared-memory destination and its bytes in the mbarrier's expect-tx. A plan derives
 * all three from the descriptor, once, on the host or on the device.
 *
 * HOW.
 *     tma_tiled_desc d = {...};                  // as usual, but box_dim = the whole TILE (any size)
 *     tma_tile_plan plan;
 *     tma_diag diag;
 *     if (tma_tile_plan_make(&d, NULL, &plan, &diag) != TMA_OK)  // host; tma_tile_plan_compute on either side
 *         fprintf(stderr, "%s\n", diag.message);
 *     tma_tensor_make(&t, &plan.box_desc, &diag);   // encode the SUB-BOX descriptor, not d
 *     // kernel (tile_plan.cuh): tma_tile_load<2>(tile, &t, &plan, &bar, origin): one expect-tx, plan.count copies;
 *     // a tile larger than shared memory streams through a window: tma_tile_load_range(..., first, n)
 *
 * THE SUB-BOXES. Each tile dimension i is cut into grid[i] = tile_dim[i] / box_dim[i] equal pieces: box_dim[i] is
 * the largest divisor of tile_dim[i] within the hardware's limits (tma_box_dim_max, rules.h: TMA_MAX_BOX_DIM, and in
 * dimension 0 at most the swizzle span, in steps of tma_box_dim0_unit), and within max_box[i] if the caller gives
 * one. If the sub-box would occupy more shared memory than a block can have, the outermost dimensions
 * take smaller divisors until it fits. Sub-box i has the index digits k[d] (sub-box k[d] along dimension d) with
 * dimension 1 fastest, then 2 .. rank-1, and dimension 0 SLOWEST:
 *     i = k[1] + grid[1] * (k[2] + grid[2] * (... + grid[rank-1] * k[0]))
 * Its coordinates are origin[d] + k[d] * box_dim[d]; its image lands at tile + i * box_stride, where box_stride is
 * the box's shared-memory bytes rounded up to TMA_SMEM_ALIGN (so every destination stays 128-byte aligned, the
 * hardware's rule, given a 128-byte aligned tile).
 *
 * THE LAYOUT THAT RESULTS. Dimension 0 slowest makes each panel of box_dim[0] columns contiguous: for a 2-D tile,
 * sub-boxes k[0] = p stack their rows one after the other. When box_stride equals the box's bytes (a swizzled box
 * of 8n rows at pitch 128, a NONE box of 128-byte multiples), the panel is byte for byte the image ONE box of
 * tile_dim[1] rows would have at that address: the swizzle acts on the shared address (swizzle.h), not on a box's
 * own offsets, so splitting the rows changes nothing. A 128B-swizzled bf16 tile becomes 64-column K-major panels,
 * rows at a 128-byte pitch, 8-row atoms 1024 bytes apart: the layout wgmma's 128B K-major operands read, when the
 * tile starts at phase 0 of the swizzle (a multiple of TMA_SWIZZLE_PERIOD_128B, swizzle.h).
 *
 * NOT DONE: interleaved layouts and element strides other than 1 are refused (TMA_ERR_UNSUPPORTED); stores of a
 * planned tile (tma_store per sub-box works; there is no helper or model of the whole yet).
 *
 * Host and device: every TMA_HD function here is plain integer C (hd.h), also compiled by nvcc for the device;
 * tma_tile_plan_make and the model, at the end, are the host library's. No CUDA header. */
#ifndef TMA_TILE_PLAN_H
#define TMA_TILE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "tma/hd.h"
#include "tma/rules.h"
#include "tma/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most sub-boxes a plan may have. libtma's choice: with it, every byte count of a plan fits 32 bits
 *  (4096 x TMA_MAX_BOX_SMEM_BYTES < 2^32), and a tile that needs more is nearly always one whose dimensions have
 *  no large divisor (a prime 257 gives 257 boxes of 1), which the refusal names. */
#define TMA_TILE_PLAN_MAX_BOXES 4096u

/** A tile cut into sub-boxes. Plain data, read-only (tma_tile_plan_compute fills it); small enough to pass to a
 *  kernel by value (`const __grid_constant__ tma_tile_plan`). Entries past the rank are 1. */
typedef struct tma_tile_plan {
    tma_tiled_desc box_desc;  /**< the tile's descriptor with box_dim = the sub-box: the one to encode */
    uint32_t rank;            /**< the descriptor's rank */
    uint32_t tile_dim[5];     /**< the logical tile (the box_dim the caller asked for), elements */
    uint32_t box_dim[5];      /**< one sub-box, elements */
    uint32_t grid[5];         /**< sub-boxes along each dimension: tile_dim / box_dim */
    uint32_t count;           /**< sub-boxes in all: the product of grid, 1..TMA_TILE_PLAN_MAX_BOXES */
    uint32_t box_tx_bytes;    /**< bytes one sub-box copy delivers (tma_rule_box_tx_bytes) */
    uint32_t box_smem_bytes;  /**< bytes one sub-box image occupies, swizzle padding included */
    uint32_t box_stride;      /**< bytes from one sub-box image to the next: box_smem_bytes rounded up to 128 */
    uint32_t tx_bytes;        /**< count * box_tx_bytes: the ONE expect-tx of the whole tile on one barrier */
    uint32_t smem_bytes;      /**< count * box_stride: shared memory the whole tile occupies */
} tma_tile_plan;

/* ---------------------------------------------------------------------------------------------
 * Refusals: what cannot be planned or issued. Each is a row of libtma's one rule table (the TILE_ rows of
 * TMA_RULE_TABLE, tma/detail/rules.h), with its status and a message that names the field, the value, the limit
 * and a fix, formatted by the same formatter as every descriptor rule. The limits in the messages are rules.h's
 * values, passed as arguments.
 * ------------------------------------------------------------------------------------------- */

/** Why a tile was not planned, or a range not issued. */
typedef struct tma_tile_refusal {
    tma_violation why;    /**< the refusal: a tile-plan rule and the values its message quotes */
    tma_violation cause;  /**< with has_cause: the descriptor rule broken (by the tile's own descriptor, or by the one
                               with the sub-box as box_dim), whose status the refusal reports and whose message
                               follows its own */
    uint32_t has_cause;   /**< 1 when cause holds a rule */
} tma_tile_refusal;

/** The status of a refusal: its rule's, or, for a broken descriptor rule, that rule's (TMA_ERR_RANK, ...). */
TMA_HD tma_status tma_tile_refusal_status(const tma_tile_refusal *r) {
    return tma_violation_status(r->has_cause ? &r->cause : &r->why);
}

/** A refusal's message into out[0..cap) (terminated when cap > 0, truncated if it must be), formatted as the
 *  rules' messages are (tma_violation_format): the refusal's, then its cause's. @return the length of the whole
 *  message */
TMA_HD size_t tma_tile_refusal_format(const tma_tile_refusal *r, char *out, size_t cap) {
    return tma_rule_format_text(tma_rule_text((tma_rule)r->why.rule), r->why.arg, r->has_cause ? &r->cause : 0, out,
                                cap);
}

#ifdef __cplusplus
}
#endif

/* The planner's helpers (not API). */
#include "tma/detail/tile_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Plan the tile `tile->box_dim` (any size) of the tensor `tile` describes as a grid of sub-boxes (see the top
 *  of this file). max_box: optional per-dimension upper bounds on the sub-box (0 or NULL: the hardware's), e.g.
 *  to keep windows small. On refusal *plan is all zero (count 0: nothing to issue) and *why (optional) says why.
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_UNSUPPORTED (interleave, element strides), TMA_ERR_BOX_DIM (a zero
 *          tile dimension), TMA_ERR_BOX_INNER_BYTES, TMA_ERR_ARG (too many sub-boxes, max_box[0] too small), or
 *          the status of a descriptor rule the sub-box descriptor breaks (tma_check_tiled's) */
TMA_HD tma_status tma_tile_plan_compute(const tma_tiled_desc *tile, const uint32_t *max_box, tma_tile_plan *plan,
                                        tma_tile_refusal *why) {
    tma_tile_refusal local;
    tma_tile_refusal *w = why ? why : &local;
    tma_tile_refusal_clear_(w);
    if (plan != 0) {
        uint8_t *bytes = (uint8_t *)plan; /* all zero, so a refused plan issues nothing */
        for (size_t b = 0; b < sizeof *plan; b++)
            bytes[b] = 0u;
    }
    if (tile == 0) {
        TMA_TILE_REFUSE_(w, NULL_TILE, tma_arg_u(0));
        return tma_tile_refusal_status(w);
    }
    if (plan == 0) {
        TMA_TILE_REFUSE_(w, NULL_PLAN, tma_arg_u(0));
        return tma_tile_refusal_status(w);
    }
    const uint32_t es = tma_rule_dtype_bytes(tile->dtype), rank = tile->rank;
    if (es == 0u || rank < 1u || rank > (uint32_t)TMA_MAX_RANK) { /* the planner reads both: the rules say what */
        const tma_rule_arg none[TMA_RULE_MAX_ARGS] = {tma_arg_u(0)};
        tma_tile_refuse_cause_(w, TMA_RULE_TILE_DESC, none, tile); /* the dtype or rank rule: always one */
        return tma_tile_refusal_status(w);
    }
    if (tile->interleave == TMA_INTERLEAVE_16B || tile->interleave == TMA_INTERLEAVE_32B) {
        TMA_TILE_REFUSE_(w, INTERLEAVE, tma_arg_s(tma_rule_interleave_name(tile->interleave)));
        return tma_tile_refusal_status(w);
    }
    for (uint32_t i = 0; i < rank; i++) {
        if (tile->box_dim[i] == 0u) {
            TMA_TILE_REFUSE_(w, DIM_ZERO, tma_arg_u(i));
            return tma_tile_refusal_status(w);
        }
        if (tile->element_stride[i] > 1u) {
            TMA_TILE_REFUSE_(w, ELEMENT_STRIDE, tma_arg_u(i), tma_arg_u(tile->element_stride[i]));
            return tma_tile_refusal_status(w);
        }
    }
    const uint32_t unit0 = tma_box_dim0_unit(es); /* the narrowest legal dimension 0, in elements */
    const uint64_t inner = (uint64_t)tile->box_dim[0] * es;
    if (inner % TMA_BOX_INNER_ALIGN != 0u) {
        TMA_TILE_REFUSE_(w, INNER_BYTES, tma_arg_u(tile->box_dim[0]), tma_arg_s(tma_rule_dtype_name(tile->dtype)),
                         tma_arg_u(inner), tma_arg_u(TMA_BOX_INNER_ALIGN), tma_arg_u(unit0),
                         tma_arg_u(((uint64_t)tile->box_dim[0] + unit0 - 1u) / unit0 * unit0));
        return tma_tile_refusal_status(w);
    }
    if (max_box != 0 && max_box[0] != 0u && max_box[0] < unit0) {
        TMA_TILE_REFUSE_(w, MAX_BOX_INNER, tma_arg_u(max_box[0]), tma_arg_u(unit0),
                         tma_arg_s(tma_rule_dtype_name(tile->dtype)), tma_arg_u(TMA_BOX_INNER_ALIGN));
        return tma_tile_refusal_status(w);
    }

    /* Each dimension its largest divisor within the limits; dimension 0 in whole 16-byte units, so any width the
     * inner rule allows is tried (unit0 divides tile_dim[0] now, so one always exists). */
    tma_tiled_desc bd = *tile;
    uint32_t lim[5] = {0u, 0u, 0u, 0u, 0u};
    for (uint32_t i = 0; i < rank; i++) {
        lim[i] = tma_box_dim_max(es, tile->swizzle, i); /* the box rule's, and the swizzle span's in dimension 0 */
        if (max_box != 0 && max_box[i] != 0u && max_box[i] < lim[i])
            lim[i] = max_box[i];
        bd.box_dim[i] = tma_tile_divisor_(tile->box_dim[i], lim[i], i == 0u ? unit0 : 1u);
    }
    /* A sub-box that outgrows a block's shared memory (rank >= 3, or wide unswizzled f64 rows) takes smaller
     * divisors in its outermost dimensions first: dimension 0 and the inner rows stay whole. */
    for (uint32_t i = rank - 1u; i >= 1u && tma_rule_box_smem_bytes(&bd) > TMA_MAX_BOX_SMEM_BYTES; i--)
        while (bd.box_dim[i] > 1u && tma_rule_box_smem_bytes(&bd) > TMA_MAX_BOX_SMEM_BYTES)
            bd.box_dim[i] = tma_tile_divisor_(tile->box_dim[i], bd.box_dim[i] - 1u, 1u);

    uint64_t count = 1u;
    uint32_t worst = 0u;
    for (uint32_t i = 0; i < rank; i++) {
        const uint64_t g = tile->box_dim[i] / bd.box_dim[i];
        if (g > tile->box_dim[worst] / bd.box_dim[worst])
            worst = i;
        count = count > (uint64_t)TMA_TILE_PLAN_MAX_BOXES ? count : count * g; /* stops before it can overflow */
    }
    if (count > TMA_TILE_PLAN_MAX_BOXES) {
        uint64_t all = 1u; /* the true total, saturated, for the message */
        for (uint32_t i = 0; i < rank; i++)
            if (!tma_rule_muladd_u64(all, tile->box_dim[i] / bd.box_dim[i], 0u, &all)) {
                all = UINT64_MAX;
                break;
            }
        TMA_TILE_REFUSE_(w, TOO_MANY, tma_arg_u(worst), tma_arg_u(tile->box_dim[worst]),
                         tma_arg_u(tile->box_dim[worst] / bd.box_dim[worst]), tma_arg_u(bd.box_dim[worst]),
                         tma_arg_u(lim[worst]), tma_arg_u(all), tma_arg_u(TMA_TILE_PLAN_MAX_BOXES));
        return tma_tile_refusal_status(w);
    }

    {
        const tma_rule_arg sub[TMA_RULE_MAX_ARGS] = {tma_arg_box(bd.box_dim, rank)};
        if (tma_tile_refuse_cause_(w, TMA_RULE_TILE_BOX_DESC, sub, &bd))
            return tma_tile_refusal_status(w);
    }

    plan->box_desc = bd;
    plan->rank = rank;
    for (uint32_t i = 0; i < 5; i++) {
        plan->tile_dim[i] = i < rank ? tile->box_dim[i] : 1u;
        plan->box_dim[i] = i < rank ? bd.box_dim[i] : 1u;
        plan->grid[i] = plan->tile_dim[i] / plan->box_dim[i];
    }
    plan->count = (uint32_t)count;
    plan->box_tx_bytes = (uint32_t)tma_rule_box_tx_bytes(&bd);     /* <= the box's smem bytes: checked */
    plan->box_smem_bytes = (uint32_t)tma_rule_box_smem_bytes(&bd);
    plan->box_stride = (uint32_t)tma_rule_round_up(plan->box_smem_bytes, TMA_SMEM_ALIGN);
    plan->tx_bytes = plan->count * plan->box_tx_bytes;              /* < 4096 x 227 KiB < 2^32 */
    plan->smem_bytes = plan->count * plan->box_stride;
    return TMA_OK;
}

/** Sub-box i of plan p (i < p->count): its coordinate offsets from the tile's origin into offset[0..5) (0 past
 *  the rank). @return its shared-memory offset from the tile's base, i * box_stride */
TMA_HD uint32_t tma_tile_plan_box(const tma_tile_plan *p, uint32_t i, int32_t offset[5]) {
    const uint32_t smem = i * p->box_stride;
    for (uint32_t d = 0; d < 5; d++)
        offset[d] = 0;
    for (uint32_t d = 1; d < p->rank; d++) { /* dimension 1 fastest ... */
        offset[d] = (int32_t)((i % p->grid[d]) * p->box_dim[d]);
        i /= p->grid[d];
    }
    offset[0] = (int32_t)(i * p->box_dim[0]); /* ... dimension 0 slowest */
    return smem;
}

/** Sub-box i's coordinates for a tile at `origin`: origin + its offsets, into c[0..5) (origin's entries past the
 *  rank are copied). Offsets are below 2^20; origin near INT32_MAX wraps as the hardware's 32-bit operands do
 *  (the model refuses it). @return its shared-memory offset, as tma_tile_plan_box */
TMA_HD uint32_t tma_tile_plan_coords(const tma_tile_plan *p, uint32_t i, const int32_t origin[5], int32_t c[5]) {
    int32_t off[5];
    const uint32_t smem = tma_tile_plan_box(p, i, off);
    for (uint32_t d = 0; d < 5; d++)
        c[d] = (int32_t)(uint32_t)((uint32_t)origin[d] + (uint32_t)off[d]);
    return smem;
}

/** Bytes n sub-boxes deliver: what one barrier must expect for them (never type it). */
TMA_HD uint32_t tma_tile_plan_tx_bytes(const tma_tile_plan *p, uint32_t n) { return n * p->box_tx_bytes; }

/** The most sub-boxes one window of `smem_budget` bytes holds (capped at a block's shared memory and at the
 *  plan's count); 0 if not even one fits. A plan whose smem_bytes fit loads whole (window = count). */
TMA_HD uint32_t tma_tile_plan_window(const tma_tile_plan *p, uint32_t smem_budget) {
    if (p->box_stride == 0u)
        return 0u;
    const uint32_t budget = smem_budget < TMA_MAX_SMEM_PER_BLOCK ? smem_budget : TMA_MAX_SMEM_PER_BLOCK;
    const uint32_t n = budget / p->box_stride;
    return n < p->count ? n : p->count;
}

/** Whether sub-boxes [first, first + n) of p can be issued into one block's shared memory: n >= 1, inside the
 *  plan, and n * box_stride within a block's shared memory. (That bound also keeps the expect-tx, at most the
 *  shared bytes, far inside the mbarrier's transaction-count range.)
 *  @return TMA_OK, TMA_ERR_ARG (range), TMA_ERR_SMEM_BOUNDS (window too large) */
TMA_HD tma_status tma_tile_plan_check_range(const tma_tile_plan *p, uint32_t first, uint32_t n,
                                            tma_tile_refusal *why) {
    tma_tile_refusal local;
    tma_tile_refusal *w = why ? why : &local;
    tma_tile_refusal_clear_(w);
    if (p == 0) {
        TMA_TILE_REFUSE_(w, NULL_RANGE_PLAN, tma_arg_u(0));
        return tma_tile_refusal_status(w);
    }
    if (!tma_tile_range_valid_(p, first, n)) {
        TMA_TILE_REFUSE_(w, RANGE, tma_arg_u(first), tma_arg_u(n), tma_arg_u(p->count));
        return tma_tile_refusal_status(w);
    }
    const uint64_t bytes = (uint64_t)n * p->box_stride;
    if (bytes > TMA_MAX_SMEM_PER_BLOCK) {
        TMA_TILE_REFUSE_(w, WINDOW_SMEM, tma_arg_u(n), tma_arg_u(p->box_stride), tma_arg_u(bytes),
                         tma_arg_u(TMA_MAX_SMEM_PER_BLOCK), tma_arg_u(tma_tile_plan_window(p, TMA_MAX_SMEM_PER_BLOCK)));
        return tma_tile_refusal_status(w);
    }
    return TMA_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Host library (src/tile_plan.c).
 * ------------------------------------------------------------------------------------------- */

/** tma_tile_plan_compute, with the refusal formatted into a tma_diag (optional) like tma_check_tiled's.
 *  @return as tma_tile_plan_compute */
tma_status tma_tile_plan_make(const tma_tiled_desc *tile, const uint32_t max_box[5], tma_tile_plan *plan,
                              tma_diag *diag);

/** CPU model of loading sub-boxes [first, first + n) of plan p for the tile at `origin`: sub-box first + j lands
 *  at smem[dst_offset + j * box_stride], each exactly as tma_model_load_tiled writes it (smem stands for shared
 *  memory at a 1024-byte aligned address, so the swizzle phase is the hardware's). p->box_desc.global_address
 *  points to host memory laid out as the descriptor says (plan the host descriptor, or set it in a copy of the
 *  plan). The range may exceed a block's shared memory (the model of a whole 512 KiB tile, say). Everything is
 *  checked before the first byte is written.
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_ARG (range, or a coordinate past the int32 range),
 *          TMA_ERR_SMEM_BOUNDS, TMA_ERR_SMEM_ALIGN (dst_offset % 128), or what tma_model_load_tiled returns */
tma_status tma_model_load_tile_range(const tma_tile_plan *p, const int32_t origin[5], uint32_t first, uint32_t n,
                                     void *smem, size_t smem_bytes, uint32_t dst_offset);

/** The whole tile: tma_model_load_tile_range over [0, p->count). */
tma_status tma_model_load_tile(const tma_tile_plan *p, const int32_t origin[5], void *smem, size_t smem_bytes,
                               uint32_t dst_offset);

#ifdef __cplusplus
}
#endif

#endif /* TMA_TILE_PLAN_H */
