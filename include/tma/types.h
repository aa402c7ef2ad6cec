/* libtma: enums shared by the host API (tma.h) and the header-only swizzle helpers (swizzle.h).
 *
 * Every value equals the CUDA driver's enum of the same meaning (CUtensorMapDataType,
 * CUtensorMapSwizzle, ...), so a tma_* value can be passed to cuTensorMapEncodeTiled as it is.
 * src/encode.c checks that equality at compile time against the cuda.h it is built with.
 * This header needs neither cuda.h nor a GPU, so host-only C code and CUDA device code can use it. */
#ifndef TMA_TYPES_H
#define TMA_TYPES_H

/** Element types of a tiled tensor map (CUtensorMapDataType). The three packed sub-byte types that
 *  follow TF32_FTZ in cuda.h (16U4_ALIGN8B = 13 ...) belong to compute capability 10.x and are not
 *  supported: tma_check_tiled rejects them with TMA_ERR_DTYPE. */
typedef enum tma_dtype {
    TMA_DTYPE_U8 = 0,
    TMA_DTYPE_U16 = 1,
    TMA_DTYPE_U32 = 2,
    TMA_DTYPE_I32 = 3,
    TMA_DTYPE_U64 = 4,
    TMA_DTYPE_I64 = 5,
    TMA_DTYPE_F16 = 6,
    TMA_DTYPE_F32 = 7,
    TMA_DTYPE_F64 = 8,
    TMA_DTYPE_BF16 = 9,
    TMA_DTYPE_F32_FTZ = 10,
    TMA_DTYPE_TF32 = 11,
    TMA_DTYPE_TF32_FTZ = 12,
    TMA_DTYPE_COUNT_ = 13 /* number of supported types; not a type */
} tma_dtype;

/** Shared-memory swizzle (CUtensorMapSwizzle). Hopper (sm_90) implements NONE, 32B, 64B and 128B;
 *  the three 128B_ATOM modes (CUDA 12.8+) are for compute capability 10.x and tma_check_tiled
 *  rejects them with TMA_ERR_SWIZZLE_UNSUPPORTED. */
typedef enum tma_swizzle {
    TMA_SWIZZLE_NONE = 0,
    TMA_SWIZZLE_32B = 1,
    TMA_SWIZZLE_64B = 2,
    TMA_SWIZZLE_128B = 3,
    TMA_SWIZZLE_128B_ATOM_32B = 4,
    TMA_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5,
    TMA_SWIZZLE_128B_ATOM_64B = 6
} tma_swizzle;

/** Interleaved global layouts (CUtensorMapInterleave), e.g. NC/8HWC8. */
typedef enum tma_interleave {
    TMA_INTERLEAVE_NONE = 0,
    TMA_INTERLEAVE_16B = 1,
    TMA_INTERLEAVE_32B = 2
} tma_interleave;

/** L2 fetch granularity (CUtensorMapL2promotion). */
typedef enum tma_l2_promotion {
    TMA_L2_NONE = 0,
    TMA_L2_64B = 1,
    TMA_L2_128B = 2,
    TMA_L2_256B = 3
} tma_l2_promotion;

/** What a load writes for elements outside the tensor (CUtensorMapFloatOOBfill).
 *  TMA_OOB_NAN is CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA: floating-point types only.
 *  Measured on an H200: it writes the 16-bit pattern 0x7FF7 repeated, whatever the float type. */
typedef enum tma_oob_fill {
    TMA_OOB_ZERO = 0,
    TMA_OOB_NAN = 1
} tma_oob_fill;

/** Reduction of a reduce-store (cp.reduce.async.bulk.tensor ... .add / .min / .max). */
typedef enum tma_reduce {
    TMA_REDUCE_ADD = 0,
    TMA_REDUCE_MIN = 1,
    TMA_REDUCE_MAX = 2
} tma_reduce;

#endif /* TMA_TYPES_H */
