/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interrupt moderation of one channel: the ethtool -C settings, their
 * checks, and how a channel's NAPI context waits between polls. Where the
 * device moderates its CQs (rdma_set_cq_moderation()) the settings go to
 * the device; where it cannot (rxe), NAPI holds off re-arming the CQs for
 * a while after a poll that found work and polls again from a timer.
 * Adaptive moderation picks the settings with lib/dim.
 */
#ifndef IPNG_MODER_H
#define IPNG_MODER_H

#include <linux/dim.h>
#include <linux/ethtool.h>
#include <linux/hrtimer.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#define IPNG_COAL_USECS_MAX	10000	/* ethtool -C rx-usecs/tx-usecs */
#define IPNG_COAL_FRAMES_MAX	4096	/* ethtool -C rx-frames/tx-frames */
#define IPNG_MODER_CQS		2	/* CQs per direction and channel */

/*
 * The ethtool -C parameters a channel takes (the ethtool core refuses the
 * others before ipng_coal_check() sees them): usecs and frames of both
 * directions, and adaptive moderation of each.
 */
#define IPNG_COAL_PARAMS	(ETHTOOL_COALESCE_USECS | \
				 ETHTOOL_COALESCE_MAX_FRAMES | \
				 ETHTOOL_COALESCE_USE_ADAPTIVE)

/**
 * struct ipng_coal - moderation settings of both directions
 * @rx_usecs: hold-off after receive completions, 0: none
 * @rx_frames: receive completions that end a hold-off early, 0: none
 * @tx_usecs: hold-off after send completions only, 0: none
 * @tx_frames: send completions that end a hold-off early, 0: none
 * @adaptive_rx: lib/dim chooses @rx_usecs and @rx_frames
 * @adaptive_tx: lib/dim chooses @tx_usecs and @tx_frames
 */
struct ipng_coal {
	u32 rx_usecs;
	u32 rx_frames;
	u32 tx_usecs;
	u32 tx_frames;
	bool adaptive_rx;
	bool adaptive_tx;
};

/**
 * struct ipng_moder - moderation state of one channel
 * @napi: the channel's NAPI context, scheduled by @timer
 * @timer: ends a software hold-off
 * @rx_cqs: the channel's receive CQs (NULL entries unused)
 * @tx_cqs: the channel's send CQs (NULL entries unused)
 * @hw: the device moderates the CQs itself
 * @set: settings as configured (ethtool -C)
 * @cur: settings in effect: @set, or the last DIM profile where adaptive;
 *	written by ipng_moder_set() and the DIM works, read by NAPI
 * @rx_dim: adaptive receive moderation
 * @tx_dim: adaptive send moderation
 * @last_ns: end of the previous poll (software hold-off rate estimate)
 * @events: polls so far, the event counter DIM samples
 * @holdoffs: software hold-offs started (ethtool -S)
 *
 * NAPI owns @last_ns, @events and @holdoffs; @set changes under RTNL.
 */
struct ipng_moder {
	struct napi_struct *napi;
	struct hrtimer timer;
	struct ib_cq *rx_cqs[IPNG_MODER_CQS];
	struct ib_cq *tx_cqs[IPNG_MODER_CQS];
	bool hw;
	struct ipng_coal set;
	struct ipng_coal cur;
	struct dim rx_dim;
	struct dim tx_dim;
	u64 last_ns;
	u16 events;
	u64 holdoffs;
};

/* ethtool glue (pure; KUnit) */
int ipng_coal_check(const struct ethtool_coalesce *ec,
		    struct netlink_ext_ack *extack);
void ipng_coal_from_ethtool(struct ipng_coal *c,
			    const struct ethtool_coalesce *ec);
void ipng_coal_to_ethtool(const struct ipng_coal *c,
			  struct ethtool_coalesce *ec);

/* the software hold-off (pure; KUnit) */
u64 ipng_moder_holdoff_ns(u32 usecs, u32 frames, u32 found, u64 interval_ns);

/* one channel */
void ipng_moder_init(struct ipng_moder *m, struct napi_struct *napi,
		     struct ib_cq *const *rx_cqs, struct ib_cq *const *tx_cqs,
		     const struct ipng_coal *c);
void ipng_moder_set(struct ipng_moder *m, const struct ipng_coal *c);
u64 ipng_moder_next(struct ipng_moder *m, u32 rx_done, u32 tx_done,
		    u64 now_ns);
bool ipng_moder_hold(struct ipng_moder *m, u32 rx_done, u32 tx_done);
void ipng_moder_sample(struct ipng_moder *m, u64 rx_packets, u64 rx_bytes,
		       u64 tx_packets, u64 tx_bytes);
void ipng_moder_stop(struct ipng_moder *m);

#endif /* IPNG_MODER_H */
