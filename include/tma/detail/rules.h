/* libtma internals: the machinery behind tma/rules.h - NOT API.
 *
 * NO STABILITY. Nothing declared in tma/detail/ is part of libtma's API: names, signatures, rule identifiers,
 * table rows and message texts change in any release, without notice or a version bump. It is installed because
 * header-only code needs its definitions: the public TMA_HD functions of tma/rules.h and tma/tile_plan.h, the
 * device API (device.cuh, tensormap.cuh, tile_plan.cuh) and the checked mode, which format a rule's message on the
 * device exactly as the host does. Only libtma itself includes it directly: src/, kernels/, tools/ and tests/, which
 * are versioned with it. Programs use the public API: tma.h's checks (tma_check_*, a tma_diag), the device API, and
 * what tma/rules.h declares (tma_violation, tma_violation_status / _format, the limits and the geometry).
 *
 * WHAT LIVES HERE
 *   - One table, TMA_RULE_TABLE: each rule's identifier, its status and its message, the message naming the
 *     field, the value, the limit and a fix, with positional placeholders {0}..{9} for the values. Descriptor,
 *     copy, model, tile-plan (TILE_), encoder (ENCODE_) and driver (DRIVER_) refusals are all rows of it. A row whose
 *     text ends with ": " says what was being built when a descriptor broke a rule; that rule follows as its cause,
 *     and the refusal reports the cause's status (tile plans; the kernels' maps).
 *   - The formatter: a rule's message with its values, into a buffer, on the host (into a tma_diag) and on the device
 *     (checked mode prints it): tma_rule_format_text, the one loop over a message; tma_rule_format for a violation.
 *     Tables of other layers (the kernels' argument rules) number their rows from TMA_RULE_TABLE_BASE(k) and format
 *     through the same function: one vocabulary of statuses, placeholders and messages.
 *   - One TMA_HD predicate per rule, which reports a violation (the rule and its values) to a sink, and the
 *     derived quantities every layer needs (element size, element stride as the copy engine uses it, box
 *     rows, row pitch, transaction bytes, the store's chunk-rounded row, the global extent).
 *   - The checkers built from them: tma_rules_tiled (a whole descriptor), tma_rules_copy (one copy: coordinates,
 *     shared-memory address, rank), tma_rules_im2col / _im2col_copy, tma_rules_bulk / _bulk_cluster,
 *     tma_rules_multicast, tma_rules_reduce.
 * Who uses it: the host checker (src/check.c wraps tma_rules_tiled), the CPU model (src/model.c), the device
 * checked mode (device.cuh), tile plans (tile_plan.h), the kernels and the tools. No rule, value or message is
 * written anywhere else. Prefixes here: tma_rule_ / tma_rules_ / TMA_RULE_ (the table, the predicates, the derived
 * quantities), tma_fmt_ (the formatter's steps), tma_arg_ (a message's values); a trailing _ marks a helper of
 * this file.
 *
 * ADDING A RULE: one row in TMA_RULE_TABLE and one predicate call in the checker that owns it.
 *
 * Where each rule comes from: "doc" = the comment above cuTensorMapEncodeTiled in cuda.h (CUDA 13.0);
 * "measured" = docs/HARDWARE.md (H200); "libtma" = stricter than the driver, with the reason. */

/* The public half first (limits, tma_violation, map edits): tma/rules.h includes this file back at the point where
 * its own definitions need the machinery, so either header may be included first. */
#include "tma/rules.h"

#ifndef TMA_DETAIL_RULES_H
#define TMA_DETAIL_RULES_H

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
 * The rules and their messages. X(ID, STATUS, TEXT): TEXT's {n} is argument n of the violation.
 * Messages name the field, its value, the limit and a fix; each is shorter than a tma_diag message.
 * ------------------------------------------------------------------------------------------- */
#define TMA_RULE_TABLE(X)                                                                                        \
    /* ---- descriptor: kinds and enumerations ---- */                                                         \
    X(NULL_DESC, ERR_NULL_ARG, "descriptor = NULL: pass the address of a tma_tiled_desc")                     \
    X(DTYPE_PACKED, ERR_DTYPE,                                                                                 \
      "dtype = {0} is a packed sub-byte type (16U4/16U6) of compute capability 10.x, which libtma does not "    \
      "support: use one of TMA_DTYPE_U8 .. TMA_DTYPE_TF32_FTZ (0..12)")                                        \
    X(DTYPE_UNKNOWN, ERR_DTYPE,                                                                                \
      "dtype = {0} is not a tensor-map element type: use one of TMA_DTYPE_U8 .. TMA_DTYPE_TF32_FTZ (0..12)")   \
    X(RANK, ERR_RANK,                                                                                          \
      "rank = {0} is outside 1..5: describe the tensor with 1 to 5 dimensions (merge dimensions that are "     \
      "contiguous in memory)")                                                                                 \
    X(INTERLEAVE_ENUM, ERR_INTERLEAVE,                                                                         \
      "interleave = {0} is not an interleave mode: use TMA_INTERLEAVE_NONE (0), _16B (1) or _32B (2)")          \
    X(SWIZZLE_ENUM, ERR_SWIZZLE,                                                                               \
      "swizzle = {0} is not a swizzle mode: use TMA_SWIZZLE_NONE (0), _32B (1), _64B (2) or _128B (3)")         \
    /* libtma: the driver accepts these on sm_90 too, but Hopper's copy engine has no such mode. */            \
    X(SWIZZLE_SM100, ERR_SWIZZLE_UNSUPPORTED,                                                                  \
      "swizzle = {0} is a compute capability 10.x mode that Hopper (sm_90) does not implement: use "           \
      "TMA_SWIZZLE_128B")                                                                                      \
    X(L2_ENUM, ERR_L2_PROMOTION,                                                                               \
      "l2_promotion = {0} is not an L2 promotion: use TMA_L2_NONE (0), _64B (1), _128B (2) or _256B (3)")       \
    X(OOB_ENUM, ERR_OOB_FILL, "oob_fill = {0} is not a fill mode: use TMA_OOB_ZERO (0) or TMA_OOB_NAN (1)")     \
    X(OOB_NAN_INTEGER, ERR_OOB_FILL_NAN_INTEGER,                                                               \
      "oob_fill = TMA_OOB_NAN with dtype = {0}: NaN fill is for floating-point types only; use TMA_OOB_ZERO")  \
    X(INTERLEAVE_RANK, ERR_INTERLEAVE_RANK,                                                                    \
      "rank = {0} with interleave = {1}: interleaved layouts need rank >= 3; add the missing dimensions with "  \
      "global_dim = 1 or use TMA_INTERLEAVE_NONE")                                                             \
    /* ---- descriptor: the tensor in global memory ---- */                                                    \
    /* libtma: the driver encodes a NULL address (CUDA 12.6 on); the first copy through the map then faults. A    \
     * template whose address a kernel replaces says so (TMA_DESC_TEMPLATE); {0} names that way out (tiled). */  \
    X(ADDRESS_NULL, ERR_GLOBAL_ADDRESS_NULL,                                                                   \
      "global_address = NULL: pass the tensor's device address (cudaMalloc returns 256-byte aligned memory){0}") \
    X(ADDRESS_ALIGN, ERR_GLOBAL_ADDRESS_ALIGN,                                                                 \
      "global_address = {0} is not {1}-byte aligned{2}: use an address that is a multiple of {1} (offset the "  \
      "coordinates instead of the address)")                                                                   \
    X(GLOBAL_DIM, ERR_GLOBAL_DIM,                                                                              \
      "global_dim[{0}] = {1} is outside 1..2^32: every dimension needs at least one element and at most "      \
      "4294967296; split a larger dimension in two")                                                           \
    X(STRIDE_ALIGN, ERR_GLOBAL_STRIDE_ALIGN,                                                                   \
      "global_stride[{0}] = {1} bytes is not a multiple of {2}{3}: pad the rows so the stride is {4} bytes")    \
    X(STRIDE_RANGE, ERR_GLOBAL_STRIDE_RANGE,                                                                   \
      "global_stride[{0}] = {1} bytes is not below the limit of 2^40 (1099511627776) bytes: describe the "     \
      "tensor with an extra dimension or a smaller stride")                                                    \
    /* libtma, for stores only (TMA_DESC_STORE, a store's own check): the driver accepts any strides, and a load   \
     * through an overlapping view reads some bytes twice, but a store writes them twice, racing with itself. */   \
    X(OVERLAP, ERR_GLOBAL_STRIDE_OVERLAP,                                                                      \
      "global_stride[{0}] = {1} bytes is smaller than the {2} bytes of {3} it steps over, so dimension {4} "   \
      "overlaps dimension {5}: two coordinates reach the same bytes, so a store through this map would race "   \
      "with itself (loads are fine): store into a destination whose strides do not overlap, e.g. "              \
      "global_stride[{0}] >= {6}")                                                                             \
    X(OVERLAP_ELEMENTS, ERR_GLOBAL_STRIDE_OVERLAP,                                                             \
      "global_stride[{0}] = {1} bytes is smaller than the {2} bytes of {3} it steps over, so dimension {4} "   \
      "overlaps dimension {5}: two coordinates reach the same bytes, so a store through this map would race "   \
      "with itself (loads are fine). Strides are in bytes ({1} {7} elements are {8} bytes): store into a "      \
      "destination whose strides do not overlap, e.g. global_stride[{0}] >= {6}")                              \
    X(OVERLAP_SWAPPED, ERR_GLOBAL_STRIDE_OVERLAP,                                                              \
      "global_stride[{0}] = {1} bytes is smaller than the {2} bytes of {3} it steps over, so dimension {4} "   \
      "overlaps dimension {5}: two coordinates reach the same bytes, so a store through this map would race "   \
      "with itself (loads are fine). global_dim[{4}] = {7} and global_dim[{5}] = {8} look swapped (exchanged, " \
      "the strides nest); else store into a destination whose strides do not overlap, e.g. "                  \
      "global_stride[{0}] >= {6}")                                                                             \
    X(OVERLAP_UNPROVEN, ERR_GLOBAL_STRIDE_OVERLAP,                                                            \
      "global_stride[{0}] = {1} bytes is smaller than the {2} bytes of {3} it steps over, and libtma could not " \
      "decide in {4} steps whether two coordinates reach the same bytes, so it cannot prove that a store "      \
      "through this map does not race with itself (loads need no proof): store into a destination whose "     \
      "strides nest, each covering the dimensions with smaller strides")                                        \
    X(OVERLAP_HUGE, ERR_GLOBAL_STRIDE_OVERLAP,                                                                 \
      "global_stride[{0}] = {1} bytes cannot step over {2}, which span more than 2^64 bytes, so libtma cannot " \
      "prove that a store through this map does not race with itself: shrink global_dim (strides are in "      \
      "bytes, dims in elements)")                                                                              \
    /* libtma: every byte of the tensor must have an address (the model and the extent helpers rely on it). */ \
    X(EXTENT, ERR_GLOBAL_EXTENT,                                                                               \
      "the tensor's extent (global_dim x global_stride) runs past the end of the 64-bit address space: check " \
      "global_dim and global_stride for a unit mistake (strides are in bytes, dims in elements)")              \
    /* ---- descriptor: the box ---- */                                                                        \
    X(BOX_DIM, ERR_BOX_DIM,                                                                                    \
      "box_dim[{0}] = {1} is outside 1..256: copy at most 256 elements per dimension and issue several "       \
      "copies for a larger tile")                                                                              \
    X(ELEMENT_STRIDE, ERR_ELEMENT_STRIDE,                                                                      \
      "element_stride[{0}] = {1} is outside 1..8 (0 means 1): use a stride of at most 8, or fold the larger "  \
      "step into global_stride")                                                                               \
    /* libtma: without interleave the copy engine ignores element_stride[0]; it would copy every element. */   \
    X(ELEMENT_STRIDE_0, ERR_ELEMENT_STRIDE,                                                                    \
      "element_stride[0] = {0} has no effect without interleave (TMA cannot stride dimension 0, it would copy " \
      "every element): set it to 1, and step dimension 0 in the kernel instead")                               \
    /* doc for INTERLEAVE_NONE; measured: the driver refuses it with INTERLEAVE_16B too. */                    \
    X(BOX_INNER_BYTES, ERR_BOX_INNER_BYTES,                                                                    \
      "box_dim[0] = {0} {1} elements = {2} bytes is not a multiple of 16 bytes: use a box_dim[0] that is a "   \
      "multiple of {3} (e.g. {4})")                                                                            \
    X(BOX_SWIZZLE_SPAN, ERR_BOX_SWIZZLE_SPAN,                                                                  \
      "box_dim[0] = {0} {1} elements = {2} bytes exceeds the {3}-byte span of {4}: use box_dim[0] <= {5}{6} "   \
      "or split the box")                                                                                      \
    /* libtma: the driver encodes any box, but one larger than a block's shared memory can never land. */      \
    X(BOX_SMEM, ERR_BOX_SMEM,                                                                                  \
      "the box occupies {0} bytes of shared memory (box_dim x element size, rows padded to the swizzle "       \
      "span), more than the {1} bytes a Hopper block can have: shrink box_dim")                                \
    /* measured: the driver's own count (TMA_DRIVER_MAX_BOX_BYTES). Without interleave the rule above is stricter;  \
     * with interleave the copy moves chunks and skips the slice dimension, so a box can land in 12 KiB that the   \
     * driver counts as 391680 bytes and refuses (found by gpu_driver, seed 352230526830). */                      \
    X(BOX_DRIVER_BYTES, ERR_BOX_SMEM,                                                                          \
      "the box counts {0} elements of {1} bytes = {2} bytes (box_dim over element_stride, every dimension), "   \
      "more than the {3} bytes cuTensorMapEncodeTiled accepts (it counts elements even for interleaved maps): "  \
      "shrink box_dim")                                                                                        \
    /* ---- one copy ---- */                                                                                   \
    X(NULL_COORDS, ERR_NULL_ARG, "coord = NULL: pass the copy's coordinates (5 of them; those past the rank " \
                                 "are ignored)")                                                               \
    /* measured: otherwise "illegal instruction" (u8 at 114 faults, 112 works; u32 at -3 faults). */           \
    X(COORD_ALIGN, ERR_COORD_ALIGN,                                                                            \
      "TMA {0} at coord[0] = {1} with {2}-byte elements: coord[0] * elem = {3} bytes is not a multiple of 16 " \
      "(the copy would raise \"illegal instruction\"): use a coord[0] that is a multiple of {4}")              \
    /* measured: a store with a negative coordinate raises "illegal instruction"; loads fill. */               \
    X(COORD_NEGATIVE_STORE, ERR_COORD_NEGATIVE_STORE,                                                          \
      "TMA store at coord[{0}] = {1}: stores take no negative coordinate (the copy would raise \"illegal "     \
      "instruction\"; loads accept them and fill): start the box at 0 and clip it on the host side")           \
    /* libtma: the overlap rule, on the device, where only the box facts are known (TMA_BOX_LOAD_ONLY). */     \
    X(STORE_OVERLAP, ERR_GLOBAL_STRIDE_OVERLAP,                                                                \
      "TMA {0} through a load-only map (TMA_BOX_LOAD_ONLY: two of its coordinates reach the same bytes), so "   \
      "the store would race with itself: store through the map of a destination whose strides do not overlap " \
      "(tma_check_store_coords on its descriptor names the dimensions)")                                       \
    /* libtma: a template's address and strides are placeholders (TMA_DESC_TEMPLATE, TMA_BOX_TEMPLATE). */     \
    X(COPY_TEMPLATE, ERR_ARG,                                                                                  \
      "TMA {0} through a template map (TMA_DESC_TEMPLATE): its address and strides are placeholders until a "  \
      "kernel replaces them: copy through the map built from it (tma_builder_publish, tma_map_publish_in_place)") \
    /* measured: "misaligned address", in every swizzle mode, NONE included. */                                \
    X(SMEM_ALIGN, ERR_SMEM_ALIGN,                                                                              \
      "shared-memory address {0} of a TMA {1} is not 128-byte aligned (the copy would fault with "             \
      "\"misaligned address\"): align the tile to 128 bytes (1024 for a swizzle pattern at phase 0)")          \
    X(COPY_RANK, ERR_RANK, "TMA {0} of rank {1} through a map of rank {2}: use tma_{0}_{2}d")                  \
    /* ---- the CPU model's buffers ---- */                                                                    \
    X(MODEL_NULL_SMEM, ERR_NULL_ARG, "smem = NULL: pass the buffer that stands for shared memory")             \
    X(MODEL_SMEM_BOUNDS, ERR_SMEM_BOUNDS,                                                                      \
      "the box needs {0} bytes of shared memory at offset {1}, but the buffer holds {2}: enlarge the buffer "  \
      "or move the box (shared addresses are 32-bit)")                                                         \
    /* ---- reduce-stores (tiled and 1-D): which (type, reduction) pairs exist: TMA_REDUCE_FORMS ---- */       \
    X(REDUCE_OP_ENUM, ERR_ARG, "op = {0} is not a reduction: use TMA_REDUCE_ADD .. TMA_REDUCE_XOR (0..7)")     \
    /* measured: a tiled reduce of a pair the table lacks raises "illegal instruction" (docs/HARDWARE.md). */  \
    X(REDUCE_TYPE_TILED, ERR_REDUCE_TYPE,                                                                      \
      "TMA reduce-store .{0} through a map of {1} elements: the copy engine has no {0} for {1} (it raises "    \
      "\"illegal instruction\"); {1} maps take: {2}. Reduce in registers and store, or use a map of a type "   \
      "that has {0}")                                                                                          \
    /* PTX ISA: cp.reduce.async.bulk has no such instruction (ptxas refuses it). */                            \
    X(REDUCE_TYPE_BULK, ERR_REDUCE_TYPE,                                                                       \
      "1-D bulk reduce .{0} of {1} elements: cp.reduce.async.bulk has no {0} for {1}; {1} takes: {2}. "        \
      "Reduce in registers and store, or reinterpret as a type that has {0}")                                  \
    X(REDUCE_TYPE_CLUSTER, ERR_REDUCE_TYPE,                                                                    \
      "1-D reduce .{0} of {1} elements into a cluster peer's shared memory: cp.reduce.async.bulk.shared::cluster " \
      "has no {0} for {1}; {1} takes: {2}. Reduce into global memory, or in registers after a plain copy")      \
    /* ---- 1-D bulk copies (cp.async.bulk, cp.reduce.async.bulk, cp.async.bulk.prefetch) ---- */             \
    /* PTX ISA: size a multiple of 16; measured: docs/HARDWARE.md "1-D bulk copies". */                       \
    X(BULK_SIZE_ALIGN, ERR_BULK_SIZE,                                                                          \
      "1-D bulk {0} of size = {1} bytes: the size must be a multiple of 16 bytes: copy {2} bytes this way "   \
      "and the last {3} with ordinary loads and stores, or pad both buffers to {4} bytes")                     \
    X(BULK_SIZE_SMEM, ERR_BULK_SIZE,                                                                           \
      "1-D bulk {0} of size = {1} bytes: more than the {2} bytes of shared memory a Hopper block can have: "   \
      "split it into copies of at most {2} bytes")                                                             \
    X(BULK_GLOBAL_ALIGN, ERR_GLOBAL_ADDRESS_ALIGN,                                                             \
      "global address {0} of a 1-D bulk {1} is not 16-byte aligned ({2} bytes past a 16-byte boundary; the "  \
      "copy would fault with \"misaligned address\"): start the copy at a 16-byte boundary")                   \
    X(BULK_SMEM_ALIGN, ERR_SMEM_ALIGN,                                                                         \
      "shared-memory address {0} of a 1-D bulk {1} is not 16-byte aligned (the copy would fault with "         \
      "\"misaligned address\"): align the buffer to 16 bytes (alignas(16))")                                   \
    /* ---- multicast loads (tiled and 1-D) ---- */                                                            \
    /* measured: a mask bit past the cluster's blocks fails the launch ("unspecified launch failure"); mask 0   \
       completes and delivers nothing (allowed). */                                                            \
    X(MULTICAST_CLUSTER, ERR_ARG, "cluster_blocks = {0}: a cluster has 1..{1} blocks")                          \
    X(CLUSTER_RANK, ERR_MULTICAST_MASK,                                                                        \
      "1-D bulk {0} to cluster rank {1} in a cluster of {2} blocks: no such block: use a rank 0..{3}")          \
    X(MULTICAST_MASK_RANGE, ERR_MULTICAST_MASK,                                                                \
      "multicast {0} with cta_mask = {1} in a cluster of {2} blocks: bit {3} names no block of the cluster: "  \
      "use bits 0..{4} only")                                                                                  \
    /* Loads through interleaved maps are modelled and proven (docs/HARDWARE.md); stores are not measured. */  \
    X(MODEL_INTERLEAVE, ERR_UNSUPPORTED,                                                                       \
      "interleave = {0}: the CPU model models loads through interleaved maps, not stores or reduce-stores "    \
      "(not measured on hardware, docs/HARDWARE.md); store through a map with TMA_INTERLEAVE_NONE")            \
    /* ---- im2col maps (cuTensorMapEncodeIm2col): "doc" = its comment in cuda.h (CUDA 13.0); "measured" =    \
       ../shared/docs/TMA-FACTS.md, im2col section (H200); "PTX" = the PTX ISA's im2col mode. ---- */          \
    X(IM2COL_NULL_DESC, ERR_NULL_ARG, "descriptor = NULL: pass the address of a tma_im2col_desc")              \
    X(IM2COL_RANK, ERR_RANK,                                                                                   \
      "rank = {0} is outside 3..5 for an im2col map: describe the image as {C, W, N}, {C, W, H, N} or "         \
      "{C, W, H, D, N} (channels innermost; add a dimension of 1 for a missing one)")                          \
    /* doc: rank 3: [-32768, 32767]; rank 4: [-128, 127]; rank 5: [-16, 15] (measured: exact at both ends). */ \
    X(IM2COL_CORNER, ERR_IM2COL_CORNER,                                                                        \
      "pixel_box_{0}[{1}] = {2} is outside {3}..{4}, the corner range of a rank-{5} im2col map: keep the "      \
      "padding within the range (lower = -pad, upper = pad - dilation * (filter - 1)) or use a lower rank")    \
    /* doc: "the bounding box ... must have non-zero area": dim + upper - lower >= 1 in each spatial dim. */   \
    X(IM2COL_BOX_EMPTY, ERR_IM2COL_BOX_EMPTY,                                                                  \
      "spatial dimension {0} (global_dim[{1}] = {2}) with pixel_box_lower[{0}] = {3} and pixel_box_upper[{0}] " \
      "= {4}: the bounding box [{3}, {2} + {4} - 1] holds no pixel: raise pixel_box_upper[{0}] or lower "       \
      "pixel_box_lower[{0}]")                                                                                  \
    /* measured: with INTERLEAVE_16B/32B the driver checks corner i against global_dim[i], not [i + 1] (and  \
       libtma keeps the real box non-empty too: a box with no pixel has no valid start). */                   \
    X(IM2COL_BOX_EMPTY_INTERLEAVED, ERR_IM2COL_BOX_EMPTY,                                                      \
      "interleaved im2col map: the driver checks the bounding box of spatial dimension {0} against global_dim" \
      "[{0}] = {1} (an off-by-one of the driver) and finds [{2}, {1} + {3} - 1] empty, so it would refuse the " \
      "map: raise pixel_box_upper[{0}] or use TMA_INTERLEAVE_NONE")                                           \
    /* measured (H200, driver 580): the driver computes global_dim + pixel_box_upper in 32 bits, refusing 2^31 and   \
       wrapping past 2^32 (W = 2^32 with upper = 1 is accepted as a 1-pixel box): libtma keeps it below 2^31. */ \
    X(IM2COL_DIM_INT32, ERR_GLOBAL_DIM,                                                                        \
      "global_dim[{0}] = {1} with pixel_box_upper[{2}] = {3}: their sum is {4}, past 2^31 - 1 = 2147483647, and "   \
      "the driver computes the bounding box in 32 bits (it refuses such a map, or wraps it): split the image "  \
      "dimension or lower pixel_box_upper")                                                                    \
    X(IM2COL_CHANNELS, ERR_IM2COL_CHANNELS,                                                                    \
      "channels_per_pixel = {0} is outside 1..256: load at most 256 channels per copy and issue one copy per " \
      "channel block")                                                                                         \
    /* measured: the driver refuses channels_per_pixel * element size not a multiple of 16. */                \
    X(IM2COL_INNER_BYTES, ERR_BOX_INNER_BYTES,                                                                 \
      "channels_per_pixel = {0} {1} elements = {2} bytes is not a multiple of 16 bytes: use a "                 \
      "channels_per_pixel that is a multiple of {3} (e.g. {4})")                                               \
    X(IM2COL_PIXELS, ERR_IM2COL_PIXELS,                                                                        \
      "pixels_per_column = {0} is outside 1..1024: gather at most 1024 pixels per copy and issue several")     \
    /* doc (INTERLEAVE_NONE with a swizzle): channels_per_pixel * element size <= the swizzle span. */        \
    X(IM2COL_SWIZZLE_SPAN, ERR_BOX_SWIZZLE_SPAN,                                                               \
      "channels_per_pixel = {0} {1} elements = {2} bytes exceeds the {3}-byte span of {4}: use "                \
      "channels_per_pixel <= {5}, a wider swizzle, or several copies per pixel")                              \
    /* libtma (the driver allows 233472 bytes, the SM's 228 KiB): a block has at most 227 KiB. */             \
    X(IM2COL_SMEM, ERR_BOX_SMEM,                                                                               \
      "one im2col copy occupies {0} bytes of shared memory ({1} pixels x {2}-byte rows), more than the {3} "   \
      "bytes a Hopper block can have: lower pixels_per_column")                                                \
    /* measured: 41 of 41 loads whose walked start lay outside the bounding box raised "illegal instruction". */ \
    X(IM2COL_START, ERR_IM2COL_START,                                                                          \
      "im2col load at coord[{0}] = {1}: the start must lie in the bounding box [{2}, {3}] of that dimension "   \
      "(pixel_box_lower .. global_dim + pixel_box_upper - 1; outside it the copy raises \"illegal "            \
      "instruction\"): start the walk inside the box and reach further pixels with the im2col offsets")        \
    /* PTX: im2col offsets of rank 3: 0..65535; rank 4: 0..255; rank 5: 0..31. Measured past them (H200, CUDA    \
       13.0, gpu_im2col/probe_*): no fault, other pixels: ptxas packs the offsets into one 16-bit field, rank 4 as   \
       two bytes (each offset mod 256), rank 5 as o0 + (o1 << 5) + (o2 << 10) (bits past 5 add into the next    \
       offset). Rank 3's whole 16 bits are positive shifts. */                                                  \
    X(IM2COL_OFFSET, ERR_IM2COL_OFFSET,                                                                        \
      "im2col load with offset[{0}] = {1}: a rank-{2} im2col copy takes offsets 0..{3} (past it the copy does "  \
      "not fault: the offset loses its high bits and other pixels are loaded): use a smaller filter tap, or a "  \
      "lower rank (rank 3 takes 16-bit offsets)")                                                              \
    X(IM2COL_NULL_OFFSETS, ERR_NULL_ARG,                                                                       \
      "offset = NULL: pass the copy's rank - 2 im2col offsets (innermost spatial dimension first)")           \
    X(MAP_NOT_IM2COL, ERR_ARG,                                                                                 \
      "im2col load through a tensor that is not an im2col map (it was made by tma_tensor_make): make it with "  \
      "tma_tensor_make_im2col from a tma_im2col_desc")                                                         \
    /* PTX ISA: a copy's load mode must match its map's; a tiled copy through an im2col map is undefined. */   \
    X(MAP_IS_IM2COL, ERR_ARG,                                                                                  \
      "tiled {0} of rank {1} through an im2col map (made by tma_tensor_make_im2col): load it with "            \
      "tma_load_im2col<{1}>, or make a tiled map with tma_tensor_make")                                        \
    X(MODEL_IM2COL_INTERLEAVE, ERR_UNSUPPORTED,                                                                \
      "interleave = {0}: the CPU model models im2col loads through maps with TMA_INTERLEAVE_NONE only "        \
      "(interleaved im2col loads are not measured): use TMA_INTERLEAVE_NONE")                                    \
    /* ---- encoding (src/encode.c): the map to write and the driver, found at run time. {0} of DRIVER_OPEN is       \
       dlerror()'s text, of DRIVER_MISSING the library's path; {1} of DRIVER_REFUSED the CUresult's name. ---- */   \
    X(ENCODE_NULL_MAP, ERR_NULL_ARG, "map = NULL: pass the address of a CUtensorMap")                            \
    X(ENCODE_NULL_TENSOR, ERR_NULL_ARG, "tensor = NULL: pass the address of a tma_tensor")                       \
    /* doc: a CUtensorMap is 64-byte aligned (TMA_MAP_ALIGN); the driver refuses a map that is not. */           \
    X(ENCODE_MAP_ALIGN, ERR_MAP_ALIGN,                                                                           \
      "map is not {0}-byte aligned: declare it as a CUtensorMap (its type carries the alignment) instead of "    \
      "casting a byte buffer")                                                                                   \
    X(DRIVER_OPEN, ERR_NO_DRIVER,                                                                                \
      "cannot open the CUDA driver library ({0}): install the NVIDIA driver, or point TMA_LIBCUDA at "           \
      "libcuda.so.1")                                                                                            \
    X(DRIVER_MISSING, ERR_NO_DRIVER, "{0} has no cuTensorMapEncodeTiled: TMA needs a driver for CUDA 12.0 or newer") \
    X(DRIVER_NO_IM2COL, ERR_NO_DRIVER, "the CUDA driver has no cuTensorMapEncodeIm2col: update the driver")      \
    X(DRIVER_INIT, ERR_DRIVER, "cuInit(0) failed with {0}: is an NVIDIA GPU present and its driver loaded?")      \
    /* doc: the encoders need a current context (docs/HARDWARE.md "Encoding needs a current context"); libtma makes  \
       device 0's primary context current for the call where the thread has none, and says why it could not. */    \
    X(DRIVER_NO_CONTEXT, ERR_DRIVER,                                                                             \
      "{0} needs a CUDA context current on the calling thread; there is none, and device 0's primary context could " \
      "not be made one ({1}): make a context current first (cudaSetDevice, or cuCtxSetCurrent)")                 \
    X(DRIVER_REFUSED, ERR_DRIVER,                                                                                \
      "{0} returned {1} for a descriptor libtma accepted: please report it with the descriptor")                 \
    /* CUTLASS notes that drivers before CUDA 12.6 refuse a NULL address; libtma passes a template's as it is. */ \
    X(DRIVER_REFUSED_NULL_TEMPLATE, ERR_DRIVER,                                                                  \
      "{0} returned {1} for a descriptor libtma accepted: a template with a NULL address, which drivers before "  \
      "CUDA 12.6 refuse: give the template a stand-in address (any multiple of 16; the kernel replaces it)")     \
    /* ---- tile plans (tile_plan.h): what cannot be planned or issued. {0} of BOX_DESC is the sub-box (tma_arg_box). \
       TILE_DESC and TILE_BOX_DESC say which descriptor broke a rule; the rule follows as the refusal's cause, whose  \
       status the refusal reports (their own status is never reported). ---- */                                   \
    X(TILE_NULL_TILE, ERR_NULL_ARG, "tile = NULL: pass the tile's descriptor (box_dim = the tile)")              \
    X(TILE_NULL_PLAN, ERR_NULL_ARG, "plan = NULL: pass the tma_tile_plan to fill")                               \
    X(TILE_NULL_RANGE_PLAN, ERR_NULL_ARG, "plan = NULL: pass a plan from tma_tile_plan_compute")                 \
    X(TILE_DESC, ERR_UNSUPPORTED, "tile plan: the tile's descriptor breaks a rule: ")                            \
    X(TILE_INTERLEAVE, ERR_UNSUPPORTED,                                                                          \
      "interleave = {0}: tile plans of interleaved layouts are not done (their copies are neither modelled nor " \
      "verified on hardware): use TMA_INTERLEAVE_NONE, or issue the boxes by hand")                               \
    X(TILE_DIM_ZERO, ERR_BOX_DIM,                                                                                \
      "tile box_dim[{0}] = 0: every dimension of the tile needs at least one element; use 1 for a dimension "   \
      "the tile does not extend in")                                                                             \
    X(TILE_ELEMENT_STRIDE, ERR_UNSUPPORTED,                                                                      \
      "element_stride[{0}] = {1}: tile plans of strided tiles are not done (each sub-box would have to start "   \
      "on the stride's grid and hold ceil(box / stride) elements): use element_stride[{0}] = 1 and step in the " \
      "kernel, or split a strided tile by hand")                                                                 \
    X(TILE_INNER_BYTES, ERR_BOX_INNER_BYTES,                                                                     \
      "tile box_dim[0] = {0} {1} elements = {2} bytes is not a multiple of {3} bytes, so no sub-box width "      \
      "divides it (a box's dimension 0 must be a multiple of {3} bytes): use a tile width that is a multiple "   \
      "of {4} elements (e.g. {5})")                                                                              \
    X(TILE_MAX_BOX_INNER, ERR_ARG,                                                                               \
      "max_box[0] = {0} is below the narrowest sub-box, {1} {2} elements ({3} bytes): use max_box[0] >= {1}, "   \
      "or 0 for the hardware's limit")                                                                           \
    X(TILE_TOO_MANY, ERR_ARG,                                                                                    \
      "tile box_dim[{0}] = {1} splits into {2} sub-boxes of {3} (its largest divisor within the limit of {4}), " \
      "and the whole tile into {5} sub-boxes, more than the {6} a plan may have: give each tile dimension a "   \
      "large divisor <= {4} (a multiple of 64, say), or plan a smaller tile")                                    \
    X(TILE_BOX_DESC, ERR_UNSUPPORTED, "tile plan: the descriptor with box_dim = {0} (the sub-box) breaks a rule: ") \
    X(TILE_RANGE, ERR_ARG,                                                                                       \
      "sub-boxes [{0}, {0} + {1}) of a plan of {2}: use first + n <= plan.count (and n >= 1)")                   \
    X(TILE_WINDOW_SMEM, ERR_SMEM_BOUNDS,                                                                         \
      "{0} sub-boxes of {1} bytes need {2} bytes of shared memory, more than the {3} a Hopper block can have: "  \
      "load the tile in windows of at most {4} sub-boxes (tma_tile_plan_window)")                                \
    X(TILE_RANK, ERR_RANK, "tile load of rank {0} through a plan of rank {1}: use tma_tile_load<{1}>")           \
    X(TILE_MAP_MISMATCH, ERR_ARG,                                                                                \
      "the tensor's box (box_dim[{0}] = {1}, {2} bytes a copy) is not the plan's sub-box (box_dim[{0}] = {3}, " \
      "{4} bytes): encode plan.box_desc (tma_tensor_make(&t, &plan.box_desc, ...)), not the tile's descriptor")

typedef enum tma_rule {
#define TMA_RULE_ENUM_(id, status, text) TMA_RULE_##id,
    TMA_RULE_TABLE(TMA_RULE_ENUM_)
#undef TMA_RULE_ENUM_
    TMA_RULE_COUNT_
} tma_rule;

/** The status a rule reports. */
TMA_HD tma_status tma_rule_status(tma_rule r) {
    switch (r) {
#define TMA_RULE_STATUS_(id, status, text)                                                                     \
    case TMA_RULE_##id:                                                                                        \
        return TMA_##status;
        TMA_RULE_TABLE(TMA_RULE_STATUS_)
#undef TMA_RULE_STATUS_
    default: return TMA_ERR_UNSUPPORTED;
    }
}

/** A rule's message template. */
TMA_HD const char *tma_rule_text(tma_rule r) {
    switch (r) {
#define TMA_RULE_TEXT_(id, status, text)                                                                       \
    case TMA_RULE_##id:                                                                                        \
        return text;
        TMA_RULE_TABLE(TMA_RULE_TEXT_)
#undef TMA_RULE_TEXT_
    default: return "unknown rule";
    }
}

/* ---------------------------------------------------------------------------------------------
 * Other rule tables. A layer above libtma with argument rules of its own (the kernels) writes them as rows of the
 * same form, X(ID, STATUS, TEXT), with the full enumerator as ID, and numbers them from a base of its own,
 * TMA_RULE_TABLE_BASE(k) with k >= 1, so one tma_violation names a row of any table. The row callbacks below
 * generate its enum, its statuses and its texts; tma_rule_format_text formats its messages. A lookup that misses
 * falls back to this table, so a violation of that layer may also be one of libtma's rules:
 *
 *     #define KD_RULE_TABLE(X) X(KD_RULE_GEMM_SIZES, ERR_ARG, "M = {0}, N = {1}, K = {2}: sizes must be >= 0") ...
 *     typedef enum kd_rule { KD_RULE_BASE_ = TMA_RULE_TABLE_BASE(1) - 1, KD_RULE_TABLE(TMA_RULE_ROW_ENUM) } kd_rule;
 *     TMA_HD const char *kd_rule_text(uint32_t r) {
 *         switch (r) { KD_RULE_TABLE(TMA_RULE_ROW_TEXT) default: return tma_rule_text((tma_rule)r); }
 *     }
 * ------------------------------------------------------------------------------------------- */
#define TMA_RULE_TABLE_BASE(k) ((uint32_t)(k) << 16) /* libtma's own rows: 0 .. TMA_RULE_COUNT_ - 1 */
#define TMA_RULE_ROW_ENUM(id, status, text) id,
#define TMA_RULE_ROW_STATUS(id, status, text)                                                                   \
    case id:                                                                                                   \
        return TMA_##status;
#define TMA_RULE_ROW_TEXT(id, status, text)                                                                     \
    case id:                                                                                                   \
        return text;

/* ---------------------------------------------------------------------------------------------
 * Names (status, type, swizzle), usable on the device. tma.h's tma_status_name etc. call these.
 * ------------------------------------------------------------------------------------------- */
TMA_HD const char *tma_rule_status_name(tma_status s) {
    switch (s) {
#define TMA_RULE_STATUS_NAME_(name, value, text)                                                               \
    case TMA_##name:                                                                                           \
        return "TMA_" #name;
        TMA_STATUS_MAP(TMA_RULE_STATUS_NAME_)
#undef TMA_RULE_STATUS_NAME_
    }
    return "TMA_UNKNOWN_STATUS";
}

TMA_HD const char *tma_rule_status_text(tma_status s) {
    switch (s) {
#define TMA_RULE_STATUS_TEXT_(name, value, text)                                                               \
    case TMA_##name:                                                                                           \
        return text;
        TMA_STATUS_MAP(TMA_RULE_STATUS_TEXT_)
#undef TMA_RULE_STATUS_TEXT_
    }
    return "unknown status";
}

/** Bytes of one element; 0 for a type libtma does not support. */
TMA_HD uint32_t tma_rule_dtype_bytes(tma_dtype t) {
    switch (t) {
    case TMA_DTYPE_U8: return 1u;
    case TMA_DTYPE_U16: case TMA_DTYPE_F16: case TMA_DTYPE_BF16: return 2u;
    case TMA_DTYPE_U32: case TMA_DTYPE_I32: case TMA_DTYPE_F32: case TMA_DTYPE_F32_FTZ: case TMA_DTYPE_TF32:
    case TMA_DTYPE_TF32_FTZ: return 4u;
    case TMA_DTYPE_U64: case TMA_DTYPE_I64: case TMA_DTYPE_F64: return 8u;
    default: return 0u;
    }
}

TMA_HD const char *tma_rule_dtype_name(tma_dtype t) {
    switch (t) {
    case TMA_DTYPE_U8: return "u8";
    case TMA_DTYPE_U16: return "u16";
    case TMA_DTYPE_U32: return "u32";
    case TMA_DTYPE_I32: return "i32";
    case TMA_DTYPE_U64: return "u64";
    case TMA_DTYPE_I64: return "i64";
    case TMA_DTYPE_F16: return "f16";
    case TMA_DTYPE_F32: return "f32";
    case TMA_DTYPE_F64: return "f64";
    case TMA_DTYPE_BF16: return "bf16";
    case TMA_DTYPE_F32_FTZ: return "f32_ftz";
    case TMA_DTYPE_TF32: return "tf32";
    case TMA_DTYPE_TF32_FTZ: return "tf32_ftz";
    default: return "?";
    }
}

TMA_HD int tma_rule_dtype_is_float(tma_dtype t) {
    return t == TMA_DTYPE_F16 || t == TMA_DTYPE_F32 || t == TMA_DTYPE_F64 || t == TMA_DTYPE_BF16 ||
           t == TMA_DTYPE_F32_FTZ || t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ;
}

/** TF32 and TF32_FTZ: the types a load rounds to TF32 (measured) and whose map an edit cannot leave (measured). */
TMA_HD int tma_rule_dtype_is_tf32(tma_dtype t) { return t == TMA_DTYPE_TF32 || t == TMA_DTYPE_TF32_FTZ; }

TMA_HD const char *tma_rule_swizzle_name(tma_swizzle m) {
    switch (m) {
    case TMA_SWIZZLE_NONE: return "TMA_SWIZZLE_NONE";
    case TMA_SWIZZLE_32B: return "TMA_SWIZZLE_32B";
    case TMA_SWIZZLE_64B: return "TMA_SWIZZLE_64B";
    case TMA_SWIZZLE_128B: return "TMA_SWIZZLE_128B";
    case TMA_SWIZZLE_128B_ATOM_32B: return "TMA_SWIZZLE_128B_ATOM_32B";
    case TMA_SWIZZLE_128B_ATOM_32B_FLIP_8B: return "TMA_SWIZZLE_128B_ATOM_32B_FLIP_8B";
    case TMA_SWIZZLE_128B_ATOM_64B: return "TMA_SWIZZLE_128B_ATOM_64B";
    default: return "?";
    }
}

TMA_HD const char *tma_rule_interleave_name(tma_interleave m) {
    return m == TMA_INTERLEAVE_NONE ? "TMA_INTERLEAVE_NONE"
           : m == TMA_INTERLEAVE_16B ? "TMA_INTERLEAVE_16B"
           : m == TMA_INTERLEAVE_32B ? "TMA_INTERLEAVE_32B"
                                     : "?";
}

/* ---------------------------------------------------------------------------------------------
 * Violations (tma_violation, tma/rules.h): a rule and the values its message quotes. A sink collects them (up to
 * cap; count keeps counting); the first one decides a checker's status.
 * ------------------------------------------------------------------------------------------- */
typedef enum tma_rule_arg_kind {
    TMA_ARG_NONE = 0,
    TMA_ARG_U,    /* unsigned decimal */
    TMA_ARG_I,    /* signed decimal (two's complement in v) */
    TMA_ARG_X,    /* 0x-prefixed lower-case hexadecimal (addresses) */
    TMA_ARG_S,    /* string */
    TMA_ARG_DIMS, /* a set of dimensions as a bit mask: "dimension 0", "dimensions 0..2", "dimensions 0, 2" */
    TMA_ARG_BOX   /* up to 5 small numbers, packed into v (tma_arg_box): "{64, 256}" */
} tma_rule_arg_kind;

/** Where checkers report: out[0..cap) receives the first violations, count counts them all. */
typedef struct tma_rule_sink {
    tma_violation *out;  /**< may be NULL when cap is 0 */
    uint32_t cap;        /**< entries of out */
    uint32_t count;      /**< violations reported so far */
    tma_status first;    /**< status of the first one; TMA_OK while there is none */
} tma_rule_sink;

TMA_HD tma_rule_sink tma_rule_sink_make(tma_violation *out, uint32_t cap) {
    tma_rule_sink s;
    s.out = out;
    s.cap = out ? cap : 0u;
    s.count = 0u;
    s.first = TMA_OK;
    return s;
}

TMA_HD tma_rule_arg tma_arg_u(uint64_t v) { tma_rule_arg a; a.v = v; a.s = 0; a.kind = TMA_ARG_U; return a; }
TMA_HD tma_rule_arg tma_arg_i(int64_t v) { tma_rule_arg a; a.v = (uint64_t)v; a.s = 0; a.kind = TMA_ARG_I; return a; }
TMA_HD tma_rule_arg tma_arg_x(uint64_t v) { tma_rule_arg a; a.v = v; a.s = 0; a.kind = TMA_ARG_X; return a; }
TMA_HD tma_rule_arg tma_arg_s(const char *s) { tma_rule_arg a; a.v = 0; a.s = s; a.kind = TMA_ARG_S; return a; }
TMA_HD tma_rule_arg tma_arg_dims(uint32_t mask) { tma_rule_arg a; a.v = mask; a.s = 0; a.kind = TMA_ARG_DIMS; return a; }

/** A box's dimensions, dims[0..n) (n <= 5), printed "{64, 256}": each value in 12 bits, the count in the top 4, so
 *  the argument holds no pointer and stays valid after the box is gone (a tile plan's refusal outlives its sub-box).
 *  Values of 4095 and more (no box dimension: TMA_MAX_BOX_DIM) print as "?", never as a wrong number. */
TMA_HD tma_rule_arg tma_arg_box(const uint32_t *dims, uint32_t n) {
    tma_rule_arg a;
    a.v = 0u;
    n = n < 5u ? n : 5u;
    for (uint32_t i = 0; i < n; i++)
        a.v |= (uint64_t)(dims[i] < 4095u ? dims[i] : 4095u) << (12u * i);
    a.v |= (uint64_t)n << 60;
    a.s = 0;
    a.kind = TMA_ARG_BOX;
    return a;
}

TMA_HD void tma_rule_report_(tma_rule_sink *s, tma_rule rule, const tma_rule_arg *args) {
    if (s->count < s->cap) {
        tma_violation *v = &s->out[s->count];
        v->rule = (uint32_t)rule;
        for (int i = 0; i < TMA_RULE_MAX_ARGS; i++)
            v->arg[i] = args[i];
    }
    if (s->first == TMA_OK)
        s->first = tma_rule_status(rule);
    s->count++;
}

/** The values of a violation as one value, to pass and return: TMA_RULE_ARGS(tma_arg_u(1), tma_arg_s("x")) in C and
 *  C++ alike (a compound literal in C, a braced temporary in C++). At least one value: a message without any takes
 *  tma_arg_u(0). */
typedef struct tma_rule_args {
    tma_rule_arg a[TMA_RULE_MAX_ARGS];
} tma_rule_args;
#ifdef __cplusplus
#define TMA_RULE_ARGS(...) (tma_rule_args{{__VA_ARGS__}})
#else
#define TMA_RULE_ARGS(...) ((tma_rule_args){{__VA_ARGS__}})
#endif

/** A violation of rule `rule` (of any table: TMA_RULE_TABLE_BASE) with the values args. */
TMA_HD tma_violation tma_violation_of(uint32_t rule, tma_rule_args args) {
    tma_violation v;
    v.rule = rule;
    for (int i = 0; i < TMA_RULE_MAX_ARGS; i++)
        v.arg[i] = args.a[i];
    return v;
}

/** Report rule ID to sink S with the message values that follow (at most TMA_RULE_MAX_ARGS). */
#define TMA_VIOLATE(S, ID, ...)                                                                                 \
    do {                                                                                                       \
        const tma_rule_arg tma_args_[TMA_RULE_MAX_ARGS] = {__VA_ARGS__};                                       \
        tma_rule_report_((S), TMA_RULE_##ID, tma_args_);                                                       \
    } while (0)

/* ---------------------------------------------------------------------------------------------
 * Formatting: a rule's message with its values, into out[0..cap) (always terminated when cap > 0, truncated if
 * it must be). Each tma_fmt_ step appends at position n and returns the position after it, counting what did not
 * fit, so a caller learns the length the whole message has. One loop reads a message (tma_fmt_text_); every
 * table's messages, libtma's and the kernels', go through it.
 * ------------------------------------------------------------------------------------------- */
TMA_HD size_t tma_fmt_char_(char *out, size_t cap, size_t n, char c) {
    if (n + 1 < cap)
        out[n] = c;
    return n + 1;
}

TMA_HD size_t tma_fmt_str_(char *out, size_t cap, size_t n, const char *s) {
    for (; s && *s; s++)
        n = tma_fmt_char_(out, cap, n, *s);
    return n;
}

TMA_HD size_t tma_fmt_uint_(char *out, size_t cap, size_t n, uint64_t v, uint32_t base) {
    char digits[24];
    int k = 0;
    do {
        uint32_t d = (uint32_t)(v % base);
        digits[k++] = (char)(d < 10u ? '0' + d : 'a' + (d - 10u));
        v /= base;
    } while (v != 0u);
    while (k > 0)
        n = tma_fmt_char_(out, cap, n, digits[--k]);
    return n;
}

/* "dimension 1", "dimensions 0..3" (a run), "dimensions 0, 2 and 3" */
TMA_HD size_t tma_fmt_dims_(char *out, size_t cap, size_t n, uint32_t mask) {
    uint32_t count = 0, lo = 32, hi = 0;
    for (uint32_t i = 0; i < 32; i++)
        if (mask >> i & 1u) {
            count++;
            lo = i < lo ? i : lo;
            hi = i;
        }
    n = tma_fmt_str_(out, cap, n, count == 1u ? "dimension " : "dimensions ");
    if (count >= 2u && count == hi - lo + 1u) {
        n = tma_fmt_uint_(out, cap, n, lo, 10u);
        n = tma_fmt_str_(out, cap, n, "..");
        return tma_fmt_uint_(out, cap, n, hi, 10u);
    }
    for (uint32_t i = 0, seen = 0; i < 32; i++)
        if (mask >> i & 1u) {
            if (seen > 0)
                n = tma_fmt_str_(out, cap, n, seen + 1u == count ? " and " : ", ");
            n = tma_fmt_uint_(out, cap, n, i, 10u);
            seen++;
        }
    return n;
}

/* A box packed by tma_arg_box: "{64, 256}". */
TMA_HD size_t tma_fmt_box_(char *out, size_t cap, size_t n, uint64_t packed) {
    const uint32_t count = (uint32_t)(packed >> 60);
    n = tma_fmt_char_(out, cap, n, '{');
    for (uint32_t i = 0; i < count && i < 5u; i++) {
        const uint32_t v = (uint32_t)(packed >> (12u * i)) & 4095u;
        n = i == 0u ? n : tma_fmt_str_(out, cap, n, ", ");
        n = v == 4095u ? tma_fmt_char_(out, cap, n, '?') : tma_fmt_uint_(out, cap, n, v, 10u);
    }
    return tma_fmt_char_(out, cap, n, '}');
}

TMA_HD size_t tma_fmt_arg_(char *out, size_t cap, size_t n, const tma_rule_arg *a) {
    switch (a->kind) {
    case TMA_ARG_U: return tma_fmt_uint_(out, cap, n, a->v, 10u);
    case TMA_ARG_I:
        if ((int64_t)a->v < 0) {
            n = tma_fmt_char_(out, cap, n, '-');
            return tma_fmt_uint_(out, cap, n, 0u - a->v, 10u);
        }
        return tma_fmt_uint_(out, cap, n, a->v, 10u);
    case TMA_ARG_X: return tma_fmt_uint_(out, cap, tma_fmt_str_(out, cap, n, "0x"), a->v, 16u);
    case TMA_ARG_S: return tma_fmt_str_(out, cap, n, a->s);
    case TMA_ARG_DIMS: return tma_fmt_dims_(out, cap, n, (uint32_t)a->v);
    case TMA_ARG_BOX: return tma_fmt_box_(out, cap, n, a->v);
    default: return tma_fmt_str_(out, cap, n, "?");
    }
}

/* A message template: its text, with {0}..{9} replaced by args[0..9]. */
TMA_HD size_t tma_fmt_text_(char *out, size_t cap, size_t n, const char *text, const tma_rule_arg *args) {
    for (const char *t = text; *t; t++) {
        if (t[0] == '{' && t[1] >= '0' && t[1] <= '9' && t[2] == '}') {
            n = tma_fmt_arg_(out, cap, n, &args[t[1] - '0']);
            t += 2;
        } else {
            n = tma_fmt_char_(out, cap, n, *t);
        }
    }
    return n;
}

/* The terminator after n characters (at the end of what fit). */
TMA_HD size_t tma_fmt_end_(char *out, size_t cap, size_t n) {
    if (cap > 0)
        out[n < cap ? n : cap - 1] = '\0';
    return n;
}

/** The formatter every rule table shares: `text` (a row's message) with its values args, then, when `cause` is not
 *  NULL, the message of the libtma rule beneath it (a refusal because something built along the way breaks a rule:
 *  a tile plan's sub-box descriptor, a kernel's map; the row's text ends with ": " for it). @return the length of
 *  the whole message (out holds at most cap - 1 characters of it, terminated) */
TMA_HD size_t tma_rule_format_text(const char *text, const tma_rule_arg *args, const tma_violation *cause, char *out,
                                   size_t cap) {
    size_t n = tma_fmt_text_(out, cap, 0, text, args);
    if (cause != 0)
        n = tma_fmt_text_(out, cap, n, tma_rule_text((tma_rule)cause->rule), cause->arg);
    return tma_fmt_end_(out, cap, n);
}

/** A violation of this table's rules: its message with its values (tma_violation_format, tma/rules.h, is the public
 *  name; this one stays for the callers that use it). @return the length of the whole message */
TMA_HD size_t tma_rule_format(const tma_violation *v, char *out, size_t cap) {
    return tma_rule_format_text(tma_rule_text((tma_rule)v->rule), v->arg, 0, out, cap);
}

/* ---------------------------------------------------------------------------------------------
 * Derived quantities. The descriptor-based ones assume the fields they read are valid (the checker
 * runs them only then); tma_rule_box_fields_valid tells.
 * ------------------------------------------------------------------------------------------- */

/** Overflow-checked a * b + c on uint64; 0 (false) on overflow. */
TMA_HD int tma_rule_muladd_u64(uint64_t a, uint64_t b, uint64_t c, uint64_t *out) {
    if (a != 0u && b > UINT64_MAX / a)
        return 0;
    uint64_t p = a * b;
    if (p > UINT64_MAX - c)
        return 0;
    *out = p + c;
    return 1;
}

/** x rounded up to a multiple of `to`, saturating at the largest multiple that fits. */
TMA_HD uint64_t tma_rule_round_up(uint64_t x, uint64_t to) {
    uint64_t r = x % to;
    if (r == 0u)
        return x;
    return x > UINT64_MAX - (to - r) ? UINT64_MAX / to * to : x + (to - r);
}

/** An element stride as the encoder and the copy engine read it: 0 means 1 (doc), in tiled and im2col maps alike. */
TMA_HD uint32_t tma_rule_estride_value(uint32_t element_stride) { return element_stride ? element_stride : 1u; }

/** Element stride of dimension i as the copy engine uses it: 0 means 1, and without interleave
 *  dimension 0 has none (measured: the hardware ignores element_stride[0] there). With interleave,
 *  element_stride[0] steps whole 16/32-byte chunks (measured, docs/HARDWARE.md "Interleaved layouts"). */
TMA_HD uint32_t tma_rule_estride(const tma_tiled_desc *d, uint32_t i) {
    if (i == 0u && d->interleave == TMA_INTERLEAVE_NONE)
        return 1u;
    return tma_rule_estride_value(d->element_stride[i]);
}

/* ---- Interleaved layouts (NC/8HWC8, NC/16HWC16; measured on an H200, docs/HARDWARE.md "Interleaved layouts").
 * The copy engine reads such a map as an NC/xDHWCx tensor, whatever the element type:
 *   - dimension 0 counts whole chunks of 16 bytes (TMA_INTERLEAVE_16B) or 32 bytes (_32B), the Cx slice of one
 *     pixel: global_dim[0], box_dim[0], element_stride[0] and coord[0] are all in chunks, and chunk x0 starts
 *     x0 * chunk bytes into its row (the element type only sets the out-of-bounds fill and the TF32 rounding);
 *   - dimension rank-2 is the slice index C/x: a box never spans it (box_dim[rank-2] and its element stride are
 *     ignored; the box takes the one slice at coord[rank-2]);
 *   - box rows are packed: the row pitch is the chunks of a row times the chunk size, never padded to the
 *     swizzle span; the swizzle still acts on the shared-memory address.
 * So a box delivers chunk * ceil(box_dim[0] / element_stride[0]) * (rows over the other dimensions) bytes. */

/** Bytes of one dimension-0 position as the copy engine moves it: the element, or with interleave the chunk. */
TMA_HD uint32_t tma_rule_dim0_unit_bytes(const tma_tiled_desc *d) {
    return d->interleave == TMA_INTERLEAVE_16B   ? 16u
           : d->interleave == TMA_INTERLEAVE_32B ? 32u
                                                 : tma_rule_dtype_bytes(d->dtype);
}

/** Elements (with interleave, dimension 0: chunks) a box holds along dimension i: ceil(box_dim[i] / element
 *  stride); 1 past the rank, and 1 for the slice dimension rank-2 of an interleaved map (measured). */
TMA_HD uint32_t tma_rule_box_count(const tma_tiled_desc *d, uint32_t i) {
    if (i >= d->rank || (d->interleave != TMA_INTERLEAVE_NONE && d->rank >= 3u && i == d->rank - 2u))
        return 1u;
    uint32_t e = tma_rule_estride(d, i);
    return (d->box_dim[i] + e - 1u) / e;
}

/** Whether the fields the box quantities read (dtype, rank, box_dim, element_stride) are in range. */
TMA_HD int tma_rule_box_fields_valid(const tma_tiled_desc *d) {
    if (d == 0 || tma_rule_dtype_bytes(d->dtype) == 0u || d->rank < 1u || d->rank > TMA_MAX_RANK)
        return 0;
    for (uint32_t i = 0; i < d->rank; i++)
        if (d->box_dim[i] == 0u || d->box_dim[i] > TMA_MAX_BOX_DIM || d->element_stride[i] > TMA_MAX_ELEMENT_STRIDE)
            return 0;
    return 1;
}

/** Box rows in shared memory: the product over dimensions 1..rank-1 of their counts (<= 256^4). */
TMA_HD uint64_t tma_rule_box_rows(const tma_tiled_desc *d) {
    uint64_t rows = 1u;
    for (uint32_t i = 1; i < d->rank; i++)
        rows *= tma_rule_box_count(d, i);
    return rows;
}

/** Bytes between the rows a copy writes to shared memory, for rows of `row` bytes (measured, tiled and im2col): the
 *  row, or the whole swizzle span when a swizzle is set and the row is narrower (the rest of the span is left
 *  untouched). Interleaved: the row as it is, never padded (measured). */
TMA_HD uint64_t tma_rule_row_pitch(uint64_t row, tma_interleave interleave, tma_swizzle swizzle) {
    const uint64_t span = interleave == TMA_INTERLEAVE_NONE ? tma_swizzle_span(swizzle) : 0u;
    return span > row ? span : row;
}

/** Bytes between box rows in shared memory: box_dim[0] * elem (interleaved: the row's chunks times the chunk size),
 *  padded as tma_rule_row_pitch says. */
TMA_HD uint64_t tma_rule_box_row_pitch(const tma_tiled_desc *d) {
    return tma_rule_row_pitch((uint64_t)tma_rule_box_count(d, 0) * tma_rule_dim0_unit_bytes(d), d->interleave,
                              d->swizzle);
}

/** Bytes one box copy delivers, what an mbarrier expects (measured: swizzle padding not counted; interleaved,
 *  whole chunks and no slice dimension). */
TMA_HD uint64_t tma_rule_box_tx_bytes(const tma_tiled_desc *d) {
    return tma_rule_box_rows(d) * tma_rule_box_count(d, 0) * tma_rule_dim0_unit_bytes(d);
}

/** The box's bytes as cuTensorMapEncodeTiled counts them (measured, TMA_DRIVER_MAX_BOX_BYTES): element size x
 *  prod ceil(box_dim[i] / element_stride[i]) over every dimension, interleaved or not. <= 2^43: no overflow. */
TMA_HD uint64_t tma_rule_driver_box_bytes(const tma_tiled_desc *d) {
    uint64_t n = tma_rule_dtype_bytes(d->dtype);
    for (uint32_t i = 0; i < d->rank && i < TMA_MAX_RANK; i++) {
        const uint32_t es = tma_rule_estride_value(d->element_stride[i]); /* dimension 0's too: the driver's count */
        n *= (d->box_dim[i] + es - 1u) / es;
    }
    return n;
}

/** Bytes the box occupies in shared memory, padding included. */
TMA_HD uint64_t tma_rule_box_smem_bytes(const tma_tiled_desc *d) {
    return tma_rule_box_rows(d) * tma_rule_box_row_pitch(d);
}

/** Bytes of dimension 0 a store may write per row (measured): it writes whole 16-byte chunks, so the row
 *  dim0 * elem rounded up to 16 - up to 15 bytes past the last element. dim0 <= 2^32: no overflow. */
TMA_HD uint64_t tma_rule_store_row_bytes(uint64_t dim0, uint32_t elem_bytes) {
    return (dim0 * elem_bytes + (TMA_STORE_CHUNK_BYTES - 1u)) / TMA_STORE_CHUNK_BYTES * TMA_STORE_CHUNK_BYTES;
}

/* The store's chunk-rounded row of d (no interleave). */
TMA_HD uint64_t tma_rule_row_bytes_(const tma_tiled_desc *d) {
    return tma_rule_store_row_bytes(d->global_dim[0], tma_rule_dtype_bytes(d->dtype));
}

/** Bytes of one tensor row (dimension 0) a copy can touch: the store's chunk-rounded row, or with interleave
 *  global_dim[0] whole 16/32-byte chunks (measured: dimension 0 counts chunks there). dim0 <= 2^32: no overflow. */
TMA_HD uint64_t tma_rule_row_extent(const tma_tiled_desc *d) {
    if (d->interleave == TMA_INTERLEAVE_16B || d->interleave == TMA_INTERLEAVE_32B)
        return d->global_dim[0] * tma_rule_dim0_unit_bytes(d);
    return tma_rule_row_bytes_(d);
}

/** Bytes from global_address to one past the last byte a copy can touch (the store's chunk rounding
 *  included; interleaved rows are whole chunks); 0 when the dims, strides or type are out of range or the sum
 *  overflows. */
TMA_HD uint64_t tma_rule_global_extent(const tma_tiled_desc *d) {
    uint32_t es = tma_rule_dtype_bytes(d->dtype);
    if (es == 0u || d->rank < 1u || d->rank > TMA_MAX_RANK || d->global_dim[0] == 0u ||
        d->global_dim[0] > TMA_MAX_GLOBAL_DIM)
        return 0u;
    uint64_t last = 0; /* byte offset of the first element of the last row */
    for (uint32_t i = 1; i < d->rank; i++)
        if (d->global_dim[i] == 0u || !tma_rule_muladd_u64(d->global_dim[i] - 1u, d->global_stride[i - 1], last, &last))
            return 0u;
    uint64_t row = tma_rule_row_extent(d);
    return last > UINT64_MAX - row ? 0u : last + row;
}

/* ---------------------------------------------------------------------------------------------
 * Injectivity: do two coordinates of the tensor reach the same bytes?
 *
 * A coordinate's row (dimension 0) occupies R bytes: dim0 * elem, rounded up to the 16-byte chunk a store
 * writes. (The rounding changes nothing for loads: the strides are multiples of 16, and so is every distance
 * between two rows, so two rows are closer than the chunk-rounded row exactly when they are closer than the
 * row. One rule serves loads and stores.) Two coordinates collide when their rows start less than R bytes
 * apart: sum over dimensions i >= 1 of delta_i * stride_i lies in (-R, R) for index differences delta_i with
 * |delta_i| < global_dim[i], not all zero. Strides may come in any order.
 *
 * 1. Fast path: sort the dimensions of extent > 1 by stride; when each stride is at least the bytes spanned
 *    by all dimensions with smaller strides, the strides nest and no two coordinates collide. Row-major and
 *    permuted dense tensors, padded rows, and the {64, rows, cols / 64} view of a row-major matrix with
 *    strides {pitch, 128} all nest.
 * 2. Otherwise an exact search for a collision: a depth-first walk over the index differences, largest stride
 *    first, keeping only those that can still bring the distance under R. Strides that interleave without
 *    colliding (a lattice such as strides {32, 48} over 16-byte rows) are one-to-one and accepted. The walk
 *    is bounded (TMA_OVERLAP_SEARCH_BUDGET steps); a layout it cannot decide within the bound (tiny
 *    interleaved strides over huge dimensions) is treated as overlapping, and says so.
 * The rule guards stores only: a load through a view that collides reads some bytes twice, which is well defined
 * (the driver encodes such views: a broadcast or a sliding window a kernel reads through), while a store writes them
 * twice and races with itself. tma_rules_tiled applies it to a map marked TMA_DESC_STORE; every store applies it
 * to its map (tma_check_store_coords and the model's stores add TMA_DESC_STORE; the device's checked mode reads
 * TMA_BOX_LOAD_ONLY from the box facts).
 * ------------------------------------------------------------------------------------------- */
#define TMA_OVERLAP_SEARCH_BUDGET 200000u

/** Where two coordinates reach the same bytes: dimension `dim` (global_stride[dim - 1]) steps by less than the
 *  `span` bytes of the dimensions in `inner_mask` (those with smaller strides, and dimension 0), and overlaps
 *  dimension `inner`. */
typedef struct tma_overlap {
    uint32_t dim;         /**< the dimension whose stride is too small */
    uint32_t inner;       /**< the dimension it overlaps */
    uint32_t inner_mask;  /**< bit i: dimension i has a smaller stride (dimension 0 always) */
    uint64_t span;        /**< bytes those dimensions span */
    int huge;             /**< they span more than 2^64 - 32 bytes */
    int unproven;         /**< the strides interleave and the search could not decide within its budget */
} tma_overlap;

/* The dimensions of extent > 1, sorted by stride (ties in dimension order); returns how many. */
TMA_HD uint32_t tma_rule_stride_order_(const tma_tiled_desc *d, uint32_t order[TMA_MAX_RANK]) {
    uint32_t n = 0;
    for (uint32_t i = 1; i < d->rank; i++) {
        if (d->global_dim[i] <= 1u)
            continue;
        uint32_t k = n++;
        while (k > 0u && d->global_stride[order[k - 1] - 1] > d->global_stride[i - 1]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = i;
    }
    return n;
}

/* The span of dimension 0 and the dimensions before position `upto` of `order`, and their mask; returns 0 (span
 * 0) when it exceeds 2^64 - 32 (kept that far below 2^64 so a fix rounded up to 32 bytes still fits). */
TMA_HD int tma_rule_span_below_(const tma_tiled_desc *d, uint64_t row, const uint32_t *order, uint32_t upto,
                                uint64_t *span, uint32_t *mask) {
    uint64_t sp = row;
    int fits = 1;
    *mask = 1u;
    for (uint32_t k = 0; k < upto; k++) {
        const uint32_t i = order[k];
        *mask |= 1u << i;
        if (fits && (!tma_rule_muladd_u64(d->global_dim[i] - 1u, d->global_stride[i - 1], sp, &sp) ||
                     sp > UINT64_MAX - (TMA_GLOBAL_ALIGN_INTERLEAVE_32B - 1u)))
            fits = 0;
    }
    *span = fits ? sp : 0u;
    return fits;
}

/** tma_rule_strides_nest for rows of `row` bytes (dimension 0's bytes; a store's are rounded up to its chunk). */
TMA_HD int tma_rule_strides_nest_rows(const tma_tiled_desc *d, uint64_t row, tma_overlap *o) {
    uint32_t order[TMA_MAX_RANK];
    const uint32_t n = tma_rule_stride_order_(d, order);
    for (uint32_t k = 0; k < n; k++) {
        const int fits = tma_rule_span_below_(d, row, order, k, &o->span, &o->inner_mask);
        if (!fits || d->global_stride[order[k] - 1] < o->span) {
            o->dim = order[k];
            o->inner = k > 0u ? order[k - 1] : 0u;
            o->huge = !fits;
            o->unproven = 0;
            return 0;
        }
    }
    return 1;
}

/** 1 when the strides nest (step 1 above); else 0 and *o says where the first stride falls short. Reads dtype,
 *  rank, global_dim and global_stride, which must be in range. */
TMA_HD int tma_rule_strides_nest(const tma_tiled_desc *d, tma_overlap *o) {
    return tma_rule_strides_nest_rows(d, tma_rule_row_bytes_(d), o);
}

TMA_HD int64_t tma_rule_floor_div_(int64_t a, int64_t b) { return a / b - (a % b != 0 && a < 0); }
TMA_HD int64_t tma_rule_ceil_div_(int64_t a, int64_t b) { return a / b + (a % b != 0 && a > 0); }

/** Search for two coordinates whose rows start less than a row apart (step 2 above): 1 found, with delta[i] the
 *  difference of their indices in dimension i; 0 none (one-to-one); -1 undecided within the budget. */
TMA_HD int tma_rule_find_collision_rows(const tma_tiled_desc *d, uint64_t row, int64_t delta[TMA_MAX_RANK]) {
    uint32_t asc[TMA_MAX_RANK];
    const uint32_t m = tma_rule_stride_order_(d, asc);
    int64_t s[TMA_MAX_RANK], n[TMA_MAX_RANK], below[TMA_MAX_RANK + 1];
    uint32_t dim[TMA_MAX_RANK];
    for (uint32_t i = 0; i < TMA_MAX_RANK; i++)
        delta[i] = 0;
    for (uint32_t k = 0; k < m; k++) { /* largest stride first */
        dim[k] = asc[m - 1u - k];
        s[k] = (int64_t)d->global_stride[dim[k] - 1]; /* < 2^40 */
        n[k] = (int64_t)d->global_dim[dim[k]] - 1;    /* < 2^32 */
        if (s[k] == 0) {                              /* two indices of this dimension share every byte */
            delta[dim[k]] = 1;
            return 1;
        }
    }
    const int64_t R = (int64_t)row; /* <= 2^35 */
    /* below[k]: the largest distance the dimensions after position k can add; saturating at 2^60, where the
     * search would be hopeless anyway */
    below[m] = 0;
    for (uint32_t k = m; k-- > 0u;) {
        const int64_t lim = (int64_t)1 << 60;
        below[k] = below[k + 1] >= lim || (n[k] > 0 && s[k] > (lim - below[k + 1]) / n[k]) ? lim
                                                                                            : below[k + 1] + n[k] * s[k];
    }
    if (m == 0u)
        return 0;
    if (below[1] >= ((int64_t)1 << 60) || (uint64_t)((R + below[1]) / s[0]) > TMA_OVERLAP_SEARCH_BUDGET)
        return -1;
    int64_t lo[TMA_MAX_RANK], hi[TMA_MAX_RANK], cur[TMA_MAX_RANK], part[TMA_MAX_RANK + 1];
    int nz[TMA_MAX_RANK + 1];
    uint32_t work = 0;
    int k = 0;
    part[0] = 0;
    nz[0] = 0;
    for (;;) {
        /* the differences at position k that can still end within (-R, R), given the distance so far */
        lo[k] = tma_rule_ceil_div_(-R + 1 - part[k] - below[k + 1], s[k]);
        hi[k] = tma_rule_floor_div_(R - 1 - part[k] + below[k + 1], s[k]);
        lo[k] = lo[k] < -n[k] ? -n[k] : lo[k];
        hi[k] = hi[k] > n[k] ? n[k] : hi[k];
        if (!nz[k] && lo[k] < 0) /* the first nonzero difference is positive: (a, b) and (b, a) are one pair */
            lo[k] = 0;
        cur[k] = lo[k];
        for (;;) {
            while (cur[k] > hi[k]) { /* this position is exhausted: back up */
                if (k-- == 0)
                    return 0;
                cur[k]++;
            }
            if (++work > TMA_OVERLAP_SEARCH_BUDGET)
                return -1;
            const int z = nz[k] || cur[k] != 0;
            if ((uint32_t)k + 1u == m) {
                if (z) { /* the last position: the distance is within (-R, R) by the range */
                    for (uint32_t q = 0; q < m; q++)
                        delta[dim[q]] = cur[q];
                    return 1;
                }
                cur[k]++;
                continue;
            }
            part[k + 1] = part[k] + cur[k] * s[k];
            nz[k + 1] = z;
            k++;
            break;
        }
    }
}

/** tma_rule_find_collision_rows for the rows a copy through d touches (tma_rule_row_bytes_). */
TMA_HD int tma_rule_find_collision(const tma_tiled_desc *d, int64_t delta[TMA_MAX_RANK]) {
    return tma_rule_find_collision_rows(d, tma_rule_row_bytes_(d), delta);
}

/** 1 when no two coordinates of d, each the start of a row of `row` bytes (<= 2^35), reach the same bytes; else 0
 *  and *o names the dimensions. Reads dtype, rank, global_dim and global_stride, which must be in range. */
TMA_HD int tma_rule_one_to_one_rows(const tma_tiled_desc *d, uint64_t row, tma_overlap *o) {
    if (tma_rule_strides_nest_rows(d, row, o))
        return 1;
    if (o->huge)
        return 0; /* the layout spans more than 2^64 bytes */
    int64_t delta[TMA_MAX_RANK];
    const int found = tma_rule_find_collision_rows(d, row, delta);
    if (found == 0)
        return 1; /* the strides interleave without colliding */
    if (found < 0) {
        o->unproven = 1;
        return 0;
    }
    /* Name the colliding dimension with the largest stride, the next one (or dimension 0), and what lies below. */
    uint32_t order[TMA_MAX_RANK];
    const uint32_t n = tma_rule_stride_order_(d, order);
    int top = -1, second = -1;
    for (uint32_t k = 0; k < n; k++)
        if (delta[order[k]] != 0) {
            second = top;
            top = (int)k;
        }
    o->dim = order[top]; /* found: some difference is nonzero */
    o->inner = second >= 0 ? order[second] : 0u;
    o->unproven = 0;
    o->huge = !tma_rule_span_below_(d, row, order, (uint32_t)top, &o->span, &o->inner_mask);
    return 0;
}

/** 1 when no two coordinates of d reach the same bytes (rows as a copy through d touches them:
 *  tma_rule_row_bytes_); else 0 and *o names the dimensions. */
TMA_HD int tma_rule_one_to_one(const tma_tiled_desc *d, tma_overlap *o) {
    return tma_rule_one_to_one_rows(d, tma_rule_row_bytes_(d), o);
}

/* The overlap rule with its best guess at the mistake: a stride given in elements, or two dimensions
 * exchanged, when the corrected descriptor nests. */
TMA_HD void tma_rule_report_overlap(const tma_tiled_desc *d, const tma_overlap *o, tma_rule_sink *s) {
    const uint32_t k = o->dim, j = o->inner, es = tma_rule_dtype_bytes(d->dtype);
    const uint64_t stride = d->global_stride[k - 1];
    if (o->huge) {
        TMA_VIOLATE(s, OVERLAP_HUGE, tma_arg_u(k - 1u), tma_arg_u(stride), tma_arg_dims(o->inner_mask));
        return;
    }
    if (o->unproven) {
        TMA_VIOLATE(s, OVERLAP_UNPROVEN, tma_arg_u(k - 1u), tma_arg_u(stride), tma_arg_u(o->span),
                    tma_arg_dims(o->inner_mask), tma_arg_u(TMA_OVERLAP_SEARCH_BUDGET));
        return;
    }
    const uint32_t align = d->interleave == TMA_INTERLEAVE_32B ? TMA_GLOBAL_ALIGN_INTERLEAVE_32B : TMA_GLOBAL_ALIGN;
    const tma_rule_arg head[7] = {tma_arg_u(k - 1u), tma_arg_u(stride),  tma_arg_u(o->span),
                                  tma_arg_dims(o->inner_mask), tma_arg_u(k), tma_arg_u(j),
                                  tma_arg_u(tma_rule_round_up(o->span, align))};
    tma_tiled_desc fixed = *d;
    tma_overlap ignored;
    fixed.global_stride[k - 1] = stride * es; /* stride < 2^40 (checked before), so no overflow */
    if (es > 1u && tma_rule_one_to_one(&fixed, &ignored)) {
        TMA_VIOLATE(s, OVERLAP_ELEMENTS, head[0], head[1], head[2], head[3], head[4], head[5], head[6],
                    tma_arg_s(tma_rule_dtype_name(d->dtype)), tma_arg_u(stride * es));
        return;
    }
    fixed = *d;
    fixed.global_dim[k] = d->global_dim[j];
    fixed.global_dim[j] = d->global_dim[k];
    if (d->global_dim[j] != d->global_dim[k] && tma_rule_one_to_one(&fixed, &ignored)) {
        TMA_VIOLATE(s, OVERLAP_SWAPPED, head[0], head[1], head[2], head[3], head[4], head[5], head[6],
                    tma_arg_u(d->global_dim[k]), tma_arg_u(d->global_dim[j]));
        return;
    }
    TMA_VIOLATE(s, OVERLAP, head[0], head[1], head[2], head[3], head[4], head[5], head[6]);
}

/* ---------------------------------------------------------------------------------------------
 * The descriptor checker: every rule whose fields are valid is evaluated, so one call reports every
 * independent mistake; a rule that reads a field another rule found invalid is skipped.
 * ------------------------------------------------------------------------------------------- */

/* The element type: a packed sub-byte type of compute capability 10.x, or no type at all. Returns whether it is one
 * libtma supports. The same rule for tiled and im2col maps. */
TMA_HD int tma_rules_dtype_(tma_dtype dtype, tma_rule_sink *s) {
    const int packed = (int)dtype >= (int)TMA_DTYPE_COUNT_ && (int)dtype <= (int)TMA_DTYPE_LAST_DRIVER_;
    const int ok = (unsigned)dtype < (unsigned)TMA_DTYPE_COUNT_;
    if (packed)
        TMA_VIOLATE(s, DTYPE_PACKED, tma_arg_i((int)dtype));
    else if (!ok)
        TMA_VIOLATE(s, DTYPE_UNKNOWN, tma_arg_i((int)dtype));
    return ok;
}

/* Which of the mode enumerations a descriptor holds valid values in. */
typedef struct tma_mode_checks {
    int il_ok, sw_enum_ok, sw_ok, oob_ok;
} tma_mode_checks;

/* The modes, each on its own (interleave, swizzle - Hopper's four -, L2 promotion, out-of-bounds fill), then NaN fill
 * for an integer type. The same rules for tiled and im2col maps. */
TMA_HD tma_mode_checks tma_rules_modes_(tma_dtype dtype, int dtype_ok, tma_interleave interleave, tma_swizzle swizzle,
                                        tma_l2_promotion l2, tma_oob_fill oob, tma_rule_sink *s) {
    tma_mode_checks m;
    m.il_ok = (unsigned)interleave <= (unsigned)TMA_INTERLEAVE_32B;
    if (!m.il_ok)
        TMA_VIOLATE(s, INTERLEAVE_ENUM, tma_arg_i((int)interleave));
    m.sw_enum_ok = (unsigned)swizzle <= (unsigned)TMA_SWIZZLE_128B_ATOM_64B;
    m.sw_ok = (unsigned)swizzle <= (unsigned)TMA_SWIZZLE_128B;
    if (!m.sw_enum_ok)
        TMA_VIOLATE(s, SWIZZLE_ENUM, tma_arg_i((int)swizzle));
    else if (!m.sw_ok)
        TMA_VIOLATE(s, SWIZZLE_SM100, tma_arg_s(tma_rule_swizzle_name(swizzle)));
    if ((unsigned)l2 > (unsigned)TMA_L2_256B)
        TMA_VIOLATE(s, L2_ENUM, tma_arg_i((int)l2));
    m.oob_ok = (unsigned)oob <= (unsigned)TMA_OOB_NAN;
    if (!m.oob_ok)
        TMA_VIOLATE(s, OOB_ENUM, tma_arg_i((int)oob));
    if (dtype_ok && m.oob_ok && oob == TMA_OOB_NAN && !tma_rule_dtype_is_float(dtype))
        TMA_VIOLATE(s, OOB_NAN_INTEGER, tma_arg_s(tma_rule_dtype_name(dtype)));
    return m;
}

/* The rules of the tensor in global memory, the same for tiled and im2col maps: the address (not NULL, unless
 * null_ok: a template's; 16-byte aligned, 32 with INTERLEAVE_32B) and, when the rank is valid, every dimension
 * 1..2^32 and every stride aligned like the address and below 2^40. null_hint ends the NULL address's message.
 * *dims_ok / *strides_ok say whether those held. */
TMA_HD void tma_rules_global_tensor_(uint32_t rank, int rank_ok, int il32, uint64_t addr, int null_ok,
                                     const char *null_hint, const uint64_t *global_dim, const uint64_t *global_stride,
                                     int *dims_ok, int *strides_ok, tma_rule_sink *s) {
    const uint32_t align = il32 ? TMA_GLOBAL_ALIGN_INTERLEAVE_32B : TMA_GLOBAL_ALIGN;
    const char *align_why = il32 ? " (TMA_INTERLEAVE_32B needs 32)" : "";
    if (addr == 0u && !null_ok)
        TMA_VIOLATE(s, ADDRESS_NULL, tma_arg_s(null_hint));
    else if (addr % align != 0u)
        TMA_VIOLATE(s, ADDRESS_ALIGN, tma_arg_x(addr), tma_arg_u(align), tma_arg_s(align_why));
    *dims_ok = rank_ok, *strides_ok = rank_ok;
    if (!rank_ok)
        return;
    for (uint32_t i = 0; i < rank; i++)
        if (global_dim[i] == 0u || global_dim[i] > TMA_MAX_GLOBAL_DIM) {
            TMA_VIOLATE(s, GLOBAL_DIM, tma_arg_u(i), tma_arg_u(global_dim[i]));
            *dims_ok = 0;
        }
    for (uint32_t i = 0; i + 1u < rank; i++) {
        const uint64_t st = global_stride[i];
        if (st % align != 0u) {
            TMA_VIOLATE(s, STRIDE_ALIGN, tma_arg_u(i), tma_arg_u(st), tma_arg_u(align), tma_arg_s(align_why),
                        tma_arg_u(tma_rule_round_up(st ? st : 1u, align)));
            *strides_ok = 0;
        }
        if (st >= TMA_GLOBAL_STRIDE_LIMIT) {
            TMA_VIOLATE(s, STRIDE_RANGE, tma_arg_u(i), tma_arg_u(st));
            *strides_ok = 0;
        }
    }
}

/* The rules of a tiled descriptor's tensor in global memory: tma_rules_global_tensor_, then the store-side overlap
 * rule (TMA_DESC_STORE) or the extent rule. The only rules that read the global address, dimensions and strides:
 * tma_rules_tiled applies them among the rest, tma_rules_tiled_tensor alone. */
TMA_HD void tma_rules_tiled_tensor_(const tma_tiled_desc *d, int rank_ok, int dtype_ok, int il_ok, tma_rule_sink *s) {
    /* A template's address and strides are placeholders, replaced on the device before any copy: it may leave the
     * address NULL, and the store-side rules wait for the map built from it (the builder clears the flag). */
    const int tmpl = (d->flags & TMA_DESC_TEMPLATE) != 0u, store = (d->flags & TMA_DESC_STORE) != 0u && !tmpl;
    const uint64_t addr = (uint64_t)(uintptr_t)d->global_address;
    int dims_ok = 0, strides_ok = 0;
    tma_rules_global_tensor_(d->rank, rank_ok, il_ok && d->interleave == TMA_INTERLEAVE_32B, addr, tmpl,
                             "; only a template encoded on the host, whose address a kernel replaces before any "
                             "copy, may leave it NULL (TMA_DESC_TEMPLATE)",
                             d->global_dim, d->global_stride, &dims_ok, &strides_ok, s);
    if (rank_ok && dtype_ok && dims_ok && strides_ok) {
        tma_overlap o;
        if (store && !tma_rule_one_to_one(d, &o))
            tma_rule_report_overlap(d, &o, s); /* the extent rule would only repeat a huge span */
        else {
            const uint64_t extent = tma_rule_global_extent(d);
            if (extent == 0u || extent - 1u > UINT64_MAX - addr)
                TMA_VIOLATE(s, EXTENT, tma_arg_u(0));
        }
    }
}

/** The rules of d's tensor in global memory alone (its address, dimensions and strides: null, alignment, ranges,
 *  the extent, and with TMA_DESC_STORE the overlap rule), for a descriptor whose every other field passed
 *  tma_rules_tiled before: a map built from a checked template by edits of its address, dimensions or strides
 *  breaks a rule only here, and this is all its check needs (tma_builder_check_tensor). It reports what
 *  tma_rules_tiled would report first, in a fraction of the code: on an H100 the whole check was two thirds of the
 *  grouped GEMM's map build, most of it fetching its instructions (docs/lab/grouped_gemm.md "A check of what the
 *  edits change"). @return the first violation's status, or TMA_OK */
TMA_HD tma_status tma_rules_tiled_tensor(const tma_tiled_desc *d, tma_rule_sink *s) {
    const int rank_ok = d->rank >= 1u && d->rank <= (uint32_t)TMA_MAX_RANK;
    tma_rules_tiled_tensor_(d, rank_ok, 1, 1, s);
    return s->first;
}

/** Check d against every rule of cuTensorMapEncodeTiled and libtma's stricter ones, reporting each
 *  violation to s; the store-side rules (the overlap rule) with TMA_DESC_STORE only, and a template
 *  (TMA_DESC_TEMPLATE) may have a NULL address. @return the first violation's status, or TMA_OK */
TMA_HD tma_status tma_rules_tiled(const tma_tiled_desc *d, tma_rule_sink *s) {
    if (d == 0) {
        TMA_VIOLATE(s, NULL_DESC, tma_arg_u(0));
        return s->first;
    }
    /* ---- kinds: each enumeration on its own ---- */
    const int dtype_ok = tma_rules_dtype_(d->dtype, s);
    const int rank_ok = d->rank >= 1u && d->rank <= (uint32_t)TMA_MAX_RANK;
    if (!rank_ok)
        TMA_VIOLATE(s, RANK, tma_arg_u(d->rank));
    const tma_mode_checks modes = tma_rules_modes_(d->dtype, dtype_ok, d->interleave, d->swizzle, d->l2_promotion,
                                                   d->oob_fill, s);
    const int il_ok = modes.il_ok, sw_ok = modes.sw_ok;
    if (il_ok && rank_ok && d->interleave != TMA_INTERLEAVE_NONE && d->rank < 3u)
        TMA_VIOLATE(s, INTERLEAVE_RANK, tma_arg_u(d->rank), tma_arg_s(tma_rule_interleave_name(d->interleave)));
    /* No rule ties INTERLEAVE_32B to SWIZZLE_32B, although the documentation asks for it: measured on an H200, the
     * driver encodes NONE/64B/128B too and loads through them complete and match the model (docs/HARDWARE.md
     * "Interleaved layouts"); the hang once blamed on them was a wrong expect-tx count. */

    /* ---- the tensor in global memory ---- */
    tma_rules_tiled_tensor_(d, rank_ok, dtype_ok, il_ok, s);
    if (!rank_ok)
        return s->first; /* every rule below reads dimensions */

    /* ---- the box ---- */
    int box_ok = 1; /* every box_dim in range */
    for (uint32_t i = 0; i < d->rank; i++)
        if (d->box_dim[i] == 0u || d->box_dim[i] > TMA_MAX_BOX_DIM) {
            TMA_VIOLATE(s, BOX_DIM, tma_arg_u(i), tma_arg_u(d->box_dim[i]));
            box_ok = 0;
        }
    const int box0_ok = d->box_dim[0] >= 1u && d->box_dim[0] <= TMA_MAX_BOX_DIM;
    int estride_ok = 1;
    for (uint32_t i = 0; i < d->rank; i++)
        if (d->element_stride[i] > TMA_MAX_ELEMENT_STRIDE) {
            TMA_VIOLATE(s, ELEMENT_STRIDE, tma_arg_u(i), tma_arg_u(d->element_stride[i]));
            estride_ok = 0;
        }
    if (il_ok && d->interleave == TMA_INTERLEAVE_NONE && d->element_stride[0] > 1u &&
        d->element_stride[0] <= TMA_MAX_ELEMENT_STRIDE)
        TMA_VIOLATE(s, ELEMENT_STRIDE_0, tma_arg_u(d->element_stride[0]));

    if (dtype_ok && box0_ok) {
        const uint32_t es = tma_rule_dtype_bytes(d->dtype), inner = d->box_dim[0] * es, unit = tma_box_dim0_unit(es);
        const char *tn = tma_rule_dtype_name(d->dtype);
        if (inner % TMA_BOX_INNER_ALIGN != 0u)
            TMA_VIOLATE(s, BOX_INNER_BYTES, tma_arg_u(d->box_dim[0]), tma_arg_s(tn), tma_arg_u(inner),
                        tma_arg_u(unit), tma_arg_u((d->box_dim[0] + unit - 1u) / unit * unit));
        const uint32_t span = sw_ok ? tma_swizzle_span(d->swizzle) : 0u;
        if (il_ok && d->interleave == TMA_INTERLEAVE_NONE && span != 0u && inner > span)
            TMA_VIOLATE(s, BOX_SWIZZLE_SPAN, tma_arg_u(d->box_dim[0]), tma_arg_s(tn), tma_arg_u(inner),
                        tma_arg_u(span), tma_arg_s(tma_rule_swizzle_name(d->swizzle)),
                        tma_arg_u(tma_box_dim_max(es, d->swizzle, 0)),
                        tma_arg_s(inner <= 128u ? ", a wider swizzle (TMA_SWIZZLE_128B)," : ""));
    }
    if (dtype_ok && box_ok && estride_ok && sw_ok && il_ok) {
        const uint64_t smem = tma_rule_box_smem_bytes(d);
        if (smem > TMA_MAX_BOX_SMEM_BYTES)
            TMA_VIOLATE(s, BOX_SMEM, tma_arg_u(smem), tma_arg_u(TMA_MAX_BOX_SMEM_BYTES));
        else if (tma_rule_driver_box_bytes(d) > TMA_DRIVER_MAX_BOX_BYTES)
            TMA_VIOLATE(s, BOX_DRIVER_BYTES, tma_arg_u(tma_rule_driver_box_bytes(d) / tma_rule_dtype_bytes(d->dtype)),
                        tma_arg_u(tma_rule_dtype_bytes(d->dtype)), tma_arg_u(tma_rule_driver_box_bytes(d)),
                        tma_arg_u(TMA_DRIVER_MAX_BOX_BYTES));
    }
    return s->first;
}

/** The first rule d breaks, as a violation in *v (optional): what tma_check_tiled says, on the host or the device,
 *  for a refusal that quotes it as its cause (tma_rule_format_text). @return its status, or TMA_OK */
TMA_HD tma_status tma_rule_check_tiled(const tma_tiled_desc *d, tma_violation *v) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    if (tma_rules_tiled(d, &s) != TMA_OK && v != 0)
        *v = first;
    return s.first;
}

/* ---------------------------------------------------------------------------------------------
 * One copy: the rules the encoder cannot see, for the host (tma_check_coords, the model) and the
 * device checked mode. The map's facts come as plain values, so a tma_tensor serves as well as a
 * descriptor.
 * ------------------------------------------------------------------------------------------- */

/** The facts of a map that per-copy rules read. */
typedef struct tma_copy_facts {
    uint32_t rank;        /**< the map's rank */
    uint32_t elem_bytes;  /**< element size */
    int interleaved;      /**< interleave != NONE (coord[0] counts whole chunks there: no alignment rule) */
    int load_only;        /**< two coordinates of the map reach the same bytes: no store through it */
    int is_template;      /**< a template (TMA_DESC_TEMPLATE): no copy through it until its fields are replaced */
} tma_copy_facts;

/** Check one copy: copy_rank its instruction's rank (the map's, on the host), c its coordinates (c[i]
 *  for i >= the map's rank ignored), smem_addr its shared-memory address, or ~0u where unknown (host).
 *  @return the first violation's status, or TMA_OK */
TMA_HD tma_status tma_rules_copy(const tma_copy_facts *m, uint32_t copy_rank, const int32_t *c, uint32_t smem_addr,
                                 int store, tma_rule_sink *s) {
    const char *what = store ? "store" : "load";
    if (smem_addr != ~0u && smem_addr % TMA_SMEM_ALIGN != 0u)
        TMA_VIOLATE(s, SMEM_ALIGN, tma_arg_x(smem_addr), tma_arg_s(what));
    if (copy_rank != m->rank)
        TMA_VIOLATE(s, COPY_RANK, tma_arg_s(what), tma_arg_u(copy_rank), tma_arg_u(m->rank));
    if (c == 0) {
        TMA_VIOLATE(s, NULL_COORDS, tma_arg_u(0));
        return s->first;
    }
    if (m->is_template)
        TMA_VIOLATE(s, COPY_TEMPLATE, tma_arg_s(what));
    const int64_t inner = (int64_t)c[0] * (int64_t)m->elem_bytes;
    if (!m->interleaved && m->elem_bytes != 0u && inner % (int64_t)TMA_COORD0_ALIGN_BYTES != 0)
        TMA_VIOLATE(s, COORD_ALIGN, tma_arg_s(what), tma_arg_i(c[0]), tma_arg_u(m->elem_bytes), tma_arg_i(inner),
                    tma_arg_u(TMA_COORD0_ALIGN_BYTES / m->elem_bytes));
    if (store && m->load_only)
        TMA_VIOLATE(s, STORE_OVERLAP, tma_arg_s(what));
    if (store)
        for (uint32_t i = 0; i < m->rank && i < (uint32_t)TMA_MAX_RANK; i++)
            if (c[i] < 0) {
                TMA_VIOLATE(s, COORD_NEGATIVE_STORE, tma_arg_u(i), tma_arg_i(c[i]));
                break;
            }
    return s->first;
}

/** The per-copy facts of a descriptor that passed tma_rules_tiled. */
TMA_HD tma_copy_facts tma_rule_copy_facts(const tma_tiled_desc *d) {
    tma_copy_facts f;
    tma_overlap o;
    f.rank = d->rank;
    f.elem_bytes = tma_rule_dtype_bytes(d->dtype);
    f.interleaved = d->interleave != TMA_INTERLEAVE_NONE;
    f.load_only = !tma_rule_one_to_one(d, &o);
    f.is_template = (d->flags & TMA_DESC_TEMPLATE) != 0u;
    return f;
}

/** The per-copy facts of a tiled map from its tma_tensor's box facts (the device's checked mode). */
TMA_HD tma_copy_facts tma_rule_copy_facts_of_box(const tma_box_info *b) {
    tma_copy_facts f;
    f.rank = b->rank;
    f.elem_bytes = b->elem_bytes;
    f.interleaved = (b->flags & TMA_BOX_INTERLEAVED) != 0u;
    f.load_only = (b->flags & TMA_BOX_LOAD_ONLY) != 0u;
    f.is_template = (b->flags & TMA_BOX_TEMPLATE) != 0u;
    return f;
}

/** The box facts of a descriptor that passes tma_rules_tiled: what a copy delivers and occupies. */
TMA_HD tma_box_info tma_rule_box_info(const tma_tiled_desc *d) {
    tma_box_info b;
    const tma_copy_facts facts = tma_rule_copy_facts(d);
    b.rank = d->rank;
    b.elem_bytes = tma_rule_dtype_bytes(d->dtype);
    b.swizzle = (uint32_t)d->swizzle;
    b.tx_bytes = (uint32_t)tma_rule_box_tx_bytes(d); /* <= 227 KiB: checked */
    b.smem_bytes = (uint32_t)tma_rule_box_smem_bytes(d);
    b.row_pitch = (uint32_t)tma_rule_box_row_pitch(d);
    b.rows = (uint32_t)tma_rule_box_rows(d);
    for (uint32_t i = 0; i < 5; i++)
        b.box_dim[i] = i < d->rank ? d->box_dim[i] : 0u;
    b.flags = (facts.load_only ? TMA_BOX_LOAD_ONLY : 0u) | (facts.interleaved ? TMA_BOX_INTERLEAVED : 0u) |
              (facts.is_template ? TMA_BOX_TEMPLATE : 0u);
    b.dtype = (uint32_t)d->dtype;
    for (uint32_t i = 0; i < 3; i++) {
        b.im2col_lo[i] = 0;
        b.im2col_hi[i] = 0;
    }
    return b;
}

/* ---------------------------------------------------------------------------------------------
 * Reduce-stores: which element types each reduction takes, in each of the three forms (TMA_REDUCE_FORMS,
 * tma/rules.h, has the table and its evidence).
 * ------------------------------------------------------------------------------------------- */
/** PTX name of a reduction ("add", "min", ...); "?" for a value that is not one. */
TMA_HD const char *tma_rule_reduce_name(tma_reduce op) {
    switch (op) {
    case TMA_REDUCE_ADD: return "add";
    case TMA_REDUCE_MIN: return "min";
    case TMA_REDUCE_MAX: return "max";
    case TMA_REDUCE_INC: return "inc";
    case TMA_REDUCE_DEC: return "dec";
    case TMA_REDUCE_AND: return "and";
    case TMA_REDUCE_OR: return "or";
    case TMA_REDUCE_XOR: return "xor";
    default: return "?";
    }
}

/** 1 where the reduction exists for the type in the given form (a tma_reduce_form). */
TMA_HD int tma_rule_reduce_exists(tma_dtype t, tma_reduce op, int form) {
#define TMA_REDUCE_EXISTS_(T, O, BULK, TILED, CLUSTER)                                                          \
    if (t == TMA_DTYPE_##T && op == TMA_REDUCE_##O)                                                            \
        return form == TMA_REDUCE_FORM_TILED ? (TILED)                                                         \
               : form == TMA_REDUCE_FORM_CLUSTER ? (sizeof(CLUSTER) > 1u) : (sizeof(BULK) > 1u);
    TMA_REDUCE_FORMS(TMA_REDUCE_EXISTS_)
#undef TMA_REDUCE_EXISTS_
    return 0;
}

/** The reductions a type takes in a form, for messages ("add, min, max"; "no reduction"). Static strings for the
 *  sets TMA_REDUCE_FORMS produces, so the device can quote them too. */
TMA_HD const char *tma_rule_reduce_list(tma_dtype t, int form) {
    uint32_t mask = 0;
    for (uint32_t op = 0; op < (uint32_t)TMA_REDUCE_COUNT_; op++)
        if (tma_rule_reduce_exists(t, (tma_reduce)op, form))
            mask |= 1u << op;
    switch (mask) {
    case 0x00u: return "no reduction";
    case 0x01u: return "add only";
    case 0x07u: return "add, min, max";
    case 0x06u: return "min, max";
    case 0xe0u: return "and, or, xor";
    case 0xe6u: return "min, max, and, or, xor";
    case 0xe7u: return "add, min, max, and, or, xor";
    case 0xffu: return "add, min, max, inc, dec, and, or, xor";
    default: return "the reductions TMA_REDUCE_FORMS lists (tma/rules.h)";
    }
}

/** Rule: the reduction exists for the type in the form (a tma_reduce_form). */
TMA_HD tma_status tma_rules_reduce(tma_dtype t, tma_reduce op, int form, tma_rule_sink *s) {
    const tma_rule_arg name = tma_arg_s(tma_rule_reduce_name(op)), type = tma_arg_s(tma_rule_dtype_name(t));
    if ((uint32_t)op >= (uint32_t)TMA_REDUCE_COUNT_)
        TMA_VIOLATE(s, REDUCE_OP_ENUM, tma_arg_i((int)op));
    else if (tma_rule_reduce_exists(t, op, form))
        return s->first;
    else if (form == TMA_REDUCE_FORM_TILED)
        TMA_VIOLATE(s, REDUCE_TYPE_TILED, name, type, tma_arg_s(tma_rule_reduce_list(t, form)));
    else if (form == TMA_REDUCE_FORM_CLUSTER)
        TMA_VIOLATE(s, REDUCE_TYPE_CLUSTER, name, type, tma_arg_s(tma_rule_reduce_list(t, form)));
    else
        TMA_VIOLATE(s, REDUCE_TYPE_BULK, name, type, tma_arg_s(tma_rule_reduce_list(t, form)));
    return s->first;
}

/* ---------------------------------------------------------------------------------------------
 * 1-D bulk copies: cp.async.bulk (global -> shared, multicast too; shared -> global), cp.reduce.async.bulk
 * and cp.async.bulk.prefetch.L2. No tensor map, so nothing bounds-checks them: these rules are all there is.
 * ------------------------------------------------------------------------------------------- */
/** Check one 1-D bulk copy: `what` names it in messages ("load", "store", "reduce", "prefetch"),
 *  global_addr its global address, smem_addr its shared address (~0u for none: a prefetch, or unknown),
 *  size its byte count. @return the first violation's status, or TMA_OK */
TMA_HD tma_status tma_rules_bulk(const char *what, uint64_t global_addr, uint32_t smem_addr, uint64_t size,
                                 tma_rule_sink *s) {
    if (size % TMA_BULK_ALIGN != 0u) {
        const uint64_t body = size / TMA_BULK_ALIGN * TMA_BULK_ALIGN;
        TMA_VIOLATE(s, BULK_SIZE_ALIGN, tma_arg_s(what), tma_arg_u(size), tma_arg_u(body), tma_arg_u(size - body),
                    tma_arg_u(body + TMA_BULK_ALIGN));
    }
    if (smem_addr != ~0u && size > TMA_MAX_SMEM_PER_BLOCK)
        TMA_VIOLATE(s, BULK_SIZE_SMEM, tma_arg_s(what), tma_arg_u(size), tma_arg_u(TMA_MAX_SMEM_PER_BLOCK));
    if (global_addr % TMA_BULK_ALIGN != 0u)
        TMA_VIOLATE(s, BULK_GLOBAL_ALIGN, tma_arg_x(global_addr), tma_arg_s(what),
                    tma_arg_u(global_addr % TMA_BULK_ALIGN));
    if (smem_addr != ~0u && smem_addr % TMA_BULK_ALIGN != 0u)
        TMA_VIOLATE(s, BULK_SMEM_ALIGN, tma_arg_x(smem_addr), tma_arg_s(what));
    return s->first;
}

/** Check a 1-D bulk copy or reduce from this block's shared memory into a cluster peer's (rank `rank` of a cluster of
 *  cluster_blocks): the bulk rules for both shared addresses (dst_addr: the destination's offset, as in this block),
 *  and a rank inside the cluster. */
TMA_HD tma_status tma_rules_bulk_cluster(const char *what, uint32_t dst_addr, uint32_t src_addr, uint64_t size,
                                         uint32_t rank, uint32_t cluster_blocks, tma_rule_sink *s) {
    tma_rules_bulk(what, 0u, src_addr, size, s);
    if (dst_addr % TMA_BULK_ALIGN != 0u)
        TMA_VIOLATE(s, BULK_SMEM_ALIGN, tma_arg_x(dst_addr), tma_arg_s(what));
    if (rank >= cluster_blocks)
        TMA_VIOLATE(s, CLUSTER_RANK, tma_arg_s(what), tma_arg_u(rank), tma_arg_u(cluster_blocks),
                    tma_arg_u(cluster_blocks ? cluster_blocks - 1u : 0u));
    return s->first;
}

/* ---------------------------------------------------------------------------------------------
 * Multicast (tiled and 1-D): the copy lands, at the same shared offset, in every block of the cluster
 * whose bit is set in cta_mask, and each of those blocks' barriers at the same offset receives the bytes.
 * ------------------------------------------------------------------------------------------- */
/** Check a multicast's mask against the cluster's size (cluster_blocks = %cluster_nctarank). */
TMA_HD tma_status tma_rules_multicast(const char *what, uint32_t cta_mask, uint32_t cluster_blocks,
                                      tma_rule_sink *s) {
    if (cluster_blocks == 0u || cluster_blocks > TMA_MAX_CLUSTER_BLOCKS)
        TMA_VIOLATE(s, MULTICAST_CLUSTER, tma_arg_u(cluster_blocks), tma_arg_u(TMA_MAX_CLUSTER_BLOCKS));
    else if ((cta_mask & ~(uint32_t)tma_cluster_mask_all(cluster_blocks)) != 0u) {
        uint32_t bit = cluster_blocks;
        while ((cta_mask >> bit & 1u) == 0u)
            bit++;
        TMA_VIOLATE(s, MULTICAST_MASK_RANGE, tma_arg_s(what), tma_arg_x(cta_mask), tma_arg_u(cluster_blocks),
                    tma_arg_u(bit), tma_arg_u(cluster_blocks - 1u));
    }
    return s->first;
}

/* ---------------------------------------------------------------------------------------------
 * Maps changed on the device: what the edits of tma/rules.h (tma_map_edit) do that the descriptor alone does not
 * say - the edit no instruction can make, the map of zeros, and each field's operand encoding.
 * ------------------------------------------------------------------------------------------- */
/** Whether edit e of a map that stands for d is one tensormap.replace cannot make: the map must be encoded
 *  again from zeros (which sets the L2 promotion to TMA_L2_NONE: no instruction sets it).
 *  Measured on an H200 (docs/HARDWARE.md, "Maps changed on the device"): a TF32 element type is the f32 code
 *  plus a flag of its own (byte 10, bit 0, in the driver's maps); replacing the element type sets that flag for
 *  tf32 and tf32_ftz but never clears it. A map changed from tf32 to f32 still rounds loads to TF32; changed to
 *  any other type, its first copy faults with an illegal instruction. */
TMA_HD int tma_rule_edit_needs_reencode(const tma_tiled_desc *d, tma_map_edit e) {
    const int was_tf32 = tma_rule_dtype_is_tf32(d->dtype);
    const int to_tf32 = e.value <= (uint64_t)TMA_DTYPE_LAST_DRIVER_ && tma_rule_dtype_is_tf32((tma_dtype)e.value);
    return e.field == (uint32_t)TMA_FIELD_DTYPE && was_tf32 && !to_tf32;
}

/** What a map of 128 zero bytes stands for, as a descriptor: the start of a map built from zeros on the device
 *  (measured: docs/HARDWARE.md). Every field a usable map needs must then be set by edits; the rules say which
 *  are missing (a zero global_dim or box_dim, say). */
TMA_HD tma_tiled_desc tma_rule_zero_map_desc(void) {
    tma_tiled_desc d;
    d.dtype = TMA_DTYPE_U8;
    d.rank = 1u; /* the rank field holds rank - 1 */
    d.global_address = 0;
    for (uint32_t i = 0; i < 5; i++) {
        d.global_dim[i] = 0u;
        d.box_dim[i] = 0u;
        d.element_stride[i] = 0u; /* "0 means 1" for the descriptor; the rules accept it */
        if (i < 4)
            d.global_stride[i] = 0u;
    }
    d.interleave = TMA_INTERLEAVE_NONE;
    d.swizzle = TMA_SWIZZLE_NONE;
    d.l2_promotion = TMA_L2_NONE;
    d.oob_fill = TMA_OOB_ZERO;
    d.flags = 0u;
    return d;
}

/** The operand tensormap.replace takes for an edit (the descriptor's value in the instruction's encoding),
 *  for code compiled by CUDA version `cuda_version` (major * 1000 + minor * 10, as CUDA_VERSION).
 *  - rank: rank - 1.
 *  - global_stride: bytes from PTX ISA 8.5 (CUDA 12.5) on; before it, ptxas took the stride in 16-byte units
 *    (public projects shift it right by 4 for older toolkits). This is the one place that knows.
 *  - dtype: the PTX elemtype code, which orders the types differently from CUtensorMapDataType (f32_ftz and
 *    f64, bf16 move).
 *  - the rest: the descriptor's value as it is.
 *  The encodings are checked against the driver's own maps on the GPU (tests/test_gpu_tensormap.c). */
TMA_HD uint64_t tma_rule_edit_operand(tma_map_edit e, uint32_t cuda_version) {
    switch ((tma_map_field)e.field) {
    case TMA_FIELD_RANK: return e.value - 1u;
    case TMA_FIELD_GLOBAL_STRIDE: return cuda_version >= 12050u ? e.value : e.value >> 4;
    case TMA_FIELD_DTYPE:
        switch ((tma_dtype)e.value) {
        case TMA_DTYPE_F64: return 9u;
        case TMA_DTYPE_BF16: return 10u;
        case TMA_DTYPE_F32_FTZ: return 8u;
        default: return e.value; /* u8 .. f32 and tf32, tf32_ftz: the same codes */
        }
    default: return e.value;
    }
}

/* ---------------------------------------------------------------------------------------------
 * im2col maps (cuTensorMapEncodeIm2col) and their loads. Measured on an H200 (../shared/docs/TMA-FACTS.md, im2col
 * section; docs/HARDWARE.md "im2col (ours)"):
 *   - a copy writes pixels_per_column rows, one per pixel, channels fastest; the row pitch is
 *     channels_per_pixel * elem, or the swizzle span when that is larger (the padding is untouched); the swizzle
 *     acts on the shared address as for tiled loads; the mbarrier receives channels_per_pixel * elem * pixels;
 *   - the corners and the copy's offsets are indexed innermost first ([0] = W, [1] = H, [2] = D);
 *   - the walk starts at the copy's coordinates {c, w, (h, (d,)) n}; the next pixel is w += element_stride[1];
 *     when w passes global_dim[1] + upper[0] - 1 it restarts at lower[0] (not at the start) and h steps by
 *     element_stride[2]; H carries into D the same way; a carry out of the outermost spatial dimension steps n
 *     by element_stride[rank - 1]; element_stride[0] is ignored (channels stay contiguous);
 *   - the pixel fetched is the walked pixel plus the copy's offset, per spatial dimension; a fetched pixel
 *     outside the tensor (any spatial coordinate, or n, n < 0 too) is filled whole, channels < 0 or >=
 *     global_dim[0] per element (a negative channel start and a negative n: measured, loads complete as modelled);
 *     past the last image the walk goes on writing fill rows;
 *   - a walked start outside the bounding box [lower_i, global_dim + upper_i - 1] raises "illegal instruction".
 * ------------------------------------------------------------------------------------------- */

/** The largest corner of a rank-`rank` im2col map (doc): 32767, 127, 15; the smallest is -largest - 1. */
TMA_HD int32_t tma_rule_im2col_corner_max(uint32_t rank) {
    return rank == 3u ? 32767 : rank == 4u ? 127 : 15;
}

/** The largest im2col offset a rank-`rank` copy takes (PTX ISA): 65535, 255, 31. */
TMA_HD uint32_t tma_rule_im2col_offset_max(uint32_t rank) {
    return rank == 3u ? 65535u : rank == 4u ? 255u : 31u;
}

/** Whether the fields the footprints read (dtype, rank, channels, pixels, swizzle) are in range. */
TMA_HD int tma_rule_im2col_fields_valid(const tma_im2col_desc *d) {
    return d != 0 && tma_rule_dtype_bytes(d->dtype) != 0u && d->rank >= TMA_IM2COL_MIN_RANK &&
           d->rank <= (uint32_t)TMA_MAX_RANK && d->channels_per_pixel >= 1u &&
           d->channels_per_pixel <= TMA_IM2COL_MAX_CHANNELS && d->pixels_per_column >= 1u &&
           d->pixels_per_column <= TMA_IM2COL_MAX_PIXELS && (unsigned)d->swizzle <= (unsigned)TMA_SWIZZLE_128B &&
           (unsigned)d->interleave <= (unsigned)TMA_INTERLEAVE_32B;
}

/** The walk's step in dimension i: 0 means 1. */
TMA_HD uint32_t tma_rule_im2col_estride(const tma_im2col_desc *d, uint32_t i) {
    return tma_rule_estride_value(d->element_stride[i]);
}

/** Bytes between the pixels' rows in shared memory (measured): channels_per_pixel * elem, or the swizzle span when
 *  that is larger. */
TMA_HD uint64_t tma_rule_im2col_row_pitch(const tma_im2col_desc *d) {
    return tma_rule_row_pitch((uint64_t)d->channels_per_pixel * tma_rule_dtype_bytes(d->dtype), d->interleave,
                              d->swizzle);
}

/** Bytes one im2col copy delivers, what its mbarrier expects (measured): channels * elem * pixels. */
TMA_HD uint64_t tma_rule_im2col_tx_bytes(const tma_im2col_desc *d) {
    return (uint64_t)d->channels_per_pixel * tma_rule_dtype_bytes(d->dtype) * d->pixels_per_column;
}

/** Bytes one im2col copy occupies in shared memory, padding included. */
TMA_HD uint64_t tma_rule_im2col_smem_bytes(const tma_im2col_desc *d) {
    return tma_rule_im2col_row_pitch(d) * d->pixels_per_column;
}

/** The tensor of an im2col map as a tiled descriptor (same type, rank, address, dims, strides, layout), for the
 *  rules both kinds share (the extent). */
TMA_HD tma_tiled_desc tma_rule_im2col_as_tiled(const tma_im2col_desc *d) {
    tma_tiled_desc t;
    t.dtype = d->dtype;
    t.rank = d->rank;
    t.global_address = (void *)(uintptr_t)d->global_address;
    for (uint32_t i = 0; i < 5; i++) {
        t.global_dim[i] = d->global_dim[i];
        t.box_dim[i] = 1u;
        t.element_stride[i] = d->element_stride[i];
        if (i < 4)
            t.global_stride[i] = d->global_stride[i];
    }
    t.box_dim[0] = d->channels_per_pixel;
    t.interleave = d->interleave;
    t.swizzle = d->swizzle;
    t.l2_promotion = d->l2_promotion;
    t.oob_fill = d->oob_fill;
    t.flags = 0u; /* im2col maps are only loaded from: no store-side rule, and no template (NULL stays refused) */
    return t;
}

/** Check an im2col descriptor: every documented rule of cuTensorMapEncodeIm2col, the driver's measured ones, and
 *  libtma's stricter ones (NULL address, extent, a copy larger than a block's shared memory, element_stride[0]).
 *  Overlapping strides are allowed: im2col maps are only loaded from. @return the first violation's status */
TMA_HD tma_status tma_rules_im2col(const tma_im2col_desc *d, tma_rule_sink *s) {
    if (d == 0) {
        TMA_VIOLATE(s, IM2COL_NULL_DESC, tma_arg_u(0));
        return s->first;
    }
    /* ---- kinds ---- */
    const int dtype_ok = tma_rules_dtype_(d->dtype, s);
    const int rank_ok = d->rank >= TMA_IM2COL_MIN_RANK && d->rank <= (uint32_t)TMA_MAX_RANK;
    if (!rank_ok)
        TMA_VIOLATE(s, IM2COL_RANK, tma_arg_u(d->rank));
    const tma_mode_checks modes = tma_rules_modes_(d->dtype, dtype_ok, d->interleave, d->swizzle, d->l2_promotion,
                                                   d->oob_fill, s);
    const int il_ok = modes.il_ok, sw_ok = modes.sw_ok;
    /* measured: INTERLEAVE_32B does not require SWIZZLE_32B here either (the documentation says it does). */

    /* ---- the tensor in global memory ---- */
    const uint64_t addr = (uint64_t)(uintptr_t)d->global_address;
    int dims_ok = 0, strides_ok = 0;
    tma_rules_global_tensor_(d->rank, rank_ok, il_ok && d->interleave == TMA_INTERLEAVE_32B, addr, 0, "",
                             d->global_dim, d->global_stride, &dims_ok, &strides_ok, s);
    if (!rank_ok)
        return s->first; /* every rule below reads dimensions */
    if (dtype_ok && il_ok && dims_ok && strides_ok) {
        const tma_tiled_desc t = tma_rule_im2col_as_tiled(d);
        const uint64_t extent = tma_rule_global_extent(&t);
        if (extent == 0u || extent - 1u > UINT64_MAX - addr)
            TMA_VIOLATE(s, EXTENT, tma_arg_u(0));
    }

    /* ---- the bounding box ---- */
    const uint32_t spatial = d->rank - 2u;
    const int32_t cmax = tma_rule_im2col_corner_max(d->rank), cmin = -cmax - 1;
    int corners_ok = 1;
    for (uint32_t i = 0; i < spatial; i++) {
        if (d->pixel_box_lower[i] < cmin || d->pixel_box_lower[i] > cmax) {
            TMA_VIOLATE(s, IM2COL_CORNER, tma_arg_s("lower"), tma_arg_u(i), tma_arg_i(d->pixel_box_lower[i]),
                        tma_arg_i(cmin), tma_arg_i(cmax), tma_arg_u(d->rank));
            corners_ok = 0;
        }
        if (d->pixel_box_upper[i] < cmin || d->pixel_box_upper[i] > cmax) {
            TMA_VIOLATE(s, IM2COL_CORNER, tma_arg_s("upper"), tma_arg_u(i), tma_arg_i(d->pixel_box_upper[i]),
                        tma_arg_i(cmin), tma_arg_i(cmax), tma_arg_u(d->rank));
            corners_ok = 0;
        }
    }
    if (corners_ok && dims_ok)
        for (uint32_t i = 0; i < spatial; i++) {
            const int64_t lo = d->pixel_box_lower[i], up = d->pixel_box_upper[i];
            const uint64_t dim = d->global_dim[i + 1u];
            /* the driver's 32-bit sum (measured); exact below 2^31, which the first rule keeps it */
            const int64_t driver_end = (int64_t)(int32_t)(uint32_t)(d->global_dim[i] + (uint64_t)up);
            if ((int64_t)dim + up > 2147483647)
                TMA_VIOLATE(s, IM2COL_DIM_INT32, tma_arg_u(i + 1u), tma_arg_u(dim), tma_arg_u(i), tma_arg_i(up),
                            tma_arg_i((int64_t)dim + up));
            else if ((int64_t)dim + up - lo < 1)
                TMA_VIOLATE(s, IM2COL_BOX_EMPTY, tma_arg_u(i), tma_arg_u(i + 1u), tma_arg_u(dim), tma_arg_i(lo),
                            tma_arg_i(up));
            else if (il_ok && d->interleave != TMA_INTERLEAVE_NONE && driver_end - lo < 1)
                TMA_VIOLATE(s, IM2COL_BOX_EMPTY_INTERLEAVED, tma_arg_u(i), tma_arg_u(d->global_dim[i]),
                            tma_arg_i(lo), tma_arg_i(up));
        }

    /* ---- one copy's footprint ---- */
    const int cpp_ok = d->channels_per_pixel >= 1u && d->channels_per_pixel <= TMA_IM2COL_MAX_CHANNELS;
    if (!cpp_ok)
        TMA_VIOLATE(s, IM2COL_CHANNELS, tma_arg_u(d->channels_per_pixel));
    const int ppc_ok = d->pixels_per_column >= 1u && d->pixels_per_column <= TMA_IM2COL_MAX_PIXELS;
    if (!ppc_ok)
        TMA_VIOLATE(s, IM2COL_PIXELS, tma_arg_u(d->pixels_per_column));
    for (uint32_t i = 0; i < d->rank; i++)
        if (d->element_stride[i] > TMA_MAX_ELEMENT_STRIDE)
            TMA_VIOLATE(s, ELEMENT_STRIDE, tma_arg_u(i), tma_arg_u(d->element_stride[i]));
    /* libtma: loads ignore element_stride[0] (measured); a value there is a mistake. */
    if (il_ok && d->interleave == TMA_INTERLEAVE_NONE && d->element_stride[0] > 1u &&
        d->element_stride[0] <= TMA_MAX_ELEMENT_STRIDE)
        TMA_VIOLATE(s, ELEMENT_STRIDE_0, tma_arg_u(d->element_stride[0]));
    if (dtype_ok && cpp_ok) {
        const uint32_t es = tma_rule_dtype_bytes(d->dtype), inner = d->channels_per_pixel * es,
                       unit = tma_box_dim0_unit(es);
        const char *tn = tma_rule_dtype_name(d->dtype);
        if (inner % TMA_BOX_INNER_ALIGN != 0u)
            TMA_VIOLATE(s, IM2COL_INNER_BYTES, tma_arg_u(d->channels_per_pixel), tma_arg_s(tn), tma_arg_u(inner),
                        tma_arg_u(unit), tma_arg_u((d->channels_per_pixel + unit - 1u) / unit * unit));
        const uint32_t span = sw_ok ? tma_swizzle_span(d->swizzle) : 0u;
        if (il_ok && d->interleave == TMA_INTERLEAVE_NONE && span != 0u && inner > span)
            TMA_VIOLATE(s, IM2COL_SWIZZLE_SPAN, tma_arg_u(d->channels_per_pixel), tma_arg_s(tn), tma_arg_u(inner),
                        tma_arg_u(span), tma_arg_s(tma_rule_swizzle_name(d->swizzle)),
                        tma_arg_u(tma_box_dim_max(es, d->swizzle, 0)));
    }
    if (tma_rule_im2col_fields_valid(d)) {
        const uint64_t smem = tma_rule_im2col_smem_bytes(d);
        if (smem > TMA_MAX_BOX_SMEM_BYTES)
            TMA_VIOLATE(s, IM2COL_SMEM, tma_arg_u(smem), tma_arg_u(d->pixels_per_column),
                        tma_arg_u(tma_rule_im2col_row_pitch(d)), tma_arg_u(TMA_MAX_BOX_SMEM_BYTES));
    }
    return s->first;
}

/** tma_rule_check_tiled for an im2col descriptor: what tma_check_im2col says, as a violation. */
TMA_HD tma_status tma_rule_check_im2col(const tma_im2col_desc *d, tma_violation *v) {
    tma_violation first;
    tma_rule_sink s = tma_rule_sink_make(&first, 1);
    if (tma_rules_im2col(d, &s) != TMA_OK && v != 0)
        *v = first;
    return s.first;
}

/** The facts of an im2col map that its per-copy rules read (from a descriptor, or a tma_tensor on the device). */
typedef struct tma_im2col_facts {
    uint32_t rank;        /**< 3..5 */
    uint32_t elem_bytes;  /**< element size */
    int32_t lo[3];        /**< the bounding box of each spatial dimension: pixel_box_lower ... */
    int64_t hi[3];        /**< ... to global_dim + pixel_box_upper - 1 */
} tma_im2col_facts;

/** The per-copy facts of a descriptor that passed tma_rules_im2col. */
TMA_HD tma_im2col_facts tma_rule_im2col_facts(const tma_im2col_desc *d) {
    tma_im2col_facts f;
    f.rank = d->rank;
    f.elem_bytes = tma_rule_dtype_bytes(d->dtype);
    for (uint32_t i = 0; i < 3; i++) {
        const int in = i + 2u < d->rank;
        f.lo[i] = in ? d->pixel_box_lower[i] : 0;
        f.hi[i] = in ? (int64_t)d->global_dim[i + 1u] + d->pixel_box_upper[i] - 1 : 0;
    }
    return f;
}

/** The box facts of an im2col descriptor that passes tma_rules_im2col: what a copy delivers and occupies, and the
 *  bounding box (TMA_BOX_IM2COL). */
TMA_HD tma_box_info tma_rule_im2col_box_info(const tma_im2col_desc *d) {
    tma_box_info b;
    const tma_im2col_facts f = tma_rule_im2col_facts(d);
    b.rank = d->rank;
    b.elem_bytes = f.elem_bytes;
    b.swizzle = (uint32_t)d->swizzle;
    b.tx_bytes = (uint32_t)tma_rule_im2col_tx_bytes(d); /* <= 227 KiB: checked */
    b.smem_bytes = (uint32_t)tma_rule_im2col_smem_bytes(d);
    b.row_pitch = (uint32_t)tma_rule_im2col_row_pitch(d);
    b.rows = d->pixels_per_column;
    for (uint32_t i = 0; i < 5; i++)
        b.box_dim[i] = i == 0u ? d->channels_per_pixel : i == 1u ? d->pixels_per_column : 0u;
    b.flags = TMA_BOX_LOAD_ONLY | TMA_BOX_IM2COL | (d->interleave != TMA_INTERLEAVE_NONE ? TMA_BOX_INTERLEAVED : 0u);
    b.dtype = (uint32_t)d->dtype;
    for (uint32_t i = 0; i < 3; i++) {
        b.im2col_lo[i] = f.lo[i];
        b.im2col_hi[i] = f.hi[i];
    }
    return b;
}

/** The per-copy facts of an im2col map from its tma_tensor's box facts. */
TMA_HD tma_im2col_facts tma_rule_im2col_facts_of_box(const tma_box_info *b) {
    tma_im2col_facts f;
    f.rank = b->rank;
    f.elem_bytes = b->elem_bytes;
    for (uint32_t i = 0; i < 3; i++) {
        f.lo[i] = (int32_t)b->im2col_lo[i]; /* a pixel_box_lower: within 32 bits */
        f.hi[i] = b->im2col_hi[i];
    }
    return f;
}

/** Check one im2col load: copy_rank its instruction's rank (the map's, on the host), c its coordinates {c, w, (h,
 *  (d,)) n}, off its rank - 2 offsets, smem_addr its shared address or ~0u where unknown (host).
 *  Rules: the shared address 128-byte aligned; coord[0] * elem a multiple of 16 (measured for tiled loads: the
 *  channel offset is the same dimension-0 rule); each spatial start inside the bounding box (measured); each
 *  offset in the PTX range (measured: past it the copy silently loads other pixels). A negative channel start and a
 *  negative n are allowed: measured, they fill (per element, whole rows) as the model says.
 *  @return the first violation's status, or TMA_OK */
TMA_HD tma_status tma_rules_im2col_copy(const tma_im2col_facts *f, uint32_t copy_rank, const int32_t *c,
                                        const uint16_t *off, uint32_t smem_addr, tma_rule_sink *s) {
    const char *what = "load_im2col";
    if (smem_addr != ~0u && smem_addr % TMA_SMEM_ALIGN != 0u)
        TMA_VIOLATE(s, SMEM_ALIGN, tma_arg_x(smem_addr), tma_arg_s("im2col load"));
    if (copy_rank != f->rank)
        TMA_VIOLATE(s, COPY_RANK, tma_arg_s(what), tma_arg_u(copy_rank), tma_arg_u(f->rank));
    if (c == 0) {
        TMA_VIOLATE(s, NULL_COORDS, tma_arg_u(0));
        return s->first;
    }
    if (off == 0) {
        TMA_VIOLATE(s, IM2COL_NULL_OFFSETS, tma_arg_u(0));
        return s->first;
    }
    const int64_t inner = (int64_t)c[0] * (int64_t)f->elem_bytes;
    if (f->elem_bytes != 0u && inner % (int64_t)TMA_COORD0_ALIGN_BYTES != 0)
        TMA_VIOLATE(s, COORD_ALIGN, tma_arg_s("im2col load"), tma_arg_i(c[0]), tma_arg_u(f->elem_bytes),
                    tma_arg_i(inner), tma_arg_u(TMA_COORD0_ALIGN_BYTES / f->elem_bytes));
    const uint32_t spatial = f->rank >= 3u && f->rank <= 5u ? f->rank - 2u : 0u;
    for (uint32_t i = 0; i < spatial; i++) {
        const int64_t lo = f->lo[i], hi = f->hi[i];
        if (c[i + 1u] < lo || c[i + 1u] > hi)
            TMA_VIOLATE(s, IM2COL_START, tma_arg_u(i + 1u), tma_arg_i(c[i + 1u]), tma_arg_i(lo), tma_arg_i(hi));
    }
    const uint32_t omax = tma_rule_im2col_offset_max(f->rank);
    for (uint32_t i = 0; i < spatial; i++)
        if (off[i] > omax)
            TMA_VIOLATE(s, IM2COL_OFFSET, tma_arg_u(i), tma_arg_u(off[i]), tma_arg_u(f->rank), tma_arg_u(omax));
    return s->first;
}

#ifdef __cplusplus
}
#endif

#endif /* TMA_DETAIL_RULES_H */
