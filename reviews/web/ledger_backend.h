// The Backend of the shipped reviews-web: the reviews client library (reviews/client/client.h)
// on a running ledger. Nothing here is trusted from a politician: the client follows certified
// headers and proves every leaf it reads against the synced state root; an item whose reviews
// (read from blocks) do not replay to its proved tally and review chain is shown as not
// verified, with the reason, rather than hidden or shown as verified.
//
//   LedgerBackendOptions options;
//   options.client.genesis = "genesis.toml";
//   options.client.checkpoint = "reviews-web.checkpoint";
//   TESSERA_ASSIGN_OR_RETURN(auto backend, LedgerBackend::Open(options));
//   Server server(*backend, {});
#pragma once

#include <chrono>
#include <memory>
#include <mutex>

#include "core/status.h"
#include "reviews/client/client.h"
#include "reviews/web/backend.h"
#include "reviews/web/ledger_view.h"

namespace tessera::reviews::web {

struct LedgerBackendOptions {
  client::ClientOptions client;
  // Pages follow the chain (ReviewsClient::Refresh) at most this often, so a burst of page
  // views does not make one header sync each.
  std::chrono::milliseconds refresh_interval{1000};
};

class LedgerBackend final : public Backend {
 public:
  // Opens the client (reads the genesis file, creates or resumes the checkpoint; its errors pass
  // through, e.g. NOT_FOUND for the genesis file) and tries to follow the chain once. A ledger
  // that does not answer is not an error here: pages answer 503 until it does.
  static Result<std::unique_ptr<LedgerBackend>> Open(LedgerBackendOptions options);

  Result<std::vector<ItemSummary>> ListItems() override;
  Result<ItemDetail> GetItem(std::string_view id) override;
  // Decodes the uploaded key file in memory, signs with it and submits without waiting for the
  // commit; the message says the review shows once a block commits it.
  Result<RingView> GetRing(std::string_view item_id) override;
  Result<std::string> PostSignedReview(std::string_view item_id,
                                       std::string_view signed_review) override;

 private:
  LedgerBackend(LedgerBackendOptions options, std::unique_ptr<client::ReviewsClient> client);
  Status RefreshIfStale();
  LedgerContext Context() const;

  const LedgerBackendOptions options_;
  std::unique_ptr<client::ReviewsClient> client_;  // thread-safe itself
  std::mutex refresh_mu_;
  std::chrono::steady_clock::time_point last_refresh_{};
};

}  // namespace tessera::reviews::web
