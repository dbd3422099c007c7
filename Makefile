# fleetsim: build, test, install and benchmark.  Read top to bottom: settings, then
# flags, then sources, then rules.  `make V=1` shows the commands.
#
# `make` only builds.  The targets that run something (run, test, bench, claims, golden,
# valgrind, fuzz) first install the missing Debian packages (make deps), as the README
# promises.  CPPFLAGS, CFLAGS, LDFLAGS and LDLIBS are the user's: they are appended to
# the project's own flags (FLEETSIM_*), never replace them, so `make CFLAGS=-O0` keeps
# -I., dependency tracking and -ffp-contract=off.

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

# The user's flags (make's conventions): defaults only, appended after the project's.
CPPFLAGS   ?=
CFLAGS     ?= -O2 -g
LDFLAGS    ?=
LDLIBS     ?=
NVCCFLAGS  ?= -O2

# make install: DESTDIR stages (packaging), PREFIX is where fleetsim will live.
DESTDIR    ?=
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
DATADIR    ?= $(PREFIX)/share
MANDIR     ?= $(DATADIR)/man
INSTALL    ?= install
INSTALL_PROGRAM ?= $(INSTALL) -m 755
INSTALL_DATA    ?= $(INSTALL) -m 644

# Debian packages the project needs (make deps installs what is missing).
DEB_PACKAGES := build-essential pkg-config libgsl-dev libcsv-dev liblua5.4-dev \
                libcriterion-dev gnuplot-nox openmpi-bin libopenmpi-dev libopenblas-dev \
                clang libclang-rt-dev valgrind

# ---- the project's flags ----------------------------------------------------
# -ffp-contract=off: no fused multiply-add, so results are bit-identical across CPUs
# (tests/test_golden.c compares outputs byte for byte).  It comes after the user's
# CFLAGS, so no CFLAGS can turn it off.
# -Wno-format-truncation: messages and key paths are cut to fixed buffers on purpose.
# Libraries missing here are reported, naming their package, before anything compiles
# (need-libraries below), so these lookups stay quiet.
FP_FLAGS          := -ffp-contract=off
FLEETSIM_CPPFLAGS := -I. -D_POSIX_C_SOURCE=200809L \
                     $(shell $(PKG_CONFIG) --cflags gsl lua5.4 2>/dev/null)
FLEETSIM_CFLAGS   := -std=c11 -Wall -Wextra -Wshadow -Wno-unused-parameter \
                     -Wno-format-truncation
DEPFLAGS          := -MMD -MP
FLEETSIM_LDFLAGS  :=
FLEETSIM_LDLIBS   := $(shell $(PKG_CONFIG) --libs gsl lua5.4 2>/dev/null) -lcsv -lm
FLEETSIM_NVCCFLAGS := -std=c++17 -I.

CUDA := $(strip $(CUDA))
SAN  := $(strip $(SAN))
MPI  := $(strip $(MPI))
FUZZ := $(strip $(FUZZ))
BUILD := build
ifeq ($(SAN),1)
  BUILD            := build/san
  FLEETSIM_CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer \
                      -fno-sanitize-recover=undefined
  FLEETSIM_LDFLAGS += -fsanitize=address,undefined
endif
# Fuzzing: every object instrumented for libFuzzer's coverage; only the harnesses link
# its main.  The sandbox's instruction limit is lowered so an endless loop costs a
# fuzzer milliseconds (lua/sandbox.h).
ifeq ($(FUZZ),1)
  CC                := clang
  CUDA              := no
  BUILD             := build/fuzz
  FLEETSIM_CPPFLAGS += -DSANDBOX_INSTRUCTION_LIMIT=2000000ull
  FLEETSIM_CFLAGS   += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
                       -fno-sanitize-recover=undefined -Wno-unknown-warning-option
  FLEETSIM_LDFLAGS  += -fsanitize=fuzzer,address,undefined
endif
# MPI: only sim/mpi_tasks.c uses it (FLEETSIM_MPI); mpicc adds Open MPI's flags.
ifeq ($(MPI),1)
  CC                := mpicc
  BUILD             := $(BUILD)/mpi
  FLEETSIM_CPPFLAGS += -DFLEETSIM_MPI
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
  # The static runtime: the binary runs where no CUDA library is installed.
  FLEETSIM_LDLIBS += -L$(CUDA_ROOT)/lib64 -lcudart_static -ldl -lrt -lpthread -lstdc++
  # cuBLAS, cuBLASLt and NCCL are opened at run time by the calibration (kernels/
  # calib_cuda_blas.cu says why), from the loader's path or from here.
  FLEETSIM_NVCCFLAGS += -DFLEETSIM_CUDA_LIBDIR='"$(CUDA_ROOT)/lib64"'
endif

# Link-time optimisation where the compiler is gcc: the program is optimised whole, so
# the event loop's calls across files (the engine into the replica, the replica into
# the cost model's small functions) are inlined like calls within one.  Measured on the
# serving fleet (tests/bench/serving.c's, alternating runs, 2026-12-07): 3-4% less time
# a request at 64 and at 8,000 replicas; outputs byte-identical (no fused multiply-add
# either way: FP_FLAGS, passed to the link with the user's CFLAGS, since the code is
# generated there).  Its objects are archived by gcc-ar, which indexes them without
# relying on binutils' plugin folder.  Not under SAN or FUZZ, whose builds are for
# finding faults.
ifneq ($(SAN),1)
  ifneq ($(FUZZ),1)
    ifneq ($(findstring gcc version,$(shell $(CC) -v 2>&1)),)
      LTO_FLAGS := -flto=auto
    endif
  endif
endif
ARCHIVE := $(if $(LTO_FLAGS),gcc-ar,ar)

# What every compile and link runs: the project's flags, then the user's.
COMPILE  = $(CC) $(FLEETSIM_CPPFLAGS) $(CPPFLAGS) $(FLEETSIM_CFLAGS) $(CFLAGS) $(FP_FLAGS) \
           $(LTO_FLAGS) $(DEPFLAGS)
LINK     = $(CC) $(FLEETSIM_LDFLAGS) $(LDFLAGS) $(LTO_FLAGS) $(if $(LTO_FLAGS),$(CFLAGS) $(FP_FLAGS))
LIBS     = $(FLEETSIM_LDLIBS) $(LDLIBS)

ifeq ($(V),1)
  Q :=
  say :=
else
  Q := @
  say = @printf '  %-7s %s\n' $(1) $(2);
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

# Written by hand; make test checks it against `fleetsim help` (tests/man_page.sh).
MAN_PAGE  := docs/fleetsim.1

# What make install copies besides the binary (the Lua API and catalogs are compiled
# into it): the man page and the example scenarios with the traces they replay, under
# $(PKGDATADIR) with the same paths as here (trace paths are relative to a scenario),
# and the table of published measurements that `fleetsim validate` reads, under
# $(PKGDATADIR)/validation (the binary finds it from its own path: ../share/fleetsim).
# DATA_DIRS: the folders it makes there, the deepest first.
MAN1DIR    := $(MANDIR)/man1
PKGDATADIR := $(DATADIR)/fleetsim
DATA_DIRS  := scenarios/claims scenarios/traces scenarios validation
DATA_FILES := $(sort $(wildcard scenarios/*.lua scenarios/claims/*.lua \
                                scenarios/traces/*.csv scenarios/traces/README.md))
VALIDATION_FILES := published.csv fit.csv README.md

# A change of settings or of the list of source files rebuilds everything: objects
# depend on this file, rewritten only when the settings differ from the last build's
# (a removed test file must leave the test binary too).  Goals that build nothing leave
# it alone (`sudo make deps` makes no build folder that root owns).
BUILD_CONFIG := cuda=$(HAVE_CUDA) cc=$(CC) compile=$(COMPILE) link=$(LINK) libs=$(LIBS) \
                nvcc=$(NVCC) $(FLEETSIM_NVCCFLAGS) $(NVCCFLAGS) \
                sources=$(CORE_SRC) $(TEST_SRC) $(BENCH_SRC) $(LUA_API)
ifneq ($(filter-out deps clean uninstall,$(or $(MAKECMDGOALS),all)),)
  ifneq ($(file <$(BUILD)/config),$(BUILD_CONFIG))
    $(shell mkdir -p $(BUILD))
    $(file >$(BUILD)/config,$(BUILD_CONFIG))
  endif
endif

# ---- rules ------------------------------------------------------------------
# A recipe that fails leaves no half-written target behind.
.DELETE_ON_ERROR:
.PHONY: all deps deps-validate deps-browser report-check run test bench claims docs golden valgrind fuzz fuzzers install uninstall \
        clean need-libraries need-criterion
all: $(BIN)

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

# The optional real-engine check (tools/torch_steps.py, tools/calibrate_loop.sh): Debian's
# PyTorch, and TCMalloc, the allocator the engine runs on (vLLM's CPU guide asks for it).
# Never needed by make, make run or make test.
VALIDATE_PACKAGES := python3-torch libtcmalloc-minimal4
deps-validate:
	$(Q)missing=""; for p in $(VALIDATE_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then :; elif [ "$$(id -u)" = 0 ]; then \
	  echo "make deps-validate: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "make deps-validate: run: sudo apt-get install -y$$missing"; exit 1; fi

# The optional browser check of report.html (make report-check): Debian's chromium.
deps-browser:
	$(Q)if command -v chromium > /dev/null; then :; elif [ "$$(id -u)" = 0 ]; then \
	  echo "make deps-browser: installing chromium"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	else echo "make deps-browser: run: sudo apt-get install -y chromium"; exit 1; fi

# report.html of the default scenario, a sweep and a claim in headless chromium (about
# 2 minutes): the page loads, every chart drew, headline and results table are there;
# screenshots in build/report-check/.  Without chromium it says so and passes.
report-check: $(BIN)
	$(Q)sh tests/report_check.sh ./$(BIN) $(BUILD)/report-check

# A library missing is a loud error naming its Debian package, before anything
# compiles; only targets that compile ask (make deps and make clean work without them).
# libcsv has no .pc file: a two-line program must compile and link (\043 is '#').
have_pc = $(shell $(PKG_CONFIG) --exists $(1) 2>/dev/null && echo yes)
have_csv = $(shell printf '\043include <csv.h>\nint main(void) { return csv_init(0, 0); }\n' \
             | $(CC) $(CPPFLAGS) $(LDFLAGS) -x c -o /dev/null - -x none -lcsv >/dev/null 2>&1 \
             && echo yes)
missing = $(error $(1) not found: install the Debian package $(2) (make deps installs everything))
need-libraries:
	$(if $(shell command -v $(PKG_CONFIG)),,$(call missing,$(PKG_CONFIG),pkg-config))
	$(if $(call have_pc,gsl),,$(call missing,GSL (gsl.pc),libgsl-dev))
	$(if $(call have_pc,lua5.4),,$(call missing,Lua 5.4 (lua5.4.pc),liblua5.4-dev))
	$(if $(have_csv),,$(call missing,libcsv (csv.h and -lcsv),libcsv-dev))
need-criterion: need-libraries
	$(if $(call have_pc,criterion),,$(call missing,Criterion (criterion.pc),libcriterion-dev))

# The targets that run something: `make deps` first, then the same goal in a second
# make, which reads this file again and so finds the libraries deps installed.
RUN_GOALS := run test bench claims docs golden valgrind
# One goal at a time there: two second makes must not build the same files at once.
ifndef FLEETSIM_DEPS_DONE
ifneq ($(filter $(RUN_GOALS),$(MAKECMDGOALS)),)
.NOTPARALLEL:
endif
$(RUN_GOALS): deps
	$(Q)$(MAKE) --no-print-directory FLEETSIM_DEPS_DONE=1 $@
else

# The main job: the default scenario (a chatbot on dedicated or shared GPUs, a training
# job beside it); its report is out/<name>/report.html.
DEFAULT_SCENARIO ?= scenarios/default.lua
run: $(BIN)
	$(Q)./$(BIN) run $(DEFAULT_SCENARIO) -o out/$(basename $(notdir $(DEFAULT_SCENARIO)))
	$(Q)echo "report: out/$(basename $(notdir $(DEFAULT_SCENARIO)))/report.html"

# Leaks do not change exit codes (LSAN exitcode=0): the log is searched for sanitizer
# reports instead, which tells fleetsim's leaks from Criterion's own (see
# tests/sanitizer_report.sh).  Then the man page is checked against `fleetsim help`.
test: $(TESTS) $(BIN)
	$(Q)ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=1 LSAN_OPTIONS=exitcode=0 \
	  ./$(TESTS) --jobs 2 --tap=$(BUILD)/test.tap \
	  > $(BUILD)/test.log 2>&1; status=$$?; cat $(BUILD)/test.log; \
	sed -n 's/^ok - \(.*\)  # SKIP \(.*\)/skipped \1: \2/p' $(BUILD)/test.tap \
	  | grep -v ': test was skipped$$' || true; \
	sh tests/sanitizer_report.sh $(BUILD)/test.log || exit 1; exit $$status
	$(Q)sh tests/man_page.sh ./$(BIN) $(MAN_PAGE)

bench: $(BENCH) $(BIN)
	$(Q)./$(BENCH)

# The table of claims (docs/claims.md) from a real run of each claim scenario.
claims: $(BIN)
	$(Q)sh scenarios/claims/table.sh ./$(BIN)

# The figure blocks of README.md and docs/*.md, rerun and rewritten (tests/test_docs.c
# checks the quick ones on every make test).
docs: $(BIN)
	$(Q)sh docs/figures.sh ./$(BIN)

# Rewrites tests/reference/*/ from tests/reference/cases.txt: only when results are meant
# to change (tests/test_golden.c compares fresh runs with them byte for byte).
golden: $(BIN)
	$(Q)sh tests/golden.sh $(BIN)

# A few small runs under valgrind's memcheck: no leak, no invalid access (tests/valgrind.sh).
valgrind: $(BIN)
	$(Q)sh tests/valgrind.sh $(BIN)
endif

# Each harness for FUZZ_SECONDS from its seed corpus (tests/fuzz/corpus/<name>, replayed
# first, so past findings kept there are checked again); new inputs go to
# build/fuzz/corpus/<name>, crashes to build/fuzz/findings/ (tests/fuzz/run.sh).
fuzz: deps
	$(Q)$(MAKE) --no-print-directory FUZZ=1 fuzzers
	$(Q)sh tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZERS)

fuzzers: $(FUZZERS)
.SECONDARY: $(FUZZ_SRC:%.c=$(BUILD)/%.o)

build/fuzz/fuzz_%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/fuzz_support.o $(LIB)
	$(call say,LINK,$@)$(LINK) -o $@ $^ $(LIBS)

# The binary, its man page (the installed copy names the installed scenarios' folder)
# and the example scenarios; uninstall removes exactly these, and the folders install
# made under $(PKGDATADIR) once they are empty.
install: $(BIN)
	$(call say,INSTALL,$(DESTDIR)$(PREFIX))$(INSTALL) -d $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(MAN1DIR) $(addprefix $(DESTDIR)$(PKGDATADIR)/,$(DATA_DIRS))
	$(Q)$(INSTALL_PROGRAM) $(BIN) $(DESTDIR)$(BINDIR)/fleetsim
	$(Q)sed 's|/usr/local/share/fleetsim|$(PKGDATADIR)|g' $(MAN_PAGE) \
	  > $(DESTDIR)$(MAN1DIR)/fleetsim.1 && chmod 644 $(DESTDIR)$(MAN1DIR)/fleetsim.1
	$(Q)for f in $(DATA_FILES); do \
	  $(INSTALL_DATA) $$f $(DESTDIR)$(PKGDATADIR)/$$f || exit 1; done
	$(Q)for f in $(VALIDATION_FILES); do \
	  $(INSTALL_DATA) tests/validation/$$f $(DESTDIR)$(PKGDATADIR)/validation/$$f || exit 1; done

uninstall:
	$(call say,RM,$(DESTDIR)$(PREFIX))rm -f $(DESTDIR)$(BINDIR)/fleetsim \
	  $(DESTDIR)$(MAN1DIR)/fleetsim.1 $(addprefix $(DESTDIR)$(PKGDATADIR)/,$(DATA_FILES)) \
	  $(addprefix $(DESTDIR)$(PKGDATADIR)/validation/,$(VALIDATION_FILES))
	$(Q)for d in $(addprefix $(DESTDIR)$(PKGDATADIR)/,$(DATA_DIRS)) $(DESTDIR)$(PKGDATADIR); do \
	  [ ! -d $$d ] || rmdir --ignore-fail-on-non-empty $$d || exit 1; done

$(BIN): $(BUILD)/lua/cli.o $(LIB)
	$(call say,LINK,$@)$(LINK) -o $@ $^ $(LIBS)

$(LIB): $(CORE_OBJ)
	$(call say,AR,$@)rm -f $@ && $(ARCHIVE) rcs $@ $^

$(TEST_OBJ) $(BENCH_OBJ): FLEETSIM_CPPFLAGS += -DFLEETSIM_BIN='"$(BIN)"'
$(TEST_OBJ): FLEETSIM_CPPFLAGS += $(shell $(PKG_CONFIG) --cflags criterion 2>/dev/null)
$(TEST_OBJ): | need-criterion

$(TESTS): $(TEST_OBJ) $(LIB)
	$(call say,LINK,$@)$(LINK) -o $@ $^ $(LIBS) $(shell $(PKG_CONFIG) --libs criterion)

$(BENCH): $(BENCH_OBJ) $(LIB)
	$(call say,LINK,$@)$(LINK) -o $@ $^ $(LIBS)

# The API's Lua files are compiled into the binary (lua/modules.h).
$(BUILD)/embed: lua/embed.c
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(CC) -O2 -o $@ $<

$(LUA_GEN): $(BUILD)/embed $(LUA_API)
	@mkdir -p $(dir $@)
	$(call say,EMBED,$@)$(BUILD)/embed $@ $(LUA_API)

$(LUA_GEN:.c=.o): $(LUA_GEN) $(BUILD)/config | need-libraries
	$(call say,CC,$<)$(COMPILE) -c -o $@ $<

$(BUILD)/%.o: %.c $(BUILD)/config | need-libraries
	@mkdir -p $(dir $@)
	$(call say,CC,$<)$(COMPILE) -c -o $@ $<

$(BUILD)/%.cu.o: %.cu $(BUILD)/config
	@mkdir -p $(dir $@)
	$(call say,NVCC,$<)$(NVCC) $(FLEETSIM_NVCCFLAGS) $(NVCCFLAGS) -c -o $@ $<

clean:
	rm -rf build

-include $(CORE_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BENCH_OBJ:.o=.d) $(BUILD)/lua/cli.d \
         $(FUZZ_SRC:%.c=$(BUILD)/%.d)
