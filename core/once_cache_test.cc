#include "core/once_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace tessera {
namespace {

// Successes are kept until `capacity` newer ones push them out, oldest first; failures are
// computed again every time. Seen failing with a failed computation left in flight (the
// second bad lookup joined it instead of computing).
TEST(OnceCacheTest, KeepsSuccessesOldestFirstOutAndNeverFailures) {
  OnceCache<std::string, int> cache(2);
  int runs = 0;
  auto get = [&](const std::string& key) {
    return cache.GetOrCompute(key, [&]() -> Result<int> {
      ++runs;
      if (key == "bad") return InvalidArgumentError("bad");
      return static_cast<int>(key.size());
    });
  };
  EXPECT_EQ(*get("a"), 1);
  EXPECT_EQ(*get("bb"), 2);
  EXPECT_EQ(*get("a"), 1);  // kept
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(*get("ccc"), 3);  // pushes out "a", the oldest kept
  EXPECT_EQ(*get("bb"), 2);
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(*get("a"), 1);
  EXPECT_EQ(runs, 4);
  EXPECT_FALSE(get("bad").ok());
  EXPECT_FALSE(get("bad").ok());
  EXPECT_EQ(runs, 6);
  const OnceCacheStats stats = cache.stats();
  EXPECT_EQ(stats.computed, 6u);
  EXPECT_EQ(stats.hits, 2u);
  EXPECT_EQ(stats.joined, 0u);
}

}  // namespace
}  // namespace tessera
