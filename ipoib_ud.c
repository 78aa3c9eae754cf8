// SPDX-License-Identifier: GPL-2.0
/*
 * Datagram (UD) path: the link header the stack builds (header_ops), a
 * channel's send ring and its completions, the receive ring, its refill
 * and the making of received frames into packets for the stack (which
 * ipoib_chan.c delivers), and the transmit queue flow control shared with
 * connected mode.
 *
 * Both rings complete in order (a work queue of one QP does), so each ring
 * keeps a producer and a consumer index and one struct ib_cqe: a
 * completion always belongs to the slot at the consumer index.
 */
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <net/icmp.h>
#include <net/ip.h>
#include <linux/icmpv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_pack.h>

#include "ipoib.h"

/*
 * header_ops->create: the link header is the 20-byte destination followed
 * by the 4-byte IPoIB header. ndo_start_xmit takes the destination off and
 * sends the rest.
 */
static int ipng_header_create(struct sk_buff *skb, struct net_device *ndev,
			      unsigned short type, const void *daddr,
			      const void *saddr, unsigned int len)
{
	u8 *hdr;

	hdr = skb_push(skb, IPNG_HARD_LEN);
	ipng_hdr_push_proto(hdr + IPNG_ADDR_LEN, htons(type));
	if (!daddr) {
		memset(hdr, 0, IPNG_ADDR_LEN);
		return -(int)IPNG_HARD_LEN;
	}
	memcpy(hdr, daddr, IPNG_ADDR_LEN);
	return IPNG_HARD_LEN;
}

/* header_ops->parse: on receive the link header holds the source address. */
static int ipng_header_parse(const struct sk_buff *skb, unsigned char *haddr)
{
	memcpy(haddr, skb_mac_header(skb), IPNG_ADDR_LEN);
	return IPNG_ADDR_LEN;
}

const struct header_ops ipng_header_ops = {
	.create	= ipng_header_create,
	.parse	= ipng_header_parse,
};

/**
 * ipng_take_slot() - empty a ring slot
 * @ipd: interface
 * @slot: the slot; unmapped, its address handle (if any) dropped
 * @dir: direction it was mapped for
 *
 * Return: the buffer the slot held.
 */
struct sk_buff *ipng_take_slot(struct ipng_dev *ipd, struct ipng_slot *slot,
			       enum dma_data_direction dir)
{
	struct sk_buff *skb = slot->skb;

	ib_dma_unmap_single(ipd->ca, slot->dma, slot->len, dir);
	if (slot->ah)
		ipng_ah_put(slot->ah);
	memset(slot, 0, sizeof(*slot));
	return skb;
}

/**
 * ipng_tx_map() - map a packet for a send and put it into a ring slot
 * @ipd: interface
 * @skb: the packet; made linear
 * @slot: an empty slot of a send ring
 * @sge: filled with the mapped packet
 *
 * Return: 0, or -ENOMEM when the packet could not be made linear or
 * mapped (the slot stays empty).
 */
int ipng_tx_map(struct ipng_dev *ipd, struct sk_buff *skb,
		struct ipng_slot *slot, struct ib_sge *sge)
{
	u64 dma;

	if (skb_linearize(skb))
		return -ENOMEM;
	dma = ib_dma_map_single(ipd->ca, skb->data, skb->len, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ipd->ca, dma))
		return -ENOMEM;
	sge->addr = dma;
	sge->length = skb->len;
	sge->lkey = ipd->pd->local_dma_lkey;
	slot->skb = skb;
	slot->dma = dma;
	slot->len = skb->len;
	return 0;
}

/* ---- send ---- */

static bool ipng_ud_room(struct ipng_chan *c)
{
	struct ipng_tx_ring *tx = &c->tx;

	return READ_ONCE(tx->head) - READ_ONCE(tx->tail) < tx->size - 1;
}

/*
 * A transmit queue feeds its channel's UD ring and the RC connections; it
 * runs only while both have room.
 */
static bool ipng_tx_room(struct ipng_chan *c)
{
	return ipng_ud_room(c) && ipng_cm_tx_room(c->ipd);
}

/**
 * ipng_tx_chan() - the channel a packet in transmit context belongs to
 * @ipd: interface
 * @skb: packet; its queue mapping is the transmit queue whose lock is held
 *
 * Return: the channel of that queue.
 */
struct ipng_chan *ipng_tx_chan(struct ipng_dev *ipd, struct sk_buff *skb)
{
	unsigned int q = skb_get_queue_mapping(skb);

	/* The stack never hands out a queue past the real count, which
	 * changes only while every queue is stopped.
	 */
	if (unlikely(q >= READ_ONCE(ipd->nchans)))
		q = 0;
	return ipng_chan(ipd, q);
}

/**
 * ipng_tx_maybe_stop() - stop a transmit queue if its rings just filled
 * @c: the channel whose transmit queue sent
 *
 * Transmit context, after a send was posted (UD or RC).
 */
void ipng_tx_maybe_stop(struct ipng_chan *c)
{
	struct netdev_queue *txq = netdev_get_tx_queue(c->ipd->ndev, c->index);

	if (ipng_tx_room(c))
		return;
	netif_tx_stop_queue(txq);
	/* Order the stop before re-reading the rings; pairs with the barrier
	 * in ipng_tx_wake(), which may have freed slots.
	 */
	smp_mb();
	if (ipng_tx_room(c))
		netif_tx_wake_queue(txq);
}

/**
 * ipng_tx_wake() - restart a transmit queue after send completions
 * @c: channel whose ring (or the connections) got room
 *
 * NAPI context, after a completion freed a slot.
 */
void ipng_tx_wake(struct ipng_chan *c)
{
	struct ipng_dev *ipd = c->ipd;
	struct netdev_queue *txq = netdev_get_tx_queue(ipd->ndev, c->index);

	/* Order the freed slot before reading the queue state; pairs with
	 * the barrier after netif_tx_stop_queue() in the send paths.
	 */
	smp_mb();
	if (netif_tx_queue_stopped(txq) &&
	    test_bit(IPNG_F_OPEN, &ipd->flags) &&
	    !test_bit(IPNG_F_QUIESCED, &ipd->flags) && ipng_tx_room(c))
		netif_tx_wake_queue(txq);
}

/**
 * ipng_tx_wake_all() - restart every transmit queue that has room again
 * @ipd: interface
 *
 * NAPI context, after RC send completions (the connections are shared by
 * all transmit queues).
 */
void ipng_tx_wake_all(struct ipng_dev *ipd)
{
	unsigned int i, n = READ_ONCE(ipd->nchans);

	for (i = 0; i < n; i++)
		ipng_tx_wake(ipng_chan(ipd, i));
}

/**
 * ipng_tx_depth() - sends posted on a channel and not yet completed
 * @c: channel
 *
 * Return: the number of busy send slots; any context.
 */
u32 ipng_tx_depth(struct ipng_chan *c)
{
	/* The tail never passes the head: read it first (acquire orders
	 * the head read after it), so that head - tail cannot go negative.
	 */
	u32 tail = smp_load_acquire(&c->tx.tail);

	return min_t(u32, READ_ONCE(c->tx.head) - tail, c->tx.size);
}

/**
 * ipng_too_big() - refuse a packet larger than the way it must take
 * @ipd: interface
 * @skb: the packet (IPoIB header first); consumed
 * @mtu: the largest packet that way carries
 *
 * The sender learns the limit from an ICMP "fragmentation needed" or
 * ICMPv6 "packet too big", so TCP lowers its segment size. Transmit
 * context.
 */
void ipng_too_big(struct ipng_dev *ipd, struct sk_buff *skb,
		  unsigned int mtu)
{
	ipng_drop(ipd, IPNG_STAT_TX_DROP_TOO_BIG, 1);
	skb_pull(skb, IPNG_HLEN);
	if (skb->protocol == htons(ETH_P_IP) &&
	    pskb_network_may_pull(skb, sizeof(struct iphdr))) {
		skb_dst_update_pmtu_no_confirm(skb, mtu);
		icmp_ndo_send(skb, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED,
			      htonl(mtu));
	} else if (skb->protocol == htons(ETH_P_IPV6) &&
		   pskb_network_may_pull(skb, sizeof(struct ipv6hdr))) {
		skb_dst_update_pmtu_no_confirm(skb, mtu);
		icmpv6_ndo_send(skb, ICMPV6_PKT_TOOBIG, 0, mtu);
	}
	dev_kfree_skb_any(skb);
}

/**
 * ipng_ud_send() - post one packet on a UD send queue
 * @ipd: interface
 * @skb: packet starting at the IPoIB header; consumed
 * @ah: address handle of the destination; a reference is taken for the
 *	time the packet is in flight
 * @qpn: destination QPN
 *
 * Transmit context: the lock of the packet's transmit queue is held, and
 * the packet goes out on that queue's channel.
 */
void ipng_ud_send(struct ipng_dev *ipd, struct sk_buff *skb,
		  struct ipng_ah *ah, u32 qpn)
{
	struct ipng_chan *c = ipng_tx_chan(ipd, skb);
	struct ipng_tx_ring *tx = &c->tx;
	struct ipng_slot *slot = &tx->slots[tx->head & (tx->size - 1)];
	struct ib_ud_wr wr = {
		.wr = {
			.wr_cqe		= &tx->cqe,
			.num_sge	= 1,
			.opcode		= IB_WR_SEND,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.ah		= ah->ah,
		.remote_qpn	= qpn,
		.remote_qkey	= READ_ONCE(ipd->qkey),
	};
	int mtu = READ_ONCE(ipd->ud_mtu);
	struct ib_sge sge;

	if (unlikely(mtu > 0 && skb->len - IPNG_HLEN > mtu)) {
		ipng_too_big(ipd, skb, mtu);
		return;
	}
	if (unlikely(!ipng_ud_room(c))) {
		ipng_drop(ipd, IPNG_STAT_TX_DROP_RING_FULL, 1);
		dev_kfree_skb_any(skb);
		return;
	}
	if (ipng_tx_map(ipd, skb, slot, &sge))
		goto drop;
	slot->ah = ipng_ah_get(ah);
	wr.wr.sg_list = &sge;
	/* Once posted, the send may complete and free @skb at once. */
	skb_tx_timestamp(skb);
	if (ib_post_send(c->qp, &wr.wr, NULL)) {
		ipng_take_slot(ipd, slot, DMA_TO_DEVICE);
		goto drop;
	}
	/* The slot is filled before the completion side can see it used. */
	smp_store_release(&tx->head, tx->head + 1);
	ipng_tx_maybe_stop(c);
	return;

drop:
	ipng_drop(ipd, IPNG_STAT_TX_DROP_POST, 1);
	dev_kfree_skb_any(skb);
}

static void ipng_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_chan *c = cq->cq_context;
	struct ipng_dev *ipd = c->ipd;
	struct ipng_tx_ring *tx = &c->tx;
	struct ipng_slot *slot = &tx->slots[tx->tail & (tx->size - 1)];
	struct sk_buff *skb = ipng_take_slot(ipd, slot, DMA_TO_DEVICE);

	if (likely(wc->status == IB_WC_SUCCESS)) {
		ipng_chan_stat_add(c, &c->stats.tx_packets, 1);
		ipng_chan_stat_add(c, &c->stats.tx_bytes, skb->len - IPNG_HLEN);
	} else if (wc->status != IB_WC_WR_FLUSH_ERR) {
		/* A flush is our own reset of the channels: lost, not failed. */
		netdev_dbg(ipd->ndev, "send completion: %s\n",
			   ib_wc_status_msg(wc->status));
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_ERRORS, 1);
	}
	napi_consume_skb(skb, 1);

	/* The slot is free before the transmit path can see it free. */
	smp_store_release(&tx->tail, tx->tail + 1);
	ipng_tx_wake(c);
}

/* ---- receive ---- */

static int ipng_post_recv(struct ipng_chan *c, struct ipng_slot *slot)
{
	struct ib_sge sge = {
		.addr	= slot->dma,
		.length	= slot->len,
		.lkey	= c->ipd->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &c->rx.cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	return ib_post_recv(c->qp, &wr, NULL);
}

/* Give a slot a fresh, mapped buffer. */
static int ipng_alloc_rx(struct ipng_chan *c, struct ipng_slot *slot,
			 gfp_t gfp)
{
	struct ipng_dev *ipd = c->ipd;
	u32 len = c->rx.buf_len;
	struct sk_buff *skb;
	u64 dma;

	skb = __netdev_alloc_skb(ipd->ndev, len, gfp);
	if (!skb)
		return -ENOMEM;
	dma = ib_dma_map_single(ipd->ca, skb->data, len, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ipd->ca, dma)) {
		dev_kfree_skb_any(skb);
		return -ENOMEM;
	}
	slot->skb = skb;
	slot->dma = dma;
	slot->len = len;
	return 0;
}

/*
 * Source and destination GIDs of a received datagram, from the GRH area
 * (on RoCE v2 the IPv4 or IPv6 header). False when there is no GRH.
 */
static bool ipng_rx_gids(struct ipng_dev *ipd, struct ib_wc *wc,
			 const void *grh, union ib_gid *sgid,
			 union ib_gid *dgid)
{
	const union rdma_network_hdr *hdr = grh;
	enum rdma_network_type type;

	if (!(wc->wc_flags & IB_WC_GRH))
		return false;
	if (wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE)
		type = wc->network_hdr_type;
	else if (rdma_protocol_ib(ipd->ca, ipd->port))
		type = RDMA_NETWORK_IB;
	else
		type = ib_get_rdma_header_version(hdr);
	return !ib_get_gids_from_rdma_hdr(hdr, type, sgid, dgid);
}

/*
 * Turn a received buffer into an skb for the stack: the GRH area becomes
 * headroom, except its last 20 bytes, which take the sender's link address
 * so that the 24-byte link header looks like the one we send.
 */
static void ipng_rx_skb(struct ipng_chan *c, struct sk_buff *skb,
			struct ib_wc *wc)
{
	struct ipng_dev *ipd = c->ipd;
	struct net_device *ndev = ipd->ndev;
	union ib_gid sgid = {}, dgid = {};
	bool own, mcast;
	__be16 proto;
	u8 *src;

	if (wc->byte_len < IB_GRH_BYTES + IPNG_HLEN) {
		ipng_drop(ipd, IPNG_STAT_RX_DROP_SHORT, 1);
		goto drop;
	}
	skb_put(skb, wc->byte_len);
	ipng_hdr_parse(skb->data + IB_GRH_BYTES, IPNG_HLEN, &proto);
	if (!ipng_proto_known(proto)) {
		ipng_drop(ipd, IPNG_STAT_RX_DROP_PROTO, 1);
		goto drop;
	}
	ipng_rx_gids(ipd, wc, skb->data, &sgid, &dgid);
	mcast = dgid.raw[0] == 0xff;
	own = mcast &&
	      !memcmp(sgid.raw, ndev->dev_addr + IPNG_GID_OFFSET, 16) &&
	      ipng_own_qpn(ipd, wc->src_qp);
	if (own) {
		ipng_drop(ipd, IPNG_STAT_RX_DROP_OWN_MCAST, 1);
		goto drop;
	}

	src = skb->data + IB_GRH_BYTES - IPNG_ADDR_LEN;
	ipng_addr_build(src, 0, wc->src_qp, &sgid);
	skb_pull(skb, IB_GRH_BYTES - IPNG_ADDR_LEN);
	skb_reset_mac_header(skb);
	skb_pull(skb, IPNG_HARD_LEN);
	skb_reset_network_header(skb);
	skb->protocol = proto;
	skb->dev = ndev;
	if (!mcast)
		skb->pkt_type = PACKET_HOST;
	else if (!memcmp(dgid.raw, ndev->broadcast + IPNG_GID_OFFSET, 16))
		skb->pkt_type = PACKET_BROADCAST;
	else
		skb->pkt_type = PACKET_MULTICAST;
	ipng_chan_rx(c, skb, -1);
	return;

drop:
	dev_kfree_skb_any(skb);
}

static void ipng_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_chan *c = cq->cq_context;
	struct ipng_dev *ipd = c->ipd;
	struct ipng_rx_ring *rx = &c->rx;
	struct ipng_slot *slot = &rx->slots[rx->tail & (rx->size - 1)];
	struct sk_buff *skb = slot->skb;
	struct ipng_slot fresh = {};

	rx->tail++;
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		/* Flushed: the QP is in ERROR, on its way to RESET; the
		 * buffer stays in its slot for ipng_ud_drain().
		 */
		if (wc->status == IB_WC_WR_FLUSH_ERR)
			return;
		ipng_stat_add(ipd->stats, IPNG_STAT_RX_ERRORS, 1);
		netdev_dbg(ipd->ndev, "receive completion: %s\n",
			   ib_wc_status_msg(wc->status));
		goto repost;
	}
	if (!test_bit(IPNG_F_OPEN, &ipd->flags))
		goto repost;
	/* Keep the old buffer in the ring if no new one can be had. */
	if (ipng_alloc_rx(c, &fresh, GFP_ATOMIC)) {
		ipng_drop(ipd, IPNG_STAT_RX_DROP_NOMEM, 1);
		goto repost;
	}
	ipng_take_slot(ipd, slot, DMA_FROM_DEVICE);
	*slot = fresh;
	ipng_rx_skb(c, skb, wc);

repost:
	if (!test_bit(IPNG_F_OPEN, &ipd->flags) || ipng_post_recv(c, slot)) {
		/* The slot stays empty; ipng_ud_drain() frees its buffer. */
		return;
	}
	rx->head++;
}

/* ---- rings ---- */

static void ipng_free_slots(struct ipng_dev *ipd, struct ipng_slot *slots,
			    u32 size, enum dma_data_direction dir)
{
	u32 i;

	for (i = 0; i < size; i++) {
		if (slots[i].skb)
			dev_kfree_skb_any(ipng_take_slot(ipd, &slots[i], dir));
	}
}

/**
 * ipng_ud_rings_alloc() - allocate the (empty) rings of a channel
 * @c: channel
 * @send_size: send ring entries (power of two)
 * @recv_size: receive ring entries (power of two), 0 for a channel that
 *	does not receive
 *
 * Replaces the rings the channel had, which must be empty (its QP reset
 * and drained); on failure the old rings stay.
 *
 * Return: 0 or -ENOMEM.
 */
int ipng_ud_rings_alloc(struct ipng_chan *c, u32 send_size, u32 recv_size)
{
	struct ipng_slot *txs, *rxs = NULL;

	txs = kcalloc(send_size, sizeof(*txs), GFP_KERNEL);
	if (!txs)
		return -ENOMEM;
	if (recv_size) {
		rxs = kcalloc(recv_size, sizeof(*rxs), GFP_KERNEL);
		if (!rxs) {
			kfree(txs);
			return -ENOMEM;
		}
	}
	ipng_ud_rings_free(c);
	c->tx.slots = txs;
	c->tx.size = send_size;
	c->rx.slots = rxs;
	c->rx.size = recv_size;
	c->tx.cqe.done = ipng_tx_done;
	c->rx.cqe.done = ipng_rx_done;
	return 0;
}

/**
 * ipng_ud_rings_free() - free the rings of a drained channel
 * @c: channel
 */
void ipng_ud_rings_free(struct ipng_chan *c)
{
	kfree(c->rx.slots);
	kfree(c->tx.slots);
	c->rx.slots = NULL;
	c->tx.slots = NULL;
	c->rx.size = 0;
	c->tx.size = 0;
}

/*
 * Receive buffers hold the 40-byte GRH area, the header and the largest
 * datagram the port carries.
 */
static u32 ipng_rx_buf_len(struct ipng_dev *ipd)
{
	int mtu = READ_ONCE(ipd->ud_mtu);

	if (mtu <= 0)
		mtu = ipng_ud_mtu(IB_MTU_4096);
	return IB_GRH_BYTES + IPNG_HLEN + mtu;
}

/**
 * ipng_ud_fill() - reset a channel's rings and post its receive buffers
 * @c: channel whose QP is in RTS
 *
 * Return: 0, or -ENOMEM when a receiving channel could not post even one
 * buffer.
 */
int ipng_ud_fill(struct ipng_chan *c)
{
	struct ipng_rx_ring *rx = &c->rx;
	u32 i;

	rx->buf_len = ipng_rx_buf_len(c->ipd);
	rx->head = 0;
	rx->tail = 0;
	c->tx.head = 0;
	c->tx.tail = 0;
	c->tx.seen_tail = 0;
	c->tx.seen_at = jiffies;
	if (!rx->size)
		return 0;
	for (i = 0; i < rx->size; i++) {
		if (ipng_alloc_rx(c, &rx->slots[i], GFP_KERNEL))
			break;
		if (ipng_post_recv(c, &rx->slots[i])) {
			ipng_free_slots(c->ipd, &rx->slots[i], 1,
					DMA_FROM_DEVICE);
			break;
		}
		rx->head++;
	}
	if (!rx->head)
		return -ENOMEM;
	if (rx->head < rx->size)
		netdev_warn(c->ipd->ndev, "only %u of %u receive buffers posted\n",
			    rx->head, rx->size);
	return 0;
}

/**
 * ipng_ud_drain() - free every buffer of a channel's rings
 * @c: channel whose QP has been moved to RESET and whose CQs were emptied
 *
 * With the QP in RESET the device no longer touches the buffers, so they
 * are freed directly.
 */
void ipng_ud_drain(struct ipng_chan *c)
{
	ipng_free_slots(c->ipd, c->rx.slots, c->rx.size, DMA_FROM_DEVICE);
	ipng_free_slots(c->ipd, c->tx.slots, c->tx.size, DMA_TO_DEVICE);
}
