# lockstep: a Redis lock in stages, and a simulator that breaks them.
#
#   make test [jobs=N]              every stage, the simulator's, the servers', the bench's,
#                                   the commands' and the report's own tests, and the grader's
#                                   proof, N suites at a time; a line per suite with its seconds
#                                   at the end (make test-times prints it again)
#   make stage=N test               stage N: its unit suite and its row of the fault matrix
#   make demo [jobs=N]              the fault matrix: every scenario x every stage
#                                   (libs=1: then redis-py, kazoo and Curator beside their
#                                   stages, docs/drivers.md; make libs: those columns alone)
#   make sim stage=N scenario=S     one run with its timeline (lease=MS, sentinel=1 optional;
#                                   seed=K varies the baseline; html=1: its page too, in build/runs)
#   make sim lib=NAME scenario=S    one run through a library's driver (drivers/NAME)
#   make report [jobs=N]            the matrix as make demo plays it, and as a web site:
#                                   build/report/index.html
#   make bench                      each stage against its own round-trip limit, on Redis, ZooKeeper
#                                   or MariaDB (stage=N: one stage)
#   make sale stage=N segments=K    a flash sale on a Redis Cluster, a lock per segment
#                                   (sim/sale.mk: first=1, fault=failover|pause, sale-bench)
#   make diff from=N to=M           what changed between two stages (side=1: side by side,
#                                   full=1: whole files)
#   make diff to=M [part=K]         what stage M changed on the stage it is built on
#                                   (part=K: one idea of a stage that brings several)
#   make exercise stage=N [part=K]  a stage as an exercise: exercises/vN/ (its base's lock.c,
#                                   lock.h, TASK.md); part=K: one idea of a stage told in parts
#   make grade stage=N [part=K] [src=FILE]
#                                   the workspace's lock.c (or FILE) graded by stage N's own
#                                   suite and matrix row: a line per check, then the score
#   make handout stage=N [part=K]   the workspace as a tarball: build/handout/vN.tar.gz
#   make deps                       install what is missing (test, demo, sim, bench do it too);
#                                   libs=1: the libraries' packages too
#   make clean
#
# SANITIZE=1 builds everything with AddressSanitizer and UBSan into build/sanitize/.
# V=1 prints every compiler line (a build says what it builds, a line per program).

# The stages: one line each in sim/stages.def, read here as
# number:folder:base (the scripts' stage list), and the kind of server of
# each as number:server. Everything below comes from that list: a new
# stage is its folder and its line there.
STAGE_SED := s/^SIM_STAGE(\([0-9]*\), *"\([^"]*\)", *\([0-9]*\),.*/\1:\2:\3/p
SERVER_SED := s/^SIM_STAGE(\([0-9]*\), *"[^"]*", *[0-9]*, *\([a-z]*\),.*/\1:\2/p
STAGE_LINES := $(shell sed -n '$(STAGE_SED)' sim/stages.def)
STAGE_SERVERS := $(shell sed -n '$(SERVER_SED)' sim/stages.def)
ifeq ($(STAGE_LINES),)
  $(error sim/stages.def lists no stage: restore it from git)
endif
STAGES := $(foreach l,$(STAGE_LINES),$(firstword $(subst :, ,$(l))))
stage_dir = $(word 2,$(subst :, ,$(filter $(1):%,$(STAGE_LINES))))
stage_server = $(word 2,$(subst :, ,$(filter $(1):%,$(STAGE_SERVERS))))
STAGE_LIST := $(foreach n,$(STAGES),$(n) ($(call stage_dir,$(n))))

# A bad stage= stops here, whatever the target, with the valid values.
ifneq ($(stage),)
  ifeq ($(filter $(stage),$(STAGES)),)
    $(error stage=$(stage) is not a stage; valid: $(STAGE_LIST))
  endif
endif

CFLAGS := -std=c11 -Wall -Wextra -Wstrict-prototypes -Wwrite-strings -Werror -pthread -g
ifeq ($(SANITIZE),1)
  CFLAGS += -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=address,undefined
  BUILD := build/sanitize
else
  CFLAGS += -O2
  BUILD := build
endif
# A build says what it builds, a line per program (a stage's client, its
# suite), and compiles quietly; make V=1 prints every compiler line. One
# that has anything to do says so first, with how long a first build took
# on a busy 2-core machine, one compiler at a time (make -q asks without
# building): the simulator and the clients 54 s, the suites 121 s more.
ifeq ($(V),1)
  Q :=
  say := :
else
  Q := @
  say := echo
endif
build_note = $(MAKE) -q --no-print-directory $(1) 2>/dev/null || echo "building $(2) into \
$(BUILD)/ (from nothing: about $(3) on 2 cores, less with -j2; V=1 prints each compiler line)"

HIREDIS_LIBS := -lhiredis
JSON_LIBS := -lcjson
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
# The ZooKeeper C client, multithreaded: a stage whose server is zookeeper
# compiles with its flags, and the simulator's observer of an ensemble
# (sim/servers/zk_observer.c) links the library into every program that
# plays a run.
ZK_CFLAGS := -DTHREADED
ZK_LIBS := -lzookeeper_mt
# cmark-gfm, GitHub's Markdown renderer, and its extensions (tables): the
# site shows a README as GitHub does (sim/html/html_md.c).
MD_LIBS := -lcmark-gfm-extensions -lcmark-gfm
# The MariaDB client, Connector/C (libmariadb-dev): the mariadb stages and
# the simulator's MariaDB servers (sim/servers/mariadbd.c) include its
# <mysql.h>, and every program that starts servers links it.
MARIADB_CFLAGS := $(shell pkg-config --cflags libmariadb 2>/dev/null)
MARIADB_LIBS := $(or $(shell pkg-config --libs libmariadb 2>/dev/null),-lmariadb)
LDLIBS := $(HIREDIS_LIBS) $(JSON_LIBS) $(ZK_LIBS) $(MD_LIBS) $(MARIADB_LIBS) -pthread
stage_cflags = $(if $(filter zookeeper,$(call stage_server,$(1))),$(ZK_CFLAGS)) \
               $(if $(filter mariadb,$(call stage_server,$(1))),$(MARIADB_CFLAGS))

# The simulator's folders, one per role, lowest layer first: a file
# includes headers from its own folder and the folders before it, never
# from one after it (tests/layout.sh checks that). The README's layout
# section says what each folder owns.
SIM_LAYERS := base history checker servers client play report html bench
SIM_INC := -Isim $(addprefix -Isim/,$(SIM_LAYERS)) $(MARIADB_CFLAGS)
SIM_HDRS := $(wildcard sim/*.def $(SIM_LAYERS:%=sim/%/*.h))
sim_srcs = $(filter-out $(SIM_SHIM_SRC),$(wildcard $(1:%=sim/%/*.c)))

# The clock-jump fault's preload library: loaded into the redis-server
# whose clock jumps, linked into nothing (its clock_gettime would move the
# simulator's own clock), and built without the sanitizers, whose runtime
# redis-server does not have. The simulator finds it next to the stages'
# folders of the build it runs from (build/clockshim.so for build/v3/client).
SIM_SHIM_SRC := sim/servers/clockshim.c
SIM_SHIM := $(BUILD)/clockshim.so
SHIM_CFLAGS := -std=c11 -Wall -Wextra -Wstrict-prototypes -Wwrite-strings -Werror -O2 \
               -fPIC -shared

# The ZooKeeper servers' classes, parsed and verified once for every JVM
# the simulator and the tests start (java's class data sharing: a quarter
# less CPU to start a server), dumped by a server that make starts for
# three seconds and stops, an ensemble of one that leads. A JVM maps the
# archive only when its class path and options are the dump's, so
# sim/servers/ensemble.c is compiled with these very words. Without java
# (make deps installs it) there is none, and the servers start without.
# The logger on the class path writes a server's warnings (a
# BindException says why a node died), each with its time, to match a
# client's failure; -XX:-UsePerfData leaves no
# /tmp/hsperfdata_<user>/<pid> behind a SIGKILL.
ZK_CLASS_DATA := $(BUILD)/zookeeper.jsa
# A MariaDB data dir as mariadb-install-db makes it, made once by make:
# every MariaDB server the tests and the simulator start copies it (22 MB,
# a few milliseconds) where it would run the installer (a second of CPU,
# and a shell script whose mariadbd outlives a run killed meanwhile).
# Without mariadbd (make deps installs it) there is none, and each server
# runs the installer itself; sim/servers/mariadbd.c gets its path.
MARIADB_DATA := $(BUILD)/mariadb-data
ZK_JAR := /usr/share/java/zookeeper.jar
ZK_CLASS_PATH := $(ZK_JAR):/usr/share/java/slf4j-simple.jar
ZK_JAVA_OPTS := -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData \
                -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
                -Dorg.slf4j.simpleLogger.showDateTime=true \
                -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS

# The simulator's orchestrating side (linked into sim, the tests and bench)
# and its client side (linked with one stage into build/vN/client).
SIM_LIB_SRCS := $(call sim_srcs,base history checker servers play report html) \
                $(wildcard sim/client/resource.c)
SIM_CLIENT_SRCS := $(wildcard sim/client/*.c sim/history/history.c sim/history/control.c \
                     sim/servers/observer.c sim/base/util.c sim/base/proc.c sim/base/password.c \
                     sim/base/stage.c)
SIM_LIB_OBJS := $(SIM_LIB_SRCS:sim/%.c=$(BUILD)/sim/%.o)

# The Check suites: one contract suite compiled per stage, the harness, the
# matrix row, and the simulator's own tests (no Redis).
TEST_STAGE_SRCS := $(wildcard tests/harness.c tests/lock_helpers.c tests/test_lock.c \
                   tests/test_lock_basics.c tests/test_lock_reentry.c tests/test_lock_owner.c \
                   tests/test_lock_tokens.c tests/test_lock_lease.c tests/test_lock_pubsub.c \
                   tests/test_lock_contention.c tests/test_lock_errors.c tests/test_lock_quorum.c \
                   tests/test_queue.c tests/test_clock.c tests/test_proxy.c tests/test_matrix.c \
                   tests/test_zk.c tests/test_zk_faults.c tests/test_zk_queue.c tests/zk_tests.c tests/zk_client.c \
                   tests/test_mariadb.c \
                   tests/run_stage.c tests/row_claims.c tests/tcases.c tests/rundir.c)
# A stage's ZooKeeper suite counts the watch notifications a release sends
# as the bench counts them: from the servers' mntr answers (sim/bench/mntr.c).
TEST_BENCH_OBJS := $(BUILD)/sim/bench/mntr.o
TEST_SIM_SRCS := $(wildcard tests/story.c tests/test_checker.c tests/test_deadlock.c \
                   tests/test_history.c tests/report_helpers.c tests/test_report.c \
                   tests/test_report_timeline.c tests/test_verdicts.c \
                   tests/test_nodes.c tests/test_tally.c tests/test_stages.c tests/test_pool.c \
                   tests/test_html.c tests/pages.c tests/row_claims.c tests/test_row_stories.c \
                   tests/test_matrix_page.c tests/test_fault_story.c tests/test_zk_dump.c \
                   tests/test_libs.c tests/tcases.c tests/run_sim.c)

.PHONY: all test stage-test demo sim bench diff deps check-deps clean
.DEFAULT_GOAL := all

all: check-deps
	@$(call build_note,$(foreach n,$(STAGES),$(BUILD)/v$(n)/tests),every stage and its suite,3 minutes)
	@$(MAKE) --no-print-directory $(foreach n,$(STAGES),$(BUILD)/v$(n)/tests)

# ---- dependency check --------------------------------------------------
# Every command that builds or runs installs what is missing first
# (apt-get, sudo when not root), so a fresh machine needs no other command.
check-deps:
	@tools/deps.sh ensure

deps:
	@tools/deps.sh install $(if $(filter 1,$(libs)),libs)

# ---- stages ------------------------------------------------------------
# A stage's plumbing: what every stage of one kind of server shares (the
# connection, errors, config checks, the wait loop), written once and
# compiled with each stage of that kind against the stage's own lock.h,
# so that a stage builds from its folder and its kind's plumbing alone.
# Which files are a kind's plumbing, tools/plumbing.sh says (its rule:
# plumbing/<server>.h, .c and the <server>_*.c without a header of their
# own); each becomes $(BUILD)/vN/plumbing/<file>.o. A kind without a
# plumbing header has none.
PLUMBING_HDRS := $(wildcard plumbing/*.h)
$(foreach k,$(sort $(foreach s,$(STAGE_SERVERS),$(word 2,$(subst :, ,$(s))))),\
  $(eval PLUMBING_$(k) := $(filter %.c,$(shell tools/plumbing.sh $(k)))))
stage_plumbing = $(PLUMBING_$(call stage_server,$(1)))
stage_plumbing_objs = $(patsubst plumbing/%.c,$(BUILD)/v$(1)/plumbing/%.o,$(call stage_plumbing,$(1)))

# One template per stage: its lock objects, its test runner, its client.
define STAGE_RULES
$(BUILD)/v$(1)/%.o: $(call stage_dir,$(1))/%.c $(call stage_dir,$(1))/lock.h $(PLUMBING_HDRS)
	@mkdir -p $$(@D)
	$(Q)$$(CC) $$(CFLAGS) $(call stage_cflags,$(1)) -I$(call stage_dir,$(1)) -Iplumbing -c $$< -o $$@

$(BUILD)/v$(1)/plumbing/%.o: plumbing/%.c $(call stage_dir,$(1))/lock.h $(PLUMBING_HDRS)
	@mkdir -p $$(@D)
	$(Q)$$(CC) $$(CFLAGS) $(call stage_cflags,$(1)) -I$(call stage_dir,$(1)) -Iplumbing -c $$< -o $$@

$(BUILD)/v$(1)/t-%.o: tests/%.c $(wildcard tests/*.h) $(SIM_HDRS)
	@mkdir -p $$(@D)
	$(Q)$$(CC) $$(CFLAGS) $(ZK_CFLAGS) -DSTAGE=$(1) -DSRCDIR='"$(CURDIR)"' -I$(call stage_dir,$(1)) -Iplumbing $(SIM_INC) -Itests -c $$< -o $$@

STAGE_OBJS_$(1) := $$(patsubst $(call stage_dir,$(1))/%.c,$(BUILD)/v$(1)/%.o,$$(wildcard $(call stage_dir,$(1))/*.c)) \
                   $(call stage_plumbing_objs,$(1))

$(BUILD)/v$(1)/tests: $$(STAGE_OBJS_$(1)) $$(TEST_STAGE_SRCS:tests/%.c=$(BUILD)/v$(1)/t-%.o) $$(SIM_LIB_OBJS) $$(TEST_BENCH_OBJS) $$(if $$(filter sim/client/client_main.c,$$(SIM_CLIENT_SRCS)),$(BUILD)/v$(1)/client)
	@$(say) "build  $(call stage_dir,$(1)): its contract suite and matrix row, $$@"
	$(Q)$$(CC) $$(LDFLAGS) $$(CFLAGS) -o $$@ $$(filter %.o,$$^) $$(CHECK_LIBS) $$(LDLIBS)

# The client side of the simulator calls the lock: built per stage, against
# that stage's lock.h, like the stage itself.
SIM_CLIENT_OBJS_$(1) := $$(SIM_CLIENT_SRCS:sim/%.c=$(BUILD)/v$(1)/sim/%.o)

$(BUILD)/v$(1)/sim/%.o: sim/%.c $(SIM_HDRS) $(call stage_dir,$(1))/lock.h $(PLUMBING_HDRS)
	@mkdir -p $$(@D)
	$(Q)$$(CC) $$(CFLAGS) -DSTAGE=$(1) -I$(call stage_dir,$(1)) -Iplumbing $(SIM_INC) -c $$< -o $$@

$(BUILD)/v$(1)/client: $$(STAGE_OBJS_$(1)) $$(SIM_CLIENT_OBJS_$(1)) | $(SIM_SHIM) $(ZK_CLASS_DATA) $(MARIADB_DATA)
	@$(say) "build  $(call stage_dir,$(1)): its lock in the simulator's client, $$@"
	$(Q)$$(CC) $$(LDFLAGS) $$(CFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach n,$(STAGES),$(eval $(call STAGE_RULES,$(n))))

$(BUILD)/sim/%.o: sim/%.c $(SIM_HDRS)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(SIM_INC) -c $< -o $@

$(SIM_SHIM): $(SIM_SHIM_SRC)
	@mkdir -p $(@D)
	@$(say) "build  the clock-jump library, $@"
	$(Q)$(CC) $(SHIM_CFLAGS) -o $@ $<

$(MARIADB_DATA):
	@mkdir -p $(@D)
	@rm -rf $@.tmp
	@if command -v mariadb-install-db >/dev/null 2>&1; then \
	    echo "mariadb-install-db --datadir=$@ (the MariaDB servers' first data dir, 1 s)"; \
	    mariadb-install-db --no-defaults --datadir=$(CURDIR)/$@.tmp \
	        --auth-root-authentication-method=normal --skip-test-db >$@.log 2>&1 && \
	    mv $@.tmp $@ || { rm -rf $@.tmp; echo "mariadb-install-db failed: see $@.log"; }; fi

$(ZK_CLASS_DATA): Makefile
	@mkdir -p $(@D)
	@if command -v java >/dev/null 2>&1 && [ -f $(ZK_JAR) ]; then \
	    echo "java -XX:ArchiveClassesAtExit=$@ (a ZooKeeper server's classes, 3 s)"; \
	    d=$$(mktemp -d) && p=$$((20000 + $$$$ % 20000)) && echo 1 >$$d/myid && \
	    printf 'tickTime=50\ninitLimit=200\nsyncLimit=40\ndataDir=%s\nclientPortAddress=127.0.0.1\nclientPort=%d\n%s\n%s\n%s%d:%d\n' \
	        "$$d" $$p admin.enableServer=false standaloneEnabled=false server.1=127.0.0.1: \
	        $$((p + 1)) $$((p + 2)) >$$d/zoo.cfg && \
	    { java $(ZK_JAVA_OPTS) -XX:ArchiveClassesAtExit=$@.tmp -Djava.io.tmpdir=$$d \
	        -cp $(ZK_CLASS_PATH) \
	        org.apache.zookeeper.server.quorum.QuorumPeerMain $$d/zoo.cfg >$@.log 2>&1 & \
	      pid=$$!; sleep 3; kill -TERM $$pid; wait $$pid; }; \
	    rm -rf $$d; \
	    if [ -s $@.tmp ]; then mv -f $@.tmp $@; else rm -f $@.tmp; \
	        echo "note: no class data for ZooKeeper (see $@.log)"; fi; \
	fi

# ---- course mode -----------------------------------------------------------
# A student's lock.c in place of a stage's own: tools/grade.sh copies it to
# $(GRADE_DIR)/vN/lock.c, next to a copy of the stage's lock.h (so the
# contract is the stage's, whatever the student's folder holds), and links
# it with the stage's own test objects and client side, built as make
# stage=N test builds them. Nothing here writes into a stage folder.
GRADE_DIR ?= $(BUILD)/grade

define GRADE_RULES
$(GRADE_DIR)/v$(1)/lock.o: $(GRADE_DIR)/v$(1)/lock.c $(GRADE_DIR)/v$(1)/lock.h $(PLUMBING_HDRS)
	$(Q)$$(CC) $$(CFLAGS) $(call stage_cflags,$(1)) -I$(GRADE_DIR)/v$(1) -Iplumbing -c $$< -o $$@

GRADE_OBJS_$(1) := $(GRADE_DIR)/v$(1)/lock.o $(call stage_plumbing_objs,$(1))

$(GRADE_DIR)/v$(1)/client: $$(GRADE_OBJS_$(1)) $$(SIM_CLIENT_OBJS_$(1)) | $(GRADE_DIR)/$(notdir $(SIM_SHIM)) \
    $(GRADE_DIR)/$(notdir $(ZK_CLASS_DATA))
	@$(say) "build  the graded lock.c in the simulator's client, $$@"
	$(Q)$$(CC) $$(LDFLAGS) $$(CFLAGS) -o $$@ $$^ $$(LDLIBS)

.PHONY: grade-prereqs-v$(1)
grade-prereqs-v$(1): $$(TEST_STAGE_SRCS:tests/%.c=$(BUILD)/v$(1)/t-%.o) $$(SIM_LIB_OBJS) $$(TEST_BENCH_OBJS) $$(SIM_CLIENT_OBJS_$(1)) \
    $(ZK_CLASS_DATA) $(MARIADB_DATA) $(call stage_plumbing_objs,$(1))
	@:

$(GRADE_DIR)/v$(1)/tests: $$(GRADE_OBJS_$(1)) $$(TEST_STAGE_SRCS:tests/%.c=$(BUILD)/v$(1)/t-%.o) $$(SIM_LIB_OBJS) $$(TEST_BENCH_OBJS) $(GRADE_DIR)/v$(1)/client
	@$(say) "build  the graded lock.c's suite and matrix row, $$@"
	$(Q)$$(CC) $$(LDFLAGS) $$(CFLAGS) -o $$@ $$(filter %.o,$$^) $$(CHECK_LIBS) $$(LDLIBS)
endef
$(foreach n,$(STAGES),$(eval $(call GRADE_RULES,$(n))))

# The runner looks for the clock library next to the client's folder, as
# build/clockshim.so is for build/vN/client.
$(GRADE_DIR)/$(notdir $(SIM_SHIM)): $(SIM_SHIM)
	@mkdir -p $(@D)
	cp $< $@

# And the ensemble's servers look for their class data there too (none
# when make could not dump it: they start without).
$(GRADE_DIR)/$(notdir $(ZK_CLASS_DATA)): $(ZK_CLASS_DATA)
	@mkdir -p $(@D)
	@if [ -f $< ]; then cp $< $@; fi

# The cells of the matrix that tell each stage from its base: the answer
# key and the README's story of each row, read as tables (no Redis).
GRADE_KEY := $(BUILD)/grade_key
GRADE_KEY_OBJS := $(BUILD)/tests/grade_key.o $(BUILD)/tests/row_claims.o \
                  $(patsubst sim/%.c,$(BUILD)/sim/%.o,$(wildcard sim/history/history*.c) \
                    $(call sim_srcs,checker) sim/base/stage.c sim/base/util.c sim/play/scenarios.c)

$(GRADE_KEY): $(GRADE_KEY_OBJS)
	@$(say) "build  the grader's table of cells, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(JSON_LIBS) -lm -pthread

# The scripts get make's variables as they were given, to name them in an
# error, and the stages as the list above has them.
.PHONY: exercise grade handout
exercise: check-deps
	@tools/exercise.sh exercise 'stage=$(stage)' 'part=$(part)' 'build=$(BUILD)' -- $(STAGE_LINES)

handout: check-deps
	@tools/exercise.sh handout 'stage=$(stage)' 'part=$(part)' 'build=$(BUILD)' -- $(STAGE_LINES)

grade: check-deps
	@tools/grade.sh 'stage=$(stage)' 'src=$(src)' 'part=$(part)' 'build=$(BUILD)' \
	    'into=$(GRADE_DIR)' -- $(STAGE_LINES)

# make course-test: the grader's proof (tests/grade_proof.sh). Every
# stage's own lock.c gets full marks; its exercise's start fails exactly
# the checks and cells that tell it from its base. Two full suites per
# stage, two stages at a time (jobs=N): it runs once in make test, and
# under SANITIZE=1 only checks every stage's handout and cells.
.PHONY: course-test
course-test: check-deps
	@tests/grade_proof.sh 'build=$(BUILD)' 'jobs=$(jobs)' 'light=$(if $(filter 1,$(SANITIZE)),1,0)' 'taps=$(taps)' \
	    -- $(STAGE_LINES)

$(BUILD)/sim/servers/zk_observer.o $(BUILD)/sim/servers/zk_waker.o: CFLAGS += $(ZK_CFLAGS)
$(BUILD)/sim/servers/mariadbd.o: CFLAGS += -DSIM_MARIADB_DATA='"$(CURDIR)/$(MARIADB_DATA)"'
$(BUILD)/sim/servers/mariadbd.o: Makefile
$(BUILD)/sim/servers/ensemble.o: CFLAGS += $(ZK_CFLAGS) -DSIM_ZK_JAR='"$(ZK_JAR)"' \
    -DSIM_ZK_CLASS_PATH='"$(ZK_CLASS_PATH)"' -DSIM_ZK_JAVA_OPTS='"$(ZK_JAVA_OPTS)"'
$(BUILD)/sim/servers/ensemble.o: Makefile

# ---- tests -------------------------------------------------------------
# make test [jobs=N]: everything built first (make -j, so that no suite
# builds while another runs), then every suite by tests/run_suites.sh, N
# at a time (default two per CPU: the suites mostly wait out leases), each
# one's output printed whole when it ends, and at the end a line per
# suite with its seconds. The suites that start ZooKeeper servers run one
# at a time ("zk"), and so do the two that write build/report. The
# longest start first: the grader's proof, which judges each stage's own
# lock.c from that stage's suite of this run, then the ensembles' suites.
# Under SANITIZE=1 the tree's shape is left out: layout-test reads files
# with the shell and awk, no C runs in it, so a sanitizer adds nothing.
zk_tag = $(if $(filter zookeeper,$(call stage_server,$(1))),:zk)
TEST_SUITES := course-test report-test:zk,report \
               $(foreach n,$(filter-out 1,$(shell printf '%s\n' $(STAGES) | sort -nr)),v$(n)$(call zk_tag,$(n))) \
               servers-test:zk bench-test:zk sale-test cli-test:report libs-test:zk v1 sim-test \
               $(if $(filter 1,$(SANITIZE)),,layout-test)
# The stage whose lock the sale's tests take (sim/sale.mk).
SALE_TEST_STAGE := 5
TEST_BUILD := $(foreach n,$(STAGES),$(BUILD)/v$(n)/tests) $(BUILD)/test_sim $(BUILD)/test_servers \
              $(BUILD)/site_test $(BUILD)/grade_key bench-build $(BUILD)/bench/test_bench sim-build \
              $(foreach n,$(STAGES),grade-prereqs-v$(n)) $(BUILD)/test_sale $(BUILD)/v$(SALE_TEST_STAGE)/buyer \
              libs-build

.PHONY: test-build test-times
test: check-deps
ifneq ($(stage),)
	@$(MAKE) --no-print-directory stage-test stage=$(stage)
else
	@mkdir -p $(BUILD); $(MAKE) --no-print-directory -j$(shell nproc) test-build >$(BUILD)/test-build.log 2>&1 || \
	    { tail -n 30 $(BUILD)/test-build.log; echo "make test: the tests do not build (above)"; exit 1; }
	@bash tests/run_suites.sh 'build=$(BUILD)' 'jobs=$(jobs)' -- $(TEST_SUITES)
endif

test-build: $(TEST_BUILD)
	@:

# The last make test's line per suite, the slowest first.
test-times:
	@cat $(BUILD)/test-logs/times.txt 2>/dev/null || echo "no make test has run in $(BUILD) yet"

stage-test:
	@test -n "$(stage)" || { echo "stage-test needs stage=N: $(STAGE_LIST)"; exit 2; }
	@$(call build_note,$(BUILD)/v$(stage)/tests,v$(stage) and its suite,a minute)
	@$(MAKE) --no-print-directory $(BUILD)/v$(stage)/tests
	@$(BUILD)/v$(stage)/tests

# ---- the simulator's own tests (no Redis) --------------------------------
# The checker, the bench's tally, history, report and its web pages run
# on hand-written histories, the stage list and the answer key are read as tables, the pool
# runs small functions: no server and no stage is run, so the binary needs
# only these modules.
SIM_TEST_OBJS := $(TEST_SIM_SRCS:tests/%.c=$(BUILD)/tests/%.o) \
                 $(patsubst sim/%.c,$(BUILD)/sim/%.o,$(wildcard sim/history/history*.c) $(call sim_srcs,checker report html) \
                   sim/base/stage.c sim/base/pool.c sim/base/proc.c sim/base/util.c \
                   sim/play/scenarios.c sim/play/libs.c sim/bench/tally.c sim/servers/zk_dump.c)

$(BUILD)/tests/%.o: tests/%.c $(SIM_HDRS) $(wildcard tests/*.h tests/*.def)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -DSRCDIR='"$(CURDIR)"' $(SIM_INC) -Itests -c $< -o $@

$(BUILD)/test_sim: $(SIM_TEST_OBJS)
	@$(say) "build  the simulator's own tests, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(CHECK_LIBS) $(JSON_LIBS) $(MD_LIBS) -lm -pthread

.PHONY: sim-test
sim-test: $(BUILD)/test_sim
	@echo "== simulator: history, checker, report, tally, stages, pool, html (no Redis) =="
	@$(BUILD)/test_sim

# ---- the server kinds' own tests (no stage) --------------------------------
# A real ZooKeeper ensemble of three, as the simulator starts it: one
# leader, the leader killed and replaced, a node restarted empty, no java
# process or dir left behind, also after Ctrl-C, and a matrix's shared
# ensemble, whose clocks a run may move; MariaDB's and Redis's servers let
# in only the run's clients.
SERVERS_TEST_OBJS := $(BUILD)/tests/run_servers.o $(BUILD)/tests/test_ensemble.o \
                     $(BUILD)/tests/zk_client.o $(BUILD)/tests/rundir.o $(BUILD)/tests/tcases.o \
                     $(BUILD)/tests/test_mariadbd.o $(BUILD)/tests/test_redisd.o
$(BUILD)/tests/test_ensemble.o $(BUILD)/tests/zk_client.o: CFLAGS += $(ZK_CFLAGS)

$(BUILD)/test_servers: $(SERVERS_TEST_OBJS) $(SIM_LIB_OBJS) | $(ZK_CLASS_DATA) $(MARIADB_DATA) $(SIM_SHIM)
	@$(say) "build  the servers' own tests, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

.PHONY: servers-test
servers-test: check-deps
	@$(MAKE) --no-print-directory $(BUILD)/test_servers
	@echo "== servers: a ZooKeeper ensemble of three, its leader killed, a node restarted empty, a shared one's clocks; a MariaDB primary and replica; Redis nodes, a replica and a sentinel that want the run's password =="
	@$(BUILD)/test_servers

# ---- the commands as a user types them (no Redis) -------------------------
# Bad make variables named as typed; make diff's side by side, regions and
# parts. Its make commands inherit this one's variables (SANITIZE=1 too).
# Each stage built apart, from its folder and its kind's plumbing alone.
.PHONY: cli-test
cli-test: check-deps
	@sh tests/cli.sh
	@sh tests/standalone.sh

# ---- the tree's shape (no Redis) ---------------------------------------
# The simulator's folders as layers, no file of sim/, tests/ or tools/ over
# 600 lines, every relative link of the pages leads somewhere, and each
# stage's lock.c its lesson, what a kind of server's stages share in
# plumbing/ (tests/lessons.sh -v prints the figures).
.PHONY: layout-test
layout-test:
	@sh tests/layout.sh $(SIM_LAYERS)
	@sh tests/lessons.sh

# ---- diff --------------------------------------------------------------
# The script gets make's variables as they were given, to name them in an
# error, and the stages as the list above has them; without from= it
# diffs to= against its base. part=K: the K-th part of a diff that
# tools/stagediff.parts cuts into parts; full=1: whole files.
diff:
	@tools/stagediff.sh 'from=$(from)' 'to=$(to)' 'side=$(side)' 'part=$(part)' \
	    'full=$(full)' -- $(STAGE_LINES)

clean:
	rm -rf build

include sim/sim.mk
include sim/sale.mk
include drivers/drivers.mk
