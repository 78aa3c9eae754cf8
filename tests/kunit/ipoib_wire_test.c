// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for ipoib_wire.h: encapsulation header, link address,
 * multicast GIDs and the MTU rule, checked against vectors written from
 * RFC 4391 and against the kernel's own IP-to-IPoIB multicast mapping.
 */
#include <linux/if_ether.h>
#include <linux/inet.h>
#include <net/if_inet6.h>
#include <net/ip.h>

#include "../../ipoib_wire.h"
#include "ipoib_test.h"

/* Parse "ff12:401b:..." style text into a GID. */
static void gid_from_text(struct kunit *test, const char *text,
			  union ib_gid *gid)
{
	KUNIT_ASSERT_EQ(test, in6_pton(text, -1, gid->raw, -1, NULL), 1);
}

static void ipng_test_hdr_push(struct kunit *test)
{
	u8 buf[IPNG_HLEN] = { 0xaa, 0xaa, 0xaa, 0xaa };
	static const u8 ipv4[] = { 0x08, 0x00, 0x00, 0x00 };
	static const u8 ipv6[] = { 0x86, 0xdd, 0x00, 0x00 };

	ipng_hdr_push_proto(buf, htons(ETH_P_IP));
	IPNG_EXPECT_MEMEQ(test, buf, ipv4, sizeof(ipv4));
	memset(buf, 0xaa, sizeof(buf));
	ipng_hdr_push_proto(buf, htons(ETH_P_IPV6));
	IPNG_EXPECT_MEMEQ(test, buf, ipv6, sizeof(ipv6));
	KUNIT_EXPECT_EQ(test, IPNG_HLEN, 4);
}

static void ipng_test_hdr_parse(struct kunit *test)
{
	static const u8 arp[] = { 0x08, 0x06, 0x00, 0x00, 0x45 };
	__be16 proto = 0;

	KUNIT_EXPECT_EQ(test, ipng_hdr_parse(arp, sizeof(arp), &proto), 0);
	KUNIT_EXPECT_EQ(test, ntohs(proto), ETH_P_ARP);
}

/* RFC 4391: the reserved field must be ignored on receive. */
static void ipng_test_hdr_parse_ignores_reserved(struct kunit *test)
{
	static const u8 frame[] = { 0x86, 0xdd, 0xbe, 0xef };
	__be16 proto = 0;

	KUNIT_EXPECT_EQ(test, ipng_hdr_parse(frame, sizeof(frame), &proto), 0);
	KUNIT_EXPECT_EQ(test, ntohs(proto), ETH_P_IPV6);
}

static void ipng_test_hdr_parse_short(struct kunit *test)
{
	static const u8 frame[] = { 0x08, 0x00, 0x00 };
	__be16 proto = htons(0x1234);

	KUNIT_EXPECT_EQ(test, ipng_hdr_parse(frame, 3, &proto), -EINVAL);
	KUNIT_EXPECT_EQ(test, ipng_hdr_parse(frame, 0, &proto), -EINVAL);
	KUNIT_EXPECT_EQ(test, ntohs(proto), 0x1234);
}

static void ipng_test_addr_build(struct kunit *test)
{
	static const u8 expect[IPNG_ADDR_LEN] = {
		0x80, 0x00, 0x04, 0x8a,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0,
		0x52, 0x54, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x01,
	};
	union ib_gid gid;
	u8 addr[IPNG_ADDR_LEN];

	gid_from_text(test, "fe80::5254:ff:fe00:1", &gid);
	ipng_addr_build(addr, IPNG_FLAG_RC, 0x48a, &gid);
	IPNG_EXPECT_MEMEQ(test, addr, expect, sizeof(expect));
}

static void ipng_test_addr_fields(struct kunit *test)
{
	union ib_gid gid, back;
	u8 addr[IPNG_ADDR_LEN];

	gid_from_text(test, "fe80::2:c903:a:b0c1", &gid);
	ipng_addr_build(addr, IPNG_FLAG_RC | IPNG_FLAG_UC, 0xabcdef, &gid);
	KUNIT_EXPECT_EQ(test, ipng_addr_flags(addr), 0xc0);
	KUNIT_EXPECT_EQ(test, ipng_addr_qpn(addr), 0xabcdef);
	ipng_addr_gid(addr, &back);
	IPNG_EXPECT_MEMEQ(test, back.raw, gid.raw, sizeof(gid.raw));
	KUNIT_EXPECT_FALSE(test, ipng_addr_is_mcast(addr));
}

/* A QPN is 24 bits: higher bits must not leak into the flags byte. */
static void ipng_test_addr_qpn_masked(struct kunit *test)
{
	union ib_gid gid = {};
	u8 addr[IPNG_ADDR_LEN];

	ipng_addr_build(addr, 0, 0x7f123456, &gid);
	KUNIT_EXPECT_EQ(test, addr[0], 0);
	KUNIT_EXPECT_EQ(test, ipng_addr_qpn(addr), 0x123456);
}

static void ipng_test_pkey_valid(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, ipng_pkey_valid(0x0000));
	KUNIT_EXPECT_FALSE(test, ipng_pkey_valid(0x8000));
	KUNIT_EXPECT_TRUE(test, ipng_pkey_valid(0xffff));
	KUNIT_EXPECT_TRUE(test, ipng_pkey_valid(0x7fff));
	KUNIT_EXPECT_TRUE(test, ipng_pkey_valid(0x0001));
}

/* RFC 4391 section 4: default broadcast GID with the default P_Key. */
static void ipng_test_mgid_broadcast(struct kunit *test)
{
	union ib_gid mgid, expect;

	gid_from_text(test, "ff12:401b:ffff:0:0:0:ffff:ffff", &expect);
	ipng_mgid_broadcast(&mgid, IPNG_SCOPE_LINK, 0xffff);
	IPNG_EXPECT_MEMEQ(test, mgid.raw, expect.raw, sizeof(expect.raw));
}

/* The MGID always carries the full-membership form of the P_Key. */
static void ipng_test_mgid_broadcast_partial_pkey(struct kunit *test)
{
	union ib_gid mgid, expect;

	gid_from_text(test, "ff12:401b:8001::ffff:ffff", &expect);
	ipng_mgid_broadcast(&mgid, IPNG_SCOPE_LINK, 0x0001);
	IPNG_EXPECT_MEMEQ(test, mgid.raw, expect.raw, sizeof(expect.raw));
}

static void ipng_test_mgid_scopes(struct kunit *test)
{
	static const struct {
		u8 scope;
		const char *mgid;
	} cases[] = {
		{ IPNG_SCOPE_LINK, "ff12:401b:ffff::ffff:ffff" },
		{ IPNG_SCOPE_SITE, "ff15:401b:ffff::ffff:ffff" },
		{ IPNG_SCOPE_ORG, "ff18:401b:ffff::ffff:ffff" },
		{ IPNG_SCOPE_GLOBAL, "ff1e:401b:ffff::ffff:ffff" },
	};
	union ib_gid mgid, expect;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		gid_from_text(test, cases[i].mgid, &expect);
		ipng_mgid_broadcast(&mgid, cases[i].scope, 0xffff);
		IPNG_EXPECT_MEMEQ_MSG(test, mgid.raw, expect.raw,
				      sizeof(expect.raw), "scope %x",
				      cases[i].scope);
	}
}

/* RFC 4391 section 4: only the low 28 bits of the group are kept. */
static void ipng_test_mgid_ipv4(struct kunit *test)
{
	static const struct {
		const char *group;
		const char *mgid;
	} cases[] = {
		{ "224.0.0.1", "ff12:401b:ffff::1" },
		{ "224.0.0.251", "ff12:401b:ffff::fb" },
		{ "239.255.255.250", "ff12:401b:ffff::fff:fffa" },
		{ "232.1.2.3", "ff12:401b:ffff::801:203" },
	};
	union ib_gid mgid, expect;
	__be32 group;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		group = in_aton(cases[i].group);
		gid_from_text(test, cases[i].mgid, &expect);
		ipng_mgid_ipv4(&mgid, IPNG_SCOPE_LINK, 0xffff, group);
		IPNG_EXPECT_MEMEQ_MSG(test, mgid.raw, expect.raw,
				      sizeof(expect.raw), "group %s",
				      cases[i].group);
	}
}

/* RFC 4391 section 4: the low 80 bits of the IPv6 group are kept. */
static void ipng_test_mgid_ipv6(struct kunit *test)
{
	static const struct {
		const char *group;
		const char *mgid;
	} cases[] = {
		{ "ff02::1", "ff12:601b:ffff::1" },
		{ "ff02::1:ff00:1", "ff12:601b:ffff::1:ff00:1" },
		{ "ff05::1:3", "ff12:601b:ffff::1:3" },
		{ "ff0e:1234:5678:9abc:def0:1:2:3", "ff12:601b:ffff:9abc:def0:1:2:3" },
	};
	union ib_gid mgid, expect;
	struct in6_addr group;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		KUNIT_ASSERT_EQ(test, in6_pton(cases[i].group, -1,
					       group.s6_addr, -1, NULL), 1);
		gid_from_text(test, cases[i].mgid, &expect);
		ipng_mgid_ipv6(&mgid, IPNG_SCOPE_LINK, 0x7fff, &group);
		IPNG_EXPECT_MEMEQ_MSG(test, mgid.raw, expect.raw,
				      sizeof(expect.raw), "group %s",
				      cases[i].group);
	}
}

static void ipng_test_broadcast_addr(struct kunit *test)
{
	static const u8 expect[IPNG_ADDR_LEN] = {
		0x00, 0xff, 0xff, 0xff,
		0xff, 0x12, 0x40, 0x1b, 0x80, 0x05, 0, 0,
		0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
	};
	u8 addr[IPNG_ADDR_LEN];

	ipng_broadcast_addr(addr, IPNG_SCOPE_LINK, 0x0005);
	IPNG_EXPECT_MEMEQ(test, addr, expect, sizeof(expect));
	KUNIT_EXPECT_TRUE(test, ipng_addr_is_mcast(addr));
}

/*
 * ARP and ND derive multicast link addresses from dev->broadcast with
 * ip_ib_mc_map() and ipv6_ib_mc_map(); the driver's own MGIDs must agree
 * with them so the groups it joins are the ones the stack sends to.
 */
static void ipng_test_mgid_matches_kernel_map(struct kunit *test)
{
	u8 bcast[IPNG_ADDR_LEN], ll[IPNG_ADDR_LEN];
	union ib_gid mgid;
	struct in6_addr group6;

	ipng_broadcast_addr(bcast, IPNG_SCOPE_SITE, 0x8123);

	ip_ib_mc_map(in_aton("239.1.2.3"), bcast, ll);
	ipng_mgid_ipv4(&mgid, IPNG_SCOPE_SITE, 0x8123, in_aton("239.1.2.3"));
	KUNIT_EXPECT_EQ(test, ipng_addr_qpn(ll), IPNG_MCAST_QPN);
	IPNG_EXPECT_MEMEQ(test, ll + IPNG_GID_OFFSET, mgid.raw, 16);

	KUNIT_ASSERT_EQ(test, in6_pton("ff02::1:ff12:3456", -1,
				       group6.s6_addr, -1, NULL), 1);
	ipv6_ib_mc_map(&group6, bcast, ll);
	ipng_mgid_ipv6(&mgid, IPNG_SCOPE_SITE, 0x8123, &group6);
	KUNIT_EXPECT_EQ(test, ipng_addr_qpn(ll), IPNG_MCAST_QPN);
	IPNG_EXPECT_MEMEQ(test, ll + IPNG_GID_OFFSET, mgid.raw, 16);
}

static void ipng_test_ud_mtu(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ipng_ud_mtu(IB_MTU_256), 252);
	KUNIT_EXPECT_EQ(test, ipng_ud_mtu(IB_MTU_512), 508);
	KUNIT_EXPECT_EQ(test, ipng_ud_mtu(IB_MTU_1024), 1020);
	KUNIT_EXPECT_EQ(test, ipng_ud_mtu(IB_MTU_2048), 2044);
	KUNIT_EXPECT_EQ(test, ipng_ud_mtu(IB_MTU_4096), 4092);
}

static void ipng_test_ud_mtu_invalid(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ipng_ud_mtu(0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ipng_ud_mtu(6), -EINVAL);
	KUNIT_EXPECT_EQ(test, ipng_ud_mtu(0xff), -EINVAL);
}

static struct kunit_case ipng_wire_cases[] = {
	KUNIT_CASE(ipng_test_hdr_push),
	KUNIT_CASE(ipng_test_hdr_parse),
	KUNIT_CASE(ipng_test_hdr_parse_ignores_reserved),
	KUNIT_CASE(ipng_test_hdr_parse_short),
	KUNIT_CASE(ipng_test_addr_build),
	KUNIT_CASE(ipng_test_addr_fields),
	KUNIT_CASE(ipng_test_addr_qpn_masked),
	KUNIT_CASE(ipng_test_pkey_valid),
	KUNIT_CASE(ipng_test_mgid_broadcast),
	KUNIT_CASE(ipng_test_mgid_broadcast_partial_pkey),
	KUNIT_CASE(ipng_test_mgid_scopes),
	KUNIT_CASE(ipng_test_mgid_ipv4),
	KUNIT_CASE(ipng_test_mgid_ipv6),
	KUNIT_CASE(ipng_test_broadcast_addr),
	KUNIT_CASE(ipng_test_mgid_matches_kernel_map),
	KUNIT_CASE(ipng_test_ud_mtu),
	KUNIT_CASE(ipng_test_ud_mtu_invalid),
	{}
};

struct kunit_suite ipng_wire_suite = {
	.name = "ipoib_ng_wire",
	.test_cases = ipng_wire_cases,
};
