// pipeline-worker: one (stage, replica) worker of a pipeline job. Started by pipeline-launch;
// reads the job description, trains, and writes its report as JSON.
#include "pipeline/worker_cli.h"

int main(int argc, char** argv) { return tessera::pipeline::WorkerMain(argc, argv); }
