#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "faults", run on both VMs: allocation failures injected
# (failslab and fail_page_alloc, debug kernel) into what an operator does
# to ib0 on vm1, while vm2 is a plain connected-mode peer: module load
# (interface creation), ip link set up (open), ethtool -L and -G, the mode
# switch through sysfs and through ip link, a ping that has to resolve its
# path and make a connection (the transmit path runs in the pinging task),
# and, for the work that runs in kernel workers (connection setup, address
# handles, multicast joins), short windows in which the kworkers are the
# failing tasks (at most one failure each).
#
# Only the operation's task fails: task-filter=Y and /proc/self/make-it-fail
# set in a subshell that then execs the operation. times=1 (one failure per
# round); each round has a different `space` (bytes of allocations that
# still succeed first), spread between what the same program needs without
# reaching the driver and what the whole operation needs (both measured
# first, with a `space` too large to run out), so that the rounds walk
# through the allocations of the operation. verbose=2: each failure prints
# its stack, from which faults.py names the allocation site per round
# (faults-sites.txt in the results). The harness's log scan ignores these.
#
# After every round: the command ended (no hang; 120 s) and, if a failure
# was injected and it failed, with an error; the interface is as before or
# as asked (state, channels, rings, mode); the same operation without
# injection then works and the peer answers a ping. At the end the module
# unloads and the kernel log since the start is clean (kmemleak is read by
# the harness after the script). KTAP on stdout.
#
# Environment: IPNG_FAULTS_ROUNDS (failslab rounds per operation, default
# 3 as in make check; make long runs 8), IPNG_FAULTS_PAGE_ROUNDS
# (fail_page_alloc rounds, default 2; make long: 4),
# IPNG_FAULTS_OPS (comma-separated subset of: insmod,open,channels,rings,
# mode_sysfs,mode_iplink,xmit,workers; default all but mode_iplink, which
# make long adds: the switch itself only sets a flag, as through sysfs).
set -u
# shellcheck source=tests/vm/guest-lib.sh disable=SC1091
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
SITES=$IPNG_REPO/tests/e2e/faults.py
NET=/sys/class/net
DBGFS=/sys/kernel/debug
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
MYIP=10.13.0.$ME
PEERIP=10.13.0.$PEER
ROUNDS_SLAB=${IPNG_FAULTS_ROUNDS:-3}
ROUNDS_PAGE=${IPNG_FAULTS_PAGE_ROUNDS:-2}
OPS=${IPNG_FAULTS_OPS:-insmod,open,channels,rings,mode_sysfs,xmit,workers}
BIG=1000000000
OUT=/tmp/faults.out
MARK=ipng-faults-round:

val() {
	local v=''
	read -r v < "$1" 2>/dev/null
	printf '%s' "$v"
}

note() { printf '%s\n' "$*" >> "$IPNG_OUT/faults-notes.txt"; }

has_ib0() { [ -e $NET/ib0 ]; }
no_ib0() { [ ! -e $NET/ib0 ]; }
loaded() { [ -e /sys/module/ipoib_ng ]; }
is_up() { local f; f=$(val $NET/ib0/flags); [ -n "$f" ] && (( f & 1 )); }
pingok() { ping -c 1 -W 5 "$PEERIP" > /dev/null 2>&1; }
# shellcheck disable=SC2317  # called through wait_for
ping_soon() { wait_for 30 pingok; }

# bring_up: address, IPv6 off, up, carrier.
bring_up() {
	echo 1 > /proc/sys/net/ipv6/conf/ib0/disable_ipv6
	ip addr add "$MYIP/24" dev ib0 2>/dev/null
	ip link set ib0 up && wait_for 15 carrier_up
}

# --- fault injection ---

fi_set() { echo "$3" > "$DBGFS/$1/$2"; }

fi_setup() {
	local a
	for a in failslab fail_page_alloc; do
		[ -d "$DBGFS/$a" ] || { echo "no $DBGFS/$a"; return 1; }
		fi_set $a times 0 && fi_set $a task-filter Y && fi_set $a verbose 2 &&
			fi_set $a probability 100 && fi_set $a interval 1 &&
			fi_set $a space 0 && fi_set $a ignore-gfp-wait N || return 1
	done
	# Not user memory (page faults of the programs), but order-0 pages.
	fi_set fail_page_alloc ignore-gfp-highmem Y && fi_set fail_page_alloc min-order 0
}

# arm ALLOC SPACE: one failure after SPACE bytes of allocations.
arm() { fi_set "$1" space "$2" && fi_set "$1" times 1; }
disarm() { fi_set failslab times 0; fi_set fail_page_alloc times 0; }
# injected ALLOC: a failure was injected since arm (times went to 0).
injected() { [ "$(val "$DBGFS/$1/times")" = 0 ]; }

# The failing task must not touch the 9p root: an allocation failure in
# 9p's clunk (when the last reference to a file of the root goes, e.g. a
# library mapped by the program, at its exit) leaves the guest's 9p client
# broken (every later open of that file fails with EINVAL: seen with ping's
# libunistring). So the programs the rounds run, their libraries, the
# dynamic loader and the module file are copied to tmpfs once (stage) and
# started from there; nothing of the root is opened by the failing task.
FI=/tmp/faults-bin
LDSO=$FI/ld-linux-x86-64.so.2
# Six program starts in all (ldd, a shell script, and one cp per library
# took 109 starts, 86 s): the host's loader lists each program's libraries
# and one cp copies everything (cp follows the symbolic links it is given:
# insmod arrives as kmod, under its own name).
stage() {
	local p path line lib files=() loader
	local -A seen=()
	loader=$(readlink -e /lib64/ld-linux-x86-64.so.2) || return 1
	mkdir -p $FI || return 1
	for p in insmod ip ethtool ping; do
		path=$(command -v $p) || return 1
		files+=("$path")
		while read -r line; do
			lib=${line#*=> }
			lib=${lib%% (*}
			[[ $lib == /* ]] || continue
			[ -n "${seen[${lib##*/}]:-}" ] && continue
			seen[${lib##*/}]=1
			files+=("$lib")
		done < <("$loader" --list "$path")
	done
	[ -n "${seen[${LDSO##*/}]:-}" ] || return 1
	cp "${files[@]}" "$KO" $FI/ || return 1
	[ -x "$LDSO" ]
}

# fail_run CMD...: CMD as a task that fails allocations, its output in
# $OUT, its status in RC (124 if it was still running after 120 s and
# had to be killed).
RC=0
fail_run() {
	local pid wd
	(
		echo 1 > /proc/self/make-it-fail || exit 99
		# A shell function (a write of the subshell's own) runs here.
		if declare -F "$1" > /dev/null; then "$@"; exit; fi
		# A staged program (argv[0] keeps its name: kmod reads it).
		if [ -x "$FI/$1" ]; then
			exec "$LDSO" --library-path $FI --argv0 "$1" "$FI/$1" "${@:2}"
		fi
		exec "$@"
	) > $OUT 2>&1 < /dev/null &
	pid=$!
	( sleep 120; kill -9 "$pid" ) > /dev/null 2>&1 &
	wd=$!
	RC=0
	wait "$pid" || RC=$?
	if kill "$wd" 2>/dev/null; then
		wait "$wd" 2>/dev/null
	else
		RC=124
	fi
}

# sysfs_write FILE VALUE: for fail_run (the write is the subshell's own).
sysfs_write() { echo "$2" > "$1"; }

# used ALLOC FUNC: what ALLOC hands to the failing task of FUNC (one of
# the *_base and *_op functions below, which run their command through
# fail_run), in bytes for failslab and pages for fail_page_alloc (the units
# of `space`), with a budget that cannot run out.
used() {
	local a=$1 left
	arm "$a" $BIG
	"$2" > /dev/null 2>&1
	left=$(val "$DBGFS/$a/space")
	disarm
	echo $((BIG - left))
}

# --- the operations: pre (state before), base (the same program doing
# nothing to the driver), op (under injection), check (consistent after
# it), redo (without injection; must work), post (back to the pre state).

C0=1 C1=2 RX0=512 TX0=256 RX1=1024 TX1=512

channels() {
	local out
	out=$(ethtool -l ib0 2>/dev/null) || return 1
	[[ $out =~ Current\ hardware\ settings:.*Combined:[[:space:]]*([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}
rings() {
	local out rx tx
	out=$(ethtool -g ib0 2>/dev/null) || return 1
	out=${out#*Current hardware settings:}
	[[ $out =~ RX:[[:space:]]*([0-9]+) ]] && rx=${BASH_REMATCH[1]}
	[[ $out =~ TX:[[:space:]]*([0-9]+) ]] && tx=${BASH_REMATCH[1]}
	echo "${rx:-?}/${tx:-?}"
}
mode() { val $NET/ib0/mode; }

# insmod: the module is loaded and its interface created.
insmod_pre() { ! loaded || rmmod ipoib_ng; }
insmod_base() { fail_run insmod "$KO" max_connections=bogus; }
insmod_op() { fail_run insmod "$KO"; }
insmod_check() {
	if [ "$RC" = 0 ]; then
		loaded || { echo "insmod succeeded, no module"; return 1; }
		# Loaded: an interface that exists must work.
		if has_ib0 || wait_for 5 has_ib0; then
			if ! { bring_up && ping_soon; }; then
				echo "insmod succeeded, ib0 does not work"
				return 1
			fi
			echo "(interface works)"
		else
			echo "(loaded without ib0)"
		fi
		rmmod ipoib_ng || { echo "rmmod failed after the round"; return 1; }
		no_ib0 || { echo "ib0 still there after rmmod"; return 1; }
	else
		! loaded || { echo "insmod failed ($RC) but the module is loaded"; return 1; }
		no_ib0 || { echo "insmod failed but ib0 exists"; return 1; }
	fi
}
insmod_redo() { insmod "$KO" && wait_for 10 has_ib0 && bring_up && ping_soon; }
insmod_post() { rmmod ipoib_ng; }

# open: ip link set ib0 up from down.
open_pre() { loaded || { insmod "$KO" && wait_for 10 has_ib0 && bring_up; } || return 1; ip link set ib0 down; }
open_base() { fail_run ip link show dev ib0; }
open_op() { fail_run ip link set ib0 up; }
open_check() {
	if [ "$RC" = 0 ]; then
		is_up || { echo "ip link set up succeeded, ib0 not up"; return 1; }
	else
		! is_up || { echo "ip link set up failed ($RC), ib0 is up"; return 1; }
	fi
}
open_redo() { ip link set ib0 up && wait_for 15 carrier_up && ping_soon; }
open_post() { ip link set ib0 down; }

# channels: ethtool -L ib0 combined C1 from C0, ib0 up.
up_pre() { loaded || { insmod "$KO" && wait_for 10 has_ib0; } || return 1; is_up || bring_up; }
channels_pre() {
	up_pre || return 1
	[ "$(channels)" = "$C0" ] || ethtool -L ib0 combined $C0
}
channels_base() { fail_run ethtool -l ib0; }
channels_op() { fail_run ethtool -L ib0 combined $C1; }
channels_check() {
	local c
	c=$(channels)
	if [ "$RC" = 0 ]; then
		[ "$c" = $C1 ] || { echo "ethtool -L succeeded, combined $c, want $C1"; return 1; }
	else
		[ "$c" = $C0 ] || { echo "ethtool -L failed ($RC), combined $c, want $C0 as before"; return 1; }
	fi
	is_up || { echo "ib0 went down"; return 1; }
	ping_soon || { echo "no ping after the injected round"; return 1; }
}
channels_redo() { ethtool -L ib0 combined $C1 && [ "$(channels)" = $C1 ] && ping_soon; }
channels_post() { ethtool -L ib0 combined $C0; }

# rings: ethtool -G ib0 rx RX1 tx TX1 from RX0/TX0.
rings_pre() {
	up_pre || return 1
	[ "$(rings)" = "$RX0/$TX0" ] || ethtool -G ib0 rx $RX0 tx $TX0
}
rings_base() { fail_run ethtool -g ib0; }
rings_op() { fail_run ethtool -G ib0 rx $RX1 tx $TX1; }
rings_check() {
	local r
	r=$(rings)
	if [ "$RC" = 0 ]; then
		[ "$r" = "$RX1/$TX1" ] || { echo "ethtool -G succeeded, rings $r, want $RX1/$TX1"; return 1; }
	else
		[ "$r" = "$RX0/$TX0" ] || { echo "ethtool -G failed ($RC), rings $r, want $RX0/$TX0 as before"; return 1; }
	fi
	is_up || { echo "ib0 went down"; return 1; }
	ping_soon || { echo "no ping after the injected round"; return 1; }
}
rings_redo() { ethtool -G ib0 rx $RX1 tx $TX1 && [ "$(rings)" = "$RX1/$TX1" ] && ping_soon; }
rings_post() { ethtool -G ib0 rx $RX0 tx $TX0; }

# mode through sysfs: datagram -> connected.
mode_check_common() {
	local m
	m=$(mode)
	if [ "$RC" = 0 ]; then
		[ "$m" = connected ] || { echo "mode switch succeeded, mode $m"; return 1; }
	elif grep -q 'netlink receive error' $OUT; then
		# The request was carried out; ip's socket then could not
		# be given the answer (ENOBUFS on receive), so either mode
		# is right. Said so, not failed.
		echo "reply lost after the change (mode $m)"
	else
		[ "$m" = datagram ] || { echo "mode switch failed ($RC), mode $m, want datagram as before"; return 1; }
	fi
	is_up || { echo "ib0 went down"; return 1; }
	ping_soon || { echo "no ping after the injected round"; return 1; }
}
mode_sysfs_pre() { up_pre && { [ "$(mode)" = datagram ] || echo datagram > $NET/ib0/mode; }; }
mode_sysfs_base() { fail_run sysfs_write $NET/ib0/mode datagram; }
mode_sysfs_op() { fail_run sysfs_write $NET/ib0/mode connected; }
mode_sysfs_check() { mode_check_common; }
mode_sysfs_redo() { echo connected > $NET/ib0/mode && [ "$(mode)" = connected ] && ping_soon; }
mode_sysfs_post() { echo datagram > $NET/ib0/mode; }

mode_iplink_pre() { mode_sysfs_pre; }
mode_iplink_base() { fail_run ip link set ib0 type ipoib mode datagram; }
mode_iplink_op() { fail_run ip link set ib0 type ipoib mode connected; }
mode_iplink_check() { mode_check_common; }
mode_iplink_redo() { ip link set ib0 type ipoib mode connected && [ "$(mode)" = connected ] && ping_soon; }
mode_iplink_post() { ip link set ib0 type ipoib mode datagram; }

# xmit: a ping that resolves the path and connects (connected mode, no
# neighbour, connections flushed by the mode switch).
xmit_pre() {
	up_pre || return 1
	[ "$(mode)" = datagram ] || echo datagram > $NET/ib0/mode
	ip neigh flush dev ib0
	echo connected > $NET/ib0/mode
}
xmit_base() { fail_run ping -c 1 -W 1 127.0.0.1; }
xmit_op() { fail_run ping -c 1 -W 5 "$PEERIP"; }
# The ping may be lost to the failure; it must end, and ib0 stay up.
xmit_check() {
	is_up || { echo "ib0 went down"; return 1; }
	[ "$(mode)" = connected ] || { echo "mode $(mode)"; return 1; }
}
xmit_redo() { ping_soon; }
xmit_post() { echo datagram > $NET/ib0/mode; }

# workers: the kworkers fail (one allocation, then times=0) while a ping
# makes a connection and the address handle is created; connection setup
# and handles come from the driver's workqueues.
KWORKERS=()
kworkers_flag() {
	local p c
	KWORKERS=()
	for p in /proc/[0-9]*; do
		read -r c < "$p/comm" 2>/dev/null || continue
		[[ $c == kworker/* ]] || continue
		echo "$1" > "$p/make-it-fail" 2>/dev/null && KWORKERS+=("${p#/proc/}")
	done
}
workers_pre() { xmit_pre; }
workers_base() { echo 0; }
workers_op() {
	kworkers_flag 1
	RC=0
	ping -c 1 -W 5 "$PEERIP" > $OUT 2>&1 || RC=$?
	kworkers_flag 0
	echo "(${#KWORKERS[@]} kworkers)" >> $OUT
}
workers_check() { xmit_check; }
workers_redo() { ping_soon; }
workers_post() { xmit_post; }

# --- rounds ---

# points BASE TOTAL N: N budgets from BASE to TOTAL, every other one
# quadratically spaced (dense near BASE, where setup allocates first).
points() {
	local b=$1 t=$2 n=$3 k span
	span=$((t > b ? t - b : 1))
	for ((k = 0; k < n; k++)); do
		if ((k % 2)); then
			echo $((b + span * k * k / (n * n)))
		else
			echo $((b + span * k / n))
		fi
	done
}

# sweep OP ALLOC ROUNDS: one KTAP test; its diagnostics list every round.
sweep() {
	local op=$1 a=$2 n=$3 base total lo s rc=0 r=0 inj=0 failed=0 line out UNITS=bytes
	[ "$a" = fail_page_alloc ] && UNITS=pages
	"${op}_pre" > /dev/null 2>&1 || { echo "${op}_pre failed"; return 1; }
	if [ "$op" = workers ]; then
		base=0 total=65536
	else
		# Once before measuring: the first run also fills the page
		# cache (insmod reads the module file), which the rounds do
		# not do again, so that base would overshoot and the rounds
		# inject nothing.
		"${op}_base" > /dev/null 2>&1
		base=$(used "$a" "${op}_base")
		"${op}_pre" > /dev/null 2>&1
		total=$(used "$a" "${op}_op")
		# Whatever that did, redo it cleanly and go back.
		"${op}_post" > /dev/null 2>&1
		# The counts vary from run to run (slab refills: a new slab
		# page only when the partial ones are full; ip's own netlink
		# buffers) by more than some operations add to their program:
		# the switch to connected mode only sets a flag (its
		# resources exist from open), a ping's transmit path adds a
		# path entry at most, and fail_page_alloc sees only the pages
		# the slabs take. Those rounds start 10% below the smaller of
		# both, so that they inject something (the program fails
		# first and must leave ib0 as it was).
		if [ "$a" = fail_page_alloc ] || [ $((total - base)) -lt 4096 ]; then
			lo=$(((total < base ? total : base) * 9 / 10))
			# A dozen pages vary by more than 10% (make long
			# once had 4 rounds at 11-12 of 13 pages inject
			# nothing): start at half.
			[ "$lo" -lt 100 ] && lo=$((lo / 2))
			note "$op/$a: operation $total, base $base: rounds from $lo $UNITS"
			base=$lo
		fi
	fi
	echo "$op/$a: base $base, operation $total ($UNITS)"
	note "$op/$a: base $base, operation $total ($UNITS)"
	for s in $(points "$base" "$total" "$n"); do
		r=$((r + 1))
		"${op}_pre" > /dev/null 2>&1 || { echo "round $r: ${op}_pre failed"; rc=1; break; }
		echo "$MARK$op-$a-$r space $s" > /dev/kmsg
		arm "$a" "$s"
		"${op}_op"
		line="round $r space $s: exit $RC"
		if injected "$a"; then
			inj=$((inj + 1))
			line+=", failure injected"
			[ "$RC" != 0 ] && failed=$((failed + 1))
		fi
		disarm
		out=$(< $OUT)
		out=${out//$'\n'/ }
		[ ${#out} -le 300 ] || out=${out: -300}
		[ "$RC" != 0 ] && line+=" ($out)"
		if [ "$RC" = 124 ]; then
			line+=" HANG"
			rc=1
		fi
		if ! out=$("${op}_check" 2>&1); then
			line+=" INCONSISTENT: ${out//$'\n'/ }"
			rc=1
		elif [ -n "$out" ]; then
			line+=" ${out//$'\n'/ }"
		fi
		if ! "${op}_redo" > /dev/null 2>&1; then
			line+="; the retry without injection FAILED"
			rc=1
		fi
		"${op}_post" > /dev/null 2>&1
		echo "$line"
		note "$op/$a $line"
	done
	echo "$op/$a: $r rounds, $inj with a failure injected, $failed of them made the command fail"
	note "$op/$a: $r rounds, $inj injected, $failed command failures"
	# A sweep that never injected tested nothing.
	[ $inj -gt 0 ] || { echo "no round injected a failure"; rc=1; }
	return $rc
}

scan_since() {
	dmesg | sed -n "/$1/,\$p" > "/tmp/$1.log"
	"$IPNG_REPO/tests/vm/scan-logs.sh" "/tmp/$1.log"
}

peer_setup() {
	insmod "$KO" && wait_for 10 has_ib0 && bring_up &&
		ip link set ib0 type ipoib mode connected
}

check() {
	echo "# faults: $1 at ${SECONDS}s" >&2
	ktap_check "$@"
}

ktap_begin ipoib_ng_e2e_faults
if [ "$ME" = 1 ]; then
	echo ipng-faults-start > /dev/kmsg
	check "fault_injection_debugfs" fi_setup
	check "programs_staged_on_tmpfs" stage
	KO=$FI/ipoib_ng.ko
	check "setup_ib0_up" up_pre
	CH_MAX=$(ethtool -l ib0 | awk '/Pre-set/ { p = 1 } p && /Combined/ { print $2; exit }')
	[ "${CH_MAX:-1}" -ge 2 ] || C1=1
	vm_barrier faults-up 300
	check "peer_answers" ping_soon
	IFS=, read -r -a ops <<<"$OPS"
	for op in "${ops[@]}"; do
		if [ "$op" = channels ] && [ "$C1" = "$C0" ]; then
			ktap_skip "faults_channels" "one channel only"
			continue
		fi
		check "faults_${op}_failslab" sweep "$op" failslab "$ROUNDS_SLAB"
		check "faults_${op}_fail_page_alloc" sweep "$op" fail_page_alloc "$ROUNDS_PAGE"
	done
	disarm
	up_pre > /dev/null 2>&1
	check "ping_at_the_end" ping_soon
	# Where each round's failure hit, from the kernel log (one python3
	# start: about 7 s in the debug guests; the harness boots with a log
	# buffer that holds every round's stack).
	python3 "$SITES" sites "$MARK" > /tmp/faults-sites.txt 2>&1
	while read -r line; do
		note "site $line"
	done < /tmp/faults-sites.txt
	cp /tmp/faults-sites.txt "$IPNG_OUT/faults-sites.txt"
	vm_publish faults-done 1
	check "module_unloads" rmmod ipoib_ng
	check "kernel_log_clean" scan_since ipng-faults-start
else
	check "setup_ib0_up_connected" peer_setup
	vm_barrier faults-up 300
	vm_fetch 1 faults-done 5400 > /dev/null
	check "module_unloads" rmmod ipoib_ng
fi
ktap_end
