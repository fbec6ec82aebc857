/*
 * pyextract_extract.c: `extract`, the extension's entry point: parse, walk, then
 * qualified symbols, sorted and scoped references, imports
 *
 * Part of fleet/graph/_c/pyextract.c's one translation unit, which includes it (in order:
 * pyextract_visit.c, pyextract_walk.c, pyextract_extract.c): the walk and the extractor
 * stay one unit for the compiler (static functions inlined across the parts, one
 * profile for the profile-guided build), as tree-sitter's own lib.c includes its parts.
 * Not compiled on its own.
 */

typedef struct { uint32_t end; PyObject *id; } Scope;

static PyObject *extract(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *path, *module_id;
    PyTypeObject *symbol_type;
    int want_params;
    if (!PyArg_ParseTuple(args, "y*UUO!p", &buf, &path, &module_id, &PyType_Type, &symbol_type,
                          &want_params))
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
             *refs_out = NULL, *ref_scopes = NULL, *ref_names = NULL, *params = NULL,
             *types = NULL, *imports = NULL, **ids = NULL, **quals = NULL;
    uint8_t *kinds = NULL, *ref_kinds = NULL;
    uint32_t *ref_nums = NULL; /* per reference: line, col, start, end (four columns) */
    size_t n_refs = 0;
    Scope *scopes = NULL;
    PyObject *local_name = NULL;
    Out o;
    memset(&o, 0, sizeof o);
    /* parse, walk and sort in C only: without the GIL when threaded (the walk touches no
       Python object; import statements are kept as nodes and described below) */
    int slot;
    TSParser *parser = take_parser(&slot);
    if (!parser) {
        PyBuffer_Release(&buf);
        PyErr_SetString(PyExc_RuntimeError, "tree-sitter returned no tree");
        return NULL;
    }
    int walked = -1, has_error = 0;
    TSNode root;
    memset(&root, 0, sizeof root);
    PyThreadState *released = release_gil ? PyEval_SaveThread() : NULL;
    TSTree *tree = ts_parser_parse_string(parser, NULL, (const char *)src, (uint32_t)n);
    if (tree) {
        root = ts_tree_root_node(tree);
        has_error = ts_node_has_error(root);
        walked = walk(&o, tree, root, src);
        if (walked == 0) {
            qsort(o.defs, o.n_defs, sizeof(Def), cmp_def);
            /* the walk emits in document order but for a few cases (bases, a local's type) */
            for (size_t i = 1; i < o.n_items; i++) {
                if (cmp_item(&o.items[i - 1], &o.items[i]) > 0) {
                    qsort(o.items, o.n_items, sizeof(Item), cmp_item);
                    break;
                }
            }
        }
    }
    if (released) PyEval_RestoreThread(released);
    give_parser(slot, parser);
    if (!tree) {
        PyBuffer_Release(&buf);
        free(o.items);
        free(o.defs);
        free(o.imports);
        PyErr_SetString(PyExc_RuntimeError, "tree-sitter returned no tree");
        return NULL;
    }
    imports = PyList_New(0);
    if (!imports || walked < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto out;
    }
    for (size_t i = 0; i < o.n_imports; i++) {
        if (on_import(o.imports[i], src, imports) < 0) {
            if (!PyErr_Occurred()) PyErr_NoMemory();
            goto out;
        }
    }

    /* definitions -> qualified names, parents, kinds; spans for the scope sweep */
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
        /* one object per distinct name (the stdlib: 84k symbol names, 51k distinct) */
        PyUnicode_InternInPlace(&name);
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

    /* references and locals, in position order, each in its innermost scope (sorted above) */
    /* the references as columns (RawRefs): scope and name objects, a kind byte, four uint32 */
    ref_scopes = PyList_New(0);
    ref_names = PyList_New(0);
    ref_kinds = malloc(o.n_items + 1);
    ref_nums = malloc((o.n_items + 1) * 4 * sizeof(uint32_t));
    params = PyDict_New();
    types = PyDict_New();
    scopes = malloc((o.n_defs + 1) * sizeof(Scope));
    if (!ref_scopes || !ref_names || !ref_kinds || !ref_nums || !params || !types || !scopes) {
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
                /* locals repeat across functions and files (the stdlib: 167k, 25k distinct),
                   and they are reference names too: one object each, as those */
                PyUnicode_InternInPlace(&local_name);
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
                    if (tt) PyUnicode_InternInPlace(&tt); /* 40k type expressions, 9k distinct */
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
        /* RawRefs' kind codes: call 0, attribute 1, name 2, import 3, inherit 4 */
        ref_kinds[n_refs] = kind == 0 ? 4 : kind == 1 ? 0 : kind == 2 ? 1 : 2;
        if (append_new(ref_names, text) < 0 || PyList_Append(ref_scopes, scope) < 0) goto out;
        uint32_t *row = &ref_nums[4 * n_refs];
        row[0] = it->row + 1;
        row[1] = it->col;
        row[2] = start;
        row[3] = end;
        n_refs++;
    }
    /* params: sorted tuples (what extract() keeps: a quarter of a frozenset's memory) */
    {
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        while (PyDict_Next(params, &pos, &k, &v)) {
            PyObject *names = PySequence_List(v), *sorted = NULL;
            if (names && PyList_Sort(names) == 0) sorted = PyList_AsTuple(names);
            Py_XDECREF(names);
            if (!sorted || PyDict_SetItem(params, k, sorted) < 0) { Py_XDECREF(sorted); goto out; }
            Py_DECREF(sorted);
        }
    }
    {
        PyObject *cols[4] = {NULL, NULL, NULL, NULL};
        for (int c = 0; c < 4; c++) {
            cols[c] = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(n_refs * sizeof(uint32_t)));
            if (!cols[c]) break;
            uint32_t *col = (uint32_t *)PyBytes_AS_STRING(cols[c]);
            for (size_t r = 0; r < n_refs; r++) col[r] = ref_nums[4 * r + c];
        }
        PyObject *kb = cols[3] ? PyBytes_FromStringAndSize((const char *)ref_kinds,
                                                           (Py_ssize_t)n_refs) : NULL;
        if (kb)
            refs_out = Py_BuildValue("(OONNNNN)", ref_scopes, ref_names, kb, cols[0], cols[1],
                                     cols[2], cols[3]);
        else
            for (int c = 0; c < 4; c++) Py_XDECREF(cols[c]);
        if (!refs_out) goto out;
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
    free(o.imports);
    Py_XDECREF(defs_out);
    Py_XDECREF(symbols_out);
    Py_XDECREF(fixtures);
    Py_XDECREF(refs_out);
    Py_XDECREF(ref_scopes);
    Py_XDECREF(ref_names);
    free(ref_kinds);
    free(ref_nums);
    Py_XDECREF(params);
    Py_XDECREF(types);
    Py_XDECREF(imports);
    ts_tree_delete(tree);
    PyBuffer_Release(&buf);
    return result;
}

