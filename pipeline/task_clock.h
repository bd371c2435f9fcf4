// Wall and CPU time of a task on the calling thread, measured so that the two agree.
//
// The profile (pipeline/profile.h) and every worker (pipeline/runtime.h) time their forward and
// backward tasks twice: by the wall clock, which is what a step costs, and by the thread's CPU
// clock, whose ratio to it is the share of a core the task got; the launcher compares the two
// shares to tell a change of the machine's load from a wrong prediction.
//
// The order of the clock reads matters. Reading CLOCK_THREAD_CPUTIME_ID is a system call that
// brings the scheduler's accounting of the running thread up to date, and when that finds the
// thread's slice used up the kernel switches to another thread right there, on the way back from
// the call. So on a machine with more runnable threads than cores most waits for a core begin
// at a CPU-clock read, not at a random point of the computation. With the CPU reads outside the
// wall window (cpu, wall ... wall, cpu) those waits fall between tasks: 4 threads on 2 idle
// cores then measured 0.91-0.94 of a core each inside their tasks, and under load the in-task
// share was 2-4x the threads' real share (issue #14's fifth session, docs/pipeline.md). A
// TaskTimer reads wall, cpu ... cpu, wall: the wall window encloses the CPU window, so a wait
// that starts at either CPU read is part of the task's wall time, and the CPU time can never
// exceed the wall time.
//
// Torch-free; the clocks are the calling thread's and the process's (POSIX clock_gettime).
#pragma once

#include <chrono>

namespace tessera::pipeline {

// CPU time the calling thread has consumed (CLOCK_THREAD_CPUTIME_ID), seconds.
double ThreadCpuSeconds();

// CPU time this process has consumed, all threads (CLOCK_PROCESS_CPUTIME_ID), seconds. A
// step's CPU time does not grow when other processes take the cores, its wall time does.
double ProcessCpuSeconds();

struct TaskTime {
  double wall_s = 0;  // steady clock, from construction of the timer to Stop()
  double cpu_s = 0;   // the calling thread's CPU time within that window
};

// Times one task on the calling thread: construct it before the task, Stop() after, on the
// same thread. Stop() may be called more than once (each time from the same start).
class TaskTimer {
 public:
  using Clock = std::chrono::steady_clock;
  TaskTimer() : wall_start_(Clock::now()), cpu_start_(ThreadCpuSeconds()) {}
  TaskTime Stop() const;

 private:
  Clock::time_point wall_start_;
  double cpu_start_;
};

}  // namespace tessera::pipeline
