/* Status names, descriptions and the version: the host library's exported forms of the status table (types.h),
 * through the device-usable lookups of tma/detail/rules.h. */
#include "tma/detail/rules.h"
#include "tma/tma.h"

const char *tma_status_name(tma_status s) { return tma_rule_status_name(s); }

const char *tma_strerror(tma_status s) { return tma_rule_status_text(s); }

unsigned tma_version(void) { return TMA_VERSION_NUMBER; }

const char *tma_version_string(void) { return TMA_VERSION_STRING; }
