# The ledger-localnet config the ledger benches run (sourced by sweep.sh and c64_pair.sh).
#
# ledger_write_config FILE [KEY=VALUE ...]
#   Writes a localnet TOML (ledger/net/localnet.h documents the keys) to FILE: the benches'
#   base config -- 5 politicians, 8 expected proposers, 40 citizens per daemon process, 40,000
#   accounts, key seed 11, warn logs; 1% double spends, fanout 1, 16 load threads; poll 150 ms,
#   witness 400 ms, proposal 500 ms, round timeout 20 s -- with each KEY=VALUE applied.
#   KEY is the localnet's own name, without its table: a key of the base config is replaced
#   in place (never repeated: TOML refuses a key twice), any other one is added to its table
#   (round_wait_ms, follow_wait_ms, certify_every: [timing]; blocks: [load]; everything else:
#   [network]). VALUE is written as given: quote strings yourself (log_level='"info"').
#   adversary=TEXT appends TEXT (e.g. an [adversary] table) after [timing].
#   The run-specific keys have no default and must be given: citizens, committee_size,
#   validation_sample, max_pool_txs, rate, duration_s.
#   8 expected proposers since session 27 (4 before): with 4, about 2.7% of heights have no
#   period-0 proposer at committee 64 and lose a period, which alone set its p99 latency
#   (docs/ledger-engine.md, "Session 27: eight expected proposers").
#
# ledger_overrides_args "KEY=VALUE[,KEY=VALUE]"
#   Prints the comma-separated overrides one per line, for `mapfile` and ledger_write_config.

ledger_network_keys=(politicians citizens committee_size citizens_per_process validation_sample
                     proposers accounts max_pool_txs key_seed log_level)
ledger_load_keys=(rate duration_s double_spend_fraction fanout threads)
ledger_timing_keys=(poll_ms witness_ms proposal_ms round_timeout_ms)

ledger_write_config() {
  local file=$1
  shift
  local -A value=(
    [politicians]=5 [citizens_per_process]=40 [proposers]=8 [accounts]=40000 [key_seed]=11
    [log_level]='"warn"' [double_spend_fraction]=0.01 [fanout]=1 [threads]=16 [poll_ms]=150
    [witness_ms]=400 [proposal_ms]=500 [round_timeout_ms]=20000)
  local network_extra="" load_extra="" timing_extra="" adversary="" kv key
  for kv in "$@"; do
    [[ $kv == *=* && ${kv%%=*} =~ ^[a-z_]+$ ]] || { echo "ledger_write_config: not KEY=VALUE: '$kv'" >&2; return 1; }
    key=${kv%%=*}
    case " ${ledger_network_keys[*]} ${ledger_load_keys[*]} ${ledger_timing_keys[*]} " in
      *" $key "*) value[$key]=${kv#*=}; continue ;;
    esac
    case $key in
      adversary) adversary=${kv#*=} ;;
      round_wait_ms|follow_wait_ms|certify_every) timing_extra+="$key = ${kv#*=}"$'\n' ;;
      blocks) load_extra+="$key = ${kv#*=}"$'\n' ;;
      *) network_extra+="$key = ${kv#*=}"$'\n' ;;
    esac
  done
  local table keys
  {
    for table in network load timing; do
      echo "[$table]"
      keys="ledger_${table}_keys[@]"
      for key in "${!keys}"; do
        [ -n "${value[$key]:-}" ] || { echo "ledger_write_config: $key not given" >&2; return 1; }
        echo "$key = ${value[$key]}"
      done
      keys="${table}_extra"
      printf '%s' "${!keys}"
    done
    [ -z "$adversary" ] || printf '%s\n' "$adversary"
  } > "$file"
}

ledger_overrides_args() {
  local IFS=','
  local kv
  # shellcheck disable=SC2086 # split on commas on purpose
  for kv in $1; do
    [ -z "$kv" ] || echo "$kv"
  done
}
