// Several independent mistakes: `affine-lsp check` reports every one of them,
// each on the operand or map that is wrong.
#tile = affine_map<(d0)[s0] -> (d0 * 4, s0)>

func.func @mistakes(%A: memref<?x?xf32>, %n: index, %f: f32) {
  %c0 = arith.constant 0 : index
  affine.for %i = 0 to %n {
    // A loop-variant value used as a symbol.
    %m = arith.addi %i, %c0 : index
    affine.for %j = 0 to %m {
      // Two subscripts for a rank-2 memref: fine. Three: wrong.
      %v = affine.load %A[%i, %j, %c0] : memref<?x?xf32>
      // A map with one dimension applied to two.
      %t = affine.apply #tile(%i, %j)[%n]
      affine.store %f, %A[%i, %j] : memref<?x?xf32>
    }
  }
  affine.for %k = 0 to 10 step 0 {
  }
  return
}

// Mistakes whose correction is determined: each has a quick fix.
func.func @fixable(%A: memref<?xf32>, %n: index) {
  affine.for %i = 0 to %n {
    // A valid dimension (an affine.apply of %i) used as a symbol.
    %h = affine.apply affine_map<(d0) -> (d0 floordiv 2)>(%i)
    affine.for %j = 0 to %h {
      // The map takes two dimensions; %j is given as a symbol.
      %k = affine.apply affine_map<(d0, d1) -> (d0 + d1)>(%i)[%j]
      %v = affine.load %A[%k] : memref<?xf32>
    }
  }
  return
}
