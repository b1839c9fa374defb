/* Reset and fault handling for the emulated board: copy .data, clear .bss,
 * paint the stack (for the high-water mark), turn on the FPU where there is
 * one, run main, and report its result through semihosting. */
#include <stdint.h>

#include "semihost.h"

extern uint32_t _data_load, _data_start, _data_end, _bss_start, _bss_end;
extern uint32_t _stack_limit, _stack_top;

int main(void);
void mlvm_reset(void);
static void fault(void);

#define STACK_PAINT 0x5ea5ea5eu

__attribute__((section(".vectors"), used))
static void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)&_stack_top, mlvm_reset, fault, fault, fault, fault, fault,
    0, 0, 0, 0, fault, fault, 0, fault, fault,
};

/* Bytes of stack used so far: the painted words nobody overwrote are free. */
uint32_t mlvm_stack_high_water(void)
{
    const uint32_t *p = &_stack_limit;
    while (p < &_stack_top && *p == STACK_PAINT)
        ++p;
    return (uint32_t)((uintptr_t)&_stack_top - (uintptr_t)p);
}

void mlvm_reset(void)
{
    uint32_t *src = &_data_load, *dst = &_data_start;
    volatile uint32_t *p;
    uint32_t sp;
    while (dst < &_data_end)
        *dst++ = *src++;
    for (dst = &_bss_start; dst < &_bss_end; ++dst)
        *dst = 0u;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (p = &_stack_limit; (uintptr_t)p < sp - 64u; ++p)
        *p = STACK_PAINT;
#if defined(__ARM_FP)
    /* CP10 and CP11 full access, then a barrier before the first FP use */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    sh_exit(main());
}

static void fault(void)
{
    sh_puts("fault\n");
    sh_exit(3);
}
