/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface counters: one table of per-CPU u64 counters, named once in
 * ipoib_stats.c, that feeds ndo_get_stats64 (and later ethtool -S and
 * /proc).
 */
#ifndef IPNG_STATS_H
#define IPNG_STATS_H

#include <linux/percpu.h>
#include <linux/u64_stats_sync.h>

/**
 * enum ipng_stat - one counter per packet outcome
 * @IPNG_STAT_RX_PACKETS: packets passed up the stack
 * @IPNG_STAT_RX_BYTES: their bytes, IPoIB header excluded
 * @IPNG_STAT_TX_PACKETS: packets whose send completed successfully
 * @IPNG_STAT_TX_BYTES: their bytes, IPoIB header excluded
 * @IPNG_STAT_RX_DROP_SHORT: frame shorter than GRH area + header
 * @IPNG_STAT_RX_DROP_PROTO: EtherType other than IPv4, ARP, IPv6
 * @IPNG_STAT_RX_DROP_OWN_MCAST: our own multicast looped back to us
 * @IPNG_STAT_RX_DROP_NOMEM: no buffer to replace the received one
 * @IPNG_STAT_RX_ERRORS: receive completions with an error status
 * @IPNG_STAT_TX_DROP_NO_PATH: destination could not be resolved
 * @IPNG_STAT_TX_DROP_QUEUE_FULL: per-destination resolve queue full
 * @IPNG_STAT_TX_DROP_BAD_HEADER: packet without a valid IPoIB link header
 * @IPNG_STAT_TX_DROP_TOO_BIG: packet larger than the datagram MTU
 * @IPNG_STAT_TX_DROP_POST: the send queue refused the work request
 * @IPNG_STAT_TX_ERRORS: send completions with an error status, or (UD) that
 *	name no send in flight, or the sends they retire whose own
 *	completion never came
 * @IPNG_STAT_TX_DROP_RING_FULL: send ring (UD or RC) had no free slot
 * @IPNG_STAT_TX_DROP_CM_QUEUE: dropped while waiting for a connection
 *	(its queue was full, or it closed before coming up)
 * @IPNG_STAT_TX_CM_FALLBACK: connected mode: unicast sent over UD because
 *	no RC connection was up (peer not capable, rejected, failed, cap)
 * @IPNG_STAT_CM_CAP: connections not made or refused because
 *	max_connections were up
 * @IPNG_STAT_TX_DROP_NOT_JOINED: multicast to a group that could not be
 *	joined (send-only join failed)
 * @IPNG_STAT_RX_DROP_BACKLOG: received packet handed to another channel
 *	whose backlog was full
 * @IPNG_STAT_TX_TIMEOUT: send queues found stuck by the watchdog and reset
 * @IPNG_STAT_QP_ERRORS: UD QP errors seen (an async event, an error or
 *	flush completion outside our own resets, a failed repost)
 * @IPNG_STAT_RECOVERIES: channel resets done, whatever their cause
 * @IPNG_STAT_CM_PEER_CAP: connections refused (sent over UD instead)
 *	because the peer's GID holds IPNG_CM_PER_PEER connections (or failed
 *	markers) already
 * @IPNG_STAT_PORT_EVENTS: times the interface re-read its port (a port
 *	event: state, LID, SM, P_Key, GID, client reregister; or a channel
 *	recovery), each flushing its paths and connections and rejoining its
 *	groups
 * @IPNG_STAT_MCAST_REJOINS: groups left and joined again after a port
 *	event or after the subnet manager lost them (from the multicast
 *	state, not per CPU: see ipng_stats_read())
 * @IPNG_STAT_MAX: number of counters
 */
enum ipng_stat {
	IPNG_STAT_RX_PACKETS,
	IPNG_STAT_RX_BYTES,
	IPNG_STAT_TX_PACKETS,
	IPNG_STAT_TX_BYTES,
	IPNG_STAT_RX_DROP_SHORT,
	IPNG_STAT_RX_DROP_PROTO,
	IPNG_STAT_RX_DROP_OWN_MCAST,
	IPNG_STAT_RX_DROP_NOMEM,
	IPNG_STAT_RX_ERRORS,
	IPNG_STAT_TX_DROP_NO_PATH,
	IPNG_STAT_TX_DROP_QUEUE_FULL,
	IPNG_STAT_TX_DROP_BAD_HEADER,
	IPNG_STAT_TX_DROP_TOO_BIG,
	IPNG_STAT_TX_DROP_POST,
	IPNG_STAT_TX_ERRORS,
	IPNG_STAT_TX_DROP_RING_FULL,
	IPNG_STAT_TX_DROP_CM_QUEUE,
	IPNG_STAT_TX_CM_FALLBACK,
	IPNG_STAT_CM_CAP,
	IPNG_STAT_TX_DROP_NOT_JOINED,
	IPNG_STAT_RX_DROP_BACKLOG,
	IPNG_STAT_TX_TIMEOUT,
	IPNG_STAT_QP_ERRORS,
	IPNG_STAT_RECOVERIES,
	IPNG_STAT_CM_PEER_CAP,
	IPNG_STAT_PORT_EVENTS,
	IPNG_STAT_MCAST_REJOINS,
	IPNG_STAT_MAX
};

/**
 * struct ipng_pcpu_stats - the counters of one CPU
 * @syncp: makes 64-bit reads consistent on 32-bit hosts
 * @cnt: values, indexed by enum ipng_stat
 *
 * Written only by the owning CPU with bottom halves disabled.
 */
struct ipng_pcpu_stats {
	struct u64_stats_sync syncp;
	u64_stats_t cnt[IPNG_STAT_MAX];
};

extern const char * const ipng_stat_names[IPNG_STAT_MAX];

/**
 * ipng_stat_add() - add to a counter of this CPU
 * @stats: the interface's per-CPU counters
 * @stat: which counter
 * @val: amount
 *
 * Callers run in softirq or transmit context, or disable bottom halves.
 */
static inline void ipng_stat_add(struct ipng_pcpu_stats __percpu *stats,
				 enum ipng_stat stat, u64 val)
{
	struct ipng_pcpu_stats *s = this_cpu_ptr(stats);

	u64_stats_update_begin(&s->syncp);
	u64_stats_add(&s->cnt[stat], val);
	u64_stats_update_end(&s->syncp);
}

/**
 * ipng_stat_add_bh() - ipng_stat_add() from process context
 * @stats: the interface's per-CPU counters
 * @stat: which counter
 * @val: amount
 */
static inline void ipng_stat_add_bh(struct ipng_pcpu_stats __percpu *stats,
				    enum ipng_stat stat, u64 val)
{
	local_bh_disable();
	ipng_stat_add(stats, stat, val);
	local_bh_enable();
}

void ipng_stats_sum(struct ipng_pcpu_stats __percpu *stats,
		    u64 sum[IPNG_STAT_MAX]);

#endif /* IPNG_STATS_H */
