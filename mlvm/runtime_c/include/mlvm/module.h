/* The module descriptor: what a generated module exports, readable by a
 * loader with no side file. Generated code defines one `<name>_module`. */
#ifndef MLVM_MODULE_H_
#define MLVM_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/status.h"

#define MLVM_MODULE_MAGIC 0x4D4C564Du /* "MLVM" */
#define MLVM_ABI_VERSION 3u
#define MLVM_ARENA_ALIGN 64u          /* arenas must be aligned to this */

/* Alignment of statically allocated arenas. */
#if defined(__GNUC__) || defined(__clang__)
#define MLVM_ALIGNED(n) __attribute__((aligned(n)))
#else
#define MLVM_ALIGNED(n)
#endif

/* Alignment of a generated module's larger weight arrays in the C: a
 * cache line where cores have data caches (a kernel's vector loads of a
 * row then never straddle two lines: 32-byte aligned arrays cost
 * ResNet-50's 1x1 convolutions on 7x7 about a fifth more time); none
 * beyond the natural one on M-profile cores, which have no data cache and
 * count flash in bytes. */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define MLVM_WEIGHT_ALIGNED
#else
#define MLVM_WEIGHT_ALIGNED MLVM_ALIGNED(64)
#endif

/* Element types (mlvm/dialect/elements.py is the table these codes come
 * from). I1 is one byte holding 0 or 1; F16 and BF16 hold the bits. */
typedef enum mlvm_dtype {
    MLVM_F32 = 1,
    MLVM_I32 = 2,
    MLVM_I1 = 3,
    MLVM_I8 = 4,
    MLVM_I16 = 5,
    MLVM_I64 = 6,
    MLVM_UI8 = 7,
    MLVM_UI16 = 8,
    MLVM_UI32 = 9,
    MLVM_UI64 = 10,
    MLVM_F16 = 11,
    MLVM_BF16 = 12,
    MLVM_F64 = 13
} mlvm_dtype_t;

/* Bytes of one element; 0 for a code that is not an mlvm_dtype_t. */
static inline size_t mlvm_dtype_size(int32_t dtype)
{
    static const unsigned char size[14] = {0, 4, 4, 1, 1, 2, 8, 1, 2, 4, 8, 2, 2, 8};
    return dtype >= 1 && dtype <= 13 ? (size_t)size[dtype] : 0u;
}

typedef struct mlvm_tensor_desc {
    const char *name;
    int32_t dtype;           /* mlvm_dtype_t */
    int32_t rank;
    const int64_t *dims;     /* rank entries; NULL when rank is 0 */
} mlvm_tensor_desc_t;

/* Uniform entry: inputs[i] / outputs[j] point to caller-owned, contiguous
 * buffers of the described shapes; arena holds arena_bytes, aligned to
 * MLVM_ARENA_ALIGN. Outputs must not overlap inputs. */
typedef mlvm_status_t (*mlvm_entry_fn)(void *arena, void *const *inputs,
                                       void *const *outputs);

struct mlvm_instance;

/* Where a failed check op reports: its source location, the flat index of
 * the worst element and the two values there. */
typedef struct mlvm_check_report {
    const char *where;       /* "file:line:col: mlvm.check_close" */
    int64_t index;
    float got;
    float want;
} mlvm_check_report_t;

/* Every generated call state starts with this header, so generic code
 * (loaders, schedulers) can read it through a void pointer. */
typedef struct mlvm_call_header {
    int32_t pc;              /* resume point; -1 once the call has ended */
    int32_t status;          /* the status the last begin / resume returned */
    const struct mlvm_instance *inst;
    unsigned char *arena;
    mlvm_check_report_t check;
} mlvm_call_header_t;

typedef mlvm_status_t (*mlvm_begin_fn)(void *call, const struct mlvm_instance *inst,
                                       void *arena, void *const *inputs,
                                       void *const *outputs);
typedef mlvm_status_t (*mlvm_resume_fn)(void *call);

typedef struct mlvm_export {
    const char *name;
    int32_t num_inputs;
    int32_t num_outputs;
    const mlvm_tensor_desc_t *inputs;
    const mlvm_tensor_desc_t *outputs;
    size_t arena_bytes;
    mlvm_entry_fn call;      /* one-shot; NULL when the function needs an instance */
    size_t call_bytes;       /* sizeof its call state */
    mlvm_begin_fn begin;     /* begin / resume: suspendable calls */
    mlvm_resume_fn resume;
    int32_t suspends;        /* 1 when the function has suspension points */
    int32_t takes_instance;  /* 1 when `direct` takes the instance first (state) */
    /* The typed one-shot entry itself ([inst,] arena, inputs..., outputs...),
     * cast to a generic function pointer; NULL when there is none. */
    void (*direct)(void);
} mlvm_export_t;

/* A native function the module imports (mlvm.call_c), with its signature. */
typedef struct mlvm_import_desc {
    const char *name;
    int32_t num_args;
    int32_t num_results;
    const mlvm_tensor_desc_t *args;
    const mlvm_tensor_desc_t *results;
} mlvm_import_desc_t;

/* A queue the module pops from or pushes to, with its element type. */
typedef struct mlvm_queue_desc {
    const char *name;
    mlvm_tensor_desc_t elem;
} mlvm_queue_desc_t;

/* A tensor of module state (mlvm.global): its bytes are at `offset` in the
 * instance's state (a multiple of MLVM_ARENA_ALIGN); a fresh or reset state
 * holds `init` there (`bytes` bytes), or zeros when init is NULL. */
typedef struct mlvm_global_desc {
    mlvm_tensor_desc_t tensor; /* tensor.name is the global's symbol */
    size_t offset;
    size_t bytes;
    const void *init;
} mlvm_global_desc_t;

typedef struct mlvm_module {
    uint32_t magic;          /* MLVM_MODULE_MAGIC */
    uint32_t abi_version;    /* MLVM_ABI_VERSION */
    const char *name;
    int32_t num_exports;
    int32_t num_imports;
    const mlvm_export_t *exports;
    const mlvm_import_desc_t *imports;
    size_t arena_bytes;      /* the largest arena any export needs */
    int32_t num_queues;
    int32_t num_globals;
    const mlvm_queue_desc_t *queues;
    size_t state_bytes;      /* storage an instance needs for the globals */
    const mlvm_global_desc_t *globals;
    /* Built with external parameters: the weights it reads from the
     * parameter file bound to the instance (mlvm/params.h), in slot order;
     * each name is the file's key. 0 / NULL when the weights are in the code. */
    int32_t num_params;
    int32_t pad_;
    const mlvm_tensor_desc_t *params;
} mlvm_module_t;

#endif /* MLVM_MODULE_H_ */
