/* 3mm: PolyBench 4.2's initialisation and a plain C reference. */

static void init(double E[NI][NJ], double A[NI][NK], double B[NK][NJ], double F[NJ][NL],
                 double C[NJ][NM], double D[NM][NL], double G[NI][NL]) {
  (void)E;
  (void)F;
  (void)G;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NK; j++)
      A[i][j] = (double)((i * j + 1) % NI) / (5 * NI);
  for (int i = 0; i < NK; i++)
    for (int j = 0; j < NJ; j++)
      B[i][j] = (double)((i * (j + 1) + 2) % NJ) / (5 * NJ);
  for (int i = 0; i < NJ; i++)
    for (int j = 0; j < NM; j++)
      C[i][j] = (double)(i * (j + 3) % NL) / (5 * NL);
  for (int i = 0; i < NM; i++)
    for (int j = 0; j < NL; j++)
      D[i][j] = (double)((i * (j + 2) + 2) % NK) / (5 * NK);
}

static void reference(double E[NI][NJ], double A[NI][NK], double B[NK][NJ], double F[NJ][NL],
                      double C[NJ][NM], double D[NM][NL], double G[NI][NL]) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) {
      E[i][j] = 0.0;
      for (int k = 0; k < NK; k++)
        E[i][j] += A[i][k] * B[k][j];
    }
  for (int i = 0; i < NJ; i++)
    for (int j = 0; j < NL; j++) {
      F[i][j] = 0.0;
      for (int k = 0; k < NM; k++)
        F[i][j] += C[i][k] * D[k][j];
    }
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NL; j++) {
      G[i][j] = 0.0;
      for (int k = 0; k < NJ; k++)
        G[i][j] += E[i][k] * F[k][j];
    }
}
