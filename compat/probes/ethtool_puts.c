// SPDX-License-Identifier: GPL-2.0
/* ethtool_puts(): one string into ethtool's string table, unformatted (6.8). */
#include <linux/ethtool.h>

void ipng_probe(u8 **data);
void ipng_probe(u8 **data)
{
	ethtool_puts(data, "probe");
}
