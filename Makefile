# Convenience targets; each is a thin wrapper over scripts/.
.PHONY: demo test unit build bench format clean
demo:   ; ./scripts/demo
test:   ; ./scripts/test
unit:   ; TESSERA_SKIP_SETUP=1 TESSERA_TEST_LABEL=unit TESSERA_FUZZ_SECONDS=5 ./scripts/test
build:  ; ./scripts/build release
bench:  ; ./scripts/bench
format: ; git ls-files '*.h' '*.cc' | xargs clang-format -i
clean:  ; rm -rf build out
