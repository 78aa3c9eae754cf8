// SPDX-License-Identifier: GPL-2.0
/*
 * The backlog limit is net_hotdata.max_backlog (6.9; it was the global
 * netdev_max_backlog before).
 */
#include <net/hotdata.h>

int ipng_probe(void);
int ipng_probe(void)
{
	return READ_ONCE(net_hotdata.max_backlog);
}
