/* Span: an immutable byte range [start_byte, end_byte) of a document.
 *
 * A semantic model holds spans by the hundred thousand (every op, value, use and
 * expression has one): as a C type, making one costs a fraction of a Python
 * class's __init__. `affine_lsp.syntax.nodes.Span` is this type; it behaves as a
 * frozen dataclass with the two fields would (equality, hash, repr, read-only). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    Py_ssize_t start_byte;
    Py_ssize_t end_byte;
} SpanObject;

static PyTypeObject SpanType;

static PyObject *span_make(PyTypeObject *type, Py_ssize_t start, Py_ssize_t end) {
    SpanObject *self = (SpanObject *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->start_byte = start;
        self->end_byte = end;
    }
    return (PyObject *)self;
}

static PyObject *span_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"start_byte", "end_byte", NULL};
    Py_ssize_t start, end;
    if (kwargs == NULL && PyTuple_GET_SIZE(args) == 2) { /* the usual call: Span(a, b) */
        start = PyLong_AsSsize_t(PyTuple_GET_ITEM(args, 0));
        if (start == -1 && PyErr_Occurred()) return NULL;
        end = PyLong_AsSsize_t(PyTuple_GET_ITEM(args, 1));
        if (end == -1 && PyErr_Occurred()) return NULL;
    } else if (!PyArg_ParseTupleAndKeywords(args, kwargs, "nn:Span", names, &start, &end)) {
        return NULL;
    }
    return span_make(type, start, end);
}

/* The attribute names, made once: `PyObject_GetAttrString` would make a string for
 * every call, which costs more than the attribute itself. */
static PyObject *start_byte_name;
static PyObject *end_byte_name;

/* The span of anything with `start_byte` and `end_byte` attributes (a syntax node). */
static PyObject *span_of_attributes(PyTypeObject *type, PyObject *first, PyObject *last) {
    PyObject *start_obj = PyObject_GetAttr(first, start_byte_name);
    if (start_obj == NULL) return NULL;
    Py_ssize_t start = PyLong_AsSsize_t(start_obj);
    Py_DECREF(start_obj);
    if (start == -1 && PyErr_Occurred()) return NULL;
    PyObject *end_obj = PyObject_GetAttr(last, end_byte_name);
    if (end_obj == NULL) return NULL;
    Py_ssize_t end = PyLong_AsSsize_t(end_obj);
    Py_DECREF(end_obj);
    if (end == -1 && PyErr_Occurred()) return NULL;
    return span_make(type, start, end);
}

static PyObject *span_of(PyObject *cls, PyObject *node) {
    return span_of_attributes((PyTypeObject *)cls, node, node);
}

static PyObject *span_between(PyObject *cls, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "Span.between(first, last) takes two nodes");
        return NULL;
    }
    return span_of_attributes((PyTypeObject *)cls, args[0], args[1]);
}

static PyObject *span_contains(SpanObject *self, PyObject *arg) {
    Py_ssize_t offset = PyLong_AsSsize_t(arg);
    if (offset == -1 && PyErr_Occurred()) return NULL;
    return PyBool_FromLong(self->start_byte <= offset && offset <= self->end_byte);
}

static PyObject *span_overlaps(SpanObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "overlaps(start, end) takes two offsets");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[0]);
    if (start == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t end = PyLong_AsSsize_t(args[1]);
    if (end == -1 && PyErr_Occurred()) return NULL;
    return PyBool_FromLong(self->start_byte < end && start < self->end_byte);
}

static PyObject *span_reduce(SpanObject *self, PyObject *unused) {
    (void)unused;
    return Py_BuildValue("(O(nn))", Py_TYPE(self), self->start_byte, self->end_byte);
}

static PyObject *span_repr(SpanObject *self) {
    return PyUnicode_FromFormat("Span(start_byte=%zd, end_byte=%zd)", self->start_byte,
                                self->end_byte);
}

static Py_hash_t span_hash(SpanObject *self) {
    /* As hash((start_byte, end_byte)) would spread them; -1 is reserved for errors. */
    Py_uhash_t h = (Py_uhash_t)self->start_byte * 1000003UL ^ (Py_uhash_t)self->end_byte;
    h ^= h >> 29;
    return h == (Py_uhash_t)-1 ? -2 : (Py_hash_t)h;
}

static PyObject *span_richcompare(PyObject *a, PyObject *b, int op) {
    if (Py_TYPE(a) != Py_TYPE(b) || (op != Py_EQ && op != Py_NE)) {
        Py_RETURN_NOTIMPLEMENTED;
    }
    SpanObject *x = (SpanObject *)a, *y = (SpanObject *)b;
    int equal = x->start_byte == y->start_byte && x->end_byte == y->end_byte;
    return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

static PyMemberDef span_members[] = {
    {"start_byte", T_PYSSIZET, offsetof(SpanObject, start_byte), READONLY, "first byte"},
    {"end_byte", T_PYSSIZET, offsetof(SpanObject, end_byte), READONLY, "the byte after"},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef span_methods[] = {
    {"of", (PyCFunction)span_of, METH_O | METH_CLASS, "The span of a syntax node."},
    {"between", (PyCFunction)(void (*)(void))span_between, METH_FASTCALL | METH_CLASS,
     "From the start of the first node to the end of the last."},
    {"contains", (PyCFunction)span_contains, METH_O, "Whether start <= offset <= end."},
    {"overlaps", (PyCFunction)(void (*)(void))span_overlaps, METH_FASTCALL,
     "Whether the span overlaps [start, end)."},
    {"__reduce__", (PyCFunction)span_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SpanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "affine_lsp.syntax.nodes.Span",
    .tp_doc = "A byte range [start_byte, end_byte) of a document.",
    .tp_basicsize = sizeof(SpanObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = span_new,
    .tp_repr = (reprfunc)span_repr,
    .tp_hash = (hashfunc)span_hash,
    .tp_richcompare = span_richcompare,
    .tp_members = span_members,
    .tp_methods = span_methods,
};

int add_span_type(PyObject *module) {
    start_byte_name = PyUnicode_InternFromString("start_byte");
    end_byte_name = PyUnicode_InternFromString("end_byte");
    if (start_byte_name == NULL || end_byte_name == NULL) return -1;
    if (PyType_Ready(&SpanType) < 0) return -1;
    Py_INCREF(&SpanType);
    if (PyModule_AddObject(module, "Span", (PyObject *)&SpanType) < 0) {
        Py_DECREF(&SpanType);
        return -1;
    }
    return 0;
}
