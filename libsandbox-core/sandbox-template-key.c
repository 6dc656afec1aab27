/* sandbox-template-key.c — a template's content address
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-digest-private.h"
#include "sandbox-error.h"
#include "sandbox-template-private.h"

static gboolean
check_text (const char  *value,
            const char  *what,
            GError     **error)
{
  if (!g_utf8_validate (value, -1, NULL))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Invalid input: expected a valid UTF-8 string", what);
      return FALSE;
    }
  if (value[0] == '\0')
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Too small: expected string to have >=1 characters", what);
      return FALSE;
    }
  return TRUE;
}

/* Appends @value as ECMAScript's JSON.stringify() writes a (well-formed)
 * string: only '"', '\\' and control characters are escaped, with the short
 * forms where they exist and lowercase \u00xx otherwise; '/', DEL, U+2028
 * and U+2029 stay raw. The key depends on these exact bytes. */
static void
append_js_json_string (GString    *out,
                       const char *value)
{
  g_string_append_c (out, '"');
  for (const guchar *p = (const guchar *) value; *p != '\0'; p++)
    {
      switch (*p)
        {
        case '"':
          g_string_append (out, "\\\"");
          break;
        case '\\':
          g_string_append (out, "\\\\");
          break;
        case '\b':
          g_string_append (out, "\\b");
          break;
        case '\f':
          g_string_append (out, "\\f");
          break;
        case '\n':
          g_string_append (out, "\\n");
          break;
        case '\r':
          g_string_append (out, "\\r");
          break;
        case '\t':
          g_string_append (out, "\\t");
          break;
        default:
          if (*p < 0x20)
            g_string_append_printf (out, "\\u%04x", *p);
          else
            g_string_append_c (out, (char) *p);
        }
    }
  g_string_append_c (out, '"');
}

/* Appends one entry of the key: [path, sha256hex] for a plain file, as the
 * reference design has it, so templates of plain files keep their keys.
 * Every other kind has a third element naming it: an array of two elements
 * is always a plain file, and one of three is told apart by its last, so no
 * two different entries serialize alike. */
static void
append_entry (GString              *out,
              const char           *path,
              SandboxTemplateEntry *entry)
{
  g_string_append_c (out, '[');
  append_js_json_string (out, path);
  g_string_append_c (out, ',');
  switch (entry->type)
    {
    case G_FILE_TYPE_SYMBOLIC_LINK:
      append_js_json_string (out, entry->target);
      g_string_append (out, ",\"symlink\"");
      break;
    case G_FILE_TYPE_DIRECTORY:
      g_string_append (out, "\"\",\"directory\"");
      break;
    default:
      /* Every file was read before (sandbox_template_read_unread_files()). */
      g_return_if_fail (g_atomic_pointer_get (&entry->digest) != NULL);
      append_js_json_string (out, g_atomic_pointer_get (&entry->digest));
      if (entry->flags & SANDBOX_TEMPLATE_FILE_EXECUTABLE)
        g_string_append (out, ",\"executable\"");
    }
  g_string_append_c (out, ']');
}

char *
sandbox_template_dup_canonical_json (SandboxTemplate *self,
                                     const char      *backend_name)
{
  g_auto(GStrv) paths = sandbox_template_list_paths (self);
  GString *out = g_string_new ("[");

  append_js_json_string (out, backend_name);
  g_string_append_c (out, ',');
  append_js_json_string (out, sandbox_template_get_name (self));
  g_string_append (out, ",[");
  for (guint i = 0; paths[i] != NULL; i++)
    {
      if (i > 0)
        g_string_append_c (out, ',');
      append_entry (out, paths[i], sandbox_template_lookup_entry (self, paths[i]));
    }
  g_string_append_c (out, ']');
  /* Only with a runtime, so that a template without one keeps the key it
   * always had (tests/vectors pin them); an object is no entry list, so
   * no template without a runtime serializes alike. */
  if (sandbox_template_get_runtime (self) != NULL)
    {
      g_string_append (out, ",{\"runtime\":");
      append_js_json_string (out, sandbox_template_get_runtime (self));
      /* Likewise only when set: a read-only runtime's key is unchanged. */
      if (sandbox_template_get_runtime_writable (self))
        g_string_append (out, ",\"writable\":true");
      g_string_append_c (out, '}');
    }
  g_string_append_c (out, ']');

  return g_string_free (out, FALSE);
}

/**
 * sandbox_template_compute_key:
 * @self: a [class@Sandbox.Template]
 * @backend_name: the name of the backend the template is for
 * @error: return location for a #GError, or %NULL
 *
 * Computes the template's content address: the lowercase hex SHA-256 of the
 * compact JSON array `[backend_name, name, [entry, …]]`, serialized exactly
 * as ECMAScript's `JSON.stringify()` does, with entries sorted by canonical
 * path in byte order. A plain file's entry is `[path, sha256hex(bytes)]`, as
 * in the reference design, so a template of plain files has the reference's
 * key. The other kinds add a third element naming them:
 * `[path, sha256hex(bytes), "executable"]`, `[path, target, "symlink"]` and
 * `[path, "", "directory"]` (empty directories only). A template naming a
 * runtime ([method@Sandbox.Template.set_runtime]) adds a fourth element,
 * `{"runtime": key}` (`{"runtime": key, "writable": true}` for a runtime
 * writable per session, [method@Sandbox.Template.set_runtime_writable]),
 * after the entries. Equal templates get equal keys in
 * every implementation of the design.
 *
 * Files imported with [method@Sandbox.Template.add_directory] are hashed
 * when they are first read: by a backend storing the template
 * ([method@Sandbox.Backend.prewarm] learns the key as it copies them), or
 * here, which then reads every such file not read yet (blocking; later
 * calls and stores check the files against these digests).
 *
 * Returns: (transfer full): 64 lowercase hex digits, or %NULL with
 *   %SANDBOX_ERROR_INVALID set if @backend_name or the template name is empty
 *   or not UTF-8, or the error of reading an imported file
 *   (%G_IO_ERROR_WRONG_ETAG if it changed since it was imported, see
 *   [method@Sandbox.Template.read_file])
 */
char *
sandbox_template_compute_key (SandboxTemplate  *self,
                              const char       *backend_name,
                              GError          **error)
{
  g_autofree char *json = NULL;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);
  g_return_val_if_fail (backend_name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_text (backend_name, "backend name", error) ||
      !check_text (sandbox_template_get_name (self), "template name", error) ||
      !sandbox_template_read_unread_files (self, error))
    return NULL;

  json = sandbox_template_dup_canonical_json (self, backend_name);
  return sandbox_digest_sha256_hex (json, strlen (json));
}

/**
 * sandbox_template_key_is_valid:
 * @key: (nullable): a string
 *
 * Checks whether @key has the form of a template key.
 *
 * Returns: %TRUE if @key looks like a template key: exactly 64 lowercase
 *   hex digits
 */
gboolean
sandbox_template_key_is_valid (const char *key)
{
  gsize i;

  if (key == NULL)
    return FALSE;

  for (i = 0; key[i] != '\0'; i++)
    if (!g_ascii_isdigit (key[i]) && !(key[i] >= 'a' && key[i] <= 'f'))
      return FALSE;

  return i == 64;
}
