// SPDX-License-Identifier: GPL-2.0
/*
 * __assign_str() takes only the field, the source being the one given to
 * __string() (6.10; it took the source again before). Only preprocessed
 * (conftest: preprocess): a call with the wrong number of arguments is a
 * preprocessor error, and the expansion itself is not compiled. Kernels
 * without the trace stage headers (before 5.18) fail it too, and they had
 * the two-argument form.
 */
#include <linux/tracepoint.h>
#include <trace/stages/stage6_event_callback.h>

__assign_str(probe)
