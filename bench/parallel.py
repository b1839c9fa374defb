"""In-process collectives and data-parallel training, measured in C.

    python bench/parallel.py [--no-readme]

(`make bench` runs it; the output goes into bench/README.md between the
parallel markers.)

1. all_reduce (sum, f32) between 2 ranks on 2 threads over the shared-memory
   communicator: 64 MiB against one thread's memcpy of 64 MiB (the cost of
   moving the data once) and against two threads each copying 64 MiB at
   once (the bytes the two ranks must move, as a reference for this
   machine's memory), and 4 KiB latency (the staged one-barrier path).
2. The data-parallel digits step (samples/data_parallel/step.py): one rank
   on the whole global batch against 2 ranks on half of it each, at global
   batch 32 and 512, steps per second of the C entry points driven by
   pthreads (no Python in the loop).
3. Open MPI's own MPI_Allreduce on 2 processes (mpirun, shared-memory
   transport) on the same sizes, when mpicc and mpirun are installed.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "samples" / "data_parallel"))
sys.path.insert(0, str(ROOT / "samples" / "mnist_train"))

from mlvm.codegen.cc import INCLUDE_DIR, host_cpu_flags, runtime_sources  # noqa: E402

AR_SRC = """\
func.func @ar(%x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %y = "mlvm.all_reduce"(%x) <{{kind = "sum"}}> : (tensor<{n}xf32>) -> tensor<{n}xf32>
  func.return %y : tensor<{n}xf32>
}}
"""

AR_C = r"""
#define _POSIX_C_SOURCE 200809L
#if defined(__SSE2__)
#include <immintrin.h>
#endif
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "big.h"
#include "mlvm/sched.h"
#include "small.h"
#define BIG (16u << 20)
#define SMALL 1024u
static mlvm_shm_world_t world;
typedef struct { mlvm_shm_comm_t c; mlvm_instance_t inst; float *x, *y; int iters, big; double secs; } rk_t;
static rk_t rk[2];
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static void *go(void *a) {
    rk_t *r = a; int i; double t0;
    for (i = -2; i < r->iters; ++i) {
        mlvm_status_t st;
        if (i == 0) t0 = now();
        if (r->big) { big_ar_call_t c; st = big_ar_begin(&c, &r->inst, NULL, r->x, r->y);
            if (st == MLVM_SUSPENDED) st = mlvm_call_drive((mlvm_status_t (*)(void *))big_ar_resume, &c, 0, sched_yield); }
        else { small_ar_call_t c; st = small_ar_begin(&c, &r->inst, NULL, r->x, r->y);
            if (st == MLVM_SUSPENDED) st = mlvm_call_drive((mlvm_status_t (*)(void *))small_ar_resume, &c, 0, sched_yield); }
        if (st != MLVM_OK) { printf("error %d\n", st); exit(1); }
    }
    r->secs = now() - t0;
    return NULL;
}
static double copy_secs[2];
static pthread_barrier_t copy_start;
/* rank k's x copied to its y past the caches (as the all_reduce stores),
 * both ranks at once */
static void *copy(void *a) {
    rk_t *r = a; double t0; size_t i;
    pthread_barrier_wait(&copy_start);
    t0 = now();
#if defined(__SSE2__)
    for (i = 0; i < BIG; i += 4) _mm_stream_ps(r->y + i, _mm_loadu_ps(r->x + i));
    _mm_sfence();
#else
    (void)i; memcpy(r->y, r->x, BIG * 4);
#endif
    copy_secs[r - rk] = now() - t0;
    return NULL;
}
static double run(int big, int iters) {
    pthread_t th[2]; int k; const char *m;
    mlvm_shm_world_init(&world, 2);
    for (k = 0; k < 2; ++k) {
        mlvm_instance_init(&rk[k].inst, big ? &big_module : &small_module, NULL, NULL, 0, NULL, NULL, 0, &m);
        mlvm_shm_comm_init(&rk[k].c, &world, k); rk[k].inst.comm = &rk[k].c.base;
        rk[k].big = big; rk[k].iters = iters;
    }
    for (k = 0; k < 2; ++k) pthread_create(&th[k], NULL, go, &rk[k]);
    for (k = 0; k < 2; ++k) pthread_join(th[k], NULL);
    return (rk[0].secs > rk[1].secs ? rk[0].secs : rk[1].secs) / iters;
}
int main(void) {
    int k, i; double t0, s, memcpy_s = 1e30, pair_s = 1e30, big_s = 1e30, small_s = 1e30;
    for (k = 0; k < 2; ++k) {
        rk[k].x = malloc(BIG * 4); rk[k].y = malloc(BIG * 4);
        /* values that never repeat a page: identical pages ran at speeds no
         * memory has (256 MiB in 1.4 ms), merged somewhere below */
        for (i = 0; i < (int)BIG; ++i) { rk[k].x[i] = (float)((unsigned)i * 2654435761u + k >> 9); rk[k].y[i] = 0; }
    }
    /* Rounds of each in turn, the best of each kept: the machine's memory
     * is faster or slower by the minute, and all are measured in the same
     * minutes. Two threads each copying 64 MiB at once move what a 2-rank
     * all_reduce moves at the least (every input read, every output
     * written): a reference for its speed on this memory, not a bound
     * (the all_reduce has come out a little faster). */
    for (k = 0; k < 5; ++k) {
        pthread_t th[2]; int j;
        t0 = now(); memcpy(rk[0].y, rk[0].x, BIG * 4); t0 = now() - t0; if (t0 < memcpy_s) memcpy_s = t0;
        pthread_barrier_init(&copy_start, NULL, 2);
        for (j = 0; j < 2; ++j) pthread_create(&th[j], NULL, copy, &rk[j]);
        for (j = 0; j < 2; ++j) pthread_join(th[j], NULL);
        pthread_barrier_destroy(&copy_start);
        t0 = copy_secs[0] > copy_secs[1] ? copy_secs[0] : copy_secs[1];
        if (t0 < pair_s) pair_s = t0;
        s = run(1, 10); if (s < big_s) big_s = s;
        if (k < 3) { s = run(0, 20000); if (s < small_s) small_s = s; }
    }
    printf("all_reduce 64 MiB, 2 ranks: %.2f ms; memcpy 64 MiB: %.2f ms (all_reduce at %.2fx memcpy's speed)\n",
           big_s * 1e3, memcpy_s * 1e3, memcpy_s / big_s);
    printf("two threads each copying 64 MiB at once (the bytes a 2-rank all_reduce moves): %.2f ms, "
           "%.2fx memcpy's speed (all_reduce at %.2fx of it)\n", pair_s * 1e3, memcpy_s / pair_s, pair_s / big_s);
    printf("all_reduce 4 KiB, 2 ranks: %.2f us per call\n", small_s * 1e6);
    return 0;
}
"""

DP_C = r"""
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include "one.h"
#include "mlvm/sched.h"
#include "half.h"
#define STEPS 3000
static mlvm_shm_world_t w1, w2;
typedef struct { mlvm_shm_comm_t c; mlvm_instance_t inst; unsigned char st[ONE_STATE_BYTES + 64];
    unsigned char ar[ONE_ARENA_BYTES + 64]; float x[B * 64], y[B * 10], loss; int whole; } rk_t;
static rk_t rk[3];
static unsigned char *al(unsigned char *p) { return p + (64 - (size_t)p % 64) % 64; }
static void *go(void *a) {
    rk_t *r = a; float lr = 0.01f; int s;
    for (s = 0; s < STEPS; ++s) {
        mlvm_status_t st;
        if (r->whole) { one_step_call_t c; st = one_step_begin(&c, &r->inst, al(r->ar), r->x, r->y, &lr, &r->loss);
            if (st == MLVM_SUSPENDED) st = mlvm_call_drive((mlvm_status_t (*)(void *))one_step_resume, &c, 0, sched_yield); }
        else { half_step_call_t c; st = half_step_begin(&c, &r->inst, al(r->ar), r->x, r->y, &lr, &r->loss);
            if (st == MLVM_SUSPENDED) st = mlvm_call_drive((mlvm_status_t (*)(void *))half_step_resume, &c, 0, sched_yield); }
        if (st != MLVM_OK) { printf("error %d\n", st); return NULL; }
    }
    return NULL;
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(void) {
    const char *m; int i, rep; pthread_t th[2]; double t0, one = 1e30, two = 1e30;
    mlvm_shm_world_init(&w1, 1); mlvm_shm_world_init(&w2, 2);
    mlvm_instance_init(&rk[0].inst, &one_module, NULL, NULL, 0, NULL, NULL, 0, &m);
    mlvm_instance_bind_state(&rk[0].inst, al(rk[0].st), ONE_STATE_BYTES);
    mlvm_shm_comm_init(&rk[0].c, &w1, 0); rk[0].inst.comm = &rk[0].c.base; rk[0].whole = 1;
    for (i = 1; i < 3; ++i) {
        mlvm_instance_init(&rk[i].inst, &half_module, NULL, NULL, 0, NULL, NULL, 0, &m);
        mlvm_instance_bind_state(&rk[i].inst, al(rk[i].st), HALF_STATE_BYTES);
        mlvm_shm_comm_init(&rk[i].c, &w2, i - 1); rk[i].inst.comm = &rk[i].c.base;
    }
    for (i = 0; i < B * 64; ++i) rk[0].x[i] = rk[1].x[i] = rk[2].x[i] = (float)(i % 17) / 17.0f;
    for (i = 0; i < B; ++i) rk[0].y[i * 10 + i % 10] = rk[1].y[i * 10 + i % 10] = rk[2].y[i * 10 + i % 10] = 1.0f;
    for (rep = 0; rep < 3; ++rep) {
        t0 = now(); go(&rk[0]); t0 = now() - t0; if (t0 < one) one = t0;
        t0 = now();
        pthread_create(&th[0], NULL, go, &rk[1]); pthread_create(&th[1], NULL, go, &rk[2]);
        pthread_join(th[0], NULL); pthread_join(th[1], NULL);
        t0 = now() - t0; if (t0 < two) two = t0;
    }
    printf("data-parallel step, global batch %d: 1 rank %.0f steps/s, 2 ranks %.0f steps/s (%.2fx)\n",
           B, STEPS / one, STEPS / two, one / two);
    return 0;
}
"""


MPI_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int rank, i, k, n;
    const int sizes[2] = {16 << 20, 1024}, iters[2] = {10, 20000};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (k = 0; k < 2; ++k) {
        float *x = malloc((size_t)sizes[k] * 4), *y = malloc((size_t)sizes[k] * 4);
        double t0;
        for (i = 0; i < sizes[k]; ++i) { x[i] = (float)(i & 1023); y[i] = 0; }
        for (n = -2; n < iters[k]; ++n) {
            if (n == 0) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
            MPI_Allreduce(x, y, sizes[k], MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        t0 = (MPI_Wtime() - t0) / iters[k];
        if (rank == 0) {
            if (k == 0) printf("Open MPI MPI_Allreduce 64 MiB, 2 processes: %.2f ms\n", t0 * 1e3);
            else printf("Open MPI MPI_Allreduce 4 KiB, 2 processes: %.2f us per call\n", t0 * 1e6);
        }
        free(x); free(y);
    }
    MPI_Finalize();
    return 0;
}
"""


def open_mpi(tmp: Path) -> None:
    import os
    import shutil

    mpicc, mpirun = shutil.which("mpicc"), shutil.which("mpirun")
    if mpicc is None or mpirun is None:
        print("Open MPI: not installed (make sysdeps), not measured")
        return
    (tmp / "mpi_ar.c").write_text(MPI_C)
    subprocess.run([mpicc, "-O3", str(tmp / "mpi_ar.c"), "-o", str(tmp / "mpi_ar")], check=True)
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    print(subprocess.run([mpirun, "-n", "2", "--oversubscribe", str(tmp / "mpi_ar")], capture_output=True,
                         text=True, check=True, env=env).stdout, end="")


def cc(tmp: Path, main: str, mods: list[Path], out: str, defines: list[str] = ()) -> Path:  # type: ignore[assignment]
    (tmp / f"{out}.c").write_text(main)
    exe = tmp / out
    subprocess.run(["cc", "-O3", "-march=native", "-std=c99", "-pthread", *defines, "-I", str(INCLUDE_DIR),
                    "-I", str(tmp), str(tmp / f"{out}.c"), *map(str, mods), *map(str, runtime_sources()),
                    "-lm", "-o", str(exe)], check=True)
    return exe


def aot(tmp: Path, name: str, text: str, params: Path | None = None) -> Path:
    (tmp / f"{name}.mlir").write_text(text)
    args = [sys.executable, "-m", "mlvm", "compile", str(tmp / f"{name}.mlir"), "-o", str(tmp / f"{name}.c"), "-q"]
    if params is not None:
        args += ["--params", str(params)]
    subprocess.run(args, check=True)
    return tmp / f"{name}.c"


def measure() -> None:
    import train as mnist
    from step import step_source

    flags = host_cpu_flags()
    print(f"host: {'avx512f' if 'avx512f' in flags else 'avx2' if 'avx2' in flags else 'x86-64'}, "
          f"{len(__import__('os').sched_getaffinity(0))} cores")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        mods = [aot(tmp, "big", AR_SRC.format(n=16 << 20)), aot(tmp, "small", AR_SRC.format(n=1024))]
        print(subprocess.run([str(cc(tmp, AR_C, mods, "ar"))], capture_output=True, text=True,
                             check=True).stdout, end="")
        open_mpi(tmp)
        np.savez(tmp / "init.npz", **dict(zip(("w1", "b1", "w2", "b2"), mnist.init_params(0))))
        for batch in (32, 512):
            mods = [aot(tmp, "one", step_source(batch), tmp / "init.npz"),
                    aot(tmp, "half", step_source(batch // 2), tmp / "init.npz")]
            exe = cc(tmp, DP_C, mods, "dp", [f"-DB={batch}"])
            print(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout, end="")



class Tee:
    """stdout that also keeps what is written."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.kept = out, io.StringIO()

    def write(self, text: str) -> int:
        self.kept.write(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-readme", action="store_true", help="do not rewrite bench/README.md")
    args = ap.parse_args()
    tee = Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):  # type: ignore[type-var]
        measure()
    if not args.no_readme:
        from readme import write_readme

        when = datetime.datetime.now().isoformat(timespec="seconds")
        write_readme("parallel", f"{when}, `python bench/parallel.py` (run by `make bench`):\n\n"
                                 f"```\n{tee.kept.getvalue()}```\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
