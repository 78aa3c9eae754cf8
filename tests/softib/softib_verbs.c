// SPDX-License-Identifier: GPL-2.0
/*
 * softib: the verbs objects.
 *
 * Owns protection domains, the DMA memory region (addresses are kernel
 * virtual: the device has no DMA device, so ib_dma_map_* returns the
 * buffer's own address), address handles, completion queues and their
 * notification, shared receive queues, receive queues and posting to
 * them, and queue pairs: creation (QP0 and QP1 of the port, other
 * numbers from the device's table), the state machine, flush on error,
 * lookup by number for the wire and destruction that waits for every
 * packet still holding the QP.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include "softib.h"

static int sib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return udata ? -EOPNOTSUPP : 0;
}

static int sib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

static struct ib_mr *sib_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sib_mr *mr;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/* one key for all of kernel memory: the wire does not check keys */
	mr->ibmr.lkey = 1;
	mr->ibmr.rkey = 1;
	return &mr->ibmr;
}

static struct ib_mr *sib_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 len,
				     u64 virt, int access,
				     struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int sib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	kfree(container_of(ibmr, struct sib_mr, ibmr));
	return 0;
}

static int sib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			 struct ib_udata *udata)
{
	struct rdma_ah_attr *attr = init->ah_attr;
	struct sib_ah *ah = to_sah(ibah);

	if (attr->type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	ah->dlid = rdma_ah_get_dlid(attr);
	ah->sl = rdma_ah_get_sl(attr);
	ah->path_bits = rdma_ah_get_path_bits(attr);
	ah->has_grh = rdma_ah_get_ah_flags(attr) & IB_AH_GRH;
	if (ah->has_grh) {
		const struct ib_global_route *g = rdma_ah_read_grh(attr);

		ah->dgid = g->dgid;
		ah->sgid_index = g->sgid_index;
		ah->flow_label = g->flow_label;
		ah->hop_limit = g->hop_limit;
		ah->tclass = g->traffic_class;
	}
	return 0;
}

/*
 * The MAD layer matches a response to its request by comparing the
 * request's address (read back here) with the response's source.
 */
static int sib_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct sib_ah *ah = to_sah(ibah);

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_dlid(attr, ah->dlid);
	rdma_ah_set_sl(attr, ah->sl);
	rdma_ah_set_path_bits(attr, ah->path_bits);
	if (ah->has_grh)
		rdma_ah_set_grh(attr, &ah->dgid, ah->flow_label, ah->sgid_index,
				ah->hop_limit, ah->tclass);
	return 0;
}

static int sib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return 0;
}

/* CQ ------------------------------------------------------------------ */

static void sib_cq_notify_work(struct work_struct *work)
{
	struct sib_cq *cq = container_of(work, struct sib_cq, notify_work);

	/* as a completion interrupt would: handlers may raise softirqs */
	local_bh_disable();
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	local_bh_enable();
}

/* Kernel users pass no user data, whatever its type on this kernel. */
#ifdef IPNG_HAVE_CREATE_CQ_ATTRS
static int sib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			 struct uverbs_attr_bundle *udata)
#else
static int sib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			 struct ib_udata *udata)
#endif
{
	struct sib_cq *cq = to_scq(ibcq);

	if (udata)
		return -EOPNOTSUPP;
	if (attr->flags || attr->cqe < 1 || attr->cqe >= SIB_MAX_CQE)
		return -EINVAL;
	cq->size = attr->cqe + 1;
	cq->wc = kvcalloc(cq->size, sizeof(*cq->wc), GFP_KERNEL);
	if (!cq->wc)
		return -ENOMEM;
	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->notify_work, sib_cq_notify_work);
	ibcq->cqe = attr->cqe;
	return 0;
}

static int sib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sib_cq *cq = to_scq(ibcq);

	cancel_work_sync(&cq->notify_work);
	kvfree(cq->wc);
	return 0;
}

/**
 * sib_cq_add() - add a work completion and notify the consumer if armed
 * @cq: the completion queue
 * @wc: the completion
 * @solicited: the completion is solicited (a send with IB_SEND_SOLICITED)
 *
 * Callable in any context. A full ring loses the completion and says so
 * once per CQ (the consumer sized its CQ too small: its bug, not a crash).
 */
void sib_cq_add(struct sib_cq *cq, const struct ib_wc *wc, bool solicited)
{
	unsigned long irqf;
	bool notify = false;

	spin_lock_irqsave(&cq->lock, irqf);
	if (cq->count == cq->size) {
		if (!cq->overflowed)
			pr_err("softib: CQ %p overflowed: completion lost\n", cq);
		cq->overflowed = true;
	} else {
		cq->wc[(cq->head + cq->count) % cq->size] = *wc;
		cq->count++;
	}
	if (cq->armed == IB_CQ_NEXT_COMP ||
	    (cq->armed == IB_CQ_SOLICITED && solicited)) {
		cq->armed = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, irqf);
	if (notify)
		queue_work(system_highpri_wq, &cq->notify_work);
}

static int sib_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct sib_cq *cq = to_scq(ibcq);
	unsigned long irqf;
	int i;

	spin_lock_irqsave(&cq->lock, irqf);
	for (i = 0; i < n && cq->count; i++) {
		wc[i] = cq->wc[cq->head];
		cq->head = (cq->head + 1) % cq->size;
		cq->count--;
	}
	spin_unlock_irqrestore(&cq->lock, irqf);
	return i;
}

static int sib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sib_cq *cq = to_scq(ibcq);
	unsigned long irqf;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqf);
	cq->armed = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->count)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqf);
	return ret;
}

/* Receive queues ------------------------------------------------------ */

static int sib_rq_init(struct sib_rq *rq, u32 size, u32 max_sge)
{
	if (!size || size > SIB_MAX_WR || max_sge > SIB_MAX_SGE)
		return -EINVAL;
	rq->wqe = kvcalloc(size, sizeof(*rq->wqe), GFP_KERNEL);
	if (!rq->wqe)
		return -ENOMEM;
	spin_lock_init(&rq->lock);
	rq->size = size;
	rq->max_sge = max_sge ? max_sge : 1;
	return 0;
}

static int __sib_rq_pop(struct sib_rq *rq, struct sib_rwqe *wqe)
{
	lockdep_assert_held(&rq->lock);
	if (!rq->count)
		return -ENOENT;
	*wqe = rq->wqe[rq->head];
	rq->head = (rq->head + 1) % rq->size;
	return --rq->count;
}

/**
 * sib_rq_pop() - take the oldest posted receive
 * @rq: the receive queue
 * @wqe: where to copy it
 *
 * Return: the receives left on @rq, or -ENOENT if there was none.
 */
int sib_rq_pop(struct sib_rq *rq, struct sib_rwqe *wqe)
{
	unsigned long irqf;
	int left;

	spin_lock_irqsave(&rq->lock, irqf);
	left = __sib_rq_pop(rq, wqe);
	spin_unlock_irqrestore(&rq->lock, irqf);
	return left;
}

/* Post receives; *@kick says an RC QP waited for one (the QP's queue). */
static int sib_rq_post(struct sib_rq *rq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad, bool *kick)
{
	struct sib_rwqe *wqe;
	unsigned long irqf;
	int err = 0;

	spin_lock_irqsave(&rq->lock, irqf);
	*kick = rq->waiting;
	rq->waiting = false;
	for (; wr; wr = wr->next) {
		if (rq->count == rq->size) {
			err = -ENOMEM;
			break;
		}
		if (wr->num_sge > rq->max_sge) {
			err = -EINVAL;
			break;
		}
		wqe = &rq->wqe[(rq->head + rq->count) % rq->size];
		wqe->wr_id = wr->wr_id;
		wqe->nsge = wr->num_sge;
		memcpy(wqe->sge, wr->sg_list, wr->num_sge * sizeof(*wr->sg_list));
		rq->count++;
	}
	spin_unlock_irqrestore(&rq->lock, irqf);
	if (err)
		*bad = wr;
	return err;
}

static void sib_complete_recv(struct sib_qp *qp, u64 wr_id,
			      enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};

	sib_cq_add(to_scq(qp->ibqp.recv_cq), &wc, false);
}

/**
 * sib_flush_rq() - complete every receive posted on a QP's own queue
 * @qp: the QP, in the error state
 */
void sib_flush_rq(struct sib_qp *qp)
{
	struct sib_rwqe wqe;

	if (qp->srq)
		return;
	while (sib_rq_pop(&qp->rq, &wqe) >= 0)
		sib_complete_recv(qp, wqe.wr_id, IB_WC_WR_FLUSH_ERR);
}

/* Back to RESET: posted work is discarded without completions. */
static void sib_qp_reset(struct sib_qp *qp)
{
	unsigned long irqf;

	sib_sq_discard(qp);
	sib_rc_flush_held(qp);
	spin_lock_irqsave(&qp->lock, irqf);
	qp->comm_est = false;
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (qp->srq)
		return;
	spin_lock_irqsave(&qp->rq.lock, irqf);
	qp->rq.head = 0;
	qp->rq.count = 0;
	qp->rq.waiting = false;
	spin_unlock_irqrestore(&qp->rq.lock, irqf);
}

/**
 * sib_qp_state() - a QP's state
 * @qp: the QP
 *
 * Return: its enum ib_qp_state.
 */
u8 sib_qp_state(struct sib_qp *qp)
{
	unsigned long irqf;
	u8 state;

	spin_lock_irqsave(&qp->lock, irqf);
	state = qp->state;
	spin_unlock_irqrestore(&qp->lock, irqf);
	return state;
}

static int sib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad)
{
	struct sib_qp *qp = to_sqp(ibqp);
	u8 state = sib_qp_state(qp);
	bool kick;
	int err;

	if (qp->srq || state == IB_QPS_RESET) {
		*bad = wr;
		return -EINVAL;
	}
	/* in the error state a receive completes at once (ib_drain_rq) */
	if (state == IB_QPS_ERR) {
		for (; wr; wr = wr->next)
			sib_complete_recv(qp, wr->wr_id, IB_WC_WR_FLUSH_ERR);
		return 0;
	}
	err = sib_rq_post(&qp->rq, wr, bad, &kick);
	if (kick)
		sib_rc_kick(qp);
	return err;
}

/* SRQ ----------------------------------------------------------------- */

static int sib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
			  struct ib_udata *udata)
{
	struct sib_srq *srq = to_ssrq(ibsrq);
	int err;

	if (udata)
		return -EOPNOTSUPP;
	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	err = sib_rq_init(&srq->rq, init->attr.max_wr, init->attr.max_sge);
	if (err)
		return err;
	srq->limit = init->attr.srq_limit;
	INIT_LIST_HEAD(&srq->waiters);
	return 0;
}

static int sib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			  enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sib_srq *srq = to_ssrq(ibsrq);
	unsigned long irqf;

	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > srq->rq.size)
			return -EINVAL;
		spin_lock_irqsave(&srq->rq.lock, irqf);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->rq.lock, irqf);
	}
	return 0;
}

static int sib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sib_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = srq->rq.size;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

static int sib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	kvfree(to_ssrq(ibsrq)->rq.wqe);
	return 0;
}

static int sib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			     const struct ib_recv_wr **bad)
{
	struct sib_srq *srq = to_ssrq(ibsrq);
	unsigned long irqf;
	struct sib_qp *qp;
	bool unused;
	int err;

	err = sib_rq_post(&srq->rq, wr, bad, &unused);
	spin_lock_irqsave(&srq->rq.lock, irqf);
	while ((qp = list_first_entry_or_null(&srq->waiters, struct sib_qp,
					      srq_node))) {
		list_del_init(&qp->srq_node);
		sib_rc_kick(qp);
	}
	spin_unlock_irqrestore(&srq->rq.lock, irqf);
	return err;
}

/*
 * Take a receive from an SRQ, raising its limit event; with none posted,
 * @waiter (if any) waits on the SRQ for the next post.
 */
static int sib_srq_get(struct sib_srq *srq, struct sib_rwqe *wqe,
		       struct sib_qp *waiter)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};
	unsigned long irqf;
	bool limit = false;
	int left;

	spin_lock_irqsave(&srq->rq.lock, irqf);
	left = __sib_rq_pop(&srq->rq, wqe);
	if (left < 0 && waiter && list_empty(&waiter->srq_node))
		list_add_tail(&waiter->srq_node, &srq->waiters);
	if (left >= 0 && srq->limit && left < srq->limit) {
		srq->limit = 0;	/* the event disarms the limit */
		limit = true;
	}
	spin_unlock_irqrestore(&srq->rq.lock, irqf);
	if (limit && srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
	return left < 0 ? left : 0;
}

/**
 * sib_srq_pop() - take a receive from an SRQ, raising its limit event
 * @srq: the SRQ
 * @wqe: where to copy the receive
 *
 * Return: 0, or -ENOENT if none was posted.
 */
int sib_srq_pop(struct sib_srq *srq, struct sib_rwqe *wqe)
{
	return sib_srq_get(srq, wqe, NULL);
}

/**
 * sib_srq_forget() - a QP no longer waits on its SRQ
 * @srq: the SRQ
 * @qp: the QP
 */
void sib_srq_forget(struct sib_srq *srq, struct sib_qp *qp)
{
	unsigned long irqf;

	spin_lock_irqsave(&srq->rq.lock, irqf);
	list_del_init(&qp->srq_node);
	spin_unlock_irqrestore(&srq->rq.lock, irqf);
}

/**
 * sib_recv_take() - take a QP's next receive, or wait for one
 * @qp: the QP, its lock held
 * @wqe: where to copy the receive
 *
 * Return: 0, or -ENOENT when none is posted: the next post kicks the QP
 * (sib_rc_kick()).
 */
int sib_recv_take(struct sib_qp *qp, struct sib_rwqe *wqe)
{
	int left;

	lockdep_assert_held(&qp->lock);
	if (qp->srq)
		return sib_srq_get(qp->srq, wqe, qp);
	spin_lock(&qp->rq.lock);
	left = __sib_rq_pop(&qp->rq, wqe);
	if (left < 0)
		qp->rq.waiting = true;
	spin_unlock(&qp->rq.lock);
	return left < 0 ? left : 0;
}

/* QP ------------------------------------------------------------------ */

static atomic64_t sib_qp_serials = ATOMIC64_INIT(0);

static int sib_qp_number(struct sib_qp *qp, enum ib_qp_type type)
{
	struct sib_port *port = qp->port;
	struct sib_qp **slot;
	unsigned long irqf;
	int err = 0;
	u32 qpn;

	if (type != IB_QPT_SMI && type != IB_QPT_GSI) {
		err = xa_alloc_cyclic_irq(&qp->dev->qps, &qpn, qp,
					  XA_LIMIT(2, SIB_QPN_MAX),
					  &qp->dev->next_qpn, GFP_KERNEL);
		if (err < 0)
			return err;
		qp->ibqp.qp_num = qpn;
		return 0;
	}
	slot = type == IB_QPT_SMI ? &port->qp0 : &port->qp1;
	spin_lock_irqsave(&port->lock, irqf);
	if (*slot)
		err = -EBUSY;
	else
		*slot = qp;
	spin_unlock_irqrestore(&port->lock, irqf);
	qp->ibqp.qp_num = type == IB_QPT_SMI ? 0 : 1;
	return err;
}

static void sib_qp_unnumber(struct sib_qp *qp)
{
	struct sib_port *port = qp->port;
	unsigned long irqf;

	switch (qp->ibqp.qp_num) {
	case 0:
	case 1:
		spin_lock_irqsave(&port->lock, irqf);
		if (qp->ibqp.qp_num)
			port->qp1 = NULL;
		else
			port->qp0 = NULL;
		spin_unlock_irqrestore(&port->lock, irqf);
		break;
	default:
		xa_erase_irq(&qp->dev->qps, qp->ibqp.qp_num);
	}
}

static int sib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			 struct ib_udata *udata)
{
	struct sib_dev *sdev = to_sdev(ibqp->device);
	struct sib_qp *qp = to_sqp(ibqp);
	struct ib_qp_cap *cap = &init->cap;
	int err;

	if (udata)
		return -EOPNOTSUPP;
	switch (init->qp_type) {
	case IB_QPT_SMI:
	case IB_QPT_GSI:
	case IB_QPT_UD:
	case IB_QPT_RC:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags & ~IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK)
		return -EOPNOTSUPP;
	if (cap->max_send_wr > SIB_MAX_WR || cap->max_send_sge > SIB_MAX_SGE ||
	    cap->max_inline_data > SIB_MAX_INLINE)
		return -EINVAL;

	qp->dev = sdev;
	qp->port = &sdev->port;
	spin_lock_init(&qp->lock);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->block_mc_lb = !!(init->create_flags &
			     IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK);
	qp->srq = to_ssrq(init->srq);
	qp->sq_size = max(cap->max_send_wr, 1U);
	qp->sq_max_sge = max(cap->max_send_sge, 1U);
	qp->mtu = IB_MTU_4096;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->freed);
	qp->serial = atomic64_inc_return(&sib_qp_serials);
	INIT_LIST_HEAD(&qp->held);
	INIT_LIST_HEAD(&qp->srq_node);
	INIT_LIST_HEAD(&qp->retry_node);
	if (init->qp_type == IB_QPT_RC) {
		qp->swqe = kvcalloc(qp->sq_size, sizeof(*qp->swqe), GFP_KERNEL);
		if (!qp->swqe)
			return -ENOMEM;
	}
	if (!qp->srq) {
		err = sib_rq_init(&qp->rq, max(cap->max_recv_wr, 1U),
				  cap->max_recv_sge);
		if (err)
			goto err_swqe;
	}
	err = sib_qp_number(qp, init->qp_type);
	if (err)
		goto err_rq;
	cap->max_inline_data = SIB_MAX_INLINE;
	return 0;

err_rq:
	kvfree(qp->rq.wqe);
err_swqe:
	kvfree(qp->swqe);
	return err;
}

/**
 * sib_qp_lookup() - find a QP of a port by number and hold it
 * @port: the port
 * @qpn: the QP number
 *
 * Return: the QP with a reference (sib_qp_put() drops it), or NULL.
 */
struct sib_qp *sib_qp_lookup(struct sib_port *port, u32 qpn)
{
	struct sib_qp *qp = NULL;
	unsigned long irqf;

	if (qpn <= 1) {
		spin_lock_irqsave(&port->lock, irqf);
		qp = qpn ? port->qp1 : port->qp0;
		if (qp && !refcount_inc_not_zero(&qp->ref))
			qp = NULL;
		spin_unlock_irqrestore(&port->lock, irqf);
		return qp;
	}
	xa_lock_irqsave(&port->dev->qps, irqf);
	qp = xa_load(&port->dev->qps, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&port->dev->qps, irqf);
	return qp;
}

void sib_qp_put(struct sib_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->freed);
}

/**
 * sib_qp_to_error() - move a QP to the error state and flush its queues
 * @qp: the QP
 * @fatal: raise IB_EVENT_QP_FATAL (an error the QP found itself)
 */
void sib_qp_to_error(struct sib_qp *qp, bool fatal)
{
	unsigned long irqf;
	u8 old;

	spin_lock_irqsave(&qp->lock, irqf);
	old = qp->state;
	qp->state = IB_QPS_ERR;
	if (old != IB_QPS_ERR)
		sib_flush_sq(qp);
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (old != IB_QPS_ERR)
		sib_qp_error_flush(qp, fatal);
}

/**
 * sib_qp_error_flush() - the rest of entering the error state
 * @qp: the QP, its state just set to ERR and its sends flushed
 * @fatal: raise IB_EVENT_QP_FATAL (an error the QP found itself)
 *
 * Flushes its receives, fails the messages it held, and raises the
 * events a real HCA raises: QP_FATAL if asked, LAST_WQE_REACHED for a
 * QP on an SRQ (its consumer may then destroy it).
 */
void sib_qp_error_flush(struct sib_qp *qp, bool fatal)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
	};

	sib_flush_rq(qp);
	sib_rc_flush_held(qp);
	if (!qp->ibqp.event_handler)
		return;
	if (fatal) {
		ev.event = IB_EVENT_QP_FATAL;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
	if (qp->srq) {
		ev.event = IB_EVENT_QP_LAST_WQE_REACHED;
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
}

static int sib_qp_attrs(struct sib_qp *qp, const struct ib_qp_attr *attr,
			int mask)
{
	lockdep_assert_held(&qp->lock);
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SIB_PKEYS)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_AV) && attr->ah_attr.type != RDMA_AH_ATTR_TYPE_IB)
		return -EINVAL;
	if (mask & IB_QP_PKEY_INDEX)
		qp->pkey_index = attr->pkey_index;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_PATH_MTU)
		qp->mtu = attr->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_AV) {
		qp->dlid = rdma_ah_get_dlid(&attr->ah_attr);
		qp->sl = rdma_ah_get_sl(&attr->ah_attr);
	}
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & SIB_PSN_MASK;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & SIB_PSN_MASK;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	return 0;
}

static int sib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			 int mask, struct ib_udata *udata)
{
	struct sib_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	unsigned long irqf;
	int err;

	if (udata)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&qp->lock, irqf);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur != qp->state || !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		spin_unlock_irqrestore(&qp->lock, irqf);
		return -EINVAL;
	}
	err = sib_qp_attrs(qp, attr, mask);
	if (!err && next != IB_QPS_ERR)
		qp->state = next;
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (err)
		return err;
	if (next == IB_QPS_ERR)
		sib_qp_to_error(qp, false);
	else if (next == IB_QPS_RESET && cur != IB_QPS_RESET)
		sib_qp_reset(qp);
	return 0;
}

static int sib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
			struct ib_qp_init_attr *init)
{
	struct sib_qp *qp = to_sqp(ibqp);
	unsigned long irqf;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));
	spin_lock_irqsave(&qp->lock, irqf);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->pkey_index = qp->pkey_index;
	attr->qkey = qp->qkey;
	attr->port_num = 1;
	attr->path_mtu = qp->mtu;
	attr->dest_qp_num = qp->dest_qpn;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->timeout = qp->timeout;
	attr->sq_psn = qp->sq_psn;
	attr->rq_psn = qp->rq_psn;
	rdma_ah_set_dlid(&attr->ah_attr, qp->dlid);
	rdma_ah_set_sl(&attr->ah_attr, qp->sl);
	spin_unlock_irqrestore(&qp->lock, irqf);
	attr->cap.max_send_wr = qp->sq_size;
	attr->cap.max_send_sge = qp->sq_max_sge;
	attr->cap.max_inline_data = SIB_MAX_INLINE;
	if (!qp->srq) {
		attr->cap.max_recv_wr = qp->rq.size;
		attr->cap.max_recv_sge = qp->rq.max_sge;
	}
	init->cap = attr->cap;
	init->qp_type = ibqp->qp_type;
	init->srq = ibqp->srq;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/*
 * Destroy, in order: 1. take the QP out of its port's tables so no new
 * packet finds it; 2. leave its multicast groups; 3. fail the messages
 * it held (and stop waiting on its SRQ); 4. drop the table's reference
 * and wait for the deliveries and retries that hold one; 5. free its
 * queues (ib_core frees the QP itself).
 */
static int sib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sib_qp *qp = to_sqp(ibqp);

	sib_qp_unnumber(qp);
	sib_mcast_detach_qp(qp);
	sib_rc_flush_held(qp);
	sib_qp_put(qp);
	wait_for_completion(&qp->freed);
	sib_qp_reset(qp);
	if (!qp->srq)
		kvfree(qp->rq.wqe);
	kvfree(qp->swqe);
	return 0;
}

const struct ib_device_ops sib_verbs_ops = {
	.alloc_pd = sib_alloc_pd,
	.dealloc_pd = sib_dealloc_pd,
	.get_dma_mr = sib_get_dma_mr,
	.reg_user_mr = sib_reg_user_mr,
	.dereg_mr = sib_dereg_mr,
	.create_ah = sib_create_ah,
	.query_ah = sib_query_ah,
	.destroy_ah = sib_destroy_ah,
	.create_cq = sib_create_cq,
	.destroy_cq = sib_destroy_cq,
	.poll_cq = sib_poll_cq,
	.req_notify_cq = sib_req_notify_cq,
	.create_srq = sib_create_srq,
	.modify_srq = sib_modify_srq,
	.query_srq = sib_query_srq,
	.destroy_srq = sib_destroy_srq,
	.post_srq_recv = sib_post_srq_recv,
	.create_qp = sib_create_qp,
	.modify_qp = sib_modify_qp,
	.query_qp = sib_query_qp,
	.destroy_qp = sib_destroy_qp,
	.post_recv = sib_post_recv,
	.post_send = sib_post_send,
	.attach_mcast = sib_attach_mcast,
	.detach_mcast = sib_detach_mcast,

	INIT_RDMA_OBJ_SIZE(ib_ah, sib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, sib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sib_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sib_srq, ibsrq),
};
