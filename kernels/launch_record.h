/* Private to libtma_kernels: a kernel's launch record. Each kernel's host code (gemm.cu, grouped_gemm.cu, conv.cu,
 * permute.cu) defines what its run launches as a struct of its own, made by plan_make and the tune functions and kept
 * in the plan's opaque words (tma_launch_record, tma/kernels.h), beside a copy of the plan fields it was made from
 * (all uint64_t, so two copies compare byte for byte: no padding). run takes the record as it is where the fields
 * are the same, and derives it again (checking every field) where one was changed by hand. C++ (the .cu files), not
 * installed. */
#ifndef KERNELS_LAUNCH_RECORD_H
#define KERNELS_LAUNCH_RECORD_H

#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "tma/kernels.h"

/* Marks a record that plan_make or a tune function wrote (a zeroed or never-made plan has none): one per kernel. */
#define KD_RECORD_GEMM 0x6d6d6567u    /* "gemm" */
#define KD_RECORD_GROUPED 0x70756f72u /* "roup" */
#define KD_RECORD_CONV 0x766e6f63u    /* "conv" */
#define KD_RECORD_PERMUTE 0x6d726570u /* "perm" */

/* The record of type T in a plan's words; T's first member is its uint32_t mark. */
template <typename T>
static inline T kd_record_get(const tma_launch_record &r) {
    static_assert(std::is_trivially_copyable<T>::value, "a record is plain data");
    static_assert(sizeof(T) <= sizeof r.opaque && alignof(T) <= 16, "the record fits tma_launch_record");
    T t;
    memcpy(&t, r.opaque, sizeof t);
    return t;
}

template <typename T>
static inline void kd_record_put(tma_launch_record &r, const T &t) {
    static_assert(std::is_trivially_copyable<T>::value, "a record is plain data");
    static_assert(sizeof(T) <= sizeof r.opaque && alignof(T) <= 16, "the record fits tma_launch_record");
    memset(r.opaque, 0, sizeof r.opaque);
    memcpy(r.opaque, &t, sizeof t);
}

/* Whether two copies of a record's inputs (structs of uint64_t) are the same. */
template <typename T>
static inline bool kd_same_inputs(const T &a, const T &b) {
    static_assert(sizeof(T) % sizeof(uint64_t) == 0, "inputs are uint64_t fields: no padding to compare");
    return memcmp(&a, &b, sizeof(T)) == 0;
}

/* A record R of the usual form ({uint32_t mark; L launch; I from;}): its launch, where it was made (mark) from these
 * inputs; false where the plan has no record of this kernel or a field changed since. */
template <typename R, typename L, typename I>
static inline bool kd_record_launch(const tma_launch_record &rec, uint32_t mark, const I &inputs, L *launch) {
    const R r = kd_record_get<R>(rec);
    if (r.mark != mark || !kd_same_inputs(r.from, inputs))
        return false;
    *launch = r.launch;
    return true;
}

/* The record R of a launch made from these inputs, into the plan's words. */
template <typename R, typename L, typename I>
static inline void kd_record_make(tma_launch_record &rec, uint32_t mark, const L &launch, const I &inputs) {
    R r;
    memset(&r, 0, sizeof r);
    r.mark = mark;
    r.launch = launch;
    r.from = inputs;
    kd_record_put(rec, r);
}

#endif /* KERNELS_LAUNCH_RECORD_H */
