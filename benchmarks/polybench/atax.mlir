// atax: y := A^T (A x), A of MxN, through tmp := A x (PolyBench 4.2, kernels).
// The driver calls it `calls` times (it reads A once per call, and A is beyond the caches).
//
// sizes: M=3600 N=4000
// tiny: M=60 N=80
// calls: 20
// polly-best: -mllvm -polly-register-tiling
//   tried (ratio to original, two runs): base 0.30x/0.27x, register tiling 0.52x/0.52x, others
//   0.28-0.46x
// recipe:
//   transform %i#2 --unroll-jam 4
func.func @kernel_atax(%A: memref<{M}x{N}xf64>, %x: memref<{N}xf64>, %y: memref<{N}xf64>,
                       %tmp: memref<{M}xf64>) {
  %zero = arith.constant 0.0 : f64
  affine.for %i = 0 to {N} {
    affine.store %zero, %y[%i] : memref<{N}xf64>
  }
  affine.for %i = 0 to {M} {
    affine.store %zero, %tmp[%i] : memref<{M}xf64>
    affine.for %j = 0 to {N} {
      %t = affine.load %tmp[%i] : memref<{M}xf64>
      %a = affine.load %A[%i, %j] : memref<{M}x{N}xf64>
      %xj = affine.load %x[%j] : memref<{N}xf64>
      %product = arith.mulf %a, %xj : f64
      %sum = arith.addf %t, %product : f64
      affine.store %sum, %tmp[%i] : memref<{M}xf64>
    }
    affine.for %j = 0 to {N} {
      %yj = affine.load %y[%j] : memref<{N}xf64>
      %a = affine.load %A[%i, %j] : memref<{M}x{N}xf64>
      %t = affine.load %tmp[%i] : memref<{M}xf64>
      %product = arith.mulf %a, %t : f64
      %sum = arith.addf %yj, %product : f64
      affine.store %sum, %y[%j] : memref<{N}xf64>
    }
  }
  return
}
