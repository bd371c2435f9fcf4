// reviews-web: the reviews web page (docs/reviews-web.md) for a running ledger.
//
//   reviews-web --genesis genesis.toml --checkpoint web.ckpt --listen 127.0.0.1:8080
//
// Prints "serving http://HOST:PORT/" on stdout once it listens (with --listen HOST:0 the port
// is the one the system chose), and stops cleanly on SIGINT or SIGTERM.
#include <cstdio>
#include <filesystem>

#include "core/cli.h"
#include "core/stop_signal.h"
#include "reviews/web/ledger_backend.h"
#include "reviews/web/server.h"

namespace {

using tessera::Status;
using namespace tessera::reviews::web;

Status Run(const std::string& listen, LedgerBackendOptions backend_options,
           ServerOptions server_options) {
  TESSERA_ASSIGN_OR_RETURN(ListenAddress address, ParseListenAddress(listen));
  const std::atomic<bool>& stop = tessera::StopOnSignals();
  TESSERA_ASSIGN_OR_RETURN(std::unique_ptr<LedgerBackend> backend,
                           LedgerBackend::Open(std::move(backend_options)));
  Server server(*backend, server_options);
  TESSERA_ASSIGN_OR_RETURN(int port, server.Bind(address.host, address.port));
  const bool v6 = address.host.find(':') != std::string::npos;
  std::printf("serving http://%s%s%s:%d/\n", v6 ? "[" : "", address.host.c_str(), v6 ? "]" : "",
              port);
  std::fflush(stdout);
  return server.Serve(stop);
}

}  // namespace

int main(int argc, char** argv) {
  tessera::cli::Program program(
      "reviews-web", "Serves the reviews web page: items, their reviews, and a form to post one.");
  std::string listen = "127.0.0.1:8080";
  LedgerBackendOptions backend;
  ServerOptions server;
  std::string genesis;
  std::string checkpoint;
  int refresh_ms = static_cast<int>(backend.refresh_interval.count());
  auto& app = program.app();
  app.add_option("--listen", listen, "host:port to serve on (port 0: any free port)")
      ->capture_default_str();
  app.add_option("--genesis", genesis, "The chain's genesis file, with [apps.reviews]")->required();
  app.add_option("--checkpoint", checkpoint,
                 "The light client's checkpoint file (created when absent)")
      ->required();
  app.add_option("--fanout", backend.client.fanout,
                 "Politicians each review is submitted to (0: the client library's choice)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  app.add_option("--hijack-delta", backend.client.hijack_delta,
                 "The rating shift the hijack resistance is computed for")
      ->check(CLI::Range(0.01, 4.0))
      ->capture_default_str();
  app.add_option("--refresh-ms", refresh_ms, "Follow the chain at most this often")
      ->check(CLI::Range(0, 60000))
      ->capture_default_str();
  app.add_option("--max-body-bytes", server.max_body_bytes, "Largest request body accepted")
      ->check(CLI::Range(4096, 16 * 1024 * 1024))
      ->capture_default_str();
  app.add_option("--max-connections", server.max_connections,
                 "Connections read or answered at once; more get 503")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--max-connections-per-address", server.max_connections_per_address,
                 "Of them, from one client address; more get 503")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--request-timeout-s", server.request_timeout_seconds,
                 "A request must arrive whole this soon after its connection (else 408)")
      ->check(CLI::Range(1, 600))
      ->capture_default_str();
  // `npm root -g` is /usr/lib/node_modules with Debian's npm and nodesource's, /usr/local/lib
  // with a self-built node: the first that holds the package.
  for (const char* root : {"/usr/lib/node_modules", "/usr/local/lib/node_modules"}) {
    const std::string dir = std::string(root) + "/libsodium-wrappers-sumo";
    if (server.sodium_package.empty() && std::filesystem::exists(dir)) server.sodium_package = dir;
  }
  app.add_option("--sodium-package", server.sodium_package,
                 "Directory of the npm package libsodium-wrappers-sumo, for signing in the "
                 "browser ('': no browser signing)")
      ->capture_default_str();
  return program.Run(argc, argv, [&]() -> Status {
    backend.client.genesis = genesis;
    backend.client.checkpoint = checkpoint;
    backend.refresh_interval = std::chrono::milliseconds(refresh_ms);
    return Run(listen, std::move(backend), server);
  });
}
