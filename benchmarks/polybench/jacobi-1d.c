/* jacobi-1d: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double A[N], double B[N]) {
  for (int i = 0; i < N; i++) {
    A[i] = ((double)i + 2) / N;
    B[i] = ((double)i + 3) / N;
  }
}

static void reference(double A[N], double B[N]) {
  for (int t = 0; t < T; t++) {
    for (int i = 1; i < N - 1; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (int i = 1; i < N - 1; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
}
