// SPDX-License-Identifier: GPL-2.0
/*
 * softib: the wire.
 *
 * Owns what happens to a packet: post_send turns a work request into a
 * packet (gathering its kernel-virtual buffers) and completes the send;
 * the sending port routes it (its own LIDs loop back, everything else
 * crosses the cable, multicast goes both ways); the receiving port
 * queues it for its receive work, which checks the LID, P_Key and Q_Key
 * as a channel adapter does (IBA 10.9.3, 10.2.4), takes a posted receive
 * and scatters the 40-byte GRH area and the payload into it. Multicast
 * attachment of QPs to groups lives here too. Drops are counted per
 * port: UD is unreliable, and a full queue or a missing receive loses
 * the packet as a real fabric would.
 */
#include <linux/slab.h>
#include "softib.h"

#define SIB_SMP_MAX	256	/* QP0 and QP1 carry MADs only */
#define SIB_IB_NEXT_HDR	0x1b

/* What the wire needs of a port, read once under its lock. */
struct sib_port_view {
	u8 state;
	u16 lid;
	u16 lid_mask;
	bool up;
};

static void sib_port_view(struct sib_port *port, struct sib_port_view *v)
{
	unsigned long irqf;

	spin_lock_irqsave(&port->lock, irqf);
	v->state = port->a.state;
	v->lid = port->a.lid;
	v->lid_mask = ~((1U << port->a.lmc) - 1);
	v->up = port->link_up && port->a.phys_state == IB_PORT_PHYS_STATE_LINK_UP;
	spin_unlock_irqrestore(&port->lock, irqf);
}

static bool sib_is_mcast_lid(u16 lid)
{
	return lid >= 0xc000 && lid != be16_to_cpu(IB_LID_PERMISSIVE);
}

/**
 * sib_drop() - drop a packet, counting why
 * @port: the port that counts it
 * @pkt: the packet, freed
 * @why: the reason
 *
 * An RC message is never lost silently: its sender learns that it failed
 * (a real sender would retry until its retry count ran out).
 */
void sib_drop(struct sib_port *port, struct sib_pkt *pkt, enum sib_count why)
{
	sib_count(port, why);
	if (pkt->rc)
		sib_rc_answer(pkt, IB_WC_RETRY_EXC_ERR);
	sib_pkt_free(pkt);
}

static void sib_enqueue(struct sib_port *to, struct sib_pkt *pkt)
{
	unsigned long irqf;
	bool full;

	spin_lock_irqsave(&to->rx_lock, irqf);
	full = to->rx_len >= SIB_RX_QUEUE_MAX;
	if (!full) {
		list_add_tail(&pkt->list, &to->rx_queue);
		to->rx_len++;
	}
	spin_unlock_irqrestore(&to->rx_lock, irqf);
	if (full) {
		sib_drop(to, pkt, SIB_DROP_QFULL);
		return;
	}
	queue_work(system_highpri_wq, &to->rx_work);
}

/**
 * sib_route() - send a packet from a port
 * @from: the port
 * @pkt: the packet, given away
 *
 * Its own LIDs loop back; multicast goes to the port itself and across
 * the cable; the rest crosses the cable. Only SMPs leave a port that is
 * not ACTIVE (IBA 7.2: ARMED and INIT ports send subnet management
 * packets only).
 */
void sib_route(struct sib_port *from, struct sib_pkt *pkt)
{
	struct sib_port *peer = from->peer;
	struct sib_port_view v;
	struct sib_pkt *copy;

	sib_port_view(from, &v);
	if (!v.up) {
		sib_drop(from, pkt, SIB_DROP_LINK);
		return;
	}
	if (pkt->src_qpn && v.state != IB_PORT_ACTIVE) {
		sib_drop(from, pkt, SIB_DROP_STATE);
		return;
	}
	sib_count(from, SIB_TX);
	if (sib_is_mcast_lid(pkt->dlid) && !pkt->rc) {
		copy = sib_pkt_clone(pkt);
		if (copy)
			sib_enqueue(from, copy);
		else
			sib_count(from, SIB_DROP_NOMEM);
	} else if (v.lid && (pkt->dlid & v.lid_mask) == v.lid) {
		sib_enqueue(from, pkt);
		return;
	}
	if (!peer) {
		sib_drop(from, pkt, SIB_DROP_LINK);
		return;
	}
	sib_enqueue(peer, pkt);
}

static void sib_build_grh(struct sib_qp *qp, const struct sib_ah *ah,
			  struct sib_pkt *pkt)
{
	struct ib_grh *g = &pkt->grh;
	unsigned long irqf;
	u64 prefix;

	spin_lock_irqsave(&qp->port->lock, irqf);
	prefix = qp->port->a.gid_prefix;
	spin_unlock_irqrestore(&qp->port->lock, irqf);
	pkt->has_grh = true;
	g->version_tclass_flow = cpu_to_be32(6U << 28 | (u32)ah->tclass << 20 |
					     (ah->flow_label & 0xfffff));
	g->paylen = cpu_to_be16(pkt->len);
	g->next_hdr = SIB_IB_NEXT_HDR;
	g->hop_limit = ah->hop_limit;
	g->sgid.global.subnet_prefix = cpu_to_be64(prefix);
	g->sgid.global.interface_id = cpu_to_be64(sib_port_guid(qp->dev));
	g->dgid = ah->dgid;
}

/**
 * sib_gather() - a packet holding what a send work request gathers
 * @wr: the work request
 * @max: the largest message the QP may send
 * @out: the packet
 *
 * Return: 0, -EMSGSIZE if the message is longer than @max, -ENOMEM.
 */
int sib_gather(const struct ib_send_wr *wr, u32 max, struct sib_pkt **out)
{
	struct sib_pkt *pkt;
	u64 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > max)
		return -EMSGSIZE;
	pkt = sib_pkt_alloc(len);
	if (!pkt)
		return -ENOMEM;
	sib_pkt_gather(pkt, wr->sg_list, wr->num_sge);
	*out = pkt;
	return 0;
}

/**
 * sib_complete_send() - complete a send work request
 * @qp: its QP
 * @wr_id: its ID
 * @status: how it ended
 * @len: bytes sent
 */
void sib_complete_send(struct sib_qp *qp, u64 wr_id, enum ib_wc_status status,
		       u32 len)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = IB_WC_SEND,
		.byte_len = len,
		.qp = &qp->ibqp,
	};

	sib_cq_add(to_scq(qp->ibqp.send_cq), &wc, false);
}

/* One datagram (UD, GSI or SMI): built, completed, then sent. */
static int sib_send_ud(struct sib_qp *qp, const struct ib_send_wr *wr)
{
	const struct ib_ud_wr *ud = ud_wr(wr);
	enum ib_qp_type type = qp->ibqp.qp_type;
	const struct sib_ah *ah;
	struct sib_pkt *pkt;
	unsigned long irqf;
	u16 pkey_index;
	int err;

	if (wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM)
		return -EINVAL;
	if (wr->num_sge > qp->sq_max_sge || !ud->ah)
		return -EINVAL;
	err = sib_gather(wr, type == IB_QPT_UD ? ib_mtu_enum_to_int(IB_MTU_4096) :
			 SIB_SMP_MAX, &pkt);
	if (err)
		return err;
	ah = to_sah(ud->ah);

	spin_lock_irqsave(&qp->lock, irqf);
	pkey_index = type == IB_QPT_GSI ? ud->pkey_index : qp->pkey_index;
	pkt->qkey = ud->remote_qkey & 0x80000000 ? qp->qkey : ud->remote_qkey;
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (pkey_index >= SIB_PKEYS) {
		sib_pkt_free(pkt);
		return -EINVAL;
	}
	pkt->pkey = type == IB_QPT_SMI ? 0xffff : sib_pkey_at(qp->port, pkey_index);
	pkt->dlid = ah->dlid;
	pkt->sl = ah->sl;
	pkt->src_qpn = qp->ibqp.qp_num;
	pkt->dst_qpn = ud->remote_qpn;
	pkt->opcode = IB_WC_RECV;
	pkt->has_imm = wr->opcode == IB_WR_SEND_WITH_IMM;
	pkt->imm = wr->ex.imm_data;
	pkt->solicited = wr->send_flags & IB_SEND_SOLICITED;
	pkt->from = qp->port;
	spin_lock_irqsave(&qp->port->lock, irqf);
	pkt->slid = qp->port->a.lid | ah->path_bits;
	spin_unlock_irqrestore(&qp->port->lock, irqf);
	/*
	 * A directed-route SMP leaves with the permissive LID as source as
	 * well, so that the reply (addressed to the request's source) finds
	 * its way back to a port that has no LID yet.
	 */
	if (type == IB_QPT_SMI && pkt->dlid == be16_to_cpu(IB_LID_PERMISSIVE))
		pkt->slid = pkt->dlid;
	if (ah->has_grh)
		sib_build_grh(qp, ah, pkt);

	if (qp->sq_sig_all || (wr->send_flags & IB_SEND_SIGNALED))
		sib_complete_send(qp, wr->wr_id, IB_WC_SUCCESS, pkt->len);
	sib_route(qp->port, pkt);
	return 0;
}

/**
 * sib_post_send() - post send work requests to a QP
 * @ibqp: the QP
 * @wr: the chain of work requests
 * @bad: set to the first one not posted
 *
 * May be called with interrupts off. In the error state every request
 * completes at once with a flush error (ib_drain_sq relies on it).
 *
 * Return: 0, or a negative errno with @bad set.
 */
int sib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad)
{
	struct sib_qp *qp = to_sqp(ibqp);
	u8 state = sib_qp_state(qp);
	int err;

	if (state == IB_QPS_ERR) {
		for (; wr; wr = wr->next)
			sib_complete_send(qp, wr->wr_id, IB_WC_WR_FLUSH_ERR, 0);
		return 0;
	}
	if (state != IB_QPS_RTS) {
		*bad = wr;
		return -EINVAL;
	}
	for (; wr; wr = wr->next) {
		if (qp->ibqp.qp_type == IB_QPT_RC)
			err = sib_rc_send(qp, wr);
		else
			err = sib_send_ud(qp, wr);
		if (err) {
			*bad = wr;
			return err;
		}
	}
	return 0;
}

/* Receive ------------------------------------------------------------- */

/* Copy a buffer (the GRH) into a posted receive at an offset. */
static u32 sib_scatter(const struct sib_rwqe *wqe, u32 off, const void *src,
		       u32 len)
{
	u32 done = 0, n;
	unsigned int i;

	for (i = 0; i < wqe->nsge && done < len; i++) {
		const struct ib_sge *sge = &wqe->sge[i];

		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		n = min(sge->length - off, len - done);
		memcpy((void *)(uintptr_t)(sge->addr + off), src + done, n);
		done += n;
		off = 0;
	}
	return done;
}

/**
 * sib_rwqe_len() - the bytes a posted receive can hold
 * @wqe: the receive
 *
 * Return: the sum of its scatter lengths.
 */
u64 sib_rwqe_len(const struct sib_rwqe *wqe)
{
	u64 len = 0;
	unsigned int i;

	for (i = 0; i < wqe->nsge; i++)
		len += wqe->sge[i].length;
	return len;
}

/*
 * The checks a channel adapter makes before a datagram reaches a QP:
 * state, P_Key (QP1 takes any P_Key of the port's table, other QPs
 * their own entry's) and Q_Key (QP0 has none).
 */
static enum sib_count sib_ud_accept(struct sib_port *port, struct sib_qp *qp,
				    const struct sib_pkt *pkt, u16 *pkey_index)
{
	enum ib_qp_type type = qp->ibqp.qp_type;
	enum sib_count why = SIB_RX;
	unsigned long irqf;
	bool ok = true;
	u16 index;
	u32 qkey;

	if (type != IB_QPT_UD && type != IB_QPT_GSI && type != IB_QPT_SMI)
		return SIB_DROP_NOQP;
	spin_lock_irqsave(&qp->lock, irqf);
	ok = qp->state == IB_QPS_RTR || qp->state == IB_QPS_RTS;
	index = qp->pkey_index;
	qkey = qp->qkey;
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (!ok)
		return SIB_DROP_NOQP;
	*pkey_index = 0;
	if (type == IB_QPT_SMI)
		return SIB_RX;
	if (type == IB_QPT_GSI)
		ok = sib_pkey_find(port, pkt->pkey, pkey_index);
	else
		ok = sib_pkey_match(sib_pkey_at(port, index), pkt->pkey);
	if (type == IB_QPT_UD)
		*pkey_index = index;
	spin_lock_irqsave(&port->lock, irqf);
	if (!ok) {
		port->a.pkey_violations++;
		why = SIB_DROP_PKEY;
	} else if (pkt->qkey != qkey) {
		port->a.qkey_violations++;
		why = SIB_DROP_QKEY;
	}
	spin_unlock_irqrestore(&port->lock, irqf);
	return why;
}

static void sib_deliver_ud(struct sib_port *port, struct sib_qp *qp,
			   const struct sib_pkt *pkt, u16 lid_mask)
{
	struct ib_wc wc = {};
	struct sib_rwqe wqe;
	enum sib_count why;
	u16 pkey_index;
	int err;

	why = sib_ud_accept(port, qp, pkt, &pkey_index);
	if (why != SIB_RX) {
		sib_count(port, why);
		return;
	}
	err = qp->srq ? sib_srq_pop(qp->srq, &wqe) : sib_rq_pop(&qp->rq, &wqe);
	if (err < 0) {
		sib_count(port, SIB_DROP_NORECV);
		return;
	}
	wc.wr_id = wqe.wr_id;
	wc.qp = &qp->ibqp;
	wc.opcode = IB_WC_RECV;
	if (sib_rwqe_len(&wqe) < SIB_GRH + pkt->len) {
		wc.status = IB_WC_LOC_LEN_ERR;
		sib_cq_add(to_scq(qp->ibqp.recv_cq), &wc, false);
		sib_count(port, SIB_DROP_LEN);
		return;
	}
	if (pkt->has_grh) {
		sib_scatter(&wqe, 0, &pkt->grh, sizeof(pkt->grh));
		wc.wc_flags |= IB_WC_GRH;
	}
	sib_pkt_scatter(pkt, &wqe, SIB_GRH);
	wc.status = IB_WC_SUCCESS;
	wc.byte_len = SIB_GRH + pkt->len;
	wc.src_qp = pkt->src_qpn;
	wc.slid = pkt->slid;
	wc.sl = pkt->sl;
	wc.dlid_path_bits = pkt->dlid & ~lid_mask;
	wc.pkey_index = pkey_index;
	wc.port_num = 1;
	if (pkt->has_imm) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = pkt->imm;
	}
	sib_count(port, SIB_RX);
	sib_cq_add(to_scq(qp->ibqp.recv_cq), &wc, pkt->solicited);
}

static struct sib_mcg *sib_mcg_find(struct sib_dev *sdev, const union ib_gid *mgid,
				    u16 mlid)
{
	struct sib_mcg *g;

	lockdep_assert_held(&sdev->mcast_lock);
	list_for_each_entry(g, &sdev->mcast, list) {
		if (mgid ? !memcmp(&g->mgid, mgid, sizeof(*mgid)) : g->mlid == mlid)
			return g;
	}
	return NULL;
}

static void sib_deliver_mcast(struct sib_port *port, const struct sib_pkt *pkt,
			      u16 lid_mask)
{
	struct sib_dev *sdev = port->dev;
	u32 qpn[SIB_MAX_MCAST_QP];
	unsigned int i, n = 0;
	struct sib_mcg *g;
	unsigned long irqf;
	struct sib_qp *qp;

	spin_lock_irqsave(&sdev->mcast_lock, irqf);
	g = sib_mcg_find(sdev, pkt->has_grh ? &pkt->grh.dgid : NULL, pkt->dlid);
	if (g && g->mlid == pkt->dlid) {
		n = g->nqp;
		memcpy(qpn, g->qpn, n * sizeof(*qpn));
	}
	spin_unlock_irqrestore(&sdev->mcast_lock, irqf);
	for (i = 0; i < n; i++) {
		qp = sib_qp_lookup(port, qpn[i]);
		if (!qp)
			continue;
		if (!(qp->block_mc_lb && pkt->from == port &&
		      qpn[i] == pkt->src_qpn))
			sib_deliver_ud(port, qp, pkt, lid_mask);
		sib_qp_put(qp);
	}
	if (!n)
		sib_count(port, SIB_DROP_MCAST);
}

/* Deliver a packet that reached a port; it is given away. */
static void sib_deliver(struct sib_port *port, struct sib_pkt *pkt)
{
	enum sib_count why;
	struct sib_port_view v;
	struct sib_qp *qp;

	sib_port_view(port, &v);
	why = SIB_DROP_LINK;
	if (!v.up)
		goto drop;
	why = SIB_DROP_DLID;
	if (pkt->dst_qpn == 0) {
		if (pkt->dlid != be16_to_cpu(IB_LID_PERMISSIVE) &&
		    (!v.lid || (pkt->dlid & v.lid_mask) != v.lid))
			goto drop;
	} else {
		/* an ARMED port receives data, an INIT one only SMPs */
		if (v.state != IB_PORT_ACTIVE && v.state != IB_PORT_ARMED) {
			why = SIB_DROP_STATE;
			goto drop;
		}
		if (sib_is_mcast_lid(pkt->dlid) && !pkt->rc) {
			sib_deliver_mcast(port, pkt, v.lid_mask);
			sib_pkt_free(pkt);
			return;
		}
		if (!v.lid || (pkt->dlid & v.lid_mask) != v.lid)
			goto drop;
	}
	why = SIB_DROP_NOQP;
	qp = sib_qp_lookup(port, pkt->dst_qpn);
	if (!qp)
		goto drop;
	if (pkt->rc) {
		sib_rc_deliver(port, qp, pkt);
	} else {
		sib_deliver_ud(port, qp, pkt, v.lid_mask);
		sib_pkt_free(pkt);
	}
	sib_qp_put(qp);
	return;
drop:
	sib_drop(port, pkt, why);
}

/**
 * sib_rx_work() - deliver the packets that reached a port
 * @work: the port's rx_work
 */
void sib_rx_work(struct work_struct *work)
{
	struct sib_port *port = container_of(work, struct sib_port, rx_work);
	struct sib_pkt *pkt, *next;
	unsigned long irqf;
	LIST_HEAD(batch);

	/* first the messages that waited for receives, in their order */
	sib_rc_retry(port);
	spin_lock_irqsave(&port->rx_lock, irqf);
	list_splice_init(&port->rx_queue, &batch);
	port->rx_len = 0;
	spin_unlock_irqrestore(&port->rx_lock, irqf);
	list_for_each_entry_safe(pkt, next, &batch, list) {
		list_del_init(&pkt->list);
		sib_deliver(port, pkt);
		cond_resched();
	}
}

/**
 * sib_rx_discard() - free the packets still queued on a port (unload)
 * @port: the port, its rx_work stopped
 */
void sib_rx_discard(struct sib_port *port)
{
	struct sib_pkt *pkt, *next;

	list_for_each_entry_safe(pkt, next, &port->rx_queue, list)
		sib_pkt_free(pkt);
	INIT_LIST_HEAD(&port->rx_queue);
	port->rx_len = 0;
}

/* Multicast attachment -------------------------------------------------- */

int sib_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sib_qp *qp = to_sqp(ibqp);
	struct sib_dev *sdev = qp->dev;
	struct sib_mcg *g, *fresh;
	unsigned long irqf;
	unsigned int i;
	int err = 0;

	if (!sib_is_mcast_lid(lid) || ibqp->qp_type != IB_QPT_UD)
		return -EINVAL;
	fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
	if (!fresh)
		return -ENOMEM;
	spin_lock_irqsave(&sdev->mcast_lock, irqf);
	g = sib_mcg_find(sdev, gid, lid);
	if (!g) {
		if (sdev->nmcast >= SIB_MAX_MCAST) {
			err = -ENOMEM;
			goto out;
		}
		g = fresh;
		fresh = NULL;
		g->mgid = *gid;
		list_add_tail(&g->list, &sdev->mcast);
		sdev->nmcast++;
	}
	g->mlid = lid;
	for (i = 0; i < g->nqp; i++)
		if (g->qpn[i] == ibqp->qp_num)
			goto out;
	if (g->nqp == SIB_MAX_MCAST_QP) {
		err = -ENOMEM;
		goto out;
	}
	g->qpn[g->nqp++] = ibqp->qp_num;
out:
	spin_unlock_irqrestore(&sdev->mcast_lock, irqf);
	kfree(fresh);
	return err;
}

/* Remove a QP from a group; the group goes when its last QP leaves. */
static bool sib_mcg_remove(struct sib_dev *sdev, struct sib_mcg *g, u32 qpn)
{
	unsigned int i;

	lockdep_assert_held(&sdev->mcast_lock);
	for (i = 0; i < g->nqp; i++) {
		if (g->qpn[i] != qpn)
			continue;
		g->qpn[i] = g->qpn[--g->nqp];
		if (!g->nqp) {
			list_del(&g->list);
			sdev->nmcast--;
			kfree(g);
		}
		return true;
	}
	return false;
}

int sib_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sib_dev *sdev = to_sqp(ibqp)->dev;
	struct sib_mcg *g;
	unsigned long irqf;
	bool found = false;

	spin_lock_irqsave(&sdev->mcast_lock, irqf);
	g = sib_mcg_find(sdev, gid, lid);
	if (g)
		found = sib_mcg_remove(sdev, g, ibqp->qp_num);
	spin_unlock_irqrestore(&sdev->mcast_lock, irqf);
	return found ? 0 : -EINVAL;
}

/**
 * sib_mcast_detach_qp() - take a QP out of every group (destroy)
 * @qp: the QP
 */
void sib_mcast_detach_qp(struct sib_qp *qp)
{
	struct sib_dev *sdev = qp->dev;
	struct sib_mcg *g, *next;
	unsigned long irqf;

	spin_lock_irqsave(&sdev->mcast_lock, irqf);
	list_for_each_entry_safe(g, next, &sdev->mcast, list)
		sib_mcg_remove(sdev, g, qp->ibqp.qp_num);
	spin_unlock_irqrestore(&sdev->mcast_lock, irqf);
}
