/* libtma device API for tensor maps built or changed on the device (tensormap.replace; CUDA, sm_90a).
 *
 * One small named function per instruction, and a builder that keeps the descriptor beside the map, so that
 * the rules of tma/rules.h check a map built on the device exactly as tma_check_tiled checks one on the host.
 *
 *     __shared__ tma_map_builder b;                     // the staging map (128-byte aligned) and its descriptor
 *     if (lane == 0) {
 *         tma_builder_from_template(&b, &tmpl, &tmpl_desc);          // or tma_builder_from_zero(&b)
 *         tma_builder_edit(&b, tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, (uint64_t)ptr));
 *         tma_builder_edit(&b, tma_edit(TMA_FIELD_GLOBAL_DIM, 1, rows));
 *     }
 *     __syncwarp();
 *     tma_builder_publish(&b, &slot);                   // the whole warp: check (checked mode), copy, release
 *     if (lane == 0) {
 *         tma_map_acquire(&slot.map);                   // before the first copy through the map in global memory
 *         tma_load_2d(tile, &slot, &bar, x, y);
 *     }
 *
 * WHICH FENCE A MAP NEEDS, by where it lives (measured on an H200: docs/HARDWARE.md, "Maps changed on the device"):
 *   - a kernel parameter (`const __grid_constant__ tma_tensor`) or __constant__, written by the host before the
 *     launch: none;
 *   - global memory written by the host (cudaMemcpy) before the launch: none (loads were right without the
 *     acquire fence); tma_map_acquire is cheap and harmless;
 *   - global memory written on the device: the writer publishes (tma_builder_publish: the release copy from
 *     shared memory; or tma_map_publish_in_place after editing the map in global memory), and every thread that
 *     copies through the map acquires it first (tma_map_acquire), after it has learnt through a barrier or a
 *     flag that the map was published. Without the acquire, a thread that switched a map's address between two
 *     buffers 20,000 times got the first buffer's bytes in every load: 10,000 stale, as if the copy engine kept
 *     the map it had read first.
 * A map in global memory must be 64-byte aligned (16 or 32: "misaligned address"; tma_tensor is 128).
 * The map of a copy in flight must not change: give each map a slot of its own until the copies through it have
 * completed (the grouped GEMM builds its table of maps in a kernel before the one that copies through them).
 *
 * WHAT A MAP BUILT HERE HOLDS: the replace instructions write the fields; the driver also writes a few derived
 * bytes (the box's byte count, a swizzle-dependent word) that no instruction updates. Maps with those bytes stale
 * (template edits) or zero (built from zeros) copied every byte right in every test; their bytes differ from the
 * driver's encoding only there. One edit the instructions cannot make: leaving a TF32 type (the builder and
 * tma_map_edit_in_step encode the map again from zeros; tma_rule_edit_needs_reencode).
 *
 * TEMPLATES (TMA_DESC_TEMPLATE: a host-encoded map whose NULL address and placeholder strides the device replaces):
 * the flag describes the template as encoded, never a map built from it. The builder's descriptor drops it
 * (tma_builder_from_template), so does every edit (tma_desc_apply_edit) and tma_map_publish_in_place: the rules
 * check the built map as a real one, and refuse a NULL address no edit replaced.
 *
 * Only tiled maps can be changed, and only on sm_90a (the replace instructions): in another device pass these
 * functions trap (TMA_PTX_SM90A). */
#ifndef TMA_TENSORMAP_CUH
#define TMA_TENSORMAP_CUH

#include <stdint.h>

#include "tma/detail/rules.h" /* the edits' operand encodings and the rules on the device (not API) */
#include "tma/device.cuh"
#include "tma/rules.h"

/* Said at compile time (as device.cuh does below sm_90): tensormap.replace and its release copy exist only in the
 * arch-specific sm_90a target, and in a device pass for sm_90 or newer without it (-arch=sm_90, compute capability
 * 10.x) they compile to traps. -DTMA_NO_ARCH_WARNING silences it, for a kernel that takes this path only where
 * __CUDA_ARCH_FEAT_SM90_ALL is defined. */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && \
    !defined(TMA_NO_ARCH_WARNING)
#warning "libtma: tma/tensormap.cuh is compiled for sm_90 or newer without the arch-specific sm_90a target, so \
tensormap.replace and its release copy compile to traps (\"illegal instruction\" at run time). Compile with \
-arch=sm_90a (-gencode=arch=compute_90a,code=sm_90a; CMake: CUDA_ARCHITECTURES 90a); -DTMA_NO_ARCH_WARNING \
silences this."
#endif

/* The CUDA version this file is compiled with (major * 1000 + minor * 10): the stride operand's encoding
 * depends on it (tma_rule_edit_operand). */
#if defined(__CUDACC_VER_MAJOR__)
#define TMA_CUDACC_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)
#else
#define TMA_CUDACC_VERSION 0
#endif

/* ---------------------------------------------------------------------------------------------
 * One function per instruction. The map may be in shared memory (a staging copy) or in global memory;
 * the address decides which form of the instruction runs.
 * ------------------------------------------------------------------------------------------- */

/* tensormap.replace.tile.FIELD on map m: the .shared::cta form for a map in shared memory, else .global. FMT
 * lists the operands after the address (%1, %2). */
#define TMA_REPLACE_(m, FIELD, TYPE, FMT, ...)                                                                  \
    do {                                                                                                       \
        if (__isShared(m))                                                                                     \
            TMA_PTX_SM90A("tensormap.replace.tile." FIELD ".shared::cta.b1024." TYPE " [%0], " FMT ";" ::"r"(     \
                              tma_smem_addr(m)),                                                               \
                          __VA_ARGS__                                                                          \
                          : "memory");                                                                         \
        else                                                                                                   \
            TMA_PTX_SM90A("tensormap.replace.tile." FIELD ".global.b1024." TYPE " [%0], " FMT ";" ::"l"(m),     \
                          __VA_ARGS__                                                                          \
                          : "memory");                                                                         \
    } while (0)

/* The ordinal of a per-dimension field is an immediate: one case per dimension. */
#define TMA_REPLACE_DIM_(m, FIELD, TYPE, CONSTRAINT, ord, value)                                                \
    do {                                                                                                       \
        switch (ord) {                                                                                         \
        case 0: TMA_REPLACE_(m, FIELD, TYPE, "0, %1", CONSTRAINT(value)); break;                                \
        case 1: TMA_REPLACE_(m, FIELD, TYPE, "1, %1", CONSTRAINT(value)); break;                                \
        case 2: TMA_REPLACE_(m, FIELD, TYPE, "2, %1", CONSTRAINT(value)); break;                                \
        case 3: TMA_REPLACE_(m, FIELD, TYPE, "3, %1", CONSTRAINT(value)); break;                                \
        default: TMA_REPLACE_(m, FIELD, TYPE, "4, %1", CONSTRAINT(value)); break;                               \
        }                                                                                                      \
    } while (0)

/* The value of an enumeration field is an immediate too: one case per code. ptxas (CUDA 13.0, sm_90a) accepts
 * elemtype 0..12, interleave_layout 0..2, swizzle_mode 0..3, fill_mode 0..1; a code outside its field's range
 * cannot be encoded, and traps (the rules refuse such a descriptor before a map is published). */
#define TMA_CODE_(m, FIELD, N) TMA_REPLACE_(m, FIELD, "b32", "%1", "n"(N))
#define TMA_CODES_2_(m, FIELD, code)                                                                            \
    case 0: TMA_CODE_(m, FIELD, 0); break;                                                                     \
    case 1: TMA_CODE_(m, FIELD, 1); break;
#define TMA_CODES_3_(m, FIELD, code) TMA_CODES_2_(m, FIELD, code) case 2: TMA_CODE_(m, FIELD, 2); break;
#define TMA_CODES_4_(m, FIELD, code) TMA_CODES_3_(m, FIELD, code) case 3: TMA_CODE_(m, FIELD, 3); break;
#define TMA_CODES_13_(m, FIELD, code)                                                                           \
    TMA_CODES_4_(m, FIELD, code)                                                                               \
    case 4: TMA_CODE_(m, FIELD, 4); break;                                                                     \
    case 5: TMA_CODE_(m, FIELD, 5); break;                                                                     \
    case 6: TMA_CODE_(m, FIELD, 6); break;                                                                     \
    case 7: TMA_CODE_(m, FIELD, 7); break;                                                                     \
    case 8: TMA_CODE_(m, FIELD, 8); break;                                                                     \
    case 9: TMA_CODE_(m, FIELD, 9); break;                                                                     \
    case 10: TMA_CODE_(m, FIELD, 10); break;                                                                   \
    case 11: TMA_CODE_(m, FIELD, 11); break;                                                                   \
    case 12: TMA_CODE_(m, FIELD, 12); break;
#define TMA_REPLACE_CODE_(m, FIELD, COUNT, code)                                                                \
    do {                                                                                                       \
        switch (code) {                                                                                        \
            TMA_CODES_##COUNT##_(m, FIELD, code)                                                               \
        default: __trap();                                                                                     \
        }                                                                                                      \
    } while (0)

/** tensormap.replace of one field of map m with the instruction's raw operand (ordinal `ord` for the
 *  per-dimension fields: the dimension, or the stride index dim - 1). Most code wants tma_map_apply_edit, which
 *  takes the descriptor's value and encodes it. */
TMA_DEV void tma_map_replace_raw(tma_map *m, tma_map_field field, uint32_t ord, uint64_t operand) {
    switch (field) {
    case TMA_FIELD_GLOBAL_ADDRESS: TMA_REPLACE_(m, "global_address", "b64", "%1", "l"(operand)); break;
    case TMA_FIELD_RANK: TMA_REPLACE_(m, "rank", "b32", "%1", "r"((uint32_t)operand)); break;
    case TMA_FIELD_GLOBAL_DIM: TMA_REPLACE_DIM_(m, "global_dim", "b32", "r", ord, (uint32_t)operand); break;
    case TMA_FIELD_GLOBAL_STRIDE: TMA_REPLACE_DIM_(m, "global_stride", "b64", "l", ord, operand); break;
    case TMA_FIELD_BOX_DIM: TMA_REPLACE_DIM_(m, "box_dim", "b32", "r", ord, (uint32_t)operand); break;
    case TMA_FIELD_ELEMENT_STRIDE: TMA_REPLACE_DIM_(m, "element_stride", "b32", "r", ord, (uint32_t)operand); break;
    case TMA_FIELD_DTYPE: TMA_REPLACE_CODE_(m, "elemtype", 13, (uint32_t)operand); break;
    case TMA_FIELD_INTERLEAVE: TMA_REPLACE_CODE_(m, "interleave_layout", 3, (uint32_t)operand); break;
    case TMA_FIELD_SWIZZLE: TMA_REPLACE_CODE_(m, "swizzle_mode", 4, (uint32_t)operand); break;
    case TMA_FIELD_OOB_FILL: TMA_REPLACE_CODE_(m, "fill_mode", 2, (uint32_t)operand); break;
    default: break;
    }
}

/** Apply an edit to map m (in shared or global memory): the field set to the descriptor's value, encoded as
 *  the instruction takes it (tma_rule_edit_operand). An edit that is not valid (tma_edit_is_valid) does nothing.
 *  The instruction alone cannot take a map away from a TF32 type (tma_rule_edit_needs_reencode): code that
 *  may do so edits with the descriptor beside the map (tma_map_edit_in_step, or the builder). */
TMA_DEV void tma_map_apply_edit(tma_map *m, tma_map_edit e) {
    if (!tma_edit_is_valid(e))
        return;
    const uint32_t ord = e.field == TMA_FIELD_GLOBAL_STRIDE ? e.dim - 1u : e.dim;
    tma_map_replace_raw(m, (tma_map_field)e.field, ord, tma_rule_edit_operand(e, TMA_CUDACC_VERSION));
}

/** Encode map m (in shared or global memory) from zeros for descriptor d: every field d has, by the replace
 *  instructions. The L2 promotion stays TMA_L2_NONE. One thread; publish or release afterwards. */
TMA_DEV void tma_map_encode_desc(tma_map *m, const tma_tiled_desc *d) {
    for (int i = 0; i < 16; i++)
        m->opaque[i] = 0u;
    tma_map_apply_edit(m, tma_edit(TMA_FIELD_GLOBAL_ADDRESS, 0, (uint64_t)(uintptr_t)d->global_address));
    tma_map_apply_edit(m, tma_edit(TMA_FIELD_RANK, 0, d->rank));
    for (uint32_t i = 0; i < d->rank && i < (uint32_t)TMA_MAX_RANK; i++) {
        tma_map_apply_edit(m, tma_edit(TMA_FIELD_GLOBAL_DIM, i, d->global_dim[i]));
        if (i > 0)
            tma_map_apply_edit(m, tma_edit(TMA_FIELD_GLOBAL_STRIDE, i, d->global_stride[i - 1]));
        tma_map_apply_edit(m, tma_edit(TMA_FIELD_BOX_DIM, i, d->box_dim[i]));
        tma_map_apply_edit(m, tma_edit(TMA_FIELD_ELEMENT_STRIDE, i, tma_rule_estride_value(d->element_stride[i])));
    }
    tma_map_apply_edit(m, tma_edit(TMA_FIELD_DTYPE, 0, (uint64_t)d->dtype));
    tma_map_apply_edit(m, tma_edit(TMA_FIELD_INTERLEAVE, 0, (uint64_t)d->interleave));
    tma_map_apply_edit(m, tma_edit(TMA_FIELD_SWIZZLE, 0, (uint64_t)d->swizzle));
    tma_map_apply_edit(m, tma_edit(TMA_FIELD_OOB_FILL, 0, (uint64_t)d->oob_fill));
}

/** Apply edit e to map m (shared or global memory) and to the descriptor d that m stands for, in step: the one
 *  field replaced, or, for an edit no instruction can make (tma_rule_edit_needs_reencode: leaving a TF32 type),
 *  the whole map encoded again from zeros. One thread. */
TMA_DEV void tma_map_edit_in_step(tma_map *m, tma_tiled_desc *d, tma_map_edit e) {
    const int reencode = tma_rule_edit_needs_reencode(d, e);
    tma_desc_apply_edit(d, e);
    if (reencode)
        tma_map_encode_desc(m, d);
    else
        tma_map_apply_edit(m, e);
}

/** tensormap.cp_fenceproxy: copy a map from shared memory to global memory and release it to the tensormap proxy
 *  at GPU scope. Warp-collective: every thread of the warp executes it, with the same operands. */
TMA_DEV void tma_map_publish(tma_map *global_dst, const tma_map *shared_src) {
    TMA_PTX_SM90A("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], "
                  "128;" ::"l"(global_dst),
                  "r"(tma_smem_addr(shared_src))
                  : "memory");
}

/** fence.proxy.tensormap::generic.release.gpu: after fields were replaced in a map in global memory, release
 *  the writes to the tensormap proxy (the publish of a map changed in place). */
TMA_DEV void tma_map_release(void) { TMA_PTX("fence.proxy.tensormap::generic.release.gpu;" ::: "memory"); }

/** fence.proxy.tensormap::generic.acquire.gpu: before this thread's first copy through a map in global memory
 *  that was published on the device, acquire it (or the copy may read a stale map). */
TMA_DEV void tma_map_acquire(const tma_map *global_map) {
    TMA_PTX("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(global_map) : "memory");
}

/** prefetch.tensormap of a map anywhere (param, const or global space). */
TMA_DEV void tma_map_prefetch(const tma_map *m) { TMA_PTX("prefetch.tensormap [%0];" ::"l"(m) : "memory"); }

/* ---------------------------------------------------------------------------------------------
 * The rules on the device, and publishing a map changed in place
 * ------------------------------------------------------------------------------------------- */

/** The rules of tma_check_tiled on descriptor d, in any build: a kernel that builds maps may check them and
 *  decide. @return TMA_OK or the first broken rule's status, with the violation in *v (optional;
 *  tma_print_violation says it as the host would). */
TMA_DEV tma_status tma_map_check(const tma_tiled_desc *d, tma_violation *v) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1u);
    const tma_status st = tma_rules_tiled(d, &s);
    if (st != TMA_OK && v)
        *v = first;
    return st;
}

/* Checked mode: refuse to publish a map whose descriptor breaks a rule (print as the host would, trap). */
TMA_DEV void tma_map_check_before_publish_(const tma_tiled_desc *d) {
#ifdef TMA_CHECKED
    tma_violation v;
    if (tma_map_check(d, &v) != TMA_OK)
        tma_checked_fail_(&v);
#else
    (void)d;
#endif
}

/** Publish a map changed in place in global memory (dst->map, edited with tma_map_edit_in_step) that stands for
 *  descriptor d: in checked mode (-DTMA_CHECKED) d is checked against every rule first (a violation is printed
 *  as the host would word it, then a trap); dst->box receives d's box facts; then the release fence. Both treat d
 *  as a real map, without TMA_DESC_TEMPLATE (a NULL address left in it is refused). One thread, the one that made
 *  the edits. Copies through dst acquire it first (tma_map_acquire). */
TMA_DEV void tma_map_publish_in_place(tma_tensor *dst, const tma_tiled_desc *d) {
    tma_tiled_desc built = *d; /* a map published is a real one, even if d was a template's (TMA_DESC_TEMPLATE) */
    built.flags &= ~TMA_DESC_TEMPLATE;
    tma_map_check_before_publish_(&built);
    dst->box = tma_rule_box_info(&built);
    tma_map_release();
}

/* ---------------------------------------------------------------------------------------------
 * The builder: a staging map in shared memory and the descriptor it stands for, changed in step.
 * ------------------------------------------------------------------------------------------- */

/** A map being built on the device. Lives in shared memory (`__shared__ tma_map_builder b;`): one thread edits
 *  it, the warp publishes it. */
typedef struct tma_map_builder {
    tma_map map;          /**< the staging map (128-byte aligned, as tma_map is) */
    tma_tiled_desc desc;  /**< the descriptor the map stands for: what the rules check */
} tma_map_builder;

/** Start from a template: a map encoded on the host (tmpl->map, in param, const or global space) and the
 *  descriptor it was encoded from, which may be a TMA_DESC_TEMPLATE one (a NULL address, placeholder strides). The
 *  map being built is a real one: the builder's descriptor drops TMA_DESC_TEMPLATE, so its check refuses a NULL
 *  address the edits did not replace, and applies the store-side rules of a TMA_DESC_STORE template. One thread. */
TMA_DEV void tma_builder_from_template(tma_map_builder *b, const tma_tensor *tmpl, const tma_tiled_desc *tmpl_desc) {
    for (int i = 0; i < 16; i++)
        b->map.opaque[i] = tmpl->map.opaque[i];
    b->desc = *tmpl_desc;
    b->desc.flags &= ~TMA_DESC_TEMPLATE;
}

/** Start from 128 zero bytes (sm_90a: a zero map is a valid start). Every field a map needs must then be set;
 *  the L2 promotion stays TMA_L2_NONE (no instruction sets it). One thread. */
TMA_DEV void tma_builder_from_zero(tma_map_builder *b) {
    for (int i = 0; i < 16; i++)
        b->map.opaque[i] = 0u;
    b->desc = tma_rule_zero_map_desc();
}

/** Set one field of the staging map and of its descriptor (tma_map_edit_in_step). One thread (the others wait at
 *  __syncwarp before publishing). */
TMA_DEV void tma_builder_edit(tma_map_builder *b, tma_map_edit e) { tma_map_edit_in_step(&b->map, &b->desc, e); }

/** The builder's descriptor against every rule (tma_map_check). */
TMA_DEV tma_status tma_builder_check(const tma_map_builder *b, tma_violation *v) { return tma_map_check(&b->desc, v); }

/** The builder's descriptor against the rules of its tensor in global memory alone (tma_rules_tiled_tensor): the
 *  whole check of a map started from a template that passed every rule (a tma_tensor the host made) and edited only
 *  in its address, global dimensions or strides, where it says what tma_builder_check would, with a fraction of the
 *  code. Any other edit needs tma_builder_check. @return TMA_OK or the first broken rule's status, the violation
 *  in *v (optional) */
TMA_DEV tma_status tma_builder_check_tensor(const tma_map_builder *b, tma_violation *v) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1u);
    const tma_status st = tma_rules_tiled_tensor(&b->desc, &s);
    if (st != TMA_OK && v)
        *v = first;
    return st;
}

/** Publish the builder's map into dst (a tma_tensor in global memory): the map by the release copy, and the box
 *  facts derived from the same descriptor. Warp-collective: every thread of the warp calls it with the same
 *  arguments, after the edits (__syncwarp). Checked mode (-DTMA_CHECKED) first checks the descriptor against
 *  every rule and, on a violation, prints it as the host would and traps. Copies through dst must acquire it
 *  first (tma_map_acquire). */
TMA_DEV void tma_builder_publish(const tma_map_builder *b, tma_tensor *dst) {
    if ((threadIdx.x & 31u) == 0u) {
        tma_map_check_before_publish_(&b->desc);
        dst->box = tma_rule_box_info(&b->desc);
    }
    __syncwarp();
    tma_map_publish(&dst->map, &b->map);
}

#endif /* TMA_TENSORMAP_CUH */
