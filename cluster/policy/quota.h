// Admission control: per-tenant quotas of the guaranteed tiers, with borrowing of idle quota in
// the style of Kueue's cohorts. The live scheduler (cluster/service) and the trace replay
// (cluster/sim) call the same code when a job arrives.
//
// * A tenant owns a nominal quota of premium slots and of standard slots (a job counts its
//   requested gang, the slots its promise is about). Basic work needs no quota: it is best effort.
// * The quotas may not sell more than the fleet: the premium quotas together, and the premium and
//   standard quotas together, must fit the capacity (ValidateQuota). Independently of the
//   configuration, a guaranteed job is never admitted when the in-quota guaranteed work already
//   admitted plus its gang would exceed the live capacity (`capacity` of Check; a borrower counts
//   the borrowed work too): premium capacity is never oversold to in-quota jobs, even while
//   nodes are lost.
// * A job within its tenant's quota of its tier is admitted *in quota*. One beyond it may
//   *borrow*: it is admitted when the tier's quotas of all tenants together still have that many
//   idle slots. A borrowing job keeps its tier's priority over lower tiers, but any in-quota job
//   of its tier or a higher one may evict it (JobSpec::borrowed): when the owner of the lent
//   quota comes back, it preempts the borrower, as Kueue's reclaimWithinCohort does.
// * Otherwise the job is refused, with a message that says which quota is exhausted. The live
//   scheduler answers RESOURCE_EXHAUSTED with it; the replay runs a refused job as basic.
// * A tenant not named in the configuration has no guaranteed quota and may not borrow.
//
//   TESSERA_ASSIGN_OR_RETURN(QuotaConfig config, ParseQuotaConfig(text));
//   TESSERA_RETURN_IF_ERROR(ValidateQuota(config, capacity));
//   QuotaLedger ledger(config);
//   Admission a = ledger.Check(spec, capacity);
//   if (a.kind == Admission::Kind::kRefused) return ResourceExhaustedError(a.reason);
//   spec.borrowed = a.kind == Admission::Kind::kBorrowing;
//   ledger.Add(spec);            // and ledger.Remove(spec) when the job ends
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "cluster/policy/policy.h"
#include "core/status.h"

namespace tessera::cluster {

struct TenantQuota {
  int premium = 0;   // nominal premium slots
  int standard = 0;  // nominal standard slots
};

struct QuotaConfig {
  std::map<std::string, TenantQuota, std::less<>> tenants;
  bool borrowing = true;  // may a job use other tenants' idle quota of its tier?
};

// Parses one tenant per line: `TENANT PREMIUM_SLOTS STANDARD_SLOTS`; `#` starts a comment;
// a line `borrowing off` disables borrowing. INVALID_ARGUMENT naming the line otherwise
// (negative or non-integer counts, a tenant named twice, extra fields). Callers read the file
// (this library does no I/O).
Result<QuotaConfig> ParseQuotaConfig(std::string_view text);

// INVALID_ARGUMENT when the premium quotas, or the premium and standard quotas together, exceed
// `capacity` slots (the quotas would sell capacity that does not exist).
Status ValidateQuota(const QuotaConfig& config, int capacity);

struct Admission {
  enum class Kind { kInQuota, kBorrowing, kRefused };
  Kind kind = Kind::kInQuota;
  std::string reason;  // why, for kBorrowing and kRefused
};
std::string_view AdmissionName(Admission::Kind kind);  // "in-quota", "borrowing", "refused"

// The guaranteed slots admitted per tenant and tier, kept up to date by the caller (Add when a
// job is admitted, Remove when it ends).
class QuotaLedger {
 public:
  explicit QuotaLedger(QuotaConfig config);

  // Would `job` be admitted now, with `capacity` live slots? Basic jobs always are (in quota).
  // Ignores job.borrowed.
  Admission Check(const JobSpec& job, int capacity) const;
  // Records an admitted job (job.borrowed says how it was admitted).
  void Add(const JobSpec& job);
  void Remove(const JobSpec& job);

  // Slots of `tier` admitted for `tenant`: in quota, borrowed.
  int InQuota(std::string_view tenant, Tier tier) const;
  int Borrowed(std::string_view tenant, Tier tier) const;
  const QuotaConfig& config() const { return config_; }

 private:
  struct Usage {
    int in_quota[2] = {0, 0};  // by guaranteed tier
    int borrowed[2] = {0, 0};
  };
  int Nominal(std::string_view tenant, Tier tier) const;

  QuotaConfig config_;
  std::map<std::string, Usage, std::less<>> usage_;
  int total_quota_[2] = {0, 0};  // per guaranteed tier, all tenants
  int total_used_[2] = {0, 0};   // in quota + borrowed, per guaranteed tier
  int in_quota_total_[2] = {0, 0};
};

}  // namespace tessera::cluster
