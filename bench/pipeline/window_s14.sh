#!/usr/bin/env bash
# Session 14's pipeline quiet window (issue #14): the toy GPT's step time predicted before
# running, unpinned (as sessions 11-13) and with --pin-workers (worker r and the profile's copy r
# on processor r), interleaved case by case so that a change of the host's speed falls on both.
# Same layouts as session 13's 27 runs (toy-w1, toy-w2-1.2.8, toy-w2-2.1.8).
# Now window.sh with these cases and 9 rounds by default (the same commands as session 14 ran).
# Usage: TESSERA_BUILD=<build copied aside> OUT=<dir> DEADLINE=HH:MM:SS [PREDICT_ROUNDS=9] \
#        bench/pipeline/window_s14.sh
WINDOW_CASES="toy-w1 toy-w1+pin toy-w2-1.2.8 toy-w2-1.2.8+pin toy-w2-2.1.8 toy-w2-2.1.8+pin" \
  PREDICT_ROUNDS=${PREDICT_ROUNDS:-9} WINDOW_AFTER_CASES="" exec "$(dirname "$0")/window.sh"
