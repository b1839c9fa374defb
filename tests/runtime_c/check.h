/* A small test runner: CHECK macros that count, a counting allocator, and
 * the list of tests (each defined in one test_*.c). */
#ifndef MLVM_TEST_CHECK_H_
#define MLVM_TEST_CHECK_H_

#include <math.h>
#include <stdio.h>

#include "mlvm/runtime.h"

extern long check_count, check_failures;

#define CHECK(cond)                                                            \
    do {                                                                       \
        ++check_count;                                                         \
        if (!(cond)) {                                                         \
            ++check_failures;                                                  \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

#define CHECK_EQ(got, want)                                                    \
    do {                                                                       \
        const long long g_ = (long long)(got), w_ = (long long)(want);         \
        ++check_count;                                                         \
        if (g_ != w_) {                                                        \
            ++check_failures;                                                  \
            fprintf(stderr, "%s:%d: %s == %lld, want %s == %lld\n", __FILE__,  \
                    __LINE__, #got, g_, #want, w_);                            \
        }                                                                      \
    } while (0)

#define CHECK_NEAR(got, want, tol)                                             \
    do {                                                                       \
        const double g_ = (double)(got), w_ = (double)(want);                  \
        ++check_count;                                                         \
        if (!(fabs(g_ - w_) <= (tol))) {                                       \
            ++check_failures;                                                  \
            fprintf(stderr, "%s:%d: %s == %.9g, want %.9g\n", __FILE__,        \
                    __LINE__, #got, g_, w_);                                   \
        }                                                                      \
    } while (0)

/* Stops the current test when a precondition fails. */
#define REQUIRE(cond)                                                          \
    do {                                                                       \
        CHECK(cond);                                                           \
        if (!(cond))                                                           \
            return;                                                            \
    } while (0)

/* An allocator over malloc that counts live bytes and blocks, verifies the
 * size given back at free, and can fail after a number of allocations. */
typedef struct counting {
    mlvm_allocator_t a;
    size_t live_bytes;
    long live_blocks;
    long allocs;
    long fail_after; /* < 0: never fail */
    long bad_frees;
} counting_t;

void counting_init(counting_t *c);

/* Every test, X(name): defined as `void name(void)` in a test_*.c file. */
#define TEST_LIST(X)                                                           \
    X(test_vm_new_free)                                                        \
    X(test_vm_consumed_is_live_bytes)                                          \
    X(test_vm_10000_tensors_and_shapes)                                        \
    X(test_vm_std_allocator_10000)                                             \
    X(test_vm_handles_reused)                                                  \
    X(test_vm_reserve)                                                         \
    X(test_vm_nomem)                                                           \
    X(test_shape_refcount)                                                     \
    X(test_shape_interned)                                                     \
    X(test_shape_shared_across_vms)                                            \
    X(test_shape_outlives_vm)                                                  \
    X(test_tensor_info_and_data)                                               \
    X(test_tensor_read_write_copy)                                             \
    X(test_tensor_swap)                                                        \
    X(test_pad_cut_no_allocation)                                              \
    X(test_pad_overlapping_cuts)                                               \
    X(test_pad_free)                                                           \
    X(test_arena_standalone)                                                   \
    X(test_arena_vm_owned)                                                     \
    X(test_arena_runs_module_layout)                                           \
    X(test_exec_fill)                                                          \
    X(test_exec_binary_broadcast)                                              \
    X(test_exec_binary_i32_and_compare)                                        \
    X(test_exec_inplace)                                                       \
    X(test_exec_unary)                                                         \
    X(test_exec_matmul)                                                        \
    X(test_exec_matmul_batched)                                                \
    X(test_exec_reduce)                                                        \
    X(test_exec_argmax)                                                        \
    X(test_exec_softmax_xent)                                                  \
    X(test_exec_cast_reshape_broadcast)                                        \
    X(test_exec_batch)                                                         \
    X(test_exec_op_table)                                                      \
    X(test_exec_on_pad_cuts)                                                   \
    X(test_exec_transpose)                                                     \
    X(test_exec_slice)                                                         \
    X(test_exec_concat)                                                        \
    X(test_exec_softmax)                                                       \
    X(test_exec_layer_norm)                                                    \
    X(test_exec_gelu)                                                          \
    X(test_exec_conv2d)                                                        \
    X(test_exec_pool2d)                                                        \
    X(test_queue_wraparound)                                                   \
    X(test_queue_init_limits)                                                  \
    X(test_instance_init_null_arguments)                                       \
    X(test_release_size_checks)                                                \
    TEST_LIST_CHECKED(X)

#ifdef MLVM_CHECKS
#define TEST_LIST_CHECKED(X)                                                   \
    X(test_checks_bad_handle)                                                  \
    X(test_checks_shape_mismatch)                                              \
    X(test_checks_pad_cut_out_of_bounds)                                       \
    X(test_checks_distinct_codes)                                              \
    X(test_checks_dtypes)                                                      \
    X(test_checks_read_write_bounds)                                           \
    X(test_checks_overlap)                                                     \
    X(test_checks_options)                                                     \
    X(test_checks_ownership)                                                   \
    X(test_checks_batch_reports_index)                                         \
    X(test_checks_nn_options)                                                  \
    X(test_checks_nn_shapes)
#else
#define TEST_LIST_CHECKED(X)
#endif

#define TEST_DECLARE_(name) void name(void);
TEST_LIST(TEST_DECLARE_)
#undef TEST_DECLARE_

/* Helpers shared by the tests. */
/* A tensor over a VM-owned shape holding `values` (zeros when NULL). */
mlvm_handle_t new_f32(mlvm_vm_t *vm, int32_t rank, const int64_t *dims,
                      const float *values);
mlvm_handle_t new_i32(mlvm_vm_t *vm, int32_t rank, const int64_t *dims,
                      const int32_t *values);
const float *f32_of(mlvm_vm_t *vm, mlvm_handle_t t);
const int32_t *i32_of(mlvm_vm_t *vm, mlvm_handle_t t);

#endif /* MLVM_TEST_CHECK_H_ */
