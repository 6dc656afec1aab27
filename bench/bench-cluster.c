/* bench-cluster.c — resuming a checkpointed session on another host
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Two `cluster` backends in this process ("hosts" a and b: their own state
 * directories and etcd leases, one real etcd on loopback, one checkpoint
 * store) pass one session of @n_files files back and forth. Each round
 * resumes it where it was last stopped (the fast path: that host's copy is
 * at the checkpoint) and then on the other host (the checkpoint
 * materialised and imported), changing one file before each stop so every
 * checkpoint is new. Both are timed from create() to the live handle.
 */

#include "config.h"

#include <string.h>

#include <sandbox.h>

#include "bench-cluster.h"
#include "etcd-fixture.h"

static SandboxBackend *
make_host (const char  *state_root,
           const char  *id,
           const char  *endpoints,
           GError     **error)
{
  g_autofree char *state = g_build_filename (state_root, "cluster", id, NULL);
  g_autofree char *store = g_build_filename (state_root, "cluster", "store", NULL);

  return sandbox_backend_new ("cluster", NULL, error,
                              "endpoints", endpoints,
                              "state-directory", state,
                              "checkpoint-store", store,
                              "host-id", id,
                              "prefix", "/bench/",
                              NULL);
}

static SandboxTemplate *
many_files (guint n_files)
{
  SandboxTemplate *template_ = sandbox_template_new ("bench-cluster");

  for (guint i = 0; i < n_files; i++)
    {
      g_autofree char *path = g_strdup_printf ("src/d%02u/file-%04u.c", i % 50, i);
      g_autofree char *text = g_strdup_printf ("int f%u (void) { return %u; }\n", i, i);
      g_autoptr(GBytes) bytes = g_bytes_new_take (g_steal_pointer (&text), strlen (text));

      sandbox_template_add_file (template_, path, bytes, NULL);
    }
  return template_;
}

/* Resumes @state on @backend (timed), changes a file, stops it. */
static gboolean
resume_round (SandboxBackend  *backend,
              SandboxState    *state,
              guint            round,
              Samples         *samples,
              GError         **error)
{
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autofree char *text = g_strdup_printf ("round %u\n", round);
  double start = bench_now_us ();

  handle = sandbox_backend_create (backend, sandbox_state_get_template_key (state), state, deny,
                                   NULL, error);
  if (handle == NULL)
    return FALSE;
  samples_add (samples, bench_now_us () - start);
  return sandbox_session_write_text (sandbox_handle_get_session (handle), "round.txt", text,
                                     NULL, error) &&
         sandbox_handle_stop (handle, NULL, error);
}

gboolean
bench_cluster_resume (const char  *state_root,
                      guint        n_files,
                      guint        rounds,
                      Samples     *local,
                      Samples     *remote,
                      GError     **error)
{
  g_autoptr(EtcdFixture) etcd = etcd_fixture_start (1, error);
  g_autoptr(SandboxBackend) a = NULL;
  g_autoptr(SandboxBackend) b = NULL;
  g_autoptr(SandboxTemplate) template_ = many_files (n_files);
  g_autoptr(SandboxNetworkPolicy) deny = sandbox_network_policy_new_deny_all ();
  g_autoptr(SandboxHandle) handle = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autofree char *key = NULL;
  g_autofree char *key_b = NULL;
  SandboxBackend *hosts[2];

  if (etcd == NULL)
    return FALSE;
  a = make_host (state_root, "a", etcd_fixture_get_endpoints (etcd), error);
  b = a != NULL ? make_host (state_root, "b", etcd_fixture_get_endpoints (etcd), error) : NULL;
  if (b == NULL)
    return FALSE;
  key = sandbox_backend_prewarm (a, template_, NULL, NULL, error);
  key_b = key != NULL ? sandbox_backend_prewarm (b, template_, NULL, NULL, error) : NULL;
  if (key_b == NULL)
    return FALSE;

  handle = sandbox_backend_create (a, key, NULL, deny, NULL, error);
  if (handle == NULL || (state = sandbox_handle_capture_state (handle, error)) == NULL ||
      !sandbox_handle_stop (handle, NULL, error))
    return FALSE;

  hosts[0] = a;
  hosts[1] = b;
  for (guint i = 0; i < rounds; i++)
    {
      /* Where it was stopped, then on the other host, which becomes "here". */
      if (!resume_round (hosts[i % 2], state, 2 * i, local, error) ||
          !resume_round (hosts[(i + 1) % 2], state, 2 * i + 1, remote, error))
        return FALSE;
    }
  return TRUE;
}
