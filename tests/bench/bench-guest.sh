#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make bench` (tests/bench/bench.sh), run on both VMs by
# tests/vm/guest-init.sh. Owns the measurements of one boot (one underlying
# Ethernet MTU): it loads the ipoib_ng.ko named by $ipng_bench_ko, brings
# ib0 up, and then, vm1 always serving or receiving and vm2 always
# sending, takes in order:
#
#   ping_ib0   ping RTT over ib0            ping_eth0  ping RTT over eth0
#   lat_ud     ib_send_lat, UD, on rxe0     lat_ud_ev  the same with -e (events)
#   tcp_ib0    iperf3 TCP over ib0          tcp_eth0   iperf3 TCP over eth0
#   bw_ud      ib_send_bw, UD, on rxe0
#
# then, still in datagram mode, what ethtool tunes:
#
#   tcp_ib0_p4_1ch  iperf3 TCP, 4 streams, ethtool -L ib0 combined 1 on both
#   tcp_ib0_p4_2ch  the same with combined 2
#   napi_rx0        iperf3 TCP, one stream, vm1 at ethtool -C rx-usecs 0;
#                   vm1's ethtool -S before and after (NAPI polls/packet)
#   napi_rx100      the same at rx-usecs 100
#
# and then, with ib0 in connected mode at MTU 65520 on both VMs:
#
#   tcp_ib0_cm iperf3 TCP over ib0          bw_rc      ib_send_bw, RC, 64 KiB
#
# Nothing is judged here: raw tool output goes to $IPNG_OUT/raw/<name>.<role>,
# a /proc/stat snapshot before and after each measurement to
# raw/<name>.<role>.stat0/.stat1 (their mtimes are host time: /results is
# the host's directory), facts about the setup to $IPNG_OUT/info.txt, and
# one line "<name> ok|failed" per measurement to $IPNG_OUT/measured.txt.
# tests/bench/report.py turns them into numbers. Exit status 1 if any
# measurement or the setup failed.
#
# Environment (from run-vms.sh --env): ipng_bench_ko (path of the module in
# the guest), ipng_bench_secs (iperf3 / ib_send_bw duration, default 10).
set -u
# shellcheck source=tests/vm/guest-lib.sh disable=SC1091
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${ipng_bench_ko:-}
DUR=${ipng_bench_secs:-10}
ME=$IPNG_VM
RAW=$IPNG_OUT/raw
SERVER_IB=10.10.0.1
SERVER_ETH=10.9.0.1
NET=/sys/class/net
PORT=/sys/class/infiniband/rxe0/ports/1
# ping payload 56 bytes = 84-byte IP packet = 88 bytes after the IPoIB
# header: ib_send_lat sends messages of that size. ping -A sends the next
# echo as soon as the reply is in, a ping-pong like ib_send_lat's; every
# reply's time is kept, for the median.
LAT_SIZE=88
PING_COUNT=1000
# ib_send_bw -D counts the messages of the middle DUR - 2 * MARGIN seconds;
# report.py divides by that, which needs no cycle counter (see pair()).
MARGIN=2
LAT_ITERS=2000
failed=0

say() { echo "bench[vm$ME]: $*"; }
# shellcheck disable=SC2317  # called through wait_for
listening() { ss -Hltn "sport = :$1" | grep -q .; }
cpu_snap() { grep '^cpu' /proc/stat > "$RAW/$1"; }

record() {
	local name=$1 rc=$2
	if [ "$rc" = 0 ]; then
		echo "$name ok" >> "$IPNG_OUT/measured.txt"
		say "$name: done"
	else
		echo "$name failed" >> "$IPNG_OUT/measured.txt"
		say "$name: FAILED (status $rc)"
		failed=1
	fi
}

# exchange NAME PORT TRY: vm1 runs "${srv[@]}", which listens on TCP PORT,
# vm2 then runs "${cli[@]}". Both VMs snapshot /proc/stat around it.
exchange() {
	local name=$1 port=$2 try=$3 pid rc=0
	if [ "$ME" = 1 ]; then
		timeout $((DUR + 120)) "${srv[@]}" > "$RAW/$name.server" 2>&1 &
		pid=$!
		wait_for 30 listening "$port" || { say "$name: server not listening on $port"; rc=1; }
		vm_barrier "$name-go-$try" 300 || rc=1
		cpu_snap "$name.server.stat0"
		if [ $rc = 0 ]; then
			wait "$pid" || rc=$?
		else
			kill "$pid" 2>/dev/null
			wait "$pid"
		fi
		cpu_snap "$name.server.stat1"
	else
		vm_barrier "$name-go-$try" 300 || rc=1
		cpu_snap "$name.client.stat0"
		if [ $rc = 0 ]; then
			timeout $((DUR + 120)) "${cli[@]}" > "$RAW/$name.client" 2>&1 || rc=$?
		fi
		cpu_snap "$name.client.stat1"
	fi
	vm_barrier "$name-done-$try" 300 || rc=1
	return $rc
}

# pair NAME PORT [TRIES]: one exchange; with TRIES > 1, repeated while
# perftest on vm2 could not calibrate its cycle counter against the clock
# (it then prints no latency: under TCG on a busy host this happens now
# and then). vm2 decides, vm1 follows; unusable outputs are kept as
# NAME.<role>.try<N>.
pair() {
	local name=$1 port=$2 tries=${3:-1} try rc next f
	for ((try = 1; ; try++)); do
		rc=0
		exchange "$name" "$port" "$try" || rc=$?
		[ "$try" -lt "$tries" ] || break
		if [ "$ME" = 2 ]; then
			next=stop
			if [ $rc != 0 ] || grep -q 'Correlation coefficient' "$RAW/$name.client"; then
				next=again
			fi
			vm_publish "$name-$try" "$next"
		else
			next=$(vm_fetch 2 "$name-$try" 120) || next=stop
		fi
		[ "$next" = again ] || break
		say "$name: attempt $try unusable, once more"
		for f in "$RAW/$name.server" "$RAW/$name.client"; do
			if [ -e "$f" ]; then mv "$f" "$f.try$try"; fi
		done
	done
	record "$name" "$rc"
}

# single NAME CMD...: vm2 runs CMD alone (vm1 only answers, in the kernel).
single() {
	local name=$1 rc=0
	shift
	vm_barrier "$name-go" 300 || rc=1
	if [ "$ME" = 2 ]; then
		cpu_snap "$name.client.stat0"
		if [ $rc = 0 ]; then
			timeout 300 "$@" > "$RAW/$name.client" 2>&1 || rc=$?
		fi
		cpu_snap "$name.client.stat1"
		vm_barrier "$name-done" 300 || rc=1
	else
		cpu_snap "$name.server.stat0"
		vm_barrier "$name-done" 300 || rc=1
		cpu_snap "$name.server.stat1"
	fi
	record "$name" "$rc"
}

# The GID index of rxe0 whose GID is the one in ib0's link address (bytes
# 4-19), so that ib_send_* use the same source GID, and thus the same
# RoCE v2 encapsulation (IPv6 for a link-local GID), as ipoib_ng.
ib0_gid_index() {
	local want f gid
	want=$(tr -d ':\n' < $NET/ib0/address)
	want=${want:8}
	for f in "$PORT"/gids/*; do
		gid=$(tr -d ':\n' < "$f" 2>/dev/null) || continue
		if [ "$gid" = "$want" ]; then
			echo "${f##*/}"
			return 0
		fi
	done
	return 1
}

setup() {
	[ -r "$KO" ] || { say "no module at '$KO'"; return 1; }
	insmod "$KO" || return 1
	wait_for 10 test -e $NET/ib0 || return 1
	ip addr add "10.10.0.$ME/24" dev ib0 && ip link set ib0 up || return 1
	wait_for 30 carrier_up || return 1
	vm_barrier setup-up 300 || return 1
	# Both directions resolved (path cache, neighbours) before measuring.
	ping -c 3 -W 5 "10.10.0.$((3 - ME))" > /dev/null &&
		ping -c 3 -W 5 "10.9.0.$((3 - ME))" > /dev/null
}

mkdir -p "$RAW"
: > "$IPNG_OUT/measured.txt"
say "kernel $(uname -r), module $KO, ${DUR}s runs"
if ! setup; then
	say "setup failed"
	echo "setup failed" >> "$IPNG_OUT/measured.txt"
	exit 1
fi
vm_barrier setup-done 300 || exit 1

ib_mtu=$(cat $NET/ib0/mtu)
ud_size=$((ib_mtu + 4))
gidx=$(ib0_gid_index) || { say "ib0's GID is not in rxe0's GID table"; gidx=0; }
active_mtu=$(ibv_devinfo -d rxe0 -i 1 | sed -n 's/^[[:space:]]*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
{
	echo "kernel=$(uname -r)"
	echo "vcpus=$(nproc)"
	echo "module_srcversion=$(cat /sys/module/ipoib_ng/srcversion 2>/dev/null)"
	echo "eth0_mtu=$(cat $NET/eth0/mtu)"
	echo "rxe_active_mtu=$active_mtu"
	echo "ib0_mtu=$ib_mtu"
	echo "ib0_features=$(ethtool -k ib0 2>/dev/null | grep -E '^(tx-checksumming|scatter-gather|tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload):' | tr -d ' ' | tr '\n' ' ')"
	echo "eth0_features=$(ethtool -k eth0 2>/dev/null | grep -E '^(tx-checksumming|scatter-gather|tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload):' | tr -d ' ' | tr '\n' ' ')"
	echo "gid_index=$gidx"
	echo "gid=$(cat "$PORT/gids/$gidx")"
	echo "gid_type=$(cat "$PORT/gid_attrs/types/$gidx" 2>/dev/null)"
	echo "ud_size=$ud_size"
	echo "lat_size=$LAT_SIZE"
	echo "duration=$DUR"
	echo "bw_margin=$MARGIN"
	echo "iperf3=$(iperf3 --version 2>&1 | head -1)"
	echo "perftest=$(ib_send_bw --version 2>&1 | head -1)"
	echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
} > "$IPNG_OUT/info.txt"
sed 's/^/info: /' "$IPNG_OUT/info.txt"

perf=(-d rxe0 -i 1 -x "$gidx" -c UD -F)

single ping_ib0 ping -A -c $PING_COUNT -W 5 $SERVER_IB
single ping_eth0 ping -A -c $PING_COUNT -W 5 $SERVER_ETH

srv=(ib_send_lat "${perf[@]}" -s "$LAT_SIZE" -n "$LAT_ITERS")
cli=("${srv[@]}" "$SERVER_ETH")
pair lat_ud 18515 3

srv=(ib_send_lat "${perf[@]}" -e -s "$LAT_SIZE" -n "$LAT_ITERS")
cli=("${srv[@]}" "$SERVER_ETH")
pair lat_ud_ev 18515 3

srv=(iperf3 -s -1 -J -B "$SERVER_IB")
cli=(iperf3 -c "$SERVER_IB" -J -t "$DUR")
pair tcp_ib0 5201

srv=(iperf3 -s -1 -J -B "$SERVER_ETH")
cli=(iperf3 -c "$SERVER_ETH" -J -t "$DUR")
pair tcp_eth0 5201

srv=(ib_send_bw "${perf[@]}" -s "$ud_size" -D "$DUR" -f "$MARGIN")
cli=("${srv[@]}" "$SERVER_ETH")
pair bw_ud 18515

# both_set NAME CMD...: run CMD on both VMs (output in raw/NAME.set), then
# ping each other; 0 if all of it worked on both. Both VMs take the same
# barriers whatever happened.
both_set() {
	local name=$1 mine=ok theirs
	shift
	"$@" > "$RAW/$name.set" 2>&1 || mine=failed
	vm_publish "$name" "$mine"
	theirs=$(vm_fetch $((3 - ME)) "$name" 300) || theirs=failed
	vm_barrier "$name-set" 300 || return 1
	ping -c 3 -W 5 "10.10.0.$((3 - ME))" >> "$RAW/$name.set" 2>&1 || mine=failed
	vm_barrier "$name-pinged" 300 || return 1
	[ "$mine" = ok ] && [ "$theirs" = ok ]
}

# shellcheck disable=SC2317  # called through both_set
channels() { ethtool -L ib0 combined "$1" && ethtool -l ib0; }
# Only the receiver (vm1) moderates.
# shellcheck disable=SC2317  # called through both_set
rx_usecs() {
	[ "$ME" = 1 ] || return 0
	ethtool -C ib0 rx-usecs "$1" && ethtool -c ib0
}

echo "ib0_channels_max=$(ethtool -l ib0 | awk '/^Combined:/ { print $2; exit }')" >> "$IPNG_OUT/info.txt"

# Channels: four streams, so that they can spread over the channels.
srv=(iperf3 -s -1 -J -B "$SERVER_IB")
cli=(iperf3 -c "$SERVER_IB" -J -t "$DUR" -P 4)
for n in 1 2; do
	if both_set "channels$n" channels "$n"; then
		pair "tcp_ib0_p4_${n}ch" 5201
	else
		say "ethtool -L ib0 combined $n failed (raw/channels$n.set)"
		record "tcp_ib0_p4_${n}ch" 1
	fi
done

# Moderation: the same load at rx-usecs 0 and 100 on the receiver; its
# ethtool -S before and after give NAPI polls per received packet.
srv=(iperf3 -s -1 -J -B "$SERVER_IB")
cli=(iperf3 -c "$SERVER_IB" -J -t "$DUR")
for u in 0 100; do
	if both_set "rx_usecs$u" rx_usecs "$u"; then
		ethtool -S ib0 > "$RAW/napi_rx$u.ethtool0"
		pair "napi_rx$u" 5201
		ethtool -S ib0 > "$RAW/napi_rx$u.ethtool1"
	else
		say "ethtool -C ib0 rx-usecs $u failed (raw/rx_usecs$u.set)"
		record "napi_rx$u" 1
	fi
done
both_set rx_usecs_restored rx_usecs 0 || failed=1

# Connected mode: both VMs switch, MTU 65520; a ping makes the RC
# connections (vm2 to vm1 and back) before iperf3 starts.
cm_setup() {
	ip link set ib0 type ipoib mode connected &&
		ip link set ib0 mtu $CM_MTU || return 1
	vm_barrier cm-up 300 || return 1
	ping -c 3 -W 5 "10.10.0.$((3 - ME))" > /dev/null
}

CM_MTU=65520
RC_SIZE=65536
if cm_setup; then
	{
		echo "ib0_cm_mtu=$(cat $NET/ib0/mtu)"
		echo "rc_size=$RC_SIZE"
	} >> "$IPNG_OUT/info.txt"
	vm_barrier cm-setup-done 300 || failed=1

	srv=(iperf3 -s -1 -J -B "$SERVER_IB")
	cli=(iperf3 -c "$SERVER_IB" -J -t "$DUR")
	ethtool -S ib0 > "$RAW/tcp_ib0_cm.ethtool0"
	pair tcp_ib0_cm 5201
	ethtool -S ib0 > "$RAW/tcp_ib0_cm.ethtool1"
	cat /sys/kernel/debug/ipoib_ng/ib0/cm > "$RAW/tcp_ib0_cm.connections" 2>&1

	srv=(ib_send_bw -d rxe0 -i 1 -x "$gidx" -c RC -F -s "$RC_SIZE" -D "$DUR" -f "$MARGIN")
	cli=("${srv[@]}" "$SERVER_ETH")
	pair bw_rc 18515
else
	say "connected mode setup failed"
	record tcp_ib0_cm 1
	record bw_rc 1
	vm_barrier cm-setup-done 300 || failed=1
fi

ip -s link show ib0 > "$RAW/ib0-link-stats"
vm_barrier all-done 300 || failed=1
rmmod ipoib_ng || failed=1
say "finished, failed=$failed"
exit $failed
