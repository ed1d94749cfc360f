/*
 * known_types.c - the well-known extension types (SPEC 5.8) as Ruby objects:
 * BigDecimal (decimal), Date (date, by Julian day number), Tersa::UUID
 * (uuid) and Tersa::TimeOfDay (time of day). DateTime is a Date but a point
 * in time: it stays the format's TIME item. Tersa has no set: a Set is an
 * EncodeError with a hint.
 *
 * date and bigdecimal are libraries, not core classes: the encoder knows
 * their classes once the application loaded them (an object of a class
 * that is not loaded cannot exist), the decoder loads them when it meets
 * one of their values.
 */
#include "encoder.h"
#include "known_types.h"

VALUE cUUID, cTimeOfDay;

/* JD of 1970-01-01, the date payload's day 0. */
#define JD_EPOCH 2440588
#define USEC_PER_DAY 86400000000ULL
#define DECIMAL_MAX_EXPONENT 999999999L
#define DECIMAL_MAX_COEFFICIENT 1024
#define DECIMAL_MAX_DIGITS 2467 /* 10^2467 > 256^1024: longer coefficients never fit */

static ID id_Date, id_DateTime, id_BigDecimal, id_Set, id_jd, id_to_time, id_to_s, id_sign, id_split, id_at_bytes, id_at_hour,
    id_at_min, id_at_sec, id_at_usec;

/* Classes of libraries, resolved once they are loaded (0 until then; each
 * Ractor may resolve them, writing the same value). GC roots, so that
 * compaction does not move them (Set is a class written in Ruby). */
static VALUE cDate, cDateTime, cBigDecimal, cSet;

static VALUE loaded_class(VALUE *slot, ID name) {
    if (TERSA_LIKELY(*slot)) return *slot;
    if (!rb_const_defined(rb_cObject, name)) return 0;
    VALUE k = rb_const_get(rb_cObject, name);
    if (RB_TYPE_P(k, T_CLASS)) *slot = k;
    return *slot;
}

static VALUE require_class(VALUE *slot, ID name, const char *feature) {
    if (!loaded_class(slot, name)) rb_require(feature);
    if (!loaded_class(slot, name)) rb_raise(rb_eLoadError, "%s did not define %s", feature, rb_id2name(name));
    return *slot;
}

/* ==========================================================================
 * Encoding
 * ========================================================================== */

enum { WK_DECIMAL = 1, WK_DATE, WK_UUID, WK_TIME_OF_DAY };

/* What a value's Ruby methods give (they are called under rb_protect), then
 * written by C alone. */
typedef struct wk_value {
    VALUE obj;
    int kind;
    const char *bad;  /* set: the value cannot be written, for this reason */
    VALUE coefficient; /* a decimal's coefficient, big-endian bytes (a String) */
    tersa_decimal dec;
    int64_t days;
    uint64_t usec;
    const uint8_t *uuid;
    uint8_t *coefficient_bytes; /* or here (TERSA_DECIMAL_MAX_COEFFICIENT bytes), parsed from its text */
} wk_value;

static void extract_decimal_by_split(wk_value *v);

/* BigDecimal#to_s ("-0.125e1", "0.0", "Infinity", "NaN": digits without
 * trailing zeros, BigDecimal keeps no scale), parsed by the core; a zero is
 * written with exponent 0. A value beyond the payload's limits takes the
 * path that can say why, or put zeros back (split). */
static void extract_decimal(wk_value *v) {
    VALUE text = rb_funcall(v->obj, id_to_s, 0);
    if (RB_TYPE_P(text, T_STRING) &&
        tersa_decimal_parse(RSTRING_PTR(text), (size_t)RSTRING_LEN(text), &v->dec, v->coefficient_bytes)) {
        if (v->dec.coefficient_len == 0) v->dec.exponent = 0;
        return;
    }
    extract_decimal_by_split(v);
}

static void extract_decimal_by_split(wk_value *v) {
    /* BigDecimal#sign: 0 NaN, +-1 zero, +-2 finite, +-3 infinite. */
    int sign = NUM2INT(rb_funcall(v->obj, id_sign, 0));
    v->dec.coefficient = NULL;
    v->dec.coefficient_len = 0;
    v->dec.exponent = 0;
    switch (sign) {
    case 0: v->dec.kind = TERSA_DECIMAL_NAN; return;
    case 3: v->dec.kind = TERSA_DECIMAL_INF; return;
    case -3: v->dec.kind = TERSA_DECIMAL_NEG_INF; return;
    case 1: v->dec.kind = TERSA_DECIMAL_FINITE; return;
    case -1: v->dec.kind = TERSA_DECIMAL_NEGATIVE; return;
    default: break;
    }
    v->dec.kind = sign < 0 ? TERSA_DECIMAL_NEGATIVE : TERSA_DECIMAL_FINITE;
    /* split: [sign, "ddd", 10, exponent] with value 0.ddd x 10^exponent,
     * the digits without trailing zeros (BigDecimal keeps no scale). */
    VALUE parts = rb_funcall(v->obj, id_split, 0);
    VALUE digits = RARRAY_AREF(parts, 1);
    VALUE exp = RARRAY_AREF(parts, 3);
    if (!FIXNUM_P(exp)) {
        v->bad = "a decimal exponent beyond +-999,999,999 in";
        return;
    }
    long e = FIX2LONG(exp) - RSTRING_LEN(digits);
    /* split drops trailing zeros: (c=10, e=999999999) comes back as
     * (1, 1000000000), which zeros put back in range. */
    long pad = e > DECIMAL_MAX_EXPONENT && e - DECIMAL_MAX_EXPONENT <= DECIMAL_MAX_DIGITS ? e - DECIMAL_MAX_EXPONENT : 0;
    e -= pad;
    if (e < -DECIMAL_MAX_EXPONENT || e > DECIMAL_MAX_EXPONENT) {
        v->bad = "a decimal exponent beyond +-999,999,999 in";
        return;
    }
    if (pad) digits = rb_str_plus(digits, rb_str_times(rb_str_new_cstr("0"), LONG2FIX(pad)));
    VALUE c = rb_str_to_inum(digits, 10, 1);
    size_t n = rb_absint_size(c, NULL);
    if (n > DECIMAL_MAX_COEFFICIENT) {
        v->bad = "a decimal coefficient above 1,024 bytes (about 2,466 digits) in";
        return;
    }
    v->coefficient = rb_str_new(NULL, (long)n);
    rb_integer_pack(c, RSTRING_PTR(v->coefficient), n, 1, 0, INTEGER_PACK_BIG_ENDIAN);
    v->dec.coefficient = (const uint8_t *)RSTRING_PTR(v->coefficient);
    v->dec.coefficient_len = n;
    v->dec.exponent = (int32_t)e;
}

static bool ivar_long(VALUE obj, ID name, long lo, long hi, long *out) {
    VALUE x = rb_ivar_get(obj, name);
    if (!FIXNUM_P(x)) return false;
    *out = FIX2LONG(x);
    return *out >= lo && *out <= hi;
}

static VALUE extract(VALUE p) {
    wk_value *v = (wk_value *)p;
    switch (v->kind) {
    case WK_DECIMAL:
        extract_decimal(v);
        break;
    case WK_DATE: {
        VALUE jd = rb_funcall(v->obj, id_jd, 0);
        if (!FIXNUM_P(jd)) v->bad = "a date outside years 1..9999 in";
        else v->days = (int64_t)FIX2LONG(jd) - JD_EPOCH;
        break;
    }
    case WK_UUID: {
        VALUE b = rb_ivar_get(v->obj, id_at_bytes);
        if (!RB_TYPE_P(b, T_STRING) || RSTRING_LEN(b) != 16) v->bad = "no 16 bytes in";
        else v->uuid = (const uint8_t *)RSTRING_PTR(b);
        break;
    }
    case WK_TIME_OF_DAY: {
        long h, m, s, us;
        if (!ivar_long(v->obj, id_at_hour, 0, 23, &h) || !ivar_long(v->obj, id_at_min, 0, 59, &m) ||
            !ivar_long(v->obj, id_at_sec, 0, 59, &s) || !ivar_long(v->obj, id_at_usec, 0, 999999, &us))
            v->bad = "fields out of range in";
        else v->usec = (((uint64_t)h * 60 + (uint64_t)m) * 60 + (uint64_t)s) * 1000000u + (uint64_t)us;
        break;
    }
    }
    return Qnil;
}

int tersa_rb_enc_well_known(tersa_rb_encoder *e, VALUE obj, VALUE klass, uint32_t depth) {
    uint8_t coefficient[TERSA_DECIMAL_MAX_COEFFICIENT];
    wk_value v = {obj, 0, NULL, Qnil, {0}, 0, 0, NULL, coefficient};
    if (klass == cUUID) v.kind = WK_UUID;
    else if (klass == cTimeOfDay) v.kind = WK_TIME_OF_DAY;
    else if (loaded_class(&cDate, id_Date) && rb_obj_is_kind_of(obj, cDate)) {
        if (loaded_class(&cDateTime, id_DateTime) && rb_obj_is_kind_of(obj, cDateTime)) return WK_IS_DATETIME;
        v.kind = WK_DATE;
    } else if (loaded_class(&cBigDecimal, id_BigDecimal) && rb_obj_is_kind_of(obj, cBigDecimal)) v.kind = WK_DECIMAL;
    else if (rb_obj_is_kind_of(obj, cUUID)) v.kind = WK_UUID;
    else if (rb_obj_is_kind_of(obj, cTimeOfDay)) v.kind = WK_TIME_OF_DAY;
    else return WK_NONE;
    tersa_rb_enc_drop_shapes(e); /* Ruby methods run: GC may move or free cached keys */
    int state = 0;
    rb_protect(extract, (VALUE)&v, &state);
    if (state) {
        tersa_rb_enc_reset(e);
        rb_jump_tag(state);
    }
    if (v.bad) tersa_rb_enc_fail_value(e, depth, v.bad, obj);
    switch (v.kind) {
    case WK_DECIMAL: CHECK_W(tersa_write_decimal(e->w, &v.dec)); break;
    case WK_DATE: CHECK_W(tersa_write_date(e->w, v.days)); break;
    case WK_UUID: CHECK_W(tersa_write_uuid(e->w, v.uuid)); break;
    case WK_TIME_OF_DAY: CHECK_W(tersa_write_time_of_day(e->w, v.usec)); break;
    }
    RB_GC_GUARD(v.coefficient);
    return WK_WRITTEN;
}

VALUE tersa_rb_datetime_to_time(VALUE datetime) { return rb_funcall(datetime, id_to_time, 0); }

const char *tersa_rb_unsupported_hint(VALUE obj) {
    if (loaded_class(&cSet, id_Set) && rb_obj_is_kind_of(obj, cSet))
        return "Tersa has no set type: encode set.to_a, or give the encoder a default: proc";
    return NULL;
}

/* ==========================================================================
 * Decoding
 * ========================================================================== */

TERSA_NORETURN(static void invalid(const tersa_item *it, const char *what));
static void invalid(const tersa_item *it, const char *what) {
    tersa_rb_raise_decode_code("invalid_value", it->offset, what);
}

static VALUE decimal_value(const tersa_item *it) {
    require_class(&cBigDecimal, id_BigDecimal, "bigdecimal");
    /* The core's text ("-1.25", "1E+10", "Infinity"), which BigDecimal() reads;
     * it fails for an invalid payload, or for memory (buf.failed). */
    tersa_buf buf;
    tersa_buf_init(&buf, NULL);
    bool ok = tersa_well_known_text(TERSA_EXT_DECIMAL, it->v.ext.ptr, it->v.ext.len, &buf);
    bool no_memory = buf.failed;
    VALUE text = ok ? rb_str_new(buf.ptr, (long)buf.len) : Qnil;
    tersa_buf_free(&buf);
    if (!ok && no_memory) rb_raise(rb_eNoMemError, "out of memory");
    if (!ok) invalid(it, "invalid decimal payload");
    return rb_funcall(rb_mKernel, id_BigDecimal, 1, text);
}

static VALUE date_value(const tersa_item *it) {
    int64_t days;
    if (!tersa_date_of_ext(it->v.ext.ptr, it->v.ext.len, &days)) invalid(it, "invalid date payload");
    VALUE date = require_class(&cDate, id_Date, "date");
    return rb_funcall(date, id_jd, 1, LL2NUM(days + JD_EPOCH));
}

static VALUE uuid_value(const tersa_item *it) {
    if (it->v.ext.len != 16) invalid(it, "a uuid payload is 16 bytes");
    VALUE bytes = rb_enc_str_new((const char *)it->v.ext.ptr, 16, tersa_binary);
    rb_obj_freeze(bytes);
    VALUE u = rb_obj_alloc(cUUID);
    rb_ivar_set(u, id_at_bytes, bytes);
    return rb_obj_freeze(u);
}

static VALUE time_of_day_value(const tersa_item *it) {
    uint64_t us;
    if (!tersa_time_of_day_of_ext(it->v.ext.ptr, it->v.ext.len, &us) || us >= USEC_PER_DAY)
        invalid(it, "invalid time-of-day payload");
    VALUE t = rb_obj_alloc(cTimeOfDay);
    uint64_t s = us / 1000000u;
    rb_ivar_set(t, id_at_hour, INT2FIX((int)(s / 3600)));
    rb_ivar_set(t, id_at_min, INT2FIX((int)(s / 60 % 60)));
    rb_ivar_set(t, id_at_sec, INT2FIX((int)(s % 60)));
    rb_ivar_set(t, id_at_usec, INT2FIX((int)(us % 1000000u)));
    return rb_obj_freeze(t);
}

VALUE tersa_rb_well_known_value(VALUE item) {
    const tersa_item *it = (const tersa_item *)item;
    switch (it->v.ext.type) {
    case TERSA_EXT_DECIMAL: return decimal_value(it);
    case TERSA_EXT_DATE: return date_value(it);
    case TERSA_EXT_UUID: return uuid_value(it);
    case TERSA_EXT_TIME_OF_DAY: return time_of_day_value(it);
    default: invalid(it, "reserved extension type with no meaning in Tersa 1");
    }
    return Qnil;
}

void tersa_rb_init_known_types(void) {
    /* Their methods are in lib/tersa/well_known.rb. */
    cUUID = rb_define_class_under(mTersa, "UUID", rb_cObject);
    cTimeOfDay = rb_define_class_under(mTersa, "TimeOfDay", rb_cObject);
    rb_gc_register_address(&cDate);
    rb_gc_register_address(&cDateTime);
    rb_gc_register_address(&cBigDecimal);
    rb_gc_register_address(&cSet);
    id_Date = rb_intern("Date");
    id_DateTime = rb_intern("DateTime");
    id_BigDecimal = rb_intern("BigDecimal");
    id_Set = rb_intern("Set");
    id_jd = rb_intern("jd");
    id_to_time = rb_intern("to_time");
    id_sign = rb_intern("sign");
    id_split = rb_intern("split");
    id_to_s = rb_intern("to_s");
    id_at_bytes = rb_intern("@bytes");
    id_at_hour = rb_intern("@hour");
    id_at_min = rb_intern("@min");
    id_at_sec = rb_intern("@sec");
    id_at_usec = rb_intern("@usec");
}
