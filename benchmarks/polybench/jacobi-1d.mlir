// jacobi-1d: T time steps of the 3-point Jacobi stencil, A -> B then B -> A
// (PolyBench 4.2, stencils).
//
// sizes: T=1000 N=1000002
// tiny: T=8 N=66
// polly-best:
//   tried (ratio to original, two runs): base 0.45x/0.37x; stripmine, tile sizes, 2nd-level,
//   register tiling, greedy fusion, no tiling: 0.37-0.50x
// recipe:
//   fuse %i
//   transform %t --skew 2
//   transform %t --tile 512,2048
//   transform %i#1 --scalar-replace
//   transform %i#2 --scalar-replace
//   transform %i#3 --scalar-replace
//   transform %i#4 --scalar-replace
//   transform %i#5 --scalar-replace
//   transform %i#6 --scalar-replace
//
// The recipe is time tiling: the two sweeps fused with the second shifted by one, i skewed
// by 2t, the two loops tiled (each sweep gets its own innermost loop in a tile, over i
// itself: `%A[%i - 1]`, its range moving with t), then scalar replacement in each innermost
// loop: `%A[%i - 1]` and `%A[%i]` carried to the next iterations in registers, one load
// (`%A[%i + 1]`) per instance (%i#3 and %i#4 are the full tiles' loops, where the time goes;
// at the suite's tiny sizes only %i#1 and %i#2 exist). The tiles were bound by their loads:
// three unaligned vector loads per instance, two of them across cache lines (1.67x in a
// quiet run); with one, LLVM builds the neighbours with permutes: 2.85-2.97x in nearly
// quiet runs (tiles of 128 to 1000 time steps by 1024 or 2048 alike; by 4096 1.3x slower: two
// rows of 4096 no longer fit in L1). Over the skewed i_skew in a fixed box of a full tile
// (`%A[%i_skew - %t * 2 - 1]`) LLVM hoisted the loop's alias checks out of t and left it
// scalar (0.43x, see docs/benchmarks.md).
func.func @kernel_jacobi_1d(%A: memref<{N}xf64>, %B: memref<{N}xf64>) {
  %third = arith.constant 0.33333 : f64
  affine.for %t = 0 to {T} {
    affine.for %i = 1 to {N-1} {
      %left = affine.load %A[%i - 1] : memref<{N}xf64>
      %centre = affine.load %A[%i] : memref<{N}xf64>
      %right = affine.load %A[%i + 1] : memref<{N}xf64>
      %sum1 = arith.addf %left, %centre : f64
      %sum2 = arith.addf %sum1, %right : f64
      %value = arith.mulf %third, %sum2 : f64
      affine.store %value, %B[%i] : memref<{N}xf64>
    }
    affine.for %i = 1 to {N-1} {
      %left = affine.load %B[%i - 1] : memref<{N}xf64>
      %centre = affine.load %B[%i] : memref<{N}xf64>
      %right = affine.load %B[%i + 1] : memref<{N}xf64>
      %sum1 = arith.addf %left, %centre : f64
      %sum2 = arith.addf %sum1, %right : f64
      %value = arith.mulf %third, %sum2 : f64
      affine.store %value, %A[%i] : memref<{N}xf64>
    }
  }
  return
}
