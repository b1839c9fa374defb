/* Trains a 64-32-10 ReLU MLP on the 8x8 digits with plain SGD, through the
 * eager C API of the mlvm runtime alone: tensors are VM handles, every step
 * is one mlvm_batch of kernel calls, gradients live in a scratch pad.
 *
 *     train DIGITS.bin [STEPS] [SEED]
 *
 * DIGITS.bin comes from export_digits.py. Prints the loss as it falls, then
 * the accuracy on the held-out digits. The step is the one of
 * samples/mnist_train (forward, softmax cross-entropy, hand-written
 * backward, update with learning rate 0.5 on batches of 32). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlvm/runtime.h"

#define BATCH 32
#define HIDDEN 32
#define LEARNING_RATE 0.5f
#define DEFAULT_STEPS 1760
#define LOG_EVERY 220

/* ------------------------------------------------------------------------ */
/* The data file                                                             */
/* ------------------------------------------------------------------------ */

typedef struct digits {
    uint32_t n_train, n_test, features, classes;
    float *x_train, *x_test;
    int32_t *labels_train, *labels_test;
} digits_t;

static int read_all(FILE *f, void *dst, size_t size, size_t n)
{
    return fread(dst, size, n, f) == n;
}

/* Reads the file (little-endian, as written by export_digits.py). */
static int load_digits(const char *path, digits_t *d)
{
    char magic[4];
    uint32_t head[5];
    FILE *f = fopen(path, "rb");
    int ok;
    memset(d, 0, sizeof *d);
    if (f == NULL) {
        perror(path);
        return 0;
    }
    ok = read_all(f, magic, 1, 4) && memcmp(magic, "MLVD", 4) == 0 &&
         read_all(f, head, sizeof head[0], 5) && head[0] == 1;
    if (ok) {
        d->n_train = head[1];
        d->n_test = head[2];
        d->features = head[3];
        d->classes = head[4];
        d->x_train = (float *)malloc((size_t)d->n_train * d->features * 4);
        d->labels_train = (int32_t *)malloc((size_t)d->n_train * 4);
        d->x_test = (float *)malloc((size_t)d->n_test * d->features * 4);
        d->labels_test = (int32_t *)malloc((size_t)d->n_test * 4);
        ok = d->x_train && d->labels_train && d->x_test && d->labels_test &&
             read_all(f, d->x_train, 4, (size_t)d->n_train * d->features) &&
             read_all(f, d->labels_train, 4, d->n_train) &&
             read_all(f, d->x_test, 4, (size_t)d->n_test * d->features) &&
             read_all(f, d->labels_test, 4, d->n_test);
    }
    fclose(f);
    if (!ok)
        fprintf(stderr, "%s: not a digits file from export_digits.py\n", path);
    return ok;
}

static void free_digits(digits_t *d)
{
    free(d->x_train);
    free(d->labels_train);
    free(d->x_test);
    free(d->labels_test);
}

/* ------------------------------------------------------------------------ */
/* Random numbers: xorshift64*, Box-Muller                                   */
/* ------------------------------------------------------------------------ */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* Uniform in (0, 1). */
static double rng_uniform(uint64_t *s)
{
    return ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static float rng_normal(uint64_t *s)
{
    const double u = rng_uniform(s), v = rng_uniform(s);
    return (float)(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

/* ------------------------------------------------------------------------ */
/* The model                                                                 */
/* ------------------------------------------------------------------------ */

#define TRY(expr)                                                              \
    do {                                                                       \
        const mlvm_status_t st_ = (mlvm_status_t)(expr);                       \
        if (st_ != MLVM_OK) {                                                  \
            fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__,      \
                    #expr, (int)st_);                                          \
            goto done;                                                         \
        }                                                                      \
    } while (0)

/* A tensor of rank 0, 1 or 2 (dims <= 0 are left out) over a VM shape. */
static mlvm_handle_t tensor(mlvm_vm_t *vm, mlvm_dtype_t dt, int64_t d0,
                            int64_t d1)
{
    const int64_t dims[2] = {d0, d1};
    const int32_t rank = d0 <= 0 ? 0 : d1 <= 0 ? 1 : 2;
    mlvm_shape_t *s = mlvm_vm_shape_new(vm, rank, dims);
    return s != NULL ? mlvm_tensor_new(vm, dt, s) : MLVM_ERR_NOMEM;
}

/* A tensor cut from `pad` at the next 64-byte boundary of *offset. */
static mlvm_handle_t cut(mlvm_vm_t *vm, mlvm_pad_t *pad, size_t *offset,
                         int64_t d0, int64_t d1)
{
    const int64_t dims[2] = {d0, d1};
    const int32_t rank = d1 <= 0 ? 1 : 2;
    mlvm_shape_t *s = mlvm_vm_shape_new(vm, rank, dims);
    mlvm_handle_t t;
    if (s == NULL)
        return MLVM_ERR_NOMEM;
    t = mlvm_pad_cut(vm, pad, *offset, MLVM_F32, s);
    *offset += (s->size * 4 + 63) / 64 * 64;
    return t;
}

static mlvm_oparg_t op(mlvm_op_t code, mlvm_handle_t dst, mlvm_handle_t lhs,
                       mlvm_handle_t rhs)
{
    mlvm_oparg_t a;
    memset(&a, 0, sizeof a);
    a.op = (int32_t)code;
    a.dst = dst;
    a.lhs = lhs;
    a.rhs = rhs;
    a.opts.aux = MLVM_NONE;
    return a;
}

static mlvm_oparg_t op_flags(mlvm_op_t code, mlvm_handle_t dst,
                             mlvm_handle_t lhs, mlvm_handle_t rhs,
                             uint32_t flags)
{
    mlvm_oparg_t a = op(code, dst, lhs, rhs);
    a.opts.flags = flags;
    return a;
}

static mlvm_oparg_t op_axes(mlvm_op_t code, mlvm_handle_t dst,
                            mlvm_handle_t lhs, uint32_t axes)
{
    mlvm_oparg_t a = op(code, dst, lhs, MLVM_NONE);
    a.opts.axes = axes;
    return a;
}

/* Fills a tensor with He-normal values, std sqrt(2 / fan_in), in place. */
static mlvm_status_t he_init(mlvm_vm_t *vm, mlvm_handle_t t, int64_t fan_in,
                             uint64_t *rng)
{
    const mlvm_shape_t *s;
    void *p;
    float *w;
    size_t i;
    const float std = (float)sqrt(2.0 / (double)fan_in);
    mlvm_status_t st = mlvm_tensor_info(vm, t, NULL, &s);
    if (st == MLVM_OK)
        st = mlvm_tensor_data(vm, t, &p); /* the zero-copy path */
    if (st != MLVM_OK)
        return st;
    w = (float *)p;
    for (i = 0; i < s->size; ++i)
        w[i] = std * rng_normal(rng);
    return MLVM_OK;
}

static mlvm_status_t set_scalar(mlvm_vm_t *vm, mlvm_handle_t t, float v)
{
    return mlvm_tensor_write(vm, t, 0, &v, sizeof v);
}

int main(int argc, char **argv)
{
    digits_t data;
    mlvm_vm_t *vm = NULL;
    mlvm_pad_t *pad;
    mlvm_handle_t x, y, w1, b1, w2, b2, z1, h1, logits, loss, grad, mean_loss;
    mlvm_handle_t zero, lr, inv_batch;
    mlvm_handle_t dw1, db1, dw2, db2, dh1, mask;
    mlvm_handle_t tx, tz1, tlogits, tpred;
    mlvm_oparg_t step_ops[24], eval_ops[6];
    size_t n_step = 0, n_eval = 0, offset = 0, failed = 0;
    uint32_t *order = NULL;
    int32_t *pred = NULL;
    long steps = argc > 2 ? atol(argv[2]) : DEFAULT_STEPS, s;
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)(argc > 3 ? atol(argv[3]) : 0);
    uint32_t pos, i, correct = 0;
    int64_t F, C, N;
    int rc = 1;
    float first_loss = -1.0f, last_loss = -1.0f, running = 0.0f;

    if (argc < 2) {
        fprintf(stderr, "usage: %s DIGITS.bin [STEPS] [SEED]\n", argv[0]);
        return 2;
    }
    if (!load_digits(argv[1], &data)) {
        free_digits(&data);
        return 1;
    }
    F = data.features;
    C = data.classes;
    N = data.n_test;

    vm = mlvm_vm_new(mlvm_allocator_std());
    if (vm == NULL)
        goto done;

    /* Parameters, a batch, the forward activations. */
    x = tensor(vm, MLVM_F32, BATCH, F);
    y = tensor(vm, MLVM_F32, BATCH, C);
    w1 = tensor(vm, MLVM_F32, F, HIDDEN);
    b1 = tensor(vm, MLVM_F32, HIDDEN, 0);
    w2 = tensor(vm, MLVM_F32, HIDDEN, C);
    b2 = tensor(vm, MLVM_F32, C, 0);
    z1 = tensor(vm, MLVM_F32, BATCH, HIDDEN);
    h1 = tensor(vm, MLVM_F32, BATCH, HIDDEN);
    logits = tensor(vm, MLVM_F32, BATCH, C);
    loss = tensor(vm, MLVM_F32, BATCH, 0);
    grad = tensor(vm, MLVM_F32, BATCH, C);
    mean_loss = tensor(vm, MLVM_F32, 0, 0);
    zero = tensor(vm, MLVM_F32, 0, 0);
    lr = tensor(vm, MLVM_F32, 0, 0);
    inv_batch = tensor(vm, MLVM_F32, 0, 0);
    TRY(mean_loss < 0 ? mean_loss : inv_batch < 0 ? inv_batch : MLVM_OK);

    /* Gradients: tensors cut from one scratch pad, no allocation each. */
    pad = mlvm_pad_new(vm, 32768); /* 17856 bytes used at 64-byte offsets */
    if (pad == NULL)
        goto done;
    dw1 = cut(vm, pad, &offset, F, HIDDEN);
    db1 = cut(vm, pad, &offset, HIDDEN, 0);
    dw2 = cut(vm, pad, &offset, HIDDEN, C);
    db2 = cut(vm, pad, &offset, C, 0);
    dh1 = cut(vm, pad, &offset, BATCH, HIDDEN);
    mask = cut(vm, pad, &offset, BATCH, HIDDEN);
    TRY(mask < 0 ? mask : MLVM_OK);

    TRY(he_init(vm, w1, F, &rng));
    TRY(he_init(vm, w2, HIDDEN, &rng));
    TRY(mlvm_exec(vm, MLVM_OP_FILL, NULL, b1, MLVM_NONE, MLVM_NONE));
    TRY(mlvm_exec(vm, MLVM_OP_FILL, NULL, b2, MLVM_NONE, MLVM_NONE));
    TRY(set_scalar(vm, zero, 0.0f));
    TRY(set_scalar(vm, lr, LEARNING_RATE));
    TRY(set_scalar(vm, inv_batch, 1.0f / BATCH));

    /* One SGD step, as one batch of ops. */
    step_ops[n_step++] = op(MLVM_OP_MATMUL, z1, x, w1);
    step_ops[n_step++] = op(MLVM_OP_ADD, z1, z1, b1); /* in place */
    step_ops[n_step++] = op(MLVM_OP_RELU, h1, z1, MLVM_NONE);
    step_ops[n_step++] = op(MLVM_OP_MATMUL, logits, h1, w2);
    step_ops[n_step++] = op(MLVM_OP_ADD, logits, logits, b2);
    step_ops[n_step] = op(MLVM_OP_SOFTMAX_XENT, loss, y, logits);
    step_ops[n_step++].opts.aux = grad;
    step_ops[n_step++] = op_axes(MLVM_OP_REDUCE_MEAN, mean_loss, loss, 1u);
    /* Backward of the mean loss. */
    step_ops[n_step++] = op(MLVM_OP_MUL, grad, grad, inv_batch);
    step_ops[n_step++] = op_flags(MLVM_OP_MATMUL, dw2, h1, grad, MLVM_TRANSPOSE_LHS);
    step_ops[n_step++] = op_axes(MLVM_OP_REDUCE_SUM, db2, grad, 1u);
    step_ops[n_step++] = op_flags(MLVM_OP_MATMUL, dh1, grad, w2, MLVM_TRANSPOSE_RHS);
    step_ops[n_step++] = op(MLVM_OP_CMPL, mask, z1, zero);
    step_ops[n_step++] = op(MLVM_OP_MUL, dh1, dh1, mask);
    step_ops[n_step++] = op_flags(MLVM_OP_MATMUL, dw1, x, dh1, MLVM_TRANSPOSE_LHS);
    step_ops[n_step++] = op_axes(MLVM_OP_REDUCE_SUM, db1, dh1, 1u);
    /* Update: g *= lr; p -= g. */
    step_ops[n_step++] = op(MLVM_OP_MUL, dw1, dw1, lr);
    step_ops[n_step++] = op(MLVM_OP_SUB, w1, w1, dw1);
    step_ops[n_step++] = op(MLVM_OP_MUL, db1, db1, lr);
    step_ops[n_step++] = op(MLVM_OP_SUB, b1, b1, db1);
    step_ops[n_step++] = op(MLVM_OP_MUL, dw2, dw2, lr);
    step_ops[n_step++] = op(MLVM_OP_SUB, w2, w2, dw2);
    step_ops[n_step++] = op(MLVM_OP_MUL, db2, db2, lr);
    step_ops[n_step++] = op(MLVM_OP_SUB, b2, b2, db2);

    order = (uint32_t *)malloc(data.n_train * sizeof *order);
    if (order == NULL)
        goto done;
    for (i = 0; i < data.n_train; ++i)
        order[i] = i;
    pos = data.n_train; /* shuffle first */

    printf("training %u digits, %ld steps of %d, learning rate %g\n",
           data.n_train, steps, BATCH, (double)LEARNING_RATE);
    for (s = 0; s < steps; ++s) {
        void *py;
        float l;
        if (pos + BATCH > data.n_train) { /* a new epoch: reshuffle */
            for (i = data.n_train - 1; i > 0; --i) {
                const uint32_t j = (uint32_t)(rng_next(&rng) % (i + 1)), t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            pos = 0;
        }
        /* Rows in by copy (as an RPC would), one-hot labels in place. */
        TRY(mlvm_tensor_data(vm, y, &py));
        memset(py, 0, (size_t)(BATCH * C) * sizeof(float));
        for (i = 0; i < BATCH; ++i) {
            const uint32_t r = order[pos + i];
            TRY(mlvm_tensor_write(vm, x, (size_t)i * F * 4,
                                  data.x_train + (size_t)r * F, (size_t)F * 4));
            ((float *)py)[i * C + data.labels_train[r]] = 1.0f;
        }
        pos += BATCH;
        TRY(mlvm_batch(vm, n_step, step_ops, &failed));
        TRY(mlvm_tensor_read(vm, mean_loss, 0, &l, sizeof l));
        if (s == 0)
            first_loss = l;
        running += l;
        if ((s + 1) % LOG_EVERY == 0 || s + 1 == steps) {
            const long n = (s + 1) % LOG_EVERY ? (s + 1) % LOG_EVERY : LOG_EVERY;
            last_loss = running / (float)n;
            printf("step %5ld  loss %.4f\n", s + 1, (double)last_loss);
            running = 0.0f;
        }
    }

    /* The held-out digits, all in one forward pass. */
    tx = tensor(vm, MLVM_F32, N, F);
    tz1 = tensor(vm, MLVM_F32, N, HIDDEN);
    tlogits = tensor(vm, MLVM_F32, N, C);
    tpred = tensor(vm, MLVM_I32, N, 0);
    TRY(tpred < 0 ? tpred : MLVM_OK);
    TRY(mlvm_tensor_write(vm, tx, 0, data.x_test, (size_t)(N * F) * 4));
    eval_ops[n_eval++] = op(MLVM_OP_MATMUL, tz1, tx, w1);
    eval_ops[n_eval++] = op(MLVM_OP_ADD, tz1, tz1, b1);
    eval_ops[n_eval++] = op(MLVM_OP_RELU, tz1, tz1, MLVM_NONE);
    eval_ops[n_eval++] = op(MLVM_OP_MATMUL, tlogits, tz1, w2);
    eval_ops[n_eval++] = op(MLVM_OP_ADD, tlogits, tlogits, b2);
    eval_ops[n_eval] = op(MLVM_OP_ARGMAX, tpred, tlogits, MLVM_NONE);
    eval_ops[n_eval++].opts.axis = 1;
    TRY(mlvm_batch(vm, n_eval, eval_ops, &failed));
    pred = (int32_t *)malloc((size_t)N * sizeof *pred);
    if (pred == NULL)
        goto done;
    TRY(mlvm_tensor_read(vm, tpred, 0, pred, (size_t)N * sizeof *pred));
    for (i = 0; i < data.n_test; ++i)
        correct += pred[i] == data.labels_test[i];

    printf("loss: %.4f -> %.4f\n", (double)first_loss, (double)last_loss);
    printf("held-out accuracy: %.2f%% (%u/%u)\n", 100.0 * correct / data.n_test,
           correct, data.n_test);
    printf("VM: %d tensors, %lu bytes consumed\n", (int)mlvm_vm_tensor_count(vm),
           (unsigned long)mlvm_vm_consumed(vm));
    rc = 0;
done:
    if (rc != 0)
        fprintf(stderr, "(a batch stops at its op %lu)\n", (unsigned long)failed);
    mlvm_vm_free(vm);
    free(order);
    free(pred);
    free_digits(&data);
    return rc;
}
