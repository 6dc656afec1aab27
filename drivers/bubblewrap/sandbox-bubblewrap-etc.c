/* sandbox-bubblewrap-etc.c — the guest's curated, read-only /etc
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <glib/gstdio.h>
#include <unistd.h>

#include "sandbox-bubblewrap-args-private.h"
#include "sandbox-bubblewrap-stub-private.h"

/*
 * Real tools need a little of /etc: the /etc/alternatives links that /usr/bin
 * names (cc, awk, which, pager, …), the CA bundle, the dynamic linker's
 * cache, and a passwd/group entry for the guest's uid. The host's /etc is
 * never bound wholesale (host users, shadow, host configuration): only the
 * entries below, each read-only and skipped where the host lacks it, and
 * small synthesized files that name nothing of the host.
 */
static const struct
{
  const char *path;
  gboolean copy;   /* a single file: copied where it can be (add_host_copy()) */
} etc_host_entries[] = {
  { "/etc/alternatives", FALSE },
  { "/etc/ld.so.cache", TRUE },
  { "/etc/ssl/certs", FALSE },   /* links into /usr/share/ca-certificates, which /usr holds */
  { "/etc/ssl/openssl.cnf", TRUE },
};

/* The largest host file add_host_copy() copies; a larger one is bound. */
#define MAX_HOST_COPY_SIZE (1024 * 1024)

#define HOST_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
#define MAX_EXTRA_CA_SIZE (4 * 1024 * 1024)

#define GUEST_HOSTNAME "sandbox"
#define GUEST_USER "sandbox"
#define NOBODY_ID 65534      /* what a user namespace shows unmapped ids as */

/**
 * sandbox_bubblewrap_sealed_memfd_new:
 * @name: the memfd's name (for /proc/PID/fd)
 * @data: the contents
 * @size: the size of @data
 *
 * Returns: a close-on-exec sealed memfd holding @data, positioned at its
 *   start, for one bwrap to read; -1 on failure
 */
int
sandbox_bubblewrap_sealed_memfd_new (const char *name,
                                     const char *data,
                                     gsize       size)
{
  g_auto(SandboxBubblewrapFd) fd = memfd_create (name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

  if (fd < 0 || !sandbox_bubblewrap_write_fully (fd, data, size))
    return -1;
  if (fcntl (fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0 ||
      lseek (fd, 0, SEEK_SET) < 0)
    return -1;
  return g_steal_fd (&fd);
}

/* Puts @size bytes of @data at @path with @option: `--ro-bind-data` (a
 * read-only bind of its own) or `--file` (a plain file). A failed memfd is
 * passed as -1, which the launcher refuses to spawn with. */
static void
add_data (SandboxBubblewrapArgs *self,
          const char            *option,
          const char            *path,
          const char            *data,
          gsize                  size)
{
  char fd_arg[16];
  int fd = sandbox_bubblewrap_sealed_memfd_new ("sandbox-etc", data, size);

  /* Readable by all: bwrap makes them 0600 (--ro-bind-data) or 0666
   * (--file) otherwise. */
  g_snprintf (fd_arg, sizeof fd_arg, "%d", sandbox_bubblewrap_args_take_fd (self, fd));
  sandbox_bubblewrap_args_add_many (self, "--perms", "0644", option, fd_arg, path, NULL);
}

/* A synthesized file directly in /etc's tmpfs: `--file` writes it there,
 * and the `--remount-ro /etc` that ends the curated /etc makes it
 * read-only with the rest. `--ro-bind-data` would cost bwrap a file on its
 * own tmpfs, a bind mount, a remount and a parse of its mountinfo per
 * file: with six files, about a millisecond and a half of every cold
 * command (issue 20), for the same read-only file. */
static void
add_data_file (SandboxBubblewrapArgs *self,
               const char            *path,
               const char            *text)
{
  add_data (self, "--file", path, text, strlen (text));
}

/* A single host file as a copy in /etc's tmpfs (`--file`), where bwrap
 * would bind it (`--ro-bind-try`): each bind costs bwrap a mount, a
 * remount and a parse of its whole mountinfo, about 0.2 ms of every cold
 * command (issue 20), a copy only a write. The guest sees the same bytes,
 * read-only with the rest of /etc: a file bind pins the inode it found
 * when the sandbox was built, which is when the copy is read. Only a
 * regular file that everyone may read is copied, since bwrap resolves
 * binds as the guest while this process may be root; anything else (and
 * a large file) is bound as before. Returns whether @path is dealt with:
 * copied, or missing on the host (which --ro-bind-try skips too). */
static gboolean
add_host_copy (SandboxBubblewrapArgs *self,
               const char            *path)
{
  g_auto(SandboxBubblewrapFd) fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  g_autofree char *data = NULL;
  struct stat st;
  gsize size = 0;

  if (fd < 0)
    return errno == ENOENT;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || (st.st_mode & S_IROTH) == 0 ||
      st.st_size > MAX_HOST_COPY_SIZE)
    return FALSE;
  data = g_malloc (st.st_size + 1);
  while (size < (gsize) st.st_size)
    {
      gssize n = TEMP_FAILURE_RETRY (read (fd, data + size, st.st_size - size));

      if (n < 0)
        return FALSE;
      if (n == 0)
        break;   /* shrunk meanwhile: what is there now */
      size += n;
    }
  add_data (self, "--file", path, data, size);
  return TRUE;
}

/* Whether @runtime's etc/ssl/certs/ca-certificates.crt is a regular file
 * (the import made it where etc/ssl/certs is a directory), looked at
 * without following a link: a link there would lead the check, never the
 * bind (bwrap resolves its destination inside the sandbox), out of the
 * tree. */
static gboolean
runtime_has_ca_bundle (const char *runtime)
{
  static const char * const way[] = { "etc", "ssl", "certs" };
  g_auto(SandboxBubblewrapFd) fd = open (runtime, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat st;

  for (gsize i = 0; fd >= 0 && i < G_N_ELEMENTS (way); i++)
    {
      int next = openat (fd, way[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

      close (fd);
      fd = next;
    }
  return fd >= 0 && fstatat (fd, "ca-certificates.crt", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISREG (st.st_mode);
}

/* The contents of the operator's PEM file, once GIO's TLS backend has
 * parsed at least one certificate from it and nothing but certificates. */
static char *
read_extra_ca_certificates (const char  *path,
                            GError     **error)
{
  g_autofree char *pem = NULL;
  gsize length = 0;
  g_autolist(GTlsCertificate) certificates = NULL;
  g_autoptr(GError) local_error = NULL;
  GStatBuf st;

  if (!g_path_is_absolute (path))
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "extra-ca-certificates must be an absolute path, not “%s”", path);
      return NULL;
    }
  if (g_stat (path, &st) != 0 || !S_ISREG (st.st_mode) || st.st_size > MAX_EXTRA_CA_SIZE)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "extra-ca-certificates “%s” is not a regular file of at most 4 MiB", path);
      return NULL;
    }
  if (!g_file_get_contents (path, &pem, &length, &local_error) ||
      (certificates = g_tls_certificate_list_new_from_file (path, &local_error)) == NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "extra-ca-certificates “%s” holds no PEM certificate: %s", path,
                   local_error != NULL ? local_error->message : "none found");
      return NULL;
    }
  /* A private key or any other block has no place in a trust store. */
  if (strstr (pem, "PRIVATE KEY-----") != NULL || memchr (pem, '\0', length) != NULL)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "extra-ca-certificates “%s” holds more than certificates", path);
      return NULL;
    }
  return g_steal_pointer (&pem);
}

/**
 * sandbox_bubblewrap_etc_add_gateway_ca:
 * @pem: the certificate of the CA the gateway ends tunnels' TLS with
 * @curated: whether the guest has the curated /etc
 * @runtime: (nullable): the host path of the session's runtime tree, whose
 *   bundle is the one replaced; %NULL: the host's
 *
 * Under an allow-list every TLS connection the guest makes goes through the
 * gateway's proxy, which answers it with a certificate of this CA: the
 * guest trusts it alone, at %SANDBOX_BUBBLEWRAP_GATEWAY_CA_FILE and, with
 * the curated /etc, as `/etc/ssl/certs/ca-certificates.crt` (bound over the
 * host's bundle, or the extra certificates'). Its key never enters the
 * guest: only these bytes do.
 */
void
sandbox_bubblewrap_etc_add_gateway_ca (SandboxBubblewrapArgs *self,
                                       GBytes                *pem,
                                       gboolean               curated,
                                       const char            *runtime)
{
  gsize size;
  const char *data = g_bytes_get_data (pem, &size);

  add_data (self, "--ro-bind-data", SANDBOX_BUBBLEWRAP_GATEWAY_CA_FILE, data, size);
  if (curated && (runtime != NULL ? runtime_has_ca_bundle (runtime)
                                  : g_file_test (HOST_CA_BUNDLE, G_FILE_TEST_IS_REGULAR)))
    add_data (self, "--ro-bind-data", HOST_CA_BUNDLE, data, size);
}

/**
 * sandbox_bubblewrap_etc_load_ca_bundle:
 * @etc: the backend's /etc settings
 * @error: return location for a %SANDBOX_ERROR_INVALID
 *
 * Builds @etc's `ca_bundle` from `extra_ca_path` (nothing to do when it is
 * %NULL): the host's bundle, then the extra certificates. Where the host
 * has `/etc/ssl/certs` but no bundle in it, there is no file to bind over
 * in the guest's read-only view of that directory: refused.
 *
 * Returns: %FALSE with @error set when the file cannot serve
 */
gboolean
sandbox_bubblewrap_etc_load_ca_bundle (SandboxBubblewrapEtc  *etc,
                                       GError               **error)
{
  g_autofree char *extra = NULL;
  g_autofree char *host = NULL;
  GString *bundle;

  if (etc->extra_ca_path == NULL)
    return TRUE;
  if (!etc->curated)
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "extra-ca-certificates needs curated-etc");
      return FALSE;
    }
  extra = read_extra_ca_certificates (etc->extra_ca_path, error);
  if (extra == NULL)
    return FALSE;
  if (g_file_test ("/etc/ssl/certs", G_FILE_TEST_IS_DIR) &&
      (!g_file_test (HOST_CA_BUNDLE, G_FILE_TEST_IS_REGULAR) ||
       !g_file_get_contents (HOST_CA_BUNDLE, &host, NULL, NULL)))
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "extra-ca-certificates needs the host's " HOST_CA_BUNDLE);
      return FALSE;
    }
  bundle = g_string_new (host);
  if (bundle->len > 0 && bundle->str[bundle->len - 1] != '\n')
    g_string_append_c (bundle, '\n');
  g_string_append (bundle, extra);
  g_clear_pointer (&etc->ca_bundle, g_bytes_unref);
  etc->ca_bundle = g_string_free_to_bytes (bundle);
  return TRUE;
}

/**
 * sandbox_bubblewrap_etc_copy:
 * @dest: an all-zero #SandboxBubblewrapEtc
 * @src: the settings to copy
 *
 * Copies @src into @dest (a driver keeps its own copy of the backend's).
 */
void
sandbox_bubblewrap_etc_copy (SandboxBubblewrapEtc       *dest,
                             const SandboxBubblewrapEtc *src)
{
  dest->curated = src->curated;
  dest->git_name = g_strdup (src->git_name);
  dest->git_email = g_strdup (src->git_email);
  dest->extra_ca_path = g_strdup (src->extra_ca_path);
  dest->ca_bundle = src->ca_bundle != NULL ? g_bytes_ref (src->ca_bundle) : NULL;
}

/**
 * sandbox_bubblewrap_etc_clear:
 * @etc: settings from sandbox_bubblewrap_etc_copy() or a backend
 *
 * Frees what @etc holds.
 */
void
sandbox_bubblewrap_etc_clear (SandboxBubblewrapEtc *etc)
{
  g_clear_pointer (&etc->git_name, g_free);
  g_clear_pointer (&etc->git_email, g_free);
  g_clear_pointer (&etc->extra_ca_path, g_free);
  g_clear_pointer (&etc->ca_bundle, g_bytes_unref);
}

/* The zone file /etc/localtime names on the host, if it is one under
 * /usr/share/zoneinfo (which the guest has); else UTC. */
static char *
localtime_target (void)
{
  g_autofree char *target = g_file_read_link ("/etc/localtime", NULL);
  g_autofree char *canonical = NULL;

  if (target != NULL)
    canonical = g_canonicalize_filename (target, "/etc");
  if (canonical != NULL && g_str_has_prefix (canonical, "/usr/share/zoneinfo/") &&
      strstr (canonical, "/..") == NULL)
    return g_steal_pointer (&canonical);
  return g_strdup ("/usr/share/zoneinfo/Etc/UTC");
}

/* The synthesized files that say who the guest is: `passwd` and `group`
 * naming the guest (home /workspace), `nsswitch.conf`, `hosts`, `hostname`
 * and `gitconfig` with the default identity (checked by the backend: no
 * control characters, quotes or backslashes), each put with @option (see
 * add_data()). */
static void
add_identity_files (SandboxBubblewrapArgs      *self,
                    uid_t                       uid,
                    gid_t                       gid,
                    const SandboxBubblewrapEtc *etc,
                    const char                 *option)
{
  static const char nsswitch[] =
    "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n"
    "networks: files\nprotocols: files\nservices: files\n";
  static const char hosts[] =
    "127.0.0.1\tlocalhost\n127.0.1.1\t" GUEST_HOSTNAME "\n"
    "::1\tlocalhost ip6-localhost ip6-loopback\n";
  const char *user = uid == 0 ? "root" : GUEST_USER;
  const char *group_name = gid == 0 ? "root" : GUEST_USER;
  g_autofree char *passwd = NULL;
  g_autofree char *group = NULL;
  g_autofree char *gitconfig = NULL;

  /* The guest first (a root host's guests are the overflow ids, which are
   * nobody's), then nobody for the unmapped owners of /usr. */
  passwd = g_strdup_printf ("%s:x:%u:%u:%s:" SANDBOX_WORKSPACE ":/bin/sh\n%s",
                            user, (guint) uid, (guint) gid, user,
                            uid == NOBODY_ID ? ""
                            : "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n");
  group = g_strdup_printf ("%s:x:%u:\n%s", group_name, (guint) gid,
                           gid == NOBODY_ID ? "" : "nogroup:x:65534:\n");
  gitconfig = g_strdup_printf ("[user]\n\tname = \"%s\"\n\temail = \"%s\"\n", etc->git_name,
                               etc->git_email);
  add_data (self, option, "/etc/passwd", passwd, strlen (passwd));
  add_data (self, option, "/etc/group", group, strlen (group));
  add_data (self, option, "/etc/nsswitch.conf", nsswitch, sizeof nsswitch - 1);
  add_data (self, option, "/etc/hosts", hosts, sizeof hosts - 1);
  add_data (self, option, "/etc/hostname", GUEST_HOSTNAME "\n", strlen (GUEST_HOSTNAME "\n"));
  add_data (self, option, "/etc/gitconfig", gitconfig, strlen (gitconfig));
}

/**
 * sandbox_bubblewrap_etc_add:
 * @self: a command line
 * @uid: the guest's uid as the guest sees it
 * @gid: the guest's gid as the guest sees it
 * @etc: the backend's /etc settings
 * @resolv_conf: whether to write a `/etc/resolv.conf` naming the DNS of an
 *   allow-all guest's network (see sandbox-bubblewrap-network.c)
 *
 * Adds the curated /etc: the host entries of `etc_host_entries` that exist
 * (bound, or copied: see add_host_copy()),
 * `/etc/localtime` (a link to the host's zone under /usr/share/zoneinfo,
 * or UTC), and synthesized `passwd` and `group` naming the guest (home
 * /workspace), `nsswitch.conf`, `hosts`, `hostname` and `gitconfig` with
 * the default identity (checked by the backend: no control characters,
 * quotes or backslashes), and the CA bundle with the extra certificates
 * over the host's, when the backend has them.
 */
void
sandbox_bubblewrap_etc_add (SandboxBubblewrapArgs *self,
                            uid_t                  uid,
                            gid_t                  gid,
                            const SandboxBubblewrapEtc *etc,
                            gboolean               resolv_conf)
{
  g_autofree char *zone = localtime_target ();

  /* A tmpfs of its own, read-only once filled: the guest adds nothing. */
  sandbox_bubblewrap_args_add_many (self, "--tmpfs", "/etc", NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (etc_host_entries); i++)
    {
      const char *path = etc_host_entries[i].path;

      if (!etc_host_entries[i].copy || !add_host_copy (self, path))
        sandbox_bubblewrap_args_add_many (self, "--ro-bind-try", path, path, NULL);
    }
  if (resolv_conf)
    add_data_file (self, "/etc/resolv.conf", SANDBOX_BUBBLEWRAP_NETWORK_RESOLV_CONF);
  sandbox_bubblewrap_args_add_many (self, "--symlink", zone, "/etc/localtime", NULL);

  add_identity_files (self, uid, gid, etc, "--file");
  if (etc->ca_bundle != NULL)
    /* Within the host's read-only /etc/ssl/certs bind: a file cannot be
     * written there, only bound over. */
    add_data (self, "--ro-bind-data", HOST_CA_BUNDLE, g_bytes_get_data (etc->ca_bundle, NULL),
              g_bytes_get_size (etc->ca_bundle));
  sandbox_bubblewrap_args_add_many (self, "--remount-ro", "/etc",
                                    "--hostname", GUEST_HOSTNAME, NULL);
}

/**
 * sandbox_bubblewrap_etc_add_runtime:
 * @self: a command line
 * @uid: the guest's uid as the guest sees it
 * @gid: the guest's gid as the guest sees it
 * @etc: (nullable): the backend's /etc settings; %NULL: no curated files
 *   (curated-etc off), the runtime's /etc as it is
 * @resolv_conf: whether to put a `/etc/resolv.conf` naming the DNS of an
 *   allow-all guest's network
 * @runtime: the host path of the session's runtime tree
 *
 * The guest's /etc on a runtime: the runtime's etc/, bound read-only (a
 * bwrap bind is always nosuid and nodev too), with the identity files of
 * sandbox_bubblewrap_etc_add() bound over it and the extra CA bundle over
 * its own. Nothing of the host's /etc: the runtime's alternatives,
 * ld.so.cache, certificates and localtime are its own. The import made
 * every file bound over here (sandbox-bubblewrap-store-runtimes.c): a
 * read-only bind has no room for a mount point bwrap would make, and this
 * costs a mount per curated file where a tmpfs /etc filled from the
 * runtime's would cost one per entry of its /etc.
 */
void
sandbox_bubblewrap_etc_add_runtime (SandboxBubblewrapArgs      *self,
                                    uid_t                       uid,
                                    gid_t                       gid,
                                    const SandboxBubblewrapEtc *etc,
                                    gboolean                    resolv_conf,
                                    const char                 *runtime)
{
  static const char resolv[] = SANDBOX_BUBBLEWRAP_NETWORK_RESOLV_CONF;
  g_autofree char *runtime_etc = g_build_filename (runtime, "etc", NULL);

  sandbox_bubblewrap_args_add_many (self, "--ro-bind", runtime_etc, "/etc", NULL);
  if (etc == NULL)
    return;
  add_identity_files (self, uid, gid, etc, "--ro-bind-data");
  if (resolv_conf)
    add_data (self, "--ro-bind-data", "/etc/resolv.conf", resolv, sizeof resolv - 1);
  if (etc->ca_bundle != NULL && runtime_has_ca_bundle (runtime))
    add_data (self, "--ro-bind-data", HOST_CA_BUNDLE, g_bytes_get_data (etc->ca_bundle, NULL),
              g_bytes_get_size (etc->ca_bundle));
  sandbox_bubblewrap_args_add_many (self, "--hostname", GUEST_HOSTNAME, NULL);
}
