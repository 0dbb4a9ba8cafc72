// A wavefront: each element is computed from its left neighbour and from the
// element up and to the right, so the loops cannot be swapped or tiled as they
// are (a dependence would run backwards). Skewing %j by %i makes every
// dependence point forwards in both loops: "Skew %j by 1 and tile" is legal.
// `affine-lsp draw examples/wavefront.mlir --line 7` shows the dependences.
func.func @wavefront(%A: memref<16x16xf32>) {
  affine.for %i = 1 to 11 {
    affine.for %j = 1 to 11 {
      %up = affine.load %A[%i - 1, %j + 1] : memref<16x16xf32>
      %left = affine.load %A[%i, %j - 1] : memref<16x16xf32>
      %sum = arith.addf %up, %left : f32
      affine.store %sum, %A[%i, %j] : memref<16x16xf32>
    }
  }
  return
}
