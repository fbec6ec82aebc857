/*
 * fanout_mro.c: classes for the resolver. enclosing_class(symbols, scope) at the end, and
 * mro(resolver, cls) -> list, ``Members._mro`` with ``_compute_mro`` and
 * ``_class_bases`` in C: the depth-first, left-to-right order over resolved bases, memoised
 * in ``_mro_cache`` with the dependency keys its computation recorded (replayed on reuse)
 * unless a base list is being computed. A base list not yet known is still computed by the
 * Python method ``_compute_bases`` (it resolves the class's base references), under the same
 * guard: ``_bases[cls] = []`` against inheritance cycles, ``_computing_bases`` raised,
 * ``_deps`` swapped for a set of its own holding ``cls``. The Python methods stay the
 * specification; a test compares both.
 *
 * Part of fanout.c's translation unit, which includes it after fanout_chain.c: not compiled
 * on its own.
 */

static PyObject *MR_BASES, *MR_BASES_DEPS, *MR_COMPUTE_BASES, *MR_PREFIX;

static int mro_ready(void) {
  if (MR_PREFIX != NULL) return 0;
  MR_BASES = PyUnicode_InternFromString("_bases");
  MR_BASES_DEPS = PyUnicode_InternFromString("_bases_deps");
  MR_COMPUTE_BASES = PyUnicode_InternFromString("_compute_bases");
  MR_PREFIX = PyUnicode_FromStringAndSize("bases\0", 6);
  return (MR_BASES && MR_BASES_DEPS && MR_COMPUTE_BASES && MR_PREFIX) ? 0 : -1;
}

/* resolver._computing_bases += delta */
static int bump_computing(PyObject *resolver, long delta) {
  PyObject *now = PyObject_GetAttr(resolver, CH_COMPUTING);
  if (now == NULL) return -1;
  long value = PyLong_AsLong(now);
  Py_DECREF(now);
  if (value == -1 && PyErr_Occurred()) return -1;
  PyObject *next = PyLong_FromLong(value + delta);
  if (next == NULL) return -1;
  int bad = PyObject_SetAttr(resolver, CH_COMPUTING, next);
  Py_DECREF(next);
  return bad;
}

/* ``_class_bases(cls)``: a new reference to the base list, or NULL */
static PyObject *class_bases(PyObject *resolver, PyObject *bases_of, PyObject *cls) {
  PyObject *outer = PyObject_GetAttr(resolver, W_DEPS), *result = NULL, *own = NULL;
  if (outer == NULL) return NULL;
  PyObject *key = PyUnicode_Concat(MR_PREFIX, cls);
  if (key == NULL || PySet_Add(outer, key) < 0) goto done;
  PyObject *bases = PyDict_GetItemWithError(bases_of, cls);
  if (bases != NULL) {
    Py_INCREF(bases); /* held while the keys are added */
    PyObject *deps_of = PyObject_GetAttr(resolver, MR_BASES_DEPS);
    PyObject *found = deps_of ? get_or_none(deps_of, cls) : NULL;
    Py_XDECREF(deps_of);
    int any = found == NULL ? -1 : found == Py_None ? 0 : PyObject_IsTrue(found);
    PyObject *same = any > 0 ? PyNumber_InPlaceOr(outer, found) : NULL;
    Py_XDECREF(found);
    if (any < 0 || (any > 0 && same == NULL)) {
      Py_DECREF(bases);
      goto done;
    }
    Py_XDECREF(same);
    result = bases;
    goto done;
  }
  if (PyErr_Occurred()) goto done;
  PyObject *guard = PyList_New(0); /* against inheritance cycles while resolving */
  if (guard == NULL) goto done;
  int bad = PyDict_SetItem(bases_of, cls, guard);
  Py_DECREF(guard);
  own = PySet_New(NULL);
  if (bad || own == NULL || PySet_Add(own, cls) < 0) goto done;
  if (PyObject_SetAttr(resolver, W_DEPS, own) < 0) goto done;
  if (bump_computing(resolver, 1) < 0) {
    PyObject_SetAttr(resolver, W_DEPS, outer);
    goto done;
  }
  PyObject *computed = PyObject_CallMethodOneArg(resolver, MR_COMPUTE_BASES, cls);
  /* ``finally``: restored whether or not it raised (an exception already set is kept) */
  PyObject *exc_type, *exc_value, *exc_tb;
  PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
  int restored = bump_computing(resolver, -1) == 0 && PyObject_SetAttr(resolver, W_DEPS, outer) == 0;
  if (exc_type != NULL) {
    if (!restored) PyErr_Clear();
    PyErr_Restore(exc_type, exc_value, exc_tb);
  }
  if (computed == NULL || !restored) {
    Py_XDECREF(computed);
    goto done;
  }
  PyObject *deps_of = PyObject_GetAttr(resolver, MR_BASES_DEPS);
  PyObject *frozen = deps_of ? PyFrozenSet_New(own) : NULL;
  int stored = frozen ? PyObject_SetItem(deps_of, cls, frozen) : -1;
  Py_XDECREF(deps_of);
  Py_XDECREF(frozen);
  PyObject *same = stored == 0 ? PyNumber_InPlaceOr(outer, own) : NULL;
  if (same == NULL) {
    Py_DECREF(computed);
    goto done;
  }
  Py_DECREF(same);
  result = computed;
done:
  Py_DECREF(outer);
  Py_XDECREF(key);
  Py_XDECREF(own);
  return result;
}

/* ``_compute_mro(cls)``: a new list, or NULL */
static PyObject *compute_mro(PyObject *resolver, PyObject *cls) {
  PyObject *bases_of = PyObject_GetAttr(resolver, MR_BASES);
  PyObject *order = PyList_New(0), *seen = PySet_New(NULL), *stack = PyList_New(0);
  if (bases_of == NULL || order == NULL || seen == NULL || stack == NULL ||
      PyList_Append(stack, cls) < 0)
    goto fail;
  if (!PyDict_Check(bases_of)) {
    PyErr_SetString(PyExc_TypeError, "mro: _bases is not a dict");
    goto fail;
  }
  while (PyList_GET_SIZE(stack) > 0) { /* depth-first, left to right, iterative */
    Py_ssize_t top = PyList_GET_SIZE(stack) - 1;
    PyObject *cur = Py_NewRef(PyList_GET_ITEM(stack, top));
    if (PyList_SetSlice(stack, top, top + 1, NULL) < 0) {
      Py_DECREF(cur);
      goto fail;
    }
    int was = PySet_Contains(seen, cur);
    if (was != 0) {
      Py_DECREF(cur);
      if (was < 0) goto fail;
      continue;
    }
    if (PySet_Add(seen, cur) < 0 || PyList_Append(order, cur) < 0) {
      Py_DECREF(cur);
      goto fail;
    }
    PyObject *bases = class_bases(resolver, bases_of, cur);
    Py_DECREF(cur);
    if (bases == NULL) goto fail;
    PyObject *seq = PySequence_Fast(bases, "mro: a base list that is not a sequence");
    Py_DECREF(bases);
    if (seq == NULL) goto fail;
    for (Py_ssize_t i = PySequence_Fast_GET_SIZE(seq) - 1; i >= 0; i--) {
      if (PyList_Append(stack, PySequence_Fast_GET_ITEM(seq, i)) < 0) {
        Py_DECREF(seq);
        goto fail;
      }
    }
    Py_DECREF(seq);
  }
  Py_DECREF(bases_of);
  Py_DECREF(seen);
  Py_DECREF(stack);
  return order;
fail:
  Py_XDECREF(bases_of);
  Py_XDECREF(order);
  Py_XDECREF(seen);
  Py_XDECREF(stack);
  return NULL;
}

PyObject *fleet_mro(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "mro(resolver, cls: str)");
    return NULL;
  }
  if (walk_ready() || chain_ready() || mro_ready()) return NULL;
  PyObject *resolver = args[0], *cls = args[1];
  PyObject *cache = PyObject_GetAttr(resolver, W_MRO_CACHE);
  if (cache == NULL) return NULL;
  if (!PyDict_Check(cache)) {
    Py_DECREF(cache);
    PyErr_SetString(PyExc_TypeError, "mro: _mro_cache is not a dict");
    return NULL;
  }
  PyObject *hit = PyDict_GetItemWithError(cache, cls), *result = NULL, *own = NULL;
  PyObject *outer = PyObject_GetAttr(resolver, W_DEPS);
  if (outer == NULL) goto done;
  if (hit != NULL) {
    if (!PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 2) {
      PyErr_SetString(PyExc_TypeError, "mro: a memo entry that is not (order, keys)");
      goto done;
    }
    PyObject *order = Py_NewRef(PyTuple_GET_ITEM(hit, 0));
    PyObject *same = PyNumber_InPlaceOr(outer, PyTuple_GET_ITEM(hit, 1));
    if (same == NULL) {
      Py_DECREF(order);
      goto done;
    }
    Py_DECREF(same);
    result = order;
    goto done;
  }
  if (PyErr_Occurred()) goto done;
  own = PySet_New(NULL);
  if (own == NULL || PyObject_SetAttr(resolver, W_DEPS, own) < 0) goto done;
  PyObject *order = compute_mro(resolver, cls);
  if (PyObject_SetAttr(resolver, W_DEPS, outer) < 0) { /* ``finally`` */
    Py_XDECREF(order);
    goto done;
  }
  if (order == NULL) goto done;
  PyObject *same = PyNumber_InPlaceOr(outer, own);
  if (same == NULL) {
    Py_DECREF(order);
    goto done;
  }
  Py_DECREF(same);
  int computing = attr_true(resolver, CH_COMPUTING);
  if (computing == 0) {
    PyObject *keys = PyFrozenSet_New(own);
    PyObject *entry = keys ? PyTuple_Pack(2, order, keys) : NULL;
    Py_XDECREF(keys);
    if (entry == NULL || PyDict_SetItem(cache, cls, entry) < 0) computing = -1;
    Py_XDECREF(entry);
  }
  if (computing < 0) {
    Py_DECREF(order);
    goto done;
  }
  result = order;
done:
  Py_DECREF(cache);
  Py_XDECREF(outer);
  Py_XDECREF(own);
  return result;
}

/* enclosing_class(symbols, scope) -> str | None: ``Resolver._enclosing_class``, the class
   whose method (or a function nested in it) ``scope`` is, else None */
PyObject *fleet_enclosing_class(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyDict_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "enclosing_class(symbols: dict, scope)");
    return NULL;
  }
  if (walk_ready()) return NULL;
  PyObject *symbols = args[0], *sid = args[1];
  int seen_function = 0;
  while (sid != Py_None) {
    PyObject *sym = PyDict_GetItemWithError(symbols, sid); /* borrowed; no Python code runs */
    if (sym == NULL) return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    if (!PyTuple_Check(sym) || PyTuple_GET_SIZE(sym) < 14) {
      PyErr_SetString(PyExc_TypeError, "enclosing_class: a symbol that is not a Symbol");
      return NULL;
    }
    PyObject *kind = PyTuple_GET_ITEM(sym, 4);
    if (PyUnicode_Compare(kind, W_FUNCTION) == 0 ||
        PyUnicode_CompareWithASCIIString(kind, "method") == 0) {
      seen_function = 1;
    } else if (PyUnicode_Compare(kind, W_CLASS) == 0) {
      return Py_NewRef(seen_function ? sid : Py_None);
    }
    sid = PyTuple_GET_ITEM(sym, 13);
  }
  return Py_NewRef(Py_None);
}
