// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoints of ipoib_ng (defined in ipoib_trace.h, created here), the
 * counting of dropped packets by reason, which fires ipoib_ng:drop, and
 * the reporting of connected-mode state changes as ipoib_ng:cm_connect
 * and ipoib_ng:cm_disconnect.
 */
#include "ipoib.h"

#define CREATE_TRACE_POINTS
#include "ipoib_trace.h"

/* The multicast KUnit suite watches the state machine through this one. */
#if IS_ENABLED(CONFIG_KUNIT)
EXPORT_TRACEPOINT_SYMBOL_GPL(mcast_state);
#endif

/**
 * ipng_drop() - count packets dropped for one reason
 * @ipd: interface
 * @why: the drop counter
 * @n: packets
 *
 * Transmit or NAPI context, or bottom halves disabled. Fires
 * ipoib_ng:drop with the counter's name as the reason.
 */
void ipng_drop(struct ipng_dev *ipd, enum ipng_stat why, unsigned int n)
{
	if (unlikely(!n))
		return;
	ipng_stat_add(ipd->stats, why, n);
	trace_drop(ipd->ndev, why, n);
}

/**
 * ipng_trace_cm_step() - report a connection's state change
 * @ipd: interface
 * @tx: an outgoing connection (else incoming)
 * @qpn: the peer's UD QPN
 * @gid: the peer's GID (16 bytes)
 * @old: state before the step
 * @new: state after it
 * @event: what caused it
 * @err: the cause of a failed setup when the caller knows it, else 0
 *
 * Fires ipoib_ng:cm_connect when the connection comes up or could not be
 * made, ipoib_ng:cm_disconnect when it closes (see ipng_cm_report()).
 * Any context.
 */
void ipng_trace_cm_step(struct ipng_dev *ipd, bool tx, u32 qpn,
			const u8 *gid, enum ipng_cm_state old,
			enum ipng_cm_state new, enum ipng_cm_event event,
			int err)
{
	if (!trace_cm_connect_enabled() && !trace_cm_disconnect_enabled())
		return;
	switch (ipng_cm_report(old, new, event)) {
	case IPNG_CM_REPORT_UP:
		trace_cm_connect(ipd->ndev, qpn, gid, tx, 0);
		break;
	case IPNG_CM_REPORT_FAILED:
		trace_cm_connect(ipd->ndev, qpn, gid, tx,
				 err ?: ipng_cm_event_errno(event));
		break;
	case IPNG_CM_REPORT_CLOSED:
		trace_cm_disconnect(ipd->ndev, qpn, gid, tx,
				    ipng_cm_event_name(event));
		break;
	default:
		break;
	}
}
