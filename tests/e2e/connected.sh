#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "connected", run on both VMs: connected mode (RFC 4755)
# as users see it. Mode switching through rtnetlink and sysfs, the MTU
# rules of both modes, the RC-capable flag of the link address, traffic
# over RC connections (ping of 60000 bytes, iperf3, an 8 MiB file), a
# posted RC send no longer charged to its socket, a mode
# switch under a running iperf3, one side connected and the other
# datagram, the connections in /proc and debugfs, idle reaping, the
# max_connections cap with its fallback to UD and ICMP "fragmentation
# needed", the parameter ranges, the per-peer cap and the bound on the
# connection table under a flood of forged link addresses (failed markers
# capped and expiring), `rdma link delete` with connections up, and
# `rdma link delete` under ping right after both sides went back to
# datagram mode (the passive-side releases then race with the stop: the
# shared receive queue must outlive every QP on it). Defaults are restored before the module is unloaded. IPv6 is
# off on ib0 so that no traffic but the tests' own makes connections.
# KTAP on stdout.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
NET=/sys/class/net
MODE=$NET/ib0/mode
PROC=/proc/net/ipoib
DBG=/sys/kernel/debug/ipoib_ng
PARAM=/sys/module/ipoib_ng/parameters
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
MYIP=10.10.0.$ME
PEERIP=10.10.0.$PEER
XFER=$IPNG_REPO/tests/e2e/xfer.py
CM_MTU=65520
# Set once ib0 exists: the datagram MTU limit (port MTU - 4) and the peer.
UD_MTU=0
PEER_HEX='' PEER_QPN='' PEER_GID_RE=''
# Every counter connected mode adds to ethtool -S, and the two reused.
CM_COUNTERS=(tx_drop_too_big tx_drop_ring_full tx_drop_cm_queue
	tx_cm_fallback cm_cap_reached)
STATES='idle|req_sent|rep_sent|live|closing|failed'
# Counted by "connections:": live or being set up.
COUNTED='idle|req_sent|rep_sent|live'

expect_eq() {
	if [ "$1" != "$2" ]; then
		echo "$3: got '$1', want '$2'"
		return 1
	fi
}

# Under TCG with KASAN every program started costs about half a second:
# the helpers below read files with builtins where they can.

# stat_val FILE NAME: the value of "NAME: value" in a stats file.
stat_val() { proc_stat "$2" "$1"; }

conns() { stat_val $PROC/ib0/stats connections; }
# ethstat NAME: the ethtool -S counter NAME (ETHS: all of them, once).
ethstat() { eth_stat "$1"; }
mtu() { val $NET/ib0/mtu; }
hex_addr() { local a; a=$(val $NET/ib0/address); printf '%s' "${a//:/}"; }
has_ib0() { [ -e $NET/ib0 ]; }
no_ib0() { [ ! -e $NET/ib0 ]; }
# shellcheck disable=SC2317  # called through wait_for
listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }

active_mtu() {
	ibv_devinfo -d rxe0 -i 1 | awk '/active_mtu/ { print $2; exit }'
}

bring_up() {
	sysctl -qw net.ipv6.conf.ib0.disable_ipv6=1 &&
		ip addr add "$MYIP/24" dev ib0 && ip link set ib0 up &&
		wait_for 10 carrier_up && wait_for 10 oper_up
}

setup() {
	insmod "$KO" && wait_for 10 has_ib0 || return 1
	bring_up
}

# peer_info KEY: the peer's link address as it published it under KEY;
# its GID as debugfs prints it (eight groups of four hex digits).
peer_info() {
	local h i
	PEER_HEX=$(vm_fetch "$PEER" "$1" 120) || return 1
	[ ${#PEER_HEX} = 40 ] || { echo "peer address '$PEER_HEX'"; return 1; }
	PEER_QPN=${PEER_HEX:2:6}
	h=${PEER_HEX:8}
	PEER_GID_RE=${h:0:4}
	for ((i = 4; i < 32; i += 4)); do
		PEER_GID_RE+=:${h:i:4}
	done
}

# mode_is MODE: sysfs, ip -d link and /proc all report MODE.
# side_diag: where a lost packet may have gone on this side: ipoib_ng's
# drop and error counters that are not zero (ethtool -S) and the RDMA
# device's (rdma statistic), the neighbours of ib0 and the link-local
# neighbours of eth0, which the RoCE device sends through.
side_diag() {
	ethtool -S ib0 | grep -E 'drop|err|timeout|fail' | grep -v ': 0$'
	rdma statistic show link rxe0/1 2>&1 | tr ' ' '\n' |
		paste -d' ' - - | grep -Ev ' 0$|^link|^$' | tr '\n' ' '
	echo
	ip neigh show dev ib0
	ip -6 neigh show dev eth0
}

# pings COUNT ARGS...: every echo answered (ping's output and side_diag
# if not).
pings() {
	local n=$1 out
	shift
	out=$(ping -c "$n" -W 5 "$@" 2>&1)
	[[ $out =~ \ $n\ received ]] && return 0
	printf '%s\n' "$out"
	side_diag
	return 1
}

mode_is() {
	local s i='' p out
	s=$(val $MODE)
	out=$(ip -d link show ib0)
	[[ $out =~ ipoib\ +pkey\ +0x[0-9a-f]+\ +mode\ +([a-z]+) ]] && i=${BASH_REMATCH[1]}
	p=$(stat_val $PROC/ib0/stats mode)
	[ "$s" = "$1" ] && [ "$i" = "$1" ] && [ "$p" = "$1" ] && return 0
	echo "mode: sysfs '$s', ip -d link '$i', /proc '$p'; want '$1'"
	return 1
}

mtu_is() { expect_eq "$(mtu)" "$1" "${2:-mtu}"; }

# sleep_until START SECS: sleep until SECS seconds after $SECONDS was START.
sleep_until() {
	local left=$(($2 - (SECONDS - $1)))
	[ $left -le 0 ] || sleep $left
}

# --- debugfs <if>/cm (matched with bash regexes, no programs) ---

CM_TAIL='rc_qpn 0x[0-9a-f]{6} mtu [0-9]+ idle_s [0-9]+ queued [0-9]+ age_s [0-9]+$'
CM_HEADER='# dir qpn gid state rc_qpn mtu idle_s queued age_s'

cm_dump() {
	local l
	while IFS= read -r l; do
		printf '%s\n' "$l"
	done < $DBG/ib0/cm
}

# cm_match RE: print the lines of the cm file that match RE; 1 if none.
# The header line (the first, "# ...") is never matched.
cm_match() {
	local l rc=1
	while IFS= read -r l; do
		[[ $l == '#'* ]] && continue
		if [[ $l =~ $1 ]]; then
			printf '%s\n' "$l"
			rc=0
		fi
	done < $DBG/ib0/cm
	return $rc
}

# peer_re DIR STATES: a line of our DIR (tx|rx) connection with the peer
# in one of STATES.
peer_re() { echo "^$1 qpn 0x$PEER_QPN gid $PEER_GID_RE state ($2) $CM_TAIL"; }
peer_lines() { cm_match "$(peer_re "$1" "$2")"; }
peer_count() { cm_count "$(peer_re "$1" "$2")"; }
# shellcheck disable=SC2317  # called through wait_for
peer_live() { [ "$(peer_count "$1" live)" != 0 ]; }
# shellcheck disable=SC2317  # called through wait_for
peer_seen() { [ "$(peer_count "$1" "$COUNTED")" != 0 ]; }
counted_lines() { cm_count "^(tx|rx) .* state ($COUNTED) "; }
# shellcheck disable=SC2317  # called through wait_for
conns_match() { [ "$(conns)" = "$(counted_lines)" ]; }
# shellcheck disable=SC2317  # called through wait_for
no_conns() { [ "$(conns)" = 0 ] && [ "$(counted_lines)" = 0 ]; }
# RC QPs ipoib_ng owns (rdma res names the kernel user).
rc_qps() {
	local l n=0
	while IFS= read -r l; do
		[[ $l =~ \ type\ RC\ .*ipoib_ng ]] && n=$((n + 1))
	done <<<"$(rdma res show qp)"
	echo $n
}
# shellcheck disable=SC2317  # called through wait_for
no_rc_qps() { [ "$(rc_qps)" = 0 ]; }

# Both directions with the peer live: our tx, our rx (its tx).
both_live() { wait_for 20 peer_live tx && wait_for 20 peer_live rx; }

# --- the tests ---

t_defaults() {
	local rc=0 v f ETHS
	mode_is datagram || rc=1
	mtu_is "$UD_MTU" "datagram mtu (port mtu $(active_mtu) - 4)" || rc=1
	expect_eq "$(val $PARAM/max_connections)" 4096 max_connections || rc=1
	expect_eq "$(val $PARAM/cm_idle_timeout)" 60 cm_idle_timeout || rc=1
	expect_eq "$(conns)" 0 connections || rc=1
	[ -r $DBG/ib0/cm ] || { echo "no $DBG/ib0/cm"; return 1; }
	expect_eq "$(val $DBG/ib0/cm)" "$CM_HEADER" "header of $DBG/ib0/cm" || rc=1
	expect_eq "$(cm_count .)" 0 "lines in $DBG/ib0/cm" || rc=1
	ETHS=$(ethtool -S ib0)
	for f in "${CM_COUNTERS[@]}"; do
		v=$(ethstat "$f")
		[[ $v =~ ^[0-9]+$ ]] || { echo "ethtool -S $f: '$v'"; rc=1; }
	done
	return $rc
}

# Byte 0 of the link address: 0x80, connected mode capable.
t_rc_flag() {
	local out a
	out=$(ip link show ib0)
	echo "$out"
	a=$(hex_addr)
	[[ $out =~ link/infiniband\ 80: ]] && expect_eq "${a:0:2}" 80 "sysfs address flags"
}

t_mtu_refused_datagram() {
	local rc=0 m
	for m in $CM_MTU $((UD_MTU + 1)); do
		if ip link set ib0 mtu "$m" 2>&1; then
			echo "mtu $m accepted in datagram mode"
			rc=1
		fi
	done
	mode_is datagram || rc=1
	mtu_is "$UD_MTU" "mtu after the refusals" || rc=1
	[ $rc = 0 ] || ip link set ib0 mtu "$UD_MTU"
	return $rc
}

# Switching to connected leaves the MTU as it is.
t_connected_ip_link() {
	local rc=0 before
	before=$(mtu)
	ip link set ib0 type ipoib mode connected || return 1
	mode_is connected || rc=1
	mtu_is "$before" "mtu after switching to connected" || rc=1
	t_rc_flag > /dev/null || { echo "address flags lost: $(val $NET/ib0/address)"; rc=1; }
	return $rc
}

t_sysfs_both_ways() {
	local rc=0
	echo datagram > $MODE || return 1
	mode_is datagram || rc=1
	mtu_is "$UD_MTU" "mtu after datagram" || rc=1
	echo connected > $MODE || return 1
	mode_is connected || rc=1
	mtu_is "$UD_MTU" "mtu after connected" || rc=1
	return $rc
}

# bad_writes MODE: every bad value fails to write and MODE stays.
bad_writes() {
	local rc=0 v
	for v in bogus '' datagramx CONNECTED; do
		if (echo "$v" > $MODE) 2>/dev/null; then
			echo "'$v' accepted"
			rc=1
		fi
		[ "$(val $MODE)" = "$1" ] || { echo "mode $(val $MODE) after '$v'"; rc=1; }
	done
	mode_is "$1" || rc=1
	return $rc
}

t_bad_sysfs_value() {
	local rc=0
	bad_writes connected || rc=1
	echo datagram > $MODE || return 1
	bad_writes datagram || rc=1
	echo connected > $MODE || return 1
	[ "$(val $MODE)" = connected ] || rc=1
	return $rc
}

t_mtu_connected() {
	local rc=0
	ip link set ib0 mtu $CM_MTU || return 1
	mtu_is $CM_MTU || rc=1
	expect_eq "$(stat_val $PROC/ib0/stats mtu)" $CM_MTU "/proc mtu" || rc=1
	if ip link set ib0 mtu $((CM_MTU + 1)) 2>&1; then
		echo "mtu $((CM_MTU + 1)) accepted"
		rc=1
	fi
	mtu_is $CM_MTU "mtu after the refusal" || rc=1
	return $rc
}

# Back to datagram lowers the MTU to the datagram limit; back to
# connected keeps it. (The link suite covers an MTU below the limit.)
t_clamp() {
	local rc=0
	ip link set ib0 type ipoib mode datagram || return 1
	mtu_is "$UD_MTU" "mtu $CM_MTU after datagram" || rc=1
	echo connected > $MODE || return 1
	mtu_is "$UD_MTU" "mtu after connected again" || rc=1
	ip link set ib0 mtu $CM_MTU || return 1
	mode_is connected && mtu_is $CM_MTU || rc=1
	return $rc
}

# Both VMs at once: every 60000-byte echo (no fragmentation) answered.
t_ping_60000() {
	pings 3 -Mdo -s 60000 "$PEERIP" || { diag; return 1; }
}

t_conns_visible() {
	local rc=0 tx rc_qpn
	both_live || { echo "not both directions live:"; diag; return 1; }
	cm_dump
	# Every line in the documented format.
	expect_eq "$(cm_count "^(tx|rx) qpn 0x[0-9a-f]{6} gid [0-9a-f:]{39} state ($STATES) $CM_TAIL")" \
		"$(cm_count .)" "lines in the documented format" || rc=1
	expect_eq "$(peer_count tx "$STATES")" 1 "tx lines to the peer" || rc=1
	expect_eq "$(peer_count rx "$STATES")" 1 "rx lines from the peer" || rc=1
	tx=$(peer_lines tx live)
	[[ $tx =~ \ mtu\ $CM_MTU\  ]] || { echo "tx connection mtu: $tx"; rc=1; }
	wait_for 5 conns_match ||
		{ echo "connections: $(conns), debugfs counts $(counted_lines)"; rc=1; }
	expect_eq "$(conns)" 2 "connections" || rc=1
	# Its RC QP exists and is ipoib_ng's.
	[[ $tx =~ \ rc_qpn\ 0x([0-9a-f]+)\  ]] && rc_qpn=${BASH_REMATCH[1]}
	if ! [[ $(rdma res show qp lqpn $((16#${rc_qpn:-0}))) =~ \ type\ RC\ .*ipoib_ng ]]; then
		echo "rc_qpn 0x$rc_qpn is no RC QP of ipoib_ng:"
		rdma res show qp
		rc=1
	fi
	return $rc
}

# A send on an RC connection completes once the peer has acknowledged it:
# an skb that kept its socket charged until then made the peer's round
# trip part of the socket's own queue, and TCP's small-queue limit (two
# such packets per flow) cut iperf3 over connected mode to 49 Mbit/s on
# 6.12's soft-RoCE (382 once released at post). With send completions
# held back (debugfs tx_stall), a UDP socket's unsent bytes (SIOCOUTQ)
# must still fall to 0 once its datagrams are posted, while tx_packets,
# counted at completion, shows them outstanding. vm2 sends, vm1 drops.
t_rc_socket_released() {
	local stall=$DBG/ib0/tx_stall tx0 tx1 out rc=0

	both_live || { echo "not both directions live:"; diag; return 1; }
	tx0=$(ethstat tx_packets)
	echo 1 > $stall
	out=$(python3 "$XFER" outq "$PEERIP" 5999 20 1000 3) || rc=1
	tx1=$(ethstat tx_packets)
	echo 0 > $stall
	echo "$out" | tail -2
	echo "tx_packets $tx0 -> $tx1 while completions were held"
	if [ $((tx1 - tx0)) -ge 20 ]; then
		echo "the sends completed while held: the case proves nothing"
		rc=1
	fi
	[ $rc = 0 ] || echo "the socket stayed charged for sends posted on the RC connection"
	# The held completions are taken at the next poll: a ping's reply.
	ping_all 3 "$PEERIP" > /dev/null || { echo "no ping after the stall"; rc=1; }
	return $rc
}

# iperf_summary FILE AFTER: "<bytes received> <bytes sent in the
# intervals that start at or after AFTER seconds>" of iperf3 -J output.
iperf_summary() {
	python3 -c 'import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.find("{"):t.rfind("}") + 1])
if j.get("error"):
    sys.exit("iperf3: " + j["error"])
late = sum(i["sum"]["bytes"] for i in j["intervals"]
           if i["sum"]["start"] >= float(sys.argv[2]))
print(j["end"]["sum_received"]["bytes"], late)' "$1" "$2"
}

# serve NAME PORT CMD...: run the receiving side of exchange NAME in the
# background until the peer's sending side has ended (it publishes
# NAME-done; the receiver then gets 15 s more), so that a sender that fails
# at once does not leave the receiver waiting for its own timeout. The
# status of CMD.
serve() {
	local name=$1 port=$2 pid rc=0
	shift 2
	timeout 200 "$@" > "/tmp/cm-$name-server.out" 2>&1 &
	pid=$!
	wait_for 30 listening "$port" || { echo "nothing listening on $port"; rc=1; }
	vm_barrier "cm-$name-go" 120 || rc=1
	vm_fetch "$PEER" "cm-$name-done" 200 > /dev/null || rc=1
	wait_for 15 job_done "$pid" || { echo "still receiving 15 s after the sender ended"; kill "$pid"; }
	wait "$pid" || { rc=1; tail -5 "/tmp/cm-$name-server.out"; }
	return $rc
}

# shellcheck disable=SC2317  # called through wait_for
job_done() { ! kill -0 "$1" 2>/dev/null; }

# send_side NAME CMD...: the sending side of exchange NAME; its status.
send_side() {
	local name=$1 rc=0
	shift
	vm_barrier "cm-$name-go" 120 || { vm_publish "cm-$name-done" 1; return 1; }
	"$@" || rc=$?
	vm_publish "cm-$name-done" 1
	return $rc
}

iperf3_server() { serve "$1" 5201 iperf3 -s -1 -B "$MYIP"; }

# diag: what the driver says about itself, for a failed test.
diag() {
	echo "--- $DBG/ib0/cm:"
	cm_dump
	echo "--- connections: $(conns); ethtool -S ib0, non-zero:"
	ethtool -S ib0 | grep -v ': 0$' | tail -n +2
}

# 10 s of TCP, vm2 to vm1, all over the RC connection (no UD fallback).
t_iperf() {
	local fb0 fb1 sum rc=0
	if [ "$ME" = 1 ]; then
		iperf3_server iperf
		return
	fi
	fb0=$(ethstat tx_cm_fallback)
	send_side iperf timeout 120 iperf3 -c "$PEERIP" -t 10 -J > /tmp/cm-iperf.json 2>&1 ||
		{ echo "iperf3 exit status $?"; rc=1; }
	fb1=$(ethstat tx_cm_fallback)
	sum=$(iperf_summary /tmp/cm-iperf.json 0) || { tail -20 /tmp/cm-iperf.json; diag; return 1; }
	echo "received, bytes in the intervals: $sum; tx_cm_fallback $fb0 -> $fb1"
	[ "${sum%% *}" -gt 0 ] || rc=1
	expect_eq $((fb1 - fb0)) 0 "packets sent over UD instead of RC" || rc=1
	peer_lines tx live || { echo "no live tx connection after:"; rc=1; }
	[ $rc = 0 ] || diag
	return $rc
}

# vm1 sends 8 MiB over TCP while vm2 runs iperf3 the other way (both
# directions loaded at once); vm2 checks the sha256. The transfer runs in
# the background of the main shell: file_start before t_iperf, t_file
# after it collects the status each side wrote to $FILE_RC.
FILE_RC=/tmp/cm-file.rc
FILE_BYTES=8388608

file_start() {
	rm -f $FILE_RC
	if [ "$ME" = 2 ]; then
		(python3 "$XFER" recv "$MYIP" 5002 /tmp/cm-recv.bin 150; echo $? > $FILE_RC) \
			> /tmp/cm-file.out 2>&1 &
		wait_for 30 listening 5002 || echo "file receiver not listening" >&2
	else
		head -c $FILE_BYTES /dev/urandom > /tmp/cm-send.bin
		vm_publish cm-file-sha "$(sha256sum < /tmp/cm-send.bin)"
	fi
	vm_barrier cm-file-go 120
	if [ "$ME" = 1 ]; then
		(python3 "$XFER" send "$PEERIP" 5002 /tmp/cm-send.bin 150; echo $? > $FILE_RC) \
			> /tmp/cm-file.out 2>&1 &
	fi
}

t_file() {
	local sum got rc
	wait_for 180 test -s $FILE_RC || { echo "transfer still running after 180 s"; return 1; }
	rc=$(val $FILE_RC)
	[ "$rc" = 0 ] || { echo "xfer.py exit status $rc:"; tail -5 /tmp/cm-file.out; diag; return 1; }
	[ "$ME" = 2 ] || return 0
	sum=$(vm_fetch 1 cm-file-sha 60) || return 1
	got=$(sha256sum < /tmp/cm-recv.bin)
	echo "sent $sum, received $got, $(stat -c %s /tmp/cm-recv.bin) bytes"
	[ "$(stat -c %s /tmp/cm-recv.bin)" = $FILE_BYTES ] && [ "$got" = "$sum" ]
}

# vm2 sends for 20 s; at 5 s it switches to datagram (ip link), at 10 s
# back to connected (sysfs). The transfer must go on to the end.
t_switch_mid_iperf() {
	local pid start sum rc=0
	if [ "$ME" = 1 ]; then
		iperf3_server switch
		return
	fi
	vm_barrier cm-switch-go 120 || { vm_publish cm-switch-done 1; return 1; }
	start=$SECONDS
	timeout 150 iperf3 -c "$PEERIP" -t 20 -J > /tmp/cm-switch.json 2>&1 &
	pid=$!
	sleep_until "$start" 5
	echo "at $((SECONDS - start)) s: datagram"
	ip link set ib0 type ipoib mode datagram || rc=1
	mode_is datagram || rc=1
	mtu_is "$UD_MTU" "mtu in datagram mode" || rc=1
	sleep_until "$start" 10
	echo "at $((SECONDS - start)) s: connected"
	echo connected > $MODE || rc=1
	mode_is connected || rc=1
	wait $pid || { echo "iperf3 exit status $?"; rc=1; }
	vm_publish cm-switch-done 1
	sum=$(iperf_summary /tmp/cm-switch.json 12) || { tail -20 /tmp/cm-switch.json; diag; return 1; }
	echo "received, bytes sent from 12 s on: $sum"
	[ "${sum%% *}" -gt 0 ] || { echo "nothing received"; rc=1; }
	[ "${sum##* }" -gt 0 ] || { echo "nothing sent after the switches"; rc=1; }
	ip link set ib0 mtu $CM_MTU || rc=1
	return $rc
}

t_to_datagram() {
	ip link set ib0 type ipoib mode datagram && mode_is datagram && mtu_is "$UD_MTU"
}

t_to_connected() {
	ip link set ib0 type ipoib mode connected && ip link set ib0 mtu $CM_MTU &&
		mode_is connected && mtu_is $CM_MTU
}

# vm1 in datagram mode, vm2 connected: small pings both ways, and from
# vm2 60000 bytes, which either go over an RC connection (a datagram-mode
# peer may accept them) or are refused with "fragmentation needed" so the
# route learns the datagram MTU; the first large echo may be lost to that.
t_mixed() {
	local rc=0 tb0 tb1 how
	if [ "$ME" = 1 ]; then
		pings 3 "$PEERIP" || rc=1
		# For vm2, whose small pings went at the same time.
		vm_publish mixed-diag "$(side_diag 2>&1)"
		return $rc
	fi
	pings 3 "$PEERIP" ||
		{ rc=1; echo "vm1 (datagram mode) then:"; vm_fetch 1 mixed-diag 60; }
	tb0=$(ethstat tx_drop_too_big)
	ping -c 1 -W 5 -s 60000 "$PEERIP" > /dev/null
	pings 3 -s 60000 "$PEERIP" || rc=1
	tb1=$(ethstat tx_drop_too_big)
	if peer_lines tx live; then
		how="over an RC connection"
	elif [ $((tb1 - tb0)) -gt 0 ] && ip route get "$PEERIP" | grep -q " mtu $UD_MTU"; then
		how="fragmented to the route mtu learned from the driver"
	else
		echo "neither an RC connection nor a too-big drop with route mtu $UD_MTU:"
		cm_dump
		ip route get "$PEERIP"
		rc=1
	fi
	echo "tx_drop_too_big $tb0 -> $tb1; large pings went ${how:-nowhere}"
	return $rc
}

# set_param NAME VALUE: a module parameter written and read back.
set_param() {
	echo "$2" > "$PARAM/$1" && expect_eq "$(val "$PARAM/$1")" "$2" "$1"
}

neigh_permanent() {
	ip neigh replace "$PEERIP" lladdr "$(sed 's/../&:/g; s/:$//' <<<"$PEER_HEX")" \
		dev ib0 nud permanent
}

# vm1 pings once; the connections this makes on both sides must be seen,
# then go once idle for cm_idle_timeout (3 s), with their RC QPs.
t_reap() {
	local rc=0 t0 el
	if [ "$ME" = 1 ]; then
		t0=$EPOCHREALTIME
		ping -c 1 -W 5 "$PEERIP" > /tmp/cm-reap-ping.out 2>&1 ||
			{ cat /tmp/cm-reap-ping.out; return 1; }
		peer_lines tx live || { echo "no live tx connection right after the ping:"; cm_dump; rc=1; }
		[ "$(conns)" -ge 1 ] || { echo "connections: $(conns)"; rc=1; }
	else
		wait_for 20 peer_seen rx ||
			{ echo "no rx connection after the peer's ping:"; cm_dump; return 1; }
		t0=$EPOCHREALTIME
	fi
	wait_for 30 no_conns || { echo "still there after 30 s: connections $(conns)"; cm_dump; return 1; }
	el=$(python3 -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))' \
		"$t0" "$EPOCHREALTIME")
	echo "gone after $el s"
	# On the side that sent: not before cm_idle_timeout (3 s from the
	# echo request, with some slack for the clock).
	if [ "$ME" = 1 ] && python3 -c 'import sys; sys.exit(float(sys.argv[1]) >= 2.5)' "$el"; then
		echo "reaped after $el s, before cm_idle_timeout"
		rc=1
	fi
	wait_for 10 no_rc_qps || { echo "RC QPs left:"; rdma res show qp; rc=1; }
	return $rc
}

# vm1 with max_connections=0: pings still answered, over UD, and counted.
t_cap() {
	local cap0 cap1 fb0 fb1 rc=0
	cap0=$(ethstat cm_cap_reached)
	fb0=$(ethstat tx_cm_fallback)
	echo 0 > $PARAM/max_connections || return 1
	expect_eq "$(val $PARAM/max_connections)" 0 max_connections || rc=1
	pings 3 "$PEERIP" || rc=1
	cap1=$(ethstat cm_cap_reached)
	fb1=$(ethstat tx_cm_fallback)
	echo "cm_cap_reached $cap0 -> $cap1, tx_cm_fallback $fb0 -> $fb1"
	[ $((cap1 - cap0)) -ge 1 ] || { echo "cm_cap_reached did not move"; rc=1; }
	[ $((fb1 - fb0)) -ge 3 ] || { echo "tx_cm_fallback moved by less than 3"; rc=1; }
	expect_eq "$(peer_count tx "$COUNTED")" 0 "tx connections to the peer" || { cm_dump; rc=1; }
	return $rc
}

# Still capped: 60000 bytes with DF are dropped with "fragmentation
# needed" and the route takes the datagram MTU; then TCP (route cache
# flushed, so it starts at MSS 65480) adapts likewise and gets through.
t_too_big() {
	local tb0 tb1 tb2 out sum rc=0
	ip route flush cache
	tb0=$(ethstat tx_drop_too_big)
	ping -c 1 -Mdo -W 3 -s 60000 "$PEERIP" > /dev/null 2>&1
	tb1=$(ethstat tx_drop_too_big)
	out=$(ip route get "$PEERIP")
	echo "tx_drop_too_big $tb0 -> $tb1; $out"
	[ $((tb1 - tb0)) -ge 1 ] || { echo "no too-big drop"; rc=1; }
	grep -q " mtu $UD_MTU" <<<"$out" || { echo "route mtu is not $UD_MTU"; rc=1; }
	ip route flush cache
	send_side toobig timeout 120 iperf3 -c "$PEERIP" -t 4 -J > /tmp/cm-toobig.json 2>&1 ||
		{ echo "iperf3 exit status $?"; rc=1; }
	tb2=$(ethstat tx_drop_too_big)
	sum=$(iperf_summary /tmp/cm-toobig.json 0) || { tail -20 /tmp/cm-toobig.json; diag; return 1; }
	echo "TCP: received, bytes: $sum; tx_drop_too_big $tb1 -> $tb2; $(ip route get "$PEERIP" | tail -1)"
	grep -o '"tcp_mss_default":[^,]*' /tmp/cm-toobig.json
	[ "${sum%% *}" -gt 0 ] || rc=1
	[ $((tb2 - tb1)) -ge 1 ] || { echo "TCP never exceeded the path"; rc=1; }
	[ $rc = 0 ] || diag
	return $rc
}

# scan_since MARKER: the kernel log since MARKER has no BUG, WARNING,
# KASAN, lockdep, leak, ... report (tests/vm/scan-logs.sh).
scan_since() {
	dmesg | sed -n "/$1/,\$p" > "/tmp/$1.log"
	"$IPNG_REPO/tests/vm/scan-logs.sh" "/tmp/$1.log"
}

# rdma link delete on DEL (vm1 or vm2) while both directions are live and
# DEL pings; DEL's interface goes, comes back with the device and talks
# at 60000 bytes; the other side's connections with the vanished peer go
# (cm_idle_timeout is 3 s here) and leave no RC QP behind. ktap_check runs
# a test in a subshell: the ping's PID goes through a file.
PING_PIDFILE=/tmp/cm-rdma-ping.pid

rdma_delete_prepare() {
	local del=$1
	echo "ipng-cm-rdma-$del" > /dev/kmsg
	if [ "$ME" = "$del" ]; then
		ping -i 0.2 -s 20000 -W 1 "$PEERIP" > /dev/null 2>&1 &
		echo $! > $PING_PIDFILE
	fi
	both_live || { echo "not both directions live:"; cm_dump; return 1; }
	cm_dump
}

stop_ping() {
	local pid
	[ -s $PING_PIDFILE ] || return 0
	pid=$(cat $PING_PIDFILE)
	rm -f $PING_PIDFILE
	kill "$pid" 2>/dev/null
}

t_rdma_delete() {
	local del=$1 rc=0
	if [ "$ME" = "$del" ]; then
		rdma link delete rxe0 || { stop_ping; return 1; }
		wait_for 20 no_ib0 || { echo "ib0 still there"; rc=1; }
		[ ! -e $PROC/ib0 ] || { echo "$PROC/ib0 still there"; rc=1; }
		[ ! -e $DBG/ib0 ] || { echo "$DBG/ib0 still there"; rc=1; }
		stop_ping
		vm_publish "cm-deleted-$del" 1
		rdma link add rxe0 type rxe netdev eth0 || return 1
		wait_for 20 has_ib0 || { echo "no ib0 after rdma link add"; return 1; }
		bring_up || return 1
		expect_eq "$(conns)" 0 "connections of the new ib0" || rc=1
		ip link set ib0 type ipoib mode connected && ip link set ib0 mtu $CM_MTU || return 1
		vm_publish "cm-addr-$del" "$(hex_addr)"
	else
		vm_fetch "$del" "cm-deleted-$del" 120 > /dev/null || return 1
		wait_for 60 no_conns ||
			{ echo "connections with the removed peer stay: $(conns)"; cm_dump; rc=1; }
		wait_for 10 no_rc_qps || { echo "RC QPs left:"; rdma res show qp; rc=1; }
	fi
	scan_since "ipng-cm-rdma-$del" || rc=1
	return $rc
}

# Writes outside the documented ranges fail and leave the value as it was.
t_param_limits() {
	local rc=0 p v out
	for p in max_connections:65537 max_connections:-1 max_connections:x \
		cm_idle_timeout:0 cm_idle_timeout:86401; do
		v=$(val "$PARAM/${p%%:*}")
		if (echo "${p#*:}" > "$PARAM/${p%%:*}") 2>/dev/null; then
			echo "${p%%:*}=${p#*:} accepted"
			rc=1
		fi
		expect_eq "$(val "$PARAM/${p%%:*}")" "$v" "${p%%:*} after ${p#*:}" || rc=1
	done
	set_param max_connections 65536 && set_param max_connections 4096 || rc=1
	# Each refusal names the range, also for a value that is no number.
	out=$(dmesg | grep -E 'ipoib_ng: (max_connections|cm_idle_timeout) must be')
	if [[ $out != *"max_connections must be a number from 0 to 65536"* ]] ||
		[[ $out != *"cm_idle_timeout must be a number from 1 to 86400"* ]] ||
		[[ $out == *"from 0 to 0"* ]]; then
		echo "log: $out"
		rc=1
	fi
	return $rc
}

# flood KIND N: N permanent neighbours 10.11.x.y with forged RC link
# addresses, one UDP datagram to each, from one python3 (programs are slow
# here). KIND peer: the peer's GID with fresh QPNs (one host claiming
# thousands of interfaces); gids: fresh GIDs as well.
flood() {
	python3 - "$1" "$2" "$PEER_HEX" <<'EOF_PY'
import socket, subprocess, sys
kind, n, peer = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cmds, ips = [], []
for i in range(n):
    ip = "10.11.%d.%d" % (1 + i // 250, 1 + i % 250)
    gid = peer[8:] if kind == "peer" else "00000000000000000000ffff0a63%04x" % i
    h = "80%06x%s" % (0x200000 + i, gid)
    ll = ":".join(h[j:j + 2] for j in range(0, 40, 2))
    cmds.append("neigh replace %s lladdr %s dev ib0 nud permanent" % (ip, ll))
    ips.append(ip)
subprocess.run(["ip", "-batch", "-"], input="\n".join(cmds) + "\n",
               text=True, check=True)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for ip in ips:
    s.sendto(b"ipng", (ip, 9))
EOF_PY
}

flood_cleanup() {
	ip neigh flush dev ib0 nud permanent
	ip addr del 10.11.0.254/16 dev ib0 2>/dev/null
	return 0
}

# shellcheck disable=SC2317  # called through wait_for
no_failed() { [ "$(cm_count '^tx .* state failed ')" = 0 ]; }

# vm1: 40 forged QPNs on the peer's GID. At most IPNG_CM_PER_PEER (16)
# connections with that GID, the rest refused and counted; the failed
# attempts are markers that go at their retry time (10 s); the real peer
# still answers.
t_peer_cap() {
	local pc0 pc1 n rc=0
	ip addr add 10.11.0.254/16 dev ib0 || return 1
	pc0=$(ethstat cm_peer_cap_reached)
	flood peer 40 || { flood_cleanup; return 1; }
	# The cap is on connections (being made, live, closing); a connection
	# that failed frees its slot and stays as a marker, which the marker
	# cap bounds (256 per interface) and expiry removes.
	n=$(cm_count "^(tx|rx) qpn 0x[0-9a-f]{6} gid $PEER_GID_RE state (idle|req_sent|rep_sent|live|closing) ")
	pc1=$(ethstat cm_peer_cap_reached)
	echo "cm_peer_cap_reached $pc0 -> $pc1; connections with the peer's GID: $n"
	# 40 at once to one GID meet the cap; how often depends on how fast
	# the refused peer's connections fail and free their slots (18 of 40
	# in one run, more than 20 on a slower machine).
	[ $((pc1 - pc0)) -ge 1 ] || { echo "the cap never refused one"; rc=1; }
	[ "$n" -le 16 ] || { echo "more than 16 connections with one GID"; cm_dump; rc=1; }
	[ "$(cm_count '^tx .* state failed ')" -le 256 ] ||
		{ echo "more than 256 failed markers"; rc=1; }
	wait_for 40 no_failed || { echo "failed markers did not expire:"; cm_dump; rc=1; }
	pings 3 "$PEERIP" || rc=1
	flood_cleanup
	return $rc
}

# vm1: 600 forged (QPN, GID) pairs. Failed markers stay within 256,
# connections being made within 64, the table within both; the markers
# expire and the real peer still answers.
t_table_bound() {
	local failed setup n rc=0 c0 c1
	ip addr add 10.11.0.254/16 dev ib0 || return 1
	c0=$(ethstat cm_cap_reached)
	flood gids 600 || { flood_cleanup; return 1; }
	sleep 2
	failed=$(cm_count '^tx .* state failed ')
	setup=$(cm_count '^(tx|rx) .* state (idle|req_sent|rep_sent) ')
	n=$(cm_count .)
	c1=$(ethstat cm_cap_reached)
	echo "entries $n: failed $failed, being made $setup; cm_cap_reached $c0 -> $c1"
	[ "$failed" -le 256 ] || { echo "more than 256 failed markers"; rc=1; }
	[ "$setup" -le 64 ] || { echo "more than 64 being made"; rc=1; }
	[ "$n" -le $((256 + 64 + 2)) ] || { echo "table over its bound"; rc=1; }
	pings 3 "$PEERIP" || rc=1
	wait_for 40 no_failed || { echo "failed markers did not expire:"; cm_dump | tail -5; rc=1; }
	flood_cleanup
	return $rc
}

# ipoib_ng's SRQs (rdma res names the kernel user).
srqs() {
	local l n=0
	while IFS= read -r l; do
		[[ $l =~ ipoib_ng ]] && n=$((n + 1))
	done <<<"$(rdma res show srq)"
	echo $n
}

# Both directions live over RC at 60000 bytes before the SRQ scenario.
t_srq_prepare() {
	echo "ipng-cm-srq" > /dev/kmsg
	pings 3 -Mdo -s 60000 "$PEERIP" || return 1
	both_live || { echo "not both directions live:"; cm_dump; return 1; }
	[ "$ME" = 1 ] || expect_eq "$(srqs)" 1 "ipoib_ng SRQs"
}

# vm1 goes back to datagram (its connections close, vm2's incoming ones
# are released); vm2, pinging vm1, goes back to datagram and at once
# deletes rxe0 while those releases run, adds it again and brings ib0 up.
t_srq_delete() {
	local rc=0 pid
	if [ "$ME" = 1 ]; then
		t_to_datagram || rc=1
		vm_publish cm-srq-dgram 1
		vm_fetch 2 cm-srq-deleted 180 > /dev/null || rc=1
	else
		ping -i 0.2 -s 1000 -W 1 "$PEERIP" > /dev/null 2>&1 &
		pid=$!
		vm_fetch 1 cm-srq-dgram 120 > /dev/null || rc=1
		ip link set ib0 type ipoib mode datagram || rc=1
		rdma link delete rxe0 || rc=1
		wait_for 20 no_ib0 || { echo "ib0 still there"; rc=1; }
		kill "$pid" 2>/dev/null
		vm_publish cm-srq-deleted 1
		rdma link add rxe0 type rxe netdev eth0 || return 1
		wait_for 20 has_ib0 || { echo "no ib0 after rdma link add"; return 1; }
		bring_up || return 1
		mode_is datagram || rc=1
		expect_eq "$(srqs)" 1 "ipoib_ng SRQs of the new ib0" || rc=1
	fi
	scan_since ipng-cm-srq || rc=1
	return $rc
}

# The new vm2 and vm1 talk again, both ways.
t_srq_after() {
	if [ "$ME" = 2 ]; then
		ping_each 3 "$PEERIP" || return 1
		vm_publish cm-srq-pinged 1
	else
		vm_fetch 2 cm-srq-pinged 120 > /dev/null || return 1
		ping_each 3 "$PEERIP" || return 1
	fi
}

# PEER_* are the peer's new address here (main shell, peer_info).
t_after_readd() {
	local del=$1
	if [ "$ME" = "$del" ]; then
		pings 3 -Mdo -s 60000 "$PEERIP" || return 1
		vm_publish "cm-readd-pinged-$del" 1
	else
		# After the peer's ARP request has told us its new address.
		vm_fetch "$del" "cm-readd-pinged-$del" 120 > /dev/null || return 1
		pings 3 -Mdo -s 60000 "$PEERIP" || return 1
	fi
	both_live || { echo "not both directions live with the new peer:"; cm_dump; return 1; }
}

t_restore() {
	local rc=0
	echo 4096 > $PARAM/max_connections && echo 60 > $PARAM/cm_idle_timeout || rc=1
	expect_eq "$(val $PARAM/max_connections)" 4096 max_connections || rc=1
	expect_eq "$(val $PARAM/cm_idle_timeout)" 60 cm_idle_timeout || rc=1
	ip link set ib0 type ipoib mode datagram || return 1
	mode_is datagram || rc=1
	mtu_is "$UD_MTU" || rc=1
	ip neigh flush dev ib0
	ip route flush cache
	return $rc
}

# check NAME COMMAND...: ktap_check, with the suite's clock in the log.
check() {
	echo "# connected: $1 at ${SECONDS}s" >&2
	ktap_check "$@"
}

ktap_begin ipoib_ng_e2e_connected
check "setup_ib0_up_ipv6_off" setup
UD_MTU=$(( $(active_mtu) - 4 ))
vm_publish cm-addr "$(hex_addr)"
vm_barrier cm-up 180
peer_info cm-addr || echo "no peer address" >&2

check "defaults_datagram_params_no_connections" t_defaults
check "address_flags_rc_capable_0x80" t_rc_flag
check "datagram_mode_refuses_mtu_above_limit" t_mtu_refused_datagram
check "ip_link_mode_connected_keeps_mtu" t_connected_ip_link
check "sysfs_mode_datagram_and_connected" t_sysfs_both_ways
check "sysfs_mode_bad_values_refused_mode_kept" t_bad_sysfs_value
check "connected_mode_mtu_65520" t_mtu_connected
check "datagram_clamps_mtu_connected_keeps_it" t_clamp
vm_barrier cm-connected 120

# Traffic, both VMs connected at MTU 65520.
check "ping_60000_bytes_both_ways_at_once" t_ping_60000
vm_barrier cm-pinged 120
check "connections_in_debugfs_proc_and_rdma_res" t_conns_visible
vm_barrier cm-visible 120
if [ "$ME" = 2 ] && [ -e "$DBG/ib0/tx_stall" ]; then
	check "rc_send_releases_its_socket_at_post" t_rc_socket_released
elif [ "$ME" = 2 ]; then
	ktap_skip "rc_send_releases_its_socket_at_post" "no tx_stall knob (not a test build)"
fi
vm_barrier cm-released 120
file_start
check "iperf3_tcp_10s_over_rc" t_iperf
check "tcp_8MiB_file_sha256_while_iperf3" t_file
check "mode_switch_during_iperf3" t_switch_mid_iperf
vm_barrier cm-switched 120

# vm1 datagram, vm2 connected.
if [ "$ME" = 1 ]; then
	check "mixed_modes_peer_switches_to_datagram" t_to_datagram
fi
ip route flush cache
vm_barrier cm-mixed 120
check "mixed_modes_ping_small_and_large" t_mixed
vm_barrier cm-mixed-done 120
if [ "$ME" = 1 ]; then
	check "mixed_modes_back_to_connected" t_to_connected
fi

# Idle reaping with cm_idle_timeout=3 and permanent neighbours (no ARP
# traffic keeps a connection in use); the connections of the tests above
# are reaped first.
check "cm_idle_timeout_writable" set_param cm_idle_timeout 3
check "neighbour_permanent" neigh_permanent
vm_barrier cm-reap-set 120
check "earlier_connections_reaped" wait_for 30 no_conns
vm_barrier cm-reap-go 120
check "idle_connection_seen_then_reaped" t_reap
vm_barrier cm-reap-done 120
ip neigh del "$PEERIP" dev ib0
echo 60 > $PARAM/cm_idle_timeout

# max_connections=0 on vm1.
if [ "$ME" = 1 ]; then
	check "max_connections_0_ping_over_ud_counted" t_cap
	check "too_big_icmp_frag_needed_tcp_adapts" t_too_big
else
	check "iperf3_server_for_capped_peer" iperf3_server toobig
fi
vm_barrier cm-capped 180
[ "$ME" = 1 ] && echo 4096 > $PARAM/max_connections
ip route flush cache

# Limits: parameter ranges, the per-peer cap and the table bound (vm1
# floods, vm2 is the peer whose GID is used).
check "params_out_of_range_refused" t_param_limits
vm_barrier cm-limits 120
if [ "$ME" = 1 ]; then
	check "per_peer_cap_16_markers_expire" t_peer_cap
	check "forged_addresses_table_bounded" t_table_bound
fi
vm_barrier cm-limits-done 300

# Last: rdma link delete on vm1 with connections up both ways; vm2 sees
# its peer vanish and come back.
echo 3 > $PARAM/cm_idle_timeout
vm_barrier cm-rdma 120
check "rdma_delete_both_directions_live" rdma_delete_prepare 1
vm_barrier cm-rdma-live 120
check "rdma_delete_clean_with_connections_up" t_rdma_delete 1
stop_ping
if [ "$ME" = 2 ]; then
	peer_info cm-addr-1 >&2 || echo "no new address of vm1" >&2
fi
check "ping_60000_after_rdma_link_add" t_after_readd 1
vm_barrier cm-rdma-done 180

# The SRQ scenario: traffic both ways, back to datagram, rdma link delete
# on vm2 under ping, add again, ib0 works.
check "srq_connections_up_both_ways" t_srq_prepare
vm_barrier cm-srq-live 120
check "srq_datagram_then_rdma_delete_under_ping" t_srq_delete
check "srq_ib0_works_after_rdma_link_add" t_srq_after
vm_barrier cm-srq-done 180

check "defaults_restored" t_restore
vm_barrier cm-end 180
check "module_unloads" rmmod ipoib_ng
ktap_end
