/* sandbox-log.c — lifecycle events as structured log messages
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend-private.h"
#include "sandbox-error.h"
#include "sandbox-log-private.h"

/* Who a message is about. Set once, when the backend hands out a handle,
 * and shared (reference-counted) by the objects that later report events
 * but do not know their session: the handle, its #SandboxSession, the
 * session's #SandboxDriver and each process spawned through it. */
typedef struct
{
  const char *driver;   /* interned */
  char *session_id;
  char *template_key;
} LogContext;

static G_DEFINE_QUARK (sandbox-log-context, log_context)
/* A limit kill of a process that has no context yet (the limit struck
 * before its spawn returned), logged once the context arrives. */
static G_DEFINE_QUARK (sandbox-log-pending-kill, log_pending_kill)
/* Orders a process's binding against its limit kill, so that the kill is
 * logged exactly once and with its session. */
static GMutex process_lock;

static void
log_context_clear (gpointer data)
{
  LogContext *context = data;

  g_free (context->session_id);
  g_free (context->template_key);
}

static void
log_context_release (gpointer data)
{
  g_atomic_rc_box_release_full (data, log_context_clear);
}

static void
log_context_bind (gpointer    object,
                  LogContext *context)
{
  g_object_set_qdata_full (object, log_context_quark (), g_atomic_rc_box_acquire (context),
                           log_context_release);
}

/* Borrowed: the context lives as long as @object does. */
static const LogContext *
log_context_of (gpointer object)
{
  return object != NULL ? g_object_get_qdata (object, log_context_quark ()) : NULL;
}

/* The name the driver was registered under ("bubblewrap", "memory"), which
 * the backend's `name` property (the store's namespace) need not be. */
static const char *
driver_name_of (SandboxBackend *backend)
{
  return g_intern_string (sandbox_driver_name_of_type (G_OBJECT_TYPE (backend)));
}

/* The fields of one message; a field without a value is left out. */
typedef struct
{
  GLogField fields[12];
  gsize n;
  char error_name[64];
} LogFields;

static void
log_fields_add (LogFields  *self,
                const char *key,
                const char *value)
{
  g_assert (self->n < G_N_ELEMENTS (self->fields));
  if (value != NULL)
    self->fields[self->n++] = (GLogField) { key, value, -1 };
}

static void
log_fields_init (LogFields        *self,
                 const char       *event,
                 const LogContext *context)
{
  self->n = 0;
  log_fields_add (self, "GLIB_DOMAIN", SANDBOX_LOG_DOMAIN);
  log_fields_add (self, "SANDBOX_EVENT", event);
  if (context != NULL)
    {
      log_fields_add (self, "SANDBOX_DRIVER", context->driver);
      log_fields_add (self, "SANDBOX_SESSION_ID", context->session_id);
      log_fields_add (self, "SANDBOX_TEMPLATE_KEY", context->template_key);
    }
}

/* SANDBOX_ERROR: the reference's code name ("SANDBOX_BUSY"), or the domain
 * and code of another error. */
static void
log_fields_add_error (LogFields    *self,
                      const GError *error)
{
  if (error == NULL)
    return;
  if (error->domain == SANDBOX_ERROR)
    g_strlcpy (self->error_name, sandbox_error_code_name (error->code), sizeof self->error_name);
  else
    g_snprintf (self->error_name, sizeof self->error_name, "%s:%d",
                g_quark_to_string (error->domain), error->code);
  log_fields_add (self, "SANDBOX_ERROR", self->error_name);
}

static void
log_fields_emit (LogFields      *self,
                 GLogLevelFlags  level,
                 const char     *format,
                 ...) G_GNUC_PRINTF (3, 4);

static void
log_fields_emit (LogFields      *self,
                 GLogLevelFlags  level,
                 const char     *format,
                 ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  /* syslog's priorities, as g_log_structured() sets them. */
  log_fields_add (self, "PRIORITY", level == G_LOG_LEVEL_INFO ? "6" : "7");
  log_fields_add (self, "MESSAGE", message);
  g_log_structured_array (level, self->fields, self->n);
}

static const char *
error_message (GError **error)
{
  return error != NULL && *error != NULL ? (*error)->message : "unknown error";
}

static const char *
policy_kind_name (SandboxNetworkPolicy *policy)
{
  switch (sandbox_network_policy_get_kind (policy))
    {
    case SANDBOX_NETWORK_POLICY_DENY_ALL:
      return "deny-all";
    case SANDBOX_NETWORK_POLICY_ALLOW_ALL:
      return "allow-all";
    case SANDBOX_NETWORK_POLICY_ALLOW_LIST:
    default:
      return "allow-list";
    }
}

static void
log_fields_add_policy (LogFields            *self,
                       SandboxNetworkPolicy *policy,
                       char                  n_rules[16])
{
  g_snprintf (n_rules, 16, "%u", sandbox_network_policy_get_n_rules (policy));
  log_fields_add (self, "SANDBOX_POLICY", policy_kind_name (policy));
  log_fields_add (self, "SANDBOX_POLICY_RULES", n_rules);
}

/**
 * sandbox_log_session_opened:
 * @backend: the backend asked
 * @event: "create", "resume" or "recover"
 * @template_key: the template key asked for
 * @state: (nullable): the session's state: the returned handle's, or else
 *   the state asked to resume
 * @policy: the network policy asked for
 * @objects: (nullable) (array zero-terminated=1): the handle returned, then
 *   the other objects that report events of its session (its session, the
 *   session's driver, its coding binding), or %NULL if none was returned
 * @error: (nullable): where the backend put its error when no handle was
 *   returned (read, never changed)
 *
 * Logs a session's creation, resumption or recovery (a dead owner's session
 * taken over: at info level) or the refusal, with its network policy
 * (redacted), and gives each of @objects the log context every later event
 * of theirs carries. The caller hands over what the context is made of;
 * the log never asks the handle.
 */
void
sandbox_log_session_opened (SandboxBackend        *backend,
                            const char            *event,
                            const char            *template_key,
                            SandboxState          *state,
                            SandboxNetworkPolicy  *policy,
                            gpointer const        *objects,
                            GError               **error)
{
  g_autofree char *redacted = sandbox_network_policy_to_redacted_json (policy);
  LogContext *context = g_atomic_rc_box_new0 (LogContext);
  char n_rules[16];
  LogFields fields;

  context->driver = driver_name_of (backend);
  context->session_id = state != NULL ? g_strdup (sandbox_state_get_session_id (state)) : NULL;
  context->template_key = g_strdup (state != NULL ? sandbox_state_get_template_key (state)
                                                  : template_key);
  log_fields_init (&fields, event, context);
  log_fields_add_policy (&fields, policy, n_rules);

  if (objects == NULL || objects[0] == NULL)
    {
      log_fields_add_error (&fields, error != NULL ? *error : NULL);
      log_fields_emit (&fields, G_LOG_LEVEL_DEBUG, "Could not %s a %s session: %s",
                       event, context->driver, error_message (error));
    }
  else
    {
      for (gsize i = 0; objects[i] != NULL; i++)
        log_context_bind (objects[i], context);
      log_fields_emit (&fields, g_str_equal (event, "recover") ? G_LOG_LEVEL_INFO
                                                               : G_LOG_LEVEL_DEBUG,
                       "%s %s session %s from template %s with network policy %s",
                       g_str_equal (event, "create") ? "Created"
                       : g_str_equal (event, "resume") ? "Resumed" : "Recovered",
                       context->driver, context->session_id, context->template_key, redacted);
    }
  g_atomic_rc_box_release_full (context, log_context_clear);
}

/* The context of a handle made without the backend's public entry points
 * (a driver's own tests): from its state. */
static LogContext *
handle_context_new (SandboxHandle *handle)
{
  g_autoptr(SandboxState) state = NULL;
  LogContext *context = g_atomic_rc_box_new0 (LogContext);

  g_object_get (handle, "state", &state, NULL);
  if (state != NULL)
    {
      context->session_id = g_strdup (sandbox_state_get_session_id (state));
      context->template_key = g_strdup (sandbox_state_get_template_key (state));
    }
  return context;
}

static void
release_context (LogContext *context)
{
  g_atomic_rc_box_release_full (context, log_context_clear);
}

/**
 * sandbox_log_handle_event:
 * @handle: the handle
 * @event: "stop", "delete" or "checkpoint"
 * @ok: whether it succeeded
 * @error: (nullable): where its error is when not @ok (read, never changed)
 *
 * Logs that @handle's session was stopped, deleted or checkpointed, or
 * could not be.
 */
void
sandbox_log_handle_event (SandboxHandle  *handle,
                          const char     *event,
                          gboolean        ok,
                          GError        **error)
{
  const LogContext *used = log_context_of (handle);
  LogContext *own = NULL;
  const char *session_id;
  LogFields fields;

  /* A handle whose session never got a context: one made for this event. */
  if (used == NULL)
    used = own = handle_context_new (handle);
  session_id = used->session_id != NULL ? used->session_id : "?";

  log_fields_init (&fields, event, used);
  if (ok)
    log_fields_emit (&fields, G_LOG_LEVEL_DEBUG, "%s session %s",
                     g_str_equal (event, "stop") ? "Stopped"
                     : g_str_equal (event, "delete") ? "Deleted" : "Checkpointed",
                     session_id);
  else
    {
      log_fields_add_error (&fields, error != NULL ? *error : NULL);
      log_fields_emit (&fields, G_LOG_LEVEL_DEBUG, "Could not %s session %s: %s", event,
                       session_id, error_message (error));
    }
  g_clear_pointer (&own, release_context);
}

static void log_limit_kill (const LogContext *context,
                            const GError     *reason);

/**
 * sandbox_log_spawned:
 * @spawner: the session's [iface@Sandbox.Driver] or [iface@Sandbox.CodingBinding]
 * @process: (nullable): the process it started, or %NULL
 * @error: (nullable): where its error is when @process is %NULL (read,
 *   never changed)
 *
 * Gives @process its session's log context (for a limit kill, logged now if
 * it came first), or logs an admission refusal (%SANDBOX_ERROR_BUSY). Other
 * spawn failures are the caller's to report.
 */
void
sandbox_log_spawned (gpointer          spawner,
                     SandboxProcess   *process,
                     GError          **error)
{
  LogContext *context = (LogContext *) log_context_of (spawner);
  g_autoptr(GError) pending = NULL;
  LogFields fields;

  if (process != NULL)
    {
      if (context == NULL)
        return;
      g_mutex_lock (&process_lock);
      log_context_bind (process, context);
      pending = g_object_steal_qdata (G_OBJECT (process), log_pending_kill_quark ());
      g_mutex_unlock (&process_lock);
      if (pending != NULL)
        log_limit_kill (context, pending);
      return;
    }
  if (error == NULL || !g_error_matches (*error, SANDBOX_ERROR, SANDBOX_ERROR_BUSY))
    return;
  log_fields_init (&fields, "spawn", context);
  log_fields_add_error (&fields, *error);
  log_fields_emit (&fields, G_LOG_LEVEL_DEBUG, "Refused a command in session %s: %s",
                   context != NULL ? context->session_id : "?", (*error)->message);
}

/**
 * sandbox_log_policy_changed:
 * @driver: the session's driver
 * @policy: the policy asked for
 * @ok: whether the session enforces it now
 * @error: (nullable): where the refusal is when not @ok (read, never changed)
 *
 * Logs a network policy change or its refusal: the mode, the number of
 * rules and the redacted policy (origins and header names, never values).
 */
void
sandbox_log_policy_changed (SandboxDriver         *driver,
                            SandboxNetworkPolicy  *policy,
                            gboolean               ok,
                            GError               **error)
{
  g_autofree char *redacted = sandbox_network_policy_to_redacted_json (policy);
  const LogContext *context = log_context_of (driver);
  const char *session_id = context != NULL ? context->session_id : "?";
  char n_rules[16];
  LogFields fields;

  log_fields_init (&fields, "policy", context);
  log_fields_add_policy (&fields, policy, n_rules);
  if (ok)
    log_fields_emit (&fields, G_LOG_LEVEL_DEBUG, "Session %s now has network policy %s",
                     session_id, redacted);
  else
    {
      log_fields_add_error (&fields, error != NULL ? *error : NULL);
      log_fields_emit (&fields, G_LOG_LEVEL_DEBUG,
                       "Refused network policy %s for session %s: %s",
                       redacted, session_id, error_message (error));
    }
}

/**
 * sandbox_log_limit_kill:
 * @process: the process being killed
 * @reason: the %SANDBOX_ERROR_LIMIT it fails with
 *
 * Logs that a limit (deadline, output cap, or a driver's own such as
 * memory) killed a command: the limit, never the command. A process that
 * does not know its session yet (the limit struck before its spawn
 * returned) logs it when sandbox_log_spawned() gives it one; one spawned
 * around the core's entry points (a driver's own) never does.
 */
void
sandbox_log_limit_kill (SandboxProcess *process,
                        const GError   *reason)
{
  const LogContext *context;

  g_mutex_lock (&process_lock);
  context = log_context_of (process);
  if (context == NULL)
    g_object_set_qdata_full (G_OBJECT (process), log_pending_kill_quark (),
                             g_error_copy (reason), (GDestroyNotify) g_error_free);
  g_mutex_unlock (&process_lock);
  /* Bound once and never unbound: safe to read unlocked from here. */
  if (context != NULL)
    log_limit_kill (context, reason);
}

static void
log_limit_kill (const LogContext *context,
                const GError     *reason)
{
  LogFields fields;

  log_fields_init (&fields, "limit-kill", context);
  log_fields_add_error (&fields, reason);
  log_fields_emit (&fields, G_LOG_LEVEL_DEBUG, "Killed a command of session %s: %s",
                   context->session_id, reason->message);
}

/**
 * sandbox_log_gateway_event:
 * @event: "gateway-start" or "gateway-stop"
 * @socket_path: the gateway's socket
 * @session_id: (nullable): the session the gateway serves, if it knows it
 *   (it starts while the backend creates the session, before it has a
 *   handle, so it has the id alone)
 * @policy: (nullable): the policy it starts with
 *
 * Logs a gateway's start or stop, with its socket's host path.
 */
void
sandbox_log_gateway_event (const char           *event,
                           const char           *socket_path,
                           const char           *session_id,
                           SandboxNetworkPolicy *policy)
{
  char n_rules[16];
  LogFields fields;

  log_fields_init (&fields, event, NULL);
  log_fields_add (&fields, "SANDBOX_SESSION_ID", session_id);
  log_fields_add (&fields, "SANDBOX_GATEWAY_SOCKET", socket_path);
  if (policy != NULL)
    log_fields_add_policy (&fields, policy, n_rules);
  log_fields_emit (&fields, G_LOG_LEVEL_DEBUG, "%s the network gateway on %s",
                   g_str_equal (event, "gateway-start") ? "Started" : "Stopped", socket_path);
}
