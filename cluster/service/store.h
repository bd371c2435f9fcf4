// The scheduler's durable state and its RocksDB store.
//
// Layout (one RocksDB, values are state.proto messages):
//   job/<12-digit number>    a JobRecord (keys sort in submission order)
//   node/<6-digit index>     a NodeRecord (index = position in every ClusterView)
//   event/<12-digit seq>     an Event
//   meta/next_job            the next job number
// Writes are not fsynced: a scheduler process that crashes loses nothing (RocksDB's WAL is in
// the OS page cache); a machine crash could lose the last few writes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/agent/cluster.pb.h"
#include "cluster/policy/policy.h"
#include "core/status.h"

namespace rocksdb {
class DB;
}

namespace tessera::cluster {

enum class JobOutcome { kNone, kFinished, kCancelled, kFailed };
std::string_view JobOutcomeName(JobOutcome outcome);  // "", finished, cancelled, failed

// Everything the scheduler knows about one job.
struct JobRecord {
  JobView view;                   // spec, policy state, placement (node indices), SLA accounting
  std::vector<std::string> args;  // training job flags
  JobOutcome outcome = JobOutcome::kNone;
  std::string message;  // why it failed, for people

  // The current run (incarnation): one process on one node.
  int64_t run = 0;    // 0 = never started
  int run_node = -1;  // node index hosting the run's process, -1 when none
  int run_workers = 0;
  // Slots of the run's placement. Differs from view.placement while relocating: the slots the
  // new placement gives up are draining until this run has checkpointed.
  Placement run_placement;
  bool run_started = false;     // the run reported progress: its restore is done
  bool stop_requested = false;  // checkpoint-and-exit ordered for this run
  bool relocating = false;      // after this run's checkpoint, start a new run on the placement
  bool cancel_requested = false;
  bool held = false;  // preempted by an operator: kept out of the policy's view until requeued

  // As last reported by the job.
  int64_t step = 0;
  int64_t total_steps = 0;
  double loss = 0;
  int crashes = 0;          // runs that died on their own
  int recoveries = 0;       // restarts from a checkpoint after a crash or a lost node
  double last_accrual = 0;  // progress accounted up to this time
  double finish_time = -1;
  double restore_seconds = -1;     // last measured: process start -> first progress
  double checkpoint_seconds = -1;  // last measured: stop order -> exit

  // Gang runs (job type "command", one process per rank on every node of run_placement).
  int master_port = 0;  // MASTER_PORT of the current run
  // Exit reports of the current run's parts, by node index. Not persisted: agents report an
  // exited part until the scheduler stops assigning it, so a restarted scheduler hears again.
  std::map<int, rpc::RunReport> part_exits;
  std::string last_exit;  // how the last run ended, for people

  // SLA from measured steps: the highest step reported, the steps run in all incarnations,
  // and the steps (and progress) lost by resuming from an older checkpoint.
  int64_t max_step = 0;
  int64_t computed_steps = 0;
  int64_t lost_steps = 0;
  double lost_progress = 0;
  bool run_step_seen = false;  // the current run has reported a step (not persisted)
};

struct NodeRecord {
  std::string id;
  int slots = 0;
  // Not persisted: a restarted scheduler gives every node a grace period to check in again.
  bool alive = true;
  double last_heartbeat = 0;
  double grace_until = 0;  // not declared dead before this time
  std::string address;     // where its job processes are reached (MASTER_ADDR); empty = loopback
};

class StateStore {
 public:
  static Result<std::unique_ptr<StateStore>> Open(const std::filesystem::path& dir);
  ~StateStore();

  Status PutJob(int64_t number, const JobRecord& job);
  Status PutNode(int index, const NodeRecord& node);
  Status AppendEvent(int64_t seq, const rpc::Event& event);
  Status PutNextJob(int64_t next_job);

  struct Contents {
    std::vector<JobRecord> jobs;    // submission order
    std::vector<NodeRecord> nodes;  // index order
    std::vector<rpc::Event> events;
    int64_t next_job = 1;
  };
  // DATA_LOSS when a record does not parse or node indices have gaps.
  Result<Contents> Load() const;

 private:
  explicit StateStore(std::unique_ptr<rocksdb::DB> db);
  Status Put(const std::string& key, const std::string& value);

  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace tessera::cluster
