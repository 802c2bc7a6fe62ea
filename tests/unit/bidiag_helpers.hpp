// Shared by the tests of the bidiagonal route's device headers
// (test_device_gebrd.cpp, test_device_bdsv.cpp): LAPACKE wrappers for the
// references (xGEBRD, xORGBR / xUNGBR, DBDSQR), and a team of host threads
// that runs the headers' cooperative code path on the CPU (team.cuh's
// contract with std::thread and a barrier in place of a thread block).
#pragma once

#include <algorithm>
#include <complex>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#define LAPACK_COMPLEX_CUSTOM
#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

namespace bidiag_test {

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using R_t = typename real_of<T>::type;

template <class T> const char *prec_name() {
  if (std::is_same_v<T, float>) return "s";
  if (std::is_same_v<T, double>) return "d";
  if (std::is_same_v<T, std::complex<float>>) return "c";
  return "z";
}

template <class R> constexpr double unit_roundoff() {
  return sizeof(R) == sizeof(float) ? 0x1p-24 : 0x1p-53;
}

// ---- LAPACK references ----------------------------------------------------
inline int gebrd(int m, int n, float *A, int lda, float *d, float *e, float *tq, float *tp) {
  return LAPACKE_sgebrd(LAPACK_COL_MAJOR, m, n, A, lda, d, e, tq, tp);
}
inline int gebrd(int m, int n, double *A, int lda, double *d, double *e, double *tq, double *tp) {
  return LAPACKE_dgebrd(LAPACK_COL_MAJOR, m, n, A, lda, d, e, tq, tp);
}
inline int gebrd(int m, int n, std::complex<float> *A, int lda, float *d, float *e,
                 std::complex<float> *tq, std::complex<float> *tp) {
  return LAPACKE_cgebrd(LAPACK_COL_MAJOR, m, n, A, lda, d, e, tq, tp);
}
inline int gebrd(int m, int n, std::complex<double> *A, int lda, double *d, double *e,
                 std::complex<double> *tq, std::complex<double> *tp) {
  return LAPACKE_zgebrd(LAPACK_COL_MAJOR, m, n, A, lda, d, e, tq, tp);
}
inline int orgbr(char v, int m, int n, int k, float *A, int lda, const float *tau) {
  return LAPACKE_sorgbr(LAPACK_COL_MAJOR, v, m, n, k, A, lda, tau);
}
inline int orgbr(char v, int m, int n, int k, double *A, int lda, const double *tau) {
  return LAPACKE_dorgbr(LAPACK_COL_MAJOR, v, m, n, k, A, lda, tau);
}
inline int orgbr(char v, int m, int n, int k, std::complex<float> *A, int lda,
                 const std::complex<float> *tau) {
  return LAPACKE_cungbr(LAPACK_COL_MAJOR, v, m, n, k, A, lda, tau);
}
inline int orgbr(char v, int m, int n, int k, std::complex<double> *A, int lda,
                 const std::complex<double> *tau) {
  return LAPACKE_zungbr(LAPACK_COL_MAJOR, v, m, n, k, A, lda, tau);
}

// Singular values of the upper bidiagonal (d, e) by DBDSQR (values only:
// dqds, xLASQ1) in double precision, descending. Returns LAPACK's info.
template <class R> int reference_bidiagonal_values(int n, const R *d, const R *e, double *S) {
  if (n == 0) return 0;
  std::vector<double> dd(d, d + n), ee(std::max(n - 1, 1), 0.0);
  for (int i = 0; i + 1 < n; ++i) ee[i] = e[i];
  const int info = LAPACKE_dbdsqr(LAPACK_COL_MAJOR, 'U', n, 0, 0, 0, dd.data(), ee.data(), nullptr,
                                  1, nullptr, 1, nullptr, 1);
  std::copy(dd.begin(), dd.end(), S);
  return info;
}

// Whether two arrays hold the same bits (the teams' contract: any team
// gives the serial result exactly).
template <class T> bool same_bits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// ---- a team of host threads (team.cuh's contract) -------------------------
class Barrier {
public:
  explicit Barrier(int n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lk(mu_);
    const long gen = gen_;
    if (++count_ == n_) {
      count_ = 0;
      ++gen_;
      cv_.notify_all();
    } else {
      cv_.wait(lk, [&] { return gen_ != gen; });
    }
  }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  int n_, count_ = 0;
  long gen_ = 0;
};

struct TeamState {
  // lead_n: the size of the team's lead (team.cuh), 1 ... n; 0 means n.
  explicit TeamState(int n, int lead_n = 0)
      : bar(n), scratch(n), lead_n(lead_n > 0 && lead_n < n ? lead_n : n),
        lead_state(this->lead_n < n ? std::make_unique<TeamState>(this->lead_n) : nullptr) {}
  Barrier bar;
  std::vector<double> scratch; // float and double partials are exact in double
  int lead_n;
  std::unique_ptr<TeamState> lead_state; // null: the lead is the whole team
};

// Member r of a team of nt threads. sum / max: every member writes its
// partial, then every member combines them in rank order (same bits on all).
struct HostTeam {
  TeamState *s;
  int r, nt;
  int rank() const { return r; }
  int size() const { return nt; }
  void sync() const { s->bar.wait(); }
  template <class R> R sum(R x) const { return reduce(x, false); }
  template <class R> R max(R x) const { return reduce(x, true); }
  // Members 0 ... lead_n - 1 as a team with a barrier of its own.
  HostTeam lead() const {
    return s->lead_state ? HostTeam{s->lead_state.get(), r, s->lead_n} : *this;
  }

private:
  template <class R> R reduce(R x, bool is_max) const {
    sync();
    s->scratch[r] = double(x);
    sync();
    R t = R(s->scratch[0]);
    for (int w = 1; w < nt; ++w) {
      const R y = R(s->scratch[w]);
      t = is_max ? (y > t ? y : t) : t + y;
    }
    return t;
  }
};

// Runs body(team) on nt threads (a lead of lead_n, 0: all) and joins them.
inline void run_team(int nt, const std::function<void(const HostTeam &)> &body, int lead_n = 0) {
  TeamState state(nt, lead_n);
  std::vector<std::thread> th;
  for (int r = 0; r < nt; ++r)
    th.emplace_back([&, r] {
      const HostTeam team{&state, r, nt};
      body(team);
    });
  for (auto &t : th) t.join();
}

} // namespace bidiag_test
