/* sandbox-stub-descriptor.h — a descriptor sent to the host (sandbox-stub-descriptor.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <stddef.h>

/* Sends @size bytes of @data on @channel with @fd attached (SCM_RIGHTS),
 * as one message. Returns 0, or -1 with errno set (EMSGSIZE for a short
 * send). @fd stays open. */
int stub_send_descriptor (int         channel,
                          const void *data,
                          size_t      size,
                          int         fd);
