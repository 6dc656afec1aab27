/* fuzz-template.c — the template key serializer
 *
 * Input: NUL-separated fields "backend\0name\0path\0contents\0path\0contents…"
 * (contents cannot hold NUL; that costs nothing, the serializer only sees
 * their digest). Properties when the key is computed: the canonical JSON is
 * strict JSON of the shape [backend, name, [[path, sha256hex], …]] holding
 * exactly the strings given, paths in byte order; the key is its SHA-256.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "fuzz-common.h"

#include "sandbox-template-private.h"
#include "sandbox-path.h"
#include "sandbox-json-private.h"
#include "sandbox-error.h"

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  fuzz_common_init ();
  return 0;
}

static const char *
string_at (JsonArray *array,
           guint      index)
{
  JsonNode *node;

  FUZZ_CHECK (index < json_array_get_length (array));
  node = json_array_get_element (array, index);
  FUZZ_CHECK (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING);
  return json_node_get_string (node);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autofree char *copy = g_malloc (size + 1);
  g_autoptr(GPtrArray) fields = g_ptr_array_new ();
  g_autoptr(SandboxTemplate) template_ = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autofree char *canonical = NULL;
  g_autofree char *digest = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_auto(GStrv) paths = NULL;
  JsonArray *array, *files;
  const char *backend;

  memcpy (copy, data, size);
  copy[size] = '\0';
  for (char *p = copy; p <= copy + size; p += strlen (p) + 1)
    g_ptr_array_add (fields, p);
  if (fields->len < 2)
    return 0;

  backend = fields->pdata[0];
  template_ = sandbox_template_new (fields->pdata[1]);
  for (guint i = 2; i + 1 < fields->len; i += 2)
    {
      const char *path = fields->pdata[i];
      const char *contents = fields->pdata[i + 1];
      g_autoptr(GBytes) bytes = g_bytes_new (contents, strlen (contents));
      g_autoptr(GError) add_error = NULL;

      if (!sandbox_template_add_file (template_, path, bytes, &add_error))
        FUZZ_CHECK (add_error != NULL && add_error->domain == SANDBOX_ERROR);
      else
        FUZZ_CHECK (sandbox_template_lookup_file (template_, path) != NULL);
    }

  key = sandbox_template_compute_key (template_, backend, &error);
  if (key == NULL)
    {
      FUZZ_CHECK (g_error_matches (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID));
      return 0;
    }
  FUZZ_CHECK (sandbox_template_key_is_valid (key));

  canonical = sandbox_template_dup_canonical_json (template_, backend);
  digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, canonical, -1);
  FUZZ_CHECK (g_str_equal (digest, key));

  root = sandbox_json_parse_strict (canonical, -1, &error);
  if (root == NULL)
    g_printerr ("canonical JSON %s is not strict JSON: %s\n", canonical, error->message);
  FUZZ_CHECK (root != NULL);
  FUZZ_CHECK (JSON_NODE_HOLDS_ARRAY (root));
  array = json_node_get_array (root);
  FUZZ_CHECK (json_array_get_length (array) == 3);
  FUZZ_CHECK (g_str_equal (string_at (array, 0), backend));
  FUZZ_CHECK (g_str_equal (string_at (array, 1), sandbox_template_get_name (template_)));
  FUZZ_CHECK (JSON_NODE_HOLDS_ARRAY (json_array_get_element (array, 2)));
  files = json_array_get_array_element (array, 2);

  paths = sandbox_template_list_paths (template_);
  FUZZ_CHECK (json_array_get_length (files) == g_strv_length (paths));
  for (guint i = 0; paths[i] != NULL; i++)
    {
      JsonArray *entry;
      g_autofree char *file_digest = NULL;

      FUZZ_CHECK (JSON_NODE_HOLDS_ARRAY (json_array_get_element (files, i)));
      entry = json_array_get_array_element (files, i);
      FUZZ_CHECK (json_array_get_length (entry) == 2);
      FUZZ_CHECK (g_str_equal (string_at (entry, 0), paths[i]));
      FUZZ_CHECK (g_str_has_prefix (paths[i], SANDBOX_WORKSPACE "/"));
      if (i > 0)
        FUZZ_CHECK (strcmp (paths[i - 1], paths[i]) < 0);
      file_digest = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256,
                                                  sandbox_template_lookup_file (template_, paths[i]));
      FUZZ_CHECK (g_str_equal (string_at (entry, 1), file_digest));
    }

  return 0;
}
