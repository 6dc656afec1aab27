/* sandbox-command-terminal.c — the pseudo-terminal a command may ask for
 *
 * The properties are SandboxCommand's (sandbox-command.c); their checks
 * are sandbox_command_validate()'s (sandbox-command-schema.c).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-command-private.h"

/**
 * sandbox_command_get_terminal:
 * @self: a [class@Sandbox.Command]
 *
 * Gets [property@Sandbox.Command:terminal].
 *
 * Returns: whether the command runs on a terminal
 */
gboolean
sandbox_command_get_terminal (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), FALSE);

  return self->terminal;
}

/**
 * sandbox_command_set_terminal:
 * @self: a [class@Sandbox.Command]
 * @terminal: %TRUE to run the command on a pseudo-terminal
 *
 * Sets [property@Sandbox.Command:terminal].
 */
void
sandbox_command_set_terminal (SandboxCommand *self,
                              gboolean        terminal)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));

  if (self->terminal == (guint) !!terminal)
    return;
  self->terminal = !!terminal;
  g_object_notify (G_OBJECT (self), "terminal");
}

/**
 * sandbox_command_get_terminal_rows:
 * @self: a [class@Sandbox.Command]
 *
 * Gets [property@Sandbox.Command:terminal-rows].
 *
 * Returns: the terminal's height at the start, in rows
 */
guint
sandbox_command_get_terminal_rows (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), 0);

  return self->terminal_rows;
}

/**
 * sandbox_command_get_terminal_columns:
 * @self: a [class@Sandbox.Command]
 *
 * Gets [property@Sandbox.Command:terminal-columns].
 *
 * Returns: the terminal's width at the start, in columns
 */
guint
sandbox_command_get_terminal_columns (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), 0);

  return self->terminal_columns;
}

/**
 * sandbox_command_set_terminal_size:
 * @self: a [class@Sandbox.Command]
 * @rows: the height, 1 … 65535
 * @columns: the width, 1 … 65535
 *
 * Sets the terminal's size at the start
 * ([property@Sandbox.Command:terminal-rows] and
 * [property@Sandbox.Command:terminal-columns]). Values out of range are
 * stored and refused by [method@Sandbox.Command.validate].
 */
void
sandbox_command_set_terminal_size (SandboxCommand *self,
                                   guint           rows,
                                   guint           columns)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));

  g_object_freeze_notify (G_OBJECT (self));
  if (self->terminal_rows != rows)
    {
      self->terminal_rows = rows;
      g_object_notify (G_OBJECT (self), "terminal-rows");
    }
  if (self->terminal_columns != columns)
    {
      self->terminal_columns = columns;
      g_object_notify (G_OBJECT (self), "terminal-columns");
    }
  g_object_thaw_notify (G_OBJECT (self));
}

/**
 * sandbox_command_get_terminal_type:
 * @self: a [class@Sandbox.Command]
 *
 * Gets [property@Sandbox.Command:terminal-type].
 *
 * Returns: (transfer none): the terminal's type
 */
const char *
sandbox_command_get_terminal_type (SandboxCommand *self)
{
  g_return_val_if_fail (SANDBOX_IS_COMMAND (self), NULL);

  return self->terminal_type;
}

/**
 * sandbox_command_set_terminal_type:
 * @self: a [class@Sandbox.Command]
 * @terminal_type: (nullable): the terminal's type, or %NULL for
 *   %SANDBOX_COMMAND_DEFAULT_TERMINAL_TYPE
 *
 * Sets [property@Sandbox.Command:terminal-type]. A malformed type is
 * stored and refused by [method@Sandbox.Command.validate].
 */
void
sandbox_command_set_terminal_type (SandboxCommand *self,
                                   const char     *terminal_type)
{
  g_return_if_fail (SANDBOX_IS_COMMAND (self));

  if (terminal_type == NULL)
    terminal_type = SANDBOX_COMMAND_DEFAULT_TERMINAL_TYPE;
  if (g_strcmp0 (self->terminal_type, terminal_type) == 0)
    return;
  g_free (self->terminal_type);
  self->terminal_type = g_strdup (terminal_type);
  g_object_notify (G_OBJECT (self), "terminal-type");
}
