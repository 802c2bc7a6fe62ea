// The QR front end as an operation (operation.hpp), for both of its
// groups: kQr (Householder QR or TSQR, the fused kernel on R, Q applied)
// and kQrcp (QR with column pivoting, the blocked path on R^H). No host
// synchronization of its own; kQrcp's blocked path synchronizes once per
// sweep.
#pragma once

#include "../operation.hpp"

namespace bsvd::detail::cuda {

struct QrOp {
  // kQr: every R fits the fused kernel; kQrcp: the blocked path takes R^H.
  static bool can_run(const plan::Plan &p, const plan::Group &g);
  // The QR layout (qr_layout), and for kQrcp the blocked path's after it.
  static size_t workspace_bytes(const plan::Plan &p, const plan::Group &g);
  template <class T> static bsvd_status_t run(const GroupArgs<T> &a);
};

} // namespace bsvd::detail::cuda
