/* sandbox-cluster-checkpoint-manifest.c — a checkpoint's manifest, written and checked
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Parsing trusts nothing: the store is shared between hosts, and a manifest
 * that hashes to its name may still have been written by someone hostile.
 * Every entry is checked (a canonical relative path below a directory listed
 * before it, a known kind with exactly its members, bounded numbers), and
 * the whole is compared with what sandbox_cluster_manifest_serialize()
 * writes for the parsed entries.
 */

#include "config.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "sandbox-cluster-checkpoint-private.h"
#include "sandbox-json-private.h"

/* 2: the manifest names the session it is a checkpoint of ("session"), or
 * null for a template's. 1 named none and is no longer read. */
#define MANIFEST_VERSION 2

static const char *const kind_names[] = {
  [SANDBOX_CLUSTER_ENTRY_DIRECTORY] = "directory",
  [SANDBOX_CLUSTER_ENTRY_FILE] = "file",
  [SANDBOX_CLUSTER_ENTRY_SYMLINK] = "symlink",
};

void
sandbox_cluster_entry_free (SandboxClusterEntry *entry)
{
  if (entry == NULL)
    return;
  g_free (entry->path);
  g_free (entry->sha256);
  g_free (entry->target);
  g_free (entry);
}

static void
add_entry (JsonBuilder               *builder,
           const SandboxClusterEntry *entry)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "path");
  json_builder_add_string_value (builder, entry->path);
  json_builder_set_member_name (builder, "kind");
  json_builder_add_string_value (builder, kind_names[entry->kind]);
  switch (entry->kind)
    {
    case SANDBOX_CLUSTER_ENTRY_FILE:
      json_builder_set_member_name (builder, "mode");
      json_builder_add_int_value (builder, entry->mode);
      json_builder_set_member_name (builder, "size");
      json_builder_add_int_value (builder, entry->size);
      json_builder_set_member_name (builder, "sha256");
      json_builder_add_string_value (builder, entry->sha256);
      break;

    case SANDBOX_CLUSTER_ENTRY_DIRECTORY:
      json_builder_set_member_name (builder, "mode");
      json_builder_add_int_value (builder, entry->mode);
      break;

    case SANDBOX_CLUSTER_ENTRY_SYMLINK:
      json_builder_set_member_name (builder, "target");
      json_builder_add_string_value (builder, entry->target);
      break;

    default:
      g_assert_not_reached ();
    }
  json_builder_end_object (builder);
}

/*
 * sandbox_cluster_manifest_serialize:
 * @session_id: (nullable): the session the checkpoint is of; %NULL for a
 *   template's
 * @entries: (element-type SandboxClusterEntry): the entries, sorted by path
 *
 * Returns: (transfer full): the manifest's canonical bytes
 */
GBytes *
sandbox_cluster_manifest_serialize (const char *session_id,
                                    GPtrArray  *entries)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  gsize length = 0;
  char *text;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "version");
  json_builder_add_int_value (builder, MANIFEST_VERSION);
  json_builder_set_member_name (builder, "session");
  if (session_id != NULL)
    json_builder_add_string_value (builder, session_id);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "entries");
  json_builder_begin_array (builder);
  for (guint i = 0; i < entries->len; i++)
    add_entry (builder, entries->pdata[i]);
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  text = json_generator_to_data (generator, &length);
  return g_bytes_new_take (text, length);
}

static gboolean
set_invalid (GError     **error,
             guint        index,
             const char  *reason)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Sandbox checkpoint manifest is invalid: entry %u: %s", index, reason);
  return FALSE;
}

/* A canonical relative path: UTF-8, no empty, "." or ".." segment, bounded. */
static gboolean
path_is_canonical (const char *path,
                   guint      *depth)
{
  const char *segment = path;

  *depth = 0;
  if (path[0] == '\0' || strlen (path) > SANDBOX_CLUSTER_CHECKPOINT_MAX_PATH ||
      !g_utf8_validate (path, -1, NULL))
    return FALSE;

  while (TRUE)
    {
      const char *end = strchrnul (segment, '/');
      gsize length = end - segment;

      if (length == 0 || (length == 1 && segment[0] == '.') ||
          (length == 2 && segment[0] == '.' && segment[1] == '.'))
        return FALSE;
      (*depth)++;
      if (*end == '\0')
        return *depth <= SANDBOX_CLUSTER_CHECKPOINT_MAX_DEPTH;
      segment = end + 1;
    }
}

/* The string member @name of @object, or NULL if it is missing or no string. */
static const char *
get_string (JsonObject *object,
            const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (node);
}

/* The integer member @name of @object within [0, @max]. */
static gboolean
get_bounded (JsonObject *object,
             const char *name,
             guint64     max,
             guint64    *value)
{
  JsonNode *node = json_object_get_member (object, name);
  gint64 number;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_INT64)
    return FALSE;
  number = json_node_get_int (node);
  if (number < 0 || (guint64) number > max)
    return FALSE;
  *value = number;
  return TRUE;
}

static gboolean
parse_kind (const char              *name,
            SandboxClusterEntryKind *kind)
{
  for (guint i = 0; name != NULL && i < G_N_ELEMENTS (kind_names); i++)
    if (strcmp (name, kind_names[i]) == 0)
      {
        *kind = i;
        return TRUE;
      }
  return FALSE;
}

/* Reads the members @entry's kind has, all of them required. */
static const char *
parse_kind_members (JsonObject          *object,
                    SandboxClusterEntry *entry)
{
  guint64 mode = 0;
  const char *value;

  switch (entry->kind)
    {
    case SANDBOX_CLUSTER_ENTRY_FILE:
      if (json_object_get_size (object) != 5)
        return "a file has exactly path, kind, mode, size and sha256";
      if (!get_bounded (object, "size", SANDBOX_CLUSTER_CHECKPOINT_MAX_FILE_BYTES, &entry->size))
        return "a file's size is an integer from 0 to 2^40";
      value = get_string (object, "sha256");
      if (!sandbox_cluster_digest_is_valid (value))
        return "a file's sha256 is 64 lowercase hex digits";
      entry->sha256 = g_strdup (value);
      break;

    case SANDBOX_CLUSTER_ENTRY_DIRECTORY:
      if (json_object_get_size (object) != 3)
        return "a directory has exactly path, kind and mode";
      break;

    case SANDBOX_CLUSTER_ENTRY_SYMLINK:
      if (json_object_get_size (object) != 3)
        return "a symbolic link has exactly path, kind and target";
      value = get_string (object, "target");
      if (value == NULL || value[0] == '\0' || strlen (value) >= SANDBOX_CLUSTER_CHECKPOINT_MAX_PATH ||
          !g_utf8_validate (value, -1, NULL))
        return "a symbolic link's target is a non-empty UTF-8 string under 4096 bytes";
      entry->target = g_strdup (value);
      return NULL;

    default:
      g_assert_not_reached ();
    }

  /* A directory may be sticky (see checkpoint.c); nothing is setuid or
   * setgid, no file sticky. */
  if (!get_bounded (object, "mode", entry->kind == SANDBOX_CLUSTER_ENTRY_DIRECTORY ? 01777 : 0777,
                    &mode))
    return "a mode is an integer from 0 to 0777 (01777 for a directory)";
  entry->mode = mode;
  return NULL;
}

/*
 * parse_entry:
 * @node: one element of the entries array
 * @previous: (nullable): the path of the entry before it
 * @directories: the paths of the directories listed so far
 * @reason: (out): why @node was refused
 *
 * Returns: (transfer full) (nullable): the entry, or %NULL with @reason set
 */
static SandboxClusterEntry *
parse_entry (JsonNode    *node,
             const char  *previous,
             GHashTable  *directories,
             const char **reason)
{
  g_autoptr(SandboxClusterEntry) entry = g_new0 (SandboxClusterEntry, 1);
  JsonObject *object;
  const char *path;
  const char *slash;
  guint depth;

  if (!JSON_NODE_HOLDS_OBJECT (node))
    return (*reason = "an entry is an object", NULL);
  object = json_node_get_object (node);

  path = get_string (object, "path");
  if (path == NULL || !path_is_canonical (path, &depth))
    return (*reason = "a path is relative, canonical, UTF-8 and bounded", NULL);
  if (previous != NULL && strcmp (previous, path) >= 0)
    return (*reason = "paths are unique and sorted", NULL);
  slash = strrchr (path, '/');
  if (slash != NULL)
    {
      g_autofree char *parent = g_strndup (path, slash - path);

      if (!g_hash_table_contains (directories, parent))
        return (*reason = "an entry's parent is a directory listed before it", NULL);
    }

  if (!parse_kind (get_string (object, "kind"), &entry->kind))
    return (*reason = "a kind is directory, file or symlink", NULL);
  entry->path = g_strdup (path);
  if ((*reason = parse_kind_members (object, entry)) != NULL)
    return NULL;

  return g_steal_pointer (&entry);
}

/* The "session" member: a non-empty UTF-8 string (*@session_id), or null
 * (*@session_id stays %NULL). */
static gboolean
get_session (JsonObject  *object,
             const char **session_id)
{
  JsonNode *node = json_object_get_member (object, "session");

  *session_id = NULL;
  if (node != NULL && JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  *session_id = get_string (object, "session");
  return *session_id != NULL && (*session_id)[0] != '\0' &&
         g_utf8_validate (*session_id, -1, NULL);
}

/* The entries array of a manifest's root and its session, or NULL. */
static JsonArray *
get_entries (JsonNode    *root,
             const char **session_id)
{
  JsonObject *object;
  JsonNode *version;
  JsonNode *entries;

  /* Any JSON value parses; only this object is a manifest. */
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;
  object = json_node_get_object (root);
  version = json_object_get_member (object, "version");
  entries = json_object_get_member (object, "entries");
  if (json_object_get_size (object) != 3 || version == NULL || !JSON_NODE_HOLDS_VALUE (version) ||
      json_node_get_value_type (version) != G_TYPE_INT64 ||
      json_node_get_int (version) != MANIFEST_VERSION ||
      !get_session (object, session_id) ||
      entries == NULL || !JSON_NODE_HOLDS_ARRAY (entries))
    return NULL;
  return json_node_get_array (entries);
}

/*
 * sandbox_cluster_manifest_parse:
 * @manifest: a manifest's bytes
 * @out_session_id: (out) (optional) (nullable): the session it names, %NULL
 *   for a template's
 * @error: return location for a #GError
 *
 * Anything but a manifest this code would write is
 * %SANDBOX_ERROR_UNAVAILABLE naming the first entry refused and why.
 *
 * Returns: (transfer full) (element-type SandboxClusterEntry): the entries,
 *   sorted by path, or %NULL with @error set
 */
GPtrArray *
sandbox_cluster_manifest_parse (GBytes   *manifest,
                                char    **out_session_id,
                                GError  **error)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) sandbox_cluster_entry_free);
  g_autoptr(GHashTable) directories = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr(GBytes) canonical = NULL;
  g_autoptr(GError) local_error = NULL;
  JsonArray *array;
  const char *session_id = NULL;
  gsize length = 0;
  const char *data = g_bytes_get_data (manifest, &length);

  /* The strict reader, not json-glib's alone: its nesting is bounded (json-glib
   * recurses once per level, and a few hundred kilobytes of "[" overflow the
   * stack of the host resuming the session), and it refuses what json-glib would
   * otherwise accept and canonicalise (comments, duplicate members). */
  if (length > SANDBOX_CLUSTER_CHECKPOINT_MAX_MANIFEST_BYTES ||
      (root = sandbox_json_parse_strict (length > 0 ? data : "", length, &local_error)) == NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox checkpoint manifest is invalid: %s",
                   local_error != NULL ? local_error->message : "too large");
      return NULL;
    }

  array = get_entries (root, &session_id);
  if (array == NULL)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Sandbox checkpoint manifest is invalid: expected "
                           "{\"version\":2,\"session\":ID|null,\"entries\":[…]} "
                           "(version 1 named no session and is no longer read)");
      return NULL;
    }
  if (json_array_get_length (array) > SANDBOX_CLUSTER_CHECKPOINT_MAX_ENTRIES)
    {
      set_invalid (error, SANDBOX_CLUSTER_CHECKPOINT_MAX_ENTRIES, "too many entries");
      return NULL;
    }

  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      const SandboxClusterEntry *previous = i > 0 ? entries->pdata[i - 1] : NULL;
      const char *reason = NULL;
      SandboxClusterEntry *entry = parse_entry (json_array_get_element (array, i),
                                                previous ? previous->path : NULL,
                                                directories, &reason);

      if (entry == NULL)
        {
          set_invalid (error, i, reason);
          return NULL;
        }
      g_ptr_array_add (entries, entry);
      if (entry->kind == SANDBOX_CLUSTER_ENTRY_DIRECTORY)
        g_hash_table_add (directories, entry->path);
    }

  canonical = sandbox_cluster_manifest_serialize (session_id, entries);
  if (!g_bytes_equal (canonical, manifest))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Sandbox checkpoint manifest is invalid: not in its canonical form "
                           "(a NUL in a string, an out-of-range number or stray text)");
      return NULL;
    }

  if (out_session_id != NULL)
    *out_session_id = g_strdup (session_id);
  return g_steal_pointer (&entries);
}
