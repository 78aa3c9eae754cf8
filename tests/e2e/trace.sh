#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "trace", run on both VMs: the tracepoints of ipoib_ng
# (trace system ipoib_ng) and the header lines of its debugfs files.
#
# Every scenario is watched in two ways at once:
#  - tracefs: the events are enabled in /sys/kernel/tracing/events/
#    ipoib_ng/*/enable and the trace is read afterwards, for the fields
#    and the order of the events;
#  - perf, in the path and drop scenarios (each perf start costs 10-20 s in
#    a debug guest): `perf stat -a -x, -e 'ipoib_ng:*'` counts them (the
#    host's /usr/bin/perf, Debian's linux-perf, seen through the read-only
#    host root). Its window encloses the tracefs one, so each count is at
#    least the number of events in the trace. Where perf does not run in
#    the guest, the perf checks are skipped with the reason and tracefs
#    alone decides.
#
# Scenarios: every event is listed with its fields; ip link set ib0
# down/up takes the broadcast group through leaving, idle, joining and
# joined; the first ping after the paths were flushed resolves the peer's
# path (start, then done) exactly once; a ping to a neighbour set by hand
# to a GID nobody has (no MAC can be found for it) is dropped as
# tx_drop_no_path after the resolution gives up, and the event's count
# equals the move of the ethtool -S counter; in connected mode both
# connections to the peer come up and close when the mode goes back to
# datagram. IPv6 is off on ib0 so that nothing but the tests' own traffic
# makes events. KTAP on stdout.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
NET=/sys/class/net
DBG=/sys/kernel/debug/ipoib_ng
TR=/sys/kernel/tracing
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
MYIP=10.10.0.$ME
PEERIP=10.10.0.$PEER
WORK=/tmp/ipng-trace
# A neighbour nobody answers for: its GID is neither link-local (a MAC
# derived from it) nor anyone's IPv6 address, so no MAC is ever found
# and the path fails after the resolution's 5 s of asking.
BOGUS_IP=10.10.0.$((100 + ME))
BOGUS_GID=fd00:0000:0000:0000:0000:0000:dead:beef
BOGUS_LLADDR=00:00:00:99:fd:00:00:00:00:00:00:00:00:00:00:00:de:ad:be:ef
BOGUS_PINGS=3

# Every event of the system and the fields of its format (after the
# common ones), as ipoib_trace.h defines them.
declare -A FIELDS=(
	[drop]='dev reason count'
	[path_resolve_start]='dev gid'
	[path_resolve_done]='dev gid roce lid sl dmac'
	[path_resolve_fail]='dev gid err'
	[mcast_state]='dev mgid join old new error'
	[cm_connect]='dev qpn gid tx result'
	[cm_disconnect]='dev qpn gid tx reason'
)
EVENTS=(drop path_resolve_start path_resolve_done path_resolve_fail
	mcast_state cm_connect cm_disconnect)

# Set at the top level by perf_probe.
PERF_OK=0
PERF_WHY=''
PERF_PID=''

expect_eq() {
	if [ "$1" != "$2" ]; then
		echo "$3: got '$1', want '$2'"
		return 1
	fi
}

hex_addr() { tr -d ':\n' < "$NET/ib0/$1"; }
# 32 hex digits -> the GID as %pI6 prints it (eight groups of four).
gid_of_hex() { sed 's/.\{4\}/&:/g; s/:$//' <<<"$1"; }

bring_up() {
	sysctl -qw net.ipv6.conf.ib0.disable_ipv6=1 &&
		ip addr add "$MYIP/24" dev ib0 && ip link set ib0 up &&
		wait_for 10 carrier_up && wait_for 10 oper_up
}

setup() {
	mkdir -p $WORK || return 1
	if ! mountpoint -q $TR; then
		mount -t tracefs tracefs $TR || return 1
	fi
	insmod "$KO" && wait_for 10 test -e $NET/ib0 || return 1
	bring_up
}

# --- watching: tracefs and perf around one scenario ---

# perf_probe: can the host's perf count our events in this guest? Sets
# PERF_OK=1, or PERF_WHY to the reason it cannot.
perf_probe() {
	local out
	perf --version >&2 2>&1
	if ! command -v perf > /dev/null; then
		PERF_WHY="no perf in PATH"
		return
	fi
	if ! out=$(timeout 180 perf stat -a -x, -e 'ipoib_ng:drop' -- true 2>&1); then
		printf 'perf stat:\n%s\n' "$out" >&2
		PERF_WHY="perf stat fails: $(grep -m1 -v '^$' <<<"$out")"
		return
	fi
	printf 'perf stat works:\n%s\n' "$out" >&2
	PERF_OK=1
}

# perf_list: perf lists every event of the system as a tracepoint.
t_perf_list() {
	local out e rc=0
	out=$(perf list 'ipoib_ng:*' 2>&1)
	echo "$out"
	for e in "${EVENTS[@]}"; do
		grep -Eq "^ *ipoib_ng:$e +\[Tracepoint event\]" <<<"$out" ||
			{ echo "perf list: no ipoib_ng:$e"; rc=1; }
	done
	return $rc
}

# events_on ON: enable (1) or disable (0) every event of the system.
events_on() {
	local e
	for e in "${EVENTS[@]}"; do
		echo "$1" > "$TR/events/ipoib_ng/$e/enable" || return 1
	done
}

# watch_begin NAME [perf]: perf (outer window, if asked and it runs) then
# tracefs. perf's command waits on guest-lib.sh's FIFO, starting no
# program meanwhile.
watch_begin() {
	rm -f $WORK/started $WORK/stop
	PERF_PID=''
	if [ $PERF_OK = 1 ] && [ "${2:-}" = perf ]; then
		# guest-lib.sh's FIFO (the fd is inherited) times the waits.
		local nap='sleep 0.5'
		[ -n "${_IPNG_NAP_FD:-}" ] && nap="read -r -t 0.5 -u $_IPNG_NAP_FD _"
		perf stat -a -x, -o "$WORK/perf-$1.txt" -e 'ipoib_ng:*' -- \
			bash -c "touch $WORK/started; while [ ! -e $WORK/stop ]; do $nap; done; exit 0" \
			> "$WORK/perf-$1.log" 2>&1 &
		PERF_PID=$!
		# perf enables its counters before the command runs.
		wait_for 120 test -e $WORK/started ||
			echo "watch $1: perf did not start" >&2
	fi
	echo 0 > $TR/tracing_on
	: > $TR/trace
	events_on 1
	echo 1 > $TR/tracing_on
}

# watch_end NAME: tracefs off (trace kept in $WORK/trace-NAME.txt), then
# perf (counts in $WORK/perf-NAME.txt). Both go to the log.
watch_end() {
	echo 0 > $TR/tracing_on
	events_on 0
	grep -v '^#' $TR/trace > "$WORK/trace-$1.txt"
	if [ -n "$PERF_PID" ]; then
		touch $WORK/stop
		wait "$PERF_PID" || echo "watch $1: perf exit status $?" >&2
		PERF_PID=''
		sed "s/^/perf-$1: /" "$WORK/perf-$1.txt" >&2
	fi
	sed "s/^/trace-$1: /" "$WORK/trace-$1.txt" >&2
}

# tr_lines NAME EVENT [TEXT]: the trace lines of EVENT (containing TEXT).
tr_lines() { grep -F " $2: ${3:-}" "$WORK/trace-$1.txt"; }
# tr_count NAME EVENT [TEXT]: how many there are (counted without a program).
tr_count() {
	local n=0 l
	while IFS= read -r l; do
		[[ $l == *" $2: ${3:-}"* ]] && n=$((n + 1))
	done < "$WORK/trace-$1.txt"
	echo "$n"
}

# perf_count NAME EVENT: what perf counted of ipoib_ng:EVENT.
perf_count() {
	awk -F, -v e="ipoib_ng:$2" '$3 == e { print $1 }' "$WORK/perf-$1.txt"
}

# perf_covers NAME EVENT...: perf counted each EVENT at least as often as
# the trace shows it (its window encloses the trace's), and at least once.
perf_covers() {
	local name=$1 e p t rc=0
	shift
	if [ $PERF_OK != 1 ]; then
		echo "perf not used: $PERF_WHY"
		return 0
	fi
	[ -e "$WORK/perf-$name.txt" ] || { echo "perf did not watch $name"; return 1; }
	for e in "$@"; do
		p=$(perf_count "$name" "$e")
		t=$(tr_count "$name" "$e")
		if ! [[ $p =~ ^[0-9]+$ ]] || [ "$p" -lt "$t" ] || [ "$p" -lt 1 ]; then
			echo "perf ipoib_ng:$e: '$p', trace: $t"
			rc=1
		fi
	done
	return $rc
}

# in_order FILE PATTERN...: lines matching the PATTERNs (grep -E) appear
# in FILE in this order.
in_order() {
	local f=$1 p n last=0
	shift
	for p in "$@"; do
		n=$(grep -nE "$p" "$f" | awk -F: -v l="$last" '$1 > l { print $1; exit }')
		if [ -z "$n" ]; then
			echo "no '$p' after line $last of $f"
			return 1
		fi
		last=$n
	done
}

# --- the tests ---

# Every event is in tracefs with its fields, and no other one.
t_events_listed() {
	local e f fmt rc=0
	for e in "${EVENTS[@]}"; do
		grep -qx "ipoib_ng:$e" $TR/available_events ||
			{ echo "ipoib_ng:$e not in available_events"; rc=1; }
		[ -w "$TR/events/ipoib_ng/$e/enable" ] ||
			{ echo "no $TR/events/ipoib_ng/$e/enable"; rc=1; }
		fmt=$(cat "$TR/events/ipoib_ng/$e/format") || { rc=1; continue; }
		for f in ${FIELDS[$e]}; do
			grep -Eq "field:[^;]*[ *]$f(\[[0-9]+\])?;" <<<"$fmt" ||
				{ echo "ipoib_ng:$e: no field $f"; rc=1; }
		done
	done
	expect_eq "$(grep -c '^ipoib_ng:' $TR/available_events)" ${#EVENTS[@]} \
		"events of ipoib_ng" || rc=1
	return $rc
}

# The debugfs files start with a line naming their columns.
t_debugfs_headers() {
	local rc=0
	expect_eq "$(head -1 $DBG/ib0/paths)" '# gid state age queue dmac sl' paths || rc=1
	expect_eq "$(head -1 $DBG/ib0/neigh)" '# qpn gid flags ah idle_s age_s' neigh || rc=1
	expect_eq "$(head -1 $DBG/ib0/mcast)" '# mgid state join [broadcast] backoff_ms error' \
		mcast || rc=1
	expect_eq "$(head -1 $DBG/ib0/cm)" '# dir qpn gid state rc_qpn mtu idle_s queued age_s' \
		cm || rc=1
	return $rc
}

bcast_joined() {
	grep -q "^$BCAST state joined join full broadcast " $DBG/ib0/mcast
}
no_groups() { [ "$(grep -vc '^#' $DBG/ib0/mcast)" = 0 ]; }
# Every group the netdev lists (ip maddr) plus the broadcast group, joined.
groups_settled() {
	local want
	want=$(( $(ip maddr show dev ib0 | grep -c '^[[:space:]]*link') + 1 ))
	[ "$(grep -c ' state joined ' $DBG/ib0/mcast)" = "$want" ] &&
		[ "$(grep -vc '^#' $DBG/ib0/mcast)" = "$want" ]
}

t_down_up() {
	ip link set ib0 down || return 1
	wait_for 30 no_groups || { echo "groups left after down:"; cat $DBG/ib0/mcast; return 1; }
	ip link set ib0 up || return 1
	wait_for 20 oper_up || { echo "ib0 not up"; return 1; }
	wait_for 30 groups_settled || { echo "groups after up:"; cat $DBG/ib0/mcast; return 1; }
	sleep 1
}

# The broadcast group: left on down, joined again on up, in this order.
t_mcast_events() {
	local f=$WORK/trace-mcast pre
	pre=" mcast_state: dev=ib0 mgid=$BCAST join="
	tr_lines mcast mcast_state "dev=ib0 mgid=$BCAST " > $f
	cat $f
	in_order $f "${pre}full old=joined new=leaving error=0\$" \
		"${pre}none old=leaving new=idle error=0\$" \
		"${pre}full old=idle new=joining error=0\$" \
		"${pre}full old=joining new=joined error=0\$" || return 1
	# Every event changes the state.
	! tr_lines mcast mcast_state | grep -E ' old=([a-z]+) new=\1 ' || return 1
}

path_valid() { grep -q "^$PEER_GID state=valid " $DBG/ib0/paths; }

t_first_ping() {
	ping_all 1 "$PEERIP" || return 1
	wait_for 10 path_valid || { echo "no valid path:"; cat $DBG/ib0/paths; return 1; }
	sleep 1
}

# The peer's path: resolution started and done once each, in this order,
# on RoCE (no LID); no resolution failed.
t_path_events() {
	local rc=0 f=$WORK/trace-path-peer
	grep -E " path_resolve_[a-z]+: dev=ib0 gid=$PEER_GID( |\$)" $WORK/trace-path.txt > $f
	cat $f
	expect_eq "$(grep -c ' path_resolve_start: ' $f)" 1 "resolution starts" || rc=1
	expect_eq "$(grep -c ' path_resolve_done: ' $f)" 1 "resolutions done" || rc=1
	in_order $f " path_resolve_start: dev=ib0 gid=$PEER_GID\$" \
		" path_resolve_done: dev=ib0 gid=$PEER_GID link=roce lid=0x0000 sl=[0-9]+ dmac=52:54:00:00:00:0$PEER\$" ||
		rc=1
	expect_eq "$(tr_count path path_resolve_fail)" 0 "failed resolutions" || rc=1
	perf_covers path path_resolve_start path_resolve_done || rc=1
	return $rc
}

ethstat() { ethtool -S ib0 | sed -n "s/^ *$1: //p"; }
bogus_failed() { grep -q "^$BOGUS_GID state=failed " $DBG/ib0/paths; }

# Pings nobody answers: they wait for the path, which fails; then they
# are dropped. The counter is read inside the watched window.
t_bogus_ping() {
	ethstat tx_drop_no_path > $WORK/drop-before
	if ping -c $BOGUS_PINGS -i 0.2 -W 1 "$BOGUS_IP"; then
		echo "$BOGUS_IP answered"
		return 1
	fi
	wait_for 30 bogus_failed || { echo "path not failed:"; cat $DBG/ib0/paths; return 1; }
	sleep 1
	ethstat tx_drop_no_path > $WORK/drop-after
}

# The drop events of reason tx_drop_no_path add up to what ethtool -S
# counted, which is every ping sent; perf counted as many drop events
# as the trace holds (nothing else drops, so the windows agree).
t_drop_events() {
	local rc=0 before after sum p
	read -r before < $WORK/drop-before
	read -r after < $WORK/drop-after
	tr_lines drop drop
	tr_lines drop path_resolve_fail
	expect_eq "$((after - before))" $BOGUS_PINGS "tx_drop_no_path delta" || rc=1
	sum=$(tr_lines drop drop "dev=ib0 reason=tx_drop_no_path count=" |
		sed 's/.* count=//' | awk '{ s += $1 } END { print s + 0 }')
	expect_eq "$sum" "$((after - before))" "sum of the drop events' counts" || rc=1
	expect_eq "$(tr_count drop drop)" "$(tr_count drop drop "dev=ib0 reason=tx_drop_no_path ")" \
		"drop events of other reasons: none" || rc=1
	expect_eq "$(tr_count drop path_resolve_fail "dev=ib0 gid=$BOGUS_GID err=-")" 1 \
		"failed resolution of $BOGUS_GID" || rc=1
	if [ $PERF_OK = 1 ]; then
		p=$(perf_count drop drop)
		expect_eq "$p" "$(tr_count drop drop)" "perf ipoib_ng:drop count" || rc=1
	else
		echo "perf not used: $PERF_WHY"
	fi
	return $rc
}

# cm_line DIR STATE: our DIR connection with the peer in STATE.
cm_line() {
	grep -E "^$1 qpn 0x$PEER_QPN gid $PEER_GID state $2 rc_qpn 0x[0-9a-f]{6} mtu [0-9]+ idle_s [0-9]+ queued [0-9]+ age_s [0-9]+\$" \
		$DBG/ib0/cm
}
both_live() { cm_line tx live > /dev/null && cm_line rx live > /dev/null; }
no_conns() { [ "$(grep -vc '^#' $DBG/ib0/cm)" = 0 ]; }

t_cm_up() {
	ping_all 3 "$PEERIP" || return 1
	wait_for 30 both_live || { echo "not both live:"; cat $DBG/ib0/cm; return 1; }
	cat $DBG/ib0/cm
}

t_cm_down() {
	ip link set ib0 type ipoib mode datagram || return 1
	wait_for 30 no_conns || { echo "connections left:"; cat $DBG/ib0/cm; return 1; }
	sleep 1
}

# Both connections with the peer: up (result 0), then ours closed by the
# mode change, the peer's by its disconnect request.
t_cm_events() {
	local rc=0 peer="qpn=0x$PEER_QPN gid=$PEER_GID"
	tr_lines cm cm_connect
	tr_lines cm cm_disconnect
	expect_eq "$(tr_count cm cm_connect "dev=ib0 dir=tx $peer result=0")" 1 \
		"tx connection up" || rc=1
	expect_eq "$(tr_count cm cm_connect "dev=ib0 dir=rx $peer result=0")" 1 \
		"rx connection up" || rc=1
	expect_eq "$(tr_count cm cm_disconnect "dev=ib0 dir=tx $peer reason=close")" 1 \
		"tx connection closed by the mode change" || rc=1
	expect_eq "$(tr_count cm cm_disconnect "dev=ib0 dir=rx $peer reason=dreq")" 1 \
		"rx connection closed by the peer's DREQ" || rc=1
	expect_eq "$(tr_count cm cm_connect)" 2 "cm_connect events" || rc=1
	expect_eq "$(tr_count cm cm_disconnect)" 2 "cm_disconnect events" || rc=1
	in_order "$WORK/trace-cm.txt" " cm_connect: dev=ib0 dir=tx $peer " \
		" cm_disconnect: dev=ib0 dir=tx $peer " || rc=1
	return $rc
}

ktap_begin ipoib_ng_e2e_trace
ktap_check "setup_ib0_up_ipv6_off_tracefs" setup
vm_publish trace-addr "$(hex_addr address)"
vm_barrier trace-up 180
PEER_HEX=$(vm_fetch "$PEER" trace-addr 60)
PEER_QPN=${PEER_HEX:2:6}
PEER_GID=$(gid_of_hex "${PEER_HEX:8:32}")
BCAST_HEX=$(hex_addr broadcast)
BCAST=$(gid_of_hex "${BCAST_HEX:8:32}")

ktap_check "tracefs_lists_every_event_with_its_fields" t_events_listed
ktap_check "debugfs_files_start_with_a_header_line" t_debugfs_headers
perf_probe
if [ $PERF_OK = 1 ]; then
	ktap_check "perf_lists_every_event" t_perf_list
else
	echo "# trace: perf does not run here ($PERF_WHY): tracefs only" >&2
	ktap_skip "perf_lists_every_event" "perf does not run in the guest"
fi

# The multicast state machine across down and up (both VMs at once).
vm_barrier trace-mcast 120
watch_begin mcast
ktap_check "link_down_up" t_down_up
watch_end mcast
ktap_check "mcast_state_leave_and_join_in_order" t_mcast_events

# The paths were flushed by the down; the first ping resolves again.
ip neigh flush dev ib0
watch_begin path perf
vm_barrier trace-path 120
ktap_check "first_ping_after_flush" t_first_ping
vm_barrier trace-path-done 120
watch_end path
ktap_check "path_resolve_start_then_done_once" t_path_events

# A neighbour with a GID nobody has.
ip neigh replace "$BOGUS_IP" lladdr $BOGUS_LLADDR dev ib0 nud permanent
watch_begin drop perf
ktap_check "ping_to_unresolvable_gid_dropped" t_bogus_ping
watch_end drop
ktap_check "drop_events_match_ethtool_tx_drop_no_path" t_drop_events
ip neigh del "$BOGUS_IP" dev ib0
vm_barrier trace-drop-done 120

# Connected mode on both VMs: connections up, then closed.
ktap_check "mode_connected" ip link set ib0 type ipoib mode connected
watch_begin cm
vm_barrier trace-cm 120
ktap_check "ping_makes_connections_both_ways" t_cm_up
vm_barrier trace-cm-live 120
ktap_check "mode_datagram_closes_them" t_cm_down
vm_barrier trace-cm-done 120
watch_end cm
ktap_check "cm_connect_and_cm_disconnect_both_directions" t_cm_events

vm_barrier trace-end 180
ktap_check "module_unloads" rmmod ipoib_ng
ktap_end
