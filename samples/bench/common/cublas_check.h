/* CB(call): a failing cuBLAS call prints file:line, the call and its status, then exits. For the samples. */
#ifndef SAMPLES_COMMON_CUBLAS_CHECK_H
#define SAMPLES_COMMON_CUBLAS_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <cublas_v2.h>

#define CB(call)                                                                                    \
    do {                                                                                            \
        cublasStatus_t s_ = (call);                                                                 \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                          \
            fprintf(stderr, "%s:%d: %s: cuBLAS status %d\n", __FILE__, __LINE__, #call, (int)s_);   \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

#endif /* SAMPLES_COMMON_CUBLAS_CHECK_H */
