#include "lr/data.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

namespace tessera::lr {
namespace {

std::string Gzip(std::string_view raw) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&s, raw.size()) + 64, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  s.avail_in = raw.size();
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = out.size();
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

std::string Idx(std::vector<uint32_t> dims, std::string_view data) {
  std::string out = {0, 0, 8, static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift : {24, 16, 8, 0}) out.push_back(static_cast<char>((d >> shift) & 0xff));
  }
  out.append(data);
  return out;
}

class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("lr_data_test_" + std::to_string(::getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  void Write(const std::string& name, std::string_view bytes) const {
    std::ofstream(path_ / name, std::ios::binary).write(bytes.data(), bytes.size());
  }

 private:
  std::filesystem::path path_;
};

TEST(Gunzip, RoundTripsAndRejectsCorruption) {
  const std::string raw(100000, 'x');
  const std::string gz = Gzip(raw);
  EXPECT_EQ(Gunzip(gz).value(), raw);
  EXPECT_EQ(Gunzip(gz.substr(0, gz.size() / 2)).status().code(), StatusCode::kDataLoss);
  std::string flipped = gz;
  flipped[flipped.size() - 6] ^= 0x55;  // inside the CRC32 trailer
  EXPECT_EQ(Gunzip(flipped).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(Gunzip("not gzip at all").status().code(), StatusCode::kDataLoss);
}

TEST(ParseIdx, ReadsDimensionsAndData) {
  auto a = ParseIdx(Idx({2, 3}, "abcdef")).value();
  EXPECT_EQ(a.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data.size(), 6u);
  EXPECT_EQ(a.data[5], 'f');
}

TEST(ParseIdx, RejectsMalformedFiles) {
  EXPECT_FALSE(ParseIdx("").ok());
  EXPECT_FALSE(ParseIdx(std::string("\x01\x00\x08\x01", 4)).ok());
  std::string float_type = Idx({1}, "abcd");
  float_type[2] = 0x0d;
  EXPECT_FALSE(ParseIdx(float_type).ok());
  EXPECT_FALSE(ParseIdx(Idx({2, 3}, "abcde")).ok());    // short
  EXPECT_FALSE(ParseIdx(Idx({2, 3}, "abcdefg")).ok());  // long
  EXPECT_FALSE(ParseIdx(Idx({0}, "")).ok());
  EXPECT_FALSE(ParseIdx(Idx({65536, 65536, 65536}, "")).ok());              // no giant allocation
  EXPECT_FALSE(ParseIdx(std::string("\x00\x00\x08\x02\x00\x00", 6)).ok());  // truncated header
}

TEST(LoadFashionMnist, ReadsAFakeSplitAndHonoursTheLimit) {
  TempDir dir;
  std::string pixels;
  for (int i = 0; i < 3 * 4; ++i) pixels.push_back(static_cast<char>(i));
  dir.Write("t10k-images-idx3-ubyte.gz", Gzip(Idx({3, 2, 2}, pixels)));
  dir.Write("t10k-labels-idx1-ubyte.gz", Gzip(Idx({3}, std::string("\x01\x09\x00", 3))));
  auto all = LoadFashionMnist(dir.path(), "t10k").value();
  EXPECT_EQ(all.count, 3);
  EXPECT_EQ(all.rows, 2);
  EXPECT_EQ(all.labels, (std::vector<uint8_t>{1, 9, 0}));
  EXPECT_EQ(all.pixels[11], 11);
  auto two = LoadFashionMnist(dir.path(), "t10k", 2).value();
  EXPECT_EQ(two.count, 2);
  EXPECT_EQ(two.pixels.size(), 8u);
  EXPECT_FALSE(LoadFashionMnist(dir.path(), "train").ok());  // files missing
  EXPECT_FALSE(LoadFashionMnist(dir.path(), "validation").ok());
}

TEST(LoadFashionMnist, RejectsMismatchedOrBadLabels) {
  TempDir dir;
  dir.Write("t10k-images-idx3-ubyte.gz", Gzip(Idx({2, 1, 1}, "ab")));
  dir.Write("t10k-labels-idx1-ubyte.gz", Gzip(Idx({3}, std::string("\x01\x02\x03", 3))));
  EXPECT_FALSE(LoadFashionMnist(dir.path(), "t10k").ok());
  dir.Write("t10k-labels-idx1-ubyte.gz", Gzip(Idx({2}, std::string("\x01\x0a", 2))));
  EXPECT_FALSE(LoadFashionMnist(dir.path(), "t10k").ok());
}

TEST(LoadFashionMnist, ReadsTheRealDebianFiles) {
  if (!std::filesystem::exists(std::string(kFashionMnistDir) + "/t10k-labels-idx1-ubyte.gz")) {
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  }
  auto test = LoadFashionMnist(kFashionMnistDir, "t10k").value();
  EXPECT_EQ(test.count, 10000);
  EXPECT_EQ(test.rows, 28);
  EXPECT_EQ(test.cols, 28);
  std::vector<int> per_class(10);
  for (uint8_t l : test.labels) ++per_class[l];
  for (int c : per_class) EXPECT_EQ(c, 1000);  // the test split is balanced
}

TEST(LoadFortunes, JoinsPlainFilesAndDropsSeparators) {
  TempDir dir;
  dir.Write("b", "second\n%\nthird\n");
  dir.Write("a", "first\n%\n");
  dir.Write("a.dat", "binary index");
  dir.Write("a.u8", "duplicate");
  EXPECT_EQ(LoadFortunes(dir.path()).value(), "first\n\nsecond\n\nthird\n");
  TempDir empty;
  EXPECT_EQ(LoadFortunes(empty.path()).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(LoadFortunes(empty.path() / "missing").ok());
}

}  // namespace
}  // namespace tessera::lr
