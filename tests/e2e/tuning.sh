#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "tuning", run on both VMs: what an operator tunes with
# ethtool and what it shows. ethtool -i and the link settings; channels
# (-l/-L), rings (-g/-G) and interrupt moderation (-c/-C): defaults, every
# accepted value read back in ethtool, /proc and sysfs, every refused value
# changing nothing; ethtool -S with its per-channel counters, which add up
# to the totals and agree with ip -s link, sysfs and /proc, exactly, for a
# known number of pings, before and after a channel change; a TCP stream
# that must survive every change made on both ends while it runs; software
# moderation's hold-offs under load; and recovery from stalled
# send completions (debugfs tx_stall) by the driver's stuck-queue
# detector. IPv6 is off on ib0 so that the link carries only the tests'
# own packets. KTAP on stdout.
set -u
# shellcheck source=tests/vm/guest-lib.sh disable=SC1091
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
NET=/sys/class/net
PROC=/proc/net/ipoib
DBG=/sys/kernel/debug/ipoib_ng
RATE=/sys/class/infiniband/rxe0/ports/1/rate
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
MYIP=10.10.0.$ME
PEERIP=10.10.0.$PEER
PINGS=50
# The fixed load of the moderation test: one TCP stream, seconds.
COAL_SECS=8
# Contract limits (ipoib_moder.h and the ring rules).
RING_MIN=64
RING_LIMIT=8192
RX_RING_DEF=512
TX_RING_DEF=256
USECS_MAX=10000
FRAMES_MAX=4096
# The global counters of ethtool -S, in order; then per channel c the
# ch<c>_ counters below.
GLOBALS=(rx_packets rx_bytes tx_packets tx_bytes rx_drop_short
	rx_drop_unknown_type rx_drop_own_mcast rx_drop_nomem
	rx_completion_errors tx_drop_no_path tx_drop_resolve_queue_full
	tx_drop_bad_header tx_drop_too_big tx_drop_post_failed
	tx_completion_errors tx_drop_ring_full tx_drop_cm_queue tx_cm_fallback
	cm_cap_reached tx_drop_not_joined rx_drop_backlog tx_timeouts
	qp_errors recoveries cm_peer_cap_reached port_events mcast_rejoins)
PER_CH=(rx_packets rx_bytes tx_packets tx_bytes napi_polls cq_events holdoffs)
# The netdev totals /proc repeats from dev_get_stats().
TOTALS=(rx_packets tx_packets rx_bytes tx_bytes rx_dropped tx_dropped
	rx_errors tx_errors)
# The TCP stream that the changes must survive (tests/e2e/xfer.py stream
# and sink) runs until both sides are done with their changes (100-155 s
# under TCG with KASAN, depending on the host) and RECOVER_SECS more, in
# which it must carry data again; STREAM_MAX bounds it.
XFER=$IPNG_REPO/tests/e2e/xfer.py
STREAM_PORT=5202
STREAM_STOP=/tmp/tun-stream.stop
RECOVER_SECS=15
STREAM_MAX=600
# Set once ib0 exists.
CH_MAX=0 RING_MAX=0 PEER_HEX=''

# Under TCG with KASAN every program started costs about half a second:
# files are read with builtins where possible.

# note TEXT: a measurement for the record (tuning-notes.txt in the
# results; passing tests print nothing).
note() { printf '%s\n' "$*" >> "$IPNG_OUT/tuning-notes.txt"; }

expect_eq() {
	if [ "$1" != "$2" ]; then
		echo "$3: got '$1', want '$2'"
		return 1
	fi
}

# stat_val NAME: the value of "NAME: value" in /proc/net/ipoib/ib0/stats.
stat_val() { proc_stat "$1"; }

# sect_val TEXT SECTION NAME: the value after "NAME:" in ethtool output
# TEXT, within SECTION (max: "Pre-set maximums", cur: "Current hardware
# settings", '': anywhere). 1 if there is no such line.
sect_val() {
	local _sv
	sect_val_v _sv "$@" || return 1
	printf '%s' "$_sv"
}

# sect_val_v VAR TEXT SECTION NAME: sect_val into VAR (empty if there is
# no such line), without the subshell of $(sect_val ...).
sect_val_v() {
	local sec='' l
	printf -v "$1" '%s' ''
	while IFS= read -r l; do
		case $l in
		'Pre-set maximums:') sec=max; continue ;;
		'Current hardware settings:') sec=cur; continue ;;
		esac
		[ -n "$3" ] && [ "$sec" != "$3" ] && continue
		if [[ $l =~ ^[[:space:]]*"$4":[[:space:]]*(.*)$ ]]; then
			printf -v "$1" '%s' "${BASH_REMATCH[1]}"
			return 0
		fi
	done <<<"$2"
	return 1
}

is_num() { [[ $1 =~ ^[0-9]+$ ]]; }

# sorted_txqs: the names of ib0's transmit queues in sysfs.
sorted_txqs() {
	local _st
	sorted_txqs_v _st
	printf '%s' "$_st"
}

# sorted_txqs_v VAR: sorted_txqs into VAR, with builtins only.
sorted_txqs_v() {
	local q n out='' idx=()
	for q in "$NET"/ib0/queues/tx-*; do
		[ -e "$q" ] && idx[${q##*/tx-}]=1
	done
	# An indexed array lists its indices in ascending order.
	for n in "${!idx[@]}"; do
		out+="tx-$n "
	done
	printf -v "$1" '%s' "$out"
}

want_txqs() {
	local i out=''
	for ((i = 0; i < $1; i++)); do
		out+="tx-$i "
	done
	printf '%s' "$out"
}

# settings: every tunable as ethtool and /proc report it, and the queues,
# on one line (to compare before and after a refused change).
# Three programs and no subshell of its own (each costs a fifth of a
# second or more in the debug guests, and a run of refusals calls this
# once per refusal).
settings() {
	local l g c v line='' f
	l=$(ethtool -l ib0 2>&1)
	g=$(ethtool -g ib0 2>&1)
	c=$(ethtool -c ib0 2>&1)
	sect_val_v v "$l" cur Combined; line+="combined=$v "
	sect_val_v v "$g" cur RX; line+="rx_ring=$v "
	sect_val_v v "$g" cur TX; line+="tx_ring=$v "
	sect_val_v v "$c" '' 'Adaptive RX'; line+="adaptive_rx_tx=${v//[[:space:]]/} "
	for f in rx-usecs rx-frames tx-usecs tx-frames; do
		sect_val_v v "$c" '' $f; line+="$f=$v "
	done
	for f in channels send_queue_size recv_queue_size; do
		proc_stat_v v $f; line+="proc_$f=$v "
	done
	sorted_txqs_v v
	printf '%s\n' "${line}txqs=$v "
}

# refused ARGS...: "ethtool ARGS" fails and changes nothing.
# Each settings() starts three programs (seconds in the debug guests): a
# run of refusals takes the settings after one refusal for the settings
# before the next (REFUSED_PREV, emptied by refusals_begin).
REFUSED_PREV=''
refusals_begin() { REFUSED_PREV=''; }
refused() {
	local before after out
	before=${REFUSED_PREV:-$(settings)}
	REFUSED_PREV=''
	if out=$(ethtool "$@" 2>&1); then
		echo "ethtool $* succeeded (want failure): $out"
		return 1
	fi
	after=$(settings)
	if [ "$before" != "$after" ]; then
		echo "ethtool $* failed ($out) but changed settings:"
		echo "before: $before"
		echo "after:  $after"
		return 1
	fi
	REFUSED_PREV=$after
	echo "ethtool $*: refused ($out)"
}

# --- channels ---

# channels_are N: -l, /proc and the transmit queues all say N channels.
channels_are() {
	local l rc=0
	l=$(ethtool -l ib0) || { echo "ethtool -l failed: $l"; return 1; }
	expect_eq "$(sect_val "$l" cur Combined)" "$1" "ethtool -l current combined" || rc=1
	expect_eq "$(sect_val "$l" max Combined)" "$CH_MAX" "ethtool -l maximum combined" || rc=1
	expect_eq "$(stat_val channels)" "$1" "/proc channels" || rc=1
	expect_eq "$(sorted_txqs)" "$(want_txqs "$1")" "queues/tx-*" || rc=1
	return $rc
}

set_channels() {
	local out
	out=$(ethtool -L ib0 combined "$1" 2>&1) ||
		{ echo "ethtool -L ib0 combined $1 failed: $out"; return 1; }
	channels_are "$1"
}

# --- rings ---

rings_are() {
	local g rc=0
	g=$(ethtool -g ib0) || { echo "ethtool -g failed: $g"; return 1; }
	expect_eq "$(sect_val "$g" cur RX)" "$1" "ethtool -g current RX" || rc=1
	expect_eq "$(sect_val "$g" cur TX)" "$2" "ethtool -g current TX" || rc=1
	expect_eq "$(stat_val recv_queue_size)" "$1" "/proc recv_queue_size" || rc=1
	expect_eq "$(stat_val send_queue_size)" "$2" "/proc send_queue_size" || rc=1
	return $rc
}

# set_rings RX TX WANT_RX WANT_TX
set_rings() {
	local out
	out=$(ethtool -G ib0 rx "$1" tx "$2" 2>&1) ||
		{ echo "ethtool -G ib0 rx $1 tx $2 failed: $out"; return 1; }
	rings_are "$3" "$4"
}

# --- coalescing ---

# coal_is ADAPTIVE_RX ADAPTIVE_TX RX_USECS RX_FRAMES TX_USECS TX_FRAMES
coal_is() {
	local c rc=0 ad
	c=$(ethtool -c ib0) || { echo "ethtool -c failed: $c"; return 1; }
	ad=$(sect_val "$c" '' 'Adaptive RX')
	expect_eq "${ad//[[:space:]]/}" "$1TX:$2" "ethtool -c Adaptive RX/TX" || rc=1
	expect_eq "$(sect_val "$c" '' rx-usecs)" "$3" rx-usecs || rc=1
	expect_eq "$(sect_val "$c" '' rx-frames)" "$4" rx-frames || rc=1
	expect_eq "$(sect_val "$c" '' tx-usecs)" "$5" tx-usecs || rc=1
	expect_eq "$(sect_val "$c" '' tx-frames)" "$6" tx-frames || rc=1
	[ $rc = 0 ] || printf '%s\n' "$c"
	return $rc
}

# set_coal "ARGS" EXPECTED...: ethtool -C ib0 ARGS, then coal_is EXPECTED.
set_coal() {
	local args out
	read -r -a args <<<"$1"
	shift
	out=$(ethtool -C ib0 "${args[@]}" 2>&1) ||
		{ echo "ethtool -C ib0 ${args[*]} failed: $out"; return 1; }
	coal_is "$@"
}

default_coal() { set_coal "adaptive-rx off adaptive-tx off rx-usecs 0 rx-frames 0 tx-usecs 0 tx-frames 0" off off 0 0 0 0; }

# --- counters ---

# load_stats: ethtool -S into ES (name -> value) and NCH (channels listed).
declare -A ES
NCH=0
load_stats() {
	local k v out
	ES=()
	NCH=0
	out=$(ethtool -S ib0) || { echo "ethtool -S failed: $out"; return 1; }
	while IFS=': ' read -r k v; do
		is_num "$v" || continue
		ES[$k]=$v
		if [[ $k =~ ^ch([0-9]+)_rx_packets$ ]] && [ $((BASH_REMATCH[1] + 1)) -gt $NCH ]; then
			NCH=$((BASH_REMATCH[1] + 1))
		fi
	done <<<"$out"
}

# ch_sum NAME: sum of ch<c>_NAME over the channels in ES.
ch_sum() {
	local c s=0
	for ((c = 0; c < NCH; c++)); do
		s=$((s + ${ES[ch${c}_$1]:-0}))
	done
	echo $s
}

# ip_link_packets: "TX RX" packets of ip -s link.
ip_link_packets() {
	local l next='' tx='' rx='' f
	while IFS= read -r l; do
		if [ -n "$next" ]; then
			read -r -a f <<<"$l"
			if [ "$next" = rx ]; then rx=${f[1]}; else tx=${f[1]}; fi
			next=''
			continue
		fi
		[[ $l =~ ^[[:space:]]*RX: ]] && next=rx
		[[ $l =~ ^[[:space:]]*TX: ]] && next=tx
	done <<<"$(ip -s -s link show dev ib0)"
	echo "$tx $rx"
}

# snap: one line of tx/rx packets and bytes as ethtool's totals, the sums
# of its channels, ip -s link (packets) and /proc report them.
SNAP_WHAT=(ethtool_tx_packets ethtool_rx_packets ethtool_tx_bytes
	ethtool_rx_bytes channels_tx_packets channels_rx_packets
	channels_tx_bytes channels_rx_bytes ip_tx_packets ip_rx_packets
	proc_tx_packets proc_rx_packets)
snap() {
	load_stats || return 1
	echo "${ES[tx_packets]:-x} ${ES[rx_packets]:-x} ${ES[tx_bytes]:-x}" \
		"${ES[rx_bytes]:-x} $(ch_sum tx_packets) $(ch_sum rx_packets)" \
		"$(ch_sum tx_bytes) $(ch_sum rx_bytes) $(ip_link_packets)" \
		"$(stat_val tx_packets) $(stat_val rx_packets)"
}

# deltas_are S0 S1 WANT: every packet count of snapshot S1 is WANT more
# than in S0 (bytes: more, and the totals' and channels' alike).
deltas_are() {
	local a b i d rc=0
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	echo "before: $1"
	echo "after:  $2"
	for i in "${!SNAP_WHAT[@]}"; do
		if ! is_num "${a[i]:-}" || ! is_num "${b[i]:-}"; then
			echo "${SNAP_WHAT[i]}: no value"
			rc=1
			continue
		fi
		d=$((b[i] - a[i]))
		case ${SNAP_WHAT[i]} in
		*_bytes) [ $d -gt 0 ] || { echo "${SNAP_WHAT[i]} delta $d"; rc=1; } ;;
		*) expect_eq $d "$3" "${SNAP_WHAT[i]} delta" || rc=1 ;;
		esac
	done
	expect_eq $((b[2] - a[2])) $((b[6] - a[6])) "tx_bytes delta, totals vs channels" || rc=1
	expect_eq $((b[3] - a[3])) $((b[7] - a[7])) "rx_bytes delta, totals vs channels" || rc=1
	return $rc
}

# The totals of a snapshot (ethtool, ip, /proc) are those of another.
totals_kept() {
	local a b i rc=0
	read -r -a a <<<"$1"
	read -r -a b <<<"$2"
	echo "before: $1"
	echo "after:  $2"
	for i in 0 1 2 3 8 9 10 11; do
		expect_eq "${b[i]:-}" "${a[i]:-}" "${SNAP_WHAT[i]} across the change" || rc=1
	done
	return $rc
}

# --- setup and the tests ---

setup() {
	insmod "$KO" && wait_for 10 test -e $NET/ib0 || return 1
	sysctl -qw net.ipv6.conf.ib0.disable_ipv6=1 &&
		ip addr add "$MYIP/24" dev ib0 && ip link set ib0 up &&
		wait_for 10 carrier_up && wait_for 10 oper_up
}

t_ethtool_i() {
	local out rc=0
	out=$(ethtool -i ib0) || { echo "$out"; return 1; }
	printf '%s\n' "$out"
	expect_eq "$(sect_val "$out" '' driver)" ipoib_ng driver || rc=1
	expect_eq "$(sect_val "$out" '' bus-info)" rxe0:port1 bus-info || rc=1
	return $rc
}

# Speed = the port's width x lane speed, which is also what the port's
# sysfs rate shows ("2.5 Gb/sec (1X SDR)").
t_ethtool_link() {
	local out rc=0 speed rate want
	out=$(ethtool ib0) || { echo "$out"; return 1; }
	printf '%s\n' "$out"
	rate=$(val $RATE)
	echo "port rate: $rate"
	want=$(awk '{ printf "%d", $1 * 1000 }' <<<"$rate")
	speed=$(sect_val "$out" '' Speed)
	if ! [[ $speed =~ ^([0-9]+)Mb/s$ ]] || [ "${BASH_REMATCH[1]}" = 0 ]; then
		echo "Speed '$speed': want a non-zero Mb/s value"
		rc=1
	fi
	expect_eq "$speed" "${want}Mb/s" "Speed (port rate $rate)" || rc=1
	expect_eq "$(sect_val "$out" '' Duplex)" Full Duplex || rc=1
	expect_eq "$(sect_val "$out" '' 'Link detected')" yes "Link detected" || rc=1
	return $rc
}

# Maximum = min(completion vectors, online CPUs, 16); rxe has one
# completion vector per possible CPU.
expected_channels() {
	local online possible vec m
	online=$(getconf _NPROCESSORS_ONLN)
	possible=$(val /sys/devices/system/cpu/possible)
	# "0-1" or "0"
	vec=$((${possible##*-} + 1))
	m=$vec
	[ "$online" -lt $m ] && m=$online
	[ 16 -lt "$m" ] && m=16
	echo "# online CPUs $online, rxe completion vectors $vec: maximum $m" >&2
	echo "$m"
}

# The default is the maximum.
t_channels_default() { channels_are "$CH_MAX"; }

t_channels_set() {
	local n rc=0
	for ((n = 1; n <= CH_MAX; n++)); do
		set_channels "$n" || rc=1
	done
	return $rc
}

t_channels_refused() {
	local rc=0 a
	refusals_begin
	for a in "combined 0" "combined $((CH_MAX + 1))" "combined 100000" \
		 "rx 1" "tx 1"; do
		# shellcheck disable=SC2086  # "combined N" is two words
		refused -L ib0 $a || rc=1
	done
	channels_are "$CH_MAX" || rc=1
	return $rc
}

# Ring maximum: 8192, or less where the device has fewer work requests
# or CQ entries (then a power of two no larger; ethtool's value is taken).
expected_ring_max() {
	local dev qpwr cqe cap
	dev=$(ibv_devinfo -v -d rxe0)
	qpwr=$(sed -n 's/^[[:space:]]*max_qp_wr:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$dev")
	cqe=$(sed -n 's/^[[:space:]]*max_cqe:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$dev")
	cap=$RING_LIMIT
	[ "${qpwr:-0}" -lt "$cap" ] && cap=${qpwr:-0}
	[ "${cqe:-0}" -lt "$cap" ] && cap=${cqe:-0}
	echo "# rxe0 max_qp_wr $qpwr max_cqe $cqe: ring limit $cap" >&2
	echo "$cap"
}

t_rings_default() {
	local g rc=0 m
	g=$(ethtool -g ib0) || { echo "$g"; return 1; }
	printf '%s\n' "$g"
	m=$(sect_val "$g" max RX)
	expect_eq "$(sect_val "$g" max TX)" "$m" "TX maximum = RX maximum" || rc=1
	if [ "$RING_CAP" = $RING_LIMIT ]; then
		expect_eq "$m" $RING_LIMIT "RX maximum" || rc=1
	elif ! is_num "$m" || [ "$m" -lt $RING_MIN ] || [ "$m" -gt "$RING_CAP" ] ||
	     [ $((m & (m - 1))) != 0 ]; then
		echo "RX maximum '$m': want a power of two in $RING_MIN..$RING_CAP"
		rc=1
	fi
	rings_are $RX_RING_DEF $TX_RING_DEF || rc=1
	return $rc
}

t_rings_set() {
	local rc=0
	set_rings 1024 512 1024 512 || rc=1
	# Not a power of two: rounded up.
	set_rings 300 100 512 128 || rc=1
	set_rings 1000 200 1024 256 || rc=1
	set_rings $RING_MIN $RING_MIN $RING_MIN $RING_MIN || rc=1
	set_rings "$RING_MAX" "$RING_MAX" "$RING_MAX" "$RING_MAX" || rc=1
	set_rings $RX_RING_DEF $TX_RING_DEF $RX_RING_DEF $TX_RING_DEF || rc=1
	return $rc
}

t_rings_refused() {
	local rc=0 a
	refusals_begin
	for a in "rx $((RING_MIN - 1))" "tx $((RING_MIN - 1))" "rx 0" "tx 0" \
		 "rx $((RING_MAX + 1))" "tx $((RING_MAX * 2))" \
		 "rx 1024 tx $((RING_MAX + 1))"; do
		# shellcheck disable=SC2086  # "rx N" is two words
		refused -G ib0 $a || rc=1
	done
	rings_are $RX_RING_DEF $TX_RING_DEF || rc=1
	return $rc
}

t_coal_default() { coal_is off off 0 0 0 0; }

t_coal_set() {
	local rc=0
	set_coal "adaptive-rx on rx-usecs 100" on off 100 0 0 0 || rc=1
	set_coal "adaptive-rx off" off off 100 0 0 0 || rc=1
	set_coal "rx-frames 16 tx-usecs 50 tx-frames 32" off off 100 16 50 32 || rc=1
	set_coal "adaptive-tx on" off on 100 16 50 32 || rc=1
	set_coal "rx-usecs $USECS_MAX rx-frames $FRAMES_MAX tx-usecs $USECS_MAX tx-frames $FRAMES_MAX" \
		off on $USECS_MAX $FRAMES_MAX $USECS_MAX $FRAMES_MAX || rc=1
	default_coal || rc=1
	return $rc
}

t_coal_refused() {
	local rc=0 a
	# Something not default first, so that "nothing changed" means more.
	set_coal "rx-usecs 20 tx-frames 8" off off 20 0 0 8 || rc=1
	refusals_begin
	for a in "rx-usecs $((USECS_MAX + 1))" "tx-usecs $((USECS_MAX + 1))" \
		 "rx-frames $((FRAMES_MAX + 1))" "tx-frames $((FRAMES_MAX + 1))" \
		 "rx-usecs 4294967295" "rx-usecs 50 tx-usecs $((USECS_MAX + 1))"; do
		# shellcheck disable=SC2086  # "rx-usecs N" is two words
		refused -C ib0 $a || rc=1
	done
	coal_is off off 20 0 0 8 || rc=1
	default_coal || rc=1
	return $rc
}

# The names of ethtool -S: the global counters, then N channels' worth.
t_stats_names() {
	local names want c n
	names=$(ethtool -S ib0 | awk -F: 'NR > 1 { gsub(/[[:space:]]/, "", $1); print $1 }' |
		tr '\n' ' ')
	want="${GLOBALS[*]} "
	for ((c = 0; c < $1; c++)); do
		for n in "${PER_CH[@]}"; do
			want+="ch${c}_$n "
		done
	done
	expect_eq "$names" "$want" "ethtool -S names with $1 channels"
}

# On a quiet link: /proc, sysfs, ip -s link and ethtool agree.
t_counters_agree_totals() {
	local rc=0 f p ipl
	load_stats || return 1
	for f in "${TOTALS[@]}"; do
		p=$(stat_val "$f")
		expect_eq "$p" "$(val "$NET/ib0/statistics/$f")" "/proc $f vs sysfs" || rc=1
		is_num "$p" || { echo "/proc $f '$p'"; rc=1; }
	done
	for f in rx_packets rx_bytes tx_packets tx_bytes; do
		expect_eq "${ES[$f]:-}" "$(val "$NET/ib0/statistics/$f")" "ethtool $f vs sysfs" || rc=1
	done
	read -r -a ipl <<<"$(ip_link_packets)"
	expect_eq "${ipl[0]:-}" "${ES[tx_packets]:-}" "ip -s link TX packets vs ethtool" || rc=1
	expect_eq "${ipl[1]:-}" "${ES[rx_packets]:-}" "ip -s link RX packets vs ethtool" || rc=1
	[ "${ES[rx_packets]:-0}" -gt 0 ] || { echo "no packet received yet"; rc=1; }
	return $rc
}

# channels_within_totals: in the last ethtool -S read (load_stats), no
# channel sum is above its total.
channels_within_totals() {
	local f sum rc=0
	for f in rx_packets rx_bytes tx_packets tx_bytes; do
		sum=$(ch_sum $f)
		[ "$sum" -le "${ES[$f]:-0}" ] ||
			{ echo "sum of ch*_$f $sum above $f ${ES[$f]:-}"; rc=1; }
	done
	return $rc
}

# ... and ethtool's totals cover its channels: they are the channels' sums
# plus what channels removed by the -L tests above had counted.
t_counters_agree() {
	local rc=0
	t_counters_agree_totals || rc=1
	channels_within_totals || rc=1
	return $rc
}

# agree_settled CHECK: the sources are read one after the other, so a
# stray packet between two reads (the peer's own test traffic) makes them
# differ for a moment: retry quietly for up to 15 s, then report one
# reading in full.
agree_settled() {
	wait_for 15 "$1" > /dev/null 2>&1
	"$1"
}

lladdr_of_hex() { sed 's/../&:/g; s/:$//' <<<"$1"; }

t_neigh_permanent() {
	[ ${#PEER_HEX} = 40 ] || { echo "peer address '$PEER_HEX'"; return 1; }
	ip neigh replace "$PEERIP" lladdr "$(lladdr_of_hex "$PEER_HEX")" dev ib0 nud permanent
}

# After the sender's pings: wait until /proc counted them (the last reply
# may still be on its way to the counters), settle, snapshot.
proc_moved() {
	local a
	read -r -a a <<<"$1"
	[ $(($(stat_val tx_packets) - a[10])) -ge "$PINGS" ] &&
		[ $(($(stat_val rx_packets) - a[11])) -ge "$PINGS" ]
}

settled_snap() {
	wait_for 10 proc_moved "$1"
	sleep 1
	snap
}

# After a channel change: each total at least the sum of its channels
# (a removed channel's counts stay in the totals).
t_totals_cover_channels() {
	load_stats && channels_within_totals
}

# --- traffic across every change ---

# shellcheck disable=SC2317  # called through wait_for
listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }
# shellcheck disable=SC2317  # called through wait_for
job_done() { ! kill -0 "$1" 2>/dev/null; }

# neigh_of_peer: "<lladdr> <state>" of the peer's entry.
neigh_of_peer() {
	local f
	read -r -a f <<<"$(ip neigh show "$PEERIP" dev ib0)"
	local i
	for i in "${!f[@]}"; do
		if [ "${f[i]}" = lladdr ]; then
			echo "${f[i + 1]} ${f[-1]}"
			return
		fi
	done
}

# ping_peer N: ping_each N to the peer; on a loss, what the driver counted
# (every drop or error counter that is not zero, the per-channel packet
# counts) and the kernel's neighbour entry.
ping_peer() {
	local k c bad='' chans='' out rc=0
	out=$(ping_each "$1" "$PEERIP") || rc=1
	echo "$out"
	# Kept for every run: how slow the replies were even when all came.
	note "ping_peer $1 at ${SECONDS} s: ${out//$'\n'/ | }"
	[ $rc = 1 ] || return 0
	load_stats > /dev/null
	for k in "${!ES[@]}"; do
		case $k in
		ch*) ;;
		*drop*|*errors|tx_timeouts|tx_cm_fallback)
			[ "${ES[$k]}" = 0 ] || bad+=" $k=${ES[$k]}" ;;
		esac
	done
	for ((c = 0; c < NCH; c++)); do
		chans+=" ch$c tx ${ES[ch${c}_tx_packets]:-?} rx ${ES[ch${c}_rx_packets]:-?};"
	done
	echo "counted:${bad:- no drop, no error};$chans"
	echo "neighbour: $(ip neigh show "$PEERIP" dev ib0)"
	return 1
}

record_state() {
	ip addr show dev ib0 > "/tmp/tun-addr.$1"
	ip route show dev ib0 > "/tmp/tun-route.$1"
	neigh_of_peer > "/tmp/tun-neigh.$1"
}

# change PID WHAT CMD...: one change of t_changes, timed, and whether the
# stream (PID) still ran when it was done.
change() {
	local pid=$1 what=$2 t=$SECONDS rc=0
	shift 2
	"$@" || rc=1
	note "change '$what': $((SECONDS - t)) s, status $rc"
	if job_done "$pid"; then
		echo "the stream had ended when '$what' was done: not every change happened under traffic"
		rc=1
	fi
	sleep 1
	return $rc
}

# Each change, its result read back; both VMs make them while the stream
# runs (vm2 sends, vm1 receives).
t_changes() {
	local pid=$1 rc=0 t=$SECONDS t0
	load_stats > /dev/null || return 1
	t0=${ES[tx_timeouts]:-}
	sleep 3
	change "$pid" "-L combined 1" set_channels 1 || rc=1
	change "$pid" "-L combined $CH_MAX" set_channels "$CH_MAX" || rc=1
	change "$pid" "-G rx 1024 tx 512" set_rings 1024 512 1024 512 || rc=1
	# The largest receive ring takes seconds to fill (9 s on the debug
	# kernel): longer than the stall detector waits for a send.
	change "$pid" "-G rx $RING_MAX tx 512" set_rings "$RING_MAX" 512 "$RING_MAX" 512 || rc=1
	change "$pid" "-G rx $RX_RING_DEF tx $TX_RING_DEF" \
		set_rings $RX_RING_DEF $TX_RING_DEF $RX_RING_DEF $TX_RING_DEF || rc=1
	change "$pid" "-C rx-usecs 100" set_coal "rx-usecs 100" off off 100 0 0 0 || rc=1
	change "$pid" "-C adaptive-rx on" set_coal "adaptive-rx on" on off 100 0 0 0 || rc=1
	# Under load DIM picks its own values; -c still shows the configured.
	sleep 1
	coal_is on off 100 0 0 0 || { echo "(after 2 s of traffic with adaptive-rx)"; rc=1; }
	change "$pid" "-C back to defaults" default_coal || rc=1
	note "changes under traffic: $((SECONDS - t)) s in all"
	# A change is no stuck send queue: no reset may have followed one.
	load_stats > /dev/null || return 1
	if [ -z "$t0" ] || [ "${ES[tx_timeouts]:-}" != "$t0" ]; then
		echo "tx_timeouts ${t0:-?} -> ${ES[tx_timeouts]:-?}: the stall detector reset the channels after a change"
		dmesg | grep -E 'made no progress|timed out' | tail -3
		rc=1
	fi
	return $rc
}

# The connection never broke (both ends exit 0), and it carried data,
# also after the last change. The rate is only noted: under TCG a change
# stops the datapath for seconds and TCP backs off (0.5-5 Mbit/s on
# average across the changes).
t_stream_survived() {
	local sec n total=0 after=0 first=0 last=0 secs
	if [ "$ME" = 2 ]; then
		[ "$CLIENT_RC" = 0 ] ||
			{ echo "stream sender exit status $CLIENT_RC:"; tail -5 /tmp/tun-stream.out; return 1; }
		echo "stream sender ended cleanly"
		return 0
	fi
	[ "$SERVER_RC" = 0 ] ||
		{ echo "stream receiver exit status $SERVER_RC:"; tail -5 /tmp/tun-sink.out; return 1; }
	while read -r sec n; do
		case $sec in
		total) total=$n ;;
		*[!0-9]*|'') ;;
		*)
			[ "$first" = 0 ] && first=$sec
			last=$sec
			[ "$sec" -ge "$T_DONE" ] && after=$((after + n))
			;;
		esac
	done < /tmp/tun-sink.out
	secs=$((last - first + 1))
	echo "received $total bytes in ${secs} s, $after of them after the changes"
	note "stream across the changes: $total bytes in $secs s ($((total * 8 / (secs > 0 ? secs : 1) / 1000)) kbit/s), $after bytes in the $RECOVER_SECS s after them"
	[ "$total" -gt 0 ] || { echo "the stream carried nothing"; return 1; }
	[ "$after" -gt 0 ] || { echo "nothing arrived in the $RECOVER_SECS s after the changes"; return 1; }
}

t_state_kept() {
	local rc=0 w a b
	for w in addr route; do
		if ! cmp -s "/tmp/tun-$w.0" "/tmp/tun-$w.1"; then
			echo "ip $w changed:"
			diff "/tmp/tun-$w.0" "/tmp/tun-$w.1"
			rc=1
		fi
	done
	read -r -a b <<<"$(cat /tmp/tun-neigh.0)"
	read -r -a a <<<"$(cat /tmp/tun-neigh.1)"
	echo "peer neighbour before: ${b[*]:-none}, after: ${a[*]:-none}"
	if [ -z "${a[0]:-}" ] || [ "${a[0]:-}" != "${b[0]:-}" ]; then
		echo "neighbour entry of $PEERIP lost or changed"
		rc=1
	fi
	case ${a[1]:-} in
	FAILED|INCOMPLETE|'') echo "neighbour state ${a[1]:-none}"; rc=1 ;;
	esac
	return $rc
}

# --- moderation measured: polls per received packet (vm1 receives) ---

# coal_load USECS: vm1 sets rx-usecs USECS and serves one iperf3 -t $COAL_SECS;
# prints "<polls delta> <rx_packets delta> <holdoffs delta>".
coal_load() {
	local name=coal$1 pid p0 r0 h0 rc=0
	if [ "$ME" = 2 ]; then
		vm_barrier "$name-go" 120 || return 1
		iperf3 -c "$PEERIP" -t $COAL_SECS > "/tmp/tun-$name.c" 2>&1 || { rc=1; tail -5 "/tmp/tun-$name.c"; }
		vm_publish "$name-done" 1
		return $rc
	fi
	set_coal "rx-usecs $1" off off "$1" 0 0 0 >&2 || rc=1
	timeout 120 iperf3 -s -1 -B "$MYIP" > "/tmp/tun-$name.s" 2>&1 &
	pid=$!
	wait_for 30 listening 5201 || { echo "iperf3 not listening" >&2; rc=1; }
	load_stats || rc=1
	p0=$(ch_sum napi_polls) r0=${ES[rx_packets]:-0} h0=$(ch_sum holdoffs)
	vm_barrier "$name-go" 120 || rc=1
	vm_fetch "$PEER" "$name-done" 120 > /dev/null || rc=1
	wait_for 15 job_done "$pid" || kill "$pid"
	wait "$pid" || { rc=1; tail -5 "/tmp/tun-$name.s" >&2; }
	load_stats || rc=1
	echo "$(($(ch_sum napi_polls) - p0)) $((ES[rx_packets] - r0)) $(($(ch_sum holdoffs) - h0))"
	return $rc
}

# ratio1000 POLLS PACKETS: polls per packet x 1000.
ratio1000() { echo $(($1 * 1000 / ($2 > 0 ? $2 : 1))); }

# Polls per packet at rx-usecs 0 and 100, for the record only. A hold-off
# merges only completions that arrive within it; these guests (TCG, KASAN,
# both VMs sharing the host's cores) see their packets in clumps milliseconds
# apart, so the ratio here follows the host's scheduling: across identical
# runs it ranged 0.15-0.37 at rx-usecs 0, and 100 came out lower or
# higher. The effect is asserted by KUnit (ipoib_ng_moder,
# fewer_polls: the driver's hold-off decision on a modelled clock) and
# measured by make bench on the fast kernel.
coal_record() {
	local a b
	read -r -a a <<<"$C0"
	read -r -a b <<<"$C100"
	is_num "${a[1]:-}" && is_num "${b[1]:-}" || return 0
	echo "# polls per packet x 1000: $(ratio1000 "${a[0]}" "${a[1]}") at rx-usecs 0," \
		"$(ratio1000 "${b[0]}" "${b[1]}") at 100"
	note "moderation: rx-usecs 0: ${a[*]}; rx-usecs 100: ${b[*]} (polls packets holdoffs)"
}

# The software hold-off (rxe cannot moderate its CQs) is counted.
t_holdoffs() {
	local a b rc=0
	read -r -a a <<<"$C0"
	read -r -a b <<<"$C100"
	expect_eq "${a[2]:-}" 0 "holdoffs at rx-usecs 0" || rc=1
	[ "${b[2]:-0}" -gt 0 ] || { echo "no holdoff counted at rx-usecs 100"; rc=1; }
	return $rc
}

# --- send completions stalled: the stuck-queue detector recovers ---

# shellcheck disable=SC2317  # called through wait_for
timeouts_grew() {
	load_stats > /dev/null && [ "${ES[tx_timeouts]:-0}" -gt "$1" ]
}

t_tx_stall() {
	local stall=$DBG/ib0/tx_stall t0 pid rc=0 start
	[ -w $stall ] || { echo "no $stall"; return 1; }
	expect_eq "$(val $stall)" 0 "tx_stall before" || return 1
	load_stats || return 1
	t0=${ES[tx_timeouts]}
	echo 1 > $stall || { echo "writing 1 to $stall failed"; return 1; }
	expect_eq "$(val $stall)" 1 "tx_stall after writing 1" || rc=1
	start=$SECONDS
	timeout 40 ping -f -c 3000 -s 1000 -q "$PEERIP" > /tmp/tun-flood.out 2>&1 &
	pid=$!
	if wait_for 15 timeouts_grew "$t0"; then
		echo "tx_timeouts $t0 -> ${ES[tx_timeouts]} after $((SECONDS - start)) s"
		note "tx_stall: tx_timeouts $t0 -> ${ES[tx_timeouts]} after $((SECONDS - start)) s"
	else
		echo "tx_timeouts still $t0 after 15 s"
		ethtool -S ib0 | grep -v ': 0$'
		grep -E 'send_queue|channels' $PROC/ib0/stats
		rc=1
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	tail -3 /tmp/tun-flood.out
	wait_for 5 carrier_up || { echo "no carrier"; rc=1; }
	ping_peer 3 || rc=1
	expect_eq "$(val $stall)" 0 "tx_stall after recovery" || rc=1
	load_stats > /dev/null && echo "tx_timeouts now ${ES[tx_timeouts]:-?}"
	return $rc
}

# --- main ---

ktap_begin ipoib_ng_e2e_tuning
ktap_check "setup_ib0_up_ipv6_off" setup
vm_publish tun-ib0addr "$(val $NET/ib0/address | tr -d ':')"
vm_barrier tun-up 180
PEER_HEX=$(vm_fetch "$PEER" tun-ib0addr 60)
CH_MAX=$(expected_channels)
RING_CAP=$(expected_ring_max)
RING_MAX=$RING_LIMIT
if [ "$RING_CAP" != $RING_LIMIT ]; then
	RING_MAX=$(sect_val "$(ethtool -g ib0)" max RX)
	is_num "$RING_MAX" || RING_MAX=$RING_MIN
fi

# Settings of this side only; no traffic yet.
ktap_check "ethtool_i_driver_and_bus_info" t_ethtool_i
ktap_check "ethtool_link_speed_duplex_detected" t_ethtool_link
ktap_check "channels_default_is_maximum" t_channels_default
ktap_check "ethtool_S_names_global_then_per_channel" t_stats_names "$CH_MAX"
ktap_check "channels_set_each_count" t_channels_set
ktap_check "channels_bad_counts_refused_unchanged" t_channels_refused
ktap_check "rings_default_and_maximum" t_rings_default
ktap_check "rings_set_and_rounded_up" t_rings_set
ktap_check "rings_bad_sizes_refused_unchanged" t_rings_refused
ktap_check "coalesce_defaults_zero_off" t_coal_default
ktap_check "coalesce_set_read_back" t_coal_set
ktap_check "coalesce_bad_values_refused_unchanged" t_coal_refused
vm_barrier tun-local-done 300
ktap_check "ping_after_reconfiguration" ping_all 3 "$PEERIP"

# Exact counts. The neighbours are permanent (no ARP); one side pings, so
# each side sees $PINGS packets each way. Channels changed only before
# any traffic so far, so the totals are the sums of the channels.
ktap_check "neighbour_permanent" t_neigh_permanent
vm_barrier tun-neigh 120
if [ "$ME" = 1 ]; then
	ktap_check "warm_up_ping" ping_all 1 "$PEERIP"
fi
vm_barrier tun-warm 120
sleep 1
ktap_check "counters_agree_ethtool_channels_proc_sysfs_ip" agree_settled t_counters_agree
S0=$(snap)
vm_barrier tun-snap0 120
if [ "$ME" = 1 ]; then
	ktap_check "ping_${PINGS}_from_vm1" ping_all $PINGS -i 0.05 "$PEERIP"
fi
vm_barrier tun-pinged 120
S1=$(settled_snap "$S0")
ktap_check "ping_counted_exactly_${CH_MAX}_channels" deltas_are "$S0" "$S1" $PINGS
vm_barrier tun-exact 120

# One channel: the totals stay, -S lists ch0 only, the counts still exact.
ktap_check "channels_1_on_quiet_link" set_channels 1
sleep 1
S2=$(snap)
ktap_check "channels_1_totals_kept" totals_kept "$S1" "$S2"
ktap_check "ethtool_S_names_1_channel" t_stats_names 1
ktap_check "channels_1_totals_cover_channels" t_totals_cover_channels
vm_barrier tun-one 120
if [ "$ME" = 2 ]; then
	ktap_check "ping_${PINGS}_from_vm2" ping_all $PINGS -i 0.05 "$PEERIP"
fi
vm_barrier tun-pinged-one 120
S3=$(settled_snap "$S2")
ktap_check "ping_counted_exactly_1_channel" deltas_are "$S2" "$S3" $PINGS
vm_barrier tun-exact-one 120
ktap_check "channels_back_to_maximum" set_channels "$CH_MAX"
sleep 1
S4=$(snap)
ktap_check "channels_back_totals_kept" totals_kept "$S3" "$S4"
ktap_check "ethtool_S_names_back_to_maximum" t_stats_names "$CH_MAX"
ktap_check "channels_back_totals_cover_channels" t_totals_cover_channels
ktap_check "counters_agree_with_proc_sysfs_ip_after_changes" agree_settled t_counters_agree_totals
vm_barrier tun-counted 120

# Traffic across every change, on both sides; the neighbours dynamic again.
ip neigh del "$PEERIP" dev ib0
vm_barrier tun-unperm 120
ktap_check "ping_resolves_peer_again" ping_all 2 "$PEERIP"
record_state 0
vm_barrier tun-stream-ready 180
CLIENT_RC=0 SERVER_RC=0 T_DONE=0
if [ "$ME" = 1 ]; then
	timeout $STREAM_MAX python3 "$XFER" sink "$MYIP" $STREAM_PORT $STREAM_MAX \
		> /tmp/tun-sink.out 2>&1 &
	spid=$!
	wait_for 30 listening $STREAM_PORT || echo "# stream receiver not listening" >&2
	vm_barrier tun-stream-go 120
	ktap_check "changes_during_tcp_stream_succeed" t_changes "$spid"
	vm_barrier tun-changes-done 300
	T_DONE=$EPOCHSECONDS
	vm_fetch "$PEER" tun-stream-done $((RECOVER_SECS + 300)) > /dev/null
	wait_for 60 job_done "$spid" || kill "$spid"
	wait "$spid" || SERVER_RC=$?
else
	rm -f $STREAM_STOP
	vm_barrier tun-stream-go 120
	timeout $STREAM_MAX python3 "$XFER" stream "$PEERIP" $STREAM_PORT $STREAM_STOP \
		$STREAM_MAX > /tmp/tun-stream.out 2>&1 &
	spid=$!
	ktap_check "changes_during_tcp_stream_succeed" t_changes "$spid"
	vm_barrier tun-changes-done 300
	sleep $RECOVER_SECS
	: > $STREAM_STOP
	wait "$spid" || CLIENT_RC=$?
	vm_publish tun-stream-done 1
fi
ktap_check "tcp_stream_survives_changes" t_stream_survived
vm_barrier tun-stream-end 300
record_state 1
ktap_check "addr_route_neigh_unchanged" t_state_kept
ktap_check "ping_after_changes_under_traffic" ping_peer 3
vm_barrier tun-stream-checked 120

# Moderation: vm1 receives the same load at rx-usecs 0 and 100.
C0=$(coal_load 0)
vm_barrier tun-coal0 120
C100=$(coal_load 100)
vm_barrier tun-coal100 120
if [ "$ME" = 1 ]; then
	coal_record
	ktap_check "holdoffs_counted_only_with_rx_usecs" t_holdoffs
	ktap_check "coalesce_back_to_defaults" default_coal
fi
vm_barrier tun-coal-done 120

# Stalled send completions, vm1 first, then vm2.
for v in 1 2; do
	vm_barrier "tun-stall-$v" 120
	if [ "$ME" = "$v" ]; then
		if [ -e "$DBG/ib0/tx_stall" ]; then
			ktap_check "tx_stall_detected_reset_traffic_flows" t_tx_stall
		else
			ktap_skip "tx_stall_detected_reset_traffic_flows" \
				"no debugfs tx_stall knob (a kernel without KUnit)"
		fi
	fi
done
vm_barrier tun-stall-done 180
ktap_check "ping_after_both_stalls" ping_peer 3
vm_barrier tun-end 180
ktap_check "module_unloads" rmmod ipoib_ng
ktap_end
