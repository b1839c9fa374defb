/* Launch: a compiled program (an exported function of a module instance)
 * run on a VM's tensors, the VM API's program call.
 *
 * The VM provides the scratch (the export's arena and call state, from its
 * own store, kept and grown across launches) and, for an instance without
 * module state of its own, the state: kept by the VM per instance (made
 * and set to its initial values on the first launch, so each VM has its
 * own), bound to the instance only while a launch of it runs. All of it
 * counts in mlvm_vm_consumed and goes with mlvm_vm_free. Launches on one
 * VM are serialized: mlvm_vm_try_launch answers MLVM_ERR_BUSY while another
 * runs, mlvm_vm_launch waits for it. Eager ops (mlvm_exec, tensor_new, ...)
 * are not: they must not run on a VM while a launch does (a VM's eager ops
 * belong to one thread, which may also launch). */
#ifndef MLVM_LAUNCH_H_
#define MLVM_LAUNCH_H_

#include "mlvm/instance.h"
#include "mlvm/status.h"
#include "mlvm/vm.h"

/* Runs export `fn` of inst's module on tensors `in` (one handle per input,
 * of the declared dtype and shape). `out` has one entry per output: an
 * existing tensor of the declared dtype and shape to write, or MLVM_NONE,
 * which the launch replaces with a new tensor's handle. Inputs and outputs
 * must be distinct tensors. The call runs to its end (resumed while it
 * suspends). Errors: MLVM_ERR_INVALID (no export `fn`, a bad handle, an
 * output that is an input), MLVM_ERR_SHAPE (a tensor of another dtype or
 * shape), MLVM_ERR_NOMEM, MLVM_ERR_BUSY (try form), or the call's status. */
mlvm_status_t mlvm_vm_try_launch(mlvm_vm_t *vm, mlvm_instance_t *inst, const char *fn,
                                 const mlvm_handle_t *in, mlvm_handle_t *out);
mlvm_status_t mlvm_vm_launch(mlvm_vm_t *vm, mlvm_instance_t *inst, const char *fn,
                             const mlvm_handle_t *in, mlvm_handle_t *out);

#endif /* MLVM_LAUNCH_H_ */
