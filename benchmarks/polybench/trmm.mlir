// trmm: B := alpha * A^T B with A unit lower triangular (of MxM), B of MxN
// (PolyBench 4.2, blas).
//
// sizes: M=1000 N=1200
// tiny: M=60 N=80
// polly-best: -mllvm -polly-2nd-level-tiling
//   tried (ratio to original, two runs): base 1.22x/1.39x, 2nd-level tiling 1.84x/1.41x,
//   stripmine 1.87x/1.20x
// recipe:
//   transform %j --distribute
//   transform %j --interchange
//   transform %k --unroll-jam 4
func.func @kernel_trmm(%alpha: f64, %A: memref<{M}x{M}xf64>, %B: memref<{M}x{N}xf64>) {
  affine.for %i = 0 to {M} {
    affine.for %j = 0 to {N} {
      affine.for %k = affine_map<(d0) -> (d0 + 1)>(%i) to {M} {
        %aki = affine.load %A[%k, %i] : memref<{M}x{M}xf64>
        %bkj = affine.load %B[%k, %j] : memref<{M}x{N}xf64>
        %product = arith.mulf %aki, %bkj : f64
        %b = affine.load %B[%i, %j] : memref<{M}x{N}xf64>
        %sum = arith.addf %b, %product : f64
        affine.store %sum, %B[%i, %j] : memref<{M}x{N}xf64>
      }
      %b = affine.load %B[%i, %j] : memref<{M}x{N}xf64>
      %scaled = arith.mulf %alpha, %b : f64
      affine.store %scaled, %B[%i, %j] : memref<{M}x{N}xf64>
    }
  }
  return
}
