/* gpu: 1-D bulk copies and multicast loads, the silicon against the CPU model. Every byte a copy writes must equal
 * what tma_model_bulk_load / _store / _reduce / tma_model_load_tiled write, and every other byte must keep its
 * poison. Random sizes, offsets, types and masks; the seed is logged and TMA_TEST_SEED replays it. */
#include "gpu_common.h"

#include <criterion/redirect.h>

#include "bulk_conformance.h"
#include "special_values.h"

enum { ARENA = 16 * 1024, JOBS = 64 };

static uint64_t rnd_source(void) { return rnd(); }

static long first_difference(const uint8_t *a, const uint8_t *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return (long)i;
    return -1;
}

/* A random job: size 0..ARENA - offset (a multiple of 16; 0 included, measured to complete), 16-byte aligned offsets
 * into the arena and into a global window of `window` bytes. */
static bulk_job random_job(uint64_t window_base, uint64_t window) {
    bulk_job j;
    j.smem_offset = (uint32_t)rnd_in(0, ARENA / 16 - 1) * 16u;
    uint32_t room = ARENA - j.smem_offset;
    if (room > window)
        room = (uint32_t)window;
    j.bytes = (uint32_t)rnd_in(0, room / 16) * 16u;
    if (rnd() % 8 == 0 && j.bytes > 32u) /* small copies (0 included) often */
        j.bytes = (uint32_t)rnd_in(0, 2) * 16u;
    j.global_offset = window_base + (uint64_t)rnd_in(0, (int64_t)((window - j.bytes) / 16)) * 16u;
    return j;
}

Test(gpu_bulk, loads_match_model, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_bulk.loads_match_model");
    const int launches = config_count(40);
    const size_t global_bytes = 1u << 20;
    uint8_t *h_global = malloc(global_bytes), *poison = malloc(ARENA), *got = malloc((size_t)ARENA * JOBS);
    static _Alignas(1024) uint8_t want[ARENA];
    cr_assert(h_global && poison && got, "out of host memory");
    uint8_t *d_global, *d_poison, *d_out;
    bulk_job *d_jobs;
    CUDA_OK(cudaMalloc((void **)&d_global, global_bytes));
    CUDA_OK(cudaMalloc((void **)&d_poison, ARENA));
    CUDA_OK(cudaMalloc((void **)&d_out, (size_t)ARENA * JOBS));
    CUDA_OK(cudaMalloc((void **)&d_jobs, JOBS * sizeof(bulk_job)));
    long copies = 0, bytes = 0, zero = 0;
    for (int l = 0; l < launches; l++) {
        rnd_bytes(h_global, global_bytes);
        rnd_bytes(poison, ARENA);
        bulk_job jobs[JOBS];
        for (int b = 0; b < JOBS; b++)
            jobs[b] = random_job(0, global_bytes); /* loads may overlap: they only read */
        CUDA_OK(cudaMemcpy(d_global, h_global, global_bytes, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(d_poison, poison, ARENA, cudaMemcpyHostToDevice));
        CUDA_OK(cudaMemcpy(d_jobs, jobs, sizeof jobs, cudaMemcpyHostToDevice));
        CUDA_OK(bconf_load(d_global, d_jobs, JOBS, d_poison, ARENA, d_out));
        CUDA_OK(cudaMemcpy(got, d_out, (size_t)ARENA * JOBS, cudaMemcpyDeviceToHost));
        for (int b = 0; b < JOBS; b++) {
            memcpy(want, poison, ARENA);
            tma_status st = tma_model_bulk_load(want, ARENA, jobs[b].smem_offset, h_global + jobs[b].global_offset,
                                                jobs[b].bytes);
            cr_assert_eq(st, TMA_OK, "model refused a load the GPU ran: %s", tma_status_name(st));
            long at = first_difference(got + (size_t)b * ARENA, want, ARENA);
            cr_assert(at < 0, "launch %d block %d (%u bytes from global +%llu to arena +%u%s): arena byte %ld: GPU 0x%02x, "
                      "model 0x%02x",
                      l, b, jobs[b].bytes, (unsigned long long)jobs[b].global_offset, jobs[b].smem_offset,
                      b % 2 ? ", after an L2 prefetch" : "", at, got[(size_t)b * ARENA + at], want[at]);
            copies++;
            bytes += jobs[b].bytes;
            zero += jobs[b].bytes == 0;
        }
    }
    cr_log_info("bulk loads: %ld copies (%ld of 0 bytes, half after cp.async.bulk.prefetch.L2), %ld bytes, every arena "
                "byte equal to the model",
                copies, zero, bytes);
    cudaFree(d_global);
    cudaFree(d_poison);
    cudaFree(d_out);
    cudaFree(d_jobs);
    free(h_global);
    free(poison);
    free(got);
}

/* n jobs of bulk stores (reduce < 0) or reduces of (type, op) into disjoint windows of one global buffer; the whole
 * buffer must equal the model's. Returns the bytes moved. */
static long run_stores(int launch, tma_dtype type, int reduce, int first_pairs) {
    const uint64_t window = ARENA;
    const size_t global_bytes = (size_t)window * JOBS;
    const size_t esize = reduce < 0 ? 1 : tma_dtype_size(type);
    uint8_t *h_global = malloc(global_bytes), *model = malloc(global_bytes), *images = malloc((size_t)ARENA * JOBS);
    uint8_t *got = malloc(global_bytes);
    cr_assert(h_global && model && images && got, "out of host memory");
    bulk_job jobs[JOBS];
    for (int b = 0; b < JOBS; b++)
        jobs[b] = random_job((uint64_t)b * window, window);
    if (reduce < 0) {
        rnd_bytes(h_global, global_bytes);
        rnd_bytes(images, (size_t)ARENA * JOBS);
    } else {
        const int magnitude = (int)rnd_in(-20, 20);
        sv_fill_mixed(type, h_global, global_bytes / esize, magnitude, rnd_source);
        sv_fill_mixed(type, images, (size_t)ARENA * JOBS / esize, magnitude, rnd_source);
        if (first_pairs) { /* block 0: every pair of the special values, element against element */
            jobs[0].smem_offset = 0, jobs[0].global_offset = 0, jobs[0].bytes = ARENA;
            sv_fill_pairs(type, h_global, images, ARENA / esize, rnd_source);
        }
    }
    uint8_t *d_global, *d_images;
    bulk_job *d_jobs;
    CUDA_OK(cudaMalloc((void **)&d_global, global_bytes));
    CUDA_OK(cudaMalloc((void **)&d_images, (size_t)ARENA * JOBS));
    CUDA_OK(cudaMalloc((void **)&d_jobs, sizeof jobs));
    CUDA_OK(cudaMemcpy(d_global, h_global, global_bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_images, images, (size_t)ARENA * JOBS, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_jobs, jobs, sizeof jobs, cudaMemcpyHostToDevice));
    CUDA_OK(bconf_store(d_global, d_jobs, JOBS, d_images, ARENA, type, reduce));
    CUDA_OK(cudaMemcpy(got, d_global, global_bytes, cudaMemcpyDeviceToHost));
    memcpy(model, h_global, global_bytes);
    long bytes = 0;
    for (int b = 0; b < JOBS; b++) {
        const uint8_t *image = images + (size_t)b * ARENA;
        tma_status st = reduce < 0 ? tma_model_bulk_store(model + jobs[b].global_offset, image, ARENA,
                                                          jobs[b].smem_offset, jobs[b].bytes)
                                   : tma_model_bulk_reduce(model + jobs[b].global_offset, image, ARENA,
                                                           jobs[b].smem_offset, jobs[b].bytes, type, (tma_reduce)reduce);
        cr_assert_eq(st, TMA_OK, "model refused a copy the GPU ran: %s", tma_status_name(st));
        bytes += jobs[b].bytes;
    }
    long at = first_difference(got, model, global_bytes);
    if (at >= 0) {
        const int b = (int)(at / (long)window);
        uint64_t g = 0, m = 0, before = 0;
        const size_t e0 = (size_t)at / esize * esize;
        memcpy(&g, got + e0, esize);
        memcpy(&m, model + e0, esize);
        memcpy(&before, h_global + e0, esize);
        cr_assert_fail("launch %d, %s %s: global byte %ld (block %d: %u bytes to +%llu from arena +%u): element before "
                       "%#llx, GPU %#llx, model %#llx",
                       launch, reduce < 0 ? "store" : tma_rule_reduce_name((tma_reduce)reduce),
                       reduce < 0 ? "" : tma_dtype_name(type), at, b, jobs[b].bytes,
                       (unsigned long long)jobs[b].global_offset, jobs[b].smem_offset, (unsigned long long)before,
                       (unsigned long long)g, (unsigned long long)m);
    }
    cudaFree(d_global);
    cudaFree(d_images);
    cudaFree(d_jobs);
    free(h_global);
    free(model);
    free(images);
    free(got);
    return bytes;
}

Test(gpu_bulk, stores_match_model, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_bulk.stores_match_model");
    const int launches = config_count(40);
    long bytes = 0;
    for (int l = 0; l < launches; l++)
        bytes += run_stores(l, TMA_DTYPE_U8, -1, 0);
    cr_log_info("bulk stores: %d x %d copies, %ld bytes, every byte of each global buffer equal to the model", launches,
                JOBS, bytes);
}

/* Every 1-D reduce form (TMA_REDUCE_FORMS), at least 400 random copies each (JOBS per launch), on special-rich data;
 * the first launch of each pairs every special value with every other, element by element. */
Test(gpu_bulk, reduces_match_model, .timeout = 600) {
    require_sm90();
    seed_rng("gpu_bulk.reduces_match_model");
    const int copies = config_count(400);
    const int launches = (copies + JOBS - 1) / JOBS;
    int forms = 0;
    long bytes = 0;
    for (int t = 0; t < TMA_DTYPE_COUNT_; t++)
        for (int op = 0; op < TMA_REDUCE_COUNT_; op++) {
            if (!tma_rule_reduce_exists((tma_dtype)t, (tma_reduce)op, 0))
                continue;
            for (int l = 0; l < launches; l++)
                bytes += run_stores(l, (tma_dtype)t, op, l == 0);
            forms++;
        }
    cr_assert_eq(forms, 34, "every 1-D pair of TMA_REDUCE_FORMS was run");
    cr_log_info("bulk reduces: %d (type, op) pairs x %d copies, %ld bytes, special-rich data, every byte equal to the "
                "model",
                forms, launches * JOBS, bytes);
}

/* One multicast configuration: masks[r] per cluster rank (-1: rank r issues nothing). Every block's arena must equal
 * the poison with, at r * slot, what issuer r sent if the block's bit is in masks[r]. */
static void multicast_one(int cluster, const int32_t *masks, int tiled, const tma_tiled_desc *d, const tma_tensor *t,
                          const uint8_t *h_tensor, const uint8_t *d_tensor, const uint8_t *h_global,
                          const uint8_t *d_global, uint32_t bytes_each, uint8_t *d_poison, const uint8_t *poison,
                          uint8_t *d_out, uint8_t *got) {
    int32_t coords[8][5];
    uint32_t slot = bytes_each;
    if (tiled) {
        slot = (uint32_t)((tma_box_smem_bytes(d) + 127) / 128 * 128);
        for (int r = 0; r < cluster; r++)
            random_coords(d, coords[r], 1);
    }
    CUDA_OK(bconf_multicast(cluster, masks, tiled, t, tiled ? (const int32_t(*)[5])coords : NULL, d_global, bytes_each,
                            slot, d_poison, ARENA, d_out));
    CUDA_OK(cudaMemcpy(got, d_out, (size_t)ARENA * cluster, cudaMemcpyDeviceToHost));
    static _Alignas(1024) uint8_t want[8][ARENA];
    void *arenas[8];
    for (int q = 0; q < cluster; q++) {
        memcpy(want[q], poison, ARENA);
        arenas[q] = want[q];
    }
    for (int r = 0; r < cluster; r++) {
        if (masks[r] < 0)
            continue;
        tma_status st;
        if (tiled) {
            st = TMA_OK;
            for (int q = 0; q < cluster && st == TMA_OK; q++)
                if (masks[r] >> q & 1)
                    st = tma_model_load_tiled(d, coords[r], want[q], ARENA, (uint32_t)r * slot);
        } else {
            st = tma_model_bulk_load_multicast(arenas, (uint32_t)cluster, ARENA, (uint32_t)r * slot,
                                               h_global + (size_t)r * bytes_each, bytes_each, (uint32_t)masks[r]);
        }
        cr_assert_eq(st, TMA_OK, "model refused a multicast the GPU ran: %s", tma_status_name(st));
    }
    (void)h_tensor, (void)d_tensor;
    for (int q = 0; q < cluster; q++) {
        long at = first_difference(got + (size_t)q * ARENA, want[q], ARENA);
        if (at >= 0) {
            char m[96];
            int n = 0;
            for (int r = 0; r < cluster; r++)
                n += snprintf(m + n, sizeof m - (size_t)n, "%d ", masks[r]);
            cr_assert_fail("%s multicast, cluster of %d, masks {%s}: rank %d's arena byte %ld: GPU 0x%02x, model 0x%02x",
                           tiled ? "tiled" : "1-D", cluster, m, q, at, got[(size_t)q * ARENA + at], want[q][at]);
        }
    }
}

/* Clusters of 2 and 4: every mask subset (the empty one included: measured to complete and deliver nothing) from
 * every issuing rank, tiled and 1-D; then random configurations where several ranks multicast at once and each
 * receiver expects the sum of its shares (tma_multicast_rx_bytes). */
Test(gpu_bulk, multicast_matches_model_for_every_mask, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_bulk.multicast_matches_model_for_every_mask");
    const size_t global_bytes = 8 * ARENA;
    uint8_t *h_global = malloc(global_bytes), *poison = malloc(ARENA), *got = malloc((size_t)ARENA * 8);
    cr_assert(h_global && poison && got, "out of host memory");
    rnd_bytes(h_global, global_bytes);
    rnd_bytes(poison, ARENA);
    uint8_t *d_global, *d_poison, *d_out;
    CUDA_OK(cudaMalloc((void **)&d_global, global_bytes));
    CUDA_OK(cudaMalloc((void **)&d_poison, ARENA));
    CUDA_OK(cudaMalloc((void **)&d_out, (size_t)ARENA * 8));
    CUDA_OK(cudaMemcpy(d_global, h_global, global_bytes, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_poison, poison, ARENA, cudaMemcpyHostToDevice));
    int configs = 0, random_configs = config_count(40);
    for (int tiled = 0; tiled < 2; tiled++)
        for (int cluster = 2; cluster <= 4; cluster += 2) {
            /* a tensor for the tiled form: boxes of at most ARENA / cluster */
            tma_tiled_desc d, host;
            tma_tensor t;
            uint8_t *h_tensor = NULL, *d_tensor = NULL;
            do
                d = random_desc(NULL, 0);
            while (tma_box_smem_bytes(&d) > ARENA / (size_t)cluster - 128);
            const size_t extent = tma_global_extent_bytes(&d);
            h_tensor = malloc(extent);
            cr_assert(h_tensor != NULL, "out of host memory");
            rnd_bytes(h_tensor, extent);
            CUDA_OK(cudaMalloc((void **)&d_tensor, extent));
            CUDA_OK(cudaMemcpy(d_tensor, h_tensor, extent, cudaMemcpyHostToDevice));
            host = d;
            host.global_address = h_tensor;
            d.global_address = d_tensor;
            tma_diag diag;
            cr_assert_eq(tma_tensor_make(&t, &d, &diag), TMA_OK, "%s", diag.message);
            const uint32_t each = (uint32_t)rnd_in(1, ARENA / cluster / 16) * 16u;
            int32_t masks[8];
            for (int issuer = 0; issuer < cluster; issuer++)
                for (int mask = 0; mask < 1 << cluster; mask++) {
                    for (int r = 0; r < cluster; r++)
                        masks[r] = r == issuer ? mask : -1;
                    multicast_one(cluster, masks, tiled, &host, &t, h_tensor, d_tensor, h_global, d_global, each,
                                  d_poison, poison, d_out, got);
                    configs++;
                }
            for (int k = 0; k < random_configs; k++) {
                for (int r = 0; r < cluster; r++)
                    masks[r] = rnd() % 4 == 0 ? -1 : (int32_t)rnd_in(0, (1 << cluster) - 1);
                multicast_one(cluster, masks, tiled, &host, &t, h_tensor, d_tensor, h_global, d_global, each, d_poison,
                              poison, d_out, got);
                configs++;
            }
            cudaFree(d_tensor);
            free(h_tensor);
        }
    cr_log_info("multicast: %d configurations (clusters of 2 and 4, every mask from every rank, then several issuers at "
                "once; tiled and 1-D): every block's arena equal to the model, each barrier armed with its share",
                configs);
    cudaFree(d_global);
    cudaFree(d_poison);
    cudaFree(d_out);
    free(h_global);
    free(poison);
    free(got);
}

/* Checked mode: each new rule prints the host's message and traps instead of faulting or hanging. */
static void expect_checked(int which, const char *want) {
    require_sm90();
    uint8_t *g;
    CUDA_OK(cudaMalloc((void **)&g, 4096));
    tma_tensor t;
    tma_tiled_desc d = {.dtype = TMA_DTYPE_F32, .rank = 1, .global_address = g, .global_dim = {256}, .box_dim = {64}};
    tma_diag diag;
    cr_assert_eq(tma_tensor_make(&t, &d, &diag), TMA_OK, "%s", diag.message);
    cudaError_t e = bconf_checked(which, g, &t);
    cr_assert_neq(e, cudaSuccess, "the broken copy must not complete");
    char out[4096];
    captured_stdout(out, sizeof out);
    cr_assert(strstr(out, "libtma checked mode") != NULL && strstr(out, want) != NULL,
              "checked mode printed:\n%s\nwant it to contain:\n%s", out, want);
}

Test(gpu_bulk, checked_mode_bulk_size, .init = cr_redirect_stdout, .timeout = 60) {
    tma_diag d;
    cr_assert_eq(tma_check_bulk("load", (void *)(uintptr_t)0x10000, 0, 24, &d), TMA_ERR_BULK_SIZE);
    expect_checked(0, d.message);
}

Test(gpu_bulk, checked_mode_bulk_global_alignment, .init = cr_redirect_stdout, .timeout = 60) {
    expect_checked(1, "of a 1-D bulk store is not 16-byte aligned (8 bytes past a 16-byte boundary");
}

Test(gpu_bulk, checked_mode_bulk_shared_alignment, .init = cr_redirect_stdout, .timeout = 60) {
    expect_checked(2, "of a 1-D bulk reduce is not 16-byte aligned (the copy would fault with \"misaligned address\")");
}

Test(gpu_bulk, checked_mode_refuses_f32_min_through_a_map, .init = cr_redirect_stdout, .timeout = 60) {
    tma_diag d;
    cr_assert_eq(tma_check_reduce(TMA_DTYPE_F32, TMA_REDUCE_MIN, 1, &d), TMA_ERR_REDUCE_TYPE);
    expect_checked(3, d.message);
}

Test(gpu_bulk, checked_mode_multicast_mask_past_the_cluster, .init = cr_redirect_stdout, .timeout = 60) {
    tma_diag d;
    cr_assert_eq(tma_check_multicast(0x4, 2, &d), TMA_ERR_MULTICAST_MASK);
    expect_checked(4, d.message);
}

/* Copies and reduces between the blocks of clusters (distributed shared memory), in rings of 2 and 4: every block
 * sends a random range of the lower half of its arena into the upper half of the next block's. One launch of CLUSTERS
 * clusters per ring size; returns the copies made. */
enum { CLUSTERS = 68 }; /* 4 x 68 + 2 x 68 = 408 copies a form */

static int run_cluster_copies(int cluster, tma_dtype type, int reduce) {
    const int blocks = cluster * CLUSTERS;
    const size_t esize = reduce < 0 ? 1 : tma_dtype_size(type);
    uint8_t *images = malloc((size_t)ARENA * blocks), *got = malloc((size_t)ARENA * blocks);
    uint8_t *want = aligned_alloc(1024, (size_t)ARENA * blocks);
    bulk_job *jobs = malloc(sizeof(bulk_job) * (size_t)blocks);
    cr_assert(images && got && want && jobs, "out of host memory");
    if (reduce < 0)
        rnd_bytes(images, (size_t)ARENA * blocks);
    else
        sv_fill_mixed(type, images, (size_t)ARENA * blocks / esize, 0, rnd_source);
    const uint32_t half = ARENA / 2;
    for (int b = 0; b < blocks; b++) {
        jobs[b].bytes = (uint32_t)rnd_in(0, half / 16) * 16u;
        jobs[b].smem_offset = (uint32_t)rnd_in(0, (half - jobs[b].bytes) / 16) * 16u;       /* source: lower half */
        jobs[b].global_offset = half + (uint32_t)rnd_in(0, (half - jobs[b].bytes) / 16) * 16u; /* dest: upper half */
    }
    uint8_t *d_images, *d_out;
    bulk_job *d_jobs;
    CUDA_OK(cudaMalloc((void **)&d_images, (size_t)ARENA * blocks));
    CUDA_OK(cudaMalloc((void **)&d_out, (size_t)ARENA * blocks));
    CUDA_OK(cudaMalloc((void **)&d_jobs, sizeof(bulk_job) * (size_t)blocks));
    CUDA_OK(cudaMemcpy(d_images, images, (size_t)ARENA * blocks, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(d_jobs, jobs, sizeof(bulk_job) * (size_t)blocks, cudaMemcpyHostToDevice));
    CUDA_OK(bconf_cluster(cluster, CLUSTERS, d_jobs, d_images, ARENA, type, reduce, d_out));
    CUDA_OK(cudaMemcpy(got, d_out, (size_t)ARENA * blocks, cudaMemcpyDeviceToHost));
    memcpy(want, images, (size_t)ARENA * blocks);
    for (int b = 0; b < blocks; b++) {
        const int to = b - b % cluster + (b % cluster + 1) % cluster;
        uint8_t *dst = want + (size_t)to * ARENA;
        const uint8_t *src = images + (size_t)b * ARENA;
        tma_status st = reduce < 0 ? tma_model_bulk_copy_cluster(dst, ARENA, (uint32_t)jobs[b].global_offset, src, ARENA,
                                                                 jobs[b].smem_offset, jobs[b].bytes)
                                   : tma_model_bulk_reduce_cluster(dst, ARENA, (uint32_t)jobs[b].global_offset, src,
                                                                   ARENA, jobs[b].smem_offset, jobs[b].bytes, type,
                                                                   (tma_reduce)reduce);
        cr_assert_eq(st, TMA_OK, "model refused a copy the GPU ran: %s", tma_status_name(st));
    }
    for (int b = 0; b < blocks; b++) {
        long at = first_difference(got + (size_t)b * ARENA, want + (size_t)b * ARENA, ARENA);
        cr_assert(at < 0, "cluster of %d, %s %s: block %d's arena byte %ld: GPU 0x%02x, model 0x%02x, before 0x%02x",
                  cluster, reduce < 0 ? "copy" : tma_rule_reduce_name((tma_reduce)reduce),
                  reduce < 0 ? "" : tma_dtype_name(type), b, at, got[(size_t)b * ARENA + at],
                  want[(size_t)b * ARENA + at], images[(size_t)b * ARENA + at]);
    }
    cudaFree(d_images);
    cudaFree(d_out);
    cudaFree(d_jobs);
    free(images);
    free(got);
    free(want);
    free(jobs);
    return blocks;
}

/* The plain copy and every reduce of TMA_REDUCE_FORMS's CLUSTER column, in rings of 2 and 4: at least 400 copies each. */
Test(gpu_bulk, ring_copies_and_reduces_match_model, .timeout = 300) {
    require_sm90();
    seed_rng("gpu_bulk.ring_copies_and_reduces_match_model");
    const int rounds = config_count(400) >= 400 ? 1 : 0; /* fewer under the sanitizers: one ring size each */
    int forms = 0, copies = 0;
    for (int t = -1; t < TMA_DTYPE_COUNT_; t++)
        for (int op = 0; op < TMA_REDUCE_COUNT_; op++) {
            const int plain = t < 0;
            if (plain ? op != 0 : !tma_rule_reduce_exists((tma_dtype)t, (tma_reduce)op, TMA_REDUCE_FORM_CLUSTER))
                continue;
            for (int cluster = 4; cluster >= 4 - 2 * rounds; cluster -= 2)
                copies += run_cluster_copies(cluster, plain ? TMA_DTYPE_U8 : (tma_dtype)t, plain ? -1 : op);
            forms++;
        }
    cr_assert_eq(forms, 1 + 16, "the copy and every cluster reduce pair were run");
    cr_log_info("cluster copies: the plain copy and %d reduce pairs, %d copies between the blocks of clusters of 2 and "
                "4, every arena byte equal to the model",
                forms - 1, copies);
}

Test(gpu_bulk, checked_mode_cluster_rank, .init = cr_redirect_stdout, .timeout = 60) {
    tma_diag d;
    cr_assert_eq(tma_check_bulk_cluster("copy", 0x400, 0x600, 64, 2, 2, &d), TMA_ERR_MULTICAST_MASK);
    expect_checked(5, d.message);
}
