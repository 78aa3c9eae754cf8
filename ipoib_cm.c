// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode (RFC 4755): reliable-connected (RC) queue pairs next to
 * the UD QP, for unicast to peers whose link address has the RC flag.
 * This file owns connected mode of an interface as a whole: its module
 * parameters, the caps every connection is counted against (per peer,
 * being made, receive rings, max_connections), the walks that close idle
 * connections and expired failed markers or all of them, listening,
 * the SRQ, open/stop/init/cleanup and the /proc and debugfs views.
 *
 * Connections are one-way, as every Linux IPoIB makes them: a host that
 * sends to a peer connects to the peer's service ID and sends on that
 * connection (an outgoing connection, struct ipng_cm_tx); the peer only
 * receives on it (an incoming connection, struct ipng_cm_rx). Incoming
 * connections receive into a shared receive queue (SRQ) where the device
 * has one, into a queue of their own otherwise. ipoib_cm_conn.c makes and
 * closes single connections, ipoib_cm_data.c carries their packets.
 *
 * Bounds: outgoing entries (up, being made, failed markers) and incoming
 * connections together never exceed max_connections + IPNG_CM_MARKERS_MAX;
 * at most IPNG_CM_SETUP_MAX are being made and IPNG_CM_PER_PEER (failed
 * markers included) share one remote GID. Walks over them run under RCU,
 * not under the BH lock.
 */
#include <kunit/visibility.h>
#include <linux/jhash.h>
#include <linux/lockdep.h>
#include <linux/moduleparam.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cm.h>

#include "ipoib_cm_priv.h"
#include "ipoib_trace.h"

static unsigned int ipng_max_connections = 4096;
static unsigned int ipng_cm_idle_timeout = 60;
static bool ipng_cm_srq = true;

static int ipng_cm_param_set(const char *val, const struct kernel_param *kp,
			     enum ipng_cm_param param)
{
	unsigned int v = 0, min, max;
	int err, range;

	err = kstrtouint(val, 0, &v);
	/* The range is looked up for the message even when @val is no number. */
	range = ipng_cm_param_check(param, v, &min, &max);
	if (err || range) {
		pr_err("ipoib_ng: %s must be a number from %u to %u\n",
		       kp->name, min, max);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static int ipng_max_conn_set(const char *val, const struct kernel_param *kp)
{
	return ipng_cm_param_set(val, kp, IPNG_CM_PARAM_MAX_CONN);
}

static int ipng_idle_set(const char *val, const struct kernel_param *kp)
{
	return ipng_cm_param_set(val, kp, IPNG_CM_PARAM_IDLE);
}

static const struct kernel_param_ops ipng_max_conn_ops = {
	.set = ipng_max_conn_set,
	.get = param_get_uint,
};

static const struct kernel_param_ops ipng_idle_ops = {
	.set = ipng_idle_set,
	.get = param_get_uint,
};

module_param_cb(max_connections, &ipng_max_conn_ops, &ipng_max_connections,
		0644);
MODULE_PARM_DESC(max_connections, "connected-mode RC connections per interface, both directions (0-65536, default 4096); peers past it use UD");
module_param_cb(cm_idle_timeout, &ipng_idle_ops, &ipng_cm_idle_timeout, 0644);
MODULE_PARM_DESC(cm_idle_timeout, "seconds an unused RC connection lives (1-86400, default 60)");
module_param_named(cm_srq, ipng_cm_srq, bool, 0444);
MODULE_PARM_DESC(cm_srq, "receive connected mode on a shared receive queue where the device has one (default Y)");

/* ---- caps ---- */

static u32 ipng_cm_gid_hash(const union ib_gid *gid)
{
	return jhash(gid->raw, sizeof(gid->raw), 0);
}

/* The per-peer count of @gid, NULL if none; &ipng_cm.lock held. */
static struct ipng_cm_peer *ipng_cm_peer_find(struct ipng_cm *cm,
					      const union ib_gid *gid)
{
	struct ipng_cm_peer *p;

	lockdep_assert_held(&cm->lock);
	hash_for_each_possible(cm->peers, p, node, ipng_cm_gid_hash(gid))
		if (!memcmp(p->gid.raw, gid->raw, sizeof(gid->raw)))
			return p;
	return NULL;
}

/**
 * ipng_cm_hold_take() - count a new connection against every cap
 * @cm: connected-mode state; &ipng_cm.lock held
 * @gid: the peer's GID
 * @own_ring: the connection would have a receive ring of its own
 * @hold: filled with what it took (empty on refusal)
 *
 * Return: %IPNG_CM_ADMIT, or the cap that refuses; %IPNG_CM_FULL_SETUP
 * also stands for max_connections and for a failed allocation.
 */
enum ipng_cm_verdict ipng_cm_hold_take(struct ipng_cm *cm,
				       const union ib_gid *gid, bool own_ring,
				       struct ipng_cm_hold *hold)
{
	struct ipng_cm_peer *peer = ipng_cm_peer_find(cm, gid);
	struct ipng_cm_usage use = {
		.setup		= cm->setup,
		.peer		= peer ? peer->count : 0,
		.own_ring	= cm->own_rings,
	};
	enum ipng_cm_verdict v;

	memset(hold, 0, sizeof(*hold));
	v = ipng_cm_admit(&use, own_ring, cm->rx_max);
	if (v != IPNG_CM_ADMIT)
		return v;
	if (!peer) {
		peer = kzalloc(sizeof(*peer), GFP_ATOMIC);
		if (!peer)
			return IPNG_CM_FULL_SETUP;
		peer->gid = *gid;
		hash_add(cm->peers, &peer->node, ipng_cm_gid_hash(gid));
	}
	WRITE_ONCE(cm->budget.max, READ_ONCE(ipng_max_connections));
	if (!ipng_cm_budget_take(&cm->budget)) {
		if (!peer->count) {
			hash_del(&peer->node);
			kfree(peer);
		}
		return IPNG_CM_FULL_SETUP;
	}
	peer->count++;
	hold->peer = peer;
	hold->slot = true;
	hold->setup = true;
	cm->setup++;
	hold->own_ring = own_ring;
	cm->own_rings += own_ring;
	return IPNG_CM_ADMIT;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_hold_take);

/**
 * ipng_cm_hold_setup_done() - a connection is no longer being made
 * @cm: connected-mode state; &ipng_cm.lock held
 * @hold: what the connection holds
 */
void ipng_cm_hold_setup_done(struct ipng_cm *cm, struct ipng_cm_hold *hold)
{
	lockdep_assert_held(&cm->lock);
	if (hold->setup) {
		cm->setup--;
		hold->setup = false;
	}
}

/**
 * ipng_cm_hold_put_marker() - give back all but the peer's count
 * @cm: connected-mode state; &ipng_cm.lock held
 * @hold: what a connection that failed to be made holds; it keeps
 *	counting against its peer's %IPNG_CM_PER_PEER while it stays as a
 *	failed marker (until IPNG_CM_RETRY), so that a peer whose every
 *	connection is refused (a flood of forged link addresses with that
 *	GID) costs at most %IPNG_CM_PER_PEER connection attempts per
 *	IPNG_CM_RETRY, not one per forged address
 */
void ipng_cm_hold_put_marker(struct ipng_cm *cm, struct ipng_cm_hold *hold)
{
	lockdep_assert_held(&cm->lock);
	ipng_cm_hold_setup_done(cm, hold);
	if (hold->own_ring) {
		cm->own_rings--;
		hold->own_ring = false;
	}
	if (hold->slot) {
		ipng_cm_budget_return(&cm->budget);
		hold->slot = false;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_hold_put_marker);

/**
 * ipng_cm_hold_put() - give back everything ipng_cm_hold_take() took
 * @cm: connected-mode state; &ipng_cm.lock held
 * @hold: what the connection holds; empty afterwards (a second call does
 *	nothing)
 */
void ipng_cm_hold_put(struct ipng_cm *cm, struct ipng_cm_hold *hold)
{
	ipng_cm_hold_put_marker(cm, hold);
	if (hold->peer) {
		if (!--hold->peer->count) {
			hash_del(&hold->peer->node);
			kfree(hold->peer);
		}
		hold->peer = NULL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_hold_put);

/**
 * ipng_cm_count_refusal() - count a connection a cap refused
 * @cm: connected-mode state
 * @v: the verdict
 * @bh: called from process context (else BH is disabled already)
 */
void ipng_cm_count_refusal(struct ipng_cm *cm, enum ipng_cm_verdict v,
			   bool bh)
{
	enum ipng_stat stat = v == IPNG_CM_FULL_PEER ? IPNG_STAT_CM_PEER_CAP :
						       IPNG_STAT_CM_CAP;

	if (bh)
		ipng_stat_add_bh(cm->ipd->stats, stat, 1);
	else
		ipng_stat_add(cm->ipd->stats, stat, 1);
}

/* ---- walks on the workqueue ---- */

/*
 * Feed @event to every connection @pick chooses. The walk runs on the
 * ordered workqueue, where the release work that frees connections (and
 * the only place they leave the lists) runs too, so the picked ones stay
 * valid without references. The lists are read under RCU: the transmit
 * path and REQ handlers add to them meanwhile, and the BH lock is not held
 * over the whole table.
 */
static void ipng_cm_walk(struct ipng_cm *cm, enum ipng_cm_event event,
			 bool (*pick_tx)(struct ipng_cm_tx *tx),
			 bool (*pick_rx)(struct ipng_cm_rx *rx))
{
	struct ipng_cm_tx *tx, *tx_next;
	struct ipng_cm_rx *rx, *rx_next;
	LIST_HEAD(txs);
	LIST_HEAD(rxs);

	rcu_read_lock();
	list_for_each_entry_rcu(tx, &cm->tx_list, list)
		if (pick_tx && pick_tx(tx))
			list_add_tail(&tx->walk, &txs);
	list_for_each_entry_rcu(rx, &cm->rx_list, list)
		if (pick_rx && pick_rx(rx))
			list_add_tail(&rx->walk, &rxs);
	rcu_read_unlock();

	list_for_each_entry_safe(tx, tx_next, &txs, walk)
		ipng_cm_tx_event(tx, event);
	list_for_each_entry_safe(rx, rx_next, &rxs, walk)
		ipng_cm_rx_event(rx, event);
}

static bool ipng_cm_any_tx(struct ipng_cm_tx *tx)
{
	return true;
}

static bool ipng_cm_any_rx(struct ipng_cm_rx *rx)
{
	return true;
}

static unsigned long ipng_cm_timeout(void)
{
	return (unsigned long)READ_ONCE(ipng_cm_idle_timeout) * HZ;
}

/* Idle, or a failed marker whose retry time has come. */
static bool ipng_cm_tx_idle(struct ipng_cm_tx *tx)
{
	return ipng_cm_reap_due(READ_ONCE(tx->state), jiffies,
				READ_ONCE(tx->last_used), ipng_cm_timeout(),
				READ_ONCE(tx->retry_at));
}

/* The sender reaps; a receiver only gives up on twice as long a silence. */
static bool ipng_cm_rx_idle(struct ipng_cm_rx *rx)
{
	return READ_ONCE(rx->state) != IPNG_CM_CLOSING &&
	       time_after(jiffies,
			  READ_ONCE(rx->last_rx) + 2 * ipng_cm_timeout());
}

static void ipng_cm_reap_work(struct work_struct *work)
{
	struct ipng_cm *cm = container_of(to_delayed_work(work),
					  struct ipng_cm, reap_work);

	/* Once a second: a lowered cm_idle_timeout applies at once, and
	 * failed markers go within a second of their retry time.
	 */
	ipng_cm_walk(cm, IPNG_CM_EV_IDLE, ipng_cm_tx_idle, ipng_cm_rx_idle);
	if (READ_ONCE(cm->running))
		queue_delayed_work(cm->wq, &cm->reap_work, HZ);
}

static void ipng_cm_close_work(struct work_struct *work)
{
	struct ipng_cm *cm = container_of(work, struct ipng_cm, close_work);

	ipng_cm_walk(cm, IPNG_CM_EV_CLOSE, ipng_cm_any_tx, ipng_cm_any_rx);
}

static void ipng_cm_flush_work(struct work_struct *work)
{
	struct ipng_cm *cm = container_of(work, struct ipng_cm, flush_work);

	ipng_cm_walk(cm, IPNG_CM_EV_CLOSE, ipng_cm_any_tx, NULL);
}

/**
 * ipng_cm_flush_tx() - close every outgoing connection, soon
 * @ipd: interface
 *
 * Any context that may queue work (the mode change under RTNL, port
 * events). New packets make new connections if the mode still says so.
 */
void ipng_cm_flush_tx(struct ipng_dev *ipd)
{
	if (ipd->cm)
		queue_work(ipd->cm->wq, &ipd->cm->flush_work);
}

/* ---- open, stop, setup ---- */

static int ipng_cm_listen(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;
	struct ib_cm_id *id;
	int err;

	id = ib_create_cm_id(ipd->ca, ipng_cm_rx_handler, cm);
	if (IS_ERR(id))
		return PTR_ERR(id);
	err = ib_cm_listen(id, ipng_cm_service_id(ipd->qp->qp_num));
	if (err) {
		ib_destroy_cm_id(id);
		return err;
	}
	cm->listen = id;
	return 0;
}

static int ipng_cm_srq_open(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;
	u32 size = min_t(u32, ipng_recv_queue_size, ipd->ca->attrs.max_srq_wr);
	struct ib_srq_init_attr init = {
		.srq_type	= IB_SRQT_BASIC,
		.attr = {
			.max_wr		= size,
			.max_sge	= cm->nfrags,
		},
	};
	int err;

	cm->srq = ib_create_srq(ipd->pd, &init);
	if (IS_ERR(cm->srq)) {
		err = PTR_ERR(cm->srq);
		cm->srq = NULL;
		return err;
	}
	err = ipng_cm_ring_init(ipd, &cm->srq_ring, size, NULL);
	if (err) {
		ib_destroy_srq(cm->srq);
		cm->srq = NULL;
	}
	return err;
}

/*
 * Destroy the SRQ and free its buffers, unless a connection's QP is still
 * attached: then it is kept (for the next open, or cleanup once every
 * release has run). Safe to call twice. Returns false when kept.
 */
static bool ipng_cm_srq_close(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;
	int users = atomic_read(&cm->srq_qps);

	if (!cm->srq)
		return true;
	if (users) {
		netdev_warn(ipd->ndev, "%d connection QPs still on the shared receive queue; it is kept\n",
			    users);
		return false;
	}
	ib_destroy_srq(cm->srq);
	cm->srq = NULL;
	ipng_cm_ring_free(ipd, &cm->srq_ring);
	return true;
}

static bool ipng_cm_use_srq(struct ipng_dev *ipd)
{
	return ipng_cm_srq && ipd->ca->attrs.max_srq > 0 &&
	       ipd->ca->attrs.max_srq_sge > 0;
}

/**
 * ipng_cm_open() - accept and make connections
 * @ipd: interface whose UD QP is in RTS (its QPN names the service)
 *
 * Called under RTNL from ndo_open. When connected mode cannot start the
 * interface still works: every peer is sent to over UD.
 *
 * Return: 0.
 */
int ipng_cm_open(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;
	int err = 0;

	if (!cm)
		return 0;
	/* An SRQ kept by a stop that could not close everything is reused. */
	if (ipng_cm_use_srq(ipd) && !cm->srq)
		err = ipng_cm_srq_open(ipd);
	if (!err)
		err = ipng_cm_listen(ipd);
	if (err) {
		netdev_warn(ipd->ndev, "connected mode unavailable (%d): peers are sent to over UD\n",
			    err);
		ipng_cm_srq_close(ipd);
		return 0;
	}
	ib_req_notify_cq(ipd->cm_send_cq, IB_CQ_NEXT_COMP);
	ib_req_notify_cq(ipd->cm_recv_cq, IB_CQ_NEXT_COMP);
	spin_lock_bh(&cm->lock);
	WRITE_ONCE(cm->running, true);
	spin_unlock_bh(&cm->lock);
	set_bit(IPNG_CM_F_OPEN, &cm->flags);
	queue_delayed_work(cm->wq, &cm->reap_work, HZ);
	return 0;
}

/* Whether every connection has left the lists (all released). */
static bool ipng_cm_all_gone(struct ipng_cm *cm)
{
	bool empty;

	spin_lock_bh(&cm->lock);
	empty = list_empty(&cm->tx_list) && list_empty(&cm->rx_list);
	spin_unlock_bh(&cm->lock);
	return empty;
}

/**
 * ipng_cm_stop() - close every connection and stop listening
 * @ipd: interface; called under RTNL from ndo_stop while NAPI still runs
 *	(drains need completions)
 *
 * Steps, in order; a second call (or one after a failed open) does
 * nothing:
 *  1. no new connection: @running off, under the lock the transmit path
 *     and the REQ handler check it under;
 *  2. no new REQ: the listening ID goes (it waits for its handler);
 *  3. REQ handlers already past step 1's check finish;
 *  4. the reaper stops;
 *  5. every connection closes: the close walk, then a flush of the
 *     workqueue, where the releases run, before the lists are looked at;
 *     a connection leaves its list only after its QP is destroyed;
 *  6. the SRQ goes once no QP is attached (else cleanup destroys it).
 */
void ipng_cm_stop(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;
	bool empty = false;
	int i;

	ASSERT_RTNL();
	if (!cm || !test_and_clear_bit(IPNG_CM_F_OPEN, &cm->flags))
		return;
	/* 1 */
	spin_lock_bh(&cm->lock);
	WRITE_ONCE(cm->running, false);
	spin_unlock_bh(&cm->lock);
	/* 2 */
	if (cm->listen) {
		ib_destroy_cm_id(cm->listen);
		cm->listen = NULL;
	}
	/* 3 */
	wait_var_event(&cm->req_busy, !atomic_read(&cm->req_busy));
	/* 4 */
	cancel_delayed_work_sync(&cm->reap_work);
	/* 5: releases queue behind the close walk; repeat until all gone. */
	for (i = 0; i < 100 && !empty; i++) {
		queue_work(cm->wq, &cm->close_work);
		flush_workqueue(cm->wq);
		empty = ipng_cm_all_gone(cm);
	}
	if (!empty)
		netdev_warn(ipd->ndev, "connections still closing after stop\n");
	/* 6 */
	if (ipng_cm_srq_close(ipd))
		ipng_tx_budget_init(&ipd->rc_budget, cm->tx_size);
}

/* Receive buffer geometry from the device's scatter/gather limit. */
static void ipng_cm_geometry(struct ipng_dev *ipd, struct ipng_cm *cm)
{
	const struct ib_device_attr *a = &ipd->ca->attrs;
	int sge = ipng_cm_use_srq(ipd) ? a->max_srq_sge : a->max_recv_sge;

	cm->nfrags = clamp_t(int, sge, 0, IPNG_CM_FRAGS);
	cm->buf_len = min_t(u32, cm->nfrags * PAGE_SIZE, IPNG_CM_BUF_LEN);
	cm->mtu = cm->buf_len > IPNG_HLEN ? cm->buf_len - IPNG_HLEN : 0;
}

static int ipng_cm_create_cqs(struct ipng_dev *ipd, struct ipng_cm *cm)
{
	int max = ipd->ca->attrs.max_cqe;
	struct ib_cq_init_attr attr = {
		.cqe = min(max, (int)cm->tx_size + IPNG_CM_CQ_SPARE),
	};
	int rx_cqe;

	ipd->cm_send_cq = ib_create_cq(ipd->ca, ipng_dev_cq_event, NULL, ipd,
				       &attr);
	if (IS_ERR(ipd->cm_send_cq))
		goto err_send;
	rx_cqe = ipng_cm_use_srq(ipd) ? (int)ipng_recv_queue_size :
					IPNG_CM_OWN_RING_MAX * IPNG_CM_RX_RING;
	attr.cqe = min(max, rx_cqe + IPNG_CM_CQ_SPARE);
	cm->rx_max = ipng_cm_own_ring_max(attr.cqe - IPNG_CM_CQ_SPARE);
	ipd->cm_recv_cq = ib_create_cq(ipd->ca, ipng_dev_cq_event, NULL, ipd,
				       &attr);
	if (IS_ERR(ipd->cm_recv_cq))
		goto err_recv;
	return 0;

err_recv:
	ib_destroy_cq(ipd->cm_send_cq);
	ipd->cm_send_cq = NULL;
	return PTR_ERR(ipd->cm_recv_cq);
err_send:
	return PTR_ERR(ipd->cm_send_cq);
}

/**
 * ipng_cm_init() - prepare connected mode for a new interface
 * @ipd: interface whose PD exists
 *
 * A device without RC or CM support leaves @ipd->cm NULL: the interface
 * stays datagram-only and does not advertise RC in its address.
 *
 * Return: 0 or -ENOMEM.
 */
int ipng_cm_init(struct ipng_dev *ipd)
{
	struct ipng_cm *cm;
	int err;

	if (!rdma_cap_ib_cm(ipd->ca, ipd->port))
		return 0;
	cm = kzalloc(sizeof(*cm), GFP_KERNEL);
	if (!cm)
		return -ENOMEM;
	cm->ipd = ipd;
	ipng_cm_geometry(ipd, cm);
	if (cm->mtu < ipng_ud_mtu(IB_MTU_4096)) {
		kfree(cm);
		return 0;
	}
	cm->tx_size = rounddown_pow_of_two(min_t(u32, ipng_send_queue_size,
						 ipd->ca->attrs.max_qp_wr));
	atomic_set(&cm->queued, 0);
	atomic_set(&cm->srq_qps, 0);
	spin_lock_init(&cm->lock);
	hash_init(cm->peers);
	INIT_LIST_HEAD(&cm->tx_list);
	INIT_LIST_HEAD(&cm->rx_list);
	atomic_set(&cm->req_busy, 0);
	atomic_set(&cm->budget.count, 0);
	INIT_DELAYED_WORK(&cm->reap_work, ipng_cm_reap_work);
	INIT_WORK(&cm->close_work, ipng_cm_close_work);
	INIT_WORK(&cm->flush_work, ipng_cm_flush_work);
	init_waitqueue_head(&cm->drain_wq);

	err = ipng_cm_table_init(cm);
	if (err)
		goto err_free;
	cm->wq = alloc_ordered_workqueue("%s_cm", WQ_MEM_RECLAIM,
					 dev_name(&ipd->ca->dev));
	if (!cm->wq) {
		err = -ENOMEM;
		goto err_hash;
	}
	err = ipng_cm_create_cqs(ipd, cm);
	if (err)
		goto err_wq;
	ipng_tx_budget_init(&ipd->rc_budget, cm->tx_size);
	ipd->cm = cm;
	return 0;

err_wq:
	destroy_workqueue(cm->wq);
err_hash:
	ipng_cm_table_destroy(cm);
err_free:
	kfree(cm);
	return err;
}

/**
 * ipng_cm_cleanup() - free what ipng_cm_init() made
 * @ipd: interface, stopped (ipng_cm_stop() ran, or it never opened)
 *
 * Steps: 1. the workqueue goes after running what is queued, so every
 * release has finished; 2. an SRQ kept by a stop that left connections
 * closing goes, now that none is attached; 3. the CQs; 4. the RCU frees of
 * the last entries run before the table goes. A second call does nothing.
 */
void ipng_cm_cleanup(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;

	if (!cm)
		return;
	/* 1 */
	destroy_workqueue(cm->wq);
	/* 2 */
	if (!ipng_cm_srq_close(ipd))
		netdev_err(ipd->ndev, "shared receive queue leaked: QPs still attached\n");
	/* 3 */
	ipd->cm = NULL;
	ipng_tx_budget_init(&ipd->rc_budget, 0);
	ib_destroy_cq(ipd->cm_recv_cq);
	ib_destroy_cq(ipd->cm_send_cq);
	ipd->cm_recv_cq = NULL;
	ipd->cm_send_cq = NULL;
	/* 4 */
	rcu_barrier();
	WARN_ON_ONCE(!hash_empty(cm->peers));
	ipng_cm_table_destroy(cm);
	kfree(cm);
}

/**
 * ipng_cm_max_mtu() - largest MTU connected mode carries on @ipd
 * @ipd: interface
 *
 * Return: up to IPNG_CM_MTU, or 0 without connected mode.
 */
int ipng_cm_max_mtu(struct ipng_dev *ipd)
{
	return ipd->cm ? ipd->cm->mtu : 0;
}

/* Live connections, or (@queued) the packets queued on outgoing ones. */
static unsigned int ipng_cm_sum(struct ipng_dev *ipd, bool queued)
{
	struct ipng_cm *cm = ipd->cm;
	struct ipng_cm_tx *tx;
	struct ipng_cm_rx *rx;
	unsigned int n = 0;

	if (!cm)
		return 0;
	/* Bounded (see the top of this file), and not under the BH lock. */
	rcu_read_lock();
	list_for_each_entry_rcu(tx, &cm->tx_list, list) {
		if (queued)
			n += skb_queue_len_lockless(&tx->queue);
		else
			n += READ_ONCE(tx->state) < IPNG_CM_CLOSING;
	}
	if (!queued)
		list_for_each_entry_rcu(rx, &cm->rx_list, list)
			n += READ_ONCE(rx->state) < IPNG_CM_CLOSING;
	rcu_read_unlock();
	return n;
}

/**
 * ipng_cm_count() - connections up or being made, both directions
 * @ipd: interface
 *
 * Return: the count (failed markers and closing ones not included).
 */
unsigned int ipng_cm_count(struct ipng_dev *ipd)
{
	return ipng_cm_sum(ipd, false);
}

/**
 * ipng_cm_backlog() - packets waiting for their connection to come up
 * @ipd: interface
 *
 * Return: the sum of the connect queues; any context but hard IRQ.
 */
unsigned int ipng_cm_backlog(struct ipng_dev *ipd)
{
	return ipng_cm_sum(ipd, true);
}

static unsigned int ipng_cm_idle_s(unsigned long since)
{
	return jiffies_to_msecs(jiffies - since) / 1000;
}

/**
 * ipng_cm_dump() - one line per connection for debugfs
 * @ipd: interface
 * @m: seq_file
 *
 * A header line naming the fields comes first, also without connected
 * mode. Only what stays valid while the entry exists is read (the RC QPN
 * is the copy taken when the QP was made, not the QP, which a release may
 * destroy meanwhile); entries are freed after an RCU grace period.
 */
void ipng_cm_dump(struct ipng_dev *ipd, struct seq_file *m)
{
	struct ipng_cm *cm = ipd->cm;
	struct ipng_cm_tx *tx;
	struct ipng_cm_rx *rx;

	seq_puts(m, "# dir qpn gid state rc_qpn mtu idle_s queued age_s\n");
	if (!cm)
		return;
	rcu_read_lock();
	list_for_each_entry_rcu(tx, &cm->tx_list, list)
		seq_printf(m, "tx qpn 0x%06x gid %pI6 state %s rc_qpn 0x%06x mtu %u idle_s %u queued %u age_s %u\n",
			   tx->key.qpn, tx->key.gid.raw,
			   ipng_cm_state_name(READ_ONCE(tx->state)),
			   READ_ONCE(tx->qpn), READ_ONCE(tx->mtu),
			   ipng_cm_idle_s(READ_ONCE(tx->last_used)),
			   skb_queue_len_lockless(&tx->queue),
			   ipng_cm_idle_s(tx->created));
	list_for_each_entry_rcu(rx, &cm->rx_list, list)
		seq_printf(m, "rx qpn 0x%06x gid %pI6 state %s rc_qpn 0x%06x mtu %u idle_s %u queued 0 age_s %u\n",
			   ipng_addr_qpn(rx->addr), rx->addr + IPNG_GID_OFFSET,
			   ipng_cm_state_name(READ_ONCE(rx->state)),
			   rx->qpn, cm->mtu,
			   ipng_cm_idle_s(READ_ONCE(rx->last_rx)),
			   ipng_cm_idle_s(rx->created));
	rcu_read_unlock();
}
