// The operations of the reviews-tool command line, on files, so a user can try the whole
// cryptographic flow by hand. Each function is one subcommand; human-readable output goes to
// `out`. File formats (JSON unless noted; hex for binary fields):
//
//   issuer secret / public key   PEM (PKCS#8 / SubjectPublicKeyInfo), RSA >= 2048 bits
//   review key      {"epoch", "public", "secret"}                       (mode 0600)
//   blind request   {"epoch", "blinded_msg"}                     client -> issuer
//   blind state     {"epoch", "public", "input_msg", "inv"}      client secret (mode 0600)
//   blind response  {"blind_sig"}                                issuer -> client
//   issued log      {"<epoch>": ["identity", ...]}               issuer: one key per identity
//   credential      {"epoch", "review_key", "msg_prefix", "signature"}
//   registry        {"epoch", "issuer", "credentials": [credential, ...]}
//   ring            {"item", "epoch", "seed", "k", "registered", "members": [key, ...]}
//   review          {"item", "epoch", "rating", "text", "tag", "signature"}
//
// The issued log and the registry stand in for ledger state until the ledger exists: there,
// one issuance per identity per epoch and the registered keys are committed state.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::reviews::tool {

Status IssuerKeygen(int bits, const std::string& secret_path, const std::string& public_path,
                    std::ostream& out);
Status ReviewKeygen(uint64_t epoch, const std::string& key_path, std::ostream& out);
// Client: blinds the credential message of its review key for the issuer.
Status BlindRequest(const std::string& issuer_public, const std::string& key_path,
                    const std::string& request_path, const std::string& state_path,
                    std::ostream& out);
// Issuer: signs a blinded request for `identity`, at most once per identity and epoch.
Status BlindSignRequest(const std::string& issuer_secret, const std::string& request_path,
                        const std::string& identity, const std::string& issued_log,
                        const std::string& response_path, std::ostream& out);
// Client: unblinds and verifies, producing the credential to register (anonymously).
Status FinalizeCredential(const std::string& issuer_public, const std::string& state_path,
                          const std::string& response_path, const std::string& credential_path,
                          std::ostream& out);
// Verifies a credential and appends it to the registry (created if missing).
Status Register(const std::string& issuer_public, const std::string& credential_path,
                const std::string& registry_path, std::ostream& out);
// The DRAC ring of an item, recomputed from the registry (every credential re-verified).
Status ComputeRing(const std::string& issuer_public, const std::string& registry_path,
                   const std::string& item, const std::string& seed_hex, uint64_t k,
                   const std::string& ring_path, std::ostream& out);
Status SignReviewFile(const std::string& key_path, const std::string& ring_path, int rating,
                      const std::string& text, const std::string& review_path, std::ostream& out);
// Verifies a review against a ring file; with a registry (and the issuer key) also recomputes
// the ring, so a doctored ring file is caught.
Status VerifyReviewFile(const std::string& ring_path, const std::string& review_path,
                        const std::string& issuer_public, const std::string& registry_path,
                        std::ostream& out);
// Reports reviews of one item and epoch that share a tag (double reviews). FAILED_PRECONDITION
// when any is found and `fail_on_duplicate` is set.
Status FindDuplicates(const std::vector<std::string>& review_paths, bool fail_on_duplicate,
                      std::ostream& out);
// Tallies reviews of the ring's item: each is verified over the ring and a second review by one
// key is rejected; prints the rating, the count and the hijack resistance (N = the ring file's
// registered keys, k = its expected ring size).
Status Tally(const std::string& ring_path, const std::vector<std::string>& review_paths,
             std::ostream& out);
Status Hijack(uint64_t identities, uint64_t k, uint64_t honest_reviews, double mean, double delta,
              std::ostream& out);

}  // namespace tessera::reviews::tool
