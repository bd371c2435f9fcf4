// A typed client for one politician, with per-caller traffic accounting.
//
// Every call takes a deadline (a silent or slow politician must never hang a citizen) and
// optionally a Traffic to which it adds the request and reply payload sizes (protobuf bytes;
// HTTP/2 and TLS framing are not counted). gRPC failures and politician-side rejections both
// come back as error Statuses.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "ledger/codec/messages.h"
#include "ledger/net/blockene.grpc.pb.h"
#include "ledger/net/reply_caps.h"
#include "ledger/net/request_auth.h"

namespace tessera::ledger::net {

struct Traffic {
  std::atomic<uint64_t> up{0};
  std::atomic<uint64_t> down{0};
};

// The most pool hashes one GetPools request may name.
inline constexpr size_t kMaxPoolsPerRequest = 256;

// The largest pool (its Pool message, commitment and transactions, as encoded on the wire).
// Without a byte bound a pool of max_pool_txs application transactions of kMaxAppPayload
// each (2,000 x 256 KiB at the default) could not even cross a 256 MiB channel, so no reply
// that carries pools had a bound below the channel's. An honest politician freezes at most
// this much (FreezePool: the rest waits for the next pool), politicians refuse larger pools
// (AddPool) and citizens never witness one (CheckPoolData), so no certified block carries
// one. 16 MiB: 115,000 transfers of 145 bytes, 57x the default max_pool_txs of transfers.
inline constexpr size_t kMaxPoolBytes = 16 << 20;
// A GetPools reply stops after the pool that crosses this many bytes (the caller asks again,
// or asks another politician, for the rest), so an honest reply is at most this plus one pool.
inline constexpr size_t kMaxPoolsReplyBytes = 16 << 20;
// The most keys one ReadState request may name: its multi-proof is then at most
// kMaxReadKeys x MaxProofBytesPerKey() (reply_caps.h). Wallets read a few accounts at a time.
inline constexpr size_t kMaxReadKeys = 1024;

// Ends a held call from another thread (round_listener.h): Cancel() cancels the call in flight,
// if any, and makes every call started with an older epoch() fail at once.
class CallCanceller {
 public:
  void Cancel();
  uint64_t epoch() const;

 private:
  friend class PoliticianClient;
  bool Attach(grpc::ClientContext* ctx, uint64_t epoch);  // false: cancelled since `epoch`
  void Detach();
  mutable std::mutex mu_;
  grpc::ClientContext* ctx_ = nullptr;
  uint64_t epoch_ = 0;
};

// Item hashes in one round listing reply: an honest politician lists at most this many after
// the caller's offset (PoliticianNode::GetRound) and the caller takes at most this many from
// any reply (RoundListener), asking again from offset + this for the rest. 4,096 hashes are
// 128 KiB; an honest period-0 round at C = 5,819 lists about 5C = 29,000 items (our estimate).
inline constexpr size_t kMaxRoundListing = 4096;

// A long-polled round listing (RoundRequest.wait_ms, .listener).
struct RoundWait {
  uint32_t wait_ms = 0;
  std::string listener;
  CallCanceller* canceller = nullptr;
  uint64_t epoch = 0;  // canceller->epoch() when the caller decided to make the call
  bool relay = false;  // a politician relaying (RoundRequest.relay)
};

class PoliticianClient {
 public:
  // A reply over `max_receive_bytes` fails the call (RESOURCE_EXHAUSTED) before it is parsed.
  explicit PoliticianClient(const std::string& address, int deadline_ms = 2000,
                            int max_receive_bytes = static_cast<int>(kChannelMaxReceive));
  // Each reply kind capped as `caps` says (reply_caps.h: citizens, politicians' peers), the rest
  // at kChannelMaxReceive. With
  // caps, GetRound is capped as a hash listing: use ListenRound or GetRound(hashes_only).
  PoliticianClient(const std::string& address, int deadline_ms, const ReplyCaps& caps);
  // A client for SubmitTransaction only (load generators: ledger/net/load_generator.cc,
  // reviews/net/transfer_phase.cc): its reply is capped as a citizen's (reply_caps.h), as is
  // every other reply, which such a client does not ask for.
  static std::unique_ptr<PoliticianClient> ForSubmitting(const std::string& address,
                                                         int deadline_ms);
  const std::string& address() const { return address_; }

  // FAILED_PRECONDITION when the politician rejects the transaction; RESOURCE_EXHAUSTED when
  // its mempool is full, with its hint of when to retry in *retry_after_ms (if given).
  Status SubmitTransaction(const LedgerTx& tx, Traffic* t = nullptr,
                           uint32_t* retry_after_ms = nullptr);
  Result<StatusReply> GetStatus(Traffic* t = nullptr);
  Result<BlockReply> GetBlock(uint64_t height, Traffic* t = nullptr, bool header_only = false);
  // Headers after `after_height`; the politician may hold the call up to `wait_ms` for a new
  // one (long-poll), so the deadline is extended by that much.
  Result<HeadsReply> GetHeads(uint64_t after_height, uint32_t max_headers, uint32_t wait_ms,
                              Traffic* t = nullptr);
  // With a signer the request is authenticated (request_auth.h); Execute needs one with the
  // committee credential, ReadState without one draws on the politician's anonymous budget.
  Result<StateReply> ReadState(uint64_t height, const std::vector<Hash256>& keys,
                               Traffic* t = nullptr, const RequestSigner* signer = nullptr);
  // `held_pools`: indices (ascending) into `pool_hashes` of the pools the caller holds, which
  // the reply leaves out (an empty Pool in their place). OUT_OF_RANGE: the politician says
  // block `height` is already committed (an unchecked claim); any other failure is
  // UNAVAILABLE, as for every call here.
  Result<ExecuteReply> Execute(uint64_t height, const std::vector<Hash256>& pool_hashes,
                               Traffic* t = nullptr, const RequestSigner* signer = nullptr,
                               const std::vector<uint32_t>& held_pools = {});
  Result<RoundReply> GetRound(uint64_t height, uint64_t offset, Traffic* t = nullptr,
                              bool hashes_only = false);
  // The item hashes of round `height` after `offset`, held by the politician up to
  // wait.wait_ms until there is one (the deadline is extended by that much).
  Result<RoundReply> ListenRound(uint64_t height, uint64_t offset, const RoundWait& wait,
                                 Traffic* t = nullptr);
  Result<RoundReply> GetItems(uint64_t height, const std::vector<Hash256>& hashes,
                              Traffic* t = nullptr);
  // On success, `missing_pools` (if given) receives the politician's PostReply.missing_pools.
  Status Post(uint64_t height, const RoundItem& item, Traffic* t = nullptr,
              std::vector<Hash256>* missing_pools = nullptr);
  Status PostPool(const Pool& pool, Traffic* t = nullptr);
  // The pools of these hashes that the politician holds (unchecked: see pool_availability.h).
  Result<PoolsReply> GetPools(const std::vector<Hash256>& pool_hashes, Traffic* t = nullptr);

 private:
  template <typename Req, typename Rep, typename Fn>
  Status Call(const Req& req, Rep* rep, Traffic* t, Fn fn, int extra_deadline_ms = 0);
  std::string address_;
  int deadline_ms_;
  std::unique_ptr<Politician::Stub> stub_;
};

}  // namespace tessera::ledger::net
