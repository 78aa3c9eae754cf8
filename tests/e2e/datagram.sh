#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "datagram", run on both VMs: IPv4 and IPv6 traffic over
# ib0 in datagram mode on RoCE (rxe), driven with ping, iperf3 and plain
# sockets. vm1 and vm2 take turns where a test needs a sender and a
# receiver; barriers keep them in step. KTAP on stdout.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
NET=/sys/class/net
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
MYIP=10.10.0.$ME
PEERIP=10.10.0.$PEER
PEERLL=fe80::5254:ff:fe00:$PEER
XFER=$IPNG_REPO/tests/e2e/xfer.py

stat_of() { cat "$NET/ib0/statistics/$1"; }

setup() {
	insmod "$KO" && wait_for 10 test -e $NET/ib0 || return 1
	sysctl -qw net.ipv4.icmp_echo_ignore_broadcasts=0
	ip addr add "$MYIP/24" dev ib0 && ip link set ib0 up &&
		wait_for 10 carrier_up && wait_for 10 oper_up
}


t_neigh() {
	local theirs lladdr
	theirs=$(vm_fetch "$PEER" ib0addr 60) || return 1
	lladdr=$(ip neigh show "$PEERIP" dev ib0 | sed -n 's/.*lladdr \([0-9a-f:]*\).*/\1/p' | tr -d ':')
	echo "neigh $lladdr, peer address $theirs"
	[ ${#lladdr} = 40 ] && [ "${lladdr:2}" = "${theirs:2}" ]
}

# The counters of ip -s link move by at least what a counted ping sent.
t_counters() {
	local tx0 rx0 tx1 rx1
	tx0=$(stat_of tx_packets)
	rx0=$(stat_of rx_packets)
	ping_all 10 -i 0.2 "$PEERIP" > /dev/null || return 1
	tx1=$(stat_of tx_packets)
	rx1=$(stat_of rx_packets)
	echo "tx $tx0 -> $tx1, rx $rx0 -> $rx1"
	[ $((tx1 - tx0)) -ge 10 ] && [ $((rx1 - rx0)) -ge 10 ]
}

t_broadcast_ping() {
	local out
	out=$(ping -b -c 3 -W 5 10.10.0.255 2>&1)
	echo "$out" | tail -3
	grep -q "from $PEERIP" <<<"$out"
}

# vm1 joins 239.1.2.3 on ib0 and waits for one datagram from vm2.
t_multicast_udp() {
	if [ "$ME" = 1 ]; then
		python3 "$XFER" mrecv 239.1.2.3 "$MYIP" 5007 60 > /tmp/mrecv.out &
		local pid=$!
		sleep 2
		vm_barrier mcast-ready 120 || return 1
		wait $pid || return 1
		grep -q "hello from vm2" /tmp/mrecv.out
	else
		vm_barrier mcast-ready 120 || return 1
		python3 "$XFER" msend 239.1.2.3 "$MYIP" 5007 20
	fi
}

# vm2 sends an 8 MiB file over TCP; vm1 checks its sha256.
t_tcp_file() {
	local sum
	if [ "$ME" = 1 ]; then
		python3 "$XFER" recv "$MYIP" 5001 /tmp/recv.bin 120 &
		local pid=$!
		sleep 1
		vm_barrier xfer-ready 120 || return 1
		wait $pid || return 1
		sum=$(vm_fetch 2 xfer-sha 60) || return 1
		echo "sent $sum received $(sha256sum < /tmp/recv.bin)"
		[ "$(sha256sum < /tmp/recv.bin | cut -d' ' -f1)" = "$sum" ]
	else
		head -c 8388608 /dev/urandom > /tmp/send.bin
		vm_publish xfer-sha "$(sha256sum < /tmp/send.bin | cut -d' ' -f1)"
		vm_barrier xfer-ready 120 || return 1
		python3 "$XFER" send "$PEERIP" 5001 /tmp/send.bin 120
	fi
}

# iperf3 TCP and UDP, vm2 to vm1 then vm1 to vm2 (-R).
t_iperf() {
	local proto=$1 args=()
	[ "$proto" = udp ] && args=(-u -b 20M)
	if [ "$ME" = 1 ]; then
		iperf3 -s -1 -B "$MYIP" > /tmp/iperf-s.out 2>&1 &
		local pid=$!
		sleep 1
		vm_barrier "iperf-$proto" 120 || return 1
		wait $pid
	else
		vm_barrier "iperf-$proto" 120 || return 1
		local out
		out=$(iperf3 -c "$PEERIP" -t 3 "${args[@]}" 2>&1) || { echo "$out"; return 1; }
		echo "$out" | tail -4
		grep -q receiver <<<"$out"
	fi
}

t_iperf_reverse() {
	if [ "$ME" = 1 ]; then
		iperf3 -s -1 -B "$MYIP" > /tmp/iperf-r.out 2>&1 &
		local pid=$!
		sleep 1
		vm_barrier iperf-rev 120 || return 1
		wait $pid
	else
		vm_barrier iperf-rev 120 || return 1
		local out
		out=$(iperf3 -c "$PEERIP" -t 3 -R 2>&1) || { echo "$out"; return 1; }
		echo "$out" | tail -4
		grep -q receiver <<<"$out"
	fi
}

# On RoCE a join shows on the Ethernet device underneath: the MGID is an
# IPv6 multicast address joined there. Group 239.1.2.9 is MGID
# ff12:401b:ffff::f01:209; a socket on ib0 holds the membership.
eth0_has() { ip -6 maddr show dev eth0 | grep -Eq "inet6 $1( |\$)"; }
eth0_lacks() { ! eth0_has "$1"; }

# exec: the background job's PID is python's, so kill ends the membership.
member_of_239_1_2_9() {
	exec python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
	     socket.inet_aton("239.1.2.9") + socket.inet_aton(sys.argv[1]))
time.sleep(int(sys.argv[2]))' "$MYIP" "$1"
}

# ib0's own list shows the socket's membership (python has started and
# joined); eth0's shows ipoib_ng's join. Each is waited for on its own,
# so a guest too starved to start python in time is told apart from a
# join that did not happen, and a failure prints what each side held.
ib0_has_239_1_2_9() { ip maddr show dev ib0 | grep -q 'inet  *239\.1\.2\.9$'; }
mcast_state() {
	echo "ib0's groups, then eth0's, then ipoib_ng's (debugfs):"
	ip maddr show dev ib0 | grep inet
	ip -6 maddr show dev eth0 | grep ff12:401b
	cat /sys/kernel/debug/ipoib_ng/ib0/mcast
}
t_mcast_membership() {
	local bc=ff12:401b:ffff::ffff:ffff grp=ff12:401b:ffff::f01:209 pid rc=0
	wait_for 10 eth0_has $bc || { echo "broadcast group not joined"; return 1; }
	member_of_239_1_2_9 120 &
	pid=$!
	# python3 itself takes seconds to start in a KASAN or starved guest.
	if ! wait_for 60 ib0_has_239_1_2_9; then
		echo "the socket has not joined 239.1.2.9 on ib0 after 60 s"
		rc=1
	elif ! wait_for 30 eth0_has $grp; then
		echo "group not joined on eth0 30 s after the socket joined it"
		rc=1
	fi
	# Down leaves everything, up joins again.
	ip link set ib0 down
	if ! wait_for 10 eth0_lacks $bc || ! wait_for 10 eth0_lacks $grp; then
		echo "groups still joined while ib0 is down"
		rc=1
	fi
	ip link set ib0 up
	if ! wait_for 10 eth0_has $bc || ! wait_for 10 eth0_has $grp; then
		echo "groups not joined again after up"
		rc=1
	fi
	kill $pid
	wait $pid 2>/dev/null
	wait_for 10 eth0_lacks $grp || { echo "group kept after the socket left"; rc=1; }
	wait_for 10 oper_up || rc=1
	[ $rc = 0 ] || mcast_state
	return $rc
}

# vm2 reloads its module; vm1's interface keeps working with it after.
t_peer_reload() {
	if [ "$ME" = 2 ]; then
		vm_barrier reload-start 120 || return 1
		rmmod ipoib_ng && setup || return 1
		vm_barrier reload-done 120
	else
		vm_barrier reload-start 120 || return 1
		vm_barrier reload-done 120 || return 1
		ping_all 3 "$PEERIP"
	fi
}

ktap_begin ipoib_ng_e2e_datagram
ktap_check "setup_ib0_up_operstate_up" setup
vm_publish ib0addr "$(tr -d ':\n' < $NET/ib0/address)"
vm_barrier dg-up 180
ktap_check "ping_ipv4_peer" ping_all 3 "$PEERIP"
ktap_check "neigh_lladdr_is_peer_20_byte_address" t_neigh
ktap_check "ping_ipv6_link_local_peer" ping_all 3 "$PEERLL%ib0"
ktap_check "ping_fragmented_8000_bytes" ping_all 2 -s 8000 "$PEERIP"
ktap_check "counters_move_with_ping" t_counters
vm_barrier dg-bcast 120
ktap_check "broadcast_ping_answered" t_broadcast_ping
ktap_check "multicast_udp_received" t_multicast_udp
ktap_check "tcp_8MiB_file_sha256" t_tcp_file
ktap_check "iperf3_tcp" t_iperf tcp
ktap_check "iperf3_tcp_reverse" t_iperf_reverse
ktap_check "iperf3_udp" t_iperf udp
ktap_check "multicast_join_leave_follow_ib0" t_mcast_membership
vm_barrier dg-mcast 120
ktap_check "peer_module_reload" t_peer_reload
vm_barrier dg-end 180
ktap_check "module_unloads" rmmod ipoib_ng
ktap_end
