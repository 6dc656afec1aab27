/* sandbox-coding-search.c — the search_files tool: grep over the workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The search runs inside the namespace, as the shell tool does and with
 * its deadline and output cap: what it can read is what a command can, so
 * it needs no containment of its own. Its argv is built here, never
 * through a shell: the pattern and the glob are arguments, after `-e` and
 * `--include=`, and the directory comes after `--`. grep's `--null`
 * separates a file name from its line number with a NUL, so a name that
 * holds `:` cannot be misread.
 */

#include "config.h"

#include <string.h>

#include "sandbox-coding-search-private.h"
#include "sandbox-coding-shell-private.h"

#define GREP "/usr/bin/grep"

/* Lines longer than this are cut in a match: a minified file's one line
 * would otherwise spend the whole budget. */
#define MAX_MATCH_TEXT_BYTES 500

static SandboxCommand *
grep_command (SandboxCodingCall *call)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new (GREP);
  g_autofree char *include = NULL;

  sandbox_command_add_arg (command, "--recursive");
  sandbox_command_add_arg (command, "--line-number");
  sandbox_command_add_arg (command, "--with-filename");
  sandbox_command_add_arg (command, "--binary-files=without-match");
  sandbox_command_add_arg (command, "--extended-regexp");
  sandbox_command_add_arg (command, "--null");
  sandbox_command_add_arg (command, "--color=never");
  if (call->glob != NULL)
    {
      include = g_strconcat ("--include=", call->glob, NULL);
      sandbox_command_add_arg (command, include);
    }
  sandbox_command_add_arg (command, "-e");
  sandbox_command_add_arg (command, call->command);
  sandbox_command_add_arg (command, "--");
  sandbox_command_add_arg (command, call->path);
  sandbox_command_set_cwd (command, ".");
  sandbox_command_set_timeout_ms (command, call->shell_timeout_ms);
  sandbox_command_set_max_output_bytes (command, call->max_command_output_bytes);
  return g_steal_pointer (&command);
}

/* The text of a match, valid UTF-8 and at most MAX_MATCH_TEXT_BYTES. */
static char *
match_text (const char *text,
            gsize       length)
{
  g_autofree char *valid = g_utf8_make_valid (text, MIN (length, MAX_MATCH_TEXT_BYTES));

  return g_strdup (valid);
}

/* One "NAME\0LINE:TEXT" line of grep's; FALSE for anything else (a line
 * cut by the output cap). */
static gboolean
add_match (JsonBuilder *builder,
           const char  *line,
           gsize        length)
{
  const char *nul = memchr (line, '\0', length);
  const char *colon;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  guint64 number;
  char *end;

  if (nul == NULL)
    return FALSE;
  colon = memchr (nul + 1, ':', length - (nul + 1 - line));
  if (colon == NULL || !g_ascii_isdigit (nul[1]))
    return FALSE;
  number = g_ascii_strtoull (nul + 1, &end, 10);
  if (end != colon)
    return FALSE;
  path = g_utf8_make_valid (line, nul - line);
  text = match_text (colon + 1, length - (colon + 1 - line));
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "path");
  json_builder_add_string_value (builder, g_str_has_prefix (path, "./") ? path + 2 : path);
  json_builder_set_member_name (builder, "line");
  json_builder_add_int_value (builder, (gint64) MIN (number, (guint64) G_MAXINT64));
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  return TRUE;
}

static JsonNode *
search_result (SandboxCodingCall *call,
               GByteArray        *out,
               gboolean           cut)
{
  g_autoptr(JsonBuilder) builder = sandbox_coding_ok_builder_new (call->path);
  const char *data = (const char *) out->data;
  gsize start = 0;
  gint64 count = 0;
  gboolean truncated = cut;

  json_builder_set_member_name (builder, "matches");
  json_builder_begin_array (builder);
  while (start < out->len)
    {
      const char *newline = memchr (data + start, '\n', out->len - start);
      gsize length = newline != NULL ? (gsize) (newline - (data + start)) : out->len - start;

      if (count == call->limit)
        {
          truncated = TRUE;
          break;
        }
      if (newline == NULL)
        {
          truncated = TRUE;   /* cut by the output cap */
          break;
        }
      if (add_match (builder, data + start, length))
        count++;
      start += length + 1;
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "truncated");
  json_builder_add_boolean_value (builder, truncated);
  return sandbox_coding_ok_builder_finish (builder);
}

/* The search_files tool; a SandboxCodingToolFunc. grep exits 0 with
 * matches, 1 with none and 2 on an error (a pattern it cannot compile, a
 * directory that is not there); a deadline or the output cap keep the
 * matches found so far, marked truncated. */
gboolean
sandbox_coding_search_files (SandboxCodingCall  *call,
                             GCancellable       *cancellable,
                             GError            **error)
{
  g_autoptr(SandboxCommand) command = grep_command (call);
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(GByteArray) err = g_byte_array_new ();
  g_autoptr(GError) failure = NULL;
  int status;

  if (!sandbox_coding_run_command (call, command, FALSE, out, err, &result, &failure, cancellable,
                                   error))
    return FALSE;
  if (call->result != NULL)
    return TRUE;
  status = result != NULL ? sandbox_result_get_exit_status (result) : 0;
  if (status == 2 && out->len == 0)
    {
      call->result = sandbox_coding_error_result ("SANDBOX_INVALID", NULL,
                                                  "The search failed: the pattern is not a "
                                                  "valid extended regular expression, or the "
                                                  "directory cannot be read");
      return TRUE;
    }
  if (result != NULL && status != 0 && status != 1 && status != 2)
    {
      call->result = sandbox_coding_error_result ("SANDBOX_UNAVAILABLE", NULL,
                                                  "The search could not run (grep exited %d)",
                                                  status);
      return TRUE;
    }
  call->result = search_result (call, out, failure != NULL);
  return TRUE;
}
