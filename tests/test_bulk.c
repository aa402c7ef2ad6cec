/* cpu: the rules and the CPU model of 1-D bulk copies and multicast loads (tma_rules_bulk, tma_rules_multicast,
 * tma_multicast_rx_bytes, tma_model_bulk_*). The GPU suite gpu_bulk holds the same model to the silicon. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tma/tma.h"

#define ADDR(x) ((const void *)(uintptr_t)(x))

Test(bulk_rules, each_rule_has_its_status_and_message) {
    tma_diag d;
    cr_assert_eq(tma_check_bulk("load", ADDR(0x10000), 0x80, 4096, &d), TMA_OK);
    cr_assert_str_eq(d.message, "");
    cr_assert_eq(tma_check_bulk("load", ADDR(0x10000), 0x80, 0, &d), TMA_OK, "size 0 completes (measured)");

    cr_assert_eq(tma_check_bulk("store", ADDR(0x10000), 0x80, 100, &d), TMA_ERR_BULK_SIZE);
    cr_assert_str_eq(d.message, "1-D bulk store of size = 100 bytes: the size must be a multiple of 16 bytes: copy 96 "
                                "bytes this way and the last 4 with ordinary loads and stores, or pad both buffers to "
                                "112 bytes");
    cr_assert_eq(tma_check_bulk("load", ADDR(0x10000), 0x80, 227 * 1024 + 16, &d), TMA_ERR_BULK_SIZE);
    cr_assert(strstr(d.message, "more than the 232448 bytes of shared memory a Hopper block can have") != NULL, "%s",
              d.message);
    cr_assert_eq(tma_check_bulk("prefetch", ADDR(0x10000), ~0u, 1u << 20, &d), TMA_OK,
                 "a prefetch has no shared side: only L2 bounds it");

    cr_assert_eq(tma_check_bulk("reduce", ADDR(0x10008), 0x80, 64, &d), TMA_ERR_GLOBAL_ADDRESS_ALIGN);
    cr_assert_str_eq(d.message, "global address 0x10008 of a 1-D bulk reduce is not 16-byte aligned (8 bytes past a "
                                "16-byte boundary; the copy would fault with \"misaligned address\"): start the copy at "
                                "a 16-byte boundary");
    cr_assert_eq(tma_check_bulk("load", ADDR(0x10000), 0x84, 64, &d), TMA_ERR_SMEM_ALIGN);
    cr_assert_str_eq(d.message, "shared-memory address 0x84 of a 1-D bulk load is not 16-byte aligned (the copy would "
                                "fault with \"misaligned address\"): align the buffer to 16 bytes (alignas(16))");
    cr_assert_eq(tma_check_bulk(NULL, ADDR(0x10000), 0x80, 8, &d), TMA_ERR_BULK_SIZE, "what may be NULL");
}

/* Every combination of size, global and shared misalignment: the checker reports exactly the broken rules. */
Test(bulk_rules, violations_are_exactly_the_broken_rules) {
    for (uint64_t size = 0; size <= 64; size += 4)
        for (uint64_t g = 0; g < 32; g += 4)
            for (uint32_t sm = 0; sm < 32; sm += 4) {
                tma_violation v[8];
                tma_rule_sink s = tma_rule_sink_make(v, 8);
                tma_rules_bulk("load", 0x1000 + g, 0x400 + sm, size, &s);
                const uint32_t want = (size % 16 != 0) + (g % 16 != 0) + (sm % 16 != 0);
                cr_assert_eq(s.count, want, "size %llu global +%llu shared +%u: %u violations, want %u",
                             (unsigned long long)size, (unsigned long long)g, sm, s.count, want);
            }
}

Test(bulk_rules, multicast_masks) {
    tma_diag d;
    cr_assert_eq(tma_check_multicast(0x3, 2, &d), TMA_OK);
    cr_assert_eq(tma_check_multicast(0x0, 2, &d), TMA_OK, "mask 0 completes and delivers nothing (measured)");
    cr_assert_eq(tma_check_multicast(0xFFFF, 16, &d), TMA_OK);
    cr_assert_eq(tma_check_multicast(0x5, 2, &d), TMA_ERR_MULTICAST_MASK);
    cr_assert_str_eq(d.message, "multicast load with cta_mask = 0x5 in a cluster of 2 blocks: bit 2 names no block of "
                                "the cluster: use bits 0..1 only");
    cr_assert_eq(tma_check_multicast(0x1, 0, &d), TMA_ERR_ARG);
    cr_assert_str_eq(d.message, "cluster_blocks = 0: a cluster has 1..16 blocks");
    cr_assert_eq(tma_check_multicast(0x1, 17, &d), TMA_ERR_ARG);
}

/* tma_multicast_rx_bytes against counting by hand, over every mask set of a cluster of 4 (16^4 combinations). */
Test(bulk_rules, rx_bytes_is_each_receivers_share) {
    for (uint32_t combo = 0; combo < 1u << 16; combo++) {
        uint16_t masks[4];
        for (int r = 0; r < 4; r++)
            masks[r] = (uint16_t)(combo >> (4 * r) & 0xFu);
        for (uint32_t rank = 0; rank < 4; rank++) {
            uint32_t want = 0;
            for (int r = 0; r < 4; r++)
                if (masks[r] & (1u << rank))
                    want += 96;
            cr_assert_eq(tma_multicast_rx_bytes(masks, 4, rank, 96), want, "masks %04x rank %u", combo, rank);
        }
    }
}

Test(bulk_model, loads_and_stores_move_exactly_the_bytes) {
    static _Alignas(1024) uint8_t smem[4096], before[4096];
    _Alignas(16) uint8_t global[1024], gbefore[1024];
    srand(12345);
    for (int round = 0; round < 500; round++) {
        for (size_t i = 0; i < sizeof smem; i++)
            smem[i] = before[i] = (uint8_t)rand();
        for (size_t i = 0; i < sizeof global; i++)
            global[i] = gbefore[i] = (uint8_t)rand();
        const uint32_t off = (uint32_t)(rand() % 200) * 16u, bytes = (uint32_t)(rand() % 40) * 16u;
        const uint32_t goff = (uint32_t)(rand() % 20) * 16u;
        cr_assert_eq(tma_model_bulk_load(smem, sizeof smem, off, global + goff, bytes), TMA_OK);
        for (size_t i = 0; i < sizeof smem; i++) {
            const int inside = i >= off && i < off + bytes;
            cr_assert_eq(smem[i], inside ? global[goff + i - off] : before[i], "load: smem byte %zu", i);
        }
        cr_assert_eq(tma_model_bulk_store(global + goff, before, sizeof before, off, bytes), TMA_OK);
        for (size_t i = 0; i < sizeof global; i++) {
            const int inside = i >= goff && i < goff + bytes;
            cr_assert_eq(global[i], inside ? before[off + i - goff] : gbefore[i], "store: global byte %zu", i);
        }
    }
}

Test(bulk_model, refusals_write_nothing) {
    static _Alignas(1024) uint8_t smem[256];
    _Alignas(16) uint8_t global[256];
    memset(smem, 0xAB, sizeof smem);
    memset(global, 0xCD, sizeof global);
    cr_assert_eq(tma_model_bulk_load(smem, sizeof smem, 0, global, 24), TMA_ERR_BULK_SIZE);
    cr_assert_eq(tma_model_bulk_load(smem, sizeof smem, 8, global, 32), TMA_ERR_SMEM_ALIGN);
    cr_assert_eq(tma_model_bulk_load(smem, sizeof smem, 0, global + 8, 32), TMA_ERR_GLOBAL_ADDRESS_ALIGN);
    cr_assert_eq(tma_model_bulk_load(smem, sizeof smem, 128, global, 144), TMA_ERR_SMEM_BOUNDS);
    cr_assert_eq(tma_model_bulk_load(NULL, sizeof smem, 0, global, 16), TMA_ERR_NULL_ARG);
    cr_assert_eq(tma_model_bulk_store(global, smem, sizeof smem, 0, 24), TMA_ERR_BULK_SIZE);
    cr_assert_eq(tma_model_bulk_reduce(global, smem, sizeof smem, 0, 32, TMA_DTYPE_F32, TMA_REDUCE_MIN),
                 TMA_ERR_REDUCE_TYPE, "f32 min has no 1-D instruction");
    cr_assert_eq(tma_model_bulk_reduce(global, smem, sizeof smem, 0, 32, TMA_DTYPE_U8, TMA_REDUCE_ADD),
                 TMA_ERR_REDUCE_TYPE);
    for (size_t i = 0; i < sizeof smem; i++)
        cr_assert_eq(smem[i], 0xAB, "smem byte %zu written by a refused copy", i);
    for (size_t i = 0; i < sizeof global; i++)
        cr_assert_eq(global[i], 0xCD, "global byte %zu written by a refused copy", i);
}

Test(bulk_model, multicast_writes_only_the_masked_blocks) {
    static _Alignas(1024) uint8_t arena[4][512];
    _Alignas(16) uint8_t global[64];
    for (int i = 0; i < 64; i++)
        global[i] = (uint8_t)(i * 7 + 1);
    for (uint32_t mask = 0; mask < 16; mask++) {
        memset(arena, 0xEE, sizeof arena);
        void *const smem[4] = {arena[0], arena[1], arena[2], arena[3]};
        cr_assert_eq(tma_model_bulk_load_multicast(smem, 4, 512, 128, global, 64, mask), TMA_OK);
        for (int r = 0; r < 4; r++)
            for (int i = 0; i < 512; i++) {
                const int got = (mask >> r & 1u) && i >= 128 && i < 192;
                cr_assert_eq(arena[r][i], got ? global[i - 128] : 0xEE, "mask %x rank %d byte %d", mask, r, i);
            }
    }
    void *const smem[4] = {arena[0], arena[1], arena[2], arena[3]};
    cr_assert_eq(tma_model_bulk_load_multicast(smem, 2, 512, 0, global, 64, 0x4), TMA_ERR_MULTICAST_MASK);
}

Test(bulk_model, cluster_copies_and_reduces) {
    static _Alignas(1024) uint8_t dst[1024], src[1024], want[1024];
    for (int i = 0; i < 1024; i++)
        dst[i] = want[i] = (uint8_t)(i * 13 + 5), src[i] = (uint8_t)(i * 7 + 1);
    cr_assert_eq(tma_model_bulk_copy_cluster(dst, sizeof dst, 512, src, sizeof src, 128, 256), TMA_OK);
    memcpy(want + 512, src + 128, 256);
    cr_assert(memcmp(dst, want, sizeof dst) == 0, "the copy moves exactly its bytes");
    /* u32 add into the peer: element by element, wrapping */
    uint32_t a[4] = {0xFFFFFFFFu, 1, 2, 3}, b[4] = {2, 2, 2, 2};
    memcpy(dst, a, 16);
    memcpy(src, b, 16);
    cr_assert_eq(tma_model_bulk_reduce_cluster(dst, sizeof dst, 0, src, sizeof src, 0, 16, TMA_DTYPE_U32, TMA_REDUCE_ADD),
                 TMA_OK);
    uint32_t r[4];
    memcpy(r, dst, 16);
    cr_assert(r[0] == 1 && r[1] == 3 && r[2] == 4 && r[3] == 5, "u32 add: %u %u %u %u", r[0], r[1], r[2], r[3]);
    cr_assert_eq(tma_model_bulk_reduce_cluster(dst, sizeof dst, 0, src, sizeof src, 0, 16, TMA_DTYPE_U64, TMA_REDUCE_MIN),
                 TMA_ERR_REDUCE_TYPE, "u64 min has no cluster form");
    cr_assert_eq(tma_model_bulk_reduce_cluster(dst, sizeof dst, 0, src, sizeof src, 0, 16, TMA_DTYPE_F32, TMA_REDUCE_ADD),
                 TMA_ERR_REDUCE_TYPE, "no float has a cluster form");
    cr_assert_eq(tma_model_bulk_copy_cluster(dst, sizeof dst, 8, src, sizeof src, 0, 16), TMA_ERR_SMEM_ALIGN);
    cr_assert_eq(tma_model_bulk_copy_cluster(dst, sizeof dst, 1024, src, sizeof src, 0, 16), TMA_ERR_SMEM_BOUNDS);
    tma_diag d;
    cr_assert_eq(tma_check_bulk_cluster("copy", 0x400, 0x600, 64, 2, 2, &d), TMA_ERR_MULTICAST_MASK);
    cr_assert_str_eq(d.message, "1-D bulk copy to cluster rank 2 in a cluster of 2 blocks: no such block: use a rank 0..1");
    cr_assert_eq(tma_check_bulk_cluster("copy", 0x408, 0x600, 64, 1, 2, &d), TMA_ERR_SMEM_ALIGN);
    cr_assert_eq(tma_check_bulk_cluster("copy", 0x400, 0x600, 40, 1, 2, &d), TMA_ERR_BULK_SIZE);
}

/* The 1-D reduce uses the tiled model's arithmetic, element by element, for every pair it has. */
Test(bulk_model, reduce_equals_the_tiled_model) {
    srand(777);
    int pairs = 0;
    for (int t = 0; t < TMA_DTYPE_COUNT_; t++)
        for (int op = 0; op < TMA_REDUCE_COUNT_; op++) {
            if (!tma_rule_reduce_exists((tma_dtype)t, (tma_reduce)op, 0) ||
                !tma_rule_reduce_exists((tma_dtype)t, (tma_reduce)op, 1))
                continue;
            static _Alignas(1024) uint8_t smem[1024];
            _Alignas(16) uint8_t a[256], b[256];
            for (int i = 0; i < 256; i++)
                a[i] = b[i] = (uint8_t)rand();
            for (int i = 0; i < 1024; i++)
                smem[i] = (uint8_t)rand();
            const size_t es = tma_dtype_size((tma_dtype)t);
            cr_assert_eq(tma_model_bulk_reduce(a, smem, sizeof smem, 0, 256, (tma_dtype)t, (tma_reduce)op), TMA_OK);
            tma_tiled_desc d = {.dtype = (tma_dtype)t, .rank = 1, .global_address = b, .global_dim = {256 / es},
                                .box_dim = {(uint32_t)(256 / es)}};
            int32_t c[5] = {0};
            cr_assert_eq(tma_model_reduce_tiled(&d, c, smem, sizeof smem, 0, (tma_reduce)op), TMA_OK);
            cr_assert(memcmp(a, b, 256) == 0, "%s %s: 1-D and tiled models differ", tma_dtype_name((tma_dtype)t),
                      tma_rule_reduce_name((tma_reduce)op));
            pairs++;
        }
    cr_assert_eq(pairs, 30, "pairs both forms have: %d", pairs);
}
