/*
 * The graph build's loops over the references' columns, for fleet.graph._edges and the snapshot
 * (fleet.graph._persist): edge_rows, edge_masks and ref_counts. Split from condense.c, which keeps
 * the SCCs and lock ranks; each stays tested against its Python version.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/*
 * edge_rows(succ, number, kinds) -> bytes: the snapshot's edge encoding (fleet.graph._persist):
 * for each node u of succ (dict of dicts, in its order) and each (v, attr) of its row, the
 * uint32 triple (number[u], number[v], kinds.setdefault(attr["kinds"], len(kinds))), native
 * byte order, as array('I').tobytes() gives it; ``kinds`` is filled as the Python loop fills
 * it. Holds the GIL (it reads dicts).
 */
PyObject *fleet_edge_rows(PyObject *self, PyObject *args) {
  PyObject *succ, *number, *kinds;
  if (!PyArg_ParseTuple(args, "O!O!O!", &PyDict_Type, &succ, &PyDict_Type, &number,
                        &PyDict_Type, &kinds))
    return NULL;
  PyObject *key_kinds = PyUnicode_InternFromString("kinds");
  if (key_kinds == NULL) return NULL;
  size_t cap = 1024, len = 0;
  uint32_t *out = malloc(cap * sizeof(uint32_t));
  PyObject *result = NULL;
  if (out == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  Py_ssize_t pos = 0;
  PyObject *u, *row;
  while (PyDict_Next(succ, &pos, &u, &row)) {
    PyObject *nu = PyDict_GetItemWithError(number, u);
    if (nu == NULL || !PyDict_Check(row)) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "edge_rows: a node or row");
      goto done;
    }
    unsigned long iu = PyLong_AsUnsignedLong(nu);
    if (iu == (unsigned long)-1 && PyErr_Occurred()) goto done;
    Py_ssize_t at = 0;
    PyObject *v, *attr;
    while (PyDict_Next(row, &at, &v, &attr)) {
      PyObject *nv = PyDict_GetItemWithError(number, v);
      PyObject *kind = nv && PyDict_Check(attr) ? PyDict_GetItemWithError(attr, key_kinds)
                                                : NULL;
      if (kind == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "edge_rows: a target or kinds");
        goto done;
      }
      PyObject *next = PyLong_FromSsize_t(PyDict_GET_SIZE(kinds));
      PyObject *code = next ? PyDict_SetDefault(kinds, kind, next) : NULL; /* borrowed */
      Py_XDECREF(next);
      if (code == NULL) goto done;
      unsigned long iv = PyLong_AsUnsignedLong(nv), ik = PyLong_AsUnsignedLong(code);
      if (PyErr_Occurred()) goto done;
      if (len + 3 > cap) {
        uint32_t *grown = realloc(out, 2 * cap * sizeof(uint32_t));
        if (grown == NULL) {
          PyErr_NoMemory();
          goto done;
        }
        out = grown;
        cap *= 2;
      }
      out[len++] = (uint32_t)iu;
      out[len++] = (uint32_t)iv;
      out[len++] = (uint32_t)ik;
    }
  }
  result = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)(len * sizeof(uint32_t)));
done:
  free(out);
  Py_DECREF(key_kinds);
  return result;
}

/*
 * edge_masks(succ, scopes, kinds, targets, flags, bits, symbols, empty) -> None
 *
 * _edges.add_refs over one file's FileRefs columns (its RawRefs' scopes and kind codes, the
 * resolved targets and flag bytes): for each reference with a flag and a target that is a
 * repository symbol, unless it is a use of an enclosing symbol (the source is the target or
 * under ``target.``, or in the module the target names), ``succ[src][target] |=
 * bits[kind]``; a row that is ``empty`` (the shared row of a node without edges) is replaced
 * by a dict of its own first. The same rows, in the same insertion order, as the Python loop
 * (which stays for other references and when the extension is not built).
 */
PyObject *fleet_edge_masks(PyObject *self, PyObject *args) {
  PyObject *succ, *scopes, *kinds, *targets, *flags, *bits, *symbols, *empty;
  if (!PyArg_ParseTuple(args, "O!O!SO!SO!O!O", &PyDict_Type, &succ, &PyTuple_Type, &scopes,
                        &kinds, &PyList_Type, &targets, &flags, &PyTuple_Type, &bits,
                        &PyDict_Type, &symbols, &empty))
    return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(scopes);
  if (PyBytes_GET_SIZE(kinds) != n || PyList_GET_SIZE(targets) != n ||
      PyBytes_GET_SIZE(flags) != n) {
    PyErr_SetString(PyExc_ValueError, "edge_masks: columns of different lengths");
    return NULL;
  }
  static PyObject *module_suffix;
  if (module_suffix == NULL && (module_suffix = PyUnicode_InternFromString("::<module>")) == NULL)
    return NULL;
  const unsigned char *codes = (const unsigned char *)PyBytes_AS_STRING(kinds);
  const char *flag = PyBytes_AS_STRING(flags);
  Py_ssize_t nbits = PyTuple_GET_SIZE(bits);
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *t = PyList_GET_ITEM(targets, i);
    if (!flag[i] || t == Py_None) continue;
    if (!PyUnicode_Check(t) || codes[i] >= nbits) {
      PyErr_SetString(PyExc_TypeError, "edge_masks: a target that is not a str, or a bad kind");
      return NULL;
    }
    int known = PyDict_Contains(symbols, t);
    if (known < 0) return NULL;
    if (!known) continue;
    PyObject *src = PyTuple_GET_ITEM(scopes, i);
    if (!PyUnicode_Check(src)) {
      PyErr_SetString(PyExc_TypeError, "edge_masks: a scope that is not a str");
      return NULL;
    }
    Py_ssize_t ls = PyUnicode_GET_LENGTH(src), lt = PyUnicode_GET_LENGTH(t);
    /* src is target, or under ``target.`` */
    if (ls >= lt && PyUnicode_Tailmatch(src, t, 0, lt, -1) == 1 &&
        (ls == lt || PyUnicode_READ_CHAR(src, lt) == '.'))
      continue;
    /* the target is a module (``path::<module>``) and src is in it (starts with ``path::``) */
    if (lt >= 10) {
      int is_module = PyUnicode_Tailmatch(t, module_suffix, 0, lt, 1);
      if (is_module < 0) return NULL;
      if (is_module) {
        PyObject *prefix = PyUnicode_Substring(t, 0, lt - 8); /* without "<module>" */
        if (prefix == NULL) return NULL;
        int under = PyUnicode_Tailmatch(src, prefix, 0, ls, -1);
        Py_DECREF(prefix);
        if (under < 0) return NULL;
        if (under) continue;
      }
    }
    PyObject *row = PyDict_GetItemWithError(succ, src); /* borrowed */
    if (row == NULL) {
      if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, src);
      return NULL;
    }
    if (row == empty) {
      PyObject *fresh = PyDict_New();
      if (fresh == NULL || PyDict_SetItem(succ, src, fresh) < 0) {
        Py_XDECREF(fresh);
        return NULL;
      }
      Py_DECREF(fresh); /* succ holds it */
      row = fresh;
    }
    if (!PyDict_Check(row)) {
      PyErr_SetString(PyExc_TypeError, "edge_masks: a row that is not a dict");
      return NULL;
    }
    long mask = 0;
    PyObject *old = PyDict_GetItemWithError(row, t);
    if (old != NULL) {
      mask = PyLong_AsLong(old);
      if (mask == -1 && PyErr_Occurred()) return NULL;
    } else if (PyErr_Occurred()) {
      return NULL;
    }
    long bit = PyLong_AsLong(PyTuple_GET_ITEM(bits, codes[i]));
    if (bit == -1 && PyErr_Occurred()) return NULL;
    PyObject *value = PyLong_FromLong(mask | bit);
    if (value == NULL || PyDict_SetItem(row, t, value) < 0) {
      Py_XDECREF(value);
      return NULL;
    }
    Py_DECREF(value);
  }
  Py_RETURN_NONE;
}

/*
 * ref_counts(targets, flags) -> (references, resolved, exact, internal): FileRefs.counts over
 * the columns (the extra references are counted by the caller): a reference is one with a
 * flag; resolved when its target is not None; exact when its flag is EXACT (1); internal when
 * its target names a repository symbol (contains ``::``).
 */
PyObject *fleet_ref_counts(PyObject *self, PyObject *args) {
  PyObject *targets, *flags;
  if (!PyArg_ParseTuple(args, "O!S", &PyList_Type, &targets, &flags)) return NULL;
  Py_ssize_t n = PyList_GET_SIZE(targets);
  if (PyBytes_GET_SIZE(flags) != n) {
    PyErr_SetString(PyExc_ValueError, "ref_counts: columns of different lengths");
    return NULL;
  }
  static PyObject *colons;
  if (colons == NULL && (colons = PyUnicode_InternFromString("::")) == NULL) return NULL;
  const char *flag = PyBytes_AS_STRING(flags);
  Py_ssize_t total = 0, resolved = 0, exact = 0, internal = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    if (!flag[i]) continue;
    total++;
    PyObject *t = PyList_GET_ITEM(targets, i);
    if (t == Py_None) continue;
    resolved++;
    if (flag[i] == 1) exact++;
    if (!PyUnicode_Check(t)) {
      PyErr_SetString(PyExc_TypeError, "ref_counts: a target that is not a str");
      return NULL;
    }
    Py_ssize_t at = PyUnicode_Find(t, colons, 0, PyUnicode_GET_LENGTH(t), 1);
    if (at == -2) return NULL;
    if (at >= 0) internal++;
  }
  return Py_BuildValue("(nnnn)", total, resolved, exact, internal);
}

/*
 * contains_masks(succ, symbols, empty, bit) -> None: _edges._contains, class -> member and
 * function -> nested function: for each Symbol (a tuple: id at 0, parent at 13) whose parent
 * is not None and does not end with ``::<module>``, ``succ[parent][id] |= bit``, a row that is
 * ``empty`` replaced by a dict of its own first. The same rows, in the same insertion order.
 */
PyObject *fleet_contains_masks(PyObject *self, PyObject *args) {
  PyObject *succ, *symbols, *empty, *bit_obj;
  if (!PyArg_ParseTuple(args, "O!OOO!", &PyDict_Type, &succ, &symbols, &empty, &PyLong_Type,
                        &bit_obj))
    return NULL;
  long bit = PyLong_AsLong(bit_obj);
  if (bit == -1 && PyErr_Occurred()) return NULL;
  static PyObject *module_suffix;
  if (module_suffix == NULL && (module_suffix = PyUnicode_InternFromString("::<module>")) == NULL)
    return NULL;
  PyObject *it = PyObject_GetIter(symbols);
  if (it == NULL) return NULL;
  PyObject *sym;
  while ((sym = PyIter_Next(it)) != NULL) {
    if (!PyTuple_Check(sym) || PyTuple_GET_SIZE(sym) < 14) {
      PyErr_SetString(PyExc_TypeError, "contains_masks: a symbol that is not a Symbol");
      goto fail;
    }
    PyObject *parent = PyTuple_GET_ITEM(sym, 13), *id = PyTuple_GET_ITEM(sym, 0);
    if (parent == Py_None) {
      Py_DECREF(sym);
      continue;
    }
    if (!PyUnicode_Check(parent) || !PyUnicode_Check(id)) {
      PyErr_SetString(PyExc_TypeError, "contains_masks: an id or parent that is not a str");
      goto fail;
    }
    int in_module = PyUnicode_Tailmatch(parent, module_suffix, 0, PY_SSIZE_T_MAX, 1);
    if (in_module < 0) goto fail;
    if (in_module) {
      Py_DECREF(sym);
      continue;
    }
    PyObject *row = PyDict_GetItemWithError(succ, parent); /* borrowed */
    if (row == NULL) {
      if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, parent);
      goto fail;
    }
    if (row == empty) {
      PyObject *fresh = PyDict_New();
      if (fresh == NULL || PyDict_SetItem(succ, parent, fresh) < 0) {
        Py_XDECREF(fresh);
        goto fail;
      }
      Py_DECREF(fresh); /* succ holds it */
      row = fresh;
    }
    if (!PyDict_Check(row)) {
      PyErr_SetString(PyExc_TypeError, "contains_masks: a row that is not a dict");
      goto fail;
    }
    long mask = 0;
    PyObject *old = PyDict_GetItemWithError(row, id);
    if (old != NULL) {
      mask = PyLong_AsLong(old);
      if (mask == -1 && PyErr_Occurred()) goto fail;
    } else if (PyErr_Occurred()) {
      goto fail;
    }
    PyObject *value = PyLong_FromLong(mask | bit);
    if (value == NULL || PyDict_SetItem(row, id, value) < 0) {
      Py_XDECREF(value);
      goto fail;
    }
    Py_DECREF(value);
    Py_DECREF(sym);
  }
  Py_DECREF(it);
  if (PyErr_Occurred()) return NULL;
  Py_RETURN_NONE;
fail:
  Py_DECREF(sym);
  Py_DECREF(it);
  return NULL;
}

/*
 * mask_attrs(succ, attrs) -> None: the end of _edges.build_graph: every edge's kinds mask (an
 * int) replaced in place by ``attrs[mask]`` (the shared attribute dicts). Only values change,
 * so the rows' keys and order stay as they are.
 */
PyObject *fleet_mask_attrs(PyObject *self, PyObject *args) {
  PyObject *succ, *attrs;
  if (!PyArg_ParseTuple(args, "O!O!", &PyDict_Type, &succ, &PyList_Type, &attrs)) return NULL;
  Py_ssize_t nattrs = PyList_GET_SIZE(attrs);
  Py_ssize_t pos = 0;
  PyObject *u, *row;
  while (PyDict_Next(succ, &pos, &u, &row)) {
    if (!PyDict_Check(row)) {
      PyErr_SetString(PyExc_TypeError, "mask_attrs: a row that is not a dict");
      return NULL;
    }
    Py_ssize_t at = 0;
    PyObject *v, *mask;
    while (PyDict_Next(row, &at, &v, &mask)) {
      Py_ssize_t m = PyLong_Check(mask) ? PyLong_AsSsize_t(mask) : -1;
      if (m < 0 || m >= nattrs) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "mask_attrs: a bad mask");
        return NULL;
      }
      /* an existing key: the dict is not resized, the iteration stays valid */
      if (PyDict_SetItem(row, v, PyList_GET_ITEM(attrs, m)) < 0) return NULL;
    }
  }
  Py_RETURN_NONE;
}
