# lit configuration for mlvm's FileCheck tests (run through pytest, see
# tests/test_filecheck.py, or directly: `lit -v tests/filecheck`).
import os
import sys

import lit.formats

config.name = "mlvm"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["lit.cfg.py"]  # noqa: F821
# mlvm-opt, mlvm-aot and filecheck from the interpreter's own environment.
bin_dir = os.path.dirname(sys.executable)
config.environment["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")  # noqa: F821
