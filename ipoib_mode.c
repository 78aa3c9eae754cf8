// SPDX-License-Identifier: GPL-2.0
/*
 * The interface mode (datagram or connected, RFC 4755) and the MTU rules
 * that follow from it: which MTU each mode allows, what happens to the MTU
 * when the mode or the datagram limit changes, ndo_change_mtu, and the
 * sysfs file /sys/class/net/<if>/mode.
 *
 * The mode is the IPNG_F_CONNECTED bit of &ipng_dev.flags, changed under
 * RTNL only. ndev->max_mtu is the largest MTU of either mode; the limit of
 * the current mode is enforced here, in ndo_change_mtu.
 */
#include <kunit/visibility.h>
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/rtnetlink.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <net/net_namespace.h>

#include "ipoib.h"

/**
 * ipng_mtu_limit() - largest MTU an interface may use in a mode
 * @connected: connected mode
 * @ud_mtu: datagram-mode limit (port MTU capped by the broadcast group)
 * @cm_mtu: connected-mode limit, 0 where the device has no RC support
 *
 * Pure.
 *
 * Return: @cm_mtu in connected mode where RC is supported, else @ud_mtu.
 */
int ipng_mtu_limit(bool connected, int ud_mtu, int cm_mtu)
{
	return connected && cm_mtu > 0 ? cm_mtu : ud_mtu;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mtu_limit);

/**
 * ipng_mtu_after_ud_change() - MTU to use once the datagram limit moved
 * @connected: connected mode
 * @mtu: the current MTU
 * @old_ud: datagram limit before the change (0 if there was none yet)
 * @new_ud: datagram limit now
 * @cm_mtu: connected-mode limit, 0 where the device has no RC support
 *
 * Pure. An MTU above the limit of the mode is lowered to it. In datagram
 * mode an MTU that sat at the old limit follows the new one, up or down,
 * so an interface left at its default keeps using the whole port MTU. In
 * connected mode the MTU is the user's choice and otherwise stays.
 *
 * Return: the MTU the interface should have.
 */
int ipng_mtu_after_ud_change(bool connected, int mtu, int old_ud, int new_ud,
			     int cm_mtu)
{
	/* Without RC support "connected" is datagram mode in effect. */
	bool datagram = !connected || cm_mtu <= 0;
	int limit = ipng_mtu_limit(connected, new_ud, cm_mtu);

	if (mtu > limit)
		return limit;
	if (datagram && mtu == old_ud)
		return new_ud;
	return mtu;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mtu_after_ud_change);

/**
 * ipng_mode_parse() - read a mode as written to the sysfs file
 * @buf: "datagram" or "connected", a trailing newline allowed
 * @connected: set to the mode read (untouched on error)
 *
 * Pure.
 *
 * Return: 0, or -EINVAL for anything else.
 */
int ipng_mode_parse(const char *buf, bool *connected)
{
	if (sysfs_streq(buf, "datagram"))
		*connected = false;
	else if (sysfs_streq(buf, "connected"))
		*connected = true;
	else
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_mode_parse);

static const char *ipng_mode_name(bool connected)
{
	return connected ? "connected" : "datagram";
}

/**
 * ipng_set_mode() - switch an interface to datagram or connected mode
 * @ipd: interface
 * @connected: the mode wanted
 * @extack: where to say why a request is refused (may be NULL)
 *
 * Called under RTNL. Connected mode needs a device with RC support. The
 * MTU does not grow by itself when connected mode is entered: users raise
 * it (up to ipng_cm_max_mtu()) once the peers are in connected mode too.
 * Back in datagram mode an MTU above the datagram limit is lowered to it
 * first, then our outgoing connections are torn down. Nothing changes
 * when an error is returned.
 *
 * Return: 0 (also when @ipd already is in that mode), -EOPNOTSUPP when the
 * device cannot do connected mode, or the error of the MTU change.
 */
int ipng_set_mode(struct ipng_dev *ipd, bool connected,
		  struct netlink_ext_ack *extack)
{
	struct net_device *ndev = ipd->ndev;
	int ud_mtu = READ_ONCE(ipd->ud_mtu);
	int err;

	ASSERT_RTNL();
	if (connected && ipng_cm_max_mtu(ipd) <= 0) {
		/* The sysfs file has no other way to say why. */
		if (!extack)
			netdev_warn(ndev, "connected mode refused: the RDMA device has no RC support\n");
		NL_SET_ERR_MSG(extack,
			       "connected mode needs RC support, which the RDMA device lacks");
		return -EOPNOTSUPP;
	}
	if (connected == ipng_connected(ipd))
		return 0;
	if (connected) {
		set_bit(IPNG_F_CONNECTED, &ipd->flags);
		netdev_info(ndev, "connected mode; MTU stays %u (connected-mode limit %d)\n",
			    ndev->mtu, ipng_cm_max_mtu(ipd));
		return 0;
	}
	/* Lower the MTU while still connected, where the MTU in use is
	 * allowed, so that a refused change leaves everything as it was.
	 */
	if (ndev->mtu > ud_mtu) {
		unsigned int old = ndev->mtu;

		err = dev_set_mtu(ndev, ud_mtu);
		if (err) {
			NL_SET_ERR_MSG(extack,
				       "the MTU could not be lowered to the datagram-mode limit");
			return err;
		}
		netdev_info(ndev, "datagram mode: MTU lowered from %u to the datagram-mode limit %d\n",
			    old, ud_mtu);
	} else {
		netdev_info(ndev, "datagram mode\n");
	}
	clear_bit(IPNG_F_CONNECTED, &ipd->flags);
	ipng_cm_flush_tx(ipd);
	return 0;
}

/**
 * ipng_change_mtu() - ndo_change_mtu: enforce the limit of the mode
 * @ndev: interface
 * @new_mtu: MTU asked for; the core has checked it against min/max_mtu
 *
 * Return: 0, or -EINVAL when @new_mtu is above the limit of the current
 * mode (ndev->max_mtu is the larger limit of both modes).
 */
int ipng_change_mtu(struct net_device *ndev, int new_mtu)
{
	struct ipng_dev *ipd = ipng_priv(ndev);
	bool connected = ipng_connected(ipd);
	int cm_mtu = ipng_cm_max_mtu(ipd);
	int limit = ipng_mtu_limit(connected, READ_ONCE(ipd->ud_mtu), cm_mtu);

	if (new_mtu > limit) {
		if (!connected && cm_mtu > limit)
			netdev_err(ndev, "MTU %d exceeds the datagram-mode limit %d; switch to connected mode for up to %d\n",
				   new_mtu, limit, cm_mtu);
		else
			netdev_err(ndev, "MTU %d exceeds the %s-mode limit %d\n",
				   new_mtu, ipng_mode_name(connected), limit);
		return -EINVAL;
	}
	WRITE_ONCE(ndev->mtu, new_mtu);
	return 0;
}

static ssize_t mode_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct ipng_dev *ipd = ipng_priv(to_net_dev(dev));

	return sysfs_emit(buf, "%s\n", ipng_mode_name(ipng_connected(ipd)));
}

/*
 * RTNL is only tried: unregistration holds it while it waits for this
 * file's writers to leave, so waiting for it here could deadlock. The
 * write is restarted instead.
 */
static ssize_t mode_store(struct device *dev, struct device_attribute *attr,
			  const char *buf, size_t len)
{
	struct net_device *ndev = to_net_dev(dev);
	bool connected;
	int err;

	if (!ns_capable(dev_net(ndev)->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	err = ipng_mode_parse(buf, &connected);
	if (err)
		return err;
	if (!rtnl_trylock())
		return restart_syscall();
	if (ndev->reg_state == NETREG_REGISTERED)
		err = ipng_set_mode(ipng_priv(ndev), connected, NULL);
	else
		err = -ENODEV;
	rtnl_unlock();
	return err ?: len;
}

/* One of the interface's attributes (ipng_sysfs_group, ipoib_child.c). */
struct device_attribute ipng_attr_mode = __ATTR_RW(mode);
