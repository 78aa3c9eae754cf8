// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the pure decisions of the datagram datapath: which
 * receive slot a completion belongs to and which slots a refill visits
 * (ipoib_ud.c), which sends a send completion retires and that a
 * completion of an earlier start is ignored on both rings (ipoib_tx.c),
 * what transmit does with a packet for a path without an address handle,
 * dead paths included (ipoib_arp.c), and the bounds of the path_timeout
 * parameter, and how one NAPI poll shares its budget between the
 * datagram and the connected-mode receive queues (ipoib_chan.c).
 */
#include "../../ipoib.h"
#include "ipoib_test.h"

#define RING	8

static struct ipng_rx_ring *dp_ring(struct kunit *test)
{
	struct ipng_rx_ring *rx = kunit_kzalloc(test, sizeof(*rx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, rx);
	rx->slots = kunit_kcalloc(test, RING, sizeof(*rx->slots), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rx->slots);
	rx->size = RING;
	return rx;
}

/* The entry a completion for slot @i of @rx names in its current start. */
static struct ib_cqe *dp_cqe(struct ipng_rx_ring *rx, unsigned int i)
{
	return ipng_slot_cqe(&rx->slots[i], rx->gen);
}

/* What ipng_ud_refill() does once a buffer is posted into @slot. */
static void dp_post(struct ipng_rx_ring *rx, struct ipng_slot *slot)
{
	slot->posted = true;
	rx->posted++;
}

/*
 * Three of eight buffers posted (a partial fill), then each reposted as it
 * completes: every completion must name the slot it was posted from. A
 * ring indexed by a completion counter would take the fourth completion
 * for slot 3, which holds no buffer.
 */
static void ipng_dp_test_partial_fill(struct kunit *test)
{
	struct ipng_rx_ring *rx = dp_ring(test);
	struct ipng_slot *s;
	int round, i;

	for (i = 0; i < 3; i++)
		dp_post(rx, &rx->slots[i]);
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 3; i++) {
			s = ipng_rx_slot(rx, dp_cqe(rx, i));
			KUNIT_EXPECT_PTR_EQ(test, s, &rx->slots[i]);
			KUNIT_EXPECT_FALSE(test, rx->slots[i].posted);
			KUNIT_EXPECT_EQ(test, rx->posted, 2U);
			dp_post(rx, &rx->slots[i]);
		}
	}
	KUNIT_EXPECT_EQ(test, rx->posted, 3U);
}

/* Completions out of order (an SRQ-like device, a flush) still match. */
static void ipng_dp_test_any_order(struct kunit *test)
{
	static const int order[] = { 5, 0, 7, 2, 1, 6, 3, 4 };
	struct ipng_rx_ring *rx = dp_ring(test);
	int i;

	for (i = 0; i < RING; i++)
		dp_post(rx, &rx->slots[i]);
	for (i = 0; i < RING; i++)
		KUNIT_EXPECT_PTR_EQ(test,
				    ipng_rx_slot(rx, dp_cqe(rx, order[i])),
				    &rx->slots[order[i]]);
	KUNIT_EXPECT_EQ(test, rx->posted, 0U);
}

/* A completion for a slot that is not posted, or not in the ring. */
static void ipng_dp_test_unknown_completion(struct kunit *test)
{
	struct ipng_rx_ring *rx = dp_ring(test);
	struct ipng_rx_ring *other = dp_ring(test);

	dp_post(rx, &rx->slots[1]);
	KUNIT_EXPECT_NULL(test, ipng_rx_slot(rx, dp_cqe(rx, 0)));
	KUNIT_EXPECT_NULL(test, ipng_rx_slot(rx, dp_cqe(other, 1)));
	KUNIT_EXPECT_EQ(test, rx->posted, 1U);
	KUNIT_EXPECT_NOT_NULL(test, ipng_rx_slot(rx, dp_cqe(rx, 1)));
	/* Twice: the second is a completion nobody posted. */
	KUNIT_EXPECT_NULL(test, ipng_rx_slot(rx, dp_cqe(rx, 1)));
	KUNIT_EXPECT_EQ(test, rx->posted, 0U);
}

/*
 * A receive completion the device delivers after the QP was reset and the
 * ring started again names the entry of the earlier start: it must not
 * pass off the fresh, never written buffer now posted in that slot.
 */
static void ipng_dp_test_rx_stale_start(struct kunit *test)
{
	struct ipng_rx_ring *rx = dp_ring(test);
	struct ib_cqe *old0, *old1;

	dp_post(rx, &rx->slots[0]);
	dp_post(rx, &rx->slots[1]);
	old0 = dp_cqe(rx, 0);
	old1 = dp_cqe(rx, 1);
	/* The restart: ipng_ud_drain() emptied the slots, ipng_ud_fill(). */
	rx->slots[0].posted = false;
	rx->slots[1].posted = false;
	rx->posted = 0;
	rx->gen++;
	dp_post(rx, &rx->slots[0]);
	dp_post(rx, &rx->slots[1]);
	KUNIT_EXPECT_NULL(test, ipng_rx_slot(rx, old0));
	KUNIT_EXPECT_NULL(test, ipng_rx_slot(rx, old1));
	KUNIT_EXPECT_EQ(test, rx->posted, 2U);
	KUNIT_EXPECT_PTR_EQ(test, ipng_rx_slot(rx, dp_cqe(rx, 1)),
			    &rx->slots[1]);
	/* Two starts on, the parity is that of the first again. */
	rx->gen++;
	KUNIT_EXPECT_PTR_EQ(test, dp_cqe(rx, 0), old0);
}

/* A channel whose send ring has RING slots, none in flight. */
static struct ipng_chan *dp_tx_chan(struct kunit *test)
{
	struct ipng_chan *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->tx.slots = kunit_kcalloc(test, RING, sizeof(*c->tx.slots),
				    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->tx.slots);
	c->tx.size = RING;
	return c;
}

/* What ipng_ud_send_done() does with a completion: retire, move the tail. */
static u32 dp_tx_complete(struct ipng_chan *c, struct ib_cqe *cqe)
{
	u32 n = ipng_tx_retire(&c->tx, cqe);

	c->tx.tail += n;
	return n;
}

/* In order, each completion retires its send once; a repeat retires none. */
static void ipng_dp_test_tx_in_order(struct kunit *test)
{
	struct ipng_chan *c = dp_tx_chan(test);
	struct ib_cqe *cqe[RING + 2];
	int i;

	for (i = 0; i < RING + 2; i++) {
		/* Wraps: slot 0 and 1 are used twice. */
		cqe[i] = ipng_tx_claim(c, &c->tx.slots[c->tx.head % RING]);
		KUNIT_EXPECT_TRUE(test, c->tx.slots[i % RING].posted);
		KUNIT_EXPECT_EQ(test, dp_tx_complete(c, cqe[i]), 1U);
		KUNIT_EXPECT_FALSE(test, c->tx.slots[i % RING].posted);
		KUNIT_EXPECT_EQ(test, dp_tx_complete(c, cqe[i]), 0U);
	}
	KUNIT_EXPECT_EQ(test, c->tx.tail, (u32)RING + 2);
	KUNIT_EXPECT_EQ(test, c->tx.head, c->tx.tail);
}

/*
 * The use-after-free of a stall reset under a flood: a send completion of
 * the reset QP's earlier start arrived after the ring had started again
 * from slot 0, and was taken for the completion at the tail, freeing a
 * packet the device was still reading. It must retire nothing.
 */
static void ipng_dp_test_tx_stale_start(struct kunit *test)
{
	struct ipng_chan *c = dp_tx_chan(test);
	struct ib_cqe *old[4], *cqe;
	int i;

	for (i = 0; i < 4; i++)
		old[i] = ipng_tx_claim(c, &c->tx.slots[i]);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, dp_tx_complete(c, old[i]), 1U);
	/* The reset: ring back to slot 0; a send posted there again. */
	ipng_tx_ring_reset(c);
	cqe = ipng_tx_claim(c, &c->tx.slots[0]);
	KUNIT_EXPECT_PTR_NE(test, cqe, old[0]);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, dp_tx_complete(c, old[i]), 0U);
	KUNIT_EXPECT_TRUE(test, c->tx.slots[0].posted);
	KUNIT_EXPECT_EQ(test, c->tx.tail, 0U);
	KUNIT_EXPECT_EQ(test, dp_tx_complete(c, cqe), 1U);
}

/*
 * A completion for a later send than the tail's: the ones before it lost
 * theirs and are retired with it; their own, should they come, are
 * ignored.
 */
static void ipng_dp_test_tx_lost(struct kunit *test)
{
	struct ipng_chan *c = dp_tx_chan(test);
	struct ib_cqe *cqe[3];
	int i;

	for (i = 0; i < 3; i++)
		cqe[i] = ipng_tx_claim(c, &c->tx.slots[i]);
	KUNIT_EXPECT_EQ(test, dp_tx_complete(c, cqe[2]), 3U);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_FALSE(test, c->tx.slots[i].posted);
		KUNIT_EXPECT_EQ(test, dp_tx_complete(c, cqe[i]), 0U);
	}
	KUNIT_EXPECT_EQ(test, c->tx.tail, 3U);
}

/* Entries that name no send in flight of this ring. */
static void ipng_dp_test_tx_foreign(struct kunit *test)
{
	struct ipng_chan *c = dp_tx_chan(test), *other = dp_tx_chan(test);
	struct ib_cqe *cqe, *bad;

	cqe = ipng_tx_claim(c, &c->tx.slots[0]);
	/* Never posted, another ring's, not an entry at all. */
	bad = ipng_slot_cqe(&c->tx.slots[5], c->tx.gen);
	KUNIT_EXPECT_EQ(test, ipng_tx_retire(&c->tx, bad), 0U);
	bad = ipng_slot_cqe(&other->tx.slots[0], c->tx.gen);
	KUNIT_EXPECT_EQ(test, ipng_tx_retire(&c->tx, bad), 0U);
	bad = (struct ib_cqe *)&c->tx.slots[0].len;
	KUNIT_EXPECT_EQ(test, ipng_tx_retire(&c->tx, bad), 0U);
	KUNIT_EXPECT_NULL(test, ipng_slot_of(c->tx.slots, RING, c->tx.gen,
					     (struct ib_cqe *)&c->tx));
	KUNIT_EXPECT_NULL(test, ipng_slot_of(NULL, 0, 0, cqe));
	KUNIT_EXPECT_TRUE(test, c->tx.slots[0].posted);
	KUNIT_EXPECT_EQ(test, dp_tx_complete(c, cqe), 1U);
}

/* The refill visits every empty slot once, then finds none. */
static void ipng_dp_test_refill(struct kunit *test)
{
	struct ipng_rx_ring *rx = dp_ring(test);
	struct ipng_slot *s;
	int i, found = 0;

	for (i = 0; i < RING; i += 2)
		dp_post(rx, &rx->slots[i]);
	while ((s = ipng_rx_refill_next(rx))) {
		KUNIT_EXPECT_FALSE(test, s->posted);
		KUNIT_EXPECT_EQ(test, (s - rx->slots) % 2, 1);
		dp_post(rx, s);
		KUNIT_ASSERT_LE(test, ++found, RING);
	}
	KUNIT_EXPECT_EQ(test, found, RING / 2);
	KUNIT_EXPECT_EQ(test, rx->posted, (u32)RING);
	KUNIT_EXPECT_NULL(test, ipng_rx_refill_next(rx));
}

/* A refill that stops early goes on where it stopped. */
static void ipng_dp_test_refill_resumes(struct kunit *test)
{
	struct ipng_rx_ring *rx = dp_ring(test);
	struct ipng_slot *first, *second;

	first = ipng_rx_refill_next(rx);
	KUNIT_ASSERT_NOT_NULL(test, first);
	/* Not posted (allocation failed): the next look moves on... */
	second = ipng_rx_refill_next(rx);
	KUNIT_EXPECT_PTR_NE(test, first, second);
	/* ... and comes back to it after a round. */
	dp_post(rx, second);
	KUNIT_EXPECT_NOT_NULL(test, ipng_rx_refill_next(rx));
}

static void ipng_dp_test_path_decide(struct kunit *test)
{
	unsigned long now = jiffies;

	KUNIT_EXPECT_EQ(test, ipng_path_decide(IPNG_PATH_VALID, 0, 0, now),
			IPNG_PATH_ACT_SEND);
	KUNIT_EXPECT_EQ(test, ipng_path_decide(IPNG_PATH_RESOLVING, 0, 0, now),
			IPNG_PATH_ACT_QUEUE);
	KUNIT_EXPECT_EQ(test, ipng_path_decide(IPNG_PATH_RESOLVING,
					       IPNG_PATH_QUEUE_LEN - 1, 0, now),
			IPNG_PATH_ACT_QUEUE);
	KUNIT_EXPECT_EQ(test, ipng_path_decide(IPNG_PATH_RESOLVING,
					       IPNG_PATH_QUEUE_LEN, 0, now),
			IPNG_PATH_ACT_DROP_FULL);
	KUNIT_EXPECT_EQ(test, ipng_path_decide(IPNG_PATH_FAILED, 0, now, now),
			IPNG_PATH_ACT_DROP);
	KUNIT_EXPECT_EQ(test, ipng_path_decide(IPNG_PATH_FAILED, 0, now,
					       now + IPNG_PATH_RETRY + 1),
			IPNG_PATH_ACT_RETRY);
}

/*
 * A path being removed takes no packet and is never resolved again,
 * whatever else would apply: a queued packet would be freed with it, a
 * queued resolution would run after the free.
 */
static void ipng_dp_test_dead_path(struct kunit *test)
{
	unsigned long now = jiffies;
	unsigned int qlen;

	for (qlen = 0; qlen <= IPNG_PATH_QUEUE_LEN; qlen++) {
		KUNIT_EXPECT_EQ(test, ipng_path_decide(IPNG_PATH_DEAD, qlen, 0,
						       now),
				IPNG_PATH_ACT_DROP_DEAD);
		KUNIT_EXPECT_EQ(test, ipng_path_decide(IPNG_PATH_DEAD, qlen,
						       now - 10 * HZ, now),
				IPNG_PATH_ACT_DROP_DEAD);
	}
}

static void ipng_dp_test_path_timeout_bounds(struct kunit *test)
{
	KUNIT_EXPECT_FALSE(test, ipng_path_timeout_valid(0));
	KUNIT_EXPECT_TRUE(test, ipng_path_timeout_valid(1));
	KUNIT_EXPECT_TRUE(test, ipng_path_timeout_valid(300));
	KUNIT_EXPECT_TRUE(test, ipng_path_timeout_valid(IPNG_PATH_TIMEOUT_MAX));
	KUNIT_EXPECT_FALSE(test,
			   ipng_path_timeout_valid(IPNG_PATH_TIMEOUT_MAX + 1));
	/* 4294968 s * HZ 1000 wrapped to 32 bits before the bound. */
	KUNIT_EXPECT_FALSE(test, ipng_path_timeout_valid(4294968));
	KUNIT_EXPECT_FALSE(test, ipng_path_timeout_valid(UINT_MAX));
}

/* The shared RC budget stops exactly at its size and reopens on a put. */
static void ipng_dp_test_budget_bound(struct kunit *test)
{
	struct ipng_tx_budget b;
	int i;

	ipng_tx_budget_init(&b, 4);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_TRUE(test, ipng_tx_budget_room(&b));
		KUNIT_EXPECT_TRUE(test, ipng_tx_budget_take(&b));
	}
	KUNIT_EXPECT_FALSE(test, ipng_tx_budget_room(&b));
	KUNIT_EXPECT_FALSE(test, ipng_tx_budget_take(&b));
	KUNIT_EXPECT_EQ(test, atomic_read(&b.inflight), 4);
	ipng_tx_budget_put(&b);
	KUNIT_EXPECT_TRUE(test, ipng_tx_budget_room(&b));
	KUNIT_EXPECT_TRUE(test, ipng_tx_budget_take(&b));
	KUNIT_EXPECT_FALSE(test, ipng_tx_budget_take(&b));
	/* A restart (every send flushed) starts from zero. */
	ipng_tx_budget_init(&b, 4);
	KUNIT_EXPECT_EQ(test, atomic_read(&b.inflight), 0);
}

/* Without connected mode (size 0) the budget never stops a queue. */
static void ipng_dp_test_budget_unused(struct kunit *test)
{
	struct ipng_tx_budget b;
	int i;

	ipng_tx_budget_init(&b, 0);
	for (i = 0; i < 10000; i++)
		KUNIT_ASSERT_TRUE(test, ipng_tx_budget_take(&b));
	KUNIT_EXPECT_TRUE(test, ipng_tx_budget_room(&b));
}

/* A receive queue of the poll-sharing tests: completions waiting. */
struct dp_queue {
	int pending;
	int taken;
};

static int dp_poll(void *ctx, void *queue, int budget)
{
	struct dp_queue *q = queue;
	int n = min(q->pending, budget);
	int *calls = ctx;

	(*calls)++;
	q->pending -= n;
	q->taken += n;
	return n;
}

/*
 * A datagram flood that always has more than a budget waiting must not
 * keep the connections' receives from being polled: over ten polls the
 * connected-mode queue is emptied in the first, and the flood gets the
 * rest of every budget.
 */
static void ipng_dp_test_rx_poll_flood(struct kunit *test)
{
	struct dp_queue ud = { .pending = 100000 }, cm = { .pending = 20 };
	int i, rx, calls = 0;

	for (i = 0; i < 10; i++) {
		rx = ipng_rx_poll_shared(64, dp_poll, &calls, &ud, &cm);
		KUNIT_EXPECT_EQ(test, rx, 64);
	}
	KUNIT_EXPECT_EQ(test, cm.taken, 20);
	KUNIT_EXPECT_EQ(test, ud.taken, 640 - 20);
	/* And the other way round: a connected-mode flood leaves half. */
	ud = (struct dp_queue){ .pending = 20 };
	cm = (struct dp_queue){ .pending = 100000 };
	rx = ipng_rx_poll_shared(64, dp_poll, &calls, &ud, &cm);
	KUNIT_EXPECT_EQ(test, rx, 64);
	KUNIT_EXPECT_EQ(test, ud.taken, 20);
	KUNIT_EXPECT_EQ(test, cm.taken, 44);
}

/*
 * Light load: every queue emptied within one budget, less than the budget
 * reported (NAPI completes); without a connected-mode queue the datagram
 * queue gets the whole budget at once; a budget of 1 still polls.
 */
static void ipng_dp_test_rx_poll_light(struct kunit *test)
{
	struct dp_queue ud = { .pending = 40 }, cm = { .pending = 3 };
	int calls = 0;

	KUNIT_EXPECT_EQ(test, ipng_rx_poll_shared(64, dp_poll, &calls, &ud, &cm), 43);
	KUNIT_EXPECT_EQ(test, ud.pending + cm.pending, 0);
	ud = (struct dp_queue){ .pending = 100 };
	calls = 0;
	KUNIT_EXPECT_EQ(test, ipng_rx_poll_shared(64, dp_poll, &calls, &ud, NULL), 64);
	KUNIT_EXPECT_EQ(test, calls, 1);
	ud = (struct dp_queue){ .pending = 5 };
	cm = (struct dp_queue){ .pending = 5 };
	KUNIT_EXPECT_EQ(test, ipng_rx_poll_shared(1, dp_poll, &calls, &ud, &cm), 1);
	KUNIT_EXPECT_EQ(test, ud.taken, 1);
}

static struct kunit_case ipng_dp_cases[] = {
	KUNIT_CASE(ipng_dp_test_partial_fill),
	KUNIT_CASE(ipng_dp_test_any_order),
	KUNIT_CASE(ipng_dp_test_unknown_completion),
	KUNIT_CASE(ipng_dp_test_rx_stale_start),
	KUNIT_CASE(ipng_dp_test_tx_in_order),
	KUNIT_CASE(ipng_dp_test_tx_stale_start),
	KUNIT_CASE(ipng_dp_test_tx_lost),
	KUNIT_CASE(ipng_dp_test_tx_foreign),
	KUNIT_CASE(ipng_dp_test_refill),
	KUNIT_CASE(ipng_dp_test_refill_resumes),
	KUNIT_CASE(ipng_dp_test_path_decide),
	KUNIT_CASE(ipng_dp_test_dead_path),
	KUNIT_CASE(ipng_dp_test_path_timeout_bounds),
	KUNIT_CASE(ipng_dp_test_budget_bound),
	KUNIT_CASE(ipng_dp_test_budget_unused),
	KUNIT_CASE(ipng_dp_test_rx_poll_flood),
	KUNIT_CASE(ipng_dp_test_rx_poll_light),
	{}
};

struct kunit_suite ipng_dp_suite = {
	.name = "ipoib_ng_datapath",
	.test_cases = ipng_dp_cases,
};
