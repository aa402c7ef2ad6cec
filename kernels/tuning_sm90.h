/* Private to libtma_kernels (and its tests): the tuning constants of the kernels on Hopper (sm_90), one line each
 * with where it was measured. The measurements themselves are entries of the lab record (docs/lab/); a constant
 * tuned again is changed here, with its new entry. Plain C: the CPU-model pipelines and the tests read them too.
 * Not installed. */
#ifndef KERNELS_TUNING_SM90_H
#define KERNELS_TUNING_SM90_H

/* ---- tma_permute (permute_tiles.h, permute.cu) ---- */
/* COPY box bytes: a plain TMA copy with 256 x 32 fp32 boxes reached 94.7% of a device-to-device copy (H200,
 * docs/HARDWARE.md "Speed landmarks"). */
#define PM_COPY_BOX_BYTES 32768u
#define PM_COPY_STAGES 4u /* COPY load stages (H200, docs/lab/permute.md "Design notes with their measurements") */
/* TRANSPOSE input stages and output buffers (H200, the standalone transpose kernel, docs/lab/transpose.md "The
 * standalone kernel (until 2026-11-22)"). */
#ifndef PM_TR_STAGES
#define PM_TR_STAGES 4u
#endif
/* TRANSPOSE output buffers: 2. With 3 a 128-line tile's block takes 7 x 16 KiB, the 1 KiB swizzle pad, 112 bytes of
 * barriers and the driver's 1 KiB, 224 bytes more than half an SM's 228 KiB: one block an SM; with 2, two. H100, 3 / 2
 * buffers, % of a copy: T 8192^2 bf16 92.4 / 96.6-97.4, u8 96.2-97.8 / 102.4-103.9, fp32 NCHW -> NHWC C = 4 98-100 /
 * 117-119; 18 of 29 TMA-transpose cases up, 8 within a point, fp32 rank 5 (1, 3, 0, 4, 2) 86.4 / 83.7 down (on an
 * H200 82.2 / 87.7, up) (docs/lab/permute.md "Two output buffers"). */
#ifndef PM_TR_OUT_BUFFERS
#define PM_TR_OUT_BUFFERS 2u
#endif
/* Lines of 128 bytes in a TRANSPOSE tile: 256 for every tile lost on 11 cases (H200, docs/lab/permute.md "Tile
 * height"). */
#ifndef PM_TILE_LINES
#define PM_TILE_LINES 128u
#endif
/* Lines of a tall tile (few channels, 2-byte thread-stored): bf16 NCHW -> NHWC C = 8 96-99% of a copy against 71-73%
 * at 128 (H200, docs/lab/permute.md "Few channels: short and packed tiles", "Whole chunks, tall bf16 tiles, few
 * slabs"). */
#ifndef PM_TALL_TILE_LINES
#define PM_TALL_TILE_LINES 256u
#endif
/* TRANSPOSE tile order: bands of this many tile columns (H200, the standalone transpose's sweep, docs/lab/
 * transpose.md "The standalone kernel (until 2026-11-22)"). */
#define PM_DEFAULT_GROUP 8u
/* THE THREAD KERNEL (permute_tiles.h): threads a block, blocks an SM (64 registers; 88 gave 2 blocks, 48 and 40
 * spilled and ran slower), elements a tile (8 loads in flight a thread; 4096 spilled and ran slower), and a transpose
 * tile's src row where dimensions are long: 8 elements by 256 dst elements (longer dst runs cut the 32-byte sectors two
 * tiles write: fp32 12345 x 6789 dense 68.5% of a copy at 8 x 256 against 41.9% at 64 x 32), or 32 by 64 where dst's
 * rows start on sectors (fp32 T 4096 x 50257, src rows misaligned: 83.6% against 72.3% at 8). Short dimensions are
 * taken whole: dimension 1 up to PM_THR_WHOLE_Y elements, dimension 0 up to PM_THR_WHOLE_X where dst's rows start on
 * sectors. H100, docs/lab/permute.md "The thread kernel". */
#define PM_THR_THREADS 256u
#ifndef PM_THR_BLOCKS_PER_SM
#define PM_THR_BLOCKS_PER_SM 4u
#endif
#ifndef PM_THR_TILE_ELEMS
#define PM_THR_TILE_ELEMS 2048u
#endif
#define PM_THR_TX 8u
#define PM_THR_TX_SECTORS 32u
#define PM_THR_WHOLE_X 128u
#define PM_THR_WHOLE_Y 256u
/* DST SPANS (permute_tiles.h) where the loads' shared writes conflict at most this many ways; and the thread kernel
 * with spans in place of the TMA kernel's element-wise thread stores (dst no map) where its tiles read src in runs of
 * at least PM_THR_SPAN_MIN_RUN bytes. H100, quick harness, TMA kernel / thread kernel with spans: fp32 NHWC -> NCHW
 * 128x512x7x7 (runs of 41 x 4 bytes) 38.2, 36.9% / 56.1, 54.5% of a copy; bf16 NHWC -> NCHW 128x256x14x14 (runs of
 * 10 x 2 bytes) 38.1, 37.2% / 31.5, 30.7% (docs/lab/permute.md "Dst spans"). */
#ifndef PM_THR_SPAN_MAX_WAYS
#define PM_THR_SPAN_MAX_WAYS 4u
#endif
#define PM_THR_SPAN_MIN_RUN 128u
/* DST ROW SPANS (permute_tiles.h) where a tile's dst row segments are this many bytes or more; and the thread kernel
 * with row spans in place of the TMA kernel's element-wise thread stores (dst no map) where they are twice that. H100,
 * quick harness, % of a copy, element stores / row spans: T 12345 x 6789 bf16 (512-byte segments) 62.3 / 55.5, fp32
 * (1 KiB) 67.5 / 66.7-67.5, fp64 (2 KiB) 72.7 / 74.3-74.7, fp32 [333, 444, 55] (2, 0, 1) 87.3 / 90.0-90.5; T 12345 x
 * 6788 (dst off 16 bytes), TMA kernel / thread kernel with row spans: fp64 68.6 / 75.5-75.7, fp32 71.6 / 68.7-68.9
 * (docs/lab/permute.md "Dst spans"). */
#define PM_THR_ROW_SPAN_MIN 1024u
/* CHUNK TRANSPOSE (permute_tiles.h) where both of a transpose's dimensions are this many bytes long or more: a tile
 * row's bytes, so that no tile is mostly padding (not swept; the cases measured are all far above it). */
#ifndef PM_CT_MIN_BYTES
#define PM_CT_MIN_BYTES 128u
#endif
/* CHUNK TRANSPOSE with the halo: the walk's bands of tile columns (pm_thr_walk), its whole tiles' loads evict_last and
 * stores evict_first. H100, % of a copy, T 12345 x 6789 u8 / bf16 / fp32: row-major without hints 60 / 67-68 / 72-73,
 * hints alone 60-64 / 70 / 75-76, bands of 8 alone 70-71 / 74 / 76, bands of 16 alone 63-65 / 69-71 / 73-74, bands of
 * 8 with hints 70-80 / 74-78 / 78-80, of 4 with hints 72-81 / 78-81 / 79-82. Without the halo (dst rows on 16 bytes)
 * both cost: fp32 [333, 444, 55] (2, 0, 1) 110-115 row-major, 107 with hints, 109-110 with bands of 8, 102-104 with
 * both (docs/lab/permute.md "Bands and L2 hints"). */
#ifndef PM_CT_GROUP
#define PM_CT_GROUP 4u
#endif
/* SRC SPANS (permute_tiles.h): a tile's bytes at most. */
#ifndef PM_THR_SPAN_TILE_BYTES
#define PM_THR_SPAN_TILE_BYTES 16384u
#endif
/* A transpose whose src is a TMA map but dst is not takes the TMA kernel with its threads storing at any alignment
 * where dst's rows are this many bytes or more, else the thread kernel (H100, same session, TMA kernel / thread
 * kernel: bf16 NHWC -> NCHW 128x256x14x14, rows of 392 bytes, 53.4% / 40.1% of a copy; 128x512x7x7, 98 bytes, 41.8% /
 * 47.4%; fp32 NCHW -> NHWC 64x3x224x224, 12 bytes, 66.2% / 76.7%). */
#define PM_TSTORE_ANY_MIN_ROW 128u
/* SLAB RUNS (pm_dst_slab_runs): only where every run holds at least this many bytes, the last tile's of dimension 0
 * too. Shorter runs cost more in bulk-copy operations than the threads' stores of them do. Thread stores / runs, ms,
 * the build alternating with the other: H100, fp32 NCHW -> NHWC 32x4x224x224 (runs of 512 bytes) 0.023, 0.035 /
 * 0.034, 0.040; bf16 32x8x224x224 (1 KiB) 0.020, 0.020 / 0.023, 0.023; H200, the rank-5 case with 64-byte dst rows
 * (2 KiB and, in the last tile of dimension 0, 1 KiB) 0.086-0.087 / 0.105-0.108 (0.142 / 0.135 on an H100); fp32
 * 32x16x224x224 (2 KiB) within 3% either way on both; the issue-31 rank-5 case in bf16 (2,304 bytes) 0.048 / 0.042 on
 * an H200 (docs/lab/permute.md "Slab runs where dimension 0 spans tiles"). */
#define PM_SLAB_RUN_MIN_BYTES 2048u

/* ---- tma_gemm's split-K (gemm.cu): parts of at least this many K steps of 64. H100, 16 tiles of 128 x 256 (M <= 128,
 * N = K = 4096), one call between two events, two machines: 4 parts 23.6-24.9 us, 5 parts 25.4-27.1, 6 parts
 * 25.1-26.2 (the most whose clusters all run at once), 3 parts 25.6-28.5; docs/lab/gemm.md "Split-K for small M". */
#define GM_SPLIT_MIN_STEPS 16u

/* ---- tma_grouped_gemm's short last wave (grouped_tiles.h, gg_sched_make): the most K parts each of its tiles is cut
 * into (an owner adds parts - 1 partial tiles, CONV_SK_PARTIAL_US a read). H100, 8 experts, N = K = 4096, 560 tiles
 * (32 in the last wave), median of 25 rounds, two runs: at most 2 / 4 / 8 parts 222.6-222.8 / 219.5-219.9 /
 * 219.6-220.0 us, the two halves of each tile before 227.8-228.6 (docs/lab/grouped_gemm.md "K parts in the last
 * wave"). */
#ifndef GG_TAIL_PARTS
#define GG_TAIL_PARTS 4u
#endif

/* ---- tma_conv2d's plan (conv.cu, conv_estimate_us): a cost model fitted to the sweeps of docs/lab/conv.md "The
 * plan's choices" (H200, ResNet-50's 3x3 layers at batch 32 and 128, every tile x schedule) ---- */
#define CONV_STAGE_US_64 0.45  /* a stage of a 128 x 64 tile, us */
#define CONV_STAGE_US_128 0.55 /* of a 128 x 128 tile */
#define CONV_STAGE_US_256 0.69 /* of a 128 x 256 tile */
#define CONV_FM_STAGE_US 0.60  /* of the filter-major 192 x 128 tile (the sweep with it, seed 1795387602) */
/* of the halo tile (3 taps a stage; H100, docs/lab/conv.md "The halo tile": b128 56x56x64's 3,584 tiles of 3 stages
 * in 88 us, 28x28x128's 1,792 of 6 in 81, 14x14x256's 1,024 of 12 in 86) */
#define CONV_HALO_STAGE_US 0.80
#define CONV_TILE_US 3.0       /* each tile a block finishes, per 128 x 256 outputs: epilogue and turn (same sweep) */
#define CONV_SHARED_STAGE 1.2  /* a stream-K or split-K stage, in stages (every SM loading at once) */
#define CONV_SK_PARTIAL_US 3.5 /* a stream-K owner's read of one helper's partial tile, us */
/* split-K's fixup in all, us: 5.5-6.6 traced (H200, GM_TRACE, docs/lab/conv.md "Split-K's fixup, taken apart") */
#define CONV_SPLIT_FIXUP_US 6.0

#endif /* KERNELS_TUNING_SM90_H */
