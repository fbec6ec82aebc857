/*
 * SCCs and lock ranks of the dependency graph, for fleet.graph._edges.condense.
 *
 * Input: the graph in CSR form over nodes numbered in id order (offsets[n + 1], targets[m],
 * both uint32 buffers; an edge u -> v means u depends on v). Output: (comp, rank) as bytes of
 * uint32: comp[u] is u's SCC number, rank[c] the lock rank of SCC c. Tarjan's algorithm,
 * iterative; then Kahn's algorithm over the condensation, dependencies first, ties broken by
 * each SCC's smallest node number (= its smallest id). The same result as the Python version
 * in _edges.py (tested against it); runs without the GIL.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint32_t key, comp; } HeapItem;

static void heap_push(HeapItem *h, size_t *n, HeapItem it) {
  size_t i = (*n)++;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (h[p].key <= it.key) break;
    h[i] = h[p];
    i = p;
  }
  h[i] = it;
}

static HeapItem heap_pop(HeapItem *h, size_t *n) {
  HeapItem top = h[0], last = h[--(*n)];
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    uint32_t key = last.key;
    if (l < *n && h[l].key < key) { m = l; key = h[l].key; }
    if (r < *n && h[r].key < key) m = r;
    if (m == i) break;
    h[i] = h[m];
    i = m;
  }
  if (*n) h[i] = last;
  return top;
}

static int cmp_pair(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Returns 0 on success, -1 when out of memory. */
static int condense_csr(uint32_t n, const uint32_t *off, const uint32_t *tgt, uint32_t *comp,
                        uint32_t *rank_out, uint32_t *ncomp_out) {
  const uint32_t NONE = UINT32_MAX;
  uint32_t m = off[n];
  uint32_t *index = malloc(sizeof(uint32_t) * (n ? n : 1));
  uint32_t *low = malloc(sizeof(uint32_t) * (n ? n : 1));
  uint32_t *stack = malloc(sizeof(uint32_t) * (n ? n : 1));
  uint32_t *work = malloc(sizeof(uint32_t) * (n ? n : 1));   /* node of each frame */
  uint32_t *next = malloc(sizeof(uint32_t) * (n ? n : 1));   /* next edge of each frame */
  unsigned char *on = calloc(n ? n : 1, 1);
  uint32_t *minkey = NULL, *waiting = NULL, *doff = NULL, *dlist = NULL;
  uint64_t *pairs = NULL;
  HeapItem *heap = NULL;
  int rc = -1;
  if (!index || !low || !stack || !work || !next || !on) goto done;
  for (uint32_t i = 0; i < n; i++) index[i] = NONE;
  uint32_t counter = 0, sp = 0, ncomp = 0;
  for (uint32_t root = 0; root < n; root++) {
    if (index[root] != NONE) continue;
    uint32_t wp = 0;
    index[root] = low[root] = counter++;
    stack[sp++] = root;
    on[root] = 1;
    work[wp] = root;
    next[wp++] = off[root];
    while (wp) {
      uint32_t node = work[wp - 1];
      int descended = 0;
      while (next[wp - 1] < off[node + 1]) {
        uint32_t v = tgt[next[wp - 1]++];
        if (index[v] == NONE) {
          index[v] = low[v] = counter++;
          stack[sp++] = v;
          on[v] = 1;
          work[wp] = v;
          next[wp++] = off[v];
          descended = 1;
          break;
        }
        if (on[v] && index[v] < low[node]) low[node] = index[v];
      }
      if (descended) continue;
      wp--;
      if (wp && low[node] < low[work[wp - 1]]) low[work[wp - 1]] = low[node];
      if (low[node] == index[node]) {
        uint32_t top;
        do {
          top = stack[--sp];
          on[top] = 0;
          comp[top] = ncomp;
        } while (top != node);
        ncomp++;
      }
    }
  }
  /* the condensation: pair (dependency comp, dependent comp), deduplicated */
  minkey = malloc(sizeof(uint32_t) * (ncomp ? ncomp : 1));
  waiting = calloc(ncomp ? ncomp : 1, sizeof(uint32_t));
  doff = calloc((size_t)ncomp + 1, sizeof(uint32_t));
  pairs = malloc(sizeof(uint64_t) * (m ? m : 1));
  heap = malloc(sizeof(HeapItem) * (ncomp ? ncomp : 1));
  if (!minkey || !waiting || !doff || !pairs || !heap) goto done;
  for (uint32_t c = 0; c < ncomp; c++) minkey[c] = NONE;
  for (uint32_t u = 0; u < n; u++)
    if (u < minkey[comp[u]]) minkey[comp[u]] = u;
  size_t np = 0;
  for (uint32_t u = 0; u < n; u++)
    for (uint32_t e = off[u]; e < off[u + 1]; e++) {
      uint32_t cu = comp[u], cv = comp[tgt[e]];
      if (cu != cv) pairs[np++] = ((uint64_t)cv << 32) | cu;
    }
  qsort(pairs, np, sizeof(uint64_t), cmp_pair);
  size_t nu = 0;
  for (size_t i = 0; i < np; i++)
    if (i == 0 || pairs[i] != pairs[i - 1]) pairs[nu++] = pairs[i];
  dlist = malloc(sizeof(uint32_t) * (nu ? nu : 1));
  if (!dlist) goto done;
  for (size_t i = 0; i < nu; i++) {
    uint32_t cv = (uint32_t)(pairs[i] >> 32), cu = (uint32_t)pairs[i];
    doff[cv + 1]++;
    waiting[cu]++;
    dlist[i] = cu;  /* pairs are sorted by cv: dlist is already grouped */
  }
  for (uint32_t c = 0; c < ncomp; c++) doff[c + 1] += doff[c];
  size_t hn = 0;
  for (uint32_t c = 0; c < ncomp; c++)
    if (!waiting[c]) heap_push(heap, &hn, (HeapItem){minkey[c], c});
  uint32_t position = 0;
  while (hn) {
    HeapItem it = heap_pop(heap, &hn);
    rank_out[it.comp] = position++;
    for (uint32_t i = doff[it.comp]; i < doff[it.comp + 1]; i++) {
      uint32_t j = dlist[i];
      if (--waiting[j] == 0) heap_push(heap, &hn, (HeapItem){minkey[j], j});
    }
  }
  *ncomp_out = ncomp;
  rc = 0;
done:
  free(index); free(low); free(stack); free(work); free(next); free(on);
  free(minkey); free(waiting); free(doff); free(dlist); free(pairs); free(heap);
  return rc;
}

PyObject *fleet_condense(PyObject *self, PyObject *args) {
  (void)self;
  Py_buffer offsets, targets;
  if (!PyArg_ParseTuple(args, "y*y*:condense", &offsets, &targets)) return NULL;
  PyObject *result = NULL;
  uint32_t *comp = NULL, *rank = NULL;
  if (offsets.len < (Py_ssize_t)sizeof(uint32_t) || offsets.len % sizeof(uint32_t) ||
      targets.len % sizeof(uint32_t)) {
    PyErr_SetString(PyExc_ValueError, "condense: offsets and targets must be uint32 arrays");
    goto out;
  }
  uint32_t n = (uint32_t)(offsets.len / sizeof(uint32_t) - 1);
  const uint32_t *off = offsets.buf, *tgt = targets.buf;
  size_t m = (size_t)targets.len / sizeof(uint32_t);
  if (off[0] != 0 || off[n] != m) {
    PyErr_SetString(PyExc_ValueError, "condense: offsets do not span the targets");
    goto out;
  }
  for (uint32_t u = 0; u < n; u++)
    if (off[u] > off[u + 1]) {
      PyErr_SetString(PyExc_ValueError, "condense: offsets are not ascending");
      goto out;
    }
  for (size_t e = 0; e < m; e++)
    if (tgt[e] >= n) {
      PyErr_SetString(PyExc_ValueError, "condense: a target is not a node");
      goto out;
    }
  comp = malloc(sizeof(uint32_t) * (n ? n : 1));
  rank = malloc(sizeof(uint32_t) * (n ? n : 1));
  if (!comp || !rank) {
    PyErr_NoMemory();
    goto out;
  }
  uint32_t ncomp = 0;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = condense_csr(n, off, tgt, comp, rank, &ncomp);
  Py_END_ALLOW_THREADS
  if (rc) {
    PyErr_NoMemory();
    goto out;
  }
  result = Py_BuildValue("(y#y#)", (const char *)comp, (Py_ssize_t)(n * sizeof(uint32_t)),
                         (const char *)rank, (Py_ssize_t)(ncomp * sizeof(uint32_t)));
out:
  free(comp);
  free(rank);
  PyBuffer_Release(&offsets);
  PyBuffer_Release(&targets);
  return result;
}

/*
 * csr(succ, nodes) -> (offsets, targets): the graph in the CSR form condense takes, as uint32
 * bytes: the nodes numbered in the order of ``nodes`` (every key of succ, sorted by the
 * caller), offsets[i] where node i's row starts in targets, each row's targets as the numbers
 * of its keys in the row's order. The Python lines it replaces stay in _edges.condense.
 */
PyObject *fleet_csr(PyObject *self, PyObject *args) {
  (void)self;
  PyObject *succ, *nodes;
  if (!PyArg_ParseTuple(args, "O!O!:csr", &PyDict_Type, &succ, &PyList_Type, &nodes))
    return NULL;
  Py_ssize_t n = PyList_GET_SIZE(nodes);
  PyObject *number = PyDict_New(), *result = NULL;
  uint32_t *off = malloc(sizeof(uint32_t) * (size_t)(n + 1)), *tgt = NULL;
  size_t cap = 1024, m = 0;
  if (number == NULL || off == NULL || (tgt = malloc(sizeof(uint32_t) * cap)) == NULL) {
    if (!PyErr_Occurred()) PyErr_NoMemory();
    goto out;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *num = PyLong_FromSsize_t(i);
    int rc = num ? PyDict_SetItem(number, PyList_GET_ITEM(nodes, i), num) : -1;
    Py_XDECREF(num);
    if (rc < 0) goto out;
  }
  off[0] = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *row = PyDict_GetItemWithError(succ, PyList_GET_ITEM(nodes, i));
    if (row == NULL || !PyDict_Check(row)) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "csr: a node without a row");
      goto out;
    }
    Py_ssize_t at = 0;
    PyObject *v, *attr;
    while (PyDict_Next(row, &at, &v, &attr)) {
      PyObject *nv = PyDict_GetItemWithError(number, v);
      if (nv == NULL) {
        if (!PyErr_Occurred()) PyErr_SetObject(PyExc_KeyError, v);
        goto out;
      }
      if (m == cap) {
        uint32_t *grown = realloc(tgt, 2 * cap * sizeof(uint32_t));
        if (grown == NULL) {
          PyErr_NoMemory();
          goto out;
        }
        tgt = grown;
        cap *= 2;
      }
      tgt[m++] = (uint32_t)PyLong_AsSize_t(nv);
    }
    off[i + 1] = (uint32_t)m;
  }
  result = Py_BuildValue("(y#y#)", (const char *)off, (Py_ssize_t)((n + 1) * sizeof(uint32_t)),
                         (const char *)tgt, (Py_ssize_t)(m * sizeof(uint32_t)));
out:
  Py_XDECREF(number);
  free(off);
  free(tgt);
  return result;
}
