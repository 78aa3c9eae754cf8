// SPDX-License-Identifier: GPL-2.0
/*
 * Counter names and summing of the per-CPU counters.
 */
#include <linux/cpumask.h>
#include <kunit/visibility.h>

#include "ipoib_stats.h"

const char * const ipng_stat_names[IPNG_STAT_MAX] = {
	[IPNG_STAT_RX_PACKETS]		= "rx_packets",
	[IPNG_STAT_RX_BYTES]		= "rx_bytes",
	[IPNG_STAT_TX_PACKETS]		= "tx_packets",
	[IPNG_STAT_TX_BYTES]		= "tx_bytes",
	[IPNG_STAT_RX_DROP_SHORT]	= "rx_drop_short",
	[IPNG_STAT_RX_DROP_PROTO]	= "rx_drop_unknown_type",
	[IPNG_STAT_RX_DROP_OWN_MCAST]	= "rx_drop_own_mcast",
	[IPNG_STAT_RX_DROP_NOMEM]	= "rx_drop_nomem",
	[IPNG_STAT_RX_ERRORS]		= "rx_completion_errors",
	[IPNG_STAT_TX_DROP_NO_PATH]	= "tx_drop_no_path",
	[IPNG_STAT_TX_DROP_QUEUE_FULL]	= "tx_drop_resolve_queue_full",
	[IPNG_STAT_TX_DROP_BAD_HEADER]	= "tx_drop_bad_header",
	[IPNG_STAT_TX_DROP_TOO_BIG]	= "tx_drop_too_big",
	[IPNG_STAT_TX_DROP_POST]	= "tx_drop_post_failed",
	[IPNG_STAT_TX_ERRORS]		= "tx_completion_errors",
	[IPNG_STAT_TX_DROP_RING_FULL]	= "tx_drop_ring_full",
	[IPNG_STAT_TX_DROP_CM_QUEUE]	= "tx_drop_cm_queue",
	[IPNG_STAT_TX_CM_FALLBACK]	= "tx_cm_fallback",
	[IPNG_STAT_CM_CAP]		= "cm_cap_reached",
	[IPNG_STAT_TX_DROP_NOT_JOINED]	= "tx_drop_not_joined",
	[IPNG_STAT_RX_DROP_BACKLOG]	= "rx_drop_backlog",
	[IPNG_STAT_TX_TIMEOUT]		= "tx_timeouts",
	[IPNG_STAT_QP_ERRORS]		= "qp_errors",
	[IPNG_STAT_RECOVERIES]		= "recoveries",
	[IPNG_STAT_CM_PEER_CAP]		= "cm_peer_cap_reached",
	[IPNG_STAT_PORT_EVENTS]		= "port_events",
	[IPNG_STAT_MCAST_REJOINS]	= "mcast_rejoins",
};

/**
 * ipng_stats_sum() - add up the counters of all CPUs
 * @stats: the interface's per-CPU counters
 * @sum: result, indexed by enum ipng_stat
 */
void ipng_stats_sum(struct ipng_pcpu_stats __percpu *stats,
		    u64 sum[IPNG_STAT_MAX])
{
	u64 snap[IPNG_STAT_MAX];
	unsigned int start;
	int cpu, i;

	memset(sum, 0, sizeof(u64) * IPNG_STAT_MAX);
	for_each_possible_cpu(cpu) {
		const struct ipng_pcpu_stats *s = per_cpu_ptr(stats, cpu);

		do {
			start = u64_stats_fetch_begin(&s->syncp);
			for (i = 0; i < IPNG_STAT_MAX; i++)
				snap[i] = u64_stats_read(&s->cnt[i]);
		} while (u64_stats_fetch_retry(&s->syncp, start));
		for (i = 0; i < IPNG_STAT_MAX; i++)
			sum[i] += snap[i];
	}
}
EXPORT_SYMBOL_IF_KUNIT(ipng_stats_sum);
