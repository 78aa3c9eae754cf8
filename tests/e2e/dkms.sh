#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# e2e suite ipoib_ng_e2e_dkms (distribution kernels): ipoib_ng as DKMS
# installed it for the running kernel, and what a user sees of it: dkms
# status, modinfo's file, version and parameters, modprobe finding and
# loading the module. The module is kept in /run/ipoib_ng-dkms.ko for the
# suites that run after this one (guest-main.sh passes it on as IPNG_KO).
#
# The host installed it before this kernel booted (tests/vm/dkms-host.sh:
# dkms ldtarball, dkms install -k, and after the VMs dkms remove), as a
# user does for a kernel apt has just installed; the guest sees it through
# the 9p root, and guest-init binds the host's /var/lib/dkms when
# IPNG_DKMS_INSTALLED=1 says so. (Installing in the guest would run depmod
# over the package's 4230 modules: 8-17 minutes in an emulated guest.)
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

REL=$(uname -r)
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$IPNG_REPO/dkms.conf")
KEEP=/run/ipoib_ng-dkms.ko

t_installed() {
	dkms status ipoib_ng
	dkms status ipoib_ng | grep -q "ipoib_ng/$VER, $REL, x86_64: installed"
}

t_modinfo() {
	local file
	file=$(modinfo -n ipoib_ng) || return 1
	echo "modinfo: $file"
	# /lib is /usr/lib on Debian 12 (merged /usr): either spelling.
	[[ $file == */lib/modules/"$REL"/updates/dkms/ipoib_ng.ko* ]] || return 1
	[ "$(modinfo -F version ipoib_ng)" = "$VER" ] || { modinfo ipoib_ng; return 1; }
	modinfo -F parm ipoib_ng | grep -q '^max_connections:' &&
		modinfo -F parm ipoib_ng | grep -q '^path_timeout:'
}

t_modprobe() {
	modprobe ipoib_ng && wait_for 10 test -e /sys/class/net/ib0 || return 1
	[ "$(val /sys/class/net/ib0/type)" = 32 ] || return 1
	# The installed module, kept for the suites after this one.
	xz -dcf "$(modinfo -n ipoib_ng)" > "$KEEP" 2>/dev/null ||
		cp "$(modinfo -n ipoib_ng)" "$KEEP"
	# rmmod, not modprobe -r: that would unload the RDMA modules ipoib_ng
	# pulled in, which the later suites' insmod needs.
	rmmod ipoib_ng && ! [ -e /sys/class/net/ib0 ]
}

ktap_begin ipoib_ng_e2e_dkms
if [ "${IPNG_DKMS_INSTALLED:-0}" != 1 ]; then
	ktap_fail dkms_installed_by_host "run through tests/vm/dkms-host.sh (make check does)"
	ktap_end
	exit 1
fi
ktap_check "dkms_status_installed_for_running_kernel" t_installed
ktap_check "modinfo_version_params_updates_dkms" t_modinfo
ktap_check "modprobe_loads_it_ib0_appears" t_modprobe
ktap_check "built_module_kept_for_later_suites" test -s "$KEEP"
ktap_end
