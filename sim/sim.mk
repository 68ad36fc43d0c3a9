# sim.mk: the simulator's program and its commands (included by the Makefile).
#
#   make sim stage=N scenario=S [seed=K] [lease=MS] [sentinel=1]   one run, with its timeline
#   make demo [jobs=N] [seed=K] [lease=MS] [sentinel=1]   the fault matrix: every scenario x every stage
#
# jobs=N: cells played at once (1..16; default 3 per CPU). sentinel=1: a
# real redis-sentinel promotes the replica in the failover. seed=K varies
# the baseline's hold times; the fault scenarios are the same for every
# seed. lease=MS: 100..10000.
#
# build/sim/sim is one program for every stage: it runs the clients of a
# stage as processes of that stage's build/vN/client.

SIM_PROGRAM := $(BUILD)/sim/sim
SIM_CLIENTS := $(foreach n,$(STAGES),$(BUILD)/v$(n)/client)
# Passed as make has them, name=value, so that an error names what the
# user typed: "lease=50 is below the minimum of 100 ms".
SIM_OPTS = $(if $(seed),'seed=$(seed)') $(if $(lease),'lease=$(lease)') \
           $(if $(sentinel),'sentinel=$(sentinel)')

$(SIM_PROGRAM): $(BUILD)/sim/main.o $(SIM_LIB_OBJS)
	$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: sim demo sim-build sim-build-stage sim-program

# The ':' recipes keep make from saying "Nothing to be done" on a rerun.
sim-build: $(SIM_PROGRAM) $(SIM_CLIENTS)
	@:

sim-build-stage: $(SIM_PROGRAM) $(BUILD)/v$(stage)/client
	@:

sim-program: $(SIM_PROGRAM)
	@:

# Without a stage or a scenario: the usage, with the scenarios as the
# program lists them.
sim: check-deps
	@test -n "$(stage)" -a -n "$(scenario)" || { \
	    $(MAKE) --no-print-directory sim-program >/dev/null || exit 2; \
	    echo "usage: make sim stage=N scenario=S [seed=K] [lease=MS] [sentinel=1]"; \
	    echo "stages: $(STAGE_LIST)"; \
	    echo "scenarios: $$($(SIM_PROGRAM) list --names | tr '\n' ' ')"; \
	    exit 2; }
	@$(MAKE) --no-print-directory sim-build-stage stage=$(stage)
	@$(SIM_PROGRAM) run 'stage=$(stage)' 'scenario=$(scenario)' $(SIM_OPTS)

demo: check-deps
	@$(MAKE) --no-print-directory sim-build
	@$(SIM_PROGRAM) demo $(if $(jobs),'jobs=$(jobs)') $(SIM_OPTS)

# make bench lives in its own file.
-include sim/bench.mk
