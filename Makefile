# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree entry point. In a kernel tree, Kbuild and Kconfig are used
# directly and this file is not read.
#
#   make                 build ipoib_ng.ko (and ipoib_ng_test.ko) against KDIR
#   make check           everything CI runs: lint, builds, KUnit, VM tests
#   make demo            two VMs with ipoib_ng, addresses and link info shown
#   make vm-shell        two VMs, a shell on the first one
#   make ib-shell        one VM with the soft InfiniBand fabric and OpenSM up, a shell
#   make bench           throughput and latency on the fast kernel (see README)
#   make soak            10 min of iperf3 under random mode/ethtool changes (README)
#   make long            the long suites: stress, the full fault matrix, a
#                        bigger hostile flood (README; not in CI)

CACHE ?= $(HOME)/.cache/ipoib_ng
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
ifeq ($(origin KDIR),undefined)
KDIR := $(shell if [ -d $(RUNNING_KDIR) ]; then echo $(RUNNING_KDIR); \
	else tests/vm/kernel.sh debug --path-only; fi)
endif

.PHONY: all modules clean check demo vm-shell ib-shell bench soak long kernel

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

kernel:
	tests/vm/kernel.sh debug

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || \
		rm -rf *.o *.ko *.mod *.mod.c .*.cmd modules.order Module.symvers \
		tests/kunit/*.o tests/kunit/.*.cmd

check:
	tests/check.sh

demo:
	tests/demo.sh

vm-shell:
	tests/vm-shell.sh

ib-shell:
	tests/vm-shell.sh ib

bench:
	tests/bench/bench.sh

soak:
	tests/soak.sh

# The lint and build steps of make check, then only the long suites.
long:
	IPNG_SUITES=stress,faults,hostile IPNG_STRESS_ROUNDS=3 \
	IPNG_FAULTS_ROUNDS=8 IPNG_FAULTS_PAGE_ROUNDS=4 \
	IPNG_FAULTS_OPS=insmod,open,channels,rings,mode_sysfs,mode_iplink,xmit,workers \
	IPNG_HOSTILE_COUNT=10000 IPNG_HOSTILE_REQS=1000 \
	IPNG_STOCK=0 IPNG_VM_TIMEOUT=$${IPNG_VM_TIMEOUT:-7200} tests/check.sh
