#include "cluster/policy/quota.h"

#include <charconv>
#include <optional>
#include <sstream>
#include <vector>

namespace tessera::cluster {
namespace {

int TierIndex(Tier tier) { return tier == Tier::kPremium ? 0 : 1; }

Status BadLine(int line, const std::string& why) {
  return InvalidArgumentError("quota line " + std::to_string(line) + ": " + why);
}

bool ParseCount(std::string_view s, int& out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end && out >= 0;
}

}  // namespace

Result<QuotaConfig> ParseQuotaConfig(std::string_view text) {
  QuotaConfig config;
  std::istringstream in{std::string(text)};
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.empty()) continue;
    if (f[0] == "borrowing") {
      if (f.size() != 2 || (f[1] != "on" && f[1] != "off")) {
        return BadLine(line_no, "want 'borrowing on' or 'borrowing off'");
      }
      config.borrowing = f[1] == "on";
      continue;
    }
    if (f.size() != 3) return BadLine(line_no, "want TENANT PREMIUM_SLOTS STANDARD_SLOTS");
    TenantQuota q;
    if (!ParseCount(f[1], q.premium) || !ParseCount(f[2], q.standard)) {
      return BadLine(line_no, "slot counts must be non-negative integers");
    }
    if (!config.tenants.emplace(f[0], q).second) {
      return BadLine(line_no, "tenant '" + f[0] + "' named twice");
    }
  }
  return config;
}

Status ValidateQuota(const QuotaConfig& config, int capacity) {
  int64_t premium = 0, standard = 0;
  for (const auto& [tenant, q] : config.tenants) {
    premium += q.premium;
    standard += q.standard;
  }
  if (premium > capacity) {
    return InvalidArgumentError("premium quotas total " + std::to_string(premium) +
                                " slots, more than the " + std::to_string(capacity) +
                                " slots of the cluster: premium would be oversold");
  }
  if (premium + standard > capacity) {
    return InvalidArgumentError("premium and standard quotas total " +
                                std::to_string(premium + standard) + " slots, more than the " +
                                std::to_string(capacity) + " slots of the cluster");
  }
  return Status::Ok();
}

std::string_view AdmissionName(Admission::Kind kind) {
  switch (kind) {
    case Admission::Kind::kInQuota:
      return "in-quota";
    case Admission::Kind::kBorrowing:
      return "borrowing";
    case Admission::Kind::kRefused:
      return "refused";
  }
  return "unknown";
}

QuotaLedger::QuotaLedger(QuotaConfig config) : config_(std::move(config)) {
  for (const auto& [tenant, q] : config_.tenants) {
    total_quota_[0] += q.premium;
    total_quota_[1] += q.standard;
  }
}

int QuotaLedger::Nominal(std::string_view tenant, Tier tier) const {
  auto it = config_.tenants.find(tenant);
  if (it == config_.tenants.end()) return 0;
  return tier == Tier::kPremium ? it->second.premium : it->second.standard;
}

int QuotaLedger::InQuota(std::string_view tenant, Tier tier) const {
  if (tier == Tier::kBasic) return 0;
  auto it = usage_.find(tenant);
  return it == usage_.end() ? 0 : it->second.in_quota[TierIndex(tier)];
}

int QuotaLedger::Borrowed(std::string_view tenant, Tier tier) const {
  if (tier == Tier::kBasic) return 0;
  auto it = usage_.find(tenant);
  return it == usage_.end() ? 0 : it->second.borrowed[TierIndex(tier)];
}

Admission QuotaLedger::Check(const JobSpec& job, int capacity) const {
  if (job.tier == Tier::kBasic) return {};
  const int t = TierIndex(job.tier);
  const int w = job.requested_workers;
  const std::string tier(TierName(job.tier));
  const std::string who = "tenant '" + job.tenant + "'";
  // Never oversell the fleet as it is now: premium against all slots, standard against what
  // premium leaves. Borrowed slots do not count against an owner (it takes them back), but a
  // borrower counts everything admitted.
  auto full = [&](bool with_borrowed) -> std::optional<Admission> {
    int before = in_quota_total_[0] + (with_borrowed ? total_used_[0] - in_quota_total_[0] : 0);
    if (job.tier == Tier::kStandard) {
      before += in_quota_total_[1] + (with_borrowed ? total_used_[1] - in_quota_total_[1] : 0);
    }
    if (before + w <= capacity) return std::nullopt;
    return Admission{Admission::Kind::kRefused,
                     "cluster full for " + tier + ": " + std::to_string(before) +
                         " guaranteed slots already admitted, the job needs " + std::to_string(w) +
                         ", the cluster has " + std::to_string(capacity) + " live slots"};
  };
  const int nominal = Nominal(job.tenant, job.tier);
  const int used = InQuota(job.tenant, job.tier);
  if (used + w <= nominal) {
    if (std::optional<Admission> refused = full(false)) return *refused;
    return {};
  }
  const bool known = config_.tenants.find(job.tenant) != config_.tenants.end();
  const int idle = total_quota_[t] - total_used_[t];
  std::string status = who + " has " + std::to_string(nominal) + " " + tier + " slots of quota, " +
                       std::to_string(used) + " in use; the job needs " + std::to_string(w);
  if (!known) {
    return {Admission::Kind::kRefused,
            who + " has no quota for guaranteed tiers (submit it as basic, or ask for a quota)"};
  }
  if (!config_.borrowing) {
    return {Admission::Kind::kRefused, tier + " quota exceeded: " + status};
  }
  if (w <= idle) {
    if (std::optional<Admission> refused = full(true)) return *refused;
    return {Admission::Kind::kBorrowing,
            status + "; borrowing " + std::to_string(w) + " of " + std::to_string(idle) + " idle " +
                tier + " slots of other tenants (evictable when they return)"};
  }
  return {Admission::Kind::kRefused, tier + " quota exceeded: " + status + ", and only " +
                                         std::to_string(std::max(0, idle)) + " idle " + tier +
                                         " slots of other tenants can be borrowed"};
}

void QuotaLedger::Add(const JobSpec& job) {
  if (job.tier == Tier::kBasic) return;
  const int t = TierIndex(job.tier);
  Usage& u = usage_[job.tenant];
  (job.borrowed ? u.borrowed : u.in_quota)[t] += job.requested_workers;
  total_used_[t] += job.requested_workers;
  if (!job.borrowed) in_quota_total_[t] += job.requested_workers;
}

void QuotaLedger::Remove(const JobSpec& job) {
  if (job.tier == Tier::kBasic) return;
  const int t = TierIndex(job.tier);
  auto it = usage_.find(job.tenant);
  if (it == usage_.end()) return;
  (job.borrowed ? it->second.borrowed : it->second.in_quota)[t] -= job.requested_workers;
  total_used_[t] -= job.requested_workers;
  if (!job.borrowed) in_quota_total_[t] -= job.requested_workers;
}

}  // namespace tessera::cluster
