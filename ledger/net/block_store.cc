#include "ledger/net/block_store.h"

#include <rocksdb/db.h>

namespace tessera::ledger::net {
namespace {

std::string Key(uint64_t height) {
  std::string k = "b";
  for (int i = 7; i >= 0; --i) k.push_back(static_cast<char>((height >> (8 * i)) & 0xff));
  return k;
}

}  // namespace

BlockStore::BlockStore(std::unique_ptr<rocksdb::DB> db) : db_(std::move(db)) {}
BlockStore::~BlockStore() = default;

Result<std::unique_ptr<BlockStore>> BlockStore::Open(const std::filesystem::path& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir.string(), &raw);
  if (!s.ok()) return UnavailableError("opening block store " + dir.string() + ": " + s.ToString());
  return std::unique_ptr<BlockStore>(new BlockStore(std::unique_ptr<rocksdb::DB>(raw)));
}

Status BlockStore::Put(uint64_t height, const BlockReply& block) {
  rocksdb::WriteOptions w;
  w.sync = true;
  rocksdb::Status s = db_->Put(w, Key(height), block.SerializeAsString());
  if (!s.ok())
    return InternalError("writing block " + std::to_string(height) + ": " + s.ToString());
  return Status::Ok();
}

Result<BlockReply> BlockStore::Get(uint64_t height) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), Key(height), &value);
  if (s.IsNotFound()) return NotFoundError("no block at height " + std::to_string(height));
  if (!s.ok())
    return InternalError("reading block " + std::to_string(height) + ": " + s.ToString());
  BlockReply block;
  if (!block.ParseFromString(value)) return DataLossError("stored block is corrupt");
  return block;
}

std::optional<uint64_t> BlockStore::Latest() const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  it->SeekToLast();
  if (!it->Valid()) return std::nullopt;
  std::string k = it->key().ToString();
  if (k.size() != 9 || k[0] != 'b') return std::nullopt;
  uint64_t h = 0;
  for (int i = 1; i < 9; ++i) h = (h << 8) | static_cast<uint8_t>(k[i]);
  return h;
}

}  // namespace tessera::ledger::net
