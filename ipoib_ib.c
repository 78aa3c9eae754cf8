// SPDX-License-Identifier: GPL-2.0
/*
 * Verbs resources of an interface: protection domain, completion queues and
 * the UD queue pair, and the QP state changes done on open and stop.
 */
#include <linux/minmax.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"

static void ipng_qp_event(struct ib_event *event, void *context)
{
	struct ipng_dev *ipd = context;

	netdev_err(ipd->ndev, "UD QP %u: async event %s (%d)\n",
		   event->element.qp->qp_num, ib_event_msg(event->event),
		   event->event);
}

static int ipng_create_cqs(struct ipng_dev *ipd, u32 send_wr, u32 recv_wr)
{
	ipd->send_cq = ib_alloc_cq(ipd->ca, ipd, send_wr, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(ipd->send_cq))
		goto err_send;
	ipd->recv_cq = ib_alloc_cq(ipd->ca, ipd, recv_wr, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(ipd->recv_cq))
		goto err_recv;
	return 0;

err_recv:
	ib_free_cq(ipd->send_cq);
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
	return 0;

err_cqs:
	ib_free_cq(ipd->recv_cq);
	ib_free_cq(ipd->send_cq);
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
	if (ipd->qp) {
		ib_destroy_qp(ipd->qp);
		ipd->qp = NULL;
	}
	if (ipd->recv_cq) {
		ib_free_cq(ipd->recv_cq);
		ipd->recv_cq = NULL;
	}
	if (ipd->send_cq) {
		ib_free_cq(ipd->send_cq);
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
		ipng_qp_reset(ipd);
	}
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
}

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
