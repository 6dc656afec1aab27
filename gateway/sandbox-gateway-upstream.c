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

#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "sandbox-gateway-upstream-private.h"

/* More idle easy handles than the gateway's in-flight limit are never needed. */
#define MAX_IDLE_EASY_HANDLES 16

/* Rounds of libcurl's zero timeout run at once, before going back to the
 * main loop. */
#define MAX_IMMEDIATE_TIMEOUTS 4

struct _SandboxUpstream
{
  CURLM *multi;
  GMainContext *context;
  GSource *timer;
  gint64 timer_expiry_us;
  guint driving;           /* depth of calls into libcurl */
  GPtrArray *idle_easies;
  GHashTable *watches;     /* fd → SocketWatch, for every watched socket */
  GHashTable *own_sockets; /* fds opened by open_socket(), until close_socket() */
};

typedef struct
{
  SandboxUpstreamDone done;
  gpointer user_data;
} Transfer;

/* Every change to a context's set of polled fds (adding or removing a
 * source with an fd, changing its events, or dispatching a source that may
 * not recurse) writes the context's wakeup eventfd and costs an extra main
 * loop iteration, even on the context's own thread. So the watch of a socket
 * libcurl opened lives as long as the socket: when libcurl stops watching a
 * keep-alive connection, the watch is parked, still polling, and only stops
 * polling if the idle connection turns readable (closed or garbage); libcurl
 * then finds the connection dead when it next tries to reuse it, and closes it
 * through close_socket(), which destroys the watch. */
typedef struct
{
  GSource source;
  SandboxUpstream *upstream;
  curl_socket_t fd;
  gpointer tag;            /* NULL while the fd is not polled */
  GIOCondition polled;     /* the events polled while tag is set */
  GIOCondition condition;  /* what libcurl asked for; 0 while parked */
  gboolean owned;          /* opened by open_socket() */
} SocketWatch;

static void
watch_destroy (SocketWatch *watch)
{
  g_source_destroy ((GSource *) watch);
  g_source_unref ((GSource *) watch);
}

/* Moves the timer source to libcurl's expiry when that is earlier; a later
 * or removed expiry is found when the source fires. */
static void
arm_timer (SandboxUpstream *self)
{
  gint64 ready_us = g_source_get_ready_time (self->timer);

  if (self->timer_expiry_us >= 0 && (ready_us < 0 || ready_us > self->timer_expiry_us))
    g_source_set_ready_time (self->timer, self->timer_expiry_us);
}

static gboolean
timer_is_due (SandboxUpstream *self)
{
  return self->timer_expiry_us >= 0 && self->timer_expiry_us <= g_get_monotonic_time ();
}

static void
socket_action (SandboxUpstream *self,
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

/* Lets libcurl act on @fd (or on its timer), then runs the zero timeouts it
 * asks for meanwhile right away rather than one main-loop iteration later
 * (libcurl forbids calling back into it from its timer callback), and only
 * then moves the timer source. */
static void
drive (SandboxUpstream *self,
       curl_socket_t    fd,
       int              events)
{
  self->driving++;

  socket_action (self, fd, events);
  for (guint i = 0; i < MAX_IMMEDIATE_TIMEOUTS && timer_is_due (self); i++)
    {
      self->timer_expiry_us = -1;
      socket_action (self, CURL_SOCKET_TIMEOUT, 0);
    }

  if (--self->driving == 0)
    arm_timer (self);
}

static gboolean
dispatch_socket_watch (GSource     *source,
                       GSourceFunc  callback,
                       gpointer     user_data)
{
  SocketWatch *watch = (SocketWatch *) source;
  GIOCondition condition = watch->tag != NULL ? g_source_query_unix_fd (source, watch->tag) : 0;
  int events = 0;

  if (condition == 0)
    return G_SOURCE_CONTINUE;

  /* A parked keep-alive connection turned readable: stop polling it until
   * libcurl wants it again (it will find it dead and close it). */
  if (watch->condition == 0 || (condition & G_IO_NVAL))
    {
      g_source_remove_unix_fd (source, watch->tag);
      watch->tag = NULL;
      return G_SOURCE_CONTINUE;
    }

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

static SocketWatch *
watch_new (SandboxUpstream *self,
           curl_socket_t    fd)
{
  SocketWatch *watch = (SocketWatch *) g_source_new (&socket_watch_funcs, sizeof (SocketWatch));

  watch->upstream = self;
  watch->fd = fd;
  watch->owned = g_hash_table_contains (self->own_sockets, GINT_TO_POINTER (fd));
  g_source_set_static_name ((GSource *) watch, "[sandbox] upstream socket");
  /* Nothing iterates the context from within a dispatch here, and a source
   * that may not recurse is taken out of the poll set while it runs. */
  g_source_set_can_recurse ((GSource *) watch, TRUE);
  g_source_attach ((GSource *) watch, self->context);
  g_hash_table_insert (self->watches, GINT_TO_POINTER (fd), watch);

  return watch;
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
  GIOCondition condition;

  if (what == CURL_POLL_REMOVE)
    {
      if (watch == NULL)
        return 0;

      curl_multi_assign (self->multi, fd, NULL);
      if (watch->owned)
        {
          watch->condition = 0;
        }
      else
        {
          g_hash_table_remove (self->watches, GINT_TO_POINTER (fd));
        }
      return 0;
    }

  if (watch == NULL)
    {
      watch = g_hash_table_lookup (self->watches, GINT_TO_POINTER (fd));
      if (watch == NULL)
        watch = watch_new (self, fd);
      curl_multi_assign (self->multi, fd, watch);
    }

  condition = condition_for (what);
  if (watch->tag == NULL)
    watch->tag = g_source_add_unix_fd ((GSource *) watch, fd, condition);
  else if (condition != watch->polled)
    g_source_modify_unix_fd ((GSource *) watch, watch->tag, condition);
  watch->polled = condition;
  watch->condition = condition;

  return 0;
}

/* libcurl's connections are opened and closed here, so that their watches
 * can outlive a transfer and still never outlive the socket. */
static curl_socket_t
open_socket (void                    *user_data,
             curlsocktype             purpose,
             struct curl_sockaddr    *address)
{
  SandboxUpstream *self = user_data;
  int fd = socket (address->family, address->socktype | SOCK_CLOEXEC, address->protocol);

  if (fd < 0)
    return CURL_SOCKET_BAD;

  g_hash_table_add (self->own_sockets, GINT_TO_POINTER (fd));
  return fd;
}

static int
close_socket (void          *user_data,
              curl_socket_t  fd)
{
  SandboxUpstream *self = user_data;
  SocketWatch *watch = g_hash_table_lookup (self->watches, GINT_TO_POINTER (fd));

  if (watch != NULL)
    g_hash_table_remove (self->watches, GINT_TO_POINTER (fd));
  g_hash_table_remove (self->own_sockets, GINT_TO_POINTER (fd));

  return close (fd);
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

  /* Point the source at libcurl's next expiry, or nowhere. */
  g_source_set_ready_time (source, self->timer_expiry_us);

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

  if (timeout_ms < 0)
    self->timer_expiry_us = -1;
  else
    self->timer_expiry_us = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  /* g_source_set_ready_time() wakes the context up even from its own thread,
   * and libcurl moves its timer several times per transfer: only an earlier
   * expiry moves the source, and only once libcurl has returned (a zero
   * timeout set while driving it is run by drive() at once). */
  if (self->driving == 0)
    arm_timer (self);

  return 0;
}

SandboxUpstream *
sandbox_upstream_new (GMainContext *context)
{
  SandboxUpstream *self = g_new0 (SandboxUpstream, 1);

  self->context = g_main_context_ref (context);
  self->timer_expiry_us = -1;
  self->idle_easies = g_ptr_array_new_with_free_func ((GDestroyNotify) curl_easy_cleanup);
  self->watches = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) watch_destroy);
  self->own_sockets = g_hash_table_new (NULL, NULL);

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
  g_hash_table_unref (self->watches);
  g_hash_table_unref (self->own_sockets);

  g_source_destroy (self->timer);
  g_source_unref (self->timer);
  g_main_context_unref (self->context);
  g_free (self);
}

static CURL *
set_socket_callbacks (SandboxUpstream *self,
                      CURL            *easy)
{
  if (easy != NULL)
    {
      curl_easy_setopt (easy, CURLOPT_OPENSOCKETFUNCTION, open_socket);
      curl_easy_setopt (easy, CURLOPT_OPENSOCKETDATA, self);
      curl_easy_setopt (easy, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
      curl_easy_setopt (easy, CURLOPT_CLOSESOCKETDATA, self);
    }

  return easy;
}

/* A reset easy handle, reused when one is idle. */
CURL *
sandbox_upstream_take_easy (SandboxUpstream *self)
{
  if (self->idle_easies->len > 0)
    {
      CURL *easy = g_ptr_array_steal_index_fast (self->idle_easies, self->idle_easies->len - 1);

      curl_easy_reset (easy);
      set_socket_callbacks (self, easy);
      return easy;
    }

  return set_socket_callbacks (self, curl_easy_init ());
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
  gboolean added;

  transfer->done = done;
  transfer->user_data = user_data;
  curl_easy_setopt (easy, CURLOPT_PRIVATE, transfer);

  self->driving++;
  added = curl_multi_add_handle (self->multi, easy) == CURLM_OK;
  self->driving--;

  if (!added)
    {
      curl_easy_setopt (easy, CURLOPT_PRIVATE, NULL);
      g_free (transfer);
      arm_timer (self);
      return FALSE;
    }

  /* Adding a transfer sets libcurl's timer to zero: start it now rather
   * than one main-loop iteration later (the completion callback may run
   * from here when the transfer fails at once). */
  if (timer_is_due (self))
    {
      self->timer_expiry_us = -1;
      drive (self, CURL_SOCKET_TIMEOUT, 0);
    }
  else
    {
      arm_timer (self);
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
