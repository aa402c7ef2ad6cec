/* Private to libtma_kernels (and its tests): the kernels' refusals, as rows of the form libtma's rule table has
 * (tma/detail/rules.h): X(ID, STATUS, TEXT), the status one of TMA_STATUS_MAP's, the text naming the field, the value,
 * the limit and a fix, with {0}..{9} for the values (tma_arg_u / _i / _x / _s). Numbered from TMA_RULE_TABLE_BASE(1),
 * so one tma_violation names a row of either table, and formatted by libtma's formatter (tma_rule_format_text): on
 * the host (KD_FAIL, kernel_diag.h) and on the device (the grouped GEMM's map builder records its refusals with
 * these rows, in the host's words). A row whose text ends with ": " is followed by the libtma rule beneath it (a map
 * the kernel built breaks a rule: KD_FAIL_CAUSE), whose status it reports. Header-only (TMA_HD), not installed.
 *
 * Adding a refusal is one row here and one KD_FAIL where it is checked. */
#ifndef KERNELS_KERNEL_RULES_H
#define KERNELS_KERNEL_RULES_H

#include <stddef.h>
#include <stdint.h>

#include "tma/detail/rules.h"
#include "tma/hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* clang-format off */
#define TMA_KERNEL_RULE_TABLE(X)                                                                                       \
    /* ---- every kernel ---- */                                                                                      \
    X(KD_RULE_PLAN_NULL, ERR_NULL_ARG, "plan = NULL: pass {0}")                                                       \
    X(KD_RULE_ADDRESS_ALIGN, ERR_ARG,                                                                                 \
      "{0} = {1} is not {2}-byte aligned (TMA's address rule): use an aligned allocation (cudaMalloc gives 256 "      \
      "bytes)")                                                                                                       \
    X(KD_RULE_ELEMENT_ALIGN, ERR_ARG, "{0} = {1} is not aligned to its {2}-byte elements")                            \
    X(KD_RULE_EPILOGUE, ERR_ARG, "plan.epilogue = {0}: use TMA_GEMM_EPILOGUE_TMA_STORE or _DIRECT")                   \
    /* a map the kernel built breaks a libtma rule (the cause follows) */                                             \
    X(KD_RULE_MAP_REFUSED, ERR_ARG, "{0} (made from {1}) is refused: ")                                               \
    /* ---- the CUDA runtime, the device (kernel_cuda.c) ---- */                                                      \
    X(KD_RULE_CUDA_FAILED, ERR_CUDA, "{0} failed: {1}: {2}")                                                          \
    X(KD_RULE_CUDA_NO_GPU, ERR_CUDA, "{0} failed: {1}")                                                               \
    X(KD_RULE_NEEDS_HOPPER, ERR_DEVICE, "{0} needs a Hopper (sm_90) GPU: {1}")                                        \
    X(KD_RULE_NOT_HOPPER, ERR_DEVICE,                                                                                 \
      "{0}: device {1} has compute capability {2}.x; the kernel is built for Hopper (sm_90a): run it on an H100 or "  \
      "H200")                                                                                                         \
    /* why there is no GPU to run on (kd_no_gpu_reason): the reason the two rows above quote */                       \
    X(KD_RULE_NO_DRIVER, ERR_DEVICE,                                                                                  \
      "no NVIDIA driver found (the CUDA runtime could not load libcuda.so.1), so no GPU either: run on a machine "    \
      "with the GPU and the NVIDIA driver installed")                                                                 \
    X(KD_RULE_OLD_DRIVER, ERR_DEVICE,                                                                                 \
      "the NVIDIA driver supports CUDA up to {0}.{1}, older than the CUDA {2}.{3} runtime libtma_kernels was built "  \
      "with: update the driver to one for CUDA {2}.{3} or newer")                                                     \
    X(KD_RULE_NO_DEVICE_VISIBLE, ERR_DEVICE,                                                                          \
      "no CUDA GPU found: the NVIDIA driver (CUDA {0}.{1}) sees no device with CUDA_VISIBLE_DEVICES=\"{2}\": list "   \
      "the Hopper GPU's index there, or unset it")                                                                    \
    X(KD_RULE_NO_DEVICE, ERR_DEVICE,                                                                                  \
      "no CUDA GPU found: the NVIDIA driver (CUDA {0}.{1}) is installed but sees no device")                          \
    X(KD_RULE_DEVICES_BUSY, ERR_DEVICE,                                                                               \
      "every CUDA GPU is busy or unavailable (a GPU in exclusive-process mode is held by another process?): free "    \
      "one, or check nvidia-smi's compute mode")                                                                      \
    X(KD_RULE_DRIVER_MISMATCH, ERR_DEVICE,                                                                            \
      "the NVIDIA kernel module and the user-space driver (libcuda) are of different versions (a driver update "      \
      "without a reboot?): reboot, or reinstall the driver")                                                          \
    X(KD_RULE_COMPAT_UNSUPPORTED, ERR_DEVICE,                                                                         \
      "the CUDA forward-compatibility driver in use does not support this GPU: use the driver that came with the "    \
      "GPU's kernel module")                                                                                          \
    /* ---- tma_gemm ---- */                                                                                          \
    X(KD_RULE_GEMM_OUT, ERR_ARG, "out = {0} is not a tma_gemm_out: use TMA_GEMM_OUT_BF16 or TMA_GEMM_OUT_F32")        \
    X(KD_RULE_GEMM_SIZES, ERR_ARG, "M = {0}, N = {1}, K = {2}: sizes must be >= 0")                                   \
    X(KD_RULE_GEMM_AB_NULL, ERR_NULL_ARG, "{0} = NULL with K = {1}: pass device addresses of A and B")                \
    X(KD_RULE_GEMM_C_NULL, ERR_NULL_ARG, "C = NULL with M x N = {0} x {1}: pass C's device address")                  \
    X(KD_RULE_GEMM_CLUSTER, ERR_ARG, "plan.cluster = {0}: use 1 (no clusters) or 2 (pairs sharing B)")                \
    X(KD_RULE_GEMM_EPILOGUE_TMA, ERR_ARG,                                                                             \
      "plan.epilogue = TMA_GEMM_EPILOGUE_TMA_STORE, but TMA cannot describe C (N = {0} times the element size, or "   \
      "C's address, is not a multiple of {1} bytes): use TMA_GEMM_EPILOGUE_DIRECT")                                   \
    X(KD_RULE_GEMM_NOT_MADE, ERR_ARG, "the plan was not made by tma_gemm_plan_make")                                  \
    X(KD_RULE_GEMM_SPLIT_PARTS, ERR_ARG,                                                                              \
      "plan.split_parts = {0}: use 0 (whole tiles) or 2..{1} parts, at most the {2} K steps of 64")                    \
    X(KD_RULE_GEMM_SPLIT_CLUSTER, ERR_ARG,                                                                            \
      "plan.cluster = {0} with split_parts = {1}: split-K's clusters are a tile's parts; use cluster 1")             \
    X(KD_RULE_GEMM_BLOCK_N, ERR_ARG, "plan.block_n = {0}: a tile is 256 or 128 columns wide")                        \
    X(KD_RULE_GEMM_BLOCK_N_CLUSTER, ERR_ARG,                                                                          \
      "plan.block_n = {0} with cluster = {1}: pairs share B in halves of a 256-wide tile; use cluster 1 or "          \
      "block_n 256")                                                                                                  \
    /* ---- tma_grouped_gemm (the last two on the device: gg_build_kernel) ---- */                                    \
    X(KD_RULE_GROUPED_SIZES, ERR_ARG, "groups = {0}, N = {1}, K = {2}: counts and sizes must be >= 0")                \
    X(KD_RULE_GROUPED_NULL, ERR_NULL_ARG,                                                                             \
      "{0} = NULL with {1} groups: pass a device array of {1} entries (pointers, or the M_g)")                        \
    X(KD_RULE_GROUPED_NO_WORKSPACE, ERR_ARG,                                                                          \
      "the plan has no workspace: make it with tma_grouped_gemm_plan_make (and do not run it after "                  \
      "tma_grouped_gemm_plan_free)")                                                                                  \
    X(KD_RULE_GROUPED_GRID, ERR_ARG, "plan.grid_blocks = {0}: use 0 (one block per multiprocessor) or 1 .. {1}")      \
    X(KD_RULE_GROUPED_GROUP_M, ERR_ARG, "plan.group_m = {0}: use 0 (the default) or a positive band height")          \
    X(KD_RULE_GROUP_MAP, ERR_ARG, "group {0}: the map of {1}_g: ")                                                    \
    X(KD_RULE_GROUP_POINTER, ERR_ARG,                                                                                 \
      "group {0}: {1}_g = {2} with M_g = {3} rows: pass a device address of the group's matrix, at a whole element "  \
      "(2 bytes) (the group was skipped)")                                                                            \
    X(KD_RULE_GROUP_NEGATIVE_ROWS, ERR_ARG,                                                                           \
      "group {0}: M_g = {1} rows is negative: give each group 0 or more rows (the group was skipped)")                \
    /* ---- tma_conv2d: the shape and the tile (conv_plan.c) ---- */                                                  \
    X(KD_RULE_CONV_SHAPE_NULL, ERR_NULL_ARG, "shape = NULL: pass the address of a tma_conv2d_shape")                  \
    X(KD_RULE_CONV_SIZE, ERR_ARG, "shape.{0} = {1}: every size of the convolution must be >= 1")                      \
    X(KD_RULE_CONV_STRIDE, ERR_ARG,                                                                                   \
      "shape.{0} = {1}: the im2col copy steps through the output pixels with the map's element stride, which TMA "    \
      "limits to 1..{2}: use a stride of 1..{2}")                                                                     \
    X(KD_RULE_CONV_DILATION, ERR_ARG, "shape.dilation_{0} = {1}: dilation must be >= 1 (1: none)")                    \
    X(KD_RULE_CONV_NO_OUTPUT, ERR_ARG,                                                                                \
      "the filter ({0} = {1}, dilation_{2} = {3}) is larger than the padded input ({2} = {4}, pad_{2} = {5}): no "    \
      "output {6}; pad more or use a smaller filter")                                                                 \
    X(KD_RULE_CONV_PIXELS, ERR_ARG,                                                                                   \
      "N * P * Q = {0} output pixels: at most 2^31 - 1 (the kernel indexes pixels in 32 bits): split the batch")      \
    X(KD_RULE_CONV_BLOCK_M, ERR_ARG,                                                                                  \
      "block_m = {0}: a tile is {1} output pixels (by 64, 128 or 256 filters) or {2} (by {3} filters: the "           \
      "filter-major tile)")                                                                                           \
    X(KD_RULE_CONV_BLOCK_N_FM, ERR_ARG,                                                                               \
      "block_n = {0} with block_m = {1}: the filter-major tile is {2} filters wide (two warpgroups of 64 filters as " \
      "wgmma's A operand): use {2} or 0")                                                                             \
    X(KD_RULE_CONV_BLOCK_N, ERR_ARG,                                                                                  \
      "block_n = {0}: the tile is 64, 128 or 256 output channels wide (the m64n64k16, m64n128k16 and m64n256k16 "     \
      "wgmma forms)")                                                                                                 \
    X(KD_RULE_CONV_BLOCK_N_HALO, ERR_ARG,                                                                             \
      "block_n = {0} with block_m = TMA_CONV2D_HALO: the halo tile is {1} filters wide; use {1} or 0")                \
    X(KD_RULE_CONV_HALO_SHAPE, ERR_ARG,                                                                               \
      "block_m = TMA_CONV2D_HALO on a shape without a halo tile (S = {0}, stride {1} x {2}, dilation {3} x {4}, Q = "  \
      "{5}): it takes filters {6} wide at stride 1 and dilation 1 on output rows of at most {7} pixels; use block_m " \
      "128 or 0")                                                                                                     \
    X(KD_RULE_CONV_HALO_FOLDED, ERR_ARG,                                                                              \
      "block_m = TMA_CONV2D_HALO on a shape whose taps are folded into the channels before it runs (S C = {0} <= "    \
      "{1}: conv_tiles.h, packed inputs): no taps are left to share a load; use block_m 128 or 0")                    \
    X(KD_RULE_CONV_HALO_Y, ERR_ARG,                                                                                   \
      "block_m = TMA_CONV2D_HALO stores y through a map, and TMA cannot describe y (K = {0} times 2 bytes, or y's "   \
      "address, is not a multiple of {1}): use block_m 128 or 0")                                                     \
    X(KD_RULE_CONV_MODEL_NULL, ERR_NULL_ARG, "{0} = NULL: pass host memory")                                          \
    X(KD_RULE_CONV_MODEL_MEMORY, ERR_ARG, "out of host memory for the model's buffers")                               \
    /* the model's load refused (its status, passed on: KD_FAIL_STATUS) */                                            \
    X(KD_RULE_CONV_MODEL_LOAD, ERR_ARG, "model load of tile m0 = {0}, stage {1} (tap {2}, {3}; channel {4}): {5}")    \
    /* ---- tma_conv2d: the plan (conv.cu) ---- */                                                                    \
    X(KD_RULE_CONV_POINTER_NULL, ERR_NULL_ARG, "{0} = NULL: pass device addresses of x, w and y")                     \
    X(KD_RULE_CONV_SCHEDULE, ERR_ARG, "schedule = {0}: use TMA_CONV2D_SCHEDULE_AUTO, _TILES, _STREAM_K or _SPLIT_K")  \
    X(KD_RULE_CONV_SPLIT_WIDTH, ERR_ARG,                                                                              \
      "block_n = 64 with SPLIT_K: split-K runs at widths 128 and 256 (or 0: the plan's choice)")                      \
    X(KD_RULE_CONV_SPLIT_FEW, ERR_ARG,                                                                                \
      "SPLIT_K on {0} x {1} tiles: {2} tiles on {3} blocks leave fewer than two blocks per tile; use STREAM_K or "    \
      "TILES")                                                                                                        \
    X(KD_RULE_CONV_NOT_MADE, ERR_ARG,                                                                                 \
      "the plan was not made by tma_conv2d_plan_make (or its tile was changed without tma_conv2d_plan_tiles)")        \
    X(KD_RULE_CONV_CLUSTER, ERR_ARG, "plan.cluster = {0}: use 1 (no clusters) or 2 (pairs sharing the filters)")      \
    X(KD_RULE_CONV_CLUSTER_FM, ERR_ARG,                                                                               \
      "plan.cluster = 2 on {0} x {1} tiles: filter-major tiles run without clusters; use 1, or 128-pixel tiles "      \
      "(tma_conv2d_plan_tiles)")                                                                                      \
    X(KD_RULE_CONV_PLAN_SCHEDULE, ERR_ARG, "plan.schedule = {0}: change it with tma_conv2d_plan_tiles")               \
    X(KD_RULE_CONV_SK_WORKSPACE, ERR_ARG,                                                                             \
      "plan.schedule = STREAM_K without its workspace: change it with tma_conv2d_plan_tiles")                         \
    X(KD_RULE_CONV_SK_CLUSTER, ERR_ARG, "plan.cluster = {0} with STREAM_K: it runs without clusters")                 \
    X(KD_RULE_CONV_SK_GRID, ERR_ARG,                                                                                  \
      "plan.grid_blocks = {0} with STREAM_K: at most {1} (the multiprocessors, every block resident) and {2} (the "   \
      "workspace's slots; tma_conv2d_plan_tiles makes them for the grid at the time)")                                \
    X(KD_RULE_CONV_SPLIT_CLUSTER, ERR_ARG,                                                                            \
      "plan.cluster = {0} with SPLIT_K: its clusters are a tile's parts (the plan's); use 1")                         \
    X(KD_RULE_CONV_SPLIT_PARTS, ERR_ARG, "plan.split_parts = {0} with SPLIT_K: 2..{1}, set by tma_conv2d_plan_tiles") \
    X(KD_RULE_CONV_EPILOGUE_TMA, ERR_ARG,                                                                             \
      "plan.epilogue = TMA_GEMM_EPILOGUE_TMA_STORE, but TMA cannot describe y (K = {0} times 2 bytes, or y's "        \
      "address, is not a multiple of {1}): use TMA_GEMM_EPILOGUE_DIRECT")                                             \
    X(KD_RULE_CONV_HALO_PLAN, ERR_ARG,                                                                                \
      "plan.{0} = {1} on the halo tile: it runs whole tiles (TILES), no clusters, the TMA-store epilogue; use {2}, "  \
      "or another tile (tma_conv2d_plan_tiles)")                                                                      \
    X(KD_RULE_CONV_NO_INSTANCE, ERR_ARG,                                                                              \
      "no kernel instance for tile {0} x {1}, cluster {2}, {3} epilogue, schedule {4}")                               \
    /* ---- tma_permute (permute_plan.c, permute.cu) ---- */                                                          \
    X(KD_RULE_PM_DESC_NULL, ERR_NULL_ARG, "{0} = NULL: pass a tma_permute_desc")                                      \
    X(KD_RULE_PM_ELEM, ERR_ARG, "elem_bytes = {0}: tma_permute moves 1-, 2-, 4- or 8-byte elements")                  \
    X(KD_RULE_PM_RANK, ERR_ARG,                                                                                       \
      "rank = {0}: use 1 to {1} dimensions (merge neighbours that are contiguous in both src and dst into one first)") \
    X(KD_RULE_PM_POINTER_NULL, ERR_NULL_ARG, "{0} = NULL: pass the addresses of src and dst")                         \
    X(KD_RULE_PM_ADDR_ALIGN, ERR_ARG,                                                                                 \
      "{0} = {1} is not a multiple of elem_bytes = {2}: tma_permute moves whole elements, so pass the address of one") \
    X(KD_RULE_PM_STRIDE_ELEM, ERR_ARG,                                                                                \
      "{0}_strides[{1}] = {2} bytes is not a multiple of elem_bytes = {3}: strides are in bytes and step whole "      \
      "elements")                                                                                                     \
    X(KD_RULE_PM_STRIDE_HUGE, ERR_ARG,                                                                                \
      "{0}_strides[{1}] = {2} bytes reaches 2^40 (a terabyte), past any GPU's memory: the tensor cannot exist")       \
    X(KD_RULE_PM_DST_OVERLAP, ERR_GLOBAL_STRIDE_OVERLAP,                                                              \
      "dst dimension {0} steps {1} bytes, less than the {2} bytes of dst {3} inside it, so two dst elements share "   \
      "bytes and the permute would race with itself: give dst strides that do not overlap (0: dense)")               \
    X(KD_RULE_PM_DIM_ZERO, ERR_ARG, "src_dims[{0}] = 0: every dimension needs at least one element")                  \
    X(KD_RULE_PM_DIM_HUGE, ERR_ARG,                                                                                   \
      "src_dims[{0}] = {1} exceeds 2^31: TMA coordinates are signed 32-bit, so no tile copy reaches index 2^31; "     \
      "split the dimension in two")                                                                                   \
    X(KD_RULE_PM_PERM_RANGE, ERR_ARG, "perm[{0}] = {1} is not a src dimension: use 0..{2}")                           \
    X(KD_RULE_PM_PERM_REPEAT, ERR_ARG,                                                                                \
      "perm[{0}] = {1} repeats an earlier entry: perm must name each src dimension once")                             \
    X(KD_RULE_PM_TILES, ERR_ARG,                                                                                      \
      "src dimensions {0} and {1} make {2} tiles of 16 KiB: more than 2^31 would be over 32 TiB, more memory than "   \
      "any Hopper GPU has")                                                                                           \
    /* the encoder or the driver refused a map (its status and its message, passed on) */                             \
    X(KD_RULE_PM_ENCODE, ERR_ARG, "{0} map: {1}")                                                                     \
    X(KD_RULE_PM_L2, ERR_ARG, "l2 = {0} is not an L2 promotion: use TMA_L2_NONE .. TMA_L2_256B")                      \
    X(KD_RULE_PM_NOT_MADE, ERR_ARG,                                                                                   \
      "tma_permute_run: the plan was not made by tma_permute_plan_make, or its fields were changed (use "             \
      "tma_permute_plan_tune)")                                                                                       \
    X(KD_RULE_PM_LAYOUT_DEFECT, ERR_UNSUPPORTED,                                                                      \
      "tma_permute: the tensor maps disagree with the kernel's shared-memory layout (a libtma defect: please report " \
      "it)")                                                                                                          \
    X(KD_RULE_PM_SMEM_DEFECT, ERR_UNSUPPORTED,                                                                        \
      "tma_permute: a plan needs {0} bytes of shared memory, more than the kernel's {1} (a libtma defect: please "    \
      "report it)")                                                                                                   \
    X(KD_RULE_PM_NO_FIT, ERR_CUDA, "tma_permute: the kernel does not fit on a multiprocessor")                        \
    X(KD_RULE_PM_MODEL_MEMORY, ERR_UNSUPPORTED, "tma_permute_model: out of host memory ({0} bytes)")                  \
    /* the model's copy refused (its status, passed on: KD_FAIL_STATUS) */                                            \
    X(KD_RULE_PM_MODEL_COPY, ERR_UNSUPPORTED, "tma_permute_model: a model copy of the pipeline failed: {0}")
/* clang-format on */

typedef enum kd_rule {
    KD_RULE_BASE_ = TMA_RULE_TABLE_BASE(1) - 1, /* the rows follow libtma's, in a range of their own */
    TMA_KERNEL_RULE_TABLE(TMA_RULE_ROW_ENUM) KD_RULE_END_
} kd_rule;

/** A row's message template; libtma's rules too (a violation of a map the kernel built). */
TMA_HD const char *kd_rule_text(uint32_t r) {
    switch (r) {
        TMA_KERNEL_RULE_TABLE(TMA_RULE_ROW_TEXT)
    default: return tma_rule_text((tma_rule)r);
    }
}

/** A row's status; libtma's rules too. */
TMA_HD tma_status kd_rule_status(uint32_t r) {
    switch (r) {
        TMA_KERNEL_RULE_TABLE(TMA_RULE_ROW_STATUS)
    default: return tma_rule_status((tma_rule)r);
    }
}

/** A violation of row ID with the values that follow: KD_VIOLATION(GEMM_SIZES, tma_arg_i(m), tma_arg_i(n), ...). A
 *  row that quotes no value takes tma_arg_u(0). */
#define KD_VIOLATION(ID, ...) tma_violation_of(KD_RULE_##ID, TMA_RULE_ARGS(__VA_ARGS__))

/** v's message, then (cause not NULL) the libtma rule beneath it, into out[0..cap). @return the whole length */
TMA_HD size_t kd_rule_format(const tma_violation *v, const tma_violation *cause, char *out, size_t cap) {
    return tma_rule_format_text(kd_rule_text(v->rule), v->arg, cause, out, cap);
}

/** Row `rule`'s message with the values args[0..) it quotes (only those: a device caller keeps a short array on its
 *  stack instead of a whole tma_violation, TMA_RULE_MAX_ARGS values), then the cause's message, into out[0..cap).
 *  @return the whole length */
TMA_HD size_t kd_rule_format_args(uint32_t rule, const tma_rule_arg *args, const tma_violation *cause, char *out,
                                  size_t cap) {
    return tma_rule_format_text(kd_rule_text(rule), args, cause, out, cap);
}

/** The status of v, or of the rule beneath it when there is one. */
TMA_HD tma_status kd_rule_status_of(const tma_violation *v, const tma_violation *cause) {
    return cause ? tma_violation_status(cause) : kd_rule_status(v->rule);
}

#ifdef __cplusplus
}
#endif

#endif /* KERNELS_KERNEL_RULES_H */
