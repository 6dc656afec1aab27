/* sandbox-test-upstream.h — a loopback HTTP(S) server for the gateway's tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The upstream a gateway forwards to: a libsoup SoupServer on 127.0.0.1 in a
 * thread and main context of its own, so a test's own thread can block on
 * a guest's socket while the upstream answers. Every request that reaches
 * it is recorded (method, target, headers, body length) before the test's
 * handler sees it, so a test asks "what reached the upstream?" without a
 * handler of its own. Handlers run in the upstream's thread; they may
 * pause, hold or stream their answers with the helpers below.
 */

#pragma once

#include <gio/gio.h>
#include <libsoup/soup.h>

G_BEGIN_DECLS

typedef struct _SandboxTestUpstream SandboxTestUpstream;

typedef enum
{
  SANDBOX_TEST_UPSTREAM_NONE      = 0,
  /* Targets reach the handler as sent, not normalized (SoupServer:raw-paths). */
  SANDBOX_TEST_UPSTREAM_RAW_PATHS = 1 << 0,
  /* HTTPS with a certificate for 127.0.0.1 signed by a CA made for this
   * upstream alone (sandbox_test_upstream_get_ca_file()). */
  SANDBOX_TEST_UPSTREAM_TLS       = 1 << 1,
  /* On ::1 instead of 127.0.0.1: an origin ("http://[::1]:PORT") that a
   * sandbox's no_proxy (localhost, 127.0.0.1) does not exempt from its
   * proxy, so that the guest's clients go through the gateway. */
  SANDBOX_TEST_UPSTREAM_IPV6      = 1 << 2,
} SandboxTestUpstreamFlags;

/* One request as the upstream received it. */
typedef struct
{
  char *method;
  char *path;          /* the path, then "?" and the query when there is one */
  char *headers;       /* "name: value\n" lines, as received */
  gsize body_length;
} SandboxTestRequest;

SandboxTestUpstream *sandbox_test_upstream_start       (SandboxTestUpstreamFlags  flags,
                                                        SoupServerCallback        handler,
                                                        gpointer                  data);
void                 sandbox_test_upstream_stop        (SandboxTestUpstream      *upstream);

guint16              sandbox_test_upstream_get_port    (SandboxTestUpstream      *upstream);
const char          *sandbox_test_upstream_get_origin  (SandboxTestUpstream      *upstream);
const char          *sandbox_test_upstream_get_ca_file (SandboxTestUpstream      *upstream);
GMainContext        *sandbox_test_upstream_get_context (SandboxTestUpstream      *upstream);
gboolean             sandbox_test_upstream_is_stopping (SandboxTestUpstream      *upstream);

guint                sandbox_test_upstream_count       (SandboxTestUpstream      *upstream);
void                 sandbox_test_upstream_wait_for    (SandboxTestUpstream      *upstream,
                                                        guint                     count);
SandboxTestRequest  *sandbox_test_upstream_get         (SandboxTestUpstream      *upstream,
                                                        guint                     index);
char                *sandbox_test_upstream_dup_last_header (SandboxTestUpstream  *upstream,
                                                        const char               *name);
void                 sandbox_test_upstream_assert_targets_clean (SandboxTestUpstream *upstream);

void                 sandbox_test_upstream_schedule    (SandboxTestUpstream      *upstream,
                                                        guint                     interval_ms,
                                                        GSourceFunc               func,
                                                        gpointer                  data,
                                                        GDestroyNotify            destroy);
void                 sandbox_test_upstream_hold        (SandboxTestUpstream      *upstream,
                                                        SoupServerMessage        *msg);
guint                sandbox_test_upstream_count_held_closed (SandboxTestUpstream *upstream);

void                 sandbox_test_upstream_answer_echo (SoupServerMessage        *msg,
                                                        SandboxTestRequest       *request);
void                 sandbox_test_upstream_start_chunked (SoupServerMessage      *msg,
                                                        const char               *content_type);
void                 sandbox_test_upstream_append      (SoupServerMessage        *msg,
                                                        const char               *text);
void                 sandbox_test_upstream_complete    (SoupServerMessage        *msg);
void                 sandbox_test_upstream_answer_events (SandboxTestUpstream    *upstream,
                                                        SoupServerMessage        *msg,
                                                        guint                     count,
                                                        guint                     every_ms);

SandboxTestRequest  *sandbox_test_request_of           (SoupServerMessage        *msg);
SandboxTestUpstream *sandbox_test_upstream_of          (SoupServerMessage        *msg);

/* A streamed answer in progress: what a handler's scheduled callbacks
 * share. @finished turns TRUE when the message ends (the gateway went
 * away); stop sending once sandbox_test_sender_is_done(). */
typedef struct
{
  SandboxTestUpstream *upstream;
  SoupServerMessage *msg;
  guint sent;
  guint total;
  gsize bulk_left;
  gulong finished_id;
  gboolean finished;
  gpointer data;                /* the handler's, for its own callbacks */
} SandboxTestSender;

SandboxTestSender   *sandbox_test_sender_new           (SandboxTestUpstream      *upstream,
                                                        SoupServerMessage        *msg);
gboolean             sandbox_test_sender_is_done       (SandboxTestSender        *sender);
void                 sandbox_test_sender_free          (gpointer                  sender);
gint64               sandbox_test_upstream_bulk_written (SandboxTestUpstream     *upstream);
void                 sandbox_test_upstream_answer_bulk (SandboxTestUpstream      *upstream,
                                                        SoupServerMessage        *msg,
                                                        gsize                     bytes);

guint                sandbox_test_query_uint           (GHashTable               *query,
                                                        const char               *name,
                                                        guint                     fallback);

gboolean             sandbox_test_make_certificate     (const char               *directory,
                                                        GError                  **error);

G_END_DECLS
