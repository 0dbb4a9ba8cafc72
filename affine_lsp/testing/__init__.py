"""Harnesses shared by tests and benchmarks: run MLIR programs, generate them,
mutate them, compare transformations, drive the server. The tool itself never
imports this layer; tests and benchmarks import its modules by their path:

    progen, nestgen     random affine programs and single nests with known features
    loopdiff            every loop transformation checked against mlir-runner
    oracle              mlir-opt / mlir-runner as subprocesses with timeouts
    mutate              mutations and pathological inputs
    upstream            MLIR's test suite in `../shared/upstream`
    fuzz, editor_stages every analysis stage and editor request on one input
    lsp_client, storm   a raw JSON-RPC client, and storms of edits and requests
    polybench           PolyBench kernels in affine MLIR and their recipes
    polybench_driver    their C driver (checksums, timing), generated from the signature
    polybench_build     their variants built (Polly, MLIR's passes, recipes), run and timed
"""
