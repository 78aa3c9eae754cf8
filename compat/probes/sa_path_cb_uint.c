// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sa_path_rec_get()'s callback counts the records in an unsigned int
 * (6.x; an int when the count was added in 6.0).
 */
#include <rdma/ib_sa.h>

static void ipng_probe_done(int status, struct sa_path_rec *resp,
			    unsigned int num_prs, void *context)
{
}

int ipng_probe(struct ib_sa_client *client, struct ib_device *dev,
	       struct sa_path_rec *rec, struct ib_sa_query **query);
int ipng_probe(struct ib_sa_client *client, struct ib_device *dev,
	       struct sa_path_rec *rec, struct ib_sa_query **query)
{
	return ib_sa_path_rec_get(client, dev, 1, rec, 0, 1000, GFP_KERNEL,
				  ipng_probe_done, NULL, query);
}
