/* libtma private helpers shared by the library's translation units. Never installed.
 * The rules and the quantities derived from a descriptor are header-only, for host and device: their public part in
 * tma/rules.h, the machinery (the rule table, the predicates, the formatter) in tma/detail/rules.h. */
#ifndef TMA_INTERNAL_H
#define TMA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tma/detail/rules.h"
#include "tma/tma.h"

/* The descriptor's rules, then (if they pass) one copy's: a load, or a store when `store`, to or from
 * shared address smem_addr (~0u: not known). A store checks its map as one stored through (TMA_DESC_STORE), so an
 * overlapping map is refused with the dimensions named, before the copy's own rules. */
static inline tma_status tma_rules_tiled_copy_(const tma_tiled_desc *d, const int32_t coord[5], uint32_t smem_addr,
                                               int store, tma_rule_sink *s) {
    tma_tiled_desc stored;
    if (d != NULL && store) {
        stored = *d;
        stored.flags |= TMA_DESC_STORE;
        d = &stored;
    }
    if (tma_rules_tiled(d, s) != TMA_OK)
        return s->first;
    const tma_copy_facts facts = tma_rule_copy_facts(d);
    return tma_rules_copy(&facts, d->rank, coord, smem_addr, store, s);
}

/* The model's buffer rule (MODEL_SMEM_BOUNDS): `need` bytes at `offset` lie inside the smem_bytes the caller's buffer
 * holds, and below 2^32 (shared addresses are 32-bit). */
static inline bool tma_model_fits_(uint64_t offset, uint64_t need, size_t smem_bytes) {
    return offset <= smem_bytes && need <= smem_bytes - offset && offset + need <= UINT32_MAX;
}

/* An im2col descriptor's rules, then (if they pass) one load's at shared address smem_addr (~0u: not known). */
static inline tma_status tma_rules_im2col_copy_(const tma_im2col_desc *d, const int32_t coord[5],
                                                const uint16_t offset[3], uint32_t smem_addr, tma_rule_sink *s) {
    if (tma_rules_im2col(d, s) != TMA_OK)
        return s->first;
    const tma_im2col_facts facts = tma_rule_im2col_facts(d);
    return tma_rules_im2col_copy(&facts, d->rank, coord, offset, smem_addr, s);
}

/* ---------------------------------------------------------------------------------------------
 * Library-internal entry points for libtma_kernels (exported by libtma, declared in no installed header; the kernels
 * declare them again in kernels/kernel_maps.h, and tests/test_kernel_messages.c includes both declarations in one
 * translation unit, so they cannot drift apart unnoticed). A kernel builds its descriptors, checks each once through
 * the rules (tma_rule_check_tiled / _im2col, quoting the violation in its own terms), then encodes it here without
 * the second check that tma_tensor_make would run. Not API: they change with the kernels, without notice.
 * ------------------------------------------------------------------------------------------- */
#ifdef __cplusplus
extern "C" {
#endif

/* tma_tensor_make for a descriptor that passes tma_rules_tiled (the caller checked it; t not NULL): the map's
 * alignment, the driver and its encoding, then t->box. @return TMA_OK or the encoder's / driver's refusal (diag) */
tma_status tma_tensor_make_prechecked_(tma_tensor *t, const tma_tiled_desc *d, tma_diag *diag);

/* tma_tensor_make_im2col for a descriptor that passes tma_rules_im2col (the caller checked it; t not NULL). */
tma_status tma_tensor_make_im2col_prechecked_(tma_tensor *t, const tma_im2col_desc *d, tma_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* TMA_INTERNAL_H */
