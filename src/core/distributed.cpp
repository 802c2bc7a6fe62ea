// The layout and the outer ordering of the distributed solve
// (distributed.hpp).
#include "distributed.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>

namespace bsvd::detail::dist {

Layout make_layout(int mw, int nw, int devices, int pair_cols) {
  Layout L;
  L.mw = mw;
  L.nw = nw;
  L.devices = std::max(1, devices);
  const double per_device = double(nw) / L.devices;
  L.pairs = std::max(1, int(std::lround(per_device / std::max(2, pair_cols))));
  const int blocks = L.blocks();
  L.width = std::max(1, (nw + blocks - 1) / blocks);
  return L;
}

int steps_per_sweep(const Layout &L) { return L.blocks() - 1; }

namespace {
// Pair i of step s: {top, bottom} (the circle method, distributed.hpp).
void pair_of(const Layout &L, int step, int i, int &top, int &bottom) {
  const int r = L.blocks() - 1; // the rotating blocks 0 ... r - 1
  if (i == 0) {
    top = r;
    bottom = step % r;
    return;
  }
  top = (step + i) % r;
  bottom = ((step - i) % r + r) % r;
}
} // namespace

Place place_of(const Layout &L, int step, int block) {
  const int P = L.devices * L.pairs;
  for (int i = 0; i < P; ++i) {
    int t, b;
    pair_of(L, step, i, t, b);
    if (t == block || b == block) {
      Place p;
      p.device = i / L.pairs;
      p.col = (i % L.pairs) * L.pair_cols() + (t == block ? 0 : L.width);
      return p;
    }
  }
  throw std::logic_error("dist::place_of: a block outside the layout");
}

std::vector<Move> moves_between(const Layout &L, int step) {
  const int steps = steps_per_sweep(L);
  std::vector<Move> m(static_cast<size_t>(L.blocks()));
  for (int b = 0; b < L.blocks(); ++b) {
    m[size_t(b)].from = place_of(L, step % steps, b);
    m[size_t(b)].to = place_of(L, (step + 1) % steps, b);
  }
  return m;
}

template <class T> void pair_rotation(int pw, long rotated, const T *Vhat, T *Q, int *to) {
  const int64_t pp = int64_t(pw) * pw;
  if (rotated == 0) {
    std::fill(Q, Q + pp, T(0));
    for (int j = 0; j < pw; ++j) {
      Q[j + int64_t(j) * pw] = T(1);
      to[j] = j;
    }
    return;
  }
  std::vector<int> row(static_cast<size_t>(pw));
  std::vector<char> seen(static_cast<size_t>(pw), 0);
  bool perm = true;
  for (int j = 0; j < pw; ++j) {
    const T *v = Vhat + int64_t(j) * pw;
    int r = 0;
    for (int i = 1; i < pw; ++i)
      if (std::abs(v[i]) > std::abs(v[r])) r = i;
    row[size_t(j)] = r;
    perm = perm && !seen[size_t(r)];
    seen[size_t(r)] = 1;
  }
  for (int j = 0; j < pw; ++j) {
    to[j] = perm ? row[size_t(j)] : j;
    std::copy(Vhat + int64_t(j) * pw, Vhat + int64_t(j + 1) * pw, Q + int64_t(to[j]) * pw);
  }
}

template void pair_rotation<float>(int, long, const float *, float *, int *);
template void pair_rotation<double>(int, long, const double *, double *, int *);
template void pair_rotation<std::complex<float>>(int, long, const std::complex<float> *,
                                                 std::complex<float> *, int *);
template void pair_rotation<std::complex<double>>(int, long, const std::complex<double> *,
                                                  std::complex<double> *, int *);

} // namespace bsvd::detail::dist
