/* fuzz-cluster-manifest.c — a checkpoint manifest, parsed on resume
 *
 * A manifest comes out of the checkpoint store every host shares
 * (drivers/cluster/sandbox-cluster-checkpoint-manifest.c, compiled in here as
 * is); one that hashes to its name may still be hostile. Properties: an
 * accepted manifest is exactly what sandbox_cluster_manifest_serialize()
 * writes for its session and entries; the session is null or a non-empty
 * UTF-8 string; its paths are relative, canonical, unique, sorted
 * and each below a directory listed before it; a file has a digest, a link a
 * non-empty target, modes are at most 0777. A refusal is
 * SANDBOX_ERROR_UNAVAILABLE with a UTF-8 message. No stack overflow on deep
 * nesting, nothing read outside the input (ASan).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#define SANDBOX_CLUSTER_COMPILATION
#include "../../drivers/cluster/sandbox-cluster-blob-store.c"
#include "../../drivers/cluster/sandbox-cluster-checkpoint-manifest.c"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_common_init ();
  g_log_set_fatal_mask ("Sandbox-Cluster", G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  return 0;
}

static gboolean
is_listed_directory (GPtrArray  *entries,
                     guint       before,
                     const char *path,
                     gsize       length)
{
  for (guint i = 0; i < before; i++)
    {
      const SandboxClusterEntry *entry = entries->pdata[i];

      if (entry->kind == SANDBOX_CLUSTER_ENTRY_DIRECTORY &&
          strlen (entry->path) == length && strncmp (entry->path, path, length) == 0)
        return TRUE;
    }
  return FALSE;
}

static void
check_entry (GPtrArray *entries,
             guint      index)
{
  const SandboxClusterEntry *entry = entries->pdata[index];
  const char *slash = strrchr (entry->path, '/');
  guint depth;

  FUZZ_CHECK (path_is_canonical (entry->path, &depth));
  FUZZ_CHECK (entry->path[0] != '/');
  if (index > 0)
    FUZZ_CHECK (strcmp (((SandboxClusterEntry *) entries->pdata[index - 1])->path, entry->path) < 0);
  if (slash != NULL)
    FUZZ_CHECK (is_listed_directory (entries, index, entry->path, slash - entry->path));
  switch (entry->kind)
    {
    case SANDBOX_CLUSTER_ENTRY_FILE:
      FUZZ_CHECK (sandbox_cluster_digest_is_valid (entry->sha256));
      FUZZ_CHECK (entry->size <= SANDBOX_CLUSTER_CHECKPOINT_MAX_FILE_BYTES);
      FUZZ_CHECK (entry->mode <= 0777);
      break;
    case SANDBOX_CLUSTER_ENTRY_DIRECTORY:
      /* Sticky at most (a runtime's tmp/): never setuid or setgid. */
      FUZZ_CHECK (entry->mode <= 01777);
      break;
    case SANDBOX_CLUSTER_ENTRY_SYMLINK:
      FUZZ_CHECK (entry->target != NULL && entry->target[0] != '\0');
      FUZZ_CHECK (g_utf8_validate (entry->target, -1, NULL));
      break;
    default:
      FUZZ_CHECK (!"an entry of no known kind");
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  /* Exactly the input's bytes, not NUL-terminated, as a store hands them over. */
  g_autoptr(GBytes) manifest = g_bytes_new (data, size);
  g_autoptr(GError) error = NULL;
  g_autofree char *session_id = NULL;
  g_autoptr(GPtrArray) entries = sandbox_cluster_manifest_parse (manifest, &session_id, &error);
  g_autoptr(GBytes) again = NULL;

  if (entries == NULL)
    {
      FUZZ_CHECK (g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE));
      FUZZ_CHECK (g_utf8_validate (error->message, -1, NULL));
      return 0;
    }
  FUZZ_CHECK (error == NULL);
  FUZZ_CHECK (session_id == NULL || (session_id[0] != '\0' && g_utf8_validate (session_id, -1, NULL)));
  for (guint i = 0; i < entries->len; i++)
    check_entry (entries, i);
  again = sandbox_cluster_manifest_serialize (session_id, entries);
  FUZZ_CHECK (g_bytes_equal (again, manifest));
  return 0;
}
