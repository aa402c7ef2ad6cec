/* libtma: checked TMA tensor-map descriptors and a byte-exact CPU model of the copy engine.
 *
 * Describe a tiled tensor with a plain tma_tiled_desc, check it (tma_check_tiled: every rule of
 * cuTensorMapEncodeTiled, each with its own status and a message naming field, value, limit and fix),
 * encode it (tma_encode_tiled: the driver is found at run time, nothing links against libcuda), and
 * ask what a kernel must keep in step with it (tma_box_tx_bytes, tma_box_smem_bytes). The CPU model
 * (tma_model_load_tiled / tma_model_store_tiled) writes exactly the bytes a TMA copy writes.
 *
 * The rules themselves, their numbers and their messages are shared with the device code: their public half (the
 * limits, the geometry, violations) in tma/rules.h, the rule table and the predicates in tma/detail/rules.h (not API);
 * this header is the host library's interface to them. No CUDA header is needed: the driver's
 * CUtensorMap is only ever passed by address (struct CUtensorMap_st *, which a CUtensorMap * is).
 *
 * Thread safety: every function is reentrant; tma_encode_tiled loads the driver once (pthread_once).
 * Platform: Linux (the driver is opened with dlopen). */
#ifndef TMA_TMA_H
#define TMA_TMA_H

#include <stddef.h>
#include <stdint.h>

#include "tma/rules.h"
#include "tma/swizzle.h"
#include "tma/tensor.h"
#include "tma/types.h"
#include "tma/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The library's version as MAJOR * 10000 + MINOR * 100 + PATCH (TMA_VERSION_NUMBER of the headers it was
 *  built with): compare with TMA_VERSION_NUMBER to detect a header/library mismatch. */
unsigned tma_version(void);
/** The library's version as "MAJOR.MINOR.PATCH". */
const char *tma_version_string(void);

/** Name of a status, e.g. "TMA_ERR_RANK"; "TMA_UNKNOWN_STATUS" for a value not in the table. */
const char *tma_status_name(tma_status s);
/** One-line description of a status; "unknown status" for a value not in the table. */
const char *tma_strerror(tma_status s);

/** The common 2-D case: a row-major matrix of `rows` x `cols` elements, `row_stride_bytes` apart,
 *  copied in boxes of box_rows x box_cols. Dimension 0 is the column index. Nothing is checked. */
tma_tiled_desc tma_desc_2d(tma_dtype dtype, void *base, uint64_t rows, uint64_t cols, uint64_t row_stride_bytes,
                           uint32_t box_rows, uint32_t box_cols, tma_swizzle swizzle);

/* ---------------------------------------------------------------------------------------------
 * Checks (no GPU, no driver).
 * ------------------------------------------------------------------------------------------- */

/** Check a descriptor against every documented rule of cuTensorMapEncodeTiled, plus the rules where
 *  libtma is deliberately stricter, each for a hardware reason (docs/HARDWARE.md has the table): a NULL address
 *  (unless TMA_DESC_TEMPLATE), a box over 227 KiB, an extent past 2^64, the 128B_ATOM swizzles that Hopper lacks.
 *  A view in which two coordinates reach the same bytes (overlapping, transposed or zero strides) is valid: loads
 *  through it are well defined; it is refused only for a map that will be stored through (TMA_DESC_STORE).
 *  @param d     descriptor; may be NULL (TMA_ERR_NULL_ARG)
 *  @param diag  optional; receives the first broken rule and its explanation
 *  @return TMA_OK or the status of the first broken rule */
tma_status tma_check_tiled(const tma_tiled_desc *d, tma_diag *diag);

/** Like tma_check_tiled, but reports every broken rule, not only the first: up to `cap` of them go to
 *  diags[0..cap), and *count (optional) receives how many rules are broken in all. Rules that cannot
 *  be evaluated because an earlier one failed (dimension rules of an invalid rank, say) are skipped.
 *  @return TMA_OK or the status of the first broken rule */
tma_status tma_check_tiled_all(const tma_tiled_desc *d, tma_diag *diags, size_t cap, size_t *count);

/** The per-copy rules every TMA load must meet, checked for a descriptor that passed tma_check_tiled:
 *  coord[0] * element size must be a multiple of 16 bytes (measured: otherwise the copy raises "illegal
 *  instruction", negative coordinates included). coord[i] for i >= rank is ignored. Interleaved maps have
 *  no such rule: their coord[0] counts whole 16/32-byte chunks (measured, docs/HARDWARE.md). No copy goes
 *  through a template (TMA_DESC_TEMPLATE: TMA_ERR_ARG).
 *  @param diag  optional; receives the first broken rule and its explanation, as tma_check_tiled's does
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_COORD_ALIGN, TMA_ERR_ARG, or the descriptor's own error */
tma_status tma_check_coords(const tma_tiled_desc *d, const int32_t coord[5], tma_diag *diag);

/** tma_check_coords plus the rules for stores (and reduce-stores): the descriptor's store-side rules, as with
 *  TMA_DESC_STORE (no two coordinates may reach the same bytes: the store would race with itself; the message
 *  names the dimensions), and no coordinate below zero (measured: a store with a negative coordinate raises
 *  "illegal instruction"; loads accept them and fill).
 *  @return TMA_OK, TMA_ERR_GLOBAL_STRIDE_OVERLAP, TMA_ERR_COORD_NEGATIVE_STORE, or what tma_check_coords
 *          returns */
tma_status tma_check_store_coords(const tma_tiled_desc *d, const int32_t coord[5], tma_diag *diag);

/* ---------------------------------------------------------------------------------------------
 * What a kernel must keep in step with a descriptor. These read only the fields they need (dtype,
 * rank, box_dim, element_stride, swizzle; global_dim and global_stride for the extent) and return 0
 * when one of those is out of range. They do not run the other rules: check the descriptor first.
 * ------------------------------------------------------------------------------------------- */

/** Bytes of one element of `dtype`; 0 for an unsupported type. */
size_t tma_dtype_size(tma_dtype dtype);
/** Short name of a type ("bf16", "f32", ...); "?" for an unsupported one. */
const char *tma_dtype_name(tma_dtype dtype);
/** Name of a swizzle mode ("TMA_SWIZZLE_128B", ...); "?" for an unknown one. */
const char *tma_swizzle_name(tma_swizzle mode);

/** Bytes one box copy delivers: the count an mbarrier must expect (arrive.expect_tx). Dense box bytes,
 *  swizzle padding not counted: elem * prod over i of ceil(box_dim[i] / element_stride[i]), where
 *  dimension 0 has no element stride unless the layout is interleaved. Interleaved maps (measured): dimension 0
 *  counts 16/32-byte chunks and the slice dimension rank-2 adds nothing, so chunk * ceil(box_dim[0] /
 *  element_stride[0]) * prod over i = 1..rank-1, i != rank-2 of ceil(box_dim[i] / element_stride[i]). */
size_t tma_box_tx_bytes(const tma_tiled_desc *d);
/** Bytes between consecutive box rows in shared memory: box_dim[0] * elem, or the whole swizzle span
 *  when a swizzle is set (measured: a narrower row still occupies a span; the rest is untouched).
 *  Interleaved maps: the row's chunks times 16/32 bytes, never padded (measured). */
size_t tma_box_row_pitch(const tma_tiled_desc *d);
/** Rows of a box in shared memory: prod over dimensions 1..rank-1 of ceil(box_dim[i] / element_stride[i])
 *  (interleaved maps: without dimension rank-2, the slice index, which a box never spans). */
size_t tma_box_rows(const tma_tiled_desc *d);
/** Bytes the box occupies in shared memory (rows * row pitch), padding included. */
size_t tma_box_smem_bytes(const tma_tiled_desc *d);
/** Bytes from global_address to one past the last byte a copy through this map can touch: the last
 *  row ends at global_dim[0] * elem rounded up to 16 bytes, because a store writes whole 16-byte
 *  chunks in dimension 0 (measured). Allocate this much for stores. Strides may come in any order.
 *  Interleaved maps: a row is global_dim[0] whole 16/32-byte chunks (measured). */
size_t tma_global_extent_bytes(const tma_tiled_desc *d);

/* ---------------------------------------------------------------------------------------------
 * Encoding (needs the CUDA driver at run time; no GPU is needed to link or to call the rest).
 * ------------------------------------------------------------------------------------------- */

struct CUtensorMap_st; /* cuda.h's CUtensorMap; a CUtensorMap * converts to this without a cast */

/** Check `d`, then encode it with cuTensorMapEncodeTiled, found in libcuda.so.1 at run time
 *  (the environment variable TMA_LIBCUDA names another file). A template (TMA_DESC_TEMPLATE) is encoded as it is,
 *  a NULL address included: the driver encodes NULL from CUDA 12.6 on (CUTLASS notes it; tests/test_gpu_driver.c
 *  checks it); an older driver refuses it (TMA_ERR_DRIVER, saying so), and the template then needs a stand-in
 *  address.
 *  @param map   a CUtensorMap (64-byte aligned by its type), or the map of a tma_tensor
 *  @return TMA_OK; a check's status; TMA_ERR_MAP_ALIGN; TMA_ERR_NO_DRIVER when the driver library or
 *          the function is missing; TMA_ERR_DRIVER when the driver refused (diag names its CUresult) */
tma_status tma_encode_tiled(struct CUtensorMap_st *map, const tma_tiled_desc *d, tma_diag *diag);

/** The box facts of a descriptor that passes tma_check_tiled (all zero for one that does not). */
tma_box_info tma_box_info_of(const tma_tiled_desc *d);

/** Encode `d` into t->map (as tma_encode_tiled) and fill t->box from the same descriptor. t->box.flags has
 *  TMA_BOX_LOAD_ONLY for a view in which two coordinates reach the same bytes (checked mode refuses stores through
 *  it) and TMA_BOX_TEMPLATE for a template (checked mode refuses every copy through it).
 *  @return as tma_encode_tiled */
tma_status tma_tensor_make(tma_tensor *t, const tma_tiled_desc *d, tma_diag *diag);

/* ---------------------------------------------------------------------------------------------
 * CPU model of the copy engine: the reference every test checks against.
 * `smem` stands for shared memory that starts at a 1024-byte aligned address, so an offset into it
 * has the low bits of the real address and gets the same swizzle phase. Loads through interleaved maps are
 * modelled (measured, docs/HARDWARE.md "Interleaved layouts"); stores and reduce-stores through them are not
 * (TMA_ERR_UNSUPPORTED).
 * ------------------------------------------------------------------------------------------- */

/** Write into smem[dst_offset ...] exactly the bytes a tiled load of the box at `coord` writes, and
 *  touch no other byte. d->global_address points to host memory laid out as `d` says. Out-of-bounds
 *  elements become zero, or the 0x7FF7 pattern with TMA_OOB_NAN; TF32 types are rounded to nearest
 *  even at bit 13 and NaNs become 0x7FFFE000 (measured).
 *  @return TMA_OK, a descriptor or coordinate status, TMA_ERR_SMEM_ALIGN (dst_offset % 128),
 *          TMA_ERR_SMEM_BOUNDS */
tma_status tma_model_load_tiled(const tma_tiled_desc *d, const int32_t coord[5], void *smem, size_t smem_bytes,
                                uint32_t dst_offset);

/** The mirror of tma_model_load_tiled: write into global memory what a tiled store of the box in
 *  smem[src_offset ...] writes. Elements outside dimensions 1..rank-1 are not written; in dimension 0
 *  the store writes whole 16-byte chunks, so up to 15 bytes past global_dim[0] * elem in each row
 *  (measured) - see tma_global_extent_bytes. Values are copied bit for bit. The rules are those of
 *  tma_check_store_coords: a map in which two coordinates reach the same bytes is refused.
 *  @return as tma_model_load_tiled, and TMA_ERR_GLOBAL_STRIDE_OVERLAP, TMA_ERR_COORD_NEGATIVE_STORE,
 *          TMA_ERR_UNSUPPORTED (an interleaved map) */
tma_status tma_model_store_tiled(const tma_tiled_desc *d, const int32_t coord[5], const void *smem,
                                 size_t smem_bytes, uint32_t src_offset);

/** Model of a reduce-store: like tma_model_store_tiled, but each written element becomes op(global, shared), for
 *  every (type, op) pair a map can reduce (TMA_REDUCE_FORMS in tma/rules.h; measured on an H200). Integers: add
 *  wraps, min/max by the type's sign, inc/dec wrap at the shared value, and/or/xor on the bits. Floats: add is the
 *  IEEE sum rounded to nearest even, denormals kept; min/max return the non-NaN operand, -0 below +0; every NaN
 *  result is written as TMA_REDUCE_NAN_<type>.
 *  @return as tma_model_store_tiled, and TMA_ERR_REDUCE_TYPE for a pair the copy engine lacks (it would raise
 *          "illegal instruction") */
tma_status tma_model_reduce_tiled(const tma_tiled_desc *d, const int32_t coord[5], const void *smem,
                                  size_t smem_bytes, uint32_t src_offset, tma_reduce op);

/* ---------------------------------------------------------------------------------------------
 * 1-D bulk copies (cp.async.bulk, cp.reduce.async.bulk, cp.async.bulk.prefetch.L2): a byte count and two
 * addresses, no tensor map. Rules (tma_rules_bulk, tma/detail/rules.h): size a multiple of 16 bytes and at most a
 * block's shared memory; global and shared addresses 16-byte aligned. Nothing bounds-checks the copy itself.
 * ------------------------------------------------------------------------------------------- */

/** Check a 1-D bulk copy before issuing it.
 *  @param what       "load", "store", "reduce" or "prefetch": names the copy in the message
 *  @param global     its global address (device pointer; only its value is read)
 *  @param smem_addr  its shared-memory address (the low bits of it suffice), or ~0u for none (a prefetch)
 *  @return TMA_OK, TMA_ERR_BULK_SIZE, TMA_ERR_GLOBAL_ADDRESS_ALIGN or TMA_ERR_SMEM_ALIGN (diag says which) */
tma_status tma_check_bulk(const char *what, const void *global, uint32_t smem_addr, uint64_t bytes, tma_diag *diag);

/** Check that a reduction exists for an element type in a form (a tma_reduce_form: TMA_REDUCE_FORM_BULK, a 1-D
 *  reduce into global memory; _TILED, through a map of that type; _CLUSTER, a 1-D reduce into a cluster peer's
 *  shared memory). @return TMA_OK, TMA_ERR_REDUCE_TYPE or TMA_ERR_ARG */
tma_status tma_check_reduce(tma_dtype type, tma_reduce op, int form, tma_diag *diag);

/** Check a 1-D copy or reduce from shared memory into the shared memory of cluster rank `rank` (of cluster_blocks):
 *  size a multiple of 16, both shared addresses 16-byte aligned (dst_addr: the destination's offset as in this
 *  block), the rank inside the cluster. @return TMA_OK, TMA_ERR_BULK_SIZE, TMA_ERR_SMEM_ALIGN, TMA_ERR_MULTICAST_MASK */
tma_status tma_check_bulk_cluster(const char *what, uint32_t dst_addr, uint32_t src_addr, uint64_t bytes, uint32_t rank,
                                  uint32_t cluster_blocks, tma_diag *diag);

/** Check a multicast's cta_mask against the cluster's size (cluster_blocks blocks, ranks 0..cluster_blocks-1).
 *  @return TMA_OK or TMA_ERR_MULTICAST_MASK */
tma_status tma_check_multicast(uint32_t cta_mask, uint32_t cluster_blocks, tma_diag *diag);

/** Model of a 1-D bulk load: smem[dst_offset ..+bytes) = global[0 ..bytes). `global` is host memory standing for the
 *  device's (its address's low bits are checked as the device's would be).
 *  @return TMA_OK, TMA_ERR_NULL_ARG, a tma_check_bulk status, TMA_ERR_SMEM_BOUNDS */
tma_status tma_model_bulk_load(void *smem, size_t smem_bytes, uint32_t dst_offset, const void *global,
                               uint64_t bytes);

/** Model of a multicast 1-D bulk load in a cluster: the load lands in smem[r] for every rank r whose bit is set in
 *  cta_mask (smem[0..cluster_blocks) stand for each block's shared memory, smem_bytes each); the others keep
 *  every byte. @return as tma_model_bulk_load, and TMA_ERR_MULTICAST_MASK */
tma_status tma_model_bulk_load_multicast(void *const smem[], uint32_t cluster_blocks, size_t smem_bytes,
                                         uint32_t dst_offset, const void *global, uint64_t bytes, uint32_t cta_mask);

/** Model of a 1-D bulk store: global[0 ..bytes) = smem[src_offset ..+bytes). @return as tma_model_bulk_load */
tma_status tma_model_bulk_store(void *global, const void *smem, size_t smem_bytes, uint32_t src_offset,
                                uint64_t bytes);

/** Model of a 1-D bulk reduce: global[i] = op(global[i], smem[src_offset + i]) element by element, with the
 *  arithmetic of tma_model_reduce_tiled, for the pairs cp.reduce.async.bulk has (TMA_REDUCE_FORMS).
 *  @return as tma_model_bulk_load, and TMA_ERR_REDUCE_TYPE / TMA_ERR_ARG for a pair that does not exist */
tma_status tma_model_bulk_reduce(void *global, const void *smem, size_t smem_bytes, uint32_t src_offset,
                                 uint64_t bytes, tma_dtype type, tma_reduce op);

/** Model of tma_bulk_copy_cluster: dst[dst_offset ..+bytes) = src[src_offset ..+bytes), both buffers standing for
 *  shared memory (the receiver's and the sender's). @return as tma_model_bulk_load */
tma_status tma_model_bulk_copy_cluster(void *dst, size_t dst_bytes, uint32_t dst_offset, const void *src,
                                       size_t src_bytes, uint32_t src_offset, uint64_t bytes);

/** Model of tma_bulk_reduce_cluster: each destination element becomes op(destination, source), with the arithmetic of
 *  tma_model_bulk_reduce, for the pairs of TMA_REDUCE_FORMS's CLUSTER column. @return as tma_model_bulk_reduce */
tma_status tma_model_bulk_reduce_cluster(void *dst, size_t dst_bytes, uint32_t dst_offset, const void *src,
                                         size_t src_bytes, uint32_t src_offset, uint64_t bytes, tma_dtype type,
                                         tma_reduce op);

/* ---------------------------------------------------------------------------------------------
 * im2col maps (cuTensorMapEncodeIm2col): gather, for a column of output pixels, the input pixels under one filter
 * tap, channels innermost. The rules, the walk and their evidence: tma/detail/rules.h ("im2col maps") and
 * docs/HARDWARE.md "im2col (ours)".
 * ------------------------------------------------------------------------------------------- */

/** Check an im2col descriptor against every documented rule of cuTensorMapEncodeIm2col, the driver's measured
 *  undocumented ones (channels * elem a multiple of 16; the interleaved corner check), and libtma's stricter ones
 *  (NULL address, extent, a copy larger than a block's shared memory, element_stride[0] > 1).
 *  @param d     descriptor; may be NULL (TMA_ERR_NULL_ARG)
 *  @param diag  optional; receives the first broken rule and its explanation
 *  @return TMA_OK or the status of the first broken rule */
tma_status tma_check_im2col(const tma_im2col_desc *d, tma_diag *diag);

/** tma_check_im2col reporting every broken rule, as tma_check_tiled_all: the first `cap` into diags, the number of
 *  them into *count (optional). @return the status of the first broken rule, or TMA_OK */
tma_status tma_check_im2col_all(const tma_im2col_desc *d, tma_diag *diags, size_t cap, size_t *count);

/** Check `d`, then encode it with cuTensorMapEncodeIm2col, found in the driver at run time (as tma_encode_tiled).
 *  @return as tma_encode_tiled */
tma_status tma_encode_im2col(struct CUtensorMap_st *map, const tma_im2col_desc *d, tma_diag *diag);

/** Bytes one im2col copy delivers, what its mbarrier must expect: channels_per_pixel * elem * pixels_per_column
 *  (measured). 0 when dtype, rank, channels, pixels, swizzle or interleave is out of range. */
size_t tma_im2col_tx_bytes(const tma_im2col_desc *d);

/** Bytes one im2col copy occupies in shared memory: pixels_per_column rows of channels_per_pixel * elem bytes, each
 *  padded to the swizzle span (measured). 0 as tma_im2col_tx_bytes. */
size_t tma_im2col_smem_bytes(const tma_im2col_desc *d);

/** The per-copy rules of an im2col load through a descriptor that passes tma_check_im2col: coord[0] * elem a multiple
 *  of 16, each spatial start coordinate (coord[1 .. rank-2]) inside the bounding box [pixel_box_lower[i],
 *  global_dim[i+1] + pixel_box_upper[i] - 1] (measured: otherwise "illegal instruction"), each of the rank - 2
 *  offsets within the PTX range (rank 3: 0..65535, 4: 0..255, 5: 0..31; measured: past it the copy does not fault
 *  but loads other pixels). A negative channel start or n is allowed (measured: filled, as the model does).
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_COORD_ALIGN, TMA_ERR_IM2COL_START, TMA_ERR_IM2COL_OFFSET, or the
 *          descriptor's own error */
tma_status tma_check_im2col_coords(const tma_im2col_desc *d, const int32_t coord[5], const uint16_t offset[3]);

/** tma_check_im2col_coords with the first broken rule's message in diag (optional). */
tma_status tma_check_im2col_coords_diag(const tma_im2col_desc *d, const int32_t coord[5], const uint16_t offset[3],
                                        tma_diag *diag);

/** The box facts of an im2col descriptor that passes tma_check_im2col (all zero for one that does not): tx_bytes,
 *  smem_bytes, row_pitch, rows = pixels_per_column, box_dim = {channels_per_pixel, pixels_per_column}, and the
 *  im2col facts checked mode reads (flags has TMA_BOX_IM2COL). */
tma_box_info tma_im2col_box_info_of(const tma_im2col_desc *d);

/** Encode `d` into t->map (as tma_encode_im2col) and fill t->box from the same descriptor. @return as
 *  tma_encode_im2col */
tma_status tma_tensor_make_im2col(tma_tensor *t, const tma_im2col_desc *d, tma_diag *diag);

/** Write into smem[dst_offset ...] exactly the bytes an im2col load at `coord` with im2col offsets `offset` (rank - 2
 *  of them, innermost spatial dimension first) writes, and touch no other byte: pixels_per_column rows, the walk and
 *  fills of tma/detail/rules.h ("im2col maps"), the swizzle and TF32 rounding of tiled loads. The destination rules are
 *  those of tma_model_load_tiled. Interleaved im2col maps are not modelled (TMA_ERR_UNSUPPORTED).
 *  @return TMA_OK, a descriptor or per-copy status, TMA_ERR_SMEM_ALIGN (dst_offset % 128), TMA_ERR_SMEM_BOUNDS */
tma_status tma_model_load_im2col(const tma_im2col_desc *d, const int32_t coord[5], const uint16_t offset[3],
                                 void *smem, size_t smem_bytes, uint32_t dst_offset);

#ifdef __cplusplus
}
#endif

#endif /* TMA_TMA_H */
