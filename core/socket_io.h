// Whole-buffer reads and writes on a connected socket, with Status errors.
#pragma once

#include <cstddef>

#include "core/status.h"

namespace tessera {

// Sends all `size` bytes, retrying short writes and EINTR. Never raises SIGPIPE (MSG_NOSIGNAL):
// a peer that went away is UNAVAILABLE, not a signal that kills the process.
Status SendAll(int fd, const void* data, size_t size);

// Receives exactly `size` bytes, retrying short reads and EINTR. UNAVAILABLE when the socket
// fails or the peer closes the connection before `size` bytes arrived ("connection closed by
// the peer"), so callers can tell a clean close from a read error by the message only.
Status RecvAll(int fd, void* data, size_t size);

}  // namespace tessera
