// How the register tier splits a variable-size group into launches
// (src/cuda/tiny/launches.hpp): one launch for the sizes up to 8, one per
// wide instance beyond, stable within each, each at its largest size.
#include "cuda/tiny/launches.hpp"

#include <gtest/gtest.h>

namespace {

using bsvd::detail::cuda::tiny_launches;
using bsvd::detail::cuda::TinyLaunch;

std::vector<TinyLaunch> split(const std::vector<int> &dims, std::vector<int> &order) {
  return tiny_launches(
      dims.size(), [&](size_t i) { return dims[i]; }, order);
}

TEST(TinyLaunches, OneLaunchPerInstanceInBatchOrder) {
  const std::vector<int> dims = {3, 20, 9, 8, 30, 12, 1, 16, 13, 24};
  std::vector<int> order;
  const auto l = split(dims, order);
  ASSERT_EQ(l.size(), 5u); // up to 8; 12, 16, 24 and 32 rows
  const std::vector<int> want_order = {0, 3, 6, 2, 5, 7, 8, 1, 9, 4};
  EXPECT_EQ(order, want_order);
  const int want[5][3] = {{0, 3, 8}, {3, 2, 12}, {5, 2, 16}, {7, 2, 24}, {9, 1, 30}};
  for (size_t k = 0; k < l.size(); ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(l[k].first, want[k][0]);
    EXPECT_EQ(l[k].count, want[k][1]);
    EXPECT_EQ(l[k].dim, want[k][2]);
  }
}

TEST(TinyLaunches, OneInstanceKeepsTheGroupsOrder) {
  std::vector<int> order = {7}; // cleared
  const auto l = split({5, 2, 8, 1}, order);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(l[0].first, 0);
  EXPECT_EQ(l[0].count, 4);
  EXPECT_EQ(l[0].dim, 8);
  const auto w = split({17, 23, 19}, order);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(w[0].dim, 23);
}

} // namespace
