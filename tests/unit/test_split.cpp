// The split of a batch over devices (opts->device_count) and its CPU twin:
// plan::split_batch cuts ranges of about equal work, run_split solves them
// at once on worker threads, and a split solve gives the bits of one call
// (here the cpu backend's ranges stand in for the devices).
#include "core/api_common.hpp"
#include "core/backends.hpp"
#include "core/split.hpp"
#include "plan/split.hpp"
#include "testing/generate.hpp"

#include <bsvd/bsvd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>
#include <random>
#include <set>
#include <thread>

using namespace bsvd::detail;

namespace {

plan::Shapes variable(const std::vector<int> &m, const std::vector<int> &n) {
  plan::Shapes s;
  s.count = int(m.size());
  s.dims.mv = m.data();
  s.dims.nv = n.data();
  return s;
}

TEST(Split, UniformBatchesInEqualCounts) {
  plan::Shapes s;
  s.count = 10;
  s.dims.m = s.dims.n = 64;
  EXPECT_EQ(plan::split_batch(s, 3), (std::vector<int>{0, 4, 7, 10}));
  EXPECT_EQ(plan::split_batch(s, 1), (std::vector<int>{0, 10}));
  s.count = 2;
  EXPECT_EQ(plan::split_batch(s, 4), (std::vector<int>{0, 1, 2})); // no empty range
  s.count = 0;
  EXPECT_EQ(plan::split_batch(s, 4), (std::vector<int>{0, 0}));
}

// Variable sizes: contiguous, non-empty ranges whose costs differ from the
// mean by less than the largest matrix's cost.
TEST(Split, VariableBatchesByCost) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    const int count = 1 + int(rng() % 300), parts = 1 + int(rng() % 8);
    std::vector<int> m(count), n(count);
    for (int b = 0; b < count; ++b) {
      m[b] = int(rng() % 300);
      n[b] = int(rng() % 300);
    }
    const std::vector<int> st = plan::split_batch(variable(m, n), parts);
    ASSERT_EQ(st.front(), 0);
    ASSERT_EQ(st.back(), count);
    ASSERT_EQ(int(st.size()) - 1, std::min(parts, count));
    double total = 0, biggest = 0;
    for (int b = 0; b < count; ++b) {
      total += plan::split_cost(m[b], n[b]);
      biggest = std::max(biggest, plan::split_cost(m[b], n[b]));
    }
    const double mean = total / double(st.size() - 1);
    for (size_t p = 0; p + 1 < st.size(); ++p) {
      ASSERT_LT(st[p], st[p + 1]) << "empty range " << p;
      double cost = 0;
      for (int b = st[p]; b < st[p + 1]; ++b) cost += plan::split_cost(m[b], n[b]);
      // A range's boundary may sit one matrix off the ideal cut on each
      // side, unless it had to leave room for the ranges after it.
      if (st[p + 1] - st[p] > 1 && parts * 4 < count)
        EXPECT_LE(std::abs(cost - mean), 2 * biggest) << "trial " << trial << " range " << p;
    }
  }
  // One huge matrix among small ones gets a range nearly to itself.
  std::vector<int> m(41, 8), n(41, 8);
  m[20] = n[20] = 400;
  const std::vector<int> st = plan::split_batch(variable(m, n), 2);
  EXPECT_TRUE(st[1] == 20 || st[1] == 21) << st[1];
}

TEST(Split, WorkersAreKeptAndErrorsNamed) {
  std::vector<std::thread::id> first(3), second(3);
  run_on_workers(3, [&](int i) { first[size_t(i)] = std::this_thread::get_id(); });
  run_on_workers(3, [&](int i) { second[size_t(i)] = std::this_thread::get_id(); });
  EXPECT_EQ(first, second); // the same thread per part: its thread-local state kept
  EXPECT_EQ(std::set<std::thread::id>(first.begin(), first.end()).size(), 3u);
  const std::vector<int> starts{0, 5, 9, 12};
  std::vector<int> seen(12, 0);
  const bsvd_status_t st = run_split(starts, [&](int part, int first_m, int count) {
    for (int b = first_m; b < first_m + count; ++b) ++seen[size_t(b)];
    if (part == 1) {
      set_error("boom");
      return BSVD_STATUS_DEVICE_ERROR;
    }
    return BSVD_STATUS_SUCCESS;
  });
  EXPECT_EQ(st, BSVD_STATUS_DEVICE_ERROR);
  EXPECT_EQ(std::string(bsvd_last_error()), "matrices 5 ... 8: boom");
  EXPECT_EQ(seen, std::vector<int>(12, 1));
}

// The CPU twin of the device split: a variable-size batch solved as one call
// and as three ranges at once gives the same bits, info, sweeps and paths.
template <class T> void expect_split_equals_one_call() {
  using R = real_of_t<T>;
  std::mt19937 rng(11);
  const int count = 37;
  std::vector<int> m(count), n(count), lda(count), ldu(count), ldv(count);
  std::vector<std::vector<T>> A(count), U1(count), V1(count), U2(count), V2(count);
  std::vector<std::vector<R>> S1(count), S2(count);
  for (int b = 0; b < count; ++b) {
    m[b] = 1 + int(rng() % 40);
    n[b] = 1 + int(rng() % 40);
    lda[b] = ldu[b] = m[b] + 1;
    ldv[b] = n[b];
    const int k = std::min(m[b], n[b]);
    A[b].assign(size_t(lda[b]) * n[b], T(0));
    bsvd::testing::generate<T>(bsvd::testing::Family::Random, m[b], n[b],
                               bsvd::testing::default_kappa<T>(), 300 + b, A[b].data(), lda[b]);
    S1[b].assign(k, R(-1));
    S2[b] = S1[b];
    U1[b].assign(size_t(ldu[b]) * k, T(-1));
    U2[b] = U1[b];
    V1[b].assign(size_t(ldv[b]) * k, T(-1));
    V2[b] = V1[b];
  }
  struct Out {
    std::vector<const T *> A;
    std::vector<R *> S;
    std::vector<T *> U, V;
    std::vector<int> info, sweeps, path;
    Batch<T> b;
  };
  auto describe = [&](Out &o, std::vector<std::vector<R>> &S, std::vector<std::vector<T>> &U,
                      std::vector<std::vector<T>> &V) {
    for (int b = 0; b < count; ++b) {
      o.A.push_back(A[b].data());
      o.S.push_back(S[b].data());
      o.U.push_back(U[b].data());
      o.V.push_back(V[b].data());
    }
    o.info.assign(count, 99);
    o.sweeps.assign(count, -1);
    o.path.assign(count, -1);
    o.b.vectors = true;
    o.b.count = count;
    o.b.dims.mv = m.data();
    o.b.dims.nv = n.data();
    o.b.A.array = o.A.data();
    o.b.A.ldv = lda.data();
    o.b.S.array = o.S.data();
    o.b.U.array = o.U.data();
    o.b.U.ldv = ldu.data();
    o.b.V.array = o.V.data();
    o.b.V.ldv = ldv.data();
    o.b.info = o.info.data();
    o.b.sweeps = o.sweeps.data();
  };
  const Config cfg;
  const auto solve = [&](const Batch<T> &b, int *path) {
    std::vector<unsigned char> ws(cpu_workspace_bytes(b, cfg, 1));
    return cpu_gesvj(b, cfg, ws.data(), ws.size(), 1, path);
  };
  Out one, split;
  describe(one, S1, U1, V1);
  describe(split, S2, U2, V2);
  ASSERT_EQ(solve(one.b, one.path.data()), 0) << bsvd_last_error();
  const std::vector<int> starts = plan::split_batch(plan::shapes_of(split.b), 3);
  ASSERT_EQ(starts.size(), 4u);
  ASSERT_EQ(run_split(starts,
                      [&](int, int first, int cnt) {
                        return solve(slice(split.b, first, cnt), split.path.data() + first);
                      }),
            0)
      << bsvd_last_error();
  EXPECT_EQ(split.info, one.info);
  EXPECT_EQ(split.sweeps, one.sweeps);
  EXPECT_EQ(split.path, one.path);
  for (int b = 0; b < count; ++b) {
    EXPECT_EQ(S2[b], S1[b]) << "matrix " << b;
    EXPECT_EQ(U2[b], U1[b]) << "matrix " << b;
    EXPECT_EQ(V2[b], V1[b]) << "matrix " << b;
  }
}

TEST(Split, CpuTwinGivesTheBitsOfOneCall) {
  expect_split_equals_one_call<double>();
  expect_split_equals_one_call<std::complex<float>>();
}

// The options: checked before any backend runs; the cpu backend ignores them.
TEST(Split, DeviceOptionsAreChecked) {
  const int m = 6, n = 4, batch = 3;
  std::vector<double> A(size_t(m) * n * batch, 1.0), S(size_t(n) * batch);
  std::vector<int> info(batch);
  bsvd_options_t o;
  bsvd_options_init(&o);
  EXPECT_EQ(o.device_count, 0);
  EXPECT_EQ(o.devices, nullptr);
  const auto call = [&](const bsvd_options_t &opt) {
    return bsvd_dgesvj_strided_batched(BSVD_JOB_VALUES, m, n, A.data(), m, m * n, S.data(), n,
                                       nullptr, 1, 0, nullptr, 1, 0, info.data(), nullptr, batch,
                                       &opt);
  };
  const int opts_pos = -18;
  o.device_count = -2;
  EXPECT_EQ(call(o), opts_pos);
  EXPECT_NE(std::string(bsvd_last_error()).find("device_count"), std::string::npos);
  o.device_count = 2;
  EXPECT_EQ(call(o), opts_pos); // devices NULL
  const int twice[] = {0, 0}, negative[] = {1, -1};
  o.devices = twice;
  EXPECT_EQ(call(o), opts_pos);
  EXPECT_NE(std::string(bsvd_last_error()).find("repeats"), std::string::npos);
  o.devices = negative;
  EXPECT_EQ(call(o), opts_pos);
  const int good[] = {0, 1};
  o.devices = good;
  o.backend = BSVD_BACKEND_CPU; // the cpu backend ignores the devices
  EXPECT_EQ(call(o), 0) << bsvd_last_error();
  o.device_count = BSVD_DEVICES_ALL;
  EXPECT_EQ(call(o), 0) << bsvd_last_error();
}

} // namespace
