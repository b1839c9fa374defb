/* Arm semihosting: the debugger (here qemu -semihosting) prints for us and
 * ends the program with its exit code. */
#ifndef MLVM_SEMIHOST_H_
#define MLVM_SEMIHOST_H_

#include <stdint.h>

void sh_puts(const char *s);        /* SYS_WRITE0 */
void sh_put_hex(uint32_t v);        /* 8 hex digits */
void sh_put_dec(uint32_t v);
void sh_exit(int code);             /* SYS_EXIT_EXTENDED; does not return */

#endif /* MLVM_SEMIHOST_H_ */
