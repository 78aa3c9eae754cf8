#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest entry of `make check`, run in every VM by tests/vm/guest-init.sh.
# Runs the KUnit modules (first VM only: they test pure logic) and then the
# end-to-end suites listed below, in order, on every VM. Each suite writes
# one KTAP file to $IPNG_OUT; the host parses them all.
#
# IPNG_SUITES (comma-separated, e.g. run-vms.sh --env IPNG_SUITES=observe)
# runs only the suites named, and KUnit only if "kunit" is among them.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

# make long runs stress, and faults and hostile at full size (README).
suites=(link datagram observe trace tuning connected children recovery hostile faults ib)
kunit=1
if [ -n "${IPNG_SUITES:-}" ]; then
	IFS=, read -r -a suites <<<"$IPNG_SUITES"
	kunit=0
	for s in "${suites[@]}"; do
		[ "$s" = kunit ] && kunit=1
	done
	for i in "${!suites[@]}"; do
		[ "${suites[i]}" = kunit ] && unset 'suites[i]'
	done
fi
rc=0

if [ $kunit = 1 ]; then
	if [ "$IPNG_VM" = 1 ]; then
		t=$SECONDS
		"$IPNG_REPO/tests/e2e/kunit.sh" || rc=1
		echo "# KUnit took $((SECONDS - t)) s"
	fi
	# The other VM waits (and leaves the host's CPUs to this one).
	vm_barrier kunit-done 1800 || rc=1
fi
for s in "${suites[@]}"; do
	# Every suite starts on all VMs together: the suites' own barriers
	# allow minutes, not the length of a whole suite.
	vm_barrier "suite-$s" 1800 || rc=1
	echo "# running e2e suite $s"
	t=$SECONDS
	"$IPNG_REPO/tests/e2e/$s.sh" > "$IPNG_OUT/e2e-$s.ktap" || rc=1
	echo "# e2e suite $s took $((SECONDS - t)) s"
	# On a distribution kernel the dkms suite leaves the module it built
	# for the suites after it.
	if [ -s /run/ipoib_ng-dkms.ko ] && [ -z "${IPNG_KO:-}" ]; then
		export IPNG_KO=/run/ipoib_ng-dkms.ko
	fi
done
exit $rc
