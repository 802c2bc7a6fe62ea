// bsvd::device::bd_value_range and gesvdx_bidiag: selected singular
// triplets of a matrix from its bidiagonalization (LAPACK xGESVDX's steps
// after xGEBRD): which indices a value interval holds, then the triplets
// of those indices -- the bidiagonal's (bdsvx.cuh) turned into A's by the
// reflectors (ormbr.cuh). Header-only; compiles with nvcc and with a plain
// C++17 compiler (the CPU twin), for one thread or a team (team.cuh).
//
//   // after gebd2 / gebrd_blocked(m, n, A, lda, d, e, tauq, taup, ...):
//   int il, ns = bsvd::device::bd_value_range(k, d, e, vl, vu, &il, rwork);
//   int info = bsvd::device::gesvdx_bidiag(m, n, A, lda, d, e, tauq, taup,
//                                          il, il + ns - 1, S, U, ldu, V, ldv,
//                                          rwork, work, team);
//   // A V = U diag(S) for the values il..iu (0 = the largest), descending;
//   // U: m x ns, V: n x ns (NULL U and V: the values alone)
//
// Work: rwork, gesvdx_rwork(k) reals; work, gesvdx_work(m, n, ns) entries
// of T (none for the values alone).
//
// Method. A = Q B P^H (k = min(m, n); B upper bidiagonal k x k for m >= n,
// lower for m < n, d and e real). bdsvx finds B's triplets for an upper
// bidiagonal; a lower one is the transpose of the upper one with the same
// d and e, so its left vectors are bdsvx's right ones and the other way
// round. The bidiagonal's vectors (real) are written into U's and V's
// first k rows and the other rows zeroed, then U := Q U and V := P V
// (ormbr_q, ormbr_p; A's reflectors). For complex T the real vectors are
// first packed at the front of U's and V's storage and widened in place,
// last entry first, so that nothing beyond the outputs is needed.
//
// bdsvx runs on the team's first member (its inverse iterations are
// sequential within a cluster); the values alone (U, V NULL) are
// bisected by all members, as bdsv does, and the back-transformation is
// split over the team as ormbr splits it.
#pragma once

#include "bdsvx.cuh"
#include "ormbr.cuh"

namespace bsvd::device {

// gesvdx_bidiag's and bd_value_range's real work: bdsvx's.
BSVD_DEVICE_HD constexpr long gesvdx_rwork(int k) { return bdsvx_work(k > 0 ? k : 1); }
// gesvdx_bidiag's work of T: ormbr's (the longer side's rows plus the
// columns it updates).
BSVD_DEVICE_HD constexpr long gesvdx_work(int m, int n, int ns) {
  return long(m > n ? m : n) + (ns > 0 ? ns : 1);
}

namespace detail {

// max |d_i|, |e_i| and whether all are finite.
template <class R> BSVD_DEVICE_HD bool bd_scan(int k, const R *d, const R *e, R &big) {
  big = R(0);
  bool fin = true;
  for (int t = 0; t < 2 * k - 1; ++t) {
    const R a = rabs(t & 1 ? e[t >> 1] : d[t >> 1]);
    fin = fin && a <= maxfin<R>();
    big = a > big ? a : big;
  }
  return fin;
}

// For real T: the bidiagonal's k x ns vectors are in C's first k rows
// (leading dimension ldc) already; zero the rows below. For complex T:
// they are packed at the front of C's storage as reals (leading dimension
// k); widen them in place into C (ldc), last entry first (entry (i, j)
// moves from real offset i + j k to 2 (i + j ldc) >= it, so no entry is
// overwritten before it is read), zeroing rows k ... rows - 1.
template <class T> BSVD_DEVICE_HD void widen(int rows, int k, int ns, T *C, int ldc) {
  using W = typename traits<T>::W;
  using R = typename traits<T>::R;
  W *c = reinterpret_cast<W *>(C);
  if constexpr (sizeof(W) == sizeof(R)) {
    for (int j = 0; j < ns; ++j)
      for (int i = k; i < rows; ++i) c[i + long(j) * ldc] = R(0);
  } else {
    const R *p = reinterpret_cast<const R *>(C);
    for (int j = ns - 1; j >= 0; --j) {
      for (int i = rows - 1; i >= k; --i) c[i + long(j) * ldc] = W{R(0), R(0)};
      for (int i = k - 1; i >= 0; --i) {
        const R x = p[i + long(j) * k];
        c[i + long(j) * ldc] = W{x, R(0)};
      }
    }
  }
}

} // namespace detail

// The values of the k x k bidiagonal (d, e) in (vl, vu] (0 <= vl < vu):
// returns their number ns and sets *il to the index of the largest (0 = B's
// largest value), so they are il ... il + ns - 1. By Sturm counts on the
// Golub-Kahan tridiagonal (bdsv.cuh's): a value within the counts'
// rounding (a few n u relative) of vl or vu may fall on either side.
// Values that bisection returns as 0 (below its floor, bdsv.cuh) count as
// 0, outside every interval. Returns kInfoNonFinite (ns 0, *il 0) when d
// or e hold NaN or Inf. rwork: 2k reals.
template <class R>
BSVD_DEVICE_HD int bd_value_range(int k, const R *d, const R *e, R vl, R vu, int *il, R *rwork) {
  using namespace detail;
  *il = 0;
  if (k <= 0) return 0;
  R big;
  if (!bd_scan(k, d, e, big)) return kInfoNonFinite;
  if (!(big > R(0))) return 0; // every value 0
  const int ex = rilogb(big);
  for (int t = 0; t < 2 * k - 1; ++t)
    rwork[t] = pow2_scale<R, R>(rabs(t & 1 ? e[t >> 1] : d[t >> 1]), -ex);
  // (scaled: max |b| in [1, 2); below floor bisection returns 0)
  const R floor = minnorm<R>() / u_<R>();
  R xl = pow2_scale<R, R>(vl, -ex), xu = pow2_scale<R, R>(vu, -ex);
  xl = xl > floor ? xl : floor;
  xu = xu > floor ? xu : floor;
  const int below_l = tgk_count_below(k, rwork, xl), below_u = tgk_count_below(k, rwork, xu);
  const int ns = below_u > below_l ? below_u - below_l : 0;
  *il = ns > 0 ? k - below_u : 0;
  return ns;
}

// The triplets il ... iu (0 <= il <= iu < k = min(m, n); 0 = the largest)
// of A (m x n) from gebd2's / gebrd_blocked's output (A holding the
// reflectors, lda; d, e, tauq, taup): S (iu - il + 1, descending), U (m x
// ns, ldu >= m) and V (n x ns, ldv >= n) with A V = U diag(S), or the
// values alone when U and V are both NULL. Returns 0; kInfoNonFinite when d
// or e hold NaN or Inf (S NaN, U and V zero). Arguments are the caller's
// to check (gesvdx's API layer does).
template <class T, class R, class Team = serial_team>
BSVD_DEVICE_HD int gesvdx_bidiag(int m, int n, const T *A, int lda, const R *d, const R *e,
                                 const T *tauq, const T *taup, int il, int iu, R *S, T *U, int ldu,
                                 T *V, int ldv, R *rwork, T *work, const Team &team = {}) {
  using namespace detail;
  using W = typename traits<T>::W;
  const int k = m < n ? m : n, ns = iu - il + 1;
  const bool vectors = U != nullptr;
  R big;
  if (!bd_scan(k, d, e, big)) { // (every member scans: O(k))
    for (int j = team.rank(); j < ns; j += team.size()) S[j] = R(NAN);
    if (vectors) {
      for (int j = 0; j < ns; ++j) {
        for (int i = team.rank(); i < m; i += team.size())
          reinterpret_cast<W *>(U)[i + long(j) * ldu] = zero<W>();
        for (int i = team.rank(); i < n; i += team.size())
          reinterpret_cast<W *>(V)[i + long(j) * ldv] = zero<W>();
      }
    }
    team.sync();
    return kInfoNonFinite;
  }
  if (!vectors) return bdsv_range(k, d, e, il, ns, S, rwork, team); // (finite: above)
  // B's vectors: upper (m >= n) left in U, right in V; lower (m < n) the
  // transpose's, so bdsvx's left vectors are B's right ones (V).
  constexpr bool cplx = sizeof(W) != sizeof(R);
  T *L = m >= n ? U : V, *Rt = m >= n ? V : U;
  const int ldl = m >= n ? ldu : ldv, ldr = m >= n ? ldv : ldu;
  if (team.rank() == 0) {
    bdsvx(k, d, e, il, iu, S, reinterpret_cast<R *>(L), cplx ? k : ldl, reinterpret_cast<R *>(Rt),
          cplx ? k : ldr, rwork);
    widen(m, k, ns, U, ldu);
    widen(n, k, ns, V, ldv);
  }
  team.sync();
  ormbr_q(m, n, A, lda, tauq, ns, U, ldu, work, team);
  team.sync();
  ormbr_p(m, n, A, lda, taup, ns, V, ldv, work, team);
  team.sync();
  return kInfoConverged;
}

} // namespace bsvd::device
