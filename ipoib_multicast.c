// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast receive membership: while the interface is up, the UD QP is a
 * member of the broadcast group and of every group in the netdev's
 * multicast list. One work item reconciles the joined set with the wanted
 * set after open and ndo_set_rx_mode; stop leaves everything at once.
 * Joining and leaving go through the fabric ops. Sending to a group needs
 * no membership here: it goes through the path cache like unicast.
 *
 * All of it runs under RTNL (open and stop hold it already, and the IPv6
 * group membership RoCE needs requires it), which is also what protects
 * the joined list.
 */
#include <linux/rtnetlink.h>
#include <linux/slab.h>

#include "ipoib.h"

/**
 * struct ipng_mcast_group - one group the QP is attached to
 * @list: in &ipng_mcast.joined
 * @mgid: the group
 * @cookie: fabric data needed to leave (the RoCE lower ifindex)
 */
struct ipng_mcast_group {
	struct list_head list;
	union ib_gid mgid;
	int cookie;
};

/**
 * struct ipng_mcast - multicast state of an interface
 * @ipd: the interface
 * @joined: groups attached (RTNL)
 * @running: the interface is up; groups are wanted (RTNL)
 * @work: reconciles @joined with the wanted set
 * @njoined: entries in @joined; written under RTNL, read without it
 */
struct ipng_mcast {
	struct ipng_dev *ipd;
	struct list_head joined;
	unsigned int njoined;
	bool running;
	struct work_struct work;
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

static bool ipng_gid_in(const union ib_gid *gid, const union ib_gid *set,
			int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!memcmp(gid, &set[i], sizeof(*gid)))
			return true;
	return false;
}

static void ipng_mcast_leave(struct ipng_mcast *mc,
			     struct ipng_mcast_group *grp)
{
	struct ipng_dev *ipd = mc->ipd;

	ipd->fabric->mcast_leave(ipd, &grp->mgid, grp->cookie);
	list_del(&grp->list);
	WRITE_ONCE(mc->njoined, mc->njoined - 1);
	kfree(grp);
}

static void ipng_mcast_join(struct ipng_mcast *mc, const union ib_gid *mgid)
{
	struct ipng_dev *ipd = mc->ipd;
	struct ipng_mcast_group *grp;
	int err;

	grp = kzalloc(sizeof(*grp), GFP_KERNEL);
	if (!grp)
		return;
	grp->mgid = *mgid;
	err = ipd->fabric->mcast_join(ipd, mgid, &grp->cookie);
	if (err) {
		netdev_warn(ipd->ndev, "cannot join multicast group %pI6: %d\n",
			    mgid->raw, err);
		kfree(grp);
		return;
	}
	list_add_tail(&grp->list, &mc->joined);
	WRITE_ONCE(mc->njoined, mc->njoined + 1);
}

static void ipng_mcast_work(struct work_struct *work)
{
	struct ipng_mcast *mc = container_of(work, struct ipng_mcast, work);
	struct ipng_mcast_group *grp, *tmp;
	union ib_gid *wanted = NULL;
	int n = 0, i;

	rtnl_lock();
	if (mc->running)
		wanted = ipng_mcast_wanted(mc->ipd, &n);
	list_for_each_entry_safe(grp, tmp, &mc->joined, list)
		if (!ipng_gid_in(&grp->mgid, wanted, n))
			ipng_mcast_leave(mc, grp);
	for (i = 0; i < n; i++) {
		bool have = false;

		list_for_each_entry(grp, &mc->joined, list)
			have |= !memcmp(&grp->mgid, &wanted[i], sizeof(*wanted));
		if (!have)
			ipng_mcast_join(mc, &wanted[i]);
	}
	rtnl_unlock();
	kfree(wanted);
}

/**
 * ipng_mcast_init() - allocate the multicast state
 * @ipd: interface
 *
 * Return: 0 or -ENOMEM.
 */
int ipng_mcast_init(struct ipng_dev *ipd)
{
	struct ipng_mcast *mc;

	mc = kzalloc(sizeof(*mc), GFP_KERNEL);
	if (!mc)
		return -ENOMEM;
	mc->ipd = ipd;
	INIT_LIST_HEAD(&mc->joined);
	INIT_WORK(&mc->work, ipng_mcast_work);
	ipd->mcast = mc;
	return 0;
}

/**
 * ipng_mcast_cleanup() - free the multicast state; nothing is joined
 * @ipd: interface, stopped and unregistered; RTNL not held
 */
void ipng_mcast_cleanup(struct ipng_dev *ipd)
{
	if (!ipd->mcast)
		return;
	cancel_work_sync(&ipd->mcast->work);
	WARN_ON(!list_empty(&ipd->mcast->joined));
	kfree(ipd->mcast);
	ipd->mcast = NULL;
}

/**
 * ipng_mcast_start() - join the broadcast group and the netdev's groups
 * @ipd: interface being opened
 */
void ipng_mcast_start(struct ipng_dev *ipd)
{
	ASSERT_RTNL();
	ipd->mcast->running = true;
	queue_work(ipng_wq, &ipd->mcast->work);
}

/**
 * ipng_mcast_stop() - leave every group, synchronously
 * @ipd: interface being stopped, under RTNL
 *
 * A reconcile still queued finds the interface stopped and does nothing.
 */
void ipng_mcast_stop(struct ipng_dev *ipd)
{
	struct ipng_mcast *mc = ipd->mcast;
	struct ipng_mcast_group *grp, *tmp;

	ASSERT_RTNL();
	mc->running = false;
	list_for_each_entry_safe(grp, tmp, &mc->joined, list)
		ipng_mcast_leave(mc, grp);
}

/**
 * ipng_mcast_rx_mode() - the netdev's multicast list changed
 * @ipd: interface; atomic context (ndo_set_rx_mode)
 */
void ipng_mcast_rx_mode(struct ipng_dev *ipd)
{
	if (ipd->mcast)
		queue_work(ipng_wq, &ipd->mcast->work);
}

/**
 * ipng_mcast_count() - number of groups the UD QP is attached to
 * @ipd: interface
 *
 * Any context, no lock: the value may be stale once returned (for /proc).
 *
 * Return: the number of joined groups.
 */
unsigned int ipng_mcast_count(struct ipng_dev *ipd)
{
	return ipd->mcast ? READ_ONCE(ipd->mcast->njoined) : 0;
}
