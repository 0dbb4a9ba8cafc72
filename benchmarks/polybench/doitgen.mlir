// doitgen: A[r][q][:] := A[r][q][:] * C4 for every r and q, through sum
// (PolyBench 4.2, kernels).
//
// sizes: NR=200 NQ=200 NP=240
// tiny: NR=10 NQ=12 NP=16
// polly-best: -mllvm -polly-2nd-level-tiling
//   tried (ratio to original, two runs): base 5.2x/6.7x, 2nd-level tiling 7.5x/7.7x, loop fusion
//   greedy 6.8x/6.6x
// recipe:
//   transform %p --distribute
//   transform %p#2 --interchange
//   transform %s --unroll-jam 2
//
// The zeroing of sum distributed out, (p, s) interchanged so that p is unit-stride (the vector
// loop), s unrolled and jammed by 2. Each copy of s reads another row of C4 (460 KB, from L2) a
// vector at a time: 2 rows at once ran 9.8x the original, 4 rows 7.0x, 8 rows 7.3x, 1 row
// 8.7x (one interleaved run; Polly best 7.2x); p tiled by 48 and s jammed by 4 gave 6.8x.
func.func @kernel_doitgen(%A: memref<{NR}x{NQ}x{NP}xf64>, %C4: memref<{NP}x{NP}xf64>,
                          %sum: memref<{NP}xf64>) {
  %zero = arith.constant 0.0 : f64
  affine.for %r = 0 to {NR} {
    affine.for %q = 0 to {NQ} {
      affine.for %p = 0 to {NP} {
        affine.store %zero, %sum[%p] : memref<{NP}xf64>
        affine.for %s = 0 to {NP} {
          %a = affine.load %A[%r, %q, %s] : memref<{NR}x{NQ}x{NP}xf64>
          %c = affine.load %C4[%s, %p] : memref<{NP}x{NP}xf64>
          %product = arith.mulf %a, %c : f64
          %acc = affine.load %sum[%p] : memref<{NP}xf64>
          %total = arith.addf %acc, %product : f64
          affine.store %total, %sum[%p] : memref<{NP}xf64>
        }
      }
      affine.for %p = 0 to {NP} {
        %total = affine.load %sum[%p] : memref<{NP}xf64>
        affine.store %total, %A[%r, %q, %p] : memref<{NR}x{NQ}x{NP}xf64>
      }
    }
  }
  return
}
