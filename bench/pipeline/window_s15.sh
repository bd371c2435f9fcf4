#!/usr/bin/env bash
# Session 15's pipeline quiet window (issue #14): the messages' delivery delay at P = 2 (the
# stage-boundary term the simulator lacked in session 14), and a longer toy profile. Cases,
# interleaved round by round so a change of the host's speed falls on all alike:
#   toy-w2-2.1.8        P=2 D=1 m=8, profiles of 1 s (the default)
#   toy-w2-2.1.8+ps3    the same, every profile timed 3 s at least (--profile-seconds 3)
#   toy-w1, toy-w1+ps3  one worker, 1 s and 3 s profiles
# Now window.sh with these cases and 12 rounds by default (the same commands as session 15 ran).
# Usage: TESSERA_BUILD=<build copied aside> OUT=<dir> DEADLINE=HH:MM:SS [PREDICT_ROUNDS=12] \
#        bench/pipeline/window_s15.sh
WINDOW_CASES="toy-w2-2.1.8 toy-w2-2.1.8+ps3 toy-w1 toy-w1+ps3" PREDICT_ROUNDS=${PREDICT_ROUNDS:-12} \
  WINDOW_AFTER_CASES="" exec "$(dirname "$0")/window.sh"
