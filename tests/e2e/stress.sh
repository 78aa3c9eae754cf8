#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "stress", run on both VMs: device removal and module
# unload under traffic, repeated. Each round runs iperf3 both ways (each VM
# a client of the other's server, so that in connected mode connections
# exist in both directions), checks that both directions carry data, then
# one VM (alternating) removes its interface while the streams run:
#   - `rdma link delete rxe0`: 3 rounds in datagram mode, 3 in connected
#     mode (MTU 65520);
#   - `rmmod ipoib_ng`: once in each mode;
#   - `rdma link delete rxe0` in datagram mode right after connected-mode
#     traffic (connections both ways, then back to datagram).
# Asserted in every round: the interface goes away cleanly (no ib0, /proc
# and debugfs entries gone, rmmod returns 0), the other side's ib0 stays up
# with its address, every iperf3 on both sides ends by itself within a
# bound (--snd-timeout/--rcv-timeout; none has to be killed by its
# timeout), the device or module comes back (`rdma link add`, insmod), ib0
# gets its address again, both sides ping each other (60000 bytes in
# connected mode), a 2 MiB TCP transfer (xfer.py, alternating direction)
# arrives with the right sha256, in connected mode over live RC
# connections both ways while the connections to the removed interface are
# gone, ipoib_ng's module refcount is 0, and the kernel log of the round
# holds no BUG/WARNING/KASAN/lockdep/... report (scan-logs.sh). Last, the
# module unloads on both VMs and leaves no QP behind. KTAP on stdout;
# iperf3 logs and round timings in $IPNG_OUT/stress/.
#
# Not in the default suite list (about 20 minutes in the debug VMs):
#   run-vms.sh ... --script tests/e2e/guest-main.sh --env IPNG_SUITES=stress
# IPNG_STRESS_ROUNDS (default 3) sets the rdma link delete rounds per mode.
set -u
# shellcheck source=tests/vm/guest-lib.sh disable=SC1091
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
XFER=$IPNG_REPO/tests/e2e/xfer.py
LOG=$IPNG_OUT/stress
JOBS=/tmp/stress-jobs
# shellcheck disable=SC2034  # read by guest-lib.sh's bg_start, bg_ended, bg_status
BG_LOG=$LOG BG_JOBS=$JOBS
NOTES=$IPNG_OUT/stress-notes.txt
CM_MTU=65520
# cm_idle_timeout during the suite, seconds.
CM_IDLE=30
ROUNDS=${IPNG_STRESS_ROUNDS:-3}
# iperf3 -t; the removal ends the streams long before.
IPERF_SECS=90
# timeout(1) of every iperf3: a process that reaches it was stuck.
IPERF_LIFE=150
# --snd-timeout and --rcv-timeout (ms): how long a stream to a vanished
# peer may hang on.
SOCK_TIMEOUT=8000
# Every iperf3 must have ended this many seconds after the removal.
END_BOUND=60
# Bytes each direction must carry before the removal (ACKs alone stay far
# below: one ACK of ~60 bytes per two segments).
MIN_BYTES=262144
XFER_BYTES=2097152
SEND_FILE=/tmp/stress-send.bin
RECV_FILE=/tmp/stress-recv.bin
# The peer's link address (hex, 40 digits), its QPN and its GID as debugfs
# prints it; OLD_QPN: the QPN it had before its last removal.
PEER_HEX='' PEER_QPN='' PEER_GID_RE='' OLD_QPN=''
COUNTED='idle|req_sent|rep_sent|live'

# Under TCG with KASAN every program started costs about a second: files
# are read with builtins.

# stat_val NAME: "NAME: value" of /proc/net/ipoib/ib0/stats.
stat_val() { proc_stat "$1"; }

expect_eq() {
	if [ "$1" != "$2" ]; then
		echo "$3: got '$1', want '$2'"
		return 1
	fi
}

note() { printf '%s\n' "$*" >> "$NOTES"; }
has_ib0() { [ -e $NET/ib0 ]; }
no_ib0() { [ ! -e $NET/ib0 ]; }
hex_addr() { local a; a=$(val $NET/ib0/address); printf '%s' "${a//:/}"; }
# shellcheck disable=SC2317  # called through wait_for
listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }
has_addr() { [[ $(ip -4 -o addr show dev ib0) == *" $MYIP/24 "* ]]; }

bring_up() {
	sysctl -qw net.ipv6.conf.ib0.disable_ipv6=1 &&
		ip addr add "$MYIP/24" dev ib0 && ip link set ib0 up &&
		wait_for 20 carrier_up && wait_for 20 oper_up
}

# set_mode MODE: datagram, or connected at MTU 65520; read back. The
# route cache goes too: a path MTU learned while the peer was in datagram
# mode (ICMP "fragmentation needed") would refuse 60000-byte pings.
set_mode() {
	ip route flush cache
	ip link set ib0 type ipoib mode "$1" || return 1
	if [ "$1" = connected ]; then
		ip link set ib0 mtu $CM_MTU || return 1
		expect_eq "$(val $NET/ib0/mtu)" $CM_MTU mtu || return 1
	fi
	expect_eq "$(val $NET/ib0/mode)" "$1" "sysfs mode" &&
		expect_eq "$(stat_val mode)" "$1" "/proc mode"
}

setup() {
	insmod "$KO" && wait_for 20 has_ib0 || return 1
	bring_up || return 1
	# Connections to a removed peer are reaped within half a minute; the
	# live ones outlast the pause between a round's transfer and its
	# connection check (at 5 s they were reaped before it).
	echo $CM_IDLE > $PARAM/cm_idle_timeout
}

# peer_info KEY: the peer's link address as published under KEY.
peer_info() {
	local h i
	PEER_HEX=$(vm_fetch "$PEER" "$1" 300) || return 1
	[ ${#PEER_HEX} = 40 ] || { echo "peer address '$PEER_HEX'"; return 1; }
	PEER_QPN=${PEER_HEX:2:6}
	h=${PEER_HEX:8}
	PEER_GID_RE=${h:0:4}
	for ((i = 4; i < 32; i += 4)); do
		PEER_GID_RE+=:${h:i:4}
	done
}

# --- debugfs cm (bash regexes) ---

cm_count() {
	local l n=0
	[ -r $DBG/ib0/cm ] || { echo 0; return; }
	while IFS= read -r l; do
		[[ $l == '#'* ]] && continue
		[[ $l =~ $1 ]] && n=$((n + 1))
	done < $DBG/ib0/cm
	echo $n
}

cm_dump() {
	local l
	while IFS= read -r l; do
		printf '%s\n' "$l"
	done < $DBG/ib0/cm
}

# shellcheck disable=SC2317  # called through wait_for
peer_live() {
	[ "$(cm_count "^$1 qpn 0x$PEER_QPN gid $PEER_GID_RE state live ")" != 0 ]
}
# peer_lines DIR: our connections of direction DIR with the peer's GID,
# up or being made (any QPN: a re-added interface may get its old QPN).
peer_lines() { cm_count "^$1 qpn 0x[0-9a-f]{6} gid $PEER_GID_RE state ($COUNTED) "; }
# shellcheck disable=SC2317  # called through wait_for
one_each() { [ "$(peer_lines tx)" = 1 ] && [ "$(peer_lines rx)" = 1 ]; }
# shellcheck disable=SC2317  # called through wait_for
old_peer_gone() {
	[ "$(cm_count "^(tx|rx) qpn 0x$OLD_QPN gid $PEER_GID_RE state ($COUNTED) ")" = 0 ]
}

# --- the steps of a round; KEY names the round, R is the VM that removes ---

# Both: iperf3 server, then (once both listen) a client to the peer.
iperf_start() {
	local key=$1
	bg_start "$key-srv" $IPERF_LIFE iperf3 -s -1 -B "$MYIP" --rcv-timeout $SOCK_TIMEOUT
	wait_for 30 listening 5201 || echo "# stress: iperf3 server not listening" >&2
	vm_barrier "$key-srv" 120
	bg_start "$key-cli" $IPERF_LIFE iperf3 -c "$PEERIP" -t $IPERF_SECS -i 2 \
		--forceflush --connect-timeout 10000 --snd-timeout $SOCK_TIMEOUT
}

# Both directions carry at least MIN_BYTES within 60 s.
t_traffic() {
	local key=$1 r0 t0 r1 t1 start=$SECONDS
	r0=$(stat_val rx_bytes)
	t0=$(stat_val tx_bytes)
	while :; do
		sleep 1
		r1=$(stat_val rx_bytes)
		t1=$(stat_val tx_bytes)
		if [ $((r1 - r0)) -ge $MIN_BYTES ] && [ $((t1 - t0)) -ge $MIN_BYTES ]; then
			echo "in $((SECONDS - start)) s: rx +$((r1 - r0)) tx +$((t1 - t0)) bytes"
			return 0
		fi
		[ $((SECONDS - start)) -lt 60 ] || break
		# Both streams gone already: no point in waiting.
		[ -s "$JOBS/$key-cli.rc" ] && [ -s "$JOBS/$key-srv.rc" ] && break
	done
	echo "in $((SECONDS - start)) s: rx +$((r1 - r0)) tx +$((t1 - t0)) bytes, want $MIN_BYTES each"
	tail -4 "$LOG/$key-cli.out" "$LOG/$key-srv.out"
	return 1
}

# R: remove the interface (ACTION delete: rdma link delete; rmmod: the
# module) under traffic, bounded; everything of ib0 must be gone.
t_remove() {
	local key=$1 action=$2 rc=0
	if [ "$action" = delete ]; then
		bg_start "$key-remove" 120 rdma link delete rxe0
	else
		bg_start "$key-remove" 120 rmmod ipoib_ng
	fi
	bg_ended 125 "$key-remove" || return 1
	expect_eq "$(bg_status "$key-remove")" 0 "$action exit status" ||
		{ cat "$LOG/$key-remove.out"; rc=1; }
	wait_for 30 no_ib0 || { echo "ib0 still there 30 s after $action"; rc=1; }
	[ ! -e $PROC/ib0 ] || { echo "$PROC/ib0 still there"; rc=1; }
	[ ! -e $DBG/ib0 ] || { echo "$DBG/ib0 still there"; rc=1; }
	if [ "$action" = rmmod ]; then
		[ ! -e /sys/module/ipoib_ng ] || { echo "/sys/module/ipoib_ng still there"; rc=1; }
		[ ! -e $PROC ] || { echo "$PROC still there"; rc=1; }
		[ ! -e $DBG ] || { echo "$DBG still there"; rc=1; }
	elif [ -e /sys/class/infiniband/rxe0 ]; then
		echo "rxe0 still there"
		rc=1
	fi
	return $rc
}

# The other side: once R's interface is gone, ours is still up, with its
# address, in its mode.
t_survives() {
	local key=$1 mode=$2 rc=0
	vm_fetch "$PEER" "$key-removed" 200 > /dev/null || return 1
	has_ib0 || { echo "our ib0 is gone"; return 1; }
	carrier_up || { echo "carrier $(val $NET/ib0/carrier)"; rc=1; }
	oper_up || { echo "operstate $(val $NET/ib0/operstate)"; rc=1; }
	has_addr || { echo "address lost:"; ip -4 addr show dev ib0; rc=1; }
	expect_eq "$(stat_val mode)" "$mode" "/proc mode" || rc=1
	return $rc
}

# Both: every iperf3 ended by itself within END_BOUND s of the removal.
t_iperf_ended() {
	local key=$1
	bg_ended $END_BOUND "$key-cli" "$key-srv" || return 1
	note "$key vm$ME: iperf3 client exit $(bg_status "$key-cli"), server exit $(bg_status "$key-srv")"
}

# R: the device or the module back, ib0 up with its address, in MODE.
t_readd() {
	local action=$1 mode=$2
	if [ "$action" = delete ]; then
		timeout 120 rdma link add rxe0 type rxe netdev eth0 || return 1
	else
		timeout 120 insmod "$KO" || return 1
		echo $CM_IDLE > $PARAM/cm_idle_timeout || return 1
	fi
	wait_for 30 has_ib0 || { echo "no ib0 30 s after $action"; return 1; }
	bring_up || { ip link show ib0; return 1; }
	if [ ! -e $PROC/ib0/stats ] || [ ! -e $DBG/ib0/cm ]; then
		echo "no /proc or debugfs entry"
		return 1
	fi
	# No check of its connection count: the peer's CM retries a REQ to the
	# removed interface, whose QPN the new one may well have again (rxe
	# reuses QPNs), and the new one accepts it; TCP's orphaned sockets of
	# the iperf3s here retransmit as soon as the address is back.
	set_mode "$mode"
}

# PING_ARGS of the mode: 60000 bytes unfragmented in connected mode.
ping_args() {
	if [ "$1" = connected ]; then
		echo "-Mdo -s 60000"
	else
		echo "-s 1000"
	fi
}

# While the peer was gone, the survivor's connected-mode sends to it fell
# back to datagram mode, which answers a packet above the datagram MTU with
# an ICMP "fragmentation needed" (as the kernel's IPoIB does): its IPv4
# stack keeps that path MTU for net.ipv4.route.mtu_expires (600 s), and
# ping -M do fails locally ("message too long") until then. Show it, then
# forget it as an operator would.
forget_learned_pmtu() {
	ip route get "$PEERIP" | grep -o 'mtu [0-9]*' | sed 's/^/learned path /'
	ip route flush cache
}

# R pings first (its ARP request gives the peer its new address), then the
# other side.
t_ping() {
	local key=$1 r=$2 mode=$3 args
	read -r -a args <<<"$(ping_args "$mode")"
	if [ "$ME" = "$r" ]; then
		ping_each 3 "${args[@]}" "$PEERIP" || return 1
		vm_publish "$key-pinged" 1
	else
		vm_fetch "$r" "$key-pinged" 120 > /dev/null || return 1
		[ "$mode" = connected ] && forget_learned_pmtu
		ping_each 3 "${args[@]}" "$PEERIP"
	fi
}

# XFER_BYTES from FROM to the other VM, sha256 checked by the receiver.
t_xfer() {
	local key=$1 from=$2 sum got size
	if [ "$ME" = "$from" ]; then
		vm_fetch "$PEER" "$key-listening" 150 > /dev/null || return 1
		timeout -k 5 200 python3 "$XFER" send "$PEERIP" 5002 $SEND_FILE 120 ||
			{ echo "xfer.py send: exit status $?"; return 1; }
		return 0
	fi
	rm -f $RECV_FILE
	bg_start "$key-recv" 200 python3 "$XFER" recv "$MYIP" 5002 $RECV_FILE 90
	# Python's start took over 30 s once, with both guests busy.
	wait_for 90 listening 5002 || { echo "xfer.py recv not listening"; return 1; }
	vm_publish "$key-listening" 1
	bg_ended 210 "$key-recv" || return 1
	expect_eq "$(bg_status "$key-recv")" 0 "xfer.py recv exit status" ||
		{ tail -5 "$LOG/$key-recv.out"; return 1; }
	sum=$(vm_fetch "$from" sha 60) || return 1
	got=$(sha256sum < $RECV_FILE)
	size=$(stat -c %s $RECV_FILE)
	echo "sent $sum, received $got, $size bytes"
	[ "$size" = $XFER_BYTES ] && [ "$got" = "$sum" ]
}

# Connected mode after the round: live RC connections with the peer both
# ways, and nothing left of the connections with the peer's removed
# interface: no connection to its old QPN if it has a new one, and
# exactly one connection each way with the peer's GID.
t_cm_after() {
	local rc=0
	wait_for 20 peer_live tx || { echo "no live tx connection to the peer"; rc=1; }
	wait_for 20 peer_live rx || { echo "no live rx connection from the peer"; rc=1; }
	if [ -n "$OLD_QPN" ] && [ "$OLD_QPN" != "$PEER_QPN" ]; then
		wait_for 90 old_peer_gone ||
			{ echo "connections with the removed peer (qpn 0x$OLD_QPN) stay"; rc=1; }
	fi
	wait_for 90 one_each ||
		{ echo "not one connection each way: tx $(peer_lines tx), rx $(peer_lines rx)"; rc=1; }
	[ $rc = 0 ] || cm_dump
	return $rc
}

t_refcnt() {
	expect_eq "$(val /sys/module/ipoib_ng/refcnt)" 0 "ipoib_ng refcnt"
}

# Both: still up at the end of the round.
t_healthy() {
	local rc=0
	carrier_up || { echo "no carrier"; rc=1; }
	has_addr || { echo "no address"; rc=1; }
	t_refcnt || rc=1
	return $rc
}

# scan_since MARKER: the kernel log since MARKER has no kernel report.
scan_since() {
	dmesg | sed -n "/$1/,\$p" > "/tmp/$1.log"
	"$IPNG_REPO/tests/vm/scan-logs.sh" "/tmp/$1.log"
}

check() {
	echo "# stress: $1 at ${SECONDS}s" >&2
	ktap_check "$@"
}

# round KEY R ACTION MODE XFER_FROM
round() {
	local key=$1 r=$2 action=$3 mode=$4 from=$5 t0=$SECONDS who
	local name=${key}_vm${r}_${action}_${mode}
	echo "stress-round-$key" > /dev/kmsg
	vm_barrier "$key-begin" 300
	check "${name}_mode_set" set_mode "$mode"
	iperf_start "$key"
	check "${name}_iperf3_both_ways_before" t_traffic "$key"
	vm_barrier "$key-traffic" 180
	if [ "$ME" = "$r" ]; then
		who=removed
		check "${name}_removed_cleanly_under_traffic" t_remove "$key" "$action"
		vm_publish "$key-removed" 1
	else
		who=survivor
		check "${name}_peer_removed_ib0_stays_up" t_survives "$key" "$mode"
	fi
	check "${name}_iperf3_ends_by_itself_${who}" t_iperf_ended "$key"
	vm_barrier "$key-ended" 200
	if [ "$ME" = "$r" ]; then
		check "${name}_back_address_mode" t_readd "$action" "$mode"
		vm_publish "$key-addr" "$(hex_addr)"
	else
		OLD_QPN=$PEER_QPN
		peer_info "$key-addr" >&2 || echo "# stress: no new address of vm$r" >&2
	fi
	vm_barrier "$key-back" 200
	check "${name}_ping_after" t_ping "$key" "$r" "$mode"
	vm_barrier "$key-pinged-both" 120
	check "${name}_xfer_sha256_from_vm${from}" t_xfer "$key" "$from"
	if [ "$mode" = connected ]; then
		check "${name}_rc_both_ways_stale_gone" t_cm_after
	fi
	check "${name}_healthy_refcnt_0" t_healthy
	check "${name}_no_kernel_report" scan_since "stress-round-$key"
	[ "$ME" = "$r" ] || OLD_QPN=''
	note "$key: vm$r $action in $mode mode, $((SECONDS - t0)) s (vm$ME's view)"
	vm_barrier "$key-end" 300
}

# Connections both ways, then back to datagram (the round that follows
# removes the interface in datagram mode after connected-mode traffic).
t_cm_traffic_then_datagram() {
	set_mode connected || return 1
	ping_each 3 -Mdo -s 60000 "$PEERIP" || return 1
	wait_for 20 peer_live tx || { echo "no live tx connection"; cm_dump; return 1; }
	wait_for 20 peer_live rx || { echo "no live rx connection"; cm_dump; return 1; }
	set_mode datagram
}

# Last: unload on both; no QP of ipoib_ng left.
t_unload() {
	local out
	t_refcnt || return 1
	timeout 120 rmmod ipoib_ng || return 1
	if [ -e /sys/module/ipoib_ng ] || has_ib0; then
		echo "module or ib0 still there"
		return 1
	fi
	out=$(rdma res show qp)
	if [[ $out == *ipoib_ng* ]]; then
		echo "QPs of ipoib_ng left:"
		echo "$out"
		return 1
	fi
}

mkdir -p "$LOG" "$JOBS"
: > "$NOTES"
ktap_begin ipoib_ng_e2e_stress
check "setup_ib0_up_ipv6_off" setup
head -c $XFER_BYTES /dev/urandom > $SEND_FILE
vm_publish sha "$(sha256sum < $SEND_FILE)"
vm_publish addr "$(hex_addr)"
vm_barrier up 300
peer_info addr >&2 || echo "# stress: no peer address" >&2

n=0
for ((k = 1; k <= ROUNDS; k++)); do
	n=$((n + 1))
	round "dg$k" $((2 - k % 2)) delete datagram $((1 + n % 2))
done
n=$((n + 1))
round rmdg 1 rmmod datagram $((1 + n % 2))
for ((k = 1; k <= ROUNDS; k++)); do
	n=$((n + 1))
	round "cm$k" $((1 + k % 2)) delete connected $((1 + n % 2))
done
n=$((n + 1))
round rmcm 2 rmmod connected $((1 + n % 2))

vm_barrier cmdg-prep 300
check "connections_both_ways_then_datagram" t_cm_traffic_then_datagram
n=$((n + 1))
round dgcm 1 delete datagram $((1 + n % 2))

vm_barrier end 300
check "module_unloads_no_qp_left" t_unload
note "total: ${SECONDS} s"
ktap_end
