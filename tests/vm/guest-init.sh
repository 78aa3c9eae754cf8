#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of a test VM started by run-vms.sh. Owns the guest's setup: a
# writable tmpfs root built over the read-only host root (9p), /results
# (9p, shared by all VMs), eth0 (10.9.0.<vm>/24, MTU $ipng_mtu), rdma_rxe and
# rxe0; then runs $ipng_script (or, interactive, a shell), collects kmemleak,
# writes /results/vm<vm>/status and reboots (QEMU runs with -no-reboot).
#
# Configuration comes from the kernel command line as environment
# variables: ipng_vm, ipng_nvms, ipng_script, ipng_mtu, ipng_moddir,
# ipng_repo, ipng_timeout (0 = none), ipng_interactive, and any --env pairs.
#
# PID 1 must never exit or hang: no set -e; every failure goes to die(),
# which records a nonzero status and reboots.
set -uo pipefail

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
umask 022

vm=${ipng_vm:-1}
nvms=${ipng_nvms:-2}
mtu=${ipng_mtu:-1500}
moddir=${ipng_moddir:-}
repo=${ipng_repo:-}
script=${ipng_script:-none}
script_timeout=${ipng_timeout:-0}
interactive=${ipng_interactive:-0}
out=/results/vm$vm
have_results=0

say() { echo "ipng-init[vm$vm]: $*"; }
uptime_s() { cut -d' ' -f1 /proc/uptime 2>/dev/null || echo '?'; }

reboot_now() {
	sync
	echo b > /proc/sysrq-trigger
	sleep 10
	# Not reached; if it is, exiting PID 1 panics and panic=-1 reboots.
	exit 1
}

# Record a failed setup and leave.
die() {
	say "FATAL: $*"
	if [ $have_results = 1 ]; then
		echo INIT_FAILED > "$out/status"
		echo "$*" > "$out/init-error"
	fi
	reboot_now
}
trap 'die "init exited unexpectedly"' EXIT

# Run a setup step with a time limit so that init cannot hang on it.
step() {
	local secs=$1
	shift
	timeout -k 5 "$secs" "$@"
}

say "started at uptime $(uptime_s)s"

# --- root: a tmpfs with the host's top-level directories bound read-only ---
# The 9p root is read-only and has no /results; a tmpfs root lets us add
# mount points and writable directories anywhere.
mount -t proc proc /proc || die "mount /proc"
nr=/run
mount -t tmpfs -o mode=0755 newroot $nr || die "tmpfs for the new root"
# Paths the run needs even if they lie under a directory that gets a tmpfs
# (e.g. a kernel dir in /root/.cache, a clone in /home).
keep=("$repo" "${moddir%/modroot}")
[ "$script" != none ] && keep+=("$(dirname "$script")")
writable=(/tmp /run /root /home /var/tmp /var/lib /var/log /var/cache /var/spool /mnt /media /srv)
skip=" /proc /sys /dev /run /tmp /results /lost+found "
for e in /*; do
	[ -e "$e" ] || [ -L "$e" ] || continue
	case "$skip" in *" $e "*) continue ;; esac
	if [ -L "$e" ]; then
		cp -P "$e" "$nr$e"
	elif [ -d "$e" ]; then
		mkdir "$nr$e"
		mount --bind "$e" "$nr$e" || die "bind $e"
	fi
done
for d in proc sys dev run tmp results; do
	mkdir -p "$nr/$d"
done
for d in "${writable[@]}"; do
	if [ -z "${d%/*}" ]; then
		mkdir -p "$nr$d"
	else
		# Below a read-only bind: only where the host has the directory.
		[ -d "$nr$d" ] || continue
	fi
	mount -t tmpfs -o mode=0755 tmpfs "$nr$d" || die "tmpfs on $d"
done
chmod 1777 "$nr/tmp" "$nr/var/tmp"
for p in "${keep[@]}"; do
	if [ -z "$p" ] || [ ! -d "$p" ]; then continue; fi
	for d in "${writable[@]}"; do
		case "$p/" in
		"$d"/*)
			mkdir -p "$nr$p"
			mount --bind "$p" "$nr$p" || die "bind $p"
			break ;;
		esac
	done
done
mount -t devtmpfs devtmpfs $nr/dev || die "mount /dev"
mkdir -p $nr/dev/pts $nr/dev/shm
cd $nr || die "cd new root"
mkdir -p oldroot
pivot_root . oldroot || die "pivot_root"
cd / || die "cd /"
umount -l /oldroot || true
rmdir /oldroot 2>/dev/null || true

mount -t proc proc /proc || die "mount /proc"
mount -t sysfs sysfs /sys || die "mount /sys"
mount -t debugfs debugfs /sys/kernel/debug || die "mount debugfs"
mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts /dev/pts || die "mount devpts"
mount -t tmpfs -o mode=1777 tmpfs /dev/shm || die "mount /dev/shm"
mkdir -p /run/lock /run/netns /root/.config
ln -sf /proc/self/fd /dev/fd 2>/dev/null || true
ln -sf /proc/self/fd/0 /dev/stdin 2>/dev/null || true
ln -sf /proc/self/fd/1 /dev/stdout 2>/dev/null || true
ln -sf /proc/self/fd/2 /dev/stderr 2>/dev/null || true
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none results /results ||
	die "mount /results (9p tag results)"
mkdir -p "$out" /results/sync
have_results=1
rm -f "$out/status"

hostname "vm$vm"
say "root ready at uptime $(uptime_s)s"

# --- network: eth0 is the underlying link for rxe ---
peer=$((vm == 1 ? 2 : 1))
ip link set lo up || die "lo up"
[ -e /sys/class/net/eth0 ] || die "no eth0"
ip link set eth0 mtu "$mtu" || die "eth0 mtu $mtu"
ip link set eth0 up || die "eth0 up"
ip addr add "10.9.0.$vm/24" dev eth0 || die "eth0 address"

# --- soft-RoCE ---
step 300 modprobe -d "$moddir" rdma_rxe || die "modprobe rdma_rxe"
step 120 modprobe -d "$moddir" ib_uverbs || say "warning: ib_uverbs did not load"
step 120 modprobe -d "$moddir" ib_umad || say "warning: ib_umad did not load"
step 120 rdma link add rxe0 type rxe netdev eth0 || die "rdma link add rxe0"
state=/sys/class/infiniband/rxe0/ports/1/state
for ((n = 0; n < 600; n++)); do
	grep -q ACTIVE "$state" 2>/dev/null && break
	sleep 0.1
done
grep -q ACTIVE "$state" 2>/dev/null || die "rxe0 port not ACTIVE ($(cat "$state" 2>/dev/null))"
say "rxe0 ACTIVE, setup done at uptime $(uptime_s)s"

# Forget kmemleak's view of boot and setup: report only what the script leaks.
kmemleak=/sys/kernel/debug/kmemleak
if [ -w $kmemleak ]; then
	echo scan > $kmemleak
	echo clear > $kmemleak
fi

export IPNG_VM=$vm IPNG_NVMS=$nvms IPNG_PEER_VM=$peer IPNG_PEER_IP=10.9.0.$peer
export IPNG_RESULTS=/results IPNG_OUT=$out IPNG_MODDIR=$moddir IPNG_REPO=$repo
export IPNG_MTU=$mtu IPNG_SCRIPT=$script IPNG_LIB=$repo/tests/vm/guest-lib.sh
unset ipng_vm ipng_nvms ipng_mtu ipng_moddir ipng_repo ipng_script ipng_timeout ipng_interactive

rc=0
if [ "$interactive" = 1 ] && [ "$vm" = 1 ]; then
	[ -n "${ipng_term:-}" ] && export TERM=$ipng_term
	stty -F /dev/ttyS0 rows "${ipng_rows:-24}" cols "${ipng_cols:-80}" 2>/dev/null || true
	unset ipng_term ipng_rows ipng_cols
	cat <<-EOF
	
	=== vm$vm: interactive shell (exit or Ctrl-D powers off both VMs; Ctrl-A x kills QEMU)
	=== eth0 10.9.0.$vm/24, peer vm$peer at $IPNG_PEER_IP; rxe0 is up; results in /results
	=== modprobe -d \$IPNG_MODDIR <module>; guest script: \$IPNG_SCRIPT; helpers: . \$IPNG_LIB
	EOF
	cd /root || true
	setsid -w -c /bin/bash -l </dev/ttyS0 >/dev/ttyS0 2>&1 || rc=$?
elif [ "$interactive" = 1 ]; then
	say "interactive run: idle until vm1 ends"
	while :; do sleep 3600; done
elif [ "$script" = none ] || [ ! -r "$script" ]; then
	say "no guest script ($script)"
	rc=127
else
	say "running $script (timeout ${script_timeout}s)"
	cd "$out" || die "cd $out"
	run=(bash "$script")
	[ -x "$script" ] && run=("$script")
	if [ "$script_timeout" != 0 ]; then
		run=(timeout -k 10 "$script_timeout" "${run[@]}")
	fi
	"${run[@]}" </dev/null 2>&1 | tee "$out/script.log"
	rc=${PIPESTATUS[0]}
	cd / || true
	[ "$script_timeout" != 0 ] && [ "$rc" = 124 ] &&
		say "script timed out after ${script_timeout}s"
fi
say "script exit code $rc at uptime $(uptime_s)s"

if [ -w $kmemleak ]; then
	echo scan > $kmemleak
	sleep 5
	echo scan > $kmemleak
	cat $kmemleak > "$out/kmemleak.txt"
	if [ -s "$out/kmemleak.txt" ]; then
		say "kmemleak report:"
		cat "$out/kmemleak.txt"
	else
		say "kmemleak: no leaks"
	fi
fi

echo "$rc" > "$out/status"
trap - EXIT
say "done at uptime $(uptime_s)s, rebooting"
reboot_now
