#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "link", run on every VM: the interface ipoib_ng creates
# on the rxe port, its addresses and MTU as user tools see them, how it
# follows the port (carrier, MTU, GID), the datagram/connected mode switch
# and its MTU rules, device removal, module parameters, the ib_ipoib
# conflict and repeated load/unload. KTAP on stdout.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
PORT=/sys/class/infiniband/rxe0/ports/1
NET=/sys/class/net

hex_of() { tr -d ':\n' < "$1"; }
ib_hex() { hex_of "$NET/ib0/address"; }
port_gid_hex() { hex_of "$PORT/gids/0"; }
has_ib0() { [ -e "$NET/ib0" ]; }
no_ib0() { [ ! -e "$NET/ib0" ]; }
carrier_is() { [ "$(val "$NET/ib0/carrier" 2>/dev/null)" = "$1" ]; }
mtu_is() { [ "$(val "$NET/ib0/mtu")" = "$1" ]; }
mode_is() { [ "$(val "$NET/ib0/mode")" = "$1" ]; }
gid_in_addr() { [ "$(ib_hex | cut -c9-40)" = "$(port_gid_hex)" ]; }

expect_eq() {
	if [ "$1" != "$2" ]; then
		echo "got '$1', want '$2'"
		return 1
	fi
}

# active_mtu of the port from ibv_devinfo, in bytes.
active_mtu() {
	ibv_devinfo -d rxe0 -i 1 | awk '/active_mtu/ { print $2; exit }'
}

t_type() {
	expect_eq "$(val $NET/ib0/type)" 32 &&
		expect_eq "$(val $NET/ib0/addr_len)" 20
}

t_gid() {
	expect_eq "$(ib_hex | cut -c9-40)" "$(port_gid_hex)"
}

# The QPN in the address is a UD QP that ipoib_ng owns.
t_qpn() {
	local qpn line
	qpn=$((16#$(ib_hex | cut -c3-8)))
	line=$(rdma res show qp lqpn "$qpn")
	echo "QPN $qpn: $line"
	[ "$qpn" -gt 1 ] && grep -q 'type UD' <<<"$line" &&
		grep -q 'ipoib_ng' <<<"$line"
}

t_broadcast() {
	local pkey want
	pkey=$(( $(cat $PORT/pkeys/0) | 0x8000 ))
	want=$(printf '00ffffffff12401b%04x000000000000ffffffff' "$pkey")
	expect_eq "$(hex_of $NET/ib0/broadcast)" "$want"
}

t_mtu() {
	local mtu
	mtu=$(active_mtu)
	expect_eq "$(val $NET/ib0/mtu)" "$((mtu - 4))"
}

# Datagram-mode MTU limit: active IB MTU of the port minus the header.
ud_mtu() { echo $(( $(active_mtu) - 4 )); }
ud_is() { [ "$(ud_mtu)" = "$1" ]; }
CM_MTU=65520

# The mode as sysfs, ip -d link and /proc/net/ipoib report it.
mode_everywhere() {
	local want=$1 got
	got=$(val $NET/ib0/mode)
	expect_eq "$got" "$want" || return 1
	ip -d link show ib0 | grep -Eq "ipoib .*mode +$want " ||
		{ ip -d link show ib0; return 1; }
	grep -qx "mode: $want" /proc/net/ipoib/ib0/stats ||
		{ grep mode: /proc/net/ipoib/ib0/stats; return 1; }
}

# Starts in datagram mode at the datagram limit; the maximum is the
# connected-mode limit (rxe has RC).
t_mode_defaults() {
	mode_everywhere datagram || return 1
	expect_eq "$(val $NET/ib0/mtu)" "$(ud_mtu)" || return 1
	ip -d link show ib0 | grep -Eq "maxmtu $CM_MTU( |\$)" ||
		{ ip -d link show ib0; return 1; }
}

# In datagram mode the limit is the datagram MTU, with a message saying
# how to go beyond it; nothing changes.
t_mtu_datagram_limit() {
	local ud
	ud=$(ud_mtu)
	ip link set ib0 mtu $((ud - 100)) && mtu_is $((ud - 100)) || return 1
	ip link set ib0 mtu "$ud" && mtu_is "$ud" || return 1
	dmesg -C
	if ip link set ib0 mtu $((ud + 1)); then
		echo "MTU $((ud + 1)) accepted in datagram mode"
		return 1
	fi
	mtu_is "$ud" && mode_is datagram || return 1
	dmesg | grep -q "MTU $((ud + 1)) exceeds the datagram-mode limit $ud; switch to connected mode for up to $CM_MTU" ||
		{ dmesg | tail -5; return 1; }
	! ip link set ib0 mtu $CM_MTU && mtu_is "$ud"
}

# ip link switches to connected mode; the MTU stays until raised, up to
# the connected-mode limit.
t_mode_connected_ip_link() {
	local ud
	ud=$(ud_mtu)
	ip link set ib0 type ipoib mode connected || return 1
	mode_everywhere connected && mtu_is "$ud" || return 1
	# Asking again for the mode in force changes nothing.
	ip link set ib0 type ipoib mode connected && mode_is connected &&
		mtu_is "$ud" || return 1
	ip link set ib0 mtu 9000 && mtu_is 9000 || return 1
	ip link set ib0 mtu $CM_MTU && mtu_is $CM_MTU || return 1
	if ip link set ib0 mtu $((CM_MTU + 1)); then
		echo "MTU $((CM_MTU + 1)) accepted"
		return 1
	fi
	mtu_is $CM_MTU
}

# A port MTU change leaves the connected-mode MTU alone; back in datagram
# mode the MTU is lowered to the new datagram limit, and follows the port
# again.
t_mtu_connected_port_change() {
	local rc=0
	mode_is connected && mtu_is $CM_MTU || return 1
	ip link set eth0 mtu 1500 || return 1
	wait_for 10 ud_is 1020 || rc=1
	# The port work runs after the event; give it time to act wrongly.
	sleep 2
	mtu_is $CM_MTU || { echo "connected MTU moved: $(val $NET/ib0/mtu)"; rc=1; }
	ip link set ib0 type ipoib mode datagram || rc=1
	wait_for 10 mtu_is 1020 || { echo "datagram MTU $(val $NET/ib0/mtu)"; rc=1; }
	ip link set eth0 mtu "$IPNG_MTU" || return 1
	wait_for 10 mtu_is "$(ud_mtu)" || { echo "MTU $(val $NET/ib0/mtu), port $(ud_mtu)"; rc=1; }
	mode_is datagram && return $rc
}

# Switching back to datagram mode lowers an MTU above the datagram limit
# and says so; an MTU below it stays.
t_mode_datagram_clamps() {
	local ud
	ud=$(ud_mtu)
	ip link set ib0 type ipoib mode connected && ip link set ib0 mtu 9000 ||
		return 1
	dmesg -C
	ip link set ib0 type ipoib mode datagram || return 1
	mode_everywhere datagram && mtu_is "$ud" || return 1
	dmesg | grep -q "MTU lowered from 9000 to the datagram-mode limit $ud" ||
		{ dmesg | tail -5; return 1; }
	ip link set ib0 type ipoib mode connected &&
		ip link set ib0 mtu 1000 &&
		ip link set ib0 type ipoib mode datagram || return 1
	mode_is datagram && mtu_is 1000 || return 1
	ip link set ib0 mtu "$ud"
}

# The sysfs file: both words, with or without a newline; anything else is
# refused with EINVAL and changes nothing.
t_mode_sysfs() {
	local bad
	printf connected > $NET/ib0/mode || return 1
	mode_everywhere connected || return 1
	echo datagram > $NET/ib0/mode || return 1
	mode_everywhere datagram || return 1
	echo connected > $NET/ib0/mode && mode_is connected || return 1
	for bad in Connected connect datagramx '' ' datagram' 1; do
		if printf '%s\n' "$bad" > $NET/ib0/mode 2>/dev/null; then
			echo "'$bad' accepted"
			return 1
		fi
		mode_is connected || return 1
	done
	# The write fails with EINVAL, as the shell reports it.
	printf 'bogus\n' 2>&1 > $NET/ib0/mode | grep -q 'Invalid argument' ||
		{ echo "no EINVAL"; return 1; }
	echo datagram > $NET/ib0/mode && mode_everywhere datagram &&
		mtu_is "$(ud_mtu)"
}

t_ethtool() {
	local out
	out=$(ethtool -i ib0) || return 1
	echo "$out"
	grep -qx 'driver: ipoib_ng' <<<"$out" &&
		grep -qx 'bus-info: rxe0:port1' <<<"$out"
}

t_link_kind() {
	local out
	out=$(ip -d link show ib0)
	echo "$out"
	grep -Eq 'link/infiniband' <<<"$out" &&
		grep -Eq 'ipoib pkey +0xffff mode +datagram' <<<"$out"
}

# Each VM sees its own address; the peer's GID is the link-local GID made
# from the peer's MAC (52:54:00:00:00:0N).
t_peer_addr() {
	local peer=$((3 - IPNG_VM)) theirs
	vm_publish ib0addr "$(ib_hex)"
	theirs=$(vm_fetch "$peer" ib0addr 120) || return 1
	echo "ours $(ib_hex) theirs $theirs"
	[ "$theirs" != "$(ib_hex)" ] &&
		expect_eq "${theirs:8}" "fe800000000000005054$(printf '00fffe00000%d' "$peer")"
}

t_mtu_follows_port() {
	ip link set eth0 mtu 1500 || return 1
	wait_for 10 mtu_is 1020 || { echo "mtu $(val $NET/ib0/mtu)"; return 1; }
	ip link set eth0 mtu "$IPNG_MTU" &&
		wait_for 10 mtu_is "$(( $(active_mtu) - 4 ))"
}

t_carrier_follows_port() {
	ip link set eth0 down && wait_for 10 carrier_is 0 || return 1
	ip link set eth0 up && wait_for 15 carrier_is 1 || return 1
	wait_for 10 gid_in_addr
}

t_addr_follows_gid() {
	local mac rc=0
	mac=$(val $NET/eth0/address)
	ip link set eth0 address "52:54:00:00:01:0$IPNG_VM" || return 1
	if ! wait_for 15 gid_in_addr ||
	   ! grep -q "5054:00ff:fe00:010$IPNG_VM" $PORT/gids/0; then
		echo "gid $(port_gid_hex) addr $(ib_hex)"
		rc=1
	fi
	# Restore the MAC whatever happened: later tests need it.
	ip link set eth0 address "$mac" || return 1
	wait_for 15 gid_in_addr || { echo "after restore: gid $(port_gid_hex) addr $(ib_hex)"; return 1; }
	return $rc
}

# ipoib_ng's groups on eth0: under RoCE v2 each MGID (signature 0x401b or
# 0x601b) is also an IPv6 group of the Ethernet device. ip adds "users N"
# to a group more than one membership holds.
lower_groups() { ip -6 maddr show dev eth0 | grep -E 'inet6 ff1[0-9a-f]:[46]01b:'; }
no_lower_groups() { ! lower_groups >/dev/null; }
lower_bcast() { lower_groups | grep -q 'ffff::ffff:ffff'; }

# A MAC change deletes and adds back every GID of eth0 (with the table
# full meanwhile, as the kernel log says) while ib0 leaves and joins its
# groups again: no membership on eth0 may be lost track of. Each group is
# held once, and ib0 down leaves them all.
t_lower_groups_after_gid_changes() {
	local mac i rc=0
	mac=$(val $NET/eth0/address)
	for i in 1 2 3; do
		ip link set eth0 address "52:54:00:00:0$i:0$IPNG_VM" &&
			ip link set eth0 address "$mac" || return 1
	done
	wait_for 15 gid_in_addr || { echo "gid $(port_gid_hex) addr $(ib_hex)"; return 1; }
	wait_for 15 lower_bcast || { echo "broadcast group not on eth0"; rc=1; }
	if lower_groups | grep -q users; then
		echo "a group held more than once on eth0:"
		lower_groups
		rc=1
	fi
	ip link set ib0 down || return 1
	if ! wait_for 10 no_lower_groups; then
		echo "groups left on eth0 with ib0 down:"
		lower_groups
		rc=1
	fi
	ip link set ib0 up && wait_for 10 lower_bcast || { echo "no join after up"; rc=1; }
	return $rc
}

t_no_lower_groups() {
	no_lower_groups && return 0
	echo "left on eth0:"
	lower_groups
	return 1
}

t_dellink_keeps() {
	ip link del ib0
	has_ib0
}

t_rdma_delete() {
	rdma link delete rxe0 || return 1
	wait_for 10 no_ib0 || { echo "ib0 still there"; return 1; }
	rdma link add rxe0 type rxe netdev eth0 || return 1
	wait_for 10 has_ib0
}

# insmod must fail, and the kernel log must say why.
insmod_refused() {
	local why=$1
	shift
	dmesg -C
	if insmod "$KO" "$@"; then
		echo "insmod $* succeeded"
		rmmod ipoib_ng
		return 1
	fi
	dmesg | grep -q -- "$why" || { dmesg | tail -5; return 1; }
}

t_bad_params() {
	insmod_refused "ifname 'bad'" ifname=bad &&
		insmod_refused "ifname 'x%s%d'" 'ifname=x%s%d' &&
		insmod_refused "send_queue_size=100" send_queue_size=100 &&
		insmod_refused "recv_queue_size=16384" recv_queue_size=16384 &&
		! insmod "$KO" recv_queue_size=abc
}

t_ifname() {
	insmod "$KO" 'ifname=ibng%d' send_queue_size=64 recv_queue_size=128 &&
		wait_for 10 test -e $NET/ibng0 || return 1
	grep -qx 'ibng%d' /sys/module/ipoib_ng/parameters/ifname &&
		grep -qx 64 /sys/module/ipoib_ng/parameters/send_queue_size &&
		rmmod ipoib_ng
}

t_ib_ipoib_conflict() {
	modprobe -d "$IPNG_MODDIR" ib_ipoib || return 1
	insmod_refused "ib_ipoib"
	local rc=$?
	# rmmod, not modprobe -r: that would also unload ib_cm, which
	# ipoib_ng needs as well.
	rmmod ib_ipoib || return 1
	return $rc
}

t_reload() {
	local i
	for ((i = 1; i <= 10; i++)); do
		insmod "$KO" || { echo "insmod $i"; return 1; }
		wait_for 10 has_ib0 || { echo "no ib0 at cycle $i"; return 1; }
		ip link set ib0 up || return 1
		rmmod ipoib_ng || { echo "rmmod $i"; return 1; }
		no_ib0 || return 1
	done
	t_no_lower_groups
}

ktap_begin ipoib_ng_e2e_link
ktap_check "module_loads" insmod "$KO"
ktap_check "ib0_appears" wait_for 10 has_ib0
ktap_check "type_infiniband_addr_len_20" t_type
ktap_check "addr_gid_is_port_gid0" t_gid
ktap_check "addr_qpn_is_own_ud_qp" t_qpn
ktap_check "broadcast_is_rfc4391_mgid" t_broadcast
ktap_check "mtu_is_active_mtu_minus_4" t_mtu
ktap_check "ethtool_driver_info" t_ethtool
ktap_check "ip_link_kind_ipoib" t_link_kind
ktap_check "link_up_carrier_on" eval 'ip link set ib0 up && wait_for 10 carrier_is 1'
ktap_check "peer_sees_distinct_address" t_peer_addr
ktap_check "mode_datagram_accepted" ip link set ib0 type ipoib mode datagram
ktap_check "mode_datagram_max_mtu_connected_limit" t_mode_defaults
ktap_check "mtu_above_datagram_limit_refused" t_mtu_datagram_limit
ktap_check "mode_connected_accepted_mtu_up_to_65520" t_mode_connected_ip_link
ktap_check "connected_mtu_kept_on_port_change" t_mtu_connected_port_change
ktap_check "mode_datagram_clamps_mtu" t_mode_datagram_clamps
ktap_check "mode_sysfs_file" t_mode_sysfs
ktap_check "ip_link_del_keeps_port_interface" t_dellink_keeps
ktap_check "mtu_follows_port_mtu" t_mtu_follows_port
ktap_check "carrier_follows_port_state" t_carrier_follows_port
ktap_check "address_follows_gid_change" t_addr_follows_gid
ktap_check "eth0_groups_tracked_across_gid_changes" t_lower_groups_after_gid_changes
ktap_check "rdma_link_delete_removes_ib0" t_rdma_delete
ktap_check "module_unloads" rmmod ipoib_ng
ktap_check "no_groups_left_on_eth0" t_no_lower_groups
ktap_check "bad_module_params_refused" t_bad_params
ktap_check "ifname_template_and_ring_params" t_ifname
ktap_check "refused_while_ib_ipoib_loaded" t_ib_ipoib_conflict
ktap_check "reload_10_cycles" t_reload
ktap_end
