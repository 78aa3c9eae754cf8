// SPDX-License-Identifier: GPL-2.0
/*
 * rtnetlink link kind "ipoib": what `ip -d link show` reports for an
 * interface, what `ip link set DEV type ipoib ...` may change, and the
 * children `ip link add link ib0 name NAME type ipoib [pkey P] [mode M]
 * [umcast U]` makes and `ip link del` removes (ipoib_child.c).
 */
#include <linux/if_link.h>
#include <net/netlink.h>
#include <net/rtnetlink.h>

#include "ipoib.h"

static const struct nla_policy ipng_policy[IFLA_IPOIB_MAX + 1] = {
	[IFLA_IPOIB_PKEY]	= { .type = NLA_U16 },
	[IFLA_IPOIB_MODE]	= { .type = NLA_U16 },
	[IFLA_IPOIB_UMCAST]	= { .type = NLA_U16 },
};

static int ipng_validate(struct nlattr *tb[], struct nlattr *data[],
			 struct netlink_ext_ack *extack)
{
	u16 mode;

	if (!data || !data[IFLA_IPOIB_MODE])
		return 0;
	mode = nla_get_u16(data[IFLA_IPOIB_MODE]);
	if (mode != IPOIB_MODE_DATAGRAM && mode != IPOIB_MODE_CONNECTED) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_MODE],
				    "mode must be datagram or connected");
		return -EINVAL;
	}
	return 0;
}

/*
 * The mode and user multicast may change (ipng_set_mode()); the P_Key of
 * an interface is the one it was made with. Everything is checked before
 * the mode changes, and nothing changes on error.
 */
static int ipng_changelink(struct net_device *ndev, struct nlattr *tb[],
			   struct nlattr *data[],
			   struct netlink_ext_ack *extack)
{
	struct ipng_dev *ipd = ipng_priv(ndev);
	int err;

	if (!data)
		return 0;

	if (data[IFLA_IPOIB_PKEY] &&
	    (nla_get_u16(data[IFLA_IPOIB_PKEY]) | IPNG_PKEY_FULL) != ipd->pkey) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_PKEY],
				    "the P_Key of an interface cannot change");
		return -EOPNOTSUPP;
	}
	if (data[IFLA_IPOIB_MODE]) {
		err = ipng_set_mode(ipd, nla_get_u16(data[IFLA_IPOIB_MODE]) ==
				    IPOIB_MODE_CONNECTED, extack);
		if (err)
			return err;
	}
	if (data[IFLA_IPOIB_UMCAST])
		ipng_set_umcast(ipd, !!nla_get_u16(data[IFLA_IPOIB_UMCAST]));
	return 0;
}

/*
 * ip link add link PARENT ...: a child of the port interface PARENT, with
 * PARENT's P_Key unless one is given (ipoib-cni gives none). @ndev was
 * allocated by rtnetlink with ipng_setup() in the target namespace.
 */
static int ipng_newlink(struct net *src_net, struct net_device *ndev,
			struct nlattr *tb[], struct nlattr *data[],
			struct netlink_ext_ack *extack)
{
	struct net_device *pdev;
	struct ipng_dev *parent;
	u16 pkey;
	int err;

	if (!tb[IFLA_LINK]) {
		NL_SET_ERR_MSG(extack, "a child needs its parent: ip link add link ib0 ...");
		return -EINVAL;
	}
	pdev = __dev_get_by_index(src_net, nla_get_u32(tb[IFLA_LINK]));
	if (!pdev || pdev->rtnl_link_ops != &ipng_link_ops) {
		NL_SET_ERR_MSG_ATTR(extack, tb[IFLA_LINK],
				    "the parent is not an ipoib_ng interface");
		return -ENODEV;
	}
	parent = ipng_priv(pdev);
	pkey = parent->pkey;
	if (data && data[IFLA_IPOIB_PKEY] &&
	    ipng_child_pkey(nla_get_u16(data[IFLA_IPOIB_PKEY]), &pkey)) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_PKEY],
				    "P_Key 0x0000 and 0x8000 are invalid");
		return -EINVAL;
	}
	err = ipng_child_add(parent, ndev, pkey, false, extack);
	if (err)
		return err;
	err = ipng_changelink(ndev, tb, data, extack);
	if (err)
		/* Registered: unregistration frees it (ipng_child_free()). */
		unregister_netdevice(ndev);
	return err;
}

/*
 * A port interface lives as long as its RDMA device: `ip link del` cannot
 * remove it (rtnetlink gives dellink no way to refuse, so it is a no-op).
 * A child goes.
 */
static void ipng_dellink(struct net_device *ndev, struct list_head *head)
{
	if (ipng_priv(ndev)->parent) {
		unregister_netdevice_queue(ndev, head);
		return;
	}
	netdev_info(ndev, "port interfaces go away with their RDMA device or the module, not with ip link del\n");
}

static unsigned int ipng_num_queues(void)
{
	return IPNG_MAX_CHANNELS;
}

static size_t ipng_get_size(const struct net_device *ndev)
{
	return nla_total_size(sizeof(u16)) +	/* IFLA_IPOIB_PKEY */
	       nla_total_size(sizeof(u16)) +	/* IFLA_IPOIB_MODE */
	       nla_total_size(sizeof(u16));	/* IFLA_IPOIB_UMCAST */
}

static int ipng_fill_info(struct sk_buff *skb, const struct net_device *ndev)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	if (nla_put_u16(skb, IFLA_IPOIB_PKEY, ipd->pkey) ||
	    nla_put_u16(skb, IFLA_IPOIB_MODE, ipng_connected(ipd) ?
			IPOIB_MODE_CONNECTED : IPOIB_MODE_DATAGRAM) ||
	    nla_put_u16(skb, IFLA_IPOIB_UMCAST, READ_ONCE(ipd->umcast)))
		return -EMSGSIZE;
	return 0;
}

struct rtnl_link_ops ipng_link_ops __read_mostly = {
	.kind		= "ipoib",
	.priv_size	= sizeof(struct ipng_dev),
	.setup		= ipng_setup,
	.get_num_tx_queues = ipng_num_queues,
	.get_num_rx_queues = ipng_num_queues,
	.maxtype	= IFLA_IPOIB_MAX,
	.policy		= ipng_policy,
	.validate	= ipng_validate,
	.newlink	= ipng_newlink,
	.changelink	= ipng_changelink,
	.dellink	= ipng_dellink,
	.get_size	= ipng_get_size,
	.fill_info	= ipng_fill_info,
	.netns_refund	= true,
};

/**
 * ipng_netlink_init() - register the "ipoib" link kind
 *
 * Return: 0, or -EEXIST when another driver (ib_ipoib) owns the kind.
 */
int ipng_netlink_init(void)
{
	return rtnl_link_register(&ipng_link_ops);
}

void ipng_netlink_exit(void)
{
	rtnl_link_unregister(&ipng_link_ops);
}
