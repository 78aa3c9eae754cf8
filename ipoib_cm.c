// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode (RFC 4755): reliable-connected (RC) queue pairs next to
 * the UD QP, for unicast to peers whose link address has the RC flag.
 *
 * Connections are one-way, as every Linux IPoIB makes them: a host that
 * sends to a peer connects to the peer's service ID and sends on that
 * connection (an outgoing connection, struct ipng_cm_tx); the peer only
 * receives on it (an incoming connection, struct ipng_cm_rx). Incoming
 * connections receive into a shared receive queue (SRQ) where the device
 * has one, into a queue of their own otherwise; receive buffers are pages,
 * so a 64 KiB packet needs no high-order allocation.
 *
 * The life of a connection is the state machine of ipoib_cm_state.c; this
 * file carries out what it asks. Everything that sleeps (connecting,
 * releasing, the idle reaper, closing all connections) runs on the
 * interface's ordered connection workqueue, so only its release work ever
 * frees a connection and walks on that queue need no references.
 */
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/rhashtable.h>
#include <linux/wait_bit.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_cm.h>

#include "ipoib.h"
#include "ipoib_trace.h"

#define IPNG_CM_FRAGS		DIV_ROUND_UP(IPNG_CM_BUF_LEN, PAGE_SIZE)
#define IPNG_CM_QUEUE_MAX	64	/* packets held while connecting */
#define IPNG_CM_COPYBREAK	256	/* smaller packets are copied */
#define IPNG_CM_HEAD		128	/* bytes copied in front of the pages */
#define IPNG_CM_RETRY		(10 * HZ) /* UD only after a failed connect */
#define IPNG_CM_DRAIN_TIMEOUT	(5 * HZ)
#define IPNG_CM_RX_RING		64	/* receives per connection without SRQ */
#define IPNG_CM_CQ_SPARE	64	/* drain markers and slack */
/* REQ parameters other IPoIB stacks use (see the notes on wire facts). */
#define IPNG_CM_RESOURCES	4
#define IPNG_CM_RESPONSE	20
#define IPNG_CM_MAX_RETRIES	15

static unsigned int ipng_max_connections = 4096;
static unsigned int ipng_cm_idle_timeout = 60;
static bool ipng_cm_srq = true;

static int ipng_param_set_range(const char *val, const struct kernel_param *kp,
				unsigned int min, unsigned int max)
{
	unsigned int v;
	int err;

	err = kstrtouint(val, 0, &v);
	if (err)
		return err;
	if (v < min || v > max)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

static int ipng_max_conn_set(const char *val, const struct kernel_param *kp)
{
	return ipng_param_set_range(val, kp, 0, 65536);
}

static int ipng_idle_set(const char *val, const struct kernel_param *kp)
{
	return ipng_param_set_range(val, kp, 1, 86400);
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

/**
 * struct ipng_cm_key - a peer: its UD QPN and port GID
 * @qpn: UD QPN from its link address
 * @gid: port GID from its link address
 */
struct ipng_cm_key {
	u32 qpn;
	union ib_gid gid;
};

struct ipng_cm_rx;

/**
 * struct ipng_cm_rxbuf - one receive buffer: pages, one SGE each
 * @cqe: completion entry of its receive
 * @rx: the connection it is posted to, NULL when posted to the SRQ
 * @pages: the pages
 * @dma: their DMA addresses
 */
struct ipng_cm_rxbuf {
	struct ib_cqe cqe;
	struct ipng_cm_rx *rx;
	struct page *pages[IPNG_CM_FRAGS];
	u64 dma[IPNG_CM_FRAGS];
};

/**
 * struct ipng_cm_ring - receive buffers of the SRQ or of one connection
 * @bufs: @size buffers
 * @size: number of buffers
 * @posted: buffers currently posted
 */
struct ipng_cm_ring {
	struct ipng_cm_rxbuf *bufs;
	u32 size;
	atomic_t posted;
};

/**
 * struct ipng_cm - connected-mode state of an interface
 * @ipd: the interface
 * @wq: ordered: connects, releases, the reaper and close walks
 * @listen: CM ID listening on our service ID while open
 * @srq: shared receive queue while open, NULL without one
 * @srq_ring: buffers of @srq
 * @nfrags: pages per receive buffer
 * @buf_len: bytes per receive buffer, as advertised to peers
 * @mtu: largest connected-mode MTU (@buf_len less the header)
 * @tx_size: send ring entries per connection; also the cap on sends in
 *	flight over all connections, which the send CQ is sized for
 * @tx_inflight: sends posted and not completed, all connections
 * @rx_max: incoming connections the receive CQ has room for (no SRQ)
 * @txs: outgoing connections by peer (struct ipng_cm_tx)
 * @lock: protects @tx_list, @rx_list, @running and the rx states
 * @tx_list: every outgoing connection
 * @rx_list: every incoming connection
 * @rx_count: entries on @rx_list
 * @rx_seq: spreads incoming connections over the channels
 * @running: open: new connections are made and accepted
 * @req_busy: REQ handlers running (stop waits for them)
 * @budget: the max_connections cap
 * @reap_work: closes idle connections
 * @close_work: closes every connection (stop)
 * @flush_work: closes the outgoing ones (mode change, port event)
 * @drain_wq: woken when a closing connection's sends or receives return
 */
struct ipng_cm {
	struct ipng_dev *ipd;
	struct workqueue_struct *wq;
	struct ib_cm_id *listen;
	struct ib_srq *srq;
	struct ipng_cm_ring srq_ring;
	unsigned int nfrags;
	u32 buf_len;
	int mtu;
	u32 tx_size;
	atomic_t tx_inflight;
	unsigned int rx_max;

	struct rhashtable txs;
	spinlock_t lock;		/* lists, running, rx states */
	struct list_head tx_list;
	struct list_head rx_list;
	unsigned int rx_count;
	atomic_t rx_seq;
	bool running;
	atomic_t req_busy;
	struct ipng_cm_budget budget;

	struct delayed_work reap_work;
	struct work_struct close_work;
	struct work_struct flush_work;
	wait_queue_head_t drain_wq;
};

/**
 * struct ipng_cm_tx - an outgoing connection
 * @node: in &ipng_cm.txs
 * @key: the peer
 * @cm: connected-mode state of the interface
 * @state: state machine; changed under every transmit queue's lock
 * @send_lock: orders transmit queues sending to this peer: taken around
 *	@queue, @head and the ring by the transmit path
 * @queue: packets waiting for the connection
 * @id: CM ID while connecting or connected
 * @qp: the RC QP
 * @mtu: the largest packet the peer receives
 * @budget: holds a max_connections slot
 * @created: jiffies of creation
 * @last_used: jiffies of the last packet, for reaping
 * @retry_at: failed: jiffies after which a new connect is tried
 * @slots: send ring of @cm->tx_size entries
 * @head: next slot to post (@send_lock)
 * @tail: next slot to complete (NAPI)
 * @cqe: completion entry of every send
 * @connect_work: sets the connection up
 * @release_work: destroys its verbs objects; frees it once closing
 * @error_work: feeds a QP error to the state machine
 * @retry_work: closes a failed entry whose retry time has come
 * @list: in &ipng_cm.tx_list
 * @walk: in the list of a walk on the workqueue
 * @rcu: frees it after transmitters are done with it
 */
struct ipng_cm_tx {
	struct rhash_head node;
	struct ipng_cm_key key;
	struct ipng_cm *cm;
	enum ipng_cm_state state;
	spinlock_t send_lock;		/* see above */
	struct sk_buff_head queue;
	struct ib_cm_id *id;
	struct ib_qp *qp;
	u32 mtu;
	bool budget;
	unsigned long created;
	unsigned long last_used;
	unsigned long retry_at;
	struct ipng_slot *slots;
	u32 head;
	u32 tail;
	struct ib_cqe cqe;
	struct work_struct connect_work;
	struct work_struct release_work;
	struct work_struct error_work;
	struct work_struct retry_work;
	struct list_head list;
	struct list_head walk;
	struct rcu_head rcu;
};

/**
 * struct ipng_cm_rx - an incoming connection
 * @cm: connected-mode state of the interface
 * @id: its CM ID
 * @qp: the RC QP
 * @state: state machine, under &ipng_cm.lock
 * @chan: the channel whose NAPI context passes its packets up
 * @addr: the peer's link address, source of every packet received
 * @budget: holds a max_connections slot
 * @created: jiffies of creation
 * @last_rx: jiffies of the last packet, for reaping
 * @ring: its receive buffers when there is no SRQ
 * @drain_cqe: completion entry of the marker that ends a drain
 * @drained: completed by that marker
 * @release_work: drains, destroys and frees it
 * @list: in &ipng_cm.rx_list
 * @walk: in the list of a walk on the workqueue
 */
struct ipng_cm_rx {
	struct ipng_cm *cm;
	struct ib_cm_id *id;
	struct ib_qp *qp;
	enum ipng_cm_state state;
	unsigned int chan;
	u8 addr[IPNG_ADDR_LEN];
	bool budget;
	unsigned long created;
	unsigned long last_rx;
	struct ipng_cm_ring ring;
	struct ib_cqe drain_cqe;
	struct completion drained;
	struct work_struct release_work;
	struct list_head list;
	struct list_head walk;
};

static const struct rhashtable_params ipng_cm_tx_params = {
	.key_len	= sizeof(struct ipng_cm_key),
	.key_offset	= offsetof(struct ipng_cm_tx, key),
	.head_offset	= offsetof(struct ipng_cm_tx, node),
	.automatic_shrinking = true,
};

static bool ipng_cm_take_slot(struct ipng_cm *cm)
{
	WRITE_ONCE(cm->budget.max, READ_ONCE(ipng_max_connections));
	return ipng_cm_budget_take(&cm->budget);
}

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

static void ipng_cm_ring_free(struct ipng_dev *ipd, struct ipng_cm_ring *ring)
{
	u32 i;

	if (!ring->bufs)
		return;
	for (i = 0; i < ring->size; i++)
		ipng_cm_buf_free(ipd, &ring->bufs[i]);
	kvfree(ring->bufs);
	ring->bufs = NULL;
}

/*
 * Fill and post @size buffers to the SRQ (@rx NULL) or to @rx's QP. Fewer
 * than asked is not an error as long as one is posted.
 */
static int ipng_cm_ring_init(struct ipng_dev *ipd, struct ipng_cm_ring *ring,
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

/**
 * ipng_cm_tx_room() - whether the connections may take another send
 * @ipd: interface
 *
 * Return: true while fewer sends than the send CQ holds are in flight.
 */
bool ipng_cm_tx_room(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;

	return !cm || atomic_read(&cm->tx_inflight) < cm->tx_size;
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

	skb_pull(skb, IPNG_ADDR_LEN);
	if (unlikely(skb->len - IPNG_HLEN > tx->mtu)) {
		ipng_too_big(ipd, skb, tx->mtu);
		return;
	}
	if (unlikely(tx->head - READ_ONCE(tx->tail) >= cm->tx_size ||
		     !ipng_cm_tx_room(ipd))) {
		ipng_drop(ipd, IPNG_STAT_TX_DROP_RING_FULL, 1);
		goto drop;
	}
	if (ipng_tx_map(ipd, skb, slot, &sge))
		goto drop_post;
	atomic_inc(&cm->tx_inflight);
	/* Once posted, the send may complete and free @skb at once. */
	skb_tx_timestamp(skb);
	if (ib_post_send(tx->qp, &wr, NULL)) {
		atomic_dec(&cm->tx_inflight);
		ipng_take_slot(ipd, slot, DMA_TO_DEVICE);
		goto drop_post;
	}
	/* The slot is filled before the completion side can see it used. */
	smp_store_release(&tx->head, tx->head + 1);
	ipng_tx_maybe_stop(c);
	return;

drop_post:
	ipng_drop(ipd, IPNG_STAT_TX_DROP_POST, 1);
drop:
	dev_kfree_skb_any(skb);
}

/* Completion of a send on a connection; NAPI of channel 0. */
static void ipng_cm_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_cm_tx *tx = container_of(wc->wr_cqe, struct ipng_cm_tx,
					     cqe);
	struct ipng_cm *cm = tx->cm;
	struct ipng_dev *ipd = cm->ipd;
	struct ipng_chan *c = ipng_chan0(ipd);
	struct ipng_slot *slot = &tx->slots[tx->tail & (cm->tx_size - 1)];
	struct sk_buff *skb = ipng_take_slot(ipd, slot, DMA_TO_DEVICE);

	if (likely(wc->status == IB_WC_SUCCESS)) {
		ipng_chan_stat_add(c, &c->stats.tx_packets, 1);
		ipng_chan_stat_add(c, &c->stats.tx_bytes, skb->len - IPNG_HLEN);
	} else {
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_ERRORS, 1);
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			netdev_dbg(ipd->ndev, "RC send to QPN 0x%06x: %s\n",
				   tx->key.qpn, ib_wc_status_msg(wc->status));
			queue_work(cm->wq, &tx->error_work);
		}
	}
	napi_consume_skb(skb, 1);
	/* The slot is free before the transmit path can see it free. */
	smp_store_release(&tx->tail, tx->tail + 1);
	atomic_dec(&cm->tx_inflight);
	if (unlikely(READ_ONCE(tx->state) != IPNG_CM_LIVE))
		wake_up(&cm->drain_wq);
	ipng_tx_wake_all(ipd);
}

/* ---- outgoing connections ---- */

/* Send what waited for the connection; transmit lock held. */
static void ipng_cm_tx_flush_queue(struct ipng_cm_tx *tx)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(&tx->queue)))
		ipng_cm_send(tx, skb);
}

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

	*old = tx->state;
	WRITE_ONCE(tx->state, ipng_cm_step(*old, event, &act));
	if (act & IPNG_CM_ACT_RETRY_LATER)
		tx->retry_at = jiffies + IPNG_CM_RETRY;
	if (act & IPNG_CM_ACT_FLUSH)
		ipng_cm_tx_flush_queue(tx);
	if (act & IPNG_CM_ACT_FALLBACK) {
		/* Back through the neighbour: the failed entry sends UD. */
		__skb_queue_head_init(&fallback);
		skb_queue_splice_init(&tx->queue, &fallback);
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

static void ipng_cm_tx_event(struct ipng_cm_tx *tx, enum ipng_cm_event event)
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
		.pkey_index	= ipd->pkey_index,
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
	tx->slots = kcalloc(tx->cm->tx_size, sizeof(*tx->slots), GFP_KERNEL);
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

/* Forget a closed connection; transmitters may still look at it. */
static void ipng_cm_tx_unlink(struct ipng_cm_tx *tx)
{
	struct ipng_cm *cm = tx->cm;

	spin_lock_bh(&cm->lock);
	rhashtable_remove_fast(&cm->txs, &tx->node, ipng_cm_tx_params);
	list_del(&tx->list);
	spin_unlock_bh(&cm->lock);
	kfree_rcu(tx, rcu);
}

/*
 * Destroy the verbs objects of a failed or closing connection once its
 * sends have come back; a closing one is then forgotten and freed, a
 * failed one stays as a marker that sends UD until its retry time.
 */
static void ipng_cm_tx_release_work(struct work_struct *work)
{
	struct ipng_cm_tx *tx = container_of(work, struct ipng_cm_tx,
					     release_work);
	struct ipng_cm *cm = tx->cm;
	struct ipng_dev *ipd = cm->ipd;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	unsigned int dropped;

	if (tx->qp) {
		ib_modify_qp(tx->qp, &attr, IB_QP_STATE);
		if (!wait_event_timeout(cm->drain_wq,
					READ_ONCE(tx->tail) == tx->head,
					IPNG_CM_DRAIN_TIMEOUT))
			netdev_warn(ipd->ndev, "RC QP %u: %u sends did not complete\n",
				    tx->qp->qp_num, tx->head - tx->tail);
	}
	if (tx->id) {
		ib_destroy_cm_id(tx->id);
		tx->id = NULL;
	}
	if (tx->qp) {
		ib_destroy_qp(tx->qp);
		tx->qp = NULL;
	}
	cancel_work_sync(&tx->error_work);
	cancel_work_sync(&tx->retry_work);

	netif_tx_lock_bh(ipd->ndev);
	dropped = skb_queue_len(&tx->queue);
	__skb_queue_purge(&tx->queue);
	netif_tx_unlock_bh(ipd->ndev);
	if (dropped)
		ipng_stat_add_bh(ipd->stats, IPNG_STAT_TX_DROP_CM_QUEUE,
				 dropped);
	kfree(tx->slots);
	tx->slots = NULL;
	if (tx->budget) {
		ipng_cm_budget_return(&cm->budget);
		tx->budget = false;
	}
	if (READ_ONCE(tx->state) == IPNG_CM_CLOSING)
		ipng_cm_tx_unlink(tx);
}

/* A new entry for @key from the transmit path, or the existing one. */
static struct ipng_cm_tx *ipng_cm_tx_new(struct ipng_cm *cm,
					 const struct ipng_cm_key *key)
{
	struct ipng_cm_tx *tx, *old;

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
	if (!cm->running) {
		spin_unlock(&cm->lock);
		kfree(tx);
		return NULL;
	}
	old = rhashtable_lookup_get_insert_fast(&cm->txs, &tx->node,
						ipng_cm_tx_params);
	if (old) {
		spin_unlock(&cm->lock);
		kfree(tx);
		return IS_ERR(old) ? NULL : old;
	}
	list_add_tail(&tx->list, &cm->tx_list);
	spin_unlock(&cm->lock);

	tx->budget = ipng_cm_take_slot(cm);
	if (tx->budget) {
		queue_work(cm->wq, &tx->connect_work);
		return tx;
	}
	/* Past the cap: this peer uses UD until the retry time. */
	ipng_stat_add(cm->ipd->stats, IPNG_STAT_CM_CAP, 1);
	tx->state = IPNG_CM_FAILED;
	tx->retry_at = jiffies + IPNG_CM_RETRY;
	return tx;
}

/**
 * ipng_cm_xmit() - send a unicast packet over the peer's connection
 * @ipd: interface in connected mode
 * @skb: packet with the 20-byte link address in front
 * @qpn: the peer's UD QPN
 * @dgid: the peer's GID
 *
 * Transmit context (transmit lock held). Connects on first use; packets
 * wait (up to a bound) while the connection is being made.
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

	if (!cm || !READ_ONCE(cm->running))
		goto fallback;
	memset(&key, 0, sizeof(key));
	key.qpn = qpn;
	key.gid = *dgid;

	rcu_read_lock();
	tx = rhashtable_lookup(&cm->txs, &key, ipng_cm_tx_params);
	if (!tx)
		tx = ipng_cm_tx_new(cm, &key);
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
		if (skb_queue_len(&tx->queue) < IPNG_CM_QUEUE_MAX) {
			__skb_queue_tail(&tx->queue, skb);
		} else {
			ipng_drop(ipd, IPNG_STAT_TX_DROP_CM_QUEUE, 1);
			dev_kfree_skb_any(skb);
		}
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

/* ---- incoming connections ---- */

static void ipng_cm_rx_event(struct ipng_cm_rx *rx, enum ipng_cm_event event)
{
	struct ipng_cm *cm = rx->cm;
	enum ipng_cm_state old, new;
	unsigned int act;

	spin_lock_bh(&cm->lock);
	old = rx->state;
	new = ipng_cm_step(old, event, &act);
	rx->state = new;
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

	complete(&rx->drained);
}

/* Stop @rx's QP: no receive and no QP event (COMM_EST) after this. */
static void ipng_cm_rx_error(struct ipng_cm_rx *rx)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (ib_modify_qp(rx->qp, &attr, IB_QP_STATE))
		netdev_warn(rx->cm->ipd->ndev, "RC QP %u: cannot move to error\n",
			    rx->qp->qp_num);
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
	    !wait_for_completion_timeout(&rx->drained, IPNG_CM_DRAIN_TIMEOUT))
		netdev_warn(ndev, "RC QP %u: drain marker lost\n",
			    rx->qp->qp_num);
	if (rx->ring.bufs &&
	    !wait_event_timeout(cm->drain_wq, !atomic_read(&rx->ring.posted),
				IPNG_CM_DRAIN_TIMEOUT))
		netdev_warn(ndev, "RC QP %u: receives did not flush\n",
			    rx->qp->qp_num);
}

static void ipng_cm_rx_free(struct ipng_cm_rx *rx)
{
	struct ipng_cm *cm = rx->cm;

	if (rx->qp)
		ib_destroy_qp(rx->qp);
	ipng_cm_ring_free(cm->ipd, &rx->ring);
	if (rx->budget)
		ipng_cm_budget_return(&cm->budget);
	kfree(rx);
}

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
	spin_lock_bh(&cm->lock);
	list_del(&rx->list);
	cm->rx_count--;
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

	return ib_create_qp(ipd->pd, &init);
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

/* Room for one more incoming connection (cap, and CQ without an SRQ). */
static bool ipng_cm_rx_admit(struct ipng_cm *cm)
{
	bool ok;

	spin_lock_bh(&cm->lock);
	ok = cm->running && (cm->srq || cm->rx_count < cm->rx_max);
	spin_unlock_bh(&cm->lock);
	return ok;
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
	if (!ipng_cm_rx_admit(cm)) {
		err = -EBUSY;
		goto out;
	}
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
	init_completion(&rx->drained);
	INIT_WORK(&rx->release_work, ipng_cm_rx_release_work);
	ipng_addr_build(rx->addr, IPNG_FLAG_RC, qpn, &req->primary_path->dgid);

	rx->budget = ipng_cm_take_slot(cm);
	if (!rx->budget) {
		ipng_stat_add_bh(ipd->stats, IPNG_STAT_CM_CAP, 1);
		err = -ENOSPC;
		goto err_free;
	}
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
		list_add_tail(&rx->list, &cm->rx_list);
		cm->rx_count++;
		rx->state = IPNG_CM_REP_SENT;
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

static int ipng_cm_rx_handler(struct ib_cm_id *id, const struct ib_cm_event *ev)
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

/* ---- walks on the workqueue ---- */

/*
 * Feed @event to every connection @pick chooses. The walk runs on the
 * ordered workqueue, where the release work that frees connections runs
 * too, so the picked ones stay valid without references.
 */
static void ipng_cm_walk(struct ipng_cm *cm, enum ipng_cm_event event,
			 bool (*pick_tx)(struct ipng_cm_tx *tx),
			 bool (*pick_rx)(struct ipng_cm_rx *rx))
{
	struct ipng_cm_tx *tx, *tx_next;
	struct ipng_cm_rx *rx, *rx_next;
	LIST_HEAD(txs);
	LIST_HEAD(rxs);

	spin_lock_bh(&cm->lock);
	list_for_each_entry(tx, &cm->tx_list, list)
		if (pick_tx && pick_tx(tx))
			list_add_tail(&tx->walk, &txs);
	list_for_each_entry(rx, &cm->rx_list, list)
		if (pick_rx && pick_rx(rx))
			list_add_tail(&rx->walk, &rxs);
	spin_unlock_bh(&cm->lock);

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

static bool ipng_cm_tx_idle(struct ipng_cm_tx *tx)
{
	return time_after(jiffies, READ_ONCE(tx->last_used) + ipng_cm_timeout());
}

/* The sender reaps; a receiver only gives up on twice as long a silence. */
static bool ipng_cm_rx_idle(struct ipng_cm_rx *rx)
{
	return time_after(jiffies,
			  READ_ONCE(rx->last_rx) + 2 * ipng_cm_timeout());
}

static void ipng_cm_reap_work(struct work_struct *work)
{
	struct ipng_cm *cm = container_of(to_delayed_work(work),
					  struct ipng_cm, reap_work);

	/* Once a second: a lowered cm_idle_timeout applies at once. */
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

static void ipng_cm_srq_close(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;

	if (!cm->srq)
		return;
	ib_destroy_srq(cm->srq);
	cm->srq = NULL;
	ipng_cm_ring_free(ipd, &cm->srq_ring);
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
	cm->running = true;
	spin_unlock_bh(&cm->lock);
	queue_delayed_work(cm->wq, &cm->reap_work, HZ);
	return 0;
}

/**
 * ipng_cm_stop() - close every connection and stop listening
 * @ipd: interface; called under RTNL from ndo_stop while NAPI still runs
 *	(drains need completions)
 */
void ipng_cm_stop(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;
	bool empty = false;
	int i;

	if (!cm || !cm->listen)
		return;
	spin_lock_bh(&cm->lock);
	cm->running = false;
	spin_unlock_bh(&cm->lock);
	ib_destroy_cm_id(cm->listen);
	cm->listen = NULL;
	wait_var_event(&cm->req_busy, !atomic_read(&cm->req_busy));
	cancel_delayed_work_sync(&cm->reap_work);

	/* Releases queue behind the close walk; repeat until all are gone. */
	for (i = 0; i < 100; i++) {
		spin_lock_bh(&cm->lock);
		empty = list_empty(&cm->tx_list) && list_empty(&cm->rx_list);
		spin_unlock_bh(&cm->lock);
		if (empty)
			break;
		queue_work(cm->wq, &cm->close_work);
		flush_workqueue(cm->wq);
	}
	if (!empty) {
		/* QPs still attached to the SRQ: it must outlive them. Their
		 * releases finish on the workqueue; the next open reuses the
		 * SRQ, cleanup destroys it after the workqueue.
		 */
		netdev_warn(ipd->ndev, "connections still closing after stop; the shared receive queue is kept\n");
		return;
	}
	ipng_cm_srq_close(ipd);
	atomic_set(&cm->tx_inflight, 0);
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
	rx_cqe = ipng_cm_use_srq(ipd) ? (int)ipng_recv_queue_size : 16384;
	attr.cqe = min(max, rx_cqe + IPNG_CM_CQ_SPARE);
	cm->rx_max = (attr.cqe - IPNG_CM_CQ_SPARE) / IPNG_CM_RX_RING;
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
	atomic_set(&cm->tx_inflight, 0);
	spin_lock_init(&cm->lock);
	INIT_LIST_HEAD(&cm->tx_list);
	INIT_LIST_HEAD(&cm->rx_list);
	atomic_set(&cm->req_busy, 0);
	atomic_set(&cm->budget.count, 0);
	INIT_DELAYED_WORK(&cm->reap_work, ipng_cm_reap_work);
	INIT_WORK(&cm->close_work, ipng_cm_close_work);
	INIT_WORK(&cm->flush_work, ipng_cm_flush_work);
	init_waitqueue_head(&cm->drain_wq);

	err = rhashtable_init(&cm->txs, &ipng_cm_tx_params);
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
	ipd->cm = cm;
	return 0;

err_wq:
	destroy_workqueue(cm->wq);
err_hash:
	rhashtable_destroy(&cm->txs);
err_free:
	kfree(cm);
	return err;
}

/**
 * ipng_cm_cleanup() - free what ipng_cm_init() made; the interface is
 *	stopped (no connection is left)
 * @ipd: interface
 */
void ipng_cm_cleanup(struct ipng_dev *ipd)
{
	struct ipng_cm *cm = ipd->cm;

	if (!cm)
		return;
	destroy_workqueue(cm->wq);
	/* Kept by a stop that left connections closing, now all gone. */
	ipng_cm_srq_close(ipd);
	ipd->cm = NULL;
	ib_destroy_cq(ipd->cm_recv_cq);
	ib_destroy_cq(ipd->cm_send_cq);
	ipd->cm_recv_cq = NULL;
	ipd->cm_send_cq = NULL;
	/* kfree_rcu() of the last entries must not outlive the table. */
	rcu_barrier();
	rhashtable_destroy(&cm->txs);
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
	spin_lock_bh(&cm->lock);
	list_for_each_entry(tx, &cm->tx_list, list) {
		if (queued)
			n += skb_queue_len_lockless(&tx->queue);
		else
			n += READ_ONCE(tx->state) < IPNG_CM_CLOSING;
	}
	if (!queued)
		list_for_each_entry(rx, &cm->rx_list, list)
			n += rx->state < IPNG_CM_CLOSING;
	spin_unlock_bh(&cm->lock);
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
 * mode.
 */
void ipng_cm_dump(struct ipng_dev *ipd, struct seq_file *m)
{
	struct ipng_cm *cm = ipd->cm;
	struct ipng_cm_tx *tx;
	struct ipng_cm_rx *rx;

	seq_puts(m, "# dir qpn gid state rc_qpn mtu idle_s queued age_s\n");
	if (!cm)
		return;
	spin_lock_bh(&cm->lock);
	list_for_each_entry(tx, &cm->tx_list, list)
		seq_printf(m, "tx qpn 0x%06x gid %pI6 state %s rc_qpn 0x%06x mtu %u idle_s %u queued %u age_s %u\n",
			   tx->key.qpn, tx->key.gid.raw,
			   ipng_cm_state_name(READ_ONCE(tx->state)),
			   tx->qp ? tx->qp->qp_num : 0, tx->mtu,
			   ipng_cm_idle_s(READ_ONCE(tx->last_used)),
			   skb_queue_len_lockless(&tx->queue),
			   ipng_cm_idle_s(tx->created));
	list_for_each_entry(rx, &cm->rx_list, list)
		seq_printf(m, "rx qpn 0x%06x gid %pI6 state %s rc_qpn 0x%06x mtu %u idle_s %u queued 0 age_s %u\n",
			   ipng_addr_qpn(rx->addr), rx->addr + IPNG_GID_OFFSET,
			   ipng_cm_state_name(rx->state),
			   rx->qp ? rx->qp->qp_num : 0, cm->mtu,
			   ipng_cm_idle_s(READ_ONCE(rx->last_rx)),
			   ipng_cm_idle_s(rx->created));
	spin_unlock_bh(&cm->lock);
}
