#include "reviews/web/ledger_backend.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/file.h"
#include "reviews/client/key_file.h"
#include "reviews/ledger/payload.h"

namespace tessera::reviews::web {

namespace {

// A private directory (mode 0700) holding the uploaded key file (mode 0600) for as long as the
// client reads it, removed on every path out. The client takes a key file path.
class TemporaryKeyFile {
 public:
  static Result<TemporaryKeyFile> Write(std::string_view contents) {
    std::string dir = (std::filesystem::temp_directory_path() / "reviews-web-key-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) {
      return InternalError("cannot create a private directory for the uploaded key file");
    }
    TemporaryKeyFile file(dir);
    TESSERA_RETURN_IF_ERROR(WriteFileAtomically(file.path(), contents, 0600));
    return file;
  }
  TemporaryKeyFile(TemporaryKeyFile&& other) noexcept : dir_(std::move(other.dir_)) {
    other.dir_.clear();
  }
  TemporaryKeyFile(const TemporaryKeyFile&) = delete;
  TemporaryKeyFile& operator=(const TemporaryKeyFile&) = delete;
  ~TemporaryKeyFile() {
    if (dir_.empty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  std::filesystem::path path() const { return dir_ / "review-key.json"; }

 private:
  explicit TemporaryKeyFile(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
};

}  // namespace

Result<std::unique_ptr<LedgerBackend>> LedgerBackend::Open(LedgerBackendOptions options) {
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<client::ReviewsClient> client,
                           client::ReviewsClient::Open(options.client));
  // A ledger that does not answer yet is not fatal: pages say so (503) and every page tries
  // again, so the server and the network may start in either order.
  const Status first = client->Refresh();
  if (first.ok()) {
    spdlog::info("following the ledger: height {}, epoch {}", client->height(),
                 client->CurrentEpoch());
  } else {
    spdlog::warn("the ledger does not answer yet: {}", first.ToString());
  }
  auto backend =
      std::unique_ptr<LedgerBackend>(new LedgerBackend(std::move(options), std::move(client)));
  if (first.ok()) backend->last_refresh_ = std::chrono::steady_clock::now();
  return backend;
}

LedgerBackend::LedgerBackend(LedgerBackendOptions options,
                             std::unique_ptr<client::ReviewsClient> client)
    : options_(std::move(options)), client_(std::move(client)) {}

LedgerContext LedgerBackend::Context() const {
  return LedgerContext{.height = client_->height(),
                       .current_epoch = client_->CurrentEpoch(),
                       .delta = options_.client.hijack_delta};
}

size_t LedgerBackend::MaxReviewTextBytes() const { return onchain::kMaxReviewText; }

Status LedgerBackend::RefreshIfStale() {
  std::lock_guard lock(refresh_mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - last_refresh_ < options_.refresh_interval) return Status::Ok();
  Status status = client_->Refresh();
  if (!status.ok()) return status.WithContext("following the chain");
  last_refresh_ = now;
  return Status::Ok();
}

Result<std::vector<ItemSummary>> LedgerBackend::ListItems() {
  TESSERA_RETURN_IF_ERROR(RefreshIfStale());
  TESSERA_ASSIGN_OR_RETURN(std::vector<client::ItemSummary> items, client_->ListItems());
  const LedgerContext context = Context();
  std::vector<ItemSummary> out;
  out.reserve(items.size());
  for (const client::ItemSummary& item : items) {
    // The tally in `item` is a proved leaf; "verified" on the page means more: the reviews read
    // from blocks replay exactly to that tally and to the item's proved review chain.
    Result<client::ItemView> view = client_->GetItem(item.id);
    const Status verified = view.ok() ? view->verified : view.status();
    out.push_back(ToItemSummary(item, context, verified));
  }
  return out;
}

Result<ItemDetail> LedgerBackend::GetItem(std::string_view id) {
  TESSERA_ASSIGN_OR_RETURN(onchain::ItemId item, ItemIdFromText(id));
  TESSERA_RETURN_IF_ERROR(RefreshIfStale());
  TESSERA_ASSIGN_OR_RETURN(client::ItemView view, client_->GetItem(item));
  return ToItemDetail(view, Context());
}

Result<std::string> LedgerBackend::PostReview(std::string_view item_id, int rating,
                                              std::string_view text, std::string_view key_file) {
  TESSERA_ASSIGN_OR_RETURN(onchain::ItemId item, ItemIdFromText(item_id));
  // Decoded here first so a malformed upload gets the decoder's message naming the field.
  Result<client::ReviewKeyFile> key = client::DecodeKeyFile(key_file);
  if (!key.ok()) return key.status().WithContext("key file");
  if (!key->registered) {
    return FailedPreconditionError(
        "key file: this review key is not registered on the ledger yet; finish getting it "
        "(issue and registration) before reviewing");
  }
  TESSERA_RETURN_IF_ERROR(RefreshIfStale());
  TESSERA_ASSIGN_OR_RETURN(TemporaryKeyFile file, TemporaryKeyFile::Write(key_file));
  TESSERA_RETURN_IF_ERROR(
      client_->PostReview(file.path(), item, rating, text, client::PostOptions{.wait = false}));
  return std::string(
      "Your review was signed and submitted to the ledger. It appears on the item's page once a "
      "block commits it, usually within seconds.");
}

}  // namespace tessera::reviews::web
