// The pipeline-worker command line as a function, so that a binary with models of its own
// (pipeline/model_registry.h) is a complete worker:
//
//   int main(int argc, char** argv) {
//     RegisterMyModels();
//     return tessera::pipeline::WorkerMain(argc, argv);
//   }
//
// and `pipeline-launch --model mymodel --worker path/to/it` trains it (the launcher asks the
// worker binary for the model's unit count with --count-units). Torch-free.
#pragma once

namespace tessera::pipeline {

// Parses --job, --rank, --report (or --count-units MODEL_JSON), runs the worker and returns the
// process exit code.
int WorkerMain(int argc, char** argv);

}  // namespace tessera::pipeline
