// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the parsers of user input: the interface name template
 * and the ring size module parameters (ipoib_main.c), the ring sizes of
 * ethtool -G and the link speed ethtool reports (ipoib_ethtool.c).
 */
#include "../../ipoib.h"
#include "ipoib_test.h"

static void ipng_test_ifname_accepts(struct kunit *test)
{
	static const char * const good[] = {
		"ib%d", "%d", "ibng%d", "fab0_p%d", "%dx", "abcdefghijkl%d",
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(good); i++)
		KUNIT_EXPECT_TRUE_MSG(test, ipng_ifname_template_valid(good[i]),
				      "template '%s'", good[i]);
}

static void ipng_test_ifname_rejects(struct kunit *test)
{
	static const char * const bad[] = {
		"",			/* empty */
		"ib",			/* no number */
		"ib%d%d",		/* two numbers */
		"ib%s",			/* other conversion */
		"ib%",			/* dangling percent */
		"i b%d",		/* white space */
		"ib/%d",		/* path separator */
		"ib:%d",		/* alias separator */
		"abcdefghijklm%d",	/* 15 characters: no room for a digit */
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_FALSE_MSG(test, ipng_ifname_template_valid(bad[i]),
				       "template '%s'", bad[i]);
}

static void ipng_test_ring_size(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, ipng_ring_size_valid(64));
	KUNIT_EXPECT_TRUE(test, ipng_ring_size_valid(256));
	KUNIT_EXPECT_TRUE(test, ipng_ring_size_valid(8192));
	KUNIT_EXPECT_FALSE(test, ipng_ring_size_valid(0));
	KUNIT_EXPECT_FALSE(test, ipng_ring_size_valid(32));
	KUNIT_EXPECT_FALSE(test, ipng_ring_size_valid(100));
	KUNIT_EXPECT_FALSE(test, ipng_ring_size_valid(16384));
	KUNIT_EXPECT_FALSE(test, ipng_ring_size_valid(UINT_MAX));
}

static void ipng_test_ring_round(struct kunit *test)
{
	u32 size = 12345;

	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(64, 8192, &size), 0);
	KUNIT_EXPECT_EQ(test, size, 64);
	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(300, 8192, &size), 0);
	KUNIT_EXPECT_EQ(test, size, 512);
	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(8192, 8192, &size), 0);
	KUNIT_EXPECT_EQ(test, size, 8192);
	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(4097, 8192, &size), 0);
	KUNIT_EXPECT_EQ(test, size, 8192);

	/* Refused values leave the result alone. */
	size = 777;
	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(0, 8192, &size), -EINVAL);
	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(63, 8192, &size), -EINVAL);
	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(8193, 8192, &size),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(U32_MAX, 8192, &size),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, size, 777);
	/* A device cap that is not a power of two: rounding may pass it. */
	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(3000, 3000, &size), -EINVAL);
	KUNIT_EXPECT_EQ(test, ipng_ring_size_round(2000, 3000, &size), 0);
	KUNIT_EXPECT_EQ(test, size, 2048);
}

static void ipng_test_port_speed(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ipng_port_speed(IB_SPEED_SDR, IB_WIDTH_1X), 2500);
	KUNIT_EXPECT_EQ(test, ipng_port_speed(IB_SPEED_QDR, IB_WIDTH_4X),
			40000);
	KUNIT_EXPECT_EQ(test, ipng_port_speed(IB_SPEED_FDR, IB_WIDTH_4X),
			56000);
	KUNIT_EXPECT_EQ(test, ipng_port_speed(IB_SPEED_EDR, IB_WIDTH_4X),
			100000);
	KUNIT_EXPECT_EQ(test, ipng_port_speed(IB_SPEED_HDR, IB_WIDTH_2X),
			100000);
	KUNIT_EXPECT_EQ(test, ipng_port_speed(IB_SPEED_NDR, IB_WIDTH_12X),
			1200000);
	KUNIT_EXPECT_EQ(test, ipng_port_speed(0, IB_WIDTH_4X), 0);
	KUNIT_EXPECT_EQ(test, ipng_port_speed(IB_SPEED_EDR, 0), 0);
	KUNIT_EXPECT_EQ(test, ipng_port_speed(3, IB_WIDTH_4X), 0);
}

static struct kunit_case ipng_params_cases[] = {
	KUNIT_CASE(ipng_test_ifname_accepts),
	KUNIT_CASE(ipng_test_ifname_rejects),
	KUNIT_CASE(ipng_test_ring_size),
	KUNIT_CASE(ipng_test_ring_round),
	KUNIT_CASE(ipng_test_port_speed),
	{}
};

struct kunit_suite ipng_params_suite = {
	.name = "ipoib_ng_params",
	.test_cases = ipng_params_cases,
};
