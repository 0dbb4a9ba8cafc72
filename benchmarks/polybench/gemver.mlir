// gemver: A := A + u1 v1^T + u2 v2^T; x := x + beta A^T y + z; w := w + alpha A x
// (PolyBench 4.2, blas). The driver calls it `calls` times (A is beyond the caches).
//
// sizes: N=4000
// tiny: N=80
// calls: 6
// polly-best: -mllvm -polly-register-tiling
//   tried (ratio to original, two runs): base 1.16x/1.31x, register tiling 1.22x/1.66x, others
//   0.8-1.14x
// recipe:
//   transform %i#4 --unroll-jam 8
//   transform %i#2 --interchange
//   fuse %i
func.func @kernel_gemver(%alpha: f64, %beta: f64, %A: memref<{N}x{N}xf64>,
                         %u1: memref<{N}xf64>, %v1: memref<{N}xf64>, %u2: memref<{N}xf64>,
                         %v2: memref<{N}xf64>, %w: memref<{N}xf64>, %x: memref<{N}xf64>,
                         %y: memref<{N}xf64>, %z: memref<{N}xf64>) {
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to {N} {
      %a = affine.load %A[%i, %j] : memref<{N}x{N}xf64>
      %u1i = affine.load %u1[%i] : memref<{N}xf64>
      %v1j = affine.load %v1[%j] : memref<{N}xf64>
      %uv1 = arith.mulf %u1i, %v1j : f64
      %sum1 = arith.addf %a, %uv1 : f64
      %u2i = affine.load %u2[%i] : memref<{N}xf64>
      %v2j = affine.load %v2[%j] : memref<{N}xf64>
      %uv2 = arith.mulf %u2i, %v2j : f64
      %sum2 = arith.addf %sum1, %uv2 : f64
      affine.store %sum2, %A[%i, %j] : memref<{N}x{N}xf64>
    }
  }
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to {N} {
      %xi = affine.load %x[%i] : memref<{N}xf64>
      %a = affine.load %A[%j, %i] : memref<{N}x{N}xf64>
      %beta_a = arith.mulf %beta, %a : f64
      %yj = affine.load %y[%j] : memref<{N}xf64>
      %product = arith.mulf %beta_a, %yj : f64
      %sum = arith.addf %xi, %product : f64
      affine.store %sum, %x[%i] : memref<{N}xf64>
    }
  }
  affine.for %i = 0 to {N} {
    %xi = affine.load %x[%i] : memref<{N}xf64>
    %zi = affine.load %z[%i] : memref<{N}xf64>
    %sum = arith.addf %xi, %zi : f64
    affine.store %sum, %x[%i] : memref<{N}xf64>
  }
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to {N} {
      %wi = affine.load %w[%i] : memref<{N}xf64>
      %a = affine.load %A[%i, %j] : memref<{N}x{N}xf64>
      %alpha_a = arith.mulf %alpha, %a : f64
      %xj = affine.load %x[%j] : memref<{N}xf64>
      %product = arith.mulf %alpha_a, %xj : f64
      %sum = arith.addf %wi, %product : f64
      affine.store %sum, %w[%i] : memref<{N}xf64>
    }
  }
  return
}
