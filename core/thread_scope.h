// The object a thread is working with, for code that reaches it through calls that cannot carry
// it: while a ThreadScope<T> lives, ThreadScope<T>::Current() on that thread returns its object.
// Scopes nest (destroying one restores the outer one) and are per thread.
//
//   ThreadScope<SignatureCache> scope(&cache);  // Verify() below now consults `cache`
#pragma once

namespace tessera {

template <class T>
class ThreadScope {
 public:
  explicit ThreadScope(T* object) : previous_(current_) { current_ = object; }
  ~ThreadScope() { current_ = previous_; }
  ThreadScope(const ThreadScope&) = delete;
  ThreadScope& operator=(const ThreadScope&) = delete;

  // The object of the innermost live scope on this thread, or nullptr.
  static T* Current() { return current_; }

 private:
  T* previous_;
  static inline thread_local T* current_ = nullptr;
};

}  // namespace tessera
