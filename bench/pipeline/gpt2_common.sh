# Sourced by gpt2.sh and gpt2_throughput.sh: the GPT-2-small shape (12 blocks x 768, 12 heads,
# vocab 50257, 64 tokens), the knobs both share and the launcher's fixed flags.
BUILD=${TESSERA_BUILD:?set TESSERA_BUILD to a build directory}
STEPS=${GPT2_STEPS:-3}
BATCH=${GPT2_BATCH:-8}
SHAPE=(--layers 12 --width 768 --heads 12 --vocab 50257 --seq-len 64)
# gpt2_launch MICRO TIMEOUT_S: sets LAUNCH to pipeline-launch with the shape, batch and steps.
gpt2_launch() {
  LAUNCH=("$BUILD/bin/pipeline-launch" --model gpt "${SHAPE[@]}" --dropout 0 --global-batch
          "$BATCH" --micro-batch "$1" --steps "$STEPS" --lr 0.01 --lr-schedule constant
          --timeout "$2")
}
load() { cut -d' ' -f1 /proc/loadavg; }
