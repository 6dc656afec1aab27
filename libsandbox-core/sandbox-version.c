/* sandbox-version.c — the version of the library at run time
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-version.h"

/**
 * sandbox_get_major_version:
 *
 * Gives the major version of the libsandbox the program runs with, which may
 * differ from %SANDBOX_MAJOR_VERSION, the one it was compiled against.
 *
 * Returns: the major version, e.g. 0 for 0.1.2
 */
guint
sandbox_get_major_version (void)
{
  return SANDBOX_MAJOR_VERSION;
}

/**
 * sandbox_get_minor_version:
 *
 * Gives the minor version of the libsandbox the program runs with (see
 * [func@Sandbox.get_major_version]).
 *
 * Returns: the minor version, e.g. 1 for 0.1.2
 */
guint
sandbox_get_minor_version (void)
{
  return SANDBOX_MINOR_VERSION;
}

/**
 * sandbox_get_micro_version:
 *
 * Gives the micro version of the libsandbox the program runs with (see
 * [func@Sandbox.get_major_version]).
 *
 * Returns: the micro version, e.g. 2 for 0.1.2
 */
guint
sandbox_get_micro_version (void)
{
  return SANDBOX_MICRO_VERSION;
}

/**
 * sandbox_check_version:
 * @major: the major version to check for
 * @minor: the minor version to check for
 * @micro: the micro version to check for
 *
 * Like %SANDBOX_CHECK_VERSION, but at run time: whether the libsandbox the
 * program runs with is at least @major.@minor.@micro. A program built against
 * a newer version than it may run with checks here before using what it
 * needs.
 *
 * Returns: %TRUE when the running library is that version or newer
 */
gboolean
sandbox_check_version (guint major,
                       guint minor,
                       guint micro)
{
  /* Compared as variables: against the constant 0 of a 0.x version the
   * compiler would call the first comparison always false. */
  guint running_major = sandbox_get_major_version ();
  guint running_minor = sandbox_get_minor_version ();
  guint running_micro = sandbox_get_micro_version ();

  if (running_major != major)
    return running_major > major;
  if (running_minor != minor)
    return running_minor > minor;
  return running_micro >= micro;
}
