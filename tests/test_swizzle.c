/* Tests for include/tma/swizzle.h, the header-only swizzle helpers.
 *
 * The hardware rule (TMA-FACTS "Measured on the H200", rule 2; the comment at the top of swizzle.h):
 * the copy engine swizzles the shared-memory *address*. For 32B, 64B and 128B (B = 1, 2, 3 bits),
 * address bits [4, 4+B) are XORed with address bits [7, 7+B). Every test below checks the header
 * against that sentence, spelled out again here (rule_swizzle), not against the header itself.
 *
 * Vocabulary: a "chunk" is 16 bytes (address bits [4, ...)), a "line" is 128 bytes (bits [7, ...)),
 * a "bank group" is (address / 16) % 8: four of the 32 four-byte banks, so eight 16-byte reads that
 * hit eight distinct bank groups are served in one shared-memory wavefront.
 */

/* Item 7: the header must stand alone (it comes first, before any other include) and survive being
 * included twice in one translation unit. Its include guard is what makes the second one harmless:
 * without it, every static inline function would be redefined and this file would not compile. */
#include "tma/swizzle.h"
#include "tma/swizzle.h"

#ifndef TMA_SWIZZLE_H
#error "swizzle.h should define its include guard TMA_SWIZZLE_H"
#endif

#include <criterion/criterion.h>
#include <criterion/theories.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Exhaustive range per mode: 256 KiB, i.e. every byte address of Hopper's shared memory window
 * (228 KiB per SM) and four times the 64 KiB the brief asks for. */
#define ADDR_SPAN (256u * 1024u)

static const tma_swizzle k_hopper_modes[] = {TMA_SWIZZLE_NONE, TMA_SWIZZLE_32B, TMA_SWIZZLE_64B, TMA_SWIZZLE_128B};
#define N_HOPPER_MODES (sizeof k_hopper_modes / sizeof k_hopper_modes[0])

static const char *mode_name(tma_swizzle mode) {
    switch (mode) {
    case TMA_SWIZZLE_NONE: return "NONE";
    case TMA_SWIZZLE_32B: return "32B";
    case TMA_SWIZZLE_64B: return "64B";
    case TMA_SWIZZLE_128B: return "128B";
    case TMA_SWIZZLE_128B_ATOM_32B: return "128B_ATOM_32B";
    case TMA_SWIZZLE_128B_ATOM_32B_FLIP_8B: return "128B_ATOM_32B_FLIP_8B";
    case TMA_SWIZZLE_128B_ATOM_64B: return "128B_ATOM_64B";
    }
    return "out-of-range";
}

/* B for the Hopper modes, written down from the rule (not from tma_swizzle_bits). */
static uint32_t rule_bits(tma_swizzle mode) {
    switch (mode) {
    case TMA_SWIZZLE_32B: return 1u;
    case TMA_SWIZZLE_64B: return 2u;
    case TMA_SWIZZLE_128B: return 3u;
    default: return 0u;
    }
}

/* The hardware rule, one bit at a time: for k < B, address bit 4+k ^= address bit 7+k. */
static uint32_t rule_swizzle(uint32_t b, uint32_t addr) {
    uint32_t out = addr;
    for (uint32_t k = 0; k < b; k++) {
        if (addr & (1u << (7u + k))) out ^= 1u << (4u + k);
    }
    return out;
}

/* The chunk-index spelling, built from the header's tma_swizzle_chunk. */
static uint32_t chunk_form(tma_swizzle mode, uint32_t addr) {
    return tma_swizzle_chunk(tma_swizzle_span(mode), addr / 16u) * 16u + addr % 16u;
}

/* ---------------------------------------------------------------------------------------------
 * 1. The spellings agree
 * --------------------------------------------------------------------------------------------- */

static void check_agreement_at(tma_swizzle mode, uint32_t a) {
    uint32_t b = rule_bits(mode);
    uint32_t want = rule_swizzle(b, a);
    uint32_t got = tma_swizzle_addr(mode, a);
    cr_assert_eq(got, want, "%s: tma_swizzle_addr(%#x) = %#x, the rule gives %#x", mode_name(mode), a, got, want);
    uint32_t cute = tma_cute_swizzle(b, 4u, 3u, a);
    cr_assert_eq(cute, want, "%s: Swizzle<%u,4,3>(%#x) = %#x, the rule gives %#x", mode_name(mode), b, a, cute, want);
    uint32_t chunk = chunk_form(mode, a);
    cr_assert_eq(chunk, want, "%s: chunk form of %#x = %#x, the rule gives %#x", mode_name(mode), a, chunk, want);
}

Test(swizzle_agree, four_spellings_exhaustive_256k) {
    for (size_t m = 0; m < N_HOPPER_MODES; m++) {
        for (uint32_t a = 0; a < ADDR_SPAN; a++) check_agreement_at(k_hopper_modes[m], a);
    }
}

Test(swizzle_agree, four_spellings_top_of_32bit_range) {
    /* The rule only looks at bits [4, 10); nothing may overflow or misbehave near 2^32. */
    for (size_t m = 0; m < N_HOPPER_MODES; m++) {
        for (uint32_t a = 0xFFFF0000u; a != 0u; a++) check_agreement_at(k_hopper_modes[m], a);
    }
}

Test(swizzle_agree, cute_element_form_on_2byte_offsets) {
    /* On 2-byte element offsets e, the byte address is 2e: bit j of e is bit j+1 of the address, so
     * Swizzle<B,4,3> on bytes becomes Swizzle<B,3,3> on elements. */
    for (size_t m = 0; m < N_HOPPER_MODES; m++) {
        tma_swizzle mode = k_hopper_modes[m];
        uint32_t b = rule_bits(mode);
        for (uint32_t e = 0; e < ADDR_SPAN / 2u; e++) {
            uint32_t elem = tma_cute_swizzle(b, 3u, 3u, e) * 2u;
            uint32_t byte = tma_swizzle_addr(mode, 2u * e);
            cr_assert_eq(elem, byte, "%s: Swizzle<%u,3,3>(%u)*2 = %#x but tma_swizzle_addr(%#x) = %#x", mode_name(mode),
                         b, e, elem, 2u * e, byte);
        }
    }
}

Test(swizzle_agree, known_values) {
    /* A few addresses worked by hand from the rule, so a wrong rule_swizzle cannot hide a wrong header. */
    cr_assert_eq(tma_swizzle_addr(TMA_SWIZZLE_128B, 0x080u), 0x090u, "128B: line 1 chunk 0 -> chunk 1");
    cr_assert_eq(tma_swizzle_addr(TMA_SWIZZLE_128B, 0x385u), 0x3F5u, "128B: line 7 chunk 0 -> chunk 7, byte 5 kept");
    cr_assert_eq(tma_swizzle_addr(TMA_SWIZZLE_128B, 0x400u), 0x400u, "128B: line 8 is phase 0 again");
    cr_assert_eq(tma_swizzle_addr(TMA_SWIZZLE_64B, 0x180u), 0x1B0u, "64B: line 3 chunk 0 -> chunk 3");
    cr_assert_eq(tma_swizzle_addr(TMA_SWIZZLE_64B, 0x1C0u), 0x1F0u, "64B: line 3 chunk 4 -> chunk 7 (bit 6 kept)");
    cr_assert_eq(tma_swizzle_addr(TMA_SWIZZLE_32B, 0x0A0u), 0x0B0u, "32B: line 1 chunk 2 -> chunk 3");
    cr_assert_eq(tma_swizzle_addr(TMA_SWIZZLE_32B, 0x100u), 0x100u, "32B: line 2 is phase 0 again");
    cr_assert_eq(tma_swizzle_addr(TMA_SWIZZLE_NONE, 0x3F5u), 0x3F5u, "NONE is the identity");
}

Test(swizzle_agree, chunk_form_other_spans_are_identity) {
    static const uint32_t spans[] = {0u, 16u, 48u, 96u, 256u, 1024u, 0xFFFFFFFFu};
    for (size_t s = 0; s < sizeof spans / sizeof spans[0]; s++) {
        for (uint32_t i = 0; i < 4096u; i++) {
            cr_assert_eq(tma_swizzle_chunk(spans[s], i), i, "tma_swizzle_chunk(span %u, %u) should be the identity",
                         spans[s], i);
        }
    }
}

Test(swizzle_agree, cute_b0_is_identity) {
    for (uint32_t a = 0; a < 4096u; a++) {
        cr_assert_eq(tma_cute_swizzle(0u, 4u, 3u, a), a, "Swizzle<0,4,3>(%#x) should be the identity", a);
    }
}

/* ---------------------------------------------------------------------------------------------
 * 2. Structure: involution, bijection per period, chunks stay in their line and keep byte order
 * --------------------------------------------------------------------------------------------- */

Test(swizzle_structure, involution) {
    for (size_t m = 0; m < N_HOPPER_MODES; m++) {
        tma_swizzle mode = k_hopper_modes[m];
        for (uint32_t a = 0; a < ADDR_SPAN; a++) {
            uint32_t twice = tma_swizzle_addr(mode, tma_swizzle_addr(mode, a));
            cr_assert_eq(twice, a, "%s: swizzling %#x twice gives %#x", mode_name(mode), a, twice);
        }
    }
}

Test(swizzle_structure, bijection_inside_each_period) {
    static bool seen[1024];
    for (size_t m = 0; m < N_HOPPER_MODES; m++) {
        tma_swizzle mode = k_hopper_modes[m];
        uint32_t period = tma_swizzle_period(mode);
        cr_assert(period >= 16u && period <= sizeof seen, "%s: period %u out of the expected range", mode_name(mode),
                  period);
        for (uint32_t block = 0; block < ADDR_SPAN; block += period) {
            memset(seen, 0, sizeof seen);
            for (uint32_t a = block; a < block + period; a++) {
                uint32_t p = tma_swizzle_addr(mode, a);
                cr_assert(p >= block && p < block + period, "%s: %#x maps to %#x, outside its period block [%#x, %#x)",
                          mode_name(mode), a, p, block, block + period);
                cr_assert(!seen[p - block], "%s: %#x maps to %#x, already hit by another address of its block",
                          mode_name(mode), a, p);
                seen[p - block] = true;
            }
            /* period distinct images inside a block of period addresses: the image is the whole block. */
            for (uint32_t k = 0; k < period; k++) {
                cr_assert(seen[k], "%s: %#x is not hit by its period block", mode_name(mode), block + k);
            }
        }
    }
}

Test(swizzle_structure, chunk_stays_in_its_line_and_keeps_byte_order) {
    for (size_t m = 0; m < N_HOPPER_MODES; m++) {
        tma_swizzle mode = k_hopper_modes[m];
        for (uint32_t a = 0; a < ADDR_SPAN; a++) {
            uint32_t p = tma_swizzle_addr(mode, a);
            cr_assert_eq(p / 128u, a / 128u, "%s: %#x left its 128-byte line (-> %#x)", mode_name(mode), a, p);
            uint32_t chunk_start = tma_swizzle_addr(mode, a & ~15u);
            cr_assert_eq(chunk_start % 16u, 0u, "%s: chunk %#x starts at unaligned %#x", mode_name(mode), a & ~15u,
                         chunk_start);
            cr_assert_eq(p, chunk_start + a % 16u, "%s: byte %u of chunk %#x lands at %#x, chunk starts at %#x",
                         mode_name(mode), a % 16u, a & ~15u, p, chunk_start);
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * 3. Bank groups: the property the samples rely on
 * --------------------------------------------------------------------------------------------- */

/* Bit mask of the bank groups hit by 16-byte reads at chunk column col (byte col*16 of each row) of
 * nrows consecutive rows of pitch bytes, starting at base. */
static uint32_t bank_groups(tma_swizzle mode, uint32_t base, uint32_t pitch, uint32_t col, uint32_t nrows) {
    uint32_t mask = 0;
    for (uint32_t r = 0; r < nrows; r++) {
        uint32_t phys = tma_swizzle_addr(mode, base + r * pitch + col * 16u);
        mask |= 1u << ((phys / 16u) % 8u);
    }
    return mask;
}

static uint32_t popcount8(uint32_t mask) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < 8u; k++) n += (mask >> k) & 1u;
    return n;
}

TheoryDataPoints(swizzle_banks, column_of_eight_lines) = {
    DataPoints(uint32_t, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
               26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51,
               52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63),
    DataPoints(uint32_t, 0, 1, 2, 3, 4, 5, 6, 7),
};

/* Eight consecutive 128-byte lines L..L+7 (any L, so bases that are 128- but not 1024-aligned too),
 * one 16-byte read of logical chunk column c in each. The read in line l lands in bank group
 * c ^ (l % 2^B) on bits [0, B) of the group, bits [B, 3) of the group are c's own. */
Theory((uint32_t base_line, uint32_t col), swizzle_banks, column_of_eight_lines) {
    uint32_t base = base_line * 128u;

    /* 128B: group = c ^ (l % 8). Eight consecutive l cover every residue mod 8 once: 8 groups. */
    uint32_t m128 = bank_groups(TMA_SWIZZLE_128B, base, 128u, col, 8u);
    cr_assert_eq(popcount8(m128), 8u, "128B, lines %u..%u, column %u: %u distinct bank groups (mask %#x), want 8",
                 base_line, base_line + 7u, col, popcount8(m128), m128);

    /* NONE: group = c in every line: one group, an 8-way conflict. */
    uint32_t m0 = bank_groups(TMA_SWIZZLE_NONE, base, 128u, col, 8u);
    cr_assert_eq(m0, 1u << col, "NONE, lines %u..%u, column %u: groups %#x, want only group %u", base_line,
                 base_line + 7u, col, m0, col);

    /* 64B: only bits 4-5 are XORed (with l % 4); bit 6 is c's own. Eight consecutive lines give each
     * residue l % 4 twice, so the reads hit exactly 4 groups, twice each: a 2-way conflict. The groups
     * are (c & 4) | (c & 3) ^ {0..3}, i.e. the aligned half of 0..7 that holds c. */
    uint32_t m64 = bank_groups(TMA_SWIZZLE_64B, base, 128u, col, 8u);
    uint32_t half = (col & 4u) ? 0xF0u : 0x0Fu;
    cr_assert_eq(m64, half, "64B, lines %u..%u, column %u: groups %#x, want %#x (4 groups)", base_line, base_line + 7u,
                 col, m64, half);

    /* 32B: only bit 4 is XORed (with l % 2): 2 groups, c and c ^ 1, four reads each: a 4-way conflict. */
    uint32_t m32 = bank_groups(TMA_SWIZZLE_32B, base, 128u, col, 8u);
    uint32_t pair = (1u << col) | (1u << (col ^ 1u));
    cr_assert_eq(m32, pair, "32B, lines %u..%u, column %u: groups %#x, want %#x (2 groups)", base_line, base_line + 7u,
                 col, m32, pair);
}

Test(swizzle_banks, span_pitch_rows_are_conflict_free_in_every_mode) {
    /* The counts above are for 128-byte rows. A 32B/64B box is laid out with a row pitch of its span
     * (TMA-FACTS rule 1), and then eight consecutive rows are conflict-free too: in 64B mode, two rows
     * share a line and differ in address bit 6, and the four lines differ in l % 4 (bits 4-5); in 32B
     * mode, four rows share a line (bits 5-6) and the two lines differ in l % 2 (bit 4). */
    static const tma_swizzle modes[] = {TMA_SWIZZLE_32B, TMA_SWIZZLE_64B, TMA_SWIZZLE_128B};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        uint32_t span = tma_swizzle_span(modes[m]);
        for (uint32_t line = 0; line < 64u; line++) {
            for (uint32_t col = 0; col < span / 16u; col++) {
                uint32_t mask = bank_groups(modes[m], line * 128u, span, col, 8u);
                cr_assert_eq(popcount8(mask), 8u, "%s, pitch %u, base %#x, column %u: %u groups (mask %#x), want 8",
                             mode_name(modes[m]), span, line * 128u, col, popcount8(mask), mask);
            }
        }
    }
    /* ...whereas without a swizzle, a column of 32-byte rows hits only 4 groups (2-way conflict). */
    uint32_t none = bank_groups(TMA_SWIZZLE_NONE, 0u, 32u, 0u, 8u);
    cr_assert_eq(none, 0x55u, "NONE, pitch 32, column 0: groups %#x, want 0x55 (groups 0, 2, 4, 6)", none);
}

/* ---------------------------------------------------------------------------------------------
 * 4. The literature's formula is the hardware only for 128B
 * --------------------------------------------------------------------------------------------- */

/* The popular chunk formula: row = i / (span/16), col = (i % (span/16)) ^ row, with row reduced mod
 * span/16 so the result stays in its row. It takes its XOR source from the span-wide *row*; the
 * hardware takes it from the 128-byte *line* (address bits [7, ...)). For 128B row == line and the
 * two agree; for 32B and 64B a line holds 4 or 2 rows and they do not. */
static uint32_t literature_chunk(uint32_t span, uint32_t i) {
    uint32_t cols = span / 16u;
    uint32_t row = i / cols;
    return row * cols + ((i % cols) ^ (row % cols));
}

Test(swizzle_literature, matches_hardware_for_128b) {
    for (uint32_t i = 0; i < ADDR_SPAN / 16u; i++) {
        uint32_t lit = literature_chunk(128u, i);
        uint32_t hw = tma_swizzle_addr(TMA_SWIZZLE_128B, i * 16u) / 16u;
        cr_assert_eq(lit, hw, "128B chunk %u: literature %u, hardware %u", i, lit, hw);
    }
}

Test(swizzle_literature, differs_for_64b) {
    /* Chunk 4 = byte 64: the second 64-byte row, but still line 0. Literature: row 1, column 0 ^ 1 = 1,
     * i.e. chunk 5. Hardware: line 0 XORs with 0, the chunk stays at 4. */
    cr_assert_eq(literature_chunk(64u, 4u), 5u, "literature, 64B, chunk 4: row 1 -> column 0^1 -> chunk 5");
    cr_assert_eq(tma_swizzle_chunk(64u, 4u), 4u, "hardware, 64B, chunk 4: line 0 -> unchanged");
    cr_assert_eq(tma_swizzle_addr(TMA_SWIZZLE_64B, 64u), 64u, "hardware, 64B: byte address 64 is not moved");

    /* How often: chunk bits b4 b3 b2 ... The hardware XORs the column with (b4 b3) = line % 4, the
     * literature with (b3 b2) = row % 4. They agree iff b4 == b3 == b2: 2 of the 8 patterns, so 1/4 of
     * all chunks agree and 3/4 differ. */
    uint32_t n = ADDR_SPAN / 16u, differ = 0;
    for (uint32_t i = 0; i < n; i++) differ += literature_chunk(64u, i) != tma_swizzle_addr(TMA_SWIZZLE_64B, i * 16u) / 16u;
    cr_assert_eq(differ, n / 4u * 3u, "64B: literature differs from hardware on %u of %u chunks, want 3/4", differ, n);
}

Test(swizzle_literature, differs_for_32b) {
    /* Chunk 2 = byte 32: the second 32-byte row of line 0. Literature: row 1, column 0 ^ 1 -> chunk 3.
     * Hardware: line 0, unchanged. And the other way round, chunk 8 = line 1, row 4: the hardware
     * XORs (-> chunk 9), the literature (row 4 % 2 = 0) does not. */
    cr_assert_eq(literature_chunk(32u, 2u), 3u, "literature, 32B, chunk 2 -> 3");
    cr_assert_eq(tma_swizzle_chunk(32u, 2u), 2u, "hardware, 32B, chunk 2 (line 0) unchanged");
    cr_assert_eq(literature_chunk(32u, 8u), 8u, "literature, 32B, chunk 8 (row 4, even) unchanged");
    cr_assert_eq(tma_swizzle_chunk(32u, 8u), 9u, "hardware, 32B, chunk 8 (line 1) -> 9");

    /* Hardware XOR source: chunk bit b3 (line % 2); literature: b1 (row % 2). Equal on half the chunks. */
    uint32_t n = ADDR_SPAN / 16u, differ = 0;
    for (uint32_t i = 0; i < n; i++) differ += literature_chunk(32u, i) != tma_swizzle_addr(TMA_SWIZZLE_32B, i * 16u) / 16u;
    cr_assert_eq(differ, n / 2u, "32B: literature differs from hardware on %u of %u chunks, want 1/2", differ, n);
}

/* ---------------------------------------------------------------------------------------------
 * 5. tma_swizzle_elem and the mid-phase trap
 * --------------------------------------------------------------------------------------------- */

Test(swizzle_elem, f32_box_at_base_384_uses_the_absolute_address) {
    const tma_swizzle mode = TMA_SWIZZLE_128B;
    const uint32_t base = 384u, pitch = 128u, esize = 4u; /* 128-aligned, not 1024-aligned: phase 3 */
    for (uint32_t row = 0; row < 32u; row++) {
        for (uint32_t col = 0; col < 32u; col++) {
            uint32_t logical = base + row * pitch + col * esize;
            uint32_t got = tma_swizzle_elem(mode, base, pitch, esize, row, col);
            uint32_t want = rule_swizzle(3u, logical);
            cr_assert_eq(got, want, "elem(%u, %u) at base %u: %#x, the rule on address %#x gives %#x", row, col, base,
                         got, logical, want);
            cr_assert_eq(got, tma_swizzle_addr(mode, logical), "elem(%u, %u) should be tma_swizzle_addr(%#x)", row,
                         col, logical);
            /* The trap: swizzling the tile-relative offset then adding the base. Line base/128 + row
             * and line row differ by 3 mod 8, so the XOR is always different: every element moves. */
            uint32_t naive = base + tma_swizzle_addr(mode, row * pitch + col * esize);
            cr_assert_neq(got, naive, "elem(%u, %u) at base %u: tile-relative swizzle should be wrong here (%#x)", row,
                          col, base, naive);
        }
    }
    /* Concretely. Element (0, 0) sits at address 384 = line 3: its chunk goes to column 0 ^ 3 = 3. */
    cr_assert_eq(tma_swizzle_elem(mode, base, pitch, esize, 0u, 0u), 432u, "elem(0,0) at base 384 is at 384 + 3*16");
    cr_assert_eq(base + tma_swizzle_addr(mode, 0u), 384u, "the tile-relative formula says 384");
    /* Element (5, 0): address 1024 is line 8, phase 0, unmoved; the tile-relative formula sees row 5. */
    cr_assert_eq(tma_swizzle_elem(mode, base, pitch, esize, 5u, 0u), 1024u, "elem(5,0) at base 384 is at 1024");
    cr_assert_eq(base + tma_swizzle_addr(mode, 5u * pitch), 1104u, "the tile-relative formula says 384 + 640 + 80");
}

Test(swizzle_elem, reading_back_a_simulated_load) {
    /* Simulate what the copy engine does for a 16x32 f32 box at base 384 (rule 2: value of element
     * (r, c) stored at the swizzled absolute address), then read it back both ways. */
    static uint32_t smem[4096 / 4];
    const uint32_t base = 384u, pitch = 128u, esize = 4u, rows = 16u, cols = 32u;
    memset(smem, 0xFF, sizeof smem);
    for (uint32_t r = 0; r < rows; r++) {
        for (uint32_t c = 0; c < cols; c++) smem[rule_swizzle(3u, base + r * pitch + c * esize) / 4u] = r * cols + c;
    }
    uint32_t wrong = 0;
    for (uint32_t r = 0; r < rows; r++) {
        for (uint32_t c = 0; c < cols; c++) {
            uint32_t v = smem[tma_swizzle_elem(TMA_SWIZZLE_128B, base, pitch, esize, r, c) / 4u];
            cr_assert_eq(v, r * cols + c, "elem(%u, %u) read back %u", r, c, v);
            wrong += smem[(base + tma_swizzle_addr(TMA_SWIZZLE_128B, r * pitch + c * esize)) / 4u] != r * cols + c;
        }
    }
    cr_assert_eq(wrong, rows * cols, "the tile-relative read should get every element wrong, got %u of %u wrong",
                 wrong, rows * cols);
}

Test(swizzle_elem, tile_relative_is_right_only_at_multiples_of_the_period) {
    /* For each mode and each legal (128-aligned) tile base in 0..4 KiB, with span-pitch rows of f32:
     * the tile-relative formula equals the hardware for every element when base % period == 0, and
     * for none of them otherwise (the line phases differ by base/128 mod 2^B != 0 in every row). */
    static const tma_swizzle modes[] = {TMA_SWIZZLE_32B, TMA_SWIZZLE_64B, TMA_SWIZZLE_128B};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        tma_swizzle mode = modes[m];
        uint32_t span = tma_swizzle_span(mode), period = tma_swizzle_period(mode);
        uint32_t rows = 32u, cols = span / 4u;
        for (uint32_t base = 0; base < 4096u; base += 128u) {
            uint32_t same = 0;
            for (uint32_t r = 0; r < rows; r++) {
                for (uint32_t c = 0; c < cols; c++) {
                    uint32_t hw = tma_swizzle_elem(mode, base, span, 4u, r, c);
                    same += hw == base + tma_swizzle_addr(mode, r * span + c * 4u);
                }
            }
            uint32_t want = (base % period == 0u) ? rows * cols : 0u;
            cr_assert_eq(same, want, "%s, base %u (period %u): tile-relative right for %u of %u elements, want %u",
                         mode_name(mode), base, period, same, rows * cols, want);
        }
    }
}

Test(swizzle_elem, none_is_plain_row_major) {
    for (uint32_t r = 0; r < 8u; r++) {
        for (uint32_t c = 0; c < 6u; c++) {
            uint32_t got = tma_swizzle_elem(TMA_SWIZZLE_NONE, 400u, 48u, 8u, r, c);
            cr_assert_eq(got, 400u + r * 48u + c * 8u, "NONE elem(%u, %u) = %u", r, c, got);
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * 6. bits / span / period for every enum value and beyond
 * --------------------------------------------------------------------------------------------- */

Test(swizzle_params, every_enum_value_and_out_of_range) {
    static const struct {
        uint32_t mode, bits, span, period;
    } table[] = {
        {TMA_SWIZZLE_NONE, 0, 0, 16},
        {TMA_SWIZZLE_32B, 1, 32, 256},
        {TMA_SWIZZLE_64B, 2, 64, 512},
        {TMA_SWIZZLE_128B, 3, 128, 1024},
        /* sm_100 modes: not a Hopper swizzle, so no bits (tma_check_tiled rejects them on sm_90). */
        {TMA_SWIZZLE_128B_ATOM_32B, 0, 0, 16},
        {TMA_SWIZZLE_128B_ATOM_32B_FLIP_8B, 0, 0, 16},
        {TMA_SWIZZLE_128B_ATOM_64B, 0, 0, 16},
        /* Not enum values at all. */
        {7, 0, 0, 16},
        {8, 0, 0, 16},
        {255, 0, 0, 16},
        {0x7FFFFFFF, 0, 0, 16},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++) {
        tma_swizzle mode = (tma_swizzle)table[k].mode;
        cr_assert_eq(tma_swizzle_bits(mode), table[k].bits, "bits(%s = %u) = %u, want %u", mode_name(mode),
                     table[k].mode, tma_swizzle_bits(mode), table[k].bits);
        cr_assert_eq(tma_swizzle_span(mode), table[k].span, "span(%s = %u) = %u, want %u", mode_name(mode),
                     table[k].mode, tma_swizzle_span(mode), table[k].span);
        cr_assert_eq(tma_swizzle_period(mode), table[k].period, "period(%s = %u) = %u, want %u", mode_name(mode),
                     table[k].mode, tma_swizzle_period(mode), table[k].period);
        if (table[k].bits == 0u) {
            /* No bits, no swizzle: addr and chunk forms are the identity for these values. */
            for (uint32_t a = 0; a < 4096u; a++) {
                cr_assert_eq(tma_swizzle_addr(mode, a), a, "addr(%s = %u, %#x) should be the identity",
                             mode_name(mode), table[k].mode, a);
                cr_assert_eq(chunk_form(mode, a), a, "chunk form (%s = %u, %#x) should be the identity",
                             mode_name(mode), table[k].mode, a);
            }
        }
    }
}

/* ---------------------------------------------------------------------------------------------
 * 6b. The named geometry: the constants kernels size shared memory with, and the phase helpers
 * --------------------------------------------------------------------------------------------- */

/* Constants, for array sizes and static_assert: each must be a constant expression. */
static char chunk_sized[TMA_SWIZZLE_CHUNK_BYTES], period_sized[TMA_SWIZZLE_PERIOD_128B];
_Static_assert(TMA_SWIZZLE_PERIOD_128B == 8u * TMA_SWIZZLE_LINE_BYTES, "the 128B pattern is 8 lines");
_Static_assert(TMA_SWIZZLE_SPAN_128B == TMA_SWIZZLE_LINE_BYTES, "a 128B box row is one line");

Test(swizzle_geometry, constants_are_the_functions_values) {
    cr_assert_eq(sizeof chunk_sized + sizeof period_sized, 16u + 1024u, "usable as array sizes");
    cr_assert_eq(tma_swizzle_span(TMA_SWIZZLE_128B), TMA_SWIZZLE_SPAN_128B, "span of 128B");
    cr_assert_eq(tma_swizzle_period(TMA_SWIZZLE_128B), TMA_SWIZZLE_PERIOD_128B, "period of 128B");
    for (uint32_t m = TMA_SWIZZLE_32B; m <= TMA_SWIZZLE_128B; m++) {
        const tma_swizzle mode = (tma_swizzle)m;
        cr_assert_eq(TMA_SWIZZLE_PERIOD_128B % tma_swizzle_period(mode), 0u, "%s: 1024 is phase 0 of every mode",
                     mode_name(mode));
        cr_assert_eq(tma_swizzle_span(mode) % TMA_SWIZZLE_CHUNK_BYTES, 0u, "%s: a span is whole chunks",
                     mode_name(mode));
        /* The rule itself: a chunk moves inside its line, by the line's index. */
        for (uint32_t a = 0; a < 2u * TMA_SWIZZLE_PERIOD_128B; a++) {
            const uint32_t p = tma_swizzle_addr(mode, a);
            cr_assert_eq(p / TMA_SWIZZLE_LINE_BYTES, a / TMA_SWIZZLE_LINE_BYTES, "%s: %#x leaves its line",
                         mode_name(mode), a);
            cr_assert_eq(p % TMA_SWIZZLE_CHUNK_BYTES, a % TMA_SWIZZLE_CHUNK_BYTES, "%s: %#x moves inside a chunk",
                         mode_name(mode), a);
        }
    }
}

Test(swizzle_geometry, phase_and_the_pad_to_phase_zero) {
    for (uint32_t m = TMA_SWIZZLE_NONE; m <= TMA_SWIZZLE_128B; m++) {
        const tma_swizzle mode = (tma_swizzle)m;
        const uint32_t period = tma_swizzle_period(mode);
        for (uint32_t a = 0; a < 3u * TMA_SWIZZLE_PERIOD_128B; a += 16u) {
            const uint32_t phase = tma_swizzle_phase(mode, a), pad = tma_swizzle_phase0_pad(mode, a);
            cr_assert_lt(phase, period, "%s: phase of %#x", mode_name(mode), a);
            cr_assert_eq(tma_swizzle_phase(mode, a + pad), 0u, "%s: %#x + %u is not at phase 0", mode_name(mode), a,
                         pad);
            cr_assert_lt(pad, period, "%s: the pad of %#x is less than a period", mode_name(mode), a);
            cr_assert_leq(pad, period - 16u, "%s: 16-byte aligned memory skips at most period - 16", mode_name(mode));
            /* phase 0 means the box is swizzled as from its own offsets: the pattern of address a + x is the
             * pattern of x */
            if (phase == 0u)
                for (uint32_t x = 0; x < period; x += 16u)
                    cr_assert_eq(tma_swizzle_addr(mode, a + x) - a, tma_swizzle_addr(mode, x), "%s: at %#x",
                                 mode_name(mode), a);
        }
        cr_assert_eq(tma_swizzle_round_up(mode, 0), 0u, "%s: nothing", mode_name(mode));
        cr_assert_eq(tma_swizzle_round_up(mode, 1), period, "%s: one byte takes a period", mode_name(mode));
        cr_assert_eq(tma_swizzle_round_up(mode, period), period, "%s: a period is one", mode_name(mode));
        cr_assert_eq(tma_swizzle_round_up(mode, 5u * period + 1u), 6u * period, "%s: five and a byte",
                     mode_name(mode));
    }
    /* the kernels' alignment of dynamic shared memory, as they wrote it before it had a name */
    for (uint32_t a = 0; a < 4096u; a += 16u)
        cr_assert_eq(tma_swizzle_phase0_pad(TMA_SWIZZLE_128B, a), (1024u - a % 1024u) % 1024u, "%#x", a);
}

/* ---------------------------------------------------------------------------------------------
 * 7. The header in plain C with run-time values
 * --------------------------------------------------------------------------------------------- */

Test(swizzle_header, usable_with_runtime_values_and_as_function_pointers) {
    /* Nothing in the header needs a constant expression: arguments that the compiler cannot see
     * through (volatile) and calls through function pointers give the same answers. */
    volatile uint32_t vmode = TMA_SWIZZLE_128B, vaddr = 0x385u, vspan = 128u;
    uint32_t (*addr_fn)(tma_swizzle, uint32_t) = tma_swizzle_addr;
    uint32_t (*chunk_fn)(uint32_t, uint32_t) = tma_swizzle_chunk;
    uint32_t (*cute_fn)(uint32_t, uint32_t, uint32_t, uint32_t) = tma_cute_swizzle;
    cr_assert_eq(addr_fn((tma_swizzle)vmode, vaddr), 0x3F5u, "tma_swizzle_addr through a pointer, volatile inputs");
    cr_assert_eq(chunk_fn(vspan, vaddr / 16u), 0x3Fu, "tma_swizzle_chunk through a pointer, volatile inputs");
    cr_assert_eq(cute_fn(3u, 4u, 3u, vaddr), 0x3F5u, "tma_cute_swizzle through a pointer, volatile inputs");
    cr_assert_eq(tma_swizzle_period((tma_swizzle)vmode), 1024u, "period with a run-time mode");
}
