#include "cluster/service/auth.h"

#include <sstream>

namespace tessera::cluster {
namespace {

constexpr size_t kMinTokenLength = 16;

// Equal contents, in time that depends on the lengths only.
bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

Status BadLine(int line, const std::string& why) {
  return InvalidArgumentError("token file line " + std::to_string(line) + ": " + why);
}

}  // namespace

Result<TokenTable> TokenTable::Parse(std::string_view text) {
  TokenTable table;
  std::istringstream in{std::string(text)};
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.empty()) continue;
    if (f.size() < 2) return BadLine(line_no, "want TENANT TOKEN [premium] [admin]");
    Entry entry{f[1], {f[0], false, false}};
    if (entry.token.size() < kMinTokenLength) {
      return BadLine(line_no, "tokens must have at least 16 characters");
    }
    for (size_t i = 2; i < f.size(); ++i) {
      if (f[i] == "premium") {
        entry.principal.premium = true;
      } else if (f[i] == "admin") {
        entry.principal.admin = true;
      } else {
        return BadLine(line_no, "unknown right '" + f[i] + "' (want premium or admin)");
      }
    }
    for (const Entry& e : table.entries_) {
      if (e.token == entry.token) return BadLine(line_no, "token given twice");
    }
    table.entries_.push_back(std::move(entry));
  }
  return table;
}

Result<Principal> TokenTable::Authenticate(std::string_view authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.empty()) {
    return PermissionDeniedError("no token: pass --token (or set TESSERA_CLUSTER_TOKEN)");
  }
  if (!authorization.starts_with(kBearer)) {
    return PermissionDeniedError("authorization metadata must be 'Bearer <token>'");
  }
  const std::string_view token = authorization.substr(kBearer.size());
  const Principal* found = nullptr;
  for (const Entry& e : entries_) {  // no early exit: the time does not tell which one matched
    if (ConstantTimeEqual(e.token, token)) found = &e.principal;
  }
  if (found == nullptr) return PermissionDeniedError("unknown token");
  return *found;
}

Status AuthorizeSubmit(const Principal& who, rpc::SubmitRequest& request) {
  if (request.tenant().empty()) request.set_tenant(who.tenant);
  if (!who.admin && request.tenant() != who.tenant) {
    return PermissionDeniedError("the token of tenant '" + who.tenant +
                                 "' cannot submit jobs for tenant '" + request.tenant() + "'");
  }
  if (request.tier() == "premium" && !who.premium && !who.admin) {
    return PermissionDeniedError("tenant '" + who.tenant +
                                 "' is not allowed to submit premium work");
  }
  return Status::Ok();
}

Status AuthorizeJobCommand(const Principal& who, std::string_view job_id,
                           std::string_view job_tenant) {
  if (who.admin || who.tenant == job_tenant) return Status::Ok();
  return PermissionDeniedError("job " + std::string(job_id) + " belongs to tenant '" +
                               std::string(job_tenant) + "', not to '" + who.tenant + "'");
}

}  // namespace tessera::cluster
