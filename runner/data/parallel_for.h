#pragma once
// Runs body(i) for i in [0, n) on up to `workers` threads; each index runs exactly once, so
// results written by index do not depend on the thread count. The first exception is rethrown.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sinter::data {

template <typename Body>
void parallelFor(size_t n, int workers, Body body) {
  const size_t threads = std::min<size_t>(n, static_cast<size_t>(std::max(1, workers)));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) {
        try {
          body(i);
        } catch (...) {
          std::lock_guard<std::mutex> lock(failureMutex);
          if (!failure) failure = std::current_exception();
        }
      }
    });
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace sinter::data
