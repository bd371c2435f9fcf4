// The reviews web server: HTML pages and a small JSON API over a Backend (backend.h).
//
//   GET  /[?page=N]            the items: rating, review count, hijack resistance, window, tally
//   GET  /item/<id>[?page=N]   an item's reviews and the form that posts a signed review
//   POST /item/<id>/review     the form (multipart/form-data or x-www-form-urlencoded):
//                              signed_review (upload) or signed_json (pasted), the output of
//                              the user's own client (reviews-net sign-review): the server
//                              never receives a review key or an identity
//   GET  /api/items[?page=N]   the items as JSON (api.h), with "page" and "pages"
//   GET  /api/item/<id>[?page=N]  one item with a page of its reviews as JSON
//   GET  /style.css            the one stylesheet
//
// <id> is percent-encoded in links (html.h) and decoded by the server. Bad input gets an error
// page (JSON under /api/) with the HTTP status of http_status.h; bodies over
// ServerOptions::max_body_bytes are refused with 413 before the backend sees them. Every answer
// carries a Content-Security-Policy that allows no script and nothing from another origin, and
// every connection is closed after one answer (no request can hide behind a malformed one).
// Connections are capped in all and per client address, and a request must arrive whole within
// request_timeout_seconds (connection_guard.h): slow or half-open clients cannot hold the
// server's threads.
//
//   Server server(backend, {});
//   TESSERA_ASSIGN_OR_RETURN(int port, server.Bind("127.0.0.1", 8080));
//   return server.Serve(tessera::StopOnSignals());
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "reviews/web/backend.h"

namespace tessera::reviews::web {

struct ServerOptions {
  // The largest request body accepted. A signed review is its ring and signature in hex (about
  // 130 bytes per ring member) plus the text: 160 KiB holds the largest ring the ledger takes
  // (form.h), and 192 KiB leaves room for the multipart framing without letting a client make
  // the server buffer megabytes.
  size_t max_body_bytes = 352 * 1024;  // a signed review (form.h) and the form around it
  // How long a connection may stall while sending its request or reading the answer, and how
  // long an idle keep-alive connection is kept.
  int io_timeout_seconds = 10;
  // Items per page of the item list, and reviews per page of an item (?page=N).
  size_t page_size = 50;
  // Connections admitted at once, in all and from one client address (connection_guard.h);
  // one beyond either cap gets 503 and is closed at once. Each admitted connection has its own
  // thread (threads blocked on a socket cost little), so stalled clients never queue real
  // requests until the cap is reached by many addresses together.
  size_t max_connections = 256;
  size_t max_connections_per_address = 32;
  // The whole request (head, and a body announced by Content-Length) must arrive within this
  // many seconds of the connection being admitted, however slowly it trickles (else 408 and
  // close): a client sending a byte every few seconds cannot hold a thread for long.
  int request_timeout_seconds = 10;
  // The npm package libsodium-wrappers-sumo (scripts/setup installs it into `npm root -g`):
  // its ES module and that of its libsodium-sumo dependency are served under /static/ for the
  // item page's "sign in this browser" form. Empty, or a directory without them: no such form
  // (the page still relays reviews signed by the user's own client).
  std::string sodium_package;
};

struct ListenAddress {
  std::string host;
  int port = 0;
};

// Parses "host:port" ("127.0.0.1:8080", "[::1]:8080", ":8080" for all interfaces; port 0 picks
// a free port). A usage error (cli::UsageError) for anything else.
Result<ListenAddress> ParseListenAddress(std::string_view text);

class Server {
 public:
  // `backend` must outlive the server; it is called from several HTTP threads at once.
  Server(Backend& backend, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds the listening socket; returns the bound port (the chosen one when `port` is 0).
  // UNAVAILABLE when the address cannot be bound.
  Result<int> Bind(const std::string& host, int port);

  // Serves requests on the bound socket until `stop` becomes true (it is checked ten times a
  // second; tessera::StopOnSignals() gives SIGINT/SIGTERM), then stops accepting, lets
  // requests in flight finish and returns. FAILED_PRECONDITION when Bind was not called.
  Status Serve(const std::atomic<bool>& stop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::reviews::web
