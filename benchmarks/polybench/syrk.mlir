// syrk: C := alpha*A*A^T + beta*C on the lower triangle of C, A of NxM
// (PolyBench 4.2, blas).
//
// sizes: N=1200 M=1000
// tiny: N=60 M=40
// polly-best: -mllvm -polly-register-tiling
//   tried (ratio to original, two runs): base 1.47x/1.56x, register tiling 1.92x/2.24x, others
//   0.7-1.6x
// recipe:
//   transform %i --distribute
//   transform %k --interchange
//   transform %j#2 --unroll-jam 12
//   transform %k --scalar-replace
//
// beta * C distributed out, (k, j) interchanged so that k is innermost (rows of A), and j
// unrolled and jammed by 12 (twelve dot products in flight). The register tile an expert
// wants next (i by 2 around the triangular j) is refused ("the bounds of %j depend on %i").
func.func @kernel_syrk(%alpha: f64, %beta: f64, %C: memref<{N}x{N}xf64>,
                       %A: memref<{N}x{M}xf64>) {
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
      %c = affine.load %C[%i, %j] : memref<{N}x{N}xf64>
      %scaled = arith.mulf %c, %beta : f64
      affine.store %scaled, %C[%i, %j] : memref<{N}x{N}xf64>
    }
    affine.for %k = 0 to {M} {
      affine.for %j = 0 to affine_map<(d0) -> (d0 + 1)>(%i) {
        %aik = affine.load %A[%i, %k] : memref<{N}x{M}xf64>
        %alpha_a = arith.mulf %alpha, %aik : f64
        %ajk = affine.load %A[%j, %k] : memref<{N}x{M}xf64>
        %product = arith.mulf %alpha_a, %ajk : f64
        %c = affine.load %C[%i, %j] : memref<{N}x{N}xf64>
        %sum = arith.addf %c, %product : f64
        affine.store %sum, %C[%i, %j] : memref<{N}x{N}xf64>
      }
    }
  }
  return
}
