#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest entry of `make check`, run in every VM by tests/vm/guest-init.sh.
# Runs the KUnit modules (first VM only: they test pure logic) and then the
# end-to-end suites listed below, in order, on every VM. Each suite writes
# one KTAP file to $IPNG_OUT; the host parses them all.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

# IPNG_SUITES (run-vms.sh --env IPNG_SUITES=a,b) runs only some suites.
IFS=, read -r -a suites <<<"${IPNG_SUITES:-link,datagram}"
rc=0

if [ "$IPNG_VM" = 1 ]; then
	"$IPNG_REPO/tests/e2e/kunit.sh" || rc=1
fi
for s in "${suites[@]}"; do
	echo "# running e2e suite $s"
	"$IPNG_REPO/tests/e2e/$s.sh" > "$IPNG_OUT/e2e-$s.ktap" || rc=1
done
exit $rc
