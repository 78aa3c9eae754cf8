#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for guest scripts run by guest-init.sh; source it:
#   . "$IPNG_LIB"          (or "$IPNG_REPO/tests/vm/guest-lib.sh")
#
# Owns: coordination between VMs through the shared /results/sync directory
# (vm_barrier, vm_publish, vm_fetch), polling (wait_for) and a small KTAP v1
# writer (ktap_begin, ktap_ok, ktap_fail, ktap_skip, ktap_check, ktap_end)
# whose output `kunit.py parse` accepts. One KTAP suite per script.
#
# Environment (exported by guest-init.sh): IPNG_VM, IPNG_NVMS, IPNG_PEER_VM,
# IPNG_PEER_IP, IPNG_RESULTS, IPNG_OUT, IPNG_MODDIR, IPNG_REPO, IPNG_MTU.

IPNG_VM=${IPNG_VM:-1}
IPNG_NVMS=${IPNG_NVMS:-1}
IPNG_RESULTS=${IPNG_RESULTS:-/results}
IPNG_SYNC=$IPNG_RESULTS/sync
IPNG_POLL=${IPNG_POLL:-0.2}

# sleep SECONDS: a sleep without starting a program (each program start
# costs about a second in a debug guest, so /bin/sleep 0.2 sleeps 1.2 s):
# a timed read on a FIFO that nobody writes. Overrides the program for
# every script that sources this file; `sleep N &` still works.
if [ -z "${_IPNG_NAP_FD:-}" ]; then
	_ipng_fifo=$(mktemp -u "${TMPDIR:-/tmp}/ipng-nap.XXXXXX")
	if mkfifo "$_ipng_fifo" 2>/dev/null; then
		exec {_IPNG_NAP_FD}<>"$_ipng_fifo"
		rm -f "$_ipng_fifo"
	fi
	unset _ipng_fifo
fi
if [ -n "${_IPNG_NAP_FD:-}" ]; then
	sleep() {
		case $1 in
		*[!0-9.]*) command sleep "$@" ;;
		*) read -r -t "$1" -u "$_IPNG_NAP_FD" _ 2>/dev/null || true ;;
		esac
	}
fi
IPNG_BARRIER_TIMEOUT=${IPNG_BARRIER_TIMEOUT:-300}

# wait_for TIMEOUT COMMAND...
# Run COMMAND every $IPNG_POLL seconds until it succeeds (return 0) or
# TIMEOUT seconds have passed (return 1).
wait_for() {
	local timeout=$1 end
	shift
	end=$((SECONDS + timeout))
	while :; do
		"$@" && return 0
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep "$IPNG_POLL"
	done
}

_vm_all_arrived() {
	local name=$1 i
	for ((i = 1; i <= IPNG_NVMS; i++)); do
		[ -e "$IPNG_SYNC/$name.$i" ] || return 1
	done
}

# _vm_ended VM: VM's guest script is over (guest-init wrote its status).
_vm_ended() { [ -e "$IPNG_RESULTS/vm$1/status" ]; }

# _vm_arrived_or_ended NAME: every VM reached NAME or has ended.
_vm_arrived_or_ended() {
	local name=$1 i
	for ((i = 1; i <= IPNG_NVMS; i++)); do
		[ -e "$IPNG_SYNC/$name.$i" ] || _vm_ended "$i" || return 1
	done
}

# vm_barrier NAME [TIMEOUT]
# Wait until every VM has reached barrier NAME (each name is used once per
# run). Returns 1 if the others do not arrive within TIMEOUT seconds
# (default $IPNG_BARRIER_TIMEOUT) or one of them ended without arriving
# (then at once: the host lets a VM whose script ended go on), 2 if NAME
# was already used.
vm_barrier() {
	local name=$1 timeout=${2:-$IPNG_BARRIER_TIMEOUT} i missing='' t=$SECONDS
	mkdir -p "$IPNG_SYNC"
	if [ -e "$IPNG_SYNC/$name.$IPNG_VM" ]; then
		echo "vm_barrier: barrier '$name' already used" >&2
		return 2
	fi
	: > "$IPNG_SYNC/$name.$IPNG_VM"
	wait_for "$timeout" _vm_arrived_or_ended "$name" &&
		_vm_all_arrived "$name" && return 0
	for ((i = 1; i <= IPNG_NVMS; i++)); do
		[ -e "$IPNG_SYNC/$name.$i" ] && continue
		missing+=" vm$i"
		_vm_ended "$i" && missing+=" (ended)"
	done
	echo "vm_barrier: '$name' failed after $((SECONDS - t))s (limit ${timeout}s), missing:$missing" >&2
	return 1
}

_vm_published_or_ended() { [ -e "$1" ] || _vm_ended "$2"; }

# vm_publish KEY VALUE
# Make a small string available to the other VMs (see vm_fetch).
vm_publish() {
	local f=$IPNG_SYNC/vm$IPNG_VM.$1
	mkdir -p "$IPNG_SYNC"
	printf '%s\n' "$2" > "$f.tmp.$$" && mv -f "$f.tmp.$$" "$f"
}

# vm_fetch VM KEY [TIMEOUT]
# Print the value VM published under KEY, waiting up to TIMEOUT seconds
# (default $IPNG_BARRIER_TIMEOUT) for it. Returns 1 on timeout.
vm_fetch() {
	local f=$IPNG_SYNC/vm$1.$2 timeout=${3:-$IPNG_BARRIER_TIMEOUT}
	if ! wait_for "$timeout" _vm_published_or_ended "$f" "$1" || [ ! -e "$f" ]; then
		echo "vm_fetch: vm$1 did not publish '$2' within ${timeout}s" >&2
		return 1
	fi
	printf '%s\n' "$(<"$f")"
}

# --- KTAP ---
# Results are kept in a file (so that ktap_* also work from subshells) and
# printed as one block by ktap_end, in the nested form KUnit uses:
#   KTAP version 1
#   1..1
#       KTAP version 1
#       # Subtest: SUITE
#       1..N
#       ok 1 name
#       # diagnostic of test 2
#       not ok 2 name
#       ok 3 name # SKIP reason
#   ok 1 SUITE
# Progress is printed as it happens as "# SUITE: ..." lines, which a KTAP
# parser ignores (they come before the block).

_ktap_file=''
_ktap_suite=''
_ktap_t=0
_ktap_f=0

# _ktap_name VAR NAME: VAR = NAME with blanks and '#' made '_' (no
# subshell: in a debug guest a fork costs a tenth of a second or more).
_ktap_name() {
	local n=${2//[[:space:]]/_}
	printf -v "$1" '%s' "${n//#/_}"
}

# _ktap_count VAR PREFIX: VAR = how many lines of the results file start
# with PREFIX (read with builtins, not grep: a program start costs about a
# second).
_ktap_count() {
	local line c=0
	while IFS= read -r line; do
		[[ $line == "$2"* ]] && c=$((c + 1))
	done < "$_ktap_file"
	printf -v "$1" '%s' $c
}

# _ktap_forks: processes created since boot (/proc/stat), so the progress
# lines say how many programs each case started: where guest time goes.
_ktap_forks() {
	local k v
	while read -r k v; do
		[ "$k" = processes ] && { printf -v "$1" '%s' "$v"; return; }
	done < /proc/stat
	printf -v "$1" '%s' 0
}

# _ktap_add RESULT NAME [DIRECTIVE] [DIAGNOSTIC_TEXT]
_ktap_add() {
	local result=$1 name directive=${3:-} diag=${4:-} n line forks
	_ktap_name name "$2"
	if [ -z "$_ktap_file" ] || [ ! -e "$_ktap_file" ]; then
		echo "ktap: ktap_begin was not called" >&2
		return 1
	fi
	_ktap_count n R
	n=$((n + 1))
	if [ -n "$diag" ]; then
		while IFS= read -r line; do
			# A "KTAP version N" anywhere would restart a parser.
			line=${line//TAP version/TAP-version}
			printf 'D# %s\n' "$line"
			printf '# %s: # %s\n' "$_ktap_suite" "$line" >&2
		done <<<"$diag" >> "$_ktap_file"
	fi
	line="$result $n $name${directive:+ # $directive}"
	printf 'R%s\n' "$line" >> "$_ktap_file"
	# The progress line says how long the case took and how many
	# processes it started: where guest time goes.
	_ktap_forks forks
	printf '# %s: %s [%d s, %d forks]\n' "$_ktap_suite" "$line" \
		$((SECONDS - _ktap_t)) $((forks - _ktap_f))
	ktap_clock_restart
}

# ktap_clock_restart: the next case's progress line counts from now (for
# work between cases that is no case's own, such as a VM run on the host).
ktap_clock_restart() {
	_ktap_t=$SECONDS
	_ktap_forks _ktap_f
}

# ktap_begin SUITE
ktap_begin() {
	_ktap_name _ktap_suite "$1"
	_ktap_file=$(mktemp "${TMPDIR:-/tmp}/ktap.XXXXXX")
	ktap_clock_restart
	printf '# %s: start\n' "$_ktap_suite"
	# A script that dies before ktap_end still reports what it had.
	if [ -z "$(trap -p EXIT)" ]; then
		trap '_ktap_on_exit $?' EXIT
	fi
}

_ktap_on_exit() {
	local rc=$1
	if [ -n "$_ktap_file" ] && [ -e "$_ktap_file" ]; then
		ktap_fail script_completed "script exited with status $rc before ktap_end"
		ktap_end || true
		[ "$rc" != 0 ] || rc=1
	fi
	exit "$rc"
}

# ktap_ok NAME
ktap_ok() { _ktap_add ok "$1"; }

# ktap_fail NAME [REASON]
ktap_fail() { _ktap_add 'not ok' "$1" '' "${2:-}"; }

# ktap_skip NAME REASON
ktap_skip() { _ktap_add ok "$1" "SKIP ${2:-}"; }

# ktap_check NAME COMMAND...
# Run COMMAND (stdin /dev/null, output captured); ok if it succeeds, else
# not ok with (the end of) its output and its exit status as diagnostics.
# Returns 0 so that a `set -e` script goes on to its next test; the
# command's exit status is left in KTAP_RC.
KTAP_RC=0
ktap_check() {
	local name=$1 out
	shift
	KTAP_RC=0
	out=$("$@" </dev/null 2>&1) || KTAP_RC=$?
	if [ $KTAP_RC = 0 ]; then
		ktap_ok "$name"
	else
		ktap_fail "$name" "$(printf '%s\n' "$out" | tail -n 40)
\$ $* -> exit status $KTAP_RC"
	fi
}

# ktap_end
# Print the KTAP block; return 1 if any test failed (or none ran).
ktap_end() {
	local n failed line
	if [ -z "$_ktap_file" ] || [ ! -e "$_ktap_file" ]; then
		echo "ktap: ktap_begin was not called" >&2
		return 1
	fi
	_ktap_count n R
	_ktap_count failed 'Rnot ok'
	{
		echo "KTAP version 1"
		echo "1..1"
		echo "    KTAP version 1"
		echo "    # Subtest: $_ktap_suite"
		echo "    1..$n"
		while IFS= read -r line; do
			echo "    ${line#?}"
		done < "$_ktap_file"
		if [ "$failed" = 0 ] && [ "$n" != 0 ]; then
			echo "ok 1 $_ktap_suite"
		else
			echo "not ok 1 $_ktap_suite"
		fi
	}
	rm -f "$_ktap_file"
	_ktap_file=''
	echo "# $_ktap_suite: $n tests, $failed failed" >&2
	[ "$failed" = 0 ] && [ "$n" != 0 ]
}

# --- background jobs: status in $BG_JOBS/NAME.rc, output in $BG_LOG/NAME.out ---
# Files, not wait: a test runs in a subshell (ktap_check). The job keeps
# no descriptor of its caller (a command substitution would wait for it).
BG_JOBS=${BG_JOBS:-/tmp/ipng-jobs}
BG_LOG=${BG_LOG:-$BG_JOBS}

# bg_start NAME SECS CMD...: CMD under timeout SECS, in the background.
bg_start() {
	local name=$1 secs=$2
	shift 2
	mkdir -p "$BG_JOBS" "$BG_LOG"
	rm -f "$BG_JOBS/$name.rc"
	(
		timeout -k 5 "$secs" "$@" > "$BG_LOG/$name.out" 2>&1
		echo $? > "$BG_JOBS/$name.rc"
	) < /dev/null > /dev/null 2>&1 &
}

# bg_ended SECS NAME...: every job NAME has ended within SECS seconds (from
# now, all together) and by itself, not killed by its timeout. Prints each
# exit status; 1 if any is still running or was killed.
bg_ended() {
	local end=$((SECONDS + $1)) n st rc=0
	shift
	for n in "$@"; do
		while [ ! -s "$BG_JOBS/$n.rc" ] && [ $SECONDS -lt $end ]; do
			sleep 0.5
		done
		if [ ! -s "$BG_JOBS/$n.rc" ]; then
			echo "$n: still running after $1 s:"
			tail -3 "$BG_LOG/$n.out"
			rc=1
			continue
		fi
		st=$(val "$BG_JOBS/$n.rc")
		echo "$n: ended, exit status $st"
		case $st in
		124 | 137)
			echo "$n: killed by its timeout (stuck):"
			tail -3 "$BG_LOG/$n.out"
			rc=1
			;;
		esac
	done
	return $rc
}

# bg_status NAME: the exit status of ended job NAME.
bg_status() { val "$BG_JOBS/$1.rc"; }

# ipng_qps: QPs ipoib_ng owns on any device (rdma res names the kernel
# user), counted with builtins.
ipng_qps() {
	local l n=0
	while IFS= read -r l; do
		[[ $l == *ipoib_ng* ]] && n=$((n + 1))
	done <<<"$(rdma res show qp)"
	echo $n
}

# --- ib0 helpers shared by the e2e suites ---

# val FILE: the first line of FILE, read with a builtin (every program a
# debug guest starts costs about a second).
val() {
	local v=''
	read -r v < "$1"
	printf '%s' "$v"
}

# kv_get NAME: the value of the line "NAME: value" on stdin (the format of
# /proc/net/ipoib/<if>/stats and ethtool -S), read without a program;
# nothing if there is none.
kv_get() {
	local _kv
	kv_get_v _kv "$1"
	printf '%s' "$_kv"
}

# kv_get_v VAR NAME: kv_get into VAR, without the subshell of $(kv_get).
kv_get_v() {
	# Prefixed: a caller's VAR named k or v would be these locals.
	local _kvk _kvv
	printf -v "$1" '%s' ''
	while IFS=': ' read -r _kvk _kvv; do
		if [ "$_kvk" = "$2" ]; then
			printf -v "$1" '%s' "$_kvv"
			return 0
		fi
	done
	return 0
}

# kv_lines_v VAR NAME LINE...: kv_get_v over the lines given, split the
# way kv_get_v's read splits them (IFS ': '): leading spaces dropped, the
# name ends at a colon or a space, then spaces, one colon and spaces, and
# the value without trailing spaces. kv_get_v stays a read loop: on a pipe
# (command output, which cannot change under it) it stops at the line it
# wants, where a pass over everything costs twice as many reads.
kv_lines_v() {
	local _kvvar=$1 _kvname=$2 _kvl _kvk _kvv

	shift 2
	printf -v "$_kvvar" '%s' ''
	for _kvl; do
		_kvl=${_kvl#"${_kvl%%[! ]*}"}
		_kvk=${_kvl%%[: ]*}
		[ "$_kvk" = "$_kvname" ] || continue
		_kvv=${_kvl#"$_kvk"}
		_kvv=${_kvv#"${_kvv%%[! ]*}"}
		_kvv=${_kvv#:}
		_kvv=${_kvv#"${_kvv%%[! ]*}"}
		printf -v "$_kvvar" '%s' "${_kvv%"${_kvv##*[! ]}"}"
		return 0
	done
	return 0
}

# A /proc or debugfs file whose content changes (counters, the cm table)
# is read in one pass, with mapfile, never line by line with read: read
# takes a block, seeks back to the end of its line, and the kernel makes
# the file again for the next read at that offset, so a counter that
# grew by a digit in between shifts every line after it (a soak failed an
# ethtool -G the kernel had applied: the ring size read back was not the
# one set, with send_queue_depth, two lines before it, moving under
# iperf3 traffic).

# proc_stat_v VAR NAME [FILE]: field NAME of /proc/net/ipoib/ib0/stats
# (or FILE) into VAR.
proc_stat_v() {
	local -a _psl

	mapfile -t _psl < "${3:-/proc/net/ipoib/ib0/stats}"
	kv_lines_v "$1" "$2" "${_psl[@]}"
}

# proc_stat NAME [FILE]: proc_stat_v printed.
proc_stat() {
	local _ps

	proc_stat_v _ps "$1" "${2:-}"
	printf '%s' "$_ps"
}

# eth_stat NAME: the counter NAME of `ethtool -S ib0`, or of $ETHS where a
# caller keeps one copy of that output for several lookups.
eth_stat() { kv_get "$1" <<<"${ETHS:-$(ethtool -S ib0)}"; }

# cm_count RE [DEV]: lines of debugfs ipoib_ng/DEV/cm (ib0 unless given),
# its header excepted, that match RE. A closing connection stays listed
# until its QP is destroyed.
cm_count() {
	local l n=0 lines

	mapfile -t lines < "/sys/kernel/debug/ipoib_ng/${2:-ib0}/cm"
	for l in "${lines[@]}"; do
		[[ $l == '#'* ]] && continue
		[[ $l =~ $1 ]] && n=$((n + 1))
	done
	echo $n
}

carrier_up() { [ "$(val /sys/class/net/ib0/carrier 2>/dev/null)" = 1 ]; }
oper_up() { [ "$(val /sys/class/net/ib0/operstate 2>/dev/null)" = up ]; }

# ping_all COUNT ARGS...: every echo answered (the summary is printed).
# Exactly COUNT requests go out, so counters can be checked against it; but
# once one reply came, ping waits only max(2 x slowest reply, interval) for
# the last one (-W counts only while nothing came back).
ping_all() {
	local n=$1 out
	shift
	out=$(ping -c "$n" -W 5 "$@" 2>&1)
	echo "$out" | tail -3
	grep -q " $n received" <<<"$out"
}

# ping_each COUNT ARGS...: each of the first COUNT echo requests answered,
# however late, within COUNT + 10 seconds. A slow reply makes ping send one
# more request, so the number sent is not exact; a lost one still fails.
ping_each() {
	local n=$1 out s
	shift
	out=$(ping -c "$n" -w $((n + 10)) "$@" 2>&1)
	echo "$out" | tail -3
	for ((s = 1; s <= n; s++)); do
		[[ $out == *" icmp_seq=$s ttl="* ]] ||
			{ echo "no reply to icmp_seq=$s"; return 1; }
	done
}
