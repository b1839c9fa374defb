/* Data movement by element width (8, 16, 32 and 64 bits): the strided
 * gather of transpose / slice, broadcast_to, and 2-D copies of concat.
 * Moving bits needs only the width, not the element type. */
#include <string.h>

#include "iter.h"

/* Side of the square tiles a transposing gather walks: 16 x 16 elements
 * read from 16 input lines and written to 16 output lines. */
#define MLVM_GATHER_TILE 16

static mlvm_index_t move_imin(mlvm_index_t a, mlvm_index_t b) { return a < b ? a : b; }

#define MLVM_MOVE_T uint8_t
#define MLVM_MOVE_NAME(x) x##8
#include "move_impl.h"
#undef MLVM_MOVE_T
#undef MLVM_MOVE_NAME

#define MLVM_MOVE_T uint16_t
#define MLVM_MOVE_NAME(x) x##16
#include "move_impl.h"
#undef MLVM_MOVE_T
#undef MLVM_MOVE_NAME

#define MLVM_MOVE_T uint32_t
#define MLVM_MOVE_NAME(x) x##32
#include "move_impl.h"
#undef MLVM_MOVE_T
#undef MLVM_MOVE_NAME

#define MLVM_MOVE_T uint64_t
#define MLVM_MOVE_NAME(x) x##64
#include "move_impl.h"
#undef MLVM_MOVE_T
#undef MLVM_MOVE_NAME
