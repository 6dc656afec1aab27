/* sandbox-memory-private.h — what every file of the memory driver shares
 *
 * The memory driver builds against libsandbox-1's public headers, as an
 * out-of-tree driver does, plus one core helper it is given on purpose
 * (SandboxContextThread, through sandbox_context_thread_dep): it is not
 * compiled with SANDBOX_COMPILATION, so any other private core header fails
 * to compile here. Its own headers ask for SANDBOX_MEMORY_COMPILATION.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#ifndef SANDBOX_MEMORY_COMPILATION
# error "This header is private to the memory driver."
#endif

#include <sandbox-backend-driver.h>
