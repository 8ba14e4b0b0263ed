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
 * The walk's own tables - the memo of results per (node, state) and per child group, the
 * transitions per (state, byte class), the projections per (state, key), each state's byte
 * classes and "rejects every bad byte" flag - are open-addressing hash tables of native
 * int64 keys owned by the walker (Map below), not the engine's Python dictionaries: a
 * dictionary look-up of an int key allocates the key object and compares two int objects
 * besides the table probe, and at a 152k vocabulary those look-ups were the largest single
 * cost of a new mask after the arena change (perf: _Py_dict_lookup 18% of the replay).  The
 * tables are sized when the walker is made (presize: a power of two, written then, so that
 * their pages are mapped outside a decoding step) and double past half full.
 *
 * Work the walker skips or shares instead of calling back (the Python walk does the same):
 * projections the state's projection class says are the state itself (is_identity), the
 * transitions of a state right after `.`, `..`, `:` or `-` on bytes that do not extend the
 * pending token (taken from its delegate state: trans_of), and the "rejects every bad
 * byte" flag (decided from the state's classes and its own transition: bad_of).
 *
 * The automaton's most frequent steps are compiled too (cstep: in code, in names after `.`
 * and `:`, in lookup and index arguments, name strings and after their closing quote,
 * after `[` and `[=`, in line comments and comment starts, in quoted and interpolated
 * strings, in numbers;
 * Automaton.compiled_code_steps gives what they read, and the
 * name tables and placeholder matchers stay in Python behind Automaton.name_child and
 * name_end and the matchers' step, each asked once per position and byte): over
 * guard_eval's 152k replay they take 83% of the transitions the walk computes, and the p99
 * fell by 12% (in-process A/B, min-of-4 and -5).  Any state or byte they do not cover is
 * stepped by Python as before.  So are projections (project_sid: Automaton.project), and
 * the states the walker interns are taken off the cyclic collector's lists (untrack_deep).
 *
 * The walker holds references to the engine's lists and callbacks as they are when it is
 * made; the engine makes a new walker whenever it replaces them (MaskEngine._reset).  The
 * caller holds the engine's lock and the GIL throughout.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the constants shared with automaton.py, brackets.py, paths.py and regexdfa.py: written from their
 * Python definitions by walk_layout.py when setup.py builds this module */
#include "_walk_layout.h"

#define G_BAD (1 << 13)
#define TR_UNKNOWN (-7)
#define MAX_DEPTH 4000 /* trie levels (token bytes); the Python walk's recursion limit too */
#define STACK_PARTS 8

/* The walker's references, each a keyword of Walker(...): X(field, keyword, kind), kind
 * 'l' a list, 'c' a callable, 'b' bytes.  Per state id, its free kinds and its projection
 * class (Automaton.projection_class); the engine's callbacks for misses (and for a state's
 * delegate); the bytes that are never code (vocab._BAD); the trie as flat records of
 * native int32 (VocabTrie.records: per node NODE_REC ints, per child group GROUP_REC, per
 * child KID_REC - one cache line per node instead of one Python int object per field,
 * list and node). */
#define WALKER_REFS(X)                                                                      \
    X(free_kinds, "free", 'l') X(pclass, "pclass", 'l')                                          \
    X(trans_miss, "trans_miss", 'c') X(deleg_miss, "deleg_miss", 'c')                            \
    X(trunc_miss, "trunc_miss", 'c') X(gproj_miss, "gproj_miss", 'c')                            \
    X(cmap_miss, "cmap_miss", 'c') X(bad_bytes, "bad_bytes", 'b')                                \
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

/* -- Map: int64 key -> int64 value, open addressing with linear probing ----------------- */

#define MAP_EMPTY (-1LL) /* no key is negative: every key is built from ids, bytes and ranks */

typedef struct {
    long long *keys, *vals; /* cap slots each; keys MAP_EMPTY where free */
    size_t cap, n;          /* cap a power of two, 2**(64 - shift) */
    int shift, objects;     /* objects: vals are owned PyObject references */
} Map;

/* Fibonacci hashing: the top bits of key * 2**64/phi */
static inline size_t map_slot(const Map *m, long long key) {
    return (size_t)(((unsigned long long)key * 0x9E3779B97F4A7C15ULL) >> m->shift);
}

/* cap slots, every page written now (keys set free, values zeroed) */
static int map_init(Map *m, size_t cap, int objects) {
    size_t c = 64;
    int shift = 58;
    while (c < cap) {
        c <<= 1;
        shift--;
    }
    long long *k = (long long *)PyMem_Malloc(c * sizeof(long long));
    long long *v = (long long *)PyMem_Malloc(c * sizeof(long long));
    if (k == NULL || v == NULL) {
        PyMem_Free(k);
        PyMem_Free(v);
        PyErr_NoMemory();
        return -1;
    }
    memset(k, 0xff, c * sizeof(long long)); /* MAP_EMPTY */
    memset(v, 0, c * sizeof(long long));
    m->keys = k;
    m->vals = v;
    m->cap = c;
    m->n = 0;
    m->shift = shift;
    m->objects = objects;
    return 0;
}

static void map_free(Map *m) {
    if (m->keys != NULL && m->objects)
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i] != MAP_EMPTY)
                Py_DECREF((PyObject *)(intptr_t)m->vals[i]);
    PyMem_Free(m->keys);
    PyMem_Free(m->vals);
    m->keys = m->vals = NULL;
    m->cap = m->n = 0;
}

/* the value of key; 0 when absent */
static inline int map_get(const Map *m, long long key, long long *out) {
    size_t i = map_slot(m, key);
    for (;;) {
        long long k = m->keys[i];
        if (k == key) {
            *out = m->vals[i];
            return 1;
        }
        if (k == MAP_EMPTY)
            return 0;
        i = (i + 1) & (m->cap - 1);
    }
}

static int map_grow(Map *m) {
    Map g;
    if (map_init(&g, m->cap * 2, m->objects) < 0)
        return -1;
    for (size_t i = 0; i < m->cap; i++) {
        long long k = m->keys[i];
        if (k == MAP_EMPTY)
            continue;
        size_t j = map_slot(&g, k);
        while (g.keys[j] != MAP_EMPTY)
            j = (j + 1) & (g.cap - 1);
        g.keys[j] = k;
        g.vals[j] = m->vals[i];
    }
    g.n = m->n;
    PyMem_Free(m->keys);
    PyMem_Free(m->vals);
    *m = g;
    return 0;
}

/* set key (absent) to val; an object map takes a new reference to val */
static int map_put(Map *m, long long key, long long val) {
    if (2 * (m->n + 1) > m->cap && map_grow(m) < 0)
        return -1;
    size_t i = map_slot(m, key);
    while (m->keys[i] != MAP_EMPTY) {
        if (m->keys[i] == key) { /* (not reached by the walk: it puts absent keys only) */
            if (m->objects) {
                Py_INCREF((PyObject *)(intptr_t)val);
                Py_DECREF((PyObject *)(intptr_t)m->vals[i]);
            }
            m->vals[i] = val;
            return 0;
        }
        i = (i + 1) & (m->cap - 1);
    }
    if (m->objects)
        Py_INCREF((PyObject *)(intptr_t)val);
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return 0;
}

typedef struct {
    long long *v; /* pairs, flat */
    Py_ssize_t n; /* pairs */
    Py_ssize_t cap;
} Buf;

typedef struct Level Level;

/* the walker's tables: X(field, share of presize) */
#define WALKER_MAPS(X)                                                                                  \
    X(memo, 2, 1) X(gmemo, 2, 1) X(trans, 2, 0) X(trunc, 1, 0) X(gproj, 1, 0) X(cmaps, 1, 1) X(bad, 1, 0) \
    X(deleg, 1, 0) X(nkids, 1, 0)

typedef struct {
    PyObject_HEAD
#define MAP_FIELD(f, share, obj) Map f;
    WALKER_MAPS(MAP_FIELD)
#undef MAP_FIELD
#define REF_FIELD(f, k, t) PyObject *f;
    WALKER_REFS(REF_FIELD)
#undef REF_FIELD
    const int32_t *nd, *gr, *kd; /* the records of node_recs, group_recs, kid_recs */
    long long nodes, span;       /* nodes: records in node_recs */
    long long walks, memo_hits;
    int depth;
    Level **levels; /* per recursion level, made on first use (level_at) */
    int nlevels;
    Buf all; /* walk's scratch for merging its groups' intervals */
    Buf info; /* per state id a pair: its free kinds and projection class, copied from the
               * engine's lists as they grow (state_info): no Python int read per child */
    /* steps in code compiled (code_step): the engine's list of states and dict of their ids,
     * NULL when the walker calls Python for every step; the automaton's options and tables */
    PyObject *auto_states, *auto_ids;
    long sm_start, tstart;
    long kw_first[256];
    unsigned char after_string_ok[256], klass[256];
    long long csteps; /* steps made here since the last csteps() */
    /* names compiled (name_step): the keyword trie's next positions (a tuple of n_kw * 256
     * ints, -1: none), which bytes are identifier bytes, and Automaton.name_child, whose
     * answers are kept per (table, position, byte) in nkids */
    PyObject *kw_next, *name_child, *name_end, *arg_table;
    long n_kw;
    unsigned char idchar[256];
    unsigned char *kw_word; /* per keyword-trie position: a whole keyword ends there */
    /* comments, strings, numbers: the phrase matchers' steps (callables), the comment
     * matcher's start, _number_next as a table (num_next) and the accepted value states */
    PyObject *cm_step, *sm_step, *num_next, *cm_start_obj, *cm_end, *bm_start_obj, *cm_run_obj, *cm_trail_obj;
    long cm_start;
    unsigned char num_accept[N_NUM_STATES];
} Walker;


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

/* projection_is_identity in automaton.py: is the projection of a state of class pc with these
 * (normalised) arguments the state itself?  Then the walk needs neither a table probe nor a
 * call-back for it (72% of the projections the 152k replay asked for were such). */
#define PC_CLEAN (1LL << 13)
static inline int is_identity(long long pc, long long keep, long long ends, long long drop) {
    return (pc & PC_CLEAN) && keep >= (pc & 63) && drop == 0 && (((pc >> 6) & 31) == 0 || ends != 0);
}

/* callback fn(v[0], ..., v[n - 1]) (n <= 3) -> int into *out; 0, or -1 with an exception */
static int call_lls(PyObject *fn, const long long *v, int n, long long *out) {
    PyObject *args[3] = {NULL, NULL, NULL};
    PyObject *r = NULL;
    for (int i = 0; i < n; i++)
        if ((args[i] = PyLong_FromLongLong(v[i])) == NULL)
            goto done;
    r = PyObject_Vectorcall(fn, args, (size_t)n, NULL);
done:
    for (int i = 0; i < n; i++)
        Py_XDECREF(args[i]);
    if (r == NULL)
        return -1;
    *out = PyLong_AsLongLong(r);
    Py_DECREF(r);
    if (*out == -1 && PyErr_Occurred())
        return -1;
    return 0;
}

/* callback fn(a[, b]) -> int into *out */
static inline int call_ll(PyObject *fn, long long a, long long b, int nargs, long long *out) {
    long long v[2] = {a, b};
    return call_lls(fn, v, nargs, out);
}

static PyObject *walk(Walker *w, long long node, long long sid);

/* the free kinds (into *fk, unless NULL) and the projection class of state sid: the lists
 * free and pclass, which only grow, are copied into the walker's info pairs on first need;
 * -1 with an exception */
static int state_info(Walker *w, long long sid, long long *fk, long long *pc) {
    Buf *info = &w->info;
    if (sid >= info->n) {
        Py_ssize_t n = PyList_GET_SIZE(w->free_kinds);
        if (PyList_GET_SIZE(w->pclass) < n)
            n = PyList_GET_SIZE(w->pclass);
        if (sid < 0 || sid >= n) {
            PyErr_Format(PyExc_IndexError, "walk: state %lld has no free kinds or projection class", sid);
            return -1;
        }
        while (info->n < n) {
            long long a = item_ll(w->free_kinds, info->n), b = item_ll(w->pclass, info->n);
            if (((a == -1 || b == -1) && PyErr_Occurred()) || buf_push(info, a, b) < 0)
                return -1;
        }
    }
    if (fk != NULL)
        *fk = info->v[2 * sid];
    *pc = info->v[2 * sid + 1];
    return 0;
}

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

/* the scratch of one recursion level of the walk, made once and kept by the walker: the
 * transitions of a group's state by byte class (TR_UNKNOWN where not looked up; the classes
 * a call filled are listed in touched, and only those are reset by the next call - resetting
 * all 256 was 9% of the walk's own time in the 152k p99 band) and the group's intervals.
 * (Allocating and freeing them per call made the C heap's top grow and shrink across the
 * trim threshold: perf counted page faults under malloc as the largest part of what the
 * kernel did in the 152k replay.) */
struct Level {
    long long tr[256];
    unsigned char touched[256];
    int ntouched;
    Buf out;
};

static Level *level_at(Walker *w, int d) {
    if (d >= w->nlevels) {
        int n = w->nlevels ? w->nlevels : 16;
        while (n <= d)
            n *= 2;
        Level **lv = (Level **)PyMem_Realloc(w->levels, (size_t)n * sizeof(Level *));
        if (lv == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        for (int i = w->nlevels; i < n; i++)
            lv[i] = NULL;
        w->levels = lv;
        w->nlevels = n;
    }
    if (w->levels[d] == NULL) {
        Level *l = (Level *)PyMem_Calloc(1, sizeof(Level));
        if (l == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        for (int i = 0; i < 256; i++)
            l->tr[i] = TR_UNKNOWN;
        w->levels[d] = l;
    }
    return w->levels[d];
}

/* the byte classes of state sid (256 bytes, or None): a new reference */
static PyObject *cmap_of(Walker *w, long long sid) {
    long long got;
    if (map_get(&w->cmaps, sid, &got)) {
        PyObject *cmap = (PyObject *)(intptr_t)got;
        Py_INCREF(cmap);
        return cmap;
    }
    PyObject *a = PyLong_FromLongLong(sid);
    if (a == NULL)
        return NULL;
    PyObject *args[1] = {a};
    PyObject *cmap = PyObject_Vectorcall(w->cmap_miss, args, 1, NULL);
    Py_DECREF(a);
    if (cmap == NULL)
        return NULL;
    if (cmap != Py_None && (!PyBytes_CheckExact(cmap) || PyBytes_GET_SIZE(cmap) != 256)) {
        PyErr_SetString(PyExc_TypeError, "walk: byte classes must be 256 bytes or None");
        Py_DECREF(cmap);
        return NULL;
    }
    if (map_put(&w->cmaps, sid, (long long)(intptr_t)cmap) < 0) {
        Py_DECREF(cmap);
        return NULL;
    }
    return cmap;
}

/* the class of byte b (0-255) in class map cmap (256 bytes, checked by cmap_of, or None: b
 * itself) */
static inline long long class_in(PyObject *cmap, long long b) {
    return cmap != Py_None ? ((const unsigned char *)PyBytes_AS_STRING(cmap))[b] : b;
}

/* The state after byte class cls from state sid (-1: rejected) into *out; 0, or -1 with an
 * exception.  A state right after `.`, `..`, `:` or `-` (projection class bit PC_DELEG) has
 * a delegate (Automaton.delegate, asked once: _StateTables.deleg_miss packs its id and the
 * bytes that extend the pending token): a class whose representative is not one of those
 * bytes leads where it leads from the delegate, which states differing only in what the
 * delegate drops share - their common transitions are computed once. */
#define PC_DELEG (1LL << 14)

/* -- the automaton's step between tokens in code, compiled -------------------------------
 *
 * Automaton._code (with _operand, _chain_start, _chain_end, _operator and _close, automaton.py)
 * for the walk's steps - not lenient, no frame marked as the model's, no declaration being
 * read, no events, no grounded numbers - written against the same state tuples: the walker
 * steps a state in code itself, builds the next state's tuple and interns it exactly as
 * _StateTables.intern does (the engine's dict of states and its lists of states, free kinds
 * and projection classes), instead of calling back into Python for it.  A state it does
 * not cover (a declaration, events, a number context) goes to Python as before.  The
 * constants are automaton.py's (and brackets.py's, paths.py's, regexdfa.py's), written into
 * _walk_layout.h from the Python definitions at build time.  tests/test_guard_matcher.py steps every byte
 * from every state the walks of sample positions reach both ways and compares. */


#define TI(t, i) PyTuple_GET_ITEM((t), (i))

static inline long as_long(PyObject *o) { return PyLong_AsLong(o); }

/* a new tuple of n items, each a new reference taken from the borrowed items[] */
static PyObject *tuple_of(PyObject *const *items, Py_ssize_t n) {
    PyObject *t = PyTuple_New(n);
    if (t == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(items[i]);
        PyTuple_SET_ITEM(t, i, items[i]);
    }
    return t;
}

/* a state tuple from ten borrowed fields (a new reference) */
static PyObject *state_of(PyObject *mode, PyObject *pay, PyObject *prev, PyObject *flags, PyObject *val,
                          PyObject *stack, PyObject *decl, PyObject *num, PyObject *ifx, PyObject *ev) {
    PyObject *f[10] = {mode, pay, prev, flags, val, stack, decl, num, ifx, ev};
    return tuple_of(f, 10);
}

/* small ints as borrowed references (CPython keeps -5..256 alive) */
static PyObject *INT_CACHE[300];
static inline PyObject *small(long v) { return INT_CACHE[v + 20]; }

/* a frame tuple (kind, res, gen, ifx), a new reference */
static PyObject *frame_of(long kind, PyObject *res, PyObject *gen, PyObject *ifx) {
    PyObject *f[4] = {small(kind), res, gen, ifx};
    return tuple_of(f, 4);
}

/* stack with its top frame replaced by top (stolen), a new reference */
static PyObject *with_top(PyObject *stack, PyObject *top) {
    if (top == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(stack);
    PyObject *t = PyTuple_New(n);
    if (t == NULL) {
        Py_DECREF(top);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n - 1; i++) {
        PyObject *x = TI(stack, i);
        Py_INCREF(x);
        PyTuple_SET_ITEM(t, i, x);
    }
    PyTuple_SET_ITEM(t, n - 1, top);
    return t;
}

/* stack + (frame,) with frame stolen, a new reference */
static PyObject *pushed(PyObject *stack, PyObject *frame) {
    if (frame == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(stack);
    PyObject *t = PyTuple_New(n + 1);
    if (t == NULL) {
        Py_DECREF(frame);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = TI(stack, i);
        Py_INCREF(x);
        PyTuple_SET_ITEM(t, i, x);
    }
    PyTuple_SET_ITEM(t, n, frame);
    return t;
}

/* _chain_start / _chain_end (typed False) without a declaration: the stack after them, a
 * new reference (the same tuple when unchanged) */
static PyObject *chain_step(PyObject *stack, int end) {
    Py_ssize_t n = PyTuple_GET_SIZE(stack);
    if (n) {
        PyObject *top = TI(stack, n - 1);
        if (as_long(TI(top, 0)) == K_GROUP && as_long(TI(top, 1)) == (end ? G_CHAIN : G_FRESH))
            return with_top(stack, frame_of(K_GROUP, small(end ? G_IMPURE : G_CHAIN), TI(top, 2), TI(top, 3)));
    }
    Py_INCREF(stack);
    return stack;
}

/* _operand: an operand other than an identifier starts */
static inline PyObject *operand(int after, PyObject *stack) { return chain_step(stack, after); }

/* Automaton.free_kind of a state the compiled steps make (code, identifier, number, quoted,
 * interpolated and long strings, comments, a lookup's or index's argument and what follows
 * its name string, pending punctuation; names and name strings pass theirs to
 * intern_state, which need the name table) */
static long free_kind_of(long mode, PyObject *pay) {
    if (mode == M_CODE || mode == M_LARG || mode == M_IARG || mode == M_AFTER)
        return FK_BLANK;
    if (mode == M_LCMT)
        return (as_long(pay) >> 2) == 0 ? F_LCMT : 0;
    if (mode == M_BCMT)
        return as_long(TI(pay, 1)) < 0 && (as_long(TI(pay, 2)) >> 2) == 0 ? F_BCMT : 0;
    if (mode == M_LSTR)
        return as_long(TI(pay, 1)) < 0 && (as_long(TI(pay, 2)) >> 2) == 0 ? F_LSTR : 0;
    if (mode == M_IDENT)
        return as_long(TI(pay, 2)) & I_AFTER_STRING ? 0 : F_IDENT;
    if (mode == M_STR) {
        long quote = as_long(TI(pay, 0)), esc = as_long(TI(pay, 1)), ac = as_long(TI(pay, 2)),
             trig = as_long(TI(pay, 3)), idn = as_long(TI(pay, 4));
        if (esc || trig != -2 || idn >= 0 || ac >> 2)
            return 0;
        return quote == 0x22 ? FK_DQ : FK_SQ;
    }
    if (mode == M_INTERP) {
        long esc = as_long(TI(pay, 0)), ac = as_long(TI(pay, 1)), trig = as_long(TI(pay, 2)), idn = as_long(TI(pay, 3));
        return !esc && trig == -2 && idn < 0 && (ac >> 2) == 0 ? FK_INTERP : 0;
    }
    return 0;
}

/* Automaton.projection_class of such a state (no declaration, no events) */
static long pclass_of(PyObject *s) {
    long mode = as_long(TI(s, 0));
    PyObject *stack = TI(s, 5);
    Py_ssize_t n = PyTuple_GET_SIZE(stack);
    long out = n < 63 ? (long)n : 63;
    if (n < 63) {
        int clean = 1;
        for (Py_ssize_t i = 0; i < n && clean; i++) {
            PyObject *f = TI(stack, i);
            if (as_long(TI(f, 2)))
                clean = 0;
        }
        if (clean)
            out |= PC_CLEAN;
    }
    if (mode == M_DOT1 || mode == M_DOT2 || mode == M_COLON || mode == M_DASH)
        out |= PC_DELEG;
    if (mode == M_STR)
        out |= (as_long(TI(TI(s, 1), 0)) == 0x22 ? END_DQ : END_SQ) << 6;
    else if (mode == M_INTERP)
        out |= END_BT << 6;
    else if (mode == M_LCMT)
        out |= (long)END_NL << 6;
    else if (mode == M_LSTR || mode == M_BCMT)
        out |= (long)END_RB << 6;
    else if (mode == M_CODE) {
        if (as_long(TI(s, 4)) != NOVAL)
            out |= 1L << 11;
        if (as_long(TI(s, 3)) & ~F_KEPT)
            out |= 1L << 12;
    }
    return out;
}

/* _after in automaton.py: a token of class prev ends an expression (a name, a call result, a
 * value, a string) */
static inline int after_expr(long prev) {
    return prev == P_NAME || prev == P_CALLABLE || prev == P_VAL || prev == P_STRING;
}

/* does state s read no declaration and no events (what the compiled steps cover)? */
static inline int plain_state(PyObject *s) {
    PyObject *ev = TI(s, 9);
    return TI(s, 6) == Py_None && PyTuple_CheckExact(ev) && PyTuple_GET_SIZE(ev) == 0;
}

/* state s's payload when it is a tuple of n items, else NULL (a payload these steps do not
 * know: Python steps the state) */
static inline PyObject *pay_of(PyObject *s, Py_ssize_t n) {
    PyObject *pay = TI(s, 1);
    return PyTuple_CheckExact(pay) && PyTuple_GET_SIZE(pay) == n ? pay : NULL;
}

/* is byte b white space or a line break (_WSB in automaton.py)? */
static inline int is_space(const Walker *w, long b) { return w->klass[b] == C_WS || w->klass[b] == C_NL; }

/* Automaton._code for state s (mode M_CODE) and byte b: 1 with *out the next state (a new
 * reference) or NULL (rejected); 0 when s is not one this covers (Python steps it); -1 with
 * an exception. */
static int code_step(Walker *w, PyObject *s, long b, PyObject **out) {
    PyObject *decl = TI(s, 6), *ev = TI(s, 9), *numo = TI(s, 7);
    *out = NULL;
    if (!plain_state(s) || as_long(numo) != 0)
        return 0;
    long prev = as_long(TI(s, 2)), flags = as_long(TI(s, 3));
    PyObject *val = TI(s, 4), *stack = TI(s, 5), *ifx = TI(s, 8);
    if (!PyTuple_CheckExact(stack))
        return 0;
    long v = as_long(val);
    if (PyErr_Occurred())
        return -1;
    /* headers, parameter lists, type aliases, loops' names, attributes, comment paragraphs,
     * a `...` that must not stand alone, `type`/`export`: Python steps those */
    if (prev >= P_FNAME || prev == P_FUNCTION || (flags & ~(F_NL | F_IOPEN)) || b == 0x40)
        return 0;
    if (flags & F_IOPEN) {
        if (b == 0x7B || b == 0x7D)
            return 1;
        flags &= ~F_IOPEN;
    }
    int cls = w->klass[b];
    PyObject *z = small(0);
    if (cls == C_WS || cls == C_NL) {
        if (cls == C_NL)
            flags |= F_NL;
        *out = state_of(small(M_CODE), z, small(prev), small(flags), val, stack, decl, numo, ifx, ev);
        return *out ? 1 : -1;
    }
    int after = after_expr(prev);
    int callable_ = prev == P_NAME || prev == P_CALLABLE;
    Py_ssize_t n = PyTuple_GET_SIZE(stack);
    long topk = n ? as_long(TI(TI(stack, n - 1), 0)) : 0;
    if (topk >= K_PARAMS)
        return 0; /* a parameter list, `typeof(`, a projection's stand-in on top: Python */
    int in_brackets = n && (topk == K_CALL || topk == K_GROUP || topk == K_INDEX || topk == K_TABLE);
    int literal_in_brackets = (prev == P_STRING || prev == P_VAL) && in_brackets;
    if (literal_in_brackets &&
        (cls == C_DIGIT || b == 0x22 || b == 0x27 || b == 0x28 || b == 0x7B || b == 0x60))
        return 1;
    PyObject *st = NULL, *pay = NULL;
    if (cls == C_IDSTART) {
        long bits = (after ? I_JUXT : 0) | (prev == P_PRE || prev == P_THEN_EXPR ? I_EXPRPOS : 0);
        if (literal_in_brackets && prev == P_STRING) {
            if (!w->after_string_ok[b])
                return 1;
            bits |= I_AFTER_STRING;
        }
        st = chain_step(stack, after);
        PyObject *kw = PyLong_FromLong(w->kw_first[b]);
        if (st == NULL || kw == NULL) {
            Py_XDECREF(st);
            Py_XDECREF(kw);
            return -1;
        }
        PyObject *p[4] = {kw, small(ATTACH_MAYBE), small(bits), z};
        pay = tuple_of(p, 4);
        Py_DECREF(kw);
        if (pay != NULL)
            *out = state_of(small(M_IDENT), pay, small(P_NONE), z, small(NOVAL), st, decl, z, ifx, ev);
        goto built;
    }
    if (cls == C_DIGIT) {
        st = operand(after, stack);
        PyObject *p[2] = {z /* PH1 */, small(b == 0x30 ? S_Z : S_D)};
        pay = st != NULL ? tuple_of(p, 2) : NULL;
        if (pay != NULL)
            *out = state_of(small(M_NUM), pay, small(P_NONE), z, small(NOVAL), st, decl, z, ifx, ev);
        goto built;
    }
    if (cls == C_BAD)
        return 1;
    long pend = -1; /* a token the next byte may extend: the state is s in that mode */
    switch (b) {
    case 0x2E:
        pend = M_DOT1;
        break;
    case 0x3A:
        pend = M_COLON;
        break;
    case 0x2D:
        pend = M_DASH;
        break;
    case 0x7E:
        pend = M_TILDE;
        break;
    case 0x5B:
        if (callable_ && v == POISON)
            return 1;
        pend = M_LBRACK;
        break;
    default:
        break;
    }
    if (pend >= 0) {
        *out = state_of(small(pend), z, small(prev), small(flags), val, stack, decl, numo, ifx, ev);
        return *out ? 1 : -1;
    }
    if (b == 0x22 || b == 0x27) {
        st = callable_ ? (Py_INCREF(stack), stack) : operand(after, stack);
        long res = callable_ ? NOVAL : LITERAL; /* a call's result: unknown to the linter */
        PyObject *p[6] = {small(b), z, small(w->sm_start), small(w->tstart), small(-1), small(res)};
        pay = st != NULL ? tuple_of(p, 6) : NULL;
        if (pay != NULL)
            *out = state_of(small(M_STR), pay, small(P_NONE), z, small(NOVAL), st, decl, z, ifx, ev);
        goto built;
    }
    if (b == 0x60) {
        st = operand(after, stack);
        PyObject *p[4] = {z, small(w->sm_start), small(w->tstart), small(-1)};
        pay = st != NULL ? tuple_of(p, 4) : NULL;
        if (pay != NULL)
            *out = state_of(small(M_INTERP), pay, small(P_NONE), z, small(NOVAL), st, decl, z, ifx, ev);
        goto built;
    }
    if (b == 0x28 || b == 0x7B) {
        PyObject *frame;
        if (callable_) { /* a call, or a table argument (`f{...}`): the chain goes on */
            st = (Py_INCREF(stack), stack);
            frame = b == 0x28 ? frame_of(K_CALL, small(NOVAL), z, ifx)
                              : frame_of(K_TABLE, small(1), z, ifx); /* (res 1: its `}` ends a call) */
        } else {
            st = operand(after, stack);
            frame = b == 0x28 ? frame_of(K_GROUP, small(G_FRESH), z, ifx) : frame_of(K_TABLE, z, z, ifx);
        }
        if (st == NULL) {
            Py_XDECREF(frame);
            return -1;
        }
        PyObject *st2 = pushed(st, frame);
        Py_DECREF(st);
        st = st2;
        if (st != NULL)
            *out = state_of(small(M_CODE), z, small(P_PRE), z, small(NOVAL), st, decl, z, z, ev);
        goto built;
    }
    if (b == 0x29 || b == 0x5D || b == 0x7D) { /* _close, not lenient */
        int ok = b == 0x29 ? (topk == K_CALL || topk == K_GROUP) : b == 0x5D ? topk == K_INDEX
                                                                             : (topk == K_TABLE || topk == K_INTERP);
        if (!n || !ok)
            return 1;
        PyObject *top = TI(stack, n - 1);
        PyObject *res = small(NOVAL);
        if (topk == K_GROUP) {
            PyObject *g = TI(top, 1);
            long gs = as_long(g);
            if (gs == G_CHAIN)
                res = callable_ ? val : small(NOVAL);
            else if (gs >= POISON)
                res = g;
        } else if (topk == K_CALL || topk == K_INDEX) {
            res = TI(top, 1);
        }
        st = PyTuple_GetSlice(stack, 0, n - 1);
        if (st == NULL)
            return -1;
        if (topk == K_GROUP || topk == K_CALL || topk == K_INDEX) {
            *out = state_of(small(M_CODE), z, small(P_CALLABLE), z, res, st, decl, z, TI(top, 3), ev);
        } else if (topk == K_INTERP) {
            PyObject *p[4] = {z, small(w->sm_start), small(w->tstart), small(-1)};
            pay = tuple_of(p, 4);
            if (pay != NULL)
                *out = state_of(small(M_INTERP), pay, small(P_NONE), z, small(NOVAL), st, decl, z, TI(top, 3), ev);
        } else {
            long after_table = topk == K_TABLE && as_long(TI(top, 1)) ? P_CALLABLE : P_VAL;
            *out = state_of(small(M_CODE), z, small(after_table), z, small(NOVAL), st, decl, z, TI(top, 3), ev);
        }
        goto built;
    }
    /* operators: the one-byte ones after which an operand comes (_PRE_OPS), `;` and the type
     * operators (_TYPE_OPS) */
    long opcls;
    if (b == 0x3B || b == 0x26 || b == 0x7C || b == 0x3F)
        opcls = P_OTHER;
    else if (b == 0x2B || b == 0x2A || b == 0x2F || b == 0x25 || b == 0x5E || b == 0x23 || b == 0x3C || b == 0x3E ||
             b == 0x3D || b == 0x2C)
        opcls = P_PRE;
    else
        return 0; /* (unclassified: let Python raise) */
    st = after ? chain_step(stack, 1) : (Py_INCREF(stack), stack);
    if (st != NULL)
        *out = state_of(small(M_CODE), z, small(opcls), z, small(NOVAL), st, decl, z, ifx, ev);
built:
    Py_XDECREF(st);
    Py_XDECREF(pay);
    return *out != NULL ? 1 : -1;
}


#define FK_IDENT 1

#define NAME_END_KEY (1LL << 39)
#define NE_PYTHON (-(1LL << 40))
#define NE_REJECT (NE_PYTHON + 1)
#define NE_DEFAULT (NE_PYTHON + 2)

/* Automaton.name_child(table, pos, b) (b < 256), or Automaton.name_end(table, pos) (b 256),
 * asked once and kept in nkids: 0 with *r, -1 with an exception */
static int name_ask(Walker *w, long table, long pos, long b, long long *r) {
    long long key = ((long long)table << 40) | ((long long)pos << 8) | (b < 256 ? b : NAME_END_KEY);
    if (map_get(&w->nkids, key, r))
        return 0;
    long long v[3] = {table, pos, b};
    if (call_lls(b < 256 ? w->name_child : w->name_end, v, b < 256 ? 3 : 2, r) < 0)
        return -1;
    if (b < 256 ? *r < -2 : (*r < NE_PYTHON || (*r > NE_DEFAULT && *r < -20))) {
        PyErr_Format(PyExc_ValueError, "walk: %s gave %lld", b < 256 ? "name_child" : "name_end", *r);
        return -1;
    }
    return map_put(&w->nkids, key, *r);
}

/* code_step from a state in code made of s's stack, declaration, ifx and events with prev,
 * val (borrowed) and num N_NONE: as name_step's and lbrack_step's Python counterparts end,
 * calling Automaton._code */
static int code_from(Walker *w, PyObject *s, long prev, PyObject *val, PyObject *stack, PyObject *ifx, long b,
                     PyObject **out) {
    PyObject *z = small(0);
    PyObject *mid = state_of(small(M_CODE), z, small(prev), z, val, stack, TI(s, 6), z, ifx, TI(s, 9));
    if (mid == NULL)
        return -1;
    int r = code_step(w, mid, b, out);
    Py_DECREF(mid);
    return r;
}


/* a name table position packed by Automaton.name_child (r >= 0) as two new int references
 * *table and *pos; 0, or -1 with an exception (nothing to release then) */
static int unpack_position(long long r, PyObject **table, PyObject **pos) {
    *table = PyLong_FromLongLong(r >> 34);
    *pos = PyLong_FromLongLong((r >> 2) & 0xFFFFFFFFLL);
    if (*table == NULL || *pos == NULL) {
        Py_CLEAR(*table);
        Py_CLEAR(*pos);
        return -1;
    }
    return 0;
}

/* *out = state (a new reference or NULL with an exception): a step's result, 1 or -1 */
static inline int put(PyObject **out, PyObject *state) {
    *out = state;
    return state != NULL ? 1 : -1;
}

/* Automaton._name, not lenient, asset ids not tracked (then the payload's `tail` is always
 * 0): inside a started name (payload `started` 1) an identifier byte advances the keyword
 * trie and moves the position to the child of the name table's position
 * (Automaton.name_child, asked once per table, position and byte) or off the table when it
 * is free, and any other byte ends the name (Automaton.name_end: its value, then the byte in
 * code; a lookup method's name goes to Python); before the name (`started` 0 after `.`, 2
 * after `:`) white space leaves the state as it is, a name's first byte starts it, and
 * any other byte is rejected after `.` and read in code after `:`.  1 with *out the
 * next state (a new reference; NULL: rejected) and *fk its free kind (-1: not known here),
 * 0 when Python must step it, -1 with an exception. */
static int name_step(Walker *w, PyObject *s, long b, PyObject **out, long *fk) {
    *out = NULL;
    *fk = -1;
    PyObject *pay = w->name_child != NULL ? pay_of(s, 6) : NULL; /* (NULL: Python steps it) */
    if (pay == NULL)
        return 0;
    long table = as_long(TI(pay, 0)), pos = as_long(TI(pay, 1)), started = as_long(TI(pay, 2)),
         kw = as_long(TI(pay, 4)), tail = as_long(TI(pay, 5));
    if (PyErr_Occurred())
        return -1;
    if (tail != 0 || kw >= w->n_kw || (table >= 0 && pos < 0) || table >= (1L << 21) || pos >= (1L << 31))
        return 0;
    PyObject *base = TI(pay, 3);
    if (started == 1 && !w->idchar[b]) { /* the name ends (Automaton._name's tail) */
        if (kw >= 0 && w->kw_word[kw])
            return 1; /* `x.end`: a keyword is not a name */
        long long res = NE_DEFAULT;
        if (table >= 0 && name_ask(w, table, pos, 256, &res) < 0)
            return -1;
        if (res == NE_PYTHON)
            return 0; /* a lookup method's name: its `(` is read in Python */
        if (res == NE_REJECT)
            return 1;
        PyObject *own = NULL, *rv = small(as_long(base) == POISON ? POISON : NOVAL);
        if (res != NE_DEFAULT && (rv = own = PyLong_FromLongLong(res)) == NULL)
            return -1;
        int r = code_from(w, s, P_NAME, rv, TI(s, 5), TI(s, 8), b, out);
        Py_XDECREF(own);
        return r;
    }
    long first = started != 1; /* the name's first byte (after `.`, or `:` with started 2) */
    if (first) {
        if (is_space(w, b)) { /* white space before the name: the same state */
            *fk = FK_BLANK;
            Py_INCREF(s);
            *out = s;
            return 1;
        }
        if (started != 0 && started != 2)
            return 0;
        if (w->klass[b] != C_IDSTART) { /* after `:`, a type annotation (`x: {`); after `.`, rejected */
            if (started == 0)
                return 1;
            return code_from(w, s, P_OTHER, small(NOVAL), TI(s, 5), TI(s, 8), b, out);
        }
        if (started == 2 && as_long(base) == POISON)
            return 1; /* a method of a value the guard cannot know */
        kw = 0;
        pos = 0;
    }
    long nkw = -1;
    if (kw >= 0) {
        nkw = as_long(PyTuple_GET_ITEM(w->kw_next, kw * 256 + b));
        if (nkw == -1 && PyErr_Occurred())
            return -1;
    }
    PyObject *ntable, *npos, *nbase = base;
    PyObject *owned[2] = {NULL, NULL};
    if (table < 0 && first) {
        *fk = FK_IDENT;
        ntable = npos = small(-1);
        nbase = small(as_long(base) == POISON ? POISON : NOVAL);
    } else if (table < 0) {
        *fk = FK_IDENT;
        if (nkw == kw) { /* the same state */
            Py_INCREF(s);
            *out = s;
            return 1;
        }
        ntable = TI(pay, 0);
        npos = TI(pay, 1);
    } else {
        long long r;
        if (name_ask(w, table, pos, b, &r) < 0)
            return -1;
        if (r == -1)
            return 1; /* not a name of the closed table */
        if (r == -2) { /* off the table: any name, whose value is unknown */
            *fk = FK_IDENT;
            ntable = npos = small(-1);
            nbase = small(as_long(base) == POISON ? POISON : NOVAL);
        } else {
            *fk = (r & 1) ? FK_IDENT : 0;
            if (first && (r & 2) && as_long(base) >= 0)
                nbase = small(NOVAL); /* the table reads no value at the name's end */
            if (unpack_position(r, &owned[0], &owned[1]) < 0)
                return -1;
            ntable = owned[0];
            npos = owned[1];
        }
    }
    PyObject *kwo = PyLong_FromLong(nkw);
    PyObject *p[6] = {ntable, npos, small(1), nbase, kwo, small(0)};
    PyObject *npay = kwo != NULL ? tuple_of(p, 6) : NULL;
    Py_XDECREF(kwo);
    Py_XDECREF(owned[0]);
    Py_XDECREF(owned[1]);
    if (npay == NULL)
        return -1;
    *out = state_of(TI(s, 0), npay, TI(s, 2), TI(s, 3), TI(s, 4), TI(s, 5), TI(s, 6), TI(s, 7), TI(s, 8), TI(s, 9));
    Py_DECREF(npay);
    return *out != NULL ? 1 : -1;
}


/* a state of mode `mode` with payload pay (stolen; NULL passes through) inside a lookup's or
 * an index's argument: no previous token, value or flags, s's stack, declaration, frame
 * context and events (a name string, or what follows its closing quote) */
static PyObject *arg_state(PyObject *s, long mode, PyObject *pay) {
    if (pay == NULL)
        return NULL;
    PyObject *z = small(0);
    PyObject *st = state_of(small(mode), pay, small(P_NONE), z, small(NOVAL), TI(s, 5), TI(s, 6), z, TI(s, 8), TI(s, 9));
    Py_DECREF(pay);
    return st;
}

/* Automaton._name_string, not lenient, inside a lookup's or an index's name string for a
 * byte that is neither its quote nor a byte that ends it badly (those go to Python): the
 * position moves to the child of the table's position (name_ask), off a free table, or the
 * byte is rejected.  As name_step's result. */
static int nstr_step(Walker *w, PyObject *s, long b, PyObject **out, long *fk) {
    *out = NULL;
    *fk = -1;
    PyObject *pay = w->name_child != NULL ? pay_of(s, 4) : NULL; /* (NULL: Python steps it) */
    if (pay == NULL)
        return 0;
    long table = as_long(TI(pay, 0)), pos = as_long(TI(pay, 1)), quote = as_long(TI(pay, 2));
    if (PyErr_Occurred())
        return -1;
    if (b == 0x5C || b < 0x20 || b == 0x7F)
        return 1; /* ends the name string badly (the walk's steps are not lenient) */
    if ((table >= 0 && pos < 0) || table >= (1L << 21) || pos >= (1L << 31))
        return 0;
    if (b == quote) { /* the closing quote: the value the name has (Automaton.name_end) */
        long long r = NE_DEFAULT;
        if (table >= 0 && name_ask(w, table, pos, 256, &r) < 0)
            return -1;
        if (r == NE_PYTHON)
            return 0;
        if (r == NE_REJECT)
            return 1;
        if (r == DESC && as_long(TI(pay, 3)) == A_STRCALL)
            return 1; /* `x:FindFirstChild "Name"`: a descendant's name needs `, true` */
        PyObject *res = PyLong_FromLongLong(r == NE_DEFAULT ? NOVAL : r);
        if (res == NULL)
            return -1;
        PyObject *p[2] = {res, TI(pay, 3)};
        PyObject *np = tuple_of(p, 2);
        Py_DECREF(res);
        return put(out, arg_state(s, M_AFTER, np));
    }
    if (table < 0) { /* any name: the same state */
        *fk = F_NSTR;
        Py_INCREF(s);
        *out = s;
        return 1;
    }
    long long r;
    if (name_ask(w, table, pos, b, &r) < 0)
        return -1;
    if (r == -1)
        return 1;
    PyObject *owned[2] = {NULL, NULL}, *ntable, *npos;
    if (r == -2) {
        *fk = 2;
        ntable = npos = small(-1);
    } else {
        *fk = (r & 1) ? 2 : 0;
        if (unpack_position(r, &owned[0], &owned[1]) < 0)
            return -1;
        ntable = owned[0];
        npos = owned[1];
    }
    PyObject *p[4] = {ntable, npos, TI(pay, 2), TI(pay, 3)};
    PyObject *npay = tuple_of(p, 4);
    Py_XDECREF(owned[0]);
    Py_XDECREF(owned[1]);
    if (npay == NULL)
        return -1;
    *out = state_of(TI(s, 0), npay, TI(s, 2), TI(s, 3), TI(s, 4), TI(s, 5), TI(s, 6), TI(s, 7), TI(s, 8), TI(s, 9));
    Py_DECREF(npay);
    return *out != NULL ? 1 : -1;
}

/* Automaton._lbrack, not lenient, for a byte after `[` that is neither `[` nor `=` (those
 * go to Python): an index opens (a frame K_INDEX) and the byte is read in code, or - after
 * a literal - rejected; an index on an instance value (its name string) goes to Python.
 * As code_step's result. */
static PyObject *with_pay(PyObject *s, long mode, PyObject *pay);

/* Automaton._long_string_start: `[[` or `[=...=[` (level `=`s) from state s (mode M_LBRACK
 * or M_LBRACK_EQ) opens a long string; 0 where a declaration or events are being read */
static int long_string_start(Walker *w, PyObject *s, long level, PyObject **out) {
    if (!plain_state(s))
        return 0;
    PyObject *ev = TI(s, 9);
    long prev = as_long(TI(s, 2));
    int call = prev == P_NAME || prev == P_CALLABLE;
    PyObject *stack = TI(s, 5);
    if (call)
        Py_INCREF(stack);
    else
        stack = operand(after_expr(prev), stack);
    if (stack == NULL)
        return -1;
    PyObject *p[4] = {small(level), small(-1), small(w->sm_start), small(call ? 0 : 1)};
    PyObject *pay = tuple_of(p, 4);
    PyObject *z = small(0);
    PyObject *st = pay == NULL ? NULL
                               : state_of(small(M_LSTR), pay, small(P_NONE), z, small(NOVAL), stack, Py_None, z, TI(s, 8), ev);
    Py_XDECREF(pay);
    Py_DECREF(stack);
    return put(out, st);
}

/* the mode M_LBRACK_EQ (`[` and `=`s read; the level in the payload): another `=` (at most
 * 32), or `[`; anything else is rejected (the walk's steps are not lenient) */
static int lbrack_eq_step(Walker *w, PyObject *s, long b, PyObject **out) {
    *out = NULL;
    long level = as_long(TI(s, 1));
    if (b == 0x3D)
        return level >= 32 ? 1 : put(out, with_pay(s, M_LBRACK_EQ, PyLong_FromLong(level + 1)));
    if (b == 0x5B)
        return long_string_start(w, s, level, out);
    return 1;
}

/* Automaton._name_arg: byte b, the first of a lookup's argument (after A_CALL) or an
 * index's (A_INDEX) on value base read from state s (mode M_LARG or M_IARG, or the M_IARG
 * state lbrack_step makes: a new reference held by the caller): white space leaves s as it
 * is, a quote starts a name string matched against the (base, kind) name table
 * (Automaton.arg_table, asked once per base and kind), a long or interpolated string is
 * rejected, anything else starts an expression */
static int name_arg(Walker *w, PyObject *s, long b, long base, long kind, long after, PyObject **out, long *fk) {
    *out = NULL;
    if (is_space(w, b)) {
        Py_INCREF(s);
        *out = s;
        return 1;
    }
    if (b == 0x22 || b == 0x27) {
        if (w->arg_table == NULL || base < 0 || base >= (1L << 40) || kind < 0 || kind > 7)
            return 0;
        long long key = (3LL << 60) | ((long long)base << 3) | kind, tf;
        if (!map_get(&w->nkids, key, &tf)) {
            if (call_ll(w->arg_table, base, kind, 2, &tf) < 0 || map_put(&w->nkids, key, tf) < 0)
                return -1;
        }
        if (tf < 0)
            return 1;
        PyObject *to = PyLong_FromLongLong(tf >> 1);
        if (to == NULL)
            return -1;
        PyObject *p[4] = {to, small(0), small(b), small(after)};
        PyObject *pay = tuple_of(p, 4);
        Py_DECREF(to);
        *fk = tf & 1 ? F_NSTR : 0;
        return put(out, arg_state(s, M_NSTR, pay));
    }
    if (b == 0x5B) /* a long string: the name could not be checked; an interpolated one is code */
        return 1;
    return code_from(w, s, P_PRE, small(NOVAL), TI(s, 5), TI(s, 8), b, out);
}

/* Automaton._after_arg: after a lookup's or an index's name string (mode M_AFTER, payload
 * (result, after)): white space, the `)` or `,` of the lookup's call, the `]` of the index,
 * or anything else following the string as code */
static int after_arg(Walker *w, PyObject *s, long b, PyObject **out) {
    *out = NULL;
    PyObject *pay = pay_of(s, 2), *stack = TI(s, 5), *z = small(0);
    if (pay == NULL || !PyTuple_CheckExact(stack) || as_long(TI(pay, 1)) == A_STRCALL)
        return 0; /* (a string call's end: Python) */
    if (is_space(w, b)) {
        Py_INCREF(s);
        *out = s;
        return 1;
    }
    PyObject *res = TI(pay, 0);
    long after = as_long(TI(pay, 1));
    Py_ssize_t n = PyTuple_GET_SIZE(stack);
    long topk = n ? as_long(TI(TI(stack, n - 1), 0)) : -1;
    if (after == A_CALL && b == 0x29 && topk == K_CALL && as_long(res) == DESC)
        return 1; /* a name FindFirstChild finds only as a descendant, without `, true` */
    if ((after == A_CALL && b == 0x29 && topk == K_CALL) || (after != A_CALL && b == 0x5D && topk == K_INDEX)) {
        PyObject *top = TI(stack, n - 1);
        PyObject *st = PyTuple_GetSlice(stack, 0, n - 1);
        if (st == NULL)
            return -1;
        PyObject *r = state_of(small(M_CODE), z, small(P_CALLABLE), z, res, st, TI(s, 6), z, TI(top, 3), TI(s, 9));
        Py_DECREF(st);
        return put(out, r);
    }
    if (after == A_CALL && b == 0x2C && topk == K_CALL) {
        PyObject *top = TI(stack, n - 1);
        PyObject *st = with_top(stack, frame_of(K_CALL, as_long(res) == DESC ? small(NOVAL) : res, TI(top, 2),
                                                TI(top, 3)));
        if (st == NULL)
            return -1;
        int r = code_from(w, s, P_STRING, small(NOVAL), st, TI(s, 8), b, out);
        Py_DECREF(st);
        return r;
    }
    return code_from(w, s, P_STRING, small(NOVAL), stack, TI(s, 8), b, out);
}

static int lbrack_step(Walker *w, PyObject *s, long b, PyObject **out, long *fk) {
    *out = NULL;
    if (b == 0x5B)
        return long_string_start(w, s, 0, out);
    if (b == 0x3D)
        return put(out, with_pay(s, M_LBRACK_EQ, PyLong_FromLong(1)));
    long prev = as_long(TI(s, 2)), v = as_long(TI(s, 4));
    if (PyErr_Occurred())
        return -1;
    PyObject *stack = TI(s, 5), *z = small(0);
    if (!PyTuple_CheckExact(stack))
        return 0;
    if (prev == P_NAME || prev == P_CALLABLE) {
        if (v >= 0) { /* an index on an instance: its argument, as from the state M_IARG */
            PyObject *st = pushed(stack, frame_of(K_INDEX, small(NOVAL), z, TI(s, 8)));
            PyObject *iarg = st == NULL ? NULL
                                        : state_of(small(M_IARG), TI(s, 4), small(P_NONE), z, small(NOVAL), st, TI(s, 6), z,
                                                   z, TI(s, 9));
            Py_XDECREF(st);
            if (iarg == NULL)
                return -1;
            int r = name_arg(w, iarg, b, v, KIND_BRACKET, A_INDEX, out, fk);
            Py_DECREF(iarg);
            return r;
        }
    } else if (prev == P_VAL || prev == P_STRING) {
        return 1; /* a literal cannot be indexed */
    }
    /* (after a name or call the frame's result is POISON for a POISON value, else NOVAL) */
    PyObject *res = small((prev == P_NAME || prev == P_CALLABLE) && v == POISON ? POISON : NOVAL);
    PyObject *st = pushed(stack, frame_of(K_INDEX, res, z, TI(s, 8)));
    if (st == NULL)
        return -1;
    int r = code_from(w, s, P_PRE, small(NOVAL), st, z, b, out);
    Py_DECREF(st);
    return r;
}


/* PhraseMatcher.step of the comment (which 0) or string (1) matcher: asked once per state
 * and byte, kept in nkids (keys with bit 62 set); 1 with *out (-1: BANNED), 0 for a state
 * this does not key (negative or past 30 bits: the caller leaves the step to Python), -1
 * with an exception - the steps' own convention, so a caller returns anything but 1 */
static int phrase_ask(Walker *w, int which, long ac, long b, long long *out) {
    if (ac < 0 || ac >= (1L << 30))
        return 0;
    long long key = (1LL << 62) | ((long long)which << 60) | ((long long)ac << 8) | b;
    if (map_get(&w->nkids, key, out))
        return 1;
    if (call_ll(which ? w->sm_step : w->cm_step, ac, b, 2, out) < 0 || map_put(&w->nkids, key, *out) < 0)
        return -1;
    return 1;
}

/* CommentMatcher.end of the line-comment matcher: may a comment end in state ac (no rule
 * matches it as a whole)?  Asked once per state and kept in nkids (bits 62 and 61); 1 with
 * *ok, 0 for a state this does not key, -1 with an exception */
static int phrase_end(Walker *w, long ac, int *ok) {
    if (ac < 0 || ac >= (1L << 30))
        return 0;
    long long key = (1LL << 62) | (1LL << 61) | ac, got;
    if (!map_get(&w->nkids, key, &got)) {
        PyObject *r = PyObject_CallFunction(w->cm_end, "l", ac);
        if (r == NULL)
            return -1;
        got = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (got < 0 || map_put(&w->nkids, key, got) < 0)
            return -1;
    }
    *ok = (int)got;
    return 1;
}

/* the line-comment matcher's step where a ban is read on (`[` and `=` right after `--`:
 * Automaton._cm_step): 0 on BANNED */
static int cm_step_on(Walker *w, long ac, long b, long long *out) {
    int pa = phrase_ask(w, 0, ac, b, out);
    if (pa == 1 && *out == -1)
        *out = 0;
    return pa;
}

/* a new state: s with mode and payload replaced (payload stolen) */
static PyObject *with_pay(PyObject *s, long mode, PyObject *pay) {
    if (pay == NULL)
        return NULL;
    PyObject *out = state_of(small(mode), pay, TI(s, 2), TI(s, 3), TI(s, 4), TI(s, 5), TI(s, 6), TI(s, 7), TI(s, 8),
                             TI(s, 9));
    Py_DECREF(pay);
    return out;
}

/* Automaton._end_comment for a line comment: code after the line break b that ends it (F_CMT:
 * a comment on the next line continues the paragraph; F_CR: the break was a \r) */
static PyObject *end_comment(PyObject *s, long b) {
    long flags = as_long(TI(s, 3)) | F_NL | F_CMT;
    flags = b == 13 ? (flags | F_CR) : (flags & ~F_CR);
    PyObject *f = PyLong_FromLong(flags);
    if (f == NULL)
        return NULL;
    PyObject *out = state_of(small(M_CODE), small(0), TI(s, 2), f, TI(s, 4), TI(s, 5), TI(s, 6), TI(s, 7), TI(s, 8),
                             TI(s, 9));
    Py_DECREF(f);
    return out;
}

/* Automaton.step in a line comment (M_LCMT), right after `--` (M_CSTART) and after `--[`
 * and `=`s (M_CLB), not lenient: `[` after `--` and `[`/`=` after `--[` may go on to a long
 * comment (whose body goes to Python); otherwise a line break ends the comment and any other
 * byte is the comment matcher's step (phrase_ask) in a line comment.  As code_step's
 * result. */
static int comment_step(Walker *w, PyObject *s, long mode, long b, PyObject **out) {
    *out = NULL;
    if (w->cm_step == NULL || as_long(TI(s, 2)) >= TYPE_PREV)
        return 0; /* (a comment inside a type ends back in the type: Python) */
    PyObject *pay = TI(s, 1);
    long long nac;
    int pa;
    long ac = 0; /* the matcher's state the byte is read in */
    if (mode == M_LCMT || mode == M_CSTART) { /* (M_CSTART: the start for the comment's context) */
        if (!PyLong_CheckExact(pay))
            return 0;
        ac = as_long(pay);
    }
    if (mode == M_CSTART && b == 0x5B) {
        if ((pa = cm_step_on(w, ac, b, &nac)) != 1)
            return pa;
        PyObject *p[2] = {small(0), PyLong_FromLongLong(nac)};
        PyObject *np = p[1] != NULL ? tuple_of(p, 2) : NULL;
        Py_XDECREF(p[1]);
        return put(out, with_pay(s, M_CLB, np));
    } else if (mode == M_CLB) { /* payload (n, ac) */
        if (pay_of(s, 2) == NULL)
            return 0;
        long n = as_long(TI(pay, 0));
        ac = as_long(TI(pay, 1));
        if (b == 0x3D && n < 32) {
            if ((pa = cm_step_on(w, ac, b, &nac)) != 1)
                return pa;
            PyObject *p[2] = {PyLong_FromLong(n + 1), PyLong_FromLongLong(nac)};
            PyObject *np = p[0] != NULL && p[1] != NULL ? tuple_of(p, 2) : NULL;
            Py_XDECREF(p[0]);
            Py_XDECREF(p[1]);
            return put(out, with_pay(s, M_CLB, np));
        }
        if (b == 0x5B) {
            PyObject *stack = TI(s, 5);
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(stack); i++) {
                long k = as_long(TI(TI(stack, i), 0));
                if (k == K_TBRACE || k == K_CTX)
                    return 0; /* (perhaps in a table type: Python decides the context) */
            }
            PyObject *p[3] = {TI(pay, 0), small(-1), w->bm_start_obj};
            return put(out, with_pay(s, M_BCMT, tuple_of(p, 3)));
        }
    }
    if (b == 10 || b == 13) {
        int ok;
        if ((pa = phrase_end(w, ac, &ok)) != 1)
            return pa;
        if (!ok)
            return 1; /* the comment is a placeholder as a whole */
        return put(out, end_comment(s, b));
    }
    if ((pa = phrase_ask(w, 0, ac, b, &nac)) != 1)
        return pa;
    if (nac == -1)
        return 1; /* a placeholder phrase completed */
    return put(out, with_pay(s, M_LCMT, PyLong_FromLongLong(nac)));
}

/* Automaton._string, not lenient, asset ids not tracked (the payload's trigger -2, id -1):
 * escapes, the closing quote (code after a literal or, for a call's string argument, after
 * the call), a backslash, a raw line break (rejected) and text bytes (the string matcher's
 * step, phrase_ask).  As code_step's result. */
/* a text byte b of a quoted (mode M_STR) or interpolated (M_INTERP) string s, outside
 * escapes: a line break is rejected (the walk's steps are not lenient), else the string
 * matcher's next state goes to payload item ac_at, the escape item before it is cleared
 * (Automaton._text_byte with no asset-id trigger); rejected where a placeholder completes */
static int text_byte(Walker *w, PyObject *s, long mode, Py_ssize_t ac_at, long b, PyObject **out) {
    *out = NULL;
    if (b == 10 || b == 13)
        return 1;
    PyObject *pay = TI(s, 1);
    long long nac;
    int pa = phrase_ask(w, 1, as_long(TI(pay, ac_at)), b, &nac);
    if (pa != 1)
        return pa;
    if (nac == -1)
        return 1;
    PyObject *no = PyLong_FromLongLong(nac);
    if (no == NULL)
        return -1;
    Py_ssize_t n = PyTuple_GET_SIZE(pay);
    PyObject *p[6];
    for (Py_ssize_t i = 0; i < n && i < 6; i++)
        p[i] = i == ac_at ? no : (i == ac_at - 1 ? small(0) : TI(pay, i));
    PyObject *np = tuple_of(p, n < 6 ? n : 6);
    Py_DECREF(no);
    return put(out, with_pay(s, mode, np));
}

static int string_step(Walker *w, PyObject *s, long b, PyObject **out) {
    *out = NULL;
    PyObject *pay = w->sm_step != NULL ? pay_of(s, 6) : NULL; /* (NULL: Python steps it) */
    if (pay == NULL)
        return 0;
    long quote = as_long(TI(pay, 0)), esc = as_long(TI(pay, 1)), trig = as_long(TI(pay, 3)), idn = as_long(TI(pay, 4));
    if (PyErr_Occurred())
        return -1;
    if (trig != -2 || idn != -1)
        return 0;
    PyObject *ac = TI(pay, 2), *res = TI(pay, 5);
    PyObject *z = small(0);
    if (esc) {
        if (esc == 1) {
            long nesc = b == 0x7A ? 2 : (b == 0x0D ? 4 : 0);
            PyObject *p[6] = {TI(pay, 0), small(nesc), small(w->sm_start), TI(pay, 3), small(-1), res};
            return put(out, with_pay(s, M_STR, tuple_of(p, 6)));
        }
        if (esc == 2 && is_space(w, b)) {
            Py_INCREF(s);
            *out = s;
            return 1;
        }
        if (esc == 4 && b == 0x0A) {
            PyObject *p[6] = {TI(pay, 0), z, ac, TI(pay, 3), TI(pay, 4), res};
            return put(out, with_pay(s, M_STR, tuple_of(p, 6)));
        }
    }
    if (b == quote) {
        if (as_long(res) == TYPE_STR)
            return 0; /* (a string type: back to the type, Python) */
        int lit = as_long(res) == LITERAL;
        return put(out, state_of(small(M_CODE), z, small(lit ? P_STRING : P_CALLABLE), z, lit ? small(NOVAL) : res, TI(s, 5),
                        TI(s, 6), z, TI(s, 8), TI(s, 9)));
    }
    if (b == 0x5C) {
        PyObject *p[6] = {TI(pay, 0), small(1), ac, TI(pay, 3), small(-1), res};
        return put(out, with_pay(s, M_STR, tuple_of(p, 6)));
    }
    return text_byte(w, s, M_STR, 2, b, out);
}

/* Automaton._number, not lenient: the lexeme's next (phase, value state) from the table
 * Automaton.compiled_code_steps gives (_number_next), or - where the byte ends the number -
 * the byte read in code after a value (a number that is not complete: rejected). */
/* Automaton._interp for the walk's steps, no asset ids tracked: the text of an interpolated
 * string, its escapes, `{` opening an expression and the closing backquote */
static int interp_step(Walker *w, PyObject *s, long b, PyObject **out) {
    *out = NULL;
    PyObject *pay = w->sm_step != NULL ? pay_of(s, 4) : NULL; /* (NULL: Python steps it) */
    if (pay == NULL)
        return 0;
    long esc = as_long(TI(pay, 0)), trig = as_long(TI(pay, 2)), idn = as_long(TI(pay, 3));
    if (PyErr_Occurred())
        return -1;
    if (trig != -2 || idn != -1)
        return 0;
    PyObject *ac = TI(pay, 1), *z = small(0);
    if (esc) {
        if (esc == 1) {
            long nesc = b == 0x7A ? 2 : (b == 0x0D ? 4 : (b == 0x75 ? 3 : 0));
            PyObject *p[4] = {small(nesc), small(w->sm_start), TI(pay, 2), small(-1)};
            return put(out, with_pay(s, M_INTERP, tuple_of(p, 4)));
        }
        if (esc == 2 && is_space(w, b)) {
            Py_INCREF(s);
            *out = s;
            return 1;
        }
        if ((esc == 4 && b == 0x0A) || (esc == 3 && b == 0x7B)) {
            PyObject *p[4] = {z, ac, TI(pay, 2), TI(pay, 3)};
            return put(out, with_pay(s, M_INTERP, tuple_of(p, 4)));
        }
    }
    if (b == 0x60)
        return put(out, state_of(small(M_CODE), z, small(P_STRING), z, small(NOVAL), TI(s, 5), TI(s, 6), z, TI(s, 8),
                                 TI(s, 9)));
    if (b == 0x7B) {
        PyObject *st = pushed(TI(s, 5), frame_of(K_INTERP, small(NOVAL), z, TI(s, 8)));
        if (st == NULL)
            return -1;
        PyObject *r = state_of(small(M_CODE), z, small(P_PRE), small(F_IOPEN), small(NOVAL), st, TI(s, 6), z, z, TI(s, 9));
        Py_DECREF(st);
        return put(out, r);
    }
    if (b == 0x5C) {
        PyObject *p[4] = {small(1), ac, TI(pay, 2), small(-1)};
        return put(out, with_pay(s, M_INTERP, tuple_of(p, 4)));
    }
    return text_byte(w, s, M_INTERP, 1, b, out);
}

/* -- pending punctuation: the bytes that extend `.`, `..`, `-` and `~` (Automaton._dot1,
 * _dot2, _dash and the mode M_TILDE), where no declaration or events are being read; the
 * other bytes after `.` on a name, `..`, and `-` are taken from the state's delegate
 * (trans_of) and never reach these */

/* Automaton._operator without a declaration: code after an operator of class cls, the
 * expression before it ended; a new reference */
static PyObject *after_operator(PyObject *s, long cls) {
    long prev = as_long(TI(s, 2));
    PyObject *stack = TI(s, 5), *z = small(0);
    int after = after_expr(prev);
    PyObject *st = after ? chain_step(stack, 1) : (Py_INCREF(stack), stack);
    if (st == NULL)
        return NULL;
    PyObject *r = state_of(small(M_CODE), z, small(cls), z, small(NOVAL), st, Py_None, z, TI(s, 8), TI(s, 9));
    Py_DECREF(st);
    return r;
}

static int pending_step(Walker *w, PyObject *s, long mode, long b, PyObject **out) {
    *out = NULL;
    PyObject *ev = TI(s, 9), *z = small(0);
    if (!plain_state(s) || !PyTuple_CheckExact(TI(s, 5)))
        return 0;
    long prev = as_long(TI(s, 2)), flags = as_long(TI(s, 3));
    if (PyErr_Occurred())
        return -1;
    if (prev >= P_FNAME || prev == P_FUNCTION || (flags & F_KEPT))
        return 0; /* (headers, parameter lists ...: Python) */
    int after = after_expr(prev);
    if (mode == M_DOT1) {
        if (b == 0x2E)
            return put(out, with_pay(s, M_DOT2, (Py_INCREF(TI(s, 1)), TI(s, 1))));
        if (prev == P_NAME || prev == P_CALLABLE)
            return 0; /* (the name that follows: the delegate's) */
        if (b < 0x30 || b > 0x39 || after)
            return 1; /* after a value a number cannot follow; nothing else may */
        PyObject *st = chain_step(TI(s, 5), 0);
        if (st == NULL)
            return -1;
        PyObject *p[2] = {z /* PH1 */, small(S_F)};
        PyObject *pay = tuple_of(p, 2);
        PyObject *r = pay == NULL ? NULL
                                  : state_of(small(M_NUM), pay, small(P_NONE), z, small(NOVAL), st, Py_None, z, TI(s, 8), ev);
        Py_XDECREF(pay);
        Py_DECREF(st);
        return put(out, r);
    }
    if (mode == M_DOT2) {
        if (b == 0x2E) { /* `...`: where an expression may start (Automaton._dot2) */
            if (prev != P_PRE && prev != P_THEN_EXPR)
                return 1;
            if (flags & F_NL)
                return 0; /* (alone on its line unless the function declares `...`: Python) */
            PyObject *st = chain_step(TI(s, 5), 0);
            if (st == NULL)
                return -1;
            PyObject *r = state_of(small(M_CODE), z, small(P_VAL), z, small(NOVAL), st, Py_None, z, TI(s, 8), ev);
            Py_DECREF(st);
            return put(out, r);
        }
        return b == 0x3D ? put(out, after_operator(s, P_PRE)) : 0;
    }
    if (mode == M_DASH) {
        if (b == 0x2D) { /* `--`: a comment, whose matcher starts at its context's state */
            PyObject *stack = TI(s, 5);
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(stack); i++) {
                long k = as_long(TI(TI(stack, i), 0));
                if (k == K_TBRACE || k == K_CTX)
                    return 0; /* (perhaps in a table type: Python decides the context) */
            }
            if (w->cm_start_obj == NULL)
                return 0;
            PyObject *cstart = !(flags & F_NL) ? w->cm_trail_obj : flags & F_CMT ? w->cm_run_obj : w->cm_start_obj;
            return put(out, state_of(small(M_CSTART), cstart, TI(s, 2),
                                     TI(s, 3), TI(s, 4), stack, Py_None, TI(s, 7), TI(s, 8), ev));
        }
        if (b == 0x3E)
            return put(out, after_operator(s, P_OTHER));
        return b == 0x3D ? put(out, after_operator(s, P_PRE)) : 0;
    }
    /* M_TILDE: only `~=` */
    return b == 0x3D ? put(out, after_operator(s, P_PRE)) : 1;
}

static int number_step(Walker *w, PyObject *s, long b, PyObject **out) {
    *out = NULL;
    PyObject *pay = w->num_next != NULL ? pay_of(s, 2) : NULL; /* (NULL: Python steps it) */
    if (pay == NULL)
        return 0;
    long ph = as_long(TI(pay, 0)), sem = as_long(TI(pay, 1));
    if (PyErr_Occurred())
        return -1;
    if (ph < 0 || ph > 2 || sem < 0 || sem > 10)
        return 0;
    long nx = as_long(PyTuple_GET_ITEM(w->num_next, (ph * N_NUM_STATES + sem) * 256 + b));
    if (nx == -1 && PyErr_Occurred())
        return -1;
    if (nx == -9) { /* the number ends */
        if (!w->num_accept[sem])
            return 1;
        return code_from(w, s, P_VAL, small(NOVAL), TI(s, 5), TI(s, 8), b, out);
    }
    long nph = nx >> 8, nsem = (nx & 255) - 1;
    if (nsem < 0)
        return 1;
    PyObject *p[2] = {small(nph), small(nsem)};
    return put(out, with_pay(s, M_NUM, tuple_of(p, 2)));
}

/* the id of state (a new reference, stolen) in the engine's tables, as _StateTables.intern:
 * a new id (the state, its free kind and projection class appended) for a new state; the
 * free kind is fk_known unless that is -1 (then free_kind_of) */
/* Take tuple o, and the tuples inside it, off the cyclic collector's lists when nothing in
 * them is tracked (what CPython's collector does lazily to the tuples it traverses, done
 * when a state is interned): a state is made of ints, None and tuples of those, so it can
 * never be part of a cycle, and the young collections that the walk's allocations start no
 * longer traverse the states it keeps - they traversed the new states of a step once or
 * twice over before (measured over the 152k replay: 7,949 young and 722 middle
 * collections, 0.63 s in all).  1 when o is (now) untracked. */
static int untrack_deep(PyObject *o) {
    if (!PyObject_IS_GC(o) || !PyObject_GC_IsTracked(o))
        return 1;
    if (!PyTuple_CheckExact(o))
        return 0;
    int all = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(o); i++)
        all &= untrack_deep(TI(o, i));
    if (all)
        PyObject_GC_UnTrack(o);
    return all;
}

static long long intern_state(Walker *w, PyObject *state, long fk_known) {
    Py_ssize_t n = PyList_GET_SIZE(w->auto_states);
    PyObject *nobj = PyLong_FromSsize_t(n);
    if (nobj == NULL) {
        Py_DECREF(state);
        return -2;
    }
    PyObject *got = PyDict_SetDefault(w->auto_ids, state, nobj); /* borrowed */
    long long sid = -2;
    if (got == NULL)
        goto done;
    if (got != nobj) {
        sid = PyLong_AsLongLong(got);
        goto done;
    }
    untrack_deep(state);
    PyObject *fk = PyLong_FromLong(fk_known >= 0 ? fk_known : free_kind_of(as_long(TI(state, 0)), TI(state, 1)));
    PyObject *pc = PyLong_FromLong(pclass_of(state));
    if (fk != NULL && pc != NULL && PyList_Append(w->auto_states, state) == 0 && PyList_Append(w->free_kinds, fk) == 0 &&
        PyList_Append(w->pclass, pc) == 0)
        sid = n;
    Py_XDECREF(fk);
    Py_XDECREF(pc);
done:
    Py_DECREF(nobj);
    Py_DECREF(state);
    return sid;
}

/* -- projections, compiled --------------------------------------------------------------
 *
 * Automaton.project (automaton.py) of a state tuple: the state without what the coming
 * bytes cannot read (see there).  The walker projects its states itself (project_sid, for
 * the child groups' keys and the children's truncations) instead of calling back into
 * Python for each new projection, and interns the result as intern_state does; a projection
 * keeps the state's mode and what its free kind reads, so the projected state has the
 * free kind of the state it comes from.  tests/test_guard_matcher.py projects every state
 * the walks of sample positions reach under every key both ways and compares. */

/* payload t with item at replaced by x (a new reference): t[:at] + (x,) + t[at + 1:], or
 * t[:at] + (x,) when not keep_tail */
static PyObject *pay_with(PyObject *t, Py_ssize_t at, PyObject *x, int keep_tail) {
    Py_ssize_t n = PyTuple_GET_SIZE(t), m = keep_tail ? n : at + 1;
    if (keep_tail ? at >= n : at > n) {
        PyErr_SetString(PyExc_ValueError, "project: a payload shorter than its mode's");
        return NULL;
    }
    PyObject *o = PyTuple_New(m);
    if (o == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *v = i == at ? x : TI(t, i);
        Py_INCREF(v);
        PyTuple_SET_ITEM(o, i, v);
    }
    return o;
}

/* Automaton.project(s, keep, ends, drop): a new reference (s itself when nothing changes) */
static PyObject *project_state(PyObject *s, long keep, long ends, long drop) {
    long mode = as_long(TI(s, 0));
    PyObject *pay = TI(s, 1);
    if (mode == M_STR || mode == M_LSTR || mode == M_LCMT || mode == M_BCMT || mode == M_INTERP) {
        long te = mode == M_STR ? (as_long(TI(pay, 0)) == 0x22 ? END_DQ : END_SQ)
                  : mode == M_INTERP ? END_BT
                  : mode == M_LCMT   ? (long)END_NL
                                     : (long)END_RB;
        if (!(ends & te)) {
            PyObject *npay;
            if (mode == M_STR)
                npay = pay_with(pay, 5, small(LITERAL), 0);
            else if (mode == M_LSTR)
                npay = pay_with(pay, 3, small(1), 0);
            else {
                npay = pay;
                Py_INCREF(npay);
            }
            if (npay == NULL)
                return NULL;
            PyObject *empty = PyTuple_New(0);
            PyObject *r = empty == NULL ? NULL
                                        : state_of(TI(s, 0), npay, small(P_NONE), small(0), small(NOVAL), empty, Py_None,
                                                   small(N_NONE), small(0), empty);
            Py_XDECREF(empty);
            Py_DECREF(npay);
            return r;
        }
    }
    PyObject *stack = TI(s, 5);
    Py_ssize_t n = PyTuple_GET_SIZE(stack), m = keep <= 0 ? 0 : (keep < n ? keep : n);
    long under = n > m ? as_long(TI(TI(stack, n - m - 1), 0)) : 0;
    /* below the kept frames, one stand-in frame when they are inside brackets */
    int below = under == K_CALL || under == K_GROUP || under == K_INDEX || under == K_TABLE;
    /* and, below it, one that says the innermost function (dropped) declares `...`
     * (_context_bits; stacks with types or parameter lists are Python's: project_sid) */
    int vctx = 0;
    if (n > m) {
        int kept_func = 0;
        for (Py_ssize_t i = n - m; i < n && !kept_func; i++)
            kept_func = as_long(TI(TI(stack, i), 0)) == K_FUNC;
        for (Py_ssize_t i = n - m - 1; i >= 0 && !kept_func; i--) {
            PyObject *f = TI(stack, i);
            if (as_long(TI(f, 0)) == K_FUNC) {
                vctx = (int)(as_long(TI(f, 1)) & 1);
                break;
            }
        }
    }
    PyObject *st = PyTuple_New(m + below + vctx);
    if (st == NULL)
        return NULL;
    if (vctx) {
        PyObject *f = frame_of(K_CTX, small(1), small(0), small(0));
        if (f == NULL) {
            Py_DECREF(st);
            return NULL;
        }
        PyTuple_SET_ITEM(st, 0, f);
    }
    if (below) {
        PyObject *f = frame_of(K_CALL, small(0), small(0), small(0));
        if (f == NULL) {
            Py_DECREF(st);
            return NULL;
        }
        PyTuple_SET_ITEM(st, vctx, f);
    }
    below += vctx;
    for (Py_ssize_t i = 0; i < m; i++) {
        PyObject *f = TI(stack, n - m + i);
        long k = as_long(TI(f, 0));
        PyObject *r = (drop & 8) && (k == K_CALL || k == K_GROUP || k == K_INDEX) ? small(0) : TI(f, 1);
        PyObject *nf;
        if (r == TI(f, 1) && as_long(TI(f, 2)) == 0) { /* the frame as it is */
            nf = f;
            Py_INCREF(nf);
        } else if ((nf = frame_of(k, r, small(0), TI(f, 3))) == NULL) {
            Py_DECREF(st);
            return NULL;
        }
        PyTuple_SET_ITEM(st, below + i, nf);
    }
    PyObject *val = TI(s, 4), *flags = TI(s, 3);
    PyObject *npay = pay;
    Py_INCREF(npay);
    if (drop) {
        if (mode == M_CODE) {
            if (drop & 1)
                val = small(NOVAL);
            if (drop & 2)
                flags = small(as_long(flags) & F_KEPT);
        } else if (drop & 4) {
            if (mode == M_IDENT && as_long(TI(pay, 1)) != NOVAL) {
                Py_DECREF(npay);
                npay = pay_with(pay, 1, small(NOVAL), 1);
            } else if (mode == M_NAME) {
                long base = as_long(TI(pay, 3)) == POISON ? POISON : NOVAL;
                if (as_long(TI(pay, 3)) != base) {
                    Py_DECREF(npay);
                    npay = pay_with(pay, 3, small(base), 1);
                }
            }
            if (npay == NULL) {
                Py_DECREF(st);
                return NULL;
            }
        }
    }
    PyObject *ev = TI(s, 9);
    int same = PyObject_RichCompareBool(st, stack, Py_EQ);
    int evt = PyObject_IsTrue(ev);
    if (same < 0 || evt < 0 || PyErr_Occurred()) {
        Py_DECREF(st);
        Py_DECREF(npay);
        return NULL;
    }
    if (same && TI(s, 6) == Py_None && !evt && as_long(val) == as_long(TI(s, 4)) &&
        as_long(flags) == as_long(TI(s, 3)) && npay == pay) {
        Py_DECREF(st);
        Py_DECREF(npay);
        Py_INCREF(s);
        return s;
    }
    PyObject *empty = PyTuple_New(0);
    PyObject *r = empty == NULL ? NULL
                                : state_of(TI(s, 0), npay, TI(s, 2), flags, val, st, Py_None, TI(s, 7), TI(s, 8), empty);
    Py_XDECREF(empty);
    Py_DECREF(st);
    Py_DECREF(npay);
    return r;
}

/* is every frame of stack one the compiled projection handles (no type, parameter list or
 * stand-in: Automaton.project's _keep_types and _context_bits are Python's)? */
static int c_stack(PyObject *stack) {
    if (!PyTuple_CheckExact(stack))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(stack); i++)
        if (as_long(TI(TI(stack, i), 0)) >= K_PARAMS)
            return 0;
    return 1;
}

/* the id of state sid projected with (normalised) arguments keep, ends and drop into *out,
 * the projection computed here (compiled steps on) or by fallback(sid, key) (a call-back
 * into Python: _StateTables.gproj_miss or trunc_miss); 0, or -1 with an exception */
static int project_sid(Walker *w, long long sid, long long keep, long long ends, long long drop, PyObject *fallback,
                       long long key, long long *out) {
    if (w->auto_states == NULL || sid >= PyList_GET_SIZE(w->auto_states))
        return call_ll(fallback, sid, key, 2, out);
    PyObject *s = PyList_GET_ITEM(w->auto_states, sid);
    if (!PyTuple_CheckExact(s) || PyTuple_GET_SIZE(s) != 10 || !c_stack(TI(s, 5)))
        return call_ll(fallback, sid, key, 2, out);
    PyObject *p = project_state(s, (long)keep, (long)ends, (long)drop);
    if (p == NULL)
        return -1;
    if (p == s) {
        Py_DECREF(p);
        *out = sid;
        return 0;
    }
    long long fk, pc;
    if (state_info(w, sid, &fk, &pc) < 0) {
        Py_DECREF(p);
        return -1;
    }
    long long nsid = intern_state(w, p, (long)fk);
    if (nsid < 0)
        return -1;
    *out = nsid;
    return 0;
}

/* the walk's transition of state sid on byte class cls stepped here, when its mode is
 * compiled: 1 with *out (-1: rejected), 0 when Python must step it, -1 with an exception */
static int cstep(Walker *w, long long sid, long long cls, long long *out) {
    if (w->auto_states == NULL || sid >= PyList_GET_SIZE(w->auto_states))
        return 0;
    PyObject *s = PyList_GET_ITEM(w->auto_states, sid);
    if (!PyTuple_CheckExact(s) || PyTuple_GET_SIZE(s) != 10)
        return 0;
    long mode = as_long(TI(s, 0));
    PyObject *next;
    long fk = -1;
    int r;
    if (mode == M_CODE)
        r = code_step(w, s, (long)cls, &next);
    else if (mode == M_NAME)
        r = name_step(w, s, (long)cls, &next, &fk);
    else if (mode == M_NSTR)
        r = nstr_step(w, s, (long)cls, &next, &fk);
    else if (mode == M_LBRACK)
        r = lbrack_step(w, s, (long)cls, &next, &fk);
    else if (mode == M_LBRACK_EQ)
        r = lbrack_eq_step(w, s, (long)cls, &next);
    else if (mode == M_IARG)
        r = name_arg(w, s, (long)cls, as_long(TI(s, 1)), KIND_BRACKET, A_INDEX, &next, &fk);
    else if (mode == M_LARG && PyTuple_CheckExact(TI(s, 1)) && PyTuple_GET_SIZE(TI(s, 1)) == 2)
        r = name_arg(w, s, (long)cls, as_long(TI(TI(s, 1), 1)), as_long(TI(TI(s, 1), 0)), A_CALL, &next, &fk);
    else if (mode == M_AFTER)
        r = after_arg(w, s, (long)cls, &next);
    else if (mode == M_DOT1 || mode == M_DOT2 || mode == M_DASH || mode == M_TILDE)
        r = pending_step(w, s, mode, (long)cls, &next);
    else if (mode == M_INTERP)
        r = interp_step(w, s, (long)cls, &next);
    else if (mode == M_LCMT || mode == M_CSTART || mode == M_CLB)
        r = comment_step(w, s, mode, (long)cls, &next);
    else if (mode == M_STR)
        r = string_step(w, s, (long)cls, &next);
    else if (mode == M_NUM)
        r = number_step(w, s, (long)cls, &next);
    else
        return 0;
    if (r <= 0)
        return r;
    w->csteps++;
    if (next == NULL) {
        *out = -1;
        return 1;
    }
    long long nsid = intern_state(w, next, fk);
    if (nsid < 0)
        return -1;
    *out = nsid;
    return 1;
}

static int trans_of(Walker *w, long long sid, long long cls, long long *out) {
    long long key = (sid << 8) | cls;
    if (map_get(&w->trans, key, out))
        return 0;
    long long pc;
    if (state_info(w, sid, NULL, &pc) < 0)
        return -1;
    if (pc & PC_DELEG) {
        long long dv;
        if (!map_get(&w->deleg, sid, &dv)) {
            if (call_ll(w->deleg_miss, sid, 0, 1, &dv) < 0 || map_put(&w->deleg, sid, dv) < 0)
                return -1;
        }
        int special = 0;
        for (int i = 0; i < 3; i++) {
            long long b = (dv >> (8 * i)) & 255;
            special |= b != 0 && b == cls;
        }
        if (dv >= 0 && !special) {
            long long dsid = dv >> 24;
            PyObject *dm = cmap_of(w, dsid);
            if (dm == NULL)
                return -1;
            long long dcls = class_in(dm, cls);
            Py_DECREF(dm);
            if (trans_of(w, dsid, dcls, out) < 0)
                return -1;
            return map_put(&w->trans, key, *out);
        }
    }
    int stepped = cstep(w, sid, cls, out);
    if (stepped < 0)
        return -1;
    if (!stepped && call_ll(w->trans_miss, sid, cls, 2, out) < 0)
        return -1;
    return map_put(&w->trans, key, *out);
}

/* _StateTables.bad_rejected: 1 when state sid rejects every byte of bad_bytes (the bytes
 * rejected anywhere in code: they are one class of its byte classes, and the walk's
 * transition on that class is a rejection), else 0; -1 with an exception.  (In C since the
 * transition is then the walk's own, delegated or cached: a call-back did a Python step.) */
static long long bad_of(Walker *w, long long sid) {
    PyObject *cmap = cmap_of(w, sid);
    if (cmap == NULL)
        return -1;
    long long got = 0;
    if (cmap != Py_None) {
        long long rep = class_in(cmap, 0x80);
        const unsigned char *bb = (const unsigned char *)PyBytes_AS_STRING(w->bad_bytes);
        Py_ssize_t n = PyBytes_GET_SIZE(w->bad_bytes);
        int one = 1;
        for (Py_ssize_t i = 0; one && i < n; i++)
            one = class_in(cmap, bb[i]) == rep;
        if (one) {
            long long nsid;
            if (trans_of(w, sid, rep, &nsid) < 0) {
                Py_DECREF(cmap);
                return -1;
            }
            got = nsid < 0;
        }
    }
    Py_DECREF(cmap);
    return got;
}

/* MaskEngine._group: the accepted rank intervals of the children [k0, k1) from state sid */
static PyObject *group(Walker *w, long long k0, long long k1, long long sid) {
    PyObject *cmap = cmap_of(w, sid);
    if (cmap == NULL)
        return NULL;
    int has_cmap = cmap != Py_None;
    /* the transitions of this state by byte class, looked up once per call, and the
     * intervals found: the scratch of this recursion level (see Level) */
    Level *lv = level_at(w, w->depth);
    if (lv == NULL) {
        Py_DECREF(cmap);
        return NULL;
    }
    long long *tr = lv->tr;
    for (int i = 0; i < lv->ntouched; i++)
        tr[lv->touched[i]] = TR_UNKNOWN;
    lv->ntouched = 0;
    Buf *out = &lv->out;
    out->n = 0;
    PyObject *result = NULL;
    for (long long i = k0; i < k1; i++) {
        long long byte = w->kd[KID_REC * i], child = w->kd[KID_REC * i + 1];
        const int32_t *cr = w->nd + NODE_REC * child;
        long long cls = has_cmap ? class_in(cmap, byte) : byte;
        long long nsid = tr[cls];
        if (nsid == TR_UNKNOWN) {
            if (trans_of(w, sid, cls, &nsid) < 0)
                goto done;
            tr[cls] = nsid;
            lv->touched[lv->ntouched++] = (unsigned char)cls;
        }
        if (nsid < 0)
            continue;
        if (cr[N_KIDS]) {
            long long fast, npc;
            if (state_info(w, nsid, &fast, &npc) < 0)
                goto done;
            if (fast && (cr[N_PLAIN] & fast)) {
                if (buf_join(out, cr[N_LO], cr[N_HI]) < 0)
                    goto done;
                continue;
            }
            long long pk = cr[N_PROJ], keep = pk >> 5, ends = pk & 31, nodrop = 0;
            norm_args(npc, &keep, &ends, &nodrop);
            pk = (keep << 5) | ends;
            long long csid = nsid, key = (nsid << 12) | pk;
            if (!is_identity(npc, keep, ends, 0) && !map_get(&w->trunc, key, &csid)) {
                if (project_sid(w, nsid, keep, ends, 0, w->trunc_miss, pk, &csid) < 0 ||
                    map_put(&w->trunc, key, csid) < 0)
                    goto done;
            }
            PyObject *sub = walk(w, child, csid);
            if (sub == NULL)
                goto done;
            int rc = buf_extend(out, sub, 1);
            Py_DECREF(sub);
            if (rc < 0)
                goto done;
            continue;
        }
        long long a = cr[N_LO];
        if (buf_join(out, a, a + cr[N_OWN]) < 0)
            goto done;
    }
    if (!PyErr_Occurred())
        result = buf_result(out);
done:
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
    long long key = (node << 32) | sid, hit;
    if (map_get(&w->memo, key, &hit)) {
        w->memo_hits++;
        PyObject *got = (PyObject *)(intptr_t)hit;
        Py_INCREF(got);
        return got;
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
    long long pc;
    if (state_info(w, sid, NULL, &pc) < 0)
        goto fail;
    for (long long gi = 0; gi < ng; gi++) {
        const int32_t *g = w->gr + GROUP_REC * (g0 + gi);
        long long gk = g[0];
        if (gk & G_BAD) {
            if (bad < 0 && !map_get(&w->bad, sid, &bad)) {
                if ((bad = bad_of(w, sid)) < 0 || map_put(&w->bad, sid, bad) < 0)
                    goto fail;
            }
            if (bad)
                continue;
        }
        /* the group's projection key without what cannot matter for this state */
        long long need = (gk >> 7) & 63, ends = gk & 31, drop = (gk >> 5) & 3;
        norm_args(pc, &need, &ends, &drop);
        long long pk = (need << 7) | (drop << 5) | ends;
        long long gsid = sid, gkey = (sid << 14) | pk;
        if (!is_identity(pc, need, ends, drop) && !map_get(&w->gproj, gkey, &gsid)) {
            if (project_sid(w, sid, need, ends, drop, w->gproj_miss, pk, &gsid) < 0 ||
                map_put(&w->gproj, gkey, gsid) < 0)
                goto fail;
        }
        long long mk = (gsid * w->nodes + node) * w->span + gi, got;
        PyObject *r;
        if (map_get(&w->gmemo, mk, &got)) {
            r = (PyObject *)(intptr_t)got;
            Py_INCREF(r);
        } else {
            w->depth++;
            r = group(w, g[1], g[2], gsid);
            w->depth--;
            if (r == NULL || map_put(&w->gmemo, mk, (long long)(intptr_t)r) < 0) {
                Py_XDECREF(r);
                goto fail;
            }
        }
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
        Buf *all = &w->all; /* (no recursion while it is in use) */
        all->n = 0;
        int ok = 1;
        for (int i = 0; i < nparts && ok; i++)
            ok = buf_extend(all, parts[i], 0) == 0;
        if (ok && dyn != NULL)
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(dyn) && ok; i++)
                ok = buf_extend(all, PyList_GET_ITEM(dyn, i), 0) == 0;
        if (ok) {
            qsort(all->v, (size_t)all->n, 2 * sizeof(long long), pair_cmp);
            res = buf_result(all);
        }
    }
    if (res != NULL && map_put(&w->memo, key, (long long)(intptr_t)res) < 0)
        Py_CLEAR(res);
fail:
    for (int i = 0; i < nparts; i++)
        Py_DECREF(parts[i]);
    Py_XDECREF(dyn);
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

/* the references the compiled steps hold (init_auto) */
#define AUTO_REFS(X) X(auto_states) X(auto_ids) X(kw_next) X(name_child) X(name_end) X(cm_step) X(sm_step) \
    X(num_next) X(cm_start_obj) X(arg_table) X(cm_end) X(bm_start_obj) X(cm_run_obj) X(cm_trail_obj)

static void clear_auto(Walker *w) {
#define AUTO_CLEAR(f) Py_CLEAR(w->f);
    AUTO_REFS(AUTO_CLEAR)
#undef AUTO_CLEAR
}

static int Walker_traverse(Walker *w, visitproc visit, void *arg) {
    for (int i = 0; i < N_REFS; i++)
        Py_VISIT(*ref_slot(w, i));
#define AUTO_VISIT(f) Py_VISIT(w->f);
    AUTO_REFS(AUTO_VISIT)
#undef AUTO_VISIT
    return 0;
}

static int Walker_clear(Walker *w) {
    for (int i = 0; i < N_REFS; i++)
        Py_CLEAR(*ref_slot(w, i));
    clear_auto(w);
    return 0;
}

/* the walker's compiled steps from auto (None: none), a dict: states (the engine's list),
 * ids (its dict), sm_start, tstart (ints), klass, after_string_ok (bytes of 256),
 * kw_first (a tuple of 256 ints) */
static int init_auto(Walker *w, PyObject *aut) {
    clear_auto(w);
    PyMem_Free(w->kw_word);
    w->kw_word = NULL;
    w->csteps = 0;
    if (aut == NULL || aut == Py_None)
        return 0;
    if (!PyDict_Check(aut)) {
        PyErr_SetString(PyExc_TypeError, "Walker: auto must be a dict or None");
        return -1;
    }
    PyObject *states = PyDict_GetItemString(aut, "states"), *ids = PyDict_GetItemString(aut, "ids");
    PyObject *sms = PyDict_GetItemString(aut, "sm_start");
    PyObject *ts = PyDict_GetItemString(aut, "tstart"), *klass = PyDict_GetItemString(aut, "klass");
    PyObject *aso = PyDict_GetItemString(aut, "after_string_ok"), *kwf = PyDict_GetItemString(aut, "kw_first");
    if (states == NULL || !PyList_Check(states) || ids == NULL || !PyDict_Check(ids) || sms == NULL ||
        ts == NULL || klass == NULL || !PyBytes_CheckExact(klass) || PyBytes_GET_SIZE(klass) != 256 || aso == NULL ||
        !PyBytes_CheckExact(aso) || PyBytes_GET_SIZE(aso) != 256 || kwf == NULL || !PyTuple_Check(kwf) ||
        PyTuple_GET_SIZE(kwf) != 256) {
        PyErr_SetString(PyExc_TypeError, "Walker: auto lacks a key or has one of the wrong type");
        return -1;
    }
    w->sm_start = PyLong_AsLong(sms);
    w->tstart = PyLong_AsLong(ts);
    if (PyErr_Occurred())
        return -1;
    if (w->sm_start < -20 || w->sm_start > 279 || w->tstart < -20 || w->tstart > 279) {
        PyErr_SetString(PyExc_ValueError, "Walker: sm_start or tstart out of range");
        return -1;
    }
    memcpy(w->klass, PyBytes_AS_STRING(klass), 256);
    memcpy(w->after_string_ok, PyBytes_AS_STRING(aso), 256);
    for (int i = 0; i < 256; i++) {
        w->kw_first[i] = PyLong_AsLong(PyTuple_GET_ITEM(kwf, i));
        if (w->kw_first[i] == -1 && PyErr_Occurred())
            return -1;
    }
    /* names (name_step): kw_next (a tuple of n * 256 ints), idchar (bytes of 256) and
     * name_child (a callable); all three or none */
    PyObject *kwn = PyDict_GetItemString(aut, "kw_next"), *idc = PyDict_GetItemString(aut, "idchar");
    PyObject *nch = PyDict_GetItemString(aut, "name_child"), *nend = PyDict_GetItemString(aut, "name_end");
    PyObject *kww = PyDict_GetItemString(aut, "kw_word");
    if (kwn != NULL || idc != NULL || nch != NULL || nend != NULL || kww != NULL) {
        if (kwn == NULL || !PyTuple_CheckExact(kwn) || PyTuple_GET_SIZE(kwn) % 256 != 0 || idc == NULL ||
            !PyBytes_CheckExact(idc) || PyBytes_GET_SIZE(idc) != 256 || nch == NULL || !PyCallable_Check(nch) ||
            nend == NULL || !PyCallable_Check(nend) || kww == NULL || !PyBytes_CheckExact(kww) ||
            PyBytes_GET_SIZE(kww) != PyTuple_GET_SIZE(kwn) / 256) {
            PyErr_SetString(PyExc_TypeError,
                            "Walker: auto's kw_next, kw_word, idchar, name_child and name_end are of the wrong type");
            return -1;
        }
        w->kw_word = (unsigned char *)PyMem_Malloc((size_t)PyBytes_GET_SIZE(kww) + 1);
        if (w->kw_word == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(w->kw_word, PyBytes_AS_STRING(kww), (size_t)PyBytes_GET_SIZE(kww));
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwn); i++) {
            long v = PyLong_AsLong(PyTuple_GET_ITEM(kwn, i));
            if (v == -1 && PyErr_Occurred())
                return -1;
            if (v < -1 || v >= PyTuple_GET_SIZE(kwn) / 256) {
                PyErr_SetString(PyExc_ValueError, "Walker: kw_next holds a position out of range");
                return -1;
            }
        }
        memcpy(w->idchar, PyBytes_AS_STRING(idc), 256);
        w->n_kw = (long)(PyTuple_GET_SIZE(kwn) / 256);
        Py_INCREF(kwn);
        Py_INCREF(nch);
        Py_INCREF(nend);
        w->kw_next = kwn;
        w->name_child = nch;
        w->name_end = nend;
    }
    /* lookups' and indexes' name strings (name_arg): arg_table, a callable, optional */
    PyObject *atab = PyDict_GetItemString(aut, "arg_table");
    if (atab != NULL) {
        if (!PyCallable_Check(atab)) {
            PyErr_SetString(PyExc_TypeError, "Walker: auto's arg_table must be callable");
            return -1;
        }
        Py_INCREF(atab);
        w->arg_table = atab;
    }
    /* comments, strings, numbers: cm_step, cm_end, sm_step (callables), cm_start, cm_run and
     * cm_trail (the line-comment matcher's states after the context byte of a plain line
     * comment, of one that continues a comment paragraph and of one after code on its line), bm_start (the block-comment matcher's after
     * a block comment's context byte), num_next (a tuple of 3 * N_NUM_STATES * 256 ints),
     * num_accept (bytes of N_NUM_STATES); all or none */
    PyObject *cms = PyDict_GetItemString(aut, "cm_step"), *sms2 = PyDict_GetItemString(aut, "sm_step");
    PyObject *cmst = PyDict_GetItemString(aut, "cm_start"), *nn = PyDict_GetItemString(aut, "num_next");
    PyObject *na = PyDict_GetItemString(aut, "num_accept"), *cme = PyDict_GetItemString(aut, "cm_end");
    PyObject *bms = PyDict_GetItemString(aut, "bm_start"), *cmr = PyDict_GetItemString(aut, "cm_run");
    PyObject *cmt = PyDict_GetItemString(aut, "cm_trail");
    if (cms != NULL || sms2 != NULL || cmst != NULL || nn != NULL || na != NULL) {
        if (cms == NULL || !PyCallable_Check(cms) || sms2 == NULL || !PyCallable_Check(sms2) || cmst == NULL ||
            nn == NULL || !PyTuple_CheckExact(nn) || PyTuple_GET_SIZE(nn) != 3 * N_NUM_STATES * 256 || na == NULL ||
            !PyBytes_CheckExact(na) || PyBytes_GET_SIZE(na) != N_NUM_STATES || cme == NULL || !PyCallable_Check(cme) ||
            bms == NULL || !PyLong_CheckExact(bms) || cmr == NULL || !PyLong_CheckExact(cmr) || cmt == NULL ||
            !PyLong_CheckExact(cmt)) {
            PyErr_SetString(PyExc_TypeError,
                            "Walker: auto's cm_step, cm_end, sm_step, cm_start, cm_run, cm_trail, bm_start, num_next and "
                            "num_accept are of the wrong type");
            return -1;
        }
        w->cm_start = PyLong_AsLong(cmst);
        if (w->cm_start == -1 && PyErr_Occurred())
            return -1;
        if (w->cm_start < 0 || w->cm_start >= (1L << 30)) {
            PyErr_SetString(PyExc_ValueError, "Walker: cm_start out of range");
            return -1;
        }
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(nn); i++) {
            long v = PyLong_AsLong(PyTuple_GET_ITEM(nn, i));
            if (v == -1 && PyErr_Occurred())
                return -1;
            if (v != -9 && (v < 0 || (v >> 8) > 2 || (v & 255) > N_NUM_STATES)) {
                PyErr_SetString(PyExc_ValueError, "Walker: num_next holds an entry out of range");
                return -1;
            }
        }
        memcpy(w->num_accept, PyBytes_AS_STRING(na), N_NUM_STATES);
        Py_INCREF(cms);
        Py_INCREF(sms2);
        Py_INCREF(nn);
        Py_INCREF(cmst);
        Py_INCREF(cme);
        Py_INCREF(bms);
        Py_INCREF(cmr);
        Py_INCREF(cmt);
        w->cm_trail_obj = cmt;
        w->cm_end = cme;
        w->bm_start_obj = bms;
        w->cm_run_obj = cmr;
        w->cm_start_obj = cmst;
        w->cm_step = cms;
        w->sm_step = sms2;
        w->num_next = nn;
    }
    Py_INCREF(states);
    Py_INCREF(ids);
    w->auto_states = states;
    w->auto_ids = ids;
    return 0;
}

static void free_maps(Walker *w) {
#define MAP_FREE(f, share, obj) map_free(&w->f);
    WALKER_MAPS(MAP_FREE)
#undef MAP_FREE
}

static void free_levels(Walker *w) {
    for (int i = 0; i < w->nlevels; i++)
        if (w->levels[i] != NULL) {
            PyMem_Free(w->levels[i]->out.v);
            PyMem_Free(w->levels[i]);
        }
    PyMem_Free(w->levels);
    w->levels = NULL;
    w->nlevels = 0;
    PyMem_Free(w->all.v);
    w->all.v = NULL;
    w->all.n = w->all.cap = 0;
    PyMem_Free(w->info.v);
    w->info.v = NULL;
    w->info.n = w->info.cap = 0;
}

static void Walker_dealloc(Walker *w) {
    PyObject_GC_UnTrack(w);
    Walker_clear(w);
    free_maps(w);
    free_levels(w);
    PyMem_Free(w->kw_word);
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
        int ok = kind == 'l' ? PyList_Check(v) : kind == 'b' ? PyBytes_CheckExact(v) : PyCallable_Check(v);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "Walker: %s must be a %s, got %s", k,
                         kind == 'l' ? "list" : (kind == 'b' ? "bytes" : "callable"), Py_TYPE(v)->tp_name);
            return -1;
        }
        got[i] = v;
    }
    PyObject *span_obj = PyDict_GetItemString(kwds, "span");
    PyObject *presize_obj = PyDict_GetItemString(kwds, "presize");
    PyObject *auto_obj = PyDict_GetItemString(kwds, "auto");
    if (span_obj == NULL || presize_obj == NULL || PyDict_GET_SIZE(kwds) != N_REFS + 2 + (auto_obj != NULL)) {
        PyErr_SetString(PyExc_TypeError, "Walker: span or presize missing, or an unknown keyword");
        return -1;
    }
    long long span = PyLong_AsLongLong(span_obj);
    if (span == -1 && PyErr_Occurred())
        return -1;
    long long presize = PyLong_AsLongLong(presize_obj);
    if (presize == -1 && PyErr_Occurred())
        return -1;
    if (presize < 0 || presize > (1LL << 30)) {
        PyErr_Format(PyExc_ValueError, "Walker: presize %lld out of range [0, 2**30]", presize);
        return -1;
    }
    free_maps(w); /* (__init__ called again) */
#define MAP_INIT(f, share, obj)                                          \
    if (map_init(&w->f, (size_t)(presize * share / 2), obj) < 0) { \
        free_maps(w);                                                   \
        return -1;                                                      \
    }
    WALKER_MAPS(MAP_INIT)
#undef MAP_INIT
    for (int i = 0; i < N_REFS; i++) {
        Py_INCREF(got[i]);
        Py_XSETREF(*ref_slot(w, i), got[i]);
    }
    if (check_records(w) < 0 || init_auto(w, auto_obj) < 0)
        return -1;
    w->span = span;
    w->walks = 0;
    w->memo_hits = 0;
    w->depth = 0;
    w->info.n = 0; /* (new lists: copied again) */
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

static PyObject *Walker_csteps(Walker *w, PyObject *unused) {
    PyObject *r = PyLong_FromLongLong(w->csteps);
    w->csteps = 0;
    return r;
}

/* step(sid, byte): the walker's own step (cstep) of state sid on a byte, for tests */
static PyObject *Walker_step(Walker *w, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "step(sid, byte) takes two ints");
        return NULL;
    }
    long long sid = PyLong_AsLongLong(args[0]), b = PyLong_AsLongLong(args[1]), out;
    if ((sid == -1 || b == -1) && PyErr_Occurred())
        return NULL;
    if (sid < 0 || b < 0 || b > 255) {
        PyErr_SetString(PyExc_ValueError, "step: a state id >= 0 and a byte 0-255");
        return NULL;
    }
    int r = cstep(w, sid, b, &out);
    if (r < 0)
        return NULL;
    if (r == 0)
        Py_RETURN_NONE;
    return PyLong_FromLongLong(out);
}

/* project(sid, keep, ends, drop): the id of state sid projected here (project_sid, with the
 * arguments as given: normalising them is the caller's), for tests; ValueError when the
 * walker does not step states itself */
static PyObject *Walker_project(Walker *w, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "project(sid, keep, ends, drop) takes four ints");
        return NULL;
    }
    long long v[4];
    for (int i = 0; i < 4; i++)
        if ((v[i] = PyLong_AsLongLong(args[i])) == -1 && PyErr_Occurred())
            return NULL;
    if (w->auto_states == NULL || v[0] < 0 || v[0] >= PyList_GET_SIZE(w->auto_states)) {
        PyErr_SetString(PyExc_ValueError, "project: no compiled steps, or a state id out of range");
        return NULL;
    }
    PyObject *st = PyList_GET_ITEM(w->auto_states, v[0]);
    if (!PyTuple_CheckExact(st) || PyTuple_GET_SIZE(st) != 10 || !c_stack(TI(st, 5)))
        Py_RETURN_NONE; /* (projected by Python: project_sid's fallback) */
    long long out;
    if (project_sid(w, v[0], v[1], v[2], v[3], Py_None, 0, &out) < 0)
        return NULL;
    return PyLong_FromLongLong(out);
}

static PyObject *Walker_entries(Walker *w, PyObject *unused) {
    return PyLong_FromSize_t(w->memo.n + w->gmemo.n);
}

static PyMethodDef Walker_methods[] = {
    {"walk", (PyCFunction)(void (*)(void))Walker_walk, METH_FASTCALL,
     "walk(node, sid) -> bytes: MaskEngine._walk, compiled; the (first, end) rank pairs as native int64s."},
    {"counts", (PyCFunction)Walker_counts, METH_NOARGS,
     "counts() -> (walks, memo hits) since the last call, and reset them."},
    {"step", (PyCFunction)(void (*)(void))Walker_step, METH_FASTCALL,
     "step(sid, byte) -> int | None: the walker's own automaton step of state sid on byte (the next state's id, "
     "-1 when rejected; interned in the engine's tables), None where Python steps it (tests)."},
    {"project", (PyCFunction)(void (*)(void))Walker_project, METH_FASTCALL,
     "project(sid, keep, ends, drop) -> int: the id of state sid projected by the walker itself (Automaton.project; "
     "interned in the engine's tables), None for a state it leaves to Python (types, parameter lists), for tests; "
     "ValueError without compiled steps."},
    {"csteps", (PyCFunction)Walker_csteps, METH_NOARGS,
     "csteps() -> int: automaton steps made by the walker itself (code_step) since the last call, and reset."},
    {"entries", (PyCFunction)Walker_entries, METH_NOARGS,
     "entries() -> int: results memoised (per node and per child group), for the engine's memo bound."},
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

/* -- a layer's id arrays from its accepted rank intervals (MaskEngine._side) ------------ */

/* a C-contiguous buffer of int64 of obj (writable when asked; a bytes object is read as
 * native int64s, as buf_result makes them); its element count in *n */
static int int64_buffer(PyObject *obj, Py_buffer *view, int writable, Py_ssize_t *n, const char *what) {
    if (!writable && PyBytes_CheckExact(obj)) {
        if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0)
            return -1;
        if (view->len % 8) {
            PyErr_Format(PyExc_ValueError, "%s: not whole int64s", what);
            PyBuffer_Release(view);
            return -1;
        }
        *n = view->len / 8;
        return 0;
    }
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    const char *f = view->format;
    if (view->itemsize != 8 || f == NULL || !(strcmp(f, "q") == 0 || strcmp(f, "l") == 0 || strcmp(f, "<q") == 0 ||
                                              strcmp(f, "<l") == 0 || strcmp(f, "=q") == 0 || strcmp(f, "=l") == 0)) {
        PyErr_Format(PyExc_TypeError, "%s must be a buffer of int64", what);
        PyBuffer_Release(view);
        return -1;
    }
    *n = view->len / 8;
    return 0;
}

/* side_runs(intervals, lo, hi, banned, share_min) -> (long, short, n_short): the accepted
 * rank intervals of a layer [lo, hi) (sorted, disjoint (first, end) int64 pairs), or with
 * banned their complement within the layer, split into runs of at least share_min ranks (a
 * tuple of (first, end) pairs: views of the rank order) and the shorter ones (int64 pairs
 * as bytes, for gather) with their total length. */
static PyObject *side_runs(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "side_runs(intervals, lo, hi, banned, share_min)");
        return NULL;
    }
    long long lo = PyLong_AsLongLong(args[1]), hi = PyLong_AsLongLong(args[2]), share = PyLong_AsLongLong(args[4]);
    int banned = PyObject_IsTrue(args[3]);
    if (PyErr_Occurred() || banned < 0)
        return NULL;
    Py_buffer view;
    Py_ssize_t n;
    if (int64_buffer(args[0], &view, 0, &n, "side_runs: intervals") < 0)
        return NULL;
    const long long *iv = (const long long *)view.buf;
    Py_ssize_t pairs = n / 2;
    PyObject *longs = PyList_New(0), *result = NULL;
    Buf shorts = {NULL, 0, 0};
    long long n_short = 0, start = lo;
    if (longs == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < pairs; i++) { /* sorted, disjoint, within [lo, hi) */
        long long a = iv[2 * i], z = iv[2 * i + 1];
        if (a > z || a < (i ? iv[2 * i - 1] : lo) || z > hi) {
            PyErr_Format(PyExc_ValueError, "side_runs: interval %zd is not sorted, disjoint and within [lo, hi)", i);
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i <= pairs; i++) {
        long long a, z;
        if (banned) { /* the gap before interval i (after the last one: up to hi) */
            a = start;
            z = i < pairs ? iv[2 * i] : hi;
            if (i < pairs)
                start = iv[2 * i + 1];
            if (z <= a)
                continue;
        } else {
            if (i == pairs)
                break;
            a = iv[2 * i];
            z = iv[2 * i + 1];
        }
        if (z - a >= share) {
            PyObject *t = Py_BuildValue("(LL)", a, z);
            if (t == NULL || PyList_Append(longs, t) < 0) {
                Py_XDECREF(t);
                goto done;
            }
            Py_DECREF(t);
        } else {
            if (buf_push(&shorts, a, z) < 0)
                goto done;
            n_short += z - a;
        }
    }
    {
        PyObject *sb = buf_result(&shorts);
        if (sb != NULL) {
            result = Py_BuildValue("(NNL)", longs, sb, n_short);
            if (result != NULL)
                longs = NULL; /* (stolen) */
        }
    }
done:
    Py_XDECREF(longs);
    PyMem_Free(shorts.v);
    PyBuffer_Release(&view);
    return result;
}

/* gather(perm, runs, out): out[...] = perm[a:z] for each (a, z) int64 pair of runs, in
 * order; out must hold exactly their total length and every run lie within perm. */
static PyObject *gather(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "gather(perm, runs, out)");
        return NULL;
    }
    Py_buffer pv, rv, ov;
    Py_ssize_t np_, nr, no;
    if (int64_buffer(args[0], &pv, 0, &np_, "gather: perm") < 0)
        return NULL;
    if (int64_buffer(args[1], &rv, 0, &nr, "gather: runs") < 0) {
        PyBuffer_Release(&pv);
        return NULL;
    }
    if (int64_buffer(args[2], &ov, 1, &no, "gather: out") < 0) {
        PyBuffer_Release(&pv);
        PyBuffer_Release(&rv);
        return NULL;
    }
    const long long *perm = (const long long *)pv.buf, *runs = (const long long *)rv.buf;
    long long *out = (long long *)ov.buf;
    Py_ssize_t at = 0;
    int ok = nr % 2 == 0;
    for (Py_ssize_t i = 0; ok && i < nr / 2; i++) {
        long long a = runs[2 * i], z = runs[2 * i + 1];
        if (a < 0 || z < a || z > np_ || at + (z - a) > no) {
            ok = 0;
            break;
        }
        memcpy(out + at, perm + a, (size_t)(z - a) * sizeof(long long));
        at += z - a;
    }
    if (ok && at != no)
        ok = 0;
    PyBuffer_Release(&pv);
    PyBuffer_Release(&rv);
    PyBuffer_Release(&ov);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "gather: a run outside perm, or out not their total length");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* apply_bits(logits, bits, rows, slots): for every i, logits[rows[i], t] = -inf for each
 * token t whose bit is clear in the packed mask bits[slots[i]] - bit t % 32 of int32 word
 * t / 32, set when t is allowed (the layout of vLLM's structured outputs and XGrammar) -
 * and for every t past the mask's words.  logits: a writable C-contiguous 2-D buffer of
 * float32 (a CPU torch tensor's numpy view); bits: a C-contiguous 2-D buffer of int32;
 * rows, slots: int64 buffers of one length.  Indices out of range are an error (IndexError),
 * checked before anything is written.  Words with every bit set are skipped, words with
 * none set filled whole: the cost follows the banned runs, not the vocabulary.  Runs
 * without the GIL. */
static void apply_row(float *row, const unsigned int *b, long long full, long long width);

static PyObject *apply_bits(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "apply_bits(logits, bits, rows, slots)");
        return NULL;
    }
    Py_buffer lv, bv, rv, sv;
    if (PyObject_GetBuffer(args[0], &lv, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) < 0)
        return NULL;
    if (lv.ndim != 2 || lv.itemsize != 4 || lv.format == NULL || strcmp(lv.format, "f") != 0) {
        PyBuffer_Release(&lv);
        PyErr_SetString(PyExc_TypeError, "apply_bits: logits must be a 2-D buffer of float32");
        return NULL;
    }
    if (PyObject_GetBuffer(args[1], &bv, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&lv);
        return NULL;
    }
    const char *bf = bv.format;
    if (bv.ndim != 2 || bv.itemsize != 4 || bf == NULL || !(strcmp(bf, "i") == 0 || strcmp(bf, "<i") == 0 ||
                                                           strcmp(bf, "=i") == 0)) {
        PyBuffer_Release(&lv);
        PyBuffer_Release(&bv);
        PyErr_SetString(PyExc_TypeError, "apply_bits: bits must be a 2-D buffer of int32");
        return NULL;
    }
    Py_ssize_t nr, ns;
    if (int64_buffer(args[2], &rv, 0, &nr, "apply_bits: rows") < 0) {
        PyBuffer_Release(&lv);
        PyBuffer_Release(&bv);
        return NULL;
    }
    if (int64_buffer(args[3], &sv, 0, &ns, "apply_bits: slots") < 0) {
        PyBuffer_Release(&lv);
        PyBuffer_Release(&bv);
        PyBuffer_Release(&rv);
        return NULL;
    }
    long long n_rows = lv.shape[0], width = lv.shape[1], n_masks = bv.shape[0], words = bv.shape[1];
    const long long *rows = (const long long *)rv.buf, *slots = (const long long *)sv.buf;
    int bad = nr != ns;
    for (Py_ssize_t i = 0; !bad && i < nr; i++)
        bad = rows[i] < 0 || rows[i] >= n_rows || slots[i] < 0 || slots[i] >= n_masks;
    if (!bad) {
        Py_BEGIN_ALLOW_THREADS
        long long full = words * 32 < width ? words : (width + 31) / 32;
        for (Py_ssize_t i = 0; i < nr; i++)
            apply_row((float *)lv.buf + rows[i] * width, (const unsigned int *)bv.buf + slots[i] * words, full, width);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&lv);
    PyBuffer_Release(&bv);
    PyBuffer_Release(&rv);
    PyBuffer_Release(&sv);
    if (bad) {
        PyErr_SetString(PyExc_IndexError, "apply_bits: a row or slot out of range, or rows and slots of different lengths");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* one row of apply_bits: full words of the mask (the rest of the row banned).  A word with
 * every bit set is skipped, one with none filled whole, any other walked bit by bit over its
 * clear bits (measured on real 152k masks: 44% of ids banned, a third of the words empty, 60%
 * mixed - 77 us a row on the development VM; a select per lane instead wrote every float of
 * the mixed words and took 188) */
static void apply_row(float *row, const unsigned int *b, long long full, long long width) {
    const float ninf = -__builtin_inff();
    for (long long w = 0; w < full; w++) {
        unsigned int v = b[w];
        if (v == 0xFFFFFFFFu)
            continue;
        long long base = w * 32, lim = width - base < 32 ? width - base : 32;
        if (v == 0) {
            for (long long j = 0; j < lim; j++)
                row[base + j] = ninf;
            continue;
        }
        unsigned int m = ~v;
        while (m) {
            int j = __builtin_ctz(m);
            if (j >= lim)
                break;
            row[base + j] = ninf;
            m &= m - 1;
        }
    }
    for (long long t = full * 32; t < width; t++)
        row[t] = ninf;
}

/* allow_row(perm, intervals, row, eos_ids, eos) -> (ranks, n_allowed): a small
 * vocabulary's mask as one boolean row (MaskEngine._build_dense).  Every byte of row (a
 * writable C-contiguous buffer of one-byte items: the numpy bool row) is set to 1 (banned),
 * then row[perm[r]] = 0 for every rank r of every (first, end) int64 pair of each buffer in
 * the sequence intervals (the layers' accepted rank intervals), then - when eos is true or
 * no rank was cleared (a dead end: only EOS is left) - row[i] = 0 for every id of eos_ids
 * (int64).  Returns how many ranks the intervals cleared and how many bytes of row are 0.
 * A rank outside perm or an id outside the row is an error (ValueError). */
static PyObject *allow_row(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "allow_row(perm, intervals, row, eos_ids, eos)");
        return NULL;
    }
    int eos = PyObject_IsTrue(args[4]);
    if (eos < 0)
        return NULL;
    PyObject *seq = PySequence_Fast(args[1], "allow_row: intervals must be a sequence of int64 buffers");
    if (seq == NULL)
        return NULL;
    Py_buffer pv, rv;
    Py_ssize_t np_;
    if (int64_buffer(args[0], &pv, 0, &np_, "allow_row: perm") < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    if (PyObject_GetBuffer(args[2], &rv, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&pv);
        Py_DECREF(seq);
        return NULL;
    }
    const long long *perm = (const long long *)pv.buf;
    unsigned char *row = (unsigned char *)rv.buf;
    unsigned long long width = (unsigned long long)rv.len;
    long long total = 0;
    int ok = rv.itemsize == 1;
    if (!ok)
        PyErr_SetString(PyExc_TypeError, "allow_row: row must be a buffer of one-byte items");
    else
        memset(row, 1, (size_t)rv.len);
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t j = 0; ok && j < k; j++) {
        Py_buffer iv;
        Py_ssize_t n;
        if (int64_buffer(items[j], &iv, 0, &n, "allow_row: intervals") < 0) {
            ok = 0;
            break;
        }
        const long long *p = (const long long *)iv.buf;
        if (n % 2)
            ok = 0;
        for (Py_ssize_t i = 0; ok && i < n / 2; i++) {
            long long a = p[2 * i], z = p[2 * i + 1];
            if (a < 0 || z < a || z > np_) {
                ok = 0;
                break;
            }
            for (long long r = a; r < z; r++) {
                unsigned long long id = (unsigned long long)perm[r];
                if (id >= width) {
                    ok = 0;
                    break;
                }
                row[id] = 0;
            }
            total += z - a;
        }
        PyBuffer_Release(&iv);
        if (!ok && !PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "allow_row: an interval outside perm, or an id outside the row");
    }
    if (ok && (eos || total == 0)) {
        Py_buffer ev;
        Py_ssize_t ne;
        if (int64_buffer(args[3], &ev, 0, &ne, "allow_row: eos_ids") < 0) {
            ok = 0;
        } else {
            const long long *e = (const long long *)ev.buf;
            for (Py_ssize_t i = 0; i < ne; i++) {
                if ((unsigned long long)e[i] >= width) {
                    ok = 0;
                    PyErr_SetString(PyExc_ValueError, "allow_row: an EOS id outside the row");
                    break;
                }
                row[e[i]] = 0;
            }
            PyBuffer_Release(&ev);
        }
    }
    long long zeros = 0;
    if (ok)
        for (Py_ssize_t i = 0; i < rv.len; i++)
            zeros += row[i] == 0;
    PyBuffer_Release(&pv);
    PyBuffer_Release(&rv);
    Py_DECREF(seq);
    if (!ok)
        return NULL;
    return Py_BuildValue("(LL)", total, zeros);
}

/* rank_total(intervals) -> int: the ranks the (first, end) int64 pairs cover, sum(end -
 * first) (MaskEngine._piece: numpy's temporaries for it cost more than the sum) */
static PyObject *rank_total(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "rank_total(intervals)");
        return NULL;
    }
    Py_buffer view;
    Py_ssize_t n;
    if (int64_buffer(args[0], &view, 0, &n, "rank_total: intervals") < 0)
        return NULL;
    const long long *iv = (const long long *)view.buf;
    long long total = 0;
    for (Py_ssize_t i = 0; i + 1 < n; i += 2)
        total += iv[i + 1] - iv[i];
    PyBuffer_Release(&view);
    return PyLong_FromLongLong(total);
}

static PyMethodDef module_methods[] = {
    {"rank_total", (PyCFunction)(void (*)(void))rank_total, METH_FASTCALL,
     "rank_total(intervals) -> int: sum(end - first) over int64 (first, end) pairs"},
    {"apply_bits", (PyCFunction)(void (*)(void))apply_bits, METH_FASTCALL,
     "apply_bits(logits, bits, rows, slots): logits[rows[i], t] = -inf where bit t of bits[slots[i]] is clear"},
    {"side_runs", (PyCFunction)(void (*)(void))side_runs, METH_FASTCALL,
     "side_runs(intervals, lo, hi, banned, share_min) -> (long runs, short runs as int64 pairs, their total)"},
    {"gather", (PyCFunction)(void (*)(void))gather, METH_FASTCALL,
     "gather(perm, runs, out): out = perm[a:z] for each run, concatenated"},
    {"allow_row", (PyCFunction)(void (*)(void))allow_row, METH_FASTCALL,
     "allow_row(perm, intervals, row, eos_ids, eos) -> (ranks cleared, zeros): a mask's boolean row from rank intervals"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef walkmodule = {
    PyModuleDef_HEAD_INIT, "_walk", "The compiled mask walk of luaguard.guard.vocab.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__walk(void) {
    for (int i = 0; i < 300; i++)
        if (INT_CACHE[i] == NULL && (INT_CACHE[i] = PyLong_FromLong(i - 20)) == NULL)
            return NULL;
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
