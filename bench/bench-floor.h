/* bench-floor.h — raw bwrap with the driver's argument list
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

gboolean bench_floor_init (gboolean             seccomp,
                           GError             **error);
void     bench_floor_set_guest_ids (uid_t uid,
                                    gid_t gid);
void     bench_floor_set_driver_settings (gboolean    curated_etc,
                                          const char *git_name,
                                          const char *git_email,
                                          guint64     tmp_size);
int      bench_floor_run  (const char          *workspace,
                           const char * const  *argv_command,
                           GBytes              *stdin_data,
                           GByteArray          *output);
int      bench_floor_run_reference (const char         *workspace,
                                    const char * const *argv_command);
