/* Status names and descriptions, generated from TMA_STATUS_MAP in tma.h. */
#include "tma/tma.h"

const char *tma_status_name(tma_status s) {
    switch (s) {
#define TMA_STATUS_NAME_(name, value, text)                                                         \
    case TMA_##name:                                                                                \
        return "TMA_" #name;
        TMA_STATUS_MAP(TMA_STATUS_NAME_)
#undef TMA_STATUS_NAME_
    }
    return "TMA_UNKNOWN_STATUS";
}

const char *tma_strerror(tma_status s) {
    switch (s) {
#define TMA_STATUS_TEXT_(name, value, text)                                                         \
    case TMA_##name:                                                                                \
        return text;
        TMA_STATUS_MAP(TMA_STATUS_TEXT_)
#undef TMA_STATUS_TEXT_
    }
    return "unknown status";
}
