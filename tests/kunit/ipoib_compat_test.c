// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite ipoib_ng_compat: the shims of ipoib_compat.h behave the same
 * whichever way the feature probes went for the kernel under test, and the
 * probes ran at all.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "../../ipoib.h"
#include "ipoib_test.h"

/* The generated header is conftest.sh's: its sanity probe is recorded. */
static void compat_test_probes_ran(struct kunit *test)
{
#ifdef IPNG_HAVE_COMPILER
	bool have_compiler = true;
#else
	bool have_compiler = false;
#endif

	KUNIT_EXPECT_TRUE_MSG(test, have_compiler,
			      "ipoib_compat_gen.h lacks the compiler probe");
}

static void compat_test_setup(struct net_device *ndev)
{
	ndev->header_ops = &ipng_header_ops;
}

/*
 * header_ops.parse, through the kernel's own caller: the source address is
 * the 20 bytes before the IPoIB header, whether the kernel passes the device
 * or the adapter takes it from the packet.
 */
static void compat_test_header_parse(struct kunit *test)
{
	u8 addr[IPNG_ADDR_LEN], got[MAX_ADDR_LEN] = {};
	struct net_device *ndev;
	struct sk_buff *skb;
	union ib_gid gid;
	int i;

	for (i = 0; i < sizeof(gid.raw); i++)
		gid.raw[i] = 0xa0 + i;
	ipng_addr_build(addr, IPNG_FLAG_RC, 0x123456, &gid);

	ndev = alloc_netdev(0, "ipngt%d", NET_NAME_UNKNOWN, compat_test_setup);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	skb = alloc_skb(128, GFP_KERNEL);
	if (!skb) {
		free_netdev(ndev);
		KUNIT_FAIL(test, "no skb");
		return;
	}
	skb_reserve(skb, 64);
	skb_put_data(skb, addr, IPNG_ADDR_LEN);
	skb_reset_mac_header(skb);
	skb_pull(skb, IPNG_ADDR_LEN);
	skb->dev = ndev;

	KUNIT_EXPECT_EQ(test, dev_parse_header(skb, got), IPNG_ADDR_LEN);
	KUNIT_EXPECT_TRUE(test, !memcmp(got, addr, IPNG_ADDR_LEN));

	kfree_skb(skb);
	free_netdev(ndev);
}

struct compat_sa_seen {
	int status;
	struct sa_path_rec *resp;
	unsigned int num_prs;
	int calls;
};

static void compat_test_sa_cb(int status, struct sa_path_rec *resp,
			      unsigned int num_prs, void *context)
{
	struct compat_sa_seen *seen = context;

	seen->status = status;
	seen->resp = resp;
	seen->num_prs = num_prs;
	seen->calls++;
}

IPNG_SA_PATH_CB_ADAPTER(compat_test_sa_cb);

/* The SA callback shim passes status, record, count and context through. */
static void compat_test_sa_path_cb(struct kunit *test)
{
	struct compat_sa_seen seen = {};
	struct sa_path_rec rec = {};

	IPNG_SA_PATH_CB(compat_test_sa_cb)(-ETIMEDOUT, &rec, 1, &seen);
	KUNIT_EXPECT_EQ(test, seen.calls, 1);
	KUNIT_EXPECT_EQ(test, seen.status, -ETIMEDOUT);
	KUNIT_EXPECT_PTR_EQ(test, seen.resp, &rec);
	KUNIT_EXPECT_EQ(test, seen.num_prs, 1U);
#ifndef IPNG_HAVE_SA_PATH_CB_UINT
	/* Where the kernel's count is an int, a negative one is no records. */
	IPNG_SA_PATH_CB(compat_test_sa_cb)(0, NULL, -1, &seen);
	KUNIT_EXPECT_EQ(test, seen.calls, 2);
	KUNIT_EXPECT_EQ(test, seen.num_prs, 0U);
#endif
}

/* The backlog limit is the live sysctl, which is never below 1. */
static void compat_test_max_backlog(struct kunit *test)
{
	KUNIT_EXPECT_GT(test, ipng_max_backlog(), 0);
}

static struct kunit_case compat_cases[] = {
	KUNIT_CASE(compat_test_probes_ran),
	KUNIT_CASE(compat_test_header_parse),
	KUNIT_CASE(compat_test_sa_path_cb),
	KUNIT_CASE(compat_test_max_backlog),
	{}
};

struct kunit_suite ipng_compat_suite = {
	.name = "ipoib_ng_compat",
	.test_cases = compat_cases,
};
