# bench.mk: make bench (included by sim/sim.mk).
#
#   make bench [runs=N] [stage=N]    each stage against the Redis round-trip limit
#
# runs: repeated runs (default 3, 1..20); every figure is their median, with
# the spread. stage=N measures one stage only. The table goes to the
# terminal, every figure of every run to $(BENCH_DATA) (JSON lines).
#
# build/bench/bench is one program for every stage, like build/sim/sim: its
# clients are the stages' build/vN/client processes.

BENCH_PROGRAM := $(BUILD)/bench/bench
BENCH_OBJS := $(BUILD)/sim/bench.o $(BUILD)/sim/bench_measure.o $(BUILD)/sim/bench_report.o
BENCH_DATA := $(BUILD)/bench/bench.jsonl
runs ?= 3

# A bad runs= stops here, before anything is built, with the fix.
ifneq ($(filter bench,$(MAKECMDGOALS)),)
  ifneq ($(words $(runs)) $(filter $(runs),1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20),1 $(runs))
    $(error runs='$(runs)' is not a number of runs: give a whole number from 1 to 20, e.g. make bench runs=3)
  endif
endif

$(BENCH_PROGRAM): $(BENCH_OBJS) $(SIM_LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS) -lm

.PHONY: bench-build

bench-build: $(BENCH_PROGRAM) $(SIM_CLIENTS)
	@:

bench: check-deps
	@$(MAKE) --no-print-directory bench-build
	@$(BENCH_PROGRAM) --runs $(runs) $(if $(stage),--stage $(stage)) --out $(BENCH_DATA)
