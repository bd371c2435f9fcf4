#include "cluster/sim/trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/file.h"

namespace tessera::cluster::sim {
namespace {

constexpr char kPhilly[] =
    "timestamp,duration,num_gpus,gpu_time,cluster\n"
    "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
    "2017-10-09 06:13:03,2951.0,8,23608.0,6214e9\n"
    "2017-10-09 07:01:55,10,2,20,6c71a0\r\n"
    "\n";

TEST(PhillyTraceTest, ParsesAndSortsBySubmission) {
  Result<std::vector<TraceJob>> jobs = ParsePhillyCsv(kPhilly);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].id, "philly-2");  // the earliest, 06:13:03
  EXPECT_EQ((*jobs)[0].submit, 0);
  EXPECT_EQ((*jobs)[0].workers, 8);
  EXPECT_EQ((*jobs)[0].tenant, "6214e9");
  EXPECT_DOUBLE_EQ((*jobs)[0].duration, 2951);
  EXPECT_EQ((*jobs)[1].id, "philly-1");  // ties keep file order
  EXPECT_EQ((*jobs)[1].submit, 48 * 60 + 52);
  EXPECT_EQ((*jobs)[2].id, "philly-3");
}

TEST(PhillyTraceTest, RejectsBadRowsWithTheirLine) {
  const std::string header = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  auto error_of = [&](const std::string& row) {
    return ParsePhillyCsv(header + row).status().message();
  };
  EXPECT_NE(error_of("2017-13-09 07:01:55,66,1,66,a\n").find("line 2: bad timestamp"),
            std::string::npos);
  EXPECT_NE(error_of("2017-10-09 07:01:55,-5,1,66,a\n").find("duration"), std::string::npos);
  EXPECT_NE(error_of("2017-10-09 07:01:55,nan,1,66,a\n").find("duration"), std::string::npos);
  EXPECT_NE(error_of("2017-10-09 07:01:55,5,0,66,a\n").find("num_gpus"), std::string::npos);
  EXPECT_NE(error_of("2017-10-09 07:01:55,5,1.5,66,a\n").find("num_gpus"), std::string::npos);
  EXPECT_NE(error_of("2017-10-09 07:01:55,5,1\n").find("want 5 fields"), std::string::npos);
  EXPECT_NE(error_of("2017-10-09 07:01:55,5,1,5,\n").find("empty cluster"), std::string::npos);
  EXPECT_FALSE(ParsePhillyCsv("time,duration\n1,2\n").ok());
  EXPECT_FALSE(ParsePhillyCsv("").ok());
}

TEST(PolluxTraceTest, DurationsFromApplicationGpuTime) {
  Result<std::vector<TraceJob>> jobs = ParsePolluxCsv(
      "name,time,application,num_replicas,batch_size\n"
      "imagenet-1,300,imagenet,8,800\n"
      "cifar10-0,107,cifar10,6,2048\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].id, "cifar10-0");
  EXPECT_DOUBLE_EQ((*jobs)[0].duration, 0.25 * 3600 / 6);
  EXPECT_DOUBLE_EQ((*jobs)[1].duration, 300.0 * 3600 / 8);
  EXPECT_EQ((*jobs)[1].tenant, "imagenet");
  Result<std::vector<TraceJob>> bad =
      ParsePolluxCsv("name,time,application,num_replicas,batch_size\nx,1,resnet,2,64\n");
  EXPECT_NE(bad.status().message().find("unknown Pollux application"), std::string::npos);
}

TEST(LoadTraceTest, DetectsFormatByHeader) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("trace_test_" + std::to_string(getpid())))
          .string();
  ASSERT_TRUE(WriteFileAtomically(path, kPhilly).ok());
  Result<std::vector<TraceJob>> jobs = LoadTrace(path);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  EXPECT_EQ(jobs->size(), 3u);
  std::filesystem::remove(path);
  EXPECT_EQ(LoadTrace(path).status().code(), StatusCode::kNotFound);
}

TEST(ClassTraceTest, ParsesAndMapsClassesToTiers) {
  Result<std::vector<TraceJob>> jobs = ParseClassCsv(
      "id,submit_s,duration_s,workers,tenant,class\n"
      "b,150,600,8,speech,batch\n"
      "a,100,60.5,1,vision,prod\n"
      "c,200,10,2,vision,scavenger\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].id, "a");
  EXPECT_EQ((*jobs)[0].submit, 0);  // shifted to the first submission
  EXPECT_EQ((*jobs)[1].submit, 50);
  EXPECT_DOUBLE_EQ((*jobs)[0].duration, 60.5);
  EXPECT_EQ((*jobs)[1].job_class, "batch");
  EXPECT_EQ((*jobs)[1].workers, 8);

  Result<ClassMap> map = ParseClassMap("prod=premium,batch=standard,*=basic");
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_TRUE(ApplyClassMap(*map, *jobs).ok());
  EXPECT_EQ(ToJobSpec((*jobs)[0], TierRule{}).tier, Tier::kPremium);
  EXPECT_EQ(ToJobSpec((*jobs)[1], TierRule{}).tier, Tier::kStandard);
  EXPECT_EQ(ToJobSpec((*jobs)[2], TierRule{}).tier, Tier::kBasic);  // by '*'
  // The class decides, not the hash rule: everything would be premium by the hash here.
  EXPECT_EQ(ToJobSpec((*jobs)[1], TierRule{100, 0}).tier, Tier::kStandard);

  // Without '*', an unlisted class is an error that names the job and the class.
  Status unmapped = ApplyClassMap(*ParseClassMap("prod=premium,batch=standard"), *jobs);
  EXPECT_NE(unmapped.message().find("class 'scavenger'"), std::string::npos) << unmapped;
  // A trace without classes cannot be mapped.
  Result<std::vector<TraceJob>> philly = ParsePhillyCsv(kPhilly);
  EXPECT_NE(ApplyClassMap(*map, *philly).message().find("has no class"), std::string::npos);
}

TEST(ClassTraceTest, RejectsBadRowsAndMaps) {
  const std::string header = "id,submit_s,duration_s,workers,tenant,class\n";
  auto error_of = [&](const std::string& rows) {
    return ParseClassCsv(header + rows).status().message();
  };
  EXPECT_NE(error_of("a,1,2,1,t\n").find("line 2: want 6 fields"), std::string::npos);
  EXPECT_NE(error_of("a,-1,2,1,t,c\n").find("submit_s"), std::string::npos);
  EXPECT_NE(error_of("a,1,0,1,t,c\n").find("duration_s"), std::string::npos);
  EXPECT_NE(error_of("a,1,inf,1,t,c\n").find("duration_s"), std::string::npos);
  EXPECT_NE(error_of("a,1,2,0,t,c\n").find("workers"), std::string::npos);
  EXPECT_NE(error_of("a,1,2,1,,c\n").find("empty tenant"), std::string::npos);
  EXPECT_NE(error_of("a,1,2,1,t,\n").find("empty class"), std::string::npos);
  EXPECT_NE(error_of("a,1,2,1,t,c\na,2,2,1,t,c\n").find("line 3: duplicate id"), std::string::npos);
  EXPECT_FALSE(ParseClassMap("").ok());
  EXPECT_FALSE(ParseClassMap("prod").ok());
  EXPECT_FALSE(ParseClassMap("prod=gold").ok());
  EXPECT_FALSE(ParseClassMap("=premium").ok());
  EXPECT_FALSE(ParseClassMap("a=basic,a=premium").ok());
  EXPECT_FALSE(ParseClassMap("*=basic,*=premium").ok());
}

// The traces ship with the repository (data/traces): a clone replays them with nothing beside it.
TEST(RepositoryTracesTest, LoadAsDocumented) {
  const char* env = std::getenv("TESSERA_SOURCE_DIR");
  const std::string dir = std::string(env != nullptr ? env : TESSERA_SOURCE_ROOT) + "/data/traces/";
  Result<std::vector<TraceJob>> philly = LoadTrace(dir + "philly.csv");
  ASSERT_TRUE(philly.ok()) << philly.status();
  EXPECT_EQ(philly->size(), 82247u);  // as data/traces/README.md says
  int one_gpu = 0;
  for (const TraceJob& j : *philly) one_gpu += j.workers == 1 ? 1 : 0;
  EXPECT_EQ(one_gpu, 76627);
  for (int w = 1; w <= 8; ++w) {
    Result<std::vector<TraceJob>> pollux =
        LoadTrace(dir + "pollux-workload-" + std::to_string(w) + ".csv");
    ASSERT_TRUE(pollux.ok()) << pollux.status();
    EXPECT_EQ(pollux->size(), 160u);
  }
  Result<std::vector<TraceJob>> fixture = LoadTrace(dir + "class-fixture.csv");
  ASSERT_TRUE(fixture.ok()) << fixture.status();
  EXPECT_EQ(fixture->size(), 60u);
  ASSERT_TRUE(
      ApplyClassMap(*ParseClassMap("prod=premium,batch=standard,best-effort=basic"), *fixture)
          .ok());
}

TEST(TierRuleTest, DeterministicHashSplit) {
  EXPECT_EQ(Fnv1a64(""), 14695981039346656037ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  TierRule rule;  // 20 / 30 / 50
  int counts[3] = {0, 0, 0};
  for (int i = 1; i <= 20000; ++i) {
    const std::string id = "philly-" + std::to_string(i);
    const Tier t = AssignTier(id, rule);
    EXPECT_EQ(t, AssignTier(id, rule));
    ++counts[static_cast<int>(t)];
  }
  EXPECT_NEAR(counts[0] / 20000.0, 0.20, 0.015);
  EXPECT_NEAR(counts[1] / 20000.0, 0.30, 0.015);
  EXPECT_NEAR(counts[2] / 20000.0, 0.50, 0.015);
  EXPECT_EQ(AssignTier("x", TierRule{100, 0}), Tier::kPremium);
  EXPECT_EQ(AssignTier("x", TierRule{0, 0}), Tier::kBasic);
}

TEST(MinWorkersTest, SmallestDivisorAtLeastAQuarter) {
  EXPECT_EQ(MinWorkers(1), 1);
  EXPECT_EQ(MinWorkers(2), 1);
  EXPECT_EQ(MinWorkers(4), 1);
  EXPECT_EQ(MinWorkers(8), 2);
  EXPECT_EQ(MinWorkers(12), 3);
  EXPECT_EQ(MinWorkers(24), 6);
  EXPECT_EQ(MinWorkers(128), 32);
  EXPECT_EQ(MinWorkers(7), 7);  // a prime gang cannot be spliced evenly
  TraceJob job;
  job.id = "philly-9";
  job.tenant = "vc";
  job.submit = 5;
  job.duration = 10;
  job.workers = 16;
  const JobSpec spec = ToJobSpec(job, TierRule{});
  EXPECT_EQ(spec.min_workers, 4);
  EXPECT_EQ(spec.requested_workers, 16);
  EXPECT_EQ(spec.submit_time, 5);
  EXPECT_TRUE(IsValidWorkerCount(spec, spec.min_workers));
}

}  // namespace
}  // namespace tessera::cluster::sim
