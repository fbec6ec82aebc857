/*
 * pyextract_visit.c: the result buffers, the byte-level text helpers and `visit`,
 * which recognises the query's patterns at one node
 *
 * Part of fleet/graph/_c/pyextract.c's one translation unit, which includes it (in order:
 * pyextract_visit.c, pyextract_walk.c, pyextract_extract.c): the walk and the extractor
 * stay one unit for the compiler (static functions inlined across the parts, one
 * profile for the profile-guided build), as tree-sitter's own lib.c includes its parts.
 * Not compiled on its own.
 */

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
    TSNode *imports;       /* import statements, in document order (described after the walk) */
    size_t n_imports, cap_imports;
    uint32_t seq;
} Out;

static int push_import(Out *o, TSNode node) {
    if (o->n_imports == o->cap_imports) {
        size_t cap = o->cap_imports ? o->cap_imports * 2 : 16;
        TSNode *p = realloc(o->imports, cap * sizeof(TSNode));
        if (!p) return -1;
        o->imports = p;
        o->cap_imports = cap;
    }
    o->imports[o->n_imports++] = node;
    return 0;
}

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
                    if (ts_node_symbol(b) == G.subscript) /* `Base[T]`: the generic's origin */
                        b = field_child(b, F_VALUE);
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
            uint8_t rk = node_kind(right);
            if (rk == K(S_CALL)) {
                TSNode fn = field_child(right, F_FUNCTION);
                uint8_t fk = node_kind(fn);
                if (fk == K(S_IDENTIFIER) || fk == K(S_ATTRIBUTE)) {
                    Item it = {ts_node_start_byte(n), ts_node_end_byte(n), 0, 0, 0,
                               ts_node_start_byte(fn), ts_node_end_byte(fn), 10};
                    return push_item(o, it);
                }
            } else if (rk == K(S_IDENTIFIER) || rk == K(S_ATTRIBUTE)) { /* `_Style = Style` */
                Item it = {ts_node_start_byte(n), ts_node_end_byte(n), 0, 0, 0,
                           ts_node_start_byte(right), ts_node_end_byte(right), 10};
                return push_item(o, it);
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
        if (fld == G.field[F_LEFT]) return add_local(o, n);
        /* `for x in items:`: the iterable a name read (its items type `x`, _facts); not a
           comprehension's: its clause may hold several `right` children, which the query
           path's pattern does not all match in a tree with errors */
        if (pk == K(S_FOR) && fld == G.field[F_RIGHT]) return add_ref(o, n, 3);
        return 0;
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

