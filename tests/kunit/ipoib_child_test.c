// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the rules of child interfaces (ipoib_child.c): which
 * P_Keys a user may give, the full-membership bit, the text sysfs takes
 * and the names of children made through sysfs.
 */
#include <linux/netdevice.h>

#include "../../ipoib.h"
#include "ipoib_test.h"

static void ipng_test_child_pkey_normalised(struct kunit *test)
{
	static const struct {
		unsigned long val;
		u16 want;
	} cases[] = {
		{ 0x8001, 0x8001 },
		{ 0x0001, 0x8001 },	/* limited member asked: full member */
		{ 0x7fff, 0xffff },
		{ 0xffff, 0xffff },	/* the default partition */
		{ 0x1234, 0x9234 },
	};
	u16 pkey;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		pkey = 0;
		KUNIT_EXPECT_EQ_MSG(test, ipng_child_pkey(cases[i].val, &pkey), 0,
				    "0x%lx", cases[i].val);
		KUNIT_EXPECT_EQ_MSG(test, pkey, cases[i].want, "0x%lx",
				    cases[i].val);
	}
}

static void ipng_test_child_pkey_refused(struct kunit *test)
{
	static const unsigned long bad[] = {
		0x0000, 0x8000,		/* the invalid P_Key, both memberships */
		0x10000, 0x18001,	/* more than 16 bits */
		ULONG_MAX,
	};
	u16 pkey;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		pkey = 0x4242;
		KUNIT_EXPECT_EQ_MSG(test, ipng_child_pkey(bad[i], &pkey), -EINVAL,
				    "0x%lx", bad[i]);
		KUNIT_EXPECT_EQ_MSG(test, pkey, 0x4242,
				    "0x%lx changed the result", bad[i]);
	}
}

static void ipng_test_child_pkey_text(struct kunit *test)
{
	static const struct {
		const char *text;
		int err;
		u16 want;
	} cases[] = {
		{ "0x8001\n", 0, 0x8001 },	/* echo 0x8001 > create_child */
		{ "0x8001", 0, 0x8001 },	/* NetworkManager: 0x%04x, no newline */
		{ "0x0002", 0, 0x8002 },
		{ "32769", 0, 0x8001 },		/* decimal */
		{ "0100001", 0, 0x8001 },	/* octal, as %i reads it */
		{ "0XFFFF", 0, 0xffff },
		{ "", -EINVAL, 0 },
		{ "\n", -EINVAL, 0 },
		{ "0x", -EINVAL, 0 },
		{ "8001x", -EINVAL, 0 },
		{ " 0x8001", -EINVAL, 0 },
		{ "0x8001 0x8002", -EINVAL, 0 },
		{ "-1", -EINVAL, 0 },
		{ "0x10000", -EINVAL, 0 },
		{ "0x8000", -EINVAL, 0 },
		{ "0", -EINVAL, 0 },
		{ "ffff", -EINVAL, 0 },		/* hex needs its 0x */
	};
	u16 pkey;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		pkey = 0;
		KUNIT_EXPECT_EQ_MSG(test, ipng_child_pkey_parse(cases[i].text, &pkey),
				    cases[i].err, "'%s'", cases[i].text);
		if (!cases[i].err)
			KUNIT_EXPECT_EQ_MSG(test, pkey, cases[i].want, "'%s'",
					    cases[i].text);
	}
}

static void ipng_test_child_name(struct kunit *test)
{
	char name[IFNAMSIZ];

	ipng_child_name(name, "ib0", 0x8001);
	KUNIT_EXPECT_STREQ(test, name, "ib0.8001");
	ipng_child_name(name, "ib1", 0xffff);
	KUNIT_EXPECT_STREQ(test, name, "ib1.ffff");
	ipng_child_name(name, "ibp7s0f1", 0x8abc);
	KUNIT_EXPECT_STREQ(test, name, "ibp7s0f1.8abc");
	/* A 15-character parent: cut to 10, the whole name still fits. */
	ipng_child_name(name, "abcdefghijklmno", 0x8001);
	KUNIT_EXPECT_STREQ(test, name, "abcdefghij.8001");
	KUNIT_EXPECT_LT(test, strlen(name), (size_t)IFNAMSIZ);
}

/*
 * The P_Key table changed under an open interface: every combination of
 * running/waiting and found/moved.
 */
static void ipng_test_pkey_follow(struct kunit *test)
{
	/* running: restart when the P_Key left or moved */
	KUNIT_EXPECT_FALSE(test, ipng_pkey_must_restart(true, false, true, false));
	KUNIT_EXPECT_TRUE(test, ipng_pkey_must_restart(true, false, true, true));
	KUNIT_EXPECT_TRUE(test, ipng_pkey_must_restart(true, false, false, false));
	/* waiting for the P_Key: start once it is there, wherever */
	KUNIT_EXPECT_TRUE(test, ipng_pkey_must_restart(false, true, true, false));
	KUNIT_EXPECT_TRUE(test, ipng_pkey_must_restart(false, true, true, true));
	KUNIT_EXPECT_FALSE(test, ipng_pkey_must_restart(false, true, false, false));
	/* halted by a failed restart: the channel watchdog's, not ours */
	KUNIT_EXPECT_FALSE(test, ipng_pkey_must_restart(false, false, true, false));
	KUNIT_EXPECT_FALSE(test, ipng_pkey_must_restart(false, false, false, false));
}

static struct kunit_case ipng_child_cases[] = {
	KUNIT_CASE(ipng_test_child_pkey_normalised),
	KUNIT_CASE(ipng_test_child_pkey_refused),
	KUNIT_CASE(ipng_test_child_pkey_text),
	KUNIT_CASE(ipng_test_child_name),
	KUNIT_CASE(ipng_test_pkey_follow),
	{}
};

struct kunit_suite ipng_child_suite = {
	.name = "ipoib_ng_child",
	.test_cases = ipng_child_cases,
};
