# sim.mk: the simulator's program and its commands (included by the Makefile).
#
#   make sim stage=N scenario=S [seed=K] [lease=MS] [sentinel=1] [html=1]   one run, with its timeline
#   make sim lib=NAME scenario=S [seed=K] [lease=MS]   the same through a library's driver
#                                    (drivers/drivers.mk)
#   make demo [jobs=N] [seed=K] [lease=MS] [sentinel=1]   the fault matrix: every scenario x every stage
#                                    (libs=1: then the libraries' columns, drivers/drivers.mk)
#   make report [jobs=N] [seed=K] [lease=MS] [sentinel=1] [libs=1]   the same, and as a web site in build/report,
#                                    and as a handout to print, build/report/lockstep.pdf
#   make report-test                 that site in a headless browser (part of make test)
#   make screenshots                 the README's pictures of it, docs/*.png
#
# jobs=N: cells played at once (1..16; default 3 per CPU). sentinel=1: a
# real redis-sentinel promotes the replica in the failover. seed=K varies
# the baseline's hold times; the fault scenarios are the same for every
# seed. lease=MS: 100..10000. html=1: the run's page too, in build/runs
# (a page of its own, outside the site).
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
	@$(say) "build  the simulator, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

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
ifneq ($(lib),)
	@$(MAKE) --no-print-directory libs-build
	@$(SIM_PROGRAM) run 'lib=$(lib)' 'scenario=$(scenario)' $(SIM_OPTS) \
	    $(if $(filter 1,$(html)),'html=$(BUILD)/runs/$(lib)')
else
	@test -n "$(stage)" -a -n "$(scenario)" || { \
	    $(MAKE) --no-print-directory sim-program >/dev/null || exit 2; \
	    echo "usage: make sim stage=N scenario=S [seed=K] [lease=MS] [sentinel=1] [html=1]"; \
	    echo "stages: $(STAGE_LIST)"; \
	    echo "scenarios: $$($(SIM_PROGRAM) list --names | tr '\n' ' ')"; \
	    exit 2; }
	@case '$(html)' in '' | 0 | 1) ;; *) echo "sim: html=$(html) is neither 1 nor 0: give" \
	    "html=1 to write the run's page too, or leave it out" >&2; exit 2 ;; esac
	@$(MAKE) --no-print-directory sim-build-stage stage=$(stage)
	@$(SIM_PROGRAM) run 'stage=$(stage)' 'scenario=$(scenario)' $(SIM_OPTS) \
	    $(if $(filter 1,$(html)),'html=$(BUILD)/runs')
endif

demo: check-deps
	@$(call build_note,$(SIM_PROGRAM) $(SIM_CLIENTS),the simulator and every stage's client,a minute)
	@$(MAKE) --no-print-directory sim-build
	@$(SIM_PROGRAM) demo $(if $(jobs),'jobs=$(jobs)') $(SIM_OPTS)$(if $(filter 1,$(libs)), && \
	    $(MAKE) --no-print-directory libs 'jobs=$(jobs)' 'lease=$(lease)' 'seed=$(seed)' \
	    'sentinel=$(sentinel)')

# The site is written anew each time: no page of an earlier run stays.
REPORT_DIR := $(BUILD)/report
REPORT_BUILD = $(shell git describe --always --dirty 2>/dev/null || echo unknown)

REPORT_PDF := $(REPORT_DIR)/lockstep.pdf

.PHONY: report
# The last site is set aside, not deleted, until the simulator has taken
# its arguments and played every cell: a mistyped jobs=0 or lease=50
# (exit 2, nothing played) and a Ctrl-C or kill in the middle of the
# matrix (the shell's trap, or the simulator's exit on a signal) leave it
# as it was, so the address the last run printed still opens. Then the
# handout: the site's print.html printed by a headless Chromium into one
# PDF; without a Chromium, one line says it was skipped (make report does
# not install one: make deps does).
report: check-deps
	@$(call build_note,$(SIM_PROGRAM) $(SIM_CLIENTS),the simulator and every stage's client,a minute)
	@$(MAKE) --no-print-directory sim-build
	@rm -rf $(REPORT_DIR).old; if [ -d $(REPORT_DIR) ]; then mv $(REPORT_DIR) $(REPORT_DIR).old; fi; \
	restore() { if [ -d $(REPORT_DIR).old ]; then \
	    rm -rf $(REPORT_DIR); mv $(REPORT_DIR).old $(REPORT_DIR); fi; }; \
	trap 'restore; exit 130' INT; trap 'restore; exit 143' TERM; trap 'restore; exit 129' HUP; \
	$(SIM_PROGRAM) report --out $(REPORT_DIR) --src $(CURDIR) --build "$(REPORT_BUILD)" \
	    $(if $(jobs),'jobs=$(jobs)') $(SIM_OPTS); status=$$?; trap - INT TERM HUP; \
	if [ $$status -eq 2 ] || [ $$status -gt 128 ]; then restore; exit $$status; fi; \
	rm -rf $(REPORT_DIR).old; \
	if [ -f $(REPORT_DIR)/print.html ]; then \
	    if ! tools/browser.sh find >/dev/null 2>&1; then \
	        echo "report: $(REPORT_PDF) skipped: no headless Chromium here (make deps installs it)"; \
	    elif tools/browser.sh pdf file://$(CURDIR)/$(REPORT_DIR)/print.html $(REPORT_PDF); then \
	        echo "the handout to print, the matrix and the rows' stories: $(REPORT_PDF)"; \
	    else echo "report: Chromium could not print $(REPORT_DIR)/print.html into $(REPORT_PDF)" >&2; \
	        [ $$status -ne 0 ] || status=1; fi; \
	fi; $(if $(filter 1,$(libs)),[ ! -d $(REPORT_DIR) ] || $(MAKE) --no-print-directory libs \
	    'site=$(REPORT_DIR)' 'jobs=$(jobs)' || status=1;) exit $$status

# make report-test: make report's site, loaded in a headless Chromium
# (tools/browser.sh), which it installs when it can; where it cannot, the
# test says so in one line and passes. A cell that differs from the
# answer key is for the stage tests to judge: the site is tested all the
# same.
SITE_TEST_OBJS := $(BUILD)/tests/run_site.o $(BUILD)/tests/test_site.o $(BUILD)/tests/tcases.o \
                  $(patsubst sim/%.c,$(BUILD)/sim/%.o,$(wildcard sim/history/history*.c) $(call sim_srcs,checker) \
                    sim/base/stage.c sim/base/proc.c sim/base/util.c sim/play/scenarios.c)

$(BUILD)/site_test: $(SITE_TEST_OBJS)
	@$(say) "build  the report's browser test, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(CHECK_LIBS) $(JSON_LIBS) -lm -pthread

.PHONY: report-test
report-test: check-deps
	@tools/deps.sh browser || true
	@$(MAKE) --no-print-directory $(BUILD)/site_test
	@echo "== the report: make report's site in a headless browser =="
	@mkdir -p $(BUILD); $(MAKE) --no-print-directory report >$(BUILD)/report-test.log 2>&1; \
	    grep 'cells match the answer key' $(BUILD)/report-test.log || tail -n 5 $(BUILD)/report-test.log
	@$(BUILD)/site_test $(REPORT_DIR)

# make screenshots: the README's two pictures, taken from a fresh make
# report by the report test's headless browser: the matrix page, and
# the timeline of v3's slow holder.
SHOT_W := 1400

.PHONY: screenshots
screenshots:
	@$(MAKE) --no-print-directory report
	@tools/deps.sh browser
	@tools/browser.sh shot file://$(CURDIR)/$(REPORT_DIR)/index.html docs/matrix.png $(SHOT_W) 1000
	@tools/browser.sh shot file://$(CURDIR)/$(REPORT_DIR)/runs/v3-slow-holder.html \
	    docs/timeline.png $(SHOT_W) 980
	@echo "screenshots: docs/matrix.png docs/timeline.png"

# make bench lives in its own file.
-include sim/bench/bench.mk
