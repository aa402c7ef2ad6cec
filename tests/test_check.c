/* Tests for the descriptor checker (src/check.c): every rule, its edges, the messages, the
 * all-rules variant, the per-copy coordinate rules, the footprint helpers and the status tables.
 *
 * The rules come from the comment above cuTensorMapEncodeTiled in cuda.h and from
 * docs/HARDWARE.md; the expected numbers below are worked out by hand from those rules, not read
 * back from the library. No test dereferences a global address: the checker never does, so the
 * descriptors use fake, suitably aligned addresses such as 0x100000.
 *
 * Layout of this file:
 *   1. invalid descriptors, one table row per rule (ParameterizedTest check_rules/invalid)
 *   2. edges that must pass (ParameterizedTest check_rules/edge)
 *   3. the issue's example message
 *   4. tma_check_tiled_all
 *   5. tma_check_coords / tma_check_store_coords
 *   6. footprint helpers
 *   7. status, type and swizzle name tables
 *   8. a randomized property test against an independent oracle
 */
#define _POSIX_C_SOURCE 200809L

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <criterion/parameterized.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tma/tma.h"
#include "test_seed.h"

#define FAKE_ADDR ((uint64_t)0x100000) /* 1 MiB: aligned to everything the rules ask for */
#define TOP_ADDR ((uint64_t)0xFFFFFFFFFFFF0000ull)
#define P32 (UINT64_C(1) << 32)
#define P40 (UINT64_C(1) << 40)
#define SMEM_LIMIT (227u * 1024u) /* 232448 */

/* ---------------------------------------------------------------------------------------------
 * Table rows: a valid base descriptor and one field changed. Plain data only (no pointers),
 * because Criterion copies each parameter into the process that runs the test.
 * ------------------------------------------------------------------------------------------- */

enum base_kind {
    B_2D,         /* rank 2, dtype/swizzle from the row; gdim {256, 64}, dense rows, box at the span */
    B_1D,         /* u8, rank 1, gdim {256}, box {64} */
    B_RANK5,      /* f32, rank 5, gdim {64, 4, 4, 4, 4}, dense strides, box {32, 2, 2, 2, 2} */
    B_IL16,       /* f16, rank 3, INTERLEAVE_16B, gdim {8, 16, 16}, strides {16, 256}, box {8, 16, 16} */
    B_IL32,       /* u8, rank 3, INTERLEAVE_32B + SWIZZLE_32B, gdim {32, 8, 8}, strides {32, 256}, box {32, 8, 8} */
    B_HUGE,       /* f32, rank 3, gdim {16, 2^20, 2^32}, strides {64, 2^26}: a 2^58-byte tensor */
    B_SMEM,       /* f32, rank 3, SWIZZLE_128B, box {32, 227, 8}: exactly 227 KiB of shared memory */
    B_SMEM_PAD,   /* as B_SMEM with box_dim[0] = 8: 32-byte rows padded to 128, still exactly 227 KiB */
};

enum field_kind {
    F_NONE,      /* the base itself */
    F_DESC_NULL, /* pass NULL instead of the descriptor */
    F_DTYPE,
    F_RANK,
    F_ADDR,
    F_GDIM,
    F_GSTRIDE,
    F_BOX,
    F_ESTRIDE,
    F_INTERLEAVE,
    F_SWIZZLE,
    F_L2,
    F_OOB,
};

struct rule_row {
    char name[64];
    int base;      /* enum base_kind */
    int dtype;     /* B_2D only */
    int swizzle;   /* B_2D only */
    int field;     /* enum field_kind */
    unsigned idx;  /* dimension, for the array fields */
    uint64_t value; /* new value; a global address is stored as an integer and cast */
    int expect;    /* tma_status */
    unsigned flags; /* the base's tma_tiled_desc.flags (TMA_DESC_*) */
    char needles[3][112];
};

static tma_tiled_desc make_base(const struct rule_row *r) {
    tma_tiled_desc d;
    memset(&d, 0, sizeof d);
    d.global_address = (void *)(uintptr_t)FAKE_ADDR;
    d.flags = r->flags;
    switch ((enum base_kind)r->base) {
    case B_2D: {
        tma_dtype t = (tma_dtype)r->dtype;
        tma_swizzle sw = (tma_swizzle)r->swizzle;
        uint32_t e = (uint32_t)tma_dtype_size(t);
        uint32_t span = tma_swizzle_span(sw);
        d.dtype = t;
        d.rank = 2;
        d.swizzle = sw;
        d.global_dim[0] = 256;
        d.global_dim[1] = 64;
        d.global_stride[0] = 256u * e;
        d.box_dim[0] = (span ? span : 64u) / (e ? e : 1u);
        d.box_dim[1] = 8;
        break;
    }
    case B_1D:
        d.dtype = TMA_DTYPE_U8;
        d.rank = 1;
        d.global_dim[0] = 256;
        d.box_dim[0] = 64;
        break;
    case B_RANK5:
        d.dtype = TMA_DTYPE_F32;
        d.rank = 5;
        d.global_dim[0] = 64;
        for (int i = 1; i < 5; i++)
            d.global_dim[i] = 4;
        d.global_stride[0] = 256;
        d.global_stride[1] = 1024;
        d.global_stride[2] = 4096;
        d.global_stride[3] = 16384;
        d.box_dim[0] = 32;
        for (int i = 1; i < 5; i++)
            d.box_dim[i] = 2;
        break;
    case B_IL16:
        d.dtype = TMA_DTYPE_F16;
        d.rank = 3;
        d.interleave = TMA_INTERLEAVE_16B;
        d.global_dim[0] = 8;
        d.global_dim[1] = 16;
        d.global_dim[2] = 16;
        d.global_stride[0] = 16;
        d.global_stride[1] = 256;
        d.box_dim[0] = 8;
        d.box_dim[1] = 16;
        d.box_dim[2] = 16;
        break;
    case B_IL32:
        d.dtype = TMA_DTYPE_U8;
        d.rank = 3;
        d.interleave = TMA_INTERLEAVE_32B;
        d.swizzle = TMA_SWIZZLE_32B;
        d.global_dim[0] = 32;
        d.global_dim[1] = 8;
        d.global_dim[2] = 8;
        d.global_stride[0] = 32;
        d.global_stride[1] = 256;
        d.box_dim[0] = 32;
        d.box_dim[1] = 8;
        d.box_dim[2] = 8;
        break;
    case B_HUGE:
        d.dtype = TMA_DTYPE_F32;
        d.rank = 3;
        d.global_dim[0] = 16;
        d.global_dim[1] = UINT64_C(1) << 20;
        d.global_dim[2] = P32;
        d.global_stride[0] = 64;
        d.global_stride[1] = UINT64_C(1) << 26;
        d.box_dim[0] = 16;
        d.box_dim[1] = 8;
        d.box_dim[2] = 4;
        break;
    case B_SMEM:
    case B_SMEM_PAD:
        d.dtype = TMA_DTYPE_F32;
        d.rank = 3;
        d.swizzle = TMA_SWIZZLE_128B;
        d.global_dim[0] = 256;
        d.global_dim[1] = 256;
        d.global_dim[2] = 8;
        d.global_stride[0] = 1024;
        d.global_stride[1] = 262144;
        d.box_dim[0] = r->base == B_SMEM ? 32 : 8;
        d.box_dim[1] = 227;
        d.box_dim[2] = 8;
        break;
    }
    return d;
}

/* Returns the descriptor to check: &d, or NULL for F_DESC_NULL. */
static const tma_tiled_desc *apply_change(tma_tiled_desc *d, const struct rule_row *r) {
    switch ((enum field_kind)r->field) {
    case F_NONE: break;
    case F_DESC_NULL: return NULL;
    case F_DTYPE: d->dtype = (tma_dtype)(int)r->value; break;
    case F_RANK: d->rank = (uint32_t)r->value; break;
    case F_ADDR: d->global_address = (void *)(uintptr_t)r->value; break;
    case F_GDIM: d->global_dim[r->idx] = r->value; break;
    case F_GSTRIDE: d->global_stride[r->idx] = r->value; break;
    case F_BOX: d->box_dim[r->idx] = (uint32_t)r->value; break;
    case F_ESTRIDE: d->element_stride[r->idx] = (uint32_t)r->value; break;
    case F_INTERLEAVE: d->interleave = (tma_interleave)(int)r->value; break;
    case F_SWIZZLE: d->swizzle = (tma_swizzle)(int)r->value; break;
    case F_L2: d->l2_promotion = (tma_l2_promotion)(int)r->value; break;
    case F_OOB: d->oob_fill = (tma_oob_fill)(int)r->value; break;
    }
    return d;
}

/* Row builders. ROW: any base; R2D: the f32 2-D base (gdim {256, 64}, stride {1024}, box {16, 8}). */
#define ROW(nm, b, dt, sw, f, i, v, st, ...)                                                        \
    {                                                                                               \
        .name = nm, .base = b, .dtype = dt, .swizzle = sw, .field = f, .idx = i, .value = (uint64_t)(v), \
        .expect = st, .needles = {__VA_ARGS__}                                                      \
    }
#define R2D(nm, f, i, v, st, ...) ROW(nm, B_2D, TMA_DTYPE_F32, TMA_SWIZZLE_NONE, f, i, v, st, __VA_ARGS__)
#define RB(nm, b, f, i, v, st, ...) ROW(nm, b, 0, 0, f, i, v, st, __VA_ARGS__)
/* RF: an f32 base (B_2D or another) with flags fl (TMA_DESC_*). */
#define RF(nm, b, fl, f, i, v, st, ...)                                                             \
    {                                                                                               \
        .name = nm, .base = b, .dtype = TMA_DTYPE_F32, .swizzle = TMA_SWIZZLE_NONE, .field = f, .idx = i, \
        .value = (uint64_t)(v), .expect = st, .flags = fl, .needles = {__VA_ARGS__}                 \
    }
/* A box one 16-byte chunk wider than the swizzle span: box_dim[0] = n elements = bytes; limit = span/esize. */
#define SPAN(dt, tn, sw, swn, n, bytes, span, limit)                                                \
    ROW("span " swn " " tn, B_2D, dt, sw, F_BOX, 0, n, TMA_ERR_BOX_SWIZZLE_SPAN,                    \
        "box_dim[0] = " #n " " tn " elements = " #bytes " bytes exceeds the " #span "-byte span of " swn, \
        "use box_dim[0] <= " #limit)

static struct rule_row invalid_rows[] = {
    R2D("NULL descriptor", F_DESC_NULL, 0, 0, TMA_ERR_NULL_ARG, "descriptor = NULL", "tma_tiled_desc"),

    R2D("dtype 13 (16U4_ALIGN8B)", F_DTYPE, 0, 13, TMA_ERR_DTYPE, "dtype = 13", "packed sub-byte", "(0..12)"),
    R2D("dtype 14 (16U4_ALIGN16B)", F_DTYPE, 0, 14, TMA_ERR_DTYPE, "dtype = 14", "packed sub-byte", "(0..12)"),
    R2D("dtype 15 (16U6_ALIGN16B)", F_DTYPE, 0, 15, TMA_ERR_DTYPE, "dtype = 15", "packed sub-byte", "(0..12)"),
    R2D("dtype 16 (garbage)", F_DTYPE, 0, 16, TMA_ERR_DTYPE, "dtype = 16 is not a tensor-map element type",
        "(0..12)"),
    R2D("dtype -1 (garbage)", F_DTYPE, 0, -1, TMA_ERR_DTYPE, "dtype = -1 is not a tensor-map element type",
        "(0..12)"),

    R2D("rank 0", F_RANK, 0, 0, TMA_ERR_RANK, "rank = 0", "outside 1..5"),
    R2D("rank 6", F_RANK, 0, 6, TMA_ERR_RANK, "rank = 6", "outside 1..5"),

    R2D("interleave 3", F_INTERLEAVE, 0, 3, TMA_ERR_INTERLEAVE, "interleave = 3", "_32B (2)"),
    R2D("swizzle 7", F_SWIZZLE, 0, 7, TMA_ERR_SWIZZLE, "swizzle = 7", "_128B (3)"),
    R2D("swizzle 128B_ATOM_32B", F_SWIZZLE, 0, TMA_SWIZZLE_128B_ATOM_32B, TMA_ERR_SWIZZLE_UNSUPPORTED,
        "swizzle = TMA_SWIZZLE_128B_ATOM_32B is a compute capability 10.x mode", "use TMA_SWIZZLE_128B"),
    R2D("swizzle 128B_ATOM_32B_FLIP_8B", F_SWIZZLE, 0, TMA_SWIZZLE_128B_ATOM_32B_FLIP_8B, TMA_ERR_SWIZZLE_UNSUPPORTED,
        "swizzle = TMA_SWIZZLE_128B_ATOM_32B_FLIP_8B is a compute capability 10.x mode", "use TMA_SWIZZLE_128B"),
    R2D("swizzle 128B_ATOM_64B", F_SWIZZLE, 0, TMA_SWIZZLE_128B_ATOM_64B, TMA_ERR_SWIZZLE_UNSUPPORTED,
        "swizzle = TMA_SWIZZLE_128B_ATOM_64B is a compute capability 10.x mode", "use TMA_SWIZZLE_128B"),
    R2D("l2_promotion 4", F_L2, 0, 4, TMA_ERR_L2_PROMOTION, "l2_promotion = 4", "_256B (3)"),
    R2D("oob_fill 2", F_OOB, 0, 2, TMA_ERR_OOB_FILL, "oob_fill = 2", "TMA_OOB_NAN (1)"),

    ROW("NaN fill u8", B_2D, TMA_DTYPE_U8, TMA_SWIZZLE_NONE, F_OOB, 0, TMA_OOB_NAN, TMA_ERR_OOB_FILL_NAN_INTEGER,
        "oob_fill = TMA_OOB_NAN with dtype = u8", "use TMA_OOB_ZERO"),
    ROW("NaN fill i32", B_2D, TMA_DTYPE_I32, TMA_SWIZZLE_NONE, F_OOB, 0, TMA_OOB_NAN, TMA_ERR_OOB_FILL_NAN_INTEGER,
        "oob_fill = TMA_OOB_NAN with dtype = i32", "use TMA_OOB_ZERO"),
    ROW("NaN fill u64", B_2D, TMA_DTYPE_U64, TMA_SWIZZLE_128B, F_OOB, 0, TMA_OOB_NAN, TMA_ERR_OOB_FILL_NAN_INTEGER,
        "oob_fill = TMA_OOB_NAN with dtype = u64", "use TMA_OOB_ZERO"),

    R2D("interleave 16B at rank 2", F_INTERLEAVE, 0, TMA_INTERLEAVE_16B, TMA_ERR_INTERLEAVE_RANK,
        "rank = 2 with interleave = TMA_INTERLEAVE_16B", "rank >= 3"),
    RB("interleave 16B at rank 1", B_IL16, F_RANK, 0, 1, TMA_ERR_INTERLEAVE_RANK,
       "rank = 1 with interleave = TMA_INTERLEAVE_16B", "rank >= 3"),
    RB("interleave 32B at rank 2", B_IL32, F_RANK, 0, 2, TMA_ERR_INTERLEAVE_RANK,
       "rank = 2 with interleave = TMA_INTERLEAVE_32B", "rank >= 3"),


    R2D("global_address NULL", F_ADDR, 0, 0, TMA_ERR_GLOBAL_ADDRESS_NULL, "global_address = NULL",
        "only a template encoded on the host", "may leave it NULL (TMA_DESC_TEMPLATE)"),
    RF("global_address NULL in a store map", B_2D, TMA_DESC_STORE, F_ADDR, 0, 0, TMA_ERR_GLOBAL_ADDRESS_NULL,
       "global_address = NULL", "TMA_DESC_TEMPLATE"),
    R2D("global_address 8 mod 16", F_ADDR, 0, FAKE_ADDR + 8, TMA_ERR_GLOBAL_ADDRESS_ALIGN,
        "global_address = 0x100008", "not 16-byte aligned", "multiple of 16"),
    R2D("global_address 1 mod 16", F_ADDR, 0, FAKE_ADDR + 1, TMA_ERR_GLOBAL_ADDRESS_ALIGN,
        "global_address = 0x100001", "not 16-byte aligned"),
    RB("global_address 16 mod 32, interleave 32B", B_IL32, F_ADDR, 0, FAKE_ADDR + 16, TMA_ERR_GLOBAL_ADDRESS_ALIGN,
       "global_address = 0x100010", "not 32-byte aligned (TMA_INTERLEAVE_32B needs 32)", "multiple of 32"),

    RB("global_dim[0] = 0", B_RANK5, F_GDIM, 0, 0, TMA_ERR_GLOBAL_DIM, "global_dim[0] = 0", "outside 1..2^32",
       "4294967296"),
    RB("global_dim[0] = 2^32+1", B_RANK5, F_GDIM, 0, P32 + 1, TMA_ERR_GLOBAL_DIM, "global_dim[0] = 4294967297",
       "outside 1..2^32"),
    RB("global_dim[4] = 0", B_RANK5, F_GDIM, 4, 0, TMA_ERR_GLOBAL_DIM, "global_dim[4] = 0", "outside 1..2^32"),
    RB("global_dim[4] = 2^32+1", B_RANK5, F_GDIM, 4, P32 + 1, TMA_ERR_GLOBAL_DIM, "global_dim[4] = 4294967297",
       "outside 1..2^32"),

    R2D("global_stride[0] 8 mod 16", F_GSTRIDE, 0, 1032, TMA_ERR_GLOBAL_STRIDE_ALIGN,
        "global_stride[0] = 1032 bytes", "not a multiple of 16", "1040 bytes"),
    RB("global_stride[3] 8 mod 16", B_RANK5, F_GSTRIDE, 3, 16392, TMA_ERR_GLOBAL_STRIDE_ALIGN,
       "global_stride[3] = 16392 bytes", "not a multiple of 16", "16400 bytes"),
    RB("global_stride[0] 16 mod 32, interleave 32B", B_IL32, F_GSTRIDE, 0, 48, TMA_ERR_GLOBAL_STRIDE_ALIGN,
       "global_stride[0] = 48 bytes", "not a multiple of 32 (TMA_INTERLEAVE_32B needs 32)",
       "64 bytes"),
    RB("global_stride[1] 16 mod 32, interleave 32B", B_IL32, F_GSTRIDE, 1, 272, TMA_ERR_GLOBAL_STRIDE_ALIGN,
       "global_stride[1] = 272 bytes", "not a multiple of 32", "288 bytes"),

    R2D("global_stride[0] = 2^40", F_GSTRIDE, 0, P40, TMA_ERR_GLOBAL_STRIDE_RANGE,
        "global_stride[0] = 1099511627776 bytes", "limit of 2^40"),
    RB("global_stride[3] = 2^40", B_RANK5, F_GSTRIDE, 3, P40, TMA_ERR_GLOBAL_STRIDE_RANGE,
       "global_stride[3] = 1099511627776 bytes", "limit of 2^40"),

    /* The overlap rule guards stores: a map marked TMA_DESC_STORE (the same views pass as load maps: edge rows). */
    RF("store map: global_stride[0] overlaps a row", B_2D, TMA_DESC_STORE, F_GSTRIDE, 0, 1008,
       TMA_ERR_GLOBAL_STRIDE_OVERLAP, "global_stride[0] = 1008 bytes is smaller than the 1024 bytes",
       "a store through this map would race with itself", "e.g. global_stride[0] >= 1024"),
    RF("store map: global_stride[0] = 0", B_RANK5, TMA_DESC_STORE, F_GSTRIDE, 0, 0, TMA_ERR_GLOBAL_STRIDE_OVERLAP,
       "global_stride[0] = 0 bytes is smaller than the 256 bytes", "global_stride[0] >= 256"),
    RF("store map: global_stride[1] overlaps a plane", B_RANK5, TMA_DESC_STORE, F_GSTRIDE, 1, 768,
       TMA_ERR_GLOBAL_STRIDE_OVERLAP, "global_stride[1] = 768 bytes is smaller than the 1024 bytes of dimensions 0..1",
       "store into a destination whose strides do not overlap", "global_stride[1] >= 1024"),
    RF("store map with TMA_DESC_ALLOW_OVERLAP (no effect)", B_2D, TMA_DESC_STORE | TMA_DESC_ALLOW_OVERLAP,
       F_GSTRIDE, 0, 16, TMA_ERR_GLOBAL_STRIDE_OVERLAP, "race with itself"),
    /* A template lifts the NULL address and the store-side rules, nothing else. */
    RF("template: global_address 8 mod 16", B_2D, TMA_DESC_TEMPLATE, F_ADDR, 0, 8, TMA_ERR_GLOBAL_ADDRESS_ALIGN,
       "global_address = 0x8 is not 16-byte aligned"),
    RF("template: global_stride[0] 8 mod 16", B_RANK5, TMA_DESC_TEMPLATE, F_GSTRIDE, 0, 8,
       TMA_ERR_GLOBAL_STRIDE_ALIGN, "global_stride[0] = 8 bytes"),
    RF("template: global_dim[1] = 0", B_2D, TMA_DESC_TEMPLATE, F_GDIM, 1, 0, TMA_ERR_GLOBAL_DIM, "global_dim[1] = 0"),

    R2D("extent past 2^64 (address)", F_ADDR, 0, TOP_ADDR + 16, TMA_ERR_GLOBAL_EXTENT, "64-bit address space",
        "global_dim and global_stride"),
    RB("extent past 2^64 (stride)", B_HUGE, F_GSTRIDE, 1, UINT64_C(1) << 39, TMA_ERR_GLOBAL_EXTENT,
       "64-bit address space", "global_dim and global_stride"),

    R2D("box_dim[0] = 0", F_BOX, 0, 0, TMA_ERR_BOX_DIM, "box_dim[0] = 0", "outside 1..256"),
    R2D("box_dim[0] = 257", F_BOX, 0, 257, TMA_ERR_BOX_DIM, "box_dim[0] = 257", "outside 1..256"),
    R2D("box_dim[1] = 257", F_BOX, 1, 257, TMA_ERR_BOX_DIM, "box_dim[1] = 257", "outside 1..256"),
    RB("box_dim[4] = 0", B_RANK5, F_BOX, 4, 0, TMA_ERR_BOX_DIM, "box_dim[4] = 0", "outside 1..256"),

    R2D("box inner 120 bytes f32", F_BOX, 0, 30, TMA_ERR_BOX_INNER_BYTES,
        "box_dim[0] = 30 f32 elements = 120 bytes is not a multiple of 16 bytes", "multiple of 4 (e.g. 32)"),
    ROW("box inner 17 bytes u8", B_2D, TMA_DTYPE_U8, TMA_SWIZZLE_NONE, F_BOX, 0, 17, TMA_ERR_BOX_INNER_BYTES,
        "box_dim[0] = 17 u8 elements = 17 bytes", "multiple of 16 (e.g. 32)"),
    ROW("box inner 2 bytes bf16", B_2D, TMA_DTYPE_BF16, TMA_SWIZZLE_NONE, F_BOX, 0, 1, TMA_ERR_BOX_INNER_BYTES,
        "box_dim[0] = 1 bf16 elements = 2 bytes", "multiple of 8 (e.g. 8)"),
    ROW("box inner 24 bytes f64", B_2D, TMA_DTYPE_F64, TMA_SWIZZLE_NONE, F_BOX, 0, 3, TMA_ERR_BOX_INNER_BYTES,
        "box_dim[0] = 3 f64 elements = 24 bytes", "multiple of 2 (e.g. 4)"),

    SPAN(TMA_DTYPE_U8, "u8", TMA_SWIZZLE_32B, "TMA_SWIZZLE_32B", 48, 48, 32, 32),
    SPAN(TMA_DTYPE_BF16, "bf16", TMA_SWIZZLE_32B, "TMA_SWIZZLE_32B", 24, 48, 32, 16),
    SPAN(TMA_DTYPE_F32, "f32", TMA_SWIZZLE_32B, "TMA_SWIZZLE_32B", 12, 48, 32, 8),
    SPAN(TMA_DTYPE_F64, "f64", TMA_SWIZZLE_32B, "TMA_SWIZZLE_32B", 6, 48, 32, 4),
    SPAN(TMA_DTYPE_U8, "u8", TMA_SWIZZLE_64B, "TMA_SWIZZLE_64B", 80, 80, 64, 64),
    SPAN(TMA_DTYPE_F16, "f16", TMA_SWIZZLE_64B, "TMA_SWIZZLE_64B", 40, 80, 64, 32),
    SPAN(TMA_DTYPE_I32, "i32", TMA_SWIZZLE_64B, "TMA_SWIZZLE_64B", 20, 80, 64, 16),
    SPAN(TMA_DTYPE_I64, "i64", TMA_SWIZZLE_64B, "TMA_SWIZZLE_64B", 10, 80, 64, 8),
    SPAN(TMA_DTYPE_U8, "u8", TMA_SWIZZLE_128B, "TMA_SWIZZLE_128B", 144, 144, 128, 128),
    SPAN(TMA_DTYPE_BF16, "bf16", TMA_SWIZZLE_128B, "TMA_SWIZZLE_128B", 72, 144, 128, 64),
    SPAN(TMA_DTYPE_TF32, "tf32", TMA_SWIZZLE_128B, "TMA_SWIZZLE_128B", 36, 144, 128, 32),
    SPAN(TMA_DTYPE_F64, "f64", TMA_SWIZZLE_128B, "TMA_SWIZZLE_128B", 18, 144, 128, 16),

    RB("box 227 KiB + one row", B_SMEM, F_BOX, 1, 228, TMA_ERR_BOX_SMEM, "the box occupies 233472 bytes",
       "the 232448 bytes"),
    RB("box over 227 KiB through swizzle padding", B_SMEM_PAD, F_BOX, 2, 9, TMA_ERR_BOX_SMEM,
       "the box occupies 261504 bytes", "the 232448 bytes"),

    R2D("element_stride[1] = 9", F_ESTRIDE, 1, 9, TMA_ERR_ELEMENT_STRIDE, "element_stride[1] = 9", "outside 1..8"),
    R2D("element_stride[1] = 2^32-1", F_ESTRIDE, 1, UINT32_MAX, TMA_ERR_ELEMENT_STRIDE,
        "element_stride[1] = 4294967295", "outside 1..8"),
    R2D("element_stride[0] = 9", F_ESTRIDE, 0, 9, TMA_ERR_ELEMENT_STRIDE, "element_stride[0] = 9", "outside 1..8"),
    RB("element_stride[4] = 9", B_RANK5, F_ESTRIDE, 4, 9, TMA_ERR_ELEMENT_STRIDE, "element_stride[4] = 9",
       "outside 1..8"),
    RB("element_stride[0] = 9, interleave 16B", B_IL16, F_ESTRIDE, 0, 9, TMA_ERR_ELEMENT_STRIDE,
       "element_stride[0] = 9", "outside 1..8"),
    R2D("element_stride[0] = 2 without interleave", F_ESTRIDE, 0, 2, TMA_ERR_ELEMENT_STRIDE,
        "element_stride[0] = 2", "no effect without interleave", "set it to 1"),
};

#define N_INVALID (sizeof invalid_rows / sizeof invalid_rows[0])

ParameterizedTestParameters(check_rules, invalid) {
    return cr_make_param_array(struct rule_row, invalid_rows, N_INVALID);
}

ParameterizedTest(struct rule_row *r, check_rules, invalid) {
    tma_tiled_desc d = make_base(r);
    tma_diag diag;
    tma_status base_st = tma_check_tiled(&d, &diag);
    cr_assert_eq(base_st, TMA_OK, "[%s] the base descriptor must be valid, got %s: %s", r->name,
                 tma_status_name(base_st), diag.message);

    const tma_tiled_desc *p = apply_change(&d, r);
    memset(&diag, 0x7f, sizeof diag);
    tma_status st = tma_check_tiled(p, &diag);
    cr_expect_eq(st, (tma_status)r->expect, "[%s] status %s, expected %s (message: \"%s\")", r->name,
                 tma_status_name(st), tma_status_name((tma_status)r->expect), diag.message);
    cr_expect_eq(diag.status, st, "[%s] diag.status %s differs from the returned %s", r->name,
                 tma_status_name(diag.status), tma_status_name(st));
    cr_expect_eq(diag.message[sizeof diag.message - 1], '\0', "[%s] message not terminated", r->name);
    for (int i = 0; i < 3; i++) {
        if (r->needles[i][0] == '\0')
            continue;
        cr_expect(strstr(diag.message, r->needles[i]) != NULL, "[%s] message \"%s\" lacks \"%s\"", r->name,
                  diag.message, r->needles[i]);
    }

    /* Exactly one field is broken, so exactly one rule reports, and it is the same one. */
    tma_diag all[4];
    size_t count = 99;
    tma_status st_all = tma_check_tiled_all(p, all, 4, &count);
    cr_expect_eq(st_all, st, "[%s] tma_check_tiled_all returned %s, tma_check_tiled %s", r->name,
                 tma_status_name(st_all), tma_status_name(st));
    cr_expect_eq(count, 1, "[%s] expected exactly one broken rule, tma_check_tiled_all counted %zu", r->name, count);
    if (count >= 1) {
        cr_expect_eq(all[0].status, st, "[%s] first diag status %s", r->name, tma_status_name(all[0].status));
        cr_expect_str_eq(all[0].message, diag.message, "[%s] tma_check_tiled_all's first message differs", r->name);
    }
    for (size_t i = 1; i < count && i < 4; i++)
        cr_log_error("[%s] extra rule %zu: %s: %s", r->name, i, tma_status_name(all[i].status), all[i].message);

    /* The coordinate checks report the descriptor's own error first. */
    const int32_t zero[5] = {0, 0, 0, 0, 0};
    cr_expect_eq(tma_check_coords(p, zero, NULL), st, "[%s] tma_check_coords must return the descriptor's status",
                 r->name);
    cr_expect_eq(tma_check_store_coords(p, zero, NULL), st,
                 "[%s] tma_check_store_coords must return the descriptor's status", r->name);

    /* A NULL diag is fine. */
    cr_expect_eq(tma_check_tiled(p, NULL), st, "[%s] result changes with diag = NULL", r->name);
}

/* ---------------------------------------------------------------------------------------------
 * 2. Edges that must pass.
 * ------------------------------------------------------------------------------------------- */

#define OK2D(nm, f, i, v) R2D(nm, f, i, v, TMA_OK, "")
#define OKB(nm, b, f, i, v) RB(nm, b, f, i, v, TMA_OK, "")
#define OKSPAN(dt, tn, sw, swn) ROW("at the span: " swn " " tn, B_2D, dt, sw, F_NONE, 0, 0, TMA_OK, "")

static struct rule_row edge_rows[] = {
    OKB("rank 5", B_RANK5, F_NONE, 0, 0),
    OKB("rank 1", B_1D, F_NONE, 0, 0),
    OK2D("box_dim[1] = 256", F_BOX, 1, 256),
    OK2D("box_dim[1] = 1", F_BOX, 1, 1),
    OK2D("box_dim[0] = 4 f32 (16 bytes)", F_BOX, 0, 4),
    ROW("box_dim[0] = 256 u8", B_2D, TMA_DTYPE_U8, TMA_SWIZZLE_NONE, F_BOX, 0, 256, TMA_OK, ""),
    OKB("box_dim[0] = 256 rank 1", B_1D, F_BOX, 0, 256),
    OKB("box smem exactly 227 KiB", B_SMEM, F_NONE, 0, 0),
    OKB("box smem exactly 227 KiB with swizzle padding", B_SMEM_PAD, F_NONE, 0, 0),
    OKSPAN(TMA_DTYPE_U8, "u8", TMA_SWIZZLE_32B, "TMA_SWIZZLE_32B"),
    OKSPAN(TMA_DTYPE_F64, "f64", TMA_SWIZZLE_32B, "TMA_SWIZZLE_32B"),
    OKSPAN(TMA_DTYPE_U16, "u16", TMA_SWIZZLE_64B, "TMA_SWIZZLE_64B"),
    OKSPAN(TMA_DTYPE_F32, "f32", TMA_SWIZZLE_64B, "TMA_SWIZZLE_64B"),
    OKSPAN(TMA_DTYPE_U8, "u8", TMA_SWIZZLE_128B, "TMA_SWIZZLE_128B"),
    OKSPAN(TMA_DTYPE_BF16, "bf16", TMA_SWIZZLE_128B, "TMA_SWIZZLE_128B"),
    OKSPAN(TMA_DTYPE_F32, "f32", TMA_SWIZZLE_128B, "TMA_SWIZZLE_128B"),
    OKSPAN(TMA_DTYPE_I64, "i64", TMA_SWIZZLE_128B, "TMA_SWIZZLE_128B"),
    ROW("narrower than the span", B_2D, TMA_DTYPE_F32, TMA_SWIZZLE_128B, F_BOX, 0, 4, TMA_OK, ""),
    OK2D("element_stride[1] = 8", F_ESTRIDE, 1, 8),
    OK2D("element_stride[1] = 1", F_ESTRIDE, 1, 1),
    OK2D("element_stride[0] = 1 without interleave", F_ESTRIDE, 0, 1),
    OKB("element_stride[4] = 8", B_RANK5, F_ESTRIDE, 4, 8),
    OKB("element_stride[0] = 8 with interleave 16B", B_IL16, F_ESTRIDE, 0, 8),
    OKB("element_stride 0 (means 1)", B_RANK5, F_NONE, 0, 0),
    OKB("global_dim[0] = 2^32 (rank 1)", B_1D, F_GDIM, 0, P32),
    OK2D("global_dim[1] = 2^32", F_GDIM, 1, P32),
    OKB("global_dim[4] = 2^32", B_RANK5, F_GDIM, 4, P32),
    OKB("global_dim[2] = 2^32 in a 2^58-byte tensor", B_HUGE, F_NONE, 0, 0),
    OK2D("global_dim[0] = 1 (box larger than the tensor)", F_GDIM, 0, 1),
    OK2D("global_dim[1] = 1", F_GDIM, 1, 1),
    OK2D("global_stride[0] = 2^40 - 16", F_GSTRIDE, 0, P40 - 16),
    OKB("global_stride[3] = 2^40 - 16", B_RANK5, F_GSTRIDE, 3, P40 - 16),
    OKB("global_stride[0] = 32 with interleave 32B", B_IL32, F_NONE, 0, 0),
    /* Views in which two coordinates reach the same bytes are valid maps to load from (the driver encodes them). */
    OK2D("load map: global_stride[0] overlapping a row", F_GSTRIDE, 0, 16),
    OK2D("load map: global_stride[0] = 0 (a broadcast row)", F_GSTRIDE, 0, 0),
    OKB("load map: global_stride[1] overlapping a plane", B_RANK5, F_GSTRIDE, 1, 768),
    OKB("load map: every stride 0", B_RANK5, F_GSTRIDE, 0, 0),
    RF("load map: TMA_DESC_ALLOW_OVERLAP, accepted for compatibility", B_2D, TMA_DESC_ALLOW_OVERLAP, F_GSTRIDE, 0, 16,
       TMA_OK, ""),
    RF("store map whose strides nest", B_RANK5, TMA_DESC_STORE, F_NONE, 0, 0, TMA_OK, ""),
    RF("template: NULL address", B_2D, TMA_DESC_TEMPLATE, F_ADDR, 0, 0, TMA_OK, ""),
    RF("template: zero strides", B_RANK5, TMA_DESC_TEMPLATE, F_GSTRIDE, 0, 0, TMA_OK, ""),
    RF("store template: zero stride (store rules wait for the built map)", B_2D,
       TMA_DESC_TEMPLATE | TMA_DESC_STORE, F_GSTRIDE, 0, 0, TMA_OK, ""),
    OK2D("global_address 16-byte aligned only", F_ADDR, 0, FAKE_ADDR + 16),
    OK2D("global_address: last byte at 2^64 - 1", F_ADDR, 0, TOP_ADDR),
    OKB("interleave 16B with swizzle 128B", B_IL16, F_SWIZZLE, 0, TMA_SWIZZLE_128B),
    OK2D("l2_promotion 256B", F_L2, 0, TMA_L2_256B),
    ROW("NaN fill f16", B_2D, TMA_DTYPE_F16, TMA_SWIZZLE_NONE, F_OOB, 0, TMA_OOB_NAN, TMA_OK, ""),
    ROW("NaN fill bf16", B_2D, TMA_DTYPE_BF16, TMA_SWIZZLE_NONE, F_OOB, 0, TMA_OOB_NAN, TMA_OK, ""),
    ROW("NaN fill f32", B_2D, TMA_DTYPE_F32, TMA_SWIZZLE_NONE, F_OOB, 0, TMA_OOB_NAN, TMA_OK, ""),
    ROW("NaN fill f64", B_2D, TMA_DTYPE_F64, TMA_SWIZZLE_NONE, F_OOB, 0, TMA_OOB_NAN, TMA_OK, ""),
    ROW("NaN fill f32_ftz", B_2D, TMA_DTYPE_F32_FTZ, TMA_SWIZZLE_NONE, F_OOB, 0, TMA_OOB_NAN, TMA_OK, ""),
    ROW("NaN fill tf32", B_2D, TMA_DTYPE_TF32, TMA_SWIZZLE_NONE, F_OOB, 0, TMA_OOB_NAN, TMA_OK, ""),
    ROW("NaN fill tf32_ftz", B_2D, TMA_DTYPE_TF32_FTZ, TMA_SWIZZLE_NONE, F_OOB, 0, TMA_OOB_NAN, TMA_OK, ""),
};

#define N_EDGE (sizeof edge_rows / sizeof edge_rows[0])

ParameterizedTestParameters(check_rules, edge) {
    return cr_make_param_array(struct rule_row, edge_rows, N_EDGE);
}

ParameterizedTest(struct rule_row *r, check_rules, edge) {
    tma_tiled_desc d = make_base(r);
    const tma_tiled_desc *p = apply_change(&d, r);
    tma_diag diag;
    memset(&diag, 0x7f, sizeof diag);
    tma_status st = tma_check_tiled(p, &diag);
    cr_assert_eq(st, TMA_OK, "[%s] expected TMA_OK, got %s: %s", r->name, tma_status_name(st), diag.message);
    cr_expect_eq(diag.status, TMA_OK, "[%s] diag.status must be TMA_OK", r->name);
    cr_expect_str_empty(diag.message, "[%s] message must be empty, got \"%s\"", r->name, diag.message);
    size_t count = 99;
    cr_expect_eq(tma_check_tiled_all(p, NULL, 0, &count), TMA_OK, "[%s] tma_check_tiled_all", r->name);
    cr_expect_eq(count, 0, "[%s] tma_check_tiled_all counted %zu broken rules", r->name, count);

    size_t smem = tma_box_smem_bytes(p), tx = tma_box_tx_bytes(p);
    cr_expect_gt(tx, 0, "[%s] tx bytes of a valid descriptor", r->name);
    cr_expect_leq(tx, smem, "[%s] tx bytes %zu exceed smem bytes %zu", r->name, tx, smem);
    cr_expect_leq(smem, SMEM_LIMIT, "[%s] smem bytes %zu over the limit", r->name, smem);
    cr_expect_gt(tma_global_extent_bytes(p), 0, "[%s] extent of a valid descriptor", r->name);
}

/* When the extent that a stride steps over is itself past 2^64, the overlap message of a store map once quoted the
 * saturated 18446744073709551615 bytes and advised "global_stride[2] >= 0" (the round-up to 16 wrapped). */
Test(check_messages, overlap_past_2_64_gives_sane_advice) {
    tma_tiled_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = TMA_DTYPE_F32;
    d.rank = 4;
    d.global_address = (void *)(uintptr_t)FAKE_ADDR;
    d.global_dim[0] = 16;
    d.global_dim[1] = P32;
    d.global_dim[2] = P32;
    d.global_dim[3] = 2;
    d.global_stride[0] = 64;
    d.global_stride[1] = UINT64_C(1) << 38; /* covers dimension 1 exactly; dimension 2 then spans 2^70 bytes */
    d.global_stride[2] = UINT64_C(1) << 39;
    d.box_dim[0] = 16;
    d.box_dim[1] = d.box_dim[2] = d.box_dim[3] = 1;
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(&d, &diag), TMA_ERR_GLOBAL_EXTENT, "a load map spanning 2^70 bytes: %s",
                 diag.message);
    d.flags = TMA_DESC_STORE;
    cr_assert_eq(tma_check_tiled(&d, &diag), TMA_ERR_GLOBAL_STRIDE_OVERLAP, "%s", diag.message);
    cr_expect(strstr(diag.message, ">= 0,") == NULL, "advice \"%s\" asks for a stride >= 0", diag.message);
    cr_expect(strstr(diag.message, "18446744073709551615") == NULL, "message \"%s\" quotes a saturated extent",
              diag.message);
}

/* ---------------------------------------------------------------------------------------------
 * 3. The issue's example.
 * ------------------------------------------------------------------------------------------- */

Test(check_messages, issue_example_bf16_128b) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, (void *)(uintptr_t)FAKE_ADDR, 1024, 1024, 2048, 64, 128,
                                   TMA_SWIZZLE_128B);
    tma_diag diag;
    tma_status st = tma_check_tiled(&d, &diag);
    cr_assert_eq(st, TMA_ERR_BOX_SWIZZLE_SPAN, "issue example: got %s: %s", tma_status_name(st), diag.message);
    cr_expect(strstr(diag.message,
                     "box_dim[0] = 128 bf16 elements = 256 bytes exceeds the 128-byte span of TMA_SWIZZLE_128B") !=
                  NULL,
              "issue example: message \"%s\" does not explain the span", diag.message);
    cr_expect(strstr(diag.message, "use box_dim[0] <= 64") != NULL,
              "issue example: message \"%s\" does not give the fix", diag.message);

    d.box_dim[0] = 64; /* the suggested fix works */
    st = tma_check_tiled(&d, &diag);
    cr_expect_eq(st, TMA_OK, "issue example with the fix applied: %s: %s", tma_status_name(st), diag.message);
}

Test(check_messages, narrow_swizzle_suggests_wider_mode) {
    /* A row that fits in 128 bytes but not in the 32-byte span: the message offers the wider swizzle. */
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_F32, (void *)(uintptr_t)FAKE_ADDR, 64, 64, 256, 8, 16, TMA_SWIZZLE_32B);
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(&d, &diag), TMA_ERR_BOX_SWIZZLE_SPAN, "f32 x16 with SWIZZLE_32B: %s",
                 diag.message);
    cr_expect(strstr(diag.message, "a wider swizzle (TMA_SWIZZLE_128B)") != NULL,
              "64-byte row in a 32-byte span: \"%s\" should suggest TMA_SWIZZLE_128B", diag.message);
}

Test(check_messages, desc_2d_fills_the_fields) {
    void *base = (void *)(uintptr_t)FAKE_ADDR;
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_BF16, base, 300, 200, 512, 32, 64, TMA_SWIZZLE_128B);
    cr_expect_eq(d.dtype, TMA_DTYPE_BF16, "tma_desc_2d dtype");
    cr_expect_eq(d.rank, 2, "tma_desc_2d rank");
    cr_expect_eq(d.global_address, base, "tma_desc_2d address");
    cr_expect_eq(d.global_dim[0], 200, "tma_desc_2d: global_dim[0] is the column count");
    cr_expect_eq(d.global_dim[1], 300, "tma_desc_2d: global_dim[1] is the row count");
    cr_expect_eq(d.global_stride[0], 512, "tma_desc_2d row stride");
    cr_expect_eq(d.box_dim[0], 64, "tma_desc_2d: box_dim[0] is the box column count");
    cr_expect_eq(d.box_dim[1], 32, "tma_desc_2d: box_dim[1] is the box row count");
    cr_expect_eq(d.swizzle, TMA_SWIZZLE_128B, "tma_desc_2d swizzle");
    cr_expect_eq(d.interleave, TMA_INTERLEAVE_NONE, "tma_desc_2d interleave");
    cr_expect_eq(d.element_stride[0] | d.element_stride[1], 0, "tma_desc_2d element strides");
    cr_expect_eq(d.flags, 0, "tma_desc_2d flags");
    tma_diag diag;
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "tma_desc_2d result must be valid: %s", diag.message);
}

/* ---------------------------------------------------------------------------------------------
 * 4. tma_check_tiled_all
 * ------------------------------------------------------------------------------------------- */

/* u8 2-D with three independent faults, one in each rule group: NaN fill for an integer type
 * (kinds), a misaligned address (global), a zero box dimension (box). */
static tma_tiled_desc three_faults(void) {
    struct rule_row r;
    memset(&r, 0, sizeof r);
    r.base = B_2D;
    r.dtype = TMA_DTYPE_U8;
    r.swizzle = TMA_SWIZZLE_NONE;
    tma_tiled_desc d = make_base(&r);
    d.oob_fill = TMA_OOB_NAN;
    d.global_address = (void *)(uintptr_t)(FAKE_ADDR + 8);
    d.box_dim[1] = 0;
    return d;
}

static const tma_status three_statuses[3] = {TMA_ERR_OOB_FILL_NAN_INTEGER, TMA_ERR_GLOBAL_ADDRESS_ALIGN,
                                             TMA_ERR_BOX_DIM};
static const char *const three_needles[3] = {"oob_fill = TMA_OOB_NAN with dtype = u8", "global_address = 0x100008",
                                             "box_dim[1] = 0"};

Test(check_all, reports_every_rule_in_order) {
    tma_tiled_desc d = three_faults();
    tma_diag diags[8];
    memset(diags, 0x5a, sizeof diags);
    size_t count = 0;
    tma_status st = tma_check_tiled_all(&d, diags, 8, &count);
    cr_assert_eq(count, 3, "three independent faults: count %zu", count);
    cr_expect_eq(st, three_statuses[0], "return value is the first broken rule, got %s", tma_status_name(st));
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(diags[i].status, three_statuses[i], "diag %d: %s, expected %s", i,
                     tma_status_name(diags[i].status), tma_status_name(three_statuses[i]));
        cr_expect(strstr(diags[i].message, three_needles[i]) != NULL, "diag %d: \"%s\" lacks \"%s\"", i,
                  diags[i].message, three_needles[i]);
    }
    unsigned char untouched[sizeof diags[3]];
    memset(untouched, 0x5a, sizeof untouched);
    cr_expect(memcmp(&diags[3], untouched, sizeof untouched) == 0, "diags past the count must not be written");

    tma_diag first;
    cr_expect_eq(tma_check_tiled(&d, &first), three_statuses[0], "tma_check_tiled agrees on the first rule");
    cr_expect_str_eq(first.message, diags[0].message, "tma_check_tiled's message is the first of all");
}

Test(check_all, cap_smaller_than_count_still_counts_all) {
    tma_tiled_desc d = three_faults();
    tma_diag diags[3];
    memset(diags, 0x5a, sizeof diags);
    size_t count = 0;
    tma_status st = tma_check_tiled_all(&d, diags, 2, &count);
    cr_expect_eq(st, three_statuses[0], "cap 2: return value %s", tma_status_name(st));
    cr_expect_eq(count, 3, "cap 2: count must still be 3, got %zu", count);
    cr_expect_eq(diags[0].status, three_statuses[0], "cap 2: diag 0 %s", tma_status_name(diags[0].status));
    cr_expect_eq(diags[1].status, three_statuses[1], "cap 2: diag 1 %s", tma_status_name(diags[1].status));
    unsigned char untouched[sizeof diags[2]];
    memset(untouched, 0x5a, sizeof untouched);
    cr_expect(memcmp(&diags[2], untouched, sizeof untouched) == 0, "cap 2: diags[2] must not be written");

    count = 0;
    st = tma_check_tiled_all(&d, diags, 1, &count);
    cr_expect_eq(count, 3, "cap 1: count %zu", count);
    cr_expect_eq(st, three_statuses[0], "cap 1: return value %s", tma_status_name(st));
}

Test(check_all, null_diags) {
    tma_tiled_desc d = three_faults();
    size_t count = 0;
    tma_status st = tma_check_tiled_all(&d, NULL, 0, &count);
    cr_expect_eq(st, three_statuses[0], "diags NULL cap 0: return value %s", tma_status_name(st));
    cr_expect_eq(count, 3, "diags NULL cap 0: count %zu", count);

    count = 0;
    st = tma_check_tiled_all(&d, NULL, 16, &count); /* a cap with no array is ignored */
    cr_expect_eq(st, three_statuses[0], "diags NULL cap 16: return value %s", tma_status_name(st));
    cr_expect_eq(count, 3, "diags NULL cap 16: count %zu", count);

    st = tma_check_tiled_all(&d, NULL, 0, NULL);
    cr_expect_eq(st, three_statuses[0], "diags NULL, count NULL: return value %s", tma_status_name(st));

    tma_diag one;
    count = 0;
    cr_expect_eq(tma_check_tiled_all(NULL, &one, 1, &count), TMA_ERR_NULL_ARG, "NULL descriptor");
    cr_expect_eq(count, 1, "NULL descriptor counts as one rule, got %zu", count);
    cr_expect_eq(one.status, TMA_ERR_NULL_ARG, "NULL descriptor diag status");
}

Test(check_all, valid_descriptor_counts_zero) {
    tma_tiled_desc d = tma_desc_2d(TMA_DTYPE_F16, (void *)(uintptr_t)FAKE_ADDR, 128, 128, 256, 64, 64,
                                   TMA_SWIZZLE_128B);
    tma_diag diags[2];
    memset(diags, 0x5a, sizeof diags);
    size_t count = 99;
    cr_expect_eq(tma_check_tiled_all(&d, diags, 2, &count), TMA_OK, "valid descriptor");
    cr_expect_eq(count, 0, "valid descriptor: count %zu", count);
    unsigned char untouched[sizeof diags];
    memset(untouched, 0x5a, sizeof untouched);
    cr_expect(memcmp(diags, untouched, sizeof diags) == 0, "valid descriptor: no diag written");
}

Test(check_all, dependent_rules_are_skipped) {
    /* Rank 0 makes every dimension rule meaningless: the zero box is not reported; the misaligned address, which
     * reads no dimension, still is. */
    tma_tiled_desc d = three_faults();
    d.oob_fill = TMA_OOB_ZERO;
    d.rank = 0;
    size_t count = 0;
    tma_diag diags[4];
    cr_expect_eq(tma_check_tiled_all(&d, diags, 4, &count), TMA_ERR_RANK, "rank 0 first");
    cr_expect_eq(count, 2, "rank 0 hides the rules that read dimensions, not the address rule: count %zu", count);
    cr_expect_eq(diags[1].status, TMA_ERR_GLOBAL_ADDRESS_ALIGN, "the address rule: %s", diags[1].message);

    /* A misaligned stride skips the overlap rule that would read it (one report, not two). */
    tma_tiled_desc e = tma_desc_2d(TMA_DTYPE_F32, (void *)(uintptr_t)FAKE_ADDR, 8, 64, 8, 8, 16, TMA_SWIZZLE_NONE);
    count = 0;
    cr_expect_eq(tma_check_tiled_all(&e, diags, 4, &count), TMA_ERR_GLOBAL_STRIDE_ALIGN, "stride 8");
    cr_expect_eq(count, 1, "stride 8 is misaligned; the overlap rule is not evaluated, count %zu", count);
}

/* ---------------------------------------------------------------------------------------------
 * 5. Coordinates
 * ------------------------------------------------------------------------------------------- */

static tma_tiled_desc desc_2d_of(tma_dtype t) {
    struct rule_row r;
    memset(&r, 0, sizeof r);
    r.base = B_2D;
    r.dtype = t;
    r.swizzle = TMA_SWIZZLE_NONE;
    return make_base(&r);
}

static void expect_coords(const tma_tiled_desc *d, int32_t c0, int32_t c1, tma_status load, tma_status store,
                          const char *what) {
    const int32_t c[5] = {c0, c1, 0, 0, 0};
    tma_status got = tma_check_coords(d, c, NULL);
    cr_expect_eq(got, load, "%s: coord {%d, %d} load: %s, expected %s", what, c0, c1, tma_status_name(got),
                 tma_status_name(load));
    got = tma_check_store_coords(d, c, NULL);
    cr_expect_eq(got, store, "%s: coord {%d, %d} store: %s, expected %s", what, c0, c1, tma_status_name(got),
                 tma_status_name(store));
}

Test(check_coords, inner_alignment_per_element_size) {
    tma_tiled_desc u8 = desc_2d_of(TMA_DTYPE_U8), u16 = desc_2d_of(TMA_DTYPE_U16);
    tma_tiled_desc u32 = desc_2d_of(TMA_DTYPE_U32), f64 = desc_2d_of(TMA_DTYPE_F64);
    /* Measured: u8 at 114 faults, 112 works. */
    expect_coords(&u8, 114, 0, TMA_ERR_COORD_ALIGN, TMA_ERR_COORD_ALIGN, "u8 114");
    expect_coords(&u8, 112, 0, TMA_OK, TMA_OK, "u8 112");
    expect_coords(&u8, 1, 0, TMA_ERR_COORD_ALIGN, TMA_ERR_COORD_ALIGN, "u8 1");
    expect_coords(&u8, INT32_MAX - 15, 0, TMA_OK, TMA_OK, "u8 2^31 - 16");
    expect_coords(&u16, 4, 0, TMA_ERR_COORD_ALIGN, TMA_ERR_COORD_ALIGN, "u16 4");
    expect_coords(&u16, 8, 0, TMA_OK, TMA_OK, "u16 8");
    /* Measured: u32 at -3 faults; -4 is aligned (a load may start left of the tensor and fill). */
    expect_coords(&u32, -3, 0, TMA_ERR_COORD_ALIGN, TMA_ERR_COORD_ALIGN, "u32 -3");
    expect_coords(&u32, -4, 0, TMA_OK, TMA_ERR_COORD_NEGATIVE_STORE, "u32 -4");
    expect_coords(&u32, 6, 0, TMA_ERR_COORD_ALIGN, TMA_ERR_COORD_ALIGN, "u32 6");
    expect_coords(&u32, 8, 0, TMA_OK, TMA_OK, "u32 8");
    expect_coords(&f64, 1, 0, TMA_ERR_COORD_ALIGN, TMA_ERR_COORD_ALIGN, "f64 1");
    expect_coords(&f64, 2, 0, TMA_OK, TMA_OK, "f64 2");
    expect_coords(&f64, INT32_MIN, 0, TMA_OK, TMA_ERR_COORD_NEGATIVE_STORE, "f64 -2^31");
    /* Coordinates of dimensions >= 1 need no alignment. */
    expect_coords(&u8, 16, 3, TMA_OK, TMA_OK, "u8 {16, 3}");
    expect_coords(&u8, 16, 1000000, TMA_OK, TMA_OK, "u8 {16, 1e6} (past the tensor)");
}

Test(check_coords, negative_coordinates_refused_for_stores_only) {
    tma_tiled_desc f32 = desc_2d_of(TMA_DTYPE_F32);
    expect_coords(&f32, -4, 0, TMA_OK, TMA_ERR_COORD_NEGATIVE_STORE, "f32 {-4, 0}");
    expect_coords(&f32, 0, -1, TMA_OK, TMA_ERR_COORD_NEGATIVE_STORE, "f32 {0, -1}");
    expect_coords(&f32, -64, -64, TMA_OK, TMA_ERR_COORD_NEGATIVE_STORE, "f32 {-64, -64}");
    expect_coords(&f32, 0, 0, TMA_OK, TMA_OK, "f32 {0, 0}");

    /* rank 5: a negative coordinate in the last dimension still counts */
    struct rule_row r;
    memset(&r, 0, sizeof r);
    r.base = B_RANK5;
    tma_tiled_desc d5 = make_base(&r);
    const int32_t c[5] = {0, 0, 0, 0, -1};
    cr_expect_eq(tma_check_coords(&d5, c, NULL), TMA_OK, "rank 5 {0,0,0,0,-1} load");
    cr_expect_eq(tma_check_store_coords(&d5, c, NULL), TMA_ERR_COORD_NEGATIVE_STORE, "rank 5 {0,0,0,0,-1} store");
}

Test(check_coords, coordinates_past_the_rank_are_ignored) {
    struct rule_row r;
    memset(&r, 0, sizeof r);
    r.base = B_1D; /* u8, rank 1 */
    tma_tiled_desc d = make_base(&r);
    const int32_t c[5] = {32, -1, -7, 3, INT32_MIN};
    cr_expect_eq(tma_check_coords(&d, c, NULL), TMA_OK, "rank 1: coord[1..4] must be ignored by loads");
    cr_expect_eq(tma_check_store_coords(&d, c, NULL), TMA_OK, "rank 1: coord[1..4] must be ignored by stores");

    d = desc_2d_of(TMA_DTYPE_U32);
    const int32_t c2[5] = {4, 7, -1, -1, -1};
    cr_expect_eq(tma_check_store_coords(&d, c2, NULL), TMA_OK, "rank 2: coord[2..4] ignored by stores");
}

Test(check_coords, null_arguments) {
    tma_tiled_desc d = desc_2d_of(TMA_DTYPE_F32);
    const int32_t c[5] = {0};
    cr_expect_eq(tma_check_coords(NULL, c, NULL), TMA_ERR_NULL_ARG, "load, descriptor NULL");
    cr_expect_eq(tma_check_coords(&d, NULL, NULL), TMA_ERR_NULL_ARG, "load, coord NULL");
    cr_expect_eq(tma_check_coords(NULL, NULL, NULL), TMA_ERR_NULL_ARG, "load, both NULL");
    cr_expect_eq(tma_check_store_coords(NULL, c, NULL), TMA_ERR_NULL_ARG, "store, descriptor NULL");
    cr_expect_eq(tma_check_store_coords(&d, NULL, NULL), TMA_ERR_NULL_ARG, "store, coord NULL");
    cr_expect_eq(tma_check_store_coords(NULL, NULL, NULL), TMA_ERR_NULL_ARG, "store, both NULL");
}

Test(check_coords, invalid_descriptor_reports_its_own_error) {
    tma_tiled_desc d = desc_2d_of(TMA_DTYPE_U8);
    d.box_dim[0] = 0;
    const int32_t misaligned[5] = {3, -1, 0, 0, 0};
    cr_expect_eq(tma_check_coords(&d, misaligned, NULL), TMA_ERR_BOX_DIM, "descriptor error comes before coordinates");
    cr_expect_eq(tma_check_store_coords(&d, misaligned, NULL), TMA_ERR_BOX_DIM,
                 "descriptor error comes before coordinates (store)");
}

/* ---------------------------------------------------------------------------------------------
 * 6. Footprints
 * ------------------------------------------------------------------------------------------- */

struct footprint {
    size_t tx, pitch, rows, smem;
};

static void expect_footprint(const tma_tiled_desc *d, struct footprint want, const char *what) {
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(d, &diag), TMA_OK, "%s: descriptor must be valid: %s", what, diag.message);
    size_t tx = tma_box_tx_bytes(d), pitch = tma_box_row_pitch(d), rows = tma_box_rows(d),
           smem = tma_box_smem_bytes(d);
    cr_expect_eq(tx, want.tx, "%s: tma_box_tx_bytes %zu, expected %zu", what, tx, want.tx);
    cr_expect_eq(pitch, want.pitch, "%s: tma_box_row_pitch %zu, expected %zu", what, pitch, want.pitch);
    cr_expect_eq(rows, want.rows, "%s: tma_box_rows %zu, expected %zu", what, rows, want.rows);
    cr_expect_eq(smem, want.smem, "%s: tma_box_smem_bytes %zu, expected %zu", what, smem, want.smem);
}

static tma_tiled_desc fdesc(tma_dtype t, uint32_t rank, const uint32_t box[5], const uint32_t estride[5],
                            tma_swizzle sw) {
    tma_tiled_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.rank = rank;
    d.swizzle = sw;
    d.global_address = (void *)(uintptr_t)FAKE_ADDR;
    uint64_t stride = 4096;
    for (uint32_t i = 0; i < rank; i++) {
        d.global_dim[i] = i == 0 ? 512 : 16;
        d.box_dim[i] = box[i];
        d.element_stride[i] = estride ? estride[i] : 0;
        if (i + 1 < rank) {
            d.global_stride[i] = stride;
            stride *= 16;
        }
    }
    return d;
}

Test(footprint, swizzle_padding) {
    /* 8 f32 = 32 bytes per row, 128B swizzle: every row occupies the whole 128-byte span, but the
     * mbarrier only counts the 32 bytes that arrive. */
    const uint32_t box[5] = {8, 4};
    tma_tiled_desc d = fdesc(TMA_DTYPE_F32, 2, box, NULL, TMA_SWIZZLE_128B);
    expect_footprint(&d, (struct footprint){.tx = 128, .pitch = 128, .rows = 4, .smem = 512}, "f32 8x4 128B");
    d.swizzle = TMA_SWIZZLE_64B;
    expect_footprint(&d, (struct footprint){.tx = 128, .pitch = 64, .rows = 4, .smem = 256}, "f32 8x4 64B");
    d.swizzle = TMA_SWIZZLE_32B;
    expect_footprint(&d, (struct footprint){.tx = 128, .pitch = 32, .rows = 4, .smem = 128}, "f32 8x4 32B");
    d.swizzle = TMA_SWIZZLE_NONE;
    expect_footprint(&d, (struct footprint){.tx = 128, .pitch = 32, .rows = 4, .smem = 128}, "f32 8x4 NONE");

    const uint32_t box2[5] = {64, 32};
    tma_tiled_desc b = fdesc(TMA_DTYPE_BF16, 2, box2, NULL, TMA_SWIZZLE_128B);
    expect_footprint(&b, (struct footprint){.tx = 4096, .pitch = 128, .rows = 32, .smem = 4096}, "bf16 64x32 128B");

    const uint32_t box3[5] = {16, 8};
    tma_tiled_desc u = fdesc(TMA_DTYPE_U8, 2, box3, NULL, TMA_SWIZZLE_64B);
    expect_footprint(&u, (struct footprint){.tx = 128, .pitch = 64, .rows = 8, .smem = 512}, "u8 16x8 64B");
}

Test(footprint, dense_boxes) {
    const uint32_t box[5] = {32, 8};
    tma_tiled_desc d = fdesc(TMA_DTYPE_F32, 2, box, NULL, TMA_SWIZZLE_NONE);
    expect_footprint(&d, (struct footprint){.tx = 1024, .pitch = 128, .rows = 8, .smem = 1024}, "f32 32x8");

    const uint32_t box1[5] = {48};
    tma_tiled_desc r1 = fdesc(TMA_DTYPE_F64, 1, box1, NULL, TMA_SWIZZLE_NONE);
    expect_footprint(&r1, (struct footprint){.tx = 384, .pitch = 384, .rows = 1, .smem = 384}, "f64 48 rank 1");

    const uint32_t box5[5] = {16, 2, 3, 4, 5};
    tma_tiled_desc r5 = fdesc(TMA_DTYPE_U16, 5, box5, NULL, TMA_SWIZZLE_NONE);
    expect_footprint(&r5, (struct footprint){.tx = 32 * 120, .pitch = 32, .rows = 120, .smem = 32 * 120},
                     "u16 16x2x3x4x5");
}

Test(footprint, element_strides) {
    /* box 10 with element stride 3 loads ceil(10/3) = 4 rows */
    const uint32_t box[5] = {16, 10};
    const uint32_t es[5] = {1, 3};
    tma_tiled_desc d = fdesc(TMA_DTYPE_F32, 2, box, es, TMA_SWIZZLE_NONE);
    expect_footprint(&d, (struct footprint){.tx = 256, .pitch = 64, .rows = 4, .smem = 256}, "f32 16x10 stride 3");

    /* element_stride 0 means 1 */
    const uint32_t es0[5] = {0, 0};
    const uint32_t es1[5] = {1, 1};
    tma_tiled_desc z = fdesc(TMA_DTYPE_F32, 2, box, es0, TMA_SWIZZLE_NONE);
    tma_tiled_desc o = fdesc(TMA_DTYPE_F32, 2, box, es1, TMA_SWIZZLE_NONE);
    expect_footprint(&z, (struct footprint){.tx = 640, .pitch = 64, .rows = 10, .smem = 640}, "stride 0");
    expect_footprint(&o, (struct footprint){.tx = 640, .pitch = 64, .rows = 10, .smem = 640}, "stride 1");

    /* rank 5: ceil(10/3) * ceil(7/2) * ceil(5/8) * ceil(3/1) = 4 * 4 * 1 * 3 = 48 rows */
    const uint32_t box5[5] = {16, 10, 7, 5, 3};
    const uint32_t es5[5] = {0, 3, 2, 8, 1};
    tma_tiled_desc r5 = fdesc(TMA_DTYPE_U8, 5, box5, es5, TMA_SWIZZLE_NONE);
    expect_footprint(&r5, (struct footprint){.tx = 768, .pitch = 16, .rows = 48, .smem = 768}, "u8 rank 5 strided");

    /* strides with swizzle padding: 4 f32 (16 bytes) per row, 128B span, ceil(9/4) = 3 rows */
    const uint32_t boxs[5] = {4, 9};
    const uint32_t ess[5] = {0, 4};
    tma_tiled_desc s = fdesc(TMA_DTYPE_F32, 2, boxs, ess, TMA_SWIZZLE_128B);
    expect_footprint(&s, (struct footprint){.tx = 48, .pitch = 128, .rows = 3, .smem = 384}, "f32 4x9/4 128B");
}

Test(footprint, smem_limit_box) {
    struct rule_row r;
    memset(&r, 0, sizeof r);
    r.base = B_SMEM;
    tma_tiled_desc d = make_base(&r);
    expect_footprint(&d, (struct footprint){.tx = SMEM_LIMIT, .pitch = 128, .rows = 1816, .smem = SMEM_LIMIT},
                     "227 KiB box");
    r.base = B_SMEM_PAD;
    d = make_base(&r);
    expect_footprint(&d, (struct footprint){.tx = SMEM_LIMIT / 4, .pitch = 128, .rows = 1816, .smem = SMEM_LIMIT},
                     "227 KiB padded box");
}

static tma_tiled_desc extent_desc(tma_dtype t, uint32_t rank, const uint64_t gdim[5], const uint64_t gstride[4]) {
    tma_tiled_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = t;
    d.rank = rank;
    d.global_address = (void *)(uintptr_t)FAKE_ADDR;
    for (uint32_t i = 0; i < rank; i++) {
        d.global_dim[i] = gdim[i];
        d.box_dim[i] = i == 0 ? (uint32_t)(16 / tma_dtype_size(t)) : 1;
        if (i + 1 < rank)
            d.global_stride[i] = gstride[i];
    }
    return d;
}

static void expect_extent(const tma_tiled_desc *d, size_t want, const char *what) {
    tma_diag diag;
    cr_assert_eq(tma_check_tiled(d, &diag), TMA_OK, "%s: descriptor must be valid: %s", what, diag.message);
    size_t got = tma_global_extent_bytes(d);
    cr_expect_eq(got, want, "%s: tma_global_extent_bytes %zu, expected %zu", what, got, want);
}

Test(footprint, global_extent) {
    /* 5 f32 = 20 bytes per row, rounded up to 32 for the last row: 2 * 32 + 32 */
    const uint64_t g1[5] = {5, 3}, s1[4] = {32};
    tma_tiled_desc a = extent_desc(TMA_DTYPE_F32, 2, g1, s1);
    expect_extent(&a, 96, "f32 5x3 stride 32");

    const uint64_t g2[5] = {17};
    tma_tiled_desc b = extent_desc(TMA_DTYPE_U8, 1, g2, NULL);
    expect_extent(&b, 32, "u8 17");

    /* last row starts at 3 * 32 + 1 * 128 = 224; 3 f64 = 24 bytes -> 32 */
    const uint64_t g3[5] = {3, 4, 2}, s3[4] = {32, 128};
    tma_tiled_desc c = extent_desc(TMA_DTYPE_F64, 3, g3, s3);
    expect_extent(&c, 256, "f64 3x4x2");

    /* a row that is already a multiple of 16 is not padded */
    const uint64_t g4[5] = {4, 2}, s4[4] = {16};
    tma_tiled_desc e = extent_desc(TMA_DTYPE_F32, 2, g4, s4);
    expect_extent(&e, 32, "f32 4x2 stride 16");

    /* rows padded in the stride: only the last row's tail is rounded */
    const uint64_t g5[5] = {6, 10}, s5[4] = {64};
    tma_tiled_desc f = extent_desc(TMA_DTYPE_BF16, 2, g5, s5);
    expect_extent(&f, 9 * 64 + 16, "bf16 6x10 stride 64");

    const uint64_t g6[5] = {P32};
    tma_tiled_desc g = extent_desc(TMA_DTYPE_U8, 1, g6, NULL);
    expect_extent(&g, (size_t)P32, "u8 2^32");

    struct rule_row r;
    memset(&r, 0, sizeof r);
    r.base = B_HUGE;
    tma_tiled_desc h = make_base(&r);
    expect_extent(&h, (size_t)1 << 58, "2^58-byte tensor");
}

Test(footprint, zero_for_invalid_fields) {
    struct {
        const char *what;
        tma_tiled_desc d;
    } cases[8];
    const uint32_t box[5] = {16, 8};
    tma_tiled_desc good = fdesc(TMA_DTYPE_F32, 2, box, NULL, TMA_SWIZZLE_NONE);
    for (int i = 0; i < 8; i++)
        cases[i].d = good;
    cases[0].what = "dtype 13";
    cases[0].d.dtype = (tma_dtype)13;
    cases[1].what = "dtype 99";
    cases[1].d.dtype = (tma_dtype)99;
    cases[2].what = "rank 0";
    cases[2].d.rank = 0;
    cases[3].what = "rank 6";
    cases[3].d.rank = 6;
    cases[4].what = "box_dim[0] = 0";
    cases[4].d.box_dim[0] = 0;
    cases[5].what = "box_dim[1] = 257";
    cases[5].d.box_dim[1] = 257;
    cases[6].what = "element_stride[1] = 9";
    cases[6].d.element_stride[1] = 9;
    cases[7].what = "box_dim[1] = 0";
    cases[7].d.box_dim[1] = 0;
    for (int i = 0; i < 8; i++) {
        const tma_tiled_desc *d = &cases[i].d;
        cr_expect_neq(tma_check_tiled(d, NULL), TMA_OK, "%s must be invalid", cases[i].what);
        cr_expect_eq(tma_box_tx_bytes(d), 0, "%s: tma_box_tx_bytes", cases[i].what);
        cr_expect_eq(tma_box_row_pitch(d), 0, "%s: tma_box_row_pitch", cases[i].what);
        cr_expect_eq(tma_box_rows(d), 0, "%s: tma_box_rows", cases[i].what);
        cr_expect_eq(tma_box_smem_bytes(d), 0, "%s: tma_box_smem_bytes", cases[i].what);
    }
    for (int i = 0; i < 4; i++) /* the extent reads dtype and rank too */
        cr_expect_eq(tma_global_extent_bytes(&cases[i].d), 0, "%s: tma_global_extent_bytes", cases[i].what);

    cr_expect_eq(tma_box_tx_bytes(NULL), 0, "NULL: tma_box_tx_bytes");
    cr_expect_eq(tma_box_row_pitch(NULL), 0, "NULL: tma_box_row_pitch");
    cr_expect_eq(tma_box_rows(NULL), 0, "NULL: tma_box_rows");
    cr_expect_eq(tma_box_smem_bytes(NULL), 0, "NULL: tma_box_smem_bytes");
    cr_expect_eq(tma_global_extent_bytes(NULL), 0, "NULL: tma_global_extent_bytes");

    tma_tiled_desc e = good;
    e.global_dim[0] = 0;
    cr_expect_eq(tma_global_extent_bytes(&e), 0, "global_dim[0] = 0: extent");
    e = good;
    e.global_dim[1] = 0;
    cr_expect_eq(tma_global_extent_bytes(&e), 0, "global_dim[1] = 0: extent");
    e = good;
    e.global_dim[0] = P32 + 1;
    cr_expect_eq(tma_global_extent_bytes(&e), 0, "global_dim[0] = 2^32 + 1: extent");
    struct rule_row r;
    memset(&r, 0, sizeof r);
    r.base = B_HUGE;
    e = make_base(&r);
    e.global_stride[1] = UINT64_C(1) << 39; /* (2^32 - 1) * 2^39 does not fit in 64 bits */
    cr_expect_eq(tma_global_extent_bytes(&e), 0, "extent past 2^64");
}

/* ---------------------------------------------------------------------------------------------
 * 7. Name tables
 * ------------------------------------------------------------------------------------------- */

Test(names, status_table) {
    const int n = (int)TMA_ERR_IM2COL_OFFSET + 1;
    for (int i = 0; i < n; i++) {
        const char *name = tma_status_name((tma_status)i);
        const char *text = tma_strerror((tma_status)i);
        cr_assert_not_null(name, "status %d: name NULL", i);
        cr_assert_not_null(text, "status %d: strerror NULL", i);
        cr_expect_eq(strncmp(name, "TMA_", 4), 0, "status %d: name \"%s\" must start with TMA_", i, name);
        cr_expect_str_neq(name, "TMA_UNKNOWN_STATUS", "status %d is in the table", i);
        cr_expect_str_not_empty(text, "status %d (%s): empty strerror", i, name);
        cr_expect_str_neq(text, "unknown status", "status %d (%s) has its own text", i, name);
        for (int j = 0; j < i; j++) {
            cr_expect_str_neq(name, tma_status_name((tma_status)j), "statuses %d and %d share the name %s", j, i,
                              name);
            cr_expect_str_neq(text, tma_strerror((tma_status)j), "statuses %d and %d share the text \"%s\"", j, i,
                              text);
        }
    }
    cr_expect_str_eq(tma_status_name(TMA_OK), "TMA_OK", "TMA_OK name");
    cr_expect_str_eq(tma_status_name(TMA_ERR_BOX_SWIZZLE_SPAN), "TMA_ERR_BOX_SWIZZLE_SPAN", "span name");
    cr_expect_str_eq(tma_status_name(TMA_ERR_IM2COL_OFFSET), "TMA_ERR_IM2COL_OFFSET", "last name");
    cr_expect_eq((int)TMA_ERR_MAP_ALIGN, 31, "values are stable: TMA_ERR_MAP_ALIGN is 31");
    cr_expect_eq((int)TMA_ERR_DEVICE, 34, "values are stable: TMA_ERR_DEVICE is 34");
    cr_expect_eq((int)TMA_ERR_MULTICAST_MASK, 37, "values are stable: TMA_ERR_MULTICAST_MASK is 37");
    cr_expect_eq((int)TMA_ERR_IM2COL_OFFSET, 43, "values are stable: TMA_ERR_IM2COL_OFFSET is 43");
    cr_expect_eq((int)TMA_ERR_NO_DRIVER, 29, "values are stable: TMA_ERR_NO_DRIVER is 29");

    const int unknown[] = {n, n + 1, 1000, -1, INT32_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        cr_expect_str_eq(tma_status_name((tma_status)unknown[i]), "TMA_UNKNOWN_STATUS", "status %d name",
                         unknown[i]);
        cr_expect_str_eq(tma_strerror((tma_status)unknown[i]), "unknown status", "status %d strerror", unknown[i]);
    }
}

Test(names, status_table_matches_the_x_macro) {
    static const struct {
        int value;
        const char *name;
    } table[] = {
#define TEST_ROW_(name, value, text) {value, "TMA_" #name},
        TMA_STATUS_MAP(TEST_ROW_)
#undef TEST_ROW_
    };
    const int n = (int)(sizeof table / sizeof table[0]);
    cr_expect_eq(n, (int)TMA_ERR_IM2COL_OFFSET + 1, "TMA_ERR_IM2COL_OFFSET is the last status");
    for (int i = 0; i < n; i++) {
        cr_expect_eq(table[i].value, i, "status values are dense: row %d has value %d", i, table[i].value);
        cr_expect_str_eq(tma_status_name((tma_status)table[i].value), table[i].name, "name of status %d", i);
    }
}

Test(names, dtypes_and_swizzles) {
    static const struct {
        tma_dtype t;
        size_t size;
        const char *name;
    } types[] = {
        {TMA_DTYPE_U8, 1, "u8"},     {TMA_DTYPE_U16, 2, "u16"},           {TMA_DTYPE_U32, 4, "u32"},
        {TMA_DTYPE_I32, 4, "i32"},   {TMA_DTYPE_U64, 8, "u64"},           {TMA_DTYPE_I64, 8, "i64"},
        {TMA_DTYPE_F16, 2, "f16"},   {TMA_DTYPE_F32, 4, "f32"},           {TMA_DTYPE_F64, 8, "f64"},
        {TMA_DTYPE_BF16, 2, "bf16"}, {TMA_DTYPE_F32_FTZ, 4, "f32_ftz"},   {TMA_DTYPE_TF32, 4, "tf32"},
        {TMA_DTYPE_TF32_FTZ, 4, "tf32_ftz"},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        cr_expect_eq(tma_dtype_size(types[i].t), types[i].size, "size of %s", types[i].name);
        cr_expect_str_eq(tma_dtype_name(types[i].t), types[i].name, "name of dtype %d", (int)types[i].t);
    }
    const int bad[] = {13, 14, 15, 16, -1, 1000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(tma_dtype_size((tma_dtype)bad[i]), 0, "size of dtype %d", bad[i]);
        cr_expect_str_eq(tma_dtype_name((tma_dtype)bad[i]), "?", "name of dtype %d", bad[i]);
    }
    cr_expect_str_eq(tma_swizzle_name(TMA_SWIZZLE_NONE), "TMA_SWIZZLE_NONE", "swizzle name 0");
    cr_expect_str_eq(tma_swizzle_name(TMA_SWIZZLE_128B), "TMA_SWIZZLE_128B", "swizzle name 3");
    cr_expect_str_eq(tma_swizzle_name(TMA_SWIZZLE_128B_ATOM_64B), "TMA_SWIZZLE_128B_ATOM_64B", "swizzle name 6");
    cr_expect_str_eq(tma_swizzle_name((tma_swizzle)7), "?", "swizzle name 7");
    cr_expect_str_eq(tma_swizzle_name((tma_swizzle)-1), "?", "swizzle name -1");
}

/* ---------------------------------------------------------------------------------------------
 * 8. Property test: random descriptors against an independent oracle.
 * ------------------------------------------------------------------------------------------- */

#define PROPERTY_RUNS 20000

typedef struct {
    uint64_t s;
} rng;

static uint64_t rng_u64(rng *r) { /* splitmix64 */
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)(rng_u64(r) % n); }
static bool rng_pct(rng *r, uint32_t pct) { return rng_below(r, 100) < pct; }

static uint64_t round_up(uint64_t x, uint64_t to) { return (x + to - 1) / to * to; }

/* Mostly plausible descriptors (about half valid), with every field sometimes out of range. */
static tma_tiled_desc random_desc(rng *r) {
    tma_tiled_desc d;
    memset(&d, 0, sizeof d);
    static const int odd_dtypes[] = {13, 14, 15, 16, -1, 1000};
    d.dtype = rng_pct(r, 96) ? (tma_dtype)rng_below(r, 13) : (tma_dtype)odd_dtypes[rng_below(r, 6)];
    d.rank = rng_pct(r, 97) ? 1 + rng_below(r, 5) : (rng_pct(r, 50) ? 0 : 6 + rng_below(r, 100));
    uint32_t k = rng_below(r, 100);
    d.interleave = k < 86 ? TMA_INTERLEAVE_NONE
                   : k < 92 ? TMA_INTERLEAVE_16B
                   : k < 99 ? TMA_INTERLEAVE_32B
                            : (tma_interleave)(3 + rng_below(r, 5));
    if (d.interleave == TMA_INTERLEAVE_32B && rng_pct(r, 85))
        d.swizzle = TMA_SWIZZLE_32B;
    else
        d.swizzle = rng_pct(r, 97) ? (tma_swizzle)rng_below(r, 4) : (tma_swizzle)(4 + rng_below(r, 6));
    d.l2_promotion = rng_pct(r, 98) ? (tma_l2_promotion)rng_below(r, 4) : (tma_l2_promotion)(4 + rng_below(r, 9));
    d.oob_fill = rng_pct(r, 98) ? (tma_oob_fill)rng_below(r, 2) : (tma_oob_fill)(2 + rng_below(r, 9));
    if (d.oob_fill == TMA_OOB_NAN && rng_pct(r, 50))
        d.oob_fill = TMA_OOB_ZERO;
    k = rng_below(r, 100); /* load maps, store maps, templates (of both), and the flag that no longer matters */
    d.flags = k < 55 ? 0u
              : k < 75 ? TMA_DESC_STORE
              : k < 85 ? TMA_DESC_TEMPLATE
              : k < 90 ? TMA_DESC_TEMPLATE | TMA_DESC_STORE
                       : TMA_DESC_ALLOW_OVERLAP;

    uint64_t esize = tma_dtype_size(d.dtype) ? tma_dtype_size(d.dtype) : 4;
    uint64_t align = d.interleave == TMA_INTERLEAVE_32B ? 32 : 16;

    uint64_t addr = UINT64_C(0x10000000) + 256 * (uint64_t)rng_below(r, 1u << 20);
    k = rng_below(r, 100);
    if (k < 2 || ((d.flags & TMA_DESC_TEMPLATE) && k < 50))
        addr = 0;
    else if (k < 6)
        addr += 8 * (1 + rng_below(r, 31));
    else if (k < 9)
        addr = TOP_ADDR - 256 * (uint64_t)rng_below(r, 4096);
    d.global_address = (void *)(uintptr_t)addr;

    for (int i = 0; i < 5; i++) {
        k = rng_below(r, 100);
        d.global_dim[i] = k < 1   ? 0
                          : k < 3 ? P32
                          : k < 4 ? P32 + 1 + rng_below(r, 1000)
                          : k < 6 ? 1 + rng_u64(r) % (P32 * 4)
                                  : 1 + rng_below(r, k < 20 ? 5000 : 300);
    }
    uint64_t inner = d.global_dim[0] * esize;
    for (int i = 0; i < 4; i++) {
        k = rng_below(r, 100);
        uint64_t st = round_up(inner ? inner : 1, align) + align * rng_below(r, 4);
        if (k < 5)
            st = (inner / 2) & ~UINT64_C(15);
        else if (k < 8)
            st += 8;
        else if (k < 11)
            st = P40 - 16 * rng_below(r, 3);
        else if (k < 13)
            st = rng_u64(r) >> rng_below(r, 40);
        if (st > P40 * 4 && rng_pct(r, 80))
            st = P40 - 16;
        d.global_stride[i] = st;
        unsigned __int128 next = (unsigned __int128)st * d.global_dim[i + 1];
        inner = next > (unsigned __int128)UINT64_MAX ? UINT64_MAX : (uint64_t)next;
    }

    uint32_t span = tma_swizzle_span(d.swizzle) ? tma_swizzle_span(d.swizzle) : 128;
    k = rng_below(r, 100);
    if (d.interleave != TMA_INTERLEAVE_NONE && k < 85)
        d.box_dim[0] = (uint32_t)(16 * (1 + rng_below(r, 8)) / esize);
    else if (k < 85)
        d.box_dim[0] = (uint32_t)((16 * (1 + rng_below(r, span / 16)) + esize - 1) / esize);
    else if (k < 95)
        d.box_dim[0] = 1 + rng_below(r, 300);
    else
        d.box_dim[0] = (uint32_t[]){0, 256, 257, UINT32_MAX}[rng_below(r, 4)];
    for (int i = 1; i < 5; i++) {
        k = rng_below(r, 100);
        d.box_dim[i] = k < 80   ? 1 + rng_below(r, 16)
                       : k < 90 ? 1 + rng_below(r, 256)
                       : k < 96 ? 256
                                : (uint32_t[]){0, 257, 1000}[rng_below(r, 3)];
    }
    for (int i = 0; i < 5; i++) {
        k = rng_below(r, 100);
        if (i == 0)
            d.element_stride[i] = k < 85 ? 0 : k < 92 ? 1 : k < 98 ? 2 + rng_below(r, 7) : 9 + rng_below(r, 100);
        else
            d.element_stride[i] = k < 60 ? 0 : k < 97 ? 1 + rng_below(r, 8) : 9 + rng_below(r, 100);
    }
    return d;
}

static void describe(const tma_tiled_desc *d, char *buf, size_t n) {
    snprintf(buf, n,
             "{dtype %d rank %u addr %#" PRIxPTR " gdim {%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
             "} stride {%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "} box {%u %u %u %u %u} estride {%u %u %u %u "
             "%u} il %d sw %d l2 %d oob %d flags %u}",
             (int)d->dtype, d->rank, (uintptr_t)d->global_address, d->global_dim[0], d->global_dim[1],
             d->global_dim[2], d->global_dim[3], d->global_dim[4], d->global_stride[0], d->global_stride[1],
             d->global_stride[2], d->global_stride[3], d->box_dim[0], d->box_dim[1], d->box_dim[2], d->box_dim[3],
             d->box_dim[4], d->element_stride[0], d->element_stride[1], d->element_stride[2], d->element_stride[3],
             d->element_stride[4], (int)d->interleave, (int)d->swizzle, (int)d->l2_promotion, (int)d->oob_fill,
             d->flags);
}

/* Whether two coordinates reach the same bytes, decided independently of rules.h: 0 when the strides nest (each,
 * in increasing order, covers everything below it; 128-bit sums) and, where they do not, by brute force over the
 * rows' start offsets (sorted; two closer than a chunk-rounded row collide) for up to 4096 rows; -1 undecided. */
static int oracle_overlap(const tma_tiled_desc *d, uint64_t esize) {
    typedef unsigned __int128 u128;
    const uint64_t row = round_up(d->global_dim[0] * esize, 16);
    uint32_t dims[4], n = 0;
    for (uint32_t i = 1; i < d->rank; i++)
        if (d->global_dim[i] > 1)
            dims[n++] = i;
    for (uint32_t a = 0; a < n; a++) /* selection sort by stride, ties by dimension */
        for (uint32_t b = a + 1; b < n; b++)
            if (d->global_stride[dims[b] - 1] < d->global_stride[dims[a] - 1]) {
                uint32_t t = dims[a];
                dims[a] = dims[b], dims[b] = t;
            }
    u128 covered = row;
    bool nest = true;
    for (uint32_t a = 0; a < n && nest; a++) {
        nest = d->global_stride[dims[a] - 1] >= covered;
        covered += (u128)(d->global_dim[dims[a]] - 1) * d->global_stride[dims[a] - 1];
    }
    if (nest)
        return 0;
    for (uint32_t a = 0; a < n; a++) /* indices 0 and 1 of a dimension that steps by less than a row */
        if (d->global_stride[dims[a] - 1] < row)
            return 1;
    uint64_t rows = 1;
    for (uint32_t a = 0; a < n; a++)
        if ((rows *= d->global_dim[dims[a]]) > 4096)
            return -1;
    u128 starts[4096];
    uint64_t idx[5] = {0};
    for (uint64_t k = 0; k < rows; k++) {
        u128 off = 0;
        for (uint32_t a = 0; a < n; a++)
            off += (u128)idx[a] * d->global_stride[dims[a] - 1];
        starts[k] = off;
        for (uint32_t a = 0; a < n && ++idx[a] == d->global_dim[dims[a]]; a++)
            idx[a] = 0;
    }
    for (uint64_t a = 1; a < rows; a++) /* insertion sort; rows <= 4096 */
        for (uint64_t b = a; b > 0 && starts[b - 1] > starts[b]; b--) {
            u128 t = starts[b];
            starts[b] = starts[b - 1], starts[b - 1] = t;
        }
    for (uint64_t a = 1; a < rows; a++)
        if (starts[a] - starts[a - 1] < row)
            return 1;
    return 0;
}

/* The rules restated from cuda.h and docs/HARDWARE.md / tma.h, written without looking at how rules.h
 * arranges them; 128-bit arithmetic instead of overflow checks. 1 valid, 0 invalid, -1 undecided (strides that
 * interleave over too many rows for the oracle's brute force). */
static int oracle_valid(const tma_tiled_desc *d) {
    typedef unsigned __int128 u128;
    int t = (int)d->dtype;
    if (t < 0 || t > 12)
        return false;
    if (d->rank < 1 || d->rank > 5)
        return false;
    int il = (int)d->interleave, sw = (int)d->swizzle, l2 = (int)d->l2_promotion, oob = (int)d->oob_fill;
    if (il < 0 || il > 2 || sw < 0 || sw > 3 || l2 < 0 || l2 > 3 || oob < 0 || oob > 1)
        return false;
    bool is_float = t == TMA_DTYPE_F16 || t == TMA_DTYPE_F32 || t == TMA_DTYPE_F64 || t == TMA_DTYPE_BF16 ||
                    t == TMA_DTYPE_F32_FTZ || t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ;
    if (oob == 1 && !is_float)
        return false;
    if (il != 0 && d->rank < 3)
        return false;

    const uint64_t esize = (t == 0) ? 1 : (t == 1 || t == 6 || t == 9) ? 2 : (t == 4 || t == 5 || t == 8) ? 8 : 4;
    const uint64_t align = il == 2 ? 32 : 16;
    const uint64_t addr = (uint64_t)(uintptr_t)d->global_address;
    const bool tmpl = d->flags & TMA_DESC_TEMPLATE, store = (d->flags & TMA_DESC_STORE) && !tmpl;
    if ((addr == 0 && !tmpl) || addr % align) /* a template's address is a placeholder, NULL included */
        return false;
    for (uint32_t i = 0; i < d->rank; i++)
        if (d->global_dim[i] < 1 || d->global_dim[i] > P32)
            return false;
    for (uint32_t i = 0; i + 1 < d->rank; i++)
        if (d->global_stride[i] % align || d->global_stride[i] >= P40)
            return false;
    int overlap = 0; /* a view in which two coordinates reach the same bytes is refused for stores only */
    if (store && (overlap = oracle_overlap(d, esize)) == 1)
        return false;
    u128 last = 0;
    for (uint32_t i = 1; i < d->rank; i++)
        last += (u128)(d->global_dim[i] - 1) * d->global_stride[i - 1];
    /* one past the last byte: a row is dim0 * esize rounded up to a store's 16-byte chunk, or with interleave
     * dim0 whole 16/32-byte chunks (measured: docs/HARDWARE.md, "Interleaved layouts") */
    const uint64_t row = il ? d->global_dim[0] * (il == 1 ? 16u : 32u) : round_up(d->global_dim[0] * esize, 16);
    u128 end = (u128)addr + last + row;
    if (end > ((u128)1 << 64))
        return false;

    for (uint32_t i = 0; i < d->rank; i++) {
        if (d->box_dim[i] < 1 || d->box_dim[i] > 256 || d->element_stride[i] > 8)
            return false;
    }
    if (il == 0 && d->element_stride[0] > 1)
        return false;
    /* cuda.h documents the 16-byte rule for INTERLEAVE_NONE only; check.c applies it to every mode
     * (measured: the driver refuses INTERLEAVE_16B boxes that break it too). */
    uint64_t span = sw ? (16u << sw) : 0;
    uint64_t bytes = d->box_dim[0] * esize;
    if (bytes % 16 || (il == 0 && span && bytes > span))
        return false;
    /* Interleaved (measured, docs/HARDWARE.md): dimension 0 counts 16/32-byte chunks, dimension rank-2 (the slice
     * index) is never spanned, and rows are not padded to the swizzle span. */
    uint64_t rows = 1;
    for (uint32_t i = 1; i < d->rank; i++) {
        uint64_t e = d->element_stride[i] ? d->element_stride[i] : 1;
        if (il == 0 || i != d->rank - 2)
            rows *= (d->box_dim[i] + e - 1) / e;
    }
    uint64_t e0 = (il != 0 && d->element_stride[0]) ? d->element_stride[0] : 1;
    uint64_t unit = il == 1 ? 16 : il == 2 ? 32 : esize;
    uint64_t row_bytes = (d->box_dim[0] + e0 - 1) / e0 * unit;
    uint64_t pitch = il == 0 && span > row_bytes ? span : row_bytes;
    if (rows * pitch > SMEM_LIMIT)
        return false;
    /* The driver's own count (measured): elements over element strides in every dimension, at most 228 KiB. */
    uint64_t counted = esize;
    for (uint32_t i = 0; i < d->rank; i++) {
        uint64_t e = d->element_stride[i] ? d->element_stride[i] : 1;
        counted *= (d->box_dim[i] + e - 1) / e;
    }
    if (counted > 233472u)
        return false;
    return overlap == -1 ? -1 : true;
}

Test(check_property, random_descriptors) {
    const uint64_t seed = test_seed("check_property");
    rng r = {seed};
    unsigned valid = 0, loads_only = 0, templates = 0;
    unsigned by_status[TMA_ERR_DEVICE + 1] = {0}, undecided = 0;
    char text[512];
    for (int it = 0; it < PROPERTY_RUNS; it++) {
        tma_tiled_desc d = random_desc(&r);
        tma_diag diag;
        memset(&diag, 0x7f, sizeof diag);
        tma_status st = tma_check_tiled(&d, &diag);
        tma_diag all[8];
        memset(all, 0x7f, sizeof all);
        size_t count = 12345;
        tma_status st_all = tma_check_tiled_all(&d, all, 8, &count);
        const int verdict = oracle_valid(&d);
        undecided += verdict == -1;
        const bool want = verdict == -1 ? st == TMA_OK : verdict == 1; /* undecided: not compared */

        if ((st == TMA_OK) != want || (st == TMA_OK) != (count == 0) || st_all != st ||
            diag.message[sizeof diag.message - 1] != '\0' || (st != TMA_OK && diag.message[0] == '\0'))
            describe(&d, text, sizeof text);
        else
            text[0] = '\0';

        cr_assert_eq(st == TMA_OK, want,
                     "seed %" PRIu64 " #%d: tma_check_tiled says %s, the oracle says %s: %s; %s", seed, it,
                     tma_status_name(st), want ? "valid" : "invalid", diag.message, text);
        cr_assert_eq(st == TMA_OK, count == 0, "seed %" PRIu64 " #%d: status %s but count %zu: %s", seed, it,
                     tma_status_name(st), count, text);
        cr_assert_eq(st_all, st, "seed %" PRIu64 " #%d: tma_check_tiled_all returned %s, tma_check_tiled %s: %s",
                     seed, it, tma_status_name(st_all), tma_status_name(st), text);
        cr_assert_eq(diag.status, st, "seed %" PRIu64 " #%d: diag.status differs: %s", seed, it, text);
        cr_assert_eq(diag.message[sizeof diag.message - 1], '\0', "seed %" PRIu64 " #%d: message overflow: %s",
                     seed, it, text);
        if (st == TMA_OK) {
            cr_assert_str_empty(diag.message, "seed %" PRIu64 " #%d: OK with message \"%s\"", seed, it,
                                diag.message);
            valid++;
            size_t tx = tma_box_tx_bytes(&d), smem = tma_box_smem_bytes(&d);
            cr_assert(tx > 0 && tx <= smem && smem <= SMEM_LIMIT &&
                          smem == tma_box_rows(&d) * tma_box_row_pitch(&d) && tma_global_extent_bytes(&d) > 0,
                      "seed %" PRIu64 " #%d: footprint of a valid descriptor: tx %zu smem %zu", seed, it, tx, smem);
            /* At the origin only the map's own copy rules can refuse: no copy through a template, no store through a
             * view in which two coordinates reach the same bytes (the oracle's verdict where it can decide). */
            const int32_t zero[5] = {0};
            const bool tmpl = d.flags & TMA_DESC_TEMPLATE;
            const int overlap = oracle_overlap(&d, tma_dtype_size(d.dtype));
            tma_overlap o; /* where the oracle cannot decide, the rule's own search */
            const bool refused = overlap == -1 ? !tma_rule_one_to_one(&d, &o) : overlap == 1;
            const tma_status load_want = tmpl ? TMA_ERR_ARG : TMA_OK;
            const tma_status store_want = tmpl ? TMA_ERR_ARG : refused ? TMA_ERR_GLOBAL_STRIDE_OVERLAP : TMA_OK;
            cr_assert_eq(tma_check_coords(&d, zero, NULL), load_want, "seed %" PRIu64 " #%d: origin load: %s", seed,
                         it, text);
            cr_assert_eq(tma_check_store_coords(&d, zero, NULL), store_want, "seed %" PRIu64 " #%d: origin store",
                         seed, it);
            const tma_box_info box = tma_box_info_of(&d);
            if (((box.flags & TMA_BOX_LOAD_ONLY) != 0) != refused)
                describe(&d, text, sizeof text);
            cr_assert_eq((box.flags & TMA_BOX_LOAD_ONLY) != 0, refused,
                         "seed %" PRIu64 " #%d: TMA_BOX_LOAD_ONLY %u, a store %s (oracle %d): %s", seed, it,
                         box.flags & TMA_BOX_LOAD_ONLY, refused ? "refused" : "allowed", overlap, text);
            cr_assert_eq((box.flags & TMA_BOX_TEMPLATE) != 0, tmpl, "seed %" PRIu64 " #%d: TMA_BOX_TEMPLATE", seed, it);
            loads_only += refused && !tmpl;
            templates += tmpl;
            continue;
        }
        by_status[(unsigned)st <= TMA_ERR_DEVICE ? (unsigned)st : 0]++;
        cr_assert_str_not_empty(diag.message, "seed %" PRIu64 " #%d: %s without a message: %s", seed, it,
                                tma_status_name(st), text);
        cr_assert_eq(all[0].status, st, "seed %" PRIu64 " #%d: first diag status", seed, it);
        cr_assert_str_eq(all[0].message, diag.message, "seed %" PRIu64 " #%d: first message differs", seed, it);
        for (size_t i = 0; i < count && i < 8; i++) {
            cr_assert_neq(all[i].status, TMA_OK, "seed %" PRIu64 " #%d: diag %zu is TMA_OK", seed, it, i);
            cr_assert_not_null(memchr(all[i].message, '\0', sizeof all[i].message),
                               "seed %" PRIu64 " #%d: diag %zu not terminated", seed, it, i);
            cr_assert_str_not_empty(all[i].message, "seed %" PRIu64 " #%d: diag %zu empty", seed, it, i);
            cr_expect_lt(strlen(all[i].message), sizeof all[i].message - 1,
                         "seed %" PRIu64 " #%d: message %zu was truncated: \"%s\"", seed, it, i, all[i].message);
        }
        if (count > 8)
            cr_assert_eq(all[7].message[0] != 0x7f, true, "seed %" PRIu64 " #%d: cap 8 filled", seed, it);
    }
    cr_log_info("check_property: %u of %d random descriptors valid; %u with interleaved strides over too many rows "
                "for the oracle to decide (not compared)",
                valid, PROPERTY_RUNS, undecided);
    cr_expect_lt(undecided * 20, (unsigned)PROPERTY_RUNS, "the oracle decides at least 95%% of the descriptors");
    for (int s = 1; s <= (int)TMA_ERR_DEVICE; s++)
        if (by_status[s])
            cr_log_info("check_property:   %-32s %u", tma_status_name((tma_status)s), by_status[s]);
    cr_log_info("check_property: %u valid maps only loads may use (two coordinates reach the same bytes), %u valid "
                "templates", loads_only, templates);
    cr_expect_gt(valid, PROPERTY_RUNS / 10, "the generator should produce a fair share of valid descriptors");
    cr_expect_gt(loads_only, PROPERTY_RUNS / 100, "and of valid load maps whose coordinates share bytes");
    cr_expect_gt(templates, PROPERTY_RUNS / 100, "and of valid templates");
    cr_expect_gt(PROPERTY_RUNS - valid, PROPERTY_RUNS / 10, "and of invalid ones");
}

/* The driver's own box count (TMA_DRIVER_MAX_BOX_BYTES), measured on an H200 with cuTensorMapEncodeTiled: element
 * size x prod ceil(box_dim / element_stride) over every dimension, interleaved or not, at most 233472 bytes. */
static tma_tiled_desc interleaved_u8(uint32_t rows, uint32_t estride) {
    tma_tiled_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = TMA_DTYPE_U8;
    d.rank = 3;
    d.global_address = (void *)(uintptr_t)0x7f0000000000ull;
    d.global_dim[0] = 1024, d.global_dim[1] = 1024, d.global_dim[2] = 64;
    d.global_stride[0] = 1024 * 32, d.global_stride[1] = 1024 * 32 * 1024;
    d.box_dim[0] = 256, d.box_dim[1] = rows, d.box_dim[2] = 4;
    d.element_stride[0] = 1, d.element_stride[1] = estride, d.element_stride[2] = estride;
    d.interleave = TMA_INTERLEAVE_16B;
    return d;
}

Test(check_rules, driver_box_bytes) {
    tma_diag diag;
    tma_tiled_desc d = interleaved_u8(228, 1); /* 233472 bytes: the driver encodes it */
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "{256, 228, 4} u8, 16B: %s", diag.message);
    d = interleaved_u8(229, 1); /* 234496: refused by the driver, although the copy would occupy 16 KiB */
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_ERR_BOX_SMEM, "{256, 229, 4} u8, 16B");
    cr_expect(strstr(diag.message, "234496 bytes") != NULL && strstr(diag.message, "233472") != NULL, "%s",
              diag.message);
    d = interleaved_u8(229, 2); /* element strides count: 256 x 115 x 2 */
    cr_expect_eq(tma_check_tiled(&d, &diag), TMA_OK, "{256, 229, 4} with element strides 2: %s", diag.message);
    /* gpu_driver's set of seed 352230526830: the slice dimension (box_dim[3] = 255) counts too */
    tma_tiled_desc s;
    memset(&s, 0, sizeof s);
    s.dtype = TMA_DTYPE_U16;
    s.rank = 5;
    s.global_address = (void *)(uintptr_t)0x7f0000000000ull;
    const uint64_t dims[5] = {90, 5, 7, 8, 6}, strides[4] = {208, 1040, 7280, 58256};
    const uint32_t box[5] = {64, 3, 2, 255, 2};
    for (int i = 0; i < 5; i++)
        s.global_dim[i] = dims[i], s.box_dim[i] = box[i], s.element_stride[i] = 1;
    for (int i = 0; i < 4; i++)
        s.global_stride[i] = strides[i];
    s.interleave = TMA_INTERLEAVE_16B;
    cr_expect_eq(tma_check_tiled(&s, &diag), TMA_ERR_BOX_SMEM, "the seed's set");
    cr_expect(strstr(diag.message, "391680 bytes") != NULL, "%s", diag.message);
    s.element_stride[1] = 3, s.element_stride[2] = 2, s.element_stride[4] = 2; /* 32640 bytes: the driver encodes */
    cr_expect_eq(tma_check_tiled(&s, &diag), TMA_OK, "the seed's set with element strides: %s", diag.message);
}
