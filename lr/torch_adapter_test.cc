// The adapter on real libtorch optimizers: per-group base rates from the optimizer against the
// rates PyTorch's own schedulers set (lr/testdata/reference_schedules.json), groups added after
// the adapter, momentum / beta1 cycling, and the adapter's state saved and restored on its own.
#include "lr/torch_adapter.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "lr/cyclic_schedules.h"
#include "lr/schedule.h"

namespace tessera::lr {
namespace {

using nlohmann::json;

const json& ReferenceCase(const std::string& name) {
  static const json ref = [] {
    const char* root = std::getenv("TESSERA_SOURCE_DIR");
    std::ifstream in(std::string(root ? root : ".") + "/lr/testdata/reference_schedules.json");
    std::stringstream text;
    text << in.rdbuf();
    return json::parse(text.str());
  }();
  for (const json& c : ref["cases"]) {
    if (c["name"] == name) return c;
  }
  ADD_FAILURE() << "no reference case " << name;
  static const json empty;
  return empty;
}

struct TwoGroups {
  std::vector<torch::Tensor> params;
  std::unique_ptr<torch::optim::Optimizer> opt;
};

TwoGroups MakeTwoGroups(const std::vector<double>& lrs, bool adam) {
  TwoGroups t;
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (double lr : lrs) {
    t.params.push_back(torch::zeros({1}, torch::requires_grad()));
    std::unique_ptr<torch::optim::OptimizerOptions> o;
    if (adam) {
      o = std::make_unique<torch::optim::AdamOptions>(lr);
    } else {
      o = std::make_unique<torch::optim::SGDOptions>(torch::optim::SGDOptions(lr).momentum(0.9));
    }
    groups.emplace_back(std::vector<torch::Tensor>{t.params.back()}, std::move(o));
  }
  if (adam) {
    t.opt = std::make_unique<torch::optim::Adam>(groups, torch::optim::AdamOptions(lrs[0]));
  } else {
    t.opt = std::make_unique<torch::optim::SGD>(groups, torch::optim::SGDOptions(lrs[0]));
  }
  return t;
}

void ExpectNear(double want, double got, const std::string& where) {
  EXPECT_NEAR(got, want, 1e-12 * std::abs(want) + 1e-16) << where;
}

// PyTorch's CosineAnnealingLR with eta_min = 0.004 on groups at 0.1 and 0.03: both groups end at
// the same absolute 0.004. Ratio mode would end the second at 0.0012.
TEST(ScheduleAdapter, BaseRatesFromTheOptimizerMatchPyTorchPerGroup) {
  const json& c = ReferenceCase("cosine");
  const auto bases = c["bases"].get<std::vector<double>>();
  TwoGroups t = MakeTwoGroups(bases, false);
  // The schedule's own peak is deliberately not the optimizer's: per-group rates come from the
  // optimizer's groups.
  auto cosine =
      CosineSchedule::Create({.peak_lr = 1.0, .total_steps = c["params"]["t_max"], .min_lr = 0.004})
          .value();
  auto adapter =
      ScheduleAdapter::Create(*t.opt, *cosine, {.group_rates = GroupRates::kFromOptimizer}).value();
  EXPECT_EQ(adapter.base_rates(), bases);
  for (int64_t k = 0; k < c["steps"].get<int64_t>(); ++k) {
    adapter.Apply(k);
    const auto got = GroupLearningRates(*t.opt);
    for (size_t g = 0; g < bases.size(); ++g) {
      ExpectNear(c["lrs"][g][k], got[g], fmt::format("group {} step {}", g, k));
    }
  }
  EXPECT_NEAR(GroupLearningRates(*t.opt)[1], 0.004, 1e-15);
}

TEST(ScheduleAdapter, OneCycleCyclesMomentumAndAdamBeta1LikePyTorch) {
  for (const char* name : {"onecycle", "onecycle_adam"}) {
    const json& c = ReferenceCase(name);
    const bool adam = std::string(name) == "onecycle_adam";
    const auto bases = c["bases"].get<std::vector<double>>();
    TwoGroups t = MakeTwoGroups(bases, adam);
    const json& p = c["params"];
    auto s = OneCycleSchedule::Create(
                 {.peak_lr = bases[0], .total_steps = p["total_steps"], .cycle_momentum = true})
                 .value();
    auto adapter =
        ScheduleAdapter::Create(*t.opt, *s, {.group_rates = GroupRates::kFromOptimizer}).value();
    for (int64_t k = 0; k < c["steps"].get<int64_t>(); ++k) {
      adapter.Apply(k);
      const auto lrs = GroupLearningRates(*t.opt);
      const auto moms = GroupMomenta(*t.opt).value();
      for (size_t g = 0; g < bases.size(); ++g) {
        const std::string where = fmt::format("{} group {} step {}", name, g, k);
        ExpectNear(c["lrs"][g][k], lrs[g], where);
        ExpectNear(c["momentum"][g][k], moms[g], where + " momentum");
      }
    }
  }
}

TEST(ScheduleAdapter, RefusesMomentumCyclingWithoutMomentum) {
  torch::Tensor p = torch::zeros({1}, torch::requires_grad());
  torch::optim::Adagrad adagrad({p}, torch::optim::AdagradOptions(0.1));
  auto cyc = CyclicSchedule::Create({.base_lr = 0.01, .max_lr = 0.1, .up_steps = 5}).value();
  EXPECT_EQ(ScheduleAdapter::Create(adagrad, *cyc).status().code(),
            StatusCode::kFailedPrecondition);
  auto no_mom = CyclicSchedule::Create(
                    {.base_lr = 0.01, .max_lr = 0.1, .up_steps = 5, .cycle_momentum = false})
                    .value();
  EXPECT_TRUE(ScheduleAdapter::Create(adagrad, *no_mom).ok());
}

// A group added with add_param_group after the adapter exists takes its rate at that moment as
// its base, in both modes.
TEST(ScheduleAdapter, GroupsAddedLaterGetTheirOwnBaseRate) {
  for (GroupRates mode : {GroupRates::kRatioToFirstGroup, GroupRates::kFromOptimizer}) {
    TwoGroups t = MakeTwoGroups({0.1}, false);
    auto step = StepSchedule::Create(0.1, 3, 0.5).value();
    auto adapter = ScheduleAdapter::Create(*t.opt, *step, {.group_rates = mode}).value();
    adapter.Apply(0);
    adapter.Apply(1);
    torch::Tensor extra = torch::zeros({1}, torch::requires_grad());
    t.opt->add_param_group(torch::optim::OptimizerParamGroup(
        {extra}, std::make_unique<torch::optim::SGDOptions>(0.02)));
    adapter.Apply(2);
    EXPECT_EQ(adapter.base_rates(), (std::vector<double>{0.1, 0.02}));
    adapter.Apply(3);  // first drop: both halve
    const auto got = GroupLearningRates(*t.opt);
    ExpectNear(0.05, got[0], "group 0");
    ExpectNear(0.01, got[1], "added group");
  }
}

// The adapter's state alone restores the base rates into a fresh adapter whose optimizer came
// back with other rates (libtorch's load keeps whatever rates the new optimizer was built with),
// and the run continues with identical rates.
TEST(ScheduleAdapter, StateSavedAndRestoredOnItsOwn) {
  const std::vector<double> bases = {0.1, 0.03};
  auto cosine =
      CosineSchedule::Create({.peak_lr = 0.1, .total_steps = 40, .min_lr = 0.004}).value();
  TwoGroups a = MakeTwoGroups(bases, false);
  auto first =
      ScheduleAdapter::Create(*a.opt, *cosine, {.group_rates = GroupRates::kFromOptimizer}).value();
  for (int64_t k = 0; k < 17; ++k) first.Apply(k);
  const std::string state = first.SaveState();

  TwoGroups b = MakeTwoGroups({0.5, 0.5}, false);  // rates as a reloaded optimizer may have
  auto second =
      ScheduleAdapter::Create(*b.opt, *cosine, {.group_rates = GroupRates::kFromOptimizer}).value();
  ASSERT_TRUE(second.RestoreState(state).ok());
  EXPECT_EQ(second.base_rates(), bases);
  EXPECT_EQ(second.last_step(), 16);
  EXPECT_EQ(second.SaveState(), state);
  for (int64_t k = 17; k < 40; ++k) {
    first.Apply(k);
    second.Apply(k);
    EXPECT_EQ(GroupLearningRates(*a.opt), GroupLearningRates(*b.opt)) << "step " << k;
  }
  // Refusals: garbage, another mode, more groups than the optimizer has.
  EXPECT_FALSE(second.RestoreState("garbage").ok());
  auto ratio = ScheduleAdapter::Create(*b.opt, *cosine).value();
  EXPECT_FALSE(ratio.RestoreState(state).ok());
  TwoGroups one = MakeTwoGroups({0.1}, false);
  auto small =
      ScheduleAdapter::Create(*one.opt, *cosine, {.group_rates = GroupRates::kFromOptimizer})
          .value();
  EXPECT_FALSE(small.RestoreState(state).ok());
}

}  // namespace
}  // namespace tessera::lr
