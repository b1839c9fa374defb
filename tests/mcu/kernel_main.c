/* A host kernel test (a file of tests/runtime_c/kernels, its main renamed
 * mlvm_test_main by -Dmain=...) on the emulated board: newlib's heap
 * between .bss and the stack, its stdout and stderr through semihosting;
 * the test's exit() or main's return (startup.c) ends the firmware with
 * that code. */
#undef main
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "semihost.h"

extern uint32_t _bss_end, _stack_limit;

int mlvm_test_main(int argc, char **argv);
int main(void);
void *_sbrk(ptrdiff_t incr);
int _write(int fd, const char *buf, int len);
void _exit(int code);

void *_sbrk(ptrdiff_t incr)
{
    static uint8_t *brk;
    uint8_t *old;
    if (brk == NULL)
        brk = (uint8_t *)&_bss_end;
    if (incr > (uint8_t *)&_stack_limit - brk) {
        sh_puts("kernel_main: heap exhausted\n"); /* a test that does not check malloc */
        errno = ENOMEM;
        return (void *)-1;
    }
    old = brk;
    brk += incr;
    return old;
}

int _write(int fd, const char *buf, int len)
{
    char chunk[65];
    int done = 0;
    (void)fd;
    while (done < len) {
        int n = len - done < 64 ? len - done : 64, i;
        for (i = 0; i < n; ++i)
            chunk[i] = buf[done + i];
        chunk[n] = '\0';
        sh_puts(chunk);
        done += n;
    }
    return len;
}

void _exit(int code)
{
    sh_exit(code);
}

int main(void)
{
    static char name[] = "kernel", *argv[] = {name, NULL};
    return mlvm_test_main(1, argv);
}
