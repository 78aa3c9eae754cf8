#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Example guest script for run-vms.sh: checks what every test relies on
# (rxe0 up on eth0, the peer reachable, barriers and value exchange through
# /results) and reports it as one KTAP suite, vm_smoke.
set -euo pipefail
# shellcheck source=guest-lib.sh
. "$(dirname "$0")/guest-lib.sh"

rxe=/sys/class/infiniband/rxe0

eth0_mtu() { [ "$(cat /sys/class/net/eth0/mtu)" = "$IPNG_MTU" ]; }
# GID index 1 of an rxe port is the IPv4-mapped address of its netdev.
rxe_ipv4_gid() {
	local gid
	gid=$(printf '0000:0000:0000:0000:0000:ffff:0a09:%04x' "$IPNG_VM")
	wait_for 10 grep -qx "$gid" "$rxe/ports/1/gids/1" || { cat "$rxe/ports/1/gids/1"; return 1; }
}
root_writable() { echo x > /tmp/ipng-smoke && echo x > "$HOME/ipng-smoke" && echo x > /var/tmp/ipng-smoke; }
exchange() {
	vm_publish hello "from-vm$IPNG_VM"
	[ "$(vm_fetch "$IPNG_PEER_VM" hello 60)" = "from-vm$IPNG_PEER_VM" ]
}

ktap_begin vm_smoke
ktap_check rxe0_exists test -d "$rxe"
ktap_check rxe0_active grep -q ACTIVE "$rxe/ports/1/state"
ktap_check rxe0_on_eth0 grep -qx eth0 "$rxe/ports/1/gid_attrs/ndevs/0"
ktap_check rxe0_ipv4_gid rxe_ipv4_gid
ktap_check eth0_mtu eth0_mtu
ktap_check writable_dirs root_writable
ktap_check ibv_devinfo sh -c 'ibv_devinfo -d rxe0 | grep -q PORT_ACTIVE'
ktap_check barrier_booted vm_barrier booted
ktap_check ping_peer wait_for 30 ping -c 1 -W 2 "$IPNG_PEER_IP"
ktap_check exchange exchange
ktap_check barrier_done vm_barrier finished
ktap_end
