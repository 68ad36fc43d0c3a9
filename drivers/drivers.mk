# drivers.mk: the libraries' drivers (docs/drivers.md), included by the Makefile.
#
#   make sim lib=NAME scenario=S [seed=K] [lease=MS]   one cell of a library
#   make libs [lib=NAME] [jobs=N] [lease=MS]   the libraries' columns beside their stages
#   make libs site=DIR                the same, and DIR/libraries.html, each cell linked to
#                                     its run's page in DIR/libs/ (make report libs=1)
#   make libs-build                   the driver client and a script per library
#   make libs-test                    the rows asserted against their answer key
#
# build/drivers/client is the simulator's client linked with
# drivers/lock.c, the lock that talks to a driver over a pipe; each
# drivers/<name>/driver.conf gets build/lib-<name>/client, a script that
# runs it for that library. A new folder with a driver.conf is a new
# library: nothing here names one.

DRIVER_LIBS := $(patsubst drivers/%/driver.conf,%,$(wildcard drivers/*/driver.conf))
DRIVER_CLIENT := $(BUILD)/drivers/client
DRIVER_SCRIPTS := $(DRIVER_LIBS:%=$(BUILD)/lib-%/client)
DRIVER_CLIENT_OBJS := $(BUILD)/drivers/lock.o $(SIM_CLIENT_SRCS:sim/%.c=$(BUILD)/drivers/sim/%.o)

# Any stage's lock.h: it is the same in every one.
$(BUILD)/drivers/lock.o: drivers/lock.c v1-setnx/lock.h
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Iv1-setnx -c $< -o $@

$(BUILD)/drivers/sim/%.o: sim/%.c $(SIM_HDRS) v1-setnx/lock.h $(PLUMBING_HDRS)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -DSTAGE=0 -Iv1-setnx -Iplumbing $(SIM_INC) -c $< -o $@

$(DRIVER_CLIENT): $(DRIVER_CLIENT_OBJS) | $(SIM_SHIM)
	@$(say) "build  the drivers' client, $@"
	$(Q)$(CC) $(LDFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)

# exec keeps the pid the simulator started: its pause and its kill reach
# the client, and through its process group the driver.
# A driver.conf's build: line (a compiler's) runs in the driver's folder,
# with LOCKSTEP_DRIVER_BUILD naming build/lib-<name>, where its output
# goes and where its run: line finds it. Without the library's packages
# (its check: fails) it is skipped, and the script dated 1970 so that
# the next make builds it: make test builds every driver's script.
$(BUILD)/lib-%/client: drivers/%/driver.conf $(wildcard drivers/*/*) $(DRIVER_CLIENT)
	@mkdir -p $(@D)
	@printf '#!/bin/sh\nLOCKSTEP_DRIVER_DIR=%s LOCKSTEP_DRIVER_BUILD=%s exec %s "$$@"\n' \
	    '$(CURDIR)/drivers/$*' '$(CURDIR)/$(@D)' '$(CURDIR)/$(DRIVER_CLIENT)' >$@ && chmod +x $@
	@cmd=$$(sed -n 's/^build: *//p' $<); check=$$(sed -n 's/^check: *//p' $<); \
	if [ -n "$$cmd" ] && ! (cd drivers/$* && sh -c "$$check") >/dev/null 2>&1; then \
	    $(say) "build  the $* driver: skipped, its packages are missing (make deps libs=1)"; \
	    touch -d @0 $@; \
	elif [ -n "$$cmd" ]; then \
	    $(say) "build  the $* driver: $$cmd"; \
	    (cd drivers/$* && LOCKSTEP_DRIVER_BUILD='$(CURDIR)/$(@D)' sh -c "$$cmd") || { rm -f $@; exit 1; }; \
	fi

# The simulator finds the drivers in this tree, and has the commands.
$(BUILD)/sim/play/libs.o: CFLAGS += -DSIM_DRIVERS_DIR='"$(CURDIR)/drivers"'
$(SIM_PROGRAM): $(BUILD)/sim/libs_cmd.o

.PHONY: libs libs-build
libs-build: $(SIM_PROGRAM) $(DRIVER_SCRIPTS)
	@:

libs: check-deps
	@$(MAKE) --no-print-directory libs-build
	@$(SIM_PROGRAM) libs $(if $(lib),'lib=$(lib)') $(if $(jobs),'jobs=$(jobs)') $(SIM_OPTS) \
	    $(if $(site),'site=$(site)')

# make libs-test: every installed library's row against its answer key
# (driver.conf); a library whose package is missing is one line, skipped.
.PHONY: libs-test
libs-test: check-deps
	@$(MAKE) --no-print-directory libs-build
	@echo "== the libraries: each row beside its stage, against its answer key =="
	@$(SIM_PROGRAM) libs $(if $(jobs),'jobs=$(jobs)')
