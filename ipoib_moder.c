// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupt moderation of a channel (see ipoib_moder.h): checks and
 * conversions of the ethtool -C settings, the software hold-off that NAPI
 * takes between polls where the device cannot moderate its CQs, and
 * adaptive moderation with lib/dim, whose profiles go either to the device
 * or to that software hold-off.
 */
#include <linux/dim.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/netlink.h>
#include <linux/overflow.h>
#include <linux/stringify.h>
#include <linux/timekeeping.h>
#include <kunit/visibility.h>

#include "ipoib_moder.h"

/* No software hold-off is shorter than this, once one is wanted. */
#define IPNG_MODER_MIN_NS	1000ULL

/* The lib/dim profile family: the period runs from the event (EQE). */
#define IPNG_MODER_DIM_MODE	DIM_CQ_PERIOD_MODE_START_FROM_EQE

/**
 * ipng_coal_check() - validate ethtool -C settings
 * @ec: the requested settings
 * @extack: where the reason of a refusal goes
 *
 * Only the ranges are checked here: the ethtool core already refuses every
 * parameter that is not in IPNG_COAL_PARAMS. @ec is
 * not changed.
 *
 * Return: 0 when every value is within its limit, -EINVAL otherwise.
 */
int ipng_coal_check(const struct ethtool_coalesce *ec,
		    struct netlink_ext_ack *extack)
{
	if (ec->rx_coalesce_usecs > IPNG_COAL_USECS_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "rx-usecs is at most "
				   __stringify(IPNG_COAL_USECS_MAX));
		return -EINVAL;
	}
	if (ec->tx_coalesce_usecs > IPNG_COAL_USECS_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "tx-usecs is at most "
				   __stringify(IPNG_COAL_USECS_MAX));
		return -EINVAL;
	}
	if (ec->rx_max_coalesced_frames > IPNG_COAL_FRAMES_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "rx-frames is at most "
				   __stringify(IPNG_COAL_FRAMES_MAX));
		return -EINVAL;
	}
	if (ec->tx_max_coalesced_frames > IPNG_COAL_FRAMES_MAX) {
		NL_SET_ERR_MSG_MOD(extack, "tx-frames is at most "
				   __stringify(IPNG_COAL_FRAMES_MAX));
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_coal_check);

/**
 * ipng_coal_from_ethtool() - take the settings of ethtool -C
 * @c: filled in
 * @ec: settings, checked by ipng_coal_check()
 */
void ipng_coal_from_ethtool(struct ipng_coal *c,
			    const struct ethtool_coalesce *ec)
{
	c->rx_usecs = ec->rx_coalesce_usecs;
	c->rx_frames = ec->rx_max_coalesced_frames;
	c->tx_usecs = ec->tx_coalesce_usecs;
	c->tx_frames = ec->tx_max_coalesced_frames;
	c->adaptive_rx = !!ec->use_adaptive_rx_coalesce;
	c->adaptive_tx = !!ec->use_adaptive_tx_coalesce;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_coal_from_ethtool);

/**
 * ipng_coal_to_ethtool() - report settings to ethtool -c
 * @c: the settings
 * @ec: their fields are set, the others are left alone
 */
void ipng_coal_to_ethtool(const struct ipng_coal *c,
			  struct ethtool_coalesce *ec)
{
	ec->rx_coalesce_usecs = c->rx_usecs;
	ec->rx_max_coalesced_frames = c->rx_frames;
	ec->tx_coalesce_usecs = c->tx_usecs;
	ec->tx_max_coalesced_frames = c->tx_frames;
	ec->use_adaptive_rx_coalesce = c->adaptive_rx;
	ec->use_adaptive_tx_coalesce = c->adaptive_tx;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_coal_to_ethtool);

/**
 * ipng_moder_holdoff_ns() - how long NAPI leaves the CQs unarmed
 * @usecs: the hold-off setting, 0: none
 * @frames: completions that end a hold-off early, 0: none
 * @found: completions the poll that just ended found
 * @interval_ns: time since the end of the poll before it, 0: unknown
 *
 * Emulates in software a device that interrupts once @frames completions
 * are pending or @usecs have passed. Without an interrupt, the hold-off
 * has to be chosen up front, so the rate of the last poll (@found
 * completions in @interval_ns) stands for the rate to come: the hold-off
 * is @usecs, shortened to the time in which @frames completions pile up
 * at that rate, frames * interval_ns / found, when that is shorter. It is
 * never below one microsecond. With no rate (@interval_ns 0) or no frame
 * limit it is @usecs.
 *
 * All arithmetic is exact for every input (no overflow, no 128-bit
 * products). Pure; safe in any context.
 *
 * Return: the hold-off in nanoseconds; 0 for none (@usecs or @found 0),
 * meaning the CQs are armed right away.
 */
u64 ipng_moder_holdoff_ns(u32 usecs, u32 frames, u32 found, u64 interval_ns)
{
	u64 hold, per, rem, bound, fill;

	if (!usecs || !found)
		return 0;
	hold = (u64)usecs * NSEC_PER_USEC;
	if (!frames || !interval_ns)
		return hold;

	/*
	 * interval = per * found + rem, so the fill time is
	 * frames * per + frames * rem / found (the last product fits in
	 * 64 bits as both factors are 32-bit). It is at least
	 * frames * per: when that alone reaches the hold-off, or does not
	 * fit in 64 bits (the hold-off is below 2^42), the hold-off stays.
	 */
	per = div64_u64_rem(interval_ns, found, &rem);
	if (per >= hold || check_mul_overflow((u64)frames, per + 1, &bound))
		return hold;
	fill = (u64)frames * per + div64_u64((u64)frames * rem, found);
	return clamp_t(u64, fill, IPNG_MODER_MIN_NS, hold);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_moder_holdoff_ns);

/* The device applies @usecs and @frames to the CQs of one direction. */
static void ipng_moder_apply(struct ipng_moder *m, bool rx, u32 usecs,
			     u32 frames)
{
	struct ib_cq *const *cqs = rx ? m->rx_cqs : m->tx_cqs;
	int i, ret;

	for (i = 0; i < IPNG_MODER_CQS; i++) {
		if (!cqs[i])
			continue;
		ret = rdma_set_cq_moderation(cqs[i],
					     min_t(u32, frames, U16_MAX),
					     min_t(u32, usecs, U16_MAX));
		if (ret) {
			ibdev_warn_ratelimited(cqs[i]->device,
					       "%s CQ moderation %u us/%u frames not set: %d\n",
					       rx ? "receive" : "send",
					       usecs, frames, ret);
			return;
		}
	}
}

/* Settings of one direction take effect: in @m->cur, and on the device. */
static void ipng_moder_put(struct ipng_moder *m, bool rx, u32 usecs,
			   u32 frames)
{
	if (rx) {
		WRITE_ONCE(m->cur.rx_usecs, usecs);
		WRITE_ONCE(m->cur.rx_frames, frames);
	} else {
		WRITE_ONCE(m->cur.tx_usecs, usecs);
		WRITE_ONCE(m->cur.tx_frames, frames);
	}
	if (m->hw)
		ipng_moder_apply(m, rx, usecs, frames);
}

/* A DIM work: the profile DIM chose takes effect, DIM measures again. */
static void ipng_moder_dim_work(struct work_struct *work)
{
	struct dim *dim = container_of(work, struct dim, work);
	struct ipng_moder *m = dim->priv;
	struct dim_cq_moder p;

	/*
	 * A direction that is no longer adaptive keeps its values: the
	 * ipng_moder_set() that turned DIM off waits for this work before
	 * it writes them.
	 */
	if (dim == &m->rx_dim) {
		if (READ_ONCE(m->cur.adaptive_rx)) {
			p = net_dim_get_rx_moderation(dim->mode,
						      dim->profile_ix);
			ipng_moder_put(m, true, p.usec, p.pkts);
		}
	} else if (READ_ONCE(m->cur.adaptive_tx)) {
		p = net_dim_get_tx_moderation(dim->mode, dim->profile_ix);
		ipng_moder_put(m, false, p.usec, p.pkts);
	}
	WRITE_ONCE(dim->state, DIM_START_MEASURE);
}

/* DIM starts over; nothing samples @dim and its work is idle. */
static void ipng_moder_dim_reset(struct dim *dim)
{
	dim->state = DIM_START_MEASURE;
	memset(&dim->prev_stats, 0, sizeof(dim->prev_stats));
	memset(&dim->start_sample, 0, sizeof(dim->start_sample));
	memset(&dim->measuring_sample, 0, sizeof(dim->measuring_sample));
	dim->profile_ix = 0;
	dim->tune_state = DIM_PARKING_ON_TOP;
	dim->steps_right = 0;
	dim->steps_left = 0;
	dim->tired = 0;
}

static void ipng_moder_set_dir(struct ipng_moder *m, bool rx, bool adaptive,
			       u32 usecs, u32 frames)
{
	bool *on = rx ? &m->cur.adaptive_rx : &m->cur.adaptive_tx;
	struct dim *dim = rx ? &m->rx_dim : &m->tx_dim;
	struct dim_cq_moder def;

	if (*on) {
		/*
		 * Stop DIM first: once no poll can still see the flag set
		 * (polls run in RCU read-side sections), no sample reaches
		 * net_dim() and no new work is queued; the last one is
		 * waited for.
		 */
		WRITE_ONCE(*on, false);
		synchronize_net();
		cancel_work_sync(&dim->work);
	}
	if (adaptive) {
		def = rx ? net_dim_get_def_rx_moderation(IPNG_MODER_DIM_MODE) :
			   net_dim_get_def_tx_moderation(IPNG_MODER_DIM_MODE);
		usecs = def.usec;
		frames = def.pkts;
		ipng_moder_dim_reset(dim);
	}
	ipng_moder_put(m, rx, usecs, frames);
	/* Pairs with ipng_moder_sample(): it sees the reset DIM state. */
	smp_store_release(on, adaptive);
}

/**
 * ipng_moder_set() - new moderation settings of a channel
 * @m: the channel's moderation, set up by ipng_moder_init()
 * @c: the settings, checked by ipng_coal_check()
 *
 * Fixed settings take effect at once. An adaptive direction starts from
 * lib/dim's default profile with a fresh DIM state (also when it was
 * adaptive already). Where the device moderates its CQs the values are
 * written to them; a failure there is logged and otherwise ignored.
 *
 * Context: process context under RTNL; may sleep (waits for running polls
 * and DIM works when a direction was adaptive).
 */
void ipng_moder_set(struct ipng_moder *m, const struct ipng_coal *c)
{
	m->set = *c;
	ipng_moder_set_dir(m, true, c->adaptive_rx, c->rx_usecs, c->rx_frames);
	ipng_moder_set_dir(m, false, c->adaptive_tx, c->tx_usecs,
			   c->tx_frames);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_moder_set);

/* Arm @cq for its next completion; true if some arrived unreported. */
static bool ipng_moder_arm(struct ib_cq *cq)
{
	return cq && ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				      IB_CQ_REPORT_MISSED_EVENTS) > 0;
}

/*
 * End of a software hold-off: the CQs are armed again, as NAPI would have
 * done without the hold-off, and the channel polls at once if completions
 * arrived meanwhile. A hold-off in which nothing arrived costs no poll:
 * the next completion event schedules NAPI as usual.
 */
static enum hrtimer_restart ipng_moder_timer(struct hrtimer *timer)
{
	struct ipng_moder *m = container_of(timer, struct ipng_moder, timer);
	bool missed = false;
	int i;

	for (i = 0; i < IPNG_MODER_CQS; i++) {
		missed |= ipng_moder_arm(m->rx_cqs[i]);
		missed |= ipng_moder_arm(m->tx_cqs[i]);
	}
	if (missed)
		napi_schedule(m->napi);
	return HRTIMER_NORESTART;
}

/**
 * ipng_moder_init() - set up the moderation of a channel
 * @m: the moderation state, not in use (any previous content is lost)
 * @napi: the channel's NAPI context, scheduled when a hold-off ends with
 *	completions waiting
 * @rx_cqs: the receive CQs, %IPNG_MODER_CQS entries (NULL ones unused);
 *	may be NULL for none
 * @tx_cqs: the send CQs, likewise
 * @c: the initial settings
 *
 * The device moderates the CQs itself when it implements modify_cq (the
 * first CQ given decides); otherwise NAPI holds off in software.
 *
 * Context: process context under RTNL.
 */
void ipng_moder_init(struct ipng_moder *m, struct napi_struct *napi,
		     struct ib_cq *const *rx_cqs, struct ib_cq *const *tx_cqs,
		     const struct ipng_coal *c)
{
	struct ib_cq *first = NULL;
	int i;

	memset(m, 0, sizeof(*m));
	m->napi = napi;
	for (i = 0; i < IPNG_MODER_CQS; i++) {
		m->rx_cqs[i] = rx_cqs ? rx_cqs[i] : NULL;
		m->tx_cqs[i] = tx_cqs ? tx_cqs[i] : NULL;
	}
	for (i = 0; i < IPNG_MODER_CQS && !first; i++)
		first = m->rx_cqs[i];
	for (i = 0; i < IPNG_MODER_CQS && !first; i++)
		first = m->tx_cqs[i];
	m->hw = first && first->device->ops.modify_cq;

	hrtimer_init(&m->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	m->timer.function = ipng_moder_timer;

	INIT_WORK(&m->rx_dim.work, ipng_moder_dim_work);
	m->rx_dim.priv = m;
	m->rx_dim.mode = IPNG_MODER_DIM_MODE;
	INIT_WORK(&m->tx_dim.work, ipng_moder_dim_work);
	m->tx_dim.priv = m;
	m->tx_dim.mode = IPNG_MODER_DIM_MODE;

	ipng_moder_set(m, c);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_moder_init);

/**
 * ipng_moder_next() - the software hold-off that follows a poll
 * @m: the channel's moderation
 * @rx_done: receive completions the poll handled
 * @tx_done: send completions the poll handled
 * @now_ns: when the poll ended (CLOCK_MONOTONIC)
 *
 * The decision of ipng_moder_hold() without the timer, so that KUnit can
 * run it on a clock of its own: the receive settings apply if the poll
 * found receive work, else the send settings; the rate is that of this
 * poll since the end of the previous one. @now_ns is kept for the next
 * estimate whatever the outcome.
 *
 * Context: NAPI (softirq), or a test owning @m.
 * Return: the hold-off in nanoseconds, 0 when the CQs are to be armed now.
 */
u64 ipng_moder_next(struct ipng_moder *m, u32 rx_done, u32 tx_done,
		    u64 now_ns)
{
	u64 interval = now_ns - m->last_ns;

	m->last_ns = now_ns;
	if (rx_done)
		return ipng_moder_holdoff_ns(READ_ONCE(m->cur.rx_usecs),
					     READ_ONCE(m->cur.rx_frames),
					     rx_done, interval);
	if (tx_done)
		return ipng_moder_holdoff_ns(READ_ONCE(m->cur.tx_usecs),
					     READ_ONCE(m->cur.tx_frames),
					     tx_done, interval);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_moder_next);

/**
 * ipng_moder_hold() - hold off re-arming the CQs after a poll
 * @m: the channel's moderation
 * @rx_done: receive completions the poll handled
 * @tx_done: send completions the poll handled
 *
 * Called once napi_complete_done() returned true. With work found and a
 * software hold-off configured (see ipng_moder_next()), starts @m->timer,
 * which arms the CQs when it ends (and schedules NAPI if completions are
 * waiting), instead of letting the caller arm them now.
 *
 * Context: NAPI (softirq).
 * Return: true when a hold-off started (the CQs stay unarmed), false when
 * the caller arms the CQs now: the device moderates, nothing was found, or
 * the settings ask for no hold-off.
 */
bool ipng_moder_hold(struct ipng_moder *m, u32 rx_done, u32 tx_done)
{
	u64 ns;

	if (m->hw)
		return false;
	ns = ipng_moder_next(m, rx_done, tx_done, ktime_get_ns());
	if (!ns)
		return false;
	hrtimer_start(&m->timer, ns_to_ktime(ns), HRTIMER_MODE_REL_PINNED);
	WRITE_ONCE(m->holdoffs, m->holdoffs + 1);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_moder_hold);

/**
 * ipng_moder_sample() - feed adaptive moderation after a poll
 * @m: the channel's moderation
 * @rx_packets: packets received by the channel so far
 * @rx_bytes: bytes received so far
 * @tx_packets: packets sent so far
 * @tx_bytes: bytes sent so far
 *
 * Counts the poll as a DIM event and, for each adaptive direction, gives
 * lib/dim the counters; when DIM picks another profile its work applies
 * it.
 *
 * Context: NAPI (softirq), at the end of every poll.
 */
void ipng_moder_sample(struct ipng_moder *m, u64 rx_packets, u64 rx_bytes,
		       u64 tx_packets, u64 tx_bytes)
{
	struct dim_sample s = {};

	m->events++;
	/* Pairs with the release in ipng_moder_set_dir(): DIM state is reset. */
	if (smp_load_acquire(&m->cur.adaptive_rx)) {
		dim_update_sample(m->events, rx_packets, rx_bytes, &s);
		net_dim(&m->rx_dim, s);
	}
	/* Likewise for the send side. */
	if (smp_load_acquire(&m->cur.adaptive_tx)) {
		dim_update_sample(m->events, tx_packets, tx_bytes, &s);
		net_dim(&m->tx_dim, s);
	}
}
EXPORT_SYMBOL_IF_KUNIT(ipng_moder_sample);

/**
 * ipng_moder_stop() - stop the timer and the DIM works of a channel
 * @m: the channel's moderation
 *
 * Call it after napi_disable() of the channel, so that no poll starts them
 * again; afterwards nothing of @m runs. A profile DIM chose but that was
 * not applied yet is dropped, and DIM measures afresh should the channel
 * be enabled again.
 *
 * Context: process context; sleeps.
 */
void ipng_moder_stop(struct ipng_moder *m)
{
	hrtimer_cancel(&m->timer);
	cancel_work_sync(&m->rx_dim.work);
	cancel_work_sync(&m->tx_dim.work);
	m->rx_dim.state = DIM_START_MEASURE;
	m->tx_dim.state = DIM_START_MEASURE;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_moder_stop);
