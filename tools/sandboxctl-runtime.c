/* sandboxctl-runtime.c — runtime import, list and rm
 *
 * A runtime is the userland a template's sessions see as /usr, /bin, /lib*,
 * /sbin and /etc (docs/guide/runtime.md); `prewarm --runtime KEY` names it.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandboxctl.h"

static JsonNode *
runtime_to_json (SandboxBackend     *backend,
                 SandboxRuntimeInfo *info)
{
  g_autoptr(JsonObject) object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (object, "runtimeKey", sandbox_runtime_info_get_key (info));
  json_object_set_string_member (object, "backend", sandbox_backend_get_name (backend));
  json_object_set_int_member (object, "entries", sandbox_runtime_info_get_n_entries (info));
  json_object_set_int_member (object, "bytes", sandbox_runtime_info_get_n_bytes (info));
  json_object_set_int_member (object, "templates", sandbox_runtime_info_get_n_templates (info));
  json_object_set_int_member (object, "sessions", sandbox_runtime_info_get_n_sessions (info));
  json_node_set_object (node, object);
  return node;
}

/* {"stateDirectory", "driver", "runtimes": […]}, as `templates` prints its
 * templates. */
static void
print_runtimes (SandboxctlContext *ctx,
                SandboxBackend    *backend,
                GPtrArray         *runtimes)
{
  g_autofree char *state_dir = sandbox_backend_dup_state_directory (backend);

  if (ctx->json)
    {
      g_autoptr(JsonObject) object = json_object_new ();
      JsonArray *array = json_array_new ();

      for (guint i = 0; i < runtimes->len; i++)
        json_array_add_element (array, runtime_to_json (backend, runtimes->pdata[i]));
      json_object_set_string_member (object, "stateDirectory", state_dir);
      json_object_set_string_member (object, "driver", sandboxctl_driver_name (ctx));
      json_object_set_array_member (object, "runtimes", array);
      sandboxctl_print_json_object (object);
      return;
    }
  g_print ("State directory: %s\n", state_dir);
  g_print ("\nRuntimes: %u\n", runtimes->len);
  for (guint i = 0; i < runtimes->len; i++)
    {
      SandboxRuntimeInfo *info = runtimes->pdata[i];

      g_print ("  %s\n"
               "    contents:  %" G_GUINT64_FORMAT " files, %" G_GUINT64_FORMAT " bytes\n"
               "    templates: %u\n"
               "    sessions:  %u\n",
               sandbox_runtime_info_get_key (info), sandbox_runtime_info_get_n_entries (info),
               sandbox_runtime_info_get_n_bytes (info),
               sandbox_runtime_info_get_n_templates (info),
               sandbox_runtime_info_get_n_sessions (info));
    }
}

static int
runtime_import (SandboxctlContext  *ctx,
                SandboxBackend     *backend,
                const char         *directory)
{
  g_autoptr(GFile) source = g_file_new_for_commandline_arg (directory);
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  gboolean reused = FALSE;

  key = sandbox_backend_import_runtime (backend, source, &reused, ctx->cancellable, &error);
  if (key == NULL)
    return sandboxctl_report_error (ctx, error);
  if (ctx->json)
    {
      g_autoptr(JsonObject) object = json_object_new ();

      json_object_set_string_member (object, "runtimeKey", key);
      json_object_set_boolean_member (object, "reused", reused);
      sandboxctl_print_json_object (object);
    }
  else
    {
      g_print ("%s\n", key);
      g_printerr ("sandboxctl: runtime %s\n", reused ? "already stored (reused)" : "stored");
    }
  return SANDBOXCTL_EXIT_OK;
}

static int
runtime_rm (SandboxctlContext *ctx,
            SandboxBackend    *backend,
            const char        *key)
{
  g_autoptr(GError) error = NULL;

  if (!sandbox_backend_delete_runtime (backend, key, ctx->cancellable, &error))
    return sandboxctl_report_error (ctx, error);
  if (ctx->json)
    g_print ("{\"deletedRuntime\":\"%s\"}\n", key);
  else
    g_print ("deleted: runtime %s\n", key);
  return SANDBOXCTL_EXIT_OK;
}

int
sandboxctl_cmd_runtime (SandboxctlContext   *ctx,
                        char              ***argv)
{
  const char *sub = ctx->subcommand != NULL ? ctx->subcommand : "";
  gboolean import = g_str_equal (sub, "import");
  gboolean rm = g_str_equal (sub, "rm");
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, import ? "DIR" : rm ? "KEY" : NULL,
                                   "Runtimes, the userlands sessions run on: “runtime import DIR” "
                                   "stores a root file system directory (as mmdebstrap makes) or "
                                   "an OCI image layout and prints its key; “runtime list” lists "
                                   "them; “runtime rm KEY” deletes one no template names. "
                                   "“prewarm --runtime KEY” makes a template's sessions run on "
                                   "one.", NULL, FALSE);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(GPtrArray) runtimes = NULL;
  g_autoptr(GError) error = NULL;
  guint expected = import || rm ? 2 : 1;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (!import && !rm && !g_str_equal (sub, "list"))
    return sandboxctl_usage_error (ctx, "“runtime” needs a subcommand: import, list or rm");
  if (g_strv_length (*argv) != expected)
    return sandboxctl_usage_error (ctx, expected == 2 ? "runtime %s takes one argument"
                                                      : "runtime %s takes no argument", sub);

  backend = sandboxctl_open_backend (ctx, &error);
  if (backend == NULL)
    return sandboxctl_report_error (ctx, error);
  if (import)
    return runtime_import (ctx, backend, (*argv)[1]);
  if (rm)
    return runtime_rm (ctx, backend, (*argv)[1]);
  runtimes = sandbox_backend_list_runtimes (backend, ctx->cancellable, &error);
  if (runtimes == NULL)
    return sandboxctl_report_error (ctx, error);
  print_runtimes (ctx, backend, runtimes);
  return SANDBOXCTL_EXIT_OK;
}
