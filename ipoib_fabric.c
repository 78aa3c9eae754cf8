// SPDX-License-Identifier: GPL-2.0
/*
 * Link-layer ops: the few things that differ between InfiniBand ports
 * (subnet manager, LIDs, SA queries) and RoCE ports (Ethernet underneath,
 * GIDs tied to IP addresses, no SA). Everything else calls through
 * struct ipng_fabric_ops and never tests the link layer itself.
 */
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

static const struct ipng_fabric_ops ipng_fabric_ib = {
	.name		= "infiniband",
	.addr_gid_index	= ipng_ib_addr_gid_index,
	.carried_by	= ipng_ib_carried_by,
};

static const struct ipng_fabric_ops ipng_fabric_roce = {
	.name		= "ethernet",
	.addr_gid_index	= ipng_roce_addr_gid_index,
	.carried_by	= ipng_roce_carried_by,
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
