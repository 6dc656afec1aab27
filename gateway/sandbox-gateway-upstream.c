/* sandbox-gateway-upstream.c — libcurl's multi interface on a GMainContext
 *
 * The gateway forwards with libcurl's multi interface driven by the gateway
 * thread's main context: libcurl tells us which sockets to watch and when to
 * wake it, and we map that onto GSources. Concurrent requests and keep-alive
 * connection reuse then cost no threads. Easy handles are kept for reuse, so
 * the per-request path allocates little.
 *
 * Everything here runs on the context the upstream was created for.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <glib-unix.h>

#include "sandbox-gateway-upstream-private.h"

/* More idle easy handles than the gateway's in-flight limit are never needed. */
#define MAX_IDLE_EASY_HANDLES 16

struct _SandboxUpstream
{
  CURLM *multi;
  GMainContext *context;
  GSource *timer;
  gint64 timer_expiry_us;
  GPtrArray *idle_easies;
};

typedef struct
{
  SandboxUpstreamDone done;
  gpointer user_data;
} Transfer;

typedef struct
{
  GSource source;
  SandboxUpstream *upstream;
  curl_socket_t fd;
  gpointer tag;
} SocketWatch;

static void
drive (SandboxUpstream *self,
       curl_socket_t    fd,
       int              events)
{
  CURLMsg *message;
  int running = 0;
  int queued = 0;

  curl_multi_socket_action (self->multi, fd, events, &running);

  while ((message = curl_multi_info_read (self->multi, &queued)) != NULL)
    {
      CURL *easy = message->easy_handle;
      CURLcode result = message->data.result;
      Transfer *transfer = NULL;

      if (message->msg != CURLMSG_DONE)
        continue;

      curl_easy_getinfo (easy, CURLINFO_PRIVATE, (char **) &transfer);
      curl_multi_remove_handle (self->multi, easy);
      curl_easy_setopt (easy, CURLOPT_PRIVATE, NULL);

      if (transfer != NULL)
        {
          Transfer copy = *transfer;

          g_free (transfer);
          copy.done (easy, result, copy.user_data);
        }
    }
}

static gboolean
dispatch_socket_watch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  SocketWatch *watch = (SocketWatch *) source;
  GIOCondition condition = g_source_query_unix_fd (source, watch->tag);
  int events = 0;

  if (condition & G_IO_IN)
    events |= CURL_CSELECT_IN;
  if (condition & G_IO_OUT)
    events |= CURL_CSELECT_OUT;
  if (condition & (G_IO_ERR | G_IO_HUP))
    events |= CURL_CSELECT_ERR;

  drive (watch->upstream, watch->fd, events);

  return G_SOURCE_CONTINUE;
}

static GSourceFuncs socket_watch_funcs = {
  .dispatch = dispatch_socket_watch,
};

static GIOCondition
condition_for (int what)
{
  switch (what)
    {
    case CURL_POLL_IN:
      return G_IO_IN | G_IO_HUP | G_IO_ERR;
    case CURL_POLL_OUT:
      return G_IO_OUT | G_IO_HUP | G_IO_ERR;
    case CURL_POLL_INOUT:
      return G_IO_IN | G_IO_OUT | G_IO_HUP | G_IO_ERR;
    default:
      return 0;
    }
}

static int
on_curl_socket (CURL          *easy,
                curl_socket_t  fd,
                int            what,
                void          *user_data,
                void          *socket_data)
{
  SandboxUpstream *self = user_data;
  SocketWatch *watch = socket_data;

  if (what == CURL_POLL_REMOVE)
    {
      if (watch != NULL)
        {
          curl_multi_assign (self->multi, fd, NULL);
          g_source_destroy ((GSource *) watch);
          g_source_unref ((GSource *) watch);
        }
      return 0;
    }

  if (watch == NULL)
    {
      watch = (SocketWatch *) g_source_new (&socket_watch_funcs, sizeof (SocketWatch));
      watch->upstream = self;
      watch->fd = fd;
      watch->tag = g_source_add_unix_fd ((GSource *) watch, fd, condition_for (what));
      g_source_set_static_name ((GSource *) watch, "[sandbox] upstream socket");
      g_source_attach ((GSource *) watch, self->context);
      curl_multi_assign (self->multi, fd, watch);
    }
  else
    {
      g_source_modify_unix_fd ((GSource *) watch, watch->tag, condition_for (what));
    }

  return 0;
}

static gboolean
dispatch_timer (GSource     *source,
                GSourceFunc  callback,
                gpointer     user_data)
{
  SandboxUpstream *self = user_data;

  /* A source that was ready in this iteration is dispatched even if libcurl
   * moved its timer meanwhile; libcurl only reports changes, so keep it. */
  if (self->timer_expiry_us >= 0 && g_get_monotonic_time () < self->timer_expiry_us)
    {
      g_source_set_ready_time (source, self->timer_expiry_us);
      return G_SOURCE_CONTINUE;
    }

  if (self->timer_expiry_us >= 0)
    {
      self->timer_expiry_us = -1;
      drive (self, CURL_SOCKET_TIMEOUT, 0);
    }

  /* Unless libcurl asked for a new timeout meanwhile, stop firing. */
  if (self->timer_expiry_us < 0)
    g_source_set_ready_time (source, -1);

  return G_SOURCE_CONTINUE;
}

static GSourceFuncs timer_funcs = {
  .dispatch = dispatch_timer,
};

static int
on_curl_timer (CURLM    *multi,
               long      timeout_ms,
               void     *user_data)
{
  SandboxUpstream *self = user_data;

  /* libcurl forbids calling back into it from here, so a zero timeout is also
   * deferred to the next iteration of the context. */
  gint64 ready_us = g_source_get_ready_time (self->timer);

  if (timeout_ms < 0)
    self->timer_expiry_us = -1;
  else
    self->timer_expiry_us = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  /* g_source_set_ready_time() wakes the context up even from its own thread,
   * and libcurl moves its timer several times per transfer: only an earlier
   * expiry moves the source; a later or removed one is found when it fires. */
  if (self->timer_expiry_us >= 0 && (ready_us < 0 || ready_us > self->timer_expiry_us))
    g_source_set_ready_time (self->timer, self->timer_expiry_us);

  return 0;
}

SandboxUpstream *
sandbox_upstream_new (GMainContext *context)
{
  SandboxUpstream *self = g_new0 (SandboxUpstream, 1);

  self->context = g_main_context_ref (context);
  self->timer_expiry_us = -1;
  self->idle_easies = g_ptr_array_new_with_free_func ((GDestroyNotify) curl_easy_cleanup);

  self->timer = g_source_new (&timer_funcs, sizeof (GSource));
  g_source_set_callback (self->timer, NULL, self, NULL);
  g_source_set_static_name (self->timer, "[sandbox] upstream timer");
  g_source_attach (self->timer, context);

  self->multi = curl_multi_init ();
  curl_multi_setopt (self->multi, CURLMOPT_SOCKETFUNCTION, on_curl_socket);
  curl_multi_setopt (self->multi, CURLMOPT_SOCKETDATA, self);
  curl_multi_setopt (self->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
  curl_multi_setopt (self->multi, CURLMOPT_TIMERDATA, self);
  /* libcurl sizes its connection cache from the transfers added at the time
   * (four per transfer), and a gateway removes each transfer when it ends:
   * with many requests in flight, connections would be closed and opened
   * again all the time. Keep one per possible request in flight, and more. */
  curl_multi_setopt (self->multi, CURLMOPT_MAXCONNECTS, 64L);

  return self;
}

/* The caller must have cancelled every transfer it started. */
void
sandbox_upstream_free (SandboxUpstream *self)
{
  if (self == NULL)
    return;

  /* Idle handles go first: their cleanup may still close cached connections
   * through the multi handle's socket callback. */
  g_ptr_array_unref (self->idle_easies);
  curl_multi_cleanup (self->multi);

  g_source_destroy (self->timer);
  g_source_unref (self->timer);
  g_main_context_unref (self->context);
  g_free (self);
}

/* A reset easy handle, reused when one is idle. */
CURL *
sandbox_upstream_take_easy (SandboxUpstream *self)
{
  if (self->idle_easies->len > 0)
    {
      CURL *easy = g_ptr_array_steal_index_fast (self->idle_easies, self->idle_easies->len - 1);

      curl_easy_reset (easy);
      return easy;
    }

  return curl_easy_init ();
}

void
sandbox_upstream_return_easy (SandboxUpstream *self,
                              CURL            *easy)
{
  if (easy == NULL)
    return;

  if (self->idle_easies->len < MAX_IDLE_EASY_HANDLES)
    g_ptr_array_add (self->idle_easies, easy);
  else
    curl_easy_cleanup (easy);
}

gboolean
sandbox_upstream_start (SandboxUpstream     *self,
                        CURL                *easy,
                        SandboxUpstreamDone  done,
                        gpointer             user_data)
{
  Transfer *transfer = g_new (Transfer, 1);

  transfer->done = done;
  transfer->user_data = user_data;
  curl_easy_setopt (easy, CURLOPT_PRIVATE, transfer);

  if (curl_multi_add_handle (self->multi, easy) != CURLM_OK)
    {
      curl_easy_setopt (easy, CURLOPT_PRIVATE, NULL);
      g_free (transfer);
      return FALSE;
    }

  /* Adding a transfer sets libcurl's timer to zero: start it now rather
   * than one main-loop iteration later (the completion callback may run
   * from here when the transfer fails at once). */
  if (self->timer_expiry_us >= 0 && self->timer_expiry_us <= g_get_monotonic_time ())
    {
      self->timer_expiry_us = -1;
      drive (self, CURL_SOCKET_TIMEOUT, 0);
    }

  return TRUE;
}

/* Stops a running transfer without calling its completion callback. */
void
sandbox_upstream_cancel (SandboxUpstream *self,
                         CURL            *easy)
{
  Transfer *transfer = NULL;

  curl_easy_getinfo (easy, CURLINFO_PRIVATE, (char **) &transfer);
  curl_multi_remove_handle (self->multi, easy);
  curl_easy_setopt (easy, CURLOPT_PRIVATE, NULL);
  g_free (transfer);
}
