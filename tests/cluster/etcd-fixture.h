/* etcd-fixture.h — a real etcd (1 or 3 members) on loopback for the cluster tests
 *
 * Each member listens on 127.0.0.1 ports found free by binding port 0 (and,
 * when asked, for clients on one more address of this host), keeps
 * its data in a temporary directory removed at the end, and is stopped by
 * pid (SIGTERM, then SIGKILL). Tests skip with the reason when
 * /usr/bin/etcd (Debian's etcd-server) is not installed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _EtcdFixture EtcdFixture;

/* TRUE (after g_test_skip()) when etcd is not installed. */
gboolean     etcd_fixture_skip_if_missing  (void);

/* Starts @n_members members and waits until every one is healthy. */
EtcdFixture *etcd_fixture_start            (guint         n_members,
                                            GError      **error);
/* The same, each member also serving clients on @extra_address (an IPv4
 * address assigned on this host, such as a veth's: a process in another
 * network namespace cannot reach this one's 127.0.0.1) at its loopback
 * client port. */
EtcdFixture *etcd_fixture_start_also_on    (guint         n_members,
                                            const char   *extra_address,
                                            GError      **error);
/* Stops every member and removes the data directory. */
void         etcd_fixture_free             (EtcdFixture  *self);

/* "http://127.0.0.1:P1,http://127.0.0.1:P2,…", every member. */
const char  *etcd_fixture_get_endpoints    (EtcdFixture  *self);
/* "http://EXTRA:P1,…", every member on the extra address; NULL when
 * started without one. */
const char  *etcd_fixture_get_extra_endpoints (EtcdFixture *self);
const char  *etcd_fixture_get_endpoint     (EtcdFixture  *self,
                                            guint         member);
guint        etcd_fixture_get_n_members    (EtcdFixture  *self);

/* The index of the member that is leader now, as the members' own
 * /v3/maintenance/status say; -1 (and an error) when none answers. */
int          etcd_fixture_get_leader       (EtcdFixture  *self,
                                            GError      **error);
/* SIGTERM, then SIGKILL after 5 s; waits for the member to exit. */
void         etcd_fixture_stop_member      (EtcdFixture  *self,
                                            guint         member);
/* Starts a stopped member again on its data directory and ports. */
gboolean     etcd_fixture_restart_member   (EtcdFixture  *self,
                                            guint         member,
                                            GError      **error);
/* SIGSTOP / SIGCONT. */
void         etcd_fixture_signal_member    (EtcdFixture  *self,
                                            guint         member,
                                            int           signum);
/* Waits until @member answers /health with "true" (or @timeout_ms passes). */
gboolean     etcd_fixture_wait_healthy     (EtcdFixture  *self,
                                            guint         member,
                                            guint         timeout_ms,
                                            GError      **error);

/* The value of @key, read from the first member that answers (a test's
 * own look at what the hosts wrote); G_IO_ERROR_NOT_FOUND when absent. */
char        *etcd_fixture_get_value        (EtcdFixture  *self,
                                            const char   *key,
                                            GError      **error);

/* Writes @value to @key through the first member that answers: what an
 * attacker who can write etcd keys does, for the tests of what the hosts
 * then refuse. */
gboolean     etcd_fixture_put_value        (EtcdFixture  *self,
                                            const char   *key,
                                            const char   *value,
                                            GError      **error);

/* Deletes @key (absent or not) through the first member that answers. */
gboolean     etcd_fixture_delete_key       (EtcdFixture  *self,
                                            const char   *key,
                                            GError      **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (EtcdFixture, etcd_fixture_free)

G_END_DECLS
