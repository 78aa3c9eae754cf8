// SPDX-License-Identifier: GPL-2.0
/*
 * Connected mode (RFC 4755): placeholder entry points, filled in next.
 */
#include "ipoib.h"

int ipng_cm_init(struct ipng_dev *ipd)
{
	return 0;
}

void ipng_cm_cleanup(struct ipng_dev *ipd)
{
}

int ipng_cm_open(struct ipng_dev *ipd)
{
	return 0;
}

void ipng_cm_stop(struct ipng_dev *ipd)
{
}

bool ipng_cm_xmit(struct ipng_dev *ipd, struct sk_buff *skb, u32 qpn,
		  const union ib_gid *dgid)
{
	return false;
}

void ipng_cm_flush_tx(struct ipng_dev *ipd)
{
}

int ipng_cm_max_mtu(struct ipng_dev *ipd)
{
	return IPNG_CM_MTU;
}

bool ipng_cm_tx_room(struct ipng_dev *ipd)
{
	return true;
}

unsigned int ipng_cm_count(struct ipng_dev *ipd)
{
	return 0;
}

void ipng_cm_dump(struct ipng_dev *ipd, struct seq_file *m)
{
}
