#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make vm-shell`: boot the two-VM setup with a shell on the first VM's
# console (the second VM logs to its console file). The modules built in the
# repo are at $IPNG_REPO inside the guest: insmod $IPNG_REPO/ipoib_ng.ko.
#
# `make ib-shell` (tests/vm-shell.sh ib): the same with the soft InfiniBand
# fabric up on the first VM (tests/softib/fabric.sh: softib's two HCAs, Debian's
# OpenSM on softib0's port, ipoib_ng with host A in namespace h1 and host
# B in h2), then the shell; "tests/softib/fabric.sh down" in the guest
# takes it apart again.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
flavour=${IPNG_FLAVOUR:-debug}
kdir=$(tests/vm/kernel.sh "$flavour" | tail -1)
make -s -C "$kdir" M="$repo" modules
args=(--script /bin/true)
name=shell
if [ "${1:-}" = ib ]; then
	make -s -C "$kdir" M="$repo/tests/softib" modules
	args=(--script "$repo/tests/softib/fabric-up.sh")
	name=ib-shell
fi
exec tests/vm/run-vms.sh --kernel "$kdir" --interactive "${args[@]}" \
	--results "${IPNG_RESULTS:-$repo/results/$name-$(date +%Y%m%d-%H%M%S)}"
