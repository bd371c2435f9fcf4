#include "reviews/net/load.h"

#include <atomic>
#include <charconv>
#include <ctime>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/file.h"
#include "ledger/crypto/key_file.h"
#include "reviews/client/key_file.h"
#include "reviews/review/review.h"

namespace tessera::reviews::net {
namespace {

using Clock = std::chrono::steady_clock;
using namespace onchain;  // NOLINT

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Polls until the client's height reaches `height` (bounded by the client's timeout).
Status WaitForHeight(client::ReviewsClient& c, uint64_t height, const client::ClientOptions& o) {
  const auto deadline = Clock::now() + o.timeout;
  while (true) {
    Status s = c.Refresh();
    if (s.ok() && c.height() >= height) return Status::Ok();
    if (Clock::now() >= deadline) {
      return DeadlineExceededError("the network did not reach height " + std::to_string(height) +
                                   " (at " + std::to_string(c.height()) + ")");
    }
    std::this_thread::sleep_for(o.poll);
  }
}

// Blocks left for the transfer phase before the review epoch opens (1,000 transfers take about
// 7 blocks with every pool budget at its floor of 50).
constexpr uint64_t kTransferBlocks = 10;

}  // namespace

std::optional<std::chrono::milliseconds> BusyRetryAfter(std::string_view message) {
  // LightClient::Submit joins each politician's answer; PoliticianClient words a full pool
  // "busy: ...; retry after <n> ms" and a rule violation "rejected: ...". A rule violation is
  // final; a busy pool or a timed-out call is worth another try after the shortest hint.
  constexpr std::string_view kPrefix = "transaction rejected: ";
  if (const size_t p = message.find(kPrefix); p != std::string_view::npos) {
    message.remove_prefix(p + kPrefix.size());
  }
  if (message.find("rejected: ") != std::string_view::npos) return std::nullopt;
  const bool busy = message.find("busy: ") != std::string_view::npos;
  const bool timed_out = message.find("Deadline Exceeded") != std::string_view::npos;
  if (!busy && !timed_out) return std::nullopt;
  constexpr std::string_view kRetry = "retry after ";
  uint64_t shortest = 0;
  for (size_t pos = message.find(kRetry); pos != std::string_view::npos;
       pos = message.find(kRetry, pos + 1)) {
    uint64_t ms = 0;
    const char* begin = message.data() + pos + kRetry.size();
    const auto [end, error] = std::from_chars(begin, message.data() + message.size(), ms);
    if (error == std::errc() && ms > 0 && (shortest == 0 || ms < shortest)) shortest = ms;
  }
  return std::chrono::milliseconds(shortest == 0 ? 500 : shortest);
}

static nlohmann::json PhaseJson(const std::optional<TransferPhaseReport>& p) {
  if (!p) return nullptr;
  return {{"submitted", p->submitted},       {"committed", p->committed},
          {"rejected", p->rejected},         {"busy_retries", p->busy_retries},
          {"busy_wait_s", p->busy_wait_s},   {"submit_seconds", p->submit_seconds},
          {"seconds", p->seconds},           {"transfers_per_s", p->transfers_per_s},
          {"first_height", p->first_height}, {"last_height", p->last_height},
          {"cut_short", p->cut_short},       {"poll_failures", p->poll_failures},
          {"poll_gave_up", p->poll_gave_up}};
}

namespace {

const Status& StatusOf(const Status& s) { return s; }
template <typename T>
Status StatusOf(const Result<T>& r) {
  return r.status();
}

// `submit` again after every busy answer (BusyRetryAfter), after the hint,
// until the client's timeout: under load a politician's pool budget can sit at its floor,
// and the key requests and item creations that a load generator sends at once then fill the
// reviews' mempool quota (50 of them at a budget of 50 per pool).
template <typename F>
auto RetryBusy(F submit, const client::ClientOptions& o) -> decltype(submit()) {
  const auto deadline = Clock::now() + o.timeout;
  while (true) {
    auto r = submit();
    if (r.ok() || Clock::now() >= deadline) return r;
    const auto wait = BusyRetryAfter(StatusOf(r).message());
    if (!wait) return r;
    std::this_thread::sleep_for(*wait);
  }
}

}  // namespace

std::string LoadReport::ToJson() const {
  return nlohmann::json{{"epoch", epoch},
                        {"transfers_before", PhaseJson(transfers_before)},
                        {"transfers_after", PhaseJson(transfers_after)},
                        {"identities", identities},
                        {"items", items},
                        {"ring_size_mean", ring_size_mean},
                        {"reviews_submitted", reviews_submitted},
                        {"reviews_committed", reviews_committed},
                        {"submit_rejected", submit_rejected},
                        {"submit_errors", submit_errors},
                        {"submit_busy_retries", submit_busy_retries},
                        {"submit_busy_wait_s", submit_busy_wait_s},
                        {"sign_seconds", sign_seconds},
                        {"submit_seconds", submit_seconds},
                        {"seconds", seconds},
                        {"reviews_per_s", reviews_per_s},
                        {"first_height", first_height},
                        {"last_height", last_height},
                        {"poll_failures", poll_failures},
                        {"poll_errors", poll_errors},
                        {"poll_gave_up", poll_gave_up}}
      .dump(1);
}

Result<LoadReport> RunReviewLoad(const LoadOptions& options, std::ostream& progress) {
  std::error_code ec;
  std::filesystem::create_directories(options.work_dir, ec);
  if (ec) return InternalError("creating " + options.work_dir.string() + ": " + ec.message());
  // A load generator registers at once: its keys' anonymity is not the point, the time is.
  client::ClientOptions client_options = options.client;
  client_options.register_delay_blocks = 0;
  TESSERA_ASSIGN_OR_RETURN(auto c, client::ReviewsClient::Open(client_options));
  TESSERA_RETURN_IF_ERROR(c->Refresh());
  const ReviewsParams& params = c->params();
  LoadReport report;
  report.identities = options.identities;
  report.items = options.items;
  report.epoch = c->NextKeyEpoch(options.margin_blocks);
  const uint64_t e = report.epoch;

  // ---- Keys: every request first, then one wait for all issues and registrations ----
  progress << "height " << c->height() << ": requesting " << options.identities
           << " review keys for epoch " << e << "\n";
  std::vector<std::filesystem::path> files;
  std::vector<std::pair<ledger::net::Identity, ledger::KeyPair>> creators;
  for (uint32_t i = 0; i < options.identities; ++i) {
    const std::string base = (options.key_dir / ("citizen-" + std::to_string(i))).string();
    TESSERA_ASSIGN_OR_RETURN(ledger::KeyPair citizen, ledger::ReadSecretKeyFile(base + ".key"));
    TESSERA_ASSIGN_OR_RETURN(std::string id_hex, ReadFile(base + ".id"));
    while (!id_hex.empty() && std::isspace(static_cast<unsigned char>(id_hex.back()))) {
      id_hex.pop_back();
    }
    TESSERA_ASSIGN_OR_RETURN(Bytes id_bytes, FromHex(id_hex));
    TESSERA_ASSIGN_OR_RETURN(ledger::net::Identity identity, ledger::net::DecodeIdentity(id_bytes));
    files.push_back(options.work_dir / ("key-" + std::to_string(i) + ".json"));
    TESSERA_RETURN_IF_ERROR(RetryBusy(
        [&] {
          std::filesystem::remove(files.back());  // a busy answer left them unused
          std::filesystem::remove(client::RequestFilePath(files.back()));
          return c->RequestKey(identity, citizen, e, files.back(), /*wait=*/false);
        },
        options.client));
    creators.emplace_back(identity, citizen);
  }

  // ---- Items, created now (epoch <= e - 2) so that they are open in epoch e; the identities
  // take turns as creators (each may create items_per_epoch per epoch) ----
  std::vector<ItemId> items;
  for (uint32_t j = 0; j < options.items; ++j) {
    const std::string name = "load item " + std::to_string(e) + "/" + std::to_string(j);
    const auto& [identity, citizen] = creators[j % creators.size()];
    TESSERA_ASSIGN_OR_RETURN(
        ItemId id, RetryBusy([&] { return c->CreateItem(identity, citizen, name, /*wait=*/false); },
                             options.client));
    items.push_back(id);
  }
  TESSERA_RETURN_IF_ERROR(c->CompleteKeys(files));
  std::vector<urs::KeyPair> keys;
  for (const auto& f : files) {
    TESSERA_ASSIGN_OR_RETURN(client::ReviewKeyFile k, client::ReadKeyFile(f));
    keys.push_back(k.review);
  }
  progress << "height " << c->height() << ": " << keys.size() << " keys registered\n";

  PollFailures poll_failures;  // every commit poll of this run (poll_failures.h)
  {
    const auto deadline = Clock::now() + options.client.timeout;
    std::vector<ledger::Hash256> leaves;
    for (const ItemId& id : items) leaves.push_back(leaf::Item(id));
    while (true) {
      auto l = PollLeaves(*c, leaves);
      TESSERA_RETURN_IF_ERROR(poll_failures.Note(l.status()));
      if (!l.ok()) {
        progress << poll_failures.RetryLine(c->height(), l.status());
      } else if (std::all_of(l->begin(), l->end(), [](const auto& v) { return v.has_value(); })) {
        break;
      }
      if (Clock::now() >= deadline) return DeadlineExceededError("items were not committed");
      std::this_thread::sleep_for(poll_failures.Pause(options.client.poll));
    }
  }
  progress << "height " << c->height() << ": " << items.size() << " items created\n";

  // ---- Transfers on this network right before the reviews (transfer_phase.h) ----
  if (options.transfers > 0) {
    TESSERA_RETURN_IF_ERROR(CheckLocalnetAccounts(options.key_dir));
    // Right before the review epoch: the last kTransferBlocks blocks before it (the keys are
    // usually registered long before), so that both loads meet the network in the same state.
    const uint64_t open = e * params.epoch_blocks;
    const uint64_t lead = std::min<uint64_t>(kTransferBlocks, params.epoch_blocks / 2);
    TESSERA_RETURN_IF_ERROR(WaitForHeight(*c, open > lead ? open - lead : 0, options.client));
    TransferPhaseOptions t{.first_account = 4,
                           .count = options.transfers,
                           .submitters = options.submitters,
                           .stop_height = e * params.epoch_blocks};
    TESSERA_ASSIGN_OR_RETURN(report.transfers_before,
                             RunTransferPhase(*c, options.client, t, progress));
  }

  // ---- Sign every review the lottery allows (before the clock) ----
  TESSERA_RETURN_IF_ERROR(WaitForHeight(*c, e * params.epoch_blocks, options.client));
  std::vector<Payload> payloads;
  std::vector<ledger::Hash256> tag_keys;
  std::vector<ledger::Hash256> records;
  const double cpu0 = CpuSeconds();
  uint64_t ring_total = 0;
  // Every item's ring is opened on the ledger first (RingOpen: the ledger computes the eligible
  // set); one part per item here, all submitted together, then read back (OpenRing waits for
  // whatever is still missing).
  {
    TESSERA_ASSIGN_OR_RETURN(std::vector<urs::Point> registered, c->RegisteredKeys(e));
    TESSERA_ASSIGN_OR_RETURN(auto seed, c->ReadLeaves({leaf::EpochSeed(e)}));
    if (!seed[0]) return FailedPreconditionError("no seed recorded for the review epoch");
    for (const ItemId& id : items) {
      TESSERA_ASSIGN_OR_RETURN(auto parts, PlanRingOpen(params, id, e, registered, *seed[0]));
      if (parts.size() == 1) (void)c->Submit(parts[0]);  // a failure: OpenRing tries again
    }
  }
  std::vector<urs::Ring> rings;
  for (const ItemId& id : items) {
    TESSERA_ASSIGN_OR_RETURN(urs::Ring ring, c->OpenRing(id, e));
    rings.push_back(std::move(ring));
  }
  progress << "height " << c->height() << ": " << rings.size() << " rings opened\n";
  for (size_t j = 0; j < items.size(); ++j) {
    const urs::Ring& ring = rings[j];
    ring_total += ring.size();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!ring.IndexOf(keys[i].public_key)) continue;
      const int rating = static_cast<int>(1 + (i * 7 + j * 3) % 5);
      const std::string text = "review " + std::to_string(i) + " of item " + std::to_string(j);
      TESSERA_ASSIGN_OR_RETURN(Review r,
                               SignReview(keys[i], ring, ItemBytes(items[j]), e, rating, text));
      ReviewEntry entry{rating, text, r.signature};
      tag_keys.push_back(leaf::Tag(items[j], e, r.signature.tag));
      records.push_back(ReviewRecordHash(items[j], e, entry));
      payloads.push_back(
          ReviewBatch{items[j], e, static_cast<uint16_t>(ring.size()), {std::move(entry)}});
    }
  }
  report.sign_seconds = CpuSeconds() - cpu0;
  report.ring_size_mean = items.empty() ? 0 : ring_total / items.size();
  report.reviews_submitted = payloads.size();
  progress << "height " << c->height() << ": submitting " << payloads.size()
           << " reviews (signed in " << report.sign_seconds << " s CPU)\n";

  // ---- The clock: submit everything, then poll the proved tag leaves ----
  // Several submitters, each with its own connections (a client serializes its calls), so the
  // clock measures the network rather than one thread's round trips.
  std::vector<std::unique_ptr<client::ReviewsClient>> submitters;
  for (uint32_t t = 0; t < options.submitters; ++t) {
    client::ClientOptions o = options.client;
    o.fanout = std::max<uint32_t>(options.fanout, 1);
    o.checkpoint = options.work_dir / ("submitter-" + std::to_string(t) + ".ckpt");
    TESSERA_ASSIGN_OR_RETURN(auto s, client::ReviewsClient::Open(o));
    submitters.push_back(std::move(s));
  }
  // The height when the clock starts (blocks may commit while the submitters open): the
  // first block that can carry a review is the one after the next (that pool is frozen).
  (void)c->Refresh();  // a failed refresh leaves the last height known
  report.first_height = c->height();
  progress << "height " << c->height() << ": clock starts (" << submitters.size()
           << " submitters open)\n";
  std::atomic<uint64_t> rejected{0}, busy{0}, busy_wait_ms{0};
  // A fanout-1 submission goes to one politician at random; when it is busy, others are tried
  // at once (a busy answer costs the politician a lookup, no verification) before the hint is
  // slept.
  const size_t immediate_retries =
      options.fanout >= c->genesis().politicians.size() ? 0 : c->genesis().politicians.size();
  std::mutex errors_mu;
  std::map<std::string, uint64_t> errors;  // why submissions failed, counted
  const auto start = Clock::now();
  const auto deadline = start + options.client.timeout;
  {
    std::vector<std::thread> threads;
    for (size_t t = 0; t < submitters.size(); ++t) {
      threads.emplace_back([&, t] {
        for (size_t i = t; i < payloads.size(); i += submitters.size()) {
          // A politician whose reviews quota (or whole mempool) is full answers "busy" with a
          // hint of when to retry; the submission is retried after it, as the ledger's transfer
          // load generator does, until the client's timeout.
          Status s = submitters[t]->Submit(payloads[i]);
          size_t tries = 0;
          while (!s.ok() && Clock::now() < deadline) {
            const auto wait = BusyRetryAfter(s.message());
            if (!wait) break;
            ++busy;
            if (++tries > immediate_retries) {
              tries = 0;
              busy_wait_ms += static_cast<uint64_t>(wait->count());
              std::this_thread::sleep_for(*wait);
            }
            s = submitters[t]->Submit(payloads[i]);
          }
          if (s.ok()) continue;
          ++rejected;
          std::lock_guard<std::mutex> lock(errors_mu);
          ++errors[s.ToString()];
        }
      });
    }
    for (std::thread& th : threads) th.join();
  }
  report.submit_rejected = rejected.load();
  report.submit_busy_retries = busy.load();
  report.submit_busy_wait_s = static_cast<double>(busy_wait_ms.load()) / 1000;
  for (const auto& [why, n] : errors) {
    progress << n << " submissions failed: " << why << "\n";
    report.submit_errors.emplace_back(why, n);
  }
  report.submit_seconds = Since(start);
  const auto window_end = (e + 1) * params.epoch_blocks;
  uint64_t committed = 0;
  double last_commit_s = 0;
  while (committed < payloads.size() - report.submit_rejected) {
    // A failed poll is retried after a pause, up to kMaxConsecutivePollFailures in a row; past
    // that the run reports what committed by then, with the error (poll_failures.h).
    auto l = PollLeaves(*c, tag_keys);
    if (Status s = poll_failures.Note(l.status()); !s.ok()) {
      report.poll_gave_up = s.ToString();
      progress << "height " << c->height() << ": gave up polling for reviews: " << s << "\n";
      break;
    }
    if (!l.ok()) {
      progress << poll_failures.RetryLine(c->height(), l.status());
      if (Clock::now() >= deadline) break;
      std::this_thread::sleep_for(poll_failures.Pause(options.client.poll));
      continue;
    }
    uint64_t now = 0;
    for (size_t i = 0; i < l->size(); ++i) now += (*l)[i] && *(*l)[i] == records[i];
    if (now > committed) {
      committed = now;
      last_commit_s = Since(start);
      report.last_height = c->height();
      progress << "height " << c->height() << ": " << committed << " reviews committed after "
               << last_commit_s << " s\n";
    }
    if (c->height() >= window_end || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(poll_failures.Pause(options.client.poll));
  }
  report.poll_failures = poll_failures.total();
  for (const auto& [why, n] : poll_failures.errors()) report.poll_errors.emplace_back(why, n);
  report.reviews_committed = committed;
  report.seconds = last_commit_s;
  report.reviews_per_s = last_commit_s > 0 ? static_cast<double>(committed) / last_commit_s : 0;

  // ---- Transfers on this network right after the reviews, from other accounts ----
  if (options.transfers > 0) {
    TransferPhaseOptions t{.first_account = 4 + options.transfers,
                           .count = options.transfers,
                           .submitters = options.submitters,
                           .stop_height = 0};
    TESSERA_ASSIGN_OR_RETURN(report.transfers_after,
                             RunTransferPhase(*c, options.client, t, progress));
  }
  return report;
}

}  // namespace tessera::reviews::net
