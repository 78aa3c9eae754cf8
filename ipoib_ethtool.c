// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool operations of an interface.
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

const struct ethtool_ops ipng_ethtool_ops = {
	.get_drvinfo	= ipng_get_drvinfo,
	.get_link	= ethtool_op_get_link,
};
