// SPDX-License-Identifier: GPL-2.0
/*
 * Datagram (UD) path: the link header the stack builds (header_ops), the
 * send ring and its completions, the receive ring, its refill and the
 * delivery of received frames through NAPI and GRO.
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

/* Empty a ring slot: unmap its buffer, drop its address handle. */
static struct sk_buff *ipng_take_slot(struct ipng_dev *ipd,
				      struct ipng_slot *slot,
				      enum dma_data_direction dir)
{
	struct sk_buff *skb = slot->skb;

	ib_dma_unmap_single(ipd->ca, slot->dma, slot->len, dir);
	if (slot->ah)
		ipng_ah_put(slot->ah);
	memset(slot, 0, sizeof(*slot));
	return skb;
}

/* ---- send ---- */

static bool ipng_ud_room(struct ipng_dev *ipd)
{
	struct ipng_tx_ring *tx = &ipd->tx;

	return READ_ONCE(tx->head) - READ_ONCE(tx->tail) < tx->size - 1;
}

/**
 * ipng_tx_room() - whether the next packet finds a free send slot
 * @ipd: interface
 *
 * The one transmit queue feeds the UD ring and the RC connections; it runs
 * only while both have room.
 *
 * Return: true if both have room.
 */
bool ipng_tx_room(struct ipng_dev *ipd)
{
	return ipng_ud_room(ipd) && ipng_cm_tx_room(ipd);
}

/**
 * ipng_tx_maybe_stop() - stop the transmit queue if a ring just filled
 * @ipd: interface
 *
 * Transmit context, after a send was posted (UD or RC).
 */
void ipng_tx_maybe_stop(struct ipng_dev *ipd)
{
	if (ipng_tx_room(ipd))
		return;
	netif_stop_queue(ipd->ndev);
	/* Order the stop before re-reading the rings; pairs with the barrier
	 * in ipng_tx_wake(), which may have freed slots.
	 */
	smp_mb();
	if (ipng_tx_room(ipd))
		netif_wake_queue(ipd->ndev);
}

/**
 * ipng_tx_wake() - restart the transmit queue after send completions
 * @ipd: interface
 *
 * NAPI context, after a completion freed a slot.
 */
void ipng_tx_wake(struct ipng_dev *ipd)
{
	/* Order the freed slot before reading the queue state; pairs with
	 * the barrier after netif_stop_queue() in the send paths.
	 */
	smp_mb();
	if (netif_queue_stopped(ipd->ndev) &&
	    test_bit(IPNG_F_OPEN, &ipd->flags) && ipng_tx_room(ipd))
		netif_wake_queue(ipd->ndev);
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
	ipng_stat_add(ipd->stats, IPNG_STAT_TX_DROP_TOO_BIG, 1);
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
 * ipng_ud_send() - post one packet on the UD send queue
 * @ipd: interface
 * @skb: packet starting at the IPoIB header; consumed
 * @ah: address handle of the destination; a reference is taken for the
 *	time the packet is in flight
 * @qpn: destination QPN
 *
 * Called in transmit context with the queue lock held, or with bottom
 * halves disabled by the code that flushes a resolve queue.
 */
void ipng_ud_send(struct ipng_dev *ipd, struct sk_buff *skb,
		  struct ipng_ah *ah, u32 qpn)
{
	struct ipng_tx_ring *tx = &ipd->tx;
	struct ipng_slot *slot = &tx->slots[tx->head & (tx->size - 1)];
	struct ib_sge sge;
	struct ib_ud_wr wr = {
		.wr = {
			.wr_cqe		= &tx->cqe,
			.sg_list	= &sge,
			.num_sge	= 1,
			.opcode		= IB_WR_SEND,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.ah		= ah->ah,
		.remote_qpn	= qpn,
		.remote_qkey	= READ_ONCE(ipd->qkey),
	};
	int mtu = READ_ONCE(ipd->ud_mtu);
	u64 dma;

	if (unlikely(mtu > 0 && skb->len - IPNG_HLEN > mtu)) {
		ipng_too_big(ipd, skb, mtu);
		return;
	}
	if (unlikely(!ipng_ud_room(ipd))) {
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_DROP_RING_FULL, 1);
		dev_kfree_skb_any(skb);
		return;
	}
	if (skb_linearize(skb))
		goto drop;
	dma = ib_dma_map_single(ipd->ca, skb->data, skb->len, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ipd->ca, dma))
		goto drop;
	sge.addr = dma;
	sge.length = skb->len;
	sge.lkey = ipd->pd->local_dma_lkey;

	slot->skb = skb;
	slot->dma = dma;
	slot->len = skb->len;
	slot->ah = ipng_ah_get(ah);
	if (ib_post_send(ipd->qp, &wr.wr, NULL)) {
		ipng_take_slot(ipd, slot, DMA_TO_DEVICE);
		goto drop;
	}
	skb_tx_timestamp(skb);
	/* The slot is filled before the completion side can see it used. */
	smp_store_release(&tx->head, tx->head + 1);
	ipng_tx_maybe_stop(ipd);
	return;

drop:
	ipng_stat_add(ipd->stats, IPNG_STAT_TX_DROP_POST, 1);
	dev_kfree_skb_any(skb);
}

static void ipng_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_dev *ipd = cq->cq_context;
	struct ipng_tx_ring *tx = &ipd->tx;
	struct ipng_slot *slot = &tx->slots[tx->tail & (tx->size - 1)];
	struct sk_buff *skb = ipng_take_slot(ipd, slot, DMA_TO_DEVICE);

	if (likely(wc->status == IB_WC_SUCCESS)) {
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_PACKETS, 1);
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_BYTES,
			      skb->len - IPNG_HLEN);
	} else {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			netdev_dbg(ipd->ndev, "send completion: %s\n",
				   ib_wc_status_msg(wc->status));
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_ERRORS, 1);
	}
	napi_consume_skb(skb, 1);

	/* The slot is free before the transmit path can see it free. */
	smp_store_release(&tx->tail, tx->tail + 1);
	ipng_tx_wake(ipd);
}

/* ---- receive ---- */

static int ipng_post_recv(struct ipng_dev *ipd, struct ipng_slot *slot)
{
	struct ib_sge sge = {
		.addr	= slot->dma,
		.length	= slot->len,
		.lkey	= ipd->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &ipd->rx.cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	return ib_post_recv(ipd->qp, &wr, NULL);
}

/* Give a slot a fresh, mapped buffer. */
static int ipng_alloc_rx(struct ipng_dev *ipd, struct ipng_slot *slot,
			 gfp_t gfp)
{
	u32 len = ipd->rx.buf_len;
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
static void ipng_rx_skb(struct ipng_dev *ipd, struct sk_buff *skb,
			struct ib_wc *wc)
{
	struct net_device *ndev = ipd->ndev;
	union ib_gid sgid = {}, dgid = {};
	bool own, mcast;
	__be16 proto;
	u8 *src;

	if (wc->byte_len < IB_GRH_BYTES + IPNG_HLEN) {
		ipng_stat_add(ipd->stats, IPNG_STAT_RX_DROP_SHORT, 1);
		goto drop;
	}
	skb_put(skb, wc->byte_len);
	ipng_hdr_parse(skb->data + IB_GRH_BYTES, IPNG_HLEN, &proto);
	if (!ipng_proto_known(proto)) {
		ipng_stat_add(ipd->stats, IPNG_STAT_RX_DROP_PROTO, 1);
		goto drop;
	}
	ipng_rx_gids(ipd, wc, skb->data, &sgid, &dgid);
	mcast = dgid.raw[0] == 0xff;
	own = wc->src_qp == ipd->qp->qp_num &&
	      !memcmp(sgid.raw, ndev->dev_addr + IPNG_GID_OFFSET, 16);
	if (mcast && own) {
		ipng_stat_add(ipd->stats, IPNG_STAT_RX_DROP_OWN_MCAST, 1);
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

	ipng_stat_add(ipd->stats, IPNG_STAT_RX_PACKETS, 1);
	ipng_stat_add(ipd->stats, IPNG_STAT_RX_BYTES, skb->len);
	napi_gro_receive(&ipd->napi, skb);
	return;

drop:
	dev_kfree_skb_any(skb);
}

static void ipng_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_dev *ipd = cq->cq_context;
	struct ipng_rx_ring *rx = &ipd->rx;
	struct ipng_slot *slot = &rx->slots[rx->tail & (rx->size - 1)];
	struct sk_buff *skb = slot->skb;
	struct ipng_slot fresh = {};

	rx->tail++;
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			ipng_stat_add(ipd->stats, IPNG_STAT_RX_ERRORS, 1);
			netdev_dbg(ipd->ndev, "receive completion: %s\n",
				   ib_wc_status_msg(wc->status));
		}
		goto repost;
	}
	if (!test_bit(IPNG_F_OPEN, &ipd->flags))
		goto repost;
	/* Keep the old buffer in the ring if no new one can be had. */
	if (ipng_alloc_rx(ipd, &fresh, GFP_ATOMIC)) {
		ipng_stat_add(ipd->stats, IPNG_STAT_RX_DROP_NOMEM, 1);
		goto repost;
	}
	ipng_take_slot(ipd, slot, DMA_FROM_DEVICE);
	*slot = fresh;
	ipng_rx_skb(ipd, skb, wc);

repost:
	if (!test_bit(IPNG_F_OPEN, &ipd->flags) || ipng_post_recv(ipd, slot)) {
		/* The slot stays empty; ipng_ud_stop() frees its buffer. */
		return;
	}
	rx->head++;
}

/* ---- NAPI ---- */

/* NAPI only: the completion batch lives in the interface. */
static int ipng_poll_cq(struct ipng_dev *ipd, struct ib_cq *cq, int budget)
{
	struct ib_wc *wcs = ipd->wcs;
	int done = 0, n, i;

	while (done < budget) {
		n = ib_poll_cq(cq, min_t(int, IPNG_WC_BATCH, budget - done),
			       wcs);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++)
			wcs[i].wr_cqe->done(cq, &wcs[i]);
		done += n;
	}
	return done;
}

/* Re-arm @cq (if any); true if completions arrived meanwhile. */
static bool ipng_rearm(struct ib_cq *cq)
{
	return cq && ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				      IB_CQ_REPORT_MISSED_EVENTS) > 0;
}

static int ipng_napi_poll(struct napi_struct *napi, int budget)
{
	struct ipng_dev *ipd = container_of(napi, struct ipng_dev, napi);
	int done;

	/* Send completions are cheap and free ring slots: take them all. */
	ipng_poll_cq(ipd, ipd->send_cq, INT_MAX);
	if (ipd->cm_send_cq)
		ipng_poll_cq(ipd, ipd->cm_send_cq, INT_MAX);
	done = ipng_poll_cq(ipd, ipd->recv_cq, budget);
	if (ipd->cm_recv_cq && done < budget)
		done += ipng_poll_cq(ipd, ipd->cm_recv_cq, budget - done);
	if (done >= budget)
		return budget;

	if (napi_complete_done(napi, done)) {
		/* A completion that raced with the re-arm is not lost. */
		if (ipng_rearm(ipd->recv_cq) || ipng_rearm(ipd->send_cq) ||
		    ipng_rearm(ipd->cm_recv_cq) || ipng_rearm(ipd->cm_send_cq))
			napi_schedule(napi);
	}
	return done;
}

/**
 * ipng_ud_cq_event() - completion handler of both CQs: schedule NAPI
 * @cq: the CQ with new completions
 * @context: the interface
 */
void ipng_ud_cq_event(struct ib_cq *cq, void *context)
{
	struct ipng_dev *ipd = context;

	napi_schedule(&ipd->napi);
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
 * ipng_ud_init() - allocate the rings of an interface
 * @ipd: interface whose QP exists
 * @send_size: send ring entries (power of two)
 * @recv_size: receive ring entries (power of two)
 *
 * Return: 0 or -ENOMEM.
 */
int ipng_ud_init(struct ipng_dev *ipd, u32 send_size, u32 recv_size)
{
	ipd->tx.slots = kcalloc(send_size, sizeof(*ipd->tx.slots), GFP_KERNEL);
	if (!ipd->tx.slots)
		return -ENOMEM;
	ipd->rx.slots = kcalloc(recv_size, sizeof(*ipd->rx.slots), GFP_KERNEL);
	if (!ipd->rx.slots) {
		kfree(ipd->tx.slots);
		ipd->tx.slots = NULL;
		return -ENOMEM;
	}
	ipd->tx.size = send_size;
	ipd->rx.size = recv_size;
	ipd->tx.cqe.done = ipng_tx_done;
	ipd->rx.cqe.done = ipng_rx_done;
	netif_napi_add(ipd->ndev, &ipd->napi, ipng_napi_poll);
	return 0;
}

/**
 * ipng_ud_cleanup() - free the rings; the interface is stopped
 * @ipd: interface
 */
void ipng_ud_cleanup(struct ipng_dev *ipd)
{
	if (!ipd->tx.slots)
		return;
	netif_napi_del(&ipd->napi);
	kfree(ipd->rx.slots);
	kfree(ipd->tx.slots);
	ipd->rx.slots = NULL;
	ipd->tx.slots = NULL;
}

/**
 * ipng_ud_start() - fill the receive ring and start NAPI
 * @ipd: interface whose QP is in RTS
 *
 * Return: 0, or -ENOMEM when not even one receive buffer could be posted.
 */
int ipng_ud_start(struct ipng_dev *ipd)
{
	struct ipng_rx_ring *rx = &ipd->rx;
	u32 i;

	rx->buf_len = ipng_rx_buf_len(ipd);
	rx->head = 0;
	rx->tail = 0;
	ipd->tx.head = 0;
	ipd->tx.tail = 0;
	for (i = 0; i < rx->size; i++) {
		if (ipng_alloc_rx(ipd, &rx->slots[i], GFP_KERNEL))
			break;
		if (ipng_post_recv(ipd, &rx->slots[i])) {
			ipng_free_slots(ipd, &rx->slots[i], 1, DMA_FROM_DEVICE);
			break;
		}
		rx->head++;
	}
	if (!rx->head)
		return -ENOMEM;
	if (rx->head < rx->size)
		netdev_warn(ipd->ndev, "only %u of %u receive buffers posted\n",
			    rx->head, rx->size);
	napi_enable(&ipd->napi);
	ib_req_notify_cq(ipd->recv_cq, IB_CQ_NEXT_COMP);
	ib_req_notify_cq(ipd->send_cq, IB_CQ_NEXT_COMP);
	return 0;
}

/*
 * Throw away what is left in a CQ of a QP that has been reset. NAPI is
 * disabled, so its completion batch is free to use.
 */
static void ipng_discard_cq(struct ipng_dev *ipd, struct ib_cq *cq)
{
	while (ib_poll_cq(cq, IPNG_WC_BATCH, ipd->wcs) > 0)
		;
}

/**
 * ipng_ud_stop() - stop NAPI and free every buffer
 * @ipd: interface whose QP has just been moved to RESET
 *
 * With the QP in RESET the device no longer touches the buffers, so they
 * are freed directly; completions still queued in the CQs are discarded.
 */
void ipng_ud_stop(struct ipng_dev *ipd)
{
	napi_disable(&ipd->napi);
	ipng_discard_cq(ipd, ipd->recv_cq);
	ipng_discard_cq(ipd, ipd->send_cq);
	/* ipng_cm_stop() drained the connections; nothing is left there. */
	if (ipd->cm_recv_cq)
		ipng_discard_cq(ipd, ipd->cm_recv_cq);
	if (ipd->cm_send_cq)
		ipng_discard_cq(ipd, ipd->cm_send_cq);
	ipng_free_slots(ipd, ipd->rx.slots, ipd->rx.size, DMA_FROM_DEVICE);
	ipng_free_slots(ipd, ipd->tx.slots, ipd->tx.size, DMA_TO_DEVICE);
}
