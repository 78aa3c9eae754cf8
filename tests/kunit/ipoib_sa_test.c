// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the subnet administrator records of InfiniBand ports
 * (ipoib_sa.c): the PathRecord query, a PathRecord answer turned into an
 * address vector, and the MCMemberRecord of full, send-only and creating
 * joins.
 */
#include "../../ipoib.h"
#include "ipoib_test.h"

static const union ib_gid sgid = { .raw = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0, 0x11, 0x22, 0x33 } };
static const union ib_gid dgid = { .raw = {
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0, 0x44, 0x55, 0x66 } };

static void ipng_sa_test_path_query(struct kunit *test)
{
	struct sa_path_rec rec;
	ib_sa_comp_mask mask;

	memset(&rec, 0xa5, sizeof(rec));
	mask = ipng_sa_path_query(&rec, &sgid, &dgid, 0x8001);
	KUNIT_EXPECT_EQ(test, (__force u64)mask,
			(__force u64)(IB_SA_PATH_REC_DGID | IB_SA_PATH_REC_SGID |
				      IB_SA_PATH_REC_PKEY |
				      IB_SA_PATH_REC_NUMB_PATH |
				      IB_SA_PATH_REC_REVERSIBLE));
	IPNG_EXPECT_MEMEQ(test, &rec.sgid, &sgid, sizeof(sgid));
	IPNG_EXPECT_MEMEQ(test, &rec.dgid, &dgid, sizeof(dgid));
	/* The P_Key travels big endian: 0x80 0x01 on the wire. */
	IPNG_EXPECT_MEMEQ(test, &rec.pkey, "\x80\x01", 2);
	KUNIT_EXPECT_EQ(test, rec.numb_path, 1);
	KUNIT_EXPECT_EQ(test, rec.reversible, 1);
	KUNIT_EXPECT_EQ(test, rec.rec_type, SA_PATH_REC_TYPE_IB);
	/* Everything not asked for is cleared, not left over. */
	KUNIT_EXPECT_EQ(test, rec.sl, 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(rec.ib.dlid), 0);
}

static void answer(struct sa_path_rec *rec, u16 dlid, u8 hop_limit)
{
	memset(rec, 0, sizeof(*rec));
	rec->rec_type = SA_PATH_REC_TYPE_IB;
	rec->dgid = dgid;
	rec->sgid = sgid;
	rec->ib.dlid = cpu_to_be16(dlid);
	rec->ib.slid = cpu_to_be16(0x0001);
	rec->sl = 3;
	rec->rate = IB_RATE_56_GBPS;
	rec->mtu = IB_MTU_4096;
	rec->hop_limit = hop_limit;
	rec->traffic_class = 0x20;
	rec->flow_label = cpu_to_be32(0x12345);
}

static void ipng_sa_test_path_local(struct kunit *test)
{
	struct rdma_ah_attr attr;
	struct sa_path_rec rec;

	answer(&rec, 0x0042, 0);
	KUNIT_ASSERT_EQ(test, ipng_sa_path_to_ah(&rec, 1, 0, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.type, RDMA_AH_ATTR_TYPE_IB);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&attr), 0x42U);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_sl(&attr), 3);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_static_rate(&attr), IB_RATE_56_GBPS);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_port_num(&attr), 1U);
	/* Inside the subnet: no GRH. */
	KUNIT_EXPECT_FALSE(test, rdma_ah_get_ah_flags(&attr) & IB_AH_GRH);

	answer(&rec, 0x0042, 1);
	KUNIT_ASSERT_EQ(test, ipng_sa_path_to_ah(&rec, 2, 0, &attr), 0);
	KUNIT_EXPECT_FALSE(test, rdma_ah_get_ah_flags(&attr) & IB_AH_GRH);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_port_num(&attr), 2U);
}

static void ipng_sa_test_path_routed(struct kunit *test)
{
	const struct ib_global_route *grh;
	struct rdma_ah_attr attr;
	struct sa_path_rec rec;

	answer(&rec, 0x0100, 64);
	KUNIT_ASSERT_EQ(test, ipng_sa_path_to_ah(&rec, 1, 3, &attr), 0);
	KUNIT_ASSERT_TRUE(test, rdma_ah_get_ah_flags(&attr) & IB_AH_GRH);
	grh = rdma_ah_read_grh(&attr);
	IPNG_EXPECT_MEMEQ(test, &grh->dgid, &dgid, sizeof(dgid));
	KUNIT_EXPECT_EQ(test, grh->sgid_index, 3);
	KUNIT_EXPECT_EQ(test, grh->hop_limit, 64);
	KUNIT_EXPECT_EQ(test, grh->traffic_class, 0x20);
	KUNIT_EXPECT_EQ(test, grh->flow_label, 0x12345U);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&attr), 0x100U);
}

static void ipng_sa_test_path_rejects(struct kunit *test)
{
	struct rdma_ah_attr attr;
	struct sa_path_rec rec;

	answer(&rec, 0, 0);
	KUNIT_EXPECT_EQ(test, ipng_sa_path_to_ah(&rec, 1, 0, &attr), -EINVAL);
	answer(&rec, 0xc001, 0);	/* a multicast LID */
	KUNIT_EXPECT_EQ(test, ipng_sa_path_to_ah(&rec, 1, 0, &attr), -EINVAL);
	answer(&rec, 0x0042, 0);
	rec.rec_type = SA_PATH_REC_TYPE_ROCE_V2;
	KUNIT_EXPECT_EQ(test, ipng_sa_path_to_ah(&rec, 1, 0, &attr), -EINVAL);
}

static void ipng_sa_test_join_only(struct kunit *test)
{
	struct ipng_sa_join_query q = { .join = IPNG_MC_FULL };
	struct ib_sa_mcmember_rec rec;
	ib_sa_comp_mask mask;

	ipng_mgid_broadcast(&q.mgid, IPNG_SCOPE_LINK, 0xffff);
	q.port_gid = sgid;
	memset(&rec, 0xa5, sizeof(rec));
	mask = ipng_sa_join_query(&rec, &q);
	KUNIT_EXPECT_EQ(test, (__force u64)mask,
			(__force u64)(IB_SA_MCMEMBER_REC_MGID |
				      IB_SA_MCMEMBER_REC_PORT_GID |
				      IB_SA_MCMEMBER_REC_JOIN_STATE));
	IPNG_EXPECT_MEMEQ(test, &rec.mgid, &q.mgid, sizeof(q.mgid));
	IPNG_EXPECT_MEMEQ(test, &rec.port_gid, &sgid, sizeof(sgid));
	KUNIT_EXPECT_EQ(test, rec.join_state, 0x1);	/* FullMember */
	KUNIT_EXPECT_EQ(test, be32_to_cpu(rec.qkey), 0U);

	q.join = IPNG_MC_SENDONLY;
	ipng_sa_join_query(&rec, &q);
	/* SendOnlyFullMember: may create the group (SendOnlyNonMember not) */
	KUNIT_EXPECT_EQ(test, rec.join_state, 0x8);
	q.join = IPNG_MC_FULL;
	ipng_sa_join_query(&rec, &q);
	KUNIT_EXPECT_EQ(test, rec.join_state, 0x1);
}

static void ipng_sa_test_join_create(struct kunit *test)
{
	struct ipng_sa_join_query q = { .join = IPNG_MC_FULL };
	struct ib_sa_mcmember_rec tmpl, rec;
	ib_sa_comp_mask mask;

	ipng_sa_bcast_defaults(&tmpl, 0x8001, IB_MTU_2048);
	/* Q_Key 0x00000B1B and the P_Key, both big endian on the wire. */
	IPNG_EXPECT_MEMEQ(test, &tmpl.qkey, "\x00\x00\x0b\x1b", 4);
	IPNG_EXPECT_MEMEQ(test, &tmpl.pkey, "\x80\x01", 2);
	KUNIT_EXPECT_EQ(test, tmpl.mtu, IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, tmpl.rate, IB_RATE_10_GBPS);
	KUNIT_EXPECT_EQ(test, tmpl.sl, 0);

	tmpl.sl = 2;
	tmpl.hop_limit = 1;
	tmpl.traffic_class = 0x10;
	ipng_mgid_ipv4(&q.mgid, IPNG_SCOPE_LINK, 0x8001, htonl(0xe0000001));
	q.port_gid = sgid;
	q.tmpl = &tmpl;
	mask = ipng_sa_join_query(&rec, &q);
	KUNIT_EXPECT_TRUE(test, mask & IB_SA_MCMEMBER_REC_QKEY);
	KUNIT_EXPECT_TRUE(test, mask & IB_SA_MCMEMBER_REC_PKEY);
	KUNIT_EXPECT_TRUE(test, mask & IB_SA_MCMEMBER_REC_MTU);
	KUNIT_EXPECT_TRUE(test, mask & IB_SA_MCMEMBER_REC_MTU_SELECTOR);
	KUNIT_EXPECT_TRUE(test, mask & IB_SA_MCMEMBER_REC_RATE);
	KUNIT_EXPECT_TRUE(test, mask & IB_SA_MCMEMBER_REC_SL);
	KUNIT_EXPECT_TRUE(test, mask & IB_SA_MCMEMBER_REC_JOIN_STATE);
	KUNIT_EXPECT_FALSE(test, mask & IB_SA_MCMEMBER_REC_MLID);
	IPNG_EXPECT_MEMEQ(test, &rec.qkey, &tmpl.qkey, sizeof(rec.qkey));
	IPNG_EXPECT_MEMEQ(test, &rec.pkey, &tmpl.pkey, sizeof(rec.pkey));
	KUNIT_EXPECT_EQ(test, rec.mtu, IB_MTU_2048);
	KUNIT_EXPECT_EQ(test, rec.mtu_selector, IB_SA_EQ);
	KUNIT_EXPECT_EQ(test, rec.rate, IB_RATE_10_GBPS);
	KUNIT_EXPECT_EQ(test, rec.rate_selector, IB_SA_EQ);
	KUNIT_EXPECT_EQ(test, rec.sl, 2);
	KUNIT_EXPECT_EQ(test, rec.hop_limit, 1);
	KUNIT_EXPECT_EQ(test, rec.traffic_class, 0x10);
	KUNIT_EXPECT_EQ(test, rec.join_state, 0x1);
	IPNG_EXPECT_MEMEQ(test, &rec.mgid, &q.mgid, sizeof(q.mgid));
}

static struct kunit_case ipng_sa_cases[] = {
	KUNIT_CASE(ipng_sa_test_path_query),
	KUNIT_CASE(ipng_sa_test_path_local),
	KUNIT_CASE(ipng_sa_test_path_routed),
	KUNIT_CASE(ipng_sa_test_path_rejects),
	KUNIT_CASE(ipng_sa_test_join_only),
	KUNIT_CASE(ipng_sa_test_join_create),
	{}
};

struct kunit_suite ipng_sa_suite = {
	.name		= "ipoib_ng_sa",
	.test_cases	= ipng_sa_cases,
};
