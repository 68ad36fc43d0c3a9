# bench.mk: make bench (included by sim/sim.mk).
#
#   make bench [runs=N] [stage=N]    each stage against its own round-trip limit
#
# runs: repeated runs (default 3, 1..20); every figure is their median, with
# the spread. Both go to the program as make has them (runs=N), so that an
# error names what the user typed. stage=N measures one stage only; the
# stages on ZooKeeper (v10, v11) run on an ensemble of three started for
# them, which takes a few seconds more, those on MariaDB (v12, v13) on one
# mariadbd, about a second more. The table goes to the
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
	@$(say) "build  the bench, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS) -lm

.PHONY: bench-build

bench-build: $(BENCH_PROGRAM) $(SIM_CLIENTS)
	@:

bench: check-deps
	@$(MAKE) --no-print-directory bench-build
	@$(BENCH_PROGRAM) 'runs=$(runs)' $(if $(stage),'stage=$(stage)') --out $(BENCH_DATA)

# make bench-test: the bench's structure, never its speed. First its
# logic without a server (tests/run_bench.c: a ZooKeeper server's mntr
# answer read). Bad arguments get one line and exit 2; one run of v5
# writes a data file with a header, the run and the summary, in which the
# counter matches the acquisitions and the capture tells v5's two round
# trips (SET, EVALSHA) from the four commands the server ran (its
# script's GET and DEL too). One run of v10 and one of v11 on an ensemble:
# the bench stops unless the servers received as many requests per pair
# as it replays (2, 3); each of the 8 clients opened one session; watches
# fired, and v11's queue woke at most one waiter per release. One run of
# v12 and one of v13 on a MariaDB: the server counted as many statements
# per pair as the bench replays (3, 2), 8 connections, and every rate and
# the ratio came out above 0 (never a time threshold).
BENCH_TEST_DATA := $(BUILD)/bench/bench-test.jsonl
BENCH_UNIT := $(BUILD)/bench/test_bench
BENCH_UNIT_OBJS := $(BUILD)/tests/run_bench.o $(BUILD)/tests/test_mntr.o $(BUILD)/tests/tcases.o \
                   $(BUILD)/sim/bench/mntr.o $(BUILD)/sim/base/util.o

$(BENCH_UNIT): $(BENCH_UNIT_OBJS)
	@mkdir -p $(@D)
	@$(say) "build  the bench's own tests, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(CHECK_LIBS) -pthread

# zk_run STAGE REQUESTS: one run of a ZooKeeper stage, its data file checked.
zk_run = $(BENCH_PROGRAM) --runs 1 --stage $(1) --out $(BENCH_TEST_DATA) >/dev/null || \
	    { echo "bench-test: bench --runs 1 --stage $(1) failed"; exit 1; }; \
	for want in '"counter_ok":true' '"round_trips_per_pair":$(2),' '"sessions":8,' \
	            '"busy":0,' '"errors":0}'; do \
	    grep -q "$$want" $(BENCH_TEST_DATA) || \
	        { echo "bench-test: v$(1): $(BENCH_TEST_DATA) lacks $$want"; exit 1; }; \
	done; \
	set -- $$(sed -n 's/.*"acquisitions":\([0-9]*\),.*"watch_notifications":\([0-9]*\),.*/\1 \2/p' \
	          $(BENCH_TEST_DATA)); \
	test "$${2:-0}" -ge 1 || { echo "bench-test: v$(1): no watch fired for 8 clients on one lock"; exit 1; }

# mdb_run STAGE STATEMENTS: one run of a MariaDB stage, its data file checked.
mdb_run = $(BENCH_PROGRAM) --runs 1 --stage $(1) --out $(BENCH_TEST_DATA) >/dev/null || \
	    { echo "bench-test: bench --runs 1 --stage $(1) failed"; exit 1; }; \
	for want in '"counter_ok":true' '"round_trips_per_pair":$(2),' \
	            '"requests_seen_per_pair":$(2).00,' '"sessions":8,' '"busy":0,' '"errors":0}'; do \
	    grep -q "$$want" $(BENCH_TEST_DATA) || \
	        { echo "bench-test: v$(1): $(BENCH_TEST_DATA) lacks $$want"; exit 1; }; \
	done; \
	figures=$$(sed -n 's/.*"limit_pairs_per_s":\([^,]*\),"uncontended_pairs_per_s":\([^,]*\),"ratio":\([^,]*\),"acquisitions_per_s":\([^,]*\),.*"acquisitions":\([^,]*\),.*/\1 \2 \3 \4 \5/p' \
	           $(BENCH_TEST_DATA)); \
	echo "$$figures" | awk 'NF != 5 { exit 1 } { for (i = 1; i <= 5; i++) if (!($$i + 0 > 0)) exit 1 }' || \
	    { echo "bench-test: v$(1): limit, stage, ratio, acquisitions/s, acquisitions not all > 0: $$figures"; exit 1; }

.PHONY: bench-test
bench-test: check-deps
	@$(MAKE) --no-print-directory bench-build $(BENCH_UNIT)
	@echo "== bench: its logic without a server (mntr) =="
	@$(BENCH_UNIT)
	@for args in "--runs abc" "--runs 0" "--stage 0" "--stage $$(( $(lastword $(STAGES)) + 1 ))" \
	             "--bogus 1"; do \
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
	@$(call zk_run,10,2)
	@$(call zk_run,11,3); \
	test "$$2" -le "$$1" || \
	    { echo "bench-test: v11: $$2 watch notifications for $$1 releases; its queue wakes one waiter a release"; exit 1; }
	@$(call mdb_run,12,3)
	@$(call mdb_run,13,2)
	@echo "bench-test: arguments, data file, counter, v5's round trips, v10's and v11's requests and watches, v12's and v13's statements and rows: ok"
