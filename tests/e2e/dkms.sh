#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# e2e suite ipoib_ng_e2e_dkms (distribution kernels): ipoib_ng installed
# with DKMS the way README.md tells a user, against the kernel's headers,
# and what a user sees of it: dkms status, modinfo's file, version and
# parameters, modprobe finding the module. The built module is kept in
# /run/ipoib_ng-dkms.ko for the suites that run after this one
# (guest-main.sh passes it on as IPNG_KO).
#
# Two ways in:
# - IPNG_DKMS_INSTALLED=1 (make check): the host installed the module for
#   this kernel before it booted (tests/vm/dkms-host.sh: dkms ldtarball,
#   dkms install -k, later dkms remove), as a user does for a kernel that
#   apt just installed; the guest sees it through the 9p root. depmod over
#   the package's 4230 modules takes 5-10 s on the host and 8-17 minutes
#   in an emulated guest.
# - otherwise the guest installs it: /usr/src and the kernel's module
#   directory get a tmpfs overlay (the root is the host's, read-only), then
#   dkms ldtarball of $IPNG_DKMS_TARBALL (a build made on the host with
#   dkms mktarball: compiling in the guest takes many minutes) or dkms add,
#   dkms install, and at the end dkms remove and that nothing is left.
set -u
. "$IPNG_REPO/tests/vm/guest-lib.sh"

REL=$(uname -r)
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$IPNG_REPO/dkms.conf")
MODS=/usr/lib/modules/$REL
KEEP=/run/ipoib_ng-dkms.ko

note() { printf '%s\n' "$*" >> "$IPNG_OUT/dkms-notes.txt"; }

# overlay DIR NAME: DIR writable, its changes in a tmpfs under /run.
overlay() {
	local up=/run/ipng-overlay/$2
	mkdir -p "$up/upper" "$up/work" &&
		mount -t overlay "ipng-$2" \
			-o "lowerdir=$1,upperdir=$up/upper,workdir=$up/work" "$1"
}

t_writable() {
	modprobe overlay || return 1
	overlay /usr/src src && overlay "$MODS" modules &&
		touch /usr/src/.ipng-w "$MODS/.ipng-w" &&
		rm -f /usr/src/.ipng-w "$MODS/.ipng-w"
}

# As README.md says: the sources in /usr/src/ipoib_ng-<version> (only the
# tracked files: the clone may hold build products and results).
t_add() {
	local dst=/usr/src/ipoib_ng-$VER
	if [ -n "${IPNG_DKMS_TARBALL:-}" ]; then
		dkms ldtarball "$IPNG_DKMS_TARBALL" || return 1
		dkms status ipoib_ng
		dkms status ipoib_ng | grep -q "ipoib_ng/$VER, $REL, x86_64: built"
		return
	fi
	mkdir -p "$dst" &&
		git -C "$IPNG_REPO" ls-files -z | (cd "$IPNG_REPO" && cpio -0pdm --quiet "$dst") &&
		dkms add -m ipoib_ng -v "$VER" &&
		dkms status ipoib_ng | grep -q "ipoib_ng/$VER: added"
}

t_install() {
	local t=$SECONDS
	dkms install -m ipoib_ng -v "$VER" -k "$REL" || return 1
	echo "dkms install took $((SECONDS - t)) s"
	note "dkms install: $((SECONDS - t)) s"
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
	# The built module, kept for the suites after this one.
	xz -dcf "$(modinfo -n ipoib_ng)" > "$KEEP" 2>/dev/null ||
		cp "$(modinfo -n ipoib_ng)" "$KEEP"
	# rmmod, not modprobe -r: that would unload the RDMA modules ipoib_ng
	# pulled in, which the later suites' insmod needs.
	rmmod ipoib_ng && ! [ -e /sys/class/net/ib0 ]
}

t_remove() {
	local t=$SECONDS
	dkms remove ipoib_ng/"$VER" --all || return 1
	note "dkms remove: $((SECONDS - t)) s"
	! dkms status ipoib_ng | grep -q . || { dkms status ipoib_ng; return 1; }
	! ls "$MODS"/updates/dkms/ipoib_ng.ko* 2>/dev/null || return 1
	! modprobe -n ipoib_ng 2>/dev/null
}

# Installed before this kernel booted (tests/vm/dkms-host.sh).
t_installed() {
	dkms status ipoib_ng
	dkms status ipoib_ng | grep -q "ipoib_ng/$VER, $REL, x86_64: installed"
}

ktap_begin ipoib_ng_e2e_dkms
if [ "${IPNG_DKMS_INSTALLED:-0}" = 1 ]; then
	ktap_check "dkms_status_installed_for_running_kernel" t_installed
	ktap_check "modinfo_version_params_updates_dkms" t_modinfo
	ktap_check "modprobe_loads_it_ib0_appears" t_modprobe
	ktap_check "built_module_kept_for_later_suites" test -s "$KEEP"
	ktap_end
	exit
fi
ktap_check "usr_src_and_modules_writable" t_writable
if [ -n "${IPNG_DKMS_TARBALL:-}" ]; then
	ktap_check "dkms_ldtarball_built_on_host" t_add
else
	ktap_check "dkms_add" t_add
fi
ktap_check "dkms_install_for_running_kernel" t_install
ktap_check "modinfo_version_params_updates_dkms" t_modinfo
ktap_check "modprobe_loads_it_ib0_appears" t_modprobe
ktap_check "dkms_remove_cleans_up" t_remove
ktap_check "built_module_kept_for_later_suites" test -s "$KEEP"
ktap_end
