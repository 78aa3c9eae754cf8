// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the parsers of user input in ipoib_main.c: the interface
 * name template and the ring size module parameters.
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

static struct kunit_case ipng_params_cases[] = {
	KUNIT_CASE(ipng_test_ifname_accepts),
	KUNIT_CASE(ipng_test_ifname_rejects),
	KUNIT_CASE(ipng_test_ring_size),
	{}
};

struct kunit_suite ipng_params_suite = {
	.name = "ipoib_ng_params",
	.test_cases = ipng_params_cases,
};
