/* sandboxctl-store.c — drivers, prewarm, list, templates and rm-template
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandboxctl.h"

/* sandboxctl drivers ---------------------------------------------------- */

int
sandboxctl_cmd_drivers (SandboxctlContext   *ctx,
                        char              ***argv)
{
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "List the sandbox drivers found in SANDBOX_DRIVER_PATH and the "
                                   "installed driver directory.", NULL, FALSE);
  g_auto(GStrv) drivers = NULL;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (g_strv_length (*argv) > 1)
    return sandboxctl_usage_error (ctx, "unexpected argument “%s”", (*argv)[1]);

  drivers = sandbox_list_drivers ();
  if (ctx->json)
    {
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) node = NULL;

      json_builder_begin_array (builder);
      for (guint i = 0; drivers[i] != NULL; i++)
        json_builder_add_string_value (builder, drivers[i]);
      json_builder_end_array (builder);
      node = json_builder_get_root (builder);
      sandboxctl_print_json (node);
    }
  else
    {
      for (guint i = 0; drivers[i] != NULL; i++)
        g_print ("%s\n", drivers[i]);
    }
  return SANDBOXCTL_EXIT_OK;
}

/* sandboxctl prewarm ---------------------------------------------------- */

static void
print_prewarm_result (SandboxctlContext *ctx,
                      const char        *key,
                      gboolean           reused)
{
  if (ctx->json)
    {
      g_autoptr(JsonObject) object = json_object_new ();

      json_object_set_string_member (object, "templateKey", key);
      json_object_set_boolean_member (object, "reused", reused);
      sandboxctl_print_json_object (object);
    }
  else
    {
      g_print ("%s\n", key);
      g_printerr ("sandboxctl: template %s\n",
                  reused ? "already stored (reused)" : "stored");
    }
}

int
sandboxctl_cmd_prewarm (SandboxctlContext   *ctx,
                        char              ***argv)
{
  g_auto(SandboxctlTemplateOptions) options = { 0 };
  const GOptionEntry entries[] = {
    { "template", 't', 0, G_OPTION_ARG_STRING, &options.name,
      "Template name (part of the key)", "NAME" },
    { "file", 'f', 0, G_OPTION_ARG_FILENAME_ARRAY, &options.files,
      "Add a host file at workspace PATH (repeatable)", "PATH=HOSTFILE" },
    { "dir", 'd', 0, G_OPTION_ARG_FILENAME, &options.directory,
      "Add a host directory's tree", "HOSTDIR" },
    { "runtime", 0, 0, G_OPTION_ARG_STRING, &options.runtime,
      "Run the template's sessions on an imported runtime (part of the key)", "KEY" },
    { "writable-runtime", 0, 0, G_OPTION_ARG_NONE, &options.writable_runtime,
      "Let each session change its runtime for itself (pip install into /usr persists)", NULL },
    G_OPTION_ENTRY_NULL
  };
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "Store a template under its content-addressed key and print "
                                   "the key. Storing identical content again reuses it.",
                                   entries, FALSE);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxTemplate) template_ = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  SandboxctlProgressBar bar;
  gboolean reused = FALSE;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (g_strv_length (*argv) > 1)
    return sandboxctl_usage_error (ctx, "unexpected argument “%s”", (*argv)[1]);
  if (options.name == NULL)
    return sandboxctl_usage_error (ctx, "--template NAME is required");

  template_ = sandboxctl_template_build (&options, ctx->cancellable, &error);
  if (template_ == NULL)
    return sandboxctl_report_error (ctx, error);
  backend = sandboxctl_open_backend (ctx, &error);
  if (backend == NULL)
    return sandboxctl_report_error (ctx, error);
  sandboxctl_progress_bar_start_prewarm (&bar, template_, ctx->json);
  key = sandbox_backend_prewarm (backend, template_, &reused, ctx->cancellable, &error);
  sandboxctl_progress_bar_finish (&bar);
  if (key == NULL)
    return sandboxctl_report_error (ctx, error);

  print_prewarm_result (ctx, key, reused);
  return SANDBOXCTL_EXIT_OK;
}

/* sandboxctl list, templates, rm-template --------------------------------
 *
 * What a backend stores, as the backend itself reports it (its own view of
 * its store): sandboxctl never spells a driver's on-disk layout. */

static JsonNode *
lease_to_json (SandboxLeaseOwner *owner)
{
  g_autoptr(JsonObject) object = NULL;
  JsonNode *node;

  if (owner == NULL)
    return json_node_new (JSON_NODE_NULL);
  object = json_object_new ();
  if (sandbox_lease_owner_get_pid (owner) > 0)
    json_object_set_int_member (object, "pid", sandbox_lease_owner_get_pid (owner));
  else
    json_object_set_null_member (object, "pid");   /* a lease we cannot read is still a lease */
  json_object_set_boolean_member (object, "alive", sandbox_lease_owner_is_alive (owner));
  if (sandbox_lease_owner_get_host (owner) != NULL)
    json_object_set_string_member (object, "host", sandbox_lease_owner_get_host (owner));
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (node, object);
  return node;
}

static JsonNode *
session_to_json (SandboxSessionInfo *info)
{
  SandboxState *state = sandbox_session_info_get_state (info);
  g_autoptr(JsonObject) object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (object, "sessionId", sandbox_state_get_session_id (state));
  json_object_set_string_member (object, "backend", sandbox_state_get_backend (state));
  json_object_set_string_member (object, "templateKey", sandbox_state_get_template_key (state));
  json_object_set_member (object, "lease",
                          lease_to_json (sandbox_session_info_get_lease_owner (info)));
  json_object_set_int_member (object, "workspaceFiles",
                              sandbox_session_info_get_workspace_n_files (info));
  json_object_set_int_member (object, "workspaceBytes",
                              sandbox_session_info_get_workspace_n_bytes (info));
  json_node_set_object (node, object);
  return node;
}

static JsonNode *
template_to_json (SandboxBackend      *backend,
                  SandboxTemplateInfo *info)
{
  g_autoptr(JsonObject) object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (object, "templateKey", sandbox_template_info_get_key (info));
  if (sandbox_template_info_get_name (info) != NULL)
    json_object_set_string_member (object, "name", sandbox_template_info_get_name (info));
  else
    json_object_set_null_member (object, "name");
  json_object_set_string_member (object, "backend", sandbox_backend_get_name (backend));
  json_object_set_int_member (object, "files", sandbox_template_info_get_n_files (info));
  json_object_set_int_member (object, "bytes", sandbox_template_info_get_n_bytes (info));
  json_object_set_int_member (object, "sessions", sandbox_template_info_get_n_sessions (info));
  if (sandbox_template_info_get_parent_key (info) != NULL)
    json_object_set_string_member (object, "parentKey",
                                   sandbox_template_info_get_parent_key (info));
  else
    json_object_set_null_member (object, "parentKey");
  json_object_set_int_member (object, "snapshots", sandbox_template_info_get_n_snapshots (info));
  json_node_set_object (node, object);
  return node;
}

static JsonArray *
templates_to_json (SandboxBackend *backend,
                   GPtrArray      *templates)
{
  JsonArray *array = json_array_new ();

  for (guint i = 0; i < templates->len; i++)
    json_array_add_element (array, template_to_json (backend, g_ptr_array_index (templates, i)));
  return array;
}

/* How the backend makes workspaces ("overlay" over the template, or a
 * "copy"), for a backend that says (its "workspace-layering" property);
 * NULL for one that does not. */
static char *
dup_workspace_layering (SandboxBackend *backend)
{
  char *layering = NULL;

  if (g_object_class_find_property (G_OBJECT_GET_CLASS (backend), "workspace-layering") == NULL)
    return NULL;
  g_object_get (backend, "workspace-layering", &layering, NULL);
  return layering;
}

/* {"stateDirectory", "driver", "workspaceLayering" (when the backend says),
 * "sessions": […], "templates": […]}; without @sessions, the templates only. */
static void
print_store_json (SandboxctlContext *ctx,
                  SandboxBackend    *backend,
                  GPtrArray         *sessions,
                  GPtrArray         *templates)
{
  g_autofree char *state_dir = sandbox_backend_dup_state_directory (backend);
  g_autofree char *layering = dup_workspace_layering (backend);
  g_autoptr(JsonObject) object = json_object_new ();

  json_object_set_string_member (object, "stateDirectory", state_dir);
  json_object_set_string_member (object, "driver", sandboxctl_driver_name (ctx));
  if (layering != NULL)
    json_object_set_string_member (object, "workspaceLayering", layering);
  if (sessions != NULL)
    {
      JsonArray *array = json_array_new ();

      for (guint i = 0; i < sessions->len; i++)
        json_array_add_element (array, session_to_json (g_ptr_array_index (sessions, i)));
      json_object_set_array_member (object, "sessions", array);
    }
  json_object_set_array_member (object, "templates", templates_to_json (backend, templates));
  sandboxctl_print_json_object (object);
}

static char *
describe_lease (SandboxLeaseOwner *owner)
{
  if (owner == NULL)
    return g_strdup ("free");
  if (sandbox_lease_owner_get_pid (owner) == 0)
    return g_strdup ("held (unreadable owner)");
  return g_strdup_printf ("held by pid %d%s%s (%s)", sandbox_lease_owner_get_pid (owner),
                          sandbox_lease_owner_get_host (owner) != NULL ? " on " : "",
                          sandbox_lease_owner_get_host (owner) != NULL
                            ? sandbox_lease_owner_get_host (owner) : "",
                          sandbox_lease_owner_is_alive (owner) ? "alive"
                                                               : "not running: stale lease");
}

static void
print_sessions (GPtrArray *sessions)
{
  g_print ("\nSessions: %u\n", sessions->len);
  for (guint i = 0; i < sessions->len; i++)
    {
      SandboxSessionInfo *info = g_ptr_array_index (sessions, i);
      SandboxState *state = sandbox_session_info_get_state (info);
      g_autofree char *lease = describe_lease (sandbox_session_info_get_lease_owner (info));

      g_print ("  %s\n"
               "    backend:   %s\n"
               "    template:  %s\n"
               "    lease:     %s\n"
               "    workspace: %" G_GUINT64_FORMAT " files, %" G_GUINT64_FORMAT " bytes\n",
               sandbox_state_get_session_id (state), sandbox_state_get_backend (state),
               sandbox_state_get_template_key (state), lease,
               sandbox_session_info_get_workspace_n_files (info),
               sandbox_session_info_get_workspace_n_bytes (info));
    }
}

static void
print_templates (SandboxBackend *backend,
                 GPtrArray      *templates)
{
  g_print ("\nTemplates: %u\n", templates->len);
  for (guint i = 0; i < templates->len; i++)
    {
      SandboxTemplateInfo *info = g_ptr_array_index (templates, i);

      const char *name = sandbox_template_info_get_name (info);

      const char *parent = sandbox_template_info_get_parent_key (info);

      g_print ("  %s\n"
               "    name:      %s\n"
               "    backend:   %s\n"
               "    contents:  %" G_GUINT64_FORMAT " files, %" G_GUINT64_FORMAT " bytes%s\n"
               "    sessions:  %u\n",
               sandbox_template_info_get_key (info), name != NULL ? name : "(not recorded)",
               sandbox_backend_get_name (backend),
               sandbox_template_info_get_n_files (info), sandbox_template_info_get_n_bytes (info),
               parent != NULL ? " (its own changes)" : "",
               sandbox_template_info_get_n_sessions (info));
      if (parent != NULL)
        g_print ("    snapshot over: %s\n", parent);
      if (sandbox_template_info_get_n_snapshots (info) > 0)
        g_print ("    snapshots: %u\n", sandbox_template_info_get_n_snapshots (info));
    }
}

static void
print_store (SandboxctlContext *ctx,
             SandboxBackend    *backend,
             GPtrArray         *sessions,
             GPtrArray         *templates)
{
  g_autofree char *state_dir = sandbox_backend_dup_state_directory (backend);
  g_autofree char *layering = NULL;

  if (ctx->json)
    {
      print_store_json (ctx, backend, sessions, templates);
      return;
    }
  g_print ("State directory: %s\n", state_dir);
  g_print ("Driver: %s (its store, as the driver reports it)\n", sandboxctl_driver_name (ctx));
  layering = dup_workspace_layering (backend);
  if (layering != NULL)
    g_print ("Workspaces: %s\n", g_str_equal (layering, "overlay")
                                   ? "overlay (the template's files below, the session's above)"
                                   : "copy (each session a full copy of its template)");
  if (sessions != NULL)
    print_sessions (sessions);
  print_templates (backend, templates);
}

/* Lists the backend's templates and, with @with_sessions, its sessions. */
static int
list_store (SandboxctlContext   *ctx,
            GOptionContext      *context,
            char              ***argv,
            gboolean             with_sessions)
{
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GPtrArray) templates = NULL;
  g_autoptr(GError) error = NULL;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (g_strv_length (*argv) > 1)
    return sandboxctl_usage_error (ctx, "unexpected argument “%s”", (*argv)[1]);

  backend = sandboxctl_open_backend (ctx, &error);
  if (backend == NULL)
    return sandboxctl_report_error (ctx, error);
  if (with_sessions)
    {
      sessions = sandbox_backend_list_sessions (backend, ctx->cancellable, &error);
      if (sessions == NULL)
        return sandboxctl_report_error (ctx, error);
    }
  templates = sandbox_backend_list_templates (backend, ctx->cancellable, &error);
  if (templates == NULL)
    return sandboxctl_report_error (ctx, error);

  print_store (ctx, backend, sessions, templates);
  return SANDBOXCTL_EXIT_OK;
}

/**
 * sandboxctl_resolve_template:
 * @ctx: the invocation
 * @backend: the backend whose store holds it
 * @key_or_name: a template key, or the name a template was prewarmed with
 * @error: return location for a #GError
 *
 * The key of the template @key_or_name names: itself when it has a key's
 * form, else the one stored template prewarmed under that name.
 *
 * Returns: (transfer full): the key, or %NULL with %SANDBOX_ERROR_NOT_FOUND
 *   (no such name) or %SANDBOX_ERROR_INVALID (a name several templates
 *   share: the key must choose)
 */
char *
sandboxctl_resolve_template (SandboxctlContext  *ctx,
                             SandboxBackend     *backend,
                             const char         *key_or_name,
                             GError            **error)
{
  g_autoptr(GPtrArray) templates = NULL;
  g_autoptr(GString) keys = g_string_new (NULL);
  const char *found = NULL;
  guint matches = 0;

  if (sandbox_template_key_is_valid (key_or_name))
    return g_strdup (key_or_name);
  templates = sandbox_backend_list_templates (backend, ctx->cancellable, error);
  if (templates == NULL)
    return NULL;
  for (guint i = 0; i < templates->len; i++)
    {
      SandboxTemplateInfo *info = g_ptr_array_index (templates, i);

      if (g_strcmp0 (sandbox_template_info_get_name (info), key_or_name) != 0)
        continue;
      found = sandbox_template_info_get_key (info);
      g_string_append_printf (keys, "%s%s", matches++ > 0 ? ", " : "", found);
    }
  if (matches == 1)
    return g_strdup (found);
  if (matches == 0)
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_NOT_FOUND,
                 "No stored template is named or keyed “%s” (sandboxctl templates lists them)",
                 key_or_name);
  else
    g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                 "%u stored templates are named “%s” (%s): give the key of one",
                 matches, key_or_name, keys->str);
  return NULL;
}

int
sandboxctl_cmd_list (SandboxctlContext   *ctx,
                     char              ***argv)
{
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "List the sessions (with their lease owner and workspace size) "
                                   "and templates the driver stores, as the driver reports them.",
                                   NULL, FALSE);

  return list_store (ctx, context, argv, TRUE);
}

int
sandboxctl_cmd_templates (SandboxctlContext   *ctx,
                          char              ***argv)
{
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "List the templates the driver stores: key, size and how many "
                                   "stored sessions were created from each.", NULL, FALSE);

  return list_store (ctx, context, argv, FALSE);
}

int
sandboxctl_cmd_rm_template (SandboxctlContext   *ctx,
                            char              ***argv)
{
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, "KEY|NAME",
                                   "Delete the stored template KEY (or the one template prewarmed "
                                   "as NAME). A template a stored session was created from is "
                                   "SANDBOX_BUSY: delete those sessions first.",
                                   NULL, FALSE);
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (g_strv_length (*argv) < 2)
    return sandboxctl_usage_error (ctx, "missing argument");
  if (g_strv_length (*argv) > 2)
    return sandboxctl_usage_error (ctx, "unexpected argument “%s”", (*argv)[2]);

  backend = sandboxctl_open_backend (ctx, &error);
  if (backend != NULL)
    key = sandboxctl_resolve_template (ctx, backend, (*argv)[1], &error);
  if (key == NULL ||
      !sandbox_backend_delete_template (backend, key, ctx->cancellable, &error))
    return sandboxctl_report_error (ctx, error);

  if (ctx->json)
    g_print ("{\"deletedTemplate\":\"%s\"}\n", key);
  else
    g_print ("deleted: template %s\n", key);
  return SANDBOXCTL_EXIT_OK;
}
