// SPDX-License-Identifier: GPL-2.0
/*
 * Connection state machine of connected mode and the connection cap: pure
 * logic without verbs, so that KUnit can walk every transition. Which
 * events are possible in which state follows the CM protocol of the
 * InfiniBand specification (chapter 12) as IPoIB uses it (RFC 4755):
 * active side REQ -> REP -> RTU, passive side REQ -> REP -> RTU, either
 * side DREQ -> DREP. It also says what a step means to an observer (up,
 * failed, closed), which the tracepoints report, and owns the limits the
 * driver applies: the connection budget, the per-peer, setup, marker and
 * receive-ring caps, the connect queue bounds and the parameter ranges.
 */
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <kunit/visibility.h>

#include "ipoib_cm_state.h"

/* Give up, tell the peer nothing more (a REJ goes with the CM ID). */
#define IPNG_CM_GIVE_UP \
	(IPNG_CM_ACT_FALLBACK | IPNG_CM_ACT_RELEASE | IPNG_CM_ACT_RETRY_LATER)

static enum ipng_cm_state ipng_cm_step_idle(enum ipng_cm_event event,
					    unsigned int *actions)
{
	switch (event) {
	case IPNG_CM_EV_REQ_SENT:
		return IPNG_CM_REQ_SENT;
	case IPNG_CM_EV_REP_SENT:
		return IPNG_CM_REP_SENT;
	case IPNG_CM_EV_SETUP_ERROR:
		*actions = IPNG_CM_GIVE_UP;
		return IPNG_CM_FAILED;
	case IPNG_CM_EV_CLOSE:
	case IPNG_CM_EV_IDLE:
		*actions = IPNG_CM_ACT_RELEASE;
		return IPNG_CM_CLOSING;
	default:
		return IPNG_CM_IDLE;
	}
}

static enum ipng_cm_state ipng_cm_step_req_sent(enum ipng_cm_event event,
						unsigned int *actions)
{
	switch (event) {
	case IPNG_CM_EV_REP:
		*actions = IPNG_CM_ACT_SEND_RTU | IPNG_CM_ACT_FLUSH;
		return IPNG_CM_LIVE;
	case IPNG_CM_EV_REJ:
	case IPNG_CM_EV_TIMEOUT:
	case IPNG_CM_EV_SETUP_ERROR:
	case IPNG_CM_EV_QP_ERROR:
	case IPNG_CM_EV_DREQ:
		*actions = IPNG_CM_GIVE_UP;
		return IPNG_CM_FAILED;
	case IPNG_CM_EV_CLOSE:
	case IPNG_CM_EV_IDLE:
		*actions = IPNG_CM_ACT_RELEASE;
		return IPNG_CM_CLOSING;
	default:
		return IPNG_CM_REQ_SENT;
	}
}

static enum ipng_cm_state ipng_cm_step_rep_sent(enum ipng_cm_event event,
						unsigned int *actions)
{
	switch (event) {
	case IPNG_CM_EV_RTU:
		return IPNG_CM_LIVE;
	case IPNG_CM_EV_DREQ:
		*actions = IPNG_CM_ACT_SEND_DREP | IPNG_CM_ACT_RELEASE;
		return IPNG_CM_CLOSING;
	case IPNG_CM_EV_REJ:
	case IPNG_CM_EV_TIMEOUT:
	case IPNG_CM_EV_SETUP_ERROR:
	case IPNG_CM_EV_QP_ERROR:
	case IPNG_CM_EV_CLOSE:
	case IPNG_CM_EV_IDLE:
		*actions = IPNG_CM_ACT_RELEASE;
		return IPNG_CM_CLOSING;
	default:
		return IPNG_CM_REP_SENT;
	}
}

static enum ipng_cm_state ipng_cm_step_live(enum ipng_cm_event event,
					    unsigned int *actions)
{
	switch (event) {
	case IPNG_CM_EV_DREQ:
		*actions = IPNG_CM_ACT_SEND_DREP | IPNG_CM_ACT_RELEASE;
		return IPNG_CM_CLOSING;
	case IPNG_CM_EV_REJ:
		/* The peer gave up on us (our RTU was lost, say). */
		*actions = IPNG_CM_ACT_RELEASE;
		return IPNG_CM_CLOSING;
	case IPNG_CM_EV_QP_ERROR:
	case IPNG_CM_EV_IDLE:
	case IPNG_CM_EV_CLOSE:
		*actions = IPNG_CM_ACT_SEND_DREQ | IPNG_CM_ACT_RELEASE;
		return IPNG_CM_CLOSING;
	default:
		return IPNG_CM_LIVE;
	}
}

/**
 * ipng_cm_step() - feed one event to a connection's state machine
 * @state: current state
 * @event: what happened
 * @actions: set to the IPNG_CM_ACT_* bits the driver must carry out
 *
 * Events that cannot happen in @state (a late RTU, a second REP, anything
 * while closing) change nothing and ask for nothing. A failed active
 * connection only leaves %IPNG_CM_FAILED when the interface closes it or
 * it idles out; it has released its resources already.
 *
 * Return: the new state.
 */
enum ipng_cm_state ipng_cm_step(enum ipng_cm_state state,
				enum ipng_cm_event event,
				unsigned int *actions)
{
	*actions = 0;
	switch (state) {
	case IPNG_CM_IDLE:
		return ipng_cm_step_idle(event, actions);
	case IPNG_CM_REQ_SENT:
		return ipng_cm_step_req_sent(event, actions);
	case IPNG_CM_REP_SENT:
		return ipng_cm_step_rep_sent(event, actions);
	case IPNG_CM_LIVE:
		return ipng_cm_step_live(event, actions);
	case IPNG_CM_FAILED:
		if (event == IPNG_CM_EV_CLOSE || event == IPNG_CM_EV_IDLE)
			return IPNG_CM_CLOSING;
		return IPNG_CM_FAILED;
	default:
		return state;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_step);

/**
 * ipng_cm_state_name() - name of a state for debugfs and logs
 * @state: the state
 *
 * Return: a constant string.
 */
const char *ipng_cm_state_name(enum ipng_cm_state state)
{
	static const char * const names[IPNG_CM_NR_STATES] = {
		[IPNG_CM_IDLE]		= "idle",
		[IPNG_CM_REQ_SENT]	= "req_sent",
		[IPNG_CM_REP_SENT]	= "rep_sent",
		[IPNG_CM_LIVE]		= "live",
		[IPNG_CM_CLOSING]	= "closing",
		[IPNG_CM_FAILED]	= "failed",
	};

	if ((unsigned int)state >= IPNG_CM_NR_STATES)
		return "invalid";
	return names[state];
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_state_name);

/**
 * ipng_cm_event_name() - name of an event for tracepoints and logs
 * @event: the event
 *
 * Return: a constant string.
 */
const char *ipng_cm_event_name(enum ipng_cm_event event)
{
	static const char * const names[IPNG_CM_NR_EVENTS] = {
		[IPNG_CM_EV_REQ_SENT]		= "req_sent",
		[IPNG_CM_EV_REP_SENT]		= "rep_sent",
		[IPNG_CM_EV_REP]		= "rep",
		[IPNG_CM_EV_RTU]		= "rtu",
		[IPNG_CM_EV_REJ]		= "rej",
		[IPNG_CM_EV_TIMEOUT]		= "timeout",
		[IPNG_CM_EV_SETUP_ERROR]	= "setup_error",
		[IPNG_CM_EV_DREQ]		= "dreq",
		[IPNG_CM_EV_QP_ERROR]		= "qp_error",
		[IPNG_CM_EV_IDLE]		= "idle",
		[IPNG_CM_EV_CLOSE]		= "close",
	};

	if ((unsigned int)event >= IPNG_CM_NR_EVENTS)
		return "invalid";
	return names[event];
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_event_name);

/* Events that end a connection being made as a failure. */
static bool ipng_cm_setup_failed(enum ipng_cm_event event)
{
	return event == IPNG_CM_EV_REJ || event == IPNG_CM_EV_TIMEOUT ||
	       event == IPNG_CM_EV_SETUP_ERROR || event == IPNG_CM_EV_QP_ERROR;
}

/**
 * ipng_cm_report() - what a step from @old to @new caused by @event means
 * @old: state before ipng_cm_step()
 * @new: state it returned
 * @event: the event fed to it
 *
 * A connection reaching %IPNG_CM_LIVE is up. An active one reaching
 * %IPNG_CM_FAILED, or one being made that a rejection, timeout or error
 * closes, failed. Any other way into %IPNG_CM_CLOSING (disconnect request,
 * idle, close by the interface, an error once live) closed it. A failed
 * entry that goes away is not reported again.
 *
 * Return: what to report.
 */
enum ipng_cm_report ipng_cm_report(enum ipng_cm_state old,
				   enum ipng_cm_state new,
				   enum ipng_cm_event event)
{
	if (old == new || old == IPNG_CM_FAILED)
		return IPNG_CM_REPORT_NONE;
	if (new == IPNG_CM_LIVE)
		return IPNG_CM_REPORT_UP;
	if (new == IPNG_CM_FAILED)
		return IPNG_CM_REPORT_FAILED;
	if (new != IPNG_CM_CLOSING)
		return IPNG_CM_REPORT_NONE;
	if (old != IPNG_CM_LIVE && ipng_cm_setup_failed(event))
		return IPNG_CM_REPORT_FAILED;
	return IPNG_CM_REPORT_CLOSED;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_report);

/**
 * ipng_cm_event_errno() - the errno a failed connection reports
 * @event: the event it failed on
 *
 * Return: a negative errno (-EIO for our own setup errors, whose real
 * cause the caller reports when it knows it).
 */
int ipng_cm_event_errno(enum ipng_cm_event event)
{
	switch (event) {
	case IPNG_CM_EV_REJ:
		return -ECONNREFUSED;
	case IPNG_CM_EV_TIMEOUT:
		return -ETIMEDOUT;
	case IPNG_CM_EV_DREQ:
		return -ECONNRESET;
	case IPNG_CM_EV_CLOSE:
	case IPNG_CM_EV_IDLE:
		return -ECONNABORTED;
	default:
		return -EIO;
	}
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_event_errno);

/**
 * ipng_cm_budget_take() - reserve a connection slot
 * @b: the budget
 *
 * Return: true with a slot taken, false when @b->max slots are in use.
 */
bool ipng_cm_budget_take(struct ipng_cm_budget *b)
{
	unsigned int max = READ_ONCE(b->max);
	int c = atomic_read(&b->count);

	do {
		if (c < 0 || (unsigned int)c >= max)
			return false;
	} while (!atomic_try_cmpxchg(&b->count, &c, c + 1));
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_budget_take);

/**
 * ipng_cm_budget_return() - give back a slot taken by ipng_cm_budget_take()
 * @b: the budget
 */
void ipng_cm_budget_return(struct ipng_cm_budget *b)
{
	atomic_dec(&b->count);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_budget_return);

/**
 * ipng_cm_admit() - whether one more connection may be made or accepted
 * @use: what the interface holds now
 * @own_ring: the connection would have a receive ring of its own (an
 *	incoming one without SRQ)
 * @own_ring_max: cap on such connections (ipng_cm_own_ring_max())
 *
 * The max_connections slot is taken separately (ipng_cm_budget_take());
 * these are the caps no single peer or flood may exceed whatever
 * max_connections says.
 *
 * Return: %IPNG_CM_ADMIT or the cap that refuses.
 */
enum ipng_cm_verdict ipng_cm_admit(const struct ipng_cm_usage *use,
				   bool own_ring, unsigned int own_ring_max)
{
	if (use->setup >= IPNG_CM_SETUP_MAX)
		return IPNG_CM_FULL_SETUP;
	if (use->peer >= IPNG_CM_PER_PEER)
		return IPNG_CM_FULL_PEER;
	if (own_ring && use->own_ring >= own_ring_max)
		return IPNG_CM_FULL_RING;
	return IPNG_CM_ADMIT;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_admit);

/**
 * ipng_cm_in_setup() - whether a connection in @state is still being made
 * @state: its state
 *
 * Return: true for the states counted against %IPNG_CM_SETUP_MAX.
 */
bool ipng_cm_in_setup(enum ipng_cm_state state)
{
	return state == IPNG_CM_IDLE || state == IPNG_CM_REQ_SENT ||
	       state == IPNG_CM_REP_SENT;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_in_setup);

/**
 * ipng_cm_marker_keep() - whether a failed outgoing entry stays as a marker
 * @markers: markers kept already
 *
 * Past the cap the entry goes at once: the next packet to that peer asks
 * for a new connection, which the caps above then rule on.
 *
 * Return: true while fewer than %IPNG_CM_MARKERS_MAX are kept.
 */
bool ipng_cm_marker_keep(unsigned int markers)
{
	return markers < IPNG_CM_MARKERS_MAX;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_marker_keep);

/**
 * ipng_cm_reap_due() - whether the reaper closes an outgoing entry
 * @state: its state
 * @now: jiffies
 * @last_used: jiffies of its last packet
 * @timeout: cm_idle_timeout in jiffies
 * @retry_at: failed: jiffies from which a new connect may be tried
 *
 * A failed marker expires at its retry time whether packets still come or
 * not; anything else but a closing entry when unused for @timeout.
 *
 * Return: true to close it.
 */
bool ipng_cm_reap_due(enum ipng_cm_state state, unsigned long now,
		      unsigned long last_used, unsigned long timeout,
		      unsigned long retry_at)
{
	switch (state) {
	case IPNG_CM_FAILED:
		return !time_before(now, retry_at);
	case IPNG_CM_CLOSING:
		return false;
	default:
		return time_after(now, last_used + timeout);
	}
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_reap_due);

/**
 * ipng_cm_queue_ok() - whether a packet may wait for its connection
 * @qlen: packets the connection holds already
 * @qbytes: their truesize
 * @total: truesize of the packets all connections of the interface hold
 * @truesize: truesize of the new packet
 *
 * Return: true when the packet fits every bound.
 */
bool ipng_cm_queue_ok(unsigned int qlen, unsigned int qbytes,
		      unsigned int total, unsigned int truesize)
{
	return qlen < IPNG_CM_QUEUE_MAX &&
	       truesize <= IPNG_CM_QUEUE_BYTES - min_t(unsigned int, qbytes,
						       IPNG_CM_QUEUE_BYTES) &&
	       truesize <= IPNG_CM_BACKLOG_BYTES - min_t(unsigned int, total,
							 IPNG_CM_BACKLOG_BYTES);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_queue_ok);

/**
 * ipng_cm_own_ring_max() - cap on incoming connections without SRQ
 * @rx_cqe: receive CQ entries available to their rings
 *
 * Return: %IPNG_CM_OWN_RING_MAX, or fewer when the CQ cannot hold all of
 * their receives.
 */
unsigned int ipng_cm_own_ring_max(unsigned int rx_cqe)
{
	return min_t(unsigned int, IPNG_CM_OWN_RING_MAX,
		     rx_cqe / IPNG_CM_RX_RING);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_own_ring_max);

/**
 * ipng_cm_param_check() - range of a writable module parameter
 * @param: which one
 * @val: the value written
 * @min: set to the lowest value allowed
 * @max: set to the highest value allowed
 *
 * max_connections: 0 (connected mode sends everything over UD) to 65536,
 * the most RC QPs a port is given here. cm_idle_timeout: 1 s to one day;
 * 0 would close connections as they come up.
 *
 * Return: 0, or -ERANGE for a value outside [@min, @max], -EINVAL for an
 * unknown @param.
 */
int ipng_cm_param_check(enum ipng_cm_param param, unsigned int val,
			unsigned int *min, unsigned int *max)
{
	switch (param) {
	case IPNG_CM_PARAM_MAX_CONN:
		*min = 0;
		*max = 65536;
		break;
	case IPNG_CM_PARAM_IDLE:
		*min = 1;
		*max = 86400;
		break;
	default:
		*min = 0;
		*max = 0;
		return -EINVAL;
	}
	return val < *min || val > *max ? -ERANGE : 0;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_cm_param_check);
