// mvt: x1 := x1 + A y_1 and x2 := x2 + A^T y_2, A of NxN (PolyBench 4.2, kernels).
// The driver calls it `calls` times (it reads A twice per call, and A is beyond the caches).
//
// sizes: N=4000
// tiny: N=80
// calls: 8
// polly-best: -mllvm -polly-register-tiling
//   tried (ratio to original, two runs): base 1.36x/1.30x, register tiling 2.47x/2.29x, others
//   0.98-1.40x
// recipe:
//   transform %i#2 --interchange
//   transform %i --unroll-jam 8
func.func @kernel_mvt(%x1: memref<{N}xf64>, %x2: memref<{N}xf64>, %y_1: memref<{N}xf64>,
                      %y_2: memref<{N}xf64>, %A: memref<{N}x{N}xf64>) {
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to {N} {
      %xi = affine.load %x1[%i] : memref<{N}xf64>
      %a = affine.load %A[%i, %j] : memref<{N}x{N}xf64>
      %yj = affine.load %y_1[%j] : memref<{N}xf64>
      %product = arith.mulf %a, %yj : f64
      %sum = arith.addf %xi, %product : f64
      affine.store %sum, %x1[%i] : memref<{N}xf64>
    }
  }
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to {N} {
      %xi = affine.load %x2[%i] : memref<{N}xf64>
      %a = affine.load %A[%j, %i] : memref<{N}x{N}xf64>
      %yj = affine.load %y_2[%j] : memref<{N}xf64>
      %product = arith.mulf %a, %yj : f64
      %sum = arith.addf %xi, %product : f64
      affine.store %sum, %x2[%i] : memref<{N}xf64>
    }
  }
  return
}
