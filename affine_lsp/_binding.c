/* Exposes the generated tree-sitter parser for MLIR to py-tree-sitter, and the
 * Span type (`_span.c`). */
#include <Python.h>

typedef struct TSLanguage TSLanguage;
TSLanguage *tree_sitter_mlir(void);
int add_span_type(PyObject *module);

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

PyMODINIT_FUNC PyInit__binding(void) {
    PyObject *created = PyModule_Create(&module);
    if (created != NULL && add_span_type(created) < 0) {
        Py_DECREF(created);
        return NULL;
    }
    return created;
}
