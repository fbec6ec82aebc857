/*
 * The per-reference loop of fleet.graph._resolve.Resolver.resolve_file, over RawRefs' columns.
 *
 * fanout(scopes, names, kinds, kind_names, local, python, classes, enclosing, cache, miss,
 *        fd, rawref) -> (targets, flags)
 *
 * scopes, names: tuples of str; kinds: bytes (codes into the tuple kind_names); local: the set
 * of names some function or class scope of the file binds; classes: dict scope -> enclosing
 * class (filled here through enclosing(scope)); cache: dict (scope, name, kind) -> (target,
 * exact), shared over the file; miss(ref, fd): the resolution of reference i when its key is
 * not in the cache, where ref is a ``rawref`` (the RawRef named tuple) of its scope, name and
 * kind, built here without a Python frame; its positions are 0 (resolution never reads them). The same keys, the same order of misses and the same targets and flags as the
 * Python loop (which stays for references not in columns): see resolve_file for the rules.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

enum { DROPPED = 0, EXACT = 1, PREFIX = 2 };

static PyObject *EMPTY, *PARENS, *SELF, *CLS, *ZERO;

static int ensure_constants(void) {
  if (EMPTY != NULL) return 0;
  EMPTY = PyUnicode_InternFromString("");
  PARENS = PyUnicode_InternFromString("()");
  SELF = PyUnicode_InternFromString("self");
  CLS = PyUnicode_InternFromString("cls");
  ZERO = PyLong_FromLong(0);
  return (EMPTY && PARENS && SELF && CLS && ZERO) ? 0 : -1;
}

/* the key's scope for reference (scope, name, kind): a new reference, or NULL on error */
static PyObject *key_scope(PyObject *scope, PyObject *name, int has_call, PyObject *kind,
                           PyObject *local, int python, PyObject *classes,
                           PyObject *enclosing) {
  if (has_call) return Py_NewRef(scope);
  Py_ssize_t n = PyUnicode_GET_LENGTH(name);
  Py_ssize_t dot = PyUnicode_FindChar(name, '.', 0, n, 1);
  if (dot == -2) return NULL;
  PyObject *head = dot < 0 ? Py_NewRef(name) : PyUnicode_Substring(name, 0, dot);
  if (head == NULL) return NULL;
  int bound = PySet_Contains(local, head);
  if (bound <= 0) {
    Py_DECREF(head);
    return bound < 0 ? NULL : Py_NewRef(EMPTY);
  }
  int selfish = python && (PyUnicode_Compare(head, SELF) == 0 ||
                           PyUnicode_Compare(head, CLS) == 0) &&
                PyUnicode_CompareWithASCIIString(kind, "inherit") != 0;
  Py_DECREF(head);
  if (!selfish) return Py_NewRef(scope);
  PyObject *cls = PyDict_GetItemWithError(classes, scope); /* borrowed */
  if (cls == NULL) {
    if (PyErr_Occurred()) return NULL;
    PyObject *found = PyObject_CallOneArg(enclosing, scope);
    if (found == NULL) return NULL;
    int bad = PyDict_SetItem(classes, scope, found);
    Py_DECREF(found);
    if (bad) return NULL;
    cls = PyDict_GetItemWithError(classes, scope);
    if (cls == NULL) return NULL;
  }
  /* ``cls or ref.scope``: None (no enclosing class) or "" */
  if (cls == Py_None || (PyUnicode_Check(cls) && PyUnicode_GET_LENGTH(cls) == 0))
    return Py_NewRef(scope);
  return Py_NewRef(cls);
}

PyObject *fleet_fanout(PyObject *self, PyObject *args) {
  PyObject *scopes, *names, *kinds, *kind_names, *local, *classes, *enclosing, *cache, *miss;
  PyObject *fd;
  PyTypeObject *rawref;
  int python;
  if (!PyArg_ParseTuple(args, "O!O!SO!O!pO!OO!OOO!", &PyTuple_Type, &scopes, &PyTuple_Type,
                        &names, &kinds, &PyTuple_Type, &kind_names, &PySet_Type, &local,
                        &python, &PyDict_Type, &classes, &enclosing, &PyDict_Type, &cache,
                        &miss, &fd, &PyType_Type, &rawref))
    return NULL;
  if (!PyType_IsSubtype(rawref, &PyTuple_Type)) {
    PyErr_SetString(PyExc_TypeError, "fanout: rawref is not a tuple type");
    return NULL;
  }
  if (ensure_constants()) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(names);
  if (PyTuple_GET_SIZE(scopes) != n || PyBytes_GET_SIZE(kinds) != n) {
    PyErr_SetString(PyExc_ValueError, "fanout: columns of different lengths");
    return NULL;
  }
  const unsigned char *codes = (const unsigned char *)PyBytes_AS_STRING(kinds);
  Py_ssize_t nkinds = PyTuple_GET_SIZE(kind_names);
  PyObject *targets = PyList_New(n);
  PyObject *flags = PyBytes_FromStringAndSize(NULL, n);
  if (targets == NULL || flags == NULL) goto fail;
  char *out = PyBytes_AS_STRING(flags);
  memset(out, DROPPED, (size_t)n);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *scope = PyTuple_GET_ITEM(scopes, i), *name = PyTuple_GET_ITEM(names, i);
    if (!PyUnicode_Check(name) || codes[i] >= nkinds) {
      PyErr_SetString(PyExc_TypeError, "fanout: a name that is not a str, or a bad kind");
      goto fail;
    }
    PyObject *kind = PyTuple_GET_ITEM(kind_names, codes[i]);
    Py_ssize_t call = PyUnicode_Find(name, PARENS, 0, PyUnicode_GET_LENGTH(name), 1);
    if (call == -2) goto fail;
    PyObject *ks = key_scope(scope, name, call >= 0, kind, local, python, classes, enclosing);
    if (ks == NULL) goto fail;
    PyObject *key = PyTuple_Pack(3, ks, name, kind);
    Py_DECREF(ks);
    if (key == NULL) goto fail;
    PyObject *hit = PyDict_GetItemWithError(cache, key); /* borrowed */
    if (hit != NULL) {
      Py_INCREF(hit);
    } else if (PyErr_Occurred()) {
      Py_DECREF(key);
      goto fail;
    } else {
      /* RawRef(scope, name, kind, 0, 0, 0, 0) as tuple.__new__ builds it */
      PyObject *ref = rawref->tp_alloc(rawref, 7);
      if (ref != NULL) {
        PyTuple_SET_ITEM(ref, 0, Py_NewRef(scope));
        PyTuple_SET_ITEM(ref, 1, Py_NewRef(name));
        PyTuple_SET_ITEM(ref, 2, Py_NewRef(kind));
        for (int f = 3; f < 7; f++) PyTuple_SET_ITEM(ref, f, Py_NewRef(ZERO));
        PyObject *argv[2] = {ref, fd};
        hit = PyObject_Vectorcall(miss, argv, 2, NULL);
        Py_DECREF(ref);
      } else {
        hit = NULL;
      }
      if (hit == NULL || PyDict_SetItem(cache, key, hit)) {
        Py_XDECREF(hit);
        Py_DECREF(key);
        goto fail;
      }
    }
    Py_DECREF(key);
    if (!PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 2) {
      Py_DECREF(hit);
      PyErr_SetString(PyExc_TypeError, "fanout: a resolution that is not (target, exact)");
      goto fail;
    }
    PyObject *target = PyTuple_GET_ITEM(hit, 0);
    int exact = PyObject_IsTrue(PyTuple_GET_ITEM(hit, 1));
    if (exact < 0) {
      Py_DECREF(hit);
      goto fail;
    }
    PyObject *value = Py_None;
    if (!exact && call >= 0) {
      /* a chain through a call: only an exact target counts */
    } else if (PyUnicode_Check(target) && PyUnicode_GET_LENGTH(target) == 0) {
      /* a local variable: a plain use is no reference to a symbol */
      if (PyUnicode_CompareWithASCIIString(kind, "name") != 0)
        out[i] = exact ? EXACT : PREFIX;
    } else {
      value = target;
      out[i] = exact ? EXACT : PREFIX;
    }
    PyList_SET_ITEM(targets, i, Py_NewRef(value));
    Py_DECREF(hit);
  }
  PyObject *result = PyTuple_Pack(2, targets, flags);
  Py_DECREF(targets);
  Py_DECREF(flags);
  return result;
fail:
  Py_XDECREF(targets);
  Py_XDECREF(flags);
  return NULL;
}
