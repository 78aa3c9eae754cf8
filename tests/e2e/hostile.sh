#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "hostile", run on both VMs: a peer that misbehaves must
# not exhaust the other side. vm2 (the attacker) floods vm1 (the victim)
# through its own verbs (tests/e2e/hostile.py, pyverbs and ib_umad) with
#   - IPoIB ARP requests (UD, Q_Key 0x0B1B, GRH) that each carry a distinct
#     forged sender link address (RC flag + a fresh QPN + the attacker's
#     GID) and sender IP, which the victim answers by unicast to the forged
#     address: in connected mode one connection attempt each;
#   - IPv6 Neighbor Solicitations with the same kind of forged source
#     link-layer address options;
#   - CM REQs to the victim's service ID with malformed private data, and
#     well-formed ones that are never completed (half-open).
# Once with ib0 in connected mode on both sides, once in datagram mode;
# vm1's max_connections is lowered to $MAXCONN both times, so that the
# flood is well past it. vm1 asserts the bounds: connections (/proc) and the debugfs
# connection table within max_connections, the driver's neighbour table
# within its documented cap, kernel memory (Slab + Percpu + VmallocUsed,
# after drop_caches) grown by less than $MEM_BOUND_KB, the table emptied
# again after the attack, and a clean kernel log; vm2 asserts that every
# injected packet was sent and that its own pings were answered during the
# flood and pings and a short iperf3 work after it. The numbers go to
# hostile-notes.txt in the results, vm1's link counters once a second to
# hostile-<mode>-series.txt. KTAP on stdout.
#
# Environment: IPNG_HOSTILE_COUNT (forged ARP and NS each, default 1000;
# make long: 10000), IPNG_HOSTILE_PPS (their rate, default 50/s: what the
# debug guest answers while it keeps up; at 100-200/s, all python3 sends
# there, vm1 fell behind, the emulated link queued seconds of packets
# ahead of every ping and no ping assertion could pass), IPNG_HOSTILE_REQS
# IPNG_HOSTILE_NS_PPS (the Neighbor Solicitations' rate, default 20/s:
# each forged NS costs the victim four sends, its NA and, five seconds
# later, the kernel's three unicast NUD probes of the forged neighbour;
# at 50/s vm1 sent ~120 packets a second, its eth0 took in 1-20 a second
# behind them, vm2's pings came back 10-15 s late and its ARP entry for
# vm1 failed: 3.7% lost, make check on 2026-12-02, locally and in CI),
# IPNG_HOSTILE_REQS (half-open REQs, default 400), IPNG_HOSTILE_MAXCONN
# (default 256), IPNG_HOSTILE_MODES (the rounds, default
# "connected,datagram"; one of them alone to look into it),
# IPNG_HOSTILE_PERF=1 (a perf profile of the victim during the flood).
set -u
# shellcheck source=tests/vm/guest-lib.sh disable=SC1091
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
HOSTILE=$IPNG_REPO/tests/e2e/hostile.py
NET=/sys/class/net
PARAM=/sys/module/ipoib_ng/parameters
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
# A /16, so that thousands of forged senders are in the subnet.
MYIP=10.12.0.$ME
PEERIP=10.12.0.$PEER
MYIP6=fd20::$ME
PEERIP6=fd20::$PEER
FORGED_IP=10.12.1.0
FORGED_IP6=fd20::1:0
COUNT=${IPNG_HOSTILE_COUNT:-1000}
PPS=${IPNG_HOSTILE_PPS:-50}
NS_PPS=${IPNG_HOSTILE_NS_PPS:-20}
REQS=${IPNG_HOSTILE_REQS:-400}
MAXCONN=${IPNG_HOSTILE_MAXCONN:-256}
MODES=${IPNG_HOSTILE_MODES:-connected,datagram}
MALFORMED=50
# How often the victim looks for the attacker's files during the flood (s).
VICTIM_POLL=3
# ipoib_neigh.c: IPNG_NEIGH_MAX; ipoib_cm_state.h: IPNG_CM_MARKERS_MAX,
# IPNG_CM_PER_PEER; ipoib_cm_priv.h: IPNG_CM_RETRY (s).
NEIGH_MAX=8192
MARKERS_MAX=256
PER_PEER=16
CM_RETRY=10
# Kernel memory the attack may leave behind (and add at its peak): 64 MiB.
# What a correct driver keeps for it is bounded by max_connections
# connections ($MAXCONN RC QPs with their rings in rxe, a few hundred KiB
# each at most at the default queue sizes; less than 64 MiB even for all of
# them at once) plus at most NEIGH_MAX neighbour entries of ~100 bytes and
# the kernel's own ARP/ND tables (gc_thresh3 = 1024 entries each). A
# table that grows with every forged address passes this bound within a
# few thousand addresses; 64 MiB is also ~3% of the guest's 2 GiB.
MEM_BOUND_KB=65536
STOP=/tmp/hostile-sample.stop

val() {
	local v=''
	read -r v < "$1"
	printf '%s' "$v"
}

note() { printf '%s\n' "$*" >> "$IPNG_OUT/hostile-notes.txt"; }

hex_addr() { local a; a=$(val $NET/ib0/address); printf '%s' "${a//:/}"; }
has_ib0() { [ -e $NET/ib0 ]; }

setup() {
	insmod "$KO" && wait_for 10 has_ib0 || return 1
	ip addr add "$MYIP/16" dev ib0 &&
		ip -6 addr add "$MYIP6/64" dev ib0 nodad &&
		ip link set ib0 up && wait_for 10 carrier_up && wait_for 10 oper_up
}

# --- numbers: hostile.py prints key=value lines; kept in arrays ---

declare -A BEFORE=() SAMPLE=() AFTER=()
RX0=0

# load ARRAY FILE: the key=value lines of FILE into the associative ARRAY.
load() {
	local -n arr=$1
	local k v
	[ -r "$2" ] || { echo "no $2"; return 1; }
	arr=()
	while IFS='=' read -r k v; do
		# shellcheck disable=SC2034  # a nameref
		[ -n "$k" ] && arr["$k"]=$v
	done < "$2"
}

# kmem ARRAY [PREFIX]: Slab + Percpu + VmallocUsed in kB.
kmem() {
	local -n a=$1
	local p=${2:-}
	echo $((${a[${p}slab_kb]:-0} + ${a[${p}percpu_kb]:-0} + ${a[${p}vmallocused_kb]:-0}))
}

drop_caches() { sync; echo 3 > /proc/sys/vm/drop_caches; }

ethstat() { ETHS='' eth_stat "$1"; }

# --- victim (vm1) ---
# ktap_check runs every test in a subshell: the numbers go through files
# (/tmp/hostile-<mode>.{before,sample,after}, .rx0), each test loads them.

NUMS=/tmp/hostile
HWC=/sys/class/infiniband/rxe0/ports/1/hw_counters

# hw_counters FILE: the RDMA port's hardware counters (rxe: packets
# received, RNR and sequence errors...), "name value" lines, read with
# builtins.
hw_counters() {
	local f v
	for f in "$HWC"/*; do
		[ -r "$f" ] || continue
		read -r v < "$f" 2>/dev/null || continue
		echo "${f##*/} $v"
	done > "$1"
}

# hw_deltas BEFORE AFTER: the counters that changed, "name +delta".
hw_deltas() {
	local -A b=()
	local k v out=''
	while read -r k v; do b[$k]=$v; done < "$1"
	while read -r k v; do
		[ "$v" != "${b[$k]:-0}" ] && out+=" $k +$((v - ${b[$k]:-0}))"
	done < "$2"
	echo "${out:- none}"
}

# shellcheck disable=SC2317  # called through wait_for
gone() { ! kill -0 "$1" 2>/dev/null; }

victim_prepare() {
	local mode=$1
	echo "$MAXCONN" > $PARAM/max_connections || return 1
	ip neigh flush dev ib0
	drop_caches
	python3 "$HOSTILE" snap > "$NUMS-$mode.before" || return 1
	echo "$SECONDS" > "$NUMS-$mode.t0"
	ethstat rx_packets > "$NUMS-$mode.rx0"
	hw_counters "$NUMS-$mode.hw0"
	note "$mode before: $(tr '\n' ' ' < "$NUMS-$mode.before")"
	rm -f $STOP
	# The series (eth0 and rxe0 counters, the driver's queue depths and
	# fallbacks, the real peer's connections, once a second) tells a send
	# queue stalled behind the link from one stalled in the driver, next
	# to the console's time stamps and the attacker's ping log.
	python3 "$HOSTILE" sample --stop $STOP --interval 1 --peer-qpn "$PEER_QPN" \
		--series "$IPNG_OUT/hostile-$mode-series.txt" > "$NUMS-$mode.sample" 2>&1 &
	echo $! > "$NUMS-$mode.pid"
	perf_start "$mode"
}

# IPNG_HOSTILE_PERF=1: a system-wide CPU profile of the victim during the
# flood (perf's software clock, call graphs), reported by symbol and by
# thread to hostile-<mode>-perf.txt. Off by default: it costs CPU.
perf_start() {
	[ "${IPNG_HOSTILE_PERF:-0}" = 1 ] || return 0
	perf record -q -a -g -F 49 -e cpu-clock -o "/tmp/hostile-$1.perf" \
		> /tmp/hostile-perf.log 2>&1 &
	echo $! > "$NUMS-$1.perfpid"
}

perf_stop() {
	local f=$IPNG_OUT/hostile-$1-perf.txt pid
	[ -r "$NUMS-$1.perfpid" ] || return 0
	pid=$(val "$NUMS-$1.perfpid")
	kill -INT "$pid"
	wait_for 60 gone "$pid" || { echo "perf record still running"; return 1; }
	{
		perf report -q -i "/tmp/hostile-$1.perf" --stdio --no-children \
			--sort comm --percent-limit 1 -g none
		echo
		perf report -q -i "/tmp/hostile-$1.perf" --stdio --no-children \
			--sort sym --percent-limit 0.5 -g none
		echo
		perf report -q -i "/tmp/hostile-$1.perf" --stdio --children \
			--sort sym --percent-limit 3 -g none
		echo
		perf report -q -i "/tmp/hostile-$1.perf" --stdio --no-children \
			--sort comm,sym --percent-limit 0.3 -g none
		echo
		perf report -q -i "/tmp/hostile-$1.perf" --stdio --children \
			--sort comm,sym --percent-limit 2 -g none
	} > "$f" 2>&1
	rm -f "/tmp/hostile-$1.perf"
}

victim_collect() {
	local mode=$1 pid
	# Polled every $VICTIM_POLL s: each look is a path walk over 9p
	# (uncached), which cost the victim 8% of its CPU at 5 a second and
	# still 4% at one a second in profiles of the flood.
	IPNG_POLL=$VICTIM_POLL vm_fetch "$PEER" "hostile-$mode-done" 900 > /dev/null || return 1
	# Let the attempts the flood started end (REJs, REP timeouts).
	sleep 10
	: > $STOP
	pid=$(val "$NUMS-$mode.pid")
	wait_for 60 gone "$pid" || { echo "sampler still running"; return 1; }
	perf_stop "$mode"
	grep -q '^samples=' "$NUMS-$mode.sample" || { cat "$NUMS-$mode.sample"; return 1; }
	echo "$SECONDS" > "$NUMS-$mode.t1"
	drop_caches
	python3 "$HOSTILE" snap > "$NUMS-$mode.after" || return 1
	note "$mode during (max_ = largest sample): $(tr '\n' ' ' < "$NUMS-$mode.sample")"
	note "$mode after: $(tr '\n' ' ' < "$NUMS-$mode.after")"
}

# numbers MODE: BEFORE, SAMPLE, AFTER and RX0 from the files.
numbers() {
	load BEFORE "$NUMS-$1.before" && load SAMPLE "$NUMS-$1.sample" &&
		load AFTER "$NUMS-$1.after" && RX0=$(val "$NUMS-$1.rx0")
}

t_flood_arrived() {
	local rx1 hw
	numbers "$1" || return 1
	rx1=$(ethstat rx_packets)
	echo "rx_packets $RX0 -> $rx1; arp allocs ${BEFORE[arp_allocs]} -> ${AFTER[arp_allocs]}" \
		"(table_fulls ${BEFORE[arp_table_fulls]} -> ${AFTER[arp_table_fulls]});" \
		"nd allocs ${BEFORE[nd_allocs]} -> ${AFTER[nd_allocs]}" \
		"(table_fulls ${BEFORE[nd_table_fulls]} -> ${AFTER[nd_table_fulls]})"
	hw_counters "$NUMS-$1.hw1"
	hw=$(hw_deltas "$NUMS-$1.hw0" "$NUMS-$1.hw1")
	echo "$HWC changed:$hw"
	echo "ib0 drop and error counters not zero: $(ethtool -S ib0 |
		grep -E 'drop|err|miss|fail' | grep -v ': 0$' | tr -s ' \n' ' ')"
	note "$1 rx_packets $RX0 -> $rx1; rdma port counters:$hw"
	echo "$((rx1 - RX0)) of $((2 * COUNT)) flood packets counted in rx_packets"
	# The ARP and NS floods (the REQs come on QP1, not ib0). Open defect:
	# under the flood a send queue of the victim's rxe stalls for seconds
	# (its sends then do not even flush in ERROR), the detector resets the
	# channels and what arrives meanwhile is lost (86% arrived in connected
	# mode on 2026-12-01); this case fails on it.
	[ $((rx1 - RX0)) -ge $((2 * COUNT * 9 / 10)) ] ||
		{ echo "fewer than 90% of the $((2 * COUNT)) packets arrived"; return 1; }
}

t_replies_made() {
	numbers "$1" || return 1
	# Each request the kernel took made a neighbour (as far as its tables let it).
	local a=$((AFTER[arp_allocs] - BEFORE[arp_allocs])) n=$((AFTER[nd_allocs] - BEFORE[nd_allocs]))
	echo "new ARP neighbours $a, new ND neighbours $n; driver neighbours at most ${SAMPLE[max_neigh]}"
	[ "$a" -ge $((COUNT / 2)) ] && [ "$n" -ge $((COUNT / 2)) ]
}

t_conn_bound() {
	numbers "$1" || return 1
	echo "connections (/proc) at most ${SAMPLE[max_connections]:-?}, cap $MAXCONN"
	[ "${SAMPLE[max_connections]:-999999}" -le "$MAXCONN" ]
}

# The table holds the connections (up, being made; at most max_connections)
# and failed outgoing entries kept as markers, at most MARKERS_MAX more.
t_table_bound() {
	numbers "$1" || return 1
	echo "debugfs cm lines at most ${SAMPLE[max_cm_lines]} (tx ${SAMPLE[max_cm_tx]}," \
		"rx ${SAMPLE[max_cm_rx]}, forged QPNs ${SAMPLE[max_cm_forged]}," \
		"connections up or being made ${SAMPLE[max_cm_counted]}), cap $MAXCONN + $MARKERS_MAX markers"
	[ "${SAMPLE[max_cm_counted]}" -le "$MAXCONN" ] &&
		[ "${SAMPLE[max_cm_lines]}" -le $((MAXCONN + MARKERS_MAX)) ]
}

# Connected mode: the forged addresses share the attacker's GID, whose
# connections are all rejected; failed markers hold its per-GID slots
# (PER_PEER) until they expire (CM_RETRY s), so the victim sends at most
# PER_PEER REQs per CM_RETRY s over the round, not one per forged address
# (2000 here: nearly that many before markers held the slots, and the
# debug guest, making and destroying an RC QP for each, answered pings up
# to 20 s late). Slack: the real peer's connections, made again.
t_connect_attempts() {
	local t0 t1 reqs bound
	numbers "$1" || return 1
	t0=$(val "$NUMS-$1.t0")
	t1=$(val "$NUMS-$1.t1")
	reqs=$((AFTER[cm_reqs_sent] - BEFORE[cm_reqs_sent]))
	bound=$((PER_PEER * ((t1 - t0) / CM_RETRY + 1) + 8))
	echo "CM REQs sent in $((t1 - t0)) s: $reqs (bound $bound: $PER_PEER per $CM_RETRY s + 8)"
	note "$1 CM REQs sent in $((t1 - t0)) s: $reqs (bound $bound)"
	[ "${BEFORE[cm_reqs_sent]}" -ge 0 ] || { echo "no cm_tx_msgs/req counter"; return 1; }
	# The first forged addresses are tried (the cap is not reached yet).
	[ "$reqs" -ge 1 ] && [ "$reqs" -le "$bound" ]
}

t_neigh_bound() {
	numbers "$1" || return 1
	echo "driver neighbours at most ${SAMPLE[max_neigh]} (cap $NEIGH_MAX), paths at most ${SAMPLE[max_paths]}"
	[ "${SAMPLE[max_neigh]}" -le $NEIGH_MAX ] && [ "${SAMPLE[max_paths]}" -le 16 ]
}

t_memory() {
	local b p a
	numbers "$1" || return 1
	b=$(kmem BEFORE)
	p=$(kmem SAMPLE max_)
	a=$(kmem AFTER)
	echo "Slab+Percpu+VmallocUsed: before $b kB, largest sample $p kB (+$((p - b)))," \
		"after drop_caches $a kB (+$((a - b))); bound +$MEM_BOUND_KB kB" \
		"(Slab ${BEFORE[slab_kb]} -> ${AFTER[slab_kb]}, Percpu ${BEFORE[percpu_kb]} -> ${AFTER[percpu_kb]}," \
		"VmallocUsed ${BEFORE[vmallocused_kb]} -> ${AFTER[vmallocused_kb]})"
	note "$1 memory: before $b kB, peak sample $p kB, after $a kB"
	[ $((a - b)) -lt $MEM_BOUND_KB ] && [ $((p - b)) -lt $MEM_BOUND_KB ]
}

# Lines of the cm table for forged QPNs (0x800000 and up: first hex digit
# 8 to f).
cm_forged_lines() { cm_count '^(tx|rx) qpn 0x[89a-f][0-9a-f]{5}'; }
# shellcheck disable=SC2317  # called through wait_for
no_forged() { [ "$(cm_forged_lines)" = 0 ]; }

# rx lines of the cm table but the real peer's.
foreign_rx() {
	local l n=0 lines

	mapfile -t lines < /sys/kernel/debug/ipoib_ng/ib0/cm
	for l in "${lines[@]}"; do
		[[ $l == "rx qpn 0x${PEER_QPN} "* ]] && continue
		[[ $l == 'rx '* ]] && n=$((n + 1))
	done
	echo $n
}

# After the REQs with malformed private data (and before the well-formed
# ones): no incoming connection but the real peer's.
t_malformed_refused() {
	local n rc=0
	IPNG_POLL=$VICTIM_POLL vm_fetch "$PEER" "hostile-$MODE-malformed" 900 > /dev/null || rc=1
	sleep 2
	n=$(foreign_rx)
	vm_publish "hostile-$MODE-malformed-checked" 1
	[ $rc = 0 ] || return 1
	echo "incoming connections other than the peer's after $((3 * MALFORMED)) malformed REQs: $n"
	note "$MODE rx entries after malformed REQs: $n"
	[ "$n" = 0 ]
}

# Forged entries go: failed attempts and half-open ones within
# cm_idle_timeout (60 s) and the REP timeouts, plus slack.
t_drained() {
	local t0=$SECONDS
	if ! wait_for 150 no_forged; then
		echo "$(cm_forged_lines) entries for forged QPNs left after 150 s; connections $(stats_conns)"
		return 1
	fi
	echo "forged entries gone after $((SECONDS - t0)) s"
}

stats_conns() { proc_stat connections; }

scan_since() {
	dmesg | sed -n "/$1/,\$p" > "/tmp/$1.log"
	"$IPNG_REPO/tests/vm/scan-logs.sh" "/tmp/$1.log"
}

# --- attacker (vm2) ---

VICTIM='' OWN='' PEER_QPN=''

inject() {
	local what=$1 out rc=0
	shift
	out=$(timeout 600 python3 "$HOSTILE" "$what" --victim "$VICTIM" --own "$OWN" "$@" 2>&1) || rc=$?
	printf '%s\n' "$out"
	note "$MODE $what $*: $out"
	return $rc
}

# The ARP and NS floods and the REQs with malformed private data, in one
# python3 process (each start with pyverbs costs 10-30 s in the debug
# guest): the steps' reports go to $FLOOD_OUT, step_ok checks each.
FLOOD_OUT=/tmp/hostile-flood.out
flood() {
	local rc=0 k c=(--victim "$VICTIM" --own "$OWN") steps
	steps=(arp "${c[@]}" --victim-ip "$PEERIP" --base-ip "$FORGED_IP"
	       --count "$COUNT" --pps "$PPS"
	       + ns "${c[@]}" --victim-ip6 "$PEERIP6" --base-ip6 "$FORGED_IP6"
	       --count "$COUNT" --pps "$NS_PPS")
	for k in zero short-buf random; do
		steps+=(+ req "${c[@]}" --pdata "$k" --count "$MALFORMED" --pps 50
			--seed $((RANDOM + 1)))
	done
	timeout 900 python3 "$HOSTILE" "${steps[@]}" > $FLOOD_OUT 2>&1 || rc=$?
	# Outside any check (stdout is the KTAP file); step_ok judges each step.
	note "$MODE floods and malformed REQs: exit $rc"
}

# step_ok N: print step N's report (from the flood), true if it passed.
step_ok() {
	local l out='' in=0
	while IFS= read -r l; do
		[[ $l == "step $1: "* ]] && in=1
		[ $in = 1 ] || continue
		out+="$l"$'\n'
		[[ $l == "step $1: rc="* ]] && break
	done < $FLOOD_OUT
	printf '%s' "$out"
	note "$MODE ${out//$'\n'/ }"
	[[ $out == *"step $1: rc=0"$'\n' ]]
}

# Every reply with its time stamp (-D) and every request not answered
# before the next went out (-O), beside the victim's series.
PINGLOG=''
ping_start() {
	PINGLOG=$IPNG_OUT/hostile-$MODE-ping.txt
	ping -D -O -i 1 -W 5 "$PEERIP" > "$PINGLOG" 2>&1 &
	echo $! > /tmp/hostile-ping.pid
}

# Every echo request of the pings that ran during the flood answered
# (the last one may still have been on its way).
t_ping_during() {
	local pid out tx rx
	pid=$(val /tmp/hostile-ping.pid)
	kill -INT "$pid"
	wait_for 10 gone "$pid" || { echo "ping did not stop"; return 1; }
	out=$(tail -3 "$PINGLOG")
	echo "$out"
	note "$MODE ping during the flood: ${out//$'\n'/ }"
	[[ $out =~ ([0-9]+)\ packets\ transmitted,\ ([0-9]+)\ received ]] || return 1
	tx=${BASH_REMATCH[1]} rx=${BASH_REMATCH[2]}
	[ "$tx" -ge 10 ] && [ "$rx" -ge $((tx - 1)) ]
}

t_iperf_after() {
	local out
	if [ "$ME" = 1 ]; then
		timeout 90 iperf3 -s -1 -B "$MYIP" > /tmp/hostile-iperf-s.out 2>&1 &
		echo $! > /tmp/hostile-iperf.pid
		vm_barrier "hostile-$MODE-iperf" 120 || return 1
		wait "$(val /tmp/hostile-iperf.pid)" || { tail -5 /tmp/hostile-iperf-s.out; return 1; }
		return 0
	fi
	vm_barrier "hostile-$MODE-iperf" 120 || return 1
	sleep 2
	out=$(timeout 60 iperf3 -c "$PEERIP" -t 5 2>&1) || { printf '%s\n' "$out" | tail -5; return 1; }
	out=$(printf '%s\n' "$out" | grep receiver)
	echo "$out"
	note "$MODE iperf3 after the flood: $out"
	[[ $out =~ \ ([0-9.]+)\ [KMG]bits/sec ]]
}

check() {
	echo "# hostile: $1 at ${SECONDS}s" >&2
	ktap_check "$@"
}

# round MODE: one attack with ib0 in MODE on both sides.
round() {
	MODE=$1
	check "${MODE}_mode_set" ip link set ib0 type ipoib mode "$MODE"
	vm_barrier "hostile-$MODE-mode" 120
	if [ "$ME" = 1 ]; then
		echo "ipng-hostile-$MODE" > /dev/kmsg
		check "${MODE}_victim_baseline" victim_prepare "$MODE"
		vm_barrier "hostile-$MODE-go" 300
		check "${MODE}_malformed_cm_reqs_refused" t_malformed_refused
		check "${MODE}_victim_numbers" victim_collect "$MODE"
		check "${MODE}_flood_arrived" t_flood_arrived "$MODE"
		check "${MODE}_victim_answered_forged_requests" t_replies_made "$MODE"
		check "${MODE}_connections_within_max_connections" t_conn_bound "$MODE"
		check "${MODE}_cm_table_within_max_connections" t_table_bound "$MODE"
		[ "$MODE" = connected ] &&
			check "${MODE}_connect_attempts_per_gid_bounded" t_connect_attempts "$MODE"
		check "${MODE}_neigh_and_path_tables_bounded" t_neigh_bound "$MODE"
		check "${MODE}_kernel_memory_growth_below_64MiB" t_memory "$MODE"
	else
		vm_barrier "hostile-$MODE-go" 300
		ping_start
		flood
		check "${MODE}_arp_flood_${COUNT}_forged_senders" step_ok 1
		check "${MODE}_ns_flood_${COUNT}_forged_senders" step_ok 2
		local k i=3
		for k in zero short-buf random; do
			check "${MODE}_cm_req_private_data_${k}" step_ok $i
			i=$((i + 1))
		done
		vm_publish "hostile-$MODE-malformed" 1
		vm_fetch 1 "hostile-$MODE-malformed-checked" 900 > /dev/null
		check "${MODE}_cm_req_half_open_${REQS}" inject req --pdata valid \
			--count "$REQS" --pps 50 --seed $((RANDOM + 1))
		check "${MODE}_ping_answered_during_flood" t_ping_during
		vm_publish "hostile-$MODE-done" 1
	fi
	vm_barrier "hostile-$MODE-after" 300
	check "${MODE}_ping_after_flood" ping_each 5 "$PEERIP"
	check "${MODE}_iperf3_after_flood" t_iperf_after
	if [ "$ME" = 1 ]; then
		[ "$MODE" = connected ] && check "${MODE}_forged_connections_go_away" t_drained
		check "${MODE}_kernel_log_clean" scan_since "ipng-hostile-$MODE"
		echo 4096 > $PARAM/max_connections
		ip neigh flush dev ib0
	fi
	vm_barrier "hostile-$MODE-end" 300
}

ktap_begin ipoib_ng_e2e_hostile
check "setup_ib0_up" setup
vm_publish hostile-addr "$(hex_addr)"
vm_barrier hostile-up 180
PEER_HEX=$(vm_fetch "$PEER" hostile-addr 60)
PEER_QPN=${PEER_HEX:2:6}
if [ "$ME" = 2 ]; then
	VICTIM=$PEER_HEX
	OWN=$(hex_addr)
	check "pyverbs_available" python3 -c 'import pyverbs.device'
fi
note "count $COUNT pps $PPS ns_pps $NS_PPS reqs $REQS max_connections $MAXCONN"

for m in ${MODES//,/ }; do
	round "$m"
done

check "module_unloads" rmmod ipoib_ng
ktap_end
