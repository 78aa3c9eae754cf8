// SPDX-License-Identifier: GPL-2.0
/* header_ops.parse gets the device as its second argument (6.12). */
#include <linux/netdevice.h>

static int ipng_probe_parse(const struct sk_buff *skb,
			    const struct net_device *dev, unsigned char *haddr)
{
	return 0;
}

const struct header_ops ipng_probe_ops = {
	.parse = ipng_probe_parse,
};
