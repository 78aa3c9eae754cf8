/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel interfaces that differ between the kernels ipoib_ng builds
 * against, and the shims that let the driver use one spelling.
 *
 * Nothing here compares kernel versions: distribution kernels backport
 * interfaces, so each difference is found by a probe. Kbuild runs
 * compat/conftest.sh, which compiles every compat/probes/<name>.c with the
 * module's compiler and flags and writes ipoib_compat_gen.h in the build
 * directory with IPNG_HAVE_<NAME> for each probe that compiled. The probes:
 *
 *   linux_unaligned_h   <linux/unaligned.h> (6.12; <asm/unaligned.h> before)
 *   assign_str_one_arg  __assign_str(field) without the source (6.10)
 *   net_hotdata         net_hotdata.max_backlog (6.9; netdev_max_backlog)
 *   header_parse_dev    header_ops.parse(skb, dev, haddr) (6.12)
 *   sa_path_cb_uint     ib_sa_path_rec_get() callback's count is unsigned
 *   ethtool_puts        ethtool_puts() for an unformatted name (6.8)
 *
 * Driver code is written against the newest of each; a shim below gives
 * older kernels the same spelling. To support a new kernel, add a probe
 * and its shim here; driver logic does not change. Documentation/ipoib_ng.rst
 * ("Kernels") says how.
 */
#ifndef IPNG_COMPAT_H
#define IPNG_COMPAT_H

#include <linux/netdevice.h>
#include "ipoib_compat_gen.h"

#ifdef IPNG_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#ifdef IPNG_HAVE_NET_HOTDATA
#include <net/hotdata.h>
#endif

/* ethtool_puts(&data, str): a name of ethtool's string table (6.8). */
#ifndef IPNG_HAVE_ETHTOOL_PUTS
#include <linux/ethtool.h>
#include <linux/string.h>

static inline void ethtool_puts(u8 **data, const char *str)
{
	strscpy_pad(*data, str, ETH_GSTRING_LEN);
	*data += ETH_GSTRING_LEN;
}
#endif

/* The most packets a receive backlog may hold (sysctl net.core.netdev_max_backlog). */
static inline int ipng_max_backlog(void)
{
#ifdef IPNG_HAVE_NET_HOTDATA
	return READ_ONCE(net_hotdata.max_backlog);
#else
	return READ_ONCE(netdev_max_backlog);
#endif
}

/*
 * IPNG_ASSIGN_STR(field, src) in TP_fast_assign: copy a __string() field.
 * @src must be the source given to __string(); newer kernels take it from
 * there and accept only the field.
 */
#ifdef IPNG_HAVE_ASSIGN_STR_ONE_ARG
#define IPNG_ASSIGN_STR(field, src)	do { (void)(src); __assign_str(field); } while (0)
#else
#define IPNG_ASSIGN_STR(field, src)	__assign_str(field, src)
#endif

/*
 * header_ops.parse: the driver writes fn(skb, dev, haddr).
 * IPNG_HEADER_PARSE_ADAPTER(fn); defines what kernels that pass no device
 * need (an adapter that passes skb->dev) and asserts that what .parse gets
 * has the member's type; IPNG_HEADER_PARSE(fn) names the function for the
 * .parse member.
 */
#ifdef IPNG_HAVE_HEADER_PARSE_DEV
#define IPNG_HEADER_PARSE_ADAPTER(fn)					\
static_assert(__same_type(&(fn), ((struct header_ops *)NULL)->parse))
#define IPNG_HEADER_PARSE(fn)		fn
#else
#define IPNG_HEADER_PARSE_ADAPTER(fn)					\
static int fn##_nodev(const struct sk_buff *skb, unsigned char *haddr)	\
{									\
	return fn(skb, skb->dev, haddr);				\
}									\
static_assert(__same_type(&fn##_nodev, ((struct header_ops *)NULL)->parse))

#define IPNG_HEADER_PARSE(fn)		fn##_nodev
#endif

/*
 * ib_sa_path_rec_get() callbacks: the driver writes
 * fn(status, resp, unsigned int num_prs, context). The same pair of macros
 * as for header_ops.parse adapts it where the count is an int.
 */
#ifdef IPNG_HAVE_SA_PATH_CB_UINT
#define IPNG_SA_PATH_CB_ADAPTER(fn)					\
static_assert(__same_type(&(fn),						\
			  void (*)(int, struct sa_path_rec *, unsigned int, void *)))
#define IPNG_SA_PATH_CB(fn)		fn
#else
#define IPNG_SA_PATH_CB_ADAPTER(fn)					\
static void fn##_int(int status, struct sa_path_rec *resp, int num_prs,	\
		     void *context)					\
{									\
	fn(status, resp, num_prs > 0 ? num_prs : 0, context);		\
}									\
static_assert(__same_type(&fn##_int,					\
			  void (*)(int, struct sa_path_rec *, int, void *)))

#define IPNG_SA_PATH_CB(fn)		fn##_int
#endif

#endif /* IPNG_COMPAT_H */
