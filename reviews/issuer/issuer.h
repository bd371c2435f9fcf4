// The key issuer daemon: holds the issuer's RSA secret key, follows the chain and answers
// every committed, unanswered KeyRequest with a KeyIssue carrying the RFC 9474 blind
// signature of the request's blinded message.
//
// The issuer decides nothing: who may ask (registrar-signed identities) and how often (one
// request per identity and epoch) are ledger rules (reviews_app.h), and the issuer only ever
// sees blinded messages, so it cannot link the keys it certifies to the identities that
// asked. Its one power is to refuse; that shows on chain as a request without an issue.
// Answers that do not commit (a lost submission) are sent again after a few blocks. Restarting
// is safe: the issuer keeps no state, it rescans the chain and skips answered requests.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>

#include "core/status.h"
#include "reviews/blind/blind_rsa.h"
#include "reviews/client/client.h"

namespace tessera::reviews::issuer {

struct IssuerOptions {
  client::ClientOptions client;
  std::filesystem::path secret_key;  // PKCS#8 PEM (reviews-tool issuer-keygen)
  std::chrono::milliseconds poll{300};
  uint64_t resubmit_after_blocks = 4;
};

class Issuer {
 public:
  // FAILED_PRECONDITION when the secret key is not the chain's issuer_public.
  static Result<std::unique_ptr<Issuer>> Open(IssuerOptions options);

  // Follows the chain and answers what is due. Returns the number of KeyIssue transactions
  // submitted in this step.
  Result<size_t> Step();
  // Steps every `poll` until `stop` is set; errors of one step are logged, not fatal.
  Status Run(const std::atomic<bool>& stop);

  uint64_t answered() const { return answered_; }  // requests seen answered on chain

 private:
  Issuer(IssuerOptions options, std::unique_ptr<client::ReviewsClient> client,
         blind::SecretKey key);

  struct Pending {
    std::vector<Bytes> blinded;  // every requested message seen (only one can be committed)
    uint64_t submitted_at = 0;   // height of our last submission, 0 = none
  };

  IssuerOptions options_;
  std::unique_ptr<client::ReviewsClient> client_;
  blind::SecretKey key_;
  std::map<std::pair<uint64_t, ledger::PublicKey>, Pending> pending_;
  uint64_t answered_ = 0;
};

}  // namespace tessera::reviews::issuer
