/*
 * The resolver's key filter and the forked children's re-interning, for fleet.graph._resolve and
 * fleet.graph._fork: foreign_keys and reintern. Split from fanout.c, which keeps the
 * per-reference loop and the scope lookup; each stays tested against its Python version.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/*
 * foreign_keys(keys, path) -> frozenset: _resolve._foreign_keys in C (which stays the
 * specification): the keys that name something outside ``path``, i.e. neither starting with
 * ``path::`` nor with a tail after their last NUL that is ``path`` or starts with ``path::``.
 */
static int names_file(PyObject *k, PyObject *own, PyObject *path) {
  Py_ssize_t n = PyUnicode_GET_LENGTH(k);
  if (PyUnicode_Tailmatch(k, own, 0, n, -1) == 1) return 1;
  Py_ssize_t nul = PyUnicode_FindChar(k, 0, 0, n, -1);
  if (nul == -2) return -1;
  Py_ssize_t from = nul + 1; /* the whole key when it has no NUL */
  Py_ssize_t plen = PyUnicode_GET_LENGTH(path);
  if (n - from == plen && PyUnicode_Tailmatch(k, path, from, n, -1) == 1) return 1;
  return PyUnicode_Tailmatch(k, own, from, n, -1) == 1;
}

PyObject *fleet_foreign_keys(PyObject *self, PyObject *args) {
  PyObject *keys, *path;
  if (!PyArg_ParseTuple(args, "O!U", &PySet_Type, &keys, &path)) return NULL;
  PyObject *own = PyUnicode_FromFormat("%U::", path);
  PyObject *out = PyFrozenSet_New(NULL);
  if (own == NULL || out == NULL) goto fail;
  Py_ssize_t pos = 0;
  PyObject *k;
  Py_hash_t hash;
  while (_PySet_NextEntry(keys, &pos, &k, &hash)) {
    if (!PyUnicode_Check(k)) {
      PyErr_SetString(PyExc_TypeError, "foreign_keys: a key that is not a str");
      goto fail;
    }
    int mine = names_file(k, own, path);
    if (mine < 0 || (!mine && PySet_Add(out, k) < 0)) goto fail;
  }
  Py_DECREF(own);
  return out;
fail:
  Py_XDECREF(own);
  Py_XDECREF(out);
  return NULL;
}

/*
 * reintern(values, symbols, canon) -> None: in place, each str of the list ``values`` replaced
 * by the id string of the symbol it names (``symbols[t][0]``), else by ``canon.setdefault(t,
 * t)``; None stays. The loop of _fork.resolve_files over a forked child's targets (which
 * stays the specification when the extension is not built).
 */
PyObject *fleet_reintern(PyObject *self, PyObject *args) {
  PyObject *values, *symbols, *canon;
  if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &values, &PyDict_Type, &symbols,
                        &PyDict_Type, &canon))
    return NULL;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(values); i++) {
    PyObject *t = PyList_GET_ITEM(values, i);
    if (t == Py_None) continue;
    PyObject *sym = PyDict_GetItemWithError(symbols, t);
    PyObject *same;
    if (sym != NULL) {
      if (!PyTuple_Check(sym) || PyTuple_GET_SIZE(sym) < 1) {
        PyErr_SetString(PyExc_TypeError, "reintern: a symbol that is not a Symbol");
        return NULL;
      }
      same = PyTuple_GET_ITEM(sym, 0);
    } else {
      if (PyErr_Occurred()) return NULL;
      same = PyDict_SetDefault(canon, t, t);
      if (same == NULL) return NULL;
    }
    if (same != t) {
      Py_INCREF(same);
      PyList_SetItem(values, i, same); /* drops the old reference */
    }
  }
  Py_RETURN_NONE;
}
