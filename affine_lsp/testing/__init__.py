"""Differential-testing harness: run MLIR programs, generate them, compare transformations."""
