/* cluster-driver-kit.h — hosts of the `cluster` driver as processes, for its tests
 *
 * Every "host" is a cluster-driver-host process: its own state directory,
 * its own etcd lease, its own bubblewrap sandboxes; all share one etcd (the
 * fixture) and one checkpoint store. A host is driven one command line at a
 * time (see cluster-driver-host.c for the commands).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "etcd-fixture.h"

G_BEGIN_DECLS

/* Short, so that lease expiry and self-fencing happen within a test. */
#define TTL_SECONDS 2

typedef struct
{
  GSubprocess *process;
  GDataInputStream *output;
  GOutputStream *input;
} Host;

typedef struct
{
  EtcdFixture *etcd;
  char *base;       /* the hosts' state directories and the store */
  char *store;
  GPtrArray *hosts; /* of Host, ended with the fixture */
} Fixture;

/* Starts etcd (also serving clients on @extra_address unless NULL) and makes
 * the directories. FALSE, after g_test_skip(), when etcd is not installed. */
gboolean  fixture_start       (Fixture     *fixture,
                               const char  *extra_address);
/* Ends every host (end of input), stops etcd, removes the directories. */
void      fixture_stop        (Fixture     *fixture);
/* g_test_add()'s set-up and tear-down: fixture_start() (etcd on loopback
 * only), fixture_stop(). */
void      fixture_set_up      (Fixture       *fixture,
                               gconstpointer  data);
void      fixture_tear_down   (Fixture       *fixture,
                               gconstpointer  data);

/* A new host on @endpoints, its command line prefixed by @wrapper (an argv
 * such as { "ip", "netns", "exec", NAME, NULL } that execs the rest; NULL for
 * none). Returns its first line: "ready" or "error …". */
char     *host_spawn          (Fixture             *fixture,
                               const char * const  *wrapper,
                               const char          *endpoints,
                               Host               **out);
/* The same, as host-@index in that host's state directory: a host
 * restarted after a crash when @index is one already started. */
char     *host_spawn_as       (Fixture             *fixture,
                               const char * const  *wrapper,
                               const char          *endpoints,
                               guint                index,
                               Host               **out);
/* A host on every etcd member's loopback endpoint, asserted ready. */
Host     *host_start          (Fixture     *fixture);
/* Two such hosts, @a and @b, both with the template; returns its key. */
char     *hosts_start_two     (Fixture     *fixture,
                               Host       **a,
                               Host       **b);

void      host_send           (Host        *host,
                               const char  *command);
char     *host_reply          (Host        *host);
/* Sends a command and returns its reply line. */
char     *host_call           (Host        *host,
                               const char  *command);
/* Sends a command that must succeed; returns what follows "ok ". */
char     *host_ok             (Host        *host,
                               const char  *command);

/* A session with a checkpoint holding a = "checkpointed" and, on top, a
 * change never checkpointed; @host owns it live. Returns "KEY SESSION". */
char     *make_session        (Host        *host);
/* Resumes @session on @host until it is no longer BUSY (30 s at most);
 * returns the reply. */
char     *resume_when_free    (Host        *host,
                               const char  *session,
                               gint64      *waited_ms);
/* The same, calling @before_each before every attempt: what it sees
 * happened before the attempt that succeeded was sent. */
typedef void (*BeforeResume) (gpointer user_data);
char     *resume_when_free_watching (Host         *host,
                                     const char   *session,
                                     BeforeResume  before_each,
                                     gpointer      user_data,
                                     gint64       *waited_ms);

/* Whether a process runs `sleep 98765` (the helper's spawn-sleep). */
gboolean  sleeper_runs        (void);
/* Waits until sleeper_runs() is @expected, for 10 s at most. */
gboolean  sleeper_becomes     (gboolean     expected);

G_END_DECLS
