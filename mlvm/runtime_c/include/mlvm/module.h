/* The module descriptor: what a generated module exports, readable by a
 * loader with no side file. Generated code defines one `<name>_module`. */
#ifndef MLVM_MODULE_H_
#define MLVM_MODULE_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/status.h"

#define MLVM_MODULE_MAGIC 0x4D4C564Du /* "MLVM" */
#define MLVM_ABI_VERSION 1u
#define MLVM_ARENA_ALIGN 64u          /* arenas must be aligned to this */

/* Alignment of statically allocated arenas. */
#if defined(__GNUC__) || defined(__clang__)
#define MLVM_ALIGNED(n) __attribute__((aligned(n)))
#else
#define MLVM_ALIGNED(n)
#endif

typedef enum mlvm_dtype {
    MLVM_F32 = 1,
    MLVM_I32 = 2
} mlvm_dtype_t;

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

typedef struct mlvm_export {
    const char *name;
    int32_t num_inputs;
    int32_t num_outputs;
    const mlvm_tensor_desc_t *inputs;
    const mlvm_tensor_desc_t *outputs;
    size_t arena_bytes;
    mlvm_entry_fn call;
} mlvm_export_t;

typedef struct mlvm_module {
    uint32_t magic;          /* MLVM_MODULE_MAGIC */
    uint32_t abi_version;    /* MLVM_ABI_VERSION */
    const char *name;
    int32_t num_exports;
    int32_t num_imports;
    const mlvm_export_t *exports;
    const char *const *imports;
    size_t arena_bytes;      /* the largest arena any export needs */
} mlvm_module_t;

#endif /* MLVM_MODULE_H_ */
