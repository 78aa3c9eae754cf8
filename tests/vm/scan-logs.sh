#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan logs (VM consoles, dmesg dumps, kmemleak reports) for kernel problem
# reports: BUG/WARNING splats, KASAN, UBSAN, lockdep, oopses, panics,
# kmemleak leaks, hung tasks, refcount and list corruption, debugobjects.
#
#   tests/vm/scan-logs.sh FILE...
#
# Prints every offending line as FILE:LINE: TEXT, then the first report of
# each file in full (up to $CONTEXT lines from its first line, indented), so
# that a log seen only through CI's output still shows the call trace.
# Exit 0 if clean, 1 if anything was found, 2 if a file is missing.
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: scan-logs.sh FILE..." >&2; exit 2; }

patterns=(
	'BUG:'                          # BUG: KASAN/unable to handle/sleeping function/...
	'kernel BUG at'
	'WARNING:'                      # WARN_ON splats and lockdep's headers
	'KASAN'
	'UBSAN'
	'possible circular locking'
	'possible recursive locking'
	'inconsistent lock state'
	'suspicious RCU usage'
	'lock held when returning'
	'Oops'
	'invalid opcode:'
	'Kernel panic'
	'general protection fault'
	'unreferenced object'           # kmemleak
	'new suspected memory leaks'    # kmemleak
	'INFO: task .* blocked'         # hung task
	'refcount_t:'
	'list_add corruption'
	'list_del corruption'
	'ODEBUG:'                       # debugobjects
)
regex=$(IFS='|'; echo "${patterns[*]}")
# Harmless lines of this kernel that contain a pattern.
allow='kasan: KernelAddressSanitizer initialized'

CONTEXT=${IPNG_SCAN_CONTEXT:-45}

found=0 missing=0
for f in "$@"; do
	if [ ! -e "$f" ]; then
		echo "scan-logs: $f: missing" >&2
		missing=1
		continue
	fi
	# -a: consoles hold control characters; strip the serial \r.
	hits=$(tr -d '\r' < "$f" | grep -anE "$regex" | grep -avE "$allow" || true)
	if [ -n "$hits" ]; then
		found=1
		while IFS= read -r line; do
			printf '%s:%s\n' "$f" "$line"
		done <<<"$hits"
		first=${hits%%:*}
		echo "scan-logs: $f: the first report, from line $first:"
		tr -d '\r' < "$f" | tail -n +"$first" | head -n "$CONTEXT" |
			sed 's/^/  | /'
	fi
done
[ $found = 0 ] || exit 1
[ $missing = 0 ] || exit 2
exit 0
