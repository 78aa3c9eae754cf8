#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) and print the path of the cached test kernel of one flavour.
#
#   tests/vm/kernel.sh debug|fast [--path-only]
#
# The kernel is Debian's linux-source-6.12 (IPNG_KERNEL_SERIES=6.1: its
# linux-source-6.1, the series make check used until 2026-12-06; stock 6.1
# still boots in make check), configured from tinyconfig plus the
# fragments in tests/vm/config/ (config/SERIES.config too, if there is
# one). Builds live outside the clone in
# $IPOIB_NG_CACHE (default ~/.cache/ipoib_ng), keyed by the source package
# version and a hash of the fragments, so a changed fragment or a new source
# release gives a new build and an unchanged one is reused. A build counts
# only once its stamp file exists; a partial build is redone.
#
# tests/vm/patches/SERIES/*.patch (fixes of kernel code the tests run
# through, for bugs fixed upstream after that series or not yet; each says
# why) are applied to the unpacked source, which is then kept apart per
# patch set; they are part of the key.
set -euo pipefail

flavour=${1:?usage: kernel.sh debug|fast [--path-only]}
case $flavour in debug|fast) ;; *) echo "kernel.sh: unknown flavour $flavour" >&2; exit 2;; esac
here=$(cd "$(dirname "$0")" && pwd)
cache=${IPOIB_NG_CACHE:-$HOME/.cache/ipoib_ng}
series=${IPNG_KERNEL_SERIES:-6.12}
tarball=/usr/src/linux-source-$series.tar.xz
srcver=$(dpkg-query -W -f='${Version}' "linux-source-$series" 2>/dev/null || echo none)
frag=("$here/config/base.config" "$here/config/$flavour.config")
# A series' own fragment (config/SERIES.config), when it needs one.
[ -e "$here/config/$series.config" ] && frag+=("$here/config/$series.config")
pdir=$here/patches/$series
shopt -s nullglob
patches=("$pdir"/*.patch)
shopt -u nullglob
key=$( (echo "$srcver"; cat "${frag[@]}" "${patches[@]}") | sha256sum | cut -c1-12)
src=$cache/src-$srcver
if [ ${#patches[@]} -gt 0 ]; then
	src+=-p$(cat "${patches[@]}" | sha256sum | cut -c1-8)
fi
out=$cache/build-$flavour-$key

if [ "${2:-}" = --path-only ]; then
	echo "$out"
	exit 0
fi
if [ -e "$out/.ipoib_ng_built" ]; then
	echo "kernel.sh: $flavour kernel cached in $out" >&2
	echo "$out"
	exit 0
fi
[ -r "$tarball" ] || { echo "kernel.sh: $tarball missing (apt-get install linux-source-$series)" >&2; exit 1; }

# One build of a flavour at a time: a second caller waits for the first
# and then finds the stamp (a partial build is otherwise wiped and redone).
mkdir -p "$cache"
exec 9> "$cache/kernel-$flavour.lock"
flock 9
if [ -e "$out/.ipoib_ng_built" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache"
if [ ! -e "$src/.unpacked" ]; then
	echo "kernel.sh: unpacking $tarball" >&2
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -C "$src.tmp" --strip-components=1 -xf "$tarball"
	for p in "${patches[@]}"; do
		echo "kernel.sh: applying ${p##*/}" >&2
		patch -s -p1 -d "$src.tmp" < "$p" ||
			{ echo "kernel.sh: ${p##*/} does not apply" >&2; exit 1; }
	done
	touch "$src.tmp/.unpacked"
	mv "$src.tmp" "$src"
fi

echo "kernel.sh: building $flavour kernel in $out" >&2
rm -rf "$out"
mkdir -p "$out"
jobs=$(nproc)
cc=gcc
command -v ccache >/dev/null && cc="ccache gcc"
make -s -C "$src" O="$out" CC="$cc" tinyconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frag[@]}" >/dev/null
make -s -C "$src" O="$out" CC="$cc" olddefconfig >&2
# Every fragment line must have survived olddefconfig; a silently dropped
# option (a missing dependency) would weaken the tests.
missing=0
while read -r line; do
	case $line in
	CONFIG_*=n) opt=${line%%=*}
		grep -q "^$opt=" "$out/.config" && { echo "kernel.sh: $opt still set" >&2; missing=1; } ;;
	CONFIG_*) grep -qx "$line" "$out/.config" || { echo "kernel.sh: $line not in .config" >&2; missing=1; } ;;
	esac
done < <(cat "${frag[@]}")
[ $missing = 0 ] || exit 1
echo "kernel.sh: compiling (about 15 minutes on 2 cores; cached afterwards)" >&2
make -s -C "$src" O="$out" CC="$cc" -j"$jobs" bzImage modules >&2 &
mk=$!
t0=$SECONDS
# Progress for whoever waits: objects built so far, once a minute.
while kill -0 "$mk" 2>/dev/null; do
	sleep 5
	[ $(((SECONDS - t0) % 60)) -lt 5 ] &&
		echo "kernel.sh: $(find "$out" -name '*.o' | wc -l) objects built, $((SECONDS - t0)) s" >&2
done
wait "$mk" || { echo "kernel.sh: kernel build failed" >&2; exit 1; }
echo "kernel.sh: built in $((SECONDS - t0)) s" >&2
# A private module tree for modprobe -d inside the guests.
make -s -C "$src" O="$out" INSTALL_MOD_PATH="$out/modroot" modules_install >&2
touch "$out/.ipoib_ng_built"
echo "$out"
