#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: throughput and latency of ipoib_ng's datagram mode, and
# throughput of its connected mode, next to what the same soft-RoCE pair
# gives without it; what ethtool tuning changes (4 streams over 1 and 2
# channels, NAPI polls per packet at rx-usecs 0 and 100). A benchmark, not
# a test: no value is compared against a threshold.
#
#  1. install missing Debian packages (tests/deps.sh)
#  2. build the fast (no debug options) test kernel if it is not cached
#  3. build ipoib_ng against it in a copy of the sources under the results
#     folder (never in the source tree: other VM runs load the tree's .ko,
#     built for the debug kernel)
#  4. for each underlying Ethernet MTU: boot two VMs (run-vms.sh --mtu) and
#     run tests/bench/bench-guest.sh in them, while the host's CPU use, and
#     the part of it our QEMUs take, is sampled every second
#     (tests/bench/host-sample.py)
#  5. tests/bench/report.py: table on stdout, results.csv, results.json and
#     table.md in the results folder
#
# Exits non-zero, naming it, if any measurement could not be taken.
# Environment: IPNG_RESULTS (results folder, default results/bench-<time>),
# IPNG_BENCH_MTUS (default "1500 9000"), IPNG_BENCH_SECS (iperf3 and
# ib_send_bw duration, default 10, at least 6), IPNG_VM_TIMEOUT (per boot,
# default 1200).
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
results=${IPNG_RESULTS:-$repo/results/bench-$(date +%Y%m%d-%H%M%S)}
mtus=${IPNG_BENCH_MTUS:-1500 9000}
secs=${IPNG_BENCH_SECS:-10}
vm_timeout=${IPNG_VM_TIMEOUT:-1200}
start=$SECONDS

say() { echo "bench: $* ($((SECONDS - start)) s)"; }
die() { echo "bench: $*" >&2; exit 1; }

# ib_send_bw measures the middle secs - 4 seconds (bench-guest.sh).
if ! [[ $secs =~ ^[0-9]+$ ]] || [ "$secs" -lt 6 ]; then
	die "IPNG_BENCH_SECS: want a number of seconds >= 6, got $secs"
fi
for mtu in $mtus; do
	[[ $mtu =~ ^[0-9]+$ ]] || die "IPNG_BENCH_MTUS: bad value $mtu"
done
mkdir -p "$results"
results=$(cd "$results" && pwd)
say "results in $results"

say "packages"
tests/deps.sh > "$results/deps.log" 2>&1 || { tail -20 "$results/deps.log"; die "tests/deps.sh failed"; }

say "fast kernel (built when not cached; several minutes)"
kdir=$(tests/vm/kernel.sh fast 2> "$results/kernel.log" | tail -1) || true
if [ -z "$kdir" ] || [ ! -e "$kdir/.ipoib_ng_built" ]; then
	tail -40 "$results/kernel.log"
	die "fast kernel build failed (see $results/kernel.log)"
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

{
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host_nproc=$(nproc)"
	echo "host_cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	echo "host_loadavg_before=$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "qemu=$(qemu-system-x86_64 --version | head -1)"
	echo "kernel_dir=$kdir"
	echo "commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo -dirty)"
	echo "mtus=$mtus"
	echo "duration=$secs"
} > "$results/host-info.txt"

# Host CPU, once a second, with host time, for report.py to match against
# the measurement windows (mtimes of the guests' /proc/stat snapshots); our
# QEMUs are told apart by the results path in their command line.
python3 tests/bench/host-sample.py "path=$results/" > "$results/host-stat.txt" &
sampler=$!
trap 'kill "$sampler" 2>/dev/null || true' EXIT

vm_failed=''
for mtu in $mtus; do
	run=$results/mtu$mtu
	mkdir -p "$run"
	cp "$mod/ipoib_ng.ko" "$run/ipoib_ng.ko"
	say "MTU $mtu: two VMs (waits for any other VM run to finish first)"
	if ! tests/vm/run-vms.sh --kernel "$kdir" --results "$run" \
		--script "$repo/tests/bench/bench-guest.sh" --mtu "$mtu" \
		--timeout "$vm_timeout" --env ipng_bench_ko=/results/ipoib_ng.ko \
		--env "ipng_bench_secs=$secs" > "$run/run-vms.log" 2>&1; then
		tail -5 "$run/run-vms.log"
		vm_failed+=" $mtu"
	fi
done
kill "$sampler" 2>/dev/null || true
say "VM runs done"

rc=0
python3 tests/bench/report.py "$results" || rc=$?
if [ -n "$vm_failed" ]; then
	echo "bench: the VM run failed for MTU$vm_failed (see mtu<MTU>/run-vms.log)"
	rc=1
fi
say "done, exit status $rc; results in $results"
exit $rc
