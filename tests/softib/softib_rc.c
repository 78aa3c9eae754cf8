// SPDX-License-Identifier: GPL-2.0
/*
 * softib: reliable connected queue pairs.
 *
 * Owns what makes RC reliable and ordered over a cable that drops: a
 * send becomes a message with a PSN that waits on its QP's send queue
 * until the receiver takes it (acknowledged: the send completes) or
 * refuses it (the send completes with the error a real requester ends
 * with, and the QP goes to the error state, flushing the rest). A
 * receiver takes messages only from its connected peer and only in PSN
 * order. A message that finds no receive posted waits on the QP, as the
 * RNR NAK and retry of a real responder make it wait, unless the
 * sender's RNR retry count is 0: then it fails at once with
 * IB_WC_RNR_RETRY_EXC_ERR, as on hardware. A receive posted later (on
 * the QP or its SRQ) puts the QP on its port's retry list; the port's
 * receive work delivers the waiting messages before any new packet.
 *
 * Not modelled: segmentation into path-MTU packets, the ACK and RNR
 * timers (a refused message fails at once; one waiting for a receive
 * waits however long it takes), RDMA and atomic operations, APM.
 */
#include "softib.h"

/* The sender's end: complete the send of @psn with @status. */
static void sib_rc_complete(struct sib_qp *qp, u32 psn, enum ib_wc_status status)
{
	struct sib_swqe *e;
	unsigned long irqf;

	spin_lock_irqsave(&qp->lock, irqf);
	if (qp->state == IB_QPS_ERR || !qp->sq_count ||
	    qp->swqe[qp->sq_head].psn != psn) {
		/* flushed already, or reset: nothing waits for it */
		spin_unlock_irqrestore(&qp->lock, irqf);
		return;
	}
	e = &qp->swqe[qp->sq_head];
	qp->sq_head = (qp->sq_head + 1) % qp->sq_size;
	qp->sq_count--;
	/* under the lock, so that completions keep the order of the sends */
	if (status != IB_WC_SUCCESS || e->signaled)
		sib_complete_send(qp, e->wr_id, status,
				  status == IB_WC_SUCCESS ? e->len : 0);
	if (status != IB_WC_SUCCESS) {
		/* the sends behind it are flushed, not failed again */
		qp->state = IB_QPS_ERR;
		sib_flush_sq(qp);
	}
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (status != IB_WC_SUCCESS)
		sib_qp_error_flush(qp, false);
}

/**
 * sib_flush_sq() - complete a QP's unacknowledged sends with flush errors
 * @qp: the QP, just moved to the error state, its lock held
 */
void sib_flush_sq(struct sib_qp *qp)
{
	struct sib_swqe *e;

	lockdep_assert_held(&qp->lock);
	while (qp->sq_count) {
		e = &qp->swqe[qp->sq_head];
		sib_complete_send(qp, e->wr_id, IB_WC_WR_FLUSH_ERR, 0);
		qp->sq_head = (qp->sq_head + 1) % qp->sq_size;
		qp->sq_count--;
	}
}

/**
 * sib_sq_discard() - forget a QP's unacknowledged sends, without completions
 * @qp: the QP, back in RESET or being destroyed
 */
void sib_sq_discard(struct sib_qp *qp)
{
	unsigned long irqf;

	spin_lock_irqsave(&qp->lock, irqf);
	qp->sq_head = 0;
	qp->sq_count = 0;
	spin_unlock_irqrestore(&qp->lock, irqf);
}

/**
 * sib_rc_answer() - tell the sender of an RC message how it ended
 * @pkt: the message (not freed)
 * @status: IB_WC_SUCCESS (acknowledged) or the sender's error status
 *
 * An answer for a sender since destroyed, flushed or reset is ignored.
 */
void sib_rc_answer(struct sib_pkt *pkt, enum ib_wc_status status)
{
	struct sib_qp *qp = sib_qp_lookup(pkt->from, pkt->src_qpn);

	if (!qp)
		return;
	if (qp->serial == pkt->src_serial)
		sib_rc_complete(qp, pkt->psn, status);
	sib_qp_put(qp);
}

/**
 * sib_rc_send() - post one send work request on an RC QP
 * @qp: the QP
 * @wr: the work request
 *
 * Return: 0, or a negative errno (nothing posted).
 */
int sib_rc_send(struct sib_qp *qp, const struct ib_send_wr *wr)
{
	struct sib_port *port = qp->port;
	struct sib_pkt *pkt;
	struct sib_swqe *e;
	unsigned long irqf;
	u16 pkey_index;
	int err;

	if (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM)
		return -EINVAL;
	if (wr->num_sge > qp->sq_max_sge)
		return -EINVAL;
	err = sib_gather(wr, SIB_MAX_MSG, &pkt);
	if (err)
		return err;

	spin_lock_irqsave(&qp->lock, irqf);
	if (qp->state == IB_QPS_ERR) {
		sib_complete_send(qp, wr->wr_id, IB_WC_WR_FLUSH_ERR, 0);
		spin_unlock_irqrestore(&qp->lock, irqf);
		sib_pkt_free(pkt);
		return 0;
	}
	if (qp->state != IB_QPS_RTS || qp->sq_count == qp->sq_size) {
		err = qp->state != IB_QPS_RTS ? -EINVAL : -ENOMEM;
		spin_unlock_irqrestore(&qp->lock, irqf);
		sib_pkt_free(pkt);
		return err;
	}
	e = &qp->swqe[(qp->sq_head + qp->sq_count) % qp->sq_size];
	e->wr_id = wr->wr_id;
	e->psn = qp->sq_psn;
	e->len = pkt->len;
	e->signaled = qp->sq_sig_all || (wr->send_flags & IB_SEND_SIGNALED);
	qp->sq_count++;
	pkt->psn = qp->sq_psn;
	qp->sq_psn = (qp->sq_psn + 1) & SIB_PSN_MASK;
	pkt->dst_qpn = qp->dest_qpn;
	pkt->dlid = qp->dlid;
	pkt->sl = qp->sl;
	pkt->rnr_retry = qp->rnr_retry;
	pkey_index = qp->pkey_index;
	spin_unlock_irqrestore(&qp->lock, irqf);

	pkt->rc = true;
	pkt->src_qpn = qp->ibqp.qp_num;
	pkt->src_serial = qp->serial;
	pkt->from = port;
	pkt->opcode = IB_WC_RECV;
	pkt->has_imm = wr->opcode == IB_WR_SEND_WITH_IMM;
	pkt->imm = wr->ex.imm_data;
	pkt->solicited = wr->send_flags & IB_SEND_SOLICITED;
	pkt->pkey = sib_pkey_at(port, pkey_index);
	spin_lock_irqsave(&port->lock, irqf);
	pkt->slid = port->a.lid;
	spin_unlock_irqrestore(&port->lock, irqf);
	sib_route(port, pkt);
	return 0;
}

/* Put a message into a receive, complete both ends; @pkt is freed. */
static void sib_rc_place(struct sib_port *port, struct sib_qp *qp,
			 struct sib_pkt *pkt, const struct sib_rwqe *wqe)
{
	struct ib_wc wc = {
		.wr_id = wqe->wr_id,
		.qp = &qp->ibqp,
		.opcode = IB_WC_RECV,
		.port_num = 1,
	};

	if (sib_rwqe_len(wqe) < pkt->len) {
		/* the responder's error: both ends end in the error state */
		wc.status = IB_WC_LOC_LEN_ERR;
		sib_cq_add(to_scq(qp->ibqp.recv_cq), &wc, false);
		sib_count(port, SIB_DROP_LEN);
		sib_rc_answer(pkt, IB_WC_REM_INV_REQ_ERR);
		sib_pkt_free(pkt);
		sib_qp_to_error(qp, false);
		return;
	}
	sib_pkt_scatter(pkt, wqe, 0);
	wc.status = IB_WC_SUCCESS;
	wc.byte_len = pkt->len;
	wc.src_qp = pkt->src_qpn;
	wc.slid = pkt->slid;
	wc.sl = pkt->sl;
	if (pkt->has_imm) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = pkt->imm;
	}
	sib_count(port, SIB_RX);
	sib_count(port, SIB_RC_ACK);
	sib_cq_add(to_scq(qp->ibqp.recv_cq), &wc, pkt->solicited);
	sib_rc_answer(pkt, IB_WC_SUCCESS);
	sib_pkt_free(pkt);
}

/* Whether the QP takes this message now; its lock held. */
static enum sib_count sib_rc_check(struct sib_port *port, struct sib_qp *qp,
				   const struct sib_pkt *pkt)
{
	lockdep_assert_held(&qp->lock);
	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS)
		return SIB_DROP_NOQP;
	if (pkt->src_qpn != qp->dest_qpn)
		return SIB_DROP_NOQP;
	if (!sib_pkey_match(sib_pkey_at(port, qp->pkey_index), pkt->pkey))
		return SIB_DROP_PKEY;
	if (pkt->psn != qp->rq_psn)
		return SIB_DROP_SEQ;
	return SIB_RX;
}

static void sib_qp_event(struct sib_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * sib_rc_deliver() - a message reached an RC QP
 * @port: the QP's port
 * @qp: the QP (held by the caller)
 * @pkt: the message, given away
 *
 * Called from the port's receive work only, so messages to one QP are
 * handled one at a time and in the order they arrived.
 */
void sib_rc_deliver(struct sib_port *port, struct sib_qp *qp,
		    struct sib_pkt *pkt)
{
	enum sib_count why;
	struct sib_rwqe wqe;
	unsigned long irqf;
	bool est = false;
	int err = 0;

	if (qp->ibqp.qp_type != IB_QPT_RC) {
		sib_drop(port, pkt, SIB_DROP_NOQP);
		return;
	}
	spin_lock_irqsave(&qp->lock, irqf);
	why = sib_rc_check(port, qp, pkt);
	if (why != SIB_RX) {
		spin_unlock_irqrestore(&qp->lock, irqf);
		sib_drop(port, pkt, why);
		return;
	}
	if (qp->state == IB_QPS_RTR && !qp->comm_est) {
		qp->comm_est = true;
		est = true;
	}
	/* behind messages already waiting, or with no receive: wait too */
	if (list_empty(&qp->held))
		err = sib_recv_take(qp, &wqe);
	if (!list_empty(&qp->held) || (err && pkt->rnr_retry)) {
		list_add_tail(&pkt->list, &qp->held);
		qp->rq_psn = (qp->rq_psn + 1) & SIB_PSN_MASK;
		spin_unlock_irqrestore(&qp->lock, irqf);
		sib_count(port, SIB_RC_HELD);
		goto out;
	}
	if (!err)
		qp->rq_psn = (qp->rq_psn + 1) & SIB_PSN_MASK;
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (err) {
		/* no receive and no RNR retries: the sender fails */
		sib_count(port, SIB_DROP_RNR);
		sib_rc_answer(pkt, IB_WC_RNR_RETRY_EXC_ERR);
		sib_pkt_free(pkt);
		goto out;
	}
	sib_rc_place(port, qp, pkt, &wqe);
out:
	if (est)
		sib_qp_event(qp, IB_EVENT_COMM_EST);
}

/* Deliver a QP's waiting messages while receives last. */
static void sib_rc_drain(struct sib_port *port, struct sib_qp *qp)
{
	struct sib_rwqe wqe;
	struct sib_pkt *pkt;
	unsigned long irqf;

	for (;;) {
		spin_lock_irqsave(&qp->lock, irqf);
		pkt = list_first_entry_or_null(&qp->held, struct sib_pkt, list);
		if (!pkt || sib_recv_take(qp, &wqe)) {
			spin_unlock_irqrestore(&qp->lock, irqf);
			return;
		}
		list_del_init(&pkt->list);
		spin_unlock_irqrestore(&qp->lock, irqf);
		sib_rc_place(port, qp, pkt, &wqe);
		cond_resched();
	}
}

/**
 * sib_rc_kick() - a receive was posted for a QP that waited for one
 * @qp: the QP
 *
 * Callable in any context: the port's receive work does the delivery.
 */
void sib_rc_kick(struct sib_qp *qp)
{
	struct sib_port *port = qp->port;
	unsigned long irqf;
	bool queued = false;

	spin_lock_irqsave(&port->rx_lock, irqf);
	if (list_empty(&qp->retry_node) && refcount_inc_not_zero(&qp->ref)) {
		list_add_tail(&qp->retry_node, &port->retry);
		queued = true;
	}
	spin_unlock_irqrestore(&port->rx_lock, irqf);
	if (queued)
		queue_work(system_highpri_wq, &port->rx_work);
}

/**
 * sib_rc_retry() - deliver the waiting messages of the kicked QPs
 * @port: the port, from its receive work
 */
void sib_rc_retry(struct sib_port *port)
{
	unsigned long irqf;
	struct sib_qp *qp;

	for (;;) {
		spin_lock_irqsave(&port->rx_lock, irqf);
		qp = list_first_entry_or_null(&port->retry, struct sib_qp,
					      retry_node);
		if (qp)
			list_del_init(&qp->retry_node);
		spin_unlock_irqrestore(&port->rx_lock, irqf);
		if (!qp)
			return;
		sib_rc_drain(port, qp);
		sib_qp_put(qp);
	}
}

/**
 * sib_rc_flush_held() - fail the messages a QP holds (error, reset, destroy)
 * @qp: the QP
 *
 * Their senders see the retry error that a responder gone silent gives.
 */
void sib_rc_flush_held(struct sib_qp *qp)
{
	struct sib_pkt *pkt, *next;
	unsigned long irqf;
	LIST_HEAD(held);

	if (qp->ibqp.qp_type != IB_QPT_RC)
		return;
	spin_lock_irqsave(&qp->lock, irqf);
	list_splice_init(&qp->held, &held);
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (qp->srq)
		sib_srq_forget(qp->srq, qp);
	list_for_each_entry_safe(pkt, next, &held, list) {
		list_del(&pkt->list);
		sib_count(qp->port, SIB_DROP_NOQP);
		sib_rc_answer(pkt, IB_WC_RETRY_EXC_ERR);
		sib_pkt_free(pkt);
	}
}
