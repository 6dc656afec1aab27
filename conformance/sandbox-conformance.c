/* sandbox-conformance.c — the black-box contract every backend must keep:
 * the suite object, its checks in order, and the run that reports them as TAP
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>

#include "sandbox-conformance-private.h"


/**
 * SandboxConformance:
 *
 * The backend conformance suite: the black-box contract every driver must
 * keep, run against a driver by name. A custom driver's author runs it with
 * one command, `sandbox-conformance DRIVER`, and reads the result as TAP.
 *
 * The suite constructs its own backends with [func@Sandbox.Backend.newv] from the
 * driver name and the properties given with
 * [method@SandboxConformance.Conformance.set_backend_property]. When the driver has a
 * `state-directory` property and none is given, each run uses a fresh
 * temporary directory and removes it afterwards. It checks:
 *
 * - prewarm: the template key is [method@Sandbox.Template.compute_key] of the
 *   template and backend name, deterministic, `reused` on repeat,
 *   independent of file order and sensitive to content;
 * - lifecycle: create, capture_state(), stop (idempotent; every operation
 *   then fails with %SANDBOX_ERROR_STOPPED), resume with the workspace kept,
 *   delete (capture_state() then fails with %SANDBOX_ERROR_STOPPED, resuming
 *   with %SANDBOX_ERROR_NOT_FOUND, deleting again is a no-op, templates stay);
 * - leases: a second owner, through the same or another backend object over
 *   the same state directory, gets %SANDBOX_ERROR_BUSY, and so does delete()
 *   by an older, stopped handle;
 * - state checks: a state of another backend or template is
 *   %SANDBOX_ERROR_STATE_MISMATCH; unknown templates and sessions are
 *   %SANDBOX_ERROR_NOT_FOUND;
 * - paths: canonical and `/workspace/` forms name the same file; `..`,
 *   absolute paths, backslashes, empty segments are %SANDBOX_ERROR_PATH, in
 *   file operations and as a command's working directory; the workspace root
 *   can't be removed;
 * - files: a missing file is %G_IO_ERROR_NOT_FOUND, writes create parents,
 *   removing a missing path succeeds, 1 MiB is accepted and more is
 *   %SANDBOX_ERROR_LIMIT;
 * - text: read_text() drops a leading BOM and fails on invalid UTF-8 with
 *   %G_CONVERT_ERROR_ILLEGAL_SEQUENCE; run() replaces invalid UTF-8 with
 *   U+FFFD while the raw bytes are kept;
 * - network: a policy the driver cannot enforce is refused with
 *   %SANDBOX_ERROR_UNAVAILABLE (or accepted), never with another error; a
 *   policy change while commands are live is %SANDBOX_ERROR_BUSY;
 * - commands: exit status, stdin, live [signal@Sandbox.Process::stdout-data],
 *   cancellation (%G_IO_ERROR_CANCELLED), the deadline and output cap
 *   (%SANDBOX_ERROR_LIMIT), admission at `max-concurrent-commands`
 *   (%SANDBOX_ERROR_BUSY before anything starts) and stop killing live
 *   commands;
 * - snapshots ([method@Sandbox.Handle.snapshot], skipped when it is
 *   %G_IO_ERROR_NOT_SUPPORTED): a fork sees exactly the snapshot of a
 *   changed session, forks' writes show nowhere else, the same changes
 *   give the same key, a restore gives the exact tree back and keeps the
 *   id and lease, a restore outside the session's line is
 *   %SANDBOX_ERROR_INVALID, deleting what something depends on and
 *   snapshot or restore while a command runs are %SANDBOX_ERROR_BUSY.
 *
 * The command checks run only these commands, which a real driver finds in
 * its runtime and a scripted driver (such as `memory`) must declare:
 * `/usr/bin/cat conformance.txt` (prints the workspace file),
 * `/usr/bin/cat` (copies stdin to stdout), `/usr/bin/false` (exits 1),
 * `/usr/bin/printf \377` (writes the byte 0xFF), `/usr/bin/sleep 30` (runs
 * until killed), `/usr/bin/yes` (writes without end) and
 * `/usr/bin/ln -s moved link` (makes the link `link` to `moved`). A driver that runs
 * no commands at all claims %SANDBOX_CONFORMANCE_FLAGS_NO_COMMANDS; the suite
 * then checks that every spawn is refused with %SANDBOX_ERROR_UNAVAILABLE and
 * skips the rest.
 *
 * Each check's result is emitted as [signal@SandboxConformance.Conformance::check-finished] and,
 * when a stream is given to [method@SandboxConformance.Conformance.run], written as TAP.
 */

enum {
  PROP_0,
  PROP_DRIVER,
  PROP_FLAGS,
  N_PROPS
};

enum {
  SIGNAL_CHECK_FINISHED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FLAGS_TYPE (SandboxConformanceFlags, sandbox_conformance_flags,
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_FLAGS_NONE, "none"),
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_FLAGS_NO_COMMANDS, "no-commands"))

G_DEFINE_ENUM_TYPE (SandboxConformanceOutcome, sandbox_conformance_outcome,
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_OUTCOME_PASS, "pass"),
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_OUTCOME_FAIL, "fail"),
  G_DEFINE_ENUM_VALUE (SANDBOX_CONFORMANCE_OUTCOME_SKIP, "skip"))

G_DEFINE_FINAL_TYPE (SandboxConformance, sandbox_conformance, G_TYPE_OBJECT)


/* The checks in order: their positions from 1 are their TAP numbers. */
static const ConformanceCheck * const check_tables[] = {
  conformance_session_checks,
  conformance_workspace_checks,
  conformance_command_checks,
  conformance_live_checks,
  conformance_snapshot_checks,
};

static const ConformanceCheck *
lookup_check (guint index)
{
  for (gsize t = 0; t < G_N_ELEMENTS (check_tables); t++)
    for (const ConformanceCheck *check = check_tables[t]; check->name != NULL; check++)
      if (index-- == 0)
        return check;
  return NULL;
}

static guint
count_checks (void)
{
  guint n = 0;

  while (lookup_check (n) != NULL)
    n++;
  return n;
}

/* ------------------------------------------------------------------------ */
/* The object                                                                */
/* ------------------------------------------------------------------------ */

static void
clear_value (gpointer data)
{
  g_value_unset (data);
}

static void
sandbox_conformance_finalize (GObject *object)
{
  SandboxConformance *self = SANDBOX_CONFORMANCE (object);

  g_clear_pointer (&self->driver, g_free);
  g_clear_pointer (&self->property_names, g_ptr_array_unref);
  g_clear_pointer (&self->property_values, g_array_unref);

  G_OBJECT_CLASS (sandbox_conformance_parent_class)->finalize (object);
}

static void
sandbox_conformance_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  SandboxConformance *self = SANDBOX_CONFORMANCE (object);

  switch (prop_id)
    {
    case PROP_DRIVER:
      g_value_set_string (value, self->driver);
      break;
    case PROP_FLAGS:
      g_value_set_flags (value, self->flags);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_conformance_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  SandboxConformance *self = SANDBOX_CONFORMANCE (object);

  switch (prop_id)
    {
    case PROP_DRIVER:
      self->driver = g_value_dup_string (value);
      break;
    case PROP_FLAGS:
      self->flags = g_value_get_flags (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_conformance_class_init (SandboxConformanceClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_conformance_finalize;
  object_class->get_property = sandbox_conformance_get_property;
  object_class->set_property = sandbox_conformance_set_property;

  /**
   * SandboxConformance:driver:
   *
   * The name of the driver under test, as [func@Sandbox.Backend.new] takes it.
   */
  properties[PROP_DRIVER] =
    g_param_spec_string ("driver", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxConformance:flags:
   *
   * What the driver claims; see [flags@SandboxConformance.ConformanceFlags].
   */
  properties[PROP_FLAGS] =
    g_param_spec_flags ("flags", NULL, NULL, SANDBOX_TYPE_CONFORMANCE_FLAGS,
                        SANDBOX_CONFORMANCE_FLAGS_NONE,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * SandboxConformance::check-finished:
   * @self: the suite
   * @number: the check's number, from 1, as in TAP
   * @name: the check's name, such as `lease/exclusive`
   * @outcome: whether the backend kept the contract
   * @detail: (nullable): what went wrong, or why the check was skipped
   *
   * Emitted after each check, in the thread that called
   * [method@SandboxConformance.Conformance.run].
   */
  signals[SIGNAL_CHECK_FINISHED] =
    g_signal_new ("check-finished",
                  G_TYPE_FROM_CLASS (klass),
                  G_SIGNAL_RUN_LAST,
                  0, NULL, NULL, NULL,
                  G_TYPE_NONE, 4,
                  G_TYPE_UINT,
                  G_TYPE_STRING,
                  SANDBOX_TYPE_CONFORMANCE_OUTCOME,
                  G_TYPE_STRING);
}

static void
sandbox_conformance_init (SandboxConformance *self)
{
  self->property_names = g_ptr_array_new_with_free_func (g_free);
  self->property_values = g_array_new (FALSE, TRUE, sizeof (GValue));
  g_array_set_clear_func (self->property_values, clear_value);
}

/**
 * sandbox_conformance_new:
 * @driver: the name of the driver under test
 * @flags: what the driver claims
 *
 * Creates the conformance suite for @driver. Nothing is loaded until
 * [method@SandboxConformance.Conformance.run].
 *
 * Returns: (transfer full): a new [class@SandboxConformance.Conformance]
 */
SandboxConformance *
sandbox_conformance_new (const char              *driver,
                         SandboxConformanceFlags  flags)
{
  g_return_val_if_fail (driver != NULL, NULL);

  return g_object_new (SANDBOX_TYPE_CONFORMANCE, "driver", driver, "flags", flags, NULL);
}

/**
 * sandbox_conformance_get_driver:
 * @self: a [class@SandboxConformance.Conformance]
 *
 * Gets the name of the driver the suite checks.
 *
 * Returns: the name of the driver under test
 */
const char *
sandbox_conformance_get_driver (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), NULL);

  return self->driver;
}

/**
 * sandbox_conformance_get_flags:
 * @self: a [class@SandboxConformance.Conformance]
 *
 * Gets what the driver claims, which decides the checks that apply.
 *
 * Returns: what the driver claims
 */
SandboxConformanceFlags
sandbox_conformance_get_flags (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), SANDBOX_CONFORMANCE_FLAGS_NONE);

  return self->flags;
}

/**
 * sandbox_conformance_list_checks:
 *
 * Lists the checks [method@SandboxConformance.Conformance.run] performs, in order; their
 * numbers in TAP are their positions from 1.
 *
 * Returns: (transfer full) (array zero-terminated=1): the check names
 */
char **
sandbox_conformance_list_checks (void)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  const ConformanceCheck *check;

  for (guint i = 0; (check = lookup_check (i)) != NULL; i++)
    g_strv_builder_add (builder, check->name);
  return g_strv_builder_end (builder);
}


static int
remove_entry (const char        *path,
              const struct stat *st,
              int                type,
              struct FTW        *ftw)
{
  if (remove (path) != 0)
    g_warning ("Could not remove %s: %s", path, g_strerror (errno));
  return 0;
}

static gboolean
write_tap (GOutputStream  *tap_output,
           GCancellable   *cancellable,
           GError        **error,
           const char     *format,
           ...) G_GNUC_PRINTF (4, 5);

static gboolean
write_tap (GOutputStream  *tap_output,
           GCancellable   *cancellable,
           GError        **error,
           const char     *format,
           ...)
{
  g_autofree char *text = NULL;
  va_list args;

  if (tap_output == NULL)
    return TRUE;

  va_start (args, format);
  text = g_strdup_vprintf (format, args);
  va_end (args);

  return g_output_stream_write_all (tap_output, text, strlen (text), NULL, cancellable, error)
         && g_output_stream_flush (tap_output, cancellable, error);
}

/* Each line of @detail becomes a TAP diagnostic. */
static char *
tap_diagnostic (const char *detail)
{
  g_auto(GStrv) lines = g_strsplit (detail, "\n", -1);
  GString *out = g_string_new (NULL);

  for (guint i = 0; lines[i] != NULL; i++)
    g_string_append_printf (out, "# %s\n", lines[i]);
  return g_string_free (out, FALSE);
}

static gboolean
prepare_run (ConformanceRun  *run,
             GError         **error)
{
  SandboxConformance *self = run->self;
  g_autoptr(SandboxTemplate) template_ = conformance_make_template ("conformance", FALSE, NULL);
  g_autoptr(SandboxTemplate) other = conformance_make_template ("conformance", FALSE, "other");

  if (!conformance_has_property (self, "state-directory"))
    {
      g_autoptr(GTypeClass) klass = NULL;
      GType type = sandbox_lookup_driver (self->driver, error);

      if (type == G_TYPE_INVALID)
        return FALSE;
      /* Only drivers with a state-directory property get one. */
      klass = g_type_class_ref (type);
      if (g_object_class_find_property (G_OBJECT_CLASS (klass), "state-directory") != NULL)
        {
          run->temporary_directory = g_dir_make_tmp ("sandbox-conformance-XXXXXX", error);
          if (run->temporary_directory == NULL)
            return FALSE;
        }
    }

  run->backend = conformance_new_backend (self, run->temporary_directory, 0, run->cancellable,
                                          error);
  if (run->backend == NULL)
    return FALSE;
  run->name = g_strdup (sandbox_backend_get_name (run->backend));
  run->key = sandbox_backend_prewarm (run->backend, template_, NULL, run->cancellable, error);
  if (run->key == NULL)
    return FALSE;
  run->other_key = sandbox_backend_prewarm (run->backend, other, NULL, run->cancellable, error);
  return run->other_key != NULL;
}

static void
finish_run (ConformanceRun *run)
{
  g_clear_object (&run->backend);
  if (run->temporary_directory != NULL)
    nftw (run->temporary_directory, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  g_clear_pointer (&run->temporary_directory, g_free);
  g_clear_pointer (&run->name, g_free);
  g_clear_pointer (&run->key, g_free);
  g_clear_pointer (&run->other_key, g_free);
  g_clear_pointer (&run->skip_reason, g_free);
}

/* Runs one check, with the fixture its row asks for. */
static gboolean
run_check (ConformanceRun          *run,
           const ConformanceCheck  *check,
           GError                 **error)
{
  g_autoptr(SandboxHandleDiscard) handle = NULL;
  g_autoptr(SandboxState) state = NULL;
  gboolean ok;

  if (check->fixture == CONFORMANCE_FIXTURE_SESSION)
    handle = conformance_new_session (run, error);
  else if (check->fixture == CONFORMANCE_FIXTURE_STOPPED_SESSION)
    handle = conformance_new_stopped_session (run, &state, error);
  if (check->fixture != CONFORMANCE_FIXTURE_NONE && handle == NULL)
    return FALSE;

  run->handle = handle;
  run->session = handle != NULL ? sandbox_handle_get_session (handle) : NULL;
  run->state = state;
  ok = check->func (run, error);
  run->handle = NULL;
  run->session = NULL;
  run->state = NULL;
  return ok;
}

/**
 * sandbox_conformance_run:
 * @self: a [class@SandboxConformance.Conformance]
 * @tap_output: (nullable): where to write the results as TAP (version 13
 *   compatible: a plan, one `ok`/`not ok` line per check, diagnostics as
 *   `#` lines, skips as `# SKIP`)
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs every check against fresh backends of the driver, in the calling
 * thread, blocking. Each result is emitted as
 * [signal@SandboxConformance.Conformance::check-finished] and counted (see
 * [method@SandboxConformance.Conformance.get_n_failed]). A check that fails does not stop the
 * run.
 *
 * The suite's setup — constructing a backend and prewarming its templates —
 * must succeed for any check to run; when it does not, this returns %FALSE
 * with that error (and writes `Bail out!` to @tap_output).
 *
 * Returns: %TRUE when every check ran (whatever the results), %FALSE with
 *   @error set when the suite could not run
 */
gboolean
sandbox_conformance_run (SandboxConformance  *self,
                         GOutputStream       *tap_output,
                         GCancellable        *cancellable,
                         GError             **error)
{
  ConformanceRun run = { .self = self, .cancellable = cancellable };
  g_autoptr(GError) setup_error = NULL;
  gboolean ok = TRUE;

  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), FALSE);
  g_return_val_if_fail (tap_output == NULL || G_IS_OUTPUT_STREAM (tap_output), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  self->n_passed = self->n_failed = self->n_skipped = 0;

  if (!write_tap (tap_output, cancellable, error, "TAP version 13\n# sandbox-conformance %s\n",
                  self->driver))
    return FALSE;

  if (!prepare_run (&run, &setup_error))
    {
      g_autofree char *described = conformance_describe_error (setup_error);

      write_tap (tap_output, cancellable, NULL, "Bail out! %s driver: %s\n", self->driver,
                 described);
      g_prefix_error (&setup_error, "Conformance suite for the %s driver could not start: ",
                      self->driver);
      finish_run (&run);
      g_propagate_error (error, g_steal_pointer (&setup_error));
      return FALSE;
    }

  if (!write_tap (tap_output, cancellable, error, "1..%u\n", count_checks ()))
    {
      finish_run (&run);
      return FALSE;
    }

  for (guint i = 0; lookup_check (i) != NULL; i++)
    {
      const ConformanceCheck *check = lookup_check (i);
      g_autoptr(GError) failure = NULL;
      SandboxConformanceOutcome outcome;
      g_autofree char *detail = NULL;
      g_autofree char *diagnostic = NULL;
      guint number = i + 1;

      g_clear_pointer (&run.skip_reason, g_free);

      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          ok = FALSE;
          break;
        }

      if (check->runs_commands && !conformance_claims_commands (&run))
        run.skip_reason = g_strdup ("the driver claims no commands (no-commands)");
      else if (!run_check (&run, check, &failure) && failure == NULL)
        g_set_error_literal (&failure, G_IO_ERROR, G_IO_ERROR_FAILED,
                             "the check failed without saying why");

      if (failure != NULL)
        {
          outcome = SANDBOX_CONFORMANCE_OUTCOME_FAIL;
          detail = g_strdup (failure->message);
          self->n_failed++;
          diagnostic = tap_diagnostic (detail);
          ok = write_tap (tap_output, cancellable, error, "not ok %u - %s\n%s", number,
                          check->name, diagnostic);
        }
      else if (run.skip_reason != NULL)
        {
          outcome = SANDBOX_CONFORMANCE_OUTCOME_SKIP;
          detail = g_strdup (run.skip_reason);
          self->n_skipped++;
          ok = write_tap (tap_output, cancellable, error, "ok %u - %s # SKIP %s\n", number,
                          check->name, detail);
        }
      else
        {
          outcome = SANDBOX_CONFORMANCE_OUTCOME_PASS;
          self->n_passed++;
          ok = write_tap (tap_output, cancellable, error, "ok %u - %s\n", number, check->name);
        }

      g_signal_emit (self, signals[SIGNAL_CHECK_FINISHED], 0, number, check->name, outcome,
                     detail);
      if (!ok)
        break;
    }

  finish_run (&run);
  return ok;
}

/**
 * sandbox_conformance_get_n_passed:
 * @self: a [class@SandboxConformance.Conformance]
 *
 * Counts the checks that passed in the last [method@SandboxConformance.Conformance.run].
 *
 * Returns: how many checks passed in the last run
 */
guint
sandbox_conformance_get_n_passed (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), 0);

  return self->n_passed;
}

/**
 * sandbox_conformance_get_n_failed:
 * @self: a [class@SandboxConformance.Conformance]
 *
 * Counts the checks that failed in the last [method@SandboxConformance.Conformance.run].
 *
 * Returns: how many checks failed in the last run; a driver conforms when
 *   this is 0 after a successful [method@SandboxConformance.Conformance.run]
 */
guint
sandbox_conformance_get_n_failed (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), 0);

  return self->n_failed;
}

/**
 * sandbox_conformance_get_n_skipped:
 * @self: a [class@SandboxConformance.Conformance]
 *
 * Counts the checks skipped in the last [method@SandboxConformance.Conformance.run] because
 * they don't apply to what the driver claims.
 *
 * Returns: how many checks did not apply in the last run
 */
guint
sandbox_conformance_get_n_skipped (SandboxConformance *self)
{
  g_return_val_if_fail (SANDBOX_IS_CONFORMANCE (self), 0);

  return self->n_skipped;
}
