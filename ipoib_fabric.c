// SPDX-License-Identifier: GPL-2.0
/*
 * Link-layer ops: the few things that differ between InfiniBand ports
 * (subnet manager, LIDs, SA queries) and RoCE ports (Ethernet underneath,
 * GIDs tied to IP addresses, no SA). Everything else calls through
 * struct ipng_fabric_ops and never tests the link layer itself.
 */
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"

/* On InfiniBand the port GID at index 0 is the one the SM knows. */
static int ipng_ib_addr_gid_index(struct ipng_dev *ipd)
{
	return 0;
}

/*
 * On RoCE, take the first RoCE v2 GID of the port (with rxe and most
 * adapters that is index 0, the link-local GID derived from the MAC).
 * Adapters that list a RoCE v1 entry first get their v2 twin instead.
 * rdma_get_gid_attr() says -ENODATA for an empty slot and -EINVAL past
 * the end of the table. No ib_query_port() here: on RoCE it takes RTNL.
 */
static int ipng_roce_addr_gid_index(struct ipng_dev *ipd)
{
	const struct ib_gid_attr *attr;
	enum ib_gid_type type;
	int i;

	for (i = 0; ; i++) {
		attr = rdma_get_gid_attr(ipd->ca, ipd->port, i);
		if (PTR_ERR(attr) == -EINVAL)
			return 0;
		if (IS_ERR(attr))
			continue;
		type = attr->gid_type;
		rdma_put_gid_attr(attr);
		if (type == IB_GID_TYPE_ROCE_UDP_ENCAP)
			return i;
	}
}

/* InfiniBand ports have no network device underneath. */
static bool ipng_ib_carried_by(struct ipng_dev *ipd, struct net_device *ndev)
{
	return false;
}

/*
 * ib_core tells which RDMA device sits on a network device, not which port;
 * a refresh is harmless, so every RoCE port of that device matches.
 */
static bool ipng_roce_carried_by(struct ipng_dev *ipd, struct net_device *ndev)
{
	struct ib_device *ca = ib_device_get_by_netdev(ndev, RDMA_DRIVER_UNKNOWN);

	if (!ca)
		return false;
	ib_device_put(ca);
	return ca == ipd->ca;
}

/*
 * InfiniBand needs the subnet administrator (PathRecord queries and
 * MCMemberRecord joins); not available in this version.
 */
static int ipng_ib_resolve_path(struct ipng_dev *ipd, const union ib_gid *dgid,
				struct rdma_ah_attr *attr)
{
	return -EOPNOTSUPP;
}

static int ipng_ib_mcast_join(struct ipng_dev *ipd, const union ib_gid *mgid,
			      int *cookie)
{
	return -EOPNOTSUPP;
}

static void ipng_ib_mcast_leave(struct ipng_dev *ipd, const union ib_gid *mgid,
				int cookie)
{
}

/*
 * RoCE has no SA: the address vector is a GRH to the GID from our address
 * GID; rdma_create_ah() finds the MAC (from a link-local or multicast GID,
 * or through the IP neighbour table).
 */
static int ipng_roce_resolve_path(struct ipng_dev *ipd,
				  const union ib_gid *dgid,
				  struct rdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = rdma_ah_find_type(ipd->ca, ipd->port);
	rdma_ah_set_port_num(attr, ipd->port);
	rdma_ah_set_grh(attr, (union ib_gid *)dgid, 0,
			ipng_roce_addr_gid_index(ipd), 64, 0);
	return 0;
}

/* ifindex of the Ethernet device under our address GID, or 0. */
static int ipng_roce_lower_ifindex(struct ipng_dev *ipd)
{
	const struct ib_gid_attr *attr;
	struct net_device *lower;
	int ifindex = 0;

	attr = rdma_get_gid_attr(ipd->ca, ipd->port,
				 ipng_roce_addr_gid_index(ipd));
	if (IS_ERR(attr))
		return 0;
	rcu_read_lock();
	lower = rdma_read_gid_attr_ndev_rcu(attr);
	if (!IS_ERR(lower))
		ifindex = lower->ifindex;
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	return ifindex;
}

/*
 * Attaching the QP only makes the adapter accept the group's MAC; the IP
 * stack under RoCE v2 also has to be a member of the group (the MGID is
 * an IPv6 multicast address) or it drops the UDP datagrams.
 */
static int ipng_roce_mcast_join(struct ipng_dev *ipd, const union ib_gid *mgid,
				int *cookie)
{
	struct net_device *lower;
	int err;

	err = ib_attach_mcast(ipd->qp, (union ib_gid *)mgid, 0);
	if (err)
		return err;
	*cookie = ipng_roce_lower_ifindex(ipd);
	lower = dev_get_by_index(&init_net, *cookie);
	if (!lower)
		return 0;
	err = ipv6_dev_mc_inc(lower, (const struct in6_addr *)mgid->raw);
	dev_put(lower);
	if (err) {
		ib_detach_mcast(ipd->qp, (union ib_gid *)mgid, 0);
		*cookie = 0;
	}
	return err;
}

static void ipng_roce_mcast_leave(struct ipng_dev *ipd,
				  const union ib_gid *mgid, int cookie)
{
	struct net_device *lower = cookie ? dev_get_by_index(&init_net, cookie) : NULL;

	if (lower) {
		ipv6_dev_mc_dec(lower, (const struct in6_addr *)mgid->raw);
		dev_put(lower);
	}
	ib_detach_mcast(ipd->qp, (union ib_gid *)mgid, 0);
}

static void ipng_ib_repair_gids(struct ipng_dev *ipd)
{
}

/*
 * On RoCE a GID entry still referenced by an address handle when its
 * Ethernet device changes (a new MAC) stays reserved until released, and
 * ib_core does not retry adding the new default GID afterwards. Once our
 * handles are gone, ask for a rescan if the slot we use is empty.
 */
static void ipng_roce_repair_gids(struct ipng_dev *ipd)
{
	const struct ib_gid_attr *attr;

	attr = rdma_get_gid_attr(ipd->ca, ipd->port, 0);
	if (!IS_ERR(attr)) {
		rdma_put_gid_attr(attr);
		return;
	}
	rdma_roce_rescan_device(ipd->ca);
}

static const struct ipng_fabric_ops ipng_fabric_ib = {
	.name		= "infiniband",
	.addr_gid_index	= ipng_ib_addr_gid_index,
	.carried_by	= ipng_ib_carried_by,
	.resolve_path	= ipng_ib_resolve_path,
	.mcast_join	= ipng_ib_mcast_join,
	.mcast_leave	= ipng_ib_mcast_leave,
	.repair_gids	= ipng_ib_repair_gids,
};

static const struct ipng_fabric_ops ipng_fabric_roce = {
	.name		= "ethernet",
	.addr_gid_index	= ipng_roce_addr_gid_index,
	.carried_by	= ipng_roce_carried_by,
	.resolve_path	= ipng_roce_resolve_path,
	.mcast_join	= ipng_roce_mcast_join,
	.mcast_leave	= ipng_roce_mcast_leave,
	.repair_gids	= ipng_roce_repair_gids,
};

/**
 * ipng_fabric_for_port() - pick the link-layer ops of a port
 * @ca: RDMA device
 * @port: port number
 *
 * Return: the ops, or NULL when the port carries neither InfiniBand nor
 * RoCE (iWARP has no UD queue pairs, so IPoIB cannot run there).
 */
const struct ipng_fabric_ops *ipng_fabric_for_port(struct ib_device *ca,
						   u32 port)
{
	if (rdma_protocol_ib(ca, port))
		return &ipng_fabric_ib;
	if (rdma_protocol_roce(ca, port))
		return &ipng_fabric_roce;
	return NULL;
}
