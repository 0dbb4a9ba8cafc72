// gesummv: y := alpha*A*x + beta*B*x, A and B of NxN (PolyBench 4.2, kernels).
// The driver calls it `calls` times (it reads A and B once per call, beyond the caches).
//
// sizes: N=3000
// tiny: N=80
// calls: 10
// polly-best: -mllvm -polly-tiling=false
//   tried (ratio to original, two runs): base 1.84x/2.09x, no tiling 4.5x/4.3x, loop fusion
//   greedy 3.5x/4.0x
// recipe:
//   transform %i --tile 1500
//   transform %i_tile --skew -1
//   transform %i_tile --interchange
//   transform %i_tile --unroll-jam 2
//   transform %j --scalar-replace
//
// The nest streams A and B from memory, and each row's two sums are chains of dependent adds
// (the order of the additions is kept): it waits on both. i unrolled and jammed by 2 with its
// copies 1500 rows apart (tiled by 1500, the point loop skewed to count from 0, the tile loop
// moved inside and jammed): four chains at once, and rows far from each other; the four sums
// kept in registers through j (scalar replacement). One interleaved run: 6.2x the original,
// 4.6x with the sums in registers alone (as Polly does: its best flags 4.6x), 3.6x with
// consecutive rows jammed (i and i + 1: slower than not jammed), 5.1x with 4 copies 750 apart.
func.func @kernel_gesummv(%alpha: f64, %beta: f64, %A: memref<{N}x{N}xf64>,
                          %B: memref<{N}x{N}xf64>, %tmp: memref<{N}xf64>,
                          %x: memref<{N}xf64>, %y: memref<{N}xf64>) {
  %zero = arith.constant 0.0 : f64
  affine.for %i = 0 to {N} {
    affine.store %zero, %tmp[%i] : memref<{N}xf64>
    affine.store %zero, %y[%i] : memref<{N}xf64>
    affine.for %j = 0 to {N} {
      %a = affine.load %A[%i, %j] : memref<{N}x{N}xf64>
      %xj = affine.load %x[%j] : memref<{N}xf64>
      %ax = arith.mulf %a, %xj : f64
      %t = affine.load %tmp[%i] : memref<{N}xf64>
      %t_sum = arith.addf %ax, %t : f64
      affine.store %t_sum, %tmp[%i] : memref<{N}xf64>
      %b = affine.load %B[%i, %j] : memref<{N}x{N}xf64>
      %bx = arith.mulf %b, %xj : f64
      %yi = affine.load %y[%i] : memref<{N}xf64>
      %y_sum = arith.addf %bx, %yi : f64
      affine.store %y_sum, %y[%i] : memref<{N}xf64>
    }
    %t = affine.load %tmp[%i] : memref<{N}xf64>
    %alpha_t = arith.mulf %alpha, %t : f64
    %yi = affine.load %y[%i] : memref<{N}xf64>
    %beta_y = arith.mulf %beta, %yi : f64
    %result = arith.addf %alpha_t, %beta_y : f64
    affine.store %result, %y[%i] : memref<{N}xf64>
  }
  return
}
