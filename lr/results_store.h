// The results file of an experiment grid: one CSV row per finished run, keyed by the run's
// identity, appended and flushed as each run ends. A grid that is killed and restarted reads the
// file, skips every run whose key is there and runs only the rest, so the grid is resumable run
// by run; a torn last row (a kill mid-write) is dropped and that run is redone. Torch-free.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace tessera::lr {

class ResultsStore {
 public:
  // Opens (creating it with `header` if absent) the CSV at `path`. The first column of `header`
  // is the key. FAILED_PRECONDITION if an existing file has another header.
  static Result<ResultsStore> Open(const std::string& path, const std::vector<std::string>& header);
  ResultsStore(ResultsStore&& other) noexcept;
  ResultsStore& operator=(ResultsStore&&) = delete;
  ~ResultsStore();

  // The row of `key` (fields in header order), or nullptr.
  const std::vector<std::string>* Find(const std::string& key) const;
  // Appends a row (first field: its key) and flushes it to disk. INVALID_ARGUMENT for a wrong
  // field count, a field with a comma or newline, or a key already present.
  Status Append(const std::vector<std::string>& row);
  size_t size() const { return rows_.size(); }

 private:
  ResultsStore(std::string path, size_t columns, std::FILE* file)
      : path_(std::move(path)), columns_(columns), file_(file) {}
  std::string path_;
  size_t columns_;
  std::FILE* file_;
  std::map<std::string, std::vector<std::string>> rows_;
};

}  // namespace tessera::lr
