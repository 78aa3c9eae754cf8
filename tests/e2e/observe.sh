#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "observe", run on both VMs: what ipoib_ng shows about
# itself. /proc/net/ipoib/<if>/stats (every documented field, values that
# match sysfs, ip and ethtool), ethtool -S, exact counting of a known
# number of pings in all three places, a tshark capture on ib0, the
# debugfs paths file and path aging, and the entries following a rename, a
# namespace move and module removal. IPv6 is disabled on ib0 so that the
# link stays quiet between pings. The namespace tests are skipped on a
# kernel without network namespaces. KTAP on stdout.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
NET=/sys/class/net
PROC=/proc/net/ipoib
DBG=/sys/kernel/debug/ipoib_ng
PARAM=/sys/module/ipoib_ng/parameters
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
MYIP=10.10.0.$ME
PEERIP=10.10.0.$PEER
NS=ipng-obs
PINGS=20
HAVE_NETNS=0
[ -e /proc/self/ns/net ] && HAVE_NETNS=1

# The counters of the ipoib_stats.c table, in order (ethtool -S).
COUNTERS=(rx_packets rx_bytes tx_packets tx_bytes rx_drop_short
	rx_drop_unknown_type rx_drop_own_mcast rx_drop_nomem
	rx_completion_errors tx_drop_no_path tx_drop_resolve_queue_full
	tx_drop_bad_header tx_drop_too_big tx_drop_post_failed
	tx_completion_errors tx_drop_ring_full tx_drop_cm_queue tx_cm_fallback
	cm_cap_reached tx_drop_not_joined rx_drop_backlog tx_timeouts
	qp_errors recoveries cm_peer_cap_reached port_events mcast_rejoins)
# Every line of /proc/net/ipoib/<if>/stats, in order, as documented.
FIELDS=(mode link_layer mtu qpn gid pkey channels send_queue_size
	send_queue_depth send_queue_backlog recv_queue_size rx_packets tx_packets rx_bytes
	tx_bytes rx_dropped tx_dropped rx_errors tx_errors "${COUNTERS[@]:4}"
	paths neighbours mcast_groups connections)

hex_addr() { tr -d ':\n' < $NET/ib0/address; }
# 32 hex digits -> the GID as %pI6 prints it (eight groups of four).
gid_of_hex() { sed 's/.\{4\}/&:/g; s/:$//' <<<"$1"; }
# 40 hex digits -> a link address for ip neigh.
lladdr_of_hex() { sed 's/../&:/g; s/:$//' <<<"$1"; }

expect_eq() {
	if [ "$1" != "$2" ]; then
		echo "$3: got '$1', want '$2'"
		return 1
	fi
}

# stat_val FILE NAME: the value of "NAME: value" in a stats file.
stat_val() { proc_stat "$2" "$1"; }

setup() {
	insmod "$KO" && wait_for 10 test -e $NET/ib0 || return 1
	bring_up
}

# Address and link up, IPv6 off (no autoconf, ND or MLD on ib0).
bring_up() {
	sysctl -qw net.ipv6.conf.ib0.disable_ipv6=1 &&
		ip addr add "$MYIP/24" dev ib0 && ip link set ib0 up &&
		wait_for 10 carrier_up && wait_for 10 oper_up
}


# --- (a) the stats file ---

# Multicast groups the netdev lists (ip maddr), plus the broadcast group.
wanted_groups() {
	echo $(( $(ip maddr show dev ib0 | grep -c '^[[:space:]]*link') + 1 ))
}

groups_match() {
	[ "$(stat_val $PROC/ib0/stats mcast_groups)" = "$(wanted_groups)" ]
}

# The debugfs files start with a header line ("# ..."), then one line per
# entry.
entries() { grep -vc '^#' "$1"; }

paths_match() {
	[ "$(stat_val $PROC/ib0/stats paths)" = "$(entries $DBG/ib0/paths)" ]
}

# channels_now: the current channel count, as ethtool -l shows it.
channels_now() { ethtool -l ib0 | awk '/^Combined:/ { v = $2 } END { print v }'; }

t_stats_fields() {
	local f=/tmp/obs-stats names want addr pkey rc=0 i v
	cat $PROC/ib0/stats > $f || return 1
	cat $f
	names=$(cut -d: -f1 $f | tr '\n' ' ')
	want="${FIELDS[*]} "
	expect_eq "$names" "$want" "field names in order" || rc=1
	# Every value: a number, except these.
	for i in "${FIELDS[@]}"; do
		v=$(stat_val $f "$i")
		case $i in
		mode|link_layer|gid|qpn|pkey) ;;
		*) [[ $v =~ ^[0-9]+$ ]] || { echo "$i: '$v' is not a number"; rc=1; } ;;
		esac
	done
	addr=$(hex_addr)
	pkey=$(ip -d link show ib0 | sed -n 's/.*pkey *\(0x[0-9a-f]*\).*/\1/p')
	expect_eq "$(stat_val $f mode)" datagram mode || rc=1
	expect_eq "$(stat_val $f link_layer)" ethernet link_layer || rc=1
	expect_eq "$(stat_val $f mtu)" "$(val $NET/ib0/mtu)" mtu || rc=1
	expect_eq "$(stat_val $f qpn)" "0x${addr:2:6}" qpn || rc=1
	expect_eq "$(stat_val $f gid)" "$(gid_of_hex "${addr:8:32}")" gid || rc=1
	expect_eq "$(stat_val $f pkey)" "$pkey" pkey || rc=1
	expect_eq "$(stat_val $f channels)" "$(channels_now)" channels || rc=1
	expect_eq "$(stat_val $f send_queue_size)" "$(val $PARAM/send_queue_size)" \
		send_queue_size || rc=1
	expect_eq "$(stat_val $f recv_queue_size)" "$(val $PARAM/recv_queue_size)" \
		recv_queue_size || rc=1
	v=$(stat_val $f send_queue_depth)
	[ "${v:-x}" -le "$(($(stat_val $f send_queue_size) * $(stat_val $f channels)))" ] 2>/dev/null ||
		{ echo "send_queue_depth $v"; rc=1; }
	expect_eq "$(stat_val $f send_queue_backlog)" 0 send_queue_backlog || rc=1
	expect_eq "$(stat_val $f connections)" 0 connections || rc=1
	# Joins are asynchronous; paths may resolve meanwhile.
	wait_for 10 groups_match ||
		{ echo "mcast_groups $(stat_val $PROC/ib0/stats mcast_groups), want $(wanted_groups)"; rc=1; }
	wait_for 5 paths_match ||
		{ echo "paths $(stat_val $PROC/ib0/stats paths), debugfs:"; cat $DBG/ib0/paths; rc=1; }
	return $rc
}

# The counter table, then seven counters per channel in use.
t_ethtool_names() {
	local names want c n
	n=$(channels_now)
	want="${COUNTERS[*]} "
	for ((c = 0; c < n; c++)); do
		want+="ch${c}_rx_packets ch${c}_rx_bytes ch${c}_tx_packets ch${c}_tx_bytes "
		want+="ch${c}_napi_polls ch${c}_cq_events ch${c}_holdoffs "
	done
	names=$(ethtool -S ib0 | awk -F: 'NR > 1 { gsub(/[[:space:]]/, "", $1); print $1 }' |
		tr '\n' ' ')
	expect_eq "$names" "$want" "ethtool -S names"
}

# --- (b) exact counts ---

# snap FILE: tx and rx packets from /proc, ethtool -S and ip -s link.
snap() {
	local e i
	e=$(ethtool -S ib0)
	i=$(ip -s link show dev ib0 |
		awk '/^ *RX:/ { getline; rx = $2 } /^ *TX:/ { getline; tx = $2 } END { print tx, rx }')
	echo "$(stat_val $PROC/ib0/stats tx_packets) $(stat_val $PROC/ib0/stats rx_packets)" \
		"$(sed -n 's/^ *tx_packets: //p' <<<"$e") $(sed -n 's/^ *rx_packets: //p' <<<"$e")" \
		"$i" > "$1"
}

t_neigh_permanent() {
	[ ${#PEER_HEX} = 40 ] || { echo "peer address '$PEER_HEX'"; return 1; }
	ip neigh replace "$PEERIP" lladdr "$(lladdr_of_hex "$PEER_HEX")" dev ib0 nud permanent
}

proc_moved() {
	local t r t0 r0 rest
	t=$(stat_val $PROC/ib0/stats tx_packets)
	r=$(stat_val $PROC/ib0/stats rx_packets)
	read -r t0 r0 rest < /tmp/obs-s0
	[ $((t - t0)) -ge $PINGS ] && [ $((r - r0)) -ge $PINGS ]
}

# Both VMs: exactly $PINGS sent and $PINGS received, seen alike by all three.
t_exact_counts() {
	local s0 s1 i rc=0 what=(proc_tx proc_rx ethtool_tx ethtool_rx ip_tx ip_rx)
	wait_for 10 proc_moved
	sleep 1
	snap /tmp/obs-s1
	read -r -a s0 < /tmp/obs-s0
	read -r -a s1 < /tmp/obs-s1
	echo "before: ${s0[*]}"
	echo "after:  ${s1[*]}"
	for i in 0 1 2 3 4 5; do
		expect_eq "$((s1[i] - s0[i]))" "$PINGS" "${what[i]} delta" || rc=1
	done
	return $rc
}

# --- (c) tshark ---

# The capture runs in the background of the main shell (see below), which
# waits for it and leaves its exit status in capture_rc. It is taken with
# dumpcap, the capture engine tshark runs itself: tshark alone needs over
# a minute to start in a TCG guest with KASAN.
capture_ready() {
	wait_for 120 grep -q "Capturing on" /tmp/obs-dumpcap.err ||
		{ cat /tmp/obs-dumpcap.err; return 1; }
	sleep 1
}

# The echo request and reply of vm1's ping, decoded down to ICMP.
t_tshark_decodes() {
	local out req rep
	if [ "$capture_rc" != 0 ]; then
		echo "dumpcap exit status $capture_rc:"
		cat /tmp/obs-dumpcap.err
		return 1
	fi
	out=$(tshark -r /tmp/obs.pcap -T fields -e frame.protocols -e ip.src \
		-e ip.dst -e icmp.type 2>/dev/null)
	echo "$out"
	req=$(printf '%s\t%s\t8' 10.10.0.1 10.10.0.2)
	rep=$(printf '%s\t%s\t0' 10.10.0.2 10.10.0.1)
	grep -E ':ip:icmp' <<<"$out" | grep -qF "$req" &&
		grep -E ':ip:icmp' <<<"$out" | grep -qF "$rep"
}

# --- (d) path aging ---

path_line() { grep "^$PEER_GID " $DBG/ib0/paths; }
path_gone() { ! path_line > /dev/null; }

# file_has FILE REGEX: a line of FILE matches REGEX. Bash builtins only:
# these guests take about a second for every program they start, which
# would leave a short wait_for one or two looks.
file_has() {
	local l
	while read -r l; do
		[[ $l =~ $2 ]] && return 0
	done < "$1"
	return 1
}

# The MAC comes from the peer's link-local GID: its eth0 MAC.
path_valid() {
	file_has $DBG/ib0/paths "^$PEER_GID state=valid age=[0-9]+ queue=0 dmac=52:54:00:00:00:0$PEER sl=[0-9]+\$"
}

# The neighbour entry of the peer's 20-byte address, with its handle.
neigh_line() { grep "^qpn 0x${PEER_HEX:2:6} gid $PEER_GID " $DBG/ib0/neigh; }
neigh_valid() { file_has $DBG/ib0/neigh "^qpn 0x${PEER_HEX:2:6} gid $PEER_GID .* ah yes idle_s "; }
neigh_gone() { ! neigh_line > /dev/null; }

# The path is seen while pings keep it in use (a 2 s timeout is short for
# a TCG guest), then the pings stop. The first ping waits for ARP and for
# the path to resolve; the pings go on for 15 s, well past both waits.
t_path_valid() {
	local pid rc=0 start=$SECONDS
	ping -c 30 -i 0.5 -W 5 "$PEERIP" > /tmp/obs-ping.out 2>&1 &
	pid=$!
	wait_for 10 path_valid || { echo "no valid path to $PEER_GID:"; cat $DBG/ib0/paths; rc=1; }
	wait_for 4 neigh_valid || { echo "no neighbour entry:"; cat $DBG/ib0/neigh; rc=1; }
	echo "path and neighbour seen after $((SECONDS - start)) s"
	path_line >&2
	neigh_line >&2
	wait $pid || { cat /tmp/obs-ping.out; rc=1; }
	return $rc
}

t_path_ages_out() {
	local start=$SECONDS
	wait_for 20 path_gone || { echo "still there after 20 s:"; path_line; return 1; }
	wait_for 5 neigh_gone || { echo "neighbour still there:"; neigh_line; return 1; }
	echo "gone after $((SECONDS - start)) s"
}

# debugfs mcast: the header, then the broadcast group, joined as a full
# member, first.
t_mcast_debugfs() {
	cat $DBG/ib0/mcast
	head -1 $DBG/ib0/mcast | grep -qx '# mgid state join \[broadcast\] backoff_ms error' &&
		sed -n 2p $DBG/ib0/mcast | grep -q '^ff12:401b:ffff:0000:0000:0000:ffff:ffff state joined join full broadcast backoff_ms 0 error 0$' &&
		[ "$(grep -c ' state joined join full' $DBG/ib0/mcast)" = "$(wanted_groups)" ]
}

# With the default timeout the same path stays.
t_path_stays() {
	ping_all 1 "$PEERIP" > /dev/null || return 1
	sleep 5
	path_line | grep -q ' state=valid '
}

# --- (e) rename, (g) namespaces ---

entries_named() {
	local name=$1 gone=$2 rc=0
	grep -qx 'mode: datagram' "$PROC/$name/stats" || { echo "no $PROC/$name/stats"; rc=1; }
	[ -e "$DBG/$name/paths" ] || { echo "no $DBG/$name/paths"; rc=1; }
	[ ! -e "$PROC/$gone" ] || { echo "$PROC/$gone still there"; rc=1; }
	[ ! -e "$DBG/$gone" ] || { echo "$DBG/$gone still there"; rc=1; }
	return $rc
}

t_rename() {
	local rc=0
	ip link set ib0 down && ip link set ib0 name ipngobs0 || return 1
	entries_named ipngobs0 ib0 || rc=1
	ip link set ipngobs0 name ib0 || return 1
	entries_named ib0 ipngobs0 || rc=1
	ip link set ib0 up && wait_for 10 carrier_up && wait_for 10 oper_up || rc=1
	return $rc
}

t_netns_move() {
	local rc=0
	ip netns add $NS || return 1
	ip netns exec $NS test -d $PROC || { echo "no $PROC in a new namespace"; rc=1; }
	ip link set ib0 netns $NS || return 1
	[ ! -e $PROC/ib0 ] || { echo "$PROC/ib0 still in the initial namespace"; rc=1; }
	ip netns exec $NS grep -qx 'mode: datagram' $PROC/ib0/stats ||
		{ echo "no $PROC/ib0/stats in $NS"; rc=1; }
	[ -e $DBG/ib0/paths ] || { echo "no $DBG/ib0/paths while in $NS"; rc=1; }
	return $rc
}

# Deleting the namespace sends ib0 back (netns_refund), entries along.
t_netns_refund() {
	ip netns del $NS || return 1
	wait_for 60 test -e $NET/ib0 || { echo "ib0 did not come back"; return 1; }
	wait_for 10 test -r $PROC/ib0/stats || { echo "no $PROC/ib0/stats"; return 1; }
	[ -e $DBG/ib0/paths ] || { echo "no $DBG/ib0/paths"; return 1; }
	bring_up
}

# --- (f) module removal, in every namespace ---

t_rmmod_removes() {
	local rc=0
	mountpoint -q /sys/kernel/debug || { echo "debugfs not mounted"; rc=1; }
	if [ $HAVE_NETNS = 1 ]; then
		ip netns add $NS || return 1
		ip netns exec $NS test -d $PROC || { echo "no $PROC in $NS"; rc=1; }
	fi
	rmmod ipoib_ng || rc=1
	[ ! -e $PROC ] || { echo "$PROC still there"; rc=1; }
	[ ! -e $DBG ] || { echo "$DBG still there"; rc=1; }
	if [ $HAVE_NETNS = 1 ]; then
		ip netns exec $NS test ! -e $PROC || { echo "$PROC still there in $NS"; rc=1; }
		ip netns del $NS || rc=1
	fi
	return $rc
}

ktap_begin ipoib_ng_e2e_observe
ktap_check "setup_ib0_up_ipv6_off" setup
vm_publish obs-ib0addr "$(hex_addr)"
vm_barrier obs-up 180
PEER_HEX=$(vm_fetch "$PEER" obs-ib0addr 60)
PEER_GID=$(gid_of_hex "${PEER_HEX:8:32}")
# For the record (script.log), not the KTAP.
sed 's/^/stats: /' $PROC/ib0/stats >&2

# (a)
ktap_check "proc_stats_every_field_and_value" t_stats_fields
ktap_check "ethtool_S_lists_the_counter_table" t_ethtool_names

# (b) only vm1 pings; the link is otherwise quiet.
ktap_check "neighbour_permanent" t_neigh_permanent
vm_barrier obs-neigh 120
if [ "$ME" = 1 ]; then
	ktap_check "warm_up_ping" ping_all 1 "$PEERIP"
fi
vm_barrier obs-warm 120
sleep 1
snap /tmp/obs-s0
vm_barrier obs-snap0 120
if [ "$ME" = 1 ]; then
	ktap_check "ping_${PINGS}_echo_requests" ping_all $PINGS -i 0.2 "$PEERIP"
fi
vm_barrier obs-pinged 120
ktap_check "ping_counted_exactly_in_proc_ethtool_ip" t_exact_counts

# (c) the neighbour stays permanent: the capture holds only the pings.
rm -f /tmp/obs.pcap /tmp/obs-dumpcap.err
timeout 150 dumpcap -q -P -i ib0 -c 4 -a duration:120 -w /tmp/obs.pcap \
	> /dev/null 2> /tmp/obs-dumpcap.err &
capture_pid=$!
ktap_check "capture_on_ib0_starts" capture_ready
vm_barrier obs-capture 180
if [ "$ME" = 1 ]; then
	ping_all 2 -i 0.5 "$PEERIP" > /dev/null
fi
capture_rc=0
wait "$capture_pid" || capture_rc=$?
ktap_check "tshark_decodes_ip_icmp" t_tshark_decodes
ip neigh del "$PEERIP" dev ib0
vm_barrier obs-capture-done 180

# (d)
timeout_was=$(val $PARAM/path_timeout)
echo 2 > $PARAM/path_timeout
vm_barrier obs-age 120
ktap_check "debugfs_path_valid_after_ping" t_path_valid
ktap_check "path_ages_out_after_path_timeout" t_path_ages_out
echo "$timeout_was" > $PARAM/path_timeout
vm_barrier obs-age-done 120
ktap_check "path_stays_with_default_timeout" t_path_stays
ktap_check "debugfs_mcast_lists_joined_groups" t_mcast_debugfs
vm_barrier obs-stay-done 120

# (e), (g)
ktap_check "entries_follow_rename" t_rename
if [ $HAVE_NETNS = 1 ]; then
	ktap_check "entries_follow_netns_move" t_netns_move
	ktap_check "entries_return_with_netns_refund" t_netns_refund
	vm_barrier obs-netns 180
	ktap_check "ping_after_netns_round_trip" ping_all 3 "$PEERIP"
else
	for t in entries_follow_netns_move entries_return_with_netns_refund \
		 ping_after_netns_round_trip; do
		ktap_skip $t "kernel without CONFIG_NET_NS"
	done
fi
vm_barrier obs-end 180

# (f)
ktap_check "rmmod_removes_proc_and_debugfs" t_rmmod_removes
ktap_end
