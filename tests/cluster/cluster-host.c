/* cluster-host.c — one cluster "host" as its own process, for the cluster tests
 *
 *   cluster-host --endpoints URLS --prefix /p/ --id HOST --ttl SECONDS
 *
 * Joins the cluster (one etcd lease) and prints "ready LEASE", or
 * "error CODE MESSAGE" and exits 1. Then reads one command a line on stdin
 * and answers one line on stdout ("ok …" or "error CODE MESSAGE"):
 *
 *   claim S                 → ok EPOCH
 *   commit S EPOCH T D|-    → ok           (D "-": no manifest)
 *   release S EPOCH         → ok
 *   delete S EPOCH          → ok
 *   read S                  → ok owner=H|- epoch=N manifest=D|- template=T|-
 *   register SLOTS T,T|-    → ok
 *   hosts                   → ok H:SLOTS …
 *   state                   → ok alive|lost
 *   plant-orphan S          → ok           (S's owner key put on no lease, as no host would)
 *
 * When the host is lost (::lost) it prints "lost" on a line of its own, at
 * once, whatever it is doing. End of input closes the host (revoking its
 * lease) and exits 0.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include <gio/gunixinputstream.h>
#include <sandbox.h>

#include "sandbox-cluster-etcd-private.h"
#include "sandbox-cluster-host-private.h"
#include "sandbox-cluster-owner-private.h"

typedef struct
{
  SandboxClusterHost *host;
  GDataInputStream *input;
  GMainLoop *loop;
} HostProcess;

static void
say (const char *format,
     ...) G_GNUC_PRINTF (1, 2);

static void
say (const char *format,
     ...)
{
  va_list args;

  va_start (args, format);
  vprintf (format, args);
  va_end (args);
  putchar ('\n');
  fflush (stdout);
}

static void
say_error (const GError *error)
{
  const char *code = error->domain == SANDBOX_ERROR ? sandbox_error_code_name (error->code)
                                                     : g_quark_to_string (error->domain);

  say ("error %s %s", code, error->message);
}

static void
on_lost (SandboxClusterHost *host,
         GError             *reason,
         gpointer            user_data)
{
  say ("lost");
}

static gint64
parse_epoch (const char *text)
{
  gint64 epoch = 0;

  g_ascii_string_to_signed (text, 10, G_MININT64, G_MAXINT64, &epoch, NULL);
  return epoch;
}

static void
run_command (HostProcess *process,
             char       **words)
{
  g_autoptr(GError) error = NULL;
  guint n = g_strv_length (words);
  const char *command = n > 0 ? words[0] : "";
  gint64 epoch = 0;

  if (strcmp (command, "claim") == 0 && n == 2)
    {
      if (sandbox_cluster_host_claim (process->host, words[1], &epoch, NULL, &error))
        say ("ok %" G_GINT64_FORMAT, epoch);
    }
  else if (strcmp (command, "commit") == 0 && n == 5)
    {
      if (sandbox_cluster_host_commit (process->host, words[1], parse_epoch (words[2]), words[3],
                                       strcmp (words[4], "-") == 0 ? NULL : words[4], NULL, &error))
        say ("ok");
    }
  else if (strcmp (command, "release") == 0 && n == 3)
    {
      if (sandbox_cluster_host_release (process->host, words[1], parse_epoch (words[2]), NULL, &error))
        say ("ok");
    }
  else if (strcmp (command, "delete") == 0 && n == 3)
    {
      if (sandbox_cluster_host_delete (process->host, words[1], parse_epoch (words[2]), NULL, &error))
        say ("ok");
    }
  else if (strcmp (command, "read") == 0 && n == 2)
    {
      g_autoptr(SandboxClusterSessionRecord) record = NULL;

      record = sandbox_cluster_host_read_session (process->host, words[1], NULL, &error);
      if (record != NULL)
        say ("ok owner=%s epoch=%" G_GINT64_FORMAT " manifest=%s template=%s",
             record->owner_host ? record->owner_host : "-", record->owner_epoch,
             record->manifest_digest ? record->manifest_digest : "-",
             record->template_key ? record->template_key : "-");
    }
  else if (strcmp (command, "register") == 0 && n == 3)
    {
      g_auto(GStrv) templates = strcmp (words[2], "-") == 0 ? g_new0 (char *, 1)
                                                             : g_strsplit (words[2], ",", -1);

      if (sandbox_cluster_host_register (process->host, (guint) parse_epoch (words[1]),
                                         (const char *const *) templates, NULL, &error))
        say ("ok");
    }
  else if (strcmp (command, "hosts") == 0 && n == 1)
    {
      g_autoptr(GPtrArray) hosts = sandbox_cluster_host_list_hosts (process->host, NULL, &error);
      g_autoptr(GString) line = g_string_new ("ok");

      for (guint i = 0; hosts != NULL && i < hosts->len; i++)
        {
          SandboxClusterHostInfo *info = g_ptr_array_index (hosts, i);

          g_string_append_printf (line, " %s:%u", info->host_id, info->free_slots);
        }
      if (hosts != NULL)
        say ("%s", line->str);
    }
  else if (strcmp (command, "plant-orphan") == 0 && n == 2)
    {
      g_autoptr(SandboxClusterEtcdTxn) txn = sandbox_cluster_etcd_txn_new ();
      g_autoptr(SandboxClusterEtcdTxnResult) result = NULL;
      g_autofree char *key = sandbox_cluster_host_key (process->host, "sessions", words[1],
                                                       "owner", NULL);
      g_autoptr(GBytes) value = g_bytes_new_static ("{\"host\":\"gone\",\"claim\":\"x\"}", 27);

      sandbox_cluster_etcd_txn_put (txn, TRUE, key, value, 0);
      result = sandbox_cluster_etcd_txn (sandbox_cluster_host_get_etcd (process->host), txn,
                                         NULL, &error);
      if (result != NULL)
        say ("ok");
    }
  else if (strcmp (command, "state") == 0 && n == 1)
    {
      say ("ok %s", sandbox_cluster_host_is_lost (process->host) ? "lost" : "alive");
    }
  else
    {
      say ("error USAGE unknown command");
    }

  if (error != NULL)
    say_error (error);
}

static void read_next (HostProcess *process);

static void
line_read (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  HostProcess *process = user_data;
  g_autofree char *line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (source),
                                                                     result, NULL, NULL);
  g_auto(GStrv) words = NULL;

  if (line == NULL)
    {
      g_main_loop_quit (process->loop);
      return;
    }
  words = g_strsplit (g_strstrip (line), " ", -1);
  run_command (process, words);
  read_next (process);
}

static void
read_next (HostProcess *process)
{
  g_data_input_stream_read_line_async (process->input, G_PRIORITY_DEFAULT, NULL, line_read, process);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *endpoints = NULL;
  g_autofree char *prefix = NULL;
  g_autofree char *id = NULL;
  int ttl = 0;
  int timeout_ms = 0;
  GOptionEntry entries[] = {
    { "endpoints", 0, 0, G_OPTION_ARG_STRING, &endpoints, "etcd client URLs, comma-separated", NULL },
    { "prefix", 0, 0, G_OPTION_ARG_STRING, &prefix, "the cluster's key prefix", NULL },
    { "id", 0, 0, G_OPTION_ARG_STRING, &id, "this host's id", NULL },
    { "ttl", 0, 0, G_OPTION_ARG_INT, &ttl, "lease TTL in seconds", NULL },
    { "timeout-ms", 0, 0, G_OPTION_ARG_INT, &timeout_ms, "per-request timeout", NULL },
    { NULL }
  };
  g_autoptr(GOptionContext) options = g_option_context_new ("- one cluster host");
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxClusterEtcd) etcd = NULL;
  g_autoptr(GInputStream) stdin_stream = NULL;
  HostProcess process = { 0 };

  g_option_context_add_main_entries (options, entries, NULL);
  if (!g_option_context_parse (options, &argc, &argv, &error))
    {
      say ("error USAGE %s", error->message);
      return 2;
    }

  etcd = sandbox_cluster_etcd_new_from_list (endpoints, MAX (timeout_ms, 0), &error);
  if (etcd != NULL)
    process.host = sandbox_cluster_host_new (etcd, prefix, id, MAX (ttl, 0), NULL, &error);
  if (process.host == NULL)
    {
      say_error (error);
      return 1;
    }
  g_signal_connect (process.host, "lost", G_CALLBACK (on_lost), NULL);
  say ("ready %" G_GINT64_FORMAT, sandbox_cluster_host_get_lease (process.host));

  stdin_stream = g_unix_input_stream_new (0, FALSE);
  process.input = g_data_input_stream_new (stdin_stream);
  process.loop = g_main_loop_new (NULL, FALSE);
  read_next (&process);
  g_main_loop_run (process.loop);

  sandbox_cluster_host_close (process.host);
  g_clear_object (&process.host);
  g_clear_object (&process.input);
  g_main_loop_unref (process.loop);
  return 0;
}
