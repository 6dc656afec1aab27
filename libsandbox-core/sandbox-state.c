/* sandbox-state.c — the reconnect descriptor
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-error.h"
#include "sandbox-json-private.h"
#include "sandbox-state.h"

/**
 * SandboxState:
 *
 * What an application saves to reattach to a stopped session later:
 * the backend name, the session id and the template key. It holds no
 * network policy and no credentials. Immutable.
 */
struct _SandboxState
{
  GObject parent_instance;

  char *backend;
  char *session_id;
  char *template_key;
};

enum {
  PROP_0,
  PROP_BACKEND,
  PROP_SESSION_ID,
  PROP_TEMPLATE_KEY,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (SandboxState, sandbox_state, G_TYPE_OBJECT)

static void
sandbox_state_finalize (GObject *object)
{
  SandboxState *self = SANDBOX_STATE (object);

  g_clear_pointer (&self->backend, g_free);
  g_clear_pointer (&self->session_id, g_free);
  g_clear_pointer (&self->template_key, g_free);

  G_OBJECT_CLASS (sandbox_state_parent_class)->finalize (object);
}

static void
sandbox_state_get_property (GObject    *object,
                            guint       prop_id,
                            GValue     *value,
                            GParamSpec *pspec)
{
  SandboxState *self = SANDBOX_STATE (object);

  switch (prop_id)
    {
    case PROP_BACKEND:
      g_value_set_string (value, self->backend);
      break;
    case PROP_SESSION_ID:
      g_value_set_string (value, self->session_id);
      break;
    case PROP_TEMPLATE_KEY:
      g_value_set_string (value, self->template_key);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_state_class_init (SandboxStateClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_state_finalize;
  object_class->get_property = sandbox_state_get_property;

  /**
   * SandboxState:backend:
   *
   * The name of the backend that owns the session.
   */
  properties[PROP_BACKEND] =
    g_param_spec_string ("backend", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxState:session-id:
   *
   * The session's id.
   */
  properties[PROP_SESSION_ID] =
    g_param_spec_string ("session-id", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxState:template-key:
   *
   * The key of the template the session was created from.
   */
  properties[PROP_TEMPLATE_KEY] =
    g_param_spec_string ("template-key", NULL, NULL, NULL,
                         G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
sandbox_state_init (SandboxState *self)
{
}

static gboolean
check_field (const char  *value,
             const char  *name,
             GError     **error)
{
  if (value == NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Invalid input: expected string, received undefined", name);
      return FALSE;
    }
  if (!g_utf8_validate (value, -1, NULL))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Invalid input: expected a valid UTF-8 string", name);
      return FALSE;
    }
  if (value[0] == '\0')
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Too small: expected string to have >=1 characters", name);
      return FALSE;
    }
  return TRUE;
}

/**
 * sandbox_state_new:
 * @backend: the backend name
 * @session_id: the session id
 * @template_key: the template key
 * @error: return location for a #GError, or %NULL
 *
 * Creates a state descriptor. Every field must be a non-empty UTF-8 string.
 *
 * Returns: (transfer full): a new [class@Sandbox.State], or %NULL with
 *   %SANDBOX_ERROR_INVALID set
 */
SandboxState *
sandbox_state_new (const char  *backend,
                   const char  *session_id,
                   const char  *template_key,
                   GError     **error)
{
  SandboxState *self;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!check_field (backend, "backend", error) ||
      !check_field (session_id, "sessionId", error) ||
      !check_field (template_key, "templateKey", error))
    return NULL;

  self = g_object_new (SANDBOX_TYPE_STATE, NULL);
  self->backend = g_strdup (backend);
  self->session_id = g_strdup (session_id);
  self->template_key = g_strdup (template_key);
  return self;
}

static gboolean
read_field (JsonObject   *object,
            const char   *name,
            const char  **out,
            GError      **error)
{
  JsonNode *node = json_object_get_member (object, name);

  *out = NULL;
  if (node == NULL)
    return check_field (NULL, name, error);

  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "%s: Invalid input: expected string, received %s",
                   name, sandbox_json_type_name (node));
      return FALSE;
    }

  *out = json_node_get_string (node);
  return check_field (*out, name, error);
}

/**
 * sandbox_state_new_from_json:
 * @json: a JSON object `{"backend": …, "sessionId": …, "templateKey": …}`
 * @error: return location for a #GError, or %NULL
 *
 * Parses a state saved with [method@Sandbox.State.to_json]. Parsing is strict:
 * exactly those three members, each a non-empty string.
 *
 * Returns: (transfer full): a new [class@Sandbox.State], or %NULL with
 *   %SANDBOX_ERROR_INVALID set
 */
SandboxState *
sandbox_state_new_from_json (const char  *json,
                             GError     **error)
{
  static const char * const known[] = { "backend", "sessionId", "templateKey", NULL };
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GList) members = NULL;
  JsonObject *object;
  const char *backend;
  const char *session_id;
  const char *template_key;

  g_return_val_if_fail (json != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  root = sandbox_json_parse_object (json, error);
  if (root == NULL)
    return NULL;

  object = json_node_get_object (root);
  members = json_object_get_members (object);
  for (GList *l = members; l != NULL; l = l->next)
    if (!g_strv_contains (known, l->data))
      {
        g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                     "Unrecognized key: \"%s\"", (const char *) l->data);
        return NULL;
      }

  if (!read_field (object, "backend", &backend, error) ||
      !read_field (object, "sessionId", &session_id, error) ||
      !read_field (object, "templateKey", &template_key, error))
    return NULL;

  return sandbox_state_new (backend, session_id, template_key, error);
}

/**
 * sandbox_state_to_json:
 * @self: a [class@Sandbox.State]
 *
 * Serializes @self as compact JSON with the members in the order
 * `backend`, `sessionId`, `templateKey`, the form the reference saves.
 *
 * Returns: (transfer full): the JSON text
 */
char *
sandbox_state_to_json (SandboxState *self)
{
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(JsonGenerator) generator = NULL;
  g_autoptr(JsonNode) root = NULL;

  g_return_val_if_fail (SANDBOX_IS_STATE (self), NULL);

  builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "backend");
  json_builder_add_string_value (builder, self->backend);
  json_builder_set_member_name (builder, "sessionId");
  json_builder_add_string_value (builder, self->session_id);
  json_builder_set_member_name (builder, "templateKey");
  json_builder_add_string_value (builder, self->template_key);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  generator = json_generator_new ();
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/**
 * sandbox_state_get_backend:
 * @self: a [class@Sandbox.State]
 *
 * Gets the name of the backend that owns the session.
 *
 * Returns: (transfer none): the backend name
 */
const char *
sandbox_state_get_backend (SandboxState *self)
{
  g_return_val_if_fail (SANDBOX_IS_STATE (self), NULL);

  return self->backend;
}

/**
 * sandbox_state_get_session_id:
 * @self: a [class@Sandbox.State]
 *
 * Gets the identifier of the saved session.
 *
 * Returns: (transfer none): the session id
 */
const char *
sandbox_state_get_session_id (SandboxState *self)
{
  g_return_val_if_fail (SANDBOX_IS_STATE (self), NULL);

  return self->session_id;
}

/**
 * sandbox_state_get_template_key:
 * @self: a [class@Sandbox.State]
 *
 * Gets the key of the template the session was created from.
 *
 * Returns: (transfer none): the template key
 */
const char *
sandbox_state_get_template_key (SandboxState *self)
{
  g_return_val_if_fail (SANDBOX_IS_STATE (self), NULL);

  return self->template_key;
}

/**
 * sandbox_state_equal:
 * @a: a [class@Sandbox.State]
 * @b: another [class@Sandbox.State]
 *
 * Compares two saved states.
 *
 * Returns: %TRUE if @a and @b name the same session of the same backend
 *   and template
 */
gboolean
sandbox_state_equal (SandboxState *a,
                     SandboxState *b)
{
  g_return_val_if_fail (SANDBOX_IS_STATE (a), FALSE);
  g_return_val_if_fail (SANDBOX_IS_STATE (b), FALSE);

  return g_str_equal (a->backend, b->backend) &&
         g_str_equal (a->session_id, b->session_id) &&
         g_str_equal (a->template_key, b->template_key);
}
