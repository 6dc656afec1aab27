/* bench-floor.h — raw bwrap with the driver's argument list
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>
#include <sys/types.h>

/* A raw bwrap started ahead of time, and our ends of its pipes. */
typedef struct
{
  pid_t pid;
  int in_fd;
  int out_fd;
  int err_fd;
  int status_fd;
} BenchFloorChild;

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
gboolean bench_floor_start_reference (const char         *workspace,
                                      const char * const *argv_command,
                                      BenchFloorChild    *child);
gboolean bench_floor_start (const char         *workspace,
                            const char * const *argv_command,
                            BenchFloorChild    *child);
int      bench_floor_finish (BenchFloorChild *child,
                             GBytes          *stdin_data);
