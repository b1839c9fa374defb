/* External parameters: a module's weights in one binary file (.mlvmp),
 * apart from its code, used in place (from an mmap, or from flash).
 *
 * Byte layout (all integers little-endian; see docs/c_abi.md):
 *   0   char     magic[8]       "MLVMPRMS"
 *   8   uint32   version        MLVM_PARAMS_VERSION
 *   12  uint32   count          entries in the table
 *   16  uint64   table_offset   64
 *   24  uint64   data_offset    where the first tensor's bytes are
 *   32  uint64   total_bytes    the file's size
 *   40  uint32   crc32          CRC-32 (zlib's) of bytes [64, total_bytes)
 *   44  ...      zeros up to 64
 *   table_offset: count entries of MLVM_PARAMS_ENTRY_BYTES (104):
 *       uint64 name_offset, uint32 name_bytes, uint32 dtype, uint32 rank,
 *       uint32 reserved, int64 dims[8], uint64 offset, uint64 bytes
 *   names (UTF-8, no terminator), then each tensor's bytes at an offset
 *   that is a multiple of 64 (elements little-endian, row-major).
 *
 * Binding checks the whole file once (sizes, version, checksum, every
 * entry inside the file) and then each parameter the module needs by name,
 * dtype and shape; it never reads outside [blob, blob + blob_bytes). */
#ifndef MLVM_PARAMS_H_
#define MLVM_PARAMS_H_

#include <stddef.h>
#include <stdint.h>

#include "mlvm/instance.h"
#include "mlvm/status.h"

#define MLVM_PARAMS_VERSION 1u
#define MLVM_PARAMS_HEADER_BYTES 64u
#define MLVM_PARAMS_ENTRY_BYTES 104u
#define MLVM_PARAMS_ALIGN 64u

/* CRC-32 (polynomial 0xEDB88320, as zlib), continued from `crc` (0 to start). */
uint32_t mlvm_crc32(uint32_t crc, const unsigned char *data, size_t n);

/* Checks the parameter file at `blob` (blob_bytes long, aligned to
 * MLVM_PARAMS_ALIGN) and points the caller's slots (module->num_params
 * entries) at the parameters the module needs. On an error, *what (when
 * not NULL) names the culprit: a parameter's name, or the file's part that
 * is wrong ("magic", "version", "size", "checksum", "table"). Statuses:
 * MLVM_ERR_INVALID (a damaged or foreign file), MLVM_ERR_IMPORT (a
 * parameter is missing), MLVM_ERR_SHAPE (a parameter's dtype or shape). */
mlvm_status_t mlvm_instance_bind_params(mlvm_instance_t *inst, const void *blob,
                                        size_t blob_bytes, const void **slots,
                                        const char **what);

#endif /* MLVM_PARAMS_H_ */
