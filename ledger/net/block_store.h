// A politician's durable chain: every certified block with its pools, in RocksDB.
//
// Layout: "b" || u64 height (big-endian) -> serialized BlockReply (header, certificate,
// identities, pools). Blocks are written synced, before the state store commits the block's
// state, so after a crash the chain is never behind the state; a politician that finds it
// ahead re-applies the missing block on open (politician.h).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "core/status.h"
#include "ledger/net/blockene.pb.h"

namespace rocksdb {
class DB;
}

namespace tessera::ledger::net {

class BlockStore {
 public:
  static Result<std::unique_ptr<BlockStore>> Open(const std::filesystem::path& dir);
  ~BlockStore();

  Status Put(uint64_t height, const BlockReply& block);
  // NOT_FOUND if the block is not stored.
  Result<BlockReply> Get(uint64_t height) const;
  // The highest stored height, or nullopt when empty.
  std::optional<uint64_t> Latest() const;

 private:
  explicit BlockStore(std::unique_ptr<rocksdb::DB> db);
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace tessera::ledger::net
