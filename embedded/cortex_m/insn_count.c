/* A qemu TCG plugin of the harness: counts the guest instructions a run
 * executes, exactly (every translated block adds its instruction count each
 * time it runs), and prints "mlvm-insns N" on stderr at exit. Deterministic:
 * the same firmware gives the same count on every host. Built by
 * harness.py with the host's C compiler; qemu 7's plugin API, version 1. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t plugin_id_t;
struct qemu_plugin_tb;
typedef void (*tb_trans_cb_t)(plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*udata_cb_t)(plugin_id_t id, void *userdata);

/* The parts of qemu's plugin API this plugin uses (API version 1). */
void qemu_plugin_register_vcpu_tb_trans_cb(plugin_id_t id, tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, int op, void *ptr, uint64_t imm);
void qemu_plugin_register_atexit_cb(plugin_id_t id, udata_cb_t cb, void *userdata);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

static uint64_t executed;

static void on_translate(plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    /* 0: QEMU_PLUGIN_INLINE_ADD_U64, run each time the block executes. */
    qemu_plugin_register_vcpu_tb_exec_inline(tb, 0, &executed, qemu_plugin_tb_n_insns(tb));
}

static void on_exit(plugin_id_t id, void *userdata)
{
    (void)id;
    (void)userdata;
    fprintf(stderr, "mlvm-insns %" PRIu64 "\n", executed);
}

__attribute__((visibility("default"))) int qemu_plugin_install(plugin_id_t id, const void *info, int argc, char **argv)
{
    (void)info;
    (void)argc;
    (void)argv;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, on_exit, NULL);
    return 0;
}
