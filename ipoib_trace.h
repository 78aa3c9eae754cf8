/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of ipoib_ng, trace system "ipoib_ng": packets dropped (by
 * counter name), path resolution starting, succeeding and failing,
 * multicast groups changing state, and connected-mode connections coming
 * up, failing and closing. Every event names its interface. ipoib_trace.c
 * creates them (CREATE_TRACE_POINTS) and holds the helpers that fire the
 * drop and connection events; ipoib_arp.c and ipoib_multicast.c fire the
 * others themselves.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ipoib_ng

#ifndef IPNG_TRACE_DECLS
#define IPNG_TRACE_DECLS

#include "ipoib.h"

void ipng_trace_cm_step(struct ipng_dev *ipd, bool tx, u32 qpn,
			const u8 *gid, enum ipng_cm_state old,
			enum ipng_cm_state new, enum ipng_cm_event event,
			int err);

/* Interface name of an event; the multicast machine has none in KUnit. */
static inline const char *ipng_trace_dev(const struct net_device *ndev)
{
	return ndev ? ndev->name : "-";
}

/* Name of a drop counter. */
static inline const char *ipng_trace_stat(enum ipng_stat why)
{
	return why < IPNG_STAT_MAX ? ipng_stat_names[why] : "unknown";
}

#endif /* IPNG_TRACE_DECLS */

#if !defined(IPNG_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define IPNG_TRACE_H

#include <linux/tracepoint.h>

TRACE_DEFINE_ENUM(IPNG_MC_IDLE);
TRACE_DEFINE_ENUM(IPNG_MC_JOINING);
TRACE_DEFINE_ENUM(IPNG_MC_JOINED);
TRACE_DEFINE_ENUM(IPNG_MC_BACKOFF);
TRACE_DEFINE_ENUM(IPNG_MC_LEAVING);
TRACE_DEFINE_ENUM(IPNG_MC_NONE);
TRACE_DEFINE_ENUM(IPNG_MC_SENDONLY);
TRACE_DEFINE_ENUM(IPNG_MC_FULL);

#define ipng_show_mc_state(s)					\
	__print_symbolic(s,					\
			 { IPNG_MC_IDLE,	"idle" },	\
			 { IPNG_MC_JOINING,	"joining" },	\
			 { IPNG_MC_JOINED,	"joined" },	\
			 { IPNG_MC_BACKOFF,	"backoff" },	\
			 { IPNG_MC_LEAVING,	"leaving" })

#define ipng_show_mc_join(j)					\
	__print_symbolic(j,					\
			 { IPNG_MC_NONE,	"none" },	\
			 { IPNG_MC_SENDONLY,	"sendonly" },	\
			 { IPNG_MC_FULL,	"full" })

/* ipoib_ng:drop - packets dropped and counted under one counter */
TRACE_EVENT(drop,
	    TP_PROTO(const struct net_device *ndev, enum ipng_stat why,
		     unsigned int n),
	    TP_ARGS(ndev, why, n),
	    TP_STRUCT__entry(__string(dev, ndev->name)
			     __string(reason, ipng_trace_stat(why))
			     __field(unsigned int, count)),
	    TP_fast_assign(IPNG_ASSIGN_STR(dev, ndev->name);
			   IPNG_ASSIGN_STR(reason, ipng_trace_stat(why));
			   __entry->count = n;),
	    TP_printk("dev=%s reason=%s count=%u", __get_str(dev),
		      __get_str(reason), __entry->count)
);

/* ipoib_ng:path_resolve_start - a path to @gid starts resolving */
TRACE_EVENT(path_resolve_start,
	    TP_PROTO(const struct net_device *ndev, const union ib_gid *gid),
	    TP_ARGS(ndev, gid),
	    TP_STRUCT__entry(__string(dev, ndev->name)
			     __array(u8, gid, 16)),
	    TP_fast_assign(IPNG_ASSIGN_STR(dev, ndev->name);
			   memcpy(__entry->gid, gid->raw, 16);),
	    TP_printk("dev=%s gid=%pI6", __get_str(dev), __entry->gid)
);

/*
 * ipoib_ng:path_resolve_done - the path to @gid has its address handle:
 * InfiniBand LID and SL, or RoCE (destination MAC and SL)
 */
TRACE_EVENT(path_resolve_done,
	    TP_PROTO(const struct net_device *ndev, const union ib_gid *gid,
		     const struct ipng_ah *ah),
	    TP_ARGS(ndev, gid, ah),
	    TP_STRUCT__entry(__string(dev, ndev->name)
			     __array(u8, gid, 16)
			     __field(bool, roce)
			     __field(u32, lid)
			     __field(u8, sl)
			     __array(u8, dmac, ETH_ALEN)),
	    TP_fast_assign(IPNG_ASSIGN_STR(dev, ndev->name);
			   memcpy(__entry->gid, gid->raw, 16);
			   __entry->roce = ah->type == RDMA_AH_ATTR_TYPE_ROCE;
			   __entry->lid = __entry->roce ? 0 : ah->dlid;
			   __entry->sl = ah->sl;
			   memcpy(__entry->dmac, ah->dmac, ETH_ALEN);),
	    TP_printk("dev=%s gid=%pI6 link=%s lid=0x%04x sl=%u dmac=%pM",
		      __get_str(dev), __entry->gid,
		      __entry->roce ? "roce" : "ib", __entry->lid,
		      __entry->sl, __entry->dmac)
);

/* ipoib_ng:path_resolve_fail - the path to @gid could not be resolved */
TRACE_EVENT(path_resolve_fail,
	    TP_PROTO(const struct net_device *ndev, const union ib_gid *gid,
		     int err),
	    TP_ARGS(ndev, gid, err),
	    TP_STRUCT__entry(__string(dev, ndev->name)
			     __array(u8, gid, 16)
			     __field(int, err)),
	    TP_fast_assign(IPNG_ASSIGN_STR(dev, ndev->name);
			   memcpy(__entry->gid, gid->raw, 16);
			   __entry->err = err;),
	    TP_printk("dev=%s gid=%pI6 err=%d", __get_str(dev), __entry->gid,
		      __entry->err)
);

/*
 * ipoib_ng:mcast_state - a multicast group moves from state @old to
 * @new; @join is the membership held or asked for, @error the result of
 * the group's last join
 */
TRACE_EVENT(mcast_state,
	    TP_PROTO(const struct net_device *ndev, const union ib_gid *mgid,
		     enum ipng_mc_join join, enum ipng_mc_state old,
		     enum ipng_mc_state new, int error),
	    TP_ARGS(ndev, mgid, join, old, new, error),
	    TP_STRUCT__entry(__string(dev, ipng_trace_dev(ndev))
			     __array(u8, mgid, 16)
			     __field(unsigned int, join)
			     __field(unsigned int, old)
			     __field(unsigned int, new)
			     __field(int, error)),
	    TP_fast_assign(IPNG_ASSIGN_STR(dev, ipng_trace_dev(ndev));
			   memcpy(__entry->mgid, mgid->raw, 16);
			   __entry->join = join;
			   __entry->old = old;
			   __entry->new = new;
			   __entry->error = error;),
	    TP_printk("dev=%s mgid=%pI6 join=%s old=%s new=%s error=%d",
		      __get_str(dev), __entry->mgid,
		      ipng_show_mc_join(__entry->join),
		      ipng_show_mc_state(__entry->old),
		      ipng_show_mc_state(__entry->new), __entry->error)
);

/*
 * ipoib_ng:cm_connect - a connected-mode connection to or from the peer
 * (@qpn, @gid) is live (@result 0) or could not be made (negative errno);
 * @tx: ours (outgoing) or the peer's (incoming)
 */
TRACE_EVENT(cm_connect,
	    TP_PROTO(const struct net_device *ndev, u32 qpn, const u8 *gid,
		     bool tx, int result),
	    TP_ARGS(ndev, qpn, gid, tx, result),
	    TP_STRUCT__entry(__string(dev, ndev->name)
			     __field(u32, qpn)
			     __array(u8, gid, 16)
			     __field(bool, tx)
			     __field(int, result)),
	    TP_fast_assign(IPNG_ASSIGN_STR(dev, ndev->name);
			   __entry->qpn = qpn;
			   memcpy(__entry->gid, gid, 16);
			   __entry->tx = tx;
			   __entry->result = result;),
	    TP_printk("dev=%s dir=%s qpn=0x%06x gid=%pI6 result=%d",
		      __get_str(dev), __entry->tx ? "tx" : "rx", __entry->qpn,
		      __entry->gid, __entry->result)
);

/*
 * ipoib_ng:cm_disconnect - a connection closes; @reason: the state
 * machine event that closed it (dreq, idle, close, qp_error, rej, ...)
 */
TRACE_EVENT(cm_disconnect,
	    TP_PROTO(const struct net_device *ndev, u32 qpn, const u8 *gid,
		     bool tx, const char *reason),
	    TP_ARGS(ndev, qpn, gid, tx, reason),
	    TP_STRUCT__entry(__string(dev, ndev->name)
			     __field(u32, qpn)
			     __array(u8, gid, 16)
			     __field(bool, tx)
			     __string(reason, reason)),
	    TP_fast_assign(IPNG_ASSIGN_STR(dev, ndev->name);
			   __entry->qpn = qpn;
			   memcpy(__entry->gid, gid, 16);
			   __entry->tx = tx;
			   IPNG_ASSIGN_STR(reason, reason);),
	    TP_printk("dev=%s dir=%s qpn=0x%06x gid=%pI6 reason=%s",
		      __get_str(dev), __entry->tx ? "tx" : "rx", __entry->qpn,
		      __entry->gid, __get_str(reason))
);

#endif /* IPNG_TRACE_H */

/* Out of tree: the header is found next to ipoib_trace.c (-I$(src)). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ipoib_trace
#include <trace/define_trace.h>
