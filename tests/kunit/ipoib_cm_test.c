// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the pure logic of connected mode: the RFC 4755 helpers
 * of ipoib_wire.h (service ID, REQ/REP private data), every transition of
 * the connection state machine in ipoib_cm_state.c, what each step
 * reports to tracing and the errno of each event. No device and no CM:
 * the functions are fed values and their results compared with what the
 * RFC and the state table say. The caps are ipoib_cm_caps_test.c's.
 */
#include <linux/stddef.h>

#include "../../ipoib_wire.h"
#include "../../ipoib_cm_state.h"
#include "ipoib_test.h"

/* RFC 4755 service ID: 0x1000000000000000 | QPN, 8 bytes big endian. */
static void ipng_cm_test_service_id(struct kunit *test)
{
	static const u8 want_48a[8] = { 0x10, 0, 0, 0, 0, 0x00, 0x04, 0x8a };
	static const u8 want_max[8] = { 0x10, 0, 0, 0, 0, 0xff, 0xff, 0xff };
	static const u8 want_zero[8] = { 0x10, 0, 0, 0, 0, 0, 0, 0 };
	__be64 sid;

	sid = ipng_cm_service_id(0x48a);
	IPNG_EXPECT_MEMEQ(test, &sid, want_48a, sizeof(want_48a));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(sid), 0x100000000000048aULL);

	sid = ipng_cm_service_id(0xffffff);
	IPNG_EXPECT_MEMEQ(test, &sid, want_max, sizeof(want_max));

	sid = ipng_cm_service_id(0);
	IPNG_EXPECT_MEMEQ(test, &sid, want_zero, sizeof(want_zero));
}

/* A QPN has 24 bits: anything above them must not reach the ID. */
static void ipng_cm_test_service_id_masks_qpn(struct kunit *test)
{
	static const u8 want[8] = { 0x10, 0, 0, 0, 0, 0x12, 0x34, 0x56 };
	__be64 sid;

	sid = ipng_cm_service_id(0xab123456);
	IPNG_EXPECT_MEMEQ(test, &sid, want, sizeof(want));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ipng_cm_service_id(0xff000000)),
			0x1000000000000000ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ipng_cm_service_id(0x01000001)),
			be64_to_cpu(ipng_cm_service_id(1)));
}

/* RFC 4755: 32-bit QPN then 32-bit receive size, 8 bytes, no padding. */
static void ipng_cm_test_pdata_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct ipng_cm_pdata), 8);
	KUNIT_EXPECT_EQ(test, offsetof(struct ipng_cm_pdata, qpn), 0);
	KUNIT_EXPECT_EQ(test, offsetof(struct ipng_cm_pdata, buf_len), 4);
	KUNIT_EXPECT_EQ(test, __alignof__(struct ipng_cm_pdata), 1);
	KUNIT_EXPECT_EQ(test, IPNG_CM_MTU, 65520);
	KUNIT_EXPECT_EQ(test, IPNG_CM_BUF_LEN, 65524);
}

static void ipng_cm_test_pdata_round_trip(struct kunit *test)
{
	struct ipng_cm_pdata pd;
	u32 qpn = 0, mtu = 0;

	memset(&pd, 0xaa, sizeof(pd));
	ipng_cm_pdata_build(&pd, 0x123456, IPNG_CM_BUF_LEN);
	KUNIT_ASSERT_EQ(test, ipng_cm_pdata_parse(&pd, sizeof(pd), &qpn, &mtu),
			0);
	KUNIT_EXPECT_EQ(test, qpn, 0x123456);
	KUNIT_EXPECT_EQ(test, mtu, 65520);

	ipng_cm_pdata_build(&pd, 0xffffff, 2048 + IPNG_HLEN);
	KUNIT_ASSERT_EQ(test, ipng_cm_pdata_parse(&pd, sizeof(pd), &qpn, &mtu),
			0);
	KUNIT_EXPECT_EQ(test, qpn, 0xffffff);
	KUNIT_EXPECT_EQ(test, mtu, 2048);
}

/* The bytes on the wire, written from RFC 4755 by hand. */
static void ipng_cm_test_pdata_bytes(struct kunit *test)
{
	static const u8 want[8] = {
		0x00, 0xab, 0xcd, 0xef,		/* QPN */
		0x00, 0x00, 0xff, 0xf4,		/* receive size 65524 */
	};
	static const u8 want_small[8] = {
		0x00, 0x00, 0x04, 0x8a,
		0x00, 0x00, 0x08, 0x04,		/* 2052 */
	};
	struct ipng_cm_pdata pd;

	memset(&pd, 0xaa, sizeof(pd));
	ipng_cm_pdata_build(&pd, 0xabcdef, 65524);
	IPNG_EXPECT_MEMEQ(test, &pd, want, sizeof(want));

	/* The top byte of the QPN field is reserved: sent as zero. */
	memset(&pd, 0xaa, sizeof(pd));
	ipng_cm_pdata_build(&pd, 0xff00048a, 2052);
	IPNG_EXPECT_MEMEQ(test, &pd, want_small, sizeof(want_small));
}

/* A peer that sets the reserved byte of its QPN field. */
static void ipng_cm_test_pdata_parse_reserved(struct kunit *test)
{
	static const u8 data[8] = { 0xff, 0x12, 0x34, 0x56,
				    0x00, 0x00, 0x08, 0x04 };
	u32 qpn = 0, mtu = 0;

	KUNIT_ASSERT_EQ(test, ipng_cm_pdata_parse(data, sizeof(data), &qpn,
						  &mtu), 0);
	KUNIT_EXPECT_EQ(test, qpn, 0x123456);
	KUNIT_EXPECT_EQ(test, mtu, 2048);
}

/*
 * REQ private data is 92 bytes and REP 196 on the wire: the CM hands all
 * of it over, and only the first 8 bytes count.
 */
static void ipng_cm_test_pdata_parse_long(struct kunit *test)
{
	u8 data[92];
	u32 qpn = 0, mtu = 0;

	memset(data, 0x5a, sizeof(data));
	ipng_cm_pdata_build((struct ipng_cm_pdata *)data, 0x10203, 4096);
	KUNIT_ASSERT_EQ(test, ipng_cm_pdata_parse(data, sizeof(data), &qpn,
						  &mtu), 0);
	KUNIT_EXPECT_EQ(test, qpn, 0x10203);
	KUNIT_EXPECT_EQ(test, mtu, 4092);
}

static void ipng_cm_test_pdata_parse_short(struct kunit *test)
{
	static const u8 data[8] = { 0x00, 0x00, 0x04, 0x8a,
				    0x00, 0x00, 0xff, 0xf4 };
	u32 qpn = 0x5a5a, mtu = 0xa5a5;
	unsigned int len;

	for (len = 0; len < sizeof(data); len++)
		KUNIT_EXPECT_EQ_MSG(test,
				    ipng_cm_pdata_parse(data, len, &qpn, &mtu),
				    -EINVAL, "length %u", len);
	KUNIT_EXPECT_EQ(test, ipng_cm_pdata_parse(NULL, sizeof(data), &qpn,
						  &mtu), -EINVAL);
	KUNIT_EXPECT_EQ(test, ipng_cm_pdata_parse(NULL, 0, &qpn, &mtu),
			-EINVAL);
	/* A refused message leaves the results alone. */
	KUNIT_EXPECT_EQ(test, qpn, 0x5a5a);
	KUNIT_EXPECT_EQ(test, mtu, 0xa5a5);
	/* The same bytes with their full length are fine. */
	KUNIT_EXPECT_EQ(test, ipng_cm_pdata_parse(data, sizeof(data), &qpn,
						  &mtu), 0);
	KUNIT_EXPECT_EQ(test, qpn, 0x48a);
}

/* Parse the private data of a peer that advertises @buf_len. */
static int parse_buf_len(u32 buf_len, u32 *mtu)
{
	struct ipng_cm_pdata pd;
	u32 qpn;

	ipng_cm_pdata_build(&pd, 0x48a, buf_len);
	return ipng_cm_pdata_parse(&pd, sizeof(pd), &qpn, mtu);
}

/* A buffer must hold the header and a minimal IPv4 packet (68 bytes). */
static void ipng_cm_test_pdata_parse_small_buffer(struct kunit *test)
{
	static const u32 bad[] = { 0, 1, IPNG_HLEN, 67, 68, 4 + 67 };
	u32 mtu = 0x1234;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, parse_buf_len(bad[i], &mtu), -EINVAL,
				    "buffer of %u bytes", bad[i]);
	KUNIT_EXPECT_EQ(test, mtu, 0x1234);
	KUNIT_EXPECT_EQ(test, parse_buf_len(4 + 68, &mtu), 0);
	KUNIT_EXPECT_EQ(test, mtu, 68);
}

static void ipng_cm_test_pdata_parse_mtu(struct kunit *test)
{
	static const struct {
		u32 buf_len;
		u32 mtu;
	} cases[] = {
		{ 2048 + 4,	2048 },
		{ 4096,		4092 },
		{ 65523,	65519 },
		{ 65524,	65520 },
		{ 65525,	65520 },	/* capped from here on */
		{ 65536,	65520 },
		{ 1 << 20,	65520 },
		{ 0xffffffff,	65520 },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u32 mtu = 0;

		KUNIT_EXPECT_EQ_MSG(test, parse_buf_len(cases[i].buf_len, &mtu),
				    0, "buffer of %u bytes", cases[i].buf_len);
		KUNIT_EXPECT_EQ_MSG(test, mtu, cases[i].mtu,
				    "buffer of %u bytes", cases[i].buf_len);
	}
}

/* The state machine: what every event does in every state. */

#define A_RTU		IPNG_CM_ACT_SEND_RTU
#define A_FLUSH		IPNG_CM_ACT_FLUSH
#define A_DREQ		IPNG_CM_ACT_SEND_DREQ
#define A_DREP		IPNG_CM_ACT_SEND_DREP
#define A_RELEASE	IPNG_CM_ACT_RELEASE
/* An active connection that cannot be made: UD now, connect again later. */
#define A_GIVE_UP	(IPNG_CM_ACT_FALLBACK | IPNG_CM_ACT_RELEASE | \
			 IPNG_CM_ACT_RETRY_LATER)

/**
 * struct cm_step_want - expected result of one (state, event) pair
 * @next: the new state
 * @actions: the IPNG_CM_ACT_* bits asked for
 * @set: the entry was written (a forgotten one would read as IDLE, 0)
 */
struct cm_step_want {
	enum ipng_cm_state next;
	unsigned int actions;
	bool set;
};

#define WANT(state, act) \
	{ .next = IPNG_CM_##state, .actions = (act), .set = true }

static const struct cm_step_want
cm_table[IPNG_CM_NR_STATES][IPNG_CM_NR_EVENTS] = {
	[IPNG_CM_IDLE] = {
		[IPNG_CM_EV_REQ_SENT]		= WANT(REQ_SENT, 0),
		[IPNG_CM_EV_REP_SENT]		= WANT(REP_SENT, 0),
		[IPNG_CM_EV_REP]		= WANT(IDLE, 0),
		[IPNG_CM_EV_RTU]		= WANT(IDLE, 0),
		[IPNG_CM_EV_REJ]		= WANT(IDLE, 0),
		[IPNG_CM_EV_TIMEOUT]		= WANT(IDLE, 0),
		[IPNG_CM_EV_SETUP_ERROR]	= WANT(FAILED, A_GIVE_UP),
		[IPNG_CM_EV_DREQ]		= WANT(IDLE, 0),
		[IPNG_CM_EV_QP_ERROR]		= WANT(IDLE, 0),
		[IPNG_CM_EV_IDLE]		= WANT(CLOSING, A_RELEASE),
		[IPNG_CM_EV_CLOSE]		= WANT(CLOSING, A_RELEASE),
	},
	[IPNG_CM_REQ_SENT] = {
		[IPNG_CM_EV_REQ_SENT]		= WANT(REQ_SENT, 0),
		[IPNG_CM_EV_REP_SENT]		= WANT(REQ_SENT, 0),
		[IPNG_CM_EV_REP]		= WANT(LIVE, A_RTU | A_FLUSH),
		[IPNG_CM_EV_RTU]		= WANT(REQ_SENT, 0),
		[IPNG_CM_EV_REJ]		= WANT(FAILED, A_GIVE_UP),
		[IPNG_CM_EV_TIMEOUT]		= WANT(FAILED, A_GIVE_UP),
		[IPNG_CM_EV_SETUP_ERROR]	= WANT(FAILED, A_GIVE_UP),
		[IPNG_CM_EV_DREQ]		= WANT(FAILED, A_GIVE_UP),
		[IPNG_CM_EV_QP_ERROR]		= WANT(FAILED, A_GIVE_UP),
		[IPNG_CM_EV_IDLE]		= WANT(CLOSING, A_RELEASE),
		[IPNG_CM_EV_CLOSE]		= WANT(CLOSING, A_RELEASE),
	},
	[IPNG_CM_REP_SENT] = {
		[IPNG_CM_EV_REQ_SENT]		= WANT(REP_SENT, 0),
		[IPNG_CM_EV_REP_SENT]		= WANT(REP_SENT, 0),
		[IPNG_CM_EV_REP]		= WANT(REP_SENT, 0),
		[IPNG_CM_EV_RTU]		= WANT(LIVE, 0),
		[IPNG_CM_EV_REJ]		= WANT(CLOSING, A_RELEASE),
		[IPNG_CM_EV_TIMEOUT]		= WANT(CLOSING, A_RELEASE),
		[IPNG_CM_EV_SETUP_ERROR]	= WANT(CLOSING, A_RELEASE),
		[IPNG_CM_EV_DREQ]		= WANT(CLOSING, A_DREP | A_RELEASE),
		[IPNG_CM_EV_QP_ERROR]		= WANT(CLOSING, A_RELEASE),
		[IPNG_CM_EV_IDLE]		= WANT(CLOSING, A_RELEASE),
		[IPNG_CM_EV_CLOSE]		= WANT(CLOSING, A_RELEASE),
	},
	[IPNG_CM_LIVE] = {
		[IPNG_CM_EV_REQ_SENT]		= WANT(LIVE, 0),
		[IPNG_CM_EV_REP_SENT]		= WANT(LIVE, 0),
		[IPNG_CM_EV_REP]		= WANT(LIVE, 0),
		[IPNG_CM_EV_RTU]		= WANT(LIVE, 0),
		[IPNG_CM_EV_REJ]		= WANT(CLOSING, A_RELEASE),
		[IPNG_CM_EV_TIMEOUT]		= WANT(LIVE, 0),
		[IPNG_CM_EV_SETUP_ERROR]	= WANT(LIVE, 0),
		[IPNG_CM_EV_DREQ]		= WANT(CLOSING, A_DREP | A_RELEASE),
		[IPNG_CM_EV_QP_ERROR]		= WANT(CLOSING, A_DREQ | A_RELEASE),
		[IPNG_CM_EV_IDLE]		= WANT(CLOSING, A_DREQ | A_RELEASE),
		[IPNG_CM_EV_CLOSE]		= WANT(CLOSING, A_DREQ | A_RELEASE),
	},
	[IPNG_CM_CLOSING] = {
		[IPNG_CM_EV_REQ_SENT]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_REP_SENT]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_REP]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_RTU]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_REJ]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_TIMEOUT]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_SETUP_ERROR]	= WANT(CLOSING, 0),
		[IPNG_CM_EV_DREQ]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_QP_ERROR]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_IDLE]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_CLOSE]		= WANT(CLOSING, 0),
	},
	[IPNG_CM_FAILED] = {
		[IPNG_CM_EV_REQ_SENT]		= WANT(FAILED, 0),
		[IPNG_CM_EV_REP_SENT]		= WANT(FAILED, 0),
		[IPNG_CM_EV_REP]		= WANT(FAILED, 0),
		[IPNG_CM_EV_RTU]		= WANT(FAILED, 0),
		[IPNG_CM_EV_REJ]		= WANT(FAILED, 0),
		[IPNG_CM_EV_TIMEOUT]		= WANT(FAILED, 0),
		[IPNG_CM_EV_SETUP_ERROR]	= WANT(FAILED, 0),
		[IPNG_CM_EV_DREQ]		= WANT(FAILED, 0),
		[IPNG_CM_EV_QP_ERROR]		= WANT(FAILED, 0),
		[IPNG_CM_EV_IDLE]		= WANT(CLOSING, 0),
		[IPNG_CM_EV_CLOSE]		= WANT(CLOSING, 0),
	},
};

static const char * const cm_event_names[IPNG_CM_NR_EVENTS] = {
	[IPNG_CM_EV_REQ_SENT]		= "REQ_SENT",
	[IPNG_CM_EV_REP_SENT]		= "REP_SENT",
	[IPNG_CM_EV_REP]		= "REP",
	[IPNG_CM_EV_RTU]		= "RTU",
	[IPNG_CM_EV_REJ]		= "REJ",
	[IPNG_CM_EV_TIMEOUT]		= "TIMEOUT",
	[IPNG_CM_EV_SETUP_ERROR]	= "SETUP_ERROR",
	[IPNG_CM_EV_DREQ]		= "DREQ",
	[IPNG_CM_EV_QP_ERROR]		= "QP_ERROR",
	[IPNG_CM_EV_IDLE]		= "IDLE",
	[IPNG_CM_EV_CLOSE]		= "CLOSE",
};

/* One step; @actions starts as garbage, so a step must always set it. */
static enum ipng_cm_state step(enum ipng_cm_state state,
			       enum ipng_cm_event event, unsigned int *actions)
{
	*actions = 0xdead;
	return ipng_cm_step(state, event, actions);
}

/* Every event in @state against the table. */
static void check_state(struct kunit *test, enum ipng_cm_state state)
{
	enum ipng_cm_state next;
	enum ipng_cm_event ev;
	unsigned int actions;

	for (ev = 0; ev < IPNG_CM_NR_EVENTS; ev++) {
		const struct cm_step_want *want = &cm_table[state][ev];

		KUNIT_ASSERT_TRUE_MSG(test, want->set,
				      "no expectation for %s in %s",
				      cm_event_names[ev],
				      ipng_cm_state_name(state));
		next = step(state, ev, &actions);
		KUNIT_EXPECT_EQ_MSG(test, next, want->next,
				    "%s in %s: went to %s, want %s",
				    cm_event_names[ev],
				    ipng_cm_state_name(state),
				    ipng_cm_state_name(next),
				    ipng_cm_state_name(want->next));
		KUNIT_EXPECT_EQ_MSG(test, actions, want->actions,
				    "%s in %s: actions %#x, want %#x",
				    cm_event_names[ev],
				    ipng_cm_state_name(state), actions,
				    want->actions);
	}
}

/*
 * One case per state rather than a parameterised case: 6.1 keeps only the
 * last parameter's line in the debugfs results that the host parses.
 */
static void ipng_cm_test_table_idle(struct kunit *test)
{
	check_state(test, IPNG_CM_IDLE);
}

static void ipng_cm_test_table_req_sent(struct kunit *test)
{
	check_state(test, IPNG_CM_REQ_SENT);
}

static void ipng_cm_test_table_rep_sent(struct kunit *test)
{
	check_state(test, IPNG_CM_REP_SENT);
}

static void ipng_cm_test_table_live(struct kunit *test)
{
	check_state(test, IPNG_CM_LIVE);
}

static void ipng_cm_test_table_closing(struct kunit *test)
{
	check_state(test, IPNG_CM_CLOSING);
}

static void ipng_cm_test_table_failed(struct kunit *test)
{
	check_state(test, IPNG_CM_FAILED);
}

/* The table has an entry for every pair, and every event a name. */
static void ipng_cm_test_table_complete(struct kunit *test)
{
	int s, ev;

	for (s = 0; s < IPNG_CM_NR_STATES; s++)
		for (ev = 0; ev < IPNG_CM_NR_EVENTS; ev++)
			KUNIT_EXPECT_TRUE_MSG(test, cm_table[s][ev].set,
					      "state %d event %d", s, ev);
	for (ev = 0; ev < IPNG_CM_NR_EVENTS; ev++)
		KUNIT_EXPECT_NOT_NULL_MSG(test, cm_event_names[ev], "event %d",
					  ev);
}

/* Active side: REQ, REP, RTU; the queued packets go out on RC. */
static void ipng_cm_test_active_success(struct kunit *test)
{
	enum ipng_cm_state s = IPNG_CM_IDLE;
	unsigned int act;

	s = step(s, IPNG_CM_EV_REQ_SENT, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_REQ_SENT);
	KUNIT_EXPECT_EQ(test, act, 0);
	s = step(s, IPNG_CM_EV_REP, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_LIVE);
	KUNIT_EXPECT_EQ(test, act, A_RTU | A_FLUSH);
	/* A duplicate REP (our RTU was lost) changes nothing. */
	s = step(s, IPNG_CM_EV_REP, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_LIVE);
	KUNIT_EXPECT_EQ(test, act, 0);
}

/* Passive side: REQ accepted, REP sent, RTU (or first data) received. */
static void ipng_cm_test_passive_success(struct kunit *test)
{
	enum ipng_cm_state s = IPNG_CM_IDLE;
	unsigned int act;

	s = step(s, IPNG_CM_EV_REP_SENT, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_REP_SENT);
	KUNIT_EXPECT_EQ(test, act, 0);
	s = step(s, IPNG_CM_EV_RTU, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_LIVE);
	KUNIT_EXPECT_EQ(test, act, 0);
	/* The RTU after the first data: nothing more to do. */
	s = step(s, IPNG_CM_EV_RTU, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_LIVE);
	KUNIT_EXPECT_EQ(test, act, 0);
}

static void ipng_cm_test_active_reject(struct kunit *test)
{
	enum ipng_cm_state s;
	unsigned int act;

	s = step(IPNG_CM_IDLE, IPNG_CM_EV_REQ_SENT, &act);
	s = step(s, IPNG_CM_EV_REJ, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_FAILED);
	KUNIT_EXPECT_EQ(test, act, IPNG_CM_ACT_FALLBACK | IPNG_CM_ACT_RELEASE |
			IPNG_CM_ACT_RETRY_LATER);
	KUNIT_EXPECT_FALSE(test, act & (A_RTU | A_FLUSH | A_DREQ | A_DREP));
	/* A late REP after giving up is ignored. */
	s = step(s, IPNG_CM_EV_REP, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_FAILED);
	KUNIT_EXPECT_EQ(test, act, 0);
}

static void ipng_cm_test_timeout(struct kunit *test)
{
	enum ipng_cm_state s;
	unsigned int act;

	/* Active: no REP in time, fall back to UD and try again later. */
	s = step(IPNG_CM_REQ_SENT, IPNG_CM_EV_TIMEOUT, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_FAILED);
	KUNIT_EXPECT_EQ(test, act, A_GIVE_UP);
	/* Passive: no RTU in time, just release. */
	s = step(IPNG_CM_REP_SENT, IPNG_CM_EV_TIMEOUT, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_CLOSING);
	KUNIT_EXPECT_EQ(test, act, A_RELEASE);
	/* Live: a stray timeout does not tear the connection down. */
	s = step(IPNG_CM_LIVE, IPNG_CM_EV_TIMEOUT, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_LIVE);
	KUNIT_EXPECT_EQ(test, act, 0);
}

/* The peer disconnects a live connection: answer with a DREP. */
static void ipng_cm_test_dreq_live(struct kunit *test)
{
	enum ipng_cm_state s;
	unsigned int act;

	s = step(IPNG_CM_LIVE, IPNG_CM_EV_DREQ, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_CLOSING);
	KUNIT_EXPECT_EQ(test, act, A_DREP | A_RELEASE);
	KUNIT_EXPECT_FALSE(test, act & A_DREQ);
	/* A repeated DREQ while closing asks for nothing. */
	s = step(s, IPNG_CM_EV_DREQ, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_CLOSING);
	KUNIT_EXPECT_EQ(test, act, 0);
}

/* An idle live connection is reaped: we send the DREQ. */
static void ipng_cm_test_reap(struct kunit *test)
{
	enum ipng_cm_state s;
	unsigned int act;

	s = step(IPNG_CM_LIVE, IPNG_CM_EV_IDLE, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_CLOSING);
	KUNIT_EXPECT_EQ(test, act, A_DREQ | A_RELEASE);
	KUNIT_EXPECT_FALSE(test, act & A_DREP);
}

/* A failed connection has released already: closing it asks for nothing. */
static void ipng_cm_test_close_failed(struct kunit *test)
{
	enum ipng_cm_state s;
	unsigned int act;

	s = step(IPNG_CM_IDLE, IPNG_CM_EV_SETUP_ERROR, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_FAILED);
	KUNIT_EXPECT_EQ(test, act, A_GIVE_UP);
	s = step(s, IPNG_CM_EV_CLOSE, &act);
	KUNIT_EXPECT_EQ(test, s, IPNG_CM_CLOSING);
	KUNIT_EXPECT_EQ(test, act, 0);
}

/* Once closing, no event moves the connection or asks for anything. */
static void ipng_cm_test_closing_ignores(struct kunit *test)
{
	enum ipng_cm_state s = IPNG_CM_CLOSING;
	enum ipng_cm_event ev;
	unsigned int act;

	for (ev = 0; ev < IPNG_CM_NR_EVENTS; ev++) {
		s = step(s, ev, &act);
		KUNIT_EXPECT_EQ_MSG(test, s, IPNG_CM_CLOSING, "after %s",
				    cm_event_names[ev]);
		KUNIT_EXPECT_EQ_MSG(test, act, 0, "after %s",
				    cm_event_names[ev]);
	}
}

/* A corrupt state or event is left as it is and asks for nothing. */
static void ipng_cm_test_out_of_range(struct kunit *test)
{
	static const unsigned int bad_states[] = {
		IPNG_CM_NR_STATES, IPNG_CM_NR_STATES + 1, 0x7fffffff,
	};
	enum ipng_cm_state s;
	enum ipng_cm_event ev;
	unsigned int act;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad_states); i++) {
		for (ev = 0; ev < IPNG_CM_NR_EVENTS; ev++) {
			s = step(bad_states[i], ev, &act);
			KUNIT_EXPECT_EQ_MSG(test, (unsigned int)s, bad_states[i],
					    "%s in state %u",
					    cm_event_names[ev], bad_states[i]);
			KUNIT_EXPECT_EQ_MSG(test, act, 0, "%s in state %u",
					    cm_event_names[ev], bad_states[i]);
		}
	}
	for (i = 0; i < IPNG_CM_NR_STATES; i++) {
		s = step(i, IPNG_CM_NR_EVENTS, &act);
		KUNIT_EXPECT_EQ_MSG(test, s, i, "event %d in %s",
				    IPNG_CM_NR_EVENTS, ipng_cm_state_name(i));
		KUNIT_EXPECT_EQ_MSG(test, act, 0, "event %d in %s",
				    IPNG_CM_NR_EVENTS, ipng_cm_state_name(i));
	}
}

static void ipng_cm_test_state_names(struct kunit *test)
{
	const char *names[IPNG_CM_NR_STATES];
	int i, j;

	for (i = 0; i < IPNG_CM_NR_STATES; i++) {
		names[i] = ipng_cm_state_name(i);
		KUNIT_ASSERT_NOT_NULL(test, names[i]);
		KUNIT_EXPECT_GT_MSG(test, strlen(names[i]), 0, "state %d", i);
		KUNIT_EXPECT_STRNEQ_MSG(test, names[i], "invalid", "state %d",
					i);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_STRNEQ_MSG(test, names[i], names[j],
						"states %d and %d", j, i);
	}
	KUNIT_EXPECT_STREQ(test, ipng_cm_state_name(IPNG_CM_LIVE), "live");
	KUNIT_EXPECT_STREQ(test, ipng_cm_state_name(IPNG_CM_NR_STATES),
			   "invalid");
	KUNIT_EXPECT_STREQ(test, ipng_cm_state_name(0x7fffffff), "invalid");
	KUNIT_EXPECT_STREQ(test, ipng_cm_state_name((enum ipng_cm_state)-1),
			   "invalid");
}

static void ipng_cm_test_event_names(struct kunit *test)
{
	const char *names[IPNG_CM_NR_EVENTS];
	int i, j;

	for (i = 0; i < IPNG_CM_NR_EVENTS; i++) {
		names[i] = ipng_cm_event_name(i);
		KUNIT_ASSERT_NOT_NULL(test, names[i]);
		KUNIT_EXPECT_GT_MSG(test, strlen(names[i]), 0, "event %d", i);
		KUNIT_EXPECT_STRNEQ_MSG(test, names[i], "invalid", "event %d",
					i);
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_STRNEQ_MSG(test, names[i], names[j],
						"events %d and %d", j, i);
	}
	KUNIT_EXPECT_STREQ(test, ipng_cm_event_name(IPNG_CM_EV_DREQ), "dreq");
	KUNIT_EXPECT_STREQ(test, ipng_cm_event_name(IPNG_CM_EV_CLOSE), "close");
	KUNIT_EXPECT_STREQ(test, ipng_cm_event_name(IPNG_CM_NR_EVENTS),
			   "invalid");
	KUNIT_EXPECT_STREQ(test, ipng_cm_event_name((enum ipng_cm_event)-1),
			   "invalid");
}

/*
 * Over every state and event: each step into LIVE reports up, each into
 * FAILED a failure, a step that changes nothing or starts from FAILED
 * reports nothing, and only steps into CLOSING report a close.
 */
static void ipng_cm_test_report_all_steps(struct kunit *test)
{
	enum ipng_cm_report got;
	enum ipng_cm_state new;
	unsigned int act;
	int s, e, closed = 0;

	for (s = 0; s < IPNG_CM_NR_STATES; s++) {
		for (e = 0; e < IPNG_CM_NR_EVENTS; e++) {
			new = ipng_cm_step(s, e, &act);
			got = ipng_cm_report(s, new, e);
			if (new == s || s == IPNG_CM_FAILED)
				KUNIT_EXPECT_EQ_MSG(test, got,
						    IPNG_CM_REPORT_NONE,
						    "%s + %s",
						    ipng_cm_state_name(s),
						    ipng_cm_event_name(e));
			else if (new == IPNG_CM_LIVE)
				KUNIT_EXPECT_EQ_MSG(test, got,
						    IPNG_CM_REPORT_UP, "%s + %s",
						    ipng_cm_state_name(s),
						    ipng_cm_event_name(e));
			else if (new == IPNG_CM_FAILED)
				KUNIT_EXPECT_EQ_MSG(test, got,
						    IPNG_CM_REPORT_FAILED,
						    "%s + %s",
						    ipng_cm_state_name(s),
						    ipng_cm_event_name(e));
			if (got == IPNG_CM_REPORT_CLOSED) {
				KUNIT_EXPECT_EQ(test, new, IPNG_CM_CLOSING);
				closed++;
			}
		}
	}
	/* LIVE, REP_SENT, REQ_SENT and IDLE each close on CLOSE and IDLE. */
	KUNIT_EXPECT_GE(test, closed, 8);
}

/* The reports of whole lives, written out by hand. */
static void ipng_cm_test_report_cases(struct kunit *test)
{
	/* Active: REP makes it live; the interface closes it later. */
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_REQ_SENT, IPNG_CM_LIVE,
					     IPNG_CM_EV_REP),
			IPNG_CM_REPORT_UP);
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_LIVE, IPNG_CM_CLOSING,
					     IPNG_CM_EV_CLOSE),
			IPNG_CM_REPORT_CLOSED);
	/* Passive: RTU; the peer disconnects. */
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_REP_SENT, IPNG_CM_LIVE,
					     IPNG_CM_EV_RTU),
			IPNG_CM_REPORT_UP);
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_LIVE, IPNG_CM_CLOSING,
					     IPNG_CM_EV_DREQ),
			IPNG_CM_REPORT_CLOSED);
	/* Rejected REQ, unanswered REP: failures. */
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_REQ_SENT, IPNG_CM_FAILED,
					     IPNG_CM_EV_REJ),
			IPNG_CM_REPORT_FAILED);
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_REP_SENT, IPNG_CM_CLOSING,
					     IPNG_CM_EV_TIMEOUT),
			IPNG_CM_REPORT_FAILED);
	/* A live connection whose QP fails closes; it did not fail to be
	 * made.
	 */
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_LIVE, IPNG_CM_CLOSING,
					     IPNG_CM_EV_QP_ERROR),
			IPNG_CM_REPORT_CLOSED);
	/* The failed marker going away, and non-changes: nothing. */
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_FAILED, IPNG_CM_CLOSING,
					     IPNG_CM_EV_CLOSE),
			IPNG_CM_REPORT_NONE);
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_LIVE, IPNG_CM_LIVE,
					     IPNG_CM_EV_RTU),
			IPNG_CM_REPORT_NONE);
	KUNIT_EXPECT_EQ(test, ipng_cm_report(IPNG_CM_IDLE, IPNG_CM_REQ_SENT,
					     IPNG_CM_EV_REQ_SENT),
			IPNG_CM_REPORT_NONE);
}

static void ipng_cm_test_event_errno(struct kunit *test)
{
	int e;

	for (e = 0; e < IPNG_CM_NR_EVENTS; e++)
		KUNIT_EXPECT_LT_MSG(test, ipng_cm_event_errno(e), 0, "%s",
				    ipng_cm_event_name(e));
	KUNIT_EXPECT_EQ(test, ipng_cm_event_errno(IPNG_CM_EV_REJ),
			-ECONNREFUSED);
	KUNIT_EXPECT_EQ(test, ipng_cm_event_errno(IPNG_CM_EV_TIMEOUT),
			-ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, ipng_cm_event_errno(IPNG_CM_EV_DREQ),
			-ECONNRESET);
	KUNIT_EXPECT_EQ(test, ipng_cm_event_errno(IPNG_CM_EV_SETUP_ERROR),
			-EIO);
}

static struct kunit_case ipng_cm_cases[] = {
	KUNIT_CASE(ipng_cm_test_service_id),
	KUNIT_CASE(ipng_cm_test_service_id_masks_qpn),
	KUNIT_CASE(ipng_cm_test_pdata_layout),
	KUNIT_CASE(ipng_cm_test_pdata_round_trip),
	KUNIT_CASE(ipng_cm_test_pdata_bytes),
	KUNIT_CASE(ipng_cm_test_pdata_parse_reserved),
	KUNIT_CASE(ipng_cm_test_pdata_parse_long),
	KUNIT_CASE(ipng_cm_test_pdata_parse_short),
	KUNIT_CASE(ipng_cm_test_pdata_parse_small_buffer),
	KUNIT_CASE(ipng_cm_test_pdata_parse_mtu),
	KUNIT_CASE(ipng_cm_test_table_complete),
	KUNIT_CASE(ipng_cm_test_table_idle),
	KUNIT_CASE(ipng_cm_test_table_req_sent),
	KUNIT_CASE(ipng_cm_test_table_rep_sent),
	KUNIT_CASE(ipng_cm_test_table_live),
	KUNIT_CASE(ipng_cm_test_table_closing),
	KUNIT_CASE(ipng_cm_test_table_failed),
	KUNIT_CASE(ipng_cm_test_active_success),
	KUNIT_CASE(ipng_cm_test_passive_success),
	KUNIT_CASE(ipng_cm_test_active_reject),
	KUNIT_CASE(ipng_cm_test_timeout),
	KUNIT_CASE(ipng_cm_test_dreq_live),
	KUNIT_CASE(ipng_cm_test_reap),
	KUNIT_CASE(ipng_cm_test_close_failed),
	KUNIT_CASE(ipng_cm_test_closing_ignores),
	KUNIT_CASE(ipng_cm_test_out_of_range),
	KUNIT_CASE(ipng_cm_test_state_names),
	KUNIT_CASE(ipng_cm_test_event_names),
	KUNIT_CASE(ipng_cm_test_report_all_steps),
	KUNIT_CASE(ipng_cm_test_report_cases),
	KUNIT_CASE(ipng_cm_test_event_errno),
	{}
};

struct kunit_suite ipng_cm_suite = {
	.name		= "ipoib_ng_cm",
	.test_cases	= ipng_cm_cases,
};
