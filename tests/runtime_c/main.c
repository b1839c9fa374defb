/* Runs every test of TEST_LIST and prints one count line:
 *   runtime_c[<build>]: N tests, M checks, F failures */
#include <stdlib.h>
#include <string.h>

#include "check.h"

long check_count, check_failures;

typedef struct header {
    size_t nbytes;
    size_t pad_;
} header_t;

static void *counting_alloc(void *ud, size_t nbytes)
{
    counting_t *c = (counting_t *)ud;
    header_t *h;
    if (c->fail_after >= 0 && c->allocs >= c->fail_after)
        return NULL;
    h = (header_t *)malloc(sizeof *h + nbytes);
    if (h == NULL)
        return NULL;
    h->nbytes = nbytes;
    ++c->allocs;
    c->live_bytes += nbytes;
    ++c->live_blocks;
    return h + 1;
}

static void counting_free(void *ud, void *p, size_t nbytes)
{
    counting_t *c = (counting_t *)ud;
    header_t *h = (header_t *)p - 1;
    if (h->nbytes != nbytes)
        ++c->bad_frees;
    c->live_bytes -= h->nbytes;
    --c->live_blocks;
    free(h);
}

void counting_init(counting_t *c)
{
    memset(c, 0, sizeof *c);
    c->a.alloc = counting_alloc;
    c->a.free = counting_free;
    c->a.ud = c;
    c->fail_after = -1;
}

mlvm_handle_t new_f32(mlvm_vm_t *vm, int32_t rank, const int64_t *dims,
                      const float *values)
{
    mlvm_shape_t *s = mlvm_vm_shape_new(vm, rank, dims);
    mlvm_handle_t t = mlvm_tensor_new(vm, MLVM_F32, s);
    void *p = NULL;
    if (t >= 0 && mlvm_tensor_data(vm, t, &p) == MLVM_OK && p != NULL) {
        if (values != NULL)
            mlvm_tensor_write(vm, t, 0, values, s->size * sizeof(float));
        else
            memset(p, 0, s->size * sizeof(float));
    }
    return t;
}

mlvm_handle_t new_i32(mlvm_vm_t *vm, int32_t rank, const int64_t *dims,
                      const int32_t *values)
{
    mlvm_shape_t *s = mlvm_vm_shape_new(vm, rank, dims);
    mlvm_handle_t t = mlvm_tensor_new(vm, MLVM_I32, s);
    void *p = NULL;
    if (t >= 0 && mlvm_tensor_data(vm, t, &p) == MLVM_OK && p != NULL) {
        if (values != NULL)
            mlvm_tensor_write(vm, t, 0, values, s->size * sizeof(int32_t));
        else
            memset(p, 0, s->size * sizeof(int32_t));
    }
    return t;
}

const float *f32_of(mlvm_vm_t *vm, mlvm_handle_t t)
{
    void *p = NULL;
    mlvm_tensor_data(vm, t, &p);
    return (const float *)p;
}

const int32_t *i32_of(mlvm_vm_t *vm, mlvm_handle_t t)
{
    void *p = NULL;
    mlvm_tensor_data(vm, t, &p);
    return (const int32_t *)p;
}

int main(int argc, char **argv)
{
    long tests = 0, failed_tests = 0;
    const char *only = argc > 1 ? argv[1] : NULL;
#ifdef MLVM_CHECKS
    const char *build = "checks";
#else
    const char *build = "release";
#endif
#define TEST_RUN_(name)                                                        \
    if (only == NULL || strcmp(only, #name) == 0) {                            \
        const long before = check_failures;                                    \
        name();                                                                \
        ++tests;                                                               \
        if (check_failures != before) {                                        \
            ++failed_tests;                                                    \
            printf("FAIL %s\n", #name);                                        \
        }                                                                      \
    }
    TEST_LIST(TEST_RUN_)
#undef TEST_RUN_
    printf("runtime_c[%s]: %ld tests, %ld checks, %ld failures\n", build, tests,
           check_count, check_failures);
    return failed_tests == 0 && tests > 0 ? 0 : 1;
}
