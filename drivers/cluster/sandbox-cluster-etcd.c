/* sandbox-cluster-etcd.c — requests to etcd's v3 HTTP/JSON gateway
 *
 * The transport: one POST per call, the endpoints tried in order, each
 * attempt bounded by its own timeout and by the caller's cancellable, the
 * reply read into a bounded buffer.
 *
 * All the HTTP I/O of the process runs on one thread of its own, with one
 * main context, as libsoup recommends: a connection lives in the context
 * that made it (its closing included), so connections made from a sync
 * call's short-lived private context would never be cleaned up and would
 * soon exhaust the session's connection limit. The caller's task is
 * created in the caller's context and completes there; only the attempts
 * run on the I/O thread. What the bodies mean is in
 * sandbox-cluster-etcd-json.c (the strict reply parsers) and
 * sandbox-cluster-etcd-ops.c (the requests).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <libsoup/soup.h>

#include <sandbox-backend-driver.h>

#include "sandbox-cluster-etcd-call-private.h"
#include "sandbox-context-thread-private.h"

static SandboxContextThread io_thread = SANDBOX_CONTEXT_THREAD_INIT ("sandbox-cluster-etcd");

struct _SandboxClusterEtcd
{
  GObject parent_instance;

  char **endpoints;     /* "http://host:port", no trailing slash */
  guint timeout_ms;
  SoupSession *session; /* made, used and dropped on the I/O thread */
};

G_DEFINE_FINAL_TYPE (SandboxClusterEtcd, sandbox_cluster_etcd, G_TYPE_OBJECT)

/* Not g_main_context_invoke(): it would run @func right here whenever the
 * I/O thread happens not to hold its context. */
static void
run_on_io_thread (GSourceFunc func,
                  gpointer    data)
{
  g_autoptr(GSource) idle = g_idle_source_new ();

  g_source_set_callback (idle, func, data, NULL);
  sandbox_context_thread_attach (&io_thread, idle);
}

static gboolean
drop_session (gpointer session)
{
  g_object_unref (session);
  return G_SOURCE_REMOVE;
}

static void
sandbox_cluster_etcd_finalize (GObject *object)
{
  SandboxClusterEtcd *self = SANDBOX_CLUSTER_ETCD (object);

  g_strfreev (self->endpoints);
  /* No call is in flight (each holds a reference): the session goes away
   * where it lived. */
  if (self->session != NULL)
    run_on_io_thread (drop_session, g_steal_pointer (&self->session));

  G_OBJECT_CLASS (sandbox_cluster_etcd_parent_class)->finalize (object);
}

static void
sandbox_cluster_etcd_class_init (SandboxClusterEtcdClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_cluster_etcd_finalize;
}

static void
sandbox_cluster_etcd_init (SandboxClusterEtcd *self)
{
}

/* An endpoint is a bare http(s) origin: the paths are ours to append. */
static char *
normalize_endpoint (const char  *endpoint,
                    GError     **error)
{
  g_autoptr(GUri) uri = NULL;
  const char *scheme;
  const char *path;

  uri = g_uri_parse (endpoint, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL)
    goto invalid;
  scheme = g_uri_get_scheme (uri);
  path = g_uri_get_path (uri);
  if ((g_strcmp0 (scheme, "http") != 0 && g_strcmp0 (scheme, "https") != 0)
      || g_uri_get_host (uri) == NULL || g_uri_get_host (uri)[0] == '\0'
      || g_uri_get_userinfo (uri) != NULL
      || g_uri_get_query (uri) != NULL || g_uri_get_fragment (uri) != NULL
      || (path[0] != '\0' && strcmp (path, "/") != 0))
    goto invalid;

  return g_uri_join (G_URI_FLAGS_NONE, scheme, NULL, g_uri_get_host (uri),
                     g_uri_get_port (uri), "", NULL, NULL);

invalid:
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "Expected an etcd endpoint such as http://127.0.0.1:2379, got \"%s\"",
               endpoint);
  return NULL;
}

static gboolean
make_session (gpointer data)
{
  SandboxClusterEtcd *self = data;

  /* The host's proxy environment must not route cluster traffic, and our
   * own timeouts (per attempt, in ms) replace soup's (in seconds). */
  self->session = soup_session_new_with_options ("max-conns-per-host", 16,
                                                 "timeout", 0,
                                                 "user-agent", "libsandbox-cluster/" PACKAGE_VERSION,
                                                 NULL);
  soup_session_set_proxy_resolver (self->session, NULL);
  return G_SOURCE_REMOVE;
}

SandboxClusterEtcd *
sandbox_cluster_etcd_new (const char *const  *endpoints,
                          guint               timeout_ms,
                          GError            **error)
{
  g_autoptr(SandboxClusterEtcd) self = NULL;
  g_autoptr(GPtrArray) normalized = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; endpoints != NULL && endpoints[i] != NULL; i++)
    {
      char *endpoint = normalize_endpoint (endpoints[i], error);

      if (endpoint == NULL)
        return NULL;
      g_ptr_array_add (normalized, endpoint);
    }
  if (normalized->len == 0)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Expected at least one etcd endpoint");
      return NULL;
    }
  g_ptr_array_add (normalized, NULL);

  self = g_object_new (SANDBOX_CLUSTER_TYPE_ETCD, NULL);
  self->endpoints = (char **) g_ptr_array_free (g_steal_pointer (&normalized), FALSE);
  self->timeout_ms = timeout_ms != 0 ? timeout_ms : SANDBOX_CLUSTER_ETCD_DEFAULT_TIMEOUT_MS;
  sandbox_context_thread_invoke_sync (&io_thread, make_session, self);

  return g_steal_pointer (&self);
}

SandboxClusterEtcd *
sandbox_cluster_etcd_new_from_list (const char  *endpoints,
                                    guint        timeout_ms,
                                    GError     **error)
{
  g_auto(GStrv) list = g_strsplit (endpoints != NULL ? endpoints : "", ",", -1);

  for (guint i = 0; list[i] != NULL; i++)
    g_strstrip (list[i]);

  return sandbox_cluster_etcd_new ((const char *const *) list, timeout_ms, error);
}

const char *const *
sandbox_cluster_etcd_get_endpoints (SandboxClusterEtcd *self)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_ETCD (self), NULL);

  return (const char *const *) self->endpoints;
}

guint
sandbox_cluster_etcd_get_timeout_ms (SandboxClusterEtcd *self)
{
  g_return_val_if_fail (SANDBOX_CLUSTER_IS_ETCD (self), 0);

  return self->timeout_ms;
}

/* ------------------------------------------------------------------------ */
/* One call: POST @path with a JSON body, endpoint after endpoint.           */

typedef struct
{
  SandboxClusterEtcd *self;
  char *path;
  GBytes *body;
  guint endpoint;              /* the endpoint of the current attempt */
  GString *failures;           /* "endpoint: why; …" for the final error */

  /* The current attempt. */
  GCancellable *attempt_cancellable;
  gulong cancelled_id;
  GSource *timeout_source;
  gboolean timed_out;
  SoupMessage *message;
  GInputStream *stream;
  GByteArray *reply;
} EtcdCall;

static void
etcd_call_end_attempt (EtcdCall *call,
                       GTask    *task)
{
  if (call->cancelled_id != 0)
    g_cancellable_disconnect (g_task_get_cancellable (task), call->cancelled_id);
  call->cancelled_id = 0;
  if (call->timeout_source != NULL)
    g_source_destroy (call->timeout_source);
  g_clear_pointer (&call->timeout_source, g_source_unref);
  g_clear_object (&call->attempt_cancellable);
  g_clear_object (&call->message);
  g_clear_object (&call->stream);
  g_clear_pointer (&call->reply, g_byte_array_unref);
}

static void
etcd_call_free (EtcdCall *call)
{
  g_clear_object (&call->self);
  g_free (call->path);
  g_bytes_unref (call->body);
  g_string_free (call->failures, TRUE);
  g_assert (call->attempt_cancellable == NULL);
  g_free (call);
}

static void etcd_call_attempt (GTask *task);

static void
etcd_call_cancel_attempt (GCancellable *outer,
                          GCancellable *attempt)
{
  g_cancellable_cancel (attempt);
}

static gboolean
etcd_call_timed_out (gpointer data)
{
  EtcdCall *call = data;

  call->timed_out = TRUE;
  g_cancellable_cancel (call->attempt_cancellable);
  return G_SOURCE_REMOVE;
}

/* The current endpoint did not answer: note why, then try the next one, or
 * give up with UNAVAILABLE naming them all. The caller's cancellation ends
 * the call at once. */
static void
etcd_call_attempt_failed (GTask        *task,
                          const char   *why)
{
  EtcdCall *call = g_task_get_task_data (task);
  const char *endpoint = call->self->endpoints[call->endpoint];

  etcd_call_end_attempt (call, task);
  if (g_cancellable_is_cancelled (g_task_get_cancellable (task)))
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                               "etcd request %s cancelled", call->path);
      g_object_unref (task);
      return;
    }

  g_string_append_printf (call->failures, "%s%s: %s",
                          call->failures->len > 0 ? "; " : "", endpoint, why);
  call->endpoint++;
  if (call->self->endpoints[call->endpoint] == NULL)
    {
      g_task_return_new_error (task, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                               "etcd is unavailable (%s)", call->failures->str);
      g_object_unref (task);
      return;
    }
  etcd_call_attempt (task);
}

static void
etcd_call_attempt_failed_with (GTask  *task,
                               GError *error)
{
  EtcdCall *call = g_task_get_task_data (task);
  g_autofree char *why = NULL;

  if (call->timed_out)
    why = g_strdup_printf ("no reply to %s within %u ms", call->path, call->self->timeout_ms);
  else
    why = g_strdup (error->message);
  etcd_call_attempt_failed (task, why);
}

static void
etcd_call_reply_complete (GTask *task)
{
  EtcdCall *call = g_task_get_task_data (task);
  guint status = soup_message_get_status (call->message);
  g_autoptr(GBytes) body = NULL;
  EtcdReply *reply;

  /* A member without quorum, or one shutting down, answers 5xx: another
   * member may still serve the request. 4xx are the request's own fault
   * and an answer like any other (the parsers turn them into errors). */
  if (status >= 500)
    {
      g_autofree char *why = g_strdup_printf ("HTTP %u to %s", status, call->path);
      etcd_call_attempt_failed (task, why);
      return;
    }

  body = g_byte_array_free_to_bytes (g_steal_pointer (&call->reply));
  reply = etcd_reply_new (call->self->endpoints[call->endpoint], status, body);
  etcd_call_end_attempt (call, task);
  g_task_return_pointer (task, reply, (GDestroyNotify) etcd_reply_free);
  g_object_unref (task);
}

static void
etcd_call_read_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  GTask *task = user_data;
  EtcdCall *call = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) chunk = NULL;

  chunk = g_input_stream_read_bytes_finish (G_INPUT_STREAM (source), result, &error);
  if (chunk == NULL)
    {
      etcd_call_attempt_failed_with (task, error);
      return;
    }
  if (g_bytes_get_size (chunk) == 0)
    {
      etcd_call_reply_complete (task);
      return;
    }
  if (call->reply->len + g_bytes_get_size (chunk) > SANDBOX_CLUSTER_ETCD_MAX_REPLY_BYTES)
    {
      const char *endpoint = call->self->endpoints[call->endpoint];

      /* Not an endpoint failure to route around: the store's answer is too
       * big, and any member would give the same. */
      etcd_call_end_attempt (call, task);
      g_task_return_new_error (task, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                               "etcd reply from %s to %s exceeds %u bytes",
                               endpoint, call->path, SANDBOX_CLUSTER_ETCD_MAX_REPLY_BYTES);
      g_object_unref (task);
      return;
    }
  g_byte_array_append (call->reply, g_bytes_get_data (chunk, NULL), g_bytes_get_size (chunk));
  g_input_stream_read_bytes_async (call->stream, 64 * 1024, G_PRIORITY_DEFAULT,
                                   call->attempt_cancellable, etcd_call_read_cb, task);
}

static void
etcd_call_sent_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  GTask *task = user_data;
  EtcdCall *call = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  call->stream = soup_session_send_finish (SOUP_SESSION (source), result, &error);
  if (call->stream == NULL)
    {
      etcd_call_attempt_failed_with (task, error);
      return;
    }
  call->reply = g_byte_array_new ();
  g_input_stream_read_bytes_async (call->stream, 64 * 1024, G_PRIORITY_DEFAULT,
                                   call->attempt_cancellable, etcd_call_read_cb, task);
}

/* On the I/O thread. */
static void
etcd_call_attempt (GTask *task)
{
  EtcdCall *call = g_task_get_task_data (task);
  g_autofree char *url = g_strconcat (call->self->endpoints[call->endpoint], call->path, NULL);
  GCancellable *outer = g_task_get_cancellable (task);

  call->timed_out = FALSE;
  call->attempt_cancellable = g_cancellable_new ();
  if (outer != NULL)
    call->cancelled_id = g_cancellable_connect (outer, G_CALLBACK (etcd_call_cancel_attempt),
                                                g_object_ref (call->attempt_cancellable),
                                                g_object_unref);
  call->timeout_source = g_timeout_source_new (call->self->timeout_ms);
  g_source_set_callback (call->timeout_source, etcd_call_timed_out, call, NULL);
  g_source_attach (call->timeout_source, g_main_context_get_thread_default ());

  call->message = soup_message_new (SOUP_METHOD_POST, url);
  soup_message_set_request_body_from_bytes (call->message, "application/json", call->body);
  soup_session_send_async (call->self->session, call->message, G_PRIORITY_DEFAULT,
                           call->attempt_cancellable, etcd_call_sent_cb, task);
}

static gboolean
etcd_call_first_attempt (gpointer task)
{
  etcd_call_attempt (task);
  return G_SOURCE_REMOVE;
}

/* Completes with an EtcdReply (etcd_call_finish) from the first endpoint
 * that answers. */
void
etcd_call_async (SandboxClusterEtcd  *self,
                 const char          *path,
                 JsonNode            *body,
                 GCancellable        *cancellable,
                 gpointer             source_tag,
                 GAsyncReadyCallback  callback,
                 gpointer             user_data)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  EtcdCall *call = g_new0 (EtcdCall, 1);
  g_autofree char *json = json_to_string (body, FALSE);
  gsize json_length = strlen (json);

  g_task_set_source_tag (task, source_tag);
  g_task_set_name (task, path);
  call->self = g_object_ref (self);
  call->path = g_strdup (path);
  call->body = g_bytes_new_take (g_steal_pointer (&json), json_length);
  call->failures = g_string_new (NULL);
  g_task_set_task_data (task, call, (GDestroyNotify) etcd_call_free);

  if (g_task_return_error_if_cancelled (task))
    {
      g_object_unref (task);
      return;
    }
  run_on_io_thread (etcd_call_first_attempt, task);
}

EtcdReply *
etcd_call_finish (SandboxClusterEtcd  *self,
                  GAsyncResult        *result,
                  GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* ------------------------------------------------------------------------ */
/* Sync calls: the async call on a private main context, iterated here.     */

void
etcd_sync_begin (EtcdSync *sync)
{
  sync->context = g_main_context_new ();
  sync->result = NULL;
  g_main_context_push_thread_default (sync->context);
}

void
etcd_sync_done (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  EtcdSync *sync = user_data;

  sync->result = g_object_ref (result);
}

GAsyncResult *
etcd_sync_wait (EtcdSync *sync)
{
  while (sync->result == NULL)
    g_main_context_iteration (sync->context, TRUE);
  return sync->result;
}

void
etcd_sync_end (EtcdSync *sync)
{
  g_main_context_pop_thread_default (sync->context);
  g_clear_object (&sync->result);
  g_main_context_unref (sync->context);
}
