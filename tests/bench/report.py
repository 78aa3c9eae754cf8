#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Report of `make bench`: reads what tests/bench/bench-guest.sh left in
# <results>/mtu<MTU>/vm{1,2}/ (raw tool output, /proc/stat snapshots, info)
# and what tests/bench/bench.sh left in <results>/ (host-info.txt, the
# host's CPU samples in host-stat.txt), and writes results.json,
# results.csv and table.md there; prints the table.
#
# Exit status 1 if any value could not be measured (each one is named);
# values are never compared with thresholds.
#
#   tests/bench/report.py RESULTS_DIR

import csv
import json
import math
import os
import re
import statistics
import sys

MIB = 1048576


def read_kv(path):
    out = {}
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                if '=' in line:
                    k, v = line.rstrip('\n').split('=', 1)
                    out[k] = v
    except OSError:
        pass
    return out


def read_text(path):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read()
    except OSError:
        return None


def parse_ping(text):
    """Median and average RTT in us and packets sent/received, from ping
    output with one line per reply."""
    m = re.search(r'(\d+) packets transmitted, (\d+) received', text)
    times = sorted(float(t) for t in re.findall(r' time=([\d.]+) ms', text))
    if not m or not times:
        return None
    return {'rtt_median_us': statistics.median(times) * 1000.0,
            'rtt_avg_us': statistics.fmean(times) * 1000.0,
            'sent': int(m.group(1)), 'received': int(m.group(2))}


def parse_iperf3(text):
    """Receiver-side TCP goodput of an iperf3 -J client run."""
    start, end = text.find('{'), text.rfind('}')
    if start < 0 or end < start:
        return None
    try:
        j = json.loads(text[start:end + 1])
    except ValueError:
        return None
    if j.get('error'):
        return {'error': j['error']}
    e = j.get('end', {})
    rcv = e.get('sum_received', {})
    snd = e.get('sum_sent', {})
    if not rcv.get('bits_per_second'):
        return None
    cpu = e.get('cpu_utilization_percent', {})
    return {'mbps': rcv['bits_per_second'] / 1e6,
            'seconds': rcv.get('seconds'),
            'retransmits': snd.get('retransmits'),
            'iperf3_cpu_sender_pct': cpu.get('host_total'),
            'iperf3_cpu_receiver_pct': cpu.get('remote_total')}


def parse_ethtool_stats(text):
    """{counter: value} of `ethtool -S` output."""
    out = {}
    for line in (text or '').splitlines():
        k, sep, v = line.partition(':')
        if sep and v.strip().isdigit():
            out[k.strip()] = int(v)
    return out


def polls_per_packet(before, after):
    """NAPI polls (all channels) per received packet between two
    `ethtool -S` outputs, with the two deltas; None without traffic."""
    b, a = parse_ethtool_stats(before), parse_ethtool_stats(after)
    polls = [k for k in a if re.match(r'^ch\d+_napi_polls$', k)]
    if not polls or 'rx_packets' not in a or 'rx_packets' not in b:
        return None
    dp = sum(a[k] - b.get(k, 0) for k in polls)
    dr = a['rx_packets'] - b['rx_packets']
    if dr <= 0:
        return None
    return {'ratio': dp / dr, 'polls': dp, 'packets': dr,
            'channels': len(polls)}


def usable(v):
    """A measured value: a finite positive number (perftest prints 0.00
    or inf when it has no clock)."""
    return v if isinstance(v, float) and math.isfinite(v) and v > 0 else None


def parse_perftest(text):
    """The result row of ib_send_bw / ib_send_lat output as {column: value}."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if '#bytes' not in line:
            continue
        names = re.findall(r'#\w+|(?:[\w.%]+ )?\w+\[[^\]]+\]', line)
        for data in lines[i + 1:]:
            vals = data.split()
            if len(vals) >= len(names) and re.match(r'^\d+$', vals[0]):
                try:
                    return dict(zip(names, (float(v) for v in vals)))
                except ValueError:
                    return None
    return None


def cpu_lines(path):
    out = {}
    text = read_text(path)
    if text is None:
        return None
    for line in text.splitlines():
        f = line.split()
        if f and f[0].startswith('cpu'):
            out[f[0]] = [int(x) for x in f[1:]]
    return out


def busy(a, b):
    """Busy and softirq share (%) between two /proc/stat cpu rows."""
    d = [y - x for x, y in zip(a, b)]
    total = sum(d[:8])  # user..steal; guest time is already in user
    if total <= 0:
        return None, None
    idle = d[3] + d[4]
    return 100.0 * (total - idle) / total, 100.0 * d[6] / total


def guest_cpu(raw, name, role):
    s0 = cpu_lines(os.path.join(raw, f'{name}.{role}.stat0'))
    s1 = cpu_lines(os.path.join(raw, f'{name}.{role}.stat1'))
    if not s0 or not s1 or 'cpu' not in s0 or 'cpu' not in s1:
        return None
    tot, sirq = busy(s0['cpu'], s1['cpu'])
    per = [busy(s0[c], s1[c])[0] for c in s0 if c != 'cpu' and c in s1]
    per = [p for p in per if p is not None]
    if tot is None:
        return None
    return {'busy_pct': tot, 'softirq_pct': sirq,
            'busiest_vcpu_pct': max(per) if per else None}


def host_samples(path):
    """(time, ticks of our QEMUs, host cpu row) per host-sample.py line."""
    out = []
    text = read_text(path) or ''
    for line in text.splitlines():
        f = line.split()
        if len(f) > 4 and f[2] == 'cpu':
            try:
                out.append((float(f[0]), int(f[1]), [int(x) for x in f[3:]]))
            except ValueError:
                pass
    return out


def host_cpu(samples, t0, t1):
    """Host busy % and our QEMUs' share (% of all host cores) from the last
    sample at or before t0 to the first at or after t1 (so the window is
    widened by up to a second on each side)."""
    before = [s for s in samples if s[0] <= t0]
    after = [s for s in samples if s[0] >= t1]
    if not before or not after:
        return None, None
    a, b = before[-1], after[0]
    total = sum(y - x for x, y in zip(a[2][:8], b[2][:8]))
    ours = 100.0 * (b[1] - a[1]) / total if total > 0 else None
    return busy(a[2], b[2])[0], ours


def window(raw, name, role):
    try:
        t0 = os.stat(os.path.join(raw, f'{name}.{role}.stat0')).st_mtime
        t1 = os.stat(os.path.join(raw, f'{name}.{role}.stat1')).st_mtime
    except OSError:
        return None
    return t0, t1


def measure_run(rundir, samples, missing, mtu):
    vm1 = os.path.join(rundir, 'vm1')
    vm2 = os.path.join(rundir, 'vm2')
    raw1 = os.path.join(vm1, 'raw')
    raw2 = os.path.join(vm2, 'raw')
    info = read_kv(os.path.join(vm2, 'info.txt')) or read_kv(
        os.path.join(vm1, 'info.txt'))
    status = {}
    for vm in (vm1, vm2):
        text = read_text(os.path.join(vm, 'measured.txt')) or ''
        for line in text.splitlines():
            f = line.split()
            if len(f) == 2 and f[1] != 'ok':
                status[f[0]] = f'{os.path.basename(vm)}: {f[1]}'
    run = {'info': info, 'values': {}, 'cpu': {}}
    val = run['values']
    # Round trips of tens of microseconds need a clock finer than a jiffy.
    clock_bad = 'jiffies' in info.get('clocksource', '')

    def need(key, value, what, name):
        if value is None:
            why = status.get(name) or 'no result in the tool output'
            missing.append(f'{what} at MTU {mtu} ({why}; see '
                           f'{os.path.relpath(rundir)}/vm*/raw/{name}.*)')
        else:
            val[key] = value

    if not info:
        missing.append(f'MTU {mtu}: no guest info.txt (setup failed? see '
                       f'{os.path.relpath(rundir)}/vm*/script.log)')

    def perftest_why(name, *texts):
        if any('Correlation coefficient' in (t or '') for t in texts):
            status.setdefault(name, 'perftest could not calibrate its cycle '
                              'counter against the guest clock')

    for name in ('ping_ib0', 'ping_eth0'):
        p = parse_ping(read_text(os.path.join(raw2, f'{name}.client')) or '')
        if p and clock_bad:
            status.setdefault(name, 'guest clocksource is jiffies')
            p = None
        need(f'{name}_rtt_us', p and usable(p['rtt_median_us']),
             f'ping RTT over {name[5:]}', name)
        if p:
            val[f'{name}_rtt_avg_us'] = p['rtt_avg_us']
            val[f'{name}_lost'] = p['sent'] - p['received']

    for name in ('lat_ud', 'lat_ud_ev'):
        text = read_text(os.path.join(raw2, f'{name}.client')) or ''
        lat = parse_perftest(text) or {}
        perftest_why(name, text)
        # t_typical is perftest's median.
        need(f'{name}_typical_us', usable(lat.get('t_typical[usec]')),
             'ib_send_lat UD' + (' -e' if name.endswith('_ev') else ''), name)
        if usable(lat.get('t_avg[usec]')):
            val[f'{name}_avg_us'] = lat['t_avg[usec]']

    for name, what in (('tcp_ib0', 'iperf3 TCP over ib0'),
                       ('tcp_eth0', 'iperf3 TCP over eth0'),
                       ('tcp_ib0_cm', 'iperf3 TCP over ib0, connected mode'),
                       ('tcp_ib0_p4_1ch', 'iperf3 TCP over ib0, 4 streams, '
                        '1 channel'),
                       ('tcp_ib0_p4_2ch', 'iperf3 TCP over ib0, 4 streams, '
                        '2 channels'),
                       ('napi_rx0', 'iperf3 TCP over ib0, rx-usecs 0'),
                       ('napi_rx100', 'iperf3 TCP over ib0, rx-usecs 100')):
        r = parse_iperf3(read_text(os.path.join(raw2, f'{name}.client')) or '')
        if r and 'error' in r:
            status.setdefault(name, 'iperf3: ' + r['error'])
            r = None
        need(f'{name}_mbps', r and usable(float(r['mbps'])), what, name)
        if r:
            val[f'{name}_retransmits'] = r['retransmits']

    # ib_send_bw -D counts the messages of the middle duration - 2 * margin
    # seconds (timed with alarm(), not with its cycle counter); its own
    # MB/sec (MiB) figure needs the cycle counter, which TCG guests
    # sometimes fail to calibrate, so the rate is computed from the count.
    try:
        span = float(info['duration']) - 2 * float(info['bw_margin'])
    except (KeyError, ValueError):
        span = 0
    # The same for RC (connected mode's counterpart).
    for name, what in (('bw_ud', 'ib_send_bw UD'), ('bw_rc', 'ib_send_bw RC')):
        for role, raw, key in (('server', raw1, f'{name}_mbps'),
                               ('client', raw2, f'{name}_sender_mbps')):
            text = read_text(os.path.join(raw, f'{name}.{role}')) or ''
            row = parse_perftest(text) or {}
            msgs = usable(row.get('#iterations'))
            size = usable(row.get('#bytes'))
            rate = None
            if msgs and size and span > 0:
                rate = msgs * size * 8 / span / 1e6
            if role == 'server':
                need(key, rate, f'{what} (receiver side)', name)
                own = usable(row.get('BW average[MB/sec]'))
                if own:
                    val[f'{name}_perftest_mbps'] = own * MIB * 8 / 1e6
            elif rate:
                val[key] = rate

    # The receiver's NAPI polls per received packet at both settings.
    for u in ('0', '100'):
        name = f'napi_rx{u}'
        p = polls_per_packet(
            read_text(os.path.join(raw1, f'{name}.ethtool0')),
            read_text(os.path.join(raw1, f'{name}.ethtool1')))
        need(f'{name}_polls_per_packet', p and p['ratio'],
             f'NAPI polls per packet at rx-usecs {u} (vm1 ethtool -S)', name)
        if p:
            val[f'{name}_polls'] = p['polls']
            val[f'{name}_packets'] = p['packets']

    v = val
    if 'tcp_ib0_p4_1ch_mbps' in v and 'tcp_ib0_p4_2ch_mbps' in v:
        v['ratio_tcp_ib0_p4_2ch_to_1ch'] = (v['tcp_ib0_p4_2ch_mbps'] /
                                            v['tcp_ib0_p4_1ch_mbps'])
    if ('napi_rx0_polls_per_packet' in v and
            'napi_rx100_polls_per_packet' in v):
        v['ratio_napi_rx100_to_rx0'] = (v['napi_rx100_polls_per_packet'] /
                                        v['napi_rx0_polls_per_packet'])
    for tcp, bw in (('tcp_ib0', 'bw_ud'), ('tcp_ib0_cm', 'bw_rc')):
        if f'{tcp}_mbps' in v and f'{bw}_mbps' in v:
            v[f'ratio_{tcp}_to_{bw}'] = v[f'{tcp}_mbps'] / v[f'{bw}_mbps']
    if 'tcp_ib0_cm_mbps' in v and 'tcp_ib0_mbps' in v:
        v['ratio_tcp_ib0_cm_to_tcp_ib0'] = (v['tcp_ib0_cm_mbps'] /
                                            v['tcp_ib0_mbps'])
    if 'tcp_ib0_mbps' in v and 'tcp_eth0_mbps' in v:
        v['ratio_tcp_ib0_to_tcp_eth0'] = v['tcp_ib0_mbps'] / v['tcp_eth0_mbps']
    # ib_send_lat reports half the round trip. Medians are compared: under
    # TCG a few long stalls dominate the averages.
    for name in ('lat_ud', 'lat_ud_ev'):
        if f'{name}_typical_us' in v:
            v[f'{name}_rtt_us'] = 2 * v[f'{name}_typical_us']
            if 'ping_ib0_rtt_us' in v:
                v[f'ratio_ping_ib0_to_{name}_rtt'] = (v['ping_ib0_rtt_us'] /
                                                      v[f'{name}_rtt_us'])
        if f'{name}_avg_us' in v:
            v[f'{name}_rtt_avg_us'] = 2 * v[f'{name}_avg_us']

    for name in ('tcp_ib0', 'tcp_eth0', 'bw_ud', 'ping_ib0', 'lat_ud',
                 'lat_ud_ev', 'tcp_ib0_p4_1ch', 'tcp_ib0_p4_2ch', 'napi_rx0',
                 'napi_rx100', 'tcp_ib0_cm', 'bw_rc'):
        c = {'receiver_vm1': guest_cpu(raw1, name, 'server'),
             'sender_vm2': guest_cpu(raw2, name, 'client')}
        w = window(raw2, name, 'client')
        c['host_busy_pct'], c['host_qemu_pct'] = (host_cpu(samples, *w) if w
                                                  else (None, None))
        run['cpu'][name] = c
    return run


def fmt(v, digits=0):
    if v is None:
        return 'n/a'
    return f'{v:.{digits}f}'


def table(host, runs):
    mtus = sorted(runs, key=int)

    def guest(key):
        return next((r['info'][key] for r in runs.values()
                     if r['info'].get(key)), '?')

    hdr = '| | ' + ' | '.join(f'MTU {m}' for m in mtus) + ' |'
    sep = '|---|' + '---:|' * len(mtus)
    out = [hdr, sep]

    def row(label, fn):
        cells = ' | '.join(fn(runs[m]) for m in mtus)
        out.append(f'| {label} | {cells} |')

    def val(key, digits=0):
        return lambda r: fmt(r['values'].get(key), digits)

    row('eth0 MTU / RoCE active MTU / ib0 MTU',
        lambda r: ' / '.join(r['info'].get(k, '?') for k in
                             ('eth0_mtu', 'rxe_active_mtu', 'ib0_mtu')))
    row('ib0 TCP, iperf3 (Mbit/s)', val('tcp_ib0_mbps'))
    row('eth0 TCP, iperf3 (Mbit/s)', val('tcp_eth0_mbps'))
    row('ib_send_bw UD received (Mbit/s)', val('bw_ud_mbps'))
    row('ib_send_bw UD sent (Mbit/s)', val('bw_ud_sender_mbps'))
    row('UD message size (bytes)', lambda r: r['info'].get('ud_size', '?'))
    row('**ib0 TCP / ib_send_bw UD** (goal >= 0.8)',
        val('ratio_tcp_ib0_to_bw_ud', 2))
    row('ib0 TCP / eth0 TCP', val('ratio_tcp_ib0_to_tcp_eth0', 2))
    row('ib0 TCP 4 streams, 1 channel (Mbit/s)', val('tcp_ib0_p4_1ch_mbps'))
    row('ib0 TCP 4 streams, 2 channels (Mbit/s)', val('tcp_ib0_p4_2ch_mbps'))
    row('**4 streams: 2 channels / 1 channel**',
        val('ratio_tcp_ib0_p4_2ch_to_1ch', 2))
    row('receiver NAPI polls per packet, rx-usecs 0',
        val('napi_rx0_polls_per_packet', 3))
    row('receiver NAPI polls per packet, rx-usecs 100',
        val('napi_rx100_polls_per_packet', 3))
    row('**NAPI polls per packet, rx-usecs 100 / 0**',
        val('ratio_napi_rx100_to_rx0', 2))
    row('ib0 TCP at rx-usecs 0 / 100 (Mbit/s)',
        lambda r: '{} / {}'.format(fmt(r['values'].get('napi_rx0_mbps')),
                                   fmt(r['values'].get('napi_rx100_mbps'))))
    row('ib0 MTU, connected mode', lambda r: r['info'].get('ib0_cm_mtu', '?'))
    row('ib0 TCP, connected mode, iperf3 (Mbit/s)', val('tcp_ib0_cm_mbps'))
    row('ib_send_bw RC received (Mbit/s)', val('bw_rc_mbps'))
    row('ib_send_bw RC sent (Mbit/s)', val('bw_rc_sender_mbps'))
    row('RC message size (bytes)', lambda r: r['info'].get('rc_size', '?'))
    row('**ib0 TCP connected / ib_send_bw RC** (goal >= 0.8)',
        val('ratio_tcp_ib0_cm_to_bw_rc', 2))
    row('ib0 TCP connected / datagram', val('ratio_tcp_ib0_cm_to_tcp_ib0', 2))
    def two(median, avg):
        return lambda r: '{} ({})'.format(fmt(r['values'].get(median)),
                                          fmt(r['values'].get(avg)))
    row('ping RTT over ib0, median (avg), us',
        two('ping_ib0_rtt_us', 'ping_ib0_rtt_avg_us'))
    row('ping RTT over eth0, median (avg), us',
        two('ping_eth0_rtt_us', 'ping_eth0_rtt_avg_us'))
    row('ib_send_lat UD 88 B round trip, polling, median (avg), us',
        two('lat_ud_rtt_us', 'lat_ud_rtt_avg_us'))
    row('ib_send_lat UD 88 B round trip, events (-e), median (avg), us',
        two('lat_ud_ev_rtt_us', 'lat_ud_ev_rtt_avg_us'))
    row('ping RTT ib0 / ib_send_lat round trip, polling (medians)',
        val('ratio_ping_ib0_to_lat_ud_rtt', 2))
    row('ping RTT ib0 / ib_send_lat round trip, events (medians)',
        val('ratio_ping_ib0_to_lat_ud_ev_rtt', 2))
    out.append('')
    out.append('CPU busy while measuring: guests in % of all their vCPUs '
               '(busiest vCPU), softirq share; host in % of all its cores, '
               'and the part our two QEMUs took:')
    out.append('')
    out.append('| measurement | vm1 (receiver) | vm2 (sender) | host busy '
               '| of which our QEMUs |')
    out.append('|---|---:|---:|---:|---:|')
    labels = {'tcp_ib0': 'ib0 TCP', 'tcp_eth0': 'eth0 TCP',
              'bw_ud': 'ib_send_bw UD', 'ping_ib0': 'ping ib0',
              'lat_ud': 'ib_send_lat UD',
              'tcp_ib0_p4_1ch': 'ib0 TCP 4 streams, 1 channel',
              'tcp_ib0_p4_2ch': 'ib0 TCP 4 streams, 2 channels',
              'napi_rx0': 'ib0 TCP, rx-usecs 0',
              'napi_rx100': 'ib0 TCP, rx-usecs 100',
              'tcp_ib0_cm': 'ib0 TCP connected',
              'bw_rc': 'ib_send_bw RC'}

    def g(c):
        if not c:
            return 'n/a'
        return '{} ({}), softirq {}'.format(fmt(c['busy_pct']),
                                            fmt(c['busiest_vcpu_pct']),
                                            fmt(c['softirq_pct']))
    for m in mtus:
        for name, label in labels.items():
            c = runs[m]['cpu'].get(name, {})
            out.append(f'| {label}, MTU {m} | {g(c.get("receiver_vm1"))} | '
                       f'{g(c.get("sender_vm2"))} | '
                       f'{fmt(c.get("host_busy_pct"))} | '
                       f'{fmt(c.get("host_qemu_pct"))} |')
    out.append('')
    out.append('{}; host: {} x {}, load average before {}; '
               'QEMU TCG, {} vCPUs per VM; guest kernel {} (fast flavour, '
               'clocksource {}); ipoib_ng {}; {} s per throughput run, '
               'one stream unless noted.'.format(
                   host.get('date', '?'), host.get('host_nproc', '?'),
                   host.get('host_cpu', '?'),
                   host.get('host_loadavg_before', '?'),
                   guest('vcpus'), guest('kernel'), guest('clocksource'),
                   host.get('commit', '?'), host.get('duration', '?')))
    others = [c['host_busy_pct'] - c['host_qemu_pct']
              for r in runs.values() for c in r['cpu'].values()
              if c.get('host_busy_pct') is not None
              and c.get('host_qemu_pct') is not None]
    if others and max(others) >= 10:
        out.append('')
        out.append('Other processes took up to {}% of the host\'s cores '
                   'during these measurements: the values are lower than '
                   'on a quiet host.'.format(fmt(max(others))))
    return '\n'.join(out) + '\n'


def main():
    if len(sys.argv) != 2:
        print('usage: report.py RESULTS_DIR', file=sys.stderr)
        return 2
    res = sys.argv[1]
    host = read_kv(os.path.join(res, 'host-info.txt'))
    samples = host_samples(os.path.join(res, 'host-stat.txt'))
    mtus = host.get('mtus', '').split()
    if not mtus:
        mtus = sorted((d[3:] for d in os.listdir(res) if d.startswith('mtu')),
                      key=int)
    missing = []
    runs = {}
    for mtu in mtus:
        runs[mtu] = measure_run(os.path.join(res, f'mtu{mtu}'), samples,
                                missing, mtu)

    doc = {'host': host, 'runs': runs, 'missing': missing}
    with open(os.path.join(res, 'results.json'), 'w', encoding='utf-8') as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write('\n')
    with open(os.path.join(res, 'results.csv'), 'w', newline='',
              encoding='utf-8') as f:
        w = csv.writer(f)
        w.writerow(['mtu', 'metric', 'value'])
        for mtu in mtus:
            for k, v in sorted(runs[mtu]['values'].items()):
                w.writerow([mtu, k, v])
            for name, c in sorted(runs[mtu]['cpu'].items()):
                for who in ('receiver_vm1', 'sender_vm2'):
                    for k, v in sorted((c.get(who) or {}).items()):
                        w.writerow([mtu, f'cpu_{name}_{who}_{k}', v])
                for k in ('host_busy_pct', 'host_qemu_pct'):
                    w.writerow([mtu, f'cpu_{name}_{k}', c.get(k)])
    text = table(host, runs)
    with open(os.path.join(res, 'table.md'), 'w', encoding='utf-8') as f:
        f.write(text)
    print(text, end='')
    print(f'report: results.json, results.csv, table.md in {res}')
    if missing:
        for m in missing:
            print(f'report: NOT MEASURED: {m}')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
