/* sandbox-version-macros.h — availability and deprecation of the API
 *
 * As GLib's gversionmacros.h: an application defines
 * SANDBOX_VERSION_MIN_REQUIRED (the oldest libsandbox it supports) to get
 * warnings for API deprecated up to that version, and
 * SANDBOX_VERSION_MAX_ALLOWED (the newest it may use) to get warnings for API
 * added after it. SANDBOX_DISABLE_DEPRECATION_WARNINGS silences the former.
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

/**
 * SANDBOX_ENCODE_VERSION:
 * @major: a major version
 * @minor: a minor version
 *
 * Encodes a libsandbox version for comparing with
 * %SANDBOX_VERSION_MIN_REQUIRED and %SANDBOX_VERSION_MAX_ALLOWED.
 */
#define SANDBOX_ENCODE_VERSION(major,minor) ((major) << 16 | (minor) << 8)

/**
 * SANDBOX_VERSION_0_1:
 *
 * The version 0.1 of libsandbox, for %SANDBOX_VERSION_MIN_REQUIRED and
 * %SANDBOX_VERSION_MAX_ALLOWED.
 */
#define SANDBOX_VERSION_0_1 (SANDBOX_ENCODE_VERSION (0, 1))

/* The current and the previous stable version, by hand at each release
 * (tests/core/test-version.c checks them against the project's version). */
#define SANDBOX_VERSION_CUR_STABLE (SANDBOX_VERSION_0_1)
#define SANDBOX_VERSION_PREV_STABLE (SANDBOX_VERSION_0_1)

/**
 * SANDBOX_VERSION_MIN_REQUIRED:
 *
 * Define it before including `<sandbox.h>` to the oldest version the
 * application supports (e.g. %SANDBOX_VERSION_0_1): API deprecated up to it
 * warns. Default: the current stable version.
 */
#ifndef SANDBOX_VERSION_MIN_REQUIRED
# define SANDBOX_VERSION_MIN_REQUIRED (SANDBOX_VERSION_CUR_STABLE)
#endif

/**
 * SANDBOX_VERSION_MAX_ALLOWED:
 *
 * Define it before including `<sandbox.h>` to the newest version whose API
 * the application may use: API added after it warns. Default:
 * %SANDBOX_VERSION_MIN_REQUIRED when that is newer than the previous stable
 * version, else the current stable version.
 */
#ifndef SANDBOX_VERSION_MAX_ALLOWED
# if SANDBOX_VERSION_MIN_REQUIRED > SANDBOX_VERSION_PREV_STABLE
#  define SANDBOX_VERSION_MAX_ALLOWED (SANDBOX_VERSION_MIN_REQUIRED)
# else
#  define SANDBOX_VERSION_MAX_ALLOWED (SANDBOX_VERSION_CUR_STABLE)
# endif
#endif

#if SANDBOX_VERSION_MIN_REQUIRED > SANDBOX_VERSION_CUR_STABLE
# error "SANDBOX_VERSION_MIN_REQUIRED must be <= SANDBOX_VERSION_CUR_STABLE"
#endif
#if SANDBOX_VERSION_MAX_ALLOWED < SANDBOX_VERSION_MIN_REQUIRED
# error "SANDBOX_VERSION_MAX_ALLOWED must be >= SANDBOX_VERSION_MIN_REQUIRED"
#endif
#if SANDBOX_VERSION_MIN_REQUIRED < SANDBOX_VERSION_0_1
# error "SANDBOX_VERSION_MIN_REQUIRED must be >= SANDBOX_VERSION_0_1"
#endif

/**
 * SANDBOX_DEPRECATED_FOR:
 * @f: the replacement
 *
 * Marks a declaration deprecated in favour of @f (no warning when
 * `SANDBOX_DISABLE_DEPRECATION_WARNINGS` is defined).
 */
/**
 * SANDBOX_UNAVAILABLE:
 * @maj: the major version that added the declaration
 * @min: the minor version that added the declaration
 *
 * Marks a declaration added in @maj.@min, for an application whose
 * %SANDBOX_VERSION_MAX_ALLOWED is older: using it warns.
 */
#ifdef SANDBOX_DISABLE_DEPRECATION_WARNINGS
# define SANDBOX_DEPRECATED _SANDBOX_EXTERN
# define SANDBOX_DEPRECATED_FOR(f) _SANDBOX_EXTERN
# define SANDBOX_UNAVAILABLE(maj,min) _SANDBOX_EXTERN
#else
# define SANDBOX_DEPRECATED G_DEPRECATED _SANDBOX_EXTERN
# define SANDBOX_DEPRECATED_FOR(f) G_DEPRECATED_FOR(f) _SANDBOX_EXTERN
# define SANDBOX_UNAVAILABLE(maj,min) G_UNAVAILABLE(maj,min) _SANDBOX_EXTERN
#endif

#define SANDBOX_AVAILABLE_IN_ALL _SANDBOX_EXTERN

/* One block per version: what it added and what it deprecated. */
/**
 * SANDBOX_DEPRECATED_IN_0_1_FOR:
 * @f: the replacement
 *
 * Marks a declaration deprecated in 0.1 in favour of @f: using it warns when
 * %SANDBOX_VERSION_MIN_REQUIRED is 0.1 or later.
 */
#if SANDBOX_VERSION_MIN_REQUIRED >= SANDBOX_VERSION_0_1
# define SANDBOX_DEPRECATED_IN_0_1 SANDBOX_DEPRECATED
# define SANDBOX_DEPRECATED_IN_0_1_FOR(f) SANDBOX_DEPRECATED_FOR (f)
#else
# define SANDBOX_DEPRECATED_IN_0_1 _SANDBOX_EXTERN
# define SANDBOX_DEPRECATED_IN_0_1_FOR(f) _SANDBOX_EXTERN
#endif
#if SANDBOX_VERSION_MAX_ALLOWED < SANDBOX_VERSION_0_1
# define SANDBOX_AVAILABLE_IN_0_1 SANDBOX_UNAVAILABLE (0, 1)
#else
# define SANDBOX_AVAILABLE_IN_0_1 _SANDBOX_EXTERN
#endif
