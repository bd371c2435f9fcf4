// Measuring the network link between two hosts, for the simulator's link model.
//
// The auto-configuration simulates every candidate over a LinkModel (pipeline/simulator.h):
// a rate, a latency and a token-bucket burst. Where workers run on other hosts, that link is
// measured here instead of taken from --link-mbps: a client on one host and a server on the
// other exchange small messages for the latency and two bulk transfers for the rate and the
// burst, over one TCP connection as the workers' transport uses.
//
//   server (host B):  ServeLinkProbe({"10.0.0.2", 29400}, timeout)
//   client (host A):  ProbeLink({"10.0.0.2", 29400}, {})  -> LinkModel with TCP framing
//
// The model. A transfer of n payload bytes from idle, answered by one byte when the last byte
// arrived, takes rtt + max(0, W(n) - burst) / rate, where W(n) is the bytes a rate limiter on
// the sender's device meters (LinkModel::WireBytes with our TCP framing, WithTcpFraming). Two
// sizes give the rate (the difference) and the burst (what the larger one did faster than the
// rate allows); both sizes are chosen from a first estimate so that each takes long enough to
// time (ProbeLinkOptions::target_s). The latency is half the median round trip of one byte.
// Each bulk transfer starts after the link was idle for `idle_s` so a token bucket is full,
// and the faster of `repeats` tries counts (queues and other traffic only slow a transfer);
// when interference made the larger transfer no slower than the smaller, both are timed
// again (up to four rounds) before the probe reports that the times give no rate.
//
// A link much faster than the hosts' CPUs (loopback, a veth without a limiter) measures the
// copy rate of the kernel; such a rate is reported as measured. Torch-free.
#pragma once

#include <chrono>

#include "core/status.h"
#include "nlohmann/json.hpp"
#include "pipeline/simulator.h"
#include "pipeline/transport.h"

namespace tessera::pipeline {

struct ProbeLinkOptions {
  int pings = 20;           // round trips of one byte for the latency
  int repeats = 2;          // tries of each bulk size; the fastest counts
  double idle_s = 0.3;      // pause before each bulk transfer (a token bucket refills)
  double target_s = 0.4;    // the larger transfer should take about this long
  double max_bytes = 64e6;  // the larger transfer's size is capped here
  std::chrono::milliseconds timeout{30000};  // connecting, and every exchange
};

// What was measured, and the model made from it.
struct LinkMeasurement {
  double rtt_s = 0;                     // median round trip of one byte
  double small_bytes = 0, small_s = 0;  // the two bulk transfers: payload bytes, fastest time
  double large_bytes = 0, large_s = 0;
  LinkModel link;  // WithTcpFraming: bandwidth (wire bytes/s), latency rtt/2, burst (wire bytes)
};

// Connects to a ServeLinkProbe at `server` and measures. INVALID_ARGUMENT for bad options,
// DEADLINE_EXCEEDED / UNAVAILABLE when the server does not answer.
Result<LinkMeasurement> ProbeLink(const Endpoint& server, const ProbeLinkOptions& options = {});

// Listens on `listen`, answers one client's probes until it says goodbye, and returns.
// DEADLINE_EXCEEDED when no client comes or one stops talking for `timeout`.
Status ServeLinkProbe(const Endpoint& listen, std::chrono::milliseconds timeout);

// The figures as JSON ({"rtt_s", "small_bytes", "small_s", "large_bytes", "large_s"}) and back
// (the model refitted): how `pipeline-worker --probe-link` reports to the launcher.
nlohmann::json LinkMeasurementToJson(const LinkMeasurement& m);
Result<LinkMeasurement> LinkMeasurementFromJson(const nlohmann::json& json);

// The model from a measurement's figures: rate from the difference of the two transfers, burst
// from what the larger did faster than the rate allows, latency half the round trip. Exposed
// for tests. INVALID_ARGUMENT when the larger transfer was not the slower.
Result<LinkModel> FitLink(double rtt_s, double small_bytes, double small_s, double large_bytes,
                          double large_s);

}  // namespace tessera::pipeline
