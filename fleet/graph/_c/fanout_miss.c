/*
 * fanout_miss.c: the resolver's cache misses without Python frames: the common cases of
 * fleet.graph._resolve.Resolver._resolve (which stays the specification and takes every other
 * case) for a Python file's reference at the top of a resolution.
 *
 * resolve_miss(ctx, scope, name, kind, has_call, classes, enclosing, fd) -> (target, exact),
 * or NotImplemented where the Python method must answer (a chain through a call, a base, a
 * name the file's star imports may bind, a Go package), or NULL on error. Handled here:
 *   - an import: the chain memo's ("", name), else ``Resolver._dotted_name``;
 *   - ``self.x`` / ``cls.x`` in a method: the chain memo's (class, "x"), else ``_walk_chain``;
 *   - the scope lookup (``lookup_scopes``, fanout.c): a local; a symbol and its chain; a
 *     name imported in an enclosing body or at module level, through the memo's ("", dotted);
 *     a typed local (``Resolver._typed_local``: its type expression resolved here too, below
 *     the top, where the memo is not read; the Python method where that is NotImplemented);
 *   - a name bound nowhere: a module-level binding outside a plain assignment (untyped, or
 *     nothing after it: a typed one with a chain is the Python method's), a builtin.
 * A memo hit adds its recorded dependency keys to the file's, as ``Members._chain`` does; the
 * memo is only read here, at the top of a resolution (no cycle guard in place), where
 * ``_chain`` reads it too. Every dependency key the Python method records is recorded here.
 *
 * ctx: the tuple Resolver.resolve_file builds once per file, in the order of the enum below
 * (C_RESOLVER: the resolver itself, for ``_depth`` and the methods called back).
 *
 * Part of fanout.c's translation unit, which includes it (as pyextract.c includes its parts):
 * not compiled on its own.
 */

PyObject *fleet_lookup_scopes(PyObject *self, PyObject *const *args, Py_ssize_t nargs);

enum {
  C_SYMBOLS, C_DEPS, C_CHAINS, C_IMPORTS, C_SCOPED, C_PARAMS, C_TYPES, C_STARS, C_PATH,
  C_BUILTINS, C_WALK_CHAIN, C_DOTTED_NAME, C_RESOLVER, C_MODULE_ID, C_SIZE
};

static PyObject *M_SELF_DOT, *M_CLS_DOT;
static PyObject *M_EMPTY, *M_SELF, *M_CLS, *M_STARS, *M_BUILTINS_DOT, *M_LOCAL, *M_DEPTH,
    *M_TYPED_LOCAL, *M_RESOLVE, *M_VALUE_TYPE, *M_NUL, *M_SEP, *M_NAME, *M_CLASS;

static int ready(void) {
  if (M_LOCAL != NULL) return 0;
  M_EMPTY = PyUnicode_InternFromString("");
  M_SELF = PyUnicode_InternFromString("self");
  M_CLS = PyUnicode_InternFromString("cls");
  M_STARS = PyUnicode_FromStringAndSize("stars\0", 6);
  M_BUILTINS_DOT = PyUnicode_InternFromString("builtins.");
  M_DEPTH = PyUnicode_InternFromString("_depth");
  M_TYPED_LOCAL = PyUnicode_InternFromString("_typed_local");
  M_RESOLVE = PyUnicode_InternFromString("_resolve");
  M_VALUE_TYPE = PyUnicode_InternFromString("_value_type");
  M_NUL = PyUnicode_FromStringAndSize("\0", 1);
  M_SEP = PyUnicode_InternFromString("::");
  M_NAME = PyUnicode_InternFromString("name");
  M_CLASS = PyUnicode_InternFromString("class");
  M_SELF_DOT = PyUnicode_InternFromString("self.");
  M_CLS_DOT = PyUnicode_InternFromString("cls.");
  if (!M_SELF_DOT || !M_CLS_DOT) return -1;
  if (!M_EMPTY || !M_SELF || !M_CLS || !M_STARS || !M_BUILTINS_DOT || !M_DEPTH ||
      !M_TYPED_LOCAL || !M_RESOLVE || !M_VALUE_TYPE || !M_NUL || !M_SEP || !M_NAME || !M_CLASS)
    return -1;
  M_LOCAL = PyTuple_Pack(2, M_EMPTY, Py_False); /* a local variable: its type is unknown */
  return M_LOCAL ? 0 : -1;
}

/* whether ctx has the types resolve_miss reads (checked once per file): 1, or 0 with
   TypeError set */
static int miss_ctx_ok(PyObject *ctx) {
  if (ready()) return 0;
  if (!PyTuple_Check(ctx) || PyTuple_GET_SIZE(ctx) != C_SIZE) goto bad;
  static const int dicts[] = {C_SYMBOLS, C_CHAINS, C_IMPORTS, C_SCOPED, C_PARAMS, C_TYPES};
  for (size_t i = 0; i < sizeof dicts / sizeof dicts[0]; i++)
    if (!PyDict_Check(PyTuple_GET_ITEM(ctx, dicts[i]))) goto bad;
  if (!PySet_Check(PyTuple_GET_ITEM(ctx, C_DEPS)) ||
      !PyAnySet_Check(PyTuple_GET_ITEM(ctx, C_BUILTINS)) ||
      !PyBool_Check(PyTuple_GET_ITEM(ctx, C_STARS)) ||
      !PyUnicode_Check(PyTuple_GET_ITEM(ctx, C_PATH)) ||
      !PyUnicode_Check(PyTuple_GET_ITEM(ctx, C_MODULE_ID)))
    goto bad;
  return 1;
bad:
  PyErr_SetString(PyExc_TypeError, "fanout: a miss context that is not the resolver's");
  return 0;
}

/* classes[scope], filled through enclosing(scope) on first need: borrowed, NULL on error */
static PyObject *enclosing_class(PyObject *classes, PyObject *enclosing, PyObject *scope) {
  PyObject *cls = PyDict_GetItemWithError(classes, scope);
  if (cls != NULL || PyErr_Occurred()) return cls;
  PyObject *found = PyObject_CallOneArg(enclosing, scope);
  if (found == NULL) return NULL;
  int bad = PyDict_SetItem(classes, scope, found);
  Py_DECREF(found);
  return bad ? NULL : PyDict_GetItemWithError(classes, scope);
}

/* ``Members._chain((a, b), compute)`` at the top of a resolution: the memo's result with its
   keys added to deps, else compute(arg) or compute(arg, arg2) (which memoises it). Below the
   top (``top`` 0, inside a typed local's lookup) compute is called at once: it is
   ``_walk_chain`` / ``_dotted_name``, which then skip the memo as ``_chain`` does. */
static PyObject *chain(PyObject *ctx, PyObject *a, PyObject *b, int compute, PyObject *arg,
                       PyObject *arg2, int top) {
  if (!top) {
    PyObject *fn = PyTuple_GET_ITEM(ctx, compute);
    return arg2 ? PyObject_CallFunctionObjArgs(fn, arg, arg2, NULL)
                : PyObject_CallOneArg(fn, arg);
  }
  PyObject *key = PyTuple_Pack(2, a, b);
  if (key == NULL) return NULL;
  PyObject *hit = PyDict_GetItemWithError(PyTuple_GET_ITEM(ctx, C_CHAINS), key); /* borrowed */
  Py_DECREF(key);
  if (hit != NULL) {
    if (!PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 2 ||
        !PyAnySet_Check(PyTuple_GET_ITEM(hit, 1))) {
      PyErr_SetString(PyExc_TypeError, "fanout: a chain memo entry that is not (result, keys)");
      return NULL;
    }
    PyObject *keys = PyTuple_GET_ITEM(hit, 1), *result = PyTuple_GET_ITEM(hit, 0);
    Py_INCREF(result); /* the set update runs no Python code, but hold it anyway */
    if (PySet_GET_SIZE(keys) > 0) {
      PyObject *same = PyNumber_InPlaceOr(PyTuple_GET_ITEM(ctx, C_DEPS), keys);
      if (same == NULL) {
        Py_DECREF(result);
        return NULL;
      }
      Py_DECREF(same);
    }
    return result;
  }
  if (PyErr_Occurred()) return NULL;
  PyObject *fn = PyTuple_GET_ITEM(ctx, compute);
  return arg2 ? PyObject_CallFunctionObjArgs(fn, arg, arg2, NULL) : PyObject_CallOneArg(fn, arg);
}

/* a (target, exact) pair's parts (borrowed), or -1 with TypeError */
static int pair(PyObject *r, PyObject **target, int *exact) {
  if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2) {
    PyErr_SetString(PyExc_TypeError, "fanout: a resolution that is not (target, exact)");
    return -1;
  }
  *target = PyTuple_GET_ITEM(r, 0);
  *exact = PyObject_IsTrue(PyTuple_GET_ITEM(r, 1));
  return *exact < 0 ? -1 : 0;
}

/* an import's or a dotted name's resolution through the memo: r when it resolved (for an
   import: exactly), else (fallback, True) */
static PyObject *dotted(PyObject *ctx, PyObject *full, PyObject *fallback, int need_exact,
                        int top) {
  PyObject *r = chain(ctx, M_EMPTY, full, C_DOTTED_NAME, full, NULL, top);
  PyObject *target;
  int exact;
  if (r == NULL || pair(r, &target, &exact)) {
    Py_XDECREF(r);
    return NULL;
  }
  if (target != Py_None && (exact || !need_exact)) return r;
  Py_DECREF(r);
  return PyTuple_Pack(2, fallback, Py_True);
}

static PyObject *typed_local(PyObject *ctx, PyObject *found, PyObject *rest,
                             PyObject *classes, PyObject *enclosing, PyObject *fd);

/* ``_resolve`` of a reference (scope, name, kind) of the file, or NotImplemented; ``top``: at
   the top of a resolution (the memo read), else inside a typed local's lookup */
static PyObject *resolve_miss_at(PyObject *ctx, PyObject *scope, PyObject *name,
                                 PyObject *kind, int has_call, PyObject *classes,
                                 PyObject *enclosing, PyObject *fd, int top) {
  if (PyUnicode_CompareWithASCIIString(kind, "import") == 0)
    return dotted(ctx, name, name, 1, top);
  if (has_call || PyUnicode_CompareWithASCIIString(kind, "inherit") == 0)
    return Py_NewRef(Py_NotImplemented);
  Py_ssize_t n = PyUnicode_GET_LENGTH(name);
  Py_ssize_t at = PyUnicode_FindChar(name, '.', 0, n, 1);
  if (at == -2) return NULL;
  PyObject *head = at < 0 ? Py_NewRef(name) : PyUnicode_Substring(name, 0, at);
  PyObject *rest = at < 0 ? Py_NewRef(M_EMPTY) : PyUnicode_Substring(name, at + 1, n);
  PyObject *result = NULL, *via = NULL; /* via: the dotted target of an imported head */
  if (head == NULL || rest == NULL) goto done;
  int has_rest = PyUnicode_GET_LENGTH(rest) > 0;
  if (PyUnicode_Compare(head, M_SELF) == 0 || PyUnicode_Compare(head, M_CLS) == 0) {
    PyObject *cls = enclosing_class(classes, enclosing, scope); /* borrowed */
    if (cls == NULL) goto done;
    if (cls != Py_None) {
      result = has_rest ? chain(ctx, cls, rest, C_WALK_CHAIN, cls, rest, top)
                        : PyTuple_Pack(2, cls, Py_True);
      goto done;
    }
  }
  PyObject *args[7] = {head, scope, PyTuple_GET_ITEM(ctx, C_SYMBOLS),
                       PyTuple_GET_ITEM(ctx, C_DEPS), PyTuple_GET_ITEM(ctx, C_SCOPED),
                       PyTuple_GET_ITEM(ctx, C_PARAMS), PyTuple_GET_ITEM(ctx, C_TYPES)};
  PyObject *found = fleet_lookup_scopes(NULL, args, 7);
  if (found == NULL) goto done;
  if (found == Py_NotImplemented) { /* a Go package */
    result = found;
    goto done;
  }
  if (found == Py_None) {
    Py_DECREF(found);
    via = PyDict_GetItemWithError(PyTuple_GET_ITEM(ctx, C_IMPORTS), head);
    if (via == NULL && PyErr_Occurred()) goto done;
    Py_XINCREF(via);
  } else if (!PyUnicode_Check(found)) {
    Py_DECREF(found);
    PyErr_SetString(PyExc_TypeError, "fanout: a scope lookup that is not a str");
    goto done;
  } else if (PyUnicode_GET_LENGTH(found) == 0) {
    Py_DECREF(found);
    result = Py_NewRef(M_LOCAL);
    goto done;
  } else if (PyUnicode_READ_CHAR(found, 0) == 1) { /* imported in an enclosing body */
    via = PyUnicode_Substring(found, 1, PyUnicode_GET_LENGTH(found));
    Py_DECREF(found);
    if (via == NULL) goto done;
  } else if (PyUnicode_READ_CHAR(found, 0) == 0) { /* a typed local */
    result = top ? typed_local(ctx, found, rest, classes, enclosing, fd)
                 : PyObject_CallMethodObjArgs(PyTuple_GET_ITEM(ctx, C_RESOLVER), M_TYPED_LOCAL,
                                              found, rest, fd, NULL); /* below: Python's */
    Py_DECREF(found);
    goto done;
  } else {
    result = has_rest ? chain(ctx, found, rest, C_WALK_CHAIN, found, rest, top)
                      : PyTuple_Pack(2, found, Py_True);
    Py_DECREF(found);
    goto done;
  }
  if (via != NULL) {
    PyObject *full = has_rest ? PyUnicode_FromFormat("%U.%U", via, rest) : Py_NewRef(via);
    if (full != NULL) result = dotted(ctx, full, full, 0, top);
    Py_XDECREF(full);
    goto done;
  }
  /* bound nowhere: the star imports (the Python method's when there are any) */
  if (PyTuple_GET_ITEM(ctx, C_STARS) == Py_True) {
    result = Py_NewRef(Py_NotImplemented);
    goto done;
  }
  PyObject *key = PyUnicode_Concat(M_STARS, PyTuple_GET_ITEM(ctx, C_PATH));
  if (key == NULL) goto done;
  int bad = PySet_Add(PyTuple_GET_ITEM(ctx, C_DEPS), key);
  Py_DECREF(key);
  if (bad) goto done;
  PyObject *module_id = PyTuple_GET_ITEM(ctx, C_MODULE_ID);
  PyObject *names = PyDict_GetItemWithError(PyTuple_GET_ITEM(ctx, C_PARAMS), module_id);
  if (names == NULL && PyErr_Occurred()) goto done;
  int bound = names == NULL ? 0 : PySequence_Contains(names, head);
  if (bound < 0) goto done;
  if (bound) {
    if (has_rest) { /* typed there (`console = Console()` in an `if`): the Python method's */
      PyObject *types = PyDict_GetItemWithError(PyTuple_GET_ITEM(ctx, C_TYPES), module_id);
      if (types == NULL && PyErr_Occurred()) goto done;
      int typed = types != NULL && PyDict_Check(types) ? PyDict_Contains(types, head) : 0;
      if (typed < 0) goto done;
      if (typed) {
        result = Py_NewRef(Py_NotImplemented);
        goto done;
      }
    }
    result = PyTuple_Pack(2, module_id, Py_False);
    goto done;
  }
  int builtin = PySet_Contains(PyTuple_GET_ITEM(ctx, C_BUILTINS), head);
  if (builtin < 0) goto done;
  if (builtin) {
    PyObject *target = PyUnicode_Concat(M_BUILTINS_DOT, name);
    if (target != NULL) result = PyTuple_Pack(2, target, Py_True);
    Py_XDECREF(target);
    goto done;
  }
  result = PyTuple_Pack(2, Py_None, Py_False);
done:
  Py_XDECREF(head);
  Py_XDECREF(rest);
  Py_XDECREF(via);
  return result;
}

static PyObject *resolve_miss(PyObject *ctx, PyObject *scope, PyObject *name,
                             PyObject *kind, int has_call, PyObject *classes, PyObject *enclosing,
                             PyObject *fd) {
  return resolve_miss_at(ctx, scope, name, kind, has_call, classes, enclosing, fd, 1);
}

/* resolver._depth += delta: 0, or -1 on error */
static int bump_depth(PyObject *resolver, long delta) {
  PyObject *now = PyObject_GetAttr(resolver, M_DEPTH);
  if (now == NULL) return -1;
  long value = PyLong_AsLong(now);
  Py_DECREF(now);
  if (value == -1 && PyErr_Occurred()) return -1;
  PyObject *next = PyLong_FromLong(value + delta);
  if (next == NULL) return -1;
  int bad = PyObject_SetAttr(resolver, M_DEPTH, next);
  Py_DECREF(next);
  return bad;
}

/* ``Resolver._typed_local(found, rest, fd)`` (found = "\0" scope "\0" type expression) for a
   miss at the top of a resolution (``_depth`` 0, so never over its limit of 8): the type
   expression resolved as a name in that scope below the top (``_depth`` 1; through
   resolve_miss_at, or the Python methods where it answers NotImplemented), then ``rest``
   walked from the class of its value (a class itself here; ``_value_type`` otherwise). A
   ``self.a.b`` / ``cls.a.b`` without a call that names no class (an alias of an attribute
   chain) is the Python method's. */
static PyObject *typed_local(PyObject *ctx, PyObject *found, PyObject *rest,
                             PyObject *classes, PyObject *enclosing, PyObject *fd) {
  PyObject *resolver = PyTuple_GET_ITEM(ctx, C_RESOLVER);
  if (PyUnicode_GET_LENGTH(rest) == 0) return Py_NewRef(M_LOCAL);
  PyObject *parts = PyUnicode_Split(found, M_NUL, -1);
  if (parts == NULL) return NULL;
  if (PyList_GET_SIZE(parts) != 3) { /* not this method's: the Python one says why */
    Py_DECREF(parts);
    return PyObject_CallMethodObjArgs(resolver, M_TYPED_LOCAL, found, rest, fd, NULL);
  }
  PyObject *scope = PyList_GET_ITEM(parts, 1), *type_expr = PyList_GET_ITEM(parts, 2);
  PyObject *r = NULL, *result = NULL;
  Py_ssize_t items = PyUnicode_FindChar(type_expr, '[', 0, PyUnicode_GET_LENGTH(type_expr), 1);
  if (items == -2) goto done;
  if (items >= 0) { /* ``[]C`` (a container) or ``EXPR[]`` (a loop's item): the Python method's */
    result = PyObject_CallMethodObjArgs(resolver, M_TYPED_LOCAL, found, rest, fd, NULL);
    goto done;
  }
  if (bump_depth(resolver, 1) < 0) goto done;
  Py_ssize_t call = PyUnicode_Find(type_expr, PARENS, 0, PyUnicode_GET_LENGTH(type_expr), 1);
  r = call == -2 ? NULL
                 : resolve_miss_at(ctx, scope, type_expr, M_NAME, call >= 0, classes,
                                   enclosing, fd, 0);
  if (r == Py_NotImplemented) { /* a star import, a call: back out, the Python method */
    Py_CLEAR(r);
    if (bump_depth(resolver, -1) == 0)
      result = PyObject_CallMethodObjArgs(resolver, M_TYPED_LOCAL, found, rest, fd, NULL);
    goto done;
  }
  { /* ``finally``: the depth restored, an exception already set kept */
    PyObject *exc_type, *exc_value, *exc_tb;
    PyErr_Fetch(&exc_type, &exc_value, &exc_tb);
    int restored = bump_depth(resolver, -1) == 0;
    if (exc_type != NULL) {
      if (!restored) PyErr_Clear();
      PyErr_Restore(exc_type, exc_value, exc_tb);
    }
    if (r == NULL || !restored) goto done;
  }
  PyObject *cls;
  int exact;
  if (pair(r, &cls, &exact)) goto done;
  if (cls == Py_None || !exact || !PyUnicode_Check(cls) || PyUnicode_GET_LENGTH(cls) == 0) {
    /* ``self.a.b`` / ``cls.a.b`` without a call: an alias of an attribute chain, the
       Python method's (it resolves ``expr.rest`` as written) */
    Py_ssize_t own = 0;
    if (call < 0) {
      own = PyUnicode_Tailmatch(type_expr, M_SELF_DOT, 0, PY_SSIZE_T_MAX, -1);
      if (own == 0) own = PyUnicode_Tailmatch(type_expr, M_CLS_DOT, 0, PY_SSIZE_T_MAX, -1);
      if (own < 0) goto done;
    }
    result = own ? PyObject_CallMethodObjArgs(resolver, M_TYPED_LOCAL, found, rest, fd, NULL)
                 : Py_NewRef(M_LOCAL);
    goto done;
  }
  Py_ssize_t sep = PyUnicode_Find(cls, M_SEP, 0, PyUnicode_GET_LENGTH(cls), 1);
  if (sep == -2) goto done;
  if (sep < 0) { /* outside the repository */
    Py_ssize_t builtin = PyUnicode_Tailmatch(cls, M_BUILTINS_DOT, 0, PY_SSIZE_T_MAX, -1);
    if (builtin < 0) goto done;
    if (builtin) {
      result = Py_NewRef(M_LOCAL);
    } else {
      PyObject *joined = PyUnicode_FromFormat("%U.%U", cls, rest);
      if (joined != NULL) result = PyTuple_Pack(2, joined, Py_False);
      Py_XDECREF(joined);
    }
    goto done;
  }
  if (PySet_Add(PyTuple_GET_ITEM(ctx, C_DEPS), cls) < 0) goto done; /* the file's: the top */
  PyObject *typed; /* ``_value_type(cls, False)``: a class is its instances' type */
  PyObject *sym = PyDict_GetItemWithError(PyTuple_GET_ITEM(ctx, C_SYMBOLS), cls);
  if (sym == NULL && PyErr_Occurred()) goto done;
  if (sym != NULL && PyTuple_Check(sym) && PyTuple_GET_SIZE(sym) >= 14 &&
      PyUnicode_Check(PyTuple_GET_ITEM(sym, 4)) &&
      PyUnicode_Compare(PyTuple_GET_ITEM(sym, 4), M_CLASS) == 0)
    typed = Py_NewRef(cls);
  else
    typed = PyObject_CallMethodObjArgs(resolver, M_VALUE_TYPE, cls, Py_False, NULL);
  if (typed == NULL) goto done;
  if (typed == Py_None) {
    Py_DECREF(typed);
    result = Py_NewRef(M_LOCAL);
    goto done;
  }
  result = chain(ctx, typed, rest, C_WALK_CHAIN, typed, rest, 1); /* memoised at the top */
  Py_DECREF(typed);
done:
  Py_DECREF(parts);
  Py_XDECREF(r);
  return result;
}
