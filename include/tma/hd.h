/* libtma: the one definition of TMA_HD, the qualifier of every header-only function that host C and
 * CUDA device code share (rules.h, swizzle.h, wgmma.h), and of TMA_ALIGNAS.
 *
 * Integer arithmetic only, no libc calls, no static data: a TMA_HD function compiles unchanged with a C11
 * compiler, a C++ compiler and nvcc (host and device). */
#ifndef TMA_HD_H
#define TMA_HD_H

#if defined(__CUDACC__)
#define TMA_HD static __host__ __device__ __forceinline__
#else
#define TMA_HD static inline
#endif

/* Member alignment in both C11 and C++ (the public structs are shared by C and CUDA code). */
#if defined(__cplusplus)
#define TMA_ALIGNAS(n) alignas(n)
#else
#define TMA_ALIGNAS(n) _Alignas(n)
#endif

#endif /* TMA_HD_H */
