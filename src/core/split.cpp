// split.hpp: the worker threads.
#include "split.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>

namespace bsvd::detail {

namespace {

class Workers {
public:
  ~Workers() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread &t : threads_) t.join();
  }

  void run(int n, const std::function<void(int)> &f) {
    std::lock_guard<std::mutex> one(run_); // one run at a time
    std::unique_lock<std::mutex> l(m_);
    while (int(threads_.size()) < n) {
      const int i = int(threads_.size());
      threads_.emplace_back([this, i] { loop(i); });
    }
    job_ = &f;
    active_ = n;
    pending_ = n;
    ++generation_;
    wake_.notify_all();
    done_.wait(l, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

private:
  void loop(int i) {
    unsigned long seen = 0;
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      wake_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (i >= active_) continue;
      const std::function<void(int)> *f = job_;
      l.unlock();
      (*f)(i);
      l.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex run_, m_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)> *job_ = nullptr;
  unsigned long generation_ = 0;
  int active_ = 0, pending_ = 0;
  bool stop_ = false;
};

} // namespace

void run_on_workers(int n, const std::function<void(int)> &f) {
  if (n <= 0) return;
  static Workers w;
  w.run(n, f);
}

} // namespace bsvd::detail
