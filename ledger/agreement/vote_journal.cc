#include "ledger/agreement/vote_journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "ledger/codec/canonical.h"
#include "ledger/crypto/hash.h"

namespace tessera::ledger::agreement {

namespace {

constexpr size_t kVoteBytes = 1 + 8 + 4 + 1 + 1 + 32 + 32;

std::string Frame(const JournalRecord& r) {
  std::string body = EncodeJournalRecord(r);
  Hash256 sum = Sha256(body);
  CanonicalWriter w;
  w.U32(static_cast<uint32_t>(body.size()));
  std::string out = w.Take() + body;
  out.append(reinterpret_cast<const char*>(sum.data()), 8);
  return out;
}

Status Errno(const std::string& what, const std::filesystem::path& path) {
  return InternalError(what + " " + path.string() + ": " + std::strerror(errno));
}

Status WriteAll(int fd, const std::string& bytes, const std::filesystem::path& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path);
    }
    done += static_cast<size_t>(n);
  }
  if (::fdatasync(fd) != 0) return Errno("fdatasync", path);
  return Status::Ok();
}

}  // namespace

std::string EncodeJournalRecord(const JournalRecord& r) {
  CanonicalWriter w;
  w.Raw(AsBytes(EncodeVote(r.vote)));
  w.Bool(r.starting_value.bottom).Array(r.starting_value.hash).Bool(r.previous_bottom_quorum);
  if (!r.sent) w.Bool(false);  // absent: sent (the records written before the flag existed)
  return w.Take();
}

Result<JournalRecord> DecodeJournalRecord(ByteSpan bytes) {
  if (bytes.size() < kVoteBytes) {
    return InvalidArgumentError("journal record: truncated (" + std::to_string(bytes.size()) +
                                " bytes)");
  }
  JournalRecord r;
  TESSERA_ASSIGN_OR_RETURN(r.vote, DecodeVote(bytes.subspan(0, kVoteBytes)));
  CanonicalReader reader(bytes.subspan(kVoteBytes), "journal record");
  TESSERA_RETURN_IF_ERROR(reader.Bool(&r.starting_value.bottom, "starting value bottom"));
  TESSERA_RETURN_IF_ERROR(reader.Array(&r.starting_value.hash, "starting value"));
  if (r.starting_value.bottom && r.starting_value.hash != Hash256{}) {
    return reader.Error("bottom starting value with a hash");
  }
  TESSERA_RETURN_IF_ERROR(reader.Bool(&r.previous_bottom_quorum, "previous bottom quorum"));
  // An unsent vote (off the step's committee) ends in a 0 byte; a sent one ends here, as
  // every record did before committees were drawn per step.
  if (reader.remaining() > 0) {
    bool sent = true;
    TESSERA_RETURN_IF_ERROR(reader.Bool(&sent, "sent"));
    if (sent) return reader.Error("a sent vote's record carries the unsent flag");
    r.sent = false;
  }
  TESSERA_RETURN_IF_ERROR(reader.Finish());
  return r;
}

Result<ParsedJournal> ParseJournal(std::string_view data, const std::string& name) {
  ParsedJournal parsed;
  size_t pos = 0;
  while (pos < data.size()) {
    auto damaged = [&](const std::string& why) -> Status {
      return DataLossError("vote journal " + name + ": " + why + " at offset " +
                           std::to_string(pos) + " before the last record");
    };
    if (data.size() - pos < 4) break;  // torn length
    uint32_t len = (uint32_t{uint8_t(data[pos])} << 24) | (uint32_t{uint8_t(data[pos + 1])} << 16) |
                   (uint32_t{uint8_t(data[pos + 2])} << 8) | uint32_t{uint8_t(data[pos + 3])};
    size_t end = pos + 4 + size_t{len} + 8;
    // An append that was cut short leaves at most one incomplete record at the end: more
    // bytes than a whole record can hold means damage, not a torn append.
    bool could_be_last = data.size() - pos <= 4 + VoteJournal::kMaxRecordBytes + 8;
    if (len > VoteJournal::kMaxRecordBytes || end > data.size()) {
      if (could_be_last) break;
      return damaged("record length " + std::to_string(len) + " out of bounds");
    }
    std::string_view body = data.substr(pos + 4, len);
    Hash256 sum = Sha256(body);
    bool sum_ok = std::memcmp(sum.data(), data.data() + pos + 4 + len, 8) == 0;
    auto record = DecodeJournalRecord(AsBytes(body));
    if (!sum_ok || !record.ok()) {
      if (end == data.size()) break;  // a torn last record: its vote was never sent
      return damaged(sum_ok ? record.status().message() : "checksum mismatch");
    }
    parsed.records.push_back(*record);
    pos = end;
    parsed.good_bytes = end;
  }
  return parsed;
}

Result<VoteJournal> VoteJournal::Open(const std::filesystem::path& path) {
  std::string data;
  {
    std::ifstream in(path, std::ios::binary);
    if (in) data.assign(std::istreambuf_iterator<char>(in), {});
  }
  TESSERA_ASSIGN_OR_RETURN(ParsedJournal parsed, ParseJournal(data, path.string()));
  std::vector<JournalRecord> records = std::move(parsed.records);
  size_t good_end = parsed.good_bytes;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("open", path);
  if (::ftruncate(fd, static_cast<off_t>(good_end)) != 0 ||
      ::lseek(fd, static_cast<off_t>(good_end), SEEK_SET) < 0 || ::fsync(fd) != 0) {
    Status s = Errno("truncate", path);
    ::close(fd);
    return s;
  }
  return VoteJournal(path, fd, std::move(records));
}

VoteJournal::VoteJournal(VoteJournal&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), records_(std::move(other.records_)) {
  other.fd_ = -1;
}

VoteJournal& VoteJournal::operator=(VoteJournal&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    records_ = std::move(other.records_);
    other.fd_ = -1;
  }
  return *this;
}

VoteJournal::~VoteJournal() {
  if (fd_ >= 0) ::close(fd_);
}

Status VoteJournal::Append(std::span<const JournalRecord> records) {
  if (records.empty()) return Status::Ok();
  std::string bytes;
  for (const JournalRecord& r : records) bytes += Frame(r);
  TESSERA_RETURN_IF_ERROR(WriteAll(fd_, bytes, path_));
  records_.insert(records_.end(), records.begin(), records.end());
  return Status::Ok();
}

Status VoteJournal::PruneBelow(uint64_t height) {
  std::vector<JournalRecord> kept;
  for (const JournalRecord& r : records_) {
    if (r.vote.height >= height) kept.push_back(r);
  }
  if (kept.size() == records_.size()) return Status::Ok();
  std::filesystem::path tmp = path_;
  tmp += ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("open", tmp);
  std::string bytes;
  for (const JournalRecord& r : kept) bytes += Frame(r);
  Status written = WriteAll(fd, bytes, tmp);
  ::close(fd);
  TESSERA_RETURN_IF_ERROR(written);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) return Errno("rename", tmp);
  std::filesystem::path dir = path_.has_parent_path() ? path_.parent_path() : ".";
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  int newfd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (newfd < 0) return Errno("reopen", path_);
  ::close(fd_);
  fd_ = newfd;
  records_ = std::move(kept);
  return Status::Ok();
}

std::vector<JournalRecord> VoteJournal::RecordsFor(uint64_t height) const {
  std::vector<JournalRecord> out;
  for (const JournalRecord& r : records_) {
    if (r.vote.height == height) out.push_back(r);
  }
  return out;
}

}  // namespace tessera::ledger::agreement
