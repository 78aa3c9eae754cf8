// SPDX-License-Identifier: GPL-2.0
/*
 * softib: packet buffers.
 *
 * Owns the payload of a packet on the cable: allocated in order-0 pages
 * (post_send runs in atomic context and a 64 KiB connected-mode message
 * must not need a high-order page), filled from the sender's gather list
 * when the work request is posted, as a channel adapter reads it, and
 * copied into the receiver's scatter list at delivery.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include "softib.h"

/**
 * sib_pkt_alloc() - allocate a packet and room for its payload
 * @len: payload bytes (at most SIB_MAX_MSG)
 *
 * Return: the packet, zeroed but for its pages, or NULL.
 */
struct sib_pkt *sib_pkt_alloc(u32 len)
{
	unsigned int i, n = DIV_ROUND_UP(len, PAGE_SIZE);
	struct sib_pkt *pkt;

	pkt = kzalloc(struct_size(pkt, page, n), GFP_ATOMIC);
	if (!pkt)
		return NULL;
	for (i = 0; i < n; i++) {
		pkt->page[i] = (void *)__get_free_page(GFP_ATOMIC);
		if (!pkt->page[i])
			goto err;
		pkt->npages = i + 1;
	}
	pkt->len = len;
	return pkt;
err:
	sib_pkt_free(pkt);
	return NULL;
}

/**
 * sib_pkt_free() - free a packet and its payload
 * @pkt: the packet, or NULL
 */
void sib_pkt_free(struct sib_pkt *pkt)
{
	unsigned int i;

	if (!pkt)
		return;
	for (i = 0; i < pkt->npages; i++)
		free_page((unsigned long)pkt->page[i]);
	kfree(pkt);
}

/**
 * sib_pkt_clone() - copy a packet (multicast delivers one copy a port)
 * @pkt: the packet
 *
 * Return: the copy, not on any list, or NULL.
 */
struct sib_pkt *sib_pkt_clone(const struct sib_pkt *pkt)
{
	struct sib_pkt *copy = sib_pkt_alloc(pkt->len);
	unsigned int i, n;

	if (!copy)
		return NULL;
	n = copy->npages;
	memcpy(copy, pkt, offsetof(struct sib_pkt, npages));
	INIT_LIST_HEAD(&copy->list);
	for (i = 0; i < n; i++)
		memcpy(copy->page[i], pkt->page[i], PAGE_SIZE);
	return copy;
}

/* Copy @len bytes at payload offset @off to or from @buf. */
static void sib_pkt_copy(const struct sib_pkt *pkt, u32 off, void *buf,
			 u32 len, bool out)
{
	u32 n;

	while (len) {
		void *p = pkt->page[off / PAGE_SIZE] + off % PAGE_SIZE;

		n = min_t(u32, len, PAGE_SIZE - off % PAGE_SIZE);
		if (out)
			memcpy(buf, p, n);
		else
			memcpy(p, buf, n);
		buf += n;
		off += n;
		len -= n;
	}
}

/**
 * sib_pkt_gather() - fill a packet's payload from a gather list
 * @pkt: the packet, its length the sum of the list's lengths
 * @sge: the list (kernel-virtual addresses: the device has no DMA device)
 * @n: its entries
 */
void sib_pkt_gather(struct sib_pkt *pkt, const struct ib_sge *sge, int n)
{
	u32 off = 0;
	int i;

	for (i = 0; i < n; i++) {
		sib_pkt_copy(pkt, off, (void *)(uintptr_t)sge[i].addr,
			     sge[i].length, false);
		off += sge[i].length;
	}
}

/**
 * sib_pkt_scatter() - copy a packet's payload into a posted receive
 * @pkt: the packet
 * @wqe: the receive
 * @off: where in the receive's buffer the payload starts (UD leaves the
 *	40-byte GRH area before it)
 *
 * Return: the bytes copied (less than the payload if the buffer is short).
 */
u32 sib_pkt_scatter(const struct sib_pkt *pkt, const struct sib_rwqe *wqe,
		    u32 off)
{
	u32 done = 0, n;
	unsigned int i;

	for (i = 0; i < wqe->nsge && done < pkt->len; i++) {
		const struct ib_sge *sge = &wqe->sge[i];

		if (off >= sge->length) {
			off -= sge->length;
			continue;
		}
		n = min(sge->length - off, pkt->len - done);
		sib_pkt_copy(pkt, done, (void *)(uintptr_t)(sge->addr + off), n,
			     true);
		done += n;
		off = 0;
	}
	return done;
}
