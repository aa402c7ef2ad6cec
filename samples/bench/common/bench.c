/* Timing for the samples (bench.h). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cuda_runtime.h>

#include "../../common/cuda_check.h"

static int cmp_float(const void *x, const void *y) {
    float a = *(const float *)x, b = *(const float *)y;
    return (a > b) - (a < b);
}

/* TMA_BENCH_GAP_US (a diagnostic): the GPU left idle this long before each timed launch of bench_interleaved. */
static long gap_us(void) {
    const char *env = getenv("TMA_BENCH_GAP_US");
    return env ? strtol(env, NULL, 0) : 0;
}

static void idle_gap(long us) {
    if (us <= 0)
        return;
    struct timespec t = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&t, NULL);
}

/* TMA_BENCH_BATCH (a diagnostic): each timed launch of bench_interleaved becomes this many back to back between its
 * two events, and the time their mean. */
static int batch(void) {
    const char *env = getenv("TMA_BENCH_BATCH");
    const long n = env ? strtol(env, NULL, 0) : 1;
    return n > 1 && n < 1000 ? (int)n : 1;
}

static float once_n(bench_launch launch, void *ctx, int which, cudaEvent_t e0, cudaEvent_t e1, int n) {
    float ms;
    CUDA_CHECK(cudaEventRecord(e0, 0));
    for (int i = 0; i < n; i++)
        launch(ctx, which);
    CUDA_CHECK(cudaEventRecord(e1, 0));
    CUDA_CHECK(cudaEventSynchronize(e1));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return ms / (float)n;
}

static float once(bench_launch launch, void *ctx, int which, cudaEvent_t e0, cudaEvent_t e1) {
    return once_n(launch, ctx, which, e0, e1, 1);
}

float bench_once(bench_launch launch, void *ctx, int which) {
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    const float ms = once(launch, ctx, which, e0, e1);
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return ms;
}

void bench_interleaved(bench_launch launch, void *ctx, int n, int reps, float *median_ms) {
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    float *ms = malloc(sizeof(float) * (size_t)reps * (size_t)n);
    if (!ms) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    float warm = 0;
    for (int r = 0; r < 3 || warm < BENCH_WARMUP_MS; r++)
        for (int i = 0; i < n; i++)
            warm += once(launch, ctx, i, e0, e1);
    const long gap = gap_us();
    const int n_batch = batch();
    for (int r = 0; r < reps; r++)
        for (int j = 0; j < n; j++) {
            const int i = (j + r) % n;
            idle_gap(gap);
            ms[(size_t)i * (size_t)reps + (size_t)r] = once_n(launch, ctx, i, e0, e1, n_batch);
        }
    for (int i = 0; i < n; i++) {
        float *t = ms + (size_t)i * (size_t)reps;
        qsort(t, (size_t)reps, sizeof(float), cmp_float);
        median_ms[i] = reps % 2 ? t[reps / 2] : 0.5f * (t[reps / 2 - 1] + t[reps / 2]);
    }
    free(ms);
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
}
