// SPDX-License-Identifier: GPL-2.0
/*
 * Connected-mode connections one by one: the table of outgoing ones, the
 * CM exchanges of each (active side REQ, REP, RTU; passive side REQ, REP,
 * RTU; DREQ on either), feeding every event to the state machine of
 * ipoib_cm_state.c and carrying out what it asks, and the release work
 * that drains, destroys and frees a connection. Everything that sleeps
 * runs on the interface's ordered connection workqueue, so only the
 * release work ever frees a connection.
 */
#include <linux/lockdep.h>
#include <linux/random.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>

#include "ipoib_cm_priv.h"
#include "ipoib_trace.h"

/* REQ parameters other IPoIB stacks use (see the notes on wire facts). */
#define IPNG_CM_RESOURCES	4
#define IPNG_CM_RESPONSE	20
#define IPNG_CM_MAX_RETRIES	15

static const struct rhashtable_params ipng_cm_tx_params = {
	.key_len	= sizeof(struct ipng_cm_key),
	.key_offset	= offsetof(struct ipng_cm_tx, key),
	.head_offset	= offsetof(struct ipng_cm_tx, node),
	.automatic_shrinking = true,
};

/* ---- outgoing connections ---- */
/*
 * Step an outgoing connection; the caller holds the transmit lock, which
 * orders the step with the transmit path. Returns the actions left to
 * the caller: CM messages and the release.
 */
static unsigned int ipng_cm_tx_step_locked(struct ipng_cm_tx *tx,
					   enum ipng_cm_event event,
					   enum ipng_cm_state *old)
{
	struct ipng_dev *ipd = tx->cm->ipd;
	struct sk_buff_head fallback;
	struct sk_buff *skb;
	unsigned int act;

	lockdep_assert_held(&ipd->ndev->tx_global_lock);
	*old = tx->state;
	WRITE_ONCE(tx->state, ipng_cm_step(*old, event, &act));
	if (act & IPNG_CM_ACT_RETRY_LATER)
		tx->retry_at = jiffies + IPNG_CM_RETRY;
	if (act & IPNG_CM_ACT_FLUSH)
		ipng_cm_tx_flush_queue(tx);
	if (act & IPNG_CM_ACT_FALLBACK) {
		/* Back through the neighbour: the failed entry sends UD. */
		__skb_queue_head_init(&fallback);
		ipng_cm_tx_unqueue(tx, &fallback);
		while ((skb = __skb_dequeue(&fallback)))
			ipng_neigh_xmit(ipd, skb);
	}
	return act;
}

/* Step @tx; @err: what made a setup fail, if known (tracing). */
static void ipng_cm_tx_event_err(struct ipng_cm_tx *tx,
				 enum ipng_cm_event event, int err)
{
	struct net_device *ndev = tx->cm->ipd->ndev;
	enum ipng_cm_state old, new;
	unsigned int act;

	netif_tx_lock_bh(ndev);
	act = ipng_cm_tx_step_locked(tx, event, &old);
	new = tx->state;
	netif_tx_unlock_bh(ndev);
	if (ipng_cm_in_setup(old) && !ipng_cm_in_setup(new)) {
		spin_lock_bh(&tx->cm->lock);
		ipng_cm_hold_setup_done(tx->cm, &tx->hold);
		spin_unlock_bh(&tx->cm->lock);
	}
	ipng_trace_cm_step(tx->cm->ipd, true, tx->key.qpn, tx->key.gid.raw,
			   old, new, event, err);

	if (act & IPNG_CM_ACT_SEND_RTU)
		ib_send_cm_rtu(tx->id, NULL, 0);
	if (act & IPNG_CM_ACT_SEND_DREP)
		ib_send_cm_drep(tx->id, NULL, 0);
	if (act & IPNG_CM_ACT_SEND_DREQ)
		ib_send_cm_dreq(tx->id, NULL, 0);
	if ((act & IPNG_CM_ACT_RELEASE) ||
	    (READ_ONCE(tx->state) == IPNG_CM_CLOSING && old != IPNG_CM_CLOSING))
		queue_work(tx->cm->wq, &tx->release_work);
}

/**
 * ipng_cm_tx_event() - feed an event to an outgoing connection
 * @tx: the connection
 * @event: what happened
 *
 * Process context, no lock held (it takes every transmit lock).
 */
void ipng_cm_tx_event(struct ipng_cm_tx *tx, enum ipng_cm_event event)
{
	ipng_cm_tx_event_err(tx, event, 0);
}

static void ipng_cm_tx_error_work(struct work_struct *work)
{
	struct ipng_cm_tx *tx = container_of(work, struct ipng_cm_tx,
					     error_work);

	ipng_cm_tx_event(tx, IPNG_CM_EV_QP_ERROR);
}

static void ipng_cm_tx_retry_work(struct work_struct *work)
{
	struct ipng_cm_tx *tx = container_of(work, struct ipng_cm_tx,
					     retry_work);

	ipng_cm_tx_event(tx, IPNG_CM_EV_CLOSE);
}

static void ipng_cm_tx_qp_event(struct ib_event *event, void *context)
{
	struct ipng_cm_tx *tx = context;

	if (event->event == IB_EVENT_QP_FATAL ||
	    event->event == IB_EVENT_QP_REQ_ERR ||
	    event->event == IB_EVENT_QP_ACCESS_ERR)
		queue_work(tx->cm->wq, &tx->error_work);
}

static int ipng_cm_qp_to(struct ib_cm_id *id, struct ib_qp *qp,
			 enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };
	int mask, err;

	err = ib_cm_init_qp_attr(id, &attr, &mask);
	return err ?: ib_modify_qp(qp, &attr, mask);
}

/*
 * The receive side of an incoming connection goes to RTR before its REP
 * is sent, but ib_cm learns the PSN it expects only from that REP: the
 * PSN the REP will carry is set here.
 */
static int ipng_cm_rx_qp_rtr(struct ib_cm_id *id, struct ib_qp *qp, u32 psn)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RTR };
	int mask, err;

	err = ib_cm_init_qp_attr(id, &attr, &mask);
	if (err)
		return err;
	attr.rq_psn = psn;
	return ib_modify_qp(qp, &attr, mask | IB_QP_RQ_PSN);
}

/* The peer accepted: its MTU from the REP, QP to RTS, then RTU and data. */
static void ipng_cm_tx_rep(struct ipng_cm_tx *tx, const struct ib_cm_event *ev)
{
	u32 qpn, mtu;
	int err;

	err = ipng_cm_pdata_parse(ev->private_data,
				  IB_CM_REP_PRIVATE_DATA_SIZE, &qpn, &mtu);
	if (!err)
		err = ipng_cm_qp_to(tx->id, tx->qp, IB_QPS_RTR);
	if (!err)
		err = ipng_cm_qp_to(tx->id, tx->qp, IB_QPS_RTS);
	if (err) {
		netdev_dbg(tx->cm->ipd->ndev, "REP from QPN 0x%06x unusable: %d\n",
			   tx->key.qpn, err);
		ib_send_cm_rej(tx->id, IB_CM_REJ_CONSUMER_DEFINED, NULL, 0,
			       NULL, 0);
		ipng_cm_tx_event_err(tx, IPNG_CM_EV_SETUP_ERROR, err);
		return;
	}
	tx->mtu = mtu;
	ipng_cm_tx_event(tx, IPNG_CM_EV_REP);
}

static int ipng_cm_tx_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct ipng_cm_tx *tx = id->context;

	switch (ev->event) {
	case IB_CM_REP_RECEIVED:
		ipng_cm_tx_rep(tx, ev);
		break;
	case IB_CM_REJ_RECEIVED:
		ipng_cm_tx_event(tx, IPNG_CM_EV_REJ);
		break;
	case IB_CM_REQ_ERROR:
	case IB_CM_REP_ERROR:
		ipng_cm_tx_event(tx, IPNG_CM_EV_TIMEOUT);
		break;
	case IB_CM_DREQ_RECEIVED:
		ipng_cm_tx_event(tx, IPNG_CM_EV_DREQ);
		break;
	default:
		break;
	}
	return 0;
}

static struct ib_qp *ipng_cm_tx_qp(struct ipng_cm_tx *tx)
{
	struct ipng_dev *ipd = tx->cm->ipd;
	struct ib_qp_init_attr init = {
		.event_handler	= ipng_cm_tx_qp_event,
		.qp_context	= tx,
		.send_cq	= ipd->cm_send_cq,
		.recv_cq	= ipd->cm_recv_cq,
		.cap = {
			.max_send_wr	= tx->cm->tx_size,
			.max_recv_wr	= 1,
			.max_send_sge	= 1,
			.max_recv_sge	= 1,
		},
		.sq_sig_type	= IB_SIGNAL_ALL_WR,
		.qp_type	= IB_QPT_RC,
		.port_num	= ipd->port,
	};
	struct ib_qp_attr attr = {
		.qp_state	= IB_QPS_INIT,
		.pkey_index	= READ_ONCE(ipd->pkey_index),
		.port_num	= ipd->port,
	};
	struct ib_qp *qp;
	int err;

	qp = ib_create_qp(ipd->pd, &init);
	if (IS_ERR(qp))
		return qp;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err) {
		ib_destroy_qp(qp);
		return ERR_PTR(err);
	}
	return qp;
}

/* Send the REQ: path from the fabric, our UD QPN and buffer size. */
static int ipng_cm_tx_send_req(struct ipng_cm_tx *tx, struct sa_path_rec *rec)
{
	struct ipng_cm *cm = tx->cm;
	struct ipng_dev *ipd = cm->ipd;
	const struct ib_gid_attr *sgid_attr;
	struct ipng_cm_pdata pd;
	struct ib_cm_req_param req = {
		.primary_path		= rec,
		.service_id		= ipng_cm_service_id(tx->key.qpn),
		.qp_num			= tx->qp->qp_num,
		.qp_type		= IB_QPT_RC,
		.private_data		= &pd,
		.private_data_len	= sizeof(pd),
		.starting_psn		= get_random_u32() & 0xffffff,
		.responder_resources	= IPNG_CM_RESOURCES,
		.remote_cm_response_timeout = IPNG_CM_RESPONSE,
		.local_cm_response_timeout = IPNG_CM_RESPONSE,
		.retry_count		= ipd->fabric->cm_retry,
		.rnr_retry_count	= ipd->fabric->cm_retry,
		.max_cm_retries		= IPNG_CM_MAX_RETRIES,
	};
	int err;

	sgid_attr = rdma_get_gid_attr(ipd->ca, ipd->port,
				      ipd->fabric->addr_gid_index(ipd));
	if (IS_ERR(sgid_attr))
		return PTR_ERR(sgid_attr);
	req.ppath_sgid_attr = sgid_attr;
	ipng_cm_pdata_build(&pd, ipd->qp->qp_num, cm->buf_len);
	err = ib_send_cm_req(tx->id, &req);
	rdma_put_gid_attr(sgid_attr);
	return err;
}

static void ipng_cm_tx_connect_work(struct work_struct *work)
{
	struct ipng_cm_tx *tx = container_of(work, struct ipng_cm_tx,
					     connect_work);
	struct ipng_dev *ipd = tx->cm->ipd;
	struct sa_path_rec rec;
	struct ib_cm_id *id;
	struct ib_qp *qp;
	int err;

	if (READ_ONCE(tx->state) != IPNG_CM_IDLE)
		return;
	err = ipd->fabric->cm_path(ipd, &tx->key.gid, &rec);
	if (err)
		goto fail;
	tx->slots = kvcalloc(tx->cm->tx_size, sizeof(*tx->slots), GFP_KERNEL);
	if (!tx->slots) {
		err = -ENOMEM;
		goto fail;
	}
	qp = ipng_cm_tx_qp(tx);
	if (IS_ERR(qp)) {
		err = PTR_ERR(qp);
		goto fail;
	}
	tx->qp = qp;
	WRITE_ONCE(tx->qpn, qp->qp_num);
	id = ib_create_cm_id(ipd->ca, ipng_cm_tx_handler, tx);
	if (IS_ERR(id)) {
		err = PTR_ERR(id);
		goto fail;
	}
	tx->id = id;
	/* The REP may arrive before ib_send_cm_req() returns. */
	ipng_cm_tx_event(tx, IPNG_CM_EV_REQ_SENT);
	if (READ_ONCE(tx->state) != IPNG_CM_REQ_SENT)
		return;
	err = ipng_cm_tx_send_req(tx, &rec);
	if (err)
		goto fail;
	return;

fail:
	netdev_dbg(ipd->ndev, "no connection to QPN 0x%06x GID %pI6: %d\n",
		   tx->key.qpn, tx->key.gid.raw, err);
	ipng_cm_tx_event_err(tx, IPNG_CM_EV_SETUP_ERROR, err);
}

/*
 * Forget a closed connection; transmitters and dumps may still look at it
 * (under RCU). Workqueue only.
 */
static void ipng_cm_tx_unlink(struct ipng_cm_tx *tx)
{
	struct ipng_cm *cm = tx->cm;

	spin_lock_bh(&cm->lock);
	rhashtable_remove_fast(&cm->txs, &tx->node, ipng_cm_tx_params);
	list_del_rcu(&tx->list);
	if (tx->marker) {
		cm->markers--;
		tx->marker = false;
	}
	spin_unlock_bh(&cm->lock);
	kfree_rcu(tx, rcu);
}

/*
 * A failed entry whose verbs objects are gone stays as a marker (UD until
 * its retry time) while fewer than IPNG_CM_MARKERS_MAX are kept. Returns
 * false when it has to go instead.
 */
static bool ipng_cm_tx_keep_marker(struct ipng_cm_tx *tx)
{
	struct ipng_cm *cm = tx->cm;

	lockdep_assert_held(&cm->lock);
	if (!tx->marker && ipng_cm_marker_keep(cm->markers)) {
		cm->markers++;
		tx->marker = true;
	}
	return tx->marker;
}

/**
 * ipng_cm_drain_wait() - wait until a closing connection's completions
 *	are back
 * @cm: connected mode
 * @done: true once they are
 * @arg: what @done looks at
 *
 * Channel 0's NAPI reaps the connected-mode CQs; it is kicked every tick
 * in case a hold-off left them unarmed. While the interface is up but its
 * channels are halted (a restart filling large rings, or one the watchdog
 * retries) nothing can be reaped: that time does not count against
 * IPNG_CM_DRAIN_TIMEOUT, only against IPNG_CM_DRAIN_MAX. Freeing what a
 * completion still points to, because a restart happened to last longer
 * than the timeout, was a use-after-free in ipng_cm_rx_done() once NAPI
 * ran again (soak: ethtool -L with an 8192-buffer receive ring).
 *
 * Context: process context (a release work); sleeps.
 * Return: true if @done came true, false on timeout.
 */
static bool ipng_cm_drain_wait(struct ipng_cm *cm,
			       bool (*done)(void *arg), void *arg)
{
	struct ipng_dev *ipd = cm->ipd;
	unsigned long start = jiffies, spent = 0, t;
	bool halted;

	while (!done(arg)) {
		if (spent >= IPNG_CM_DRAIN_TIMEOUT ||
		    time_after(jiffies, start + IPNG_CM_DRAIN_MAX))
			return false;
		halted = test_bit(IPNG_F_OPEN, &ipd->flags) &&
			 !test_bit(IPNG_F_RUNNING, &ipd->flags);
		local_bh_disable();
		napi_schedule(&ipng_chan0(ipd)->napi);
		local_bh_enable();
		t = jiffies;
		wait_event_timeout(cm->drain_wq, done(arg), IPNG_CM_DRAIN_TICK);
		if (!halted)
			spent += jiffies - t;
	}
	return true;
}

static bool ipng_cm_tx_drained(void *arg)
{
	struct ipng_cm_tx *tx = arg;

	return READ_ONCE(tx->tail) == tx->head;
}

/*
 * Destroy the verbs objects of a failed or closing connection once its
 * sends have come back and give back what it held; a closing one is then
 * forgotten and freed, a failed one stays as a marker that sends UD until
 * its retry time (or goes too, past the marker cap). Runs again for a
 * marker when it closes; every step is safe to repeat.
 */
static void ipng_cm_tx_release_work(struct work_struct *work)
{
	struct ipng_cm_tx *tx = container_of(work, struct ipng_cm_tx,
					     release_work);
	struct ipng_cm *cm = tx->cm;
	struct ipng_dev *ipd = cm->ipd;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct sk_buff_head dropped;
	bool closing, keep;

	/* 1. No send completes after this. */
	if (tx->qp) {
		ib_modify_qp(tx->qp, &attr, IB_QP_STATE);
		if (!ipng_cm_drain_wait(cm, ipng_cm_tx_drained, tx))
			netdev_warn(ipd->ndev, "RC QP %u: %u sends did not complete\n",
				    tx->qpn, tx->head - tx->tail);
	}
	/* 2. No CM callback, then no QP. */
	if (tx->id) {
		ib_destroy_cm_id(tx->id);
		tx->id = NULL;
	}
	if (tx->qp) {
		ib_destroy_qp(tx->qp);
		tx->qp = NULL;
	}
	/* 3. Nothing else queued for it (its state keeps them off now). */
	cancel_work_sync(&tx->error_work);
	cancel_work_sync(&tx->retry_work);

	/* 4. What waited for it is dropped, what it held given back. */
	__skb_queue_head_init(&dropped);
	netif_tx_lock_bh(ipd->ndev);
	ipng_cm_tx_unqueue(tx, &dropped);
	netif_tx_unlock_bh(ipd->ndev);
	if (skb_queue_len(&dropped))
		ipng_stat_add_bh(ipd->stats, IPNG_STAT_TX_DROP_CM_QUEUE,
				 skb_queue_len(&dropped));
	__skb_queue_purge(&dropped);
	/* Packets of flushed sends; the QP that read them is gone. */
	if (tx->slots)
		ipng_ring_drain(ipd, tx->slots, cm->tx_size, DMA_TO_DEVICE);
	kvfree(tx->slots);
	tx->slots = NULL;
	spin_lock_bh(&cm->lock);
	closing = READ_ONCE(tx->state) == IPNG_CM_CLOSING;
	keep = !closing && ipng_cm_tx_keep_marker(tx);
	if (keep)
		ipng_cm_hold_put_marker(cm, &tx->hold);
	else
		ipng_cm_hold_put(cm, &tx->hold);
	spin_unlock_bh(&cm->lock);

	/* 5. Forgotten, or kept as a marker within the cap. */
	if (closing)
		ipng_cm_tx_unlink(tx);
	else if (!keep)
		ipng_cm_tx_event(tx, IPNG_CM_EV_CLOSE);	/* runs this again */
}

/**
 * ipng_cm_table_init() - set up the table of outgoing connections
 * @cm: connected-mode state being made
 *
 * Return: 0 or a negative errno.
 */
int ipng_cm_table_init(struct ipng_cm *cm)
{
	return rhashtable_init(&cm->txs, &ipng_cm_tx_params);
}

/**
 * ipng_cm_table_destroy() - free the (empty) table
 * @cm: connected-mode state; every connection was released and their RCU
 *	frees have run
 */
void ipng_cm_table_destroy(struct ipng_cm *cm)
{
	rhashtable_destroy(&cm->txs);
}

/*
 * A new entry for @key from the transmit path, or the existing one; NULL
 * when the caps refuse it (counted) or memory is short: the packet goes
 * over UD and no entry stays behind.
 */
static struct ipng_cm_tx *ipng_cm_tx_new(struct ipng_cm *cm,
					 const struct ipng_cm_key *key)
{
	enum ipng_cm_verdict v = IPNG_CM_ADMIT;
	struct ipng_cm_tx *tx, *old = NULL;

	tx = kzalloc(sizeof(*tx), GFP_ATOMIC);
	if (!tx)
		return NULL;
	tx->key = *key;
	tx->cm = cm;
	tx->state = IPNG_CM_IDLE;
	tx->created = jiffies;
	tx->last_used = jiffies;
	tx->cqe.done = ipng_cm_tx_done;
	spin_lock_init(&tx->send_lock);
	skb_queue_head_init(&tx->queue);
	INIT_WORK(&tx->connect_work, ipng_cm_tx_connect_work);
	INIT_WORK(&tx->release_work, ipng_cm_tx_release_work);
	INIT_WORK(&tx->error_work, ipng_cm_tx_error_work);
	INIT_WORK(&tx->retry_work, ipng_cm_tx_retry_work);

	spin_lock(&cm->lock);
	if (!cm->running)
		goto err_unlock;
	v = ipng_cm_hold_take(cm, &key->gid, false, &tx->hold);
	if (v != IPNG_CM_ADMIT)
		goto err_unlock;
	old = rhashtable_lookup_get_insert_fast(&cm->txs, &tx->node,
						ipng_cm_tx_params);
	if (old) {
		ipng_cm_hold_put(cm, &tx->hold);
		goto err_unlock;
	}
	list_add_tail_rcu(&tx->list, &cm->tx_list);
	spin_unlock(&cm->lock);
	queue_work(cm->wq, &tx->connect_work);
	return tx;

err_unlock:
	spin_unlock(&cm->lock);
	kfree(tx);
	if (old)
		return IS_ERR(old) ? NULL : old;
	if (v != IPNG_CM_ADMIT)
		ipng_cm_count_refusal(cm, v, false);
	return NULL;
}

/**
 * ipng_cm_tx_get() - the outgoing connection to a peer, made on first use
 * @cm: connected-mode state
 * @key: the peer
 *
 * Transmit context, under rcu_read_lock(), which keeps the result valid.
 *
 * Return: the entry, or NULL when the peer is to be sent to over UD
 * without one (caps, memory, not running).
 */
struct ipng_cm_tx *ipng_cm_tx_get(struct ipng_cm *cm,
				  const struct ipng_cm_key *key)
{
	struct ipng_cm_tx *tx;

	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "table lookup outside RCU");
	tx = rhashtable_lookup(&cm->txs, key, ipng_cm_tx_params);
	return tx ?: ipng_cm_tx_new(cm, key);
}

/* ---- incoming connections ---- */

/**
 * ipng_cm_rx_event() - feed an event to an incoming connection
 * @rx: the connection
 * @event: what happened
 *
 * Process context (CM handlers, the workqueue), no lock held.
 */
void ipng_cm_rx_event(struct ipng_cm_rx *rx, enum ipng_cm_event event)
{
	struct ipng_cm *cm = rx->cm;
	enum ipng_cm_state old, new;
	unsigned int act;

	spin_lock_bh(&cm->lock);
	old = rx->state;
	new = ipng_cm_step(old, event, &act);
	WRITE_ONCE(rx->state, new);
	if (ipng_cm_in_setup(old) && !ipng_cm_in_setup(new))
		ipng_cm_hold_setup_done(cm, &rx->hold);
	spin_unlock_bh(&cm->lock);
	ipng_trace_cm_step(cm->ipd, false, ipng_addr_qpn(rx->addr),
			   rx->addr + IPNG_GID_OFFSET, old, new, event, 0);

	if (act & IPNG_CM_ACT_SEND_DREP)
		ib_send_cm_drep(rx->id, NULL, 0);
	if (act & IPNG_CM_ACT_SEND_DREQ)
		ib_send_cm_dreq(rx->id, NULL, 0);
	if (new == IPNG_CM_CLOSING && old != IPNG_CM_CLOSING)
		queue_work(cm->wq, &rx->release_work);
}

static void ipng_cm_rx_drained(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_cm_rx *rx = container_of(wc->wr_cqe, struct ipng_cm_rx,
					     drain_cqe);
	struct ipng_cm *cm = rx->cm;

	/* @rx may be freed once the waiter sees this; @cm outlives it. */
	smp_store_release(&rx->drained, true);
	wake_up(&cm->drain_wq);
}

static bool ipng_cm_rx_marker_back(void *arg)
{
	struct ipng_cm_rx *rx = arg;

	/* Pairs with the release in ipng_cm_rx_drained(). */
	return smp_load_acquire(&rx->drained);
}

static bool ipng_cm_rx_ring_back(void *arg)
{
	struct ipng_cm_rx *rx = arg;

	return !atomic_read(&rx->ring.posted);
}

/* Stop @rx's QP: no receive and no QP event (COMM_EST) after this. */
static void ipng_cm_rx_error(struct ipng_cm_rx *rx)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (ib_modify_qp(rx->qp, &attr, IB_QP_STATE))
		netdev_warn(rx->cm->ipd->ndev, "RC QP %u: cannot move to error\n",
			    rx->qpn);
}

/*
 * Wait until no completion of @rx's stopped QP can still be ahead: a
 * marker send flushes into the same CQ as its receives; without an SRQ,
 * its own receives flush as well.
 */
static void ipng_cm_rx_drain(struct ipng_cm_rx *rx)
{
	struct ipng_cm *cm = rx->cm;
	struct ib_send_wr wr = {
		.wr_cqe		= &rx->drain_cqe,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	struct net_device *ndev = cm->ipd->ndev;

	if (ib_post_send(rx->qp, &wr, NULL) ||
	    !ipng_cm_drain_wait(cm, ipng_cm_rx_marker_back, rx))
		netdev_warn(ndev, "RC QP %u: drain marker lost\n", rx->qpn);
	if (rx->ring.bufs &&
	    !ipng_cm_drain_wait(cm, ipng_cm_rx_ring_back, rx))
		netdev_warn(ndev, "RC QP %u: receives did not flush\n",
			    rx->qpn);
}

/*
 * Destroy the QP of a drained connection (off the SRQ from then on) and
 * free its receive ring. Safe to call twice.
 */
static void ipng_cm_rx_destroy_qp(struct ipng_cm_rx *rx)
{
	struct ipng_cm *cm = rx->cm;

	if (rx->qp) {
		ib_destroy_qp(rx->qp);
		rx->qp = NULL;
		if (cm->srq)
			atomic_dec(&cm->srq_qps);
	}
	ipng_cm_ring_free(cm->ipd, &rx->ring);
}

/* Give back what @rx held and free it once dumps are done with it. */
static void ipng_cm_rx_free(struct ipng_cm_rx *rx)
{
	struct ipng_cm *cm = rx->cm;

	spin_lock_bh(&cm->lock);
	ipng_cm_hold_put(cm, &rx->hold);
	spin_unlock_bh(&cm->lock);
	kfree_rcu(rx, rcu);
}

/*
 * Take an incoming connection down, in this order: 1. its QP stops
 * (error state); 2. its CM ID goes, so no handler runs for it any more;
 * 3. the completions still ahead are drained; 4. its QP is destroyed,
 * which detaches it from the SRQ; 5. only then it leaves the list. An
 * interface that stops waits for the list to empty before it destroys the
 * SRQ, so a connection on the list is one whose QP may still be attached.
 */
static void ipng_cm_rx_release_work(struct work_struct *work)
{
	struct ipng_cm_rx *rx = container_of(work, struct ipng_cm_rx,
					     release_work);
	struct ipng_cm *cm = rx->cm;

	ipng_cm_rx_error(rx);
	/* No CM callback after this; a live peer gets a DREQ or REJ. */
	ib_destroy_cm_id(rx->id);
	rx->id = NULL;
	ipng_cm_rx_drain(rx);
	ipng_cm_rx_destroy_qp(rx);
	spin_lock_bh(&cm->lock);
	list_del_rcu(&rx->list);
	spin_unlock_bh(&cm->lock);
	ipng_cm_rx_free(rx);
}

static void ipng_cm_rx_qp_event(struct ib_event *event, void *context)
{
	struct ipng_cm_rx *rx = context;

	/* Data before the RTU: the connection is up all the same. */
	if (event->event == IB_EVENT_COMM_EST)
		ib_cm_notify(rx->id, IB_EVENT_COMM_EST);
}

static struct ib_qp *ipng_cm_rx_qp(struct ipng_cm_rx *rx)
{
	struct ipng_cm *cm = rx->cm;
	struct ipng_dev *ipd = cm->ipd;
	struct ib_qp_init_attr init = {
		.event_handler	= ipng_cm_rx_qp_event,
		.qp_context	= rx,
		.send_cq	= ipd->cm_recv_cq,	/* the drain marker */
		.recv_cq	= ipd->cm_recv_cq,
		.srq		= cm->srq,
		.cap = {
			.max_send_wr	= 1,
			.max_recv_wr	= cm->srq ? 0 : IPNG_CM_RX_RING,
			.max_send_sge	= 1,
			.max_recv_sge	= cm->srq ? 0 : cm->nfrags,
		},
		.sq_sig_type	= IB_SIGNAL_ALL_WR,
		.qp_type	= IB_QPT_RC,
		.port_num	= ipd->port,
	};

	struct ib_qp *qp;

	qp = ib_create_qp(ipd->pd, &init);
	if (IS_ERR(qp))
		return qp;
	if (cm->srq)
		atomic_inc(&cm->srq_qps);
	rx->qpn = qp->qp_num;
	return qp;
}

static int ipng_cm_send_rep(struct ipng_cm_rx *rx, u32 psn)
{
	struct ipng_cm *cm = rx->cm;
	struct ipng_dev *ipd = cm->ipd;
	struct ipng_cm_pdata pd;
	struct ib_cm_rep_param rep = {
		.qp_num			= rx->qp->qp_num,
		.starting_psn		= psn,
		.private_data		= &pd,
		.private_data_len	= sizeof(pd),
		.rnr_retry_count	= ipd->fabric->cm_retry,
		.srq			= !!cm->srq,
	};

	ipng_cm_pdata_build(&pd, ipd->qp->qp_num, cm->buf_len);
	return ib_send_cm_rep(rx->id, &rep);
}

/*
 * Room for one more incoming connection from @gid: the caps, with a ring
 * of its own without an SRQ. Takes what it needs into @rx->hold.
 */
static int ipng_cm_rx_admit(struct ipng_cm_rx *rx, const union ib_gid *gid)
{
	struct ipng_cm *cm = rx->cm;
	enum ipng_cm_verdict v = IPNG_CM_ADMIT;
	int err = 0;

	spin_lock_bh(&cm->lock);
	if (cm->running)
		v = ipng_cm_hold_take(cm, gid, !cm->srq, &rx->hold);
	else
		err = -ENODEV;
	spin_unlock_bh(&cm->lock);
	if (v != IPNG_CM_ADMIT) {
		ipng_cm_count_refusal(cm, v, true);
		err = -ENOSPC;
	}
	return err;
}

/*
 * A peer connects: a QP on the SRQ (or with its own receives), RTR, REP.
 * An error makes ib_cm destroy the new ID and reject the peer, which then
 * sends over UD.
 */
static int ipng_cm_req(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	const struct ib_cm_req_event_param *req = &ev->param.req_rcvd;
	struct ipng_cm *cm = id->context;
	struct ipng_dev *ipd = cm->ipd;
	struct ipng_cm_rx *rx;
	u32 psn = get_random_u32() & 0xffffff;
	bool listed = false;
	u32 qpn = 0, mtu;
	int err;

	atomic_inc(&cm->req_busy);
	err = ipng_cm_pdata_parse(ev->private_data,
				  IB_CM_REQ_PRIVATE_DATA_SIZE, &qpn, &mtu);
	if (err)
		goto out;
	rx = kzalloc(sizeof(*rx), GFP_KERNEL);
	if (!rx) {
		err = -ENOMEM;
		goto out;
	}
	rx->cm = cm;
	rx->chan = atomic_inc_return(&cm->rx_seq);
	rx->id = id;
	rx->state = IPNG_CM_IDLE;
	rx->created = jiffies;
	rx->last_rx = jiffies;
	rx->drain_cqe.done = ipng_cm_rx_drained;
	INIT_WORK(&rx->release_work, ipng_cm_rx_release_work);
	ipng_addr_build(rx->addr, IPNG_FLAG_RC, qpn, &req->primary_path->dgid);

	err = ipng_cm_rx_admit(rx, &req->primary_path->dgid);
	if (err)
		goto err_free;
	rx->qp = ipng_cm_rx_qp(rx);
	if (IS_ERR(rx->qp)) {
		err = PTR_ERR(rx->qp);
		rx->qp = NULL;
		goto err_free;
	}
	id->context = rx;
	err = ipng_cm_qp_to(id, rx->qp, IB_QPS_INIT);
	if (!err && !cm->srq)
		err = ipng_cm_ring_init(ipd, &rx->ring, IPNG_CM_RX_RING, rx);
	if (!err)
		err = ipng_cm_rx_qp_rtr(id, rx->qp, psn);
	if (err)
		goto err_free;

	spin_lock_bh(&cm->lock);
	if (cm->running) {
		list_add_tail_rcu(&rx->list, &cm->rx_list);
		WRITE_ONCE(rx->state, IPNG_CM_REP_SENT);
		listed = true;
	}
	spin_unlock_bh(&cm->lock);
	if (!listed) {
		err = -ENODEV;
		goto err_free;
	}
	err = ipng_cm_send_rep(rx, psn);
	if (err) {
		/* Listed: the release work takes it down (and the ID). */
		ipng_cm_rx_event(rx, IPNG_CM_EV_SETUP_ERROR);
		err = 0;
	}
	goto out;

err_free:
	id->context = cm;
	if (rx->qp) {
		ipng_cm_rx_error(rx);
		ipng_cm_rx_drain(rx);
	}
	ipng_cm_rx_destroy_qp(rx);
	ipng_cm_rx_free(rx);
out:
	if (err) {
		netdev_dbg(ipd->ndev, "refused a connection from QPN 0x%06x: %d\n",
			   qpn, err);
		trace_cm_connect(ipd->ndev, qpn, req->primary_path->dgid.raw,
				 false, err);
	}
	if (atomic_dec_and_test(&cm->req_busy))
		wake_up_var(&cm->req_busy);
	return err;
}

/**
 * ipng_cm_rx_handler() - CM events of the listening ID and incoming IDs
 * @id: the CM ID (its context: &struct ipng_cm while listening or in a
 *	REQ, the &struct ipng_cm_rx once accepted)
 * @ev: the event
 *
 * Return: 0, or an error for a refused REQ (ib_cm then destroys @id).
 */
int ipng_cm_rx_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
{
	struct ipng_cm_rx *rx = id->context;

	switch (ev->event) {
	case IB_CM_REQ_RECEIVED:
		return ipng_cm_req(id, ev);
	case IB_CM_RTU_RECEIVED:
	case IB_CM_USER_ESTABLISHED:
		ipng_cm_rx_event(rx, IPNG_CM_EV_RTU);
		break;
	case IB_CM_DREQ_RECEIVED:
		ipng_cm_rx_event(rx, IPNG_CM_EV_DREQ);
		break;
	case IB_CM_REJ_RECEIVED:
		ipng_cm_rx_event(rx, IPNG_CM_EV_REJ);
		break;
	case IB_CM_REP_ERROR:
		ipng_cm_rx_event(rx, IPNG_CM_EV_TIMEOUT);
		break;
	default:
		break;
	}
	return 0;
}
