/* Status codes returned by every mlvm entry point. */
#ifndef MLVM_STATUS_H_
#define MLVM_STATUS_H_

typedef enum mlvm_status {
    MLVM_OK = 0,
    MLVM_SUSPENDED = 1,       /* the call yielded; resume it later */
    MLVM_ERR_INVALID = -1,    /* bad argument at a checked boundary */
    MLVM_ERR_SHAPE = -2,      /* shape or dtype mismatch at a checked boundary */
    MLVM_ERR_BOUNDS = -3,     /* out-of-bounds access at a checked boundary */
    MLVM_ERR_NOMEM = -4,      /* an allocation failed */
    MLVM_ERR_IMPORT = -5,     /* a native import is missing or failed */
    MLVM_ERR_CHECK = -6,      /* a check op failed */
    MLVM_ERR_BUSY = -7        /* another launch is running on this VM */
} mlvm_status_t;

#endif /* MLVM_STATUS_H_ */
