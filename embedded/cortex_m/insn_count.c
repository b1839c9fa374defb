/* A qemu TCG plugin of the harness: counts the guest instructions a run
 * executes, exactly (every translated block adds its instruction count each
 * time it runs), and prints "mlvm-insns N" on stderr at exit. Deterministic:
 * the same firmware gives the same count on every host. With the argument
 * "profile=on" it also prints "mlvm-tb ADDR INSNS" per translated block
 * (instructions executed in blocks starting at ADDR), which harness.py
 * attributes to functions. Built by harness.py with the host's C compiler;
 * qemu 7's plugin API, version 1. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t plugin_id_t;
struct qemu_plugin_tb;
typedef void (*tb_trans_cb_t)(plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(plugin_id_t id, void *userdata);

/* The parts of qemu's plugin API this plugin uses (API version 1). */
void qemu_plugin_register_vcpu_tb_trans_cb(plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(plugin_id_t id, udata_cb_t cb, void *userdata);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t executed;

/* profile: one record per translation (a block translated again gets
 * another; the harness adds them up by address) */
typedef struct block {
    uint64_t addr, insns, runs;
    struct block *next;
} block_t;
static int profiling;
static block_t *blocks;

static void on_translate(plugin_id_t id, struct qemu_plugin_tb *tb)
{
    const size_t n = qemu_plugin_tb_n_insns(tb);
    (void)id;
    /* 0: QEMU_PLUGIN_INLINE_ADD_U64, run each time the block executes. */
    qemu_plugin_register_vcpu_tb_exec_inline(tb, 0, &executed, n);
    if (profiling) {
        block_t *b = calloc(1, sizeof *b);
        if (b == NULL)
            return;
        b->addr = qemu_plugin_tb_vaddr(tb);
        b->insns = n;
        b->next = blocks;
        blocks = b;
        qemu_plugin_register_vcpu_tb_exec_inline(tb, 0, &b->runs, 1);
    }
}

static void report(plugin_id_t id, void *userdata)
{
    const block_t *b;
    (void)id;
    (void)userdata;
    for (b = blocks; b != NULL; b = b->next)
        if (b->runs)
            fprintf(stderr, "mlvm-tb %" PRIx64 " %" PRIu64 "\n", b->addr, b->runs * b->insns);
    fprintf(stderr, "mlvm-insns %" PRIu64 "\n", executed);
}

__attribute__((visibility("default"))) int qemu_plugin_install(plugin_id_t id, const void *info, int argc, char **argv)
{
    int i;
    (void)info;
    for (i = 0; i < argc; ++i)
        profiling = profiling || strcmp(argv[i], "profile=on") == 0;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, report, NULL);
    return 0;
}
