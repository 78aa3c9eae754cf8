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
# The C locale: a UTF-8 one makes every coreutils and grep start load it,
# which doubles their cost in a debug guest (about 1 s against 2 s each).
export HOME=/root LANG=C
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
# Builtins where possible: under TCG with KASAN every exec costs ~0.5 s.
uptime_s() {
	local up='?' rest
	read -r up rest < /proc/uptime
	echo "$up"
}

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

# --- root: a tmpfs with the host's top-level directories bound read-only ---
# The 9p root is read-only and has no /results; a tmpfs root lets us add
# mount points and writable directories anywhere. All mounts are listed in
# one fstab and done by a single `mount -a`.
# (Until proc is mounted, /proc is the host's, seen through 9p.)
mount -t proc proc /proc || die "mount /proc"
say "started at uptime $(uptime_s)s"
nr=/run
mount -t tmpfs -o mode=0755 newroot $nr || die "tmpfs for the new root"
fstab=$nr/.ipng-fstab
esc() {
	local p=${1// /\\040}
	echo "${p//	/\\011}"
}
add() { echo "$(esc "$1") $(esc "$nr$2") $3 $4,X-mount.mkdir 0 0" >> $fstab; }
: > $fstab
links=()
for e in /*; do
	case $e in /proc|/sys|/dev|/run|/tmp|/results|/lost+found|/boot|/media|/mnt|/srv) continue ;; esac
	if [ -L "$e" ]; then
		links+=("$e")
	elif [ -d "$e" ]; then
		add "$e" "$e" none bind
	fi
done
# Writable places (the host root is read-only); nested ones only where the
# host has the directory to mount on.
writable=(/root /home /var/tmp /var/lib /var/log /var/cache)
for d in "${writable[@]}"; do
	mode=0755
	[ "$d" = /var/tmp ] && mode=1777
	if [ -d "$d" ]; then add tmpfs "$d" tmpfs mode=$mode; fi
done
add tmpfs /tmp tmpfs mode=1777
add tmpfs /run tmpfs mode=0755
# Paths the run needs even if they lie below a tmpfs just added or a
# directory left out (e.g. the kernel dir in /root/.cache, a clone in /home,
# a script in /tmp): bind them back, last.
keep=("$repo" "${moddir%/modroot}")
[ "$script" != none ] && keep+=("${script%/*}")
# DKMS's records of a module the host installed for this kernel
# (tests/vm/dkms-host.sh), as a machine booted into it sees them.
[ "${IPNG_DKMS_INSTALLED:-0}" = 1 ] && keep+=(/var/lib/dkms)
for p in "${keep[@]}"; do
	case $p in /|/proc/*|/sys/*|/dev/*|/run/*) continue ;; esac
	[ -d "$p" ] && add "$p" "$p" none bind
done
add proc /proc proc defaults
add sysfs /sys sysfs defaults
add debugfs /sys/kernel/debug debugfs defaults
add devtmpfs /dev devtmpfs defaults
add devpts /dev/pts devpts gid=5,mode=0620,ptmxmode=0666
add tmpfs /dev/shm tmpfs mode=1777
add results /results 9p trans=virtio,version=9p2000.L,msize=262144,cache=none
if [ ${#links[@]} -gt 0 ]; then
	cp -P "${links[@]}" $nr/ || die "copy top-level symlinks"
fi
mount -a -T $fstab || die "mounts listed in $fstab"
cd $nr || die "cd new root"
# The old root goes on /run for a moment, over the new /run tmpfs.
pivot_root . run || die "pivot_root"
cd / || die "cd /"
umount -l /run || say "warning: could not detach the old root"
for f in fd:/proc/self/fd stdin:/proc/self/fd/0 stdout:/proc/self/fd/1 stderr:/proc/self/fd/2; do
	ln -s "${f#*:}" "/dev/${f%%:*}" 2>/dev/null
done
if [ ! -d "$out" ]; then
	mkdir -p "$out" /results/sync || die "cannot write /results"
fi
have_results=1
echo "vm$vm" > /proc/sys/kernel/hostname
say "root ready at uptime $(uptime_s)s"

# --- network: eth0 is the underlying link for rxe ---
peer=$((vm == 1 ? 2 : 1))
[ -e /sys/class/net/eth0 ] || die "no eth0"
ip -batch - <<-EOF || die "eth0 setup (mtu $mtu)"
	link set lo up
	link set eth0 mtu $mtu
	link set eth0 up
	addr add 10.9.0.$vm/24 dev eth0
EOF

# --- modules: the kernel's own requests (crypto-crc32 for rdma_rxe, ...)
# must also use the private module tree.
printf '#!/bin/sh\nexec /usr/sbin/modprobe -d "%s" "$@"\n' "$moddir" > /run/ipng-modprobe
chmod 755 /run/ipng-modprobe
echo /run/ipng-modprobe > /proc/sys/kernel/modprobe || die "set kernel.modprobe"

# --- soft-RoCE ---
step 300 modprobe -a -d "$moddir" rdma_rxe ib_uverbs ib_umad ib_cm
[ -d /sys/module/rdma_rxe ] || die "modprobe rdma_rxe"
step 120 rdma link add rxe0 type rxe netdev eth0 || die "rdma link add rxe0"
state=/sys/class/infiniband/rxe0/ports/1/state
st=''
for ((n = 0; n < 300; n++)); do
	read -r st < "$state"
	[[ $st == *ACTIVE* ]] && break
	sleep 0.2
done
[[ $st == *ACTIVE* ]] || die "rxe0 port not ACTIVE ($st)"
say "rxe0 ACTIVE, setup done at uptime $(uptime_s)s"

export IPNG_VM=$vm IPNG_NVMS=$nvms IPNG_PEER_VM=$peer IPNG_PEER_IP=10.9.0.$peer
export IPNG_RESULTS=/results IPNG_OUT=$out IPNG_MODDIR=$moddir IPNG_REPO=$repo
export IPNG_MTU=$mtu IPNG_SCRIPT=$script IPNG_LIB=$repo/tests/vm/guest-lib.sh
unset ipng_vm ipng_nvms ipng_mtu ipng_moddir ipng_repo ipng_script ipng_timeout ipng_interactive

rc=0
# The guest script runs directly if executable, else through bash.
run=(bash "$script")
[ -x "$script" ] && run=("$script")
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
	# The guest script prepares the shell's world (make ib-shell: the
	# soft InfiniBand fabric); a failure is shown, the shell starts anyway.
	if [ "$script" != none ] && [ -r "$script" ]; then
		"${run[@]}" </dev/null >/dev/ttyS0 2>&1 ||
			echo "=== $script failed ($?)" >/dev/ttyS0
	fi
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
	# Output to the console and script.log. timeout (0 = none) puts the
	# script in its own process group: whatever it left running is killed
	# afterwards, so that it cannot hold the output pipe open forever.
	exec 3> >(exec tee "$out/script.log")
	teepid=$!
	timeout -k 10 "$script_timeout" "${run[@]}" </dev/null >&3 2>&1 &
	spid=$!
	exec 3>&-
	wait "$spid"
	rc=$?
	kill -KILL -- "-$spid" 2>/dev/null
	for ((n = 0; n < 100; n++)); do
		kill -0 "$teepid" 2>/dev/null || break
		sleep 0.1
	done
	kill "$teepid" 2>/dev/null
	cd / || true
	if [ "$script_timeout" != 0 ] && [ "$rc" = 124 ]; then
		say "script timed out after ${script_timeout}s"
	fi
fi
say "script exit code $rc at uptime $(uptime_s)s"

# Leaks since boot (kmemleak reports objects unreferenced over two scans
# and at least 5 s old).
kmemleak=/sys/kernel/debug/kmemleak
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
