/* reduce_probe: what the copy engine's reduce-stores do, captured raw for docs/HARDWARE.md "Reduce-stores" and
 * "1-D bulk copies". Not a test: it records what the silicon writes, and the gpu suites then hold the model to it.
 *
 *   reduce_probe OUT_FILE [SEED]
 *
 * Every (element type, reduction) pair, tiled through a map and (where the instruction exists) 1-D, runs in a child
 * process of its own (a fault ends only that child): global memory g0 and shared memory s, rich in special values
 * (every pair of a set of signed zeros, denormals, extremes, infinities and NaNs with payloads, then random bits and
 * close-magnitude normals), reduced into g1. Records go to OUT_FILE (layout: probe_record below); the status of each
 * (the CUDA error of the launch) and a summary table go to stdout. Then the edge cases of 1-D bulk copies and
 * multicast masks, each in its own child: size 0, misaligned addresses, an empty mask, a mask past the cluster.
 *
 * Built without TMA_CHECKED: it issues exactly what checked mode would refuse, to see what the hardware does. */
#include <cuda_runtime.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tma/device.cuh"
#include "tma/tma.h"

#include "reduce_dispatch.cuh"
#include "special_values.h"

enum { N = 4096, REC_BYTES = 64 + 3 * N * 8 };

struct probe_record { /* REC_BYTES each, at offset index * REC_BYTES */
    int32_t form;       /* 0 tiled, 1 1-D bulk, -1 not run */
    int32_t dtype;
    int32_t op;
    int32_t status;     /* cudaError_t of the launch and its completion */
    int32_t n;
    int32_t esize;
    int32_t pad[10];
    /* then g0[N * 8], s[N * 8], g1[N * 8] (only n * esize bytes of each used) */
};

static uint64_t state = 88172645463325252ull;
static uint64_t rnd(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static void make_data(tma_dtype t, uint8_t *g0, uint8_t *s) { sv_fill_pairs(t, g0, s, N, rnd); }

/* The shared operand into the arena, ordered before the copy engine reads it. */
static __device__ void stage_in(uint8_t *arena, const uint8_t *s, uint32_t bytes) {
    for (uint32_t i = threadIdx.x; i < bytes; i += blockDim.x)
        arena[i] = s[i];
    tma_fence_proxy_async();
    __syncthreads();
}

__global__ void tiled_kernel(const __grid_constant__ tma_tensor t, const uint8_t *s, uint32_t bytes, int op) {
    extern __shared__ __align__(1024) uint8_t arena[];
    stage_in(arena, s, bytes);
    if (threadIdx.x == 0) {
        const int32_t c[5] = {0, 0, 0, 0, 0};
        rd_reduce_store<2>(&t, arena, c, op);
        tma_store_commit();
        tma_store_wait<0>();
    }
    __syncthreads();
}

__global__ void bulk_kernel(uint8_t *g, const uint8_t *s, uint32_t bytes, int dtype, int op) {
    extern __shared__ __align__(1024) uint8_t arena[];
    stage_in(arena, s, bytes);
    if (threadIdx.x == 0) {
        if (!rd_bulk_reduce((tma_dtype)dtype, op, g, arena, bytes))
            __trap(); /* the parent runs only pairs that exist */
        tma_store_commit();
        tma_store_wait<0>();
    }
    __syncthreads();
}

static cudaError_t finish(void) {
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

#define TRY(call)                                                                                   \
    do {                                                                                            \
        cudaError_t e_ = (call);                                                                    \
        if (e_ != cudaSuccess)                                                                      \
            return e_;                                                                              \
    } while (0)

/* One reduction on the GPU: g1 = op(g0, s). */
static cudaError_t run_one(int form, tma_dtype t, tma_reduce op, int esize, const uint8_t *g0, const uint8_t *s,
                           uint8_t *g1) {
    const uint32_t bytes = (uint32_t)(N * esize);
    uint8_t *dg, *ds;
    TRY(cudaMalloc((void **)&dg, bytes));
    TRY(cudaMalloc((void **)&ds, bytes));
    TRY(cudaMemcpy(dg, g0, bytes, cudaMemcpyHostToDevice));
    TRY(cudaMemcpy(ds, s, bytes, cudaMemcpyHostToDevice));
    if (form == 0) {
        const uint32_t w = 128u / (uint32_t)esize;
        tma_tiled_desc d = tma_desc_2d(t, dg, N / w, w, 128, N / w, w, TMA_SWIZZLE_NONE);
        tma_tensor tt;
        tma_diag diag;
        tma_status st = tma_tensor_make(&tt, &d, &diag);
        if (st != TMA_OK) {
            printf("  encode refused: %s\n", diag.message);
            return cudaErrorInvalidValue;
        }
        TRY(cudaFuncSetAttribute(tiled_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        tiled_kernel<<<1, 128, bytes>>>(tt, ds, bytes, (int)op);
    } else {
        TRY(cudaFuncSetAttribute(bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        bulk_kernel<<<1, 128, bytes>>>(dg, ds, bytes, (int)t, (int)op);
    }
    TRY(finish());
    TRY(cudaMemcpy(g1, dg, bytes, cudaMemcpyDeviceToHost));
    return cudaSuccess;
}

/* ---- edge cases of 1-D bulk copies and multicast ---- */
__global__ void edge_kernel(int which, uint8_t *g, uint32_t *result) {
    __shared__ __align__(128) uint8_t buf[512];
    __shared__ uint64_t bar;
    const uint32_t rank = tma_cluster_ctarank();
    if (threadIdx.x == 0) {
        tma_mbar_init(&bar, 1);
        tma_fence_mbar_init();
    }
    __syncthreads();
    if (which >= 4) { /* cluster launches: every block ready before any copy lands in it */
        tma_cluster_arrive();
        tma_cluster_wait();
    }
    uint64_t waited = 0;
    bool done = true;
    if (threadIdx.x == 0) {
        switch (which) {
        case 0: /* load of size 0, expecting 0 */
            tma_mbar_arrive_expect_tx(&bar, 0);
            tma_bulk_load(buf, g, 0, &bar);
            done = tma_mbar_poll_bounded_(&bar, 0, &waited);
            break;
        case 1: /* store of size 0 */
            tma_bulk_store(g, buf, 0);
            tma_store_commit();
            tma_store_wait<0>();
            break;
        case 2: /* global address 8 bytes off */
            tma_mbar_arrive_expect_tx(&bar, 64);
            tma_bulk_load(buf, g + 8, 64, &bar);
            done = tma_mbar_poll_bounded_(&bar, 0, &waited);
            break;
        case 3: /* shared address 8 bytes off */
            tma_mbar_arrive_expect_tx(&bar, 64);
            tma_bulk_load(buf + 8, g, 64, &bar);
            done = tma_mbar_poll_bounded_(&bar, 0, &waited);
            break;
        case 4: /* cluster of 2, rank 0 multicasts with mask 0; nobody expects anything */
            if (rank == 0)
                tma_bulk_load_multicast(buf, g, 64, &bar, 0);
            break;
        case 5: /* cluster of 2, rank 0 multicasts to ranks 0 and 2 (no rank 2) */
            tma_mbar_arrive_expect_tx(&bar, rank == 0 ? 64 : 0);
            if (rank == 0)
                tma_bulk_load_multicast(buf, g, 64, &bar, 0x5);
            done = tma_mbar_poll_bounded_(&bar, 0, &waited);
            break;
        case 6: /* size 8 (not a multiple of 16) */
            tma_mbar_arrive_expect_tx(&bar, 8);
            tma_bulk_load(buf, g, 8, &bar);
            done = tma_mbar_poll_bounded_(&bar, 0, &waited);
            break;
        default: /* store from a shared address 8 bytes off */
            tma_bulk_store(g, buf + 8, 64);
            tma_store_commit();
            tma_store_wait<0>();
            break;
        }
        result[blockIdx.x] = done ? 1u : 2u;
    }
    __syncthreads();
    if (which >= 4) {
        tma_cluster_arrive();
        tma_cluster_wait();
    }
}

static const char *edge_name[] = {"bulk load, size 0",          "bulk store, size 0",
                                  "bulk load, global addr % 16 = 8", "bulk load, shared addr % 16 = 8",
                                  "multicast, mask 0 (cluster of 2)", "multicast, mask 0x5 in a cluster of 2",
                                  "bulk load, size 8",          "bulk store, shared addr % 16 = 8"};

static int run_edge(int which) {
    uint8_t *g;
    uint32_t *res, h[2] = {0, 0};
    if (cudaMalloc((void **)&g, 4096) != cudaSuccess || cudaMalloc((void **)&res, 8) != cudaSuccess ||
        cudaMemset(res, 0, 8) != cudaSuccess)
        return 100;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute attr[1];
    cfg.gridDim = dim3(which >= 4 ? 2 : 1);
    cfg.blockDim = dim3(32);
    if (which >= 4) {
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = 2, attr[0].val.clusterDim.y = 1, attr[0].val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
    }
    cudaError_t e = cudaLaunchKernelEx(&cfg, edge_kernel, which, g, res);
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e == cudaSuccess)
        e = cudaMemcpy(h, res, 8, cudaMemcpyDeviceToHost);
    printf("edge %-42s: %s%s\n", edge_name[which], cudaGetErrorName(e),
           e != cudaSuccess ? "" : (h[0] == 2u || h[1] == 2u) ? " (a barrier never completed: timed out)"
                                                              : " (completed)");
    return 0;
}

/* A child: one record (argv: reduce_probe --one OUT_FILE INDEX FORM TYPE OP SEED) or one edge case
 * (reduce_probe --edge WHICH). A fresh process each (fork + exec): a context that faulted leaves nothing behind. */
static int child_main(int argc, char **argv) {
    if (strcmp(argv[1], "--edge") == 0) {
        int rc = run_edge(atoi(argv[2]));
        fflush(stdout);
        return rc;
    }
    if (argc < 8)
        return 2;
    const int index = atoi(argv[3]), form = atoi(argv[4]), t = atoi(argv[5]), op = atoi(argv[6]);
    state = strtoull(argv[7], NULL, 0) | 1u;
    static uint8_t rec[REC_BYTES];
    probe_record *h = (probe_record *)rec;
    uint8_t *g0 = rec + 64, *s = g0 + N * 8, *g1 = s + N * 8;
    const int esize = (int)tma_rule_dtype_bytes((tma_dtype)t);
    make_data((tma_dtype)t, g0, s);
    cudaError_t e = run_one(form, (tma_dtype)t, (tma_reduce)op, esize, g0, s, g1);
    h->form = form, h->dtype = t, h->op = op, h->status = (int32_t)e, h->n = N, h->esize = esize;
    int fd = open(argv[2], O_WRONLY);
    if (fd < 0 || pwrite(fd, rec, sizeof rec, (off_t)index * REC_BYTES) != (ssize_t)sizeof rec)
        return 3;
    close(fd);
    return 0;
}

/* Run this program again with args; wait for it. */
static void spawn(char *self, char **args) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execv(self, args);
        _exit(127);
    }
    int wst = 0;
    waitpid(pid, &wst, 0);
}

int main(int argc, char **argv) {
    if (argc > 1 && strncmp(argv[1], "--", 2) == 0)
        return child_main(argc, argv);
    if (argc < 2) {
        fprintf(stderr, "usage: reduce_probe OUT_FILE [SEED]\n");
        return 2;
    }
    if (argc > 2)
        state = strtoull(argv[2], NULL, 0) | 1u;
    printf("reduce_probe: seed %llu, %d elements per (form, type, op)\n", (unsigned long long)state, N);
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    int index = 0;
    for (int form = 0; form < 2; form++)
        for (int t = 0; t < TMA_DTYPE_COUNT_; t++)
            for (int op = 0; op < TMA_REDUCE_COUNT_; op++) {
                if (form == 1 && !tma_rule_reduce_exists((tma_dtype)t, (tma_reduce)op, 0))
                    continue;
                probe_record back;
                back.status = -1;
                for (int attempt = 0; attempt < 3; attempt++) { /* a context right after a fault may not start */
                    char a_index[16], a_form[16], a_t[16], a_op[16], a_seed[32];
                    snprintf(a_index, sizeof a_index, "%d", index);
                    snprintf(a_form, sizeof a_form, "%d", form);
                    snprintf(a_t, sizeof a_t, "%d", t);
                    snprintf(a_op, sizeof a_op, "%d", op);
                    snprintf(a_seed, sizeof a_seed, "%llu", (unsigned long long)rnd());
                    char *args[] = {argv[0], (char *)"--one", argv[1], a_index, a_form, a_t, a_op, a_seed, NULL};
                    back.status = -1;
                    if (pwrite(fd, &back, sizeof back, (off_t)index * REC_BYTES) != (ssize_t)sizeof back)
                        return 1;
                    spawn(argv[0], args);
                    if (pread(fd, &back, sizeof back, (off_t)index * REC_BYTES) != (ssize_t)sizeof back)
                        back.status = -1;
                    if (back.status != (int)cudaErrorInitializationError && back.status != -1)
                        break;
                    sleep(1);
                }
                printf("%-5s %-8s %-4s: %s\n", form ? "1-D" : "tiled", tma_dtype_name((tma_dtype)t),
                       tma_rule_reduce_name((tma_reduce)op),
                       back.status < 0 ? "no record" : cudaGetErrorName((cudaError_t)back.status));
                index++;
            }
    close(fd);
    for (int which = 0; which < 8; which++) {
        char a_which[16];
        snprintf(a_which, sizeof a_which, "%d", which);
        char *args[] = {argv[0], (char *)"--edge", a_which, NULL};
        spawn(argv[0], args);
    }
    printf("reduce_probe: %d records in %s\n", index, argv[1]);
    return 0;
}
