// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the multicast join state machine (ipoib_multicast.c),
 * driven through a fake fabric: joins that succeed or fail on demand,
 * record the order of calls and check that no membership is taken twice
 * or left without being held. Time is passed to each pass explicitly, so
 * backoff and expiry are tested without sleeping. A probe on the
 * ipoib_ng:mcast_state tracepoint records every state change; after each
 * test the changes of every group must form one unbroken chain.
 */
#include "../../ipoib.h"
#include "../../ipoib_trace.h"
#include "ipoib_test.h"

#define FAKE_MAX	16
#define TRACE_MAX	128

/**
 * struct mc_event - one ipoib_ng:mcast_state event
 * @mgid: the group
 * @join: membership held or asked for
 * @old: state before
 * @new: state after
 * @error: the group's last join result
 */
struct mc_event {
	union ib_gid mgid;
	enum ipng_mc_join join;
	enum ipng_mc_state old;
	enum ipng_mc_state new;
	int error;
};

/**
 * struct mc_trace - events recorded by the probe
 * @ev: the first TRACE_MAX events
 * @n: entries in @ev
 * @lost: events past TRACE_MAX
 */
struct mc_trace {
	struct mc_event ev[TRACE_MAX];
	int n;
	int lost;
};

struct fake_fabric;
typedef void (*fake_hook)(struct fake_fabric *ff, struct ipng_mcast_member *m);

/**
 * struct fake_fabric - records what the state machine asked for
 * @test: the running test
 * @mc: the state machine under test
 * @joins: join calls
 * @leaves: leave calls
 * @kicks: kick calls
 * @fail: the next @fail joins fail with -ETIMEDOUT
 * @held: memberships held now
 * @nheld: entries in @held
 * @order: MGIDs in the order joins were called
 * @norder: entries in @order
 * @last_join: membership asked for by the last join
 * @hook: called inside the next join, then cleared
 * @used: what the datapath says of its last send to mg[3] (0: never)
 * @forgot: ipng_mcast_forget() cleared the fabric data of every group
 * @trace: state changes seen by the tracepoint probe
 */
struct fake_fabric {
	struct kunit *test;
	struct ipng_mcast *mc;
	int joins;
	int leaves;
	int kicks;
	int fail;
	union ib_gid held[FAKE_MAX];
	int nheld;
	union ib_gid order[FAKE_MAX];
	int norder;
	enum ipng_mc_join last_join;
	fake_hook hook;
	unsigned long used;
	bool forgot;
	struct mc_trace trace;
};

static int fake_held_index(struct fake_fabric *ff, const union ib_gid *mgid)
{
	int i;

	for (i = 0; i < ff->nheld; i++)
		if (!memcmp(&ff->held[i], mgid, sizeof(*mgid)))
			return i;
	return -1;
}

static int fake_join(void *ctx, struct ipng_mcast_member *m)
{
	struct fake_fabric *ff = ctx;
	fake_hook hook = ff->hook;

	ff->joins++;
	ff->last_join = m->join;
	if (ff->norder < FAKE_MAX)
		ff->order[ff->norder++] = m->mgid;
	KUNIT_EXPECT_NE_MSG(ff->test, m->join, IPNG_MC_NONE, "join of nothing");
	KUNIT_EXPECT_LT_MSG(ff->test, fake_held_index(ff, &m->mgid), 0,
			    "%pI6 joined twice", m->mgid.raw);
	ff->hook = NULL;
	if (hook)
		hook(ff, m);
	if (ff->fail) {
		ff->fail--;
		return -ETIMEDOUT;
	}
	if (ff->nheld < FAKE_MAX)
		ff->held[ff->nheld++] = m->mgid;
	m->priv = ff;
	return 0;
}

static void fake_leave(void *ctx, struct ipng_mcast_member *m)
{
	struct fake_fabric *ff = ctx;
	int i = fake_held_index(ff, &m->mgid);

	ff->leaves++;
	KUNIT_EXPECT_GE_MSG(ff->test, i, 0, "%pI6 left but not held",
			    m->mgid.raw);
	KUNIT_EXPECT_PTR_EQ(ff->test, m->priv, ff->forgot ? NULL : (void *)ff);
	if (i >= 0)
		ff->held[i] = ff->held[--ff->nheld];
}

/* A recognisable address vector: DLID 0x1234. */
static int fake_ah_attr(void *ctx, struct ipng_mcast_member *m,
			struct rdma_ah_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(attr, 0x1234);
	return 0;
}

static void fake_kick(void *ctx)
{
	struct fake_fabric *ff = ctx;

	ff->kicks++;
}

/* MGIDs of the tests: [0] is the broadcast group. */
static union ib_gid mg[4];

static unsigned long fake_last_used(void *ctx, const union ib_gid *mgid)
{
	struct fake_fabric *ff = ctx;

	return memcmp(mgid, &mg[3], sizeof(*mgid)) ? 0 : ff->used;
}

static const struct ipng_mcast_ops fake_ops = {
	.join		= fake_join,
	.leave		= fake_leave,
	.ah_attr	= fake_ah_attr,
	.kick		= fake_kick,
	.last_used	= fake_last_used,
};

/* Probe of ipoib_ng:mcast_state; groups of real interfaces are skipped. */
static void mc_trace_probe(void *data, const struct net_device *ndev,
			   const union ib_gid *mgid, enum ipng_mc_join join,
			   enum ipng_mc_state old, enum ipng_mc_state new,
			   int error)
{
	struct mc_trace *t = data;
	struct mc_event *e;

	if (ndev)
		return;
	if (t->n >= TRACE_MAX) {
		t->lost++;
		return;
	}
	e = &t->ev[t->n++];
	e->mgid = *mgid;
	e->join = join;
	e->old = old;
	e->new = new;
	e->error = error;
}

/* The events of group @i, in order, into @out (at most @max). */
static int mc_events_of(struct fake_fabric *ff, int i, struct mc_event *out,
			int max)
{
	int j, n = 0;

	for (j = 0; j < ff->trace.n && n < max; j++)
		if (!memcmp(&ff->trace.ev[j].mgid, &mg[i], sizeof(mg[i])))
			out[n++] = ff->trace.ev[j];
	return n;
}

/*
 * Every event changes the state, and starts where the group's previous
 * event ended, or from idle for a group made anew after it was freed
 * (which happens only in idle or backoff). A group is born idle. Once
 * the state is freed no group is joined, joining or leaving.
 */
static void mc_trace_check(struct kunit *test, struct mc_trace *t)
{
	enum ipng_mc_state prev;
	int i, j;

	KUNIT_EXPECT_EQ(test, t->lost, 0);
	for (i = 0; i < t->n; i++) {
		const struct mc_event *e = &t->ev[i];

		prev = IPNG_MC_IDLE;
		for (j = i - 1; j >= 0; j--) {
			if (!memcmp(&t->ev[j].mgid, &e->mgid, sizeof(e->mgid))) {
				prev = t->ev[j].new;
				break;
			}
		}
		KUNIT_EXPECT_NE_MSG(test, e->old, e->new, "event %d", i);
		KUNIT_EXPECT_TRUE_MSG(test, e->old == prev ||
				      (e->old == IPNG_MC_IDLE &&
				       prev == IPNG_MC_BACKOFF),
				      "event %d of %pI6: from %u, last %u", i,
				      e->mgid.raw, e->old, prev);
		for (j = i + 1; j < t->n; j++)
			if (!memcmp(&t->ev[j].mgid, &e->mgid, sizeof(e->mgid)))
				break;
		if (j == t->n)
			KUNIT_EXPECT_TRUE_MSG(test, e->new == IPNG_MC_IDLE ||
					      e->new == IPNG_MC_BACKOFF,
					      "%pI6 ends in state %u",
					      e->mgid.raw, e->new);
	}
}

static int ipng_mc_test_init(struct kunit *test)
{
	struct fake_fabric *ff;
	int i;

	ff = kunit_kzalloc(test, sizeof(*ff), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ff);
	ff->test = test;
	KUNIT_ASSERT_EQ(test, register_trace_mcast_state(mc_trace_probe,
							 &ff->trace), 0);
	ff->mc = ipng_mcast_alloc(&fake_ops, ff);
	if (!ff->mc)
		unregister_trace_mcast_state(mc_trace_probe, &ff->trace);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ff->mc);
	ipng_mgid_broadcast(&mg[0], IPNG_SCOPE_LINK, 0xffff);
	for (i = 1; i < ARRAY_SIZE(mg); i++)
		ipng_mgid_ipv4(&mg[i], IPNG_SCOPE_LINK, 0xffff,
			       htonl(0xe0000100 + i));
	test->priv = ff;
	return 0;
}

/* Freeing leaves whatever is held: every test ends with nothing held. */
static void ipng_mc_test_exit(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;

	ipng_mcast_free(ff->mc);
	KUNIT_EXPECT_EQ(test, ff->nheld, 0);
	unregister_trace_mcast_state(mc_trace_probe, &ff->trace);
	tracepoint_synchronize_unregister();
	mc_trace_check(test, &ff->trace);
}

static struct ipng_mcast_info info_of(struct kunit *test,
				      struct fake_fabric *ff, int i)
{
	struct ipng_mcast_info info = {};

	KUNIT_EXPECT_EQ_MSG(test, ipng_mcast_group_info(ff->mc, &mg[i], &info),
			    0, "group %d unknown", i);
	return info;
}

static bool known(struct fake_fabric *ff, int i)
{
	struct ipng_mcast_info info;

	return !ipng_mcast_group_info(ff->mc, &mg[i], &info);
}

/* Up with the broadcast group and two more: three full joins. */
static void start_three(struct kunit *test, struct fake_fabric *ff,
			unsigned long now)
{
	ipng_mcast_set_running(ff->mc, true);
	KUNIT_ASSERT_EQ(test, ipng_mcast_set_wanted(ff->mc, mg, 3), 0);
	ipng_mcast_run(ff->mc, now);
}

static void ipng_mc_test_join_all(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies;
	int i;

	start_three(test, ff, now);
	KUNIT_EXPECT_EQ(test, ff->joins, 3);
	KUNIT_EXPECT_EQ(test, ff->nheld, 3);
	KUNIT_EXPECT_EQ(test, ff->last_join, IPNG_MC_FULL);
	IPNG_EXPECT_MEMEQ(test, &ff->order[0], &mg[0], sizeof(mg[0]));
	for (i = 0; i < 3; i++) {
		struct ipng_mcast_info info = info_of(test, ff, i);

		KUNIT_EXPECT_EQ(test, info.state, IPNG_MC_JOINED);
		KUNIT_EXPECT_EQ(test, info.join, IPNG_MC_FULL);
		KUNIT_EXPECT_EQ(test, info.broadcast, i == 0);
	}
	KUNIT_EXPECT_GT(test, ff->kicks, 0);
	/* Nothing changed: a second pass does nothing and wants no timer. */
	KUNIT_EXPECT_EQ(test, ipng_mcast_run(ff->mc, now),
			(unsigned long)MAX_JIFFY_OFFSET);
	KUNIT_EXPECT_EQ(test, ff->joins, 3);
	KUNIT_EXPECT_EQ(test, ff->leaves, 0);
}

static void ipng_mc_test_wait_for_broadcast(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies;

	ff->fail = 1;
	start_three(test, ff, now);
	/* Only the broadcast group was tried; it backs off for a second. */
	KUNIT_EXPECT_EQ(test, ff->joins, 1);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 0).state, IPNG_MC_BACKOFF);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 0).error, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 1).state, IPNG_MC_IDLE);
	KUNIT_EXPECT_EQ(test, ipng_mcast_run(ff->mc, now + HZ / 2),
			(unsigned long)(HZ / 2));
	KUNIT_EXPECT_EQ(test, ff->joins, 1);
	ipng_mcast_run(ff->mc, now + HZ);
	KUNIT_EXPECT_EQ(test, ff->joins, 4);
	KUNIT_EXPECT_EQ(test, ff->nheld, 3);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 0).backoff, 0UL);
}

/* The tracepoint tells each step of a failed join, its retry and a stop. */
static void ipng_mc_test_trace_states(struct kunit *test)
{
	static const struct {
		enum ipng_mc_join join;
		enum ipng_mc_state old, new;
		int error;
	} want[] = {
		{ IPNG_MC_FULL, IPNG_MC_IDLE, IPNG_MC_JOINING, 0 },
		{ IPNG_MC_NONE, IPNG_MC_JOINING, IPNG_MC_BACKOFF, -ETIMEDOUT },
		{ IPNG_MC_FULL, IPNG_MC_BACKOFF, IPNG_MC_JOINING, -ETIMEDOUT },
		{ IPNG_MC_FULL, IPNG_MC_JOINING, IPNG_MC_JOINED, 0 },
		{ IPNG_MC_FULL, IPNG_MC_JOINED, IPNG_MC_LEAVING, 0 },
		{ IPNG_MC_NONE, IPNG_MC_LEAVING, IPNG_MC_IDLE, 0 },
	};
	struct fake_fabric *ff = test->priv;
	struct mc_event got[ARRAY_SIZE(want) + 1];
	unsigned long now = jiffies;
	int i, n;

	ff->fail = 1;
	start_three(test, ff, now);
	ipng_mcast_run(ff->mc, now + HZ);
	KUNIT_ASSERT_EQ(test, ff->nheld, 3);
	ipng_mcast_set_running(ff->mc, false);
	ipng_mcast_run(ff->mc, now + HZ);
	KUNIT_ASSERT_EQ(test, ff->nheld, 0);

	n = mc_events_of(ff, 0, got, ARRAY_SIZE(got));
	KUNIT_ASSERT_EQ(test, n, ARRAY_SIZE(want));
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ_MSG(test, got[i].join, want[i].join, "%d", i);
		KUNIT_EXPECT_EQ_MSG(test, got[i].old, want[i].old, "%d", i);
		KUNIT_EXPECT_EQ_MSG(test, got[i].new, want[i].new, "%d", i);
		KUNIT_EXPECT_EQ_MSG(test, got[i].error, want[i].error, "%d",
				    i);
	}
	/* The others joined at the first try: four changes each. */
	KUNIT_EXPECT_EQ(test, mc_events_of(ff, 1, got, ARRAY_SIZE(got)), 4);
	KUNIT_EXPECT_EQ(test, mc_events_of(ff, 2, got, ARRAY_SIZE(got)), 4);
	KUNIT_EXPECT_EQ(test, mc_events_of(ff, 3, got, ARRAY_SIZE(got)), 0);
}

static void ipng_mc_test_backoff(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies, want = HZ;
	int i;

	ff->fail = 100;
	start_three(test, ff, now);
	for (i = 0; i < 10; i++) {
		struct ipng_mcast_info info = info_of(test, ff, 0);

		KUNIT_EXPECT_EQ_MSG(test, info.backoff, want, "failure %d", i);
		KUNIT_EXPECT_EQ(test, info.state, IPNG_MC_BACKOFF);
		now += info.backoff;
		KUNIT_EXPECT_EQ(test, ipng_mcast_run(ff->mc, now),
				min(want * 2, 64UL * HZ));
		want = min(want * 2, 64UL * HZ);
	}
	KUNIT_EXPECT_EQ(test, ff->joins, 11);
	KUNIT_EXPECT_EQ(test, ff->nheld, 0);
	/* Success resets the backoff. */
	ff->fail = 0;
	ipng_mcast_run(ff->mc, now + want);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 0).state, IPNG_MC_JOINED);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 0).backoff, 0UL);
	KUNIT_EXPECT_EQ(test, ff->nheld, 3);
}

static void ipng_mc_test_rejoin(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies;

	start_three(test, ff, now);
	ff->kicks = 0;
	KUNIT_EXPECT_EQ(test, ipng_mcast_rejoins(ff->mc), 0UL);
	ipng_mcast_rejoin(ff->mc);
	KUNIT_EXPECT_EQ(test, ff->kicks, 1);
	ipng_mcast_run(ff->mc, now);
	KUNIT_EXPECT_EQ(test, ipng_mcast_rejoins(ff->mc), 3UL);
	KUNIT_EXPECT_EQ(test, ff->leaves, 3);
	KUNIT_EXPECT_EQ(test, ff->joins, 6);
	KUNIT_EXPECT_EQ(test, ff->nheld, 3);
	/* The broadcast group is joined first again. */
	IPNG_EXPECT_MEMEQ(test, &ff->order[3], &mg[0], sizeof(mg[0]));
}

static void ipng_mc_test_leave_unwanted(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies;

	start_three(test, ff, now);
	ipng_mcast_set_wanted(ff->mc, mg, 2);
	ipng_mcast_run(ff->mc, now);
	KUNIT_EXPECT_EQ(test, ff->leaves, 1);
	KUNIT_EXPECT_EQ(test, ff->nheld, 2);
	KUNIT_EXPECT_FALSE(test, known(ff, 2));
	KUNIT_EXPECT_TRUE(test, known(ff, 1));
}

static void drop_group_2(struct fake_fabric *ff, struct ipng_mcast_member *m)
{
	ipng_mcast_set_wanted(ff->mc, mg, 2);
}

/* Group 2 stops being wanted while its join is in flight. */
static void ipng_mc_test_leave_during_join(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies;

	ipng_mcast_set_running(ff->mc, true);
	ipng_mcast_set_wanted(ff->mc, mg, 2);
	ipng_mcast_run(ff->mc, now);
	KUNIT_ASSERT_EQ(test, ff->nheld, 2);
	ff->hook = drop_group_2;
	ipng_mcast_set_wanted(ff->mc, mg, 3);
	ipng_mcast_run(ff->mc, now);
	KUNIT_EXPECT_EQ(test, ff->joins, 3);
	KUNIT_EXPECT_EQ(test, ff->leaves, 1);
	KUNIT_EXPECT_EQ(test, ff->nheld, 2);
	KUNIT_EXPECT_FALSE(test, known(ff, 2));
}

static void go_down(struct fake_fabric *ff, struct ipng_mcast_member *m)
{
	ipng_mcast_set_running(ff->mc, false);
}

/* The interface stops while the broadcast join is in flight. */
static void ipng_mc_test_down_during_join(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies;

	ff->hook = go_down;
	start_three(test, ff, now);
	KUNIT_EXPECT_EQ(test, ff->joins, 1);
	KUNIT_EXPECT_EQ(test, ff->leaves, 1);
	KUNIT_EXPECT_EQ(test, ff->nheld, 0);
	KUNIT_EXPECT_FALSE(test, known(ff, 0));
	KUNIT_EXPECT_FALSE(test, known(ff, 1));
}

static void ipng_mc_test_stop_leaves_all(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies;

	start_three(test, ff, now);
	ipng_mcast_set_running(ff->mc, false);
	KUNIT_EXPECT_EQ(test, ipng_mcast_run(ff->mc, now),
			(unsigned long)MAX_JIFFY_OFFSET);
	KUNIT_EXPECT_EQ(test, ff->leaves, 3);
	KUNIT_EXPECT_EQ(test, ff->nheld, 0);
	/* Up again: the wanted set is still there and joined again. */
	ipng_mcast_set_running(ff->mc, true);
	ipng_mcast_set_wanted(ff->mc, mg, 3);
	ipng_mcast_run(ff->mc, now);
	KUNIT_EXPECT_EQ(test, ff->nheld, 3);
	KUNIT_EXPECT_EQ(test, ff->joins, 6);
}

/*
 * What the fabric held on something that went away is forgotten, once:
 * the leaves that follow see no fabric data, and the groups still leave.
 */
static void ipng_mc_test_forget(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies;
	int other;

	start_three(test, ff, now);
	rtnl_lock();
	KUNIT_EXPECT_EQ(test, ipng_mcast_forget(ff->mc, &other), 0);
	KUNIT_EXPECT_EQ(test, ipng_mcast_forget(ff->mc, ff), 3);
	KUNIT_EXPECT_EQ(test, ipng_mcast_forget(ff->mc, ff), 0);
	rtnl_unlock();
	ff->forgot = true;
	ipng_mcast_set_running(ff->mc, false);
	ipng_mcast_run(ff->mc, now);
	KUNIT_EXPECT_EQ(test, ff->leaves, 3);
	KUNIT_EXPECT_EQ(test, ff->nheld, 0);
}

static void ipng_mc_test_sendonly(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies, next;
	struct rdma_ah_attr attr;

	KUNIT_EXPECT_EQ(test, ipng_mcast_sendonly(ff->mc, &mg[3], &attr),
			-ENETDOWN);
	ipng_mcast_set_sendonly_timeout(ff->mc, 5 * HZ);
	start_three(test, ff, now);
	ff->kicks = 0;
	KUNIT_EXPECT_EQ(test, ipng_mcast_sendonly(ff->mc, &mg[3], &attr),
			-EAGAIN);
	KUNIT_EXPECT_EQ(test, ff->kicks, 1);
	/* A full member group needs no send-only join. */
	KUNIT_EXPECT_EQ(test, ipng_mcast_sendonly(ff->mc, &mg[1], &attr), 0);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_dlid(&attr), 0x1234U);

	/* The next pass is due when the membership expires. */
	next = ipng_mcast_run(ff->mc, now);
	KUNIT_EXPECT_GE(test, next, 5UL * HZ);
	KUNIT_EXPECT_LE(test, next, jiffies - now + 5UL * HZ + 1);
	KUNIT_EXPECT_EQ(test, ff->joins, 4);
	KUNIT_EXPECT_EQ(test, ff->last_join, IPNG_MC_SENDONLY);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 3).join, IPNG_MC_SENDONLY);
	KUNIT_EXPECT_EQ(test, ipng_mcast_sendonly(ff->mc, &mg[3], &attr), 0);

	/* Unused for longer than the timeout: left and forgotten. */
	ipng_mcast_run(ff->mc, jiffies + 6 * HZ);
	KUNIT_EXPECT_EQ(test, ff->leaves, 1);
	KUNIT_EXPECT_FALSE(test, known(ff, 3));
	KUNIT_EXPECT_EQ(test, ff->nheld, 3);
}

/*
 * Packets that go out on a resolved path ask the state machine for
 * nothing: the membership must live on as long as the datapath says it
 * sends, and expire a timeout after the last send.
 */
static void ipng_mc_test_sendonly_kept_while_used(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	unsigned long now = jiffies;
	struct rdma_ah_attr attr;

	ipng_mcast_set_sendonly_timeout(ff->mc, 5 * HZ);
	start_three(test, ff, now);
	ipng_mcast_sendonly(ff->mc, &mg[3], &attr);
	ipng_mcast_run(ff->mc, now);
	KUNIT_ASSERT_EQ(test, info_of(test, ff, 3).join, IPNG_MC_SENDONLY);

	/* Still sending 4 s later: at 6 s the group is kept... */
	ff->used = now + 4 * HZ;
	ipng_mcast_run(ff->mc, now + 6 * HZ);
	KUNIT_EXPECT_EQ(test, ff->leaves, 0);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 3).join, IPNG_MC_SENDONLY);
	/* ... and the next pass is due when the last send expires. */
	KUNIT_EXPECT_EQ(test, ipng_mcast_run(ff->mc, now + 6 * HZ),
			3UL * HZ + 1);
	/* No send since then: left a timeout after the last one. */
	ipng_mcast_run(ff->mc, now + 10 * HZ);
	KUNIT_EXPECT_EQ(test, ff->leaves, 1);
	KUNIT_EXPECT_FALSE(test, known(ff, 3));
}

/* Sending first, then the netdev joins the same group for real. */
static void ipng_mc_test_sendonly_to_full(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	struct rdma_ah_attr attr;
	unsigned long now = jiffies;

	start_three(test, ff, now);
	ipng_mcast_sendonly(ff->mc, &mg[3], &attr);
	ipng_mcast_run(ff->mc, now);
	KUNIT_ASSERT_EQ(test, info_of(test, ff, 3).join, IPNG_MC_SENDONLY);
	ipng_mcast_set_wanted(ff->mc, mg, 4);
	ipng_mcast_run(ff->mc, now);
	KUNIT_EXPECT_EQ(test, ff->leaves, 1);
	KUNIT_EXPECT_EQ(test, ff->last_join, IPNG_MC_FULL);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 3).join, IPNG_MC_FULL);
	KUNIT_EXPECT_EQ(test, ff->nheld, 4);
}

/* A failed send-only join reports its error while it backs off. */
static void ipng_mc_test_sendonly_failure(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	struct rdma_ah_attr attr;
	unsigned long now = jiffies;

	start_three(test, ff, now);
	ipng_mcast_sendonly(ff->mc, &mg[3], &attr);
	ff->fail = 1;
	ipng_mcast_run(ff->mc, now);
	KUNIT_EXPECT_EQ(test, info_of(test, ff, 3).state, IPNG_MC_BACKOFF);
	KUNIT_EXPECT_EQ(test, ipng_mcast_sendonly(ff->mc, &mg[3], &attr),
			-ETIMEDOUT);
	ipng_mcast_run(ff->mc, now + HZ);
	KUNIT_EXPECT_EQ(test, ipng_mcast_sendonly(ff->mc, &mg[3], &attr), 0);
}

/* Freeing with groups held leaves them (device removal). */
static void ipng_mc_test_free_leaves(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;

	start_three(test, ff, jiffies);
	ipng_mcast_free(ff->mc);
	KUNIT_EXPECT_EQ(test, ff->leaves, 3);
	KUNIT_EXPECT_EQ(test, ff->nheld, 0);
	/* The exit hook frees again: give it an empty state. */
	ff->mc = ipng_mcast_alloc(&fake_ops, ff);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ff->mc);
}

/**
 * struct user_groups - what other clients of the port joined (umcast)
 * @g: their groups
 * @n: entries in @g
 * @asked: calls of user_has()
 */
struct user_groups {
	const union ib_gid *g[4];
	int n;
	int asked;
};

static bool user_has(void *ctx, const union ib_gid *mgid)
{
	struct user_groups *u = ctx;
	int i;

	u->asked++;
	for (i = 0; i < u->n; i++)
		if (!memcmp(u->g[i], mgid, sizeof(*mgid)))
			return true;
	return false;
}

/*
 * umcast: a group user space joined is left to it unless it is ours
 * already as a full member; the broadcast group is always ours; a
 * send-only membership of ours does not keep it.
 */
static void ipng_mc_test_leave_to_user(struct kunit *test)
{
	struct fake_fabric *ff = test->priv;
	struct user_groups u = { .g = { &mg[0], &mg[2], &mg[3] }, .n = 3 };
	struct rdma_ah_attr attr;
	union ib_gid gids[4];
	int n;

	start_three(test, ff, jiffies);
	ipng_mcast_sendonly(ff->mc, &mg[3], &attr);
	ipng_mcast_run(ff->mc, jiffies);
	KUNIT_ASSERT_EQ(test, info_of(test, ff, 3).join, IPNG_MC_SENDONLY);
	memcpy(gids, mg, sizeof(gids));
	n = ipng_mcast_leave_to_user(ff->mc, gids, 4, user_has, &u);
	KUNIT_ASSERT_EQ(test, n, 3);
	IPNG_EXPECT_MEMEQ(test, &gids[0], &mg[0], sizeof(mg[0]));
	IPNG_EXPECT_MEMEQ(test, &gids[1], &mg[1], sizeof(mg[1]));
	IPNG_EXPECT_MEMEQ(test, &gids[2], &mg[2], sizeof(mg[2]));
	/* The broadcast group and our full members are not even asked about. */
	KUNIT_EXPECT_EQ(test, u.asked, 1);

	/* User space left mg[3]: it is wanted like any other group. */
	u.n = 2;
	memcpy(gids, mg, sizeof(gids));
	KUNIT_EXPECT_EQ(test, ipng_mcast_leave_to_user(ff->mc, gids, 4,
						       user_has, &u), 4);
	IPNG_EXPECT_MEMEQ(test, &gids[3], &mg[3], sizeof(mg[3]));

	/* Ours as a full member, it stays ours when user space joins too. */
	ipng_mcast_set_wanted(ff->mc, mg, 4);
	ipng_mcast_run(ff->mc, jiffies);
	KUNIT_ASSERT_EQ(test, info_of(test, ff, 3).join, IPNG_MC_FULL);
	u.n = 3;
	u.asked = 0;
	KUNIT_EXPECT_EQ(test, ipng_mcast_leave_to_user(ff->mc, gids, 4,
						       user_has, &u), 4);
	KUNIT_EXPECT_EQ(test, u.asked, 0);
	/* Nothing wanted: nothing kept, nothing asked. */
	u.asked = 0;
	KUNIT_EXPECT_EQ(test, ipng_mcast_leave_to_user(ff->mc, gids, 0,
						       user_has, &u), 0);
	KUNIT_EXPECT_EQ(test, u.asked, 0);
}

static struct kunit_case ipng_mc_cases[] = {
	KUNIT_CASE(ipng_mc_test_join_all),
	KUNIT_CASE(ipng_mc_test_wait_for_broadcast),
	KUNIT_CASE(ipng_mc_test_trace_states),
	KUNIT_CASE(ipng_mc_test_backoff),
	KUNIT_CASE(ipng_mc_test_rejoin),
	KUNIT_CASE(ipng_mc_test_leave_unwanted),
	KUNIT_CASE(ipng_mc_test_leave_during_join),
	KUNIT_CASE(ipng_mc_test_down_during_join),
	KUNIT_CASE(ipng_mc_test_stop_leaves_all),
	KUNIT_CASE(ipng_mc_test_forget),
	KUNIT_CASE(ipng_mc_test_sendonly),
	KUNIT_CASE(ipng_mc_test_sendonly_kept_while_used),
	KUNIT_CASE(ipng_mc_test_sendonly_to_full),
	KUNIT_CASE(ipng_mc_test_sendonly_failure),
	KUNIT_CASE(ipng_mc_test_free_leaves),
	KUNIT_CASE(ipng_mc_test_leave_to_user),
	{}
};

struct kunit_suite ipng_mcast_suite = {
	.name		= "ipoib_ng_mcast",
	.init		= ipng_mc_test_init,
	.exit		= ipng_mc_test_exit,
	.test_cases	= ipng_mc_cases,
};
