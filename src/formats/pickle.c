/*
 * pickle.c — restricted unpickler for PyTorch state dicts (see pickle.h).
 *
 * A pickle is a program for a stack machine (CPython Lib/pickletools.py
 * documents every opcode). A state dict saved by torch.save (protocol 2)
 * looks like:
 *
 *   PROTO 2, EMPTY_DICT, MARK,
 *     BINUNICODE 'roformer.embeddings.word_embeddings.weight',
 *     GLOBAL 'torch._utils _rebuild_tensor_v2',
 *     MARK  ('storage', GLOBAL 'torch FloatStorage', '0', 'cpu', 3200000) BINPERSID
 *           0 (offset), (50000, 64) (size), (64, 1) (stride), False,
 *           GLOBAL 'collections OrderedDict' () REDUCE   TUPLE
 *     REDUCE,
 *     ... more name/tensor pairs ...
 *   SETITEMS, STOP
 *
 * Values live in one list owned by the unpickler and are freed together;
 * nothing is traversed recursively. The input bounds every allocation: each
 * opcode creates at most one value, memo indices are capped by the pickle's
 * size, and a tensor may not address more elements than its storage holds.
 */
#include "formats/pickle.h"

#include "base/error.h"

#include <stdlib.h>
#include <string.h>

typedef enum {
    PV_NONE, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_TUPLE, PV_LIST, PV_DICT,
    PV_GLOBAL, PV_STORAGE, PV_TENSOR,
} pv_kind;

typedef enum { G_ORDERED_DICT, G_REBUILD_TENSOR, G_REBUILD_PARAMETER, G_STORAGE } global_kind;

typedef struct pv pv;
struct pv {
    pv_kind kind;
    int64_t i;              /* INT, BOOL; GLOBAL: its global_kind */
    const char *s;          /* STR: points into the pickle */
    size_t len;
    pv **items;             /* TUPLE, LIST; DICT: key, value, key, value, ... */
    size_t n, cap;
    rf_ck_dtype dtype;      /* GLOBAL storage class, STORAGE, TENSOR */
    const uint8_t *data;    /* STORAGE */
    uint64_t numel;         /* STORAGE */
    pv *storage;            /* TENSOR */
    int64_t offset;         /* TENSOR: in elements */
    int n_dims;
    int64_t shape[RF_CK_MAX_DIMS], stride[RF_CK_MAX_DIMS];
};

typedef struct {
    const uint8_t *p;
    size_t size, pos, op_pos;
    const char *what;
    rf_error *err;
    rf_storage_lookup lookup;
    void *lookup_ctx;
    pv **all;               /* every value, for freeing */
    size_t n_all, cap_all;
    pv **stack;
    size_t sp, cap_stack;
    size_t *marks;
    size_t n_marks, cap_marks;
    pv **memo;
    size_t cap_memo;
    size_t n_memo;          /* distinct memo entries set (MEMOIZE's next index) */
    uint64_t copied, copy_limit; /* bytes of strided tensors copied, and the cap */
} unpickler;

static const struct {
    uint8_t op;
    const char *name;
} opcode_names[] = {
    {'(', "MARK"}, {'.', "STOP"}, {'0', "POP"}, {'1', "POP_MARK"}, {'2', "DUP"},
    {'F', "FLOAT"}, {'I', "INT"}, {'J', "BININT"}, {'K', "BININT1"}, {'L', "LONG"},
    {'M', "BININT2"}, {'N', "NONE"}, {'P', "PERSID"}, {'Q', "BINPERSID"}, {'R', "REDUCE"},
    {'S', "STRING"}, {'T', "BINSTRING"}, {'U', "SHORT_BINSTRING"}, {'V', "UNICODE"},
    {'X', "BINUNICODE"}, {'a', "APPEND"}, {'b', "BUILD"}, {'c', "GLOBAL"}, {'d', "DICT"},
    {'}', "EMPTY_DICT"}, {'e', "APPENDS"}, {'g', "GET"}, {'h', "BINGET"}, {'i', "INST"},
    {'j', "LONG_BINGET"}, {'l', "LIST"}, {']', "EMPTY_LIST"}, {'o', "OBJ"}, {'p', "PUT"},
    {'q', "BINPUT"}, {'r', "LONG_BINPUT"}, {'s', "SETITEM"}, {'t', "TUPLE"},
    {')', "EMPTY_TUPLE"}, {'u', "SETITEMS"}, {'G', "BINFLOAT"}, {0x80, "PROTO"},
    {0x81, "NEWOBJ"}, {0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"}, {0x85, "TUPLE1"},
    {0x86, "TUPLE2"}, {0x87, "TUPLE3"}, {0x88, "NEWTRUE"}, {0x89, "NEWFALSE"},
    {0x8a, "LONG1"}, {0x8b, "LONG4"}, {'B', "BINBYTES"}, {'C', "SHORT_BINBYTES"},
    {0x8c, "SHORT_BINUNICODE"}, {0x8d, "BINUNICODE8"}, {0x8e, "BINBYTES8"},
    {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"}, {0x91, "FROZENSET"}, {0x92, "NEWOBJ_EX"},
    {0x93, "STACK_GLOBAL"}, {0x94, "MEMOIZE"}, {0x95, "FRAME"}, {0x96, "BYTEARRAY8"},
    {0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"},
};

static const char *opcode_name(uint8_t op)
{
    for (size_t i = 0; i < sizeof opcode_names / sizeof opcode_names[0]; i++)
        if (opcode_names[i].op == op)
            return opcode_names[i].name;
    return "unknown";
}

static const struct {
    const char *name;
    rf_ck_dtype dtype;
} storage_classes[] = {
    {"FloatStorage", RF_CK_F32}, {"HalfStorage", RF_CK_F16},  {"BFloat16Storage", RF_CK_BF16},
    {"DoubleStorage", RF_CK_F64}, {"LongStorage", RF_CK_I64}, {"IntStorage", RF_CK_I32},
    {"ShortStorage", RF_CK_I16}, {"CharStorage", RF_CK_I8},   {"ByteStorage", RF_CK_U8},
    {"BoolStorage", RF_CK_BOOL},
};

/* ==== The machine ==== */

static rf_status bad(unpickler *u, const char *what_is_wrong)
{
    return rf_fail(u->err, RF_ERR_FORMAT, "%s: bad pickle: %s (opcode %s at byte %zu)", u->what,
                   what_is_wrong, opcode_name(u->p[u->op_pos]), u->op_pos);
}

static rf_status oom(unpickler *u)
{
    if (u->n_all >= RF_PICKLE_MAX_VALUES)
        return rf_fail(u->err, RF_ERR_LIMIT, "%s: the pickle makes more than %d values",
                       u->what, RF_PICKLE_MAX_VALUES);
    return rf_fail(u->err, RF_ERR_NOMEM, "%s: out of memory reading the pickle", u->what);
}

static bool grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(*arr, c * elem);
    if (!p)
        return false;
    *arr = p;
    *cap = c;
    return true;
}

static pv *new_value(unpickler *u, pv_kind kind)
{
    /* each opcode makes at most one value: more means a bug, not input; a
     * value takes ~250 bytes, so the count is capped too (see pickle.h) */
    if (u->n_all > u->size + 16 || u->n_all >= RF_PICKLE_MAX_VALUES ||
        !grow((void **)&u->all, &u->cap_all, u->n_all + 1, sizeof(pv *)))
        return NULL;
    pv *v = calloc(1, sizeof *v);
    if (v) {
        v->kind = kind;
        u->all[u->n_all++] = v;
    }
    return v;
}

static rf_status push(unpickler *u, pv *v)
{
    if (!v || !grow((void **)&u->stack, &u->cap_stack, u->sp + 1, sizeof(pv *)))
        return oom(u);
    u->stack[u->sp++] = v;
    return RF_OK;
}

static rf_status push_new(unpickler *u, pv_kind kind, int64_t i)
{
    pv *v = new_value(u, kind);
    if (!v)
        return oom(u);
    v->i = i;
    return push(u, v);
}

/* The lowest stack index the current opcode may pop down to. */
static size_t floor_of_stack(const unpickler *u)
{
    return u->n_marks ? u->marks[u->n_marks - 1] : 0;
}

static pv *pop(unpickler *u)
{
    return u->sp > floor_of_stack(u) ? u->stack[--u->sp] : NULL;
}

static pv *top(unpickler *u)
{
    return u->sp > floor_of_stack(u) ? u->stack[u->sp - 1] : NULL;
}

static bool append(pv *c, pv *item)
{
    if (!grow((void **)&c->items, &c->cap, c->n + 1, sizeof(pv *)))
        return false;
    c->items[c->n++] = item;
    return true;
}

/* Pops everything above the last MARK into a new container of `kind`. */
static rf_status pop_mark_into(unpickler *u, pv_kind kind, pv **out)
{
    if (!u->n_marks)
        return bad(u, "no MARK");
    size_t from = u->marks[--u->n_marks];
    pv *c = new_value(u, kind);
    if (!c)
        return oom(u);
    for (size_t i = from; i < u->sp; i++)
        if (!append(c, u->stack[i]))
            return oom(u);
    u->sp = from;
    *out = c;
    return RF_OK;
}

static bool read_bytes(unpickler *u, size_t n, const uint8_t **out)
{
    if (u->size - u->pos < n)
        return false;
    *out = u->p + u->pos;
    u->pos += n;
    return true;
}

static bool read_le(unpickler *u, size_t n, uint64_t *v)
{
    const uint8_t *b;
    *v = 0;
    if (!read_bytes(u, n, &b))
        return false;
    for (size_t i = 0; i < n; i++)
        *v |= (uint64_t)b[i] << (8 * i);
    return true;
}

static rf_status memo_put(unpickler *u, uint64_t index)
{
    pv *v = top(u);
    if (!v)
        return bad(u, "empty stack");
    /* a pickler numbers its memo from 0: an index past the pickle's size
     * cannot come from one */
    if (index > u->size)
        return rf_fail(u->err, RF_ERR_LIMIT, "%s: bad pickle: memo index %llu too large", u->what,
                       (unsigned long long)index);
    size_t old = u->cap_memo;
    if (!grow((void **)&u->memo, &u->cap_memo, (size_t)index + 1, sizeof(pv *)))
        return oom(u);
    memset(u->memo + old, 0, (u->cap_memo - old) * sizeof(pv *));
    if (!u->memo[index])
        u->n_memo++;
    u->memo[index] = v;
    return RF_OK;
}

static rf_status memo_get(unpickler *u, uint64_t index)
{
    if (index >= u->cap_memo || !u->memo[index])
        return bad(u, "memo entry not set");
    return push(u, u->memo[index]);
}

static rf_status push_str(unpickler *u, uint64_t len)
{
    const uint8_t *b;
    if (len > u->size || !read_bytes(u, (size_t)len, &b))
        return bad(u, "string runs past the end");
    pv *v = new_value(u, PV_STR);
    if (!v)
        return oom(u);
    v->s = (const char *)b;
    v->len = (size_t)len;
    return push(u, v);
}

static bool str_is(const pv *v, const char *s)
{
    return v && v->kind == PV_STR && v->len == strlen(s) && !memcmp(v->s, s, v->len);
}

/* GLOBAL module/name: only the names a state dict needs. */
static rf_status push_global(unpickler *u, const char *mod, size_t mod_len, const char *name,
                             size_t name_len)
{
    pv *g = new_value(u, PV_GLOBAL);
    if (!g)
        return oom(u);
#define IS(s, n, lit) ((n) == sizeof(lit) - 1 && !memcmp((s), (lit), (n)))
    if (IS(mod, mod_len, "collections") && IS(name, name_len, "OrderedDict"))
        g->i = G_ORDERED_DICT;
    else if (IS(mod, mod_len, "torch._utils") && IS(name, name_len, "_rebuild_tensor_v2"))
        g->i = G_REBUILD_TENSOR;
    else if (IS(mod, mod_len, "torch._utils") && IS(name, name_len, "_rebuild_parameter"))
        g->i = G_REBUILD_PARAMETER;
    else if (IS(mod, mod_len, "torch")) {
        size_t k;
        for (k = 0; k < sizeof storage_classes / sizeof storage_classes[0]; k++)
            if (name_len == strlen(storage_classes[k].name) &&
                !memcmp(name, storage_classes[k].name, name_len))
                break;
        if (k == sizeof storage_classes / sizeof storage_classes[0])
            goto unsupported;
        g->i = G_STORAGE;
        g->dtype = storage_classes[k].dtype;
    } else
        goto unsupported;
#undef IS
    return push(u, g);
unsupported:
    return rf_fail(u->err, RF_ERR_UNSUPPORTED, "%s: unsupported pickle global '%.*s.%.*s' at byte %zu",
                   u->what, (int)(mod_len > 200 ? 200 : mod_len), mod,
                   (int)(name_len > 200 ? 200 : name_len), name, u->op_pos);
}

/* GLOBAL's argument: "module\nname\n". */
static rf_status op_global(unpickler *u)
{
    const char *line[2];
    size_t len[2];
    for (int k = 0; k < 2; k++) {
        const uint8_t *start = u->p + u->pos;
        const uint8_t *nl = memchr(start, '\n', u->size - u->pos);
        if (!nl)
            return bad(u, "GLOBAL without a newline");
        line[k] = (const char *)start;
        len[k] = (size_t)(nl - start);
        u->pos += len[k] + 1;
    }
    return push_global(u, line[0], len[0], line[1], len[1]);
}

/* BINPERSID: ('storage', StorageClass, key, location, numel) -> a storage. */
static rf_status op_persid(unpickler *u)
{
    pv *pid = pop(u);
    if (!pid || pid->kind != PV_TUPLE || pid->n != 5 || !str_is(pid->items[0], "storage") ||
        pid->items[1]->kind != PV_GLOBAL || pid->items[1]->i != G_STORAGE ||
        pid->items[2]->kind != PV_STR || pid->items[3]->kind != PV_STR ||
        pid->items[4]->kind != PV_INT || pid->items[4]->i < 0)
        return bad(u, "persistent id is not ('storage', type, key, location, numel)");
    pv *key = pid->items[2];
    uint64_t bytes = 0, numel = (uint64_t)pid->items[4]->i;
    rf_ck_dtype dtype = pid->items[1]->dtype;
    const uint8_t *data = u->lookup(u->lookup_ctx, key->s, key->len, &bytes);
    if (!data)
        return rf_fail(u->err, RF_ERR_FORMAT, "%s: storage '%.*s' is missing from the archive (or compressed)",
                       u->what, (int)(key->len > 200 ? 200 : key->len), key->s);
    if (numel > bytes / rf_ck_dtype_size(dtype))
        return rf_fail(u->err, RF_ERR_FORMAT,
                       "%s: truncated storage '%.*s' (%llu elements need %llu bytes, it has %llu)",
                       u->what, (int)(key->len > 200 ? 200 : key->len), key->s,
                       (unsigned long long)numel,
                       (unsigned long long)(numel * rf_ck_dtype_size(dtype)),
                       (unsigned long long)bytes);
    pv *s = new_value(u, PV_STORAGE);
    if (!s)
        return oom(u);
    s->dtype = dtype;
    s->data = data;
    s->numel = numel;
    return push(u, s);
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]) */
static rf_status rebuild_tensor(unpickler *u, pv *args, pv **out)
{
    if (args->n < 4 || args->items[0]->kind != PV_STORAGE || args->items[1]->kind != PV_INT ||
        args->items[2]->kind != PV_TUPLE || args->items[3]->kind != PV_TUPLE ||
        args->items[2]->n != args->items[3]->n || args->items[2]->n > RF_CK_MAX_DIMS ||
        args->items[1]->i < 0)
        return bad(u, "_rebuild_tensor_v2 with bad arguments");
    pv *t = new_value(u, PV_TENSOR);
    if (!t)
        return oom(u);
    t->storage = args->items[0];
    t->dtype = t->storage->dtype;
    t->offset = args->items[1]->i;
    t->n_dims = (int)args->items[2]->n;
    uint64_t count = 1, last = (uint64_t)t->offset;
    bool ok = true;
    for (int d = 0; d < t->n_dims && ok; d++) {
        const pv *sz = args->items[2]->items[d], *st = args->items[3]->items[d];
        ok = sz->kind == PV_INT && st->kind == PV_INT && sz->i >= 0 && st->i >= 0;
        if (!ok)
            break;
        t->shape[d] = sz->i;
        t->stride[d] = st->i;
        uint64_t reach;
        ok = !__builtin_mul_overflow(count, (uint64_t)sz->i, &count);
        if (ok && sz->i > 0)
            ok = !__builtin_mul_overflow((uint64_t)(sz->i - 1), (uint64_t)st->i, &reach) &&
                 !__builtin_add_overflow(last, reach, &last);
    }
    /* every element inside the storage, and no more elements than it holds
     * (a state dict never stores self-overlapping views) */
    if (!ok || (count > 0 && (last >= t->storage->numel || count > t->storage->numel)))
        return bad(u, "tensor size, stride or offset outside its storage");
    *out = t;
    return RF_OK;
}

static rf_status op_reduce(unpickler *u)
{
    pv *args = pop(u), *fn = pop(u), *result = NULL;
    rf_status st;
    if (!args || !fn || args->kind != PV_TUPLE || fn->kind != PV_GLOBAL)
        return bad(u, "REDUCE needs a global and an argument tuple");
    switch ((global_kind)fn->i) {
    case G_ORDERED_DICT:
        if (args->n != 0)
            return bad(u, "OrderedDict with arguments");
        if (!(result = new_value(u, PV_DICT)))
            return oom(u);
        break;
    case G_REBUILD_TENSOR:
        if ((st = rebuild_tensor(u, args, &result)))
            return st;
        break;
    case G_REBUILD_PARAMETER:
        if (args->n < 1 || args->items[0]->kind != PV_TENSOR)
            return bad(u, "_rebuild_parameter with bad arguments");
        result = args->items[0];
        break;
    case G_STORAGE:
        return bad(u, "a storage class called directly");
    }
    return push(u, result);
}

static rf_status set_items(unpickler *u, pv *dict, pv **kv, size_t n)
{
    if (!dict || dict->kind != PV_DICT || n % 2)
        return bad(u, "SETITEM(S) on something that is not a dict");
    for (size_t i = 0; i < n; i++)
        if (!append(dict, kv[i]))
            return oom(u);
    return RF_OK;
}

static rf_status step(unpickler *u, uint8_t op, bool *stop)
{
    uint64_t v;
    pv *a, *b;
    rf_status st;
    switch (op) {
    case 0x80: /* PROTO */
        if (!read_le(u, 1, &v) || v < 2 || v > 5)
            return bad(u, "protocol not 2 to 5");
        return RF_OK;
    case 0x95: /* FRAME: a length hint only */
        return read_le(u, 8, &v) ? RF_OK : bad(u, "truncated");
    case '(':
        if (!grow((void **)&u->marks, &u->cap_marks, u->n_marks + 1, sizeof(size_t)))
            return oom(u);
        u->marks[u->n_marks++] = u->sp;
        return RF_OK;
    case '.':
        *stop = true;
        return RF_OK;
    case '0':
        return pop(u) ? RF_OK : bad(u, "empty stack");
    case '1': /* POP_MARK: drop everything above the last MARK */
        return pop_mark_into(u, PV_TUPLE, &a);
    case '2':
        return (a = top(u)) ? push(u, a) : bad(u, "empty stack");
    case '}':
        return push_new(u, PV_DICT, 0);
    case ']':
        return push_new(u, PV_LIST, 0);
    case ')':
        return push_new(u, PV_TUPLE, 0);
    case 'N':
        return push_new(u, PV_NONE, 0);
    case 0x88:
        return push_new(u, PV_BOOL, 1);
    case 0x89:
        return push_new(u, PV_BOOL, 0);
    case 'J':
        return read_le(u, 4, &v) ? push_new(u, PV_INT, (int32_t)(uint32_t)v) : bad(u, "truncated");
    case 'K':
        return read_le(u, 1, &v) ? push_new(u, PV_INT, (int64_t)v) : bad(u, "truncated");
    case 'M':
        return read_le(u, 2, &v) ? push_new(u, PV_INT, (int64_t)v) : bad(u, "truncated");
    case 0x8a: { /* LONG1: n-byte two's complement little-endian */
        uint64_t n;
        if (!read_le(u, 1, &n) || n > 8 || !read_le(u, (size_t)n, &v))
            return bad(u, "LONG1 longer than 8 bytes");
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1)
            v |= ~0ull << (8 * n);
        return push_new(u, PV_INT, (int64_t)v);
    }
    case 'G': { /* BINFLOAT: big-endian double, kept only as a placeholder */
        const uint8_t *bytes;
        return read_bytes(u, 8, &bytes) ? push_new(u, PV_FLOAT, 0) : bad(u, "truncated");
    }
    case 'X':
        return read_le(u, 4, &v) ? push_str(u, v) : bad(u, "truncated");
    case 0x8c:
        return read_le(u, 1, &v) ? push_str(u, v) : bad(u, "truncated");
    case 0x8d:
        return read_le(u, 8, &v) ? push_str(u, v) : bad(u, "truncated");
    case 'q':
        return read_le(u, 1, &v) ? memo_put(u, v) : bad(u, "truncated");
    case 'r':
        return read_le(u, 4, &v) ? memo_put(u, v) : bad(u, "truncated");
    case 0x94: /* MEMOIZE: index = number of memo entries */
        return memo_put(u, u->n_memo);
    case 'h':
        return read_le(u, 1, &v) ? memo_get(u, v) : bad(u, "truncated");
    case 'j':
        return read_le(u, 4, &v) ? memo_get(u, v) : bad(u, "truncated");
    case 't':
        if ((st = pop_mark_into(u, PV_TUPLE, &a)))
            return st;
        return push(u, a);
    case 'l':
        if ((st = pop_mark_into(u, PV_LIST, &a)))
            return st;
        return push(u, a);
    case 'd':
        if ((st = pop_mark_into(u, PV_DICT, &a)))
            return st;
        if (a->n % 2)
            return bad(u, "DICT with an odd number of items");
        return push(u, a);
    case 0x85: case 0x86: case 0x87: { /* TUPLE1..3 */
        size_t n = (size_t)(op - 0x84);
        if (u->sp - floor_of_stack(u) < n)
            return bad(u, "stack underflow");
        if (!(a = new_value(u, PV_TUPLE)))
            return oom(u);
        for (size_t i = u->sp - n; i < u->sp; i++)
            if (!append(a, u->stack[i]))
                return oom(u);
        u->sp -= n;
        return push(u, a);
    }
    case 'c':
        return op_global(u);
    case 0x93: /* STACK_GLOBAL */
        b = pop(u);
        a = pop(u);
        if (!a || !b || a->kind != PV_STR || b->kind != PV_STR)
            return bad(u, "STACK_GLOBAL needs two strings");
        return push_global(u, a->s, a->len, b->s, b->len);
    case 'Q':
        return op_persid(u);
    case 'R':
        return op_reduce(u);
    case 'b': /* BUILD: object state (e.g. a state dict's _metadata); not needed */
        a = pop(u);
        b = top(u);
        if (!a || !b || (b->kind != PV_DICT && b->kind != PV_TENSOR))
            return bad(u, "BUILD on something that is not a dict or tensor");
        return RF_OK;
    case 's': {
        pv *kv[2];
        kv[1] = pop(u);
        kv[0] = pop(u);
        if (!kv[0] || !kv[1])
            return bad(u, "stack underflow");
        return set_items(u, top(u), kv, 2);
    }
    case 'u':
        if ((st = pop_mark_into(u, PV_TUPLE, &a)))
            return st;
        return set_items(u, top(u), a->items, a->n);
    case 'a':
        b = pop(u);
        a = top(u);
        if (!b || !a || a->kind != PV_LIST)
            return bad(u, "APPEND to something that is not a list");
        return append(a, b) ? RF_OK : oom(u);
    case 'e':
        if ((st = pop_mark_into(u, PV_TUPLE, &b)))
            return st;
        a = top(u);
        if (!a || a->kind != PV_LIST)
            return bad(u, "APPENDS to something that is not a list");
        for (size_t i = 0; i < b->n; i++)
            if (!append(a, b->items[i]))
                return oom(u);
        return RF_OK;
    }
    return rf_fail(u->err, RF_ERR_UNSUPPORTED, "%s: unsupported pickle opcode %s (0x%02x) at byte %zu",
                   u->what, opcode_name(op), op, u->op_pos);
}

/* ==== State dict -> tensors ==== */

static rf_status emit_tensor(unpickler *u, const pv *key, const pv *t, rf_checkpoint *ck)
{
    rf_ck_tensor out = {0};
    size_t es = rf_ck_dtype_size(t->dtype);
    int64_t count = 1, expect = 1;
    bool contiguous = true;
    out.dtype = t->dtype;
    out.n_dims = t->n_dims;
    for (int d = t->n_dims - 1; d >= 0; d--) {
        out.shape[d] = t->shape[d];
        if (t->shape[d] != 1 && t->stride[d] != expect)
            contiguous = false;
        expect *= t->shape[d];
        count *= t->shape[d];
    }
    out.count = count;
    out.nbytes = (size_t)count * es;
    const uint8_t *base = t->storage->data + (size_t)t->offset * es;
    if (contiguous || count == 0) {
        out.data = count ? base : t->storage->data;
    } else {
        /* strided view: gather into row-major order */
        if (out.nbytes > u->copy_limit - u->copied)
            return rf_fail(u->err, RF_ERR_LIMIT,
                           "%s: strided tensor '%.*s' would bring the copies of strided tensors "
                           "past %llu bytes, the size of the archive",
                           u->what, (int)(key->len > 200 ? 200 : key->len), key->s,
                           (unsigned long long)u->copy_limit);
        u->copied += out.nbytes;
        uint8_t *copy = malloc(out.nbytes);
        int64_t idx[RF_CK_MAX_DIMS] = {0};
        if (!copy)
            return oom(u);
        for (int64_t i = 0; i < count; i++) {
            int64_t off = 0;
            for (int d = 0; d < t->n_dims; d++)
                off += idx[d] * t->stride[d];
            memcpy(copy + (size_t)i * es, base + (size_t)off * es, es);
            for (int d = t->n_dims - 1; d >= 0 && ++idx[d] == t->shape[d]; d--)
                idx[d] = 0;
        }
        rf_status st = rf_checkpoint_own(ck, copy, u->err);
        if (st)
            return st;
        out.data = copy;
    }
    return rf_checkpoint_add(ck, key->s, key->len, &out, u->err);
}

static rf_status emit(unpickler *u, const pv *dict, rf_checkpoint *ck)
{
    if (!dict || dict->kind != PV_DICT)
        return rf_fail(u->err, RF_ERR_FORMAT, "%s: the pickle is not a state dict", u->what);
    for (size_t i = 0; i + 1 < dict->n; i += 2) {
        const pv *k = dict->items[i], *t = dict->items[i + 1];
        if (k->kind != PV_STR || memchr(k->s, '\0', k->len))
            return rf_fail(u->err, RF_ERR_FORMAT, "%s: state dict key %zu is not a string",
                           u->what, i / 2);
        if (t->kind != PV_TENSOR)
            return rf_fail(u->err, RF_ERR_FORMAT, "%s: state dict entry '%.*s' is not a tensor",
                           u->what, (int)(k->len > 200 ? 200 : k->len), k->s);
        rf_status st = emit_tensor(u, k, t, ck);
        if (st)
            return st;
    }
    return rf_checkpoint_index(ck, u->what, u->err);
}

rf_status rf_unpickle_state_dict(const uint8_t *pkl, size_t size, rf_storage_lookup lookup,
                                 void *lookup_ctx, uint64_t copy_limit, const char *what,
                                 rf_checkpoint *ck, rf_error *err)
{
    unpickler u = {.p = pkl, .size = size, .what = what, .err = err, .lookup = lookup,
                   .lookup_ctx = lookup_ctx, .copy_limit = copy_limit};
    rf_status st = RF_OK;
    bool stop = false;
    while (!st && !stop) {
        if (u.pos >= u.size) {
            st = rf_fail(err, RF_ERR_FORMAT, "%s: truncated pickle (no STOP)", what);
            break;
        }
        u.op_pos = u.pos;
        st = step(&u, u.p[u.pos++], &stop);
    }
    if (!st)
        st = emit(&u, u.sp == 1 ? u.stack[0] : NULL, ck);
    for (size_t i = 0; i < u.n_all; i++) {
        free(u.all[i]->items);
        free(u.all[i]);
    }
    free(u.all);
    free(u.stack);
    free(u.marks);
    free(u.memo);
    return st;
}
