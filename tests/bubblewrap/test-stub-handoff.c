/* test-stub-handoff.c — the host's side of the stub's handoff socket
 *
 * sandbox_bubblewrap_stub_handoff_receive() against what a broken stub
 * could send: only exactly one StubHandoff of a known kind with exactly one
 * descriptor is taken; anything else is refused, and every descriptor that
 * came with it closed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sandbox-bubblewrap-stub-private.h"
#include "stub/sandbox-stub-message.h"

/* Sends @size bytes of @data with @n_fds descriptors: the write ends of
 * fresh pipes, whose read ends go to @readers (our copies of the write
 * ends are closed: a reader sees EOF once the receiver closed its copy). */
static void
send_with_pipes (int         channel,
                 const void *data,
                 gsize       size,
                 guint       n_fds,
                 int        *readers)
{
  struct iovec part = { (void *) data, size };
  union
  {
    char buffer[CMSG_SPACE (2 * sizeof (int))];
    struct cmsghdr align;
  } control;
  struct msghdr message = { .msg_iov = &part, .msg_iovlen = 1 };
  int writers[2];

  g_assert_cmpuint (n_fds, <=, 2);
  for (guint i = 0; i < n_fds; i++)
    {
      int pipe_fds[2];

      g_assert_cmpint (pipe2 (pipe_fds, O_CLOEXEC | O_NONBLOCK), ==, 0);
      readers[i] = pipe_fds[0];
      writers[i] = pipe_fds[1];
    }
  if (n_fds > 0)
    {
      struct cmsghdr *header;

      message.msg_control = control.buffer;
      message.msg_controllen = CMSG_SPACE (n_fds * sizeof (int));
      header = CMSG_FIRSTHDR (&message);
      header->cmsg_level = SOL_SOCKET;
      header->cmsg_type = SCM_RIGHTS;
      header->cmsg_len = CMSG_LEN (n_fds * sizeof (int));
      memcpy (CMSG_DATA (header), writers, n_fds * sizeof (int));
    }
  g_assert_cmpint (sendmsg (channel, &message, 0), ==, (gssize) size);
  for (guint i = 0; i < n_fds; i++)
    close (writers[i]);
}

/* The host's end, as a command's process holds it. */
static GSocket *
host_end (int fd)
{
  g_autoptr(GError) error = NULL;
  GSocket *channel = g_socket_new_from_fd (fd, &error);

  g_assert_no_error (error);
  g_socket_set_blocking (channel, FALSE);
  return channel;
}

/* Whether every writer of @reader is closed (not: EAGAIN). */
static gboolean
sees_eof (int reader)
{
  char byte;

  return read (reader, &byte, 1) == 0;
}

static void
test_takes_a_handoff (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) channel = NULL;
  StubHandoff handoff = { STUB_HANDOFF_MAGIC, STUB_HANDOFF_PROXY_LISTENER };
  int fds[2], reader;
  guint32 kind = 0;
  int fd;

  g_assert_true (sandbox_bubblewrap_stub_handoff_open (fds, &error));
  g_assert_no_error (error);
  channel = host_end (fds[0]);
  fd = sandbox_bubblewrap_stub_handoff_receive (channel, &kind, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
  g_assert_cmpint (fd, ==, -1);
  g_clear_error (&error);

  send_with_pipes (fds[1], &handoff, sizeof handoff, 1, &reader);
  fd = sandbox_bubblewrap_stub_handoff_receive (channel, &kind, &error);
  g_assert_no_error (error);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpuint (kind, ==, STUB_HANDOFF_PROXY_LISTENER);
  g_assert_cmpint (fcntl (fd, F_GETFD), ==, FD_CLOEXEC);
  close (fd);
  g_assert_true (sees_eof (reader));
  close (reader);

  close (fds[1]);
  fd = sandbox_bubblewrap_stub_handoff_receive (channel, &kind, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CLOSED);
}

static void
test_refuses_malformed (void)
{
  StubHandoff good = { STUB_HANDOFF_MAGIC, STUB_HANDOFF_PROXY_LISTENER };
  StubHandoff other_magic = { STUB_HANDOFF_MAGIC ^ 1, STUB_HANDOFF_PROXY_LISTENER };
  StubHandoff unknown_kind = { STUB_HANDOFF_MAGIC, 99 };
  char longer[sizeof good + 1] = { 0 };
  struct
  {
    const void *data;
    gsize size;
    guint n_fds;
  } cases[] = {
    { &good, sizeof good, 0 },              /* no descriptor */
    { &good, sizeof good, 2 },              /* two */
    { &good, sizeof good - 1, 1 },          /* short */
    { longer, sizeof longer, 1 },           /* long */
    { &other_magic, sizeof other_magic, 1 },
    { &unknown_kind, sizeof unknown_kind, 1 },
  };

  memcpy (longer, &good, sizeof good);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GSocket) channel = NULL;
      int fds[2], readers[2] = { -1, -1 };
      guint32 kind = 0;

      g_test_message ("case %" G_GSIZE_FORMAT, i);
      g_assert_true (sandbox_bubblewrap_stub_handoff_open (fds, NULL));
      channel = host_end (fds[0]);
      send_with_pipes (fds[1], cases[i].data, cases[i].size, cases[i].n_fds, readers);
      g_assert_cmpint (sandbox_bubblewrap_stub_handoff_receive (channel, &kind, &error), ==, -1);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
      for (guint j = 0; j < cases[i].n_fds; j++)
        {
          g_assert_true (sees_eof (readers[j]));
          close (readers[j]);
        }
      close (fds[1]);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/sandbox/bubblewrap/stub-handoff/takes-a-handoff", test_takes_a_handoff);
  g_test_add_func ("/sandbox/bubblewrap/stub-handoff/refuses-malformed", test_refuses_malformed);

  return g_test_run ();
}
