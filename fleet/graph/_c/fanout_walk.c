/*
 * fanout_walk.c: walk(resolver, start, parts, depth) -> (symbol, exact), the loop of
 * fleet.graph._members.Members._walk_py (which stays the specification) in C: a dotted
 * chain's parts followed as members from ``start``.
 *
 * Done here: a class's members through its MRO (the memo's ``_mro_cache`` read as ``_mro``
 * reads it, its keys added; ``_mro`` itself on a miss), the first external base of a class
 * that lacks the member, and a plain class, module or function as the value of a part. The
 * resolver's methods answer the rest: ``_member`` for a module's members, ``_member_type``
 * for a variable's or a property's class, ``_attribute_type`` for ``self.attr``'s class. Every
 * dependency key the Python loop records is recorded (in the resolver's ``_deps`` as it is
 * when the walk starts: the methods called restore it before they return).
 *
 * Part of fanout.c's translation unit, which includes it: not compiled on its own.
 */

static PyObject *W_DOT, *W_DEPS, *W_SYMBOLS, *W_MRO_CACHE, *W_EXTERNAL, *W_MRO, *W_MEMBER,
    *W_MEMBER_TYPE, *W_ATTRIBUTE_TYPE, *W_CLASS, *W_MODULE, *W_FUNCTION, *W_C_MRO;

static int walk_ready(void) {
  if (W_FUNCTION != NULL) return 0;
  W_DOT = PyUnicode_InternFromString(".");
  W_DEPS = PyUnicode_InternFromString("_deps");
  W_SYMBOLS = PyUnicode_InternFromString("symbols");
  W_MRO_CACHE = PyUnicode_InternFromString("_mro_cache");
  W_EXTERNAL = PyUnicode_InternFromString("_external_bases");
  W_MRO = PyUnicode_InternFromString("_mro");
  W_MEMBER = PyUnicode_InternFromString("_member");
  W_MEMBER_TYPE = PyUnicode_InternFromString("_member_type");
  W_ATTRIBUTE_TYPE = PyUnicode_InternFromString("_attribute_type");
  W_CLASS = PyUnicode_InternFromString("class");
  W_MODULE = PyUnicode_InternFromString("module");
  W_C_MRO = PyUnicode_InternFromString("_c_mro");
  W_FUNCTION = PyUnicode_InternFromString("function"); /* last: the test at the top */
  return (W_C_MRO && W_DOT && W_DEPS && W_SYMBOLS && W_MRO_CACHE && W_EXTERNAL && W_MRO &&
          W_MEMBER && W_MEMBER_TYPE && W_ATTRIBUTE_TYPE && W_CLASS && W_MODULE && W_FUNCTION)
             ? 0
             : -1;
}

typedef struct {
  PyObject *resolver, *deps, *symbols; /* borrowed */
  long depth;                          /* ``_walk``'s depth (re-exports followed) */
} Walk;

/* fanout_chain.c, after this file: a module's members (``_member``'s module branch) */
static PyObject *module_member(Walk *w, PyObject *cur, PyObject *sym, PyObject *part);
/* fanout_mro.c, after this file: ``Members._mro`` */
PyObject *fleet_mro(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

/* symbols[id]'s kind (borrowed), NULL when id is no symbol (check PyErr_Occurred) */
static PyObject *kind_of_symbol(Walk *w, PyObject *id) {
  PyObject *sym = PyDict_GetItemWithError(w->symbols, id);
  if (sym == NULL) return NULL;
  if (!PyTuple_Check(sym) || PyTuple_GET_SIZE(sym) < 14) {
    PyErr_SetString(PyExc_TypeError, "walk: a symbol that is not a Symbol");
    return NULL;
  }
  return PyTuple_GET_ITEM(sym, 4);
}

/* ``resolver._mro(cls)``: a new reference to the list, the memo's keys added on a hit */
static PyObject *mro(Walk *w, PyObject *cls) {
  PyObject *cache = PyObject_GetAttr(w->resolver, W_MRO_CACHE);
  if (cache == NULL) return NULL;
  PyObject *hit = PyDict_Check(cache) ? PyDict_GetItemWithError(cache, cls) : NULL;
  if (hit != NULL && PyTuple_Check(hit) && PyTuple_GET_SIZE(hit) == 2 &&
      PyList_Check(PyTuple_GET_ITEM(hit, 0)) && PyAnySet_Check(PyTuple_GET_ITEM(hit, 1))) {
    PyObject *order = Py_NewRef(PyTuple_GET_ITEM(hit, 0));
    PyObject *same = PyNumber_InPlaceOr(w->deps, PyTuple_GET_ITEM(hit, 1));
    Py_DECREF(cache);
    if (same == NULL) {
      Py_DECREF(order);
      return NULL;
    }
    Py_DECREF(same);
    return order;
  }
  Py_DECREF(cache);
  if (PyErr_Occurred()) return NULL;
  /* the miss: ``_mro`` in C (fanout_mro.c) unless the resolver has it off */
  PyObject *c_mro = PyObject_GetAttr(w->resolver, W_C_MRO);
  if (c_mro == NULL) return NULL;
  PyObject *call[2] = {w->resolver, cls};
  PyObject *order = c_mro != Py_None ? fleet_mro(NULL, call, 2)
                                     : PyObject_CallMethodOneArg(w->resolver, W_MRO, cls);
  Py_DECREF(c_mro);
  if (order != NULL && !PyList_Check(order)) {
    Py_DECREF(order);
    PyErr_SetString(PyExc_TypeError, "walk: an MRO that is not a list");
    return NULL;
  }
  return order;
}

/* ``resolver._member(cur, part, depth)``: a new reference, Py_None when absent */
static PyObject *member(Walk *w, PyObject *cur, PyObject *part) {
  if (PySet_Add(w->deps, cur) < 0) return NULL;
  PyObject *kind = kind_of_symbol(w, cur);
  if (kind == NULL) return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
  if (PyUnicode_Compare(kind, W_MODULE) == 0)
    return module_member(w, cur, PyDict_GetItemWithError(w->symbols, cur), part);
  if (PyUnicode_Compare(kind, W_CLASS) != 0) return Py_NewRef(Py_None);
  PyObject *order = mro(w, cur), *tail = PyUnicode_Concat(W_DOT, part);
  PyObject *found = NULL;
  if (order == NULL || tail == NULL) goto done;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(order); i++) {
    PyObject *candidate = PyUnicode_Concat(PyList_GET_ITEM(order, i), tail);
    if (candidate == NULL || PySet_Add(w->deps, candidate) < 0) {
      Py_XDECREF(candidate);
      goto done;
    }
    int is = PyDict_Contains(w->symbols, candidate);
    if (is) {
      if (is > 0) found = candidate;
      else Py_DECREF(candidate);
      goto done;
    }
    Py_DECREF(candidate);
  }
  found = Py_NewRef(Py_None);
done:
  Py_XDECREF(order);
  Py_XDECREF(tail);
  return found;
}

/* ``resolver._member_type(cur)`` without a call for a class, module, function or no
   symbol: a new reference, Py_None when it has no class */
static PyObject *member_type(Walk *w, PyObject *cur) {
  PyObject *kind = kind_of_symbol(w, cur);
  if (kind == NULL) return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
  if (PyUnicode_Compare(kind, W_CLASS) == 0 || PyUnicode_Compare(kind, W_MODULE) == 0 ||
      PyUnicode_Compare(kind, W_FUNCTION) == 0)
    return Py_NewRef(Py_None);
  return PyObject_CallMethodOneArg(w->resolver, W_MEMBER_TYPE, cur);
}

/* the first external base in cur's MRO, joined with parts[i:]: a new reference, or Py_None */
static PyObject *external(Walk *w, PyObject *cur, PyObject *parts, Py_ssize_t i) {
  PyObject *order = mro(w, cur);
  if (order == NULL) return NULL;
  PyObject *bases = PyObject_GetAttr(w->resolver, W_EXTERNAL), *result = NULL;
  if (bases == NULL) goto done;
  for (Py_ssize_t k = 0; k < PyList_GET_SIZE(order); k++) {
    PyObject *ext = PyDict_GetItemWithError(bases, PyList_GET_ITEM(order, k));
    if (ext == NULL && PyErr_Occurred()) goto done;
    if (ext == NULL || !PyList_Check(ext) || PyList_GET_SIZE(ext) == 0) continue;
    PyObject *rest = PyList_GetSlice(parts, i, PyList_GET_SIZE(parts));
    if (rest == NULL || PyList_Insert(rest, 0, PyList_GET_ITEM(ext, 0)) < 0) {
      Py_XDECREF(rest);
      goto done;
    }
    PyObject *joined = PyUnicode_Join(W_DOT, rest);
    Py_DECREF(rest);
    if (joined != NULL) result = PyTuple_Pack(2, joined, Py_False);
    Py_XDECREF(joined);
    goto done;
  }
  result = Py_NewRef(Py_None);
done:
  Py_DECREF(order);
  Py_XDECREF(bases);
  return result;
}

/* ``_walk(start, parts, depth)`` with the walk in C: a new (symbol, exact) pair, or NULL */
static PyObject *walk_from(PyObject *resolver, PyObject *start, PyObject *parts, long depth) {
  Walk w = {resolver, PyObject_GetAttr(resolver, W_DEPS), PyObject_GetAttr(resolver, W_SYMBOLS),
            depth};
  PyObject *result = NULL;
  PyObject *cur = Py_NewRef(start);
  if (w.deps == NULL || w.symbols == NULL || !PySet_Check(w.deps) || !PyDict_Check(w.symbols)) {
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_TypeError, "walk: a resolver without a deps set and symbols dict");
    goto done;
  }
  Py_ssize_t last = PyList_GET_SIZE(parts) - 1;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(parts); i++) {
    PyObject *part = PyList_GET_ITEM(parts, i);
    PyObject *typed = member_type(&w, cur);
    if (typed == NULL) goto done;
    if (typed != Py_None) Py_SETREF(cur, typed);
    else Py_DECREF(typed);
    PyObject *next = member(&w, cur, part);
    if (next == NULL) goto done;
    if (next != Py_None) {
      Py_SETREF(cur, next);
      continue;
    }
    Py_DECREF(next);
    PyObject *kind = kind_of_symbol(&w, cur);
    if (kind == NULL && PyErr_Occurred()) goto done;
    if (kind != NULL && PyUnicode_Compare(kind, W_CLASS) == 0) {
      if (i < last) {
        PyObject *attr = PyObject_CallMethodObjArgs(w.resolver, W_ATTRIBUTE_TYPE, cur, part,
                                                    NULL);
        if (attr == NULL) goto done;
        if (attr != Py_None) {
          Py_SETREF(cur, attr);
          continue;
        }
        Py_DECREF(attr);
      }
      PyObject *ext = external(&w, cur, parts, i);
      if (ext == NULL) goto done;
      if (ext != Py_None) {
        result = ext;
        goto done;
      }
      Py_DECREF(ext);
    }
    result = PyTuple_Pack(2, cur, Py_False);
    goto done;
  }
  result = PyTuple_Pack(2, cur, Py_True);
done:
  Py_DECREF(cur);
  Py_XDECREF(w.deps);
  Py_XDECREF(w.symbols);
  return result;
}

PyObject *fleet_walk(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 4 || !PyUnicode_Check(args[1]) || !PyList_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "walk(resolver, start, parts: list, depth)");
    return NULL;
  }
  if (walk_ready()) return NULL;
  long depth = PyLong_AsLong(args[3]);
  if (depth == -1 && PyErr_Occurred()) return NULL;
  return walk_from(args[0], args[1], args[2], depth);
}
