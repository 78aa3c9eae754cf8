// SPDX-License-Identifier: GPL-2.0
/*
 * Datagram (UD) path: the link header the stack builds (header_ops), the
 * UD send work request, the receive ring, its refill and the making of
 * received frames into packets for the stack (which ipoib_chan.c
 * delivers). Send rings, DMA mapping and queue flow control are the
 * transmit layer's (ipoib_tx.c).
 *
 * Every receive slot carries its own struct ib_cqe (one per start
 * parity): a completion names its slot, so the ring works whatever was
 * posted (a partial fill, a failed repost), slots left unposted are
 * refilled from NAPI, and a completion of an earlier start is ignored.
 */
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_pack.h>
#include <kunit/visibility.h>

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
static int ipng_header_parse(const struct sk_buff *skb,
			     const struct net_device *dev, unsigned char *haddr)
{
	memcpy(haddr, skb_mac_header(skb), IPNG_ADDR_LEN);
	return IPNG_ADDR_LEN;
}

IPNG_HEADER_PARSE_ADAPTER(ipng_header_parse);

const struct header_ops ipng_header_ops = {
	.create	= ipng_header_create,
	.parse	= IPNG_HEADER_PARSE(ipng_header_parse),
};
EXPORT_SYMBOL_IF_KUNIT(ipng_header_ops);

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
	struct ib_ud_wr wr = {
		.wr = {
			.num_sge	= 1,
			.opcode		= IB_WR_SEND,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.ah		= ah->ah,
		.remote_qpn	= qpn,
		.remote_qkey	= READ_ONCE(ipd->qkey),
	};
	int mtu = READ_ONCE(ipd->ud_mtu);
	struct ipng_slot *slot;
	struct ib_sge sge;

	if (unlikely(mtu > 0 && skb->len - IPNG_HLEN > mtu)) {
		ipng_too_big(ipd, skb, mtu);
		return;
	}
	slot = ipng_tx_slot(c);
	if (unlikely(!slot)) {
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
	wr.wr.wr_cqe = ipng_tx_claim(c, slot);
	if (ib_post_send(c->qp, &wr.wr, NULL)) {
		/* A UD QP in RTS takes a send while its ring has room. */
		ipng_tx_unclaim(c, slot);
		ipng_chans_error(ipd, c, "send post failed");
		goto drop;
	}
	ipng_tx_maybe_stop(c);
	return;

drop:
	ipng_drop(ipd, IPNG_STAT_TX_DROP_POST, 1);
	dev_kfree_skb_any(skb);
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
		.wr_cqe		= ipng_slot_cqe(slot, c->rx.gen),
		.sg_list	= &sge,
		.num_sge	= 1,
	};
	int err;

	err = ib_post_recv(c->qp, &wr, NULL);
	if (err)
		return err;
	slot->posted = true;
	c->rx.posted++;
	return 0;
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

/**
 * ipng_rx_slot() - the receive slot a completion belongs to
 * @rx: receive ring
 * @cqe: the completion's wr_cqe
 *
 * Return: the slot, which is marked no longer posted, or NULL when @cqe
 * is not a posted slot of @rx in this start (a completion the ring never
 * asked for, or one of an earlier start delivered late).
 */
struct ipng_slot *ipng_rx_slot(struct ipng_rx_ring *rx, struct ib_cqe *cqe)
{
	struct ipng_slot *slot = ipng_slot_of(rx->slots, rx->size, rx->gen, cqe);

	if (!slot || !slot->posted)
		return NULL;
	slot->posted = false;
	rx->posted--;
	return slot;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_rx_slot);

/**
 * ipng_rx_refill_next() - the next receive slot that is not posted
 * @rx: receive ring
 *
 * Walks on from where the last call stopped, so repeated refills visit
 * every slot.
 *
 * Return: the slot, or NULL when every slot is posted.
 */
struct ipng_slot *ipng_rx_refill_next(struct ipng_rx_ring *rx)
{
	u32 i, n;

	if (rx->posted >= rx->size)
		return NULL;
	for (n = 0; n < rx->size; n++) {
		i = rx->refill++ & (rx->size - 1);
		if (!rx->slots[i].posted)
			return &rx->slots[i];
	}
	return NULL;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_rx_refill_next);

/**
 * ipng_ud_refill() - post receive buffers into the slots left empty
 * @c: receiving channel of an open interface; NAPI context or the
 *	channel stopped
 * @max: slots to try at most
 * @gfp: allocation flags for new buffers
 *
 * Return: slots posted; stops at the first failure.
 */
int ipng_ud_refill(struct ipng_chan *c, int max, gfp_t gfp)
{
	struct ipng_slot *slot;
	int done = 0;

	while (done < max && (slot = ipng_rx_refill_next(&c->rx))) {
		if (!slot->skb && ipng_alloc_rx(c, slot, gfp))
			break;
		if (ipng_post_recv(c, slot))
			break;
		done++;
	}
	return done;
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

/**
 * ipng_ud_recv_done() - completion of a UD receive
 * @cq: channel 0's receive CQ
 * @wc: the completion; its wr_cqe is only compared, never followed
 *
 * NAPI context.
 */
void ipng_ud_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_chan *c = cq->cq_context;
	struct ipng_dev *ipd = c->ipd;
	struct ipng_slot *slot = ipng_rx_slot(&c->rx, wc->wr_cqe);
	struct ipng_slot fresh = {};
	struct sk_buff *skb;

	if (unlikely(!slot)) {
		ipng_stat_add(ipd->stats, IPNG_STAT_RX_ERRORS, 1);
		netdev_warn_once(ipd->ndev, "receive completion for no posted buffer\n");
		return;
	}
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status == IB_WC_WR_FLUSH_ERR) {
			/* The QP is in ERROR: on its way to RESET in our own
			 * reset, or else broken, and then recovered. The
			 * buffer stays in its slot for ipng_ud_drain().
			 */
			ipng_chans_error(ipd, c, "receive flushed");
			return;
		}
		ipng_stat_add(ipd->stats, IPNG_STAT_RX_ERRORS, 1);
		netdev_dbg(ipd->ndev, "receive completion: %s\n",
			   ib_wc_status_msg(wc->status));
		goto repost;
	}
	if (!test_bit(IPNG_F_OPEN, &ipd->flags))
		return;
	if (unlikely(wc->byte_len > slot->len)) {
		ipng_stat_add(ipd->stats, IPNG_STAT_RX_ERRORS, 1);
		goto repost;
	}
	/* Keep the old buffer in the ring if no new one can be had. */
	if (ipng_alloc_rx(c, &fresh, GFP_ATOMIC)) {
		ipng_drop(ipd, IPNG_STAT_RX_DROP_NOMEM, 1);
		goto repost;
	}
	skb = ipng_take_slot(ipd, slot, DMA_FROM_DEVICE);
	slot->skb = fresh.skb;
	slot->dma = fresh.dma;
	slot->len = fresh.len;
	ipng_rx_skb(c, skb, wc);

repost:
	/* Not reposted while stopping; a failed repost means the QP left
	 * RTS. Either way the buffer stays for the refill or the drain.
	 */
	if (test_bit(IPNG_F_OPEN, &ipd->flags) && ipng_post_recv(c, slot))
		ipng_chans_error(ipd, c, "receive repost failed");
}

/* ---- rings ---- */

/**
 * ipng_rx_ring_set() - give a channel a receive ring
 * @c: channel whose receive ring is empty (QP reset, CQ drained)
 * @slots: from ipng_ring_alloc(), or NULL
 * @size: its entries
 *
 * The old ring, if any, is freed.
 */
void ipng_rx_ring_set(struct ipng_chan *c, struct ipng_slot *slots, u32 size)
{
	kvfree(c->rx.slots);
	c->rx.slots = slots;
	c->rx.size = slots ? size : 0;
	c->rx.posted = 0;
	c->rx.refill = 0;
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

	txs = ipng_ring_alloc(send_size);
	if (!txs)
		return -ENOMEM;
	if (recv_size) {
		rxs = ipng_ring_alloc(recv_size);
		if (!rxs) {
			kvfree(txs);
			return -ENOMEM;
		}
	}
	ipng_tx_ring_set(c, txs, send_size);
	ipng_rx_ring_set(c, rxs, recv_size);
	return 0;
}

/**
 * ipng_ud_rings_free() - free the rings of a drained channel
 * @c: channel
 */
void ipng_ud_rings_free(struct ipng_chan *c)
{
	ipng_rx_ring_set(c, NULL, 0);
	ipng_tx_ring_set(c, NULL, 0);
}

/**
 * ipng_rx_buf_len() - bytes per UD receive buffer
 * @ipd: interface
 *
 * Receive buffers hold the 40-byte GRH area, the header and the largest
 * datagram the port carries.
 *
 * Return: the length for the current datagram MTU.
 */
u32 ipng_rx_buf_len(struct ipng_dev *ipd)
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
 * buffer. Slots left empty are refilled later from NAPI.
 */
int ipng_ud_fill(struct ipng_chan *c)
{
	struct ipng_rx_ring *rx = &c->rx;

	ipng_tx_ring_reset(c);
	rx->buf_len = ipng_rx_buf_len(c->ipd);
	rx->posted = 0;
	rx->refill = 0;
	rx->gen++;
	if (!rx->size)
		return 0;
	ipng_ud_refill(c, rx->size, GFP_KERNEL);
	if (!rx->posted)
		return -ENOMEM;
	if (rx->posted < rx->size)
		netdev_warn(c->ipd->ndev, "only %u of %u receive buffers posted\n",
			    rx->posted, rx->size);
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
	ipng_ring_drain(c->ipd, c->rx.slots, c->rx.size, DMA_FROM_DEVICE);
	c->rx.posted = 0;
	ipng_ring_drain(c->ipd, c->tx.slots, c->tx.size, DMA_TO_DEVICE);
}
