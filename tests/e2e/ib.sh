#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "ib": ipoib_ng on InfiniBand. tests/softib gives a VM
# two soft HCAs joined by a cable; OpenSM from Debian sweeps them and is
# the SA. Each VM has a fabric of its own; with two VMs the first runs
# the datagram, connected-mode, fabric-event, networkd and exclusive
# namespace cases and the second the partition, ipoib-cni and
# NetworkManager ones. Host A is network namespace h1 with
# the interface of softib0, host B namespace h2 with that of softib1.
# Checks the fabric with the infiniband-diags tools (ibstat, saquery,
# smpquery), then datagram mode through the real SA: addresses, the
# broadcast group's MTU, path records, ARP/ND, ping, TCP, multicast and
# the memberships OpenSM records. KTAP on stdout.
set -u
# shellcheck source=../softib/fabric.sh
. "$IPNG_REPO/tests/softib/fabric.sh"

XFER=$IPNG_REPO/tests/e2e/xfer.py
BCAST_MTU=2048			# the default partition's, in partitions.conf
DBG=/sys/kernel/debug/ipoib_ng
A='' B=''			# the interfaces of softib0 and softib1

in_a() { ip netns exec h1 "$@"; }
in_b() { ip netns exec h2 "$@"; }
# A program started in the background with `ip netns exec NS PROG &` is
# PROG itself once ip has exec'd it, so that kill reaches it; `in_b PROG &`
# would be a subshell running the function, and kill would miss PROG.

setup() {
	sm_partitions $BCAST_MTU
	fabric_up
}

teardown() {
	pkill -f "$XFER" 2>/dev/null
	fabric_down
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

# in_ns NS CMD...: CMD in network namespace NS; "-" is init_net.
in_ns() {
	local ns=$1
	shift
	if [ "$ns" = - ]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

# xfer_sha256 FROM TO ADDR PORT: 8 MiB over TCP from namespace FROM to
# ADDR, a listener in namespace TO; the sha256 sums must match.
xfer_sha256() {
	local sum pid
	head -c 8M /dev/urandom > /tmp/ib-send.bin
	sum=$(sha256sum < /tmp/ib-send.bin | cut -d' ' -f1)
	in_ns "$2" python3 "$XFER" recv "$3" "$4" /tmp/ib-recv.bin 60 &
	pid=$!
	sleep 1
	in_ns "$1" python3 "$XFER" send "$3" "$4" /tmp/ib-send.bin 60 || return 1
	wait $pid || return 1
	echo "sent $sum received $(sha256sum < /tmp/ib-recv.bin)"
	[ "$(sha256sum < /tmp/ib-recv.bin | cut -d' ' -f1)" = "$sum" ]
}

t_tcp_sha256() { xfer_sha256 h1 h2 $IPB 5301; }

# B joins 239.1.2.3 (a full member: it creates the group with the
# broadcast group's parameters); A sends to it as a send-only member.
# The MGID holds the low 28 bits of the IPv4 group (RFC 4391).
t_mcast_udp() {
	ip netns exec h2 python3 "$XFER" mrecv 239.1.2.3 $IPB 5302 60 > /tmp/ib-mrecv.out &
	local pid=$!
	sleep 2
	ip netns exec h1 python3 "$XFER" msend 239.1.2.3 $IPA 5302 20 > /dev/null &
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
# when B, its only member, leaves (the listener is killed: its socket's
# close drops the group from the netdev, and ipoib_ng sends the leave).
# Each step is waited for on its own, 30 s at most (a starved guest took
# over 10 s from starting python to OpenSM's record).
MGID_204=ff12:401b:ffff::f01:204
b_has_204() { ip -n h2 maddr show dev "$B" | grep -q 'inet  *239\.1\.2\.4$'; }
sm_has_204() { saquery -C softib0 -m | grep -q "MGID\.*$MGID_204\$"; }
t_membership_in_sm() {
	local pid step

	ip netns exec h2 python3 "$XFER" mrecv 239.1.2.4 $IPB 5304 300 > /dev/null &
	pid=$!
	if ! wait_for 30 b_has_204; then
		step="B's socket has not joined 239.1.2.4 after 30 s"
	elif ! wait_for 30 sm_has_204; then
		step="$MGID_204 not in the SM 30 s after B joined it"
	else
		echo "$MGID_204 in the SM while B listens"
	fi
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	if [ -z "${step:-}" ]; then
		wait_for 30 eval '! sm_has_204' && return 0
		step="$MGID_204 still in the SM 30 s after B's listener ended"
	fi
	echo "$step"
	# What each side held when the check gave up.
	echo "B's groups (ip maddr, then ipoib_ng's debugfs):"
	ip -n h2 maddr show dev "$B" | grep inet
	grep 0f01:0204 "$DBG/$B/mcast"
	echo "OpenSM's records of $MGID_204:"
	saquery -C softib0 -m | grep -A12 "MGID\.*$MGID_204\$" | grep -E 'MGID|PortGid|JoinState'
	tail -5 $SMDIR/opensm.log
	return 1
}

# The IPv6 groups a host only sends to (all-routers, MLDv2 reports) are
# created by its send-only joins. A send-only group left unused for
# sendonly_timeout (300 s) is left again, and a starved guest can reach
# this case more than 300 s after its last router solicitation or MLD
# report: A sends to both groups first (nobody answers), so the case
# checks the joins, not how long ago the interface came up.
v6_sendonly_in_sm() {
	local out
	out=$(saquery -C softib0 -m)
	grep -q 'MGID\.*ff12:601b:ffff::16$' <<<"$out" &&
		grep -q 'MGID\.*ff12:601b:ffff::2$' <<<"$out"
}
t_ipv6_sendonly_groups() {
	in_a ping -6 -c 1 -W 1 "ff02::16%$A" > /dev/null 2>&1
	in_a ping -6 -c 1 -W 1 "ff02::2%$A" > /dev/null 2>&1
	wait_for 30 v6_sendonly_in_sm && return 0
	saquery -C softib0 -m | grep MGID
	return 1
}

t_counters() {
	local s
	s=$(in_a cat /proc/net/ipoib/"$A"/stats)
	echo "$s" | grep -E '^(link_layer|rx_packets|tx_packets|paths|mcast_groups):'
	grep -q '^link_layer: infiniband' <<<"$s" &&
		[ "$(kv_get rx_packets <<<"$s")" -gt 0 ] &&
		[ "$(kv_get tx_packets <<<"$s")" -gt 0 ]
}

# --- connected mode over InfiniBand: ib_cm REQ with the SA's path ---

CM_MTU=65520
PARAM=/sys/module/ipoib_ng/parameters

# eth_in NS IF NAME: the ethtool -S counter NAME of IF in namespace NS.
eth_in() { ip netns exec "$1" ethtool -S "$2" | kv_get "$3"; }
# sib_counter DEV NAME: a counter of the soft HCA DEV (tests/softib).
sib_counter() { proc_stat "$2" "/sys/kernel/debug/softib/$1/counters"; }
# cm_live IF: IF has a live tx and a live rx connection (debugfs cm).
cm_live() {
	grep -q '^tx .* state live ' "$DBG/$1/cm" &&
		grep -q '^rx .* state live ' "$DBG/$1/cm"
}
cm_lines() { grep -c -v '^#' "$DBG/$1/cm"; }
cm_none() { [ "$(cm_lines "$A")" = 0 ] && [ "$(cm_lines "$B")" = 0 ]; }
# RC QPs ipoib_ng holds on either HCA.
rc_qps() { rdma res show qp | grep -c ' type RC .*ipoib_ng'; }
no_rc_qps() { [ "$(rc_qps)" = 0 ]; }

# Both sides to connected mode (netlink), MTU 65520, flag in the address.
t_cm_mode() {
	local ns ifn
	for ns in h1 h2; do
		ifn=$A
		[ $ns = h2 ] && ifn=$B
		ip -n $ns link set "$ifn" type ipoib mode connected &&
			ip -n $ns link set "$ifn" mtu $CM_MTU || return 1
		ip -n $ns -d -o link show "$ifn" | grep -q "mtu $CM_MTU .*mode connected" &&
			ip -n $ns -o link show "$ifn" | grep -q 'link/infiniband 80:' ||
			{ ip -n $ns -d link show "$ifn"; return 1; }
	done
}

# 60000-byte echoes, unfragmented: only an RC connection carries them.
# ib_cm's REQ carried the path OpenSM gave; both ends see the connection
# live, and softib's RC acknowledged the sends.
t_cm_ping() {
	local ack0 ack1
	ack0=$(sib_counter softib1 rc_acked)
	in_a ping -c 3 -s 60000 -M do -W 5 $IPB &&
		in_b ping -c 3 -s 60000 -M do -W 5 $IPA || return 1
	wait_for 10 cm_live "$A" && wait_for 10 cm_live "$B" ||
		{ cat "$DBG/$A/cm" "$DBG/$B/cm"; return 1; }
	ack1=$(sib_counter softib1 rc_acked)
	cat "$DBG/$A/cm"
	echo "softib1 rc_acked $ack0 -> $ack1"
	[ $((ack1 - ack0)) -ge 3 ]
}

# 8 MiB over TCP with MSS near 65480, checked with sha256, with no
# fallback to UD on the way.
t_cm_tcp() {
	local fb0 fb1
	fb0=$(eth_in h1 "$A" tx_cm_fallback)
	t_tcp_sha256 || return 1
	fb1=$(eth_in h1 "$A" tx_cm_fallback)
	echo "tx_cm_fallback $fb0 -> $fb1"
	[ "$fb1" = "$fb0" ]
}

# Idle connections are reaped after cm_idle_timeout, with their RC QPs.
t_cm_reap() {
	local rc=0
	echo 3 > $PARAM/cm_idle_timeout || return 1
	wait_for 30 cm_none || { cat "$DBG/$A/cm" "$DBG/$B/cm"; rc=1; }
	wait_for 10 no_rc_qps || { rdma res show qp | grep ' RC '; rc=1; }
	echo 60 > $PARAM/cm_idle_timeout || rc=1
	return $rc
}

# max_connections=0: echoes still answered, over UD, and counted; the
# 60000-byte one with DF is refused with "fragmentation needed".
t_cm_fallback() {
	local rc=0 fb0 fb1 cap0 cap1
	fb0=$(eth_in h1 "$A" tx_cm_fallback)
	cap0=$(eth_in h1 "$A" cm_cap_reached)
	echo 0 > $PARAM/max_connections || return 1
	in_a ping -c 3 -W 5 $IPB || rc=1
	fb1=$(eth_in h1 "$A" tx_cm_fallback)
	cap1=$(eth_in h1 "$A" cm_cap_reached)
	echo "tx_cm_fallback $fb0 -> $fb1, cm_cap_reached $cap0 -> $cap1"
	[ $((fb1 - fb0)) -ge 3 ] && [ $((cap1 - cap0)) -ge 1 ] || rc=1
	grep -q '^tx .* state live ' "$DBG/$A/cm" && { cat "$DBG/$A/cm"; rc=1; }
	echo 4096 > $PARAM/max_connections || rc=1
	return $rc
}

# Back to datagram mode: the MTU returns to the group's, traffic goes on.
t_cm_back() {
	ip -n h1 link set "$A" type ipoib mode datagram &&
		ip -n h2 link set "$B" type ipoib mode datagram || return 1
	[ "$(mtu_in h1 "$A")" = $((BCAST_MTU - 4)) ] || return 1
	in_a ping -c 2 -W 5 $IPB && wait_for 30 no_rc_qps
}

# --- fabric events: the SM restarts, a LID moves, the SM is away, the
# cable is pulled ---

BCAST_MGID=ff12:401b:ffff::ffff:ffff
SIB_DBG=/sys/kernel/debug/softib

# The port GIDs saquery -m lists as members of the broadcast group. The
# query is a trusted one (OpenSM's default SM_Key, 1): to others OpenSM
# gives each member's record with its PortGid zeroed.
bcast_members() {
	saquery -C softib0 --smkey 1 -m 2>/dev/null | awk -F'[.]+' -v g=$BCAST_MGID '
		$1 ~ /MGID$/ { on = ($2 == g) }
		on && $1 ~ /PortGid$/ { print $2 }' | sort -u
}
bcast_both() { [ "$(bcast_members | wc -l)" = 2 ]; }
# above NS IF NAME N: the counter NAME of IF is above N.
above() { [ "$(eth_in "$1" "$2" "$3")" -gt "$4" ]; }
# answers [NS] ADDR: one echo to ADDR (from namespace NS) is answered.
answers() {
	if [ $# = 2 ]; then
		ip netns exec "$1" ping -c 1 -W 2 "$2" > /dev/null
	else
		ping -c 1 -W 2 "$1" > /dev/null
	fi
}
ping_ab() { answers h1 $IPB; }
lid_is() { [ "$(lid_of "$1")" = "$2" ]; }
dlid_of_b() {
	grep 'fe80:0000:0000:0000:02aa:5e00:0000:0101' "$DBG/$A/paths" |
		grep -o 'dlid=0x[0-9a-f]*' | cut -d= -f2
}

# OpenSM killed and started again: its first sweep as master sets
# ClientReregister on both ports; each interface counts the port event,
# rejoins its groups (the new SM knows no member), and traffic resumes.
t_sm_restart() {
	local pa ra rb
	pa=$(eth_in h1 "$A" port_events)
	ra=$(eth_in h1 "$A" mcast_rejoins) rb=$(eth_in h2 "$B" mcast_rejoins)
	sm_stop && sm_start || return 1
	grep -c 'client rereg' $SMDIR/opensm.log
	wait_for 30 above h1 "$A" mcast_rejoins "$ra" &&
		wait_for 30 above h2 "$B" mcast_rejoins "$rb" ||
		{ echo "mcast_rejoins did not move from $ra/$rb"; return 1; }
	wait_for 30 bcast_both || { saquery -C softib0 --smkey 1 -m; return 1; }
	echo "broadcast group members: $(bcast_members | tr '\n' ' ')"
	echo "port_events $pa -> $(eth_in h1 "$A" port_events)," \
		"mcast_rejoins $ra -> $(eth_in h1 "$A" mcast_rejoins)"
	above h1 "$A" port_events "$pa" &&
		wait_for 20 ping_ab && in_b ping -c 2 -W 5 $IPA > /dev/null
}

# B's LID moves (OpenSM restarted with another LID for B in its
# guid2lid file): B raises LID_CHANGE, both ports are reregistered, A's
# path to B is flushed and resolved again with the new DLID.
NEW_LID=48
t_lid_change() {
	local old g2l=$OSM_CACHE_DIR/guid2lid lid
	old=$(lid_of softib1)
	sm_stop || return 1
	grep -q "^$B_GUID " $g2l || { cat $g2l; return 1; }
	sed -i "s/^$B_GUID .*/$B_GUID $(printf '0x%04x 0x%04x' $NEW_LID $NEW_LID)/" $g2l
	sm_start || return 1
	wait_for 30 lid_is softib1 $NEW_LID ||
		{ ibstat softib1 1; return 1; }
	wait_for 30 ping_ab || return 1
	lid=$(dlid_of_b)
	echo "softib1 LID $old -> $(lid_of softib1), A's path to B: dlid $lid"
	[ "$lid" = "$(printf '0x%04x' $NEW_LID)" ] && in_b ping -c 2 -W 5 $IPA > /dev/null
}

# OpenSM away for more than twice the path timeout: a path in use stays
# cached (pings every half second across the SM's stop lose nothing while
# the SA cannot answer), and once the SM is back (reregistering both
# ports, which flushes the paths) paths are resolved from the SA again.
# The ping runs until the cache has been looked at, however long OpenSM
# takes to exit in a starved guest: a ping that had ended before would
# leave an idle path rightly aged out (seen in CI: the cache empty and
# nothing lost, OpenSM's stop having taken most of the ping's time).
t_sm_away() {
	local rc=0 pid lid pe t0 sent got
	pe=$(eth_in h1 "$A" port_events)
	ip netns exec h1 ping -i 0.5 -W 2 -w 120 $IPB > /tmp/ib-away.out &
	pid=$!
	sleep 2
	echo 5 > $PARAM/path_timeout || rc=1
	t0=$SECONDS
	sm_stop || rc=1
	echo "OpenSM stopped in $((SECONDS - t0)) s"
	sleep 12
	kill -0 $pid 2> /dev/null || { echo "the ping ended before the cache was read"; rc=1; }
	lid=$(dlid_of_b)
	echo "with the SM away 12 s, A's path to B: dlid $lid"
	if [ -z "$lid" ]; then
		# Neighbours too: an entry still sending with its own handle
		# after its path left the cache would explain an empty cache
		# and no loss. A port event flushes both; none is expected
		# while the SM is away.
		cat "$DBG/$A/paths" "$DBG/$A/neigh"
		echo "A's port_events: $pe -> $(eth_in h1 "$A" port_events)"
		rc=1
	fi
	# Stopped with SIGINT, ping reports what it sent and got back; the
	# request in flight at that instant may be unanswered.
	kill -INT $pid
	wait $pid
	tail -2 /tmp/ib-away.out
	sent=$(sed -n 's/^\([0-9]*\) packets transmitted.*/\1/p' /tmp/ib-away.out)
	got=$(sed -n 's/.* \([0-9]*\) received.*/\1/p' /tmp/ib-away.out)
	[ "${sent:-0}" -ge 20 ] && [ $((sent - ${got:-0})) -le 1 ] ||
		{ echo "sent ${sent:-?}, answered ${got:-?}"; rc=1; }
	sm_start || rc=1
	wait_for 30 ping_ab || rc=1
	[ "$(dlid_of_b)" = "$(printf '0x%04x' "$(lid_of softib1)")" ] || rc=1
	echo 300 > $PARAM/path_timeout || rc=1
	return $rc
}

no_carrier_in() { ! carrier_in "$@"; }

# The cable pulled: both ports go down and carrier follows; plugged in
# again, OpenSM's next sweep brings the ports to ACTIVE, carrier comes
# back and traffic resumes.
t_port_down_up() {
	local pa rc=0
	pa=$(eth_in h1 "$A" port_events)
	echo 0 > $SIB_DBG/softib1/link || return 1
	wait_for 20 no_carrier_in h1 "$A" && wait_for 20 no_carrier_in h2 "$B" ||
		{ echo "carrier stayed on with the cable out"; rc=1; }
	ping_ab && { echo "ping answered with the cable out"; rc=1; }
	echo 1 > $SIB_DBG/softib1/link || return 1
	wait_for 60 port_active softib0 && wait_for 60 port_active softib1 ||
		{ ibstat softib1 1; return 1; }
	wait_for 30 carrier_in h1 "$A" && wait_for 30 carrier_in h2 "$B" || return 1
	wait_for 30 ping_ab || return 1
	echo "port_events $pa -> $(eth_in h1 "$A" port_events)"
	above h1 "$A" port_events "$pa" && return $rc
}

# --- partitions: P_Key children of both hosts in 0x8001 and 0x8002 ---

PARTS=('P1=0x8001, ipoib, mtu=4 : ALL=full;' 'P2=0x8002, ipoib, mtu=4 : ALL=full;')
# pkey_in HCA PKEY: PKEY (full member) is in the port's P_Key table.
pkey_in() { grep -qx "$2" /sys/class/infiniband/"$1"/ports/1/pkeys/*; }
both_have() { pkey_in softib0 "$1" && pkey_in softib1 "$1"; }
neither_has() { ! pkey_in softib0 "$1" && ! pkey_in softib1 "$1"; }
# OpenSM reads partitions.conf again on SIGHUP (a heavy sweep).
sm_reread() { pkill -HUP -x opensm; }
# child NS PARENT NAME PKEY ADDR: a netlink child, addressed and up.
child() {
	ip -n "$1" link add link "$2" name "$3" type ipoib pkey "$4" &&
		ip -n "$1" addr add "$5"/24 dev "$3" && ip -n "$1" link set "$3" up
}
# The 20-byte link address of IF in NS.
lladdr_of() {
	ip -n "$1" -o link show "$2" | grep -o 'link/infiniband [0-9a-f:]*' | cut -d' ' -f2
}

# OpenSM puts the new partitions in both ports' tables; children of both
# hosts in 0x8001 talk, with the P_Key in their broadcast address.
t_part_children() {
	sm_partitions $BCAST_MTU "${PARTS[@]}"
	sm_reread
	wait_for 60 both_have 0x8001 && wait_for 30 both_have 0x8002 ||
		{ cat /sys/class/infiniband/softib1/ports/1/pkeys/* | sort -u; return 1; }
	child h1 "$A" pa1 0x8001 10.13.1.1 && child h2 "$B" pb1 0x8001 10.13.1.2 ||
		return 1
	wait_for 30 carrier_in h1 pa1 && wait_for 30 carrier_in h2 pb1 || return 1
	ip -n h1 -o link show pa1 | grep -q 'brd 00:ff:ff:ff:ff:12:40:1b:80:01:' ||
		{ ip -n h1 link show pa1; return 1; }
	in_a ping -c 3 -W 5 10.13.1.2 && in_b ping -c 3 -W 5 10.13.1.1 &&
		in_a ping -c 2 -W 5 $IPB
}

# A child of 0x8002 on A sends to B's child of 0x8001 (a static
# neighbour with its address, the SA gives a path in 0x8002): softib1
# drops the datagrams for their P_Key, no echo comes back.
t_part_isolated() {
	local d0 d1 rc=0
	child h1 "$A" pa2 0x8002 10.13.9.1 || return 1
	ip -n h2 addr add 10.13.9.2/24 dev pb1 || return 1
	wait_for 30 carrier_in h1 pa2 || return 1
	ip -n h1 neigh replace 10.13.9.2 lladdr "$(lladdr_of h2 pb1)" dev pa2 nud permanent ||
		return 1
	d0=$(sib_counter softib1 drop_pkey)
	in_a ping -c 3 -W 2 10.13.9.2 && { echo "answered across partitions"; rc=1; }
	d1=$(sib_counter softib1 drop_pkey)
	echo "softib1 drop_pkey $d0 -> $d1"
	[ "$d1" -gt "$d0" ] || rc=1
	ip -n h1 link del pa2
	ip -n h2 addr del 10.13.9.2/24 dev pb1
	return $rc
}

# Connected mode inside 0x8001: the REQ's path and the RC QPs carry it.
t_part_connected() {
	ip -n h1 link set pa1 type ipoib mode connected &&
		ip -n h2 link set pb1 type ipoib mode connected &&
		ip -n h1 link set pa1 mtu $CM_MTU && ip -n h2 link set pb1 mtu $CM_MTU ||
		return 1
	in_a ping -c 3 -s 60000 -M do -W 5 10.13.1.2 || return 1
	grep '^tx .* state live ' "$DBG/pa1/cm" || { cat "$DBG/pa1/cm"; return 1; }
}

# 0x8001 taken out of partitions.conf: the SM removes it from both
# tables, the children's carrier goes off while the port interfaces keep
# working; put back, the children come back and talk again.
t_part_removed() {
	sm_partitions $BCAST_MTU "${PARTS[1]}"
	sm_reread
	wait_for 60 neither_has 0x8001 || return 1
	wait_for 30 no_carrier_in h1 pa1 && wait_for 30 no_carrier_in h2 pb1 ||
		{ ip -n h1 link show pa1; return 1; }
	in_a ping -c 2 -W 5 $IPB > /dev/null || { echo "ib lost with the child"; return 1; }
	sm_partitions $BCAST_MTU "${PARTS[@]}"
	sm_reread
	wait_for 60 both_have 0x8001 || return 1
	wait_for 30 carrier_in h1 pa1 && wait_for 30 carrier_in h2 pb1 || return 1
	wait_for 30 answers h1 10.13.1.2
}

# A child made while its P_Key is in no table opens with carrier off,
# and comes up when the SM adds it.
t_part_late() {
	child h1 "$A" pa3 0x8003 10.13.3.1 && child h2 "$B" pb3 0x8003 10.13.3.2 ||
		return 1
	sleep 3
	carrier_in h1 pa3 && { echo "carrier on without the P_Key"; return 1; }
	sm_partitions $BCAST_MTU "${PARTS[@]}" 'P3=0x8003, ipoib, mtu=4 : ALL=full;'
	sm_reread
	wait_for 60 both_have 0x8003 || return 1
	wait_for 30 carrier_in h1 pa3 && wait_for 30 carrier_in h2 pb3 || return 1
	wait_for 30 answers h1 10.13.3.2 &&
		ip -n h1 link del pa3 && ip -n h2 link del pb3 &&
		ip -n h1 link del pa1 && ip -n h2 link del pb1
}

# Membership: in 0x8005 A is a full member and B a limited one, and
# they talk; in 0x8004 both are limited (their tables hold 0x0004), and
# two limited members cannot talk.
t_part_limited() {
	local rc=0
	sm_partitions $BCAST_MTU "${PARTS[@]}" 'P4=0x8004, ipoib, mtu=4 : ALL=limited;' \
		"P5=0x8005, ipoib, mtu=4 : $SM_GUID=full, $B_GUID=limited;"
	sm_reread
	wait_for 60 both_have 0x0004 && wait_for 30 pkey_in softib0 0x8005 &&
		wait_for 30 pkey_in softib1 0x0005 ||
		{ cat /sys/class/infiniband/softib1/ports/1/pkeys/* | sort -u; return 1; }
	child h1 "$A" pa5 0x8005 10.13.5.1 && child h2 "$B" pb5 0x8005 10.13.5.2 &&
		child h1 "$A" pa4 0x8004 10.13.4.1 && child h2 "$B" pb4 0x8004 10.13.4.2 ||
		return 1
	wait_for 30 carrier_in h1 pa5 && wait_for 30 carrier_in h2 pb5 &&
		wait_for 30 carrier_in h1 pa4 && wait_for 30 carrier_in h2 pb4 || return 1
	wait_for 30 answers h1 10.13.5.2 ||
		{ echo "full and limited members did not talk"; rc=1; }
	if in_a ping -c 3 -W 2 10.13.4.2; then
		echo "two limited members talked"
		rc=1
	fi
	echo "softib1 drop_pkey $(sib_counter softib1 drop_pkey)"
	ip -n h1 link del pa4; ip -n h2 link del pb4
	ip -n h1 link del pa5; ip -n h2 link del pb5
	return $rc
}

# --- containers and network managers on the fabric ---

# InfiniBand interfaces in namespace NS.
ib_links_in() { ip -n "$1" -o link show | grep -c 'link/infiniband'; }
# qps_back N: the QP count is N again.
qps_back() { [ "$(ipng_qps)" = "$1" ]; }
carrier_here() { ip -o link show "$1" | grep -q 'LOWER_UP'; }
QPS_HOSTS=0			# before the pods (set outside the cases' subshells)

# cni_pod NS PARENT POD ADDR: what ipoib-cni does for a pod: a netlink
# child of PARENT with PARENT's P_Key (datagram, umcast 1), moved into a
# new namespace POD, renamed net1, proxy_arp on, PARENT's MTU, addressed
# and up.
cni_pod() {
	local mtu
	mtu=$(mtu_in "$1" "$2")
	ip netns add "$3" &&
		ip -n "$1" link add link "$2" name cni0 type ipoib mode datagram umcast 1 &&
		ip -n "$1" link set cni0 netns "$3" &&
		ip -n "$3" link set cni0 name net1 &&
		ip netns exec "$3" sysctl -qw net.ipv4.conf.net1.proxy_arp=1 &&
		ip -n "$3" link set net1 mtu "$mtu" &&
		ip -n "$3" addr add "$4"/24 dev net1 &&
		ip -n "$3" link set lo up && ip -n "$3" link set net1 up
}

# The ipoib-cni flow on both hosts: pods p1 (on A) and p2 (on B), each
# with a child of its host's port interface; the child has the parent's
# P_Key and GID and a QP of its own, and the host side no longer sees it.
t_cni_pods() {
	local la pa
	cni_pod h1 "$A" p1 10.16.0.1 && cni_pod h2 "$B" p2 10.16.0.2 || return 1
	wait_for 30 carrier_in p1 net1 && wait_for 30 carrier_in p2 net1 ||
		{ ip -n p1 -d link show; return 1; }
	la=$(lladdr_of p1 net1) pa=$(lladdr_of h1 "$A")
	echo "net1 in p1: $la"
	echo "$A in h1:  $pa"
	echo "QPs: $QPS_HOSTS -> $(ipng_qps)"
	[ "${la:12}" = "${pa:12}" ] && [ "${la:3:8}" != "${pa:3:8}" ] &&
		[ "$(ip netns exec p1 cat /proc/net/ipoib/net1/stats | kv_get pkey)" = 0xffff ] &&
		[[ $(ip -n p1 -d link show net1) =~ umcast\ +0*1 ]] &&
		[ "$(ib_links_in h1)" = 1 ] && [ "$(ipng_qps)" -gt "$QPS_HOSTS" ]
}

# Pod to pod: echoes and 8 MiB checked with sha256 in datagram mode, then
# connected mode switched on inside the pods (60000-byte echoes over RC);
# the hosts' own interfaces keep talking.
t_cni_traffic() {
	ip netns exec p1 ping -c 3 -W 5 10.16.0.2 &&
		xfer_sha256 p1 p2 10.16.0.2 5311 || return 1
	ip -n p1 link set net1 type ipoib mode connected &&
		ip -n p2 link set net1 type ipoib mode connected &&
		ip -n p1 link set net1 mtu $CM_MTU && ip -n p2 link set net1 mtu $CM_MTU ||
		return 1
	ip netns exec p2 ping -c 3 -s 60000 -M do -W 5 10.16.0.1 &&
		xfer_sha256 p2 p1 10.16.0.1 5312 || return 1
	answers h1 $IPB && answers h2 $IPA
}

# The pods' namespaces deleted with their connections open: the children
# go with them (they are not given back to the hosts), and with them
# their QPs.
t_cni_gone() {
	ip netns del p1 && ip netns del p2 || return 1
	wait_for 30 qps_back "$QPS_HOSTS" ||
		{ echo "QPs $(ipng_qps), $QPS_HOSTS before the pods"; return 1; }
	[ "$(ib_links_in h1)" = 1 ] && [ "$(ib_links_in h2)" = 1 ] &&
		answers h1 $IPB
}

# systemd-networkd's attributes ([IPoIB] PartitionKey=, Mode=,
# IgnoreUserspaceMulticastGroups=) on the way in and through changelink:
# a P_Key without the membership bit (the default partition's, 0x7fff)
# becomes the full member's, and the children talk in that partition.
t_networkd_attrs() {
	local out rc=0
	ip -n h1 link add link "$A" name nd0 type ipoib pkey 0x7fff mode connected umcast 1 &&
		ip -n h2 link add link "$B" name nd1 type ipoib pkey 0xffff || return 1
	out=$(ip -n h1 -d link show nd0)
	echo "$out" | grep -o 'ipoib .*'
	[[ $out =~ pkey\ +0xffff ]] && [[ $out =~ mode\ +connected ]] &&
		[[ $out =~ umcast\ +0*1 ]] || rc=1
	ip -n h1 link set nd0 type ipoib mode datagram umcast 0 || rc=1
	out=$(ip -n h1 -d link show nd0)
	[[ $out =~ mode\ +datagram ]] && [[ $out =~ umcast\ +0*0 ]] ||
		{ echo "after changelink: $out"; rc=1; }
	ip -n h1 addr add 10.13.2.1/24 dev nd0 && ip -n h1 link set nd0 up &&
		ip -n h2 addr add 10.13.2.2/24 dev nd1 && ip -n h2 link set nd1 up || rc=1
	wait_for 30 carrier_in h1 nd0 && wait_for 30 answers h1 10.13.2.2 || rc=1
	ip -n h1 link del nd0
	ip -n h2 link del nd1
	return $rc
}

# NetworkManager's flow for an InfiniBand profile with p-key 0x8001 on
# B's port interface, moved to init_net where NM runs (sysfs is only
# init_net's here): "0x8001" written to create_child makes <parent>.8001,
# the mode written to its sysfs file while it is down, the MTU set, then
# up; it talks to a child of A in 0x8001 in connected mode; delete_child
# removes it and its QPs.
t_nm_flow() {
	local c qps out
	ip -n h2 link set "$B" netns 1 || return 1
	c=$B.8001
	qps=$(ipng_qps)
	child h1 "$A" pa6 0x8001 10.13.1.1 &&
		ip -n h1 link set pa6 type ipoib mode connected &&
		ip -n h1 link set pa6 mtu $CM_MTU || return 1
	echo 0x8001 > /sys/class/net/"$B"/create_child || return 1
	wait_for 10 test -e /sys/class/net/"$c" || { ip -o link; return 1; }
	[ "$(val /sys/class/net/"$c"/pkey)" = 0x8001 ] &&
		[ "$(val /sys/class/net/"$c"/parent)" = "$B" ] || return 1
	echo connected > /sys/class/net/"$c"/mode || return 1
	ip link set "$c" mtu $CM_MTU && ip addr add 10.13.1.2/24 dev "$c" &&
		ip link set "$c" up || return 1
	out=$(ip -d link show "$c")
	echo "$out" | grep -o 'mtu [0-9]*\|ipoib .*'
	[[ $out =~ mode\ +connected ]] || return 1
	wait_for 30 carrier_here "$c" || return 1
	ping -c 3 -s 60000 -M do -W 5 10.13.1.1 &&
		xfer_sha256 - h1 10.13.1.1 5313 || return 1
	echo 0x8001 > /sys/class/net/"$B"/delete_child || return 1
	ip -n h1 link del pa6
	wait_for 10 test ! -e /sys/class/net/"$c" &&
		wait_for 30 qps_back "$qps" ||
		{ echo "QPs $(ipng_qps), $qps before"; return 1; }
}

# --- an RDMA device in a namespace of its own (exclusive mode) ---

# ib_core switches modes only while init_net is the only namespace; a
# deleted one is cleaned up asynchronously.
rdma_netns_mode() { rdma system set netns "$1" 2> /dev/null; }
# ib_in NS: the InfiniBand interface in namespace NS, which has no other
# (through netlink: ip netns exec does not remount sysfs here).
ib_in() {
	ip -n "$1" -o link show | awk -F': ' '/link\/infiniband/ { sub(/@.*/, "", $2); print $2; exit }' |
		grep .
}

# In exclusive mode softib1 moved into namespace x1: its interface is made
# there (not in init_net), talks to softib0's from there, and comes back
# to init_net with the device when x1 is deleted.
t_exclusive_netns() {
	local a b rc=0
	ip netns del h1 && ip netns del h2 || return 1
	wait_for 60 rdma_netns_mode exclusive || { rdma system show; return 1; }
	ip netns add x1 && rdma dev set softib1 netns x1 || rc=1
	wait_for 20 ib_in x1 > /dev/null || { ip -n x1 link; rc=1; }
	b=$(ib_in x1)
	a=$(ifname_of softib0)
	echo "softib1's interface in x1: $b; softib0's in init_net: $a"
	ifname_of softib1 && { echo "softib1 still has one in init_net"; rc=1; }
	if [ $rc = 0 ]; then
		ip addr add 10.14.0.1/24 dev "$a" && ip link set "$a" up &&
			ip -n x1 addr add 10.14.0.2/24 dev "$b" && ip -n x1 link set "$b" up &&
			wait_for 30 carrier_in x1 "$b" &&
			wait_for 30 answers 10.14.0.2 &&
			ip netns exec x1 grep -q '^link_layer: infiniband' /proc/net/ipoib/"$b"/stats ||
			rc=1
	fi
	ip netns del x1
	wait_for 30 ifname_of softib1 > /dev/null || { echo "softib1's interface not back"; rc=1; }
	wait_for 60 rdma_netns_mode shared || { rdma system show; rc=1; }
	return $rc
}

ktap_begin ipoib_ng_e2e_ib
if ! command -v opensm > /dev/null; then
	ktap_fail setup "opensm is not installed (tests/deps.sh)"
	ktap_end
	exit 1
fi
# Each VM holds a fabric of its own: with two, each runs its part of the
# cases (about the same time), both at once.
part=all
if [ "$IPNG_NVMS" -ge 2 ]; then
	part=fabric
	[ "$IPNG_VM" = 2 ] && part=partitions
	[ "$IPNG_VM" -gt 2 ] && part=none
fi
if [ $part = none ]; then
	ktap_skip ib_suite "the first two VMs run it"
	ktap_end
	exit $?
fi
ktap_check setup setup
read -r A B < $SMDIR/ifnames
if [ $part != partitions ]; then
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
	ktap_check cm_mode_connected_mtu_65520 t_cm_mode
	ktap_check cm_ping_60000_over_rc t_cm_ping
	ktap_check cm_tcp_8MiB_sha256_no_fallback t_cm_tcp
	ktap_check cm_idle_connections_reaped t_cm_reap
	ktap_check cm_max_connections_0_falls_back_to_ud t_cm_fallback
	ktap_check cm_back_to_datagram t_cm_back
	ktap_check sm_restart_groups_rejoined t_sm_restart
	ktap_check lid_change_path_reresolved t_lid_change
	ktap_check sm_away_cached_paths_kept t_sm_away
	ktap_check cable_pulled_and_back t_port_down_up
	ktap_check networkd_pkey_mode_umcast_attributes t_networkd_attrs
	ktap_check exclusive_netns_interface_follows_device t_exclusive_netns
fi
if [ $part != fabric ]; then
	ktap_check partition_children_talk t_part_children
	ktap_check partitions_isolated_pkey_drop t_part_isolated
	ktap_check partition_connected_mode t_part_connected
	ktap_check partition_removed_carrier_follows t_part_removed
	ktap_check partition_added_late_child_comes_up t_part_late
	ktap_check partition_full_and_limited_members t_part_limited
	QPS_HOSTS=$(ipng_qps)
	ktap_check cni_pods_child_with_parents_pkey t_cni_pods
	ktap_check cni_pod_to_pod_sha256_both_modes t_cni_traffic
	ktap_check cni_netns_deleted_children_and_qps_gone t_cni_gone
	ktap_check networkmanager_sysfs_child_in_partition t_nm_flow
fi
ktap_check teardown teardown
ktap_end
