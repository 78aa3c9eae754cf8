// SPDX-License-Identifier: GPL-2.0
/*
 * ethtool operations of an interface: driver information, link settings,
 * channels (-l/-L), ring sizes (-g/-G), interrupt moderation (-c/-C) and
 * counters (-S): the ipoib_stats.c table, then every channel's own.
 */
#include <linux/ethtool.h>
#include <kunit/visibility.h>

#include "ipoib.h"

/* Per-channel counters of ethtool -S, after the interface's table. */
static const char * const ipng_chan_stat_names[] = {
	"rx_packets", "rx_bytes", "tx_packets", "tx_bytes",
	"napi_polls", "cq_events", "holdoffs",
};

#define IPNG_CHAN_STATS	ARRAY_SIZE(ipng_chan_stat_names)

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

/**
 * ipng_port_speed() - link speed of an IB port
 * @speed: active speed (enum ib_port_speed)
 * @width: active width (enum ib_port_width)
 *
 * Return: the nominal speed in Mb/s, lanes times lane speed, or 0 when
 * either value is unknown.
 */
u32 ipng_port_speed(u8 speed, u8 width)
{
	u32 lane, lanes;

	switch (speed) {
	case IB_SPEED_SDR:
		lane = 2500;
		break;
	case IB_SPEED_DDR:
		lane = 5000;
		break;
	case IB_SPEED_QDR:
	case IB_SPEED_FDR10:
		lane = 10000;
		break;
	case IB_SPEED_FDR:
		lane = 14000;
		break;
	case IB_SPEED_EDR:
		lane = 25000;
		break;
	case IB_SPEED_HDR:
		lane = 50000;
		break;
	case IB_SPEED_NDR:
		lane = 100000;
		break;
	default:
		return 0;
	}
	switch (width) {
	case IB_WIDTH_1X:
		lanes = 1;
		break;
	case IB_WIDTH_2X:
		lanes = 2;
		break;
	case IB_WIDTH_4X:
		lanes = 4;
		break;
	case IB_WIDTH_8X:
		lanes = 8;
		break;
	case IB_WIDTH_12X:
		lanes = 12;
		break;
	default:
		return 0;
	}
	return lane * lanes;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_port_speed);

static int ipng_get_link_ksettings(struct net_device *ndev,
				   struct ethtool_link_ksettings *cmd)
{
	u32 speed = READ_ONCE(ipng_priv(ndev)->speed);

	ethtool_link_ksettings_zero_link_mode(cmd, supported);
	ethtool_link_ksettings_zero_link_mode(cmd, advertising);
	cmd->base.speed = speed && netif_carrier_ok(ndev) ? speed :
			  SPEED_UNKNOWN;
	cmd->base.duplex = speed && netif_carrier_ok(ndev) ? DUPLEX_FULL :
			   DUPLEX_UNKNOWN;
	cmd->base.port = PORT_OTHER;
	cmd->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

/* ---- channels ---- */

static void ipng_get_channels(struct net_device *ndev,
			      struct ethtool_channels *ch)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	ch->max_combined = ipd->max_chans;
	ch->combined_count = ipd->nchans;
}

static int ipng_set_channels(struct net_device *ndev,
			     struct ethtool_channels *ch)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	/* Only combined channels: each sends and spreads receives. */
	if (ch->rx_count || ch->tx_count || ch->other_count) {
		netdev_err(ndev, "only combined channels can be set\n");
		return -EINVAL;
	}
	if (!ch->combined_count || ch->combined_count > ipd->max_chans) {
		netdev_err(ndev, "combined channels must be 1 to %u\n",
			   ipd->max_chans);
		return -EINVAL;
	}
	return ipng_chans_set(ipd, ch->combined_count, ipd->tx_ring_size,
			      ipd->rx_ring_size, NULL);
}

/* ---- rings ---- */

/**
 * ipng_ring_size_round() - turn a requested ring size into one to use
 * @req: entries asked for
 * @max: the largest ring the queue pairs hold
 * @size: result: @req rounded up to a power of two
 *
 * Return: 0, or -EINVAL when @req is below the minimum ring or the
 * rounded size above @max.
 */
int ipng_ring_size_round(u32 req, u32 max, u32 *size)
{
	if (req < IPNG_RING_MIN || req > max)
		return -EINVAL;
	*size = roundup_pow_of_two(req);
	return *size > max ? -EINVAL : 0;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_ring_size_round);

static void ipng_get_ringparam(struct net_device *ndev,
			       struct ethtool_ringparam *ring,
			       struct kernel_ethtool_ringparam *kring,
			       struct netlink_ext_ack *extack)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	ring->rx_max_pending = ipd->rx_ring_max;
	ring->tx_max_pending = ipd->tx_ring_max;
	ring->rx_pending = ipd->rx_ring_size;
	ring->tx_pending = ipd->tx_ring_size;
}

static int ipng_set_ringparam(struct net_device *ndev,
			      struct ethtool_ringparam *ring,
			      struct kernel_ethtool_ringparam *kring,
			      struct netlink_ext_ack *extack)
{
	struct ipng_dev *ipd = ipng_priv(ndev);
	u32 rx, tx;

	if (ring->rx_mini_pending || ring->rx_jumbo_pending) {
		NL_SET_ERR_MSG_MOD(extack, "no mini or jumbo rings");
		return -EINVAL;
	}
	if (ipng_ring_size_round(ring->rx_pending, ipd->rx_ring_max, &rx) ||
	    ipng_ring_size_round(ring->tx_pending, ipd->tx_ring_max, &tx)) {
		NL_SET_ERR_MSG_MOD(extack, "ring sizes must be 64 to the maximum ethtool -g shows");
		return -EINVAL;
	}
	return ipng_chans_set(ipd, ipd->nchans, tx, rx, extack);
}

/* ---- interrupt moderation ---- */

static int ipng_get_coalesce(struct net_device *ndev,
			     struct ethtool_coalesce *ec,
			     struct kernel_ethtool_coalesce *kec,
			     struct netlink_ext_ack *extack)
{
	ipng_coal_to_ethtool(&ipng_priv(ndev)->coal, ec);
	return 0;
}

static int ipng_set_coalesce(struct net_device *ndev,
			     struct ethtool_coalesce *ec,
			     struct kernel_ethtool_coalesce *kec,
			     struct netlink_ext_ack *extack)
{
	struct ipng_coal coal;
	int err;

	err = ipng_coal_check(ec, extack);
	if (err)
		return err;
	ipng_coal_from_ethtool(&coal, ec);
	ipng_chans_set_coal(ipng_priv(ndev), &coal);
	return 0;
}

/* ---- counters ---- */

static int ipng_get_sset_count(struct net_device *ndev, int sset)
{
	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return IPNG_STAT_MAX + ipng_priv(ndev)->nchans * IPNG_CHAN_STATS;
}

/*
 * The interface's counters in table order, then ch<N>_<name> for every
 * channel in use.
 */
static void ipng_get_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	unsigned int i, j, n = ipng_priv(ndev)->nchans;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < IPNG_STAT_MAX; i++)
		ethtool_puts(&data, ipng_stat_names[i]);
	for (i = 0; i < n; i++)
		for (j = 0; j < IPNG_CHAN_STATS; j++)
			ethtool_sprintf(&data, "ch%u_%s", i,
					ipng_chan_stat_names[j]);
}

static void ipng_get_ethtool_stats(struct net_device *ndev,
				   struct ethtool_stats *stats, u64 *data)
{
	struct ipng_dev *ipd = ipng_priv(ndev);
	struct ipng_chan_counters *per, total;
	unsigned int i, n = ipd->nchans;

	ipng_stats_read(ipd, data);
	data += IPNG_STAT_MAX;
	per = kcalloc(IPNG_MAX_CHANNELS, sizeof(*per), GFP_KERNEL);
	if (!per) {
		memset(data, 0, n * IPNG_CHAN_STATS * sizeof(*data));
		return;
	}
	ipng_chans_read(ipd, per, &total);
	for (i = 0; i < n; i++) {
		*data++ = per[i].rx_packets;
		*data++ = per[i].rx_bytes;
		*data++ = per[i].tx_packets;
		*data++ = per[i].tx_bytes;
		*data++ = per[i].polls;
		*data++ = per[i].events;
		*data++ = per[i].holdoffs;
	}
	kfree(per);
}

/* By ethtool command: reading first, then what is tuned with -L, -G, -C. */
const struct ethtool_ops ipng_ethtool_ops = {
	/* plain ethtool and -i */
	.get_link		= ethtool_op_get_link,
	.get_link_ksettings	= ipng_get_link_ksettings,
	.get_drvinfo		= ipng_get_drvinfo,
	/* -S */
	.get_sset_count		= ipng_get_sset_count,
	.get_strings		= ipng_get_strings,
	.get_ethtool_stats	= ipng_get_ethtool_stats,
	/* -l/-L */
	.get_channels		= ipng_get_channels,
	.set_channels		= ipng_set_channels,
	/* -g/-G */
	.get_ringparam		= ipng_get_ringparam,
	.set_ringparam		= ipng_set_ringparam,
	/* -c/-C, with the parameters ipoib_moder.h lists */
	.get_coalesce		= ipng_get_coalesce,
	.set_coalesce		= ipng_set_coalesce,
	.supported_coalesce_params = IPNG_COAL_PARAMS,
};
