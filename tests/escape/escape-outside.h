/* escape-outside.h — an "outside" network a test builds for itself
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The outside's address, as a guest would dial an internet server. */
#define ESCAPE_OUTSIDE_ADDRESS "198.51.100.2"

/* What the outside's server answers every connection with. */
#define ESCAPE_OUTSIDE_BODY "from outside\n"

typedef struct
{
  GPid server;       /* the server, alone in the outside's network namespace */
  guint16 port;      /* its TCP port at ESCAPE_OUTSIDE_ADDRESS */
  int accepted_fd;   /* a byte arrives here per connection it served */
} EscapeOutside;

void   escape_outside_start    (EscapeOutside *outside);
guint  escape_outside_stop     (EscapeOutside *outside);

G_END_DECLS
