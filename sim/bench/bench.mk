# bench.mk: make bench (included by sim/sim.mk).
#
#   make bench [runs=N] [stage=N]    each stage against the Redis round-trip limit
#
# runs: repeated runs (default 3, 1..20); every figure is their median, with
# the spread. Both go to the program as make has them (runs=N), so that an
# error names what the user typed. stage=N measures one stage only. The table goes to the
# terminal, every figure of every run to $(BENCH_DATA) (JSON lines).
#
# build/bench/bench is one program for every stage, like build/sim/sim: its
# clients are the stages' build/vN/client processes.

BENCH_PROGRAM := $(BUILD)/bench/bench
BENCH_OBJS := $(patsubst sim/%.c,$(BUILD)/sim/%.o,$(call sim_srcs,bench))
BENCH_DATA := $(BUILD)/bench/bench.jsonl
runs ?= 3

# The replay of a ZooKeeper stage's requests calls the multithreaded C client.
$(BUILD)/sim/bench/bench_zk.o: CFLAGS += $(ZK_CFLAGS)

$(BENCH_PROGRAM): $(BENCH_OBJS) $(SIM_LIB_OBJS)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS) -lm

.PHONY: bench-build

bench-build: $(BENCH_PROGRAM) $(SIM_CLIENTS)
	@:

bench: check-deps
	@$(MAKE) --no-print-directory bench-build
	@$(BENCH_PROGRAM) 'runs=$(runs)' $(if $(stage),'stage=$(stage)') --out $(BENCH_DATA)

# make bench-test: the bench's structure, never its speed. Bad arguments
# get one line and exit 2; one run of v5 writes a data file with a header,
# the run and the summary, in which the counter matches the acquisitions
# and the capture tells v5's two round trips (SET, EVALSHA) from the four
# commands the server ran (its script's GET and DEL too).
BENCH_TEST_DATA := $(BUILD)/bench/bench-test.jsonl

.PHONY: bench-test
bench-test: check-deps
	@$(MAKE) --no-print-directory bench-build
	@for args in "--runs abc" "--runs 0" "--stage $$(( $(lastword $(STAGES)) + 1 ))" "--bogus 1"; do \
	    out=$$($(BENCH_PROGRAM) $$args 2>&1); rc=$$?; \
	    if [ $$rc -ne 2 ] || [ $$(printf '%s\n' "$$out" | wc -l) -ne 1 ]; then \
	        echo "bench-test: '$$args' gave exit $$rc and: $$out; expected exit 2 and one line"; exit 1; fi; \
	done
	@$(BENCH_PROGRAM) --runs 1 --stage 5 --out $(BENCH_TEST_DATA) >/dev/null || \
	    { echo "bench-test: bench --runs 1 --stage 5 failed"; exit 1; }
	@test $$(wc -l <$(BENCH_TEST_DATA)) -eq 3 || \
	    { echo "bench-test: $(BENCH_TEST_DATA): expected 3 lines (header, run, summary)"; exit 1; }
	@for want in '"counter_ok":true' '"round_trips_per_pair":2,' '"commands_per_pair":4,' \
	             '"busy":0,' '"errors":0}'; do \
	    grep -q "$$want" $(BENCH_TEST_DATA) || \
	        { echo "bench-test: $(BENCH_TEST_DATA) lacks $$want"; exit 1; }; \
	done
	@echo "bench-test: arguments, data file, counter and v5's round trips: ok"
