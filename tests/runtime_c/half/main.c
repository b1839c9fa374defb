/* Converts the words of a file through mlvm/half.h: argv[1] is "f32" (4-byte
 * floats in; f16 bits, bf16 bits and f16 widened back out) or "f64" (8-byte
 * doubles in; f16 and bf16 bits out). */
#include <stdio.h>
#include <string.h>

#include "mlvm/half.h"

static int from_f32(FILE *in, FILE *out)
{
    float x;
    while (fread(&x, sizeof x, 1, in) == 1) {
        const uint16_t h = mlvm_f32_to_f16(x), b = mlvm_f32_to_bf16(x);
        const float back = mlvm_f16_to_f32(h), bback = mlvm_bf16_to_f32(b);
        if (fwrite(&h, 2, 1, out) != 1 || fwrite(&b, 2, 1, out) != 1 ||
            fwrite(&back, 4, 1, out) != 1 || fwrite(&bback, 4, 1, out) != 1)
            return 1;
    }
    return 0;
}

static int from_f64(FILE *in, FILE *out)
{
    double x;
    while (fread(&x, sizeof x, 1, in) == 1) {
        const uint16_t h = mlvm_f64_to_f16(x), b = mlvm_f64_to_bf16(x);
        if (fwrite(&h, 2, 1, out) != 1 || fwrite(&b, 2, 1, out) != 1)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    FILE *in, *out;
    int rc;
    if (argc != 4)
        return 2;
    in = fopen(argv[2], "rb");
    out = fopen(argv[3], "wb");
    if (in == NULL || out == NULL)
        return 2;
    rc = strcmp(argv[1], "f64") == 0 ? from_f64(in, out) : from_f32(in, out);
    fclose(in);
    return fclose(out) != 0 || rc;
}
