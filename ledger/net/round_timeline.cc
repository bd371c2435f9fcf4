#include "ledger/net/round_timeline.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <string>

namespace tessera::ledger::net {

void AppendRoundTimeline(const std::filesystem::path& path, std::string_view event, uint64_t height,
                         size_t txs) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  std::ofstream out(path, std::ios::app);
  out << event << '\t' << height << '\t' << txs << '\t' << us << '\n';
}

namespace {

std::optional<uint64_t> Number(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

Result<RoundTimeline> ParseRoundTimeline(std::string_view text) {
  RoundTimeline t;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_no;
    if (line.empty()) continue;
    std::vector<std::string_view> fields;
    for (size_t start = 0;;) {
      const size_t tab = line.find('\t', start);
      fields.push_back(line.substr(start, tab - start));
      if (tab == std::string_view::npos) break;
      start = tab + 1;
    }
    std::optional<uint64_t> height, txs, us;
    if (fields.size() == 4)
      height = Number(fields[1]), txs = Number(fields[2]), us = Number(fields[3]);
    if (!height || !txs || !us || (fields[0] != "freeze" && fields[0] != "commit")) {
      return InvalidArgumentError("round timeline line " + std::to_string(line_no) +
                                  ": not 'freeze|commit <height> <txs> <unix_us>'");
    }
    const RoundTimeline::Time when{std::chrono::microseconds(*us)};
    if (fields[0] == "freeze") {
      t.frozen[*height] = when;  // a restarted politician may freeze again: the last counts
    } else {
      t.committed.emplace(*height, when);
    }
  }
  return t;
}

namespace {

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

LatencyBreakdown BreakDownLatency(const std::vector<CommittedTransfer>& txs,
                                  const std::vector<RoundTimeline>& timelines,
                                  std::chrono::nanoseconds system_minus_steady) {
  // Every time on the steady clock, in seconds from an arbitrary origin.
  auto steady_s = [](CommittedTransfer::Time t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  };
  auto system_s = [&](RoundTimeline::Time t) {
    return std::chrono::duration<double>(t.time_since_epoch() - system_minus_steady).count();
  };
  std::map<uint64_t, double> first_commit;
  for (const RoundTimeline& t : timelines) {
    for (const auto& [h, when] : t.committed) {
      auto [it, fresh] = first_commit.emplace(h, system_s(when));
      if (!fresh) it->second = std::min(it->second, system_s(when));
    }
  }
  struct Row {
    double admission, mempool, pool_to_block, block_to_visible, total;
  };
  std::vector<Row> rows;
  LatencyBreakdown b;
  for (const CommittedTransfer& tx : txs) {
    std::optional<double> freeze;
    for (uint32_t p : tx.politicians) {
      if (p >= timelines.size()) continue;
      auto it = timelines[p].frozen.find(tx.height);
      if (it != timelines[p].frozen.end()) {
        freeze = std::min(freeze.value_or(system_s(it->second)), system_s(it->second));
      }
    }
    auto commit = first_commit.find(tx.height);
    if (!freeze || commit == first_commit.end()) {
      ++b.unattributed;
      continue;
    }
    // Consecutive points; a point earlier than the one before it (clock reading order across
    // processes) counts as that one, so no stage is negative and the stages add up.
    const double t0 = steady_s(tx.first_submit);
    const double t1 = std::max(t0, steady_s(tx.accepted));
    const double t2 = std::max(t1, *freeze);
    const double t3 = std::max(t2, commit->second);
    const double t4 = std::max(t3, steady_s(tx.visible));
    rows.push_back({t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0});
  }
  b.attributed = rows.size();
  if (rows.empty()) return b;
  std::vector<double> total;
  for (const Row& r : rows) total.push_back(r.total);
  const double tail_from = Percentile(total, 0.99);
  auto stage = [&](double Row::*field) {
    std::vector<double> v;
    double tail_sum = 0;
    size_t tail_n = 0;
    for (const Row& r : rows) {
      v.push_back(r.*field);
      if (r.total >= tail_from) tail_sum += r.*field, ++tail_n;
    }
    return LatencyStage{.p50_s = Percentile(v, 0.5),
                        .p99_s = Percentile(v, 0.99),
                        .tail_mean_s = tail_n ? tail_sum / static_cast<double>(tail_n) : 0};
  };
  b.admission = stage(&Row::admission);
  b.mempool = stage(&Row::mempool);
  b.pool_to_block = stage(&Row::pool_to_block);
  b.block_to_visible = stage(&Row::block_to_visible);
  b.total = stage(&Row::total);
  return b;
}

}  // namespace tessera::ledger::net
