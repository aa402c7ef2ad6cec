/* libtma: the hardware rules of TMA copies, for host C and CUDA device code - the public part.
 *
 * WHAT IS PUBLIC (the API, kept as the rest of libtma's; types.h's status values are append-only):
 *   - The limits the rules quote (TMA_MAX_BOX_DIM, TMA_SMEM_ALIGN, TMA_MAX_SMEM_PER_BLOCK, ...), as data: a kernel
 *     sizes its boxes and its shared memory by them instead of by literals.
 *   - The geometry a kernel lays out boxes and clusters by: tma_box_dim0_unit, tma_box_dim_max (the box caps),
 *     tma_cluster_mask_all, tma_multicast_rx_bytes; the swizzle's (span, period, phase, line) is in swizzle.h.
 *   - Violations (tma_violation): what the device-side checks report (tma_map_check and tma_builder_check in
 *     tensormap.cuh, tma_print_violation in device.cuh), with its status (tma_violation_status) and its message
 *     (tma_violation_format), worded as the host's tma_diag words it.
 *   - The reduce forms (TMA_REDUCE_FORMS, tma_reduce_form): which (type, reduction) pairs the copy engine has.
 *   - Map edits (tma_map_field, tma_map_edit, tma_edit, tma_edit_is_valid, tma_desc_apply_edit): the data
 *     tensormap.cuh's builder takes, and its mirror on the descriptor (host or device).
 *
 * WHAT IS NOT: tma/detail/rules.h, included below - the rule table (TMA_RULE_TABLE and its identifiers), the
 * predicates (tma_rules_*), the derived quantities (tma_rule_*), the formatter's steps. It is installed, because
 * the definitions here and in the device API need it, but it is not API: it changes in any release. Host code checks
 * through tma.h (tma_check_*, a tma_diag); device code through the device API and the functions above.
 *
 * Where each value comes from: "doc" = the comment above cuTensorMapEncodeTiled in cuda.h (CUDA 13.0);
 * "measured" = docs/HARDWARE.md (H200); "libtma" = stricter than the driver, with the reason. */
#ifndef TMA_RULES_H
#define TMA_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "tma/hd.h"
#include "tma/swizzle.h"
#include "tma/tensor.h"
#include "tma/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Limits
 * ------------------------------------------------------------------------------------------- */
#define TMA_MAX_RANK 5                        /**< doc: rank 1..5 */
#define TMA_MAX_BOX_DIM 256u                  /**< doc: box dimensions 1..256 (and tma_box_dim_max) */
#define TMA_MAX_ELEMENT_STRIDE 8u             /**< doc: element strides 1..8 */
#define TMA_MAX_GLOBAL_DIM (1ull << 32)       /**< doc: global dimensions 1..2^32, inclusive */
#define TMA_GLOBAL_STRIDE_LIMIT (1ull << 40)  /**< doc: global strides below 2^40 bytes */
#define TMA_GLOBAL_ALIGN 16u                  /**< doc: global address and strides, multiples of 16 bytes */
#define TMA_GLOBAL_ALIGN_INTERLEAVE_32B 32u   /**< doc: ... of 32 with TMA_INTERLEAVE_32B */
#define TMA_BOX_INNER_ALIGN 16u               /**< doc: box_dim[0] * element size, a multiple of 16 bytes */
#define TMA_SMEM_ALIGN 128u                   /**< measured: a copy's shared address, any swizzle, NONE too */
#define TMA_COORD0_ALIGN_BYTES 16u            /**< measured: coord[0] * element size, a multiple of 16 */
#define TMA_STORE_CHUNK_BYTES 16u             /**< measured: a store writes whole 16-byte chunks of dim 0 */
#define TMA_MAP_ALIGN 64u                     /**< doc: the CUtensorMap object's alignment */
/** The most dynamic shared memory one Hopper block can have (227 KiB of the SM's 228): a box larger than
 *  this can never be loaded (libtma: the driver does not check it), and no kernel may ask for more. */
#define TMA_MAX_SMEM_PER_BLOCK (227u * 1024u)
#define TMA_MAX_BOX_SMEM_BYTES TMA_MAX_SMEM_PER_BLOCK
/** Measured (H200, driver 580.159.04): cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col refuse a box of more than
 *  228 KiB counted their own way. For a tiled map that is element size x prod ceil(box_dim[i] / element_stride[i])
 *  over every dimension, with or without interleave: {256, 228, 4} u8 encodes, {256, 229, 4} does not, under each of
 *  NONE, 16B and 32B; element strides of 2 make {256, 229, 4} encode again. */
#define TMA_DRIVER_MAX_BOX_BYTES 233472u
/** measured: the bits an f32 (f32_ftz, tf32, tf32_ftz), f16 or bf16 reduce-store writes for every NaN result (a
 *  NaN operand, inf + -inf), whatever the operands' payloads and signs; an f64 add writes TMA_REDUCE_NAN_F64 for
 *  inf + -inf only and passes NaN operands through (docs/HARDWARE.md "Reduce-stores"). */
#define TMA_REDUCE_NAN_F32 0x7FFFFFFFull
#define TMA_REDUCE_NAN_F16 0x7FFFull
#define TMA_REDUCE_NAN_BF16 0x7FFFull
#define TMA_REDUCE_NAN_F64 0xFFF8000000000000ull
/** PTX ISA and measured: a 1-D bulk copy's size, global and shared addresses, multiples of 16 bytes */
#define TMA_BULK_ALIGN 16u
#define TMA_MAX_CLUSTER_BLOCKS 16u /**< a cta_mask has 16 bits; portable clusters hold up to 8 blocks */
#define TMA_IM2COL_MIN_RANK 3u           /**< doc: im2col maps have rank 3, 4 or 5 */
#define TMA_IM2COL_MAX_CHANNELS 256u     /**< doc: channelsPerPixel <= 256 */
#define TMA_IM2COL_MAX_PIXELS 1024u      /**< doc: pixelsPerColumn <= 1024 */
#define TMA_IM2COL_DRIVER_MAX_BYTES TMA_DRIVER_MAX_BOX_BYTES /**< measured: the driver's limit on cpp * elem * ppc */

/* ---------------------------------------------------------------------------------------------
 * Geometry: the box caps and the cluster's mask, named once. A kernel sizes its boxes, its multicasts and its
 * expect-tx counts with these, never with a bare 256, 16 / elem or 0x3. (The swizzle's span, period, phase and
 * line are in swizzle.h.)
 * ------------------------------------------------------------------------------------------- */

/** The narrowest box_dim[0] of elem_bytes-byte elements, and the step every box_dim[0] takes: TMA_BOX_INNER_ALIGN
 *  bytes of elements (doc: box_dim[0] * elem a multiple of 16; measured: the driver also refuses it with
 *  TMA_INTERLEAVE_16B). 16 / elem: 16 for u8, 8 for bf16, 4 for f32, 2 for f64; 0 for elem_bytes 0. */
TMA_HD uint32_t tma_box_dim0_unit(uint32_t elem_bytes) {
    return elem_bytes == 0u ? 0u : elem_bytes >= TMA_BOX_INNER_ALIGN ? 1u : TMA_BOX_INNER_ALIGN / elem_bytes;
}

/** The largest box_dim[dim] the rules allow for elem_bytes-byte elements under `swizzle` (no interleave):
 *  TMA_MAX_BOX_DIM (doc: 1..256), and in dimension 0 with a swizzle at most the swizzle span of elements (doc:
 *  box_dim[0] * elem <= the span, tma_swizzle_span): 64 bf16 or 32 f32 with TMA_SWIZZLE_128B. box_dim[0] must also
 *  be a multiple of tma_box_dim0_unit. 0 for elem_bytes 0. */
TMA_HD uint32_t tma_box_dim_max(uint32_t elem_bytes, tma_swizzle swizzle, uint32_t dim) {
    const uint32_t span = tma_swizzle_span(swizzle);
    if (elem_bytes == 0u)
        return 0u;
    if (dim == 0u && span != 0u && span / elem_bytes < TMA_MAX_BOX_DIM)
        return span / elem_bytes;
    return TMA_MAX_BOX_DIM;
}

/** The cta_mask of a multicast to every block of a cluster of `blocks` (1..TMA_MAX_CLUSTER_BLOCKS): bits
 *  0..blocks-1 (0x3 for a pair). Measured (docs/HARDWARE.md "Reduce-stores and 1-D bulk copies"): a bit past the
 *  cluster's blocks fails the launch ("unspecified launch failure"), so a mask is built from the cluster's size, never
 *  written out; tma_check_multicast / checked mode refuse one that names a block the cluster lacks. 0 for 0 blocks. */
TMA_HD uint16_t tma_cluster_mask_all(uint32_t blocks) {
    return blocks >= TMA_MAX_CLUSTER_BLOCKS ? (uint16_t)0xFFFFu : (uint16_t)((1u << blocks) - 1u);
}

/** The bytes a block must expect when the blocks of its cluster multicast: `bytes_each` from every issuer
 *  whose mask (masks[0..issuers)) has this block's bit (rank = %cluster_ctarank). A receiver that arms its
 *  barrier for anything else waits forever (too much) or lets its phase complete early (too little). */
TMA_HD uint32_t tma_multicast_rx_bytes(const uint16_t *masks, uint32_t issuers, uint32_t rank, uint32_t bytes_each) {
    uint32_t total = 0;
    for (uint32_t i = 0; i < issuers; i++)
        if (rank < TMA_MAX_CLUSTER_BLOCKS && (masks[i] >> rank & 1u))
            total += bytes_each;
    return total;
}

/* ---------------------------------------------------------------------------------------------
 * Violations: a broken rule and the values its message quotes. The device-side checks report one; its status and
 * its message are the ones the host's check of the same descriptor or copy puts in a tma_diag.
 * ------------------------------------------------------------------------------------------- */
#define TMA_RULE_MAX_ARGS 10 /**< values a message can quote: {0}..{9} */

/** One value of a violation. */
typedef struct tma_rule_arg {
    uint64_t v;      /**< the number (or a packed list) */
    const char *s;   /**< the string, for a string value (static storage: it is read when the message is formatted) */
    uint32_t kind;   /**< how the message prints it (tma/detail/rules.h) */
} tma_rule_arg;

/** A broken rule and the values its message quotes. Read it through tma_violation_status and tma_violation_format:
 *  `rule` identifies a row of libtma's rule table, whose numbering is not stable (compare statuses, not rules). */
typedef struct tma_violation {
    uint32_t rule;                          /**< the rule broken (tma/detail/rules.h: not API) */
    tma_rule_arg arg[TMA_RULE_MAX_ARGS];    /**< {0}..{9} of the rule's message */
} tma_violation;

/* ---------------------------------------------------------------------------------------------
 * Reduce-stores: which element types each reduction takes, in each of the three forms.
 * X(TYPE, OP, BULK, TILED, CLUSTER):
 *   BULK     the type suffix of the 1-D reduce into global memory (cp.reduce.async.bulk.global.shared::cta ...
 *            .OP.BULK); "" where that instruction does not exist (ptxas refuses it);
 *   TILED    1 where a tiled reduce-store through a map of TYPE completes. Measured on an H200, all 13 types x 8
 *            reductions (tests/reduce_probe.cu): every pair with TILED = 1 completes, every other pair (u8 and u16
 *            maps: all; i32: inc, dec; u64: inc, dec; i64: add, inc, dec, and, or, xor; f32: all but add - rule 12
 *            of TMA-FACTS; f64: all but add) raises "illegal instruction" (docs/HARDWARE.md "Reduce-stores");
 *   CLUSTER  the type suffix of the 1-D reduce into a cluster peer's shared memory
 *            (cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.OP.CLUSTER); "" where
 *            ptxas (CUDA 13.0, sm_90a) refuses it: u32 has all eight, s32 all but inc/dec, u64 add only.
 * The 1-D forms of i64 add and of the bitwise operations of signed types are the unsigned/bit instructions: the same
 * bits. Types absent from the table have no reduction at all.
 * ------------------------------------------------------------------------------------------- */
#define TMA_REDUCE_FORMS(X)                                                                                     \
    X(U32, ADD, "u32", 1, "u32") X(I32, ADD, "s32", 1, "s32") X(U64, ADD, "u64", 1, "u64")                     \
    X(I64, ADD, "u64", 0, "u64") X(F32, ADD, "f32", 1, "") X(F64, ADD, "f64", 1, "")                           \
    X(F16, ADD, "noftz.f16", 1, "") X(BF16, ADD, "noftz.bf16", 1, "")                                          \
    X(F32_FTZ, ADD, "", 1, "") X(TF32, ADD, "", 1, "") X(TF32_FTZ, ADD, "", 1, "")                             \
    X(U32, MIN, "u32", 1, "u32") X(I32, MIN, "s32", 1, "s32") X(U64, MIN, "u64", 1, "")                        \
    X(I64, MIN, "s64", 1, "") X(F16, MIN, "f16", 1, "") X(BF16, MIN, "bf16", 1, "")                            \
    X(U32, MAX, "u32", 1, "u32") X(I32, MAX, "s32", 1, "s32") X(U64, MAX, "u64", 1, "")                        \
    X(I64, MAX, "s64", 1, "") X(F16, MAX, "f16", 1, "") X(BF16, MAX, "bf16", 1, "")                            \
    X(U32, INC, "u32", 1, "u32") X(U32, DEC, "u32", 1, "u32")                                                  \
    X(U32, AND, "b32", 1, "b32") X(I32, AND, "b32", 1, "b32") X(U64, AND, "b64", 1, "") X(I64, AND, "b64", 0, "") \
    X(U32, OR, "b32", 1, "b32") X(I32, OR, "b32", 1, "b32") X(U64, OR, "b64", 1, "") X(I64, OR, "b64", 0, "")  \
    X(U32, XOR, "b32", 1, "b32") X(I32, XOR, "b32", 1, "b32") X(U64, XOR, "b64", 1, "") X(I64, XOR, "b64", 0, "")

/** The three forms of a reduce-store. */
typedef enum tma_reduce_form {
    TMA_REDUCE_FORM_BULK = 0,    /**< 1-D, shared -> global (cp.reduce.async.bulk.global) */
    TMA_REDUCE_FORM_TILED = 1,   /**< through a tensor map (cp.reduce.async.bulk.tensor) */
    TMA_REDUCE_FORM_CLUSTER = 2  /**< 1-D, into a cluster peer's shared memory (cp.reduce.async.bulk.shared::cluster) */
} tma_reduce_form;

/* ---------------------------------------------------------------------------------------------
 * Maps changed on the device (tensormap.replace, sm_90a): an edit is one field of a tiled map, given
 * as data, so the same edit can change a map on the device (tensormap.cuh) and its descriptor on the
 * host or the device (tma_desc_apply_edit). The descriptor is the truth the rules check: a map is built
 * by applying edits to a map and to the descriptor it stands for, in step.
 * Only tiled maps can be edited; the L2 promotion has no replace instruction (it stays the template's, or
 * TMA_L2_NONE for a map built from zeros).
 * ------------------------------------------------------------------------------------------- */

/** The fields tensormap.replace can set. */
typedef enum tma_map_field {
    TMA_FIELD_GLOBAL_ADDRESS = 0, /**< value: the address */
    TMA_FIELD_RANK,               /**< value: the rank, 1..5 */
    TMA_FIELD_GLOBAL_DIM,         /**< dim: 0..4; value: elements */
    TMA_FIELD_GLOBAL_STRIDE,      /**< dim: 1..4 (the stride of dimension dim, global_stride[dim - 1]); value: bytes */
    TMA_FIELD_BOX_DIM,            /**< dim: 0..4; value: elements */
    TMA_FIELD_ELEMENT_STRIDE,     /**< dim: 0..4; value: 1..8 */
    TMA_FIELD_DTYPE,              /**< value: a tma_dtype */
    TMA_FIELD_INTERLEAVE,         /**< value: a tma_interleave */
    TMA_FIELD_SWIZZLE,            /**< value: a tma_swizzle (Hopper's four) */
    TMA_FIELD_OOB_FILL,           /**< value: a tma_oob_fill */
    TMA_FIELD_COUNT_
} tma_map_field;

/** One field of a map, set to a value. */
typedef struct tma_map_edit {
    uint32_t field;  /**< a tma_map_field */
    uint32_t dim;    /**< the dimension, for the per-dimension fields */
    uint64_t value;  /**< the new value, in the descriptor's own units (see tma_map_field) */
} tma_map_edit;

/** The edit that sets `field` (of dimension `dim`, for the per-dimension fields) to `value`. */
TMA_HD tma_map_edit tma_edit(tma_map_field field, uint32_t dim, uint64_t value) {
    tma_map_edit e;
    e.field = (uint32_t)field;
    e.dim = dim;
    e.value = value;
    return e;
}

/** Whether an edit names a field and a dimension that exist (what it sets is for the rules to judge). */
TMA_HD int tma_edit_is_valid(tma_map_edit e) {
    switch ((tma_map_field)e.field) {
    case TMA_FIELD_GLOBAL_DIM:
    case TMA_FIELD_BOX_DIM:
    case TMA_FIELD_ELEMENT_STRIDE: return e.dim < (uint32_t)TMA_MAX_RANK;
    case TMA_FIELD_GLOBAL_STRIDE: return e.dim >= 1u && e.dim < (uint32_t)TMA_MAX_RANK;
    case TMA_FIELD_GLOBAL_ADDRESS:
    case TMA_FIELD_RANK:
    case TMA_FIELD_DTYPE:
    case TMA_FIELD_INTERLEAVE:
    case TMA_FIELD_SWIZZLE:
    case TMA_FIELD_OOB_FILL: return 1;
    default: return 0;
    }
}

#ifdef __cplusplus
}
#endif

/* The machinery (not API): the rule table, the predicates, the formatter. The definitions below need it. */
#include "tma/detail/rules.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The status of a violation: the one tma_check_tiled (or the check of the same copy) returns for the same mistake. */
TMA_HD tma_status tma_violation_status(const tma_violation *v) { return tma_rule_status((tma_rule)v->rule); }

/** A violation's message into out[0..cap): the field, the value, the limit and a fix, as the host words it in a
 *  tma_diag (always terminated when cap > 0, truncated if it must be; TMA_DIAG_MESSAGE_BYTES always suffices).
 *  @return the length of the whole message */
TMA_HD size_t tma_violation_format(const tma_violation *v, char *out, size_t cap) {
    return tma_rule_format(v, out, cap);
}

/** The host (and device) mirror of an edit: the descriptor after the same field change, as the device's map
 *  edit makes it (tma_map_edit_in_step; an edit no instruction can make - leaving a TF32 type - also resets the L2
 *  promotion to TMA_L2_NONE, as the map encoded again from zeros has it). An edited template is a map being built,
 *  a real one: the edit drops TMA_DESC_TEMPLATE, so the rules refuse a NULL address no edit replaced. An edit that
 *  is not valid (tma_edit_is_valid) changes nothing. */
TMA_HD void tma_desc_apply_edit(tma_tiled_desc *d, tma_map_edit e) {
    if (!tma_edit_is_valid(e))
        return;
    d->flags &= ~TMA_DESC_TEMPLATE;
    if (tma_rule_edit_needs_reencode(d, e))
        d->l2_promotion = TMA_L2_NONE;
    switch ((tma_map_field)e.field) {
    case TMA_FIELD_GLOBAL_ADDRESS: d->global_address = (void *)(uintptr_t)e.value; break;
    case TMA_FIELD_RANK: d->rank = (uint32_t)e.value; break;
    case TMA_FIELD_GLOBAL_DIM: d->global_dim[e.dim] = e.value; break;
    case TMA_FIELD_GLOBAL_STRIDE: d->global_stride[e.dim - 1u] = e.value; break;
    case TMA_FIELD_BOX_DIM: d->box_dim[e.dim] = (uint32_t)e.value; break;
    case TMA_FIELD_ELEMENT_STRIDE: d->element_stride[e.dim] = (uint32_t)e.value; break;
    case TMA_FIELD_DTYPE: d->dtype = (tma_dtype)e.value; break;
    case TMA_FIELD_INTERLEAVE: d->interleave = (tma_interleave)e.value; break;
    case TMA_FIELD_SWIZZLE: d->swizzle = (tma_swizzle)e.value; break;
    case TMA_FIELD_OOB_FILL: d->oob_fill = (tma_oob_fill)e.value; break;
    default: break;
    }
}

#ifdef __cplusplus
}
#endif

#endif /* TMA_RULES_H */
