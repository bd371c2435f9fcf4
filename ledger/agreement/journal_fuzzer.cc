// libFuzzer target: vote journal records (DecodeJournalRecord, strict and canonical) and whole
// journal files (ParseJournal, what VoteJournal::Open reads: records or an error, never a
// crash; the kept prefix re-parses to the same records with nothing cut off).
#include <cstdlib>

#include "ledger/agreement/vote_journal.h"
#include "ledger/fuzz/round_trip.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tessera::ledger;
  fuzz::RoundTrip(data, size, agreement::DecodeJournalRecord, agreement::EncodeJournalRecord);
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto parsed = agreement::ParseJournal(bytes, "fuzz");
  if (parsed.ok()) {
    if (parsed->good_bytes > size) std::abort();
    auto again = agreement::ParseJournal(bytes.substr(0, parsed->good_bytes), "fuzz");
    if (!again.ok() || again->records != parsed->records ||
        again->good_bytes != parsed->good_bytes) {
      std::abort();
    }
  }
  return 0;
}
