#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Small socket helpers for the end-to-end suites (run inside the guests).

  xfer.py send HOST PORT FILE TIMEOUT        send FILE over one TCP connection
  xfer.py recv BIND PORT FILE TIMEOUT        accept one connection, save it
  xfer.py msend GROUP IFADDR PORT COUNT      send COUNT datagrams, 0.5 s apart
  xfer.py mrecv GROUP IFADDR PORT TIMEOUT    join GROUP on IFADDR, print one
  xfer.py stream HOST PORT STOPFILE TIMEOUT  send without pause until STOPFILE
                                             exists, then close (a socket
                                             error or TIMEOUT: exit 1)
  xfer.py sink BIND PORT TIMEOUT             accept one stream, print what it
                                             carried in each second
                                             ("<epoch second> <bytes>") and
                                             "total <bytes>"; a reset: exit 1
  xfer.py outq HOST PORT COUNT SIZE WAIT     send COUNT UDP datagrams of SIZE
                                             bytes from one socket, then print
                                             its unsent bytes (SIOCOUTQ) until
                                             they are 0 or WAIT seconds pass;
                                             exit 1 if they never were 0
"""
import fcntl
import os
import socket
import struct
import sys
import termios
import time


def send(host, port, path, timeout):
    with socket.create_connection((host, int(port)), timeout=float(timeout)) as s, \
            open(path, 'rb') as f:
        s.sendfile(f)
        s.shutdown(socket.SHUT_WR)
        s.recv(1)


def accept_one(bind, port, timeout):
    """The one connection accepted on BIND:PORT, its reads bounded by TIMEOUT."""
    with socket.socket() as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((bind, int(port)))
        srv.listen(1)
        srv.settimeout(float(timeout))
        conn, _ = srv.accept()
    conn.settimeout(float(timeout))
    return conn


def chunks(conn):
    """What CONN carries, read by read until the peer closes it."""
    while True:
        data = conn.recv(1 << 16)
        if not data:
            return
        yield data


def recv(bind, port, path, timeout):
    with accept_one(bind, port, timeout) as conn, open(path, 'wb') as f:
        for data in chunks(conn):
            f.write(data)


def msend(group, ifaddr, port, count):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ifaddr))
    for i in range(int(count)):
        s.sendto(b'hello from vm2 %d' % i, (group, int(port)))
        time.sleep(0.5)


def mrecv(group, ifaddr, port, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('', int(port)))
    mreq = struct.pack('4s4s', socket.inet_aton(group), socket.inet_aton(ifaddr))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, mreq)
    s.settimeout(float(timeout))
    data, peer = s.recvfrom(256)
    print(data.decode(), 'from', peer[0])


def stream(host, port, stopfile, timeout):
    end = time.monotonic() + float(timeout)
    chunk = bytes(1 << 16)
    # Each send waits at most 5 s, so that the stop file is seen while
    # the link is down; a send that times out is retried, not an error.
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.settimeout(5)
        while not os.path.exists(stopfile):
            if time.monotonic() > end:
                sys.exit('stream: no stop file after %s s' % timeout)
            try:
                s.send(chunk)
            except socket.timeout:
                pass
        s.settimeout(60)
        s.shutdown(socket.SHUT_WR)
        s.recv(1)


def sink(bind, port, timeout):
    per_second = {}
    total = 0
    with accept_one(bind, port, timeout) as conn:
        for data in chunks(conn):
            now = int(time.time())
            per_second[now] = per_second.get(now, 0) + len(data)
            total += len(data)
    for sec in sorted(per_second):
        print(sec, per_second[sec])
    print('total', total)


def outq(host, port, count, size, wait):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for _ in range(int(count)):
            s.sendto(b'x' * int(size), (host, int(port)))
        end = time.monotonic() + float(wait)
        while True:
            # SIOCOUTQ (TIOCOUTQ): the bytes still charged to the socket.
            held = struct.unpack('i', fcntl.ioctl(s, termios.TIOCOUTQ,
                                                  b'\0' * 4))[0]
            print('outq', held)
            if held == 0:
                return
            if time.monotonic() > end:
                sys.exit(1)
            time.sleep(0.1)


if __name__ == '__main__':
    cmds = {'send': send, 'recv': recv, 'msend': msend, 'mrecv': mrecv,
            'stream': stream, 'sink': sink, 'outq': outq}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])
