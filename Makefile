# fleetsim: build, test and benchmark.  Read top to bottom: settings, then sources,
# then rules.  `make V=1` shows the commands.

# ---- settings ---------------------------------------------------------------
CC         ?= cc
PKG_CONFIG ?= pkg-config
CUDA       ?= auto            # auto | yes | no
CUDA_HOME  ?= /usr/local/cuda
SAN        ?=                 # 1: AddressSanitizer + UndefinedBehaviorSanitizer
MPI        ?=                 # 1: with MPI, through mpicc (Open MPI), in build/mpi
FUZZ       ?=                 # 1: clang, libFuzzer, ASan + UBSan, in build/fuzz (make fuzz)
FUZZ_SECONDS ?= 20            # make fuzz: seconds per harness
V          ?=

# Debian packages the project needs (make deps installs what is missing).
DEB_PACKAGES := build-essential pkg-config libgsl-dev libcsv-dev liblua5.4-dev \
                libcriterion-dev gnuplot-nox openmpi-bin libopenmpi-dev libopenblas-dev \
                clang libclang-rt-dev valgrind

# -ffp-contract=off: no fused multiply-add, so results are bit-identical across CPUs.
# -Wno-format-truncation: messages and key paths are cut to fixed buffers on purpose.
OPTFLAGS ?= -O2 -g
CFLAGS   += -std=c11 -D_POSIX_C_SOURCE=200809L $(OPTFLAGS) -Wall -Wextra -Wshadow \
            -Wno-unused-parameter -Wno-format-truncation -ffp-contract=off -MMD -MP -I.
CFLAGS   += $(shell $(PKG_CONFIG) --cflags lua5.4 2>/dev/null)
LDLIBS   += $(shell $(PKG_CONFIG) --libs gsl lua5.4 2>/dev/null) -lcsv -lm

CUDA := $(strip $(CUDA))
SAN  := $(strip $(SAN))
MPI  := $(strip $(MPI))
FUZZ := $(strip $(FUZZ))
BUILD := build
ifeq ($(SAN),1)
  BUILD    := build/san
  CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS  += -fsanitize=address,undefined
endif
# Fuzzing: every object instrumented for libFuzzer's coverage; only the harnesses link
# its main.  The sandbox's instruction limit is lowered so an endless loop costs a
# fuzzer milliseconds (lua/sandbox.h).
ifeq ($(FUZZ),1)
  CC       := clang
  CUDA     := no
  BUILD    := build/fuzz
  CFLAGS   += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
              -fno-sanitize-recover=undefined -DSANDBOX_INSTRUCTION_LIMIT=2000000ull \
              -Wno-unknown-warning-option
  LDFLAGS  += -fsanitize=fuzzer,address,undefined
endif
# MPI: only sim/mpi_tasks.c uses it (FLEETSIM_MPI); mpicc adds Open MPI's flags.
ifeq ($(MPI),1)
  CC       := mpicc
  BUILD    := $(BUILD)/mpi
  CFLAGS   += -DFLEETSIM_MPI
endif

# CUDA: nvcc from $(CUDA_HOME)/bin, else from PATH.
NVCC := $(firstword $(wildcard $(CUDA_HOME)/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
ifeq ($(CUDA),auto)
  HAVE_CUDA := $(if $(NVCC),1,0)
else ifeq ($(CUDA),yes)
  HAVE_CUDA := 1
  ifeq ($(NVCC),)
    $(error CUDA=yes but no nvcc in $(CUDA_HOME)/bin or on PATH; set CUDA_HOME)
  endif
else
  HAVE_CUDA := 0
endif
ifeq ($(HAVE_CUDA),1)
  CUDA_ROOT := $(patsubst %/bin/nvcc,%,$(NVCC))
  NVCCFLAGS ?= -O2 -std=c++17
  # The static runtime: the binary runs where no CUDA library is installed.
  LDLIBS    += -L$(CUDA_ROOT)/lib64 -lcudart_static -ldl -lrt -lpthread -lstdc++
  # cuBLAS, cuBLASLt and NCCL are opened at run time by the calibration (kernels/
  # calib_cuda_blas.cu says why), from the loader's path or from here.
  CUDA_DEFS := -DFLEETSIM_CUDA_LIBDIR='"$(CUDA_ROOT)/lib64"'
endif

ifeq ($(V),1)
  Q :=
  say :=
else
  Q := @
  say = @printf '  %-6s %s\n' $(1) $(2);
endif

# ---- sources ----------------------------------------------------------------
CORE_SRC  := $(wildcard sim/*.c models/*.c output/*.c lua/*.c kernels/*.c)
CORE_SRC  := $(filter-out lua/cli.c lua/embed.c kernels/%_absent.c,$(CORE_SRC))
LUA_API   := $(sort $(wildcard lua/fleetsim/*.lua))
LUA_GEN   := $(BUILD)/generated/lua_modules.c
CUDA_SRC  := $(if $(filter 1,$(HAVE_CUDA)),$(wildcard kernels/*.cu))
NOCUDA_SRC := $(if $(filter 1,$(HAVE_CUDA)),,$(wildcard kernels/*_absent.c))
CORE_OBJ  := $(CORE_SRC:%.c=$(BUILD)/%.o) $(NOCUDA_SRC:%.c=$(BUILD)/%.o) \
             $(CUDA_SRC:%.cu=$(BUILD)/%.cu.o) $(LUA_GEN:.c=.o)
TEST_SRC  := $(wildcard tests/test_*.c tests/support/*.c)
TEST_OBJ  := $(TEST_SRC:%.c=$(BUILD)/%.o)
BENCH_SRC := $(wildcard tests/bench/*.c)
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/%.o)

FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_MAIN := $(filter-out tests/fuzz/fuzz_support.c,$(FUZZ_SRC))
FUZZERS   := $(FUZZ_MAIN:tests/fuzz/%.c=build/fuzz/%)

LIB   := $(BUILD)/libfleetsim.a
BIN   := $(BUILD)/fleetsim
TESTS := $(BUILD)/fleetsim_tests
BENCH := $(BUILD)/fleetsim_bench

# A change of settings or of the list of source files rebuilds everything: objects
# depend on this file, rewritten only when the settings differ from the last build's
# (a removed test file must leave the test binary too).
BUILD_CONFIG := cuda=$(HAVE_CUDA) cc=$(CC) cflags=$(CFLAGS) nvcc=$(NVCC) $(NVCCFLAGS) \
                sources=$(CORE_SRC) $(TEST_SRC) $(BENCH_SRC) $(LUA_API)
$(shell mkdir -p $(BUILD) && echo '$(BUILD_CONFIG)' | cmp -s - $(BUILD)/config \
          || echo '$(BUILD_CONFIG)' > $(BUILD)/config)

# ---- rules ------------------------------------------------------------------
.PHONY: all deps run test bench claims clean fuzz fuzzers valgrind
all: deps $(BIN)

# Installs the missing Debian packages as root; otherwise prints the command.
deps:
	$(Q)missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "make deps: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "make deps: missing packages; run: sudo apt-get install -y$$missing"; exit 1; \
	  fi; \
	fi

# The main job: the default scenario (a chatbot on dedicated or shared GPUs, a training
# job beside it); its report is out/<name>/report.html.
DEFAULT_SCENARIO ?= scenarios/default.lua
run: all
	$(Q)./$(BIN) run $(DEFAULT_SCENARIO) -o out/$(basename $(notdir $(DEFAULT_SCENARIO)))
	$(Q)echo "report: out/$(basename $(notdir $(DEFAULT_SCENARIO)))/report.html"

# The table of claims (docs/claims.md and README.md) from a real run of each claim scenario.
claims: all
	$(Q)sh scenarios/claims/table.sh ./$(BIN) README.md

# Leaks do not change exit codes (LSAN exitcode=0): the log is searched for sanitizer
# reports instead, which tells fleetsim's leaks from Criterion's own (see
# tests/sanitizer_report.sh).
test: deps $(TESTS) $(BIN)
	$(Q)ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1 LSAN_OPTIONS=exitcode=0 \
	  ./$(TESTS) --jobs 2 \
	  > $(BUILD)/test.log 2>&1; status=$$?; cat $(BUILD)/test.log; \
	sh tests/sanitizer_report.sh $(BUILD)/test.log || exit 1; exit $$status

bench: deps $(BENCH) $(BIN)
	$(Q)./$(BENCH)

# Each harness for FUZZ_SECONDS from its seed corpus (tests/fuzz/corpus/<name>, replayed
# first, so past findings kept there are checked again); new inputs go to
# build/fuzz/corpus/<name>, crashes to build/fuzz/findings/ (tests/fuzz/run.sh).
fuzz: deps
	$(Q)$(MAKE) --no-print-directory FUZZ=1 fuzzers
	$(Q)sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZERS)

fuzzers: $(FUZZERS)
.SECONDARY: $(FUZZ_SRC:%.c=$(BUILD)/%.o)

build/fuzz/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/fuzz_support.o $(LIB)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Rewrites tests/reference/*/ from tests/reference/cases.txt: only when results are meant
# to change (tests/test_golden.c compares fresh runs with them byte for byte).
golden: all
	$(Q)sh tests/golden.sh $(BIN)

# A few small runs under valgrind's memcheck: no leak, no invalid access (tests/valgrind.sh).
valgrind: all
	$(Q)sh tests/valgrind.sh $(BIN)

$(BIN): $(BUILD)/lua/cli.o $(LIB)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LIB): $(CORE_OBJ)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

$(TEST_OBJ) $(BENCH_OBJ): CFLAGS += -DFLEETSIM_BIN='"$(BIN)"'

$(TESTS): $(TEST_OBJ) $(LIB)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(shell $(PKG_CONFIG) --libs criterion)

$(BENCH): $(BENCH_OBJ) $(LIB)
	$(call say,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The API's Lua files are compiled into the binary (lua/modules.h).
$(BUILD)/embed: lua/embed.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) -O2 -o $@ $<

$(LUA_GEN): $(BUILD)/embed $(LUA_API)
	@mkdir -p $(dir $@)
	$(call say,EMBED,$@)$(BUILD)/embed $@ $(LUA_API)

$(LUA_GEN:.c=.o): $(LUA_GEN) $(BUILD)/config
	$(call say,CC,$<)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.c $(BUILD)/config
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/%.cu.o: %.cu $(BUILD)/config
	@mkdir -p $(dir $@)
	$(call say,NVCC,$<)$(NVCC) $(NVCCFLAGS) $(CUDA_DEFS) -I. -c -o $@ $<

clean:
	rm -rf build

-include $(CORE_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) $(BUILD)/lua/cli.d \
         $(FUZZ_SRC:%.c=$(BUILD)/%.d)
