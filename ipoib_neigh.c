// SPDX-License-Identifier: GPL-2.0
/*
 * Neighbour table: the 20-byte link address of a destination (QPN and
 * GID; the flags byte is remembered, not part of the key) -> the address
 * handle to send with. It is the transmit fast path: one lockless lookup
 * under RCU and the packet is posted. A miss, or an entry without a handle
 * yet, goes to the path cache (ipoib_arp.c), which resolves the GID and
 * hands the handle back to the entry.
 *
 * Entries never change their handle: a flush of the path cache bumps
 * ipng_dev.path_gen, and an entry of an older generation is replaced on
 * its next use, so no packet goes out with a handle from before a port
 * change. Entries unused for path_timeout seconds age out with the paths;
 * the table holds at most IPNG_NEIGH_MAX entries (beyond that, packets
 * take the path cache every time, which still works).
 */
#include <linux/rhashtable.h>
#include <linux/skbuff.h>

#include "ipoib.h"

#define IPNG_NEIGH_MAX	8192

/**
 * struct ipng_neigh_key - what identifies a neighbour
 * @qpn: its UD QPN
 * @gid: its port GID
 */
struct ipng_neigh_key {
	u32 qpn;
	union ib_gid gid;
};

/**
 * struct ipng_neigh - one destination link address
 * @node: in &ipng_dev.neighs
 * @key: QPN and GID
 * @ah: address handle, set once by the path cache (read under RCU)
 * @gen: &ipng_dev.path_gen when the entry was made
 * @flags: flags byte of the last address seen (connected-mode capable)
 * @created: jiffies of creation
 * @last_used: jiffies of the last transmit, for aging
 * @dead: entry in a walker's list of entries to remove
 * @rcu: frees the entry after a grace period
 */
struct ipng_neigh {
	struct rhash_head node;
	struct ipng_neigh_key key;
	struct ipng_ah __rcu *ah;
	unsigned int gen;
	u8 flags;
	unsigned long created;
	unsigned long last_used;
	struct list_head dead;
	struct rcu_head rcu;
};

static const struct rhashtable_params ipng_neigh_params = {
	.key_len	= sizeof(struct ipng_neigh_key),
	.key_offset	= offsetof(struct ipng_neigh, key),
	.head_offset	= offsetof(struct ipng_neigh, node),
	.automatic_shrinking = true,
};

static void ipng_neigh_free_rcu(struct rcu_head *rcu)
{
	struct ipng_neigh *n = container_of(rcu, struct ipng_neigh, rcu);
	struct ipng_ah *ah = rcu_dereference_protected(n->ah, 1);

	if (ah)
		ipng_ah_put(ah);
	kfree(n);
}

/* Unlink @n; whoever unlinks it frees it. Any context. */
static void ipng_neigh_remove(struct ipng_dev *ipd, struct ipng_neigh *n)
{
	if (!rhashtable_remove_fast(&ipd->neighs, &n->node, ipng_neigh_params))
		call_rcu(&n->rcu, ipng_neigh_free_rcu);
}

/* A new entry for @key, or the one someone else just made. Under RCU. */
static struct ipng_neigh *ipng_neigh_new(struct ipng_dev *ipd,
					 const struct ipng_neigh_key *key)
{
	struct ipng_neigh *n, *old;

	if (atomic_read(&ipd->neighs.nelems) >= IPNG_NEIGH_MAX)
		return NULL;
	n = kzalloc(sizeof(*n), GFP_ATOMIC);
	if (!n)
		return NULL;
	n->key = *key;
	n->gen = atomic_read(&ipd->path_gen);
	n->created = jiffies;
	n->last_used = jiffies;
	old = rhashtable_lookup_get_insert_fast(&ipd->neighs, &n->node,
						ipng_neigh_params);
	if (old) {
		kfree(n);
		return IS_ERR(old) ? NULL : old;
	}
	return n;
}

/**
 * ipng_neigh_set_ah() - give a neighbour the handle its path resolved to
 * @n: the entry
 * @ah: the handle; the entry takes its own reference
 *
 * Under RCU (transmit). Only the first handle sticks.
 */
void ipng_neigh_set_ah(struct ipng_neigh *n, struct ipng_ah *ah)
{
	if (rcu_access_pointer(n->ah))
		return;
	ipng_ah_get(ah);
	if (cmpxchg((struct ipng_ah __force **)&n->ah, NULL, ah))
		ipng_ah_put(ah);
}

/**
 * ipng_send_resolved() - send to a destination whose handle is known
 * @ipd: interface
 * @skb: packet starting with the 24-byte link header; consumed
 * @ah: the destination's address handle
 *
 * Transmit context. In connected mode unicast to an RC-capable peer goes
 * over its connection; everything else, and what connected mode hands
 * back, over UD.
 */
void ipng_send_resolved(struct ipng_dev *ipd, struct sk_buff *skb,
			struct ipng_ah *ah)
{
	const u8 *daddr = skb->data;
	u32 qpn = ipng_addr_qpn(daddr);
	union ib_gid dgid;

	if (ipng_connected(ipd) && (ipng_addr_flags(daddr) & IPNG_FLAG_RC) &&
	    !ipng_addr_is_mcast(daddr)) {
		ipng_addr_gid(daddr, &dgid);
		if (ipng_cm_xmit(ipd, skb, qpn, &dgid))
			return;
	}
	skb_pull(skb, IPNG_ADDR_LEN);
	ipng_ud_send(ipd, skb, ah, qpn);
}

/**
 * ipng_neigh_xmit() - send a packet to the address in its link header
 * @ipd: interface
 * @skb: packet starting with the 24-byte link header; consumed
 *
 * Transmit context. Known neighbours send at once; the rest go through
 * the path cache.
 */
void ipng_neigh_xmit(struct ipng_dev *ipd, struct sk_buff *skb)
{
	const u8 *daddr = skb->data;
	struct ipng_neigh_key key;
	struct ipng_neigh *n;
	struct ipng_ah *ah;

	memset(&key, 0, sizeof(key));
	key.qpn = ipng_addr_qpn(daddr);
	ipng_addr_gid(daddr, &key.gid);

	rcu_read_lock();
	n = rhashtable_lookup(&ipd->neighs, &key, ipng_neigh_params);
	if (n && unlikely(n->gen != atomic_read(&ipd->path_gen))) {
		ipng_neigh_remove(ipd, n);
		n = NULL;
	}
	if (!n)
		n = ipng_neigh_new(ipd, &key);
	if (n) {
		if (time_after(jiffies, READ_ONCE(n->last_used)))
			WRITE_ONCE(n->last_used, jiffies);
		if (unlikely(READ_ONCE(n->flags) != ipng_addr_flags(daddr)))
			WRITE_ONCE(n->flags, ipng_addr_flags(daddr));
		ah = rcu_dereference(n->ah);
		if (likely(ah)) {
			ipng_send_resolved(ipd, skb, ah);
			rcu_read_unlock();
			return;
		}
	}
	ipng_path_xmit(ipd, skb, n);
	rcu_read_unlock();
}

/* Call @fn on every entry, under RCU (rhashtable walk). */
static void ipng_neighs_for_each(struct ipng_dev *ipd,
				 void (*fn)(struct ipng_dev *ipd,
					    struct ipng_neigh *n, void *arg),
				 void *arg)
{
	struct rhashtable_iter iter;
	struct ipng_neigh *n;

	rhashtable_walk_enter(&ipd->neighs, &iter);
	rhashtable_walk_start(&iter);
	while ((n = rhashtable_walk_next(&iter)))
		if (!IS_ERR(n))
			fn(ipd, n, arg);
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
}

static bool ipng_neigh_idle(struct ipng_neigh *n, unsigned long now)
{
	unsigned long timeout = ipng_path_timeout_jiffies();

	return time_after(now, READ_ONCE(n->last_used) + timeout);
}

/* Aging at *@now: an idle entry goes; the others keep their path alive. */
static void ipng_neigh_age_one(struct ipng_dev *ipd, struct ipng_neigh *n,
			       void *now)
{
	if (ipng_neigh_idle(n, *(unsigned long *)now))
		ipng_neigh_remove(ipd, n);
	else
		ipng_path_touch(ipd, &n->key.gid, READ_ONCE(n->last_used));
}

static void ipng_neigh_drop(struct ipng_dev *ipd, struct ipng_neigh *n,
			    void *unused)
{
	ipng_neigh_remove(ipd, n);
}

/**
 * ipng_neighs_age() - drop entries unused for path_timeout seconds
 * @ipd: interface
 * @now: the instant (jiffies) the aging pass judges at
 */
void ipng_neighs_age(struct ipng_dev *ipd, unsigned long now)
{
	lockdep_assert_held(&ipd->paths_walk_lock);
	ipng_neighs_for_each(ipd, ipng_neigh_age_one, &now);
}

/**
 * ipng_neighs_flush() - forget every entry and every handle they hold
 * @ipd: interface
 *
 * Entries made concurrently from paths about to be flushed are of the
 * old generation and replaced on use.
 */
void ipng_neighs_flush(struct ipng_dev *ipd)
{
	lockdep_assert_held(&ipd->paths_walk_lock);
	atomic_inc(&ipd->path_gen);
	ipng_neighs_for_each(ipd, ipng_neigh_drop, NULL);
}

/**
 * ipng_neighs_init() - create the neighbour table
 * @ipd: interface
 *
 * Return: 0 or a negative errno.
 */
int ipng_neighs_init(struct ipng_dev *ipd)
{
	/* The walkers of both tables (ipoib_arp.c) share it; neighbours
	 * come first at creation and last at teardown.
	 */
	mutex_init(&ipd->paths_walk_lock);
	atomic_set(&ipd->path_gen, 0);
	return rhashtable_init(&ipd->neighs, &ipng_neigh_params);
}

/**
 * ipng_neighs_cleanup() - destroy the table; the interface is stopped
 * @ipd: interface
 */
void ipng_neighs_cleanup(struct ipng_dev *ipd)
{
	mutex_lock(&ipd->paths_walk_lock);
	ipng_neighs_flush(ipd);
	mutex_unlock(&ipd->paths_walk_lock);
	rcu_barrier();
	rhashtable_destroy(&ipd->neighs);
}

/**
 * ipng_neighs_count() - number of entries
 * @ipd: interface
 *
 * Return: the count.
 */
unsigned int ipng_neighs_count(struct ipng_dev *ipd)
{
	return atomic_read(&ipd->neighs.nelems);
}

static void ipng_neigh_print(struct ipng_dev *ipd, struct ipng_neigh *n,
			     void *m)
{
	seq_printf(m, "qpn 0x%06x gid %pI6 flags 0x%02x ah %s%s idle_s %u age_s %u\n",
		   n->key.qpn, n->key.gid.raw, READ_ONCE(n->flags),
		   rcu_access_pointer(n->ah) ? "yes" : "no",
		   n->gen != atomic_read(&ipd->path_gen) ? " stale" : "",
		   jiffies_to_msecs(jiffies - READ_ONCE(n->last_used)) / 1000,
		   jiffies_to_msecs(jiffies - n->created) / 1000);
}

/**
 * ipng_neighs_dump() - one line per entry: QPN, GID, flags, handle, age
 * @ipd: interface
 * @m: seq_file of a debugfs dump
 *
 * A header line naming the fields comes first.
 */
void ipng_neighs_dump(struct ipng_dev *ipd, struct seq_file *m)
{
	seq_puts(m, "# qpn gid flags ah idle_s age_s\n");
	ipng_neighs_for_each(ipd, ipng_neigh_print, m);
}
