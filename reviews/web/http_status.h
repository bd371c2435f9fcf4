// Mapping Status codes to HTTP statuses for the reviews web server's answers.
#pragma once

#include <string_view>

#include "core/status.h"

namespace tessera::reviews::web {

// INVALID_ARGUMENT -> 400, PERMISSION_DENIED -> 403, NOT_FOUND -> 404, ALREADY_EXISTS and
// FAILED_PRECONDITION -> 409, RESOURCE_EXHAUSTED -> 413, UNAVAILABLE -> 503,
// DEADLINE_EXCEEDED -> 504, anything else (and OK, which has no error to map) -> 500.
int HttpStatusFor(StatusCode code);

// "Not Found" for 404 and so on; "Error" for a status this server does not send.
std::string_view ReasonPhrase(int http_status);

}  // namespace tessera::reviews::web
