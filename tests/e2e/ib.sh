#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "ib", run on the first VM only: ipoib_ng on InfiniBand.
# tests/softib gives the VM two soft HCAs joined by a cable; OpenSM from
# Debian sweeps them and is the SA. Host A is network namespace h1 with
# the interface of softib0, host B namespace h2 with that of softib1.
# Checks the fabric with the infiniband-diags tools (ibstat, saquery,
# smpquery), then datagram mode through the real SA: addresses, the
# broadcast group's MTU, path records, ARP/ND, ping, TCP, multicast and
# the memberships OpenSM records. KTAP on stdout.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
SIB=$IPNG_REPO/tests/softib/softib.ko
XFER=$IPNG_REPO/tests/e2e/xfer.py
SM_GUID=0x02aa5e0000000001	# softib0's port GUID (tests/softib)
B_GUID=0x02aa5e0000000101	# softib1's
BCAST_MTU=2048			# the default partition's, in partitions.conf
SMDIR=/tmp/ib-sm
DBG=/sys/kernel/debug/ipoib_ng
A='' B=''			# the interfaces of softib0 and softib1
IPA=10.12.0.1 IPB=10.12.0.2

# The port attribute NAME of an HCA, as ibstat prints it.
ibstat_of() {
	ibstat "$1" 1 | awk -F': ' -v k="$2" '$1 ~ "^[ \t]*" k "$" { print $2; exit }'
}
lid_of() { ibstat_of "$1" 'Base lid'; }
port_active() { [ "$(ibstat_of "$1" State)" = Active ]; }

# OpenSM on softib0's port, with its own config, partitions and log.
sm_start() {
	mkdir -p $SMDIR
	printf 'force_log_flush TRUE\n' > $SMDIR/opensm.conf
	printf 'Default=0x7fff, ipoib, mtu=%d : ALL=full;\n' \
		"$(mtu_code $BCAST_MTU)" > $SMDIR/partitions.conf
	opensm -F $SMDIR/opensm.conf -P $SMDIR/partitions.conf -g $SM_GUID \
		-f $SMDIR/opensm.log -s 5 -B > $SMDIR/stdout 2>&1 || return 1
	wait_for 60 grep -q 'SUBNET UP' $SMDIR/opensm.log &&
		wait_for 30 port_active softib0 && wait_for 30 port_active softib1
}

# IBA MTU code of a byte count (partitions.conf wants the code).
mtu_code() {
	case $1 in 256) echo 1 ;; 512) echo 2 ;; 1024) echo 3 ;;
	2048) echo 4 ;; 4096) echo 5 ;; esac
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

in_a() { ip netns exec h1 "$@"; }
in_b() { ip netns exec h2 "$@"; }
# Read through netlink: sysfs is not remounted by ip netns exec here.
carrier_in() { ip -n "$1" -o link show "$2" | grep -q 'LOWER_UP'; }
mtu_in() { ip -n "$1" -o link show "$2" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'; }

setup() {
	insmod "$SIB" || return 1
	sm_start || { tail -20 $SMDIR/opensm.log; return 1; }
	insmod "$KO" || return 1
	wait_for 10 ifname_of softib0 > /dev/null &&
		wait_for 10 ifname_of softib1 > /dev/null || return 1
	A=$(ifname_of softib0)
	B=$(ifname_of softib1)
	# ktap_check runs this in a subshell: the names reach the suite here
	echo "$A $B" > $SMDIR/ifnames
	ip netns add h1 && ip netns add h2 &&
		ip link set "$A" netns h1 && ip link set "$B" netns h2 || return 1
	ip -n h1 link set lo up && ip -n h2 link set lo up &&
		ip -n h1 addr add $IPA/24 dev "$A" &&
		ip -n h2 addr add $IPB/24 dev "$B" &&
		ip -n h1 link set "$A" up && ip -n h2 link set "$B" up || return 1
	wait_for 30 carrier_in h1 "$A" && wait_for 30 carrier_in h2 "$B"
}

teardown() {
	pkill -f "$XFER" 2>/dev/null
	ip netns del h1 2>/dev/null
	ip netns del h2 2>/dev/null
	rmmod ipoib_ng 2>/dev/null
	pkill -x opensm
	wait_for 10 sh -c '! pgrep -x opensm'
	rmmod softib
}

# --- the fabric, as the infiniband-diags tools see it ---

t_ports_active() {
	local la lb sa sb
	la=$(lid_of softib0) lb=$(lid_of softib1)
	sa=$(ibstat_of softib0 'SM lid') sb=$(ibstat_of softib1 'SM lid')
	echo "softib0 LID $la SM $sa, softib1 LID $lb SM $sb"
	port_active softib0 && port_active softib1 &&
		[ "$la" -gt 0 ] && [ "$lb" -gt 0 ] && [ "$la" != "$lb" ] &&
		[ "$sa" = "$la" ] && [ "$sb" = "$la" ] &&
		[ "$(ibstat_of softib1 'Link layer')" = InfiniBand ]
}

# The SA, asked from the port without the SM, lists both nodes.
t_saquery_nodes() {
	local out
	out=$(saquery -C softib1 -N) || return 1
	echo "$out" | grep -E 'node_guid|lid\.'
	grep -q 'node_guid\.*0x02aa5e0000000000' <<<"$out" &&
		grep -q 'node_guid\.*0x02aa5e0000000100' <<<"$out"
}

# LID-routed SMPs from softib1 to the SM's port answer.
t_smpquery() {
	local out
	out=$(smpquery -C softib1 nodeinfo "$(lid_of softib0)") || return 1
	echo "$out"
	grep -q 'PortGuid:\.*0x02aa5e0000000001' <<<"$out" &&
		smpquery -C softib1 portinfo "$(lid_of softib0)" | grep -q 'LinkState:\.*Active'
}

# --- ipoib_ng in datagram mode through OpenSM's SA ---

# Link address: QPN, then the port GID (subnet prefix + port GUID).
t_address() {
	local addr want
	addr=$(ip -n h2 -o link show "$B" | grep -o 'link/infiniband [0-9a-f:]*' | cut -d' ' -f2)
	want=fe:80:00:00:00:00:00:00:02:aa:5e:00:00:00:01:01
	echo "$B: $addr"
	[ "${addr:12}" = "$want" ]
}

# The broadcast address carries the partition's P_Key (full member).
t_broadcast() {
	local brd
	brd=$(ip -n h2 -o link show "$B" | grep -o 'brd [0-9a-f:]*' | cut -d' ' -f2)
	echo "brd $brd"
	[ "$brd" = 00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff ]
}

# The MTU is the broadcast group's, as partitions.conf set it, less 4.
t_mtu_from_group() {
	local ma mb
	ma=$(mtu_in h1 "$A") mb=$(mtu_in h2 "$B")
	echo "MTU $ma and $mb, group $BCAST_MTU"
	[ "$ma" = $((BCAST_MTU - 4)) ] && [ "$mb" = $((BCAST_MTU - 4)) ]
}

t_ping4() {
	in_a ping -c 3 -W 5 $IPB && in_b ping -c 3 -W 5 $IPA &&
		in_a ping -c 3 -s $((BCAST_MTU - 4 - 28)) -M do -W 5 $IPB
}

# ARP filled the neighbour table with B's full 20-byte address.
t_arp() {
	local n
	n=$(ip -n h1 neigh show $IPB dev "$A")
	echo "$n"
	grep -q 'lladdr [0-9a-f:]*fe:80:00:00:00:00:00:00:02:aa:5e:00:00:00:01:01' <<<"$n"
}

# IPv6 link-local: neighbour discovery through the solicited-node groups.
t_ping6() {
	in_a ping -6 -c 3 -W 5 -I "$A" fe80::2aa:5e00:0:101 &&
		ip -n h1 -6 neigh show dev "$A" | grep -q 'fe80::2aa:5e00:0:101 .*lladdr'
}

# The path to B came from the SA: its DLID is B's LID.
t_path_from_sa() {
	local line lid
	lid=$(printf '0x%04x' "$(lid_of softib1)")
	line=$(grep 'fe80:0000:0000:0000:02aa:5e00:0000:0101' "$DBG/$A/paths")
	echo "$line (softib1 LID $lid)"
	grep -q "state=valid .*dlid=$lid " <<<"$line "
}

t_tcp_sha256() {
	local sum
	head -c 8M /dev/urandom > /tmp/ib-send.bin
	sum=$(sha256sum < /tmp/ib-send.bin | cut -d' ' -f1)
	in_b python3 "$XFER" recv $IPB 5301 /tmp/ib-recv.bin 60 &
	local pid=$!
	sleep 1
	in_a python3 "$XFER" send $IPB 5301 /tmp/ib-send.bin 60 || return 1
	wait $pid || return 1
	echo "sent $sum received $(sha256sum < /tmp/ib-recv.bin)"
	[ "$(sha256sum < /tmp/ib-recv.bin | cut -d' ' -f1)" = "$sum" ]
}

# B joins 239.1.2.3 (a full member: it creates the group with the
# broadcast group's parameters); A sends to it as a send-only member.
# The MGID holds the low 28 bits of the IPv4 group (RFC 4391).
t_mcast_udp() {
	in_b python3 "$XFER" mrecv 239.1.2.3 $IPB 5302 60 > /tmp/ib-mrecv.out &
	local pid=$!
	sleep 2
	in_a python3 "$XFER" msend 239.1.2.3 $IPA 5302 20 > /dev/null &
	local spid=$!
	wait $pid
	local rc=$?
	kill $spid 2>/dev/null
	wait $spid 2>/dev/null
	cat /tmp/ib-mrecv.out
	[ $rc = 0 ] && grep -q 'hello from' /tmp/ib-mrecv.out &&
		grep -q 'ff12:401b:ffff:0000:0000:0000:0f01:0203 state joined join sendonly' "$DBG/$A/mcast"
}

# A group no one joined: A's send-only join creates it (SendOnlyFullMember).
t_sendonly_create() {
	in_a python3 "$XFER" msend 239.9.9.9 $IPA 5303 4 > /dev/null
	cat "$DBG/$A/mcast"
	grep -q 'ff12:401b:ffff:0000:0000:0000:0f09:0909 state joined join sendonly' "$DBG/$A/mcast" &&
		saquery -C softib0 -m | grep -q 'MGID\.*ff12:401b:ffff::f09:909'
}

# OpenSM records B's membership while it listens, and drops the group
# when B, its only member, leaves.
t_membership_in_sm() {
	in_b python3 "$XFER" mrecv 239.1.2.4 $IPB 5304 8 > /dev/null &
	local pid=$!
	wait_for 10 sh -c "saquery -C softib0 -m | grep -q 'MGID\.*ff12:401b:ffff::f01:204'" || return 1
	echo "ff12:401b:ffff::f01:204 in the SM while B listens"
	wait $pid
	wait_for 20 sh -c "! saquery -C softib0 -m | grep -q 'MGID\.*ff12:401b:ffff::f01:204'"
}

# The IPv6 groups a host only sends to (all-routers, MLDv2 reports) are
# created by its send-only joins.
t_ipv6_sendonly_groups() {
	local out
	out=$(saquery -C softib0 -m)
	grep -q 'MGID\.*ff12:601b:ffff::16$' <<<"$out" &&
		grep -q 'MGID\.*ff12:601b:ffff::2$' <<<"$out" ||
		{ grep MGID <<<"$out"; return 1; }
}

t_counters() {
	local s
	s=$(in_a cat /proc/net/ipoib/"$A"/stats)
	echo "$s" | grep -E '^(link_layer|rx_packets|tx_packets|paths|mcast_groups):'
	grep -q '^link_layer: infiniband' <<<"$s" &&
		[ "$(kv_get rx_packets <<<"$s")" -gt 0 ] &&
		[ "$(kv_get tx_packets <<<"$s")" -gt 0 ]
}

ktap_begin ib
if [ "$IPNG_VM" != 1 ]; then
	ktap_skip ib_suite "runs on the first VM (one VM holds the whole fabric)"
	ktap_end
	exit $?
fi
if ! command -v opensm > /dev/null; then
	ktap_fail setup "opensm is not installed (tests/deps.sh)"
	ktap_end
	exit 1
fi
ktap_check setup setup
read -r A B < $SMDIR/ifnames
ktap_check ports_active_with_lids t_ports_active
ktap_check saquery_lists_both_nodes t_saquery_nodes
ktap_check smpquery_lid_routed t_smpquery
ktap_check address_is_qpn_and_port_gid t_address
ktap_check broadcast_address_default_pkey t_broadcast
ktap_check mtu_from_broadcast_group t_mtu_from_group
ktap_check ping4_both_ways_and_full_size t_ping4
ktap_check arp_learns_ib_address t_arp
ktap_check ping6_link_local t_ping6
ktap_check path_record_from_sa t_path_from_sa
ktap_check tcp_8MiB_sha256 t_tcp_sha256
ktap_check multicast_udp_full_and_sendonly t_mcast_udp
ktap_check sendonly_join_creates_group t_sendonly_create
ktap_check membership_recorded_by_sm t_membership_in_sm
ktap_check ipv6_sendonly_groups_created t_ipv6_sendonly_groups
ktap_check counters t_counters
ktap_check teardown teardown
ktap_end
