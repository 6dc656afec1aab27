/* sandbox-result.c — how a command ended and what it printed
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <string.h>

#include "sandbox-result-private.h"

/**
 * SandboxResult:
 *
 * The outcome of a finished command: its exit status (128 + the signal
 * number if a signal ended it) and everything it wrote to stdout and stderr.
 * Immutable.
 *
 * A command whose executable could not be executed (not there, not
 * executable, a directory) says so in [property@Sandbox.Result:exec-errno],
 * which the driver takes from the failed `execve()` itself, never from the
 * command's output: a guest program that exits with 127 or prints what a
 * failed exec would print has still been executed. Such a result has the
 * exit status a POSIX shell gives, 127 or 126, and no output of the
 * driver's making: nothing ran to write any.
 */
struct _SandboxResult
{
  GObject parent_instance;

  int exit_status;
  int exec_errno;
  GBytes *stdout_bytes;
  GBytes *stderr_bytes;
};

G_DEFINE_FINAL_TYPE (SandboxResult, sandbox_result, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_EXEC_ERRNO,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
sandbox_result_finalize (GObject *object)
{
  SandboxResult *self = SANDBOX_RESULT (object);

  g_clear_pointer (&self->stdout_bytes, g_bytes_unref);
  g_clear_pointer (&self->stderr_bytes, g_bytes_unref);

  G_OBJECT_CLASS (sandbox_result_parent_class)->finalize (object);
}

static void
sandbox_result_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  SandboxResult *self = SANDBOX_RESULT (object);

  switch (prop_id)
    {
    case PROP_EXEC_ERRNO:
      g_value_set_int (value, self->exec_errno);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_result_class_init (SandboxResultClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_result_finalize;
  object_class->get_property = sandbox_result_get_property;

  /**
   * SandboxResult:exec-errno:
   *
   * The `errno` of the guest's failed `execve()` when the command's
   * executable could not be executed (`ENOENT`, `EACCES`, …), or 0 when it
   * was executed, whatever it then did. See
   * [method@Sandbox.Result.check_executed] for it as a #GError.
   */
  properties[PROP_EXEC_ERRNO] =
    g_param_spec_int ("exec-errno", NULL, NULL, 0, G_MAXINT, 0,
                      G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sandbox_result_init (SandboxResult *self)
{
}

static GBytes *
bytes_or_empty (GBytes *bytes)
{
  return bytes != NULL ? g_bytes_ref (bytes) : g_bytes_new_static ("", 0);
}

/**
 * sandbox_result_new:
 * @exit_status: the exit status, or 128 + the signal number
 * @stdout_bytes: (nullable): what the command wrote to stdout, or %NULL for
 *   nothing
 * @stderr_bytes: (nullable): what the command wrote to stderr, or %NULL for
 *   nothing
 *
 * Creates a result; drivers and [class@Sandbox.Process] make these.
 *
 * Returns: (transfer full): a new [class@Sandbox.Result]
 */
SandboxResult *
sandbox_result_new (int     exit_status,
                    GBytes *stdout_bytes,
                    GBytes *stderr_bytes)
{
  SandboxResult *self = g_object_new (SANDBOX_TYPE_RESULT, NULL);

  self->exit_status = exit_status;
  self->stdout_bytes = bytes_or_empty (stdout_bytes);
  self->stderr_bytes = bytes_or_empty (stderr_bytes);
  return self;
}

/**
 * sandbox_result_exec_failure_status:
 * @exec_errno: the errno of a failed execve()
 *
 * Gets the exit status a POSIX shell gives a command it could not execute:
 * 127 when there is no such file (`ENOENT`, or `ENOTDIR` for a path through
 * a file), 126 when there is one but it cannot be executed.
 *
 * Returns: 127 or 126
 */
int
sandbox_result_exec_failure_status (int exec_errno)
{
  return exec_errno == ENOENT || exec_errno == ENOTDIR ? 127 : 126;
}

/**
 * sandbox_result_new_exec_failure:
 * @exec_errno: the errno of the guest's failed execve(), not 0
 * @stdout_bytes: (nullable): what the sandbox wrote to stdout anyway
 * @stderr_bytes: (nullable): what it wrote to stderr anyway
 *
 * Creates the result of a command whose executable could not be executed,
 * with the exit status sandbox_result_exec_failure_status() gives.
 *
 * Returns: (transfer full): a new [class@Sandbox.Result]
 */
SandboxResult *
sandbox_result_new_exec_failure (int     exec_errno,
                                 GBytes *stdout_bytes,
                                 GBytes *stderr_bytes)
{
  SandboxResult *self;

  g_return_val_if_fail (exec_errno > 0, NULL);

  self = sandbox_result_new (sandbox_result_exec_failure_status (exec_errno),
                             stdout_bytes, stderr_bytes);
  self->exec_errno = exec_errno;
  return self;
}

/**
 * sandbox_result_get_exec_errno:
 * @self: a [class@Sandbox.Result]
 *
 * Gets why the command's executable could not be executed, if it could
 * not: the `errno` of the guest's failed `execve()`. A command that was
 * executed gives 0 however it ended, including a program that exits with
 * 127 itself.
 *
 * Returns: the `errno` value (`ENOENT`, `EACCES`, `ENOEXEC`, …), or 0 when
 *   the executable ran
 */
int
sandbox_result_get_exec_errno (SandboxResult *self)
{
  g_return_val_if_fail (SANDBOX_IS_RESULT (self), 0);

  return self->exec_errno;
}

/**
 * sandbox_result_check_executed:
 * @self: a [class@Sandbox.Result]
 * @error: return location for a #GError
 *
 * Checks that the command's executable was executed, as
 * g_spawn_check_wait_status() checks an exit status: when it could not be,
 * sets @error in the %G_IO_ERROR domain with the code
 * g_io_error_from_errno() gives for [property@Sandbox.Result:exec-errno]
 * (%G_IO_ERROR_NOT_FOUND for a missing file, %G_IO_ERROR_PERMISSION_DENIED
 * for one without its execute bit or a directory, …).
 *
 * Returns: %TRUE if the executable ran (whatever its exit status), %FALSE
 *   with @error set if it could not be executed
 */
gboolean
sandbox_result_check_executed (SandboxResult  *self,
                               GError        **error)
{
  g_return_val_if_fail (SANDBOX_IS_RESULT (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (self->exec_errno == 0)
    return TRUE;
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (self->exec_errno),
               "Command could not be executed: %s", g_strerror (self->exec_errno));
  return FALSE;
}

/**
 * sandbox_result_get_exit_status:
 * @self: a [class@Sandbox.Result]
 *
 * Gets how the command ended.
 *
 * Returns: the exit status, or 128 + the signal number that ended the command
 */
int
sandbox_result_get_exit_status (SandboxResult *self)
{
  g_return_val_if_fail (SANDBOX_IS_RESULT (self), -1);

  return self->exit_status;
}

/**
 * sandbox_result_get_stdout_bytes:
 * @self: a [class@Sandbox.Result]
 *
 * Gets what the command wrote to standard output.
 *
 * Returns: (transfer none): the command's standard output, possibly empty
 */
GBytes *
sandbox_result_get_stdout_bytes (SandboxResult *self)
{
  g_return_val_if_fail (SANDBOX_IS_RESULT (self), NULL);

  return self->stdout_bytes;
}

/**
 * sandbox_result_get_stderr_bytes:
 * @self: a [class@Sandbox.Result]
 *
 * Gets what the command wrote to standard error.
 *
 * Returns: (transfer none): the command's standard error, possibly empty
 */
GBytes *
sandbox_result_get_stderr_bytes (SandboxResult *self)
{
  g_return_val_if_fail (SANDBOX_IS_RESULT (self), NULL);

  return self->stderr_bytes;
}

#define REPLACEMENT_CHARACTER "\xef\xbf\xbd"

/* The WHATWG UTF-8 decoder (what TextDecoder does without `fatal`): each
 * maximal ill-formed subsequence becomes one U+FFFD. g_utf8_make_valid()
 * differs: it replaces byte by byte and also replaces NUL. */
static char *
decode_utf8_lossy (const guint8 *data,
                   gsize         length)
{
  GString *text = g_string_sized_new (length + 1);
  gsize sequence_start = 0;
  guint needed = 0;
  guint seen = 0;
  guint8 lower = 0x80;
  guint8 upper = 0xBF;

  for (gsize i = 0; i < length; i++)
    {
      guint8 byte = data[i];

      if (needed == 0)
        {
          sequence_start = i;
          if (byte <= 0x7F)
            g_string_append_c (text, (char) byte);
          else if (byte >= 0xC2 && byte <= 0xDF)
            needed = 1;
          else if (byte >= 0xE0 && byte <= 0xEF)
            {
              lower = byte == 0xE0 ? 0xA0 : 0x80;
              upper = byte == 0xED ? 0x9F : 0xBF;
              needed = 2;
            }
          else if (byte >= 0xF0 && byte <= 0xF4)
            {
              lower = byte == 0xF0 ? 0x90 : 0x80;
              upper = byte == 0xF4 ? 0x8F : 0xBF;
              needed = 3;
            }
          else
            g_string_append (text, REPLACEMENT_CHARACTER);
          continue;
        }

      if (byte < lower || byte > upper)
        {
          /* The sequence so far is one error; this byte starts afresh. */
          g_string_append (text, REPLACEMENT_CHARACTER);
          needed = seen = 0;
          lower = 0x80;
          upper = 0xBF;
          i--;
          continue;
        }

      lower = 0x80;
      upper = 0xBF;
      if (++seen == needed)
        {
          g_string_append_len (text, (const char *) data + sequence_start, needed + 1);
          needed = seen = 0;
        }
    }

  if (needed != 0)
    g_string_append (text, REPLACEMENT_CHARACTER);

  return g_string_free (text, FALSE);
}

static char *
bytes_to_text (GBytes *bytes)
{
  gsize length;
  const guint8 *data = g_bytes_get_data (bytes, &length);

  if (length >= 3 && memcmp (data, "\xef\xbb\xbf", 3) == 0)
    {
      data += 3;
      length -= 3;
    }

  return decode_utf8_lossy (data, length);
}

/**
 * sandbox_result_dup_stdout_text:
 * @self: a [class@Sandbox.Result]
 *
 * Decodes standard output as `TextDecoder` does: a leading UTF-8 byte order
 * mark is dropped and each invalid UTF-8 sequence becomes U+FFFD. NUL bytes
 * are kept, so a C string reading of the result stops at the first one; use
 * [method@Sandbox.Result.get_stdout_bytes] for binary output.
 *
 * Returns: (transfer full): the output as valid UTF-8
 */
char *
sandbox_result_dup_stdout_text (SandboxResult *self)
{
  g_return_val_if_fail (SANDBOX_IS_RESULT (self), NULL);

  return bytes_to_text (self->stdout_bytes);
}

/**
 * sandbox_result_dup_stderr_text:
 * @self: a [class@Sandbox.Result]
 *
 * Decodes standard error like [method@Sandbox.Result.dup_stdout_text].
 *
 * Returns: (transfer full): the error output as valid UTF-8
 */
char *
sandbox_result_dup_stderr_text (SandboxResult *self)
{
  g_return_val_if_fail (SANDBOX_IS_RESULT (self), NULL);

  return bytes_to_text (self->stderr_bytes);
}
