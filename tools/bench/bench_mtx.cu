// `bsvd bench --mtx`: the mixed-size batch of Matrix Market files (WCYCLE
// Sec. V-D), bsvd in one variable-size call against cuSOLVER one matrix at
// a time (bench.hpp, bench_gpu_mtx).
#include "bench_gpu.cuh"

namespace bsvd::cli {

namespace {

using namespace gpu_bench;

// ---- the mixed-size batch of Matrix Market files -----------------------------
template <class T>
bool bench_gpu_mtx_t(const std::vector<testing::DenseMatrix> &mats, char precision, int reps,
                     int pair_solver, bool evd_plans, int eig_sweeps,
                     const std::vector<std::pair<int, int>> &wcycles, std::vector<BenchRow> &rows) {
  using R = real_t<T>;
  const int batch = int(mats.size());
  BenchCase c0;
  c0.precision = precision;
  c0.family = "mtx";
  c0.batch = batch;
  c0.reps = reps;
  c0.eig_sweeps = eig_sweeps;
  std::string dev = "none";
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    cudaGetLastError();
    BenchRow r;
    r.solver = "bsvd-cuda";
    r.c = c0;
    r.note = "no CUDA GPU visible";
    rows.push_back(r);
    return false;
  }
  cudaDeviceProp prop{};
  BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
  dev = prop.name;
  // Host and device copies, one allocation per matrix (packed, ld = m).
  std::vector<std::vector<T>> hA(batch);
  std::vector<int> mv(batch), nv(batch), kv(batch);
  size_t ea = 0, es = 0, eu = 0, ev = 0;
  for (int b = 0; b < batch; ++b) {
    mv[b] = mats[b].m;
    nv[b] = mats[b].n;
    kv[b] = std::min(mv[b], nv[b]);
    hA[b].resize(mats[b].a.size());
    for (size_t i = 0; i < hA[b].size(); ++i) hA[b][i] = T(R(mats[b].a[i]));
    ea += hA[b].size();
    es += kv[b];
    eu += size_t(mv[b]) * kv[b];
    ev += size_t(nv[b]) * kv[b];
  }
  DevBuf<T> dA(ea), dU(eu), dV(ev);
  DevBuf<R> dS(es);
  DevBuf<int> dinfo(batch), dsweeps(batch);
  std::vector<const T *> pA(batch);
  std::vector<R *> pS(batch);
  std::vector<T *> pU(batch), pV(batch);
  {
    size_t oa = 0, os = 0, ou = 0, ov = 0;
    for (int b = 0; b < batch; ++b) {
      BENCH_CUDA(
          cudaMemcpy(dA.p + oa, hA[b].data(), hA[b].size() * sizeof(T), cudaMemcpyHostToDevice));
      pA[b] = dA.p + oa;
      pS[b] = dS.p + os;
      pU[b] = dU.p + ou;
      pV[b] = dV.p + ov;
      oa += hA[b].size();
      os += kv[b];
      ou += size_t(mv[b]) * kv[b];
      ov += size_t(nv[b]) * kv[b];
    }
  }
  bsvd_options_t o;
  bsvd_options_init(&o);
  o.backend = BSVD_BACKEND_CUDA;
  o.pair_solver = bsvd_pair_solver_t(pair_solver > 0 ? pair_solver : 0);
  o.eig_sweeps = eig_sweeps;
  size_t ws = 0;
  bsvd_workspace_size_v(precision, BSVD_JOB_VECTORS, mv.data(), nv.data(), batch, &o, &ws);
  DevBuf<unsigned char> dws(ws);
  o.workspace = dws.p;
  o.workspace_bytes = ws;
  bsvd_status_t st = 0;
  std::vector<int> path(batch, -1);
  auto call = [&] {
    st =
        gesvj_vbatched<T>(Job::Vectors, mv.data(), nv.data(), pA.data(), mv.data(), pS.data(),
                          pU.data(), mv.data(), pV.data(), nv.data(), dinfo.p, dsweeps.p, batch, o);
  };
  BenchRow row;
  row.solver = "bsvd-cuda";
  row.device = dev;
  row.c = c0;
  row.ms = time_events(reps, nullptr, call);
  if (st != 0) {
    row.note = std::string("failed: ") + bsvd_last_error();
    rows.push_back(row);
    return true;
  }
  o.path = path.data();
  profiled([&] { call(); });
  o.path = nullptr;
  const detail::cuda::BlockedProfile prof = detail::cuda::blocked_last_profile();
  // Results back; T1-T4 on every matrix: r's worst ratios, pass, max
  // sweeps and note; acc and sweeps per matrix.
  std::vector<R> S(es);
  std::vector<T> U(eu), V(ev);
  std::vector<int> info(batch), sweeps(batch);
  std::vector<BenchRow> acc(batch);
  auto check_all = [&](BenchRow &r, std::vector<BenchRow> &acc_out, std::vector<int> &sw_out) {
    BENCH_CUDA(cudaMemcpy(S.data(), dS.p, es * sizeof(R), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(U.data(), dU.p, eu * sizeof(T), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(V.data(), dV.p, ev * sizeof(T), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(info.data(), dinfo.p, batch * sizeof(int), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(sw_out.data(), dsweeps.p, batch * sizeof(int), cudaMemcpyDeviceToHost));
    size_t os = 0, ou = 0, ov = 0;
    int bad = 0, fail = 0;
    r.t1 = r.t2 = r.t3 = 0;
    r.max_sweeps = 0;
    for (int b = 0; b < batch; ++b) {
      acc_out[b] = BenchRow{};
      acc_out[b].c = c0;
      record_accuracy<T>(acc_out[b], mv[b], nv[b], hA[b].data(), 1, S.data() + os, 0, U.data() + ou,
                         mv[b], 0, V.data() + ov, nv[b], 0);
      r.t1 = std::max(r.t1, acc_out[b].t1);
      r.t2 = std::max(r.t2, acc_out[b].t2);
      r.t3 = std::max(r.t3, acc_out[b].t3);
      fail += !acc_out[b].pass;
      bad += info[b] != 0;
      r.max_sweeps = std::max(r.max_sweeps, sw_out[b]);
      os += kv[b];
      ou += size_t(mv[b]) * kv[b];
      ov += size_t(nv[b]) * kv[b];
    }
    r.pass = fail == 0;
    char note[160];
    std::snprintf(note, sizeof note, "%d matrices, one call; %d fail T1-T4, %d info != 0", batch,
                  fail, bad);
    r.note = note;
  };
  auto sweeps_text = [&](const std::vector<int> &sw) {
    long total = 0;
    for (int b = 0; b < batch; ++b) total += sw[b];
    return "; sweeps summed over the batch " + std::to_string(total);
  };
  // The batch with other options (set(o)) and their own workspace: body()
  // runs with them; o is restored after.
  auto with_options = [&](auto set, auto body) {
    const bsvd_options_t keep = o;
    set(o);
    size_t ws2 = 0;
    bsvd_workspace_size_v(precision, BSVD_JOB_VECTORS, mv.data(), nv.data(), batch, &o, &ws2);
    DevBuf<unsigned char> dws2(ws2);
    o.workspace = dws2.p;
    o.workspace_bytes = ws2;
    body();
    o = keep;
  };
  check_all(row, acc, sweeps);
  if (!wcycles.empty()) row.note += sweeps_text(sweeps);
  rows.push_back(row);
  // --wcycle: the whole batch again with each two-level plan (its own
  // workspace; T1-T4 on every matrix; acc and sweeps stay the default
  // plan's, for the per-matrix table below).
  for (const auto &wc : wcycles)
    with_options(
        [&](bsvd_options_t &x) {
          x.wcycle_blocks = wc.first;
          x.wcycle_sweeps = wc.second;
        },
        [&] {
          BenchRow wr = row;
          wr.solver = wcycle_row_name(wc);
          wr.ms = time_events(reps, nullptr, call);
          if (st != 0) {
            wr.note = std::string("failed: ") + bsvd_last_error();
          } else {
            std::vector<BenchRow> wacc(batch);
            std::vector<int> wsweeps(batch);
            check_all(wr, wacc, wsweeps);
            wr.note += sweeps_text(wsweeps);
          }
          rows.push_back(wr);
        });
  BenchRow sr = row;
  sr.solver = "bsvd-cuda-stages";
  sr.ms =
      prof.load + prof.gram + prof.evd + prof.update + prof.pair_evd + prof.pair_svd + prof.finish;
  sr.max_sweeps = prof.sweeps;
  sr.note = "blocked matrices: " + stage_text(prof);
  rows.push_back(sr);
  // The same batch with the other grouping of the blocked path's Gram-path
  // matrices, and with the fused kernel before the blocked path on one
  // stream instead of beside it.
  auto variant_row = [&](const std::string &name, const std::string &what, auto set) {
    BenchRow vr = row;
    vr.solver = name;
    for_each_override(
        {what}, [&](detail::Overrides &o, const std::string &) { set(o); },
        [&](const std::string &) { vr.ms = time_events(reps, nullptr, call); });
    vr.note = "the whole batch, " + what + "; timing only (accuracy columns: the bsvd-cuda row's)";
    rows.push_back(vr);
  };
  const int other = other_groups();
  variant_row("bsvd-cuda-groups" + std::to_string(other), std::to_string(other) + " stream groups",
              [&](detail::Overrides &o) { o.stream_groups = other; });
  // The other choice of the QR preconditioning: its own workspace, its
  // sweeps.
  const bool took_qrcp = std::count(path.begin(), path.end(), int(BSVD_PATH_CUDA_QRCP)) > 0;
  std::vector<int> sw2(batch); // the sweeps with the other choice
  with_options(
      [&](bsvd_options_t &x) { x.precondition = took_qrcp ? -1 : 1; },
      [&] {
        BenchRow vr = row;
        vr.solver = took_qrcp ? "bsvd-cuda-noprecond" : "bsvd-cuda-precond";
        vr.ms = time_events(reps, nullptr, call);
        BENCH_CUDA(cudaMemcpy(sw2.data(), dsweeps.p, batch * sizeof(int), cudaMemcpyDeviceToHost));
        vr.max_sweeps = *std::max_element(sw2.begin(), sw2.end());
        profiled([&] { call(); });
        vr.note = std::string("the whole batch, precondition = ") + (took_qrcp ? "-1" : "1") +
                  "; timing and sweeps only (accuracy: the bsvd-cuda row's); blocked matrices: " +
                  stage_text(detail::cuda::blocked_last_profile());
        rows.push_back(vr);
      });
  // The Gram preconditioning (precondition = 2) of the blocked-path matrices.
  with_options(
      [&](bsvd_options_t &x) { x.precondition = 2; },
      [&] {
        BenchRow vr = row;
        vr.solver = "bsvd-cuda-gramev";
        vr.ms = time_events(reps, nullptr, call);
        BENCH_CUDA(cudaMemcpy(sw2.data(), dsweeps.p, batch * sizeof(int), cudaMemcpyDeviceToHost));
        vr.max_sweeps = *std::max_element(sw2.begin(), sw2.end());
        vr.note = "the whole batch, precondition = 2; timing and sweeps only (accuracy: "
                  "bsvd check --precondition 2)";
        rows.push_back(vr);
      });
  variant_row("bsvd-cuda-serial", "the fused kernel before the blocked path",
              [](detail::Overrides &o) { o.fused_beside = detail::Force::kOff; });
  variant_row("bsvd-cuda-fusedall", "every fitting matrix on the fused kernel",
              [](detail::Overrides &o) { o.fused_max_cols = 100000; });
  // --evd-threads all: the whole batch again with each eigensolver plan.
  if (evd_plans)
    for_each_evd_plan([&](const std::string &nt) {
      BenchRow pr = row;
      pr.solver = "bsvd-cuda-evd" + nt;
      pr.ms = time_events(reps, nullptr, call);
      profiled([&] { call(); });
      pr.note = "blocked matrices: " + stage_text(detail::cuda::blocked_last_profile());
      rows.push_back(pr);
    });
  // The CPU solver with the same options (its sweeps are the reference).
  std::vector<int> cinfo(batch), csweeps(batch);
  {
    std::vector<std::vector<R>> cS(batch);
    std::vector<const T *> hp(batch);
    std::vector<R *> pcS(batch);
    for (int b = 0; b < batch; ++b) {
      cS[b].resize(kv[b]);
      pcS[b] = cS[b].data();
      hp[b] = hA[b].data();
    }
    bsvd_options_t co = o;
    co.backend = BSVD_BACKEND_CPU;
    co.workspace = nullptr;
    co.workspace_bytes = 0;
    co.variant = BSVD_VARIANT_BLOCKED; // the blocked twin for every matrix
    // preconditioned (cpu: every matrix) when the GPU preconditioned its
    // blocked matrices
    co.precondition = took_qrcp ? 1 : -1;
    gesvj_vbatched<T>(Job::Values, mv.data(), nv.data(), hp.data(), mv.data(), pcS.data(), nullptr,
                      mv.data(), nullptr, nv.data(), cinfo.data(), csweeps.data(), batch, co);
  }
  // cuSOLVER one matrix at a time: gesvdj, gesvd (m >= n), the better one.
  cusolverDnHandle_t h;
  BENCH_SOLVER(cusolverDnCreate(&h));
  double tj = 0, tq = 0, tbest = 0;
  int jfail = 0, qfail = 0, bfail = 0;
  std::printf("per matrix (%s, %c): name m n path bsvd-sweeps cpu-blocked-sweeps "
              "gesvdj-ms gesvd-ms T-pass(bsvd) sweeps-%s\n",
              dev.c_str(), precision, took_qrcp ? "noprecond" : "precond");
  for (int b = 0; b < batch; ++b) {
    BenchCase c = c0;
    c.m = mv[b];
    c.n = nv[b];
    c.batch = 1;
    c.check_sample = 1;
    c.reps = std::min(reps, 3);
    std::vector<BenchRow> one;
    const T *dAb = pA[b];
    run_gesvdj_loop<T>(c, hA[b].data(), dAb, h, dev, one);
    double best = one.back().ms;
    bool best_pass = one.back().pass;
    tj += one.back().ms;
    jfail += !one.back().pass;
    double q = 0;
    if (c.m >= c.n) {
      run_gesvd_loop<T>(c, hA[b].data(), dAb, h, dev, one);
      q = one.back().ms;
      tq += q;
      qfail += !one.back().pass;
      if (q < best) {
        best = q;
        best_pass = one.back().pass;
      }
    } else {
      tq += one.front().ms; // gesvd needs m >= n: counted with gesvdj's time
    }
    tbest += best;
    bfail += !best_pass;
    std::printf("  %-16s %5d %5d %-17s %3d %3d %9.3f %9.3f %s %3d\n", mats[b].name.c_str(), mv[b],
                nv[b], path_label(path[b]), sweeps[b], csweeps[b], one.front().ms, q,
                acc[b].pass ? "yes" : "NO", sw2[b]);
  }
  cusolverDnDestroy(h);
  auto total = [&](const char *name, double ms, int fails, const char *what) {
    BenchRow r;
    r.solver = name;
    r.device = dev;
    r.c = c0;
    r.ms = ms;
    r.pass = fails == 0;
    char note[160];
    std::snprintf(note, sizeof note, "%s; %d of %d matrices fail T1-T4", what, fails, batch);
    r.note = note;
    rows.push_back(r);
  };
  total("cusolver-gesvdj-each", tj, jfail, "gesvdj per matrix, summed");
  total("cusolver-gesvd-each", tq, qfail, "gesvd per matrix (gesvdj where m < n), summed");
  total("cusolver-best-each", tbest, bfail, "the faster of gesvdj / gesvd per matrix, summed");
  return true;
}

} // namespace

bool bench_gpu_mtx(const std::vector<std::string> &files, char precision, int reps, int pair_solver,
                   bool evd_plans, int eig_sweeps, const std::vector<std::pair<int, int>> &wcycles,
                   std::vector<BenchRow> &rows) {
  std::vector<testing::DenseMatrix> mats;
  for (const auto &f : files) {
    testing::DenseMatrix dm;
    std::string err;
    if (!testing::read_matrix_market(f, dm, err)) {
      std::fprintf(stderr, "bsvd bench: %s: %s\n", f.c_str(), err.c_str());
      return false;
    }
    // The timed batch is real (its precision's real or complex type built
    // from the real parts), so a complex or non-finite file is refused.
    if (dm.is_complex || !dm.finite()) {
      std::fprintf(stderr, "bsvd bench: %s: %s entries (--mtx takes real, finite matrices)\n",
                   f.c_str(), dm.is_complex ? "complex" : "NaN or Inf");
      return false;
    }
    if (dm.m > 0 && dm.n > 0) mats.push_back(std::move(dm));
  }
  // BSVD_MTX_RANDOM=1: the same shapes with random entries (a mixed-size
  // batch of random matrices, to compare with the real ones); =2: random
  // values on the files' nonzero pattern only (sparse, but not structured:
  // what a sparsity rule for the preconditioning would also see).
  if (const char *r = std::getenv("BSVD_MTX_RANDOM"); r && (r[0] == '1' || r[0] == '2')) {
    const bool keep_pattern = r[0] == '2';
    for (size_t b = 0; b < mats.size(); ++b) {
      auto &dm = mats[b];
      std::vector<double> g(dm.a.size());
      testing::generate<double>(testing::Family::Random, dm.m, dm.n, 1.0, 9100u + b, g.data(),
                                dm.m);
      for (size_t e = 0; e < g.size(); ++e)
        if (!keep_pattern || dm.a[e] != 0.0) dm.a[e] = g[e];
      dm.name += keep_pattern ? "~randpattern" : "~rand";
    }
  }
  try {
    switch (precision) {
    case 's':
      return bench_gpu_mtx_t<float>(mats, precision, reps, pair_solver, evd_plans, eig_sweeps,
                                    wcycles, rows);
    case 'd':
      return bench_gpu_mtx_t<double>(mats, precision, reps, pair_solver, evd_plans, eig_sweeps,
                                     wcycles, rows);
    case 'c':
      return bench_gpu_mtx_t<std::complex<float>>(mats, precision, reps, pair_solver, evd_plans,
                                                  eig_sweeps, wcycles, rows);
    default:
      return bench_gpu_mtx_t<std::complex<double>>(mats, precision, reps, pair_solver, evd_plans,
                                                   eig_sweeps, wcycles, rows);
    }
  } catch (const CudaFail &f) {
    BenchRow r;
    r.solver = "bsvd-cuda";
    r.note = "failed: " + f.what;
    rows.push_back(r);
    return false;
  }
}

} // namespace bsvd::cli
