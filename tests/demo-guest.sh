#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of `make demo`: load ipoib_ng, configure ib0, show it.
set -eu
. "$IPNG_REPO/tests/vm/guest-lib.sh"

insmod "$IPNG_REPO/ipoib_ng.ko"
wait_for 10 test -e /sys/class/net/ib0
ip addr add "10.10.0.$IPNG_VM/24" dev ib0
ip link set ib0 up
wait_for 10 grep -qx 1 /sys/class/net/ib0/carrier
vm_barrier demo-up 120

echo "demo: host vm$IPNG_VM"
echo "\$ ip -d addr show ib0"
ip -d addr show ib0
echo "\$ cat /sys/class/net/ib0/address   # flags:QPN(3 bytes):port GID(16 bytes)"
cat /sys/class/net/ib0/address
echo "\$ cat /sys/class/infiniband/rxe0/ports/1/gids/0   # port GID"
cat /sys/class/infiniband/rxe0/ports/1/gids/0
echo "\$ ethtool -i ib0"
ethtool -i ib0
echo "\$ rdma res show qp type UD"
rdma res show qp type UD
peer=$((3 - IPNG_VM))
echo "\$ ping -c 3 10.10.0.$peer"
ping -c 3 -W 5 "10.10.0.$peer"
echo "\$ ip neigh show dev ib0"
ip neigh show dev ib0
vm_barrier demo-iperf 120
if [ "$IPNG_VM" = 1 ]; then
	iperf3 -s -1 -B 10.10.0.1 > /dev/null 2>&1 &
	sleep 1
	vm_barrier demo-iperf-ready 60
	wait
else
	vm_barrier demo-iperf-ready 60
	echo "\$ iperf3 -c 10.10.0.1 -t 5"
	iperf3 -c 10.10.0.1 -t 5
fi
echo "\$ ip -s link show ib0"
ip -s link show ib0
vm_barrier demo-done 120
rmmod ipoib_ng
