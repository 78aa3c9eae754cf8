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

suites=(link datagram observe trace tuning connected)
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

if [ "$IPNG_VM" = 1 ] && [ $kunit = 1 ]; then
	"$IPNG_REPO/tests/e2e/kunit.sh" || rc=1
fi
for s in "${suites[@]}"; do
	echo "# running e2e suite $s"
	"$IPNG_REPO/tests/e2e/$s.sh" > "$IPNG_OUT/e2e-$s.ktap" || rc=1
done
exit $rc
