#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of the VM test harness: boot N QEMU guests (TCG) that share the
# host root read-only over 9p, are joined by one virtual Ethernet link over
# 127.0.0.1 and share a read-write results directory; run one guest script in
# each (through guest-init.sh), enforce a host-side timeout, collect statuses
# and scan the consoles for kernel problems (scan-logs.sh).
#
#   tests/vm/run-vms.sh --kernel DIR --results DIR --script GUEST_SCRIPT
#       [--vms 2] [--timeout SECONDS] [--mtu MTU] [--grace SECONDS]
#       [--interactive] [--env NAME=VALUE]...
#
# Outputs, per VM (idx = 1..N), in the results dir:
#   vm<idx>/console.log  serial console (kernel log + init + script output)
#   vm<idx>/script.log   the guest script's stdout+stderr (written by guest)
#   vm<idx>/status       script exit code, or INIT_FAILED (guest), or
#                        TIMEOUT / CRASHED / ABORTED (host)
#   vm<idx>/kmemleak.txt kmemleak report after the script (debug kernels)
#   vm<idx>/qemu.log     QEMU's own stderr
#   sync/                vm_barrier / vm_publish files (guest-lib.sh)
# Environment: IPNG_QEMU_ACCEL (default tcg,thread=single) and IPNG_QEMU_CPU
# (default max) replace QEMU's -accel and -cpu values. One TCG thread per VM
# runs both vCPUs in turn: on the 2-core host the pair then has 2 busy
# threads, not 4 that preempt each other (a vCPU spinning on a lock whose
# holder's thread is descheduled). Measured in the debug guests, same hour
# (2026-12-02): a program start 0.55-0.68 s against 0.80 s, ethtool -L
# 2.4-2.8 s against 2.9-4.0 s, rmmod 3.7 s against 5.6-6.1 s. tcg (one
# thread per vCPU) runs them truly in parallel: the soak uses it, to
# widen race windows.
# Exit status: 0 only if every VM finished with status 0 and scan-logs.sh
# found nothing; 1 on test failure; 2 on usage or setup errors.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

usage() {
	sed -n '/^#   tests\/vm\/run-vms.sh/,/^#       \[--interactive/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
die() { echo "run-vms: $*" >&2; exit 2; }
log() { echo "run-vms: $*" >&2; }

kernel='' results='' script='' nvms=2 timeout='' mtu=9000 grace=60 interactive=0
extra_env=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=${2:?}; shift 2 ;;
	--results) results=${2:?}; shift 2 ;;
	--script) script=${2:?}; shift 2 ;;
	--vms) nvms=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--mtu) mtu=${2:?}; shift 2 ;;
	--grace) grace=${2:?}; shift 2 ;;
	--interactive) interactive=1; shift ;;
	--env) extra_env+=("${2:?}"); shift 2 ;;
	-h|--help) usage ;;
	*) echo "run-vms: unknown argument $1" >&2; usage ;;
	esac
done

if [ -z "$kernel" ] || [ -z "$results" ]; then usage; fi
[ -n "$script" ] || [ $interactive = 1 ] || usage
# Two VMs share one point-to-point socket link. More VMs would need a hub
# or bridge (net_args, start_all); refuse until that exists.
[ "$nvms" = 2 ] || die "--vms: only 2 is supported for now"
if ! [[ $mtu =~ ^[0-9]+$ ]] || [ "$mtu" -lt 68 ]; then die "--mtu: bad value $mtu"; fi
[[ $grace =~ ^[0-9]+$ ]] || die "--grace: bad value $grace"
if [ -z "$timeout" ]; then
	# Interactive sessions end when the user leaves the shell.
	if [ $interactive = 1 ]; then timeout=0; else timeout=900; fi
fi
[[ $timeout =~ ^[0-9]+$ ]] || die "--timeout: bad value $timeout"
for kv in "${extra_env[@]}"; do
	[[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]\"]*$ ]] ||
		die "--env: want NAME=VALUE without spaces or quotes, got '$kv'"
done

kernel=$(cd "$kernel" && pwd) || die "no kernel dir $kernel"
bzimage=$kernel/arch/x86/boot/bzImage
moddir=$kernel/modroot
[ -r "$bzimage" ] || die "$bzimage missing (build with tests/vm/kernel.sh)"
[ -d "$moddir/lib/modules" ] || die "$moddir/lib/modules missing"
[ -e "$kernel/.ipoib_ng_built" ] || log "warning: $kernel has no .ipoib_ng_built stamp"
if [ -n "$script" ]; then
	[ -r "$script" ] || die "no guest script $script"
	script=$(cd "$(dirname "$script")" && pwd)/$(basename "$script")
fi
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not installed"

# One VM pair at a time per machine: two pairs of TCG guests on a small host
# starve each other into timeouts. IPNG_VM_LOCK=none skips the lock.
lock=${IPNG_VM_LOCK:-${IPNG_CACHE:-$HOME/.cache/ipoib_ng}/vm.lock}
if [ "$lock" != none ]; then
	mkdir -p "$(dirname "$lock")"
	exec 8>"$lock"
	if ! flock -n 8; then
		log "waiting for another VM run to finish ($lock)"
		flock 8
	fi
fi
mkdir -p "$results"
results=$(cd "$results" && pwd)

# Guest-side script timeout: leave the guest time to scan kmemleak, write
# its status and reboot before the host kills it.
if [ "$timeout" = 0 ]; then
	guest_timeout=0
elif [ "$timeout" -ge 360 ]; then
	guest_timeout=$((timeout - 180))
else
	guest_timeout=$((timeout / 2))
fi

# Clear what a previous run left here (only the files this harness owns).
rm -rf "$results/sync"
for ((i = 1; i <= nvms; i++)); do
	rm -rf "$results/vm$i"
	mkdir -p "$results/vm$i"
done
mkdir -p "$results/sync"

declare -A pid=() start=() state=() deadline=()
port=''
tty_state=''

# shellcheck disable=SC2317  # invoked by trap
cleanup() {
	local i
	for i in "${!pid[@]}"; do
		if [ "${state[$i]}" = running ] && kill -0 "${pid[$i]}" 2>/dev/null; then
			kill -TERM "${pid[$i]}" 2>/dev/null || true
		fi
	done
	if [ -n "$tty_state" ]; then
		stty "$tty_state" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A TCP port on 127.0.0.1 that is free right now (QEMU may still lose a race
# for it; start_all retries).
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# Network link arguments of VM $1. Two VMs: vm1 listens, vm2 connects.
# More VMs would attach to a hub here (and start_all would change order).
net_args() {
	local i=$1
	local mac
	mac=$(printf '52:54:00:00:00:%02x' "$i")
	local mode=connect
	[ "$i" = 1 ] && mode=listen
	echo "-netdev socket,id=n0,$mode=127.0.0.1:$port -device virtio-net-pci,netdev=n0,mac=$mac"
}

kernel_cmdline() {
	local i=$1 kv
	local cmd="console=ttyS0 root=root rootfstype=9p"
	cmd+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose ro panic=-1"
	# no5lvl: with -cpu max (LA57) and KASAN, an interrupt that lands while
	# identify_cpu() has the CPU feature bits cleared gets a false "BUG:
	# KASAN: wild-memory-access" (KASAN_SHADOW_START follows the LA57 bit).
	cmd+=" no5lvl printk.time=1"
	# no_timer_check: the IO-APIC code counts timer ticks over a busy
	# wait at boot; a vCPU starved by the host (six VMs on two cores)
	# sees none and the kernel panics "IO-APIC + timer doesn't work!".
	cmd+=" no_timer_check"
	# Room for every stack the faults suite's injections print (verbose=2)
	# until it reads them at its end; the default is 128 KiB.
	cmd+=" log_buf_len=4M"
	# acpi=noirq: under KASAN the ACPI interpreter runs the PCI _PRT
	# method into its loop timeout (minutes of boot, virtio IRQs lost);
	# the PIIX router and the MP table route IRQs instead. ACPI itself
	# stays on: it brings up the second vCPU and a real clocksource.
	if grep -q '^CONFIG_KASAN=y' "$kernel/.config" 2>/dev/null; then
		cmd+=" acpi=noirq"
	fi
	cmd+=" init=$here/guest-init.sh"
	cmd+=" ipng_vm=$i ipng_nvms=$nvms ipng_script=${script:-none} ipng_mtu=$mtu"
	cmd+=" ipng_moddir=$moddir ipng_repo=$repo ipng_timeout=$guest_timeout"
	cmd+=" ipng_interactive=$interactive"
	if [ $interactive = 1 ] && [ "$i" = 1 ]; then
		local rows cols
		read -r rows cols < <(stty size 2>/dev/null || echo "24 80")
		cmd+=" ipng_term=${TERM:-vt100} ipng_rows=$rows ipng_cols=$cols"
	fi
	for kv in "${extra_env[@]}"; do
		cmd+=" $kv"
	done
	echo "$cmd"
}

# Start QEMU for VM $1 in the background; sets pid[$1].
launch() {
	local i=$1 out=$results/vm$1
	local console
	if [ $interactive = 1 ] && [ "$i" = 1 ]; then
		# The user's terminal, with the QEMU monitor on Ctrl-A c and a copy
		# of everything in console.log.
		console=(-chardev "stdio,id=con0,mux=on,signal=off,logfile=$out/console.log"
			-serial chardev:con0 -mon chardev=con0)
	else
		console=(-chardev "file,id=con0,path=$out/console.log" -serial chardev:con0)
	fi
	local net initrd=()
	read -r -a net < <(net_args "$i")
	# A distribution kernel (tests/vm/stock.sh) brings an initramfs that
	# loads what mounting the 9p root needs.
	[ -e "$kernel/initrd.img" ] && initrd=(-initrd "$kernel/initrd.img")
	# shellcheck disable=SC2054  # commas are QEMU syntax
	local args=(
		-nodefaults -no-user-config -display none -no-reboot
		-accel "${IPNG_QEMU_ACCEL:-tcg,thread=single}" -cpu "${IPNG_QEMU_CPU:-max}" -smp 2 -m 2048
		-name "ipng-vm$i"
		-kernel "$bzimage" -append "$(kernel_cmdline "$i")"
		"${initrd[@]}"
		"${console[@]}"
		"${net[@]}"
		-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap
		-device virtio-9p-pci,fsdev=root,mount_tag=root
		-fsdev "local,id=results,path=$results,security_model=none"
		-device virtio-9p-pci,fsdev=results,mount_tag=results
	)
	echo "qemu-system-x86_64 ${args[*]}" > "$out/qemu.cmd"
	if [ $interactive = 1 ] && [ "$i" = 1 ]; then
		# Without job control a background job's stdin is /dev/null unless
		# redirected: give QEMU the terminal explicitly.
		qemu-system-x86_64 "${args[@]}" 0<&3 2>"$out/qemu.log" &
	else
		qemu-system-x86_64 "${args[@]}" </dev/null >>"$out/qemu.log" 2>&1 &
	fi
	pid[$i]=$!
	start[$i]=$SECONDS
	state[$i]=running
}

# Did QEMU $1 exit within $2 seconds?
died_within() {
	local i=$1 n=$(($2 * 10))
	while [ $n -gt 0 ]; do
		kill -0 "${pid[$i]}" 2>/dev/null || return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}

# vm1 listens; it must be listening before vm2 connects. A port lost to
# another process makes QEMU exit at once: pick another one.
start_all() {
	local try i
	for try in 1 2 3 4 5; do
		port=$(free_port)
		launch 1
		for i in $(seq 50); do
			ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
			kill -0 "${pid[1]}" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "${pid[1]}" 2>/dev/null && ss -Hltn "sport = :$port" | grep -q .; then
			break
		fi
		wait "${pid[1]}" 2>/dev/null || true
		state[1]=failed
		log "vm1 could not listen on 127.0.0.1:$port (try $try): $(tail -n1 "$results/vm1/qemu.log")"
		[ "$try" = 5 ] && die "giving up starting vm1"
		: > "$results/vm1/qemu.log"
	done
	for ((i = 2; i <= nvms; i++)); do
		for try in 1 2 3 4 5; do
			launch "$i"
			died_within "$i" 2 || break
			wait "${pid[$i]}" 2>/dev/null || true
			state[$i]=failed
			log "vm$i could not start (try $try): $(tail -n1 "$results/vm$i/qemu.log")"
			[ "$try" = 5 ] && die "giving up starting vm$i"
			sleep 1
		done
	done
	log "started $nvms VMs (link 127.0.0.1:$port, timeout ${timeout}s, results $results)"
}

# Stop VM $1 now and record why ($2) unless its guest already wrote a status.
stop_vm() {
	local i=$1 why=$2 n
	kill -TERM "${pid[$i]}" 2>/dev/null || true
	for n in $(seq 50); do
		kill -0 "${pid[$i]}" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "${pid[$i]}" 2>/dev/null || true
	wait "${pid[$i]}" 2>/dev/null || true
	state[$i]=$why
	if [ "$why" = TIMEOUT ] || [ ! -s "$results/vm$i/status" ]; then
		echo "$why" > "$results/vm$i/status"
	fi
	log "vm$i: $why after $((SECONDS - start[$i]))s"
}

status_of() {
	if [ -e "$results/vm$1/status" ]; then tr -d '[:space:]' < "$results/vm$1/status"; fi
}

if [ $interactive = 1 ]; then
	exec 3<&0
	tty_state=$(stty -g 2>/dev/null || true)
	log "vm1 on this terminal (Ctrl-A x quits QEMU); vm2 console in $results/vm2/console.log"
fi
start_all

# Watch the VMs: host timeout for each, and once one VM ends badly (crashed,
# timed out, init failed; or vm1 ends in interactive mode) the others get
# $grace seconds before being stopped.
running=$nvms
while [ "$running" -gt 0 ]; do
	for ((i = 1; i <= nvms; i++)); do
		[ "${state[$i]}" = running ] || continue
		if ! kill -0 "${pid[$i]}" 2>/dev/null; then
			rc=0
			wait "${pid[$i]}" || rc=$?
			state[$i]=exited
			running=$((running - 1))
			st=$(status_of "$i")
			if [ -z "$st" ]; then
				echo CRASHED > "$results/vm$i/status"
				st=CRASHED
			fi
			log "vm$i: exited after $((SECONDS - start[$i]))s (qemu rc $rc), status $st"
			# A script that ran to its end (a number, failures or not)
			# leaves the others their own time: their barriers and
			# fetches see that it ended. Anything else (crashed, init
			# failed) gives them $grace seconds.
			if ! [[ $st =~ ^[0-9]+$ ]] || { [ $interactive = 1 ] && [ "$i" = 1 ]; }; then
				g=$grace
				[ $interactive = 1 ] && g=5
				for ((j = 1; j <= nvms; j++)); do
					[ -z "${deadline[$j]:-}" ] && deadline[$j]=$((SECONDS + g))
				done
			fi
		elif [ "$timeout" != 0 ] && [ $((SECONDS - start[$i])) -ge "$timeout" ]; then
			stop_vm "$i" TIMEOUT
			running=$((running - 1))
		elif [ -n "${deadline[$i]:-}" ] && [ "$SECONDS" -ge "${deadline[$i]}" ]; then
			stop_vm "$i" ABORTED
			running=$((running - 1))
		fi
	done
	[ "$running" -gt 0 ] && sleep 1
done
if [ -n "$tty_state" ]; then
	stty "$tty_state" 2>/dev/null || true
fi

fail=0
for ((i = 1; i <= nvms; i++)); do
	st=$(status_of "$i")
	echo "run-vms: vm$i status: $st"
	# In an interactive session the other VMs are stopped when vm1 ends.
	[ $interactive = 1 ] && [ "$i" != 1 ] && [ "$st" = ABORTED ] && continue
	[ "$st" = 0 ] || fail=1
done
logs=()
for ((i = 1; i <= nvms; i++)); do
	for f in console.log kmemleak.txt; do
		[ -e "$results/vm$i/$f" ] && logs+=("$results/vm$i/$f")
	done
done
if ! "$here/scan-logs.sh" "${logs[@]}"; then
	echo "run-vms: kernel problems found in the logs (see above)"
	fail=1
fi
if [ $fail = 0 ]; then
	echo "run-vms: PASS ($results)"
else
	echo "run-vms: FAIL ($results)"
fi
exit $fail
