/* gemm: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double *alpha, double *beta, double C[NI][NJ], double A[NI][NK],
                 double B[NK][NJ]) {
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      C[i][j] = (double)((i * j + 1) % NI) / NI;
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i][k] = (double)(i * (k + 1) % NK) / NK;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k][j] = (double)(k * (j + 2) % NJ) / NJ;
}

static void reference(double alpha, double beta, double C[NI][NJ], double A[NI][NK],
                      double B[NK][NJ]) {
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++)
      C[i][j] *= beta;
    for (int k = 0; k < NK; k++)
      for (int j = 0; j < NJ; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
}
