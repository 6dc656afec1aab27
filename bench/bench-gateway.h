/* bench-gateway.h — a loopback upstream and raw HTTP/1.1 keep-alive clients
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

guint16  bench_upstream_start      (void);
int      bench_client_connect_tcp  (guint16     port);
int      bench_client_connect_unix (const char *path);
gboolean bench_client_get          (int         fd,
                                    const char *request,
                                    gsize       request_length);

/* A client of bench_rate(): @open makes its connection (in its own
 * thread), @request makes one request on it (FALSE: it failed), @close
 * ends it. */
typedef struct
{
  gpointer (*open)    (gpointer    data);
  gboolean (*request) (gpointer    connection,
                       gpointer    data);
  void     (*close)   (gpointer    connection);
  gpointer data;
} BenchRateClient;

double   bench_rate                (const BenchRateClient *client,
                                    guint                  n_clients,
                                    double                 seconds);

char    *bench_relay_start         (const char *directory,
                                    guint16     upstream_port,
                                    guint       n_threads);
