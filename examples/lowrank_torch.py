#!/usr/bin/env python3
"""Batched low-rank compression with bsvd in place of torch.linalg.svd.

A batch of blocks (think: the 32 x 32 tiles of a weight matrix, or image
patches) is compressed to rank r by truncating each block's SVD:
A_r = U[..., :r] diag(S[..., :r]) Vh[..., :r, :]. The only change from the
PyTorch version is the SVD call:

    U, S, Vh = torch.linalg.svd(A, full_matrices=False)
    U, S, Vh = bsvd.svd(A, full_matrices=False)   # same shapes, same device

bsvd.torch.svd(A) is the differentiable form (for a loss that goes through
the compressed blocks). Run: python3 examples/lowrank_torch.py [--device cuda]
"""
import argparse
import time

import torch

import bsvd
import bsvd.torch as bt


def compress(A, rank, svd):
    U, S, Vh = svd(A)
    return (U[..., :rank] * S[..., None, :rank]) @ Vh[..., :rank, :]


def timed(fn, device):
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return out, (time.perf_counter() - t0) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--blocks", type=int, default=4096)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--rank", type=int, default=8)
    args = ap.parse_args()
    dev = torch.device(args.device)
    n, r = args.size, args.rank

    # Blocks with a decaying spectrum: a rank-r part plus small noise.
    g = torch.Generator(device=dev).manual_seed(0)
    L = torch.randn(args.blocks, n, r, device=dev, generator=g)
    R = torch.randn(args.blocks, r, n, device=dev, generator=g)
    A = L @ R / r + 1e-3 * torch.randn(args.blocks, n, n, device=dev, generator=g)

    torch_svd = lambda X: torch.linalg.svd(X, full_matrices=False)  # noqa: E731
    bsvd_svd = lambda X: bsvd.svd(X, full_matrices=False)  # noqa: E731
    for name, svd in (("torch.linalg.svd", torch_svd), ("bsvd.svd", bsvd_svd)):
        compress(A[:8], r, svd)  # warm-up
        Ar, ms = timed(lambda: compress(A, r, svd), dev)
        err = (torch.linalg.matrix_norm(A - Ar) / torch.linalg.matrix_norm(A)).max().item()
        print(f"{name:>17}: {args.blocks} blocks {n}x{n} -> rank {r} in {ms:8.2f} ms, "
              f"worst relative error {err:.2e}")

    # Differentiable: fit a small correction so the rank-r blocks match A better.
    D = torch.zeros_like(A, requires_grad=True)
    opt = torch.optim.Adam([D], lr=1e-3)
    for step in range(3):
        opt.zero_grad()
        loss = (compress(A + D, r, lambda X: bt.svd(X, full_matrices=False)) - A).pow(2).mean()
        loss.backward()
        opt.step()
    print(f"  bsvd.torch.svd backward ran: loss {loss.item():.3e}, grad finite: "
          f"{bool(torch.isfinite(D.grad).all())}")


if __name__ == "__main__":
    main()
