/* What the command-line tools share: usage errors (exit status 2), number and list parsing, the names
 * of types and modes on the command line, and JSON string output. */
#ifndef TMA_TOOLS_CLI_H
#define TMA_TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "tma/tma.h"

/** The program name in usage errors ("tma-explain"); set once at the start of main. */
extern const char *cli_program;

/** Print "PROGRAM: message (see PROGRAM --help)" on stderr and exit with status 2. */
#if defined(__GNUC__)
__attribute__((format(printf, 1, 2), noreturn))
#endif
void cli_bad_usage(const char *fmt, ...);

/** An unsigned decimal or 0x-hex number, no sign, nothing after it. */
bool cli_parse_u64(const char *s, uint64_t *out);
/** cli_parse_u64 that must also fit in 32 bits. */
bool cli_parse_u32(const char *s, uint32_t *out);
/** A comma-separated list of 1..cap unsigned numbers; returns how many. Bad usage (exit 2) otherwise,
 *  naming the option `opt`. */
uint32_t cli_parse_list(const char *opt, const char *s, uint64_t *out, uint32_t cap);
/** An element type by its tma_dtype_name ("bf16", "f32", ...), case-insensitive. */
bool cli_parse_dtype(const char *s, tma_dtype *out);
/** The value of --dtype: a type name, or bad usage (exit 2) listing the names. */
tma_dtype cli_dtype_arg(const char *v);
/** Index of s in names[0..n) (case-insensitive; an optional prefix such as "TMA_SWIZZLE_" is accepted),
 *  or -1. */
int cli_parse_name(const char *s, const char *prefix, const char *const *names, int n);

/** Swizzle modes as the tools spell them, indexed by tma_swizzle. */
extern const char *const cli_swizzle_names[7];

/** s as a JSON string literal on stdout, quotes included. */
void cli_json_string(const char *s);

#endif /* TMA_TOOLS_CLI_H */
