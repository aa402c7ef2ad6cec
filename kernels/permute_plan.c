/* tma_permute's plan (pm_plan, permute_tiles.h: THE PLAN) and its tile pipeline on the CPU model of the copy
 * engine (tma_permute_model, tma/kernels.h): the same descriptors, tile coordinates, lane map and helper-addressed
 * shared-memory reads and writes as permute.cu. Plain C: built into libtma_kernels and, without nvcc, into the
 * cpu tests. */
#include <stdlib.h>
#include <string.h>

#include "kernel_diag.h"
#include "permute_tiles.h"

#include "tma/swizzle.h"

/* One dimension of the simplified permutation: its size, src and dst strides (bytes), the src dimensions in it. */
typedef struct pm_dim {
    uint64_t n, ss, ts;
    uint32_t first, mask;
} pm_dim;

/* Unsigned types: the bits move as they are (measured on an H200: fp32 / bf16 maps instead of u32 / u16 changed
 * the 8192^2 transposes by under 0.5 points). */
static tma_dtype pm_dtype(uint32_t e) {
    return e == 1 ? TMA_DTYPE_U8 : e == 2 ? TMA_DTYPE_U16 : e == 4 ? TMA_DTYPE_U32 : TMA_DTYPE_U64;
}

/* Strides of dimensions 1..rank-1 with 0 resolved to dense; saturates instead of overflowing (the checker
 * refuses anything >= 2^40 anyway). */
static void pm_resolve_strides(uint32_t e, uint32_t rank, const uint64_t *dims, const uint64_t *given,
                               uint64_t *out) {
    out[0] = e;
    for (uint32_t i = 1; i < rank; i++) {
        const uint64_t dense =
            dims[i - 1] != 0 && out[i - 1] > UINT64_MAX / dims[i - 1] ? UINT64_MAX : out[i - 1] * dims[i - 1];
        out[i] = given[i - 1] ? given[i - 1] : dense;
    }
}

void pm_strides_of(const tma_permute_desc *d, uint64_t src_stride[5], uint64_t dst_stride[5]) {
    const uint32_t r = d->rank < 5u ? d->rank : 5u;
    uint64_t dd[5] = {0, 0, 0, 0, 0}, ds[5] = {0, 0, 0, 0, 0};
    uint32_t inv[5] = {0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < r; i++) { /* perm checked by pm_plan; guarded for a plan changed by hand */
        dd[i] = d->src_dims[d->perm[i] < 5u ? d->perm[i] : 0];
        if (d->perm[i] < 5u)
            inv[d->perm[i]] = i;
    }
    for (uint32_t j = 0; j < 5u; j++)
        src_stride[j] = dst_stride[j] = 0;
    pm_resolve_strides(d->elem_bytes, r, d->src_dims, d->src_strides, src_stride);
    pm_resolve_strides(d->elem_bytes, r, dd, d->dst_strides, ds);
    for (uint32_t j = 0; j < r; j++)
        dst_stride[j] = ds[inv[j]];
}

/* PACKED TILES (pm_packed_cols in permute_tiles.h): where src's innermost dimension is at most half of W and there
 * are slabs to put side by side, turn the checked TRANSPOSE plan into a packed one. Not where its a is short too
 * (box[1] < W: a short tile) or the threads store (their chunks assume lines of one slab); kept only if both new
 * maps pass the rules, so a refusal never depends on it. */
static void pm_pack(pm_layout *L) {
    pm_grid *g = &L->grid;
    const uint32_t e = L->elem_bytes, w = tr_box_cols(e);
    if (g->rank < 3u || g->box[1] < w || g->tstore)
        return;
    const uint32_t c0 = pm_packed_cols(L->ld.global_dim[0], L->ld.global_dim[2], e);
    if (c0 == 0u)
        return;
    /* rows of a: a multiple of w, up to a few-channel tile's lines */
    const uint64_t rows = (L->ld.global_dim[1] + w - 1u) / w * w, most = PM_MAX_LINES(e, 1);
    const uint32_t br = (uint32_t)(rows < most ? rows : most);
    tma_tiled_desc ld = L->ld, st = L->st;
    /* load map {0, slab, a, ...}: dimensions 1 and 2 swapped (strides: global_stride[k - 1] is dimension k's) */
    ld.global_dim[1] = L->ld.global_dim[2], ld.global_dim[2] = L->ld.global_dim[1];
    ld.global_stride[0] = L->ld.global_stride[1], ld.global_stride[1] = L->ld.global_stride[0];
    ld.swizzle = TMA_SWIZZLE_NONE;
    ld.box_dim[0] = c0, ld.box_dim[1] = w / c0, ld.box_dim[2] = br;
    st.box_dim[1] = c0, st.box_dim[2] = w / c0; /* {a: W, 0: C0, slab: K} */
    tma_violation why;
    if (tma_rule_check_tiled(&ld, &why) != TMA_OK || tma_rule_check_tiled(&st, &why) != TMA_OK)
        return;
    g->box[0] = c0, g->box[1] = br, g->box[2] = w / c0;
    L->tiles = 1;
    for (uint32_t k = 0; k < g->rank; k++) { /* the grid keeps the kernel's order {0, a, slab, ...} */
        g->n[k] = (uint32_t)((L->ld.global_dim[k] + g->box[k] - 1u) / g->box[k]);
        L->tiles *= g->n[k];
    }
    L->ld = ld, L->st = st;
    pm_grid_dst(L, g); /* the box changed: its thread stores and hints */
}

/* The rules of a tensor: every address and stride whole elements, strides below 2^40 (a dimension of one element has
 * no stride that matters). `which` names the tensor, dims its dimensions, given its strides as described and
 * resolved (0 = dense) those the kernels use. */
static tma_status pm_check_tensor(const char *which, uint32_t e, uint32_t r, const void *addr, const uint64_t *dims,
                                  const uint64_t *given, const uint64_t *resolved, tma_diag *diag) {
    if ((uintptr_t)addr % e != 0u)
        return KD_FAIL(diag, PM_ADDR_ALIGN, tma_arg_s(which), tma_arg_x((uintptr_t)addr), tma_arg_u(e));
    for (uint32_t i = 1; i < r; i++) {
        if (given[i - 1] % e != 0u)
            return KD_FAIL(diag, PM_STRIDE_ELEM, tma_arg_s(which), tma_arg_u(i - 1u), tma_arg_u(given[i - 1]),
                           tma_arg_u(e));
        if (dims[i] > 1u && resolved[i] >= TMA_GLOBAL_STRIDE_LIMIT)
            return KD_FAIL(diag, PM_STRIDE_HUGE, tma_arg_s(which), tma_arg_u(i - 1u), tma_arg_u(resolved[i]));
    }
    return TMA_OK;
}

/* dst must be a tensor whose elements share no bytes (a store into it would race with itself): the overlap rule of
 * tma/detail/rules.h on dst's dimensions, with rows of exactly dst dimension 0's bytes. */
static tma_status pm_check_dst_one_to_one(const tma_permute_desc *d, const uint64_t *ts, tma_diag *diag) {
    tma_tiled_desc t;
    memset(&t, 0, sizeof t);
    t.dtype = pm_dtype(d->elem_bytes);
    t.rank = d->rank;
    for (uint32_t i = 0; i < d->rank; i++) {
        t.global_dim[i] = d->src_dims[d->perm[i]];
        if (i)
            t.global_stride[i - 1] = ts[d->perm[i]];
    }
    tma_overlap o;
    if (tma_rule_one_to_one_rows(&t, t.global_dim[0] * d->elem_bytes, &o))
        return TMA_OK;
    return KD_FAIL(diag, PM_DST_OVERLAP, tma_arg_u(o.dim), tma_arg_u(t.global_stride[o.dim - 1]), tma_arg_u(o.span),
                   tma_arg_dims(o.inner_mask));
}

/* The address of dst (or its phase) OR'd with the dst strides of n dimensions but `innermost` (dst's innermost, whose
 * stride is the element): its low bits say whether every dst row starts on 16 bytes (a TMA map) or 32 (a sector). */
static uint64_t pm_dst_row_phases(uint64_t addr, const uint64_t *strides, uint32_t n, uint32_t innermost) {
    for (uint32_t k = 0; k < n; k++)
        addr |= k == innermost ? 0u : strides[k];
    return addr;
}

/* The thread kernel's tile (permute_tiles.h, THE THREAD KERNEL): tx x ty. A transpose takes a dst row that is short
 * whole (dimension 1 up to PM_THR_WHOLE_Y: 3 channels, 24 heads), or, where dst's rows start on 32-byte sectors, a src
 * row that is short whole (up to PM_THR_WHOLE_X: 3 channels, a 7x7 map); else PM_THR_TX or PM_THR_TX_SECTORS src
 * elements by the rest. A copy takes up to PM_THR_THREADS elements of a row by the rest. */
static void pm_thr_tile_pick(pm_thr *R, int sectors) {
    const uint32_t n0 = R->n[0], n1 = R->n[1], most = PM_THR_TILE_ELEMS;
    uint32_t tx, ty;
    if (!R->transpose) {
        tx = n0 < PM_THR_THREADS ? n0 : PM_THR_THREADS;
        ty = n1 < most / tx ? n1 : most / tx;
    } else if (n1 <= PM_THR_WHOLE_Y) {
        ty = n1;
        tx = n0 < most / ty ? n0 : most / ty;
    } else if (sectors && n0 <= PM_THR_WHOLE_X) {
        tx = n0;
        ty = n1 < most / tx ? n1 : most / tx;
    } else {
        tx = sectors ? PM_THR_TX_SECTORS : PM_THR_TX;
        tx = n0 < tx ? n0 : tx;
        ty = n1 < most / tx ? n1 : most / tx;
    }
    R->tx = tx, R->ty = ty;
    R->mx = pm_div_magic(tx), R->my = pm_div_magic(ty);
}

/* SPANS (permute_tiles.h, pm_thr_span_ways): the byte of tile element (x, y) that the access touches, and the place
 * in the access's order of element o (pm_thr_load_xy's src order, or pm_thr_store_xy's dst order for a transpose's
 * src reads): `along` its row of `side` elements, `row` which row. */
static uint32_t pm_thr_span_byte(const pm_thr *R, enum pm_span_access how, uint32_t x, uint32_t y) {
    return how == PM_READS_SRC_SPAN    ? (y * R->tx + x) * R->e
           : how == PM_WRITES_DST_ROWS ? x * pm_thr_row_stride(R) + y * R->e
                                       : pm_thr_span_at(R, 0, x, y);
}
static int pm_thr_span_dst_order(const pm_thr *R, enum pm_span_access how) {
    return how == PM_READS_SRC_SPAN && R->transpose;
}
static uint32_t pm_thr_span_side(const pm_thr *R, enum pm_span_access how) {
    return pm_thr_span_dst_order(R, how) ? R->ty : R->tx;
}
static void pm_thr_span_xy(const pm_thr *R, enum pm_span_access how, uint32_t along, uint32_t row, uint32_t *x,
                           uint32_t *y) {
    const int dst_order = pm_thr_span_dst_order(R, how);
    *x = dst_order ? row : along, *y = dst_order ? along : row;
}

/* The ways of one pass, the warp's 32 elements from o0 (fewer at the tile's end), each distinct word once in its
 * bank. */
static uint32_t pm_thr_pass_ways(const pm_thr *R, enum pm_span_access how, uint32_t o0) {
    const uint32_t side = pm_thr_span_side(R, how), total = R->tx * R->ty;
    uint32_t along = o0 % side, row = o0 / side;
    uint32_t seen[32][32], ways[32] = {0}, most = 1;
    for (uint32_t o = o0; o < o0 + 32u && o < total; o++) {
        uint32_t x, y;
        pm_thr_span_xy(R, how, along, row, &x, &y);
        const uint32_t w = pm_thr_span_byte(R, how, x, y) / 4u, bank = w % 32u;
        uint32_t j = 0;
        while (j < ways[bank] && seen[bank][j] != w)
            j++;
        if (j == ways[bank]) {
            seen[bank][ways[bank]++] = w;
            most = ways[bank] > most ? ways[bank] : most;
        }
        if (++along == side)
            along = 0, row++;
    }
    return most;
}

/* Every pass of the tile, each kind counted once; two passes of 32 elements are of one kind where every element of
 * one touches a byte a multiple of 4 past the same element of the other (its words moved by one count: a rotation of
 * the banks, the same ways):
 * - passes inside one row of the order whose first bytes are equal mod 4 (the elements step along the row alike);
 * - passes q elements apart, q = side x the rows whose steps make whole words (a row on moves each byte by `step`:
 *   e, or tx e for a copy's src reads): the starts 32 p take every value mod q they ever take in the first
 *   q / gcd(q, 32) passes.
 * The last pass, if part of one, is counted apart. Counting every pass of 8192-element span tiles took about 25 us a
 * plan, most of a small tensor's one-call time (H100, docs/lab/permute.md "One call for small tensors"). */
uint32_t pm_thr_span_ways(const pm_thr *R, enum pm_span_access how) {
    const uint32_t total = R->tx * R->ty, full = total / 32u, side = pm_thr_span_side(R, how);
    const uint32_t step = how == PM_READS_SRC_SPAN && !R->transpose ? R->tx * R->e : R->e;
    const uint32_t q = side * (step % 4u == 0u ? 1u : step % 2u == 0u ? 2u : 4u);
    const uint32_t low = q & (0u - q), period = q / (low < 32u ? low : 32u);
    uint32_t in_row[4] = {0, 0, 0, 0}, most = 1; /* the ways of in-row passes by first byte mod 4; 0: not yet */
    for (uint32_t p = 0; p < full && p < period; p++) {
        const uint32_t along = 32u * p % side, row = 32u * p / side;
        uint32_t x, y, w;
        pm_thr_span_xy(R, how, along, row, &x, &y);
        const uint32_t kind = pm_thr_span_byte(R, how, x, y) % 4u;
        if (along + 32u <= side && in_row[kind]) {
            w = in_row[kind];
        } else {
            w = pm_thr_pass_ways(R, how, 32u * p);
            if (along + 32u <= side)
                in_row[kind] = w;
        }
        most = w > most ? w : most;
    }
    if (total % 32u) {
        const uint32_t w = pm_thr_pass_ways(R, how, 32u * full);
        most = w > most ? w : most;
    }
    return most;
}

/* DST SPANS (permute_tiles.h): a transpose whose tiles hold dst's rows whole, rows that lie back to back in dst, with
 * few bank conflicts on the way into the span buffers. */
static uint32_t pm_thr_dspan(const pm_thr *R) {
    return R->transpose && R->ty == R->n[1] && R->ds[0] == (uint64_t)R->n[1] * R->e &&
           pm_thr_span_ways(R, PM_WRITES_DST_SPAN) <= PM_THR_SPAN_MAX_WAYS;
}

/* DST ROW SPANS (permute_tiles.h): a transpose whose tiles' dst row segments are PM_THR_ROW_SPAN_MIN bytes or more, with
 * few bank conflicts on the way into their buffers. */
static uint32_t pm_thr_drows(const pm_thr *R) {
    return R->transpose && R->ty * R->e >= PM_THR_ROW_SPAN_MIN &&
           pm_thr_span_ways(R, PM_WRITES_DST_ROWS) <= PM_THR_SPAN_MAX_WAYS;
}

/* SRC SPANS (permute_tiles.h): the tile of a transpose whose src rows are short (up to PM_THR_WHOLE_X elements) and
 * lie back to back in src: whole src rows, up to PM_THR_SPAN_TILE_BYTES. 0 where src does not span. */
static uint32_t pm_thr_sspan_tile(pm_thr *R) {
    const uint32_t n0 = R->n[0], n1 = R->n[1], e = R->e;
    if (!R->transpose || n0 > PM_THR_WHOLE_X || R->ss[1] != (uint64_t)n0 * e)
        return 0;
    const uint32_t most = PM_THR_SPAN_TILE_BYTES / (n0 * e);
    R->tx = n0, R->ty = n1 < most ? n1 : most;
    R->mx = pm_div_magic(R->tx), R->my = pm_div_magic(R->ty);
    R->pitch = pm_thr_pitch(R->tx, e, R->transpose);
    R->sspan = 1;
    return 1;
}

/* CHUNK TRANSPOSE (permute_tiles.h): a transpose whose tiles hold neither side's rows whole, long in both dimensions
 * (PM_CT_MIN_BYTES of each); where some dst row starts off 16 bytes (dst_row_phases: pm_dst_row_phases) with the halo;
 * not where dst rows start on 32-byte sectors with 4- and 8-byte elements, whose element tiles of 32 x 64
 * (PM_THR_TX_SECTORS) are faster. H100, % of a copy, element kernel / chunk transpose: dst rows on 16 bytes: bf16 T
 * 4096 x 50257 64.1-64.3 / 82.3-83.4, fp32 [333, 444, 55] (2, 0, 1) 98.3-99.9 / 104.5-109.3, fp32 T 4096 x 50257 (on
 * sectors) 86.4-86.7 / 80.8-80.9; off them, with the halo, its band walk and L2 hints: T 12345 x 6789 u8 38.9-39.6 /
 * 71-73, bf16 62.9 / 77-79, fp32 70.8 / 78, fp64 (element tiles with 2 KiB dst row spans) 75.1-76.0 / 79.9-80.0, T
 * 6789 x 12345 fp64 75.1 / 78.2 (docs/lab/permute.md "The chunk transpose", "Bands and L2 hints"). */
static uint32_t pm_thr_chunks(const pm_thr *R, uint64_t dst_row_phases) {
    return R->transpose && !R->dspan && !R->sspan && (uint64_t)R->n[0] * R->e >= PM_CT_MIN_BYTES &&
           (uint64_t)R->n[1] * R->e >= PM_CT_MIN_BYTES && !(dst_row_phases % 32u == 0u && R->e >= 4u);
}

/* THE THREAD KERNEL's plan (permute_tiles.h) for the simplified dimensions v in the kernel's order o. */
static void pm_plan_threads(pm_layout *L, const void *dst, const pm_dim *v, uint32_t n, const uint32_t *o) {
    pm_thr *R = &L->thr;
    memset(R, 0, sizeof *R);
    const uint32_t e = L->elem_bytes;
    R->rank = n, R->transpose = L->transpose, R->e = e;
    for (uint32_t k = 0; k < 5u; k++) {
        R->n[k] = k < n ? (uint32_t)v[o[k]].n : 1u;
        R->ss[k] = k < n ? v[o[k]].ss : 0u;
        R->ds[k] = k < n ? v[o[k]].ts : 0u;
    }
    /* a transpose's dst rows (dimension 0 indices) on 32-byte sectors? */
    pm_thr_tile_pick(R, pm_dst_row_phases((uintptr_t)dst, R->ds, n, 1u) % 32u == 0u);
    R->pitch = pm_thr_pitch(R->tx, e, R->transpose);
    R->dspan = pm_thr_dspan(R);
    /* tiles that hold whole dst rows keep them; else whole src rows where they span and the tile's dst runs (ty) get
     * no shorter (fp32 [333, 444, 55] (2, 0, 1): 55 x 74 src spans against 8 x 256 tiles, 88% of a copy against 91%) */
    pm_thr S = *R;
    if (!R->dspan && pm_thr_sspan_tile(&S) && S.ty >= R->ty) {
        S.dspan = pm_thr_dspan(&S);
        if (S.dspan || pm_thr_span_ways(&S, PM_READS_SRC_SPAN) <= PM_THR_SPAN_MAX_WAYS)
            *R = S;
    }
    R->drows = !R->dspan && !R->sspan && pm_thr_drows(R);
    const uint64_t dst_row_phases = pm_dst_row_phases((uintptr_t)dst, R->ds, n, 1u);
    if (pm_thr_chunks(R, dst_row_phases)) {
        R->chunks = 1, R->drows = 0, R->halo = dst_row_phases % 16u != 0u;
        R->tx = PM_CT_ROW_BYTES / e, R->ty = PM_CT_ROWS;
        R->mx = pm_div_magic(R->tx), R->my = pm_div_magic(R->ty);
        R->pitch = pm_thr_pitch(R->tx, e, R->transpose);
    }
    L->tiles = 1;
    for (uint32_t k = 0; k < 5u; k++) {
        const uint32_t b = k == 0 ? R->tx : k == 1 ? R->ty : 1u;
        R->tn[k] = (uint32_t)(((uint64_t)R->n[k] + b - 1u) / b);
        L->tiles *= R->tn[k];
    }
    L->threads = 1;
    L->grid.rank = n;
    for (uint32_t k = 0; k < 5u; k++) {
        L->grid.box[k] = k == 0 ? R->tx : k == 1 ? R->ty : 1u;
        L->grid.n[k] = R->tn[k];
        L->src_dim[k] = k < n ? v[o[k]].first : 0u;
        L->merged[k] = k < n ? v[o[k]].mask : 0u;
    }
}

/* The TMA kernels' plan (THE PLAN, steps 2 and 3) for the simplified dimensions v in the kernel's order o; returns 0
 * where TMA cannot move the tensor exactly (a src map the rules refuse: an address or stride not of 16 bytes; a copy's
 * dst rows that a store would write past, pm_row_spills, or a transpose's of 1-byte elements, which has no thread
 * stores), and the plan is the thread kernel's. A transpose whose dst is no map is stored by the threads at any
 * alignment (g->dst_any) where its dst rows are PM_TSTORE_ANY_MIN_ROW bytes or more; shorter ones go to the thread
 * kernel, which was faster there. */
static int pm_plan_tma(pm_layout *L, const tma_permute_desc *d, pm_dim *v, uint32_t n, uint32_t a, uint32_t *o) {
    const uint32_t e = L->elem_bytes;
    tma_tiled_desc *ld = &L->ld, *st = &L->st;
    memset(ld, 0, sizeof *ld);
    ld->dtype = pm_dtype(e);
    ld->global_address = (void *)(uintptr_t)d->src;
    ld->l2_promotion = TMA_L2_256B;
    ld->oob_fill = TMA_OOB_ZERO;
    ld->rank = n;
    for (uint32_t k = 0; k < n; k++) {
        ld->global_dim[k] = v[o[k]].n;
        if (k)
            ld->global_stride[k - 1] = v[o[k]].ss;
        L->src_dim[k] = v[o[k]].first;
        L->merged[k] = v[o[k]].mask;
    }
    *st = *ld;
    st->global_address = d->dst;
    st->flags = TMA_DESC_STORE;
    if (L->transpose) { /* store order {a, 0, rest}: swap the first two */
        st->global_dim[0] = v[a].n, st->global_dim[1] = v[0].n;
        st->global_stride[0] = v[0].ts;
        for (uint32_t k = 2; k < n; k++)
            st->global_stride[k - 1] = v[o[k]].ts;
    } else {
        for (uint32_t k = 1; k < n; k++)
            st->global_stride[k - 1] = v[o[k]].ts;
    }
    if (pm_row_spills(st->global_dim[0], e) && (!L->transpose || e == 1u))
        return 0;

    pm_grid *g = &L->grid;
    g->rank = n;
    g->group = PM_DEFAULT_GROUP;
    for (uint32_t k = 0; k < 5u; k++)
        g->box[k] = 1; /* dimensions past the rank: one index */
    if (L->transpose) {
        const uint32_t w = tr_box_cols(e);
        const uint64_t na = v[a].n, rows = (na + w - 1) / w * w, slabs = n >= 3 ? v[o[2]].n : 1u;
        uint64_t ts[5]; /* g->dst_any, as pm_grid_dst will find it */
        for (uint32_t k = 0; k < n; k++)
            ts[k] = v[k].ts;
        const uint32_t tstore = pm_use_tstore(v[0].ts, e, w, na) ||
                                pm_dst_row_phases(L->dst_phase, ts, n, a) % TMA_GLOBAL_ALIGN != 0u;
        /* tall tiles (PM_TALL_TILE_LINES, pm_tall) for short and thread-stored 2-byte tiles, and where a tile stacks
         * slabs of padded rows (pm_stacks_slabs) */
        const uint32_t short_rows = pm_short_rows(na, slabs, e),
                       L_ = PM_MAX_LINES(e, short_rows != 0u || pm_tstore_tall(e, tstore, pm_src_keep(v[a].ss, e)) ||
                                                pm_stacks_slabs(na, e, n));
        /* a multiple of w, at most L_ lines, or a short tile's rows */
        const uint32_t br = short_rows ? short_rows : rows < L_ ? (uint32_t)rows : L_;
        /* dimension a short: stack slabs of the next dimension, up to L_ lines (pm_store_coords), as evenly as the
         * tiles along that dimension allow (bf16 NCHW 14x14, W padded: 14 slabs in one tile of 16, not 12 + 2);
         * whole sub-tiles of w lines for a short tile, its last slabs past the tensor where it has fewer */
        uint32_t bc = 1;
        if (n >= 3 && br < L_) {
            const uint32_t most = L_ / br, step = short_rows ? w / br : 1u;
            const uint64_t along = (slabs + most - 1u) / most, even = (slabs + along - 1u) / along;
            bc = (uint32_t)((even + step - 1u) / step * step);
        }
        ld->swizzle = st->swizzle = TMA_SWIZZLE_128B;
        ld->box_dim[0] = w, ld->box_dim[1] = br;
        st->box_dim[0] = w, st->box_dim[1] = w;
        for (uint32_t k = 2; k < n; k++)
            ld->box_dim[k] = st->box_dim[k] = g->box[k] = 1;
        if (n >= 3)
            ld->box_dim[2] = g->box[2] = bc;
        g->box[0] = w, g->box[1] = br;
        g->lim_a = (uint32_t)v[a].n, g->lim_c = n >= 3 ? (uint32_t)v[o[2]].n : 1u, g->lim_0 = (uint32_t)v[0].n;
        pm_grid_dst(L, g);
    } else {
        /* COPY box: dimension 0 up to 256 elements (a 16-byte multiple), then doubling, in turn, src's next
         * dimension and dst's most contiguous one (both streams stay long), then the others, up to
         * PM_COPY_BOX_BYTES. */
        uint64_t b0 = ld->global_dim[0] < TMA_MAX_BOX_DIM ? ld->global_dim[0] : TMA_MAX_BOX_DIM;
        const uint64_t q = tma_box_dim0_unit(e);
        b0 = (b0 + q - 1) / q * q;
        ld->box_dim[0] = (uint32_t)b0;
        for (uint32_t k = 1; k < n; k++)
            ld->box_dim[k] = 1;
        const uint64_t budget = PM_COPY_BOX_BYTES / (b0 * e);
        uint64_t rows = 1;
        uint32_t dn = 0;
        for (uint32_t k = 1; k < n; k++)
            if (ld->global_dim[k] > 1 && (dn == 0 || st->global_stride[k - 1] < st->global_stride[dn - 1]))
                dn = k;
        uint32_t pref[2] = {1u, dn}, np = n > 1 ? (dn && dn != 1 ? 2u : 1u) : 0u;
        for (int phase = 0; phase < 2; phase++)
            for (int grew = 1; grew;) {
                grew = 0;
                const uint32_t cnt = phase == 0 ? np : n - 1u;
                for (uint32_t i = 0; i < cnt; i++) {
                    const uint32_t k = phase == 0 ? pref[i] : i + 1u;
                    const uint64_t cap = ld->global_dim[k] < TMA_MAX_BOX_DIM ? ld->global_dim[k] : TMA_MAX_BOX_DIM;
                    uint64_t nb = 2u * ld->box_dim[k];
                    nb = nb < cap ? nb : cap;
                    if (nb > ld->box_dim[k] && rows / ld->box_dim[k] * nb <= budget) {
                        rows = rows / ld->box_dim[k] * nb;
                        ld->box_dim[k] = (uint32_t)nb;
                        grew = 1;
                    }
                }
            }
        for (uint32_t k = 0; k < n; k++)
            st->box_dim[k] = ld->box_dim[k], g->box[k] = ld->box_dim[k];
        /* read by the TRANSPOSE kernel only; the map's sizes here too, so a run rebuilding the grid from the plan's
         * fields (a plan changed by hand) passes the same argument */
        g->lim_a = n >= 2u ? (uint32_t)ld->global_dim[1] : 1u, g->lim_c = n >= 3u ? (uint32_t)ld->global_dim[2] : 1u;
        g->lim_0 = (uint32_t)ld->global_dim[0];
    }
    L->tiles = 1;
    for (uint32_t k = 0; k < n; k++) {
        g->n[k] = (uint32_t)((ld->global_dim[k] + g->box[k] - 1) / g->box[k]);
        L->tiles *= g->n[k];
    }
    /* the transpose's tile index within a slab is 32-bit: past 2^31 tiles of 16 KiB (32 TiB) the threads take it */
    if (L->transpose && (uint64_t)g->n[0] * g->n[1] >= (1ull << 31))
        return 0;
    /* src must be a TMA map; dst a map too, or, in a transpose of 2- to 8-byte elements, stored by the threads
     * (g->dst_any: pm_grid_dst made tstore so, whatever the map's fault) */
    tma_violation why;
    if (tma_rule_check_tiled(ld, &why) != TMA_OK)
        return 0;
    if (tma_rule_check_tiled(st, &why) != TMA_OK &&
        !(L->transpose && g->dst_any && e >= 2u && st->global_dim[0] * e >= PM_TSTORE_ANY_MIN_ROW))
        return 0;
    if (L->transpose)
        pm_pack(L);
    return 1;
}

tma_status pm_plan(const tma_permute_desc *d, pm_layout *L, tma_diag *diag) {
    if (L == NULL || d == NULL)
        return KD_FAIL(diag, PM_DESC_NULL, tma_arg_s(d == NULL ? "desc" : "layout"));
    memset(L, 0, sizeof *L);
    const uint32_t e = d->elem_bytes, r = d->rank;
    if (e != 1 && e != 2 && e != 4 && e != 8)
        return KD_FAIL(diag, PM_ELEM, tma_arg_u(e));
    if (r < 1 || r > 5)
        return KD_FAIL(diag, PM_RANK, tma_arg_u(r), tma_arg_u(TMA_MAX_RANK));
    if (d->src == NULL || d->dst == NULL)
        return KD_FAIL(diag, PM_POINTER_NULL, tma_arg_s(d->src == NULL ? "src" : "dst"));
    for (uint32_t i = 0; i < r; i++) {
        if (d->src_dims[i] == 0)
            return KD_FAIL(diag, PM_DIM_ZERO, tma_arg_u(i));
        if (d->src_dims[i] > (1ull << 31))
            return KD_FAIL(diag, PM_DIM_HUGE, tma_arg_u(i), tma_arg_u(d->src_dims[i]));
    }
    uint32_t seen = 0;
    for (uint32_t i = 0; i < r; i++) {
        if (d->perm[i] >= r)
            return KD_FAIL(diag, PM_PERM_RANGE, tma_arg_u(i), tma_arg_u(d->perm[i]), tma_arg_u(r - 1));
        if (seen >> d->perm[i] & 1u)
            return KD_FAIL(diag, PM_PERM_REPEAT, tma_arg_u(i), tma_arg_u(d->perm[i]));
        seen |= 1u << d->perm[i];
    }
    /* every stride resolved once: src's and dst's of each src dimension (the merging below and pm_grid_dst) */
    L->src_rank = r;
    L->dst_phase = (uint32_t)((uintptr_t)d->dst % TMA_GLOBAL_ALIGN);
    pm_strides_of(d, L->src_stride, L->dst_stride);
    const uint64_t *ss = L->src_stride, *ts = L->dst_stride;
    uint64_t dd[5] = {1, 1, 1, 1, 1}, dst_by_dim[5] = {0, 0, 0, 0, 0};
    for (uint32_t i = 0; i < r; i++)
        dd[i] = d->src_dims[d->perm[i]], dst_by_dim[i] = ts[d->perm[i]];
    tma_status st = pm_check_tensor("src", e, r, d->src, d->src_dims, d->src_strides, ss, diag);
    if (st == TMA_OK)
        st = pm_check_tensor("dst", e, r, d->dst, dd, d->dst_strides, dst_by_dim, diag);
    if (st == TMA_OK)
        st = pm_check_dst_one_to_one(d, ts, diag);
    if (st != TMA_OK)
        return st;

    /* Step 1 of THE PLAN: drop dimensions of one element (not the innermost of src or dst), merge neighbours
     * that are contiguous in both, in the same order. dst's innermost dimension always starts a group. */
    pm_dim v[5];
    uint32_t n = 0;
    for (uint32_t j = 0; j < r; j++) {
        if (d->src_dims[j] == 1 && j != 0 && j != d->perm[0])
            continue;
        pm_dim x = {d->src_dims[j], ss[j], ts[j], j, 1u << j};
        pm_dim *p = n ? &v[n - 1] : NULL;
        if (p && j != d->perm[0] && p->ss <= UINT64_MAX / p->n && p->ts <= UINT64_MAX / p->n &&
            x.ss == p->ss * p->n && x.ts == p->ts * p->n && p->n * x.n <= (1ull << 31)) {
            p->n *= x.n;
            p->mask |= x.mask;
            continue;
        }
        v[n++] = x;
    }
    uint32_t a = 0; /* the group that holds dst's innermost dimension */
    for (uint32_t k = 0; k < n; k++)
        if (v[k].first == d->perm[0])
            a = k;
    L->elem_bytes = e;
    L->transpose = a != 0;

    /* The kernels list the dimensions in order o[]: COPY as they are, TRANSPOSE {0, a, the rest} (the TMA kernel's
     * store map {a, 0, the rest}). */
    uint32_t o[5], m = 0;
    o[m++] = 0;
    if (a)
        o[m++] = a;
    for (uint32_t k = 1; k < n; k++)
        if (k != a)
            o[m++] = k;
    if (!L->transpose && n == 1) {
        /* A dense run: view it as rows of c elements where a power of two divides it, so a box is many rows. */
        for (uint64_t c = TMA_MAX_BOX_DIM; c >= tma_box_dim0_unit(e); c /= 2)
            if (v[0].n % c == 0 && v[0].n > c) {
                v[1] = (pm_dim){v[0].n / c, v[0].ss * c, v[0].ts * c, v[0].first, v[0].mask};
                v[0].n = c;
                o[m++] = 1, n = 2;
                break;
            }
    }
    if (!pm_plan_tma(L, d, v, n, a, o)) {
        pm_plan_threads(L, d->dst, v, n, o);
    } else if (L->transpose && L->grid.dst_any) {
        /* dst is no map, so the TMA kernel's threads would store it element by element; where the thread kernel's
         * tiles leave as spans (DST SPANS in permute_tiles.h) and read src in runs of PM_THR_SPAN_MIN_RUN bytes or
         * more, or as row spans of twice PM_THR_ROW_SPAN_MIN bytes or more, it takes the tensor instead; and for
         * 8-byte elements with the halo, where the chunk transpose replaced those row spans (faster than them on
         * src rows off 16 bytes, pm_thr_chunks; not measured against the TMA kernel's stores directly) */
        pm_layout T = *L;
        pm_plan_threads(&T, d->dst, v, n, o);
        if ((T.thr.dspan && T.thr.tx * e >= PM_THR_SPAN_MIN_RUN) ||
            (T.thr.drows && T.thr.ty * e >= 2u * PM_THR_ROW_SPAN_MIN) || (T.thr.halo && e == 8u))
            *L = T;
    }
    return kd_ok(diag);
}

void pm_grid_dst(const pm_layout *L, pm_grid *g) {
    const uint32_t e = L->elem_bytes;
    for (uint32_t k = 0; k < 5u; k++)
        g->dst_stride[k] = k < g->rank && L->src_dim[k] < L->src_rank ? L->dst_stride[L->src_dim[k]] : 0u;
    /* map dimension 1 is dst's innermost (its stride is e) */
    g->dst_any = pm_dst_row_phases(L->dst_phase, g->dst_stride, g->rank, 1u) % TMA_GLOBAL_ALIGN != 0u;
    g->tstore = pm_use_tstore(g->dst_stride[0], e, g->box[1], g->lim_a) || g->dst_any;
    g->dspan = pm_dst_slab_runs(g, e);
    /* few-channel tiles take no hints (the tall instances, pm_tall; measured without them: PM_TALL_TILE_LINES) */
    g->src_keep = g->rank >= 2u && L->src_dim[1] < L->src_rank && !pm_few(g->box[0], g->box[1], e)
                      ? pm_src_keep(L->src_stride[L->src_dim[1]], e)
                      : 0u;
    g->outer[0] = 2, g->outer[1] = 3, g->outer[2] = 4;
    /* Tiles walk the outer map dimensions (2..4, one slab after another) in the order of their dst strides, smallest
     * first, so the tiles in flight write neighbouring dst bytes (an insertion sort). The rank-5 case {256, 128, 64,
     * 32, 16}, perm {1, 3, 0, 4, 2} fp32: in src order its ~500 tiles in flight wrote 512-byte rows into 64 regions
     * 64 MiB apart; in dst order, into one 4 MiB run. Measured on an H200 (tma-permute): 84.4% of a device-to-device
     * copy in src order, 88.7% in dst order (with a diagonal tile order that gives this case the same tiles; one
     * session, two binaries), 85.2% with this code in a later session: the gain is not established. */
    for (uint32_t i = 1; i < 3u; i++)
            for (uint32_t j = i; j > 0 && g->outer[j] < g->rank && g->outer[j - 1] < g->rank &&
                                g->dst_stride[g->outer[j]] < g->dst_stride[g->outer[j - 1]];
                 j--) {
                const uint32_t x = g->outer[j];
                g->outer[j] = g->outer[j - 1], g->outer[j - 1] = x;
            }
}

/* ------------------------------------------------------------------------------------------------
 * The CPU-model pipeline
 * ---------------------------------------------------------------------------------------------- */
/* CHUNK TRANSPOSE on the CPU, one tile as the kernel moves it (pm_chunks_kernel): each loaded row's aligned 16-byte
 * chunks from the one holding its first byte (the bytes outside src's extent 0, the chunks past the row's tile bytes
 * not loaded), its 128 bytes from its first element into the tile's words at pm_ct_word (with the halo: the next
 * tile's first V rows too); then each thread's item (pm_ct_item) read back from there, pieces k and (halo) k + 1 of
 * each of its 4 dst rows, and the aligned chunk that starts in piece k stored (piece k itself where the row's phase
 * there is 0), only its bytes inside the dst row where it reaches past it, and the row's first elements where the
 * tile is the row's first. Returns the chunks written, whole or in part, or UINT64_MAX where a chunk would not be
 * aligned (a plan defect). */
static uint64_t pm_model_chunks_tile(const pm_thr *R, const uint8_t *src, uint8_t *dst, const pm_thr_tile *T,
                                     uint32_t *tile) {
    const uint32_t e = R->e, v = pm_ct_v(e), nxb = T->nx * e, most = PM_CT_ROWS + (R->halo ? v : 0u);
    const uint32_t rows = R->n[1] - T->y0 < most ? R->n[1] - T->y0 : most;
    const uint64_t extent = pm_thr_extent(R);
    for (uint32_t y = 0; y < rows; y++) {
        const uint64_t at = T->s + (uint64_t)y * R->ss[1]; /* the row's first byte, from src */
        const uint32_t ph = (uint32_t)(((uintptr_t)src + at) % 16u);
        uint8_t row[9 * 16];
        for (uint32_t c = 0; c < 9u; c++) {
            const int live = c < 8u ? 16u * c < ph + nxb : ph != 0u && 128u < ph + nxb;
            for (uint32_t b = 0; b < 16u; b++) {
                const int64_t o = (int64_t)at - (int64_t)ph + 16 * (int64_t)c + (int64_t)b;
                row[16u * c + b] = live && o >= 0 && (uint64_t)o < extent ? src[o] : 0u;
            }
        }
        for (uint32_t w = 0; w < 32u; w++)
            memcpy(&tile[pm_ct_word(e, y, w)], row + ph + 4u * w, 4);
    }
    uint64_t stores = 0;
    for (uint32_t i = 0; i < PM_THR_THREADS; i++) {
        uint32_t xq, k;
        pm_ct_item(e, i, &xq, &k);
        for (uint32_t j = 0; j < 4u; j++) {
            const uint32_t x = 4u * xq + j;
            if (x >= T->nx)
                continue;
            uint8_t both[32]; /* pieces k and k + 1 of dst row x */
            for (uint32_t m = 0; m < 2u * v && (m < v || R->halo); m++) /* element (x, v k + m) of the tile */
                for (uint32_t b = 0; b < e; b++) {
                    const uint32_t byte = x * e + b, word = tile[pm_ct_word(e, v * k + m, byte / 4u)];
                    both[m * e + b] = (uint8_t)(word >> (8u * (byte % 4u)));
                }
            uint8_t *rs = dst + T->d - (uint64_t)T->y0 * e + (uint64_t)x * R->ds[0], *re = rs + (uint64_t)R->n[1] * e;
            uint8_t *a = rs + (uint64_t)(T->y0 + v * k) * e;
            const uint32_t q = R->halo ? (uint32_t)((uintptr_t)a % 16u) : 0u;
            uint8_t *ca = q ? a + 16u - q : a;
            if ((uintptr_t)ca % 16u != 0u)
                return UINT64_MAX;
            uint8_t *from = ca > rs ? ca : rs, *to = ca + 16 < re ? ca + 16 : re;
            if (from < to) {
                memcpy(from, both + (q ? 16u - q : 0u) + (from - ca), (size_t)(to - from));
                stores++;
            }
            if (q && T->y0 == 0u && k == 0u) { /* the row's first elements, in the chunk before */
                memcpy(a, both, (size_t)(re - a) < 16u - q ? (size_t)(re - a) : 16u - q);
                stores++;
            }
        }
    }
    return stores;
}

/* THE THREAD KERNEL on the CPU: for each tile, every thread's loads into a poisoned tile, then every thread's stores
 * from it, at the kernel's places (pm_thr_load_xy, pm_thr_store_xy). The model checks the geometry; the GPU suites
 * check the kernel's instructions. */
static tma_status pm_model_threads(const tma_permute_desc *desc, const pm_layout *L, tma_permute_model_facts *facts,
                                   tma_diag *diag) {
    const pm_thr *R = &L->thr;
    const uint32_t e = R->e, passes = pm_thr_passes(R);
    if (R->chunks) {
        uint32_t *words = malloc(pm_thr_smem(R));
        if (words == NULL)
            return KD_FAIL(diag, PM_MODEL_MEMORY, tma_arg_u(pm_thr_smem(R)));
        uint64_t stores = 0;
        for (uint64_t t = 0; t < L->tiles; t++) { /* in the kernel's walk: a tile it skips stays poisoned in dst */
            pm_thr_tile T;
            pm_thr_walk_tile(R, t, pm_ct_group(R->halo), &T);
            memset(words, 0xA5, pm_thr_smem(R)); /* poison: every byte stored must come from a load */
            const uint64_t n = pm_model_chunks_tile(R, desc->src, desc->dst, &T, words);
            if (n == UINT64_MAX) {
                free(words);
                return KD_FAIL(diag, PM_LAYOUT_DEFECT, tma_arg_u(0));
            }
            stores += n;
        }
        free(words);
        if (facts) {
            memset(facts, 0, sizeof *facts);
            facts->transpose = 1, facts->threads = 1, facts->tiles = L->tiles, facts->stores = stores;
        }
        return kd_ok(diag);
    }
    /* a tile staged as the kernel does (its pitch, or a dst span), and a src span's buffer */
    const size_t bytes = (size_t)R->ty * R->pitch * e > 2u * (size_t)pm_thr_span_stride(R)
                             ? (size_t)R->ty * R->pitch * e
                             : 2u * (size_t)pm_thr_span_stride(R);
    uint8_t *tile = malloc(bytes), *sbuf = malloc(bytes);
    if (tile == NULL || sbuf == NULL) {
        free(tile), free(sbuf);
        return KD_FAIL(diag, PM_MODEL_MEMORY, tma_arg_u(bytes));
    }
    const uint8_t *src = desc->src;
    uint8_t *dst = desc->dst;
    uint64_t stores = 0;
    for (uint64_t t = 0; t < L->tiles; t++) {
        pm_thr_tile T;
        pm_thr_tile_of(R, t, &T);
        memset(tile, 0xA5, bytes); /* poison: every element stored must come from a load */
        const uint32_t phase = (uint32_t)((uintptr_t)(dst + T.d) % 16u);
        const uint8_t *from = src + T.s; /* element (x, y) at x e + y ss[1] */
        if (R->sspan) { /* the src span arrives whole in its buffer, at its phase (rows back to back: ss[1] = tx e) */
            const uint32_t sphase = (uint32_t)((uintptr_t)from % 16u);
            memset(sbuf, 0x5A, bytes);
            memcpy(sbuf + sphase, from, (size_t)T.nx * T.ny * e);
            from = sbuf + sphase;
        }
        for (uint32_t i = 0; i < PM_THR_THREADS; i++)
            for (uint32_t k = 0; k < passes; k++) {
                uint32_t x, y;
                pm_thr_load_xy(R, i, k, &x, &y);
                const uint32_t row_phase = (uint32_t)((uintptr_t)(dst + T.d + (uint64_t)x * R->ds[0]) % 16u);
                const size_t at = R->dspan   ? pm_thr_span_at(R, phase, x, y)
                                  : R->drows ? (size_t)x * pm_thr_row_stride(R) + row_phase + (size_t)y * e
                                             : ((size_t)y * R->pitch + x) * e;
                if (x < T.nx && y < T.ny)
                    memcpy(tile + at, from + (uint64_t)x * e + (uint64_t)y * R->ss[1], e);
            }
        if (R->drows) { /* each row segment leaves whole: a bulk copy of its aligned interior, its ends by threads */
            for (uint32_t x = 0; x < T.nx; x++) {
                uint8_t *to = dst + T.d + (uint64_t)x * R->ds[0];
                const uint32_t row_phase = (uint32_t)((uintptr_t)to % 16u);
                memcpy(to, tile + (size_t)x * pm_thr_row_stride(R) + row_phase, (size_t)T.ny * e);
                stores += (row_phase + T.ny * e + 15u) / 16u;
            }
            continue;
        }
        if (R->dspan) { /* the span leaves whole: its aligned interior by one bulk copy, its ends by the threads */
            const uint32_t len = T.nx * T.ny * e;
            memcpy(dst + T.d, tile + phase, len);
            stores += (phase + len + 15u) / 16u; /* 16-byte chunks written, whole or in part */
            continue;
        }
        for (uint32_t i = 0; i < PM_THR_THREADS; i++)
            for (uint32_t k = 0; k < passes; k++) {
                uint32_t x, y;
                pm_thr_store_xy(R, i, k, &x, &y);
                if (x < T.nx && y < T.ny) {
                    memcpy(dst + T.d + (uint64_t)x * R->ds[0] + (uint64_t)y * R->ds[1],
                           tile + ((size_t)y * R->pitch + x) * e, e);
                    stores++;
                }
            }
    }
    free(tile), free(sbuf);
    if (facts) {
        memset(facts, 0, sizeof *facts);
        facts->transpose = L->transpose, facts->threads = 1;
        facts->tiles = L->tiles, facts->stores = stores;
    }
    return kd_ok(diag);
}

tma_status tma_permute_model(const tma_permute_desc *desc, tma_permute_model_facts *facts, tma_diag *diag) {
    pm_layout L;
    tma_status s = pm_plan(desc, &L, diag);
    if (s != TMA_OK)
        return s;
    if (L.threads)
        return pm_model_threads(desc, &L, facts, diag);
    const uint32_t e = L.elem_bytes, w = tr_box_cols(e),
                   v = TMA_SWIZZLE_CHUNK_BYTES / e > 1u ? TMA_SWIZZLE_CHUNK_BYTES / e : 1u;
    const size_t in_bytes = tma_box_smem_bytes(&L.ld);
    const size_t out_bytes = L.transpose ? in_bytes : 0u; /* the tile's lines / W boxes of W lines */
    uint8_t *tin = aligned_alloc(TMA_SWIZZLE_PERIOD_128B, tma_swizzle_round_up(TMA_SWIZZLE_128B, in_bytes));
    uint8_t *tout =
        out_bytes ? aligned_alloc(TMA_SWIZZLE_PERIOD_128B, tma_swizzle_round_up(TMA_SWIZZLE_128B, out_bytes)) : NULL;
    if (!tin || (out_bytes && !tout)) {
        free(tin), free(tout);
        return KD_FAIL(diag, PM_MODEL_MEMORY, tma_arg_u(in_bytes + out_bytes));
    }
    const tma_swizzle sw = TMA_SWIZZLE_128B, sw_in = pm_packed(&L.grid, e) ? TMA_SWIZZLE_NONE : sw;
    uint64_t stores = 0;
    for (uint64_t t = 0; t < L.tiles && s == TMA_OK; t++) {
        int32_t lc[5];
        memset(tin, 0xA5, in_bytes); /* poison: every byte used must come from the copy */
        if (!L.transpose) {
            pm_copy_coords(&L.grid, t, lc);
            if ((s = tma_model_load_tiled(&L.ld, lc, tin, in_bytes, 0)) == TMA_OK)
                s = tma_model_store_tiled(&L.st, lc, tin, in_bytes, 0);
            stores++;
            continue;
        }
        pm_transpose_coords(&L.grid, t, lc);
        memset(tout, 0x5A, out_bytes);
        int32_t mc[5];
        pm_load_order(pm_packed(&L.grid, e), lc, mc);
        if ((s = tma_model_load_tiled(&L.ld, mc, tin, in_bytes, 0)) != TMA_OK)
            break;
        const uint32_t sub = (uint32_t)(in_bytes / TMA_SWIZZLE_LINE_BYTES) / w;
        const uint32_t qa = L.grid.box[1] >= w ? L.grid.box[1] / w : 1u;
        /* What each of the kernel's threads does: thread b takes block (k, c) of sub-tile q (THE LANE MAP). */
        for (uint32_t b = 0; b < sub * 64u; b++) {
            uint32_t q = b / 64u, k, c;
            tr_lane_block(b % 64u, &k, &c);
            uint8_t blk[TMA_SWIZZLE_CHUNK_BYTES][TMA_SWIZZLE_CHUNK_BYTES]; /* v <= 16 lines of a chunk */
            for (uint32_t i = 0; i < v; i++) /* 16-byte read of line q*w + k*v + i, chunk c */
                memcpy(blk[i], tin + tma_swizzle_elem(sw_in, 0, TMA_SWIZZLE_SPAN_128B, e, q * w + k * v + i, c * v),
                       TMA_SWIZZLE_CHUNK_BYTES);
            for (uint32_t j = 0; j < v; j++) { /* column j of the block becomes line c*v + j, chunk k */
                uint8_t row[TMA_SWIZZLE_CHUNK_BYTES];
                for (uint32_t i = 0; i < v; i++)
                    memcpy(row + i * e, blk[i] + j * e, e);
                memcpy(tout + q * w * TMA_SWIZZLE_LINE_BYTES +
                           tma_swizzle_elem(sw, 0, TMA_SWIZZLE_SPAN_128B, e, c * v + j, k * v),
                       row, TMA_SWIZZLE_CHUNK_BYTES);
            }
        }
        if (L.grid.tstore) { /* what the block's threads store (THREAD STORES in permute_tiles.h) */
            const uint64_t base = pm_tstore_base(&L.grid, lc, e);
            for (uint32_t i = 0; i < sub * 64u * v; i++) {
                pm_slot sl;
                pm_tstore_slot(&L.grid, i, e, &sl);
                const uint32_t bytes = pm_tstore_bytes(&L.grid, lc, &sl, e); /* a row's last chunk: its elements */
                if (bytes && L.grid.dspan) /* into the run buffer (the tile's input stage serves as it here) */
                    memcpy(tin + sl.run_off, tout + sl.soff, bytes);
                else if (bytes)
                    memcpy((uint8_t *)desc->dst + base + sl.rel, tout + sl.soff, bytes);
            }
            if (L.grid.dspan) { /* one bulk copy a slab (the tile's slabs past dst's none) */
                const uint32_t room = pm_dst_run_bytes(&L.grid, e), run = pm_dst_run_len(&L.grid, lc[0], e);
                const uint32_t left = L.grid.lim_c - (uint32_t)lc[2];
                for (uint32_t c = 0; c < L.grid.box[2] && c < left; c++)
                    memcpy((uint8_t *)desc->dst + base + (uint64_t)c * L.grid.dst_stride[2], tin + c * room, run);
            }
            continue;
        }
        for (uint32_t q = 0; q < sub && s == TMA_OK; q++) {
            int32_t c[5];
            if (!pm_store_coords(&L.grid, lc, q % qa, q / qa, w, c)) /* the whole box lies past dst */
                continue;
            s = tma_model_store_tiled(&L.st, c, tout, out_bytes, q * w * TMA_SWIZZLE_LINE_BYTES);
            stores++;
        }
    }
    free(tin), free(tout);
    if (s != TMA_OK)
        return KD_FAIL_STATUS(diag, s, PM_MODEL_COPY, tma_arg_s(tma_strerror(s)));
    if (facts) {
        memset(facts, 0, sizeof *facts);
        facts->load_desc = L.ld, facts->store_desc = L.st, facts->transpose = L.transpose;
        facts->load_tx_bytes = tma_box_tx_bytes(&L.ld), facts->load_smem_bytes = in_bytes;
        facts->store_smem_bytes = tma_box_smem_bytes(&L.st);
        facts->tiles = L.tiles, facts->stores = stores;
    }
    return kd_ok(diag);
}
