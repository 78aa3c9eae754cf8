#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where the "faults" suite's injected allocation failures hit (in the guest).

  faults.py sites PREFIX [FILE]
      Read the kernel log (/dev/kmsg, no program started; or FILE, dmesg
      output) and print, for
      every round marker "PREFIX<round>" written by faults.sh, one line
          <round> <site>
      where <site> is the innermost ipoib_ng frame of the stack of the
      failure injected in that round (verbose=2 prints it), else the first
      frame outside the allocator and fault-injection code, "-" if no
      failure was injected (or its stack was rate limited).
"""
import os
import re
import sys

ALLOC = re.compile(r'^(dump_stack|show_stack|fail_dump|should_fail|should_failslab|'
                   r'__should_failslab|should_fail_alloc_page|__should_fail|'
                   r'slab_pre_alloc_hook|slab_alloc|__slab_alloc|kmem_cache_alloc|'
                   r'kmalloc|__kmalloc|kmalloc_trace|kmalloc_node|__kmalloc_node|'
                   r'kmalloc_large|kmalloc_order|kzalloc|kcalloc|kvmalloc|'
                   r'__kvmalloc|kvmalloc_node|__alloc_pages|alloc_pages|'
                   r'prepare_alloc_pages|get_page_from_freelist|__get_free_pages|'
                   r'__alloc_skb|__netdev_alloc_skb|__napi_alloc_skb|'
                   r'alloc_skb|kmalloc_reserve|__kmem_cache_alloc|'
                   r'folio_alloc|__folio_alloc|alloc_slab_page|allocate_slab|'
                   r'new_slab|___slab_alloc|kasan|__kasan)')
FRAME = re.compile(r'^\s*(?:\? )?([A-Za-z0-9_.]+)\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[([a-z0-9_]+)\])?')


def kmsg_lines():
    fd = os.open('/dev/kmsg', os.O_RDONLY | os.O_NONBLOCK)
    out = []
    while True:
        try:
            rec = os.read(fd, 8192)
        except BlockingIOError:
            break
        except OSError:     # EPIPE: a record was overwritten, go on
            continue
        text = rec.decode('utf-8', 'replace')
        head, _, msg = text.partition(';')
        for i, l in enumerate(msg.split('\n')):
            if i and not l.startswith(' '):
                continue    # continuation lines are " KEY=value" pairs
            out.append(l.strip('\n'))
    os.close(fd)
    return out


def sites(prefix, path=None):
    if path:
        with open(path) as f:
            log = [l.split('] ', 1)[-1] for l in f.read().splitlines()]
    else:
        log = kmsg_lines()
    rnd = None
    state = 0           # 0 none, 1 failure seen, 2 in its call trace
    site = {}
    first = {}
    for l in log:
        s = l.strip()
        if s.startswith(prefix):
            rnd = s[len(prefix):].split()[0]
            site.setdefault(rnd, '-')
            state = 0
            continue
        if rnd is None:
            continue
        if s.startswith('FAULT_INJECTION: forcing a failure'):
            state = 1 if site.get(rnd, '-') == '-' else 0
            continue
        if state == 1 and s.startswith('Call Trace'):
            state = 2
            continue
        if state == 2:
            if s.startswith('</TASK>') or s.startswith('<IRQ>') or not s:
                if site.get(rnd, '-') == '-' and rnd in first:
                    site[rnd] = first[rnd]
                state = 0
                continue
            m = FRAME.match(s)
            if not m:
                continue
            fn, mod = m.group(1), m.group(2)
            if mod == 'ipoib_ng':
                site[rnd] = fn + ' [ipoib_ng]'
                state = 0
            elif not ALLOC.match(fn) and rnd not in first:
                first[rnd] = fn
    for r in site:
        if site[r] == '-' and r in first:
            site[r] = first[r]
    for r in site:
        print(r, site[r])
    return 0


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == 'sites':
        return sites(*sys.argv[2:])
    sys.exit(__doc__)


if __name__ == '__main__':
    sys.exit(main())
