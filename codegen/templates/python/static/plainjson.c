/* The value of a JSON text, as pydantic-core's `from_json(data, allow_inf_nan=False)` gives it:
 * the C form of `plainjson.py`, which the decoder and the translators parse each event with.
 *
 * Nearly every event is plain JSON: objects, arrays, strings, integers of a few digits, floats,
 * true, false and null. `parse` builds the value of such a text itself, in less time than
 * `from_json`, and gives any other text to `from_json`: an integer of more than
 * MAX_INTEGER_DIGITS digits, a float written longer than MAX_FLOAT_CHARACTERS or beyond the
 * largest double, an escaped surrogate not in a pair, nesting deeper than MAX_DEPTH, text that
 * is no JSON or no UTF-8 (so that `from_json` raises what it raises). What it builds is what
 * `from_json` builds: a dict, list, str, int, float, bool or None of the same value, and for a
 * name written twice in an object its first place and its last value, as assigning to a dict
 * gives.
 *
 * Short strings are taken from two small tables of those met before, as pydantic-core caches
 * its own: the member names interned, so that a lookup by a literal name (interned too) finds
 * them by identity, the values not, since most that differ (ids) are met once.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define MAX_DEPTH 64 /* within pydantic-core's limit and jsontext.MAX_DEPTH (LS-LIMIT-3) */
#define MAX_INTEGER_DIGITS 18 /* an integer that a long long holds */
#define MAX_FLOAT_CHARACTERS 64 /* a float written longer is left to pydantic-core */
#define SHORT 24 /* the longest string taken from a table */
#define TABLE 256 /* entries of each table */

/* A text being read: its UTF-8 from `at` (the next byte) to `end`, and how many arrays and
 * objects are open. */
typedef struct {
    const unsigned char *at;
    const unsigned char *end;
    int depth;
} Reader;

/* The tables of short strings met before, by hash of their bytes: the process's, as the module's
 * state (below) is. */
static PyObject *names[TABLE];
static PyObject *values[TABLE];

static PyObject *value(Reader *r);

static inline void
skip_space(Reader *r)
{
    while (r->at < r->end
           && (*r->at == ' ' || *r->at == '\n' || *r->at == '\r' || *r->at == '\t')) {
        r->at++;
    }
}

/* The str of `size` ASCII bytes, from `table` when it holds it; else made, and kept there. */
static PyObject *
short_ascii(PyObject **table, int name, const unsigned char *start, Py_ssize_t size)
{
    unsigned int hash = 2166136261u ^ (unsigned int)size;
    for (Py_ssize_t i = 0; i < size; i++) {
        hash = (hash ^ start[i]) * 16777619u;
    }
    PyObject **slot = &table[(hash ^ hash >> 16) % TABLE];
    PyObject *kept = *slot;
    if (kept != NULL && PyUnicode_GET_LENGTH(kept) == size
            && memcmp(PyUnicode_DATA(kept), start, (size_t)size) == 0) {
        return Py_NewRef(kept);
    }
    PyObject *made = PyUnicode_New(size, 127);
    if (made == NULL) {
        return NULL;
    }
    memcpy(PyUnicode_DATA(made), start, (size_t)size);
    if (name) {
        PyUnicode_InternInPlace(&made);
    }
    Py_XSETREF(*slot, Py_NewRef(made));
    return made;
}

/* The str of `size` bytes of UTF-8, or NULL with no error set when they are no UTF-8. */
static PyObject *
utf8(const unsigned char *start, Py_ssize_t size)
{
    PyObject *made = PyUnicode_DecodeUTF8((const char *)start, size, "strict");
    if (made == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
        PyErr_Clear();
    }
    return made;
}

static inline int
hex_digit(unsigned char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
        return (c | 0x20) - 'a' + 10;
    }
    return -1;
}

/* The UTF-16 code unit of the four hex digits at `at` (of a \u escape), or 0x10000 when they
 * are not four hex digits. */
static unsigned int
escaped_unit(const unsigned char *at)
{
    int d0 = hex_digit(at[0]), d1 = hex_digit(at[1]), d2 = hex_digit(at[2]),
        d3 = hex_digit(at[3]);
    if ((d0 | d1 | d2 | d3) < 0) {
        return 0x10000;
    }
    return (unsigned int)(d0 << 12 | d1 << 8 | d2 << 4 | d3);
}

/* The string that starts at `start`, just past its opening quote, which holds an escape: its
 * characters written out as UTF-8 first, into a buffer as long as the string as written (up to
 * its first quote not escaped, or the end of the text), which no string written out outgrows
 * (an escape is longer than its UTF-8: \n one byte, \u00e9 two, \u20ac three, a pair of twelve
 * four); not as long as the rest of the text, which a short string early in a long text would
 * ask too much memory of. */
static PyObject *
escaped(Reader *r, const unsigned char *start)
{
    unsigned char small[256];
    const unsigned char *close = start;
    while (close < r->end && *close != '"') {
        close += *close == '\\' && r->end - close > 1 ? 2 : 1;
    }
    Py_ssize_t room = close - start;
    unsigned char *out = room <= (Py_ssize_t)sizeof small ? small : PyMem_Malloc((size_t)room);
    if (out == NULL) {
        return PyErr_NoMemory();
    }
    unsigned char *to = out;
    const unsigned char *at = start;
    PyObject *made = NULL;
    while (at < r->end) {
        unsigned char c = *at;
        if (c == '"') {
            made = utf8(out, to - out);
            r->at = at + 1;
            break;
        }
        if (c < 0x20) {
            break;
        }
        if (c != '\\') {
            *to++ = c;
            at++;
            continue;
        }
        if (r->end - at < 2) {
            break;
        }
        c = at[1];
        at += 2;
        switch (c) {
        case '"': case '\\': case '/': *to++ = c; continue;
        case 'b': *to++ = '\b'; continue;
        case 'f': *to++ = '\f'; continue;
        case 'n': *to++ = '\n'; continue;
        case 'r': *to++ = '\r'; continue;
        case 't': *to++ = '\t'; continue;
        case 'u': break;
        default: goto done;
        }
        if (r->end - at < 4) {
            break;
        }
        unsigned int point = escaped_unit(at);
        if (point > 0xFFFF) {
            break;
        }
        at += 4;
        if (point >= 0xD800 && point <= 0xDFFF) {
            /* a pair of surrogates stands for one character beyond the BMP; one alone is no
             * Unicode text, which pydantic-core refuses */
            unsigned int low = r->end - at >= 6 && at[0] == '\\' && at[1] == 'u'
                ? escaped_unit(at + 2) : 0;
            if (point > 0xDBFF || low < 0xDC00 || low > 0xDFFF) {
                break;
            }
            at += 6;
            point = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00);
            *to++ = (unsigned char)(0xF0 | point >> 18);
            *to++ = (unsigned char)(0x80 | (point >> 12 & 0x3F));
            *to++ = (unsigned char)(0x80 | (point >> 6 & 0x3F));
            *to++ = (unsigned char)(0x80 | (point & 0x3F));
        } else if (point < 0x80) {
            *to++ = (unsigned char)point;
        } else if (point < 0x800) {
            *to++ = (unsigned char)(0xC0 | point >> 6);
            *to++ = (unsigned char)(0x80 | (point & 0x3F));
        } else {
            *to++ = (unsigned char)(0xE0 | point >> 12);
            *to++ = (unsigned char)(0x80 | (point >> 6 & 0x3F));
            *to++ = (unsigned char)(0x80 | (point & 0x3F));
        }
    }
done:
    if (out != small) {
        PyMem_Free(out);
    }
    return made;
}

/* The string whose opening quote `r` is at; `name`: a member name. */
static PyObject *
string(Reader *r, int name)
{
    const unsigned char *start = ++r->at;
    unsigned char high = 0;
    for (const unsigned char *at = start; at < r->end; at++) {
        unsigned char c = *at;
        if (c == '"') {
            Py_ssize_t size = at - start;
            r->at = at + 1;
            if (high) {
                return utf8(start, size);
            }
            if (size <= SHORT) {
                return short_ascii(name ? names : values, name, start, size);
            }
            PyObject *made = PyUnicode_New(size, 127);
            if (made != NULL) {
                memcpy(PyUnicode_DATA(made), start, (size_t)size);
            }
            return made;
        }
        if (c == '\\') {
            return escaped(r, start);
        }
        if (c < 0x20) {
            return NULL;
        }
        high |= c & 0x80;
    }
    return NULL;
}

/* The position after the digits from `at`. */
static inline const unsigned char *
after_digits(const unsigned char *at, const unsigned char *end)
{
    while (at < end && *at >= '0' && *at <= '9') {
        at++;
    }
    return at;
}

/* The number `r` is at: an int without a fraction or an exponent, else a float, which
 * PyOS_string_to_double rounds correctly, as pydantic-core does, so that both give the double
 * nearest the text. Every text `parse` reads ends in a NUL, so the digits at its end are not
 * followed by more. */
static PyObject *
number(Reader *r)
{
    const unsigned char *start = r->at, *end = r->end;
    const unsigned char *integral = start + (*start == '-');
    const unsigned char *at = after_digits(integral, end);
    if (at == integral || (*integral == '0' && at - integral > 1)) {
        return NULL;
    }
    int whole = 1;
    if (at < end && *at == '.') {
        const unsigned char *fraction = at + 1;
        at = after_digits(fraction, end);
        if (at == fraction) {
            return NULL;
        }
        whole = 0;
    }
    if (at < end && (*at == 'e' || *at == 'E')) {
        const unsigned char *exponent = at + 1;
        exponent += exponent < end && (*exponent == '+' || *exponent == '-');
        at = after_digits(exponent, end);
        if (at == exponent) {
            return NULL;
        }
        whole = 0;
    }
    if (whole) {
        if (at - integral > MAX_INTEGER_DIGITS) {
            return NULL;
        }
        long long value = 0;
        for (const unsigned char *place = integral; place < at; place++) {
            value = value * 10 + (*place - '0');
        }
        r->at = at;
        return PyLong_FromLongLong(integral == start ? value : -value);
    }
    if (at - start > MAX_FLOAT_CHARACTERS) {
        return NULL;
    }
    char *stop;
    double value = PyOS_string_to_double((const char *)start, &stop, NULL);
    if (value == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return NULL;
    }
    if ((const unsigned char *)stop != at || isinf(value)) {
        return NULL; /* beyond the largest double: left to pydantic-core */
    }
    r->at = at;
    return PyFloat_FromDouble(value);
}

static PyObject *
literal(Reader *r, const char *word, Py_ssize_t size, PyObject *made)
{
    if (r->end - r->at < size || memcmp(r->at, word, (size_t)size) != 0) {
        return NULL;
    }
    r->at += size;
    return Py_NewRef(made);
}

/* Whether `close` comes next, past white space: then `r` is past it, a level up. */
static int
closes(Reader *r, unsigned char close)
{
    skip_space(r);
    if (r->at < r->end && *r->at == close) {
        r->at++;
        r->depth--;
        return 1;
    }
    return 0;
}

/* After a member or an item: 1 when `close` ends the object or array (`r` past it), 0 when a
 * comma comes before the next (`r` past it and its white space), -1 for anything else. */
static int
next_or_end(Reader *r, unsigned char close)
{
    if (closes(r, close)) {
        return 1;
    }
    if (r->at >= r->end || *r->at != ',') {
        return -1;
    }
    r->at++;
    skip_space(r);
    return 0;
}

static PyObject *
object(Reader *r)
{
    if (++r->depth > MAX_DEPTH) {
        return NULL;
    }
    r->at++;
    PyObject *made = PyDict_New();
    if (made == NULL || closes(r, '}')) {
        return made;
    }
    while (r->at < r->end && *r->at == '"') {
        PyObject *name = string(r, 1);
        if (name == NULL) {
            break;
        }
        skip_space(r);
        if (r->at >= r->end || *r->at != ':') {
            Py_DECREF(name);
            break;
        }
        r->at++;
        skip_space(r);
        PyObject *member = value(r);
        if (member == NULL) {
            Py_DECREF(name);
            break;
        }
        int failed = PyDict_SetItem(made, name, member);
        Py_DECREF(name);
        Py_DECREF(member);
        int ended = failed ? -1 : next_or_end(r, '}');
        if (ended > 0) {
            return made;
        }
        if (ended < 0) {
            break;
        }
    }
    Py_DECREF(made);
    return NULL;
}

static PyObject *
array(Reader *r)
{
    if (++r->depth > MAX_DEPTH) {
        return NULL;
    }
    r->at++;
    PyObject *made = PyList_New(0);
    if (made == NULL || closes(r, ']')) {
        return made;
    }
    for (;;) {
        PyObject *item = value(r);
        if (item == NULL) {
            break;
        }
        int failed = PyList_Append(made, item);
        Py_DECREF(item);
        int ended = failed ? -1 : next_or_end(r, ']');
        if (ended > 0) {
            return made;
        }
        if (ended < 0) {
            break;
        }
    }
    Py_DECREF(made);
    return NULL;
}

/* The value `r` is at, or NULL: left to `from_json` (with no error set, unless memory ran out). */
static PyObject *
value(Reader *r)
{
    if (r->at >= r->end) {
        return NULL;
    }
    unsigned char c = *r->at;
    switch (c) {
    case '{':
        return object(r);
    case '[':
        return array(r);
    case '"':
        return string(r, 0);
    case 't':
        return literal(r, "true", 4, Py_True);
    case 'f':
        return literal(r, "false", 5, Py_False);
    case 'n':
        return literal(r, "null", 4, Py_None);
    default:
        return c == '-' || (c >= '0' && c <= '9') ? number(r) : NULL;
    }
}

static PyObject *from_json;      /* pydantic_core.from_json */
static PyObject *no_inf_nan;     /* its keyword names: ("allow_inf_nan",) */

/* What `from_json(data, allow_inf_nan=False)` gives. */
static PyObject *
from_json_strictly(PyObject *data)
{
    PyObject *arguments[] = {data, Py_False};
    return PyObject_Vectorcall(from_json, arguments, 1, no_inf_nan);
}

static PyObject *
parse(PyObject *Py_UNUSED(module), PyObject *data)
{
    Reader r;
    if (PyBytes_CheckExact(data)) {
        r.at = (const unsigned char *)PyBytes_AS_STRING(data);
        r.end = r.at + PyBytes_GET_SIZE(data);
    } else if (PyUnicode_CheckExact(data)) {
        Py_ssize_t size;
        const char *text = PyUnicode_AsUTF8AndSize(data, &size);
        if (text == NULL) { /* a surrogate, which UTF-8 cannot encode */
            PyErr_Clear();
            return from_json_strictly(data);
        }
        r.at = (const unsigned char *)text;
        r.end = r.at + size;
    } else {
        return from_json_strictly(data);
    }
    r.depth = 0;
    skip_space(&r);
    PyObject *made = value(&r);
    if (made != NULL) {
        skip_space(&r);
        if (r.at == r.end) {
            return made;
        }
        Py_DECREF(made);
    }
    if (PyErr_Occurred()) { /* memory ran out */
        return NULL;
    }
    return from_json_strictly(data);
}

static PyMethodDef methods[] = {
    {"parse", parse, METH_O,
     "parse(data, /)\n--\n\nThe value of the JSON text `data`, as "
     "`from_json(data, allow_inf_nan=False)` gives it."},
    {NULL, NULL, 0, NULL},
};

/* Initialised once a process (m_size -1, no slots), unlike `jsonscan`, which holds nothing: the
 * tables and `from_json` are the process's, written with no lock but the GIL, and pydantic-core
 * (PyO3) loads in one interpreter only. */
static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "llm_stream.plainjson",
    .m_doc = "The value of a JSON text as pydantic-core builds it, built here when it is plain.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit_plainjson(void)
{
    if (from_json == NULL) {
        PyObject *pydantic_core = PyImport_ImportModule("pydantic_core");
        if (pydantic_core == NULL) {
            return NULL;
        }
        from_json = PyObject_GetAttrString(pydantic_core, "from_json");
        Py_DECREF(pydantic_core);
        no_inf_nan = Py_BuildValue("(s)", "allow_inf_nan");
        if (from_json == NULL || no_inf_nan == NULL) {
            Py_CLEAR(from_json);
            Py_CLEAR(no_inf_nan);
            return NULL;
        }
    }
    return PyModule_Create(&module);
}
