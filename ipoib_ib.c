// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs resources of an interface: the protection domain, the UD QP state
 * changes done on open and stop (the QPs and CQs belong to the channels,
 * ipoib_chan.c), the Q_Key and reference-counted address handles.
 */
#include <linux/minmax.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>
#include <kunit/visibility.h>

#include "ipoib.h"

/**
 * ipng_ib_init() - create the verbs objects of an interface
 * @ipd: interface, with @ca and @port set
 *
 * The protection domain and the channels (ipoib_chan.c), whose QPs stay
 * in RESET until ipng_ib_open().
 *
 * Return: 0 or a negative errno; nothing is left allocated on error.
 */
int ipng_ib_init(struct ipng_dev *ipd)
{
	int err;

	ipd->pd = ib_alloc_pd(ipd->ca, 0);
	if (IS_ERR(ipd->pd)) {
		err = PTR_ERR(ipd->pd);
		goto err_out;
	}
	err = ipng_chans_init(ipd);
	if (err)
		goto err_pd;
	return 0;

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
	ipng_chans_cleanup(ipd);
	/* No address handle may outlive the PD. */
	ipng_ah_flush();
	if (ipd->pd) {
		ib_dealloc_pd(ipd->pd);
		ipd->pd = NULL;
	}
}

/**
 * ipng_ib_qp_to_rts() - walk a UD QP of the interface to RTS
 * @ipd: interface (P_Key index, Q_Key, port)
 * @qp: a channel's QP, in RESET
 *
 * Return: 0 or the verbs error.
 */
int ipng_ib_qp_to_rts(struct ipng_dev *ipd, struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state	= IB_QPS_INIT,
		.pkey_index	= READ_ONCE(ipd->pkey_index),
		.port_num	= ipd->port,
		.qkey		= ipd->qkey,
	};
	int err;

	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		goto err;
	attr.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE);
	if (err)
		goto err;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
	if (err)
		goto err;
	return 0;

err:
	netdev_err(ipd->ndev, "cannot bring UD QP %u to RTS: %d\n",
		   qp->qp_num, err);
	return err;
}

static void ipng_ib_qp_move(struct ipng_dev *ipd, struct ib_qp *qp,
			    enum ib_qp_state state)
{
	struct ib_qp_attr attr = { .qp_state = state };

	if (ib_modify_qp(qp, &attr, IB_QP_STATE))
		netdev_warn(ipd->ndev, "cannot move UD QP %u to %s\n",
			    qp->qp_num, state == IB_QPS_ERR ? "ERROR" : "RESET");
}

/**
 * ipng_ib_qp_error() - stop a UD QP of the interface from taking datagrams
 * @ipd: interface
 * @qp: a channel's QP
 *
 * In ERROR the QP drops what arrives; what was posted may complete with
 * IB_WC_WR_FLUSH_ERR.
 */
void ipng_ib_qp_error(struct ipng_dev *ipd, struct ib_qp *qp)
{
	ipng_ib_qp_move(ipd, qp, IB_QPS_ERR);
}

/**
 * ipng_ib_qp_reset() - return a UD QP of the interface to RESET
 * @ipd: interface
 * @qp: a channel's QP
 *
 * Its posted work requests are dropped without completions.
 */
void ipng_ib_qp_reset(struct ipng_dev *ipd, struct ib_qp *qp)
{
	ipng_ib_qp_move(ipd, qp, IB_QPS_RESET);
}

/**
 * ipng_ib_find_pkey() - where the interface's P_Key sits in the port's table
 * @ipd: interface
 * @index: on success, its index
 *
 * The subnet manager moves P_Keys to other indexes, takes them away and
 * puts them back (PKEY_CHANGE); ib_core's cache is up to date by the time
 * the event reaches us. A limited-membership entry matches when there is
 * no full one.
 *
 * Return: 0, or -ENOENT when the P_Key is not in the table.
 */
int ipng_ib_find_pkey(struct ipng_dev *ipd, u16 *index)
{
	return ib_find_pkey(ipd->ca, ipd->port, ipd->pkey, index) ? -ENOENT : 0;
}

/**
 * ipng_ib_open() - make the UD QP ready to send and receive
 * @ipd: interface; called under RTNL from ndo_open
 *
 * Starts the channels, whose QPs go through INIT, RTR and RTS with the
 * index the interface's P_Key has now. An interface whose P_Key is not in
 * the port's table opens all the same, with its channels halted and
 * carrier off, as the kernel's IPoIB does: the port event that brings the
 * P_Key starts them (ipng_chans_follow_pkey()).
 *
 * Return: 0, or the verbs error; the QP is back in RESET on failure.
 */
int ipng_ib_open(struct ipng_dev *ipd)
{
	int err;

	ASSERT_RTNL();
	err = ipng_chans_open(ipd);
	if (err != -ENOENT)
		return err;
	netdev_info(ipd->ndev, "P_Key 0x%04x not in the table of port %u: carrier off until it is\n",
		    ipd->pkey, ipd->port);
	netif_carrier_off(ipd->ndev);
	return 0;
}

/**
 * ipng_ib_stop() - return the UD QPs to RESET, free their buffers
 * @ipd: interface; called under RTNL from ndo_stop
 */
void ipng_ib_stop(struct ipng_dev *ipd)
{
	ipng_chans_stop(ipd);
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
	/* Halted channels take the Q_Key when they start again. */
	if (test_bit(IPNG_F_RUNNING, &ipd->flags))
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
