// The citizen's vote journal: every vote is appended and fsync'd here BEFORE it is sent, so
// a citizen that crashes and restarts resumes with the votes it cast and never casts a
// different vote for a (height, period, step) (go-algorand's agreement/persistence.go plays
// this part).
//
// File format: a sequence of records, each
//   u32 length (big-endian) | record (EncodeJournalRecord, `length` bytes) | 8-byte checksum
// where the checksum is the first 8 bytes of SHA-256 of the record. Open() reads every record;
// an incomplete or mismatching LAST record (a crash in the middle of an append, before the
// fsync returned, so its vote was never sent) is cut off; a bad record before the last one is
// DATA_LOSS (the file is damaged, and guessing could make the citizen vote twice).
//
//   TESSERA_ASSIGN_OR_RETURN(VoteJournal j, VoteJournal::Open(dir / "votes.journal"));
//   Player player(params, h, pk, j.RecordsFor(h), now);
//   TESSERA_RETURN_IF_ERROR(j.Append(actions.votes));   // fsync'd
//   send(actions.votes);
//   TESSERA_RETURN_IF_ERROR(j.PruneBelow(h));            // after committing h - 1
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ledger/agreement/player.h"

namespace tessera::ledger::agreement {

// Canonical: EncodeVote(vote) | bool bottom | 32-byte starting value | bool previous bottom
// quorum | a 0 byte iff the vote was not sent (JournalRecord::sent; records of sent votes end
// before it, as every record did before the flag existed). Strict decoder (same rules as
// DecodeVote; a 1 byte there is refused, so the encoding stays canonical).
std::string EncodeJournalRecord(const JournalRecord& r);
Result<JournalRecord> DecodeJournalRecord(ByteSpan bytes);

// The journal file's bytes parsed as Open() does, without touching the disk: the records, and
// the length of the good prefix (what Open() keeps). DATA_LOSS for damage before the last
// record. `name` is for error messages.
struct ParsedJournal {
  std::vector<JournalRecord> records;
  size_t good_bytes = 0;
};
Result<ParsedJournal> ParseJournal(std::string_view data, const std::string& name);

class VoteJournal {
 public:
  static constexpr size_t kMaxRecordBytes = 256;

  // Opens or creates the journal; cuts off a torn last record (see above).
  static Result<VoteJournal> Open(const std::filesystem::path& path);

  VoteJournal(VoteJournal&& other) noexcept;
  VoteJournal& operator=(VoteJournal&& other) noexcept;
  ~VoteJournal();

  // Appends the records and fsyncs; returns only after they are durable.
  Status Append(std::span<const JournalRecord> records);
  // Drops records of heights below `height` (rewrites the file atomically: temp, fsync,
  // rename, fsync of the directory).
  Status PruneBelow(uint64_t height);

  std::vector<JournalRecord> RecordsFor(uint64_t height) const;
  const std::vector<JournalRecord>& records() const { return records_; }

 private:
  VoteJournal(std::filesystem::path path, int fd, std::vector<JournalRecord> records)
      : path_(std::move(path)), fd_(fd), records_(std::move(records)) {}
  std::filesystem::path path_;
  int fd_ = -1;
  std::vector<JournalRecord> records_;
};

}  // namespace tessera::ledger::agreement
