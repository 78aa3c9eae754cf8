// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the mode and MTU rules of ipoib_mode.c: the limit of
 * each mode, what the MTU becomes when the datagram limit moves, and the
 * parser of the sysfs mode file.
 */
#include "../../ipoib.h"
#include "ipoib_test.h"

static void ipng_test_limit_datagram(struct kunit *test)
{
	/* Datagram mode never goes past the datagram limit. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(false, 1020, IPNG_CM_MTU), 1020);
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(false, 4092, IPNG_CM_MTU), 4092);
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(false, 2044, 0), 2044);
}

static void ipng_test_limit_connected(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(true, 1020, IPNG_CM_MTU), 65520);
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(true, 4092, 9000), 9000);
	/* The connected limit holds even when smaller than the UD one. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(true, 4092, 2000), 2000);
}

static void ipng_test_limit_no_cm(struct kunit *test)
{
	/* Without RC support connected mode is datagram mode in effect. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(true, 1020, 0), 1020);
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(true, 4092, -EOPNOTSUPP), 4092);
}

static void ipng_test_limit_boundaries(struct kunit *test)
{
	/* Smallest and largest datagram limits of the IB MTU enum. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(false, ipng_ud_mtu(IB_MTU_256),
					     IPNG_CM_MTU), 252);
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(true, ipng_ud_mtu(IB_MTU_256),
					     IPNG_CM_MTU), IPNG_CM_MTU);
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(false, ipng_ud_mtu(IB_MTU_4096),
					     IPNG_CM_MTU), 4092);
	/* A connected limit of 1 is still a limit; 0 means none. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(true, 1020, 1), 1);
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(true, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, ipng_mtu_limit(false, 0, IPNG_CM_MTU), 0);
}

static void ipng_test_follow_datagram(struct kunit *test)
{
	/* At the old limit: follows it up and down. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(false, 1020, 1020, 4092,
						       IPNG_CM_MTU), 4092);
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(false, 4092, 4092, 1020,
						       IPNG_CM_MTU), 1020);
	/* Below the old limit: stays while it fits, is lowered otherwise. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(false, 1500, 4092, 2044,
						       IPNG_CM_MTU), 1500);
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(false, 1500, 4092, 1020,
						       IPNG_CM_MTU), 1020);
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(false, 1000, 1020, 4092,
						       IPNG_CM_MTU), 1000);
	/* Exactly at the new limit, not at the old one: stays. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(false, 2044, 4092, 2044,
						       IPNG_CM_MTU), 2044);
}

static void ipng_test_follow_connected(struct kunit *test)
{
	/* The user's MTU stays, also when it sat at the old UD limit. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(true, 65520, 1020, 4092,
						       IPNG_CM_MTU), 65520);
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(true, 1020, 1020, 4092,
						       IPNG_CM_MTU), 1020);
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(true, 9000, 4092, 1020,
						       IPNG_CM_MTU), 9000);
	/* Above the connected limit it is lowered to that. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(true, 9000, 4092, 1020,
						       8000), 8000);
	/* Without RC support: the datagram rules. */
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(true, 1020, 1020, 4092,
						       0), 4092);
	KUNIT_EXPECT_EQ(test, ipng_mtu_after_ud_change(true, 4092, 4092, 1020,
						       0), 1020);
}

static void ipng_test_parse_valid(struct kunit *test)
{
	bool connected;

	connected = true;
	KUNIT_EXPECT_EQ(test, ipng_mode_parse("datagram", &connected), 0);
	KUNIT_EXPECT_FALSE(test, connected);
	connected = false;
	KUNIT_EXPECT_EQ(test, ipng_mode_parse("connected", &connected), 0);
	KUNIT_EXPECT_TRUE(test, connected);
}

static void ipng_test_parse_newline(struct kunit *test)
{
	bool connected;

	/* echo adds one newline; that is all sysfs_streq() forgives. */
	connected = true;
	KUNIT_EXPECT_EQ(test, ipng_mode_parse("datagram\n", &connected), 0);
	KUNIT_EXPECT_FALSE(test, connected);
	connected = false;
	KUNIT_EXPECT_EQ(test, ipng_mode_parse("connected\n", &connected), 0);
	KUNIT_EXPECT_TRUE(test, connected);
}

static void ipng_test_parse_rejects(struct kunit *test)
{
	static const char * const bad[] = {
		"",			/* empty */
		"\n",			/* just the newline */
		"Connected",		/* case matters */
		"DATAGRAM",
		"connect",		/* prefix */
		"data",
		"connectedx",		/* longer */
		"datagram\n\n",		/* two newlines */
		" connected",		/* leading space */
		"connected ",		/* trailing space */
		"cm",
		"1",
	};
	bool connected;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		connected = true;
		KUNIT_EXPECT_EQ_MSG(test, ipng_mode_parse(bad[i], &connected),
				    -EINVAL, "mode '%s'", bad[i]);
		/* The result is untouched on error. */
		KUNIT_EXPECT_TRUE_MSG(test, connected, "mode '%s'", bad[i]);
	}
}

static struct kunit_case ipng_mode_cases[] = {
	KUNIT_CASE(ipng_test_limit_datagram),
	KUNIT_CASE(ipng_test_limit_connected),
	KUNIT_CASE(ipng_test_limit_no_cm),
	KUNIT_CASE(ipng_test_limit_boundaries),
	KUNIT_CASE(ipng_test_follow_datagram),
	KUNIT_CASE(ipng_test_follow_connected),
	KUNIT_CASE(ipng_test_parse_valid),
	KUNIT_CASE(ipng_test_parse_newline),
	KUNIT_CASE(ipng_test_parse_rejects),
	{}
};

struct kunit_suite ipng_mode_suite = {
	.name = "ipoib_ng_mode",
	.test_cases = ipng_mode_cases,
};
