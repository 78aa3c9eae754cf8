// SPDX-License-Identifier: GPL-2.0
/*
 * ib_device_ops.create_cq's third argument is the uverbs attribute bundle
 * (6.11 on), no longer the udata.
 */
#include <rdma/ib_verbs.h>

static int sib_probe_create_cq(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
			       struct uverbs_attr_bundle *attrs)
{
	return 0;
}

const struct ib_device_ops sib_probe_ops = { .create_cq = sib_probe_create_cq };
