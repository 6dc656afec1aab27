/* sandboxctl-store.c — drivers, prewarm and list
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

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
      g_autoptr(JsonBuilder) builder = json_builder_new ();
      g_autoptr(JsonNode) node = NULL;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "templateKey");
      json_builder_add_string_value (builder, key);
      json_builder_set_member_name (builder, "reused");
      json_builder_add_boolean_value (builder, reused);
      json_builder_end_object (builder);
      node = json_builder_get_root (builder);
      sandboxctl_print_json (node);
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
  key = sandbox_backend_prewarm (backend, template_, &reused, ctx->cancellable, &error);
  if (key == NULL)
    return sandboxctl_report_error (ctx, error);

  print_prewarm_result (ctx, key, reused);
  return SANDBOXCTL_EXIT_OK;
}

/* sandboxctl list ------------------------------------------------------- */

typedef struct
{
  char    *session_id;
  char    *backend;
  char    *template_key;
  int      lease_pid;       /* 0: no lease */
  gboolean lease_alive;
  SandboxctlTreeUsage workspace;
} SessionEntry;

typedef struct
{
  char    *template_key;
  char    *backend;
  SandboxctlTreeUsage data;
} TemplateEntry;

static void
session_entry_free (gpointer data)
{
  SessionEntry *entry = data;

  g_free (entry->session_id);
  g_free (entry->backend);
  g_free (entry->template_key);
  g_free (entry);
}

static void
template_entry_free (gpointer data)
{
  TemplateEntry *entry = data;

  g_free (entry->template_key);
  g_free (entry->backend);
  g_free (entry);
}

static gboolean
pid_is_alive (int pid)
{
  return kill (pid, 0) == 0 || errno == EPERM;
}

/* The lease holds the owner's pid; 0 when there is no lease. */
static int
read_lease_pid (const char *session_dir)
{
  g_autofree char *path = g_build_filename (session_dir, "lease", NULL);
  g_autofree char *contents = NULL;
  gint64 pid = 0;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return 0;
  if (!g_ascii_string_to_signed (g_strstrip (contents), 10, 1, G_MAXINT, &pid, NULL))
    return -1;  /* a lease we cannot read is still a lease */
  return (int) pid;
}

static SessionEntry *
load_session (const char  *session_dir,
              const char  *session_id,
              GError     **error)
{
  g_autofree char *state_path = g_build_filename (session_dir, "state.json", NULL);
  g_autofree char *workspace = g_build_filename (session_dir, "workspace", NULL);
  g_autofree char *json = NULL;
  g_autoptr(SandboxState) state = NULL;
  SessionEntry *entry;

  if (!g_file_get_contents (state_path, &json, NULL, error))
    return NULL;
  state = sandbox_state_new_from_json (json, error);
  if (state == NULL)
    return NULL;

  entry = g_new0 (SessionEntry, 1);
  entry->session_id = g_strdup (session_id);
  entry->backend = g_strdup (sandbox_state_get_backend (state));
  entry->template_key = g_strdup (sandbox_state_get_template_key (state));
  entry->lease_pid = read_lease_pid (session_dir);
  entry->lease_alive = entry->lease_pid > 0 && pid_is_alive (entry->lease_pid);
  if (!sandboxctl_tree_measure (workspace, &entry->workspace, error))
    {
      session_entry_free (entry);
      return NULL;
    }
  return entry;
}

static char *
read_ready_backend (const char  *template_dir,
                    GError     **error)
{
  g_autofree char *path = g_build_filename (template_dir, "ready", NULL);
  g_autofree char *contents = NULL;
  g_autoptr(JsonNode) node = NULL;
  JsonObject *object;

  if (!g_file_get_contents (path, &contents, NULL, error))
    return NULL;
  node = json_from_string (contents, error);
  if (node == NULL)
    return NULL;
  object = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  if (object == NULL || !json_object_has_member (object, "backend"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                   "%s is not a template record", path);
      return NULL;
    }
  return g_strdup (json_object_get_string_member_with_default (object, "backend", ""));
}

static TemplateEntry *
load_template (const char  *template_dir,
               const char  *key,
               GError     **error)
{
  g_autofree char *data = g_build_filename (template_dir, "data", NULL);
  g_autofree char *backend = read_ready_backend (template_dir, error);
  TemplateEntry *entry;

  if (backend == NULL)
    return NULL;
  entry = g_new0 (TemplateEntry, 1);
  entry->template_key = g_strdup (key);
  entry->backend = g_steal_pointer (&backend);
  if (!sandboxctl_tree_measure (data, &entry->data, error))
    {
      template_entry_free (entry);
      return NULL;
    }
  return entry;
}

/* Lists the names in @directory; a missing directory has none. */
static GPtrArray *
list_directory (const char  *directory,
                GError     **error)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GDir) dir = g_dir_open (directory, 0, &local_error);
  const char *name;

  if (dir == NULL)
    {
      if (g_error_matches (local_error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        return g_steal_pointer (&names);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  while ((name = g_dir_read_name (dir)) != NULL)
    g_ptr_array_add (names, g_strdup (name));
  g_ptr_array_sort (names, (GCompareFunc) g_strcmp0);
  return g_steal_pointer (&names);
}

static void
warn_skipped (const char   *path,
              const GError *error)
{
  g_printerr ("sandboxctl: skipping %s: %s\n", path, error->message);
}

/* Collects one backend's sessions and templates: <root>/<sha256(name)>/. */
static gboolean
scan_backend_directory (const char  *base,
                        GPtrArray   *sessions,
                        GPtrArray   *templates,
                        GError     **error)
{
  g_autofree char *sessions_dir = g_build_filename (base, "sessions", NULL);
  g_autofree char *templates_dir = g_build_filename (base, "templates", NULL);
  g_autoptr(GPtrArray) session_ids = list_directory (sessions_dir, error);
  g_autoptr(GPtrArray) template_keys = NULL;

  if (session_ids == NULL)
    return FALSE;
  template_keys = list_directory (templates_dir, error);
  if (template_keys == NULL)
    return FALSE;

  for (guint i = 0; i < session_ids->len; i++)
    {
      const char *id = g_ptr_array_index (session_ids, i);
      g_autofree char *dir = g_build_filename (sessions_dir, id, NULL);
      g_autoptr(GError) local_error = NULL;
      SessionEntry *entry = load_session (dir, id, &local_error);

      if (entry != NULL)
        g_ptr_array_add (sessions, entry);
      else
        warn_skipped (dir, local_error);
    }
  for (guint i = 0; i < template_keys->len; i++)
    {
      const char *key = g_ptr_array_index (template_keys, i);
      g_autofree char *dir = g_build_filename (templates_dir, key, NULL);
      g_autoptr(GError) local_error = NULL;
      TemplateEntry *entry;

      if (!sandbox_template_key_is_valid (key))
        continue;  /* a template still being written */
      entry = load_template (dir, key, &local_error);
      if (entry != NULL)
        g_ptr_array_add (templates, entry);
      else
        warn_skipped (dir, local_error);
    }
  return TRUE;
}

static gboolean
is_sha256_hex (const char *name)
{
  if (strlen (name) != 64)
    return FALSE;
  for (const char *p = name; *p != '\0'; p++)
    if (!g_ascii_isxdigit (*p) || g_ascii_isupper (*p))
      return FALSE;
  return TRUE;
}

static JsonNode *
list_to_json (const char *state_dir,
              GPtrArray  *sessions,
              GPtrArray  *templates)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "stateDirectory");
  json_builder_add_string_value (builder, state_dir);
  json_builder_set_member_name (builder, "sessions");
  json_builder_begin_array (builder);
  for (guint i = 0; i < sessions->len; i++)
    {
      SessionEntry *entry = g_ptr_array_index (sessions, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "sessionId");
      json_builder_add_string_value (builder, entry->session_id);
      json_builder_set_member_name (builder, "backend");
      json_builder_add_string_value (builder, entry->backend);
      json_builder_set_member_name (builder, "templateKey");
      json_builder_add_string_value (builder, entry->template_key);
      json_builder_set_member_name (builder, "lease");
      if (entry->lease_pid == 0)
        {
          json_builder_add_null_value (builder);
        }
      else
        {
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "pid");
          if (entry->lease_pid > 0)
            json_builder_add_int_value (builder, entry->lease_pid);
          else
            json_builder_add_null_value (builder);
          json_builder_set_member_name (builder, "alive");
          json_builder_add_boolean_value (builder, entry->lease_alive);
          json_builder_end_object (builder);
        }
      json_builder_set_member_name (builder, "workspaceFiles");
      json_builder_add_int_value (builder, entry->workspace.n_files);
      json_builder_set_member_name (builder, "workspaceBytes");
      json_builder_add_int_value (builder, entry->workspace.n_bytes);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "templates");
  json_builder_begin_array (builder);
  for (guint i = 0; i < templates->len; i++)
    {
      TemplateEntry *entry = g_ptr_array_index (templates, i);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "templateKey");
      json_builder_add_string_value (builder, entry->template_key);
      json_builder_set_member_name (builder, "backend");
      json_builder_add_string_value (builder, entry->backend);
      json_builder_set_member_name (builder, "files");
      json_builder_add_int_value (builder, entry->data.n_files);
      json_builder_set_member_name (builder, "bytes");
      json_builder_add_int_value (builder, entry->data.n_bytes);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

static void
print_list (const char *state_dir,
            GPtrArray  *sessions,
            GPtrArray  *templates)
{
  g_print ("State directory: %s\n", state_dir);
  g_print ("\nSessions: %u\n", sessions->len);
  for (guint i = 0; i < sessions->len; i++)
    {
      SessionEntry *entry = g_ptr_array_index (sessions, i);
      g_autofree char *lease = NULL;

      if (entry->lease_pid == 0)
        lease = g_strdup ("free");
      else if (entry->lease_pid < 0)
        lease = g_strdup ("held (unreadable owner)");
      else
        lease = g_strdup_printf ("held by pid %d (%s)", entry->lease_pid,
                                 entry->lease_alive ? "alive" : "not running: stale lease");
      g_print ("  %s\n"
               "    backend:   %s\n"
               "    template:  %s\n"
               "    lease:     %s\n"
               "    workspace: %" G_GUINT64_FORMAT " files, %" G_GUINT64_FORMAT " bytes\n",
               entry->session_id, entry->backend, entry->template_key, lease,
               entry->workspace.n_files, entry->workspace.n_bytes);
    }
  g_print ("\nTemplates: %u\n", templates->len);
  for (guint i = 0; i < templates->len; i++)
    {
      TemplateEntry *entry = g_ptr_array_index (templates, i);

      g_print ("  %s\n"
               "    backend:   %s\n"
               "    contents:  %" G_GUINT64_FORMAT " files, %" G_GUINT64_FORMAT " bytes\n",
               entry->template_key, entry->backend, entry->data.n_files, entry->data.n_bytes);
    }
}

int
sandboxctl_cmd_list (SandboxctlContext   *ctx,
                     char              ***argv)
{
  g_autoptr(GOptionContext) context =
    sandboxctl_option_context_new (ctx, NULL,
                                   "List the sessions (with their lease owner and workspace size) "
                                   "and templates stored in the state directory of the bubblewrap "
                                   "driver layout.", NULL, FALSE);
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func (session_entry_free);
  g_autoptr(GPtrArray) templates = g_ptr_array_new_with_free_func (template_entry_free);
  g_autoptr(GPtrArray) backends = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *state_dir = NULL;

  if (!sandboxctl_parse_options (ctx, context, argv))
    return SANDBOXCTL_EXIT_USAGE;
  if (g_strv_length (*argv) > 1)
    return sandboxctl_usage_error (ctx, "unexpected argument “%s”", (*argv)[1]);

  state_dir = ctx->state_dir != NULL ? g_strdup (ctx->state_dir) : sandboxctl_default_state_dir ();
  backends = list_directory (state_dir, &error);
  if (backends == NULL)
    return sandboxctl_report_error (ctx, error);

  for (guint i = 0; i < backends->len; i++)
    {
      const char *name = g_ptr_array_index (backends, i);
      g_autofree char *base = g_build_filename (state_dir, name, NULL);

      if (!is_sha256_hex (name) || !g_file_test (base, G_FILE_TEST_IS_DIR))
        continue;
      if (!scan_backend_directory (base, sessions, templates, &error))
        return sandboxctl_report_error (ctx, error);
    }

  if (ctx->json)
    {
      g_autoptr(JsonNode) node = list_to_json (state_dir, sessions, templates);

      sandboxctl_print_json (node);
    }
  else
    {
      print_list (state_dir, sessions, templates);
    }
  return SANDBOXCTL_EXIT_OK;
}
