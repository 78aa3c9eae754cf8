// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the limits of connected mode: the connection budget
 * (max_connections), the caps of ipng_cm_admit() (per peer, being made,
 * receive rings) and how the driver's holds take and give them back,
 * floods of forged link addresses against them, failed markers (cap,
 * expiry, what they still hold), idle reaping, connect-queue bounds and
 * the ranges of the writable parameters.
 */
#include <linux/hashtable.h>
#include "../../ipoib_cm_priv.h"
#include "../../ipoib_cm_state.h"
#include "ipoib_test.h"

/* The connection budget. */

static void budget_init(struct ipng_cm_budget *b, unsigned int max)
{
	atomic_set(&b->count, 0);
	b->max = max;
}

static void ipng_cm_test_budget_cap(struct kunit *test)
{
	struct ipng_cm_budget b;

	budget_init(&b, 3);
	KUNIT_EXPECT_TRUE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_TRUE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_TRUE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), 3);
	KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), 3);
	ipng_cm_budget_return(&b);
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), 2);
	KUNIT_EXPECT_TRUE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), 3);
}

static void ipng_cm_test_budget_zero(struct kunit *test)
{
	struct ipng_cm_budget b;
	int i;

	budget_init(&b, 0);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_FALSE_MSG(test, ipng_cm_budget_take(&b),
				       "take %d", i);
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), 0);
}

static void ipng_cm_test_budget_never_over(struct kunit *test)
{
	struct ipng_cm_budget b;
	int i, taken = 0;

	budget_init(&b, 5);
	for (i = 0; i < 50; i++) {
		if (ipng_cm_budget_take(&b))
			taken++;
		KUNIT_EXPECT_LE_MSG(test, atomic_read(&b.count), 5,
				    "after take %d", i);
		/* Every third round gives one back. */
		if (i % 3 == 2 && taken) {
			ipng_cm_budget_return(&b);
			taken--;
		}
		KUNIT_EXPECT_EQ(test, atomic_read(&b.count), taken);
	}
	KUNIT_EXPECT_EQ(test, taken, 5);
}

/* max_connections changed while connections exist. */
static void ipng_cm_test_budget_lower_max(struct kunit *test)
{
	struct ipng_cm_budget b;
	int i;

	budget_init(&b, 4);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_TRUE(test, ipng_cm_budget_take(&b));
	WRITE_ONCE(b.max, 2);
	KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
	ipng_cm_budget_return(&b);		/* 3 held */
	KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
	ipng_cm_budget_return(&b);		/* 2 held: still at the cap */
	KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
	ipng_cm_budget_return(&b);		/* 1 held */
	KUNIT_EXPECT_TRUE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), 2);

	/* Raised again: room for exactly the difference. */
	WRITE_ONCE(b.max, 4);
	KUNIT_EXPECT_TRUE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_TRUE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), 4);

	/* Lowered to zero: nothing more, however many are given back. */
	WRITE_ONCE(b.max, 0);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
		ipng_cm_budget_return(&b);
	}
	KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), 0);
}

/* A count driven below zero (a slot returned twice) refuses, not wraps. */
static void ipng_cm_test_budget_negative(struct kunit *test)
{
	struct ipng_cm_budget b;

	budget_init(&b, 3);
	ipng_cm_budget_return(&b);
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), -1);
	KUNIT_EXPECT_FALSE(test, ipng_cm_budget_take(&b));
	KUNIT_EXPECT_EQ(test, atomic_read(&b.count), -1);
}

/* The caps of ipng_cm_admit(), one at a time, at their edges. */

static void ipng_cm_test_admit_free(struct kunit *test)
{
	struct ipng_cm_usage use = { 0 };

	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, false, 16), IPNG_CM_ADMIT);
	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, true, 16), IPNG_CM_ADMIT);
	use.setup = IPNG_CM_SETUP_MAX - 1;
	use.peer = IPNG_CM_PER_PEER - 1;
	use.own_ring = 15;
	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, true, 16), IPNG_CM_ADMIT);
}

static void ipng_cm_test_admit_setup_cap(struct kunit *test)
{
	struct ipng_cm_usage use = { .setup = IPNG_CM_SETUP_MAX };

	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, false, 16),
			IPNG_CM_FULL_SETUP);
	use.setup = UINT_MAX;
	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, false, 16),
			IPNG_CM_FULL_SETUP);
}

/* One remote GID never holds more than IPNG_CM_PER_PEER connections. */
static void ipng_cm_test_admit_per_peer(struct kunit *test)
{
	struct ipng_cm_usage use = { .peer = IPNG_CM_PER_PEER };

	KUNIT_EXPECT_EQ(test, IPNG_CM_PER_PEER, 16);
	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, false, 16),
			IPNG_CM_FULL_PEER);
	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, true, 16),
			IPNG_CM_FULL_PEER);
}

/* Without SRQ: a ring per connection, capped; with one, no such cap. */
static void ipng_cm_test_admit_own_ring(struct kunit *test)
{
	struct ipng_cm_usage use = { .own_ring = 16 };

	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, true, 16),
			IPNG_CM_FULL_RING);
	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, false, 16), IPNG_CM_ADMIT);
	use.own_ring = 0;
	KUNIT_EXPECT_EQ(test, ipng_cm_admit(&use, true, 0),
			IPNG_CM_FULL_RING);
}

/*
 * A flood as in the finding: ARP requests from thousands of fresh QPNs on
 * one GID, none of which ever answers a REQ. The driver's bookkeeping is
 * modelled: an admitted connection stays in setup (counts against the
 * setup and per-peer caps) until it fails, then becomes a marker within
 * the marker cap. The table (setting up + markers) must stay bounded.
 */
static void ipng_cm_test_flood_bounded(struct kunit *test)
{
	struct ipng_cm_usage use = { 0 };
	unsigned int markers = 0, admitted = 0, refused_peer = 0, i;
	unsigned int table = 0, most = 0;

	for (i = 0; i < 10000; i++) {
		switch (ipng_cm_admit(&use, false, 16)) {
		case IPNG_CM_ADMIT:
			admitted++;
			use.setup++;
			use.peer++;
			table++;
			break;
		case IPNG_CM_FULL_PEER:
			refused_peer++;
			break;
		default:
			break;
		}
		most = max(most, table);
		/* Every 8th attempt, the oldest one fails (REJ). */
		if (i % 8 == 7 && use.setup) {
			use.setup--;
			use.peer--;
			if (ipng_cm_marker_keep(markers))
				markers++;
			else
				table--;
		}
	}
	KUNIT_EXPECT_LE(test, use.peer, IPNG_CM_PER_PEER);
	KUNIT_EXPECT_LE(test, markers, IPNG_CM_MARKERS_MAX);
	KUNIT_EXPECT_LE(test, most, IPNG_CM_PER_PEER + IPNG_CM_MARKERS_MAX);
	KUNIT_EXPECT_GT(test, refused_peer, 0);
	KUNIT_EXPECT_GT(test, admitted, IPNG_CM_PER_PEER);
}

/*
 * The connected-mode flood of the hostile suite: every connection to the
 * attacker's GID is rejected. Each failed one stays as a marker that
 * still counts against the GID, so the GID gets no new attempt until a
 * marker expires; the setup and max_connections slots are free again at
 * once, and another GID is not held back. (Before, a failure gave back
 * the GID's count too, and the next forged address got a new attempt
 * straight away: an RC QP made and destroyed per forged address.)
 */
static void ipng_cm_test_marker_holds_peer(struct kunit *test)
{
	struct ipng_cm_hold *holds, h;
	union ib_gid gid = { .raw = { 0xfe, 0x80, [15] = 1 } };
	union ib_gid other = { .raw = { 0xfe, 0x80, [15] = 2 } };
	struct ipng_cm *cm;
	int i;

	cm = kunit_kzalloc(test, sizeof(*cm), GFP_KERNEL);
	holds = kunit_kcalloc(test, IPNG_CM_PER_PEER, sizeof(*holds),
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cm);
	KUNIT_ASSERT_NOT_NULL(test, holds);
	spin_lock_init(&cm->lock);
	hash_init(cm->peers);
	cm->rx_max = IPNG_CM_OWN_RING_MAX;

	spin_lock_bh(&cm->lock);
	for (i = 0; i < IPNG_CM_PER_PEER; i++) {
		KUNIT_EXPECT_EQ(test, ipng_cm_hold_take(cm, &gid, false,
							&holds[i]),
				IPNG_CM_ADMIT);
		/* Rejected; kept as a marker. */
		ipng_cm_hold_put_marker(cm, &holds[i]);
	}
	KUNIT_EXPECT_EQ(test, cm->setup, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&cm->budget.count), 0);
	KUNIT_EXPECT_EQ(test, ipng_cm_hold_take(cm, &gid, false, &h),
			IPNG_CM_FULL_PEER);
	KUNIT_EXPECT_NULL(test, h.peer);
	KUNIT_EXPECT_EQ(test, ipng_cm_hold_take(cm, &other, false, &h),
			IPNG_CM_ADMIT);
	ipng_cm_hold_put(cm, &h);
	/* The markers expire: the GID's count goes, its entry with it. */
	for (i = 0; i < IPNG_CM_PER_PEER; i++) {
		ipng_cm_hold_put(cm, &holds[i]);
		/* A second put (the release runs again) gives nothing. */
		ipng_cm_hold_put(cm, &holds[i]);
	}
	KUNIT_EXPECT_TRUE(test, hash_empty(cm->peers));
	KUNIT_EXPECT_EQ(test, ipng_cm_hold_take(cm, &gid, false, &h),
			IPNG_CM_ADMIT);
	ipng_cm_hold_put(cm, &h);
	KUNIT_EXPECT_TRUE(test, hash_empty(cm->peers));
	KUNIT_EXPECT_EQ(test, atomic_read(&cm->budget.count), 0);
	spin_unlock_bh(&cm->lock);
}

/* Fresh GIDs as well: then the setup cap holds the line. */
static void ipng_cm_test_flood_fresh_gids(struct kunit *test)
{
	struct ipng_cm_usage use = { 0 };
	unsigned int admitted = 0, i;

	for (i = 0; i < 10000; i++) {
		use.peer = 0;		/* every packet from a new GID */
		if (ipng_cm_admit(&use, false, 16) == IPNG_CM_ADMIT) {
			admitted++;
			use.setup++;
		}
	}
	KUNIT_EXPECT_EQ(test, admitted, IPNG_CM_SETUP_MAX);
}

static void ipng_cm_test_in_setup(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, ipng_cm_in_setup(IPNG_CM_IDLE));
	KUNIT_EXPECT_TRUE(test, ipng_cm_in_setup(IPNG_CM_REQ_SENT));
	KUNIT_EXPECT_TRUE(test, ipng_cm_in_setup(IPNG_CM_REP_SENT));
	KUNIT_EXPECT_FALSE(test, ipng_cm_in_setup(IPNG_CM_LIVE));
	KUNIT_EXPECT_FALSE(test, ipng_cm_in_setup(IPNG_CM_CLOSING));
	KUNIT_EXPECT_FALSE(test, ipng_cm_in_setup(IPNG_CM_FAILED));
	KUNIT_EXPECT_FALSE(test, ipng_cm_in_setup(IPNG_CM_NR_STATES));
}

/*
 * Every step the state machine can take out of a setup state either stays
 * in setup or leaves it for good: the setup count is given back once.
 */
static void ipng_cm_test_setup_left_once(struct kunit *test)
{
	unsigned int act;
	int st, ev;

	for (st = 0; st < IPNG_CM_NR_STATES; st++) {
		for (ev = 0; ev < IPNG_CM_NR_EVENTS; ev++) {
			enum ipng_cm_state next = ipng_cm_step(st, ev, &act);

			if (!ipng_cm_in_setup(st))
				KUNIT_EXPECT_FALSE_MSG(test,
						       ipng_cm_in_setup(next),
						       "%s --%s--> %s",
						       ipng_cm_state_name(st),
						       ipng_cm_event_name(ev),
						       ipng_cm_state_name(next));
		}
	}
}

static void ipng_cm_test_marker_cap(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, ipng_cm_marker_keep(0));
	KUNIT_EXPECT_TRUE(test, ipng_cm_marker_keep(IPNG_CM_MARKERS_MAX - 1));
	KUNIT_EXPECT_FALSE(test, ipng_cm_marker_keep(IPNG_CM_MARKERS_MAX));
	KUNIT_EXPECT_FALSE(test, ipng_cm_marker_keep(UINT_MAX));
}

/* A marker expires at its retry time, however busy the peer. */
static void ipng_cm_test_marker_expiry(struct kunit *test)
{
	unsigned long now = 100000, t = 60 * HZ;

	KUNIT_EXPECT_FALSE(test, ipng_cm_reap_due(IPNG_CM_FAILED, now, now, t,
						  now + 1));
	KUNIT_EXPECT_TRUE(test, ipng_cm_reap_due(IPNG_CM_FAILED, now, now, t,
						 now));
	KUNIT_EXPECT_TRUE(test, ipng_cm_reap_due(IPNG_CM_FAILED, now, now, t,
						 now - 10 * HZ));
	/* Across a jiffies wrap. */
	KUNIT_EXPECT_TRUE(test, ipng_cm_reap_due(IPNG_CM_FAILED, 5, 5, t,
						 ULONG_MAX - 5));
	KUNIT_EXPECT_FALSE(test, ipng_cm_reap_due(IPNG_CM_FAILED, ULONG_MAX - 5,
						  ULONG_MAX - 5, t, 5));
}

static void ipng_cm_test_reap_idle(struct kunit *test)
{
	unsigned long now = 100000, t = 3 * HZ;
	int st;

	for (st = 0; st < IPNG_CM_NR_STATES; st++) {
		if (st == IPNG_CM_FAILED)
			continue;
		KUNIT_EXPECT_FALSE(test, ipng_cm_reap_due(st, now, now - t, t,
							  0));
		KUNIT_EXPECT_EQ_MSG(test, ipng_cm_reap_due(st, now,
							   now - t - 1, t, 0),
				    st != IPNG_CM_CLOSING, "%s",
				    ipng_cm_state_name(st));
	}
}

static void ipng_cm_test_queue_bounds(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, ipng_cm_queue_ok(0, 0, 0, 2048));
	KUNIT_EXPECT_TRUE(test, ipng_cm_queue_ok(IPNG_CM_QUEUE_MAX - 1, 0, 0,
						 1024));
	KUNIT_EXPECT_FALSE(test, ipng_cm_queue_ok(IPNG_CM_QUEUE_MAX, 0, 0, 1));
	/* Bytes of one connection. */
	KUNIT_EXPECT_TRUE(test, ipng_cm_queue_ok(1, IPNG_CM_QUEUE_BYTES - 100,
						 IPNG_CM_QUEUE_BYTES, 100));
	KUNIT_EXPECT_FALSE(test, ipng_cm_queue_ok(1, IPNG_CM_QUEUE_BYTES - 100,
						  IPNG_CM_QUEUE_BYTES, 101));
	KUNIT_EXPECT_FALSE(test, ipng_cm_queue_ok(0, 0, 0,
						  IPNG_CM_QUEUE_BYTES + 1));
	/* Bytes of the interface. */
	KUNIT_EXPECT_TRUE(test, ipng_cm_queue_ok(0, 0,
						 IPNG_CM_BACKLOG_BYTES - 4096,
						 4096));
	KUNIT_EXPECT_FALSE(test, ipng_cm_queue_ok(0, 0,
						  IPNG_CM_BACKLOG_BYTES - 4096,
						  4097));
	KUNIT_EXPECT_FALSE(test, ipng_cm_queue_ok(0, 0, UINT_MAX, 1));
	KUNIT_EXPECT_FALSE(test, ipng_cm_queue_ok(0, UINT_MAX, 0, 1));
}

/* 64 KiB packets: the whole connect backlog stays within its bound. */
static void ipng_cm_test_queue_fill(struct kunit *test)
{
	unsigned int total = 0, q, n, conns = 0, truesize = 66816;

	for (conns = 0; conns < IPNG_CM_SETUP_MAX; conns++) {
		unsigned int qbytes = 0;

		for (q = 0; q < 1000; q++) {
			if (!ipng_cm_queue_ok(q, qbytes, total, truesize))
				break;
			qbytes += truesize;
			total += truesize;
		}
		n = q;
		KUNIT_EXPECT_LE(test, qbytes, IPNG_CM_QUEUE_BYTES);
		KUNIT_EXPECT_LE(test, n, IPNG_CM_QUEUE_MAX);
	}
	KUNIT_EXPECT_LE(test, total, IPNG_CM_BACKLOG_BYTES);
	KUNIT_EXPECT_GT(test, total, IPNG_CM_BACKLOG_BYTES - truesize - 1);
}

/* Without SRQ: at most 16 connections of 32 x 64 KiB = 2 MiB each. */
static void ipng_cm_test_own_ring_max(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ipng_cm_own_ring_max(16384), IPNG_CM_OWN_RING_MAX);
	KUNIT_EXPECT_EQ(test, ipng_cm_own_ring_max(IPNG_CM_OWN_RING_MAX *
						   IPNG_CM_RX_RING),
			IPNG_CM_OWN_RING_MAX);
	KUNIT_EXPECT_EQ(test, ipng_cm_own_ring_max(5 * IPNG_CM_RX_RING + 1), 5);
	KUNIT_EXPECT_EQ(test, ipng_cm_own_ring_max(IPNG_CM_RX_RING - 1), 0);
	KUNIT_EXPECT_EQ(test, ipng_cm_own_ring_max(0), 0);
	KUNIT_EXPECT_LE(test, (u64)IPNG_CM_OWN_RING_MAX * IPNG_CM_RX_RING *
			IPNG_CM_BUF_LEN, 32ULL << 20);
}

static void ipng_cm_test_param_ranges(struct kunit *test)
{
	unsigned int min, max;

	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(IPNG_CM_PARAM_MAX_CONN, 0,
						  &min, &max), 0);
	KUNIT_EXPECT_EQ(test, min, 0);
	KUNIT_EXPECT_EQ(test, max, 65536);
	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(IPNG_CM_PARAM_MAX_CONN, 4096,
						  &min, &max), 0);
	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(IPNG_CM_PARAM_MAX_CONN, 65536,
						  &min, &max), 0);
	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(IPNG_CM_PARAM_MAX_CONN, 65537,
						  &min, &max), -ERANGE);
	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(IPNG_CM_PARAM_MAX_CONN,
						  UINT_MAX, &min, &max),
			-ERANGE);

	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(IPNG_CM_PARAM_IDLE, 0,
						  &min, &max), -ERANGE);
	KUNIT_EXPECT_EQ(test, min, 1);
	KUNIT_EXPECT_EQ(test, max, 86400);
	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(IPNG_CM_PARAM_IDLE, 1,
						  &min, &max), 0);
	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(IPNG_CM_PARAM_IDLE, 86400,
						  &min, &max), 0);
	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(IPNG_CM_PARAM_IDLE, 86401,
						  &min, &max), -ERANGE);
	KUNIT_EXPECT_EQ(test, ipng_cm_param_check(42, 1, &min, &max), -EINVAL);
}

static struct kunit_case ipng_cm_caps_cases[] = {
	KUNIT_CASE(ipng_cm_test_budget_cap),
	KUNIT_CASE(ipng_cm_test_budget_zero),
	KUNIT_CASE(ipng_cm_test_budget_never_over),
	KUNIT_CASE(ipng_cm_test_budget_lower_max),
	KUNIT_CASE(ipng_cm_test_budget_negative),
	KUNIT_CASE(ipng_cm_test_admit_free),
	KUNIT_CASE(ipng_cm_test_admit_setup_cap),
	KUNIT_CASE(ipng_cm_test_admit_per_peer),
	KUNIT_CASE(ipng_cm_test_admit_own_ring),
	KUNIT_CASE(ipng_cm_test_flood_bounded),
	KUNIT_CASE(ipng_cm_test_flood_fresh_gids),
	KUNIT_CASE(ipng_cm_test_marker_holds_peer),
	KUNIT_CASE(ipng_cm_test_in_setup),
	KUNIT_CASE(ipng_cm_test_setup_left_once),
	KUNIT_CASE(ipng_cm_test_marker_cap),
	KUNIT_CASE(ipng_cm_test_marker_expiry),
	KUNIT_CASE(ipng_cm_test_reap_idle),
	KUNIT_CASE(ipng_cm_test_queue_bounds),
	KUNIT_CASE(ipng_cm_test_queue_fill),
	KUNIT_CASE(ipng_cm_test_own_ring_max),
	KUNIT_CASE(ipng_cm_test_param_ranges),
	{}
};

struct kunit_suite ipng_cm_caps_suite = {
	.name		= "ipoib_ng_cm_caps",
	.test_cases	= ipng_cm_caps_cases,
};
