// Authentication and authorization of the scheduler's user RPCs (issue 15): one token per
// tenant, given to cluster-ctl with --token (or TESSERA_CLUSTER_TOKEN) and sent as gRPC metadata
// "authorization: Bearer <token>".
//
// The token file has one line per token: `TENANT TOKEN [premium] [admin]`; `#` starts a comment.
//   * A token acts as its tenant: it submits jobs for that tenant only, and cancels, preempts,
//     requeues and resizes that tenant's jobs only.
//   * `premium` lets the tenant submit premium work (otherwise PERMISSION_DENIED).
//   * `admin` is an operator: any tenant's jobs, any tier.
//   * Any valid token may list jobs, nodes, events and metrics.
// A missing or unknown token is refused with gRPC UNAUTHENTICATED. Tokens are compared in constant
// time and must be at least 16 characters. Without a token file the scheduler is open (as before
// issue 15). Agent RPCs (RegisterNode, Heartbeat) are not covered: agents run on the cluster's own
// network.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "cluster/agent/cluster.pb.h"
#include "core/status.h"

namespace tessera::cluster {

struct Principal {
  std::string tenant;
  bool premium = false;
  bool admin = false;
};

class TokenTable {
 public:
  // INVALID_ARGUMENT naming the line for a malformed line, a short or repeated token.
  static Result<TokenTable> Parse(std::string_view text);

  // The principal whose token `authorization` carries ("Bearer TOKEN"); an error when it is
  // missing, malformed or unknown (core has no UNAUTHENTICATED code: the server answers gRPC
  // UNAUTHENTICATED with this message).
  Result<Principal> Authenticate(std::string_view authorization) const;

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string token;
    Principal principal;
  };
  std::vector<Entry> entries_;
};

// Submissions: fills in the principal's tenant when the request names none; PERMISSION_DENIED
// for another tenant (unless admin) or premium without the right.
Status AuthorizeSubmit(const Principal& who, rpc::SubmitRequest& request);

// Commands on an existing job of `job_tenant`: PERMISSION_DENIED unless it is the principal's
// tenant or the principal is an admin.
Status AuthorizeJobCommand(const Principal& who, std::string_view job_id,
                           std::string_view job_tenant);

}  // namespace tessera::cluster
