/* The fixed part of the C host that `physlayout compile` writes as OUT/host.c: a standalone
 * C99 program on the OpenCL 1.2 C API that runs one launch plan (runtime/plan.py). The plan
 * itself is generated into tables at the marker below (runtime/host_c.py); this file holds
 * no knowledge of any particular program.
 *
 * What it does, in order: reads the inputs (--input .npy files, the members of an --inputs
 * .npz archive; dtype, C order and shape checked against the plan), picks a device
 * (--device, $PHYSLAYOUT_OPENCL_DEVICE, else the first GPU, else the first device), checks
 * the plan's requirements (image support and sizes, extensions), builds kernels.cl (whose
 * first line must name this artifact), checks the plan against itself and the kernels
 * (check_plan: every storage allocated before a step uses it, the caller's data against the
 * storages, each launch's argument count and kinds against its kernel), then runs the
 * plan's prepare steps once and its steps (the body) once, and with --repeat N again N
 * times after --warmup K runs, timing each (median wall and device ms per inference). A
 * run enqueues every step without waiting (launches keep their events; their device times
 * are read after the queue finished); storages stay allocated and prepared parameters stay
 * on the device between runs. It prints each launch's device time and writes every output
 * (of the last run) as .npy. Every OpenCL call is checked; a failure is reported with the
 * call and the error's name, a plan the host cannot run with the plan step (its place in
 * plan.json), and the program exits 1.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
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
#include <time.h>

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
    const char *where;         /* its place in plan.json: "prepare[3]", "steps[0]" */
    const char *phase;         /* its phase: input, prepare, body, output */
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

/* Files ----------------------------------------------------------------------------------- */

/* The whole of file `path` (for `what`, e.g. "--input x"), malloc'ed; its size in *size. */
static unsigned char *read_file(const char *path, const char *what, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f)
        fail("%s: cannot open %s: %s", what, path, strerror(errno));
    size_t capacity = 1 << 16, used = 0;
    unsigned char *data = checked_malloc(capacity);
    for (;;) {
        if (used == capacity) {
            capacity *= 2;
            data = realloc(data, capacity);
            if (!data)
                fail("out of host memory");
        }
        size_t got = fread(data + used, 1, capacity - used, f);
        used += got;
        if (got == 0)
            break;
    }
    int failed = ferror(f);
    fclose(f);
    if (failed)
        fail("%s: cannot read %s", what, path);
    *size = used;
    return data;
}

/* .npy files ------------------------------------------------------------------------------ */

#define MAX_RANK 16

/* The bytes of one .npy array: a file, or a member of a .npz archive. */
struct source {
    const char *what;            /* the option it came from, e.g. "--input x" */
    char name[600];              /* "x.npy" or "in.npz member x.npy", for messages */
    const unsigned char *bytes;
    size_t size;
};

struct npy {
    char descr[16];
    int fortran_order;
    int rank;
    long long shape[MAX_RANK];
    const unsigned char *data; /* into the source's bytes */
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

/* `src` as a .npy array of format 1.0, 2.0 or 3.0. */
static void parse_npy(const struct source *src, struct npy *out) {
    const unsigned char *b = src->bytes;
    if (src->size < 10 || memcmp(b, "\x93NUMPY", 6) != 0)
        fail("%s: %s is not a .npy file", src->what, src->name);
    size_t header_len, start;
    if (b[6] == 1) {
        header_len = (size_t)b[8] | (size_t)b[9] << 8;
        start = 10;
    } else if (b[6] == 2 || b[6] == 3) {
        if (src->size < 12)
            fail("%s: %s is truncated", src->what, src->name);
        header_len = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        start = 12;
    } else {
        fail("%s: %s has .npy format version %d.%d (1.0 to 3.0 are read)", src->what, src->name, b[6], b[7]);
    }
    if (header_len > src->size - start)
        fail("%s: %s is truncated", src->what, src->name);
    char *header = checked_malloc(header_len + 1);
    memcpy(header, b + start, header_len);
    header[header_len] = '\0';
    const char *descr = npy_field(header, "'descr'");
    const char *fortran = npy_field(header, "'fortran_order'");
    const char *shape = npy_field(header, "'shape'");
    if (!descr || *descr != '\'' || !fortran || !shape || *shape != '(')
        fail("%s: %s has a .npy header this host cannot read: %s", src->what, src->name, header);
    size_t n = 0;
    for (++descr; *descr && *descr != '\'' && n + 1 < sizeof out->descr; ++descr)
        out->descr[n++] = *descr;
    out->descr[n] = '\0';
    out->fortran_order = strncmp(fortran, "True", 4) == 0;
    out->rank = 0;
    for (const char *p = shape + 1; *p && *p != ')';) {
        if (isdigit((unsigned char)*p)) {
            if (out->rank == MAX_RANK)
                fail("%s: %s has more than %d axes", src->what, src->name, MAX_RANK);
            out->shape[out->rank++] = strtoll(p, (char **)&p, 10);
        } else {
            ++p;
        }
    }
    free(header);
    out->data = b + start + header_len; /* its size is checked by the caller */
    out->bytes = src->size - start - header_len;
}

/* The data of `src` for parameter `p`, checked (dtype, C order, shape, size), copied. */
static unsigned char *load_input(const struct source *src, const struct param *p, size_t *bytes) {
    char want[256], got[256];
    struct npy npy;
    parse_npy(src, &npy);
    const char *got_name = dtype_of_descr(npy.descr);
    const char *want_descr = DTYPES[p->dtype].descr;
    int same = strcmp(npy.descr, want_descr) == 0 ||
               (DTYPES[p->dtype].size == 1 && strcmp(npy.descr + 1, want_descr + 1) == 0);
    if (!same) {
        fail("%s: %s holds %s values (descr '%s'), expected %s (descr '%s'); convert it with "
             "numpy (a.astype(np.%s))",
             src->what, src->name, got_name ? got_name : "unsupported", npy.descr, DTYPES[p->dtype].name,
             want_descr, DTYPES[p->dtype].name);
    }
    if (npy.fortran_order)
        fail("%s: %s is in Fortran order; save a C-order array (np.ascontiguousarray)", src->what, src->name);
    int same_shape = npy.rank == p->rank;
    for (int i = 0; same_shape && i < p->rank; ++i)
        same_shape = npy.shape[i] == p->shape[i];
    if (!same_shape) {
        format_shape(got, sizeof got, npy.rank, npy.shape);
        format_shape(want, sizeof want, p->rank, p->shape);
        fail("%s: %s has shape %s, expected %s (%s layout)", src->what, src->name, got, want, p->layout);
    }
    size_t expected = shape_elements(p->rank, p->shape) * DTYPES[p->dtype].size;
    if (npy.bytes < expected)
        fail("%s: %s is truncated (%zu data bytes, expected %zu)", src->what, src->name, npy.bytes, expected);
    unsigned char *data = checked_malloc(expected);
    memcpy(data, npy.data, expected);
    *bytes = expected;
    return data;
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

/* .npz archives ---------------------------------------------------------------------------- */

/* A .npz is a zip archive of NAME.npy members. np.savez stores them (method 0) and always
 * writes zip64 extra fields; np.savez_compressed deflates them (method 8), which this host
 * refuses (it has no inflate). Members are found through the central directory. */
struct member {
    char key[256];  /* the member's name without ".npy" */
    char name[256]; /* as stored */
    int method;
    int encrypted;
    const unsigned char *data;
    size_t size;
};

struct npz {
    const char *path;
    unsigned char *bytes;
    size_t size;
    int n;
    struct member *members;
};

static uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

static uint32_t crc32_of(const unsigned char *data, size_t size) {
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < size; ++i)
        crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
    return crc ^ 0xffffffffu;
}

static void read_npz(const char *path, struct npz *out) {
    const char *what = "--inputs";
    size_t size;
    unsigned char *b = read_file(path, what, &size);
    out->path = path;
    out->bytes = b;
    out->size = size;
    /* The end of central directory record: the last "PK\5\6" within 64 KiB + 22 of the end. */
    size_t eocd = (size_t)-1;
    for (size_t i = size >= 22 ? size - 22 + 1 : 0; i-- > 0 && size - i <= 22 + 65535;)
        if (memcmp(b + i, "PK\5\6", 4) == 0) {
            eocd = i;
            break;
        }
    if (eocd == (size_t)-1)
        fail("%s: %s is not a .npz (zip) archive", what, path);
    uint64_t entries = le(b + eocd + 10, 2), cd_size = le(b + eocd + 12, 4), cd_offset = le(b + eocd + 16, 4);
    if (entries == 0xffff || cd_size == 0xffffffffu || cd_offset == 0xffffffffu) {
        /* zip64: the locator just before the record points at the zip64 record. */
        if (eocd < 20 || memcmp(b + eocd - 20, "PK\6\7", 4) != 0)
            fail("%s: %s is a zip64 archive without its zip64 locator", what, path);
        uint64_t record = le(b + eocd - 20 + 8, 8);
        if (size < 56 || record > size - 56 || memcmp(b + record, "PK\6\6", 4) != 0)
            fail("%s: %s has a broken zip64 end of central directory record", what, path);
        entries = le(b + record + 32, 8);
        cd_size = le(b + record + 40, 8);
        cd_offset = le(b + record + 48, 8);
    }
    if (cd_offset > size || cd_size > size - cd_offset || entries > cd_size / 46)
        fail("%s: %s has a broken central directory", what, path);
    out->n = (int)entries;
    out->members = checked_malloc((size_t)entries * sizeof *out->members);
    const unsigned char *p = b + cd_offset, *end = b + cd_offset + cd_size;
    for (int i = 0; i < out->n; ++i) {
        struct member *m = &out->members[i];
        if (end - p < 46 || memcmp(p, "PK\1\2", 4) != 0)
            fail("%s: %s has a broken central directory (entry %d)", what, path, i);
        size_t name_len = (size_t)le(p + 28, 2), extra_len = (size_t)le(p + 30, 2), comment_len = (size_t)le(p + 32, 2);
        if ((size_t)(end - p) < 46 + name_len + extra_len + comment_len)
            fail("%s: %s has a broken central directory (entry %d)", what, path, i);
        m->method = (int)le(p + 10, 2);
        m->encrypted = (int)(le(p + 8, 2) & 1);
        uint32_t crc = (uint32_t)le(p + 16, 4);
        uint64_t stored = le(p + 20, 4), length = le(p + 24, 4), local = le(p + 42, 4);
        snprintf(m->name, sizeof m->name, "%.*s", (int)name_len, (const char *)p + 46);
        const unsigned char *x = p + 46 + name_len, *x_end = x + extra_len;
        while (x_end - x >= 4) { /* the zip64 extra field holds the sizes that do not fit */
            size_t id = (size_t)le(x, 2), len = (size_t)le(x + 2, 2);
            const unsigned char *v = x + 4, *v_end = x + 4 + len;
            if (v_end > x_end)
                break;
            if (id == 1) {
                if (length == 0xffffffffu && v_end - v >= 8) { length = le(v, 8); v += 8; }
                if (stored == 0xffffffffu && v_end - v >= 8) { stored = le(v, 8); v += 8; }
                if (local == 0xffffffffu && v_end - v >= 8) { local = le(v, 8); v += 8; }
            }
            x = v_end;
        }
        p += 46 + name_len + extra_len + comment_len;
        if (local > size - 30 || memcmp(b + local, "PK\3\4", 4) != 0)
            fail("%s: %s: member '%s' has no local header at offset %llu", what, path, m->name, (unsigned long long)local);
        uint64_t data = local + 30 + le(b + local + 26, 2) + le(b + local + 28, 2);
        if (data > size || stored > size - data)
            fail("%s: %s: member '%s' is truncated", what, path, m->name);
        m->data = b + data;
        m->size = (size_t)stored;
        size_t key_len = strlen(m->name);
        if (key_len > 4 && strcmp(m->name + key_len - 4, ".npy") == 0)
            key_len -= 4;
        snprintf(m->key, sizeof m->key, "%.*s", (int)key_len, m->name);
        if (m->method == 0 && !m->encrypted && (length != stored || crc32_of(m->data, m->size) != crc))
            fail("%s: %s: member '%s' is corrupt (its CRC-32 or size does not match)", what, path, m->name);
    }
}

/* Member `m` of `npz` as the source of `what`; a compressed or encrypted member is refused. */
static void member_source(const struct npz *npz, const struct member *m, struct source *src) {
    src->what = "--inputs";
    snprintf(src->name, sizeof src->name, "%s member '%s'", npz->path, m->name);
    if (m->encrypted)
        fail("--inputs: %s: member '%s' is encrypted", npz->path, m->name);
    if (m->method != 0)
        fail("--inputs: %s: member '%s' is compressed (zip method %d%s); this host reads only "
             "stored members, as np.savez writes them: save the arrays with np.savez (not "
             "np.savez_compressed) or give this one as --input %s=FILE.npy",
             npz->path, m->name, m->method, m->method == 8 ? ", deflate: np.savez_compressed" : "", m->key);
    src->bytes = m->data;
    src->size = m->size;
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

/* Scalar parameter `p` from a .npy array holding one value of its dtype. */
static void load_scalar(const struct source *src, const struct param *p, struct scalar *out) {
    struct npy npy;
    parse_npy(src, &npy);
    size_t size = DTYPES[p->dtype].size;
    int same = strcmp(npy.descr, DTYPES[p->dtype].descr) == 0 ||
               (size == 1 && strcmp(npy.descr + 1, DTYPES[p->dtype].descr + 1) == 0);
    if (!same || shape_elements(npy.rank, npy.shape) != 1 || npy.bytes < size || p->dtype == DT_F16) {
        fail("%s: %s must hold exactly one %s value (descr '%s'), got descr '%s' with %zu "
                 "element(s)%s", src->what, src->name, DTYPES[p->dtype].name, DTYPES[p->dtype].descr, npy.descr,
                 shape_elements(npy.rank, npy.shape), p->dtype == DT_F16 ? " (give f16 scalars as numbers)" : "");
    }
    const unsigned char *d = npy.data;
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

static const char *const OP_NAMES[] = {"allocate", "fill", "write", "read", "launch",
                                       "copy_buffer_to_image", "copy_image_to_buffer", "check"};

static const char *storage_name(int index) {
    return index >= 0 && index < N_STORAGES ? STORAGES[index].name : "not in the plan";
}

/* Stop with a message that names plan step `s`: its place in plan.json, what it does, its
 * phase. */
static void fail_step(int s, const char *format, ...) {
    const struct step *step = &STEPS[s];
    char what[320];
    int op = step->op;
    if (op == OP_LAUNCH)
        snprintf(what, sizeof what, "launch of kernel %s", step->kernel >= 0 && step->kernel < N_KERNELS ? KERNELS[step->kernel] : "not in the plan");
    else if (op == OP_COPY_BUFFER_TO_IMAGE || op == OP_COPY_IMAGE_TO_BUFFER)
        snprintf(what, sizeof what, "%s from storage %d (%s) to storage %d (%s)", OP_NAMES[op], step->src,
                 storage_name(step->src), step->dst, storage_name(step->dst));
    else if (op >= 0 && op <= OP_CHECK)
        snprintf(what, sizeof what, "%s of storage %d (%s)", OP_NAMES[op], step->storage, storage_name(step->storage));
    else
        snprintf(what, sizeof what, "operation %d", op);
    va_list args;
    va_start(args, format);
    fprintf(stderr, "host: error: plan step %s (%s, phase %s): ", step->where, what, step->phase);
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    va_end(args);
    exit(1);
}

/* The device state of one process: built once, the plan's storages allocated once. */
struct runner {
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
    cl_kernel kernels[N_KERNELS + 1];    /* one per kernel name (the checks) */
    cl_kernel launch[N_STEPS + 1];       /* one per launch step, its arguments set once */
    size_t local[N_STEPS + 1][3];
    cl_event events[N_STEPS + 1];
    cl_mem memory[N_STORAGES + 1];
    unsigned char *host_in[N_PARAMS + 1];  /* the caller's data of each input */
    unsigned char *host_out[N_PARAMS + 1]; /* what the read steps read */
    size_t host_bytes[N_PARAMS + 1];
    struct scalar scalars[N_PARAMS + 1];
};

/* The bytes of the C type `name` (a kernel argument's type name), 0 where unknown. */
static size_t c_type_size(const char *name) {
    static const struct { const char *name; size_t size; } types[] = {
        {"char", 1}, {"uchar", 1}, {"unsigned char", 1}, {"bool", 1}, {"short", 2}, {"ushort", 2},
        {"unsigned short", 2}, {"half", 2}, {"int", 4}, {"uint", 4}, {"unsigned int", 4}, {"float", 4},
        {"long", 8}, {"ulong", 8}, {"unsigned long", 8}, {"double", 8},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strcmp(types[i].name, name) == 0)
            return types[i].size;
    return 0;
}

static int storage_ok(int index) { return index >= 0 && index < N_STORAGES; }

/* Launch step `s` against its kernel: the argument count, and where the build kept argument
 * info (-cl-kernel-arg-info), each argument's kind (image, __global pointer of elements of
 * the storage's size, scalar of the right size). */
static void check_launch(struct runner *r, int s, const int *allocated) {
    const struct step *step = &STEPS[s];
    if (step->kernel < 0 || step->kernel >= N_KERNELS)
        fail_step(s, "names kernel %d; the plan has %d", step->kernel, N_KERNELS);
    if (step->dims < 1 || step->dims > 3)
        fail_step(s, "has %u NDRange dimensions (1 to 3)", (unsigned)step->dims);
    if (step->first_arg < 0 || step->n_args < 0 || step->first_arg + step->n_args > N_ARGS)
        fail_step(s, "names arguments %d to %d; the plan has %d", step->first_arg, step->first_arg + step->n_args - 1, N_ARGS);
    const char *name = KERNELS[step->kernel];
    cl_kernel kernel = r->kernels[step->kernel];
    cl_uint n = 0;
    check(clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL), "clGetKernelInfo", name);
    if (n != (cl_uint)step->n_args)
        fail_step(s, "kernel %s takes %u argument(s), the plan binds %d", name, (unsigned)n, step->n_args);
    int info = 1;
    for (int a = 0; a < step->n_args; ++a) {
        const struct arg *arg = &ARGS[step->first_arg + a];
        if (arg->kind == ARG_STORAGE) {
            if (!storage_ok(arg->storage))
                fail_step(s, "argument %d names storage %d; the plan has %d", a, arg->storage, N_STORAGES);
            if (!allocated[arg->storage])
                fail_step(s, "argument %d is storage %d (%s), which is used before its allocate step", a, arg->storage, STORAGES[arg->storage].name);
        } else if (arg->kind == ARG_INPUT && (arg->param < 0 || arg->param >= N_PARAMS || !PARAMS[arg->param].is_scalar)) {
            fail_step(s, "argument %d names parameter %d, which is not a scalar parameter of the plan", a, arg->param);
        }
        if (!info)
            continue;
        char type[128] = "";
        cl_int status = clGetKernelArgInfo(kernel, (cl_uint)a, CL_KERNEL_ARG_TYPE_NAME, sizeof type, type, NULL);
        if (status == CL_KERNEL_ARG_INFO_NOT_AVAILABLE) {
            info = 0; /* the driver keeps no argument info: the count was checked */
            continue;
        }
        check(status, "clGetKernelArgInfo", name);
        cl_kernel_arg_address_qualifier address = 0;
        check(clGetKernelArgInfo(kernel, (cl_uint)a, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address, NULL), "clGetKernelArgInfo", name);
        int is_image = strstr(type, "image") != NULL; /* "image2d_t" (some drivers keep the access qualifier) */
        char *star = strchr(type, '*');
        int is_global = star && (address == CL_KERNEL_ARG_ADDRESS_GLOBAL || address == CL_KERNEL_ARG_ADDRESS_CONSTANT);
        if (arg->kind != ARG_STORAGE) {
            size_t want = c_type_size(type);
            if (is_image || star)
                fail_step(s, "argument %d of the kernel has type '%s', but the plan binds a %s value to it", a, type, DTYPES[arg->dtype].name);
            if (want && want != DTYPES[arg->dtype].size)
                fail_step(s, "argument %d of the kernel has type '%s' (%zu bytes), but the plan binds a %s value (%zu bytes) to it", a, type, want, DTYPES[arg->dtype].name, DTYPES[arg->dtype].size);
            continue;
        }
        const struct storage *st = &STORAGES[arg->storage];
        if (st->kind == KIND_IMAGE && !is_image)
            fail_step(s, "argument %d of the kernel has type '%s', but the plan binds storage %d (%s), an image, to it", a, type, arg->storage, st->name);
        if (st->kind == KIND_BUFFER && !is_global)
            fail_step(s, "argument %d of the kernel has type '%s'%s, but the plan binds storage %d (%s), a buffer, to it", a, type, star ? " (not __global)" : "", arg->storage, st->name);
        if (st->kind == KIND_BUFFER) {
            while (star > type && star[-1] == ' ') /* "float*", or "float *" */
                --star;
            *star = '\0';
            size_t element = c_type_size(type);
            if (element && element != DTYPES[st->dtype].size)
                fail_step(s, "argument %d of the kernel points to '%s' (%zu bytes), but the plan binds storage %d (%s) of %s elements to it", a, type, element, arg->storage, st->name, DTYPES[st->dtype].name);
        }
    }
}

/* A storage step's storage: in the plan and allocated by an earlier step. */
static const struct storage *need(int s, int index, const int *allocated, const char *role) {
    if (!storage_ok(index))
        fail_step(s, "its %s names storage %d; the plan has %d", role, index, N_STORAGES);
    if (!allocated[index])
        fail_step(s, "its %s, storage %d (%s), is used before its allocate step", role, index, STORAGES[index].name);
    return &STORAGES[index];
}

static size_t image_bytes(const struct storage *st) {
    return st->width * st->height * 4 * DTYPES[st->dtype].size;
}

/* The caller's data of step `s` (a write or read) against its storage: same dtype, same
 * bytes; the parameter's direction allows the step. */
static void check_transfer(int s, const struct storage *st, int writes) {
    const struct step *step = &STEPS[s];
    if (step->param < 0 || step->param >= N_PARAMS || PARAMS[step->param].is_scalar)
        fail_step(s, "names parameter %d, which is not an array parameter of the plan", step->param);
    const struct param *p = &PARAMS[step->param];
    if (writes ? p->direction == DIR_OUT : p->direction == DIR_IN)
        fail_step(s, "%%%s is an %s of the plan; it is not %s", p->name, writes ? "output" : "input", writes ? "written" : "read");
    size_t bytes = shape_elements(p->rank, p->shape) * DTYPES[p->dtype].size;
    size_t holds = st->elements * DTYPES[st->dtype].size;
    if (p->dtype != st->dtype || bytes != holds)
        fail_step(s, "%%%s is %s data of %zu bytes, but its storage holds %zu bytes of %s", p->name, DTYPES[p->dtype].name, bytes, holds, DTYPES[st->dtype].name);
}

/* Everything the steps rely on, checked in step order before any of them runs: every
 * storage allocated before it is used, the caller's data against the storages, launches
 * against their kernels, copies and checks within their storages. */
static void check_plan(struct runner *r) {
    int allocated[N_STORAGES + 1] = {0};
    for (int s = 0; s < N_STEPS; ++s) {
        const struct step *step = &STEPS[s];
        const struct storage *st, *src, *dst;
        switch (step->op) {
        case OP_ALLOCATE:
            if (!storage_ok(step->storage))
                fail_step(s, "names storage %d; the plan has %d", step->storage, N_STORAGES);
            st = &STORAGES[step->storage];
            if (st->kind == KIND_IMAGE && (image_bytes(st) != st->bytes || (st->dtype != DT_F32 && st->dtype != DT_F16)))
                fail_step(s, "image %s of %zu x %zu texels of %s does not hold its %zu bytes", st->name, st->width, st->height, DTYPES[st->dtype].name, st->bytes);
            if (st->kind == KIND_BUFFER && st->bytes < st->elements * DTYPES[st->dtype].size)
                fail_step(s, "buffer %s of %zu bytes does not hold its %zu %s elements", st->name, st->bytes, st->elements, DTYPES[st->dtype].name);
            allocated[step->storage] = 1;
            break;
        case OP_FILL:
            need(s, step->storage, allocated, "storage");
            break;
        case OP_WRITE:
        case OP_READ:
            check_transfer(s, need(s, step->storage, allocated, "storage"), step->op == OP_WRITE);
            break;
        case OP_COPY_BUFFER_TO_IMAGE:
        case OP_COPY_IMAGE_TO_BUFFER: {
            int to_image = step->op == OP_COPY_BUFFER_TO_IMAGE;
            src = need(s, step->src, allocated, "source");
            dst = need(s, step->dst, allocated, "destination");
            const struct storage *buffer = to_image ? src : dst, *image = to_image ? dst : src;
            if (buffer->kind != KIND_BUFFER || image->kind != KIND_IMAGE)
                fail_step(s, "copies between a %s and a %s", src->kind == KIND_IMAGE ? "image" : "buffer", dst->kind == KIND_IMAGE ? "image" : "buffer");
            if (buffer->bytes < image_bytes(image))
                fail_step(s, "buffer %s holds %zu bytes, the image %s %zu", buffer->name, buffer->bytes, image->name, image_bytes(image));
            break;
        }
        case OP_CHECK:
            st = need(s, step->storage, allocated, "storage");
            if (st->kind != KIND_BUFFER || step->offset + step->count > st->elements)
                fail_step(s, "its flags (elements %zu to %zu) are not within buffer %s of %zu elements", step->offset, step->offset + step->count, st->name, st->elements);
            break;
        case OP_LAUNCH:
            check_launch(r, s, allocated);
            break;
        default:
            fail_step(s, "unknown operation");
        }
    }
}

/* Plan storage `index` for step `s` (allocated: check_plan saw to it). */
static cl_mem memory_of(struct runner *r, int s, int index) {
    if (!storage_ok(index) || !r->memory[index])
        fail_step(s, "storage %d (%s) is used before its allocate step", index, storage_name(index));
    return r->memory[index];
}

/* Launch step `s` made ready once: a kernel object of its own with every argument set, its
 * work-group shape (the plan's, smaller where the kernel allows fewer work-items). */
static void ready_launch(struct runner *r, int s) {
    const struct step *step = &STEPS[s];
    const char *name = KERNELS[step->kernel];
    cl_int status;
    cl_kernel kernel = clCreateKernel(r->program, name, &status);
    check(status, "clCreateKernel", name);
    for (int a = 0; a < step->n_args; ++a) {
        const struct arg *arg = &ARGS[step->first_arg + a];
        cl_int set;
        if (arg->kind == ARG_STORAGE) {
            cl_mem memory = memory_of(r, s, arg->storage);
            set = clSetKernelArg(kernel, (cl_uint)a, sizeof(cl_mem), &memory);
        } else if (arg->kind == ARG_VALUE) {
            set = clSetKernelArg(kernel, (cl_uint)a, DTYPES[arg->dtype].size, arg->value);
        } else {
            unsigned char bytes[8];
            char what[160];
            snprintf(what, sizeof what, "@%s: argument %s", step->function, PARAMS[arg->param].name);
            size_t size = scalar_bytes(&r->scalars[arg->param], arg->dtype, what, bytes);
            set = clSetKernelArg(kernel, (cl_uint)a, size, bytes);
        }
        if (set != CL_SUCCESS)
            fail_step(s, "clSetKernelArg (argument %d of the kernel) failed: %s (%d)", a, cl_error_name(set), (int)set);
    }
    size_t limit = 0, wanted = 1;
    check(clGetKernelWorkGroupInfo(kernel, r->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof limit, &limit, NULL), "clGetKernelWorkGroupInfo", name);
    for (cl_uint d = 0; d < step->dims; ++d)
        wanted *= step->local[d];
    if (wanted <= limit)
        memcpy(r->local[s], step->local, sizeof r->local[s]);
    else
        work_group_shape(step->dims, step->global, limit, r->local[s]);
    r->launch[s] = kernel;
}

/* Enqueue steps [first, last) without waiting (only a check step reads back, blocking): the
 * storages an earlier run allocated are kept, each launch's event in r->events. */
static void run_steps(struct runner *r, int first, int last) {
    for (int s = first; s < last; ++s) {
        const struct step *step = &STEPS[s];
        const struct storage *st = storage_ok(step->storage) ? &STORAGES[step->storage] : NULL;
        size_t origin[3] = {0, 0, 0};
        size_t region[3] = {st ? st->width : 0, st ? st->height : 0, 1};
        cl_int status;
        switch (step->op) {
        case OP_ALLOCATE:
            if (r->memory[step->storage])
                break;
            if (st->kind == KIND_IMAGE) {
                cl_image_format format = {CL_RGBA, st->dtype == DT_F16 ? CL_HALF_FLOAT : CL_FLOAT};
                cl_image_desc desc;
                memset(&desc, 0, sizeof desc);
                desc.image_type = CL_MEM_OBJECT_IMAGE2D;
                desc.image_width = st->width;
                desc.image_height = st->height;
                r->memory[step->storage] = clCreateImage(r->context, CL_MEM_READ_WRITE, &format, &desc, NULL, &status);
                check(status, "clCreateImage", st->name);
            } else {
                r->memory[step->storage] = clCreateBuffer(r->context, CL_MEM_READ_WRITE, st->bytes, NULL, &status);
                check(status, "clCreateBuffer", st->name);
            }
            break;
        case OP_FILL:
            if (st->kind == KIND_IMAGE) {
                cl_float4 color = {{step->fill_color, step->fill_color, step->fill_color, step->fill_color}};
                check(clEnqueueFillImage(r->queue, memory_of(r, s, step->storage), &color, origin, region, 0, NULL, NULL), "clEnqueueFillImage", st->name);
            } else {
                size_t size = DTYPES[st->dtype].size;
                check(clEnqueueFillBuffer(r->queue, memory_of(r, s, step->storage), step->fill, size, 0, st->bytes, 0, NULL, NULL), "clEnqueueFillBuffer", st->name);
            }
            break;
        case OP_WRITE:
            if (st->kind == KIND_IMAGE)
                check(clEnqueueWriteImage(r->queue, memory_of(r, s, step->storage), CL_FALSE, origin, region, 0, 0, r->host_in[step->param], 0, NULL, NULL), "clEnqueueWriteImage", st->name);
            else
                check(clEnqueueWriteBuffer(r->queue, memory_of(r, s, step->storage), CL_FALSE, 0, r->host_bytes[step->param], r->host_in[step->param], 0, NULL, NULL), "clEnqueueWriteBuffer", st->name);
            break;
        case OP_READ:
            if (st->kind == KIND_IMAGE)
                check(clEnqueueReadImage(r->queue, memory_of(r, s, step->storage), CL_FALSE, origin, region, 0, 0, r->host_out[step->param], 0, NULL, NULL), "clEnqueueReadImage", st->name);
            else
                check(clEnqueueReadBuffer(r->queue, memory_of(r, s, step->storage), CL_FALSE, 0, r->host_bytes[step->param], r->host_out[step->param], 0, NULL, NULL), "clEnqueueReadBuffer", st->name);
            break;
        case OP_COPY_BUFFER_TO_IMAGE: {
            size_t copy_region[3] = {STORAGES[step->dst].width, STORAGES[step->dst].height, 1};
            check(clEnqueueCopyBufferToImage(r->queue, memory_of(r, s, step->src), memory_of(r, s, step->dst), 0, origin, copy_region, 0, NULL, NULL), "clEnqueueCopyBufferToImage", STORAGES[step->dst].name);
            break;
        }
        case OP_COPY_IMAGE_TO_BUFFER: {
            size_t copy_region[3] = {STORAGES[step->src].width, STORAGES[step->src].height, 1};
            check(clEnqueueCopyImageToBuffer(r->queue, memory_of(r, s, step->src), memory_of(r, s, step->dst), origin, copy_region, 0, 0, NULL, NULL), "clEnqueueCopyImageToBuffer", STORAGES[step->src].name);
            break;
        }
        case OP_CHECK: {
            /* layout.check: every flag (an integer) non-zero, else the run fails. */
            size_t size = DTYPES[st->dtype].size, failed = 0;
            unsigned char *flags = checked_malloc(step->count * size);
            check(clEnqueueReadBuffer(r->queue, memory_of(r, s, step->storage), CL_TRUE, step->offset * size, step->count * size, flags, 0, NULL, NULL), "clEnqueueReadBuffer", st->name);
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
        case OP_LAUNCH:
            if (!r->launch[s])
                ready_launch(r, s);
            check(clEnqueueNDRangeKernel(r->queue, r->launch[s], step->dims, NULL, step->global, r->local[s], 0, NULL, &r->events[s]), "clEnqueueNDRangeKernel", KERNELS[step->kernel]);
            break;
        default:
            fail_step(s, "unknown operation");
        }
    }
}

/* After the queue finished: each launch's device seconds of steps [first, last) into
 * `seconds` (profiling events, then released); their sum. */
static double launch_seconds(struct runner *r, int first, int last, double *seconds) {
    double total = 0;
    for (int s = first; s < last; ++s) {
        if (STEPS[s].op != OP_LAUNCH)
            continue;
        const char *name = KERNELS[STEPS[s].kernel];
        cl_ulong start = 0, end = 0;
        check(clGetEventProfilingInfo(r->events[s], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL), "clGetEventProfilingInfo", name);
        check(clGetEventProfilingInfo(r->events[s], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL), "clGetEventProfilingInfo", name);
        check(clReleaseEvent(r->events[s]), "clReleaseEvent", name);
        r->events[s] = NULL;
        seconds[s] = (double)(end - start) * 1e-9;
        total += seconds[s];
    }
    return total;
}

static int count_launches(int first, int last) {
    int n = 0;
    for (int s = first; s < last; ++s)
        n += STEPS[s].op == OP_LAUNCH;
    return n;
}

static void print_launches(const char *function, int first, int last, const double *seconds, double total) {
    printf("@%s: %d launch(es), %.3f ms device time\n", function, count_launches(first, last), total * 1e3);
    for (int s = first; s < last; ++s) {
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
}

static double monotonic_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n) {
    qsort(values, (size_t)n, sizeof *values, compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}


static void usage(const char *program) {
    fprintf(stderr,
            "usage: %s [--input NAME=FILE.npy|NUMBER]... [--inputs FILE.npz] [--output NAME=FILE.npy]... "
            "[--repeat N] [--warmup K] [--kernels kernels.cl] [--device PLATFORM[:INDEX]]\n"
            "Runs @%s (physlayout artifact %s): the plan's prepare steps once, then its steps;\n"
            "--repeat N runs the steps N more times after K warm-up runs (default 2) and prints\n"
            "the median wall and device ms per inference. Parameters:\n",
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

/* The parameter an .npz member's key names: the key itself, else with '.' read as '_'
 * (PyTorch's state_dict names `layer1.0.weight` are torch-mlir's `layer1_0_weight`). */
static int find_member_param(const char *key) {
    int p = find_param(key, strlen(key));
    if (p >= 0)
        return p;
    char underscored[256];
    snprintf(underscored, sizeof underscored, "%s", key);
    for (char *c = underscored; *c; ++c)
        if (*c == '.')
            *c = '_';
    return find_param(underscored, strlen(underscored));
}

static long count_option(const char *option, const char *value) {
    char *end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (end == value || *end != '\0' || errno == ERANGE || n < 0 || n > 1000000)
        fail("%s expects a count from 0 to 1000000, got '%s'", option, value);
    return n;
}

int main(int argc, char **argv) {
    const char *inputs[N_PARAMS + 1] = {0};
    const char *outputs[N_PARAMS + 1] = {0};
    const char *kernels_path = "kernels.cl", *archive = NULL;
    long repeat = 0, warmup = 2;
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
        } else if (strcmp(a, "--repeat") == 0) {
            repeat = count_option(a, value);
        } else if (strcmp(a, "--warmup") == 0) {
            warmup = count_option(a, value);
        } else if (strcmp(a, "--inputs") == 0) {
            if (archive)
                fail("--inputs given twice ('%s' and '%s'); give one .npz and --input NAME=FILE.npy for the rest", archive, value);
            archive = value;
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

    /* The caller's data, checked before any device work: --input files, else the members
     * of the --inputs archive (each must name an input). */
    struct runner *r = calloc(1, sizeof *r);
    if (!r)
        fail("out of host memory");
    struct npz npz;
    memset(&npz, 0, sizeof npz);
    int member[N_PARAMS + 1];
    for (int i = 0; i <= N_PARAMS; ++i)
        member[i] = -1;
    if (archive) {
        read_npz(archive, &npz);
        for (int m = 0; m < npz.n; ++m) {
            int p = find_member_param(npz.members[m].key);
            if (p < 0) {
                char names[1024];
                size_t used = 0;
                names[0] = '\0';
                for (int i = 0; i < N_PARAMS && used + 1 < sizeof names; ++i)
                    used += (size_t)snprintf(names + used, sizeof names - used, i ? ", %s" : "%s", PARAMS[i].name);
                fail("--inputs: %s holds '%s', which names no parameter of @%s (parameters: %s)", archive, npz.members[m].name, ENTRY, names);
            }
            if (PARAMS[p].direction == DIR_OUT)
                fail("--inputs: %s: member '%s': %s is an output of the plan, not an input", archive, npz.members[m].name, PARAMS[p].name);
            if (member[p] >= 0)
                fail("--inputs: %s holds '%s' and '%s', both for %s", archive, npz.members[member[p]].name, npz.members[m].name, PARAMS[p].name);
            member[p] = m;
        }
    }
    for (int i = 0; i < N_PARAMS; ++i) {
        const struct param *p = &PARAMS[i];
        if (p->direction == DIR_OUT) {
            if (inputs[i]) {
                fail("--input %s: %s is an output of the plan, not an input", p->name, p->name);
            }
            r->host_bytes[i] = shape_elements(p->rank, p->shape) * DTYPES[p->dtype].size;
            r->host_out[i] = checked_malloc(r->host_bytes[i]);
            continue;
        }
        if (!inputs[i] && member[i] < 0) {
            char shape[256];
            format_shape(shape, sizeof shape, p->rank, p->shape);
            fail("missing --input %s=FILE.npy (%s %s, %s layout)%s%s", p->name,
                 DTYPES[p->dtype].name, p->is_scalar ? "scalar" : shape, p->layout,
                 p->is_scalar ? " or a number" : "", archive ? ": the --inputs archive has no member for it" : "");
        }
        struct source src;
        char what[160];
        unsigned char *file = NULL;
        if (inputs[i]) {
            size_t len = strlen(inputs[i]);
            if (p->is_scalar && !(len > 4 && strcmp(inputs[i] + len - 4, ".npy") == 0)) {
                parse_scalar(inputs[i], p, &r->scalars[i]);
                continue;
            }
            snprintf(what, sizeof what, "--input %s", p->name);
            src.what = what;
            snprintf(src.name, sizeof src.name, "%s", inputs[i]);
            file = read_file(inputs[i], what, &src.size);
            src.bytes = file;
        } else {
            member_source(&npz, &npz.members[member[i]], &src);
        }
        if (p->is_scalar) {
            load_scalar(&src, p, &r->scalars[i]);
        } else {
            r->host_in[i] = load_input(&src, p, &r->host_bytes[i]);
            if (p->direction == DIR_INOUT)
                r->host_out[i] = checked_malloc(r->host_bytes[i]);
        }
        free(file);
    }
    free(npz.bytes);
    free(npz.members);

    /* The device. */
    cl_platform_id platform;
    cl_device_id device = select_device(spec, &platform);
    char device_name[256], platform_name[256];
    device_string(device, CL_DEVICE_NAME, "CL_DEVICE_NAME", device_name, sizeof device_name);
    check(clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof platform_name, platform_name, NULL), "clGetPlatformInfo", "CL_PLATFORM_NAME");
    printf("device: %s (%s)\n", device_name, platform_name);
    check_requirements(device, device_name);
    cl_int status;
    r->device = device;
    r->context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    check(status, "clCreateContext", device_name);
    r->queue = clCreateCommandQueue(r->context, device, CL_QUEUE_PROFILING_ENABLE, &status);
    check(status, "clCreateCommandQueue", "profiling queue");

    /* The kernels, with their argument info kept for the checks. */
    char *source = read_kernels(kernels_path);
    const char *sources[1] = {source};
    r->program = clCreateProgramWithSource(r->context, 1, sources, NULL, &status);
    check(status, "clCreateProgramWithSource", kernels_path);
    /* f32 division and sqrt correctly rounded where the device offers it, as the Python
       runner builds them (runtime/program_cache.py: build_options). */
    cl_device_fp_config fp32 = 0;
    clGetDeviceInfo(device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof fp32, &fp32, NULL);
    const char *options = (fp32 & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
        ? "-cl-kernel-arg-info -cl-fp32-correctly-rounded-divide-sqrt"
        : "-cl-kernel-arg-info";
    status = clBuildProgram(r->program, 1, &device, options, NULL, NULL);
    if (status != CL_SUCCESS) {
        size_t len = 0;
        clGetProgramBuildInfo(r->program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char *log = checked_malloc(len + 1);
        clGetProgramBuildInfo(r->program, device, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        log[len] = '\0';
        fprintf(stderr, "host: build log of %s:\n%s\n", kernels_path, log);
        check(status, "clBuildProgram", kernels_path);
    }
    for (int k = 0; k < N_KERNELS; ++k) {
        r->kernels[k] = clCreateKernel(r->program, KERNELS[k], &status);
        if (status == CL_INVALID_KERNEL_NAME) {
            fail("%s has no kernel '%s', which the plan launches (clCreateKernel: CL_INVALID_KERNEL_NAME)", kernels_path, KERNELS[k]);
        }
        check(status, "clCreateKernel", KERNELS[k]);
    }
    check_plan(r);

    /* The prepare steps once, the steps (the body) once, reported; then the repeats. */
    static double seconds[N_STEPS + 1];
    run_steps(r, 0, N_PREPARE_STEPS);
    check(clFinish(r->queue), "clFinish", "the prepare steps");
    double prepare_total = launch_seconds(r, 0, N_PREPARE_STEPS, seconds);
    run_steps(r, N_PREPARE_STEPS, N_STEPS);
    check(clFinish(r->queue), "clFinish", "the plan");
    double total = launch_seconds(r, N_PREPARE_STEPS, N_STEPS, seconds);
    if (count_launches(0, N_PREPARE_STEPS)) {
        char prepare[160];
        snprintf(prepare, sizeof prepare, "%s_prepare", ENTRY);
        print_launches(prepare, 0, N_PREPARE_STEPS, seconds, prepare_total);
    }
    print_launches(ENTRY, N_PREPARE_STEPS, N_STEPS, seconds, total);
    if (repeat > 0) {
        /* Per run: wall seconds (inputs written, every launch, results read, queue finished),
         * the seconds until the last step was enqueued (the host's own share: everything after
         * it is the driver's and the device's), the launches' device seconds. */
        double *walls = checked_malloc((size_t)repeat * sizeof *walls);
        double *enqueues = checked_malloc((size_t)repeat * sizeof *enqueues);
        double *devices = checked_malloc((size_t)repeat * sizeof *devices);
        for (long k = 0; k < warmup + repeat; ++k) {
            double start = monotonic_seconds();
            run_steps(r, N_PREPARE_STEPS, N_STEPS);
            double enqueued = monotonic_seconds() - start;
            check(clFinish(r->queue), "clFinish", "the plan");
            double wall = monotonic_seconds() - start;
            double device_seconds = launch_seconds(r, N_PREPARE_STEPS, N_STEPS, seconds);
            if (k >= warmup) {
                walls[k - warmup] = wall;
                enqueues[k - warmup] = enqueued;
                devices[k - warmup] = device_seconds;
            }
        }
        int launches = count_launches(N_PREPARE_STEPS, N_STEPS), per = launches ? launches : 1;
        double wall_ms = median(walls, (int)repeat) * 1e3, device_ms = median(devices, (int)repeat) * 1e3;
        double enqueue_us = median(enqueues, (int)repeat) * 1e6;
        printf("repeat: %ld run(s) after %ld warm-up: median wall %.3f ms, median device %.3f ms per "
               "inference (%d launch(es), %.0f us per launch outside the kernels, of which %.1f us "
               "enqueueing)\n",
               repeat, warmup, wall_ms, device_ms, launches, (wall_ms - device_ms) * 1e3 / per, enqueue_us / per);
        free(walls);
        free(enqueues);
        free(devices);
    }

    /* The outputs (of the last run). */
    for (int i = 0; i < N_PARAMS; ++i) {
        const struct param *p = &PARAMS[i];
        if (p->is_scalar || p->direction == DIR_IN)
            continue;
        char path[512];
        if (outputs[i])
            snprintf(path, sizeof path, "%s", outputs[i]);
        else
            snprintf(path, sizeof path, "%s.npy", p->name);
        write_npy(path, p, r->host_out[i], r->host_bytes[i]);
        char shape[256];
        format_shape(shape, sizeof shape, p->rank, p->shape);
        printf("wrote %s: %%%s %s %s (%s layout)\n", path, p->name, DTYPES[p->dtype].name, shape, p->layout);
    }

    for (int s = 0; s < N_STEPS; ++s)
        if (r->launch[s])
            check(clReleaseKernel(r->launch[s]), "clReleaseKernel", KERNELS[STEPS[s].kernel]);
    for (int k = 0; k < N_KERNELS; ++k)
        check(clReleaseKernel(r->kernels[k]), "clReleaseKernel", KERNELS[k]);
    for (int m = 0; m < N_STORAGES; ++m)
        if (r->memory[m])
            check(clReleaseMemObject(r->memory[m]), "clReleaseMemObject", STORAGES[m].name);
    check(clReleaseProgram(r->program), "clReleaseProgram", kernels_path);
    check(clReleaseCommandQueue(r->queue), "clReleaseCommandQueue", "profiling queue");
    check(clReleaseContext(r->context), "clReleaseContext", device_name);
    for (int i = 0; i < N_PARAMS; ++i) {
        free(r->host_in[i]);
        free(r->host_out[i]);
    }
    free(r);
    free(source);
    return 0;
}
