/* sandbox-coding-operation.c — what a coding tool is about to do, for the host to authorize
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-coding-operation.h"
#include "sandbox-enums.h"

/**
 * SandboxCodingOperation:
 *
 * What a coding tool is about to do, handed to [signal@Sandbox.CodingTools::authorize]
 * and [signal@Sandbox.CodingTools::authorize-path] before anything happens. Immutable.
 */
struct _SandboxCodingOperation
{
  GObject parent_instance;

  char *tool;
  SandboxCodingOperationKind kind;
  char *path;
  char *command;
};

G_DEFINE_FINAL_TYPE (SandboxCodingOperation, sandbox_coding_operation, G_TYPE_OBJECT)

enum {
  OP_PROP_0,
  OP_PROP_TOOL,
  OP_PROP_KIND,
  OP_PROP_PATH,
  OP_PROP_COMMAND,
  OP_N_PROPS
};

static GParamSpec *operation_properties[OP_N_PROPS];

static void
sandbox_coding_operation_finalize (GObject *object)
{
  SandboxCodingOperation *self = SANDBOX_CODING_OPERATION (object);

  g_free (self->tool);
  g_free (self->path);
  g_free (self->command);

  G_OBJECT_CLASS (sandbox_coding_operation_parent_class)->finalize (object);
}

static void
sandbox_coding_operation_get_property (GObject    *object,
                                       guint       prop_id,
                                       GValue     *value,
                                       GParamSpec *pspec)
{
  SandboxCodingOperation *self = SANDBOX_CODING_OPERATION (object);

  switch (prop_id)
    {
    case OP_PROP_TOOL:
      g_value_set_string (value, self->tool);
      break;
    case OP_PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;
    case OP_PROP_PATH:
      g_value_set_string (value, self->path);
      break;
    case OP_PROP_COMMAND:
      g_value_set_string (value, self->command);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_coding_operation_set_property (GObject      *object,
                                       guint         prop_id,
                                       const GValue *value,
                                       GParamSpec   *pspec)
{
  SandboxCodingOperation *self = SANDBOX_CODING_OPERATION (object);

  switch (prop_id)
    {
    case OP_PROP_TOOL:
      self->tool = g_value_dup_string (value);
      break;
    case OP_PROP_KIND:
      self->kind = g_value_get_enum (value);
      break;
    case OP_PROP_PATH:
      self->path = g_value_dup_string (value);
      break;
    case OP_PROP_COMMAND:
      self->command = g_value_dup_string (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_coding_operation_class_init (SandboxCodingOperationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = sandbox_coding_operation_finalize;
  object_class->get_property = sandbox_coding_operation_get_property;
  object_class->set_property = sandbox_coding_operation_set_property;

  /**
   * SandboxCodingOperation:tool:
   *
   * The tool's name, such as `read_file`.
   */
  operation_properties[OP_PROP_TOOL] =
    g_param_spec_string ("tool", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingOperation:kind:
   *
   * What the tool does.
   */
  operation_properties[OP_PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL, SANDBOX_TYPE_CODING_OPERATION_KIND,
                       SANDBOX_CODING_OPERATION_READ,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingOperation:path:
   *
   * The canonical workspace path (`/workspace/…`) the operation touches:
   * the file, the listed directory, or a shell command's working directory.
   */
  operation_properties[OP_PROP_PATH] =
    g_param_spec_string ("path", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  /**
   * SandboxCodingOperation:command:
   *
   * The shell command string of an %SANDBOX_CODING_OPERATION_EXECUTE
   * operation, or %NULL.
   */
  operation_properties[OP_PROP_COMMAND] =
    g_param_spec_string ("command", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, OP_N_PROPS, operation_properties);
}

static void
sandbox_coding_operation_init (SandboxCodingOperation *self)
{
}

/**
 * sandbox_coding_operation_get_tool:
 * @self: a [class@Sandbox.CodingOperation]
 *
 * Gets the name of the tool about to run.
 *
 * Returns: the tool's name
 */
const char *
sandbox_coding_operation_get_tool (SandboxCodingOperation *self)
{
  g_return_val_if_fail (SANDBOX_IS_CODING_OPERATION (self), NULL);
  return self->tool;
}

/**
 * sandbox_coding_operation_get_kind:
 * @self: a [class@Sandbox.CodingOperation]
 *
 * Gets what the operation does.
 *
 * Returns: what the tool does
 */
SandboxCodingOperationKind
sandbox_coding_operation_get_kind (SandboxCodingOperation *self)
{
  g_return_val_if_fail (SANDBOX_IS_CODING_OPERATION (self), SANDBOX_CODING_OPERATION_READ);
  return self->kind;
}

/**
 * sandbox_coding_operation_get_path:
 * @self: a [class@Sandbox.CodingOperation]
 *
 * Gets the canonical workspace path the operation touches.
 *
 * Returns: (nullable): the canonical workspace path the operation touches
 */
const char *
sandbox_coding_operation_get_path (SandboxCodingOperation *self)
{
  g_return_val_if_fail (SANDBOX_IS_CODING_OPERATION (self), NULL);
  return self->path;
}

/**
 * sandbox_coding_operation_get_command:
 * @self: a [class@Sandbox.CodingOperation]
 *
 * Gets the command string of a `shell` operation.
 *
 * Returns: (nullable): the shell command string, for `shell`
 */
const char *
sandbox_coding_operation_get_command (SandboxCodingOperation *self)
{
  g_return_val_if_fail (SANDBOX_IS_CODING_OPERATION (self), NULL);
  return self->command;
}
