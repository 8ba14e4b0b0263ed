/* The mask walk of luaguard.guard.vocab.MaskEngine, compiled.
 *
 * This is MaskEngine._walk and MaskEngine._group (see vocab.py, which keeps the same walk
 * in Python as the reference and the fallback) written against the CPython API: the same
 * memo dictionaries and keys, and the same intervals, held as one bytes object of native
 * int64 (first rank, end rank) pairs instead of a tuple of pairs (no object per interval:
 * merging a child's result is one memcpy, and the GC has nothing to track).  Everything the walk does not know - stepping the
 * automaton, projecting and interning states, byte classes - stays in Python: the walk
 * calls back the engine's *_miss methods on a table miss, exactly where the Python walk
 * does.  What this saves is the interpreter's per-child overhead (dictionary keys, tuple
 * unpacking, interval merging), which is most of a new mask's time at a large vocabulary.
 * The trie is read from flat int32 records (VocabTrie.records), checked once when the
 * walker is made (check_records): at a 152k vocabulary the walk's own time fell by a
 * quarter against reading the trie's Python lists of Python ints.
 *
 * The walker holds references to the engine's tables as they are when it is made; the
 * engine makes a new walker whenever it replaces them (MaskEngine._reset).  The caller
 * holds the engine's lock and the GIL throughout.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define G_BAD (1 << 13)
#define TR_UNKNOWN (-7)
#define MAX_DEPTH 4000 /* trie levels (token bytes); the Python walk's recursion limit too */
#define STACK_PARTS 8

/* The walker's references, each a keyword of Walker(...): X(field, keyword, kind), kind 'd'
 * a dict, 'l' a list, 'c' a callable, 'b' bytes.  The engine's tables (dicts keyed by ints);
 * per state id, its free kinds and its projection class (Automaton.projection_class); the
 * engine's callbacks for misses; the trie as flat records of native int32 (VocabTrie.records:
 * per node NODE_REC ints, per child group GROUP_REC, per child KID_REC - one cache line
 * per node instead of one Python int object per field, list and node). */
#define WALKER_REFS(X)                                                                      \
    X(memo, "memo", 'd') X(gmemo, "gmemo", 'd') X(gproj, "gproj", 'd') X(trans, "trans", 'd')   \
    X(trunc, "trunc", 'd') X(cmaps, "cmaps", 'd') X(bad, "bad", 'd')                             \
    X(free_kinds, "free", 'l') X(pclass, "pclass", 'l')                                          \
    X(trans_miss, "trans_miss", 'c') X(trunc_miss, "trunc_miss", 'c')                            \
    X(gproj_miss, "gproj_miss", 'c') X(cmap_miss, "cmap_miss", 'c') X(bad_miss, "bad_miss", 'c') \
    X(node_recs, "nodes", 'b') X(group_recs, "groups", 'b') X(kid_recs, "kids", 'b')

/* a node's record: first rank below it, end rank, tokens ending at it, projection key of a
 * child (VocabTrie.proj), free-run kinds (VocabTrie.plain), 1 when it has children, its
 * child groups [first, end) */
#define NODE_REC 8
#define N_LO 0
#define N_HI 1
#define N_OWN 2
#define N_PROJ 3
#define N_PLAIN 4
#define N_KIDS 5
#define N_GFIRST 6
#define N_GEND 7
/* a group's record: its key (VocabTrie.groups), its children [first, end) */
#define GROUP_REC 4
/* a child's record: its byte, its node */
#define KID_REC 2

typedef struct {
    PyObject_HEAD
#define REF_FIELD(f, k, t) PyObject *f;
    WALKER_REFS(REF_FIELD)
#undef REF_FIELD
    const int32_t *nd, *gr, *kd; /* the records of node_recs, group_recs, kid_recs */
    long long nodes, span;       /* nodes: records in node_recs */
    long long walks, memo_hits;
    int depth;
} Walker;

typedef struct {
    long long *v; /* pairs, flat */
    Py_ssize_t n; /* pairs */
    Py_ssize_t cap;
} Buf;

static int buf_grow(Buf *b) {
    Py_ssize_t cap = b->cap ? b->cap * 2 : 16;
    long long *v = (long long *)PyMem_Realloc(b->v, (size_t)cap * 2 * sizeof(long long));
    if (v == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->v = v;
    b->cap = cap;
    return 0;
}

static inline int buf_push(Buf *b, long long a, long long z) {
    if (b->n == b->cap && buf_grow(b) < 0)
        return -1;
    b->v[2 * b->n] = a;
    b->v[2 * b->n + 1] = z;
    b->n++;
    return 0;
}

/* push (a, z), joined to the last pair when they touch */
static inline int buf_join(Buf *b, long long a, long long z) {
    if (b->n && b->v[2 * b->n - 1] == a) {
        b->v[2 * b->n - 1] = z;
        return 0;
    }
    return buf_push(b, a, z);
}

/* a result: the pairs as one bytes object of native int64s (first, end, first, end ...) */
static PyObject *buf_result(Buf *b) {
    return PyBytes_FromStringAndSize((const char *)b->v, (Py_ssize_t)(b->n * 2 * sizeof(long long)));
}

static inline long long item_ll(PyObject *list, Py_ssize_t i) {
    return PyLong_AsLongLong(PyList_GET_ITEM(list, i));
}

/* dict[key] as a long long; *found = 0 when absent; -1 with an error set on failure */
static inline int dict_ll(PyObject *dict, long long key, long long *out, int *found) {
    PyObject *k = PyLong_FromLongLong(key);
    if (k == NULL)
        return -1;
    PyObject *v = PyDict_GetItemWithError(dict, k);
    Py_DECREF(k);
    if (v == NULL) {
        *found = 0;
        return PyErr_Occurred() ? -1 : 0;
    }
    *found = 1;
    *out = PyLong_AsLongLong(v);
    if (*out == -1 && PyErr_Occurred())
        return -1;
    return 0;
}

/* callback(a, b) -> int */
/* Automaton.projection_args: the arguments of a projection (keep, ends, drop) without what
 * cannot matter for a state of projection class pc, so that keys differing only in that
 * share one projection */
static inline void norm_args(long long pc, long long *keep, long long *ends, long long *drop) {
    if (*keep > (pc & 63))
        *keep = pc & 63;
    *ends &= (pc >> 6) & 31;
    if (!(pc & (1 << 11)))
        *drop &= ~1LL;
    if (!(pc & (1 << 12)))
        *drop &= ~2LL;
}

static inline int call_ll(PyObject *fn, long long a, long long b, int nargs, long long *out) {
    PyObject *args[2];
    args[0] = PyLong_FromLongLong(a);
    if (args[0] == NULL)
        return -1;
    args[1] = NULL;
    if (nargs == 2) {
        args[1] = PyLong_FromLongLong(b);
        if (args[1] == NULL) {
            Py_DECREF(args[0]);
            return -1;
        }
    }
    PyObject *r = PyObject_Vectorcall(fn, args, (size_t)nargs, NULL);
    Py_DECREF(args[0]);
    Py_XDECREF(args[1]);
    if (r == NULL)
        return -1;
    *out = PyLong_AsLongLong(r);
    Py_DECREF(r);
    if (*out == -1 && PyErr_Occurred())
        return -1;
    return 0;
}

static PyObject *walk(Walker *w, long long node, long long sid);

/* the pairs of a result (see buf_result) appended to b; the first joined to b's last */
static int buf_extend(Buf *b, PyObject *res, int join_first) {
    Py_ssize_t n = PyBytes_GET_SIZE(res) / (Py_ssize_t)(2 * sizeof(long long));
    const long long *v = (const long long *)PyBytes_AS_STRING(res);
    if (n == 0)
        return 0;
    if (join_first) {
        if (buf_join(b, v[0], v[1]) < 0)
            return -1;
        v += 2;
        n -= 1;
    }
    while (b->n + n > b->cap)
        if (buf_grow(b) < 0)
            return -1;
    memcpy(b->v + 2 * b->n, v, (size_t)n * 2 * sizeof(long long));
    b->n += n;
    return 0;
}

/* MaskEngine._group: the accepted rank intervals of the children [k0, k1) from state sid */
static PyObject *group(Walker *w, long long k0, long long k1, long long sid) {
    int found;
    PyObject *cmap;
    {
        PyObject *k = PyLong_FromLongLong(sid);
        if (k == NULL)
            return NULL;
        cmap = PyDict_GetItemWithError(w->cmaps, k); /* borrowed */
        Py_DECREF(k);
        if (cmap == NULL) {
            if (PyErr_Occurred())
                return NULL;
            PyObject *a = PyLong_FromLongLong(sid);
            if (a == NULL)
                return NULL;
            PyObject *args[1] = {a};
            PyObject *r = PyObject_Vectorcall(w->cmap_miss, args, 1, NULL);
            Py_DECREF(a);
            if (r == NULL)
                return NULL;
            /* the engine's cmaps dict holds it now; keep our own reference meanwhile */
            cmap = r;
        } else {
            Py_INCREF(cmap);
        }
    }
    int has_cmap = cmap != Py_None;
    /* the transitions of this state by byte class, looked up once per call (on the heap:
     * the walk recurses once per byte of the longest token, and a worker thread's stack may
     * be small) */
    long long *tr = (long long *)PyMem_Malloc(256 * sizeof(long long));
    if (tr == NULL) {
        Py_DECREF(cmap);
        return PyErr_NoMemory();
    }
    for (int i = 0; i < 256; i++)
        tr[i] = TR_UNKNOWN;
    Buf out = {NULL, 0, 0};
    PyObject *result = NULL;
    for (long long i = k0; i < k1; i++) {
        long long byte = w->kd[KID_REC * i], child = w->kd[KID_REC * i + 1];
        const int32_t *cr = w->nd + NODE_REC * child;
        long long cls = has_cmap ? PyLong_AsLongLong(PyTuple_GET_ITEM(cmap, byte)) : byte;
        if (PyErr_Occurred())
            goto done;
        if (cls < 0 || cls > 255) {
            PyErr_Format(PyExc_ValueError, "walk: byte class %lld out of range", cls);
            goto done;
        }
        long long nsid = tr[cls];
        if (nsid == TR_UNKNOWN) {
            if (dict_ll(w->trans, (sid << 8) | cls, &nsid, &found) < 0)
                goto done;
            if (!found && call_ll(w->trans_miss, sid, cls, 2, &nsid) < 0)
                goto done;
            tr[cls] = nsid;
        }
        if (nsid < 0)
            continue;
        if (cr[N_KIDS]) {
            long long fast = item_ll(w->free_kinds, nsid);
            if (fast && (cr[N_PLAIN] & fast)) {
                if (buf_join(&out, cr[N_LO], cr[N_HI]) < 0)
                    goto done;
                continue;
            }
            long long pk = cr[N_PROJ], keep = pk >> 5, ends = pk & 31, nodrop = 0;
            norm_args(item_ll(w->pclass, nsid), &keep, &ends, &nodrop);
            pk = (keep << 5) | ends;
            long long csid;
            if (dict_ll(w->trunc, (nsid << 12) | pk, &csid, &found) < 0)
                goto done;
            if (!found && call_ll(w->trunc_miss, nsid, pk, 2, &csid) < 0)
                goto done;
            PyObject *sub = walk(w, child, csid);
            if (sub == NULL)
                goto done;
            int rc = buf_extend(&out, sub, 1);
            Py_DECREF(sub);
            if (rc < 0)
                goto done;
            continue;
        }
        long long a = cr[N_LO];
        if (buf_join(&out, a, a + cr[N_OWN]) < 0)
            goto done;
    }
    if (!PyErr_Occurred())
        result = buf_result(&out);
done:
    PyMem_Free(out.v);
    PyMem_Free(tr);
    Py_DECREF(cmap);
    return result;
}

static int pair_cmp(const void *x, const void *y) {
    const long long *p = (const long long *)x, *q = (const long long *)y;
    if (p[0] != q[0])
        return p[0] < q[0] ? -1 : 1;
    if (p[1] != q[1])
        return p[1] < q[1] ? -1 : 1;
    return 0;
}

/* MaskEngine._walk: the accepted rank intervals below node from (projected) state sid */
static PyObject *walk(Walker *w, long long node, long long sid) {
    PyObject *key = PyLong_FromLongLong((node << 32) | sid);
    if (key == NULL)
        return NULL;
    PyObject *got = PyDict_GetItemWithError(w->memo, key);
    if (got != NULL) {
        w->memo_hits++;
        Py_DECREF(key);
        Py_INCREF(got);
        return got;
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return NULL;
    }
    if (w->depth >= MAX_DEPTH) {
        PyErr_SetString(PyExc_RecursionError, "walk: a token longer than the walk's depth limit");
        return NULL;
    }
    w->walks++;
    PyObject *parts[STACK_PARTS];
    int nparts = 0;
    PyObject *res = NULL;
    PyObject *dyn = NULL; /* a list of the parts past STACK_PARTS */
    const int32_t *nr = w->nd + NODE_REC * node;
    long long n_own = nr[N_OWN];
    if (n_own) {
        long long a = nr[N_LO];
        long long pair[2] = {a, a + n_own};
        PyObject *p = PyBytes_FromStringAndSize((const char *)pair, sizeof(pair));
        if (p == NULL)
            goto fail;
        parts[nparts++] = p;
    }
    long long g0 = nr[N_GFIRST], ng = nr[N_GEND] - g0;
    long long bad = -1;
    int found;
    long long pc = item_ll(w->pclass, sid);
    for (long long gi = 0; gi < ng; gi++) {
        const int32_t *g = w->gr + GROUP_REC * (g0 + gi);
        long long gk = g[0];
        if (gk & G_BAD) {
            if (bad < 0) {
                if (dict_ll(w->bad, sid, &bad, &found) < 0)
                    goto fail;
                if (!found && call_ll(w->bad_miss, sid, 0, 1, &bad) < 0)
                    goto fail;
            }
            if (bad)
                continue;
        }
        /* the group's projection key without what cannot matter for this state */
        long long need = (gk >> 7) & 63, ends = gk & 31, drop = (gk >> 5) & 3;
        norm_args(pc, &need, &ends, &drop);
        long long pk = (need << 7) | (drop << 5) | ends;
        long long gsid;
        if (dict_ll(w->gproj, (sid << 14) | pk, &gsid, &found) < 0)
            goto fail;
        if (!found && call_ll(w->gproj_miss, sid, pk, 2, &gsid) < 0)
            goto fail;
        PyObject *mk = PyLong_FromLongLong((gsid * w->nodes + node) * w->span + gi);
        if (mk == NULL)
            goto fail;
        PyObject *r = PyDict_GetItemWithError(w->gmemo, mk);
        if (r != NULL) {
            Py_INCREF(r);
        } else if (PyErr_Occurred()) {
            Py_DECREF(mk);
            goto fail;
        } else {
            w->depth++;
            r = group(w, g[1], g[2], gsid);
            w->depth--;
            if (r == NULL || PyDict_SetItem(w->gmemo, mk, r) < 0) {
                Py_XDECREF(r);
                Py_DECREF(mk);
                goto fail;
            }
        }
        Py_DECREF(mk);
        if (PyBytes_GET_SIZE(r) == 0) {
            Py_DECREF(r);
            continue;
        }
        if (nparts == STACK_PARTS) {
            if (dyn == NULL) {
                dyn = PyList_New(0);
                if (dyn == NULL) {
                    Py_DECREF(r);
                    goto fail;
                }
            }
            int rc = PyList_Append(dyn, r);
            Py_DECREF(r);
            if (rc < 0)
                goto fail;
        } else {
            parts[nparts++] = r;
        }
    }
    if (nparts == 0) {
        res = PyBytes_FromStringAndSize(NULL, 0);
    } else if (nparts == 1 && dyn == NULL) {
        res = parts[0];
        Py_INCREF(res);
    } else {
        /* the groups' intervals interleave: sort them (adjacent ones stay apart) */
        Buf all = {NULL, 0, 0};
        int ok = 1;
        for (int i = 0; i < nparts && ok; i++)
            ok = buf_extend(&all, parts[i], 0) == 0;
        if (ok && dyn != NULL)
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(dyn) && ok; i++)
                ok = buf_extend(&all, PyList_GET_ITEM(dyn, i), 0) == 0;
        if (ok) {
            qsort(all.v, (size_t)all.n, 2 * sizeof(long long), pair_cmp);
            res = buf_result(&all);
        }
        PyMem_Free(all.v);
    }
    if (res != NULL && PyDict_SetItem(w->memo, key, res) < 0)
        Py_CLEAR(res);
fail:
    for (int i = 0; i < nparts; i++)
        Py_DECREF(parts[i]);
    Py_XDECREF(dyn);
    Py_DECREF(key);
    return res;
}

/* -- the Python type ------------------------------------------------------------------- */

static const struct {
    const char *keyword;
    Py_ssize_t offset;
    char kind;
} WALKER_REF_TABLE[] = {
#define REF_ENTRY(f, k, t) {k, offsetof(Walker, f), t},
    WALKER_REFS(REF_ENTRY)
#undef REF_ENTRY
};
#define N_REFS ((int)(sizeof(WALKER_REF_TABLE) / sizeof(WALKER_REF_TABLE[0])))

static inline PyObject **ref_slot(Walker *w, int i) {
    return (PyObject **)((char *)w + WALKER_REF_TABLE[i].offset);
}

static int Walker_traverse(Walker *w, visitproc visit, void *arg) {
    for (int i = 0; i < N_REFS; i++)
        Py_VISIT(*ref_slot(w, i));
    return 0;
}

static int Walker_clear(Walker *w) {
    for (int i = 0; i < N_REFS; i++)
        Py_CLEAR(*ref_slot(w, i));
    return 0;
}

static void Walker_dealloc(Walker *w) {
    PyObject_GC_UnTrack(w);
    Walker_clear(w);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

/* the records' sizes, and every index they hold within range: the walk then reads them
 * without checks.  Sets nd/gr/kd and nodes. */
static int check_records(Walker *w) {
    Py_ssize_t bn = PyBytes_GET_SIZE(w->node_recs), bg = PyBytes_GET_SIZE(w->group_recs),
               bk = PyBytes_GET_SIZE(w->kid_recs);
    if (bn % (NODE_REC * 4) || bg % (GROUP_REC * 4) || bk % (KID_REC * 4)) {
        PyErr_SetString(PyExc_ValueError, "Walker: the trie's records are not whole int32 records");
        return -1;
    }
    const int32_t *nd = (const int32_t *)PyBytes_AS_STRING(w->node_recs);
    const int32_t *gr = (const int32_t *)PyBytes_AS_STRING(w->group_recs);
    const int32_t *kd = (const int32_t *)PyBytes_AS_STRING(w->kid_recs);
    long long n = bn / (NODE_REC * 4), ng = bg / (GROUP_REC * 4), nk = bk / (KID_REC * 4);
    for (long long i = 0; i < n; i++) {
        const int32_t *r = nd + NODE_REC * i;
        if (r[N_GFIRST] < 0 || r[N_GFIRST] > r[N_GEND] || r[N_GEND] > ng || r[N_OWN] < 0) {
            PyErr_Format(PyExc_ValueError, "Walker: node record %lld out of range", i);
            return -1;
        }
    }
    for (long long i = 0; i < ng; i++) {
        const int32_t *r = gr + GROUP_REC * i;
        if (r[1] < 0 || r[1] > r[2] || r[2] > nk) {
            PyErr_Format(PyExc_ValueError, "Walker: group record %lld out of range", i);
            return -1;
        }
    }
    for (long long i = 0; i < nk; i++) {
        if (kd[KID_REC * i] < 0 || kd[KID_REC * i] > 255 || kd[KID_REC * i + 1] < 0 || kd[KID_REC * i + 1] >= n) {
            PyErr_Format(PyExc_ValueError, "Walker: child record %lld out of range", i);
            return -1;
        }
    }
    w->nd = nd;
    w->gr = gr;
    w->kd = kd;
    w->nodes = n;
    return 0;
}

/* Walker(**refs, span=int): every keyword of WALKER_REFS and span, nothing else */
static int Walker_init(Walker *w, PyObject *args, PyObject *kwds) {
    if (PyTuple_GET_SIZE(args) != 0 || kwds == NULL) {
        PyErr_SetString(PyExc_TypeError, "Walker takes keyword arguments only");
        return -1;
    }
    PyObject *got[N_REFS];
    for (int i = 0; i < N_REFS; i++) {
        const char *k = WALKER_REF_TABLE[i].keyword;
        PyObject *v = PyDict_GetItemString(kwds, k);
        if (v == NULL) {
            PyErr_Format(PyExc_TypeError, "Walker: missing keyword %s", k);
            return -1;
        }
        char kind = WALKER_REF_TABLE[i].kind;
        int ok = kind == 'd'   ? PyDict_Check(v)
                 : kind == 'l' ? PyList_Check(v)
                 : kind == 'b' ? PyBytes_CheckExact(v)
                               : PyCallable_Check(v);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "Walker: %s must be a %s, got %s", k,
                         kind == 'd' ? "dict" : (kind == 'l' ? "list" : (kind == 'b' ? "bytes" : "callable")),
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        got[i] = v;
    }
    PyObject *span_obj = PyDict_GetItemString(kwds, "span");
    if (span_obj == NULL || PyDict_GET_SIZE(kwds) != N_REFS + 1) {
        PyErr_SetString(PyExc_TypeError, "Walker: span missing or an unknown keyword");
        return -1;
    }
    long long span = PyLong_AsLongLong(span_obj);
    if (span == -1 && PyErr_Occurred())
        return -1;
    for (int i = 0; i < N_REFS; i++) {
        Py_INCREF(got[i]);
        Py_XSETREF(*ref_slot(w, i), got[i]);
    }
    if (check_records(w) < 0)
        return -1;
    w->span = span;
    w->walks = 0;
    w->memo_hits = 0;
    w->depth = 0;
    return 0;
}

static PyObject *Walker_walk(Walker *w, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "walk(node, sid) takes two ints");
        return NULL;
    }
    long long node = PyLong_AsLongLong(args[0]);
    long long sid = PyLong_AsLongLong(args[1]);
    if (PyErr_Occurred())
        return NULL;
    if (node < 0 || node >= w->nodes || sid < 0) {
        PyErr_Format(PyExc_ValueError, "walk: node %lld or state %lld out of range", node, sid);
        return NULL;
    }
    return walk(w, node, sid);
}

static PyObject *Walker_counts(Walker *w, PyObject *unused) {
    PyObject *r = Py_BuildValue("(LL)", w->walks, w->memo_hits);
    w->walks = 0;
    w->memo_hits = 0;
    return r;
}

static PyMethodDef Walker_methods[] = {
    {"walk", (PyCFunction)(void (*)(void))Walker_walk, METH_FASTCALL,
     "walk(node, sid) -> bytes: MaskEngine._walk, compiled; the (first, end) rank pairs as native int64s."},
    {"counts", (PyCFunction)Walker_counts, METH_NOARGS,
     "counts() -> (walks, memo hits) since the last call, and reset them."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject WalkerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "luaguard.guard._walk.Walker",
    .tp_basicsize = sizeof(Walker),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The mask walk over one engine's tables (see luaguard.guard.vocab.MaskEngine).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Walker_init,
    .tp_dealloc = (destructor)Walker_dealloc,
    .tp_traverse = (traverseproc)Walker_traverse,
    .tp_clear = (inquiry)Walker_clear,
    .tp_methods = Walker_methods,
};

static struct PyModuleDef walkmodule = {
    PyModuleDef_HEAD_INIT, "_walk", "The compiled mask walk of luaguard.guard.vocab.", -1, NULL,
};

PyMODINIT_FUNC PyInit__walk(void) {
    if (PyType_Ready(&WalkerType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&walkmodule);
    if (m == NULL)
        return NULL;
    Py_INCREF(&WalkerType);
    if (PyModule_AddObject(m, "Walker", (PyObject *)&WalkerType) < 0) {
        Py_DECREF(&WalkerType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
