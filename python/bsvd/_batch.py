"""bsvd.svd_batch: one variable-size call for a list of 2-D matrices of
different shapes (bsvd_gesvj_vbatched). It blocks (returns when the results
are written) for device arrays too: the stream-ordered form is bsvd.svd's."""
from __future__ import annotations

from . import _bsvd
from ._args import layout, options, promote, set_devices
from ._frameworks import REAL_OF, adapt

# Imported by bsvd.svd_batch on first use, when the package is complete.
from . import SVDInfoResult, SVDResult, _complete, _info, _raise_status, _report  # noqa: E402


def _pack(out, info):
    """SVDResult of lists (U, S, Vh), or the list of S; Info appended."""
    if len(out) == 3:
        return SVDInfoResult(*out, info) if info is not None else SVDResult(*out)
    return (out[0], info) if info is not None else out[0]


def adapt_list(mats, where):
    """The matrices of a list in one library, dtype and device: (adapter,
    the prepared 2-D arrays, dtype name, device); raises otherwise."""
    ad = None
    xs = []
    name = device = None
    for i, a in enumerate(mats):
        ad_i, x = adapt(a)
        if ad is None:
            ad = ad_i
        elif ad_i is not ad:
            raise TypeError(f"{where}: all matrices of a list must be arrays of one library "
                            f"(matrix 0 is {ad.name}, matrix {i} is {ad_i.name})")
        x = ad.prepare(x)
        shp = ad.shape(x)
        if len(shp) != 2:
            raise ValueError(f"{where}: matrices of a list must be 2-D, matrix {i} has shape {tuple(shp)}")
        x, nm = promote(ad, x, where)
        dv = ad.device(x)
        if name is None:
            name, device = nm, dv
        elif nm != name:
            raise TypeError(f"{where}: all matrices of a list must have one dtype "
                            f"(matrix 0 is {name}, matrix {i} is {nm})")
        elif dv != device:
            raise ValueError(f"{where}: all matrices of a list must be on one device "
                             f"(matrix 0 is on {device}, matrix {i} on {dv})")
        xs.append(x)
    return ad, xs, name, device


def svd_list(mats, full_matrices, compute_uv, return_info, kw):
    """bsvd.svd_batch: the arguments checked there; kw holds the options."""
    where = "bsvd.svd_batch"
    count = len(mats)
    if count == 0:
        return _pack(([], [], []) if compute_uv else ([],),
                     _info((0,), None, None, None) if return_info else None)
    ad, xs, name, device = adapt_list(mats, where)
    opts = options(kw, device, ad, name, where)
    set_devices(opts, kw["devices"])
    rname = REAL_OF[name]

    # Every matrix is described to the library as A^T (row-major A,
    # transposed view): inputs that are not row-major are copied.
    dims = []
    Ms, Ns, lds, offS, offU, offV, ldus, ldvs = [], [], [], [], [], [], [], []
    tS = tU = tV = 0
    for i in range(count):
        m, n = (int(s) for s in ad.shape(xs[i]))
        k = min(m, n)
        ld = max(n, 1)
        if k > 0:
            lay = layout(ad, xs[i], (), m, n, 1)
            if lay is None or lay[0] != "T":
                xs[i] = ad.contiguous(xs[i])
                lay = layout(ad, xs[i], (), m, n, 1)
            ld = lay[1]
        dims.append((m, n, k, tS, tU, tV))
        Ms.append(n)
        Ns.append(m)
        lds.append(ld)
        offS.append(tS)
        # The library's U (n x k, ld n) is Vh's buffer, its V (m x k, ld m)
        # is U's (U^T row-major).
        offU.append(tV)
        offV.append(tU)
        ldus.append(max(n, 1))
        ldvs.append(max(m, 1))
        tS += k
        tU += k * m
        tV += k * n

    Sf = ad.empty((tS,), rname, device)
    Ubf = Vhf = None
    if compute_uv:
        Ubf = ad.empty((tU,), name, device)
        Vhf = ad.empty((tV,), name, device)
    for x in xs:
        ad.sync_input(x)
    libU, libV = (Vhf, Ubf) if compute_uv else (None, None)
    ex = ad.export
    st, msg, nc, nf, info, sweeps, path = _bsvd.svd_vbatched(
        [ex(x) for x in xs], Ms, Ns, lds, ex(Sf), offS,
        None if libU is None else ex(libU), ldus, offU,
        None if libV is None else ex(libV), ldvs, offV, opts, return_info)
    if st:
        _raise_status(st, msg, where)
    if (nc or nf) and kw["check"] is not False:  # blocking: the check costs nothing
        _report(nc, nf, count, kw["max_sweeps"], kw["check_finite"], kw["warn"], where)

    Sf = ad.finish(Sf, (tS,))
    Ss = [ad.flat_slice(Sf, d[3], d[3] + d[2], (d[2],)) for d in dims]
    out = (Ss,)
    if compute_uv:
        Ubf = ad.finish(Ubf, (tU,))
        Vhf = ad.finish(Vhf, (tV,))
        if name.startswith("complex") and tU > 0:
            Ubf = ad.conj_(Ubf)  # U = conj(V1) for A^T = U1 S V1^H
        Us, Vhs = [], []
        for (m, n, k, s0, u0, v0) in dims:
            U = ad.mT(ad.flat_slice(Ubf, u0, u0 + k * m, (k, m)))
            Vh = ad.flat_slice(Vhf, v0, v0 + k * n, (k, n))
            if full_matrices:
                U = _complete(ad, U, m, k, (), name, device)
                Vh = ad.mH(_complete(ad, ad.mH(Vh), n, k, (), name, device))
            Us.append(U)
            Vhs.append(Vh)
        out = (Us, Ss, Vhs)
    return _pack(out, _info((count,), info, sweeps, path) if return_info else None)

