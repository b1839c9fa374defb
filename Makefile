# mlvm: `make demo`, `make test`, `make bench`. Each target sets up .venv itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# No wheel cache: a clean machine's disk may be small, and each install is once.
PIP    := $(BIN)/pip --no-cache-dir
SYSSTAMP := $(VENV)/.sysdeps
# Debian packages the tests need, as command:package pairs: a second C
# compiler for the -Werror checks, valgrind, the Cortex-M toolchain and the
# emulator the embedded tests run models on, and Open MPI for the MPI
# communicator's tests.
APT_PACKAGES := clang:clang valgrind:valgrind \
                arm-none-eabi-gcc:gcc-arm-none-eabi arm-none-eabi-gcc:libnewlib-arm-none-eabi \
                qemu-system-arm:qemu-system-arm \
                mpicc:libopenmpi-dev mpirun:openmpi-bin

.PHONY: all demo test bench bench-avx2 bench-gemm bench-compile bench-zoo bench-embedded bench-embedded-peers conformance fuzz venv sysdeps clean

all: test

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[test]'
	touch $@

venv: $(STAMP)

# Installs missing Debian packages (as root, or through sudo when available).
$(SYSSTAMP): Makefile | $(STAMP)
	@missing=""; for p in $(APT_PACKAGES); do \
	  command -v $${p%%:*} >/dev/null 2>&1 || missing="$$missing $${p#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "installing:$$missing"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi
	touch $@

sysdeps: $(SYSSTAMP)

demo: $(STAMP)
	$(BIN)/python samples/mlp/demo.py

test: $(STAMP) $(SYSSTAMP)
	$(BIN)/python -m pytest -q -n 2 --dist loadgroup tests

BENCHSTAMP := $(VENV)/.bench-installed

$(BENCHSTAMP): $(STAMP) pyproject.toml
	$(PIP) install -q -e '.[test,bench]'
	touch $@

bench: $(BENCHSTAMP) $(SYSSTAMP)
	$(BIN)/python bench/run.py
	$(BIN)/python bench/parallel.py

# mlvm's AVX2 kernels on any AVX2 host (an AVX-512 one included), next to
# OpenBLAS's AVX2 kernels (numpy-HSW); its table goes to its own section.
bench-avx2: $(BENCHSTAMP) $(SYSSTAMP)
	MLVM_CFLAGS="-std=c99 -O3 -march=haswell -fno-math-errno -fPIC" \
		$(BIN)/python bench/run.py --section avx2

# The GEMM of the last commit's runtime and the working tree's side by side
# with OpenBLAS, in one process, each built at three loop alignments
# (bench/gemm_ab.py; REVS="--rev A --rev B" for others).
bench-gemm: $(BENCHSTAMP)
	$(BIN)/python bench/gemm_ab.py $(REVS)

# The compiler's time against graph size (chains of 500 .. 4,000 ops).
bench-compile: $(STAMP)
	$(BIN)/python bench/compile_time.py

# The onnx package's classic networks (AlexNet ... VGG-19) with seeded
# weights, batch 1, one thread, next to onnxruntime.
bench-zoo: $(BENCHSTAMP)
	taskset -c 1 $(BIN)/python bench/zoo.py

# Models on an emulated Cortex-M4: exact instructions per inference, flash, RAM.
bench-embedded: $(STAMP) $(SYSSTAMP)
	$(BIN)/python bench/embedded.py

# The same on the M4 next to a peer generator (emx-onnx-cgen, installed
# from the package index into build/peer-venv).
bench-embedded-peers: $(BENCHSTAMP) $(SYSSTAMP)
	$(BIN)/python bench/embedded_peers.py

# The onnx package's backend suite against mlvm: docs/onnx_support.md and the
# list of passing node cases that `make test` guards.
conformance: $(STAMP)
	$(BIN)/python tests/frontend/onnx/conformance.py

# The fuzzer over model files, parameter archives and the call boundary
# (FUZZ_SECONDS, default 1800; findings in fuzz-findings/, exit 1 if any).
FUZZ_SECONDS ?= 1800
fuzz: $(STAMP) $(SYSSTAMP)
	$(BIN)/python tests/fuzz/fuzzer.py --seconds $(FUZZ_SECONDS)

clean:
	rm -rf $(VENV) out build
