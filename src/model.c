/* CPU model of the TMA copy engine, tiled mode: what a load writes to shared memory and what a store
 * writes to global memory, byte for byte.
 *
 * The rules (measured on an H200, 600 + 1,500 + 500 random copies; see docs/HARDWARE.md):
 *  1. Box rows land in order, dimension 0 fastest. The row pitch is box_dim[0] * elem, or the whole
 *     swizzle span when a swizzle is set; the unused rest of a span row is left untouched.
 *     Dimensions >= 1 with element stride e hold ceil(box / e) elements, stepping e.
 *  2. The swizzle acts on the shared-memory address (tma_swizzle_addr), so the destination's
 *     position inside a 1024-byte block sets the phase.
 *  3. Out-of-bounds elements of a load are zero, or 0x7FF7 repeated with TMA_OOB_NAN (any float type).
 *  4. TF32 and TF32_FTZ loads round each fp32 value to nearest even at bit 13; every NaN becomes
 *     0x7FFFE000; denormals are kept. Other types arrive bit for bit.
 *  5. A store reads shared memory through the same pitch and swizzle. It skips elements outside
 *     dimensions >= 1, but in dimension 0 it writes whole 16-byte chunks: every element whose byte
 *     offset in the row is below global_dim[0] * elem rounded up to 16.
 *  6. A reduce-store writes the same elements as a store, each op(global, shared); which pairs exist and their
 *     arithmetic (NaN, FTZ, rounding) are the measured rules of docs/HARDWARE.md "Reduce-stores" (reduce_float).
 *  7. Interleaved maps (loads; 3,351 captured loads and the GPU suite, docs/HARDWARE.md "Interleaved layouts"):
 *     dimension 0 counts whole 16/32-byte chunks, dimension rank-2 is the slice index a box never spans, rows are
 *     packed (tma/rules.h). Stores through them are not measured: refused.
 * 1-D bulk copies (end of file) move bytes as they are; their reduces use the same arithmetic.
 * im2col loads (tma_model_load_im2col): the walk of tma/rules.h "im2col maps" (TMA-FACTS, im2col section), with
 * the fill, the swizzle and the TF32 rounding of tiled loads.
 */
#include <string.h>

#include "internal.h"

/* Everything a copy needs, derived once from a descriptor. */
typedef struct box_walk {
    const tma_tiled_desc *d;
    uint32_t esize;
    uint32_t unit;        /* bytes of one dimension-0 position: esize, or the 16/32-byte chunk of an interleaved map */
    uint32_t pitch;       /* shared-memory bytes between box rows */
    uint32_t count[5];    /* elements per dimension in the box */
    uint32_t estride[5];  /* element stride per dimension */
    uint64_t limit0;      /* elements of dimension 0 a copy may touch (store: 16-byte chunk rounding) */
} box_walk;

static tma_status prepare(box_walk *w, const tma_tiled_desc *d, const int32_t coord[5], size_t smem_bytes,
                          uint32_t offset, bool store) {
    tma_rule_sink s = tma_rule_sink_make(NULL, 0);
    if (tma_rules_tiled_copy_(d, coord, offset, store, &s) != TMA_OK) /* the offset has the address's low bits */
        return s.first;
    if (store && d->interleave != TMA_INTERLEAVE_NONE) /* loads are modelled and proven; stores are not measured */
        return tma_rule_status(TMA_RULE_MODEL_INTERLEAVE);
    const uint64_t need = tma_rule_box_smem_bytes(d);
    if (!tma_model_fits_(offset, need, smem_bytes))
        return tma_rule_status(TMA_RULE_MODEL_SMEM_BOUNDS);

    w->d = d;
    w->esize = tma_rule_dtype_bytes(d->dtype);
    w->unit = tma_rule_dim0_unit_bytes(d);
    w->pitch = (uint32_t)tma_rule_box_row_pitch(d);
    for (uint32_t i = 0; i < 5; i++) {
        w->count[i] = tma_rule_box_count(d, i);
        w->estride[i] = i < d->rank ? tma_rule_estride(d, i) : 1;
    }
    w->limit0 = store ? tma_rule_store_row_bytes(d->global_dim[0], w->esize) / w->esize : d->global_dim[0];
    return TMA_OK;
}

/* Global coordinates of box row `row` (dimensions 1..4, dimension 1 fastest). Returns whether the row
 * lies inside the tensor, and its byte offset from global_address when it does. */
static bool row_position(const box_walk *w, const int32_t coord[5], uint32_t row, uint64_t *offset) {
    const tma_tiled_desc *d = w->d;
    uint64_t off = 0;
    bool inside = true;
    for (uint32_t i = 1; i < d->rank; i++) {
        uint32_t k = row % w->count[i];
        row /= w->count[i];
        int64_t x = (int64_t)coord[i] + (int64_t)k * w->estride[i];
        if (x < 0 || (uint64_t)x >= d->global_dim[i])
            inside = false;
        else
            off += (uint64_t)x * d->global_stride[i - 1]; /* within the checked extent */
    }
    *offset = off;
    return inside;
}

/* TF32 conversion on load: round to nearest even at bit 13; NaN -> 0x7FFFE000 (measured). */
static uint32_t tf32_round(uint32_t bits) {
    if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0)
        return 0x7FFFE000u;
    uint32_t lsb = (bits >> 13) & 1u;
    return (bits + 0x0FFFu + lsb) & ~0x1FFFu;
}

static void fill_oob(uint8_t *dst, tma_oob_fill fill, uint32_t esize) {
    if (fill == TMA_OOB_NAN) {
        for (uint32_t b = 0; b < esize; b += 2) { /* 0x7FF7 little-endian, repeated */
            dst[b] = 0xF7;
            dst[b + 1] = 0x7F;
        }
    } else {
        memset(dst, 0, esize);
    }
}

/* One element of a load: converted (TF32) or copied bit for bit, or the fill when it lies outside the tensor. */
static void load_value(uint8_t *dst, const uint8_t *src, tma_dtype dtype, tma_oob_fill fill, uint32_t esize) {
    if (src == NULL) {
        fill_oob(dst, fill, esize);
    } else if (tma_rule_dtype_is_tf32(dtype)) {
        uint32_t bits;
        memcpy(&bits, src, 4);
        bits = tf32_round(bits);
        memcpy(dst, &bits, 4);
    } else {
        memcpy(dst, src, esize);
    }
}

static void load_element(uint8_t *dst, const uint8_t *src, const box_walk *w) {
    load_value(dst, src, w->d->dtype, w->d->oob_fill, w->esize);
}

tma_status tma_model_load_tiled(const tma_tiled_desc *d, const int32_t coord[5], void *smem, size_t smem_bytes,
                                uint32_t dst_offset) {
    if (smem == NULL)
        return TMA_ERR_NULL_ARG;
    box_walk w;
    tma_status st = prepare(&w, d, coord, smem_bytes, dst_offset, false);
    if (st != TMA_OK)
        return st;

    const uint8_t *global = (const uint8_t *)d->global_address;
    uint8_t *sm = (uint8_t *)smem;
    const uint32_t rows = (uint32_t)tma_rule_box_rows(d);
    for (uint32_t r = 0; r < rows; r++) {
        uint64_t row_off;
        bool row_inside = row_position(&w, coord, r, &row_off);
        uint32_t logical = dst_offset + r * w.pitch;
        for (uint32_t j = 0; j < w.count[0]; j++, logical += w.unit) {
            /* one dimension-0 position: an element, or an interleaved map's whole chunk of elements */
            const int64_t x0 = (int64_t)coord[0] + (int64_t)j * w.estride[0];
            const bool inside = row_inside && x0 >= 0 && (uint64_t)x0 < w.limit0;
            const uint8_t *src = inside ? global + row_off + (uint64_t)x0 * w.unit : NULL;
            for (uint32_t b = 0; b < w.unit; b += w.esize) /* an element never straddles a 16-byte swizzle unit */
                load_element(sm + tma_swizzle_addr(d->swizzle, logical + b), src ? src + b : NULL, &w);
        }
    }
    return TMA_OK;
}

/* How a store combines a shared-memory element with global memory. */
typedef void (*combine_fn)(uint8_t *global, const uint8_t *shared, tma_dtype dtype, tma_reduce op);

static void combine_copy(uint8_t *global, const uint8_t *shared, tma_dtype dtype, tma_reduce op) {
    (void)op;
    memcpy(global, shared, tma_rule_dtype_bytes(dtype));
}

/* ---- reductions, one per representation (measured: docs/HARDWARE.md "Reduce-stores") ---- */

static uint64_t load_bits(const uint8_t *p, uint32_t bytes) {
    uint64_t v = 0; /* little-endian: the low `bytes` bytes hold the value */
    memcpy(&v, p, bytes);
    return v;
}

static void store_bits(uint8_t *p, uint64_t v, uint32_t bytes) { memcpy(p, &v, bytes); }

/* Integers: add wraps (signed ones are added as unsigned: the same bits); min and max compare as the type
 * says; inc and dec wrap at the shared value (u32 only); and, or, xor act on the bits. */
static uint64_t reduce_integer(uint64_t g, uint64_t v, tma_dtype t, tma_reduce op, uint32_t bytes) {
    const uint64_t mask = bytes == 8u ? ~0ull : (1ull << (8u * bytes)) - 1u;
    const int is_signed = t == TMA_DTYPE_I32 || t == TMA_DTYPE_I64;
    const uint64_t flip = is_signed ? 1ull << (8u * bytes - 1u) : 0u; /* signed order = unsigned order of g ^ flip */
    switch (op) {
    case TMA_REDUCE_ADD: return (g + v) & mask;
    case TMA_REDUCE_MIN: return (v ^ flip) < (g ^ flip) ? v : g;
    case TMA_REDUCE_MAX: return (v ^ flip) > (g ^ flip) ? v : g;
    case TMA_REDUCE_INC: return g >= v ? 0u : g + 1u;
    case TMA_REDUCE_DEC: return g == 0u || g > v ? v : g - 1u;
    case TMA_REDUCE_AND: return g & v;
    case TMA_REDUCE_OR: return g | v;
    default: return g ^ v;
    }
}

/* An IEEE binary format as a reduce-store treats it: exponent and fraction widths, whether denormal operands and
 * results become zeros of their sign (the _FTZ map types), and NaN results. Measured (docs/HARDWARE.md
 * "Reduce-stores"): f32, f16 and bf16 write every NaN result as one canonical pattern (nan_out); f64 passes a NaN
 * operand through bit for bit, the shared one when both are NaN, and writes nan_out only for inf + -inf. */
typedef struct float_format {
    uint32_t ebits, mbits;
    int ftz;
    int propagate_nan;
    uint64_t nan_out;
} float_format;

static float_format format_of(tma_dtype t) {
    switch (t) {
    case TMA_DTYPE_F16: return (float_format){5, 10, 0, 0, TMA_REDUCE_NAN_F16};
    case TMA_DTYPE_BF16: return (float_format){8, 7, 0, 0, TMA_REDUCE_NAN_BF16};
    case TMA_DTYPE_F64: return (float_format){11, 52, 0, 1, TMA_REDUCE_NAN_F64};
    case TMA_DTYPE_F32_FTZ: case TMA_DTYPE_TF32_FTZ: return (float_format){8, 23, 1, 0, TMA_REDUCE_NAN_F32};
    default: return (float_format){8, 23, 0, 0, TMA_REDUCE_NAN_F32}; /* f32, and tf32: no tf32 rounding here */
    }
}

/* A denormal of f as the zero of its sign, under FTZ. */
static uint64_t flush(uint64_t bits, float_format f) {
    const uint64_t exp = bits >> f.mbits & ((1ull << f.ebits) - 1u);
    if (!f.ftz || exp != 0u)
        return bits;
    return bits & 1ull << (f.ebits + f.mbits);
}

static int is_nan(uint64_t bits, float_format f) {
    const uint64_t exp = bits >> f.mbits & ((1ull << f.ebits) - 1u);
    return exp == (1ull << f.ebits) - 1u && (bits & ((1ull << f.mbits) - 1u)) != 0u;
}

static uint64_t double_bits(double x) {
    uint64_t b;
    memcpy(&b, &x, 8);
    return b;
}

static double double_of(uint64_t b) {
    double x;
    memcpy(&x, &b, 8);
    return x;
}

/* A value of format f (not NaN) as a double: exact for f16, bf16, f32 and f64. Bit arithmetic, no libm. */
static double to_double(uint64_t bits, float_format f) {
    const int bias = (1 << (f.ebits - 1)) - 1;
    const uint64_t sign = (bits >> (f.ebits + f.mbits) & 1u) << 63;
    int exp = (int)(bits >> f.mbits & ((1ull << f.ebits) - 1u));
    uint64_t frac = bits & ((1ull << f.mbits) - 1u);
    if (f.ebits == 11u)
        return double_of(bits);
    if (exp == (1 << f.ebits) - 1)
        return double_of(sign | 0x7FF0000000000000ull);
    if (exp == 0) {
        if (frac == 0u)
            return double_of(sign);
        exp = 1; /* a denormal: normalise it (the double has room) */
        while ((frac >> f.mbits & 1u) == 0u) {
            frac <<= 1;
            exp--;
        }
        frac &= (1ull << f.mbits) - 1u;
    }
    return double_of(sign | (uint64_t)(exp - bias + 1023) << 52 | frac << (52u - f.mbits));
}

/* x (not NaN; a normal double or zero or infinity) rounded to format f: to nearest, ties to even, denormals
 * kept, overflow to infinity, a zero keeps its sign. */
static uint64_t from_double(double x, float_format f) {
    const uint64_t b = double_bits(x);
    const int bias = (1 << (f.ebits - 1)) - 1;
    const uint64_t sign = (b >> 63) << (f.ebits + f.mbits);
    const uint64_t inf = ((1ull << f.ebits) - 1u) << f.mbits;
    const int dexp = (int)(b >> 52 & 0x7FFu);
    if (dexp == 0x7FF)
        return sign | inf;
    if (dexp == 0) /* zero (sums of f32/f16/bf16 values are never double denormals) */
        return sign;
    const uint64_t m = (b & 0xFFFFFFFFFFFFFull) | 1ull << 52; /* 53-bit significand */
    const int e_val = dexp - 1023;
    int e = e_val < 1 - bias ? 1 - bias : e_val; /* denormals share the smallest normal's quantum */
    const int shift = 52 - (int)f.mbits + (e - e_val);
    uint64_t q = 0;
    if (shift < 64) {
        q = m >> shift;
        const uint64_t rem = m & ((1ull << shift) - 1u), half = 1ull << (shift - 1);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
    } /* else below a quarter quantum: rounds to zero */
    if (q == 1ull << (f.mbits + 1u)) { /* rounding carried into the next binade */
        q >>= 1;
        e++;
    }
    if (e > bias)
        return sign | inf;
    if (q < 1ull << f.mbits) /* denormal or zero */
        return sign | q;
    return sign | (uint64_t)(e + bias) << f.mbits | (q & ((1ull << f.mbits) - 1u));
}

/* Floats. add: IEEE sum, rounded once to the format (nearest even, denormals kept: the f16/bf16 instructions are
 * .noftz); min and max: see reduce_float_minmax. Every NaN result is written as the format's nan_out. */
static uint64_t reduce_float_minmax(uint64_t g, uint64_t v, float_format f, tma_reduce op);

static uint64_t reduce_float(uint64_t g, uint64_t v, tma_dtype t, tma_reduce op) {
    const float_format f = format_of(t);
    if (op != TMA_REDUCE_ADD)
        return reduce_float_minmax(g, v, f, op);
    if (is_nan(g, f) || is_nan(v, f)) {
        if (!f.propagate_nan)
            return f.nan_out;
        return is_nan(v, f) ? v : g;
    }
    const double r = to_double(flush(g, f), f) + to_double(flush(v, f), f);
    if (r != r)
        return f.nan_out; /* inf + -inf */
    if (t == TMA_DTYPE_F64)
        return double_bits(r); /* the double sum is the correctly rounded one */
    /* The sum of two f32/f16/bf16 values is exact in double whenever the smaller can change the rounded result
     * (exponents within 53 - 24 bits); otherwise the double's own rounding cannot reach a tie of the narrower
     * format. So one rounding to the format is the IEEE result. */
    return flush(from_double(r, f), f);
}

static uint64_t reduce_float_minmax(uint64_t g, uint64_t v, float_format f, tma_reduce op) {
    const int gn = is_nan(g, f), vn = is_nan(v, f);
    if (gn && vn)
        return f.nan_out;
    if (gn)
        return v;
    if (vn)
        return g;
    const double a = to_double(g, f), b = to_double(v, f);
    if (a == b) { /* equal values; of two zeros, -0 is the smaller */
        const int g_negative = (double_bits(a) >> 63) != 0u;
        return op == TMA_REDUCE_MIN ? (g_negative ? g : v) : (g_negative ? v : g);
    }
    return (op == TMA_REDUCE_MIN) == (b < a) ? v : g;
}

static void combine_reduce(uint8_t *global, const uint8_t *shared, tma_dtype dtype, tma_reduce op) {
    const uint32_t bytes = tma_rule_dtype_bytes(dtype);
    const uint64_t g = load_bits(global, bytes), v = load_bits(shared, bytes);
    const uint64_t r = tma_rule_dtype_is_float(dtype) ? reduce_float(g, v, dtype, op)
                                                      : reduce_integer(g, v, dtype, op, bytes);
    store_bits(global, r, bytes);
}

static tma_status store_like(const tma_tiled_desc *d, const int32_t coord[5], const void *smem, size_t smem_bytes,
                             uint32_t src_offset, combine_fn combine, tma_reduce op) {
    if (smem == NULL)
        return TMA_ERR_NULL_ARG;
    box_walk w;
    tma_status st = prepare(&w, d, coord, smem_bytes, src_offset, true);
    if (st != TMA_OK)
        return st;

    uint8_t *global = (uint8_t *)d->global_address;
    const uint8_t *sm = (const uint8_t *)smem;
    const uint32_t rows = (uint32_t)tma_rule_box_rows(d);
    for (uint32_t r = 0; r < rows; r++) {
        uint64_t row_off;
        if (!row_position(&w, coord, r, &row_off))
            continue;
        uint32_t logical = src_offset + r * w.pitch;
        for (uint32_t j = 0; j < w.count[0]; j++, logical += w.esize) {
            uint64_t x0 = (uint64_t)coord[0] + j; /* coord[0] >= 0 for stores */
            if (x0 >= w.limit0)
                break;
            combine(global + row_off + x0 * w.esize, sm + tma_swizzle_addr(d->swizzle, logical), d->dtype, op);
        }
    }
    return TMA_OK;
}

tma_status tma_model_store_tiled(const tma_tiled_desc *d, const int32_t coord[5], const void *smem,
                                 size_t smem_bytes, uint32_t src_offset) {
    return store_like(d, coord, smem, smem_bytes, src_offset, combine_copy, TMA_REDUCE_ADD);
}

tma_status tma_model_reduce_tiled(const tma_tiled_desc *d, const int32_t coord[5], const void *smem,
                                  size_t smem_bytes, uint32_t src_offset, tma_reduce op) {
    if (d != NULL && tma_rule_dtype_bytes(d->dtype) != 0) {
        tma_rule_sink s = tma_rule_sink_make(NULL, 0);
        if (tma_rules_reduce(d->dtype, op, TMA_REDUCE_FORM_TILED, &s) != TMA_OK)
            return s.first;
    }
    return store_like(d, coord, smem, smem_bytes, src_offset, combine_reduce, op);
}

/* ---------------------------------------------------------------------------------------------
 * 1-D bulk copies: bytes move as they are, in order; a reduce combines element by element. `smem` stands for
 * shared memory as above; the global pointers are host memory whose low address bits stand for the device's.
 * ------------------------------------------------------------------------------------------- */

static tma_status bulk_prepare(const char *what, const void *global, const void *smem, size_t smem_bytes,
                               uint32_t offset, uint64_t bytes) {
    if (global == NULL || smem == NULL)
        return TMA_ERR_NULL_ARG;
    tma_rule_sink s = tma_rule_sink_make(NULL, 0);
    if (tma_rules_bulk(what, (uint64_t)(uintptr_t)global, offset, bytes, &s) != TMA_OK)
        return s.first;
    if (!tma_model_fits_(offset, bytes, smem_bytes))
        return tma_rule_status(TMA_RULE_MODEL_SMEM_BOUNDS);
    return TMA_OK;
}

tma_status tma_model_bulk_load(void *smem, size_t smem_bytes, uint32_t dst_offset, const void *global,
                               uint64_t bytes) {
    tma_status st = bulk_prepare("load", global, smem, smem_bytes, dst_offset, bytes);
    if (st == TMA_OK && bytes > 0)
        memcpy((uint8_t *)smem + dst_offset, global, (size_t)bytes);
    return st;
}

tma_status tma_model_bulk_load_multicast(void *const smem[], uint32_t cluster_blocks, size_t smem_bytes,
                                         uint32_t dst_offset, const void *global, uint64_t bytes, uint32_t cta_mask) {
    if (smem == NULL)
        return TMA_ERR_NULL_ARG;
    tma_rule_sink s = tma_rule_sink_make(NULL, 0);
    if (tma_rules_multicast("load", cta_mask, cluster_blocks, &s) != TMA_OK)
        return s.first;
    for (uint32_t r = 0; r < cluster_blocks && r < TMA_MAX_CLUSTER_BLOCKS; r++) {
        if ((cta_mask >> r & 1u) == 0u)
            continue;
        tma_status st = tma_model_bulk_load(smem[r], smem_bytes, dst_offset, global, bytes);
        if (st != TMA_OK)
            return st;
    }
    return TMA_OK;
}

tma_status tma_model_bulk_store(void *global, const void *smem, size_t smem_bytes, uint32_t src_offset,
                                uint64_t bytes) {
    tma_status st = bulk_prepare("store", global, smem, smem_bytes, src_offset, bytes);
    if (st == TMA_OK && bytes > 0)
        memcpy(global, (const uint8_t *)smem + src_offset, (size_t)bytes);
    return st;
}

tma_status tma_model_bulk_reduce(void *global, const void *smem, size_t smem_bytes, uint32_t src_offset,
                                 uint64_t bytes, tma_dtype type, tma_reduce op) {
    tma_rule_sink s = tma_rule_sink_make(NULL, 0);
    if (tma_rules_reduce(type, op, TMA_REDUCE_FORM_BULK, &s) != TMA_OK)
        return s.first;
    tma_status st = bulk_prepare("reduce", global, smem, smem_bytes, src_offset, bytes);
    if (st != TMA_OK)
        return st;
    const uint32_t esize = tma_rule_dtype_bytes(type);
    uint8_t *g = (uint8_t *)global;
    const uint8_t *v = (const uint8_t *)smem + src_offset;
    for (uint64_t i = 0; i + esize <= bytes; i += esize) /* 16 | bytes, so every element is whole */
        combine_reduce(g + i, v + i, type, op);
    return TMA_OK;
}

/* ---- into a cluster peer's shared memory: both sides are buffers standing for shared memory ---- */

static tma_status cluster_prepare(const char *what, void *dst, size_t dst_bytes, uint32_t dst_offset, const void *src,
                                  size_t src_bytes, uint32_t src_offset, uint64_t bytes) {
    if (dst == NULL || src == NULL)
        return TMA_ERR_NULL_ARG;
    tma_rule_sink s = tma_rule_sink_make(NULL, 0);
    if (tma_rules_bulk_cluster(what, dst_offset, src_offset, bytes, 0, 1, &s) != TMA_OK)
        return s.first;
    if (!tma_model_fits_(src_offset, bytes, src_bytes) || !tma_model_fits_(dst_offset, bytes, dst_bytes))
        return tma_rule_status(TMA_RULE_MODEL_SMEM_BOUNDS);
    return TMA_OK;
}

tma_status tma_model_bulk_copy_cluster(void *dst, size_t dst_bytes, uint32_t dst_offset, const void *src,
                                       size_t src_bytes, uint32_t src_offset, uint64_t bytes) {
    tma_status st = cluster_prepare("copy", dst, dst_bytes, dst_offset, src, src_bytes, src_offset, bytes);
    if (st == TMA_OK && bytes > 0)
        memmove((uint8_t *)dst + dst_offset, (const uint8_t *)src + src_offset, (size_t)bytes);
    return st;
}

tma_status tma_model_bulk_reduce_cluster(void *dst, size_t dst_bytes, uint32_t dst_offset, const void *src,
                                         size_t src_bytes, uint32_t src_offset, uint64_t bytes, tma_dtype type,
                                         tma_reduce op) {
    tma_rule_sink s = tma_rule_sink_make(NULL, 0);
    if (tma_rules_reduce(type, op, TMA_REDUCE_FORM_CLUSTER, &s) != TMA_OK)
        return s.first;
    tma_status st = cluster_prepare("reduce", dst, dst_bytes, dst_offset, src, src_bytes, src_offset, bytes);
    if (st != TMA_OK)
        return st;
    const uint32_t esize = tma_rule_dtype_bytes(type);
    uint8_t *d = (uint8_t *)dst + dst_offset;
    const uint8_t *v = (const uint8_t *)src + src_offset;
    for (uint64_t i = 0; i + esize <= bytes; i += esize)
        combine_reduce(d + i, v + i, type, op);
    return TMA_OK;
}

/* ---------------------------------------------------------------------------------------------
 * im2col loads (tma/rules.h, "im2col maps"): pixels_per_column rows; the walk steps w by element_stride[1], and a
 * spatial coordinate that passes global_dim + upper - 1 restarts at lower and carries into the next dimension
 * (the outermost spatial one into n); each fetched pixel is the walked one plus the copy's offsets.
 * ------------------------------------------------------------------------------------------- */

tma_status tma_model_load_im2col(const tma_im2col_desc *d, const int32_t coord[5], const uint16_t offset[3],
                                 void *smem, size_t smem_bytes, uint32_t dst_offset) {
    if (smem == NULL)
        return TMA_ERR_NULL_ARG;
    tma_rule_sink s = tma_rule_sink_make(NULL, 0);
    if (tma_rules_im2col_copy_(d, coord, offset, dst_offset, &s) != TMA_OK) /* dst_offset: the address's low bits */
        return s.first;
    if (d->interleave != TMA_INTERLEAVE_NONE)
        return tma_rule_status(TMA_RULE_MODEL_IM2COL_INTERLEAVE);
    const uint64_t need = tma_rule_im2col_smem_bytes(d);
    if (!tma_model_fits_(dst_offset, need, smem_bytes))
        return tma_rule_status(TMA_RULE_MODEL_SMEM_BOUNDS);

    const uint32_t rank = d->rank, last = rank - 1u, esize = tma_rule_dtype_bytes(d->dtype);
    const uint32_t pitch = (uint32_t)tma_rule_im2col_row_pitch(d);
    const uint8_t *global = (const uint8_t *)d->global_address;
    uint8_t *sm = (uint8_t *)smem;
    int64_t pos[5] = {0, 0, 0, 0, 0}; /* the walked pixel: pos[1 .. rank-2] spatial, pos[rank-1] = n */
    for (uint32_t i = 1; i < rank; i++)
        pos[i] = coord[i];
    for (uint32_t p = 0; p < d->pixels_per_column; p++) {
        /* the pixel fetched: the walked one plus the offsets; inside the tensor, or filled whole */
        bool inside = true;
        uint64_t row_off = 0;
        for (uint32_t i = 1; i < rank; i++) {
            const int64_t x = pos[i] + (i < last ? (int64_t)offset[i - 1u] : 0);
            if (x < 0 || (uint64_t)x >= d->global_dim[i])
                inside = false;
            else
                row_off += (uint64_t)x * d->global_stride[i - 1u]; /* within the checked extent */
        }
        const uint32_t row = dst_offset + p * pitch;
        for (uint32_t k = 0; k < d->channels_per_pixel; k++) {
            const int64_t ch = (int64_t)coord[0] + k; /* channels >= global_dim[0] (or < 0) fill per element */
            const bool in = inside && ch >= 0 && (uint64_t)ch < d->global_dim[0];
            load_value(sm + tma_swizzle_addr(d->swizzle, row + k * esize), in ? global + row_off + (uint64_t)ch * esize : NULL,
                       d->dtype, d->oob_fill, esize);
        }
        /* the next pixel: step w; carry past the bounding box's end, restarting at its lower corner */
        uint32_t i = 1;
        pos[1] += tma_rule_im2col_estride(d, 1);
        while (i < last && pos[i] > (int64_t)d->global_dim[i] + d->pixel_box_upper[i - 1u] - 1) {
            pos[i] = d->pixel_box_lower[i - 1u];
            i++;
            pos[i] += tma_rule_im2col_estride(d, i);
        }
    }
    return TMA_OK;
}
