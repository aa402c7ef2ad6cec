/* libtma kernels (tma::kernels, libtma_kernels): reusable TMA kernels for Hopper with a small C API.
 *
 *   - C = A * B^T in bf16 with fp32 accumulation (TMA loads, wgmma, warp specialization, clusters sharing B
 *     by multicast), 98-106% of cuBLAS on an H200 (docs/guide/gemm.md).
 *   - Grouped C_g = A_g * B_g^T (mixture-of-experts layers) with each group's tensor maps built on the device
 *     from arrays the GPU may write (docs/guide/grouped_gemm.md).
 *   - 2-D convolution forward (bf16 NHWC) as an implicit GEMM whose activations come through im2col TMA loads
 *     (docs/guide/conv.md).
 *   - Any permutation of a rank 1-5 strided tensor (1-8 byte elements): a pure TMA copy where the innermost
 *     dimension stays, a conflict-free shared-memory tile transpose where it moves (docs/guide/permute.md); the 2-D
 *     transpose of a strided matrix is its special case, at 90-95% of a device-to-device copy on an H200 for
 *     aligned pitches (docs/lab/transpose.md); both with the same tile pipeline on libtma's CPU model.
 *
 * Every kernel has the same shape: a plan (arguments checked, tensor maps encoded, kernel attributes set, and what a
 * launch needs computed, once: its launch record), a run (an asynchronous launch of that record on a stream), and a
 * one-call form that does both. Every function returns a tma_status and, when `diag` is given, a message naming the
 * argument, its value, the limit and a fix, as the descriptor checks do; a failing CUDA call gives TMA_ERR_CUDA with
 * the call and its error. Nothing is printed, nothing exits. A plan holds its tensor maps by value and the launch
 * copies them, so a plan may go out of scope once run returns.
 *
 * Plain C, no CUDA header needed: streams are passed as tma_stream, which a cudaStream_t is. Link with the
 * CUDA runtime (nvcc does that; tma-kernels.pc and the CMake target tma::kernels say so). The kernels are
 * built for sm_90a; on any other device, plan_make returns TMA_ERR_DEVICE. */
#ifndef TMA_KERNELS_H
#define TMA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "tma/tma.h"

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;
/** A CUDA stream: a cudaStream_t or CUstream converts to it as it is; NULL is the default stream. */
typedef struct CUstream_st *tma_stream;

/** Words of a tma_launch_record. */
#define TMA_LAUNCH_RECORD_WORDS 128

/** What a plan's run launches: the kernel instance, its grid, cluster and shared memory, its schedule and the values
 *  derived for it, computed once by plan_make and by the tune functions, with the plan fields they were computed
 *  from. Opaque (private to libtma_kernels; its layout changes without notice). A plan stays a plain value: copied,
 *  it launches the same. A plan field documented "may be changed" may still be set by hand between make and run:
 *  run compares the fields with those the record was made from and, where one differs, checks every field as the
 *  tune function would (the same refusals) and derives the launch again, in that run and in each run after it.
 *  Changing a field by hand costs a re-derivation in every run; tune does it once. */
typedef struct tma_launch_record {
    TMA_ALIGNAS(16) uint64_t opaque[TMA_LAUNCH_RECORD_WORDS];
} tma_launch_record;

/* =============================================================================================
 * GEMM: C = A * B^T. A (M x K) and B (N x K) row-major (K-major) bf16, fp32 accumulation, C (M x N)
 * row-major bf16 or fp32. Any M, N >= 0; any K >= 0 that is a multiple of 8 (TMA's 16-byte row stride).
 * ============================================================================================= */

#define TMA_GEMM_BM 128u  /**< output tile rows per block (two consumer warpgroups of 64) */
#define TMA_GEMM_BN 256u  /**< output tile columns (one m64n256k16 wgmma per warpgroup and K step) */
#define TMA_GEMM_BK 64u   /**< K elements per pipeline stage: one 128-byte swizzle span of bf16 */
#define TMA_GEMM_STAGES 4u /**< stages of the load ring */
#define TMA_GEMM_GROUP_M 16u /**< default tile rows per rasterization group */

/** C's element type (A and B are bf16; the accumulation is fp32 either way). */
typedef enum tma_gemm_out {
    TMA_GEMM_OUT_BF16 = 0, /**< rounded to nearest even */
    TMA_GEMM_OUT_F32 = 1,  /**< the fp32 accumulators as they are */
} tma_gemm_out;

/** How the epilogue writes C. */
typedef enum tma_gemm_epilogue {
    /** Accumulators converted into 64-row x 128-byte swizzled boxes of shared memory and TMA-stored while the
     *  consumers start the next tile. Needs C's row pitch (N * element size) and address multiples of 16. */
    TMA_GEMM_EPILOGUE_TMA_STORE = 0,
    /** Each thread stores its accumulators to global memory (pairs where aligned, clipped to M x N): any N. */
    TMA_GEMM_EPILOGUE_DIRECT = 1,
} tma_gemm_epilogue;

/** Everything one launch needs, prepared once by tma_gemm_plan_make. The fields marked "may be changed" are changed
 *  by tma_gemm_plan_tune, which checks them and computes the launch again, once; set by hand between make and run
 *  they cost a check and a re-derivation in every run (tma_launch_record). */
typedef struct tma_gemm_plan {
    tma_tensor a;          /**< TMA map of A: boxes of 64 K x 128 rows (64 where M <= 64), 128B swizzle */
    tma_tensor b;          /**< B: boxes of 64 K x 256 rows, one per stage (cluster == 1) */
    tma_tensor b_half;     /**< B: boxes of 64 K x 128 rows; each block of a pair multicasts one (cluster == 2), or
                                the whole B tile of 128-wide tiles (block_n == 128) */
    tma_tensor c_map;      /**< C: boxes of 64 rows x 128 bytes, 128B swizzle (the TMA-store epilogue) */
    void *c;               /**< C's device address */
    tma_gemm_out out;      /**< C's element type */
    int m, n, k;           /**< the problem */
    int cluster;           /**< may be changed: 1 (one block per tile) or 2 (pairs of blocks on vertically
                                adjacent tiles share B through TMA multicast). Default: 2 where every block
                                gets more than one tile (measured faster or equal there, docs/lab/gemm.md) */
    int group_m;           /**< may be changed: tile rows per rasterization group (default TMA_GEMM_GROUP_M) */
    int sms;               /**< multiprocessors of the device */
    int grid_blocks;       /**< may be changed: 0 (default) as many blocks as can be co-resident; otherwise this
                                many (rounded down to whole clusters, at least one) */
    tma_gemm_epilogue epilogue; /**< may be changed: TMA_STORE (default where TMA can describe C) or DIRECT (split-K
                                stores from registers whatever this says) */
    int split_parts;       /**< may be changed (by hand: run checks it): 0, whole tiles; or 2..8, split-K: every
                                tile's K cut into this many parts, one block each, a tile's blocks one cluster that
                                adds the parts up in shared memory and stores the tile (cluster must be 1; grid_blocks
                                unused). Default: chosen with block_n, split-K only where the tiles are fewer than
                                half the multiprocessors (docs/guide/gemm.md "Tile width and split-K") */
    int block_n;           /**< may be changed (by hand: run checks it): the tiles' width, 256 or 128 (B then
                                through b_half; cluster must be 1), whole tiles and split-K's alike. Default: the
                                width and parts that keep the most blocks busy, 128 only where M > 64
                                (docs/guide/gemm.md "Tile width and split-K") */
    int diag_no_store;     /**< may be changed, diagnostic for timing only: 1 skips the epilogue's stores (C is
                                not written); read by run as it stands (no re-derivation) */
    size_t smem;           /**< dynamic shared memory per block, bytes */
    const void *a_in, *b_in; /**< A's and B's device addresses */
    void *packed;          /**< where TMA cannot read A or B as they are (K not a multiple of 8: rows of 2 K bytes,
                                and TMA's strides are 16-byte multiples; or A or B not 16-byte aligned): device memory
                                (cudaMalloc, zeroed once) that each run first copies them into, rows padded to a
                                multiple of 8 elements with zeros (docs/guide/gemm.md); else NULL. Released by
                                tma_gemm_plan_free */
    size_t packed_bytes;   /**< its size */
    tma_launch_record launch; /**< what run launches (private) */
} tma_gemm_plan;

/** Prepare C = A * B^T on the current device. A and B: device pointers aligned to their bf16 elements (NULL only
 *  when K == 0), read through TMA as they are where K is a multiple of 8 and they are 16-byte aligned, else copied
 *  first (tma_gemm_plan.packed); C: aligned to its element (NULL only when M * N == 0).
 *  @return TMA_OK; TMA_ERR_ARG / TMA_ERR_NULL_ARG for arguments outside the rules (diag names the rule);
 *          TMA_ERR_DEVICE without an sm_90 device; TMA_ERR_CUDA */
tma_status tma_gemm_plan_make(tma_gemm_plan *p, const void *a, const void *b, void *c, tma_gemm_out out, int m,
                              int n, int k, tma_diag *diag);

/** Change the plan's choices: cluster (1 or 2), epilogue (TMA_STORE where TMA can describe C, or DIRECT), group_m
 *  (tile rows per rasterization group; <= 0: TMA_GEMM_GROUP_M) and grid_blocks (0: as many blocks as can be
 *  co-resident; else this many, rounded down to whole clusters, at least one), checked as run checks them, and the
 *  launch computed again (an occupancy query with clusters). The plan is unchanged when it refuses.
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_ARG (a value outside the rules, diag names it), TMA_ERR_CUDA */
tma_status tma_gemm_plan_tune(tma_gemm_plan *p, int cluster, tma_gemm_epilogue epilogue, int group_m, int grid_blocks,
                              tma_diag *diag);

/** Blocks tma_gemm_run launches for the plan as it stands (persistent grid; 0 when nothing is launched). */
int tma_gemm_grid(const tma_gemm_plan *p);

/** Release a plan's packed inputs (cudaFree: waits for the device; nothing when it has none). A copy of a plan (a
 *  struct assignment) shares them: free them once, through one of the copies.
 *  @return TMA_OK, TMA_ERR_NULL_ARG or TMA_ERR_CUDA */
tma_status tma_gemm_plan_free(tma_gemm_plan *p, tma_diag *diag);

/** Launch a prepared plan on `stream` (asynchronous). K == 0 writes zeros into C.
 *  @return TMA_OK; TMA_ERR_ARG for a plan whose fields were changed to something it cannot run; TMA_ERR_CUDA */
tma_status tma_gemm_run(const tma_gemm_plan *p, tma_stream stream, tma_diag *diag);

/** Plan and run in one call; asynchronous on `stream`. @return as the two */
tma_status tma_gemm(const void *a, const void *b, void *c, tma_gemm_out out, int m, int n, int k, tma_stream stream,
                    tma_diag *diag);

/* =============================================================================================
 * Grouped GEMM: C_g = A_g * B_g^T for g = 0 .. groups - 1, as in a mixture-of-experts layer: A_g (M_g x K) and
 * B_g (N x K) row-major (K-major) bf16, fp32 accumulation, C_g (M_g x N) row-major bf16. Every group has its own
 * allocations and its own M_g (any, 0 and tiny included); N and K are shared. The pointers and the M_g are arrays
 * in device memory, so a router on the GPU can write them without a host synchronization: the kernel reads them
 * when it runs and builds each group's tensor maps on the device (tma/tensormap.cuh).
 * The work: 128 x 256 tiles (TMA_GEMM_BM x TMA_GEMM_BN), the tiles of group 0 first, then group 1, and so on; the
 * blocks of the persistent grid take them at run time, the tiles of a short last wave cut along K into parts (one
 * block each, the first adding the others' partial sums). Each run is two launches: one warp per group builds the
 * group's three maps (and checks them by the rules of rules.h), then the GEMM. Where N or K is not a multiple of 8
 * (rows TMA cannot read), one launch of a kernel whose threads load the operands instead (plan.thread_loads).
 * ============================================================================================= */

/** Everything a grouped launch needs, prepared once by tma_grouped_gemm_plan_make; release it with
 *  tma_grouped_gemm_plan_free. The fields marked "may be changed" are changed by tma_grouped_gemm_plan_tune (checked,
 *  the launch computed again, once); set by hand between make and run they cost a check in every run. */
typedef struct tma_grouped_gemm_plan {
    tma_tensor tmpl[3];        /**< template maps of A_g, B_g, C_g (TMA_DESC_TEMPLATE: host-encoded without an
                                    address, checked); the kernel sets each group's address and rows */
    tma_tiled_desc desc[3];    /**< the templates' descriptors: what the device-built maps are checked against */
    const void *const *a;      /**< device array of `groups` device pointers to the A_g */
    const void *const *b;      /**< ... to the B_g */
    void *const *c;            /**< ... to the C_g */
    const int32_t *m;          /**< device array of `groups` row counts M_g */
    int groups, n, k;          /**< the problem */
    int sms;                   /**< multiprocessors of the device */
    int grid_blocks;           /**< may be changed: 0 (default) one block per multiprocessor; else this many
                                    (1 .. sms) */
    int group_m;               /**< may be changed: tile rows per rasterization band (default TMA_GEMM_GROUP_M) */
    int thread_loads;          /**< 1 where TMA cannot read the operands (N or K not a multiple of 8: their rows are
                                    not multiples of 16 bytes): every group runs through a kernel whose threads
                                    load A_g and B_g (wmma; slower, docs/guide/grouped_gemm.md "Any N and K") */
    int diag_skip_build;       /**< may be changed, diagnostic for timing only: 1 skips building the maps and
                                    reuses the previous run's (right only if a, b, c and m have not changed since);
                                    read by run as it stands */
    void *workspace;           /**< device memory of the plan: the groups' maps, their flags, the error record,
                                    the counters of the GEMM's run-time schedule, and (where TMA reads the
                                    operands) the partial tiles of a short last wave, 128 KiB a multiprocessor */
    size_t workspace_bytes;
    size_t smem;               /**< dynamic shared memory per block, bytes */
    tma_launch_record launch;  /**< what run launches (private) */
} tma_grouped_gemm_plan;

/** Prepare the grouped GEMM on the current device: check the shared arguments, encode the templates, allocate
 *  the workspace (cudaMalloc). a, b, c, m: device arrays of `groups` entries (NULL only when groups == 0; a and b
 *  are not read when K == 0). Rules: groups, N, K >= 0 (any N and K: where either is not a multiple of 8, TMA cannot
 *  read the rows and the plan's thread_loads kernel runs). Per group, checked on the device when it runs
 *  (tma_grouped_gemm_check reports): M_g >= 0; for M_g > 0, A_g, B_g and C_g non-NULL and at whole elements (2-byte
 *  aligned). A group of which one lies off 16 bytes (TMA's address rule) is computed after the pipeline by the
 *  thread-loaded kernel (docs/guide/grouped_gemm.md "Groups off 16 bytes").
 *  @return TMA_OK; TMA_ERR_ARG / TMA_ERR_NULL_ARG (diag names the rule); TMA_ERR_DEVICE without an sm_90 device;
 *          TMA_ERR_CUDA */
tma_status tma_grouped_gemm_plan_make(tma_grouped_gemm_plan *p, int groups, int n, int k, const void *const *a,
                                      const void *const *b, void *const *c, const int32_t *m, tma_diag *diag);

/** Change the plan's grid_blocks (0: one block per multiprocessor; else 1 .. sms) and group_m (0: TMA_GEMM_GROUP_M;
 *  else the tile rows of a rasterization band), checked as run checks them. The plan is unchanged when it refuses.
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_ARG (diag names the value) */
tma_status tma_grouped_gemm_plan_tune(tma_grouped_gemm_plan *p, int grid_blocks, int group_m, tma_diag *diag);

/** Launch a prepared plan on `stream` (asynchronous): the map-building kernel, then the GEMM. K == 0 writes zeros
 *  into every C_g. A group the device finds invalid is skipped (its C_g untouched) and recorded for
 *  tma_grouped_gemm_check; the others are computed. The GEMM's blocks take their tiles at run time from counters in
 *  the plan's workspace, which each run leaves as it found them: runs of one plan must be ordered (one stream, or
 *  ordered by events; a CUDA graph replays them as such), never two at once.
 *  @return TMA_OK; TMA_ERR_ARG for a plan whose fields were changed to something it cannot run; TMA_ERR_CUDA */
tma_status tma_grouped_gemm_run(const tma_grouped_gemm_plan *p, tma_stream stream, tma_diag *diag);

/** The first invalid group the device found since the plan was made or last checked: waits for `stream`, then
 *  TMA_OK, or that group's status with "group g: ..." and the rule's message (the host's wording) in diag.
 *  Clears the record. @return as said; TMA_ERR_CUDA if a CUDA call failed */
tma_status tma_grouped_gemm_check(const tma_grouped_gemm_plan *p, tma_stream stream, tma_diag *diag);

/** Release the plan's workspace (cudaFree: waits for the device). @return TMA_OK or TMA_ERR_CUDA */
tma_status tma_grouped_gemm_plan_free(tma_grouped_gemm_plan *p, tma_diag *diag);

/** Make, run, check and free in one call: synchronous (it waits for `stream`). For repeated calls keep a plan.
 *  @return the first failing step's status */
tma_status tma_grouped_gemm(int groups, int n, int k, const void *const *a, const void *const *b, void *const *c,
                            const int32_t *m, tma_stream stream, tma_diag *diag);

/* =============================================================================================
 * Convolution: y = conv2d(x, w), forward (fprop), as an implicit GEMM. x: N x H x W x C (NHWC) bf16, w: K x R x S x C
 * (KRSC) bf16, y: N x P x Q x K (NHWC) bf16, fp32 accumulation. The GEMM is M = N * P * Q output pixels by K output
 * channels over R * S * C; its A operand (the im2col matrix) is never written out: for each filter tap (r, s) and
 * block of 64 channels, one im2col TMA load gathers the 128 (or 192) pixels a tile needs straight into swizzled shared
 * memory, padding included (out-of-bounds fill), and the filters come through a tiled map. The pipeline is the
 * GEMM's (TMA producer warp, two wgmma consumer warpgroups, clusters sharing the filters by multicast); the 192 x 128
 * filter-major tile computes y^T (the filters as wgmma's A operand) and stores it transposed. docs/guide/conv.md.
 * ============================================================================================= */

/** A 2-D convolution: sizes, stride, padding, dilation. y[n, p, q, k] = sum over r, s, c of
 *  x[n, p * stride_h - pad_h + r * dilation_h, q * stride_w - pad_w + s * dilation_w, c] * w[k, r, s, c], x taken
 *  as 0 outside the image; P = (H + 2 pad_h - dilation_h (R - 1) - 1) / stride_h + 1, Q likewise. */
typedef struct tma_conv2d_shape {
    int n, h, w, c;              /**< input: images, rows, columns, channels (any C >= 1; see tma_conv2d_plan.packed) */
    int k, r, s;                 /**< filters: output channels, filter rows, filter columns */
    int stride_h, stride_w;      /**< 1..8 (TMA's traversal stride, the map's element stride) */
    int pad_h, pad_w;            /**< rows / columns of zeros added on each side (negative: cropped) */
    int dilation_h, dilation_w;  /**< >= 1 */
} tma_conv2d_shape;

/** How a plan's tiles are shared among the blocks of its persistent grid. */
typedef enum tma_conv2d_schedule {
    TMA_CONV2D_SCHEDULE_AUTO = 0,  /**< tma_conv2d_plan_tiles chooses (docs/guide/conv.md) */
    TMA_CONV2D_SCHEDULE_TILES,     /**< every tile whole: block b takes tiles b, b + blocks, ... */
    TMA_CONV2D_SCHEDULE_STREAM_K,  /**< the last one or two waves of tiles shared out by pipeline stages, every block
                                        an equal share; a tile cut between blocks is summed by the block holding its
                                        first stage from the others' fp32 partial tiles (a workspace) */
    TMA_CONV2D_SCHEDULE_SPLIT_K,   /**< for fewer tiles than half the blocks: every tile's stages cut into the same
                                        number of parts (2-8), one block each, a tile's blocks one cluster;
                                        each block keeps its fp32 partial tile in its shared memory, then adds up
                                        and stores its share of the tile from the cluster's (no workspace) */
} tma_conv2d_schedule;

/** tma_conv2d_plan.block_m of the halo tile, for 3-wide filters at stride 1 and dilation 1 on output rows of at most
 *  62 pixels (ResNet-50's 3x3 layers at 56 x 56 and smaller): 128 output positions, as whole output rows of 16, 32
 *  or 64 positions (those past the row computed and never stored), by 64 filters. Each stage loads the input rows of
 *  one filter row once, by one tiled load, and multiplies them by its 3 taps (docs/guide/conv.md "The halo tile").
 *  It needs the TMA-store epilogue; with it the plan's x_map is a tiled map of x, and y_map a map of y as
 *  {K, Q, P, N}. */
#define TMA_CONV2D_HALO (-1)

/** Everything one launch needs, prepared once by tma_conv2d_plan_make. The fields marked "may be changed" are changed
 *  by tma_conv2d_plan_tune (checked, the launch computed again, once) or, for grid_blocks before a choice of tiles,
 *  set and then tma_conv2d_plan_tiles called; set by hand between make and run they cost a check and a re-derivation
 *  in every run (tma_launch_record). */
typedef struct tma_conv2d_plan {
    tma_tensor x_map;          /**< im2col map of x: block_m pixels x 64 channels per load, 128B swizzle (the halo
                                    tile: a tiled map of x as {C, W, H, N}, boxes of 64 channels x whole rows) */
    tma_tensor w_map;          /**< tiled map of w as {C, S, R, K}: boxes of 64 channels x block_n filters */
    tma_tensor w_half;         /**< the same with block_n / 2 filters (each block of a cluster loads one) */
    tma_tensor y_map;          /**< y as an (N P Q) x K matrix: 64 rows x 128-byte boxes (TMA-store epilogue; the
                                    halo tile: y as {K, Q, P, N}, boxes of 64 channels x whole output rows) */
    const void *x, *w;         /**< x's and w's device addresses */
    void *y;                   /**< y's device address */
    tma_conv2d_shape shape;    /**< the convolution */
    int p, q;                  /**< output rows and columns */
    int block_m;               /**< output pixels per tile: 128, or 192 (the filter-major tile, block_n 128: the
                                    filters are wgmma's A operand, two warpgroups of 64, the 192 pixels its B, and
                                    the epilogue stores y transposed; docs/guide/conv.md), or TMA_CONV2D_HALO (the
                                    halo tile) (set by tma_conv2d_plan_tiles) */
    int block_n;               /**< output channels per tile: 64, 128 or 256 with 128 pixels, 128 with 192, 64 with
                                    the halo tile (set by tma_conv2d_plan_tiles) */
    int cluster;               /**< may be changed: 1 (default: pairs were slower on every layer measured,
                                    docs/lab/conv.md), or 2 (pairs of blocks on adjacent pixel tiles share the filter
                                    tile through multicast; whole 128-pixel tiles only) */
    int group_m;               /**< may be changed: pixel-tile rows per rasterization group */
    int sms;                   /**< multiprocessors of the device */
    int grid_blocks;           /**< may be changed: 0 (default) as many blocks as can be co-resident, else this many
                                    (STREAM_K: at most sms and workspace_blocks, every block resident; SPLIT_K:
                                    the blocks tma_conv2d_plan_tiles counts the parts from) */
    tma_gemm_epilogue epilogue; /**< may be changed: TMA_STORE (default where K * 2 and y are 16-byte multiples) or
                                    DIRECT */
    size_t smem;               /**< dynamic shared memory per block, bytes */
    int stages;                /**< pipeline stages of a tile: R * S * ceil(C / 64) (the halo tile: R * ceil(C / 64),
                                    S taps a stage) */
    tma_conv2d_schedule schedule; /**< set by tma_conv2d_plan_tiles: TILES, STREAM_K or SPLIT_K */
    int split_parts;           /**< SPLIT_K: the parts each tile is cut into, a cluster of that many blocks (2-8: the
                                    most whose clusters all run at once; set by tma_conv2d_plan_tiles), else 0 */
    void *workspace;           /**< with STREAM_K: a slot of block_m x block_n fp32 partial sums and two flags per
                                    block of the grid (cudaMalloc), else NULL */
    int workspace_blocks;      /**< the blocks it has slots for: a STREAM_K run launches at most this many */
    void *packed;              /**< where TMA cannot read x or w as they are (C not a multiple of 8: pixels of 2 C
                                    bytes, and TMA's strides are 16-byte multiples; or x or w not 16-byte aligned):
                                    device memory (cudaMalloc) that each run first packs them into, a few channels'
                                    filter taps side by side or the channels padded to 8 (docs/guide/conv.md), then
                                    convolves; else NULL */
    size_t packed_bytes;       /**< its size */
    tma_launch_record launch;  /**< what run launches (private) */
} tma_conv2d_plan;

/** Output rows and columns of a shape (0 where the filter does not fit). */
void tma_conv2d_out_size(const tma_conv2d_shape *shape, int *p, int *q);

/** Check a convolution without a GPU: every argument rule and every TMA rule of the maps it needs (the im2col
 *  bounding box and offset ranges, the strides of x, w and y), with a message naming the argument, its value, the
 *  limit and a fix. x, w, y may be NULL here (only their alignment is checked when given).
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_ARG, or the refusing map's status */
tma_status tma_conv2d_check(const tma_conv2d_shape *shape, const void *x, const void *w, const void *y,
                            tma_diag *diag);

/** Prepare y = conv2d(x, w) on the current device for device pointers x, w and y (2-byte aligned); x and w are read
 *  through TMA where it can (C a multiple of 8, 16-byte aligned), else packed first (tma_conv2d_plan.packed).
 *  @return as tma_conv2d_check; TMA_ERR_DEVICE without an sm_90 device; TMA_ERR_CUDA */
tma_status tma_conv2d_plan_make(tma_conv2d_plan *p, const tma_conv2d_shape *shape, const void *x, const void *w,
                                void *y, tma_diag *diag);

/** Choose the plan's tiles: block_m output pixels (128 or 192, or TMA_CONV2D_HALO where the shape has one) by block_n
 *  output channels (64, 128 or 256 with 128 pixels, 128 with 192, 64 with the halo tile; either 0: the plan's choice)
 *  per tile, and how the blocks share them (AUTO: the plan's
 *  choice). STREAM_K, for outputs whose tiles leave the last wave of blocks part idle, allocates the workspace
 *  (cudaMalloc and cudaMemset: synchronous) for the plan's grid; TILES and SPLIT_K (for fewer tiles than half the
 *  blocks, refused otherwise) free it. A plan with a workspace must not run on two streams at once.
 *  tma_conv2d_plan_make calls it with 0, 0, AUTO (docs/guide/conv.md says how it chooses).
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_ARG (a width or schedule out of range), TMA_ERR_CUDA */
tma_status tma_conv2d_plan_tiles(tma_conv2d_plan *p, int block_m, int block_n, tma_conv2d_schedule schedule,
                                 tma_diag *diag);

/** Change the plan's cluster (1, or 2: pairs sharing the filters, 128-pixel tiles of the TILES schedule only),
 *  epilogue (TMA_STORE where TMA can describe y, or DIRECT), group_m (pixel-tile rows per rasterization group; <= 0:
 *  TMA_GEMM_GROUP_M) and grid_blocks (0: as many blocks as can be co-resident; STREAM_K: at most sms and
 *  workspace_blocks), checked as run checks them, and the launch computed again. The tiles, the schedule and split-K's
 *  parts stay as tma_conv2d_plan_tiles chose them (for the grid_blocks of that time: to choose them for another grid,
 *  set grid_blocks and call tma_conv2d_plan_tiles). The plan is unchanged when it refuses.
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_ARG (diag names the value), TMA_ERR_CUDA */
tma_status tma_conv2d_plan_tune(tma_conv2d_plan *p, int cluster, tma_gemm_epilogue epilogue, int group_m,
                                int grid_blocks, tma_diag *diag);

/** Launch a prepared plan on `stream` (asynchronous).
 *  @return TMA_OK; TMA_ERR_NULL_ARG; TMA_ERR_ARG for fields changed to something it cannot run; TMA_ERR_CUDA */
tma_status tma_conv2d_run(const tma_conv2d_plan *p, tma_stream stream, tma_diag *diag);

/** Release a plan's workspace and packed inputs (cudaFree: waits for the device; nothing when it has none). A copy
 *  of a plan (a struct assignment) shares them: free them once, through one of the copies.
 *  @return TMA_OK or TMA_ERR_CUDA */
tma_status tma_conv2d_plan_free(tma_conv2d_plan *p, tma_diag *diag);

/** Plan and run in one call; asynchronous on `stream`. Whole tiles only (stream-K needs a workspace that outlives
 *  the launch): for small outputs, keep a plan. @return as the two */
tma_status tma_conv2d(const tma_conv2d_shape *shape, const void *x, const void *w, void *y, tma_stream stream,
                      tma_diag *diag);

/** The kernel's tile pipeline on libtma's CPU model of the copy engine, no GPU: for every 128-pixel tile and every
 *  stage (filter tap, 64-channel block), the same im2col load (tma_model_load_im2col) and filter load
 *  (tma_model_load_tiled) at the same coordinates as the kernel, into 128B-swizzled buffers, then the products read
 *  back through tma_swizzle_elem, summed in fp32 (in the stage order of the kernel), rounded to bf16 into y. x, w, y
 *  are host memory laid out as for tma_conv2d_plan_make. Slow: for small shapes.
 *  @return as tma_conv2d_check, or the model's first refusal */
tma_status tma_conv2d_model(const tma_conv2d_shape *shape, const void *x, const void *w, void *y, tma_diag *diag);

/* =============================================================================================
 * Permute: dst = src with its dimensions reordered (numpy's transpose(...).copy(), PyTorch's
 * permute(...).contiguous()), rank 1-5, 1-, 2-, 4- and 8-byte elements, strided src and dst. Dimension 0 is the
 * innermost (contiguous) one everywhere, as in tma_tiled_desc. Where dst keeps src's innermost dimension the kernel
 * is a pure TMA copy (the tensor maps do the index arithmetic); otherwise a 2-D tile transpose in shared memory
 * (a conflict-free lane map) inside the same reordering. docs/guide/permute.md. The 2-D transpose, below, is a special
 * case.
 * ============================================================================================= */

/** A permutation: dst dimension i is src dimension perm[i], so dst has dimensions src_dims[perm[i]].
 *  Example, NCHW -> NHWC: src_dims = {W, H, C, N}, perm = {2, 0, 1, 3} (dst = {C, W, H, N}).
 *  Strides are in bytes; a stride of 0 means dense over the dimensions inside it (stride of dimension i + 1 =
 *  stride of dimension i x its size, dimension 0's stride being elem_bytes), so a zeroed struct is dense. */
typedef struct tma_permute_desc {
    uint32_t elem_bytes;      /**< 1, 2, 4 or 8 (the bits are copied as they are) */
    uint32_t rank;            /**< 1..5 */
    const void *src;          /**< device address (host address for tma_permute_model) of an element: a multiple of
                                   elem_bytes */
    void *dst;                /**< likewise; src and dst must not share bytes (not checked) */
    uint64_t src_dims[5];     /**< elements per src dimension, dimension 0 innermost; 1..2^31 */
    uint64_t src_strides[4];  /**< bytes between consecutive indices of src dimension i + 1, a multiple of
                                   elem_bytes; 0: dense */
    uint32_t perm[5];         /**< dst dimension i is src dimension perm[i]; a permutation of 0..rank-1 */
    uint64_t dst_strides[4];  /**< bytes between consecutive indices of dst dimension i + 1, a multiple of elem_bytes;
                                   0: dense. No two dst elements may share bytes */
} tma_permute_desc;

/** Everything a permute launch needs, prepared once by tma_permute_plan_make. Read-only, except through
 *  tma_permute_plan_tune (which changes the record, once); a field changed by hand costs a re-derivation in every run,
 *  which refuses a plan whose fields disagree with each other. */
typedef struct tma_permute_plan {
    tma_permute_desc desc;    /**< as given */
    tma_tensor load_map;      /**< TMA map of src, dimensions merged and ordered as the kernel walks them (zeroed
                                   where threads) */
    tma_tensor store_map;     /**< TMA map of dst in the same dimension order (dst's strides permuted; zeroed where
                                   threads) */
    uint32_t transpose;       /**< 0: dst keeps src's innermost dimension (a copy); 1: a tile transpose */
    uint32_t threads;         /**< 0: the TMA kernels (load_map, store_map); 1: the thread kernel, for a tensor no TMA
                                   map describes exactly (docs/guide/permute.md); it has no maps, and tune leaves it */
    uint32_t rank;            /**< of both maps (after merging dimensions and dropping those of size 1) */
    uint32_t src_dim[5];      /**< the lowest src dimension merged into each map dimension */
    uint64_t dims[5];         /**< the map dimensions (transpose: dims[1] is dst's innermost; a packed tile's load
                                   map lists dims[2] before dims[1]) */
    uint32_t box[5];          /**< the tile (transpose: box[0] elements of src dim 0, 128 bytes or, in a packed tile,
                                   fewer, x box[1] rows of dst's innermost dimension x box[2] slabs of the next;
                                   threads: box[0] x box[1] elements of map dimensions 0 and 1; docs/guide/
                                   permute.md) */
    uint32_t tiles_n[5];      /**< tiles along each map dimension */
    uint64_t tiles;           /**< tiles in all */
    uint32_t group;           /**< transpose: tile order, bands of `group` tile columns (threads: the chunk
                                   transpose's fixed bands where dst rows start off 16 bytes, else 0: row-major) */
    tma_l2_promotion l2;      /**< L2 promotion of both maps */
    uint32_t grid;            /**< persistent grid: blocks launched */
    uint32_t block;           /**< threads per block */
    size_t smem;              /**< dynamic shared memory per block, bytes */
    tma_launch_record launch; /**< what run launches (private) */
} tma_permute_plan;

/** Prepare dst = permute(src) on the current device.
 *  Rules (what is not a tensor is refused; every tensor is taken): elem_bytes 1, 2, 4 or 8; rank 1..5 (more
 *  dimensions: merge neighbours that are contiguous in both tensors first); dimensions 1..2^31; perm a permutation;
 *  src and dst addresses and strides multiples of elem_bytes, strides of dimensions with more than one element below
 *  2^40 bytes; no two dst elements sharing bytes (src may overlap itself: it is only read). Exactly dst's elements are
 *  written: no byte between its rows or past its end. Dimensions of one element are dropped and contiguous
 *  neighbours merged; a tensor TMA maps describe exactly (16-byte aligned addresses, strides of 16-byte multiples,
 *  dst rows ending on a 16-byte chunk or stored by threads) runs the TMA kernels, any other the thread kernel
 *  (plan.threads).
 *  @return TMA_OK; TMA_ERR_NULL_ARG / TMA_ERR_ARG for arguments outside the rules; TMA_ERR_GLOBAL_STRIDE_OVERLAP for a
 *          dst whose elements share bytes; TMA_ERR_DEVICE without an sm_90 device; TMA_ERR_CUDA */
tma_status tma_permute_plan_make(tma_permute_plan *p, const tma_permute_desc *desc, tma_diag *diag);

/** Change a transpose plan's tile order (group = 0: row-major) and both maps' L2 promotion (re-encodes them from the
 *  plan's descriptors, checked when it was made: nothing is planned or checked again). A thread-kernel plan
 *  (plan.threads) has neither: its arguments are checked and it stays as it is.
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_ARG, or an encoding status */
tma_status tma_permute_plan_tune(tma_permute_plan *p, uint32_t group, tma_l2_promotion l2, tma_diag *diag);

/** Launch a prepared plan on `stream` (asynchronous).
 *  @return TMA_OK, TMA_ERR_NULL_ARG, TMA_ERR_ARG (a plan with fields changed by hand), TMA_ERR_CUDA */
tma_status tma_permute_run(const tma_permute_plan *p, tma_stream stream, tma_diag *diag);

/** Plan and run in one call; asynchronous on `stream`. @return as the two */
tma_status tma_permute(const tma_permute_desc *desc, tma_stream stream, tma_diag *diag);

/** What the CPU-model pipeline did: the plan's two descriptors and what each copy delivers and occupies. */
typedef struct tma_permute_model_facts {
    tma_tiled_desc load_desc;  /**< the load map's descriptor (global_address: the host src) */
    tma_tiled_desc store_desc; /**< the store map's descriptor (global_address: the host dst) */
    uint32_t transpose;        /**< as in the plan */
    uint32_t threads;          /**< as in the plan: 1, the thread kernel's pipeline (no descriptors, no TMA copies;
                                    stores counts its 16-byte chunks written, whole or in part) */
    size_t load_tx_bytes;      /**< bytes each load delivers (the mbarrier's expect-tx) */
    size_t load_smem_bytes;    /**< bytes each load occupies in shared memory */
    size_t store_smem_bytes;   /**< bytes each store's box occupies in shared memory */
    uint64_t tiles;            /**< tiles (one load each) */
    uint64_t stores;           /**< store boxes issued (transpose boxes wholly past dst are skipped; 0 where the
                                    threads store the tiles: dst rows not 32-byte aligned, 2- to 8-byte elements) */
} tma_permute_model_facts;

/** The plan's tile pipeline on libtma's CPU model of the copy engine, no GPU: the same descriptors and tile
 *  coordinates as the kernels; for each tile a model load (tma_model_load_tiled) into a 1024-aligned buffer, for
 *  a transpose the kernel's 16-byte reads and writes addressed through tma_swizzle_elem with its lane map, and
 *  model stores (tma_model_store_tiled), or, where the kernel's threads store the tile, the same 16-byte chunks
 *  written to dst (a row's last one in part); for a thread-kernel plan, its tiles' row spans into a stage and its
 *  chunks gathered back from it, with the kernel's geometry. desc->src and desc->dst are host memory. Slow: for
 *  small tensors.
 *  facts: optional. @return as tma_permute_plan_make's rules, or the model's first refusal */
tma_status tma_permute_model(const tma_permute_desc *desc, tma_permute_model_facts *facts, tma_diag *diag);

/* =============================================================================================
 * Transpose: out (cols x rows) = in (rows x cols)^T, row-major, strided: the 2-D case of tma_permute, with the
 * same kernel, plan, tuning and CPU model (docs/guide/permute.md, "The 2-D transpose").
 * ============================================================================================= */

/** The permute descriptor of out = in^T: in is rows x cols elements of elem_bytes, in_pitch bytes between its
 *  rows; out is cols x rows, out_pitch bytes between its rows (a pitch of 0: dense, a row's bytes). That is src
 *  dimensions {cols, rows} with perm {1, 0}. Pass it to tma_permute_plan_make / tma_permute / tma_permute_model,
 *  which check it (elements of 1, 2, 4 or 8 bytes; addresses and pitches multiples of the element). */
tma_permute_desc tma_transpose_desc(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols,
                                    size_t in_pitch, size_t out_pitch);

/** out = in^T in one call, asynchronous on `stream`: tma_permute of tma_transpose_desc(...), whose rules it has (any
 *  sizes; exactly out's elements are written); a refusal speaks of rows, cols, in, out and the pitches, not of the
 *  permute's dimensions. @return as tma_permute */
tma_status tma_transpose(uint32_t elem_bytes, const void *in, void *out, uint32_t rows, uint32_t cols, size_t in_pitch,
                         size_t out_pitch, tma_stream stream, tma_diag *diag);

#ifdef __cplusplus
}
#endif

#endif /* TMA_KERNELS_H */
