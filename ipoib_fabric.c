// SPDX-License-Identifier: GPL-2.0
/*
 * Link-layer ops of RoCE ports (Ethernet underneath, GIDs tied to MAC and
 * IP addresses, no SA, no LIDs) and the choice of ops for a port. The
 * InfiniBand ops (subnet administrator queries) are in ipoib_sa.c.
 * Everything else calls through struct ipng_fabric_ops and never tests
 * the link layer itself.
 */
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/arp.h>
#include <net/ipv6_stubs.h>
#include <net/ndisc.h>
#include <net/neighbour.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"

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

/* The Ethernet device under our address GID, held, or NULL. */
static struct net_device *ipng_roce_lower_get(struct ipng_dev *ipd);

/*
 * MAC of an IP neighbour of the Ethernet device under the port: known and
 * valid, or -EAGAIN after asking the neighbour code to resolve it (the
 * path cache asks again shortly).
 */
static int ipng_roce_neigh_mac(struct ipng_dev *ipd, struct neigh_table *tbl,
			       const void *ip, u8 *dmac)
{
	struct net_device *lower;
	struct neighbour *n;
	int err = -EAGAIN;

	lower = ipng_roce_lower_get(ipd);
	if (!lower)
		return -ENODEV;
	n = __neigh_lookup(tbl, ip, lower, true);
	if (IS_ERR_OR_NULL(n)) {
		err = n ? PTR_ERR(n) : -ENOMEM;
		goto out;
	}
	if (READ_ONCE(n->nud_state) & NUD_VALID) {
		neigh_ha_snapshot(dmac, n, lower);
		err = 0;
	} else {
		neigh_event_send(n, NULL);
	}
	neigh_release(n);
out:
	dev_put(lower);
	return err;
}

/*
 * Kernel users of rdma_create_ah() must give RoCE devices the destination
 * MAC themselves (ib_core resolves it for user verbs only): multicast GIDs
 * map to an Ethernet multicast MAC, link-local GIDs carry the MAC in their
 * interface ID, and other GIDs are IP addresses whose neighbour entry on
 * the Ethernet device has it.
 */
static int ipng_roce_dmac(struct ipng_dev *ipd, const union ib_gid *dgid,
			  u8 *dmac)
{
	const struct in6_addr *ip6 = (const struct in6_addr *)dgid->raw;
	__be32 ip4 = ip6->s6_addr32[3];

	if (ipv6_addr_v4mapped(ip6)) {
		if (ipv4_is_multicast(ip4)) {
			ip_eth_mc_map(ip4, dmac);
			return 0;
		}
		return ipng_roce_neigh_mac(ipd, &arp_tbl, &ip4, dmac);
	}
	if (ipv6_addr_is_multicast(ip6)) {
		ipv6_eth_mc_map(ip6, dmac);
		return 0;
	}
	if (ipv6_addr_type(ip6) & IPV6_ADDR_LINKLOCAL &&
	    ip6->s6_addr[11] == 0xff && ip6->s6_addr[12] == 0xfe) {
		rdma_get_ll_mac((struct in6_addr *)ip6, dmac);
		return 0;
	}
	return ipng_roce_neigh_mac(ipd, ipv6_stub->nd_tbl, ip6, dmac);
}

/*
 * RoCE has no SA: the address vector is a GRH to the GID from our address
 * GID, plus the destination MAC.
 */
static int ipng_roce_resolve_path(struct ipng_dev *ipd,
				  const union ib_gid *dgid,
				  struct rdma_ah_attr *attr)
{
	int err;

	memset(attr, 0, sizeof(*attr));
	attr->type = rdma_ah_find_type(ipd->ca, ipd->port);
	rdma_ah_set_port_num(attr, ipd->port);
	rdma_ah_set_grh(attr, (union ib_gid *)dgid, 0,
			ipng_roce_addr_gid_index(ipd), 64, 0);
	err = ipng_roce_dmac(ipd, dgid, attr->roce.dmac);
	if (err == -EAGAIN)
		netdev_dbg(ipd->ndev, "resolving the MAC of %pI6\n", dgid->raw);
	return err;
}

/* RoCE IPoIB's packet lifetime for RC: ACK timeout about half a second. */
#define IPNG_ROCE_PACKET_LIFE	16

/*
 * No SA to ask: a RoCE path record for the CM is the address vector of a
 * datagram (GRH from our address GID, destination MAC), marked as
 * resolved so that ib_cm does not route it again.
 */
static int ipng_roce_cm_path(struct ipng_dev *ipd, const union ib_gid *dgid,
			     struct sa_path_rec *rec)
{
	const struct ib_gid_attr *sgid_attr;
	struct rdma_ah_attr attr;
	int err;

	err = ipng_roce_resolve_path(ipd, dgid, &attr);
	if (err)
		return err;
	sgid_attr = rdma_get_gid_attr(ipd->ca, ipd->port,
				      ipng_roce_addr_gid_index(ipd));
	if (IS_ERR(sgid_attr))
		return PTR_ERR(sgid_attr);
	memset(rec, 0, sizeof(*rec));
	rec->rec_type = sa_conv_gid_to_pathrec_type(sgid_attr->gid_type);
	rec->sgid = sgid_attr->gid;
	rdma_put_gid_attr(sgid_attr);
	rec->dgid = *dgid;
	rec->hop_limit = rdma_ah_read_grh(&attr)->hop_limit;
	rec->reversible = 1;
	rec->pkey = cpu_to_be16(0xffff);
	rec->mtu_selector = IB_SA_EQ;
	rec->mtu = READ_ONCE(ipd->port_mtu);
	rec->rate_selector = IB_SA_EQ;
	rec->rate = IB_RATE_PORT_CURRENT;
	rec->packet_life_time_selector = IB_SA_EQ;
	rec->packet_life_time = IPNG_ROCE_PACKET_LIFE;
	sa_path_set_dmac(rec, attr.roce.dmac);
	rec->roce.route_resolved = true;
	return 0;
}

/*
 * The GID entry names its own network device, in whatever namespace that
 * device lives (a RoCE device need not be in the initial one), so no
 * lookup by index is needed.
 */
static struct net_device *ipng_roce_lower_get(struct ipng_dev *ipd)
{
	const struct ib_gid_attr *attr;
	struct net_device *lower;

	attr = rdma_get_gid_attr(ipd->ca, ipd->port,
				 ipng_roce_addr_gid_index(ipd));
	if (IS_ERR(attr))
		return NULL;
	rcu_read_lock();
	lower = rdma_read_gid_attr_ndev_rcu(attr);
	if (IS_ERR(lower))
		lower = NULL;
	else
		dev_hold(lower);
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	return lower;
}

/*
 * Attaching the QP only makes the adapter accept the group's MAC; under
 * RoCE v2 the IP stack of the Ethernet device also has to be a member of
 * the group (the MGID is an IPv6 multicast address) or it drops the UDP
 * datagrams. Sending needs no membership on RoCE, so only full joins come
 * here.
 *
 * The device joined on is kept, held, in @m->priv until the leave: by
 * then the GID table may be empty or name another device (a MAC change
 * deletes and adds back every GID of the device), and a membership left
 * on the wrong device, or not at all, would stay on it for good. @m->priv
 * is only read and written under RTNL. A device that unregisters (or
 * moves to another namespace) drops its memberships itself and is let go
 * at once by ipng_roce_lower_gone(); only an interface already off its
 * device's list (being torn down) misses that, and it lets go in its own
 * leaves a moment later.
 */
static int ipng_roce_mcast_join(struct ipng_dev *ipd,
				struct ipng_mcast_member *m)
{
	struct net_device *lower;
	int err;

	err = ib_attach_mcast(ipd->qp, &m->mgid, 0);
	if (err)
		return err;
	rtnl_lock();
	lower = ipng_roce_lower_get(ipd);
	if (!lower) {
		err = -ENODEV;
	} else if (lower->reg_state != NETREG_REGISTERED) {
		/* Its NETDEV_UNREGISTER is past: nothing would let it go. */
		dev_put(lower);
		err = -ENODEV;
	} else {
		err = ipv6_dev_mc_inc(lower,
				      (const struct in6_addr *)m->mgid.raw);
		if (err)
			dev_put(lower);
		else
			m->priv = lower;
	}
	rtnl_unlock();
	if (err)
		ib_detach_mcast(ipd->qp, &m->mgid, 0);
	return err;
}

static void ipng_roce_mcast_leave(struct ipng_dev *ipd,
				  struct ipng_mcast_member *m)
{
	struct net_device *lower;

	rtnl_lock();
	lower = m->priv;
	m->priv = NULL;
	if (lower) {
		ipv6_dev_mc_dec(lower, (const struct in6_addr *)m->mgid.raw);
		dev_put(lower);
	}
	rtnl_unlock();
	ib_detach_mcast(ipd->qp, &m->mgid, 0);
}

/*
 * @ndev is unregistering (or leaving its namespace), under RTNL: its IPv6
 * state, group memberships included, goes with it. Forget the groups
 * joined on it and let it go.
 */
static void ipng_roce_lower_gone(struct ipng_dev *ipd, struct net_device *ndev)
{
	int n;

	ASSERT_RTNL();
	for (n = ipng_mcast_forget(ipd->mcast, ndev); n > 0; n--)
		dev_put(ndev);
}

/*
 * On RoCE a GID entry still referenced by an address handle when its
 * Ethernet device changes (a new MAC) stays reserved until released, and
 * ib_core does not retry adding the new default GID afterwards. Once our
 * handles are gone, ask for a rescan if the slot we use is empty.
 */
static bool ipng_roce_gid0_present(struct ipng_dev *ipd)
{
	const struct ib_gid_attr *attr;

	attr = rdma_get_gid_attr(ipd->ca, ipd->port, 0);
	if (IS_ERR(attr))
		return false;
	rdma_put_gid_attr(attr);
	return true;
}

static int ipng_roce_repair_gids(struct ipng_dev *ipd)
{
	if (ipng_roce_gid0_present(ipd))
		return 0;
	rdma_roce_rescan_device(ipd->ca);
	if (ipng_roce_gid0_present(ipd))
		return 0;
	netdev_dbg(ipd->ndev, "GID 0 of port %u still held, try %d\n",
		   ipd->port, ipd->repair_tries);
	return -EAGAIN;
}

static const struct ipng_fabric_ops ipng_fabric_roce = {
	.name		= "ethernet",
	.addr_gid_index	= ipng_roce_addr_gid_index,
	.carried_by	= ipng_roce_carried_by,
	.resolve_path	= ipng_roce_resolve_path,
	.mcast_join	= ipng_roce_mcast_join,
	.mcast_leave	= ipng_roce_mcast_leave,
	.lower_gone	= ipng_roce_lower_gone,
	.repair_gids	= ipng_roce_repair_gids,
	.cm_path	= ipng_roce_cm_path,
	.cm_retry	= 7,
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
