/* The fixed part of the C host that `physlayout compile` writes as OUT/host.c: a standalone
 * C99 program on the OpenCL 1.2 C API that runs one launch plan (runtime/plan.py). The plan
 * itself is generated into tables at the marker below (runtime/host_c.py); this file holds
 * no knowledge of any particular program.
 *
 * What it does, in order: reads the --input .npy files (dtype, C order and shape checked
 * against the plan), picks a device (--device, $PHYSLAYOUT_OPENCL_DEVICE, else the first
 * GPU, else the first device), checks the plan's requirements (image support and sizes,
 * extensions), builds kernels.cl (whose first line must name this artifact), runs the
 * plan's steps (allocate, fill, write, launch, copy, read), prints each launch's device time
 * from profiling events, and writes every output as .npy. Every OpenCL call is checked; a
 * failure is reported with the call and the error's name, and the program exits 1.
 */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum dtype { DT_F32, DT_F16, DT_F64, DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_U16, DT_U32, DT_U64, DT_BOOL };
static const struct {
    const char *name;  /* numpy's name */
    const char *descr; /* the .npy descr numpy writes on a little-endian machine */
    size_t size;
    int is_float;
    int is_signed;
} DTYPES[] = {
    {"float32", "<f4", 4, 1, 1}, {"float16", "<f2", 2, 1, 1}, {"float64", "<f8", 8, 1, 1},
    {"int8", "|i1", 1, 0, 1},    {"int16", "<i2", 2, 0, 1},   {"int32", "<i4", 4, 0, 1},
    {"int64", "<i8", 8, 0, 1},   {"uint8", "|u1", 1, 0, 0},   {"uint16", "<u2", 2, 0, 0},
    {"uint32", "<u4", 4, 0, 0},  {"uint64", "<u8", 8, 0, 0},  {"bool", "|b1", 1, 0, 0},
};

enum storage_kind { KIND_BUFFER, KIND_IMAGE };
struct storage {
    const char *name;
    int kind;
    int dtype;
    size_t elements;
    size_t bytes;
    size_t width, height; /* images: texels */
};

enum direction { DIR_IN, DIR_OUT, DIR_INOUT };
struct param {
    const char *name;
    int is_scalar;
    int dtype;
    int direction;
    int rank;
    const long long *shape;
    int host_storage; /* -1 for scalars */
    const char *layout;
};

enum arg_kind { ARG_STORAGE, ARG_VALUE, ARG_INPUT };
struct arg {
    int kind;
    int storage;                /* ARG_STORAGE */
    int dtype;                  /* ARG_VALUE, ARG_INPUT: the C type of the argument */
    int param;                  /* ARG_INPUT: the scalar parameter */
    const unsigned char *value; /* ARG_VALUE: its bytes */
};

enum op { OP_ALLOCATE, OP_FILL, OP_WRITE, OP_READ, OP_LAUNCH, OP_COPY_BUFFER_TO_IMAGE, OP_COPY_IMAGE_TO_BUFFER, OP_CHECK };
struct step {
    int op;
    int storage; /* ALLOCATE, FILL, WRITE, READ */
    int src, dst; /* COPY_* */
    int param;    /* WRITE, READ */
    int kernel;   /* LAUNCH: index into KERNELS */
    const char *function;
    int first_arg, n_args;
    cl_uint dims;
    size_t global[3];
    size_t local[3];
    const unsigned char *fill; /* FILL: one element's bytes */
    float fill_color;          /* FILL of an image: every channel */
    size_t offset, count;      /* CHECK: the flags, elements of the buffer `storage` */
    const char *message;       /* CHECK: the failure's message */
};

/* @PLAN_TABLES@ */

/* Errors ---------------------------------------------------------------------------------- */

static const char *cl_error_name(cl_int code) {
    switch (code) {
    case 0: return "CL_SUCCESS";
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -7: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -8: return "CL_MEM_COPY_OVERLAP";
    case -9: return "CL_IMAGE_FORMAT_MISMATCH";
    case -10: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -12: return "CL_MAP_FAILURE";
    case -13: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -14: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -15: return "CL_COMPILE_PROGRAM_FAILURE";
    case -16: return "CL_LINKER_NOT_AVAILABLE";
    case -17: return "CL_LINK_PROGRAM_FAILURE";
    case -18: return "CL_DEVICE_PARTITION_FAILED";
    case -19: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
    case -30: return "CL_INVALID_VALUE";
    case -31: return "CL_INVALID_DEVICE_TYPE";
    case -32: return "CL_INVALID_PLATFORM";
    case -33: return "CL_INVALID_DEVICE";
    case -34: return "CL_INVALID_CONTEXT";
    case -35: return "CL_INVALID_QUEUE_PROPERTIES";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -37: return "CL_INVALID_HOST_PTR";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -39: return "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
    case -40: return "CL_INVALID_IMAGE_SIZE";
    case -41: return "CL_INVALID_SAMPLER";
    case -42: return "CL_INVALID_BINARY";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -47: return "CL_INVALID_KERNEL_DEFINITION";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -56: return "CL_INVALID_GLOBAL_OFFSET";
    case -57: return "CL_INVALID_EVENT_WAIT_LIST";
    case -58: return "CL_INVALID_EVENT";
    case -59: return "CL_INVALID_OPERATION";
    case -60: return "CL_INVALID_GL_OBJECT";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -62: return "CL_INVALID_MIP_LEVEL";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -64: return "CL_INVALID_PROPERTY";
    case -65: return "CL_INVALID_IMAGE_DESCRIPTOR";
    case -66: return "CL_INVALID_COMPILER_OPTIONS";
    case -67: return "CL_INVALID_LINKER_OPTIONS";
    case -68: return "CL_INVALID_DEVICE_PARTITION_COUNT";
    case -69: return "CL_INVALID_PIPE_SIZE";
    case -70: return "CL_INVALID_DEVICE_QUEUE";
    case -71: return "CL_INVALID_SPEC_ID";
    case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "an unknown OpenCL error";
    }
}

static void fail(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fprintf(stderr, "host: error: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    exit(1);
}

/* An OpenCL call's status: on failure, report the call, what it was for, the error. */
static void check(cl_int status, const char *call, const char *what) {
    if (status == CL_SUCCESS)
        return;
    fprintf(stderr, "host: error: %s (%s) failed: %s (%d)\n", call, what, cl_error_name(status),
            (int)status);
    exit(1);
}

static void *checked_malloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p)
        fail("out of host memory");
    return p;
}

/* Shapes ---------------------------------------------------------------------------------- */

static void format_shape(char *out, size_t size, int rank, const long long *shape) {
    size_t used = (size_t)snprintf(out, size, "[");
    for (int i = 0; i < rank && used < size; ++i)
        used += (size_t)snprintf(out + used, size - used, i ? ", %lld" : "%lld", shape[i]);
    if (used < size)
        snprintf(out + used, size - used, "]");
}

static size_t shape_elements(int rank, const long long *shape) {
    size_t n = 1;
    for (int i = 0; i < rank; ++i)
        n *= (size_t)shape[i];
    return n;
}

/* .npy files ------------------------------------------------------------------------------ */

#define MAX_RANK 16

struct npy {
    char descr[16];
    int fortran_order;
    int rank;
    long long shape[MAX_RANK];
    unsigned char *data;
    size_t bytes;
};

/* The value of key `key` in a .npy header dict, or NULL. */
static const char *npy_field(const char *header, const char *key) {
    const char *p = strstr(header, key);
    if (!p)
        return NULL;
    p += strlen(key);
    while (*p == ' ' || *p == ':')
        ++p;
    return p;
}

static const char *dtype_of_descr(const char *descr) {
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; ++i)
        if (strcmp(DTYPES[i].descr, descr) == 0 || (DTYPES[i].size == 1 && strcmp(DTYPES[i].descr + 1, descr + 1) == 0))
            return DTYPES[i].name;
    return NULL;
}

/* Read `path` (for `what`, e.g. "--input x"): a .npy file of format 1.0, 2.0 or 3.0. */
static void read_npy(const char *path, const char *what, struct npy *out) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail("%s: cannot open %s: %s", what, path, strerror(errno));
    }
    unsigned char magic[10];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, "\x93NUMPY", 6) != 0) {
        fail("%s: %s is not a .npy file", what, path);
    }
    size_t header_len;
    if (magic[6] == 1) {
        if (fread(magic + 8, 1, 2, f) != 2) {
            fail("%s: %s is truncated", what, path);
        }
        header_len = (size_t)magic[8] | (size_t)magic[9] << 8;
    } else if (magic[6] == 2 || magic[6] == 3) {
        unsigned char len[4];
        if (fread(len, 1, 4, f) != 4) {
            fail("%s: %s is truncated", what, path);
        }
        header_len = (size_t)len[0] | (size_t)len[1] << 8 | (size_t)len[2] << 16 | (size_t)len[3] << 24;
    } else {
        fail("%s: %s has .npy format version %d.%d (1.0 to 3.0 are read)",
                 what, path, magic[6], magic[7]);
    }
    char *header = checked_malloc(header_len + 1);
    if (fread(header, 1, header_len, f) != header_len) {
        fail("%s: %s is truncated", what, path);
    }
    header[header_len] = '\0';
    const char *descr = npy_field(header, "'descr'");
    const char *fortran = npy_field(header, "'fortran_order'");
    const char *shape = npy_field(header, "'shape'");
    if (!descr || *descr != '\'' || !fortran || !shape || *shape != '(') {
        fail("%s: %s has a .npy header this host cannot read: %s", what,
                 path, header);
    }
    size_t n = 0;
    for (++descr; *descr && *descr != '\'' && n + 1 < sizeof out->descr; ++descr)
        out->descr[n++] = *descr;
    out->descr[n] = '\0';
    out->fortran_order = strncmp(fortran, "True", 4) == 0;
    out->rank = 0;
    for (const char *p = shape + 1; *p && *p != ')';) {
        if (isdigit((unsigned char)*p)) {
            if (out->rank == MAX_RANK) {
                fail("%s: %s has more than %d axes", what, path, MAX_RANK);
            }
            out->shape[out->rank++] = strtoll(p, (char **)&p, 10);
        } else {
            ++p;
        }
    }
    free(header);
    /* The data: whatever follows the header, read whole (its size is checked by the caller). */
    size_t capacity = 1 << 16, used = 0;
    out->data = checked_malloc(capacity);
    for (;;) {
        if (used == capacity) {
            capacity *= 2;
            out->data = realloc(out->data, capacity);
            if (!out->data)
                fail("out of host memory");
        }
        size_t got = fread(out->data + used, 1, capacity - used, f);
        used += got;
        if (got == 0)
            break;
    }
    out->bytes = used;
    fclose(f);
}

/* The data of `path` for parameter `p`, checked: dtype, C order, shape, size. */
static unsigned char *load_input(const char *path, const struct param *p, size_t *bytes) {
    char want[256], got[256];
    char what[160];
    snprintf(what, sizeof what, "--input %s", p->name);
    struct npy npy;
    read_npy(path, what, &npy);
    const char *got_name = dtype_of_descr(npy.descr);
    const char *want_descr = DTYPES[p->dtype].descr;
    int same = strcmp(npy.descr, want_descr) == 0 ||
               (DTYPES[p->dtype].size == 1 && strcmp(npy.descr + 1, want_descr + 1) == 0);
    if (!same) {
        fail("%s: %s holds %s values (descr '%s'), expected %s (descr '%s'); convert it with "
                 "numpy (a.astype(np.%s))",
                 what, path, got_name ? got_name : "unsupported", npy.descr, DTYPES[p->dtype].name,
                 want_descr, DTYPES[p->dtype].name);
    }
    if (npy.fortran_order) {
        fail("%s: %s is in Fortran order; save a C-order array (np.ascontiguousarray)", what, path);
    }
    int same_shape = npy.rank == p->rank;
    for (int i = 0; same_shape && i < p->rank; ++i)
        same_shape = npy.shape[i] == p->shape[i];
    if (!same_shape) {
        format_shape(got, sizeof got, npy.rank, npy.shape);
        format_shape(want, sizeof want, p->rank, p->shape);
        fail("%s: %s has shape %s, expected %s (%s layout)", what, path,
                 got, want, p->layout);
    }
    size_t expected = shape_elements(p->rank, p->shape) * DTYPES[p->dtype].size;
    if (npy.bytes < expected) {
        fail("%s: %s is truncated (%zu data bytes, expected %zu)", what,
                 path, npy.bytes, expected);
    }
    *bytes = expected;
    return npy.data;
}

static void write_npy(const char *path, const struct param *p, const unsigned char *data, size_t bytes) {
    char header[512], shape[256];
    size_t used = (size_t)snprintf(shape, sizeof shape, "(");
    for (int i = 0; i < p->rank; ++i)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%lld, ", p->shape[i]);
    if (p->rank > 1)
        used -= 2; /* (2, 3) but (5,) */
    else if (p->rank == 1)
        used -= 1;
    snprintf(shape + used, sizeof shape - used, ")");
    int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       DTYPES[p->dtype].descr, shape);
    size_t total = 10 + (size_t)len + 1;
    size_t padded = (total + 63) / 64 * 64;
    FILE *f = fopen(path, "wb");
    if (!f) {
        fail("--output %s: cannot write %s: %s", p->name, path, strerror(errno));
    }
    size_t header_len = padded - 10;
    unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                                (unsigned char)(header_len & 0xff), (unsigned char)(header_len >> 8)};
    int ok = fwrite(prefix, 1, 10, f) == 10 && fwrite(header, 1, (size_t)len, f) == (size_t)len;
    for (size_t i = 10 + (size_t)len; ok && i + 1 < padded; ++i)
        ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF && fwrite(data, 1, bytes, f) == bytes;
    if (fclose(f) != 0 || !ok) {
        fail("--output %s: cannot write %s", p->name, path);
    }
}

/* Scalars --------------------------------------------------------------------------------- */

static uint16_t float_to_half(float value) {
    uint32_t x;
    memcpy(&x, &value, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exponent = (x >> 23) & 0xffu, mantissa = x & 0x7fffffu;
    if (exponent == 0xff)
        return (uint16_t)(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
    int e = (int)exponent - 127 + 15;
    if (e >= 31)
        return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign;
        mantissa |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t half = mantissa >> shift, rest = mantissa & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1u)))
            ++half;
        return (uint16_t)(sign | half);
    }
    uint32_t half = (uint32_t)e << 10 | mantissa >> 13, rest = mantissa & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u)))
        ++half; /* may carry into the exponent: correct rounding to the next power or infinity */
    return (uint16_t)(sign | half);
}

struct scalar {
    int given;
    int is_float;
    long long ival;
    double fval;
};

static void parse_scalar(const char *text, const struct param *p, struct scalar *out) {
    char *end;
    errno = 0;
    out->given = 1;
    out->is_float = DTYPES[p->dtype].is_float;
    if (out->is_float) {
        out->fval = strtod(text, &end);
    } else {
        out->ival = strtoll(text, &end, 10);
    }
    if (end == text || *end != '\0' || errno == ERANGE) {
        fail("--input %s: expected %s for the %s parameter, got '%s'",
                 p->name, out->is_float ? "a number" : "an integer", DTYPES[p->dtype].name, text);
    }
}

/* Scalar parameter `p` from a .npy file holding one value of its dtype. */
static void load_scalar(const char *path, const struct param *p, struct scalar *out) {
    struct npy npy;
    char what[160];
    snprintf(what, sizeof what, "--input %s", p->name);
    read_npy(path, what, &npy);
    size_t size = DTYPES[p->dtype].size;
    int same = strcmp(npy.descr, DTYPES[p->dtype].descr) == 0 ||
               (size == 1 && strcmp(npy.descr + 1, DTYPES[p->dtype].descr + 1) == 0);
    if (!same || shape_elements(npy.rank, npy.shape) != 1 || npy.bytes < size || p->dtype == DT_F16) {
        fail("%s: %s must hold exactly one %s value (descr '%s'), got descr '%s' with %zu "
                 "element(s)%s", what, path, DTYPES[p->dtype].name, DTYPES[p->dtype].descr, npy.descr,
                 shape_elements(npy.rank, npy.shape), p->dtype == DT_F16 ? " (give f16 scalars as numbers)" : "");
    }
    unsigned char *d = npy.data;
    out->given = 1;
    out->is_float = DTYPES[p->dtype].is_float;
    switch (p->dtype) {
    case DT_F32: { float v; memcpy(&v, d, 4); out->fval = v; break; }
    case DT_F64: memcpy(&out->fval, d, 8); break;
    case DT_I8: { int8_t v; memcpy(&v, d, 1); out->ival = v; break; }
    case DT_I16: { int16_t v; memcpy(&v, d, 2); out->ival = v; break; }
    case DT_I32: { int32_t v; memcpy(&v, d, 4); out->ival = v; break; }
    case DT_U16: { uint16_t v; memcpy(&v, d, 2); out->ival = v; break; }
    case DT_U32: { uint32_t v; memcpy(&v, d, 4); out->ival = v; break; }
    case DT_U8: case DT_BOOL: out->ival = d[0]; break;
    default: memcpy(&out->ival, d, 8); break; /* int64, uint64 */
    }
    free(npy.data);
}

/* The bytes of scalar `s` as C type `dtype` into `out`; integers that do not fit are refused. */
static size_t scalar_bytes(const struct scalar *s, int dtype, const char *what, unsigned char *out) {
    double f = s->is_float ? s->fval : (double)s->ival;
    long long i = s->is_float ? (long long)s->fval : s->ival;
    if (!DTYPES[dtype].is_float) {
        int fits = 1;
        switch (dtype) {
        case DT_I8: fits = i >= -128 && i <= 127; break;
        case DT_I16: fits = i >= -32768 && i <= 32767; break;
        case DT_I32: fits = i >= INT32_MIN && i <= INT32_MAX; break;
        case DT_U8: case DT_BOOL: fits = i >= 0 && i <= 255; break;
        case DT_U16: fits = i >= 0 && i <= 65535; break;
        case DT_U32: fits = i >= 0 && i <= (long long)UINT32_MAX; break;
        case DT_U64: fits = i >= 0; break;
        default: break;
        }
        if (!fits || (s->is_float && (double)i != s->fval)) {
            fail("%s: %g does not fit the kernel argument's %s", what, f,
                     DTYPES[dtype].name);
        }
    }
    switch (dtype) {
    case DT_F32: { float v = (float)f; memcpy(out, &v, 4); return 4; }
    case DT_F64: memcpy(out, &f, 8); return 8;
    case DT_F16: { uint16_t v = float_to_half((float)f); memcpy(out, &v, 2); return 2; }
    case DT_I8: case DT_U8: case DT_BOOL: { uint8_t v = (uint8_t)i; memcpy(out, &v, 1); return 1; }
    case DT_I16: case DT_U16: { uint16_t v = (uint16_t)i; memcpy(out, &v, 2); return 2; }
    case DT_I32: case DT_U32: { uint32_t v = (uint32_t)i; memcpy(out, &v, 4); return 4; }
    default: memcpy(out, &i, 8); return 8;
    }
}

/* Devices --------------------------------------------------------------------------------- */

static void device_string(cl_device_id device, cl_device_info what, const char *name, char *out, size_t size) {
    size_t len = 0;
    check(clGetDeviceInfo(device, what, 0, NULL, &len), "clGetDeviceInfo", name);
    char *text = checked_malloc(len + 1);
    check(clGetDeviceInfo(device, what, len, text, NULL), "clGetDeviceInfo", name);
    text[len] = '\0';
    snprintf(out, size, "%s", text);
    free(text);
}

static int contains_ignoring_case(const char *haystack, const char *needle) {
    size_t n = strlen(needle);
    for (; *haystack; ++haystack) {
        size_t i = 0;
        while (i < n && haystack[i] && tolower((unsigned char)haystack[i]) == tolower((unsigned char)needle[i]))
            ++i;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* The device `spec` names: PLATFORM[:INDEX] (the INDEX-th device of the first platform whose
 * name contains PLATFORM), :INDEX (over all platforms), or NULL (first GPU, else first device). */
static cl_device_id select_device(const char *spec, cl_platform_id *platform_out) {
    cl_uint n_platforms = 0;
    cl_int status = clGetPlatformIDs(0, NULL, &n_platforms);
    if (status == -1001 || n_platforms == 0)
        fail("no OpenCL platform found (is an OpenCL driver / ICD installed?)");
    check(status, "clGetPlatformIDs", "count");
    cl_platform_id platforms[32];
    if (n_platforms > 32)
        n_platforms = 32;
    check(clGetPlatformIDs(n_platforms, platforms, NULL), "clGetPlatformIDs", "list");
    char platform_part[256] = "";
    long index = 0;
    int by_platform = 0;
    if (spec) {
        const char *colon = strchr(spec, ':');
        size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
        if (len >= sizeof platform_part)
            len = sizeof platform_part - 1;
        memcpy(platform_part, spec, len);
        platform_part[len] = '\0';
        by_platform = len > 0;
        if (colon) {
            char *end;
            index = strtol(colon + 1, &end, 10);
            if (end == colon + 1 || *end != '\0' || index < 0) {
                fail("bad device spec '%s': expected PLATFORM[:INDEX] or :INDEX", spec);
            }
        }
    }
    cl_device_id first = NULL, first_gpu = NULL;
    cl_platform_id first_platform = NULL, gpu_platform = NULL;
    long seen = 0;
    int platform_found = 0;
    for (cl_uint p = 0; p < n_platforms; ++p) {
        char name[256];
        check(clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name, name, NULL), "clGetPlatformInfo", "CL_PLATFORM_NAME");
        if (by_platform && (platform_found || !contains_ignoring_case(name, platform_part)))
            continue;
        platform_found = 1;
        cl_uint n = 0;
        status = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &n);
        if (status == CL_DEVICE_NOT_FOUND || n == 0)
            continue;
        check(status, "clGetDeviceIDs", name);
        cl_device_id devices[64];
        if (n > 64)
            n = 64;
        check(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n, devices, NULL), "clGetDeviceIDs", name);
        for (cl_uint d = 0; d < n; ++d, ++seen) {
            cl_device_type type;
            check(clGetDeviceInfo(devices[d], CL_DEVICE_TYPE, sizeof type, &type, NULL), "clGetDeviceInfo", "CL_DEVICE_TYPE");
            if (!first) {
                first = devices[d];
                first_platform = platforms[p];
            }
            if (!first_gpu && (type & CL_DEVICE_TYPE_GPU)) {
                first_gpu = devices[d];
                gpu_platform = platforms[p];
            }
            if (spec && seen == index) {
                *platform_out = platforms[p];
                return devices[d];
            }
        }
    }
    if (spec) {
        if (by_platform && !platform_found)
            fail("no OpenCL platform matches '%s'", platform_part);
        else
            fail("device index %ld is out of range: '%s' matches %ld device(s)", index, spec, seen);
    }
    if (first_gpu) {
        *platform_out = gpu_platform;
        return first_gpu;
    }
    if (!first)
        fail("no OpenCL device found");
    *platform_out = first_platform;
    return first;
}

static int has_extension(const char *extensions, const char *name) {
    size_t n = strlen(name);
    for (const char *p = extensions; (p = strstr(p, name)) != NULL; p += n)
        if ((p == extensions || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

static void check_requirements(cl_device_id device, const char *device_name) {
    if (NEEDS_IMAGES) {
        cl_bool images = CL_FALSE;
        size_t width = 0, height = 0;
        check(clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL), "clGetDeviceInfo", "CL_DEVICE_IMAGE_SUPPORT");
        if (!images) {
            fail("device %s has no image support; the plan uses images", device_name);
        }
        check(clGetDeviceInfo(device, CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof width, &width, NULL), "clGetDeviceInfo", "CL_DEVICE_IMAGE2D_MAX_WIDTH");
        check(clGetDeviceInfo(device, CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof height, &height, NULL), "clGetDeviceInfo", "CL_DEVICE_IMAGE2D_MAX_HEIGHT");
        if (width < MAX_IMAGE_WIDTH || height < MAX_IMAGE_HEIGHT) {
            fail("the plan uses images up to %d x %d texels; device %s allows %zu x %zu",
                     MAX_IMAGE_WIDTH, MAX_IMAGE_HEIGHT, device_name, width, height);
        }
    }
    size_t len = 0;
    check(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, NULL, &len), "clGetDeviceInfo", "CL_DEVICE_EXTENSIONS");
    char *extensions = checked_malloc(len + 1);
    check(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, len, extensions, NULL), "clGetDeviceInfo", "CL_DEVICE_EXTENSIONS");
    extensions[len] = '\0';
    for (int i = 0; i < N_EXTENSIONS; ++i) {
        if (!has_extension(extensions, EXTENSIONS[i])) {
            fail("device %s lacks the OpenCL extension %s, which the plan's kernels need", device_name, EXTENSIONS[i]);
        }
    }
    free(extensions);
}

/* kernels.cl ------------------------------------------------------------------------------ */

static char *read_kernels(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail("cannot open %s: %s (use --kernels PATH)", path, strerror(errno));
    }
    size_t capacity = 1 << 16, used = 0;
    char *text = checked_malloc(capacity + 1);
    for (;;) {
        if (used == capacity) {
            capacity *= 2;
            text = realloc(text, capacity + 1);
            if (!text)
                fail("out of host memory");
        }
        size_t got = fread(text + used, 1, capacity - used, f);
        used += got;
        if (got == 0)
            break;
    }
    fclose(f);
    text[used] = '\0';
    const char *line = ARTIFACT_LINE;
    if (strncmp(text, line, strlen(line)) != 0 || (text[strlen(line)] != '\n' && text[strlen(line)] != '\r')) {
        const char *prefix = "// physlayout artifact ";
        char first[160];
        size_t n = strcspn(text, "\r\n");
        snprintf(first, sizeof first, "%.*s", (int)(n < 150 ? n : 150), text);
        if (strncmp(text, prefix, strlen(prefix)) == 0)
            fail("%s belongs to another artifact ('%s'); this host was generated for '%s': "
                     "use the kernels.cl and host.c of one `physlayout compile`",
                     path, first, line);
        else
            fail("%s is not the kernels.cl of a physlayout artifact (its first line is '%s', "
                 "expected '%s')", path, first, line);
    }
    return text;
}

/* Running the plan ------------------------------------------------------------------------ */

/* Dimension 0 first, each the largest divisor of its global extent that keeps the product
 * within `limit` (runtime/opencl.py work_group_shape). */
static void work_group_shape(cl_uint dims, const size_t *global, size_t limit, size_t *local) {
    size_t budget = limit ? limit : 1;
    for (cl_uint d = 0; d < dims; ++d) {
        size_t best = 1;
        for (size_t k = 1; k <= global[d] && k <= budget; ++k)
            if (global[d] % k == 0)
                best = k;
        local[d] = best;
        budget /= best;
    }
}

static void usage(const char *program) {
    fprintf(stderr,
            "usage: %s [--input NAME=FILE.npy|NUMBER]... [--output NAME=FILE.npy]... "
            "[--kernels kernels.cl] [--device PLATFORM[:INDEX]]\n"
            "Runs @%s (physlayout artifact %s). Parameters:\n",
            program, ENTRY, ARTIFACT_ID);
    for (int i = 0; i < N_PARAMS; ++i) {
        char shape[256];
        format_shape(shape, sizeof shape, PARAMS[i].rank, PARAMS[i].shape);
        static const char *const directions[] = {"input", "output", "input and output"};
        fprintf(stderr, "  %-12s %s %s %s (%s)\n", PARAMS[i].name, DTYPES[PARAMS[i].dtype].name,
                PARAMS[i].is_scalar ? "scalar" : shape, directions[PARAMS[i].direction], PARAMS[i].layout);
    }
}

static int find_param(const char *name, size_t len) {
    for (int i = 0; i < N_PARAMS; ++i)
        if (strlen(PARAMS[i].name) == len && strncmp(PARAMS[i].name, name, len) == 0)
            return i;
    return -1;
}

int main(int argc, char **argv) {
    const char *inputs[N_PARAMS + 1] = {0};
    const char *outputs[N_PARAMS + 1] = {0};
    const char *kernels_path = "kernels.cl";
    const char *spec = getenv("PHYSLAYOUT_OPENCL_DEVICE");
    if (spec && !*spec)
        spec = NULL;
    for (int i = 1; i < argc; ++i) {
        char option[32];
        const char *a = argv[i], *value;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(argv[0]);
            return 0;
        }
        const char *eq_sign = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        if (eq_sign && (size_t)(eq_sign - a) < sizeof option) { /* --option=value */
            snprintf(option, sizeof option, "%.*s", (int)(eq_sign - a), a);
            a = option;
            value = eq_sign + 1;
        } else {
            if (i + 1 >= argc) {
                usage(argv[0]);
                fail("%s needs a value", a);
            }
            value = argv[++i];
        }
        if (strcmp(a, "--kernels") == 0) {
            kernels_path = value;
        } else if (strcmp(a, "--device") == 0) {
            spec = value;
        } else if (strcmp(a, "--input") == 0 || strcmp(a, "--output") == 0) {
            const char *eq = strchr(value, '=');
            const char *name = value[0] == '%' ? value + 1 : value;
            int p = eq ? find_param(name, (size_t)(eq - name)) : -1;
            if (!eq || !eq[1]) {
                fail("%s expects NAME=VALUE, got '%s'", a, value);
            }
            if (p < 0) {
                usage(argv[0]);
                fail("%s: no parameter '%.*s'", a, (int)(eq - name), name);
            }
            if (a[2] == 'i') {
                inputs[p] = eq + 1;
            } else if (PARAMS[p].is_scalar || PARAMS[p].direction == DIR_IN) {
                fail("--output %s: %s is an input of the plan, not an output", PARAMS[p].name, PARAMS[p].name);
            } else {
                outputs[p] = eq + 1;
            }
        } else {
            usage(argv[0]);
            fail("unknown option '%s'", a);
        }
    }

    /* The caller's data, checked before any device work. */
    unsigned char *host[N_PARAMS + 1] = {0};
    size_t host_bytes[N_PARAMS + 1] = {0};
    struct scalar scalars[N_PARAMS + 1];
    memset(scalars, 0, sizeof scalars);
    for (int i = 0; i < N_PARAMS; ++i) {
        const struct param *p = &PARAMS[i];
        if (p->direction == DIR_OUT) {
            if (inputs[i]) {
                fail("--input %s: %s is an output of the plan, not an input", p->name, p->name);
            }
            host_bytes[i] = shape_elements(p->rank, p->shape) * DTYPES[p->dtype].size;
            host[i] = checked_malloc(host_bytes[i]);
            continue;
        }
        if (!inputs[i]) {
            char shape[256];
            format_shape(shape, sizeof shape, p->rank, p->shape);
            fail("missing --input %s=FILE.npy (%s %s, %s layout)%s", p->name,
                     DTYPES[p->dtype].name, p->is_scalar ? "scalar" : shape, p->layout,
                     p->is_scalar ? " or a number" : "");
        }
        if (!p->is_scalar) {
            host[i] = load_input(inputs[i], p, &host_bytes[i]);
            continue;
        }
        size_t len = strlen(inputs[i]);
        if (len > 4 && strcmp(inputs[i] + len - 4, ".npy") == 0) {
            load_scalar(inputs[i], p, &scalars[i]);
        } else {
            parse_scalar(inputs[i], p, &scalars[i]);
        }
    }

    /* The device. */
    cl_platform_id platform;
    cl_device_id device = select_device(spec, &platform);
    char device_name[256], platform_name[256];
    device_string(device, CL_DEVICE_NAME, "CL_DEVICE_NAME", device_name, sizeof device_name);
    check(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof platform_name, platform_name, NULL), "clGetPlatformInfo", "CL_PLATFORM_NAME");
    printf("device: %s (%s)\n", device_name, platform_name);
    check_requirements(device, device_name);
    cl_int status;
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    check(status, "clCreateContext", device_name);
    cl_command_queue queue = clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &status);
    check(status, "clCreateCommandQueue", "profiling queue");

    /* The kernels. */
    char *source = read_kernels(kernels_path);
    const char *sources[1] = {source};
    cl_program program = clCreateProgramWithSource(context, 1, sources, NULL, &status);
    check(status, "clCreateProgramWithSource", kernels_path);
    status = clBuildProgram(program, 1, &device, "", NULL, NULL);
    if (status != CL_SUCCESS) {
        size_t len = 0;
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char *log = checked_malloc(len + 1);
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        log[len] = '\0';
        fprintf(stderr, "host: build log of %s:\n%s\n", kernels_path, log);
        check(status, "clBuildProgram", kernels_path);
    }
    cl_kernel kernels[N_KERNELS + 1];
    for (int k = 0; k < N_KERNELS; ++k) {
        kernels[k] = clCreateKernel(program, KERNELS[k], &status);
        if (status == CL_INVALID_KERNEL_NAME) {
            fail("%s has no kernel '%s', which the plan launches (clCreateKernel: CL_INVALID_KERNEL_NAME)", kernels_path, KERNELS[k]);
        }
        check(status, "clCreateKernel", KERNELS[k]);
    }

    /* The steps. */
    cl_mem memory[N_STORAGES + 1] = {0};
    double seconds[N_STEPS + 1];
    double total = 0;
    int launches = 0;
    for (int s = 0; s < N_STEPS; ++s) {
        const struct step *step = &STEPS[s];
        const struct storage *st = step->storage >= 0 ? &STORAGES[step->storage] : NULL;
        size_t origin[3] = {0, 0, 0};
        size_t region[3] = {st ? st->width : 0, st ? st->height : 0, 1};
        switch (step->op) {
        case OP_ALLOCATE:
            if (st->kind == KIND_IMAGE) {
                cl_image_format format = {CL_RGBA, st->dtype == DT_F16 ? CL_HALF_FLOAT : CL_FLOAT};
                cl_image_desc desc;
                memset(&desc, 0, sizeof desc);
                desc.image_type = CL_MEM_OBJECT_IMAGE2D;
                desc.image_width = st->width;
                desc.image_height = st->height;
                memory[step->storage] = clCreateImage(context, CL_MEM_READ_WRITE, &format, &desc, NULL, &status);
                check(status, "clCreateImage", st->name);
            } else {
                memory[step->storage] = clCreateBuffer(context, CL_MEM_READ_WRITE, st->bytes, NULL, &status);
                check(status, "clCreateBuffer", st->name);
            }
            break;
        case OP_FILL:
            if (st->kind == KIND_IMAGE) {
                cl_float4 color = {{step->fill_color, step->fill_color, step->fill_color, step->fill_color}};
                check(clEnqueueFillImage(queue, memory[step->storage], &color, origin, region, 0, NULL, NULL), "clEnqueueFillImage", st->name);
            } else {
                size_t size = DTYPES[st->dtype].size;
                check(clEnqueueFillBuffer(queue, memory[step->storage], step->fill, size, 0, st->bytes, 0, NULL, NULL), "clEnqueueFillBuffer", st->name);
            }
            break;
        case OP_WRITE:
            if (host_bytes[step->param] != st->elements * DTYPES[st->dtype].size) {
                fail("--input %s: %zu bytes do not fill storage %s (%zu bytes)", PARAMS[step->param].name, host_bytes[step->param], st->name, st->elements * DTYPES[st->dtype].size);
            }
            if (st->kind == KIND_IMAGE)
                check(clEnqueueWriteImage(queue, memory[step->storage], CL_TRUE, origin, region, 0, 0, host[step->param], 0, NULL, NULL), "clEnqueueWriteImage", st->name);
            else
                check(clEnqueueWriteBuffer(queue, memory[step->storage], CL_TRUE, 0, host_bytes[step->param], host[step->param], 0, NULL, NULL), "clEnqueueWriteBuffer", st->name);
            break;
        case OP_READ:
            if (st->kind == KIND_IMAGE)
                check(clEnqueueReadImage(queue, memory[step->storage], CL_TRUE, origin, region, 0, 0, host[step->param], 0, NULL, NULL), "clEnqueueReadImage", st->name);
            else
                check(clEnqueueReadBuffer(queue, memory[step->storage], CL_TRUE, 0, host_bytes[step->param], host[step->param], 0, NULL, NULL), "clEnqueueReadBuffer", st->name);
            break;
        case OP_COPY_BUFFER_TO_IMAGE: {
            size_t copy_region[3] = {STORAGES[step->dst].width, STORAGES[step->dst].height, 1};
            check(clEnqueueCopyBufferToImage(queue, memory[step->src], memory[step->dst], 0, origin, copy_region, 0, NULL, NULL), "clEnqueueCopyBufferToImage", STORAGES[step->dst].name);
            break;
        }
        case OP_COPY_IMAGE_TO_BUFFER: {
            size_t copy_region[3] = {STORAGES[step->src].width, STORAGES[step->src].height, 1};
            check(clEnqueueCopyImageToBuffer(queue, memory[step->src], memory[step->dst], origin, copy_region, 0, 0, NULL, NULL), "clEnqueueCopyImageToBuffer", STORAGES[step->src].name);
            break;
        }
        case OP_CHECK: {
            /* layout.check: every flag (an integer) non-zero, else the run fails. */
            size_t size = DTYPES[st->dtype].size, failed = 0;
            unsigned char *flags = checked_malloc(step->count * size);
            check(clEnqueueReadBuffer(queue, memory[step->storage], CL_TRUE, step->offset * size, step->count * size, flags, 0, NULL, NULL), "clEnqueueReadBuffer", st->name);
            for (size_t e = 0; e < step->count; ++e) {
                int zero = 1;
                for (size_t b = 0; b < size; ++b)
                    zero &= flags[e * size + b] == 0;
                failed += (size_t)zero;
            }
            free(flags);
            if (failed)
                fail("assertion failed: %s (%zu of %zu elements)", step->message, failed, step->count);
            break;
        }
        case OP_LAUNCH: {
            cl_kernel kernel = kernels[step->kernel];
            const char *name = KERNELS[step->kernel];
            for (int a = 0; a < step->n_args; ++a) {
                const struct arg *arg = &ARGS[step->first_arg + a];
                cl_int set;
                if (arg->kind == ARG_STORAGE) {
                    set = clSetKernelArg(kernel, (cl_uint)a, sizeof(cl_mem), &memory[arg->storage]);
                } else if (arg->kind == ARG_VALUE) {
                    set = clSetKernelArg(kernel, (cl_uint)a, DTYPES[arg->dtype].size, arg->value);
                } else {
                    unsigned char bytes[8];
                    char what[160];
                    snprintf(what, sizeof what, "@%s: argument %s", step->function, PARAMS[arg->param].name);
                    size_t size = scalar_bytes(&scalars[arg->param], arg->dtype, what, bytes);
                    set = clSetKernelArg(kernel, (cl_uint)a, size, bytes);
                }
                char what[64];
                snprintf(what, sizeof what, "argument %d of the kernel", a);
                if (set != CL_SUCCESS)
                    fprintf(stderr, "host: kernel %s:\n", name);
                check(set, "clSetKernelArg", what);
            }
            size_t limit = 0, local[3];
            check(clGetKernelWorkGroupInfo(kernel, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit, NULL), "clGetKernelWorkGroupInfo", name);
            size_t wanted = 1;
            for (cl_uint d = 0; d < step->dims; ++d)
                wanted *= step->local[d];
            if (wanted <= limit)
                memcpy(local, step->local, sizeof local);
            else
                work_group_shape(step->dims, step->global, limit, local);
            cl_event event;
            check(clEnqueueNDRangeKernel(queue, kernel, step->dims, NULL, step->global, local, 0, NULL, &event), "clEnqueueNDRangeKernel", name);
            check(clWaitForEvents(1, &event), "clWaitForEvents", name);
            cl_ulong start = 0, end = 0;
            check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL), "clGetEventProfilingInfo", name);
            check(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL), "clGetEventProfilingInfo", name);
            check(clReleaseEvent(event), "clReleaseEvent", name);
            seconds[s] = (double)(end - start) * 1e-9;
            total += seconds[s];
            ++launches;
            break;
        }
        default:
            fail("unknown plan step");
        }
    }
    check(clFinish(queue), "clFinish", "the plan");

    printf("@%s: %d launch(es), %.3f ms device time\n", ENTRY, launches, total * 1e3);
    for (int s = 0; s < N_STEPS; ++s) {
        const struct step *step = &STEPS[s];
        if (step->op != OP_LAUNCH)
            continue;
        long long global[3];
        char shape[128];
        for (cl_uint d = 0; d < step->dims; ++d)
            global[d] = (long long)step->global[d];
        format_shape(shape, sizeof shape, (int)step->dims, global);
        printf("  %-24s %9.3f ms  global size %s\n", KERNELS[step->kernel], seconds[s] * 1e3, shape);
    }
    for (int i = 0; i < N_PARAMS; ++i) {
        const struct param *p = &PARAMS[i];
        if (p->is_scalar || p->direction == DIR_IN)
            continue;
        char path[512];
        if (outputs[i])
            snprintf(path, sizeof path, "%s", outputs[i]);
        else
            snprintf(path, sizeof path, "%s.npy", p->name);
        write_npy(path, p, host[i], host_bytes[i]);
        char shape[256];
        format_shape(shape, sizeof shape, p->rank, p->shape);
        printf("wrote %s: %%%s %s %s (%s layout)\n", path, p->name, DTYPES[p->dtype].name, shape, p->layout);
    }

    for (int k = 0; k < N_KERNELS; ++k)
        check(clReleaseKernel(kernels[k]), "clReleaseKernel", KERNELS[k]);
    for (int m = 0; m < N_STORAGES; ++m)
        if (memory[m])
            check(clReleaseMemObject(memory[m]), "clReleaseMemObject", STORAGES[m].name);
    check(clReleaseProgram(program), "clReleaseProgram", kernels_path);
    check(clReleaseCommandQueue(queue), "clReleaseCommandQueue", "profiling queue");
    check(clReleaseContext(context), "clReleaseContext", device_name);
    for (int i = 0; i < N_PARAMS; ++i)
        free(host[i]);
    free(source);
    return 0;
}
