// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool operations of an interface: driver information, link state and
 * the counters of the ipoib_stats.c table (ethtool -S).
 */
#include <linux/ethtool.h>

#include "ipoib.h"

static void ipng_get_drvinfo(struct net_device *ndev,
			     struct ethtool_drvinfo *info)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	strscpy(info->driver, DRV_NAME, sizeof(info->driver));
	strscpy(info->version, DRV_VERSION, sizeof(info->version));
	ib_get_device_fw_str(ipd->ca, info->fw_version);
	snprintf(info->bus_info, sizeof(info->bus_info), "%s:port%u",
		 dev_name(&ipd->ca->dev), ipd->port);
}

static int ipng_get_sset_count(struct net_device *ndev, int sset)
{
	return sset == ETH_SS_STATS ? IPNG_STAT_MAX : -EOPNOTSUPP;
}

/* ethtool -S names are those of the counter table, in its order. */
static void ipng_get_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	int i;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < IPNG_STAT_MAX; i++)
		ethtool_sprintf(&data, "%s", ipng_stat_names[i]);
}

static void ipng_get_ethtool_stats(struct net_device *ndev,
				   struct ethtool_stats *stats, u64 *data)
{
	ipng_stats_sum(ipng_priv(ndev)->stats, data);
}

const struct ethtool_ops ipng_ethtool_ops = {
	.get_drvinfo		= ipng_get_drvinfo,
	.get_link		= ethtool_op_get_link,
	.get_sset_count		= ipng_get_sset_count,
	.get_strings		= ipng_get_strings,
	.get_ethtool_stats	= ipng_get_ethtool_stats,
};
