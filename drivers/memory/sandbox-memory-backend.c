/* sandbox-memory-backend.c — the memory test driver's backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

/**
 * SECTION:sandbox-memory-backend
 * @title: The memory driver
 * @short_description: a test backend with in-memory files and scripted
 *   commands
 *
 * The `memory` driver lets an application test its agent integration without
 * bubblewrap: sessions keep their workspace files in memory and commands are
 * answered from a declared script (see the memory driver script section);
 * nothing is ever executed on the host. It keeps the semantics of the
 * bubblewrap backend — content-addressed templates, session ids, resume from
 * a [class@Sandbox.State], the exclusive lease, admission, deadlines, output and
 * file limits, stop and delete, snapshots, forks and restores
 * ([method@Sandbox.Handle.snapshot]) — so the errors a test sees are the
 * ones production sees.
 *
 * |[<!-- language="C" -->
 * g_autoptr(SandboxBackend) backend =
 *   sandbox_backend_new ("memory", NULL, &error,
 *                        "script", "{\"commands\": [{\"match\": {\"executable\": \"/usr/bin/cat\"},"
 *                                  " \"stdout-from-file-arg\": true}]}",
 *                        NULL);
 * ]|
 *
 * Properties, besides those of [iface@Sandbox.Backend]:
 * - `name` defaults to `"memory"` (%NULL means the default; `""` is
 *   %SANDBOX_ERROR_INVALID);
 * - `state-directory` is optional. Without it, templates and sessions belong
 *   to the backend object (they outlive its handles, not the backend). With
 *   it, they are shared by every memory backend of the process with the same
 *   directory and name, as two bubblewrap backends over one directory share
 *   sessions; the directory is only a name and is never touched;
 * - `script` (a JSON document) and `script-file` (a path) declare the
 *   commands; a bad script fails init() with %SANDBOX_ERROR_INVALID;
 * - `supported-network-policies` (read-only) is `{"deny-all"}`: the driver
 *   runs nothing, so deny-all holds, but it has no gateway and no network to
 *   share, so allow-all and allow-list policies are refused with
 *   %SANDBOX_ERROR_UNAVAILABLE at create and at set_network_policy.
 */

#include "sandbox-memory-backend.h"
#include "sandbox-memory-driver.h"
#include "sandbox-memory-handle.h"
#include "sandbox-memory-script.h"
#include "sandbox-memory-store.h"

#define DEFAULT_BACKEND_NAME "memory"

/* The name, state directory and admission limit are the core's
 * SandboxBackendBase's. */
struct _SandboxMemoryBackend
{
  SandboxBackendBase   parent_instance;

  char                *script_json;
  char                *script_file;

  /* Set by init(), immutable afterwards. */
  SandboxMemoryScript *script;
  SandboxMemoryStore  *store;
};

enum {
  PROP_0,
  PROP_SCRIPT,
  PROP_SCRIPT_FILE,
  PROP_SUPPORTED_NETWORK_POLICIES,
  N_PROPS
};

static void sandbox_memory_backend_backend_iface_init  (SandboxBackendInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxMemoryBackend, sandbox_memory_backend,
                                SANDBOX_TYPE_BACKEND_BASE, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_BACKEND,
                                                               sandbox_memory_backend_backend_iface_init))

static const char * const supported_network_policies[] = { "deny-all", NULL };

#define check_ready(self, cancellable, error) \
  sandbox_backend_base_check_ready (SANDBOX_BACKEND_BASE (self), (cancellable), (error))

static char *
sandbox_memory_backend_prewarm (SandboxBackend   *backend,
                                SandboxTemplate  *template_,
                                gboolean         *reused,
                                GCancellable     *cancellable,
                                GError          **error)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (backend);

  if (!check_ready (self, cancellable, error))
    return NULL;

  return sandbox_memory_store_prewarm (self->store, template_, reused, error);
}

/* The steps of the core's session protocol (sandbox-backend-protocol.c),
 * which the base's create (sandbox_backend_base_implement_sessions())
 * runs in the reference's order. */

#define STORE_OF(base) (SANDBOX_MEMORY_BACKEND (base)->store)

/* Before the store, as the reference validates the policy first: a
 * refused policy never takes a lease. */
static gboolean
sandbox_memory_backend_check_policy (SandboxBackendBase    *base,
                                     SandboxNetworkPolicy  *policy,
                                     GError               **error)
{
  return sandbox_memory_driver_check_network_policy (policy, error);
}

static gboolean
sandbox_memory_backend_check_template (SandboxBackendBase  *base,
                                       const char          *template_key,
                                       GCancellable        *cancellable,
                                       GError             **error)
{
  return sandbox_memory_store_has (STORE_OF (base), FALSE, template_key) ||
         sandbox_set_error_unknown_template (error, template_key);
}

static gboolean
sandbox_memory_backend_has_session (SandboxBackendBase *base,
                                    const char         *session_id)
{
  return sandbox_memory_store_has (STORE_OF (base), TRUE, session_id);
}

static gboolean
sandbox_memory_backend_take_lease (SandboxBackendBase  *base,
                                   const char          *session_id,
                                   GCancellable        *cancellable,
                                   GError             **error)
{
  return sandbox_memory_store_take_lease (STORE_OF (base), session_id, error);
}

static void
sandbox_memory_backend_release_lease (SandboxBackendBase *base,
                                      const char         *session_id)
{
  sandbox_memory_store_release_lease (STORE_OF (base), session_id);
}

static SandboxState *
sandbox_memory_backend_load_state (SandboxBackendBase  *base,
                                   const char          *session_id,
                                   GCancellable        *cancellable,
                                   GError             **error)
{
  return sandbox_memory_store_lookup_state (STORE_OF (base), session_id, NULL, error);
}

static gboolean
sandbox_memory_backend_new_session (SandboxBackendBase  *base,
                                    SandboxState        *state,
                                    GCancellable        *cancellable,
                                    GError             **error)
{
  return sandbox_memory_store_new_session (STORE_OF (base), state, error);
}

static SandboxHandle *
sandbox_memory_backend_new_handle (SandboxBackendBase    *base,
                                   SandboxState          *state,
                                   SandboxNetworkPolicy  *policy,
                                   GCancellable          *cancellable,
                                   GError               **error)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (base);
  const char *session_id = sandbox_state_get_session_id (state);
  g_autoptr(SandboxMemoryWorkspace) workspace = NULL;
  g_autoptr(SandboxMemoryDriver) driver = NULL;
  g_autoptr(SandboxSession) session = NULL;
  g_autoptr(SandboxState) stored = sandbox_memory_store_lookup_state (self->store, session_id,
                                                                      &workspace, error);

  if (stored == NULL)
    return NULL;
  driver = sandbox_memory_driver_new (workspace, self->script,
                                      sandbox_backend_base_get_max_concurrent_commands (base),
                                      policy);
  session = sandbox_session_new (session_id, SANDBOX_DRIVER (driver), NULL);
  return sandbox_memory_handle_new (session, state, driver, base, self->store);
}

static gboolean
sandbox_memory_backend_remove_session (SandboxBackendBase  *base,
                                       const char          *session_id,
                                       GCancellable        *cancellable,
                                       GError             **error)
{
  sandbox_memory_store_remove_session (STORE_OF (base), session_id);
  return TRUE;
}

/* The store's own view: what this backend's store holds in memory. */

static GPtrArray *
sandbox_memory_backend_list_sessions (SandboxBackend  *backend,
                                      GCancellable    *cancellable,
                                      GError         **error)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (backend);

  return check_ready (self, cancellable, error) ? sandbox_memory_store_list_sessions (self->store)
                                                : NULL;
}

static GPtrArray *
sandbox_memory_backend_list_templates (SandboxBackend  *backend,
                                       GCancellable    *cancellable,
                                       GError         **error)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (backend);

  return check_ready (self, cancellable, error) ? sandbox_memory_store_list_templates (self->store)
                                                : NULL;
}

static gboolean
sandbox_memory_backend_query_lease_owner (SandboxBackend      *backend,
                                          const char          *session_id,
                                          SandboxLeaseOwner  **owner,
                                          GCancellable        *cancellable,
                                          GError             **error)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (backend);

  return check_ready (self, cancellable, error) &&
         sandbox_memory_store_query_lease_owner (self->store, session_id, owner, error);
}

static gboolean
sandbox_memory_backend_delete_template (SandboxBackend  *backend,
                                        const char      *template_key,
                                        GCancellable    *cancellable,
                                        GError         **error)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (backend);

  return check_ready (self, cancellable, error) &&
         sandbox_memory_store_delete_template (self->store, template_key, error);
}

/* The base has checked the name and the admission limit. */
static gboolean
sandbox_memory_backend_init_backend (SandboxBackendBase  *base,
                                     GCancellable        *cancellable,
                                     GError             **error)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (base);
  const char *name = sandbox_backend_base_get_name (base);
  const char *state_directory = sandbox_backend_base_get_state_directory (base);
  g_autoptr(SandboxMemoryScript) script = NULL;

  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  script = sandbox_memory_script_new (self->script_json, self->script_file, error);
  if (script == NULL)
    return FALSE;

  self->script = g_steal_pointer (&script);
  self->store = state_directory != NULL
    ? sandbox_memory_store_get_shared (state_directory, name)
    : sandbox_memory_store_new (name);

  return TRUE;
}

static void
sandbox_memory_backend_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (object);

  switch (prop_id)
    {
    case PROP_SCRIPT:
      g_value_set_string (value, self->script_json);
      break;
    case PROP_SCRIPT_FILE:
      g_value_set_string (value, self->script_file);
      break;
    case PROP_SUPPORTED_NETWORK_POLICIES:
      g_value_set_boxed (value, supported_network_policies);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_memory_backend_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (object);

  switch (prop_id)
    {
    case PROP_SCRIPT:
      g_free (self->script_json);
      self->script_json = g_value_dup_string (value);
      break;
    case PROP_SCRIPT_FILE:
      g_free (self->script_file);
      self->script_file = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_memory_backend_finalize (GObject *object)
{
  SandboxMemoryBackend *self = SANDBOX_MEMORY_BACKEND (object);

  g_clear_pointer (&self->script_json, g_free);
  g_clear_pointer (&self->script_file, g_free);
  g_clear_pointer (&self->script, sandbox_memory_script_unref);
  g_clear_pointer (&self->store, sandbox_memory_store_unref);

  G_OBJECT_CLASS (sandbox_memory_backend_parent_class)->finalize (object);
}

static void
sandbox_memory_backend_class_init (SandboxMemoryBackendClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  SandboxBackendBaseClass *base_class = SANDBOX_BACKEND_BASE_CLASS (klass);

  object_class->finalize = sandbox_memory_backend_finalize;
  object_class->get_property = sandbox_memory_backend_get_property;
  object_class->set_property = sandbox_memory_backend_set_property;
  base_class->init_backend = sandbox_memory_backend_init_backend;
  base_class->check_policy = sandbox_memory_backend_check_policy;
  base_class->check_template = sandbox_memory_backend_check_template;
  base_class->has_session = sandbox_memory_backend_has_session;
  base_class->take_lease = sandbox_memory_backend_take_lease;
  base_class->release_lease = sandbox_memory_backend_release_lease;
  base_class->load_state = sandbox_memory_backend_load_state;
  base_class->new_session = sandbox_memory_backend_new_session;
  base_class->new_handle = sandbox_memory_backend_new_handle;
  base_class->remove_session = sandbox_memory_backend_remove_session;
  sandbox_backend_base_class_set_default_name (base_class, DEFAULT_BACKEND_NAME);

  /**
   * SandboxMemoryBackend:script:
   *
   * The script answering commands, as a JSON document (see the memory
   * driver script section). Checked by init().
   */
  g_object_class_install_property (object_class, PROP_SCRIPT,
    g_param_spec_string ("script", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxMemoryBackend:script-file:
   *
   * The path of a script document, read by init(); its entries come after
   * those of #SandboxMemoryBackend:script.
   */
  g_object_class_install_property (object_class, PROP_SCRIPT_FILE,
    g_param_spec_string ("script-file", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxMemoryBackend:supported-network-policies:
   *
   * The network policy kinds the backend can enforce: only `"deny-all"`.
   */
  g_object_class_install_property (object_class, PROP_SUPPORTED_NETWORK_POLICIES,
    g_param_spec_boxed ("supported-network-policies", NULL, NULL, G_TYPE_STRV,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

static void
sandbox_memory_backend_class_finalize (SandboxMemoryBackendClass *klass)
{
}

static void
sandbox_memory_backend_init (SandboxMemoryBackend *self)
{
}

static void
sandbox_memory_backend_backend_iface_init (SandboxBackendInterface *iface)
{
  iface->prewarm = sandbox_memory_backend_prewarm;
  sandbox_backend_base_implement_sessions (iface);
  iface->list_sessions = sandbox_memory_backend_list_sessions;
  iface->list_templates = sandbox_memory_backend_list_templates;
  iface->query_lease_owner = sandbox_memory_backend_query_lease_owner;
  iface->delete_template = sandbox_memory_backend_delete_template;
}

/**
 * sandbox_memory_backend_register:
 * @module: the driver module
 *
 * Registers #SandboxMemoryBackend with @module.
 */
void
sandbox_memory_backend_register (GTypeModule *module)
{
  sandbox_memory_backend_register_type (module);
}
