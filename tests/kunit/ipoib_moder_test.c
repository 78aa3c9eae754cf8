// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for ipoib_moder.c: the ethtool -C checks and conversions,
 * the software hold-off arithmetic, and a channel's moderation without CQs
 * (software hold-off timer, adaptive moderation through lib/dim) on a NAPI
 * context that is disabled, so that nothing is ever polled; and the
 * hold-off decision driving a modelled channel on a clock of the test's
 * own, where the polls per completion are counted.
 */
#include <linux/delay.h>
#include <linux/dim.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/netlink.h>
#include <linux/workqueue.h>

#include "../../ipoib_moder.h"
#include "ipoib_test.h"

#define MS	NSEC_PER_MSEC

static void ipng_test_coal_check_accepts(struct kunit *test)
{
	struct netlink_ext_ack extack = {};
	struct ethtool_coalesce ec = {};

	KUNIT_EXPECT_EQ(test, ipng_coal_check(&ec, &extack), 0);
	ec.rx_coalesce_usecs = IPNG_COAL_USECS_MAX;
	ec.tx_coalesce_usecs = IPNG_COAL_USECS_MAX;
	ec.rx_max_coalesced_frames = IPNG_COAL_FRAMES_MAX;
	ec.tx_max_coalesced_frames = IPNG_COAL_FRAMES_MAX;
	ec.use_adaptive_rx_coalesce = 1;
	ec.use_adaptive_tx_coalesce = 1;
	KUNIT_EXPECT_EQ(test, ipng_coal_check(&ec, &extack), 0);
	KUNIT_EXPECT_NULL(test, extack._msg);
	/* No extack (ioctl path) is fine too. */
	KUNIT_EXPECT_EQ(test, ipng_coal_check(&ec, NULL), 0);
}

static void ipng_test_coal_check_rejects(struct kunit *test)
{
	static const struct {
		size_t off;
		u32 max;
	} fields[] = {
		{ offsetof(struct ethtool_coalesce, rx_coalesce_usecs),
		  IPNG_COAL_USECS_MAX },
		{ offsetof(struct ethtool_coalesce, tx_coalesce_usecs),
		  IPNG_COAL_USECS_MAX },
		{ offsetof(struct ethtool_coalesce, rx_max_coalesced_frames),
		  IPNG_COAL_FRAMES_MAX },
		{ offsetof(struct ethtool_coalesce, tx_max_coalesced_frames),
		  IPNG_COAL_FRAMES_MAX },
	};
	struct ethtool_coalesce ec, copy;
	int i;

	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		struct netlink_ext_ack extack = {};
		u32 *field;

		memset(&ec, 0, sizeof(ec));
		field = (u32 *)((u8 *)&ec + fields[i].off);
		*field = fields[i].max + 1;
		copy = ec;
		KUNIT_EXPECT_EQ_MSG(test, ipng_coal_check(&ec, &extack),
				    -EINVAL, "field %d", i);
		KUNIT_EXPECT_NOT_NULL_MSG(test, extack._msg, "field %d", i);
		/* Pure: the request is not touched. */
		KUNIT_EXPECT_EQ_MSG(test, memcmp(&ec, &copy, sizeof(ec)), 0,
				    "field %d", i);
		KUNIT_EXPECT_EQ_MSG(test, ipng_coal_check(&ec, NULL), -EINVAL,
				    "field %d", i);

		/* Far beyond the limit as well. */
		*field = U32_MAX;
		KUNIT_EXPECT_EQ_MSG(test, ipng_coal_check(&ec, NULL), -EINVAL,
				    "field %d", i);
	}
}

static void ipng_test_coal_round_trip(struct kunit *test)
{
	struct ethtool_coalesce ec = {
		.rx_coalesce_usecs = 17,
		.rx_max_coalesced_frames = 33,
		.tx_coalesce_usecs = 129,
		.tx_max_coalesced_frames = 4096,
		.use_adaptive_rx_coalesce = 1,
		.use_adaptive_tx_coalesce = 0,
		.rx_coalesce_usecs_irq = 5,	/* not ours: left alone */
	};
	struct ethtool_coalesce out = { .rx_coalesce_usecs_irq = 77 };
	struct ipng_coal c;

	memset(&c, 0xa5, sizeof(c));
	ipng_coal_from_ethtool(&c, &ec);
	KUNIT_EXPECT_EQ(test, c.rx_usecs, 17);
	KUNIT_EXPECT_EQ(test, c.rx_frames, 33);
	KUNIT_EXPECT_EQ(test, c.tx_usecs, 129);
	KUNIT_EXPECT_EQ(test, c.tx_frames, 4096);
	KUNIT_EXPECT_TRUE(test, c.adaptive_rx);
	KUNIT_EXPECT_FALSE(test, c.adaptive_tx);

	ipng_coal_to_ethtool(&c, &out);
	KUNIT_EXPECT_EQ(test, out.rx_coalesce_usecs, 17);
	KUNIT_EXPECT_EQ(test, out.rx_max_coalesced_frames, 33);
	KUNIT_EXPECT_EQ(test, out.tx_coalesce_usecs, 129);
	KUNIT_EXPECT_EQ(test, out.tx_max_coalesced_frames, 4096);
	KUNIT_EXPECT_EQ(test, out.use_adaptive_rx_coalesce, 1);
	KUNIT_EXPECT_EQ(test, out.use_adaptive_tx_coalesce, 0);
	KUNIT_EXPECT_EQ(test, out.rx_coalesce_usecs_irq, 77);

	/* The other way round for the adaptive flags. */
	ec.use_adaptive_rx_coalesce = 0;
	ec.use_adaptive_tx_coalesce = 1;
	ipng_coal_from_ethtool(&c, &ec);
	KUNIT_EXPECT_FALSE(test, c.adaptive_rx);
	KUNIT_EXPECT_TRUE(test, c.adaptive_tx);
	ipng_coal_to_ethtool(&c, &out);
	KUNIT_EXPECT_EQ(test, out.use_adaptive_rx_coalesce, 0);
	KUNIT_EXPECT_EQ(test, out.use_adaptive_tx_coalesce, 1);
}

static void ipng_test_holdoff_none(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(0, 0, 10, 1000), 0);
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(0, 64, 10, 1000), 0);
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 64, 0, 1000), 0);
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 0, 0, 0), 0);
}

static void ipng_test_holdoff_usecs_only(struct kunit *test)
{
	/* No frame limit: the full hold-off, whatever the rate. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 0, 1000, 10), 100000);
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(1, 0, 1, 1), 1000);
	/* Unknown rate: the full hold-off. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 8, 1000, 0), 100000);
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(IPNG_COAL_USECS_MAX, 1, 1,
						    0), 10000000);
}

static void ipng_test_holdoff_rate(struct kunit *test)
{
	/* 64 in 64 us: 16 pile up in 16 us, before the 100 us. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 16, 64, 64000), 16000);
	/* 2 in 1 ms: 16 would take 8 ms, the 100 us come first. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 16, 2, MS), 100000);
	/* Exactly at the hold-off. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 10, 10, 100000),
			100000);
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 10, 10, 99999), 99999);
	/* Rounded down: 3 * 1000000 / 7 = 428571.4 */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(1000, 3, 7, MS), 428571);
	/* A single frame at a high rate: the gap between two completions. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(50, 1, 100, 500000), 5000);
}

static void ipng_test_holdoff_floor(struct kunit *test)
{
	/* 1 frame at 10 per ns would be 0 ns: one microsecond instead. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 1, 1000, 100), 1000);
	/* 4 * 600 / 3 = 800 ns, below the floor. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 4, 3, 600), 1000);
	/* 4 * 900 / 3 = 1200 ns, above it. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(100, 4, 3, 900), 1200);
}

static void ipng_test_holdoff_huge(struct kunit *test)
{
	/* A long idle time before the poll: the full hold-off. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(IPNG_COAL_USECS_MAX,
						    IPNG_COAL_FRAMES_MAX, 1,
						    U64_MAX / 2), 10000000);
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(10000, 4096, U32_MAX,
						    U64_MAX), 10000000);
	/* frames * interval is 2^66: must not wrap to a short hold-off. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(10000, 4096, U32_MAX,
						    1ULL << 54), 10000000);
	/* 4096 * 2^40 / (2^32 - 1) = 1048576.0002 */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(10000, 4096, U32_MAX,
						    1ULL << 40), 1048576);
	/* Inputs beyond the ethtool limits: frames * interval ~ 2^72. */
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(U32_MAX, U32_MAX, U32_MAX,
						    1000000000000ULL),
			1000000000000ULL);
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(U32_MAX, U32_MAX, 1,
						    U64_MAX),
			(u64)U32_MAX * 1000);
	KUNIT_EXPECT_EQ(test, ipng_moder_holdoff_ns(U32_MAX, 0, U32_MAX,
						    U64_MAX),
			(u64)U32_MAX * 1000);
}

/*
 * A NAPI context as napi_disable() leaves it: napi_schedule() does nothing,
 * so a hold-off timer that fires cannot poll this one, which was never
 * added to a device.
 */
static struct napi_struct *ipng_test_napi(struct kunit *test)
{
	struct napi_struct *napi;

	napi = kunit_kzalloc(test, sizeof(*napi), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, napi);
	napi->state = NAPIF_STATE_SCHED | NAPIF_STATE_DISABLE;
	return napi;
}

static struct ipng_moder *ipng_test_moder(struct kunit *test)
{
	struct ipng_moder *m;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	return m;
}

static void ipng_test_moder_software(struct kunit *test)
{
	struct napi_struct *napi = ipng_test_napi(test);
	struct ipng_moder *m = ipng_test_moder(test);
	struct ib_cq *none[IPNG_MODER_CQS] = {};
	struct ipng_coal c = {
		.rx_usecs = IPNG_COAL_USECS_MAX,
		.tx_usecs = 0,
		.tx_frames = 5,
	};
	u64 before, after, expires;

	ipng_moder_init(m, napi, none, none, &c);
	KUNIT_EXPECT_FALSE(test, m->hw);
	KUNIT_EXPECT_PTR_EQ(test, m->napi, napi);
	KUNIT_EXPECT_EQ(test, m->cur.rx_usecs, IPNG_COAL_USECS_MAX);
	KUNIT_EXPECT_EQ(test, m->cur.rx_frames, 0);
	KUNIT_EXPECT_EQ(test, m->cur.tx_usecs, 0);
	KUNIT_EXPECT_EQ(test, m->cur.tx_frames, 5);
	KUNIT_EXPECT_FALSE(test, m->cur.adaptive_rx);
	KUNIT_EXPECT_FALSE(test, m->cur.adaptive_tx);
	KUNIT_EXPECT_EQ(test, m->set.rx_usecs, IPNG_COAL_USECS_MAX);
	KUNIT_EXPECT_EQ(test, m->set.tx_frames, 5);

	/* Nothing found, or send work without a send hold-off: arm now. */
	KUNIT_EXPECT_FALSE(test, ipng_moder_hold(m, 0, 0));
	KUNIT_EXPECT_FALSE(test, ipng_moder_hold(m, 0, 7));
	KUNIT_EXPECT_EQ(test, m->holdoffs, 0);
	KUNIT_EXPECT_FALSE(test, hrtimer_active(&m->timer));

	/* Receive work: the full 10 ms, as no frame limit is set. */
	before = ktime_get_ns();
	KUNIT_EXPECT_TRUE(test, ipng_moder_hold(m, 3, 7));
	after = ktime_get_ns();
	KUNIT_EXPECT_EQ(test, m->holdoffs, 1);
	expires = ktime_to_ns(hrtimer_get_expires(&m->timer));
	KUNIT_EXPECT_GE(test, expires, before + 10 * MS);
	KUNIT_EXPECT_LE(test, expires, after + 10 * MS + hrtimer_resolution);

	/* A frame limit at the rate just seen shortens the next one. */
	c.rx_frames = 1;
	ipng_moder_set(m, &c);
	KUNIT_EXPECT_EQ(test, m->cur.rx_frames, 1);
	KUNIT_EXPECT_TRUE(test, ipng_moder_hold(m, 1000, 0));
	after = ktime_get_ns();
	KUNIT_EXPECT_EQ(test, m->holdoffs, 2);
	expires = ktime_to_ns(hrtimer_get_expires(&m->timer));
	KUNIT_EXPECT_LT(test, expires, after + 5 * MS);

	/* Send settings apply when only send work was found. */
	c.tx_usecs = 20;
	ipng_moder_set(m, &c);
	before = ktime_get_ns();
	KUNIT_EXPECT_TRUE(test, ipng_moder_hold(m, 0, 1));
	after = ktime_get_ns();
	KUNIT_EXPECT_EQ(test, m->holdoffs, 3);
	expires = ktime_to_ns(hrtimer_get_expires(&m->timer));
	KUNIT_EXPECT_GE(test, expires, before + 1000);
	KUNIT_EXPECT_LE(test, expires, after + 20000 + hrtimer_resolution);

	/* No receive hold-off: receive work arms at once. */
	c.rx_usecs = 0;
	ipng_moder_set(m, &c);
	KUNIT_EXPECT_FALSE(test, ipng_moder_hold(m, 9, 0));
	KUNIT_EXPECT_EQ(test, m->holdoffs, 3);

	ipng_moder_stop(m);
	KUNIT_EXPECT_FALSE(test, hrtimer_active(&m->timer));
}

/*
 * One channel's NAPI on a clock of the test's own, with the driver's
 * hold-off decision (ipng_moder_next()): receive completions arrive every
 * @gap ns; while the CQ is armed the first one starts a poll at once; a
 * poll takes every completion that has arrived, costs
 * IPNG_SIM_POLL_NS + IPNG_SIM_PKT_NS per completion, and is followed by
 * the hold-off, at whose end waiting completions are polled at once.
 */
#define IPNG_SIM_POLL_NS	2000ULL
#define IPNG_SIM_PKT_NS		1000ULL

struct ipng_sim {
	u32 polls;
	u64 max_wait_ns;	/* longest time a completion waited */
};

static struct ipng_sim ipng_sim_run(struct ipng_moder *m, u64 gap, u32 n)
{
	struct ipng_sim r = {};
	u64 t = 0, wait;
	u32 next = 0, found;

	m->last_ns = 0;
	while (next < n) {
		/* Armed and idle: the next completion's event polls. */
		t = max(t, next * gap);
		found = min_t(u64, n, div64_u64(t, gap) + 1) - next;
		wait = t - next * gap;
		r.max_wait_ns = max(r.max_wait_ns, wait);
		next += found;
		r.polls++;
		t += IPNG_SIM_POLL_NS + found * IPNG_SIM_PKT_NS;
		t += ipng_moder_next(m, found, 0, t);
	}
	return r;
}

/*
 * Completions every 20 us: without a hold-off each gets a poll of its
 * own; rx-usecs 100 polls about one in five times, and no completion
 * waits much longer than the hold-off; rx-frames 2 ends hold-offs early
 * (in between). Completions every 500 us: a hold-off of 100 us cannot
 * merge them, and as it ends before the next arrives it costs no wait.
 */
static void ipng_test_moder_fewer_polls(struct kunit *test)
{
	struct ipng_moder *m = ipng_test_moder(test);
	struct ipng_sim off, on, frames, sparse;
	const u32 n = 1000;

	off = ipng_sim_run(m, 20000, n);
	KUNIT_EXPECT_EQ(test, off.polls, n);
	KUNIT_EXPECT_EQ(test, off.max_wait_ns, 0);

	m->cur.rx_usecs = 100;
	on = ipng_sim_run(m, 20000, n);
	KUNIT_EXPECT_LE(test, on.polls, n / 4);
	KUNIT_EXPECT_GE(test, on.polls, n / 6);
	KUNIT_EXPECT_LE(test, on.max_wait_ns, 100000 + IPNG_SIM_POLL_NS +
			6 * IPNG_SIM_PKT_NS);

	m->cur.rx_frames = 2;
	frames = ipng_sim_run(m, 20000, n);
	KUNIT_EXPECT_LT(test, frames.polls, off.polls);
	KUNIT_EXPECT_GT(test, frames.polls, on.polls);
	KUNIT_EXPECT_LT(test, frames.max_wait_ns, on.max_wait_ns);

	m->cur.rx_frames = 0;
	sparse = ipng_sim_run(m, 500000, n);
	KUNIT_EXPECT_EQ(test, sparse.polls, n);
	KUNIT_EXPECT_EQ(test, sparse.max_wait_ns, 0);
	kunit_info(test, "polls of %u completions 20 us apart: %u at rx-usecs 0, %u at 100, %u at 100 with rx-frames 2\n",
		   n, off.polls, on.polls, frames.polls);
}

/* Channel counters after poll @i: one 1500-byte packet per poll. */
static void ipng_test_poll(struct ipng_moder *m, u64 i)
{
	ipng_moder_sample(m, i, i * 1500, 2 * i, i * 3000);
}

static void ipng_test_moder_adaptive(struct kunit *test)
{
	struct napi_struct *napi = ipng_test_napi(test);
	struct ipng_moder *m = ipng_test_moder(test);
	struct ipng_coal c = {
		.rx_usecs = 3,
		.rx_frames = 4,
		.tx_usecs = 30,
		.tx_frames = 40,
		.adaptive_rx = true,
	};
	struct dim_cq_moder def, p;
	u64 i;

	def = net_dim_get_def_rx_moderation(DIM_CQ_PERIOD_MODE_START_FROM_EQE);
	ipng_moder_init(m, napi, NULL, NULL, &c);
	KUNIT_EXPECT_FALSE(test, m->hw);
	KUNIT_EXPECT_TRUE(test, m->cur.adaptive_rx);
	KUNIT_EXPECT_FALSE(test, m->cur.adaptive_tx);
	KUNIT_EXPECT_EQ(test, m->cur.rx_usecs, def.usec);
	KUNIT_EXPECT_EQ(test, m->cur.rx_frames, def.pkts);
	KUNIT_EXPECT_EQ(test, m->cur.tx_usecs, 30);
	KUNIT_EXPECT_EQ(test, m->cur.tx_frames, 40);
	KUNIT_EXPECT_EQ(test, m->set.rx_usecs, 3);

	/*
	 * The first poll starts a measurement, DIM_NEVENTS polls later DIM
	 * decides: traffic where there was none is better, so it steps
	 * right from profile 0 and its work applies profile 1. The values
	 * in effect are cleared first to see that the work writes them.
	 */
	for (i = 1; i <= DIM_NEVENTS; i++)
		ipng_test_poll(m, i);
	KUNIT_EXPECT_EQ(test, m->events, DIM_NEVENTS);
	KUNIT_EXPECT_EQ(test, m->rx_dim.state, DIM_MEASURE_IN_PROGRESS);
	KUNIT_EXPECT_EQ(test, m->rx_dim.start_sample.event_ctr, 1);
	KUNIT_EXPECT_EQ(test, m->rx_dim.start_sample.pkt_ctr, 1);
	WRITE_ONCE(m->cur.rx_usecs, 0);
	WRITE_ONCE(m->cur.rx_frames, 0);
	usleep_range(100, 200);		/* DIM needs time to have passed */
	ipng_test_poll(m, DIM_NEVENTS + 1);
	flush_work(&m->rx_dim.work);
	p = net_dim_get_rx_moderation(DIM_CQ_PERIOD_MODE_START_FROM_EQE, 1);
	KUNIT_EXPECT_EQ(test, m->rx_dim.profile_ix, 1);
	KUNIT_EXPECT_EQ(test, m->rx_dim.state, DIM_START_MEASURE);
	KUNIT_EXPECT_EQ(test, m->cur.rx_usecs, p.usec);
	KUNIT_EXPECT_EQ(test, m->cur.rx_frames, p.pkts);
	/* The fixed send side was never sampled nor changed. */
	KUNIT_EXPECT_EQ(test, m->tx_dim.start_sample.event_ctr, 0);
	KUNIT_EXPECT_EQ(test, m->cur.tx_usecs, 30);

	/* Fixed receive settings again: DIM stops, they take effect. */
	c.adaptive_rx = false;
	c.adaptive_tx = true;
	ipng_moder_set(m, &c);
	KUNIT_EXPECT_FALSE(test, m->cur.adaptive_rx);
	KUNIT_EXPECT_TRUE(test, m->cur.adaptive_tx);
	KUNIT_EXPECT_EQ(test, m->cur.rx_usecs, 3);
	KUNIT_EXPECT_EQ(test, m->cur.rx_frames, 4);
	def = net_dim_get_def_tx_moderation(DIM_CQ_PERIOD_MODE_START_FROM_EQE);
	KUNIT_EXPECT_EQ(test, m->cur.tx_usecs, def.usec);
	KUNIT_EXPECT_EQ(test, m->cur.tx_frames, def.pkts);
	/* Receive would start a measurement here if it were sampled. */
	ipng_test_poll(m, DIM_NEVENTS + 2);
	KUNIT_EXPECT_EQ(test, m->rx_dim.start_sample.event_ctr, 1);
	KUNIT_EXPECT_EQ(test, m->tx_dim.start_sample.event_ctr,
			DIM_NEVENTS + 2);
	KUNIT_EXPECT_EQ(test, m->tx_dim.start_sample.pkt_ctr,
			2 * (DIM_NEVENTS + 2));

	/* Adaptive again: a fresh start from the default profile. */
	c.adaptive_rx = true;
	ipng_moder_set(m, &c);
	def = net_dim_get_def_rx_moderation(DIM_CQ_PERIOD_MODE_START_FROM_EQE);
	KUNIT_EXPECT_EQ(test, m->cur.rx_usecs, def.usec);
	KUNIT_EXPECT_EQ(test, m->rx_dim.profile_ix, 0);
	KUNIT_EXPECT_EQ(test, m->rx_dim.start_sample.event_ctr, 0);
	KUNIT_EXPECT_EQ(test, m->tx_dim.start_sample.event_ctr, 0);

	ipng_moder_stop(m);
	KUNIT_EXPECT_FALSE(test, work_pending(&m->rx_dim.work));
	KUNIT_EXPECT_FALSE(test, work_pending(&m->tx_dim.work));
}

static struct kunit_case ipng_moder_cases[] = {
	KUNIT_CASE(ipng_test_coal_check_accepts),
	KUNIT_CASE(ipng_test_coal_check_rejects),
	KUNIT_CASE(ipng_test_coal_round_trip),
	KUNIT_CASE(ipng_test_holdoff_none),
	KUNIT_CASE(ipng_test_holdoff_usecs_only),
	KUNIT_CASE(ipng_test_holdoff_rate),
	KUNIT_CASE(ipng_test_holdoff_floor),
	KUNIT_CASE(ipng_test_holdoff_huge),
	KUNIT_CASE(ipng_test_moder_software),
	KUNIT_CASE(ipng_test_moder_fewer_polls),
	KUNIT_CASE(ipng_test_moder_adaptive),
	{}
};

struct kunit_suite ipng_moder_suite = {
	.name = "ipoib_ng_moder",
	.test_cases = ipng_moder_cases,
};
