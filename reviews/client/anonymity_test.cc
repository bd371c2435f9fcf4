// Issue 16, part 7: an anonymity distinguishing experiment over everything the web server and
// the ledger see.
//
// Two identities each get a review key through the real flow's data (KeyRequest naming the
// identity, the issuer's KeyIssue, the anonymous RegisterKey at the height the client draws with
// DrawRegistrationHeight), and the challenger's coin b picks which of them writes the one
// review, signed with the user's own client (SignReview over the item's ring) and handed to the
// web server as a signed review (EncodeSignedReview). The adversary holds the issuer's secret
// key, every ledger payload in commit order and every byte the server received, and guesses b
// with every linking strategy we know of:
//   1. identity material in what the server received (the citizen key, raw or hex);
//   2. the signer's key when the ring gives it away (a ring of one);
//   3. key -> identity by unblinding: a registered credential equal to a KeyIssue's blind
//      signature (what an issuer sees without blinding), else by order: the i-th registration
//      belongs to the i-th issue (what "register in the next block" gives away);
// and flips a coin when none applies. The system as built must keep the success rate at 1/2
// within statistical bounds; deliberately linkable variants (the old web flow that uploaded the
// key file; registration at once with a ring of one) must be caught.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "reviews/client/key_file.h"
#include "reviews/client/registration_delay.h"
#include "reviews/client/signed_review.h"
#include "reviews/ledger/payload.h"
#include "reviews/review/review.h"

namespace tessera::reviews::client {
namespace {

using onchain::EncodePayload;

struct Variant {
  bool server_gets_key_files = false;           // the old web flow (issue 16, point 1)
  std::optional<uint64_t> register_delay = {};  // nullopt: the default draw (point 2)
  bool ring_of_one = false;                     // the signer signs over its own key only
};

struct View {                       // what the adversary holds
  std::vector<std::string> ledger;  // payloads in commit order
  std::vector<onchain::RegisterKey> registrations;
  std::vector<onchain::KeyIssue> issues;
  std::vector<ledger::PublicKey> identities;  // in request order: identity 0, identity 1
  std::string server_received;
  onchain::ReviewBatch review;
  urs::Ring ring;  // the item's ring, as the ledger's state holds it (RingOpen)
};

class Experiment {
 public:
  Experiment() : issuer_(blind::SecretKey::Generate(2048).value()) {}

  // One run of the game; returns whether the adversary guessed b.
  bool Run(const Variant& v, std::mt19937_64& rng) {
    const uint64_t epoch = 9;
    const int b = static_cast<int>(rng() & 1);
    View view;
    std::vector<ReviewKeyFile> keys(2);
    std::vector<KeyRequestFile> requests(2);
    std::vector<uint64_t> reg_height(2);
    for (int i = 0; i < 2; ++i) {
      const ledger::KeyPair citizen = ledger::KeyPair::Generate();
      view.identities.push_back(citizen.public_key());
      keys[i].epoch = epoch;
      keys[i].review = urs::GenerateKeyPair();
      keys[i].input_msg = blind::PrepareMessage(
          kCredentialVariant, CredentialMessage(keys[i].review.public_key, epoch));
      blind::BlindOutput blinded =
          blind::Blind(issuer_.public_key(), kCredentialVariant, keys[i].input_msg).value();
      requests[i] = {epoch, citizen.public_key(), keys[i].review.public_key, blinded.blinded_msg,
                     blinded.inv};
      onchain::KeyRequest request{{citizen.public_key(), 1, {}}, epoch, blinded.blinded_msg, {}};
      onchain::SignKeyRequest(request, citizen);
      view.ledger.push_back(EncodePayload(request));
      // The issuer answers in request order, identity i at height 10 + i.
      onchain::KeyIssue issue{epoch, citizen.public_key(), blinded.blinded_msg,
                              blind::BlindSign(issuer_, blinded.blinded_msg).value()};
      view.ledger.push_back(EncodePayload(issue));
      view.issues.push_back(issue);
      keys[i].signature = blind::Finalize(issuer_.public_key(), kCredentialVariant,
                                          keys[i].input_msg, issue.blind_sig, blinded.inv)
                              .value();
      keys[i].registered = true;
      reg_height[i] = DrawRegistrationHeight(10 + i, 40, v.register_delay, rng);
    }
    // Registrations in height order; within one block the order is the proposer's (random).
    std::vector<int> order = {0, 1};
    if (reg_height[1] < reg_height[0] || (reg_height[0] == reg_height[1] && (rng() & 1))) {
      std::swap(order[0], order[1]);
    }
    for (int i : order) {
      onchain::RegisterKey reg{epoch, keys[i].review.public_key, {}, keys[i].signature};
      std::copy_n(keys[i].input_msg.begin(), reg.msg_prefix.size(), reg.msg_prefix.begin());
      view.ledger.push_back(EncodePayload(reg));
      view.registrations.push_back(reg);
    }
    // Identity b writes the review on its own client and hands the signed review to the server.
    std::vector<urs::Point> members = {keys[b].review.public_key};
    if (!v.ring_of_one) members.push_back(keys[1 - b].review.public_key);
    const urs::Ring ring = urs::Ring::Create(members).value();
    const onchain::ItemId item = onchain::ItemIdOf("cafe");
    Review signed_review =
        SignReview(keys[b].review, ring, onchain::ItemBytes(item), epoch, 4, "fine").value();
    view.review = {
        item, epoch, static_cast<uint16_t>(ring.size()), {{4, "fine", signed_review.signature}}};
    view.ring = ring;
    view.ledger.push_back(EncodePayload(view.review));
    view.server_received = EncodeSignedReview(view.review);
    if (v.server_gets_key_files) {
      view.server_received += EncodeKeyFile(keys[b]) + EncodeRequestFile(requests[b]);
    }
    return Adversary(view, rng) == b;
  }

 private:
  static bool Contains(const std::string& haystack, ByteSpan needle) {
    const std::string raw(needle.begin(), needle.end());
    return haystack.find(raw) != std::string::npos ||
           haystack.find(ToHex(needle)) != std::string::npos;
  }

  int Adversary(const View& view, std::mt19937_64& rng) const {
    // 1. Identity material in what the server received.
    for (int i = 0; i < 2; ++i) {
      if (Contains(view.server_received, view.identities[i])) return i;
    }
    // 2. The signer's key, when the ring gives it away.
    if (view.ring.size() == 1) {
      const urs::Point signer = view.ring.members()[0];
      // 3a. By unblinding: a credential equal to the blind signature of an issue.
      for (const onchain::RegisterKey& reg : view.registrations) {
        if (reg.review_key != signer) continue;
        for (int i = 0; i < 2; ++i) {
          if (view.issues[i].blind_sig == reg.signature) return i;
        }
      }
      // 3b. By order: the i-th registration belongs to the i-th issue.
      for (int j = 0; j < 2; ++j) {
        if (view.registrations[j].review_key == signer) return j;
      }
    }
    return static_cast<int>(rng() & 1);
  }

  blind::SecretKey issuer_;
};

double SuccessRate(Experiment& experiment, const Variant& v, int trials, uint64_t seed) {
  std::mt19937_64 rng(seed);
  int wins = 0;
  for (int t = 0; t < trials; ++t) wins += experiment.Run(v, rng) ? 1 : 0;
  return static_cast<double>(wins) / trials;
}

// 400 trials: a fair coin's rate has standard deviation 0.025; the bound is four of them
// (a false failure about once in 16,000 runs).
constexpr int kTrials = 400;
constexpr double kBound = 0.1;

TEST(AnonymityExperiment, AsBuiltTheAdversaryDoesNoBetterThanACoin) {
  Experiment experiment;
  EXPECT_NEAR(SuccessRate(experiment, Variant{}, kTrials, 1), 0.5, kBound);
  // Even a reviewer who signs over a ring of one stays hidden behind the registration delay:
  // with two identities issued one block apart, the drawn heights order the registrations at
  // random (P(same order as the issues) = 1/2 + 1/(2*30) here).
  EXPECT_NEAR(SuccessRate(experiment, Variant{.ring_of_one = true}, kTrials, 2), 0.5, kBound);
}

TEST(AnonymityExperiment, CatchesTheOldWebFlowThatUploadedTheKeyFile) {
  Experiment experiment;
  EXPECT_GT(SuccessRate(experiment, Variant{.server_gets_key_files = true}, 100, 3), 0.97);
}

TEST(AnonymityExperiment, CatchesRegistrationAtOnceWithARingOfOne) {
  Experiment experiment;
  EXPECT_GT(SuccessRate(experiment, Variant{.register_delay = 0, .ring_of_one = true}, 100, 4),
            0.97);
}

}  // namespace
}  // namespace tessera::reviews::client
