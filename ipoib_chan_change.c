// SPDX-License-Identifier: GPL-2.0
/*
 * Live changes of an interface's channels: the channel count and ring
 * sizes (ethtool -L and -G), prepared before the datapath stops, swapped
 * in while it is stopped and swapped back when the channels will not start
 * with them; and the moderation settings (ethtool -C) of every channel.
 */
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "ipoib.h"

/* Undo ipng_counters_add() of @r (a retired channel that came back). */
static void ipng_counters_sub(struct ipng_chan_counters *sum,
			      const struct ipng_chan_counters *r)
{
	sum->rx_packets -= r->rx_packets;
	sum->rx_bytes -= r->rx_bytes;
	sum->tx_packets -= r->tx_packets;
	sum->tx_bytes -= r->tx_bytes;
	sum->polls -= r->polls;
	sum->events -= r->events;
	sum->holdoffs -= r->holdoffs;
}

/**
 * struct ipng_chans_change - what ipng_chans_set() swaps in, and out
 * @n: channels wanted
 * @tx_size: send ring entries
 * @rx_size: receive ring entries
 * @old_n: channels before the change
 * @old_tx_size: send ring entries before
 * @old_rx_size: receive ring entries before
 * @revert: this swap undoes the previous one
 * @fresh: channels @ipd->nchans .. @n - 1, created
 * @tx_slots: new send rings of the channels kept (NULL: size unchanged);
 *	after the swap, the rings they replaced
 * @rx_slots: new receive ring of channel 0 (NULL: size unchanged); after
 *	the swap, the ring it replaced
 * @gone: channels removed, destroyed once the change holds
 *
 * A swap keeps what it replaced, so that ipng_chans_revert() can swap it
 * back when the channels cannot start with the new layout.
 */
struct ipng_chans_change {
	unsigned int n;
	u32 tx_size;
	u32 rx_size;
	unsigned int old_n;
	u32 old_tx_size;
	u32 old_rx_size;
	bool revert;
	struct ipng_chan *fresh[IPNG_MAX_CHANNELS];
	struct ipng_slot *tx_slots[IPNG_MAX_CHANNELS];
	struct ipng_slot *rx_slots;
	struct ipng_chan *gone[IPNG_MAX_CHANNELS];
};

static void ipng_chans_free_change(struct ipng_chans_change *ch)
{
	unsigned int i;

	for (i = 0; i < IPNG_MAX_CHANNELS; i++) {
		if (ch->fresh[i])
			ipng_chan_destroy(ch->fresh[i]);
		kvfree(ch->tx_slots[i]);
	}
	kvfree(ch->rx_slots);
}

/* Everything the change needs, made before the datapath stops. */
static int ipng_chans_prepare(struct ipng_dev *ipd,
			      struct ipng_chans_change *ch)
{
	unsigned int i, kept = min(ch->n, ipd->nchans);
	struct ipng_chan *c;

	for (i = ipd->nchans; i < ch->n; i++) {
		c = ipng_chan_create(ipd, i, ch->tx_size, ch->rx_size);
		if (IS_ERR(c))
			return PTR_ERR(c);
		ch->fresh[i] = c;
	}
	if (ch->tx_size != ipd->tx_ring_size) {
		for (i = 0; i < kept; i++) {
			ch->tx_slots[i] = ipng_ring_alloc(ch->tx_size);
			if (!ch->tx_slots[i])
				return -ENOMEM;
		}
	}
	if (ch->rx_size != ipd->rx_ring_size) {
		ch->rx_slots = ipng_ring_alloc(ch->rx_size);
		if (!ch->rx_slots)
			return -ENOMEM;
	}
	return 0;
}

/* The swap itself: the datapath is stopped, every ring is empty. */
static void ipng_chans_apply(struct ipng_dev *ipd, void *arg)
{
	struct ipng_chans_change *ch = arg;
	struct ipng_chan_counters r;
	unsigned int i, old = ipd->nchans;
	struct ipng_chan *c;

	for (i = 0; i < min(ch->n, old); i++) {
		c = ipng_chan(ipd, i);
		if (ch->tx_slots[i]) {
			struct ipng_slot *was = c->tx.slots;

			c->tx.slots = NULL;
			ipng_tx_ring_set(c, ch->tx_slots[i], ch->tx_size);
			ch->tx_slots[i] = was;
		}
		if (!i && ch->rx_slots) {
			struct ipng_slot *was = c->rx.slots;

			c->rx.slots = NULL;
			ipng_rx_ring_set(c, ch->rx_slots, ch->rx_size);
			ch->rx_slots = was;
		}
	}

	/* Counters of removed channels move into the totals at once. */
	preempt_disable();
	write_seqcount_begin(&ipd->chan_seq);
	for (i = ch->n; i < old; i++) {
		c = ipng_chan(ipd, i);
		ipng_chan_read(c, &r);
		ipng_counters_add(&ipd->retired, &r);
		RCU_INIT_POINTER(ipd->chans[i], NULL);
		ch->gone[i] = c;
	}
	for (i = old; i < ch->n; i++) {
		/* Back from a swap that retired them: count them once. */
		if (ch->revert) {
			ipng_chan_read(ch->fresh[i], &r);
			ipng_counters_sub(&ipd->retired, &r);
		}
		rcu_assign_pointer(ipd->chans[i], ch->fresh[i]);
		ch->fresh[i] = NULL;
	}
	WRITE_ONCE(ipd->nchans, ch->n);
	write_seqcount_end(&ipd->chan_seq);
	preempt_enable();

	ipd->tx_ring_size = ch->tx_size;
	ipd->rx_ring_size = ch->rx_size;
	WARN_ON(netif_set_real_num_tx_queues(ipd->ndev, ch->n));
	WARN_ON(netif_set_real_num_rx_queues(ipd->ndev, ch->n));
}

/*
 * The channels would not start with the new layout: swap the old one back
 * (the removed channels return, the added ones go, the replaced rings come
 * back) and start again. If that fails too the old layout stays and the
 * channel watchdog retries, as after any failed restart.
 */
static void ipng_chans_revert(struct ipng_dev *ipd,
			      struct ipng_chans_change *ch, int err)
{
	unsigned int i;

	netdev_warn(ipd->ndev, "the channels did not start with %u channels and rings %u/%u (%d): back to %u channels, rings %u/%u\n",
		    ch->n, ch->tx_size, ch->rx_size, err, ch->old_n,
		    ch->old_tx_size, ch->old_rx_size);
	swap(ch->n, ch->old_n);
	swap(ch->tx_size, ch->old_tx_size);
	swap(ch->rx_size, ch->old_rx_size);
	ch->revert = true;
	for (i = ch->n; i < ch->old_n; i++)
		WARN_ON_ONCE(ch->fresh[i]);
	for (i = ch->old_n; i < ch->n; i++) {
		ch->fresh[i] = ch->gone[i];
		ch->gone[i] = NULL;
	}
	ipng_chans_restart(ipd, ipng_chans_apply, ch);
}

/**
 * ipng_chans_set() - change the channel count and ring sizes
 * @ipd: interface; RTNL held
 * @n: channels, 1 .. @ipd->max_chans
 * @tx_size: send ring entries per channel (power of two, within the QPs)
 * @rx_size: receive ring entries (power of two, within the QP)
 * @extack: error message for ethtool
 *
 * Applied live: new channels and rings are allocated first (a failure
 * there changes nothing), then the transmit queues stop, the UD datapath
 * is reset and restarted with the new layout. Addresses, routes,
 * neighbours and connected-mode connections are untouched; packets in
 * flight on the UD rings are lost, as on a short link flap. A failure
 * leaves the layout as it was: if the channels do not start with the new
 * one, the old one is swapped back and started.
 *
 * Return: 0, -EINVAL for values out of range, -ENOMEM, or the error of
 * the restart with the new layout.
 */
int ipng_chans_set(struct ipng_dev *ipd, unsigned int n, u32 tx_size,
		   u32 rx_size, struct netlink_ext_ack *extack)
{
	struct ipng_chans_change *ch;
	unsigned int i;
	int err;

	ASSERT_RTNL();
	if (!n || n > ipd->max_chans) {
		NL_SET_ERR_MSG_MOD(extack, "channel count out of range");
		return -EINVAL;
	}
	if (tx_size < IPNG_RING_MIN || tx_size > ipd->tx_ring_max ||
	    rx_size < IPNG_RING_MIN || rx_size > ipd->rx_ring_max ||
	    !is_power_of_2(tx_size) || !is_power_of_2(rx_size)) {
		NL_SET_ERR_MSG_MOD(extack, "ring size out of range");
		return -EINVAL;
	}
	if (n == ipd->nchans && tx_size == ipd->tx_ring_size &&
	    rx_size == ipd->rx_ring_size)
		return 0;

	ch = kzalloc(sizeof(*ch), GFP_KERNEL);
	if (!ch)
		return -ENOMEM;
	ch->n = n;
	ch->tx_size = tx_size;
	ch->rx_size = rx_size;
	ch->old_n = ipd->nchans;
	ch->old_tx_size = ipd->tx_ring_size;
	ch->old_rx_size = ipd->rx_ring_size;
	err = ipng_chans_prepare(ipd, ch);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack, "cannot allocate the new channels or rings");
		goto out;
	}
	err = ipng_chans_restart(ipd, ipng_chans_apply, ch);
	if (err) {
		NL_SET_ERR_MSG_MOD(extack,
				   "the channels did not start with the new settings; unchanged");
		ipng_chans_revert(ipd, ch, err);
	} else {
		netdev_info(ipd->ndev, "%u channels, rings: send %u, receive %u\n",
			    n, tx_size, rx_size);
	}
	for (i = 0; i < IPNG_MAX_CHANNELS; i++)
		if (ch->gone[i])
			ipng_chan_destroy(ch->gone[i]);
out:
	ipng_chans_free_change(ch);
	kfree(ch);
	return err;
}

/**
 * ipng_chans_set_coal() - apply moderation settings to every channel
 * @ipd: interface; RTNL held
 * @c: the settings, already checked
 */
void ipng_chans_set_coal(struct ipng_dev *ipd, const struct ipng_coal *c)
{
	unsigned int i;

	ASSERT_RTNL();
	ipd->coal = *c;
	if (!test_bit(IPNG_F_OPEN, &ipd->flags))
		return;
	for (i = 0; i < ipd->nchans; i++)
		ipng_moder_set(&ipng_chan(ipd, i)->moder, c);
}
