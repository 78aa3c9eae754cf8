// SPDX-License-Identifier: GPL-2.0
/*
 * ipoib_ng_test.ko: registers every KUnit suite of the driver. A module can
 * register suites only once, so the suites live in their own files and are
 * collected here.
 */
#include <linux/module.h>

#include "ipoib_test.h"

kunit_test_suites(&ipng_wire_suite, &ipng_params_suite, &ipng_mcast_suite,
		  &ipng_sa_suite, &ipng_mode_suite, &ipng_cm_suite,
		  &ipng_cm_caps_suite,
		  &ipng_moder_suite, &ipng_dp_suite, &ipng_compat_suite,
		  &ipng_child_suite);

MODULE_DESCRIPTION("KUnit tests for ipoib_ng");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
