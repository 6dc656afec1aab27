/* etcd-fixture.c — a real etcd on loopback for the cluster tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "etcd-fixture.h"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "sandbox-test-fixture.h"

#define ETCD_PATH "/usr/bin/etcd"
#define START_TIMEOUT_MS 20000

typedef struct
{
  char *name;
  char *client_url;
  char *extra_client_url;   /* on the caller's extra address, or NULL */
  char *peer_url;
  char *data_dir;
  GSubprocess *process;
  guint starts;
} Member;

struct _EtcdFixture
{
  char *directory;
  char *token;
  char *initial_cluster;
  char *endpoints;
  char *extra_endpoints;  /* NULL without an extra address */
  GPtrArray *members;     /* of Member */
  SoupSession *session;
};

gboolean
etcd_fixture_skip_if_missing (void)
{
  if (g_file_test (ETCD_PATH, G_FILE_TEST_IS_EXECUTABLE))
    return FALSE;
  g_test_skip (ETCD_PATH " is not installed (Debian package etcd-server; ./dev deps installs it)");
  return TRUE;
}

/* Ports the kernel calls free now: all bound at once, so none twice, then
 * released for etcd (a rare race with another process is retried by the
 * caller). */
static gboolean
find_free_ports (guint     n_ports,
                 guint16  *ports,
                 GError  **error)
{
  g_autoptr(GPtrArray) sockets = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < n_ports; i++)
    {
      g_autoptr(GSocket) socket = NULL;
      g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
      g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
      g_autoptr(GSocketAddress) bound = NULL;

      socket = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, error);
      if (socket == NULL || !g_socket_bind (socket, address, FALSE, error))
        return FALSE;
      bound = g_socket_get_local_address (socket, error);
      if (bound == NULL)
        return FALSE;
      ports[i] = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
      g_ptr_array_add (sockets, g_steal_pointer (&socket));
    }
  return TRUE;
}

static void
die_with_test (gpointer data)
{
  /* A test that aborts must not leave etcd running. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static gboolean
member_spawn (EtcdFixture  *self,
              Member       *member,
              GError      **error)
{
  g_autoptr(GSubprocessLauncher) launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_INHERIT);
  g_autofree char *log = g_strdup_printf ("%s/%s-%u.log", self->directory, member->name, member->starts++);
  g_autofree char *listen = member->extra_client_url != NULL
    ? g_strdup_printf ("%s,%s", member->client_url, member->extra_client_url)
    : g_strdup (member->client_url);

  g_subprocess_launcher_set_stdout_file_path (launcher, log);
  g_subprocess_launcher_set_stderr_file_path (launcher, log);
  g_subprocess_launcher_set_child_setup (launcher, die_with_test, NULL, NULL);
  member->process = g_subprocess_launcher_spawn (launcher, error, ETCD_PATH,
                                                 "--name", member->name,
                                                 "--data-dir", member->data_dir,
                                                 "--listen-client-urls", listen,
                                                 "--advertise-client-urls", member->client_url,
                                                 "--listen-peer-urls", member->peer_url,
                                                 "--initial-advertise-peer-urls", member->peer_url,
                                                 "--initial-cluster", self->initial_cluster,
                                                 "--initial-cluster-token", self->token,
                                                 "--initial-cluster-state", "new",
                                                 "--logger", "zap",
                                                 "--log-outputs", "stderr",
                                                 "--log-level", "warn",
                                                 NULL);
  return member->process != NULL;
}

static gboolean
member_is_running (Member *member)
{
  return member->process != NULL && g_subprocess_get_identifier (member->process) != NULL;
}

static void
member_exited (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  gboolean *exited = user_data;

  g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL);
  *exited = TRUE;
}

static gboolean
set_flag (gpointer user_data)
{
  *(gboolean *) user_data = TRUE;
  return G_SOURCE_REMOVE;
}

/* SIGTERM, and SIGKILL if the member is still there 5 s later. */
static void
member_stop (Member *member)
{
  g_autoptr(GMainContext) context = NULL;
  g_autoptr(GSource) timeout = NULL;
  gboolean exited = FALSE;
  gboolean timed_out = FALSE;

  if (member->process == NULL)
    return;
  context = g_main_context_new ();
  g_main_context_push_thread_default (context);
  g_subprocess_wait_async (member->process, NULL, member_exited, &exited);
  timeout = g_timeout_source_new_seconds (5);
  g_source_set_callback (timeout, set_flag, &timed_out, NULL);
  g_source_attach (timeout, context);

  g_subprocess_send_signal (member->process, SIGTERM);
  g_subprocess_send_signal (member->process, SIGCONT);   /* a stopped member must see it */
  while (!exited && !timed_out)
    g_main_context_iteration (context, TRUE);
  if (!exited)
    g_subprocess_force_exit (member->process);
  while (!exited)
    g_main_context_iteration (context, TRUE);
  g_source_destroy (timeout);
  g_main_context_pop_thread_default (context);
  g_clear_object (&member->process);
}

static void
member_free (Member *member)
{
  member_stop (member);
  g_free (member->name);
  g_free (member->client_url);
  g_free (member->extra_client_url);
  g_free (member->peer_url);
  g_free (member->data_dir);
  g_free (member);
}

void
etcd_fixture_free (EtcdFixture *self)
{
  if (self == NULL)
    return;
  g_ptr_array_unref (self->members);
  g_clear_object (&self->session);
  sandbox_test_remove_tree (self->directory);
  g_free (self->directory);
  g_free (self->token);
  g_free (self->initial_cluster);
  g_free (self->endpoints);
  g_free (self->extra_endpoints);
  g_free (self);
}

static char *
read_log_tail (EtcdFixture *self,
               Member      *member)
{
  g_autofree char *log = g_strdup_printf ("%s/%s-%u.log", self->directory, member->name,
                                          member->starts - 1);
  g_autofree char *contents = NULL;
  gsize length = 0;

  if (!g_file_get_contents (log, &contents, &length, NULL))
    return g_strdup ("(no log)");
  return g_strdup (contents + (length > 2000 ? length - 2000 : 0));
}

gboolean
etcd_fixture_wait_healthy (EtcdFixture  *self,
                           guint         index,
                           guint         timeout_ms,
                           GError      **error)
{
  Member *member = g_ptr_array_index (self->members, index);
  g_autofree char *url = g_strconcat (member->client_url, "/health", NULL);
  gint64 give_up = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  while (g_get_monotonic_time () < give_up)
    {
      g_autoptr(SoupMessage) message = soup_message_new (SOUP_METHOD_GET, url);
      g_autoptr(GBytes) body = NULL;

      if (!member_is_running (member))
        {
          g_autofree char *tail = read_log_tail (self, member);

          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       "etcd member %s exited while starting: %s", member->name, tail);
          return FALSE;
        }
      body = soup_session_send_and_read (self->session, message, NULL, NULL);
      if (body != NULL && soup_message_get_status (message) == 200
          && g_strstr_len (g_bytes_get_data (body, NULL), g_bytes_get_size (body),
                           "\"health\":\"true\"") != NULL)
        return TRUE;
      /* etcd has no readiness signal to wait on but its own health. */
      g_usleep (50 * 1000);
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
               "etcd member %s not healthy after %u ms", member->name, timeout_ms);
  return FALSE;
}

static EtcdFixture *
try_start (guint        n_members,
           const char  *extra_address,
           GError     **error)
{
  g_autoptr(EtcdFixture) self = g_new0 (EtcdFixture, 1);
  g_autofree guint16 *ports = g_new0 (guint16, n_members * 2);
  g_autoptr(GString) initial_cluster = g_string_new (NULL);
  g_autoptr(GString) endpoints = g_string_new (NULL);
  g_autoptr(GString) extra_endpoints = g_string_new (NULL);
  g_autofree char *uuid = g_uuid_string_random ();

  self->members = g_ptr_array_new_with_free_func ((GDestroyNotify) member_free);
  self->directory = g_dir_make_tmp ("sandbox-etcd-XXXXXX", error);
  if (self->directory == NULL || !find_free_ports (n_members * 2, ports, error))
    return NULL;
  self->token = g_strdup_printf ("sandbox-test-%s", uuid);
  self->session = soup_session_new_with_options ("timeout", 2, NULL);
  soup_session_set_proxy_resolver (self->session, NULL);

  for (guint i = 0; i < n_members; i++)
    {
      Member *member = g_new0 (Member, 1);

      member->name = g_strdup_printf ("m%u", i);
      member->client_url = g_strdup_printf ("http://127.0.0.1:%u", ports[2 * i]);
      /* The same port: it was free on 127.0.0.1, so no wildcard socket holds it. */
      if (extra_address != NULL)
        member->extra_client_url = g_strdup_printf ("http://%s:%u", extra_address, ports[2 * i]);
      member->peer_url = g_strdup_printf ("http://127.0.0.1:%u", ports[2 * i + 1]);
      member->data_dir = g_build_filename (self->directory, member->name, NULL);
      g_string_append_printf (initial_cluster, "%s%s=%s", i > 0 ? "," : "",
                              member->name, member->peer_url);
      g_string_append_printf (endpoints, "%s%s", i > 0 ? "," : "", member->client_url);
      if (extra_address != NULL)
        g_string_append_printf (extra_endpoints, "%s%s", i > 0 ? "," : "",
                                member->extra_client_url);
      g_ptr_array_add (self->members, member);
    }
  self->initial_cluster = g_string_free (g_steal_pointer (&initial_cluster), FALSE);
  self->endpoints = g_string_free (g_steal_pointer (&endpoints), FALSE);
  if (extra_address != NULL)
    self->extra_endpoints = g_string_free (g_steal_pointer (&extra_endpoints), FALSE);

  for (guint i = 0; i < n_members; i++)
    if (!member_spawn (self, g_ptr_array_index (self->members, i), error))
      return NULL;
  for (guint i = 0; i < n_members; i++)
    if (!etcd_fixture_wait_healthy (self, i, START_TIMEOUT_MS, error))
      return NULL;
  return g_steal_pointer (&self);
}

EtcdFixture *
etcd_fixture_start (guint    n_members,
                    GError **error)
{
  return etcd_fixture_start_also_on (n_members, NULL, error);
}

EtcdFixture *
etcd_fixture_start_also_on (guint        n_members,
                            const char  *extra_address,
                            GError     **error)
{
  g_autoptr(GError) first_error = NULL;
  EtcdFixture *self;

  g_return_val_if_fail (n_members >= 1, NULL);

  /* A port taken between find_free_ports() and etcd's bind makes etcd exit:
   * one more try with new ports. */
  self = try_start (n_members, extra_address, &first_error);
  if (self == NULL)
    {
      g_test_message ("etcd did not start (%s); trying other ports", first_error->message);
      self = try_start (n_members, extra_address, error);
    }
  return self;
}

const char *
etcd_fixture_get_endpoints (EtcdFixture *self)
{
  return self->endpoints;
}

const char *
etcd_fixture_get_extra_endpoints (EtcdFixture *self)
{
  return self->extra_endpoints;
}

const char *
etcd_fixture_get_endpoint (EtcdFixture *self,
                           guint        index)
{
  return ((Member *) g_ptr_array_index (self->members, index))->client_url;
}

guint
etcd_fixture_get_n_members (EtcdFixture *self)
{
  return self->members->len;
}

/* The member's status: its own id and the leader's, as strings. */
static gboolean
member_status (EtcdFixture  *self,
               Member       *member,
               char        **out_member_id,
               char        **out_leader_id)
{
  g_autofree char *url = g_strconcat (member->client_url, "/v3/maintenance/status", NULL);
  g_autoptr(SoupMessage) message = soup_message_new (SOUP_METHOD_POST, url);
  g_autoptr(GBytes) request = g_bytes_new_static ("{}", 2);
  g_autoptr(GBytes) body = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *root;
  JsonObject *header;

  if (!member_is_running (member))
    return FALSE;
  soup_message_set_request_body_from_bytes (message, "application/json", request);
  body = soup_session_send_and_read (self->session, message, NULL, NULL);
  if (body == NULL || soup_message_get_status (message) != 200
      || !json_parser_load_from_data (parser, g_bytes_get_data (body, NULL), g_bytes_get_size (body), NULL)
      || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    return FALSE;
  root = json_node_get_object (json_parser_get_root (parser));
  header = json_object_get_object_member (root, "header");
  if (header == NULL || !json_object_has_member (header, "member_id")
      || !json_object_has_member (root, "leader"))
    return FALSE;
  *out_member_id = g_strdup (json_object_get_string_member (header, "member_id"));
  *out_leader_id = g_strdup (json_object_get_string_member (root, "leader"));
  return TRUE;
}

int
etcd_fixture_get_leader (EtcdFixture  *self,
                         GError      **error)
{
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *leader = NULL;

  for (guint i = 0; i < self->members->len; i++)
    {
      g_autofree char *member_id = NULL;
      g_autofree char *leader_id = NULL;

      if (member_status (self, g_ptr_array_index (self->members, i), &member_id, &leader_id))
        {
          if (leader == NULL && g_strcmp0 (leader_id, "0") != 0)
            leader = g_steal_pointer (&leader_id);
          g_ptr_array_add (ids, g_steal_pointer (&member_id));
        }
      else
        g_ptr_array_add (ids, NULL);
    }
  for (guint i = 0; leader != NULL && i < ids->len; i++)
    if (g_strcmp0 (g_ptr_array_index (ids, i), leader) == 0)
      return (int) i;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no etcd member reports a leader");
  return -1;
}

void
etcd_fixture_stop_member (EtcdFixture *self,
                          guint        index)
{
  member_stop (g_ptr_array_index (self->members, index));
}

gboolean
etcd_fixture_restart_member (EtcdFixture  *self,
                             guint         index,
                             GError      **error)
{
  Member *member = g_ptr_array_index (self->members, index);

  member_stop (member);
  /* The data directory exists: etcd ignores the initial-cluster flags and
   * rejoins as the member it was. */
  return member_spawn (self, member, error);
}

void
etcd_fixture_signal_member (EtcdFixture *self,
                            guint        index,
                            int          signum)
{
  Member *member = g_ptr_array_index (self->members, index);

  g_return_if_fail (member_is_running (member));
  g_subprocess_send_signal (member->process, signum);
}

char *
etcd_fixture_get_value (EtcdFixture  *self,
                        const char   *key,
                        GError      **error)
{
  g_autofree char *encoded_key = g_base64_encode ((const guchar *) key, strlen (key));
  g_autofree char *request_text = g_strdup_printf ("{\"key\":\"%s\"}", encoded_key);

  for (guint i = 0; i < self->members->len; i++)
    {
      Member *member = g_ptr_array_index (self->members, i);
      g_autofree char *url = g_strconcat (member->client_url, "/v3/kv/range", NULL);
      g_autoptr(SoupMessage) message = NULL;
      g_autoptr(GBytes) request = NULL;
      g_autoptr(GBytes) body = NULL;
      g_autoptr(JsonParser) parser = json_parser_new ();
      JsonObject *root;
      JsonArray *kvs;
      gsize length = 0;
      g_autofree guchar *value = NULL;

      if (!member_is_running (member))
        continue;
      message = soup_message_new (SOUP_METHOD_POST, url);
      request = g_bytes_new (request_text, strlen (request_text));
      soup_message_set_request_body_from_bytes (message, "application/json", request);
      body = soup_session_send_and_read (self->session, message, NULL, NULL);
      if (body == NULL || soup_message_get_status (message) != 200
          || !json_parser_load_from_data (parser, g_bytes_get_data (body, NULL),
                                          g_bytes_get_size (body), NULL)
          || !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
        continue;
      root = json_node_get_object (json_parser_get_root (parser));
      /* The gateway omits an empty range's "kvs". */
      kvs = json_object_has_member (root, "kvs") ? json_object_get_array_member (root, "kvs")
                                                 : NULL;
      if (kvs == NULL || json_array_get_length (kvs) == 0)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "no key %s in etcd", key);
          return NULL;
        }
      value = g_base64_decode (json_object_get_string_member (json_array_get_object_element (kvs, 0),
                                                              "value"), &length);
      return g_strndup ((const char *) value, length);
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "no etcd member answered a range of %s", key);
  return NULL;
}

/* POSTs @request_text to @path of the first member that answers 200. */
static gboolean
post_to_any_member (EtcdFixture  *self,
                    const char   *path,
                    const char   *request_text,
                    const char   *key,
                    GError      **error)
{
  for (guint i = 0; i < self->members->len; i++)
    {
      Member *member = g_ptr_array_index (self->members, i);
      g_autofree char *url = g_strconcat (member->client_url, path, NULL);
      g_autoptr(SoupMessage) message = NULL;
      g_autoptr(GBytes) request = NULL;
      g_autoptr(GBytes) body = NULL;

      if (!member_is_running (member))
        continue;
      message = soup_message_new (SOUP_METHOD_POST, url);
      request = g_bytes_new (request_text, strlen (request_text));
      soup_message_set_request_body_from_bytes (message, "application/json", request);
      body = soup_session_send_and_read (self->session, message, NULL, NULL);
      if (body != NULL && soup_message_get_status (message) == 200)
        return TRUE;
    }
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "no etcd member answered %s of %s",
               path, key);
  return FALSE;
}

gboolean
etcd_fixture_put_value (EtcdFixture  *self,
                        const char   *key,
                        const char   *value,
                        GError      **error)
{
  g_autofree char *encoded_key = g_base64_encode ((const guchar *) key, strlen (key));
  g_autofree char *encoded_value = g_base64_encode ((const guchar *) value, strlen (value));
  g_autofree char *request_text = g_strdup_printf ("{\"key\":\"%s\",\"value\":\"%s\"}",
                                                   encoded_key, encoded_value);

  return post_to_any_member (self, "/v3/kv/put", request_text, key, error);
}

gboolean
etcd_fixture_delete_key (EtcdFixture  *self,
                         const char   *key,
                         GError      **error)
{
  g_autofree char *encoded_key = g_base64_encode ((const guchar *) key, strlen (key));
  g_autofree char *request_text = g_strdup_printf ("{\"key\":\"%s\"}", encoded_key);

  return post_to_any_member (self, "/v3/kv/deleterange", request_text, key, error);
}
