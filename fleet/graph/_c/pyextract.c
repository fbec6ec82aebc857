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
 * become Python objects (RawRef tuples are built directly).
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
    TSSymbol comma, comment;
    PyObject *sha256, *str_hexdigest, *str_python;
    PyObject *normalize; /* unicodedata.normalize */
} Grammar;

static Grammar G;
static int grammar_ready = 0;

/* ------------------------------------------------------------------ parsing without the GIL */
/* With init(..., threaded=True) the parse runs with the GIL released, so threads extract files
 * in parallel (the walk after it builds Python objects and holds the GIL). Each parse takes a free parser from a small
 * pool; the pool's flags are only touched with the GIL held, which serialises them. */
#define PARSERS 8
static TSParser *pool[PARSERS];
static int release_gil = 0; /* set by init(..., threaded=True) */
static int pool_busy[PARSERS];

static TSTree *parse_source(const unsigned char *src, uint32_t n) {
    int slot = -1;
    TSParser *parser = NULL;
    for (int i = 0; i < PARSERS; i++) {
        if (!pool_busy[i]) { slot = i; break; }
    }
    if (slot >= 0) {
        if (!pool[slot]) {
            pool[slot] = ts_parser_new();
            if (pool[slot] && !ts_parser_set_language(pool[slot], G.language)) {
                ts_parser_delete(pool[slot]);
                pool[slot] = NULL;
            }
        }
        parser = pool[slot];
        if (!parser) return NULL;
        pool_busy[slot] = 1;
    } else { /* more threads than parsers: one of its own for this parse */
        parser = ts_parser_new();
        if (!parser) return NULL;
        if (!ts_parser_set_language(parser, G.language)) { ts_parser_delete(parser); return NULL; }
    }
    TSTree *tree;
    if (release_gil) {
        Py_BEGIN_ALLOW_THREADS
        tree = ts_parser_parse_string(parser, NULL, (const char *)src, n);
        Py_END_ALLOW_THREADS
    } else {
        tree = ts_parser_parse_string(parser, NULL, (const char *)src, n);
    }
    if (slot >= 0) pool_busy[slot] = 0;
    else ts_parser_delete(parser);
    return tree;
}

/* ------------------------------------------------------------------ buffers */
typedef struct {
    uint32_t start, end;  /* the node (a local's span for a type item) */
    uint32_t seq;
    uint32_t row, col;
    uint32_t tstart, tend; /* a type item's own text */
    uint8_t prio;          /* 0 inherit, 1 call, 2 attribute, 3 name, 9 local, 10 type */
} Item;

typedef struct {
    uint32_t wstart, wend; /* whole (with decorators) */
    uint32_t seq;
    uint32_t nstart, nend; /* the definition node */
    uint32_t name_start, name_end;
    uint32_t first_row, end_row;
    uint32_t sig_end_raw;
    uint8_t kind;          /* 0 class, 1 function, 2 variable */
    TSNode node;
} Def;

typedef struct {
    Item *items;
    size_t n_items, cap_items;
    Def *defs;
    size_t n_defs, cap_defs;
    uint32_t seq;
} Out;

static int push_item(Out *o, Item it) {
    if (o->n_items == o->cap_items) {
        size_t cap = o->cap_items ? o->cap_items * 2 : 1024;
        Item *p = realloc(o->items, cap * sizeof(Item));
        if (!p) return -1;
        o->items = p;
        o->cap_items = cap;
    }
    it.seq = o->seq++;
    o->items[o->n_items++] = it;
    return 0;
}

static int push_def(Out *o, Def d) {
    if (o->n_defs == o->cap_defs) {
        size_t cap = o->cap_defs ? o->cap_defs * 2 : 128;
        Def *p = realloc(o->defs, cap * sizeof(Def));
        if (!p) return -1;
        o->defs = p;
        o->cap_defs = cap;
    }
    d.seq = o->seq++;
    o->defs[o->n_defs++] = d;
    return 0;
}

/* ------------------------------------------------------------------ byte scanners */
static inline int is_word(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
static inline int is_head(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static inline int is_space(unsigned char c) { /* Python's bytes \s */
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
static inline int is_blank(unsigned char c) { return c == ' ' || c == '\t'; }

/* `[A-Za-z_]\w*` at i: the end, or -1 */
static inline long ident_at(const unsigned char *s, size_t n, size_t i) {
    if (i >= n || !is_head(s[i])) return -1;
    i++;
    while (i < n && is_word(s[i])) i++;
    return (long)i;
}

/* fullmatch of `[A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*` over s[a:b] */
static int chain_full(const unsigned char *s, size_t a, size_t b) {
    long i = ident_at(s, b, a);
    if (i < 0) return 0;
    while ((size_t)i < b) {
        size_t j = (size_t)i;
        while (j < b && is_space(s[j])) j++;
        if (j >= b || s[j] != '.') return 0;
        j++;
        while (j < b && is_space(s[j])) j++;
        long k = ident_at(s, b, j);
        if (k < 0) return 0;
        i = k;
    }
    return 1;
}

/* `(?:[ \t]*\.[ \t]*[A-Za-z_]\w*)*` at i: its end */
static size_t tail_at(const unsigned char *s, size_t n, size_t i) {
    for (;;) {
        size_t j = i;
        while (j < n && is_blank(s[j])) j++;
        if (j >= n || s[j] != '.') return i;
        j++;
        while (j < n && is_blank(s[j])) j++;
        long k = ident_at(s, n, j);
        if (k < 0) return i;
        i = (size_t)k;
    }
}

/* `[ \t]*\(` at i */
static int call_at(const unsigned char *s, size_t n, size_t i) {
    while (i < n && is_blank(s[i])) i++;
    return i < n && s[i] == '(';
}

/* text s[a:b] as str; with every \s removed when it holds a newline or a space */
static PyObject *chain_text(const unsigned char *s, size_t a, size_t b) {
    int squeeze = 0;
    for (size_t i = a; i < b; i++) {
        if (s[i] == '\n' || s[i] == ' ') { squeeze = 1; break; }
    }
    if (!squeeze) return PyUnicode_DecodeASCII((const char *)s + a, (Py_ssize_t)(b - a), "strict");
    char stack_buf[256];
    char *buf = (b - a) <= sizeof(stack_buf) ? stack_buf : malloc(b - a);
    if (!buf) return PyErr_NoMemory();
    size_t m = 0;
    for (size_t i = a; i < b; i++) {
        if (!is_space(s[i])) buf[m++] = (char)s[i];
    }
    PyObject *r = PyUnicode_DecodeASCII(buf, (Py_ssize_t)m, "strict");
    if (buf != stack_buf) free(buf);
    return r;
}

static PyObject *utf8_text(const unsigned char *s, uint32_t a, uint32_t b) {
    return PyUnicode_DecodeUTF8((const char *)s + a, (Py_ssize_t)(b - a), "replace");
}

static PyObject *node_text(const unsigned char *s, TSNode n) {
    return utf8_text(s, ts_node_start_byte(n), ts_node_end_byte(n));
}

/* ------------------------------------------------------------------ the walk */
#define MAX_DEPTH_GROW 256

typedef struct {
    TSNode node;
    uint8_t kind;       /* index in SYMBOL_NAMES + 1, 0 when uninteresting */
    TSFieldId field;    /* this node's field in its parent */
    uint32_t named_idx; /* this node's index among the parent's named children */
    uint32_t named_seen;
} Frame;

static inline uint8_t kind_of(TSSymbol s) {
    return s < G.symbol_count ? G.kind_of[s] : 0;
}
#define K(x) ((uint8_t)((x) + 1))

static inline TSNode field_child(TSNode n, int f) {
    return ts_node_child_by_field_id(n, G.field[f]);
}

static inline uint8_t node_kind(TSNode n) {
    return ts_node_is_null(n) ? 0 : kind_of(ts_node_symbol(n));
}

static int add_ref(Out *o, TSNode n, uint8_t prio) {
    TSPoint p = ts_node_start_point(n);
    Item it = {ts_node_start_byte(n), ts_node_end_byte(n), 0, p.row, p.column, 0, 0, prio};
    return push_item(o, it);
}

static int add_local(Out *o, TSNode n) {
    Item it = {ts_node_start_byte(n), ts_node_end_byte(n), 0, 0, 0, 0, 0, 9};
    return push_item(o, it);
}

/* `type: (type [(identifier) (attribute)] @local.type)` of `owner`, for the local `n` */
static int add_annotation_type(Out *o, TSNode owner, TSNode n) {
    TSNode type = field_child(owner, F_TYPE);
    if (ts_node_is_null(type) || node_kind(type) != K(S_TYPE)) return 0;
    uint32_t count = ts_node_named_child_count(type);
    for (uint32_t i = 0; i < count; i++) {
        TSNode c = ts_node_named_child(type, i);
        uint8_t k = node_kind(c);
        if (k == K(S_IDENTIFIER) || k == K(S_ATTRIBUTE)) {
            Item it = {ts_node_start_byte(n), ts_node_end_byte(n), 0, 0, 0,
                       ts_node_start_byte(c), ts_node_end_byte(c), 10};
            if (push_item(o, it) < 0) return -1;
        }
    }
    return 0;
}

static int add_def(Out *o, TSNode n, TSNode whole, TSNode name, TSNode body, uint8_t kind) {
    Def d;
    memset(&d, 0, sizeof d);
    d.wstart = ts_node_start_byte(whole);
    d.wend = ts_node_end_byte(whole);
    d.nstart = ts_node_start_byte(n);
    d.nend = ts_node_end_byte(n);
    d.name_start = ts_node_start_byte(name);
    d.name_end = ts_node_end_byte(name);
    d.first_row = ts_node_start_point(whole).row + 1;
    d.end_row = ts_node_end_point(n).row + 1;
    d.sig_end_raw = ts_node_is_null(body) ? d.nend : ts_node_start_byte(body);
    d.kind = kind;
    d.node = n;
    return push_def(o, d);
}

/* `(expression_statement (assignment left: (identifier) @name)) @definition.variable` */
static int variable_def(Out *o, TSNode stmt) {
    uint32_t count = ts_node_named_child_count(stmt);
    for (uint32_t i = 0; i < count; i++) {
        TSNode c = ts_node_named_child(stmt, i);
        if (node_kind(c) != K(S_ASSIGNMENT)) continue;
        TSNode left = field_child(c, F_LEFT);
        if (node_kind(left) == K(S_TUPLE_PATTERN)) {
            /* `(name): int = 1` binds `name`; `(name,) = ...` is a one-element tuple */
            int comma = 0, names = 0;
            TSNode only = left;
            uint32_t all = ts_node_child_count(left);
            for (uint32_t j = 0; j < all && !comma; j++) {
                TSNode t = ts_node_child(left, j);
                if (!ts_node_is_named(t)) {
                    comma = ts_node_symbol(t) == G.comma;
                } else if (ts_node_symbol(t) != G.comment) {
                    names++;
                    only = t;
                }
            }
            if (comma || names != 1) continue;
            left = only;
        }
        if (node_kind(left) == K(S_IDENTIFIER)) {
            TSNode none = {{0, 0, 0, 0}, NULL, NULL};
            if (add_def(o, stmt, stmt, left, none, 2) < 0) return -1;
        }
    }
    return 0;
}

static int visit(Out *o, Frame *st, int depth, const unsigned char *src) {
    Frame *f = &st[depth];
    uint8_t k = f->kind;
    if (!k) return 0;
    TSNode n = f->node;
    uint8_t pk = depth >= 1 ? st[depth - 1].kind : 0;
    TSFieldId fld = f->field;
    switch (k - 1) {
    case S_CLASS_DEF:
    case S_FUNCTION_DEF: {
        TSNode name = field_child(n, F_NAME);
        TSNode body = field_child(n, F_BODY);
        if (node_kind(name) != K(S_IDENTIFIER) || node_kind(body) != K(S_BLOCK)) return 0;
        TSNode whole = pk == K(S_DECORATED_DEF) ? st[depth - 1].node : n;
        if (k - 1 == S_CLASS_DEF) {
            TSNode bases = field_child(n, F_SUPERCLASSES);
            if (!ts_node_is_null(bases) && node_kind(bases) != K(S_ARGUMENT_LIST)) return 0;
            if (add_def(o, n, whole, name, body, 0) < 0) return -1;
            if (!ts_node_is_null(bases)) {
                uint32_t count = ts_node_named_child_count(bases);
                for (uint32_t i = 0; i < count; i++) {
                    TSNode b = ts_node_named_child(bases, i);
                    uint8_t bk = node_kind(b);
                    if ((bk == K(S_IDENTIFIER) || bk == K(S_ATTRIBUTE)) && add_ref(o, b, 0) < 0)
                        return -1;
                }
            }
            return 0;
        }
        return add_def(o, n, whole, name, body, 1);
    }
    case S_EXPR_STMT:
        if (pk == K(S_MODULE)) return variable_def(o, n);
        if (pk == K(S_BLOCK) && depth >= 2 && st[depth - 2].kind == K(S_CLASS_DEF) &&
            st[depth - 1].field == G.field[F_BODY])
            return variable_def(o, n);
        return 0;
    case S_ATTRIBUTE:
        if (node_kind(field_child(n, F_OBJECT)) == K(S_IDENTIFIER)) return add_ref(o, n, 2);
        return 0;
    case S_IDENTIFIER:
        break;
    default:
        return 0;
    }
    /* an identifier: by its parent */
    if (!pk) return 0;
    switch (pk - 1) {
    case S_CALL:
        return fld == G.field[F_FUNCTION] ? add_ref(o, n, 1) : 0;
    case S_DECORATOR: case S_ARGUMENT_LIST: case S_TYPE: case S_RETURN: case S_RAISE:
    case S_EXCEPT: case S_LIST: case S_TUPLE: case S_SET:
        return add_ref(o, n, 3);
    case S_KEYWORD_ARGUMENT: case S_PAIR:
        return fld == G.field[F_VALUE] ? add_ref(o, n, 3) : 0;
    case S_AS_PATTERN:
        if (f->named_idx == 0 && depth >= 2 && st[depth - 2].kind == K(S_EXCEPT))
            return add_ref(o, n, 3);
        return 0;
    case S_DEFAULT_PARAM:
        if (fld == G.field[F_VALUE]) return add_ref(o, n, 3);
        if (fld == G.field[F_NAME]) return add_local(o, n);
        return 0;
    case S_TYPED_DEFAULT_PARAM:
        if (fld == G.field[F_VALUE]) return add_ref(o, n, 3);
        if (fld == G.field[F_NAME]) {
            if (add_local(o, n) < 0) return -1;
            return add_annotation_type(o, st[depth - 1].node, n);
        }
        return 0;
    case S_ASSIGNMENT:
        if (fld == G.field[F_RIGHT]) return add_ref(o, n, 3);
        if (fld == G.field[F_LEFT]) {
            TSNode a = st[depth - 1].node;
            if (add_local(o, n) < 0) return -1;
            if (add_annotation_type(o, a, n) < 0) return -1;
            TSNode right = field_child(a, F_RIGHT);
            if (node_kind(right) == K(S_CALL)) {
                TSNode fn = field_child(right, F_FUNCTION);
                uint8_t fk = node_kind(fn);
                if (fk == K(S_IDENTIFIER) || fk == K(S_ATTRIBUTE)) {
                    Item it = {ts_node_start_byte(n), ts_node_end_byte(n), 0, 0, 0,
                               ts_node_start_byte(fn), ts_node_end_byte(fn), 10};
                    return push_item(o, it);
                }
            }
        }
        return 0;
    case S_PARAMETERS: case S_LAMBDA_PARAMETERS: case S_LIST_SPLAT_PAT: case S_DICT_SPLAT_PAT:
    case S_AS_PATTERN_TARGET:
        return add_local(o, n);
    case S_TYPED_PARAM:
        if (f->named_idx != 0) return 0;
        if (add_local(o, n) < 0) return -1;
        return add_annotation_type(o, st[depth - 1].node, n);
    case S_AUG_ASSIGNMENT:
        return fld == G.field[F_LEFT] ? add_local(o, n) : 0;
    case S_FOR: case S_FOR_IN:
        return fld == G.field[F_LEFT] ? add_local(o, n) : 0;
    case S_NAMED_EXPR:
        return fld == G.field[F_NAME] ? add_local(o, n) : 0;
    case S_PATTERN_LIST:
    case S_TUPLE_PATTERN:
        if (depth >= 2 && st[depth - 1].field == G.field[F_LEFT]) {
            uint8_t gk = st[depth - 2].kind;
            if (gk == K(S_ASSIGNMENT) || (pk == K(S_PATTERN_LIST) &&
                                          (gk == K(S_FOR) || gk == K(S_FOR_IN))))
                return add_local(o, n);
        }
        return 0;
    default:
        return 0;
    }
}

/* One level of the walk: the children of `parent` (a visible node, or a hidden node inside one,
 * whose children count as its visible ancestor's), as ts_tree_cursor iterates them. */
typedef struct {
    const Subtree *children;
    uint32_t count, index, structural;
    Length pos;                /* start of children[index] */
    const TSSymbol *aliases;   /* the parent production's alias sequence */
    const TSFieldMapEntry *fmap, *fmap_end;
    TSFieldId inherited;       /* a hidden parent's own field, for children without one */
    int vdepth;                /* the visible frame these children belong to */
} Level;

static inline TSFieldId field_at(const Level *lv, uint32_t structural) {
    for (const TSFieldMapEntry *m = lv->fmap; m < lv->fmap_end; m++) {
        if (!m->inherited && m->child_index == structural) return m->field_id;
    }
    return 0;
}

static inline void open_level(Level *lv, Subtree parent, Length pos, TSFieldId inherited,
                              int vdepth) {
    uint16_t production = ts_subtree_production_id(parent);
    lv->count = ts_subtree_child_count(parent);
    lv->children = lv->count ? ts_subtree_children(parent) : NULL;
    lv->index = 0;
    lv->structural = 0;
    lv->pos = pos;
    lv->aliases = ts_language_alias_sequence(G.language, production);
    ts_language_field_map(G.language, production, &lv->fmap, &lv->fmap_end);
    lv->inherited = inherited;
    lv->vdepth = vdepth;
}

/* Collect definitions, items and import statements in document order: a depth-first walk over
 * the tree's subtrees, seeing the nodes, aliases and fields ts_tree_cursor shows, without the
 * cursor's bookkeeping (its navigation was a third of the walk). */
static int walk(Out *o, const TSTree *tree, TSNode root, const unsigned char *src,
                PyObject *imports_out, int (*on_import)(TSNode, const unsigned char *, PyObject *)) {
    size_t vcap = MAX_DEPTH_GROW, lcap = MAX_DEPTH_GROW;
    Frame *st = malloc(vcap * sizeof(Frame));
    Level *lv = malloc(lcap * sizeof(Level));
    if (!st || !lv) {
        free(st);
        free(lv);
        return -1;
    }
    int rc = 0;
    st[0].node = root;
    st[0].kind = node_kind(root);
    st[0].field = 0;
    st[0].named_idx = 0;
    st[0].named_seen = 0;
    if (visit(o, st, 0, src) < 0) { rc = -1; goto done; }
    const Subtree *root_tree = (const Subtree *)root.id;
    size_t top = 0;
    Length root_pos = {ts_node_start_byte(root), ts_node_start_point(root)};
    open_level(&lv[0], *root_tree, root_pos, 0, 0);
    for (;;) {
        Level *L = &lv[top];
        if (L->index >= L->count) {
            if (top == 0) break;
            top--;
            continue;
        }
        const Subtree *child = &L->children[L->index];
        Subtree c = *child;
        Length pos = L->pos;
        bool extra = ts_subtree_extra(c);
        TSSymbol alias = 0;
        uint32_t structural = L->structural;
        if (!extra) {
            if (L->aliases) alias = L->aliases[structural];
            L->structural++;
        }
        bool visible = ts_subtree_visible(c) || alias;
        /* advance the level past this child */
        L->index++;
        L->pos = length_add(pos, ts_subtree_size(c));
        if (L->index < L->count) L->pos = length_add(L->pos, ts_subtree_padding(L->children[L->index]));
        TSFieldId field = 0;
        if (!extra) {
            field = field_at(L, structural);
            if (!field) field = L->inherited;
        }
        uint32_t nchildren = ts_subtree_child_count(c);
        if (visible) {
            int depth = L->vdepth + 1;
            if ((size_t)depth >= vcap) {
                vcap *= 2;
                Frame *p = realloc(st, vcap * sizeof(Frame));
                if (!p) { rc = -1; goto done; }
                st = p;
            }
            Frame *nf = &st[depth];
            nf->node = ts_node_new(tree, child, pos, alias);
            nf->named_seen = 0;
            bool named = alias ? ts_language_symbol_metadata(G.language, alias).named
                               : ts_subtree_named(c);
            if (named) {
                TSSymbol sym = ts_language_public_symbol(G.language, alias ? alias : ts_subtree_symbol(c));
                nf->kind = kind_of(sym);
                nf->named_idx = st[depth - 1].named_seen++;
                nf->field = field;
            } else {
                nf->kind = 0;
                nf->named_idx = UINT32_MAX;
                nf->field = 0;
            }
            if (nf->kind) {
                if (visit(o, st, depth, src) < 0) { rc = -1; goto done; }
                if ((nf->kind == K(S_IMPORT) || nf->kind == K(S_IMPORT_FROM)) &&
                    on_import(nf->node, src, imports_out) < 0) {
                    rc = -1;
                    goto done;
                }
            }
            if (!nchildren) continue;
            if (top + 1 >= lcap) {
                lcap *= 2;
                Level *p = realloc(lv, lcap * sizeof(Level));
                if (!p) { rc = -1; goto done; }
                lv = p;
            }
            open_level(&lv[++top], c, pos, 0, depth);
        } else if (nchildren) {
            /* a hidden node: its children belong to the same visible parent */
            if (top + 1 >= lcap) {
                lcap *= 2;
                Level *p = realloc(lv, lcap * sizeof(Level));
                if (!p) { rc = -1; goto done; }
                lv = p;
            }
            int vdepth = lv[top].vdepth;
            open_level(&lv[top + 1], c, pos, extra ? 0 : field, vdepth);
            top++;
        }
    }
done:
    free(st);
    free(lv);
    return rc;
}

/* ------------------------------------------------------------------ imports */
static PyObject *position(TSNode n) {
    TSPoint p = ts_node_start_point(n);
    return Py_BuildValue("(IIII)", ts_node_start_byte(n), ts_node_end_byte(n), p.row, p.column);
}

/* ("d", dotted, None, pos) for a dotted_name, ("a", name, alias, pos) for an aliased_import
 * with both parts; NULL with no error set when the child is neither */
static PyObject *import_name(TSNode c, const unsigned char *src) {
    uint8_t k = node_kind(c);
    if (k == K(S_DOTTED_NAME)) {
        PyObject *t = node_text(src, c), *pos = position(c);
        PyObject *r = (t && pos) ? Py_BuildValue("(sOOO)", "d", t, Py_None, pos) : NULL;
        Py_XDECREF(t);
        Py_XDECREF(pos);
        return r;
    }
    if (k == K(S_ALIASED_IMPORT)) {
        TSNode name = field_child(c, F_NAME), alias = field_child(c, F_ALIAS);
        if (ts_node_is_null(name) || ts_node_is_null(alias)) return NULL;
        PyObject *t = node_text(src, name), *a = node_text(src, alias), *pos = position(c);
        PyObject *r = (t && a && pos) ? Py_BuildValue("(sOOO)", "a", t, a, pos) : NULL;
        Py_XDECREF(t);
        Py_XDECREF(a);
        Py_XDECREF(pos);
        return r;
    }
    return NULL;
}

static int append_new(PyObject *list, PyObject *item) {
    if (!item) return PyErr_Occurred() ? -1 : 0;
    int rc = PyList_Append(list, item);
    Py_DECREF(item);
    return rc;
}

/* ("import", [names]) or ("from", dots or -1, module text, [names], [wildcard positions]) */
static int on_import(TSNode n, const unsigned char *src, PyObject *out) {
    PyObject *names = PyList_New(0);
    if (!names) return -1;
    PyObject *desc = NULL;
    if (node_kind(n) == K(S_IMPORT)) {
        uint32_t count = ts_node_named_child_count(n);
        for (uint32_t i = 0; i < count; i++) {
            if (append_new(names, import_name(ts_node_named_child(n, i), src)) < 0) goto fail;
        }
        desc = Py_BuildValue("(sO)", "import", names);
    } else {
        TSNode module = field_child(n, F_MODULE_NAME);
        if (ts_node_is_null(module)) {
            Py_DECREF(names);
            return 0;
        }
        long dots = -1;
        PyObject *text = NULL;
        if (node_kind(module) == K(S_RELATIVE_IMPORT)) {
            dots = 0;
            uint32_t count = ts_node_named_child_count(module);
            for (uint32_t i = 0; i < count; i++) {
                TSNode part = ts_node_named_child(module, i);
                uint8_t pk = node_kind(part);
                if (pk == K(S_IMPORT_PREFIX)) {
                    dots = 0;
                    for (uint32_t b = ts_node_start_byte(part); b < ts_node_end_byte(part); b++)
                        dots += src[b] == '.';
                } else if (pk == K(S_DOTTED_NAME)) {
                    Py_XDECREF(text);
                    text = node_text(src, part);
                    if (!text) goto fail;
                }
            }
            if (!text) text = PyUnicode_FromString("");
        } else {
            text = node_text(src, module);
        }
        if (!text) goto fail;
        PyObject *stars = PyList_New(0);
        if (!stars) { Py_DECREF(text); goto fail; }
        uint32_t count = ts_node_child_count(n);
        for (uint32_t i = 0; i < count; i++) {
            TSNode c = ts_node_child(n, i);
            const char *fname = ts_node_field_name_for_child(n, i);
            if (fname && strcmp(fname, "name") == 0) {
                if (append_new(names, import_name(c, src)) < 0) {
                    Py_DECREF(text); Py_DECREF(stars); goto fail;
                }
            }
        }
        uint32_t ncount = ts_node_named_child_count(n);
        for (uint32_t i = 0; i < ncount; i++) {
            TSNode c = ts_node_named_child(n, i);
            if (node_kind(c) == K(S_WILDCARD_IMPORT) && append_new(stars, position(c)) < 0) {
                Py_DECREF(text); Py_DECREF(stars); goto fail;
            }
        }
        desc = Py_BuildValue("(slOOO)", "from", dots, text, names, stars);
        Py_DECREF(text);
        Py_DECREF(stars);
    }
    Py_DECREF(names);
    return append_new(out, desc);
fail:
    Py_DECREF(names);
    return -1;
}

/* ------------------------------------------------------------------ results */
static int cmp_def(const void *a, const void *b) {
    const Def *x = a, *y = b;
    if (x->wstart != y->wstart) return x->wstart < y->wstart ? -1 : 1;
    if (x->wend != y->wend) return x->wend > y->wend ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

static int cmp_item(const void *a, const void *b) {
    const Item *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->end != y->end) return x->end > y->end ? -1 : 1;
    if (x->prio != y->prio) return x->prio < y->prio ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* `_parameter_names`: the plain parameter names of a function, without self/cls */
static PyObject *parameter_names(TSNode fn, const unsigned char *src) {
    TSNode params = field_child(fn, F_PARAMETERS);
    PyObject *names = PyList_New(0);
    if (!names) return NULL;
    if (!ts_node_is_null(params)) {
        uint32_t count = ts_node_named_child_count(params);
        for (uint32_t i = 0; i < count; i++) {
            TSNode c = ts_node_named_child(params, i);
            uint8_t ck = node_kind(c);
            TSNode ident = ck == K(S_IDENTIFIER) ? c : field_child(c, F_NAME);
            if (ts_node_is_null(ident) && ck == K(S_TYPED_PARAM) && ts_node_named_child_count(c))
                ident = ts_node_named_child(c, 0);
            if (ts_node_is_null(ident) || node_kind(ident) != K(S_IDENTIFIER)) continue;
            uint32_t a = ts_node_start_byte(ident), b = ts_node_end_byte(ident);
            if ((b - a == 4 && memcmp(src + a, "self", 4) == 0) ||
                (b - a == 3 && memcmp(src + a, "cls", 3) == 0))
                continue;
            if (append_new(names, utf8_text(src, a, b)) < 0) { Py_DECREF(names); return NULL; }
        }
    }
    PyObject *t = PyList_AsTuple(names);
    Py_DECREF(names);
    return t;
}

static PyObject *new_rawref(PyTypeObject *type, PyObject *scope, PyObject *text, PyObject *kind,
                            uint32_t line, uint32_t col, uint32_t start, uint32_t end) {
    PyObject *t = type->tp_alloc(type, 7);
    if (!t) return NULL;
    PyObject *v[5] = {PyLong_FromUnsignedLong(line), PyLong_FromUnsignedLong(col),
                      PyLong_FromUnsignedLong(start), PyLong_FromUnsignedLong(end), NULL};
    if (!v[0] || !v[1] || !v[2] || !v[3]) {
        for (int i = 0; i < 4; i++) Py_XDECREF(v[i]);
        Py_DECREF(t);
        Py_DECREF(text);
        return NULL;
    }
    Py_INCREF(scope);
    Py_INCREF(kind);
    PyTuple_SET_ITEM(t, 0, scope);
    PyTuple_SET_ITEM(t, 1, text);
    PyTuple_SET_ITEM(t, 2, kind);
    for (int i = 0; i < 4; i++) PyTuple_SET_ITEM(t, 3 + i, v[i]);
    return t;
}

/* sha256 of src[a:b], the first 16 hex digits (hashlib: OpenSSL, SHA extensions when present) */
static PyObject *body_hash(const unsigned char *src, uint32_t a, uint32_t b) {
    PyObject *mv = PyMemoryView_FromMemory((char *)src + a, (Py_ssize_t)(b - a), PyBUF_READ);
    if (!mv) return NULL;
    PyObject *h = PyObject_CallOneArg(G.sha256, mv);
    Py_DECREF(mv);
    if (!h) return NULL;
    PyObject *hex = PyObject_CallMethodNoArgs(h, G.str_hexdigest);
    Py_DECREF(h);
    if (!hex) return NULL;
    PyObject *r = PyUnicode_Substring(hex, 0, 16);
    Py_DECREF(hex);
    return r;
}

/* a Symbol named tuple (its fields in order); the references passed in are borrowed */
static PyObject *new_symbol(PyTypeObject *type, PyObject *id, PyObject *path, PyObject *qual,
                            PyObject *name, PyObject *kind, const uint32_t nums[6],
                            PyObject *hash, PyObject *parent) {
    PyObject *t = type->tp_alloc(type, 14);
    if (!t) return NULL;
    PyObject *objs[6] = {id, path, qual, name, kind, G.str_python};
    for (int i = 0; i < 6; i++) {
        Py_INCREF(objs[i]);
        PyTuple_SET_ITEM(t, i, objs[i]);
    }
    for (int i = 0; i < 6; i++) {
        PyObject *v = PyLong_FromUnsignedLong(nums[i]);
        if (!v) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, 6 + i, v);
    }
    Py_INCREF(hash);
    Py_INCREF(parent);
    PyTuple_SET_ITEM(t, 12, hash);
    PyTuple_SET_ITEM(t, 13, parent);
    return t;
}

typedef struct { uint32_t end; PyObject *id; } Scope;

static PyObject *extract(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *path, *module_id;
    PyTypeObject *rawref, *symbol_type;
    int want_params;
    if (!PyArg_ParseTuple(args, "y*UUO!O!p", &buf, &path, &module_id, &PyType_Type, &rawref,
                          &PyType_Type, &symbol_type, &want_params))
        return NULL;
    if (!grammar_ready) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_RuntimeError, "fleet.graph._native: call init(language) first");
        return NULL;
    }
    if (buf.len > UINT32_MAX / 2) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_ValueError, "source too large for the native extractor");
        return NULL;
    }
    const unsigned char *src = buf.buf;
    size_t n = (size_t)buf.len;
    PyObject *result = NULL, *defs_out = NULL, *symbols_out = NULL, *fixtures = NULL,
             *refs_out = NULL, *params = NULL,
             *types = NULL, *imports = NULL, **ids = NULL, **quals = NULL;
    uint8_t *kinds = NULL;
    Scope *scopes = NULL;
    PyObject *local_name = NULL;
    Out o;
    memset(&o, 0, sizeof o);
    TSTree *tree = parse_source(src, (uint32_t)n);
    if (!tree) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_RuntimeError, "tree-sitter returned no tree");
        return NULL;
    }
    TSNode root = ts_tree_root_node(tree);
    int has_error = ts_node_has_error(root);
    imports = PyList_New(0);
    if (!imports || walk(&o, tree, root, src, imports, on_import) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto out;
    }

    /* definitions -> qualified names, parents, kinds; spans for the scope sweep */
    qsort(o.defs, o.n_defs, sizeof(Def), cmp_def);
    defs_out = PyList_New((Py_ssize_t)o.n_defs); /* the spans: (start, end, id) per definition */
    symbols_out = PyList_New(0);
    fixtures = PyDict_New();
    ids = calloc(o.n_defs + 1, sizeof(PyObject *));
    quals = calloc(o.n_defs + 1, sizeof(PyObject *));
    kinds = calloc(o.n_defs + 1, 1);
    size_t *stack = malloc((o.n_defs + 1) * sizeof(size_t));
    PyObject *seen = PyDict_New();
    if (!defs_out || !symbols_out || !fixtures || !ids || !quals || !kinds || !stack || !seen) {
        free(stack);
        Py_XDECREF(seen);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto out;
    }
    size_t sp = 0;
    for (size_t i = 0; i < o.n_defs; i++) {
        Def *d = &o.defs[i];
        while (sp && o.defs[stack[sp - 1]].wend <= d->wstart) sp--;
        long outer = sp ? (long)stack[sp - 1] : -1;
        PyObject *name = utf8_text(src, d->name_start, d->name_end);
        if (!name) goto defs_fail;
        if (!PyUnicode_IS_ASCII(name)) { /* Python's identifiers are NFKC-normalised */
            PyObject *nfkc = PyObject_CallFunction(G.normalize, "sO", "NFKC", name);
            Py_DECREF(name);
            if (!nfkc) goto defs_fail;
            name = nfkc;
        }
        PyObject *qual = outer >= 0 ? PyUnicode_FromFormat("%U.%U", quals[outer], name)
                                    : (Py_INCREF(name), name);
        PyObject *id = qual ? PyUnicode_FromFormat("%U::%U", path, qual) : NULL;
        if (!id) { Py_DECREF(name); Py_XDECREF(qual); goto defs_fail; }
        uint8_t kind = d->kind;
        if (kind == 1 && outer >= 0 && kinds[outer] == 0) kind = 3; /* a method */
        quals[i] = qual;
        ids[i] = id;
        kinds[i] = kind;
        PyObject *parent = outer >= 0 ? ids[outer] : module_id;
        uint32_t sig_start = d->nstart, sig_end = d->sig_end_raw;
        while (sig_end > sig_start && is_space(src[sig_end - 1])) sig_end--;
        int is_new = 0;
        {
            PyObject *prev = PyDict_GetItemWithError(seen, id);
            if (!prev) {
                if (PyErr_Occurred() || PyDict_SetItem(seen, id, Py_True) < 0) {
                    Py_DECREF(name);
                    goto defs_fail;
                }
                is_new = 1;
            }
        }
        if (want_params && (kind == 1 || kind == 3)) {
            PyObject *names = parameter_names(d->node, src);
            if (!names) { Py_DECREF(name); goto defs_fail; }
            int rc = PyTuple_GET_SIZE(names) ? (PyDict_SetDefault(fixtures, id, names) ? 0 : -1)
                                             : 0;
            Py_DECREF(names);
            if (rc < 0) { Py_DECREF(name); goto defs_fail; }
        }
        PyObject *kind_str = kind == 0 ? G.str_class : kind == 1 ? G.str_function
                             : kind == 2 ? G.str_variable : G.str_method;
        if (is_new) {
            PyObject *hash = body_hash(src, d->wstart, d->wend);
            if (!hash) { Py_DECREF(name); goto defs_fail; }
            uint32_t nums[6] = {d->wstart, d->wend, d->first_row, d->end_row, sig_start, sig_end};
            PyObject *sym = new_symbol(symbol_type, id, path, qual, name, kind_str, nums, hash,
                                       parent);
            Py_DECREF(hash);
            if (!sym || append_new(symbols_out, sym) < 0) { Py_DECREF(name); goto defs_fail; }
        }
        Py_DECREF(name);
        PyObject *t = Py_BuildValue("(IIO)", d->wstart, d->wend, id);
        if (!t) goto defs_fail;
        PyList_SET_ITEM(defs_out, (Py_ssize_t)i, t);
        stack[sp++] = i;
    }
    free(stack);
    Py_DECREF(seen);
    stack = NULL;
    seen = NULL;

    /* references and locals, in position order, each in its innermost scope */
    /* the walk emits in document order but for a few cases (bases, a local's type) */
    for (size_t i = 1; i < o.n_items; i++) {
        if (cmp_item(&o.items[i - 1], &o.items[i]) > 0) {
            qsort(o.items, o.n_items, sizeof(Item), cmp_item);
            break;
        }
    }
    refs_out = PyList_New(0);
    params = PyDict_New();
    types = PyDict_New();
    scopes = malloc((o.n_defs + 1) * sizeof(Scope));
    if (!refs_out || !params || !types || !scopes) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto out;
    }
    size_t ssp = 0, di = 0;
    long chain_start = -1, chain_end = -1;
    PyObject *scope = module_id, *bound = NULL;
    int64_t boundary = -1;
    for (size_t i = 0; i < o.n_items; i++) {
        Item *it = &o.items[i];
        uint32_t start = it->start;
        if ((int64_t)start >= boundary) {
            while (di < o.n_defs && o.defs[di].wstart <= start) {
                uint32_t s_start = o.defs[di].wstart;
                while (ssp && scopes[ssp - 1].end <= s_start) ssp--;
                scopes[ssp].end = o.defs[di].wend;
                scopes[ssp].id = ids[di];
                ssp++;
                di++;
            }
            while (ssp && scopes[ssp - 1].end <= start) ssp--;
            if (ssp) {
                boundary = scopes[ssp - 1].end;
                scope = scopes[ssp - 1].id;
            } else {
                boundary = (int64_t)n + 1;
                scope = module_id;
            }
            if (di < o.n_defs && (int64_t)o.defs[di].wstart < boundary)
                boundary = o.defs[di].wstart;
            bound = NULL;
        }
        if (it->prio >= 9) {
            if (it->prio == 9) {
                Py_XDECREF(local_name);
                local_name = utf8_text(src, start, it->end);
                if (!local_name) goto out;
                if (!bound) {
                    bound = PyDict_GetItemWithError(params, scope);
                    if (!bound) {
                        if (PyErr_Occurred()) goto out;
                        bound = PySet_New(NULL);
                        if (!bound || PyDict_SetItem(params, scope, bound) < 0) {
                            Py_XDECREF(bound);
                            goto out;
                        }
                        Py_DECREF(bound); /* params holds it */
                    }
                }
                if (PySet_Add(bound, local_name) < 0) goto out;
            } else if (chain_full(src, it->tstart, it->tend)) {
                PyObject *per = PyDict_GetItemWithError(types, scope);
                if (!per) {
                    if (PyErr_Occurred()) goto out;
                    per = PyDict_New();
                    if (!per || PyDict_SetItem(types, scope, per) < 0) { Py_XDECREF(per); goto out; }
                    Py_DECREF(per);
                }
                PyObject *name = local_name ? local_name : NULL;
                if (!name) {
                    local_name = PyUnicode_FromString("");
                    if (!local_name) goto out;
                    name = local_name;
                }
                int has = PyDict_Contains(per, name);
                if (has < 0) goto out;
                if (!has) {
                    /* every \s removed */
                    char small[256];
                    size_t len = it->tend - it->tstart;
                    char *tb = len <= sizeof small ? small : malloc(len);
                    if (!tb) { PyErr_NoMemory(); goto out; }
                    size_t m = 0;
                    for (uint32_t b = it->tstart; b < it->tend; b++)
                        if (!is_space(src[b])) tb[m++] = (char)src[b];
                    PyObject *tt = PyUnicode_DecodeASCII(tb, (Py_ssize_t)m, "strict");
                    if (tb != small) free(tb);
                    if (!tt || PyDict_SetItem(per, name, tt) < 0) { Py_XDECREF(tt); goto out; }
                    Py_DECREF(tt);
                }
            }
            continue;
        }
        uint32_t end = it->end;
        if ((long)start == chain_start && (long)end <= chain_end) continue;
        uint8_t kind = it->prio;
        PyObject *text;
        if (kind == 2) {
            /* _ATTR: `name . name` exactly over the node, then `.name` parts, then `(` */
            long p = ident_at(src, n, start);
            long q = -1;
            if (p >= 0) {
                size_t j = (size_t)p;
                while (j < n && is_space(src[j])) j++;
                if (j < n && src[j] == '.') {
                    j++;
                    while (j < n && is_space(src[j])) j++;
                    q = ident_at(src, n, j);
                }
            }
            if (q >= 0 && (uint32_t)q == end) {
                end = (uint32_t)tail_at(src, n, end);
                if (call_at(src, n, end)) kind = 1;
            } else {
                end = (uint32_t)tail_at(src, n, end);
                if (call_at(src, n, end)) kind = 1;
                if (!chain_full(src, start, end)) continue;
            }
        } else if (!chain_full(src, start, end)) {
            continue;
        }
        text = chain_text(src, start, end);
        if (!text) goto out;
        /* names repeat across files (Django: 323k reference names, 49k distinct): one object
           each, and the resolver's dict lookups compare them by identity */
        PyUnicode_InternInPlace(&text);
        chain_start = start;
        chain_end = end;
        PyObject *kind_str = kind == 0 ? G.str_inherit : kind == 1 ? G.str_call
                             : kind == 2 ? G.str_attribute : G.str_name;
        PyObject *ref = new_rawref(rawref, scope, text, kind_str, it->row + 1, it->col, start, end);
        if (!ref || append_new(refs_out, ref) < 0) goto out;
    }
    /* params: frozensets */
    {
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (PyDict_Next(params, &pos, &k, &v)) {
            PyObject *fs = PyFrozenSet_New(v);
            if (!fs || PyDict_SetItem(params, k, fs) < 0) { Py_XDECREF(fs); goto out; }
            Py_DECREF(fs);
        }
    }
    result = Py_BuildValue("(OOOOOOOO)", has_error ? Py_True : Py_False, symbols_out, defs_out,
                           fixtures, refs_out, params, types, imports);
    goto out;
defs_fail:
    free(stack);
    Py_XDECREF(seen);
out:
    Py_XDECREF(local_name);
    if (ids) {
        for (size_t i = 0; i < o.n_defs; i++) {
            Py_XDECREF(ids[i]);
            Py_XDECREF(quals[i]);
        }
    }
    free(ids);
    free(quals);
    free(kinds);
    free(scopes);
    free(o.items);
    free(o.defs);
    Py_XDECREF(defs_out);
    Py_XDECREF(symbols_out);
    Py_XDECREF(fixtures);
    Py_XDECREF(refs_out);
    Py_XDECREF(params);
    Py_XDECREF(types);
    Py_XDECREF(imports);
    ts_tree_delete(tree);
    PyBuffer_Release(&buf);
    return result;
}

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
    PyObject *ud = PyImport_ImportModule("unicodedata");
    G.normalize = ud ? PyObject_GetAttrString(ud, "normalize") : NULL;
    Py_XDECREF(ud);
    if (!G.normalize || !G.comma || !G.comment) {
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

static PyMethodDef METHODS[] = {
    {"condense", fleet_condense, METH_VARARGS,
     "condense(offsets, targets) -> (comp, rank): SCC number of each node and lock rank of "
     "each SCC, as uint32 bytes, for a graph in CSR form (see condense.c)."},
    {"parse", parse, METH_VARARGS, "parse(src) -> has_error: parse only (for benchmarks)."},
    {"init", init, METH_VARARGS,
     "init(language_capsule, threaded=False): load the Python grammar (once); threaded: parse "
     "without the GIL (the runtime then allocates with malloc)."},
    {"extract", extract, METH_VARARGS,
     "extract(src, path, module_id, rawref_type, symbol_type, want_params) -> (has_error, "
     "symbols, spans, fixture_params, refs, params, local_types, imports)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "fleet.graph._native",
    "Python symbol extraction in one C walk over the tree-sitter tree (see pyextract.c).", -1,
    METHODS,
};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&MODULE); }
