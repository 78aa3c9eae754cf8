#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare (once) and print a kernel directory for run-vms.sh that boots a
# distribution kernel exactly as its package ships it:
#
#   tests/vm/stock.sh KERNEL_RELEASE       e.g. 6.12.117+deb12-amd64
#
# The kernel image, its config and its modules are Debian's own
# (/boot/vmlinuz-<release>, /lib/modules/<release>, from linux-image-*). The
# one thing added is a small initramfs: Debian's kernel has 9p and
# virtio-net as modules, so busybox loads them (decompressed here from the
# package's .ko.xz) and moves to the host root over 9p, where
# tests/vm/guest-init.sh takes over as on the debug kernel. The directory
# (in $IPOIB_NG_CACHE, default ~/.cache/ipoib_ng) has the layout run-vms.sh
# expects: arch/x86/boot/bzImage, .config, modroot (the host root, whose
# /lib/modules has the release) and initrd.img.
set -euo pipefail

rel=${1:?usage: stock.sh KERNEL_RELEASE}
cache=${IPOIB_NG_CACHE:-$HOME/.cache/ipoib_ng}
vmlinuz=/boot/vmlinuz-$rel
[ -r "$vmlinuz" ] || { echo "stock.sh: $vmlinuz missing (apt-get install linux-image-$rel)" >&2; exit 1; }
[ -d "/lib/modules/$rel/kernel" ] || { echo "stock.sh: /lib/modules/$rel missing" >&2; exit 1; }
busybox=$(command -v busybox) || { echo "stock.sh: busybox missing (busybox-static)" >&2; exit 1; }

# Rebuilt when the kernel package, busybox or this script changes.
key=$( (stat -c '%s %Y' "$vmlinuz" "$busybox"; cat "$0") | sha256sum | cut -c1-12)
out=$cache/stock-$rel-$key
if [ -e "$out/.ipoib_ng_built" ]; then
	echo "stock.sh: stock $rel ready in $out" >&2
	echo "$out"
	exit 0
fi
rm -rf "$out" "$out.tmp"
mkdir -p "$out.tmp/arch/x86/boot" "$out.tmp/initramfs/bin" "$out.tmp/initramfs/lib"
ln -s "$vmlinuz" "$out.tmp/arch/x86/boot/bzImage"
ln -s "/boot/config-$rel" "$out.tmp/.config"
# modprobe -d <dir>/modroot finds /lib/modules/<release> of the host root.
ln -s / "$out.tmp/modroot"

ird=$out.tmp/initramfs
cp "$busybox" "$ird/bin/busybox"
# The modules that mount the root, in load order (modprobe resolves the
# dependencies), each once; virtio_pci is named because on 6.1 it is a
# module (built in on 6.12) that none of the others depends on, and
# without it the 9p device never appears.
: > "$ird/lib/order"
while read -r verb path _; do
	[ "$verb" = insmod ] || continue
	name=$(basename "$path")
	name=${name%.xz}
	grep -qx "$name" "$ird/lib/order" && continue
	case $path in
	*.xz) xz -dc "$path" > "$ird/lib/$name" ;;
	*) cp "$path" "$ird/lib/$name" ;;
	esac
	echo "$name" >> "$ird/lib/order"
done < <(modprobe -S "$rel" -a --show-depends virtio_pci 9p 9pnet_virtio virtio_net)
[ -s "$ird/lib/order" ] || { echo "stock.sh: no modules for the 9p root" >&2; exit 1; }

cat > "$ird/init" <<'EOF'
#!/bin/busybox sh
# initramfs of tests/vm/stock.sh: load the 9p and virtio-net modules, mount
# the host root as the kernel command line says, run its init.
/bin/busybox mkdir -p /proc /newroot
/bin/busybox mount -t proc proc /proc
for m in $(/bin/busybox cat /lib/order); do
	/bin/busybox insmod "/lib/$m" || echo "initramfs: insmod $m failed"
done
init=/sbin/init flags=ro
for a in $(/bin/busybox cat /proc/cmdline); do
	case $a in
	init=*) init=${a#init=} ;;
	rootflags=*) flags=ro,${a#rootflags=} ;;
	esac
done
/bin/busybox umount /proc
if ! /bin/busybox mount -t 9p -o "$flags" root /newroot; then
	echo "initramfs: cannot mount the 9p root"
	/bin/busybox poweroff -f
fi
exec /bin/busybox switch_root /newroot "$init"
EOF
chmod 755 "$ird/init"
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp/initrd.img"
cp "$ird/lib/order" "$out.tmp/initramfs.modules"
rm -rf "$ird"
touch "$out.tmp/.ipoib_ng_built"
mv "$out.tmp" "$out"
echo "stock.sh: stock $rel ready in $out ($(wc -l < "$out/initramfs.modules" 2>/dev/null || echo some) modules in its initramfs)" >&2
echo "$out"
