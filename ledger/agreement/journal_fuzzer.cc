// libFuzzer target: vote journal records (DecodeJournalRecord, strict and canonical), and a
// whole journal file of arbitrary bytes opened by VoteJournal::Open (error or records, never a
// crash; a reopened journal reads the same records).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ledger/agreement/vote_journal.h"
#include "ledger/fuzz/round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger;
  fuzz::RoundTrip(data, size, agreement::DecodeJournalRecord, agreement::EncodeJournalRecord);
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("journal-fuzz-" + std::to_string(::getpid()));
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  auto first = agreement::VoteJournal::Open(path);
  if (first.ok()) {
    std::vector<agreement::JournalRecord> records = first->records();
    auto second = agreement::VoteJournal::Open(path);
    if (!second.ok() || second->records() != records) std::abort();
  }
  return 0;
}
