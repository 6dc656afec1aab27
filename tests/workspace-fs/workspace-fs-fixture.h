/* workspace-fs-fixture.h — what the workspace-fs test executables share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every test builds a real directory pair under a fresh temporary directory:
 * "workspace" (what the guest controls) and "outside" (host files the guest
 * must never reach through the host), then plays the guest with symbolic
 * links, hard links, FIFOs, sockets, sparse files and races.
 */

#pragma once

#include <gio/gio.h>

#include "sandbox-workspace.h"

G_BEGIN_DECLS

#define SECRET "host secret"
#define SENTINEL "sentinel"

/* The data of tests that run on the fallback for filesystems without
 * O_TMPFILE. */
extern const char named_temporaries[];
#define NAMED_TEMPORARIES ((gconstpointer) named_temporaries)
/* The data of tests that run on an overlay workspace (its workspace the
 * upper layer, over an empty lower one): every guarantee holds there too. */
extern const char overlay_layers[];
#define OVERLAY ((gconstpointer) overlay_layers)

typedef struct
{
  char *base;        /* the temporary directory holding both trees */
  char *workspace;   /* base/workspace */
  char *outside;     /* base/outside: secret, dir/f */
  SandboxWorkspace *ws;
} Fixture;

/* @data: NULL, NAMED_TEMPORARIES or OVERLAY. */
void  fixture_set_up           (Fixture       *fixture,
                                gconstpointer  data);
void  fixture_tear_down        (Fixture       *fixture,
                                gconstpointer  data);

char *ws_path                  (Fixture    *fixture,
                                const char *relative);
char *outside_path             (Fixture    *fixture,
                                const char *relative);
void  set_host_file            (const char *path,
                                const char *contents);
char *get_host_file            (const char *path);
void  ws_mkdir                 (Fixture    *fixture,
                                const char *relative);
void  ws_symlink               (Fixture    *fixture,
                                const char *target,
                                const char *relative);
void  ws_write                 (Fixture    *fixture,
                                const char *relative,
                                const char *text);

void  assert_outside_untouched (Fixture      *fixture);
void  assert_no_host_path      (Fixture      *fixture,
                                const GError *error);
void  assert_escape_error      (Fixture      *fixture,
                                const GError *error);
void  assert_ws_contents       (Fixture    *fixture,
                                const char *relative,
                                const char *text);

/* ADD_FILE and ADD_WRITE tests run on a plain workspace and on an overlay
 * one; ADD tests (copies, opening) on a plain one only. */
#define ADD(path, func) \
  g_test_add ("/sandbox/workspace-fs/" path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)
#define ADD_FILE(path, func) \
  G_STMT_START { \
    ADD (path, func); \
    g_test_add ("/sandbox/workspace-fs/overlay/" path, Fixture, OVERLAY, \
                fixture_set_up, func, fixture_tear_down); \
  } G_STMT_END
#define ADD_WRITE(path, func) \
  G_STMT_START { \
    g_test_add ("/sandbox/workspace-fs/write/" path, Fixture, NULL, \
                fixture_set_up, func, fixture_tear_down); \
    g_test_add ("/sandbox/workspace-fs/write-named/" path, Fixture, NAMED_TEMPORARIES, \
                fixture_set_up, func, fixture_tear_down); \
    g_test_add ("/sandbox/workspace-fs/overlay/write/" path, Fixture, OVERLAY, \
                fixture_set_up, func, fixture_tear_down); \
  } G_STMT_END

G_END_DECLS
