// Whole-buffer reads and writes on a connected socket, with Status errors.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/status.h"

namespace tessera {

// Sends all `size` bytes, retrying short writes and EINTR. Never raises SIGPIPE (MSG_NOSIGNAL):
// a peer that went away is UNAVAILABLE, not a signal that kills the process.
Status SendAll(int fd, const void* data, size_t size);

// The message of RecvAll's status when the peer closed the connection cleanly.
inline constexpr std::string_view kPeerClosedMessage = "connection closed by the peer";

// Receives exactly `size` bytes, retrying short reads and EINTR. UNAVAILABLE when the socket
// fails or the peer closes the connection before `size` bytes arrived (message
// kPeerClosedMessage, so a caller can word a clean close differently from a read error).
Status RecvAll(int fd, void* data, size_t size);

// Socket options for a listening socket that must not share its port: SO_REUSEADDR (a quick
// restart) and not SO_REUSEPORT, with which a second server binds the same port and silently
// takes part of the connections. For httplib::Server::set_socket_options, whose default sets
// both.
void ReuseAddressOnly(int fd);

}  // namespace tessera
