/*
 * pyextract_walk.c: `walk`, the depth-first walk over the runtime's subtrees, and
 * the builders of the Python results (import names, Symbol tuples, body hashes)
 *
 * Part of fleet/graph/_c/pyextract.c's one translation unit, which includes it (in order:
 * pyextract_visit.c, pyextract_walk.c, pyextract_extract.c): the walk and the extractor
 * stay one unit for the compiler (static functions inlined across the parts, one
 * profile for the profile-guided build), as tree-sitter's own lib.c includes its parts.
 * Not compiled on its own.
 */

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
static int walk(Out *o, const TSTree *tree, TSNode root, const unsigned char *src) {
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
                    push_import(o, nf->node) < 0) {
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

/* The int objects of the symbols' positions, shared: a value below 2^18 is one object for
   the whole process (the stdlib's 87k symbols held 447k int objects for 90k distinct values,
   12 MB; Python itself shares only -5..256). Filled under the GIL, never freed (at most 2^18
   ints, ~9 MB, and only the values some file had). */
#define SHARED_INTS (1u << 18)
static PyObject *shared_ints[SHARED_INTS];

static PyObject *shared_int(uint32_t v) {
    if (v >= SHARED_INTS) return PyLong_FromUnsignedLong(v);
    PyObject *o = shared_ints[v];
    if (!o) {
        o = PyLong_FromUnsignedLong(v);
        if (!o) return NULL;
        shared_ints[v] = o; /* the table's reference */
    }
    Py_INCREF(o);
    return o;
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
        PyObject *v = shared_int(nums[i]);
        if (!v) { Py_DECREF(t); return NULL; }
        PyTuple_SET_ITEM(t, 6 + i, v);
    }
    Py_INCREF(hash);
    Py_INCREF(parent);
    PyTuple_SET_ITEM(t, 12, hash);
    PyTuple_SET_ITEM(t, 13, parent);
    return t;
}

