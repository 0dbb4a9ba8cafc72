// jacobi-2d: T time steps of the 5-point Jacobi stencil, A -> B then B -> A
// (PolyBench 4.2, stencils).
//
// sizes: T=500 N=1298
// tiny: T=4 N=34
// polly-best:
//   tried (ratio to original, two runs): base 0.77x; stripmine, tile sizes, 2nd-level, register
//   tiling, greedy fusion, no tiling: 0.60-0.74x
// recipe:
//   fuse %i --depth 2
//   transform %t --skew 2,2
//   transform %t --tile 8,32,128
//
// The recipe is time tiling: the two sweeps fused with the second shifted by one along i and
// j, i and j skewed by 2t, the three loops tiled (each sweep gets its own innermost loop in
// a tile; the rows the fusion peeled join the tiles).
func.func @kernel_jacobi_2d(%A: memref<{N}x{N}xf64>, %B: memref<{N}x{N}xf64>) {
  %fifth = arith.constant 0.2 : f64
  affine.for %t = 0 to {T} {
    affine.for %i = 1 to {N-1} {
      affine.for %j = 1 to {N-1} {
        %centre = affine.load %A[%i, %j] : memref<{N}x{N}xf64>
        %west = affine.load %A[%i, %j - 1] : memref<{N}x{N}xf64>
        %east = affine.load %A[%i, %j + 1] : memref<{N}x{N}xf64>
        %south = affine.load %A[%i + 1, %j] : memref<{N}x{N}xf64>
        %north = affine.load %A[%i - 1, %j] : memref<{N}x{N}xf64>
        %sum1 = arith.addf %centre, %west : f64
        %sum2 = arith.addf %sum1, %east : f64
        %sum3 = arith.addf %sum2, %south : f64
        %sum4 = arith.addf %sum3, %north : f64
        %value = arith.mulf %fifth, %sum4 : f64
        affine.store %value, %B[%i, %j] : memref<{N}x{N}xf64>
      }
    }
    affine.for %i = 1 to {N-1} {
      affine.for %j = 1 to {N-1} {
        %centre = affine.load %B[%i, %j] : memref<{N}x{N}xf64>
        %west = affine.load %B[%i, %j - 1] : memref<{N}x{N}xf64>
        %east = affine.load %B[%i, %j + 1] : memref<{N}x{N}xf64>
        %south = affine.load %B[%i + 1, %j] : memref<{N}x{N}xf64>
        %north = affine.load %B[%i - 1, %j] : memref<{N}x{N}xf64>
        %sum1 = arith.addf %centre, %west : f64
        %sum2 = arith.addf %sum1, %east : f64
        %sum3 = arith.addf %sum2, %south : f64
        %sum4 = arith.addf %sum3, %north : f64
        %value = arith.mulf %fifth, %sum4 : f64
        affine.store %value, %A[%i, %j] : memref<{N}x{N}xf64>
      }
    }
  }
  return
}
