/*
 * The scan of fleet.graph._facts.add_facts for calls on a call's result, over RawRefs' columns.
 *
 * call_tails(src, kinds, ends, code) -> [(i, args_start, args_end, rest, called, end), ...]
 *
 * For each reference i whose kind byte is ``code`` (a call), what _facts._CALL_TAIL matches at
 * src[ends[i]:] (``ends``: the uint32 column), only where it matches: the argument list (its
 * bytes are src[args_start:args_end]), then one or more ``.name`` (``rest``: that text without
 * its white space, as str), and whether a ``(`` follows (``called``); ``end`` is where the
 * ``.name`` part ends. The regular expression stays the specification (the Python loop runs
 * it when the extension is not built); the same matches, tested on every stdlib file:
 *
 *   [ \t]*\(((?:[^()]++|\((?:[^()]++|\([^()]*+\))*+\))*+)\)
 *   ((?:\s*\.\s*[A-Za-z_]\w*)+)([ \t]*\()?
 *
 * Being possessive, the argument list is balanced parentheses nested at most three deep
 * (the call's own included); \w of a bytes pattern is [A-Za-z0-9_], \s is [ \t\n\r\f\v].
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static int is_head(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int is_word(unsigned char c) { return is_head(c) || (c >= '0' && c <= '9'); }

static Py_ssize_t skip_blank(const unsigned char *s, Py_ssize_t at, Py_ssize_t n) {
  while (at < n && (s[at] == ' ' || s[at] == '\t')) at++;
  return at;
}

static int is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static Py_ssize_t skip_space(const unsigned char *s, Py_ssize_t at, Py_ssize_t n) {
  while (at < n && is_space(s[at])) at++;
  return at;
}

/* One match at ``at``: 1 (and the spans) or 0. */
static int match_tail(const unsigned char *s, Py_ssize_t n, Py_ssize_t at, Py_ssize_t *a0,
                      Py_ssize_t *a1, Py_ssize_t *r0, Py_ssize_t *r1, int *called) {
  at = skip_blank(s, at, n);
  if (at >= n || s[at] != '(') return 0;
  *a0 = ++at;
  int depth = 1;
  for (; at < n; at++) {
    if (s[at] == '(') {
      if (++depth > 3) return 0;
    } else if (s[at] == ')') {
      if (--depth == 0) break;
    }
  }
  if (at >= n) return 0;
  *a1 = at++;
  *r0 = at;
  Py_ssize_t end = -1;
  for (;;) {  /* (?:\s*\.\s*[A-Za-z_]\w*)+, each repetition whole or not at all */
    Py_ssize_t p = skip_space(s, at, n);
    if (p >= n || s[p] != '.') break;
    p = skip_space(s, p + 1, n);
    if (p >= n || !is_head(s[p])) break;
    p++;
    while (p < n && is_word(s[p])) p++;
    at = end = p;
  }
  if (end < 0) return 0;
  *r1 = end;
  Py_ssize_t p = skip_blank(s, end, n);
  *called = p < n && s[p] == '(';
  return 1;
}

PyObject *fleet_call_tails(PyObject *self, PyObject *args) {
  Py_buffer src, ends;
  const char *kinds;
  Py_ssize_t nkinds;
  int code;
  if (!PyArg_ParseTuple(args, "y*y#y*i", &src, &kinds, &nkinds, &ends, &code)) return NULL;
  PyObject *out = NULL;
  if (ends.len != nkinds * 4) {
    PyErr_SetString(PyExc_ValueError, "call_tails: ends is not one uint32 per kind");
    goto done;
  }
  out = PyList_New(0);
  if (out == NULL) goto done;
  const unsigned char *s = (const unsigned char *)src.buf;
  const uint32_t *end_of = (const uint32_t *)ends.buf;
  char rest[256];
  for (Py_ssize_t i = 0; i < nkinds; i++) {
    if ((unsigned char)kinds[i] != code) continue;
    Py_ssize_t a0, a1, r0, r1;
    int called;
    if ((Py_ssize_t)end_of[i] > src.len ||
        !match_tail(s, src.len, end_of[i], &a0, &a1, &r0, &r1, &called))
      continue;
    /* the .name part without its blanks (ASCII by construction) */
    Py_ssize_t len = 0, cap = r1 - r0;
    char *buf = cap <= (Py_ssize_t)sizeof rest ? rest : PyMem_Malloc((size_t)cap);
    if (buf == NULL) {
      PyErr_NoMemory();
      Py_CLEAR(out);
      goto done;
    }
    for (Py_ssize_t p = r0; p < r1; p++)
      if (!is_space(s[p])) buf[len++] = (char)s[p];
    PyObject *row = Py_BuildValue("(nnns#Nn)", i, a0, a1, buf, len, PyBool_FromLong(called),
                                  r1);
    if (buf != rest) PyMem_Free(buf);
    if (row == NULL || PyList_Append(out, row)) {
      Py_XDECREF(row);
      Py_CLEAR(out);
      goto done;
    }
    Py_DECREF(row);
  }
done:
  PyBuffer_Release(&src);
  PyBuffer_Release(&ends);
  return out;
}

/* whether ``needle`` occurs in s[lo:hi] (Python's slice bounds, clamped to n) */
static int occurs(const unsigned char *s, Py_ssize_t n, Py_ssize_t lo, Py_ssize_t hi,
                  const char *needle) {
  size_t len = strlen(needle);
  if (lo < 0) lo = 0;
  if (hi > n) hi = n;
  for (Py_ssize_t at = lo; at + (Py_ssize_t)len <= hi; at++) {
    const unsigned char *hit = memchr(s + at, needle[0], (size_t)(hi - at));
    if (hit == NULL) return 0;
    at = hit - s;
    if (at + (Py_ssize_t)len > hi) return 0;
    if (memcmp(hit, needle, len) == 0) return 1;
  }
  return 0;
}

static Py_ssize_t field(PyObject *sym, Py_ssize_t i, int *bad) {
  Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GET_ITEM(sym, i));
  if (v == -1 && PyErr_Occurred()) *bad = 1;
  return v;
}

/*
 * fact_candidates(src, symbols) -> [i, ...]: the indexes of the symbols for which
 * add_facts's loop over a file's symbols can find anything, in order: a function or method
 * whose signature holds ``->``, ``|``, ``[`` or a quote, a method with ``property``
 * between its start and its signature (its decorators), a variable named ``__all__`` or
 * whose statement holds ``:`` and one of ``[``, ``|`` or a quote (an annotation). The
 * loop's body keeps every test it makes (this is a filter: a superset of what it uses).
 */
PyObject *fleet_fact_candidates(PyObject *self, PyObject *args) {
  Py_buffer src;
  PyObject *symbols;
  if (!PyArg_ParseTuple(args, "y*O!", &src, &PyList_Type, &symbols)) return NULL;
  const unsigned char *s = src.buf;
  Py_ssize_t n = src.len;
  PyObject *out = PyList_New(0);
  for (Py_ssize_t i = 0; out != NULL && i < PyList_GET_SIZE(symbols); i++) {
    PyObject *sym = PyList_GET_ITEM(symbols, i);
    if (!PyTuple_Check(sym) || PyTuple_GET_SIZE(sym) < 14 ||
        !PyUnicode_Check(PyTuple_GET_ITEM(sym, 4)) || !PyUnicode_Check(PyTuple_GET_ITEM(sym, 3))) {
      PyErr_SetString(PyExc_TypeError, "fact_candidates: a symbol that is not a Symbol");
      Py_CLEAR(out);
      break;
    }
    PyObject *kind = PyTuple_GET_ITEM(sym, 4);
    int method = PyUnicode_CompareWithASCIIString(kind, "method") == 0;
    int wanted = 0, bad = 0;
    if (method || PyUnicode_CompareWithASCIIString(kind, "function") == 0) {
      Py_ssize_t start = field(sym, 6, &bad), sig0 = field(sym, 10, &bad),
                 sig1 = field(sym, 11, &bad);
      if (bad) {
        Py_CLEAR(out);
        break;
      }
      wanted = occurs(s, n, sig0, sig1, "->") || occurs(s, n, sig0, sig1, "|") ||
               occurs(s, n, sig0, sig1, "[") || occurs(s, n, sig0, sig1, "'") ||
               occurs(s, n, sig0, sig1, "\"") ||
               (method && start < sig0 && occurs(s, n, start, sig0, "property"));
    } else if (PyUnicode_CompareWithASCIIString(kind, "variable") == 0) {
      Py_ssize_t start = field(sym, 6, &bad), end = field(sym, 7, &bad);
      if (bad) {
        Py_CLEAR(out);
        break;
      }
      wanted = PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(sym, 3), "__all__") == 0 ||
               (occurs(s, n, start, end, ":") &&
                (occurs(s, n, start, end, "[") || occurs(s, n, start, end, "|") ||
                 occurs(s, n, start, end, "'") || occurs(s, n, start, end, "\"")));
    }
    if (wanted) {
      PyObject *index = PyLong_FromSsize_t(i);
      if (index == NULL || PyList_Append(out, index) < 0) Py_CLEAR(out);
      Py_XDECREF(index);
    }
  }
  PyBuffer_Release(&src);
  return out;
}

/*
 * self_attributes(names, kinds, code) -> [i, ...]: the references add_facts reads attribute
 * types from: kind byte ``code`` (an attribute) and a name ``self.x`` (``self.`` and no other
 * dot), in order. The Python loop over the columns stays the specification.
 */
PyObject *fleet_self_attributes(PyObject *self, PyObject *args) {
  PyObject *names, *kinds_obj;
  int code;
  if (!PyArg_ParseTuple(args, "O!Si", &PyTuple_Type, &names, &kinds_obj, &code)) return NULL;
  Py_ssize_t n = PyTuple_GET_SIZE(names);
  if (PyBytes_GET_SIZE(kinds_obj) != n) {
    PyErr_SetString(PyExc_ValueError, "self_attributes: columns of different lengths");
    return NULL;
  }
  const unsigned char *kinds = (const unsigned char *)PyBytes_AS_STRING(kinds_obj);
  PyObject *out = PyList_New(0);
  if (out == NULL) return NULL;
  for (Py_ssize_t i = 0; i < n; i++) {
    if (kinds[i] != code) continue;
    PyObject *name = PyTuple_GET_ITEM(names, i);
    if (!PyUnicode_Check(name)) {
      PyErr_SetString(PyExc_TypeError, "self_attributes: a name that is not a str");
      goto fail;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(name);
    if (len < 5) continue;
    int kind = PyUnicode_KIND(name);
    const void *data = PyUnicode_DATA(name);
    if (PyUnicode_READ(kind, data, 0) != 's' || PyUnicode_READ(kind, data, 1) != 'e' ||
        PyUnicode_READ(kind, data, 2) != 'l' || PyUnicode_READ(kind, data, 3) != 'f' ||
        PyUnicode_READ(kind, data, 4) != '.')
      continue;
    int dots = 0;
    for (Py_ssize_t k = 5; k < len && !dots; k++) dots += PyUnicode_READ(kind, data, k) == '.';
    if (dots) continue;
    PyObject *index = PyLong_FromSsize_t(i);
    if (index == NULL || PyList_Append(out, index) < 0) {
      Py_XDECREF(index);
      goto fail;
    }
    Py_DECREF(index);
  }
  return out;
fail:
  Py_DECREF(out);
  return NULL;
}
