// SPDX-License-Identifier: GPL-2.0
/*
 * Connected-mode datapath: receive buffers (pages, one SGE each, posted to
 * the SRQ or to a connection's own queue) and their completions, RC sends
 * and their completions, the queue of packets waiting for a connection
 * and ipng_cm_xmit(), the transmit entry of connected mode. Connections
 * themselves are made and closed by ipoib_cm_conn.c.
 */
#include <linux/lockdep.h>

#include "ipoib_cm_priv.h"

#define IPNG_CM_COPYBREAK	256	/* smaller packets are copied */
#define IPNG_CM_HEAD		128	/* bytes copied in front of the pages */

/* ---- receive buffers ---- */

static void ipng_cm_buf_free(struct ipng_dev *ipd, struct ipng_cm_rxbuf *buf)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(buf->pages); i++) {
		if (!buf->pages[i])
			continue;
		ib_dma_unmap_page(ipd->ca, buf->dma[i], PAGE_SIZE,
				  DMA_FROM_DEVICE);
		put_page(buf->pages[i]);
		buf->pages[i] = NULL;
	}
}

/* A fresh mapped page, or NULL. */
static struct page *ipng_cm_page(struct ipng_dev *ipd, u64 *dma, gfp_t gfp)
{
	struct page *page = alloc_page(gfp);

	if (!page)
		return NULL;
	*dma = ib_dma_map_page(ipd->ca, page, 0, PAGE_SIZE, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ipd->ca, *dma)) {
		put_page(page);
		return NULL;
	}
	return page;
}

static int ipng_cm_buf_fill(struct ipng_dev *ipd, struct ipng_cm_rxbuf *buf)
{
	unsigned int i;

	for (i = 0; i < ipd->cm->nfrags; i++) {
		buf->pages[i] = ipng_cm_page(ipd, &buf->dma[i], GFP_KERNEL);
		if (!buf->pages[i]) {
			ipng_cm_buf_free(ipd, buf);
			return -ENOMEM;
		}
	}
	return 0;
}

static struct ipng_cm_ring *ipng_cm_buf_ring(struct ipng_cm *cm,
					     struct ipng_cm_rxbuf *buf)
{
	return buf->rx ? &buf->rx->ring : &cm->srq_ring;
}

static int ipng_cm_post_buf(struct ipng_dev *ipd, struct ipng_cm_rxbuf *buf)
{
	struct ipng_cm *cm = ipd->cm;
	struct ib_sge sge[IPNG_CM_FRAGS];
	struct ib_recv_wr wr = {
		.wr_cqe		= &buf->cqe,
		.sg_list	= sge,
		.num_sge	= cm->nfrags,
	};
	unsigned int i;
	int err;

	for (i = 0; i < cm->nfrags; i++) {
		sge[i].addr = buf->dma[i];
		sge[i].length = PAGE_SIZE;
		sge[i].lkey = ipd->pd->local_dma_lkey;
	}
	if (buf->rx)
		err = ib_post_recv(buf->rx->qp, &wr, NULL);
	else
		err = ib_post_srq_recv(cm->srq, &wr, NULL);
	if (!err)
		atomic_inc(&ipng_cm_buf_ring(cm, buf)->posted);
	return err;
}

static void ipng_cm_rx_done(struct ib_cq *cq, struct ib_wc *wc);

/**
 * ipng_cm_ring_free() - unmap and free the buffers of a ring
 * @ipd: interface
 * @ring: ring whose receives have all completed (or were never posted)
 *
 * Safe to call twice.
 */
void ipng_cm_ring_free(struct ipng_dev *ipd, struct ipng_cm_ring *ring)
{
	u32 i;

	if (!ring->bufs)
		return;
	for (i = 0; i < ring->size; i++)
		ipng_cm_buf_free(ipd, &ring->bufs[i]);
	kvfree(ring->bufs);
	ring->bufs = NULL;
}

/**
 * ipng_cm_ring_init() - fill and post the buffers of a ring
 * @ipd: interface
 * @ring: the SRQ's ring (@rx NULL) or @rx's own
 * @size: buffers wanted
 * @rx: the connection, NULL for the SRQ
 *
 * Fewer than asked is not an error as long as one is posted.
 *
 * Return: 0, or -ENOMEM with nothing left allocated.
 */
int ipng_cm_ring_init(struct ipng_dev *ipd, struct ipng_cm_ring *ring,
		      u32 size, struct ipng_cm_rx *rx)
{
	u32 i;

	ring->bufs = kvcalloc(size, sizeof(*ring->bufs), GFP_KERNEL);
	if (!ring->bufs)
		return -ENOMEM;
	ring->size = size;
	atomic_set(&ring->posted, 0);
	for (i = 0; i < size; i++) {
		ring->bufs[i].cqe.done = ipng_cm_rx_done;
		ring->bufs[i].rx = rx;
		if (ipng_cm_buf_fill(ipd, &ring->bufs[i]))
			break;
		if (ipng_cm_post_buf(ipd, &ring->bufs[i]))
			break;
	}
	if (atomic_read(&ring->posted))
		return 0;
	ipng_cm_ring_free(ipd, ring);
	return -ENOMEM;
}

/* ---- receive ---- */

/* A small packet: copy it and keep the pages in the ring. */
static struct sk_buff *ipng_cm_rx_copy(struct ipng_dev *ipd,
				       struct ipng_cm_rxbuf *buf, u32 len)
{
	struct sk_buff *skb;

	skb = napi_alloc_skb(&ipng_chan0(ipd)->napi, IPNG_ADDR_LEN + len);
	if (!skb)
		return NULL;
	ib_dma_sync_single_for_cpu(ipd->ca, buf->dma[0], len, DMA_FROM_DEVICE);
	skb_put(skb, IPNG_ADDR_LEN);
	skb_put_data(skb, page_address(buf->pages[0]), len);
	ib_dma_sync_single_for_device(ipd->ca, buf->dma[0], len,
				      DMA_FROM_DEVICE);
	return skb;
}

/*
 * A large packet: its headers are copied, the pages holding the rest go
 * into the skb as fragments and the buffer gets new pages. Without new
 * pages the packet is dropped and the buffer keeps its own.
 */
static struct sk_buff *ipng_cm_rx_pages(struct ipng_dev *ipd,
					struct ipng_cm_rxbuf *buf, u32 len)
{
	unsigned int nr = DIV_ROUND_UP(len, PAGE_SIZE), i;
	struct page *fresh[IPNG_CM_FRAGS];
	u64 dma[IPNG_CM_FRAGS];
	struct sk_buff *skb;
	u32 off, rem, chunk;

	for (i = 0; i < nr; i++) {
		fresh[i] = ipng_cm_page(ipd, &dma[i], GFP_ATOMIC);
		if (!fresh[i])
			goto err_pages;
	}
	skb = napi_alloc_skb(&ipng_chan0(ipd)->napi,
			     IPNG_ADDR_LEN + IPNG_CM_HEAD);
	if (!skb)
		goto err_pages;

	skb_put(skb, IPNG_ADDR_LEN);
	off = IPNG_CM_HEAD;
	rem = len - IPNG_CM_HEAD;
	for (i = 0; i < nr; i++) {
		ib_dma_unmap_page(ipd->ca, buf->dma[i], PAGE_SIZE,
				  DMA_FROM_DEVICE);
		if (!i)
			skb_put_data(skb, page_address(buf->pages[0]),
				     IPNG_CM_HEAD);
		chunk = min_t(u32, rem, PAGE_SIZE - off);
		skb_add_rx_frag(skb, i, buf->pages[i], off, chunk, PAGE_SIZE);
		rem -= chunk;
		off = 0;
		buf->pages[i] = fresh[i];
		buf->dma[i] = dma[i];
	}
	return skb;

err_pages:
	while (i--) {
		ib_dma_unmap_page(ipd->ca, dma[i], PAGE_SIZE, DMA_FROM_DEVICE);
		put_page(fresh[i]);
	}
	return NULL;
}

/*
 * Hand a received packet (IPoIB header first, behind room for the link
 * address) to the stack with the peer's address as its source.
 */
static void ipng_cm_rx_deliver(struct ipng_dev *ipd, struct ipng_cm_rx *rx,
			       struct sk_buff *skb)
{
	__be16 proto;

	memcpy(skb->data, rx->addr, IPNG_ADDR_LEN);
	ipng_hdr_parse(skb->data + IPNG_ADDR_LEN, IPNG_HLEN, &proto);
	if (!ipng_proto_known(proto)) {
		ipng_drop(ipd, IPNG_STAT_RX_DROP_PROTO, 1);
		dev_kfree_skb_any(skb);
		return;
	}
	skb_reset_mac_header(skb);
	skb_pull(skb, IPNG_HARD_LEN);
	skb_reset_network_header(skb);
	skb->protocol = proto;
	skb->dev = ipd->ndev;
	skb->pkt_type = PACKET_HOST;
	/* Each connection's packets go up through one channel. */
	ipng_chan_rx(ipng_chan0(ipd), skb, rx->chan);
}

/* Completion of a receive on the SRQ or a connection's own queue; NAPI. */
static void ipng_cm_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_dev *ipd = cq->cq_context;
	struct ipng_cm *cm = ipd->cm;
	struct ipng_cm_rxbuf *buf = container_of(wc->wr_cqe,
						 struct ipng_cm_rxbuf, cqe);
	struct ipng_cm_rx *rx = wc->qp->qp_context;
	struct sk_buff *skb;
	u32 len = wc->byte_len;

	atomic_dec(&ipng_cm_buf_ring(cm, buf)->posted);
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status == IB_WC_WR_FLUSH_ERR) {
			/* Only a closing connection's own queue flushes. */
			wake_up(&cm->drain_wq);
			return;
		}
		ipng_stat_add(ipd->stats, IPNG_STAT_RX_ERRORS, 1);
		netdev_dbg(ipd->ndev, "RC receive completion: %s\n",
			   ib_wc_status_msg(wc->status));
		goto repost;
	}
	if (time_after(jiffies, READ_ONCE(rx->last_rx)))
		WRITE_ONCE(rx->last_rx, jiffies);
	if (unlikely(len < IPNG_HLEN || len > cm->buf_len)) {
		ipng_drop(ipd, IPNG_STAT_RX_DROP_SHORT, 1);
		goto repost;
	}
	if (len <= IPNG_CM_COPYBREAK)
		skb = ipng_cm_rx_copy(ipd, buf, len);
	else
		skb = ipng_cm_rx_pages(ipd, buf, len);
	if (skb)
		ipng_cm_rx_deliver(ipd, rx, skb);
	else
		ipng_drop(ipd, IPNG_STAT_RX_DROP_NOMEM, 1);

repost:
	if (ipng_cm_post_buf(ipd, buf))
		netdev_dbg(ipd->ndev, "cannot repost an RC receive buffer\n");
}

/* ---- send ---- */

/*
 * The transmit path holds the lock of the skb's queue; a state step (and
 * the fallback it sends through the neighbour again) holds every queue.
 */
static void ipng_cm_assert_xmit_locked(struct ipng_dev *ipd,
				       struct sk_buff *skb)
{
	struct netdev_queue *txq __maybe_unused;

	/* Without lockdep the assertion is empty and @txq unused. */
	txq = netdev_get_tx_queue(ipd->ndev, skb_get_queue_mapping(skb));
	lockdep_assert(lockdep_is_held(&txq->_xmit_lock) ||
		       lockdep_is_held(&ipd->ndev->tx_global_lock));
}

/* Whoever changes @tx's queue, ring head or state holds one of these. */
static void ipng_cm_assert_send_locked(struct ipng_cm_tx *tx)
{
	lockdep_assert(lockdep_is_held(&tx->send_lock) ||
		       lockdep_is_held(&tx->cm->ipd->ndev->tx_global_lock));
}

/*
 * Post one packet (link address still in front) on a live connection;
 * transmit context, the connection's send lock or every transmit lock
 * held.
 */
static void ipng_cm_send(struct ipng_cm_tx *tx, struct sk_buff *skb)
{
	struct ipng_cm *cm = tx->cm;
	struct ipng_dev *ipd = cm->ipd;
	struct ipng_chan *c = ipng_tx_chan(ipd, skb);
	struct ipng_slot *slot = &tx->slots[tx->head & (cm->tx_size - 1)];
	struct ib_sge sge;
	struct ib_send_wr wr = {
		.wr_cqe		= &tx->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};

	ipng_cm_assert_send_locked(tx);
	skb_pull(skb, IPNG_ADDR_LEN);
	if (unlikely(skb->len - IPNG_HLEN > tx->mtu)) {
		ipng_too_big(ipd, skb, tx->mtu);
		return;
	}
	if (unlikely(tx->head - READ_ONCE(tx->tail) >= cm->tx_size ||
		     !ipng_tx_budget_take(&ipd->rc_budget))) {
		ipng_drop(ipd, IPNG_STAT_TX_DROP_RING_FULL, 1);
		goto drop;
	}
	/* Left by a flushed send (ipng_cm_tx_done()). */
	if (unlikely(slot->skb))
		dev_kfree_skb_any(ipng_take_slot(ipd, slot, DMA_TO_DEVICE));
	if (ipng_tx_map(ipd, skb, slot, &sge))
		goto drop_budget;
	/* Once posted, the send may complete and free @skb at once, on
	 * another CPU before ib_post_send() returns: it counts as in flight
	 * first.
	 */
	skb_tx_timestamp(skb);
	/*
	 * An RC send completes only when the peer has acknowledged it, a
	 * network round trip later, not when the packet left this host.
	 * Charged to its socket until then, it would count that round trip
	 * as local queueing: TCP's small-queue limit then lets a flow have
	 * about two packets on the connection (measured: 49 Mbit/s instead
	 * of 382 on soft-RoCE). Ring size and the in-flight budget bound
	 * what is outstanding instead; the route is not needed either.
	 */
	skb_orphan(skb);
	skb_dst_drop(skb);
	/* Release: the slot is filled before the new head is seen. */
	smp_store_release(&tx->head, tx->head + 1);
	if (ib_post_send(tx->qp, &wr, NULL)) {
		WRITE_ONCE(tx->head, tx->head - 1);
		ipng_take_slot(ipd, slot, DMA_TO_DEVICE);
		goto drop_budget;
	}
	ipng_tx_maybe_stop(c);
	return;

drop_budget:
	ipng_tx_budget_put(&ipd->rc_budget);
	ipng_drop(ipd, IPNG_STAT_TX_DROP_POST, 1);
drop:
	dev_kfree_skb_any(skb);
}

/**
 * ipng_cm_tx_done() - completion of a send on a connection
 * @cq: the connected-mode send CQ
 * @wc: the completion
 *
 * NAPI of channel 0. A failed send (other than a flush) feeds a QP error
 * to the connection's state machine through its error work.
 */
void ipng_cm_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_cm_tx *tx = container_of(wc->wr_cqe, struct ipng_cm_tx,
					     cqe);
	struct ipng_cm *cm = tx->cm;
	struct ipng_dev *ipd = cm->ipd;
	struct ipng_chan *c = ipng_chan0(ipd);
	struct ipng_slot *slot = &tx->slots[tx->tail & (cm->tx_size - 1)];
	struct sk_buff *skb;

	if (likely(wc->status == IB_WC_SUCCESS)) {
		skb = ipng_take_slot(ipd, slot, DMA_TO_DEVICE);
		ipng_chan_stat_add(c, &c->stats.tx_packets, 1);
		ipng_chan_stat_add(c, &c->stats.tx_bytes, skb->len - IPNG_HLEN);
		napi_consume_skb(skb, 1);
	} else {
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_ERRORS, 1);
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			netdev_dbg(ipd->ndev, "RC send to QPN 0x%06x: %s\n",
				   tx->key.qpn, ib_wc_status_msg(wc->status));
			queue_work(cm->wq, &tx->error_work);
		}
		/*
		 * The device may still read it (see ipng_tx_slot()): freed
		 * after the QP is destroyed, or when the slot is used again.
		 */
	}
	/* The slot is free before the transmit path can see it free. */
	smp_store_release(&tx->tail, tx->tail + 1);
	ipng_tx_budget_put(&ipd->rc_budget);
	if (unlikely(READ_ONCE(tx->state) != IPNG_CM_LIVE))
		wake_up(&cm->drain_wq);
	ipng_tx_wake_all(ipd);
}

/**
 * ipng_cm_tx_unqueue() - take every packet waiting for @tx
 * @tx: the connection; its send lock or every transmit lock held
 * @list: initialised list the packets are moved to
 *
 * Return: how many were taken.
 */
unsigned int ipng_cm_tx_unqueue(struct ipng_cm_tx *tx,
				struct sk_buff_head *list)
{
	unsigned int n = skb_queue_len(&tx->queue);

	ipng_cm_assert_send_locked(tx);
	skb_queue_splice_tail_init(&tx->queue, list);
	atomic_sub(tx->queued, &tx->cm->queued);
	tx->queued = 0;
	return n;
}

/**
 * ipng_cm_tx_flush_queue() - send what waited for the connection
 * @tx: a connection that just came up; every transmit lock held
 */
void ipng_cm_tx_flush_queue(struct ipng_cm_tx *tx)
{
	struct sk_buff_head list;
	struct sk_buff *skb;

	__skb_queue_head_init(&list);
	ipng_cm_tx_unqueue(tx, &list);
	while ((skb = __skb_dequeue(&list)))
		ipng_cm_send(tx, skb);
}

/* Hold @skb until @tx is up, within the bounds; send lock held. */
static void ipng_cm_tx_wait(struct ipng_cm_tx *tx, struct sk_buff *skb)
{
	struct ipng_cm *cm = tx->cm;

	ipng_cm_assert_send_locked(tx);
	if (!ipng_cm_queue_ok(skb_queue_len(&tx->queue), tx->queued,
			      atomic_read(&cm->queued), skb->truesize)) {
		ipng_drop(cm->ipd, IPNG_STAT_TX_DROP_CM_QUEUE, 1);
		dev_kfree_skb_any(skb);
		return;
	}
	tx->queued += skb->truesize;
	atomic_add(skb->truesize, &cm->queued);
	__skb_queue_tail(&tx->queue, skb);
}

/**
 * ipng_cm_xmit() - send a unicast packet over the peer's connection
 * @ipd: interface in connected mode
 * @skb: packet with the 20-byte link address in front
 * @qpn: the peer's UD QPN
 * @dgid: the peer's GID
 *
 * Transmit context (transmit lock held). Connects on first use, within
 * the caps; packets wait (up to a bound) while the connection is being
 * made.
 *
 * Return: true when @skb was consumed, false when it must go over UD
 * (counted as a fallback).
 */
bool ipng_cm_xmit(struct ipng_dev *ipd, struct sk_buff *skb, u32 qpn,
		  const union ib_gid *dgid)
{
	struct ipng_cm *cm = ipd->cm;
	struct ipng_cm_key key;
	struct ipng_cm_tx *tx;
	bool sent = true;
	u32 mtu;

	ipng_cm_assert_xmit_locked(ipd, skb);
	if (!cm || !READ_ONCE(cm->running))
		goto fallback;
	memset(&key, 0, sizeof(key));
	key.qpn = qpn;
	key.gid = *dgid;

	rcu_read_lock();
	tx = ipng_cm_tx_get(cm, &key);
	if (!tx) {
		rcu_read_unlock();
		goto fallback;
	}
	if (time_after(jiffies, READ_ONCE(tx->last_used)))
		WRITE_ONCE(tx->last_used, jiffies);
	/* Refused before the lock: the ICMP error may come back this way. */
	mtu = tx->mtu;
	if (READ_ONCE(tx->state) == IPNG_CM_LIVE &&
	    unlikely(skb->len - IPNG_HARD_LEN > mtu)) {
		rcu_read_unlock();
		skb_pull(skb, IPNG_ADDR_LEN);
		ipng_too_big(ipd, skb, mtu);
		return true;
	}
	/* Transmit queues of other channels may send to the same peer. */
	spin_lock(&tx->send_lock);
	switch (tx->state) {
	case IPNG_CM_LIVE:
		ipng_cm_send(tx, skb);
		break;
	case IPNG_CM_IDLE:
	case IPNG_CM_REQ_SENT:
		ipng_cm_tx_wait(tx, skb);
		break;
	case IPNG_CM_FAILED:
		/* Time to try again: the entry goes (on the workqueue, where
		 * releases are ordered), a later packet makes a new one.
		 */
		if (time_after(jiffies, tx->retry_at))
			queue_work(cm->wq, &tx->retry_work);
		fallthrough;
	default:
		sent = false;
		break;
	}
	spin_unlock(&tx->send_lock);
	rcu_read_unlock();
	if (sent)
		return true;
fallback:
	ipng_stat_add(ipd->stats, IPNG_STAT_TX_CM_FALLBACK, 1);
	return false;
}
