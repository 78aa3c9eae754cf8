#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "recovery", run on both VMs: the datagram datapath gets
# over faults by itself. Each VM in turn breaks its own side while the
# other keeps still:
#  - a UD QP moved to ERROR behind the driver's back (debugfs qp_error, test
#    builds), on channel 0 (the receiving QP) and on a send-only channel:
#    the error is detected (qp_errors), the channels are reset (recoveries)
#    and ping works again;
#  - channel restarts that fail (debugfs fail_start): carrier goes off, the
#    channel watchdog tries again every second until one succeeds, and
#    nothing is halted twice (a second napi_disable() would hang under
#    RTNL); the same under ethtool -L;
#  - the port MTU raised on a live interface (the Ethernet MTU under rxe):
#    receive buffers grow, so full-size datagrams arrive at once;
#  - an incoming connection closed while the channels are halted: it is
#    drained once they run again, never freed before;
#  - ib0 brought up while the module is unloaded, a few times.
# KTAP on stdout.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
NET=/sys/class/net
DBG=/sys/kernel/debug/ipoib_ng/ib0
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
MYIP=10.10.0.$ME
PEERIP=10.10.0.$PEER

# es NAME: one ethtool -S counter.
es() { ETHS='' eth_stat "$1"; }

carrier_on() { [ "$(val $NET/ib0/carrier 2>/dev/null)" = 1 ]; }
more_than() { [ "$(es "$1")" -gt "$2" ] 2>/dev/null; }

setup() {
	modprobe -d "$IPNG_MODDIR" ib_cm 2>/dev/null
	insmod "$KO" && wait_for 10 test -e $NET/ib0 || return 1
	ip addr add "$MYIP/24" dev ib0 && ip link set ib0 up &&
		wait_for 20 carrier_on
}

have_knobs() { [ -e $DBG/qp_error ] && [ -e $DBG/fail_start ]; }

# qp_error CHANNEL: break that channel's QP, then show that it was noticed
# and repaired, and that traffic flows again.
t_qp_error() {
	local ch=$1 r0 e0 p
	r0=$(es recoveries) e0=$(es qp_errors)
	if [ -z "$r0" ] || [ -z "$e0" ]; then
		echo "no recoveries/qp_errors counters"
		return 1
	fi
	echo "$ch" > $DBG/qp_error || return 1
	# A send-only QP shows its error on the next sends: many flows, so
	# some hash to that channel (bash's /dev/udp starts no program).
	if [ "$ch" != 0 ]; then
		for p in {5000..5063}; do
			echo x 2>/dev/null > "/dev/udp/$PEERIP/$p"
		done
	fi
	if ! wait_for 20 more_than recoveries "$r0"; then
		echo "no recovery: recoveries $(es recoveries), qp_errors $(es qp_errors)"
		return 1
	fi
	echo "recoveries $r0 -> $(es recoveries), qp_errors $e0 -> $(es qp_errors)"
	more_than qp_errors "$e0" || { echo "qp_errors did not move"; return 1; }
	wait_for 20 carrier_on || { echo "carrier stayed off"; return 1; }
	ping_each 3 "$PEERIP"
}

# Two restarts fail in a row after a QP error: the watchdog's second and
# third tries must not halt the halted channels again.
t_failed_restarts() {
	local r0 d0
	r0=$(es recoveries) d0=$(val $NET/ib0/carrier_down_count)
	echo 2 > $DBG/fail_start || return 1
	echo 0 > $DBG/qp_error || return 1
	if ! wait_for 30 more_than recoveries $((r0 + 2)); then
		echo "recoveries $r0 -> $(es recoveries), fail_start left $(val $DBG/fail_start)"
		return 1
	fi
	[ "$(val $DBG/fail_start)" = 0 ] || { echo "fail_start not used up"; return 1; }
	[ "$(val $NET/ib0/carrier_down_count)" -gt "$d0" ] ||
		{ echo "carrier never went off while the channels were halted"; return 1; }
	wait_for 20 carrier_on || { echo "carrier stayed off"; return 1; }
	echo "recoveries $r0 -> $(es recoveries), carrier downs $d0 -> $(val $NET/ib0/carrier_down_count)"
	ping_each 3 "$PEERIP"
}

# ethtool -L whose restart fails: the command fails and leaves the count
# as it was (the old layout is swapped back and started), and -L works
# again after.
t_ethtool_failed_restart() {
	local max
	max=$(ethtool -l ib0 | awk '/^Combined/ { print $2; exit }')
	[ "${max:-1}" -ge 2 ] || { echo "one channel only: nothing to change"; return 0; }
	echo 1 > $DBG/fail_start || return 1
	if ethtool -L ib0 combined 1; then
		echo "ethtool -L succeeded though the restart failed"
		return 1
	fi
	ethtool -l ib0 | tail -4 | grep -q "^Combined:[[:space:]]*$max\$" ||
		{ echo "count changed though ethtool -L failed"; ethtool -l ib0; return 1; }
	wait_for 20 carrier_on || { echo "carrier stayed off"; return 1; }
	ping_each 3 "$PEERIP" || return 1
	ethtool -L ib0 combined 1 || return 1
	ping_each 3 "$PEERIP" || return 1
	ethtool -L ib0 combined "$max" || return 1
	ping_each 3 "$PEERIP"
}

# rx_lines: incoming connections in debugfs, closing ones included.
rx_lines() { cm_count '^rx '; }
# shellcheck disable=SC2317  # called through wait_for
no_rx_lines() { [ "$(rx_lines)" = 0 ]; }
# shellcheck disable=SC2317  # called through wait_for
some_rx_line() { [ "$(rx_lines)" != 0 ]; }
# shellcheck disable=SC2317  # called through wait_for
carrier_off() { ! carrier_on; }

# Both VMs, connected mode: vm1's channels stay halted for about 12 s
# (restarts that fail) while vm2 sends over its connection to vm1 and then
# closes it (mode datagram: a DREQ). vm1's connection can only be drained
# once its channels run again; nothing of it may be freed before. It was
# (a drain that gave up after 5 s), and the completions reaped after the
# restart pointed at a destroyed QP: KASAN use-after-free in
# ipng_cm_rx_done() (found by make soak, ethtool -L with a large ring).
t_rx_close_while_halted() {
	local rc=0 mark out
	ip link set ib0 type ipoib mode connected || return 1
	vm_barrier halt-connected 60 || return 1
	if [ "$ME" = 2 ]; then
		ping_each 3 "$PEERIP" || rc=1
		vm_barrier halt-conn 60 || return 1
		vm_barrier halt-halted 60 || return 1
		ping -f -c 300 -w 3 -q "$PEERIP" > /dev/null 2>&1
		ip link set ib0 type ipoib mode datagram || rc=1
		vm_barrier halt-closed 60 || rc=1
		vm_barrier halt-end 120 || rc=1
		return $rc
	fi
	vm_barrier halt-conn 60 || return 1
	wait_for 10 some_rx_line || { echo "no incoming connection from vm2"; rc=1; }
	mark=$(dmesg | wc -l)
	echo 12 > $DBG/fail_start && echo 0 > $DBG/qp_error || rc=1
	wait_for 10 carrier_off || { echo "channels never halted"; rc=1; }
	vm_barrier halt-halted 60 || rc=1
	vm_barrier halt-closed 60 || rc=1
	wait_for 40 carrier_on || { echo "carrier stayed off"; rc=1; }
	wait_for 40 no_rx_lines || { echo "incoming connection still listed"; rc=1; }
	out=$(dmesg | tail -n +$((mark + 1)) |
		grep -E 'drain marker lost|did not flush|did not complete')
	[ -z "$out" ] || { echo "$out"; rc=1; }
	echo "fail_start left $(val $DBG/fail_start), recoveries $(es recoveries)"
	ip link set ib0 type ipoib mode datagram || rc=1
	# Before the barrier: past it vm2 goes on to the next case, whose
	# first step (eth0's MTU) takes its ib0 away for a moment (a ping
	# after the barrier lost its third request to it once).
	ping_each 3 "$PEERIP" || rc=1
	vm_barrier halt-end 120 || rc=1
	return $rc
}

ib0_mtu_is() { [ "$(val $NET/ib0/mtu)" = "$1" ]; }

# Both VMs: the port MTU drops (buffers sized for it after a reopen), then
# rises on the live interface; full-size datagrams must arrive at once.
t_mtu_raise() {
	local big=$((IPNG_MTU >= 4200 ? 4092 : 0))
	[ $big = 4092 ] || { echo "link MTU $IPNG_MTU: no room to raise"; return 1; }
	ip link set eth0 mtu 1500 || return 1
	wait_for 15 ib0_mtu_is 1020 || { echo "ib0 MTU $(val $NET/ib0/mtu)"; return 1; }
	ip link set ib0 down && ip link set ib0 up && wait_for 20 carrier_on ||
		return 1
	vm_barrier mtu-small 120 || return 1
	ping_each 3 -M "do" -s $((1020 - 28)) "$PEERIP" || return 1
	vm_barrier mtu-small-pinged 120 || return 1
	ip link set eth0 mtu "$IPNG_MTU" || return 1
	wait_for 15 ib0_mtu_is $big || { echo "ib0 MTU $(val $NET/ib0/mtu)"; return 1; }
	vm_barrier mtu-big 120 || return 1
	ping_each 3 -M "do" -s $((big - 28)) "$PEERIP"
}

# ib0 brought up while the module goes away: whatever the order, nothing
# may run after the interface is freed (KASAN watches).
t_up_during_unload() {
	local i
	for i in 1 2 3; do
		ip link set ib0 down
		ip link set ib0 up &
		rmmod ipoib_ng || return 1
		wait
		[ ! -e $NET/ib0 ] || { echo "ib0 still there"; return 1; }
		setup || return 1
	done
	# Both VMs run this loop at once: the peer's ib0 may still be gone.
	vm_barrier unload-loops-done 180 || return 1
	ping_each 3 "$PEERIP"
}

# turn N NAME FN ARGS...: VM N runs the test, the other waits for it.
turn() {
	local n=$1 name=$2
	shift 2
	vm_barrier "$name-start" 180
	if [ "$ME" = "$n" ]; then
		ktap_check "$name" "$@"
	fi
	vm_barrier "$name-done" 300
}

channels_now() {
	ethtool -l ib0 | awk '/^Combined/ { n++ } n == 2 { print $2; exit }'
}

ktap_begin ipoib_ng_e2e_recovery
ktap_check "setup_ib0_up" setup
# The other VM may still be running KUnit (vm1 only) or a longer suite.
vm_barrier rec-up 900
ktap_check "ping_peer" ping_each 3 "$PEERIP"
if have_knobs; then
	for v in 1 2; do
		turn $v "vm${v}_qp_error_channel0_recovers" t_qp_error 0
		if [ "$(channels_now)" -ge 2 ] 2>/dev/null; then
			turn $v "vm${v}_qp_error_send_channel_recovers" t_qp_error 1
		elif [ "$ME" = $v ]; then
			ktap_skip "vm${v}_qp_error_send_channel_recovers" "one channel"
		fi
		turn $v "vm${v}_failed_restarts_retried" t_failed_restarts
		turn $v "vm${v}_ethtool_L_failed_restart" t_ethtool_failed_restart
	done
	ktap_check "rx_connection_closed_while_halted" t_rx_close_while_halted
else
	ktap_skip "fault_knobs" "no qp_error/fail_start in debugfs (not a test build)"
fi
# Its first step takes ib0 away for a moment: not while the other VM
# still checks the case before.
vm_barrier rec-pre-mtu 180
ktap_check "mtu_raise_full_size_datagrams" t_mtu_raise
vm_barrier rec-mtu 180
ktap_check "up_during_unload" t_up_during_unload
vm_barrier rec-end 180
ktap_check "module_unloads" rmmod ipoib_ng
ktap_end
