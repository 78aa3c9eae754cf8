#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: build what is missing, boot two VMs joined by one virtual
# Ethernet link with soft-RoCE on each, load ipoib_ng on both, give ib0
# 10.10.0.1/24 and 10.10.0.2/24, and show what each host sees.
# IPNG_FLAVOUR=fast uses the kernel without debug options.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
results=${IPNG_RESULTS:-$repo/results/demo-$(date +%Y%m%d-%H%M%S)}
flavour=${IPNG_FLAVOUR:-debug}

tests/deps.sh > /dev/null
kdir=$(tests/vm/kernel.sh "$flavour" | tail -1)
make -s -C "$kdir" M="$repo" modules
mkdir -p "$results"
echo "demo: booting two VMs (kernel $kdir), results in $results"
rc=0
tests/vm/run-vms.sh --kernel "$kdir" --results "$results" \
	--script "$repo/tests/demo-guest.sh" --timeout 600 > "$results/run-vms.log" 2>&1 || rc=$?
for vm in "$results"/vm*; do
	echo
	echo "================ $(basename "$vm") ================"
	sed -n '/^demo:/,$p' "$vm/script.log" | grep -v '^# '
done
[ $rc = 0 ] || { echo "demo: VMs failed (rc $rc), see $results/run-vms.log"; exit 1; }
