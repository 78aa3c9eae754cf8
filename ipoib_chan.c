// SPDX-License-Identifier: GPL-2.0
/*
 * Channels: the interface's send queues (ethtool -L combined), each a UD
 * QP with its own CQs on its own completion vector, a transmit queue of
 * the netdev and a NAPI context. Channel 0's QP is the one in the link
 * address; it receives every datagram, and channel 0's NAPI also polls
 * the connected-mode CQs. Receive work is spread in software: channel 0
 * hands each packet to the channel its flow hash (datagrams) or its
 * connection (connected mode) picks, through a backlog and an IPI to that
 * channel's CPU, as RPS does.
 *
 * Also here: the restart that live changes (ipoib_chan_change.c) go
 * through, and the one recovery path of the UD datapath: a QP or CQ async
 * event, an error or flush completion outside our own resets, a failed
 * repost (ipng_chans_error()), the netdev watchdog and the stuck send queue
 * detector all end in the channel watchdog (ipng_stall_work()), which
 * resets the channels under RTNL. A reset that fails leaves the channels
 * halted with carrier off and is tried again every second.
 */
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/rtnetlink.h>
#include <linux/smp.h>
#include <kunit/visibility.h>

#include "ipoib.h"

/*
 * A send ring without progress for this long is reset. Not less: a busy
 * soft-RoCE device under a flood (debug kernel) was seen to complete
 * nothing for 2-4.5 s and then go on, and each reset drops what arrives
 * while the QPs are down; the netdev watchdog's default is 5 s too.
 */
#define IPNG_STALL_TIMEOUT	(5 * HZ)
#define IPNG_STALL_PERIOD	HZ		/* detector period */
#define IPNG_DRAIN_TIMEOUT	(2 * HZ)	/* sends flushed before RESET */

unsigned int ipng_num_channels;
module_param_named(num_channels, ipng_num_channels, uint, 0444);
MODULE_PARM_DESC(num_channels, "channels per interface at creation, 0: as many as completion vectors and CPUs allow (default 0, at most 16)");

/* Any context: a QP that left RTS, or whose CQ broke, needs a reset. */
static void ipng_chan_qp_event(struct ib_event *event, void *context)
{
	struct ipng_chan *c = context;

	netdev_err(c->ipd->ndev, "channel %u: UD QP %u: async event %s (%d)\n",
		   c->index, event->element.qp->qp_num,
		   ib_event_msg(event->event), event->event);
	switch (event->event) {
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
		ipng_chans_error(c->ipd, c, "QP error event");
		break;
	default:
		break;
	}
}

static void ipng_chan_cq_async(struct ib_event *event, void *context)
{
	struct ipng_chan *c = context;

	netdev_err(c->ipd->ndev, "channel %u: CQ async event %s (%d)\n",
		   c->index, ib_event_msg(event->event), event->event);
	if (event->event == IB_EVENT_CQ_ERR)
		ipng_chans_error(c->ipd, c, "CQ error event");
}

static void ipng_chan_cq_event(struct ib_cq *cq, void *context)
{
	struct ipng_chan *c = context;

	atomic64_inc(&c->events);
	napi_schedule(&c->napi);
}

/**
 * ipng_dev_cq_event() - completion handler of the connected-mode CQs
 * @cq: the CQ with new completions
 * @context: the interface; channel 0 polls these CQs
 */
void ipng_dev_cq_event(struct ib_cq *cq, void *context)
{
	ipng_chan_cq_event(cq, ipng_chan0(context));
}

/* ---- receive steering ---- */

static void ipng_chan_deliver(struct ipng_chan *c, struct sk_buff *skb)
{
	ipng_chan_stat_add(c, &c->stats.rx_packets, 1);
	ipng_chan_stat_add(c, &c->stats.rx_bytes, skb->len);
	napi_gro_receive(&c->napi, skb);
}

/**
 * ipng_chan_rx() - pass a received packet up through the right channel
 * @c: the channel whose NAPI context received it
 * @skb: packet, network header reset and protocol set; consumed
 * @target: channel chosen by the caller (a connection's), or -1 to pick
 *	one by the packet's flow hash
 *
 * NAPI context. Packets for another channel wait in its backlog until the
 * end of this poll kicks it.
 */
void ipng_chan_rx(struct ipng_chan *c, struct sk_buff *skb, int target)
{
	struct ipng_dev *ipd = c->ipd;
	unsigned int n = READ_ONCE(ipd->nchans);
	struct ipng_chan *t;

	if (n == 1)
		target = c->index;
	else if (target < 0)
		target = reciprocal_scale(skb_get_hash(skb), n);
	else
		target %= n;
	skb_record_rx_queue(skb, target);
	if (target == c->index) {
		ipng_chan_deliver(c, skb);
		return;
	}
	t = ipng_chan(ipd, target);
	if (skb_queue_len(&t->backlog) >= ipng_max_backlog()) {
		ipng_drop(ipd, IPNG_STAT_RX_DROP_BACKLOG, 1);
		kfree_skb(skb);
		return;
	}
	skb_queue_tail(&t->backlog, skb);
	__set_bit(target, &c->steered);
}

/* IPI on the channel's CPU: run its NAPI there. */
static void ipng_chan_csd(void *data)
{
	struct ipng_chan *c = data;

	napi_schedule(&c->napi);
	/*
	 * Last touch of @c: ipng_chan_quiesce() waits for the bit before the
	 * channel may be freed. A packet queued while the bit was still set
	 * was queued before this poll can run (it runs once this IPI
	 * returns, or again if it was running: NAPI notes the miss).
	 */
	clear_bit_unlock(0, &c->kick_pending);
}

static void ipng_chan_kick(struct ipng_chan *c)
{
	int cpu = READ_ONCE(c->cpu);

	if (cpu == smp_processor_id() || !cpu_online(cpu)) {
		napi_schedule(&c->napi);
		return;
	}
	if (test_and_set_bit(0, &c->kick_pending))
		return;
	if (smp_call_function_single_async(cpu, &c->csd)) {
		clear_bit(0, &c->kick_pending);
		napi_schedule(&c->napi);
	}
}

static void ipng_chan_kick_steered(struct ipng_chan *c)
{
	unsigned int i;

	for_each_set_bit(i, &c->steered, IPNG_MAX_CHANNELS)
		ipng_chan_kick(ipng_chan(c->ipd, i));
	c->steered = 0;
}

static int ipng_chan_backlog(struct ipng_chan *c, int budget)
{
	struct sk_buff *skb;
	int done = 0;

	while (done < budget && (skb = skb_dequeue(&c->backlog))) {
		ipng_chan_deliver(c, skb);
		done++;
	}
	return done;
}

/* ---- NAPI ---- */

/**
 * ipng_poll_cq() - poll a CQ into a channel's completion batch
 * @c: channel whose NAPI context runs
 * @cq: the CQ
 * @budget: completions to take at most
 * @done: the handler of every completion of @cq, or NULL to call each
 *	completion's own wr_cqe->done
 *
 * A channel's own CQs hold only its UD ring's completions, and those go
 * to their ring's handler (@done), which finds the slot from wr_cqe by
 * address alone and ignores (and counts) any it does not name: rxe 6.1
 * can deliver, after a QP reset, a completion of a work request from
 * before it, read from the send queue it is zeroing (wr_cqe NULL: a
 * KASAN null-ptr-deref here under make soak) or naming a ring that a
 * ring change has freed since. The connected-mode CQs hold several kinds
 * of work requests and are dispatched through wr_cqe.
 *
 * Return: completions handled.
 */
int ipng_poll_cq(struct ipng_chan *c, struct ib_cq *cq, int budget,
		 void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct ib_wc *wcs = c->wcs;
	int n_done = 0, n, i;

	while (n_done < budget) {
		n = ib_poll_cq(cq, min_t(int, IPNG_WC_BATCH, budget - n_done),
			       wcs);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (done)
				done(cq, &wcs[i]);
			else
				wcs[i].wr_cqe->done(cq, &wcs[i]);
		}
		n_done += n;
	}
	return n_done;
}

/* Re-arm @cq (if any); true if completions arrived meanwhile. */
static bool ipng_rearm(struct ib_cq *cq)
{
	return cq && ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				      IB_CQ_REPORT_MISSED_EVENTS) > 0;
}

/* Re-arm every CQ the channel polls; true if one has work already. */
static bool ipng_chan_rearm(struct ipng_chan *c)
{
	struct ipng_dev *ipd = c->ipd;
	bool sends = !test_bit(IPNG_F_TX_STALL, &ipd->flags);
	bool missed;

	missed = ipng_rearm(c->recv_cq);
	if (sends)
		missed |= ipng_rearm(c->send_cq);
	if (!c->index) {
		missed |= ipng_rearm(ipd->cm_recv_cq);
		if (sends)
			missed |= ipng_rearm(ipd->cm_send_cq);
	}
	return missed;
}

static void ipng_chan_dim_sample(struct ipng_chan *c)
{
	struct ipng_chan_stats *s = &c->stats;

	ipng_moder_sample(&c->moder, u64_stats_read(&s->rx_packets),
			  u64_stats_read(&s->rx_bytes),
			  u64_stats_read(&s->tx_packets),
			  u64_stats_read(&s->tx_bytes));
}

/**
 * ipng_rx_poll_shared() - share one poll's budget between two receive queues
 * @budget: NAPI budget
 * @poll: takes up to its budget from one queue; returns how many it took
 * @ctx: passed to @poll
 * @ud: the datagram queue
 * @cm: the connected-mode queue, or NULL when the channel polls none
 *
 * @ud gets the first half of @budget, @cm what is left, @ud again the
 * rest. Polled one after the other with the whole budget each, a flood of
 * datagrams (forged ARP requests, one after another) kept the UD CQ at or
 * above the budget and no connection's receive was polled until it ended:
 * pings over a live connection came back in bursts, 20 s late.
 *
 * Return: receives taken, at most @budget.
 */
int ipng_rx_poll_shared(int budget, ipng_rx_poll_fn poll, void *ctx,
			void *ud, void *cm)
{
	int rx;

	if (!cm)
		return poll(ctx, ud, budget);
	rx = poll(ctx, ud, max(budget / 2, 1));
	if (rx < budget)
		rx += poll(ctx, cm, budget - rx);
	if (rx < budget)
		rx += poll(ctx, ud, budget - rx);
	return rx;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_rx_poll_shared);

static int ipng_chan_poll_one(void *ctx, void *cq, int budget)
{
	struct ipng_chan *c = ctx;

	if (!cq)
		return 0;
	return ipng_poll_cq(c, cq, budget,
			    cq == c->recv_cq ? ipng_ud_recv_done : NULL);
}

/* Receives of one poll: the CQs (channel 0 has connected mode's too), then
 * the packets other channels steered here.
 */
static int ipng_chan_poll_rx(struct ipng_chan *c, int budget)
{
	struct ib_cq *cm = c->index ? NULL : c->ipd->cm_recv_cq;
	int rx;

	rx = ipng_rx_poll_shared(budget, ipng_chan_poll_one, c, c->recv_cq, cm);
	if (rx < budget)
		rx += ipng_chan_backlog(c, budget - rx);
	return rx;
}

static int ipng_chan_poll(struct napi_struct *napi, int budget)
{
	struct ipng_chan *c = container_of(napi, struct ipng_chan, napi);
	struct ipng_dev *ipd = c->ipd;
	int rx = 0, tx = 0;

	/* Send completions are cheap and free ring slots: take them all. */
	if (likely(!test_bit(IPNG_F_TX_STALL, &ipd->flags))) {
		tx = ipng_poll_cq(c, c->send_cq, INT_MAX, ipng_ud_send_done);
		if (!c->index && ipd->cm_send_cq)
			tx += ipng_poll_cq(c, ipd->cm_send_cq, INT_MAX, NULL);
	}
	rx = ipng_chan_poll_rx(c, budget);
	if (c->steered)
		ipng_chan_kick_steered(c);
	/* Receive slots a repost or the first fill left empty; not into a
	 * QP in error, which would flush them straight back.
	 */
	if (unlikely(c->rx.posted < c->rx.size) &&
	    test_bit(IPNG_F_OPEN, &ipd->flags) &&
	    !test_bit(IPNG_F_QUIESCED, &ipd->flags) &&
	    !test_bit(IPNG_F_RECOVER, &ipd->flags))
		ipng_ud_refill(c, IPNG_WC_BATCH, GFP_ATOMIC);
	ipng_chan_stat_add(c, &c->stats.polls, 1);
	/* Feeds DIM where a direction is adaptive; a no-op otherwise. */
	ipng_chan_dim_sample(c);
	if (rx >= budget)
		return budget;

	/* Hold-off: the CQs stay unarmed and the moderation timer polls. */
	if (napi_complete_done(napi, rx) &&
	    !ipng_moder_hold(&c->moder, rx, tx) && ipng_chan_rearm(c))
		napi_schedule(napi);
	return rx;
}

/* ---- one channel ---- */

static int ipng_chan_create_cqs(struct ipng_chan *c)
{
	struct ipng_dev *ipd = c->ipd;
	struct ib_cq_init_attr attr = {
		.cqe		= ipd->tx_ring_max,
		.comp_vector	= c->index % ipd->ca->num_comp_vectors,
	};

	c->send_cq = ib_create_cq(ipd->ca, ipng_chan_cq_event,
				  ipng_chan_cq_async, c, &attr);
	if (IS_ERR(c->send_cq))
		return PTR_ERR(c->send_cq);
	if (c->index)
		return 0;
	attr.cqe = ipd->rx_ring_max;
	c->recv_cq = ib_create_cq(ipd->ca, ipng_chan_cq_event,
				  ipng_chan_cq_async, c, &attr);
	if (IS_ERR(c->recv_cq)) {
		ib_destroy_cq(c->send_cq);
		return PTR_ERR(c->recv_cq);
	}
	return 0;
}

static void ipng_chan_destroy_cqs(struct ipng_chan *c)
{
	if (c->recv_cq)
		ib_destroy_cq(c->recv_cq);
	ib_destroy_cq(c->send_cq);
}

/* Channel 0's QP receives; the others only send (no receive queue). */
static int ipng_chan_create_qp(struct ipng_chan *c)
{
	struct ipng_dev *ipd = c->ipd;
	struct ib_qp_init_attr init = {
		.event_handler	= ipng_chan_qp_event,
		.qp_context	= c,
		.send_cq	= c->send_cq,
		.recv_cq	= c->recv_cq ?: c->send_cq,
		.cap = {
			.max_send_wr	= ipd->tx_ring_max,
			.max_recv_wr	= c->index ? 0 : ipd->rx_ring_max,
			.max_send_sge	= 1,
			.max_recv_sge	= 1,
		},
		.sq_sig_type	= IB_SIGNAL_ALL_WR,
		.qp_type	= IB_QPT_UD,
		.port_num	= ipd->port,
	};
	struct ib_qp *qp;

	qp = ib_create_qp(ipd->pd, &init);
	if (IS_ERR(qp))
		return PTR_ERR(qp);
	c->qp = qp;
	return 0;
}

/**
 * ipng_chan_create() - make one channel: CQs, UD QP (RESET), rings, NAPI
 * @ipd: interface
 * @index: channel number
 * @tx_size: send ring entries
 * @rx_size: receive ring entries (channel 0 only receives)
 *
 * Return: the channel, or an ERR_PTR(); nothing is left on error.
 */
struct ipng_chan *ipng_chan_create(struct ipng_dev *ipd, unsigned int index,
				   u32 tx_size, u32 rx_size)
{
	struct ipng_chan *c;
	int err;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->ipd = ipd;
	c->index = index;
	c->cpu = cpumask_local_spread(index, NUMA_NO_NODE);
	skb_queue_head_init(&c->backlog);
	INIT_CSD(&c->csd, ipng_chan_csd, c);
	u64_stats_init(&c->stats.syncp);

	err = ipng_chan_create_cqs(c);
	if (err)
		goto err_free;
	err = ipng_chan_create_qp(c);
	if (err)
		goto err_cqs;
	err = ipng_ud_rings_alloc(c, tx_size, index ? 0 : rx_size);
	if (err)
		goto err_qp;
	netif_napi_add(ipd->ndev, &c->napi, ipng_chan_poll);
	return c;

err_qp:
	ib_destroy_qp(c->qp);
err_cqs:
	ipng_chan_destroy_cqs(c);
err_free:
	kfree(c);
	netdev_err(ipd->ndev, "cannot create channel %u: %d\n", index, err);
	return ERR_PTR(err);
}

/**
 * ipng_chan_destroy() - destroy a channel whose datapath is stopped
 * @c: channel; freed after RCU readers are done with it
 */
void ipng_chan_destroy(struct ipng_chan *c)
{
	netif_napi_del(&c->napi);
	ib_destroy_qp(c->qp);
	ipng_chan_destroy_cqs(c);
	ipng_ud_rings_free(c);
	skb_queue_purge(&c->backlog);
	kfree_rcu(c, rcu);
}

/**
 * ipng_chan_read() - a consistent snapshot of one channel's counters
 * @c: channel
 * @r: result
 */
void ipng_chan_read(struct ipng_chan *c, struct ipng_chan_counters *r)
{
	const struct ipng_chan_stats *s = &c->stats;
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&s->syncp);
		r->rx_packets = u64_stats_read(&s->rx_packets);
		r->rx_bytes = u64_stats_read(&s->rx_bytes);
		r->tx_packets = u64_stats_read(&s->tx_packets);
		r->tx_bytes = u64_stats_read(&s->tx_bytes);
		r->polls = u64_stats_read(&s->polls);
	} while (u64_stats_fetch_retry(&s->syncp, start));
	r->events = atomic64_read(&c->events);
	r->holdoffs = READ_ONCE(c->moder.holdoffs);
}

/**
 * ipng_counters_add() - add one channel's counters to a sum
 * @sum: the sum (the totals, or the retired channels' share)
 * @r: the channel's counters
 */
void ipng_counters_add(struct ipng_chan_counters *sum,
		       const struct ipng_chan_counters *r)
{
	sum->rx_packets += r->rx_packets;
	sum->rx_bytes += r->rx_bytes;
	sum->tx_packets += r->tx_packets;
	sum->tx_bytes += r->tx_bytes;
	sum->polls += r->polls;
	sum->events += r->events;
	sum->holdoffs += r->holdoffs;
}

/**
 * ipng_chans_read() - counters of every channel and their totals
 * @ipd: interface
 * @per: per channel in use (NULL: totals only); unused entries zeroed
 * @total: sums, including the channels ethtool -L removed
 *
 * Any context that may sleep or not; takes no lock.
 */
void ipng_chans_read(struct ipng_dev *ipd,
		     struct ipng_chan_counters per[IPNG_MAX_CHANNELS],
		     struct ipng_chan_counters *total)
{
	struct ipng_chan_counters r;
	struct ipng_chan *c;
	unsigned int seq, i;

	rcu_read_lock();
	do {
		seq = read_seqcount_begin(&ipd->chan_seq);
		*total = ipd->retired;
		if (per)
			memset(per, 0, sizeof(*per) * IPNG_MAX_CHANNELS);
		for (i = 0; i < IPNG_MAX_CHANNELS; i++) {
			c = rcu_dereference(ipd->chans[i]);
			if (!c)
				continue;
			ipng_chan_read(c, &r);
			if (per)
				per[i] = r;
			ipng_counters_add(total, &r);
		}
	} while (read_seqcount_retry(&ipd->chan_seq, seq));
	rcu_read_unlock();
}

/**
 * ipng_chans_tx_depth() - sends in flight on all UD send queues
 * @ipd: interface
 *
 * Return: the sum; any context.
 */
u32 ipng_chans_tx_depth(struct ipng_dev *ipd)
{
	struct ipng_chan *c;
	unsigned int i;
	u32 depth = 0;

	rcu_read_lock();
	for (i = 0; i < IPNG_MAX_CHANNELS; i++) {
		c = rcu_dereference(ipd->chans[i]);
		if (c)
			depth += ipng_tx_depth(c);
	}
	rcu_read_unlock();
	return depth;
}

/**
 * ipng_own_qpn() - whether a QPN is one of the interface's UD QPs
 * @ipd: interface
 * @qpn: source QPN of a received datagram
 *
 * NAPI context.
 *
 * Return: true for the QP of any channel.
 */
bool ipng_own_qpn(struct ipng_dev *ipd, u32 qpn)
{
	unsigned int i, n = READ_ONCE(ipd->nchans);

	for (i = 0; i < n; i++)
		if (ipng_chan(ipd, i)->qp->qp_num == qpn)
			return true;
	return false;
}

/* ---- starting and stopping the datapath ---- */

static void ipng_chan_start(struct ipng_chan *c)
{
	struct ipng_dev *ipd = c->ipd;
	struct ib_cq *rx_cqs[IPNG_MODER_CQS] = { c->recv_cq };
	struct ib_cq *tx_cqs[IPNG_MODER_CQS] = { c->send_cq };
	u64 holdoffs;

	if (!c->index) {
		rx_cqs[1] = ipd->cm_recv_cq;
		tx_cqs[1] = ipd->cm_send_cq;
	}
	/* ipng_moder_init() starts from zero; the counter goes on. */
	holdoffs = c->moder.holdoffs;
	ipng_moder_init(&c->moder, &c->napi, rx_cqs, tx_cqs, &ipd->coal);
	c->moder.holdoffs = holdoffs;
	/*
	 * The stall detector counts from here: filling a large receive ring
	 * takes seconds (9 s for 8192 buffers on the debug kernel), and a
	 * send posted right after it would otherwise look stuck that long.
	 */
	c->tx.seen_tail = c->tx.tail;
	c->tx.seen_at = jiffies;
	napi_enable(&c->napi);
	/* The first poll takes what is there and arms the CQs. */
	napi_schedule(&c->napi);
}

/* No NAPI, no moderation timer, no pending kick: once per start. */
static void ipng_chan_quiesce(struct ipng_chan *c)
{
	napi_disable(&c->napi);
	ipng_moder_stop(&c->moder);
	while (test_bit(0, &c->kick_pending))
		cpu_relax();
}

/*
 * Empty a quiesced channel whose QP is in RESET: CQs and backlog emptied,
 * buffers freed; safe to repeat. @cm: also empty the connected-mode CQs
 * (channel 0, after connected mode stopped).
 */
static void ipng_chan_empty(struct ipng_chan *c, bool cm)
{
	struct ipng_dev *ipd = c->ipd;

	while (ib_poll_cq(c->send_cq, IPNG_WC_BATCH, c->wcs) > 0)
		;
	if (c->recv_cq)
		while (ib_poll_cq(c->recv_cq, IPNG_WC_BATCH, c->wcs) > 0)
			;
	if (cm && !c->index) {
		/* ipng_cm_stop() drained the connections. */
		if (ipd->cm_recv_cq)
			while (ib_poll_cq(ipd->cm_recv_cq, IPNG_WC_BATCH,
					  c->wcs) > 0)
				;
		if (ipd->cm_send_cq)
			while (ib_poll_cq(ipd->cm_send_cq, IPNG_WC_BATCH,
					  c->wcs) > 0)
				;
	}
	ipng_ud_drain(c);
	skb_queue_purge(&c->backlog);
}

/*
 * True once no channel has a send in flight. Channels that still have
 * some get a poll: their CQ may be unarmed (a hold-off) or the completions
 * may have been left alone (tx_stall).
 */
static bool ipng_chans_sends_done(struct ipng_dev *ipd)
{
	bool done = true;
	unsigned int i;

	for (i = 0; i < ipd->nchans; i++) {
		struct ipng_chan *c = ipng_chan(ipd, i);

		if (!ipng_tx_depth(c))
			continue;
		done = false;
		local_bh_disable();
		napi_schedule(&c->napi);
		local_bh_enable();
	}
	return done;
}

/*
 * Every channel's QP to RESET, through ERROR. A QP in ERROR takes no more
 * datagrams and completes what was posted (flushed). @running: NAPI still
 * runs, and takes those send completions: RESET waits until every send
 * in flight has completed (or IPNG_DRAIN_TIMEOUT passed). A completion
 * that still comes after the reset (rxe 6.1 completes a UD QP's sends on
 * two CPUs at once as it goes to ERROR, and once delivered one more than
 * was posted: KASAN, use-after-free in rxe_mr_copy() from rxe_requester()
 * of a packet ipng_ud_send_done() had freed for it, after a stall reset under
 * a flood) names the earlier start's entry of its slot and is ignored
 * (ipng_tx_retire()). After a grace period no receive that took a
 * datagram before ERROR is still running. Only then RESET, which on rxe
 * drains the QP's packet queue in this context: straight from RTS it
 * raced with a receive on another CPU working on the same queue (KASAN:
 * use-after-free in rxe_responder under ethtool -G with traffic).
 */
static void ipng_chans_reset(struct ipng_dev *ipd, bool running)
{
	unsigned long until = jiffies + IPNG_DRAIN_TIMEOUT;
	unsigned int i;

	ASSERT_RTNL();
	for (i = 0; i < ipd->nchans; i++)
		ipng_ib_qp_error(ipd, ipng_chan(ipd, i)->qp);
	while (running && !ipng_chans_sends_done(ipd)) {
		if (time_after(jiffies, until)) {
			netdev_warn(ipd->ndev, "sends still in flight %u ms after the QPs went to ERROR; resetting them anyway\n",
				    jiffies_to_msecs(IPNG_DRAIN_TIMEOUT));
			break;
		}
		usleep_range(2000, 5000);
	}
	synchronize_net();
	for (i = 0; i < ipd->nchans; i++)
		ipng_ib_qp_reset(ipd, ipng_chan(ipd, i)->qp);
}

/*
 * Bring every channel's QP to RTS and start the channels: -ENOENT, with
 * nothing touched, when the P_Key is not in the port's table.
 */
static int ipng_chans_start(struct ipng_dev *ipd)
{
	unsigned int i;
	u16 index;
	int err;

	ASSERT_RTNL();
	if (WARN_ON_ONCE(test_bit(IPNG_F_RUNNING, &ipd->flags)))
		return -EBUSY;
	/* The P_Key's index now: the SM may have moved or removed it. */
	err = ipng_ib_find_pkey(ipd, &index);
	if (err) {
		set_bit(IPNG_F_NO_PKEY, &ipd->flags);
		return err;
	}
	clear_bit(IPNG_F_NO_PKEY, &ipd->flags);
	WRITE_ONCE(ipd->pkey_index, index);

	for (i = 0; i < ipd->nchans; i++) {
		err = ipng_ib_qp_to_rts(ipd, ipng_chan(ipd, i)->qp);
		if (err)
			goto err_reset;
	}
	for (i = 0; i < ipd->nchans; i++) {
		err = ipng_ud_fill(ipng_chan(ipd, i));
		if (err)
			goto err_reset;
	}
	/* Fault knob fail_start: the last step fails, all of it unwinds. */
	if (IS_ENABLED(CONFIG_INFINIBAND_IPOIB_NG_FAULT_KNOBS) &&
	    atomic_add_unless(&ipd->fail_starts, -1, 0)) {
		err = -EIO;
		goto err_reset;
	}
	for (i = 0; i < ipd->nchans; i++)
		ipng_chan_start(ipng_chan(ipd, i));
	set_bit(IPNG_F_RUNNING, &ipd->flags);
	return 0;

err_reset:
	/* No NAPI ran: flushed receives are still in the CQ, and must not
	 * be taken for completions of the next start's buffers.
	 */
	ipng_chans_reset(ipd, false);
	for (i = 0; i < ipd->nchans; i++)
		ipng_chan_empty(ipng_chan(ipd, i), false);
	return err;
}

/*
 * Stop every channel: QPs to RESET, NAPI off, buffers freed. Channels that
 * a failed start left halted are not quiesced again (a second
 * napi_disable() would wait forever with RTNL held), only emptied.
 */
static void ipng_chans_halt(struct ipng_dev *ipd, bool cm)
{
	bool running;
	unsigned int i;

	ASSERT_RTNL();
	running = test_and_clear_bit(IPNG_F_RUNNING, &ipd->flags);
	if (running)
		ipng_chans_reset(ipd, true);
	for (i = 0; i < ipd->nchans; i++) {
		if (running)
			ipng_chan_quiesce(ipng_chan(ipd, i));
		ipng_chan_empty(ipng_chan(ipd, i), cm);
	}
}

/**
 * ipng_chans_open() - start the datapath of every channel
 * @ipd: interface; RTNL held (ndo_open)
 *
 * Return: 0, -ENOENT when the P_Key is not in the port's table (the
 * channels stay halted, the channel watchdog runs), or the error of the
 * QP transitions or the receive buffer allocation; every QP is back in
 * RESET on failure.
 */
int ipng_chans_open(struct ipng_dev *ipd)
{
	int err;

	ASSERT_RTNL();
	err = ipng_chans_start(ipd);
	/* Without its P_Key the interface opens halted (ipng_ib_open()). */
	if (err && err != -ENOENT)
		return err;
	queue_delayed_work(ipng_wq, &ipd->stall_work, IPNG_STALL_PERIOD);
	return err;
}

/**
 * ipng_chans_stop() - stop the datapath of every channel
 * @ipd: interface; RTNL held (ndo_stop), connected mode already stopped
 */
void ipng_chans_stop(struct ipng_dev *ipd)
{
	ASSERT_RTNL();
	cancel_delayed_work_sync(&ipd->stall_work);
	ipng_chans_halt(ipd, true);
	clear_bit(IPNG_F_TX_STALL, &ipd->flags);
	clear_bit(IPNG_F_RECOVER, &ipd->flags);
	clear_bit(IPNG_F_WATCHDOG, &ipd->flags);
	clear_bit(IPNG_F_NO_PKEY, &ipd->flags);
}

/**
 * ipng_chans_restart() - restart the UD datapath around a change
 * @ipd: interface; RTNL held
 * @change: called with the datapath stopped (or right away if the
 *	interface is down)
 * @arg: passed to @change
 *
 * Stop and restart the UD datapath of an open interface around @change,
 * with every transmit queue stopped. Connected mode keeps running: its
 * CQs are polled again once channel 0 restarts. If the restart fails the
 * channels stay halted, carrier goes off, the queues stay stopped and the
 * channel watchdog tries again; @change has been applied either way.
 *
 * The device is detached meanwhile: a restart that posts thousands of
 * buffers can take longer than the netdev watchdog's timeout under a
 * debug kernel, and a stopped queue it saw would be taken for a stall
 * (and reset again right after).
 *
 * Return: 0, or the error of the restart.
 */
int ipng_chans_restart(struct ipng_dev *ipd,
		       void (*change)(struct ipng_dev *ipd, void *arg),
		       void *arg)
{
	bool open = test_bit(IPNG_F_OPEN, &ipd->flags);
	bool was_running = test_bit(IPNG_F_RUNNING, &ipd->flags);
	int err = 0;

	ASSERT_RTNL();
	if (open) {
		set_bit(IPNG_F_QUIESCED, &ipd->flags);
		netif_device_detach(ipd->ndev);
		netif_tx_disable(ipd->ndev);
		ipng_chans_halt(ipd, false);
	}
	change(ipd, arg);
	if (!open)
		return 0;
	err = ipng_chans_start(ipd);
	clear_bit(IPNG_F_QUIESCED, &ipd->flags);
	/* A timeout seen before the reset is answered by it. */
	clear_bit(IPNG_F_WATCHDOG, &ipd->flags);
	if (err) {
		if (err == -ENOENT)
			netdev_info(ipd->ndev, "P_Key 0x%04x left the table of port %u: carrier off until it is back\n",
				    ipd->pkey, ipd->port);
		else if (net_ratelimit())
			netdev_err(ipd->ndev, "cannot restart the channels: %d; trying again\n",
				   err);
		/* Carrier off first: the watchdog leaves such a device be. */
		netif_carrier_off(ipd->ndev);
		netif_device_attach(ipd->ndev);
		netif_tx_disable(ipd->ndev);
		return err;
	}
	netif_device_attach(ipd->ndev);
	/* Carrier goes back on as the port says. */
	if (!was_running)
		ipng_dev_refresh(ipd);
	return 0;
}

static void ipng_chans_nop(struct ipng_dev *ipd, void *arg)
{
	clear_bit(IPNG_F_TX_STALL, &ipd->flags);
}

/**
 * ipng_pkey_must_restart() - does a P_Key table change restart the channels
 * @running: the channels are started
 * @waiting: they are halted because the P_Key was missing
 * @found: the P_Key is in the table now
 * @moved: it is at another index than the channels' QPs use
 *
 * Running channels restart when their P_Key left (the restart finds it
 * missing and leaves them halted, carrier off) or moved; channels waiting
 * for their P_Key start when it is back. Channels halted for any other
 * reason are the channel watchdog's.
 *
 * Return: true to restart.
 */
bool ipng_pkey_must_restart(bool running, bool waiting, bool found,
			    bool moved)
{
	if (running)
		return !found || moved;
	return waiting && found;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_pkey_must_restart);

/**
 * ipng_chans_follow_pkey() - the port's P_Key table may have changed
 * @ipd: interface; RTNL held (the port work)
 *
 * Restarts the channels of an open interface as ipng_pkey_must_restart()
 * says; carrier follows in ipng_apply_port().
 */
void ipng_chans_follow_pkey(struct ipng_dev *ipd)
{
	bool found;
	u16 index;

	ASSERT_RTNL();
	if (!test_bit(IPNG_F_OPEN, &ipd->flags))
		return;
	found = !ipng_ib_find_pkey(ipd, &index);
	if (!ipng_pkey_must_restart(test_bit(IPNG_F_RUNNING, &ipd->flags),
				    test_bit(IPNG_F_NO_PKEY, &ipd->flags),
				    found, found && index != ipd->pkey_index))
		return;
	if (found)
		netdev_info(ipd->ndev, "P_Key 0x%04x at index %u of port %u: channels restart\n",
			    ipd->pkey, index, ipd->port);
	ipng_chans_restart(ipd, ipng_chans_nop, NULL);
}

/* ---- stuck send queues ---- */

/**
 * ipng_chans_recover() - reset every channel of an open interface
 * @ipd: interface; RTNL held
 *
 * Counted in recoveries. What was in flight on the UD rings is lost.
 *
 * Return: 0, or the error of the restart (then tried again later).
 */
int ipng_chans_recover(struct ipng_dev *ipd)
{
	ASSERT_RTNL();
	if (!test_bit(IPNG_F_OPEN, &ipd->flags))
		return 0;
	ipng_stat_add_bh(ipd->stats, IPNG_STAT_RECOVERIES, 1);
	/* The completions tx_stall left alone are taken before the reset. */
	clear_bit(IPNG_F_TX_STALL, &ipd->flags);
	return ipng_chans_restart(ipd, ipng_chans_nop, NULL);
}

/**
 * ipng_chans_error() - a UD QP or CQ of the interface failed
 * @ipd: interface
 * @c: the channel it was seen on
 * @why: what was seen, for the log
 *
 * Any context. Errors seen while the interface stops or resets its own
 * channels are expected (flushes) and ignored; any other asks the channel
 * watchdog for one reset, however many errors arrive before it runs.
 */
void ipng_chans_error(struct ipng_dev *ipd, struct ipng_chan *c,
		      const char *why)
{
	if (!test_bit(IPNG_F_OPEN, &ipd->flags) ||
	    test_bit(IPNG_F_QUIESCED, &ipd->flags) ||
	    test_and_set_bit(IPNG_F_RECOVER, &ipd->flags))
		return;
	netdev_warn(ipd->ndev, "channel %u: %s, resetting the channels\n",
		    c->index, why);
	mod_delayed_work(ipng_wq, &ipd->stall_work, 0);
}

/**
 * ipng_chans_mtu_changed() - the datagram MTU moved: resize receive buffers
 * @ipd: interface; RTNL held
 *
 * Buffers posted for a smaller MTU would drop full-size datagrams, so an
 * open interface whose buffers are too small resets its channels, which
 * posts buffers of the new size. Larger buffers than needed are kept.
 *
 * Return: 0 or the error of the restart.
 */
int ipng_chans_mtu_changed(struct ipng_dev *ipd)
{
	struct ipng_chan *c0;

	ASSERT_RTNL();
	if (!test_bit(IPNG_F_OPEN, &ipd->flags) || !ipd->nchans)
		return 0;
	c0 = ipng_chan0(ipd);
	if (c0->rx.buf_len >= ipng_rx_buf_len(ipd))
		return 0;
	netdev_info(ipd->ndev, "receive buffers grow from %u to %u bytes\n",
		    c0->rx.buf_len, ipng_rx_buf_len(ipd));
	return ipng_chans_restart(ipd, ipng_chans_nop, NULL);
}

/* True if a channel's send ring has work that did not move for a while. */
static bool ipng_chan_stuck(struct ipng_chan *c)
{
	struct ipng_tx_ring *tx = &c->tx;
	/* Pairs with the release of the tail in the completion handler. */
	u32 tail = smp_load_acquire(&tx->tail);

	if (tail == READ_ONCE(tx->head) || tail != tx->seen_tail) {
		tx->seen_tail = tail;
		tx->seen_at = jiffies;
		return false;
	}
	return time_after(jiffies, tx->seen_at + IPNG_STALL_TIMEOUT);
}

static void ipng_stall_work(struct work_struct *work)
{
	struct ipng_dev *ipd = container_of(to_delayed_work(work),
					    struct ipng_dev, stall_work);
	unsigned int i;
	int stuck = -1;

	bool error, watchdog, halted;

	/* ndo_stop cancels this work with RTNL held. */
	if (!rtnl_trylock()) {
		queue_delayed_work(ipng_wq, &ipd->stall_work, HZ / 10);
		return;
	}
	if (!test_bit(IPNG_F_OPEN, &ipd->flags))
		goto out;
	/* A failed reset left the channels halted: try again (not when
	 * they wait for their P_Key: a port event brings it).
	 */
	halted = !test_bit(IPNG_F_RUNNING, &ipd->flags) &&
		 !test_bit(IPNG_F_NO_PKEY, &ipd->flags);
	for (i = 0; i < ipd->nchans && !halted; i++)
		if (ipng_chan_stuck(ipng_chan(ipd, i)) && stuck < 0)
			stuck = i;
	if (stuck >= 0) {
		struct ipng_tx_ring *tx = &ipng_chan(ipd, stuck)->tx;

		netdev_warn(ipd->ndev, "send queue of channel %d made no progress for %u ms (%u sends in flight, head %u tail %u), resetting the channels\n",
			    stuck, jiffies_to_msecs(jiffies - tx->seen_at),
			    ipng_tx_depth(ipng_chan(ipd, stuck)),
			    READ_ONCE(tx->head), READ_ONCE(tx->tail));
	}
	error = test_and_clear_bit(IPNG_F_RECOVER, &ipd->flags);
	watchdog = test_and_clear_bit(IPNG_F_WATCHDOG, &ipd->flags);
	if (error)
		ipng_stat_add_bh(ipd->stats, IPNG_STAT_QP_ERRORS, 1);
	if (watchdog || stuck >= 0)
		ipng_stat_add_bh(ipd->stats, IPNG_STAT_TX_TIMEOUT, 1);
	if (error || watchdog || halted || stuck >= 0)
		ipng_chans_recover(ipd);
	queue_delayed_work(ipng_wq, &ipd->stall_work, IPNG_STALL_PERIOD);
out:
	rtnl_unlock();
}

/* ---- the interface's channels ---- */

/**
 * ipng_chans_init() - create the channels of a new interface
 * @ipd: interface with its PD; not registered yet
 *
 * Ring capacities are the largest ethtool -G may ask for (capped by the
 * device); ring sizes start from the module parameters.
 *
 * Return: 0 or a negative errno; nothing is left on error.
 */
int ipng_chans_init(struct ipng_dev *ipd)
{
	const struct ib_device_attr *a = &ipd->ca->attrs;
	u32 cap = min_t(u32, IPNG_RING_MAX, min(a->max_qp_wr, a->max_cqe));
	unsigned int n, i;
	struct ipng_chan *c;
	int err;

	seqcount_init(&ipd->chan_seq);
	INIT_DELAYED_WORK(&ipd->stall_work, ipng_stall_work);
	ipd->max_chans = clamp_t(unsigned int,
				 min_t(unsigned int, ipd->ca->num_comp_vectors,
				       num_online_cpus()),
				 1, IPNG_MAX_CHANNELS);
	n = ipng_num_channels ?: ipd->max_chans;
	n = min(n, ipd->max_chans);
	ipd->tx_ring_max = rounddown_pow_of_two(cap);
	ipd->rx_ring_max = ipd->tx_ring_max;
	ipd->tx_ring_size = min(ipng_send_queue_size, ipd->tx_ring_max);
	ipd->rx_ring_size = min(ipng_recv_queue_size, ipd->rx_ring_max);

	for (i = 0; i < n; i++) {
		c = ipng_chan_create(ipd, i, ipd->tx_ring_size,
				     ipd->rx_ring_size);
		if (IS_ERR(c)) {
			err = PTR_ERR(c);
			goto err_chans;
		}
		rcu_assign_pointer(ipd->chans[i], c);
		ipd->nchans = i + 1;
	}
	ipd->qp = ipng_chan0(ipd)->qp;
	err = netif_set_real_num_tx_queues(ipd->ndev, n);
	if (!err)
		err = netif_set_real_num_rx_queues(ipd->ndev, n);
	if (err)
		goto err_chans;
	return 0;

err_chans:
	ipng_chans_cleanup(ipd);
	return err;
}

/**
 * ipng_chans_cleanup() - destroy every channel
 * @ipd: interface, stopped or never opened
 *
 * Safe to call twice.
 */
void ipng_chans_cleanup(struct ipng_dev *ipd)
{
	struct ipng_chan *c;
	unsigned int i;

	/* Stopped with the interface; a watchdog kick may be left. */
	cancel_delayed_work_sync(&ipd->stall_work);
	for (i = 0; i < IPNG_MAX_CHANNELS; i++) {
		c = rcu_dereference_protected(ipd->chans[i], true);
		if (!c)
			continue;
		RCU_INIT_POINTER(ipd->chans[i], NULL);
		ipng_chan_destroy(c);
	}
	ipd->nchans = 0;
	ipd->qp = NULL;
	/* Counter readers may still look at a channel being freed. */
	synchronize_rcu();
}
