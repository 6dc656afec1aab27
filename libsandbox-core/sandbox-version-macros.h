/* sandbox-version-macros.h
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(SANDBOX_INSIDE) && !defined(SANDBOX_COMPILATION)
# error "Only <sandbox.h> can be included directly."
#endif

#include <glib.h>

#ifndef _SANDBOX_EXTERN
# define _SANDBOX_EXTERN __attribute__((visibility("default"))) extern
#endif

#define SANDBOX_AVAILABLE_IN_ALL _SANDBOX_EXTERN
