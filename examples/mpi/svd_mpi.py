"""A batch split over MPI ranks from Python: mpi4py around bsvd.svd.

    mpirun -n 4 .venv/bin/python examples/mpi/svd_mpi.py batch.npy out/
    mpirun -n 4 .venv/bin/python examples/mpi/svd_mpi.py --demo out/   # a generated batch

Each rank maps the input .npy (np.load with mmap_mode: it reads only its
own slice), solves the contiguous matrices [B*r/N, B*(r+1)/N) with
bsvd.svd, and writes them into the outputs S.npy, U.npy and Vh.npy, which
rank 0 creates with their full shape first (np.lib.format.open_memmap) --
the layout `bsvd run --mpi` uses (docs/cli.md, "Several processes"). Rank 0
then checks the result against one bsvd.svd call on the whole batch, and
gathers the slowest rank's solve time. Exit 1 on a mismatch.

On the GPU each rank would pass its own device: bsvd.svd solves NumPy
arrays on the CPU, so use CuPy or PyTorch arrays on cuda:<local rank>
(local rank: MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()).
"""
import os
import sys
import time

import numpy as np
from mpi4py import MPI

import bsvd


def main():
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if len(sys.argv) != 3:
        if rank == 0:
            print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    src, out = sys.argv[1], sys.argv[2]
    if rank == 0:
        os.makedirs(out, exist_ok=True)
        if src == "--demo":  # 1000 matrices 24 x 16, written once by rank 0
            src = os.path.join(out, "demo.npy")
            np.save(src, np.random.default_rng(0).standard_normal((1000, 24, 16)))
    src = comm.bcast(src)  # every rank: the file rank 0 chose

    A = np.load(src, mmap_mode="r")  # (B, m, n); nothing read yet
    B, m, n = A.shape
    k = min(m, n)
    b0, b1 = B * rank // size, B * (rank + 1) // size
    t = time.perf_counter()
    U, S, Vh = bsvd.svd(np.asarray(A[b0:b1]), full_matrices=False)  # reads the slice
    solve = time.perf_counter() - t

    # Rank 0 creates the outputs at full size; after the barrier every rank
    # writes its rows (a memory map writes only the pages it touches).
    shapes = {"S": ((B, k), S.dtype), "U": ((B, m, k), U.dtype), "Vh": ((B, k, n), Vh.dtype)}
    if rank == 0:
        for name, (shape, dtype) in shapes.items():
            np.lib.format.open_memmap(os.path.join(out, name + ".npy"), "w+", dtype, shape)
    comm.Barrier()
    for name, part in (("S", S), ("U", U), ("Vh", Vh)):
        f = np.load(os.path.join(out, name + ".npy"), mmap_mode="r+")
        f[b0:b1] = part
        f.flush()
        del f
    comm.Barrier()
    solve = comm.reduce(solve, op=MPI.MAX)

    if rank == 0:
        # One call on the whole batch: the same values (bit for bit where
        # each matrix gets the same BLAS threads; else to rounding).
        U1, S1, Vh1 = bsvd.svd(np.load(src), full_matrices=False)
        S2 = np.load(os.path.join(out, "S.npy"))
        same = np.array_equal(S1, S2)
        close = np.allclose(S1, S2, rtol=1e-13, atol=0)
        print(f"svd_mpi: {B} matrices {m}x{n} on {size} ranks, slowest solve {solve:.3f} s; "
              f"S {'identical to' if same else 'within 1e-13 of' if close else 'DIFFERS from'} "
              f"one call -> {out}")
        return 0 if close else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
