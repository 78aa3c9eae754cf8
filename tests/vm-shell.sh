#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make vm-shell`: boot the two-VM setup with a shell on the first VM's
# console (the second VM logs to its console file). The modules built in the
# repo are at $IPNG_REPO inside the guest: insmod $IPNG_REPO/ipoib_ng.ko.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
flavour=${IPNG_FLAVOUR:-debug}
kdir=$(tests/vm/kernel.sh "$flavour" | tail -1)
make -s -C "$kdir" M="$repo" modules
exec tests/vm/run-vms.sh --kernel "$kdir" --interactive \
	--results "${IPNG_RESULTS:-$repo/results/shell-$(date +%Y%m%d-%H%M%S)}" \
	--script /bin/true
