#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DKMS install behind make check's distribution-kernel VMs, done the
# way a Debian user installs a module for a kernel before booting it:
#
#   tests/vm/dkms-host.sh RELEASE TARBALL KTAP -- COMMAND...
#
# In a mount namespace of its own, with overlays on /usr/src,
# /var/lib/dkms and /usr/lib/modules/RELEASE whose changes stay in a
# temporary directory (nothing reaches the host's own files):
#   dkms ldtarball TARBALL      the build make check made with dkms build
#   dkms install -k RELEASE     copies it to updates/dkms and runs depmod
#   COMMAND                     run-vms.sh booting RELEASE from this root:
#                               the guests see the installed module, and
#                               the dkms suite there modprobes it
#   dkms remove --all           and nothing of it is left
# Each step is a case of the KTAP suite ipoib_ng_host_dkms written to
# KTAP; the exit status is COMMAND's, or 1 if a step failed.
#
# Why on the host: depmod reads every module of the kernel package (4230
# xz-compressed files for 6.12), which takes 5-10 s here and 8-17
# minutes in an emulated guest, twice (install and remove).
set -u

rel=${1:?usage: dkms-host.sh RELEASE TARBALL KTAP -- COMMAND...}
tarball=${2:?} ktap=${3:?}
shift 3
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "dkms-host.sh: no command" >&2; exit 2; }

if [ -z "${IPNG_DKMS_NS:-}" ]; then
	exec env IPNG_DKMS_NS=1 unshare --mount --propagation private \
		"$0" "$rel" "$tarball" "$ktap" -- "$@"
fi

repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=guest-lib.sh
. "$repo/tests/vm/guest-lib.sh"

ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/dkms.conf")
mods=/usr/lib/modules/$rel
scratch=$(mktemp -d /tmp/ipng-dkms.XXXXXX)
trap 'umount "$mods" /var/lib/dkms /usr/src 2> /dev/null; rm -rf "$scratch"' EXIT

# overlay DIR NAME: DIR writable in this namespace, its changes in $scratch.
overlay() {
	mkdir -p "$scratch/$2/upper" "$scratch/$2/work" &&
		mount -t overlay "ipng-$2" \
			-o "lowerdir=$1,upperdir=$scratch/$2/upper,workdir=$scratch/$2/work" "$1"
}

t_overlays() {
	[ -d "$mods/kernel" ] || { echo "$mods: no kernel package"; return 1; }
	mkdir -p /var/lib/dkms 2>/dev/null
	overlay /usr/src src && overlay /var/lib/dkms dkms && overlay "$mods" modules
}

t_ldtarball() {
	dkms ldtarball "$tarball" || return 1
	dkms status ipoib_ng
	dkms status ipoib_ng | grep -q "ipoib_ng/$ver, $rel, x86_64: built"
}

t_install() {
	local t=$SECONDS file
	dkms install -m ipoib_ng -v "$ver" -k "$rel" || return 1
	echo "dkms install took $((SECONDS - t)) s"
	dkms status ipoib_ng | grep -q "ipoib_ng/$ver, $rel, x86_64: installed" || return 1
	file=$(modinfo -k "$rel" -n ipoib_ng) || return 1
	echo "modinfo -k $rel: $file"
	[[ $file == */lib/modules/"$rel"/updates/dkms/ipoib_ng.ko* ]]
}

t_remove() {
	local t=$SECONDS
	dkms remove ipoib_ng/"$ver" --all || return 1
	echo "dkms remove took $((SECONDS - t)) s"
	! dkms status ipoib_ng | grep -q . || { dkms status ipoib_ng; return 1; }
	! ls "$mods"/updates/dkms/ipoib_ng.ko* 2>/dev/null || return 1
	! modinfo -k "$rel" -n ipoib_ng 2>/dev/null
}

rc=0
ktap_begin ipoib_ng_host_dkms 2> /dev/null
ktap_check usr_src_var_lib_dkms_modules_overlaid t_overlays
ktap_check dkms_ldtarball_host_build t_ldtarball
ktap_check dkms_install_for_the_stock_kernel t_install
if [ "$KTAP_RC" = 0 ]; then
	"$@" || rc=$?
	ktap_clock_restart
	ktap_check dkms_remove_cleans_up t_remove
else
	ktap_skip dkms_remove_cleans_up "not installed"
	rc=1
fi
ktap_end > "$ktap" 2> /dev/null || rc=1
exit $rc
