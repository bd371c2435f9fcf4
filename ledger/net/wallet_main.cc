// ledger-wallet: keys, proved balances, transfers, following blocks, and (for the registrar)
// citizen identities.
#include <chrono>
#include <iostream>
#include <thread>

#include "core/cli.h"
#include "core/file.h"
#include "ledger/crypto/key_file.h"
#include "ledger/net/citizen_daemon.h"
#include "ledger/net/wallet.h"

namespace {

using namespace tessera;
using namespace tessera::ledger;
using namespace tessera::ledger::net;

// A public key given as 64 hex characters or as a public key file.
Result<PublicKey> ParseAccount(const std::string& text) {
  if (text.size() == 64) return ArrayFromHex<32>(text);
  return ReadPublicKeyFile(text);
}

}  // namespace

int main(int argc, char** argv) {
  cli::Program program("ledger-wallet",
                       "Blockene light wallet: keys, proved balances, transfers, block following.");
  CLI::App& app = program.app();
  app.require_subcommand(1);
  std::string genesis_path, checkpoint, prefix, account, from_key, to, registrar_key, out;
  uint64_t amount = 0, blocks = 0, at_height = 0;
  size_t fanout = 2;

  CLI::App* keygen = app.add_subcommand("keygen", "Write PREFIX.key (0600) and PREFIX.pub");
  keygen->add_option("prefix", prefix, "Path prefix")->required();

  auto add_net = [&](CLI::App* sub) {
    sub->add_option("--genesis", genesis_path, "Genesis TOML file")->required();
    sub->add_option("--checkpoint", checkpoint,
                    "File holding the latest verified header (created if absent)");
  };
  CLI::App* balance = app.add_subcommand("balance", "Balance proved against the latest header");
  add_net(balance);
  balance->add_option("account", account, "Public key (hex) or .pub file")->required();

  CLI::App* send = app.add_subcommand("send", "Sign and submit a transfer");
  add_net(send);
  send->add_option("--from", from_key, "Sender's secret key file")->required();
  send->add_option("--to", to, "Receiver: public key (hex) or .pub file")->required();
  send->add_option("--amount", amount, "Amount")->required()->check(CLI::PositiveNumber);
  send->add_option("--fanout", fanout, "Politicians to submit to");

  CLI::App* follow = app.add_subcommand("follow", "Verify and print new certified blocks");
  add_net(follow);
  follow->add_option("--blocks", blocks, "Stop after this many new blocks (0 = forever)");

  CLI::App* reg = app.add_subcommand("register", "Registrar: sign a citizen identity");
  reg->add_option("--registrar-key", registrar_key, "Registrar secret key file")->required();
  reg->add_option("--citizen", account, "Citizen public key (hex) or .pub file")->required();
  reg->add_option("--height", at_height, "Registration height (eligible height + delay)")
      ->required();
  reg->add_option("--out", out, "Identity file to write (hex)")->required();

  return program.Run(argc, argv, [&]() -> Status {
    if (keygen->parsed()) {
      KeyPair k = KeyPair::Generate();
      TESSERA_RETURN_IF_ERROR(WriteSecretKeyFile(prefix + ".key", k));
      TESSERA_RETURN_IF_ERROR(WritePublicKeyFile(prefix + ".pub", k.public_key()));
      std::cout << "public key " << ToHex(k.public_key()) << "\n";
      return Status::Ok();
    }
    if (reg->parsed()) {
      TESSERA_ASSIGN_OR_RETURN(KeyPair registrar, ReadSecretKeyFile(registrar_key));
      TESSERA_ASSIGN_OR_RETURN(PublicKey citizen, ParseAccount(account));
      Identity id{.citizen = citizen, .registered_at = at_height};
      SignIdentity(id, registrar);
      TESSERA_RETURN_IF_ERROR(WriteFileAtomically(out, ToHex(AsBytes(EncodeIdentity(id))) + "\n"));
      std::cout << "identity for " << ToHex(citizen).substr(0, 16) << " registered at height "
                << at_height << " written to " << out << "\n";
      return Status::Ok();
    }
    TESSERA_ASSIGN_OR_RETURN(Genesis genesis, LoadGenesis(genesis_path));
    LightClient client(genesis, checkpoint);
    if (follow->parsed()) {
      uint64_t seen = 0;
      for (;;) {
        TESSERA_RETURN_IF_ERROR(client.Sync([&](const CertifiedBlockData& b) {
          std::cout << "block " << b.header.height << "  hash "
                    << ToHex(BlockHash(b.header)).substr(0, 16) << "  pools "
                    << b.header.pool_hashes.size() << "  signers " << b.certificate.signers.size()
                    << "  root " << ToHex(b.header.state_root).substr(0, 16)
                    << "  (certificate verified)\n";
          std::cout.flush();
          ++seen;
        }));
        if (blocks > 0 && seen >= blocks) return Status::Ok();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    TESSERA_RETURN_IF_ERROR(client.Sync());
    if (balance->parsed()) {
      TESSERA_ASSIGN_OR_RETURN(PublicKey key, ParseAccount(account));
      TESSERA_ASSIGN_OR_RETURN(std::optional<Account> a, client.Balance(key));
      std::cout << "account " << ToHex(key).substr(0, 16) << " at block " << client.head().height
                << ": ";
      if (!a) {
        std::cout << "does not exist (absence proved)\n";
      } else {
        std::cout << "balance " << a->balance << " nonce " << a->nonce
                  << " (proof verified against root "
                  << ToHex(client.head().state_root).substr(0, 16) << ")\n";
      }
      return Status::Ok();
    }
    TESSERA_ASSIGN_OR_RETURN(KeyPair from, ReadSecretKeyFile(from_key));
    TESSERA_ASSIGN_OR_RETURN(PublicKey dest, ParseAccount(to));
    TESSERA_ASSIGN_OR_RETURN(Transaction tx, client.Send(from, dest, amount, fanout));
    std::cout << "submitted transfer " << ToHex(TransactionId(tx)).substr(0, 16) << " of " << amount
              << " (nonce " << tx.nonce << ")\n";
    return Status::Ok();
  });
}
