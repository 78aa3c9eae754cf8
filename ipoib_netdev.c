// SPDX-License-Identifier: GPL-2.0
/*
 * The network device of one port: creation and teardown, net_device_ops,
 * link address and broadcast address, and carrier and datagram MTU
 * tracking after port events. The MTU rules themselves (per mode) are in
 * ipoib_mode.c.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_cache.h>
#include <kunit/visibility.h>

#include "ipoib.h"

static int ipng_open(struct net_device *ndev)
{
	struct ipng_dev *ipd = ipng_priv(ndev);
	int err;

	err = ipng_ib_open(ipd);
	if (err)
		return err;
	set_bit(IPNG_F_OPEN, &ipd->flags);
	ipng_cm_open(ipd);
	ipng_paths_start(ipd);
	ipng_mcast_start(ipd);
	/* Halted without its P_Key: the restart that finds it wakes them. */
	if (test_bit(IPNG_F_RUNNING, &ipd->flags))
		netif_tx_start_all_queues(ndev);
	else
		netif_tx_stop_all_queues(ndev);
	queue_work(ipng_wq, &ipd->notify_work);
	return 0;
}

static int ipng_stop(struct net_device *ndev)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	/* Cleared first: completions no longer wake the queues. */
	if (!test_and_clear_bit(IPNG_F_OPEN, &ipd->flags)) {
		netif_tx_disable(ndev);
		return 0;
	}
	netif_tx_disable(ndev);
	ipng_mcast_stop(ipd);
	ipng_paths_stop(ipd);
	ipng_cm_stop(ipd);
	ipng_ib_stop(ipd);
	return 0;
}

static netdev_tx_t ipng_start_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	if (unlikely(skb->len < IPNG_HARD_LEN)) {
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_DROP_BAD_HEADER, 1);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	if (unlikely(skb->len - IPNG_HARD_LEN > ndev->mtu)) {
		ipng_stat_add(ipd->stats, IPNG_STAT_TX_DROP_TOO_BIG, 1);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	ipng_neigh_xmit(ipd, skb);
	return NETDEV_TX_OK;
}

static void ipng_set_rx_mode(struct net_device *ndev)
{
	ipng_mcast_rx_mode(ipng_priv(ndev));
}

/*
 * A transmit queue stayed stopped (a send ring or the connections full
 * without progress): the stall detector resets the channels.
 */
static void ipng_tx_timeout(struct net_device *ndev, unsigned int txqueue)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	netdev_warn(ndev, "transmit queue %u timed out\n", txqueue);
	set_bit(IPNG_F_WATCHDOG, &ipd->flags);
	mod_delayed_work(ipng_wq, &ipd->stall_work, 0);
}

/**
 * ipng_stats_read() - every counter of an interface
 * @ipd: interface
 * @c: result: the per-CPU counters, with the packet and byte totals
 *	summed over the channels (ipng_chans_read())
 *
 * Any context.
 */
void ipng_stats_read(struct ipng_dev *ipd, u64 c[IPNG_STAT_MAX])
{
	struct ipng_chan_counters t;

	ipng_stats_sum(ipd->stats, c);
	ipng_chans_read(ipd, NULL, &t);
	c[IPNG_STAT_RX_PACKETS] = t.rx_packets;
	c[IPNG_STAT_RX_BYTES] = t.rx_bytes;
	c[IPNG_STAT_TX_PACKETS] = t.tx_packets;
	c[IPNG_STAT_TX_BYTES] = t.tx_bytes;
	c[IPNG_STAT_MCAST_REJOINS] = ipd->mcast ? ipng_mcast_rejoins(ipd->mcast) : 0;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_stats_read);

static void ipng_get_stats64(struct net_device *ndev,
			     struct rtnl_link_stats64 *st)
{
	struct ipng_dev *ipd = ipng_priv(ndev);
	u64 c[IPNG_STAT_MAX];

	ipng_stats_read(ipd, c);
	st->rx_packets = c[IPNG_STAT_RX_PACKETS];
	st->rx_bytes = c[IPNG_STAT_RX_BYTES];
	st->tx_packets = c[IPNG_STAT_TX_PACKETS];
	st->tx_bytes = c[IPNG_STAT_TX_BYTES];
	st->rx_errors = c[IPNG_STAT_RX_ERRORS];
	st->tx_errors = c[IPNG_STAT_TX_ERRORS];
	st->rx_dropped = c[IPNG_STAT_RX_DROP_SHORT] +
			 c[IPNG_STAT_RX_DROP_PROTO] +
			 c[IPNG_STAT_RX_DROP_OWN_MCAST] +
			 c[IPNG_STAT_RX_DROP_NOMEM] +
			 c[IPNG_STAT_RX_DROP_BACKLOG];
	st->tx_dropped = c[IPNG_STAT_TX_DROP_NO_PATH] +
			 c[IPNG_STAT_TX_DROP_QUEUE_FULL] +
			 c[IPNG_STAT_TX_DROP_BAD_HEADER] +
			 c[IPNG_STAT_TX_DROP_TOO_BIG] +
			 c[IPNG_STAT_TX_DROP_POST] +
			 c[IPNG_STAT_TX_DROP_RING_FULL] +
			 c[IPNG_STAT_TX_DROP_CM_QUEUE] +
			 c[IPNG_STAT_TX_DROP_NOT_JOINED];
}

/* A child says which interface it is a child of (ip link: "ib0.8001@ib0"). */
static int ipng_get_iflink(const struct net_device *ndev)
{
	const struct ipng_dev *ipd = ipng_priv(ndev);

	return ipd->parent ? ipd->parent->ndev->ifindex : ndev->ifindex;
}

static void ipng_uninit(struct net_device *ndev)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	if (ipd->parent)
		ipng_child_uninit(ipd);
}

static const struct net_device_ops ipng_netdev_ops = {
	.ndo_uninit		= ipng_uninit,
	.ndo_get_iflink		= ipng_get_iflink,
	.ndo_open		= ipng_open,
	.ndo_stop		= ipng_stop,
	.ndo_start_xmit		= ipng_start_xmit,
	.ndo_set_rx_mode	= ipng_set_rx_mode,
	.ndo_get_stats64	= ipng_get_stats64,
	.ndo_change_mtu		= ipng_change_mtu,
	.ndo_tx_timeout		= ipng_tx_timeout,
};

/**
 * ipng_setup() - the netdev defaults of every interface
 * @ndev: freshly allocated (alloc_netdev_mqs() here, or rtnetlink for a
 *	child made with ip link add)
 */
void ipng_setup(struct net_device *ndev)
{
	ndev->netdev_ops	= &ipng_netdev_ops;
	ndev->ethtool_ops	= &ipng_ethtool_ops;
	ndev->rtnl_link_ops	= &ipng_link_ops;
	ndev->header_ops	= &ipng_header_ops;
	ndev->type		= ARPHRD_INFINIBAND;
	ndev->addr_len		= IPNG_ADDR_LEN;
	ndev->hard_header_len	= IPNG_HARD_LEN;
	ndev->flags		= IFF_BROADCAST | IFF_MULTICAST;
	ndev->min_mtu		= ETH_MIN_MTU;
	ndev->max_mtu		= ipng_ud_mtu(IB_MTU_2048);
	ndev->mtu		= ndev->max_mtu;
	ndev->tx_queue_len	= ipng_send_queue_size * 2;
	/* Behind the driver's own stall detector (ipoib_chan.c). */
	ndev->watchdog_timeo	= 10 * HZ;
	/* A packet too big for its way is answered with an ICMP "too big",
	 * which needs the packet's route.
	 */
	netif_keep_dst(ndev);
	/* The one device-specific group: net-sysfs fills the slots after it. */
	ndev->sysfs_groups[0]	= &ipng_sysfs_group;
}

/**
 * struct ipng_port_view - what the interface mirrors of its port
 * @up: port state is ACTIVE
 * @mtu: datagram MTU of the active IB MTU, or 0 if unknown
 * @addr: link address made of the QPN and the current port GID
 */
struct ipng_port_view {
	bool up;
	int mtu;
	u8 addr[IPNG_ADDR_LEN];
};

/*
 * Read the port without RTNL: on RoCE ports ib_query_port() takes RTNL
 * itself (for the Ethernet link speed).
 */
static void ipng_read_port(struct ipng_dev *ipd, struct ipng_port_view *view)
{
	struct ib_port_attr attr;
	union ib_gid gid;
	int index;

	view->up = false;
	view->mtu = 0;
	if (!ipng_ib_query_port(ipd, &attr)) {
		view->up = attr.state == IB_PORT_ACTIVE;
		view->mtu = max(ipng_ud_mtu(attr.active_mtu), 0);
		WRITE_ONCE(ipd->port_mtu, attr.active_mtu);
		WRITE_ONCE(ipd->speed,
			   ipng_port_speed(attr.active_speed,
					   attr.active_width));
	}
	index = ipd->fabric->addr_gid_index(ipd);
	if (rdma_query_gid(ipd->ca, ipd->port, index, &gid))
		memset(&gid, 0, sizeof(gid));
	ipng_addr_build(view->addr, ipd->cm ? IPNG_FLAG_RC : 0,
			ipd->qp->qp_num, &gid);
}

/*
 * The largest MTU of either mode; ipng_change_mtu() enforces the limit of
 * the current one. Under RTNL once registered.
 */
static void ipng_update_max_mtu(struct ipng_dev *ipd)
{
	if (ipd->ndev->reg_state == NETREG_REGISTERED)
		ASSERT_RTNL();
	ipd->ndev->max_mtu = max(ipd->ud_mtu, ipng_cm_max_mtu(ipd));
}

/*
 * The datagram limit moved (port MTU or broadcast group). The MTU changes
 * as ipng_mtu_after_ud_change() says: lowered when above the limit of the
 * mode, and in datagram mode it follows the limit when it sat at the old
 * one. Before registration the MTU simply is the limit. Under RTNL once
 * registered.
 */
static void ipng_set_ud_mtu(struct ipng_dev *ipd, int ud_mtu)
{
	struct net_device *ndev = ipd->ndev;
	int old = ipd->ud_mtu;
	int mtu, err;

	WRITE_ONCE(ipd->ud_mtu, ud_mtu);
	ipng_update_max_mtu(ipd);
	if (ndev->reg_state != NETREG_REGISTERED) {
		WRITE_ONCE(ndev->mtu, ud_mtu);
		return;
	}
	/* Receive buffers are sized for the datagram limit, not the MTU. */
	if (ud_mtu > old)
		ipng_chans_mtu_changed(ipd);
	mtu = ipng_mtu_after_ud_change(ipng_connected(ipd), ndev->mtu, old,
				       ud_mtu, ipng_cm_max_mtu(ipd));
	if (mtu == ndev->mtu)
		return;
	err = dev_set_mtu(ndev, mtu);
	if (err)
		netdev_warn(ndev, "MTU %u not changed to %d after the datagram limit moved from %d to %d: %d\n",
			    ndev->mtu, mtu, old, ud_mtu, err);
}

/*
 * Mirror the port on the netdev: carrier follows the port state, the
 * datagram MTU limit follows the active IB MTU (an Ethernet MTU change
 * under RoCE moves it) and the link address follows the GID (RoCE GIDs
 * follow the MAC). Called under RTNL once registered.
 */
static void ipng_apply_port(struct ipng_dev *ipd,
			    struct ipng_port_view *view)
{
	struct net_device *ndev = ipd->ndev;
	bool registered = ndev->reg_state == NETREG_REGISTERED;

	if (registered)
		ASSERT_RTNL();
	if (view->mtu > 0 && ipd->bcast_mtu > 0)
		view->mtu = min(view->mtu, ipd->bcast_mtu);
	if (view->mtu > 0 && view->mtu != ipd->ud_mtu)
		ipng_set_ud_mtu(ipd, view->mtu);
	if (memcmp(view->addr, ndev->dev_addr, IPNG_ADDR_LEN)) {
		dev_addr_set(ndev, view->addr);
		if (registered)
			call_netdevice_notifiers(NETDEV_CHANGEADDR, ndev);
	}
	/* Before registration carrier stays off: the first refresh after
	 * registration turns it on through linkwatch, which sets operstate.
	 */
	if (!registered)
		return;
	/* An open interface whose channels could not be restarted carries
	 * nothing, whatever the port says.
	 */
	if (test_bit(IPNG_F_OPEN, &ipd->flags) &&
	    !test_bit(IPNG_F_RUNNING, &ipd->flags))
		view->up = false;
	if (view->up && !netif_carrier_ok(ndev))
		netif_carrier_on(ndev);
	else if (!view->up && netif_carrier_ok(ndev))
		netif_carrier_off(ndev);
}

static void ipng_port_work(struct work_struct *work)
{
	struct ipng_dev *ipd = container_of(work, struct ipng_dev, port_work);
	struct ipng_port_view view;

	ipng_stat_add_bh(ipd->stats, IPNG_STAT_PORT_EVENTS, 1);
	ipng_read_port(ipd, &view);
	rtnl_lock();
	ipng_chans_follow_pkey(ipd);
	ipng_apply_port(ipd, &view);
	rtnl_unlock();
	/* Whatever changed, cached address handles may now be wrong, and
	 * the subnet manager may have forgotten our groups.
	 */
	ipng_paths_flush(ipd);
	ipng_cm_flush_tx(ipd);
	ipng_mcast_rejoin(ipd->mcast);
	ipd->repair_tries = 0;
	if (!test_bit(IPNG_F_DYING, &ipd->flags))
		mod_delayed_work(ipng_wq, &ipd->repair_work, 0);
}

/*
 * Flushed paths free their address handles after a grace period; a
 * packet still in the send ring holds its handle until it completes. A
 * fabric that could not repair yet is asked again a second later.
 */
static void ipng_repair_work(struct work_struct *work)
{
	struct ipng_dev *ipd = container_of(to_delayed_work(work),
					    struct ipng_dev, repair_work);

	ipng_ah_flush();
	if (ipd->fabric->repair_gids(ipd) != -EAGAIN)
		return;
	if (++ipd->repair_tries < IPNG_REPAIR_TRIES &&
	    !test_bit(IPNG_F_DYING, &ipd->flags)) {
		queue_delayed_work(ipng_wq, &ipd->repair_work, HZ);
		return;
	}
	netdev_warn(ipd->ndev, "port %u GID table not repaired after %d tries\n",
		    ipd->port, ipd->repair_tries);
}

/*
 * A (re)opened interface has a new QPN in its address: tell the neighbours
 * (gratuitous ARP, unsolicited NA) rather than let them send to the old
 * one until their entries time out. Runs once ndo_open has returned.
 */
static void ipng_notify_work(struct work_struct *work)
{
	struct ipng_dev *ipd = container_of(work, struct ipng_dev,
					    notify_work);

	rtnl_lock();
	if (netif_running(ipd->ndev) && netif_carrier_ok(ipd->ndev))
		__netdev_notify_peers(ipd->ndev);
	rtnl_unlock();
}

/**
 * ipng_dev_refresh() - re-read the port into the interface, soon
 * @ipd: interface
 *
 * Any context; the work runs in process context on the module workqueue
 * and re-reads everything (carrier, MTU, address, paths), so callers need
 * not say what changed.
 */
void ipng_dev_refresh(struct ipng_dev *ipd)
{
	if (!test_bit(IPNG_F_DYING, &ipd->flags))
		queue_work(ipng_wq, &ipd->port_work);
}

/**
 * ipng_dev_set_bcast_mtu() - the broadcast group limits the datagram MTU
 * @ipd: interface
 * @mtu: datagram MTU the group allows
 *
 * Process context without RTNL (the multicast work).
 */
void ipng_dev_set_bcast_mtu(struct ipng_dev *ipd, int mtu)
{
	int ud_mtu;

	rtnl_lock();
	ipd->bcast_mtu = mtu;
	ud_mtu = ipng_ud_mtu(READ_ONCE(ipd->port_mtu));
	if (ud_mtu > 0 && mtu > 0)
		ud_mtu = min(ud_mtu, mtu);
	if (ud_mtu > 0 && ud_mtu != ipd->ud_mtu)
		ipng_set_ud_mtu(ipd, ud_mtu);
	rtnl_unlock();
}

/*
 * The P_Key of a fresh interface: @pkey for a child (its index is looked
 * up at every open), else the port's default at index 0.
 */
static int ipng_read_pkey(struct ipng_dev *ipd, u16 pkey)
{
	int err;

	ipd->qkey = IPNG_DEFAULT_QKEY;
	ipd->scope = IPNG_SCOPE_LINK;
	ipd->pkey_index = 0;
	if (pkey) {
		ipd->pkey = pkey;
		return 0;
	}
	err = ib_query_pkey(ipd->ca, ipd->port, 0, &pkey);
	if (err)
		return err;
	if (!ipng_pkey_valid(pkey))
		return -EINVAL;
	ipd->pkey = pkey | IPNG_PKEY_FULL;
	return 0;
}

/*
 * What a child starts with of its port: the parent's last reading (a
 * RoCE port cannot be queried under RTNL, where children are made); its
 * own port work reads the port once it is registered.
 */
static void ipng_view_from_parent(struct ipng_dev *ipd,
				  struct ipng_port_view *view)
{
	const struct ipng_dev *parent = ipd->parent;
	union ib_gid gid;
	int index;

	WRITE_ONCE(ipd->port_mtu, READ_ONCE(parent->port_mtu));
	WRITE_ONCE(ipd->speed, READ_ONCE(parent->speed));
	view->up = false;
	view->mtu = max(ipng_ud_mtu(ipd->port_mtu), 0);
	index = ipd->fabric->addr_gid_index(ipd);
	if (rdma_query_gid(ipd->ca, ipd->port, index, &gid))
		memset(&gid, 0, sizeof(gid));
	ipng_addr_build(view->addr, ipd->cm ? IPNG_FLAG_RC : 0,
			ipd->qp->qp_num, &gid);
}

/**
 * ipng_dev_init() - set up a fresh, unregistered interface
 * @ndev: allocated with ipng_setup() and IPNG_MAX_CHANNELS queues
 * @ic: the RDMA device's client data
 * @port: port number
 * @fabric: the port's link-layer ops
 * @parent: for a child, its port interface; NULL for a port interface
 * @pkey: a child's P_Key (full-membership bit set); 0: the port's
 *
 * Creates the verbs objects and the tables; the caller registers @ndev.
 * Children are made under RTNL, port interfaces without.
 *
 * Return: 0, or an error with everything undone (@ndev still to be freed
 * by the caller).
 */
int ipng_dev_init(struct net_device *ndev, struct ipng_ca *ic, u32 port,
		  const struct ipng_fabric_ops *fabric,
		  struct ipng_dev *parent, u16 pkey)
{
	struct ipng_dev *ipd = ipng_priv(ndev);
	struct ib_device *ca = ic->ca;
	struct ipng_port_view view;
	int err;

	ipd->ndev = ndev;
	ipd->ca = ca;
	ipd->port = port;
	ipd->fabric = fabric;
	ipd->parent = parent;
	ipd->ic = ic;
	INIT_WORK(&ipd->port_work, ipng_port_work);
	INIT_DELAYED_WORK(&ipd->repair_work, ipng_repair_work);
	INIT_WORK(&ipd->notify_work, ipng_notify_work);
	INIT_LIST_HEAD(&ipd->list);
	/* Datagram mode, at the default MTU until the port says more. */
	ipd->ud_mtu = ndev->mtu;

	err = ipng_read_pkey(ipd, pkey);
	if (err)
		return err;
	ipd->stats = netdev_alloc_pcpu_stats(struct ipng_pcpu_stats);
	if (!ipd->stats)
		return -ENOMEM;
	err = ipng_neighs_init(ipd);
	if (err)
		goto err_stats;
	err = ipng_paths_init(ipd);
	if (err)
		goto err_neighs;
	err = ipng_mcast_init(ipd);
	if (err)
		goto err_paths;
	err = ipng_ib_init(ipd);
	if (err)
		goto err_mcast;
	err = ipng_cm_init(ipd);
	if (err)
		goto err_ib;
	if (parent)
		ipng_view_from_parent(ipd, &view);
	else
		ipng_read_port(ipd, &view);
	ipng_apply_port(ipd, &view);
	/* Once every verbs object exists, connected-mode support is known. */
	ipng_update_max_mtu(ipd);
	netif_carrier_off(ndev);
	ipng_broadcast_addr(ndev->broadcast, ipd->scope, ipd->pkey);
	SET_NETDEV_DEV(ndev, ca->dev.parent ?: &ca->dev);
	ndev->dev_port = port - 1;
	return 0;

err_ib:
	ipng_cm_cleanup(ipd);
	ipng_ib_cleanup(ipd);
err_mcast:
	ipng_mcast_cleanup(ipd);
err_paths:
	ipng_paths_cleanup(ipd);
err_neighs:
	ipng_neighs_cleanup(ipd);
err_stats:
	free_percpu(ipd->stats);
	return err;
}

/**
 * ipng_dev_uninit() - free what ipng_dev_init() set up
 * @ipd: interface, unregistered (or never registered); its works done
 *
 * The netdev itself is left to the caller.
 */
void ipng_dev_uninit(struct ipng_dev *ipd)
{
	ipng_mcast_cleanup(ipd);
	ipng_paths_cleanup(ipd);
	ipng_neighs_cleanup(ipd);
	ipng_cm_cleanup(ipd);
	ipng_ib_cleanup(ipd);
	free_percpu(ipd->stats);
}

/**
 * ipng_dev_create() - create and register the interface of one port
 * @ic: the RDMA device's client data
 * @port: port number
 * @name_template: interface name template, e.g. "ib%d"
 *
 * The caller lists the interface in @ic's ports.
 *
 * Return: the registered interface, or an ERR_PTR: -EOPNOTSUPP for a port
 * IPoIB cannot use, or the error that stopped creation (nothing leaks).
 */
struct ipng_dev *ipng_dev_create(struct ipng_ca *ic, u32 port,
				 const char *name_template)
{
	struct ib_device *ca = ic->ca;
	const struct ipng_fabric_ops *fabric = ipng_fabric_for_port(ca, port);
	struct net_device *ndev;
	struct ipng_dev *ipd;
	int err;

	if (!fabric)
		return ERR_PTR(-EOPNOTSUPP);
	ndev = alloc_netdev_mqs(sizeof(*ipd), name_template, NET_NAME_ENUM,
				ipng_setup, IPNG_MAX_CHANNELS,
				IPNG_MAX_CHANNELS);
	if (!ndev)
		return ERR_PTR(-ENOMEM);
	/* An RDMA device given a namespace of its own (rdma system set netns
	 * exclusive; rdma dev set DEV netns NS) has its interfaces there;
	 * ib_core removes and adds it again when it moves.
	 */
	dev_net_set(ndev, read_pnet(&ca->coredev.rdma_net));
	ipd = ipng_priv(ndev);
	err = ipng_dev_init(ndev, ic, port, fabric, NULL, 0);
	if (err)
		goto err_free;
	err = register_netdev(ndev);
	if (err)
		goto err_uninit;
	netdev_info(ndev, "created on %s port %u (%s link layer, QPN 0x%06x)\n",
		    dev_name(&ca->dev), port, fabric->name, ipd->qp->qp_num);
	return ipd;

err_uninit:
	ipng_dev_uninit(ipd);
err_free:
	dev_err(&ca->dev, "%s: no interface on port %u: %d\n", DRV_NAME, port,
		err);
	free_netdev(ndev);
	return ERR_PTR(err);
}

/**
 * ipng_dev_destroy() - unregister and free an interface
 * @ipd: interface; the device's event handler is already unregistered
 *
 * Teardown, in order:
 *  1. no new port work (IPNG_F_DYING), queued port and repair work done;
 *  2. unregister the netdev, which stops it (groups left, paths flushed,
 *     rings emptied) and after which ndo_open can no longer run;
 *  3. only then wait for the peer notification, which ndo_open queues
 *     (cancelled before step 2, an open racing with it could queue it
 *     again to run after free_netdev());
 *  4. free multicast, path and neighbour state, destroy the verbs
 *     objects, free the counters and the netdev.
 */
void ipng_dev_destroy(struct ipng_dev *ipd)
{
	struct net_device *ndev = ipd->ndev;

	set_bit(IPNG_F_DYING, &ipd->flags);
	cancel_work_sync(&ipd->port_work);
	cancel_delayed_work_sync(&ipd->repair_work);
	unregister_netdev(ndev);
	cancel_work_sync(&ipd->notify_work);
	ipng_dev_uninit(ipd);
	free_netdev(ndev);
}
