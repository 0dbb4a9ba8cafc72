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
//   transform %j --scalar-replace
//
// The two sums tmp[i] and y[i] kept in registers through j (scalar replacement), as Polly
// does. Unrolled and jammed by 2, 4 or 8 first, clang packs the copies' rows of A and B into
// vector gathers: 2.7x, 1.2x and 1.1x against 7.6x (one interleaved run).
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
