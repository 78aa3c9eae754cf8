// SPDX-License-Identifier: GPL-2.0
/*
 * Path cache: destination GID -> address handle, behind the neighbour
 * table (ipoib_neigh.c). Transmit looks paths up
 * under RCU; a miss creates a path in state RESOLVING whose resolution
 * runs on the module workqueue through the fabric ops, while up to
 * IPNG_PATH_QUEUE_LEN packets wait on it. Paths unused for
 * ipng_path_timeout seconds are aged out; all are flushed on port events
 * and when the interface stops.
 *
 * Multicast GIDs are resolved here too; where the fabric needs a
 * membership to send (InfiniBand), a failed resolution means the group
 * could not be joined, and its packets are counted as tx_drop_not_joined
 * rather than tx_drop_no_path. Resolution fires the ipoib_ng:path_resolve_*
 * tracepoints.
 */
#include <linux/module.h>
#include <linux/rhashtable.h>
#include <linux/skbuff.h>
#include <kunit/visibility.h>

#include "ipoib.h"
#include "ipoib_trace.h"

#define IPNG_PATH_MAX		4096
/* A fabric that says "not yet" (send-only join under way) is asked again
 * every IPNG_PATH_WAIT, up to IPNG_PATH_WAIT_TRIES times.
 */
#define IPNG_PATH_WAIT		(HZ / 10)
#define IPNG_PATH_WAIT_TRIES	50

unsigned int ipng_path_timeout = 300;

/**
 * ipng_path_timeout_valid() - check a path_timeout value
 * @secs: seconds
 *
 * Return: true from 1 s to a day (IPNG_PATH_TIMEOUT_MAX), where the
 * timeout in jiffies cannot overflow.
 */
bool ipng_path_timeout_valid(unsigned int secs)
{
	return secs >= 1 && secs <= IPNG_PATH_TIMEOUT_MAX;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_path_timeout_valid);

static int ipng_path_timeout_set(const char *val,
				 const struct kernel_param *kp)
{
	unsigned int secs;
	int err;

	err = kstrtouint(val, 0, &secs);
	if (err)
		return err;
	if (!ipng_path_timeout_valid(secs)) {
		pr_err("%s: path_timeout=%u: need 1 to %u seconds\n", DRV_NAME,
		       secs, IPNG_PATH_TIMEOUT_MAX);
		return -EINVAL;
	}
	WRITE_ONCE(ipng_path_timeout, secs);
	return 0;
}

static const struct kernel_param_ops ipng_path_timeout_ops = {
	.set = ipng_path_timeout_set,
	.get = param_get_uint,
};

module_param_cb(path_timeout, &ipng_path_timeout_ops, &ipng_path_timeout,
		0644);
MODULE_PARM_DESC(path_timeout, "Seconds an unused path stays cached (1-86400, default 300)");

/**
 * ipng_path_timeout_jiffies() - path_timeout in jiffies
 *
 * Return: the timeout, at least one second.
 */
unsigned long ipng_path_timeout_jiffies(void)
{
	return (unsigned long)max(READ_ONCE(ipng_path_timeout), 1U) * HZ;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_path_timeout_jiffies);

/**
 * ipng_path_decide() - what transmit does with a packet for a path that
 *	has no address handle yet
 * @state: the path's state, read under its lock
 * @qlen: packets already waiting on it
 * @failed_at: jiffies of its last failure
 * @now: jiffies
 *
 * A path being removed (DEAD) takes no packet and starts no resolution:
 * its resolution has been cancelled for good and its queue purged.
 *
 * Return: the action.
 */
enum ipng_path_act ipng_path_decide(enum ipng_path_state state,
				    unsigned int qlen, unsigned long failed_at,
				    unsigned long now)
{
	switch (state) {
	case IPNG_PATH_VALID:
		return IPNG_PATH_ACT_SEND;
	case IPNG_PATH_DEAD:
		return IPNG_PATH_ACT_DROP_DEAD;
	case IPNG_PATH_FAILED:
		if (time_after(now, failed_at + IPNG_PATH_RETRY))
			return IPNG_PATH_ACT_RETRY;
		return IPNG_PATH_ACT_DROP;
	case IPNG_PATH_RESOLVING:
	default:
		if (qlen < IPNG_PATH_QUEUE_LEN)
			return IPNG_PATH_ACT_QUEUE;
		return IPNG_PATH_ACT_DROP_FULL;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ipng_path_decide);

/**
 * struct ipng_path - how to reach one destination GID
 * @node: in &ipng_dev.paths
 * @dgid: destination GID (the key)
 * @ipd: owning interface
 * @lock: protects @state, @queue, @failed_at and @drop; removal marks the
 *	path DEAD under it before anything else
 * @state: see enum ipng_path_state
 * @ah: set once, when the path becomes VALID (read under RCU)
 * @queue: packets waiting for resolution, link header still on
 * @failed_at: jiffies of the last failure
 * @drop: counter of packets dropped while FAILED: tx_drop_not_joined for a
 *	multicast GID the fabric could not give us (no membership), else
 *	tx_drop_no_path
 * @last_used: jiffies of the last transmit, for aging
 * @resolve_work: runs the resolution
 * @tries: resolution attempts answered "not yet" in a row
 * @dead: entry in a walker's list of paths to remove
 * @rcu: frees the path after a grace period
 */
struct ipng_path {
	struct rhash_head node;
	union ib_gid dgid;
	struct ipng_dev *ipd;
	spinlock_t lock;	/* state, queue, failed_at, drop */
	enum ipng_path_state state;
	struct ipng_ah __rcu *ah;
	struct sk_buff_head queue;
	unsigned long failed_at;
	enum ipng_stat drop;
	unsigned long last_used;
	struct delayed_work resolve_work;
	unsigned int tries;
	struct list_head dead;
	struct rcu_head rcu;
};

static const struct rhashtable_params ipng_path_params = {
	.key_len	= sizeof(union ib_gid),
	.key_offset	= offsetof(struct ipng_path, dgid),
	.head_offset	= offsetof(struct ipng_path, node),
	.automatic_shrinking = true,
};

static void ipng_path_free_rcu(struct rcu_head *rcu)
{
	struct ipng_path *path = container_of(rcu, struct ipng_path, rcu);
	struct ipng_ah *ah = rcu_dereference_protected(path->ah, 1);

	if (ah)
		ipng_ah_put(ah);
	kfree(path);
}

/*
 * Unlink a path and free it after a grace period. Transmit may still hold
 * it under RCU, so it is marked DEAD first: from then on nothing queues a
 * packet on it or its resolution again, and once the resolution is
 * cancelled it can no longer run. Called by the walker holding
 * paths_walk_lock, which is the only remover.
 */
static void ipng_path_remove(struct ipng_path *path)
{
	struct ipng_dev *ipd = path->ipd;

	lockdep_assert_held(&ipd->paths_walk_lock);
	spin_lock_bh(&path->lock);
	path->state = IPNG_PATH_DEAD;
	spin_unlock_bh(&path->lock);
	cancel_delayed_work_sync(&path->resolve_work);
	if (rhashtable_remove_fast(&ipd->paths, &path->node, ipng_path_params))
		return;
	spin_lock_bh(&path->lock);
	__skb_queue_purge(&path->queue);
	spin_unlock_bh(&path->lock);
	call_rcu(&path->rcu, ipng_path_free_rcu);
}

static void ipng_path_resolve_work(struct work_struct *work)
{
	struct ipng_path *path = container_of(to_delayed_work(work),
					      struct ipng_path, resolve_work);
	struct ipng_dev *ipd = path->ipd;
	enum ipng_stat drop = IPNG_STAT_TX_DROP_NO_PATH;
	struct sk_buff_head ready;
	struct rdma_ah_attr attr;
	struct ipng_ah *ah;
	struct sk_buff *skb;
	int err;

	err = ipd->fabric->resolve_path(ipd, &path->dgid, &attr);
	if (err == -EAGAIN && ++path->tries < IPNG_PATH_WAIT_TRIES) {
		/* Not again on a path being removed (it waits for us). */
		spin_lock_bh(&path->lock);
		if (path->state != IPNG_PATH_DEAD)
			queue_delayed_work(ipng_wq, &path->resolve_work,
					   IPNG_PATH_WAIT);
		spin_unlock_bh(&path->lock);
		return;
	}
	path->tries = 0;
	if (err) {
		ah = ERR_PTR(err);
		/* A multicast GID (ff00::/8) the fabric refused: the group
		 * could not be joined.
		 */
		if (path->dgid.raw[0] == 0xff)
			drop = IPNG_STAT_TX_DROP_NOT_JOINED;
	} else {
		ah = ipng_ah_create(ipd, &attr);
		rdma_destroy_ah_attr(&attr);
	}

	__skb_queue_head_init(&ready);
	spin_lock_bh(&path->lock);
	if (path->state == IPNG_PATH_DEAD) {
		/* Removal purges the queue; the handle is not needed. */
		spin_unlock_bh(&path->lock);
		if (!IS_ERR(ah))
			ipng_ah_put(ah);
		return;
	}
	if (IS_ERR(ah)) {
		path->state = IPNG_PATH_FAILED;
		path->failed_at = jiffies;
		path->drop = drop;
	} else {
		rcu_assign_pointer(path->ah, ah);
		path->state = IPNG_PATH_VALID;
	}
	skb_queue_splice_init(&path->queue, &ready);
	spin_unlock_bh(&path->lock);

	if (IS_ERR(ah)) {
		netdev_dbg(ipd->ndev, "no path to %pI6: %ld\n", path->dgid.raw,
			   PTR_ERR(ah));
		trace_path_resolve_fail(ipd->ndev, &path->dgid, PTR_ERR(ah));
		local_bh_disable();
		ipng_drop(ipd, drop, skb_queue_len(&ready));
		local_bh_enable();
		__skb_queue_purge(&ready);
		return;
	}
	trace_path_resolve_done(ipd->ndev, &path->dgid, ah);
	/* Back through the qdisc: the path is valid now. */
	while ((skb = __skb_dequeue(&ready)))
		dev_queue_xmit(skb);
}

static struct ipng_path *ipng_path_new(struct ipng_dev *ipd,
				       const union ib_gid *dgid)
{
	struct ipng_path *path, *old;

	if (atomic_read(&ipd->paths.nelems) >= IPNG_PATH_MAX)
		return NULL;
	path = kzalloc(sizeof(*path), GFP_ATOMIC);
	if (!path)
		return NULL;
	path->dgid = *dgid;
	path->ipd = ipd;
	spin_lock_init(&path->lock);
	skb_queue_head_init(&path->queue);
	path->state = IPNG_PATH_RESOLVING;
	path->drop = IPNG_STAT_TX_DROP_NO_PATH;
	path->last_used = jiffies;
	INIT_DELAYED_WORK(&path->resolve_work, ipng_path_resolve_work);

	old = rhashtable_lookup_get_insert_fast(&ipd->paths, &path->node,
						ipng_path_params);
	if (old) {
		kfree(path);
		return IS_ERR(old) ? NULL : old;
	}
	trace_path_resolve_start(ipd->ndev, dgid);
	queue_delayed_work(ipng_wq, &path->resolve_work, 0);
	return path;
}

/*
 * Slow path: the path had no address handle. Queue or drop @skb, or, if
 * resolution finished meanwhile, return the handle for the caller to send
 * @skb with (then @skb is not consumed). Under rcu_read_lock().
 */
static struct ipng_ah *ipng_path_wait(struct ipng_path *path,
				      struct sk_buff *skb)
{
	struct ipng_dev *ipd = path->ipd;
	enum ipng_stat drop;

	spin_lock(&path->lock);
	switch (ipng_path_decide(path->state, skb_queue_len(&path->queue),
				 path->failed_at, jiffies)) {
	case IPNG_PATH_ACT_SEND:
		spin_unlock(&path->lock);
		return rcu_dereference(path->ah);
	case IPNG_PATH_ACT_RETRY:
		path->state = IPNG_PATH_RESOLVING;
		trace_path_resolve_start(ipd->ndev, &path->dgid);
		queue_delayed_work(ipng_wq, &path->resolve_work, 0);
		fallthrough;
	case IPNG_PATH_ACT_QUEUE:
		__skb_queue_tail(&path->queue, skb);
		spin_unlock(&path->lock);
		return NULL;
	case IPNG_PATH_ACT_DROP:
		drop = path->drop;
		break;
	case IPNG_PATH_ACT_DROP_FULL:
		drop = IPNG_STAT_TX_DROP_QUEUE_FULL;
		break;
	case IPNG_PATH_ACT_DROP_DEAD:
	default:
		drop = IPNG_STAT_TX_DROP_NO_PATH;
		break;
	}
	spin_unlock(&path->lock);
	ipng_drop(ipd, drop, 1);
	dev_kfree_skb_any(skb);
	return NULL;
}

/**
 * ipng_path_xmit() - send a packet its neighbour entry could not send
 * @ipd: interface
 * @skb: packet starting with the 24-byte link header; consumed
 * @n: the destination's neighbour entry, if it has one
 *
 * Transmit context, under RCU. A valid path sends at once and gives @n its
 * handle; otherwise the packet waits for resolution or is dropped and
 * counted.
 */
void ipng_path_xmit(struct ipng_dev *ipd, struct sk_buff *skb,
		    struct ipng_neigh *n)
{
	const u8 *daddr = skb->data;
	struct ipng_path *path;
	union ib_gid dgid;
	struct ipng_ah *ah;

	ipng_addr_gid(daddr, &dgid);

	path = rhashtable_lookup(&ipd->paths, &dgid, ipng_path_params);
	if (!path)
		path = ipng_path_new(ipd, &dgid);
	if (!path) {
		ipng_drop(ipd, IPNG_STAT_TX_DROP_NO_PATH, 1);
		dev_kfree_skb_any(skb);
		return;
	}
	/* Written at most once a jiffy, to keep the cache line shared. */
	if (time_after(jiffies, READ_ONCE(path->last_used)))
		WRITE_ONCE(path->last_used, jiffies);
	ah = rcu_dereference(path->ah);
	if (unlikely(!ah))
		ah = ipng_path_wait(path, skb);
	if (ah) {
		if (n)
			ipng_neigh_set_ah(n, ah);
		ipng_send_resolved(ipd, skb, ah);
	}
}

/*
 * Remove every path for which @expired says so. Walkers are serialized by
 * paths_walk_lock; removal sleeps, so it happens after the RCU walk.
 */
static void ipng_paths_walk(struct ipng_dev *ipd,
			    bool (*expired)(struct ipng_path *path,
					    unsigned long now),
			    unsigned long now)
{
	struct rhashtable_iter iter;
	struct ipng_path *path, *tmp;
	LIST_HEAD(dead);

	mutex_lock(&ipd->paths_walk_lock);
	rhashtable_walk_enter(&ipd->paths, &iter);
	rhashtable_walk_start(&iter);
	while ((path = rhashtable_walk_next(&iter))) {
		if (!IS_ERR(path) && expired(path, now))
			list_add_tail(&path->dead, &dead);
	}
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
	list_for_each_entry_safe(path, tmp, &dead, dead)
		ipng_path_remove(path);
	mutex_unlock(&ipd->paths_walk_lock);
}

/**
 * ipng_path_touch() - a neighbour of @dgid was used at @used
 * @ipd: interface
 * @dgid: the neighbour's GID
 * @used: jiffies of its last transmit
 *
 * Transmit to a known neighbour does not look at its path; the aging walk
 * passes the neighbours' use on, so a path lives as long as they do.
 */
void ipng_path_touch(struct ipng_dev *ipd, const union ib_gid *dgid,
		     unsigned long used)
{
	struct ipng_path *path;

	rcu_read_lock();
	path = rhashtable_lookup(&ipd->paths, dgid, ipng_path_params);
	if (path && time_after(used, READ_ONCE(path->last_used)))
		WRITE_ONCE(path->last_used, used);
	rcu_read_unlock();
}

/**
 * ipng_path_last_used() - when a destination was last sent to
 * @ipd: interface
 * @dgid: the destination (a multicast GID for send-only groups)
 *
 * Transmit through a neighbour entry reaches the path through the aging
 * walk (ipng_path_touch()), so this lags by up to a second.
 *
 * Return: jiffies of the last use, or 0 when there is no such path.
 */
unsigned long ipng_path_last_used(struct ipng_dev *ipd,
				  const union ib_gid *dgid)
{
	struct ipng_path *path;
	unsigned long used = 0;

	rcu_read_lock();
	path = rhashtable_lookup(&ipd->paths, dgid, ipng_path_params);
	if (path && READ_ONCE(path->state) == IPNG_PATH_VALID)
		used = READ_ONCE(path->last_used);
	rcu_read_unlock();
	return used;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_path_last_used);

static bool ipng_path_idle(struct ipng_path *path, unsigned long now)
{
	return time_after(now, READ_ONCE(path->last_used) +
			  ipng_path_timeout_jiffies());
}

static bool ipng_path_any(struct ipng_path *path, unsigned long now)
{
	return true;
}

/**
 * ipng_paths_age() - one aging pass over the neighbours and the paths
 * @ipd: interface
 * @now: the instant (jiffies) at which the whole pass judges idleness
 *
 * Neighbours idle at @now go and the others pass their last use on to
 * their path; then the paths idle at @now go. Both steps judge at the
 * same instant: when the clock was read once per step, a worker held off
 * between them for longer than path_timeout (a vCPU the host did not run
 * sees jiffies jump) removed a path whose neighbour was in use and kept
 * sending with its own address handle, leaving it without a cached path.
 *
 * Process context (the path_gc work, or a test that stopped it).
 */
void ipng_paths_age(struct ipng_dev *ipd, unsigned long now)
{
	mutex_lock(&ipd->paths_walk_lock);
	ipng_neighs_age(ipd, now);
	mutex_unlock(&ipd->paths_walk_lock);
	ipng_paths_walk(ipd, ipng_path_idle, now);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_paths_age);

static void ipng_path_gc(struct work_struct *work)
{
	struct ipng_dev *ipd = container_of(to_delayed_work(work),
					    struct ipng_dev, path_gc);

	ipng_paths_age(ipd, jiffies);
	queue_delayed_work(ipng_wq, &ipd->path_gc, HZ);
}

/**
 * ipng_paths_flush() - forget every path (port change, interface stop)
 * @ipd: interface
 *
 * Process context; may run on the module workqueue.
 */
void ipng_paths_flush(struct ipng_dev *ipd)
{
	mutex_lock(&ipd->paths_walk_lock);
	ipng_neighs_flush(ipd);
	mutex_unlock(&ipd->paths_walk_lock);
	ipng_paths_walk(ipd, ipng_path_any, jiffies);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_paths_flush);

/**
 * ipng_paths_init() - create the path cache and start aging
 * @ipd: interface
 *
 * Return: 0 or a negative errno.
 */
int ipng_paths_init(struct ipng_dev *ipd)
{
	int err;

	err = rhashtable_init(&ipd->paths, &ipng_path_params);
	if (err)
		return err;
	INIT_DELAYED_WORK(&ipd->path_gc, ipng_path_gc);
	return 0;
}

/**
 * ipng_paths_cleanup() - destroy the path cache
 * @ipd: interface, stopped
 */
void ipng_paths_cleanup(struct ipng_dev *ipd)
{
	cancel_delayed_work_sync(&ipd->path_gc);
	ipng_paths_flush(ipd);
	rcu_barrier();
	rhashtable_destroy(&ipd->paths);
}

/**
 * ipng_paths_start() - start aging paths
 * @ipd: interface being opened
 */
void ipng_paths_start(struct ipng_dev *ipd)
{
	queue_delayed_work(ipng_wq, &ipd->path_gc, HZ);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_paths_start);

/**
 * ipng_paths_stop() - stop aging and forget every path
 * @ipd: interface being stopped; transmit has stopped
 */
void ipng_paths_stop(struct ipng_dev *ipd)
{
	cancel_delayed_work_sync(&ipd->path_gc);
	ipng_paths_flush(ipd);
}

/* ---- read-only views for ipoib_fs.c ---- */

/**
 * ipng_paths_count() - number of cached paths, in any state
 * @ipd: interface
 *
 * Return: the number of paths; any context, may be stale once returned.
 */
unsigned int ipng_paths_count(struct ipng_dev *ipd)
{
	return atomic_read(&ipd->paths.nelems);
}

/**
 * ipng_paths_backlog() - packets waiting for their path to resolve
 * @ipd: interface
 *
 * Process context; walks the cache under RCU.
 *
 * Return: the sum of the resolve queues.
 */
unsigned int ipng_paths_backlog(struct ipng_dev *ipd)
{
	struct rhashtable_iter iter;
	struct ipng_path *path;
	unsigned int n = 0;

	rhashtable_walk_enter(&ipd->paths, &iter);
	rhashtable_walk_start(&iter);
	while ((path = rhashtable_walk_next(&iter)))
		if (!IS_ERR(path))
			n += skb_queue_len_lockless(&path->queue);
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
	return n;
}

static const char * const ipng_path_state_names[] = {
	[IPNG_PATH_RESOLVING]	= "resolving",
	[IPNG_PATH_VALID]	= "valid",
	[IPNG_PATH_FAILED]	= "failed",
	[IPNG_PATH_DEAD]	= "dead",
};

/* One line: GID, state, idle seconds, queued packets, address vector. */
static void ipng_path_print(struct ipng_path *path, struct seq_file *m)
{
	unsigned long idle = jiffies - READ_ONCE(path->last_used);
	struct ipng_dev *ipd = path->ipd;
	enum ipng_path_state state;
	struct ipng_ah *ah;
	unsigned int qlen;

	spin_lock_bh(&path->lock);
	state = path->state;
	qlen = skb_queue_len(&path->queue);
	spin_unlock_bh(&path->lock);
	ah = rcu_dereference(path->ah);

	seq_printf(m, "%pI6 state=%s age=%lu queue=%u", path->dgid.raw,
		   ipng_path_state_names[state], idle / HZ, qlen);
	if (ah && ah->type == RDMA_AH_ATTR_TYPE_ROCE)
		seq_printf(m, " dmac=%pM sl=%u\n", ah->dmac, ah->sl);
	else if (ah)
		seq_printf(m, " dlid=0x%04x sl=%u\n", ah->dlid, ah->sl);
	else if (rdma_protocol_roce(ipd->ca, ipd->port))
		seq_puts(m, " dmac=- sl=-\n");
	else
		seq_puts(m, " dlid=- sl=-\n");
}

/**
 * ipng_paths_dump() - print every cached path, one per line
 * @ipd: interface, registered
 * @m: the debugfs file
 *
 * Process context. A header line naming the fields comes first. Walks the
 * cache under RCU and takes each path's lock briefly, so transmit and
 * resolution go on meanwhile; a path added or removed during the walk may
 * be missed, and a table resize can show one twice.
 */
void ipng_paths_dump(struct ipng_dev *ipd, struct seq_file *m)
{
	struct rhashtable_iter iter;
	struct ipng_path *path;

	seq_printf(m, "# gid state age queue %s sl\n",
		   rdma_protocol_roce(ipd->ca, ipd->port) ? "dmac" : "dlid");
	rhashtable_walk_enter(&ipd->paths, &iter);
	rhashtable_walk_start(&iter);
	while ((path = rhashtable_walk_next(&iter)))
		if (!IS_ERR(path))
			ipng_path_print(path, m);
	rhashtable_walk_stop(&iter);
	rhashtable_walk_exit(&iter);
}
