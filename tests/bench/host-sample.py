#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Host CPU sampler of `make bench`: once a second, until killed, print one
# line "<epoch seconds> <ticks of our QEMUs> <the host's /proc/stat cpu
# line>". "Our QEMUs" are the processes whose command line contains MARK
# (bench.sh passes its results folder, which is in every QEMU command line
# it starts); the rest of the host's busy time is other people's load.
# tests/bench/report.py matches the lines against measurement windows.
#
#   tests/bench/host-sample.py MARK > host-stat.txt

import os
import sys
import time


def our_ticks(mark):
    total = 0
    me = str(os.getpid())
    for pid in os.listdir('/proc'):
        if not pid.isdigit() or pid == me:
            continue
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                if mark not in f.read():
                    continue
            with open(f'/proc/{pid}/stat', encoding='ascii') as f:
                # Fields after the parenthesised command name; utime and
                # stime are fields 14 and 15 of the whole line.
                rest = f.read().rsplit(')', 1)[1].split()
            total += int(rest[11]) + int(rest[12])
        except (OSError, IndexError, ValueError):
            continue
    return total


def main():
    if len(sys.argv) != 2:
        print('usage: host-sample.py MARK', file=sys.stderr)
        return 2
    mark = sys.argv[1].encode()
    while True:
        with open('/proc/stat', encoding='ascii') as f:
            line = f.readline().strip()
        print(f'{time.time():.3f} {our_ticks(mark)} {line}', flush=True)
        time.sleep(1)


if __name__ == '__main__':
    sys.exit(main())
