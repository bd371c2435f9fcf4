#include "ledger/net/blacklist.h"

#include <algorithm>
#include <sstream>

#include "core/file.h"
#include "core/hex.h"

namespace tessera::ledger::net {

Blacklist::Blacklist(const Genesis& genesis, uint64_t blocks, const AppRegistry* apps)
    : genesis_(&genesis), blocks_(blocks), apps_(apps) {}

Result<bool> Blacklist::Add(const Evidence& e, uint64_t now) {
  // Relayed again every round: what is already held was verified when it was added.
  auto held = newest_.find(e.politician_id());
  if (held != newest_.end() && held->second == e) return false;
  TESSERA_RETURN_IF_ERROR(VerifyEvidence(e, *genesis_, apps_));
  const bool was_blocked = Blocked(e.politician_id(), now);
  auto [it, inserted] = newest_.try_emplace(e.politician_id(), e);
  const bool newer = !inserted && e.height() > it->second.height();
  if (newer) it->second = e;
  if (inserted || newer) Save();
  return !was_blocked && Blocked(e.politician_id(), now);
}

Status Blacklist::Persist(std::filesystem::path path) {
  file_ = std::move(path);
  std::error_code ec;
  if (!std::filesystem::exists(file_, ec)) return Status::Ok();
  const uint64_t limit = (genesis_->politicians.size() + 1) * (2 * kMaxEvidenceBytes + 1);
  const uint64_t size = std::filesystem::file_size(file_, ec);
  if (ec || size > limit) {
    return InvalidArgumentError("evidence file " + file_.string() + " is larger than " +
                                std::to_string(limit) + " bytes: not read");
  }
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(file_));
  std::istringstream lines(text);
  const std::filesystem::path keep = std::exchange(file_, {});  // no rewrite while loading
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    auto bytes = FromHex(line);
    auto kept = bytes.ok() ? AddEncoded(ByteSpan(*bytes), 0) : Result<bool>(bytes.status());
    if (!kept.ok()) ++load_refused_;
  }
  file_ = keep;
  return Status::Ok();
}

void Blacklist::Save() {
  if (file_.empty()) return;
  std::string text;
  for (const auto& [id, e] : newest_) text += ToHex(AsBytes(EncodeEvidence(e))) + "\n";
  if (!WriteFileAtomically(file_, text).ok()) ++write_failures_;
}

Result<bool> Blacklist::AddEncoded(ByteSpan bytes, uint64_t now) {
  TESSERA_ASSIGN_OR_RETURN(Evidence e, DecodeEvidence(bytes));
  return Add(e, now);
}

bool Blacklist::Blocked(uint32_t politician_id, uint64_t height) const {
  auto it = newest_.find(politician_id);
  return it != newest_.end() && height <= it->second.height() + blocks_;
}

std::vector<uint32_t> Blacklist::BlockedAt(uint64_t height) const {
  std::vector<uint32_t> out;
  for (const auto& [id, e] : newest_) {
    if (Blocked(id, height)) out.push_back(id);
  }
  return out;
}

std::vector<std::string> Blacklist::Active(uint64_t height) const {
  std::vector<std::string> out;
  for (const auto& [id, e] : newest_) {
    if (Blocked(id, height)) out.push_back(EncodeEvidence(e));
  }
  return out;
}

std::vector<uint32_t> Blacklist::Sample(const std::vector<uint32_t>& candidates, size_t k,
                                        uint64_t height, std::mt19937_64& rng) const {
  std::vector<uint32_t> out;
  for (uint32_t id : candidates) {
    if (!Blocked(id, height)) out.push_back(id);
  }
  if (out.empty()) out = candidates;
  std::shuffle(out.begin(), out.end(), rng);
  out.resize(std::min(out.size(), k));
  return out;
}

}  // namespace tessera::ledger::net
