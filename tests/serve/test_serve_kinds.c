/*
 * test_serve_kinds.c — the server's table of job kinds (tools/roformer/
 * serve/kinds.c): a row for every serve_kind, at its own index, with every
 * function set (the compiler checks the count and each row's fields; this
 * finds a hole in the table); and each kind's results, with no model:
 * allocated for two units, unit 0 packed and unpacked into unit 1 byte for
 * byte, moved to other results, and freed (under ASan: nothing leaks).
 */
#include "../check.h"

#include "serve/kinds.h"
#include "serve/results.h"

enum { D = 4, N = 3 };

static void *row_at(const serve_results *r, int32_t i)
{
    return (char *)r->rows + (size_t)r->first[i] * r->row_bytes;
}

static size_t unit_bytes(const serve_results *r, int32_t i)
{
    return (size_t)r->count[i] * r->row_bytes;
}

static void test_rows(void)
{
    for (int k = 0; k < SERVE_KIND_COUNT; k++) {
        const serve_kind_ops *o = serve_kind_ops_of((serve_kind)k);
        CHECK(o != NULL, "kind %d has a row", k);
        if (!o)
            continue;
        CHECK(o->kind == (serve_kind)k, "%s: row %d is its own kind's", o->name, k);
        CHECK(o->name && o->name[0], "kind %d has a name", k);
        CHECK(o->inputs_per_unit >= 1 && o->encodings_per_input >= 1,
              "%s: inputs per unit and encodings per input", o->name);
        CHECK(!o->per_token || (o->inputs_per_unit == 1 && o->encodings_per_input == 1),
              "%s: per-token rows come from one encoding per unit", o->name);
        CHECK(o->row_bytes && o->run && o->key_options && o->move && o->pack && o->unpack &&
                  o->release,
              "%s: every function set", o->name);
    }
    CHECK(serve_kind_ops_of(SERVE_KIND_COUNT) == NULL, "no row past the kinds");
}

/* Plain rows get a pattern; rows that own memory stay empty (zeroed),
 * which packs and unpacks as a result with nothing in it. */
static bool owns_memory(const serve_kind_ops *o)
{
    return o->kind == SERVE_KIND_FILL_MASK || o->kind == SERVE_KIND_NER;
}

static void test_results(void)
{
    rf_encoding encs[2] = {{.n = 3}, {.n = 3}};
    for (int k = 0; k < SERVE_KIND_COUNT; k++) {
        const serve_kind_ops *o = serve_kind_ops_of((serve_kind)k);
        serve_results a, b;
        bool ok = serve_results_alloc(&a, o, 2, encs, D, N);
        ok = serve_results_alloc(&b, o, 2, encs, D, N) && ok;
        CHECK(ok, "%s: results allocated", o->name);
        if (!ok) {
            serve_results_free(&a);
            serve_results_free(&b);
            continue;
        }
        CHECK(a.units == 2 && a.row_bytes > 0 && a.count[0] == (o->per_token ? 3 : 1) &&
                  a.first[1] == a.count[0],
              "%s: two units laid out", o->name);
        if (!owns_memory(o))
            for (size_t i = 0; i < unit_bytes(&a, 0); i++)
                ((unsigned char *)row_at(&a, 0))[i] = (unsigned char)(i * 7 + 1);
        a.items[0] = (rf_item_status){.status = RF_OK};
        serve_bytes value = {0};
        serve_results_pack(&a, 0, 5, NULL, &value);
        CHECK(!value.failed && serve_results_unpack(&a, 1, NULL, value.p, value.len),
              "%s: unit 0 packed and unpacked into unit 1", o->name);
        CHECK(a.items[1].status == RF_OK, "%s: the unpacked unit is RF_OK", o->name);
        serve_results_move(&b, 0, &a, 1, 5);
        bool same = owns_memory(o) || !memcmp(row_at(&b, 0), row_at(&a, 0), unit_bytes(&a, 0));
        CHECK(same, "%s: unit 1 moved to other results, byte for byte", o->name);
        serve_bytes_free(&value);
        serve_results_free(&a);
        serve_results_free(&b);
        CHECK(a.rows == NULL && b.rows == NULL, "%s: results freed", o->name);
    }
}

int main(void)
{
    test_rows();
    test_results();
    return check_done();
}
