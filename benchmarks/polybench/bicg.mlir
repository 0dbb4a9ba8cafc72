// bicg: s := A^T r and q := A p, A of NxM, in one sweep over A (PolyBench 4.2, kernels).
// The driver calls it `calls` times (it reads A once per call, and A is beyond the caches).
//
// sizes: M=3600 N=4000
// tiny: M=60 N=80
// calls: 8
// polly-best: -mllvm -polly-2nd-level-tiling
//   tried (ratio to original, two runs): base 4.3x/3.1x, 2nd-level tiling 6.7x/4.4x, others
//   3.2-4.5x
// recipe:
//   transform %i#2 --unroll-jam 8
//   transform %j --scalar-replace
//
// i unrolled and jammed by 8 (eight rows of A in one sweep of s), and the eight sums q[i]
// kept in registers through j, s[j], which each copy updates, in a register within an
// iteration (scalar replacement: one step).
func.func @kernel_bicg(%A: memref<{N}x{M}xf64>, %s: memref<{M}xf64>, %q: memref<{N}xf64>,
                       %p: memref<{M}xf64>, %r: memref<{N}xf64>) {
  %zero = arith.constant 0.0 : f64
  affine.for %i = 0 to {M} {
    affine.store %zero, %s[%i] : memref<{M}xf64>
  }
  affine.for %i = 0 to {N} {
    affine.store %zero, %q[%i] : memref<{N}xf64>
    affine.for %j = 0 to {M} {
      %sj = affine.load %s[%j] : memref<{M}xf64>
      %ri = affine.load %r[%i] : memref<{N}xf64>
      %a = affine.load %A[%i, %j] : memref<{N}x{M}xf64>
      %ra = arith.mulf %ri, %a : f64
      %s_sum = arith.addf %sj, %ra : f64
      affine.store %s_sum, %s[%j] : memref<{M}xf64>
      %qi = affine.load %q[%i] : memref<{N}xf64>
      %pj = affine.load %p[%j] : memref<{M}xf64>
      %ap = arith.mulf %a, %pj : f64
      %q_sum = arith.addf %qi, %ap : f64
      affine.store %q_sum, %q[%i] : memref<{N}xf64>
    }
  }
  return
}
