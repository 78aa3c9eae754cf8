// SPDX-License-Identifier: GPL-2.0
/*
 * Counting of dropped packets by reason.
 */
#include "ipoib.h"

/**
 * ipng_drop() - count packets dropped for one reason
 * @ipd: interface
 * @why: the drop counter
 * @n: packets
 *
 * Transmit or NAPI context, or bottom halves disabled.
 */
void ipng_drop(struct ipng_dev *ipd, enum ipng_stat why, unsigned int n)
{
	ipng_stat_add(ipd->stats, why, n);
}
