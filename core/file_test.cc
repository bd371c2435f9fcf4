#include "core/file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

namespace tessera {
namespace {

TEST(FileTest, AtomicWriteReplacesContentsWithMode) {
  auto dir = std::filesystem::temp_directory_path() / "tessera_file_test";
  std::filesystem::create_directories(dir);
  auto path = dir / "key";
  ASSERT_TRUE(WriteFileAtomically(path, "first").ok());
  ASSERT_TRUE(WriteFileAtomically(path, std::string("sec\0ret", 7), 0600).ok());
  Result<std::string> read = ReadFile(path);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, std::string("sec\0ret", 7));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // No temporary files are left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);
  std::filesystem::remove_all(dir);
}

TEST(FileTest, MissingFileAndUnwritableDirectory) {
  EXPECT_EQ(ReadFile("/nonexistent/tessera").status().code(), StatusCode::kNotFound);
  Status status = WriteFileAtomically("/nonexistent/dir/file", "x");
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/nonexistent/dir"), std::string::npos);
}

}  // namespace
}  // namespace tessera
