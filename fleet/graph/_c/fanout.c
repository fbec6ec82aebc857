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
 * With ``ctx`` (not None: a Python file, see fanout_miss.c), a miss is first offered to
 * resolve_miss, which answers the common cases without a Python frame; miss(ref, fd) takes
 * the rest.
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

/* the common cases of a miss (ctx), one translation unit with this file */
#include "fanout_miss.c"
/* walk(resolver, start, parts, depth): Members._walk's loop */
#include "fanout_walk.c"
/* walk_chain(resolver, start, rest), dotted_name(resolver, name): Members' memoised chains */
#include "fanout_chain.c"
/* mro(resolver, cls): Members._mro with the base lists' order in C */
#include "fanout_mro.c"

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
  PyObject *cls = enclosing_class(classes, enclosing, scope); /* borrowed */
  if (cls == NULL) return NULL;
  /* ``cls or ref.scope``: None (no enclosing class) or "" */
  if (cls == Py_None || (PyUnicode_Check(cls) && PyUnicode_GET_LENGTH(cls) == 0))
    return Py_NewRef(scope);
  return Py_NewRef(cls);
}

/* miss(RawRef(scope, name, kind, 0, 0, 0, 0), fd), the RawRef built as tuple.__new__ does */
static PyObject *python_miss(PyTypeObject *rawref, PyObject *scope, PyObject *name,
                             PyObject *kind, PyObject *miss, PyObject *fd) {
  PyObject *ref = rawref->tp_alloc(rawref, 7);
  if (ref == NULL) return NULL;
  PyTuple_SET_ITEM(ref, 0, Py_NewRef(scope));
  PyTuple_SET_ITEM(ref, 1, Py_NewRef(name));
  PyTuple_SET_ITEM(ref, 2, Py_NewRef(kind));
  for (int f = 3; f < 7; f++) PyTuple_SET_ITEM(ref, f, Py_NewRef(ZERO));
  PyObject *argv[2] = {ref, fd};
  PyObject *hit = PyObject_Vectorcall(miss, argv, 2, NULL);
  Py_DECREF(ref);
  return hit;
}

PyObject *fleet_fanout(PyObject *self, PyObject *args) {
  PyObject *scopes, *names, *kinds, *kind_names, *local, *classes, *enclosing, *cache, *miss;
  PyObject *fd, *ctx = Py_None;
  PyTypeObject *rawref;
  int python;
  if (!PyArg_ParseTuple(args, "O!O!SO!O!pO!OO!OOO!|O", &PyTuple_Type, &scopes, &PyTuple_Type,
                        &names, &kinds, &PyTuple_Type, &kind_names, &PySet_Type, &local,
                        &python, &PyDict_Type, &classes, &enclosing, &PyDict_Type, &cache,
                        &miss, &fd, &PyType_Type, &rawref, &ctx))
    return NULL;
  if (ctx != Py_None && !miss_ctx_ok(ctx)) return NULL;
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
      hit = ctx == Py_None ? Py_NewRef(Py_NotImplemented)
                           : resolve_miss(ctx, scope, name, kind, call >= 0, classes,
                                                enclosing, fd);
      if (hit == Py_NotImplemented) { /* the Python method's case (or no ctx) */
        Py_DECREF(hit);
        hit = python_miss(rawref, scope, name, kind, miss, fd);
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

/*
 * lookup_scopes(head, scope, symbols, deps, scoped, params, local_types) -> str | None, or
 * NotImplemented at a Go module (its package's other files: the Python method's)
 *
 * Resolver._lookup_scopes (fleet/graph/_resolve.py, which stays the specification and the
 * path of Go files) in C: from ``scope`` outwards, innermost first, a function's nested
 * definition, an import in its body, a local (``""``, or ``"\0<function>\0<type>"`` when its
 * type is known), a class body's member or import (only for code directly in that body), then
 * the module's symbol; each symbol id asked for is added to ``deps``. An import found in an
 * enclosing body is ``"\1"`` + its dotted target. symbols: dict id -> Symbol; scoped, params,
 * local_types: the file's FileData fields (dicts).
 */
static PyObject *KIND_FUNCTION, *KIND_METHOD, *KIND_CLASS, *KIND_MODULE, *DOT, *COLONS, *ONE,
    *NUL;

static int ensure_lookup_constants(void) {
  if (NUL != NULL) return 0;
  KIND_FUNCTION = PyUnicode_InternFromString("function");
  KIND_METHOD = PyUnicode_InternFromString("method");
  KIND_CLASS = PyUnicode_InternFromString("class");
  KIND_MODULE = PyUnicode_InternFromString("module");
  DOT = PyUnicode_InternFromString(".");
  COLONS = PyUnicode_InternFromString("::");
  ONE = PyUnicode_InternFromString("\1");
  NUL = PyUnicode_FromStringAndSize("\0", 1);
  return (KIND_FUNCTION && KIND_METHOD && KIND_CLASS && KIND_MODULE && DOT && COLONS && ONE &&
          NUL) ? 0 : -1;
}

static int same_str(PyObject *a, PyObject *b) {
  if (a == b) return 1;
  return PyUnicode_Check(a) && PyUnicode_Compare(a, b) == 0;
}

/* ``sid + tail`` added to deps: 1 and *out (a new reference) when it is a symbol, 0 when
   not, -1 on error */
static int ask(PyObject *sid, PyObject *tail, PyObject *symbols, PyObject *deps,
               PyObject **out) {
  PyObject *id = PyUnicode_Concat(sid, tail);
  if (id == NULL || PySet_Add(deps, id) < 0) {
    Py_XDECREF(id);
    return -1;
  }
  int found = PyDict_Contains(symbols, id);
  if (found <= 0) {
    Py_DECREF(id);
    return found;
  }
  *out = id;
  return 1;
}

/* scoped.get(sid, {}).get(head): borrowed, NULL when absent (check PyErr_Occurred) */
static PyObject *scoped_import(PyObject *scoped, PyObject *sid, PyObject *head) {
  PyObject *in = PyDict_GetItemWithError(scoped, sid);
  if (in == NULL || !PyDict_Check(in)) return NULL;
  return PyDict_GetItemWithError(in, head);
}

PyObject *fleet_lookup_scopes(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  /* METH_FASTCALL: called once per resolver miss, PyArg_ParseTuple's cost showed */
  if (nargs != 7) {
    PyErr_SetString(PyExc_TypeError, "lookup_scopes takes 7 arguments");
    return NULL;
  }
  PyObject *head = args[0], *scope = args[1], *symbols = args[2], *deps = args[3],
           *scoped = args[4], *params = args[5], *local_types = args[6];
  if (!PyUnicode_Check(head) || !PyDict_Check(symbols) || !PySet_Check(deps) ||
      !PyDict_Check(scoped) || !PyDict_Check(params) || !PyDict_Check(local_types)) {
    PyErr_SetString(PyExc_TypeError, "lookup_scopes: head str, symbols dict, deps set, "
                    "scoped, params and local_types dicts");
    return NULL;
  }
  if (ensure_constants() || ensure_lookup_constants()) return NULL;
  PyObject *dot_head = PyUnicode_Concat(DOT, head);
  if (dot_head == NULL) return NULL;
  PyObject *result = NULL;
  int first = 1, has_scoped = PyDict_GET_SIZE(scoped) > 0;
  PyObject *sid = scope; /* borrowed: a symbol's field or the argument */
  while (sid != Py_None) {
    PyObject *sym = PyDict_GetItemWithError(symbols, sid);
    if (sym == NULL) {
      if (PyErr_Occurred()) goto fail;
      break;
    }
    if (!PyTuple_Check(sym) || PyTuple_GET_SIZE(sym) < 14) {
      PyErr_SetString(PyExc_TypeError, "lookup_scopes: a symbol that is not a Symbol");
      goto fail;
    }
    PyObject *kind = PyTuple_GET_ITEM(sym, 4);
    if (same_str(kind, KIND_FUNCTION) || same_str(kind, KIND_METHOD)) {
      int found = ask(sid, dot_head, symbols, deps, &result);
      if (found) {
        if (found < 0) goto fail;
        goto done;
      }
      if (has_scoped) {
        PyObject *imported = scoped_import(scoped, sid, head);
        if (imported != NULL) {
          result = PyUnicode_Concat(ONE, imported);
          goto done;
        }
        if (PyErr_Occurred()) goto fail;
      }
      PyObject *names = PyDict_GetItemWithError(params, sid);
      if (names == NULL && PyErr_Occurred()) goto fail;
      int bound = names == NULL ? 0 : PySequence_Contains(names, head);
      if (bound < 0) goto fail;
      if (bound) {
        PyObject *typed = PyDict_GetItemWithError(local_types, sid);
        if (typed == NULL && PyErr_Occurred()) goto fail;
        PyObject *type = typed != NULL && PyDict_Check(typed)
                             ? PyDict_GetItemWithError(typed, head) : NULL;
        if (type == NULL && PyErr_Occurred()) goto fail;
        if (type != NULL) {
          PyObject *parts[4] = {NUL, sid, NUL, type};
          PyObject *seq = PyTuple_Pack(4, parts[0], parts[1], parts[2], parts[3]);
          if (seq == NULL) goto fail;
          result = PyUnicode_Join(EMPTY, seq);
          Py_DECREF(seq);
          goto done;
        }
        result = Py_NewRef(EMPTY);
        goto done;
      }
      first = 0;
    } else if (same_str(kind, KIND_CLASS)) {
      if (first) {
        int found = ask(sid, dot_head, symbols, deps, &result);
        if (found) {
          if (found < 0) goto fail;
          goto done;
        }
        if (has_scoped) {
          PyObject *imported = scoped_import(scoped, sid, head);
          if (imported != NULL) {
            result = PyUnicode_Concat(ONE, imported);
            goto done;
          }
          if (PyErr_Occurred()) goto fail;
        }
      }
      first = 0;
    } else if (same_str(kind, KIND_MODULE)) {
      PyObject *language = PyTuple_GET_ITEM(sym, 5);
      if (PyUnicode_Check(language) && PyUnicode_CompareWithASCIIString(language, "go") == 0) {
        result = Py_NewRef(Py_NotImplemented); /* a Go package's other files: Python's */
        goto done;
      }
      PyObject *colons_head = PyUnicode_Concat(COLONS, head);
      if (colons_head == NULL) goto fail;
      int found = ask(PyTuple_GET_ITEM(sym, 1), colons_head, symbols, deps, &result);
      Py_DECREF(colons_head);
      if (found < 0) goto fail;
      if (!found) result = Py_NewRef(Py_None);
      goto done;
    }
    sid = PyTuple_GET_ITEM(sym, 13);
  }
  result = Py_NewRef(Py_None);
done:
  Py_DECREF(dot_head);
  return result;
fail:
  Py_DECREF(dot_head);
  return NULL;
}
