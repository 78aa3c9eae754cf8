#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The soft InfiniBand fabric in a guest: softib's two HCAs, OpenSM on
# softib0's port as SM and SA, ipoib_ng on both, host A in network
# namespace h1 (the interface of softib0, 10.12.0.1/24) and host B in h2
# (softib1, 10.12.0.2/24). Sourced by the ib suite (tests/e2e/ib.sh);
# run by `make ib-shell` as "fabric.sh up" before the shell starts, and
# by hand as "fabric.sh up|down". Needs guest-lib.sh (wait_for).
#
# OpenSM's files are in $SMDIR: opensm.conf, partitions.conf (written by
# sm_partitions), opensm.log, and cache/ (OSM_CACHE_DIR: guid2lid).

IPNG_REPO=${IPNG_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
# shellcheck source=../vm/guest-lib.sh
. "$IPNG_REPO/tests/vm/guest-lib.sh"

SIB_KO=${IPNG_SIB_KO:-$IPNG_REPO/tests/softib/softib.ko}
IPNG_KO_PATH=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
SM_GUID=0x02aa5e0000000001	# softib0's port GUID (softib_main.c)
B_GUID=0x02aa5e0000000101	# softib1's
SMDIR=/tmp/ib-sm
export OSM_CACHE_DIR=$SMDIR/cache
IPA=10.12.0.1 IPB=10.12.0.2

# The port attribute NAME of an HCA, as ibstat prints it.
ibstat_of() {
	ibstat "$1" 1 | awk -F': ' -v k="$2" '$1 ~ "^[ \t]*" k "$" { print $2; exit }'
}
lid_of() { ibstat_of "$1" 'Base lid'; }
port_active() { [ "$(ibstat_of "$1" State)" = Active ]; }

# IBA MTU code of a byte count (partitions.conf wants the code).
mtu_code() {
	case $1 in 256) echo 1 ;; 512) echo 2 ;; 1024) echo 3 ;;
	2048) echo 4 ;; 4096) echo 5 ;; esac
}

# sm_partitions MTU [LINE...]: partitions.conf with the default partition
# (IPoIB, its broadcast group of MTU bytes, every port a full member)
# and the extra LINEs.
sm_partitions() {
	local mtu=$1 l
	shift
	mkdir -p $SMDIR
	{
		printf 'Default=0x7fff, ipoib, mtu=%d : ALL=full;\n' "$(mtu_code "$mtu")"
		for l in "$@"; do printf '%s\n' "$l"; done
	} > $SMDIR/partitions.conf
}

sm_running() { pgrep -x opensm > /dev/null; }

# OpenSM on softib0's port with $SMDIR's files, a fresh log, heavy sweeps
# every 5 s (softib sends no traps); back once the subnet is up and both
# ports are ACTIVE.
sm_start() {
	mkdir -p $SMDIR $OSM_CACHE_DIR
	[ -e $SMDIR/partitions.conf ] || sm_partitions 2048
	printf 'force_log_flush TRUE\n' > $SMDIR/opensm.conf
	rm -f $SMDIR/opensm.log
	opensm -F $SMDIR/opensm.conf -P $SMDIR/partitions.conf -g $SM_GUID \
		-f $SMDIR/opensm.log -s 5 -B > $SMDIR/stdout 2>&1 || return 1
	wait_for 60 grep -q 'SUBNET UP' $SMDIR/opensm.log &&
		wait_for 30 port_active softib0 && wait_for 30 port_active softib1 ||
		{ tail -20 $SMDIR/opensm.log; return 1; }
}

sm_stop() {
	pkill -x opensm
	wait_for 20 sh -c '! pgrep -x opensm'
}

# The ipoib_ng interface whose device is the HCA $1.
ifname_of() {
	local n d
	for n in /sys/class/net/*; do
		d=$(readlink -f "$n/device" 2>/dev/null) || continue
		[ "${d##*/}" = "$1" ] && echo "${n##*/}" && return 0
	done
	return 1
}

# Read through netlink: sysfs is not remounted by ip netns exec here.
carrier_in() { ip -n "$1" -o link show "$2" | grep -q 'LOWER_UP'; }
mtu_in() { ip -n "$1" -o link show "$2" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'; }

# fabric_up: everything above; the interface names go to $SMDIR/ifnames
# ("A B") for callers in other shells.
fabric_up() {
	local a b
	insmod "$SIB_KO" || return 1
	sm_start || return 1
	insmod "$IPNG_KO_PATH" || return 1
	wait_for 10 ifname_of softib0 > /dev/null &&
		wait_for 10 ifname_of softib1 > /dev/null || return 1
	a=$(ifname_of softib0)
	b=$(ifname_of softib1)
	echo "$a $b" > $SMDIR/ifnames
	ip netns add h1 && ip netns add h2 &&
		ip link set "$a" netns h1 && ip link set "$b" netns h2 || return 1
	ip -n h1 link set lo up && ip -n h2 link set lo up &&
		ip -n h1 addr add $IPA/24 dev "$a" &&
		ip -n h2 addr add $IPB/24 dev "$b" &&
		ip -n h1 link set "$a" up && ip -n h2 link set "$b" up || return 1
	wait_for 30 carrier_in h1 "$a" && wait_for 30 carrier_in h2 "$b"
}

# fabric_down: the namespaces, ipoib_ng, OpenSM and softib, in that order.
fabric_down() {
	local rc=0
	ip netns del h1 2>/dev/null
	ip netns del h2 2>/dev/null
	if [ -e /sys/module/ipoib_ng ]; then rmmod ipoib_ng || rc=1; fi
	sm_stop || rc=1
	if [ -e /sys/module/softib ]; then rmmod softib || rc=1; fi
	return $rc
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	case ${1:-} in
	up)
		fabric_up || exit 1
		read -r a b < $SMDIR/ifnames
		cat <<-EOF
		fabric up: OpenSM on softib0 (log $SMDIR/opensm.log)
		  host A: ip netns exec h1 ...  $a $IPA
		  host B: ip netns exec h2 ...  $b $IPB
		  softib debugfs: /sys/kernel/debug/softib/<dev>/{counters,link}
		EOF
		;;
	down) fabric_down ;;
	*) echo "usage: $0 up|down" >&2; exit 2 ;;
	esac
fi
