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
 */
#include <string.h>

#include "internal.h"

/* Everything a copy needs, derived once from a descriptor. */
typedef struct box_walk {
    const tma_tiled_desc *d;
    uint32_t esize;
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
    if (d->interleave != TMA_INTERLEAVE_NONE)
        return tma_rule_status(TMA_RULE_MODEL_INTERLEAVE);
    const uint64_t need = tma_rule_box_smem_bytes(d);
    if (offset > smem_bytes || need > smem_bytes - offset || (uint64_t)offset + need > UINT32_MAX)
        return tma_rule_status(TMA_RULE_MODEL_SMEM_BOUNDS); /* shared addresses are 32-bit */

    w->d = d;
    w->esize = tma_rule_dtype_bytes(d->dtype);
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

static bool is_tf32(tma_dtype t) { return t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ; }

/* TF32 conversion on load: round to nearest even at bit 13; NaN -> 0x7FFFE000 (measured). */
static uint32_t tf32_round(uint32_t bits) {
    if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0)
        return 0x7FFFE000u;
    uint32_t lsb = (bits >> 13) & 1u;
    return (bits + 0x0FFFu + lsb) & ~0x1FFFu;
}

static void fill_oob(uint8_t *dst, const box_walk *w) {
    if (w->d->oob_fill == TMA_OOB_NAN) {
        for (uint32_t b = 0; b < w->esize; b += 2) { /* 0x7FF7 little-endian, repeated */
            dst[b] = 0xF7;
            dst[b + 1] = 0x7F;
        }
    } else {
        memset(dst, 0, w->esize);
    }
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
        for (uint32_t j = 0; j < w.count[0]; j++, logical += w.esize) {
            uint8_t *dst = sm + tma_swizzle_addr(d->swizzle, logical);
            int64_t x0 = (int64_t)coord[0] + j;
            if (!row_inside || x0 < 0 || (uint64_t)x0 >= w.limit0) {
                fill_oob(dst, &w);
                continue;
            }
            const uint8_t *src = global + row_off + (uint64_t)x0 * w.esize;
            if (is_tf32(d->dtype)) {
                uint32_t bits;
                memcpy(&bits, src, 4);
                bits = tf32_round(bits);
                memcpy(dst, &bits, 4);
            } else {
                memcpy(dst, src, w.esize);
            }
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

/* One reduction per representation. Integer adds wrap (signed ones are added as unsigned: same bits);
 * min and max compare as the type says. */
#define DEFINE_REDUCE(name, T)                                                                      \
    static void name(uint8_t *global, const uint8_t *shared, tma_reduce op) {                      \
        T g, v, r;                                                                                  \
        memcpy(&g, global, sizeof g);                                                               \
        memcpy(&v, shared, sizeof v);                                                               \
        r = op == TMA_REDUCE_MIN ? (v < g ? v : g) : (v > g ? v : g);                               \
        memcpy(global, &r, sizeof r);                                                               \
    }
DEFINE_REDUCE(minmax_u32, uint32_t)
DEFINE_REDUCE(minmax_i32, int32_t)
DEFINE_REDUCE(minmax_u64, uint64_t)
DEFINE_REDUCE(minmax_i64, int64_t)
#undef DEFINE_REDUCE

static void add_wrapping(uint8_t *global, const uint8_t *shared, size_t bytes) {
    uint64_t g = 0, v = 0; /* little-endian: the low `bytes` bytes hold the value */
    memcpy(&g, global, bytes);
    memcpy(&v, shared, bytes);
    g += v;
    memcpy(global, &g, bytes);
}

static void combine_reduce(uint8_t *global, const uint8_t *shared, tma_dtype dtype, tma_reduce op) {
    if (dtype == TMA_DTYPE_F32) { /* add only: reduce_modelled lets nothing else through */
        float g, v;
        memcpy(&g, global, 4);
        memcpy(&v, shared, 4);
        g += v;
        memcpy(global, &g, 4);
    } else if (op == TMA_REDUCE_ADD) {
        add_wrapping(global, shared, tma_rule_dtype_bytes(dtype));
    } else if (dtype == TMA_DTYPE_U32) {
        minmax_u32(global, shared, op);
    } else if (dtype == TMA_DTYPE_I32) {
        minmax_i32(global, shared, op);
    } else if (dtype == TMA_DTYPE_U64) {
        minmax_u64(global, shared, op);
    } else {
        minmax_i64(global, shared, op);
    }
}

static bool reduce_modelled(tma_dtype t, tma_reduce op) {
    if (t == TMA_DTYPE_U32 || t == TMA_DTYPE_I32 || t == TMA_DTYPE_U64 || t == TMA_DTYPE_I64)
        return op == TMA_REDUCE_ADD || op == TMA_REDUCE_MIN || op == TMA_REDUCE_MAX;
    return t == TMA_DTYPE_F32 && op == TMA_REDUCE_ADD;
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
    if (d != NULL && tma_rule_dtype_bytes(d->dtype) != 0 && !reduce_modelled(d->dtype, op))
        return TMA_ERR_UNSUPPORTED;
    return store_like(d, coord, smem, smem_bytes, src_offset, combine_reduce, op);
}
