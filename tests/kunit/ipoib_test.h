/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KUnit suites of ipoib_ng_test.ko; ipoib_test_main.c registers them.
 */
#ifndef IPNG_TEST_H
#define IPNG_TEST_H

#include <kunit/test.h>
#include <linux/string.h>

/*
 * KUnit in 6.1 has no memory comparison assertion: compare and print both
 * buffers in hex on failure (at most 64 bytes, the %ph limit).
 */
#define IPNG_EXPECT_MEMEQ_MSG(test, got, want, size, fmt, ...)		\
	do {								\
		const void *__got = (got);				\
		const void *__want = (want);				\
		int __size = (size);					\
									\
		KUNIT_EXPECT_TRUE_MSG(test, !memcmp(__got, __want, __size), \
				      fmt ": got %*phN, want %*phN",	\
				      ##__VA_ARGS__, __size, __got,	\
				      __size, __want);			\
	} while (0)
#define IPNG_EXPECT_MEMEQ(test, got, want, size)			\
	IPNG_EXPECT_MEMEQ_MSG(test, got, want, size, "%s", #got)

extern struct kunit_suite ipng_wire_suite;
extern struct kunit_suite ipng_params_suite;
extern struct kunit_suite ipng_mcast_suite;
extern struct kunit_suite ipng_sa_suite;
extern struct kunit_suite ipng_mode_suite;
extern struct kunit_suite ipng_cm_suite;
extern struct kunit_suite ipng_cm_caps_suite;
extern struct kunit_suite ipng_moder_suite;
extern struct kunit_suite ipng_dp_suite;
extern struct kunit_suite ipng_compat_suite;
extern struct kunit_suite ipng_child_suite;

#endif /* IPNG_TEST_H */
