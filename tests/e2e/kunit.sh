#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Load ipoib_ng and its KUnit modules in the guest and copy each suite's
# KTAP results from debugfs to $IPNG_OUT/kunit-<suite>.ktap:
#  - ipoib_ng_test.ko, the pure-logic suites;
#  - ipoib_ng_live_test.ko, the suite that drives a live interface: first
#    with no RDMA device (every case must be skipped), then on rxe0 with
#    ib0 up.
# The loading itself is reported as the KTAP suite ipoib_ng_kunit_load, so
# a module that fails to load is a failed test, not a missing file.
#
# guest-init.sh creates rxe0 before this script runs, and the suites after
# it expect that state: rxe0 is deleted and added again here, and left as
# it was found, with ipoib_ng unloaded.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

outdir=$IPNG_OUT
ko=$IPNG_REPO/ipoib_ng.ko
test_ko=$IPNG_REPO/ipoib_ng_test.ko
live_ko=$IPNG_REPO/ipoib_ng_live_test.ko
live_results=/sys/kernel/debug/kunit/ipoib_ng_live/results
NET=/sys/class/net

had_rxe=0
[ -e /sys/class/infiniband/rxe0 ] && had_rxe=1

has_rxe() { [ -e /sys/class/infiniband/rxe0 ]; }
rxe_active() {
	local st=''
	read -r st < /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null
	[[ $st == *ACTIVE* ]]
}
has_ib0() { [ -e $NET/ib0 ]; }

# Any interface of type 32 (InfiniBand), whatever its name.
no_ib_netdev() {
	local d t
	for d in "$NET"/*; do
		read -r t < "$d/type" 2>/dev/null || continue
		[ "$t" = 32 ] && return 1
	done
	return 0
}

# copy_suites PATTERN: results of the suites in debugfs matching PATTERN;
# prints how many were copied.
copy_suites() {
	local dir suite n=0
	for dir in /sys/kernel/debug/kunit/$1; do
		[ -r "$dir/results" ] || continue
		suite=${dir##*/}
		cat "$dir/results" > "$outdir/kunit-$suite.ktap" || continue
		n=$((n + 1))
	done
	echo "$n"
}

# With ipoib_ng loaded but no RDMA device, the live suite loads and skips
# every case. Its output is kept as kunit-live-nodev.txt (not .ktap: a
# suite of skips is not a run).
t_live_nodev() {
	local res rc=0
	if has_rxe; then
		rdma link delete rxe0 || return 1
	fi
	wait_for 10 no_ib_netdev || { echo "an InfiniBand netdev is left"; return 1; }
	insmod "$live_ko" || return 1
	res=$(cat "$live_results") || rc=1
	rmmod ipoib_ng_live_test || rc=1
	printf '%s\n' "$res" > "$outdir/kunit-live-nodev.txt"
	if ! grep -Eq '^ *ok [0-9]+ .*# SKIP' <<<"$res" ||
	   grep -Eq '^ *not ok' <<<"$res"; then
		printf '%s\n' "$res"
		rc=1
	fi
	return $rc
}

# rxe0 on eth0, its port active, ib0 created on it and up with carrier.
t_live_setup() {
	if ! has_rxe; then
		rdma link add rxe0 type rxe netdev eth0 || return 1
	fi
	wait_for 60 rxe_active || { echo "rxe0 port not ACTIVE"; return 1; }
	wait_for 10 has_ib0 || { echo "no ib0"; return 1; }
	ip link set ib0 up && wait_for 30 carrier_up
}

# The live suite's results: every case ran (none skipped) and none failed
# is checked by the host through kunit.py; here only that they exist.
t_live_run() {
	local n
	insmod "$live_ko" || return 1
	n=$(copy_suites 'ipoib_ng_live')
	[ "$n" = 1 ] || { echo "ipoib_ng_live results missing"; return 1; }
}

# Leave rxe0 as it was found, ipoib_ng and the test modules unloaded.
t_restore() {
	local rc=0
	for m in ipoib_ng_live_test ipoib_ng_test ipoib_ng; do
		if [ -d "/sys/module/$m" ]; then
			rmmod "$m" || rc=1
		fi
	done
	if [ $had_rxe = 1 ] && ! has_rxe; then
		rdma link add rxe0 type rxe netdev eth0 || rc=1
	elif [ $had_rxe = 0 ] && has_rxe; then
		rdma link delete rxe0 || rc=1
	fi
	if [ $had_rxe = 1 ]; then
		wait_for 60 rxe_active || { echo "rxe0 port not ACTIVE"; rc=1; }
	fi
	return $rc
}

{
	ktap_begin ipoib_ng_kunit_load
	ktap_check "kunit_module_loads" modprobe -d "$IPNG_MODDIR" kunit
	ktap_check "ipoib_ng_loads" insmod "$ko"
	ktap_check "ipoib_ng_test_loads" insmod "$test_ko"
	n=$(copy_suites 'ipoib_ng_*')
	# wire, params, mcast, sa, mode, cm, cm_caps, moder, datapath, compat
	if [ "$n" -ge 10 ]; then
		ktap_ok "suites_reported"
	else
		ktap_fail "suites_reported" "only $n ipoib_ng suites in debugfs"
	fi
	ktap_check "ipoib_ng_test_unloads" rmmod ipoib_ng_test
	ktap_check "live_suite_skips_without_rdma_device" t_live_nodev
	ktap_check "rxe0_added_ib0_up" t_live_setup
	ktap_check "ipoib_ng_live_test_loads_and_reports" t_live_run
	ktap_check "ipoib_ng_live_test_unloads" rmmod ipoib_ng_live_test
	ktap_check "ipoib_ng_unloads" rmmod ipoib_ng
	ktap_check "rxe0_state_restored" t_restore
	ktap_end
} > "$outdir/kunit-load.ktap"
