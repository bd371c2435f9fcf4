// Hosts many citizens in one process (citizens are light: a key, an identity, one header),
// each on its own thread with its own safe samples and traffic/CPU accounting, sharing one
// gRPC channel per politician.
//
// Key directory layout (written by ledger-localnet):
//   citizen-<i>.key   secret key file (key_file.h)
//   citizen-<i>.id    hex of the registrar-signed identity (identity.h)
//   citizen-<i>.head  the latest verified header, kept by the citizen (citizen.h)
// The stats file (JSON, rewritten atomically every second and at exit):
//   {"citizens": [{"index", "height", "head", "committee_rounds", "blocks_followed",
//                  "bytes_up", "bytes_down", "cpu_ns", "proposals", "rejected_proposals",
//                  "bad_politician_answers", "txs_validated", "signatures_checked",
//                  "round_listings", "largest_sample", "evidence_refused", "blacklisted",
//                  "storage_bytes" (the three files above)}, ...]}
#pragma once

#include <atomic>
#include <filesystem>
#include <string>

#include "core/status.h"
#include "ledger/net/citizen.h"

namespace tessera::ledger::net {

struct CitizenDaemonOptions {
  Genesis genesis;
  std::filesystem::path key_dir;
  uint32_t first = 0;
  uint32_t count = 1;
  CitizenFault fault = CitizenFault::kNone;
  CitizenTiming timing;
  std::filesystem::path stats_file;  // optional
  // The citizens of this process verify each VRF ticket and each Ed25519 signature once
  // between them (vrf_cache.h, signature_cache.h): what a daemon of many citizens on one
  // machine needs so that it does not pay each check once per citizen. Off: each citizen
  // verifies everything itself, as a phone of its own does (for per-citizen CPU figures).
  bool share_checks = true;
};

Status RunCitizens(const CitizenDaemonOptions& options, const std::atomic<bool>& stop);

// Writes citizen-<i>.key and citizen-<i>.id for a citizen registered at `registered_at`.
Status WriteCitizenFiles(const std::filesystem::path& key_dir, uint32_t index, const KeyPair& keys,
                         const KeyPair& registrar, uint64_t registered_at);

}  // namespace tessera::ledger::net
