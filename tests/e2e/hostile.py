#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A misbehaving IPoIB peer, for the "hostile" suite (run inside the guests).

Attacker side (libibverbs through pyverbs, and ib_umad):
  hostile.py arp  --victim ADDR --victim-ip IP --own ADDR --base-ip IP --count N
      N IPoIB ARP requests (RFC 4391) as UD datagrams to the victim's QPN,
      Q_Key 0x0B1B, GRH to its GID; request i has the sender hardware
      address 0x80 (RC capable) + QPN FORGED+i + our real GID and the sender
      IP BASE+i; target IP = the victim.
  hostile.py ns   --victim ADDR --victim-ip6 IP6 --own ADDR --base-ip6 IP6 --count N
      N IPv6 Neighbor Solicitations, unicast to the victim, each with a
      source link-layer address option of a distinct forged 20-byte address
      and a distinct source address BASE+i.
  hostile.py req  --victim ADDR --own ADDR --count N --pdata KIND
      N connected-mode (RFC 4755) CM REQ MADs, written to /dev/infiniband/
      umad* (QP1 of the victim, service ID 0x1000000000000000 | its QPN),
      each from a distinct fake local QPN and communication ID, with private
      data KIND: zero (all zero), short-buf (receive size 71, one less than
      the minimum), random (random bytes, receive size below the minimum),
      valid (a well-formed request that is never completed: half-open).
  Each prints "sent=<completed sends> failed=<errors> secs=<duration>" and
  fails (exit 1) unless every send completed. Several commands joined by
  "+" run in one process, each report between "step N: ARGS" and
  "step N: rc=R" lines.

Victim side:
  hostile.py sample --stop FILE --interval S
      Until FILE exists, sample the interface state every S seconds; print
      "key=value" lines with the maximum and the last value of each (see
      snapshot()); the state is read by one process, no programs started.
      With --series FILE, also a line per sample appended to FILE: time,
      the lower netdev's and the RDMA port's packet counters,
      connections, the driver's counters of what waited, fell back to UD
      or failed, the guest's CPU time (/proc/stat) and the four threads
      that used most of it since the last sample, and with --peer-qpn
      the states of the real peer's connections.
  hostile.py snap
      One sample, "key=value" lines.

ADDR is a 20-byte link address as 40 hex digits (no colons).
"""
import argparse
import errno
import fcntl
import glob
import ipaddress
import os
import random
import re
import struct
import sys
import time

IPOIB_QKEY = 0x0B1B
ETH_P_IP = 0x0800
ETH_P_ARP = 0x0806
ETH_P_IPV6 = 0x86DD
ARPHRD_INFINIBAND = 32
FORGED_QPN = 0x800000        # far above the QPNs rxe hands out
CM_SERVICE_BASE = 0x1000000000000000


def parse_addr(hexaddr):
    a = bytes.fromhex(hexaddr)
    if len(a) != 20:
        sys.exit('link address must be 20 bytes: %r' % hexaddr)
    return a[0], int.from_bytes(a[1:4], 'big'), a[4:]


def gid_str(gid):
    return ':'.join(gid[i:i + 2].hex() for i in range(0, 16, 2))


def ip_checksum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


# --- UD sender (pyverbs) ---

class UdSender:
    """A UD QP on DEV/PORT that sends to one QPN and GID with GRH."""

    SLOTS = 64
    SLOT = 256

    def __init__(self, dev, port, own_gid, dgid, dqpn):
        from pyverbs.device import Context
        from pyverbs.pd import PD
        from pyverbs.cq import CQ
        from pyverbs.mr import MR
        from pyverbs.qp import QP, QPCap, QPInitAttr, QPAttr
        from pyverbs.addr import AH, AHAttr, GlobalRoute, GID
        import pyverbs.enums as e
        self.e = e
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, self.SLOTS * 2)
        self.mr = MR(self.pd, self.SLOTS * self.SLOT, e.IBV_ACCESS_LOCAL_WRITE)
        cap = QPCap(max_send_wr=self.SLOTS, max_recv_wr=1, max_send_sge=1,
                    max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_UD, scq=self.cq, rcq=self.cq,
                          cap=cap, sq_sig_all=1)
        attr = QPAttr(port_num=port)
        attr.qkey = 0x11111111
        self.qp = QP(self.pd, init, attr)
        self.sgid_index = find_gid_index(self.ctx, port, own_gid)
        gr = GlobalRoute(dgid=GID(gid_str(dgid)), sgid_index=self.sgid_index,
                         hop_limit=64)
        self.ah = AH(self.pd, attr=AHAttr(port_num=port, is_global=1, gr=gr))
        self.dqpn = dqpn
        self.outstanding = 0
        self.sent = 0
        self.failed = 0
        self.n = 0

    def _reap(self, want):
        deadline = time.monotonic() + 10
        while self.outstanding > want:
            npolled, wcs = self.cq.poll(self.SLOTS)
            for wc in wcs[:npolled]:
                self.outstanding -= 1
                if wc.status == self.e.IBV_WC_SUCCESS:
                    self.sent += 1
                else:
                    self.failed += 1
            if not npolled:
                if time.monotonic() > deadline:
                    raise SystemExit('send completions stopped coming')
                time.sleep(0.0005)

    def send(self, payload):
        from pyverbs.wr import SendWR, SGE
        if len(payload) > self.SLOT:
            raise ValueError('payload too long')
        self._reap(self.SLOTS - 1)
        off = (self.n % self.SLOTS) * self.SLOT
        self.n += 1
        self.mr.write(payload, len(payload), off)
        sge = SGE(self.mr.buf + off, len(payload), self.mr.lkey)
        wr = SendWR(wr_id=self.n, opcode=self.e.IBV_WR_SEND, num_sge=1, sg=[sge])
        wr.set_wr_ud(self.ah, self.dqpn, IPOIB_QKEY)
        try:
            self.qp.post_send(wr)
            self.outstanding += 1
        except Exception as ex:   # counted, the run goes on
            self.failed += 1
            if self.failed <= 3:
                print('post_send: %s' % ex, file=sys.stderr)

    def finish(self):
        self._reap(0)


def find_gid_index(ctx, port, gid):
    want = bytes(gid)
    n = ctx.query_port(port).gid_tbl_len
    for i in range(n):
        try:
            g = ctx.query_gid(port, i)
        except Exception:
            continue
        try:
            if ipaddress.IPv6Address(str(g)).packed == want:
                return i
        except ValueError:
            continue
    sys.exit('GID %s not in the GID table of the device' % gid_str(gid))


def forged_addr(i, own_gid):
    return bytes([0x80]) + (FORGED_QPN + i).to_bytes(3, 'big') + own_gid


def umad_send(fd, buf, tries=3):
    """Write one MAD; None when sent, else the last error. On RoCE the
    kernel resolves the victim's MAC for every MAD's address handle:
    ETIMEDOUT when that took too long (the victim busy with the flood that
    came before), which a pause and another try get past."""
    for n in range(tries):
        try:
            os.write(fd, buf)
            return None
        except OSError as ex:
            if ex.errno != errno.ETIMEDOUT or n == tries - 1:
                return ex
            time.sleep(1)
    return None


def pace(start, i, pps):
    if pps:
        delay = start + i / pps - time.monotonic()
        if delay > 0:
            time.sleep(delay)


def arp_packet(i, own_gid, base, tip):
    """IPoIB header + ARP request i: forged sender address and IP BASE+i."""
    arp = struct.pack('!HHBBH', ARPHRD_INFINIBAND, ETH_P_IP, 20, 4, 1)
    arp += forged_addr(i, own_gid) + (base + i).to_bytes(4, 'big')
    arp += bytes(20) + tip
    return struct.pack('!HH', ETH_P_ARP, 0) + arp


def ns_packet(i, own_gid, base, dst):
    """IPoIB header + IPv6 + Neighbor Solicitation i for target DST (which
    is also the destination) from BASE+i, with the forged address i in the
    source link-layer address option."""
    src = (base + i).to_bytes(16, 'big')
    # Option type 1, length 3 (24 bytes): two bytes of padding on IPoIB
    # (ndisc_addr_option_pad), then the 20-byte address.
    opt = bytes([1, 3, 0, 0]) + forged_addr(i, own_gid)
    icmp = struct.pack('!BBHI', 135, 0, 0, 0) + dst + opt
    pseudo = src + dst + struct.pack('!I3xB', len(icmp), 58)
    csum = ip_checksum(pseudo + icmp)
    icmp = icmp[:2] + struct.pack('!H', csum) + icmp[4:]
    ip6 = struct.pack('!IHBB', 6 << 28, len(icmp), 58, 255) + src + dst
    return struct.pack('!HH', ETH_P_IPV6, 0) + ip6 + icmp


def cmd_arp(a):
    _, vqpn, vgid = parse_addr(a.victim)
    _, _, own_gid = parse_addr(a.own)
    tip = ipaddress.IPv4Address(a.victim_ip).packed
    base = int(ipaddress.IPv4Address(a.base_ip))
    s = UdSender(a.dev, a.port, own_gid, vgid, vqpn)
    t0 = time.monotonic()
    for i in range(a.count):
        s.send(arp_packet(i, own_gid, base, tip))
        pace(t0, i + 1, a.pps)
    s.finish()
    return report(s.sent, s.failed, a.count, t0)


def cmd_ns(a):
    _, vqpn, vgid = parse_addr(a.victim)
    _, _, own_gid = parse_addr(a.own)
    dst = ipaddress.IPv6Address(a.victim_ip6).packed
    base = int(ipaddress.IPv6Address(a.base_ip6))
    s = UdSender(a.dev, a.port, own_gid, vgid, vqpn)
    t0 = time.monotonic()
    for i in range(a.count):
        s.send(ns_packet(i, own_gid, base, dst))
        pace(t0, i + 1, a.pps)
    s.finish()
    return report(s.sent, s.failed, a.count, t0)


def report(sent, failed, count, t0):
    print('sent=%d failed=%d secs=%.1f' % (sent, failed, time.monotonic() - t0))
    return 0 if sent == count and failed == 0 else 1


# --- CM REQ through ib_umad ---

IB_USER_MAD_REGISTER_AGENT = 0xC01C1B01   # _IOWR(0x1b, 1, 28 bytes)
IB_USER_MAD_ENABLE_PKEY = 0x1B03           # _IO(0x1b, 3)
UMAD_HDR = '=IIIIIIIHBBBBBB16sIH6x'        # struct ib_user_mad_hdr, 64 bytes
CM_TIMEOUT = 18                            # 4.096 us << 18: about 1 s
CM_RETRIES = 8


def umad_dev(dev, port):
    base = '/sys/class/infiniband_mad'
    for n in sorted(os.listdir(base)):
        if not n.startswith('umad'):
            continue
        try:
            with open('%s/%s/ibdev' % (base, n)) as f:
                d = f.read().strip()
            with open('%s/%s/port' % (base, n)) as f:
                p = int(f.read())
        except OSError:
            continue
        if d == dev and p == port:
            return '/dev/infiniband/' + n
    sys.exit('no umad device for %s port %d' % (dev, port))


def req_pdata(kind, i, rng):
    if kind == 'zero':
        return bytes(92)
    if kind == 'short-buf':
        return struct.pack('!II', FORGED_QPN + i, 71) + bytes(84)
    if kind == 'random':
        b = bytearray(rng.randbytes(92))
        b[4:8] = struct.pack('!I', rng.randrange(0, 72))
        return bytes(b)
    if kind == 'valid':
        return struct.pack('!II', FORGED_QPN + i, 65524) + bytes(84)
    raise SystemExit('unknown private data kind ' + kind)


def node_guid(dev):
    with open('/sys/class/infiniband/%s/node_guid' % dev) as f:
        return int(f.read().strip().replace(':', ''), 16)


def cmd_req(a):
    _, vqpn, vgid = parse_addr(a.victim)
    _, _, own_gid = parse_addr(a.own)
    from pyverbs.device import Context
    ctx = Context(name=a.dev)
    sgid_index = find_gid_index(ctx, a.port, own_gid)
    ctx.close()
    guid = node_guid(a.dev)
    rng = random.Random(a.seed)
    fd = os.open(umad_dev(a.dev, a.port), os.O_RDWR)
    fcntl.ioctl(fd, IB_USER_MAD_ENABLE_PKEY)
    # Send-only agent on QP1 (mgmt_class 0): the answers go to ib_cm.
    reg = bytearray(struct.pack('=I16sBBB3sB', 0, bytes(16), 1, 0, 0, bytes(3), 0) + bytes(1))
    fcntl.ioctl(fd, IB_USER_MAD_REGISTER_AGENT, reg, True)
    agent = struct.unpack_from('=I', reg)[0]
    sent = failed = 0
    t0 = time.monotonic()
    comm0 = rng.randrange(1, 1 << 30)
    for i in range(a.count):
        hdr = bytearray(struct.pack(UMAD_HDR, agent, 0, 0, 0, 0, 0, 0, 0,
                                    0, 0, 1, sgid_index, 64, 0, vgid, 0, 0))
        # The big-endian fields: remote QP1 and its Q_Key (LID unused on RoCE).
        hdr[20:24] = struct.pack('!I', 1)
        hdr[24:28] = struct.pack('!I', 0x80010000)
        mad = bytearray(256)
        struct.pack_into('!BBBBHHQHHI', mad, 0, 1, 0x07, 2, 0x03, 0, 0,
                         rng.randrange(1 << 32), 0x0010, 0, 0)
        r = 24
        struct.pack_into('!I', mad, r + 0, comm0 + i)
        struct.pack_into('!Q', mad, r + 8, CM_SERVICE_BASE | vqpn)
        struct.pack_into('!Q', mad, r + 16, guid)
        struct.pack_into('!I', mad, r + 32, ((FORGED_QPN + 0x10000 + i) << 8) | 4)
        struct.pack_into('!I', mad, r + 36, 0)                # EECN, initiator depth
        struct.pack_into('!I', mad, r + 40, CM_TIMEOUT << 3)  # remote timeout, RC
        struct.pack_into('!I', mad, r + 44,
                         (rng.randrange(1 << 24) << 8) | (CM_TIMEOUT << 3))
        struct.pack_into('!HBB', mad, r + 48, 0xffff, 3 << 4, CM_RETRIES << 4)
        struct.pack_into('!HH', mad, r + 52, 0xffff, 0xffff)  # permissive LIDs
        mad[r + 56:r + 72] = own_gid
        mad[r + 72:r + 88] = vgid
        struct.pack_into('!IBBBB', mad, r + 88, 0, 0, 64, 0x08, 18 << 3)
        mad[r + 140:r + 232] = req_pdata(a.pdata, i, rng)
        ex = umad_send(fd, bytes(hdr) + bytes(mad))
        if ex is None:
            sent += 1
        else:
            failed += 1
            if failed <= 3:
                print('umad write: %s' % ex, file=sys.stderr)
        pace(t0, i + 1, a.pps)
    os.close(fd)
    return report(sent, failed, a.count, t0)


# --- victim side ---

DBG = '/sys/kernel/debug/ipoib_ng'
COUNTED = ('idle', 'req_sent', 'rep_sent', 'live')


# Files the sampler reads again and again stay open: in the debug guest an
# open() costs more than the read (a profile of the flood charged opening
# files a quarter of the sampler's time: a struct file and a seq_file
# buffer, each allocation with its KASAN stack trace).
_open_files = {}


def read_text(path):
    """The contents of a /proc, sysfs or debugfs file, read from offset 0
    of a descriptor kept open between calls ('' if it cannot be read; the
    descriptor is then closed, so that a file that comes back is opened
    again)."""
    fd = _open_files.get(path)
    try:
        if fd is None:
            fd = os.open(path, os.O_RDONLY)
            _open_files[path] = fd
        out, off = [], 0
        while True:
            b = os.pread(fd, 65536, off)
            if not b:
                break
            out.append(b)
            off += len(b)
        return b''.join(out).decode(errors='replace')
    except OSError:
        if fd is not None:
            os.close(fd)
            _open_files.pop(path, None)
        return ''


def forget_files(keep):
    """Close the kept descriptors of files not in @keep (gone threads)."""
    for path in [p for p in _open_files if p not in keep]:
        os.close(_open_files.pop(path))


def lines(path):
    return [l for l in read_text(path).splitlines() if l and not l.startswith('#')]


def proc_stats(ifname):
    """The interface's /proc stats file as a dict of its integer values."""
    v = {}
    for l in read_text('/proc/net/ipoib/%s/stats' % ifname).splitlines():
        k, _, val = l.partition(':')
        try:
            v[k.strip()] = int(val)
        except ValueError:
            pass
    return v


def cm_numbers(ifname):
    """The debugfs connection table: its size, by direction, the entries
    counted against max_connections, the forged QPNs', and the real
    peer's lines (for peer_states())."""
    cm = lines('%s/%s/cm' % (DBG, ifname))
    f = [l.split() for l in cm]
    v = {'cm_lines': len(cm),
         'cm_tx': sum(1 for x in f if x[0] == 'tx'),
         'cm_rx': sum(1 for x in f if x[0] == 'rx'),
         'cm_counted': sum(1 for x in f if len(x) > 6 and x[6] in COUNTED),
         'cm_forged': sum(1 for x in f if int(x[2], 16) >= FORGED_QPN)}
    return v, f


def cheap_numbers(ifname, st):
    """What every sample records: the counts the driver keeps (/proc stats
    @st), the connection table and the kernel's memory."""
    v, f = cm_numbers(ifname)
    for k, name in (('neigh', 'neighbours'), ('paths', 'paths'),
                    ('connections', 'connections')):
        if name in st:
            v[k] = st[name]
    for l in read_text('/proc/meminfo').splitlines():
        k, _, val = l.partition(':')
        if k in ('Slab', 'Percpu', 'VmallocUsed', 'MemAvailable'):
            v[k.lower() + '_kb'] = int(val.split()[0])
    return v, f


def full_numbers(ifname, st):
    """The numbers the suite asserts on, one dict: cheap_numbers(), and the
    tables counted from their debugfs dumps (not from the driver's own
    counters), the CM's REQ counter and the kernel's ARP/ND caches; and
    the split connection table lines."""
    v, cm = cheap_numbers(ifname, st)
    v['neigh'] = max(v.get('neigh', 0), len(lines('%s/%s/neigh' % (DBG, ifname))))
    v['paths'] = max(v.get('paths', 0), len(lines('%s/%s/paths' % (DBG, ifname))))
    # REQs this host's CM sent (every port of every device; retries apart).
    reqs = glob.glob('/sys/class/infiniband/*/ports/*/cm_tx_msgs/req')
    v['cm_reqs_sent'] = sum(read_int(p) for p in reqs) if reqs else -1
    for fam, path in (('arp', '/proc/net/stat/arp_cache'),
                      ('nd', '/proc/net/stat/ndisc_cache')):
        try:
            rows = read_text(path).split('\n')
            hdr = rows[0].split()
            cpus = [r.split() for r in rows[1:] if r.strip()]
            # Every CPU's row repeats "entries"; the other columns add up.
            v[fam + '_entries'] = int(cpus[0][0], 16)
            for col in ('allocs', 'table_fulls'):
                i = hdr.index(col)
                v[fam + '_' + col] = sum(int(c[i], 16) for c in cpus)
        except (OSError, ValueError, IndexError):
            pass
    return v, cm


def snapshot(ifname='ib0'):
    """full_numbers() as one dict."""
    return full_numbers(ifname, proc_stats(ifname))[0]


def emit(d, prefix=''):
    for k in sorted(d):
        print('%s%s=%s' % (prefix, k, d[k]))


def cmd_snap(a):
    emit(snapshot(a.ifname))
    return 0


def read_int(path):
    try:
        return int(read_text(path).split()[0])
    except (ValueError, IndexError):
        return -1


# Driver counters of /proc/net/ipoib/<if>/stats the series records: what
# waits, what went over UD instead of a connection, what failed.
SERIES_STATS = ('send_queue_depth', 'send_queue_backlog', 'tx_cm_fallback',
                'tx_drop_cm_queue', 'tx_completion_errors', 'cm_cap_reached',
                'cm_peer_cap_reached', 'tx_timeouts', 'recoveries')


def driver_numbers(st):
    """SERIES_STATS from the interface's /proc stats (proc_stats())."""
    return {k: st[k] for k in SERIES_STATS if k in st}


def peer_states(cm, qpn):
    """State of the connections to or from UD QPN qpn (hex), as 'tx:live'
    words joined by commas, from the split lines @cm of the debugfs cm
    table, or '-' when there are none."""
    out = ['%s:%s' % (f[0], f[6]) for f in cm
           if len(f) > 6 and f[2] == '0x' + qpn]
    return ','.join(out) or '-'


def link_numbers(lower, rdma):
    """What carries the interface: the lower netdev's packet counters (a
    virtio-net counts a sent packet when its transmission completes) and
    the RDMA port's packet counters. (No qdisc backlog: the test kernel
    has no NET_SCHED, so tc reads nothing.)"""
    # t: as the console's time stamps; w: as ping -D's on the other VM.
    v = {'t': '%.1f' % time.monotonic(), 'w': '%.1f' % time.time()}
    for k in ('tx_packets', 'rx_packets', 'tx_dropped'):
        v[lower + '_' + k] = read_int('/sys/class/net/%s/statistics/%s' % (lower, k))
    hwc = '/sys/class/infiniband/%s/ports/1/hw_counters' % rdma
    for k in ('sent_pkts', 'rcvd_pkts', 'send_rnr_err', 'completer_retry_err'):
        v[rdma + '_' + k] = read_int('%s/%s' % (hwc, k))
    return v


def cpu_numbers():
    """The guest's CPU time so far (/proc/stat, in ticks): where the time
    of a victim that falls behind goes."""
    v = {}
    try:
        f = read_text('/proc/stat').split('\n', 1)[0].split()
        for k, x in zip(('user', 'nice', 'sys', 'idle', 'iowait', 'irq',
                         'softirq'), f[1:8]):
            v['cpu_' + k] = int(x)
    except (OSError, ValueError, IndexError):
        pass
    return v


def thread_ticks():
    """CPU ticks (user + system) of every thread, by pid and name."""
    t = {}
    keep = set(p for p in _open_files if not p.startswith('/proc/') or
               not p.split('/')[2].isdigit())
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        path = '/proc/%s/stat' % pid
        st = read_text(path)
        if not st:
            continue
        keep.add(path)
        name = st[st.find('(') + 1:st.rfind(')')]
        f = st[st.rfind(')') + 2:].split()
        t[pid] = (name, int(f[11]) + int(f[12]))
    forget_files(keep)
    return t


def top_threads(prev, now, n=4):
    """The n threads that used most CPU between two thread_ticks()."""
    d = [(now[p][1] - prev.get(p, (None, 0))[1], now[p][0]) for p in now]
    d = sorted((x for x in d if x[0] > 0), reverse=True)[:n]
    return ','.join('%s:%d' % (name.replace(' ', '_'), x) for x, name in d) or '-'


def cmd_sample(a):
    """Sample until the stop file exists. The sampler runs on the victim
    beside the flood, where its own reads compete with what is measured
    (a profile of the debug guest charged it a quarter of the CPU when
    every sample read every table): each sample reads the /proc stats,
    the connection table, meminfo and a few counters; every --full-every
    samples also the neighbour and path dumps and the thread list."""
    mx = {}
    last = {}
    n = 0
    ticks = thread_ticks()
    series = open(a.series, 'a') if a.series else None
    while True:
        st = proc_stats(a.ifname)
        stop = os.path.exists(a.stop)
        full = n % a.full_every == 0 or stop
        if full:
            last, cm = full_numbers(a.ifname, st)
        else:
            last, cm = cheap_numbers(a.ifname, st)
        n += 1
        for k, x in last.items():
            mx[k] = max(mx.get(k, x), x)
        if series:
            row = link_numbers(a.lower, a.rdma)
            row.update((k, last[k]) for k in ('connections', 'cm_lines') if k in last)
            row.update(driver_numbers(st))
            row.update(cpu_numbers())
            if full:
                now = thread_ticks()
                row['top'] = top_threads(ticks, now)
                ticks = now
            if a.peer_qpn:
                row['peer_conns'] = peer_states(cm, a.peer_qpn)
            series.write(' '.join('%s=%s' % kv for kv in row.items()) + '\n')
            series.flush()
        if stop:
            break
        time.sleep(a.interval)
    if series:
        series.close()
    print('samples=%d' % n)
    emit(mx, 'max_')
    emit(last, 'last_')
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    for name in ('arp', 'ns', 'req'):
        s = sub.add_parser(name)
        s.add_argument('--dev', default='rxe0')
        s.add_argument('--port', type=int, default=1)
        s.add_argument('--victim', required=True)
        s.add_argument('--own', required=True)
        s.add_argument('--count', type=int, default=5000)
        s.add_argument('--pps', type=float, default=0, help='0: as fast as possible')
        if name == 'arp':
            s.add_argument('--victim-ip', required=True)
            s.add_argument('--base-ip', required=True)
        if name == 'ns':
            s.add_argument('--victim-ip6', required=True)
            s.add_argument('--base-ip6', required=True)
        if name == 'req':
            s.add_argument('--pdata', default='zero',
                           choices=('zero', 'short-buf', 'random', 'valid'))
            s.add_argument('--seed', type=int, default=1)
    s = sub.add_parser('sample')
    s.add_argument('--stop', required=True)
    s.add_argument('--interval', type=float, default=0.5)
    s.add_argument('--full-every', type=int, default=5,
                   help='every how many samples to read the whole state')
    s.add_argument('--ifname', default='ib0')
    s.add_argument('--series', help='append a line per sample to this file: '
                   'the lower link and RDMA port counters (link_numbers()), '
                   'driver counters (SERIES_STATS)')
    s.add_argument('--peer-qpn', help='UD QPN (6 hex digits) of the real peer: '
                   'the series also records its connections\' states')
    s.add_argument('--lower', default='eth0')
    s.add_argument('--rdma', default='rxe0')
    s = sub.add_parser('snap')
    s.add_argument('--ifname', default='ib0')
    cmds = {'arp': cmd_arp, 'ns': cmd_ns, 'req': cmd_req, 'sample': cmd_sample,
            'snap': cmd_snap}
    # Commands joined by "+" run one after the other in this process (a
    # python3 start with pyverbs costs 10-30 s in the debug guest); each
    # one's report is prefixed with "step N:", the exit status is the
    # first failure's.
    groups = [[]]
    for w in sys.argv[1:]:
        if w == '+':
            groups.append([])
        else:
            groups[-1].append(w)
    rc = 0
    for i, g in enumerate(groups):
        a = p.parse_args(g)
        if len(groups) > 1:
            print('step %d: %s' % (i + 1, ' '.join(g)), flush=True)
        r = cmds[a.cmd](a)
        if len(groups) > 1:
            print('step %d: rc=%d' % (i + 1, r), flush=True)
        rc = rc or r
    return rc


if __name__ == '__main__':
    sys.exit(main())
