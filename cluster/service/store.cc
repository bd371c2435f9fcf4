#include "cluster/service/store.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>

#include "cluster/service/state.pb.h"

namespace tessera::cluster {

namespace {

constexpr JobState kAllStates[] = {JobState::kPending, JobState::kRunning, JobState::kCheckpointing,
                                   JobState::kSuspended, JobState::kFinished};
constexpr JobOutcome kAllOutcomes[] = {JobOutcome::kNone, JobOutcome::kFinished,
                                       JobOutcome::kCancelled, JobOutcome::kFailed};

std::string JobKey(int64_t number) { return fmt::format("job/{:012d}", number); }
std::string NodeKey(int index) { return fmt::format("node/{:06d}", index); }
std::string EventKey(int64_t seq) { return fmt::format("event/{:012d}", seq); }
constexpr char kNextJobKey[] = "meta/next_job";

state::Job ToProto(const JobRecord& r) {
  state::Job p;
  const JobSpec& s = r.view.spec;
  p.set_id(s.id);
  p.set_tenant(s.tenant);
  p.set_tier(std::string(TierName(s.tier)));
  p.set_requested_workers(s.requested_workers);
  p.set_min_workers(s.min_workers);
  p.set_submit_time(s.submit_time);
  for (const auto& a : r.args) p.add_args(a);
  p.set_state(std::string(JobStateName(r.view.state)));
  for (const Slice& slice : r.view.placement) {
    auto* out = p.add_placement();
    out->set_node(slice.node);
    out->set_slots(slice.slots);
  }
  p.set_progress(r.view.progress);
  p.set_stalled_until(r.view.stalled_until);
  p.set_first_start(r.view.first_start);
  p.set_last_change(r.view.last_change);
  p.set_preemptions(r.view.preemptions);
  p.set_migrations(r.view.migrations);
  p.set_resizes(r.view.resizes);
  p.set_outcome(std::string(JobOutcomeName(r.outcome)));
  p.set_message(r.message);
  p.set_run(r.run);
  p.set_run_node(r.run_node);
  p.set_run_workers(r.run_workers);
  p.set_run_started(r.run_started);
  p.set_stop_requested(r.stop_requested);
  p.set_relocating(r.relocating);
  p.set_cancel_requested(r.cancel_requested);
  p.set_borrowed(r.view.spec.borrowed);
  p.set_held(r.held);
  p.set_step(r.step);
  p.set_total_steps(r.total_steps);
  p.set_loss(r.loss);
  p.set_crashes(r.crashes);
  p.set_recoveries(r.recoveries);
  p.set_last_accrual(r.last_accrual);
  p.set_finish_time(r.finish_time);
  p.set_restore_seconds(r.restore_seconds);
  p.set_checkpoint_seconds(r.checkpoint_seconds);
  for (const Slice& slice : r.run_placement) {
    auto* out = p.add_run_placement();
    out->set_node(slice.node);
    out->set_slots(slice.slots);
  }
  p.set_master_port(r.master_port);
  p.set_max_step(r.max_step);
  p.set_lost_steps(r.lost_steps);
  p.set_lost_progress(r.lost_progress);
  p.set_computed_steps(r.computed_steps);
  p.set_last_exit(r.last_exit);
  return p;
}

Result<JobRecord> FromProto(const state::Job& p) {
  JobRecord r;
  JobSpec& s = r.view.spec;
  s.id = p.id();
  s.tenant = p.tenant();
  TESSERA_ASSIGN_OR_RETURN(s.tier, ParseTier(p.tier()));
  s.requested_workers = p.requested_workers();
  s.min_workers = p.min_workers();
  s.submit_time = p.submit_time();
  r.args.assign(p.args().begin(), p.args().end());
  bool state_ok = false;
  for (JobState state : kAllStates) {
    if (JobStateName(state) == p.state()) {
      r.view.state = state;
      state_ok = true;
    }
  }
  if (!state_ok) return DataLossError(fmt::format("job {}: unknown state '{}'", s.id, p.state()));
  for (const auto& slice : p.placement()) {
    r.view.placement.push_back({.node = slice.node(), .slots = slice.slots()});
  }
  r.view.progress = p.progress();
  r.view.stalled_until = p.stalled_until();
  r.view.first_start = p.first_start();
  r.view.last_change = p.last_change();
  r.view.preemptions = p.preemptions();
  r.view.migrations = p.migrations();
  r.view.resizes = p.resizes();
  bool outcome_ok = false;
  for (JobOutcome outcome : kAllOutcomes) {
    if (JobOutcomeName(outcome) == p.outcome()) {
      r.outcome = outcome;
      outcome_ok = true;
    }
  }
  if (!outcome_ok) {
    return DataLossError(fmt::format("job {}: unknown outcome '{}'", s.id, p.outcome()));
  }
  r.message = p.message();
  r.run = p.run();
  r.run_node = p.run_node();
  r.run_workers = p.run_workers();
  r.run_started = p.run_started();
  r.stop_requested = p.stop_requested();
  r.relocating = p.relocating();
  r.cancel_requested = p.cancel_requested();
  r.view.spec.borrowed = p.borrowed();
  r.held = p.held();
  r.step = p.step();
  r.total_steps = p.total_steps();
  r.loss = p.loss();
  r.crashes = p.crashes();
  r.recoveries = p.recoveries();
  r.last_accrual = p.last_accrual();
  r.finish_time = p.finish_time();
  r.restore_seconds = p.restore_seconds();
  r.checkpoint_seconds = p.checkpoint_seconds();
  for (const auto& slice : p.run_placement()) {
    r.run_placement.push_back({.node = slice.node(), .slots = slice.slots()});
  }
  r.master_port = p.master_port();
  r.max_step = p.max_step();
  r.lost_steps = p.lost_steps();
  r.lost_progress = p.lost_progress();
  r.computed_steps = p.computed_steps();
  r.last_exit = p.last_exit();
  return r;
}

}  // namespace

std::string_view JobOutcomeName(JobOutcome outcome) {
  switch (outcome) {
    case JobOutcome::kNone:
      return "";
    case JobOutcome::kFinished:
      return "finished";
    case JobOutcome::kCancelled:
      return "cancelled";
    case JobOutcome::kFailed:
      return "failed";
  }
  return "";
}

StateStore::StateStore(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {}
StateStore::~StateStore() = default;

Result<std::unique_ptr<StateStore>> StateStore::Open(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return UnavailableError("creating " + dir.string() + ": " + ec.message());
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir.string(), &raw);
  if (!s.ok()) return UnavailableError("opening state store " + dir.string() + ": " + s.ToString());
  return std::unique_ptr<StateStore>(new StateStore(std::unique_ptr<rocksdb::DB>(raw)));
}

Status StateStore::Put(const std::string& key, const std::string& value) {
  rocksdb::Status s = db_->Put(rocksdb::WriteOptions(), key, value);
  if (!s.ok()) return InternalError("state store put " + key + ": " + s.ToString());
  return Status::Ok();
}

Status StateStore::PutJob(int64_t number, const JobRecord& job) {
  return Put(JobKey(number), ToProto(job).SerializeAsString());
}

Status StateStore::PutNode(int index, const NodeRecord& node) {
  state::Node p;
  p.set_id(node.id);
  p.set_slots(node.slots);
  p.set_index(index);
  p.set_address(node.address);
  return Put(NodeKey(index), p.SerializeAsString());
}

Status StateStore::AppendEvent(int64_t seq, const rpc::Event& event) {
  state::Event p;
  p.set_time(event.time());
  p.set_text(event.text());
  return Put(EventKey(seq), p.SerializeAsString());
}

Status StateStore::PutNextJob(int64_t next_job) {
  return Put(kNextJobKey, std::to_string(next_job));
}

Result<StateStore::Contents> StateStore::Load() const {
  Contents contents;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string key = it->key().ToString();
    std::string value = it->value().ToString();
    if (key.starts_with("job/")) {
      state::Job p;
      if (!p.ParseFromString(value)) return DataLossError("unparsable record " + key);
      TESSERA_ASSIGN_OR_RETURN(JobRecord job, FromProto(p));
      contents.jobs.push_back(std::move(job));
    } else if (key.starts_with("node/")) {
      state::Node p;
      if (!p.ParseFromString(value)) return DataLossError("unparsable record " + key);
      if (p.index() != static_cast<int>(contents.nodes.size())) {
        return DataLossError(fmt::format("node index {} out of order", p.index()));
      }
      contents.nodes.push_back({.id = p.id(), .slots = p.slots(), .address = p.address()});
    } else if (key.starts_with("event/")) {
      state::Event p;
      if (!p.ParseFromString(value)) return DataLossError("unparsable record " + key);
      rpc::Event event;
      event.set_time(p.time());
      event.set_text(p.text());
      contents.events.push_back(std::move(event));
    } else if (key == kNextJobKey) {
      try {
        contents.next_job = std::stoll(value);
      } catch (const std::exception&) {
        return DataLossError("bad " + key);
      }
    }
  }
  if (!it->status().ok()) return InternalError("reading state store: " + it->status().ToString());
  return contents;
}

}  // namespace tessera::cluster
