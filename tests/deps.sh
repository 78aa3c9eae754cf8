#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the build, the VMs and the tests need, if any
# is missing (apt-get update first, as a fresh machine has no lists).
set -euo pipefail

pkgs=(
	build-essential bc bison flex libelf-dev libssl-dev dwarves cpio kmod
	python3 ccache sparse git patch
	linux-source-"${IPNG_KERNEL_SERIES:-6.12}" linux-headers-amd64 linux-headers-6.12-amd64 dkms
	linux-image-6.12-amd64 linux-image-amd64
	qemu-system-x86
	iproute2 rdma-core ibverbs-utils infiniband-diags perftest
	ethtool iputils-ping arping iperf3 tshark procps busybox-static
	python3-pyverbs opensm
)

missing=()
for p in "${pkgs[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing+=("$p")
	fi
done
if [ ${#missing[@]} = 0 ]; then
	echo "deps: all ${#pkgs[@]} packages present"
	exit 0
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
