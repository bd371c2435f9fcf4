// The server in-process on a loopback port, over an in-memory Backend double: routes, status
// codes, limits and escaping as a client sees them. The ledger-backed binary is tested end to
// end in Chromium by browser_test.sh.
#include "reviews/web/server.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/file.h"
#include "reviews/web/form.h"
#include "reviews/web/html.h"

namespace tessera::reviews::web {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Items in memory. A "signed review" here is {"key": K, "rating": R, "text": T}: accepted when K
// is one of `keys_`, a key may review an item once, and the "forged" key never verifies.
// Records every call.
class FakeBackend : public Backend {
 public:
  FakeBackend() {
    AddItem("cafe", "Cafe Central");
    AddItem("shops/caf\xC3\xA9 #1?", "Odd id");
  }

  void AddItem(const std::string& id, const std::string& name) {
    std::lock_guard lock(mu_);
    ItemDetail item;
    item.summary.id = id;
    item.summary.name = name;
    item.summary.epoch = 3;
    item.summary.window = Window::kOpen;
    item.summary.verified = true;
    items_[id] = item;
  }

  Result<std::vector<ItemSummary>> ListItems() override {
    std::lock_guard lock(mu_);
    ++list_calls_;
    if (down_) return UnavailableError("no politician answered");
    std::vector<ItemSummary> out;
    for (const auto& [id, item] : items_) out.push_back(item.summary);
    return out;
  }

  Result<ItemDetail> GetItem(std::string_view id) override {
    std::lock_guard lock(mu_);
    if (internal_failure_) return InternalError("cannot open /var/lib/secret/state");
    auto it = items_.find(std::string(id));
    if (it == items_.end()) return NotFoundError("no item '" + std::string(id) + "'");
    return it->second;
  }

  Result<RingView> GetRing(std::string_view item_id) override {
    std::lock_guard lock(mu_);
    if (!items_.contains(std::string(item_id))) {
      return NotFoundError("no item '" + std::string(item_id) + "'");
    }
    return RingView{std::string(item_id), 3, {std::string(64, 'a'), std::string(64, 'b')}};
  }

  Result<std::string> PostSignedReview(std::string_view item_id,
                                       std::string_view signed_review) override {
    std::lock_guard lock(mu_);
    ++post_calls_;
    received_.emplace_back(signed_review);
    auto it = items_.find(std::string(item_id));
    if (it == items_.end()) return NotFoundError("no item '" + std::string(item_id) + "'");
    const auto j = nlohmann::json::parse(signed_review, nullptr, false);
    if (j.is_discarded() || !j.contains("key")) {
      return InvalidArgumentError("signed review: not a JSON object");
    }
    const std::string key = j["key"];
    const int rating = j.value("rating", 3);
    const std::string text = j.value("text", "");
    if (key == "forged") return InvalidArgumentError("the ring signature does not verify");
    if (!keys_.contains(key)) return InvalidArgumentError("signed review: unknown ring");
    if (!used_.emplace(std::string(item_id), key).second) {
      return AlreadyExistsError("this key already reviewed the item");
    }
    ItemDetail& item = it->second;
    item.reviews.push_back({rating, text, "tag" + key, 10});
    double sum = 0;
    for (const ReviewView& r : item.reviews) sum += r.rating;
    item.summary.review_count = item.reviews.size();
    item.summary.mean_rating = sum / item.reviews.size();
    return std::string("review committed at height 10");
  }

  void set_internal_failure(bool failing) {
    std::lock_guard lock(mu_);
    internal_failure_ = failing;
  }
  void set_down(bool down) {
    std::lock_guard lock(mu_);
    down_ = down;
  }
  int post_calls() {
    std::lock_guard lock(mu_);
    return post_calls_;
  }
  int list_calls() {
    std::lock_guard lock(mu_);
    return list_calls_;
  }
  std::vector<std::string> received() {
    std::lock_guard lock(mu_);
    return received_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, ItemDetail> items_;
  const std::set<std::string> keys_ = {"key-a", "key-b", "key-c"};
  std::set<std::pair<std::string, std::string>> used_;
  bool down_ = false;
  bool internal_failure_ = false;
  int post_calls_ = 0;
  int list_calls_ = 0;
  std::vector<std::string> received_;
};

// Socket helpers for the tests that play raw clients.

// A connection from `source` (a 127.x.y.z address: Linux routes all of 127/8 to loopback, so
// one test can play several client addresses) to the server on `port`; -1 on failure.
int ConnectFrom(const char* source, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &local.sin_addr);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Everything the server sends on `fd` until it closes (or `seconds` pass; `closed`, if given,
// says which).
std::string ReadUntilClosed(int fd, int seconds, bool* closed = nullptr) {
  timeval wait{.tv_sec = seconds, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  std::string answer;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0) answer.append(buffer, n);
  if (closed != nullptr) *closed = n == 0;
  return answer;
}

bool SendAll(int fd, std::string_view data) {
  return ::send(fd, data.data(), data.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
}

// A server on a free loopback port, serving on its own thread until destroyed.
class ServingServer {
 public:
  ServingServer(Backend& backend, const ServerOptions& options) : server_(backend, options) {
    auto port = server_.Bind("127.0.0.1", 0);
    EXPECT_TRUE(port.ok()) << port.status();
    port_ = port.ok() ? *port : 0;
    serving_ = std::thread([this] { serve_status_ = server_.Serve(stop_); });
  }
  ~ServingServer() {
    stop_.store(true);
    serving_.join();
    EXPECT_TRUE(serve_status_.ok()) << serve_status_;
  }
  int port() const { return port_; }

 private:
  Server server_;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  Status serve_status_;
  std::thread serving_;
};

class ReviewsWebServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.max_body_bytes = 32 * 1024;
    server_ = std::make_unique<ServingServer>(backend_, options);
    port_ = server_->port();
  }

  void TearDown() override { server_.reset(); }

  httplib::Client Client() {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(30, 0);
    return client;
  }

  httplib::Result PostForm(const std::string& item, const httplib::MultipartFormDataItems& form) {
    return Client().Post("/item/" + EncodePathSegment(item) + "/review", form);
  }

  static std::string Signed(const std::string& key, int rating, const std::string& text) {
    return nlohmann::json{{"key", key}, {"rating", rating}, {"text", text}}.dump();
  }
  static httplib::MultipartFormDataItems Form(const std::string& signed_review) {
    return {{"signed_review", signed_review, "review.json", "application/json"},
            {"signed_json", "", "", ""}};
  }
  static httplib::MultipartFormDataItems Form(const std::string& key, int rating,
                                              const std::string& text) {
    return Form(Signed(key, rating, text));
  }

  FakeBackend backend_;
  std::unique_ptr<ServingServer> server_;
  int port_ = 0;
};

TEST_F(ReviewsWebServerTest, ListsItemsWithSecurityHeaders) {
  auto res = Client().Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_THAT(res->get_header_value("Content-Security-Policy"), HasSubstr("default-src 'none'"));
  EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_THAT(res->body, HasSubstr("Cafe Central"));
  EXPECT_THAT(res->body, HasSubstr("href=\"/item/shops%2Fcaf%C3%A9%20%231%3F\""));

  auto css = Client().Get("/style.css");
  ASSERT_TRUE(css);
  EXPECT_EQ(css->status, 200);
  EXPECT_THAT(css->get_header_value("Content-Type"), HasSubstr("text/css"));
}

// Signing in the browser (issue 16): with the npm package present, the item page offers a form
// whose module script signs in the page; the key file input has no name (no form sends it) and
// the scripts are this server's own (no inline script is allowed). Without the package the
// page has no such form and serves no scripts.
TEST(ReviewsWebBrowserSigning, ServesTheScriptsAndTheRingOnlyWithThePackage) {
  const std::filesystem::path pkg =
      std::filesystem::temp_directory_path() / ("reviews-web-sodium-" + std::to_string(::getpid()));
  std::filesystem::create_directories(pkg / "dist/modules-sumo-esm");
  std::filesystem::create_directories(pkg / "node_modules/libsodium-sumo/dist/modules-sumo-esm");
  ASSERT_TRUE(WriteFileAtomically(pkg / "dist/modules-sumo-esm/libsodium-wrappers.mjs",
                                  "import e from\"libsodium-sumo\";export default e;")
                  .ok());
  ASSERT_TRUE(WriteFileAtomically(
                  pkg / "node_modules/libsodium-sumo/dist/modules-sumo-esm/libsodium-sumo.mjs",
                  "export default {};")
                  .ok());
  FakeBackend backend;
  const std::string id(64, 'c');
  backend.AddItem(id, "Hex cafe");
  for (bool with_package : {true, false}) {
    ServerOptions options;
    if (with_package) options.sodium_package = pkg.string();
    ServingServer server(backend, options);
    httplib::Client client("127.0.0.1", server.port());
    auto page = client.Get("/item/" + id);
    ASSERT_TRUE(page);
    auto script = client.Get("/static/review_sign.mjs");
    ASSERT_TRUE(script);
    auto wrappers = client.Get("/static/libsodium-wrappers.mjs");
    ASSERT_TRUE(wrappers);
    if (!with_package) {
      EXPECT_THAT(page->body, Not(HasSubstr("browser-sign")));
      EXPECT_EQ(script->status, 404);
      continue;
    }
    EXPECT_THAT(page->body, HasSubstr("<form class=\"box\" id=\"browser-sign\" "
                                      "data-ring-url=\"/api/item/" +
                                      id + "/ring\">"));
    EXPECT_THAT(page->body, HasSubstr("<input id=\"browser-key\" type=\"file\""));
    EXPECT_THAT(page->body, Not(HasSubstr("name=\"browser-key\"")));
    EXPECT_THAT(page->body, HasSubstr("<script type=\"module\" src=\"/static/sign_page.mjs\">"));
    const std::string csp = page->get_header_value("Content-Security-Policy");
    EXPECT_THAT(csp, HasSubstr("script-src 'self' 'wasm-unsafe-eval'"));
    EXPECT_THAT(csp, Not(HasSubstr("unsafe-inline")));
    EXPECT_EQ(script->status, 200);
    EXPECT_THAT(script->get_header_value("Content-Type"), HasSubstr("text/javascript"));
    EXPECT_THAT(script->body, HasSubstr("export function signReview"));
    EXPECT_EQ(wrappers->body, "import e from\"/static/libsodium-sumo.mjs\";export default e;");
    auto ring = client.Get("/api/item/" + id + "/ring");
    ASSERT_TRUE(ring);
    EXPECT_EQ(ring->status, 200);
    auto j = nlohmann::json::parse(ring->body);
    EXPECT_EQ(j["epoch"], 3);
    EXPECT_EQ(j["ring"].size(), 2u);
    auto unknown = client.Get("/api/item/" + std::string(64, 'd') + "/ring");
    ASSERT_TRUE(unknown);
    EXPECT_EQ(unknown->status, 404);
  }
  std::filesystem::remove_all(pkg);
}

TEST_F(ReviewsWebServerTest, ShowsAnItemWhoseIdNeedsEncoding) {
  auto res = Client().Get("/item/shops%2Fcaf%C3%A9%20%231%3F");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("Odd id"));
  EXPECT_THAT(res->body, HasSubstr("action=\"/item/shops%2Fcaf%C3%A9%20%231%3F/review\""));
}

TEST_F(ReviewsWebServerTest, UnknownPagesAndItemsAre404Pages) {
  auto item = Client().Get("/item/nope%3Cb%3E");
  ASSERT_TRUE(item);
  EXPECT_EQ(item->status, 404);
  EXPECT_THAT(item->body, HasSubstr("no item &#39;nope&lt;b&gt;&#39;"));

  auto page = Client().Get("/no/such/page%3Cscript%3E");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 404);
  EXPECT_THAT(page->body, HasSubstr("There is no page at /no/such/page&lt;script&gt;"));
  EXPECT_THAT(page->body, Not(HasSubstr("<script")));

  auto control = Client().Get("/item/a%0Ab");
  ASSERT_TRUE(control);
  EXPECT_EQ(control->status, 400);
  EXPECT_THAT(control->body, HasSubstr("control character"));
}

TEST_F(ReviewsWebServerTest, PostedReviewAppearsEscaped) {
  const std::string text = "<script>document.title='pwned'</script> 5/5 & \"fine\"";
  auto res = PostForm("cafe", Form("key-a", 5, text));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  EXPECT_THAT(res->body, HasSubstr("review committed at height 10"));

  auto page = Client().Get("/item/cafe");
  ASSERT_TRUE(page);
  EXPECT_THAT(page->body, HasSubstr("&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt; "
                                    "5/5 &amp; &quot;fine&quot;"));
  EXPECT_THAT(page->body, Not(HasSubstr("<script")));

  auto api = Client().Get("/api/item/cafe");
  ASSERT_TRUE(api);
  EXPECT_EQ(api->status, 200);
  const auto j = nlohmann::json::parse(api->body);
  EXPECT_EQ(j["review_count"], 1);
  EXPECT_EQ(j["reviews"][0]["text"], text);
}

TEST_F(ReviewsWebServerTest, AcceptsAUrlEncodedFormWithAPastedSignedReview) {
  const std::string body =
      "signed_json=" + httplib::detail::encode_query_param(Signed("key-b", 3, "ok\nfine"));
  auto res = Client().Post("/item/cafe/review", body, "application/x-www-form-urlencoded");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  auto item = backend_.GetItem("cafe");
  ASSERT_TRUE(item.ok());
  ASSERT_EQ(item->reviews.size(), 1u);
  EXPECT_EQ(item->reviews[0].rating, 3);
  EXPECT_EQ(item->reviews[0].text, "ok\nfine");
}

// The page takes no key: a form carrying a key file is refused before the backend, whatever
// else it holds, and the refusal says what to do instead.
TEST_F(ReviewsWebServerTest, KeyFilesAreRefused) {
  auto res = PostForm("cafe", {{"key_file", "{\"review_secret\": \"ab\"}", "k.json", ""},
                               {"signed_review", Signed("key-a", 4, "x"), "r.json", ""}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_THAT(res->body, HasSubstr("does not take review keys"));
  EXPECT_THAT(res->body, HasSubstr("sign-review"));
  EXPECT_EQ(backend_.post_calls(), 0);
}

TEST_F(ReviewsWebServerTest, BadFormsAreRefusedBeforeTheBackend) {
  struct Case {
    httplib::MultipartFormDataItems form;
    std::string want;
  };
  const std::vector<Case> cases = {
      {Form(""), "upload the file"},
      {{{"signed_review", "a", "r.json", ""}, {"signed_json", "b", "", ""}}, "not both"},
      {{{"signed_json", "a", "", ""}, {"signed_json", "b", "", ""}}, "sent twice"},
  };
  for (const Case& c : cases) {
    auto res = PostForm("cafe", c.form);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << c.want;
    EXPECT_THAT(res->body, HasSubstr(c.want));
    EXPECT_THAT(res->body, HasSubstr("Back to the item"));
  }
  auto json = Client().Post("/item/cafe/review", "{\"rating\": 4}", "application/json");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 400);
  EXPECT_THAT(json->body, HasSubstr("multipart/form-data"));
  EXPECT_EQ(backend_.post_calls(), 0);
}

TEST_F(ReviewsWebServerTest, HugeBodiesAreRefusedWith413) {
  auto res = PostForm("cafe", Form("key-a", 4, std::string(64 * 1024, 'x')));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_THAT(res->body, HasSubstr("larger than the 32768 bytes"));
  EXPECT_EQ(backend_.post_calls(), 0);
}

TEST_F(ReviewsWebServerTest, BackendRefusalsKeepTheirMeaning) {
  auto first = PostForm("cafe", Form("key-c", 4, ""));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200);
  auto again = PostForm("cafe", Form("key-c", 1, "changed my mind"));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 409);
  EXPECT_THAT(again->body, HasSubstr("already reviewed"));
  auto forged = PostForm("cafe", Form("forged", 1, ""));
  ASSERT_TRUE(forged);
  EXPECT_EQ(forged->status, 400);
  EXPECT_THAT(forged->body, HasSubstr("does not verify"));
  auto bad = PostForm("cafe", Form("{not json"));
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  auto unknown = PostForm("nope", Form("key-a", 1, ""));
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404);
  EXPECT_EQ(backend_.post_calls(), 5);

  backend_.set_internal_failure(true);
  auto internal = Client().Get("/item/cafe");
  ASSERT_TRUE(internal);
  EXPECT_EQ(internal->status, 500);
  EXPECT_THAT(internal->body, HasSubstr("details in its log"));
  EXPECT_THAT(internal->body, Not(HasSubstr("/var/lib/secret")));
  backend_.set_internal_failure(false);

  backend_.set_down(true);
  auto down = Client().Get("/");
  ASSERT_TRUE(down);
  EXPECT_EQ(down->status, 503);
  EXPECT_THAT(down->body, HasSubstr("no politician answered"));
}

TEST_F(ReviewsWebServerTest, JsonApi) {
  auto items = Client().Get("/api/items");
  ASSERT_TRUE(items);
  EXPECT_EQ(items->status, 200);
  EXPECT_EQ(items->get_header_value("Content-Type"), "application/json");
  const auto j = nlohmann::json::parse(items->body);
  ASSERT_EQ(j["items"].size(), 2u);
  EXPECT_EQ(j["items"][0]["id"], "cafe");

  auto missing = Client().Get("/api/item/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(nlohmann::json::parse(missing->body)["error"]["code"], "NOT_FOUND");

  auto no_route = Client().Get("/api/nothing");
  ASSERT_TRUE(no_route);
  EXPECT_EQ(no_route->status, 404);
  EXPECT_EQ(nlohmann::json::parse(no_route->body)["error"]["code"], 404);
}

TEST_F(ReviewsWebServerTest, ConcurrentPostsAreEachAnswered) {
  constexpr int kThreads = 8;
  for (int i = 0; i < kThreads; ++i) backend_.AddItem("item" + std::to_string(i), "Item");
  std::vector<int> statuses(kThreads, 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([this, i, &statuses] {
      // Three keys over eight items: every (item, key) pair is new, so every post is accepted.
      auto res = PostForm("item" + std::to_string(i), Form("key-a", 3, "ok"));
      statuses[i] = res ? res->status : -1;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_EQ(statuses[i], 200) << "post " << i;
  EXPECT_EQ(backend_.post_calls(), kThreads);
}

TEST_F(ReviewsWebServerTest, OtherMethodsAreRefused) {
  auto del = Client().Delete("/item/cafe");
  ASSERT_TRUE(del);
  EXPECT_GE(del->status, 400);
  auto put = Client().Put("/item/cafe/review", "rating=1", "application/x-www-form-urlencoded");
  ASSERT_TRUE(put);
  EXPECT_GE(put->status, 400);
  EXPECT_EQ(backend_.post_calls(), 0);
}

TEST_F(ReviewsWebServerTest, ListsArePaginated) {
  for (int i = 0; i < 120; ++i) backend_.AddItem("p" + std::to_string(1000 + i), "Paged");
  auto first = Client().Get("/api/items");
  ASSERT_TRUE(first);
  auto j = nlohmann::json::parse(first->body);
  EXPECT_EQ(j["items"].size(), 50u);  // ServerOptions::page_size
  EXPECT_EQ(j["page"], 1);
  EXPECT_EQ(j["pages"], 3);  // 122 items
  auto last = Client().Get("/api/items?page=3");
  ASSERT_TRUE(last);
  EXPECT_EQ(nlohmann::json::parse(last->body)["items"].size(), 22u);
  auto html = Client().Get("/?page=2");
  ASSERT_TRUE(html);
  EXPECT_THAT(html->body, HasSubstr("page 2 of 3"));
  EXPECT_THAT(html->body, HasSubstr("href=\"/?page=3\""));
  for (const char* bad : {"/?page=0", "/?page=4", "/?page=x", "/api/items?page=-1"}) {
    auto res = Client().Get(bad);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << bad;
    EXPECT_THAT(res->body, HasSubstr("page must be")) << bad;
  }
}

// A client that sends half a request and stalls is disconnected after the I/O timeout instead
// of holding a server thread forever. The socket waits far longer than the timeout, so only a
// server that never lets go fails this test.
TEST(ReviewsWebServerSetupTest, StalledClientsAreDisconnected) {
  FakeBackend backend;
  ServerOptions options;
  options.io_timeout_seconds = 1;
  options.request_timeout_seconds = 1;
  ServingServer server(backend, options);

  const int fd = ConnectFrom("127.0.0.1", server.port());
  ASSERT_GE(fd, 0);
  const std::string partial = "POST /item/cafe/review HTTP/1.1\r\nHost: x\r\nContent-Le";
  ASSERT_TRUE(SendAll(fd, partial));
  bool closed = false;
  ReadUntilClosed(fd, 60, &closed);
  EXPECT_TRUE(closed) << "the server did not close the stalled connection";
  ::close(fd);
  EXPECT_EQ(backend.post_calls(), 0);
}

// Request smuggling (issue 16): past 1024 multipart parts httplib 0.11.4 answers 400, and on a
// kept-alive connection read the rest of the body as the next request, so a request hidden at
// the end of a form ran. The server closes every connection after one answer: exactly one
// response comes back and the hidden request never reaches the backend.
TEST(ReviewsWebServerSetupTest, AHiddenRequestBehindTooManyPartsNeverRuns) {
  FakeBackend backend;
  ServingServer server(backend,
                       ServerOptions{});  // the default body limit, which the request stays under

  const std::string boundary = "xYzBoundary";
  std::string body;
  for (int i = 0; i < 1100; ++i) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"p" + std::to_string(i) +
            "\"\r\n\r\nv\r\n";
  }
  const std::string hidden = "GET /api/items HTTP/1.1\r\nHost: x\r\n\r\n";
  body += hidden;
  const std::string request =
      "POST /item/cafe/review HTTP/1.1\r\nHost: x\r\n"
      "Content-Type: multipart/form-data; boundary=" +
      boundary + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_LT(request.size(), ServerOptions{}.max_body_bytes);  // the parser refuses, not 413
  const int fd = ConnectFrom("127.0.0.1", server.port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(SendAll(fd, request));
  bool closed = false;
  const std::string answer = ReadUntilClosed(fd, 30, &closed);
  ::close(fd);
  EXPECT_TRUE(closed) << "the connection was not closed after the answer";
  size_t responses = 0;
  for (size_t at = answer.find("HTTP/1.1 "); at != std::string::npos;
       at = answer.find("HTTP/1.1 ", at + 1)) {
    ++responses;
  }
  EXPECT_EQ(responses, 1u) << answer.substr(0, 2000);
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 400"));
  EXPECT_EQ(backend.list_calls(), 0) << "the hidden GET /api/items ran";
  EXPECT_EQ(backend.post_calls(), 0);
}

// Slow clients (issue 16): two dozen connections that send half a request and stall do not
// keep a real request waiting until they time out (here 60 s, beyond the client's 20 s).
TEST(ReviewsWebServerSetupTest, StalledClientsDoNotStarveOthers) {
  FakeBackend backend;
  ServerOptions options;
  options.io_timeout_seconds = 60;
  ServingServer server(backend, options);
  std::vector<int> stalled;
  for (int i = 0; i < 24; ++i) {
    const int fd = ConnectFrom("127.0.0.1", server.port());
    ASSERT_GE(fd, 0);
    const std::string partial = "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    ASSERT_TRUE(SendAll(fd, partial));
    stalled.push_back(fd);
  }
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(20, 0);
  auto res = client.Get("/api/items");
  ASSERT_TRUE(res) << "a real request waited behind the stalled connections";
  EXPECT_EQ(res->status, 200);
  for (int fd : stalled) ::close(fd);
}

// Issue 16: 300 half-open connections (half a request, then nothing) from one address do not
// delay real requests from another: past the per-address cap the flood is answered 503 and
// closed at once, and the connections it keeps hold threads of their own, not the real ones'.
// The stalled connections would be held 30 s, the real requests wait at most 20 s, so only a
// server that queues real requests behind the flood fails. Broken on purpose once (the caps
// disabled): no 503 came back, and the 5 real requests took 6.2 s instead of 0.004 s.
TEST(ReviewsWebServerSetupTest, HalfOpenFloodDoesNotDelayRealRequests) {
  FakeBackend backend;
  ServerOptions options;
  options.io_timeout_seconds = 30;
  options.request_timeout_seconds = 30;
  ServingServer server(backend, options);

  std::vector<int> flood;
  for (int i = 0; i < 300; ++i) {
    const int fd = ConnectFrom("127.0.0.3", server.port());
    ASSERT_GE(fd, 0) << "connection " << i;
    ASSERT_TRUE(SendAll(fd, "GET /api/items HTTP/1.1\r\nHost: x\r\nX-Slow: "));
    flood.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < 5; ++r) {
    const int fd = ConnectFrom("127.0.0.2", server.port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, "GET /api/items HTTP/1.1\r\nHost: x\r\n\r\n"));
    const std::string answer = ReadUntilClosed(fd, 20);
    ::close(fd);
    EXPECT_THAT(answer, HasSubstr("HTTP/1.1 200")) << "real request " << r << " waited";
  }
  std::cout << "5 real requests behind 300 half-open connections: "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
            << " s\n";
  // The flood beyond the per-address cap was refused with a clear answer and closed at once
  // (which 32 connections were admitted depends on the order the server took them; the
  // kernel may still hold some in httplib's accept backlog of 5, so wait up to 25 s, within the
  // 30 s the admitted ones are held).
  const size_t expected = flood.size() - options.max_connections_per_address;
  size_t refused = 0;
  std::set<int> waiting(flood.begin(), flood.end());
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(25);
  while (refused < expected && std::chrono::steady_clock::now() < give_up) {
    std::vector<pollfd> polls;
    for (int fd : waiting) polls.push_back({fd, POLLIN, 0});
    if (::poll(polls.data(), polls.size(), 200) <= 0) continue;
    for (const pollfd& p : polls) {
      if ((p.revents & POLLIN) == 0) continue;
      char buffer[256] = {};
      const ssize_t n = ::recv(p.fd, buffer, sizeof(buffer) - 1, MSG_DONTWAIT);
      refused += n > 0 && std::string_view(buffer, n).starts_with("HTTP/1.1 503");
      waiting.erase(p.fd);
    }
  }
  EXPECT_EQ(refused, expected);
  for (int fd : flood) ::close(fd);
  EXPECT_EQ(backend.list_calls(), 5);
}

// A slowloris client sends its request a byte at a time, each byte well within the I/O timeout:
// the request deadline counts from the connection, not from the last byte, so it is cut off
// with 408 (broken on purpose once: without the request deadline, only the per-read I/O
// timeout, the 60 s of trickling below ran to the end without an answer).
TEST(ReviewsWebServerSetupTest, TrickledRequestsHitTheRequestDeadline) {
  FakeBackend backend;
  ServerOptions options;
  options.io_timeout_seconds = 30;
  options.request_timeout_seconds = 2;
  ServingServer server(backend, options);

  const int fd = ConnectFrom("127.0.0.1", server.port());
  ASSERT_GE(fd, 0);
  const std::string request =
      "GET /api/items HTTP/1.1\r\nHost: x\r\nX-Padding: " + std::string(600, 'a') + "\r\n\r\n";
  bool closed = false;
  for (size_t i = 0; i < request.size() && !closed; ++i) {  // up to 60 s at 100 ms a byte
    closed = !SendAll(fd, request.substr(i, 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    char c;
    const ssize_t n = ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    closed = closed || n >= 0;  // an answer or the close arrived
  }
  EXPECT_TRUE(closed) << "the trickled request was never cut off";
  EXPECT_THAT(ReadUntilClosed(fd, 5), HasSubstr("HTTP/1.1 408"));
  ::close(fd);
  EXPECT_EQ(backend.list_calls(), 0);
}

// The overall cap: with every place taken (by stalled clients from several addresses), the
// next connection is refused with 503 at once rather than queued.
TEST(ReviewsWebServerSetupTest, ConnectionsBeyondTheCapAreRefused) {
  FakeBackend backend;
  ServerOptions options;
  options.max_connections = 6;
  options.max_connections_per_address = 3;
  options.request_timeout_seconds = 30;
  ServingServer server(backend, options);
  std::vector<int> held;
  for (const char* source : {"127.0.0.4", "127.0.0.5"}) {
    for (int i = 0; i < 3; ++i) {
      const int fd = ConnectFrom(source, server.port());
      ASSERT_GE(fd, 0);
      ASSERT_TRUE(SendAll(fd, "GET / HTTP/1.1\r\n"));
      held.push_back(fd);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the server admit them
  const int fd = ConnectFrom("127.0.0.6", server.port());
  ASSERT_GE(fd, 0);
  EXPECT_THAT(ReadUntilClosed(fd, 20), HasSubstr("HTTP/1.1 503"));
  ::close(fd);
  for (int h : held) ::close(h);
}

TEST(ReviewsWebServerSetupTest, ServeNeedsBindAndStopsOnTheFlag) {
  FakeBackend backend;
  Server server(backend, {});
  std::atomic<bool> stop{true};
  EXPECT_EQ(server.Serve(stop).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(server.Bind("127.0.0.1", 0).ok());
  // Already set before serving starts: Serve must still return.
  EXPECT_TRUE(server.Serve(stop).ok());
}

TEST(ReviewsWebServerSetupTest, BindReportsAnAddressInUse) {
  FakeBackend backend;
  Server first(backend, {});
  auto port = first.Bind("127.0.0.1", 0);
  ASSERT_TRUE(port.ok());
  Server second(backend, {});
  EXPECT_EQ(second.Bind("127.0.0.1", *port).status().code(), StatusCode::kUnavailable);
}

TEST(ReviewsWebServerSetupTest, ParsesListenAddresses) {
  auto a = ParseListenAddress("127.0.0.1:8080");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 8080);
  auto b = ParseListenAddress("[::1]:0");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 0);
  auto c = ParseListenAddress(":9000");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->host, "0.0.0.0");
  for (const char* bad : {"", "localhost", "host:", "host:65536", "host:-1", "host:80x"}) {
    EXPECT_EQ(ParseListenAddress(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace tessera::reviews::web
