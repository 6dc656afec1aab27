/* bench-proxy.h — HTTPS through the allow-list's proxy, and pip through it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

void bench_proxy (const char *state_root,
                  gboolean    quick);

G_END_DECLS
