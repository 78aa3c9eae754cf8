// SPDX-License-Identifier: GPL-2.0
/*
 * The transmit layer under both datagram (UD) and connected (RC) sends:
 * ring slots and their DMA mapping, the channel's UD send ring and its
 * completions, the stop and wake of the netdev's transmit queues, and the
 * "too big" answer to a packet larger than its way. ipoib_ud.c and the
 * connected-mode files post their own work requests and call only into
 * this file for the rest; neither calls the other.
 *
 * Flow control: a transmit queue feeds its channel's UD send ring and the
 * RC connections. The UD ring belongs to one queue, so only that queue
 * stops when it fills. The RC connections share one send CQ and hence one
 * in-flight budget for the whole interface (struct ipng_tx_budget, kept
 * here); when that budget runs out every transmit queue stops, since any
 * of them may be the next to send on a connection, and RC completions wake
 * them all.
 */
#include <kunit/visibility.h>
#include <linux/icmpv6.h>
#include <linux/ipv6.h>
#include <linux/mm.h>
#include <net/icmp.h>
#include <net/ip.h>

#include "ipoib.h"

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
	slot->skb = NULL;
	slot->dma = 0;
	slot->len = 0;
	slot->ah = NULL;
	slot->posted = false;
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

/* ---- queue flow control ---- */

static bool ipng_tx_ring_room(struct ipng_chan *c)
{
	struct ipng_tx_ring *tx = &c->tx;

	return READ_ONCE(tx->head) - READ_ONCE(tx->tail) < tx->size - 1;
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
 * ipng_tx_budget_init() - (re)start an in-flight budget
 * @b: the budget
 * @size: sends it allows at once; 0: no limit (nothing shares the CQ)
 *
 * Only while nothing it counts is in flight: before the first send, or
 * after every send has completed or been flushed.
 */
void ipng_tx_budget_init(struct ipng_tx_budget *b, u32 size)
{
	atomic_set(&b->inflight, 0);
	WRITE_ONCE(b->size, size);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_tx_budget_init);

/**
 * ipng_tx_budget_room() - whether @b would take another send
 * @b: the budget
 *
 * Return: true below the limit (or with none).
 */
bool ipng_tx_budget_room(const struct ipng_tx_budget *b)
{
	u32 size = READ_ONCE(b->size);

	return !size || (u32)atomic_read(&b->inflight) < size;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_tx_budget_room);

/**
 * ipng_tx_budget_take() - count one more send in flight
 * @b: the budget
 *
 * Exact under concurrent takers (transmit queues on several CPUs): the
 * count never passes the limit.
 *
 * Return: false, and nothing taken, when the budget is used up.
 */
bool ipng_tx_budget_take(struct ipng_tx_budget *b)
{
	u32 size = READ_ONCE(b->size);
	int n = atomic_read(&b->inflight);

	do {
		if (size && (u32)n >= size)
			return false;
	} while (!atomic_try_cmpxchg(&b->inflight, &n, n + 1));
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_tx_budget_take);

/**
 * ipng_tx_budget_put() - one send taken from @b completed or was not posted
 * @b: the budget
 */
void ipng_tx_budget_put(struct ipng_tx_budget *b)
{
	WARN_ON_ONCE(atomic_dec_return(&b->inflight) < 0);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_tx_budget_put);

/**
 * ipng_tx_maybe_stop() - stop transmit queues whose way out just filled
 * @c: the channel whose transmit queue sent
 *
 * Transmit context, after a send was posted (UD or RC): a full UD ring
 * stops this queue, an exhausted RC budget stops every queue.
 */
void ipng_tx_maybe_stop(struct ipng_chan *c)
{
	struct net_device *ndev = c->ipd->ndev;
	struct netdev_queue *txq = netdev_get_tx_queue(ndev, c->index);
	bool ring = ipng_tx_ring_room(c), cm = ipng_tx_budget_room(&c->ipd->rc_budget);

	if (ring && cm)
		return;
	if (!cm)
		netif_tx_stop_all_queues(ndev);
	else
		netif_tx_stop_queue(txq);
	/* Order the stop before re-reading the rings; pairs with the barrier
	 * in ipng_tx_wake(), which may have freed slots meanwhile.
	 */
	smp_mb();
	if (!ipng_tx_budget_room(&c->ipd->rc_budget))
		return;
	if (!cm)
		ipng_tx_wake_all(c->ipd);
	else if (ipng_tx_ring_room(c))
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
	 * the barrier after the stop in ipng_tx_maybe_stop().
	 */
	smp_mb();
	if (netif_tx_queue_stopped(txq) &&
	    test_bit(IPNG_F_OPEN, &ipd->flags) &&
	    !test_bit(IPNG_F_QUIESCED, &ipd->flags) &&
	    ipng_tx_ring_room(c) && ipng_tx_budget_room(&ipd->rc_budget))
		netif_tx_wake_queue(txq);
}

/**
 * ipng_tx_wake_all() - restart every transmit queue that has room again
 * @ipd: interface
 *
 * After RC send completions (the connections are shared by all transmit
 * queues).
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

/* ---- the UD send ring of a channel ---- */

/**
 * ipng_slot_cqe() - the completion entry that names a slot in one start
 * @slot: a slot of a UD ring
 * @gen: the ring's start count
 *
 * Return: the entry to put into the work request's wr_cqe.
 */
struct ib_cqe *ipng_slot_cqe(struct ipng_slot *slot, u32 gen)
{
	return &slot->cqe[gen % IPNG_SLOT_GENS];
}
EXPORT_SYMBOL_IF_KUNIT(ipng_slot_cqe);

/**
 * ipng_slot_of() - the slot a completion names, if it names one of this start
 * @slots: the ring's slots
 * @size: their number
 * @gen: the ring's start count
 * @cqe: the completion's wr_cqe
 *
 * Return: the slot, or NULL when @cqe is no entry of @slots for the parity
 * of @gen: a completion of another ring, or one the device delivered after
 * the QP was reset and the ring started again.
 */
struct ipng_slot *ipng_slot_of(struct ipng_slot *slots, u32 size, u32 gen,
			       struct ib_cqe *cqe)
{
	unsigned long base = (unsigned long)slots, at = (unsigned long)cqe;
	unsigned long want = (unsigned long)ipng_slot_cqe(slots, gen) - base;
	unsigned long off, idx;

	if (!slots || at < base)
		return NULL;
	off = at - base;
	idx = off / sizeof(*slots);
	if (idx >= size || off - idx * sizeof(*slots) != want)
		return NULL;
	return &slots[idx];
}
EXPORT_SYMBOL_IF_KUNIT(ipng_slot_of);

/**
 * ipng_tx_slot() - the slot the next UD send of a channel goes into
 * @c: channel; transmit context, its queue's lock held
 *
 * A send that completed with an error (a flush) left its packet in its
 * slot: rxe (6.1) flushes, from its completer, the work request that its
 * requester may still be copying from on another CPU (KASAN: use-after-
 * free in rxe_mr_copy() from rxe_requester(), the packet freed by
 * ipng_ud_send_done() while a reset waited for the flushes; make soak). Such a
 * packet is freed once the QP is in RESET (ipng_ud_drain()), where rxe's
 * tasks are stopped, or here when its slot comes round again.
 *
 * Return: an empty slot, or NULL when the ring is full (counted as
 * tx_drop_ring_full by the caller).
 */
struct ipng_slot *ipng_tx_slot(struct ipng_chan *c)
{
	struct ipng_tx_ring *tx = &c->tx;
	struct ipng_slot *slot;

	if (unlikely(!ipng_tx_ring_room(c)))
		return NULL;
	slot = &tx->slots[tx->head & (tx->size - 1)];
	if (unlikely(slot->skb))
		dev_kfree_skb_any(ipng_take_slot(c->ipd, slot, DMA_TO_DEVICE));
	return slot;
}

/**
 * ipng_tx_claim() - account a UD send about to be posted
 * @c: channel; transmit context, its queue's lock held
 * @slot: from ipng_tx_slot(), filled by ipng_tx_map()
 *
 * The send counts as in flight before it is posted: its completion may
 * be polled on another CPU before ib_post_send() has even returned.
 *
 * Return: the completion entry for the work request.
 */
struct ib_cqe *ipng_tx_claim(struct ipng_chan *c, struct ipng_slot *slot)
{
	struct ipng_tx_ring *tx = &c->tx;
	struct ib_cqe *cqe = ipng_slot_cqe(slot, tx->gen);

	slot->posted = true;
	/* The slot is filled before the completion side can see it used. */
	smp_store_release(&tx->head, tx->head + 1);
	return cqe;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_tx_claim);

/**
 * ipng_tx_unclaim() - take back the last claim; its post failed
 * @c: channel; transmit context, its queue's lock held
 * @slot: the slot of that claim; emptied
 */
void ipng_tx_unclaim(struct ipng_chan *c, struct ipng_slot *slot)
{
	struct ipng_tx_ring *tx = &c->tx;

	WRITE_ONCE(tx->head, tx->head - 1);
	ipng_take_slot(c->ipd, slot, DMA_TO_DEVICE);
}

/**
 * ipng_tx_retire() - how far a UD send completion moves the ring's tail
 * @tx: the send ring; NAPI context
 * @cqe: the completion's wr_cqe
 *
 * A send queue completes in order, so the completion names the slot at
 * the tail. One that names a later slot in flight retires the slots
 * before it too (their completions were lost). One that names no slot in
 * flight of this start (a duplicate, a completion delivered after a reset)
 * retires nothing.
 *
 * The retired slots are marked no longer posted; the caller empties the
 * last (or leaves its packet, see ipng_tx_slot()) and then moves the
 * tail past them.
 *
 * Return: slots retired, the named one last; 0 for a completion to ignore.
 */
u32 ipng_tx_retire(struct ipng_tx_ring *tx, struct ib_cqe *cqe)
{
	struct ipng_slot *slot = ipng_slot_of(tx->slots, tx->size, tx->gen, cqe);
	u32 n, i;

	if (!slot || !slot->posted)
		return 0;
	n = ((u32)(slot - tx->slots) - tx->tail) & (tx->size - 1);
	/* Acquire: the slots up to the head were filled before it moved. */
	if (n >= smp_load_acquire(&tx->head) - tx->tail)
		return 0;
	for (i = 0; i <= n; i++)
		tx->slots[(tx->tail + i) & (tx->size - 1)].posted = false;
	return n + 1;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_tx_retire);

/**
 * ipng_ud_send_done() - completion of a UD send
 * @cq: the channel's send CQ
 * @wc: the completion; its wr_cqe is only compared, never followed
 *
 * A flush outside our own reset, or any other error, means the QP left
 * RTS: the channels are recovered. NAPI context.
 */
void ipng_ud_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct ipng_chan *c = cq->cq_context;
	struct ipng_dev *ipd = c->ipd;
	struct ipng_tx_ring *tx = &c->tx;
	u32 n = ipng_tx_retire(tx, wc->wr_cqe);
	struct ipng_slot *slot;
	struct sk_buff *skb;

	if (unlikely(!n)) {
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_ERRORS, 1);
		netdev_warn_once(ipd->ndev, "send completion for no send in flight ignored\n");
		return;
	}
	/* Skipped slots keep their packets, as flushed ones do. */
	if (unlikely(n > 1))
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_ERRORS, n - 1);
	slot = &tx->slots[(tx->tail + n - 1) & (tx->size - 1)];
	if (likely(wc->status == IB_WC_SUCCESS)) {
		skb = ipng_take_slot(ipd, slot, DMA_TO_DEVICE);
		ipng_chan_stat_add(c, &c->stats.tx_packets, 1);
		ipng_chan_stat_add(c, &c->stats.tx_bytes, skb->len - IPNG_HLEN);
		napi_consume_skb(skb, 1);
	} else {
		if (wc->status != IB_WC_WR_FLUSH_ERR) {
			netdev_dbg(ipd->ndev, "send completion: %s\n",
				   ib_wc_status_msg(wc->status));
			ipng_stat_add(ipd->stats, IPNG_STAT_TX_ERRORS, 1);
		}
		ipng_chans_error(ipd, c, "send completion error");
		/* The packet stays in the slot: see ipng_tx_slot(). */
	}

	/* The slot is free before the transmit path can see it free. */
	smp_store_release(&tx->tail, tx->tail + n);
	ipng_tx_wake(c);
}

/**
 * ipng_ring_alloc() - allocate the empty slots of a send or receive ring
 * @size: entries (power of two)
 *
 * Return: the slots, or NULL. Large rings come from vmalloc space (8192
 * slots would be an order-4 allocation); free them with kvfree().
 */
struct ipng_slot *ipng_ring_alloc(u32 size)
{
	return kvcalloc(size, sizeof(struct ipng_slot), GFP_KERNEL);
}

/**
 * ipng_tx_ring_set() - give a channel a send ring
 * @c: channel whose send ring is empty (QP reset, completions drained)
 * @slots: from ipng_ring_alloc(), or NULL
 * @size: its entries
 *
 * The old ring, if any, is freed.
 */
void ipng_tx_ring_set(struct ipng_chan *c, struct ipng_slot *slots, u32 size)
{
	kvfree(c->tx.slots);
	c->tx.slots = slots;
	c->tx.size = slots ? size : 0;
}

/**
 * ipng_tx_ring_reset() - empty counters of a channel's send ring
 * @c: channel about to start
 *
 * The ring starts again from slot 0, and its completions name the other
 * entry of each slot than the last start's did.
 */
void ipng_tx_ring_reset(struct ipng_chan *c)
{
	c->tx.head = 0;
	c->tx.tail = 0;
	c->tx.gen++;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_tx_ring_reset);

/**
 * ipng_ring_drain() - free every buffer left in the slots of a ring
 * @ipd: interface
 * @slots: the ring's slots
 * @size: their number
 * @dir: direction they were mapped for
 *
 * For a send or receive ring whose QP is in RESET and whose CQ was
 * emptied: the device no longer touches the buffers.
 */
void ipng_ring_drain(struct ipng_dev *ipd, struct ipng_slot *slots, u32 size,
		     enum dma_data_direction dir)
{
	u32 i;

	for (i = 0; i < size; i++)
		if (slots[i].skb)
			dev_kfree_skb_any(ipng_take_slot(ipd, &slots[i], dir));
}
