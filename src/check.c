/* The host library's checks and footprints: the rules of tma/detail/rules.h, their violations formatted into
 * tma_diag messages. No rule is written here; each lives, with its message, in the rule table. */
#include <string.h>

#include "internal.h"

/* Every rule tma_rules_tiled can report at once is at most one per field and dimension: 64 is plenty. */
enum { MAX_VIOLATIONS = 64 };

size_t tma_dtype_size(tma_dtype dtype) { return tma_rule_dtype_bytes(dtype); }

const char *tma_dtype_name(tma_dtype dtype) { return tma_rule_dtype_name(dtype); }

const char *tma_swizzle_name(tma_swizzle mode) { return tma_rule_swizzle_name(mode); }

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

/* The whole message buffer is written (zeros after the text): no stale bytes reach a caller that copies it. */
static void diag_of(const tma_violation *v, tma_diag *diag) {
    diag->status = tma_violation_status(v);
    memset(diag->message, 0, sizeof diag->message);
    tma_violation_format(v, diag->message, sizeof diag->message);
}

static tma_status diag_ok(tma_diag *diag) {
    if (diag)
        *diag = (tma_diag){TMA_OK, ""};
    return TMA_OK;
}

/* The first violation of s into diag (optional); the status. */
static tma_status first_to_diag(const tma_rule_sink *s, tma_diag *diag) {
    if (s->count == 0)
        return diag_ok(diag);
    if (diag)
        diag_of(&s->out[0], diag);
    return s->first;
}

tma_status tma_check_tiled(const tma_tiled_desc *d, tma_diag *diag) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    tma_rules_tiled(d, &s);
    return first_to_diag(&s, diag);
}

/* Every violation of s (its buffer v) into diags[0..cap), the count into *count (optional); the status. */
static tma_status all_to_diags(const tma_rule_sink *s, const tma_violation *v, tma_diag *diags, size_t cap,
                               size_t *count) {
    const size_t shown = diags == NULL ? 0 : s->count < cap ? s->count : cap;
    for (size_t i = 0; i < shown && i < MAX_VIOLATIONS; i++)
        diag_of(&v[i], &diags[i]);
    if (count)
        *count = s->count;
    return s->first;
}

tma_status tma_check_tiled_all(const tma_tiled_desc *d, tma_diag *diags, size_t cap, size_t *count) {
    tma_violation v[MAX_VIOLATIONS];
    tma_rule_sink s = tma_rule_sink_make(v, MAX_VIOLATIONS);
    tma_rules_tiled(d, &s);
    return all_to_diags(&s, v, diags, cap, count);
}

static tma_status check_copy(const tma_tiled_desc *d, const int32_t coord[5], int store, tma_diag *diag) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    tma_rules_tiled_copy_(d, coord, ~0u, store, &s);
    return first_to_diag(&s, diag);
}

tma_status tma_check_coords(const tma_tiled_desc *d, const int32_t coord[5], tma_diag *diag) {
    return check_copy(d, coord, 0, diag);
}

tma_status tma_check_store_coords(const tma_tiled_desc *d, const int32_t coord[5], tma_diag *diag) {
    return check_copy(d, coord, 1, diag);
}

tma_status tma_check_bulk(const char *what, const void *global, uint32_t smem_addr, uint64_t bytes, tma_diag *diag) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    tma_rules_bulk(what ? what : "copy", (uint64_t)(uintptr_t)global, smem_addr, bytes, &s);
    return first_to_diag(&s, diag);
}

tma_status tma_check_reduce(tma_dtype type, tma_reduce op, int form, tma_diag *diag) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    tma_rules_reduce(type, op, form, &s);
    return first_to_diag(&s, diag);
}

tma_status tma_check_bulk_cluster(const char *what, uint32_t dst_addr, uint32_t src_addr, uint64_t bytes, uint32_t rank,
                                  uint32_t cluster_blocks, tma_diag *diag) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    tma_rules_bulk_cluster(what ? what : "copy", dst_addr, src_addr, bytes, rank, cluster_blocks, &s);
    return first_to_diag(&s, diag);
}

tma_status tma_check_multicast(uint32_t cta_mask, uint32_t cluster_blocks, tma_diag *diag) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    tma_rules_multicast("load", cta_mask, cluster_blocks, &s);
    return first_to_diag(&s, diag);
}

/* ---------------------------------------------------------------------------------------------
 * Footprints: 0 when the fields they read are out of range.
 * ------------------------------------------------------------------------------------------- */

size_t tma_box_rows(const tma_tiled_desc *d) { return tma_rule_box_fields_valid(d) ? tma_rule_box_rows(d) : 0; }

size_t tma_box_row_pitch(const tma_tiled_desc *d) {
    return tma_rule_box_fields_valid(d) ? tma_rule_box_row_pitch(d) : 0;
}

size_t tma_box_tx_bytes(const tma_tiled_desc *d) {
    return tma_rule_box_fields_valid(d) ? tma_rule_box_tx_bytes(d) : 0;
}

size_t tma_box_smem_bytes(const tma_tiled_desc *d) {
    return tma_rule_box_fields_valid(d) ? tma_rule_box_smem_bytes(d) : 0;
}

size_t tma_global_extent_bytes(const tma_tiled_desc *d) {
    if (d == NULL)
        return 0;
    const uint64_t extent = tma_rule_global_extent(d);
    return extent > SIZE_MAX ? 0 : (size_t)extent;
}

/* ---------------------------------------------------------------------------------------------
 * im2col maps
 * ------------------------------------------------------------------------------------------- */

tma_status tma_check_im2col(const tma_im2col_desc *d, tma_diag *diag) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    tma_rules_im2col(d, &s);
    return first_to_diag(&s, diag);
}

tma_status tma_check_im2col_all(const tma_im2col_desc *d, tma_diag *diags, size_t cap, size_t *count) {
    tma_violation v[MAX_VIOLATIONS];
    tma_rule_sink s = tma_rule_sink_make(v, MAX_VIOLATIONS);
    tma_rules_im2col(d, &s);
    return all_to_diags(&s, v, diags, cap, count);
}

tma_status tma_check_im2col_coords_diag(const tma_im2col_desc *d, const int32_t coord[5], const uint16_t offset[3],
                                        tma_diag *diag) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    tma_rules_im2col_copy_(d, coord, offset, ~0u, &s);
    return first_to_diag(&s, diag);
}

tma_status tma_check_im2col_coords(const tma_im2col_desc *d, const int32_t coord[5], const uint16_t offset[3]) {
    return tma_check_im2col_coords_diag(d, coord, offset, NULL);
}

size_t tma_im2col_tx_bytes(const tma_im2col_desc *d) {
    return tma_rule_im2col_fields_valid(d) ? (size_t)tma_rule_im2col_tx_bytes(d) : 0;
}

size_t tma_im2col_smem_bytes(const tma_im2col_desc *d) {
    return tma_rule_im2col_fields_valid(d) ? (size_t)tma_rule_im2col_smem_bytes(d) : 0;
}
