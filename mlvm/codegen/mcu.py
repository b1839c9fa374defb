"""The Cortex-M cores a module is built for: compiler flags, the runtime
files a firmware links, and the predefined macros that tell the cores apart
in a generated header. The Cortex-M harness (embedded/cortex_m), the stack
table (stack_table.py) and docs/embedded.md use these same flags."""

from __future__ import annotations

from mlvm.codegen.cc import RUNTIME_DIR

COMPILER = "arm-none-eabi-gcc"
CFLAGS = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-ffunction-sections",
          "-fdata-sections"]
# core: its -mcpu / float ABI flags
CORES: dict[str, list[str]] = {
    "cortex-m0plus": ["-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"],
    "cortex-m3": ["-mcpu=cortex-m3", "-mthumb", "-mfloat-abi=soft"],
    "cortex-m4": ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "cortex-m7": ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
    "cortex-m33": ["-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"],
    "cortex-m55": ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-mfpu=auto"],
}
# The preprocessor test that holds when a header is compiled for a group of
# the cores above (with their float ABI), and the cores it covers: ACLE's
# architecture macros, and __ARM_PCS_VFP for the hardware float ABI. Cores that
# share a test (an M4 and an M7 are both v7E-M) get the larger bound.
GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("defined(__ARM_ARCH_6M__) && !defined(__ARM_PCS_VFP)", ("cortex-m0plus",)),
    ("defined(__ARM_ARCH_7M__) && !defined(__ARM_PCS_VFP)", ("cortex-m3",)),
    ("defined(__ARM_ARCH_7EM__) && defined(__ARM_PCS_VFP)", ("cortex-m4", "cortex-m7")),
    # GCC 12 defines __ARM_ARCH_8M_MAIN__ for the v8.1-M Cortex-M55 too
    ("defined(__ARM_ARCH_8M_MAIN__) && defined(__ARM_PCS_VFP)", ("cortex-m33", "cortex-m55")),
]
# What a generated module links against.
RUNTIME_FILES = [*sorted((RUNTIME_DIR / "src" / "kernels").glob("*.c")),
                 *(RUNTIME_DIR / "src" / n for n in ("queue.c", "instance.c", "sched.c"))]
# How the harness and the stack table build those files (with -CORES[core]):
# the same code as with CFLAGS, and GCC's call graph with frame sizes beside
# each object (runtime_side_files(lib, ".ci")), which the stack table reads.
RUNTIME_CFLAGS = [*CFLAGS, "-fcallgraph-info=su"]
# The runtime's stack table (stack_table.py writes it, stack.py reads it).
STACK_TABLE = RUNTIME_DIR / "stack_usage.json"
