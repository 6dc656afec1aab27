/* sandbox-coding-file-tools.c — read_file, write_file, edit_file and list_files
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The file tools work through the session's contained host-side file
 * access (and the binding, for listings); they never follow the model out
 * of the workspace. What goes wrong below becomes a result with a fixed
 * message naming the canonical path the model gave, never a host path.
 */

#include "config.h"

#include <string.h>

#include "sandbox-coding-file-tools-private.h"
#include "sandbox-error.h"
#include "sandbox-path.h"

static JsonNode *
not_text_result (const char *verb,
                 const char *path)
{
  return sandbox_coding_error_result ("SANDBOX_NOT_TEXT", NULL,
                                      "Cannot %s %s: it is not UTF-8 text (binary files are not "
                                      "supported)", verb, path);
}

/* Maps an error of the contained file layer to what the model may see.
 * @path is the canonical path the model asked for; @max_bytes the
 * session's bound on a file. */
static JsonNode *
file_error_result (const char  *verb,
                   const char  *path,
                   gsize        max_bytes,
                   GError      *error,
                   GError     **cause_out)
{
  g_autoptr(GError) owned = error;

  if (error->domain == SANDBOX_ERROR)
    switch (error->code)
      {
      case SANDBOX_ERROR_PATH:
        return sandbox_coding_error_result ("SANDBOX_PATH", NULL,
                                            "Cannot %s %s: the path leads out of the workspace",
                                            verb, path);
      case SANDBOX_ERROR_LIMIT:
        return sandbox_coding_error_result ("SANDBOX_LIMIT", NULL,
                                            "Cannot %s %s: files are limited to %"
                                            G_GSIZE_FORMAT " bytes",
                                            verb, path, max_bytes);
      case SANDBOX_ERROR_BUSY:
        return sandbox_coding_error_result ("SANDBOX_BUSY", NULL,
                                            "Cannot %s %s: the sandbox is busy", verb, path);
      case SANDBOX_ERROR_STOPPED:
      case SANDBOX_ERROR_UNAVAILABLE:
        return sandbox_coding_refusal_result (g_steal_pointer (&owned), cause_out);
      default:
        break;
      }
  else if (error->domain == G_IO_ERROR)
    switch (error->code)
      {
      case G_IO_ERROR_NOT_FOUND:
        return sandbox_coding_error_result ("SANDBOX_NOT_FOUND", NULL,
                                            "Cannot %s %s: no such file or directory", verb, path);
      case G_IO_ERROR_IS_DIRECTORY:
        return sandbox_coding_error_result ("SANDBOX_IS_DIRECTORY", NULL,
                                            "Cannot %s %s: it is a directory", verb, path);
      case G_IO_ERROR_NOT_DIRECTORY:
        return sandbox_coding_error_result ("SANDBOX_NOT_DIRECTORY", NULL,
                                            "Cannot %s %s: it or one of its parents is not a "
                                            "directory", verb, path);
      case G_IO_ERROR_NOT_REGULAR_FILE:
        return sandbox_coding_error_result ("SANDBOX_NOT_REGULAR_FILE", NULL,
                                            "Cannot %s %s: it is not a regular file", verb, path);
      case G_IO_ERROR_BUSY:
        return sandbox_coding_error_result ("SANDBOX_BUSY", NULL,
                                            "Cannot %s %s: the workspace kept changing, try again",
                                            verb, path);
      default:
        break;
      }
  else if (error->domain == G_CONVERT_ERROR)
    return not_text_result (verb, path);

  /* Anything else: a generic message for the model, the cause for the host. */
  g_propagate_error (cause_out, g_steal_pointer (&owned));
  return sandbox_coding_error_result ("SANDBOX_IO", NULL, "Cannot %s %s", verb, path);
}

/* Sorts out a failure of the file layer: a cancellation goes to @error
 * (FALSE), anything else becomes the model's result (TRUE). */
static gboolean
take_file_error (SandboxCodingCall  *call,
                 const char         *verb,
                 GError             *failure,
                 GError            **error)
{
  if (g_error_matches (failure, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_propagate_error (error, failure);
      return FALSE;
    }
  call->result = file_error_result (verb, call->path,
                                    sandbox_driver_get_max_file_bytes (
                                      sandbox_session_get_driver (call->session)),
                                    failure, &call->cause);
  return TRUE;
}

/* Reads @path as UTF-8 text (a BOM dropped). NULL either with ->result set
 * (the model's outcome: a missing file, binary content, …) or with @error
 * set (cancellation only). */
static char *
read_text (SandboxCodingCall  *call,
           const char         *verb,
           gsize              *length,
           GCancellable       *cancellable,
           GError            **error)
{
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *data;
  gsize size;

  bytes = sandbox_session_read_bytes (call->session, call->path, cancellable, &local_error);
  if (bytes == NULL)
    {
      take_file_error (call, verb, g_steal_pointer (&local_error), error);
      return NULL;
    }

  data = g_bytes_get_data (bytes, &size);
  /* Explicit length: embedded NULs fail validation too, so binary is refused. */
  if (!g_utf8_validate_len (data, size, NULL))
    {
      call->result = not_text_result (verb, call->path);
      return NULL;
    }
  if (size >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    {
      data += 3;
      size -= 3;
    }
  *length = size;
  return g_strndup (data, size);
}

gboolean
sandbox_coding_read_file (SandboxCodingCall  *call,
                          GCancellable       *cancellable,
                          GError            **error)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autofree char *text = NULL;
  const char *start, *end, *p;
  gint64 line = 1, total_lines, shown = 0;
  gsize length;

  text = read_text (call, "read", &length, cancellable, error);
  if (text == NULL)
    return call->result != NULL;

  /* Lines end with \n; a last line without one still counts. */
  total_lines = 0;
  for (p = text; p < text + length; p++)
    if (*p == '\n')
      total_lines++;
  if (length > 0 && text[length - 1] != '\n')
    total_lines++;

  if (call->offset > MAX (total_lines, 1))
    {
      call->result = sandbox_coding_error_result ("SANDBOX_INVALID", NULL,
                                                  "offset %" G_GINT64_FORMAT " is past the end "
                                                  "of %s (%" G_GINT64_FORMAT " lines)",
                                                  call->offset, call->path, total_lines);
      return TRUE;
    }

  start = text;
  while (line < call->offset)
    {
      start = strchr (start, '\n') + 1;
      line++;
    }
  end = start;
  while (end < text + length && shown < call->limit)
    {
      const char *newline = memchr (end, '\n', text + length - end);

      end = newline != NULL ? newline + 1 : text + length;
      shown++;
    }

  builder = sandbox_coding_ok_builder_new (call->path);
  json_builder_set_member_name (builder, "content");
  {
    g_autofree char *slice = g_strndup (start, end - start);

    json_builder_add_string_value (builder, slice);
  }
  json_builder_set_member_name (builder, "start_line");
  json_builder_add_int_value (builder, call->offset);
  json_builder_set_member_name (builder, "lines");
  json_builder_add_int_value (builder, shown);
  json_builder_set_member_name (builder, "total_lines");
  json_builder_add_int_value (builder, total_lines);
  json_builder_set_member_name (builder, "truncated");
  json_builder_add_boolean_value (builder, call->offset - 1 + shown < total_lines);
  call->result = sandbox_coding_ok_builder_finish (builder);
  return TRUE;
}

/* Writes @contents to @path: FALSE either with ->result set or with @error
 * set (cancellation only), as read_text(). */
static gboolean
write_contents (SandboxCodingCall  *call,
                const char         *verb,
                const char         *contents,
                GCancellable       *cancellable,
                GError            **error)
{
  g_autoptr(GBytes) bytes = g_bytes_new (contents, strlen (contents));
  g_autoptr(GError) local_error = NULL;

  if (sandbox_session_write_bytes (call->session, call->path, bytes, cancellable, &local_error))
    return TRUE;

  take_file_error (call, verb, g_steal_pointer (&local_error), error);
  return FALSE;
}

gboolean
sandbox_coding_write_file (SandboxCodingCall  *call,
                           GCancellable       *cancellable,
                           GError            **error)
{
  g_autoptr(JsonBuilder) builder = NULL;

  if (strcmp (call->path, SANDBOX_WORKSPACE) == 0)
    {
      call->result = sandbox_coding_error_result ("SANDBOX_IS_DIRECTORY", NULL,
                                                  "Cannot write %s: it is a directory",
                                                  call->path);
      return TRUE;
    }
  if (!write_contents (call, "write", call->content, cancellable, error))
    return call->result != NULL;

  builder = sandbox_coding_ok_builder_new (call->path);
  json_builder_set_member_name (builder, "bytes_written");
  json_builder_add_int_value (builder, strlen (call->content));
  call->result = sandbox_coding_ok_builder_finish (builder);
  return TRUE;
}

gboolean
sandbox_coding_edit_file (SandboxCodingCall  *call,
                          GCancellable       *cancellable,
                          GError            **error)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(GString) edited = NULL;
  g_autofree char *text = NULL;
  gsize old_length = strlen (call->old_string);
  const char *first = NULL;
  guint matches = 0;
  gsize length;

  text = read_text (call, "edit", &length, cancellable, error);
  if (text == NULL)
    return call->result != NULL;

  for (const char *p = strstr (text, call->old_string); p != NULL;
       p = strstr (p + old_length, call->old_string))
    {
      if (matches++ == 0)
        first = p;
    }

  if (matches == 0)
    {
      call->result = sandbox_coding_error_result ("SANDBOX_NO_MATCH", NULL,
                                                  "old_string was not found in %s (0 matches); "
                                                  "it must match the file exactly, whitespace "
                                                  "included", call->path);
      return TRUE;
    }
  if (matches > 1)
    {
      call->result = sandbox_coding_error_result ("SANDBOX_AMBIGUOUS", NULL,
                                                  "old_string occurs %u times in %s; include "
                                                  "more surrounding text so it matches exactly "
                                                  "once", matches, call->path);
      return TRUE;
    }

  edited = g_string_sized_new (length - old_length + strlen (call->new_string));
  g_string_append_len (edited, text, first - text);
  g_string_append (edited, call->new_string);
  g_string_append (edited, first + old_length);

  if (!write_contents (call, "edit", edited->str, cancellable, error))
    return call->result != NULL;

  builder = sandbox_coding_ok_builder_new (call->path);
  json_builder_set_member_name (builder, "replacements");
  json_builder_add_int_value (builder, 1);
  call->result = sandbox_coding_ok_builder_finish (builder);
  return TRUE;
}

static int
compare_entries (gconstpointer a,
                 gconstpointer b)
{
  const char *name_a, *name_b;

  g_variant_get_child (*(GVariant **) a, 0, "&s", &name_a);
  g_variant_get_child (*(GVariant **) b, 0, "&s", &name_b);
  return strcmp (name_a, name_b);
}

gboolean
sandbox_coding_list_files (SandboxCodingCall  *call,
                           GCancellable       *cancellable,
                           GError            **error)
{
  g_autoptr(GVariant) entries = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(GPtrArray) sorted = NULL;
  gboolean truncated = FALSE;
  GVariantIter iter;
  GVariant *entry;

  entries = sandbox_coding_binding_list_directory (call->binding, call->path,
                                                   call->max_list_entries, &truncated,
                                                   cancellable, &local_error);
  if (entries == NULL)
    return take_file_error (call, "list", g_steal_pointer (&local_error), error);

  sorted = g_ptr_array_new_with_free_func ((GDestroyNotify) g_variant_unref);
  g_variant_iter_init (&iter, entries);
  while ((entry = g_variant_iter_next_value (&iter)) != NULL)
    g_ptr_array_add (sorted, entry);
  g_ptr_array_sort (sorted, compare_entries);

  builder = sandbox_coding_ok_builder_new (call->path);
  json_builder_set_member_name (builder, "entries");
  json_builder_begin_array (builder);
  for (guint i = 0; i < sorted->len; i++)
    {
      const char *name, *type;
      guint64 size;

      g_variant_get (g_ptr_array_index (sorted, i), "(&s&st)", &name, &type, &size);
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, name);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, type);
      json_builder_set_member_name (builder, "size");
      json_builder_add_int_value (builder, (gint64) MIN (size, (guint64) G_MAXINT64));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "truncated");
  json_builder_add_boolean_value (builder, truncated);
  call->result = sandbox_coding_ok_builder_finish (builder);
  return TRUE;
}

