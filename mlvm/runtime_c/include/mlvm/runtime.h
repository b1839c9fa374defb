/* The mlvm runtime as a C library: every header of the raw machine. */
#ifndef MLVM_RUNTIME_H_
#define MLVM_RUNTIME_H_

#include "mlvm/status.h"
#include "mlvm/alloc.h"
#include "mlvm/vm.h"
#include "mlvm/shape.h"
#include "mlvm/tensor.h"
#include "mlvm/scratch.h"
#include "mlvm/arena.h"
#include "mlvm/exec.h"
#include "mlvm/kernels.h"
#include "mlvm/module.h"
#include "mlvm/half.h"
#include "mlvm/scalar.h"
#include "mlvm/instance.h"
#include "mlvm/params.h"
#include "mlvm/context.h"
#include "mlvm/launch.h"

#endif /* MLVM_RUNTIME_H_ */
