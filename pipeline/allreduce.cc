#include "pipeline/allreduce.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "fmt/format.h"

namespace tessera::pipeline {

Status RingAllreduce(Transport& transport, const std::vector<int>& group, uint64_t tag_base,
                     std::span<float> data, Transport::Duration timeout) {
  const int n = static_cast<int>(group.size());
  auto self = std::find(group.begin(), group.end(), transport.rank());
  if (self == group.end()) {
    return InvalidArgumentError(
        fmt::format("rank {} is not in its all-reduce group", transport.rank()));
  }
  if (n == 1) return Status::Ok();
  const int i = static_cast<int>(self - group.begin());
  const int next = group[(i + 1) % n];
  const int prev = group[(i + n - 1) % n];
  const size_t total = data.size();
  auto begin = [&](int c) { return total * static_cast<size_t>(c) / n; };
  auto chunk = [&](int c) { return data.subspan(begin(c), begin(c + 1) - begin(c)); };
  auto mod = [&](int x) { return ((x % n) + n) % n; };
  auto send = [&](int c, uint64_t tag) {
    std::span<float> s = chunk(c);
    return transport.Send(next, tag,
                          std::string(reinterpret_cast<const char*>(s.data()), s.size_bytes()));
  };
  auto receive = [&](int c, uint64_t tag, bool add) -> Status {
    TESSERA_ASSIGN_OR_RETURN(std::string bytes, transport.Recv(prev, tag, timeout));
    std::span<float> r = chunk(c);
    if (bytes.size() != r.size_bytes()) {
      return InvalidArgumentError(fmt::format(
          "all-reduce: rank {} sent {} bytes for a {}-byte chunk (buffers differ in size?)", prev,
          bytes.size(), r.size_bytes()));
    }
    if (add) {
      const float* in = reinterpret_cast<const float*>(bytes.data());
      for (size_t k = 0; k < r.size(); ++k) r[k] += in[k];
    } else {
      std::memcpy(r.data(), bytes.data(), bytes.size());
    }
    return Status::Ok();
  };
  for (int k = 0; k < n - 1; ++k) {  // reduce-scatter: rank i ends owning chunk i+1
    TESSERA_RETURN_IF_ERROR(send(mod(i - k), tag_base + k));
    TESSERA_RETURN_IF_ERROR(receive(mod(i - k - 1), tag_base + k, /*add=*/true));
  }
  for (int k = 0; k < n - 1; ++k) {  // all-gather
    TESSERA_RETURN_IF_ERROR(send(mod(i + 1 - k), tag_base + n + k));
    TESSERA_RETURN_IF_ERROR(receive(mod(i - k), tag_base + n + k, /*add=*/false));
  }
  return Status::Ok();
}

}  // namespace tessera::pipeline
