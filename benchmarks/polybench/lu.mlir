// lu: the LU decomposition of A in place, L unit lower and U upper triangular, without
// pivoting (PolyBench 4.2, linear-algebra/solvers).
//
// sizes: N=1200
// tiny: N=48
// polly-best: -mllvm -polly-register-tiling
//   tried (ratio to original, two runs): base 0.90x, register tiling 1.15x, no tiling 1.12x,
//   others 0.82-0.98x
// recipe:
//   transform %j#2 --interchange
//   transform %k#2 --unroll-jam 4
func.func @kernel_lu(%A: memref<{N}x{N}xf64>) {
  affine.for %i = 0 to {N} {
    affine.for %j = 0 to affine_map<(d0) -> (d0)>(%i) {
      affine.for %k = 0 to affine_map<(d0) -> (d0)>(%j) {
        %aij = affine.load %A[%i, %j] : memref<{N}x{N}xf64>
        %aik = affine.load %A[%i, %k] : memref<{N}x{N}xf64>
        %akj = affine.load %A[%k, %j] : memref<{N}x{N}xf64>
        %product = arith.mulf %aik, %akj : f64
        %difference = arith.subf %aij, %product : f64
        affine.store %difference, %A[%i, %j] : memref<{N}x{N}xf64>
      }
      %aij = affine.load %A[%i, %j] : memref<{N}x{N}xf64>
      %ajj = affine.load %A[%j, %j] : memref<{N}x{N}xf64>
      %quotient = arith.divf %aij, %ajj : f64
      affine.store %quotient, %A[%i, %j] : memref<{N}x{N}xf64>
    }
    affine.for %j = affine_map<(d0) -> (d0)>(%i) to {N} {
      affine.for %k = 0 to affine_map<(d0) -> (d0)>(%i) {
        %aij = affine.load %A[%i, %j] : memref<{N}x{N}xf64>
        %aik = affine.load %A[%i, %k] : memref<{N}x{N}xf64>
        %akj = affine.load %A[%k, %j] : memref<{N}x{N}xf64>
        %product = arith.mulf %aik, %akj : f64
        %difference = arith.subf %aij, %product : f64
        affine.store %difference, %A[%i, %j] : memref<{N}x{N}xf64>
      }
    }
  }
  return
}
