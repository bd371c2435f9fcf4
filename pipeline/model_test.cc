#include "pipeline/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "pipeline/profile.h"

namespace tessera::pipeline {
namespace {

ModelSpec Gpt(double dropout) {
  ModelSpec s;
  s.layers = 2;
  s.width = 16;
  s.vocab = 32;
  s.seq_len = 8;
  s.dropout = dropout;
  return s;
}

// The token table's gradient is sparse (the micro-batch's rows only), so a micro-batch does not
// allocate, zero and add the whole 50257 x 768 table as a dense one would (0.14 s per micro-batch
// of GPT-2-small's profile); bound to a dense gradient first (BindDenseGradients, or the
// runtime's flat buffer) the rows add into it in place. Reference that shares no code with the
// embedding: for loss = sum of the unit's output, d loss / d row v = (times v occurs) x ones.
// Seen failing with the table dense again (sparse(false)): "gradient not sparse".
TEST(CutModel, TokenEmbeddingGradientIsSparseAndAddsIntoADenseOne) {
  const ModelSpec spec = Gpt(0);
  const torch::Tensor x = torch::randint(spec.vocab, {3, spec.seq_len}, torch::kLong);
  const torch::Tensor counts = torch::bincount(x.flatten(), {}, spec.vocab).to(torch::kFloat);
  {
    auto model = CutModel::Build(spec, 1);
    ASSERT_TRUE(model.ok());
    torch::Tensor table = (*model)->UnitParameters(0)[0];
    ASSERT_EQ(table.sizes(), torch::IntArrayRef({spec.vocab, spec.width}));
    (*model)->ForwardRange(0, 1, x, {1, 0, 0}).sum().backward();
    ASSERT_TRUE(table.grad().defined());
    EXPECT_TRUE(table.grad().is_sparse()) << "gradient not sparse";
  }
  auto model = CutModel::Build(spec, 1);
  ASSERT_TRUE(model.ok());
  (*model)->BindDenseGradients();
  torch::Tensor table = (*model)->UnitParameters(0)[0];
  for (int micro = 0; micro < 2; ++micro) {
    (*model)->ForwardRange(0, 1, x, {1, 0, micro}).sum().backward();
  }
  ASSERT_FALSE(table.grad().is_sparse());
  const torch::Tensor want = 2 * counts.unsqueeze(1).expand({spec.vocab, spec.width});
  EXPECT_TRUE(torch::equal(table.grad(), want)) << "accumulated gradient differs";
}

// The recompute must see the first forward's dropout masks: the same key gives bit-identical
// outputs, a different key does not (so the check has teeth).
TEST(CutModel, SameKeyRepeatsDropoutExactly) {
  auto model = CutModel::Build(Gpt(0.3), 1);
  auto data = Dataset::Create(Gpt(0.3), 1);
  ASSERT_TRUE(model.ok() && data.ok());
  Batch b = (*data)->Rows(0, 8, 0, 4);
  const RngKey key{1, 3, 5};
  torch::Tensor first, again, other;
  {
    torch::NoGradGuard no_grad;  // the forward without autograd...
    first = (*model)->ForwardRange(0, 4, b.input, key);
  }
  torch::rand({100});                                  // unrelated draws in between do not matter
  again = (*model)->ForwardRange(0, 4, b.input, key);  // ...and the recompute with it
  other = (*model)->ForwardRange(0, 4, b.input, RngKey{1, 3, 6});
  EXPECT_TRUE(torch::equal(first, again.detach()));
  EXPECT_FALSE(torch::equal(first, other.detach()));
}

// Masks depend on the unit, not on how units are grouped into stages.
TEST(CutModel, SplittingIntoStagesChangesNothing) {
  auto model = CutModel::Build(Gpt(0.2), 2);
  auto data = Dataset::Create(Gpt(0.2), 2);
  ASSERT_TRUE(model.ok() && data.ok());
  Batch b = (*data)->Rows(1, 8, 2, 2);
  const RngKey key{2, 1, 1};
  torch::NoGradGuard no_grad;
  auto whole = (*model)->ForwardRange(0, 4, b.input, key);
  auto split = (*model)->ForwardRange(0, 1, b.input, key);
  split = (*model)->ForwardRange(1, 3, split, key);
  split = (*model)->ForwardRange(3, 4, split, key);
  EXPECT_TRUE(torch::equal(whole, split));
  EXPECT_EQ(whole.sizes(), (std::vector<int64_t>{2, 8, 32}));
}

TEST(CutModel, SameSeedSameWeights) {
  auto a = CutModel::Build(Gpt(0), 5);
  auto b = CutModel::Build(Gpt(0), 5);
  auto c = CutModel::Build(Gpt(0), 6);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ((*a)->num_units(), 4);
  for (int u = 0; u < 4; ++u) {
    auto pa = (*a)->UnitParameters(u), pb = (*b)->UnitParameters(u), pc = (*c)->UnitParameters(u);
    ASSERT_EQ(pa.size(), pb.size());
    for (size_t k = 0; k < pa.size(); ++k) EXPECT_TRUE(torch::equal(pa[k], pb[k]));
  }
  bool differs = false;  // LayerNorm weights start at 1 whatever the seed; linear ones do not
  for (size_t k = 0; k < (*a)->UnitParameters(1).size(); ++k) {
    differs |= !torch::equal((*a)->UnitParameters(1)[k], (*c)->UnitParameters(1)[k]);
  }
  EXPECT_TRUE(differs);
}

TEST(CutModel, CnnShapesAndBadSpecs) {
  ModelSpec cnn;
  cnn.kind = "cnn";
  cnn.layers = 2;
  cnn.width = 4;
  cnn.image = 8;
  auto model = CutModel::Build(cnn, 1);
  auto data = Dataset::Create(cnn, 1);
  ASSERT_TRUE(model.ok() && data.ok());
  Batch b = (*data)->Rows(0, 4, 0, 4);
  auto out = (*model)->ForwardRange(0, 3, b.input, {});
  EXPECT_EQ(out.sizes(), (std::vector<int64_t>{4, 10}));
  EXPECT_GT((*model)->Loss(out, b.target).item<double>(), 0);
  cnn.kind = "mlp";
  EXPECT_FALSE(CutModel::Build(cnn, 1).ok());
  ModelSpec text = Gpt(0);
  text.text_path = "/nonexistent/text";
  text.vocab = 96;
  EXPECT_EQ(Dataset::Create(text, 1).status().code(), StatusCode::kNotFound);
}

// The profile times every unit and sizes every cut exactly: a block's output is the residual
// stream [micro-batch, seq, width], the LM head's the logits [micro-batch, seq, vocab] (float).
TEST(Profile, TimesAndSizesEveryUnit) {
  const ModelSpec spec = Gpt(0.1);
  auto p = ProfileUnits(spec, 4, 1, 3, 7);
  ASSERT_TRUE(p.ok()) << p.status();
  const int units = NumUnits(spec);
  ASSERT_EQ(static_cast<int>(p->forward_s.size()), units);
  ASSERT_EQ(static_cast<int>(p->backward_s.size()), units);
  for (int u = 0; u < units; ++u) {
    EXPECT_GT(p->forward_s[u], 0) << u;
    EXPECT_GT(p->backward_s[u], 0) << u;
    EXPECT_DOUBLE_EQ(p->output_bytes[u],
                     4.0 * spec.seq_len * (u + 1 < units ? spec.width : spec.vocab) * 4)
        << u;
    EXPECT_GT(p->param_bytes[u], 0) << u;
  }
  // Token ids are int64: [micro-batch, seq]. The first block holds 12 w^2 + 13 w floats
  // (attention in/out projections, two MLP layers of 4w, two layer norms).
  EXPECT_DOUBLE_EQ(p->input_bytes, 4.0 * spec.seq_len * 8);
  ASSERT_EQ(static_cast<int>(p->param_bytes.size()), units);
  const double w = spec.width;
  EXPECT_DOUBLE_EQ(p->param_bytes[1], 4 * (12 * w * w + 13 * w));
  const auto with = ProfiledUnitCosts(*p, true), without = ProfiledUnitCosts(*p, false);
  for (int u = 0; u < units; ++u) {
    EXPECT_DOUBLE_EQ(with[u], 2 * p->forward_s[u] + p->backward_s[u]);
    EXPECT_DOUBLE_EQ(without[u], p->forward_s[u] + p->backward_s[u]);
  }
  ASSERT_EQ(static_cast<int>(p->optimizer_s.size()), units);  // timed after the backwards
  for (int u = 0; u < units; ++u) EXPECT_GT(p->optimizer_s[u], 0) << u;
  ASSERT_FALSE(p->contended.empty());
  EXPECT_GT(p->contended[0].cpu_share, 0);  // the lone run's share of a core, measured
  EXPECT_LE(p->contended[0].cpu_share, 1.05);
  EXPECT_FALSE(ProfileUnits(spec, 0, 1, 3, 7).ok());
  EXPECT_FALSE(ProfileUnits(spec, 4, 1, 0, 7).ok());
  ModelSpec bad = spec;
  bad.width = 15;  // not a multiple of the heads
  EXPECT_FALSE(ProfileUnits(bad, 4, 1, 3, 7).ok());
}

// The contention profile's core share sees the contention: twice as many timing threads as the
// machine has cores cannot get more than half a core each, whatever else runs, and the share
// measured inside the tasks is not above what the threads got over the whole timed stretch
// (ContendedTimes::window_cpu_share). Broken on purpose in issue #14's fifth session: with
// TaskTimer's CPU reads outside its wall window it failed 3 of 3 runs at load 21-48 (in-task
// share 0.22-0.60 against 0.08 really had; the old bound of 0.6 alone passed 2 of them). A
// share computed from wall time alone (1) or not measured (0) fails too. That the copies time
// only while all run is CopyGate's test (pipeline/copy_gate_test.cc): this one did not notice
// the gate's removal under load. (The run's share, the other side of the launcher's
// CPU-normalized comparison, is checked in pipeline_integration_test.)
TEST(Profile, ContentionShareSeesSharedCores) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto p = ProfileUnits(Gpt(0), 4, 1, 3, 7, "sgd", 0.2);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(ProfileContention(Gpt(0), 4, 2 * cores, 1, 3, 0.3, 7, *p).ok());
  const ContendedTimes& crowded = p->contended.back();
  ASSERT_EQ(crowded.workers, 2 * cores);
  std::cout << crowded.workers << " copies: share of a core in tasks " << crowded.cpu_share
            << ", over the timed stretch " << crowded.window_cpu_share << "\n";
  EXPECT_GT(crowded.cpu_share, 0);
  EXPECT_LE(crowded.window_cpu_share, 0.55) << "threads: " << 2 * cores << ", cores: " << cores;
  EXPECT_LE(crowded.cpu_share, 1.15 * crowded.window_cpu_share + 0.01)
      << "window share " << crowded.window_cpu_share;
}

}  // namespace
}  // namespace tessera::pipeline
