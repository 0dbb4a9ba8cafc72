/* 2mm: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double *alpha, double *beta, double tmp[NI][NJ], double A[NI][NK],
                 double B[NK][NJ], double C[NJ][NL], double D[NI][NL]) {
  (void)tmp;
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NK; j++)
      A[i][j] = (double)((i * j + 1) % NI) / NI;
  for (int i = 0; i < NK; i++)
    for (int j = 0; j < NJ; j++)
      B[i][j] = (double)(i * (j + 1) % NJ) / NJ;
  for (int i = 0; i < NJ; i++)
    for (int j = 0; j < NL; j++)
      C[i][j] = (double)((i * (j + 3) + 1) % NL) / NL;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NL; j++)
      D[i][j] = (double)(i * (j + 2) % NK) / NK;
}

static void reference(double alpha, double beta, double tmp[NI][NJ], double A[NI][NK],
                      double B[NK][NJ], double C[NJ][NL], double D[NI][NL]) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) {
      tmp[i][j] = 0.0;
      for (int k = 0; k < NK; k++)
        tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NL; j++) {
      D[i][j] *= beta;
      for (int k = 0; k < NJ; k++)
        D[i][j] += tmp[i][k] * C[k][j];
    }
}
