// How TinyOp (op.cu) splits a group of the register tier into launches, in
// host code without CUDA so the CPU tests can check it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace bsvd::detail::cuda {

// The largest max(m, n) of the one-thread variant, which holds the matrix in
// one thread's registers; beyond it the lanes variant runs, whose reach per
// precision is plan::kTinyInstanceMax (src/plan/tuning.hpp).
constexpr int kTinyThreadMaxDim = 8;

// The lanes instance (rows) a launch beyond kTinyThreadMaxDim runs: 12, 16
// (16 lanes), 24, 32 (32 lanes); the launch (lanes.cuh) and the grouping
// below both take it from here.
constexpr int wide_instance(int dim) {
  return dim <= 12 ? 12 : dim <= 16 ? 16 : dim <= 24 ? 24 : 32;
}

// One launch: slots [first, first + count) of the launch order, the
// instance of max(m, n) = dim (the largest among them).
struct TinyLaunch {
  int first = 0, count = 0, dim = 0;
};

// The launches of a group of `count` matrices whose max(m, n) dim_of(i)
// gives: one for the sizes up to kTinyThreadMaxDim (at the largest of
// them), one per wide instance beyond. `order` receives the group's slots
// in launch order (stable within a launch), or stays empty when a single
// launch takes the group in its own order.
template <class DimOf>
std::vector<TinyLaunch> tiny_launches(size_t count, DimOf dim_of, std::vector<int> &order) {
  constexpr int kBuckets = 5; // up to 8; 12, 16, 24, 32 rows
  const auto bucket_of = [](int d) {
    const int w = d <= kTinyThreadMaxDim ? 0 : wide_instance(d);
    return w == 0 ? 0 : w == 12 ? 1 : w == 16 ? 2 : w == 24 ? 3 : 4;
  };
  int size[kBuckets] = {}, dim[kBuckets] = {}, first[kBuckets + 1] = {};
  for (size_t i = 0; i < count; ++i) {
    const int d = dim_of(i), k = bucket_of(d);
    ++size[k];
    dim[k] = std::max(dim[k], d);
  }
  for (int k = 0; k < kBuckets; ++k) first[k + 1] = first[k] + size[k];
  std::vector<TinyLaunch> launches;
  for (int k = 0; k < kBuckets; ++k)
    if (size[k] > 0) launches.push_back({first[k], size[k], dim[k]});
  order.clear();
  if (launches.size() > 1) {
    order.resize(count);
    int next[kBuckets];
    std::copy(first, first + kBuckets, next);
    for (size_t i = 0; i < count; ++i) order[size_t(next[bucket_of(dim_of(i))]++)] = int(i);
  }
  return launches;
}

} // namespace bsvd::detail::cuda
