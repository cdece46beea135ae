/* Whether a str is certainly JSON text that `jsontext.loads` accepts, decided without building
 * any object: the C form of `jsonscan.py`, which says the same of every text it says True of.
 *
 * The decoder holds a tool call's `arguments` to be JSON text (LS-CALL-2). Parsing it to throw
 * the value away costs the quick path more than any other of its checks: pydantic-core encodes
 * the str to UTF-8, then builds the value. This scanner reads the str's own characters (each of
 * CPython's three widths) and accepts a conservative part of RFC 8259: one value between JSON
 * white space; arrays and objects nested at most MAX_DEPTH deep; strings with no control
 * character and no surrogate, raw or escaped; numbers with at most MAX_INTEGER_DIGITS digits
 * before the point and MAX_EXPONENT_DIGITS in the exponent. Within those bounds pydantic-core's
 * `from_json(text, allow_inf_nan=False)` reads the text (so `loads` does too) and `too_deep` is
 * False. Anything it is not sure of is False, and the caller parses as it would without it.
 * It allocates nothing and raises nothing.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define MAX_DEPTH 128 /* jsontext.MAX_DEPTH (the tests hold the two equal) */
#define MAX_INTEGER_DIGITS 18 /* an integer part pydantic-core reads as a 64-bit integer */
#define MAX_EXPONENT_DIGITS 2 /* 1e99 at most: 1e400 would be infinity */

/* The position after the JSON white space (space, tab, LF, CR) from `at`. */
static inline Py_ALWAYS_INLINE Py_ssize_t
skip_space(int kind, const void *data, Py_ssize_t at, Py_ssize_t length)
{
    while (at < length) {
        Py_UCS4 c = PyUnicode_READ(kind, data, at);
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
            break;
        }
        at++;
    }
    return at;
}

static inline int
hex_digit(Py_UCS4 c)
{
    if (c >= '0' && c <= '9') {
        return (int)(c - '0');
    }
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
        return (int)((c | 0x20) - 'a' + 10);
    }
    return -1;
}

/* The position after the string whose opening quote is at `at`, or -1 when it is not one that
 * is certainly read alike: unclosed, a control character, a surrogate, an unknown escape. */
static inline Py_ALWAYS_INLINE Py_ssize_t
skip_string(int kind, const void *data, Py_ssize_t at, Py_ssize_t length)
{
    at++;
    while (at < length) {
        Py_UCS4 c = PyUnicode_READ(kind, data, at);
        if (c == '"') {
            return at + 1;
        }
        if (c < 0x20 || (kind != PyUnicode_1BYTE_KIND && c >= 0xD800 && c <= 0xDFFF)) {
            return -1;
        }
        if (c != '\\') {
            at++;
            continue;
        }
        if (at + 1 >= length) {
            return -1;
        }
        c = PyUnicode_READ(kind, data, at + 1);
        if (c == 'u') {
            if (at + 5 >= length) {
                return -1;
            }
            int code = 0;
            for (Py_ssize_t digit = at + 2; digit < at + 6; digit++) {
                int value = hex_digit(PyUnicode_READ(kind, data, digit));
                if (value < 0) {
                    return -1;
                }
                code = code * 16 + value;
            }
            if (code >= 0xD800 && code <= 0xDFFF) {
                return -1;
            }
            at += 6;
        }
        else if (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' ||
                 c == 'r' || c == 't') {
            at += 2;
        }
        else {
            return -1;
        }
    }
    return -1;
}

/* The position after the run of at most `most` digits from `at`, or -1 when it is empty or
 * longer. */
static inline Py_ALWAYS_INLINE Py_ssize_t
skip_digits(int kind, const void *data, Py_ssize_t at, Py_ssize_t length, Py_ssize_t most)
{
    Py_ssize_t start = at;
    while (at < length) {
        Py_UCS4 c = PyUnicode_READ(kind, data, at);
        if (c < '0' || c > '9') {
            break;
        }
        at++;
    }
    return (at == start || at - start > most) ? -1 : at;
}

/* The position after the number at `at`, or -1 when it is no number within the bounds. */
static inline Py_ALWAYS_INLINE Py_ssize_t
skip_number(int kind, const void *data, Py_ssize_t at, Py_ssize_t length)
{
    if (PyUnicode_READ(kind, data, at) == '-') {
        at++;
    }
    if (at < length && PyUnicode_READ(kind, data, at) == '0') {
        at++;
    }
    else {
        at = skip_digits(kind, data, at, length, MAX_INTEGER_DIGITS);
        if (at < 0) {
            return -1;
        }
    }
    if (at < length && PyUnicode_READ(kind, data, at) == '.') {
        at = skip_digits(kind, data, at + 1, length, PY_SSIZE_T_MAX);
        if (at < 0) {
            return -1;
        }
    }
    if (at < length && (PyUnicode_READ(kind, data, at) | 0x20) == 'e') {
        at++;
        if (at < length && (PyUnicode_READ(kind, data, at) == '+' ||
                            PyUnicode_READ(kind, data, at) == '-')) {
            at++;
        }
        at = skip_digits(kind, data, at, length, MAX_EXPONENT_DIGITS);
    }
    return at;
}

/* The position after the literal `word` (true, false, null) at `at`, or -1. */
static inline Py_ALWAYS_INLINE Py_ssize_t
skip_word(int kind, const void *data, Py_ssize_t at, Py_ssize_t length, const char *word)
{
    for (; *word; word++, at++) {
        if (at >= length || PyUnicode_READ(kind, data, at) != (Py_UCS4)(unsigned char)*word) {
            return -1;
        }
    }
    return at;
}

/* Whether the whole text is one value within the bounds. Iterative: `closers` holds the
 * bracket that closes each array and object open, at most MAX_DEPTH of them. */
static inline Py_ALWAYS_INLINE int
scan(int kind, const void *data, Py_ssize_t length)
{
    char closers[MAX_DEPTH];
    int depth = 0;
    Py_ssize_t at = 0;

value:
    at = skip_space(kind, data, at, length);
    if (at >= length) {
        return 0;
    }
    switch (PyUnicode_READ(kind, data, at)) {
    case '{':
    case '[':
        if (depth == MAX_DEPTH) {
            return 0;
        }
        closers[depth++] = PyUnicode_READ(kind, data, at) == '{' ? '}' : ']';
        at = skip_space(kind, data, at + 1, length);
        if (at < length && PyUnicode_READ(kind, data, at) == (Py_UCS4)closers[depth - 1]) {
            depth--;
            at++;
            goto after;
        }
        if (closers[depth - 1] == '}') {
            goto member;
        }
        goto value;
    case '"':
        at = skip_string(kind, data, at, length);
        break;
    case 't':
        at = skip_word(kind, data, at, length, "true");
        break;
    case 'f':
        at = skip_word(kind, data, at, length, "false");
        break;
    case 'n':
        at = skip_word(kind, data, at, length, "null");
        break;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        at = skip_number(kind, data, at, length);
        break;
    default:
        return 0;
    }
    if (at < 0) {
        return 0;
    }

after:
    at = skip_space(kind, data, at, length);
    if (depth == 0) {
        return at == length;
    }
    if (at >= length) {
        return 0;
    }
    if (PyUnicode_READ(kind, data, at) == (Py_UCS4)closers[depth - 1]) {
        depth--;
        at++;
        goto after;
    }
    if (PyUnicode_READ(kind, data, at) != ',') {
        return 0;
    }
    at++;
    if (closers[depth - 1] == ']') {
        goto value;
    }

member:
    at = skip_space(kind, data, at, length);
    if (at >= length || PyUnicode_READ(kind, data, at) != '"') {
        return 0;
    }
    at = skip_string(kind, data, at, length);
    if (at < 0) {
        return 0;
    }
    at = skip_space(kind, data, at, length);
    if (at >= length || PyUnicode_READ(kind, data, at) != ':') {
        return 0;
    }
    at++;
    goto value;
}

static PyObject *
certainly_json(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        Py_RETURN_FALSE;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) { /* a str of the legacy API that cannot be made ready */
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
#endif
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    int certain;
    switch (PyUnicode_KIND(text)) { /* one copy of the scanner a width, its reads direct */
    case PyUnicode_1BYTE_KIND:
        certain = scan(PyUnicode_1BYTE_KIND, data, length);
        break;
    case PyUnicode_2BYTE_KIND:
        certain = scan(PyUnicode_2BYTE_KIND, data, length);
        break;
    default:
        certain = scan(PyUnicode_4BYTE_KIND, data, length);
        break;
    }
    return PyBool_FromLong(certain);
}

static PyMethodDef methods[] = {
    {"certainly_json", certainly_json, METH_O,
     "certainly_json(text, /)\n--\n\n"
     "Whether `text` is a str that is certainly JSON text `jsontext.loads` accepts, no deeper\n"
     "than MAX_DEPTH; False when it is not sure."},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "llm_stream.jsonscan",
    .m_doc = "Whether a str is certainly JSON text, decided without building any object.",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC
PyInit_jsonscan(void)
{
    return PyModuleDef_Init(&module);
}
