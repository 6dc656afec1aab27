/* sandbox-gateway-upstream-private.h — libcurl's multi interface on a GMainContext
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>
#include <curl/curl.h>

G_BEGIN_DECLS

typedef struct _SandboxUpstream SandboxUpstream;

/* Called on the upstream's context when a transfer ends by itself, with
 * libcurl's result. Not called for sandbox_upstream_cancel(). */
typedef void (*SandboxUpstreamDone) (CURL     *easy,
                                     CURLcode  result,
                                     gpointer  user_data);

SandboxUpstream *sandbox_upstream_new         (GMainContext        *context);
void             sandbox_upstream_free        (SandboxUpstream     *self);
CURL            *sandbox_upstream_take_easy   (SandboxUpstream     *self);
void             sandbox_upstream_return_easy (SandboxUpstream     *self,
                                               CURL                *easy);
gboolean         sandbox_upstream_start       (SandboxUpstream     *self,
                                               CURL                *easy,
                                               SandboxUpstreamDone  done,
                                               gpointer             user_data);
void             sandbox_upstream_cancel      (SandboxUpstream     *self,
                                               CURL                *easy);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxUpstream, sandbox_upstream_free)

G_END_DECLS
