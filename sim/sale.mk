# sale.mk: the flash sale on a Redis Cluster (included by the Makefile).
#
#   make sale stage=N [segments=K] [units=S] [buyers=B] [pause=MS] [first=1]
#                     [fault=failover|pause] [seed=X] [retry=MS] [save=FILE]
#   make sale-bench [runs=N] [stages=5,6] [retry=MS]
#                                    sales per second for K = 1..16, v5 and v6,
#                                    as a table and build/sale/index.html
#   make sale-test                   the cluster, its routing, and sales on it
#
# build/sim/sale plays the sale; each buyer is a process of the stage's
# program build/vN/buyer, which takes segment locks with that stage's
# lock and reaches the cluster through plumbing/redis_cluster.c.

SALE_PROGRAM := $(BUILD)/sim/sale
SALE_COMMA := ,
# A stage that takes one Redis key on one master can lock a segment.
SALE_SED := s/^SIM_STAGE(\([0-9]*\), *"[^"]*", *[0-9]*, *redis, *1,.*/\1/p
SALE_STAGES := $(shell sed -n '$(SALE_SED)' sim/stages.def)

define SALE_RULES
$(BUILD)/v$(1)/sale-cluster.o: plumbing/redis_cluster.c $(PLUMBING_HDRS) $(call stage_dir,$(1))/lock.h
	@mkdir -p $$(@D)
	$(Q)$$(CC) $$(CFLAGS) -I$(call stage_dir,$(1)) -Iplumbing -c $$< -o $$@

$(BUILD)/v$(1)/sale-buyer.o: sim/sale_buyer.c $(SIM_HDRS) $(PLUMBING_HDRS) $(call stage_dir,$(1))/lock.h
	@mkdir -p $$(@D)
	$(Q)$$(CC) $$(CFLAGS) -DSTAGE=$(1) -I$(call stage_dir,$(1)) -Iplumbing $(SIM_INC) -c $$< -o $$@

$(BUILD)/v$(1)/buyer: $$(STAGE_OBJS_$(1)) $(BUILD)/v$(1)/sale-cluster.o $(BUILD)/v$(1)/sale-buyer.o \
                      $(BUILD)/v$(1)/sim/history/history_sale.o $(BUILD)/v$(1)/sim/base/util.o
	@$(say) "build  $(call stage_dir,$(1)): its lock in the sale's buyer, $$@"
	$(Q)$$(CC) $$(LDFLAGS) $$(CFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach n,$(SALE_STAGES),$(eval $(call SALE_RULES,$(n))))

SALE_TEST_OBJS := $(BUILD)/tests/run_sale.o $(BUILD)/tests/rundir.o $(BUILD)/tests/tcases.o \
                  $(BUILD)/v$(SALE_TEST_STAGE)/t-test_rcluster.o $(BUILD)/tests/test_sale.o \
                  $(BUILD)/v$(SALE_TEST_STAGE)/sale-cluster.o $(STAGE_OBJS_$(SALE_TEST_STAGE))

$(BUILD)/test_sale: $(SALE_TEST_OBJS) $(SIM_LIB_OBJS) | $(BUILD)/v$(SALE_TEST_STAGE)/buyer
	@$(say) "build  the sale's tests, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

.PHONY: sale-test
sale-test: check-deps
	@$(MAKE) --no-print-directory $(BUILD)/test_sale $(BUILD)/v$(SALE_TEST_STAGE)/buyer
	@echo "== sale: a Redis Cluster of six, routing by slot, MOVED and ASK, sales on it =="
	@$(BUILD)/test_sale

$(SALE_PROGRAM): $(BUILD)/sim/sale_main.o $(BUILD)/sim/bench/sale_bench.o $(SIM_LIB_OBJS)
	@$(say) "build  the sale, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

.PHONY: sale
sale: check-deps
	@test -n "$(stage)" || { echo "usage: make sale stage=N [segments=K] [units=S] [buyers=B] [pause=MS] [first=1] [fault=failover|pause] [seed=X]"; \
	    echo "a segment's lock: stages $(SALE_STAGES) (one Redis key on one master)"; exit 2; }
	@$(MAKE) --no-print-directory $(SALE_PROGRAM) $(if $(filter $(stage),$(SALE_STAGES)),$(BUILD)/v$(stage)/buyer)
	@$(SALE_PROGRAM) 'stage=$(stage)' $(if $(segments),'segments=$(segments)') $(if $(units),'units=$(units)') \
	    $(if $(buyers),'buyers=$(buyers)') $(if $(pause),'pause=$(pause)') $(if $(first),'first=$(first)') \
	    $(if $(fault),'fault=$(fault)') $(if $(seed),'seed=$(seed)') $(if $(save),'save=$(save)') \
	    $(if $(retry),'retry=$(retry)')

# The bench: one cluster, K = 1..16 for each stage, three sales each; the
# page goes to build/sale/index.html.
.PHONY: sale-bench
sale-bench: check-deps
	@$(MAKE) --no-print-directory $(SALE_PROGRAM) $(foreach n,$(filter $(or $(subst $(SALE_COMMA), ,$(stages)),5 6),$(SALE_STAGES)),$(BUILD)/v$(n)/buyer)
	@$(SALE_PROGRAM) bench 'out=$(BUILD)/sale' $(if $(runs),'runs=$(runs)') $(if $(stages),'stages=$(stages)') \
	    $(if $(retry),'retry=$(retry)')
