#include "ledger/net/registration.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "ledger/net/validation_sample.h"

namespace tessera::ledger::net {

Identity RegisteredIdentity(const Registration& r, uint64_t height) {
  return Identity{.citizen = r.citizen, .registered_at = height, .signature = r.signature};
}

uint64_t PopulationAfter(const BlockHeader& prev) {
  return prev.registered_through.empty() ? 0 : prev.registered_through.front();
}

HeightParams ThresholdsFor(const Genesis& genesis, uint64_t population) {
  HeightParams p;
  p.sortition = genesis.sortition;
  p.sortition.population = population;
  p.witness_threshold = genesis.witness_threshold;
  const bool at_genesis = population == genesis.sortition.population;
  const uint64_t committee = genesis.sortition.committee_size;
  // ChooseThreshold and SoundSampleFraction sum exact tails: computed once
  // per (population, C, genesis T).
  struct Choice {
    uint32_t threshold;
    double sound_sample;
  };
  static std::mutex mu;
  static std::map<std::tuple<uint64_t, uint64_t, uint32_t>, Choice> cache;
  const auto key = std::make_tuple(population, committee, at_genesis ? genesis.cert_threshold : 0);
  Choice choice{};
  {
    std::lock_guard lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) {
      choice = it->second;
    } else {
      if (at_genesis) {
        choice.threshold = genesis.cert_threshold;
      } else {
        auto designed = DesignThreshold(population, committee);
        choice.threshold = designed.ok()
                               ? static_cast<uint32_t>(designed->threshold)
                               : static_cast<uint32_t>(2 * std::min(committee, population) / 3 + 1);
      }
      auto q = agreement::SoundSampleFraction(DesignCommitteeModel(population, committee),
                                              choice.threshold, kInvalidBlockBudget);
      choice.sound_sample = q.ok() ? *q : 1.0;
      if (cache.size() > 4096) cache.clear();
      cache[key] = choice;
    }
  }
  p.soft_threshold = at_genesis ? genesis.soft_threshold : choice.threshold;
  p.cert_threshold = choice.threshold;
  p.validation_sample = std::max(genesis.validation_sample, choice.sound_sample);
  return p;
}

SortitionParams SortitionAt(const Genesis& genesis, const BlockHeader& prev) {
  SortitionParams p = genesis.sortition;
  p.population = PopulationAfter(prev);
  return p;
}

HeightParams ParamsAt(const Genesis& genesis, const BlockHeader& prev) {
  HeightParams p = ThresholdsFor(genesis, PopulationAfter(prev));
  p.height = prev.height + 1;
  return p;
}

namespace {

std::vector<uint64_t> NextRegisteredThrough(const BlockHeader& prev, size_t added) {
  std::vector<uint64_t> next(prev.registered_through.begin() + 1, prev.registered_through.end());
  next.push_back(prev.registered_through.back() + added);
  return next;
}

}  // namespace

void SetRegistrations(const Genesis& genesis, const BlockHeader& prev,
                      const std::vector<Identity>& pending, BlockHeader* proposal) {
  const uint64_t h = prev.height + 1;
  std::map<PublicKey, Signature> chosen;
  for (const Identity& id : pending) {
    if (id.registered_at != h || chosen.count(id.citizen)) continue;
    if (!VerifyIdentity(id, genesis.registrar)) continue;
    chosen[id.citizen] = id.signature;
  }
  proposal->registrations.clear();
  for (const auto& [key, sig] : chosen) {
    if (proposal->registrations.size() == kMaxRegistrationsPerBlock) break;
    proposal->registrations.push_back({key, sig});
  }
  proposal->registered_through = prev.registered_through.empty()
                                     ? std::vector<uint64_t>{}
                                     : NextRegisteredThrough(prev, proposal->registrations.size());
}

Status CheckRegistrations(const Genesis& genesis, const BlockHeader& prev,
                          const BlockHeader& header) {
  const uint64_t h = prev.height + 1;
  if (prev.registered_through.size() != genesis.registration_delay) {
    return InvalidArgumentError("block " + std::to_string(prev.height) + " carries " +
                                std::to_string(prev.registered_through.size()) +
                                " registration counts, the chain's delay is " +
                                std::to_string(genesis.registration_delay));
  }
  if (header.registrations.size() > kMaxRegistrationsPerBlock) {
    return InvalidArgumentError("block " + std::to_string(h) + " carries too many registrations");
  }
  for (size_t i = 0; i < header.registrations.size(); ++i) {
    const Registration& r = header.registrations[i];
    if (i > 0 && !(header.registrations[i - 1].citizen < r.citizen)) {
      return InvalidArgumentError("block " + std::to_string(h) +
                                  " lists registrations out of order or twice");
    }
    if (!VerifyIdentity(RegisteredIdentity(r, h), genesis.registrar)) {
      return PermissionDeniedError("block " + std::to_string(h) + " registers citizen " +
                                   ToHex(r.citizen).substr(0, 16) +
                                   " without the registrar's signature for this height");
    }
  }
  if (header.registered_through != NextRegisteredThrough(prev, header.registrations.size())) {
    return InvalidArgumentError("block " + std::to_string(h) +
                                " miscounts the registered citizens (registered_through)");
  }
  return Status::Ok();
}

Status PostRegistration(PoliticianClient& p, const Identity& id) {
  RoundItem item;
  item.set_payload(EncodeIdentity(id));
  return p.Post(id.registered_at, item);
}

}  // namespace tessera::ledger::net
