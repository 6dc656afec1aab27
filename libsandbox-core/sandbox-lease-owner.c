/* sandbox-lease-owner.c — who holds a session's lease
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-lease-owner.h"

/**
 * SandboxLeaseOwner:
 *
 * The holder of a session's exclusive lease, as the backend's store records
 * it (see [method@Sandbox.Backend.query_lease_owner]): the owner's process id, the
 * host it runs on, and whether the backend can tell it is still alive. A
 * lease whose owner is not alive is stale: it was left by an owner that died
 * without releasing it, and only [method@Sandbox.Backend.recover_session] takes it
 * over. Immutable.
 */
struct _SandboxLeaseOwner
{
  GObject parent_instance;

  int pid;
  char *host;
  gboolean alive;
};

G_DEFINE_FINAL_TYPE (SandboxLeaseOwner, sandbox_lease_owner, G_TYPE_OBJECT)

static void
sandbox_lease_owner_finalize (GObject *object)
{
  SandboxLeaseOwner *self = SANDBOX_LEASE_OWNER (object);

  g_free (self->host);

  G_OBJECT_CLASS (sandbox_lease_owner_parent_class)->finalize (object);
}

static void
sandbox_lease_owner_class_init (SandboxLeaseOwnerClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_lease_owner_finalize;
}

static void
sandbox_lease_owner_init (SandboxLeaseOwner *self)
{
}

/**
 * sandbox_lease_owner_new:
 * @pid: the owner's process id, or 0 when the lease does not say (an
 *   unreadable lease is still a lease)
 * @host: (nullable): the host the owner runs on, or %NULL for this host
 * @alive: whether the owner still holds the lease (%FALSE: a stale lease)
 *
 * Creates a lease owner record; backends make these.
 *
 * Returns: (transfer full): a new [class@Sandbox.LeaseOwner]
 */
SandboxLeaseOwner *
sandbox_lease_owner_new (int         pid,
                         const char *host,
                         gboolean    alive)
{
  SandboxLeaseOwner *self;

  g_return_val_if_fail (pid >= 0, NULL);

  self = g_object_new (SANDBOX_TYPE_LEASE_OWNER, NULL);
  self->pid = pid;
  self->host = g_strdup (host);
  self->alive = alive;
  return self;
}

/**
 * sandbox_lease_owner_get_pid:
 * @self: a [class@Sandbox.LeaseOwner]
 *
 * Gets the owner's process id, on the owner's host.
 *
 * Returns: the pid, or 0 when the lease does not tell it
 */
int
sandbox_lease_owner_get_pid (SandboxLeaseOwner *self)
{
  g_return_val_if_fail (SANDBOX_IS_LEASE_OWNER (self), 0);

  return self->pid;
}

/**
 * sandbox_lease_owner_get_host:
 * @self: a [class@Sandbox.LeaseOwner]
 *
 * Gets the host the owner runs on.
 *
 * Returns: (nullable): the host's name, or %NULL for this host
 */
const char *
sandbox_lease_owner_get_host (SandboxLeaseOwner *self)
{
  g_return_val_if_fail (SANDBOX_IS_LEASE_OWNER (self), NULL);

  return self->host;
}

/**
 * sandbox_lease_owner_is_alive:
 * @self: a [class@Sandbox.LeaseOwner]
 *
 * Gets whether the owner still holds the lease, as far as the backend can
 * tell when it was asked. %FALSE means a stale lease, one its owner left
 * when it died.
 *
 * Returns: whether the owner is alive
 */
gboolean
sandbox_lease_owner_is_alive (SandboxLeaseOwner *self)
{
  g_return_val_if_fail (SANDBOX_IS_LEASE_OWNER (self), FALSE);

  return self->alive;
}
