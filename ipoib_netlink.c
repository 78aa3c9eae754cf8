// SPDX-License-Identifier: GPL-2.0
/*
 * rtnetlink link kind "ipoib": what `ip -d link show` reports for an
 * interface and what `ip link set DEV type ipoib ...` may change.
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
 * The mode may change (ipng_set_mode()); the P_Key of a port interface is
 * the port's, and user multicast is not part of this release, so only the
 * values the interface has are accepted for those. Everything is checked
 * before the mode changes, and nothing changes on error.
 */
static int ipng_changelink(struct net_device *ndev, struct nlattr *tb[],
			   struct nlattr *data[],
			   struct netlink_ext_ack *extack)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	if (!data)
		return 0;
	if (data[IFLA_IPOIB_PKEY] &&
	    (nla_get_u16(data[IFLA_IPOIB_PKEY]) | IPNG_PKEY_FULL) != ipd->pkey) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_PKEY],
				    "the P_Key of a port interface cannot change");
		return -EOPNOTSUPP;
	}
	if (data[IFLA_IPOIB_UMCAST] && nla_get_u16(data[IFLA_IPOIB_UMCAST])) {
		NL_SET_ERR_MSG_ATTR(extack, data[IFLA_IPOIB_UMCAST],
				    "user multicast is not supported yet");
		return -EOPNOTSUPP;
	}
	if (data[IFLA_IPOIB_MODE])
		return ipng_set_mode(ipd, nla_get_u16(data[IFLA_IPOIB_MODE]) ==
				     IPOIB_MODE_CONNECTED, extack);
	return 0;
}

/*
 * A port interface lives as long as its RDMA device: `ip link del` cannot
 * remove it (rtnetlink gives dellink no way to refuse, so it is a no-op).
 */
static void ipng_dellink(struct net_device *ndev, struct list_head *head)
{
	netdev_info(ndev, "port interfaces go away with their RDMA device or the module, not with ip link del\n");
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
	    nla_put_u16(skb, IFLA_IPOIB_UMCAST, 0))
		return -EMSGSIZE;
	return 0;
}

struct rtnl_link_ops ipng_link_ops __read_mostly = {
	.kind		= "ipoib",
	.priv_size	= sizeof(struct ipng_dev),
	.maxtype	= IFLA_IPOIB_MAX,
	.policy		= ipng_policy,
	.validate	= ipng_validate,
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
