/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The life of one connected-mode connection as a pure state machine: which
 * state a CM or local event leads to and what the driver has to do about
 * it. ipoib_cm.c performs the actions; KUnit drives the machine alone.
 */
#ifndef IPNG_CM_STATE_H
#define IPNG_CM_STATE_H

#include <linux/atomic.h>
#include <linux/types.h>

/**
 * enum ipng_cm_state - state of one RC connection
 * @IPNG_CM_IDLE: created, nothing sent yet (active) or received (passive)
 * @IPNG_CM_REQ_SENT: active side: REQ sent, waiting for the REP
 * @IPNG_CM_REP_SENT: passive side: REP sent, waiting for the RTU
 * @IPNG_CM_LIVE: established; data flows
 * @IPNG_CM_CLOSING: being torn down (disconnect, error, reaping)
 * @IPNG_CM_FAILED: active side: no connection could be made; packets use
 *	the datagram path until the entry is retried
 * @IPNG_CM_NR_STATES: number of states
 */
enum ipng_cm_state {
	IPNG_CM_IDLE,
	IPNG_CM_REQ_SENT,
	IPNG_CM_REP_SENT,
	IPNG_CM_LIVE,
	IPNG_CM_CLOSING,
	IPNG_CM_FAILED,
	IPNG_CM_NR_STATES
};

/**
 * enum ipng_cm_event - what happens to a connection
 * @IPNG_CM_EV_REQ_SENT: active: QP created and REQ sent
 * @IPNG_CM_EV_REP_SENT: passive: REQ accepted and REP sent
 * @IPNG_CM_EV_REP: active: REP received and QP moved to RTS
 * @IPNG_CM_EV_RTU: passive: RTU received (or the first data arrived)
 * @IPNG_CM_EV_REJ: the peer rejected the REQ or REP
 * @IPNG_CM_EV_TIMEOUT: the REQ or REP went unanswered
 * @IPNG_CM_EV_SETUP_ERROR: our side failed to set up (no path, no QP)
 * @IPNG_CM_EV_DREQ: the peer asks to disconnect
 * @IPNG_CM_EV_QP_ERROR: the QP went to the error state or a send failed
 * @IPNG_CM_EV_IDLE: unused longer than the reap timeout
 * @IPNG_CM_EV_CLOSE: the interface closes the connection (stop, flush,
 *	mode change)
 * @IPNG_CM_NR_EVENTS: number of events
 */
enum ipng_cm_event {
	IPNG_CM_EV_REQ_SENT,
	IPNG_CM_EV_REP_SENT,
	IPNG_CM_EV_REP,
	IPNG_CM_EV_RTU,
	IPNG_CM_EV_REJ,
	IPNG_CM_EV_TIMEOUT,
	IPNG_CM_EV_SETUP_ERROR,
	IPNG_CM_EV_DREQ,
	IPNG_CM_EV_QP_ERROR,
	IPNG_CM_EV_IDLE,
	IPNG_CM_EV_CLOSE,
	IPNG_CM_NR_EVENTS
};

/**
 * enum ipng_cm_action - bits of what ipng_cm_step() asks the driver to do
 * @IPNG_CM_ACT_SEND_RTU: active: answer the REP with an RTU
 * @IPNG_CM_ACT_FLUSH: send the packets queued while connecting on RC
 * @IPNG_CM_ACT_FALLBACK: send the queued packets over UD instead
 * @IPNG_CM_ACT_SEND_DREQ: send a DREQ to the peer
 * @IPNG_CM_ACT_SEND_DREP: answer the peer's DREQ
 * @IPNG_CM_ACT_RELEASE: drain and destroy the QP and the CM ID
 * @IPNG_CM_ACT_RETRY_LATER: active: use UD now, connect again later
 */
enum ipng_cm_action {
	IPNG_CM_ACT_SEND_RTU	= BIT(0),
	IPNG_CM_ACT_FLUSH	= BIT(1),
	IPNG_CM_ACT_FALLBACK	= BIT(2),
	IPNG_CM_ACT_SEND_DREQ	= BIT(3),
	IPNG_CM_ACT_SEND_DREP	= BIT(4),
	IPNG_CM_ACT_RELEASE	= BIT(5),
	IPNG_CM_ACT_RETRY_LATER	= BIT(6),
};

/**
 * enum ipng_cm_report - what a state change means to an observer
 * @IPNG_CM_REPORT_NONE: nothing to report (no change, or a failed
 *	outgoing entry going away: its failure was reported already)
 * @IPNG_CM_REPORT_UP: the connection is live
 * @IPNG_CM_REPORT_FAILED: the connection could not be made
 * @IPNG_CM_REPORT_CLOSED: the connection (live or being made) closed
 */
enum ipng_cm_report {
	IPNG_CM_REPORT_NONE,
	IPNG_CM_REPORT_UP,
	IPNG_CM_REPORT_FAILED,
	IPNG_CM_REPORT_CLOSED,
};

enum ipng_cm_state ipng_cm_step(enum ipng_cm_state state,
				enum ipng_cm_event event,
				unsigned int *actions);
const char *ipng_cm_state_name(enum ipng_cm_state state);
const char *ipng_cm_event_name(enum ipng_cm_event event);
enum ipng_cm_report ipng_cm_report(enum ipng_cm_state old,
				   enum ipng_cm_state new,
				   enum ipng_cm_event event);
int ipng_cm_event_errno(enum ipng_cm_event event);

/**
 * struct ipng_cm_budget - cap on the number of connections
 * @count: connections holding a slot
 * @max: the cap (the max_connections module parameter)
 */
struct ipng_cm_budget {
	atomic_t count;
	unsigned int max;
};

bool ipng_cm_budget_take(struct ipng_cm_budget *b);
void ipng_cm_budget_return(struct ipng_cm_budget *b);

/*
 * Limits of connected mode; Documentation/ipoib_ng.rst says why each has
 * its value and what it costs in memory.
 *
 * IPNG_CM_PER_PEER: connections (both directions) with one remote port
 *	GID: one each way for up to four interfaces on that port, twice over
 *	for connections replaced while the old one still closes. Failed
 *	markers count too until they expire, so attempts to a GID that
 *	refuses them all are IPNG_CM_PER_PEER per IPNG_CM_RETRY.
 * IPNG_CM_SETUP_MAX: connections being made (both directions) at once. A
 *	connection only gets past setup with a peer that answers, so this is
 *	all a flood of forged link addresses can hold.
 * IPNG_CM_MARKERS_MAX: failed outgoing entries kept (they send over UD
 *	until IPNG_CM_RETRY has passed, then expire).
 * IPNG_CM_OWN_RING_MAX: incoming connections with a receive ring of their
 *	own (no SRQ); each pins IPNG_CM_RX_RING buffers of up to 64 KiB.
 * IPNG_CM_QUEUE_MAX, IPNG_CM_QUEUE_BYTES: packets (and their truesize)
 *	one connection holds while it is being made;
 *	IPNG_CM_BACKLOG_BYTES: the same over all connections of an interface.
 */
#define IPNG_CM_PER_PEER	16
#define IPNG_CM_SETUP_MAX	64
#define IPNG_CM_MARKERS_MAX	256
#define IPNG_CM_OWN_RING_MAX	16
#define IPNG_CM_RX_RING		32
#define IPNG_CM_QUEUE_MAX	64
#define IPNG_CM_QUEUE_BYTES	(256 * 1024)
#define IPNG_CM_BACKLOG_BYTES	(4 * 1024 * 1024)

/**
 * struct ipng_cm_usage - what an interface holds when a connection asks in
 * @setup: connections being made, both directions
 * @peer: connections holding a slot with the peer's GID
 * @own_ring: incoming connections with a receive ring of their own
 */
struct ipng_cm_usage {
	unsigned int setup;
	unsigned int peer;
	unsigned int own_ring;
};

/**
 * enum ipng_cm_verdict - whether a new connection may be made or accepted
 * @IPNG_CM_ADMIT: yes
 * @IPNG_CM_FULL_SETUP: %IPNG_CM_SETUP_MAX connections are being made
 * @IPNG_CM_FULL_PEER: the peer's GID holds %IPNG_CM_PER_PEER connections
 * @IPNG_CM_FULL_RING: %IPNG_CM_OWN_RING_MAX (or fewer, what the receive
 *	CQ has room for) incoming connections have receive rings
 */
enum ipng_cm_verdict {
	IPNG_CM_ADMIT,
	IPNG_CM_FULL_SETUP,
	IPNG_CM_FULL_PEER,
	IPNG_CM_FULL_RING,
};

/**
 * enum ipng_cm_param - the writable connected-mode module parameters
 * @IPNG_CM_PARAM_MAX_CONN: max_connections
 * @IPNG_CM_PARAM_IDLE: cm_idle_timeout (seconds)
 */
enum ipng_cm_param {
	IPNG_CM_PARAM_MAX_CONN,
	IPNG_CM_PARAM_IDLE,
};

enum ipng_cm_verdict ipng_cm_admit(const struct ipng_cm_usage *use,
				   bool own_ring, unsigned int own_ring_max);
bool ipng_cm_in_setup(enum ipng_cm_state state);
bool ipng_cm_marker_keep(unsigned int markers);
bool ipng_cm_reap_due(enum ipng_cm_state state, unsigned long now,
		      unsigned long last_used, unsigned long timeout,
		      unsigned long retry_at);
bool ipng_cm_queue_ok(unsigned int qlen, unsigned int qbytes,
		      unsigned int total, unsigned int truesize);
unsigned int ipng_cm_own_ring_max(unsigned int rx_cqe);
int ipng_cm_param_check(enum ipng_cm_param param, unsigned int val,
			unsigned int *min, unsigned int *max);

#endif /* IPNG_CM_STATE_H */
