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
 * the largest divisor of tile_dim[i] within the hardware's limits (TMA_MAX_BOX_DIM; in dimension 0 also
 * box_dim[0] * elem a multiple of TMA_BOX_INNER_ALIGN and at most the swizzle span), and within max_box[i] if the
 * caller gives one. If the sub-box would occupy more shared memory than a block can have, the outermost dimensions
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
 * tile starts 1024-byte aligned (the swizzle's phase 0).
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
 * Refusals: what cannot be planned or issued, each with its status and a message that names the field, the
 * value, the limit and a fix ({n}: argument n, as in TMA_RULE_TABLE; {D}: the sub-box dimensions). The limits
 * in the messages are rules.h's values, passed as arguments.
 * ------------------------------------------------------------------------------------------- */
#define TMA_TILE_RULE_TABLE(X)                                                                                   \
    X(NULL_ARG, ERR_NULL_ARG, "{0} = NULL: pass {1}")                                                            \
    /* the tile's own descriptor breaks a rule the plan needs (dtype, rank); the rule's status and message */   \
    X(TILE_DESC, ERR_UNSUPPORTED, "tile plan: the tile's descriptor breaks a rule: ")                            \
    X(INTERLEAVE, ERR_UNSUPPORTED,                                                                               \
      "interleave = {0}: tile plans of interleaved layouts are not done (their copies are neither modelled nor " \
      "verified on hardware): use TMA_INTERLEAVE_NONE, or issue the boxes by hand")                               \
    X(TILE_DIM_ZERO, ERR_BOX_DIM,                                                                                \
      "tile box_dim[{0}] = 0: every dimension of the tile needs at least one element; use 1 for a dimension "   \
      "the tile does not extend in")                                                                             \
    X(ELEMENT_STRIDE, ERR_UNSUPPORTED,                                                                           \
      "element_stride[{0}] = {1}: tile plans of strided tiles are not done (each sub-box would have to start "   \
      "on the stride's grid and hold ceil(box / stride) elements): use element_stride[{0}] = 1 and step in the " \
      "kernel, or split a strided tile by hand")                                                                 \
    X(INNER_BYTES, ERR_BOX_INNER_BYTES,                                                                          \
      "tile box_dim[0] = {0} {1} elements = {2} bytes is not a multiple of {3} bytes, so no sub-box width "      \
      "divides it (a box's dimension 0 must be a multiple of {3} bytes): use a tile width that is a multiple "   \
      "of {4} elements (e.g. {5})")                                                                              \
    X(MAX_BOX_INNER, ERR_ARG,                                                                                    \
      "max_box[0] = {0} is below the narrowest sub-box, {1} {2} elements ({3} bytes): use max_box[0] >= {1}, "   \
      "or 0 for the hardware's limit")                                                                           \
    X(TOO_MANY, ERR_ARG,                                                                                         \
      "tile box_dim[{0}] = {1} splits into {2} sub-boxes of {3} (its largest divisor within the limit of {4}), " \
      "and the whole tile into {5} sub-boxes, more than the {6} a plan may have: give each tile dimension a "   \
      "large divisor <= {4} (a multiple of 64, say), or plan a smaller tile")                                    \
    /* the descriptor with the sub-box as box_dim breaks a rule of tma_check_tiled; the rule's message follows */ \
    X(BOX_DESC, ERR_UNSUPPORTED, "tile plan: the descriptor with box_dim = {D} (the sub-box) breaks a rule: ")   \
    X(RANGE, ERR_ARG,                                                                                            \
      "sub-boxes [{0}, {0} + {1}) of a plan of {2}: use first + n <= plan.count (and n >= 1)")                   \
    X(WINDOW_SMEM, ERR_SMEM_BOUNDS,                                                                              \
      "{0} sub-boxes of {1} bytes need {2} bytes of shared memory, more than the {3} a Hopper block can have: "  \
      "load the tile in windows of at most {4} sub-boxes (tma_tile_plan_window)")                                \
    X(RANK, ERR_RANK, "tile load of rank {0} through a plan of rank {1}: use tma_tile_load<{1}>")                \
    X(MAP_MISMATCH, ERR_ARG,                                                                                     \
      "the tensor's box (box_dim[{0}] = {1}, {2} bytes a copy) is not the plan's sub-box (box_dim[{0}] = {3}, " \
      "{4} bytes): encode plan.box_desc (tma_tensor_make(&t, &plan.box_desc, ...)), not the tile's descriptor")

typedef enum tma_tile_rule {
#define TMA_TILE_RULE_ENUM_(id, status, text) TMA_TILE_RULE_##id,
    TMA_TILE_RULE_TABLE(TMA_TILE_RULE_ENUM_)
#undef TMA_TILE_RULE_ENUM_
    TMA_TILE_RULE_COUNT_
} tma_tile_rule;

/** Why a tile was not planned, or a range not issued. */
typedef struct tma_tile_refusal {
    uint32_t rule;                        /**< a tma_tile_rule */
    tma_rule_arg arg[TMA_RULE_MAX_ARGS];  /**< {0}..{9} of the rule's message */
    tma_violation desc;                   /**< TILE_DESC, BOX_DESC: the descriptor rule broken (rules.h) */
    uint32_t rank;                        /**< BOX_DESC: the sub-box's rank ... */
    uint32_t box_dim[5];                  /**< ... and dimensions, for {D} */
} tma_tile_refusal;

TMA_HD const char *tma_tile_rule_text(tma_tile_rule r) {
    switch (r) {
#define TMA_TILE_RULE_TEXT_(id, status, text)                                                                    \
    case TMA_TILE_RULE_##id:                                                                                     \
        return text;
        TMA_TILE_RULE_TABLE(TMA_TILE_RULE_TEXT_)
#undef TMA_TILE_RULE_TEXT_
    default: return "unknown tile-plan rule";
    }
}

/** The status a rule of the table reports (TILE_DESC and BOX_DESC: see tma_tile_refusal_status). */
TMA_HD tma_status tma_tile_rule_status(tma_tile_rule r) {
    switch (r) {
#define TMA_TILE_RULE_STATUS_(id, status, text)                                                                  \
    case TMA_TILE_RULE_##id:                                                                                     \
        return TMA_##status;
        TMA_TILE_RULE_TABLE(TMA_TILE_RULE_STATUS_)
#undef TMA_TILE_RULE_STATUS_
    default: return TMA_ERR_UNSUPPORTED;
    }
}

/** The status of a refusal: its rule's, or, for a broken descriptor rule, that rule's (TMA_ERR_RANK, ...). */
TMA_HD tma_status tma_tile_refusal_status(const tma_tile_refusal *r) {
    if (r->rule == (uint32_t)TMA_TILE_RULE_TILE_DESC || r->rule == (uint32_t)TMA_TILE_RULE_BOX_DESC)
        return tma_rule_status((tma_rule)r->desc.rule);
    return tma_tile_rule_status((tma_tile_rule)r->rule);
}

/** A refusal's message into out[0..cap) (terminated when cap > 0, truncated if it must be), formatted as the
 *  rules' messages are (tma_rule_format, whose helpers it shares). @return the length of the whole message */
TMA_HD size_t tma_tile_refusal_format(const tma_tile_refusal *r, char *out, size_t cap) {
    size_t n = 0;
    for (const char *t = tma_tile_rule_text((tma_tile_rule)r->rule); *t; t++) {
        if (t[0] == '{' && t[1] == 'D' && t[2] == '}') {
            for (uint32_t i = 0; i < r->rank && i < (uint32_t)TMA_MAX_RANK; i++) {
                n = tma_fmt_str_(out, cap, n, i == 0 ? "{" : ", ");
                n = tma_fmt_uint_(out, cap, n, r->box_dim[i], 10u);
            }
            n = tma_fmt_char_(out, cap, n, '}');
            t += 2;
        } else if (t[0] == '{' && t[1] >= '0' && t[1] <= '9' && t[2] == '}') {
            n = tma_fmt_arg_(out, cap, n, &r->arg[t[1] - '0']);
            t += 2;
        } else {
            n = tma_fmt_char_(out, cap, n, *t);
        }
    }
    if (r->rule == (uint32_t)TMA_TILE_RULE_TILE_DESC || r->rule == (uint32_t)TMA_TILE_RULE_BOX_DESC) {
        char *rest = cap > n + 1 ? out + n : 0; /* the rule's message after the prefix */
        n += tma_rule_format(&r->desc, rest, rest ? cap - n : 0);
    }
    if (cap > 0)
        out[n < cap ? n : cap - 1] = '\0';
    return n;
}

TMA_HD void tma_tile_refuse_(tma_tile_refusal *w, tma_tile_rule rule, const tma_rule_arg *args) {
    w->rule = (uint32_t)rule;
    for (int i = 0; i < TMA_RULE_MAX_ARGS; i++)
        w->arg[i] = args[i];
}

/* Refuse with rule ID and the message values that follow; evaluates to the refusal's status. */
#define TMA_TILE_REFUSE_(W, ID, ...)                                                                             \
    do {                                                                                                         \
        const tma_rule_arg tma_targs_[TMA_RULE_MAX_ARGS] = {__VA_ARGS__};                                        \
        tma_tile_refuse_((W), TMA_TILE_RULE_##ID, tma_targs_);                                                   \
    } while (0)

TMA_HD void tma_tile_refusal_clear_(tma_tile_refusal *w) {
    w->rule = (uint32_t)TMA_TILE_RULE_COUNT_;
    for (int i = 0; i < TMA_RULE_MAX_ARGS; i++) {
        w->arg[i] = tma_arg_u(0);
        w->desc.arg[i] = tma_arg_u(0);
    }
    w->desc.rule = 0;
    w->rank = 0;
    for (int i = 0; i < 5; i++)
        w->box_dim[i] = 0;
}

/* The largest divisor of n that is at most lim and, when unit > 1, a multiple of unit (0 if none). At most
 * TMA_MAX_BOX_DIM trials: lim never exceeds it. */
TMA_HD uint32_t tma_tile_divisor_(uint32_t n, uint32_t lim, uint32_t unit) {
    for (uint32_t d = lim < n ? lim : n; d >= 1u; d--)
        if (n % d == 0u && d % unit == 0u)
            return d;
    return 0u;
}

/* The limit of sub-box dimension i: the box rule's, the swizzle span's in dimension 0, and max_box[i] (0: none). */
TMA_HD uint32_t tma_tile_box_limit_(const tma_tiled_desc *d, const uint32_t *max_box, uint32_t i) {
    uint32_t lim = TMA_MAX_BOX_DIM;
    const uint32_t span = tma_swizzle_span(d->swizzle), es = tma_rule_dtype_bytes(d->dtype);
    if (i == 0u && span != 0u && span / es < lim)
        lim = span / es;
    if (max_box != 0 && max_box[i] != 0u && max_box[i] < lim)
        lim = max_box[i];
    return lim;
}

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
        TMA_TILE_REFUSE_(w, NULL_ARG, tma_arg_s("tile"), tma_arg_s("the tile's descriptor (box_dim = the tile)"));
        return tma_tile_refusal_status(w);
    }
    if (plan == 0) {
        TMA_TILE_REFUSE_(w, NULL_ARG, tma_arg_s("plan"), tma_arg_s("the tma_tile_plan to fill"));
        return tma_tile_refusal_status(w);
    }
    const uint32_t es = tma_rule_dtype_bytes(tile->dtype), rank = tile->rank;
    if (es == 0u || rank < 1u || rank > (uint32_t)TMA_MAX_RANK) { /* the planner reads both: the rules say what */
        tma_rule_sink s = tma_rule_sink_make(&w->desc, 1);
        tma_rules_tiled(tile, &s);
        w->rule = (uint32_t)TMA_TILE_RULE_TILE_DESC;
        return tma_tile_refusal_status(w);
    }
    if (tile->interleave == TMA_INTERLEAVE_16B || tile->interleave == TMA_INTERLEAVE_32B) {
        TMA_TILE_REFUSE_(w, INTERLEAVE, tma_arg_s(tma_rule_interleave_name(tile->interleave)));
        return tma_tile_refusal_status(w);
    }
    for (uint32_t i = 0; i < rank; i++) {
        if (tile->box_dim[i] == 0u) {
            TMA_TILE_REFUSE_(w, TILE_DIM_ZERO, tma_arg_u(i));
            return tma_tile_refusal_status(w);
        }
        if (tile->element_stride[i] > 1u) {
            TMA_TILE_REFUSE_(w, ELEMENT_STRIDE, tma_arg_u(i), tma_arg_u(tile->element_stride[i]));
            return tma_tile_refusal_status(w);
        }
    }
    const uint32_t unit0 = TMA_BOX_INNER_ALIGN / es; /* the narrowest legal dimension 0, in elements */
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
        lim[i] = tma_tile_box_limit_(tile, max_box, i);
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
        tma_rule_sink s = tma_rule_sink_make(&w->desc, 1);
        if (tma_rules_tiled(&bd, &s) != TMA_OK) {
            w->rule = (uint32_t)TMA_TILE_RULE_BOX_DESC;
            w->rank = rank;
            for (uint32_t i = 0; i < rank; i++)
                w->box_dim[i] = bd.box_dim[i];
            return tma_tile_refusal_status(w);
        }
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
        TMA_TILE_REFUSE_(w, NULL_ARG, tma_arg_s("plan"), tma_arg_s("a plan from tma_tile_plan_compute"));
        return tma_tile_refusal_status(w);
    }
    if (n == 0u || first > p->count || n > p->count - first) {
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
