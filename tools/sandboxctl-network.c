/* sandboxctl-network.c — --network, --allow and --header
 *
 *   --network deny-all|allow-all|FILE.json
 *   --allow ORIGIN [--header NAME=@ENVVAR | --header NAME=<FILE]…
 *
 * A --header belongs to the --allow before it. Header values come only from
 * the environment or a file, never from the command line (which other users
 * can read in /proc), and are never printed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandboxctl.h"

/* A header file holds one value; anything much larger is a mistake. */
#define HEADER_FILE_MAX_BYTES (64 * 1024)

typedef struct
{
  char      *origin;
  GPtrArray *header_specs;  /* NAME=@ENVVAR or NAME=<FILE */
} SandboxctlAllowRule;

static void
allow_rule_free (gpointer data)
{
  SandboxctlAllowRule *rule = data;

  g_free (rule->origin);
  g_ptr_array_unref (rule->header_specs);
  g_free (rule);
}

void
sandboxctl_network_options_clear (SandboxctlNetworkOptions *options)
{
  g_clear_pointer (&options->network, g_free);
  g_clear_pointer (&options->allow_rules, g_ptr_array_unref);
}

static SandboxctlNetworkOptions *
network_options_from_data (gpointer data)
{
  return &((SandboxctlContext *) data)->network;
}

static gboolean
on_network_option (const char  *option_name,
                   const char  *value,
                   gpointer     data,
                   GError     **error)
{
  SandboxctlNetworkOptions *options = network_options_from_data (data);

  g_free (options->network);
  options->network = g_strdup (value);
  return TRUE;
}

static gboolean
on_allow_option (const char  *option_name,
                 const char  *value,
                 gpointer     data,
                 GError     **error)
{
  SandboxctlNetworkOptions *options = network_options_from_data (data);
  SandboxctlAllowRule *rule = g_new0 (SandboxctlAllowRule, 1);

  rule->origin = g_strdup (value);
  rule->header_specs = g_ptr_array_new_with_free_func (g_free);
  if (options->allow_rules == NULL)
    options->allow_rules = g_ptr_array_new_with_free_func (allow_rule_free);
  g_ptr_array_add (options->allow_rules, rule);
  return TRUE;
}

/* Splits NAME=@ENVVAR or NAME=<FILE without ever copying a literal value. */
static gboolean
parse_header_spec (const char  *spec,
                   char       **name,
                   char        *source_kind,
                   const char **source,
                   GError     **error)
{
  const char *equals = strchr (spec, '=');

  if (equals == NULL || equals == spec)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--header expects NAME=@ENVVAR or NAME=<FILE");
      return FALSE;
    }
  if ((equals[1] != '@' && equals[1] != '<') || equals[2] == '\0')
    {
      g_autofree char *header_name = g_strndup (spec, equals - spec);

      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--header %s: literal header values are refused because other users "
                   "can read the command line; use %s=@ENVVAR or %s=<FILE",
                   header_name, header_name, header_name);
      return FALSE;
    }

  *name = g_strndup (spec, equals - spec);
  *source_kind = equals[1];
  *source = equals + 2;
  return TRUE;
}

static gboolean
on_header_option (const char  *option_name,
                  const char  *value,
                  gpointer     data,
                  GError     **error)
{
  SandboxctlNetworkOptions *options = network_options_from_data (data);
  SandboxctlAllowRule *rule;
  g_autofree char *name = NULL;
  const char *source;
  char source_kind;

  if (options->allow_rules == NULL || options->allow_rules->len == 0)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--header must follow the --allow ORIGIN it belongs to");
      return FALSE;
    }
  if (!parse_header_spec (value, &name, &source_kind, &source, error))
    return FALSE;

  rule = g_ptr_array_index (options->allow_rules, options->allow_rules->len - 1);
  g_ptr_array_add (rule->header_specs, g_strdup (value));
  return TRUE;
}

const GOptionEntry *
sandboxctl_network_entries (void)
{
  static const GOptionEntry entries[] = {
    { "network", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer) on_network_option,
      "Network policy: deny-all (default), allow-all or a policy JSON file", "POLICY" },
    { "allow", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer) on_allow_option,
      "Allow HTTP to ORIGIN through the gateway (repeatable)", "ORIGIN" },
    { "header", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer) on_header_option,
      "Credential header for the preceding --allow, from an environment variable or a file",
      "NAME=@ENVVAR|NAME=<FILE" },
    G_OPTION_ENTRY_NULL
  };

  return entries;
}

/* Reads one header value from a file: one trailing line break is dropped. */
static char *
read_header_file (const char  *name,
                  const char  *path,
                  GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;
  gsize length = 0;

  if (!g_file_get_contents (path, &contents, &length, &local_error))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--header %s: %s", name, local_error->message);
      return NULL;
    }
  if (length > HEADER_FILE_MAX_BYTES)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--header %s: %s is larger than %d bytes", name, path,
                   HEADER_FILE_MAX_BYTES);
      return NULL;
    }
  if (length > 0 && contents[length - 1] == '\n')
    contents[--length] = '\0';
  if (length > 0 && contents[length - 1] == '\r')
    contents[--length] = '\0';
  if (strlen (contents) != length)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--header %s: %s contains a NUL byte", name, path);
      return NULL;
    }
  return g_steal_pointer (&contents);
}

/**
 * sandboxctl_network_add_header_spec:
 * @builder: the policy being built
 * @origin: an origin already added to @builder
 * @spec: `NAME=@ENVVAR` or `NAME=<FILE`
 * @error: return location for a #GError
 *
 * Resolves @spec and adds the header. A missing variable or file is a
 * %G_OPTION_ERROR; a bad name or value the library's %SANDBOX_ERROR_INVALID.
 * No error message contains the value.
 *
 * Returns: %TRUE on success
 */
gboolean
sandboxctl_network_add_header_spec (SandboxNetworkPolicyBuilder  *builder,
                                    const char                   *origin,
                                    const char                   *spec,
                                    GError                      **error)
{
  g_autofree char *name = NULL;
  g_autofree char *from_file = NULL;
  const char *source;
  const char *value;
  char source_kind;

  if (!parse_header_spec (spec, &name, &source_kind, &source, error))
    return FALSE;

  if (source_kind == '@')
    {
      value = g_getenv (source);
      if (value == NULL)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--header %s: environment variable %s is not set", name, source);
          return FALSE;
        }
    }
  else
    {
      from_file = read_header_file (name, source, error);
      if (from_file == NULL)
        return FALSE;
      value = from_file;
    }

  if (!sandbox_network_policy_builder_add_header (builder, origin, name, value, error))
    return FALSE;
  if (from_file != NULL)
    memset (from_file, 0, strlen (from_file));
  return TRUE;
}

static SandboxNetworkPolicy *
build_allow_list (GPtrArray  *rules,
                  GError    **error)
{
  g_autoptr(SandboxNetworkPolicyBuilder) builder = sandbox_network_policy_builder_new ();

  for (guint i = 0; i < rules->len; i++)
    {
      SandboxctlAllowRule *rule = g_ptr_array_index (rules, i);

      if (!sandbox_network_policy_builder_add_origin (builder, rule->origin, error))
        return NULL;
      for (guint j = 0; j < rule->header_specs->len; j++)
        if (!sandboxctl_network_add_header_spec (builder, rule->origin,
                                                 g_ptr_array_index (rule->header_specs, j),
                                                 error))
          return NULL;
    }
  return sandbox_network_policy_builder_build (builder, error);
}

static SandboxNetworkPolicy *
load_policy_file (const char  *path,
                  GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, &local_error))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--network: expected deny-all, allow-all or a policy file: %s",
                   local_error->message);
      return NULL;
    }
  return sandbox_network_policy_new_from_json (contents, error);
}

/**
 * sandboxctl_network_build_policy:
 * @options: the parsed network options
 * @error: return location for a #GError
 *
 * Builds the policy the options describe; deny-all when none is given.
 *
 * Returns: (transfer full): the policy, or %NULL with @error set
 */
SandboxNetworkPolicy *
sandboxctl_network_build_policy (SandboxctlNetworkOptions  *options,
                                 GError                   **error)
{
  gboolean has_allow = options->allow_rules != NULL && options->allow_rules->len > 0;
  const char *network = options->network;

  if (has_allow)
    {
      if (network != NULL && !g_str_equal (network, "allow-list"))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--allow builds an allow-list and cannot be combined with --network %s",
                       network);
          return NULL;
        }
      return build_allow_list (options->allow_rules, error);
    }

  if (network == NULL || g_str_equal (network, "deny-all"))
    return sandbox_network_policy_new_deny_all ();
  if (g_str_equal (network, "allow-all"))
    return sandbox_network_policy_new_allow_all ();
  if (g_str_equal (network, "allow-list"))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "--network allow-list needs at least one --allow ORIGIN");
      return NULL;
    }
  return load_policy_file (network, error);
}
