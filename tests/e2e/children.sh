#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# End-to-end suite "children", run on both VMs: child interfaces of ib0
# (ipoib_child.c) on rxe, whose P_Key table holds only 0xffff, so every
# child here has the parent's P_Key (partitions need the InfiniBand
# fabric). The sysfs rules NetworkManager uses (create_child and
# delete_child, names <parent>.<pkey>, unique, bad values refused with
# nothing made), the netlink ones ipoib-cni and systemd-networkd use (ip
# link add link ib0 ... type ipoib [pkey] [mode] [umcast], children that
# share a P_Key, no child of a child, ip link del), umcast through sysfs
# and netlink, every change refused without CAP_NET_ADMIN (also to root
# in a user namespace of its own), the ipoib-cni flow
# between the two VMs (a child moved into a namespace, renamed, proxy_arp,
# MTU, up; ping and a sha256-checked transfer pod to pod in both modes
# while ib0 keeps working; the namespace deleted takes the child and its
# QPs with it), 50 sysfs create/delete cycles with the QP count back where
# it was, and the parent removed (device removal on vm1, module unload on
# vm2) with children present and iperf3 running between them. KTAP on
# stdout.
set -u
# shellcheck source=tests/vm/guest-lib.sh disable=SC1091
. "$IPNG_REPO/tests/vm/guest-lib.sh"

KO=${IPNG_KO:-$IPNG_REPO/ipoib_ng.ko}
XFER=$IPNG_REPO/tests/e2e/xfer.py
NET=/sys/class/net
ME=$IPNG_VM
PEER=$((3 - IPNG_VM))
MYIP=10.14.0.$ME
PEERIP=10.14.0.$PEER
PODIP=10.15.0.$ME
PEERPOD=10.15.0.$PEER
POD=ipng-pod
CYCLES=${IPNG_CHILD_CYCLES:-50}
XFER_BYTES=2097152

setup() {
	insmod "$KO" && wait_for 10 test -e $NET/ib0 || return 1
	ip addr add "$MYIP/24" dev ib0 && ip link set ib0 up &&
		wait_for 10 carrier_up && wait_for 10 oper_up
}

# Interfaces of the ipoib kind in this namespace.
ipoib_links() {
	local l n=0
	while IFS= read -r l; do
		[[ $l == *' ipoib '* ]] && n=$((n + 1))
	done <<<"$(ip -o -d link show)"
	echo $n
}

# write FILE VALUE: write with echo (no program), print the error if any.
write() {
	local err
	err=$( { echo "$2" > "$1"; } 2>&1 ) && return 0
	echo "${err##*: }"
	return 1
}

# --- sysfs (NetworkManager) ---

t_sysfs_create() {
	write $NET/ib0/create_child 0xffff || return 1
	wait_for 10 test -e $NET/ib0.ffff || { echo "no ib0.ffff"; return 1; }
	[ "$(val $NET/ib0.ffff/pkey)" = 0xffff ] || { echo "pkey $(val $NET/ib0.ffff/pkey)"; return 1; }
	[ "$(val $NET/ib0.ffff/parent)" = ib0 ] || { echo "parent $(val $NET/ib0.ffff/parent)"; return 1; }
	[ "$(val $NET/ib0/pkey)" = 0xffff ] || { echo "ib0 pkey $(val $NET/ib0/pkey)"; return 1; }
	[ ! -e $NET/ib0/parent ] || { echo "ib0 has a parent file"; return 1; }
	[ ! -e $NET/ib0.ffff/create_child ] || { echo "a child has create_child"; return 1; }
	[ -e /proc/net/ipoib/ib0.ffff/stats ] || { echo "no /proc stats for the child"; return 1; }
}

t_sysfs_duplicate() {
	local err n
	n=$(ipoib_links)
	if err=$(write $NET/ib0/create_child 0x7fff); then
		echo "a second child with P_Key 0xffff was made"
		return 1
	fi
	echo "second create_child 0x7fff (= 0xffff): $err"
	[[ $err == *'not unique'* ]] && [ "$(ipoib_links)" = "$n" ]
}

t_sysfs_bad_values() {
	local v err n rc=0
	n=$(ipoib_links)
	for v in 0 0x8000 0x10000 -1 abc 0x8001x ''; do
		if err=$(write $NET/ib0/create_child "$v"); then
			echo "create_child '$v' accepted"
			rc=1
		elif [[ $err != *'Invalid argument'* ]]; then
			echo "create_child '$v': $err (want Invalid argument)"
			rc=1
		fi
	done
	[ "$(ipoib_links)" = "$n" ] || { echo "interfaces $n -> $(ipoib_links)"; rc=1; }
	return $rc
}

t_no_grandchild() {
	local out
	[ ! -e $NET/ib0.ffff/create_child ] || return 1
	if out=$(ip link add link ib0.ffff name grand type ipoib 2>&1); then
		echo "a child of a child was made"
		ip link del grand
		return 1
	fi
	echo "ip link add link ib0.ffff: $out"
	[ ! -e $NET/grand ]
}

t_sysfs_delete() {
	local err
	write $NET/ib0/delete_child 0xffff || return 1
	wait_for 10 test ! -e $NET/ib0.ffff || { echo "ib0.ffff still there"; return 1; }
	if err=$(write $NET/ib0/delete_child 0xffff); then
		echo "delete_child of a missing child succeeded"
		return 1
	fi
	echo "delete_child again: $err"
	[[ $err == *'No such device'* ]]
}

# --- netlink (ipoib-cni, systemd-networkd) ---

# A child whose P_Key is in no table (rxe's holds only 0xffff) comes up
# with carrier off, as the kernel's IPoIB does, instead of failing to
# open; the InfiniBand suite shows it coming up once the SM adds it.
t_nl_absent_pkey() {
	local rc=0
	ip link add link ib0 name nlp0 type ipoib pkey 0x8001 || return 1
	ip link set nlp0 up || { echo "open refused"; rc=1; }
	sleep 2
	ip -o link show nlp0
	ip -o link show nlp0 | grep -q 'LOWER_UP' && { echo "carrier on"; rc=1; }
	ip -o link show nlp0 | grep -q '<.*UP' || rc=1
	ip link del nlp0 || rc=1
	return $rc
}

t_nl_parent_pkey() {
	local out
	ip link add link ib0 name nlc0 type ipoib || return 1
	out=$(ip -d link show nlc0) || return 1
	echo "$out"
	[[ $out == *'nlc0@ib0'* ]] && [[ $out =~ pkey\ +0xffff ]] &&
		[[ $out =~ mode\ +datagram ]]
}

t_nl_share_pkey() {
	local out
	ip link add link ib0 name nlc1 type ipoib pkey 0xffff mode connected umcast 1 ||
		return 1
	out=$(ip -d link show nlc1) || return 1
	echo "$out"
	[[ $out =~ mode\ +connected ]] && [[ $out =~ umcast\ +0*1 ]] &&
		[ "$(val $NET/nlc1/mode)" = connected ]
}

t_nl_refused() {
	local out rc=0 n q
	n=$(ipoib_links)
	q=$(ipng_qps)
	if out=$(ip link add link ib0 name nlc0 type ipoib 2>&1); then
		echo "a second nlc0 was made"
		rc=1
	else
		echo "name nlc0 taken: $out"
	fi
	if out=$(ip link add link ib0 name bad0 type ipoib pkey 0x8000 2>&1); then
		echo "pkey 0x8000 accepted"
		rc=1
	else
		echo "pkey 0x8000: $out"
	fi
	if out=$(ip link add name bad1 type ipoib 2>&1); then
		echo "a child without a parent was made"
		rc=1
	else
		echo "no parent: $out"
	fi
	if out=$(ip link add link lo name bad2 type ipoib 2>&1); then
		echo "a child of lo was made"
		rc=1
	else
		echo "parent lo: $out"
	fi
	[ "$(ipoib_links)" = "$n" ] || { echo "interfaces $n -> $(ipoib_links)"; rc=1; }
	[ "$(ipng_qps)" = "$q" ] || { echo "QPs $q -> $(ipng_qps)"; rc=1; }
	return $rc
}

# umcast through sysfs and netlink (changelink), the same setting; a bad
# value changes nothing.
t_umcast() {
	local out err
	[ "$(val $NET/nlc1/umcast)" = 1 ] || { echo "nlc1 made with umcast 1 reads $(val $NET/nlc1/umcast)"; return 1; }
	[ "$(val $NET/ib0/umcast)" = 0 ] || { echo "ib0 umcast $(val $NET/ib0/umcast)"; return 1; }
	write $NET/ib0/umcast 1 || return 1
	out=$(ip -d link show ib0) || return 1
	[[ $out =~ umcast\ +0*1 ]] || { echo "$out"; return 1; }
	ip link set ib0 type ipoib umcast 0 || return 1
	[ "$(val $NET/ib0/umcast)" = 0 ] || { echo "netlink umcast 0: sysfs says $(val $NET/ib0/umcast)"; return 1; }
	if err=$(write $NET/ib0/umcast yes); then
		echo "umcast 'yes' accepted"
		return 1
	fi
	echo "umcast 'yes': $err"
	[[ $err == *'Invalid argument'* ]] && [ "$(val $NET/ib0/umcast)" = 0 ]
}

# refused_all PREFIX... :: OP...: the operations (each "sysfs FILE VALUE"
# for a write to ib0's FILE or "run PROGRAM ARGS", words without quotes)
# in one bash started by PREFIX (setpriv or unshare: one program start
# for all of them, as each costs about a second here); every one must fail
# with EPERM.
refused_all() {
	local pre=() op script='' out line sec='' ok=1 rc=0
	while [ "$1" != :: ]; do pre+=("$1"); shift; done
	shift
	for op in "$@"; do
		script+="echo '@ $op';"
		case $op in
		sysfs\ *)
			op=${op#sysfs }
			script+="echo ${op#* } 2>&1 > $NET/ib0/${op%% *} && echo ALLOWED;" ;;
		run\ *) script+="${op#run } 2>&1 && echo ALLOWED;" ;;
		esac
	done
	out=$("${pre[@]}" bash -c "$script echo '@ end'" 2>&1)
	while IFS= read -r line; do
		case $line in
		'@ '*)
			if [ -n "$sec" ] && [ $ok = 0 ]; then
				echo "not refused with EPERM: $sec"
				rc=1
			fi
			sec=${line#@ } ok=0 ;;
		ALLOWED) ok=0; sec+=" (allowed)"; echo "allowed: $sec"; rc=1; sec='' ;;
		*'ot permitted'*) ok=1 ;;
		*) [ -n "$sec" ] && echo "$sec: $line" ;;
		esac
	done <<<"$out"
	[ "$sec" = end ] || { echo "incomplete: $out"; return 1; }
	return $rc
}

SYSFS_WRITES=("sysfs create_child 0x8001" "sysfs delete_child 0xffff" "sysfs mode connected"
	      "sysfs umcast 1")

# unchanged N MODE USECS: the interface count, ib0's mode, umcast and
# rx-usecs are as they were.
unchanged() {
	local rc=0
	[ "$(ipoib_links)" = "$1" ] || { echo "interfaces $1 -> $(ipoib_links)"; rc=1; }
	[ "$(val $NET/ib0/mode)" = "$2" ] || { echo "mode changed"; rc=1; }
	[ "$(val $NET/ib0/umcast)" = 0 ] || { echo "umcast changed"; rc=1; }
	[ "$(ethtool -c ib0 | grep '^rx-usecs:')" = "$3" ] || { echo "coalescing changed"; rc=1; }
	return $rc
}

# Root without CAP_NET_ADMIN changes nothing through sysfs, netlink or
# ethtool.
t_privileges() {
	local n rc=0 mode usecs
	n=$(ipoib_links)
	mode=$(val $NET/ib0/mode)
	usecs=$(ethtool -c ib0 | grep '^rx-usecs:')
	refused_all setpriv --bounding-set=-net_admin --inh-caps=-net_admin -- :: \
		"${SYSFS_WRITES[@]}" "run ip link add link ib0 name nocap0 type ipoib" \
		"run ip link set ib0 type ipoib mode connected" \
		"run ethtool -C ib0 rx-usecs 17" || rc=1
	unchanged "$n" "$mode" "$usecs" || rc=1
	return $rc
}

# Neither does root of a user namespace of its own: it has CAP_NET_ADMIN
# there, not in the user namespace that owns ib0's network namespace.
t_userns_root() {
	local n rc=0 mode usecs
	n=$(ipoib_links)
	mode=$(val $NET/ib0/mode)
	usecs=$(ethtool -c ib0 | grep '^rx-usecs:')
	refused_all unshare -U -r -- :: "${SYSFS_WRITES[@]}" || rc=1
	unchanged "$n" "$mode" "$usecs" || rc=1
	return $rc
}

t_nl_delete() {
	ip link del nlc0 && ip link del nlc1 || return 1
	ip link del ib0
	[ ! -e $NET/nlc0 ] && [ ! -e $NET/nlc1 ] && [ -e $NET/ib0 ] &&
		[ "$(ipoib_links)" = 1 ]
}

# --- the ipoib-cni flow, pod to pod between the VMs ---

QPS0=0

pod() { ip netns exec $POD "$@"; }
pod_up() { [[ $(ip -n $POD link show net1 2>/dev/null) == *LOWER_UP* ]]; }

t_cni_setup() {
	local mtu
	mtu=$(val $NET/ib0/mtu)
	ip netns add $POD &&
		ip link add link ib0 name cni0 type ipoib mode datagram umcast 1 &&
		ip link set cni0 netns $POD &&
		ip -n $POD link set cni0 name net1 &&
		pod sysctl -qw net.ipv4.conf.net1.proxy_arp=1 &&
		ip -n $POD link set net1 mtu "$mtu" &&
		ip -n $POD addr add "$PODIP/24" dev net1 &&
		ip -n $POD link set net1 up || return 1
	wait_for 15 pod_up || { ip -n $POD -d link show; return 1; }
	[ "$(pod cat /proc/net/ipoib/net1/stats | kv_get pkey)" = 0xffff ]
}

t_pod_ping() { pod ping -c 5 -w 20 "$PEERPOD" | tail -3; }

t_pod_xfer() {
	local rc sum got
	if [ "$ME" = 2 ]; then
		(pod python3 "$XFER" recv "$PODIP" 5003 /tmp/pod-recv.bin 120; echo $? > /tmp/pod-xfer.rc) \
			> /tmp/pod-xfer.out 2>&1 &
		sleep 3
	else
		head -c $XFER_BYTES /dev/urandom > /tmp/pod-send.bin
		vm_publish "pod-sha-$1" "$(sha256sum < /tmp/pod-send.bin)"
	fi
	vm_barrier "pod-xfer-$1" 120 || return 1
	if [ "$ME" = 1 ]; then
		pod python3 "$XFER" send "$PEERPOD" 5003 /tmp/pod-send.bin 120
		return
	fi
	wait_for 150 test -s /tmp/pod-xfer.rc || { echo "transfer still running"; return 1; }
	rc=$(val /tmp/pod-xfer.rc)
	rm -f /tmp/pod-xfer.rc
	[ "$rc" = 0 ] || { tail -5 /tmp/pod-xfer.out; return 1; }
	sum=$(vm_fetch 1 "pod-sha-$1" 60) || return 1
	got=$(sha256sum < /tmp/pod-recv.bin)
	echo "sent $sum, received $got"
	[ "$got" = "$sum" ]
}

t_pod_connected() {
	ip -n $POD link set net1 type ipoib mode connected || return 1
	[[ $(ip -n $POD -d link show net1) =~ mode\ +connected ]]
}

t_pod_connection() {
	local n
	t_pod_ping || return 1
	n=$(pod cat /proc/net/ipoib/net1/stats | kv_get connections)
	echo "net1 connections: $n"
	[ "${n:-0}" -ge 1 ]
}

t_parent_works() { ping_each 3 "$PEERIP"; }

no_cni_child() { [ "$(ipoib_links)" = 1 ] && [ "$(ipng_qps)" = "$QPS0" ]; }

t_netns_delete() {
	ip netns del $POD || return 1
	if ! wait_for 30 no_cni_child; then
		echo "after ip netns del: $(ipoib_links) ipoib links, $(ipng_qps) QPs (before the child: $QPS0)"
		ip -o -d link show
		return 1
	fi
	[ ! -e /proc/net/ipoib/net1 ] && [ ! -e $NET/cni0 ]
}

# --- cycles and removal ---

t_cycles() {
	local i
	for ((i = 0; i < CYCLES; i++)); do
		write $NET/ib0/create_child 0xffff || { echo "cycle $i: create"; return 1; }
		write $NET/ib0/delete_child 0xffff || { echo "cycle $i: delete"; return 1; }
	done
	wait_for 30 no_cni_child || { echo "$(ipng_qps) QPs after $CYCLES cycles, $QPS0 before"; return 1; }
	echo "$CYCLES cycles, $(ipng_qps) QPs as before"
}

# --- the parent removed under traffic ---
# Each VM: a sysfs child and an addressed netlink child of ib0, iperf3
# both ways between the netlink children; then, streams running, vm1
# removes the device (rdma link delete rxe0) and vm2 unloads the module.
# The children go with their parent, their QPs with them, every iperf3
# ends by itself; vm1 gets rxe0 back and unloads the module too.
KIDIP=10.17.0.$ME
PEERKID=10.17.0.$PEER
kid_up() { [[ $(ip -o link show nlc2 2>/dev/null) == *LOWER_UP* ]]; }
kid_answers() { ping -c 1 -W 2 "$PEERKID" > /dev/null; }
no_kids() { [ ! -e $NET/nlc2 ] && [ ! -e $NET/ib0.ffff ]; }
no_qps() { [ "$(ipng_qps)" = 0 ]; }

t_kids_traffic() {
	local p0 p1
	write $NET/ib0/create_child 0xffff &&
		ip link add link ib0 name nlc2 type ipoib &&
		ip addr add "$KIDIP/24" dev nlc2 && ip link set nlc2 up || return 1
	wait_for 15 kid_up || return 1
	bg_start kid-srv 120 iperf3 -s -1 -B "$KIDIP" --rcv-timeout 8000
	vm_barrier children-kids-listen 120 || return 1
	wait_for 30 kid_answers || { echo "no answer from $PEERKID"; return 1; }
	bg_start kid-cli 120 iperf3 -c "$PEERKID" -t 30 -i 5 --snd-timeout 8000
	sleep 6
	p0=$(proc_stat tx_packets /proc/net/ipoib/nlc2/stats)
	sleep 2
	p1=$(proc_stat tx_packets /proc/net/ipoib/nlc2/stats)
	echo "nlc2 tx_packets $p0 -> $p1"
	[ "$p1" -gt "$p0" ]
}

t_remove_under_traffic() {
	vm_barrier children-kids-remove 120 || return 1
	if [ "$ME" = 1 ]; then
		rdma link delete rxe0 || return 1
	else
		rmmod ipoib_ng || return 1
	fi
	wait_for 30 no_kids || { ip -o link; return 1; }
	wait_for 30 no_qps || { rdma res show qp; return 1; }
	bg_ended 100 kid-cli kid-srv
}

# vm1: rxe0 back, ib0 made again, then the module unloads cleanly.
t_after_removal() {
	if [ "$ME" = 1 ]; then
		rdma link add rxe0 type rxe netdev eth0 &&
			wait_for 30 test -e $NET/ib0 || return 1
		rmmod ipoib_ng || return 1
	fi
	[ ! -e /sys/module/ipoib_ng ] && [ ! -e $NET/ib0 ]
}

ktap_begin ipoib_ng_e2e_children
check() { ktap_check "$@"; }
check setup_ib0_up setup
QPS0=$(ipng_qps)
check sysfs_create_child_ib0_ffff t_sysfs_create
check sysfs_same_pkey_not_unique t_sysfs_duplicate
check sysfs_bad_pkeys_refused_nothing_made t_sysfs_bad_values
check no_child_of_a_child t_no_grandchild
check sysfs_delete_child_then_enodev t_sysfs_delete
check netlink_child_with_parents_pkey t_nl_parent_pkey
check netlink_children_share_pkey_mode_umcast t_nl_share_pkey
check netlink_taken_name_bad_pkey_no_parent_refused t_nl_refused
check netlink_child_absent_pkey_up_no_carrier t_nl_absent_pkey
check umcast_sysfs_and_netlink t_umcast
check privileges_needed t_privileges
if unshare -U -r true 2>/dev/null; then
	check user_namespace_root_refused t_userns_root
else
	ktap_skip user_namespace_root_refused "kernel without user namespaces (CONFIG_USER_NS)"
fi
check netlink_del_children_not_parent t_nl_delete
vm_barrier children-cni 300
check cni_child_in_namespace_renamed_up t_cni_setup
vm_barrier children-cni-up 300
check cni_pod_to_pod_ping t_pod_ping
check cni_pod_to_pod_sha256_datagram t_pod_xfer datagram
check cni_parent_keeps_working t_parent_works
check cni_pod_connected_mode t_pod_connected
vm_barrier children-cni-cm 300
check cni_pod_to_pod_connection t_pod_connection
check cni_pod_to_pod_sha256_connected t_pod_xfer connected
vm_barrier children-cni-done 300
check cni_netns_delete_takes_child_and_qps t_netns_delete
check "sysfs_${CYCLES}_create_delete_cycles_qps_back" t_cycles
check children_and_peer_traffic t_kids_traffic
check parent_removed_under_traffic_children_go t_remove_under_traffic
check device_back_module_unloads t_after_removal
ktap_end
