/* Boundary checks that hold in release builds too (hardening finding 13):
 * instance creation with NULLs, allocation sizes that overflow, reserve with
 * a negative count, an arena alignment that is not a power of two. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "mlvm/instance.h"

static const int64_t q_dims[] = {2};
static const mlvm_queue_desc_t one_queue[] = {{"q", {"q", MLVM_F32, 1, q_dims}}};

void test_instance_init_null_arguments(void)
{
    mlvm_instance_t inst;
    mlvm_module_t m;
    mlvm_queue_t *slots[1];
    mlvm_queue_t *queues[1] = {NULL};
    const char *missing = NULL;
    memset(&m, 0, sizeof m);
    CHECK_EQ(mlvm_instance_init(&inst, NULL, NULL, NULL, 0, NULL, NULL, 0, &missing),
             MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_instance_init(NULL, &m, NULL, NULL, 0, NULL, NULL, 0, &missing),
             MLVM_ERR_INVALID);
    /* Bad magic. */
    CHECK_EQ(mlvm_instance_init(&inst, &m, NULL, NULL, 0, NULL, NULL, 0, &missing),
             MLVM_ERR_INVALID);
    m.magic = MLVM_MODULE_MAGIC;
    CHECK_EQ(mlvm_instance_init(&inst, &m, NULL, NULL, 0, NULL, NULL, 0, &missing), MLVM_OK);
    /* Natives promised but not given; a NULL queue among the given ones. */
    CHECK_EQ(mlvm_instance_init(&inst, &m, NULL, NULL, 3, NULL, NULL, 0, &missing),
             MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_instance_init(&inst, &m, NULL, NULL, 0, NULL, queues, 1, &missing),
             MLVM_ERR_INVALID);
    /* A module with a queue, but no slots to bind it into. */
    m.num_queues = 1;
    m.queues = one_queue;
    CHECK_EQ(mlvm_instance_init(&inst, &m, NULL, NULL, 0, NULL, NULL, 0, &missing),
             MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_instance_init(&inst, &m, NULL, NULL, 0, slots, NULL, 0, &missing),
             MLVM_ERR_IMPORT);
    CHECK(missing != NULL && strcmp(missing, "q") == 0);
    m.num_queues = -1;
    CHECK_EQ(mlvm_instance_init(&inst, &m, NULL, NULL, 0, slots, NULL, 0, &missing),
             MLVM_ERR_INVALID);
}

void test_release_size_checks(void)
{
    counting_t c;
    mlvm_vm_t *vm;
    const int64_t huge[] = {INT64_MAX / 2, 4};
    const int64_t wraps[] = {(int64_t)1 << 32, (int64_t)1 << 32, (int64_t)1 << 32};
    const int64_t negative[] = {3, -1};
    unsigned char mem[64];
    mlvm_arena_t a;
    counting_init(&c);
    vm = mlvm_vm_new(&c.a);
    REQUIRE(vm != NULL);
    CHECK(mlvm_shape_new(&c.a, 2, huge) == NULL);
    CHECK(mlvm_shape_new(&c.a, 3, wraps) == NULL);
    CHECK(mlvm_shape_new(&c.a, 2, negative) == NULL);
    CHECK(mlvm_shape_new(&c.a, MLVM_MAX_RANK + 1, huge) == NULL);
    CHECK(mlvm_shape_new(&c.a, 2, NULL) == NULL);
    CHECK(mlvm_vm_shape_new(vm, 3, wraps) == NULL);
    CHECK_EQ(mlvm_vm_reserve(vm, -1), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_vm_reserve(vm, INT32_MIN), MLVM_ERR_INVALID);
    CHECK_EQ(mlvm_vm_reserve(vm, 4), MLVM_OK);
    mlvm_arena_init(&a, mem, sizeof mem);
    CHECK(mlvm_arena_alloc(&a, 8, 3) == NULL);
    CHECK(mlvm_arena_alloc(&a, 8, 24) == NULL);
    CHECK(mlvm_arena_alloc(&a, 8, (size_t)1 << 40) == NULL);
    CHECK(mlvm_arena_alloc(&a, 8, 8) != NULL);
    CHECK(mlvm_arena_alloc(&a, SIZE_MAX, 1) == NULL);
    mlvm_vm_free(vm);
    CHECK_EQ(c.live_blocks, 0);
}
