"""`python -m mlvm ...` is `mlvm-aot ...`."""

import sys

from mlvm.cli import aot_main

sys.exit(aot_main())
