/* libtma internals: the tile planner's helpers - NOT API (tma/detail/rules.h says what that means).
 *
 * How a refusal is recorded: a violation of one of the TILE_ rows of TMA_RULE_TABLE (TMA_TILE_REFUSE_), and, when
 * the planner refuses because a descriptor breaks a rule, that rule as the refusal's cause (tma_tile_refuse_cause_).
 * Included by tma/tile_plan.h, after the types it fills. */
#include "tma/tile_plan.h"

#ifndef TMA_DETAIL_TILE_PLAN_H
#define TMA_DETAIL_TILE_PLAN_H

#include <stdint.h>

#include "tma/detail/rules.h"
#include "tma/hd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* No refusal: every value zero, no cause (what a refusal holds before the planner fills it). */
TMA_HD void tma_tile_refusal_clear_(tma_tile_refusal *w) {
    w->why.rule = (uint32_t)TMA_RULE_COUNT_;
    w->cause.rule = (uint32_t)TMA_RULE_COUNT_;
    for (int i = 0; i < TMA_RULE_MAX_ARGS; i++) {
        w->why.arg[i] = tma_arg_u(0);
        w->cause.arg[i] = tma_arg_u(0);
    }
    w->has_cause = 0u;
}

TMA_HD void tma_tile_refuse_(tma_tile_refusal *w, tma_rule rule, const tma_rule_arg *args) {
    w->why.rule = (uint32_t)rule;
    for (int i = 0; i < TMA_RULE_MAX_ARGS; i++)
        w->why.arg[i] = args[i];
    w->has_cause = 0u;
}

/* Refuse with the row TILE_<ID> of TMA_RULE_TABLE and the message values that follow. */
#define TMA_TILE_REFUSE_(W, ID, ...)                                                                             \
    do {                                                                                                         \
        const tma_rule_arg tma_targs_[TMA_RULE_MAX_ARGS] = {__VA_ARGS__};                                        \
        tma_tile_refuse_((W), TMA_RULE_TILE_##ID, tma_targs_);                                                   \
    } while (0)

/* Refuse with row `rule` (TILE_DESC, TILE_BOX_DESC: args says which descriptor) because d breaks a rule: the first
 * one it breaks becomes the cause. @return whether d breaks one (0: nothing was recorded) */
TMA_HD int tma_tile_refuse_cause_(tma_tile_refusal *w, tma_rule rule, const tma_rule_arg *args,
                                  const tma_tiled_desc *d) {
    tma_rule_sink s = tma_rule_sink_make(&w->cause, 1);
    if (tma_rules_tiled(d, &s) == TMA_OK)
        return 0;
    tma_tile_refuse_(w, rule, args);
    w->has_cause = 1u;
    return 1;
}

/* Whether sub-boxes [first, first + n) are a range of plan p: n >= 1, inside the plan (the TILE_RANGE rule). */
TMA_HD int tma_tile_range_valid_(const tma_tile_plan *p, uint32_t first, uint32_t n) {
    return n >= 1u && first <= p->count && n <= p->count - first;
}

/* The largest divisor of n that is at most lim and, when unit > 1, a multiple of unit (0 if none). At most
 * TMA_MAX_BOX_DIM trials: lim never exceeds it. */
TMA_HD uint32_t tma_tile_divisor_(uint32_t n, uint32_t lim, uint32_t unit) {
    for (uint32_t d = lim < n ? lim : n; d >= 1u; d--)
        if (n % d == 0u && d % unit == 0u)
            return d;
    return 0u;
}

#ifdef __cplusplus
}
#endif

#endif /* TMA_DETAIL_TILE_PLAN_H */
