/* cluster-driver-kit.c — hosts of the `cluster` driver as processes, for its tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "cluster-driver-kit.h"
#include "sandbox-test-fixture.h"

#include <signal.h>
#include <string.h>

static void
host_free (Host *host)
{
  if (g_subprocess_get_identifier (host->process) != NULL)
    {
      g_subprocess_send_signal (host->process, SIGCONT);
      g_output_stream_close (host->input, NULL, NULL);   /* exits at end of input */
    }
  g_subprocess_wait (host->process, NULL, NULL);
  g_clear_object (&host->process);
  g_clear_object (&host->output);
  g_free (host);
}

gboolean
fixture_start (Fixture    *fixture,
               const char *extra_address)
{
  g_autoptr(GError) error = NULL;

  fixture->hosts = g_ptr_array_new_with_free_func ((GDestroyNotify) host_free);
  if (etcd_fixture_skip_if_missing ())
    return FALSE;
  fixture->etcd = etcd_fixture_start_also_on (1, extra_address, &error);
  g_assert_no_error (error);
  fixture->base = sandbox_test_state_directory_new ();
  fixture->store = g_build_filename (fixture->base, "store", NULL);
  return TRUE;
}

void
fixture_stop (Fixture *fixture)
{
  g_clear_pointer (&fixture->hosts, g_ptr_array_unref);
  g_clear_pointer (&fixture->etcd, etcd_fixture_free);
  sandbox_test_remove_tree (fixture->base);
  g_clear_pointer (&fixture->base, g_free);
  g_clear_pointer (&fixture->store, g_free);
}

void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  fixture_start (fixture, NULL);
}

void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  fixture_stop (fixture);
}

char *
host_reply (Host *host)
{
  g_autoptr(GError) error = NULL;
  char *line = g_data_input_stream_read_line_utf8 (host->output, NULL, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (line);
  return line;
}

void
host_send (Host       *host,
           const char *command)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line = g_strconcat (command, "\n", NULL);

  g_output_stream_write_all (host->input, line, strlen (line), NULL, NULL, &error);
  g_assert_no_error (error);
}

char *
host_call (Host       *host,
           const char *command)
{
  host_send (host, command);
  return host_reply (host);
}

char *
host_ok (Host       *host,
         const char *command)
{
  g_autofree char *reply = host_call (host, command);

  if (!g_str_has_prefix (reply, "ok"))
    g_error ("‘%s’ failed: %s", command, reply);
  return g_strdup (reply[2] == ' ' ? reply + 3 : "");
}

char *
host_spawn (Fixture             *fixture,
            const char * const  *wrapper,
            const char          *endpoints,
            Host               **out)
{
  return host_spawn_as (fixture, wrapper, endpoints, fixture->hosts->len, out);
}

char *
host_spawn_as (Fixture             *fixture,
               const char * const  *wrapper,
               const char          *endpoints,
               guint                index,
               Host               **out)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *directory = g_path_get_dirname (self);
  g_autofree char *helper = g_build_filename (directory, "cluster-driver-host", NULL);
  g_autofree char *id = g_strdup_printf ("host-%u", index);
  g_autofree char *state = g_build_filename (fixture->base, id, NULL);
  g_autofree char *ttl = g_strdup_printf ("%d", TTL_SECONDS);
  g_autoptr(GStrvBuilder) argv = g_strv_builder_new ();
  g_auto(GStrv) args = NULL;
  Host *host = g_new0 (Host, 1);
  char *line;

  if (wrapper != NULL)
    g_strv_builder_addv (argv, (const char **) wrapper);
  g_strv_builder_add_many (argv, helper, "--endpoints", endpoints, "--state", state,
                           "--store", fixture->store, "--id", id, "--ttl", ttl, NULL);
  args = g_strv_builder_end (argv);
  host->process = g_subprocess_newv ((const char * const *) args,
                                     G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                     &error);
  g_assert_no_error (error);
  host->output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (host->process));
  host->input = g_subprocess_get_stdin_pipe (host->process);
  g_ptr_array_add (fixture->hosts, host);
  line = host_reply (host);
  *out = host;
  return line;
}

Host *
host_start (Fixture *fixture)
{
  Host *host = NULL;
  g_autofree char *line = host_spawn (fixture, NULL, etcd_fixture_get_endpoints (fixture->etcd),
                                      &host);

  g_assert_cmpstr (line, ==, "ready");
  return host;
}

char *
hosts_start_two (Fixture  *fixture,
                 Host    **a,
                 Host    **b)
{
  char *key;

  *a = host_start (fixture);
  *b = host_start (fixture);
  key = host_ok (*a, "prewarm");
  g_free (host_ok (*b, "prewarm"));
  return key;
}

char *
make_session (Host *host)
{
  g_autofree char *key = host_ok (host, "prewarm");
  g_autofree char *create = g_strdup_printf ("create %s", key);
  g_autofree char *id = host_ok (host, create);
  g_autofree char *resume = g_strdup_printf ("resume %s %s", key, id);

  g_free (host_ok (host, "write a checkpointed"));
  g_free (host_ok (host, "stop"));
  g_free (host_ok (host, resume));
  g_free (host_ok (host, "write a lost-in-the-crash"));
  return g_strdup_printf ("%s %s", key, id);
}

char *
resume_when_free (Host       *host,
                  const char *session,
                  gint64     *waited_ms)
{
  return resume_when_free_watching (host, session, NULL, NULL, waited_ms);
}

char *
resume_when_free_watching (Host         *host,
                           const char   *session,
                           BeforeResume  before_each,
                           gpointer      user_data,
                           gint64       *waited_ms)
{
  g_autofree char *command = g_strdup_printf ("resume %s", session);
  gint64 start = g_get_monotonic_time ();

  while (TRUE)
    {
      char *reply;

      if (before_each != NULL)
        before_each (user_data);
      reply = host_call (host, command);
      if (!g_str_has_prefix (reply, "error SANDBOX_BUSY") ||
          g_get_monotonic_time () - start > 30 * G_USEC_PER_SEC)
        {
          *waited_ms = (g_get_monotonic_time () - start) / 1000;
          return reply;
        }
      g_free (reply);
      g_usleep (100 * 1000);   /* polling etcd's view: no signal to wait on */
    }
}

gboolean
sleeper_runs (void)
{
  const char *argv[] = { "pgrep", "-f", "^/usr/bin/sleep 98765$", NULL };
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                NULL, NULL, NULL, NULL, &status, NULL);
  return g_spawn_check_wait_status (status, NULL);
}

/* Polling: the sleeper is another host's grandchild, no signal reaches
 * this process. */
gboolean
sleeper_becomes (gboolean expected)
{
  for (guint i = 0; i < 100; i++)
    {
      if (sleeper_runs () == expected)
        return TRUE;
      g_usleep (100 * 1000);
    }
  return FALSE;
}
