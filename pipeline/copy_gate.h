// A common start and end for concurrent copies of a timed loop.
//
// The contention profile (ProfileContention, pipeline/profile.h) runs W copies of the unit loop
// on W threads to measure what a task costs while W workers share the machine. A sample counts
// only if all W copies were running while it was taken: a copy that started timing before the
// others left their warm-up, or that went on after the others had stopped, measured less
// contention than the entry claims (issue #14's fifth session found copies whose timed windows
// began up to 0.1 s apart under load, each stopping on its own clock). A CopyGate gives the
// copies one start and one end: each waits for all the others after its warm-up, and each runs
// until the last copy has had its minimum of timed work; whatever was under way at that moment
// is dropped by its copy.
//
// Use: one CopyGate for W copies; each copy's thread holds a CopyGate::Copy on it, calls
// Start() once before its first timed iteration, ReachedMinimum() once it has its minimum,
// checks stopped() before each iteration (stop there) and after it (drop that iteration).
// A Copy that ends early (an exception) releases the others: its destructor does what it did
// not. A Copy without a gate is a lone loop: it stops at its own minimum. Torch-free.
#pragma once

#include <atomic>
#include <latch>

namespace tessera::pipeline {

class CopyGate {
 public:
  explicit CopyGate(int copies);

  class Copy {
   public:
    explicit Copy(CopyGate* gate) : gate_(gate) {}
    Copy(const Copy&) = delete;
    Copy& operator=(const Copy&) = delete;
    ~Copy();

    // Blocks until every copy has called Start() (or ended).
    void Start();
    // This copy has its minimum; the last copy to get there stops them all.
    void ReachedMinimum();
    bool reached() const { return reached_; }
    // Alone: once this copy has its minimum. With a gate: once every copy has.
    bool stopped() const;

   private:
    CopyGate* gate_;
    bool started_ = false, reached_ = false;
  };

 private:
  std::latch started_;
  std::atomic<int> short_of_minimum_;
  std::atomic<bool> stop_{false};
};

}  // namespace tessera::pipeline
