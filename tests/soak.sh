#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make soak` (not part of `make check`): a long run of iperf3 both ways
# between the two VMs while each VM keeps making one random change of its
# ib0 every few seconds (mode switch, ethtool -L/-G/-C), interleaved with
# sha256-checked TCP transfers; the guest side is tests/e2e/soak.sh.
#
#  1. install missing Debian packages (tests/deps.sh)
#  2. the test kernel of IPNG_FLAVOUR (debug by default: KASAN, lockdep,
#     kmemleak; or fast), built when not cached (tests/vm/kernel.sh)
#  3. ipoib_ng built against it in a copy of the sources under the results
#     folder (the tree's own .ko stays what other runs expect)
#  4. two VMs (tests/vm/run-vms.sh) run tests/e2e/soak.sh
#  5. summary.txt in the results folder: every check of both guests (KTAP),
#     their soak-summary.txt (changes, transfers, iperf3 throughput), the
#     scan of both consoles and kmemleak reports (tests/vm/scan-logs.sh)
#
# Passes (exit 0) only if both guests passed every check (every change
# made, every transfer verified, both iperf3 streams to the end without a
# stall, module unloaded) and the scan found no kernel report.
# Environment: IPNG_SOAK_SECS (iperf3 duration, default 600),
# IPNG_SOAK_PERIOD (seconds between changes, default 5), IPNG_SOAK_SEED
# (random changes; default: a new one, printed), IPNG_FLAVOUR (debug|fast),
# IPNG_KDIR (a kernel build dir to use instead of step 2), IPNG_RESULTS
# (default results/soak-<time>), IPNG_MTU (underlying Ethernet MTU, default
# 9000), IPNG_QEMU_ACCEL (default tcg: multi-threaded, see run-vms.sh).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
secs=${IPNG_SOAK_SECS:-600}
period=${IPNG_SOAK_PERIOD:-5}
seed=${IPNG_SOAK_SEED:-$((RANDOM % 10000))}
flavour=${IPNG_FLAVOUR:-debug}
mtu=${IPNG_MTU:-9000}
results=${IPNG_RESULTS:-$repo/results/soak-$(date +%Y%m%d-%H%M%S)}
start=$SECONDS

say() { echo "soak: $* ($((SECONDS - start)) s)"; }
die() { echo "soak: $*" >&2; exit 1; }

for v in secs period seed mtu; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "IPNG_SOAK_${v^^}: want a number, got '${!v}'"
done
[ "$secs" -ge 60 ] || die "IPNG_SOAK_SECS: at least 60"
[ "$period" -ge 1 ] || die "IPNG_SOAK_PERIOD: at least 1"
case $flavour in debug | fast) ;; *) die "IPNG_FLAVOUR: debug or fast, got '$flavour'" ;; esac
mkdir -p "$results"
results=$(cd "$results" && pwd)
say "results in $results; ${secs} s, a change every ${period} s, seed $seed, $flavour kernel"

tests/deps.sh > "$results/deps.log" 2>&1 || { tail -20 "$results/deps.log"; die "tests/deps.sh failed"; }

if [ -n "${IPNG_KDIR:-}" ]; then
	kdir=$IPNG_KDIR
else
	say "$flavour kernel (built when not cached)"
	kdir=$(tests/vm/kernel.sh "$flavour" 2> "$results/kernel.log" | tail -1) || true
fi
if [ -z "$kdir" ] || [ ! -e "$kdir/.ipoib_ng_built" ]; then
	die "no built $flavour kernel ('$kdir'; see $results/kernel.log)"
fi

say "module against $kdir"
mod=$results/module
rm -rf "$mod"
mkdir -p "$mod"
git ls-files -co --exclude-standard | grep -v '^results/' | cpio -pdm --quiet "$mod"
if ! make -C "$kdir" M="$mod" modules > "$results/build.log" 2>&1 ||
	[ ! -e "$mod/ipoib_ng.ko" ]; then
	tail -30 "$results/build.log"
	die "module build failed (see $results/build.log)"
fi
vms=$results/vms
mkdir -p "$vms"
cp "$mod/ipoib_ng.ko" "$vms/ipoib_ng.ko"

# Boot (2-4 min in the debug VMs), the run, the transfers still going and
# the unload, with room to spare.
timeout=$((secs + 1200))
say "two VMs (waits for any other VM run to finish first), timeout ${timeout} s"
rc=0
# One TCG thread per vCPU (make check runs both vCPUs of a VM on one): the
# vCPUs truly in parallel, so that races have their widest windows here.
IPNG_QEMU_ACCEL=${IPNG_QEMU_ACCEL:-tcg} \
tests/vm/run-vms.sh --kernel "$kdir" --results "$vms" --mtu "$mtu" \
	--script "$repo/tests/e2e/soak.sh" --timeout "$timeout" \
	--env ipng_soak_ko=/results/ipoib_ng.ko --env "ipng_soak_secs=$secs" \
	--env "ipng_soak_period=$period" --env "ipng_soak_seed=$seed" \
	> "$results/run-vms.log" 2>&1 || rc=$?
say "VMs done (run-vms.sh exit status $rc)"

summary=$results/summary.txt
{
	echo "soak $(date -u +%Y-%m-%dT%H:%M:%SZ): ${secs} s, change every ${period} s, seed $seed"
	echo "kernel $kdir ($flavour), underlying MTU $mtu"
	echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo -dirty)"
	for i in 1 2; do
		d=$vms/vm$i
		echo
		echo "== vm$i: status $(cat "$d/status" 2>/dev/null || echo missing)"
		if [ -s "$d/script.log" ]; then
			grep -E '^    (not )?ok [0-9]+ ' "$d/script.log" | sed 's/^    //' || true
			grep -E '^# ipoib_ng_soak: +# ' "$d/script.log" | head -40 || true
		fi
		[ -s "$d/soak-summary.txt" ] && sed 's/^/  /' "$d/soak-summary.txt"
		if [ -s "$d/soak-changes.log" ]; then
			echo "  changes by kind:"
			sed -nE 's/^t=[0-9]+ (mode|ethtool -[LGC]).*: (ok|FAILED).*/\1 \2/p' "$d/soak-changes.log" |
				sort | uniq -c | sed 's/^/  /'
		fi
	done
	echo
	echo "== kernel log scan (consoles, kmemleak):"
	logs=()
	for i in 1 2; do
		for f in console.log kmemleak.txt; do
			[ -e "$vms/vm$i/$f" ] && logs+=("$vms/vm$i/$f")
		done
	done
	if [ ${#logs[@]} = 0 ]; then
		echo "no logs"
	elif tests/vm/scan-logs.sh "${logs[@]}"; then
		echo "clean (${logs[*]##"$vms"/})"
	fi
	echo
	tail -4 "$results/run-vms.log"
	echo "elapsed $((SECONDS - start)) s"
} > "$summary" 2>&1 || true
cat "$summary"
[ $rc = 0 ] || { echo "soak: FAIL (see $summary, $vms/vm*/)"; exit 1; }
echo "soak: PASS ($summary)"
