#include "semihost.h"

static uint32_t sh_call(uint32_t op, const void *arg)
{
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void sh_puts(const char *s)
{
    (void)sh_call(0x04u, s);
}

void sh_put_hex(uint32_t v)
{
    char buf[9];
    int i;
    for (i = 7; i >= 0; --i, v >>= 4)
        buf[i] = "0123456789abcdef"[v & 0xfu];
    buf[8] = '\0';
    sh_puts(buf);
}

void sh_put_dec(uint32_t v)
{
    char buf[11];
    int i = 10;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    sh_puts(buf + i);
}

void sh_exit(int code)
{
    /* ADP_Stopped_ApplicationExit with a status code */
    const uint32_t block[2] = {0x20026u, (uint32_t)code};
    (void)sh_call(0x20u, block);
    for (;;) {
    }
}
