/*
 * fanout_chain.c: the chains of fleet.graph._members.Members without Python frames:
 *
 *   walk_chain(resolver, start, rest) -> (target, exact): ``_walk_chain``, the walk of the
 *       dotted ``rest`` from ``start``, memoised as ``_chain`` memoises;
 *   dotted_name(resolver, name) -> (target, exact): ``_dotted_name``, ``_dotted(name, 0)``
 *       memoised likewise;
 *
 * and, for ``walk`` (fanout_walk.c), a module's members (``_member``'s module branch: a
 * symbol of the module, a submodule, a re-export through the module's imports) and
 * ``_dotted`` (the longest module prefix of a dotted name, then the walk of the rest).
 * The Python methods stay the specification: star imports (``_star_member``) and modules
 * without a dotted name (Go packages) still go to them, and a test compares both on every
 * file of the stdlib's ``email`` and ``json`` and the examples. Every dependency key the
 * Python methods record is recorded here, in the same sets.
 *
 * ``_chain``: at the top of a resolution (``_depth`` and ``_computing_bases`` both 0) the
 * memo ``_chains[(a, b)]`` answers with its recorded keys added to ``_deps``; on a miss the
 * result is computed with ``_deps`` swapped for a set of its own (the methods the walk calls
 * back read ``resolver._deps``), then memoised with those keys, which also go to the outer
 * set. Below the top, it is computed without the memo.
 *
 * Part of fanout.c's translation unit, which includes it after fanout_walk.c: not compiled
 * on its own.
 */

static PyObject *CH_DEPTH, *CH_COMPUTING, *CH_CHAINS, *CH_FILES, *CH_MODULES, *CH_MODULE_ATTR,
    *CH_IMPORTS, *CH_STAR_IMPORTS, *CH_STAR_MEMBER, *CH_DOT, *CH_GET;

static int chain_ready(void) {
  if (CH_GET != NULL) return 0;
  CH_DEPTH = PyUnicode_InternFromString("_depth");
  CH_COMPUTING = PyUnicode_InternFromString("_computing_bases");
  CH_CHAINS = PyUnicode_InternFromString("_chains");
  CH_FILES = PyUnicode_InternFromString("files");
  CH_MODULES = PyUnicode_InternFromString("modules");
  CH_MODULE_ATTR = PyUnicode_InternFromString("module");
  CH_IMPORTS = PyUnicode_InternFromString("imports");
  CH_STAR_IMPORTS = PyUnicode_InternFromString("star_imports");
  CH_STAR_MEMBER = PyUnicode_InternFromString("_star_member");
  CH_DOT = PyUnicode_InternFromString(".");
  CH_GET = PyUnicode_InternFromString("get");
  return (CH_DEPTH && CH_COMPUTING && CH_CHAINS && CH_FILES && CH_MODULES && CH_MODULE_ATTR &&
          CH_IMPORTS && CH_STAR_IMPORTS && CH_STAR_MEMBER && CH_DOT && CH_GET) ? 0 : -1;
}

/* mapping.get(key): a new reference, Py_None when absent, NULL on error */
static PyObject *get_or_none(PyObject *mapping, PyObject *key) {
  if (PyDict_CheckExact(mapping)) {
    PyObject *found = PyDict_GetItemWithError(mapping, key);
    if (found == NULL) return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    return Py_NewRef(found);
  }
  return PyObject_CallMethodOneArg(mapping, CH_GET, key);
}

/* ids[0] of a module table entry when it is non-empty: a new reference, Py_None when empty
   or absent, NULL on error */
static PyObject *first_id(PyObject *modules, PyObject *name) {
  PyObject *ids = get_or_none(modules, name);
  if (ids == NULL || ids == Py_None) return ids;
  int truth = PyObject_IsTrue(ids);
  PyObject *first = truth > 0 ? PySequence_GetItem(ids, 0) : truth == 0 ? Py_NewRef(Py_None) : NULL;
  Py_DECREF(ids);
  return first;
}

/* ``_dotted(name, depth)`` with the walk in C: a new (target, exact) pair, or NULL */
static PyObject *dotted_walk(PyObject *resolver, PyObject *name, long depth) {
  if (chain_ready() || walk_ready()) return NULL;
  PyObject *modules = PyObject_GetAttr(resolver, CH_MODULES), *result = NULL;
  if (modules == NULL) return NULL;
  Py_ssize_t n = PyUnicode_GET_LENGTH(name), end = n;
  for (;;) { /* the prefixes ".".join(parts[:i]), longest first */
    PyObject *prefix = PyUnicode_Substring(name, 0, end);
    if (prefix == NULL) goto done;
    PyObject *first = first_id(modules, prefix);
    Py_DECREF(prefix);
    if (first == NULL) goto done;
    if (first != Py_None) {
      if (end == n) {
        result = PyTuple_Pack(2, first, Py_True);
      } else {
        PyObject *rest = PyUnicode_Substring(name, end + 1, n);
        PyObject *parts = rest ? PyUnicode_Split(rest, CH_DOT, -1) : NULL;
        if (parts != NULL) result = walk_from(resolver, first, parts, depth);
        Py_XDECREF(rest);
        Py_XDECREF(parts);
      }
      Py_DECREF(first);
      goto done;
    }
    Py_DECREF(first);
    end = PyUnicode_FindChar(name, '.', 0, end, -1);
    if (end == -2) goto done;
    if (end < 0) break;
  }
  result = PyTuple_Pack(2, Py_None, Py_False);
done:
  Py_DECREF(modules);
  return result;
}

/* ``resolver._member(cur, part, depth)`` for a module ``sym`` (borrowed): a new reference,
   Py_None when absent, NULL on error */
static PyObject *module_member(Walk *w, PyObject *cur, PyObject *sym, PyObject *part) {
  if (chain_ready()) return NULL;
  PyObject *path = PyTuple_GET_ITEM(sym, 1);
  PyObject *candidate = PyUnicode_FromFormat("%U::%U", path, part);
  if (candidate == NULL) return NULL;
  if (PySet_Add(w->deps, candidate) < 0) { /* also stands for a re-export of `part` */
    Py_DECREF(candidate);
    return NULL;
  }
  int is = PyDict_Contains(w->symbols, candidate);
  if (is < 0) {
    Py_DECREF(candidate);
    return NULL;
  }
  PyObject *files = PyObject_GetAttr(w->resolver, CH_FILES), *fd = NULL, *module = NULL;
  PyObject *modules = NULL, *imports = NULL, *reexport = NULL, *result = NULL;
  if (files == NULL) {
    Py_DECREF(candidate);
    return NULL;
  }
  fd = get_or_none(files, path);
  if (fd == NULL || (fd == Py_None && is)) {
    if (fd != NULL) result = candidate; /* a symbol of a file not indexed: itself */
    else Py_DECREF(candidate);
    goto done;
  }
  if (is) { /* defined there; also imported there (a fallback def): which depends on the run,
               unless the module imports its own name */
    imports = PyObject_GetAttr(fd, CH_IMPORTS);
    reexport = imports == NULL ? NULL : get_or_none(imports, part);
    int both = reexport == NULL ? -1 : reexport != Py_None;
    if (both > 0) {
      module = PyObject_GetAttr(fd, CH_MODULE_ATTR);
      PyObject *own = module == NULL ? NULL
                      : module == Py_None ? Py_NewRef(Py_None)
                                          : PyUnicode_FromFormat("%U.%U", module, part);
      both = own == NULL ? -1 : !PyUnicode_Check(reexport) || own == Py_None ? 1
                                : PyUnicode_Compare(reexport, own) != 0;
      if (both > 0 && PyErr_Occurred()) both = -1;
      Py_XDECREF(own);
    }
    if (both < 0) Py_DECREF(candidate);
    else if (both) {
      Py_DECREF(candidate);
      result = Py_NewRef(Py_None);
    } else
      result = candidate;
    goto done;
  }
  Py_DECREF(candidate);
  if (fd == Py_None) {
    result = Py_NewRef(Py_None);
    goto done;
  }
  module = PyObject_GetAttr(fd, CH_MODULE_ATTR);
  if (module == NULL) goto done;
  if (module == Py_None) { /* a Go package and the like: the Python method */
    PyObject *depth = PyLong_FromLong(w->depth);
    if (depth != NULL)
      result = PyObject_CallMethodObjArgs(w->resolver, W_MEMBER, cur, part, depth, NULL);
    Py_XDECREF(depth);
    goto done;
  }
  modules = PyObject_GetAttr(w->resolver, CH_MODULES);
  if (modules == NULL) goto done;
  PyObject *sub_name = PyUnicode_FromFormat("%U.%U", module, part);
  if (sub_name == NULL) goto done;
  PyObject *sub = first_id(modules, sub_name);
  Py_DECREF(sub_name);
  if (sub == NULL || sub != Py_None) {
    result = sub;
    goto done;
  }
  Py_DECREF(sub);
  imports = PyObject_GetAttr(fd, CH_IMPORTS);
  if (imports == NULL) goto done;
  reexport = get_or_none(imports, part);
  if (reexport == NULL) goto done;
  if (reexport != Py_None && w->depth < 16) {
    if (!PyUnicode_Check(reexport)) {
      PyErr_SetString(PyExc_TypeError, "walk: an import target that is not a str");
      goto done;
    }
    PyObject *found = dotted_walk(w->resolver, reexport, w->depth + 1);
    if (found == NULL) goto done;
    PyObject *target;
    int exact;
    if (pair(found, &target, &exact) == 0)
      result = Py_NewRef(exact ? target : Py_None);
    Py_DECREF(found);
    goto done;
  }
  PyObject *stars = PyObject_GetAttr(fd, CH_STAR_IMPORTS);
  if (stars == NULL) goto done;
  int any = PyObject_IsTrue(stars);
  Py_DECREF(stars);
  if (any < 0) goto done;
  if (any && w->depth < 16) {
    PyObject *depth = PyLong_FromLong(w->depth + 1);
    if (depth != NULL)
      result = PyObject_CallMethodObjArgs(w->resolver, CH_STAR_MEMBER, fd, part, depth, NULL);
    Py_XDECREF(depth);
    goto done;
  }
  result = Py_NewRef(Py_None);
done:
  Py_DECREF(files);
  Py_XDECREF(fd);
  Py_XDECREF(module);
  Py_XDECREF(modules);
  Py_XDECREF(imports);
  Py_XDECREF(reexport);
  return result;
}

/* the attribute's truth: 1, 0, or -1 on error */
static int attr_true(PyObject *obj, PyObject *name) {
  PyObject *value = PyObject_GetAttr(obj, name);
  if (value == NULL) return -1;
  int truth = PyObject_IsTrue(value);
  Py_DECREF(value);
  return truth;
}

typedef PyObject *(*Compute)(PyObject *resolver, PyObject *arg, PyObject *arg2);

static PyObject *compute_walk(PyObject *resolver, PyObject *start, PyObject *rest) {
  PyObject *parts = PyUnicode_Split(rest, CH_DOT, -1);
  if (parts == NULL) return NULL;
  PyObject *result = walk_from(resolver, start, parts, 0);
  Py_DECREF(parts);
  return result;
}

static PyObject *compute_dotted(PyObject *resolver, PyObject *name, PyObject *unused) {
  (void)unused;
  return dotted_walk(resolver, name, 0);
}

/* ``Members._chain((a, b), compute)`` */
static PyObject *memo_chain(PyObject *resolver, PyObject *a, PyObject *b, Compute compute,
                            PyObject *arg, PyObject *arg2) {
  int below = attr_true(resolver, CH_DEPTH);
  if (below == 0) below = attr_true(resolver, CH_COMPUTING);
  if (below < 0) return NULL;
  if (below) return compute(resolver, arg, arg2);
  PyObject *chains = PyObject_GetAttr(resolver, CH_CHAINS);
  if (chains == NULL) return NULL;
  PyObject *outer = NULL, *own = NULL, *result = NULL, *key = PyTuple_Pack(2, a, b);
  if (key == NULL || !PyDict_Check(chains)) {
    if (key != NULL) PyErr_SetString(PyExc_TypeError, "walk_chain: _chains is not a dict");
    goto done;
  }
  PyObject *hit = PyDict_GetItemWithError(chains, key); /* borrowed */
  if (hit != NULL) {
    if (!PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 2 ||
        !PyAnySet_Check(PyTuple_GET_ITEM(hit, 1))) {
      PyErr_SetString(PyExc_TypeError, "walk_chain: a chain memo entry that is not (result, keys)");
      goto done;
    }
    PyObject *found = Py_NewRef(PyTuple_GET_ITEM(hit, 0));
    if (PySet_GET_SIZE(PyTuple_GET_ITEM(hit, 1)) > 0) {
      PyObject *deps = PyObject_GetAttr(resolver, W_DEPS);
      PyObject *same = deps ? PyNumber_InPlaceOr(deps, PyTuple_GET_ITEM(hit, 1)) : NULL;
      Py_XDECREF(deps);
      if (same == NULL) {
        Py_DECREF(found);
        goto done;
      }
      Py_DECREF(same);
    }
    result = found;
    goto done;
  }
  if (PyErr_Occurred()) goto done;
  outer = PyObject_GetAttr(resolver, W_DEPS);
  own = PySet_New(NULL);
  if (outer == NULL || own == NULL || PyObject_SetAttr(resolver, W_DEPS, own) < 0) goto done;
  PyObject *computed = compute(resolver, arg, arg2);
  if (PyObject_SetAttr(resolver, W_DEPS, outer) < 0) { /* restored as ``finally`` does */
    Py_XDECREF(computed);
    goto done;
  }
  if (computed == NULL) goto done;
  PyObject *same = PyNumber_InPlaceOr(outer, own);
  PyObject *keys = same ? PyFrozenSet_New(own) : NULL;
  PyObject *entry = keys ? PyTuple_Pack(2, computed, keys) : NULL;
  Py_XDECREF(same);
  Py_XDECREF(keys);
  if (entry == NULL || PyDict_SetItem(chains, key, entry) < 0) {
    Py_XDECREF(entry);
    Py_DECREF(computed);
    goto done;
  }
  Py_DECREF(entry);
  result = computed;
done:
  Py_DECREF(chains);
  Py_XDECREF(key);
  Py_XDECREF(outer);
  Py_XDECREF(own);
  return result;
}

PyObject *fleet_walk_chain(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 3 || !PyUnicode_Check(args[1]) || !PyUnicode_Check(args[2])) {
    PyErr_SetString(PyExc_TypeError, "walk_chain(resolver, start: str, rest: str)");
    return NULL;
  }
  if (walk_ready() || chain_ready()) return NULL;
  return memo_chain(args[0], args[1], args[2], compute_walk, args[1], args[2]);
}

PyObject *fleet_dotted_name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2 || !PyUnicode_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "dotted_name(resolver, name: str)");
    return NULL;
  }
  if (walk_ready() || chain_ready() || ready()) return NULL;
  return memo_chain(args[0], M_EMPTY, args[1], compute_dotted, args[1], NULL);
}
