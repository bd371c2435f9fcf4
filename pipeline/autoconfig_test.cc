#include "pipeline/autoconfig.h"

#include <gtest/gtest.h>

namespace tessera::pipeline {
namespace {

// `units` identical units: forward f, backward 2f per sample (times scale with the micro-batch),
// `act` bytes of output and `params` bytes of parameters each.
ProfiledMicroBatch Uniform(int units, int micro_batch, double f, double act, double params) {
  ProfiledMicroBatch p;
  p.micro_batch = micro_batch;
  p.profile.forward_s.assign(units, f * micro_batch);
  p.profile.backward_s.assign(units, 2 * f * micro_batch);
  p.profile.output_bytes.assign(units, act * micro_batch);
  p.profile.param_bytes.assign(units, params);
  p.profile.input_bytes = 8.0 * micro_batch;
  return p;
}

AutoConfigRequest Request(int workers, int batch, std::vector<ProfiledMicroBatch> profiles) {
  AutoConfigRequest r;
  r.workers = workers;
  r.global_batch = batch;
  r.profiles = std::move(profiles);
  r.steps = 1;
  return r;
}

// Two workers, two units, 10 MB of parameters per unit, 1 KB activations, 1 MB/s links.
// Data parallelism all-reduces 20 MB over a 2-ring: 2 x 10 MB at 1 MB/s, 20 s. The pipeline
// sends 4 x 1 KB (1 ms each) each way and overlaps its two stages, so it beats both one worker
// (4 x 2 units x 3 ms = 24 ms) and, by far, two replicas.
TEST(AutoConfig, SlowLinksFavourThePipeline) {
  AutoConfigRequest r = Request(2, 4, {Uniform(2, 1, 1e-3, 1e3, 10e6)});
  r.link.bandwidth_bytes_per_s = 1e6;
  auto result = AutoConfigure(r);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->ranked.size(), 3u);  // (P, D) = (1, 1), (1, 2), (2, 1)
  const Candidate& best = result->ranked.front();
  EXPECT_EQ(best.stages, 2);
  EXPECT_EQ(best.replicas, 1);
  EXPECT_EQ(result->ranked.back().replicas, 2);  // the 20 s all-reduce is last
  EXPECT_GT(result->ranked.back().step_s, 20.0);
}

// The same model on free links: D=2 halves every worker's compute (4 x 3 ms = 12 ms per step
// with both units on each replica of 2 samples) while P=2 D=1 has a pipeline bubble: 4
// micro-batches through 2 stages of 3 ms each take at least (4 + 1) x 3 ms = 15 ms.
TEST(AutoConfig, FreeLinksFavourDataParallelism) {
  AutoConfigRequest r = Request(2, 4, {Uniform(2, 1, 1e-3, 1e3, 10e6)});
  auto result = AutoConfigure(r);
  ASSERT_TRUE(result.ok()) << result.status();
  const Candidate& best = result->ranked.front();
  EXPECT_EQ(best.stages, 1);
  EXPECT_EQ(best.replicas, 2);
  EXPECT_NEAR(best.step_s, 2 * 2 * 3e-3, 1e-9);  // 2 micro-batches of 1 x 2 units x 3 ms
}

// Workers on two hosts with a link measured per direction: 100 GB/s from host 0 to host 1, 1 MB/s
// back. Ranks go round-robin over the hosts, so P=1 D=2's ring sends its two 10 MB chunks from
// rank 1 over the slow direction (20 s), and the pipeline's 1 KB gradients take 1 ms each: the
// pipeline wins, where the fast link for every pair picks D=2 (as on free links above).
TEST(AutoConfig, EachHostPairsLinkIsSimulated) {
  AutoConfigRequest r = Request(2, 4, {Uniform(2, 1, 1e-3, 1e3, 10e6)});
  r.host_links.host_of_slot = {0, 1};
  r.host_links.links.assign(2, std::vector<LinkModel>(2, LinkModel{1e11, 0}));
  auto fast = AutoConfigure(r);
  ASSERT_TRUE(fast.ok()) << fast.status();
  EXPECT_EQ(fast->ranked.front().replicas, 2);
  r.host_links.links[1][0] = LinkModel{1e6, 0};
  auto result = AutoConfigure(r);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->ranked.front().stages, 2);
  const Candidate& ring = result->ranked.back();
  EXPECT_EQ(ring.replicas, 2);
  EXPECT_NEAR(ring.step_s, 20.0, 0.1);
}

// The measured delivery delay of a pipeline message is charged to the pipeline and to nothing
// else. 1F1B on free links: P=2 D=1 takes (M + P - 1)(F + B) = 5 x 3 ms = 15 ms without a
// delay; with 1 ms per message at least 17 ms, since stage 1's 12 ms of tasks start no earlier
// than the first activation (1 ms + d) and stage 0's last backward (2 ms) no earlier than the
// last gradient (d after stage 1's last task). P=1 D=2 sends no activation and keeps its 12 ms.
TEST(AutoConfig, MessageDelayIsChargedToThePipeline) {
  AutoConfigRequest r = Request(2, 4, {Uniform(2, 1, 1e-3, 1e3, 10e6)});
  r.schedule = ScheduleKind::kOneFOneB;
  auto step_of = [](const AutoConfigResult& result, int stages) {
    for (const Candidate& c : result.ranked) {
      if (c.stages == stages && c.replicas == 3 - stages) return c.step_s;
    }
    return -1.0;
  };
  auto without = AutoConfigure(r);
  ASSERT_TRUE(without.ok()) << without.status();
  r.message_delay_s = 1e-3;
  auto with = AutoConfigure(r);
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_NEAR(step_of(*without, 2), 15e-3, 1e-12);
  EXPECT_GE(step_of(*with, 2), 17e-3 - 1e-12);
  EXPECT_NEAR(step_of(*without, 1), 12e-3, 1e-12);
  EXPECT_NEAR(step_of(*with, 1), 12e-3, 1e-12);
  r.message_delay_s = -1;
  EXPECT_FALSE(AutoConfigure(r).ok());
}

// A measured all-reduce (on an otherwise unlimited link) is charged to data parallelism: with
// 1 MB/s for the ring, the 20 MB all-reduce of P=1 D=2 costs 20 s and the pipeline wins again.
TEST(AutoConfig, MeasuredAllreduceLinkIsCharged) {
  AutoConfigRequest r = Request(2, 4, {Uniform(2, 1, 1e-3, 1e3, 10e6)});
  r.allreduce_link = LinkModel{1e6, 0};
  auto result = AutoConfigure(r);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->ranked.front().replicas, 1);
  EXPECT_EQ(result->ranked.back().replicas, 2);
  EXPECT_NEAR(result->ranked.back().step_s, 2 * 2 * 3e-3 + 20.0, 1e-9);
}

// Four units of 100 MB parameters each: a worker holding all of them needs 1.2 GB (parameters,
// gradients, momentum); two units 600 MB. A 700 MB limit leaves only P >= 2, although on free
// links P=1 D=4 would be fastest.
TEST(AutoConfig, MemoryLimitForcesMoreStages) {
  AutoConfigRequest r = Request(4, 8, {Uniform(4, 2, 1e-3, 1e3, 100e6)});
  auto free = AutoConfigure(r);
  ASSERT_TRUE(free.ok()) << free.status();
  EXPECT_EQ(free->ranked.front().stages, 1);
  EXPECT_TRUE(free->rejected.empty());
  r.memory_limit_bytes = 700e6;
  auto limited = AutoConfigure(r);
  ASSERT_TRUE(limited.ok()) << limited.status();
  ASSERT_FALSE(limited->ranked.empty());
  for (const Candidate& c : limited->ranked) {
    EXPECT_GE(c.stages, 2);
    EXPECT_LE(c.memory_bytes, 700e6);
  }
  ASSERT_FALSE(limited->rejected.empty());
  for (const Candidate& c : limited->rejected) {
    EXPECT_EQ(c.stages, 1);
    EXPECT_FALSE(c.fits);
  }
  // Nothing fits in 100 MB: a clear error naming the smallest need (one unit: 300 MB + stash).
  r.memory_limit_bytes = 100e6;
  auto none = AutoConfigure(r);
  ASSERT_TRUE(none.ok());
  auto best = Best(*none, r.memory_limit_bytes);
  EXPECT_EQ(best.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(best.status().message().find("P=4"), std::string::npos) << best.status();
}

// One sample per step cannot be split over replicas: every candidate has D=1, and the best
// pipelines the four units over the four workers (free links).
TEST(AutoConfig, TinyBatchMeansOneReplica) {
  auto result = AutoConfigure(Request(4, 1, {Uniform(4, 1, 1e-3, 1e3, 1e3)}));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->ranked.size(), 4u);  // P = 1..4
  for (const Candidate& c : result->ranked) EXPECT_EQ(c.replicas, 1);
  // One micro-batch cannot overlap stages, and stages before the last add a recompute: one
  // worker is fastest at 4 units x 3 ms.
  EXPECT_EQ(result->ranked.front().stages, 1);
  EXPECT_NEAR(result->ranked.front().step_s, 12e-3, 1e-9);
}

// Workers sharing cores: with 2 cores, P=1 D=4 runs each task twice as slowly, which makes it
// no faster than P=1 D=2 (the tie goes to fewer workers).
TEST(AutoConfig, SharedCoresSlowCrowdedConfigurations) {
  AutoConfigRequest r = Request(4, 8, {Uniform(2, 2, 1e-3, 1e3, 1e3)});
  r.cores = 2;
  auto result = AutoConfigure(r);
  ASSERT_TRUE(result.ok()) << result.status();
  const Candidate& best = result->ranked.front();
  EXPECT_EQ(best.stages * best.replicas, 2);
  EXPECT_EQ(best.stages, 1);  // P=1 D=2: no bubble
  EXPECT_NEAR(best.step_s, 2 * 2 * 6e-3, 1e-9);
}

// A contention profile replaces the cores model: the measured times for the candidate's worker
// count are what it is simulated with, and the optimizer is slowed by the same factor. Here two
// concurrent copies measured 3x the lone times (a loaded machine), so P=1 D=2 loses to one
// worker with the whole batch (4 micro-batches x 2 units x 6 ms + 2 ms = 50 ms against
// 2 x 2 x 18 ms + 6 ms = 78 ms), which the cores model (2 workers on 2 cores: no slowdown,
// 26 ms) ranks first.
TEST(AutoConfig, ContentionProfileSetsTheCrowdedTimes) {
  ProfiledMicroBatch p = Uniform(2, 2, 1e-3, 1e3, 1e3);
  p.profile.optimizer_s.assign(2, 1e-3);
  ContendedTimes two;
  two.workers = 2;
  for (int u = 0; u < 2; ++u) {
    two.forward_s.push_back(3 * p.profile.forward_s[u]);
    two.backward_s.push_back(3 * p.profile.backward_s[u]);
  }
  AutoConfigRequest r = Request(2, 8, {p});
  r.cores = 2;
  auto plain = AutoConfigure(r);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->ranked.front().replicas, 2);  // without the profile: D = 2 wins
  two.cpu_share = 0.45;
  ContendedTimes one{.workers = 1, .cpu_share = 0.9};
  one.forward_s = p.profile.forward_s;
  one.backward_s = p.profile.backward_s;
  r.profiles[0].profile.contended = {one, two};
  auto result = AutoConfigure(r);
  ASSERT_TRUE(result.ok()) << result.status();
  const Candidate& best = result->ranked.front();
  EXPECT_EQ(best.stages * best.replicas, 1);
  for (const Candidate& c : result->ranked) {
    if (c.replicas == 2) {  // 2 micro-batches x 2 units x (6 + 12) ms, then 3 x 2 ms optimizer
      EXPECT_NEAR(c.step_s, 2 * 2 * 18e-3 + 3 * 2e-3, 1e-9);
    }
    // The core share the prediction rests on: that of the entry for the candidate's workers.
    EXPECT_DOUBLE_EQ(c.cpu_share, c.stages * c.replicas == 2 ? 0.45 : 0.9) << c.stages;
  }
  ContendedTimes ragged = two;
  ragged.backward_s.pop_back();
  r.profiles[0].profile.contended = {ragged};
  EXPECT_FALSE(AutoConfigure(r).ok());
  r.profiles[0].profile.contended = {two, two};  // the same worker count twice
  EXPECT_FALSE(AutoConfigure(r).ok());
}

// The communication threads' measured CPU (MeasureLoopback) is charged on shared cores. Two
// units of 2 ms forward and 4 ms backward per micro-batch of 2, 2 KB of gradient and output
// per unit; 2 workers on 2 cores, global batch 8. P=1 D=2: each replica runs 2 micro-batches
// through both units, 24 ms of compute, and all-reduces 4 KB in one bucket plus the loss: 2
// calls x 1 ms + 4 KB x 1 us = 6 ms of CPU per worker. Both workers need 2 x (24 + 6) ms from
// 2 cores: 30 ms a step, where the simulation without that CPU says 24 ms. P=2 D=1 sends 4
// activations and 4 gradients of 2 KB across its cut (each stage is charged half of both
// ends' 1 us per byte: 8 ms of CPU) and slows by 16 / 56 ms of compute; one worker alone
// communicates nothing.
TEST(AutoConfig, CommunicationCpuIsChargedOnSharedCores) {
  AutoConfigRequest r = Request(2, 8, {Uniform(2, 2, 1e-3, 1e3, 2e3)});
  r.cores = 2;
  auto before = AutoConfigure(r);
  ASSERT_TRUE(before.ok()) << before.status();
  r.comm_cpu = {.allreduce_call_s = 1e-3, .allreduce_byte_s = 1e-6, .p2p_byte_s = 1e-6};
  auto after = AutoConfigure(r);
  ASSERT_TRUE(after.ok()) << after.status();
  auto find = [](const AutoConfigResult& result, int stages, int replicas) {
    for (const Candidate& c : result.ranked) {
      if (c.stages == stages && c.replicas == replicas && c.micro_batch == 2) return c;
    }
    ADD_FAILURE() << "no candidate P=" << stages << " D=" << replicas;
    return Candidate{};
  };
  EXPECT_NEAR(find(*before, 1, 2).step_s, 24e-3, 1e-9);
  EXPECT_NEAR(find(*after, 1, 2).step_s, 30e-3, 1e-9);
  EXPECT_GT(find(*after, 2, 1).step_s, find(*before, 2, 1).step_s * 1.2);
  EXPECT_DOUBLE_EQ(find(*after, 1, 1).step_s, find(*before, 1, 1).step_s);
  // A contention profile for 2 workers with the same times, measured at half a core each (a
  // loaded machine): the communication threads get half a core too, so their 12 ms of CPU cost
  // the 2 x 24 ms of compute 24 ms: 36 ms a step.
  ContendedTimes two{.workers = 2, .cpu_share = 0.5};
  two.forward_s = r.profiles[0].profile.forward_s;
  two.backward_s = r.profiles[0].profile.backward_s;
  r.profiles[0].profile.contended = {two};
  auto loaded = AutoConfigure(r);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_NEAR(find(*loaded, 1, 2).step_s, 36e-3, 1e-9);
  r.profiles[0].profile.contended.clear();
  r.cores = 0;  // a processor per worker: the communication threads take nothing from them
  auto own = AutoConfigure(r);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_NEAR(find(*own, 1, 2).step_s, 24e-3, 1e-9);
}

// Varuna's non-last stages stash only their input; the last stage (1F1B) keeps its outputs
// too. P=2, M=4, one unit per stage, input 8 B, output 100 B, params 10 B per micro-batch of 1.
TEST(AutoConfig, MemoryEstimateFollowsTheSchedule) {
  UnitProfile p = Uniform(2, 1, 1e-3, 100, 10).profile;
  // Stage 0's list is F0 F1 F2 R0 B0 R1 B1 R2 B2 F3 R3 B3: 3 micro-batches in flight, 3 inputs
  // of 8 B plus one recomputed output of 100 B, plus 3 x 10 B of parameter state.
  auto s0 = StageMemoryBytes(p, {0, 1, 2}, ScheduleKind::kVaruna, 4, 0);
  ASSERT_TRUE(s0.ok()) << s0.status();
  EXPECT_DOUBLE_EQ(*s0, 3 * 8 + 100 + 30);
  // The last stage alternates forward and backward: 1 in flight, input 100 B + output 100 B.
  auto s1 = StageMemoryBytes(p, {0, 1, 2}, ScheduleKind::kVaruna, 4, 1);
  ASSERT_TRUE(s1.ok());
  EXPECT_DOUBLE_EQ(*s1, 200 + 30);
  // GPipe stage 0 also holds 4 in flight and recomputes.
  EXPECT_DOUBLE_EQ(*StageMemoryBytes(p, {0, 1, 2}, ScheduleKind::kGPipe, 4, 0), 4 * 8 + 100 + 30);
  // 1F1B stage 0: P - s = 2 in flight, no recompute: 2 x (8 + 100).
  EXPECT_DOUBLE_EQ(*StageMemoryBytes(p, {0, 1, 2}, ScheduleKind::kOneFOneB, 4, 0), 2 * 108 + 30);
  EXPECT_FALSE(StageMemoryBytes(p, {0, 2, 1}, ScheduleKind::kVaruna, 4, 0).ok());
  EXPECT_FALSE(StageMemoryBytes(p, {0, 1, 2}, ScheduleKind::kVaruna, 4, 2).ok());
}

// Measured saved activations replace the unit outputs; the base and Adam's two moments count.
TEST(AutoConfig, MemoryEstimateUsesMeasuredActivationsBaseAndOptimizerState) {
  UnitProfile p = Uniform(2, 1, 1e-3, 100, 10).profile;
  p.activation_bytes = {500, 700};
  const MemoryModel adam{.base_bytes = 1000, .state_copies = 2};
  // Varuna stage 0: 3 inputs of 8 B in flight + one recomputed micro-batch's 500 B saved, base,
  // and 4 x 10 B (parameters, gradients, two moments).
  EXPECT_DOUBLE_EQ(*StageMemoryBytes(p, {0, 1, 2}, ScheduleKind::kVaruna, 4, 0, adam),
                   1000 + 3 * 8 + 500 + 40);
  // 1F1B stage 0: 2 in flight, each its input and saved activations.
  EXPECT_DOUBLE_EQ(*StageMemoryBytes(p, {0, 1, 2}, ScheduleKind::kOneFOneB, 4, 0, adam),
                   1000 + 2 * (8 + 500) + 40);
  p.activation_bytes = {500};  // not one per unit: refused by the auto-config
  AutoConfigRequest r;
  r.workers = 2;
  r.global_batch = 4;
  r.profiles = {{1, p}};
  EXPECT_FALSE(AutoConfigure(r).ok());
}

TEST(AutoConfig, BadRequestsAreRefused) {
  const ProfiledMicroBatch ok = Uniform(2, 1, 1e-3, 1e3, 1e3);
  EXPECT_FALSE(AutoConfigure(Request(0, 4, {ok})).ok());
  EXPECT_FALSE(AutoConfigure(Request(2, 0, {ok})).ok());
  EXPECT_FALSE(AutoConfigure(Request(2, 4, {})).ok());
  EXPECT_FALSE(AutoConfigure(Request(2, 4, {ok, ok})).ok());  // the same size twice
  ProfiledMicroBatch ragged = ok;
  ragged.profile.param_bytes.pop_back();
  EXPECT_FALSE(AutoConfigure(Request(2, 4, {ragged})).ok());
  ProfiledMicroBatch negative = ok;
  negative.profile.forward_s[0] = -1;
  EXPECT_FALSE(AutoConfigure(Request(2, 4, {negative})).ok());
  AutoConfigRequest r = Request(2, 4, {ok});
  r.memory_limit_bytes = -1;
  EXPECT_FALSE(AutoConfigure(r).ok());
  // No micro-batch divides the batch: no candidate, and Best says so.
  auto none = AutoConfigure(Request(2, 3, {Uniform(2, 2, 1e-3, 1e3, 1e3)}));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->ranked.empty());
  EXPECT_FALSE(Best(*none, 0).ok());
}

TEST(AutoConfig, ProfilesRoundTripThroughJson) {
  std::vector<ProfiledMicroBatch> in = {Uniform(3, 2, 1e-3, 10, 20), Uniform(3, 4, 2e-3, 5, 20)};
  auto out = ProfilesFromJson(ProfilesToJson(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[1].micro_batch, 4);
  EXPECT_EQ((*out)[1].profile.forward_s, in[1].profile.forward_s);
  EXPECT_EQ((*out)[0].profile.param_bytes, in[0].profile.param_bytes);
  EXPECT_DOUBLE_EQ((*out)[0].profile.input_bytes, in[0].profile.input_bytes);
  in[0].profile.contended = {{.workers = 2,
                              .forward_s = {1, 2, 3},
                              .backward_s = {4, 5, 6},
                              .cpu_share = 0.25,
                              .window_cpu_share = 0.3}};
  auto contended = ProfilesFromJson(ProfilesToJson(in));
  ASSERT_TRUE(contended.ok()) << contended.status();
  ASSERT_EQ((*contended)[0].profile.contended.size(), 1u);
  EXPECT_EQ((*contended)[0].profile.contended[0].workers, 2);
  EXPECT_EQ((*contended)[0].profile.contended[0].backward_s, (std::vector<double>{4, 5, 6}));
  EXPECT_DOUBLE_EQ((*contended)[0].profile.contended[0].cpu_share, 0.25);
  EXPECT_DOUBLE_EQ((*contended)[0].profile.contended[0].window_cpu_share, 0.3);
  EXPECT_FALSE(ProfilesFromJson(nlohmann::json::object()).ok());
  EXPECT_FALSE(ProfilesFromJson(nlohmann::json::parse(R"([{"micro_batch": 1}])")).ok());
}

}  // namespace
}  // namespace tessera::pipeline
