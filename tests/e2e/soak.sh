#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make soak` (tests/soak.sh), run on both VMs; not an e2e
# suite of `make check`. For $ipng_soak_secs seconds (default 600) iperf3
# runs both ways over ib0 (each VM a client of the other's server) while
# each VM, every $ipng_soak_period seconds (default 5), makes one random
# change of its own ib0:
#   - mode switch datagram <-> connected (MTU 65520 in connected mode),
#   - ethtool -L ib0 combined N, N in 1..max of ethtool -l,
#   - ethtool -G ib0 rx R tx T, powers of two within ethtool -g's limits,
#   - ethtool -C ib0 adaptive-rx on|off rx-usecs U;
# interleaved with 2 MiB TCP transfers (xfer.py), alternating direction,
# whose sha256 the receiver checks. Asserted (KTAP on stdout): every
# change succeeds and reads back (sysfs, /proc, ethtool -c), every transfer
# arrives and verifies, both iperf3 streams last to the end (exit 0) and
# neither stalls (no bytes) for $ipng_soak_max_stall seconds (default 60)
# in a row, the kernel log holds no BUG/WARNING/KASAN/lockdep/... report,
# and the module unloads at the end. Writes soak-changes.log,
# soak-xfers.log, soak-iperf.csv (throughput per interval), iperf3's JSON
# and soak-summary.txt (key=value) to $IPNG_OUT; the host adds kmemleak and
# the console scans.
set -u
# shellcheck source=tests/vm/guest-lib.sh disable=SC1091
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${ipng_soak_ko:-$IPNG_REPO/ipoib_ng.ko}
SECS=${ipng_soak_secs:-600}
PERIOD=${ipng_soak_period:-5}
SEED=${ipng_soak_seed:-1}
# 60 s: a change stops ib0's datapath for up to 26 s in the TCG guests
# (a mode switch, or rings of 8192 refilled), and TCP, whose retransmit
# timer doubles with each loss, may wait as long again before its next
# try: a 30 s limit failed on that alone (2026-12-02, seed 5009, vm2's
# stream 30.0 s). A datapath that stays wedged stalls for good.
MAX_STALL=${ipng_soak_max_stall:-60}
XFER_BYTES=${ipng_soak_xfer_bytes:-2097152}
# Pause between two transfers, seconds.
XFER_GAP=${ipng_soak_xfer_gap:-10}
NET=/sys/class/net
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
MYIP=10.10.0.$ME
PEERIP=10.10.0.$PEER
XFER=$IPNG_REPO/tests/e2e/xfer.py
CM_MTU=65520
RING_MIN=64
USECS=(0 16 50 100 250 1000)
INTERVAL=5
CHANGES=$IPNG_OUT/soak-changes.log
XFERS=$IPNG_OUT/soak-xfers.log
SUMMARY=$IPNG_OUT/soak-summary.txt
SEND_FILE=/tmp/soak-send.bin
RECV_FILE=/tmp/soak-recv.bin
CH_MAX=1 RX_MAX=$RING_MIN TX_MAX=$RING_MIN

stat_val() { proc_stat "$1"; }

# sect_val TEXT SECTION NAME: "NAME: value" of ethtool output TEXT within
# SECTION (max: "Pre-set maximums", cur: "Current hardware settings").
sect_val() {
	local sec='' l
	while IFS= read -r l; do
		case $l in
		'Pre-set maximums:') sec=max; continue ;;
		'Current hardware settings:') sec=cur; continue ;;
		esac
		[ "$sec" != "$2" ] && continue
		if [[ $l =~ ^[[:space:]]*"$3":[[:space:]]*([0-9]+) ]]; then
			printf '%s' "${BASH_REMATCH[1]}"
			return 0
		fi
	done <<<"$1"
	return 1
}

has_ib0() { [ -e $NET/ib0 ]; }
# shellcheck disable=SC2317  # called through wait_for
listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }
log2() { local n=$1 l=0; while [ "$n" -gt 1 ]; do n=$((n / 2)); l=$((l + 1)); done; echo $l; }

setup() {
	local l g
	insmod "$KO" && wait_for 20 has_ib0 || return 1
	sysctl -qw net.ipv6.conf.ib0.disable_ipv6=1 &&
		ip addr add "$MYIP/24" dev ib0 && ip link set ib0 up &&
		wait_for 20 carrier_up && wait_for 20 oper_up || return 1
	l=$(ethtool -l ib0) || return 1
	g=$(ethtool -g ib0) || return 1
	if ! CH_MAX=$(sect_val "$l" max Combined) || ! RX_MAX=$(sect_val "$g" max RX) ||
		! TX_MAX=$(sect_val "$g" max TX); then
		echo "limits not found in:"
		echo "$l"
		echo "$g"
		return 1
	fi
	echo "channels 1..$CH_MAX, rx ring $RING_MIN..$RX_MAX, tx ring $RING_MIN..$TX_MAX"
}

# --- the changes ---

# pow2_in MAX: a random power of two in RING_MIN..MAX.
pow2_in() {
	local lo hi
	lo=$(log2 $RING_MIN)
	hi=$(log2 "$1")
	echo $((1 << (lo + RANDOM % (hi - lo + 1))))
}

c_mode() {
	if [ "$(val $NET/ib0/mode)" = datagram ]; then
		CHANGE="mode connected mtu $CM_MTU"
		ip link set ib0 type ipoib mode connected && ip link set ib0 mtu $CM_MTU &&
			[ "$(val $NET/ib0/mode)" = connected ] && [ "$(val $NET/ib0/mtu)" = $CM_MTU ]
	else
		CHANGE="mode datagram"
		ip link set ib0 type ipoib mode datagram &&
			[ "$(val $NET/ib0/mode)" = datagram ] && [ "$(stat_val mode)" = datagram ]
	fi
}

c_channels() {
	local n=$((1 + RANDOM % CH_MAX))
	CHANGE="ethtool -L ib0 combined $n"
	ethtool -L ib0 combined $n && [ "$(stat_val channels)" = $n ]
}

c_rings() {
	local r t
	r=$(pow2_in "$RX_MAX")
	t=$(pow2_in "$TX_MAX")
	CHANGE="ethtool -G ib0 rx $r tx $t"
	ethtool -G ib0 rx "$r" tx "$t" &&
		[ "$(stat_val recv_queue_size)" = "$r" ] && [ "$(stat_val send_queue_size)" = "$t" ]
}

c_coalesce() {
	local a=off u=${USECS[RANDOM % ${#USECS[@]}]} c
	[ $((RANDOM % 2)) = 0 ] && a=on
	CHANGE="ethtool -C ib0 adaptive-rx $a rx-usecs $u"
	ethtool -C ib0 adaptive-rx $a rx-usecs "$u" || return 1
	c=$(ethtool -c ib0) || return 1
	[[ $c =~ Adaptive\ RX:\ +$a ]] || { echo "$c"; return 1; }
	# DIM moves rx-usecs when adaptive.
	[ $a = on ] || [[ $c =~ rx-usecs:\ +$u($'\n') ]] || { echo "$c"; return 1; }
}

# The change loop, in the background until DEADLINE ($SECONDS); its counts
# go to /tmp/soak-changer.txt. A change runs in this shell (it sets CHANGE,
# its description), its output to a file.
changer() {
	local deadline=$1 n=0 fails=0 kind rc t0 next out
	local kinds=(c_mode c_channels c_rings c_coalesce)
	RANDOM=$((SEED * 2 + ME))
	next=$((SECONDS + PERIOD))
	printf 'changes=0\nchange_failures=0\n' > /tmp/soak-changer.txt
	while [ $SECONDS -lt "$deadline" ]; do
		if [ $SECONDS -lt $next ]; then
			sleep 0.5
			continue
		fi
		next=$((SECONDS + PERIOD))
		kind=${kinds[RANDOM % ${#kinds[@]}]}
		t0=$SECONDS
		CHANGE=$kind
		rc=0
		"$kind" > /tmp/soak-change.out 2>&1 < /dev/null || rc=$?
		n=$((n + 1))
		if [ $rc = 0 ]; then
			printf 't=%s %s: ok (%s s)\n' "$t0" "$CHANGE" $((SECONDS - t0)) >> "$CHANGES"
		else
			fails=$((fails + 1))
			out=$(< /tmp/soak-change.out)
			printf 't=%s %s: FAILED, status %s (%s s)\n%s\n' "$t0" "$CHANGE" $rc \
				$((SECONDS - t0)) "$out" >> "$CHANGES"
		fi
		printf 'changes=%s\nchange_failures=%s\n' $n $fails > /tmp/soak-changer.txt
	done
}

# --- background jobs: status in /tmp/soak-NAME.rc, output in $IPNG_OUT ---

bg_start() {
	local name=$1 secs=$2
	shift 2
	rm -f "/tmp/soak-$name.rc"
	(
		timeout -k 5 "$secs" "$@" > "$IPNG_OUT/soak-$name.out" 2>&1
		echo $? > "/tmp/soak-$name.rc"
	) < /dev/null > /dev/null 2>&1 &
}

# bg_wait NAME SECS: NAME's exit status once it ended (124: killed by its
# timeout), or "running" after SECS seconds.
bg_wait() {
	local end=$((SECONDS + $2))
	while [ ! -s "/tmp/soak-$1.rc" ] && [ $SECONDS -lt $end ]; do
		sleep 0.5
	done
	if [ -s "/tmp/soak-$1.rc" ]; then val "/tmp/soak-$1.rc"; else echo running; fi
}

# --- transfers ---

XFER_SENT=0 XFER_SEND_FAILED=0 XFER_RECEIVED=0 XFER_VERIFIED=0

# xfer_one N FROM: transfer N, from VM FROM to the other one.
xfer_one() {
	local n=$1 from=$2 st sum got size t0=$SECONDS
	if [ "$ME" = "$from" ]; then
		XFER_SENT=$((XFER_SENT + 1))
		if ! vm_fetch "$PEER" "xfer-$n-listening" 120 > /dev/null; then
			st="peer not listening"
		else
			st=0
			timeout -k 5 180 python3 "$XFER" send "$PEERIP" 5002 $SEND_FILE 150 \
				> /tmp/soak-xfer-send.out 2>&1 || st=$?
		fi
		if [ "$st" = 0 ]; then
			echo "xfer $n vm$ME -> vm$PEER: sent ($((SECONDS - t0)) s)" >> "$XFERS"
		else
			XFER_SEND_FAILED=$((XFER_SEND_FAILED + 1))
			echo "xfer $n vm$ME -> vm$PEER: send FAILED ($st): $(tail -2 /tmp/soak-xfer-send.out)" >> "$XFERS"
		fi
	else
		XFER_RECEIVED=$((XFER_RECEIVED + 1))
		rm -f $RECV_FILE
		bg_start xfer-recv 200 python3 "$XFER" recv "$MYIP" 5002 $RECV_FILE 150
		wait_for 30 listening 5002 || echo "xfer $n: receiver not listening" >> "$XFERS"
		vm_publish "xfer-$n-listening" 1
		st=$(bg_wait xfer-recv 210)
		sum=$(vm_fetch "$from" sha 60)
		got=$(sha256sum < $RECV_FILE 2>/dev/null)
		size=$(stat -c %s $RECV_FILE 2>/dev/null)
		if [ "$st" = 0 ] && [ "$size" = "$XFER_BYTES" ] && [ "$got" = "$sum" ]; then
			XFER_VERIFIED=$((XFER_VERIFIED + 1))
			echo "xfer $n vm$from -> vm$ME: $size bytes, sha256 verified ($((SECONDS - t0)) s)" >> "$XFERS"
		else
			echo "xfer $n vm$from -> vm$ME: FAILED: recv status $st, $size bytes, sha256 $got, want $sum" >> "$XFERS"
			tail -3 "$IPNG_OUT/soak-xfer-recv.out" >> "$XFERS"
		fi
	fi
	vm_barrier "xfer-$n-done" 300
}

# --- checks run in this shell (they read globals); KTAP from the status ---

main_check() {
	local name=$1 rc=0
	shift
	echo "# soak: $name at ${SECONDS}s" >&2
	"$@" > /tmp/soak-step.out 2>&1 < /dev/null || rc=$?
	if [ $rc = 0 ]; then
		ktap_ok "$name"
	else
		ktap_fail "$name" "$(tail -n 40 /tmp/soak-step.out)"
	fi
	return 0
}

expect_eq() {
	if [ "$1" != "$2" ]; then
		echo "$3: got '$1', want '$2'"
		return 1
	fi
}

t_changes() {
	local changes=0 change_failures=0 k v
	while IFS='=' read -r k v; do
		case $k in
		changes) changes=$v ;;
		change_failures) change_failures=$v ;;
		esac
	done < /tmp/soak-changer.txt
	echo "$changes changes, $change_failures failed"
	printf 'changes=%s\nchange_failures=%s\n' "$changes" "$change_failures" >> "$SUMMARY"
	[ "$changes" -gt 0 ] || { echo "no change was made"; return 1; }
	[ "$change_failures" = 0 ] || { grep -A3 FAILED "$CHANGES" | head -30; return 1; }
}

t_xfers() {
	printf 'xfers_sent=%s\nxfers_send_failed=%s\nxfers_received=%s\nxfers_verified=%s\n' \
		$XFER_SENT $XFER_SEND_FAILED $XFER_RECEIVED $XFER_VERIFIED >> "$SUMMARY"
	echo "sent $XFER_SENT ($XFER_SEND_FAILED failed), received $XFER_RECEIVED, verified $XFER_VERIFIED"
	[ $XFER_RECEIVED -gt 0 ] || { echo "no transfer received"; return 1; }
	if [ $XFER_SEND_FAILED != 0 ] || [ $XFER_VERIFIED != $XFER_RECEIVED ]; then
		grep -A3 FAILED "$XFERS"
		return 1
	fi
}

# iperf_report: soak-iperf.csv (throughput per interval, both directions
# as this VM saw them) from iperf3's JSON; summary keys; 1 on an error, no
# data or a stall of MAX_STALL seconds.
iperf_report() {
	python3 - "$IPNG_OUT" "$INTERVAL" "$MAX_STALL" <<'PY'
import json, sys
out, interval, max_stall = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
rows, keys, bad = [], {}, []
for side, name in (('sent', 'soak-cli.out'), ('received', 'soak-srv.out')):
    try:
        t = open(f'{out}/{name}').read()
        j = json.loads(t[t.find('{'):t.rfind('}') + 1])
    except (OSError, ValueError) as e:
        bad.append(f'{name}: no iperf3 JSON ({e})')
        continue
    if j.get('error'):
        bad.append(f'{name}: iperf3 error: {j["error"]}')
    ivs = [i['sum'] for i in j.get('intervals', [])]
    stall = run = 0.0
    for s in ivs:
        rows.append((side, s['start'], s['end'], s['bytes'], s['bits_per_second'] / 1e6))
        run = run + (s['end'] - s['start']) if s['bytes'] == 0 else 0.0
        stall = max(stall, run)
    mb = [s['bits_per_second'] / 1e6 for s in ivs]
    keys[f'iperf_{side}_intervals'] = len(ivs)
    keys[f'iperf_{side}_bytes'] = sum(s['bytes'] for s in ivs)
    keys[f'iperf_{side}_mbit_s_avg'] = round(sum(mb) / len(mb), 2) if mb else 0
    keys[f'iperf_{side}_mbit_s_min'] = round(min(mb), 2) if mb else 0
    keys[f'iperf_{side}_mbit_s_max'] = round(max(mb), 2) if mb else 0
    keys[f'iperf_{side}_longest_stall_s'] = round(stall, 1)
    if not ivs or keys[f'iperf_{side}_bytes'] == 0:
        bad.append(f'{name}: no data')
    if stall >= max_stall:
        bad.append(f'{name}: no bytes for {stall:.0f} s in a row (limit {max_stall:.0f})')
with open(f'{out}/soak-iperf.csv', 'w') as f:
    f.write('direction,start_s,end_s,bytes,mbit_s\n')
    for r in rows:
        f.write('%s,%.1f,%.1f,%d,%.3f\n' % r)
with open(f'{out}/soak-summary.txt', 'a') as f:
    for k, v in keys.items():
        f.write(f'{k}={v}\n')
for k, v in keys.items():
    print(f'{k}={v}')
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

t_iperf_ended() {
	local c s
	c=$(bg_wait cli $((SECS + 240)))
	s=$(bg_wait srv 120)
	printf 'iperf_client_status=%s\niperf_server_status=%s\n' "$c" "$s" >> "$SUMMARY"
	echo "iperf3 client status $c, server status $s"
	if [ "$c" != 0 ] || [ "$s" != 0 ]; then
		tail -5 "$IPNG_OUT/soak-cli.out" "$IPNG_OUT/soak-srv.out"
		return 1
	fi
}

t_no_report() {
	local rc=0
	dmesg | sed -n '/ipng-soak-start/,$p' > /tmp/soak-dmesg.log
	"$IPNG_REPO/tests/vm/scan-logs.sh" /tmp/soak-dmesg.log || rc=1
	echo "kernel_log_clean=$([ $rc = 0 ] && echo yes || echo no)" >> "$SUMMARY"
	return $rc
}

t_unload() {
	timeout 120 rmmod ipoib_ng && [ ! -e /sys/module/ipoib_ng ]
}

# --- main ---

: > "$CHANGES"
: > "$XFERS"
: > "$SUMMARY"
echo ipng-soak-start > /dev/kmsg
ktap_begin ipoib_ng_soak
main_check setup_ib0_up setup
head -c "$XFER_BYTES" /dev/urandom > $SEND_FILE
vm_publish sha "$(sha256sum < $SEND_FILE)"
printf 'vm=%s\nsecs=%s\nperiod=%s\nseed=%s\nxfer_bytes=%s\n' "$ME" "$SECS" "$PERIOD" \
	"$SEED" "$XFER_BYTES" >> "$SUMMARY"
vm_barrier up 300

bg_start srv $((SECS + 300)) iperf3 -s -1 -B "$MYIP" -J -i $INTERVAL
wait_for 30 listening 5201 || echo "# soak: iperf3 server not listening" >&2
vm_barrier iperf-srv 120
start=$SECONDS
bg_start cli $((SECS + 240)) iperf3 -c "$PEERIP" -t "$SECS" -i $INTERVAL -J \
	--connect-timeout 10000 --snd-timeout 60000
changer $((start + SECS - 10)) < /dev/null > /tmp/soak-changer.out 2>&1 &
changer_pid=$!

# vm1 decides whether a transfer starts (30 s left at least), vm2 follows.
n=0
while :; do
	n=$((n + 1))
	if [ "$ME" = 1 ]; then
		d=stop
		[ $((SECONDS - start)) -lt $((SECS - 30)) ] && d=go
		vm_publish "xfer-$n" $d
	else
		d=$(vm_fetch 1 "xfer-$n" 400) || d=stop
	fi
	[ "$d" = go ] || break
	echo "# soak: transfer $n at $((SECONDS - start)) s" >&2
	xfer_one $n $((1 + n % 2))
	sleep "$XFER_GAP"
done
wait $changer_pid

main_check changes_all_made_and_read_back t_changes
main_check transfers_all_sha256_verified t_xfers
main_check iperf3_both_ways_to_the_end t_iperf_ended
main_check iperf3_per_interval_no_stall iperf_report
main_check kernel_log_no_report t_no_report
vm_barrier unload 600
main_check module_unloads t_unload
echo "elapsed_s=$SECONDS" >> "$SUMMARY"
ktap_end
