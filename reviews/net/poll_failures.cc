#include "reviews/net/poll_failures.h"

namespace tessera::reviews::net {

Result<std::vector<std::optional<ledger::LeafValue>>> PollLeaves(
    client::ReviewsClient& c, const std::vector<ledger::Hash256>& keys) {
  TESSERA_RETURN_IF_ERROR(c.Refresh());
  std::vector<std::optional<ledger::LeafValue>> leaves;
  leaves.reserve(keys.size());
  for (size_t begin = 0; begin < keys.size(); begin += kReadPartKeys) {
    const size_t end = std::min(keys.size(), begin + kReadPartKeys);
    TESSERA_ASSIGN_OR_RETURN(auto part, c.ReadLeaves(std::vector<ledger::Hash256>(
                                            keys.begin() + static_cast<std::ptrdiff_t>(begin),
                                            keys.begin() + static_cast<std::ptrdiff_t>(end))));
    leaves.insert(leaves.end(), part.begin(), part.end());
  }
  return leaves;
}

}  // namespace tessera::reviews::net
