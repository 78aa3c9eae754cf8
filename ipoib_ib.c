// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs resources of an interface: protection domain, completion queues and
 * the UD queue pair, and the QP state changes done on open and stop.
 */
#include <linux/minmax.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>
#include <kunit/visibility.h>

#include "ipoib.h"

static void ipng_qp_event(struct ib_event *event, void *context)
{
	struct ipng_dev *ipd = context;

	netdev_err(ipd->ndev, "UD QP %u: async event %s (%d)\n",
		   event->element.qp->qp_num, ib_event_msg(event->event),
		   event->event);
}

/*
 * Both CQs interrupt into the same NAPI context; completions are dispatched
 * by their struct ib_cqe (ipoib_ud.c).
 */
static int ipng_create_cqs(struct ipng_dev *ipd, u32 send_wr, u32 recv_wr)
{
	struct ib_cq_init_attr attr = { .cqe = send_wr };

	ipd->send_cq = ib_create_cq(ipd->ca, ipng_ud_cq_event, NULL, ipd,
				    &attr);
	if (IS_ERR(ipd->send_cq))
		goto err_send;
	attr.cqe = recv_wr;
	ipd->recv_cq = ib_create_cq(ipd->ca, ipng_ud_cq_event, NULL, ipd,
				    &attr);
	if (IS_ERR(ipd->recv_cq))
		goto err_recv;
	return 0;

err_recv:
	ib_destroy_cq(ipd->send_cq);
	ipd->send_cq = NULL;
	return PTR_ERR(ipd->recv_cq);
err_send:
	return PTR_ERR(ipd->send_cq);
}

static int ipng_create_qp(struct ipng_dev *ipd, u32 send_wr, u32 recv_wr)
{
	struct ib_qp_init_attr init = {
		.event_handler	= ipng_qp_event,
		.qp_context	= ipd,
		.send_cq	= ipd->send_cq,
		.recv_cq	= ipd->recv_cq,
		.cap = {
			.max_send_wr	= send_wr,
			.max_recv_wr	= recv_wr,
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
	ipd->qp = qp;
	return 0;
}

/**
 * ipng_ib_init() - create the verbs objects of an interface
 * @ipd: interface, with @ca and @port set
 *
 * Ring sizes come from the module parameters, capped by what the device
 * supports. The QP stays in RESET until ipng_ib_open().
 *
 * Return: 0 or a negative errno; nothing is left allocated on error.
 */
int ipng_ib_init(struct ipng_dev *ipd)
{
	u32 max_wr = ipd->ca->attrs.max_qp_wr;
	u32 send_wr = min_t(u32, ipng_send_queue_size, max_wr);
	u32 recv_wr = min_t(u32, ipng_recv_queue_size, max_wr);
	int err;

	ipd->pd = ib_alloc_pd(ipd->ca, 0);
	if (IS_ERR(ipd->pd)) {
		err = PTR_ERR(ipd->pd);
		goto err_out;
	}
	err = ipng_create_cqs(ipd, send_wr, recv_wr);
	if (err)
		goto err_pd;
	err = ipng_create_qp(ipd, send_wr, recv_wr);
	if (err)
		goto err_cqs;
	err = ipng_ud_init(ipd, rounddown_pow_of_two(send_wr),
			   rounddown_pow_of_two(recv_wr));
	if (err)
		goto err_qp;
	return 0;

err_qp:
	ib_destroy_qp(ipd->qp);
	ipd->qp = NULL;
err_cqs:
	ib_destroy_cq(ipd->recv_cq);
	ib_destroy_cq(ipd->send_cq);
	ipd->recv_cq = NULL;
	ipd->send_cq = NULL;
err_pd:
	ib_dealloc_pd(ipd->pd);
err_out:
	ipd->pd = NULL;
	dev_err(&ipd->ca->dev, "%s: port %u: cannot create verbs resources: %d\n",
		DRV_NAME, ipd->port, err);
	return err;
}

/**
 * ipng_ib_cleanup() - destroy what ipng_ib_init() created
 * @ipd: interface
 *
 * Safe to call twice and after a failed ipng_ib_init().
 */
void ipng_ib_cleanup(struct ipng_dev *ipd)
{
	ipng_ud_cleanup(ipd);
	/* No address handle may outlive the PD. */
	ipng_ah_flush();
	if (ipd->qp) {
		ib_destroy_qp(ipd->qp);
		ipd->qp = NULL;
	}
	if (ipd->recv_cq) {
		ib_destroy_cq(ipd->recv_cq);
		ipd->recv_cq = NULL;
	}
	if (ipd->send_cq) {
		ib_destroy_cq(ipd->send_cq);
		ipd->send_cq = NULL;
	}
	if (ipd->pd) {
		ib_dealloc_pd(ipd->pd);
		ipd->pd = NULL;
	}
}

static int ipng_qp_to_rts(struct ipng_dev *ipd)
{
	struct ib_qp_attr attr = {
		.qp_state	= IB_QPS_INIT,
		.pkey_index	= ipd->pkey_index,
		.port_num	= ipd->port,
		.qkey		= ipd->qkey,
	};
	int err;

	err = ib_modify_qp(ipd->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(ipd->qp, &attr, IB_QP_STATE);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	return ib_modify_qp(ipd->qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

static void ipng_qp_reset(struct ipng_dev *ipd)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

	if (ib_modify_qp(ipd->qp, &attr, IB_QP_STATE))
		netdev_warn(ipd->ndev, "cannot reset UD QP %u\n",
			    ipd->qp->qp_num);
}

/**
 * ipng_ib_open() - make the UD QP ready to send and receive
 * @ipd: interface; called under RTNL from ndo_open
 *
 * Looks the interface P_Key up in the port's table (it may have moved since
 * the last open) and walks the QP through INIT, RTR and RTS.
 *
 * Return: 0, -ENOENT when the P_Key is no longer in the table, or the verbs
 * error; the QP is back in RESET on failure.
 */
int ipng_ib_open(struct ipng_dev *ipd)
{
	u16 index;
	int err;

	ASSERT_RTNL();
	err = ib_find_pkey(ipd->ca, ipd->port, ipd->pkey, &index);
	if (err) {
		netdev_err(ipd->ndev, "P_Key 0x%04x not in the table of port %u\n",
			   ipd->pkey, ipd->port);
		return -ENOENT;
	}
	ipd->pkey_index = index;
	err = ipng_qp_to_rts(ipd);
	if (err) {
		netdev_err(ipd->ndev, "cannot bring UD QP %u to RTS: %d\n",
			   ipd->qp->qp_num, err);
		goto err_reset;
	}
	err = ipng_ud_start(ipd);
	if (err)
		goto err_reset;
	return 0;

err_reset:
	/* Nothing is posted when ipng_ud_start() fails. */
	ipng_qp_reset(ipd);
	return err;
}

/**
 * ipng_ib_stop() - return the UD QP to RESET
 * @ipd: interface; called under RTNL from ndo_stop
 */
void ipng_ib_stop(struct ipng_dev *ipd)
{
	ASSERT_RTNL();
	ipng_qp_reset(ipd);
	ipng_ud_stop(ipd);
}

/**
 * ipng_ib_set_qkey() - take the Q_Key the broadcast group uses
 * @ipd: interface; process context without RTNL
 * @qkey: the group's Q_Key
 *
 * Return: 0 or the verbs error of updating the QP in RTS.
 */
int ipng_ib_set_qkey(struct ipng_dev *ipd, u32 qkey)
{
	struct ib_qp_attr attr = { .qkey = qkey };
	int err = 0;

	rtnl_lock();
	if (test_bit(IPNG_F_OPEN, &ipd->flags))
		err = ib_modify_qp(ipd->qp, &attr, IB_QP_QKEY);
	if (!err)
		WRITE_ONCE(ipd->qkey, qkey);
	rtnl_unlock();
	if (err)
		netdev_warn(ipd->ndev, "cannot set Q_Key 0x%08x: %d\n", qkey,
			    err);
	return err;
}

static void ipng_ah_free_work(struct work_struct *work)
{
	struct ipng_ah *ah = container_of(work, struct ipng_ah, free_work);

	rdma_destroy_ah(ah->ah, RDMA_DESTROY_AH_SLEEPABLE);
	kfree(ah);
}

/**
 * ipng_ah_create() - create a reference-counted address handle
 * @ipd: interface (its PD)
 * @attr: address vector
 *
 * May sleep (RoCE resolves the destination MAC).
 *
 * Return: the handle with one reference, or an ERR_PTR.
 */
struct ipng_ah *ipng_ah_create(struct ipng_dev *ipd, struct rdma_ah_attr *attr)
{
	struct ipng_ah *ah;
	struct ib_ah *ib_ah;

	ah = kzalloc(sizeof(*ah), GFP_KERNEL);
	if (!ah)
		return ERR_PTR(-ENOMEM);
	ib_ah = rdma_create_ah(ipd->pd, attr, RDMA_CREATE_AH_SLEEPABLE);
	if (IS_ERR(ib_ah)) {
		kfree(ah);
		return ERR_CAST(ib_ah);
	}
	ah->ah = ib_ah;
	ah->type = attr->type;
	if (attr->type == RDMA_AH_ATTR_TYPE_ROCE)
		memcpy(ah->dmac, attr->roce.dmac, ETH_ALEN);
	ah->dlid = rdma_ah_get_dlid(attr);
	ah->sl = rdma_ah_get_sl(attr);
	kref_init(&ah->ref);
	INIT_WORK(&ah->free_work, ipng_ah_free_work);
	return ah;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_ah_create);

/*
 * The last reference may be dropped in NAPI or in an RCU callback, and
 * some drivers (rxe) cannot destroy an address handle in softirq context:
 * destruction goes to ipng_ah_wq, which ipng_ah_flush() waits for.
 */
static void ipng_ah_release(struct kref *ref)
{
	struct ipng_ah *ah = container_of(ref, struct ipng_ah, ref);

	queue_work(ipng_ah_wq, &ah->free_work);
}

/**
 * ipng_ah_flush() - wait until released address handles are destroyed
 *
 * Includes those released by paths freed after an RCU grace period.
 */
void ipng_ah_flush(void)
{
	rcu_barrier();
	flush_workqueue(ipng_ah_wq);
}

/**
 * ipng_ah_put() - drop a reference; any context
 * @ah: address handle
 */
void ipng_ah_put(struct ipng_ah *ah)
{
	kref_put(&ah->ref, ipng_ah_release);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_ah_put);

/**
 * ipng_ib_query_port() - read the port attributes of an interface
 * @ipd: interface
 * @attr: result
 *
 * Return: 0 or the error of ib_query_port().
 */
int ipng_ib_query_port(struct ipng_dev *ipd, struct ib_port_attr *attr)
{
	return ib_query_port(ipd->ca, ipd->port, attr);
}
