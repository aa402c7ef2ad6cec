/* libtma: the one definition of TMA_HD, the qualifier of every header-only function that host C and
 * CUDA device code share (rules.h, swizzle.h, wgmma.h), and of TMA_ALIGNAS.
 *
 * Integer arithmetic only, no libc calls, no static data: a TMA_HD function compiles unchanged with a C11
 * compiler, a C++ compiler and nvcc (host and device). */
#ifndef TMA_HD_H
#define TMA_HD_H

/* libtma's headers are C11 (or C++, nvcc included): _Alignas below, and C99 is the last standard without it. A
 * C99 compiler may accept _Alignas as an extension and a stricter one fail on it far from here; say it here. */
#if !defined(__cplusplus) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 201112L)
#error "libtma's headers need C11 or later (or C++): compile with -std=c11 (gcc and clang default to C17; CMake: \
C_STANDARD 11, which tma::tma requests)"
#endif

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
