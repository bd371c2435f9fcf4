#include "cluster/sim/policy_spec.h"

#include <gtest/gtest.h>

#include "cluster/sim/simulator.h"

namespace tessera::cluster::sim {
namespace {

TEST(PolicySpecTest, NamesAndVariants) {
  for (const char* spec :
       {"fifo", "tiresias", "singularity", "singularity:no-elastic", "singularity:no-defragment",
        "singularity:no-headroom", "singularity:best-fit", "strict"}) {
    Result<std::unique_ptr<Policy>> p = MakePolicy(spec, {});
    ASSERT_TRUE(p.ok()) << spec << ": " << p.status();
    EXPECT_EQ((*p)->name(), spec);
  }
  EXPECT_FALSE(MakePolicy("singularity:faster", {}).ok());
  EXPECT_FALSE(MakePolicy("lottery", {}).ok());
  EXPECT_FALSE(MakePolicy("", {}).ok());
}

TEST(PolicySpecTest, NoElasticVariantNeverResizes) {
  // An elastic basic job on a full node and a premium job arriving: the default policy shrinks
  // the basic job, the rigid variant preempts it.
  std::vector<SimJob> jobs(2);
  jobs[0].spec = {"basic", "t", Tier::kBasic, 8, 2, 0, false};
  jobs[0].duration = 1000;
  jobs[1].spec = {"prem", "t", Tier::kPremium, 4, 4, 100, false};
  jobs[1].duration = 100;
  SimOptions options;
  options.nodes = 1;
  options.slots_per_node = 8;
  options.validate = true;
  SingularityOptions base;
  base.premium_headroom_slots = 0;
  for (const char* spec : {"singularity", "singularity:no-elastic"}) {
    Result<std::unique_ptr<Policy>> p = MakePolicy(spec, base);
    ASSERT_TRUE(p.ok());
    Result<SimResult> r = Simulate(jobs, **p, options);
    ASSERT_TRUE(r.ok()) << r.status();
    const JobOutcome& basic = r->jobs[0];
    if (std::string_view(spec) == "singularity") {
      EXPECT_GE(basic.resizes, 1);
      EXPECT_EQ(basic.preemptions, 0);
    } else {
      EXPECT_EQ(basic.resizes, 0);
      EXPECT_EQ(basic.preemptions, 1);
    }
  }
}

}  // namespace
}  // namespace tessera::cluster::sim
