#include "ledger/net/genesis.h"

#include <set>
#include <sstream>

#include "core/file.h"
#include "ledger/crypto/hash.h"
#include "ledger/state/account.h"

namespace tessera::ledger::net {
namespace {

Result<uint64_t> Positive(const Config& c, std::string_view key, int64_t fallback) {
  TESSERA_ASSIGN_OR_RETURN(int64_t v, c.GetIntOr(key, fallback));
  if (v <= 0)
    return InvalidArgumentError(std::string(key) + " must be positive, got " + std::to_string(v));
  return static_cast<uint64_t>(v);
}

std::string Quote(std::string v) {
  v.insert(v.begin(), '"');
  v.push_back('"');
  return v;
}

}  // namespace

std::vector<LeafUpdate> Genesis::GenesisUpdates() const {
  std::vector<LeafUpdate> updates;
  updates.reserve(accounts.size());
  for (const GenesisAccount& a : accounts) {
    updates.push_back({AccountKey(a.key), EncodeAccount({.balance = a.balance, .nonce = 0})});
  }
  return updates;
}

Result<SparseMerkleTree> Genesis::GenesisState() const {
  return SparseMerkleTree().Update(GenesisUpdates());
}

Result<BlockHeader> Genesis::GenesisHeader() const {
  BlockHeader h;
  h.height = 0;
  h.seed = Sha256("tessera/genesis" + name);
  if (state_root) {
    h.state_root = *state_root;
  } else {
    TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree state, GenesisState());
    h.state_root = state.root_hash();
  }
  // Every genesis citizen counts as registered through every block before the first
  // (registration.h): the population eligible at block 1 is the genesis population.
  h.registered_through.assign(registration_delay, sortition.population);
  return h;
}

Status Genesis::SealStateRoot() {
  state_root.reset();
  TESSERA_ASSIGN_OR_RETURN(SparseMerkleTree state, GenesisState());
  state_root = state.root_hash();
  return Status::Ok();
}

Status Genesis::CheckStateRoot(const Hash256& built) const {
  if (state_root && *state_root != built) {
    return DataLossError("genesis: the accounts build state root " + ToHex(built) +
                         ", the file states " + ToHex(*state_root));
  }
  return Status::Ok();
}

const PoliticianInfo* Genesis::Politician(uint32_t id) const {
  return id < politicians.size() ? &politicians[id] : nullptr;
}

Result<std::vector<AppParams>> ParseAppParams(const Config& c) {
  std::vector<AppParams> out;
  if (!c.Has("apps")) return out;
  TESSERA_ASSIGN_OR_RETURN(Config apps, c.GetTable("apps"));
  for (const std::string& name : apps.Keys()) {
    TESSERA_ASSIGN_OR_RETURN(Config section, apps.GetTable(name));
    AppParams params{.name = name, .values = {}};
    for (const std::string& key : section.Keys()) {
      if (auto text = section.GetString(key); text.ok()) {
        params.values[key] = *text;
      } else if (auto number = section.GetInt(key); number.ok()) {
        params.values[key] = std::to_string(*number);
      } else {
        return InvalidArgumentError("[apps." + name + "] " + key +
                                    " must be a string or an integer");
      }
    }
    out.push_back(std::move(params));
  }
  return out;
}

const char* VoteCommitteesName(VoteCommittees v) {
  return v == VoteCommittees::kPerStep ? "per-step" : "per-height";
}

Result<Genesis> ParseGenesis(const Config& c) {
  Genesis g;
  TESSERA_ASSIGN_OR_RETURN(g.name, c.GetStringOr("chain.name", "localnet"));
  TESSERA_ASSIGN_OR_RETURN(std::string registrar, c.GetString("chain.registrar"));
  TESSERA_ASSIGN_OR_RETURN(g.registrar, ArrayFromHex<32>(registrar));
  TESSERA_ASSIGN_OR_RETURN(g.sortition.population, Positive(c, "chain.population", 1));
  TESSERA_ASSIGN_OR_RETURN(g.sortition.committee_size, Positive(c, "chain.committee_size", 1));
  TESSERA_ASSIGN_OR_RETURN(g.sortition.proposers, Positive(c, "chain.proposers", 1));
  g.sortition.seed_lookback = 1;
  TESSERA_ASSIGN_OR_RETURN(uint64_t tw, Positive(c, "chain.witness_threshold", 1));
  TESSERA_ASSIGN_OR_RETURN(uint64_t ts, Positive(c, "chain.soft_threshold", 1));
  TESSERA_ASSIGN_OR_RETURN(uint64_t tc, Positive(c, "chain.cert_threshold", 1));
  g.witness_threshold = static_cast<uint32_t>(tw);
  g.soft_threshold = static_cast<uint32_t>(ts);
  g.cert_threshold = static_cast<uint32_t>(tc);
  TESSERA_ASSIGN_OR_RETURN(g.registration_delay, Positive(c, "chain.registration_delay", 2));
  if (g.registration_delay > kMaxRegistrationDelay) {
    return InvalidArgumentError("genesis: chain.registration_delay exceeds " +
                                std::to_string(kMaxRegistrationDelay));
  }
  TESSERA_ASSIGN_OR_RETURN(uint64_t k, Positive(c, "chain.safe_sample", 5));
  g.safe_sample = static_cast<uint32_t>(k);
  TESSERA_ASSIGN_OR_RETURN(uint64_t mp, Positive(c, "chain.max_pool_txs", 2000));
  g.max_pool_txs = static_cast<uint32_t>(mp);

  TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> pkeys, c.GetStringList("politicians.keys"));
  TESSERA_ASSIGN_OR_RETURN(std::vector<std::string> paddrs,
                           c.GetStringList("politicians.addresses"));
  if (pkeys.empty() || pkeys.size() != paddrs.size()) {
    return InvalidArgumentError(
        "genesis: politicians.keys and politicians.addresses must be "
        "non-empty lists of the same length");
  }
  for (size_t i = 0; i < pkeys.size(); ++i) {
    PoliticianInfo p;
    p.id = static_cast<uint32_t>(i);
    TESSERA_ASSIGN_OR_RETURN(p.key, ArrayFromHex<32>(pkeys[i]));
    p.address = paddrs[i];
    g.politicians.push_back(std::move(p));
  }
  if (c.Has("chain.state_root")) {
    TESSERA_ASSIGN_OR_RETURN(std::string root, c.GetString("chain.state_root"));
    TESSERA_ASSIGN_OR_RETURN(g.state_root, ArrayFromHex<32>(root));
  }
  // Without a stated root the accounts are the only way to the genesis state.
  const bool accounts_needed = !g.state_root || c.Has("accounts.keys");
  std::vector<std::string> akeys;
  std::vector<int64_t> balances;
  if (accounts_needed) {
    TESSERA_ASSIGN_OR_RETURN(akeys, c.GetStringList("accounts.keys"));
    TESSERA_ASSIGN_OR_RETURN(balances, c.GetIntList("accounts.balances"));
  }
  if (akeys.size() != balances.size()) {
    return InvalidArgumentError("genesis: accounts.keys and accounts.balances differ in length");
  }
  std::set<PublicKey> seen;
  for (size_t i = 0; i < akeys.size(); ++i) {
    GenesisAccount a;
    TESSERA_ASSIGN_OR_RETURN(a.key, ArrayFromHex<32>(akeys[i]));
    if (balances[i] < 0) return InvalidArgumentError("genesis: negative balance");
    if (!seen.insert(a.key).second) {
      return InvalidArgumentError("genesis: account " + akeys[i] + " listed twice");
    }
    a.balance = static_cast<uint64_t>(balances[i]);
    g.accounts.push_back(a);
  }
  TESSERA_ASSIGN_OR_RETURN(g.validation_sample, c.GetDoubleOr("chain.validation_sample", 1.0));
  if (!(g.validation_sample > 0 && g.validation_sample <= 1)) {
    return InvalidArgumentError("genesis: chain.validation_sample must be in (0, 1]");
  }
  TESSERA_ASSIGN_OR_RETURN(std::string committees,
                           c.GetStringOr("chain.vote_committees", "per-height"));
  if (committees == "per-step") {
    g.vote_committees = VoteCommittees::kPerStep;
  } else if (committees == "per-height") {
    g.vote_committees = VoteCommittees::kPerHeight;
  } else {
    return InvalidArgumentError(
        "genesis: chain.vote_committees must be \"per-height\" or \"per-step\", not \"" +
        committees + "\"");
  }
  TESSERA_ASSIGN_OR_RETURN(g.apps, ParseAppParams(c));
  if (g.cert_threshold > g.sortition.committee_size * 2) {
    return InvalidArgumentError("genesis: cert_threshold can never be reached");
  }
  return g;
}

namespace {
// The text without its [accounts] table (up to the next table header or the end). The
// account lists are single-line arrays (GenesisToToml), so no line inside them starts a table.
std::string WithoutAccounts(const std::string& text) {
  const std::string header = "[accounts]\n";
  size_t at = text.compare(0, header.size(), header) == 0 ? 0 : text.find("\n" + header);
  if (at == std::string::npos) return text;
  if (at > 0) ++at;  // keep the newline before it
  const size_t next = text.find("\n[", at);
  return text.substr(0, at) + (next == std::string::npos ? "" : text.substr(next + 1));
}
}  // namespace

Result<Genesis> LoadGenesis(const std::filesystem::path& path, GenesisAccounts accounts) {
  TESSERA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  Result<Config> c = UnavailableError("not parsed");
  if (accounts == GenesisAccounts::kSkip) {
    // Only a file that states its root may go without its accounts.
    c = Config::Parse(WithoutAccounts(text), path.string());
    if (c.ok() && !c->Has("chain.state_root")) c = UnavailableError("no stated root");
  }
  if (!c.ok()) {
    TESSERA_ASSIGN_OR_RETURN(c, Config::Parse(text, path.string()));
  }
  auto g = ParseGenesis(*c);
  if (!g.ok()) return g.status().WithContext(path.string());
  return g;
}

std::string GenesisToToml(const Genesis& g) {
  std::ostringstream o;
  auto list = [&o](const auto& items, auto fn) {
    o << "[";
    for (size_t i = 0; i < items.size(); ++i) o << (i ? ", " : "") << fn(items[i]);
    o << "]\n";
  };
  o << "[chain]\nname = \"" << g.name << "\"\nregistrar = \"" << ToHex(g.registrar) << "\"\n"
    << "population = " << g.sortition.population << "\n"
    << "committee_size = " << g.sortition.committee_size << "\n"
    << "proposers = " << g.sortition.proposers << "\n"
    << "witness_threshold = " << g.witness_threshold << "\n"
    << "soft_threshold = " << g.soft_threshold << "\n"
    << "cert_threshold = " << g.cert_threshold << "\n"
    << "registration_delay = " << g.registration_delay << "\n"
    << "safe_sample = " << g.safe_sample << "\n"
    << "max_pool_txs = " << g.max_pool_txs << "\n"
    << "validation_sample = " << g.validation_sample << "\n";
  // Always written, so a file states which mode it was made for if the default changes (per
  // step is the candidate: docs/ledger-network.md, "Issue #12: built, and not built").
  o << "vote_committees = \"" << VoteCommitteesName(g.vote_committees) << "\"\n";
  if (g.state_root) o << "state_root = \"" << ToHex(*g.state_root) << "\"\n";
  o << "\n[politicians]\nkeys = ";
  list(g.politicians, [](const PoliticianInfo& p) { return Quote(ToHex(p.key)); });
  o << "addresses = ";
  list(g.politicians, [](const PoliticianInfo& p) { return Quote(p.address); });
  o << "\n[accounts]\nkeys = ";
  list(g.accounts, [](const GenesisAccount& a) { return Quote(ToHex(a.key)); });
  o << "balances = ";
  list(g.accounts, [](const GenesisAccount& a) { return std::to_string(a.balance); });
  for (const AppParams& app : g.apps) {
    o << "\n[apps." << app.name << "]\n";
    for (const auto& [key, value] : app.values) {
      // Integers were parsed from TOML integers, so they print canonically (no leading zeros).
      bool integer = !value.empty() && value == std::to_string(std::atoll(value.c_str()));
      o << key << " = " << (integer ? value : Quote(value)) << "\n";
    }
  }
  return o.str();
}

}  // namespace tessera::ledger::net
