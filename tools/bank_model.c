/* The 32-bank model: see bank_model.h for the rule. */
#include "bank_model.h"

uint32_t bank_of(uint32_t addr) { return (addr / BANK_BYTES) % BANK_COUNT; }

uint32_t bank_phase_threads(uint32_t access_bytes) {
    switch (access_bytes) {
    case 1: case 2: case 4: return 32u;
    case 8: return 16u;
    case 16: return 8u;
    default: return 0u;
    }
}

/* Wavefronts of one phase: the most distinct 4-byte words any one bank is asked for. */
static uint32_t phase_wavefronts(const bank_request *req, uint32_t first, uint32_t count) {
    /* At most 8 threads x 4 words or 32 threads x 1 word = 32 words per phase. */
    uint32_t words[32];
    uint32_t nwords = 0;
    for (uint32_t t = first; t < first + count; t++) {
        if (!(req->active_mask >> t & 1u))
            continue;
        uint32_t w0 = req->addr[t] / BANK_BYTES;
        uint32_t nw = req->access_bytes > BANK_BYTES ? req->access_bytes / BANK_BYTES : 1u;
        for (uint32_t k = 0; k < nw; k++) {
            uint32_t w = w0 + k, seen = 0;
            for (uint32_t j = 0; j < nwords && !seen; j++)
                seen = words[j] == w;
            if (!seen && nwords < 32u)
                words[nwords++] = w;
        }
    }
    uint32_t per_bank[BANK_COUNT] = {0}, most = 0;
    for (uint32_t j = 0; j < nwords; j++) {
        uint32_t b = words[j] % BANK_COUNT;
        if (++per_bank[b] > most)
            most = per_bank[b];
    }
    return most;
}

bank_cost bank_request_cost(const bank_request *req) {
    bank_cost c = {0, 0, 0, 0, 0};
    uint32_t per = bank_phase_threads(req->access_bytes);
    if (per == 0)
        return c;
    c.requests = 1;
    for (uint32_t first = 0; first < WARP_LANES; first += per) {
        uint32_t w = phase_wavefronts(req, first, per);
        if (w == 0)
            continue;
        c.wavefronts += w;
        c.ideal += 1;
        if (w > c.worst_ways)
            c.worst_ways = w;
    }
    c.conflicts = c.wavefronts - c.ideal;
    return c;
}

void bank_cost_add(bank_cost *a, bank_cost b) {
    a->requests += b.requests;
    a->wavefronts += b.wavefronts;
    a->ideal += b.ideal;
    a->conflicts += b.conflicts;
    if (b.worst_ways > a->worst_ways)
        a->worst_ways = b.worst_ways;
}
