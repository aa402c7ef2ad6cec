/* Descriptor and coordinate checks, and the footprint a box has in shared and global memory.
 *
 * Each rule is one FAIL_IF line: its own status and a message that names the field (with its
 * dimension), the value, the limit and a fix. The documented rules come from the comment above
 * cuTensorMapEncodeTiled in cuda.h (CUDA 13.0); the stricter ones are marked "libtma:" with why. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ---------------------------------------------------------------------------------------------
 * Names
 * ------------------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    size_t size;
} dtype_info[TMA_DTYPE_COUNT_] = {
    [TMA_DTYPE_U8] = {"u8", 1},        [TMA_DTYPE_U16] = {"u16", 2},  [TMA_DTYPE_U32] = {"u32", 4},
    [TMA_DTYPE_I32] = {"i32", 4},      [TMA_DTYPE_U64] = {"u64", 8},  [TMA_DTYPE_I64] = {"i64", 8},
    [TMA_DTYPE_F16] = {"f16", 2},      [TMA_DTYPE_F32] = {"f32", 4},  [TMA_DTYPE_F64] = {"f64", 8},
    [TMA_DTYPE_BF16] = {"bf16", 2},    [TMA_DTYPE_F32_FTZ] = {"f32_ftz", 4},
    [TMA_DTYPE_TF32] = {"tf32", 4},    [TMA_DTYPE_TF32_FTZ] = {"tf32_ftz", 4},
};

size_t tma_dtype_size(tma_dtype dtype) {
    return (unsigned)dtype < TMA_DTYPE_COUNT_ ? dtype_info[dtype].size : 0;
}

const char *tma_dtype_name(tma_dtype dtype) {
    return (unsigned)dtype < TMA_DTYPE_COUNT_ ? dtype_info[dtype].name : "?";
}

const char *tma_swizzle_name(tma_swizzle mode) {
    static const char *const names[] = {
        "TMA_SWIZZLE_NONE",          "TMA_SWIZZLE_32B",
        "TMA_SWIZZLE_64B",           "TMA_SWIZZLE_128B",
        "TMA_SWIZZLE_128B_ATOM_32B", "TMA_SWIZZLE_128B_ATOM_32B_FLIP_8B",
        "TMA_SWIZZLE_128B_ATOM_64B",
    };
    return (unsigned)mode < sizeof names / sizeof names[0] ? names[mode] : "?";
}

static bool dtype_is_float(tma_dtype t) {
    return t == TMA_DTYPE_F16 || t == TMA_DTYPE_F32 || t == TMA_DTYPE_F64 || t == TMA_DTYPE_BF16 ||
           t == TMA_DTYPE_F32_FTZ || t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ;
}

tma_tiled_desc tma_desc_2d(tma_dtype dtype, void *base, uint64_t rows, uint64_t cols, uint64_t row_stride_bytes,
                           uint32_t box_rows, uint32_t box_cols, tma_swizzle swizzle) {
    tma_tiled_desc d = {
        .dtype = dtype,
        .rank = 2,
        .global_address = base,
        .global_dim = {cols, rows},
        .global_stride = {row_stride_bytes},
        .box_dim = {box_cols, box_rows},
        .swizzle = swizzle,
    };
    return d;
}

/* ---------------------------------------------------------------------------------------------
 * Reporting: every broken rule goes to the sink; the first one decides the return value.
 * ------------------------------------------------------------------------------------------- */

typedef struct sink {
    tma_diag *diags;
    size_t cap;
    size_t count;
    tma_status first;
} sink;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void report(sink *s, tma_status status, const char *fmt, ...) {
    if (s->count < s->cap) {
        tma_diag *out = &s->diags[s->count];
        out->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(out->message, sizeof out->message, fmt, ap);
        va_end(ap);
    }
    if (s->first == TMA_OK)
        s->first = status;
    s->count++;
}

#define FAIL_IF(cond, status, ...)                                                                  \
    do {                                                                                            \
        if (cond) {                                                                                 \
            report(s, status, __VA_ARGS__);                                                         \
            ok = false;                                                                             \
        }                                                                                           \
    } while (0)

/* ---------------------------------------------------------------------------------------------
 * The rules, grouped so that a group runs only when the fields it reads are valid.
 * ------------------------------------------------------------------------------------------- */

/* Enumerations and rank. Returns false if anything later rules read is invalid. */
static bool check_kinds(const tma_tiled_desc *d, sink *s) {
    bool ok = true;
    FAIL_IF((unsigned)d->dtype >= 13 && (unsigned)d->dtype <= 15, TMA_ERR_DTYPE,
            "dtype = %d is a packed sub-byte type (16U4/16U6) of compute capability 10.x, which libtma does not "
            "support: use one of TMA_DTYPE_U8 .. TMA_DTYPE_TF32_FTZ (0..12)",
            (int)d->dtype);
    FAIL_IF((unsigned)d->dtype > 15, TMA_ERR_DTYPE,
            "dtype = %d is not a tensor-map element type: use one of TMA_DTYPE_U8 .. TMA_DTYPE_TF32_FTZ (0..12)",
            (int)d->dtype);
    FAIL_IF(d->rank < 1 || d->rank > TMA_MAX_RANK, TMA_ERR_RANK,
            "rank = %u is outside 1..%d: describe the tensor with 1 to 5 dimensions (merge dimensions that are "
            "contiguous in memory)",
            d->rank, TMA_MAX_RANK);
    FAIL_IF((unsigned)d->interleave > TMA_INTERLEAVE_32B, TMA_ERR_INTERLEAVE,
            "interleave = %d is not an interleave mode: use TMA_INTERLEAVE_NONE (0), _16B (1) or _32B (2)",
            (int)d->interleave);
    FAIL_IF((unsigned)d->swizzle > TMA_SWIZZLE_128B_ATOM_64B, TMA_ERR_SWIZZLE,
            "swizzle = %d is not a swizzle mode: use TMA_SWIZZLE_NONE (0), _32B (1), _64B (2) or _128B (3)",
            (int)d->swizzle);
    /* libtma: the driver accepts these on sm_90 too, but Hopper's copy engine has no such mode. */
    FAIL_IF(d->swizzle >= TMA_SWIZZLE_128B_ATOM_32B && d->swizzle <= TMA_SWIZZLE_128B_ATOM_64B,
            TMA_ERR_SWIZZLE_UNSUPPORTED,
            "swizzle = %s is a compute capability 10.x mode that Hopper (sm_90) does not implement: use "
            "TMA_SWIZZLE_128B",
            tma_swizzle_name(d->swizzle));
    FAIL_IF((unsigned)d->l2_promotion > TMA_L2_256B, TMA_ERR_L2_PROMOTION,
            "l2_promotion = %d is not an L2 promotion: use TMA_L2_NONE (0), _64B (1), _128B (2) or _256B (3)",
            (int)d->l2_promotion);
    FAIL_IF((unsigned)d->oob_fill > TMA_OOB_NAN, TMA_ERR_OOB_FILL,
            "oob_fill = %d is not a fill mode: use TMA_OOB_ZERO (0) or TMA_OOB_NAN (1)", (int)d->oob_fill);
    if (!ok)
        return false;

    FAIL_IF(d->oob_fill == TMA_OOB_NAN && !dtype_is_float(d->dtype), TMA_ERR_OOB_FILL_NAN_INTEGER,
            "oob_fill = TMA_OOB_NAN with dtype = %s: NaN fill is for floating-point types only; use TMA_OOB_ZERO",
            tma_dtype_name(d->dtype));
    FAIL_IF(d->interleave != TMA_INTERLEAVE_NONE && d->rank < 3, TMA_ERR_INTERLEAVE_RANK,
            "rank = %u with interleave = %s: interleaved layouts need rank >= 3; add the missing dimensions "
            "with global_dim = 1 or use TMA_INTERLEAVE_NONE",
            d->rank, d->interleave == TMA_INTERLEAVE_16B ? "TMA_INTERLEAVE_16B" : "TMA_INTERLEAVE_32B");
    /* Documented; measured on an H200: the driver accepts NONE and 128B here, and a load through such a
     * map hung (in one run; it completed in another). libtma turns that hang into this error. */
    FAIL_IF(d->interleave == TMA_INTERLEAVE_32B && d->swizzle != TMA_SWIZZLE_32B, TMA_ERR_INTERLEAVE_SWIZZLE,
            "swizzle = %s with interleave = TMA_INTERLEAVE_32B: that interleave requires TMA_SWIZZLE_32B (the "
            "driver accepts other modes, and loads through them can hang); use TMA_SWIZZLE_32B",
            tma_swizzle_name(d->swizzle));
    return true; /* later rules can still read every field */
}

static bool check_global(const tma_tiled_desc *d, sink *s) {
    bool ok = true;
    const uint64_t esize = tma_dtype_size(d->dtype);
    const uint64_t stride_align = d->interleave == TMA_INTERLEAVE_32B ? 32 : 16;
    const uintptr_t addr = (uintptr_t)d->global_address;

    /* libtma: the driver encodes a NULL address; the first copy through the map then faults. */
    FAIL_IF(d->global_address == NULL, TMA_ERR_GLOBAL_ADDRESS_NULL,
            "global_address = NULL: pass the tensor's device address (cudaMalloc returns 256-byte aligned memory)");
    FAIL_IF(addr % stride_align != 0, TMA_ERR_GLOBAL_ADDRESS_ALIGN,
            "global_address = %p is not %u-byte aligned%s: use an address that is a multiple of %u (offset the "
            "coordinates instead of the address)",
            d->global_address, (unsigned)stride_align,
            stride_align == 32 ? " (TMA_INTERLEAVE_32B needs 32)" : "", (unsigned)stride_align);

    for (uint32_t i = 0; i < d->rank; i++)
        FAIL_IF(d->global_dim[i] == 0 || d->global_dim[i] > TMA_MAX_GLOBAL_DIM, TMA_ERR_GLOBAL_DIM,
                "global_dim[%u] = %llu is outside 1..2^32: every dimension needs at least one element and at "
                "most 4294967296; split a larger dimension in two",
                i, (unsigned long long)d->global_dim[i]);

    for (uint32_t i = 0; i + 1 < d->rank; i++) {
        uint64_t st = d->global_stride[i];
        FAIL_IF(st % stride_align != 0, TMA_ERR_GLOBAL_STRIDE_ALIGN,
                "global_stride[%u] = %llu bytes is not a multiple of %u%s: pad the rows so the stride is "
                "%llu bytes",
                i, (unsigned long long)st, (unsigned)stride_align,
                stride_align == 32 ? " (TMA_INTERLEAVE_32B needs 32)" : "",
                (unsigned long long)tma_round_up_u64_(st ? st : 1, stride_align));
        FAIL_IF(st >= TMA_GLOBAL_STRIDE_LIMIT, TMA_ERR_GLOBAL_STRIDE_RANGE,
                "global_stride[%u] = %llu bytes is not below the limit of 2^40 (1099511627776) bytes: "
                "describe the tensor with an extra dimension or a smaller stride",
                i, (unsigned long long)st);
    }
    if (!ok)
        return false;

    /* The documented stride formula makes each stride cover the extent of the dimensions inside it.
     * The driver does not enforce that (it accepted a stride smaller than a row); libtma does, because
     * overlapping rows make a store race with itself. TMA_DESC_ALLOW_OVERLAP opts out for loads. */
    if (!(d->flags & TMA_DESC_ALLOW_OVERLAP)) {
        uint64_t inner = d->global_dim[0] * esize; /* <= 2^35, no overflow */
        bool inner_overflows = false;              /* the dimensions inside span more than 2^64 bytes */
        for (uint32_t i = 0; i + 1 < d->rank && ok; i++) {
            uint64_t st = d->global_stride[i];
            FAIL_IF(inner_overflows, TMA_ERR_GLOBAL_STRIDE_OVERLAP,
                    "global_stride[%u] = %llu bytes cannot step over dimensions 0..%u, which span more than 2^64 "
                    "bytes: shrink global_dim (strides are in bytes, dims in elements)",
                    i, (unsigned long long)st, i);
            FAIL_IF(!inner_overflows && st < inner, TMA_ERR_GLOBAL_STRIDE_OVERLAP,
                    "global_stride[%u] = %llu bytes is smaller than the %llu bytes of dimension%s%u it steps "
                    "over, so elements overlap: use global_stride[%u] >= %llu, or set TMA_DESC_ALLOW_OVERLAP "
                    "for a map that is only loaded from",
                    i, (unsigned long long)st, (unsigned long long)inner, i ? "s 0.." : " ", i, i,
                    (unsigned long long)tma_round_up_u64_(inner, stride_align));
            inner_overflows = !tma_muladd_u64_(st, d->global_dim[i + 1], 0, &inner);
        }
        if (!ok)
            return false;
    }

    /* libtma: every byte of the tensor must have an address (the model and the extent helpers rely on it). */
    uint64_t extent = tma_global_extent_bytes(d);
    FAIL_IF(extent == 0 || extent - 1 > UINT64_MAX - (uint64_t)addr, TMA_ERR_GLOBAL_EXTENT,
            "the tensor's extent (global_dim x global_stride) runs past the end of the 64-bit address space: "
            "check global_dim and global_stride for a unit mistake (strides are in bytes, dims in elements)");
    return ok;
}

static bool check_box(const tma_tiled_desc *d, sink *s) {
    bool ok = true;
    const uint32_t esize = (uint32_t)tma_dtype_size(d->dtype);
    const char *tn = tma_dtype_name(d->dtype);

    for (uint32_t i = 0; i < d->rank; i++)
        FAIL_IF(d->box_dim[i] == 0 || d->box_dim[i] > TMA_MAX_BOX_DIM, TMA_ERR_BOX_DIM,
                "box_dim[%u] = %u is outside 1..256: copy at most 256 elements per dimension and issue several "
                "copies for a larger tile",
                i, d->box_dim[i]);
    for (uint32_t i = 0; i < d->rank; i++)
        FAIL_IF(d->element_stride[i] > TMA_MAX_ELEMENT_STRIDE, TMA_ERR_ELEMENT_STRIDE,
                "element_stride[%u] = %u is outside 1..8 (0 means 1): use a stride of at most 8, or fold the "
                "larger step into global_stride",
                i, d->element_stride[i]);
    /* libtma: without interleave the copy engine ignores element_stride[0]; a value other than 1 would
     * silently load every element instead of every n-th. */
    FAIL_IF(d->interleave == TMA_INTERLEAVE_NONE && d->element_stride[0] > 1 &&
                d->element_stride[0] <= TMA_MAX_ELEMENT_STRIDE,
            TMA_ERR_ELEMENT_STRIDE,
            "element_stride[0] = %u has no effect without interleave (TMA cannot stride dimension 0, it would "
            "copy every element): set it to 1, and step dimension 0 in the kernel instead",
            d->element_stride[0]);
    if (!ok)
        return false;

    const uint32_t inner = d->box_dim[0] * esize;
    const uint32_t per16 = 16 / esize;
    /* Documented for INTERLEAVE_NONE only; measured on an H200 (tests/test_gpu_driver.c): the driver
     * refuses a box_dim[0] * elem that is not a multiple of 16 with INTERLEAVE_16B too. */
    FAIL_IF(inner % 16 != 0, TMA_ERR_BOX_INNER_BYTES,
            "box_dim[0] = %u %s elements = %u bytes is not a multiple of 16 bytes: use a box_dim[0] that is a "
            "multiple of %u (e.g. %u)",
            d->box_dim[0], tn, inner, per16, (d->box_dim[0] + per16 - 1) / per16 * per16);
    if (d->interleave == TMA_INTERLEAVE_NONE) {
        uint32_t span = tma_swizzle_span(d->swizzle);
        FAIL_IF(span != 0 && inner > span, TMA_ERR_BOX_SWIZZLE_SPAN,
                "box_dim[0] = %u %s elements = %u bytes exceeds the %u-byte span of %s: use box_dim[0] <= %u%s "
                "or split the box",
                d->box_dim[0], tn, inner, span, tma_swizzle_name(d->swizzle), span / esize,
                inner <= 128 ? ", a wider swizzle (TMA_SWIZZLE_128B)," : "");
    }
    if (!ok)
        return false;

    size_t smem = tma_box_smem_bytes(d);
    /* libtma: the driver encodes any box, but one larger than a block's shared memory can never land. */
    FAIL_IF(smem > TMA_MAX_BOX_SMEM_BYTES, TMA_ERR_BOX_SMEM,
            "the box occupies %zu bytes of shared memory (box_dim x element size, rows padded to the swizzle "
            "span), more than the %u bytes a Hopper block can have: shrink box_dim",
            smem, TMA_MAX_BOX_SMEM_BYTES);
    return ok;
}

static tma_status check_all(const tma_tiled_desc *d, sink *s) {
    if (d == NULL) {
        report(s, TMA_ERR_NULL_ARG, "descriptor = NULL: pass the address of a tma_tiled_desc");
        return s->first;
    }
    if (check_kinds(d, s)) {
        check_global(d, s);
        check_box(d, s);
    }
    return s->first;
}

/* ---------------------------------------------------------------------------------------------
 * Public checks
 * ------------------------------------------------------------------------------------------- */

tma_status tma_check_tiled(const tma_tiled_desc *d, tma_diag *diag) {
    tma_diag first = {TMA_OK, ""};
    sink s = {&first, 1, 0, TMA_OK};
    check_all(d, &s);
    if (diag)
        *diag = first;
    return s.first;
}

tma_status tma_check_tiled_all(const tma_tiled_desc *d, tma_diag *diags, size_t cap, size_t *count) {
    sink s = {diags, diags ? cap : 0, 0, TMA_OK};
    check_all(d, &s);
    if (count)
        *count = s.count;
    return s.first;
}

tma_status tma_check_coords(const tma_tiled_desc *d, const int32_t coord[5]) {
    if (d == NULL || coord == NULL)
        return TMA_ERR_NULL_ARG;
    tma_status st = tma_check_tiled(d, NULL);
    if (st != TMA_OK)
        return st;
    /* Measured: coord[0] * elem must be a multiple of 16 bytes, or the copy raises "illegal instruction"
     * (uint8 at 114 faults, 112 works; uint32 at -3 faults). */
    int64_t inner_bytes = (int64_t)coord[0] * (int64_t)tma_dtype_size(d->dtype);
    if (d->interleave == TMA_INTERLEAVE_NONE && inner_bytes % 16 != 0)
        return TMA_ERR_COORD_ALIGN;
    return TMA_OK;
}

tma_status tma_check_store_coords(const tma_tiled_desc *d, const int32_t coord[5]) {
    tma_status st = tma_check_coords(d, coord);
    if (st != TMA_OK)
        return st;
    /* TMA_DESC_ALLOW_OVERLAP is for maps that are only loaded from: a store through rows that really
     * overlap races with itself. */
    if (d->flags & TMA_DESC_ALLOW_OVERLAP) {
        tma_tiled_desc strict = *d;
        strict.flags &= ~TMA_DESC_ALLOW_OVERLAP;
        if (tma_check_tiled(&strict, NULL) == TMA_ERR_GLOBAL_STRIDE_OVERLAP)
            return TMA_ERR_GLOBAL_STRIDE_OVERLAP;
    }
    for (uint32_t i = 0; i < d->rank; i++)
        if (coord[i] < 0)
            return TMA_ERR_COORD_NEGATIVE_STORE;
    return TMA_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Footprints. Computed from the fields directly (not through the checker, which calls them), and
 * 0 when the fields they read are out of range.
 * ------------------------------------------------------------------------------------------- */

static bool box_fields_valid(const tma_tiled_desc *d) {
    if (d == NULL || tma_dtype_size(d->dtype) == 0 || d->rank < 1 || d->rank > TMA_MAX_RANK)
        return false;
    for (uint32_t i = 0; i < d->rank; i++)
        if (d->box_dim[i] == 0 || d->box_dim[i] > TMA_MAX_BOX_DIM || d->element_stride[i] > TMA_MAX_ELEMENT_STRIDE)
            return false;
    return true;
}

size_t tma_box_rows(const tma_tiled_desc *d) {
    if (!box_fields_valid(d))
        return 0;
    size_t rows = 1;
    for (uint32_t i = 1; i < d->rank; i++)
        rows *= tma_box_count_(d, i); /* <= 256^4, fits */
    return rows;
}

size_t tma_box_row_pitch(const tma_tiled_desc *d) {
    if (!box_fields_valid(d))
        return 0;
    size_t inner = (size_t)tma_box_count_(d, 0) * tma_dtype_size(d->dtype);
    size_t span = tma_swizzle_span(d->swizzle);
    return span > inner ? span : inner;
}

size_t tma_box_tx_bytes(const tma_tiled_desc *d) {
    if (!box_fields_valid(d))
        return 0;
    return tma_box_rows(d) * tma_box_count_(d, 0) * tma_dtype_size(d->dtype);
}

size_t tma_box_smem_bytes(const tma_tiled_desc *d) { return tma_box_rows(d) * tma_box_row_pitch(d); }

size_t tma_global_extent_bytes(const tma_tiled_desc *d) {
    if (d == NULL || tma_dtype_size(d->dtype) == 0 || d->rank < 1 || d->rank > TMA_MAX_RANK)
        return 0;
    uint64_t last = 0; /* byte offset of the first element of the last row */
    for (uint32_t i = 1; i < d->rank; i++) {
        if (d->global_dim[i] == 0 || !tma_muladd_u64_(d->global_dim[i] - 1, d->global_stride[i - 1], last, &last))
            return 0;
    }
    if (d->global_dim[0] == 0 || d->global_dim[0] > TMA_MAX_GLOBAL_DIM)
        return 0;
    uint64_t row = tma_round_up_u64_(d->global_dim[0] * tma_dtype_size(d->dtype), 16);
    if (last > UINT64_MAX - row || last + row > SIZE_MAX)
        return 0;
    return (size_t)(last + row);
}
