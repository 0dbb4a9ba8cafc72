// heat-3d: T time steps of the 7-point heat equation stencil in 3-D, A -> B then B -> A
// (PolyBench 4.2, stencils).
//
// sizes: T=160 N=122
// tiny: T=2 N=18
// polly-best: -mllvm -polly-vectorizer=stripmine
//   tried (ratio to original, two runs): base 0.66x/0.62x, stripmine 0.98x/0.93x, others
//   0.5-0.86x
// recipe:
//   fuse %i
//   transform %t --skew 2,2,2
//   transform %t --tile 16,4
//
// The recipe is time tiling: the two sweeps fused with the second shifted by one along i and
// j, i, j and k skewed by 2t, (t, i) tiled 16x4 with j and k whole (the pieces the fusion
// peeled join the tiles). Every tile shape runs the same unit-stride loop over k, whose speed
// in cache bounds them all (the original, run on arrays that fit in L2, makes its points about
// 2.9 times as fast as at these sizes). Interleaved runs on a loaded machine, three of them,
// ratio to the original: 16x4 2.42-2.44x, 16x32x32 (the recipe before) 2.18-2.19x, 16x6 2.41x,
// 16x3 and 8x4 2.34-2.35x; in another, 16x4 2.36x, 16x32x32 2.28x, 16x16x16 and 32x32x32
// 2.0x; cutting k (16x16x16x32 after fusing at depth 3) 1.6x where 16x32x32 made 2.05x. Tiles of (t, i, j) such as 16x16x8 are proven with their point loops
// bounded by min/max (one copy of each statement): peeled, their proof is too complex.
// `optimize` tiles (t, i) 16x8 with j and k whole (fused with a shift of 1 along k too): its
// model counts the pieces of a tile (16x16x8 with k whole: about 490,000 runs of 8 rows, 4e7
// cycles) and tries plane tiles (their box over all their steps within half of L3); before,
// it tiled 16x16x8. Measured, 16x8 and 16x4 in its code ran 2.19-2.27x where its 16x16x8 ran
// 1.93x (one loaded run).
func.func @kernel_heat_3d(%A: memref<{N}x{N}x{N}xf64>, %B: memref<{N}x{N}x{N}xf64>) {
  %eighth = arith.constant 0.125 : f64
  %two = arith.constant 2.0 : f64
  affine.for %t = 1 to {T+1} {
    affine.for %i = 1 to {N-1} {
      affine.for %j = 1 to {N-1} {
        affine.for %k = 1 to {N-1} {
          %c = affine.load %A[%i, %j, %k] : memref<{N}x{N}x{N}xf64>
          %twice = arith.mulf %two, %c : f64
          %ip = affine.load %A[%i + 1, %j, %k] : memref<{N}x{N}x{N}xf64>
          %im = affine.load %A[%i - 1, %j, %k] : memref<{N}x{N}x{N}xf64>
          %di1 = arith.subf %ip, %twice : f64
          %di2 = arith.addf %di1, %im : f64
          %di = arith.mulf %eighth, %di2 : f64
          %jp = affine.load %A[%i, %j + 1, %k] : memref<{N}x{N}x{N}xf64>
          %jm = affine.load %A[%i, %j - 1, %k] : memref<{N}x{N}x{N}xf64>
          %dj1 = arith.subf %jp, %twice : f64
          %dj2 = arith.addf %dj1, %jm : f64
          %dj = arith.mulf %eighth, %dj2 : f64
          %kp = affine.load %A[%i, %j, %k + 1] : memref<{N}x{N}x{N}xf64>
          %km = affine.load %A[%i, %j, %k - 1] : memref<{N}x{N}x{N}xf64>
          %dk1 = arith.subf %kp, %twice : f64
          %dk2 = arith.addf %dk1, %km : f64
          %dk = arith.mulf %eighth, %dk2 : f64
          %sum1 = arith.addf %di, %dj : f64
          %sum2 = arith.addf %sum1, %dk : f64
          %value = arith.addf %sum2, %c : f64
          affine.store %value, %B[%i, %j, %k] : memref<{N}x{N}x{N}xf64>
        }
      }
    }
    affine.for %i = 1 to {N-1} {
      affine.for %j = 1 to {N-1} {
        affine.for %k = 1 to {N-1} {
          %c = affine.load %B[%i, %j, %k] : memref<{N}x{N}x{N}xf64>
          %twice = arith.mulf %two, %c : f64
          %ip = affine.load %B[%i + 1, %j, %k] : memref<{N}x{N}x{N}xf64>
          %im = affine.load %B[%i - 1, %j, %k] : memref<{N}x{N}x{N}xf64>
          %di1 = arith.subf %ip, %twice : f64
          %di2 = arith.addf %di1, %im : f64
          %di = arith.mulf %eighth, %di2 : f64
          %jp = affine.load %B[%i, %j + 1, %k] : memref<{N}x{N}x{N}xf64>
          %jm = affine.load %B[%i, %j - 1, %k] : memref<{N}x{N}x{N}xf64>
          %dj1 = arith.subf %jp, %twice : f64
          %dj2 = arith.addf %dj1, %jm : f64
          %dj = arith.mulf %eighth, %dj2 : f64
          %kp = affine.load %B[%i, %j, %k + 1] : memref<{N}x{N}x{N}xf64>
          %km = affine.load %B[%i, %j, %k - 1] : memref<{N}x{N}x{N}xf64>
          %dk1 = arith.subf %kp, %twice : f64
          %dk2 = arith.addf %dk1, %km : f64
          %dk = arith.mulf %eighth, %dk2 : f64
          %sum1 = arith.addf %di, %dj : f64
          %sum2 = arith.addf %sum1, %dk : f64
          %value = arith.addf %sum2, %c : f64
          affine.store %value, %A[%i, %j, %k] : memref<{N}x{N}x{N}xf64>
        }
      }
    }
  }
  return
}
