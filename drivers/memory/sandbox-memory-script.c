/* sandbox-memory-script.c — the declared answers of scripted commands
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/**
 * SECTION:sandbox-memory-script
 * @title: Memory driver script
 * @short_description: how the memory driver answers commands
 *
 * The memory driver never executes anything. Each command a session spawns
 * is answered from a script, a JSON document given to the backend as the
 * construct property `script` (the document itself) and/or `script-file` (a
 * path to it). When both are given, the entries of `script` come first, then
 * those of `script-file`; at most one of them may declare a `default`.
 *
 * |[
 * {
 *   "commands": [
 *     { "match": { "executable": "/usr/bin/cat", "args": ["hello.txt"] },
 *       "stdout": "hello" },
 *     { "match": { "executable": "/usr/bin/cat" }, "stdout-from-file-arg": true },
 *     { "match": { "executable": "/usr/bin/tee" }, "stdout-from-stdin": true,
 *       "writes": { "out.txt": "written by tee\n" } },
 *     { "match": { "executable": "/usr/bin/sleep" }, "delay-ms": 200 },
 *     { "match": { "executable": "/usr/bin/make" },
 *       "chunks": [ { "stdout": "step 1\n" },
 *                   { "stdout": "step 2\n", "delay-ms": 50 },
 *                   { "stderr-base64": "d2FybmluZwo=", "delay-ms": 50 } ],
 *       "exit": 2 },
 *     { "match": { "executable": "/bin/forever" }, "fault": "never-ends" },
 *     { "match": { "executable": "/bin/flood" }, "fault": "output-flood" },
 *     { "match": { "executable": "/bin/broken" }, "fault": "spawn-failure" }
 *   ],
 *   "default": { "exit": 127, "stderr": "command not scripted\n" }
 * }
 * ]|
 *
 * The top level is an object with two optional members:
 * - `commands`: an array of entries. A command is answered by the first
 *   entry whose `match` fits it.
 * - `default`: the answer, without `match`, to a command no entry matches.
 *   Without it such a command exits with 127 and says on stderr that it is
 *   not scripted.
 *
 * `match` is an object: `executable` (a non-empty string, compared exactly)
 * and optionally `args` (an array of strings; when present the command's
 * arguments must be exactly these, when absent any arguments match).
 *
 * An answer may have these members, all optional:
 * - `exit`: the exit status, an integer from 0 to 255 (default 0);
 * - `stdout`, `stderr`: text written at once; or `stdout-base64`,
 *   `stderr-base64` for arbitrary bytes (not both forms of one stream);
 * - `stdout-from-stdin`: %TRUE to copy the command's stdin to stdout;
 * - `stdout-from-file-arg`: %TRUE to copy the workspace file named by the
 *   command's first argument (relative to its working directory, or under
 *   `/workspace/`) to stdout; a missing or unreadable file gives exit status
 *   1 and a message on stderr, as `cat` would;
 * - `writes`: an object from workspace paths to text; those files are
 *   written (parents created) when the command starts, in order; a write
 *   that fails gives exit status 1 and a message on stderr;
 * - `links`: an object from workspace paths to link targets; those
 *   symbolic links are made after the `writes`, as `ln -sf` would;
 * - `chunks`: an array of output pieces written after the immediate output,
 *   each an object with exactly one of `stdout`, `stderr`, `stdout-base64`,
 *   `stderr-base64` and optionally `delay-ms` (milliseconds after the
 *   previous output); this is how a test sees live [signal@Sandbox.Process::stdout-data];
 * - `delay-ms`: milliseconds between the last output and the exit;
 * - `fault`: `"spawn-failure"` (spawning fails with %SANDBOX_ERROR_UNAVAILABLE
 *   and nothing starts; no other member is allowed), `"never-ends"` (the
 *   command writes its output and then runs until its deadline, a stop or a
 *   cancellation) or `"output-flood"` (after its output the command writes
 *   to stdout without end until the output limit kills it); neither of the
 *   last two may have `exit` or `delay-ms`.
 *
 * A command runs in this order: `writes`, `links`, then stdin (with
 * `stdout-from-stdin`), the file (with `stdout-from-file-arg`), `stdout`,
 * `stderr`, the `chunks` in order, then `delay-ms`, then the exit.
 *
 * The script is checked when the backend is initialized: a document that is
 * not JSON, an unknown member, a member of the wrong type, an out-of-range
 * number, invalid base64 or a path that is not a canonical workspace path
 * fails with %SANDBOX_ERROR_INVALID naming the member, such as
 * `“commands[2].chunks[0].delay-ms”`.
 */

#include <string.h>

#include "sandbox-memory-script-private.h"

static void
chunk_free (gpointer data)
{
  SandboxMemoryChunk *chunk = data;

  g_clear_pointer (&chunk->data, g_bytes_unref);
  g_free (chunk);
}

static void
write_free (gpointer data)
{
  SandboxMemoryWrite *write = data;

  g_free (write->relative);
  g_free (write->target);
  g_clear_pointer (&write->contents, g_bytes_unref);
  g_free (write);
}

SandboxMemoryRule *
sandbox_memory_rule_new (void)
{
  SandboxMemoryRule *rule = g_new0 (SandboxMemoryRule, 1);

  rule->writes = g_ptr_array_new_with_free_func (write_free);
  rule->chunks = g_ptr_array_new_with_free_func (chunk_free);

  return rule;
}

void
sandbox_memory_rule_free (gpointer data)
{
  SandboxMemoryRule *rule = data;

  if (rule == NULL)
    return;

  g_free (rule->executable);
  g_strfreev (rule->args);
  g_clear_pointer (&rule->stdout_bytes, g_bytes_unref);
  g_clear_pointer (&rule->stderr_bytes, g_bytes_unref);
  g_clear_pointer (&rule->writes, g_ptr_array_unref);
  g_clear_pointer (&rule->chunks, g_ptr_array_unref);
  g_free (rule);
}

static SandboxMemoryRule *
unscripted_rule_new (void)
{
  SandboxMemoryRule *rule = sandbox_memory_rule_new ();

  rule->exit_status = 127;
  rule->unscripted = TRUE;

  return rule;
}

static void
sandbox_memory_script_free (SandboxMemoryScript *self)
{
  g_clear_pointer (&self->rules, g_ptr_array_unref);
  g_clear_pointer (&self->default_rule, sandbox_memory_rule_free);
}

/**
 * sandbox_memory_script_new:
 * @json: (nullable): a script document
 * @path: (nullable): the path of a script document
 * @error: return location for a #GError, or %NULL
 *
 * Parses the script of a memory backend: the entries of @json, then those of
 * the file at @path. With neither, every command gets the default answer.
 *
 * Returns: (transfer full): the script, or %NULL with %SANDBOX_ERROR_INVALID
 *   set, naming the offending member
 */
SandboxMemoryScript *
sandbox_memory_script_new (const char  *json,
                           const char  *path,
                           GError     **error)
{
  SandboxMemoryScript *self = g_atomic_rc_box_new0 (SandboxMemoryScript);
  g_autoptr(SandboxMemoryScript) script = self;

  self->rules = g_ptr_array_new_with_free_func (sandbox_memory_rule_free);

  if (json != NULL && !sandbox_memory_script_parse (self, json, -1, "", error))
    return NULL;

  if (path != NULL)
    {
      g_autofree char *contents = NULL;
      g_autofree char *source = g_strdup_printf (" “%s”", path);
      g_autoptr(GError) file_error = NULL;
      gsize length = 0;

      if (!g_file_get_contents (path, &contents, &length, &file_error))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "Cannot read the memory driver script-file: %s", file_error->message);
          return NULL;
        }

      if (!sandbox_memory_script_parse (self, contents, length, source, error))
        return NULL;
    }

  if (self->default_rule == NULL)
    self->default_rule = unscripted_rule_new ();

  return g_steal_pointer (&script);
}

/**
 * sandbox_memory_script_ref:
 * @self: a script
 *
 * Returns: (transfer full): @self, with one more reference
 */
SandboxMemoryScript *
sandbox_memory_script_ref (SandboxMemoryScript *self)
{
  return g_atomic_rc_box_acquire (self);
}

/**
 * sandbox_memory_script_unref:
 * @self: (transfer full): a script
 *
 * Drops a reference; the last one frees the script and its rules.
 */
void
sandbox_memory_script_unref (SandboxMemoryScript *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify) sandbox_memory_script_free);
}

static gboolean
rule_matches (const SandboxMemoryRule *rule,
              const char              *executable,
              const char * const      *args)
{
  static const char * const no_args[] = { NULL };

  if (!g_str_equal (rule->executable, executable))
    return FALSE;
  if (rule->args == NULL)
    return TRUE;

  return g_strv_equal ((const char * const *) rule->args, args != NULL ? args : no_args);
}

/**
 * sandbox_memory_script_lookup:
 * @self: a script
 * @executable: the command's executable
 * @args: (nullable): the command's arguments
 *
 * Finds how to answer a command: the first entry that matches it, else the
 * default.
 *
 * Returns: (transfer none): the rule, valid as long as @self
 */
const SandboxMemoryRule *
sandbox_memory_script_lookup (SandboxMemoryScript *self,
                              const char          *executable,
                              const char * const  *args)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (executable != NULL, NULL);

  for (guint i = 0; i < self->rules->len; i++)
    {
      const SandboxMemoryRule *rule = g_ptr_array_index (self->rules, i);

      if (rule_matches (rule, executable, args))
        return rule;
    }

  return self->default_rule;
}
