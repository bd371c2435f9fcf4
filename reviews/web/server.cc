#include "reviews/web/server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <thread>

#include "core/cli.h"
#include "core/file.h"
#include "core/socket_io.h"
#include "reviews/web/api.h"
#include "reviews/web/connection_guard.h"
#include "reviews/web/form.h"
#include "reviews/web/html.h"
#include "reviews/web/http_status.h"
#include "reviews/web/static_scripts.h"

namespace tessera::reviews::web {

namespace {

constexpr const char* kHtml = "text/html; charset=utf-8";
constexpr const char* kJson = "application/json";
constexpr const char* kJs = "text/javascript; charset=utf-8";
constexpr size_t kSpareThreads = 32;
constexpr int kListenBacklog = 1024;

// Invalid UTF-8 from the ledger (review texts are raw bytes there) is replaced, not thrown on.
std::string Dump(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// Paths are decoded and may hold any byte: keep control characters out of the log lines.
std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7F) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool IsApi(const httplib::Request& req) { return req.path.starts_with("/api/"); }

void SendError(const httplib::Request& req, httplib::Response& res, Status status,
               std::string_view item_id = {}) {
  res.status = HttpStatusFor(status.code());
  // The server's own failures may name files and internals: those go to the log, the visitor
  // gets a generic message. Every other status is about the request or the ledger, and its
  // message is what the visitor needs.
  if (status.code() == StatusCode::kInternal || status.code() == StatusCode::kUnknown) {
    spdlog::error("{} {}: {}", req.method, Printable(req.path), status.ToString());
    status = Status(status.code(), "the server failed on this request (details in its log)");
  }
  if (IsApi(req)) {
    res.set_content(Dump(ErrorToJson(status)), kJson);
  } else {
    res.set_content(RenderErrorPage(res.status, status.message(), item_id), kHtml);
  }
}

// The form's fields by name from either encoding a browser uses. A field sent twice is an
// error rather than a guess at which one the user meant.
Result<FormFields> CollectFormFields(const httplib::Request& req) {
  FormFields fields;
  auto add = [&fields](const std::string& name, const std::string& value) -> Status {
    if (!fields.emplace(name, value).second) {
      return InvalidArgumentError("the form field '" + name + "' was sent twice");
    }
    return Status::Ok();
  };
  if (req.is_multipart_form_data()) {
    for (const auto& [name, part] : req.files) TESSERA_RETURN_IF_ERROR(add(name, part.content));
    return fields;
  }
  if (req.get_header_value("Content-Type").starts_with("application/x-www-form-urlencoded")) {
    for (const auto& [name, value] : req.params) TESSERA_RETURN_IF_ERROR(add(name, value));
    return fields;
  }
  return InvalidArgumentError(
      "a review is posted as multipart/form-data or application/x-www-form-urlencoded");
}

// One page of a list: entries [begin, end) of `page` (1-based) out of `pages`.
struct PageOf {
  size_t page = 1, pages = 1, begin = 0, end = 0;
};

// ?page=N, 1-based (default 1). INVALID_ARGUMENT for anything but a page that exists (page 1
// of an empty list exists).
Result<PageOf> Paginate(const httplib::Request& req, size_t total, size_t page_size) {
  PageOf p;
  p.pages = std::max<size_t>(1, (total + page_size - 1) / page_size);
  if (req.has_param("page")) {
    const std::string text = req.get_param_value("page");
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), p.page);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || p.page < 1 ||
        p.page > p.pages) {
      return InvalidArgumentError("page must be a whole number from 1 to " +
                                  std::to_string(p.pages));
    }
  }
  p.begin = std::min(total, (p.page - 1) * page_size);
  p.end = std::min(total, p.begin + page_size);
  return p;
}

template <typename T>
void Keep(std::vector<T>& list, const PageOf& page) {
  list = std::vector<T>(list.begin() + page.begin, list.begin() + page.end);
}

std::string ItemLink(std::string_view id) { return "/item/" + EncodePathSegment(id); }

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    return cli::UsageError("--listen must be host:port, got '" + std::string(text) + "'");
  }
  ListenAddress address;
  std::string_view host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  address.host = host.empty() ? "0.0.0.0" : std::string(host);
  const std::string_view port = text.substr(colon + 1);
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), address.port);
  if (port.empty() || error != std::errc() || end != port.data() + port.size() ||
      address.port < 0 || address.port > 65535) {
    return cli::UsageError("--listen port must be 0..65535, got '" + std::string(port) + "'");
  }
  return address;
}

// httplib's server with the connection guard (connection_guard.h) in front of its reading:
// a connection is read by httplib only once the caps admitted it and its whole request arrived.
class GuardedHttpServer : public httplib::Server {
 public:
  explicit GuardedHttpServer(const ServerOptions& options)
      : options_(options),
        limiter_({.max_connections = options.max_connections,
                  .max_per_address = options.max_connections_per_address}) {}

 protected:
  bool process_and_close_socket(socket_t sock) override {
    const std::string address = PeerAddress(sock);
    ConnectionLimiter::Slot slot = limiter_.Acquire(address);
    if (!slot) {
      spdlog::warn("connection from {} refused: connection cap reached", address);
      RefuseConnection(sock, 503, "Service Unavailable",
                       "Too many open connections (from your address or in all); try again.");
      return false;
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(options_.request_timeout_seconds);
    // Room for the largest head httplib reads (8 KiB) on top of the largest body.
    if (!WaitForRequest(sock, deadline, options_.max_body_bytes + 16 * 1024, &stopping_)) {
      spdlog::info("connection from {} closed: no complete request within {} s", address,
                   options_.request_timeout_seconds);
      RefuseConnection(sock, 408, "Request Timeout",
                       "The request did not arrive in time; the connection is closed.");
      return false;
    }
    // httplib's own socket handling is private; this is what it does for one request with
    // the connection closed after the answer, over a stream that also keeps the deadline.
    DeadlineStream stream(sock, options_.io_timeout_seconds, deadline);
    bool closed = false;
    const bool ok = process_request(stream, /*close_connection=*/true, closed, nullptr);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }

 private:
  // A socket as httplib reads and writes it: each wait bounded by the I/O timeout, and reading
  // refused once the request deadline passed (a body trickling in after the head stops there).
  class DeadlineStream final : public httplib::Stream {
   public:
    DeadlineStream(socket_t sock, int io_timeout_seconds,
                   std::chrono::steady_clock::time_point deadline)
        : sock_(sock), io_timeout_ms_(io_timeout_seconds * 1000), deadline_(deadline) {}

    bool is_readable() const override {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline_ - std::chrono::steady_clock::now())
                            .count();
      return left > 0 && Wait(POLLIN, static_cast<int>(std::min<int64_t>(left, io_timeout_ms_)));
    }
    bool is_writable() const override { return Wait(POLLOUT, io_timeout_ms_); }
    ssize_t read(char* ptr, size_t size) override {
      if (!is_readable()) return -1;
      ssize_t n;
      do {
        n = ::recv(sock_, ptr, size, 0);
      } while (n < 0 && errno == EINTR);
      return n;
    }
    ssize_t write(const char* ptr, size_t size) override {
      if (!is_writable()) return -1;
      ssize_t n;
      do {
        n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      } while (n < 0 && errno == EINTR);
      return n;
    }
    void get_remote_ip_and_port(std::string& ip, int& port) const override {
      Name(::getpeername, ip, port);
    }
    void get_local_ip_and_port(std::string& ip, int& port) const override {
      Name(::getsockname, ip, port);
    }
    socket_t socket() const override { return sock_; }

   private:
    bool Wait(short events, int timeout_ms) const {
      pollfd p{sock_, events, 0};
      int n;
      do {
        n = ::poll(&p, 1, timeout_ms);
      } while (n < 0 && errno == EINTR);
      return n > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
    }
    template <typename Getter>
    void Name(Getter get, std::string& ip, int& port) const {
      sockaddr_storage a{};
      socklen_t length = sizeof(a);
      ip.clear();
      port = 0;
      if (get(sock_, reinterpret_cast<sockaddr*>(&a), &length) != 0) return;
      char text[INET6_ADDRSTRLEN] = {};
      if (a.ss_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
        ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
        port = ntohs(v4->sin_port);
      } else if (a.ss_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
        ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
        port = ntohs(v6->sin6_port);
      }
      ip = text;
    }

    socket_t sock_;
    int io_timeout_ms_;
    std::chrono::steady_clock::time_point deadline_;
  };

  const ServerOptions options_;
  ConnectionLimiter limiter_;
  std::atomic<bool> stopping_{false};

 public:
  // Connections still waiting for their request are dropped, so stopping does not wait for
  // their deadline.
  void BeginStop() { stopping_.store(true); }
  // httplib listens with a backlog of 5: under a connection flood the kernel then drops
  // handshakes and real clients wait for SYN retransmissions (1 s, 3 s, ...). Listening again
  // on the bound socket only sets a longer queue (the kernel caps it at somaxconn).
  bool WidenBacklog(int backlog) { return ::listen(svr_sock_, backlog) == 0; }
};

struct Server::Impl {
  Impl(Backend& b, ServerOptions o) : backend(b), options(o), http(o) {}

  void Install();
  void Items(const httplib::Request& req, httplib::Response& res);
  void Item(const httplib::Request& req, httplib::Response& res);
  void PostReview(const httplib::Request& req, httplib::Response& res);
  void ApiItems(const httplib::Request& req, httplib::Response& res);
  void ApiItem(const httplib::Request& req, httplib::Response& res);
  void ApiRing(const httplib::Request& req, httplib::Response& res);
  // Reads libsodium's two ES modules from options.sodium_package; false when they are not there.
  bool LoadSodium();

  Backend& backend;
  std::string sodium_wrappers_js, sodium_js;  // empty: no browser signing
  const ServerOptions options;
  GuardedHttpServer http;
  bool bound = false;
};

void Server::Impl::Install() {
  http.set_socket_options(ReuseAddressOnly);  // not httplib's default, which shares the port
  http.set_payload_max_length(options.max_body_bytes);
  http.set_read_timeout(options.io_timeout_seconds, 0);
  http.set_write_timeout(options.io_timeout_seconds, 0);
  http.set_keep_alive_timeout(options.io_timeout_seconds);
  // One request per connection, answered with "Connection: close". httplib 0.11.4 answers a
  // request it cannot parse (e.g. a multipart body past 1024 parts) with 400 but, on a kept-alive
  // connection, reads the rest of that body as the next request: a request hidden inside a form
  // would run. Closing after every answer leaves nothing to smuggle into.
  http.set_keep_alive_max_count(1);
  // A thread per admitted connection (the guard caps them at max_connections), so an admitted
  // one never waits in the queue behind stalled ones, and spare threads that answer the
  // connections beyond the cap with 503 at once.
  http.new_task_queue = [threads = options.max_connections + kSpareThreads] {
    return new httplib::ThreadPool(threads);
  };
  // Defence in depth behind the escaping: no script runs and nothing loads from elsewhere even
  // if some text slipped through unescaped.
  // Scripts: only this server's own modules (the browser-signing form), never inline ones, so
  // an unescaped review text still could not run anything; 'wasm-unsafe-eval' lets libsodium
  // compile its WebAssembly, and connect-src 'self' lets the form fetch the item's ring.
  http.set_default_headers({
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'; "
       "style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; "
       "frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
  });

  http.Get("/", [this](const auto& req, auto& res) { Items(req, res); });
  http.Get(R"(/item/([\s\S]+))", [this](const auto& req, auto& res) { Item(req, res); });
  http.Post(R"(/item/([\s\S]+)/review)",
            [this](const auto& req, auto& res) { PostReview(req, res); });
  http.Get("/api/items", [this](const auto& req, auto& res) { ApiItems(req, res); });
  http.Get(R"(/api/item/([0-9a-f]{64})/ring)",
           [this](const auto& req, auto& res) { ApiRing(req, res); });
  http.Get(R"(/api/item/([\s\S]+))", [this](const auto& req, auto& res) { ApiItem(req, res); });
  if (LoadSodium()) {
    http.Get("/static/review_sign.mjs", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(ReviewSignScript()), kJs);
    });
    http.Get("/static/sign_page.mjs", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(SignPageScript()), kJs);
    });
    http.Get("/static/libsodium-wrappers.mjs",
             [this](const httplib::Request&, httplib::Response& res) {
               res.set_content(sodium_wrappers_js, kJs);
             });
    // The wrappers import "libsodium-sumo" by name; the page's import map points it here.
    http.Get("/static/libsodium-sumo.mjs", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(sodium_js, kJs);
    });
  }
  http.Get("/style.css", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(std::string(kStyleSheet), "text/css; charset=utf-8");
  });

  // Statuses httplib sets itself (404 for an unknown path, 413 for a body over the limit, 400
  // for a malformed request) arrive here with an empty body; so do handlers' errors, which
  // already have one.
  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string detail;
    switch (res.status) {
      case 404:
        detail = "There is no page at " + req.path + ".";
        break;
      case 413:
        detail = "The request is larger than the " + std::to_string(options.max_body_bytes) +
                 " bytes this server accepts.";
        break;
      default:
        detail = "The server could not handle this request.";
    }
    if (IsApi(req)) {
      res.set_content(Dump({{"error", {{"code", res.status}, {"message", detail}}}}), kJson);
    } else {
      res.set_content(RenderErrorPage(res.status, detail), kHtml);
    }
  });
  http.set_exception_handler(
      [](const httplib::Request& req, httplib::Response& res, std::exception_ptr error) {
        std::string what = "unknown exception";
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        SendError(req, res, InternalError("exception: " + what));
      });
  http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
    spdlog::info("{} {} -> {}", req.method, Printable(req.path), res.status);
  });
}

void Server::Impl::Items(const httplib::Request& req, httplib::Response& res) {
  Result<std::vector<ItemSummary>> items = backend.ListItems();
  if (!items.ok()) return SendError(req, res, items.status());
  Result<PageOf> page = Paginate(req, items->size(), options.page_size);
  if (!page.ok()) return SendError(req, res, page.status());
  std::vector<ItemSummary> shown(items->begin() + page->begin, items->begin() + page->end);
  res.set_content(RenderItemsPage(shown, RenderPager("/", page->page, page->pages)), kHtml);
}

void Server::Impl::Item(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1];
  if (Status s = CheckItemId(id); !s.ok()) return SendError(req, res, s);
  Result<ItemDetail> item = backend.GetItem(id);
  if (!item.ok()) return SendError(req, res, item.status());
  Result<PageOf> page = Paginate(req, item->reviews.size(), options.page_size);
  if (!page.ok()) return SendError(req, res, page.status(), id);
  Keep(item->reviews, *page);
  res.set_content(
      RenderItemPage(*item, RenderPager(ItemLink(id), page->page, page->pages), !sodium_js.empty()),
      kHtml);
}

void Server::Impl::PostReview(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1];
  if (Status s = CheckItemId(id); !s.ok()) return SendError(req, res, s);
  Result<FormFields> fields = CollectFormFields(req);
  if (!fields.ok()) return SendError(req, res, fields.status(), id);
  Result<ReviewForm> form = ParseReviewForm(*fields);
  if (!form.ok()) return SendError(req, res, form.status(), id);
  Result<std::string> message = backend.PostSignedReview(id, form->signed_review);
  if (!message.ok()) {
    spdlog::info("review of {} refused: {}", Printable(id), message.status().ToString());
    return SendError(req, res, message.status(), id);
  }
  res.set_content(RenderPostedPage(id, *message), kHtml);
}

void Server::Impl::ApiItems(const httplib::Request& req, httplib::Response& res) {
  Result<std::vector<ItemSummary>> items = backend.ListItems();
  if (!items.ok()) return SendError(req, res, items.status());
  Result<PageOf> page = Paginate(req, items->size(), options.page_size);
  if (!page.ok()) return SendError(req, res, page.status());
  std::vector<ItemSummary> shown(items->begin() + page->begin, items->begin() + page->end);
  nlohmann::json j = ItemsToJson(shown);
  j["page"] = page->page;
  j["pages"] = page->pages;
  res.set_content(Dump(j), kJson);
}

void Server::Impl::ApiItem(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches[1];
  if (Status s = CheckItemId(id); !s.ok()) return SendError(req, res, s);
  Result<ItemDetail> item = backend.GetItem(id);
  if (!item.ok()) return SendError(req, res, item.status());
  Result<PageOf> page = Paginate(req, item->reviews.size(), options.page_size);
  if (!page.ok()) return SendError(req, res, page.status());
  Keep(item->reviews, *page);
  nlohmann::json j = ItemDetailToJson(*item);
  j["page"] = page->page;
  j["pages"] = page->pages;
  res.set_content(Dump(j), kJson);
}

void Server::Impl::ApiRing(const httplib::Request& req, httplib::Response& res) {
  Result<RingView> ring = backend.GetRing(std::string(req.matches[1]));
  if (!ring.ok()) return SendError(req, res, ring.status());
  res.set_content(
      Dump(nlohmann::json{{"item", ring->item}, {"epoch", ring->epoch}, {"ring", ring->members}}),
      kJson);
}

bool Server::Impl::LoadSodium() {
  if (options.sodium_package.empty()) return false;
  const std::string root = options.sodium_package;
  auto read = [](const std::string& path, std::string& out) {
    Result<std::string> text = ReadFile(path);
    if (!text.ok()) return false;
    out = std::move(*text);
    return true;
  };
  const bool ok =
      read(root + "/dist/modules-sumo-esm/libsodium-wrappers.mjs", sodium_wrappers_js) &&
      (read(root + "/node_modules/libsodium-sumo/dist/modules-sumo-esm/libsodium-sumo.mjs",
            sodium_js) ||
       read(root + "/../libsodium-sumo/dist/modules-sumo-esm/libsodium-sumo.mjs", sodium_js));
  // The wrappers import their dependency by package name, which a browser resolves only with
  // an import map (an inline script, which the Content-Security-Policy forbids): point it at
  // the copy served here instead.
  constexpr std::string_view kBareImport = "from\"libsodium-sumo\"";
  const size_t at = ok ? sodium_wrappers_js.find(kBareImport) : std::string::npos;
  if (at != std::string::npos) {
    sodium_wrappers_js.replace(at, kBareImport.size(), "from\"/static/libsodium-sumo.mjs\"");
  }
  if (!ok || at == std::string::npos) {
    sodium_wrappers_js.clear();
    sodium_js.clear();
    spdlog::warn(
        "libsodium-wrappers-sumo 0.8 not found under {} (scripts/setup installs it): "
        "the page offers no signing in the browser",
        root);
    return false;
  }
  return true;
}

Server::Server(Backend& backend, ServerOptions options)
    : impl_(std::make_unique<Impl>(backend, options)) {
  impl_->Install();
}

Server::~Server() = default;

Result<int> Server::Bind(const std::string& host, int port) {
  int bound_port = port;
  if (port == 0) {
    bound_port = impl_->http.bind_to_any_port(host);
  } else if (!impl_->http.bind_to_port(host, port)) {
    bound_port = -1;
  }
  if (bound_port <= 0) {
    return UnavailableError("cannot listen on " + host + ":" + std::to_string(port) +
                            " (address in use or not local?)");
  }
  if (!impl_->http.WidenBacklog(kListenBacklog)) {
    return UnavailableError("cannot set the listen backlog on " + host + ":" +
                            std::to_string(bound_port));
  }
  impl_->bound = true;
  return bound_port;
}

Status Server::Serve(const std::atomic<bool>& stop) {
  if (!impl_->bound) return FailedPreconditionError("Server::Serve called before Bind");
  std::atomic<bool> listener_done{false};
  std::thread listener([&] {
    impl_->http.listen_after_bind();
    listener_done.store(true);
  });
  // httplib's stop() is a no-op until the accept loop runs, so wait for it to start before
  // watching the flag: otherwise an early stop would leave the listener running forever.
  while (!impl_->http.is_running() && !listener_done.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  while (!stop.load() && !listener_done.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const bool failed = listener_done.load() && !stop.load();
  impl_->http.BeginStop();
  impl_->http.stop();
  listener.join();
  if (failed) return UnavailableError("the HTTP listener stopped on its own");
  spdlog::info("stopped");
  return Status::Ok();
}

}  // namespace tessera::reviews::web
