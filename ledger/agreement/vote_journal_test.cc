// The vote journal: durable round trip, torn last record cut off, damage before the last
// record refused, pruning; the strict decoders of votes and records.
#include "ledger/agreement/vote_journal.h"

#include <gtest/gtest.h>

#include <fstream>

#include "ledger/crypto/hash.h"

namespace tessera::ledger::agreement {
namespace {

JournalRecord Record(uint64_t height, uint32_t period, Step step, bool bottom) {
  JournalRecord r;
  r.vote.height = height;
  r.vote.period = period;
  r.vote.step = step;
  r.vote.value =
      bottom ? Value::Bottom() : Value::Of(Sha256(std::string("v").append(std::to_string(height))));
  r.vote.voter = Sha256("voter");
  r.starting_value = Value::Of(Sha256("st"));
  r.previous_bottom_quorum = period % 2 == 1;
  return r;
}

class VoteJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("journal-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = dir_ / "votes.journal";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string ReadFile() {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void WriteFile(const std::string& bytes) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  std::filesystem::path dir_, path_;
};

TEST(AgreementVoteCodec, RoundTripsAndRejectsMalformedInput) {
  Vote v{.height = 9, .period = 3, .step = Step::kLateNext, .value = Value::Of(Sha256("x"))};
  v.voter = Sha256("k");
  std::string bytes = EncodeVote(v);
  auto back = DecodeVote(AsBytes(bytes));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, v);
  EXPECT_FALSE(DecodeVote(AsBytes(bytes + "x")).ok());          // trailing byte
  EXPECT_FALSE(DecodeVote(AsBytes(bytes.substr(0, 20))).ok());  // truncated
  std::string bad_step = bytes;
  bad_step[13] = static_cast<char>(6 + kMaxNextRounds);  // past the last next round
  EXPECT_NE(DecodeVote(AsBytes(bad_step)).status().message().find("unknown step"),
            std::string::npos);
  bad_step[13] = 0;
  EXPECT_NE(DecodeVote(AsBytes(bad_step)).status().message().find("unknown step"),
            std::string::npos);
  std::string bad_flag = bytes;
  bad_flag[14] = 2;
  EXPECT_FALSE(DecodeVote(AsBytes(bad_flag)).ok());
  std::string bottom_with_hash = bytes;
  bottom_with_hash[14] = 1;  // bottom, but the hash is still there
  EXPECT_NE(DecodeVote(AsBytes(bottom_with_hash)).status().message().find("bottom"),
            std::string::npos);
  std::string other_type = bytes;
  other_type[0] = 1;
  EXPECT_FALSE(DecodeVote(AsBytes(other_type)).ok());
}

TEST_F(VoteJournalTest, AppendedRecordsSurviveReopening) {
  std::vector<JournalRecord> records = {Record(4, 0, Step::kSoft, false),
                                        Record(4, 0, Step::kNext, true),
                                        Record(5, 1, Step::kCert, false)};
  {
    auto j = VoteJournal::Open(path_);
    ASSERT_TRUE(j.ok()) << j.status();
    ASSERT_TRUE(j->Append(std::span(records).subspan(0, 2)).ok());
    ASSERT_TRUE(j->Append(std::span(records).subspan(2)).ok());
  }
  auto j = VoteJournal::Open(path_);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->records(), records);
  EXPECT_EQ(j->RecordsFor(4).size(), 2u);
  EXPECT_EQ(j->RecordsFor(5).size(), 1u);
}

TEST_F(VoteJournalTest, ATornLastRecordIsCutOffAndAppendsContinueAfterIt) {
  std::vector<JournalRecord> records = {Record(4, 0, Step::kSoft, false),
                                        Record(4, 0, Step::kCert, false)};
  {
    auto j = VoteJournal::Open(path_);
    ASSERT_TRUE(j->Append(records).ok());
  }
  std::string full = ReadFile();
  // Every cut inside the second record: the first survives, the second is gone.
  size_t one = full.size() / 2;
  for (size_t cut = one; cut < full.size(); cut += 7) {
    WriteFile(full.substr(0, cut));
    auto j = VoteJournal::Open(path_);
    ASSERT_TRUE(j.ok()) << "cut at " << cut << ": " << j.status();
    ASSERT_EQ(j->records().size(), 1u) << "cut at " << cut;
  }
  // A flipped bit in the last record's checksum: torn as well.
  std::string flipped = full;
  flipped.back() ^= 1;
  WriteFile(flipped);
  {
    auto j = VoteJournal::Open(path_);
    ASSERT_TRUE(j.ok());
    EXPECT_EQ(j->records().size(), 1u);
    JournalRecord next = Record(4, 1, Step::kSoft, false);
    ASSERT_TRUE(j->Append(std::span(&next, 1)).ok());
  }
  auto j = VoteJournal::Open(path_);
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(j->records().size(), 2u);
  EXPECT_EQ(j->records()[1], Record(4, 1, Step::kSoft, false));
}

TEST_F(VoteJournalTest, DamageBeforeTheLastRecordIsDataLoss) {
  std::vector<JournalRecord> records(4, Record(4, 0, Step::kSoft, false));
  {
    auto j = VoteJournal::Open(path_);
    ASSERT_TRUE(j->Append(records).ok());
  }
  std::string full = ReadFile();
  std::string damaged = full;
  damaged[10] ^= 0x40;  // inside the first record
  WriteFile(damaged);
  auto j = VoteJournal::Open(path_);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), StatusCode::kDataLoss);
  // A huge length in the first record is damage too, not a torn tail.
  std::string huge = full;
  huge[0] = 0x7f;
  WriteFile(huge);
  EXPECT_EQ(VoteJournal::Open(path_).status().code(), StatusCode::kDataLoss);
}

TEST_F(VoteJournalTest, PruneKeepsOnlyCurrentHeights) {
  std::vector<JournalRecord> records = {Record(3, 0, Step::kSoft, false),
                                        Record(4, 0, Step::kSoft, false),
                                        Record(5, 0, Step::kSoft, false)};
  {
    auto j = VoteJournal::Open(path_);
    ASSERT_TRUE(j->Append(records).ok());
    ASSERT_TRUE(j->PruneBelow(4).ok());
    EXPECT_EQ(j->records().size(), 2u);
    JournalRecord later = Record(6, 0, Step::kSoft, false);
    ASSERT_TRUE(j->Append(std::span(&later, 1)).ok());
  }
  auto j = VoteJournal::Open(path_);
  ASSERT_TRUE(j.ok());
  ASSERT_EQ(j->records().size(), 3u);
  EXPECT_EQ(j->records()[0].vote.height, 4u);
  EXPECT_EQ(j->records()[2].vote.height, 6u);
}

TEST(JournalRecordCodec, RejectsBottomStartingValueWithHash) {
  JournalRecord r = Record(1, 0, Step::kSoft, false);
  std::string bytes = EncodeJournalRecord(r);
  ASSERT_EQ(*DecodeJournalRecord(AsBytes(bytes)), r);
  std::string bad = bytes;
  bad[79] = 1;  // starting value marked bottom, hash kept
  EXPECT_FALSE(DecodeJournalRecord(AsBytes(bad)).ok());
  EXPECT_FALSE(DecodeJournalRecord(AsBytes(bytes.substr(0, 50))).ok());
  EXPECT_FALSE(DecodeJournalRecord(AsBytes(bytes + "z")).ok());
  // The unsent flag: a trailing 0 byte; a trailing 1 would be a second encoding of "sent".
  JournalRecord unsent = r;
  unsent.sent = false;
  std::string u = EncodeJournalRecord(unsent);
  EXPECT_EQ(u, bytes + std::string(1, '\0'));
  ASSERT_EQ(*DecodeJournalRecord(AsBytes(u)), unsent);
  EXPECT_FALSE(DecodeJournalRecord(AsBytes(bytes + std::string(1, '\1'))).ok());
  // Repeated next rounds are steps of their own; past kMaxNextRounds they are unknown.
  JournalRecord round = Record(1, 0, NextRound(kMaxNextRounds), true);
  ASSERT_EQ(*DecodeJournalRecord(AsBytes(EncodeJournalRecord(round))), round);
  std::string past = EncodeJournalRecord(round);
  past[13] = static_cast<char>(static_cast<uint8_t>(past[13]) + 1);
  EXPECT_FALSE(DecodeJournalRecord(AsBytes(past)).ok());
}

}  // namespace
}  // namespace tessera::ledger::agreement
