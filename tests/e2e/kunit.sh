#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load ipoib_ng and its KUnit module in the guest and copy each suite's
# KTAP results from debugfs to $IPNG_OUT/kunit-<suite>.ktap. The loading
# itself is reported as the KTAP suite ipoib_ng_kunit_load, so a module that
# fails to load is a failed test, not a missing file.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

out=$IPNG_OUT
ko=$IPNG_REPO/ipoib_ng.ko
test_ko=$IPNG_REPO/ipoib_ng_test.ko

{
	ktap_begin ipoib_ng_kunit_load
	ktap_check "kunit_module_loads" modprobe -d "$IPNG_MODDIR" kunit
	ktap_check "ipoib_ng_loads" insmod "$ko"
	ktap_check "ipoib_ng_test_loads" insmod "$test_ko"
	n=0
	for dir in /sys/kernel/debug/kunit/ipoib_ng_*; do
		[ -r "$dir/results" ] || continue
		suite=${dir##*/}
		cat "$dir/results" > "$out/kunit-$suite.ktap"
		n=$((n + 1))
	done
	if [ "$n" -ge 2 ]; then
		ktap_ok "suites_reported"
	else
		ktap_fail "suites_reported" "only $n ipoib_ng suites in debugfs"
	fi
	ktap_check "ipoib_ng_test_unloads" rmmod ipoib_ng_test
	ktap_check "ipoib_ng_unloads" rmmod ipoib_ng
	ktap_end
} > "$out/kunit-load.ktap"
