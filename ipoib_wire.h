/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wire formats of IP over InfiniBand (RFC 4391, RFC 4755): the 4-byte
 * encapsulation header, the 20-byte link-layer address, multicast GIDs and
 * the MTU rule. Pure functions with no state, shared by the driver and its
 * KUnit suite.
 */
#ifndef IPNG_WIRE_H
#define IPNG_WIRE_H

#include <linux/errno.h>
#include <linux/if_ether.h>
#include <linux/in6.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/types.h>
#include "ipoib_compat.h"
#include <rdma/ib_verbs.h>

/**
 * struct ipng_hdr - encapsulation header in front of every IPoIB payload
 * @proto: EtherType of the payload (ETH_P_IP, ETH_P_ARP, ETH_P_IPV6)
 * @reserved: sent as zero, ignored on receive
 */
struct ipng_hdr {
	__be16 proto;
	__be16 reserved;
} __packed;

#define IPNG_HLEN		sizeof(struct ipng_hdr)
#define IPNG_ADDR_LEN		20	/* flags + QPN + GID */
#define IPNG_GID_OFFSET		4	/* GID position in the link address */

/* Flags byte (byte 0) of the link address. */
#define IPNG_FLAG_RC		0x80	/* peer accepts connected mode (RC) */
#define IPNG_FLAG_UC		0x40	/* unreliable connected capable */

#define IPNG_QPN_MASK		0xffffffU
#define IPNG_MCAST_QPN		0xffffffU	/* QPN of every multicast address */

/* MGID signatures (bytes 2-3 of the MGID). */
#define IPNG_MGID_SIG_IPV4	0x401b
#define IPNG_MGID_SIG_IPV6	0x601b

/* MGID scope nibble (low half of byte 1). */
#define IPNG_SCOPE_LINK		0x2
#define IPNG_SCOPE_SITE		0x5
#define IPNG_SCOPE_ORG		0x8
#define IPNG_SCOPE_GLOBAL	0xe

#define IPNG_PKEY_FULL		0x8000	/* full-membership bit of a P_Key */
#define IPNG_DEFAULT_QKEY	0x00000b1bU

/**
 * ipng_hdr_push_proto() - fill an encapsulation header
 * @hdr: where the header goes (no alignment needed)
 * @proto: EtherType of the payload
 */
static inline void ipng_hdr_push_proto(void *hdr, __be16 proto)
{
	struct ipng_hdr *h = hdr;

	h->proto = proto;
	h->reserved = 0;
}

/**
 * ipng_hdr_parse() - read the EtherType from a received frame
 * @frame: start of the frame (the header)
 * @len: bytes available at @frame
 * @proto: set to the payload's EtherType on success
 *
 * The reserved half is ignored, as RFC 4391 requires.
 *
 * Return: 0, or -EINVAL when @len cannot hold a header.
 */
static inline int ipng_hdr_parse(const void *frame, unsigned int len,
				 __be16 *proto)
{
	const struct ipng_hdr *h = frame;

	if (len < IPNG_HLEN)
		return -EINVAL;
	*proto = h->proto;
	return 0;
}

/**
 * ipng_addr_build() - compose a 20-byte IPoIB link-layer address
 * @addr: IPNG_ADDR_LEN bytes to fill
 * @flags: capability flags (IPNG_FLAG_*)
 * @qpn: queue pair number; only the low 24 bits are used
 * @gid: port or multicast GID
 */
static inline void ipng_addr_build(u8 *addr, u8 flags, u32 qpn,
				   const union ib_gid *gid)
{
	put_unaligned_be32(((u32)flags << 24) | (qpn & IPNG_QPN_MASK), addr);
	memcpy(addr + IPNG_GID_OFFSET, gid->raw, sizeof(gid->raw));
}

static inline u8 ipng_addr_flags(const u8 *addr)
{
	return addr[0];
}

static inline u32 ipng_addr_qpn(const u8 *addr)
{
	return get_unaligned_be32(addr) & IPNG_QPN_MASK;
}

static inline void ipng_addr_gid(const u8 *addr, union ib_gid *gid)
{
	memcpy(gid->raw, addr + IPNG_GID_OFFSET, sizeof(gid->raw));
}

static inline bool ipng_addr_is_mcast(const u8 *addr)
{
	return ipng_addr_qpn(addr) == IPNG_MCAST_QPN;
}

/**
 * ipng_pkey_valid() - tell whether a P_Key may be used by an interface
 * @pkey: P_Key as read from the port's table
 *
 * The base value 0 (0x0000 and 0x8000) is the invalid P_Key.
 */
static inline bool ipng_pkey_valid(u16 pkey)
{
	return (pkey & ~IPNG_PKEY_FULL) != 0;
}

/**
 * ipng_mgid_init() - the common first six bytes of an IPoIB MGID
 * @mgid: GID to fill; bytes 6..15 are zeroed
 * @scope: scope nibble (IPNG_SCOPE_*)
 * @signature: IPNG_MGID_SIG_IPV4 or IPNG_MGID_SIG_IPV6
 * @pkey: the interface P_Key; the full-membership bit is always set
 *
 * Layout (RFC 4391 section 4): 0xff, 0x1 flags (transient) | scope,
 * signature, P_Key.
 */
static inline void ipng_mgid_init(union ib_gid *mgid, u8 scope, u16 signature,
				  u16 pkey)
{
	memset(mgid, 0, sizeof(*mgid));
	mgid->raw[0] = 0xff;
	mgid->raw[1] = 0x10 | (scope & 0x0f);
	put_unaligned_be16(signature, &mgid->raw[2]);
	put_unaligned_be16(pkey | IPNG_PKEY_FULL, &mgid->raw[4]);
}

/**
 * ipng_mgid_broadcast() - the IPv4 broadcast group of a partition
 * @mgid: result, ff1S:401b:PPPP::ffff:ffff
 * @scope: scope nibble
 * @pkey: interface P_Key
 */
static inline void ipng_mgid_broadcast(union ib_gid *mgid, u8 scope, u16 pkey)
{
	ipng_mgid_init(mgid, scope, IPNG_MGID_SIG_IPV4, pkey);
	put_unaligned_be32(0xffffffff, &mgid->raw[12]);
}

/**
 * ipng_mgid_ipv4() - MGID of an IPv4 multicast group
 * @mgid: result; the low 28 bits of @group land in the last 28 bits
 * @scope: scope nibble
 * @pkey: interface P_Key
 * @group: IPv4 multicast address
 */
static inline void ipng_mgid_ipv4(union ib_gid *mgid, u8 scope, u16 pkey,
				  __be32 group)
{
	ipng_mgid_init(mgid, scope, IPNG_MGID_SIG_IPV4, pkey);
	put_unaligned_be32(be32_to_cpu(group) & 0x0fffffff, &mgid->raw[12]);
}

/**
 * ipng_mgid_ipv6() - MGID of an IPv6 multicast group
 * @mgid: result; the low 80 bits of @group land in bytes 6..15
 * @scope: scope nibble
 * @pkey: interface P_Key
 * @group: IPv6 multicast address
 */
static inline void ipng_mgid_ipv6(union ib_gid *mgid, u8 scope, u16 pkey,
				  const struct in6_addr *group)
{
	ipng_mgid_init(mgid, scope, IPNG_MGID_SIG_IPV6, pkey);
	memcpy(&mgid->raw[6], &group->s6_addr[6], 10);
}

/**
 * ipng_broadcast_addr() - link-layer broadcast address of an interface
 * @addr: IPNG_ADDR_LEN bytes: multicast QPN and the broadcast MGID
 * @scope: scope nibble
 * @pkey: interface P_Key
 */
static inline void ipng_broadcast_addr(u8 *addr, u8 scope, u16 pkey)
{
	union ib_gid mgid;

	ipng_mgid_broadcast(&mgid, scope, pkey);
	ipng_addr_build(addr, 0, IPNG_MCAST_QPN, &mgid);
}

/**
 * ipng_ud_mtu() - datagram-mode MTU for an IB path MTU
 * @mtu: IB MTU enum (IB_MTU_256 .. IB_MTU_4096)
 *
 * Return: the IB MTU less the encapsulation header, or -EINVAL for a value
 * outside the enum.
 */
static inline int ipng_ud_mtu(enum ib_mtu mtu)
{
	if (mtu < IB_MTU_256 || mtu > IB_MTU_4096)
		return -EINVAL;
	return ib_mtu_enum_to_int(mtu) - (int)IPNG_HLEN;
}

/**
 * ipng_proto_known() - whether IPoIB carries this EtherType
 * @proto: EtherType from the encapsulation header
 *
 * Return: true for IPv4, ARP and IPv6.
 */
static inline bool ipng_proto_known(__be16 proto)
{
	return proto == htons(ETH_P_IP) || proto == htons(ETH_P_IPV6) ||
	       proto == htons(ETH_P_ARP);
}

/* Connected mode (RFC 4755). */
#define IPNG_CM_SID_BASE	0x1000000000000000ULL	/* | the UD QPN */
#define IPNG_CM_MTU		65520	/* largest connected-mode MTU */
#define IPNG_CM_BUF_LEN		(IPNG_CM_MTU + IPNG_HLEN) /* advertised */

/**
 * struct ipng_cm_pdata - private data of a CM REQ and REP
 * @qpn: the sender's UD QPN (top byte reserved)
 * @buf_len: the largest message the sender receives, header included
 */
struct ipng_cm_pdata {
	__be32 qpn;
	__be32 buf_len;
} __packed;

/**
 * ipng_cm_service_id() - CM service ID of an interface
 * @qpn: its UD QPN, as in its link address
 *
 * Return: the service ID in network byte order.
 */
static inline __be64 ipng_cm_service_id(u32 qpn)
{
	return cpu_to_be64(IPNG_CM_SID_BASE | (qpn & IPNG_QPN_MASK));
}

/**
 * ipng_cm_pdata_build() - fill the private data of a REQ or REP
 * @pd: result
 * @qpn: our UD QPN
 * @buf_len: our receive buffer size (at most IPNG_CM_BUF_LEN)
 */
static inline void ipng_cm_pdata_build(struct ipng_cm_pdata *pd, u32 qpn,
				       u32 buf_len)
{
	pd->qpn = cpu_to_be32(qpn & IPNG_QPN_MASK);
	pd->buf_len = cpu_to_be32(buf_len);
}

/**
 * ipng_cm_pdata_parse() - read a peer's REQ or REP private data
 * @data: the private data
 * @len: its length
 * @qpn: the peer's UD QPN
 * @mtu: the largest IP packet the peer receives: its buffer size less
 *	the header, capped at IPNG_CM_MTU
 *
 * Return: 0, or -EINVAL for data too short or a buffer that cannot hold
 * a minimal IPv4 packet (68 bytes).
 */
static inline int ipng_cm_pdata_parse(const void *data, unsigned int len,
				      u32 *qpn, u32 *mtu)
{
	const struct ipng_cm_pdata *pd = data;
	u32 buf_len;

	if (!data || len < sizeof(*pd))
		return -EINVAL;
	buf_len = be32_to_cpu(pd->buf_len);
	if (buf_len < IPNG_HLEN + 68)
		return -EINVAL;
	*qpn = be32_to_cpu(pd->qpn) & IPNG_QPN_MASK;
	*mtu = min_t(u32, buf_len - IPNG_HLEN, IPNG_CM_MTU);
	return 0;
}

#endif /* IPNG_WIRE_H */
