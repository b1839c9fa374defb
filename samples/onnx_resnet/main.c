/* Runs the imported ResNet on one image read from a file of 3x32x32
 * little-endian floats and prints the ten logits and the predicted class.
 * The arena is a static buffer whose size the generated header states:
 * no allocation anywhere. */
#include <stdio.h>

#include "resnet8.h"

static float image[3 * 32 * 32];
static float logits[10];
static unsigned char arena[RESNET8_ARENA_BYTES] MLVM_ALIGNED(64);

int main(int argc, char **argv)
{
    FILE *f;
    mlvm_status_t st;
    int k, best = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: %s IMAGE.f32\n", argv[0]);
        return 2;
    }
    f = fopen(argv[1], "rb");
    if (f == NULL || fread(image, sizeof image, 1, f) != 1) {
        fprintf(stderr, "%s: cannot read %u floats\n", argv[1], (unsigned)(sizeof image / 4));
        return 2;
    }
    fclose(f);
    st = resnet8_main(arena, image, logits);
    if (st != MLVM_OK) {
        fprintf(stderr, "resnet8_main: status %d\n", (int)st);
        return 1;
    }
    for (k = 0; k < 10; ++k) {
        printf("%.9g\n", logits[k]);
        if (logits[k] > logits[best])
            best = k;
    }
    printf("class %d\n", best);
    return 0;
}
