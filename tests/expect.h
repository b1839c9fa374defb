/* The C harnesses' check: counts passes, prints each failure with its line. */
#ifndef MLVM_TESTS_EXPECT_H_
#define MLVM_TESTS_EXPECT_H_

#include <stdio.h>

static int passed, failed;

#define EXPECT(cond)                                                        \
    do {                                                                    \
        if (cond) {                                                         \
            ++passed;                                                       \
        } else {                                                            \
            ++failed;                                                       \
            printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
        }                                                                   \
    } while (0)

/* The last line the tests read: "N passed, M failed". */
#define EXPECT_REPORT()                                                     \
    (printf("%d passed, %d failed\n", passed, failed), failed == 0 ? 0 : 1)

#endif /* MLVM_TESTS_EXPECT_H_ */
