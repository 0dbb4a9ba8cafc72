/* Exposes the generated tree-sitter parser for MLIR to py-tree-sitter. */
#include <Python.h>

typedef struct TSLanguage TSLanguage;
TSLanguage *tree_sitter_mlir(void);

static PyObject *binding_language(PyObject *self, PyObject *args) {
    (void)self;
    (void)args;
    return PyCapsule_New(tree_sitter_mlir(), "tree_sitter.Language", NULL);
}

static PyMethodDef methods[] = {
    {"language", binding_language, METH_NOARGS, "The tree-sitter Language for MLIR."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_binding", "tree-sitter MLIR parser", -1, methods,
};

PyMODINIT_FUNC PyInit__binding(void) { return PyModule_Create(&module); }
