#include "lr/results_store.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "core/file.h"

namespace tessera::lr {
namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  std::istringstream in(line);
  while (std::getline(in, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::string JoinCsv(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + fields[i];
  return out;
}

}  // namespace

Result<ResultsStore> ResultsStore::Open(const std::string& path,
                                        const std::vector<std::string>& header) {
  if (header.empty()) return InvalidArgumentError("results header is empty");
  const std::string header_line = JoinCsv(header);
  std::map<std::string, std::vector<std::string>> rows;
  std::string kept = header_line + "\n";
  if (std::filesystem::exists(path)) {
    TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    std::istringstream in(text);
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
      if (first) {
        if (line != header_line) {
          return FailedPreconditionError(
              fmt::format("{} has header '{}', expected '{}': a results file of another grid", path,
                          line, header_line));
        }
        first = false;
        continue;
      }
      if (in.eof()) break;  // no newline: a torn row, the run is redone
      auto fields = SplitCsv(line);
      if (fields.size() != header.size() || fields[0].empty()) continue;
      if (rows.emplace(fields[0], fields).second) kept += line + "\n";
    }
  }
  // Rewrite without torn or foreign rows, then append from there.
  TESSERA_RETURN_IF_ERROR(WriteFileAtomically(path, kept));
  std::FILE* f = std::fopen(path.c_str(), "a");
  if (f == nullptr) return InternalError(fmt::format("cannot append to {}", path));
  ResultsStore store(path, header.size(), f);
  store.rows_ = std::move(rows);
  return store;
}

ResultsStore::ResultsStore(ResultsStore&& o) noexcept
    : path_(std::move(o.path_)), columns_(o.columns_), file_(o.file_), rows_(std::move(o.rows_)) {
  o.file_ = nullptr;
}

ResultsStore::~ResultsStore() {
  if (file_ != nullptr) std::fclose(file_);
}

const std::vector<std::string>* ResultsStore::Find(const std::string& key) const {
  auto it = rows_.find(key);
  return it == rows_.end() ? nullptr : &it->second;
}

Status ResultsStore::Append(const std::vector<std::string>& row) {
  if (row.size() != columns_) {
    return InvalidArgumentError(
        fmt::format("results row has {} fields, the file {}", row.size(), columns_));
  }
  for (const auto& f : row) {
    if (f.find_first_of(",\n") != std::string::npos) {
      return InvalidArgumentError(fmt::format("results field '{}' has a comma or newline", f));
    }
  }
  if (row[0].empty() || rows_.count(row[0])) {
    return InvalidArgumentError(fmt::format("results key '{}' empty or present", row[0]));
  }
  const std::string line = JoinCsv(row) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0 ||
      ::fsync(fileno(file_)) != 0) {
    return InternalError(fmt::format("cannot write {}", path_));
  }
  rows_.emplace(row[0], row);
  return Status::Ok();
}

}  // namespace tessera::lr
