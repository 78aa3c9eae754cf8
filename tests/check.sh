#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: every test of the project, as CI runs it (.ci/run).
#
#  1. install missing Debian packages (tests/deps.sh)
#  2. build the debug test kernel (Linux 6.12) if it is not cached
#     (tests/vm/kernel.sh)
#  3. build the modules against the debug kernel with W=1 and sparse (C=2)
#  4. the builds against Debian's stock 6.12 and 6.1 headers, each through
#     DKMS (dkms build, dkms mktarball) and plain, and checkpatch --strict
#     on every source file (one test per file): any warning fails. These
#     run niced beside step 5 (in order when IPNG_SKIP_VM is set); their
#     results are printed once the VMs are done
#  5. boot two VMs on the debug kernel, run KUnit and the end-to-end suites
#     (tests/e2e), parse every KTAP file with the kernel's kunit.py, scan
#     the guest logs for BUG/WARNING/KASAN/lockdep/kmemleak reports
#  6. at the same time (niced, beside step 5), for each of Debian's stock
#     6.12 and 6.1 kernels, once step 4 has its DKMS tarball: install it
#     with DKMS for that kernel (tests/vm/dkms-host.sh), boot two VMs on
#     it (tests/vm/stock.sh), load it there (suite dkms) and run the core
#     suites with it (and on 6.1, which no debug kernel runs, ib); each
#     kernel reported apart, then the debug kernel's numbers
#
# Ends with "N passed, N failed"; exits non-zero on any failure.
# Environment: IPNG_RESULTS (results folder, default results/check-<time>),
# IPNG_SKIP_VM=1 (stop after step 4), IPNG_VM_TIMEOUT (seconds, default 4800),
# IPNG_SUITES (the suites of step 5, comma-separated, "kunit" for the KUnit
# modules; default: tests/e2e/guest-main.sh's list) and the suites' own
# sizes (IPNG_FAULTS_*, IPNG_HOSTILE_*, IPNG_STRESS_ROUNDS; `make long`),
# IPNG_STOCK=0 (no step 6), IPNG_STOCK_SERIES (the stock kernels of step
# 6, default "6.12 6.1"), IPNG_STOCK_SUITES (their suites, for every
# series; default: stock_suites below), IPNG_STOCK_TIMEOUT (3600),
# IPNG_STOCK_NICE (the stock VMs' nice value, default 10).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1
results=${IPNG_RESULTS:-$repo/results/check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$results"
start=$SECONDS
passed=0
failed=0

pass() { passed=$((passed + 1)); echo "PASS: $1"; }
fail() {
	failed=$((failed + 1))
	echo "FAIL: $1"
	echo "$1" >> "$results/failed.txt"
}
step() { echo "=== $1 ($((SECONDS - start)) s)"; }

# The failures again at the very end, with what each failed case printed
# (failure_notes), so that a CI log cut to its first and last lines still
# names them.
recap() {
	[ -s "$results/failed.txt" ] || [ -s "$results/failure-notes.txt" ] || return 0
	echo "=== failed:"
	[ -s "$results/failed.txt" ] && sed 's/^/  /' "$results/failed.txt"
	[ -s "$results/failure-notes.txt" ] && head -40 "$results/failure-notes.txt"
	return 0
}

finish() {
	recap
	echo "=== done in $((SECONDS - start)) s; results in $results"
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit $?
}

step "packages"
if tests/deps.sh > "$results/deps.log" 2>&1; then
	pass "debian packages installed"
else
	tail -20 "$results/deps.log"
	fail "debian packages installed"
	finish
fi

step "debug kernel"
# kernel.sh's own progress lines (a build says what it is doing once a
# minute, a cached kernel says so) reach the terminal; the rest is logged.
if kdir=$(tests/vm/kernel.sh debug 2> >(tee "$results/kernel.log" |
	grep --line-buffered '^kernel.sh:' >&2) | tail -1) &&
   [ -e "$kdir/.ipoib_ng_built" ]; then
	pass "debug kernel available ($kdir)"
else
	tail -40 "$results/kernel.log"
	fail "debug kernel available"
	finish
fi
kunit_py=$kdir/source/tools/testing/kunit/kunit.py
checkpatch=$kdir/source/scripts/checkpatch.pl

# build NAME KDIR DIR [MODULE]: W=1 C=2 build in DIR that must produce
# MODULE (default ipoib_ng.ko); any compiler or sparse warning fails it.
build() {
	local name=$1 kd=$2 dir=$3 ko=${4:-ipoib_ng.ko} log=$results/build-$1.log
	make -C "$kd" M="$dir" clean > /dev/null 2>&1
	if make -C "$kd" M="$dir" W=1 C=2 modules > "$log" 2>&1 &&
	   ! grep -E 'warning:|error:|WARNING:' "$log" &&
	   [ -e "$dir/$ko" ]; then
		pass "build $name (W=1, sparse)"
	else
		grep -E 'warning:|error:|WARNING:|Error' "$log" | head -30
		fail "build $name (W=1, sparse)"
	fi
}

step "build against the debug kernel"
build debug-kernel "$kdir" "$repo"
# the soft InfiniBand HCA the ib suite runs on (tests/softib)
build softib "$kdir" "$repo/tests/softib" softib.ko
for m in ipoib_ng_test ipoib_ng_live_test; do
	if [ -e $m.ko ]; then
		pass "KUnit module $m.ko built"
	else
		fail "KUnit module $m.ko built"
	fi
done

# Debian's stock headers: the newest of each kernel series in the build
# matrix (tests/deps.sh installs them).
stock_headers() {
	find /usr/src -maxdepth 1 -name "linux-headers-$1.*-amd64" 2>/dev/null |
		sort -V | tail -1
}

# The stock kernel series whose packages boot in the stock VMs (the
# first one's DKMS build comes first), and the results folder of each.
read -r -a stock_series <<< "${IPNG_STOCK_SERIES:-6.12 6.1}"
stock_res() { echo "$results/vm-stock-$1"; }

# tree_copy DIR: the tree's files (tracked and untracked, not ignored, no
# results) copied into DIR, for builds that must not touch the clone.
tree_copy() {
	git ls-files -co --exclude-standard | grep -v '^results/' |
		cpio -pdm --quiet "$1"
}

# stock_vm_builds SERIES: what the stock-kernel VMs of SERIES wait for:
# the sources through DKMS against Debian's stock SERIES headers, as a
# distribution user builds them (dkms build; the tarball the VMs install,
# dkms-SERIES.tar.gz), and softib; the kernel release goes to
# dkms-SERIES.rel once both are there. Only temporary copies of the tree
# are used.
stock_vm_builds() {
	local series=$1 hdrs copy kver dtmp ver rel=''
	step "DKMS build against Debian's stock $series headers"
	hdrs=$(stock_headers "$series")
	if [ -z "$hdrs" ]; then
		fail "build stock-$series: no /usr/src/linux-headers-$series.*-amd64"
		return
	fi
	kver=${hdrs#/usr/src/linux-headers-}
	dtmp=$(mktemp -d)
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
	mkdir -p "$dtmp/src/ipoib_ng-$ver" "$dtmp/tree"
	tree_copy "$dtmp/src/ipoib_ng-$ver"
	if dkms build -m ipoib_ng -v "$ver" -k "$kver" --sourcetree "$dtmp/src" \
		--dkmstree "$dtmp/tree" > "$results/build-dkms-$series.log" 2>&1 &&
	   [ -n "$(find "$dtmp/tree" -name 'ipoib_ng.ko*' -path "*/$kver/*")" ]; then
		pass "dkms build for $kver"
		if dkms mktarball -m ipoib_ng -v "$ver" -k "$kver" --sourcetree "$dtmp/src" \
			--dkmstree "$dtmp/tree" --archive "$results/dkms-$series.tar.gz" \
			>> "$results/build-dkms-$series.log" 2>&1; then
			rel=$kver
		else
			fail "dkms mktarball for $kver"
		fi
	else
		tail -20 "$results/build-dkms-$series.log"
		fail "dkms build for $kver"
	fi
	rm -rf "$dtmp"
	copy=$(mktemp -d)
	tree_copy "$copy"
	# The soft InfiniBand HCA of suite ib, so that it can run there too;
	# the stock-kernel VMs load it from their results folder (/results).
	build "softib-stock-$series" "$hdrs" "$copy/tests/softib" softib.ko
	if [ -e "$copy/tests/softib/softib.ko" ]; then
		mkdir -p "$(stock_res "$series")" &&
			cp "$copy/tests/softib/softib.ko" "$(stock_res "$series")/softib.ko"
	fi
	rm -rf "$copy"
	# What the stock-kernel VMs wait for (stock_start).
	[ -n "$rel" ] && echo "$rel" > "$results/dkms-$series.rel"
}

# stock_build SERIES: the W=1 sparse build of ipoib_ng against Debian's
# stock SERIES headers, in a temporary copy of the tree.
stock_build() {
	local series=$1 hdrs copy

	hdrs=$(stock_headers "$series")
	[ -n "$hdrs" ] || return
	step "build against Debian's stock $series headers"
	copy=$(mktemp -d)
	tree_copy "$copy"
	build "stock-$series" "$hdrs" "$copy"
	cp "$copy/ipoib_compat_gen.h" "$results/compat-$series.h" 2>/dev/null
	rm -rf "$copy"
}

# static_checks [NICE]: what the stock-kernel VMs wait for, for each
# series in the order they boot (at the stock VMs' priority when run
# beside the VMs: the second pair waits for it, so it must not starve
# behind them), then the plain stock builds and checkpatch --strict on
# every source file (one test per file), niced to NICE if given. This can
# run while the VMs use the debug build.
static_checks() {
	local f out sources series order=()
	local -A built=()

	[ -n "${1:-}" ] && renice -n "${IPNG_STOCK_NICE:-10}" -p "$BASHPID" > /dev/null
	for series in "${stock_series[@]}" 6.12 6.1; do
		[ -n "${built[$series]:-}" ] && continue
		built[$series]=1
		order+=("$series")
		stock_vm_builds "$series"
	done
	[ -n "${1:-}" ] && renice -n "$1" -p "$BASHPID" > /dev/null
	for series in "${order[@]}"; do
		stock_build "$series"
	done
	step "checkpatch --strict"
	mapfile -t sources < <(git ls-files -co --exclude-standard -- '*.c' '*.h' |
			       grep -v '\.mod\.c$' | sort)
	for f in "${sources[@]}"; do
		# --terse prints nothing for a clean file; any finding is a line
		# "file:line: TYPE:..." and makes the exit status non-zero.
		if out=$("$checkpatch" --strict --no-tree --terse --show-types -f "$f" 2>&1) &&
		   ! grep -Eq '(ERROR|WARNING|CHECK):' <<<"$out"; then
			pass "checkpatch $f"
		else
			head -20 <<<"$out"
			fail "checkpatch $f"
		fi
	done
}

stock=${IPNG_STOCK:-1}
# Without VMs there is nothing to wait beside: then in order. Otherwise
# beside the VMs (it took 4-5 minutes before them), the stock pairs'
# builds at their priority and the rest niced so that the guests keep the
# CPUs, its results counted once the VMs are done.
static_pid=''
if [ "${IPNG_SKIP_VM:-0}" = 1 ]; then
	static_checks
else
	static_checks 19 > "$results/static-checks.out" 2>&1 &
	static_pid=$!
fi

if [ "${IPNG_SKIP_VM:-0}" = 1 ]; then
	finish
fi

# watch_suites DIR [LABEL]: while the VMs run, print each suite's result
# as the guests finish it (the lines guest-main.sh and ktap_end write).
watch_suites() {
	local seen=$1/.watched label=${2:-} log vm line
	: > "$seen"
	while sleep 15; do
		for log in "$1"/vm*/script.log; do
			[ -e "$log" ] || continue
			vm=${log%/script.log}
			vm=${vm##*/}
			grep -E '^# (ipoib_ng_[a-z0-9_]*: [0-9]+ tests, [0-9]+ failed|e2e suite .* took|KUnit took)' "$log" |
				sed "s|^# |$label$vm: |" |
			while IFS= read -r line; do
				grep -qxF "$line" "$seen" && continue
				echo "$line" >> "$seen"
				echo "  $line"
			done
		done
	done
}

# vm_pair_start KEY LABEL KDIR DIR TIMEOUT LOGS [--env NAME=VALUE]...:
# start guest-main.sh in two VMs on KDIR with results in DIR, in the
# background (suite results printed as they come, LABEL before each test
# name); vm_pair_wait KEY waits for them
# and scans each guest's logs: LOGS is "console" or "console+kmemleak"
# (kernels with kmemleak). One test for the run, one per guest for its
# logs. VP_PREFIX (a command and its arguments, e.g. nice) runs run-vms.sh.
declare -A vp_pid=() vp_watch=() vp_dir=() vp_logs=() vp_label=()
VP_PREFIX=()
vm_pair_start() {
	local key=$1 label=$2 kd=$3 dir=$4 timeout=$5 logs=$6
	shift 6
	mkdir -p "$dir"
	watch_suites "$dir" "$label" &
	vp_watch[$key]=$!
	"${VP_PREFIX[@]}" tests/vm/run-vms.sh --kernel "$kd" --results "$dir" \
		--script "$repo/tests/e2e/guest-main.sh" "$@" \
		--timeout "$timeout" > "$dir.log" 2>&1 &
	vp_pid[$key]=$!
	vp_dir[$key]=$dir
	vp_logs[$key]=$logs
	vp_label[$key]=$label
}

vm_pair_wait() {
	local key=$1 label=${vp_label[$1]} dir=${vp_dir[$1]} vm files
	if wait "${vp_pid[$key]}"; then
		pass "${label}VMs ran to completion"
	else
		tail -30 "$dir.log"
		fail "${label}VMs ran to completion"
	fi
	kill "${vp_watch[$key]}" 2>/dev/null
	wait "${vp_watch[$key]}" 2>/dev/null
	for vm in "$dir"/vm*; do
		[ -d "$vm" ] || continue
		files=("$vm/console.log")
		[ "${vp_logs[$key]}" = console+kmemleak ] && files+=("$vm/kmemleak.txt")
		if tests/vm/scan-logs.sh "${files[@]}" > "$vm/scan.txt" 2>&1; then
			pass "$label$(basename "$vm") kernel log has no BUG/WARNING/KASAN/lockdep/leak"
		else
			head -70 "$vm/scan.txt"
			fail "$label$(basename "$vm") kernel log has no BUG/WARNING/KASAN/lockdep/leak"
		fi
	done
}

# Debian's stock kernels run the core suites in two more VMs each beside
# the debug pair, niced (their guests are about five times faster), with
# ipoib_ng installed by DKMS for that kernel before it boots
# (tests/vm/dkms-host.sh). IPNG_STOCK=0 leaves them out.
declare -A stock_err=() srel=()
step "two VMs on the debug kernel: KUnit and end-to-end suites"
vmres=$results/vm
# The suites' own knobs, when set, reach the guests (make long sets them).
suite_env=()
for v in IPNG_SUITES IPNG_FAULTS_ROUNDS IPNG_FAULTS_PAGE_ROUNDS IPNG_FAULTS_OPS \
	IPNG_HOSTILE_COUNT IPNG_HOSTILE_PPS IPNG_HOSTILE_NS_PPS IPNG_HOSTILE_REQS \
	IPNG_HOSTILE_MAXCONN IPNG_HOSTILE_MODES IPNG_HOSTILE_PERF \
	IPNG_STRESS_ROUNDS; do
	[ -n "${!v:-}" ] && suite_env+=(--env "$v=${!v}")
done
vm_pair_start debug "" "$kdir" "$vmres" "${IPNG_VM_TIMEOUT:-4800}" console+kmemleak "${suite_env[@]}"
# stock_suites SERIES: the suites the stock SERIES pair runs: the core
# suites, and on 6.1 ib too (the soft InfiniBand fabric), since 6.1's
# interfaces there (ib_core's path query callback, header_ops.parse) run
# on no other kernel of make check; the debug kernel is a 6.12.
stock_suites() {
	local suites=dkms,link,datagram,observe,tuning,connected

	[ "$1" = 6.1 ] && suites+=,ib
	echo "${IPNG_STOCK_SUITES:-$suites}"
}

# stock_start SERIES: once the debug pair has started and the static
# checks have made the SERIES DKMS tarball, prepare that stock kernel and
# start its pair (a failure is kept in stock_err and reported after the
# debug pair).
stock_start() {
	local series=$1 rel skdir sres tarball=$results/dkms-$1.tar.gz

	sres=$(stock_res "$series")
	while ! grep -q '^run-vms: started' "$vmres.log" 2>/dev/null &&
		kill -0 "${vp_pid[debug]}" 2>/dev/null; do
		sleep 5
	done
	while [ ! -s "$results/dkms-$series.rel" ] && kill -0 "$static_pid" 2>/dev/null; do
		sleep 5
	done
	rel=$(cat "$results/dkms-$series.rel" 2>/dev/null)
	srel[$series]=$rel
	if [ -z "$rel" ] || [ ! -s "$tarball" ]; then
		stock_err[$series]="no DKMS build to install"
		return
	fi
	step "stock $rel kernel prepared (tests/vm/stock.sh)"
	if ! skdir=$(tests/vm/stock.sh "$rel" 2>> "$results/stock.log"); then
		tail -5 "$results/stock.log"
		stock_err[$series]="kernel $rel not prepared (see stock.log)"
		return
	fi
	step "two VMs on the stock $rel kernel beside them: DKMS install, then $(stock_suites "$series")"
	mkdir -p "$sres"
	# Not behind the VM lock, which the debug pair holds.
	VP_PREFIX=(nice -n "${IPNG_STOCK_NICE:-10}" env IPNG_VM_LOCK=none
		   tests/vm/dkms-host.sh "$rel" "$tarball" "$sres/host-dkms.ktap" --)
	vm_pair_start "stock-$series" "stock-$series " "$skdir" "$sres" \
		"${IPNG_STOCK_TIMEOUT:-3600}" console \
		--env IPNG_SUITES="$(stock_suites "$series")" \
		--env IPNG_DKMS_INSTALLED=1 --env IPNG_SIB_KO=/results/softib.ko
	VP_PREFIX=()
}
if [ "$stock" = 1 ]; then
	for series in "${stock_series[@]}"; do
		stock_start "$series"
	done
fi
vm_pair_wait debug
if [ -n "$static_pid" ]; then
	step "checkpatch and stock builds, run beside the VMs"
	wait "$static_pid"
	while IFS= read -r line; do
		case $line in
		'PASS: '*) pass "${line#PASS: }" ;;
		'FAIL: '*) fail "${line#FAIL: }" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done < "$results/static-checks.out"
fi

# failure_notes KTAP: what each failed case printed first and last (4 and
# 3 lines), so that a CI log which shows only its end still tells why.
failure_notes() {
	awk '/^ +# \$ .* -> exit status/{ next }
	/^ +# /{ sub(/^ +/, ""); buf[n++] = $0; next }
	/^ +not ok [0-9]+ /{
		sub(/^ +/, "")
		print "      " $0
		for (i = 0; i < n; i++)
			if (i < 4 || i >= n - 3)
				print "        " buf[i]
			else if (i == 4)
				print "        # ..."
	}
	/^ +(not )?ok [0-9]+ /{ n = 0 }' "$1"
}

# parse_ktaps DIR LABEL: every KTAP file of the VMs in DIR, each a test
# result line of its own (LABEL/vmN/file), its cases counted.
kunit_cases=0
e2e_cases=0
parse_ktaps() {
	local dir=$1 label=$2 k name out summary ran p f s c e
	for k in "$dir"/vm*/*.ktap "$dir"/*.ktap; do
		[ -e "$k" ] || continue
		name=$label${k#"$dir"/}
		out=$(python3 "$kunit_py" parse "$k" 2>&1)
		summary=$(grep -o 'Ran [0-9]* tests.*' <<<"$out" | tail -1)
		ran=$(sed -n 's/^Ran \([0-9]*\) tests.*/\1/p' <<<"$summary")
		p=$(grep -o 'passed: [0-9]*' <<<"$summary" | grep -o '[0-9]*')
		f=$(grep -o 'failed: [0-9]*' <<<"$summary" | grep -o '[0-9]*')
		s=$(grep -o 'skipped: [0-9]*' <<<"$summary" | grep -o '[0-9]*')
		# A crashed case or a KTAP parse error (a truncated result line,
		# say) is a failure too, or a failing case could go unseen.
		c=$(grep -o 'crashed: [0-9]*' <<<"$summary" | grep -o '[0-9]*')
		e=$(grep -o 'errors: [0-9]*' <<<"$summary" | grep -o '[0-9]*')
		f=$(( ${f:-0} + ${c:-0} ))
		[ "${e:-0}" = 0 ] || fail "$name: $e KTAP parse errors"
		echo "$name: ${summary:-no results}"
		if [ -z "$ran" ] || [ "$ran" = 0 ]; then
			fail "$name: no test ran"
			continue
		fi
		grep -E '\[(FAILED|CRASHED)\]' <<<"$out" | sed 's/^/    /'
		if [ "${f:-0}" != 0 ]; then
			failure_notes "$k"
			{ echo "  $name:"; failure_notes "$k"; } >> "$results/failure-notes.txt"
		fi
		passed=$((passed + ${p:-0}))
		failed=$((failed + ${f:-0}))
		case $name in
		*/kunit-ipoib_ng_*) kunit_cases=$((kunit_cases + ${p:-0} + ${f:-0} + ${s:-0})) ;;
		*/e2e-*) e2e_cases=$((e2e_cases + ${p:-0} + ${f:-0} + ${s:-0})) ;;
		esac
	done
}

# slowest_cases DIR: the ten end-to-end cases of vm1 that took longest,
# from their progress lines ("[N s, M forks]"): where guest time goes.
slowest_cases() {
	grep -h -E '^# [a-z0-9_]+: (not )?ok [0-9]+ .* \[[0-9]+ s, [0-9]+ forks\]$' \
		"$1"/vm1/e2e-*.ktap 2>/dev/null |
		sed -E 's/^# ipoib_ng_e2e_([a-z0-9_]+): (not )?ok [0-9]+ ([^ ]+).* \[([0-9]+) s, ([0-9]+) forks\]$/\4 \5 \1 \3/' |
		sort -rn | head -10 |
		while read -r secs forks suite case; do
			printf '  %4d s %4d processes  %s/%s\n' "$secs" "$forks" "$suite" "$case"
		done
}

step "KTAP results (debug kernel)"
parse_ktaps "$vmres" ""
echo "KUnit cases: $kunit_cases, end-to-end cases: $e2e_cases"
echo "slowest end-to-end cases (vm1):"
slowest_cases "$vmres"
# KUnit runs unless IPNG_SUITES names suites without it (make long).
case ,${IPNG_SUITES:-kunit}, in
*,kunit,*) [ "$kunit_cases" -gt 0 ] || fail "KUnit suites reported results" ;;
esac
# End-to-end results unless IPNG_SUITES names KUnit alone.
[ "${IPNG_SUITES:-}" = kunit ] || [ "$e2e_cases" -gt 0 ] ||
	fail "end-to-end suites reported results"
debug_passed=$passed debug_failed=$failed

# --- the core suites on Debian's stock kernels, installed with DKMS ---
if [ "$stock" = 1 ]; then
	for series in "${stock_series[@]}"; do
		before_passed=$passed before_failed=$failed
		if [ -n "${stock_err[$series]:-}" ]; then
			fail "stock $series VMs: ${stock_err[$series]}"
		else
			vm_pair_wait "stock-$series"
			step "KTAP results (stock ${srel[$series]} kernel)"
			e2e_before=$e2e_cases
			parse_ktaps "$(stock_res "$series")" "stock-$series/"
			[ "$e2e_cases" -gt "$e2e_before" ] ||
				fail "stock $series: end-to-end suites reported results"
		fi
		echo "stock $series: $((passed - before_passed)) passed, $((failed - before_failed)) failed"
	done
fi
echo "debug kernel: $debug_passed passed, $debug_failed failed (with the lint and build steps)"

finish
