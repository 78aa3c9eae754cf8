// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast membership: which groups the interface belongs to and how it
 * gets there. A small state machine per group (idle, joining, joined,
 * backoff, leaving) is driven by one pass function that compares what is
 * wanted with what is held and calls the fabric to join or leave:
 *
 *  - full membership: the broadcast group (always first, the others wait
 *    for it) and every group in the netdev's multicast list;
 *  - send-only membership: groups the interface sends to without having
 *    joined them, on fabrics that need one (InfiniBand); dropped again
 *    after path_timeout seconds without use;
 *  - a failed join is retried with exponential backoff; a fabric event
 *    (SM change, client reregister, lost group) makes every group rejoin;
 *  - a group no longer wanted, also one whose join is still in flight, is
 *    left as soon as its join returns; stopping the interface leaves all.
 *
 * The pass never holds a lock while the fabric works (joins may sleep
 * waiting for the subnet administrator, RoCE joins take RTNL), so the
 * wanted set can change under it. Only the pass calls the fabric, and
 * passes are serialized, so a group is never joined and left at once.
 * The machine knows the fabric only through struct ipng_mcast_ops, which
 * lets KUnit drive it with fake joins. Every state change of a group goes
 * through ipng_mc_set_state(), which fires ipoib_ng:mcast_state.
 */
#include <kunit/visibility.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "ipoib.h"
#include "ipoib_trace.h"

#define IPNG_MC_BACKOFF_MIN	HZ
#define IPNG_MC_BACKOFF_MAX	(64 * HZ)

/**
 * struct ipng_mcast_group - one group the interface wants or holds
 * @list: in &ipng_mcast.groups
 * @m: what the fabric sees: MGID, membership held, fabric data
 * @state: see enum ipng_mc_state
 * @want_full: a full membership is wanted (broadcast or netdev list)
 * @want_send: a send-only membership was asked for (used by transmit)
 * @last_send: jiffies of the last send-only request
 * @backoff: current retry delay after failures, 0 if none failed
 * @retry_at: jiffies when a group in backoff may be joined again
 * @must_leave: leave and join again (rejoin request)
 * @error: result of the last join
 */
struct ipng_mcast_group {
	struct list_head list;
	struct ipng_mcast_member m;
	enum ipng_mc_state state;
	bool want_full;
	bool want_send;
	unsigned long last_send;
	unsigned long backoff;
	unsigned long retry_at;
	bool must_leave;
	int error;
};

/**
 * struct ipng_mcast - multicast state of one interface
 * @ops: the fabric (or a test double)
 * @ctx: handed to @ops
 * @ndev: the interface, named in tracepoints (NULL under KUnit)
 * @lock: protects @groups and every field of the groups, @running,
 *	@rejoin and @dead; never held while @ops work
 * @groups: wanted or held groups, the broadcast group first
 * @running: the interface is up; groups are wanted
 * @rejoin: every held group must be left and joined again
 * @rejoins: groups marked for that so far (written under @lock, read
 *	without it)
 * @dead: being freed; no more kicks
 * @pass_lock: one pass at a time, so only one caller drives @ops
 * @sendonly_timeout: jiffies an unused send-only membership is kept
 */
struct ipng_mcast {
	const struct ipng_mcast_ops *ops;
	void *ctx;
	struct net_device *ndev;

	struct mutex lock;	/* groups, running, rejoin, dead */
	struct list_head groups;
	bool running;
	bool rejoin;
	unsigned long rejoins;
	bool dead;

	struct mutex pass_lock;	/* serializes ipng_mcast_run() */
	unsigned long sendonly_timeout;
};

static struct ipng_mcast_group *ipng_mc_find(struct ipng_mcast *mc,
					     const union ib_gid *mgid)
{
	struct ipng_mcast_group *grp;

	list_for_each_entry(grp, &mc->groups, list)
		if (!memcmp(&grp->m.mgid, mgid, sizeof(*mgid)))
			return grp;
	return NULL;
}

static struct ipng_mcast_group *ipng_mc_add(struct ipng_mcast *mc,
					    const union ib_gid *mgid,
					    bool broadcast)
{
	struct ipng_mcast_group *grp;

	grp = kzalloc(sizeof(*grp), GFP_KERNEL);
	if (!grp)
		return NULL;
	grp->m.mgid = *mgid;
	grp->m.broadcast = broadcast;
	grp->state = IPNG_MC_IDLE;
	if (broadcast)
		list_add(&grp->list, &mc->groups);
	else
		list_add_tail(&grp->list, &mc->groups);
	return grp;
}

/* The one place a group changes state; under mc->lock. */
static void ipng_mc_set_state(struct ipng_mcast *mc,
			      struct ipng_mcast_group *grp,
			      enum ipng_mc_state state)
{
	lockdep_assert_held(&mc->lock);
	if (grp->state != state)
		trace_mcast_state(mc->ndev, &grp->m.mgid, grp->m.join,
				  grp->state, state, grp->error);
	grp->state = state;
}

/* Tell the owner a pass is needed; under mc->lock. */
static void ipng_mc_kick(struct ipng_mcast *mc)
{
	lockdep_assert_held(&mc->lock);
	if (!mc->dead && mc->ops->kick)
		mc->ops->kick(mc->ctx);
}

/**
 * ipng_mcast_alloc() - create the multicast state of an interface
 * @ops: join, leave and kick operations
 * @ctx: handed to every operation
 *
 * Return: the state (stopped, no groups) or NULL.
 */
struct ipng_mcast *ipng_mcast_alloc(const struct ipng_mcast_ops *ops,
				    void *ctx)
{
	struct ipng_mcast *mc;

	mc = kzalloc(sizeof(*mc), GFP_KERNEL);
	if (!mc)
		return NULL;
	mc->ops = ops;
	mc->ctx = ctx;
	mutex_init(&mc->lock);
	mutex_init(&mc->pass_lock);
	INIT_LIST_HEAD(&mc->groups);
	mc->sendonly_timeout = 300 * HZ;
	return mc;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_alloc);

/**
 * ipng_mcast_free() - leave every group and free the state
 * @mc: state; the owner stopped kicking passes and waited for its last one
 */
void ipng_mcast_free(struct ipng_mcast *mc)
{
	struct ipng_mcast_group *grp, *tmp;

	mutex_lock(&mc->lock);
	mc->dead = true;
	mc->running = false;
	mutex_unlock(&mc->lock);
	ipng_mcast_run(mc, jiffies);
	list_for_each_entry_safe(grp, tmp, &mc->groups, list) {
		WARN(grp->m.join != IPNG_MC_NONE,
		     "ipoib_ng: group %pI6 still joined at free\n",
		     grp->m.mgid.raw);
		list_del(&grp->list);
		kfree(grp);
	}
	mutex_destroy(&mc->pass_lock);
	mutex_destroy(&mc->lock);
	kfree(mc);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_free);

/**
 * ipng_mcast_set_running() - start or stop wanting groups
 * @mc: state
 * @running: true when the interface opens, false when it stops
 *
 * Starting also rejoins whatever is still held from before; stopping
 * makes the next pass leave everything.
 */
void ipng_mcast_set_running(struct ipng_mcast *mc, bool running)
{
	mutex_lock(&mc->lock);
	mc->running = running;
	if (running)
		mc->rejoin = true;
	ipng_mc_kick(mc);
	mutex_unlock(&mc->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_set_running);

/**
 * ipng_mcast_set_wanted() - set the groups wanted as a full member
 * @mc: state
 * @mgids: the broadcast group first, then the netdev's groups
 * @n: number of entries (0: none wanted)
 *
 * Return: 0, or -ENOMEM when a new group could not be recorded (the
 * others are still updated; a later call retries).
 */
int ipng_mcast_set_wanted(struct ipng_mcast *mc, const union ib_gid *mgids,
			  int n)
{
	struct ipng_mcast_group *grp;
	bool changed = false;
	int err = 0, i;

	mutex_lock(&mc->lock);
	list_for_each_entry(grp, &mc->groups, list)
		grp->m.broadcast = false;
	list_for_each_entry(grp, &mc->groups, list) {
		bool want = false;

		for (i = 0; i < n && !want; i++)
			want = !memcmp(&grp->m.mgid, &mgids[i], sizeof(*mgids));
		changed |= want != grp->want_full;
		grp->want_full = want;
	}
	for (i = 0; i < n; i++) {
		grp = ipng_mc_find(mc, &mgids[i]);
		if (!grp) {
			grp = ipng_mc_add(mc, &mgids[i], i == 0);
			if (!grp) {
				err = -ENOMEM;
				continue;
			}
			grp->want_full = true;
			changed = true;
		}
		if (i == 0 && !grp->m.broadcast) {
			grp->m.broadcast = true;
			list_move(&grp->list, &mc->groups);
		}
	}
	if (changed)
		ipng_mc_kick(mc);
	mutex_unlock(&mc->lock);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_set_wanted);

/**
 * ipng_mcast_sendonly() - address of a group we send to
 * @mc: state
 * @mgid: the group
 * @attr: filled with the group's address vector when it is joined
 *
 * Any membership will do. Without one, a send-only join is requested and
 * -EAGAIN returned: the caller asks again a little later.
 *
 * Return: 0, -EAGAIN, -ENETDOWN when the interface is down, or the
 * fabric's error (the last join error while the group backs off).
 */
int ipng_mcast_sendonly(struct ipng_mcast *mc, const union ib_gid *mgid,
			struct rdma_ah_attr *attr)
{
	struct ipng_mcast_group *grp;
	int err = -EAGAIN;

	mutex_lock(&mc->lock);
	if (!mc->running) {
		err = -ENETDOWN;
		goto out;
	}
	grp = ipng_mc_find(mc, mgid);
	if (!grp) {
		grp = ipng_mc_add(mc, mgid, false);
		if (!grp) {
			err = -ENOMEM;
			goto out;
		}
	}
	grp->last_send = jiffies;
	if (grp->state == IPNG_MC_JOINED) {
		err = mc->ops->ah_attr ? mc->ops->ah_attr(mc->ctx, &grp->m, attr)
				       : -EOPNOTSUPP;
		goto out;
	}
	if (grp->state == IPNG_MC_BACKOFF && grp->error)
		err = grp->error;
	if (!grp->want_send) {
		grp->want_send = true;
		ipng_mc_kick(mc);
	}
out:
	mutex_unlock(&mc->lock);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_sendonly);

/**
 * ipng_mcast_rejoins() - groups rejoined so far
 * @mc: state
 *
 * Any context.
 *
 * Return: how many held groups ipng_mcast_run() marked to be left and
 * joined again after ipng_mcast_rejoin() calls.
 */
unsigned long ipng_mcast_rejoins(struct ipng_mcast *mc)
{
	return READ_ONCE(mc->rejoins);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_rejoins);

/**
 * ipng_mcast_rejoin() - leave and join every held group again
 * @mc: state
 *
 * For fabric events after which the subnet manager may have forgotten
 * our memberships. Any context that may sleep.
 */
void ipng_mcast_rejoin(struct ipng_mcast *mc)
{
	mutex_lock(&mc->lock);
	mc->rejoin = true;
	ipng_mc_kick(mc);
	mutex_unlock(&mc->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_rejoin);

/**
 * ipng_mcast_forget() - forget fabric data that names something gone
 * @mc: state
 * @priv: the value to clear from the groups' fabric data
 *
 * For fabric data that stays valid only under RTNL (RoCE keeps the
 * Ethernet device a group was joined on): the fabric calls this, under
 * RTNL, when that thing goes away, and its leaves then skip it.
 *
 * Return: how many groups named @priv.
 */
int ipng_mcast_forget(struct ipng_mcast *mc, const void *priv)
{
	struct ipng_mcast_group *grp;
	int n = 0;

	ASSERT_RTNL();
	mutex_lock(&mc->lock);
	list_for_each_entry(grp, &mc->groups, list) {
		if (grp->m.priv != priv)
			continue;
		grp->m.priv = NULL;
		n++;
	}
	mutex_unlock(&mc->lock);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_forget);

/* The membership a group should have now; under mc->lock. */
static enum ipng_mc_join ipng_mc_goal(struct ipng_mcast *mc,
				      struct ipng_mcast_group *grp,
				      unsigned long now)
{
	lockdep_assert_held(&mc->lock);
	if (!mc->running)
		return IPNG_MC_NONE;
	if (grp->want_full)
		return IPNG_MC_FULL;
	if (grp->want_send && mc->ops->last_used) {
		unsigned long used = mc->ops->last_used(mc->ctx, &grp->m.mgid);

		if (used && time_after(used, grp->last_send))
			grp->last_send = used;
	}
	if (grp->want_send &&
	    time_after(now, grp->last_send + mc->sendonly_timeout))
		grp->want_send = false;
	return grp->want_send ? IPNG_MC_SENDONLY : IPNG_MC_NONE;
}

/* Non-broadcast groups wait until the broadcast group is joined. */
static bool ipng_mc_bcast_ready(struct ipng_mcast *mc)
{
	struct ipng_mcast_group *first;

	first = list_first_entry_or_null(&mc->groups, struct ipng_mcast_group,
					 list);
	return !first || !first->m.broadcast || first->state == IPNG_MC_JOINED;
}

enum ipng_mc_action {
	IPNG_MC_DO_NOTHING,
	IPNG_MC_DO_JOIN,
	IPNG_MC_DO_LEAVE,
	IPNG_MC_DO_FREE,
};

static enum ipng_mc_action ipng_mc_next(struct ipng_mcast *mc,
					struct ipng_mcast_group *grp,
					unsigned long now)
{
	enum ipng_mc_join goal = ipng_mc_goal(mc, grp, now);

	if (grp->m.join != IPNG_MC_NONE &&
	    (grp->must_leave || grp->m.join != goal))
		return IPNG_MC_DO_LEAVE;
	grp->must_leave = false;
	if (goal == IPNG_MC_NONE)
		return grp->m.join == IPNG_MC_NONE ? IPNG_MC_DO_FREE
						   : IPNG_MC_DO_NOTHING;
	if (grp->m.join == goal)
		return IPNG_MC_DO_NOTHING;
	if (grp->state == IPNG_MC_BACKOFF && time_before(now, grp->retry_at))
		return IPNG_MC_DO_NOTHING;
	if (!grp->m.broadcast && !ipng_mc_bcast_ready(mc))
		return IPNG_MC_DO_NOTHING;
	return IPNG_MC_DO_JOIN;
}

/* Record the outcome of a join; under mc->lock. */
static void ipng_mc_joined(struct ipng_mcast *mc, struct ipng_mcast_group *grp,
			   enum ipng_mc_join goal, int err, unsigned long now)
{
	lockdep_assert_held(&mc->lock);
	grp->error = err;
	if (!err) {
		grp->m.join = goal;
		grp->backoff = 0;
		ipng_mc_set_state(mc, grp, IPNG_MC_JOINED);
		return;
	}
	grp->m.join = IPNG_MC_NONE;
	grp->m.priv = NULL;
	grp->backoff = grp->backoff ? min(grp->backoff * 2, IPNG_MC_BACKOFF_MAX)
				    : IPNG_MC_BACKOFF_MIN;
	grp->retry_at = now + grp->backoff;
	ipng_mc_set_state(mc, grp, IPNG_MC_BACKOFF);
}

/* Carry out @action on @grp; drops and retakes mc->lock around @ops. */
static void ipng_mc_act(struct ipng_mcast *mc, struct ipng_mcast_group *grp,
			enum ipng_mc_action action, unsigned long now)
{
	enum ipng_mc_join goal;
	int err;

	switch (action) {
	case IPNG_MC_DO_FREE:
		list_del(&grp->list);
		kfree(grp);
		return;
	case IPNG_MC_DO_LEAVE:
		ipng_mc_set_state(mc, grp, IPNG_MC_LEAVING);
		mutex_unlock(&mc->lock);
		mc->ops->leave(mc->ctx, &grp->m);
		mutex_lock(&mc->lock);
		grp->m.join = IPNG_MC_NONE;
		grp->m.priv = NULL;
		ipng_mc_set_state(mc, grp, IPNG_MC_IDLE);
		return;
	case IPNG_MC_DO_JOIN:
		goal = ipng_mc_goal(mc, grp, now);
		grp->m.join = goal;
		ipng_mc_set_state(mc, grp, IPNG_MC_JOINING);
		mutex_unlock(&mc->lock);
		err = mc->ops->join(mc->ctx, &grp->m);
		mutex_lock(&mc->lock);
		ipng_mc_joined(mc, grp, goal, err, now);
		return;
	default:
		return;
	}
}

/**
 * ipng_mcast_run() - one pass: join, leave and free until nothing is left
 * @mc: state
 * @now: the time the pass works with (jiffies; tests pass a future time)
 *
 * Calls the fabric without holding @mc's lock. Passes are serialized.
 *
 * Return: jiffies until the next pass is due (a backoff ends or a
 * send-only membership expires), or MAX_JIFFY_OFFSET if none is.
 */
unsigned long ipng_mcast_run(struct ipng_mcast *mc, unsigned long now)
{
	unsigned long next = MAX_JIFFY_OFFSET;
	struct ipng_mcast_group *grp;
	enum ipng_mc_action action;
	bool again;

	mutex_lock(&mc->pass_lock);
	mutex_lock(&mc->lock);
	if (mc->rejoin) {
		mc->rejoin = false;
		list_for_each_entry(grp, &mc->groups, list) {
			grp->must_leave = grp->m.join != IPNG_MC_NONE;
			if (grp->must_leave)
				WRITE_ONCE(mc->rejoins, mc->rejoins + 1);
			grp->backoff = 0;
			if (grp->state == IPNG_MC_BACKOFF)
				ipng_mc_set_state(mc, grp, IPNG_MC_IDLE);
		}
	}
	/* Every action changes its group's state, so this ends once the
	 * wanted set stops changing under us.
	 */
	do {
		again = false;
		list_for_each_entry(grp, &mc->groups, list) {
			action = ipng_mc_next(mc, grp, now);
			if (action == IPNG_MC_DO_NOTHING)
				continue;
			ipng_mc_act(mc, grp, action, now);
			again = true;
			break;
		}
	} while (again);

	list_for_each_entry(grp, &mc->groups, list) {
		if (grp->state == IPNG_MC_BACKOFF)
			next = min(next, grp->retry_at - now);
		if (grp->want_send && !grp->want_full)
			next = min(next, grp->last_send + mc->sendonly_timeout -
					 now + 1);
	}
	mutex_unlock(&mc->lock);
	mutex_unlock(&mc->pass_lock);
	return next;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_run);

/**
 * ipng_mcast_group_info() - the state of one group, for tests and dumps
 * @mc: state
 * @mgid: the group
 * @info: filled when the group is known
 *
 * Return: 0, or -ENOENT when the group is neither wanted nor held.
 */
int ipng_mcast_group_info(struct ipng_mcast *mc, const union ib_gid *mgid,
			  struct ipng_mcast_info *info)
{
	struct ipng_mcast_group *grp;
	int err = -ENOENT;

	mutex_lock(&mc->lock);
	grp = ipng_mc_find(mc, mgid);
	if (grp) {
		info->state = grp->state;
		info->join = grp->m.join;
		info->broadcast = grp->m.broadcast;
		info->backoff = grp->backoff;
		info->error = grp->error;
		err = 0;
	}
	mutex_unlock(&mc->lock);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_group_info);

/**
 * ipng_mcast_set_sendonly_timeout() - how long unused send-only joins stay
 * @mc: state
 * @timeout: jiffies
 */
void ipng_mcast_set_sendonly_timeout(struct ipng_mcast *mc,
				     unsigned long timeout)
{
	mutex_lock(&mc->lock);
	mc->sendonly_timeout = max(timeout, 1UL);
	mutex_unlock(&mc->lock);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_set_sendonly_timeout);

static const char *const ipng_mc_state_names[] = {
	[IPNG_MC_IDLE]		= "idle",
	[IPNG_MC_JOINING]	= "joining",
	[IPNG_MC_JOINED]	= "joined",
	[IPNG_MC_BACKOFF]	= "backoff",
	[IPNG_MC_LEAVING]	= "leaving",
};

static const char *const ipng_mc_join_names[] = {
	[IPNG_MC_NONE]		= "none",
	[IPNG_MC_SENDONLY]	= "sendonly",
	[IPNG_MC_FULL]		= "full",
};

/**
 * ipng_mcast_dump() - one line per group: MGID, state, membership, backoff
 * @ipd: interface
 * @m: seq_file of a debugfs dump
 *
 * A header line naming the fields comes first.
 */
void ipng_mcast_dump(struct ipng_dev *ipd, struct seq_file *m)
{
	struct ipng_mcast *mc = ipd->mcast;
	struct ipng_mcast_group *grp;

	seq_puts(m, "# mgid state join [broadcast] backoff_ms error\n");
	mutex_lock(&mc->lock);
	list_for_each_entry(grp, &mc->groups, list)
		seq_printf(m, "%pI6 state %s join %s%s backoff_ms %u error %d\n",
			   grp->m.mgid.raw, ipng_mc_state_names[grp->state],
			   ipng_mc_join_names[grp->m.join],
			   grp->m.broadcast ? " broadcast" : "",
			   jiffies_to_msecs(grp->backoff), grp->error);
	mutex_unlock(&mc->lock);
}

/**
 * ipng_mcast_count() - number of groups currently joined
 * @ipd: interface
 *
 * Return: the count (any membership).
 */
unsigned int ipng_mcast_count(struct ipng_dev *ipd)
{
	struct ipng_mcast *mc = ipd->mcast;
	struct ipng_mcast_group *grp;
	unsigned int n = 0;

	mutex_lock(&mc->lock);
	list_for_each_entry(grp, &mc->groups, list)
		n += grp->state == IPNG_MC_JOINED;
	mutex_unlock(&mc->lock);
	return n;
}

/* --- The interface's side: the netdev's groups and the work that runs
 * passes for it.
 */

static int ipng_dev_mc_join(void *ctx, struct ipng_mcast_member *m)
{
	struct ipng_dev *ipd = ctx;

	return ipd->fabric->mcast_join(ipd, m);
}

static void ipng_dev_mc_leave(void *ctx, struct ipng_mcast_member *m)
{
	struct ipng_dev *ipd = ctx;

	ipd->fabric->mcast_leave(ipd, m);
}

static int ipng_dev_mc_ah_attr(void *ctx, struct ipng_mcast_member *m,
			       struct rdma_ah_attr *attr)
{
	struct ipng_dev *ipd = ctx;

	if (!ipd->fabric->mcast_ah_attr)
		return -EOPNOTSUPP;
	return ipd->fabric->mcast_ah_attr(ipd, m, attr);
}

static void ipng_dev_mc_kick(void *ctx)
{
	struct ipng_dev *ipd = ctx;

	mod_delayed_work(ipng_mc_wq, &ipd->mcast_work, 0);
}

static unsigned long ipng_dev_mc_last_used(void *ctx,
					   const union ib_gid *mgid)
{
	return ipng_path_last_used(ctx, mgid);
}

static const struct ipng_mcast_ops ipng_dev_mc_ops = {
	.join		= ipng_dev_mc_join,
	.leave		= ipng_dev_mc_leave,
	.ah_attr	= ipng_dev_mc_ah_attr,
	.kick		= ipng_dev_mc_kick,
	.last_used	= ipng_dev_mc_last_used,
};

/* The MGIDs the netdev wants, broadcast first; caller frees. */
static union ib_gid *ipng_mcast_wanted(struct ipng_dev *ipd, int *count)
{
	struct net_device *ndev = ipd->ndev;
	struct netdev_hw_addr *ha;
	union ib_gid *gids;
	int n = 0;

	netif_addr_lock_bh(ndev);
	gids = kcalloc(netdev_mc_count(ndev) + 1, sizeof(*gids), GFP_ATOMIC);
	if (gids) {
		ipng_addr_gid(ndev->broadcast, &gids[n++]);
		netdev_for_each_mc_addr(ha, ndev)
			if (ipng_addr_is_mcast(ha->addr))
				ipng_addr_gid(ha->addr, &gids[n++]);
	}
	netif_addr_unlock_bh(ndev);
	*count = n;
	return gids;
}

/**
 * ipng_mcast_leave_to_user() - umcast: the groups user space has, not ours
 * @mc: state
 * @gids: the wanted groups, broadcast first (ipng_mcast_wanted())
 * @n: entries in @gids
 * @user_joined: true if another client of the port joined a group
 * @ctx: passed to @user_joined
 *
 * Drops from @gids the groups that another client joined and that @mc
 * does not hold or join as a full member already (as ours they would be
 * joined a second time; one of ours stays ours). The broadcast group
 * always stays.
 *
 * Return: the entries kept, in their order at the start of @gids.
 */
int ipng_mcast_leave_to_user(struct ipng_mcast *mc, union ib_gid *gids, int n,
			     bool (*user_joined)(void *ctx,
						 const union ib_gid *mgid),
			     void *ctx)
{
	struct ipng_mcast_info info;
	int i, kept = min(n, 1);

	for (i = 1; i < n; i++) {
		bool ours = !ipng_mcast_group_info(mc, &gids[i], &info) &&
			    info.join == IPNG_MC_FULL;

		if (!ours && user_joined(ctx, &gids[i]))
			continue;
		gids[kept++] = gids[i];
	}
	return kept;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mcast_leave_to_user);

static bool ipng_dev_mc_user_joined(void *ctx, const union ib_gid *mgid)
{
	struct ipng_dev *ipd = ctx;

	return ipd->fabric->mcast_user_joined(ipd, mgid);
}

static void ipng_mcast_work(struct work_struct *work)
{
	struct ipng_dev *ipd = container_of(to_delayed_work(work),
					    struct ipng_dev, mcast_work);
	union ib_gid *wanted;
	unsigned long next;
	int n;

	wanted = ipng_mcast_wanted(ipd, &n);
	if (wanted) {
		if (READ_ONCE(ipd->umcast) && ipd->fabric->mcast_user_joined)
			n = ipng_mcast_leave_to_user(ipd->mcast, wanted, n,
						     ipng_dev_mc_user_joined,
						     ipd);
		ipng_mcast_set_wanted(ipd->mcast, wanted, n);
	}
	kfree(wanted);
	ipng_mcast_set_sendonly_timeout(ipd->mcast,
					ipng_path_timeout_jiffies());
	next = ipng_mcast_run(ipd->mcast, jiffies);
	if (!wanted)
		next = min(next, (unsigned long)HZ);
	if (next != MAX_JIFFY_OFFSET)
		queue_delayed_work(ipng_mc_wq, &ipd->mcast_work, next);
}

/**
 * ipng_mcast_init() - allocate the multicast state of an interface
 * @ipd: interface
 *
 * Return: 0 or -ENOMEM.
 */
int ipng_mcast_init(struct ipng_dev *ipd)
{
	INIT_DELAYED_WORK(&ipd->mcast_work, ipng_mcast_work);
	ipd->mcast = ipng_mcast_alloc(&ipng_dev_mc_ops, ipd);
	if (!ipd->mcast)
		return -ENOMEM;
	ipd->mcast->ndev = ipd->ndev;
	return 0;
}

/**
 * ipng_mcast_cleanup() - leave whatever is still held and free the state
 * @ipd: interface, unregistered; RTNL not held (RoCE leaves take it)
 */
void ipng_mcast_cleanup(struct ipng_dev *ipd)
{
	struct ipng_mcast *mc = ipd->mcast;

	if (!mc)
		return;
	mutex_lock(&mc->lock);
	mc->dead = true;
	mutex_unlock(&mc->lock);
	cancel_delayed_work_sync(&ipd->mcast_work);
	ipng_mcast_free(mc);
	ipd->mcast = NULL;
}

/**
 * ipng_mcast_start() - join the broadcast group and the netdev's groups
 * @ipd: interface being opened
 */
void ipng_mcast_start(struct ipng_dev *ipd)
{
	ipng_mcast_set_running(ipd->mcast, true);
}

/**
 * ipng_mcast_stop() - leave every group, soon
 * @ipd: interface being stopped, under RTNL
 *
 * The leaving happens in the multicast work (RoCE leaves take RTNL), so
 * it cannot be waited for here; ipng_mcast_cleanup() finishes it at the
 * latest.
 */
void ipng_mcast_stop(struct ipng_dev *ipd)
{
	ipng_mcast_set_running(ipd->mcast, false);
}

/**
 * ipng_set_umcast() - leave groups user space joined to it, or not
 * @ipd: interface
 * @on: the new setting (sysfs umcast, IFLA_IPOIB_UMCAST)
 *
 * Any process context. The multicast list is looked at again.
 */
void ipng_set_umcast(struct ipng_dev *ipd, bool on)
{
	if (READ_ONCE(ipd->umcast) == on)
		return;
	WRITE_ONCE(ipd->umcast, on);
	if (on)
		netdev_info(ipd->ndev, "multicast groups user space joined are left to it\n");
	mod_delayed_work(ipng_mc_wq, &ipd->mcast_work, 0);
}

/**
 * ipng_mcast_rx_mode() - the netdev's multicast list changed
 * @ipd: interface; atomic context (ndo_set_rx_mode)
 */
void ipng_mcast_rx_mode(struct ipng_dev *ipd)
{
	mod_delayed_work(ipng_mc_wq, &ipd->mcast_work, 0);
}
