/*
 * fleet.graph._native: Python symbol extraction in one C walk over the tree-sitter tree.
 *
 * It computes exactly what fleet/graph/_extract.py computes from the `queries/python.scm`
 * matches (the query file stays the specification; tests/unit/graph compare the two paths file
 * by file on acme, the stdlib and bad input), without a query cursor and without touching a
 * Python object per syntax node: one depth-first walk over the subtrees recognises the query's
 * patterns from each node's type, its field in the parent and the parent's and grandparent's types;
 * definitions become qualified symbols with a stack sweep, references are sorted, de-duplicated,
 * extended over dotted chains and given their innermost scope, all here, and only the results
 * become Python objects (Symbol tuples built directly, references as RawRefs columns).
 *
 * The tree-sitter runtime is compiled in (third_party/tree-sitter through runtime.c: the core
 * that py-tree-sitter 0.26.1 bundles, MIT); the grammar comes from tree_sitter_python's
 * language capsule.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tree_sitter/api.h"
/* the runtime's internals, for a walk without the cursor (same version, compiled in) */
#include "language.h"
#include "length.h"
#include "subtree.h"
#include "tree.h"

/* ------------------------------------------------------------------ grammar ids */
enum {
    S_MODULE, S_CLASS_DEF, S_FUNCTION_DEF, S_DECORATED_DEF, S_EXPR_STMT, S_ASSIGNMENT, S_BLOCK,
    S_IDENTIFIER, S_ATTRIBUTE, S_CALL, S_ARGUMENT_LIST, S_DECORATOR, S_KEYWORD_ARGUMENT, S_TYPE,
    S_RETURN, S_RAISE, S_EXCEPT, S_AS_PATTERN, S_DEFAULT_PARAM, S_TYPED_DEFAULT_PARAM, S_LIST,
    S_TUPLE, S_SET, S_PAIR, S_PARAMETERS, S_LAMBDA_PARAMETERS, S_TYPED_PARAM, S_LIST_SPLAT_PAT,
    S_DICT_SPLAT_PAT, S_PATTERN_LIST, S_TUPLE_PATTERN, S_AUG_ASSIGNMENT, S_FOR, S_FOR_IN,
    S_AS_PATTERN_TARGET, S_NAMED_EXPR, S_IMPORT, S_IMPORT_FROM, S_DOTTED_NAME, S_ALIASED_IMPORT,
    S_RELATIVE_IMPORT, S_IMPORT_PREFIX, S_WILDCARD_IMPORT, S_COUNT
};
static const char *SYMBOL_NAMES[S_COUNT] = {
    "module", "class_definition", "function_definition", "decorated_definition",
    "expression_statement", "assignment", "block", "identifier", "attribute", "call",
    "argument_list", "decorator", "keyword_argument", "type", "return_statement",
    "raise_statement", "except_clause", "as_pattern", "default_parameter",
    "typed_default_parameter", "list", "tuple", "set", "pair", "parameters", "lambda_parameters",
    "typed_parameter", "list_splat_pattern", "dictionary_splat_pattern", "pattern_list",
    "tuple_pattern", "augmented_assignment", "for_statement", "for_in_clause",
    "as_pattern_target", "named_expression", "import_statement", "import_from_statement",
    "dotted_name", "aliased_import", "relative_import", "import_prefix", "wildcard_import",
};
enum {
    F_NAME, F_BODY, F_SUPERCLASSES, F_LEFT, F_RIGHT, F_TYPE, F_FUNCTION, F_OBJECT, F_VALUE,
    F_ALIAS, F_MODULE_NAME, F_PARAMETERS, F_COUNT
};
static const char *FIELD_NAMES[F_COUNT] = {
    "name", "body", "superclasses", "left", "right", "type", "function", "object", "value",
    "alias", "module_name", "parameters",
};

typedef struct {
    const TSLanguage *language;
    TSParser *parser;
    TSSymbol sym[S_COUNT];
    TSFieldId field[F_COUNT];
    /* symbol -> index in SYMBOL_NAMES + 1 (0: not interesting) */
    uint8_t *kind_of;
    uint32_t symbol_count;
    PyObject *str_call, *str_attribute, *str_name, *str_inherit;
    PyObject *str_class, *str_function, *str_method, *str_variable;
    TSSymbol comma, comment, subscript;
    PyObject *sha256, *str_hexdigest, *str_python;
    PyObject *normalize; /* unicodedata.normalize */
} Grammar;

static Grammar G;
static int grammar_ready = 0;

/* ------------------------------------------------------------------ parsing without the GIL */
/* With init(..., threaded=True) the parse and the walk run with the GIL released, so threads
 * extract files in parallel (only building the Python results at the end holds it). Each parse
 * takes a free parser from a small pool; the pool's flags are only touched with the GIL held,
 * which serialises them. */
#define PARSERS 8
static TSParser *pool[PARSERS];
static int release_gil = 0; /* set by init(..., threaded=True) */
static int pool_busy[PARSERS];

/* a parser for one parse (GIL held): a pooled one (*slot >= 0) or one of its own (*slot -1) */
static TSParser *take_parser(int *slot) {
    *slot = -1;
    for (int i = 0; i < PARSERS; i++) {
        if (!pool_busy[i]) { *slot = i; break; }
    }
    if (*slot >= 0) {
        if (!pool[*slot]) {
            pool[*slot] = ts_parser_new();
            if (pool[*slot] && !ts_parser_set_language(pool[*slot], G.language)) {
                ts_parser_delete(pool[*slot]);
                pool[*slot] = NULL;
            }
        }
        if (!pool[*slot]) return NULL;
        pool_busy[*slot] = 1;
        return pool[*slot];
    }
    /* more threads than parsers: one of its own for this parse */
    TSParser *parser = ts_parser_new();
    if (!parser) return NULL;
    if (!ts_parser_set_language(parser, G.language)) { ts_parser_delete(parser); return NULL; }
    return parser;
}

static void give_parser(int slot, TSParser *parser) { /* GIL held */
    if (slot >= 0) pool_busy[slot] = 0;
    else ts_parser_delete(parser);
}

static TSTree *parse_source(const unsigned char *src, uint32_t n) {
    int slot;
    TSParser *parser = take_parser(&slot);
    if (!parser) return NULL;
    TSTree *tree;
    if (release_gil) {
        Py_BEGIN_ALLOW_THREADS
        tree = ts_parser_parse_string(parser, NULL, (const char *)src, n);
        Py_END_ALLOW_THREADS
    } else {
        tree = ts_parser_parse_string(parser, NULL, (const char *)src, n);
    }
    give_parser(slot, parser);
    return tree;
}

/* The walk and the extractor, one translation unit (see each part's head comment). */
#include "pyextract_visit.c"
#include "pyextract_walk.c"
#include "pyextract_extract.c"

/* ------------------------------------------------------------------ module */
static PyObject *init(PyObject *self, PyObject *args) {
    PyObject *capsule;
    int threaded = 0;
    if (!PyArg_ParseTuple(args, "O|p", &capsule, &threaded)) return NULL;
    if (grammar_ready) Py_RETURN_NONE;
    const TSLanguage *lang = PyCapsule_GetPointer(capsule, "tree_sitter.Language");
    if (!lang) return NULL;
    uint32_t abi = ts_language_abi_version(lang);
    if (abi < TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION || abi > TREE_SITTER_LANGUAGE_VERSION) {
        PyErr_Format(PyExc_ValueError, "grammar ABI %u is outside this runtime's %d..%d", abi,
                     TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION, TREE_SITTER_LANGUAGE_VERSION);
        return NULL;
    }
    /* threaded: parses run without the GIL, so the runtime allocates with malloc (pymalloc
     * needs the GIL); else with pymalloc, as py-tree-sitter does (a parse ~15% faster) */
    if (threaded)
        ts_set_allocator(PyMem_RawMalloc, PyMem_RawCalloc, PyMem_RawRealloc, PyMem_RawFree);
    else
        ts_set_allocator(PyMem_Malloc, PyMem_Calloc, PyMem_Realloc, PyMem_Free);
    release_gil = threaded;
    TSParser *parser = ts_parser_new();
    if (!parser || !ts_parser_set_language(parser, lang)) {
        if (parser) ts_parser_delete(parser);
        PyErr_SetString(PyExc_RuntimeError, "tree-sitter refused the Python grammar");
        return NULL;
    }
    uint32_t count = ts_language_symbol_count(lang);
    uint8_t *table = calloc(count, 1);
    if (!table) { ts_parser_delete(parser); return PyErr_NoMemory(); }
    for (int i = 0; i < S_COUNT; i++) {
        TSSymbol s = ts_language_symbol_for_name(lang, SYMBOL_NAMES[i],
                                                 (uint32_t)strlen(SYMBOL_NAMES[i]), true);
        if (s == 0 || s >= count) {
            free(table);
            ts_parser_delete(parser);
            PyErr_Format(PyExc_ValueError, "the Python grammar has no node type %s",
                         SYMBOL_NAMES[i]);
            return NULL;
        }
        G.sym[i] = s;
        table[s] = (uint8_t)(i + 1);
    }
    /* every symbol whose public form is one of ours (aliases share the public id) */
    for (uint32_t s = 0; s < count; s++) {
        if (table[s]) continue;
        const char *nm = ts_language_symbol_name(lang, (TSSymbol)s);
        if (!nm || ts_language_symbol_type(lang, (TSSymbol)s) != TSSymbolTypeRegular) continue;
        for (int i = 0; i < S_COUNT; i++) {
            if (strcmp(nm, SYMBOL_NAMES[i]) == 0) { table[s] = (uint8_t)(i + 1); break; }
        }
    }
    for (int i = 0; i < F_COUNT; i++) {
        TSFieldId f = ts_language_field_id_for_name(lang, FIELD_NAMES[i],
                                                    (uint32_t)strlen(FIELD_NAMES[i]));
        if (f == 0) {
            free(table);
            ts_parser_delete(parser);
            PyErr_Format(PyExc_ValueError, "the Python grammar has no field %s", FIELD_NAMES[i]);
            return NULL;
        }
        G.field[i] = f;
    }
    PyObject *hashlib = PyImport_ImportModule("hashlib");
    G.sha256 = hashlib ? PyObject_GetAttrString(hashlib, "sha256") : NULL;
    Py_XDECREF(hashlib);
    G.str_hexdigest = PyUnicode_InternFromString("hexdigest");
    G.str_python = PyUnicode_InternFromString("python");
    if (!G.sha256 || !G.str_hexdigest || !G.str_python) {
        free(table);
        ts_parser_delete(parser);
        return NULL;
    }
    G.comma = ts_language_symbol_for_name(lang, ",", 1, false);
    G.comment = ts_language_symbol_for_name(lang, "comment", 7, true);
    G.subscript = ts_language_symbol_for_name(lang, "subscript", 9, true);
    PyObject *ud = PyImport_ImportModule("unicodedata");
    G.normalize = ud ? PyObject_GetAttrString(ud, "normalize") : NULL;
    Py_XDECREF(ud);
    if (!G.normalize || !G.comma || !G.comment || !G.subscript) {
        free(table);
        ts_parser_delete(parser);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "the Python grammar has no ','");
        return NULL;
    }
    G.language = lang;
    G.parser = parser;
    G.kind_of = table;
    G.symbol_count = count;
    G.str_call = PyUnicode_InternFromString("call");
    G.str_attribute = PyUnicode_InternFromString("attribute");
    G.str_name = PyUnicode_InternFromString("name");
    G.str_inherit = PyUnicode_InternFromString("inherit");
    G.str_class = PyUnicode_InternFromString("class");
    G.str_function = PyUnicode_InternFromString("function");
    G.str_method = PyUnicode_InternFromString("method");
    G.str_variable = PyUnicode_InternFromString("variable");
    if (!G.str_call || !G.str_attribute || !G.str_name || !G.str_inherit || !G.str_class ||
        !G.str_function || !G.str_method || !G.str_variable)
        return NULL;
    grammar_ready = 1;
    Py_RETURN_NONE;
}

/* parse only (the benchmark's breakdown): whether the tree has errors */
static PyObject *parse(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf)) return NULL;
    if (!grammar_ready) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_RuntimeError, "fleet.graph._native: call init(language) first");
        return NULL;
    }
    TSTree *tree = parse_source(buf.buf, (uint32_t)buf.len);
    PyBuffer_Release(&buf);
    if (!tree) {
        PyErr_SetString(PyExc_RuntimeError, "tree-sitter returned no tree");
        return NULL;
    }
    int err = ts_node_has_error(ts_tree_root_node(tree));
    ts_tree_delete(tree);
    return PyBool_FromLong(err);
}

PyObject *fleet_condense(PyObject *self, PyObject *args); /* condense.c */
PyObject *fleet_edge_rows(PyObject *self, PyObject *args); /* edges.c */
PyObject *fleet_edge_masks(PyObject *self, PyObject *args); /* edges.c */
PyObject *fleet_contains_masks(PyObject *self, PyObject *args); /* edges.c */
PyObject *fleet_csr(PyObject *self, PyObject *args); /* condense.c */
PyObject *fleet_mask_attrs(PyObject *self, PyObject *args); /* edges.c */
PyObject *fleet_ref_counts(PyObject *self, PyObject *args); /* edges.c */
PyObject *fleet_fanout(PyObject *self, PyObject *args);   /* fanout.c */
PyObject *fleet_lookup_scopes(PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs); /* fanout.c */
PyObject *fleet_walk(PyObject *self, PyObject *const *args,
                     Py_ssize_t nargs); /* fanout_walk.c, in fanout.c */
PyObject *fleet_walk_chain(PyObject *self, PyObject *const *args,
                           Py_ssize_t nargs); /* fanout_chain.c, in fanout.c */
PyObject *fleet_dotted_name(PyObject *self, PyObject *const *args,
                            Py_ssize_t nargs); /* fanout_chain.c, in fanout.c */
PyObject *fleet_mro(PyObject *self, PyObject *const *args,
                    Py_ssize_t nargs); /* fanout_mro.c, in fanout.c */
PyObject *fleet_enclosing_class(PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs); /* fanout_mro.c, in fanout.c */
PyObject *fleet_foreign_keys(PyObject *self, PyObject *args); /* keys.c */
PyObject *fleet_reintern(PyObject *self, PyObject *args); /* keys.c */
PyObject *fleet_call_tails(PyObject *self, PyObject *args); /* facts.c */
PyObject *fleet_fact_candidates(PyObject *self, PyObject *args); /* facts.c */
PyObject *fleet_self_attributes(PyObject *self, PyObject *args); /* facts.c */

static PyMethodDef METHODS[] = {
    {"condense", fleet_condense, METH_VARARGS,
     "condense(offsets, targets) -> (comp, rank): SCC number of each node and lock rank of "
     "each SCC, as uint32 bytes, for a graph in CSR form (see condense.c)."},
    {"edge_rows", fleet_edge_rows, METH_VARARGS,
     "edge_rows(succ, number, kinds) -> bytes: a snapshot's edges, (u, v, kind) as uint32 "
     "triples (edges.c)."},
    {"edge_masks", fleet_edge_masks, METH_VARARGS,
     "edge_masks(succ, scopes, kinds, targets, flags, bits, symbols, empty) -> None: "
     "_edges.add_refs over one file's FileRefs columns (edges.c)."},
    {"csr", fleet_csr, METH_VARARGS,
     "csr(succ, nodes) -> (offsets, targets): condense's input, uint32 bytes (condense.c)."},
    {"contains_masks", fleet_contains_masks, METH_VARARGS,
     "contains_masks(succ, symbols, empty, bit) -> None: _edges._contains (edges.c)."},
    {"mask_attrs", fleet_mask_attrs, METH_VARARGS,
     "mask_attrs(succ, attrs) -> None: each edge's kinds mask -> attrs[mask] (edges.c)."},
    {"ref_counts", fleet_ref_counts, METH_VARARGS,
     "ref_counts(targets, flags) -> (references, resolved, exact, internal): FileRefs.counts "
     "over the columns, without the extra references (edges.c)."},
    {"fanout", fleet_fanout, METH_VARARGS,
     "fanout(scopes, names, kinds, kind_names, local, python, classes, enclosing, cache, miss, "
     "fd, rawref, ctx=None) "
     "-> (targets, flags): the resolver's per-reference loop over RawRefs columns (fanout.c); "
     "with ctx, the common cases of its misses in C too (fanout_miss.c)."},
    {"lookup_scopes", (PyCFunction)(void (*)(void))fleet_lookup_scopes, METH_FASTCALL,
     "lookup_scopes(head, scope, symbols, deps, scoped, params, local_types) -> str | None: "
     "Resolver._lookup_scopes in C (fanout.c); NotImplemented at a Go module."},
    {"walk", (PyCFunction)(void (*)(void))fleet_walk, METH_FASTCALL,
     "walk(resolver, start, parts, depth) -> (symbol, exact): Members._walk_py's loop in C "
     "(fanout_walk.c)."},
    {"walk_chain", (PyCFunction)(void (*)(void))fleet_walk_chain, METH_FASTCALL,
     "walk_chain(resolver, start, rest) -> (symbol, exact): Members._walk_chain in C, memoised "
     "as _chain memoises (fanout_chain.c)."},
    {"mro", (PyCFunction)(void (*)(void))fleet_mro, METH_FASTCALL,
     "mro(resolver, cls) -> list: Members._mro with _compute_mro and _class_bases in C, "
     "_compute_bases called back (fanout_mro.c)."},
    {"enclosing_class", (PyCFunction)(void (*)(void))fleet_enclosing_class, METH_FASTCALL,
     "enclosing_class(symbols, scope) -> str | None: Resolver._enclosing_class in C "
     "(fanout_mro.c)."},
    {"dotted_name", (PyCFunction)(void (*)(void))fleet_dotted_name, METH_FASTCALL,
     "dotted_name(resolver, name) -> (symbol, exact): Members._dotted_name in C, memoised "
     "as _chain memoises (fanout_chain.c)."},
    {"foreign_keys", fleet_foreign_keys, METH_VARARGS,
     "foreign_keys(keys, path) -> frozenset: _resolve._foreign_keys in C (keys.c)."},
    {"reintern", fleet_reintern, METH_VARARGS,
     "reintern(values, symbols, canon) -> None: a list's str replaced in place by the symbol's "
     "id string, else canon.setdefault(t, t) (keys.c)."},
    {"self_attributes", fleet_self_attributes, METH_VARARGS,
     "self_attributes(names, kinds, code) -> [i, ...]: add_facts' self.x references (facts.c)."},
    {"fact_candidates", fleet_fact_candidates, METH_VARARGS,
     "fact_candidates(src, symbols) -> [i, ...]: the symbols add_facts's loop can find a fact "
     "on (facts.c): a filter, the loop keeps its tests."},
    {"call_tails", fleet_call_tails, METH_VARARGS,
     "call_tails(src, kinds, ends, code) -> [(i, args_start, args_end, rest, called, end)]: "
     "the calls followed by (args).name, as _facts._CALL_TAIL matches them (facts.c)."},
    {"parse", parse, METH_VARARGS, "parse(src) -> has_error: parse only (for benchmarks)."},
    {"init", init, METH_VARARGS,
     "init(language_capsule, threaded=False): load the Python grammar (once); threaded: parse "
     "without the GIL (the runtime then allocates with malloc)."},
    {"extract", extract, METH_VARARGS,
     "extract(src, path, module_id, symbol_type, want_params) -> (has_error, symbols, spans, "
     "fixture_params, refs, params, local_types, imports); refs: (scopes, names, kind bytes, "
     "lines, cols, starts, ends as native uint32 bytes), RawRefs' columns"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "fleet.graph._native",
    "Python symbol extraction in one C walk over the tree-sitter tree (see pyextract.c).", -1,
    METHODS,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&MODULE); }
